// An append-only log of JSON records (storage-layout.md §14), for entities whose records are
// small and whose mutation is "append one batch": header (8-byte magic, version 0, 3 reserved),
// then records `length u32 | UTF-8 JSON | CRC-32 u32`. One mutation = one record, so a batch is
// all-or-nothing. A torn last record (never acknowledged) is cut at open and reported; a bad
// record before the end is corruption.
import { closeSync, fdatasync, openSync, promises as fsp, write } from 'node:fs';
import { promisify } from 'node:util';
import { Corrupt } from '../domain/errors.js';
import { crc32 } from './binary.js';
import { writeFileDurable } from './durable.js';

const HEADER = 12;
const writeAsync = promisify(write);
const datasync = promisify(fdatasync);

function header(magic: string): Buffer {
  const h = Buffer.alloc(HEADER);
  h.write(magic, 0, 'ascii');
  return h;
}

export function frameRecord(value: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  const out = Buffer.alloc(body.length + 8);
  out.writeUInt32LE(body.length, 0);
  body.copy(out, 4);
  out.writeUInt32LE(crc32(body), 4 + body.length);
  return out;
}

export class RecordLog<T> {
  private constructor(readonly file: string, private fd: number) {}

  /** Open (creating if absent), returning every intact record in order. */
  static async open<T>(file: string, magic: string): Promise<{ log: RecordLog<T>; records: T[]; notes: string[] }> {
    const notes: string[] = [];
    let data: Buffer;
    try {
      data = await fsp.readFile(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await writeFileDurable(file, header(magic));
      data = header(magic);
    }
    if (data.length < HEADER || !data.subarray(0, HEADER).equals(header(magic))) throw new Corrupt(`${file.split('/').pop()}: bad header`);
    const records: T[] = [];
    let at = HEADER;
    while (at < data.length) {
      if (at + 4 > data.length) break;
      const length = data.readUInt32LE(at);
      if (at + 8 + length > data.length) break;
      const body = data.subarray(at + 4, at + 4 + length);
      if (data.readUInt32LE(at + 4 + length) !== crc32(body)) {
        if (at + 8 + length === data.length) break;
        throw new Corrupt(`${file.split('/').pop()}: record at byte ${at} fails its checksum`);
      }
      try {
        records.push(JSON.parse(body.toString('utf8')) as T);
      } catch {
        throw new Corrupt(`${file.split('/').pop()}: record at byte ${at} is not JSON`);
      }
      at += 8 + length;
    }
    if (at < data.length) {
      notes.push(`${file.split('/').pop()}: cut ${data.length - at} bytes of an unfinished record`);
      const handle = await fsp.open(file, 'r+');
      await handle.truncate(at);
      await handle.sync();
      await handle.close();
    }
    return { log: new RecordLog<T>(file, openSync(file, 'a')), records, notes };
  }

  /** Append one record; durable when the promise resolves. */
  async append(record: T): Promise<void> {
    const bytes = frameRecord(record);
    let done = 0;
    while (done < bytes.length) done += (await writeAsync(this.fd, bytes, done, bytes.length - done, null)).bytesWritten;
    await datasync(this.fd);
  }

  close(): void {
    closeSync(this.fd);
  }
}
