// Durable file-system primitives. Every byte cairn writes goes through one of these, so the
// crash-safety argument lives in one place: write a temp file in the target directory, fsync it,
// rename it over the target, fsync the directory. After `kill -9` at any instant the target
// holds either the old bytes or the new, never a mix; a leftover temp file is recognisable by
// its name (see TEMP_MARKER) and removed by recovery at open.
import { randomBytes } from 'node:crypto';
import { promises as fsp, constants as fsc } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { writeFault } from './crash-point.js';

/** Temp files are named `.<target-basename>.tmp-<16 hex>`; nothing else contains `.tmp-`. */
export const TEMP_MARKER = '.tmp-';

export function tempPathFor(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}${TEMP_MARKER}${randomBytes(8).toString('hex')}`);
}

export function isTempName(name: string): boolean {
  return name.startsWith('.') && name.includes(TEMP_MARKER);
}

/** fsync a directory so a rename or unlink inside it survives power loss. */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await fsp.open(dir, fsc.O_RDONLY | fsc.O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

const DISK_FULL_CODES = new Set(['ENOSPC', 'EDQUOT']);

/**
 * A full disk (ENOSPC, EDQUOT) as an error naming the directory it could not write in, for the
 * operator's log; the HTTP answer (507, lib/http/errors.ts) is built from the code alone and never
 * shows it. Other errors, and one already naming its place, pass unchanged.
 */
export function diskFullIn(err: unknown, dir: string): unknown {
  const e = err as NodeJS.ErrnoException & { diskFullDir?: string };
  if (!e || typeof e.code !== 'string' || !DISK_FULL_CODES.has(e.code) || e.diskFullDir !== undefined) return err;
  return Object.assign(new Error(`${e.message} (writing in ${dir})`), { code: e.code, diskFullDir: dir });
}

/** `write`, whose full-disk error names `dir` (diskFullIn). */
export async function writingIn<T>(dir: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    throw diskFullIn(err, dir);
  }
}

/** Write `data` to `target` atomically and durably. Durable when the promise resolves. */
export async function writeFileDurable(target: string, data: Uint8Array | string): Promise<void> {
  await writeFileDurableWith(target, (handle) => handle.writeFile(data));
}

/**
 * The write procedure for content produced in pieces: `fill` writes into a fresh temp file,
 * which is then fsynced, closed and renamed over `target`, and the directory fsynced. If
 * `fill` throws, the temp file is removed and `target` is untouched.
 */
export async function writeFileDurableWith(target: string, fill: (handle: FileHandle) => Promise<void>): Promise<void> {
  await writingIn(path.dirname(target), async () => {
    const temp = tempPathFor(target);
    const handle = await fsp.open(temp, 'wx', 0o644);
    try {
      writeFault(target);
      await fill(handle);
      await handle.sync();
    } catch (err) {
      await handle.close().catch(() => {});
      await fsp.rm(temp, { force: true });
      throw err;
    }
    await handle.close();
    await renameDurable(temp, target);
  });
}

/** Rename a finished (already fsynced) file into place and fsync the directories involved. */
export async function renameDurable(from: string, to: string): Promise<void> {
  await fsp.rename(from, to);
  const toDir = path.dirname(to);
  await fsyncDir(toDir);
  const fromDir = path.dirname(from);
  if (fromDir !== toDir) await fsyncDir(fromDir);
}

/** Create a directory (and parents) and fsync the parent so the entry itself is durable. */
export async function mkdirDurable(dir: string): Promise<void> {
  // Every level that does not exist yet gets its entry made durable in its parent.
  const missing: string[] = [];
  for (let d = dir; !(await exists(d)); d = path.dirname(d)) {
    missing.push(d);
    if (path.dirname(d) === d) break;
  }
  if (!missing.length) return;
  await writingIn(path.dirname(missing[missing.length - 1]), async () => {
    await fsp.mkdir(dir, { recursive: true });
    for (const d of missing.reverse()) await fsyncDir(path.dirname(d));
  });
}

/** Remove a file or tree durably (fsync the parent after the unlink). */
export async function removeDurable(target: string): Promise<void> {
  await fsp.rm(target, { recursive: true, force: true });
  await fsyncDir(path.dirname(target));
}

export async function exists(p: string): Promise<boolean> {
  try {
    await fsp.lstat(p);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw err;
  }
}

/**
 * Leftover temp files below `root` (recursively), without touching them: what
 * `removeTempFiles` would remove (cairn fsck reports them as notes). The entries of a directory
 * for which `shallow` is true are looked at, but not descended into.
 */
export async function findTempFiles(root: string, shallow: (dir: string) => boolean = () => false): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await fsp.readdir(dir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (isTempName(entry.name)) found.push(full);
      else if (entry.isDirectory() && !shallow(dir)) await walk(full);
    }
  };
  await walk(root);
  return found.sort();
}

/**
 * Remove leftover temp files below `root` (those `findTempFiles` finds). Returns the paths
 * removed so the caller can report them; temp files are never acknowledged data, so removing
 * them loses nothing.
 */
export async function removeTempFiles(root: string, shallow: (dir: string) => boolean = () => false): Promise<string[]> {
  const removed = await findTempFiles(root, shallow);
  for (const full of removed) await fsp.rm(full, { recursive: true, force: true });
  for (const dir of new Set(removed.map((p) => path.dirname(p)))) await fsyncDir(dir);
  return removed;
}

/** writev until every byte is written (a short write resumes where the kernel stopped). */
async function writevAll(handle: FileHandle, parts: Buffer[]): Promise<void> {
  let rest = parts;
  while (rest.length > 0) {
    let written = (await handle.writev(rest.length > 1024 ? rest.slice(0, 1024) : rest)).bytesWritten;
    let i = 0;
    while (i < rest.length && written >= rest[i].length) written -= rest[i++].length;
    rest = rest.slice(i);
    if (written > 0) rest[0] = rest[0].subarray(written);
  }
}

/**
 * Writes a stream of chunks to a file handle in ~1 MiB writes, with one write in flight while
 * the caller goes on reading (at most `maxQueued` bytes buffered), so network reads and disk
 * writes overlap without holding the body in memory.
 */
export class ChunkWriter {
  private parts: Buffer[] = [];
  private buffered = 0;
  private queued = 0;
  private inflight: Promise<void> = Promise.resolve();
  private failure: unknown = null;

  constructor(private readonly handle: FileHandle, private readonly flushAt = 1024 * 1024, private readonly maxQueued = 8 * 1024 * 1024) {}

  async write(chunk: Buffer): Promise<void> {
    if (this.failure) throw this.failure;
    this.parts.push(chunk);
    this.buffered += chunk.length;
    if (this.buffered >= this.flushAt) await this.flush(false);
  }

  private async flush(wait: boolean): Promise<void> {
    if (this.buffered > 0) {
      // writev, not concat: the chunks go to the kernel as they are, without a copy.
      const parts = this.parts;
      const size = this.buffered;
      this.parts = [];
      this.buffered = 0;
      this.queued += size;
      this.inflight = this.inflight.then(async () => {
        if (this.failure) return;
        try {
          await writevAll(this.handle, parts);
        } catch (err) {
          this.failure = err;
        } finally {
          this.queued -= size;
        }
      });
    }
    if (wait || this.queued > this.maxQueued) await this.inflight;
    if (this.failure) throw this.failure;
  }

  /** Write what is buffered and wait for every write; the caller then fsyncs and closes. */
  end(): Promise<void> {
    return this.flush(true);
  }
}
