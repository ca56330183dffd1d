// The archive's object keys and its manifest codec (storage-layout.md §20): pure functions, no
// I/O. A manifest names one shipped commit point and every object a restore needs, each with
// its size and sha256; a restore trusts nothing else. Decoding refuses a damaged manifest as a
// whole (Corrupt, naming the check).
import { crc32 } from 'node:zlib';
import { Corrupt } from './errors.js';

export const MANIFEST_MAGIC = Buffer.from('CAIRNAMF', 'latin1');
export const MANIFEST_VERSION = 1;
/** An incremental manifest (storage-layout.md §20.2.1): what changed since its base. */
export const MANIFEST_VERSION_DELTA = 2;
const HEADER_DELTA = 572;
/** Readers follow a chain of incremental manifests at most this deep (writers keep theirs far shorter). */
export const MAX_CHAIN = 1024;
export const COMMIT_RECORD_SIZE = 512;
const COMMIT_MAGIC = Buffer.from('CAIRNCMT', 'latin1');
const HEADER = 556;
export const MAX_ENTRIES = 1_000_000;
const MAX_TEXT = 1024;

export type EntryKind = 'pack' | 'log-range' | 'file' | 'registry';
const KIND_CODE: Record<EntryKind, number> = { pack: 1, 'log-range': 2, file: 3, registry: 4 };
const KIND_OF: Record<number, EntryKind> = { 1: 'pack', 2: 'log-range', 3: 'file', 4: 'registry' };
/** The path of a registry entry: a restore builds registry.bin from it, never a file of this name. */
export const REGISTRY_RECORD_PATH = 'registry.rec';

export interface ManifestEntry {
  kind: EntryKind;
  /** Object key, relative to the archive prefix (§20.1). */
  key: string;
  /** Where the bytes go, below `repositories/<index>/` of the restored data directory. */
  path: string;
  /** Offset in that file (0 for packs and files; the range's start for a log range). */
  offset: bigint;
  size: bigint;
  /** Lowercase hex sha256 of the object. */
  sha256: string;
}

export interface Manifest {
  archiveGeneration: bigint;
  repository: number;
  commitGeneration: bigint;
  capturedAtUs: bigint;
  /** The 512-byte commit-point record (§9) the manifest ships. */
  commitPoint: Buffer;
  /** In strictly increasing byte order of `key`. A delta's: the entries it adds to its base's. */
  entries: ManifestEntry[];
  /**
   * Present for an incremental manifest (version 2): its base is the manifest of commit
   * `baseCommit` of the same repository and archive generation; `chainLength` counts the
   * incremental manifests down to a full one (1: the base is full); `removed` are keys the
   * base's (resolved) entries name that this commit point no longer needs, in increasing byte order.
   */
  delta?: { baseCommit: bigint; chainLength: number; removed: string[] };
}

const U64_MAX = (1n << 64n) - 1n;
const pad20 = (n: bigint): string => {
  if (n < 0n || n > U64_MAX) throw new RangeError(`${n} is not a u64`);
  return n.toString().padStart(20, '0');
};
const repoPrefix = (index: number): string => {
  if (!Number.isInteger(index) || index < 0 || index > 0xffff_ffff) throw new RangeError(`repository index ${index} is not a u32`);
  return `repositories/${index}/`;
};

export function manifestPrefix(index: number): string {
  return `${repoPrefix(index)}manifests/`;
}

export function manifestKey(index: number, archiveGeneration: bigint, commitGeneration: bigint): string {
  return `${manifestPrefix(index)}g${pad20(archiveGeneration)}-${pad20(commitGeneration)}.manifest`;
}

/** The generations a manifest key names, or null for a key that is not one. */
export function parseManifestKey(key: string): { repository: number; archiveGeneration: bigint; commitGeneration: bigint } | null {
  const m = /^repositories\/(0|[1-9][0-9]{0,9})\/manifests\/g([0-9]{20})-([0-9]{20})\.manifest$/.exec(key);
  if (!m) return null;
  const repository = Number(m[1]);
  const archiveGeneration = BigInt(m[2]!);
  const commitGeneration = BigInt(m[3]!);
  if (repository > 0xffff_ffff || archiveGeneration > U64_MAX || commitGeneration > U64_MAX) return null;
  return { repository, archiveGeneration, commitGeneration };
}

/** The time index of a repository's manifests (storage-layout.md §20.1.1): markers that sort newest capture first. */
export function timeMarkerPrefix(index: number): string {
  return `${repoPrefix(index)}times/`;
}

