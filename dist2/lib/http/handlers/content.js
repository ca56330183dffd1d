// Lines, snapshots and bulk remote sync (spec: "Lines and snapshots", "Bulk remote sync").
import { takePage, walkFrom } from '../../domain/paging.js';
import { pageFields, pageRequest } from './workflow-common.js';
import { array, integer, nullable, optional, string, type as looseObject, } from 'superstruct';
import { anyOf, arr, bool, constant, enumOf, hex64, nullable as orNull, obj, PAGE_FIELDS, ref, str, strArr, uint } from '../json-schema.js';
import { Invalid } from '../../domain/errors.js';
import { PACK_KIND_OBJECT, PACK_KIND_TREE } from '../../store/pack.js';
import { MEDIA_OBJECT_PACK, MEDIA_TREE_PACK, requireAuthority } from '../route-types.js';
import { validate } from '../validate.js';
import { cleanRelativePath } from '../../domain/paths.js';
import { exportSnapshot as streamExport } from '../export-stream.js';
export const COMMIT_CONTRACT = 'svc.remote_sync.zstd_bulk.commit.v1';
export const IMPORT_MANIFEST_CONTRACT = 'svc.remote_sync.zstd_bulk.import_manifest.v1';
export const PULL_REQUEST_CONTRACT = 'svc.remote_sync.zstd_bulk.pull_manifest.request.v1';
export const PULL_MANIFEST_CONTRACT = 'svc.remote_sync.zstd_bulk.pull_manifest.v1';
export const MAX_HAVE_IDS = 100_000;
// ---------------------------------------------------------------- lines
export const PutLineRequest = looseObject({
    head_snapshot_id: optional(nullable(string())),
    expected_head_snapshot_id: optional(nullable(string())),
});
export const CloseLineRequest = looseObject({ status: optional(string()) });
export const listLines = async (ctx) => {
    const req = pageRequest(ctx, 'lines', 'string');
    const { lines } = requireAuthority(ctx).content.linesListing();
    const page = takePage(req, walkFrom(lines.length, (i) => lines[i], (l) => l.name, req.after, 'asc'), 'asc');
    return { json: { lines: page.rows, ...pageFields(page) } };
};
export const getLine = async (ctx) => ({ json: requireAuthority(ctx).content.line(ctx.params.line_name) });
export const putLine = async (ctx) => {
    const req = validate(ctx.body, PutLineRequest);
    const move = {};
    if ('head_snapshot_id' in req)
        move.head_snapshot_id = req.head_snapshot_id ?? null;
    if ('expected_head_snapshot_id' in req)
        move.expected_head_snapshot_id = req.expected_head_snapshot_id ?? null;
    return { json: await requireAuthority(ctx).content.putLine(ctx.params.line_name, move) };
};
export const closeLine = async (ctx) => {
    const req = validate(ctx.body, CloseLineRequest);
    const line = await requireAuthority(ctx).content.closeLine(ctx.params.line_name, req.status ?? 'archived');
    return { json: { closed: true, line } };
};
// ---------------------------------------------------------------- snapshots
export const ExistsRequest = looseObject({ snapshot_ids: array(string()) });
export const snapshotsExist = async (ctx) => {
    const req = validate(ctx.body, ExistsRequest);
    return { json: { checked_snapshot_ids: req.snapshot_ids, ...requireAuthority(ctx).content.classify(req.snapshot_ids) } };
};
export { MAX_EXPORT_CONTENT } from '../export-stream.js';
function booleanQuery(value, name, fallback) {
    if (value === undefined)
        return fallback;
    if (Array.isArray(value))
        throw new Invalid(`${name} may be given once`);
    if (value === 'true' || value === '1')
        return true;
    if (value === 'false' || value === '0')
        return false;
    throw new Invalid(`${name} must be true or false`);
}
/** Streamed, file by file (../export-stream.ts); the bytes are those of the JSON object. */
export const exportSnapshot = async (ctx) => {
    const content = requireAuthority(ctx).content;
    const includeContent = booleanQuery(ctx.koa.query.include_content, 'include_content', true);
    const rawPath = ctx.koa.query.path;
    if (Array.isArray(rawPath))
        throw new Invalid('path may be given once');
    const narrowed = rawPath === undefined ? '' : cleanRelativePath(rawPath, 'path');
    const snapshot = content.snapshot(ctx.params.snapshot_id);
    const { length, write } = await streamExport({ content, snapshot, narrowed, includeContent, headOnly: ctx.koa.method === 'HEAD' });
    if (!write)
        return { mediaType: 'application/json', bytes: Buffer.alloc(0), length };
    return { mediaType: 'application/json', length, write };
};
// ---------------------------------------------------------------- bulk sync
const PackRef = anyOf([string(), looseObject({ pack_id: string() })]);
export const PlanRequest = looseObject({
    snapshot_ids: optional(nullable(array(string()))),
    object_packs: optional(nullable(array(PackRef))),
    tree_packs: optional(nullable(array(PackRef))),
});
const packIdOf = (p) => (typeof p === 'string' ? p : p.pack_id);
export const plan = async (ctx) => {
    const req = validate(ctx.body, PlanRequest);
    return {
        json: await requireAuthority(ctx).content.plan(req.snapshot_ids ?? [], (req.object_packs ?? []).map(packIdOf), (req.tree_packs ?? []).map(packIdOf)),
    };
};
function packUpload(kind) {
    return async (ctx) => {
        const declared = ctx.koa.get('content-length');
        const declaredLength = declared !== '' && /^\d+$/.test(declared) ? Number(declared) : null;
        const { info, state } = await requireAuthority(ctx).content.uploadPack(kind, ctx.params.pack_id, ctx.koa.req, ctx.limit, declaredLength);
        return {
            json: {
                pack_id: info.pack_id,
                pack_kind: kind === PACK_KIND_OBJECT ? 'object' : 'tree',
                media_type: kind === PACK_KIND_OBJECT ? MEDIA_OBJECT_PACK : MEDIA_TREE_PACK,
                byte_length: info.byte_length,
                object_count: info.object_count,
                sha256: info.pack_id,
                state,
                committed: state === 'committed',
            },
        };
    };
}
function packDownload(kind) {
    return async (ctx) => {
        const { stream, length } = await requireAuthority(ctx).content.openPack(kind, ctx.params.pack_id);
        return { mediaType: kind === PACK_KIND_OBJECT ? MEDIA_OBJECT_PACK : MEDIA_TREE_PACK, bytes: stream, length };
    };
}
export const putObjectPack = packUpload(PACK_KIND_OBJECT);
export const putTreePack = packUpload(PACK_KIND_TREE);
export const getObjectPack = packDownload(PACK_KIND_OBJECT);
export const getTreePack = packDownload(PACK_KIND_TREE);
const u64 = integer();
const LocatorFields = { pack_id: string(), offset: u64, length: u64, raw_length: u64, crc32: string() };
const PackRowStruct = anyOf([string(), looseObject({ pack_id: string(), byte_length: optional(u64), object_count: optional(u64) })]);
export const CommitBody = looseObject({
    contract: string(),
    object_packs: optional(nullable(array(PackRowStruct))),
    tree_packs: optional(nullable(array(PackRowStruct))),
    blob_locators: optional(nullable(array(looseObject({ blob_id: string(), ...LocatorFields })))),
    tree_locators: optional(nullable(array(looseObject({ tree_id: string(), ...LocatorFields })))),
    snapshots: optional(nullable(array(looseObject({
        snapshot_id: string(),
        root_tree_id: string(),
        parent_snapshot_ids: array(string()),
        created_at_s: u64,
        message: optional(nullable(string())),
    })))),
    line_update: optional(nullable(looseObject({
        line_name: string(),
        head_snapshot_id: optional(nullable(string())),
        expected_head_snapshot_id: optional(nullable(string())),
    }))),
});
const isRecord = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const isInteger = (v) => typeof v === 'number' && Number.isInteger(v);
const isString = (v) => typeof v === 'string';
const absentOr = (v, ok) => v === undefined || ok(v);
const nullOr = (v, ok) => v === undefined || v === null || ok(v);
const rowsOf = (v, ok) => nullOr(v, (rows) => Array.isArray(rows) && rows.every(ok));
const isLocatorRow = (r) => isString(r.pack_id) && isInteger(r.offset) && isInteger(r.length) && isInteger(r.raw_length) && isString(r.crc32);
/**
 * Whether `body` certainly passes CommitBody: the same rules in plain loops (superstruct costs
 * ~20 ms of CPU on a 5,000-file commit). A body it refuses goes through `validate`, which answers
 * with superstruct's exact error (or accepts what this was too strict for). Like superstruct's
 * `create` with these structs, which only copies, the body is then used as it is.
 */
