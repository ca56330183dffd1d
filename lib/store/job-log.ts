// jobs.log: the worker-job queue of one authority (storage-layout.md §13). Every transition
// appends the job's whole new record (fsync before acknowledging); the last record of an index
// wins. A torn tail (a record whose write never finished, so was never acknowledged) is cut at
// open and reported; a bad record before the tail is corruption. The log is compacted at open
// when most of it is superseded.
import { closeSync, fdatasync, fstatSync, openSync, promises as fsp, write } from 'node:fs';
import { promisify } from 'node:util';
import { Corrupt } from '../domain/errors.js';
import type { JobDetail, JobRecord, JobState } from '../domain/jobs.js';
import { crc32, readU64, writeU64 } from './binary.js';
import { writeFileDurable } from './durable.js';

export const JOB_LOG_MAGIC = 'CAIRNJOB';
export const JOB_LOG_HEADER = 12;
/** binary-worker-job-key.v0: repository_index u32 LE, worker_job_index u32 LE. */
export const JOB_KEY_SIZE = 8;
export const JOB_FIXED_SIZE = 100;

export function encodeJobKey(repositoryIndex: number, workerJobIndex: number): Buffer {
  const key = Buffer.alloc(JOB_KEY_SIZE);
  key.writeUInt32LE(repositoryIndex, 0);
  key.writeUInt32LE(workerJobIndex, 4);
  return key;
}

export function decodeJobKey(key: Buffer): { repository_index: number; worker_job_index: number } {
  if (key.length !== JOB_KEY_SIZE) throw new Corrupt(`worker job key must be ${JOB_KEY_SIZE} bytes`);
  return { repository_index: key.readUInt32LE(0), worker_job_index: key.readUInt32LE(4) };
}

export function logHeader(): Buffer {
  const h = Buffer.alloc(JOB_LOG_HEADER);
  h.write(JOB_LOG_MAGIC, 0, 'ascii');
  return h;
}

/** One framed record: body_length u32, body (fixed 100 bytes + JSON detail), CRC-32 of body. */
export function encodeJobRecord(job: JobRecord): Buffer {
  const detail = Buffer.from(JSON.stringify(job.detail), 'utf8');
  const body = Buffer.alloc(JOB_FIXED_SIZE + detail.length);
  encodeJobKey(job.repository_index, job.worker_job_index).copy(body, 0);
  body.writeUInt8(job.kind, 8);
  body.writeUInt8(job.state, 9);
  body.writeUInt8(job.retry_status, 10);
  body.writeUInt8(job.error_kind, 11);
  body.writeUInt16LE(job.attempt_count, 12);
  body.writeUInt16LE(job.max_attempts, 14);
  body.writeUInt8(job.tombstoned ? 1 : 0, 16);
  body.writeUInt8(job.lease_token_hash ? 1 : 0, 17);
  // 18..19 reserved
  writeU64(body, job.created_at_s, 20);
  writeU64(body, job.updated_at_s, 28);
  writeU64(body, job.available_at_s, 36);
  writeU64(body, job.locked_at_s, 44);
  writeU64(body, job.lease_expires_at_s, 52);
  writeU64(body, job.completed_at_s, 60);
  if (job.lease_token_hash) body.write(job.lease_token_hash, 68, 32, 'hex');
  detail.copy(body, JOB_FIXED_SIZE);
  const out = Buffer.alloc(4 + body.length + 4);
  out.writeUInt32LE(body.length, 0);
  body.copy(out, 4);
  out.writeUInt32LE(crc32(body), 4 + body.length);
  return out;
}

