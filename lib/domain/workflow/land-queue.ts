// The land queue's rules (docs/land-queue.md): what the queue of one target line does next,
// decided from its entry records, the line head and the states of its CI jobs. Pure: the
// authority (lib/authority/workflow/land-queue.ts) applies the one move this returns as one
// transaction and asks again, so every move is a commit of its own and the queue resumes from
// its records after a crash.
//
// Speculation: the first `depth` entries are tested on the trees they would land: entry k's
// speculative snapshot is entry k-1's (or the line head for the first) merged with entry k's
// patchset, built by the land's own merge code. Each entry records the snapshot its speculation
// starts from (`base_snapshot_id`), so a chain is valid exactly while the first entry's base is
// the line head and every later entry's base is the snapshot of the entry before it.
import { Invalid } from '../errors.js';
import type { ChangeRecord } from './rules.js';

export const QUEUE_ENTRY = 'land_queue_entry';
/** The workflow.ckpt section of the active entries. */
export const QUEUE_SECTION = 'land-queue';
export const QUEUE_MODES = ['merge', 'direct'] as const;
export type QueueMode = (typeof QUEUE_MODES)[number];
/** `queued` (waiting for a speculation), `testing` (speculation built, CI pending or failed with retries left), terminal: `landed`, `ejected`, `removed`. */
export const QUEUE_STATES = ['queued', 'testing', 'landed', 'ejected', 'removed'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];
export const EJECTION_REASONS = ['ci_failed', 'conflict', 'gates', 'change_not_landable', 'patchset_changed', 'line_unavailable'] as const;
export type EjectionReason = (typeof EJECTION_REASONS)[number];

/** What an entry's CI job says: `pass`, `fail` (a failing result, a failed job), or `pending`. */
export type JobVerdict = 'pass' | 'fail' | 'pending';

export interface Speculation {
  /** The snapshot this speculation starts from: the line head or the snapshot of the entry ahead. */
  base_snapshot_id: string;
  /** The speculative snapshot: base plus this entry's patchset (what lands if it passes). */
  snapshot_id: string;
  root_tree_id: string;
  /** fast_forward (direct mode onto an ancestor of the revision), merge or direct (a one-parent merge). */
  line_action: 'fast_forward' | 'merge' | 'direct';
  /** Entry ids whose changes this snapshot holds ahead of this entry (unlanded, in queue order). */
  ahead: string[];
  /** The entry whose CI job tests this snapshot's batch (this entry unless batched). */
  tested_by: string;
  /** On the entry that runs the CI: the entries its job covers, in order (itself last). */
  covers: string[];
  /** On the entry that runs the CI: its jobs on this snapshot, oldest first (retries append). */
  worker_job_indexes: number[];
  /** Set when a passed job on an identical root tree was reused instead of running CI again. */
  reused_worker_job_index: number | null;
  built_at_s: number;
  /** When the current job was reported as not progressing (null: not stalled). */
  stalled_at_s: number | null;
}

export interface Ejection {
  reason: EjectionReason;
  message: string;
  /** The CI jobs that failed (ci_failed), oldest first. */
  worker_job_indexes: number[];
  /** Failing suites of the last failed job (ci_failed). */
  failing_suites: string[];
  /** Conflicting paths (conflict), at most a bounded number. */
  conflict_paths: string[];
}

export interface QueueEntryRecord {
  entry_id: string;
  sequence: number;
  /** Bumped by every write: a move computed outside a transaction applies only to the versions it read. */
  version: number;
  change_id: string;
  change_ref: string;
  task_id: string;
  patchset_id: string;
  target_line: string;
  mode: QueueMode;
  state: QueueState;
  speculation: Speculation | null;
  /** Set by a bisection: the batch starting at this entry holds at most this many entries. */
  batch_limit: number | null;
  /** A speculation of this entry passed only after a failed run of the same tree. */
  passed_on_retry: boolean;
  land_id: string | null;
  landed_snapshot_id: string | null;
  ejection: Ejection | null;
  enqueued_at_s: number;
  updated_at_s: number;
  finished_at_s: number | null;
  /** Who queued it (the identified caller), the landed_by of its land; written only when there is one (absent: null). */
  enqueued_by?: string;
  /** Only on an entry enqueued with `bypass` (by a caller in bypass_allowed): its land bypasses the gates as that caller. */
  bypass?: true;
}

export interface QueueOptions {
  /** Entries speculated (and tested) at once. */
  depth: number;
  /** Extra runs of a failed speculation on the same tree before it counts as failed. */
  retries: number;
  /** Entries tested together by one job (1: every entry has its own job); bisected on failure. */
  batch: number;
  /** Seconds a job may go without progress before its entry is reported stalled. */
  stall_s: number;
}

export const DEFAULT_QUEUE_OPTIONS: QueueOptions = { depth: 4, retries: 1, batch: 1, stall_s: 900 };

