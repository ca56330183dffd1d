// Workflow rules for tasks, changes and patchsets (spec: "Task", "Change", "Patchset", the Task
// and Change rows of the transition table, "Tasks and read models"; docs/api.md "Tasks, changes,
// patchsets"): record shapes, identities, status moves and the audit verdict. Pure functions.
import { Invalid } from '../errors.js';
import { requireOneLine } from '../text.js';
export const TASK_STATUSES = ['active', 'completed', 'abandoned'];
export const CHANGE_STATUSES = ['draft', 'active', 'review', 'landed', 'archived', 'superseded', 'abandoned'];
/** Statuses of a change that still takes patchsets, selection, reviews and lands. */
export const OPEN_CHANGE_STATUSES = ['draft', 'active', 'review'];
export const AUTHOR_MODES = ['human_only', 'human_with_ai_assist', 'ai_with_human_review', 'ai_only_experimental'];
/** workflow.log entity types (storage-layout.md §17). */
export const TASK = 'task';
export const CHANGE = 'change';
export const PATCHSET = 'patchset';
// ------------------------------------------------------------------ identities
const SEQ = '([1-9][0-9]{0,9})';
const TASK_RE = new RegExp(`^task-${SEQ}$`);
const CHANGE_RE = new RegExp(`^change-${SEQ}$`);
const CHANGE_REF_RE = new RegExp(`^task-${SEQ}\\.change-${SEQ}$`);
const PATCHSET_RE = new RegExp(`^change-${SEQ}\\.ps-${SEQ}$`);
const BARE_RE = new RegExp(`^${SEQ}$`);
export const taskId = (sequence) => `task-${sequence}`;
export const changeId = (sequence) => `change-${sequence}`;
export const changeRef = (task, sequence) => `${task}.${changeId(sequence)}`;
export const patchsetId = (change, number) => `${change}.ps-${number}`;
/** `{task_ref}`: the task id `task-7` or its bare sequence `7`. Returns the task id, or null when malformed. */
export function parseTaskRef(ref) {
    const m = TASK_RE.exec(ref) ?? BARE_RE.exec(ref);
    return m ? taskId(Number(m[1])) : null;
}
/**
 * `{change_ref}`: the short identity `change-5` (the change_id) or the full `task-3.change-5`
 * (the change_ref). Returns the change id and, for the full spelling, the task it names.
 */
export function parseChangeRef(ref) {
    const short = CHANGE_RE.exec(ref);
    if (short)
        return { change_id: changeId(Number(short[1])), task_id: null };
    const full = CHANGE_REF_RE.exec(ref);
    if (full)
        return { change_id: changeId(Number(full[2])), task_id: taskId(Number(full[1])) };
    return null;
}
export function isPatchsetId(id) {
    return PATCHSET_RE.test(id);
}
/** A caller-supplied task_id: malformed, or well formed but not the next id → 400. */
export function checkSuppliedTaskId(supplied, derived) {
    if (supplied === undefined)
        return;
    if (!TASK_RE.test(supplied))
        throw new Invalid('task_id must be of the form task-<sequence>');
    if (supplied !== derived)
        throw new Invalid(`task_id ${supplied} is not the next task id (${derived})`);
}
/** A caller-supplied change_id may be the derived short (`change-N`) or full (`task-M.change-N`) identity; anything else → 400. */
export function checkSuppliedChangeId(supplied, derived) {
    if (supplied === undefined)
        return;
    if (parseChangeRef(supplied) === null)
        throw new Invalid('change_id must be of the form change-<sequence> or task-<sequence>.change-<sequence>');
    if (supplied !== derived.change_id && supplied !== derived.change_ref)
        throw new Invalid(`change_id ${supplied} is not the next change identity (${derived.change_id} or ${derived.change_ref})`);
}
/** Shape of a caller-supplied patchset identity (400 when malformed). */
export function checkPatchsetShape(supplied) {
    if (supplied.patchset_id !== undefined && !isPatchsetId(supplied.patchset_id))
        throw new Invalid('patchset_id must be of the form change-<sequence>.ps-<number>');
    if (supplied.patchset_number !== undefined && (!Number.isSafeInteger(supplied.patchset_number) || supplied.patchset_number < 1))
        throw new Invalid('patchset_number must be a positive integer');
}
/** A caller-supplied patchset_id / patchset_number: malformed, or not the derived identity → 400. */
export function checkSuppliedPatchset(supplied, derived) {
    checkPatchsetShape(supplied);
    if (supplied.patchset_id !== undefined && supplied.patchset_id !== derived.patchset_id)
        throw new Invalid(`patchset_id ${supplied.patchset_id} is not the derived identity (${derived.patchset_id})`);
    if (supplied.patchset_number !== undefined && supplied.patchset_number !== derived.patchset_number)
        throw new Invalid(`patchset_number ${supplied.patchset_number} is not the derived number (${derived.patchset_number})`);
}
// ------------------------------------------------------------------ transitions
/** Task `:close`: `completed` → completed; `abandoned`, `canceled`, `cancelled` → abandoned. */
export function taskCloseStatus(requested) {
    if (requested === 'completed')
        return 'completed';
    if (requested === 'abandoned' || requested === 'canceled' || requested === 'cancelled')
        return 'abandoned';
    throw new Invalid('status must be completed, abandoned, canceled or cancelled');
}
/**
 * What a task `:close` to `next` does: `move` (active → completed or abandoned, recorded) or
 * `same` (already `next`: an idempotent retry, nothing written). A completed task does not become
 * abandoned nor the reverse: the transition table moves tasks only out of `active` (400).
 */
