import { expandedSize, pathsOf } from '../domain/tree-size.js';
/** Computed sizes kept per store (about 150 bytes each). */
export const KEPT_SIZES = 65_536;
export class TreeSizes {
    maxSnapshotPaths;
    capacity;
    kept = new Map();
    /** Upper bounds on trees' depths (lib/domain/tree-depth.ts), learned by depth checks; as `kept`. */
    depths = new Map();
    constructor(maxSnapshotPaths, capacity = KEPT_SIZES) {
        this.maxSnapshotPaths = maxSnapshotPaths;
        this.capacity = capacity;
    }
    /** `recorded` (from the tree's index entry or staged locator), or the size computed earlier; undefined when neither. */
    known(id, recorded) {
        if (recorded)
            return recorded;
        const size = this.kept.get(id);
        if (size !== undefined) {
            this.kept.delete(id);
            this.kept.set(id, size);
        }
        return size;
    }
    remember(id, size) {
        keep(this.kept, id, size, this.capacity);
    }
    /**
     * An upper bound on a tree's depth without reading it: one a depth check learned, or its path
     * count (`recorded` size, or one kept), whichever is lower; undefined when neither is known.
     */
    depthBound(id, recorded) {
        const size = this.known(id, recorded);
        const learned = this.depths.get(id);
        if (learned !== undefined)
            keep(this.depths, id, learned, this.capacity);
        const bySize = size === undefined ? undefined : pathsOf(size);
        return learned === undefined ? bySize : bySize === undefined ? learned : Math.min(learned, bySize);
    }
    rememberDepth(id, depth) {
        keep(this.depths, id, depth, this.capacity);
    }
    /**
     * The expanded size of `root`: a lookup when recorded or kept, else computed over the distinct
     * trees whose sizes are unknown (yielding the event loop as it reads them).
     */
    size(root, recorded, readTree, pace) {
        return expandedSize(root, readTree, (id) => this.known(id, recorded(id)), (id, size) => this.remember(id, size), pace);
    }
}
/** Put `id` last (most recently used) in `map`, dropping the least recently used past `capacity`. */
function keep(map, id, value, capacity) {
    map.delete(id);
    map.set(id, value);
    while (map.size > capacity)
        map.delete(map.keys().next().value);
}
//# sourceMappingURL=tree-sizes.js.map