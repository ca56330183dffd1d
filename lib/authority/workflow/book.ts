// Tasks, changes and patchsets of one authority (spec: "Task", "Change", "Patchset", "Tasks
// and read models"). Records are workflow.log upserts (storage-layout.md §17): each operation is
// one transaction, so an operation that writes several records (a patchset and its change)
// writes them in one workflow.log record under one commit point. In-memory indexes and the
// read-model counters follow each commit through `onPublish`, and are rebuilt at open from the
// store's replayed entity maps; no request scans every record.
import { requireContentId } from '../../domain/content.js';
import { Conflict, Corrupt, Invalid, NotFound } from '../../domain/errors.js';
import { validateLineName } from '../../domain/lines.js';
import { nowSeconds } from '../../domain/repository.js';
import { keepRows, takePage, walkFrom, type Page, type PageRequest } from '../../domain/paging.js';
import {
  auditVerdict,
  CHANGE,
  CHANGE_STATUSES,
  changeCloseMove,
  changeCloseStatus,
  changeId,
  changeRef,
  checkChangeOpen,
  checkSuppliedChangeId,
  checkPatchsetShape,
  checkSuppliedPatchset,
  checkSuppliedTaskId,
  isOpenChange,
  MAX_TEXT_CHARS,
  MAX_TITLE_CHARS,
  parseChangeRef,
  parseTaskRef,
  PATCHSET,
  patchsetId,
  requireAuthorMode,
  requireText,
  statusAfterPatchset,
  TASK,
  TASK_STATUSES,
  taskCloseMove,
  taskCloseStatus,
  taskId,
  type AuthorMode,
  type ChangeRecord,
  type ChangeStatus,
  type PatchsetRecord,
  type TaskRecord,
  type TaskStatus,
} from '../../domain/workflow/rules.js';
import { diffTrees, type TreeDiff } from '../../domain/workflow/tree-diff.js';
import type { ContentStore, Txn } from '../../store/content-store.js';
import type { JobQueue } from '../jobs.js';
import { changeEvents, patchsetEvents, taskEvents } from '../../domain/events.js';
import type { PlanBook } from '../plans.js';
import { ReviewBook } from './reviews.js';

export interface TaskInput {
  title: string;
  intent: string;
  task_id?: string;
  plan_id?: string | null;
  origin_plan_revision_id?: string | null;
  plan_item_ref?: string | null;
}

export interface ChangeInput {
  task_id: string;
  title: string;
  base_line: string;
  fork_snapshot_id?: string | null;
  change_id?: string;
}

export interface PatchsetInput {
  base_snapshot_id: string;
  revision_snapshot_id: string;
  summary: string;
  author_mode: string;
  author?: string | null;
  patchset_id?: string;
  patchset_number?: number;
}

type Counts<K extends string> = Record<K, number>;
const zero = <K extends string>(keys: readonly K[]): Counts<K> => Object.fromEntries(keys.map((k) => [k, 0])) as Counts<K>;

// Namespaces of per-batch staged state (new ids of the batch, patchset replay keys).
const NEW_TASK = 'wf:new-task';
const NEW_CHANGE = 'wf:new-change';
const PS_KEY = 'wf:patchset-key';

const contentKey = (change: string, base: string, revision: string) => `${change}\u0000${base}\u0000${revision}`;

export class WorkflowBook {
  private readonly tasks = new Map<string, TaskRecord>();
  private readonly changes = new Map<string, ChangeRecord>();
  private readonly patchsets = new Map<string, PatchsetRecord>();
  /** Task ids in sequence order; change ids per task and patchset ids per change, in order. */
  private readonly taskOrder: string[] = [];
  private readonly changeOrder: string[] = [];
  private readonly changesByTask = new Map<string, string[]>();
  private readonly patchsetsByChange = new Map<string, string[]>();
  private readonly patchsetByContent = new Map<string, string>();
  private readonly tasksByPlan = new Map<string, string[]>();
  /** Read-model counters, kept by `apply*`: tasks per status; changes per (owning task status, change status). */
  private readonly taskCounts = zero(TASK_STATUSES);
  private readonly changeCounts: Record<TaskStatus, Counts<ChangeStatus>> = { active: zero(CHANGE_STATUSES), completed: zero(CHANGE_STATUSES), abandoned: zero(CHANGE_STATUSES) };

