// What a patchset changes, line by line (docs/api.md "Diffs"): the changed files of two trees
// with their hunks, as JSON rows or as git-style unified text that `git apply` accepts. Work is
// bounded: only subtrees whose ids differ are read (as the tree diff walks); a file's lines are
// counted (./line-diff.ts, git's algorithm: the counts are git's) when its sides are at most
// MAX_COUNT_FILE_BYTES, within the request's READ_BUDGET_BYTES of content and DIFF_TIME_BUDGET_MS
// of line diffs; its hunks are sent when its sides are at most MAX_DIFF_FILE_BYTES, the hunks
// are at most INLINE_DIFF_LINES / INLINE_DIFF_BYTES (unless the request names the file), and the
// response has sent less than BODY_BUDGET_BYTES of hunks. A file without hunks says why
// (`truncated_reason`); a count not computed is null, never a false 0. In the unified text such
// a file is an entry that git apply refuses, never a silent gap. Files are produced one at a
// time (an async generator), so a caller streams them and memory holds one file's content,
// whatever the number of files.
import { isUtf8 } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { lineChanges } from './line-diff.js';
import { hunkSpans, type Span } from './word-diff.js';
import { markMoves } from './moved-lines.js';
import { detectRenames, type Match, type RenameLimit } from './renames.js';
import { imageInfo, type ImageInfo } from './media.js';
import type { EntryKind, TreeEntry } from '../content.js';
import { Invalid } from '../errors.js';
import { WalkBudget } from '../tree-size.js';

export interface ContentReader {
  readTree(id: string): Promise<TreeEntry[]>;
  /** The blob's byte length (from its locator, without reading it). */
  blobSize(id: string): number;
  readBlob(id: string): Promise<Buffer>;
}

/** A file with a side over this is listed without hunks (`file_size`). */
export const MAX_DIFF_FILE_BYTES = 1024 * 1024;
/** ...and is still counted when both sides are at most this. */
export const MAX_COUNT_FILE_BYTES = 8 * 1024 * 1024;
/** Content one request reads to count and diff lines; later files are listed uncounted (`byte_budget`). */
export const READ_BUDGET_BYTES = 64 * 1024 * 1024;
/** Hunk text one response sends; later files are listed counted, without hunks (`byte_budget`). */
export const BODY_BUDGET_BYTES = 16 * 1024 * 1024;
/** A file's hunks past either of these are not sent with other files (`large_diff`): the file alone (?path=) has them. */
export const INLINE_DIFF_LINES = 2000;
export const INLINE_DIFF_BYTES = 256 * 1024;
export const MAX_CONTEXT = 1000;
export const DEFAULT_CONTEXT = 3;
/** Once a request has spent this long computing line diffs, later files are listed uncounted (`time_budget`). */
export const DIFF_TIME_BUDGET_MS = 3000;

export interface Hunk {
  old_start: number;
  old_lines: number;
  new_start: number;
  new_lines: number;
  /** Each line prefixed " " (context), "-" (removed), "+" (added), or "\" (no newline at end of file). */
  lines: string[];
  /** Parallel to `lines`: the changed ranges within a paired "-"/"+" line (./word-diff.ts), else null. */
  spans?: Array<Span[] | null>;
  /** On a comparison of two patchsets with different bases: the hunk is the target line's change, brought by the rebase (./interdiff.ts). */
  from_rebase?: boolean;
  /**
   * Parallel to `lines` (./moved-lines.ts): on a removed line of a block moved elsewhere in the
   * file, the revision line it moved to; null elsewhere, or null for the whole hunk when none moved.
   */
  moved_to?: Array<number | null> | null;
  /** ...and on an added line of a moved block, the base line it came from. */
  moved_from?: Array<number | null> | null;
}

