// How deep a tree nests (docs/operations.md "Tree depth"). A chain of directories thousands deep
// is a few hundred KiB of trees, and every walk that recursed over it (one stack frame per level)
// overflowed the stack. The service's tree walks are iterative now; this is the rule every
// ingest path applies besides, as git's core.maxTreeDepth bounds git's walks: no path of a
// stored tree may be more than MAX_TREE_DEPTH levels deep. Trees stored before the rule may be
// deeper: every read still walks them, and fsck reports them.
import { Invalid } from './errors.js';
/**
 * Levels a path may have: `a/b/cde/f` has 4 (git counts so). A quarter of git's default
 * core.maxTreeDepth (4096): far above any real tree, and low enough that a walk of a client or
 * tool that still recurses per level stays well inside its stack, and that a path of one-byte
 * names (2,047 bytes) still fits a file system's PATH_MAX.
 */
export const MAX_TREE_DEPTH = 1024;
/** The levels of a '/'-separated path. */
export function pathDepth(p) {
    let n = 1;
    for (let at = p.indexOf('/'); at >= 0; at = p.indexOf('/', at + 1))
        n++;
    return n;
}
/** A tree (or a commit's, a path's) deeper than the limit: 400, told apart by its type. */
export class TooDeep extends Invalid {
}
/** The path shown in a refusal: the first levels past the limit, its middle left out when long. */
function shown(p) {
    const max = 120;
    return JSON.stringify(p.length <= max ? p : `${p.slice(0, max / 2)}…${p.slice(-max / 2)}`);
}
/** The refusal's words, one place: `what` holds `path`, whose last level is the first past the limit. */
export function tooDeep(what, path, limit = MAX_TREE_DEPTH) {
    return new TooDeep(`${what} holds a path deeper than the limit of ${limit.toLocaleString('en-US')} levels (directories and the entry in them): ${shown(path)} is at level ${pathDepth(path).toLocaleString('en-US')}`);
}
/** Refuse (TooDeep) a path of more than `limit` levels, naming its first `limit + 1`. */
export function requirePathDepth(p, what, limit = MAX_TREE_DEPTH) {
    if (pathDepth(p) <= limit)
        return;
    throw tooDeep(what, p.split('/', limit + 1).join('/'), limit);
}
/**
 * The first path below `root` deeper than `limit` (its first `limit + 1` levels), or null when
 * there is none. A tree's depth is its deepest path's levels (a tree of files: 1; empty: 0).
 * `bound(id)` may give an upper bound on a tree's depth without reading it: a known depth, or
 * the tree's path count (a tree of n paths is at most n levels deep), so a subtree whose bound
 * fits where it sits is never read. `learn` is handed the bound computed for each tree read (an
 * upper bound on its depth, kept by the caller for the next check). Iterative: the stack holds
 * one frame per level, on the heap. A tree met again deeper than before is read again; the work
 * is at most the trees' expansion, which the path limit bounds.
 */
export async function findTooDeep(root, readTree, bound, learn = () => { }, limit = MAX_TREE_DEPTH, pace) {
    const computed = new Map();
    const fits = (id, allowance) => {
        const mine = computed.get(id);
        if (mine !== undefined && mine <= allowance)
            return mine;
        const b = bound(id);
        return b !== undefined && b <= allowance ? b : undefined;
    };
    if (fits(root, limit) !== undefined)
        return null;
    const stack = [{ id: root, name: '', allowance: limit, entries: null, next: 0, depth: 0 }];
    const pathTo = (name) => [...stack.slice(1).map((f) => f.name), name].join('/');
    while (stack.length) {
        const top = stack[stack.length - 1];
        if (top.entries === null) {
            top.entries = await readTree(top.id);
            if (pace?.tick(top.entries.length))
                await pace.pause();
            // Its entries sit one level below the limit's last.
            if (top.allowance === 0 && top.entries.length)
                return pathTo(top.entries[0].name);
        }
        if (top.next < top.entries.length) {
            const e = top.entries[top.next++];
            if (e.kind !== 'directory') {
                top.depth = Math.max(top.depth, 1);
                continue;
            }
            const known = fits(e.id, top.allowance - 1);
            if (known !== undefined)
                top.depth = Math.max(top.depth, 1 + known);
            else
                stack.push({ id: e.id, name: e.name, allowance: top.allowance - 1, entries: null, next: 0, depth: 0 });
            continue;
        }
        stack.pop();
        const before = computed.get(top.id);
        if (before === undefined || top.depth < before) {
            computed.set(top.id, top.depth);
            learn(top.id, top.depth);
        }
        if (stack.length) {
            const parent = stack[stack.length - 1];
            parent.depth = Math.max(parent.depth, 1 + top.depth);
        }
    }
    return null;
}
/** Refuse (TooDeep, naming `what` and the path) a tree that holds a path deeper than `limit`. */
export async function requireTreeDepth(root, what, readTree, bound, learn, limit = MAX_TREE_DEPTH, pace) {
    const deep = await findTooDeep(root, readTree, bound, learn, limit, pace);
    if (deep !== null)
        throw tooDeep(what, deep, limit);
}
//# sourceMappingURL=tree-depth.js.map