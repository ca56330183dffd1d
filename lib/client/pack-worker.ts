// Compresses packs off the main thread: the push scan keeps reading and hashing files while a
// worker builds the previous batch's pack (zstd is CPU-bound and synchronous).
//
// Nothing is copied between the threads: a batch is one buffer of objects laid end to end (a
// "slab"), shared with the worker; the worker compresses into a shared output buffer. The caller
// hands slabs and spent output buffers in again, so after the first few packs a push allocates
// no memory per pack (fresh memory costs a page fault per 4 KiB). Shared, not moved: a moved
// ArrayBuffer is counted as new external memory each time it arrives, and V8 answered every few
// arrivals with an "external memory pressure" collection on both threads.
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { buildPack, packBound, type BuiltPack, type PackKind } from '../store/pack.js';

/** One object of a batch: its id and where its bytes lie in the slab. */
export interface SlabObject {
  id: string;
  offset: number;
  length: number;
}

interface Job {
  seq: number;
  kind: PackKind;
  level: number;
  slab: SharedArrayBuffer;
  objects: SlabObject[];
  /** A spent output buffer to compress into when it is large enough. */
  spare: SharedArrayBuffer | null;
}

interface Reply {
  seq: number;
  error?: string;
  slab?: SharedArrayBuffer;
  packId?: string;
  kind?: PackKind;
  out?: SharedArrayBuffer;
  length?: number;
  entries?: BuiltPack['entries'];
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  port.on('message', (job: Job) => {
    try {
      const slab = Buffer.from(job.slab);
      const objects = job.objects.map((o) => ({ id: o.id, raw: slab.subarray(o.offset, o.offset + o.length) }));
      const bound = packBound(objects);
      const out = job.spare && job.spare.byteLength >= bound ? job.spare : new SharedArrayBuffer(bound);
      const pack = buildPack(job.kind, objects, job.level, Buffer.from(out));
      const reply: Reply = { seq: job.seq, slab: job.slab, packId: pack.packId, kind: pack.kind, out, length: pack.bytes.length, entries: pack.entries };
      port.postMessage(reply);
    } catch (err) {
      port.postMessage({ seq: job.seq, error: (err as Error).message, slab: job.slab } satisfies Reply);
    }
  });
}

/** A built pack and the buffers that come back with it. */
export interface WorkerPack extends BuiltPack {
  /** The batch's slab, free for the next batch. */
  slab: SharedArrayBuffer;
}

/** One worker thread building packs; `build` resolves in submission order. */
export class PackWorker {
  private readonly worker = new Worker(new URL(import.meta.url));
  private seq = 0;
  private readonly waiting = new Map<number, { resolve: (p: WorkerPack) => void; reject: (e: Error) => void }>();

  constructor() {
    this.worker.on('message', (msg: Reply) => {
      const w = this.waiting.get(msg.seq);
      if (!w) return;
      this.waiting.delete(msg.seq);
      if (msg.error || !msg.out) w.reject(new Error(msg.error ?? 'pack worker failed'));
      else w.resolve({ packId: msg.packId!, kind: msg.kind!, bytes: Buffer.from(msg.out, 0, msg.length!), entries: msg.entries!, slab: msg.slab! });
    });
    this.worker.on('error', (err) => {
      for (const w of this.waiting.values()) w.reject(err);
      this.waiting.clear();
    });
  }

  /**
   * Build a pack of `objects` laid out in `slab` (returned with the result, free again).
   * `spare`, a pack buffer no longer needed, is reused when large enough.
   */
  build(kind: PackKind, slab: SharedArrayBuffer, objects: SlabObject[], level: number, spare: SharedArrayBuffer | null = null): Promise<WorkerPack> {
    const seq = this.seq++;
    return new Promise((resolve, reject) => {
      this.waiting.set(seq, { resolve, reject });
      this.worker.postMessage({ seq, kind, level, slab, objects, spare } satisfies Job);
    });
  }

  /** Stop the worker (idempotent). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.worker.terminate();
  }

  private closed = false;
}
