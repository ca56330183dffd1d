// Diffs and land readiness (extension routes; docs/api.md "Diffs" and "Land readiness"). A diff
// is streamed file by file, as JSON or as git-style unified text (`Accept: text/x-diff` or
// `?format=unified`); nothing of it is held whole in memory.
import { Readable } from 'node:stream';
import { createHash, randomBytes } from 'node:crypto';
import { Invalid, NotFound } from '../../domain/errors.js';
import { DEFAULT_CONTEXT, FILE_CHANGE_KINDS, INLINE_DIFF_BYTES, INLINE_DIFF_LINES, MAX_CONTEXT, MAX_COUNT_FILE_BYTES, TRUNCATED_REASONS, WHITESPACE_MODES, unifiedFile, type FileDiff, type WhitespaceMode } from '../../domain/workflow/content-diff.js';
import { patchsetDiff, snapshotFile, type PatchsetDiff } from '../../authority/workflow/diffs.js';
import { MAX_DIFF_FILE_BYTES } from '../../domain/workflow/content-diff.js';
import { fileMediaType, MAX_LINES_READ, sliceLines } from '../../domain/workflow/media.js';
import { isUtf8 } from 'node:buffer';
import { requireAuthority, type Handler, type QueryParam, type RouteContext } from '../route-types.js';
import { arr, bool, constant, enumOf, hex64, nullable as orNull, obj, ref, str, strArr, uint, type Schemas } from '../json-schema.js';
import { CHANGE_STATUSES } from '../../domain/workflow/rules.js';
import { CONFLICT_KINDS } from '../../domain/workflow/merge.js';
import { READINESS_LISTED_CONFLICTS } from '../../authority/workflow/lands.js';

/** What `blocked_by` of a readiness answer names: the land's failure kinds it can foresee, and the states before them. */
export const READINESS_BLOCKERS = ['change_not_open', 'no_patchset', 'patchset_not_selected', 'blocked_by_change_below', 'land_not_allowed', 'blocked_by_policy', 'blocked_by_review', 'approvals_required', 'code_owners_required', 'blocked_by_ci', 'unresolved_threads', 'target_line_unavailable', 'stale_base', 'conflict', 'queue_required'];
import { identityOf, queryValue } from './workflow-common.js';
import { ownedPaths } from '../../domain/workflow/repo-rules.js';
import { approvalStates } from '../../domain/workflow/review-rules.js';

const MAX_PATHS = 100;

function diffQuery(ctx: RouteContext): { against: string | null; context: number; paths: string[]; unified: boolean; whitespace: WhitespaceMode; renames: boolean } {
  const context = queryValue(ctx, 'context');
  if (context !== undefined && (!/^(0|[1-9][0-9]{0,3})$/.test(context) || Number(context) > MAX_CONTEXT)) throw new Invalid(`context must be an integer from 0 to ${MAX_CONTEXT}`);
  const raw = ctx.koa.query.path;
  const paths = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  if (paths.length > MAX_PATHS) throw new Invalid(`at most ${MAX_PATHS} path parameters`);
  for (const p of paths) {
    if (p === '' || p.startsWith('/') || p.endsWith('/') || p.split('/').some((s) => s === '' || s === '.' || s === '..') || p.includes('\u0000')) throw new Invalid('path must be a relative path inside the tree (no empty, "." or ".." segments)');
  }
  const format = queryValue(ctx, 'format');
  if (format !== undefined && format !== 'json' && format !== 'unified') throw new Invalid('format must be json or unified');
  const accept = String(ctx.koa.get('accept') ?? '');
  const unified = format === 'unified' || (format === undefined && /\btext\/x-diff\b/.test(accept) && !/\bapplication\/json\b/.test(accept));
  const whitespace = queryValue(ctx, 'whitespace') ?? 'none';
  if (!(WHITESPACE_MODES as readonly string[]).includes(whitespace)) throw new Invalid(`whitespace must be one of ${WHITESPACE_MODES.join(', ')}`);
  const renames = queryValue(ctx, 'renames') ?? 'true';
  if (renames !== 'true' && renames !== 'false') throw new Invalid('renames must be true or false');
  return { against: queryValue(ctx, 'against') ?? null, context: context === undefined ? DEFAULT_CONTEXT : Number(context), paths, unified, whitespace: whitespace as WhitespaceMode, renames: renames === 'true' };
}

