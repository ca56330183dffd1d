// Word-level highlights of a hunk (docs/api.md "Diffs and land readiness"): in each run of removed
// lines followed by added lines, the i-th removed line is paired with the i-th added line and the
// pair is compared word by word (jsdiff's diffWordsWithSpace, the library of the hunks). A line
// gets the ranges that changed within it; null when it has no partner, when either line is over
// MAX_SPAN_LINE_CHARS, when the word diff needs more than MAX_SPAN_EDITS edits, or when less than
// a third of its non-blank characters are left unchanged (the whole line changed: highlighting
// every word says nothing). The same pairs give `cairn diff --word-diff` its git-style form.
import { diffWordsWithSpace } from 'diff';
export const MAX_SPAN_LINE_CHARS = 2000;
export const MAX_SPAN_EDITS = 200;
/** The changed ranges of a pair of lines (texts without prefixes), or null when not worth showing. */
export function pairSpans(oldText, newText) {
    if (oldText.length > MAX_SPAN_LINE_CHARS || newText.length > MAX_SPAN_LINE_CHARS)
        return null;
    const parts = diffWordsWithSpace(oldText, newText, { maxEditLength: MAX_SPAN_EDITS });
    if (!parts)
        return null;
    const old = [];
    const neu = [];
    let i = 0;
    let j = 0;
    let kept = 0;
    const push = (list, start, end) => {
        const last = list[list.length - 1];
        if (last && last[1] === start)
            last[1] = end;
        else
            list.push([start, end]);
    };
    for (const p of parts) {
        if (p.removed) {
            push(old, i, i + p.value.length);
            i += p.value.length;
        }
        else if (p.added) {
            push(neu, j, j + p.value.length);
            j += p.value.length;
        }
        else {
            kept += p.value.replace(/\s+/g, '').length;
            i += p.value.length;
            j += p.value.length;
        }
    }
    const longest = Math.max(oldText.replace(/\s+/g, '').length, newText.replace(/\s+/g, '').length);
    if (kept * 3 < longest)
        return null;
    return { old, new: neu };
}
/** The pairs of a hunk's lines: [index of the removed line, index of the added line]. */
export function linePairs(lines) {
    const pairs = [];
    let i = 0;
    while (i < lines.length) {
        if (lines[i][0] !== '-') {
            i++;
            continue;
        }
        const removed = [];
        const added = [];
        while (i < lines.length && (lines[i][0] === '-' || lines[i][0] === '\\')) {
            if (lines[i][0] === '-')
                removed.push(i);
            i++;
        }
        while (i < lines.length && (lines[i][0] === '+' || lines[i][0] === '\\')) {
            if (lines[i][0] === '+')
                added.push(i);
            i++;
        }
        for (let k = 0; k < Math.min(removed.length, added.length); k++)
            pairs.push([removed[k], added[k]]);
    }
    return pairs;
}
/** `spans` of a hunk, parallel to its lines. */
export function hunkSpans(lines) {
    const spans = lines.map(() => null);
    for (const [a, b] of linePairs(lines)) {
        const s = pairSpans(lines[a].slice(1), lines[b].slice(1));
        if (s) {
            spans[a] = s.old;
            spans[b] = s.new;
        }
    }
    return spans;
}
/**
 * git's `--word-diff=plain` form of a hunk's lines, from its spans: context lines without their
 * prefix, a paired line as one line with `[-removed-]{+added+}` inside it, an unpaired or
 * unhighlighted line whole inside the markers.
 */
export function wordDiffLines(lines, spans) {
    const partner = new Map();
    for (const [a, b] of linePairs(lines))
        if (spans[a] && spans[b]) {
            partner.set(a, b);
            partner.set(b, a);
        }
    const out = [];
    for (let i = 0; i < lines.length; i++) {
        const l = lines[i];
        const kind = l[0];
        if (kind === '\\')
            continue;
        if (kind === ' ') {
            out.push(l.slice(1));
            continue;
        }
        const p = partner.get(i);
        if (p === undefined) {
            // A removed line whose partner has no spans is shown with it: [-old-]{+new+}.
            if (kind === '-') {
                const pair = linePairs(lines).find(([a]) => a === i);
                if (pair) {
                    out.push(`[-${l.slice(1)}-]{+${lines[pair[1]].slice(1)}+}`);
                    continue;
                }
                out.push(`[-${l.slice(1)}-]`);
            }
            else if (!linePairs(lines).some(([, b]) => b === i)) {
                out.push(`{+${l.slice(1)}+}`);
            }
            continue;
        }
        if (kind === '+')
            continue; // written with its removed partner
        out.push(mergePair(l.slice(1), spans[i], lines[p].slice(1), spans[p]));
    }
    return out;
}
/** One line from a pair and its spans: the unchanged text is the same on both sides, in order. */
function mergePair(o, os, n, ns) {
    let out = '';
    let i = 0;
    let j = 0;
    let a = 0;
    let b = 0;
    while (i < o.length || j < n.length) {
        const nextOld = a < os.length ? os[a][0] : o.length;
        const nextNew = b < ns.length ? ns[b][0] : n.length;
        const same = Math.min(nextOld - i, nextNew - j);
        if (same > 0) {
            out += n.slice(j, j + same);
            i += same;
            j += same;
            continue;
        }
        if (a < os.length && i === os[a][0]) {
            out += `[-${o.slice(os[a][0], os[a][1])}-]`;
            i = os[a][1];
            a++;
            continue;
        }
        if (b < ns.length && j === ns[b][0]) {
            out += `{+${n.slice(ns[b][0], ns[b][1])}+}`;
            j = ns[b][1];
            b++;
            continue;
        }
        break; // unreachable with spans from pairSpans
    }
    return out;
}
//# sourceMappingURL=word-diff.js.map