/** 10^20 − 1: a capture time's marker sorts by this less the time, so newer sorts first. */
const INVERT = 10n ** 20n - 1n;

/** The marker of manifest (gen, commit) captured at `capturedAtUs`: an empty object; its key is the index. */
export function timeMarkerKey(index: number, capturedAtUs: bigint, archiveGeneration: bigint, commitGeneration: bigint): string {
  if (capturedAtUs < 0n || capturedAtUs > INVERT) throw new RangeError(`capture time ${capturedAtUs} is out of range`);
  return `${timeMarkerPrefix(index)}${(INVERT - capturedAtUs).toString().padStart(20, '0')}-g${pad20(archiveGeneration)}-${pad20(commitGeneration)}`;
}

/**
 * Where a listing of the markers starts to find the newest manifest captured at or before
 * `atUs`: every marker after this key (LIST start-after) was captured at or before it, newest first.
 */
export function timeMarkerStart(index: number, atUs: bigint): string {
  const t = atUs < 0n ? 0n : atUs > INVERT ? INVERT : atUs;
  return `${timeMarkerPrefix(index)}${(INVERT - t).toString().padStart(20, '0')}`;
}

/** What a marker key says: its capture time and the manifest it indexes; null for another key. */
export function parseTimeMarkerKey(key: string): { repository: number; capturedAtUs: bigint; manifest: string } | null {
  const m = /^repositories\/(0|[1-9][0-9]{0,9})\/times\/([0-9]{20})-g([0-9]{20})-([0-9]{20})$/.exec(key);
  if (!m) return null;
  const repository = Number(m[1]);
  const archiveGeneration = BigInt(m[3]!);
  const commitGeneration = BigInt(m[4]!);
  if (repository > 0xffff_ffff || archiveGeneration > U64_MAX || commitGeneration > U64_MAX) return null;
  return { repository, capturedAtUs: INVERT - BigInt(m[2]!), manifest: manifestKey(repository, archiveGeneration, commitGeneration) };
}

/**
 * The time index's origin: JSON `{"from": "<manifest key>", "written_at": "…"}` — every manifest
 * of the repository whose key is at or after `from` has its marker. Absent: no index (an archive
 * written before it); older manifests are found by reading them.
 */
export function timeIndexOriginKey(index: number): string {
  return `${repoPrefix(index)}times-from`;
}

/**
 * The marker a writer leaves when it sees a repository purged: its archive then follows the
 * retention windows like any other (the newest manifest is no longer kept for being newest).
 */
export function purgedMarkerKey(index: number): string {
  return `${repoPrefix(index)}purged`;
}

export function packKey(index: number, kind: 'objects' | 'trees', packId: string): string {
  if (!/^[0-9a-f]{64}$/.test(packId)) throw new RangeError('pack id must be 64 lowercase hex digits');
  return `${repoPrefix(index)}packs/${kind}/${packId}.pack`;
}

export function logRangeKey(index: number, archiveGeneration: bigint, logName: string, start: bigint, end: bigint): string {
  if (!isCleanPath(logName) || logName.includes('/')) throw new RangeError(`log name ${JSON.stringify(logName)} is not a file name`);
  if (end < start) throw new RangeError('a log range ends before it starts');
  return `${repoPrefix(index)}g${pad20(archiveGeneration)}/logs/${logName}/${pad20(start)}-${pad20(end)}`;
}

/** The key of a repository's registry record (§4) as it was at commit `<commit>`. */
export function registryRecordKey(index: number, archiveGeneration: bigint, commitGeneration: bigint): string {
  return fileKey(index, archiveGeneration, commitGeneration, REGISTRY_RECORD_PATH);
}

export function fileKey(index: number, archiveGeneration: bigint, commitGeneration: bigint, path: string): string {
  if (!isCleanPath(path)) throw new RangeError(`path ${JSON.stringify(path)} is not a clean relative path`);
  return `${repoPrefix(index)}g${pad20(archiveGeneration)}/files/${pad20(commitGeneration)}/${path}`;
}

/** `/`-separated, relative, no empty, `.` or `..` segment, no control character, ≤ 1024 bytes. */
export function isCleanPath(path: string): boolean {
  // eslint-disable-next-line no-control-regex
  if (path === '' || Buffer.byteLength(path) > MAX_TEXT || /[\u0000-\u001f\u007f\\]/.test(path)) return false;
  return path.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..');
}