const filePath = (p: string) => p.split('/').map(encodeURIComponent).join('/');

/**
 * Where a file left out can be seen (paths from the server's root): its diff alone (the same
 * diff narrowed to it, old and new path for a rename or copy) and each side's bytes (the file
 * route). Null on a file whose hunks are all there.
 */
function fileLinks(repoBase: string, d: PatchsetDiff, f: FileDiff, q: { context: number; whitespace: WhitespaceMode; renames: boolean }): FileLinks | null {
  if (!f.truncated) return null;
  const p = new URLSearchParams();
  if (d.against) p.set('against', d.against);
  if (q.context !== DEFAULT_CONTEXT) p.set('context', String(q.context));
  if (q.whitespace !== 'none') p.set('whitespace', q.whitespace);
  if (!q.renames) p.set('renames', 'false');
  if (f.old_path && f.old_path !== f.path) p.append('path', f.old_path);
  p.append('path', f.path);
  return {
    diff: f.truncated_reason === 'file_size' ? null : `${repoBase}/read/patchsets/${encodeURIComponent(d.patchset_id)}/diff?${p}`,
    old_file: f.old_path === null ? null : `${repoBase}/read/snapshots/${d.base_snapshot_id}/files/${filePath(f.old_path)}`,
    new_file: f.new_blob_id === null ? null : `${repoBase}/read/snapshots/${d.revision_snapshot_id}/files/${filePath(f.path)}`,
  };
}

interface FileLinks { diff: string | null; old_file: string | null; new_file: string | null }

/**
 * Revalidation of a diff (a page loaded again reads the same immutable diff): each whole answer
 * carries an ETag, and a request naming it in If-None-Match gets 304 without the diff being
 * computed. A diff's content is fixed by its inputs (snapshot ids are content hashes, plus the
 * query), except where a budget cut it (the time budget depends on the machine's load): so the
 * tag is random per answer, and the server remembers it as one to confirm only once its answer
 * ended with nothing cut by a budget. A cut answer's tag is never confirmed (a revalidation of it
 * computes the diff again), nor one from before a restart. Bounded: the newest MAX_CONFIRMED tags.
 */
export const MAX_CONFIRMED_TAGS = 4096;
const confirmedTags = new Map<string, string>();

function confirmTag(tag: string, key: string): void {
  confirmedTags.delete(tag);
  confirmedTags.set(tag, key);
  if (confirmedTags.size > MAX_CONFIRMED_TAGS) confirmedTags.delete(confirmedTags.keys().next().value as string);
}

