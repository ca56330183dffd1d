// DATA/access.log in the archive (storage-layout.md §20.6): the server's accounts, tokens,
// groups and grants live outside every repository, so they are shipped beside them, as byte
// ranges of the append-only log and a small JSON manifest naming the ranges that make up its
// committed prefix (a base [0, L) and the ranges after it). A restore and a follower write
// access.log from the newest manifest (at or before a restore's time); the log's own framing
// cuts a torn last record at open, as after a crash.
import { promises as fsp } from 'node:fs';
import { buffer } from 'node:stream/consumers';
import { Corrupt } from '../domain/errors.js';
import { ObjectStoreError, sha256Hex, verified, type ObjectStore } from './object-store.js';
import { writeFileDurable } from '../store/durable.js';

export const ACCESS_PREFIX = 'access/';
const MANIFESTS = `${ACCESS_PREFIX}manifests/`;
const pad20 = (n: bigint | number): string => BigInt(n).toString().padStart(20, '0');
const SHA = /^[0-9a-f]{64}$/;
/** At most this many bytes of access.log are restored (the log of a very large site is far smaller). */
const MAX_ACCESS_BYTES = 1024 * 1024 * 1024;

export interface AccessRange { key: string; offset: number; size: number; sha256: string }

export interface AccessManifest {
  archive_generation: string;
  /** The committed length of access.log this manifest rebuilds. */
  length: number;
  captured_at_us: string;
  /** A base [0, …) and the ranges after it, in offset order, covering [0, length) without a gap. */
  ranges: AccessRange[];
}

export const accessRangeKey = (gen: bigint, start: number, end: number): string => `${ACCESS_PREFIX}g${pad20(gen)}/logs/${pad20(start)}-${pad20(end)}`;
export const accessManifestKey = (gen: bigint, capturedAtUs: bigint, length: number): string => `${MANIFESTS}g${pad20(gen)}-${pad20(capturedAtUs)}-${pad20(length)}.json`;
const MANIFEST_KEY = /^access\/manifests\/g([0-9]{20})-([0-9]{20})-([0-9]{20})\.json$/;

export function encodeAccessManifest(m: AccessManifest): Buffer {
  return Buffer.from(`${JSON.stringify(m)}\n`, 'utf8');
}

/** Decode and check a manifest: ranges of this archive's access keys, contiguous from 0 to `length`. */
export function decodeAccessManifest(bytes: Buffer, key: string): AccessManifest {
  const fail = (why: string): Corrupt => new Corrupt(`archive access manifest ${key}: ${why}`);
  let m: AccessManifest;
  try {
    m = JSON.parse(bytes.toString('utf8')) as AccessManifest;
  } catch {
    throw fail('not JSON');
  }
  if (!m || typeof m !== 'object' || !/^[1-9][0-9]*$/.test(String(m.archive_generation)) || !Number.isSafeInteger(m.length) || m.length < 0 || m.length > MAX_ACCESS_BYTES || !/^[0-9]+$/.test(String(m.captured_at_us)) || !Array.isArray(m.ranges)) throw fail('fields missing or out of range');
  let covered = 0;
  for (const r of m.ranges) {
    if (!r || typeof r.key !== 'string' || !r.key.startsWith(ACCESS_PREFIX) || r.key.startsWith(MANIFESTS) || !Number.isSafeInteger(r.offset) || !Number.isSafeInteger(r.size) || r.size < 0 || typeof r.sha256 !== 'string' || !SHA.test(r.sha256)) throw fail('a range is malformed');
    if (r.offset > covered) throw fail(`a gap before byte ${r.offset}`);
    covered = Math.max(covered, r.offset + r.size);
  }
  if (covered < m.length) throw fail(`ranges cover ${covered} bytes of ${m.length}`);
  return m;
}

/** Every access manifest key, in key order (oldest generation, then capture time, first). */
export async function listAccessManifests(store: ObjectStore, gen?: bigint): Promise<string[]> {
  const keys: string[] = [];
  const prefix = gen === undefined ? MANIFESTS : `${MANIFESTS}g${pad20(gen)}-`;
  let after: string | undefined;
  for (;;) {
    const page = await store.list(prefix, after === undefined ? {} : { after });
    for (const o of page.objects) if (MANIFEST_KEY.test(o.key)) keys.push(o.key);
    if (page.next === undefined) break;
    after = page.next;
  }
  return keys.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

export async function readAccessManifest(store: ObjectStore, key: string): Promise<AccessManifest> {
  return decodeAccessManifest(await buffer((await store.get(key)).body), key);
}

/**
 * The access manifest a restore takes: the newest (greatest generation, then capture time), or with
 * `atUs` the newest captured at or before it. Null when the archive has none (an archive from
 * before access.log was shipped).
 */
export async function findAccessManifest(store: ObjectStore, atUs?: bigint): Promise<{ key: string; manifest: AccessManifest } | null> {
  const keys = await listAccessManifests(store);
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i]!;
    if (atUs !== undefined && BigInt(MANIFEST_KEY.exec(key)![2]!) > atUs) continue;
    return { key, manifest: await readAccessManifest(store, key) };
  }
  return null;
}

