// The worker-job queue of one authority. Every transition is a transaction of the authority's
// store: it appends the job's new record to jobs.log and becomes durable with the commit that
// carries it (several claims, heartbeats or completions share one commit under load). Expired
// leases are applied on every claim and read, by a timer, and at open.
//
// A patchset's CI evidence is not written anywhere else: it is derived from the completion
// record of its kind-7 job (`ciJobsOf`), which already holds the whole runner result, so there
// is no second write to keep in step with the completion (storage-layout.md §13).
import { Conflict, Invalid, NotFound } from '../domain/errors.js';
import { JOB_KIND_PATCHSET_CI, JOB_KIND_REPO_CI, jobKind } from '../domain/job-kinds.js';
import {
  ERROR_NONE,
  ERROR_RUNNER_FATAL,
  ERROR_RUNNER_RETRYABLE,
  ERROR_KIND_NAMES,
  OUTCOME_SUPERSEDED,
  RETRY_NAMES,
  RETRY_NONE,
  RUNTIME_CONTRACT,
  STATE_NAMES,
  STATE_QUEUED,
  STATE_RUNNING,
  checkLease,
  ciOutcome,
  claim,
  compactEvidence,
  complete,
  expireIfDue,
  fail,
  heartbeat,
  supersede,
  isClaimable,
  newLeaseToken,
  patchsetResult,
  validateErrorText,
  type CiOutcome,
  type JobPolicy,
  type JobRecord,
  type RunnerResult,
} from '../domain/jobs.js';
import { firstAfter, keepRows, takePage, walkFrom, type Page, type PageRequest } from '../domain/paging.js';
import { nowSeconds } from '../domain/repository.js';
import { jobEvents } from '../domain/events.js';
import type { ContentStore, Txn } from '../store/content-store.js';
import { encodeJobKey, encodeJobRecord, replayJobRecords } from '../store/job-log.js';

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
    run_sequence: job.detail.run_sequence ?? (job.kind === JOB_KIND_PATCHSET_CI ? 1 : null),
    land_queue_entry_ids: job.detail.land_queue_entry_ids ?? null,
    timeout_s: job.detail.timeout_s,
    available: isClaimable(job, now),
    available_at_s: job.state === STATE_QUEUED ? job.available_at_s : null,
    locked_at_s: job.locked_at_s || null,
    lease_expires_at_s: job.state === STATE_RUNNING ? job.lease_expires_at_s : null,
    created_at_s: job.created_at_s,
    updated_at_s: job.updated_at_s,
    completed_at_s: job.completed_at_s || null,
    tombstoned: job.tombstoned,
    ci_outcome: ciOutcome(job),
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

interface EnqueueDetail { snapshot_id?: string | null; snapshot_index?: number | null; patchset_id?: string | null; trigger?: string | null; run_sequence?: number; land_queue_entry_ids?: string[]; root_tree_id?: string }

export class JobQueue {
  /** Queued job indexes in the order they became claimable (new, then requeued): FIFO claims. */
  private readonly queued = new Set<number>();
  private readonly running = new Set<number>();
  /** Job indexes of each patchset's CI jobs, oldest first: the patchset's CI evidence is read from them. */
  private readonly byPatchset = new Map<string, number[]>();
  private readonly listeners: ((job: JobRecord) => void)[] = [];
  /**
   * Finished jobs by CI outcome, and by outcome and state (`fail/3`), as ascending job indexes:
   * a page of `?outcome=` walks only its rows (binary search to the cursor, then one step per
   * row), never the jobs between them. A job's outcome is set once, when it ends.
   */
  private readonly byOutcome = new Map<string, number[]>();
  private readonly outcomeOf = new Map<number, CiOutcome>();
  /**
   * Every job index, ascending: a page walks it (binary search to the cursor, then one step per
   * row). Indexes are dense from 0 but for the gaps an id floor leaves (serve --lease: after a
   * failover new jobs continue past what the old writer may have handed out).
   */
  private readonly order: number[];

  private constructor(
    readonly repositoryIndex: number,
    private readonly jobs: Map<number, JobRecord>,
    private readonly store: ContentStore,
    private readonly policy: JobPolicy,
  ) {
    // replayJobRecords admits a new index only above every earlier one: the keys ascend.
    this.order = [...jobs.keys()];
    for (const i of this.order) this.track(jobs.get(i)!);
  }