/** The ETags an If-None-Match header names (weak or strong: compared weakly, as RFC 9110 says for it). */
function namedTags(header: string | undefined): string[] {
  if (!header) return [];
  return header.split(',').map((t) => t.trim().replace(/^W\//, '')).filter(Boolean);
}

/** What fixes a diff answer's bytes: the snapshots compared (content hashes) and every query value. */
function diffKey(a: ReturnType<typeof requireAuthority>, patchsetId: string, q: ReturnType<typeof diffQuery>, repoBase: string): string {
  const ps = a.workflow.patchset(patchsetId);
  const other = q.against === null ? null : a.workflow.patchset(q.against);
  const inputs = [repoBase, ps.patchset_id, ps.change_id, ps.base_snapshot_id, ps.revision_snapshot_id, q.against, other?.change_id ?? null, other?.base_snapshot_id ?? null, other?.revision_snapshot_id ?? null, q.context, q.paths, q.unified, q.whitespace, q.renames];
  return createHash('sha256').update(JSON.stringify(inputs)).digest('hex');
}

/** Whether a request's budget cut the diff (the time budget is the machine's: another read may not be cut): its answer is not confirmed. */
const CUT_REASONS: ReadonlySet<string> = new Set(['byte_budget', 'time_budget']);

/** The files of a diff, passed on; `onEnd(cut)` once the last is read, `cut` when a budget left something out. */
export async function* watched(d: Pick<PatchsetDiff, 'files' | 'totals'>, onEnd: (cut: boolean) => void): AsyncGenerator<FileDiff> {
  let cut = false;
  for await (const f of d.files) {
    if (f.truncated_reason !== null && CUT_REASONS.has(f.truncated_reason)) cut = true;
    yield f;
  }
  onEnd(cut || (d.totals.rename_limit !== null && CUT_REASONS.has(d.totals.rename_limit)));
}

async function* jsonBody(d: PatchsetDiff, files: AsyncIterable<FileDiff>, q: { context: number; paths: string[]; whitespace: WhitespaceMode; renames: boolean }, repoBase: string): AsyncGenerator<string> {
  yield `{"patchset_id":${JSON.stringify(d.patchset_id)},"change_id":${JSON.stringify(d.change_id)},"base_snapshot_id":${JSON.stringify(d.base_snapshot_id)},"revision_snapshot_id":${JSON.stringify(d.revision_snapshot_id)},"against":${JSON.stringify(d.against)},"context":${q.context},"paths":${JSON.stringify(q.paths)},"whitespace":${JSON.stringify(q.whitespace)},"renames":${q.renames},"files":[`;
  let first = true;
  for await (const f of files) {
    yield `${first ? '' : ','}${JSON.stringify({ ...f, from_rebase: f.from_rebase ?? false, links: fileLinks(repoBase, d, f, q) })}`;
    first = false;
  }
  yield `],"stats":${JSON.stringify(d.totals)},"rebase":${JSON.stringify(d.rebase)},"moved_blocks":${JSON.stringify(d.moved_blocks)}}`;
}

async function* unifiedBody(files: AsyncIterable<FileDiff>): AsyncGenerator<string> {
  for await (const f of files) yield unifiedFile(f);
}

async function reply(ctx: RouteContext, patchsetId: string) {
  const q = diffQuery(ctx);
  const a = requireAuthority(ctx);
  // The repository's base path, as this request named it (links in the JSON are relative to the server).
  const at = ctx.koa.path.indexOf('/read/');
  const repoBase = at >= 0 ? ctx.koa.path.slice(0, at) : '';
  const mediaType = q.unified ? 'text/x-diff; charset=utf-8' : 'application/json; charset=utf-8';
  const key = diffKey(a, patchsetId, q, repoBase);
  // Private: the answer is read under the repository's access rules; no-cache: every use asks again (a 304 is cheap).
  const cache = { 'Cache-Control': 'private, no-cache', Vary: 'Accept' };
  const known = namedTags(ctx.koa.get('if-none-match')).find((t) => confirmedTags.get(t) === key);
  if (known) return { status: 304, mediaType, bytes: Buffer.alloc(0), headers: { ...cache, ETag: known } };
  const d = await patchsetDiff(a.store, a.workflow, patchsetId, q.against, { context: q.context, paths: q.paths, whitespace: q.whitespace, renames: q.renames, inlineCap: !q.unified });
  const tag = `"${key.slice(0, 16)}-${randomBytes(8).toString('hex')}"`;
  const files = watched(d, (cut) => { if (!cut) confirmTag(tag, key); });
  const headers = { ...cache, ETag: tag };
  return q.unified
    ? { mediaType, bytes: Readable.from(unifiedBody(files)), headers }
    : { mediaType, bytes: Readable.from(jsonBody(d, files, q, repoBase)), headers };
}

export const patchsetDiffHandler: Handler = async (ctx) => reply(ctx, ctx.params.patchset_id);

export const changeDiffHandler: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  const change = a.workflow.change(ctx.params.change_ref);
  if (!change.selected_patchset_id) throw new NotFound(`change ${change.change_id} has no patchset to diff`);
  return reply(ctx, change.selected_patchset_id);
};

/** Served content never runs or renders as a page of the service: no sniffing, no scripts, no origin. */
const CONTENT_HEADERS = { 'X-Content-Type-Options': 'nosniff', 'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox" };

/** A relative path inside a tree (no empty, "." or ".." segment, no NUL), or 400. */
function treePath(p: string, what: string): string {
  if (p === '' || p.startsWith('/') || p.endsWith('/') || p.split('/').some((s) => s === '' || s === '.' || s === '..') || p.includes('\u0000')) throw new Invalid(`${what} must be a relative path inside the tree (no empty, "." or ".." segments)`);
  return p;
}

/**
 * One file of a snapshot: its bytes with their media type (a symlink: its target as text), or with
 * `?lines=a-b` those lines of a text file as JSON (at most MAX_LINES_READ, a file of at most
 * MAX_DIFF_FILE_BYTES: what the diff shows, it can widen).
 */
export const snapshotFileHandler: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  const snapshotId = ctx.params.snapshot_id;
  if (!/^[0-9a-f]{64}$/.test(snapshotId)) throw new Invalid('snapshot_id must be 64 lowercase hex digits');
  const path = treePath(ctx.params.file_path, 'the file path');
  const range = queryValue(ctx, 'lines');
  if (range !== undefined) {
    const m = /^([1-9][0-9]{0,8})-([1-9][0-9]{0,8})$/.exec(range);
    if (!m) throw new Invalid('lines must be START-END, 1-based line numbers (e.g. 10-40)');
    const start = Number(m[1]);
    const end = Number(m[2]);
    if (end < start) throw new Invalid('lines: END must not be before START');
    if (end - start + 1 > MAX_LINES_READ) throw new Invalid(`lines: at most ${MAX_LINES_READ} lines in one read`);
    const f = await snapshotFile(a.store, snapshotId, path, MAX_DIFF_FILE_BYTES);
    if (f.data.subarray(0, 8000).includes(0) || !isUtf8(f.data)) throw new Invalid(`${path} is not UTF-8 text; read it without lines`);
    const s = sliceLines(f.data.toString('utf8'), start, end);
    return { json: { path, snapshot_id: snapshotId, kind: f.kind, start, end: s.end, total_lines: s.total, lines: s.lines } };
  }
  const f = await snapshotFile(a.store, snapshotId, path);
  const mediaType = f.kind === 'symlink' ? 'text/plain; charset=utf-8' : fileMediaType(path, f.data);
  return { mediaType, bytes: f.data, length: f.data.length, headers: { ...CONTENT_HEADERS, 'X-Cairn-Entry-Kind': f.kind } };
};

export const FileQuery: Record<string, QueryParam> = {
  lines: { schema: { type: 'string', pattern: '^[1-9][0-9]{0,8}-[1-9][0-9]{0,8}$' }, description: `START-END (1-based, inclusive; END clamped to the file): those lines as JSON, at most ${MAX_LINES_READ}, of a UTF-8 file of at most ${MAX_DIFF_FILE_BYTES} bytes (larger: 413)` },
};

/** The media types the file route answers with (besides the JSON of ?lines=). */
export const FILE_MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/svg+xml', 'text/plain', 'application/octet-stream'];

/** What a reviewer needs at a glance: can the selected patchset land now, and the evidence behind the answer. */
export const readinessHandler: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  // Judged for the caller: land_allowed names who may land.
  const r = await a.lands.readiness(ctx.params.change_ref, identityOf(ctx));
  const ps = r.patchset;
  const evidence = ps ? a.workflow.reviews.judgeForLand(ps) : null;
  const attestation = ps ? a.workflow.reviews.latestAttestation(ps.patchset_id) : null;
  const rules = a.rules.effective();
  const head = a.store.line(r.change.land_target_line)?.head_snapshot_id ?? null;
  const co = rules.require_code_owners && head !== null ? a.rules.codeOwnersRead(head) : null;
  const paths = ps ? a.rules.touchedOf(ps) : null;
  return {
    json: {
      change_id: r.change.change_id,
      change_ref: r.change.change_ref,
      change_status: r.change.status,
      selected_patchset_id: r.change.selected_patchset_id,
      current_patchset_id: r.change.current_patchset_id,
      base_stale: r.base_stale,
      can_land: r.can_land,
      blocked_by: r.blocked_by,
      reason: r.reason,
      unresolved_threads: a.workflow.comments.unresolvedCount(r.change.change_id),
      merge: r.merge,
      policy: evidence ? { decision: evidence.policy.decision, checks: evidence.policy.checks } : null,
      review: evidence?.review ?? null,
      ci: evidence?.ci ?? null,
      attestation,
      requirements: r.requirements,
      approvals: ps ? approvalStates(a.workflow.reviews.reviewsOf(r.change.change_id), a.workflow.reviews.selectedOf(ps)) : [],
      code_owners: co ? { path: co.path, problem_count: co.problem_count, problems: co.problems, owned_paths: paths ? ownedPaths(co, paths).slice(0, MAX_LISTED_OWNED) : [] } : null,
    },
  };
};

