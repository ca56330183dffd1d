// The content model (storage-layout.md §6): blobs, trees and snapshot records, their canonical
// encodings and ids. Pure functions: no I/O. Every id a client sends is recomputed from bytes.
import { isUtf8 } from 'node:buffer';
import { hash } from 'node:crypto';
import { Invalid } from './errors.js';

export const ID_BYTES = 32;
const ID_RE = /^[0-9a-f]{64}$/;

export function isContentId(value: unknown): value is string {
  return typeof value === 'string' && ID_RE.test(value);
}

export function requireContentId(value: string, what: string): string {
  if (!isContentId(value)) throw new Invalid(`${what} must be 64 lowercase hex characters (a sha256 id)`);
  return value;
}

export function sha256Hex(data: Uint8Array): string {
  // crypto.hash: one call, no Hash object (for thousands of small objects the object costs more than the hashing).
  return hash('sha256', data, 'hex');
}

/** A blob's id is the sha256 of its bytes: its canonical encoding is the bytes themselves. */
export function blobId(bytes: Uint8Array): string {
  return sha256Hex(bytes);
}

// ---------------------------------------------------------------- trees

export const ENTRY_FILE = 1;
export const ENTRY_EXECUTABLE = 2;
export const ENTRY_SYMLINK = 3;
export const ENTRY_DIRECTORY = 4;
export type EntryKind = 'file' | 'executable' | 'symlink' | 'directory';
const KIND_CODES: Record<EntryKind, number> = { file: ENTRY_FILE, executable: ENTRY_EXECUTABLE, symlink: ENTRY_SYMLINK, directory: ENTRY_DIRECTORY };
const KIND_NAMES: Record<number, EntryKind> = { 1: 'file', 2: 'executable', 3: 'symlink', 4: 'directory' };

export interface TreeEntry {
  name: string;
  kind: EntryKind;
  /** Blob id for file/executable/symlink (a symlink's blob is its target), tree id for directory. */
  id: string;
}

export const TREE_MAGIC = 'CTRE';
const MAX_NAME_BYTES = 1024;

export function validateEntryName(name: string): void {
  if (name === '' || name === '.' || name === '..') throw new Invalid(`tree entry name "${name}" is not allowed`);
  if (name.includes('/') || name.includes('\u0000')) throw new Invalid('tree entry names must not contain "/" or NUL');
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) throw new Invalid('tree entry name longer than 1024 bytes');
}

function compareNames(a: Buffer, b: Buffer): number {
  return Buffer.compare(a, b);
}

/**
 * Canonical tree encoding: "CTRE", version u8 0, reserved u8×3, entry_count u32, then per entry
 * (sorted by the UTF-8 bytes of the name, names unique): kind u8, name_length u16, name, id 32 bytes.
 */
export function encodeTree(entries: readonly TreeEntry[]): Buffer {
  const named = entries.map((e) => {
    validateEntryName(e.name);
    requireContentId(e.id, 'tree entry id');
    if (!(e.kind in KIND_CODES)) throw new Invalid(`unknown tree entry kind ${e.kind}`);
    return { ...e, nameBytes: Buffer.from(e.name, 'utf8') };
  });
  named.sort((a, b) => compareNames(a.nameBytes, b.nameBytes));
  for (let i = 1; i < named.length; i++) {
    if (named[i].nameBytes.equals(named[i - 1].nameBytes)) throw new Invalid(`duplicate tree entry name "${named[i].name}"`);
  }
  const size = 12 + named.reduce((n, e) => n + 1 + 2 + e.nameBytes.length + ID_BYTES, 0);
  const out = Buffer.alloc(size);
  out.write(TREE_MAGIC, 0, 'ascii');
  out.writeUInt32LE(named.length, 8);
  let at = 12;
  for (const e of named) {
    out.writeUInt8(KIND_CODES[e.kind], at);
    out.writeUInt16LE(e.nameBytes.length, at + 1);
    e.nameBytes.copy(out, at + 3);
    at += 3 + e.nameBytes.length;
    Buffer.from(e.id, 'hex').copy(out, at);
    at += ID_BYTES;
  }
  return out;
}

/**
 * Decode a canonical tree, checking that `bytes` is exactly its encoding; with `keep` false,
 * only check it (nothing is materialized). Trees are decoded for every upload, commit, manifest
 * and pull, thousands of entries at a time: ASCII names are decoded as latin1 (the same for
 * them), anything else must be valid UTF-8 (one native call), and names are compared with the
 * previous one in JS, with no Buffer made per entry.
 */
export function decodeTree(bytes: Buffer, keep = true): TreeEntry[] {
  const bad = (why: string) => new Invalid(`not a canonical tree: ${why}`);
  if (bytes.length < 12 || bytes.toString('ascii', 0, 4) !== TREE_MAGIC) throw bad('bad magic');
  if (bytes.readUInt8(4) !== 0) throw bad(`version ${bytes.readUInt8(4)}`);
  if (bytes.readUIntLE(5, 3) !== 0) throw bad('reserved bytes are not zero');
  const count = bytes.readUInt32LE(8);
  const entries: TreeEntry[] = [];
  let at = 12;
  let previousStart = -1;
  let previousEnd = -1;
  for (let i = 0; i < count; i++) {
    if (at + 3 > bytes.length) throw bad('truncated entry');
    const kind = KIND_NAMES[bytes[at]];
    if (!kind) throw bad(`entry ${i} has unknown kind ${bytes[at]}`);
    const nameLength = bytes[at + 1] | (bytes[at + 2] << 8);
    const start = at + 3;
    const end = start + nameLength;
    if (end + ID_BYTES > bytes.length) throw bad('truncated entry');
    let ascii = true;
    for (let j = start; j < end && ascii; j++) ascii = bytes[j] < 0x80;
    if (!ascii && !isUtf8(bytes.subarray(start, end))) throw bad(`entry ${i} name is not valid UTF-8`);
    const name = ascii ? bytes.toString('latin1', start, end) : bytes.toString('utf8', start, end);
    validateEntryName(name);
    if (previousStart >= 0 && compareRanges(bytes, previousStart, previousEnd, start, end) >= 0) throw bad('entries are not sorted and unique');
    previousStart = start;
    previousEnd = end;
    at = end;
    if (keep) entries.push({ name, kind, id: bytes.toString('hex', at, at + ID_BYTES) });
    at += ID_BYTES;
  }
  if (at !== bytes.length) throw bad('trailing bytes');
  return entries;
}

