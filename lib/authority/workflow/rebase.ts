// `:rebase` (docs/api.md "Rebase"): a new patchset of a change whose base is the target line's
// head and whose revision is the chosen patchset's revision merged onto that head, built
// server-side by the land's merge code (LandDesk.mergeOnto: the same three-way tree merge, the
// same conflicts), or a 409 naming the conflicting paths with nothing written. The merge and the
// tree diff run before the transaction (snapshots and trees are immutable); ONE commit stages
// the merged blobs and trees as packs (server-objects.ts, as a land and :applySuggestions do),
// the revision snapshot (one parent: the head, as `git rebase` leaves a commit), the patchset
// (WorkflowBook.stagePatchset: the same record, counters and `patchset.created` event as any new
// patchset) and its selection (selectPatchsetIn: `patchset.selected`, as a push selects its
// newest). Approvals follow the repository's stale-approval rule by themselves: a rebase that
// changes the same paths to the same content keeps the diff fingerprint, so they carry.
import { encodeSnapshot, sha256Hex } from '../../domain/content.js';
import { Conflict, Invalid, NotFound } from '../../domain/errors.js';
import { nowSeconds } from '../../domain/repository.js';
import { checkChangeOpen, type ChangeRecord, type PatchsetRecord } from '../../domain/workflow/rules.js';
import { crashPoint } from '../../store/crash-point.js';
import type { ContentStore } from '../../store/content-store.js';
import { PACK_KIND_OBJECT, PACK_KIND_TREE } from '../../store/pack.js';
import type { WorkflowBook } from './book.js';
import type { LandDesk } from './lands.js';
import { stagePack } from './server-objects.js';

export interface RebaseInput {
  /** The patchset to rebase; default the change's selected patchset. */
  patchset_id?: string;
  /** Who asked (the caller's identity), recorded on the new patchset; null when none. */
  by: string | null;
}

/** Conflicting paths a 409 of `:rebase` lists at most (`conflicts_count` counts them all). */
export const REBASE_LISTED_CONFLICTS = 100;

/** The documented `code` of each 409 `:rebase` answers. */
export const REBASE_CONFLICT = 'REBASE_CONFLICT';
export const ALREADY_UP_TO_DATE = 'ALREADY_UP_TO_DATE';
export const REBASE_RACED = 'REBASE_RACED';
export const REBASE_CODES = [REBASE_CONFLICT, ALREADY_UP_TO_DATE, REBASE_RACED] as const;

/** The patchset `:rebase` works on: named (of this change) or the selected one, usable. */
function chosen(book: WorkflowBook, change: ChangeRecord, named: string | undefined): PatchsetRecord {
  const id = named ?? change.selected_patchset_id;
  if (id === null || id === undefined) throw new Invalid(`change ${change.change_id} has no patchset to rebase`);
  const ps = book.patchset(id);
  if (ps.change_id !== change.change_id) throw new Invalid(`patchset ${id} belongs to ${ps.change_id}, not to ${change.change_id}`);
  if (ps.withdrawn) throw new Invalid(`patchset ${id} is withdrawn`);
  if (ps.invalidated) throw new Invalid(`patchset ${id} is invalidated`);
  return ps;
}

export async function rebasePatchset(store: ContentStore, book: WorkflowBook, lands: LandDesk, ref: string, input: RebaseInput): Promise<{ patchset: PatchsetRecord; change: ChangeRecord }> {
  const change = book.change(ref);
  checkChangeOpen(change, 'rebase it');
  const ps = chosen(book, change, input.patchset_id);
  const lineName = change.land_target_line;
  const line = store.line(lineName);
  if (!line) throw new NotFound(`line ${lineName}, the change's target, does not exist`);
  const head = line.head_snapshot_id;
  if (head === null) throw new Invalid(`line ${lineName}, the change's target, has no head to rebase onto`);
  if (ps.base_snapshot_id === head) {
    throw new Conflict(`${ps.patchset_id} is already based on the head of ${lineName} (${head.slice(0, 12)}); nothing to rebase`, { code: ALREADY_UP_TO_DATE, patchset_id: ps.patchset_id, head_snapshot_id: head });
  }
  // The land's merge, in merge mode: base = the patchset's base, ours = the head, theirs = its revision.
  const merged = await lands.mergeOnto(head, ps, 'merge', change.change_ref);
  if (merged.conflicts) {
    const paths = merged.conflicts.map((c) => c.path);
    throw new Conflict(`${ps.patchset_id} does not rebase onto the head of ${lineName}: ${merged.conflict_count} conflicting path(s): ${paths.slice(0, 5).join(', ')}${merged.conflict_count > 5 ? ', …' : ''}`, {
      code: REBASE_CONFLICT, patchset_id: ps.patchset_id, head_snapshot_id: head, conflicts: merged.conflicts.slice(0, REBASE_LISTED_CONFLICTS), conflicts_count: merged.conflict_count,
    });
  }
  const revision = store.snapshot(ps.revision_snapshot_id)!;
  // A rebased commit: the revision's message, one parent (the head), a new time.
  const snapshot = encodeSnapshot({ root_tree_id: merged.root_tree_id, parent_snapshot_ids: [head], created_at_s: nowSeconds(), message: revision.message });
  const snapshotId = sha256Hex(snapshot);
  const built = { trees: merged.merge?.trees ?? new Map<string, Buffer>(), blobs: merged.merge?.blobs ?? new Map<string, Buffer>() };
  const headSnapshot = store.snapshot(head)!;
  const diff = await book.diff({ snapshot_id: head, root_tree_id: headSnapshot.root_tree_id }, { snapshot_id: snapshotId, root_tree_id: merged.root_tree_id }, built);
  if (diff.stats.files_changed === 0) {
    throw new Conflict(`${ps.patchset_id} changes nothing once rebased onto the head of ${lineName}: its edits are there already; abandon the change or push another revision`, { code: REBASE_CONFLICT, patchset_id: ps.patchset_id, head_snapshot_id: head, conflicts: [], conflicts_count: 0 });
  }
  await book.preparePatchset(lineName);
  crashPoint('rebase:commit');
  return store.transact((tx) => {
    const c = book.changeIn(tx, ref);
    checkChangeOpen(c, 'rebase it');
    const raced = (what: string) => new Conflict(`${what} while ${ps.patchset_id} was being rebased; rebase again`, { code: REBASE_RACED, patchset_id: ps.patchset_id, head_snapshot_id: head });
    if (tx.line(lineName)?.head_snapshot_id !== head) throw raced(`line ${lineName} moved`);
    if (c.patchset_count !== change.patchset_count) throw raced(`change ${c.change_id} got patchset ${c.current_patchset_id}`);
    if (merged.merge) {
      stagePack(tx, PACK_KIND_OBJECT, 'blob', merged.merge.blobs);
      stagePack(tx, PACK_KIND_TREE, 'tree', merged.merge.trees, merged.tree_sizes);
    }
    if (!tx.hasSnapshot(snapshotId)) tx.addSnapshot(snapshot);
    const staged = book.stagePatchset(tx, c, {
      base_snapshot_id: head,
      revision_snapshot_id: snapshotId,
      summary: ps.summary,
      author_mode: ps.author_mode,
      author: ps.author ?? null,
      rebased_from: { patchset_id: ps.patchset_id, onto_snapshot_id: head, by: input.by },
    }, diff);
    // The newest patchset is what is reviewed and landed: selected as a push selects its own.
    const final = book.selectPatchsetIn(tx, staged.change, staged.patchset.patchset_id);
    return { patchset: staged.patchset, change: final };
  });
}
