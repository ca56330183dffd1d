// The land queue of one authority (docs/land-queue.md): entries are workflow.log records
// (type `land_queue_entry`), and every move of the queue — an entry added, a speculation built
// with its CI job, a retry, a land, an ejection — is one transaction, decided by the pure rules
// of lib/domain/workflow/land-queue.ts from the records as they stand. After a crash the queue
// resumes from its records: a move either committed whole or not at all, and a land checks the
// line head it was tested on inside its own commit, so nothing lands twice.
//
// Memory holds the active entries only (their ids, in queue order per line); finished entries
// stay on disk and are read by id. The active ids are a section of workflow.ckpt.
import { Conflict, Forbidden, Invalid, NotFound } from '../../domain/errors.js';
import { JOB_KIND_PATCHSET_CI, JOB_KIND_REPO_CI } from '../../domain/job-kinds.js';
import { STATE_FAILED, STATE_QUEUED, STATE_RUNNING, STATE_SUCCEEDED, type JobRecord } from '../../domain/jobs.js';
import { validateLineName } from '../../domain/lines.js';
import { nowSeconds } from '../../domain/repository.js';
import { queueEntryEvents } from '../../domain/events.js';
import {
  bisectLimits,
  DEFAULT_QUEUE_OPTIONS,
  isActiveEntry,
  nextQueueMove,
  patchsetEjection,
  QUEUE_ENTRY,
  QUEUE_SECTION,
  decodeActive,
  encodeActive,
  QUEUE_MODES,
  speculationVerdict,
  type Ejection,
  type JobView,
  type QueueEntryRecord,
  type QueueMode,
  type QueueMove,
  type QueueOptions,
  type Speculation,
} from '../../domain/workflow/land-queue.js';
import { CHANGE, isOpenChange, PATCHSET, type ChangeRecord, type PatchsetRecord } from '../../domain/workflow/rules.js';
import type { ContentStore, Txn } from '../../store/content-store.js';
import type { JobQueue } from '../jobs.js';
import type { Log } from '../logger.js';
import type { WorkflowBook } from './book.js';
import type { LandGates, SpeculationCi } from './gates.js';
import type { LandDesk, PendingMerges } from './lands.js';
import { OverLimit } from '../../domain/tree-size.js';
import { MAX_STACK } from '../../domain/workflow/stack-index.js';
import { decodeSnapshot } from '../../domain/content.js';
import { ciState, type CiState } from './reviews.js';
import { crashPoint } from '../../store/crash-point.js';

/** Active entries a repository may hold (a queue longer than this is refused, 409). */
export const MAX_ACTIVE_ENTRIES = 1000;
/** Conflicting paths an ejection lists. */
const MAX_EJECTION_PATHS = 100;
const NEW_ENTRY = 'queue:new';
const seqOf = (id: string) => Number(id.slice(id.lastIndexOf('-') + 1));

export interface EnqueueInput {
  change_ref: string;
  mode: string;
  target_line?: string | null;
  /** Land despite failing gates (docs/api.md "Repository rules"): only a caller in bypass_allowed. */
  bypass?: boolean | null;
}

/** A job's verdict for the queue: a completion with a passing result (or with none) passes. */
export function jobVerdict(job: JobRecord | undefined): JobView | null {
  if (!job) return null;
  const at = Math.max(job.updated_at_s, job.locked_at_s, job.completed_at_s);
  if (job.state === STATE_QUEUED || job.state === STATE_RUNNING) return { verdict: 'pending', updated_at_s: at };
  if (job.state === STATE_FAILED) return { verdict: 'fail', updated_at_s: at };
  const r = job.detail.result;
  const pass = !r || (r.status === 'succeeded' && r.tests_status === 'pass' && !r.suite_results.some((s) => s.status === 'fail' && s.blocking));
  return { verdict: pass ? 'pass' : 'fail', updated_at_s: at };
}

/** The CI a queue land is judged by: the passing job of its speculation. */
export function speculationCi(job: JobRecord): SpeculationCi {
  if (job.detail.result || job.kind === JOB_KIND_PATCHSET_CI) return ciState([job]);
  // A repo.ci completion without a result: the runner reported success (failures use :fail).
  const s: CiState = ciState([]);
  return {
    ...s,
    run_sequence: 1,
    evidence: { worker_job_index: job.worker_job_index, run_sequence: 1, overall: 'pass', status: 'succeeded', tests: 'pass', lint: 'none', suite_results: [], completed_at_s: job.completed_at_s },
    evidence_job: job,
    latest_job: job,
    jobs: [job],
  };
}

export class LandQueue {
  /** Active entry ids by target line, in queue order. */
  private readonly active = new Map<string, string[]>();
  /** The active entry of each change. */
  private readonly byChange = new Map<string, string>();
  /**
   * Per change, its latest entry when that entry was ejected (the attention rule asks the owner
   * to act). Kept from the entries written since the open's checkpoint (all entries without one).
   */
  private readonly ejectedByChange = new Map<string, { patchset_id: string; reason: string; sequence: number }>();
  /** Root trees a queue job passed on (built on first use from the job records). */
  private passedTrees: Map<string, number> | null = null;
  private options: QueueOptions = DEFAULT_QUEUE_OPTIONS;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private writable: () => boolean = () => true;
  private log: Log | null = null;

