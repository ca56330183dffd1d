// An append-only log of JSON records (storage-layout.md §14), for entities whose mutation is
// "append one batch": each mutation is one framed record (lib/store/framed-log.ts) whose body is
// UTF-8 JSON, so a batch is all-or-nothing.
import path from 'node:path';
import { Corrupt } from '../domain/errors.js';
import { FramedLogWriter, readFramedLog } from './framed-log.js';

export class RecordLog<T> {
  private constructor(private readonly writer: FramedLogWriter) {}

  /** Open (creating if absent), returning every intact record in order. */
  static async open<T>(file: string, magic: string): Promise<{ log: RecordLog<T>; records: T[]; notes: string[] }> {
    const { bodies, notes } = await readFramedLog(file, magic);
    const records = bodies.map((body, i) => {
      try {
        return JSON.parse(body.toString('utf8')) as T;
      } catch {
        throw new Corrupt(`${path.basename(file)}: record ${i} is not JSON`);
      }
    });
    return { log: new RecordLog<T>(new FramedLogWriter(file)), records, notes };
  }

  /** Append one record; durable when the promise resolves. */
  append(record: T): Promise<void> {
    return this.writer.append([Buffer.from(JSON.stringify(record), 'utf8')]);
  }

  close(): void {
    this.writer.close();
  }
}
