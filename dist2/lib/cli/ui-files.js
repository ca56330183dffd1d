// Reads the reviewer UI's browser files once per process: our own plain .js/.css files under
// lib/http/ui/static/ (found from the package root, so `npm ci && npm start` on a fresh clone
// serves them: tsc compiles only .ts and does not copy them to dist/) and three vendor ES
// modules from node_modules. The HTTP layer builds its hashed asset table from these bytes
// (lib/http/ui/assets.ts); it reads no files itself.
import { existsSync, promises as fsp, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
/** dist/lib/cli/ui-files.js → the package root (three levels up). */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const UI_STATIC_DIR = path.join(PACKAGE_ROOT, 'lib/http/ui/static');
/** Served name, npm package, file inside the package. Each is one self-contained ES module. */
const VENDOR = [
    // preact, its hooks and htm in one module: no build step and no import map (which CSP would
    // need an inline script for).
    ['vendor/preact.js', 'htm', 'preact/standalone.module.js'],
    // Markdown lexer only: the page renders its tokens itself (lib/http/ui/static/markdown.js).
    ['vendor/marked.js', 'marked', 'lib/marked.esm.js'],
    // highlight.js with its common languages, prebuilt as one ES module; loaded on first diff.
    ['vendor/highlight.js', '@highlightjs/cdn-assets', 'es/highlight.min.js'],
];
const require = createRequire(import.meta.url);
/** The directory of an installed package, wherever npm placed it. */
function packageDir(name) {
    let entry;
    try {
        entry = require.resolve(`${name}/package.json`);
    }
    catch {
        entry = require.resolve(name);
    }
    for (let dir = path.dirname(entry); dir !== path.dirname(dir); dir = path.dirname(dir)) {
        const manifest = path.join(dir, 'package.json');
        if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === name)
            return dir;
    }
    throw new Error(`cannot find the directory of package ${name}`);
}
async function walk(dir, rel = '') {
    const out = [];
    for (const e of (await fsp.readdir(path.join(dir, rel), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
        const r = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory())
            out.push(...(await walk(dir, r)));
        else if (e.isFile())
            out.push({ name: r, bytes: await fsp.readFile(path.join(dir, r)) });
    }
    return out;
}
let loaded = null;
/** Every UI file, read once per process (the files are part of the installed package). */
export function loadUiSources() {
    loaded ??= (async () => {
        const own = await walk(UI_STATIC_DIR).catch((err) => {
            throw new Error(`cannot read the UI files in ${UI_STATIC_DIR}: ${err.message} (start with --no-ui to serve the API alone)`);
        });
        const vendor = await Promise.all(VENDOR.map(async ([name, pkg, file]) => {
            try {
                return { name, bytes: await fsp.readFile(path.join(packageDir(pkg), file)) };
            }
            catch (err) {
                throw new Error(`cannot read ${pkg}/${file} for the UI: ${err.message} (run npm ci, or start with --no-ui)`);
            }
        }));
        return [...own, ...vendor];
    })();
    loaded.catch(() => { loaded = null; });
    return loaded;
}
//# sourceMappingURL=ui-files.js.map