  /** Reviews, attestations, policy decisions and patchset CI. */
  reviews!: ReviewBook;

  private constructor(private readonly store: ContentStore, private readonly plans: PlanBook, private readonly jobs: JobQueue) {}

  /** Build the indexes from the store's replayed workflow.log entities. */
  static open(store: ContentStore, plans: PlanBook, jobs: JobQueue): WorkflowBook {
    const book = new WorkflowBook(store, plans, jobs);
    const bySeq = <T extends { sequence: number }>(type: string) => [...store.entitiesOf<T>(type)].map(([, b]) => b).sort((a, b) => a.sequence - b.sequence);
    for (const t of bySeq<TaskRecord>(TASK)) book.applyTask(t);
    for (const c of bySeq<ChangeRecord>(CHANGE)) book.applyChange(c);
    for (const [, p] of store.entitiesOf<PatchsetRecord>(PATCHSET)) book.applyPatchset(p);
    for (const list of book.patchsetsByChange.values()) list.sort((a, b) => book.patchsets.get(a)!.patchset_number - book.patchsets.get(b)!.patchset_number);
    book.reviews = ReviewBook.open(store, book, book.jobs);
    return book;
  }

  // ------------------------------------------------------------ applying committed records

  private applyTask(t: TaskRecord): void {
    const prev = this.tasks.get(t.task_id);
    if (prev) {
      this.taskCounts[prev.status]--;
      if (prev.status !== t.status) {
        for (const id of this.changesByTask.get(t.task_id) ?? []) {
          const s = this.changes.get(id)!.status;
          this.changeCounts[prev.status][s]--;
          this.changeCounts[t.status][s]++;
        }
      }
    } else {
      this.taskOrder.push(t.task_id);
      if (t.plan_id) {
        const list = this.tasksByPlan.get(t.plan_id) ?? [];
        list.push(t.task_id);
        this.tasksByPlan.set(t.plan_id, list);
      }
    }
    this.taskCounts[t.status]++;
    this.tasks.set(t.task_id, t);
  }

  private applyChange(c: ChangeRecord): void {
    const prev = this.changes.get(c.change_id);
    const task = this.tasks.get(c.task_id);
    if (!task) throw new Corrupt(`workflow.log: change ${c.change_id} names task ${c.task_id}, which does not exist`);
    const owner = task.status;
    if (prev) this.changeCounts[owner][prev.status]--;
    else {
      this.changeOrder.push(c.change_id);
      const list = this.changesByTask.get(c.task_id) ?? [];
      list.push(c.change_id);
      this.changesByTask.set(c.task_id, list);
    }
    this.changeCounts[owner][c.status]++;
    this.changes.set(c.change_id, c);
  }

  private applyPatchset(p: PatchsetRecord): void {
    if (!this.changes.has(p.change_id)) throw new Corrupt(`workflow.log: patchset ${p.patchset_id} names change ${p.change_id}, which does not exist`);
    if (!this.patchsets.has(p.patchset_id)) {
      const list = this.patchsetsByChange.get(p.change_id) ?? [];
      list.push(p.patchset_id);
      this.patchsetsByChange.set(p.change_id, list);
      this.patchsetByContent.set(contentKey(p.change_id, p.base_snapshot_id, p.revision_snapshot_id), p.patchset_id);
    }
    this.patchsets.set(p.patchset_id, p);
  }

  upsertTask(tx: Txn, t: TaskRecord): void {
    tx.emitAll(taskEvents(tx.entity<TaskRecord>(TASK, t.task_id), t));
    tx.upsert(TASK, t.task_id, t);
    tx.onPublish(() => this.applyTask(t));
  }

  /** Also used by the review book (a review request moves the change to `review`). */
  upsertChange(tx: Txn, c: ChangeRecord): void {
    tx.emitAll(changeEvents(tx.entity<ChangeRecord>(CHANGE, c.change_id), c));
    tx.upsert(CHANGE, c.change_id, c);
    tx.onPublish(() => this.applyChange(c));
  }

