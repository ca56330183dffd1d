// Tasks, changes and patchsets of one authority (spec: "Task", "Change", "Patchset", "Tasks
// and read models"). Records are workflow.log upserts (storage-layout.md §17): each operation is
// one transaction, so an operation that writes several records (a patchset and its change)
// writes them in one workflow.log record under one commit point. The records stay on disk (the
// store reads one by its location); the compact indexes and read-model counters (lib/domain/workflow/indexes.ts)
// follow each commit through `onPublish` and are rebuilt at open from the store's records; no
// request reads every record. The projections of the three records are here (other modules
// call them); the task read models (audit, queue summary, task queue) are ./read-models.ts.
import type { BuiltObjects } from './server-objects.js';
import { decodeTree, requireContentId } from '../../domain/content.js';
import { Conflict, Corrupt, Invalid, NotFound } from '../../domain/errors.js';
import { validateLineName } from '../../domain/lines.js';
import { nowSeconds } from '../../domain/repository.js';
import { keepRows, takePage, walkFrom, type Page, type PageRequest } from '../../domain/paging.js';
import { INDEX_SECTION, sequenceOf, WorkflowIndexes } from '../../domain/workflow/indexes.js';
import { PEOPLE_SECTION, PeopleIndex } from '../../domain/workflow/people-index.js';
import {
  CHANGE,
  changeCloseMove,
  changeCloseStatus,
  changeId,
  changeRef,
  checkChangeOpen,
  checkSuppliedChangeId,
  checkPatchsetShape,
  checkSuppliedPatchset,
  checkSuppliedTaskId,
  MAX_TEXT_CHARS,
  MAX_TITLE_CHARS,
  parseChangeRef,
  parseTaskRef,
  PATCHSET,
  patchsetId,
  requireAuthorMode,
  requireText,
  requireTitle,
  statusAfterPatchset,
  TASK,
  taskCloseMove,
  taskCloseStatus,
  taskId,
  type PatchsetInput,
  type AuthorMode,
  type ChangeRecord,
  type ChangeStatus,
  type PatchsetRecord,
  type TaskRecord,
  type TaskStatus,
} from '../../domain/workflow/rules.js';
import { diffTrees, type TreeDiff } from '../../domain/workflow/tree-diff.js';
import type { ContentStore, Txn } from '../../store/content-store.js';
import type { LineRecord } from '../../store/content-files.js';
import type { JobQueue } from '../jobs.js';
import { changeEvents, patchsetEvents, taskEvents } from '../../domain/events.js';
import type { PlanBook } from '../plans.js';
import { ciProjectionOf, ReviewBook } from './reviews.js';
import { requireName } from '../../domain/workflow/review-rules.js';
import { requireOneLine } from '../../domain/text.js';
import { CommentBook } from './comments.js';
import { ViewedBook } from './viewed.js';
import { ChangeSearch } from './search.js';
import { SEARCH_SECTION } from '../../domain/workflow/search-index.js';
import { changeAttention } from './people.js';
import { StackBook } from './stacks.js';
import { withFlags, type ChangeFlags } from '../../domain/workflow/change-flags.js';

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
  /** The person creating the change (recorded as the change's `owner`); absent or null: none. */
  owner?: string | null;
}

// Namespaces of per-batch staged state (new ids of the batch, patchset replay keys).
const NEW_TASK = 'wf:new-task';
const NEW_CHANGE = 'wf:new-change';
const PS_KEY = 'wf:patchset-key';


const contentKey = (change: string, base: string, revision: string) => `${change}\u0000${base}\u0000${revision}`;

/** A page of sequence numbers mapped to their rows (only the rows of the page are read). */
function mapPage<T>(page: Page<number>, row: (seq: number) => T): Page<T> {
  return { rows: page.rows.map(row), next_cursor: page.next_cursor };
}

export class WorkflowBook {
  /** Statuses, ownership, lists and counters by sequence; the records are read from the store. */
  index = new WorkflowIndexes();

  /** Per person: changes owned and changes asked to review (lib/domain/workflow/people-index.ts). */
  people = new PeopleIndex();

