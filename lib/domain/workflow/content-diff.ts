// What a patchset changes, line by line (docs/api.md "Diffs"): the changed files of two trees
// with their hunks, as JSON rows or as git-style unified text that `git apply` accepts. Work is
// bounded: only subtrees whose ids differ are read (as the tree diff walks), a file over
// MAX_DIFF_FILE_BYTES on either side is listed without hunks (`truncated`), and once a request
// has read DIFF_BUDGET_BYTES of blob content the remaining files are listed without hunks too.
// In the unified text such a file is an entry that git apply refuses, never a silent gap.
// Files are produced one at a time (an async generator), so a caller streams them and memory
// holds one file's content, whatever the number of files. Hunks come from jsdiff (`diff`).
import { isUtf8 } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { structuredPatch } from 'diff';
import { hunkSpans, type Span } from './word-diff.js';
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

export const MAX_DIFF_FILE_BYTES = 1024 * 1024;
export const DIFF_BUDGET_BYTES = 16 * 1024 * 1024;
export const MAX_CONTEXT = 1000;
export const DEFAULT_CONTEXT = 3;
/** A line diff that needs more edits than this is not computed (the file is `truncated`). */
export const MAX_EDIT_LENGTH = 4000;
/**
 * Myers' work grows with (lines of both sides) × (edits): a file's edit cap is this divided by
 * its line count (at least 16, at most MAX_EDIT_LENGTH), so one file costs tens of milliseconds
 * at most, however large and however scattered its changes.
 */
export const EDIT_WORK_PER_FILE = 4_000_000;
/** Once a request has spent this long computing line diffs, later files are listed without hunks. */
export const DIFF_TIME_BUDGET_MS = 2000;

export interface Hunk {
  old_start: number;
  old_lines: number;
  new_start: number;
  new_lines: number;
  /** Each line prefixed " " (context), "-" (removed), "+" (added), or "\" (no newline at end of file). */
  lines: string[];
  /** Parallel to `lines`: the changed ranges within a paired "-"/"+" line (./word-diff.ts), else null. */
  spans?: Array<Span[] | null>;
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
  /** The content was left out (no hunks): `truncated_reason` says why, `note` in words. */
  truncated: boolean;
  truncated_reason: TruncatedReason | null;
  /** Why hunks are missing or cut, when they are. */
  note: string | null;
  additions: number;
  deletions: number;
  hunks: Hunk[];
  /** Each side's image facts (./media.ts) when it is a PNG, JPEG, GIF, WebP or SVG; else null. */
  old_image: ImageInfo | null;
  new_image: ImageInfo | null;
}

/**
 * Why a file's content was left out: a side over MAX_DIFF_FILE_BYTES (`file_size`), the request's
 * DIFF_BUDGET_BYTES spent (`byte_budget`) or DIFF_TIME_BUDGET_MS (`time_budget`), or a line diff
 * needing more edits than its cap (`edit_limit`). The last three go away when the file is asked
 * for alone (`?path=`).
 */
export const TRUNCATED_REASONS = ['file_size', 'byte_budget', 'time_budget', 'edit_limit'] as const;
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
}

export const FILE_CHANGE_KINDS = ['added', 'modified', 'deleted', 'renamed', 'copied'] as const;
export type FileChangeKind = (typeof FILE_CHANGE_KINDS)[number];

