// Comment threads on a change's diff lines: the record shape, its validation, folding records
// into threads, and porting a thread's anchor from the patchset it was written on to a later one.
// Pure functions; stored and served by lib/authority/workflow/comments.ts (docs/architecture.md
// "Comment threads (model)" says what is built).
import { Conflict, Invalid, NotFound } from '../errors.js';
import { cleanRelativePath } from '../paths.js';
import { requireWellFormed } from '../text.js';
import { lineDiff } from './content-diff.js';
/** workflow.log entity type the comment records will be stored under. */
export const COMMENT = 'comment';
/** Gerrit caps a comment at 16 KiB; a review point longer than that belongs in a document. */
export const MAX_COMMENT_BODY_CHARS = 16 * 1024;
/** Replacement text for a line range (a suggested edit). */
export const MAX_SUGGESTION_CHARS = 64 * 1024;
export const SIDES = ['base', 'revision'];
export const commentId = (change, n) => `${change}.comment-${n}`;
const COMMENT_ID_RE = /^(change-[1-9][0-9]{0,9})\.comment-([1-9][0-9]{0,9})$/;
/** `change-N.comment-M` → its change and number; null when malformed. */
export function parseCommentId(id) {
    const m = COMMENT_ID_RE.exec(id);
    return m ? { change_id: m[1], number: Number(m[2]) } : null;
}
// ------------------------------------------------------------------ validation
/**
 * Lines of a text as anchors count them: "" has 0, "a" and "a\n" have 1, "a\n\n" has 2 (the
 * same lines the line diff numbers).
 */
export function textLineCount(text) {
    const b = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    if (b.length === 0)
        return 0;
    let n = 0;
    for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1))
        n++;
    return b[b.length - 1] === 10 ? n : n + 1;
}
/**
 * The anchor of a new thread: no path → the patchset; a path alone → that file (present on
 * either side); a path and a line → lines of a text file on `side` (default `revision`), each
 * within the file. Throws Invalid naming the broken rule.
 */
export function requireAnchor(input, files) {
    const { path, side, line, end_line } = input;
    if (path === undefined || path === null) {
        if (side != null || line != null || end_line != null)
            throw new Invalid('side, line and end_line need a path');
        return { kind: 'patchset' };
    }
    const p = cleanRelativePath(path, 'path');
    if (side != null && !SIDES.includes(side))
        throw new Invalid(`side must be one of ${SIDES.join(', ')}`);
    if (line === undefined || line === null) {
        if (end_line != null)
            throw new Invalid('end_line needs a line');
        if (side != null)
            throw new Invalid('side needs a line (a file comment names the file on both sides)');
        if (files(p, 'revision') === null && files(p, 'base') === null)
            throw new Invalid(`path ${p} is not a file of the patchset or its base`);
        return { kind: 'file', path: p };
    }
    const s = (side ?? 'revision');
    if (!Number.isSafeInteger(line) || line < 1)
        throw new Invalid('line must be an integer of at least 1');
    if (end_line != null && (!Number.isSafeInteger(end_line) || end_line < line))
        throw new Invalid('end_line must be an integer not less than line');
    const n = files(p, s);
    if (n === null)
        throw new Invalid(`path ${p} is not a file on the ${s} side`);
    if (n === 'binary')
        throw new Invalid(`path ${p} is not text on the ${s} side; comment on the file instead`);
    const last = end_line ?? line;
    if (last > n)
        throw new Invalid(`line ${last} is beyond the end of ${p} on the ${s} side (${n} lines)`);
    return { kind: 'lines', path: p, side: s, line, end_line: end_line != null && end_line !== line ? end_line : null };
}
/**
 * A comment's body: well-formed Unicode, at most MAX_COMMENT_BODY_CHARS, and not blank — except
 * on a reply that only resolves or reopens its thread (GitHub's "Resolve conversation").
 */
