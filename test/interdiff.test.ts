// The rebase-aware marks of an inter-patchset diff (lib/domain/workflow/interdiff.ts), as pure
// functions: which files and hunks of a revision → revision diff are the base → base change.
import { expect } from 'chai';
import type { TreeEntry } from '../lib/domain/content.js';
import { changeKey, entryAt, markFile } from '../lib/domain/workflow/interdiff.js';
import type { FileDiff, Hunk } from '../lib/domain/workflow/content-diff.js';

const hunk = (old_start: number, lines: string[]): Hunk => ({ old_start, old_lines: lines.filter((l) => l[0] !== '+').length, new_start: old_start, new_lines: lines.filter((l) => l[0] !== '-').length, lines });
const file = (over: Partial<FileDiff>): FileDiff => ({
  path: 'a.txt', old_path: 'a.txt', change: 'modified', similarity: null, old_mode: '100644', new_mode: '100644', old_blob_id: 'o', new_blob_id: 'n',
  binary: false, truncated: false, truncated_reason: null, note: null, additions: 1, deletions: 1, diff_lines: 3, diff_bytes: 10, hunks: [], old_image: null, new_image: null, ...over,
});
const entry = (id: string, kind: TreeEntry['kind'] = 'file'): TreeEntry => ({ name: 'a.txt', kind, id });

describe('rebase-aware interdiff marks', () => {
  it('a change key is the removed and added lines, without context or place', () => {
    expect(changeKey(hunk(3, [' ctx', '-old', '+new', ' more']))).to.equal(changeKey(hunk(40, [' other', '-old', '+new'])));
    expect(changeKey(hunk(3, ['-old', '+new']))).to.not.equal(changeKey(hunk(3, ['-old', '+NEW'])));
  });

  it('a file whose sides are the two bases\' is from the rebase, with all its hunks; so are a file the line added or deleted', () => {
    const f = file({ old_blob_id: 'A', new_blob_id: 'B', hunks: [hunk(1, ['-a', '+b'])] });
    markFile(f, entry('A'), entry('B'), null);
    expect(f.from_rebase).to.equal(true);
    expect(f.hunks[0].from_rebase).to.equal(true);
    const added = file({ old_path: null, change: 'added', old_mode: null, old_blob_id: null, new_blob_id: 'B' });
    markFile(added, null, entry('B'), null);
    expect(added.from_rebase).to.equal(true);
    const deleted = file({ change: 'deleted', new_mode: null, new_blob_id: null, old_blob_id: 'A' });
    markFile(deleted, entry('A'), null, null);
    expect(deleted.from_rebase).to.equal(true);
    // The same blobs, another mode on the new base: not the line's change alone.
    const mode = file({ old_blob_id: 'A', new_blob_id: 'B' });
    markFile(mode, entry('A'), entry('B', 'executable'), null);
    expect(mode.from_rebase).to.equal(false);
  });

  it('hunks that reappear identically are marked, each base hunk once; a mixed hunk is not; a path the line did not touch marks nothing', () => {
    const base = [hunk(10, [' x', '-ten', '+TEN', ' y']), hunk(30, ['-thirty', '+THIRTY'])];
    const f = file({ hunks: [hunk(2, ['-two', '+TWO']), hunk(10, [' own', '-ten', '+TEN']), hunk(30, ['-thirty', '+THIRTY', '+mine']), hunk(50, ['-ten', '+TEN'])] });
    markFile(f, entry('A'), entry('B'), base);
    expect(f.hunks.map((h) => h.from_rebase)).to.deep.equal([false, true, false, false]);
    expect(f.from_rebase).to.equal(false);
    const all = file({ hunks: [hunk(10, ['-ten', '+TEN'])] });
    markFile(all, entry('A'), entry('B'), base);
    expect(all.from_rebase).to.equal(true);
    const untouched = file({ hunks: [hunk(10, ['-ten', '+TEN'])] });
    markFile(untouched, entry('A'), entry('A'), base);
    expect(untouched.from_rebase).to.equal(false);
    expect(untouched.hunks[0].from_rebase).to.equal(false);
  });

  it('finds an entry by path through its trees (null for a directory or a missing name), reading each tree once', async () => {
    const trees: Record<string, TreeEntry[]> = { root: [{ name: 'src', kind: 'directory', id: 'src' }, { name: 'a', kind: 'file', id: 'A' }], src: [{ name: 'b', kind: 'file', id: 'B' }] };
    let reads = 0;
    const reader = { readTree: async (id: string) => { reads++; return trees[id]; } };
    const kept = new Map();
    expect((await entryAt(reader, 'root', 'src/b', kept))?.id).to.equal('B');
    expect(await entryAt(reader, 'root', 'src', kept)).to.equal(null);
    expect(await entryAt(reader, 'root', 'a/x', kept)).to.equal(null);
    expect(await entryAt(reader, 'root', 'nope', kept)).to.equal(null);
    expect(reads).to.equal(2);
  });
});