  /** Reviews, attestations, policy decisions and patchset CI. */
  reviews!: ReviewBook;
  comments!: CommentBook;
  /** Viewed marks per user, change, patchset and path. */
  viewed!: ViewedBook;
  /** Search over the changes (`GET changes?q=`). */
  search!: ChangeSearch;
  /** Stacks: each patchset's change below, derived from base and revision snapshots. */
  readonly stacks: StackBook;

  private constructor(private readonly store: ContentStore, private readonly plans: PlanBook, private readonly jobs: JobQueue) {
    this.stacks = new StackBook(store, () => this.index.openChanges().map(changeId));
  }

  /**
   * Open the indexes: from the checkpoint's section and the tasks and changes upserted in the
   * log's tail after it (storage-layout.md §17.1), or, without a usable section, from every
   * task and change record in sequence order. Patchsets are found through their change (ids
   * derive from the change and the number), so none is read here.
   */
  static open(store: ContentStore, plans: PlanBook, jobs: JobQueue, notes: string[] = []): WorkflowBook {
    const book = new WorkflowBook(store, plans, jobs);
    const section = store.takeCheckpointSection(INDEX_SECTION);
    const peopleSection = store.takeCheckpointSection(PEOPLE_SECTION);
    let fromCheckpoint: WorkflowIndexes | null = null;
    if (section) {
      try {
        fromCheckpoint = WorkflowIndexes.decode(section);
      } catch (err) {
        notes.push(`workflow.ckpt: ${(err as Error).message}; the task and change indexes are rebuilt from workflow.log`);
      }
    }
    if (fromCheckpoint) {
      try {
        book.index = fromCheckpoint;
        // The per-person lists: from their section (the tail's changes are applied below), or,
        // for a checkpoint written before it existed, from every change record once.
        let people: PeopleIndex | null = null;
        if (peopleSection) {
          try {
            people = PeopleIndex.decode(peopleSection, fromCheckpoint.changeCount);
          } catch (err) {
            notes.push(`workflow.ckpt: ${(err as Error).message}; the per-person lists are rebuilt from workflow.log`);
          }
        }
        if (!people) {
          people = new PeopleIndex();
          for (const [, c] of store.entitiesOf<ChangeRecord>(CHANGE)) people.apply(c);
          store.checkpointIncomplete();
        }
        book.people = people;
        const bySeq = (ids: string[]) => ids.map(sequenceOf).sort((a, b) => a - b);
        // Tasks first (a change names its task); counters follow each record's latest status.
        for (const seq of bySeq(store.tailEntities(TASK))) book.applyTask(book.taskAt(seq));
        for (const seq of bySeq(store.tailEntities(CHANGE))) book.applyChange(book.changeAt(seq));
        book.checkCounts();
      } catch (err) {
        notes.push(`workflow.ckpt: the task and change indexes do not fit workflow.log (${(err as Error).message}); rebuilt from workflow.log`);
        fromCheckpoint = null;
        book.index = new WorkflowIndexes();
        book.people = new PeopleIndex();
      }
    }
    if (!fromCheckpoint) {
      if (store.entityCount(TASK) > 0) store.checkpointIncomplete();
      let expected = 1;
      for (const [id, t] of store.entitiesOf<TaskRecord>(TASK)) {
        if (t.task_id !== id || t.sequence !== expected) throw new Corrupt(`workflow.log: task ${id} has sequence ${t.sequence}, expected ${expected} (task ${t.task_id})`);
        book.applyTask(t);
        expected++;
      }
      expected = 1;
      for (const [id, c] of store.entitiesOf<ChangeRecord>(CHANGE)) {
        if (c.change_id !== id || c.sequence !== expected) throw new Corrupt(`workflow.log: change ${id} has sequence ${c.sequence}, expected ${expected} (change ${c.change_id})`);
        book.applyChange(c);
        expected++;
      }
      book.checkCounts();
    }
    store.registerCheckpointSection(INDEX_SECTION, () => book.index.encode());
    store.registerCheckpointSection(PEOPLE_SECTION, () => book.people.encode());
    book.reviews = ReviewBook.open(store, book, book.jobs, notes);
    book.comments = new CommentBook(store, book);
    book.viewed = new ViewedBook(store, book);
    book.search = new ChangeSearch(store, { get index() { return book.index; }, get people() { return book.people; }, unresolvedCount: (id) => book.comments.unresolvedCount(id) }, store.takeCheckpointSection(SEARCH_SECTION), notes);
    return book;
  }

