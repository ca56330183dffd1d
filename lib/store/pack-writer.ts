// A pack built from objects whose bytes stream in (a push's blobs, of any size): each object is
// compressed into its own zstd frame while it arrives and written to a temp file of frames; the
// pack (storage-layout.md §7: the header frame, then the frames) is assembled in staging/ once
// the object count — and so the header's size — is known. Memory holds one chunk and the
// entries, whatever the objects' sizes. The staged pack is invisible until a commit adopts it.
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import zstd from './zstd.js';
import { Invalid } from '../domain/errors.js';
import { writeFault } from './crash-point.js';
import { diskFullIn, renameDurable, tempPathFor } from './durable.js';
import path from 'node:path';
import { decodeObjectFrame, encodePackHeader, headerSizeFor, MAX_PACK_ENTRIES, type PackEntry, type PackKind } from './pack.js';

/** Compressed bytes written at a time. */
const OUT_BYTES = 1024 * 1024;
const EMPTY = Buffer.alloc(0);

export class StreamingPackWriter {
  /** Entries by id; offsets from the start of the frames file until finish() adds the header. */
  private readonly entries = new Map<string, PackEntry>();
  private end = 0;
  private readonly cctx = new zstd.CCtx();
  private readonly out = Buffer.allocUnsafe(OUT_BYTES);
  private closed = false;

  private constructor(
    readonly kind: PackKind,
    private readonly framesFile: string,
    private readonly frames: FileHandle,
    private readonly stagedFile: (packId: string) => string,
    private readonly place: (packId: string, temp: string) => Promise<void>,
    level: number,
  ) {
    this.cctx.setParameter(zstd.CParameter.compressionLevel, level);
    this.cctx.setParameter(zstd.CParameter.contentSizeFlag, 1);
    this.cctx.setParameter(zstd.CParameter.checksumFlag, 0);
  }

  /**
   * A writer whose pack will be `stagedFile(packId)` (its temp files beside it). `place` moves
   * the finished temp file there (the store's puts it under a per-process hold, so a writer of
   * the same bytes dropping its copy never removes this one's); by default a rename, or nothing
   * when the same bytes are staged already.
   */
  static async create(kind: PackKind, stagedFile: (packId: string) => string, level = 3, place?: (packId: string, temp: string) => Promise<void>): Promise<StreamingPackWriter> {
    const framesFile = tempPathFor(stagedFile('frames'));
    const handle = await fsp.open(framesFile, 'wx+', 0o644).catch((err) => { throw diskFullIn(err, path.dirname(framesFile)); });
    const byRename = async (packId: string, temp: string) => {
      const file = stagedFile(packId);
      if (await fsp.stat(file).then(() => true, () => false)) await fsp.rm(temp, { force: true });
      else await renameDurable(temp, file);
    };
    return new StreamingPackWriter(kind, framesFile, handle, stagedFile, place ?? byRename, level);
  }

  get count(): number {
    return this.entries.size;
  }

  /** The raw length of an object added, or undefined. */
  size(id: string): number | undefined {
    return this.entries.get(id)?.raw_length;
  }

  /** An object added, read back and checked (what a diff reads of a revision not stored yet). */
  async read(id: string): Promise<Buffer | undefined> {
    const e = this.entries.get(id);
    if (!e) return undefined;
    const frame = Buffer.allocUnsafe(e.length);
    const { bytesRead } = await this.frames.read(frame, 0, e.length, e.offset);
    return decodeObjectFrame(e, frame.subarray(0, bytesRead));
  }

