// Patchset diffs (docs/api.md "Diffs"): base → revision of a patchset, or revision → revision of
// two patchsets of one change (`against`; with different bases, rebase-aware: what the target
// line brought between them is marked `from_rebase`). The files come one at a time from the domain's
// bounded diff over the store's immutable trees, so a caller streams them.
import { Invalid, NotFound, TooLarge } from '../../domain/errors.js';
import { diffFiles, emptyTotals, normalizer, type DiffOptions, type DiffTotals, type FileDiff } from '../../domain/workflow/content-diff.js';
import { CrossFileMoves, type CrossFileMove } from '../../domain/workflow/moved-lines.js';
import { markRebase, type RebaseMarks } from '../../domain/workflow/interdiff.js';
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
  /** Two patchsets with different bases: what the files mark as brought by the rebase (counts filled in as `files` is consumed); else null. */
  rebase: RebaseMarks | null;
  /** Blocks moved from one file to another (../../domain/workflow/moved-lines.ts): filled once `files` is consumed (a block's two files come apart). */
  moved_blocks: CrossFileMove[];
}

/** A side over the limit a snapshot may hold (stored before the limit) is refused (400) before anything streams. */
export async function patchsetDiff(store: ContentStore, book: WorkflowBook, patchsetIdValue: string, against: string | null, opts: DiffOptions): Promise<PatchsetDiff> {
  const ps = book.patchset(patchsetIdValue);
  let oldSnapshot = ps.base_snapshot_id;
  let rebase: RebaseMarks | null = null;
  if (against !== null) {
    const other = book.patchset(against);
    if (other.change_id !== ps.change_id) throw new Invalid(`against: patchset ${against} belongs to ${other.change_id}, not to ${ps.change_id}; compare patchsets of one change`);
    oldSnapshot = other.revision_snapshot_id;
    if (other.base_snapshot_id !== ps.base_snapshot_id) rebase = { old_base_snapshot_id: other.base_snapshot_id, new_base_snapshot_id: ps.base_snapshot_id, files: 0, hunks: 0 };
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
  let files = diffFiles(reader, oldRoot, newRoot, opts, totals, store.walkBudget(`the diff of ${oldSnapshot} and ${ps.revision_snapshot_id}`, 2));
  // Rebase-aware: what the target line brought between the two bases is marked (../../domain/workflow/interdiff.ts).
  if (rebase) files = markRebase(files, reader, root(rebase.old_base_snapshot_id), root(rebase.new_base_snapshot_id), opts, rebase);
  const d: PatchsetDiff = { patchset_id: ps.patchset_id, change_id: ps.change_id, base_snapshot_id: oldSnapshot, revision_snapshot_id: ps.revision_snapshot_id, against, files, totals, rebase, moved_blocks: [] };
  d.files = withCrossMoves(files, new CrossFileMoves(normalizer(opts.whitespace ?? 'none')), (moves) => { d.moved_blocks = moves; });
  return d;
}

/** The files passed on, each one's unmoved blocks kept; once the last is read, the blocks moved between them. */
async function* withCrossMoves(files: AsyncGenerator<FileDiff>, cross: CrossFileMoves, done: (moves: CrossFileMove[]) => void): AsyncGenerator<FileDiff> {
  for await (const f of files) {
    if (f.hunks.length) cross.add(f.path, f.hunks);
    yield f;
  }
  done(cross.moves());
}

/** A raw read is held in memory whole: larger files are refused (413); a snapshot export serves them. */
export const MAX_FILE_READ_BYTES = 32 * 1024 * 1024;

/**
 * One entry of a snapshot by path, walked tree by tree from its root (a symlink is an entry like a
 * file: its target text, never followed). Unknown snapshot or path: 404; a directory: 400; a file
 * over MAX_FILE_READ_BYTES (or `maxBytes`): 413, before its content is read.
 */
export async function snapshotFile(store: ContentStore, snapshotId: string, path: string, maxBytes = MAX_FILE_READ_BYTES): Promise<{ kind: 'file' | 'executable' | 'symlink'; blob_id: string; data: Buffer }> {
  const s = store.snapshot(snapshotId);
  if (!s) throw new NotFound(`snapshot ${snapshotId} is not present`);
  const names = path.split('/');
  let tree = s.root_tree_id;
  for (let i = 0; i < names.length; i++) {
    const e = (await store.readTree(tree)).find((x) => x.name === names[i]);
    if (!e) throw new NotFound(`no file ${path} in snapshot ${snapshotId}`);
    const last = i === names.length - 1;
    if (e.kind === 'directory') {
      if (last) throw new Invalid(`${path} is a directory in snapshot ${snapshotId}; name a file`);
      tree = e.id;
      continue;
    }
    if (!last) throw new NotFound(`no file ${path} in snapshot ${snapshotId} (${names.slice(0, i + 1).join('/')} is not a directory)`);
    const size = store.locator('blob', e.id)?.raw_length ?? 0;
    if (size > maxBytes) throw new TooLarge(`${path} is ${size} bytes, over the ${maxBytes} bytes this read serves; export the snapshot to read it`);
    return { kind: e.kind, blob_id: e.id, data: await store.readObject('blob', e.id) };
  }
  throw new NotFound(`no file ${path} in snapshot ${snapshotId}`);
}
