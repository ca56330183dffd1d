// Tree expansion (docs/operations.md "Tree expansion", lib/domain/tree-size.ts): a few KiB of
// trees, each naming the one below a thousand times, expand to billions of paths. The server
// refuses such a snapshot at ingest (413, nothing written) without expanding it; a store that
// holds one from before the limit (written here with the store API, below every check) answers
// 400 on every route that would expand it while /healthz keeps answering and memory stays flat;
// walks stop at the limit even when recorded sizes lie; the client refuses to pull one; fsck
// reports it.
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { LandDesk } from '../lib/authority/workflow/lands.js';
import { blobId, decodeTree, encodeSnapshot, encodeTree, sha256Hex, snapshotId } from '../lib/domain/content.js';
import { expandedSize, Pace, pathsOf } from '../lib/domain/tree-size.js';
import { PATCHSET } from '../lib/domain/workflow/rules.js';
import { ContentStore } from '../lib/store/content-store.js';
import { buildPack, PACK_KIND_OBJECT, PACK_KIND_TREE } from '../lib/store/pack.js';
import { Fixture } from './land-queue-fixture.js';
import { api, cli, expectError, exportRepo, register, repoFiles, spawnServer, startTestServer, tempDir } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const SYNC = (repo, rest) => R(repo, `/remote-sync/zstd-bulk${rest}`);
const COMMIT = 'svc.remote_sync.zstd_bulk.commit.v1';
const MEDIA = { [PACK_KIND_OBJECT]: 'application/vnd.svc.remote-sync.object-pack+zstd', [PACK_KIND_TREE]: 'application/vnd.svc.remote-sync.tree-pack+zstd' };
let clock = 1_700_000_000;
const BLOB = Buffer.from('x\n');
function snapshotOf(root, trees) {
    const fields = { root_tree_id: root, parent_snapshot_ids: [], created_at_s: clock++, message: null };
    return {
        root,
        trees,
        snapshot: { snapshot_id: snapshotId(fields), ...fields },
        objectPack: buildPack(PACK_KIND_OBJECT, [{ id: blobId(BLOB), raw: BLOB }]),
        treePack: buildPack(PACK_KIND_TREE, [...trees].map(([id, raw]) => ({ id, raw }))),
    };
}
/**
 * `depth` levels of `width` directories, every one the same tree, above a tree holding `leaf`
 * files: width^depth × leaf files in depth + 1 distinct trees. `salt` names the leaf files.
 */