/** Byte order of bytes[aStart, aEnd) against bytes[bStart, bEnd) (Buffer.compare's order). */
function compareRanges(bytes: Buffer, aStart: number, aEnd: number, bStart: number, bEnd: number): number {
  const n = Math.min(aEnd - aStart, bEnd - bStart);
  for (let k = 0; k < n; k++) {
    const d = bytes[aStart + k] - bytes[bStart + k];
    if (d !== 0) return d;
  }
  return (aEnd - aStart) - (bEnd - bStart);
}

export function treeId(entries: readonly TreeEntry[]): string {
  return sha256Hex(encodeTree(entries));
}

// ---------------------------------------------------------------- snapshots

export interface SnapshotRecord {
  snapshot_id: string;
  root_tree_id: string;
  parent_snapshot_ids: string[];
  created_at_s: number;
  message: string | null;
}

export const SNAPSHOT_MAGIC = 'CSNP';
export const MAX_PARENTS = 64;
export const MAX_MESSAGE_BYTES = 64 * 1024;

/**
 * Canonical snapshot encoding: "CSNP", version u8 0, has_message u8, parent_count u16,
 * root tree id 32, parents 32 each (in the given order, unique), created_at_s u64,
 * message_length u32, message UTF-8 (empty when has_message is 0).
 */
export function encodeSnapshot(s: Omit<SnapshotRecord, 'snapshot_id'>): Buffer {
  requireContentId(s.root_tree_id, 'root_tree_id');
  if (s.parent_snapshot_ids.length > MAX_PARENTS) throw new Invalid(`a snapshot has at most ${MAX_PARENTS} parents`);
  const seen = new Set<string>();
  for (const p of s.parent_snapshot_ids) {
    requireContentId(p, 'parent snapshot id');
    if (seen.has(p)) throw new Invalid('parent snapshot ids must be unique');
    seen.add(p);
  }
  if (!Number.isSafeInteger(s.created_at_s) || s.created_at_s < 0) throw new Invalid('created_at_s must be unsigned Unix seconds');
  const message = s.message === null ? Buffer.alloc(0) : Buffer.from(s.message, 'utf8');
  if (message.length > MAX_MESSAGE_BYTES) throw new Invalid('snapshot message longer than 64 KiB');
  const out = Buffer.alloc(8 + 32 + 32 * s.parent_snapshot_ids.length + 8 + 4 + message.length);
  out.write(SNAPSHOT_MAGIC, 0, 'ascii');
  out.writeUInt8(0, 4);
  out.writeUInt8(s.message === null ? 0 : 1, 5);
  out.writeUInt16LE(s.parent_snapshot_ids.length, 6);
  Buffer.from(s.root_tree_id, 'hex').copy(out, 8);
  let at = 40;
  for (const p of s.parent_snapshot_ids) {
    Buffer.from(p, 'hex').copy(out, at);
    at += 32;
  }
  out.writeBigUInt64LE(BigInt(s.created_at_s), at);
  out.writeUInt32LE(message.length, at + 8);
  message.copy(out, at + 12);
  return out;
}

export function decodeSnapshot(bytes: Buffer): SnapshotRecord {
  const bad = (why: string) => new Invalid(`not a canonical snapshot record: ${why}`);
  if (bytes.length < 52 || bytes.toString('ascii', 0, 4) !== SNAPSHOT_MAGIC) throw bad('bad magic');
  if (bytes.readUInt8(4) !== 0) throw bad('version');
  const hasMessage = bytes.readUInt8(5);
  if (hasMessage > 1) throw bad('has_message');
  const parents = bytes.readUInt16LE(6);
  const fixed = 40 + 32 * parents + 12;
  if (bytes.length < fixed) throw bad('truncated');
  const parent_snapshot_ids: string[] = [];
  for (let i = 0; i < parents; i++) parent_snapshot_ids.push(bytes.toString('hex', 40 + 32 * i, 72 + 32 * i));
  const at = 40 + 32 * parents;
  const created = bytes.readBigUInt64LE(at);
  const messageLength = bytes.readUInt32LE(at + 8);
  if (bytes.length !== fixed + messageLength) throw bad('length');
  if (!hasMessage && messageLength !== 0) throw bad('message without has_message');
  const record = {
    root_tree_id: bytes.toString('hex', 8, 40),
    parent_snapshot_ids,
    created_at_s: Number(created),
    message: hasMessage ? bytes.toString('utf8', at + 12) : null,
  };
  const canonical = encodeSnapshot(record);
  if (!canonical.equals(bytes)) throw bad('not canonical');
  return { snapshot_id: sha256Hex(bytes), ...record };
}

export function snapshotId(s: Omit<SnapshotRecord, 'snapshot_id'>): string {
  return sha256Hex(encodeSnapshot(s));
}
