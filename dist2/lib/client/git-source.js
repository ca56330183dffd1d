// Reading a local git repository through Debian's `git` binary (docs/git.md): the first-parent
// commit list, one long-lived `cat-file --batch` for objects, and one `diff-tree --stdin` for the
// changed paths of each commit, so a commit costs only what it changed. Every stream is read
// as bytes (paths and messages need not be UTF-8) and parsed as it arrives: memory holds one
// object or one commit's changes at a time, never the history.
import { spawn, spawnSync } from 'node:child_process';
/** The git binary is missing, or the directory is not a git repository: said in the user's words. */
export class GitUnavailable extends Error {
}
/** `git` on PATH (or CAIRN_GIT), its version; throws GitUnavailable with the fix. */
export function gitBinary() {
    const bin = process.env.CAIRN_GIT || 'git';
    const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
    if (r.error || r.status !== 0)
        throw new GitUnavailable(`this command needs git, and ${bin} could not be run (${r.error?.message ?? r.stderr.trim()}): install git (Debian: apt-get install git) or set CAIRN_GIT`);
    return bin;
}
/** Run git to completion; stdout as bytes. Throws with git's own message. */
export function gitRun(bin, dir, args) {
    const r = spawnSync(bin, ['-C', dir, ...args], { maxBuffer: 1024 * 1024 * 1024 });
    if (r.error)
        throw new GitUnavailable(`git ${args[0]}: ${r.error.message}`);
    if (r.status !== 0)
        throw new GitUnavailable(`git ${args.join(' ')} failed: ${r.stderr.toString('utf8').trim() || `exit ${r.status}`}`);
    return r.stdout;
}
/** A byte stream read on demand: lines and exact byte counts, whatever the chunking. */
class ByteReader {
    chunks = [];
    length = 0;
    ended = false;
    failure = null;
    wake = null;
    constructor(stream) {
        stream.on('data', (c) => {
            this.chunks.push(c);
            this.length += c.length;
            this.poke();
        });
        stream.on('end', () => { this.ended = true; this.poke(); });
        stream.on('error', (err) => { this.failure = err; this.poke(); });
    }
    fail(err) {
        this.failure ??= err;
        this.poke();
    }
    poke() {
        const w = this.wake;
        this.wake = null;
        w?.();
    }
    async more() {
        if (this.failure)
            throw this.failure;
        if (this.ended)
            return false;
        await new Promise((resolve) => { this.wake = resolve; });
        if (this.failure)
            throw this.failure;
        return true;
    }
    flat() {
        if (this.chunks.length > 1)
            this.chunks = [Buffer.concat(this.chunks, this.length)];
        return this.chunks[0] ?? Buffer.alloc(0);
    }
    take(n) {
        const all = this.flat();
        const out = all.subarray(0, n);
        const rest = all.subarray(n);
        this.chunks = rest.length ? [rest] : [];
        this.length = rest.length;
        return out;
    }
    /** Bytes up to (not including) `delimiter`, which is consumed; null at the end of the stream. */
    async until(delimiter) {
        let searched = 0;
        for (;;) {
            if (this.length > searched) {
                const all = this.flat();
                const at = all.indexOf(delimiter, searched);
                if (at >= 0) {
                    const out = Buffer.from(this.take(at + 1).subarray(0, at));
                    return out;
                }
                searched = all.length;
            }
            if (!(await this.more())) {
                if (this.length)
                    throw new GitUnavailable('git output ended in the middle of a record');
                return null;
            }
        }
    }
    async exactly(n) {
        while (this.length < n) {
            if (!(await this.more()))
                throw new GitUnavailable('git output ended in the middle of an object');
        }
        return Buffer.from(this.take(n));
    }
}
function watch(proc, reader, what) {
    let stderr = '';
    proc.stderr.on('data', (c) => { if (stderr.length < 4096)
        stderr += c.toString('utf8'); });
    proc.on('error', (err) => reader.fail(new GitUnavailable(`${what}: ${err.message}`)));
    proc.on('exit', (code) => { if (code)
        reader.fail(new GitUnavailable(`${what} failed: ${stderr.trim() || `exit ${code}`}`)); });
    proc.stdin.on('error', () => undefined); // reported through exit/stderr
    return () => stderr;
}
/** `git cat-file --batch`: one process answering object reads in order. */
export class ObjectReader {
    proc;
    out;
    constructor(bin, dir) {
        this.proc = spawn(bin, ['-C', dir, 'cat-file', '--batch'], { stdio: ['pipe', 'pipe', 'pipe'] });
        this.out = new ByteReader(this.proc.stdout);
        watch(this.proc, this.out, 'git cat-file');
    }
    /** An object's type and bytes (throws when git does not have it). */
    async read(id) {
        this.proc.stdin.write(`${id}\n`);
        return this.answer(id);
    }
    /**
     * Several objects, asked for at once and answered in order: git works on the next while this
     * process reads the last, instead of one round trip each. `ids` is read in groups of 64, so
     * at most that many objects' requests are outstanding (memory holds one object at a time).
     */
    async *readEach(ids) {
        for (let i = 0; i < ids.length; i += 64) {
            const group = ids.slice(i, i + 64);
            this.proc.stdin.write(group.map((id) => `${id}\n`).join(''));
            for (const id of group)
                yield { id, ...(await this.answer(id)) };
        }
    }
    async answer(id) {
        const header = await this.out.until(0x0a);
        if (header === null)
            throw new GitUnavailable('git cat-file ended early');
        const text = header.toString('latin1');
        if (text.endsWith(' missing'))
            throw new GitUnavailable(`git object ${id} is missing from the repository`);
        const [, type, size] = text.split(' ');
        const data = await this.out.exactly(Number(size));
        await this.out.exactly(1); // the newline after the object
        return { type, data };
    }
    close() {
        this.proc.stdin.end();
        this.proc.kill();
    }
}
/**
 * `git diff-tree --stdin -r -z --root --always --no-renames`: for each `[commit, parent?]` pair,
 * the paths that differ from the parent (from nothing without one). The pairs are written as
 * git reads them and the answers parsed in order; a header token names each commit, the entries
 * that follow are its changes (`-z`: a `:`-entry is always followed by exactly one path token).
 */