  upsertPatchset(tx: Txn, p: PatchsetRecord): void {
    tx.emitAll(patchsetEvents(tx.entity<PatchsetRecord>(PATCHSET, p.patchset_id), p));
    tx.upsert(PATCHSET, p.patchset_id, p);
    tx.stage(PS_KEY, contentKey(p.change_id, p.base_snapshot_id, p.revision_snapshot_id), p.patchset_id);
    tx.onPublish(() => this.applyPatchset(p));
  }

  // ------------------------------------------------------------ lookups

  taskIn(tx: Txn | null, ref: string): TaskRecord {
    const id = parseTaskRef(ref);
    const t = id === null ? undefined : tx ? tx.entity<TaskRecord>(TASK, id) : this.tasks.get(id);
    if (!t) throw new NotFound(`task ${ref} does not exist`);
    return t;
  }

  changeIn(tx: Txn | null, ref: string): ChangeRecord {
    const parsed = parseChangeRef(ref);
    const c = parsed === null ? undefined : tx ? tx.entity<ChangeRecord>(CHANGE, parsed.change_id) : this.changes.get(parsed.change_id);
    if (!c || (parsed!.task_id !== null && parsed!.task_id !== c.task_id)) throw new NotFound(`change ${ref} does not exist`);
    return c;
  }

  task(ref: string): TaskRecord {
    return this.taskIn(null, ref);
  }

  change(ref: string): ChangeRecord {
    return this.changeIn(null, ref);
  }

  patchset(id: string): PatchsetRecord {
    const p = this.patchsets.get(id);
    if (!p) throw new NotFound(`patchset ${id} does not exist`);
    return p;
  }

  /** Tasks newest first; optional filters on status and plan. */
  listTasks(filter: { status?: TaskStatus; plan_id?: string }): TaskRecord[] {
    const ids = filter.plan_id !== undefined ? this.tasksByPlan.get(filter.plan_id) ?? [] : this.taskOrder;
    const out: TaskRecord[] = [];
    for (let i = ids.length - 1; i >= 0; i--) {
      const t = this.tasks.get(ids[i])!;
      if (filter.status === undefined || t.status === filter.status) out.push(t);
    }
    return out;
  }

  /** Changes newest first; optional filters on status and task. */
  listChanges(filter: { status?: ChangeStatus; task_id?: string }): ChangeRecord[] {
    let ids = this.changeOrder;
    if (filter.task_id !== undefined) ids = this.changesByTask.get(this.taskIn(null, filter.task_id).task_id) ?? [];
    const out: ChangeRecord[] = [];
    for (let i = ids.length - 1; i >= 0; i--) {
      const c = this.changes.get(ids[i])!;
      if (filter.status === undefined || c.status === filter.status) out.push(c);
    }
    return out;
  }

  /** One page of tasks, newest first (cursor key: the task sequence). */
  pageTasks(filter: { status?: TaskStatus; plan_id?: string }, req: PageRequest, list = 'tasks'): Page<TaskRecord> {
    const ids = filter.plan_id !== undefined ? this.tasksByPlan.get(filter.plan_id) ?? [] : this.taskOrder;
    const rows = walkFrom(ids.length, (i) => this.tasks.get(ids[i])!, (t) => t.sequence, req.after, 'desc');
    return takePage(list, req, keepRows(rows, (t) => filter.status === undefined || t.status === filter.status), 'desc');
  }

  /** One page of changes, newest first (cursor key: the change sequence). */
  pageChanges(filter: { status?: ChangeStatus; task_id?: string }, req: PageRequest): Page<ChangeRecord> {
    const ids = filter.task_id !== undefined ? this.changesByTask.get(this.taskIn(null, filter.task_id).task_id) ?? [] : this.changeOrder;
    const rows = walkFrom(ids.length, (i) => this.changes.get(ids[i])!, (c) => c.sequence, req.after, 'desc');
    return takePage('changes', req, keepRows(rows, (c) => filter.status === undefined || c.status === filter.status), 'desc');
  }

  /** One page of a change's patchsets in number order (cursor key: the patchset number). */
  pagePatchsets(ref: string, req: PageRequest): { change: ChangeRecord; page: Page<PatchsetRecord> } {
    const change = this.changeIn(null, ref);
    const ids = this.patchsetsByChange.get(change.change_id) ?? [];
    return { change, page: takePage('patchsets', req, walkFrom(ids.length, (i) => this.patchsets.get(ids[i])!, (p) => p.patchset_number, req.after, 'asc'), 'asc') };
  }