function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The manifest's bytes (§20.2). Throws RangeError for a manifest that breaks a rule. */
export function encodeManifest(m: Manifest): Buffer {
  if (m.archiveGeneration < 1n || m.archiveGeneration > U64_MAX) throw new RangeError('archive generation must be a u64 ≥ 1');
  if (m.commitGeneration < 1n || m.commitGeneration > U64_MAX) throw new RangeError('commit generation must be a u64 ≥ 1');
  if (m.capturedAtUs < 0n || m.capturedAtUs > U64_MAX) throw new RangeError('captured_at_us must be a u64');
  repoPrefix(m.repository);
  checkCommitPoint(m.commitPoint, m.commitGeneration, (msg) => new RangeError(msg));
  if (m.entries.length > MAX_ENTRIES) throw new RangeError(`more than ${MAX_ENTRIES} entries`);
  const d = m.delta;
  if (d) {
    if (d.baseCommit < 1n || d.baseCommit >= m.commitGeneration) throw new RangeError('a delta\'s base is an earlier commit generation ≥ 1');
    if (!Number.isInteger(d.chainLength) || d.chainLength < 1 || d.chainLength > MAX_CHAIN) throw new RangeError(`chain length must be 1..${MAX_CHAIN}`);
    if (d.removed.length > MAX_ENTRIES) throw new RangeError(`more than ${MAX_ENTRIES} removed keys`);
  }
  const parts: Buffer[] = [];
  const head = Buffer.alloc(d ? HEADER_DELTA : HEADER);
  MANIFEST_MAGIC.copy(head, 0);
  head.writeUInt8(d ? MANIFEST_VERSION_DELTA : MANIFEST_VERSION, 8);
  head.writeBigUInt64LE(m.archiveGeneration, 12);
  head.writeUInt32LE(m.repository, 20);
  head.writeBigUInt64LE(m.commitGeneration, 24);
  head.writeBigUInt64LE(m.capturedAtUs, 32);
  m.commitPoint.copy(head, 40);
  head.writeUInt32LE(m.entries.length, 552);
  if (d) {
    head.writeBigUInt64LE(d.baseCommit, 556);
    head.writeUInt32LE(d.chainLength, 564);
    head.writeUInt32LE(d.removed.length, 568);
  }
  parts.push(head);
  let previous: string | undefined;
  for (const e of m.entries) {
    if (previous !== undefined && compareBytes(previous, e.key) >= 0) throw new RangeError(`entries must be in strictly increasing key order (${e.key})`);
    previous = e.key;
    parts.push(encodeEntry(e, m.repository));
  }
  previous = undefined;
  for (const key of d?.removed ?? []) {
    if (previous !== undefined && compareBytes(previous, key) >= 0) throw new RangeError(`removed keys must be in strictly increasing order (${key})`);
    previous = key;
    const k = Buffer.from(key, 'utf8');
    if (!key.startsWith(repoPrefix(m.repository)) || k.length > MAX_TEXT) throw new RangeError(`removed key ${JSON.stringify(key)} is not one of repository ${m.repository}`);
    const len = Buffer.alloc(2);
    len.writeUInt16LE(k.length, 0);
    parts.push(len, k);
  }
  const body = Buffer.concat(parts);
  const crc = Buffer.alloc(4);
  crc.writeUInt32LE(crc32(body), 0);
  return Buffer.concat([body, crc]);
}

function encodeEntry(e: ManifestEntry, repository: number): Buffer {
  const code = KIND_CODE[e.kind];
  if (code === undefined) throw new RangeError(`unknown entry kind ${String(e.kind)}`);
  const key = Buffer.from(e.key, 'utf8');
  const path = Buffer.from(e.path, 'utf8');
  if (!e.key.startsWith(repoPrefix(repository)) || key.length > MAX_TEXT) throw new RangeError(`key ${JSON.stringify(e.key)} is not one of repository ${repository}`);
  if (!isCleanPath(e.path)) throw new RangeError(`path ${JSON.stringify(e.path)} is not a clean relative path`);
  if (e.offset < 0n || e.offset > U64_MAX || e.size < 0n || e.size > U64_MAX) throw new RangeError('offset and size must be u64');
  if (e.kind !== 'log-range' && e.offset !== 0n) throw new RangeError(`a ${e.kind} entry starts at offset 0`);
  if (e.kind === 'registry' && e.path !== REGISTRY_RECORD_PATH) throw new RangeError(`a registry entry's path is ${REGISTRY_RECORD_PATH}`);
  if (!/^[0-9a-f]{64}$/.test(e.sha256)) throw new RangeError('sha256 must be 64 lowercase hex digits');
  const out = Buffer.alloc(1 + 1 + 2 + key.length + 2 + path.length + 8 + 8 + 32);
  let o = 0;
  out.writeUInt8(code, o); o += 2; // kind, reserved
  out.writeUInt16LE(key.length, o); o += 2;
  key.copy(out, o); o += key.length;
  out.writeUInt16LE(path.length, o); o += 2;
  path.copy(out, o); o += path.length;
  out.writeBigUInt64LE(e.offset, o); o += 8;
  out.writeBigUInt64LE(e.size, o); o += 8;
  Buffer.from(e.sha256, 'hex').copy(out, o);
  return out;
}

