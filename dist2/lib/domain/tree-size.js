// How large a tree is once expanded (docs/operations.md "Tree expansion"). Trees are content
// addressed, so one stored tree can be named by many entries: a few KiB of trees, each listing
// the one below a thousand times, expand to a billion paths. A snapshot may hold at most a
// bounded number of paths; the size is computed from distinct trees only, never by walking the
// expansion, and every walk that does expand a tree counts what it walks and yields the event
// loop as it goes.
import { performance } from 'node:perf_hooks';
import { Invalid } from './errors.js';
/**
 * Paths a snapshot may hold (files, executables, symlinks and directories, each counted once per
 * place it appears). Ten times the largest git checkouts known (~3.5 million files), while a walk
 * of that many paths stays seconds of CPU and bounded memory.
 */
export const DEFAULT_MAX_SNAPSHOT_PATHS = 10_000_000;
/** The most `--max-snapshot-paths` may raise it to (a tree's recorded size is a u32 holding paths + 1). */
export const MAX_SNAPSHOT_PATHS_BOUND = 4_000_000_000;
/**
 * A tree's expanded size: 1 (itself) + 1 per blob entry + the expanded size of each directory
 * entry's tree. A snapshot's paths are its root tree's expanded size minus 1 (the root is no
 * path). The empty tree's size is 1.
 */
export function sizeFromEntries(entries, sizeOf) {
    let size = 1;
    for (const e of entries)
        size += e.kind === 'directory' ? sizeOf(e.id) : 1;
    return size;
}
/** Paths of a snapshot whose root tree has expanded size `size`. */
export const pathsOf = (size) => size - 1;
/**
 * The expanded size of `root`, reading each distinct tree at most once: trees whose size
 * `known` gives are not read; every size computed is handed to `learn` (children before
 * parents). Work is O(distinct trees not known), whatever the expansion. Sums past 2^53 lose
 * precision but never shrink: a bomb stays far above any limit (Infinity at worst).
 */
export async function expandedSize(root, readTree, known, learn = () => { }, pace = new Pace()) {
    const first = known(root);
    if (first !== undefined)
        return first;
    const computed = new Map();
    // Each known size is asked for once (a lookup may be an index search).
    const looked = new Map();
    const lookup = (id) => {
        if (looked.has(id))
            return looked.get(id);
        const size = known(id);
        looked.set(id, size);
        return size;
    };
    const sizeOf = (id) => computed.get(id) ?? lookup(id);
    const stack = [{ id: root, entries: null }];
    while (stack.length) {
        const top = stack[stack.length - 1];
        if (top.entries === null) {
            if (computed.has(top.id) || lookup(top.id) !== undefined) {
                stack.pop();
                continue;
            }
            top.entries = await readTree(top.id);
            if (pace.tick(top.entries.length))
                await pace.pause();
            for (const e of top.entries) {
                if (e.kind === 'directory' && !computed.has(e.id) && lookup(e.id) === undefined)
                    stack.push({ id: e.id, entries: null });
            }
            continue;
        }
        stack.pop();
        if (computed.has(top.id))
            continue;
        const size = sizeFromEntries(top.entries, sizeOf);
        computed.set(top.id, size);
        learn(top.id, size);
    }
    return computed.get(root);
}
/**
 * Yields the event loop about every 10 ms of work: call `tick(n)` per unit of work and, when it
 * says so, `await pause()`. Cheap when not due (a counter, a clock read every 256 units).
 */
export class Pace {
    everyMs;
    units = 0;
    last = performance.now();
    constructor(everyMs = 10) {
        this.everyMs = everyMs;
    }
    tick(n = 1) {
        const before = this.units;
        this.units += n;
        if ((before >>> 8) === (this.units >>> 8))
            return false;
        return performance.now() - this.last >= this.everyMs;
    }
    async pause() {
        await new Promise((resolve) => setImmediate(resolve));
        this.last = performance.now();
    }
}
/**
 * A walk that expands trees: counts the paths it visits, throws `over()` past `limit`, and says
 * when to yield (as Pace). Bounds the work and memory of a walk whatever the stored trees claim.
 */
export class WalkBudget extends Pace {
    limit;
    over;
    paths = 0;
    constructor(limit, over) {
        super();
        this.limit = limit;
        this.over = over;
    }
    take(n = 1) {
        this.paths += n;
        if (this.paths > this.limit)
            throw this.over(this.limit);
        return this.tick(n);
    }
}
/** The refusal's words, one place: "snapshot X holds more than N paths (M)". */
export function describeOverLimit(what, paths, limit) {
    const shown = Number.isFinite(paths) && paths < 1e15 ? paths.toLocaleString('en-US') : 'astronomically many';
    return `${what} expands to ${shown} paths, over the limit of ${limit.toLocaleString('en-US')} paths a snapshot may hold (files, symlinks and directories, counted at every place a shared tree appears)`;
}
/** A snapshot (stored, or one a land would create) over the limit: 400, told apart by its type. */
export class OverLimit extends Invalid {
}
/** A stored tree (a store from before the limit may hold one) is not expanded past the limit: 400. */
export function overLimit(what, paths, limit) {
    return new OverLimit(describeOverLimit(what, paths, limit));
}
/**
 * What a walk answers when it counts past its limit although the recorded sizes said it would
 * not (a damaged or hand-edited index): 400, and the walk stops there.
 */
export function walkOverLimit(what) {
    return (limit) => new Invalid(`${what} walks more than ${limit.toLocaleString('en-US')} paths; stopped (run cairn fsck: a recorded tree size disagrees with the trees)`);
}
//# sourceMappingURL=tree-size.js.map