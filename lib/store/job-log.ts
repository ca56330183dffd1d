// jobs.log records: the worker-job queue of one authority (storage-layout.md §13). Every
// transition appends the job's whole new record; the last record of an index wins. The log is
// one of the logs the authority's commit point covers (lib/store/commit-queue.ts appends it).
import { Corrupt } from '../domain/errors.js';
import type { JobDetail, JobRecord, JobState } from '../domain/jobs.js';
import { readU64, writeU64 } from './binary.js';
import { MAGIC } from './layout.js';

export const JOB_LOG_MAGIC = MAGIC.jobsLog;
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

/** A record body: the fixed 100 bytes, then the JSON detail (framed by lib/store/framed-log.ts). */
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
  return body;
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

/**
 * Replay jobs.log records (committed, in order; the latest record of each job wins) with the
 * rules every reader applies: each record decodes, belongs to `repositoryIndex`, and a job's
 * first record comes after the first record of every lower index (new jobs take indexes above
 * every earlier one; gaps are allowed: an id floor leaves them, storage-layout.md §20.8). The
 * returned map holds the jobs in ascending index order. The job queue and fsck share it, so
 * fsck passes exactly the logs the queue opens.
 */
export function replayJobRecords(records: Iterable<{ offset: number; body: Buffer }>, repositoryIndex: number): { jobs: Map<number, JobRecord>; count: number } {
  const jobs = new Map<number, JobRecord>();
  let count = 0;
  let highest = -1;
  for (const rec of records) {
    count++;
    let job: JobRecord;
    try {
      job = decodeJobBody(rec.body);
    } catch (err) {
      throw new Corrupt(`jobs.log: record at byte ${rec.offset}: ${(err as Error).message}`);
    }
    if (job.repository_index !== repositoryIndex) throw new Corrupt(`jobs.log: record at byte ${rec.offset} belongs to repository ${job.repository_index}`);
    if (!jobs.has(job.worker_job_index)) {
      if (job.worker_job_index <= highest) throw new Corrupt(`jobs.log: record at byte ${rec.offset} adds job ${job.worker_job_index} after job ${highest}`);
      highest = job.worker_job_index;
    }
    jobs.set(job.worker_job_index, job);
  }
  return { jobs, count };
}