/** Owned paths a readiness answer lists at most. */
const MAX_LISTED_OWNED = 100;

export const DiffQuery: Record<string, QueryParam> = {
  against: { schema: str, description: 'a patchset of the same change: diff its revision → this revision instead of base → revision' },
  context: { schema: { type: 'string', pattern: '^[0-9]{1,4}$' }, description: 'lines of context, 0 to 1000 (default 3)' },
  path: { schema: strArr, description: 'repeatable: only these files, or directories and everything under them' },
  format: { schema: enumOf(['json', 'unified']), description: 'json (default) or unified text (also chosen by Accept: text/x-diff)' },
  whitespace: { schema: enumOf([...WHITESPACE_MODES]), description: "git's -w (ignore-all), -b (ignore-change) and --ignore-space-at-eol (ignore-eol): lines differing only so are context (shown with the revision's text); default none" },
  renames: { schema: enumOf(['true', 'false']), description: 'detect renames and copies (default true); false lists them as a delete and an add' },
};

const mode = orNull(enumOf(['100644', '100755', '120000']));
const image = {
  ...orNull(obj({
    media_type: enumOf(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/svg+xml']),
    bytes: uint,
    width: orNull(uint),
    height: orNull(uint),
  })),
  description: 'the side is an image: its type (PNG, JPEG, GIF, WebP from its first bytes; SVG by name), size, and dimensions from its header (null for SVG, or when the content was not read); null otherwise. Its bytes: GET {repo}/read/snapshots/{snapshot_id}/files/{path}',
};
const gitId = orNull(hex64);

export const SCHEMAS: Schemas = {
  FileDiff: obj({
    path: str,
    old_path: { ...orNull(str), description: 'the old side\'s path: the same path, or the source of a rename or copy; null when added' },
    change: enumOf([...FILE_CHANGE_KINDS]),
    similarity: { ...orNull({ type: 'integer', minimum: 0, maximum: 100 }), description: 'percent of content shared with old_path on a rename or copy (100: the same blob); null otherwise' },
    old_mode: mode,
    new_mode: mode,
    old_blob_id: gitId,
    new_blob_id: gitId,
    binary: bool,
    truncated: { ...bool, description: 'the hunks were left out; the unified form writes a binary entry without data, which git apply refuses' },
    truncated_reason: { ...orNull(enumOf([...TRUNCATED_REASONS])), description: `why the hunks were left out (null unless truncated): file_size (a side over 1 MiB), large_diff (over ${INLINE_DIFF_LINES} lines or ${INLINE_DIFF_BYTES / 1024} KiB of hunks, in a response that does not name the file with ?path=), byte_budget or time_budget (the request's budget spent); all but file_size go away when the file is asked for alone` },
    note: orNull(str),
    additions: { ...orNull(uint), description: `lines added, as git diff --numstat counts them; null when the content was not line-diffed (binary, a side over ${MAX_COUNT_FILE_BYTES / (1024 * 1024)} MiB, the request's budget spent)` },
    deletions: { ...orNull(uint), description: 'lines removed; null as additions' },
    diff_lines: { ...orNull(uint), description: 'lines in the hunks (sent or not); null when not computed' },
    diff_bytes: { ...orNull(uint), description: 'bytes of the hunks as unified text (sent or not); null when not computed' },
    links: {
      ...orNull(obj({
        diff: { ...orNull(str), description: 'this diff narrowed to the file (its old and new path), which sends its hunks; null for file_size' },
        old_file: { ...orNull(str), description: 'the old side\'s bytes (the file route); null when added' },
        new_file: { ...orNull(str), description: 'the new side\'s bytes; null when deleted' },
      })),
      description: 'on a file left out (truncated): paths from the server root to see it; null otherwise',
    },
    old_image: image,
    new_image: image,
    hunks: arr(obj({
      old_start: uint, old_lines: uint, new_start: uint, new_lines: uint,
      lines: { ...strArr, description: 'each prefixed " ", "-", "+" or "\\"' },
      spans: { ...arr(orNull(arr({ type: 'array', items: uint, minItems: 2, maxItems: 2 }))), description: 'parallel to lines: on a paired "-"/"+" line the changed ranges [start, end) in UTF-16 code units of the text after its prefix; null elsewhere and where the pair is too long or changed whole' },
      from_rebase: { ...bool, description: 'only when the response\'s `rebase` is not null: the hunk removes and adds exactly the lines a hunk of the base → base diff of this path does (the target line\'s change, brought by the rebase)' },
      moved_to: { ...orNull(arr(orNull(uint))), description: 'parallel to lines: on a removed line of a block moved elsewhere in the file (at least 3 lines and 20 letters or digits, as git --color-moved), the revision line it moved to; null on other lines, and null for a hunk with no such line' },
      moved_from: { ...orNull(arr(orNull(uint))), description: 'parallel to lines: on an added line of a moved block, the base line it came from; null otherwise, and null for a hunk with no such line' },
    }, { optional: ['from_rebase'] })),
    from_rebase: { ...bool, description: 'the whole change of this file came from the target line through a rebase: its sides are the two bases\' (same blobs and modes), or every hunk is from_rebase; always false unless the response\'s `rebase` is not null' },
  }),
  FileLines: obj({
    path: str,
    snapshot_id: hex64,
    kind: enumOf(['file', 'executable', 'symlink']),
    start: uint,
    end: { ...uint, description: 'the last line given: END clamped to total_lines (below start when start is past the end)' },
    total_lines: uint,
    lines: { ...strArr, description: 'without their newline' },
  }, { description: 'lines of one file of a snapshot (docs/api.md "Diffs and land readiness")' }),
  PatchsetDiff: obj({
    patchset_id: str,
    change_id: str,
    base_snapshot_id: { ...hex64, description: 'the old side: the patchset base, or the revision of `against`' },
    revision_snapshot_id: hex64,
    against: orNull(str),
    context: uint,
    paths: strArr,
    whitespace: enumOf([...WHITESPACE_MODES]),
    renames: { ...bool, description: 'whether renames and copies were looked for' },
    files: arr(ref('FileDiff')),
    rebase: {
      ...orNull(obj({
        old_base_snapshot_id: { ...hex64, description: 'the base of `against`' },
        new_base_snapshot_id: { ...hex64, description: 'the base of this patchset' },
        files: { ...uint, description: 'files marked from_rebase' },
        hunks: { ...uint, description: 'hunks marked from_rebase' },
      })),
      description: 'with ?against= naming a patchset on another base: the comparison is rebase-aware (files and hunks the target line brought are marked from_rebase); null otherwise. The unified text carries no marks',
    },
    moved_blocks: {
      ...arr(obj({
        from: { ...obj({ path: str, line: { ...uint, description: 'its first line on the base side' } }), description: 'the file the block was removed from' },
        to: { ...obj({ path: str, line: { ...uint, description: 'its first line on the revision side' } }), description: 'the file the block was added to' },
        lines: { ...uint, description: 'its length in lines' },
      })),
      description: 'blocks moved from one file to another (a run of removed lines that comes back, the same lines in the same order, as added lines of another file; the rule of moved_to / moved_from): listed after the files, as a block\'s two files are streamed apart. The unified text carries none',
    },
    stats: obj({
      files_changed: uint, additions: uint, deletions: uint, binary_files: uint, truncated_files: uint, uncounted_files: { ...uint, description: 'text files whose lines were not counted (null additions and deletions): additions and deletions sum the others' }, bytes_read: uint,
      renames: uint, copies: uint,
      rename_limit: { ...orNull(enumOf(['pairs', 'byte_budget', 'time_budget'])), description: 'the bound rename detection stopped at (unmatched files stay a delete and an add); null when it ran in full or was off' },
    }),
  }, { description: 'streamed file by file; see docs/api.md "Diffs and land readiness"' }),
  LandReadiness: obj({
    change_id: str,
    change_ref: str,
    change_status: enumOf(CHANGE_STATUSES),
    selected_patchset_id: orNull(str),
    current_patchset_id: orNull(str),
    base_stale: { ...bool, description: "the target line's head moved past the patchset base (it is neither the base nor an ancestor of the revision), judged on the line now; with can_land true the revision merges cleanly onto that head" },
    can_land: { ...bool, description: 'a merge land would land now: the gates pass and the revision merges onto the target head' },
    blocked_by: orNull(enumOf(READINESS_BLOCKERS)),
    reason: orNull(str),
    unresolved_threads: { ...uint, description: 'published comment threads of the change still unresolved; they block the land (`unresolved_threads`) when the repository sets policy_flags bit 1' },
    merge: {
      ...orNull(obj({
        mode: constant('merge'),
        target_line: str,
        head_snapshot_id: hex64,
        status: { ...enumOf(['clean', 'conflict', 'unchecked']), description: 'unchecked: the merge reads more than the readiness budget; the land decides' },
        conflicts: { ...arr(obj({ path: str, kind: enumOf(CONFLICT_KINDS) })), description: `sorted by path, at most ${READINESS_LISTED_CONFLICTS} listed` },
        conflicts_count: uint,
        note: orNull(str),
      })),
      description: "a dry run of the land's merge onto the target head (cached by head, base and revision); null when there is nothing to merge onto or nothing to land",
    },
    policy: orNull(obj({ decision: enumOf(['pass', 'fail']), checks: arr(ref('PolicyCheck')) })),
    review: orNull(obj({ approvals: uint, blocking: uint, comments: uint, total: uint })),
    ci: orNull(ref('PatchsetCi')),
    attestation: orNull(ref('AttestationRecord')),
    requirements: {
      ...arr(obj({
        kind: { ...enumOf(READINESS_BLOCKERS), description: 'the blocked_by kind the requirement refuses a land with' },
        rule: { ...str, description: 'the rule it comes from (required_approvals, require_code_owners, require_ci, require_resolved_threads, land_allowed), or policy / review for the gates every repository has' },
        satisfied: bool,
        message: { ...str, description: 'what is met, or what is missing and who can satisfy it' },
        who: { ...arr(str), description: 'who can satisfy it (code owners, land_allowed); absent when nobody in particular' },
      }, { optional: ['who'] })),
      description: 'each gate and repository rule the land judges, in its order (docs/api.md "Repository rules"); blocked_by is the first unsatisfied one, unless the line or the merge blocks first',
    },
    approvals: {
      ...arr(obj({ reviewer: str, review_id: str, patchset_id: str, state: enumOf(['live', 'carried', 'dismissed']), reason: str })),
      description: "each reviewer's latest approval: on this patchset (live), carried from an earlier one, or dismissed by a new patchset (dismiss_stale_approvals), and why",
    },
    code_owners: {
      ...orNull(obj({
        path: str,
        problem_count: uint,
        problems: { ...arr(obj({ line: uint, message: str })), description: 'the CODEOWNERS file\'s problems (line 0: the whole file), at most 50 listed; any blocks code_owners_required' },
        owned_paths: { ...arr(obj({ path: str, owners: arr(str) })), description: 'touched paths with owners (names without @), at most 100 listed' },
      })),
      description: "the target head's CODEOWNERS when require_code_owners is on and the head has one; null otherwise",
    },
  }, { description: 'from the land\'s own gate function, judged on the published evidence for the caller; writes nothing' }),
};

