// The export of lines as git commits into the authority's shadow bare repository (docs/git.md,
// "Export"; storage-layout.md §19). Every commit is built from stored data only — the snapshot's
// tree, the git map, the land, change and patchset records — never from the clock, git config or
// a signature, so exporting twice, or rebuilding a deleted shadow, writes the same commit ids.
// Node only: objects are written as git packs (lib/authority/git-pack-writer.ts), refs as files.
// git runs only for the background maintenance that keeps the number of packs bounded.
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import path from 'node:path';
import { Mutex, Semaphore } from 'async-mutex';
import { Conflict, Corrupt, Invalid, NotFound } from '../domain/errors.js';
import { authorIdent, CAIRN_IDENT, encodeCommit, exportedCommitId, GIT_COMMIT, GIT_COMMIT_ID, gitRefProblem, parseCommit, rawHeader, withTrailers, } from '../domain/git.js';
import { gitId } from '../domain/git-objects.js';
import { validateLineName } from '../domain/lines.js';
import { CHANGE, PATCHSET } from '../domain/workflow/rules.js';
import { liveVotes } from '../domain/workflow/review-rules.js';
import { crashPoint } from '../store/crash-point.js';
import { writeFileDurable } from '../store/durable.js';
import { GitShadowLayout } from '../store/layout.js';
import { GitPackWriter } from './git-pack-writer.js';
import { GitTreeBuilder } from './git-trees.js';
/** Commits recorded in the git map per transaction (a pack past its bound is finished after one); CAIRN_GIT_EXPORT_BATCH changes it. */
export const EXPORT_BATCH = 200;
const batchSize = () => Math.max(1, Number(process.env.CAIRN_GIT_EXPORT_BATCH) || EXPORT_BATCH);
/** Entries in each of the tree builder's caches (cairn → git blob and tree ids). */
const BUILDER_CACHE = 100_000;
/** A moved line is exported this long after its move (moves close together: one export). */
const REFRESH_DELAY_MS = 200;
const positive = (value, fallback) => (Number(value) >= 1 ? Math.floor(Number(value)) : fallback);
/**
 * A pack being written is finished (and the branch moved to the last commit in it) once it holds
 * this many objects (CAIRN_GIT_EXPORT_PACK_OBJECTS) or bytes: the bound on an export's memory
 * (the pack's index entries) and on the work a crash loses.
 */
const packObjects = () => positive(process.env.CAIRN_GIT_EXPORT_PACK_OBJECTS, 100_000);
const PACK_BYTES = 1024 ** 3;
/**
 * Past either bound, the shadow is repacked in the background after an export (docs/git.md "The
 * shadow repository"): more packs than CAIRN_GIT_SHADOW_MAX_PACKS, more loose objects than
 * CAIRN_GIT_SHADOW_MAX_LOOSE (left by an older cairn; exports write none).
 */
