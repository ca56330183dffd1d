// An in-memory ObjectStore (lib/archive/object-store.ts) for unit tests, with the faults a real
// object store shows: failures of any operation (5xx, throttling, no answer), a crash — the
// store stops answering from a chosen put on (the writer's kill between a pack and its
// manifest looks the same from the store), a partial upload left behind, and a stale listing
// (Swift's listings are eventually consistent). Tests only: the product never uses it.
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { ObjectStoreError, checkKey, checkPutOptions, sha256Hex, verified, } from '../lib/archive/object-store.js';
export class MemoryObjectStore {
    honoursConditional;
    description = 'memory://test';
    objects = new Map();
    /** Every call, in order: `put key`, `get key`, ... (for tests that check the order). */
    calls = [];
    faults = [];
    crashed = false;
    crashAtPut;
    putCount = 0;
    partial;
    staleKeys;
    /** `honoursConditional: false` answers 501 to If-None-Match, as Swift 2.30 does. */
    constructor(honoursConditional = true) {
        this.honoursConditional = honoursConditional;
    }
    /** Fail matching calls with the given fault. */
    inject(fault) {
        this.faults.push({ times: 1, ...fault });
        return this;
    }
    /** From the `n`th put on (1-based) the store answers nothing at all, until `recover()`. */
    crashAtPutNumber(n) {
        this.crashAtPut = n;
        return this;
    }
    /** The next put under `keyPrefix` keeps only its first `bytes` bytes and then fails. */
    partialUpload(keyPrefix, bytes) {
        this.partial = { keyPrefix, bytes };
        return this;
    }
    /** Listings show the keys as they are now until `freshListing()`. */
    staleListing() {
        this.staleKeys = [...this.objects.keys()].sort();
        return this;
    }
    freshListing() {
        this.staleKeys = undefined;
        return this;
    }
    recover() {
        this.crashed = false;
        this.crashAtPut = undefined;
        this.faults = [];
        return this;
    }
    enter(op, key) {
        this.calls.push(`${op} ${key}`);
        if (op === 'put') {
            this.putCount++;
            if (this.crashAtPut !== undefined && this.putCount >= this.crashAtPut)
                this.crashed = true;
        }
        if (this.crashed)
            throw new ObjectStoreError('unavailable', `${op} ${key}: no answer from the object store (crashed)`);
        const i = this.faults.findIndex((f) => f.op === op && key.startsWith(f.keyPrefix ?? ''));
        if (i < 0)
            return;
        const fault = this.faults[i];
        fault.times = (fault.times ?? 1) - 1;
        if (fault.times <= 0)
            this.faults.splice(i, 1);
        if (fault.kind === 'throttled')
            throw new ObjectStoreError('throttled', `${op} ${key}: 503 SlowDown`, 503);
        if (fault.kind === 'unavailable')
            throw new ObjectStoreError('unavailable', `${op} ${key}: 500 InternalError`, 500);
        throw new ObjectStoreError('unavailable', `${op} ${key}: no answer from the object store (ECONNRESET)`);
    }
    async bytesOf(key, body, options) {
        checkKey(key);
        checkPutOptions(key, options);
        const stream = Buffer.isBuffer(body) ? Readable.from([body]) : body();
        return buffer(stream.pipe(verified(`put ${key}`, options)));
    }
    async put(key, body, options) {
        this.enter('put', key);
        if (this.partial && key.startsWith(this.partial.keyPrefix)) {
            const cut = this.partial.bytes;
            this.partial = undefined;
            const all = Buffer.isBuffer(body) ? body : await buffer(body());
            this.objects.set(key, { bytes: Buffer.from(all.subarray(0, cut)), lastModified: new Date() });
            throw new ObjectStoreError('unavailable', `put ${key}: no answer from the object store (ECONNRESET)`);
        }
        const bytes = await this.bytesOf(key, body, options);
        this.objects.set(key, { bytes, sha256: options.sha256, lastModified: new Date() });
    }
    async putIfAbsent(key, body, options) {
        this.enter('put', key);
        if (!this.honoursConditional)
            throw new ObjectStoreError('not-implemented', `put ${key}: 501 NotImplemented`, 501);
        const bytes = await this.bytesOf(key, body, options);
        if (this.objects.has(key))
            return 'exists';
        this.objects.set(key, { bytes, sha256: options.sha256, lastModified: new Date() });
        return 'created';
    }
    async get(key) {
        this.enter('get', key);
        const o = this.objects.get(key);
        if (!o)
            throw new ObjectStoreError('not-found', `get ${key}: 404 NoSuchKey`, 404);
        return { body: Readable.from([o.bytes]), size: o.bytes.length, ...(o.sha256 !== undefined ? { sha256: o.sha256 } : {}) };
    }
    async head(key) {
        this.enter('head', key);
        const o = this.objects.get(key);
        if (!o)
            return null;
        return { key, size: o.bytes.length, lastModified: o.lastModified, ...(o.sha256 !== undefined ? { sha256: o.sha256 } : {}) };
    }
    async list(prefix, options = {}) {
        this.enter('list', prefix);
        const limit = Math.max(1, Math.min(options.limit ?? 1000, 1000));
        const keys = (this.staleKeys ?? [...this.objects.keys()].sort())
            .filter((k) => k.startsWith(prefix) && (options.after === undefined || k > options.after));
        const page = keys.slice(0, limit);
        const objects = page.map((key) => {
            const o = this.objects.get(key);
            return { key, size: o?.bytes.length ?? 0, ...(o ? { lastModified: o.lastModified } : {}) };
        });
        return keys.length > limit ? { objects, next: page[page.length - 1] } : { objects };
    }
    async delete(key) {
        this.enter('delete', key);
        this.objects.delete(key);
    }
    async conditionalPut() {
        return this.honoursConditional;
    }
}
export { sha256Hex };
//# sourceMappingURL=memory-store.js.map