function bomb(width, depth, leaf = 1, salt = 'f') {
    const trees = new Map();
    let cur = encodeTree(Array.from({ length: leaf }, (_, i) => ({ name: `${salt}${i}`, kind: 'file', id: blobId(BLOB) })));
    let id = sha256Hex(cur);
    trees.set(id, cur);
    for (let d = 0; d < depth; d++) {
        cur = encodeTree(Array.from({ length: width }, (_, i) => ({ name: `d${String(i).padStart(4, '0')}`, kind: 'directory', id })));
        id = sha256Hex(cur);
        trees.set(id, cur);
    }
    return snapshotOf(id, trees);
}
/** Paths of bomb(width, depth, leaf): the directories of each level, then the files. */
function bombPaths(width, depth, leaf = 1) {
    let paths = 0;
    for (let d = 1; d <= depth; d++)
        paths += width ** d;
    return paths + width ** depth * leaf;
}
/** A flat snapshot of `files` files (paths = files). */
function flat(files, salt = 'f') {
    const raw = encodeTree(Array.from({ length: files }, (_, i) => ({ name: `${salt}${String(i).padStart(7, '0')}`, kind: 'file', id: blobId(BLOB) })));
    return snapshotOf(sha256Hex(raw), new Map([[sha256Hex(raw), raw]]));
}
/** A snapshot whose root holds `parts` as directories (each an existing Built's root). */
function rootOf(parts) {
    const entries = Object.entries(parts).map(([name, b]) => ({ name, kind: 'directory', id: b.root }));
    const raw = encodeTree(entries);
    const trees = new Map([[sha256Hex(raw), raw]]);
    for (const b of Object.values(parts))
        for (const [id, t] of b.trees)
            trees.set(id, t);
    return snapshotOf(sha256Hex(raw), trees);
}
const putPack = (url, repo, p) => api(url, 'PUT', SYNC(repo, `/${p.kind === PACK_KIND_OBJECT ? 'object' : 'tree'}-packs/${p.packId}`), { body: p.bytes, headers: { 'content-type': MEDIA[p.kind] } });
const locator = (p, e) => ({ pack_id: p.packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32.toString(16).padStart(8, '0') });
function commitBody(b, line, withSnapshot = true) {
    return {
        contract: COMMIT,
        object_packs: [{ pack_id: b.objectPack.packId }],
        tree_packs: [{ pack_id: b.treePack.packId }],
        blob_locators: b.objectPack.entries.map((e) => ({ blob_id: e.id, ...locator(b.objectPack, e) })),
        tree_locators: b.treePack.entries.map((e) => ({ tree_id: e.id, ...locator(b.treePack, e) })),
        snapshots: withSnapshot ? [b.snapshot] : [],
        line_update: line ? { line_name: line, head_snapshot_id: b.snapshot.snapshot_id, expected_head_snapshot_id: null } : null,
    };
}
async function upload(url, repo, b) {
    for (const p of [b.objectPack, b.treePack]) {
        const res = await putPack(url, repo, p);
        expect(res.status, res.text).to.equal(200);
    }
}
async function commit(url, repo, b, line = null, withSnapshot = true) {
    await upload(url, repo, b);
    return api(url, 'POST', SYNC(repo, '/commit'), { json: commitBody(b, line, withSnapshot) });
}
/**
 * Store `b` below every check of the server, as a store written before the limit holds it: no
 * size recorded (or `lie` as every tree's recorded size, a damaged index).
 */
async function plant(repoDir, b, lie) {
    const { store } = await ContentStore.open(repoDir);
    try {
        await store.transact((tx) => {
            for (const p of [b.objectPack, b.treePack]) {
                tx.writePack(p.kind, p.packId, p.bytes);
                for (const e of p.entries)
                    tx.addLocator({ kind: p.kind === PACK_KIND_OBJECT ? 'blob' : 'tree', id: e.id, pack_id: p.packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32, expanded: p.kind === PACK_KIND_TREE ? lie : undefined });
            }
            tx.addSnapshot(encodeSnapshot(b.snapshot));
        });
    }
    finally {
        store.close();
    }
}
/** Make a stored patchset name `revision` (a patchset recorded before the limit existed). */
async function plantRevision(repoDir, patchsetId, revision) {
    const { store } = await ContentStore.open(repoDir);
    try {
        await store.transact((tx) => {
            const ps = tx.entity(PATCHSET, patchsetId);
            tx.upsert(PATCHSET, patchsetId, { ...ps, revision_snapshot_id: revision });
        });
    }
    finally {
        store.close();
    }
}
function memoryKiB(pid) {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)[1]);
    return { rss: field('VmRSS'), hwm: field('VmHWM') };
}
/** GET /healthz on a new connection; resolves with the status, or 'no answer' after `ms`. */
function healthz(url, ms = 10_000) {
    return new Promise((resolve) => {
        const timer = setTimeout(() => { req.destroy(); resolve('no answer'); }, ms);
        const req = http.get(`${url}/healthz`, { agent: false }, (r) => {
            r.resume();
            r.on('end', () => { clearTimeout(timer); resolve(r.statusCode); });
        });
        req.on('error', (err) => { clearTimeout(timer); resolve(`error ${err.message}`); });
    });
}
/**
 * Send `request` and, while it is unanswered, ask /healthz again and again: resolves with the
 * request's answer and how many health checks were answered (200) before it. Every wait is
 * bounded: a health check that gets no answer within 10 s ends the wait.
 */
