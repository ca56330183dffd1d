export const MEDIA_OBJECT_PACK = 'application/vnd.svc.remote-sync.object-pack+zstd';
export const MEDIA_TREE_PACK = 'application/vnd.svc.remote-sync.tree-pack+zstd';
export const MEDIA_AUTHORITY_FILE = 'application/vnd.svc.remote-authority-file.v1';
/** 2 MiB for standard routes, 2 GiB for the routes the spec's Limits table raises. */
export const STANDARD_LIMIT = 2 * 1024 * 1024;
export const RAISED_LIMIT = 2 * 1024 * 1024 * 1024;
export function requireAuthority(ctx) {
    if (!ctx.repository)
        throw new Error(`route has no repository context`);
    return ctx.service.authority(ctx.repository.repository_index);
}
//# sourceMappingURL=route-types.js.map