const maxPacks = () => positive(process.env.CAIRN_GIT_SHADOW_MAX_PACKS, 8);
const maxLoose = () => positive(process.env.CAIRN_GIT_SHADOW_MAX_LOOSE, 64);
/** One repack at a time in the whole server, whatever the number of repositories: each is a git pack-objects. */
const REPACKS = new Semaphore(1);
/** One background export at a time in the whole server (GitExporter.watch). */
const BACKGROUND_EXPORTS = new Semaphore(1);
/** An export gives the event loop a turn after this much work, so requests are answered meanwhile. */
const TURN_MS = 20;
/** The version-2 .idx files of a pack directory (git's Documentation/gitformat-pack.txt). */
async function readPackIndexes(dir) {
    const out = [];
    for (const f of await fsp.readdir(dir).catch(() => [])) {
        if (!f.endsWith('.idx'))
            continue;
        // A repack may remove it meanwhile: its objects are then in the pack that replaced it.
        const idx = await fsp.readFile(path.join(dir, f)).catch(() => null);
        if (idx && idx.length >= 8 + 256 * 4 && idx.readUInt32BE(0) === 0xff744f63 && idx.readUInt32BE(4) === 2)
            out.push(idx);
    }
    return out;
}
/** Binary search of a 20-byte object name in a version-2 .idx (fan-out table, then sorted names). */
function packIndexHas(idx, name) {
    const fanout = (i) => (i < 0 ? 0 : idx.readUInt32BE(8 + i * 4));
    let lo = fanout(name[0] - 1);
    let hi = fanout(name[0]);
    const names = 8 + 256 * 4;
    while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const c = idx.compare(name, 0, 20, names + mid * 20, names + mid * 20 + 20);
        if (c === 0)
            return true;
        // c < 0: the name at mid sorts before the one sought.
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}
const exists = (file) => fsp.stat(file).then(() => true, () => false);
/** Whether a git objects directory has any loose object (a two-hex-digit directory). */
async function hasLooseObjects(objectsDir) {
    return (await fsp.readdir(objectsDir).catch(() => [])).some((d) => /^[0-9a-f]{2}$/.test(d));
}
export class GitExporter {
    authority;
    log;
    layout;
    /** One sync at a time: syncs of different lines share objects and the map's records. */
    mutex = new Mutex();
    builder = null;
    /** The object names of the shadow's packs (their .idx files), read when first needed after a change. */
    packs = null;
    /** Whether objects/ holds loose objects (an older cairn wrote them); null: not looked yet. */
    loose = null;
    /** The pack this sync is writing; its objects are not in the repository until it is finished. */
    pack = null;
    /** The background repack (runMaintenance), while one is scheduled or running. */
    maintaining = null;
    maintainAgain = false;
    repacking = null;
    stopped = false;
    /** Test-only: told of every sync; a rejection of 'started' fails the sync, its wait holds the exporter. */
    syncHook = null;
    constructor(root, authority, log) {
        this.authority = authority;
        this.log = log;
        this.layout = new GitShadowLayout(root);
    }
    get root() {
        return this.layout.root;
    }
    unwatch = null;
    due = new Set();
    timer = null;
    /** The background export under way (refresh), while one runs: lines that move meanwhile wait for the next. */
    refreshing = null;
    /**
     * Follow the repository's lines: when a line moves (or is made) that has a branch in the
     * shadow (exported or served before), or whose new head came from git (an import, a push: the
     * eager export, unless CAIRN_GIT_EAGER_EXPORT=0), export it in the background shortly after
     * (moves close together are one export; one background export at a time in the server), so a
     * clone or fetch finds it ready, or waits for the export under way instead of starting its
     * own. Failures are logged; the next git request exports anyway.
     */
    watch(active) {
        this.stopped = false;
        if (this.unwatch)
            return;
        this.unwatch = this.authority.store.onEvents((events) => {
            for (const e of events) {
                if ((e.type === 'line.moved' || e.type === 'line.created') && typeof e.data.line === 'string')
                    this.due.add(e.data.line);
            }
            if (this.due.size)
                this.kick(active);
        });
    }
    /** Start a background export REFRESH_DELAY_MS from now, unless one is due or running (it looks again when it ends). */
    kick(active) {
        if (this.timer || this.refreshing || !this.unwatch)
            return;
        this.timer = setTimeout(() => {
            this.timer = null;
            this.refreshing = this.refresh(active).finally(() => {
                this.refreshing = null;
                if (this.due.size)
                    this.kick(active);
            });
        }, REFRESH_DELAY_MS);
    }
    /** Stop following the lines, and stop a running repack (git leaves the repository as it was) and a background export (at its next commit). */
    stop() {
        this.stopped = true;
        this.repacking?.kill('SIGTERM');
        this.unwatch?.();
        this.unwatch = null;
        if (this.timer)
            clearTimeout(this.timer);
        this.timer = null;
        this.due.clear();
    }
    /** Resolves once no background export is due or running (tests, benchmarks). */
    async refreshIdle() {
        while (this.refreshing || this.timer)
            await (this.refreshing ?? new Promise((resolve) => setTimeout(resolve, REFRESH_DELAY_MS)));
    }
    async refresh(active) {
        // One background export at a time in the whole server (as repacks): each is a pass over a
        // line's new history. A request's export does not wait for this, only for its own repository's.
        await BACKGROUND_EXPORTS.runExclusive(async () => {
            const lines = [...this.due];
            this.due.clear();
            for (const line of lines) {
                if (!this.unwatch || !active())
                    return;
                if (!(await this.follows(line)))
                    continue;
                try {
                    await this.syncLine(line, true);
                }
                catch (err) {
                    if (!this.stopped)
                        this.log?.warn({ shadow: this.root, line, error: err.message }, 'background export of a line failed; the next git request exports it');
                }
            }
        });
    }
    /** Whether a moved line is exported in the background: it has a branch in the shadow, or its head came from git. */
    async follows(name) {
        const store = this.authority.store;
        const line = store.line(name);
        if (!line || line.status === 'archived' || gitRefProblem(name))
            return false;
        if (await exists(this.layout.branchRef(name)))
            return true;
        if (process.env.CAIRN_GIT_EAGER_EXPORT === '0' || line.head_snapshot_id === null)
            return false;
        return store.entity(GIT_COMMIT, line.head_snapshot_id) !== undefined;
    }
    /** Bring `refs/heads/<line>` of the shadow up to the line's head. `background`: the server's own export of a moved line. */
    syncLine(name, background = false) {
        validateLineName(name);
        const problem = gitRefProblem(name);
        if (problem)
            throw new Invalid(`line ${name} cannot be a git branch name: ${problem}`);
        const line = this.authority.store.line(name);
        if (!line)
            throw new NotFound(`line ${name} does not exist`);
        if (line.status === 'archived')
            throw new Conflict(`line ${name} is archived; an archived line is not exported`);
        void this.syncHook?.({ stage: 'requested', line: name, background });
        return this.mutex.runExclusive(async () => {
            await this.syncHook?.({ stage: 'started', line: name, background });
            const done = await this.sync(name);
            void this.syncHook?.({ stage: 'finished', line: name, background, written: done.written });
            return done;
        });
    }
    async sync(name) {
        const store = this.authority.store;
        const head = store.line(name)?.head_snapshot_id ?? null;
        await this.ensureRepository();
        if (head === null) {
            await fsp.rm(this.layout.branchRef(name), { force: true });
            return { line: name, head_commit_id: null, written: 0 };
        }
        // Back along the first parents to the newest snapshot whose commit the shadow holds.
        const chain = [];
        let parent = null;
        for (let s = head; s !== null;) {
            const rec = store.entity(GIT_COMMIT, s);
            if (rec && (await this.holds(exportedCommitId(rec)))) {
                parent = exportedCommitId(rec);
                break;
            }
            chain.push(s);
            const snap = store.snapshot(s);
            if (!snap)
                throw new Corrupt(`snapshot ${s} of line ${name} is not stored`);
            s = snap.parent_snapshot_ids[0] ?? null;
        }
        // Kept between exports, so an export of one new commit reads only what it changed: an id
        // it caches was written (the sink runs first). A remade repository starts a new one.
        // Kept between exports, so an export of one new commit reads only what it changed: an id
        // it caches is in the shadow or in the pack being written (a failed sync forgets the builder).
        const builder = (this.builder ??= new GitTreeBuilder({ readTree: (id) => store.readTree(id), readBlob: (id) => this.readBlob(id) }, 'sha1', (type, id, body, where) => this.writeObject(type, id, body, where).then(() => undefined), BUILDER_CACHE));
        let written = 0;
        const batch = batchSize();
        let sinceFlush = 0;
        let pending = [];
        /** Snapshots given a new commit by this sync, not recorded yet (the map does not say it yet). */
        const fresh = new Set();
        const side = { fresh, decided: new Map(), written: 0 };
        let packed = false;
        // The map's records first (a record whose commit is not written yet is only the id an export
        // would give it anyway); the branch moves only to a commit whose pack is finished.
        const flush = async (last) => {
            if (pending.length > 0)
                await this.authority.content.recordGitExports(pending);
            pending = [];
            fresh.clear();
            sinceFlush = 0;
            crashPoint('git-export:recorded');
            if (this.pack && (last || this.pack.count >= packObjects() || this.pack.bytes >= PACK_BYTES))
                packed = (await this.finishPack()) || packed;
            if (parent !== null && this.pack === null)
                await this.writeRef(name, parent);
        };
        try {
            let turn = performance.now();
            for (let i = chain.length - 1; i >= 0; i--) {
                if (performance.now() - turn >= TURN_MS) {
                    await nextTurn();
                    turn = performance.now();
                    if (this.stopped)
                        throw new Error('the export stopped: the repository is closing');
                }
                const id = chain[i];
                const { raw, record } = await this.commitFor(id, parent, builder, side);
                const commitId = gitId('commit', raw);
                if (await this.writeObject('commit', commitId, raw))
                    written++;
                if (record) {
                    pending.push({ snapshot_id: id, commit_id: commitId, raw: raw.toString('base64') });
                    fresh.add(id);
                }
                parent = commitId;
                if (++sinceFlush >= batch)
                    await flush(false);
            }
            await flush(true);
        }
        catch (err) {
            await this.dropPack();
            throw err;
        }
        written += side.written;
        if (packed || this.loose !== false)
            this.scheduleMaintenance();
        return { line: name, head_commit_id: parent, written };
    }
    /** Finish the pack being written into the shadow; true when it held anything. */
    async finishPack() {
        const pack = this.pack;
        if (!pack)
            return false;
        this.pack = null;
        let done;
        try {
            done = await pack.finish(this.layout);
        }
        catch (err) {
            this.builder = null;
            throw err;
        }
        if (done && this.packs)
            this.packs.push(done.idx);
        return done !== null;
    }
    /** A failed sync: the pack it was writing goes, and so does what the builder learnt from it. */
    async dropPack() {
        const pack = this.pack;
        this.pack = null;
        this.builder = null;
        await pack?.abort();
    }
    /** The shadow holds object `id`: in the pack being written, in one of its packs, or as a loose object. */
    async holds(id) {
        if (this.pack?.has(id))
            return true;
        this.packs ??= await readPackIndexes(this.layout.packDir);
        const name = Buffer.from(id, 'hex');
        if (this.packs.some((idx) => packIndexHas(idx, name)))
            return true;
        this.loose ??= await hasLooseObjects(this.layout.objectsDir);
        return this.loose && (await exists(this.layout.objectFile(id)));
    }
    /** Objects the repack looks at: loose ones, and packs (with their index). */
    async objectCounts() {
        let loose = 0;
        for (const d of await fsp.readdir(this.layout.objectsDir).catch(() => [])) {
            if (/^[0-9a-f]{2}$/.test(d))
                loose += (await fsp.readdir(path.join(this.layout.objectsDir, d)).catch(() => [])).length;
        }
        const files = new Set(await fsp.readdir(this.layout.packDir).catch(() => []));
        const packs = [...files].filter((f) => f.endsWith('.idx') && files.has(`${f.slice(0, -4)}.pack`)).length;
        return { loose, packs };
    }
    /**
     * Keep the shadow packed as git's own maintenance would, in the background after an export
     * (never while a request waits): when it holds more packs or loose objects than the bounds, a
     * geometric repack (`git repack -d --geometric=2`) rolls the small packs (and any loose
     * objects) into one, leaving packs whose sizes at least double, so their number grows with the
     * logarithm of the history; should more than the bound remain, `git repack -a -d -k` makes one.
     * Neither drops an object (a geometric repack keeps every object of the packs it rolls up; -k
     * keeps unreachable ones), so an export running meanwhile, which writes a pack of its own that
     * the repack does not touch, finds every object it was told the shadow holds; git clients
     * reading the shadow meanwhile are safe, as with any git repack. One repack at a time, in the
     * whole server.
     */
    scheduleMaintenance() {
        if (this.stopped)
            return;
        if (this.maintaining) {
            this.maintainAgain = true;
            return;
        }
        this.maintaining = (async () => {
            // After the answer of the export that asked for it.
            await new Promise((resolve) => setImmediate(resolve));
            do {
                this.maintainAgain = false;
                try {
                    await REPACKS.runExclusive(() => (this.stopped ? undefined : this.maintainOnce()));
                }
                catch (err) {
                    if (!this.stopped)
                        this.log?.warn({ shadow: this.root, error: err.message.slice(0, 300) }, 'repacking the shadow repository failed; it stays as it was (correct, more packs)');
                }
            } while (this.maintainAgain && !this.stopped);
        })().finally(() => { this.maintaining = null; });
    }
    /** Resolves once no maintenance is scheduled or running (tests, benchmarks). */
    async maintenanceIdle() {
        while (this.maintaining)
            await this.maintaining;
    }
    async maintainOnce() {
        const before = await this.objectCounts();
        this.loose = before.loose > 0;
        if (before.loose <= maxLoose() && before.packs <= maxPacks())
            return;
        await this.git(['repack', '-d', '-q', '-n', '--geometric=2']);
        let after = await this.objectCounts();
        if (after.packs > maxPacks() && !this.stopped) {
            await this.git(['repack', '-a', '-d', '-k', '-q', '-n']);
            after = await this.objectCounts();
        }
        this.log?.info({ shadow: this.root, before, after }, 'repacked the shadow repository');
    }
    /** git on the shadow, with no configuration of the machine's (as for serving); rejects with its stderr. */
    git(args) {
        const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: this.root, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
        return new Promise((resolve, reject) => {
            if (this.stopped)
                return resolve();
            const child = execFile(process.env.CAIRN_GIT || 'git', ['-C', this.root, '-c', 'repack.writeBitmaps=false', ...args], { env, maxBuffer: 1024 * 1024 }, (err, _stdout, stderr) => {
                this.repacking = null;
                // Packs went and came, loose objects went: what was known of them is re-read when needed.
                this.packs = null;
                this.loose = null;
                if (err)
                    reject(new Error(`git ${args[0]}: ${String(stderr || err.message).trim()}`));
                else
                    resolve();
            });
            this.repacking = child;
        });
    }
    /**
     * The commit of snapshot `id` whose first parent's commit is `parent`, its objects written.
     * `record`: the git map does not hold it yet.
     */
    async commitFor(id, parent, builder, side) {
        const store = this.authority.store;
        const snap = store.snapshot(id);
        const rec = store.entity(GIT_COMMIT, id);
        if (rec && rec.commit_id.length !== 40)
            throw new Conflict(`snapshot ${id} was imported from a sha256 repository; exporting sha256 histories is not supported`);
        const tree = await builder.treeOf(snap.root_tree_id, rec?.gitlinks ?? []);
        const parents = parent === null ? [] : [parent];
        const exported = rec?.origin === 'exported' ? rec.raw : rec?.export?.raw;
        if (exported !== undefined) {
            // Written before: the map's bytes are the commit (a rebuild must not change an id).
            const raw = Buffer.from(exported, 'base64');
            const c = parseCommit(raw);
            if (c.tree_id !== tree || (c.parent_ids[0] ?? null) !== parent)
                throw new Corrupt(`snapshot ${id}: its exported git commit ${exportedCommitId(rec)} does not have the snapshot's tree and first parent (tree ${tree}, parent ${parent ?? 'none'})`);
            return { raw, record: false };
        }
        if (rec) {
            const original = Buffer.from(rec.raw, 'base64');
            const c = parseCommit(original);
            // Kept as it was when git would find the same tree and the same (only) parent.
            if (c.tree_id === tree && c.parent_ids.length === parents.length && (parent === null || c.parent_ids[0] === parent))
                return { raw: original, record: false };
            // An imported merge whose side histories were imported too: kept as it was once every
            // other parent is written as it was (docs/git.md, "Merges").
            if (rec.origin !== 'exported' && c.tree_id === tree && parent !== null && c.parent_ids.length > 1 && c.parent_ids[0] === parent
                && (await this.keepSides(c.parent_ids.slice(1), builder, side)))
                return { raw: original, record: false };
            const raw = encodeCommit({
                tree_id: tree,
                parent_ids: parents,
                author: rawHeader(original, 'author'),
                committer: rawHeader(original, 'committer'),
                encoding: c.encoding,
                message: withTrailers(c.message, [`Cairn-Git-Commit: ${rec.commit_id}`, ...(rec.pushed_by ? [`Pushed-by: ${identTrailer(rec.pushed_by)}`] : []), ...landedByTrailer(rec.origin === 'pushed' ? this.authority.lands.landOfSnapshot(id) : null)]),
            });
            return { raw, record: true };
        }
        const land = this.authority.lands.landOfSnapshot(id);
        if (land) {
            const ps = land.patchset_id ? store.entity(PATCHSET, land.patchset_id) : undefined;
            const change = store.entity(CHANGE, land.change_id);
            const title = (change?.title ?? land.change_ref).trim();
            const summary = (ps?.summary ?? '').trim();
            const trailers = [`Cairn-Change: ${land.change_ref}`, `Cairn-Land: ${land.land_id}`];
            if (snap.parent_snapshot_ids.length > 1)
                trailers.push(`Cairn-Merge-Revision: ${snap.parent_snapshot_ids[1]}`);
            // Who vouched for it, as Gerrit writes them: the approvals live when the land finished, and who pushed it (docs/git.md "Who pushed").
            // Always by the fingerprint carry-over, whatever dismiss_stale_approvals says now: an exported
            // commit's bytes never depend on rules set after its land.
            if (ps) {
                const reviews = this.authority.workflow.reviews.reviewsOf(land.change_id).filter((r) => r.created_at_s <= land.finished_at_s);
                const approvers = liveVotes(reviews, { patchset_id: ps.patchset_id, fingerprint: ps.diff.fingerprint ?? null }).filter((v) => v.vote === 'approve').map((v) => v.reviewer).sort();
                for (const name of approvers)
                    trailers.push(`Reviewed-by: ${identTrailer(name)}`);
                if (ps.pushed_by)
                    trailers.push(`Pushed-by: ${identTrailer(ps.pushed_by)}`);
            }
            trailers.push(...landedByTrailer(land));
            const text = summary === '' ? `${title}\n` : `${title}\n\n${summary}\n`;
            const raw = encodeCommit({
                tree_id: tree,
                parent_ids: parents,
                author: { ...authorIdent(ps?.author), time: land.finished_at_s },
                committer: { ...CAIRN_IDENT, time: land.finished_at_s },
                message: withTrailers(Buffer.from(text, 'utf8'), trailers),
            });
            return { raw, record: true };
        }
        const raw = encodeCommit({
            tree_id: tree,
            parent_ids: parents,
            author: { ...CAIRN_IDENT, time: snap.created_at_s },
            committer: { ...CAIRN_IDENT, time: snap.created_at_s },
            message: withTrailers(Buffer.from(snap.message ?? '', 'utf8'), [`Cairn-Snapshot: ${id}`]),
        });
        return { raw, record: true };
    }
    /**
     * Write the side histories of a merge, each commit as it was recorded, parents first, and say
     * whether every one of `roots` is then in the shadow under its own id. A commit is written
     * only when it is the commit the map says an export writes for its snapshot (an imported or
     * pushed one never rewritten, or one an export wrote), its
     * snapshot's tree converts back to its tree, and every parent is such a commit (or the
     * shadow holds it already, which it does only for commits kept as they were). Whether a
     * commit is kept is a function of the stored records alone, so the ids do not depend on the
     * order lines are exported in. Iterative: a side branch may be thousands of commits long.
     */
    async keepSides(roots, builder, side) {
        const store = this.authority.store;
        const stack = roots.map((commit) => ({ commit, raw: null, parents: [] }));
        while (stack.length) {
            const top = stack[stack.length - 1];
            if (side.decided.has(top.commit)) {
                stack.pop();
                continue;
            }
            if (top.raw === null) {
                const index = store.entity(GIT_COMMIT_ID, top.commit);
                const rec = index ? store.entity(GIT_COMMIT, index.snapshot_id) : undefined;
                // The commit the map says an export writes for its snapshot (an imported or pushed one
                // kept as it was, or one an export wrote), never one the export rewrote.
                if (!rec || exportedCommitId(rec) !== top.commit || side.fresh.has(rec.snapshot_id)) {
                    side.decided.set(top.commit, false);
                    stack.pop();
                    continue;
                }
                if (await this.holds(top.commit)) {
                    side.decided.set(top.commit, true);
                    stack.pop();
                    continue;
                }
                const raw = Buffer.from(rec.export?.raw ?? rec.raw, 'base64');
                const c = parseCommit(raw);
                const snap = store.snapshot(rec.snapshot_id);
                if (!snap || (await builder.treeOf(snap.root_tree_id, rec.gitlinks)) !== c.tree_id) {
                    side.decided.set(top.commit, false);
                    stack.pop();
                    continue;
                }
                top.raw = raw;
                top.parents = c.parent_ids;
                for (const p of c.parent_ids)
                    if (!side.decided.has(p))
                        stack.push({ commit: p, raw: null, parents: [] });
                continue;
            }
            stack.pop();
            const keep = top.parents.every((p) => side.decided.get(p) === true);
            if (keep && (await this.writeObject('commit', top.commit, top.raw)))
                side.written++;
            side.decided.set(top.commit, keep);
        }
        return roots.every((r) => side.decided.get(r) === true);
    }
    readBlob(id) {
        const loc = this.authority.store.locator('blob', id);
        if (!loc)
            throw new Corrupt(`blob ${id} is not stored`);
        return this.authority.store.readLocated(loc);
    }
    /**
     * A bare repository git reads: HEAD → refs/heads/main, a config, objects/ and refs/. A
     * directory missing any of these is not one: it is removed and made again (derived data).
     */
    async ensureRepository() {
        const L = this.layout;
        const whole = (await exists(L.headFile)) && (await exists(L.configFile)) && (await exists(L.objectsDir)) && (await exists(L.headsDir));
        if (!whole) {
            await fsp.rm(L.root, { recursive: true, force: true });
            this.packs = null;
            this.loose = null;
            this.builder = null;
        }
        for (const dir of [path.join(L.objectsDir, 'pack'), path.join(L.objectsDir, 'info'), L.headsDir, path.join(L.refsDir, 'tags')])
            await fsp.mkdir(dir, { recursive: true });
        if (!whole)
            await writeFileDurable(L.configFile, '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n');
        const wantHead = 'ref: refs/heads/main\n';
        if ((await fsp.readFile(L.headFile, 'utf8').catch(() => '')) !== wantHead)
            await writeFileDurable(L.headFile, wantHead);
        // Temp files of a sync that did not finish (kill -9): never objects, so they go.
        await fsp.rm(L.tempDir, { recursive: true, force: true });
        await fsp.mkdir(L.tempDir, { recursive: true });
        // A pack whose index never came (killed between the two renames) is not part of the
        // repository. Not while git repacks: its own new pack is briefly in that state too.
        if (!this.maintaining) {
            const files = new Set(await fsp.readdir(L.packDir));
            for (const f of files) {
                if (f.endsWith('.pack') && !files.has(`${f.slice(0, -5)}.idx`))
                    await fsp.rm(path.join(L.packDir, f), { force: true });
            }
        }
    }
    /** Add an object to the pack being written, unless the shadow holds it. `where`: its path, for a blob or tree. */
    async writeObject(type, id, body, where) {
        if (await this.holds(id))
            return false;
        this.pack ??= await GitPackWriter.open(this.layout.tempDir);
        await this.pack.add(type, id, body, where);
        return true;
    }
    async writeRef(line, commitId) {
        const file = this.layout.branchRef(line);
        try {
            await fsp.mkdir(path.dirname(file), { recursive: true });
            await writeFileDurable(file, `${commitId}\n`);
        }
        catch (err) {
            const code = err.code;
            if (code === 'EISDIR' || code === 'ENOTDIR' || code === 'EEXIST')
                throw new Conflict(`line ${line} cannot be exported: refs/heads/${line} clashes with the branch of another line (git cannot hold both "a" and "a/b")`);
            throw err;
        }
    }
}
/** `Landed-by:` of a land's commit the export writes, when the land names who asked for it. */
function landedByTrailer(land) {
    return land?.landed_by ? [`Landed-by: ${identTrailer(land.landed_by)}`] : [];
}
/** A cairn name as a trailer's `Name <email>` (authorIdent's cleaning: nothing git would misread). */
function identTrailer(name) {
    const { name: n, email } = authorIdent(name);
    return `${n} <${email}>`;
}
//# sourceMappingURL=git-export.js.map