  /** The indexes cover exactly the task and change records the store holds. */
  private checkCounts(): void {
    const tasks = this.store.entityCount(TASK);
    const changes = this.store.entityCount(CHANGE);
    if (this.index.taskTotal() !== tasks || this.index.changeTotal() !== changes) {
      throw new Corrupt(`workflow indexes hold ${this.index.taskTotal()} tasks and ${this.index.changeTotal()} changes, workflow.log ${tasks} and ${changes}`);
    }
  }

  // ------------------------------------------------------------ applying committed records

  private applyTask(t: TaskRecord): void {
    this.index.applyTask(t.sequence, t.status, t.plan_id);
  }

  private applyChange(c: ChangeRecord): void {
    const taskSeq = sequenceOf(c.task_id);
    if (!this.index.hasTask(taskSeq)) throw new Corrupt(`workflow.log: change ${c.change_id} names task ${c.task_id}, which does not exist`);
    this.index.applyChange(c.sequence, taskSeq, c.status);
    this.people.apply(c);
  }

  /** The published record of task `seq` (it exists: the indexes name it). */
  private taskAt(seq: number): TaskRecord {
    const t = this.store.entity<TaskRecord>(TASK, taskId(seq));
    if (!t) throw new Corrupt(`workflow.log: task ${taskId(seq)} is indexed but has no record`);
    return t;
  }

  private changeAt(seq: number): ChangeRecord {
    const c = this.store.entity<ChangeRecord>(CHANGE, changeId(seq));
    if (!c) throw new Corrupt(`workflow.log: change ${changeId(seq)} is indexed but has no record`);
    return c;
  }

  /** Patchset `number` of `change` (numbers run from 1 to the change's patchset_count). */
  private patchsetAt(change: string, number: number): PatchsetRecord {
    const p = this.store.entity<PatchsetRecord>(PATCHSET, patchsetId(change, number));
    if (!p) throw new Corrupt(`workflow.log: patchset ${patchsetId(change, number)} is counted by its change but has no record`);
    return p;
  }

  /** The published patchset of `change` with this base and revision (a replayed create), or undefined. */
  private patchsetByContent(change: ChangeRecord, base: string, revision: string, tx?: Txn): PatchsetRecord | undefined {
    for (let n = change.patchset_count; n >= 1; n--) {
      const p = tx ? tx.entity<PatchsetRecord>(PATCHSET, patchsetId(change.change_id, n)) : this.patchsetAt(change.change_id, n);
      if (!p) throw new Corrupt(`workflow.log: patchset ${patchsetId(change.change_id, n)} is counted by its change but has no record`);
      if (p.base_snapshot_id === base && p.revision_snapshot_id === revision) return p;
    }
    return undefined;
  }

  upsertTask(tx: Txn, t: TaskRecord): void {
    tx.emitAll(taskEvents(tx.entity<TaskRecord>(TASK, t.task_id), t));
    tx.upsert(TASK, t.task_id, t);
    tx.onPublish(() => this.applyTask(t));
  }

  /**
   * Called in the transaction that writes a change whose current or selected patchset moved (the
   * land queue ejects the change's entry in that same commit). Set by the land queue.
   */
  patchsetsMoved: (tx: Txn, before: ChangeRecord, after: ChangeRecord) => void = () => {};

  /** The change's latest land-queue entry when it was ejected (set by the land queue; the attention rule reads it). */
  ejectionOf: (changeId: string) => { patchset_id: string; reason: string } | null = () => null;

  /** Also used by the review book (a review request moves the change to `review`). */
  upsertChange(tx: Txn, c: ChangeRecord): void {
    const before = tx.entity<ChangeRecord>(CHANGE, c.change_id);
    tx.emitAll(changeEvents(before, c));
    tx.upsert(CHANGE, c.change_id, c);
    tx.onPublish(() => this.applyChange(c));
    if (before && (before.current_patchset_id !== c.current_patchset_id || before.selected_patchset_id !== c.selected_patchset_id)) this.patchsetsMoved(tx, before, c);
  }

