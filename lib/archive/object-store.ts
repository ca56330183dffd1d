// The object-store seam of the archive: what shipping, restore and a follower need from an
// S3-compatible store, and nothing more. Keys are relative to the store's own prefix. The S3
// implementation is lib/archive/s3-store.ts; the tests also use an in-memory, fault-injecting
// one (test/memory-store.ts) that the product never uses.
//
// Integrity is the caller's to demand and the store's to check: every put names the body's
// sha256 and size (kept as object metadata and checked while the body streams), and every
// read can be checked against what a manifest names with `verified`.
import { createHash } from 'node:crypto';
import { Transform, type Readable, type TransformCallback } from 'node:stream';

export interface ObjectInfo {
  key: string;
  size: number;
  /** Hex sha256 recorded at put time (object metadata), when the object has it. */
  sha256?: string;
  lastModified?: Date;
}

export interface PutOptions {
  /** Lowercase hex sha256 of the whole body. */
  sha256: string;
  /** Exact body length in bytes. */
  size: number;
}

/** A body: bytes, or a function that opens a fresh stream of them (called once per attempt). */
export type Body = Buffer | (() => Readable);

export interface ListPage {
  /** In key order (byte order of the UTF-8 keys). */
  objects: ObjectInfo[];
  /** Pass as `after` for the next page; absent on the last page. */
  next?: string;
}

export interface ObjectStore {
  /** Where the store points, for logs and messages: never a secret. */
  readonly description: string;
  /**
   * Store `body` at `key`, replacing any object there. Resolves once the store has the whole
   * object; a body whose length or sha256 differs from `options` is refused (`integrity`) and
   * leaves no object behind that a reader could take for the right one.
   */
  put(key: string, body: Body, options: PutOptions): Promise<void>;
  /**
   * Store `body` at `key` only if no object is there (`If-None-Match: *`): 'created', or
   * 'exists' when one was. Throws `not-implemented` where the store does not honour the
   * condition; ask `conditionalPut()` first.
   */
  putIfAbsent(key: string, body: Body, options: PutOptions): Promise<'created' | 'exists'>;
  /** The object's bytes as a stream, and its size; `not-found` when absent. */
  get(key: string): Promise<{ body: Readable; size: number; sha256?: string }>;
  /** The object's size and recorded sha256, or null when absent. */
  head(key: string): Promise<ObjectInfo | null>;
  /** One page of the objects whose keys start with `prefix`, after the key `after`. */
  list(prefix: string, options?: { after?: string; limit?: number }): Promise<ListPage>;
  /** Remove the object; removing an absent one is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Whether the store honours `If-None-Match: *` on put, found out by trying it once under
   * `probeKey` (created, refused on the second try, then removed); the answer is remembered.
   */
  conditionalPut(probeKey?: string): Promise<boolean>;
}

export type ObjectStoreErrorKind =
  | 'not-found' // no such object (or bucket)
  | 'denied' // credentials refused or not allowed
  | 'not-implemented' // the store does not support the request (Swift's 501 on If-None-Match)
  | 'throttled' // slow down, retry later (503 SlowDown, 429)
  | 'unavailable' // 5xx or the network: retry later
  | 'integrity' // a body's length or sha256 is not what was named
  | 'config' // the archive configuration is unusable
  | 'other';

/** Every failure of an ObjectStore. Messages name the operation and key, never a secret. */
export class ObjectStoreError extends Error {
  readonly kind: ObjectStoreErrorKind;
  /** HTTP status the store answered, when it answered. */
  readonly status?: number;
  constructor(kind: ObjectStoreErrorKind, message: string, status?: number) {
    super(message);
    this.name = 'ObjectStoreError';
    this.kind = kind;
    if (status !== undefined) this.status = status;
  }
  /** Worth trying again later (the same request may succeed). */
  get retryable(): boolean {
    return this.kind === 'throttled' || this.kind === 'unavailable';
  }
}

export function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * A pass-through stream that fails (with an `integrity` ObjectStoreError) when the bytes that
 * went through it are not exactly `size` long with the given sha256. It holds back its last
 * chunk until the end proved right, so a consumer that counts bytes (an upload with a
 * Content-Length) never receives the whole of a wrong body; a length overrun fails at once.
 */
export function verified(what: string, expected: { sha256: string; size: number }): Transform {
  const hash = createHash('sha256');
  let seen = 0;
  let held: Buffer | undefined;
  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
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
    flush(done: TransformCallback) {
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
export function checkPutOptions(key: string, options: PutOptions): void {
  if (!SHA256_HEX.test(options.sha256)) throw new ObjectStoreError('integrity', `put ${key}: sha256 must be 64 lowercase hex digits`);
  if (!Number.isSafeInteger(options.size) || options.size < 0) throw new ObjectStoreError('integrity', `put ${key}: size must be a non-negative integer`);
}

/** Check a key: non-empty UTF-8 without control characters, at most 1024 bytes (S3's limit). */
export function checkKey(key: string): void {
  // eslint-disable-next-line no-control-regex
  if (key.length === 0 || Buffer.byteLength(key) > 1024 || /[\u0000-\u001f\u007f]/.test(key) || key.startsWith('/')) {
    throw new ObjectStoreError('other', `object key ${JSON.stringify(key.slice(0, 80))} is not usable`);
  }
}
