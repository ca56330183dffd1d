// `cairn pull` writes files from worker threads: each job is a run of objects from one pack
// (a few MiB), which a worker decodes and verifies (CRC-32, zstd, SHA-256) before writing every
// file that uses them. The main thread downloads packs into shared memory and hands out each
// run as soon as its bytes have arrived, so decoding overlaps the download and both workers
// stay busy to the end (whole packs per worker left one core idle on the last pack).
import { closeSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { crc32 } from 'node:zlib';
import zstd from 'zstd-napi/binding.js';
import { sha256Hex, type EntryKind } from '../domain/content.js';
import type { PackEntry } from '../store/pack.js';
import { writeEntry } from './write-entry.js';

export interface MaterializeEntry extends PackEntry {
  /** Paths (relative, '/'-separated) written with this object's bytes, and their kinds. */
  targets: { path: string; kind: EntryKind }[];
}

type Request = { id: number; out: string; entries: MaterializeEntry[]; file?: string; shared?: SharedArrayBuffer };
type Reply = { id: number; files: number; bytes: number } | { id: number; error: string } | { id: number; progress: number };

/** Report progress about every this many bytes written. */
const PROGRESS_EVERY = 2 * 1024 * 1024;

// One growing scratch buffer each for frames and decoded objects: a fresh allocation per object
// costs a page fault per 4 KiB touched (~40,000 for the benchmark tree), which on a busy VM is
// a large share of a pull's system time.
let frameScratch: Buffer = Buffer.allocUnsafe(1024 * 1024);
let rawScratch: Buffer = Buffer.allocUnsafe(4 * 1024 * 1024);
const grow = (buf: Buffer, n: number) => (buf.length >= n ? buf : Buffer.allocUnsafe(Math.max(n, buf.length * 2)));
// One decompression context per worker (zstd.decompress() would set one up per object).
const decoder = new zstd.DCtx();

/** Verify and decode one object frame into the scratch buffer (the same checks as store/pack.ts decodeObjectFrame). */
function decodeInto(e: PackEntry, frame: Buffer): Buffer {
  if (frame.length !== e.length) throw new Error(`object ${e.id}: frame is ${frame.length} bytes, locator says ${e.length}`);
  if (crc32(frame) !== e.crc32) throw new Error(`object ${e.id}: frame CRC-32 mismatch`);
  rawScratch = grow(rawScratch, e.raw_length);
  const raw = rawScratch.subarray(0, e.raw_length);
  let n: number;
  try {
    n = decoder.decompress(raw, frame);
  } catch (err) {
    throw new Error(`object ${e.id}: zstd frame does not decode (${(err as Error).message})`);
  }
  if (n !== e.raw_length) throw new Error(`object ${e.id}: decodes to ${n} bytes, expected ${e.raw_length}`);
  if (sha256Hex(raw) !== e.id) throw new Error(`object ${e.id}: content does not hash to its id`);
  return raw;
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  port.on('message', (req: Request) => {
    let fd: number | null = null;
    try {
      const pack = req.shared ? Buffer.from(req.shared) : null;
      if (!pack) fd = openSync(req.file!, 'r');
      let files = 0;
      let bytes = 0;
      let unreported = 0;
      for (const e of req.entries) {
        let frame: Buffer;
        if (pack) frame = pack.subarray(e.offset, e.offset + e.length);
        else {
          frameScratch = grow(frameScratch, e.length);
          frame = frameScratch.subarray(0, e.length);
          readSync(fd!, frame, 0, e.length, e.offset);
        }
        const raw = decodeInto(e, frame);
        for (const t of e.targets) {
          writeEntry(path.join(req.out, ...t.path.split('/')), t.kind, raw);
          files++;
          bytes += raw.length;
          unreported += raw.length;
        }
        if (unreported >= PROGRESS_EVERY) {
          port.postMessage({ id: req.id, progress: unreported } satisfies Reply);
          unreported = 0;
        }
      }
      if (unreported) port.postMessage({ id: req.id, progress: unreported } satisfies Reply);
      port.postMessage({ id: req.id, files, bytes } satisfies Reply);
    } catch (err) {
      port.postMessage({ id: req.id, error: (err as Error).message } satisfies Reply);
    } finally {
      if (fd !== null) closeSync(fd);
    }
  });
}

/** A pool of materialize workers; `run` hands a pack to the next free one. */
export class MaterializePool {
  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private readonly waiting: { resolve: (w: Worker) => void; reject: (e: Error) => void }[] = [];
  private broken: Error | null = null;
  private readonly pending = new Map<number, { resolve: (r: { files: number; bytes: number }) => void; reject: (e: Error) => void; onProgress?: (n: number) => void }>();
  private nextId = 0;

  constructor(size: number) {
    for (let i = 0; i < size; i++) {
      const w = new Worker(new URL(import.meta.url));
      w.on('message', (reply: Reply) => {
        const p = this.pending.get(reply.id);
        if (!p) return;
        if ('progress' in reply) {
          p.onProgress?.(reply.progress);
          return;
        }
        this.pending.delete(reply.id);
        this.release(w);
        if ('error' in reply) p.reject(new Error(reply.error));
        else p.resolve(reply);
      });
      w.on('error', (err) => {
        // A worker that died fails everything in flight and everything still to come.
        this.broken = err;
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
        for (const q of this.waiting.splice(0)) q.reject(err);
      });
      this.workers.push(w);
      this.idle.push(w);
    }
  }

  private release(w: Worker): void {
    const next = this.waiting.shift();
    if (next) next.resolve(w);
    else this.idle.push(w);
  }

  private acquire(): Promise<Worker> {
    if (this.broken) return Promise.reject(this.broken);
    const w = this.idle.pop();
    if (w) return Promise.resolve(w);
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  /**
   * Decode `entries` from a pack (a file, or shared memory whose bytes for these entries have
   * arrived) and write their targets under `out`.
   */
  async run(out: string, entries: MaterializeEntry[], source: { file: string } | { shared: SharedArrayBuffer }, onProgress?: (n: number) => void): Promise<{ files: number; bytes: number }> {
    const w = await this.acquire();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      w.postMessage({ id, out, entries, ...source } satisfies Request);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
