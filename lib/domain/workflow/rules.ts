// Workflow rules for tasks, changes and patchsets (spec: "Task", "Change", "Patchset", the Task
// and Change rows of the transition table, "Tasks and read models"; docs/api.md "Tasks, changes,
// patchsets"): record shapes, identities, status moves and the audit verdict. Pure functions.
import { Invalid } from '../errors.js';
import { requireOneLine } from '../text.js';
import type { TreeDiff } from './tree-diff.js';

export type TaskStatus = 'active' | 'completed' | 'abandoned';
export const TASK_STATUSES: readonly TaskStatus[] = ['active', 'completed', 'abandoned'];
export type ChangeStatus = 'draft' | 'active' | 'review' | 'landed' | 'archived' | 'superseded' | 'abandoned';
export const CHANGE_STATUSES: readonly ChangeStatus[] = ['draft', 'active', 'review', 'landed', 'archived', 'superseded', 'abandoned'];
/** Statuses of a change that still takes patchsets, selection, reviews and lands. */
export const OPEN_CHANGE_STATUSES: readonly ChangeStatus[] = ['draft', 'active', 'review'];
export const AUTHOR_MODES = ['human_only', 'human_with_ai_assist', 'ai_with_human_review', 'ai_only_experimental'] as const;
export type AuthorMode = (typeof AUTHOR_MODES)[number];

/** workflow.log entity types (storage-layout.md §17). */
export const TASK = 'task';
export const CHANGE = 'change';
export const PATCHSET = 'patchset';

export interface TaskRecord {
  task_id: string;
  sequence: number;
  title: string;
  intent: string;
  plan_id: string | null;
  origin_plan_revision_id: string | null;
  plan_item_ref: string | null;
  status: TaskStatus;
  created_at_s: number;
  updated_at_s: number;
  closed_at_s: number | null;
  /** Only on a task published by a history promotion: the client's local identity. */
  promoted_from?: { local_task_id: string; promotion_id: string };
}

export interface ChangeRecord {
  change_id: string;
  change_ref: string;
  sequence: number;
  task_id: string;
  title: string;
  base_line: string;
  fork_snapshot_id: string | null;
  status: ChangeStatus;
  patchset_count: number;
  current_patchset_id: string | null;
  selected_patchset_id: string | null;
  land_target_line: string;
  created_at_s: number;
  updated_at_s: number;
  closed_at_s: number | null;
  landed_at_s: number | null;
  /** Only on a change published by a history promotion: the client's local identities. */
  promoted_from?: { local_change_id: string; local_change_ref: string; local_task_id: string; promotion_id: string };
  /**
   * Only on an earlier entry's change of a history promotion, set when the promotion's aggregate
   * change landed: the change is `landed` through that land, not a land of its own.
   */
  landed_via?: { promotion_id: string; land_id: string; change_id: string };
  /** The person who created the change (the caller's identity, or the create body's `owner`); absent when none was named. */
  owner?: string;
  /**
   * The people and groups asked to review, in the order first asked (`:requestReview`); absent
   * until a request names one. Group requests written before this field existed are still
   * review records (`reviewer_group`); the change projection merges both.
   */
  reviewers?: { name: string; kind: 'person' | 'group' }[];
  /** A name grouping related changes (Gerrit's topic; `-o topic=`, `:setFlags`); absent: none. */
  topic?: string;
  /** Work in progress (`-o wip`): no reviewer is asked to act until it is ready; absent: ready. */
  wip?: true;
  /** People told of the change without being asked to review (`-o cc=`), in the order first named; absent: none. */
  cc?: string[];
}

export interface AppliedSuggestion { comment_id: string; author: string }

/** What a patchset is created from (a request, or the server's own `:applySuggestions`). */
export interface PatchsetInput {
  base_snapshot_id: string;
  revision_snapshot_id: string;
  summary: string;
  author_mode: string;
  author?: string | null;
  patchset_id?: string;
  patchset_number?: number;
  /** Set only by `:applySuggestions` (lib/authority/workflow/comments.ts), never from a request. */
  applied_suggestions?: AppliedSuggestion[];
  /** Set only by a push for review (lib/authority/workflow/push-review.ts), never from a request. */
  pushed_by?: string | null;
  /** Set only by `:rebase` (lib/authority/workflow/rebase.ts), never from a request. */
  rebased_from?: RebasedFrom;
}

/** A patchset built by `:rebase`: the patchset it rebased, the target head it was rebased onto, and who asked (null: no identity). */
export interface RebasedFrom { patchset_id: string; onto_snapshot_id: string; by: string | null }