export interface FileDiff {
  path: string;
  /** The path on the old side: the same path, or the source of a rename or copy. */
  old_path: string | null;
  change: FileChangeKind;
  /** Percent of the content the two sides share (./renames.ts), on renames and copies; else null. */
  similarity: number | null;
  old_mode: string | null;
  new_mode: string | null;
  old_blob_id: string | null;
  new_blob_id: string | null;
  binary: boolean;
  /** The hunks were left out: `truncated_reason` says why, `note` in words. */
  truncated: boolean;
  truncated_reason: TruncatedReason | null;
  /** Why hunks are missing, when they are. */
  note: string | null;
  /** Lines added and removed (git's counts); null when the content was not line-diffed (see `note`). */
  additions: number | null;
  deletions: number | null;
  /** The size of the file's hunks (their lines, and bytes as unified text), sent or not; null when not computed. */
  diff_lines: number | null;
  diff_bytes: number | null;
  hunks: Hunk[];
  /** Each side's image facts (./media.ts) when it is a PNG, JPEG, GIF, WebP or SVG; else null. */
  old_image: ImageInfo | null;
  new_image: ImageInfo | null;
  /** On a comparison of two patchsets with different bases: the whole change of the file came from the target line through the rebase (./interdiff.ts). */
  from_rebase?: boolean;
}

/**
 * Why a file's hunks were left out: a side over MAX_DIFF_FILE_BYTES (`file_size`), hunks over
 * INLINE_DIFF_LINES / INLINE_DIFF_BYTES in a response that does not name the file (`large_diff`),
 * the request's READ_BUDGET_BYTES or BODY_BUDGET_BYTES spent (`byte_budget`), or its
 * DIFF_TIME_BUDGET_MS (`time_budget`). All but the first go away when the file is asked for
 * alone (`?path=`).
 */
export const TRUNCATED_REASONS = ['file_size', 'large_diff', 'byte_budget', 'time_budget'] as const;
export type TruncatedReason = (typeof TRUNCATED_REASONS)[number];

/** git's -w, -b and --ignore-space-at-eol: lines that differ only so are context. */
export const WHITESPACE_MODES = ['none', 'ignore-all', 'ignore-change', 'ignore-eol'] as const;
export type WhitespaceMode = (typeof WHITESPACE_MODES)[number];

export interface DiffOptions {
  context: number;
  whitespace?: WhitespaceMode;
  /** Detect renames and copies (./renames.ts); default off for callers that do not ask. */
  renames?: boolean;
  /** Narrow to these paths: each a file, or a directory and everything under it. */
  paths: string[];
  /**
   * Leave out the hunks of a large diff (`large_diff`) unless the file is named in `paths`: on
   * for the JSON a page reads (default), off for the unified text a tool reads whole.
   */
  inlineCap?: boolean;
}

export const FILE_CHANGE_KINDS = ['added', 'modified', 'deleted', 'renamed', 'copied'] as const;
export type FileChangeKind = (typeof FILE_CHANGE_KINDS)[number];

export interface DiffTotals {
  files_changed: number;
  /** The sums of the files' counts (the counted ones: see uncounted_files). */
  additions: number;
  deletions: number;
  binary_files: number;
  /** Files listed without their hunks. */
  truncated_files: number;
  /** Text files whose lines were not counted (their additions/deletions are null). */
  uncounted_files: number;
  /** Blob bytes read (at most READ_BUDGET_BYTES plus one file). */
  bytes_read: number;
  renames: number;
  copies: number;
  /** The bound rename detection stopped at (the files not yet matched stay a delete and an add), or null. */
  rename_limit: RenameLimit | null;
}

/** git's mode of an entry kind. */
export function gitMode(kind: EntryKind): string {
  return kind === 'executable' ? '100755' : kind === 'symlink' ? '120000' : '100644';
}

const isBlob = (k: EntryKind) => k !== 'directory';

/**
 * Whether the request asked for `p`: with no paths, everything; a file when it is a named path
 * or under a named directory; a directory when it is named, is under a named one, or leads to one.
 */
function wanted(paths: string[], p: string, dir: boolean): boolean {
  if (paths.length === 0) return true;
  return paths.some((q) => q === p || p.startsWith(`${q}/`) || (dir && q.startsWith(`${p}/`)));
}

/** One step of changedEntries' walk: two trees to compare, a name in both listings, or one side's entry. */
type WalkStep =
  | { step: 'trees'; prefix: string; oldId: string; newId: string }
  | { step: 'name'; prefix: string; name: string; old: TreeEntry | null; new: TreeEntry | null }
  | { step: 'side'; prefix: string; entry: TreeEntry; side: 'old' | 'new' };

/**
 * The changed blobs of `oldTree` → `newTree` in path order (byte order per directory), as pairs
 * of entries. `budget` counts the entries visited (it throws past its limit) and paces the walk.
 * Iterative (an explicit stack of steps, on the heap): a tree thousands of levels deep costs
 * memory per level, never a stack frame, so a tree stored before the depth limit still diffs.
 */
