// Retirement, export and restore (spec: "Repository registry, CI, retirement, restore").
import { array, integer, object, string } from 'superstruct';
import { RETIREMENT_CONTRACT } from '../../authority/retirement.js';
import { RESTORE_CONTRACT } from '../../authority/restore.js';
import { EXPORT_SCHEMA } from '../../domain/export-manifest.js';
import { MEDIA_AUTHORITY_FILE } from '../route-types.js';
import { validate } from '../validate.js';
import { identityOf, requireIdentified } from './workflow-common.js';
import { repositoryProjection } from './registry.js';
import { bool, constant, hex64, nullable, obj, ref, str, arr, uint } from '../json-schema.js';
/** The manifest shape; value rules (schema, state, names, paths) are checked in the domain (400). */
export const ManifestStruct = object({
    schema: string(),
    state: string(),
    repo_name: string(),
    namespace: string(),
    exported_at_s: integer(),
    files: array(object({ path: string(), size: integer(), sha256: string() })),
});
function statusJson(status) {
    return {
        contract: RETIREMENT_CONTRACT,
        repository: repositoryProjection(status.repository),
        drain: status.drain,
        ready_for_export: status.ready_for_export,
        manifest: status.manifest,
    };
}
const index = (params) => Number(params.repository_index);
/** An admin action, in the audit feed (with an auth mode; docs/api.md "The audit feed"). */
async function audited(ctx, action, fields) {
    await ctx.access?.book.audit(identityOf(ctx), action, fields);
}
export const retirementStatus = async (ctx) => ({ json: statusJson(await ctx.service.retirement.status(index(ctx.params))) });
export const startRetirement = async (ctx) => {
    requireIdentified(ctx, 'starting a retirement');
    const status = await ctx.service.retirement.start(index(ctx.params));
    await audited(ctx, 'retirement.started', { repository_index: index(ctx.params) });
    return { json: statusJson(status) };
};
export const abortRetirement = async (ctx) => {
    requireIdentified(ctx, 'aborting a retirement');
    const r = await ctx.service.retirement.abort(index(ctx.params));
    if (r.aborted && !r.already_aborted)
        await audited(ctx, 'retirement.aborted', { repository_index: index(ctx.params) });
    return { json: { contract: RETIREMENT_CONTRACT, aborted: r.aborted, already_aborted: r.already_aborted, repository: repositoryProjection(r.repository) } };
};
export const retirementFile = async (ctx) => {
    const { stream, length } = await ctx.service.retirement.openExportedFile(index(ctx.params), ctx.params.file_path);
    return { mediaType: MEDIA_AUTHORITY_FILE, bytes: stream, length };
};
export const purge = async (ctx) => {
    requireIdentified(ctx, 'purging a repository');
    const manifest = validate(ctx.body, ManifestStruct);
    const r = await ctx.service.retirement.purge(index(ctx.params), manifest);
    if (r.purged && !r.already_purged) {
        await audited(ctx, 'repository.purged', { repository_index: index(ctx.params) });
        // A purged index is never used again: its grants go with it.
        await ctx.access?.book.clearAccess(identityOf(ctx), index(ctx.params));
    }
    return { json: { contract: RETIREMENT_CONTRACT, purged: r.purged, already_purged: r.already_purged, repository: repositoryProjection(r.repository) } };
};
/** Exactly `manifest` and `policy_flags`: unknown fields are rejected (422). */
export const RestoreStart = object({ manifest: ManifestStruct, policy_flags: integer() });
export const startRestore = async (ctx) => {
    const req = validate(ctx.body, RestoreStart);
    const token = await ctx.service.restores.start(req.manifest, req.policy_flags);
    return { status: 201, json: { contract: RESTORE_CONTRACT, restore_token: token, state: 'uploading', files_expected: req.manifest.files.length } };
};
export const uploadRestoreFile = async (ctx) => {
    // Not destroyed when a check stops the upload early: the answer goes first (app.ts).
    const body = ctx.koa.req.iterator({ destroyOnReturn: false });
    const ack = await ctx.service.restores.upload(ctx.params.restore_token, ctx.params.file_path, body, ctx.limit);
    return { json: { contract: RESTORE_CONTRACT, staged: true, ...ack, state: 'uploading' } };
};
export const commitRestore = async (ctx) => {
    const result = await ctx.service.restores.commit(ctx.params.restore_token);
    const restored = result.repository?.repository_index;
    await audited(ctx, 'repository.restored', { repository_index: restored ?? null });
    return { json: result };
};
export const SCHEMAS = {
    ExportManifest: obj({
        schema: constant(EXPORT_SCHEMA),
        state: constant('complete'),
        repo_name: str,
        namespace: str,
        exported_at_s: uint,
        files: arr(obj({ path: str, size: uint, sha256: hex64 })),
    }),
    RetirementStatus: obj({
        contract: constant(RETIREMENT_CONTRACT),
        repository: ref('Repository'),
        drain: obj({ queued_worker_jobs: uint, running_worker_jobs: uint }),
        ready_for_export: bool,
        manifest: { ...nullable(ref('ExportManifest')), description: 'non-null only while retiring with both drain counts zero' },
    }),
    RetirementPurge: obj({ contract: constant(RETIREMENT_CONTRACT), purged: constant(true), already_purged: bool, repository: ref('Repository') }),
    RetirementAbort: obj({ contract: constant(RETIREMENT_CONTRACT), aborted: bool, already_aborted: bool, repository: ref('Repository') }),
    RestoreSession: obj({
        contract: constant(RESTORE_CONTRACT),
        restore_token: { type: 'string', pattern: '^[0-9a-f]{32}$', description: 'the session capability: shown only here' },
        state: constant('uploading'),
        files_expected: uint,
    }),
    RestoreUpload: obj({ contract: constant(RESTORE_CONTRACT), staged: constant(true), path: str, size: uint, sha256: hex64, remaining: uint, state: constant('uploading') }),
    RestoreCommit: obj({
        contract: constant(RESTORE_CONTRACT),
        repository_index: uint,
        repository: ref('Repository'),
        restored_from: obj({ repo_name: str, namespace: str, exported_at_s: uint }),
        files: uint,
    }),
};
//# sourceMappingURL=lifecycle.js.map