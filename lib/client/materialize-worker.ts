// `cairn pull` writes files from a worker thread and the main thread: each job is a run of
// objects from one pack (a few MiB), which a lane decodes and verifies (CRC-32, zstd, SHA-256)
// before writing every file that uses them. The main thread downloads packs into shared memory
// and hands out each run as soon as its bytes have arrived, so decoding overlaps the download
// and both lanes stay busy to the end (whole packs per lane left one core idle on the last pack).
import { closeSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { crc32 } from 'node:zlib';
import zstd from '../store/zstd.js';
import { refusedPath, sha256Hex, type EntryKind } from '../domain/content.js';
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

/**
 * Decode a job's objects and write their targets; runs in a worker, or on the main thread when
 * the pool uses it as a lane. `progress` is told of bytes written, about every PROGRESS_EVERY.
 */
function materialize(req: Omit<Request, 'id'>, progress: (bytes: number) => void): { files: number; bytes: number } {
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
        // pull refuses such trees before handing out work; this guards every other caller.
        const refused = refusedPath(t.path);
        if (refused) throw new Error(`refused to write ${JSON.stringify(t.path)}: ${JSON.stringify(refused.path)} ${refused.rule}`);
        writeEntry(path.join(req.out, ...t.path.split('/')), t.kind, raw);
        files++;
        bytes += raw.length;
        unreported += raw.length;
      }
      if (unreported >= PROGRESS_EVERY) {
        progress(unreported);
        unreported = 0;
      }
    }
    if (unreported) progress(unreported);
    return { files, bytes };
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  port.on('message', (req: Request) => {
    try {
      const done = materialize(req, (n) => port.postMessage({ id: req.id, progress: n } satisfies Reply));
      port.postMessage({ id: req.id, ...done } satisfies Reply);
    } catch (err) {
      port.postMessage({ id: req.id, error: (err as Error).message } satisfies Reply);
    }
  });
}

type Job = { out: string; entries: MaterializeEntry[]; source: { file: string } | { shared: SharedArrayBuffer }; onProgress?: (n: number) => void };
type Settle = { resolve: (r: { files: number; bytes: number }) => void; reject: (e: Error) => void };
type Lane = { thread: Worker; queued: number };

/** Jobs a worker holds at once: the one it runs and the next, so it never waits for the main thread. */
const WORKER_QUEUE = 2;

/**
 * Materialize lanes: `size - 1` worker threads and the main thread. Jobs go to a worker with
 * room in its queue first; the main thread takes one only when every worker queue is full. A
 * worker costs ~50 ms of CPU to start (V8, Node's internals, the module graph), paid while the
 * pull's first requests are in flight on a machine that may have two cores; the main thread is
 * mostly idle once the packs stream, so it makes a good second lane. Jobs beyond that wait.
 */
export class MaterializePool {
  private readonly workers: Lane[] = [];
  private mainBusy = false;
  private closing = false;
  private readonly waiting: { job: Job; settle: Settle }[] = [];
  private broken: Error | null = null;
  private readonly pending = new Map<number, Settle & { onProgress?: (n: number) => void; lane: Lane }>();
  private nextId = 0;

  constructor(size: number) {
    for (let i = 0; i < Math.max(0, size - 1); i++) {
      const lane: Lane = { thread: new Worker(new URL(import.meta.url)), queued: 0 };
      lane.thread.on('message', (reply: Reply) => {
        const p = this.pending.get(reply.id);
        if (!p) return;
        if ('progress' in reply) {
          p.onProgress?.(reply.progress);
          return;
        }
        this.pending.delete(reply.id);
        lane.queued--;
        if ('error' in reply) p.reject(new Error(reply.error));
        else p.resolve(reply);
        this.next();
      });
      lane.thread.on('error', (err) => this.lost(lane, err));
      // A worker that exits without an error event (killed from outside) must not leave its
      // jobs pending forever.
      lane.thread.on('exit', (code) => { if (!this.closing) this.lost(lane, new Error(`a pull worker exited (code ${code})`)); });
      this.workers.push(lane);
    }
  }

  /**
   * A worker died: its jobs fail, and so does everything not yet started. Jobs running on the
   * other lanes finish first (whoever waits for them sees nothing written behind an error).
   */
  private lost(lane: Lane, err: Error): void {
    this.broken ??= err;
    for (const [id, p] of this.pending) {
      if (p.lane !== lane) continue;
      this.pending.delete(id);
      p.reject(err);
    }
    lane.queued = Infinity; // never chosen again
    for (const w of this.waiting.splice(0)) w.settle.reject(this.broken);
  }

  /**
   * Decode `entries` from a pack (a file, or shared memory whose bytes for these entries have
   * arrived) and write their targets under `out`.
   */
  run(out: string, entries: MaterializeEntry[], source: { file: string } | { shared: SharedArrayBuffer }, onProgress?: (n: number) => void): Promise<{ files: number; bytes: number }> {
    if (this.broken) return Promise.reject(this.broken);
    if (this.closing) return Promise.reject(new Error('the pull workers were stopped'));
    return new Promise((resolve, reject) => {
      this.waiting.push({ job: { out, entries, source, onProgress }, settle: { resolve, reject } });
      this.next();
    });
  }

  /** Hand waiting jobs to free lanes. */
  private next(): void {
    while (this.waiting.length && !this.broken && !this.closing) {
      const lane = this.workers.reduce<Lane | null>((best, w) => (w.queued < WORKER_QUEUE && (!best || w.queued < best.queued) ? w : best), null);
      if (lane) {
        const { job, settle } = this.waiting.shift()!;
        const id = this.nextId++;
        lane.queued++;
        this.pending.set(id, { ...settle, onProgress: job.onProgress, lane });
        lane.thread.postMessage({ id, out: job.out, entries: job.entries, ...job.source } satisfies Request);
        continue;
      }
      if (this.mainBusy) return;
      const { job, settle } = this.waiting.shift()!;
      this.mainBusy = true;
      // On the next turn, so the caller's bookkeeping (and pending I/O) runs first.
      setImmediate(() => {
        try {
          settle.resolve(materialize({ out: job.out, entries: job.entries, ...job.source }, (n) => job.onProgress?.(n)));
        } catch (err) {
          settle.reject(err as Error);
        } finally {
          this.mainBusy = false;
          this.next();
        }
      });
      return;
    }
  }

  /** Stop: jobs not started are refused, workers are terminated (a job they run ends unfinished). */
  async close(): Promise<void> {
    this.closing = true;
    const closed = new Error('the pull workers were stopped');
    for (const w of this.waiting.splice(0)) w.settle.reject(closed);
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      p.reject(closed);
    }
    await Promise.all(this.workers.map((w) => w.thread.terminate()));
  }
}