export async function* changedEntries(reader: ContentReader, oldTree: string, newTree: string, paths: string[] = [], budget: WalkBudget = new WalkBudget(Infinity, () => new Invalid('unreachable'))): AsyncGenerator<{ path: string; old: TreeEntry | null; new: TreeEntry | null }> {
  const stack: WalkStep[] = [{ step: 'trees', prefix: '', oldId: oldTree, newId: newTree }];
  while (stack.length) {
    const s = stack.pop()!;
    if (s.step === 'trees') {
      if (s.oldId === s.newId) continue;
      const [olds, news] = await Promise.all([reader.readTree(s.oldId), reader.readTree(s.newId)]);
      const oldBy = new Map(olds.map((e) => [e.name, e]));
      const newBy = new Map(news.map((e) => [e.name, e]));
      const names = [...new Set([...oldBy.keys(), ...newBy.keys()])].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      // Pushed last name first: the stack pops them in order.
      for (let i = names.length - 1; i >= 0; i--) stack.push({ step: 'name', prefix: s.prefix, name: names[i], old: oldBy.get(names[i]) ?? null, new: newBy.get(names[i]) ?? null });
    } else if (s.step === 'name') {
      const { old: o, new: n } = s;
      const p = s.prefix + s.name;
      if (budget.take()) await budget.pause();
      if (o && n && o.id === n.id && o.kind === n.kind) continue;
      if (o && n && !isBlob(o.kind) && !isBlob(n.kind)) {
        if (wanted(paths, p, true)) stack.push({ step: 'trees', prefix: `${p}/`, oldId: o.id, newId: n.id });
      } else if (o && n && isBlob(o.kind) && isBlob(n.kind)) {
        if (wanted(paths, p, false)) yield { path: p, old: o, new: n };
      } else {
        if (n) stack.push({ step: 'side', prefix: s.prefix, entry: n, side: 'new' });
        if (o) stack.push({ step: 'side', prefix: s.prefix, entry: o, side: 'old' });
      }
    } else {
      // Every entry visited counts, files or not: a walk through directories alone yields too.
      if (budget.take()) await budget.pause();
      const e = s.entry;
      const p = s.prefix + e.name;
      if (!isBlob(e.kind)) {
        if (!wanted(paths, p, true)) continue;
        const children = await reader.readTree(e.id);
        for (let i = children.length - 1; i >= 0; i--) stack.push({ step: 'side', prefix: `${p}/`, entry: children[i], side: s.side });
        continue;
      }
      if (!wanted(paths, p, false)) continue;
      yield s.side === 'old' ? { path: p, old: e, new: null } : { path: p, old: null, new: e };
    }
  }
}

/** What one request may still spend: content read, hunk text sent, line-diff time. */
interface Budget {
  read: number;
  body: number;
  ms: number;
}

/**
 * The file diffs of `oldTree` → `newTree`, one at a time, within the request's budget; the
 * totals are filled in as the files are produced (read them once the generator is done).
 * `walk` bounds the entries visited (see changedEntries).
 */
export async function* diffFiles(reader: ContentReader, oldTree: string, newTree: string, opts: DiffOptions, totals: DiffTotals, walk?: WalkBudget): AsyncGenerator<FileDiff> {
  const budget: Budget = { read: READ_BUDGET_BYTES, body: BODY_BUDGET_BYTES, ms: DIFF_TIME_BUDGET_MS };
  const entries = changedEntries(reader, oldTree, newTree, opts.paths, walk);
  if (!opts.renames) {
    for await (const e of entries) yield* entryDiffs(reader, e, null, opts, totals, budget);
    return;
  }
  // Renames need every added and deleted file before the first is written: the changed entries
  // (not their content) are collected, bounded by the walk budget like the walk itself.
  const changed: Array<{ path: string; old: TreeEntry | null; new: TreeEntry | null }> = [];
  for await (const e of entries) {
    // A symlink that became a file (or back) is a delete and an add, as git shows a type change.
    if (e.old && e.new && (e.old.kind === 'symlink') !== (e.new.kind === 'symlink')) changed.push({ path: e.path, old: e.old, new: null }, { path: e.path, old: null, new: e.new });
    else changed.push(e);
  }
  const { matches, renamedFrom, limit } = await detectRenames(reader, changed);
  totals.rename_limit = limit;
  for (const e of changed) {
    if (!e.new && renamedFrom.has(e.path)) continue; // shown at its new path
    yield* entryDiffs(reader, e, matches.get(e.path) ?? null, opts, totals, budget);
  }
}