export interface DiffTotals {
  files_changed: number;
  additions: number;
  deletions: number;
  binary_files: number;
  truncated_files: number;
  /** Blob bytes read for hunks (at most DIFF_BUDGET_BYTES plus one file). */
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

/**
 * The changed blobs of `oldTree` → `newTree` in path order (byte order per directory), as pairs
 * of entries. `budget` counts the entries visited (it throws past its limit) and paces the walk.
 */
export async function* changedEntries(reader: ContentReader, oldTree: string, newTree: string, paths: string[] = [], budget: WalkBudget = new WalkBudget(Infinity, () => new Invalid('unreachable'))): AsyncGenerator<{ path: string; old: TreeEntry | null; new: TreeEntry | null }> {
  async function* oneSide(prefix: string, e: TreeEntry, side: 'old' | 'new'): AsyncGenerator<{ path: string; old: TreeEntry | null; new: TreeEntry | null }> {
    // Every entry visited counts, files or not: a walk through directories alone yields too.
    if (budget.take()) await budget.pause();
    const p = prefix + e.name;
    if (!isBlob(e.kind)) {
      if (!wanted(paths, p, true)) return;
      for (const child of await reader.readTree(e.id)) yield* oneSide(`${p}/`, child, side);
      return;
    }
    if (!wanted(paths, p, false)) return;
    yield side === 'old' ? { path: p, old: e, new: null } : { path: p, old: null, new: e };
  }
  async function* walk(prefix: string, oldId: string, newId: string): AsyncGenerator<{ path: string; old: TreeEntry | null; new: TreeEntry | null }> {
    if (oldId === newId) return;
    const [olds, news] = await Promise.all([reader.readTree(oldId), reader.readTree(newId)]);
    const oldBy = new Map(olds.map((e) => [e.name, e]));
    const newBy = new Map(news.map((e) => [e.name, e]));
    const names = [...new Set([...oldBy.keys(), ...newBy.keys()])].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    for (const name of names) {
      const o = oldBy.get(name) ?? null;
      const n = newBy.get(name) ?? null;
      const p = prefix + name;
      if (budget.take()) await budget.pause();
      if (o && n && o.id === n.id && o.kind === n.kind) continue;
      if (o && n && !isBlob(o.kind) && !isBlob(n.kind)) {
        if (wanted(paths, p, true)) yield* walk(`${p}/`, o.id, n.id);
      } else if (o && n && isBlob(o.kind) && isBlob(n.kind)) {
        if (wanted(paths, p, false)) yield { path: p, old: o, new: n };
      } else {
        if (o) yield* oneSide(prefix, o, 'old');
        if (n) yield* oneSide(prefix, n, 'new');
      }
    }
  }
  yield* walk('', oldTree, newTree);
}

/**
 * The file diffs of `oldTree` → `newTree`, one at a time, within the request's budget; the
 * totals are filled in as the files are produced (read them once the generator is done).
 */
/** `walk` bounds the entries visited (see changedEntries). */
export async function* diffFiles(reader: ContentReader, oldTree: string, newTree: string, opts: DiffOptions, totals: DiffTotals, walk?: WalkBudget): AsyncGenerator<FileDiff> {
  const budget = { bytes: DIFF_BUDGET_BYTES, ms: DIFF_TIME_BUDGET_MS };
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

async function* entryDiffs(reader: ContentReader, e: { path: string; old: TreeEntry | null; new: TreeEntry | null }, match: Match | null, opts: DiffOptions, totals: DiffTotals, budget: { bytes: number; ms: number }): AsyncGenerator<FileDiff> {
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

async function fileDiff(reader: ContentReader, path: string, old: TreeEntry | null, neu: TreeEntry | null, opts: DiffOptions, totals: DiffTotals, budget: { bytes: number; ms: number }, match: Match | null = null): Promise<FileDiff> {
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
    if (oldSize > MAX_DIFF_FILE_BYTES || newSize > MAX_DIFF_FILE_BYTES) {
      omit('file_size', `a side is over ${MAX_DIFF_FILE_BYTES} bytes (${Math.max(oldSize, newSize)}); fetch the blobs to compare them`);
    } else if (oldSize + newSize > budget.bytes) {
      omit('byte_budget', `this diff has read its ${DIFF_BUDGET_BYTES} bytes of content; ask for this file with ?path=`);
      budget.bytes = 0;
    } else if (budget.ms <= 0) {
      omit('time_budget', `this diff has used its ${DIFF_TIME_BUDGET_MS} ms of line-diff time; ask for this file with ?path=`);
    } else {
      budget.bytes -= oldSize + newSize;
      totals.bytes_read += oldSize + newSize;
      before = old ? await reader.readBlob(old.id) : Buffer.alloc(0);
      after = neu ? await reader.readBlob(neu.id) : Buffer.alloc(0);
      const t0 = performance.now();
      const d = lineDiff(before, after, opts.context, opts.whitespace ?? 'none');
      budget.ms -= performance.now() - t0;
      if (d.kind === 'binary') {
        f.binary = true;
      } else if (d.kind === 'not_utf8') {
        f.binary = true;
        f.note = 'not UTF-8 text';
      } else if (d.kind === 'edit_limit') {
        omit('edit_limit', `the line diff needs more than ${d.max_edit_length} edits for ${d.lines} lines; fetch the blobs to compare them`);
      } else {
        // Word highlights are part of the line-diff work: their time counts against the same budget.
        const t1 = performance.now();
        f.hunks = d.hunks.map((h) => ({ ...h, spans: hunkSpans(h.lines) }));
        budget.ms -= performance.now() - t1;
        f.additions = d.additions;
        f.deletions = d.deletions;
      }
    }
  }
  // Images: from the content read for the diff; content the diff had no reason to read (the same
  // blob on both sides: an exact rename, a mode change) is read when named as an image and within
  // the size and byte budget; otherwise (too large, over the budget) the facts come by name.
  if (old && neu && old.id === neu.id && imageInfo(path, 0, null) && reader.blobSize(neu.id) <= MAX_DIFF_FILE_BYTES && reader.blobSize(neu.id) <= budget.bytes) {
    budget.bytes -= reader.blobSize(neu.id);
    totals.bytes_read += reader.blobSize(neu.id);
    before = after = await reader.readBlob(neu.id);
  }
  const image = (e: TreeEntry | null, p: string, data: Buffer | null) => (e && e.kind !== 'symlink' ? imageInfo(p, reader.blobSize(e.id), data) : null);
  f.old_image = image(old, f.old_path ?? path, before);
  f.new_image = image(neu, path, after);
  totals.additions += f.additions;
  totals.deletions += f.deletions;
  if (f.binary) totals.binary_files++;
  if (f.truncated) totals.truncated_files++;
  return f;
}

/**
 * The line diff of two blobs: the one function every line count of the service comes from (the
 * diff routes' hunks and `additions`/`deletions`, and the patchset record's `lines_added`/
 * `lines_removed`, lib/domain/workflow/tree-diff.ts), so a patchset's counts and its diff never
 * disagree. `binary`: a NUL in either side's first 8,000 bytes (git's test); `not_utf8`: bytes
 * that are not UTF-8 (hunks are JSON strings: shown as binary, never re-encoded); `edit_limit`:
 * the diff needs more edits than the file's cap (EDIT_WORK_PER_FILE divided by its lines).
 * Otherwise jsdiff's hunks with `context` lines, and the lines they add and remove (a last line
 * without a newline differs from the same line with one, as in git).
 */
export type LineDiff =
  | { kind: 'binary' }
  | { kind: 'not_utf8' }
  | { kind: 'edit_limit'; max_edit_length: number; lines: number }
  | { kind: 'text'; hunks: Hunk[]; additions: number; deletions: number };

/**
 * How a whitespace mode compares two lines (jsdiff hands each line with its newline): git's
 * whitespace is space, tab, CR, VT and FF; the newline itself always counts.
 */
function comparator(mode: WhitespaceMode): ((a: string, b: string) => boolean) | undefined {
  const split = (l: string): [string, string] => (l.endsWith('\n') ? [l.slice(0, -1), '\n'] : [l, '']);
  const norm = mode === 'ignore-all' ? (t: string) => t.replace(/[ \t\r\v\f]+/g, '')
    : mode === 'ignore-change' ? (t: string) => t.replace(/[ \t\r\v\f]+$/, '').replace(/[ \t\r\v\f]+/g, ' ')
      : mode === 'ignore-eol' ? (t: string) => t.replace(/[ \t\r\v\f]+$/, '')
        : null;
  if (!norm) return undefined;
  return (a, b) => {
    if (a === b) return true;
    const [ta, na] = split(a);
    const [tb, nb] = split(b);
    return na === nb && norm(ta) === norm(tb);
  };
}

export function lineDiff(before: Buffer, after: Buffer, context: number, whitespace: WhitespaceMode = 'none'): LineDiff {
  if (before.subarray(0, 8000).includes(0) || after.subarray(0, 8000).includes(0)) return { kind: 'binary' };
  if (!isUtf8(before) || !isUtf8(after)) return { kind: 'not_utf8' };
  const lines = countLines(before) + countLines(after);
  const maxEditLength = Math.max(16, Math.min(MAX_EDIT_LENGTH, Math.floor(EDIT_WORK_PER_FILE / Math.max(1, lines))));
  // jsdiff's line diff takes a comparator (its typings for structuredPatch leave it out).
  const cmp: object = whitespace === 'none' ? {} : { comparator: comparator(whitespace) };
  const patch = structuredPatch('', '', before.toString('utf8'), after.toString('utf8'), '', '', { context, maxEditLength, ...cmp });
  if (!patch) return { kind: 'edit_limit', max_edit_length: maxEditLength, lines };
  const hunks = patch.hunks.map((h) => ({ old_start: h.oldLines === 0 ? h.oldStart - 1 : h.oldStart, old_lines: h.oldLines, new_start: h.newLines === 0 ? h.newStart - 1 : h.newStart, new_lines: h.newLines, lines: h.lines }));
  let additions = 0;
  let deletions = 0;
  for (const h of hunks) for (const l of h.lines) {
    if (l[0] === '+') additions++;
    else if (l[0] === '-') deletions++;
  }
  return { kind: 'text', hunks, additions, deletions };
}

function countLines(b: Buffer): number {
  let n = 0;
  for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) n++;
  return n + 1;
}

export function emptyTotals(): DiffTotals {
  return { files_changed: 0, additions: 0, deletions: 0, binary_files: 0, truncated_files: 0, bytes_read: 0, renames: 0, copies: 0, rename_limit: null };
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