export function taskCloseMove(task, next) {
    if (task.status === 'active')
        return 'move';
    if (task.status === next)
        return 'same';
    throw new Invalid(`task ${task.task_id} is ${task.status}; a closed task cannot become ${next}`);
}
/** Change `:close`: archived, superseded, abandoned; canceled/cancelled → abandoned; landed is never set here. */
export function changeCloseStatus(requested) {
    if (requested === 'archived' || requested === 'superseded' || requested === 'abandoned')
        return requested;
    if (requested === 'canceled' || requested === 'cancelled')
        return 'abandoned';
    if (requested === 'landed')
        throw new Invalid('landed is set only by a land, never by :close');
    throw new Invalid('status must be archived, superseded, abandoned, canceled or cancelled');
}
export function isOpenChange(status) {
    return OPEN_CHANGE_STATUSES.includes(status);
}
/**
 * Selection, new patchsets, reviews, attestations, CI and policy need an open change (draft,
 * active or review); on a closed or landed change they are invalid state transitions (400).
 */
export function checkChangeOpen(change, action) {
    if (!isOpenChange(change.status))
        throw new Invalid(`change ${change.change_id} is ${change.status}; cannot ${action}`);
}
/**
 * What a change `:close` to `next` (a closed status) does. The transition table closes a change
 * from any status: an open change moves (recorded); a closed one already `next` answers as it is
 * (an idempotent retry, nothing written); a closed one in another closed status moves to `next`
 * (recorded). A landed change stays landed (400).
 */
export function changeCloseMove(change, next) {
    if (change.status === 'landed')
        throw new Invalid(`change ${change.change_id} is landed; a landed change cannot be closed`);
    return change.status === next ? 'same' : 'move';
}
/**
 * Moves among draft, active and review: a change is created `draft`; its first patchset makes it
 * `active` (later patchsets keep the status); a review request makes it `review`.
 */
export function statusAfterPatchset(status) {
    return status === 'draft' ? 'active' : status;
}
export function requireTaskStatus(value) {
    if (!TASK_STATUSES.includes(value))
        throw new Invalid(`status must be one of ${TASK_STATUSES.join(', ')}`);
    return value;
}
export function requireChangeStatus(value) {
    if (!CHANGE_STATUSES.includes(value))
        throw new Invalid(`status must be one of ${CHANGE_STATUSES.join(', ')}`);
    return value;
}
export function requireAuthorMode(value) {
    if (!AUTHOR_MODES.includes(value))
        throw new Invalid(`author_mode must be one of ${AUTHOR_MODES.join(', ')}`);
    return value;
}
export const AUDIT_VERDICTS = ['task_completed', 'task_abandoned', 'ready_to_close', 'no_changes', 'in_progress'];
/**
 * The audit verdict, first rule that applies: a completed task → task_completed; an abandoned
 * task → task_abandoned; any open change (draft, active, review) → in_progress; at least one
 * change landed on the target line → ready_to_close; otherwise (no changes, or every change
 * closed without landing on the target line) → no_changes.
 */
export function auditVerdict(task, open, landedOnTarget) {
    if (task === 'completed')
        return 'task_completed';
    if (task === 'abandoned')
        return 'task_abandoned';
    if (open > 0)
        return 'in_progress';
    if (landedOnTarget > 0)
        return 'ready_to_close';
    return 'no_changes';
}
// ------------------------------------------------------------------ text fields
export const MAX_TITLE_CHARS = 1024;
export const MAX_TEXT_CHARS = 64 * 1024;
export function requireText(value, field, max, allowEmpty = false) {
    if (!allowEmpty && value.trim() === '')
        throw new Invalid(`${field} must be non-empty`);
    if (value.length > max)
        throw new Invalid(`${field} is longer than ${max} characters`);
    return value;
}
/** A title (of a task, a change, a plan): non-empty, at most MAX_TITLE_CHARS, one line without control characters. */
export function requireTitle(value, field) {
    return requireOneLine(requireText(value, field, MAX_TITLE_CHARS), field);
}
//# sourceMappingURL=rules.js.map