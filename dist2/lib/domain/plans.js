// Plan ("sprint") rules: status moves, revision identity, Markdown task-list items, and the
// search-term normalization (docs/api.md "Plans (sprints)"). Pure functions, no I/O.
import { createHash } from 'node:crypto';
import { Invalid } from './errors.js';
export const PLAN_STATUSES = ['draft', 'archived', 'superseded'];
export const PAYLOAD_STATUSES = ['draft', 'active', 'archived', 'superseded'];
/** `active` is stored and projected as the draft/open state (spec: "Plan and revision"). */
export function normalizeStatus(status) {
    if (!PAYLOAD_STATUSES.includes(status))
        throw new Invalid('status must be draft, active, archived or superseded');
    return status === 'active' ? 'draft' : status;
}
/**
 * PATCH moves (spec's transition table: Plan, from any, to the given status): every status may
 * move to every other, a superseded plan included (reopening it leaves its revisions as they
 * are). Setting the current status is a no-op. Kept as the one place a restriction would go.
 */
export function checkStatusMove(from, to) {
    void from;
    void to;
}
const REF_RE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
export function validateItemRef(ref) {
    if (!REF_RE.test(ref))
        throw new Invalid(`plan_item_ref "${ref.slice(0, 60)}" must be 1-128 characters of letters, digits, "_", ".", ":" or "-", starting with a letter or digit`);
}
/**
 * Items from the Markdown task list under the heading whose text is `rootHeading`: list lines
 * `- [ ] text`, `- [x] text` (also `*`/`+` bullets, `[X]`), anywhere in that section (until a
 * heading of the same or a higher level), outside fenced code blocks. `heading_path` is the chain
 * of headings from the root heading (inclusive) to the item. A trailing `{#ref}` gives the item its `plan_item_ref` and is
 * removed from the text; items without one are kept with a null ref and cannot be linked.
 */
export function itemsFromMarkdown(markdown, rootHeading) {
    const lines = markdown.split(/\r\n|\n|\r/);
    const items = [];
    let rootLevel = 0;
    let inFence = false;
    const stack = [];
    for (const line of lines) {
        if (/^\s{0,3}(```|~~~)/.test(line)) {
            inFence = !inFence;
            continue;
        }
        if (inFence)
            continue;
        // ATX heading; a closing run of "#" counts only after a space (CommonMark), so "C#" stays.
        const heading = /^(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
        if (heading) {
            const level = heading[1].length;
            const text = heading[2].trim();
            if (rootLevel === 0) {
                if (text === rootHeading.trim()) {
                    rootLevel = level;
                    stack.splice(0, stack.length, { level, text });
                }
                continue;
            }
            if (level <= rootLevel) {
                rootLevel = 0;
                if (text === rootHeading.trim()) {
                    rootLevel = level;
                    stack.splice(0, stack.length, { level, text });
                }
                continue;
            }
            while (stack.length && stack[stack.length - 1].level >= level)
                stack.pop();
            stack.push({ level, text });
            continue;
        }
        if (rootLevel === 0)
            continue;
        const task = /^\s*[-*+]\s+\[([ xX])\]\s+(.*?)\s*$/.exec(line);
        if (!task)
            continue;
        let text = task[2];
        let ref = null;
        const marker = /\s*\{#([^}\s]+)\}\s*$/.exec(text);
        if (marker && REF_RE.test(marker[1])) {
            ref = marker[1];
            text = text.slice(0, marker.index).trimEnd();
        }
        items.push({ plan_item_ref: ref, text, checkbox_state: task[1] === ' ' ? 'unchecked' : 'checked', heading_path: stack.map((h) => h.text) });
    }
    return items;
}
/** Markdown for a revision given without an artifact body: the root heading and its items. */
export function markdownFromItems(rootHeading, items) {
    const out = [`# ${rootHeading}`, ''];
    for (const item of items) {
        const words = [item.text, item.plan_item_ref ? `{#${item.plan_item_ref}}` : ''].filter((w) => w !== '').join(' ');
        out.push(`- [${item.checkbox_state === 'checked' ? 'x' : ' '}] ${words}`.trimEnd());
    }
    return `${out.join('\n')}\n`;
}
/** Search normalization: NFKC, case-folded, trimmed; blanks dropped; duplicates removed. */
export function normalizeTerms(terms) {
    const out = [];
    for (const term of terms) {
        const n = normalizeText(term).trim();
        if (n !== '' && !out.includes(n))
            out.push(n);
    }
    return out;
}
/**
 * NFKC, then case folding. JavaScript has no full case fold, so the common multi-form letters are
 * folded explicitly after lowercasing: final sigma ς → σ, sharp s ß/ẞ → ss, long s ſ → s.
 */
export function normalizeText(text) {
    return text.normalize('NFKC').toLowerCase().replace(/ς/g, 'σ').replace(/[ßẞ]/g, 'ss').replace(/ſ/g, 's').normalize('NFKC');
}
export function matchesAll(haystacks, terms) {
    const text = haystacks.map(normalizeText).join('\n');
    return terms.every((t) => text.includes(t));
}
/**
 * The digest of a revision's content alone (everything its id covers except the plan and the
 * parent link): canonical JSON, object keys sorted. Two revisions of one plan with equal content
 * digests carry the same revision; task-start's unguarded revise finds its exact revision by it.
 */
export function revisionContentDigest(content) {
    const canon = (v) => {
        if (Array.isArray(v))
            return v.map(canon);
        if (v && typeof v === 'object')
            return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])]));
        return v;
    };
    return createHash('sha256').update(JSON.stringify(canon(content))).digest('hex');
}
/** A revision's id derives from its plan, parent and content, so an identical revise replays. */
export function revisionId(planId, parentRevisionId, content) {
    const hash = createHash('sha256').update(JSON.stringify([planId, parentRevisionId, content])).digest('hex');
    return `rev-${hash.slice(0, 32)}`;
}
//# sourceMappingURL=plans.js.map