  changesOf(taskIdValue: string): ChangeRecord[] {
    return (this.changesByTask.get(taskIdValue) ?? []).map((id) => this.changes.get(id)!);
  }

  /** A change's patchsets in ordinal order. */
  patchsetsOf(ref: string): { change: ChangeRecord; patchsets: PatchsetRecord[] } {
    const change = this.changeIn(null, ref);
    return { change, patchsets: (this.patchsetsByChange.get(change.change_id) ?? []).map((id) => this.patchsets.get(id)!) };
  }

  /** Tasks linked to a plan (candidate-inputs read model), oldest first. */
  tasksLinkedTo(planId: string): TaskRecord[] {
    return (this.tasksByPlan.get(planId) ?? []).map((id) => this.tasks.get(id)!);
  }

  // ------------------------------------------------------------ tasks

  createTask(input: TaskInput): Promise<TaskRecord> {
    const title = requireText(input.title, 'title', MAX_TITLE_CHARS);
    const intent = requireText(input.intent, 'intent', MAX_TEXT_CHARS);
    // Linkage resolves against the published plans (revisions are immutable; the resolved revision is recorded).
    const linkage = this.plans.resolveLinkage(input);
    return this.store.transact((tx) => this.stageTask(tx, { title, intent, linkage, task_id: input.task_id }));
  }

  /** The next task id inside `tx` (what stageTask would create). */
  nextTaskId(tx: Txn): string {
    return taskId(this.tasks.size + tx.stagedKeys(NEW_TASK).length + 1);
  }

  /** Stage a new active task in `tx` (text checked and linkage resolved by the caller). */
  stageTask(tx: Txn, fields: { title: string; intent: string; linkage: Pick<TaskRecord, 'plan_id' | 'origin_plan_revision_id' | 'plan_item_ref'>; task_id?: string; promoted_from?: TaskRecord['promoted_from'] }): TaskRecord {
    const sequence = this.tasks.size + tx.stagedKeys(NEW_TASK).length + 1;
    const id = taskId(sequence);
    checkSuppliedTaskId(fields.task_id, id);
    const now = nowSeconds();
    const task: TaskRecord = { task_id: id, sequence, title: fields.title, intent: fields.intent, ...fields.linkage, status: 'active', created_at_s: now, updated_at_s: now, closed_at_s: null };
    if (fields.promoted_from) task.promoted_from = fields.promoted_from;
    tx.stage(NEW_TASK, id, true);
    this.upsertTask(tx, task);
    return task;
  }

  /** Stage a new task in `tx` (validated title/intent, resolved linkage): task-start's entry. */
  createTaskIn(tx: Txn, input: TaskInput, linkage: Pick<TaskRecord, 'plan_id' | 'origin_plan_revision_id' | 'plan_item_ref'>): TaskRecord {
    return this.stageTask(tx, { title: input.title, intent: input.intent, linkage, task_id: input.task_id });
  }

  closeTask(ref: string, status: string): Promise<TaskRecord> {
    return this.store.transact((tx) => {
      const task = this.taskIn(tx, ref);
      const next = taskCloseStatus(status);
      if (taskCloseMove(task, next) === 'same') return task;
      const now = nowSeconds();
      const closed: TaskRecord = { ...task, status: next, updated_at_s: now, closed_at_s: now };
      this.upsertTask(tx, closed);
      return closed;
    });
  }

  // ------------------------------------------------------------ changes

  createChange(input: ChangeInput): Promise<ChangeRecord> {
    const title = requireText(input.title, 'title', MAX_TITLE_CHARS);
    validateLineName(input.base_line);
    if (input.fork_snapshot_id !== undefined && input.fork_snapshot_id !== null) requireContentId(input.fork_snapshot_id, 'fork_snapshot_id');
    if (parseTaskRef(input.task_id) === null) throw new Invalid('task_id must be a task id (task-<sequence>)');
    return this.store.transact((tx) => this.createChangeIn(tx, input, title));
  }