export function requireBody(body, opts) {
    requireWellFormed(body, 'body');
    if (body.length > MAX_COMMENT_BODY_CHARS)
        throw new Invalid(`body is longer than ${MAX_COMMENT_BODY_CHARS} characters`);
    if (body.trim() === '' && !(opts.reply && opts.resolution !== null))
        throw new Invalid('body must be non-empty');
    return body;
}
export function requireResolution(value) {
    if (value === undefined || value === null)
        return null;
    if (value !== 'resolved' && value !== 'unresolved')
        throw new Invalid('resolution must be resolved or unresolved');
    return value;
}
/** Suggested replacement text: only for lines on the revision side (what the author can apply). */
export function requireSuggestion(suggestion, anchor) {
    if (suggestion === undefined || suggestion === null)
        return null;
    if (anchor.kind !== 'lines' || anchor.side !== 'revision')
        throw new Invalid('a suggestion replaces lines on the revision side; anchor it to a revision-side line range');
    requireWellFormed(suggestion, 'suggestion');
    if (suggestion.length > MAX_SUGGESTION_CHARS)
        throw new Invalid(`suggestion is longer than ${MAX_SUGGESTION_CHARS} characters`);
    if (suggestion.includes('\u0000'))
        throw new Invalid('suggestion must be text (no NUL)');
    return suggestion;
}
/**
 * The comment `in_reply_to` names, as `author` may reply to it: unknown, or another author's
 * draft → NotFound (drafts are invisible to others); another change's comment or the author's
 * own draft (edit it instead) → Invalid. Returns the parent.
 */
export function checkReplyTarget(parent, inReplyTo, change, author) {
    if (!parent || parent.discarded || (!parent.published && parent.author !== author))
        throw new NotFound(`comment ${inReplyTo} not found`);
    if (parent.change_id !== change)
        throw new Invalid(`comment ${inReplyTo} belongs to ${parent.change_id}, not ${change}; a reply stays in its change`);
    if (!parent.published)
        throw new Invalid(`comment ${inReplyTo} is your unpublished draft; edit it instead of replying`);
    return parent;
}
/**
 * A draft `author` may edit or discard: unknown, discarded, or another author's draft →
 * NotFound (someone else's draft is not theirs to see); a published comment → Conflict
 * (published comments are not edited: reply instead).
 */
export function checkOwnDraft(record, id, author) {
    if (!record || record.discarded || (!record.published && record.author !== author))
        throw new NotFound(`draft ${id} not found`);
    if (record.published)
        throw new Conflict(`comment ${id} is published; published comments are not edited or deleted (reply to it instead)`);
    return record;
}
/**
 * A draft with `edit` applied, checked as a new comment is: the body against the (new)
 * resolution, the resolution's values, and a suggestion only on a thread's first comment
 * anchored to revision-side lines. An edit naming no field → Invalid.
 */
export function editedDraft(draft, edit, now) {
    if (edit.body === undefined && edit.resolution === undefined && edit.suggestion === undefined)
        throw new Invalid('send at least one of body, resolution and suggestion to edit the draft');
    const reply = draft.in_reply_to !== null;
    const resolution = edit.resolution === undefined ? draft.resolution : requireResolution(edit.resolution);
    const body = requireBody(edit.body ?? draft.body, { reply, resolution });
    let suggestion = draft.suggestion;
    if (edit.suggestion !== undefined) {
        if (reply && edit.suggestion !== null)
            throw new Invalid('a suggestion goes on a thread\'s first comment, not on a reply');
        suggestion = requireSuggestion(edit.suggestion, draft.anchor);
    }
    return { ...draft, body, resolution, suggestion, updated_at_s: now };
}
/** The record a discarded draft leaves: same id and sequence, its text emptied, `discarded`. */
export function discardedDraft(draft, now) {
    return { ...draft, body: '', suggestion: null, updated_at_s: now, discarded: true };
}
/** Lines of a text as `textLineCount` counts them, without their "\n" terminators. */
export function splitLines(text) {
    if (text === '')
        return [];
    const lines = text.split('\n');
    if (text.endsWith('\n'))
        lines.pop();
    return lines;
}
/**
 * A file's text with suggestions applied: each replaces lines `line`..`end_line` with the lines
 * of its `suggestion` (`""` removes them). Edits must lie within the file and not overlap
 * (Invalid otherwise); each edit's line numbers are those of the text given, whatever the
 * order of the edits. Lines end in "\n" (a CRLF file's "\r" is part of each line's text), except that a
 * file that ended without a newline still does.
 */
