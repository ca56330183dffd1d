// The worker-job queue of one authority. All transitions run under the queue's own mutex (so a
// long content commit never delays a claim) and are appended durably to jobs.log before they
// are acknowledged. Expired leases are applied on every claim and read, by a timer, and at open.
import path from 'node:path';
import { Mutex } from 'async-mutex';
import { Conflict, Invalid, NotFound } from '../domain/errors.js';
import { JOB_KIND_PATCHSET_CI, JOB_KIND_REPO_CI, jobKind } from '../domain/job-kinds.js';
import {
  ERROR_NONE,
  ERROR_RUNNER_FATAL,
  ERROR_RUNNER_RETRYABLE,
  ERROR_KIND_NAMES,
  RETRY_NAMES,
  RETRY_NONE,
  RUNTIME_CONTRACT,
  STATE_NAMES,
  STATE_QUEUED,
  STATE_RUNNING,
  checkLease,
  claim,
  compactEvidence,
  complete,
  expireIfDue,
  fail,
  heartbeat,
  isClaimable,
  newLeaseToken,
  patchsetResult,
  validateErrorText,
  type JobPolicy,
  type JobRecord,
  type RunnerResult,
} from '../domain/jobs.js';
import { nowSeconds } from '../domain/repository.js';
import { compactJobLog, encodeJobKey, JobLogWriter, loadJobLog } from '../store/job-log.js';

/**
 * The seam where compact CI evidence of a kind-7 job reaches its patchset. It runs inside the
 * completion, before the job record is written; the workflow layer implements it so that the
 * evidence and the completion become durable together.
 */
export interface PatchsetCiSink {
  attach(job: JobRecord, evidence: ReturnType<typeof compactEvidence>, result: RunnerResult): Promise<void>;
}

export const noPatchsetSink: PatchsetCiSink = {
  async attach(job) {
    if (!job.detail.patchset_id) throw new Invalid('patchset.ci job has no patchset');
  },
};

export interface ClaimResult {
  repository_index: number;
  worker_job_index: number;
  job_kind: number;
  job_type: string;
  attempt_count: number;
  lease_token: string;
  lease_expires_at_s: number;
  runtime_request: Record<string, unknown>;
  job: Record<string, unknown>;
}

export function jobProjection(job: JobRecord, now = nowSeconds()): Record<string, unknown> {
  const kind = jobKind(job.kind);
  const projection: Record<string, unknown> = {
    repository_index: job.repository_index,
    worker_job_index: job.worker_job_index,
    job_key: encodeJobKey(job.repository_index, job.worker_job_index).toString('hex'),
    job_kind: job.kind,
    job_type: kind?.job_type ?? null,
    state_kind: job.state,
    state: STATE_NAMES[job.state],
    retry_status: RETRY_NAMES[job.retry_status] ?? 'none',
    outcome: job.detail.outcome,
    attempt_count: job.attempt_count,
    max_attempts: job.max_attempts,
    error_kind: ERROR_KIND_NAMES[job.error_kind] ?? null,
    error: job.detail.error,
    snapshot_id: job.detail.snapshot_id,
    snapshot_index: job.detail.snapshot_index,
    patchset_id: job.detail.patchset_id,
    trigger: job.detail.trigger,
    timeout_s: job.detail.timeout_s,
    available: isClaimable(job, now),
    available_at_s: job.state === STATE_QUEUED ? job.available_at_s : null,
    locked_at_s: job.locked_at_s || null,
    lease_expires_at_s: job.state === STATE_RUNNING ? job.lease_expires_at_s : null,
    created_at_s: job.created_at_s,
    updated_at_s: job.updated_at_s,
    completed_at_s: job.completed_at_s || null,
    tombstoned: job.tombstoned,
  };
  // Compact CI evidence: always for patchset.ci; for repo.ci when the runner sent a result.
  if (job.kind === JOB_KIND_PATCHSET_CI || job.detail.result) projection.ci = job.detail.result ? compactEvidence(job.detail.result) : null;
  return projection;
}

export function runtimeRequest(job: JobRecord): Record<string, unknown> {
  return {
    contract: RUNTIME_CONTRACT,
    repository_index: job.repository_index,
    snapshot_id: job.detail.snapshot_id,
    patchset_id: job.detail.patchset_id,
    entrypoints: {
      posix: { path: 'ci/run.sh', argv: ['sh', 'ci/run.sh'] },
      windows: { path: 'ci/run.ps1', argv: ['pwsh', '-NoProfile', '-NonInteractive', '-File', 'ci/run.ps1'] },
    },
    timeout_s: job.detail.timeout_s,
    results_file: 'ci/results.json',
  };
}

interface EnqueueDetail { snapshot_id?: string | null; snapshot_index?: number | null; patchset_id?: string | null; trigger?: string | null }

export class JobQueue {
  private readonly mutex = new Mutex();
  /** Queued job indexes in the order they became claimable (new, then requeued): FIFO claims. */
  private readonly queued = new Set<number>();
  private readonly running = new Set<number>();