  /** Stage a new change in `tx` (title validated, base line and fork checked against `tx`). */
  createChangeIn(tx: Txn, input: ChangeInput, title: string): ChangeRecord {
    {
      const task = this.taskIn(tx, input.task_id);
      if (task.status !== 'active') throw new Invalid(`task ${task.task_id} is ${task.status}; changes are created only for active tasks`);
      const line = tx.line(input.base_line);
      if (!line) throw new NotFound(`line ${input.base_line} does not exist`);
      const head = line.head_snapshot_id;
      if (input.fork_snapshot_id !== undefined && input.fork_snapshot_id !== null && input.fork_snapshot_id !== head) {
        throw new Conflict(`fork_snapshot_id is not the head of line ${input.base_line} (${head ?? 'empty'})`);
      }
      return this.stageChange(tx, task, { title, base_line: input.base_line, fork_snapshot_id: head, change_id: input.change_id });
    }
  }

  /** The next change identity inside `tx` for a change of task `task` (what stageChange would create). */
  nextChangeIdentity(tx: Txn, task: string): { change_id: string; change_ref: string } {
    const sequence = this.changes.size + tx.stagedKeys(NEW_CHANGE).length + 1;
    return { change_id: changeId(sequence), change_ref: changeRef(task, sequence) };
  }

  /** Stage a new draft change of `task` in `tx` (task state, line and fork checked by the caller). */
  stageChange(tx: Txn, task: TaskRecord, fields: { title: string; base_line: string; fork_snapshot_id: string | null; change_id?: string; promoted_from?: ChangeRecord['promoted_from'] }): ChangeRecord {
    const sequence = this.changes.size + tx.stagedKeys(NEW_CHANGE).length + 1;
    const id = changeId(sequence);
    const ref = changeRef(task.task_id, sequence);
    checkSuppliedChangeId(fields.change_id, { change_id: id, change_ref: ref });
    const now = nowSeconds();
    const change: ChangeRecord = {
      change_id: id,
      change_ref: ref,
      sequence,
      task_id: task.task_id,
      title: fields.title,
      base_line: fields.base_line,
      fork_snapshot_id: fields.fork_snapshot_id,
      status: 'draft',
      patchset_count: 0,
      current_patchset_id: null,
      selected_patchset_id: null,
      land_target_line: fields.base_line,
      created_at_s: now,
      updated_at_s: now,
      closed_at_s: null,
      landed_at_s: null,
    };
    if (fields.promoted_from) change.promoted_from = fields.promoted_from;
    tx.stage(NEW_CHANGE, id, true);
    this.upsertChange(tx, change);
    return change;
  }

  closeChange(ref: string, status: string): Promise<ChangeRecord> {
    return this.store.transact((tx) => {
      const change = this.changeIn(tx, ref);
      const next = changeCloseStatus(status);
      if (changeCloseMove(change, next) === 'same') return change;
      const now = nowSeconds();
      // closed_at_s keeps the time the change left the open statuses; a move among the closed ones updates updated_at_s.
      const closed: ChangeRecord = { ...change, status: next, updated_at_s: now, closed_at_s: change.closed_at_s ?? now };
      this.upsertChange(tx, closed);
      return closed;
    });
  }

  selectPatchset(ref: string, patchsetIdValue: string): Promise<ChangeRecord> {
    return this.store.transact((tx) => {
      const change = this.changeIn(tx, ref);
      const ps = tx.entity<PatchsetRecord>(PATCHSET, patchsetIdValue);
      if (!ps) throw new NotFound(`patchset ${patchsetIdValue} does not exist`);
      if (ps.change_id !== change.change_id) throw new Invalid(`patchset ${patchsetIdValue} belongs to ${ps.change_id}, not to ${change.change_id}`);
      checkChangeOpen(change, 'select a patchset');
      if (ps.withdrawn) throw new Invalid(`patchset ${patchsetIdValue} is withdrawn`);
      if (ps.invalidated) throw new Invalid(`patchset ${patchsetIdValue} is invalidated`);
      if (change.selected_patchset_id === ps.patchset_id) return change;
      const next: ChangeRecord = { ...change, selected_patchset_id: ps.patchset_id, updated_at_s: nowSeconds() };
      this.upsertChange(tx, next);
      return next;
    });
  }

  // ------------------------------------------------------------ patchsets

