// An in-memory ObjectStore (lib/archive/object-store.ts) for unit tests, with the faults a real
// object store shows: failures of any operation (5xx, throttling, no answer), a crash — the
// store stops answering from a chosen put on (the writer's kill between a pack and its
// manifest looks the same from the store), a partial upload left behind, and a stale listing
// (Swift's listings are eventually consistent). Tests only: the product never uses it.
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import {
  ObjectStoreError,
  checkKey,
  checkPutOptions,
  sha256Hex,
  verified,
  type Body,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
} from '../lib/archive/object-store.js';

type Op = 'put' | 'get' | 'head' | 'list' | 'delete';

interface Stored {
  bytes: Buffer;
  sha256?: string;
  lastModified: Date;
}

export interface Fault {
  op: Op;
  /** Only keys starting with this (default: any). */
  keyPrefix?: string;
  /** How many calls fail (default 1). */
  times?: number;
  kind: 'unavailable' | 'throttled' | 'no-answer';
}

export class MemoryObjectStore implements ObjectStore {
  readonly description = 'memory://test';
  readonly objects = new Map<string, Stored>();
  /** Every call, in order: `put key`, `get key`, ... (for tests that check the order). */
  readonly calls: string[] = [];
  private faults: Fault[] = [];
  private crashed = false;
  private crashAtPut: number | undefined;
  private putCount = 0;
  private partial: { keyPrefix: string; bytes: number } | undefined;
  private staleKeys: string[] | undefined;

  /** `honoursConditional: false` answers 501 to If-None-Match, as Swift 2.30 does. */
  constructor(private readonly honoursConditional = true) {}

  /** Fail matching calls with the given fault. */
  inject(fault: Fault): this {
    this.faults.push({ times: 1, ...fault });
    return this;
  }

  /** From the `n`th put on (1-based) the store answers nothing at all, until `recover()`. */
  crashAtPutNumber(n: number): this {
    this.crashAtPut = n;
    return this;
  }

  /** The next put under `keyPrefix` keeps only its first `bytes` bytes and then fails. */
  partialUpload(keyPrefix: string, bytes: number): this {
    this.partial = { keyPrefix, bytes };
    return this;
  }

  /** Listings show the keys as they are now until `freshListing()`. */
  staleListing(): this {
    this.staleKeys = [...this.objects.keys()].sort();
    return this;
  }

  freshListing(): this {
    this.staleKeys = undefined;
    return this;
  }

  /**
   * Puts of keys starting with `keyPrefix` (and of at least `minBytes`) wait (after reading their body) until the returned
   * function is called: a slow upload made on purpose, to force an interleaving.
   */
  hold(keyPrefix: string, minBytes = 0): () => void {
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    this.holds.push({ keyPrefix, gate, minBytes });
    return () => {
      this.holds = this.holds.filter((h) => h.gate !== gate);
      release();
    };
  }

  /** Puts waiting in a hold now. */
  held = 0;
  private holds: { keyPrefix: string; gate: Promise<void>; minBytes: number }[] = [];

  private async waitHold(key: string, size: number): Promise<void> {
    const h = this.holds.find((x) => key.startsWith(x.keyPrefix) && size >= x.minBytes);
    if (!h) return;
    this.held++;
    try {
      await h.gate;
    } finally {
      this.held--;
    }
  }

  recover(): this {
    this.crashed = false;
    this.crashAtPut = undefined;
    this.faults = [];
    return this;
  }

  private enter(op: Op, key: string): void {
    this.calls.push(`${op} ${key}`);
    if (op === 'put') {
      this.putCount++;
      if (this.crashAtPut !== undefined && this.putCount >= this.crashAtPut) this.crashed = true;
    }
    if (this.crashed) throw new ObjectStoreError('unavailable', `${op} ${key}: no answer from the object store (crashed)`);
    const i = this.faults.findIndex((f) => f.op === op && key.startsWith(f.keyPrefix ?? ''));
    if (i < 0) return;
    const fault = this.faults[i]!;
    fault.times = (fault.times ?? 1) - 1;
    if (fault.times <= 0) this.faults.splice(i, 1);
    if (fault.kind === 'throttled') throw new ObjectStoreError('throttled', `${op} ${key}: 503 SlowDown`, 503);
    if (fault.kind === 'unavailable') throw new ObjectStoreError('unavailable', `${op} ${key}: 500 InternalError`, 500);
    throw new ObjectStoreError('unavailable', `${op} ${key}: no answer from the object store (ECONNRESET)`);
  }

  private async bytesOf(key: string, body: Body, options: PutOptions): Promise<Buffer> {
    checkKey(key);
    checkPutOptions(key, options);
    const stream = Buffer.isBuffer(body) ? Readable.from([body]) : body();
    return buffer(stream.pipe(verified(`put ${key}`, options)));
  }

  async put(key: string, body: Body, options: PutOptions): Promise<void> {
    this.enter('put', key);
    if (this.partial && key.startsWith(this.partial.keyPrefix)) {
      const cut = this.partial.bytes;
      this.partial = undefined;
      const all = Buffer.isBuffer(body) ? body : await buffer(body());
      this.objects.set(key, { bytes: Buffer.from(all.subarray(0, cut)), lastModified: new Date() });
      throw new ObjectStoreError('unavailable', `put ${key}: no answer from the object store (ECONNRESET)`);
    }
    const bytes = await this.bytesOf(key, body, options);
    await this.waitHold(key, bytes.length);
    this.objects.set(key, { bytes, sha256: options.sha256, lastModified: new Date() });
  }

  async putIfAbsent(key: string, body: Body, options: PutOptions): Promise<'created' | 'exists'> {
    this.enter('put', key);
    if (!this.honoursConditional) throw new ObjectStoreError('not-implemented', `put ${key}: 501 NotImplemented`, 501);
    const bytes = await this.bytesOf(key, body, options);
    if (this.objects.has(key)) return 'exists';
    this.objects.set(key, { bytes, sha256: options.sha256, lastModified: new Date() });
    return 'created';
  }

  async get(key: string): Promise<{ body: Readable; size: number; sha256?: string }> {
    this.enter('get', key);
    const o = this.objects.get(key);
    if (!o) throw new ObjectStoreError('not-found', `get ${key}: 404 NoSuchKey`, 404);
    return { body: Readable.from([o.bytes]), size: o.bytes.length, ...(o.sha256 !== undefined ? { sha256: o.sha256 } : {}) };
  }

  async head(key: string): Promise<ObjectInfo | null> {
    this.enter('head', key);
    const o = this.objects.get(key);
    if (!o) return null;
    return { key, size: o.bytes.length, lastModified: o.lastModified, ...(o.sha256 !== undefined ? { sha256: o.sha256 } : {}) };
  }

  async list(prefix: string, options: { after?: string; limit?: number } = {}): Promise<ListPage> {
    this.enter('list', prefix);
    const limit = Math.max(1, Math.min(options.limit ?? 1000, 1000));
    const keys = (this.staleKeys ?? [...this.objects.keys()].sort())
      .filter((k) => k.startsWith(prefix) && (options.after === undefined || k > options.after));
    const page = keys.slice(0, limit);
    const objects = page.map((key) => {
      const o = this.objects.get(key);
      return { key, size: o?.bytes.length ?? 0, ...(o ? { lastModified: o.lastModified } : {}) };
    });
    return keys.length > limit ? { objects, next: page[page.length - 1]! } : { objects };
  }

  async delete(key: string): Promise<void> {
    this.enter('delete', key);
    this.objects.delete(key);
  }

  async conditionalPut(): Promise<boolean> {
    return this.honoursConditional;
  }
}

export { sha256Hex };