export function isCommitBody(body) {
    if (!isRecord(body) || !isString(body.contract))
        return false;
    const packRow = (r) => isString(r) || (isRecord(r) && isString(r.pack_id) && absentOr(r.byte_length, isInteger) && absentOr(r.object_count, isInteger));
    return rowsOf(body.object_packs, packRow)
        && rowsOf(body.tree_packs, packRow)
        && rowsOf(body.blob_locators, (r) => isRecord(r) && isString(r.blob_id) && isLocatorRow(r))
        && rowsOf(body.tree_locators, (r) => isRecord(r) && isString(r.tree_id) && isLocatorRow(r))
        && rowsOf(body.snapshots, (r) => isRecord(r) && isString(r.snapshot_id) && isString(r.root_tree_id)
            && Array.isArray(r.parent_snapshot_ids) && r.parent_snapshot_ids.every(isString) && isInteger(r.created_at_s) && nullOr(r.message, isString))
        && nullOr(body.line_update, (u) => isRecord(u) && isString(u.line_name) && nullOr(u.head_snapshot_id, isString) && nullOr(u.expected_head_snapshot_id, isString));
}
/** The superstruct schema of a commit body (tests compare it with isCommitBody). */
export function validateCommitBody(body) {
    return validate(body, CommitBody);
}
function nonNegative(values, what) {
    for (const v of values)
        if (v < 0 || !Number.isSafeInteger(v))
            throw new Invalid(`${what} must be an unsigned integer`);
}
/** A checked commit body as the authority takes it (the sync commit and the git import share it). */
export function commitRequest(raw) {
    const body = isCommitBody(raw) ? raw : validateCommitBody(raw);
    if (body.contract !== COMMIT_CONTRACT)
        throw new Invalid(`contract must be ${COMMIT_CONTRACT}`);
    const packRows = (rows) => (rows ?? []).map((r) => (typeof r === 'string' ? { pack_id: r } : { pack_id: r.pack_id, byte_length: r.byte_length, object_count: r.object_count }));
    const req = {
        object_packs: packRows(body.object_packs),
        tree_packs: packRows(body.tree_packs),
        blob_locators: body.blob_locators ?? [],
        tree_locators: body.tree_locators ?? [],
        snapshots: (body.snapshots ?? []).map((s) => ({ ...s, message: s.message ?? null })),
        line_update: body.line_update ?? null,
    };
    for (const r of [...req.blob_locators, ...req.tree_locators])
        nonNegative([r.offset, r.length, r.raw_length], 'locator offset, length and raw_length');
    for (const r of [...req.object_packs, ...req.tree_packs])
        nonNegative([r.byte_length ?? 0, r.object_count ?? 0], 'pack byte_length and object_count');
    nonNegative(req.snapshots.map((s) => s.created_at_s), 'created_at_s');
    return req;
}
export const commit = async (ctx) => {
    const result = await requireAuthority(ctx).content.commit(commitRequest(ctx.body));
    return { json: { contract: COMMIT_CONTRACT, ...result, raw_binary_upload: true } };
};
export const importManifest = async (ctx) => {
    const manifest = await requireAuthority(ctx).content.importManifest(ctx.params.snapshot_id);
    return { json: { contract: IMPORT_MANIFEST_CONTRACT, repo_name: ctx.repository.repository_name, ...manifest } };
};
export const PullRequest = looseObject({ contract: string(), head_snapshot_id: string(), have_snapshot_ids: optional(nullable(array(string()))) });
export const pullManifest = async (ctx) => {
    const req = validate(ctx.body, PullRequest);
    if (req.contract !== PULL_REQUEST_CONTRACT)
        throw new Invalid(`contract must be ${PULL_REQUEST_CONTRACT}`);
    const haves = req.have_snapshot_ids ?? [];
    if (haves.length > MAX_HAVE_IDS)
        throw new Invalid(`have_snapshot_ids holds more than ${MAX_HAVE_IDS} entries`);
    if (new Set(haves).size !== haves.length)
        throw new Invalid('have_snapshot_ids must not contain duplicates');
    for (const id of haves)
        if (!/^[0-9a-f]{64}$/.test(id))
            throw new Invalid(`have_snapshot_ids entry ${JSON.stringify(id).slice(0, 80)} is not a snapshot id`);
    const manifest = await requireAuthority(ctx).content.pullManifest(req.head_snapshot_id, haves);
    return { json: { contract: PULL_MANIFEST_CONTRACT, repo_name: ctx.repository.repository_name, ...manifest } };
};
// ---------------------------------------------------------------- response schemas
const kindCounts = obj({ object_packs: uint, tree_packs: uint, blobs: uint, trees: uint, snapshots: uint });
const locatorFields = { pack_id: hex64, offset: uint, length: uint, raw_length: uint, crc32: { type: 'string', pattern: '^[0-9a-f]{8}$' } };
const manifestRows = {
    snapshots: arr(ref('SnapshotRow')),
    object_packs: arr(ref('PackRow')),
    tree_packs: arr(ref('PackRow')),
    blob_locators: arr(obj({ blob_id: hex64, ...locatorFields })),
    tree_locators: arr(obj({ tree_id: hex64, ...locatorFields })),
    line_update: constant(null),
};
export const SCHEMAS = {
    Line: obj({
        name: str,
        line_name: str,
        status: enumOf(['active', 'archived']),
        head_snapshot_id: orNull(hex64),
        updated_at_s: uint,
    }),
    LineList: obj({ lines: arr(ref('Line')), ...PAGE_FIELDS }),
    LineClose: obj({ closed: constant(true), line: ref('Line') }),
    SnapshotClassification: obj({
        checked_snapshot_ids: strArr,
        present_snapshot_ids: strArr,
        missing_snapshot_ids: strArr,
        invalid_snapshot_ids: { ...strArr, description: 'not 64-hex ids' },
    }, { description: 'each list in request order' }),
    SnapshotRow: obj({ snapshot_id: hex64, root_tree_id: hex64, parent_snapshot_ids: arr(hex64), created_at_s: uint, message: orNull(str) }),
    SnapshotExport: obj({
        snapshot: obj({ snapshot_id: hex64, root_tree_id: hex64, parent_snapshot_ids: arr(hex64), created_at_s: uint, message: orNull(str), snapshot_index: uint }),
        path: orNull(str),
        include_content: bool,
        file_count: uint,
        total_bytes: uint,
        directories: arr(obj({ path: str, tree_id: hex64 })),
        files: arr(obj({
            path: str,
            kind: enumOf(['file', 'executable', 'symlink']),
            blob_id: hex64,
            size: uint,
            encoding: constant('base64'),
            content: { type: 'string', contentEncoding: 'base64', description: 'the exact bytes (a symlink: its target)' },
        }, { optional: ['encoding', 'content'] })),
    }, { description: 'streamed; the bytes are those of JSON.stringify of this object' }),
    SyncPlan: obj({
        checked_snapshot_ids: strArr,
        present_snapshot_ids: strArr,
        missing_snapshot_ids: strArr,
        present_object_pack_ids: strArr,
        missing_object_pack_ids: strArr,
        present_tree_pack_ids: strArr,
        missing_tree_pack_ids: strArr,
    }, { description: 'each list in request order; staged (uploaded, uncommitted) packs count as present' }),
    PackUpload: obj({
        pack_id: hex64,
        pack_kind: enumOf(['object', 'tree']),
        media_type: enumOf([MEDIA_OBJECT_PACK, MEDIA_TREE_PACK]),
        byte_length: uint,
        object_count: uint,
        sha256: hex64,
        state: enumOf(['new', 'staged', 'committed']),
        committed: bool,
    }),
    PackRow: obj({ pack_id: hex64, byte_length: uint, object_count: uint }),
    SyncCommit: obj({
        contract: constant(COMMIT_CONTRACT),
        upserted: kindCounts,
        skipped: kindCounts,
        remote_line: orNull(ref('Line')),
        line_head_updated_after_ingest: bool,
        raw_binary_upload: constant(true),
    }),
    ImportManifest: obj({ contract: constant(IMPORT_MANIFEST_CONTRACT), repo_name: str, snapshot_id: hex64, ...manifestRows }),
    PullManifest: obj({
        contract: constant(PULL_MANIFEST_CONTRACT),
        repo_name: str,
        head_snapshot_id: hex64,
        boundary_snapshot_ids: arr(hex64),
        snapshot_id: hex64,
        ...manifestRows,
    }),
};
export const ExportQuery = {
    include_content: { schema: { enum: ['true', 'false', '1', '0'], default: 'true' }, description: 'base64 file content in the export (at most 256 MiB of it)' },
    path: { schema: str, description: 'a clean relative path: narrows the export to one file or a subtree' },
};
//# sourceMappingURL=content.js.map