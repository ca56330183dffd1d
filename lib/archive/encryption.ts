// Client-side encryption of the archive (`--archive-key-file`; storage-layout.md §20.9,
// docs/operations.md "Encryption"): every object is sealed with AES-256-GCM (node:crypto) before
// it leaves the process, under a fresh random 96-bit nonce, with the object's key as associated
// data (an object moved to another key does not open) and the key id in its header (the reader
// picks the key; older keys of a key file stay readable: rotation). The store underneath sees
// only ciphertext: bodies, sizes and the sha256 metadata are the sealed object's.
//
// EncryptedStore wraps any ObjectStore. Everything above it (shipper, restore, follower, prune,
// verify) works on plaintext and checks plaintext sha256s as before. Without a key file the same
// wrapper only recognises sealed objects and refuses them with a message that names the key id.
import { createCipheriv, createDecipheriv, createHmac, randomBytes, createHash, type DecipherGCM } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { ObjectStoreError, checkPutOptions, verified, type Body, type ListPage, type ObjectInfo, type ObjectStore, type PutOptions } from './object-store.js';

export const SEALED_MAGIC = Buffer.from('CAIRNENC', 'latin1');
export const SEALED_VERSION = 1;
/** Bytes before the ciphertext: magic 8, version 1, key id length 1, key id 32 (zero-padded), key check 8, nonce 12. */
export const SEALED_HEADER = 62;
const TAG = 16;
/** What sealing adds to an object's length. */
export const SEALED_OVERHEAD = SEALED_HEADER + TAG;
const KEY_ID = /^[A-Za-z0-9._-]{1,32}$/;
const KEY_B64 = /^[A-Za-z0-9+/]{43}=$/;

export interface ArchiveKey {
  id: string;
  key: Buffer;
  /** HMAC-SHA256(key, "cairn archive key check")[0..8]: tells a wrong key from a damaged object. */
  check: Buffer;
}

export interface ArchiveKeys {
  /** The key new objects are sealed with: the file's first. */
  writing: ArchiveKey;
  byId: Map<string, ArchiveKey>;
  /** The key file's path, for messages (never its contents). */
  file: string;
}

function keyCheck(key: Buffer): Buffer {
  return createHmac('sha256', key).update('cairn archive key check').digest().subarray(0, 8);
}

/**
 * Parse a key file's text: one key a line, `KEYID:BASE64` (KEYID of 1-32 letters, digits, `.`,
 * `_`, `-`; BASE64 the standard encoding of exactly 32 random bytes); blank lines and lines
 * starting with `#` are ignored. The first key writes; every key reads.
 */
export function parseArchiveKeys(text: string, file: string): ArchiveKeys {
  const byId = new Map<string, ArchiveKey>();
  let writing: ArchiveKey | undefined;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    // The line number only: a key's text never goes into a message.
    const bad = (why: string): ObjectStoreError => new ObjectStoreError('config', `archive key file ${file}, line ${i + 1}: ${why} (each line is KEYID:BASE64 of 32 random bytes, e.g. made by: printf 'k1:%s\\n' "$(head -c 32 /dev/urandom | base64)")`);
    const colon = line.indexOf(':');
    if (colon < 0) throw bad('no ":" between the key id and the key');
    const id = line.slice(0, colon);
    const b64 = line.slice(colon + 1);
    if (!KEY_ID.test(id)) throw bad('the key id must be 1-32 letters, digits, ".", "_" or "-"');
    if (!KEY_B64.test(b64)) throw bad('the key must be 32 bytes in standard base64 (44 characters ending in "=")');
    if (byId.has(id)) throw bad(`key id ${id} appears twice`);
    const key = Buffer.from(b64, 'base64');
    if (key.length !== 32) throw bad('the key must be 32 bytes');
    const k: ArchiveKey = { id, key, check: keyCheck(key) };
    byId.set(id, k);
    writing ??= k;
  }
  if (!writing) throw new ObjectStoreError('config', `archive key file ${file} holds no key (one line KEYID:BASE64 of 32 random bytes)`);
  return { writing, byId, file };
}

