// The reviewer UI's asset table: every browser file under a content-hashed URL
// (`/ui/assets/<dir>/<name>.<hash>.<ext>`), served with a year-long immutable cache. The files
// are read by the caller (lib/cli/ui-files.ts: the HTTP layer touches no file system) and handed
// over as {name, bytes}; nothing here reads a disk.
//
// The browser code is plain ES modules importing each other by relative path
// (`import { api } from './api.js'`). A hashed URL must change when anything it imports changes,
// so relative import specifiers in our own modules are rewritten to the imported module's hashed
// URL, dependencies first, and each module is hashed after its rewrite (what a bundler's manifest
// does, without a build step). Vendor files (under `vendor/`) are served byte for byte.
import { createHash } from 'node:crypto';
import path from 'node:path';
export const ASSET_PREFIX = '/ui/assets/';
const CONTENT_TYPES = {
    '.js': 'text/javascript; charset=utf-8',
    '.css': 'text/css; charset=utf-8',
    '.svg': 'image/svg+xml',
    '.png': 'image/png',
    '.woff2': 'font/woff2',
};
/** `from './x.js'`, `import './x.js'` and `import('./x.js')` with a relative specifier. */
const IMPORT_SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"\n]+)\2/g;
const STATIC_IMPORT = /^\s*(?:import|export)\b[^'"]*?\bfrom\s*(['"])(\.{1,2}\/[^'"\n]+)\1|^\s*import\s*(['"])(\.{1,2}\/[^'"\n]+)\3/gm;
const isVendor = (name) => name.startsWith('vendor/');
function contentType(name) {
    const type = CONTENT_TYPES[path.posix.extname(name)];
    if (!type)
        throw new Error(`ui asset ${name}: no content type for its extension`);
    return type;
}
function resolveSpecifier(from, specifier, known) {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
    if (!known.has(target))
        throw new Error(`ui asset ${from} imports ${specifier}, which is not a UI file`);
    return target;
}
export function buildAssetTable(sources) {
    const byName = new Map();
    for (const s of sources) {
        if (byName.has(s.name))
            throw new Error(`ui asset ${s.name} given twice`);
        byName.set(s.name, s);
    }
    const built = new Map();
    const building = new Set();
    const build = (name) => {
        const done = built.get(name);
        if (done)
            return done;
        if (building.has(name))
            throw new Error(`ui asset ${name} is part of an import cycle`);
        building.add(name);
        const source = byName.get(name);
        let bytes = source.bytes;
        const staticImports = [];
        if (name.endsWith('.js') && !isVendor(name)) {
            const text = source.bytes.toString('utf8');
            for (const m of text.matchAll(STATIC_IMPORT))
                staticImports.push(resolveSpecifier(name, m[2] ?? m[4], byName));
            const rewritten = text.replace(IMPORT_SPECIFIER, (_all, lead, quote, specifier) => `${lead}${quote}${build(resolveSpecifier(name, specifier, byName)).url}${quote}`);
            bytes = Buffer.from(rewritten, 'utf8');
        }
        const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
        const ext = path.posix.extname(name);
        const asset = { name, url: `${ASSET_PREFIX}${name.slice(0, -ext.length)}.${hash}${ext}`, bytes, contentType: contentType(name), staticImports };
        building.delete(name);
        built.set(name, asset);
        return asset;
    };
    for (const name of byName.keys())
        build(name);
    const byUrl = new Map();
    for (const a of built.values())
        byUrl.set(a.url, a);
    return {
        byUrl,
        url(name) {
            const a = built.get(name);
            if (!a)
                throw new Error(`no ui asset named ${name}`);
            return a.url;
        },
        staticClosure(name) {
            const seen = new Set();
            const walk = (n) => {
                for (const d of built.get(n)?.staticImports ?? []) {
                    if (seen.has(d))
                        continue;
                    seen.add(d);
                    walk(d);
                }
            };
            walk(name);
            return [...seen];
        },
    };
}
//# sourceMappingURL=assets.js.map