export interface PatchsetRecord {
  patchset_id: string;
  change_id: string;
  patchset_number: number;
  base_snapshot_id: string;
  revision_snapshot_id: string;
  summary: string;
  author_mode: AuthorMode;
  /** Who wrote the patchset (optional on create; null when not given). Policy: independent approval. */
  author?: string | null;
  publish_state: 'published';
  withdrawn: boolean;
  invalidated: boolean;
  diff: TreeDiff;
  created_at_s: number;
  /** A patchset built by `:applySuggestions`: whose suggestion each applied comment was, in request order. */
  applied_suggestions?: AppliedSuggestion[];
  /**
   * Only on a patchset received by a push for review: the pusher's identity (the trusted
   * ingress's header), or null when the push named none. Whatever the commit's author says.
   */
  pushed_by?: string | null;
  /** Only on a patchset made by `:rebase`: what it rebased onto what, and who asked. */
  rebased_from?: RebasedFrom;
  /** Set when a land moved the target line past this open patchset's base (its CI may be re-run). */
  base_stale?: boolean;
  base_stale_land_id?: string;
}

// ------------------------------------------------------------------ identities

const SEQ = '([1-9][0-9]{0,9})';
const TASK_RE = new RegExp(`^task-${SEQ}$`);
const CHANGE_RE = new RegExp(`^change-${SEQ}$`);
const CHANGE_REF_RE = new RegExp(`^task-${SEQ}\\.change-${SEQ}$`);
const PATCHSET_RE = new RegExp(`^change-${SEQ}\\.ps-${SEQ}$`);
const BARE_RE = new RegExp(`^${SEQ}$`);

export const taskId = (sequence: number) => `task-${sequence}`;
export const changeId = (sequence: number) => `change-${sequence}`;
export const changeRef = (task: string, sequence: number) => `${task}.${changeId(sequence)}`;
export const patchsetId = (change: string, number: number) => `${change}.ps-${number}`;

/** `{task_ref}`: the task id `task-7` or its bare sequence `7`. Returns the task id, or null when malformed. */
export function parseTaskRef(ref: string): string | null {
  const m = TASK_RE.exec(ref) ?? BARE_RE.exec(ref);
  return m ? taskId(Number(m[1])) : null;
}

/**
 * `{change_ref}`: the short identity `change-5` (the change_id) or the full `task-3.change-5`
 * (the change_ref). Returns the change id and, for the full spelling, the task it names.
 */
export function parseChangeRef(ref: string): { change_id: string; task_id: string | null } | null {
  const short = CHANGE_RE.exec(ref);
  if (short) return { change_id: changeId(Number(short[1])), task_id: null };
  const full = CHANGE_REF_RE.exec(ref);
  if (full) return { change_id: changeId(Number(full[2])), task_id: taskId(Number(full[1])) };
  return null;
}

export function isPatchsetId(id: string): boolean {
  return PATCHSET_RE.test(id);
}

/** A caller-supplied task_id: malformed, or well formed but not the next id → 400. */
export function checkSuppliedTaskId(supplied: string | undefined, derived: string): void {
  if (supplied === undefined) return;
  if (!TASK_RE.test(supplied)) throw new Invalid('task_id must be of the form task-<sequence>');
  if (supplied !== derived) throw new Invalid(`task_id ${supplied} is not the next task id (${derived})`);
}

/** A caller-supplied change_id may be the derived short (`change-N`) or full (`task-M.change-N`) identity; anything else → 400. */
export function checkSuppliedChangeId(supplied: string | undefined, derived: { change_id: string; change_ref: string }): void {
  if (supplied === undefined) return;
  if (parseChangeRef(supplied) === null) throw new Invalid('change_id must be of the form change-<sequence> or task-<sequence>.change-<sequence>');
  if (supplied !== derived.change_id && supplied !== derived.change_ref) throw new Invalid(`change_id ${supplied} is not the next change identity (${derived.change_id} or ${derived.change_ref})`);
}

/** Shape of a caller-supplied patchset identity (400 when malformed). */
export function checkPatchsetShape(supplied: { patchset_id?: string; patchset_number?: number }): void {
  if (supplied.patchset_id !== undefined && !isPatchsetId(supplied.patchset_id)) throw new Invalid('patchset_id must be of the form change-<sequence>.ps-<number>');
  if (supplied.patchset_number !== undefined && (!Number.isSafeInteger(supplied.patchset_number) || supplied.patchset_number < 1)) throw new Invalid('patchset_number must be a positive integer');
}

/** A caller-supplied patchset_id / patchset_number: malformed, or not the derived identity → 400. */
export function checkSuppliedPatchset(supplied: { patchset_id?: string; patchset_number?: number }, derived: { patchset_id: string; patchset_number: number }): void {
  checkPatchsetShape(supplied);
  if (supplied.patchset_id !== undefined && supplied.patchset_id !== derived.patchset_id) throw new Invalid(`patchset_id ${supplied.patchset_id} is not the derived identity (${derived.patchset_id})`);
  if (supplied.patchset_number !== undefined && supplied.patchset_number !== derived.patchset_number) throw new Invalid(`patchset_number ${supplied.patchset_number} is not the derived number (${derived.patchset_number})`);
}

// ------------------------------------------------------------------ transitions

/** Task `:close`: `completed` → completed; `abandoned`, `canceled`, `cancelled` → abandoned. */
export function taskCloseStatus(requested: string): TaskStatus {
  if (requested === 'completed') return 'completed';
  if (requested === 'abandoned' || requested === 'canceled' || requested === 'cancelled') return 'abandoned';
  throw new Invalid('status must be completed, abandoned, canceled or cancelled');
}