export async function* treeChanges(bin, dir, pairs) {
    const proc = spawn(bin, ['-C', dir, 'diff-tree', '--stdin', '-r', '-z', '--root', '--always', '--no-renames', '--no-ext-diff'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out = new ByteReader(proc.stdout);
    watch(proc, out, 'git diff-tree');
    const feed = (async () => {
        for await (const [commit, parent] of pairs) {
            if (!proc.stdin.write(parent ? `${commit} ${parent}\n` : `${commit}\n`))
                await new Promise((r) => proc.stdin.once('drain', r));
        }
        proc.stdin.end();
    })();
    feed.catch((err) => out.fail(err));
    try {
        let current = null;
        for (;;) {
            const token = await out.until(0);
            if (token === null)
                break;
            if (token[0] === 0x3a /* : */) {
                if (!current)
                    throw new GitUnavailable('git diff-tree printed a change before a commit');
                const [oldMode, newMode, oldId, newId, status] = token.toString('latin1').slice(1).split(' ');
                const path = await out.until(0);
                if (path === null)
                    throw new GitUnavailable('git diff-tree output ended before a path');
                current.changes.push({ oldMode, newMode, oldId, newId, status, path });
                continue;
            }
            if (current)
                yield current;
            current = { commit: token.toString('latin1').trim(), changes: [] };
        }
        if (current)
            yield current;
        await feed;
    }
    finally {
        proc.stdin.destroy();
        proc.kill();
    }
}
/** Every entry of a commit's tree, recursively (`ls-tree -r -z`): blobs and gitlinks. */
export async function* treeEntries(bin, dir, commit) {
    const proc = spawn(bin, ['-C', dir, 'ls-tree', '-r', '-z', '--full-tree', commit], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out = new ByteReader(proc.stdout);
    watch(proc, out, 'git ls-tree');
    proc.stdin.end();
    try {
        for (;;) {
            const token = await out.until(0);
            if (token === null)
                break;
            const tab = token.indexOf(0x09);
            const [mode, type, id] = token.subarray(0, tab).toString('latin1').split(' ');
            yield { mode, type, id, path: token.subarray(tab + 1) };
        }
    }
    finally {
        proc.kill();
    }
}
//# sourceMappingURL=git-source.js.map