export function applySuggestions(text, edits) {
    const lines = splitLines(text);
    const finalNewline = text === '' || text.endsWith('\n');
    const sorted = [...edits].sort((a, b) => a.line - b.line);
    for (let i = 0; i < sorted.length; i++) {
        const { line, end_line } = sorted[i];
        const end = end_line ?? line;
        if (!Number.isSafeInteger(line) || !Number.isSafeInteger(end) || line < 1 || end < line || end > lines.length)
            throw new Invalid(`suggestion for lines ${line}..${end} is outside the file (${lines.length} lines)`);
        if (i > 0 && line <= (sorted[i - 1].end_line ?? sorted[i - 1].line))
            throw new Invalid(`suggestions for lines ${sorted[i - 1].line}..${sorted[i - 1].end_line ?? sorted[i - 1].line} and ${line}..${end} overlap; apply them one at a time`);
    }
    // One pass over the file: linear in its lines plus the suggestions' lines, however many edits.
    const out = [];
    let next = 1;
    for (const { line, end_line, suggestion } of sorted) {
        for (; next < line; next++)
            out.push(lines[next - 1]);
        for (const l of splitLines(suggestion))
            out.push(l);
        next = (end_line ?? line) + 1;
    }
    for (; next <= lines.length; next++)
        out.push(lines[next - 1]);
    if (out.length === 0)
        return '';
    return out.join('\n') + (finalNewline ? '\n' : '');
}
/**
 * Fold a change's comment records into threads as `viewer` sees them (null: nobody's drafts).
 * Linear in the records after a sort by sequence: a reply joins the thread of its parent, which
 * must come earlier, so no cycle can form. Threads are in root order.
 */
export function foldThreads(records, viewer) {
    const sorted = [...records].sort((a, b) => a.sequence - b.sequence);
    const threadOf = new Map();
    const threads = [];
    const orphans = [];
    for (const r of sorted) {
        if (r.discarded || (!r.published && r.author !== viewer))
            continue;
        if (r.in_reply_to === null) {
            const t = { thread_id: r.comment_id, root: r, replies: [], resolution: 'unresolved', resolution_with_drafts: 'unresolved', draft: !r.published };
            applyResolution(t, r);
            threads.push(t);
            threadOf.set(r.comment_id, t);
            continue;
        }
        const t = threadOf.get(r.in_reply_to);
        if (!t) {
            orphans.push(r.comment_id);
            continue;
        }
        t.replies.push(r);
        applyResolution(t, r);
        threadOf.set(r.comment_id, t);
    }
    const unresolved = threads.filter((t) => !t.draft && t.resolution === 'unresolved').length;
    return { threads, unresolved, orphans };
}
function applyResolution(t, r) {
    if (r.resolution === null)
        return;
    if (r.published)
        t.resolution = r.resolution;
    t.resolution_with_drafts = r.resolution;
}
/**
 * Where line anchors written on one version of a file sit on another: `before` is the file the
 * anchors were written on (A's revision for revision-side anchors, A's base for base-side ones),
 * `after` the same path on the later patchset (B's revision or base), null when absent. One line
 * diff (`lineDiff`, the diff routes' own, with no context) serves every anchor of the file;
 * each anchor is then placed by binary search, so the cost is one diff plus O(log n) per anchor.
 *
 * An anchor ports when every line of its range is unchanged and nothing was inserted between
 * them: it moves by the lines inserted and removed above it. Otherwise it is outdated and keeps
 * its original anchor. A last line that gains or loses its newline counts as changed, as the
 * diff shows it.
 */