/**
 * What a task `:close` to `next` does: `move` (active → completed or abandoned, recorded) or
 * `same` (already `next`: an idempotent retry, nothing written). A completed task does not become
 * abandoned nor the reverse: the transition table moves tasks only out of `active` (400).
 */
export function taskCloseMove(task: TaskRecord, next: TaskStatus): 'move' | 'same' {
  if (task.status === 'active') return 'move';
  if (task.status === next) return 'same';
  throw new Invalid(`task ${task.task_id} is ${task.status}; a closed task cannot become ${next}`);
}

/** Change `:close`: archived, superseded, abandoned; canceled/cancelled → abandoned; landed is never set here. */
export function changeCloseStatus(requested: string): ChangeStatus {
  if (requested === 'archived' || requested === 'superseded' || requested === 'abandoned') return requested;
  if (requested === 'canceled' || requested === 'cancelled') return 'abandoned';
  if (requested === 'landed') throw new Invalid('landed is set only by a land, never by :close');
  throw new Invalid('status must be archived, superseded, abandoned, canceled or cancelled');
}

export function isOpenChange(status: ChangeStatus): boolean {
  return (OPEN_CHANGE_STATUSES as readonly string[]).includes(status);
}

/**
 * Selection, new patchsets, reviews, attestations, CI and policy need an open change (draft,
 * active or review); on a closed or landed change they are invalid state transitions (400).
 */
export function checkChangeOpen(change: ChangeRecord, action: string): void {
  if (!isOpenChange(change.status)) throw new Invalid(`change ${change.change_id} is ${change.status}; cannot ${action}`);
}

/**
 * What a change `:close` to `next` (a closed status) does. The transition table closes a change
 * from any status: an open change moves (recorded); a closed one already `next` answers as it is
 * (an idempotent retry, nothing written); a closed one in another closed status moves to `next`
 * (recorded). A landed change stays landed (400).
 */
export function changeCloseMove(change: ChangeRecord, next: ChangeStatus): 'move' | 'same' {
  if (change.status === 'landed') throw new Invalid(`change ${change.change_id} is landed; a landed change cannot be closed`);
  return change.status === next ? 'same' : 'move';
}

/**
 * Moves among draft, active and review: a change is created `draft`; its first patchset makes it
 * `active` (later patchsets keep the status); a review request makes it `review`.
 */
export function statusAfterPatchset(status: ChangeStatus): ChangeStatus {
  return status === 'draft' ? 'active' : status;
}

export function requireTaskStatus(value: string): TaskStatus {
  if (!(TASK_STATUSES as readonly string[]).includes(value)) throw new Invalid(`status must be one of ${TASK_STATUSES.join(', ')}`);
  return value as TaskStatus;
}

export function requireChangeStatus(value: string): ChangeStatus {
  if (!(CHANGE_STATUSES as readonly string[]).includes(value)) throw new Invalid(`status must be one of ${CHANGE_STATUSES.join(', ')}`);
  return value as ChangeStatus;
}

export function requireAuthorMode(value: string): AuthorMode {
  if (!(AUTHOR_MODES as readonly string[]).includes(value)) throw new Invalid(`author_mode must be one of ${AUTHOR_MODES.join(', ')}`);
  return value as AuthorMode;
}

// ------------------------------------------------------------------ audit verdict

export type Verdict = 'task_completed' | 'task_abandoned' | 'ready_to_close' | 'no_changes' | 'in_progress';
export const AUDIT_VERDICTS: readonly Verdict[] = ['task_completed', 'task_abandoned', 'ready_to_close', 'no_changes', 'in_progress'];

/**
 * The audit verdict, first rule that applies: a completed task → task_completed; an abandoned
 * task → task_abandoned; any open change (draft, active, review) → in_progress; at least one
 * change landed on the target line → ready_to_close; otherwise (no changes, or every change
 * closed without landing on the target line) → no_changes.
 */
export function auditVerdict(task: TaskStatus, open: number, landedOnTarget: number): Verdict {
  if (task === 'completed') return 'task_completed';
  if (task === 'abandoned') return 'task_abandoned';
  if (open > 0) return 'in_progress';
  if (landedOnTarget > 0) return 'ready_to_close';
  return 'no_changes';
}

// ------------------------------------------------------------------ text fields

export const MAX_TITLE_CHARS = 1024;
export const MAX_TEXT_CHARS = 64 * 1024;

export function requireText(value: string, field: string, max: number, allowEmpty = false): string {
  if (!allowEmpty && value.trim() === '') throw new Invalid(`${field} must be non-empty`);
  if (value.length > max) throw new Invalid(`${field} is longer than ${max} characters`);
  return value;
}

/** A title (of a task, a change, a plan): non-empty, at most MAX_TITLE_CHARS, one line without control characters. */
export function requireTitle(value: string, field: string): string {
  return requireOneLine(requireText(value, field, MAX_TITLE_CHARS), field);
}
