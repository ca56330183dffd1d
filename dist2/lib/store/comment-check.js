// fsck's check of the comment records of workflow.log (storage-layout.md §17 "Comments"): ids
// and sequences dense per change; each comment's change and patchset present; anchors of the
// stored shape; each reply's `in_reply_to` an earlier comment of the same change that is
// published; no published resolution on a thread whose first comment is a draft. It reports;
// it never repairs.
import { cleanRelativePath } from '../domain/paths.js';
import { COMMENT, parseCommentId, SIDES } from '../domain/workflow/comment-rules.js';
import { CHANGE, PATCHSET } from '../domain/workflow/rules.js';
/** At most this many comment problems are listed (then a count of the rest). */
const MAX_REPORTED = 50;
/** Why a stored anchor is not of the shape the create rules write, or null when it is. */
export function anchorProblem(a) {
    if (typeof a !== 'object' || a === null)
        return 'is not an object';
    const x = a;
    const keys = Object.keys(x).sort().join(',');
    const cleanPath = () => {
        if (typeof x.path !== 'string')
            return 'has no path';
        try {
            if (cleanRelativePath(x.path, 'path') !== x.path)
                return `path ${JSON.stringify(x.path)} is not clean`;
        }
        catch (err) {
            return err.message;
        }
        return null;
    };
    const line = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;
    switch (x.kind) {
        case 'patchset':
            return keys === 'kind' ? null : `of kind patchset has fields ${keys}`;
        case 'file':
            return keys === 'kind,path' ? cleanPath() : `of kind file has fields ${keys}`;
        case 'lines': {
            if (keys !== 'end_line,kind,line,path,side')
                return `of kind lines has fields ${keys}`;
            const p = cleanPath();
            if (p)
                return p;
            if (!SIDES.includes(x.side))
                return `side ${JSON.stringify(x.side)} is not base or revision`;
            if (!line(x.line))
                return `line ${JSON.stringify(x.line)} is not an integer of at least 1`;
            if (x.end_line !== null && (!line(x.end_line) || x.end_line <= x.line))
                return `end_line ${JSON.stringify(x.end_line)} is not null or a line after line ${x.line}`;
            return null;
        }
        default:
            return `kind ${JSON.stringify(x.kind)} is not lines, file or patchset`;
    }
}
/** Problems of the comment records, each naming the comment and the broken rule. */
export function checkComments(store) {
    const problems = [];
    const byChange = new Map();
    try {
        for (const [id, c] of store.entitiesOf(COMMENT)) {
            const parsed = parseCommentId(id);
            if (!parsed) {
                problems.push(`comment ${id}: the id is not change-N.comment-M`);
                continue;
            }
            if (typeof c !== 'object' || c === null || c.comment_id !== id || c.change_id !== parsed.change_id || c.sequence !== parsed.number) {
                problems.push(`comment ${id}: its record names comment ${c?.comment_id}, change ${c?.change_id}, sequence ${c?.sequence}`);
                continue;
            }
            let m = byChange.get(c.change_id);
            if (!m)
                byChange.set(c.change_id, (m = new Map()));
            m.set(c.sequence, c);
        }
    }
    catch (err) {
        return [`workflow.log: comment records: ${err.message}`];
    }
    for (const [change, comments] of byChange) {
        if (store.entity(CHANGE, change) === undefined)
            problems.push(`comments of ${change}: change ${change} does not exist (${comments.size} comments)`);
        for (let k = 1; k <= comments.size; k++) {
            if (!comments.has(k)) {
                problems.push(`comments of ${change}: comment ${k} is missing but ${comments.size} are stored; reads stop at the gap`);
                break;
            }
        }
        const rootOf = (c) => {
            // Parents come earlier, so this walk ends; a broken link is reported on its own.
            let x = c;
            for (let steps = 0; x && x.in_reply_to !== null && steps <= comments.size; steps++) {
                const p = parseCommentId(x.in_reply_to);
                const next = p && p.change_id === change && p.number < x.sequence ? comments.get(p.number) : undefined;
                if (!next)
                    return undefined;
                x = next;
            }
            return x;
        };
        for (const c of [...comments.values()].sort((a, b) => a.sequence - b.sequence)) {
            const at = `comment ${c.comment_id}`;
            const ps = typeof c.patchset_id === 'string' ? store.entity(PATCHSET, c.patchset_id) : undefined;
            if (!ps)
                problems.push(`${at}: patchset ${c.patchset_id} does not exist`);
            else if (ps.change_id !== change)
                problems.push(`${at}: patchset ${c.patchset_id} belongs to ${ps.change_id}, not ${change}`);
            const shape = anchorProblem(c.anchor);
            if (shape)
                problems.push(`${at}: anchor ${shape}`);
            if (typeof c.published !== 'boolean')
                problems.push(`${at}: published is not true or false`);
            if (c.resolution !== null && c.resolution !== 'resolved' && c.resolution !== 'unresolved')
                problems.push(`${at}: resolution ${JSON.stringify(c.resolution)} is not resolved, unresolved or null`);
            if (c.in_reply_to === null)
                continue;
            const p = typeof c.in_reply_to === 'string' ? parseCommentId(c.in_reply_to) : null;
            if (!p) {
                problems.push(`${at}: in_reply_to ${JSON.stringify(c.in_reply_to)} is not a comment id`);
                continue;
            }
            if (p.change_id !== change) {
                const other = store.entity(COMMENT, c.in_reply_to);
                problems.push(`${at}: in_reply_to ${c.in_reply_to} ${other ? `is a comment of ${p.change_id}` : 'does not exist'}; a reply stays in its change`);
                continue;
            }
            const parent = comments.get(p.number);
            if (!parent) {
                problems.push(`${at}: in_reply_to ${c.in_reply_to} does not exist`);
                continue;
            }
            if (p.number >= c.sequence) {
                problems.push(`${at}: in_reply_to ${c.in_reply_to} is not an earlier comment`);
                continue;
            }
            if (!parent.published)
                problems.push(`${at}: in_reply_to ${c.in_reply_to} is an unpublished draft`);
            const root = rootOf(c);
            if (c.published && c.resolution !== null && root && !root.published)
                problems.push(`${at}: sets thread ${root.comment_id} ${c.resolution}, but that thread's first comment is an unpublished draft`);
        }
    }
    if (problems.length > MAX_REPORTED)
        return [...problems.slice(0, MAX_REPORTED), `… and ${problems.length - MAX_REPORTED} more comment problems`];
    return problems;
}
//# sourceMappingURL=comment-check.js.map