async function whileRunning(url, request, bound = 60_000) {
    let done = false;
    const settled = request.finally(() => { done = true; });
    let healthy = 0;
    let unanswered = null;
    const deadline = Date.now() + bound;
    while (!done && Date.now() < deadline) {
        const h = await healthz(url);
        if (h === 200) {
            if (!done)
                healthy++;
        }
        else {
            unanswered = String(h);
            break;
        }
    }
    const res = await Promise.race([settled, new Promise((_, reject) => setTimeout(() => reject(new Error(`no answer within ${bound} ms; health: ${unanswered ?? 'answered'}`)), Math.max(1, deadline - Date.now())))]);
    return { res, healthy, unanswered };
}
describe('tree expansion', function () {
    this.timeout(180_000);
    describe('the expanded size over distinct trees', () => {
        it('reads each distinct tree once, whatever the expansion, and sums exactly', async () => {
            const b = bomb(1000, 3);
            const reads = [];
            const size = await expandedSize(b.root, (id) => { reads.push(id); return decodeTree(b.trees.get(id)); }, () => undefined);
            expect(pathsOf(size)).to.equal(bombPaths(1000, 3));
            expect(reads.length).to.equal(b.trees.size);
            // A known size is not read again; the empty tree is 1 (no paths).
            expect(await expandedSize(b.root, () => { throw new Error('read'); }, (id) => (id === b.root ? 7 : undefined))).to.equal(7);
            const empty = encodeTree([]);
            expect(await expandedSize(sha256Hex(empty), () => [], () => undefined)).to.equal(1);
            // Far past 2^53 the sum stays far above any limit.
            const deep = bomb(1000, 12);
            expect(pathsOf(await expandedSize(deep.root, (id) => decodeTree(deep.trees.get(id)), () => undefined))).to.be.greaterThan(1e35);
        });
        it('Pace asks for a pause once 10 ms of work have passed, and a pause lets timers run', async () => {
            const pace = new Pace(10);
            const start = Date.now();
            let asked = false;
            while (!asked && Date.now() - start < 5000)
                asked = pace.tick(64);
            expect(asked).to.equal(true);
            let fired = false;
            setTimeout(() => { fired = true; }, 0);
            await new Promise((r) => setTimeout(r, 1)); // the timer's own turn may come first
            fired = false;
            setImmediate(() => { fired = true; });
            await pace.pause();
            expect(fired).to.equal(true);
        });
    });
    describe('at ingest, over HTTP', () => {
        let s;
        let repo;
        let repoDir;
        before(async () => {
            s = await startTestServer(undefined, { maxSnapshotPaths: 1000 });
            repo = await register(s.url, 'ingest');
            repoDir = path.join(s.dataDir, 'repositories', String(repo));
        });
        after(() => s.stop());
        it('a tree bomb (10^9 paths from 4 trees) is refused with 413 at the commit; nothing is written, no event', async () => {
            const b = bomb(1000, 3);
            await upload(s.url, repo, b);
            const before = await repoFiles(repoDir);
            const events = (await api(s.url, 'GET', R(repo, '/events'))).json;
            const res = await api(s.url, 'POST', SYNC(repo, '/commit'), { json: commitBody(b, 'main') });
            expectError(res, 413);
            expect(res.json.error).to.include(`snapshot ${b.snapshot.snapshot_id} expands to 2,001,001,000 paths, over the limit of 1,000 paths`);
            expect(await repoFiles(repoDir)).to.deep.equal(before);
            expect((await api(s.url, 'GET', R(repo, '/events'))).json).to.deep.equal(events);
            expect((await api(s.url, 'GET', R(repo, '/lines/main'))).status).to.equal(404);
            expect((await api(s.url, 'POST', R(repo, '/snapshots:exists'), { json: { snapshot_ids: [b.snapshot.snapshot_id] } })).json.missing_snapshot_ids).to.deep.equal([b.snapshot.snapshot_id]);
        });
        it('the limit is exact: a snapshot of exactly the limit commits, one path more is 413', async () => {
            // 10 directories of 99 files: 10 + 990 = 1,000 paths.
            const ok = bomb(10, 1, 99, 'ok');
            expect(bombPaths(10, 1, 99)).to.equal(1000);
            const res = await commit(s.url, repo, ok, 'exact');
            expect(res.status, res.text).to.equal(200);
            const over = flat(1001);
            const before = await repoFiles(repoDir);
            const refused = await commit(s.url, repo, over, 'over');
            expectError(refused, 413);
            expect(refused.json.error).to.include('expands to 1,001 paths, over the limit of 1,000');
            // Only the uploads were staged.
            const after = await repoFiles(repoDir);
            expect(Object.keys(after).filter((f) => after[f] !== before[f]).every((f) => f.startsWith('staging/')), Object.keys(after).join()).to.equal(true);
        });
        it('a new tree over the limit is refused even when no snapshot of the commit names it', async () => {
            const b = flat(1500, 'lonely');
            const res = await commit(s.url, repo, b, null, false);
            expectError(res, 413);
            expect(res.json.error).to.include(`tree ${b.root} expands to 1,500 paths`);
        });
        it('each committed tree records its size; a small commit on top of a large stored tree looks it up', async () => {
            const big = bomb(30, 1, 30, 'big'); // 930 paths
            expect((await commit(s.url, repo, big, 'big')).status).to.equal(200);
            const a = await (await s.ready).opened(repo);
            for (const id of big.trees.keys())
                expect(a.store.locator('tree', id).expanded, id).to.be.a('number');
            expect(a.store.locator('tree', big.root).expanded).to.equal(931);
            // Two copies of it are over the limit (from its recorded size); one and a little are not.
            const twice = rootOf({ one: big, two: big });
            const res = await commit(s.url, repo, twice, 'twice');
            expectError(res, 413);
            expect(res.json.error).to.include('expands to 1,862 paths');
            const once = rootOf({ one: big, extra: flat(5, 'e') });
            expect((await commit(s.url, repo, once, 'once')).status).to.equal(200);
            expect(a.store.locator('tree', once.root).expanded).to.equal(1 + 931 + 6);
        });
        it('a land whose merge would exceed the limit is refused (400) and changes nothing; a land within it records its new trees\' sizes', async () => {
            const a = await (await s.ready).opened(repo);
            const PASS = () => ({ refusal: null, policy_decision_id: null });
            a.lands = new LandDesk(a.store, a.workflow, PASS);
            // base: 1 file; ours adds 600 files in one directory, theirs 600 in another: 1,204 paths merged.
            const base = rootOf({ keep: flat(1, 'k') });
            const ours = rootOf({ keep: flat(1, 'k'), left: flat(600, 'l') });
            const theirs = rootOf({ keep: flat(1, 'k'), right: flat(600, 'r') });
            expect((await commit(s.url, repo, base, 'land')).status).to.equal(200);
            for (const b of [ours, theirs])
                expect((await commit(s.url, repo, b)).status).to.equal(200);
            const task = (await api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } })).json.task;
            const change = (await api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: task.task_id, title: 'C', base_line: 'land' } })).json.change;
            const ps = await api(s.url, 'POST', R(repo, `/changes/${change.change_id}/patchsets`), { json: { base_snapshot_id: base.snapshot.snapshot_id, revision_snapshot_id: theirs.snapshot.snapshot_id, summary: 's', author_mode: 'human_only' } });
            expect(ps.status, ps.text).to.equal(200);
            expect((await api(s.url, 'PUT', R(repo, '/lines/land'), { json: { head_snapshot_id: ours.snapshot.snapshot_id } })).status).to.equal(200);
            const before = await repoFiles(repoDir);
            const res = await api(s.url, 'POST', R(repo, `/changes/${change.change_id}:submit`), { json: { mode: 'merge', target_line: 'land' } });
            expectError(res, 400);
            expect(res.json.error).to.match(/^the land of change-\d+\.ps-1 onto [0-9a-f]{64} expands to 1,204 paths, over the limit of 1,000/);
            expect(await repoFiles(repoDir)).to.deep.equal(before);
            // Within the limit: the merged root's size is recorded with it.
            const small = rootOf({ keep: flat(1, 'k'), right: flat(300, 'r') });
            expect((await commit(s.url, repo, small)).status).to.equal(200);
            const ps2 = await api(s.url, 'POST', R(repo, `/changes/${change.change_id}/patchsets`), { json: { base_snapshot_id: base.snapshot.snapshot_id, revision_snapshot_id: small.snapshot.snapshot_id, summary: 's', author_mode: 'human_only' } });
            expect(ps2.status, ps2.text).to.equal(200);
            const selected = await api(s.url, 'POST', R(repo, `/changes/${change.change_id}:selectPatchset`), { json: { patchset_id: ps2.json.patchset.patchset_id } });
            expect(selected.status, selected.text).to.equal(200);
            const landed = await api(s.url, 'POST', R(repo, `/changes/${change.change_id}:submit`), { json: { mode: 'merge', target_line: 'land' } });
            expect(landed.status, landed.text).to.equal(200);
            const head = (await api(s.url, 'GET', R(repo, '/lines/land'))).json.head_snapshot_id;
            const root = a.store.snapshot(head).root_tree_id;
            expect(a.store.locator('tree', root).expanded).to.equal(1 + 2 + 601 + 301);
        });
    });
    describe('the land queue', () => {
        let s;
        before(async () => {
            s = await startTestServer(undefined, { maxSnapshotPaths: 20, queue: { depth: 4, retries: 1, batch: 1, stall_s: 3600 } });
        });
        after(() => s.stop());
        it('a speculation whose merged tree would exceed the limit ejects its entry (reason conflict) instead of holding the line', async () => {
            const f = new Fixture(s, await register(s.url, 'queue'));
            const BASE = { 'a.txt': 'a\n', 'b.txt': 'b\n' };
            const base = await f.snap(BASE, 'main', true);
            const files = (prefix) => Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`${prefix}${i}.txt`, `${prefix}${i}\n`]));
            // Each revision holds 12 paths; both merged would hold 22, over 20.
            const c1 = await f.change(base, { ...BASE, ...files('l') });
            const c2 = await f.change(base, { ...BASE, ...files('r') });
            const [e1, e2] = [await f.enqueue(c1.ref), await f.enqueue(c2.ref)];
            const x2 = await f.entry(e2.entry_id);
            expect(x2.state).to.equal('ejected');
            expect(x2.ejection.reason).to.equal('conflict');
            expect(x2.ejection.message).to.match(/expands to 22 paths, over the limit of 20/);
            const s1 = await f.entry(e1.entry_id);
            await f.runJob(s1.speculation.worker_job_indexes[0], 'pass');
            expect((await f.entry(e1.entry_id)).state).to.equal('landed');
        });
    });
    describe('a store holding a bomb from before the limit', () => {
        const data = path.join(tempDir(), 'data');
        const b = bomb(1000, 3);
        const base = flat(3, 'base');
        const small = flat(4, 'small');
        let repo;
        let repoDir;
        let change;
        let child;
        before(async () => {
            const s = await startTestServer(data);
            repo = await register(s.url, 'planted');
            repoDir = path.join(data, 'repositories', String(repo));
            expect((await commit(s.url, repo, base, 'main')).status).to.equal(200);
            expect((await commit(s.url, repo, small)).status).to.equal(200);
            const task = (await api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } })).json.task;
            change = (await api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: task.task_id, title: 'C', base_line: 'main' } })).json.change.change_id;
            const ps = await api(s.url, 'POST', R(repo, `/changes/${change}/patchsets`), { json: { base_snapshot_id: base.snapshot.snapshot_id, revision_snapshot_id: small.snapshot.snapshot_id, summary: 's', author_mode: 'human_only' } });
            expect(ps.status, ps.text).to.equal(200);
            await s.stop();
            await plant(repoDir, b);
            await plantRevision(repoDir, `${change}.ps-1`, b.snapshot.snapshot_id);
            child = await spawnServer(data, [], true, { NODE_OPTIONS: '--max-old-space-size=300' });
        });
        after(async () => {
            if (child.proc.exitCode === null)
                child.proc.kill('SIGKILL');
            await child.exited;
        });
        it('GET snapshot, the patchset diff and a new patchset naming it answer 400 while /healthz answers; memory stays flat', async () => {
            const start = memoryKiB(child.proc.pid);
            const exp = await whileRunning(child.url, api(child.url, 'GET', R(repo, `/snapshots/${b.snapshot.snapshot_id}?include_content=false`)));
            expect(exp.unanswered).to.equal(null);
            expectError(exp.res, 400);
            expect(exp.res.json.error).to.include(`snapshot ${b.snapshot.snapshot_id} expands to 2,001,001,000 paths`);
            const diff = await whileRunning(child.url, api(child.url, 'GET', R(repo, `/read/patchsets/${change}.ps-1/diff`)));
            expect(diff.unanswered).to.equal(null);
            expectError(diff.res, 400);
            expect(diff.res.json.error).to.include('expands to 2,001,001,000 paths');
            const created = await whileRunning(child.url, api(child.url, 'POST', R(repo, `/changes/${change}/patchsets`), { json: { base_snapshot_id: small.snapshot.snapshot_id, revision_snapshot_id: b.snapshot.snapshot_id, summary: 's2', author_mode: 'human_only' } }));
            expect(created.unanswered).to.equal(null);
            expectError(created.res, 400);
            expect(created.res.json.error).to.include('expands to 2,001,001,000 paths');
            // A land of it never moves a line there (the gates refuse first here: no evidence; the merge's own check is tested above).
            const end = memoryKiB(child.proc.pid);
            expect(end.hwm - start.rss, `RSS ${start.rss} kB → peak ${end.hwm} kB`).to.be.below(150 * 1024);
            expect(await healthz(child.url)).to.equal(200);
        });
        it('cairn pull refuses it before writing anything, whatever the server sends', async () => {
            const out = path.join(tempDir(), 'out');
            const r = await cli(['pull', '--server', child.url, '--repo', String(repo), '--snapshot', b.snapshot.snapshot_id, '--quiet', out]);
            expect(r.code, r.stderr).to.equal(1);
            expect(r.stderr).to.include(`snapshot ${b.snapshot.snapshot_id} expands to 2,001,001,000 paths, over the limit of 10,000,000`);
            expect(existsSync(out)).to.equal(false);
            // The client's own limit decides, not the server's.
            const small2 = await cli(['pull', '--server', child.url, '--repo', String(repo), '--snapshot', small.snapshot.snapshot_id, '--quiet', path.join(tempDir(), 'o2')], { CAIRN_MAX_SNAPSHOT_PATHS: '3' });
            expect(small2.code, small2.stderr).to.equal(1);
            expect(small2.stderr).to.include('expands to 4 paths, over the limit of 3 paths');
        });
        it('fsck reports the snapshot over the limit', async () => {
            child.proc.kill('SIGTERM');
            await child.exited;
            try {
                const r = await cli(['fsck', '--data', data, '--repo', String(repo)]);
                expect(r.code, r.stdout + r.stderr).to.equal(1);
                expect(r.stdout).to.include(`snapshot ${b.snapshot.snapshot_id}: its tree expands to 2,001,001,000 paths, over the limit of 10,000,000`);
                const raised = await cli(['fsck', '--data', data, '--repo', String(repo), '--max-snapshot-paths', '4000000000']);
                expect(raised.code, raised.stdout + raised.stderr).to.equal(0);
            }
            finally {
                child = await spawnServer(data);
            }
        });
        it('a restore of the repository is refused by its check (400), registering nothing', async () => {
            const { manifest, files } = await exportRepo(child.url, repo);
            const start = await api(child.url, 'POST', '/v1/native/repository-restores', { json: { manifest, policy_flags: 0 } });
            expect(start.status, start.text).to.equal(201);
            for (const [p, bytes] of files) {
                const up = await api(child.url, 'PUT', `/v1/native/repository-restores/${start.json.restore_token}/files/${encodeURIComponent(p)}`, { body: bytes, headers: { 'content-type': 'application/vnd.svc.remote-authority-file.v1' } });
                expect(up.status, up.text).to.equal(200);
            }
            const before = await api(child.url, 'GET', '/v1/native/repository-authorities');
            const res = await api(child.url, 'POST', `/v1/native/repository-restores/${start.json.restore_token}/commit`);
            expectError(res, 400);
            expect(res.json.error).to.include(`snapshot ${b.snapshot.snapshot_id}: its tree expands to 2,001,001,000 paths`);
            expect((await api(child.url, 'GET', '/v1/native/repository-authorities')).json).to.deep.equal(before.json);
        });
    });
    describe('a land of a planted bomb (gates passing)', () => {
        it('refuses every mode with 400 before merging or moving the line; nothing is recorded', async () => {
            const data = path.join(tempDir(), 'data');
            const b = bomb(1000, 3);
            const base = flat(3, 'base');
            const small = flat(4, 'small');
            let s = await startTestServer(data);
            const repo = await register(s.url, 'land-bomb');
            const repoDir = path.join(data, 'repositories', String(repo));
            expect((await commit(s.url, repo, base, 'dev')).status).to.equal(200);
            expect((await commit(s.url, repo, small)).status).to.equal(200);
            const task = (await api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } })).json.task;
            const change = (await api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: task.task_id, title: 'C', base_line: 'dev' } })).json.change.change_id;
            expect((await api(s.url, 'POST', R(repo, `/changes/${change}/patchsets`), { json: { base_snapshot_id: base.snapshot.snapshot_id, revision_snapshot_id: small.snapshot.snapshot_id, summary: 's', author_mode: 'human_only' } })).status).to.equal(200);
            await s.stop();
            await plant(repoDir, b);
            await plantRevision(repoDir, `${change}.ps-1`, b.snapshot.snapshot_id);
            s = await startTestServer(data);
            try {
                const a = await (await s.ready).opened(repo);
                a.lands = new LandDesk(a.store, a.workflow, () => ({ refusal: null, policy_decision_id: null }));
                const before = await repoFiles(repoDir);
                for (const mode of ['merge', 'direct', 'ff-only']) {
                    const res = await api(s.url, 'POST', R(repo, `/changes/${change}:submit`), { json: { mode } });
                    expectError(res, 400, mode);
                    expect(res.json.error, mode).to.include(`snapshot ${b.snapshot.snapshot_id} expands to 2,001,001,000 paths`);
                }
                expect(await repoFiles(repoDir)).to.deep.equal(before);
                expect((await api(s.url, 'GET', R(repo, '/lines/dev'))).json.head_snapshot_id).to.equal(base.snapshot.snapshot_id);
            }
            finally {
                await s.stop();
            }
        });
    });
    describe('recorded sizes that lie (a damaged index): every walk still stops at the limit and yields', () => {
        const data = path.join(tempDir(), 'data');
        const b = bomb(1000, 3);
        let repo;
        let child;
        before(async () => {
            const s = await startTestServer(data);
            repo = await register(s.url, 'lies');
            await s.stop();
            await plant(path.join(data, 'repositories', String(repo)), b, 2);
            child = await spawnServer(data, ['--max-snapshot-paths', '2000000']);
        });
        after(async () => {
            if (child.proc.exitCode === null)
                child.proc.kill('SIGKILL');
            await child.exited;
        });
        it('the export walks to the limit, answering /healthz meanwhile, then 400', async () => {
            const start = memoryKiB(child.proc.pid);
            const exp = await whileRunning(child.url, api(child.url, 'GET', R(repo, `/snapshots/${b.snapshot.snapshot_id}?include_content=false`)));
            expect(exp.unanswered).to.equal(null);
            expect(exp.healthy, 'health checks answered while the walk ran').to.be.greaterThan(0);
            expectError(exp.res, 400);
            expect(exp.res.json.error).to.match(/walks more than 2,000,000 paths; stopped/);
            expect(memoryKiB(child.proc.pid).hwm - start.rss).to.be.below(150 * 1024);
        });
        it('fsck reports every recorded size that disagrees with the trees', async () => {
            child.proc.kill('SIGTERM');
            await child.exited;
            const r = await cli(['fsck', '--data', data, '--repo', String(repo)]);
            expect(r.code, r.stdout + r.stderr).to.equal(1);
            expect(r.stdout).to.include(`tree ${b.root}: recorded expanded size 2, its entries give 2001`);
            child = await spawnServer(data);
        });
    });
});
//# sourceMappingURL=tree-expansion.test.js.map