function checkCommitPoint(record: Buffer, generation: bigint, fail: (msg: string) => Error): void {
  if (record.length !== COMMIT_RECORD_SIZE) throw fail(`the commit point must be ${COMMIT_RECORD_SIZE} bytes`);
  if (!record.subarray(0, 8).equals(COMMIT_MAGIC)) throw fail('the commit point does not begin with CAIRNCMT');
  if (record.readBigUInt64LE(12) !== generation) throw fail('the commit point\'s generation is not the manifest\'s commit generation');
}

/** Decode and check a manifest; `what` names it in errors (its key). Throws Corrupt. */
export function decodeManifest(bytes: Buffer, what: string): Manifest {
  const fail = (check: string): Corrupt => new Corrupt(`archive manifest ${what}: ${check}`);
  if (bytes.length < HEADER + 4) throw fail('truncated header');
  if (!bytes.subarray(0, 8).equals(MANIFEST_MAGIC)) throw fail('bad magic');
  const version = bytes.readUInt8(8);
  if (version !== MANIFEST_VERSION && version !== MANIFEST_VERSION_DELTA) throw fail(`unknown version ${version}`);
  if (version === MANIFEST_VERSION_DELTA && bytes.length < HEADER_DELTA + 4) throw fail('truncated header');
  if (bytes.readUIntLE(9, 3) !== 0) throw fail('reserved header bytes are not zero');
  const end = bytes.length - 4;
  if (bytes.readUInt32LE(end) !== crc32(bytes.subarray(0, end))) throw fail('checksum mismatch');
  const archiveGeneration = bytes.readBigUInt64LE(12);
  const repository = bytes.readUInt32LE(20);
  const commitGeneration = bytes.readBigUInt64LE(24);
  const capturedAtUs = bytes.readBigUInt64LE(32);
  if (archiveGeneration < 1n) throw fail('archive generation 0');
  if (commitGeneration < 1n) throw fail('commit generation 0');
  const commitPoint = Buffer.from(bytes.subarray(40, 40 + COMMIT_RECORD_SIZE));
  checkCommitPoint(commitPoint, commitGeneration, fail);
  const count = bytes.readUInt32LE(552);
  if (count > MAX_ENTRIES) throw fail(`entry count ${count} above ${MAX_ENTRIES}`);
  const prefix = repoPrefix(repository);
  const entries: ManifestEntry[] = [];
  let delta: Manifest['delta'];
  let removedCount = 0;
  if (version === MANIFEST_VERSION_DELTA) {
    const baseCommit = bytes.readBigUInt64LE(556);
    const chainLength = bytes.readUInt32LE(564);
    removedCount = bytes.readUInt32LE(568);
    if (baseCommit < 1n || baseCommit >= commitGeneration) throw fail(`base commit ${baseCommit} is not an earlier commit`);
    if (chainLength < 1 || chainLength > MAX_CHAIN) throw fail(`chain length ${chainLength} outside 1..${MAX_CHAIN}`);
    if (removedCount > MAX_ENTRIES) throw fail(`removed count ${removedCount} above ${MAX_ENTRIES}`);
    delta = { baseCommit, chainLength, removed: [] };
  }
  let o = version === MANIFEST_VERSION_DELTA ? HEADER_DELTA : HEADER;
  const need = (n: number): void => { if (o + n > end) throw fail(`entry ${entries.length} runs past the end`); };
  const text = (len: number, name: string): string => {
    need(len);
    const raw = bytes.subarray(o, o + len);
    const s = raw.toString('utf8');
    if (!Buffer.from(s, 'utf8').equals(raw)) throw fail(`entry ${entries.length}: ${name} is not UTF-8`);
    o += len;
    return s;
  };
  for (let i = 0; i < count; i++) {
    need(4);
    const kind = KIND_OF[bytes.readUInt8(o)];
    if (kind === undefined) throw fail(`entry ${i}: unknown kind ${bytes.readUInt8(o)}`);
    if (bytes.readUInt8(o + 1) !== 0) throw fail(`entry ${i}: reserved byte is not zero`);
    const keyLength = bytes.readUInt16LE(o + 2);
    o += 4;
    if (keyLength < 1 || keyLength > MAX_TEXT) throw fail(`entry ${i}: key length ${keyLength}`);
    const key = text(keyLength, 'key');
    if (!key.startsWith(prefix)) throw fail(`entry ${i}: key ${JSON.stringify(key)} is not of repository ${repository}`);
    need(2);
    const pathLength = bytes.readUInt16LE(o);
    o += 2;
    if (pathLength < 1 || pathLength > MAX_TEXT) throw fail(`entry ${i}: path length ${pathLength}`);
    const path = text(pathLength, 'path');
    if (!isCleanPath(path)) throw fail(`entry ${i}: path ${JSON.stringify(path)} is not a clean relative path`);
    need(48);
    const offset = bytes.readBigUInt64LE(o);
    const size = bytes.readBigUInt64LE(o + 8);
    const sha256 = bytes.subarray(o + 16, o + 48).toString('hex');
    o += 48;
    if (kind !== 'log-range' && offset !== 0n) throw fail(`entry ${i}: a ${kind} entry at offset ${offset}`);
    if (kind === 'registry' && path !== REGISTRY_RECORD_PATH) throw fail(`entry ${i}: a registry entry with path ${JSON.stringify(path)}`);
    const previous = entries[entries.length - 1];
    if (previous && compareBytes(previous.key, key) >= 0) throw fail(`entry ${i}: keys out of order`);
    entries.push({ kind, key, path, offset, size, sha256 });
  }
  for (let i = 0; i < removedCount; i++) {
    need(2);
    const keyLength = bytes.readUInt16LE(o);
    o += 2;
    if (keyLength < 1 || keyLength > MAX_TEXT) throw fail(`removed key ${i}: length ${keyLength}`);
    const key = text(keyLength, 'removed key');
    if (!key.startsWith(prefix)) throw fail(`removed key ${i}: ${JSON.stringify(key)} is not of repository ${repository}`);
    const previous = delta!.removed[delta!.removed.length - 1];
    if (previous !== undefined && compareBytes(previous, key) >= 0) throw fail(`removed key ${i}: keys out of order`);
    delta!.removed.push(key);
  }
  if (o !== end) throw fail(`${end - o} bytes after the last entry`);
  return { archiveGeneration, repository, commitGeneration, capturedAtUs, commitPoint, entries, ...(delta ? { delta } : {}) };
}

