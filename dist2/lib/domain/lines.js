// Line rules (spec: "Line", "Lines and snapshots", governed line rule). Pure functions over the
// current line record; the caller checks that a new head snapshot exists.
import { Conflict, Invalid } from './errors.js';
import { requireContentId } from './content.js';
import { requireWellFormed } from './text.js';
export const GOVERNED_LINE = 'main';
export const GOVERNED_CODE = 'GOVERNED_TARGET_LINE_REQUIRES_LAND';
export function validateLineName(name) {
    if (name.length === 0)
        throw new Invalid('line name must be non-empty');
    requireWellFormed(name, 'line name');
    if (Buffer.byteLength(name, 'utf8') > 255)
        throw new Invalid('line name longer than 255 bytes');
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(name))
        throw new Invalid('line name must not contain control characters');
}
/**
 * The line after a move, or `null` when nothing changes (a replay of the current head).
 * Throws Conflict for a CAS mismatch, a move of an archived line, or a direct move of an
 * initialized governed `main` (with code GOVERNED_TARGET_LINE_REQUIRES_LAND).
 */
export function moveLine(name, current, move, now) {
    validateLineName(name);
    if (typeof move.head_snapshot_id === 'string')
        requireContentId(move.head_snapshot_id, 'head_snapshot_id');
    if (typeof move.expected_head_snapshot_id === 'string')
        requireContentId(move.expected_head_snapshot_id, 'expected_head_snapshot_id');
    const currentHead = current?.head_snapshot_id ?? null;
    if (move.expected_head_snapshot_id !== undefined && move.expected_head_snapshot_id !== currentHead) {
        throw new Conflict(`line ${name} head is ${currentHead ?? 'empty'}, not the expected ${move.expected_head_snapshot_id ?? 'empty'}`);
    }
    const nextHead = move.head_snapshot_id === undefined ? currentHead : move.head_snapshot_id;
    if (current && nextHead === currentHead)
        return null;
    if (current?.status === 'archived')
        throw new Conflict(`line ${name} is archived; archived lines do not move`);
    if (name === GOVERNED_LINE && currentHead !== null && nextHead !== currentHead) {
        throw new Conflict(`line ${GOVERNED_LINE} is governed: an initialized ${GOVERNED_LINE} moves only through Land`, { code: GOVERNED_CODE });
    }
    return { name, status: 'active', head_snapshot_id: nextHead, updated_at_s: now };
}
export function closeLine(name, current, status, now) {
    validateLineName(name);
    if (status !== 'archived')
        throw new Invalid('line close status must be "archived"');
    if (!current)
        return null;
    if (current.status === 'archived')
        return current;
    return { ...current, status: 'archived', updated_at_s: now };
}
//# sourceMappingURL=lines.js.map