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
import { buildPack, packBound } from '../store/pack.js';
if (!isMainThread && parentPort) {
    const port = parentPort;
    port.on('message', (job) => {
        try {
            const slab = Buffer.from(job.slab);
            const objects = job.objects.map((o) => ({ id: o.id, raw: slab.subarray(o.offset, o.offset + o.length) }));
            const bound = packBound(objects);
            const out = job.spare && job.spare.byteLength >= bound ? job.spare : new SharedArrayBuffer(bound);
            const pack = buildPack(job.kind, objects, job.level, Buffer.from(out));
            const reply = { seq: job.seq, slab: job.slab, packId: pack.packId, kind: pack.kind, out, length: pack.bytes.length, entries: pack.entries };
            port.postMessage(reply);
        }
        catch (err) {
            port.postMessage({ seq: job.seq, error: err.message, slab: job.slab });
        }
    });
}
/** One worker thread building packs; `build` resolves in submission order. */
export class PackWorker {
    worker = new Worker(new URL(import.meta.url));
    seq = 0;
    waiting = new Map();
    constructor() {
        this.worker.on('message', (msg) => {
            const w = this.waiting.get(msg.seq);
            if (!w)
                return;
            this.waiting.delete(msg.seq);
            if (msg.error || !msg.out)
                w.reject(new Error(msg.error ?? 'pack worker failed'));
            else
                w.resolve({ packId: msg.packId, kind: msg.kind, bytes: Buffer.from(msg.out, 0, msg.length), entries: msg.entries, slab: msg.slab });
        });
        this.worker.on('error', (err) => {
            for (const w of this.waiting.values())
                w.reject(err);
            this.waiting.clear();
        });
    }
    /**
     * Build a pack of `objects` laid out in `slab` (returned with the result, free again).
     * `spare`, a pack buffer no longer needed, is reused when large enough.
     */
    build(kind, slab, objects, level, spare = null) {
        const seq = this.seq++;
        return new Promise((resolve, reject) => {
            this.waiting.set(seq, { resolve, reject });
            this.worker.postMessage({ seq, kind, level, slab, objects, spare });
        });
    }
    /** Stop the worker (idempotent). */
    async close() {
        if (this.closed)
            return;
        this.closed = true;
        await this.worker.terminate();
    }
    closed = false;
}
//# sourceMappingURL=pack-worker.js.map