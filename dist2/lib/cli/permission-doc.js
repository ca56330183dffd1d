// `npm run -s docs:permissions`: rewrite docs/api.md's per-route permission table from the route
// table (lib/http/permission-doc.ts renders it; the HTTP layer touches no files).
//
//   node dist/lib/cli/permission-doc.js [FILE]   rewrite the table in FILE (default docs/api.md)
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withPermissionTable } from '../http/permission-doc.js';
/** The repository root, from dist/lib/cli/ (compiled) — the same three levels up from lib/cli/. */
export const API_DOC_PATH = fileURLToPath(new URL('../../../docs/api.md', import.meta.url));
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
    const target = process.argv[2] ?? API_DOC_PATH;
    try {
        writeFileSync(target, withPermissionTable(readFileSync(target, 'utf8')));
        process.stdout.write(`wrote the permission table in ${target}\n`);
    }
    catch (err) {
        process.stderr.write(`permission-doc: ${err.message}\n`);
        process.exitCode = 1;
    }
}
//# sourceMappingURL=permission-doc.js.map