  private constructor(
    readonly repositoryIndex: number,
    private readonly jobs: Map<number, JobRecord>,
    private readonly writer: JobLogWriter,
    private readonly policy: JobPolicy,
    private sink: PatchsetCiSink,
  ) {
    for (let i = 0; i < jobs.size; i++) this.track(jobs.get(i)!);
  }

  private track(job: JobRecord): void {
    const i = job.worker_job_index;
    if (job.state === STATE_QUEUED) this.queued.add(i);
    else this.queued.delete(i);
    if (job.state === STATE_RUNNING) this.running.add(i);
    else this.running.delete(i);
  }

  static async open(root: string, repositoryIndex: number, policy: JobPolicy, compact = true): Promise<{ queue: JobQueue; notes: string[] }> {
    const file = path.join(root, 'jobs.log');
    const loaded = await loadJobLog(file);
    for (const job of loaded.jobs.values()) {
      if (job.repository_index !== repositoryIndex) throw new Invalid(`jobs.log holds a record of repository ${job.repository_index}`);
    }
    // Compact when most records are superseded: the log then holds one record per job.
    if (compact && loaded.records > 64 && loaded.records > 4 * loaded.jobs.size) {
      await compactJobLog(file, [...loaded.jobs.values()].sort((a, b) => a.worker_job_index - b.worker_job_index));
      loaded.notes.push(`jobs.log compacted from ${loaded.records} to ${loaded.jobs.size} records`);
    }
    const queue = new JobQueue(repositoryIndex, loaded.jobs, new JobLogWriter(file), policy, noPatchsetSink);
    await queue.expireLeases();
    return { queue, notes: loaded.notes };
  }

  setPatchsetSink(sink: PatchsetCiSink): void {
    this.sink = sink;
  }

  close(): void {
    this.writer.close();
  }

  /** Hold this mutex while `fn` runs (the authority's quiesce). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.mutex.runExclusive(fn);
  }

  private async persist(jobs: JobRecord[]): Promise<void> {
    await this.writer.append(jobs);
    for (const job of jobs) {
      this.jobs.set(job.worker_job_index, job);
      this.track(job);
    }
  }

  /** Apply lease expiry to every running job whose lease has passed. */
  expireLeases(now = nowSeconds()): Promise<number> {
    return this.mutex.runExclusive(() => this.expireLocked(now));
  }

  private async expireLocked(now: number): Promise<number> {
    const expired: JobRecord[] = [];
    for (const i of this.running) {
      const next = expireIfDue(this.jobs.get(i)!, now);
      if (next) expired.push(next);
    }
    if (expired.length) await this.persist(expired);
    return expired.length;
  }

  hasDueLeases(now = nowSeconds()): boolean {
    for (const i of this.running) if (this.jobs.get(i)!.lease_expires_at_s < now) return true;
    return false;
  }

  /** Queue a job (repo.ci from :runCi, patchset.ci from the workflow layer). */
  enqueue(kind: number, detail: EnqueueDetail): Promise<JobRecord> {
    return this.mutex.runExclusive(() => this.enqueueLocked(kind, detail));
  }

  private async enqueueLocked(kind: number, detail: EnqueueDetail): Promise<JobRecord> {
    const now = nowSeconds();
    const index = this.jobs.size;
    if (index > 0xffffffff) throw new Conflict('this repository has used every worker_job_index');
    const job: JobRecord = {
      repository_index: this.repositoryIndex,
      worker_job_index: index,
      kind,
      state: STATE_QUEUED,
      retry_status: RETRY_NONE,
      error_kind: ERROR_NONE,
      attempt_count: 0,
      max_attempts: this.policy.maxAttempts,
      tombstoned: false,
      created_at_s: now,
      updated_at_s: now,
      available_at_s: now,
      locked_at_s: 0,
      lease_expires_at_s: 0,
      completed_at_s: 0,
      lease_token_hash: '',
      detail: {
        snapshot_id: detail.snapshot_id ?? null,
        snapshot_index: detail.snapshot_index ?? null,
        patchset_id: detail.patchset_id ?? null,
        trigger: detail.trigger ?? null,
        timeout_s: this.policy.timeoutSeconds,
        outcome: null,
        error: null,
        result: null,
      },
    };
    await this.persist([job]);
    return job;
  }

  /**
   * Queue repo.ci for a snapshot unless an active (queued or running) one exists, which is
   * returned instead: check and enqueue are one step under the queue mutex.
   */
  async enqueueRepoCi(snapshotId: string, snapshotIndex: number): Promise<{ job: JobRecord; queued: boolean }> {
    const active = () => {
      for (const i of [...this.queued, ...this.running]) {
        const job = this.jobs.get(i)!;
        if (job.kind === JOB_KIND_REPO_CI && job.detail.snapshot_id === snapshotId) return job;
      }
      return undefined;
    };
    return this.mutex.runExclusive(async () => {
      const existing = active();
      if (existing) return { job: existing, queued: false };
      return { job: await this.enqueueLocked(JOB_KIND_REPO_CI, { snapshot_id: snapshotId, snapshot_index: snapshotIndex, trigger: 'manual' }), queued: true };
    });
  }