async function* entryDiffs(reader: ContentReader, e: { path: string; old: TreeEntry | null; new: TreeEntry | null }, match: Match | null, opts: DiffOptions, totals: DiffTotals, budget: Budget): AsyncGenerator<FileDiff> {
  const { path, old, new: neu } = e;
  if (match && neu) {
    yield await fileDiff(reader, path, match.source, neu, opts, totals, budget, match);
  } else if (old && neu && (old.kind === 'symlink') !== (neu.kind === 'symlink')) {
    // A symlink that became a file (or back) is a delete and an add, as git shows a type change.
    yield await fileDiff(reader, path, old, null, opts, totals, budget);
    yield await fileDiff(reader, path, null, neu, opts, totals, budget);
  } else {
    yield await fileDiff(reader, path, old, neu, opts, totals, budget);
  }
  // Let other requests run between files: a long diff never holds the event loop for long.
  await new Promise((resolve) => setImmediate(resolve));
}

/** Size as people read it (for notes). */
function kib(n: number): string {
  return n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(1)} MiB` : `${Math.max(1, Math.round(n / 1024))} KiB`;
}

async function fileDiff(reader: ContentReader, path: string, old: TreeEntry | null, neu: TreeEntry | null, opts: DiffOptions, totals: DiffTotals, budget: Budget, match: Match | null = null): Promise<FileDiff> {
  const f: FileDiff = {
    path,
    old_path: match ? match.from : old ? path : null,
    change: match ? match.kind : old && neu ? 'modified' : neu ? 'added' : 'deleted',
    similarity: match ? match.similarity : null,
    old_mode: old ? gitMode(old.kind) : null,
    new_mode: neu ? gitMode(neu.kind) : null,
    old_blob_id: old?.id ?? null,
    new_blob_id: neu?.id ?? null,
    binary: false,
    truncated: false,
    truncated_reason: null,
    note: null,
    additions: 0,
    deletions: 0,
    diff_lines: 0,
    diff_bytes: 0,
    hunks: [],
    old_image: null,
    new_image: null,
  };
  totals.files_changed++;
  let before: Buffer | null = null;
  let after: Buffer | null = null;
  if (f.change === 'renamed') totals.renames++;
  if (f.change === 'copied') totals.copies++;
  if (!old || !neu || old.id !== neu.id) {
    const oldSize = old ? reader.blobSize(old.id) : 0;
    const newSize = neu ? reader.blobSize(neu.id) : 0;
    const omit = (reason: TruncatedReason, note: string) => { f.truncated = true; f.truncated_reason = reason; f.note = note; };
    const uncounted = (reason: TruncatedReason, note: string) => {
      omit(reason, note);
      f.additions = f.deletions = f.diff_lines = f.diff_bytes = null;
    };
    const largest = Math.max(oldSize, newSize);
    if (largest > MAX_COUNT_FILE_BYTES) {
      uncounted('file_size', `a side is ${largest} bytes, over the ${MAX_COUNT_FILE_BYTES} whose lines are counted; compare the two versions`);
    } else if (oldSize + newSize > budget.read) {
      uncounted('byte_budget', `this diff has read its ${kib(READ_BUDGET_BYTES)} of content; ask for this file with ?path=`);
      budget.read = 0;
    } else if (budget.ms <= 0) {
      uncounted('time_budget', `this diff has used its ${DIFF_TIME_BUDGET_MS} ms of line-diff time; ask for this file with ?path=`);
    } else {
      budget.read -= oldSize + newSize;
      totals.bytes_read += oldSize + newSize;
      before = old ? await reader.readBlob(old.id) : Buffer.alloc(0);
      after = neu ? await reader.readBlob(neu.id) : Buffer.alloc(0);
      const t0 = performance.now();
      const d = lineDiff(before, after, opts.context, opts.whitespace ?? 'none');
      budget.ms -= performance.now() - t0;
      if (d.kind === 'binary') {
        f.binary = true;
        f.additions = f.deletions = f.diff_lines = f.diff_bytes = null;
      } else if (d.kind === 'not_utf8') {
        f.binary = true;
        f.note = 'not UTF-8 text';
        f.additions = f.deletions = f.diff_lines = f.diff_bytes = null;
      } else {
        f.additions = d.additions;
        f.deletions = d.deletions;
        let lines = 0;
        let bytes = 0;
        for (const h of d.hunks) {
          lines += h.lines.length;
          for (const l of h.lines) bytes += Buffer.byteLength(l) + 1;
        }
        f.diff_lines = lines;
        f.diff_bytes = bytes;
        const named = opts.inlineCap === false || opts.paths.includes(path);
        if (largest > MAX_DIFF_FILE_BYTES) {
          omit('file_size', `a side is ${largest} bytes, over the ${MAX_DIFF_FILE_BYTES} whose hunks are shown; compare the two versions`);
        } else if (!named && (lines > INLINE_DIFF_LINES || bytes > INLINE_DIFF_BYTES)) {
          omit('large_diff', `the diff is ${lines} lines (${kib(bytes)}), more than is sent with other files; ask for this file with ?path=`);
        } else if (bytes > budget.body) {
          omit('byte_budget', `this diff has sent its ${kib(BODY_BUDGET_BYTES)} of hunks; ask for this file with ?path=`);
          budget.body = 0;
        } else {
          budget.body -= bytes;
          // Word highlights are part of the line-diff work: their time counts against the same budget.
          const t1 = performance.now();
          f.hunks = d.hunks.map((h) => ({ ...h, spans: hunkSpans(h.lines) }));
          // so are moved blocks (bounded by their own step cap)
          markMoves(f.hunks, normalizer(opts.whitespace ?? 'none'));
          budget.ms -= performance.now() - t1;
        }
        if (!d.complete) f.note = `${f.note ? `${f.note}; ` : ''}the line diff reached its work bound: the counts are of a coarser diff than git's`;
      }
    }
  }
  // Images: from the content read for the diff; content the diff had no reason to read (the same
  // blob on both sides: an exact rename, a mode change) is read when named as an image and within
  // the size and byte budget; otherwise (too large, over the budget) the facts come by name.
  if (old && neu && old.id === neu.id && imageInfo(path, 0, null) && reader.blobSize(neu.id) <= MAX_DIFF_FILE_BYTES && reader.blobSize(neu.id) <= budget.read) {
    budget.read -= reader.blobSize(neu.id);
    totals.bytes_read += reader.blobSize(neu.id);
    before = after = await reader.readBlob(neu.id);
  }
  const image = (e: TreeEntry | null, p: string, data: Buffer | null) => (e && e.kind !== 'symlink' ? imageInfo(p, reader.blobSize(e.id), data) : null);
  f.old_image = image(old, f.old_path ?? path, before);
  f.new_image = image(neu, path, after);
  if (f.additions !== null && f.deletions !== null) {
    totals.additions += f.additions;
    totals.deletions += f.deletions;
  } else if (!f.binary) totals.uncounted_files++;
  if (f.binary) totals.binary_files++;
  if (f.truncated) totals.truncated_files++;
  return f;
}