  /**
   * Add one object of `size` bytes read from `chunks`; its id (sha256 of its bytes) is returned.
   * When `keep(id)` says no (the store holds it already), or it was added before, its frame is
   * dropped: the next object's frame is written over it.
   */
  async add(size: number, chunks: AsyncIterable<Buffer>, keep: (id: string) => boolean): Promise<string> {
    if (this.closed) throw new Error('the pack is finished');
    const start = this.end;
    let at = start;
    let crc = 0;
    let seen = 0;
    const hash = createHash('sha256');
    this.cctx.reset(zstd.ResetDirective.sessionOnly);
    this.cctx.setPledgedSrcSize(size);
    const emit = async (produced: number) => {
      if (produced === 0) return;
      const bytes = this.out.subarray(0, produced);
      crc = crc32(bytes, crc);
      let done = 0;
      try {
        writeFault(this.framesFile);
        while (done < produced) {
          const { bytesWritten } = await this.frames.write(bytes, done, produced - done, at + done);
          done += bytesWritten;
        }
      } catch (err) {
        throw diskFullIn(err, path.dirname(this.framesFile));
      }
      at += produced;
    };
    for await (const chunk of chunks) {
      seen += chunk.length;
      if (seen > size) throw new Invalid(`an object is longer than the ${size} bytes it announced`);
      hash.update(chunk);
      let src = chunk;
      while (src.length > 0) {
        const [, produced, consumed] = this.cctx.compressStream2(this.out, src, zstd.EndDirective.continue);
        await emit(produced);
        src = src.subarray(consumed);
      }
    }
    if (seen !== size) throw new Invalid(`an object is ${seen} bytes, not the ${size} it announced`);
    for (;;) {
      const [remaining, produced] = this.cctx.compressStream2(this.out, EMPTY, zstd.EndDirective.end);
      await emit(produced);
      if (remaining === 0) break;
    }
    const id = hash.digest('hex');
    if (!this.entries.has(id) && keep(id)) {
      if (this.entries.size >= MAX_PACK_ENTRIES) throw new Invalid(`a pack holds at most ${MAX_PACK_ENTRIES} objects`);
      this.entries.set(id, { id, offset: start, length: at - start, raw_length: size, crc32: crc });
      this.end = at;
    }
    return id;
  }

  /**
   * Write the pack into staging/ (durable) and remove the temp file; null when no object was
   * kept. The entries' offsets are the pack's own.
   */
  async finish(): Promise<{ packId: string; entries: PackEntry[] } | null> {
    if (this.closed) throw new Error('the pack is finished');
    this.closed = true;
    try {
      if (this.entries.size === 0) return null;
      const headerSize = headerSizeFor(this.entries.size);
      const entries = [...this.entries.values()].map((e) => ({ ...e, offset: e.offset + headerSize }));
      const header = encodePackHeader(this.kind, entries);
      const temp = tempPathFor(this.stagedFile('pack'));
      const hash = createHash('sha256').update(header);
      const target = await fsp.open(temp, 'wx', 0o644).catch((err) => { throw diskFullIn(err, path.dirname(temp)); });
      let packId: string;
      try {
        writeFault(temp);
        await target.write(header, 0, header.length, 0);
        let at = header.length;
        // Through one buffer, reused: copying a pack of any size leaves nothing to collect.
        for (let from = 0; from < this.end; ) {
          const { bytesRead } = await this.frames.read(this.out, 0, Math.min(OUT_BYTES, this.end - from), from);
          if (bytesRead === 0) throw new Error('the frames file is shorter than what was written to it');
          const chunk = this.out.subarray(0, bytesRead);
          hash.update(chunk);
          let done = 0;
          while (done < bytesRead) {
            const { bytesWritten } = await target.write(chunk, done, bytesRead - done, at + done);
            done += bytesWritten;
          }
          at += bytesRead;
          from += bytesRead;
        }
        await target.sync();
        packId = hash.digest('hex');
      } catch (err) {
        await target.close().catch(() => {});
        await fsp.rm(temp, { force: true });
        throw diskFullIn(err, path.dirname(temp));
      }
      await target.close();
      // The same bytes may be staged already (the same push, twice at once): one copy is enough.
      try {
        await this.place(packId, temp);
      } finally {
        await fsp.rm(temp, { force: true });
      }
      return { packId, entries };
    } finally {
      await this.frames.close().catch(() => {});
      await fsp.rm(this.framesFile, { force: true });
    }
  }

  /** Stop without a pack: the temp file goes. */
  async discard(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.frames.close().catch(() => {});
    await fsp.rm(this.framesFile, { force: true });
  }
}