  constructor(
    private readonly store: ContentStore,
    private readonly book: WorkflowBook,
    private readonly lands: LandDesk,
    private readonly jobs: JobQueue,
    private readonly gates: LandGates,
  ) {
    const section = store.takeCheckpointSection(QUEUE_SECTION);
    let done = false;
    if (section) {
      try {
        const seqs = decodeActive(section);
        const ids = new Set(seqs.map((s) => `lq-${s}`));
        for (const id of store.tailEntities(QUEUE_ENTRY)) ids.add(id);
        for (const id of [...ids].sort((a, b) => seqOf(a) - seqOf(b))) {
          const e = store.entity<QueueEntryRecord>(QUEUE_ENTRY, id);
          if (!e) throw new Error(`entry ${id} is missing`);
          // Every state: a later landed or removed entry of a change clears its ejection.
          this.track(e);
        }
        done = true;
      } catch {
        this.active.clear();
        this.ejectedByChange.clear();
        this.byChange.clear();
      }
    }
    if (!done) {
      // Each entry in sequence order, so each change's ejection is its latest entry's, as when it was written.
      const all = [...store.entitiesOf<QueueEntryRecord>(QUEUE_ENTRY)].map(([, e]) => e).sort((a, b) => a.sequence - b.sequence);
      for (const e of all) this.track(e);
    }
    store.registerCheckpointSection(QUEUE_SECTION, () => {
      const named = new Set(this.activeSequences());
      for (const e of this.ejectedByChange.values()) named.add(e.sequence);
      return encodeActive([...named].sort((a, b) => a - b));
    });
    // A job of a speculation the queue dropped (or finished) is not requeued when it fails or its
    // lease expires: nothing waits for it, so a runner would run it again for nothing.
    jobs.droppedQueueJob = (tx, job) => {
      const tester = job.detail.land_queue_entry_ids?.at(-1);
      if (tester === undefined) return false;
      const e = this.entryIn(tx, tester);
      return !e || !isActiveEntry(e) || e.speculation?.tested_by !== e.entry_id || !e.speculation.worker_job_indexes.includes(job.worker_job_index);
    };
    // A new patchset pushed or another selected ejects the change's entry in the commit that
    // moves it, so no later move of the queue can land the patchset that was queued.
    book.ejectionOf = (changeId) => this.ejectionOf(changeId);
    book.patchsetsMoved = (tx, before, after) => {
      const id = tx.staged<string>(`${NEW_ENTRY}:change`, after.change_id) ?? this.byChange.get(after.change_id);
      const e = id === undefined ? undefined : this.entryIn(tx, id);
      if (!e || !isActiveEntry(e)) return;
      const why = patchsetEjection(e, before, after);
      if (!why) return;
      crashPoint('queue:patchset_changed');
      this.ejectIn(tx, e, { ...why, worker_job_indexes: [], failing_suites: [], conflict_paths: [] });
    };
    jobs.onPublished((job) => {
      if (this.passedTrees && job.detail.root_tree_id && jobVerdict(job)?.verdict === 'pass') this.passedTrees.set(job.detail.root_tree_id, job.worker_job_index);
    });
  }

  // ------------------------------------------------------------ indexes

  private track(e: QueueEntryRecord): void {
    const last = this.ejectedByChange.get(e.change_id);
    if (!last || last.sequence <= e.sequence) {
      if (e.state === 'ejected' && e.ejection) this.ejectedByChange.set(e.change_id, { patchset_id: e.patchset_id, reason: e.ejection.reason, sequence: e.sequence });
      else this.ejectedByChange.delete(e.change_id);
    }
    const list = this.active.get(e.target_line) ?? [];
    const at = list.indexOf(e.entry_id);
    if (isActiveEntry(e)) {
      if (at < 0) {
        list.push(e.entry_id);
        list.sort((a, b) => seqOf(a) - seqOf(b));
      }
      this.active.set(e.target_line, list);
      this.byChange.set(e.change_id, e.entry_id);
    } else {
      if (at >= 0) list.splice(at, 1);
      if (list.length === 0) this.active.delete(e.target_line);
      if (this.byChange.get(e.change_id) === e.entry_id) this.byChange.delete(e.change_id);
    }
  }

  /** The change's latest land-queue entry if it was ejected: the patchset it held and why; else null. */
  ejectionOf(changeId: string): { patchset_id: string; reason: string } | null {
    return this.ejectedByChange.get(changeId) ?? null;
  }

  private activeSequences(): number[] {
    return [...this.active.values()].flat().map(seqOf).sort((a, b) => a - b);
  }