  /**
   * The id space `job`'s highest sequence (serve --lease, ./writer-lease.ts): the highest job
   * index plus one (job indexes start at 0, sequences at 1), 0 when there is no job.
   */
  get highestSequence(): number {
    return this.order.length === 0 ? 0 : this.order[this.order.length - 1]! + 1;
  }

  private track(job: JobRecord): void {
    const i = job.worker_job_index;
    if (job.state === STATE_QUEUED) this.queued.add(i);
    else this.queued.delete(i);
    if (job.state === STATE_RUNNING) this.running.add(i);
    else this.running.delete(i);
    const outcome = ciOutcome(job);
    if (outcome !== null && !this.outcomeOf.has(i)) {
      this.outcomeOf.set(i, outcome);
      for (const key of [outcome, `${outcome}/${job.state}`]) {
        const list = this.byOutcome.get(key) ?? [];
        // Jobs end in any order; most end in index order, so the insert point is near the end.
        let at = list.length;
        while (at > 0 && list[at - 1] > i) at--;
        list.splice(at, 0, i);
        this.byOutcome.set(key, list);
      }
    }
    const ps = job.detail.patchset_id;
    if (ps && job.kind === JOB_KIND_PATCHSET_CI) {
      const list = this.byPatchset.get(ps) ?? [];
      if (!list.includes(i)) list.push(i);
      this.byPatchset.set(ps, list);
    }
  }

  /** Replay jobs.log (its committed records; the latest record of each job wins), then expire leases. */
  static async open(store: ContentStore, repositoryIndex: number, policy: JobPolicy, compact = true): Promise<{ queue: JobQueue; notes: string[] }> {
    const notes: string[] = [];
    const { jobs, count: records } = replayJobRecords(store.logRecords('jobs'), repositoryIndex);
    // Compact when most records are superseded: the log then holds one record per job. A
    // retiring authority's files stay as exported, so it is never compacted.
    if (compact && records > 64 && records > 4 * jobs.size) {
      await store.compactLog('jobs', [...jobs.values()].sort((a, b) => a.worker_job_index - b.worker_job_index).map(encodeJobRecord));
      notes.push(`jobs.log compacted from ${records} to ${jobs.size} records`);
    }
    const queue = new JobQueue(repositoryIndex, jobs, store, policy);
    await queue.expireLeases();
    return { queue, notes };
  }

  /** The job as this transaction sees it (staged earlier in its batch, else published). */
  private view(tx: Txn, index: number): JobRecord | undefined {
    return tx.staged<JobRecord>('job', String(index)) ?? this.jobs.get(index);
  }

  /** Past every job held or staged, and past the id floor (the sequence of index i is i + 1). */
  private nextIndex(tx: Txn): number {
    let next = Math.max(this.highestSequence, this.store.idFloor('job'));
    for (const key of tx.stagedKeys('job')) next = Math.max(next, Number(key) + 1);
    return next;
  }

  /** Stage new job records; the in-memory queue follows once the commit is durable. */
  private persist(tx: Txn, jobs: JobRecord[]): void {
    for (const job of jobs) {
      tx.emitAll(jobEvents(this.view(tx, job.worker_job_index), job));
      tx.stage('job', String(job.worker_job_index), job);
      tx.append('jobs', encodeJobRecord(job));
    }
    tx.onPublish(() => {
      for (const job of jobs) {
        if (!this.jobs.has(job.worker_job_index)) this.noteIndex(job.worker_job_index);
        this.jobs.set(job.worker_job_index, job);
        this.track(job);
        for (const fn of this.listeners) fn(job);
      }
    });
  }

  /** A new job's index into `order` (new jobs take the next index, so almost always at the end). */
  private noteIndex(i: number): void {
    const o = this.order;
    if (o.length === 0 || o[o.length - 1]! < i) o.push(i);
    else o.splice(firstAfter(o.length, (k) => o[k]!, i), 0, i);
  }