  async get(index: number): Promise<JobRecord> {
    if (this.hasDueLeases()) await this.expireLeases();
    const job = this.jobs.get(index);
    if (!job) throw new NotFound(`worker job ${index} does not exist in repository ${this.repositoryIndex}`);
    return job;
  }

  async list(stateKind: number | null, limit: number): Promise<JobRecord[]> {
    if (this.hasDueLeases()) await this.expireLeases();
    const out: JobRecord[] = [];
    for (let i = this.jobs.size - 1; i >= 0 && out.length < limit; i--) {
      const job = this.jobs.get(i)!;
      if (stateKind === null || job.state === stateKind) out.push(job);
    }
    return out;
  }

  counts(): { queued: number; running: number } {
    return { queued: this.queued.size, running: this.running.size };
  }

  /** Claim the oldest claimable job of an accepted kind, or null. */
  claimNext(kinds: Set<number>): Promise<ClaimResult | null> {
    return this.mutex.runExclusive(async () => {
      const now = nowSeconds();
      await this.expireLocked(now);
      for (const i of this.queued) {
        const job = this.jobs.get(i)!;
        if (kinds.has(job.kind) && isClaimable(job, now)) return this.claimLocked(job, now);
      }
      return null;
    });
  }

  claimExact(index: number): Promise<ClaimResult> {
    return this.mutex.runExclusive(async () => {
      const now = nowSeconds();
      await this.expireLocked(now);
      const job = this.jobs.get(index);
      if (!job) throw new NotFound(`worker job ${index} does not exist in repository ${this.repositoryIndex}`);
      if (!jobKind(job.kind)?.external) throw new Conflict(`worker job ${index} is of internal kind ${job.kind}; external runners cannot claim it`);
      if (!isClaimable(job, now)) throw new Conflict(`worker job ${index} is ${STATE_NAMES[job.state]}, not claimable`);
      return this.claimLocked(job, now);
    });
  }

  private async claimLocked(job: JobRecord, now: number): Promise<ClaimResult> {
    const token = newLeaseToken();
    const claimed = claim(job, token, now, this.policy);
    await this.persist([claimed]);
    return {
      repository_index: claimed.repository_index,
      worker_job_index: claimed.worker_job_index,
      job_kind: claimed.kind,
      job_type: jobKind(claimed.kind)!.job_type,
      attempt_count: claimed.attempt_count,
      lease_token: token,
      lease_expires_at_s: claimed.lease_expires_at_s,
      runtime_request: runtimeRequest(claimed),
      job: jobProjection(claimed, now),
    };
  }

  /** Runs `change` on a job holding a valid lease; expiry is applied first, so a dead lease is 409. */
  private leased(index: number, attempt: number, token: string, change: (job: JobRecord, now: number) => Promise<JobRecord>): Promise<JobRecord> {
    return this.mutex.runExclusive(async () => {
      const now = nowSeconds();
      await this.expireLocked(now);
      const job = this.jobs.get(index);
      if (!job) throw new NotFound(`worker job ${index} does not exist in repository ${this.repositoryIndex}`);
      checkLease(job, attempt, token, now);
      const next = await change(job, now);
      await this.persist([next]);
      return next;
    });
  }

  heartbeat(index: number, attempt: number, token: string): Promise<JobRecord> {
    return this.leased(index, attempt, token, async (job, now) => heartbeat(job, now, this.policy));
  }

  complete(index: number, attempt: number, token: string, detail: Record<string, unknown>): Promise<JobRecord> {
    // Optional detail.error (a failed command's output tail), at most 4,096 characters.
    const error = typeof detail.error === 'string' ? detail.error : null;
    if (error !== null) validateErrorText(error);
    return this.leased(index, attempt, token, async (job, now) => {
      if (job.kind === JOB_KIND_PATCHSET_CI) {
        const result = patchsetResult(detail);
        await this.sink.attach(job, compactEvidence(result), result);
        return complete(job, result, now, error);
      }
      let result: RunnerResult | null = null;
      try {
        if (detail.result !== undefined) result = patchsetResult({ ...detail, job_kind: JOB_KIND_PATCHSET_CI });
      } catch {
        result = null; // kind 11 needs nothing more; a malformed optional result is not kept
      }
      return complete(job, result, now, error);
    });
  }

  fail(index: number, attempt: number, token: string, retryable: boolean, error: string): Promise<JobRecord> {
    validateErrorText(error);
    return this.leased(index, attempt, token, async (job, now) => fail(job, error, retryable ? ERROR_RUNNER_RETRYABLE : ERROR_RUNNER_FATAL, retryable, now));
  }

  /** Every record, for export and tests. */
  all(): JobRecord[] {
    return [...this.jobs.values()].sort((a, b) => a.worker_job_index - b.worker_job_index);
  }
}