  /**
   * Create a patchset (one transaction: the patchset record and its change's new counters and
   * status). A replay with the same change, base and revision returns the existing patchset.
   * The tree diff runs before the transaction (snapshots are immutable), so the commit queue
   * never waits on it.
   */
  async createPatchset(ref: string, input: PatchsetInput): Promise<{ patchset: PatchsetRecord; replayed: boolean }> {
    const published = this.changeIn(null, ref);
    requireContentId(input.base_snapshot_id, 'base_snapshot_id');
    requireContentId(input.revision_snapshot_id, 'revision_snapshot_id');
    const summary = requireText(input.summary, 'summary', MAX_TEXT_CHARS);
    const authorMode = requireAuthorMode(input.author_mode);
    const author = input.author === undefined || input.author === null ? null : requireText(input.author, 'author', MAX_TITLE_CHARS);
    checkPatchsetShape(input);
    const key = contentKey(published.change_id, input.base_snapshot_id, input.revision_snapshot_id);
    const existing = this.patchsetByContent.get(key);
    if (existing) return { patchset: this.replay(this.patchsets.get(existing)!, input), replayed: true };
    const base = this.store.snapshot(input.base_snapshot_id);
    if (!base) throw new NotFound(`snapshot ${input.base_snapshot_id} is not present`);
    const revision = this.store.snapshot(input.revision_snapshot_id);
    if (!revision) throw new NotFound(`snapshot ${input.revision_snapshot_id} is not present`);
    checkChangeOpen(published, 'add a patchset');
    const diff = await this.diff(base.root_tree_id, revision.root_tree_id);
    return this.store.transact((tx) => {
      const change = this.changeIn(tx, ref);
      const again = tx.staged<string>(PS_KEY, key) ?? this.patchsetByContent.get(key);
      if (again) return { patchset: this.replay(tx.entity<PatchsetRecord>(PATCHSET, again)!, input), replayed: true };
      checkChangeOpen(change, 'add a patchset');
      return { patchset: this.stagePatchset(tx, change, { ...input, summary, author_mode: authorMode, author }, diff).patchset, replayed: false };
    });
  }

  /** The tree diff of two root trees (runs outside transactions: snapshots are immutable). */
  diff(baseRoot: string, revisionRoot: string): Promise<TreeDiff> {
    return diffTrees({
      readTree: (id) => this.store.readTree(id),
      blobSize: (id) => this.store.locator('blob', id)?.raw_length ?? 0,
      readBlob: (id) => this.store.readObject('blob', id),
    }, baseRoot, revisionRoot);
  }

  /**
   * Stage the next patchset of an open `change` in `tx` with the change's new counters, status
   * and (when none yet) selection. Fields checked by the caller.
   */
  stagePatchset(tx: Txn, change: ChangeRecord, input: PatchsetInput & { author_mode: AuthorMode }, diff: TreeDiff): { patchset: PatchsetRecord; change: ChangeRecord } {
    const number = change.patchset_count + 1;
    const id = patchsetId(change.change_id, number);
    checkSuppliedPatchset(input, { patchset_id: id, patchset_number: number });
    const now = nowSeconds();
    const patchset: PatchsetRecord = {
      patchset_id: id,
      change_id: change.change_id,
      patchset_number: number,
      base_snapshot_id: input.base_snapshot_id,
      revision_snapshot_id: input.revision_snapshot_id,
      summary: input.summary,
      author_mode: input.author_mode,
      author: input.author ?? null,
      publish_state: 'published',
      withdrawn: false,
      invalidated: false,
      diff,
      created_at_s: now,
    };
    const next: ChangeRecord = {
      ...change,
      status: statusAfterPatchset(change.status),
      patchset_count: number,
      current_patchset_id: id,
      selected_patchset_id: change.selected_patchset_id ?? id,
      updated_at_s: now,
    };
    this.upsertPatchset(tx, patchset);
    this.upsertChange(tx, next);
    return { patchset, change: next };
  }

  /** A replay may name the existing patchset's identity, never another. */
  private replay(existing: PatchsetRecord, input: PatchsetInput): PatchsetRecord {
    checkSuppliedPatchset(input, existing);
    return existing;
  }

  // ------------------------------------------------------------ projections and read models

