// Expanded sizes of stored trees (lib/domain/tree-size.ts; storage-layout.md §8). A tree's size
// is recorded in its index entry when the tree is committed, so the size of a snapshot, or of a
// new tree whose children are stored, is a lookup. Trees indexed before sizes were recorded
// (version-0 tree segments, locators rebuilt from pack headers) have none: their sizes are
// computed once from their distinct subtrees and kept here, least recently used dropped first.
// A size is a function of the tree id alone (trees are immutable), so a kept size is never stale.
import type { TreeEntry } from '../domain/content.js';
import { expandedSize, Pace, pathsOf } from '../domain/tree-size.js';

/** Computed sizes kept per store (about 150 bytes each). */
export const KEPT_SIZES = 65_536;

export class TreeSizes {
  private readonly kept = new Map<string, number>();
  /** Upper bounds on trees' depths (lib/domain/tree-depth.ts), learned by depth checks; as `kept`. */
  private readonly depths = new Map<string, number>();

  constructor(readonly maxSnapshotPaths: number, private readonly capacity = KEPT_SIZES) {}

  /** `recorded` (from the tree's index entry or staged locator), or the size computed earlier; undefined when neither. */
  known(id: string, recorded: number | undefined): number | undefined {
    if (recorded) return recorded;
    const size = this.kept.get(id);
    if (size !== undefined) {
      this.kept.delete(id);
      this.kept.set(id, size);
    }
    return size;
  }

  remember(id: string, size: number): void {
    keep(this.kept, id, size, this.capacity);
  }

  /**
   * An upper bound on a tree's depth without reading it: one a depth check learned, or its path
   * count (`recorded` size, or one kept), whichever is lower; undefined when neither is known.
   */
  depthBound(id: string, recorded: number | undefined): number | undefined {
    const size = this.known(id, recorded);
    const learned = this.depths.get(id);
    if (learned !== undefined) keep(this.depths, id, learned, this.capacity);
    const bySize = size === undefined ? undefined : pathsOf(size);
    return learned === undefined ? bySize : bySize === undefined ? learned : Math.min(learned, bySize);
  }

  rememberDepth(id: string, depth: number): void {
    keep(this.depths, id, depth, this.capacity);
  }

  /**
   * The expanded size of `root`: a lookup when recorded or kept, else computed over the distinct
   * trees whose sizes are unknown (yielding the event loop as it reads them).
   */
  size(root: string, recorded: (id: string) => number | undefined, readTree: (id: string) => Promise<TreeEntry[]>, pace?: Pace): Promise<number> {
    return expandedSize(root, readTree, (id) => this.known(id, recorded(id)), (id, size) => this.remember(id, size), pace);
  }
}

/** Put `id` last (most recently used) in `map`, dropping the least recently used past `capacity`. */
function keep(map: Map<string, number>, id: string, value: number, capacity: number): void {
  map.delete(id);
  map.set(id, value);
  while (map.size > capacity) map.delete(map.keys().next().value as string);
}
