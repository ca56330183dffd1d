// Moved blocks of a file's diff (docs/api.md "Diffs and land readiness", "Moved lines"): a run
// of removed lines that comes back, the same lines in the same order, as a run of added lines
// elsewhere in the same file is marked as moved, as git's `--color-moved` (its default mode)
// marks it, rather than left an unrelated delete and add. A block counts when it has at least
// MIN_MOVED_LINES lines and MIN_MOVED_ALNUM letters and digits (git's 20), so a moved `}` or a
// blank line is not one. Lines are compared as the diff's whitespace mode compares them. The
// work is bounded: lines are looked up by their text in a map, and past MAX_MOVED_LINES changed
// lines or MAX_MOVED_STEPS comparisons the rest of the file is left unmarked.
/** What this module reads and marks of a diff hunk (content-diff.ts's Hunk; declared here so the two modules do not import each other). */
interface MovableHunk {
  old_start: number;
  new_start: number;
  lines: string[];
  moved_to?: Array<number | null> | null;
  moved_from?: Array<number | null> | null;
}

export const MIN_MOVED_LINES = 3;
export const MIN_MOVED_ALNUM = 20;
/** Files with more removed plus added lines than this are not searched. */
export const MAX_MOVED_LINES = 20000;
/** Line comparisons one file's search may make; past it the rest stays unmarked. */
export const MAX_MOVED_STEPS = 200000;

interface Changed {
  hunk: number;
  index: number;
  /** Its line number on its own side (base for removed, revision for added). */
  n: number;
  key: string;
}

const alnum = (s: string) => s.replace(/[^\p{L}\p{N}]/gu, '').length;

/**
 * Sets `moved_to` and `moved_from` on each hunk: arrays parallel to `lines` (null on a hunk with
 * no moved line on that side). A removed line of a moved block gets the revision line it moved
 * to; an added line, the base line it came from. `normalize` is the whitespace mode's (or none).
 */
export function markMoves(hunks: MovableHunk[], normalize: ((t: string) => string) | null = null): void {
  for (const h of hunks) {
    h.moved_to = null;
    h.moved_from = null;
  }
  const removed: Changed[] = [];
  const added: Changed[] = [];
  hunks.forEach((h, hi) => {
    let o = h.old_start;
    let n = h.new_start;
    h.lines.forEach((l, i) => {
      const c = l[0];
      const text = l.slice(1);
      const key = normalize ? normalize(text) : text;
      if (c === '-') removed.push({ hunk: hi, index: i, n: o++, key });
      else if (c === '+') added.push({ hunk: hi, index: i, n: n++, key });
      else if (c === ' ') { o++; n++; }
    });
  });
  if (removed.length < MIN_MOVED_LINES || added.length < MIN_MOVED_LINES || removed.length + added.length > MAX_MOVED_LINES) return;
  // Added lines by text: a removed line looks its candidates up, never scans the added lines.
  const at = new Map<string, number[]>();
  added.forEach((a, i) => {
    const list = at.get(a.key);
    if (list) list.push(i);
    else at.set(a.key, [i]);
  });
  const used = new Uint8Array(added.length);
  let steps = 0;
  // Consecutive on its side: the next changed line is the next line number (a block never spans context).
  const follows = (list: Changed[], i: number) => i + 1 < list.length && list[i + 1].n === list[i].n + 1;
  let i = 0;
  while (i < removed.length && steps < MAX_MOVED_STEPS) {
    let best = 0;
    let bestAt = -1;
    for (const p of at.get(removed[i].key) ?? []) {
      if (used[p]) continue;
      let k = 1;
      steps++;
      while (follows(removed, i + k - 1) && follows(added, p + k - 1) && !used[p + k] && removed[i + k].key === added[p + k].key) {
        k++;
        steps++;
      }
      if (k > best) {
        best = k;
        bestAt = p;
      }
      if (steps >= MAX_MOVED_STEPS) break;
    }
    let letters = 0;
    for (let k = 0; k < best; k++) letters += alnum(removed[i + k].key);
    if (best >= MIN_MOVED_LINES && letters >= MIN_MOVED_ALNUM) {
      for (let k = 0; k < best; k++) {
        const r = removed[i + k];
        const a = added[bestAt + k];
        used[bestAt + k] = 1;
        const rh = hunks[r.hunk];
        const ah = hunks[a.hunk];
        rh.moved_to ??= rh.lines.map(() => null);
        ah.moved_from ??= ah.lines.map(() => null);
        rh.moved_to[r.index] = a.n;
        ah.moved_from[a.index] = r.n;
      }
      i += best;
    } else i++;
  }
}