  upsertPatchset(tx: Txn, p: PatchsetRecord): void {
    tx.emitAll(patchsetEvents(tx.entity<PatchsetRecord>(PATCHSET, p.patchset_id), p));
    tx.upsert(PATCHSET, p.patchset_id, p);
    tx.stage(PS_KEY, contentKey(p.change_id, p.base_snapshot_id, p.revision_snapshot_id), p.patchset_id);
    tx.onPublish(() => this.stacks.note(p));
  }

  // ------------------------------------------------------------ lookups

  taskIn(tx: Txn | null, ref: string): TaskRecord {
    const id = parseTaskRef(ref);
    const t = id === null ? undefined : tx ? tx.entity<TaskRecord>(TASK, id) : this.store.entity<TaskRecord>(TASK, id);
    if (!t) throw new NotFound(`task ${ref} does not exist`);
    return t;
  }

  changeIn(tx: Txn | null, ref: string): ChangeRecord {
    const parsed = parseChangeRef(ref);
    const c = parsed === null ? undefined : tx ? tx.entity<ChangeRecord>(CHANGE, parsed.change_id) : this.store.entity<ChangeRecord>(CHANGE, parsed.change_id);
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
    const p = this.store.entity<PatchsetRecord>(PATCHSET, id);
    if (!p) throw new NotFound(`patchset ${id} does not exist`);
    return p;
  }

  /** Task sequences of a list (all tasks, or a plan's), oldest first. */
  private taskSeqs(planId: string | undefined): { length: number; at: (i: number) => number } {
    if (planId === undefined) return { length: this.index.taskCount, at: (i) => i + 1 };
    const list = this.index.tasksOfPlan(planId);
    return { length: list.length, at: (i) => list[i] };
  }

  /** Changes newest first, optionally only those in `status` (open work: review, or draft/active/review). */
  listChanges(filter: { status?: ChangeStatus; open?: boolean }): ChangeRecord[] {
    if (filter.status === 'review') return this.index.reviewChanges().map((s) => this.changeAt(s));
    if (filter.open) return this.index.openChanges().map((s) => this.changeAt(s));
    const out: ChangeRecord[] = [];
    for (let s = this.index.changeCount; s >= 1; s--) if (this.index.hasChange(s) && this.index.changeHasStatus(s, filter.status)) out.push(this.changeAt(s));
    return out;
  }

  /** One page of tasks, newest first (cursor key: the task sequence); only the page's rows are read. */
  pageTasks(filter: { status?: TaskStatus; plan_id?: string }, req: PageRequest): Page<TaskRecord> {
    const seqs = this.taskSeqs(filter.plan_id);
    const rows = walkFrom(seqs.length, seqs.at, (s) => s, req.after, 'desc');
    return mapPage(takePage(req, keepRows(rows, (s) => this.index.hasTask(s) && this.index.taskHasStatus(s, filter.status)), 'desc'), (s) => this.taskAt(s));
  }

  /** One page of changes, newest first (cursor key: the change sequence). */
  pageChanges(filter: { status?: ChangeStatus; task_id?: string }, req: PageRequest): Page<ChangeRecord> {
    const list = filter.task_id !== undefined ? this.index.changesOfTask(this.taskIn(null, filter.task_id).sequence) : null;
    const rows = list ? walkFrom(list.length, (i) => list[i], (s) => s, req.after, 'desc') : walkFrom(this.index.changeCount, (i) => i + 1, (s) => s, req.after, 'desc');
    return mapPage(takePage(req, keepRows(rows, (s) => this.index.hasChange(s) && this.index.changeHasStatus(s, filter.status)), 'desc'), (s) => this.changeAt(s));
  }

  /** One page of a change's patchsets in number order (cursor key: the patchset number). */
  pagePatchsets(ref: string, req: PageRequest): { change: ChangeRecord; page: Page<PatchsetRecord> } {
    const change = this.changeIn(null, ref);
    const rows = walkFrom(change.patchset_count, (i) => i + 1, (n) => n, req.after, 'asc');
    return { change, page: mapPage(takePage(req, rows, 'asc'), (n) => this.patchsetAt(change.change_id, n)) };
  }