  get activeCount(): number {
    let n = 0;
    for (const l of this.active.values()) n += l.length;
    return n;
  }

  private entryIn(tx: Txn | null, id: string): QueueEntryRecord | undefined {
    return tx ? tx.entity<QueueEntryRecord>(QUEUE_ENTRY, id) : this.store.entity<QueueEntryRecord>(QUEUE_ENTRY, id);
  }

  entry(id: string): QueueEntryRecord {
    const e = /^lq-[1-9][0-9]{0,9}$/.test(id) ? this.entryIn(null, id) : undefined;
    if (!e) throw new NotFound(`land-queue entry ${id} does not exist`);
    return e;
  }

  /** Active entries (of one line, or all lines), in queue order per line. */
  activeEntries(targetLine?: string): QueueEntryRecord[] {
    const lines = targetLine === undefined ? [...this.active.keys()].sort() : [targetLine];
    return lines.flatMap((l) => (this.active.get(l) ?? []).map((id) => this.entryIn(null, id)!));
  }

  /**
   * The highest entry sequence (the id space `land_queue_entry` of serve --lease's id floors).
   * Sequences are dense from 1 but for the gaps an id floor leaves: a sequence in a gap names no
   * entry (404).
   */
  get highestEntry(): number {
    return this.store.highestSequence(QUEUE_ENTRY);
  }

  /**
   * The newest finished entries (of one line, or all), newest first: at most `limit`, reading at
   * most a bounded number of records (a sequence in a gap an id floor left reads none).
   */
  recentFinished(limit: number, targetLine?: string): QueueEntryRecord[] {
    const out: QueueEntryRecord[] = [];
    for (let seq = this.highestEntry, read = 0; seq >= 1 && out.length < limit && read < limit * 20 + this.activeCount; seq--) {
      const e = this.entryIn(null, `lq-${seq}`);
      if (!e) continue;
      read++;
      if (!isActiveEntry(e) && (targetLine === undefined || e.target_line === targetLine)) out.push(e);
    }
    return out;
  }


  // ------------------------------------------------------------ projection

  projection(e: QueueEntryRecord, repositoryIndex: number): Record<string, unknown> {
    const list = this.active.get(e.target_line) ?? [];
    const at = isActiveEntry(e) ? list.indexOf(e.entry_id) : -1;
    const spec = e.speculation;
    const tester = spec ? (spec.tested_by === e.entry_id ? e : this.entryIn(null, spec.tested_by)) : null;
    const tspec = tester?.speculation ?? null;
    const lastJob = tspec?.reused_worker_job_index ?? tspec?.worker_job_indexes.at(-1) ?? null;
    const job = lastJob === null ? undefined : this.jobs.peek(lastJob);
    const verdict = tspec ? speculationVerdict(tspec, (i) => jobVerdict(this.jobs.peek(i))) : null;
    const now = nowSeconds();
    const view = jobVerdict(job);
    // Derived at read: a pending job without progress for longer than the bound (a claim or a heartbeat is progress).
    const stalledSince = view && view.verdict === 'pending' && now - view.updated_at_s > this.options.stall_s ? view.updated_at_s : null;
    return {
      ...e,
      enqueued_by: e.enqueued_by ?? null,
      bypass: e.bypass === true,
      repository_index: repositoryIndex,
      position: at >= 0 ? at + 1 : null,
      ci: spec
        ? {
            verdict,
            tested_by: spec.tested_by,
            worker_job_index: lastJob,
            job_state: job ? ['queued', 'running', 'succeeded', 'failed'][job.state - 1] : null,
            runs: tspec?.worker_job_indexes.length ?? 0,
            reused: tspec?.reused_worker_job_index !== null && tspec?.reused_worker_job_index !== undefined,
          }
        : null,
      stalled: isActiveEntry(e) && stalledSince !== null && lastJob !== null ? { since_s: stalledSince, worker_job_index: lastJob, message: `job ${lastJob} has not progressed since ${new Date(stalledSince * 1000).toISOString()} (bound ${this.options.stall_s} s)` } : null,
    };
  }

  // ------------------------------------------------------------ requests

