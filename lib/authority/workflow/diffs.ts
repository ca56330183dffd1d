// Patchset diffs (docs/api.md "Diffs"): base → revision of a patchset, or revision → revision of
// two patchsets of one change (`against`). The files come one at a time from the domain's
// bounded diff over the store's immutable trees, so a caller streams them.
import { Invalid, NotFound } from '../../domain/errors.js';
import { diffFiles, emptyTotals, type DiffOptions, type DiffTotals, type FileDiff } from '../../domain/workflow/content-diff.js';
import type { ContentStore } from '../../store/content-store.js';
import type { WorkflowBook } from './book.js';

export interface PatchsetDiff {
  patchset_id: string;
  change_id: string;
  /** The old side: the patchset's base, or the revision of `against`. */
  base_snapshot_id: string;
  revision_snapshot_id: string;
  against: string | null;
  files: AsyncGenerator<FileDiff>;
  /** Filled in as `files` is consumed. */
  totals: DiffTotals;
}

/** A side over the limit a snapshot may hold (stored before the limit) is refused (400) before anything streams. */
export async function patchsetDiff(store: ContentStore, book: WorkflowBook, patchsetIdValue: string, against: string | null, opts: DiffOptions): Promise<PatchsetDiff> {
  const ps = book.patchset(patchsetIdValue);
  let oldSnapshot = ps.base_snapshot_id;
  if (against !== null) {
    const other = book.patchset(against);
    if (other.change_id !== ps.change_id) throw new Invalid(`against: patchset ${against} belongs to ${other.change_id}, not to ${ps.change_id}; compare patchsets of one change`);
    oldSnapshot = other.revision_snapshot_id;
  }
  const root = (id: string) => {
    const s = store.snapshot(id);
    if (!s) throw new NotFound(`snapshot ${id} is not present`);
    return s.root_tree_id;
  };
  const oldRoot = root(oldSnapshot);
  const newRoot = root(ps.revision_snapshot_id);
  await store.requireExpandable(oldRoot, `snapshot ${oldSnapshot}`);
  await store.requireExpandable(newRoot, `snapshot ${ps.revision_snapshot_id}`);
  const totals = emptyTotals();
  const reader = {
    readTree: (id: string) => store.readTree(id),
    blobSize: (id: string) => store.locator('blob', id)?.raw_length ?? 0,
    readBlob: (id: string) => store.readObject('blob', id),
  };
  return { patchset_id: ps.patchset_id, change_id: ps.change_id, base_snapshot_id: oldSnapshot, revision_snapshot_id: ps.revision_snapshot_id, against, files: diffFiles(reader, oldRoot, newRoot, opts, totals, store.walkBudget(`the diff of ${oldSnapshot} and ${ps.revision_snapshot_id}`, 2)), totals };
}