  changesOf(taskIdValue: string): ChangeRecord[] {
    return this.index.changesOfTask(sequenceOf(taskIdValue)).map((s) => this.changeAt(s));
  }

  /** A change's patchsets in ordinal order. */
  patchsetsOf(ref: string): { change: ChangeRecord; patchsets: PatchsetRecord[] } {
    const change = this.changeIn(null, ref);
    const patchsets: PatchsetRecord[] = [];
    for (let n = 1; n <= change.patchset_count; n++) patchsets.push(this.patchsetAt(change.change_id, n));
    return { change, patchsets };
  }

  /** Tasks linked to a plan (candidate-inputs read model), oldest first. */
  tasksLinkedTo(planId: string): TaskRecord[] {
    return this.index.tasksOfPlan(planId).map((s) => this.taskAt(s));
  }

  // ------------------------------------------------------------ tasks

  createTask(input: TaskInput): Promise<TaskRecord> {
    const title = requireTitle(input.title, 'title');
    const intent = requireText(input.intent, 'intent', MAX_TEXT_CHARS);
    // Linkage resolves against the published plans (revisions are immutable; the resolved revision is recorded).
    const linkage = this.plans.resolveLinkage(input);
    return this.store.transact((tx) => this.stageTask(tx, { title, intent, linkage, task_id: input.task_id }));
  }

  /** The highest task sequence used here or handed out by an earlier writer (the id floor, serve --lease). */
  highestTask(): number { return Math.max(this.index.taskCount, this.store.idFloor('task')); }
  /** The highest change sequence used here or handed out by an earlier writer. */
  highestChange(): number { return Math.max(this.index.changeCount, this.store.idFloor('change')); }

  /** The next task id inside `tx` (what stageTask would create). */
  nextTaskId(tx: Txn): string {
    return taskId(this.highestTask() + tx.stagedKeys(NEW_TASK).length + 1);
  }

