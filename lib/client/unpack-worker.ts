// Decodes and verifies objects from a downloaded pack off the main thread, so `cairn pull`
// writes files on one core while the next batch is decompressed and hashed on the other.
// Protocol: `open` a pack with the entries wanted, then each `next` returns one batch of at most
// BATCH_BYTES of verified objects (or `done`). The caller asks for the next batch before it
// writes the current one, so at most two batches are in memory.
import { closeSync, openSync, readSync } from 'node:fs';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { decodeObjectFrame, type PackEntry } from '../store/pack.js';

const BATCH_BYTES = 8 * 1024 * 1024;

type Request = { op: 'open'; file: string; entries: PackEntry[] } | { op: 'next' };
type Reply = { objects: { id: string; bytes: Uint8Array }[]; done: boolean } | { error: string };

if (!isMainThread && parentPort) {
  const port = parentPort;
  let fd: number | null = null;
  let entries: PackEntry[] = [];
  let at = 0;
  port.on('message', (req: Request) => {
    try {
      if (req.op === 'open') {
        if (fd !== null) closeSync(fd);
        fd = openSync(req.file, 'r');
        entries = req.entries;
        at = 0;
      }
      const objects: { id: string; bytes: Uint8Array }[] = [];
      let size = 0;
      while (at < entries.length && (size < BATCH_BYTES || objects.length === 0)) {
        const e = entries[at++];
        const frame = Buffer.allocUnsafe(e.length);
        readSync(fd!, frame, 0, e.length, e.offset);
        const raw = decodeObjectFrame(e, frame);
        objects.push({ id: e.id, bytes: new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength) });
        size += raw.length;
      }
      const done = at >= entries.length;
      if (done && fd !== null) {
        closeSync(fd);
        fd = null;
      }
      // Buffers from allocUnsafe may share a pool: transfer only those that own their memory.
      const transfer = objects.map((o) => o.bytes.buffer).filter((b, i, all) => b.byteLength === objects[i].bytes.byteLength && all.indexOf(b) === i);
      port.postMessage({ objects, done } satisfies Reply, transfer as ArrayBuffer[]);
    } catch (err) {
      port.postMessage({ error: (err as Error).message } satisfies Reply);
    }
  });
}

export class Unpacker {
  private readonly worker = new Worker(new URL(import.meta.url));
  private pending: { resolve: (r: Reply) => void; reject: (e: Error) => void } | null = null;

  constructor() {
    this.worker.on('message', (reply: Reply) => {
      const p = this.pending;
      this.pending = null;
      p?.resolve(reply);
    });
    this.worker.on('error', (err) => {
      const p = this.pending;
      this.pending = null;
      p?.reject(err);
    });
  }

  private ask(req: Request): Promise<{ objects: { id: string; bytes: Buffer }[]; done: boolean }> {
    return new Promise((resolve, reject) => {
      this.pending = {
        resolve: (reply) => {
          if ('error' in reply) reject(new Error(reply.error));
          else resolve({ done: reply.done, objects: reply.objects.map((o) => ({ id: o.id, bytes: Buffer.from(o.bytes.buffer, o.bytes.byteOffset, o.bytes.byteLength) })) });
        },
        reject,
      };
      this.worker.postMessage(req);
    });
  }

  /** Verified objects of `entries` from the pack `file`, batch by batch (one batch decoded ahead). */
  async *objects(file: string, entries: PackEntry[]): AsyncGenerator<{ id: string; bytes: Buffer }[]> {
    if (entries.length === 0) return;
    let reply = await this.ask({ op: 'open', file, entries });
    for (;;) {
      const next = reply.done ? null : this.ask({ op: 'next' });
      yield reply.objects;
      if (!next) return;
      reply = await next;
    }
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}
