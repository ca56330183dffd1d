// History promotion rules (spec: "History promotion prepare body", Limits; docs/api.md "History
// promotion"): the request shape after schema checks, the request-only rules (400), the
// ancestry rule over stored snapshots (409), the payload fingerprint and the record shapes.
// Pure functions: snapshot lookups are passed in.
import { createHash } from 'node:crypto';
import { requireContentId } from '../content.js';
import { Conflict, Invalid } from '../errors.js';
import { validateLineName } from '../lines.js';
import { requireWellFormed } from '../text.js';
import { parseChangeRef, parseTaskRef, requireAuthorMode, requireText, requireTitle, MAX_TEXT_CHARS } from './rules.js';
export const PROMOTION_CONTRACT = 'history-promotion-prepare/v1';
export const MAX_ENTRIES = 64;
export const MAX_ENTRY_SNAPSHOTS = 64;
export const MAX_IDEMPOTENCY_KEY_BYTES = 256;
/** Local identities are the client's own; bounded like titles. */
const MAX_LOCAL_ID_BYTES = 256;
/** workflow.log entity types (storage-layout.md §17). */
export const PROMOTION = 'history_promotion';
export const PROMOTION_KEY = 'history_promotion_key';
export const promotionId = (sequence) => `promotion-${sequence}`;
/** An idempotency key: non-empty, valid Unicode, at most 256 UTF-8 bytes (400). */
export function requireIdempotencyKey(key) {
    if (key.length === 0)
        throw new Invalid('idempotency_key must be non-empty');
    requireWellFormed(key, 'idempotency_key');
    if (Buffer.byteLength(key, 'utf8') > MAX_IDEMPOTENCY_KEY_BYTES)
        throw new Invalid(`idempotency_key is longer than ${MAX_IDEMPOTENCY_KEY_BYTES} UTF-8 bytes`);
    return key;
}
function requireLocalId(value, field) {
    if (value.length === 0)
        throw new Invalid(`${field} must be non-empty`);
    requireWellFormed(value, field);
    if (Buffer.byteLength(value, 'utf8') > MAX_LOCAL_ID_BYTES)
        throw new Invalid(`${field} is longer than ${MAX_LOCAL_ID_BYTES} UTF-8 bytes`);
}
function requireSeconds(value, field) {
    if (!Number.isSafeInteger(value) || value < 0)
        throw new Invalid(`${field} must be a non-negative integer of seconds`);
}
/**
 * Every rule that needs only the request (400): contract, bounds, key, author mode, names and
 * ids, text, ordering, the chain of land boundaries, the fork rule, unique local changes (a
 * local task may repeat, with the same task fields: one remote task per local task), the shape
 * of the expected remote identities.
 */