/**
 * The entries a delta stands for: its base's (resolved) entries less `removed`, plus its own,
 * in key order. Throws Corrupt when the delta removes a key its base does not name or adds one
 * it already names (the chain is not the one it was written against).
 */
export function applyDelta(base: ManifestEntry[], delta: Manifest, what: string): ManifestEntry[] {
  const byKey = new Map(base.map((e) => [e.key, e]));
  for (const key of delta.delta?.removed ?? []) {
    if (!byKey.delete(key)) throw new Corrupt(`archive manifest ${what}: removes ${key}, which its base does not name`);
  }
  for (const e of delta.entries) {
    if (byKey.has(e.key)) throw new Corrupt(`archive manifest ${what}: adds ${e.key}, which its base already names`);
    byKey.set(e.key, e);
  }
  return [...byKey.values()].sort((a, b) => compareBytes(a.key, b.key));
}

/**
 * The delta from `base` to `next` (both whole entry lists): what `next` adds and the keys of
 * `base` it drops, both in key order.
 */
export function diffEntries(base: ManifestEntry[], next: ManifestEntry[]): { added: ManifestEntry[]; removed: string[] } {
  const before = new Set(base.map((e) => e.key));
  const after = new Set(next.map((e) => e.key));
  return {
    added: next.filter((e) => !before.has(e.key)).sort((a, b) => compareBytes(a.key, b.key)),
    removed: base.filter((e) => !after.has(e.key)).map((e) => e.key).sort(compareBytes),
  };
}
