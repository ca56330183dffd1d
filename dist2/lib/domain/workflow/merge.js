// Three-way tree merge of a land (docs/api.md "Lands"): base = the patchset's base snapshot tree,
// ours = the target line head's tree, theirs = the patchset revision's tree. Pure over a reader
// (the store in production, maps in tests); new blobs and trees are returned as bytes for the
// caller to pack. Only entries whose ids differ are looked at, so two sides touching different
// files of a large tree walk only the differing subtrees.
//
// Rules, per path:
// - identical on both sides (same kind and id, or both absent) → that entry;
// - changed on one side only → that side's entry;
// - changed on both sides, differently:
//   - both directories → merged recursively (a base that was not a directory counts as empty);
//   - one a directory, the other not → `file/directory`;
//   - deleted on one side, changed on the other → `delete/modify`;
//   - absent in the base (or a directory there), added on both → `add/add`;
//   - a symlink on either side (targets or kinds differ) → `symlink`;
//   - the same bytes added on both sides as a file and an executable (the only way the two
//     non-symlink kinds can disagree on both sides) → `mode`;
//   - content changed on both sides: in `merge` mode, text merges line by line with diff3
//     (node-diff3; overlapping or adjacent edits conflict, like git) and binary content (a NUL
//     in the first 8,000 bytes, git's test) conflicts; in `direct` mode (pushrebase) any content
//     changed on both sides conflicts → `content`.
import { diff3Merge } from 'node-diff3';
import { blobId, encodeTree, sha256Hex } from '../content.js';
import { Invalid } from '../errors.js';
import { WalkBudget } from '../tree-size.js';
export const CONFLICT_KINDS = ['content', 'delete/modify', 'add/add', 'mode', 'symlink', 'file/directory'];
/** Conflicts listed in a response or land record (the count is always complete). */
export const MAX_LISTED_CONFLICTS = 1000;
const BINARY_PROBE = 8000;
export function isBinary(bytes) {
    return bytes.subarray(0, BINARY_PROBE).includes(0);
}
const same = (a, b) => a === b || (a !== undefined && b !== undefined && a.kind === b.kind && a.id === b.id);
/**
 * Line-level three-way merge of text (bytes handled as latin1, so any byte sequence round-trips
 * exactly; lines split on LF). Returns null on a conflict.
 */