export function checkPromotionRequest(req) {
    if (req.contract !== PROMOTION_CONTRACT)
        throw new Invalid(`contract must be ${PROMOTION_CONTRACT}`);
    requireIdempotencyKey(req.idempotency_key);
    if (req.entries.length < 1 || req.entries.length > MAX_ENTRIES)
        throw new Invalid(`entries must hold 1 to ${MAX_ENTRIES} items`);
    validateLineName(req.target_line);
    requireContentId(req.base_snapshot_id, 'base_snapshot_id');
    requireContentId(req.revision_snapshot_id, 'revision_snapshot_id');
    const mode = requireAuthorMode(req.author_mode);
    requireWellFormed(req.summary, 'summary');
    requireText(req.summary, 'summary', MAX_TEXT_CHARS);
    const seen = { task: new Map(), change: new Set(), ref: new Set() };
    // Target-line heads the local history has recorded so far: a change forks at one of them.
    const heads = new Set([req.base_snapshot_id]);
    let expectedPre = req.base_snapshot_id;
    let lastLandedAt = -1;
    req.entries.forEach((e, i) => {
        const at = `entries[${i}]`;
        requireLocalId(e.local_task_id, `${at}.local_task_id`);
        requireLocalId(e.local_change_id, `${at}.local_change_id`);
        requireLocalId(e.local_change_ref, `${at}.local_change_ref`);
        if (seen.change.has(e.local_change_id))
            throw new Invalid(`${at}.local_change_id ${e.local_change_id} appears in an earlier entry`);
        if (seen.ref.has(e.local_change_ref))
            throw new Invalid(`${at}.local_change_ref ${e.local_change_ref} appears in an earlier entry`);
        // A local task that landed several times appears in several entries: one remote task, so one set of task fields.
        const first = seen.task.get(e.local_task_id);
        if (first !== undefined && !sameTask(req.entries[first].task, e.task)) {
            throw new Invalid(`${at}.task differs from entries[${first}].task of the same local task ${e.local_task_id} (one remote task is published per local task)`);
        }
        if (first === undefined)
            seen.task.set(e.local_task_id, i);
        seen.change.add(e.local_change_id);
        seen.ref.add(e.local_change_ref);
        if (e.expected_remote_task_id != null && parseTaskRef(e.expected_remote_task_id) !== e.expected_remote_task_id)
            throw new Invalid(`${at}.expected_remote_task_id must be of the form task-<sequence>`);
        if (e.expected_remote_change_ref != null) {
            const parsed = parseChangeRef(e.expected_remote_change_ref);
            if (parsed === null || parsed.task_id === null)
                throw new Invalid(`${at}.expected_remote_change_ref must be of the form task-<sequence>.change-<sequence>`);
        }
        for (const [field, value] of Object.entries(e.task))
            if (typeof value === 'string')
                requireWellFormed(value, `${at}.task.${field}`);
        requireTitle(e.task.title, `${at}.task.title`);
        requireText(e.task.intent, `${at}.task.intent`, MAX_TEXT_CHARS);
        requireWellFormed(e.change.title, `${at}.change.title`);
        requireTitle(e.change.title, `${at}.change.title`);
        validateLineName(e.change.base_line);
        if (e.change.base_line !== req.target_line)
            throw new Invalid(`${at}.change.base_line must be the target line ${req.target_line}`);
        requireContentId(e.change.fork_snapshot_id, `${at}.change.fork_snapshot_id`);
        requireContentId(e.pre_land_target_snapshot_id, `${at}.pre_land_target_snapshot_id`);
        requireContentId(e.landed_snapshot_id, `${at}.landed_snapshot_id`);
        requireSeconds(e.landed_at_s, `${at}.landed_at_s`);
        if (e.landed_at_s < lastLandedAt)
            throw new Invalid(`${at}.landed_at_s is earlier than the previous entry's (entries are ordered by landed_at_s)`);
        lastLandedAt = e.landed_at_s;
        if (e.pre_land_target_snapshot_id !== expectedPre) {
            throw new Invalid(i === 0 ? 'entries[0].pre_land_target_snapshot_id must be base_snapshot_id' : `${at}.pre_land_target_snapshot_id must be the previous entry's landed_snapshot_id`);
        }
        if (!heads.has(e.change.fork_snapshot_id))
            throw new Invalid(`${at}.change.fork_snapshot_id must be base_snapshot_id or an earlier entry's landed_snapshot_id (a target-line head the local history recorded before this land)`);
        if (e.snapshots.length < 1 || e.snapshots.length > MAX_ENTRY_SNAPSHOTS)
            throw new Invalid(`${at}.snapshots must hold 1 to ${MAX_ENTRY_SNAPSHOTS} items`);
        let lastCreated = -1;
        const ids = new Set();
        e.snapshots.forEach((s, j) => {
            requireContentId(s.snapshot_id, `${at}.snapshots[${j}].snapshot_id`);
            requireSeconds(s.created_at_s, `${at}.snapshots[${j}].created_at_s`);
            if (s.created_at_s < lastCreated)
                throw new Invalid(`${at}.snapshots[${j}] is created earlier than the one before it (snapshots are ordered by created_at_s)`);
            if (ids.has(s.snapshot_id))
                throw new Invalid(`${at}.snapshots[${j}] repeats ${s.snapshot_id}`);
            lastCreated = s.created_at_s;
            ids.add(s.snapshot_id);
        });
        if (!ids.has(e.landed_snapshot_id))
            throw new Invalid(`${at}.landed_snapshot_id must be one of the entry's snapshots`);
        expectedPre = e.landed_snapshot_id;
        heads.add(e.landed_snapshot_id);
    });
    if (expectedPre !== req.revision_snapshot_id)
        throw new Invalid('the last entry must land at revision_snapshot_id');
    return mode;
}
function sameTask(a, b) {
    return a.title === b.title && a.intent === b.intent && (a.plan_id ?? null) === (b.plan_id ?? null)
        && (a.origin_plan_revision_id ?? null) === (b.origin_plan_revision_id ?? null) && (a.plan_item_ref ?? null) === (b.plan_item_ref ?? null);
}
/**
 * Which remote task each entry's change goes to: the position of the entry's local task among
 * the distinct local tasks, in order of first appearance (entries of one local task share it).
 */