export function portLineAnchors(anchors, before, after) {
    return placeAnchors(filePort(before, after), anchors);
}
export function filePort(before, after) {
    const oldLines = textLineCount(before);
    if (after === null)
        return { kind: 'removed', oldLines };
    if (before.equals(after))
        return { kind: 'same', oldLines };
    const d = lineDiff(before, after, 0);
    if (d.kind !== 'text')
        return { kind: 'no_line_diff', oldLines };
    return { kind: 'map', oldLines, newLines: textLineCount(after), map: lineMap(d.hunks) };
}
/** Anchors written on the `before` of `port`, placed on its `after` (see portLineAnchors). */
export function placeAnchors(port, anchors) {
    const outdated = (a, reason) => ({ outdated: true, reason, anchor: a });
    const inFile = (a) => a.line >= 1 && (a.end_line ?? a.line) >= a.line && (a.end_line ?? a.line) <= port.oldLines;
    if (port.kind === 'removed')
        return anchors.map((a) => outdated(a, inFile(a) ? 'file_removed' : 'beyond_file'));
    if (port.kind === 'same')
        return anchors.map((a) => (inFile(a) ? { outdated: false, anchor: a } : outdated(a, 'beyond_file')));
    if (port.kind !== 'map')
        return anchors.map((a) => outdated(a, inFile(a) ? 'no_line_diff' : 'beyond_file'));
    const { map, newLines } = port;
    return anchors.map((a) => {
        if (!inFile(a))
            return outdated(a, 'beyond_file');
        const end = a.end_line ?? a.line;
        const moved = map(a.line, end);
        // Defensive: a mapping outside the new file would mean hunks that do not describe these files.
        if (moved === null || moved + (end - a.line) > newLines)
            return outdated(a, 'lines_changed');
        return { outdated: false, anchor: { ...a, line: moved, end_line: a.end_line === null ? null : moved + (end - a.line) } };
    });
}
/** Port any anchor of a file: a file anchor survives while the path exists; a patchset anchor always does. */
export function portAnchor(anchor, before, after) {
    if (anchor.kind === 'patchset')
        return { outdated: false, anchor };
    if (anchor.kind === 'file')
        return after === null ? { outdated: true, reason: 'file_removed', anchor } : { outdated: false, anchor };
    if (before === null)
        return { outdated: true, reason: 'beyond_file', anchor };
    return portLineAnchors([anchor], before, after)[0];
}
/**
 * From a line diff's hunks (any context), a function taking an old range l..e to its new first
 * line, or null when a line of the range was removed or lines were inserted inside it.
 * Hunks are walked once: removed old lines and insertion points (the old line an inserted line
 * goes before) are collected in ascending order.
 */
export function lineMap(hunks) {
    const removed = [];
    const insertedBefore = [];
    for (const h of hunks) {
        // Git's numbering: a hunk of no old lines starts after line old_start.
        let o = h.old_lines === 0 ? h.old_start + 1 : h.old_start;
        for (const l of h.lines) {
            if (l[0] === ' ')
                o++;
            else if (l[0] === '-')
                removed.push(o++);
            else if (l[0] === '+')
                insertedBefore.push(o);
        }
    }
    return (line, end) => {
        // Removed lines within line..end, or insertions going before line+1..end: the range changed.
        if (countBelow(removed, end + 1) > countBelow(removed, line))
            return null;
        if (countBelow(insertedBefore, end + 1) > countBelow(insertedBefore, line + 1))
            return null;
        return line - countBelow(removed, line) + countBelow(insertedBefore, line + 1);
    };
}
/** How many values of the ascending array are below x. */
function countBelow(xs, x) {
    let lo = 0;
    let hi = xs.length;
    while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (xs[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
//# sourceMappingURL=comment-rules.js.map