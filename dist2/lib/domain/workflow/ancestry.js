// Snapshot ancestry for fast-forward lands: is the line head an ancestor of the revision? A
// breadth-first walk over stored parents from the revision, bounded so that a land never walks
// a whole history: git's `merge --ff-only` succeeds whenever the head is an ancestor, and so
// does a land, as far as the walk reaches.
/** At most this many snapshots are visited when looking for the head among a revision's ancestors. */
export const MAX_ANCESTRY_WALK = 10_000;
/**
 * Whether `ancestor` is a proper ancestor of `descendant`, walking at most `bound` snapshots
 * (nearest first). `parents(id)` returns a stored snapshot's parents, or null when the snapshot
 * is not stored (the walk does not pass it).
 */
export function ancestryOf(parents, ancestor, descendant, bound = MAX_ANCESTRY_WALK) {
    const seen = new Set([descendant]);
    let frontier = [descendant];
    let visited = 0;
    while (frontier.length > 0) {
        const next = [];
        for (const id of frontier) {
            if (++visited > bound)
                return 'walk_bound_reached';
            for (const p of parents(id) ?? []) {
                if (p === ancestor)
                    return 'ancestor';
                if (!seen.has(p)) {
                    seen.add(p);
                    next.push(p);
                }
            }
        }
        frontier = next;
    }
    return 'not_ancestor';
}
//# sourceMappingURL=ancestry.js.map