export function taskSlots(entries) {
    const slot = new Map();
    return entries.map((e) => {
        if (!slot.has(e.local_task_id))
            slot.set(e.local_task_id, slot.size);
        return slot.get(e.local_task_id);
    });
}
/**
 * Ancestry of one entry over the stored parents (409 when the stored history contradicts the
 * request): every listed snapshot was created when the request says; the landed snapshot
 * reaches the pre-land target through parents that are listed snapshots; and every listed
 * snapshot is on that history (an ancestor of the landed one within the list).
 */
export function checkEntryAncestry(entry, index, stored) {
    const at = `entries[${index}]`;
    const listed = new Map(entry.snapshots.map((s) => [s.snapshot_id, s]));
    for (const s of entry.snapshots) {
        const rec = stored(s.snapshot_id);
        if (rec.created_at_s !== s.created_at_s)
            throw new Conflict(`${at}: snapshot ${s.snapshot_id} was created at ${rec.created_at_s}, not ${s.created_at_s}`);
    }
    const reached = new Set([entry.landed_snapshot_id]);
    const queue = [entry.landed_snapshot_id];
    let reachesPre = false;
    while (queue.length > 0) {
        const id = queue.pop();
        for (const parent of stored(id).parent_snapshot_ids) {
            if (parent === entry.pre_land_target_snapshot_id)
                reachesPre = true;
            else if (listed.has(parent) && !reached.has(parent)) {
                reached.add(parent);
                queue.push(parent);
            }
        }
    }
    if (!reachesPre)
        throw new Conflict(`${at}: landed_snapshot_id ${entry.landed_snapshot_id} does not descend from pre_land_target_snapshot_id ${entry.pre_land_target_snapshot_id} through the entry's snapshots`);
    for (const s of entry.snapshots) {
        if (!reached.has(s.snapshot_id))
            throw new Conflict(`${at}: snapshot ${s.snapshot_id} is not on the history of landed_snapshot_id ${entry.landed_snapshot_id}`);
    }
}
/** The expected remote identities, when given, must equal what would be published (400, like any caller-named identity that is not the derived one). */
export function checkExpectedIdentities(entry, index, derived) {
    if (entry.expected_remote_task_id != null && entry.expected_remote_task_id !== derived.task_id) {
        throw new Invalid(`entries[${index}].expected_remote_task_id ${entry.expected_remote_task_id} is not the task this promotion would publish (${derived.task_id})`);
    }
    if (entry.expected_remote_change_ref != null && entry.expected_remote_change_ref !== derived.change_ref) {
        throw new Invalid(`entries[${index}].expected_remote_change_ref ${entry.expected_remote_change_ref} is not the change this promotion would publish (${derived.change_ref})`);
    }
}
/** The request as recorded: known fields only, absent optional fields as null. */
export function normalizePromotion(req) {
    return {
        contract: req.contract,
        idempotency_key: req.idempotency_key,
        target_line: req.target_line,
        base_snapshot_id: req.base_snapshot_id,
        revision_snapshot_id: req.revision_snapshot_id,
        author_mode: req.author_mode,
        summary: req.summary,
        entries: req.entries.map((e) => ({
            local_task_id: e.local_task_id,
            local_change_id: e.local_change_id,
            local_change_ref: e.local_change_ref,
            expected_remote_task_id: e.expected_remote_task_id ?? null,
            expected_remote_change_ref: e.expected_remote_change_ref ?? null,
            task: { title: e.task.title, intent: e.task.intent, plan_id: e.task.plan_id ?? null, origin_plan_revision_id: e.task.origin_plan_revision_id ?? null, plan_item_ref: e.task.plan_item_ref ?? null },
            change: { title: e.change.title, base_line: e.change.base_line, fork_snapshot_id: e.change.fork_snapshot_id },
            pre_land_target_snapshot_id: e.pre_land_target_snapshot_id,
            landed_snapshot_id: e.landed_snapshot_id,
            landed_at_s: e.landed_at_s,
            snapshots: e.snapshots.map((s) => ({ snapshot_id: s.snapshot_id, created_at_s: s.created_at_s })),
        })),
    };
}
/** sha256 of the canonical JSON (object keys sorted) of the normalized request: the payload a key is bound to. */
export function payloadFingerprint(req) {
    const canon = (v) => {
        if (Array.isArray(v))
            return v.map(canon);
        if (v && typeof v === 'object')
            return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])]));
        return v;
    };
    return createHash('sha256').update(JSON.stringify(canon(req))).digest('hex');
}
//# sourceMappingURL=promotion.js.map