/** Read a key file; one readable or writable by group or others is refused. */
export async function loadArchiveKeys(file: string): Promise<ArchiveKeys> {
  let text: string;
  try {
    const handle = await fsp.open(file, 'r');
    try {
      const st = await handle.stat();
      if (!st.isFile()) throw new ObjectStoreError('config', `archive key file ${file} is not a regular file`);
      if ((st.mode & 0o077) !== 0) throw new ObjectStoreError('config', `archive key file ${file} is accessible by group or others (mode ${(st.mode & 0o777).toString(8)}): chmod 600 ${file}`);
      if (st.size > 64 * 1024) throw new ObjectStoreError('config', `archive key file ${file} is larger than 64 KiB: not a key file`);
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    if (err instanceof ObjectStoreError) throw err;
    throw new ObjectStoreError('config', `cannot read the archive key file ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  return parseArchiveKeys(text, file);
}

function sealedHeader(k: ArchiveKey, nonce: Buffer): Buffer {
  const h = Buffer.alloc(SEALED_HEADER);
  SEALED_MAGIC.copy(h, 0);
  h.writeUInt8(SEALED_VERSION, 8);
  h.writeUInt8(k.id.length, 9);
  h.write(k.id, 10, 'latin1');
  k.check.copy(h, 42);
  nonce.copy(h, 50);
  return h;
}

/** The associated data: the header and the object's key (relative to the archive's prefix). */
function aad(header: Buffer, key: string): Buffer {
  return Buffer.concat([header, Buffer.from(key, 'utf8')]);
}

interface ParsedHeader {
  id: string;
  check: Buffer;
  nonce: Buffer;
}

/** The header's fields, or null when `h` does not begin a sealed object. */
export function parseSealedHeader(h: Buffer): ParsedHeader | null {
  if (h.length < SEALED_HEADER || !h.subarray(0, 8).equals(SEALED_MAGIC) || h.readUInt8(8) !== SEALED_VERSION) return null;
  const n = h.readUInt8(9);
  if (n < 1 || n > 32) return null;
  const id = h.subarray(10, 10 + n).toString('latin1');
  if (!KEY_ID.test(id) || h.subarray(10 + n, 42).some((b) => b !== 0)) return null;
  return { id, check: Buffer.from(h.subarray(42, 50)), nonce: Buffer.from(h.subarray(50, 62)) };
}

/** Seal `plain` (whole, in memory) as object `key`. */
export function sealBuffer(keys: ArchiveKeys, key: string, plain: Buffer, nonce: Buffer = randomBytes(12)): Buffer {
  const header = sealedHeader(keys.writing, nonce);
  const cipher = createCipheriv('aes-256-gcm', keys.writing.key, nonce, { authTagLength: TAG });
  cipher.setAAD(aad(header, key));
  return Buffer.concat([header, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
}

/** A stream that seals what goes through it as object `key` under `nonce` (deterministic for a given nonce). */
function sealing(keys: ArchiveKeys, key: string, nonce: Buffer): Transform {
  const header = sealedHeader(keys.writing, nonce);
  const cipher = createCipheriv('aes-256-gcm', keys.writing.key, nonce, { authTagLength: TAG });
  cipher.setAAD(aad(header, key));
  let started = false;
  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      if (!started) { started = true; this.push(header); }
      done(null, cipher.update(chunk));
    },
    flush(done: TransformCallback) {
      if (!started) this.push(header);
      this.push(cipher.final());
      done(null, cipher.getAuthTag());
    },
  });
}

function encryptedWithout(key: string, id: string): ObjectStoreError {
  return new ObjectStoreError('config', `the archive is encrypted with key id ${id} (object ${key}); give --archive-key-file with that key`);
}

/**
 * A stream that opens sealed object `key`: it parses the header, picks the key by its id, and
 * decrypts; the last plaintext chunk is held back until the tag proved the whole object, so a
 * consumer that commits on the stream's end never commits a forged or damaged byte.
 */
function opening(keys: ArchiveKeys, key: string): Transform {
  let head: Buffer | null = Buffer.alloc(0);
  let decipher: DecipherGCM | null = null;
  let tail = Buffer.alloc(0);
  let held: Buffer | null = null;
  const out = (t: Transform, b: Buffer): void => {
    if (b.length === 0) return;
    if (held) t.push(held);
    held = b;
  };
  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      if (head) {
        head = Buffer.concat([head, chunk]);
        if (head.length < SEALED_HEADER) { done(); return; }
        const h = parseSealedHeader(head);
        if (!h) {
          done(new ObjectStoreError('config', `object ${key} is not encrypted, but --archive-key-file was given: the archive (or this object) was written without encryption`));
          return;
        }
        const k = keys.byId.get(h.id);
        if (!k) {
          done(new ObjectStoreError('config', `the archive is encrypted with key id ${h.id} (object ${key}), which ${keys.file} does not hold (it holds ${[...keys.byId.keys()].join(', ')}); give --archive-key-file with that key`));
          return;
        }
        if (!k.check.equals(h.check)) {
          done(new ObjectStoreError('config', `object ${key} was encrypted with another key of id ${h.id} than the one ${keys.file} holds (or its header is damaged)`));
          return;
        }
        decipher = createDecipheriv('aes-256-gcm', k.key, h.nonce, { authTagLength: TAG });
        decipher.setAAD(aad(head.subarray(0, SEALED_HEADER), key));
        chunk = head.subarray(SEALED_HEADER);
        head = null;
      }
      // The last TAG bytes seen may be the tag: keep them back from the decipher.
      const all = tail.length ? Buffer.concat([tail, chunk]) : chunk;
      const cut = Math.max(0, all.length - TAG);
      tail = Buffer.from(all.subarray(cut));
      if (cut > 0) out(this, decipher!.update(all.subarray(0, cut)));
      done();
    },
    flush(done: TransformCallback) {
      if (head && !head.subarray(0, 8).equals(SEALED_MAGIC.subarray(0, Math.min(8, head.length)))) {
        done(new ObjectStoreError('config', `object ${key} is not encrypted, but --archive-key-file was given: the archive (or this object) was written without encryption`));
        return;
      }
      if (head || !decipher || tail.length < TAG) {
        done(new ObjectStoreError('integrity', `object ${key}: shorter than an encrypted object's header and tag`));
        return;
      }
      let last: Buffer;
      try {
        decipher.setAuthTag(tail);
        last = decipher.final();
      } catch {
        done(new ObjectStoreError('integrity', `object ${key}: its ciphertext does not authenticate (damaged or altered)`));
        return;
      }
      if (held) this.push(held);
      done(null, last);
    },
  });
}