  /** `by`: the identified caller, kept as the entry's `enqueued_by` and its land's `landed_by`. */
  async enqueue(input: EnqueueInput, by: string | null = null): Promise<QueueEntryRecord> {
    if (!(QUEUE_MODES as readonly string[]).includes(input.mode)) throw new Invalid(`mode must be one of ${QUEUE_MODES.join(', ')}`);
    if (typeof input.change_ref !== 'string' || input.change_ref === '') throw new Invalid('change_ref is required');
    if (input.target_line !== undefined && input.target_line !== null) validateLineName(input.target_line);
    const change = this.book.change(input.change_ref);
    const bypass = input.bypass === true;
    if (bypass && !this.lands.mayBypass(by)) throw new Forbidden(`${by === null ? 'an unidentified caller' : by} may not bypass the rules of this repository (only the accounts and groups of its bypass_allowed rule may)`);
    const gateOpts = { caller: by, bypass };
    const target0 = input.target_line ?? change.land_target_line;
    await this.lands.prepare(this.store.line(target0)?.head_snapshot_id ?? null, change.selected_patchset_id ? this.book.patchset(change.selected_patchset_id) : null);
    // A stack lands in order: the open changes below this one that are not queued join with it,
    // bottom first, in the same commit (as Gerrit submits a change with its ready ancestors);
    // should one of them not be queueable, nothing is queued and the refusal names it.
    const below = this.unqueuedBelow(change);
    for (const b of below) await this.lands.prepare(this.store.line(target0)?.head_snapshot_id ?? null, b.selected_patchset_id ? this.book.patchset(b.selected_patchset_id) : null);
    for (const b of below) this.checkQueueable(null, b, target0, gateOpts, true);
    this.checkQueueable(null, change, target0, gateOpts, below.length > 0);
    const entry = await this.store.transact((tx) => {
      const c = tx.entity<ChangeRecord>(CHANGE, change.change_id)!;
      const target = input.target_line ?? c.land_target_line;
      const stage = (c: ChangeRecord, alongside: boolean): QueueEntryRecord => {
        const ps = this.checkQueueable(tx, c, target, gateOpts, alongside);
        const sequence = Math.max(this.highestEntry, this.store.idFloor('land_queue_entry')) + tx.stagedKeys(NEW_ENTRY).length + 1;
        const now = nowSeconds();
        const e: QueueEntryRecord = {
          entry_id: `lq-${sequence}`,
          sequence,
          version: 1,
          change_id: c.change_id,
          change_ref: c.change_ref,
          task_id: c.task_id,
          patchset_id: ps.patchset_id,
          target_line: target,
          mode: input.mode as QueueMode,
          state: 'queued',
          speculation: null,
          batch_limit: null,
          passed_on_retry: false,
          land_id: null,
          landed_snapshot_id: null,
          ejection: null,
          enqueued_at_s: now,
          updated_at_s: now,
          finished_at_s: null,
          ...(by !== null ? { enqueued_by: by } : {}),
          ...(bypass ? { bypass: true as const } : {}),
        };
        tx.stage(NEW_ENTRY, e.entry_id, e);
        tx.stage(`${NEW_ENTRY}:change`, c.change_id, e.entry_id);
        this.write(tx, undefined, e);
        return e;
      };
      for (const b of below) stage(tx.entity<ChangeRecord>(CHANGE, b.change_id)!, true);
      return stage(c, below.length > 0);
    });
    this.kick();
    return entry;
  }

  /**
   * Whether the change can join the queue: open, its selected patchset usable, the target line
   * active, not queued already, and its gates passing but for CI (which the queue runs on the
   * result). Returns the selected patchset.
   */
  private checkQueueable(tx: Txn | null, change: ChangeRecord, target: string, opts: { caller: string | null; bypass: boolean }, belowJoins = false): PatchsetRecord {
    validateLineName(target);
    if (!isOpenChange(change.status)) throw new Conflict(`change ${change.change_id} is ${change.status}; only open changes join the land queue`);
    if (!change.selected_patchset_id) throw new Conflict(`change ${change.change_id} has no patchset to land`);
    const ps = tx ? tx.entity<PatchsetRecord>(PATCHSET, change.selected_patchset_id)! : this.book.patchset(change.selected_patchset_id);
    if (ps.withdrawn || ps.invalidated) throw new Conflict(`patchset ${ps.patchset_id} is withdrawn or invalidated`);
    const line = tx ? tx.line(target) : this.store.line(target);
    if (!line) throw new NotFound(`line ${target} does not exist`);
    if (line.status === 'archived') throw new Conflict(`line ${target} is archived; archived lines do not move`);
    if (line.head_snapshot_id === null) throw new Conflict(`line ${target} is empty; a land needs a head to land onto`);
    const queued = this.byChange.get(change.change_id) ?? (tx ? tx.staged<string>(`${NEW_ENTRY}:change`, change.change_id) : undefined);
    if (queued) throw new Conflict(`change ${change.change_id} is already in the land queue as ${queued}`);
    if (this.activeCount + (tx ? tx.stagedKeys(NEW_ENTRY).length : 0) >= MAX_ACTIVE_ENTRIES) throw new Conflict(`the land queue holds ${MAX_ACTIVE_ENTRIES} active entries; wait for some to land`);
    // The gates but CI: judged as if the CI of the result passed (the queue runs that CI). A
    // change below queued ahead on this line (or joining with it) lands first: not a refusal.
    const below = this.book.stacks.belowOf(ps, tx ?? undefined);
    const belowQueued = below !== null && isOpenChange(below.change.status) && (belowJoins || this.queuedOn(tx, below.change.change_id, target));
    const refusal = this.gates(ps, undefined, HYPOTHETICAL_PASS, { target, ...opts, stack: !belowQueued }).refusal;
    if (refusal) throw new Conflict(`change ${change.change_id} cannot join the land queue: ${refusal.kind}: ${refusal.message}`);
    return ps;
  }

