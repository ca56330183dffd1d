// Append-only logs of checksummed records (storage-layout.md §11, §13, §14, §17): a 12-byte
// header (8-byte magic, version 0, 3 reserved zero bytes), then records
// `length u32 | body | CRC-32 of body u32`.
//
// Every log is covered by the authority's commit point (commit.bin), which names its committed
// length. So a reader never guesses where acknowledged data ends: every record inside the
// committed range must pass its checks (a failure is corruption, reported with the file and
// offset, and nothing is cut); only bytes beyond the committed length are an unfinished tail.
// Appends are positional writes at the committed length, so a failed append can never leave
// garbage in front of the next acknowledged record.
import { closeSync, constants as fsConstants, fdatasyncSync, fstatSync, fsyncSync, ftruncate, ftruncateSync, openSync, readSync, write } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Corrupt } from '../domain/errors.js';
import { crc32 } from './binary.js';
import { faults } from './crash-point.js';

export const LOG_HEADER_SIZE = 12;
export const FRAME_OVERHEAD = 8;
const writeAsync = promisify(write);
const truncateAsync = promisify(ftruncate);

export function logHeader(magic: string): Buffer {
  const h = Buffer.alloc(LOG_HEADER_SIZE);
  h.write(magic, 0, 'ascii');
  return h;
}

