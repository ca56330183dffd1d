// Compresses packs off the main thread: the push scan keeps reading and hashing files while a
// worker builds the previous batch's pack (zstd is CPU-bound and synchronous).
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { buildPack, type BuiltPack, type PackKind } from '../store/pack.js';

interface Job {
  seq: number;
  kind: PackKind;
  level: number;
  objects: { id: string; raw: Uint8Array }[];
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  port.on('message', (job: Job) => {
    try {
      const pack = buildPack(job.kind, job.objects.map((o) => ({ id: o.id, raw: Buffer.from(o.raw.buffer, o.raw.byteOffset, o.raw.byteLength) })), job.level);
      port.postMessage({ seq: job.seq, pack: { ...pack, bytes: new Uint8Array(pack.bytes.buffer, pack.bytes.byteOffset, pack.bytes.byteLength) } });
    } catch (err) {
      port.postMessage({ seq: job.seq, error: (err as Error).message });
    }
  });
}

/** One worker thread building packs; `build` resolves in submission order. */
export class PackWorker {
  private readonly worker = new Worker(new URL(import.meta.url));
  private seq = 0;
  private readonly waiting = new Map<number, { resolve: (p: BuiltPack) => void; reject: (e: Error) => void }>();

  constructor() {
    this.worker.on('message', (msg: { seq: number; pack?: BuiltPack & { bytes: Uint8Array }; error?: string }) => {
      const w = this.waiting.get(msg.seq);
      if (!w) return;
      this.waiting.delete(msg.seq);
      if (msg.error || !msg.pack) w.reject(new Error(msg.error ?? 'pack worker failed'));
      else w.resolve({ ...msg.pack, bytes: Buffer.from(msg.pack.bytes.buffer, msg.pack.bytes.byteOffset, msg.pack.bytes.byteLength) });
    });
    this.worker.on('error', (err) => {
      for (const w of this.waiting.values()) w.reject(err);
      this.waiting.clear();
    });
  }

  build(kind: PackKind, objects: { id: string; raw: Buffer }[], level: number): Promise<BuiltPack> {
    const seq = this.seq++;
    return new Promise((resolve, reject) => {
      this.waiting.set(seq, { resolve, reject });
      this.worker.postMessage({ seq, kind, level, objects } satisfies Job);
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
