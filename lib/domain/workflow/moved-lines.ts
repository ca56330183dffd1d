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

// ---------------------------------------------------------------- moves across files

/** A block moved from one file to another: removed at `from` (its base line), added at `to` (its revision line). */
export interface CrossFileMove {
  from: { path: string; line: number };
  to: { path: string; line: number };
  lines: number;
}

/** Changed lines (not already moved within their file) a diff's cross-file search keeps; past it later files are not searched. */
export const MAX_CROSS_MOVED_LINES = 50000;
/** Line comparisons the cross-file search may make; past it the rest stays unmarked. */
export const MAX_CROSS_MOVED_STEPS = 1000000;

/** A run of consecutive removed (or added) lines of one file, on its own side's line numbers. */
interface Run {
  path: string;
  start: number;
  keys: string[];
}

/**
 * Blocks moved from one file to another of the same diff, as the files come (one at a time, each
 * after its own moves are marked): `add` keeps each file's runs of removed and of added lines
 * that no move within the file took; `moves` then matches them. A block counts on the rule a
 * move within a file has (MIN_MOVED_LINES lines, MIN_MOVED_ALNUM letters and digits, the same
 * lines in the same order as the whitespace mode compares them); a block with an edited line
 * inside is two runs, each held to the rule. Bounded: added runs are indexed by the text of each
 * MIN_MOVED_LINES-line window (a hash map), so a removed window looks its candidates up and no
 * pair of lines is compared unless those windows are equal; at most MAX_CROSS_MOVED_LINES lines
 * are kept and MAX_CROSS_MOVED_STEPS comparisons made (`limited` says one was reached).
 */
export class CrossFileMoves {
  private readonly removed: Run[] = [];
  private readonly added: Run[] = [];
  private kept = 0;
  limited = false;
  /** Line comparisons the last `moves()` made. */
  steps = 0;

  constructor(private readonly normalize: ((t: string) => string) | null = null) {}

  add(path: string, hunks: MovableHunk[]): void {
    if (this.limited) return;
    const runs: Array<{ list: Run[]; run: Run }> = [];
    for (const h of hunks) {
      let o = h.old_start;
      let n = h.new_start;
      let cur: { kind: string; run: Run } | null = null;
      const close = () => {
        if (cur && cur.run.keys.length >= MIN_MOVED_LINES) runs.push({ list: cur.kind === '-' ? this.removed : this.added, run: cur.run });
        cur = null;
      };
      h.lines.forEach((l, i) => {
        const c = l[0];
        const taken = c === '-' ? h.moved_to?.[i] != null : c === '+' ? h.moved_from?.[i] != null : true;
        if ((c !== '-' && c !== '+') || taken || (cur && cur.kind !== c)) close();
        if ((c === '-' || c === '+') && !taken) {
          const text = l.slice(1);
          cur ??= { kind: c, run: { path, start: c === '-' ? o : n, keys: [] } };
          cur.run.keys.push(this.normalize ? this.normalize(text) : text);
        }
        if (c === '-') o++;
        else if (c === '+') n++;
        else if (c === ' ') { o++; n++; }
      });
      close();
    }
    for (const { list, run } of runs) {
      if (this.kept + run.keys.length > MAX_CROSS_MOVED_LINES) {
        this.limited = true;
        return;
      }
      this.kept += run.keys.length;
      list.push(run);
    }
  }

  /** The blocks moved across files: each removed run's longest match in another file's added runs first, an added line matched once. */
  moves(): CrossFileMove[] {
    const out: CrossFileMove[] = [];
    if (this.removed.length === 0 || this.added.length === 0) return out;
    const windowKey = (keys: string[], at: number) => keys.slice(at, at + MIN_MOVED_LINES).join('\n');
    const index = new Map<string, Array<[number, number]>>();
    this.added.forEach((run, ri) => {
      for (let p = 0; p + MIN_MOVED_LINES <= run.keys.length; p++) {
        const k = windowKey(run.keys, p);
        const list = index.get(k);
        if (list) list.push([ri, p]);
        else index.set(k, [[ri, p]]);
      }
    });
    const used = this.added.map((r) => new Uint8Array(r.keys.length));
    let steps = 0;
    const done = () => { this.steps = steps; };
    for (const r of this.removed) {
      let i = 0;
      while (i + MIN_MOVED_LINES <= r.keys.length) {
        if (steps >= MAX_CROSS_MOVED_STEPS) {
          this.limited = true;
          done();
          return out;
        }
        let best = 0;
        let bestAt: [number, number] | null = null;
        for (const [ai, p] of index.get(windowKey(r.keys, i)) ?? []) {
          const a = this.added[ai];
          if (a.path === r.path || used[ai][p]) continue;
          let k = 0;
          while (i + k < r.keys.length && p + k < a.keys.length && !used[ai][p + k] && r.keys[i + k] === a.keys[p + k]) k++;
          steps += k + 1;
          if (k > best) {
            best = k;
            bestAt = [ai, p];
          }
          if (steps >= MAX_CROSS_MOVED_STEPS) break;
        }
        let letters = 0;
        for (let k = 0; k < best; k++) letters += alnum(r.keys[i + k]);
        if (bestAt && best >= MIN_MOVED_LINES && letters >= MIN_MOVED_ALNUM) {
          const [ai, p] = bestAt;
          used[ai].fill(1, p, p + best);
          out.push({ from: { path: r.path, line: r.start + i }, to: { path: this.added[ai].path, line: this.added[ai].start + p }, lines: best });
          i += best;
        } else i++;
      }
    }
    done();
    return out;
  }
}