function fsyncDirSync(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function frameBody(body: Buffer): Buffer {
  const out = Buffer.alloc(body.length + FRAME_OVERHEAD);
  out.writeUInt32LE(body.length, 0);
  body.copy(out, 4);
  out.writeUInt32LE(crc32(body), 4 + body.length);
  return out;
}

export interface LogRecord {
  /** Byte offset of the record's length field. */
  offset: number;
  body: Buffer;
}

/**
 * Every record in [LOG_HEADER_SIZE, end) of an open log, read sequentially in chunks. Any
 * record that does not pass its checks, or framing that does not end exactly at `end`, is
 * corruption naming the file and the offset.
 */
export function* scanRecords(fd: number, end: number, name: string, start = LOG_HEADER_SIZE, chunkSize = 4 * 1024 * 1024): Generator<LogRecord> {
  let buf = Buffer.alloc(0);
  let bufStart = start; // file offset of buf[0]
  let at = start;
  const ensure = (need: number): void => {
    // Make buf cover [at, at + need).
    if (at - bufStart + need <= buf.length) return;
    const keep = buf.subarray(at - bufStart);
    const want = Math.max(need, chunkSize);
    const more = Buffer.alloc(Math.min(want, end - at) - keep.length);
    const n = more.length ? readSync(fd, more, 0, more.length, at + keep.length) : 0;
    if (n !== more.length) throw new Corrupt(`${name}: file ends at byte ${at + keep.length + n}, inside the committed range (${end})`);
    buf = Buffer.concat([keep, more]);
    bufStart = at;
  };
  while (at < end) {
    if (end - at < FRAME_OVERHEAD) throw new Corrupt(`${name}: record at byte ${at}: ${end - at} bytes left in the committed range, shorter than a record frame`);
    ensure(4);
    const length = buf.readUInt32LE(at - bufStart);
    if (at + FRAME_OVERHEAD + length > end) throw new Corrupt(`${name}: record at byte ${at}: its length field (${length}) runs past the committed length ${end}`);
    ensure(FRAME_OVERHEAD + length);
    const rel = at - bufStart;
    const body = buf.subarray(rel + 4, rel + 4 + length);
    if (buf.readUInt32LE(rel + 4 + length) !== crc32(body)) throw new Corrupt(`${name}: record at byte ${at} fails its checksum`);
    yield { offset: at, body: Buffer.from(body) };
    at += FRAME_OVERHEAD + length;
  }
}

/** Check a log's header (magic, version 0, reserved zero). */
export function checkLogHeader(fd: number, magic: string, name: string): void {
  const head = Buffer.alloc(LOG_HEADER_SIZE);
  const n = readSync(fd, head, 0, LOG_HEADER_SIZE, 0);
  if (n !== LOG_HEADER_SIZE || !head.equals(logHeader(magic))) throw new Corrupt(`${name}: bad header (expected ${magic}, version 0)`);
}

/**
 * Format-v0 recovery, used once by the upgrade of a data directory written before the commit
 * point covered this log: the length of the intact records, cutting an unfinished last record
 * (the only rule v0 had). Returns the valid length and a note when bytes were cut.
 */
export function legacyValidLength(fd: number, magic: string, name: string): { length: number; note: string | null } {
  const size = fstatSync(fd).size;
  if (size === 0) return { length: 0, note: null };
  checkLogHeader(fd, magic, name);
  let at = LOG_HEADER_SIZE;
  const lenBuf = Buffer.alloc(4);
  while (at + FRAME_OVERHEAD <= size) {
    readSync(fd, lenBuf, 0, 4, at);
    const length = lenBuf.readUInt32LE(0);
    if (at + FRAME_OVERHEAD + length > size) {
      // An unfinished append is the prefix of one record: no intact record can start after it.
      // If one does, this length field was damaged inside acknowledged data.
      const later = intactRecordAfter(fd, at + 1, size);
      if (later !== null) throw new Corrupt(`${name}: record at byte ${at}: its length field runs past the end of the file, but an intact record starts at byte ${later}`);
      break;
    }
    const rec = Buffer.alloc(length + 4);
    readSync(fd, rec, 0, rec.length, at + 4);
    if (rec.readUInt32LE(length) !== crc32(rec.subarray(0, length))) {
      if (at + FRAME_OVERHEAD + length === size) break;
      throw new Corrupt(`${name}: record at byte ${at} fails its checksum`);
    }
    at += FRAME_OVERHEAD + length;
  }
  return { length: at, note: at < size ? `${name}: upgrade cut ${size - at} bytes of an unfinished v0 record at byte ${at}` : null };
}

/** The offset of the first intact record starting in [from, size), or null (bounded scan). */
function intactRecordAfter(fd: number, from: number, size: number): number | null {
  const limit = 64 * 1024 * 1024;
  if (size - from > limit) return from; // far more than one unfinished record: not a torn tail
  const tail = Buffer.alloc(size - from);
  readSync(fd, tail, 0, tail.length, from);
  for (let p = 0; p + FRAME_OVERHEAD <= tail.length; p++) {
    const length = tail.readUInt32LE(p);
    // Every record kind has a non-empty body; an empty one would match any run of zero bytes.
    if (length === 0 || p + FRAME_OVERHEAD + length > tail.length) continue;
    if (tail.readUInt32LE(p + 4 + length) === crc32(tail.subarray(p + 4, p + 4 + length))) return from + p;
  }
  return null;
}

/**
 * One open log file of an authority. `length` is its committed length; appends go there by
 * positional write, and only the commit point makes them count.
 */
export class LogFile {
  readonly name: string;

  private constructor(readonly file: string, readonly magic: string, private readonly fd: number, public length: number) {
    this.name = path.basename(file);
  }

  /**
   * Open a log whose committed length is `committed` (0: no header yet). Bytes beyond it are
   * an unfinished tail, cut here and reported in `notes`; a file shorter than it is corruption.
   */
  static open(file: string, magic: string, committed: number, notes: string[]): LogFile {
    let created = false;
    try {
      closeSync(openSync(file, 'wx', 0o644));
      created = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    // A new log's directory entry is made durable before any commit can name the log.
    if (created) fsyncDirSync(path.dirname(file));
    // O_DSYNC: each write returns only once its data is durable, so an append is one system
    // call (one trip through libuv's thread pool) instead of a write and an fdatasync.
    const rw = openSync(file, fsConstants.O_RDWR | fsConstants.O_DSYNC);
    try {
      const name = path.basename(file);
      const size = fstatSync(rw).size;
      if (size < committed) throw new Corrupt(`${name} is ${size} bytes, the commit point commits ${committed}`);
      if (committed > 0) checkLogHeader(rw, magic, name);
      if (size > committed) {
        notes.push(`${name}: ${size - committed} uncommitted bytes beyond the committed length ${committed} were cut`);
        // Synchronous on purpose: open runs before the authority serves.
        ftruncateSync(rw, committed);
        fdatasyncSync(rw);
      }
      return new LogFile(file, magic, rw, committed);
    } catch (err) {
      closeSync(rw);
      throw err;
    }
  }

  /** The bytes to append for `bodies` (with the header first when the log has none yet). */
  frame(bodies: Buffer[], from: number): Buffer {
    const parts = bodies.map(frameBody);
    if (from === 0) parts.unshift(logHeader(this.magic));
    return Buffer.concat(parts);
  }

  /**
   * Write `bytes` at `from` and make them durable; returns the new end. On failure the file is
   * truncated back to `from` before the error is returned, so nothing half-written stays.
   */
  async appendAt(from: number, bytes: Buffer): Promise<number> {
    try {
      const fault = faults.failAppend?.(this.name);
      if (fault) {
        await writeAsync(this.fd, bytes, 0, bytes.length >> 1, from);
        // As the system says it (a write on a descriptor names no file).
        if (fault === 'ENOSPC') throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        throw Object.assign(new Error(`injected EIO appending to ${this.name}`), { code: 'EIO' });
      }
      let done = 0;
      while (done < bytes.length) done += (await writeAsync(this.fd, bytes, done, bytes.length - done, from + done)).bytesWritten;
      return from + bytes.length;
    } catch (err) {
      await truncateAsync(this.fd, from).catch(() => {});
      // A full disk names no file; the operator's log line should (the caller sees only "disk full").
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOSPC' || code === 'EDQUOT') throw Object.assign(new Error(`${(err as Error).message} (appending to ${this.file})`), { code });
      throw err;
    }
  }

  /** Cut everything beyond `to` (a batch that failed after this log's append). */
  async truncate(to: number): Promise<void> {
    await truncateAsync(this.fd, to);
  }

  /** Every committed record. */
  records(): Generator<LogRecord> {
    if (this.length === 0) return (function* () {})();
    return scanRecords(this.fd, this.length, this.name);
  }

  /** Committed records from the one whose frame starts at `offset` (a record boundary). */
  recordsFrom(offset: number, chunkSize?: number): Generator<LogRecord> {
    if (this.length === 0) return (function* () {})();
    return scanRecords(this.fd, this.length, this.name, Math.max(offset, LOG_HEADER_SIZE), chunkSize);
  }

  /** Read `length` bytes at `offset` (inside the committed range). */
  read(offset: number, length: number): Buffer {
    const out = Buffer.alloc(length);
    const n = readSync(this.fd, out, 0, length, offset);
    if (n !== length) throw new Corrupt(`${this.name}: short read at byte ${offset}`);
    return out;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** Framed bytes of a whole log holding exactly `bodies` (header included). */
export function encodeLog(magic: string, bodies: Iterable<Buffer>): Buffer {
  const parts = [logHeader(magic)];
  for (const body of bodies) parts.push(frameBody(body));
  return Buffer.concat(parts);
}
