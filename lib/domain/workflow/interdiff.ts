// Rebase-aware comparison of two patchsets (docs/api.md "Diffs", `from_rebase`), as Gerrit
// shows an inter-patchset diff: when the two patchsets have different bases, what the target
// line brought between those bases reappears in the revision → revision diff although the
// author did not write it. A file of that diff is `from_rebase` when its whole change is the
// base → base change of the same path (the same blobs and modes on both sides), or when every
// one of its hunks is; a hunk is `from_rebase` when its removed and added lines are exactly
// those of a hunk of the base → base diff of that path (line numbers and context may differ:
// the author's own edits nearby are context in the one and not in the other). A hunk mixing
// the line's edit with the author's stays unmarked: only what reappears identically is marked.
// Work is bounded: two path lookups per listed file (the trees on the way kept for the next), and the base → base line diff only of
// files whose hunks are listed, within REBASE_READ_BUDGET_BYTES of content per response.
import type { TreeEntry } from '../content.js';
import { gitMode, lineDiff, MAX_DIFF_FILE_BYTES, type ContentReader, type FileDiff, type Hunk, type WhitespaceMode } from './content-diff.js';

/** Base content one response reads to mark hunks; past it, files are compared by blob ids only. */
export const REBASE_READ_BUDGET_BYTES = 32 * 1024 * 1024;

export interface RebaseMarks {
  old_base_snapshot_id: string;
  new_base_snapshot_id: string;
  /** Filled in as the files are consumed. */
  files: number;
  hunks: number;
}

/** What a hunk changes, without where: its removed and added lines (and no-newline markers), in order. */
export function changeKey(h: Hunk): string {
  return h.lines.filter((l) => !l.startsWith(' ')).join('\n');
}

/** Trees a response keeps read (by name) for its path lookups: the files of one directory share theirs. */
const KEPT_TREES = 256;

/** The entry at `path` under the tree `root` (null: absent, or a directory); `kept`: trees already read, by id. */
export async function entryAt(reader: Pick<ContentReader, 'readTree'>, root: string, path: string, kept: Map<string, Map<string, TreeEntry>> = new Map()): Promise<TreeEntry | null> {
  const names = path.split('/');
  let tree = root;
  for (let i = 0; i < names.length; i++) {
    let byName = kept.get(tree);
    if (!byName) {
      byName = new Map((await reader.readTree(tree)).map((x) => [x.name, x]));
      if (kept.size >= KEPT_TREES) kept.clear();
      kept.set(tree, byName);
    }
    const e = byName.get(names[i]);
    if (!e) return null;
    if (i === names.length - 1) return e.kind === 'directory' ? null : e;
    if (e.kind !== 'directory') return null;
    tree = e.id;
  }
  return null;
}

const sameSide = (blob: string | null, mode: string | null, e: TreeEntry | null) => (e === null ? blob === null : blob === e.id && mode === gitMode(e.kind));

/**
 * Mark `f` (a file of a revision → revision diff) against the base → base change of its path:
 * `oldBase` the entry at its old path in the older patchset's base, `newBase` at its path in the
 * newer's. `baseHunks`: the base → base hunks of that path (null when not computed).
 */
export function markFile(f: FileDiff, oldBase: TreeEntry | null, newBase: TreeEntry | null, baseHunks: Hunk[] | null): void {
  f.from_rebase = false;
  for (const h of f.hunks) h.from_rebase = false;
  if ((oldBase?.id ?? null) === (newBase?.id ?? null) && (oldBase?.kind ?? null) === (newBase?.kind ?? null)) return; // the line did not touch it
  if (sameSide(f.old_blob_id, f.old_mode, oldBase) && sameSide(f.new_blob_id, f.new_mode, newBase)) {
    f.from_rebase = true;
    for (const h of f.hunks) h.from_rebase = true;
    return;
  }
  if (!baseHunks || f.hunks.length === 0) return;
  const keys = new Map<string, number>();
  for (const h of baseHunks) keys.set(changeKey(h), (keys.get(changeKey(h)) ?? 0) + 1);
  for (const h of f.hunks) {
    const k = changeKey(h);
    const n = keys.get(k) ?? 0;
    if (n > 0) {
      h.from_rebase = true;
      keys.set(k, n - 1);
    }
  }
  // The file's mode must not differ in a way the hunks do not show.
  f.from_rebase = !f.truncated && f.hunks.every((h) => h.from_rebase) && (f.old_mode === f.new_mode || (oldBase !== null && newBase !== null && gitMode(oldBase.kind) === f.old_mode && gitMode(newBase.kind) === f.new_mode));
}

/**
 * The files of a revision → revision diff, each marked against the base → base change between
 * the older patchset's base (`oldBaseRoot`) and the newer's (`newBaseRoot`); `marks` counts them.
 */
export async function* markRebase(files: AsyncIterable<FileDiff>, reader: ContentReader, oldBaseRoot: string, newBaseRoot: string, opts: { context: number; whitespace?: WhitespaceMode }, marks: RebaseMarks): AsyncGenerator<FileDiff> {
  let budget = REBASE_READ_BUDGET_BYTES;
  const kept = new Map<string, Map<string, TreeEntry>>();
  for await (const f of files) {
    const oldBase = await entryAt(reader, oldBaseRoot, f.old_path ?? f.path, kept);
    const newBase = await entryAt(reader, newBaseRoot, f.path, kept);
    let baseHunks: Hunk[] | null = null;
    if (f.hunks.length > 0 && oldBase && newBase && oldBase.id !== newBase.id && oldBase.kind !== 'symlink' && newBase.kind !== 'symlink') {
      const size = reader.blobSize(oldBase.id) + reader.blobSize(newBase.id);
      if (reader.blobSize(oldBase.id) <= MAX_DIFF_FILE_BYTES && reader.blobSize(newBase.id) <= MAX_DIFF_FILE_BYTES && size <= budget) {
        budget -= size;
        const d = lineDiff(await reader.readBlob(oldBase.id), await reader.readBlob(newBase.id), opts.context, opts.whitespace ?? 'none');
        if (d.kind === 'text') baseHunks = d.hunks;
      }
    }
    markFile(f, oldBase, newBase, baseHunks);
    if (f.from_rebase) marks.files++;
    for (const h of f.hunks) if (h.from_rebase) marks.hunks++;
    yield f;
  }
}