  /** Whether the change has an active entry onto `target` (or one staged in `tx`). */
  private queuedOn(tx: Txn | null, changeId: string, target: string): boolean {
    const id = (tx ? tx.staged<string>(`${NEW_ENTRY}:change`, changeId) : undefined) ?? this.byChange.get(changeId);
    if (id === undefined) return false;
    const e = tx?.staged<QueueEntryRecord>(NEW_ENTRY, id) ?? this.entryIn(tx, id);
    return e !== undefined && e !== null && isActiveEntry(e) && e.target_line === target;
  }

  /**
   * The open changes below `change` in its stack that are not queued, bottom first (the walk
   * stops at a queued one, a landed one, or after MAX_STACK).
   */
  private unqueuedBelow(change: ChangeRecord): ChangeRecord[] {
    const out: ChangeRecord[] = [];
    const seen = new Set([change.change_id]);
    let ps = change.selected_patchset_id ? this.book.patchset(change.selected_patchset_id) : null;
    while (ps && out.length < MAX_STACK) {
      const below = this.book.stacks.belowOf(ps);
      if (!below || !isOpenChange(below.change.status) || this.byChange.has(below.change.change_id) || seen.has(below.change.change_id)) break;
      seen.add(below.change.change_id);
      out.push(below.change);
      ps = below.change.selected_patchset_id ? this.book.patchset(below.change.selected_patchset_id) : null;
    }
    return out.reverse();
  }

  async remove(id: string): Promise<QueueEntryRecord> {
    this.entry(id);
    const out = await this.store.transact((tx) => {
      const e = this.entryIn(tx, id)!;
      if (!isActiveEntry(e)) throw new Conflict(`land-queue entry ${id} is ${e.state}; only queued or testing entries are removed`);
      this.cancelJobs(tx, e, `land-queue entry ${id} was removed`);
      return this.write(tx, e, { ...e, state: 'removed', speculation: e.speculation, finished_at_s: nowSeconds() });
    });
    this.kick();
    return out;
  }

  // ------------------------------------------------------------ the driver

