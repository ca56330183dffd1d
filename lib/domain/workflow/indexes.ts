// The compact in-memory indexes of tasks and changes (the records themselves stay in
// workflow.log; lib/store/workflow-records.ts reads them): per sequence number a task's status,
// a change's status and owning task, each task's changes as a linked list, tasks linked to a
// plan, changes in review, and the read-model counters. Typed arrays indexed by sequence keep
// the cost per task and change a few dozen bytes whatever the records hold. It changes when a
// list, filter or counter needs another index, never with the records' shape.
import { CHANGE_STATUSES, TASK_STATUSES, type ChangeStatus, type TaskStatus } from './rules.js';

/** The workflow book's section of workflow.ckpt (storage-layout.md §17.1). */
export const INDEX_SECTION = 'workflow-indexes';

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

/** `a` if it has a slot `need`, else a copy at least twice as long (the in-memory indexes grow by doubling). */
export function grow<T extends Uint8Array | Int32Array | Float64Array>(a: T, need: number, make: (n: number) => T): T {
  if (need < a.length) return a;
  let n = a.length;
  while (n <= need) n *= 2;
  const b = make(n);
  b.set(a);
  return b;
}

export class WorkflowIndexes {
  /**
   * Highest task and change sequence. Sequences are dense from 1 but for the gaps an id floor
   * leaves (serve --lease: after a failover ids continue past what the old writer reserved).
   */
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

  /** Tasks and changes held (the gaps not counted). */
  taskTotal(): number {
    return TASK_STATUSES.reduce((n, s) => n + this.taskCounts[s], 0);
  }

  changeTotal(): number {
    let n = 0;
    for (const t of TASK_STATUSES) for (const c of CHANGE_STATUSES) n += this.changeCounts[t][c];
    return n;
  }

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

  /**
   * The indexes as a checkpoint section (storage-layout.md §17.1): task count u32, change count
   * u32, task status codes (count + 1 bytes), change status codes (count + 1 bytes), each
   * change's task sequence (count + 1 × i32), then the plan links as JSON (length u32, UTF-8).
   * The linked lists, the review set and the counters are derived again when it is read.
   */
  encode(): Buffer {
    const t = this.taskCount;
    const c = this.changeCount;
    const plans = Buffer.from(JSON.stringify(Object.fromEntries(this.tasksByPlan)), 'utf8');
    const head = Buffer.alloc(8);
    head.writeUInt32LE(t, 0);
    head.writeUInt32LE(c, 4);
    const len = Buffer.alloc(4);
    len.writeUInt32LE(plans.length, 0);
    const view = (a: Uint8Array | Int32Array, n: number) => Buffer.from(a.buffer, a.byteOffset, n * a.BYTES_PER_ELEMENT);
    return Buffer.concat([head, view(this.taskStatus, t + 1), view(this.changeStatus, c + 1), view(this.changeTask, c + 1), len, plans]);
  }

  /** Indexes read from a checkpoint section; throws when it does not decode or does not hold together. */
  static decode(buf: Buffer): WorkflowIndexes {
    const fail = (why: string): never => { throw new Error(`workflow index section: ${why}`); };
    if (buf.length < 8) fail('too short');
    const t = buf.readUInt32LE(0);
    const c = buf.readUInt32LE(4);
    let at = 8;
    const take = (n: number) => {
      if (at + n > buf.length) fail('ends early');
      const b = buf.subarray(at, at + n);
      at += n;
      return b;
    };
    const x = new WorkflowIndexes();
    const taskStatus = Uint8Array.from(take(t + 1));
    const changeStatus = Uint8Array.from(take(c + 1));
    const changeTask = new Int32Array(c + 1);
    Buffer.from(changeTask.buffer).set(take(4 * (c + 1)));
    const plansLen = take(4).readUInt32LE(0);
    let plans: Record<string, number[]>;
    try {
      plans = JSON.parse(take(plansLen).toString('utf8'));
    } catch (err) {
      return fail(`plan links: ${(err as Error).message}`);
    }
    if (at !== buf.length) fail('bytes left over');
    for (let s = 1; s <= t; s++) {
      const code = taskStatus[s];
      if (code === 0) continue; // a sequence never used here (ids continue past an id floor: serve --lease)
      if (code < 1 || code > TASK_STATUSES.length) fail(`task ${s} has status code ${code}`);
      x.applyTask(s, TASK_STATUSES[code - 1], null);
    }
    for (let s = 1; s <= c; s++) {
      const code = changeStatus[s];
      if (code === 0) continue;
      if (code < 1 || code > CHANGE_STATUSES.length) fail(`change ${s} has status code ${code}`);
      if (!x.hasTask(changeTask[s])) fail(`change ${s} names task ${changeTask[s]}`);
      x.applyChange(s, changeTask[s], CHANGE_STATUSES[code - 1]);
    }
    if (!plans || typeof plans !== 'object' || Array.isArray(plans)) fail('plan links are not an object');
    for (const [plan, seqs] of Object.entries(plans)) {
      if (!Array.isArray(seqs) || !seqs.every((s) => Number.isInteger(s) && x.hasTask(s))) fail(`plan ${plan} links a task that does not exist`);
      x.tasksByPlan.set(plan, seqs);
    }
    return x;
  }

  /** Indexes of task and change records given in sequence order (an open without a checkpoint, fsck). */
  static rebuild(tasks: Iterable<{ sequence: number; status: TaskStatus; plan_id: string | null }>, changes: Iterable<{ sequence: number; task_id: string; status: ChangeStatus }>): WorkflowIndexes {
    const x = new WorkflowIndexes();
    for (const t of tasks) x.applyTask(t.sequence, t.status, t.plan_id);
    for (const c of changes) {
      const task = sequenceOf(c.task_id);
      if (!x.hasTask(task)) throw new Error(`change ${c.sequence} names task ${c.task_id}, which does not exist`);
      x.applyChange(c.sequence, task, c.status);
    }
    return x;
  }

  /** Bytes held by the typed arrays (memory tests and bench). */
  bytes(): number {
    return [this.taskStatus, this.firstChange, this.lastChange, this.changeStatus, this.changeTask, this.nextChange].reduce((n, a) => n + a.byteLength, 0);
  }
}