/**
 * The line diff of two blobs: the one function every line count of the service comes from (the
 * diff routes' hunks and `additions`/`deletions`, and the patchset record's `lines_added`/
 * `lines_removed`, lib/domain/workflow/tree-diff.ts), so a patchset's counts and its diff never
 * disagree. `binary`: a NUL in either side's first 8,000 bytes (git's test); `not_utf8`: bytes
 * that are not UTF-8 (hunks are JSON strings: shown as binary, never re-encoded). Otherwise the
 * changed lines as git finds them (./line-diff.ts: the counts equal `git diff --numstat`), the
 * hunks with `context` lines, and the lines they add and remove (a last line without a newline
 * differs from the same line with one, as in git).
 */
export type LineDiff =
  | { kind: 'binary' }
  | { kind: 'not_utf8' }
  | { kind: 'text'; hunks: Hunk[]; additions: number; deletions: number; complete: boolean };

/**
 * How a whitespace mode sees a line's text (without its newline): git's whitespace is space, tab,
 * CR, VT and FF; the newline itself always counts (it is kept apart).
 */
export function normalizer(mode: WhitespaceMode): ((t: string) => string) | null {
  return mode === 'ignore-all' ? (t: string) => t.replace(/[ \t\r\v\f]+/g, '')
    : mode === 'ignore-change' ? (t: string) => t.replace(/[ \t\r\v\f]+$/, '').replace(/[ \t\r\v\f]+/g, ' ')
      : mode === 'ignore-eol' ? (t: string) => t.replace(/[ \t\r\v\f]+$/, '')
        : null;
}