/** Recognises a sealed object read without a key (the first bytes), else passes the bytes through untouched. */
function sniffing(key: string): Transform {
  let head: Buffer | null = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      if (!head) { done(null, chunk); return; }
      head = Buffer.concat([head, chunk]);
      if (head.length < SEALED_HEADER && head.subarray(0, 8).equals(SEALED_MAGIC.subarray(0, Math.min(8, head.length)))) { done(); return; }
      const h = parseSealedHeader(head);
      if (h) { done(encryptedWithout(key, h.id)); return; }
      const b = head;
      head = null;
      done(null, b);
    },
    flush(done: TransformCallback) {
      done(null, head ?? undefined);
    },
  });
}

/** Whether an object's bytes are the repository's own data at an arbitrary offset (a log range): never sniffed, since any bytes may begin one. */
const arbitraryBytes = (key: string): boolean => /\/logs\//.test(key);

/**
 * The archive's store as the rest of the code sees it: with `keys`, every object sealed on put and
 * opened on get (sizes in listings and HEADs are the plaintext's; a sealed object's sha256
 * metadata is not the plaintext's and is not passed up); without, objects pass untouched but a
 * sealed one is refused naming its key id.
 */
export class EncryptedStore implements ObjectStore {
  readonly description: string;
  constructor(readonly inner: ObjectStore, readonly keys: ArchiveKeys | null) {
    this.description = inner.description;
  }

  put(key: string, body: Body, options: PutOptions): Promise<void> {
    if (!this.keys) return this.inner.put(key, body, options);
    return this.sealAnd(key, body, options, (b, o) => this.inner.put(key, b, o));
  }

