// Repository-relative paths received from callers (snapshot export `path`, plan `artifact_path`).
import { Invalid } from './errors.js';
/** A clean repository-relative path: no empty, "." or ".." segments, no leading "/", no "\\" or NUL. */
export function cleanRelativePath(value, name) {
    if (value === '' || value.startsWith('/') || value.includes('\\') || value.includes('\u0000'))
        throw new Invalid(`${name} must be a clean relative path`);
    const trimmed = value.endsWith('/') ? value.slice(0, -1) : value;
    for (const part of trimmed.split('/')) {
        if (part === '' || part === '.' || part === '..')
            throw new Invalid(`${name} must be a clean relative path`);
    }
    return trimmed;
}
//# sourceMappingURL=paths.js.map