// Append-only logs of checksummed records (storage-layout.md §13, §14): a 12-byte header
// (8-byte magic, version 0, 3 reserved zero bytes), then records `length u32 | body | CRC-32
// of body u32`. One mutation appends one record and fdatasyncs before it is acknowledged.
// At open a torn last record (never acknowledged) is cut and reported; a bad record before the
// end is corruption.
import { closeSync, fdatasync, openSync, promises as fsp, write } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Corrupt } from '../domain/errors.js';
import { crc32 } from './binary.js';
import { writeFileDurable } from './durable.js';

export const LOG_HEADER_SIZE = 12;
const writeAsync = promisify(write);
const datasync = promisify(fdatasync);

export function logHeader(magic: string): Buffer {
  const h = Buffer.alloc(LOG_HEADER_SIZE);
  h.write(magic, 0, 'ascii');
  return h;
}

export function frameBody(body: Buffer): Buffer {
  const out = Buffer.alloc(body.length + 8);
  out.writeUInt32LE(body.length, 0);
  body.copy(out, 4);
  out.writeUInt32LE(crc32(body), 4 + body.length);
  return out;
}

/** Read every intact record body (creating the log if absent), cutting a torn tail. */
export async function readFramedLog(file: string, magic: string): Promise<{ bodies: Buffer[]; notes: string[] }> {
  const name = path.basename(file);
  const notes: string[] = [];
  let data: Buffer;
  try {
    data = await fsp.readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await writeFileDurable(file, logHeader(magic));
    return { bodies: [], notes };
  }
  if (data.length < LOG_HEADER_SIZE || !data.subarray(0, LOG_HEADER_SIZE).equals(logHeader(magic))) throw new Corrupt(`${name}: bad header`);
  const bodies: Buffer[] = [];
  let at = LOG_HEADER_SIZE;
  while (at + 4 <= data.length) {
    const length = data.readUInt32LE(at);
    if (at + 8 + length > data.length) break;
    const body = data.subarray(at + 4, at + 4 + length);
    if (data.readUInt32LE(at + 4 + length) !== crc32(body)) {
      // Only the last record may be torn; anything earlier was acknowledged and is corrupt now.
      if (at + 8 + length === data.length) break;
      throw new Corrupt(`${name}: record at byte ${at} fails its checksum`);
    }
    bodies.push(body);
    at += 8 + length;
  }
  if (at < data.length) {
    notes.push(`${name}: cut ${data.length - at} bytes of an unfinished record at byte ${at}`);
    const handle = await fsp.open(file, 'r+');
    await handle.truncate(at);
    await handle.sync();
    await handle.close();
  }
  return { bodies, notes };
}

/** Replace a log with exactly these record bodies (write procedure §3). */
export async function rewriteFramedLog(file: string, magic: string, bodies: Iterable<Buffer>): Promise<void> {
  const parts = [logHeader(magic)];
  for (const body of bodies) parts.push(frameBody(body));
  await writeFileDurable(file, Buffer.concat(parts));
}

export class FramedLogWriter {
  private fd: number;

  constructor(readonly file: string) {
    this.fd = openSync(file, 'a');
  }

  /** Append record bodies as one write; durable when the promise resolves. */
  async append(bodies: Buffer[]): Promise<void> {
    const bytes = Buffer.concat(bodies.map(frameBody));
    let done = 0;
    while (done < bytes.length) done += (await writeAsync(this.fd, bytes, done, bytes.length - done, null)).bytesWritten;
    await datasync(this.fd);
  }

  close(): void {
    closeSync(this.fd);
  }
}
