// The API reference renderer's files, read from the installed swagger-ui-dist package (the
// server serves them itself: no CDN). The HTTP layer reads no files; `cairn serve` gives it this
// source (lib/http/handlers/docs.ts says which files the page loads).
import { promises as fsp } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
/** Files of swagger-ui-dist by name, each read once and then kept (about 2 MB in all). */
export function swaggerUiAssets() {
    let dir;
    const kept = new Map();
    const packageDir = () => {
        if (dir === undefined) {
            try {
                // Resolve a small file of the package: requiring the package itself would load its 1.7 MB bundle.
                dir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/absolute-path.js'));
            }
            catch {
                dir = null;
            }
        }
        return dir;
    };
    return {
        read(file) {
            const base = packageDir();
            if (base === null || file !== path.basename(file))
                return Promise.resolve(null);
            let bytes = kept.get(file);
            if (!bytes) {
                bytes = fsp.readFile(path.join(base, file)).catch(() => null);
                kept.set(file, bytes);
            }
            return bytes;
        },
    };
}
//# sourceMappingURL=docs-assets.js.map