  taskProjection(t: TaskRecord, repositoryIndex: number): Record<string, unknown> {
    return { ...t, promoted_from: t.promoted_from ?? null, repository_index: repositoryIndex, plan_drift: this.drift(t) };
  }

  /** Whether the linked plan has moved past the linked revision and whether the item is still in its head. */
  private drift(t: TaskRecord): Record<string, unknown> | null {
    if (t.plan_id === null) return null;
    const plan = this.plans.plan(t.plan_id);
    const head = this.plans.head(plan);
    return {
      plan_status: plan.status,
      head_revision_id: head.plan_revision_id,
      plan_moved: head.plan_revision_id !== t.origin_plan_revision_id,
      item_in_head: t.plan_item_ref === null ? null : head.items.some((i) => i.plan_item_ref === t.plan_item_ref),
    };
  }

  changeProjection(c: ChangeRecord, repositoryIndex: number): Record<string, unknown> {
    return { ...c, promoted_from: c.promoted_from ?? null, landed_via: c.landed_via ?? null, repository_index: repositoryIndex };
  }

  patchsetProjection(p: PatchsetRecord, repositoryIndex: number): Record<string, unknown> {
    const { diff, ...rest } = p;
    return {
      ...rest,
      repository_index: repositoryIndex,
      changed_file_stats: diff.stats,
      changed_files: diff.files,
      changed_files_truncated: diff.files_truncated,
      ...this.reviews.patchsetParts(p),
    };
  }

  /** The task audit (read model; writes nothing). */
  audit(ref: string, targetLine: string, repositoryIndex: number): Record<string, unknown> {
    validateLineName(targetLine);
    const task = this.taskIn(null, ref);
    const changes = this.changesOf(task.task_id);
    const open = changes.filter((c) => isOpenChange(c.status)).length;
    const landed = changes.filter((c) => c.status === 'landed' && c.land_target_line === targetLine).length;
    const line = this.store.line(targetLine);
    return {
      task: this.taskProjection(task, repositoryIndex),
      changes: changes.map((c) => this.changeProjection(c, repositoryIndex)),
      target_line: targetLine,
      target_line_exists: line !== undefined,
      target_line_head_snapshot_id: line?.head_snapshot_id ?? null,
      open_changes: open,
      landed_changes: landed,
      verdict: auditVerdict(task.status, open, landed),
    };
  }

  /** Aggregate counts, from counters kept current by each commit. */
  queueSummary(status?: TaskStatus): Record<string, unknown> {
    const taskStatuses = status ? [status] : TASK_STATUSES;
    const tasks = zero(TASK_STATUSES);
    const changes = zero(CHANGE_STATUSES);
    for (const s of taskStatuses) {
      tasks[s] = this.taskCounts[s];
      for (const c of CHANGE_STATUSES) changes[c] += this.changeCounts[s][c];
    }
    const total = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
    const openChanges = changes.draft + changes.active + changes.review;
    return {
      status_filter: status ?? null,
      tasks: { ...tasks, total: total(tasks) },
      changes: { ...changes, open: openChanges, total: total(changes) },
    };
  }

  /** One page of rows, one per task (newest first), with its changes' states. */
  taskQueue(status: TaskStatus | undefined, req: PageRequest, repositoryIndex: number): Page<Record<string, unknown>> {
    const page = this.pageTasks({ status }, req, 'task-queue');
    return { next_cursor: page.next_cursor, rows: page.rows.map((t) => {
      const changes = this.changesOf(t.task_id);
      return {
        task_id: t.task_id,
        sequence: t.sequence,
        repository_index: repositoryIndex,
        title: t.title,
        status: t.status,
        plan_id: t.plan_id,
        plan_item_ref: t.plan_item_ref,
        created_at_s: t.created_at_s,
        updated_at_s: t.updated_at_s,
        change_count: changes.length,
        open_change_count: changes.filter((c) => isOpenChange(c.status)).length,
        landed_change_count: changes.filter((c) => c.status === 'landed').length,
        changes: changes.map((c) => ({
          change_id: c.change_id,
          change_ref: c.change_ref,
          title: c.title,
          status: c.status,
          base_line: c.base_line,
          patchset_count: c.patchset_count,
          selected_patchset_id: c.selected_patchset_id,
        })),
      };
    }) };
  }
}