/** Fetch the ranges (each checked against its size and sha256) and write `file` durably (temp, fsync, rename). */
export async function writeAccessLog(store: ObjectStore, m: AccessManifest, key: string, file: string): Promise<void> {
  const out = Buffer.alloc(m.length);
  for (const r of m.ranges) {
    if (r.offset >= m.length) continue;
    let body: Buffer;
    try {
      body = await buffer((await store.get(r.key)).body.pipe(verified(`object ${r.key} (named by ${key})`, { sha256: r.sha256, size: r.size })));
    } catch (err) {
      if (err instanceof ObjectStoreError && err.kind === 'not-found') throw new Corrupt(`object ${r.key} (named by ${key}) is missing from the archive`);
      throw err;
    }
    body.copy(out, r.offset, 0, Math.min(body.length, m.length - r.offset));
  }
  await writeFileDurable(file, out);
}

/** What the shipper knows of the shipped access.log. */
export interface AccessShipped { length: number; ranges: AccessRange[]; rangesSinceBase: number; header: string }

/**
 * Ship access.log's new bytes (a base when the log was replaced or `checkpointRanges` ranges
 * were shipped since the last base), then its manifest. Returns the new shipped state, or the
 * old one when nothing changed.
 */
export async function shipAccessLog(store: ObjectStore, gen: bigint, file: string, shipped: AccessShipped | null, checkpointRanges: number, beforeManifest: () => Promise<void>): Promise<AccessShipped | null> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return shipped;
    throw err;
  }
  try {
    const size = (await handle.stat()).size;
    if (size > MAX_ACCESS_BYTES) throw new Error(`access.log is larger than ${MAX_ACCESS_BYTES} bytes: not shipped`);
    if (shipped && size === shipped.length) return shipped;
    const head = Buffer.alloc(Math.min(size, 64));
    await handle.read(head, 0, head.length, 0);
    const headerHex = head.toString('hex');
    const base = !shipped || size < shipped.length || shipped.header !== headerHex.slice(0, shipped.header.length) || shipped.rangesSinceBase >= checkpointRanges;
    const start = base ? 0 : shipped.length;
    const bytes = Buffer.alloc(size - start);
    let at = 0;
    while (at < bytes.length) {
      const { bytesRead } = await handle.read(bytes, at, bytes.length - at, start + at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    const body = bytes.subarray(0, at);
    const end = start + body.length;
    const range: AccessRange = { key: accessRangeKey(gen, start, end), offset: start, size: body.length, sha256: sha256Hex(body) };
    await store.put(range.key, body, { sha256: range.sha256, size: range.size });
    const next: AccessShipped = base
      ? { length: end, ranges: [range], rangesSinceBase: 0, header: headerHex }
      : { length: end, ranges: [...shipped!.ranges, range], rangesSinceBase: shipped!.rangesSinceBase + 1, header: shipped!.header };
    const capturedAtUs = BigInt(Date.now()) * 1000n;
    const manifest = encodeAccessManifest({ archive_generation: gen.toString(), length: end, captured_at_us: capturedAtUs.toString(), ranges: next.ranges });
    await beforeManifest();
    await store.put(accessManifestKey(gen, capturedAtUs, end), manifest, { sha256: sha256Hex(manifest), size: manifest.length });
    return next;
  } finally {
    await handle.close();
  }
}

/** The shipped state the newest own manifest describes (after a restart), or null. */
export async function loadAccessShipped(store: ObjectStore, gen: bigint): Promise<AccessShipped | null> {
  const keys = await listAccessManifests(store, gen);
  const key = keys.at(-1);
  if (!key) return null;
  const m = await readAccessManifest(store, key);
  const first = m.ranges[0];
  let header = '';
  if (first && first.offset === 0) {
    const bytes = await buffer((await store.get(first.key)).body);
    header = bytes.subarray(0, 64).toString('hex');
  }
  return { length: m.length, ranges: m.ranges, rangesSinceBase: Math.max(0, m.ranges.length - 1), header };
}
