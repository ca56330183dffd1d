// The compact in-memory indexes of tasks and changes (the records themselves stay in
// workflow.log; lib/store/workflow-records.ts reads them): per sequence number a task's status,
// a change's status and owning task, each task's changes as a linked list, tasks linked to a
// plan, changes in review, and the read-model counters. Typed arrays indexed by sequence keep
// the cost per task and change a few dozen bytes whatever the records hold. It changes when a
// list, filter or counter needs another index, never with the records' shape.
import { CHANGE_STATUSES, TASK_STATUSES, type ChangeStatus, type TaskStatus } from '../../domain/workflow/rules.js';

type Counts<K extends string> = Record<K, number>;
export const zero = <K extends string>(keys: readonly K[]): Counts<K> => Object.fromEntries(keys.map((k) => [k, 0])) as Counts<K>;

/** Status codes in the arrays: index in the status list + 1 (0: no such record). */
const TASK_CODE = new Map(TASK_STATUSES.map((s, i) => [s, i + 1]));
const CHANGE_CODE = new Map(CHANGE_STATUSES.map((s, i) => [s, i + 1]));
export const OPEN_CHANGE_CODES: readonly number[] = ['draft', 'active', 'review'].map((s) => CHANGE_CODE.get(s as ChangeStatus)!);

export const taskCode = (s: TaskStatus): number => TASK_CODE.get(s)!;
export const changeCode = (s: ChangeStatus): number => CHANGE_CODE.get(s)!;

/** The sequence in an id `<kind>-<sequence>` (ids are derived from sequences, rules.ts). */
export const sequenceOf = (id: string): number => Number(id.slice(id.lastIndexOf('-') + 1));

function grow<T extends Uint8Array | Int32Array>(a: T, need: number, make: (n: number) => T): T {
  if (need < a.length) return a;
  let n = a.length;
  while (n <= need) n *= 2;
  const b = make(n);
  b.set(a);
  return b;
}

export class WorkflowIndexes {
  /** Highest task and change sequence (sequences are dense from 1). */
  taskCount = 0;
  changeCount = 0;
  private taskStatus = new Uint8Array(1024);
  private firstChange = new Int32Array(1024);
  private lastChange = new Int32Array(1024);
  private changeStatus = new Uint8Array(1024);
  private changeTask = new Int32Array(1024);
  private nextChange = new Int32Array(1024);
  /** Task sequences per linked plan, oldest first (only linked tasks have an entry). */
  private readonly tasksByPlan = new Map<string, number[]>();
  /** Changes in status `review` (bounded by open review work). */
  private readonly inReview = new Set<number>();
  /** Read-model counters: tasks per status; changes per (owning task status, change status). */
  readonly taskCounts = zero(TASK_STATUSES);
  readonly changeCounts: Record<TaskStatus, Counts<ChangeStatus>> = { active: zero(CHANGE_STATUSES), completed: zero(CHANGE_STATUSES), abandoned: zero(CHANGE_STATUSES) };

  hasTask(seq: number): boolean {
    return seq > 0 && seq <= this.taskCount && this.taskStatus[seq] !== 0;
  }

  hasChange(seq: number): boolean {
    return seq > 0 && seq <= this.changeCount && this.changeStatus[seq] !== 0;
  }

  taskStatusOf(seq: number): TaskStatus {
    return TASK_STATUSES[this.taskStatus[seq] - 1];
  }

  changeStatusOf(seq: number): ChangeStatus {
    return CHANGE_STATUSES[this.changeStatus[seq] - 1];
  }

  changeTaskOf(seq: number): number {
    return this.changeTask[seq];
  }

  /** A task's committed state: new (appended to the order and its plan's list) or a status move. */
  applyTask(seq: number, status: TaskStatus, planId: string | null): void {
    const code = taskCode(status);
    const prev = seq <= this.taskCount ? this.taskStatus[seq] : 0;
    if (prev) {
      const before = TASK_STATUSES[prev - 1];
      this.taskCounts[before]--;
      if (before !== status) {
        for (let c = this.firstChange[seq]; c !== 0; c = this.nextChange[c]) {
          const s = this.changeStatusOf(c);
          this.changeCounts[before][s]--;
          this.changeCounts[status][s]++;
        }
      }
    } else {
      this.taskStatus = grow(this.taskStatus, seq, (n) => new Uint8Array(n));
      this.firstChange = grow(this.firstChange, seq, (n) => new Int32Array(n));
      this.lastChange = grow(this.lastChange, seq, (n) => new Int32Array(n));
      if (seq > this.taskCount) this.taskCount = seq;
      if (planId) {
        const list = this.tasksByPlan.get(planId) ?? [];
        list.push(seq);
        this.tasksByPlan.set(planId, list);
      }
    }
    this.taskCounts[status]++;
    this.taskStatus[seq] = code;
  }

  /** A change's committed state (its task exists: the caller checks). */
  applyChange(seq: number, taskSeq: number, status: ChangeStatus): void {
    const owner = this.taskStatusOf(taskSeq);
    const prev = seq <= this.changeCount ? this.changeStatus[seq] : 0;
    if (prev) this.changeCounts[owner][CHANGE_STATUSES[prev - 1]]--;
    else {
      this.changeStatus = grow(this.changeStatus, seq, (n) => new Uint8Array(n));
      this.changeTask = grow(this.changeTask, seq, (n) => new Int32Array(n));
      this.nextChange = grow(this.nextChange, seq, (n) => new Int32Array(n));
      if (seq > this.changeCount) this.changeCount = seq;
      this.changeTask[seq] = taskSeq;
      const last = this.lastChange[taskSeq];
      if (last === 0) this.firstChange[taskSeq] = seq;
      else this.nextChange[last] = seq;
      this.lastChange[taskSeq] = seq;
    }
    this.changeCounts[owner][status]++;
    this.changeStatus[seq] = changeCode(status);
    if (status === 'review') this.inReview.add(seq);
    else this.inReview.delete(seq);
  }

  /** Change sequences of a task, oldest first. */
  changesOfTask(taskSeq: number): number[] {
    const out: number[] = [];
    if (taskSeq <= 0 || taskSeq > this.taskCount) return out;
    for (let c = this.firstChange[taskSeq]; c !== 0; c = this.nextChange[c]) out.push(c);
    return out;
  }

  /** Task sequences linked to a plan, oldest first. */
  tasksOfPlan(planId: string): readonly number[] {
    return this.tasksByPlan.get(planId) ?? [];
  }

  /** Changes in `review`, newest first. */
  reviewChanges(): number[] {
    return [...this.inReview].sort((a, b) => b - a);
  }

  /** Changes in an open status (draft, active, review), newest first (a scan of one byte per change). */
  openChanges(): number[] {
    const out: number[] = [];
    const [a, b, c] = OPEN_CHANGE_CODES;
    for (let s = this.changeCount; s > 0; s--) {
      const code = this.changeStatus[s];
      if (code === a || code === b || code === c) out.push(s);
    }
    return out;
  }

  taskHasStatus(seq: number, status: TaskStatus | undefined): boolean {
    return status === undefined || this.taskStatus[seq] === taskCode(status);
  }

  changeHasStatus(seq: number, status: ChangeStatus | undefined): boolean {
    return status === undefined || this.changeStatus[seq] === changeCode(status);
  }

  /** Bytes held by the typed arrays (memory tests and bench). */
  bytes(): number {
    return [this.taskStatus, this.firstChange, this.lastChange, this.changeStatus, this.changeTask, this.nextChange].reduce((n, a) => n + a.byteLength, 0);
  }
}