export function checkQueueOptions(o: QueueOptions): QueueOptions {
  const int = (v: number, name: string, lo: number, hi: number) => {
    if (!Number.isInteger(v) || v < lo || v > hi) throw new Invalid(`${name} must be an integer from ${lo} to ${hi}`);
  };
  int(o.depth, 'queue depth', 1, 64);
  int(o.retries, 'queue retries', 0, 10);
  int(o.batch, 'queue batch', 1, 64);
  int(o.stall_s, 'queue stall seconds', 1, 86_400);
  return o;
}

export const isActiveEntry = (e: QueueEntryRecord): boolean => e.state === 'queued' || e.state === 'testing';

/** A move of one line's queue: the authority applies it in one transaction. */
export type QueueMove =
  /** An entry whose change can no longer land as queued (closed, landed elsewhere, new patchset). */
  | { kind: 'eject'; entry: QueueEntryRecord; reason: EjectionReason; message: string }
  /** Speculations from this entry on no longer start where the chain does: drop them (queued jobs end). */
  | { kind: 'reset'; entries: QueueEntryRecord[] }
  /** The front entry's speculation passed: land it onto the head it was tested on. */
  | { kind: 'land'; entry: QueueEntryRecord; evidence_job: number }
  /** The front entry's own speculation failed for good: eject it with its evidence. */
  | { kind: 'eject_failed'; entry: QueueEntryRecord; jobs: number[] }
  /** A failed speculation with retries left: run its CI again on the same tree. */
  | { kind: 'retry'; entry: QueueEntryRecord }
  /** A failed batch of several entries: test it again in halves (the speculations behind restart). */
  | { kind: 'bisect'; batch: QueueEntryRecord[]; behind: QueueEntryRecord[] }
  /** Build the speculation of these entries (one batch) on `base`; the last one's job tests them all. */
  | { kind: 'build'; entries: QueueEntryRecord[]; base: string; ahead: string[] }
  /** The tested entry's job has not progressed within the bound: report it (once per job). */
  | { kind: 'stalled'; entry: QueueEntryRecord; worker_job_index: number };

export interface JobView {
  verdict: JobVerdict;
  /** When the job last changed (created, claimed, heartbeat, completed). */
  updated_at_s: number;
}

export interface QueueFacts {
  /** The target line's head (null: the line is empty or gone). */
  head: string | null;
  /** Why the line cannot take lands now (missing, archived), or null. */
  line_problem: string | null;
  /** Active entries of the line, in queue order. */
  entries: QueueEntryRecord[];
  /** Why an entry's change can no longer land as queued, or null. */
  unlandable: (e: QueueEntryRecord) => { reason: EjectionReason; message: string } | null;
  job: (index: number) => JobView | null;
  now_s: number;
}

/**
 * Why writing a change from `before` to `after` takes its active entry out of the queue in that
 * same commit: a new patchset was pushed (the current one moved), or another was selected. The
 * queued patchset is then no longer what its author means to land. Null when neither moved.
 */
export function patchsetEjection(entry: QueueEntryRecord, before: ChangeRecord, after: ChangeRecord): { reason: 'patchset_changed'; message: string } | null {
  if (after.current_patchset_id !== before.current_patchset_id && after.current_patchset_id !== entry.patchset_id) {
    return { reason: 'patchset_changed', message: `patchset ${after.current_patchset_id} was pushed to change ${after.change_id} after ${entry.patchset_id} was queued; select the patchset to land and queue the change again` };
  }
  if (after.selected_patchset_id !== entry.patchset_id) {
    return { reason: 'patchset_changed', message: `change ${after.change_id} selected patchset ${after.selected_patchset_id} after ${entry.patchset_id} was queued; queue it again` };
  }
  return null;
}

/** The verdict of a speculation's CI: its reused evidence, else its newest job. */
export function speculationVerdict(spec: Speculation, job: (index: number) => JobView | null): JobVerdict {
  if (spec.reused_worker_job_index !== null) return 'pass';
  const last = spec.worker_job_indexes.at(-1);
  if (last === undefined) return 'pending';
  return job(last)?.verdict ?? 'fail';
}