export function mergeText(base, ours, theirs) {
    const split = (b) => b.toString('latin1').split('\n');
    const b = split(base);
    const o = split(ours);
    const t = split(theirs);
    // Lines common to all three at the start and the end are kept as they are; diff3 (whose LCS
    // is quadratic on repeated lines) sees only the middle, and a middle over the budget is a
    // conflict rather than unbounded work.
    let pre = 0;
    while (pre < b.length && pre < o.length && pre < t.length && b[pre] === o[pre] && b[pre] === t[pre])
        pre++;
    let suf = 0;
    while (suf < b.length - pre && suf < o.length - pre && suf < t.length - pre && b[b.length - 1 - suf] === o[o.length - 1 - suf] && b[b.length - 1 - suf] === t[t.length - 1 - suf])
        suf++;
    const mid = (x) => x.slice(pre, x.length - suf);
    const [mb, mo, mt] = [mid(b), mid(o), mid(t)];
    if (mb.length + mo.length + mt.length > MAX_MERGE_LINES)
        return null;
    // diff3's LCS (Hunt–McIlroy) does work for every pair of equal lines it compares, ~1 µs each
    // in one turn of the event loop: a few thousand repeated lines are millions of pairs.
    if (equalLinePairs(mb, mo) + equalLinePairs(mb, mt) > MAX_MERGE_LINE_PAIRS)
        return null;
    const regions = diff3Merge(mo, mb, mt, { excludeFalseConflicts: true });
    const out = b.slice(0, pre);
    for (const r of regions) {
        if (r.conflict)
            return null;
        if (r.ok)
            out.push(...r.ok);
    }
    out.push(...b.slice(b.length - suf));
    return Buffer.from(out.join('\n'), 'latin1');
}
/** Lines of the differing middle (all three sides together) a line merge takes on; more is a conflict. */
export const MAX_MERGE_LINES = 6000;
/** Pairs of equal lines (base with each side) a line merge takes on (about a second of CPU); more is a conflict. */
export const MAX_MERGE_LINE_PAIRS = 1_000_000;
/** How many (i, j) have a[i] === b[j]: the pairs an LCS of a and b walks. */
function equalLinePairs(a, b) {
    const counts = new Map();
    for (const line of a)
        counts.set(line, (counts.get(line) ?? 0) + 1);
    let pairs = 0;
    for (const line of b)
        pairs += counts.get(line) ?? 0;
    return pairs;
}
const byPath = (a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
/**
 * `budget` counts the entries the merge looks at (it throws past its limit) and paces the walk
 * (trees read from memory resolve at once). Memory holds the new objects, which lie on changed
 * paths only, and at most 2 × MAX_LISTED_CONFLICTS conflicts at a time.
 */
export async function mergeTrees(reader, base, ours, theirs, strategy, budget = new WalkBudget(Infinity, () => new Invalid('unreachable'))) {
    const out = { root_tree_id: null, conflicts: [], conflict_count: 0, blobs: new Map(), trees: new Map() };
    const root = await mergeDirs(reader, base, ours, theirs, strategy, out, budget);
    if (out.conflict_count === 0)
        out.root_tree_id = root;
    out.conflicts.sort(byPath);
    out.conflicts.length = Math.min(out.conflicts.length, MAX_LISTED_CONFLICTS);
    return out;
}
/** Note a conflict, keeping only the first MAX_LISTED_CONFLICTS by path (sorted down when twice as many are held). */
function noteConflict(out, conflict) {
    out.conflict_count++;
    out.conflicts.push(conflict);
    if (out.conflicts.length >= 2 * MAX_LISTED_CONFLICTS) {
        out.conflicts.sort(byPath);
        out.conflicts.length = MAX_LISTED_CONFLICTS;
    }
}
/** The merged tree's id at once when one side wins whole, else the directory to merge entry by entry. */
async function openDir(reader, base, ours, theirs, prefix, budget) {
    if (ours === theirs || base === theirs)
        return ours;
    if (base === ours)
        return theirs;
    const [b, o, t] = await Promise.all([base === null ? [] : reader.readTree(base), reader.readTree(ours), reader.readTree(theirs)]);
    if (budget.take(b.length + o.length + t.length))
        await budget.pause();
    const byName = (list) => new Map(list.map((e) => [e.name, e]));
    const mb = byName(b);
    const mo = byName(o);
    const mt = byName(t);
    const names = [...new Set([...mb.keys(), ...mo.keys(), ...mt.keys()])];
    return { ours, prefix, names, next: 0, mb, mo, mt, entries: [], changed: false, waiting: null };
}
/**
 * The merge of three root trees. Iterative (a stack of directories being merged, children
 * before parents): a tree of any depth merges without a stack frame per level.
 */
async function mergeDirs(reader, base, ours, theirs, strategy, out, budget) {
    const first = await openDir(reader, base, ours, theirs, '', budget);
    if (typeof first === 'string')
        return first;
    const stack = [first];
    let merged = '';
    const take = (d, eo, entry) => {
        if (!same(entry, eo))
            d.changed = true;
        if (entry)
            d.entries.push(entry);
    };
    while (stack.length) {
        const d = stack[stack.length - 1];
        if (d.waiting) {
            take(d, d.waiting, { name: d.waiting.name, kind: 'directory', id: merged });
            d.waiting = null;
        }
        if (d.next < d.names.length) {
            const name = d.names[d.next++];
            const eb = d.mb.get(name);
            const eo = d.mo.get(name);
            const et = d.mt.get(name);
            if (same(eo, et) || same(eb, et))
                take(d, eo, eo);
            else if (same(eb, eo))
                take(d, eo, et);
            else if (eo?.kind === 'directory' && et?.kind === 'directory') {
                // Both sides changed a directory: merge it (above this one on the stack).
                const below = await openDir(reader, eb?.kind === 'directory' ? eb.id : null, eo.id, et.id, `${d.prefix}${name}/`, budget);
                if (typeof below === 'string')
                    take(d, eo, { name: eo.name, kind: 'directory', id: below });
                else {
                    d.waiting = eo;
                    stack.push(below);
                }
            }
            else
                take(d, eo, await mergeEntry(reader, eb, eo, et, d.prefix + name, strategy, out));
            continue;
        }
        stack.pop();
        if (!d.changed)
            merged = d.ours;
        else {
            const bytes = encodeTree(d.entries);
            merged = sha256Hex(bytes);
            out.trees.set(merged, bytes);
        }
    }
    return merged;
}
/** Both sides changed the entry, differently (not both directories). Returns the merged entry (undefined: absent), or records a conflict. */
async function mergeEntry(reader, eb, eo, et, path, strategy, out) {
    const conflict = (kind) => {
        noteConflict(out, { path, kind });
        return eo;
    };
    if (!eo || !et)
        return conflict(eb ? 'delete/modify' : 'add/add');
    const dirO = eo.kind === 'directory';
    const dirT = et.kind === 'directory';
    // Both directories: merged by mergeDirs, never here.
    if (dirO || dirT)
        return conflict('file/directory');
    const base = eb && eb.kind !== 'directory' ? eb : undefined;
    if (!base) {
        // Added on both sides: the same bytes under different kinds is a mode (or symlink) conflict.
        if (eo.id === et.id)
            return conflict(eo.kind === 'symlink' || et.kind === 'symlink' ? 'symlink' : 'mode');
        return conflict('add/add');
    }
    if (eo.kind === 'symlink' || et.kind === 'symlink' || base.kind === 'symlink')
        return conflict('symlink');
    const kind = mergeKind(base.kind, eo.kind, et.kind);
    if (kind === null)
        return conflict('mode');
    let id;
    if (eo.id === et.id || base.id === et.id)
        id = eo.id;
    else if (base.id === eo.id)
        id = et.id;
    else {
        if (strategy === 'direct')
            return conflict('content');
        const [bb, bo, bt] = await Promise.all([reader.readBlob(base.id), reader.readBlob(eo.id), reader.readBlob(et.id)]);
        if (isBinary(bb) || isBinary(bo) || isBinary(bt))
            return conflict('content');
        const merged = mergeText(bb, bo, bt);
        if (merged === null)
            return conflict('content');
        id = blobId(merged);
        out.blobs.set(id, merged);
    }
    return { name: eo.name, kind, id };
}
function mergeKind(b, o, t) {
    if (o === t || b === t)
        return o;
    if (b === o)
        return t;
    return null;
}
//# sourceMappingURL=merge.js.map