  /** Apply lease expiry to every running job whose lease has passed. */
  expireLeases(now = nowSeconds()): Promise<number> {
    return this.store.transact((tx) => this.expireIn(tx, now));
  }

  private expireIn(tx: Txn, now: number): number {
    const expired: JobRecord[] = [];
    for (const i of this.running) {
      const job = this.view(tx, i)!;
      const next = expireIfDue(job, now);
      if (next) expired.push(this.unlessSuperseded(tx, job, next, now));
    }
    if (expired.length) this.persist(tx, expired);
    return expired.length;
  }

  hasDueLeases(now = nowSeconds()): boolean {
    for (const i of this.running) if (this.jobs.get(i)!.lease_expires_at_s < now) return true;
    return false;
  }

  /** Queue a job (repo.ci from :runCi, patchset.ci from the workflow layer). */
  enqueue(kind: number, detail: EnqueueDetail): Promise<JobRecord> {
    return this.store.transact((tx) => this.enqueueIn(tx, kind, detail));
  }

  /** Stage a new queued job inside a caller's transaction (a workflow commit that queues CI). */
  enqueueIn(tx: Txn, kind: number, detail: EnqueueDetail): JobRecord {
    const now = nowSeconds();
    const index = this.nextIndex(tx);
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
        ...(detail.run_sequence !== undefined ? { run_sequence: detail.run_sequence } : {}),
        ...(detail.land_queue_entry_ids !== undefined ? { land_queue_entry_ids: detail.land_queue_entry_ids } : {}),
        ...(detail.root_tree_id !== undefined ? { root_tree_id: detail.root_tree_id } : {}),
        timeout_s: this.policy.timeoutSeconds,
        outcome: null,
        error: null,
        result: null,
      },
    };
    this.persist(tx, [job]);
    return job;
  }

  /**
   * Queue repo.ci for a snapshot: every request queues a new job (the spec's Worker Job row:
   * none → queued on every `:runCi`), even when one for the snapshot is queued or running, as a
   * re-run on GitHub or GitLab is a new run (a flaky runner, a changed CI image).
   */
  enqueueRepoCi(snapshotId: string, snapshotIndex: number): Promise<{ job: JobRecord; queued: boolean }> {
    return this.store.transact((tx) => ({ job: this.enqueueIn(tx, JOB_KIND_REPO_CI, { snapshot_id: snapshotId, snapshot_index: snapshotIndex, trigger: 'manual' }), queued: true }));
  }

  /** Queued (and with `running`, running) indexes as a transaction sees them, FIFO. */
  private *candidates(tx: Txn, running = false): Generator<number> {
    const seen = new Set<number>();
    for (const i of this.queued) { seen.add(i); yield i; }
    if (running) for (const i of this.running) { seen.add(i); yield i; }
    for (const key of tx.stagedKeys('job')) {
      const i = Number(key);
      if (!seen.has(i)) yield i;
    }
  }

  async get(index: number): Promise<JobRecord> {
    if (this.hasDueLeases()) await this.expireLeases();
    const job = this.jobs.get(index);
    if (!job) throw new NotFound(`worker job ${index} does not exist in repository ${this.repositoryIndex}`);
    return job;
  }

  /**
   * One page of jobs, newest first (cursor key: the worker job index), optionally of one state
   * and of one CI outcome (the handler binds both filters into the cursor's scope). An outcome page walks that outcome's index, so its cost is the page, not
   * the jobs it skips.
   */
  async list(filter: { stateKind: number | null; outcome: CiOutcome | null }, req: PageRequest): Promise<Page<JobRecord>> {
    if (this.hasDueLeases()) await this.expireLeases();
    const { stateKind, outcome } = filter;
    if (outcome !== null) {
      const indexes = this.byOutcome.get(stateKind === null ? outcome : `${outcome}/${stateKind}`) ?? [];
      return takePage(req, walkFrom(indexes.length, (i) => this.jobs.get(indexes[i])!, (j) => j.worker_job_index, req.after, 'desc'), 'desc');
    }
    const order = this.order;
    const rows = walkFrom(order.length, (i) => this.jobs.get(order[i]!)!, (j) => j.worker_job_index, req.after, 'desc');
    return takePage(req, keepRows(rows, (j) => stateKind === null || j.state === stateKind), 'desc');
  }

  counts(): { queued: number; running: number } {
    return { queued: this.queued.size, running: this.running.size };
  }

  /** The CI jobs of a patchset, oldest first (its evidence is derived from their completion records). */
  ciJobsOf(patchsetId: string): JobRecord[] {
    return (this.byPatchset.get(patchsetId) ?? []).map((i) => this.jobs.get(i)!);
  }

  /** The CI jobs of a patchset as `tx` sees them: published, then as staged earlier in its batch. */
  ciJobsIn(tx: Txn, patchsetId: string): JobRecord[] {
    const indexes = [...(this.byPatchset.get(patchsetId) ?? [])];
    for (const key of tx.stagedKeys('job')) {
      const job = tx.staged<JobRecord>('job', key)!;
      if (job.kind === JOB_KIND_PATCHSET_CI && job.detail.patchset_id === patchsetId && !indexes.includes(job.worker_job_index)) indexes.push(job.worker_job_index);
    }
    return indexes.sort((a, b) => a - b).map((i) => this.view(tx, i)!);
  }

  /** Whether a land-queue job belongs to a speculation the queue no longer waits on (set by the land queue). */
  droppedQueueJob: (tx: Txn, job: JobRecord) => boolean = () => false;

  /** Whether `job` is a patchset.ci job of a run older than its patchset's newest run, or a land-queue job the queue dropped. */
  private superseded(tx: Txn, job: JobRecord): boolean {
    if (job.kind === JOB_KIND_REPO_CI && job.detail.land_queue_entry_ids) return this.droppedQueueJob(tx, job);
    if (job.kind !== JOB_KIND_PATCHSET_CI || !job.detail.patchset_id) return false;
    const run = (j: JobRecord) => j.detail.run_sequence ?? 1;
    return this.ciJobsIn(tx, job.detail.patchset_id).some((j) => run(j) > run(job));
  }

  /** A requeue of a superseded job becomes its end (a replaced run is never retried). */
  private unlessSuperseded(tx: Txn, before: JobRecord, next: JobRecord, now: number): JobRecord {
    if (next.state !== STATE_QUEUED || !this.superseded(tx, before)) return next;
    return supersede(next, now, next.detail.error ?? 'superseded by a newer CI run');
  }

  /**
   * A new CI run of `patchsetId` replaces the older ones (in the caller's transaction): their
   * queued jobs end now as `superseded`, so no runner claims them; running ones may finish (their
   * completion is recorded with outcome `superseded`) but are never requeued.
   */
  supersedeOlderRunsIn(tx: Txn, patchsetId: string, run: number): JobRecord[] {
    const now = nowSeconds();
    const ended = this.ciJobsIn(tx, patchsetId)
      .filter((j) => j.state === STATE_QUEUED && (j.detail.run_sequence ?? 1) < run)
      .map((j) => supersede(j, now, `superseded by CI run ${run} of patchset ${patchsetId} before a runner claimed it`));
    if (ended.length) this.persist(tx, ended);
    return ended;
  }

  /** Claim the oldest claimable job of an accepted kind, or null. */
  claimNext(kinds: Set<number>): Promise<ClaimResult | null> {
    return this.store.transact((tx) => {
      const now = nowSeconds();
      this.expireIn(tx, now);
      for (const i of this.candidates(tx)) {
        const job = this.view(tx, i)!;
        if (kinds.has(job.kind) && isClaimable(job, now)) return this.claimIn(tx, job, now);
      }
      return null;
    });
  }

  claimExact(index: number): Promise<ClaimResult> {
    return this.store.transact((tx) => {
      const now = nowSeconds();
      this.expireIn(tx, now);
      const job = this.view(tx, index);
      if (!job) throw new NotFound(`worker job ${index} does not exist in repository ${this.repositoryIndex}`);
      if (!jobKind(job.kind)?.external) throw new Conflict(`worker job ${index} is of internal kind ${job.kind}; external runners cannot claim it`);
      if (!isClaimable(job, now)) throw new Conflict(`worker job ${index} is ${STATE_NAMES[job.state]}, not claimable`);
      return this.claimIn(tx, job, now);
    });
  }

  private claimIn(tx: Txn, job: JobRecord, now: number): ClaimResult {
    const token = newLeaseToken();
    const claimed = claim(job, token, now, this.policy);
    this.persist(tx, [claimed]);
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
  private leased(index: number, attempt: number, token: string, change: (job: JobRecord, now: number, tx: Txn) => JobRecord): Promise<JobRecord> {
    return this.store.transact((tx) => {
      const now = nowSeconds();
      this.expireIn(tx, now);
      const job = this.view(tx, index);
      if (!job) throw new NotFound(`worker job ${index} does not exist in repository ${this.repositoryIndex}`);
      checkLease(job, attempt, token, now);
      const next = change(job, now, tx);
      this.persist(tx, [next]);
      return next;
    });
  }

  heartbeat(index: number, attempt: number, token: string): Promise<JobRecord> {
    return this.leased(index, attempt, token, (job, now) => heartbeat(job, now, this.policy));
  }

  /**
   * Complete a running job. For kind 7 the record keeps the whole runner result: it is the
   * patchset's CI evidence, durable in the same record as the completion itself.
   */
  complete(index: number, attempt: number, token: string, detail: Record<string, unknown>): Promise<JobRecord> {
    // Optional detail.error (a failed command's output tail), at most 4,096 characters.
    const error = typeof detail.error === 'string' ? detail.error : null;
    if (error !== null) validateErrorText(error);
    return this.leased(index, attempt, token, (job, now, tx) => {
      if (job.kind === JOB_KIND_PATCHSET_CI) {
        const result = patchsetResult(detail);
        if (!job.detail.patchset_id) throw new Invalid('patchset.ci job has no patchset');
        const done = complete(job, result, now, error);
        return this.superseded(tx, job) ? { ...done, detail: { ...done.detail, outcome: OUTCOME_SUPERSEDED } } : done;
      }
      let result: RunnerResult | null = null;
      try {
        if (detail.result !== undefined && detail.result !== null) result = patchsetResult({ ...detail, job_kind: JOB_KIND_PATCHSET_CI });
      } catch (err) {
        // The land queue lands on its job's verdict, and a completion without a result passes:
        // a malformed result (a failing run, miscounted) must not be dropped into a pass.
        if (job.detail.land_queue_entry_ids) throw err instanceof Invalid ? err : new Invalid('detail.result is not a well-formed runner result');
        result = null; // kind 11 needs nothing more; a malformed optional result is not kept
      }
      return complete(job, result, now, error);
    });
  }

  fail(index: number, attempt: number, token: string, retryable: boolean, error: string): Promise<JobRecord> {
    validateErrorText(error);
    return this.leased(index, attempt, token, (job, now, tx) => this.unlessSuperseded(tx, job, fail(job, error, retryable ? ERROR_RUNNER_RETRYABLE : ERROR_RUNNER_FATAL, retryable, now), now));
  }

  /** Every job as published, in no particular order (no copy, no sort). */
  each(): IterableIterator<JobRecord> {
    return this.jobs.values();
  }

  /** A job as published (no lease expiry applied; undefined when there is none). */
  peek(index: number): JobRecord | undefined {
    return this.jobs.get(index);
  }

  /** A job as `tx` sees it. */
  jobIn(tx: Txn, index: number): JobRecord | undefined {
    return this.view(tx, index);
  }

  /** End the still-queued jobs among `indexes` (in the caller's transaction): no runner claims them. Running ones finish. */
  cancelQueuedIn(tx: Txn, indexes: readonly number[], why: string): JobRecord[] {
    const now = nowSeconds();
    const ended = indexes.map((i) => this.view(tx, i)).filter((j): j is JobRecord => j !== undefined && j.state === STATE_QUEUED).map((j) => supersede(j, now, why));
    if (ended.length) this.persist(tx, ended);
    return ended;
  }

  /** Call `fn` with each job record once its commit is published (the land queue follows its jobs). */
  onPublished(fn: (job: JobRecord) => void): void {
    this.listeners.push(fn);
  }

  /** Every record, for export and tests. */
  all(): JobRecord[] {
    return [...this.jobs.values()].sort((a, b) => a.worker_job_index - b.worker_job_index);
  }
}