/** The next move of one line's queue, or null when it waits (for CI, for entries). */
export function nextQueueMove(f: QueueFacts, o: QueueOptions): QueueMove | null {
  const entries = f.entries;
  if (entries.length === 0) return null;
  if (f.line_problem !== null) return { kind: 'eject', entry: entries[0], reason: 'line_unavailable', message: f.line_problem };
  for (const e of entries) {
    const why = f.unlandable(e);
    if (why) return { kind: 'eject', entry: e, ...why };
  }
  if (f.head === null) return { kind: 'eject', entry: entries[0], reason: 'line_unavailable', message: `line ${entries[0].target_line} is empty; a land needs a head to land onto` };

  // The valid chain: entries whose speculation starts where the one before ends.
  const byId = new Map(entries.map((e) => [e.entry_id, e]));
  let prev = f.head;
  let chain = 0;
  for (; chain < entries.length; chain++) {
    const spec = entries[chain].speculation;
    if (spec === null || spec.base_snapshot_id !== prev) break;
    const tester = byId.get(spec.tested_by);
    if (!tester?.speculation || !tester.speculation.covers.includes(entries[chain].entry_id)) break;
    prev = spec.snapshot_id;
  }
  const stale = entries.slice(chain).filter((e) => e.speculation !== null);
  if (stale.length) return { kind: 'reset', entries: stale };
  // From here on entries[0..chain) have valid speculations and none after them has one.

  if (chain > 0) {
    const front = entries[0];
    const tester = byId.get(front.speculation!.tested_by)!;
    const verdict = speculationVerdict(tester.speculation!, f.job);
    if (verdict === 'pass') {
      const evidence = tester.speculation!.reused_worker_job_index ?? tester.speculation!.worker_job_indexes.at(-1)!;
      return { kind: 'land', entry: front, evidence_job: evidence };
    }
  }
  // Failed speculations: retry while runs are left. Then a batch at the front is bisected and a
  // single entry at the front ejected; one behind waits, as its failure may come from an entry
  // ahead of it (which, ejected, restarts the speculations behind).
  for (let i = 0; i < chain; i++) {
    const e = entries[i];
    const spec = e.speculation!;
    if (spec.tested_by !== e.entry_id || speculationVerdict(spec, f.job) !== 'fail') continue;
    if (spec.worker_job_indexes.length < 1 + o.retries) return { kind: 'retry', entry: e };
    const start = i - spec.covers.length + 1;
    if (start !== 0) continue;
    const batch = entries.slice(0, i + 1);
    if (batch.length > 1) return { kind: 'bisect', batch, behind: entries.slice(i + 1).filter((x) => x.speculation !== null) };
    return { kind: 'eject_failed', entry: e, jobs: spec.worker_job_indexes };
  }
  // A job that has not progressed within the bound is reported once.
  for (let i = 0; i < chain; i++) {
    const spec = entries[i].speculation!;
    if (spec.tested_by !== entries[i].entry_id || spec.stalled_at_s !== null) continue;
    const last = spec.worker_job_indexes.at(-1);
    const j = last === undefined ? null : f.job(last);
    if (j && j.verdict === 'pending' && f.now_s - j.updated_at_s > o.stall_s) return { kind: 'stalled', entry: entries[i], worker_job_index: last! };
  }
  // Build the next batch within the window.
  const depth = Math.max(o.depth, o.batch);
  if (chain < entries.length && chain < depth) {
    const first = entries[chain];
    const limit = Math.min(o.batch, first.batch_limit ?? o.batch, depth - chain);
    const batch = [first];
    for (let i = chain + 1; i < entries.length && batch.length < limit && entries[i].batch_limit === null; i++) batch.push(entries[i]);
    return { kind: 'build', entries: batch, base: prev, ahead: entries.slice(0, chain).map((e) => e.entry_id) };
  }
  return null;
}

/** The batch limits a bisection sets: the failed batch's halves each start a smaller batch. */
export function bisectLimits(batch: readonly QueueEntryRecord[]): Map<string, number> {
  const half = Math.ceil(batch.length / 2);
  const out = new Map<string, number>();
  out.set(batch[0].entry_id, half);
  if (batch.length > 1) out.set(batch[half].entry_id, batch.length - half);
  return out;
}

/**
 * The entries the checkpoint section names (storage-layout.md §17.1): every active entry, and
 * each change's latest entry when it was ejected (whose move it is depends on it: docs/api.md
 * "People"), as ascending sequences.
 */
export function queueSectionSequences(entries: Iterable<QueueEntryRecord>): number[] {
  const latest = new Map<string, QueueEntryRecord>();
  const out = new Set<number>();
  for (const e of entries) {
    if (isActiveEntry(e)) out.add(e.sequence);
    const l = latest.get(e.change_id);
    if (!l || l.sequence < e.sequence) latest.set(e.change_id, e);
  }
  for (const e of latest.values()) if (e.state === 'ejected') out.add(e.sequence);
  return [...out].sort((a, b) => a - b);
}

/** The checkpoint section (storage-layout.md §17.1): u32 count, then the named entries' sequences (u32 LE, ascending). */
export function encodeActive(seqs: readonly number[]): Buffer {
  const b = Buffer.alloc(4 + 4 * seqs.length);
  b.writeUInt32LE(seqs.length, 0);
  seqs.forEach((s, i) => b.writeUInt32LE(s, 4 + 4 * i));
  return b;
}

export function decodeActive(b: Buffer): number[] {
  if (b.length < 4) throw new Error('land-queue section is shorter than its count');
  const n = b.readUInt32LE(0);
  if (b.length !== 4 + 4 * n) throw new Error(`land-queue section holds ${b.length} bytes, not ${4 + 4 * n}`);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = b.readUInt32LE(4 + 4 * i);
    if (s === 0 || (i > 0 && s <= out[i - 1])) throw new Error('land-queue section sequences are not ascending');
    out.push(s);
  }
  return out;
}