  /** Stage a new active task in `tx` (text checked and linkage resolved by the caller). */
  stageTask(tx: Txn, fields: { title: string; intent: string; linkage: Pick<TaskRecord, 'plan_id' | 'origin_plan_revision_id' | 'plan_item_ref'>; task_id?: string; promoted_from?: TaskRecord['promoted_from'] }): TaskRecord {
    const sequence = this.highestTask() + tx.stagedKeys(NEW_TASK).length + 1;
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
    const title = requireTitle(input.title, 'title');
    validateLineName(input.base_line);
    if (input.fork_snapshot_id !== undefined && input.fork_snapshot_id !== null) requireContentId(input.fork_snapshot_id, 'fork_snapshot_id');
    if (parseTaskRef(input.task_id) === null) throw new Invalid('task_id must be a task id (task-<sequence>)');
    if (input.owner !== undefined && input.owner !== null) requireName(input.owner, 'owner');
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
      return this.stageChange(tx, task, { title, base_line: input.base_line, fork_snapshot_id: head, change_id: input.change_id, owner: input.owner ?? null });
    }
  }

  /** The next change identity inside `tx` for a change of task `task` (what stageChange would create). */
  nextChangeIdentity(tx: Txn, task: string): { change_id: string; change_ref: string } {
    const sequence = this.highestChange() + tx.stagedKeys(NEW_CHANGE).length + 1;
    return { change_id: changeId(sequence), change_ref: changeRef(task, sequence) };
  }

  /** Stage a new draft change of `task` in `tx` (task state, line and fork checked by the caller). */
  stageChange(tx: Txn, task: TaskRecord, fields: { title: string; base_line: string; fork_snapshot_id: string | null; change_id?: string; promoted_from?: ChangeRecord['promoted_from']; owner?: string | null }): ChangeRecord {
    const sequence = this.highestChange() + tx.stagedKeys(NEW_CHANGE).length + 1;
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
    // Written only when named: records without an owner stay as they were (storage-layout.md §17).
    if (fields.owner) change.owner = fields.owner;
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

  /** `:setFlags`: the change's topic, work-in-progress mark, cc list (lib/domain/workflow/change-flags.ts). */
  setFlags(ref: string, flags: ChangeFlags): Promise<ChangeRecord> {
    return this.store.transact((tx) => this.setFlagsIn(tx, this.changeIn(tx, ref), flags));
  }

  /** Stage `flags` on an open change (its record and `change.updated` event); `:setFlags` and a push's -o topic=, wip, ready, cc=. */
  setFlagsIn(tx: Txn, change: ChangeRecord, flags: ChangeFlags): ChangeRecord {
    checkChangeOpen(change, 'change its topic, work-in-progress mark or cc list');
    const next = withFlags(change, flags, nowSeconds());
    if (next !== change) this.upsertChange(tx, next);
    return next;
  }

  selectPatchset(ref: string, patchsetIdValue: string): Promise<ChangeRecord> {
    return this.store.transact((tx) => this.selectPatchsetIn(tx, this.changeIn(tx, ref), patchsetIdValue));
  }

  /**
   * Stage `patchsetIdValue` as the selected patchset of `change` in `tx` (its record and its
   * `patchset.selected` event): `changes:selectPatchset`, and a push's new patchset (push-review.ts).
   */
  selectPatchsetIn(tx: Txn, change: ChangeRecord, patchsetIdValue: string): ChangeRecord {
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
  }

  // ------------------------------------------------------------ patchsets

  /**
   * Create a patchset (one transaction: the patchset record and its change's new counters and
   * status). A replay with the same change, base and revision returns the existing patchset.
   * The tree diff runs before the transaction (snapshots are immutable), so the commit queue
   * never waits on it.
   */
  /**
   * Read what `afterPatchset` needs before a patchset's transaction (the target head's CODEOWNERS);
   * set by the authority.
   */
  preparePatchset: (line: string) => Promise<void> = async () => {};

  /**
   * Called in the transaction that stages a new patchset, after it and its change: what the
   * repository's rules add to that commit (code owners asked to review). Returns the change as
   * staged last. Set by the authority.
   */
  afterPatchset: (tx: Txn, change: ChangeRecord, patchset: PatchsetRecord) => ChangeRecord = (_tx, change) => change;

  async createPatchset(ref: string, input: PatchsetInput): Promise<{ patchset: PatchsetRecord; replayed: boolean }> {
    const published = this.changeIn(null, ref);
    requireContentId(input.base_snapshot_id, 'base_snapshot_id');
    requireContentId(input.revision_snapshot_id, 'revision_snapshot_id');
    const summary = requireText(input.summary, 'summary', MAX_TEXT_CHARS);
    const authorMode = requireAuthorMode(input.author_mode);
    const author = input.author === undefined || input.author === null ? null : requireOneLine(requireText(input.author, 'author', MAX_TITLE_CHARS), 'author');
    checkPatchsetShape(input);
    const key = contentKey(published.change_id, input.base_snapshot_id, input.revision_snapshot_id);
    const existing = this.patchsetByContent(published, input.base_snapshot_id, input.revision_snapshot_id);
    if (existing) return { patchset: this.replay(existing, input), replayed: true };
    const base = this.store.snapshot(input.base_snapshot_id);
    if (!base) throw new NotFound(`snapshot ${input.base_snapshot_id} is not present`);
    const revision = this.store.snapshot(input.revision_snapshot_id);
    if (!revision) throw new NotFound(`snapshot ${input.revision_snapshot_id} is not present`);
    checkChangeOpen(published, 'add a patchset');
    const diff = await this.diff({ snapshot_id: input.base_snapshot_id, root_tree_id: base.root_tree_id }, { snapshot_id: input.revision_snapshot_id, root_tree_id: revision.root_tree_id });
    await this.preparePatchset(published.land_target_line);
    return this.store.transact((tx) => {
      const change = this.changeIn(tx, ref);
      const again = tx.staged<string>(PS_KEY, key) ?? this.patchsetByContent(change, input.base_snapshot_id, input.revision_snapshot_id, tx)?.patchset_id;
      if (again) return { patchset: this.replay(tx.entity<PatchsetRecord>(PATCHSET, again)!, input), replayed: true };
      checkChangeOpen(change, 'add a patchset');
      // applied_suggestions and rebased_from are the server's records of :applySuggestions and :rebase, never a caller's (the request struct passes unknown fields).
      return { patchset: this.stagePatchset(tx, change, { ...input, summary, author_mode: authorMode, author, applied_suggestions: undefined, rebased_from: undefined }, diff).patchset, replayed: false };
    });
  }

  /**
   * The tree diff of two snapshots (runs outside transactions: snapshots are immutable); `built`
   * holds trees and blobs of a revision the server built and has not stored yet. A side
   * over the limit a snapshot may hold (stored before the limit) is refused (400) before the
   * walk, and the walk itself stops past twice the limit.
   */
  async diff(base: { snapshot_id: string; root_tree_id: string }, revision: { snapshot_id: string; root_tree_id: string }, built?: BuiltObjects): Promise<TreeDiff> {
    // A side the server is building (not stored yet: a revision, or a series' commit below) was bounded by its builder.
    if (!built?.trees.has(base.root_tree_id)) await this.store.requireExpandable(base.root_tree_id, `snapshot ${base.snapshot_id}`);
    if (!built?.trees.has(revision.root_tree_id)) await this.store.requireExpandable(revision.root_tree_id, `snapshot ${revision.snapshot_id}`);
    return diffTrees({
      readTree: async (id) => {
        const raw = built?.trees.get(id);
        return raw ? decodeTree(raw) : this.store.readTree(id);
      },
      blobSize: (id) => built?.blobs.get(id)?.length ?? built?.spooled?.size(id) ?? this.store.locator('blob', id)?.raw_length ?? 0,
      readBlob: async (id) => built?.blobs.get(id) ?? (await built?.spooled?.read(id)) ?? this.store.readObject('blob', id),
    }, base.root_tree_id, revision.root_tree_id, this.store.walkBudget(`the diff of ${base.snapshot_id} and ${revision.snapshot_id}`, 2));
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
      ...(input.applied_suggestions ? { applied_suggestions: input.applied_suggestions } : {}),
      ...(input.pushed_by !== undefined ? { pushed_by: input.pushed_by } : {}),
      ...(input.rebased_from ? { rebased_from: input.rebased_from } : {}),
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
    return { patchset, change: this.afterPatchset(tx, next, patchset) };
  }

  /** A replay may name the existing patchset's identity, never another. */
  private replay(existing: PatchsetRecord, input: PatchsetInput): PatchsetRecord {
    checkSuppliedPatchset(input, existing);
    return existing;
  }

  // ------------------------------------------------------------ projections (the read models are ./read-models.ts)

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
    return {
      ...c,
      promoted_from: c.promoted_from ?? null,
      landed_via: c.landed_via ?? null,
      repository_index: repositoryIndex,
      owner: c.owner ?? null,
      reviewers: this.reviews.reviewerList(c),
      attention: changeAttention(this, c).map((x) => x.name),
      topic: c.topic ?? null,
      wip: c.wip === true,
      cc: c.cc ?? [],
    };
  }

  /** A search result's facts (docs/api.md "Searching changes"): owner, the selected patchset's CI, live votes, unresolved threads. */
  searchRow(c: ChangeRecord): Record<string, unknown> {
    const { counts } = this.reviews.reviewSummary(c);
    return {
      change_id: c.change_id,
      owner: c.owner ?? null,
      ci: c.selected_patchset_id ? ciProjectionOf(this.reviews.ci(c.selected_patchset_id)).overall : 'none',
      votes: { approvals: counts.approvals, blocking: counts.blocking },
      unresolved_threads: this.comments.unresolvedCount(c.change_id),
    };
  }

  patchsetProjection(p: PatchsetRecord, repositoryIndex: number): Record<string, unknown> {
    const { diff, ...rest } = p;
    return {
      ...rest,
      pushed_by: p.pushed_by ?? null,
      repository_index: repositoryIndex,
      changed_file_stats: diff.stats,
      changed_files: diff.files,
      changed_files_truncated: diff.files_truncated,
      ...this.reviews.patchsetParts(p),
    };
  }

  /** A line of the store (the task audit reads its target line). */
  line(name: string): LineRecord | undefined {
    return this.store.line(name);
  }
}