  putIfAbsent(key: string, body: Body, options: PutOptions): Promise<'created' | 'exists'> {
    if (!this.keys) return this.inner.putIfAbsent(key, body, options);
    return this.sealAnd(key, body, options, (b, o) => this.inner.putIfAbsent(key, b, o));
  }

  /**
   * Seal, then store. A buffer is sealed in memory. A stream is read twice (bounded memory: one
   * pass to learn the sealed object's sha256, which the store checks, one to upload) under one
   * nonce, so both passes give the same bytes; the plaintext is checked against its sha256 on
   * both, and a body that changed between them fails the upload's check.
   */
  private async sealAnd<T>(key: string, body: Body, options: PutOptions, put: (body: Body, options: PutOptions) => Promise<T>): Promise<T> {
    checkPutOptions(key, options);
    const keys = this.keys!;
    const nonce = randomBytes(12);
    if (Buffer.isBuffer(body)) {
      if (body.length !== options.size) throw new ObjectStoreError('integrity', `put ${key}: ${body.length} bytes, ${options.size} named`);
      const digest = createHash('sha256').update(body).digest('hex');
      if (digest !== options.sha256) throw new ObjectStoreError('integrity', `put ${key}: sha256 ${digest}, ${options.sha256} named`);
      const sealed = sealBuffer(keys, key, body, nonce);
      return put(sealed, { sha256: createHash('sha256').update(sealed).digest('hex'), size: sealed.length });
    }
    const open = (): Readable => {
      const source = body();
      const check = verified(`put ${key}`, options);
      const seal = sealing(keys, key, nonce);
      source.on('error', (err) => check.destroy(err));
      check.on('error', (err) => seal.destroy(err));
      return source.pipe(check).pipe(seal);
    };
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of open() as AsyncIterable<Buffer>) {
      hash.update(chunk);
      size += chunk.length;
    }
    return put(open, { sha256: hash.digest('hex'), size });
  }

  async get(key: string): Promise<{ body: Readable; size: number; sha256?: string }> {
    const got = await this.inner.get(key);
    if (!this.keys) {
      if (arbitraryBytes(key)) return got;
      return { ...got, body: pipeOn(got.body, sniffing(key)) };
    }
    return { body: pipeOn(got.body, opening(this.keys, key)), size: Math.max(0, got.size - SEALED_OVERHEAD) };
  }

  async head(key: string): Promise<ObjectInfo | null> {
    const info = await this.inner.head(key);
    return info && this.plainInfo(info);
  }

  async list(prefix: string, options?: { after?: string; limit?: number }): Promise<ListPage> {
    const page = await this.inner.list(prefix, options);
    if (!this.keys) return page;
    return { ...page, objects: page.objects.map((o) => this.plainInfo(o)) };
  }

  delete(key: string): Promise<void> {
    return this.inner.delete(key);
  }

  conditionalPut(probeKey?: string): Promise<boolean> {
    return this.inner.conditionalPut(probeKey);
  }

  /** Close the store underneath when it has connections to close. */
  close(): void {
    (this.inner as { close?: () => void }).close?.();
  }

  private plainInfo(o: ObjectInfo): ObjectInfo {
    if (!this.keys) return o;
    const { sha256: _sealed, ...rest } = o;
    return { ...rest, size: Math.max(0, o.size - SEALED_OVERHEAD) };
  }
}

/**
 * `source` through `t` as one stream, started only once read: a small object would otherwise run
 * through `t` before its reader listens, and an error of `t` would find no listener.
 */
function pipeOn(source: Readable, t: Transform): Readable {
  return Readable.from((async function* () {
    source.on('error', (err) => t.destroy(err));
    t.on('close', () => { if (!source.destroyed) source.destroy(); });
    source.pipe(t);
    yield* t as AsyncIterable<Buffer>;
  })(), { objectMode: false });
}

/** The archive store with the key file's keys (or none): what every command that reads or writes an archive uses. */
export async function archiveStore<S extends ObjectStore>(inner: S, keyFile: string | undefined): Promise<EncryptedStore> {
  return new EncryptedStore(inner, keyFile === undefined ? null : await loadArchiveKeys(keyFile));
}
