// Tracked working copies: a directory materialized from a line, with `.cairn/config.json`
// recording the server, repository, line and base snapshot. Push from it uses the base as
// parent and compare-and-set guard; status compares the directory with the base; update
// brings it to the line head (three-way, per path) or refuses, changing nothing.
import { existsSync, lstatSync, mkdirSync, promises as fsp, readFileSync, readdirSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { refusedPath } from '../domain/content.js';
import { CairnClient } from './http.js';
import { METADATA_DIR } from './ignore-rules.js';
import { listSnapshot, pull } from './transfer.js';
import { RefusedNamesError, scanDirectory } from './worktree.js';
const CONFIG_FILE = 'config.json';
export function configPath(dir) {
    return path.join(dir, METADATA_DIR, CONFIG_FILE);
}
/** The working copy's configuration, or null when `dir` is a plain directory. */
export function readWorkingCopy(dir) {
    let text;
    try {
        text = readFileSync(configPath(dir), 'utf8');
    }
    catch (err) {
        if (err.code === 'ENOENT' || err.code === 'ENOTDIR')
            return null;
        throw err;
    }
    const parsed = JSON.parse(text);
    if (typeof parsed.server !== 'string' || typeof parsed.repo !== 'number' || typeof parsed.line !== 'string' || (parsed.base !== null && typeof parsed.base !== 'string')) {
        throw new Error(`${configPath(dir)} is damaged: expected server, repo, line and base`);
    }
    return parsed;
}
/** Find the working copy containing `start` (itself or an ancestor). */
export function findWorkingCopy(start) {
    let dir = path.resolve(start);
    for (;;) {
        const config = readWorkingCopy(dir);
        if (config)
            return { dir, config };
        const up = path.dirname(dir);
        if (up === dir)
            return null;
        dir = up;
    }
}
export async function writeWorkingCopy(dir, config) {
    await fsp.mkdir(path.join(dir, METADATA_DIR), { recursive: true });
    const file = configPath(dir);
    await fsp.writeFile(`${file}.tmp`, `${JSON.stringify(config, null, 2)}\n`);
    await fsp.rename(`${file}.tmp`, file);
}
/** Materialize the line's head into `dir` (absent or empty) and record it as the base. */
export async function checkout(o) {
    const client = new CairnClient(o.server);
    await client.requireRepository(o.repo);
    const line = await client.lineOrNull(o.repo, o.line);
    const head = line?.head_snapshot_id ?? null;
    let files = 0;
    let bytes = 0;
    if (head) {
        const pulled = await pull({ server: o.server, repo: o.repo, snapshot: head, out: o.dir, progress: o.progress, stallSeconds: o.stallSeconds });
        files = pulled.files;
        bytes = pulled.bytes;
    }
    else {
        mkdirSync(o.dir, { recursive: true });
        if (readdirSync(o.dir).length)
            throw new Error(`output directory ${o.dir} is not empty`);
    }
    await writeWorkingCopy(o.dir, { server: client.base, repo: o.repo, line: o.line, base: head });
    return { dir: o.dir, line: o.line, base: head, files, bytes };
}
async function baseListing(client, repo, id) {
    const files = new Map();
    const dirs = new Set();
    if (!id)
        return { files, dirs };
    const listing = await listSnapshot(client, repo, id);
    for (const f of listing.files)
        files.set(f.path, { kind: f.kind, id: f.blob_id });
    for (const d of listing.directories)
        if (d.path)
            dirs.add(d.path);
    return { files, dirs };
}
const same = (a, b) => (a === undefined ? b === undefined : b !== undefined && a.kind === b.kind && a.id === b.id);
function changes(from, to) {
    const added = [];
    const modified = [];
    const deleted = [];
    for (const [p, e] of to) {
        const before = from.get(p);
        if (!before)
            added.push(p);
        else if (!same(before, e))
            modified.push(p);
    }
    for (const p of from.keys())
        if (!to.has(p))
            deleted.push(p);
    return { added: added.sort(), modified: modified.sort(), deleted: deleted.sort() };
}
/** Added, modified and deleted paths of the working copy against its base. */
export async function status(dir) {
    const wc = findWorkingCopy(dir);
    if (!wc)
        throw new Error(`${dir} is not a cairn working copy (no ${METADATA_DIR}/${CONFIG_FILE}; create one with cairn checkout)`);
    const { config } = wc;
    const client = new CairnClient(config.server);
    const [base, line, local] = await Promise.all([
        baseListing(client, config.repo, config.base),
        client.lineOrNull(config.repo, config.line),
        scanDirectory(wc.dir),
    ]);
    const diff = changes(base.files, local.entries);
    const head = line?.head_snapshot_id ?? null;
    return {
        dir: wc.dir, server: config.server, repo: config.repo, line: config.line, base: config.base, line_head: head, behind: head !== config.base,
        ...diff, clean: diff.added.length + diff.modified.length + diff.deleted.length === 0,
    };
}
/** Same path changed on the line and locally, differently: update refuses and changes nothing. */
export class UpdateConflictError extends Error {
    paths;
    constructor(paths) {
        super(`update refused: ${paths.length} path(s) changed both on the line and locally: ${paths.slice(0, 20).join(', ')}${paths.length > 20 ? ', …' : ''}. Nothing was changed; move your versions aside, then update again.`);
        this.paths = paths;
    }
}
/**
 * Bring the working copy to the line's head and make it the new base. Per path (three-way
 * against the base): changed on the line only -> take the line's version; changed locally
 * only -> keep it; changed on both sides to different results -> refuse naming the paths,
 * changing nothing. The head's content comes from an exact pull into `.cairn/` first, so
 * nothing in the copy is touched until every check has passed.
 */
export async function update(dir, progress, stallSeconds) {
    const wc = findWorkingCopy(dir);
    if (!wc)
        throw new Error(`${dir} is not a cairn working copy (no ${METADATA_DIR}/${CONFIG_FILE}; create one with cairn checkout)`);
    const { config } = wc;
    const client = new CairnClient(config.server);
    await client.requireRepository(config.repo);
    const line = await client.lineOrNull(config.repo, config.line);
    if (!line)
        throw new Error(`line ${config.line} does not exist in repository ${config.repo} on ${config.server}`);
    const head = line.head_snapshot_id;
    const [base, theirs, local] = await Promise.all([
        baseListing(client, config.repo, config.base),
        baseListing(client, config.repo, head),
        scanDirectory(wc.dir),
    ]);
    // The listing names the paths update moves into the copy: each must be one a checkout may write.
    const refused = new Map();
    for (const p of [...theirs.files.keys(), ...theirs.dirs]) {
        const found = refusedPath(p);
        if (found)
            refused.set(found.path, found);
    }
    if (refused.size)
        throw new RefusedNamesError([...refused.values()].sort((a, b) => (a.path < b.path ? -1 : 1)), `snapshot ${head} holds ${refused.size} name(s) a checkout must not write; nothing was changed in ${wc.dir}`);
    const ours = local.entries;
    const result = { dir: wc.dir, line: config.line, base: head, previous_base: config.base, updated: [], deleted: [], kept_local: [], up_to_date: head === config.base };
    if (head === config.base)
        return result;
    const paths = new Set([...base.files.keys(), ...theirs.files.keys(), ...ours.keys()]);
    const take = [];
    const remove = [];
    const conflicts = [];
    const localDirs = new Set(local.directories);
    for (const p of [...paths].sort()) {
        const b = base.files.get(p);
        const t = theirs.files.get(p);
        const o = ours.get(p);
        const lineChanged = !same(b, t);
        const localChanged = !same(b, o);
        if (localChanged && !lineChanged)
            result.kept_local.push(p);
        if (!lineChanged)
            continue;
        if (localChanged) {
            if (!same(t, o))
                conflicts.push(p);
            continue;
        }
        if (t)
            take.push(p);
        else
            remove.push(p);
    }
    // A file the line adds where the copy has a directory (or under a path that is a local file).
    for (const p of take) {
        if (localDirs.has(p))
            conflicts.push(p);
        // An ignored (hence unscanned) local file where the line writes one is never overwritten.
        if (!ours.has(p) && existsSync(path.join(wc.dir, ...p.split('/'))))
            conflicts.push(p);
        const parts = p.split('/');
        for (let i = 1; i < parts.length; i++) {
            const prefix = parts.slice(0, i).join('/');
            if (ours.has(prefix) && !remove.includes(prefix))
                conflicts.push(p);
        }
    }
    if (conflicts.length)
        throw new UpdateConflictError([...new Set(conflicts)].sort());
    // Fetch the head exactly, next to the copy (same file system: renames are atomic moves).
    const staging = path.join(wc.dir, METADATA_DIR, `update-${process.pid}`);
    rmSync(staging, { recursive: true, force: true });
    try {
        if (head)
            await pull({ server: config.server, repo: config.repo, snapshot: head, out: staging, progress, stallSeconds });
        for (const p of remove) {
            rmSync(path.join(wc.dir, ...p.split('/')), { force: true });
            result.deleted.push(p);
        }
        for (const p of take) {
            const target = path.join(wc.dir, ...p.split('/'));
            mkdirSync(path.dirname(target), { recursive: true });
            rmSync(target, { force: true });
            renameSync(path.join(staging, ...p.split('/')), target);
            result.updated.push(p);
        }
        // Directories: create the line's new (possibly empty) ones; drop emptied ones it removed.
        for (const d of theirs.dirs)
            mkdirSync(path.join(wc.dir, ...d.split('/')), { recursive: true });
        for (const d of [...base.dirs].filter((x) => !theirs.dirs.has(x)).sort().reverse()) {
            const abs = path.join(wc.dir, ...d.split('/'));
            try {
                if (existsSync(abs) && lstatSync(abs).isDirectory() && readdirSync(abs).length === 0)
                    rmdirSync(abs);
            }
            catch { /* keep it */ }
        }
    }
    finally {
        rmSync(staging, { recursive: true, force: true });
    }
    await writeWorkingCopy(wc.dir, { ...config, base: head });
    return result;
}
//# sourceMappingURL=working-copy.js.map