  /**
   * Start driving the queue: moves are made after every commit of this repository (a job's
   * completion, a line move, a change closed), and on a timer for stall reports. `writable`
   * says whether the repository takes writes (a retiring one does not).
   */
  start(options: QueueOptions, writable: () => boolean, log: Log): void {
    this.options = options;
    this.writable = writable;
    this.log = log;
    this.stopped = false;
    this.unsubscribe = this.store.onEvents((events) => {
      if (this.active.size > 0 && events.some((e) => !e.type.startsWith('queue.'))) this.kick();
    });
    this.timer = setInterval(() => this.kick(), Math.min(30_000, Math.max(1000, (options.stall_s * 1000) / 4)));
    this.timer.unref();
    this.kick();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Run the queue's moves now (coalesced: one pass at a time, another after it when asked meanwhile). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.drive();
        } catch (err) {
          this.log?.error({ problem: (err as Error).message }, 'land queue move failed; retried on the next commit or tick');
        }
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.running = null;
    });
  }

  /** Wait until the queue has no move to make now (tests). */
  async settle(): Promise<void> {
    for (let i = 0; i < 1000; i++) {
      while (this.running) await this.running;
      await new Promise((r) => setImmediate(r));
      if (!this.running) return;
    }
  }

  /** Make moves on every line until none is left (bounded, so a defect cannot spin forever). */
  private async drive(): Promise<void> {
    const failed = new Set<string>();
    for (let step = 0; step < 10_000; step++) {
      if (this.stopped || !this.writable() || this.store.isClosed) return;
      let moved = false;
      for (const line of [...this.active.keys()]) {
        if (failed.has(line)) continue;
        try {
          const move = nextQueueMove(this.facts(line), this.options);
          // A move that found its records changed wrote nothing; the next commit or tick decides again.
          if (move && (await this.apply(move))) moved = true;
        } catch (err) {
          // One line's failure (a damaged object, say) holds up that line only, until the next pass.
          failed.add(line);
          if (this.store.isClosed) return;
          this.log?.error({ target_line: line, problem: (err as Error).message }, 'land queue move failed; retried on the next commit or tick');
        }
      }
      if (!moved) return;
    }
    this.log?.warn({}, 'land queue stopped after 10,000 moves in one pass');
  }

  private facts(line: string) {
    const l = this.store.line(line);
    return {
      head: l?.head_snapshot_id ?? null,
      line_problem: !l ? `line ${line} no longer exists` : l.status === 'archived' ? `line ${line} was archived` : null,
      entries: this.activeEntries(line),
      unlandable: (e: QueueEntryRecord) => this.unlandable(e),
      job: (i: number) => jobVerdict(this.jobs.peek(i)),
      now_s: nowSeconds(),
    };
  }

  private unlandable(e: QueueEntryRecord): { reason: 'change_not_landable' | 'patchset_changed'; message: string } | null {
    const c = this.store.entity<ChangeRecord>(CHANGE, e.change_id);
    if (!c || !isOpenChange(c.status)) return { reason: 'change_not_landable', message: `change ${e.change_id} is ${c?.status ?? 'gone'}` };
    if (c.selected_patchset_id !== e.patchset_id) return { reason: 'patchset_changed', message: `change ${e.change_id} selected patchset ${c.selected_patchset_id} after ${e.patchset_id} was queued; queue it again` };
    const ps = this.store.entity<PatchsetRecord>(PATCHSET, e.patchset_id);
    if (!ps || ps.withdrawn || ps.invalidated) return { reason: 'patchset_changed', message: `patchset ${e.patchset_id} is withdrawn or invalidated` };
    return null;
  }

  private async apply(move: QueueMove): Promise<boolean> {
    crashPoint(`queue:${move.kind}`);
    switch (move.kind) {
      case 'eject':
        return this.eject(move.entry, { reason: move.reason, message: move.message, worker_job_indexes: [], failing_suites: [], conflict_paths: [] });
      case 'eject_failed': {
        const last = this.jobs.peek(move.jobs.at(-1)!);
        const failing = last?.detail.result?.suite_results.filter((s) => s.status === 'fail').map((s) => s.suite_id) ?? [];
        const why = last?.detail.result ? `tests ${last.detail.result.tests_status}, status ${last.detail.result.status}${failing.length ? `, failing suites: ${failing.join(', ')}` : ''}` : `the job failed: ${last?.detail.error ?? 'no detail'}`;
        return this.eject(move.entry, {
          reason: 'ci_failed',
          message: `CI of speculative snapshot ${move.entry.speculation!.snapshot_id} failed ${move.jobs.length} time(s) (last: job ${move.jobs.at(-1)}: ${why})`,
          worker_job_indexes: move.jobs,
          failing_suites: failing,
          conflict_paths: [],
        });
      }
      case 'reset':
        return this.txn(move.entries, (tx, current) => {
          for (const e of current) {
            this.cancelJobs(tx, e, `land-queue entry ${e.entry_id}: its speculation is rebuilt`);
            this.write(tx, e, { ...e, state: 'queued', speculation: null });
          }
        });
      case 'bisect': {
        const limits = bisectLimits(move.batch);
        return this.txn([...move.batch, ...move.behind], (tx, current) => {
          for (const e of current) {
            this.cancelJobs(tx, e, `land-queue entry ${e.entry_id}: its batch failed and is tested in halves`);
            this.write(tx, e, { ...e, state: 'queued', speculation: null, batch_limit: limits.get(e.entry_id) ?? e.batch_limit });
          }
        });
      }
      case 'retry':
        return this.txn([move.entry], (tx, [e]) => {
          const spec = e.speculation!;
          const job = this.enqueueCi(tx, spec.snapshot_id, spec.root_tree_id, spec.covers, 'land_queue_retry');
          this.write(tx, e, { ...e, speculation: { ...spec, worker_job_indexes: [...spec.worker_job_indexes, job.worker_job_index], stalled_at_s: null } });
        });
      case 'stalled':
        this.log?.warn({ entry_id: move.entry.entry_id, worker_job_index: move.worker_job_index }, 'land-queue entry stalled: its CI job has not progressed');
        return this.txn([move.entry], (tx, [e]) => {
          this.write(tx, e, { ...e, speculation: { ...e.speculation!, stalled_at_s: nowSeconds() } });
        });
      case 'land':
        await this.lands.prepare(move.entry.speculation?.base_snapshot_id ?? null, this.book.patchset(move.entry.patchset_id));
        return this.land(move.entry, move.evidence_job);
      case 'build':
        return this.build(move.entries, move.base, move.ahead);
    }
  }

  /**
   * Run `fn` on the entries as this transaction sees them, only when none changed since the move
   * was decided (versions equal, still active); otherwise the move is dropped and decided again.
   */
  private txn(entries: QueueEntryRecord[], fn: (tx: Txn, current: QueueEntryRecord[]) => boolean | void, check?: (tx: Txn) => boolean): Promise<boolean> {
    return this.store.transact((tx) => {
      const current = entries.map((e) => this.entryIn(tx, e.entry_id)!);
      if (current.some((c, i) => !c || c.version !== entries[i].version || !isActiveEntry(c))) return false;
      if (check && !check(tx)) return false;
      return fn(tx, current) !== false;
    });
  }

  private write(tx: Txn, before: QueueEntryRecord | undefined, after: QueueEntryRecord): QueueEntryRecord {
    const next = { ...after, version: before ? before.version + 1 : after.version, updated_at_s: nowSeconds() };
    tx.emitAll(queueEntryEvents(before, next));
    tx.upsert(QUEUE_ENTRY, next.entry_id, next);
    tx.onPublish(() => this.track(next));
    return next;
  }

  /** End the queued jobs of an entry's speculation (when it runs the CI of its batch). */
  private cancelJobs(tx: Txn, e: QueueEntryRecord, why: string): void {
    const spec = e.speculation;
    if (spec && spec.tested_by === e.entry_id) this.jobs.cancelQueuedIn(tx, spec.worker_job_indexes, why);
  }

  /** Queue the repo.ci job of a speculation (`stagedIndex`: the snapshot's index when this transaction stages it). */
  private enqueueCi(tx: Txn, snapshotId: string, rootTree: string, covers: string[], trigger: string, stagedIndex: number | null = null): JobRecord {
    const index = stagedIndex ?? this.store.snapshot(snapshotId)?.snapshot_index ?? null;
    return this.jobs.enqueueIn(tx, JOB_KIND_REPO_CI, { snapshot_id: snapshotId, snapshot_index: index, trigger, land_queue_entry_ids: covers, root_tree_id: rootTree });
  }

  private eject(entry: QueueEntryRecord, ejection: Ejection): Promise<boolean> {
    return this.txn([entry], (tx, [e]) => {
      this.ejectIn(tx, e, ejection);
    });
  }

  /** Eject `e` (as `tx` sees it) in `tx`: its queued jobs end; the speculations behind it are rebuilt by the next moves. */
  private ejectIn(tx: Txn, e: QueueEntryRecord, ejection: Ejection): void {
    this.cancelJobs(tx, e, `land-queue entry ${e.entry_id} was ejected (${ejection.reason})`);
    this.write(tx, e, { ...e, state: 'ejected', ejection, finished_at_s: nowSeconds() });
    tx.onPublish(() => this.log?.info({ entry_id: e.entry_id, change_id: e.change_id, reason: ejection.reason }, 'land-queue entry ejected'));
  }

  /** Land the front entry onto the head its speculation was built on, judged by that speculation's CI. */
  private land(entry: QueueEntryRecord, evidenceJob: number): Promise<boolean> {
    return this.txn([entry], (tx, [e]) => {
      const spec = e.speculation!;
      const line = tx.line(e.target_line);
      // The line moved, or the change changed, since the move was decided: decide again.
      if (line?.head_snapshot_id !== spec.base_snapshot_id || line.status === 'archived') return false;
      const change = tx.entity<ChangeRecord>(CHANGE, e.change_id)!;
      const ps = tx.entity<PatchsetRecord>(PATCHSET, e.patchset_id)!;
      if (!isOpenChange(change.status) || change.selected_patchset_id !== e.patchset_id || ps.withdrawn || ps.invalidated) return false;
      const job = this.jobs.jobIn(tx, evidenceJob);
      if (!job || jobVerdict(job)?.verdict !== 'pass') return false;
      const tester = spec.tested_by === e.entry_id ? e : this.entryIn(tx, spec.tested_by)!;
      const retried = (tester.speculation?.worker_job_indexes.length ?? 0) > 1 && tester.speculation?.reused_worker_job_index === null;
      const land = this.lands.landSpeculationIn(tx, { change, patchset: ps, mode: e.mode, target: e.target_line, head: spec.base_snapshot_id, landed: spec.snapshot_id, action: spec.line_action, entry_id: e.entry_id, ci: speculationCi(job), by: e.enqueued_by ?? null, bypass: e.bypass === true });
      if (land.status === 'landed') {
        this.write(tx, e, { ...e, state: 'landed', land_id: land.land_id, landed_snapshot_id: land.landed_snapshot_id, passed_on_retry: retried, finished_at_s: land.finished_at_s });
      } else {
        this.cancelJobs(tx, e, `land-queue entry ${e.entry_id} was ejected (gates)`);
        this.write(tx, e, { ...e, state: 'ejected', land_id: land.land_id, ejection: { reason: 'gates', message: `${land.failure_kind}: ${land.failure_message}`, worker_job_indexes: [evidenceJob], failing_suites: [], conflict_paths: [] }, finished_at_s: land.finished_at_s });
      }
    });
  }

  /**
   * Build the speculations of a batch on `base`: merge each entry's patchset onto the snapshot
   * before it (outside the transaction, from immutable snapshots), then in one transaction store
   * the merged objects and snapshots, queue one CI job for the batch's last snapshot (or reuse a
   * passed run of the same tree) and record the speculations. A conflict ejects the entry; the
   * entries before it form the batch.
   */
  private async build(entries: QueueEntryRecord[], base: string, ahead: string[]): Promise<boolean> {
    const built: { entry: QueueEntryRecord; base: string; merged: Awaited<ReturnType<LandDesk['mergeOnto']>> & { conflicts: null } }[] = [];
    let prev = base;
    const pending: PendingMerges = { snapshots: new Map(), trees: new Map(), blobs: new Map() };
    for (const e of entries) {
      const ps = this.book.patchset(e.patchset_id);
      let merged;
      try {
        merged = await this.lands.mergeOnto(prev, ps, e.mode, e.change_ref, pending);
      } catch (err) {
        // A merge over the paths a snapshot may hold cannot land, like a conflict: eject it
        // rather than hold the line retrying (the batch before it stays).
        if (!(err instanceof OverLimit)) throw err;
        if (built.length === 0) return this.eject(e, { reason: 'conflict', message: err.message, worker_job_indexes: [], failing_suites: [], conflict_paths: [] });
        break;
      }
      if (merged.conflicts) {
        if (built.length === 0) {
          const paths = merged.conflicts.map((c) => c.path);
          return this.eject(e, { reason: 'conflict', message: `${merged.conflict_count} conflicting path(s) merging ${e.patchset_id} onto ${prev}: ${paths.slice(0, 5).join(', ')}${merged.conflict_count > 5 ? ', …' : ''}`, worker_job_indexes: [], failing_suites: [], conflict_paths: paths.slice(0, MAX_EJECTION_PATHS) });
        }
        break;
      }
      built.push({ entry: e, base: prev, merged });
      if (merged.snapshot) pending.snapshots.set(merged.landed, decodeSnapshot(merged.snapshot));
      for (const [id, raw] of merged.merge?.trees ?? []) pending.trees.set(id, raw);
      for (const [id, raw] of merged.merge?.blobs ?? []) pending.blobs.set(id, raw);
      prev = merged.landed;
    }
    const tester = built.at(-1)!;
    const covers = built.map((b) => b.entry.entry_id);
    const aheadEntries = ahead.map((id) => this.entryIn(null, id)!);
    return this.txn([...aheadEntries, ...built.map((b) => b.entry)], (tx, current) => {
      const mine = current.slice(aheadEntries.length);
      const reused = this.passedRunOf(tester.merged.root_tree_id, tester.entry);
      let index: number | null = null;
      for (const b of built) index = this.lands.stageMerged(tx, b.merged);
      const job = reused === null ? this.enqueueCi(tx, tester.merged.landed, tester.merged.root_tree_id, covers, 'land_queue', index) : null;
      const now = nowSeconds();
      mine.forEach((e, i) => {
        const b = built[i];
        const spec: Speculation = {
          base_snapshot_id: b.base,
          snapshot_id: b.merged.landed,
          root_tree_id: b.merged.root_tree_id,
          line_action: b.merged.action,
          ahead: [...ahead, ...covers.slice(0, i)],
          tested_by: tester.entry.entry_id,
          covers: e.entry_id === tester.entry.entry_id ? covers : [],
          worker_job_indexes: e.entry_id === tester.entry.entry_id && job ? [job.worker_job_index] : [],
          reused_worker_job_index: e.entry_id === tester.entry.entry_id ? reused : null,
          built_at_s: now,
          stalled_at_s: null,
        };
        this.write(tx, e, { ...e, state: 'testing', speculation: spec });
      });
    }, (tx) => {
      // The chain still starts where it did: the line head, or the speculation of the entry ahead.
      if (ahead.length === 0) return tx.line(entries[0].target_line)?.head_snapshot_id === base;
      return this.entryIn(tx, ahead.at(-1)!)?.speculation?.snapshot_id === base;
    });
  }

  /**
   * A passed CI run of the same root tree, reused instead of running CI again: a queue job that
   * passed on that tree, or the entry's own patchset CI when the tree is its revision's tree.
   */
  private passedRunOf(rootTree: string, entry: QueueEntryRecord): number | null {
    if (!this.passedTrees) {
      this.passedTrees = new Map();
      for (const job of this.jobs.each()) {
        if (job.kind === JOB_KIND_REPO_CI && job.detail.root_tree_id && jobVerdict(job)?.verdict === 'pass') this.passedTrees.set(job.detail.root_tree_id, job.worker_job_index);
      }
    }
    const queued = this.passedTrees.get(rootTree);
    if (queued !== undefined) return queued;
    const ps = this.book.patchset(entry.patchset_id);
    const revision = this.store.snapshot(ps.revision_snapshot_id);
    if (revision?.root_tree_id !== rootTree) return null;
    const ci = this.book.reviews.ci(ps.patchset_id);
    return ci.evidence?.overall === 'pass' && ci.evidence_job && ci.evidence_job.state === STATE_SUCCEEDED ? ci.evidence_job.worker_job_index : null;
  }
}

/** The CI the enqueue check assumes: a pass (the queue tests the result itself). */
const HYPOTHETICAL_PASS: SpeculationCi = {
  run_sequence: 1,
  // Lint passes too: an attestation that requires lint would otherwise refuse every change; the
  // land judges the lint of the real run.
  evidence: { worker_job_index: 0, run_sequence: 1, overall: 'pass', status: 'succeeded', tests: 'pass', lint: 'pass', suite_results: [], completed_at_s: 0 },
  evidence_job: null,
  active_job: null,
  latest_job: null,
  failed: false,
  jobs: [],
};