export function decodeJobBody(body: Buffer): JobRecord {
  if (body.length < JOB_FIXED_SIZE) throw new Corrupt('job record shorter than its fixed part');
  const state = body.readUInt8(9);
  if (state < 1 || state > 4) throw new Corrupt(`job record has state ${state}`);
  let detail: JobDetail;
  try {
    detail = JSON.parse(body.toString('utf8', JOB_FIXED_SIZE)) as JobDetail;
  } catch {
    throw new Corrupt('job record detail is not JSON');
  }
  const key = decodeJobKey(body.subarray(0, 8));
  return {
    ...key,
    kind: body.readUInt8(8),
    state: state as JobState,
    retry_status: body.readUInt8(10),
    error_kind: body.readUInt8(11),
    attempt_count: body.readUInt16LE(12),
    max_attempts: body.readUInt16LE(14),
    tombstoned: body.readUInt8(16) === 1,
    created_at_s: readU64(body, 20),
    updated_at_s: readU64(body, 28),
    available_at_s: readU64(body, 36),
    locked_at_s: readU64(body, 44),
    lease_expires_at_s: readU64(body, 52),
    completed_at_s: readU64(body, 60),
    lease_token_hash: body.readUInt8(17) ? body.toString('hex', 68, 100) : '',
    detail,
  };
}

export interface LoadedJobs {
  jobs: Map<number, JobRecord>;
  records: number;
  notes: string[];
}

/** Read the whole log; cut a torn tail; the latest record of each index wins. */
export async function loadJobLog(file: string): Promise<LoadedJobs> {
  const notes: string[] = [];
  let data: Buffer;
  try {
    data = await fsp.readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await writeFileDurable(file, logHeader());
    return { jobs: new Map(), records: 0, notes };
  }
  if (data.length < JOB_LOG_HEADER || !data.subarray(0, JOB_LOG_HEADER).equals(logHeader())) throw new Corrupt('jobs.log has a bad header');
  const jobs = new Map<number, JobRecord>();
  let at = JOB_LOG_HEADER;
  let records = 0;
  while (at < data.length) {
    const torn = () => at + 4 > data.length || at + 8 + data.readUInt32LE(at) > data.length;
    if (torn()) break;
    const length = data.readUInt32LE(at);
    const body = data.subarray(at + 4, at + 4 + length);
    const crcOk = data.readUInt32LE(at + 4 + length) === crc32(body);
    if (!crcOk) {
      // Only the last record may be torn; anything earlier was acknowledged and is corrupt now.
      if (at + 8 + length === data.length) break;
      throw new Corrupt(`jobs.log: record at byte ${at} fails its checksum`);
    }
    const job = decodeJobBody(body);
    jobs.set(job.worker_job_index, job);
    records++;
    at += 8 + length;
  }
  if (at < data.length) {
    notes.push(`jobs.log: cut ${data.length - at} bytes of an unfinished record at byte ${at}`);
    const handle = await fsp.open(file, 'r+');
    await handle.truncate(at);
    await handle.sync();
    await handle.close();
  }
  return { jobs, records, notes };
}

/** Rewrite the log with one record per job (atomic replace). */
export async function compactJobLog(file: string, jobs: Iterable<JobRecord>): Promise<void> {
  const parts = [logHeader()];
  for (const job of jobs) parts.push(encodeJobRecord(job));
  await writeFileDurable(file, Buffer.concat(parts));
}

const writeAsync = promisify(write);
const datasync = promisify(fdatasync);

async function writeAll(fd: number, bytes: Buffer): Promise<void> {
  let done = 0;
  while (done < bytes.length) done += (await writeAsync(fd, bytes, done, bytes.length - done, null)).bytesWritten;
}

/** Appends records and makes them durable before returning. */
export class JobLogWriter {
  private fd: number;

  constructor(readonly file: string) {
    this.fd = openSync(file, 'a');
  }

  append(jobs: JobRecord[]): Promise<void> {
    const bytes = Buffer.concat(jobs.map(encodeJobRecord));
    return writeAll(this.fd, bytes).then(() => datasync(this.fd));
  }

  size(): number {
    return fstatSync(this.fd).size;
  }

  close(): void {
    closeSync(this.fd);
  }

  /** Re-open after the file was replaced by compaction. */
  reopen(): void {
    closeSync(this.fd);
    this.fd = openSync(this.file, 'a');
  }
}

