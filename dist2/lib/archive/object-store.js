// The object-store seam of the archive: what shipping, restore and a follower need from an
// S3-compatible store, and nothing more. Keys are relative to the store's own prefix. The S3
// implementation is lib/archive/s3-store.ts; the tests also use an in-memory, fault-injecting
// one (test/memory-store.ts) that the product never uses.
//
// Integrity is the caller's to demand and the store's to check: every put names the body's
// sha256 and size (kept as object metadata and checked while the body streams), and every
// read can be checked against what a manifest names with `verified`.
import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
/** Every failure of an ObjectStore. Messages name the operation and key, never a secret. */
export class ObjectStoreError extends Error {
    kind;
    /** HTTP status the store answered, when it answered. */
    status;
    constructor(kind, message, status) {
        super(message);
        this.name = 'ObjectStoreError';
        this.kind = kind;
        if (status !== undefined)
            this.status = status;
    }
    /** Worth trying again later (the same request may succeed). */
    get retryable() {
        return this.kind === 'throttled' || this.kind === 'unavailable';
    }
}
export function sha256Hex(bytes) {
    return createHash('sha256').update(bytes).digest('hex');
}
/**
 * A pass-through stream that fails (with an `integrity` ObjectStoreError) when the bytes that
 * went through it are not exactly `size` long with the given sha256. It holds back its last
 * chunk until the end proved right, so a consumer that counts bytes (an upload with a
 * Content-Length) never receives the whole of a wrong body; a length overrun fails at once.
 */
export function verified(what, expected) {
    const hash = createHash('sha256');
    let seen = 0;
    let held;
    return new Transform({
        transform(chunk, _enc, done) {
            seen += chunk.length;
            if (seen > expected.size) {
                done(new ObjectStoreError('integrity', `${what}: more than the ${expected.size} bytes named`));
                return;
            }
            hash.update(chunk);
            const previous = held;
            held = chunk;
            done(null, previous);
        },
        flush(done) {
            if (seen !== expected.size) {
                done(new ObjectStoreError('integrity', `${what}: ${seen} bytes, ${expected.size} named`));
                return;
            }
            const digest = hash.digest('hex');
            if (digest !== expected.sha256) {
                done(new ObjectStoreError('integrity', `${what}: sha256 ${digest}, ${expected.sha256} named`));
                return;
            }
            done(null, held);
        },
    });
}
export const SHA256_HEX = /^[0-9a-f]{64}$/;
/** Refuse put options that cannot be right before any byte moves. */
export function checkPutOptions(key, options) {
    if (!SHA256_HEX.test(options.sha256))
        throw new ObjectStoreError('integrity', `put ${key}: sha256 must be 64 lowercase hex digits`);
    if (!Number.isSafeInteger(options.size) || options.size < 0)
        throw new ObjectStoreError('integrity', `put ${key}: size must be a non-negative integer`);
}
/** Check a key: non-empty UTF-8 without control characters, at most 1024 bytes (S3's limit). */
export function checkKey(key) {
    // eslint-disable-next-line no-control-regex
    if (key.length === 0 || Buffer.byteLength(key) > 1024 || /[\u0000-\u001f\u007f]/.test(key) || key.startsWith('/')) {
        throw new ObjectStoreError('other', `object key ${JSON.stringify(key.slice(0, 80))} is not usable`);
    }
}
//# sourceMappingURL=object-store.js.map