/** A text's lines without their newlines, and whether the last one has none. */
function splitLines(text: string): { lines: string[]; noEol: boolean } {
  if (text === '') return { lines: [], noEol: false };
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') {
    lines.pop();
    return { lines, noEol: false };
  }
  return { lines, noEol: true };
}

const NO_EOL = '\\ No newline at end of file';

export function lineDiff(before: Buffer, after: Buffer, context: number, whitespace: WhitespaceMode = 'none'): LineDiff {
  if (before.subarray(0, 8000).includes(0) || after.subarray(0, 8000).includes(0)) return { kind: 'binary' };
  if (!isUtf8(before) || !isUtf8(after)) return { kind: 'not_utf8' };
  const a = splitLines(before.toString('utf8'));
  const b = splitLines(after.toString('utf8'));
  // Equal lines get one class number; a last line without its newline is another line than the
  // same text with one (a NUL cannot be in text: it marks the difference).
  const norm = normalizer(whitespace);
  const classes = new Map<string, number>();
  const classify = (side: { lines: string[]; noEol: boolean }) => Int32Array.from(side.lines, (l, i) => {
    const key = (norm ? norm(l) : l) + (side.noEol && i === side.lines.length - 1 ? '\0' : '');
    let c = classes.get(key);
    if (c === undefined) classes.set(key, (c = classes.size));
    return c;
  });
  const ca = classify(a);
  const cb = classify(b);
  const { removed, added, complete } = lineChanges(ca, cb, classes.size);
  const hunks = buildHunks(a, b, removed, added, context);
  let additions = 0;
  let deletions = 0;
  for (const x of removed) deletions += x;
  for (const x of added) additions += x;
  return { kind: 'text', hunks, additions, deletions, complete };
}

/**
 * The hunks of a line diff, as git writes them: each run of changes its removed lines then its
 * added ones, `context` lines around, runs closer than 2 × context joined in one hunk. Context
 * lines show the new side's text (they differ from the old only in ignored whitespace).
 */
function buildHunks(a: { lines: string[]; noEol: boolean }, b: { lines: string[]; noEol: boolean }, removed: Uint8Array, added: Uint8Array, context: number): Hunk[] {
  const n1 = a.lines.length;
  const n2 = b.lines.length;
  // The runs of changes: [old index, old count, new index, new count].
  const runs: Array<[number, number, number, number]> = [];
  for (let i = 0, j = 0; i < n1 || j < n2;) {
    if ((i < n1 && removed[i]) || (j < n2 && added[j])) {
      const i0 = i;
      const j0 = j;
      while (i < n1 && removed[i]) i++;
      while (j < n2 && added[j]) j++;
      runs.push([i0, i - i0, j0, j - j0]);
    } else {
      i++;
      j++;
    }
  }
  const hunks: Hunk[] = [];
  for (let r = 0; r < runs.length;) {
    let last = r;
    while (last + 1 < runs.length && runs[last + 1][0] - (runs[last][0] + runs[last][1]) <= 2 * context) last++;
    const first = runs[r];
    const end = runs[last];
    const lead = Math.min(context, first[0], first[2]);
    const s1 = first[0] - lead;
    const s2 = first[2] - lead;
    const e1 = Math.min(n1, end[0] + end[1] + context);
    const e2 = Math.min(n2, end[2] + end[3] + context);
    const lines: string[] = [];
    const oldLine = (i: number, p: string) => {
      lines.push(p + a.lines[i]);
      if (a.noEol && i === n1 - 1) lines.push(NO_EOL);
    };
    const newLine = (j: number, p: string) => {
      lines.push(p + b.lines[j]);
      if (b.noEol && j === n2 - 1) lines.push(NO_EOL);
    };
    let i = s1;
    let j = s2;
    for (let k = r; k <= last; k++) {
      const [ri, rn, rj, rm] = runs[k];
      for (; i < ri; i++, j++) newLine(j, ' ');
      for (; i < ri + rn; i++) oldLine(i, '-');
      for (; j < rj + rm; j++) newLine(j, '+');
    }
    for (; i < e1 && j < e2; i++, j++) newLine(j, ' ');
    const oldLines = e1 - s1;
    const newLines = e2 - s2;
    hunks.push({ old_start: oldLines === 0 ? s1 : s1 + 1, old_lines: oldLines, new_start: newLines === 0 ? s2 : s2 + 1, new_lines: newLines, lines });
    r = last + 1;
  }
  return hunks;
}
export function emptyTotals(): DiffTotals {
  return { files_changed: 0, additions: 0, deletions: 0, binary_files: 0, truncated_files: 0, uncounted_files: 0, bytes_read: 0, renames: 0, copies: 0, rename_limit: null };
}

