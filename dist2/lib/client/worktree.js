// Working trees on the client: scan a directory into blobs and canonical trees (push), and
// write a snapshot's tree back out byte for byte (pull). Empty directories are kept: they are
// directory entries pointing at the empty tree.
//
// Both directions use synchronous file calls in short bursts: for thousands of small files a
// readFileSync/writeFileSync costs a fraction of the four thread-pool hops of the async calls.
// The loops yield to the event loop regularly so uploads and downloads keep streaming.
import { createHash } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { closeSync, lstatSync, mkdirSync, openSync, readSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { describeRefusedNames, encodeTree, refusedEntryName, sha256Hex } from '../domain/content.js';
import { alwaysPruned, IGNORE_FILE, loadIgnoreRules } from './ignore-rules.js';
/** Files larger than this are read and hashed in chunks; `onBlob` then gets a reader instead. */
const WHOLE_FILE_LIMIT = 256 * 1024 * 1024;
/** Yield to the event loop after this many bytes of synchronous work. */
const YIELD_EVERY = 8 * 1024 * 1024;
function hashLargeFile(file) {
    const hash = createHash('sha256');
    const fd = openSync(file, 'r');
    try {
        const buf = Buffer.allocUnsafe(4 * 1024 * 1024);
        for (;;) {
            const n = readSync(fd, buf, 0, buf.length, null);
            if (n === 0)
                break;
            hash.update(buf.subarray(0, n));
        }
    }
    finally {
        closeSync(fd);
    }
    return hash.digest('hex');
}
// Files are read into one reused buffer: a fresh buffer per file costs a page fault per 4 KiB
// and garbage to collect (on the benchmark tree, most of the scan's time went there).
let readScratch = Buffer.allocUnsafe(1024 * 1024);
/**
 * A file's bytes as a view of `into` (when it has room for one byte more than `size`) or of the
 * scratch buffer, valid until the next call.
 */
function readWhole(file, size, into) {
    let target = into;
    if (!target || target.length < size + 1) {
        if (readScratch.length < size + 1)
            readScratch = Buffer.allocUnsafe(Math.max(size + 1, readScratch.length * 2));
        target = readScratch;
    }
    const fd = openSync(file, 'r');
    try {
        let done = 0;
        for (;;) {
            // One byte more than lstat said: a file that grew since is read whole instead.
            const n = readSync(fd, target, done, size + 1 - done, null);
            if (n === 0)
                return target.subarray(0, done);
            done += n;
            if (done > size)
                return readFileSync(file);
        }
    }
    finally {
        closeSync(fd);
    }
}
/** A name that is not UTF-8, readable: ASCII as it is, every other byte as \xNN. */
function showBytes(name) {
    let out = '';
    for (const b of name)
        out += b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`;
    return out;
}
/**
 * Every path below `dir` (symlinks not followed, `.git` and the top `.cairn` neither listed nor
 * entered), sorted. Names are taken as the bytes the file system holds: a newline, a tab, a CR
 * or a quote is part of a name like any other character (a glob matcher would drop some of
 * them). A name that does not decode as UTF-8 is set apart in `notUtf8` (a push refuses it).
 * Synchronous readdir: for thousands of small directories it is much faster than the
 * asynchronous one (no thread-pool hop per directory). A push lists the tree while its first
 * requests are in flight.
 */
export async function listTree(dir) {
    let st;
    try {
        st = lstatSync(dir);
    }
    catch {
        throw new Error(`${dir} does not exist`);
    }
    if (!st.isDirectory())
        throw new Error(`${dir} is not a directory`);
    const paths = [];
    const notUtf8 = [];
    const walk = (abs, prefix) => {
        let entries;
        try {
            entries = readdirSync(abs, { withFileTypes: true });
        }
        catch (err) {
            const code = err.code;
            if (code === 'ENOENT' || code === 'ENOTDIR')
                return; // vanished meanwhile
            throw err;
        }
        // A replacement character may stand for bytes that are not UTF-8: read this directory's names as bytes.
        if (entries.some((e) => e.name.includes('\uFFFD'))) {
            const raw = readdirSync(abs, { withFileTypes: true, encoding: 'buffer' });
            entries = [];
            for (const e of raw) {
                if (isUtf8(e.name))
                    entries.push(Object.assign(e, { name: e.name.toString('utf8') }));
                else
                    notUtf8.push(prefix + showBytes(e.name));
            }
        }
        for (const e of entries) {
            if (alwaysPruned(e.name, prefix === ''))
                continue;
            const rel = prefix + e.name;
            paths.push(rel);
            if (e.isDirectory())
                walk(path.join(abs, e.name), `${rel}/`);
        }
    };
    walk(dir, '');
    return { paths: paths.sort(), notUtf8: notUtf8.sort() };
}
/**
 * Names the client refuses: a push's (names a snapshot cannot hold; nothing read or sent) or a
 * pull's (names a checkout must not write; nothing written). Each path is named with its rule.
 */
export class RefusedNamesError extends Error {
    refused;
    constructor(refused, message) {
        super(`${message}: ${describeRefusedNames(refused)}`);
        this.refused = refused;
    }
}
const RULE_NOT_UTF8 = 'is not valid UTF-8 (tree entry names are UTF-8)';
/**
 * The listed paths a tree may not hold (domain/content.ts refusedEntryName, and names that are
 * not UTF-8), unless the ignore rules leave them out. A refused directory is named once, not
 * every path below it.
 */
function refusedNames(dir, listed, ignored) {
    const isIgnored = (rel, isDirectory) => {
        const parts = rel.split('/');
        for (let i = 1; i < parts.length; i++)
            if (ignored(parts.slice(0, i).join('/'), true))
                return true;
        return ignored(rel, isDirectory);
    };
    const refused = [];
    const refusedDirs = [];
    for (const rel of listed.paths) {
        const slash = rel.lastIndexOf('/');
        const rule = refusedEntryName(rel.slice(slash + 1), slash < 0);
        if (!rule || refusedDirs.some((d) => rel.startsWith(d)))
            continue;
        let isDirectory = false;
        try {
            isDirectory = lstatSync(path.join(dir, rel)).isDirectory();
        }
        catch { /* vanished: judged as a file */ }
        if (isIgnored(rel, isDirectory))
            continue;
        refused.push({ path: rel, rule });
        if (isDirectory)
            refusedDirs.push(`${rel}/`);
    }
    for (const rel of listed.notUtf8) {
        if (!refusedDirs.some((d) => rel.startsWith(d)) && !isIgnored(rel, false))
            refused.push({ path: rel, rule: RULE_NOT_UTF8 });
    }
    return refused;
}
/**
 * Walk `dir` (listTree lists it, symlinks not followed), hash every file and build every tree.
 * A name the tree may not hold (see refusedNames) refuses the whole scan before any file is read.
 * `onBlob(id, bytes)` is called once per distinct blob with its content, in walk order, so the
 * caller can pack what the server lacks in the same pass (each file is read once). The buffer
 * `bytes()` returns is valid only until `onBlob` settles: copy what is kept.
 */
export async function scanDirectory(dir, onBlob = () => { }, options = {}) {
    const listed = options.listed ?? (await listTree(dir));
    const paths = listed.paths;
    const ignored = options.ignore ?? loadIgnoreRules(dir);
    // Before any file is read (a push uploads as it reads): every name the tree could not hold.
    const refused = refusedNames(dir, listed, ignored);
    if (refused.length)
        throw new RefusedNamesError(refused, `${dir}: ${refused.length} path(s) cannot be stored in a snapshot (rename them, or leave them out with ${IGNORE_FILE}); nothing was sent`);
    const root = { entries: new Map() };
    const blobs = new Set();
    const skipped = [];
    const entries = new Map();
    const directories = [];
    const ignoredDirs = [];
    let fileCount = 0;
    let byteCount = 0;
    const nodeFor = (rel) => {
        let node = root;
        if (rel === '' || rel === '.')
            return node;
        for (const part of rel.split('/')) {
            let child = node.entries.get(part);
            if (!child) {
                child = { kind: 'directory', dir: { entries: new Map() } };
                node.entries.set(part, child);
            }
            node = child.dir;
        }
        return node;
    };
    // One lstat per path: the total for the progress bar and the walk share it.
    const stats = new Map();
    if (options.onTotal) {
        let total = 0;
        for (const rel of paths) {
            let s = null;
            try {
                s = lstatSync(path.join(dir, rel));
                if (s.isFile())
                    total += s.size;
            }
            catch { /* vanished: the walk below reports it */ }
            stats.set(rel, s);
        }
        options.onTotal(total);
    }
    let sinceYield = 0;
    for (const rel of paths) {
        // Below an ignored directory: not even stat'ed (it may vanish meanwhile without harm).
        if (ignoredDirs.length && ignoredDirs.some((d) => rel.startsWith(d)))
            continue;
        const abs = path.join(dir, rel);
        const st = stats.get(rel) ?? lstatSync(abs);
        if (st.isDirectory()) {
            if (ignored(rel, true)) {
                ignoredDirs.push(`${rel}/`);
                continue;
            }
            nodeFor(rel);
            directories.push(rel);
            continue;
        }
        if (ignored(rel, false))
            continue;
        let kind;
        let id;
        let size;
        let read;
        if (st.isSymbolicLink()) {
            const target = readlinkSync(abs, { encoding: 'buffer' });
            kind = 'symlink';
            id = sha256Hex(target);
            size = target.length;
            read = () => target;
        }
        else if (st.isFile()) {
            kind = st.mode & 0o111 ? 'executable' : 'file';
            size = st.size;
            if (size <= WHOLE_FILE_LIMIT) {
                const bytes = readWhole(abs, size, options.readTarget?.() ?? null);
                id = sha256Hex(bytes);
                read = () => bytes;
            }
            else {
                id = hashLargeFile(abs);
                read = () => readFileSync(abs);
            }
        }
        else {
            skipped.push(rel);
            continue;
        }
        const first = !blobs.has(id);
        if (first) {
            blobs.add(id);
            await onBlob(id, read);
        }
        options.onFile?.(size, id, first);
        fileCount++;
        byteCount += size;
        entries.set(rel, { kind, id });
        nodeFor(path.posix.dirname(rel)).entries.set(path.posix.basename(rel), { kind, id });
        sinceYield += size + 4096;
        if (sinceYield >= YIELD_EVERY) {
            sinceYield = 0;
            await yieldToLoop();
        }
    }
    const trees = new Map();
    const build = (node) => {
        const entries = [];
        for (const [name, child] of node.entries) {
            entries.push({ name, kind: child.kind, id: child.kind === 'directory' ? build(child.dir) : child.id });
        }
        const encoded = encodeTree(entries);
        const id = sha256Hex(encoded);
        trees.set(id, encoded);
        return id;
    };
    const rootTreeId = build(root);
    return { rootTreeId, trees, blobs, fileCount, byteCount, skipped, entries, directories };
}
/** Create `dir` (which must be empty or absent) and every directory below it; returns `dir`. */
export function prepareOutput(dir, dirs) {
    mkdirSync(dir, { recursive: true });
    if (readdirSync(dir).length > 0)
        throw new Error(`output directory ${dir} is not empty`);
    for (const d of dirs)
        mkdirSync(path.join(dir, ...d.split('/')));
    return dir;
}
export { writeEntry } from './write-entry.js';
//# sourceMappingURL=worktree.js.map