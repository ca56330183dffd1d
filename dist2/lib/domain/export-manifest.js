// The export manifest (spec: "Retirement status", restore manifest rules): validation and the
// comparison purge uses. Pure functions.
import { Invalid } from './errors.js';
import { cleanRelativePath } from './paths.js';
import { requireWellFormed } from './text.js';
import { validateNamespace, validateRepositoryName } from './repository.js';
export const EXPORT_SCHEMA = 'svc.remote-export.v1';
/** Check every rule a restore (or purge) applies to a manifest that already has the right shape. */
export function validateManifest(m) {
    if (m.schema !== EXPORT_SCHEMA)
        throw new Invalid(`manifest.schema must be ${EXPORT_SCHEMA}`);
    if (m.state !== 'complete')
        throw new Invalid('manifest.state must be complete');
    validateRepositoryName(m.repo_name);
    validateNamespace(m.namespace);
    if (!Number.isSafeInteger(m.exported_at_s) || m.exported_at_s < 0)
        throw new Invalid('manifest.exported_at_s must be unsigned Unix seconds');
    if (m.files.length === 0)
        throw new Invalid('manifest.files must not be empty');
    const seen = new Set();
    for (const f of m.files) {
        // A lone surrogate has no UTF-8 form: such a file could never be uploaded (nor stored).
        requireWellFormed(f.path, 'manifest file path');
        const clean = cleanRelativePath(f.path, 'manifest file path');
        if (clean !== f.path)
            throw new Invalid(`manifest file path ${JSON.stringify(f.path)} is not in canonical form`);
        if (seen.has(f.path))
            throw new Invalid(`manifest lists ${f.path} twice`);
        seen.add(f.path);
        if (!Number.isSafeInteger(f.size) || f.size < 0)
            throw new Invalid(`manifest size of ${f.path} must be an unsigned integer`);
        if (!/^[0-9a-f]{64}$/.test(f.sha256))
            throw new Invalid(`manifest sha256 of ${f.path} must be 64 lowercase hex characters`);
        if (f.path.split('/').some((part) => Buffer.byteLength(part, 'utf8') > 255))
            throw new Invalid(`manifest path ${f.path.slice(0, 80)} has a segment longer than 255 bytes`);
    }
    // A file cannot also be a directory of another listed file.
    for (const p of seen) {
        const parts = p.split('/');
        for (let i = 1; i < parts.length; i++) {
            const prefix = parts.slice(0, i).join('/');
            if (seen.has(prefix))
                throw new Invalid(`manifest lists ${prefix} both as a file and as a directory of ${p}`);
        }
    }
    if (!seen.has('authority.bin'))
        throw new Invalid('manifest does not list authority.bin');
}
/** Canonical form used to compare manifests: fields in fixed order, files sorted by path. */
export function canonicalManifest(m) {
    const files = [...m.files].map((f) => ({ path: f.path, size: f.size, sha256: f.sha256 })).sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
    return JSON.stringify({ schema: m.schema, state: m.state, repo_name: m.repo_name, namespace: m.namespace, exported_at_s: m.exported_at_s, files });
}
//# sourceMappingURL=export-manifest.js.map