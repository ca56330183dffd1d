// Compresses packs off the main thread: the push scan keeps reading and hashing files while a
// worker builds the previous batch's pack (zstd is CPU-bound and synchronous).
//
// Nothing is copied between the threads: a batch is one buffer of objects laid end to end (a
// "slab"), moved to the worker; the worker compresses into an output buffer and moves both back.
// The caller hands slabs and spent output buffers in again, so after the first few packs a push
// allocates no memory per pack (fresh memory costs a page fault per 4 KiB).
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
  slab: ArrayBuffer;
  objects: SlabObject[];
  /** A spent output buffer to compress into when it is large enough. */
  spare: ArrayBuffer | null;
}

interface Reply {
  seq: number;
  error?: string;
  slab?: ArrayBuffer;
  packId?: string;
  kind?: PackKind;
  out?: ArrayBuffer;
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
      // Its own ArrayBuffer (never Node's shared pool), so it can be moved back.
      const out = job.spare && job.spare.byteLength >= bound ? job.spare : new ArrayBuffer(bound);
      const pack = buildPack(job.kind, objects, job.level, Buffer.from(out));
      const reply: Reply = { seq: job.seq, slab: job.slab, packId: pack.packId, kind: pack.kind, out, length: pack.bytes.length, entries: pack.entries };
      port.postMessage(reply, [job.slab, out]);
    } catch (err) {
      port.postMessage({ seq: job.seq, error: (err as Error).message, slab: job.slab } satisfies Reply, [job.slab]);
    }
  });
}

/** A built pack and the buffers that come back with it. */
export interface WorkerPack extends BuiltPack {
  /** The batch's slab, free for the next batch. */
  slab: ArrayBuffer;
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
   * Build a pack of `objects` laid out in `slab` (moved to the worker, and back in the result).
   * `spare`, a pack buffer no longer needed, is moved too and reused when large enough.
   */
  build(kind: PackKind, slab: ArrayBuffer, objects: SlabObject[], level: number, spare: ArrayBuffer | null = null): Promise<WorkerPack> {
    const seq = this.seq++;
    return new Promise((resolve, reject) => {
      this.waiting.set(seq, { resolve, reject });
      this.worker.postMessage({ seq, kind, level, slab, objects, spare } satisfies Job, spare ? [slab, spare] : [slab]);
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