/** A path as git writes it in headers: quoted C-style when it holds a quote, backslash, control or non-ASCII byte. */
export function gitPath(prefix: string, p: string): string {
  const raw = Buffer.from(prefix + p, 'utf8');
  if (!raw.some((b) => b < 0x20 || b >= 0x7f || b === 0x22 || b === 0x5c)) return prefix + p;
  const esc: Record<number, string> = { 0x07: '\\a', 0x08: '\\b', 0x09: '\\t', 0x0a: '\\n', 0x0b: '\\v', 0x0c: '\\f', 0x0d: '\\r', 0x22: '\\"', 0x5c: '\\\\' };
  let out = '"';
  for (const b of raw) out += esc[b] ?? (b < 0x20 || b >= 0x7f ? `\\${b.toString(8).padStart(3, '0')}` : String.fromCharCode(b));
  return `${out}"`;
}

/** One file in git's unified form (`diff --git` header, mode lines, rename or copy lines, `---`/`+++`, hunks). */
export function unifiedFile(f: FileDiff): string {
  const moved = f.change === 'renamed' || f.change === 'copied';
  const from = moved && f.old_path !== null ? f.old_path : f.path;
  const a = gitPath('a/', from);
  const b = gitPath('b/', f.path);
  const out = [`diff --git ${a} ${b}`];
  // A file whose content was left out says why on a comment line before its entry (git apply
  // skips text between entries); the entry itself is written as a binary one below.
  if (f.truncated) out.unshift(`# cairn: ${gitPath('', f.path)}: content left out (${f.truncated_reason}): ${f.note}; git apply refuses this entry`);
  if (f.change === 'added') out.push(`new file mode ${f.new_mode}`);
  else if (f.change === 'deleted') out.push(`deleted file mode ${f.old_mode}`);
  else if (f.old_mode !== f.new_mode) out.push(`old mode ${f.old_mode}`, `new mode ${f.new_mode}`);
  if (moved) {
    const verb = f.change === 'renamed' ? 'rename' : 'copy';
    out.push(`similarity index ${f.similarity}%`, `${verb} from ${gitPath('', from)}`, `${verb} to ${gitPath('', f.path)}`);
  }
  if (f.binary || f.truncated) {
    // As `git diff` without --binary: an abbreviated index line, then the "differ" line, with no
    // data. git apply refuses such an entry ("cannot apply binary patch ... without full index
    // line") and so the whole patch, as it refuses its own: a patch that leaves a file out never
    // applies to another tree. (A `GIT binary patch` line without data would not do: git apply
    // skips it and applies the rest.) Narrow with ?path= to apply the other files.
    const id = (x: string | null) => (x ? x.slice(0, 12) : '0'.repeat(12));
    out.push(`index ${id(f.old_blob_id)}..${id(f.new_blob_id)}${f.change !== 'added' && f.change !== 'deleted' && f.old_mode === f.new_mode ? ` ${f.new_mode}` : ''}`);
    out.push(`Binary files ${f.change === 'added' ? '/dev/null' : a} and ${f.change === 'deleted' ? '/dev/null' : b} differ`);
  } else if (f.hunks.length > 0) {
    out.push(`--- ${f.change === 'added' ? '/dev/null' : a}`, `+++ ${f.change === 'deleted' ? '/dev/null' : b}`);
    for (const h of f.hunks) {
      out.push(`@@ -${h.old_start}${h.old_lines === 1 ? '' : `,${h.old_lines}`} +${h.new_start}${h.new_lines === 1 ? '' : `,${h.new_lines}`} @@`);
      out.push(...h.lines);
    }
  }
  return `${out.join('\n')}\n`;
}
