// Lines, snapshots and bulk remote sync over real HTTP (spec: "Lines and snapshots", "Bulk remote
// sync", "Errors", "Limits"). Content is built in memory with buildPack and the canonical
// encoders, so every bad-input case differs from a good one in exactly one field. Every
// rejection also checks that the repository's store is unchanged afterwards.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { blobId, decodeTree, encodeSnapshot, encodeTree, sha256Hex, snapshotId } from '../lib/domain/content.js';
import { buildPack, PACK_KIND_OBJECT, PACK_KIND_TREE } from '../lib/store/pack.js';
import { api, download, fileBytes, register, startTestServer } from './helpers.js';
const COMMIT = 'svc.remote_sync.zstd_bulk.commit.v1';
const IMPORT = 'svc.remote_sync.zstd_bulk.import_manifest.v1';
const PULL_REQUEST = 'svc.remote_sync.zstd_bulk.pull_manifest.request.v1';
const PULL_MANIFEST = 'svc.remote_sync.zstd_bulk.pull_manifest.v1';
const GOVERNED = 'GOVERNED_TARGET_LINE_REQUIRES_LAND';
const MEDIA_OBJECT = 'application/vnd.svc.remote-sync.object-pack+zstd';
const MEDIA_TREE = 'application/vnd.svc.remote-sync.tree-pack+zstd';
const repoPath = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const syncPath = (repo, rest) => repoPath(repo, `/remote-sync/zstd-bulk${rest}`);
/** A well-formed id that nothing in these tests ever stores. */
const fakeId = (label) => sha256Hex(Buffer.from(`cairn-test-absent:${label}`));
let createdClock = 1_700_000_000;
function buildContent(files, opts = {}) {
    const root = new Map();
    for (const [p, data] of Object.entries(files)) {
        const parts = p.split('/');
        let node = root;
        for (const dir of parts.slice(0, -1)) {
            let child = node.get(dir);
            if (!child) {
                child = new Map();
                node.set(dir, child);
            }
            node = child;
        }
        node.set(parts.at(-1), Buffer.isBuffer(data) ? data : Buffer.from(data, 'utf8'));
    }
    const blobs = new Map();
    const trees = new Map();
    const encode = (node) => {
        const entries = [];
        for (const [name, value] of node) {
            if (Buffer.isBuffer(value)) {
                const id = blobId(value);
                blobs.set(id, value);
                entries.push({ name, kind: 'file', id });
            }
            else {
                entries.push({ name, kind: 'directory', id: encode(value) });
            }
        }
        const bytes = encodeTree(entries);
        const id = sha256Hex(bytes);
        trees.set(id, bytes);
        return id;
    };
    const rootTreeId = encode(root);
    const fields = { root_tree_id: rootTreeId, parent_snapshot_ids: opts.parents ?? [], created_at_s: createdClock++, message: opts.message ?? null };
    const exclude = opts.exclude ?? new Set();
    const newBlobs = [...blobs].filter(([id]) => !exclude.has(id)).map(([id, raw]) => ({ id, raw }));
    const newTrees = [...trees].filter(([id]) => !exclude.has(id)).map(([id, raw]) => ({ id, raw }));
    return {
        snapshot: { snapshot_id: snapshotId(fields), ...fields },
        rootTreeId,
        blobs,
        trees,
        objectPack: newBlobs.length ? buildPack(PACK_KIND_OBJECT, newBlobs) : null,
        treePack: newTrees.length ? buildPack(PACK_KIND_TREE, newTrees) : null,
    };
}
const packRow = (p) => ({ pack_id: p.packId, byte_length: p.bytes.length, object_count: p.entries.length });
const locator = (p, e) => ({ pack_id: p.packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32.toString(16).padStart(8, '0') });
function commitBody(c, lineUpdate = null) {
    return {
        contract: COMMIT,
        object_packs: c.objectPack ? [packRow(c.objectPack)] : [],
        tree_packs: c.treePack ? [packRow(c.treePack)] : [],
        blob_locators: c.objectPack ? c.objectPack.entries.map((e) => ({ blob_id: e.id, ...locator(c.objectPack, e) })) : [],
        tree_locators: c.treePack ? c.treePack.entries.map((e) => ({ tree_id: e.id, ...locator(c.treePack, e) })) : [],
        snapshots: [c.snapshot],
        line_update: lineUpdate,
    };
}
const putPack = (server, repo, p, id = p.packId, bytes = p.bytes) => api(server.url, 'PUT', syncPath(repo, `/${p.kind === PACK_KIND_OBJECT ? 'object' : 'tree'}-packs/${id}`), {
    body: bytes,
    headers: { 'content-type': p.kind === PACK_KIND_OBJECT ? MEDIA_OBJECT : MEDIA_TREE },
});
async function uploadPacks(server, repo, c) {
    for (const p of [c.objectPack, c.treePack]) {
        if (!p)
            continue;
        const res = await putPack(server, repo, p);
        expect(res.status, res.text).to.equal(200);
    }
}
const commit = (server, repo, body) => api(server.url, 'POST', syncPath(repo, '/commit'), { json: body });
/** Build, upload and commit a snapshot; the commit must succeed. */
async function store(server, repo, files, opts = {}, lineUpdate = null) {
    const c = buildContent(files, opts);
    await uploadPacks(server, repo, c);
    const res = await commit(server, repo, commitBody(c, lineUpdate));
    expect(res.status, res.text).to.equal(200);
    return c;
}
async function getBytes(server, urlPath) {
    const res = await download(server.url, urlPath);
    return { status: res.status, type: res.headers.get('content-type'), bytes: res.bytes };
}
// ---------------------------------------------------------------- store fingerprints
async function listFiles(dir, prefix = '') {
    let names;
    try {
        names = await fsp.readdir(dir);
    }
    catch {
        return [];
    }
    const out = [];
    for (const name of names.sort()) {
        const full = path.join(dir, name);
        const rel = prefix ? `${prefix}/${name}` : name;
        // A background temp file (a workflow.ckpt being written) may be renamed away between
        // readdir and stat: what is gone by then was never part of the listing.
        const st = await fsp.stat(full).catch((err) => { if (err.code === 'ENOENT')
            return null; throw err; });
        if (st === null)
            continue;
        if (st.isDirectory())
            out.push(`${rel}/`, ...(await listFiles(full, rel)));
        else
            out.push(rel);
    }
    return out;
}
/**
 * Everything a rejected request must leave alone: state.bin bytes (they name every index and
 * lines generation, so index/ itself is left out: a superseded index is removed asynchronously
 * after a successful commit), snapshots.log bytes, every other file name (packs/, staging/,
 * lines files), the lines as served, and the classification of `ids`.
 */
async function fingerprint(server, repo, ids = []) {
    const dir = path.join(server.dataDir, 'repositories', String(repo));
    const lines = await api(server.url, 'GET', repoPath(repo, '/lines'));
    const exists = await api(server.url, 'POST', repoPath(repo, '/snapshots:exists'), { json: { snapshot_ids: ids } });
    return {
        state: (await fileBytes(path.join(dir, 'state.bin')))?.toString('hex') ?? null,
        log: (await fileBytes(path.join(dir, 'snapshots.log')))?.toString('hex') ?? null,
        // workflow.ckpt (and its temp file while written) is a cache rewritten in the background, not what a request changes.
        files: (await listFiles(dir)).filter((f) => !f.startsWith('index/') && !/(^|\/)(\.)?workflow\.ckpt/.test(f)),
        lines: lines.json,
        exists: exists.json,
    };
}
function expectError(res, status, pattern) {
    expect(res.status, res.text).to.equal(status);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    expect(res.json).to.be.an('object');
    expect(res.json.error).to.be.a('string').and.not.equal('');
    if (pattern)
        expect(res.json.error).to.match(pattern);
}
/** Run `fn` and assert the store of `repo` is identical before and after. */
async function unchanged(server, repo, ids, fn) {
    const before = await fingerprint(server, repo, ids);
    const result = await fn();
    const after = await fingerprint(server, repo, ids);
    expect(after).to.deep.equal(before);
    return result;
}
// ---------------------------------------------------------------- tests
describe('content over HTTP', function () {
    this.timeout(60_000);
    let server;
    before(async () => {
        server = await startTestServer();
    });
    after(() => server.stop());
    // -------------------------------------------------------------- lines
    describe('lines', () => {
        let repo;
        let s1;
        let s2;
        const linePath = (name, action = '') => repoPath(repo, `/lines/${encodeURIComponent(name)}${action}`);
        const put = (name, json) => api(server.url, 'PUT', linePath(name), { json });
        before(async () => {
            repo = await register(server.url, 'lines');
            s1 = await store(server, repo, { 'a.txt': 'one\n' });
            s2 = await store(server, repo, { 'a.txt': 'two\n' }, { parents: [s1.snapshot.snapshot_id] });
        });
        it('lists no lines in a fresh repository', async () => {
            const fresh = await register(server.url, 'lines-empty');
            const res = await api(server.url, 'GET', repoPath(fresh, '/lines'));
            expect(res.status).to.equal(200);
            expect(res.json).to.deep.equal({ lines: [], count: 0, next_cursor: null });
        });
        it('answers 404 for an unknown line', async () => {
            const res = await api(server.url, 'GET', linePath('no-such-line'));
            expectError(res, 404);
        });
        it('PUT creates a line whose head is a committed snapshot', async () => {
            const res = await put('created', { head_snapshot_id: s1.snapshot.snapshot_id });
            expect(res.status, res.text).to.equal(200);
            expect(res.json).to.include({ name: 'created', status: 'active', head_snapshot_id: s1.snapshot.snapshot_id });
            const got = await api(server.url, 'GET', linePath('created'));
            expect(got.status).to.equal(200);
            expect(got.json).to.deep.equal(res.json);
            const list = await api(server.url, 'GET', repoPath(repo, '/lines'));
            expect(list.json.lines).to.deep.include(res.json);
        });
        it('PUT with a head snapshot that is not present answers 404 and creates nothing', async () => {
            const absent = fakeId('line-head');
            const res = await unchanged(server, repo, [absent], () => put('ghost', { head_snapshot_id: absent }));
            expectError(res, 404);
            expectError(await api(server.url, 'GET', linePath('ghost')), 404);
        });
        it('PUT with a mismatched expected_head_snapshot_id answers 409 and leaves the line', async () => {
            expect((await put('cas-mismatch', { head_snapshot_id: s1.snapshot.snapshot_id })).status).to.equal(200);
            const res = await unchanged(server, repo, [], () => put('cas-mismatch', { head_snapshot_id: s2.snapshot.snapshot_id, expected_head_snapshot_id: s2.snapshot.snapshot_id }));
            expectError(res, 409);
            expect(res.json.code).to.equal(undefined);
            expect((await api(server.url, 'GET', linePath('cas-mismatch'))).json.head_snapshot_id).to.equal(s1.snapshot.snapshot_id);
            // A guard naming a head on a line that does not exist yet also conflicts.
            const missing = await unchanged(server, repo, [], () => put('cas-new', { head_snapshot_id: s1.snapshot.snapshot_id, expected_head_snapshot_id: s1.snapshot.snapshot_id }));
            expectError(missing, 409);
        });
        it('compare-and-set with expected null succeeds on an empty line, then conflicts', async () => {
            const empty = await put('cas-empty', { head_snapshot_id: null });
            expect(empty.status, empty.text).to.equal(200);
            expect(empty.json).to.include({ name: 'cas-empty', status: 'active', head_snapshot_id: null });
            const moved = await put('cas-empty', { head_snapshot_id: s1.snapshot.snapshot_id, expected_head_snapshot_id: null });
            expect(moved.status, moved.text).to.equal(200);
            expect(moved.json.head_snapshot_id).to.equal(s1.snapshot.snapshot_id);
            const again = await unchanged(server, repo, [], () => put('cas-empty', { head_snapshot_id: s2.snapshot.snapshot_id, expected_head_snapshot_id: null }));
            expectError(again, 409);
            // A line that does not exist has an empty head too.
            const fresh = await put('cas-fresh', { head_snapshot_id: s2.snapshot.snapshot_id, expected_head_snapshot_id: null });
            expect(fresh.status, fresh.text).to.equal(200);
            expect(fresh.json.head_snapshot_id).to.equal(s2.snapshot.snapshot_id);
        });
        it('replaying the current head answers 200 and changes nothing', async () => {
            const first = await put('replay', { head_snapshot_id: s1.snapshot.snapshot_id });
            expect(first.status).to.equal(200);
            const again = await unchanged(server, repo, [], () => put('replay', { head_snapshot_id: s1.snapshot.snapshot_id }));
            expect(again.status, again.text).to.equal(200);
            expect(again.json).to.deep.equal(first.json);
            const guarded = await unchanged(server, repo, [], () => put('replay', { head_snapshot_id: s1.snapshot.snapshot_id, expected_head_snapshot_id: s1.snapshot.snapshot_id }));
            expect(guarded.status, guarded.text).to.equal(200);
            expect(guarded.json).to.deep.equal(first.json);
        });
        it(':close archives by default; an archived line does not move (409)', async () => {
            expect((await put('to-close', { head_snapshot_id: s1.snapshot.snapshot_id })).status).to.equal(200);
            const closed = await api(server.url, 'POST', linePath('to-close', ':close'), { json: {} });
            expect(closed.status, closed.text).to.equal(200);
            expect(closed.json.closed).to.equal(true);
            expect(closed.json.line).to.include({ name: 'to-close', status: 'archived', head_snapshot_id: s1.snapshot.snapshot_id });
            expect((await api(server.url, 'GET', linePath('to-close'))).json.status).to.equal('archived');
            const res = await unchanged(server, repo, [], () => put('to-close', { head_snapshot_id: s2.snapshot.snapshot_id }));
            expectError(res, 409);
            expect((await api(server.url, 'GET', linePath('to-close'))).json).to.include({ status: 'archived', head_snapshot_id: s1.snapshot.snapshot_id });
        });
        it(':close with status "open" answers 400', async () => {
            expect((await put('stay-open', { head_snapshot_id: s1.snapshot.snapshot_id })).status).to.equal(200);
            const res = await unchanged(server, repo, [], () => api(server.url, 'POST', linePath('stay-open', ':close'), { json: { status: 'open' } }));
            expectError(res, 400);
            expect((await api(server.url, 'GET', linePath('stay-open'))).json.status).to.equal('active');
        });
        it(':close of an unknown line answers 404', async () => {
            const res = await unchanged(server, repo, [], () => api(server.url, 'POST', linePath('never-made', ':close'), { json: {} }));
            expectError(res, 404);
            expectError(await api(server.url, 'GET', linePath('never-made')), 404);
        });
        it('a head_snapshot_id that is not 64 lowercase hex characters answers 400', async () => {
            const id = s1.snapshot.snapshot_id;
            for (const bad of ['abc', id.toUpperCase(), `${id}0`, id.slice(1), 'g'.repeat(64), ` ${id.slice(1)}`]) {
                const res = await unchanged(server, repo, [], () => put('bad-head', { head_snapshot_id: bad }));
                expectError(res, 400);
                const guard = await unchanged(server, repo, [], () => put('bad-head', { head_snapshot_id: id, expected_head_snapshot_id: bad }));
                expectError(guard, 400);
            }
            expectError(await api(server.url, 'GET', linePath('bad-head')), 404);
        });
        // Regression: "" once skipped id validation and silently emptied the line.
        it('an empty-string head_snapshot_id answers 400 and changes nothing', async () => {
            expect((await put('empty-string', { head_snapshot_id: s1.snapshot.snapshot_id })).status).to.equal(200);
            const c = buildContent({ 'empty-head.txt': 'empty head' });
            await uploadPacks(server, repo, c);
            const before = await fingerprint(server, repo, [c.snapshot.snapshot_id]);
            expectError(await put('empty-string', { head_snapshot_id: '' }), 400);
            expectError(await put('empty-string-new', { head_snapshot_id: '' }), 400);
            expectError(await put('empty-string', { head_snapshot_id: s2.snapshot.snapshot_id, expected_head_snapshot_id: '' }), 400);
            // The same rule through a commit's line_update: nothing is ingested.
            expectError(await commit(server, repo, commitBody(c, { line_name: 'empty-string-commit', head_snapshot_id: '' })), 400);
            expect(await fingerprint(server, repo, [c.snapshot.snapshot_id])).to.deep.equal(before);
            expect((await api(server.url, 'GET', linePath('empty-string'))).json.head_snapshot_id).to.equal(s1.snapshot.snapshot_id);
        });
        it('a head_snapshot_id of the wrong JSON type answers 422', async () => {
            for (const body of [{ head_snapshot_id: 12345 }, { head_snapshot_id: true }, { head_snapshot_id: [s1.snapshot.snapshot_id] }, { expected_head_snapshot_id: 7 }]) {
                const res = await unchanged(server, repo, [], () => put('typed', body));
                expectError(res, 422);
            }
            expectError(await api(server.url, 'GET', linePath('typed')), 404);
        });
    });
    // -------------------------------------------------------------- governed main
    describe('governed main', () => {
        let repo;
        let s1;
        let s2;
        const mainPath = (name = 'main') => repoPath(repo, `/lines/${name}`);
        before(async () => {
            repo = await register(server.url, 'governed');
            s1 = await store(server, repo, { 'f.txt': 'first\n' });
            s2 = await store(server, repo, { 'f.txt': 'second\n' }, { parents: [s1.snapshot.snapshot_id] });
        });
        it('PUT may bootstrap an empty main and replay its head', async () => {
            const boot = await api(server.url, 'PUT', mainPath(), { json: { head_snapshot_id: s1.snapshot.snapshot_id } });
            expect(boot.status, boot.text).to.equal(200);
            expect(boot.json).to.include({ name: 'main', status: 'active', head_snapshot_id: s1.snapshot.snapshot_id });
            const replay = await unchanged(server, repo, [], () => api(server.url, 'PUT', mainPath(), { json: { head_snapshot_id: s1.snapshot.snapshot_id } }));
            expect(replay.status, replay.text).to.equal(200);
            expect(replay.json).to.deep.equal(boot.json);
        });
        it('PUT moving an initialized main answers 409 GOVERNED_TARGET_LINE_REQUIRES_LAND', async () => {
            for (const body of [
                { head_snapshot_id: s2.snapshot.snapshot_id },
                { head_snapshot_id: s2.snapshot.snapshot_id, expected_head_snapshot_id: s1.snapshot.snapshot_id },
                { head_snapshot_id: null },
            ]) {
                const res = await unchanged(server, repo, [], () => api(server.url, 'PUT', mainPath(), { json: body }));
                expectError(res, 409);
                expect(res.json.code).to.equal(GOVERNED);
                expect(Object.keys(res.json).sort()).to.deep.equal(['code', 'error']);
            }
            expect((await api(server.url, 'GET', mainPath())).json.head_snapshot_id).to.equal(s1.snapshot.snapshot_id);
        });
        it("a commit whose line_update moves main answers 409 with the code and ingests nothing", async () => {
            const s3 = buildContent({ 'f.txt': 'third\n', 'g.txt': 'new\n' }, { parents: [s1.snapshot.snapshot_id] });
            await uploadPacks(server, repo, s3);
            const id = s3.snapshot.snapshot_id;
            const res = await unchanged(server, repo, [id], () => commit(server, repo, commitBody(s3, { line_name: 'main', head_snapshot_id: id, expected_head_snapshot_id: s1.snapshot.snapshot_id })));
            expectError(res, 409);
            expect(res.json.code).to.equal(GOVERNED);
            const exists = await api(server.url, 'POST', repoPath(repo, '/snapshots:exists'), { json: { snapshot_ids: [id] } });
            expect(exists.json.missing_snapshot_ids).to.deep.equal([id]);
            const plan = await api(server.url, 'POST', syncPath(repo, '/plan'), {
                json: { snapshot_ids: [id], object_packs: [s3.objectPack.packId], tree_packs: [s3.treePack.packId] },
            });
            expect(plan.json.missing_snapshot_ids).to.deep.equal([id]);
            // The packs stay staged (present for a retry), not committed: nothing was ingested.
            expect(plan.json.present_object_pack_ids).to.deep.equal([s3.objectPack.packId]);
            expect(plan.json.present_tree_pack_ids).to.deep.equal([s3.treePack.packId]);
            expect(await fsp.readdir(path.join(server.dataDir, `repositories/${repo}/staging/objects`))).to.include(`${s3.objectPack.packId}.pack`);
            expect((await api(server.url, 'GET', mainPath())).json.head_snapshot_id).to.equal(s1.snapshot.snapshot_id);
        });
        it('a commit may bootstrap main in a fresh repository', async () => {
            const fresh = await register(server.url, 'governed-fresh');
            const c = buildContent({ 'boot.txt': 'boot\n' });
            await uploadPacks(server, fresh, c);
            const res = await commit(server, fresh, commitBody(c, { line_name: 'main', head_snapshot_id: c.snapshot.snapshot_id, expected_head_snapshot_id: null }));
            expect(res.status, res.text).to.equal(200);
            expect(res.json.line_head_updated_after_ingest).to.equal(true);
            expect(res.json.remote_line).to.include({ name: 'main', head_snapshot_id: c.snapshot.snapshot_id, status: 'active' });
        });
        it('moving another line (dev) is allowed, by PUT and by commit', async () => {
            const a = await api(server.url, 'PUT', mainPath('dev'), { json: { head_snapshot_id: s1.snapshot.snapshot_id } });
            expect(a.status, a.text).to.equal(200);
            const b = await api(server.url, 'PUT', mainPath('dev'), { json: { head_snapshot_id: s2.snapshot.snapshot_id, expected_head_snapshot_id: s1.snapshot.snapshot_id } });
            expect(b.status, b.text).to.equal(200);
            expect(b.json.head_snapshot_id).to.equal(s2.snapshot.snapshot_id);
            const s4 = buildContent({ 'f.txt': 'fourth\n' }, { parents: [s2.snapshot.snapshot_id] });
            await uploadPacks(server, repo, s4);
            const res = await commit(server, repo, commitBody(s4, { line_name: 'dev', head_snapshot_id: s4.snapshot.snapshot_id, expected_head_snapshot_id: s2.snapshot.snapshot_id }));
            expect(res.status, res.text).to.equal(200);
            expect(res.json.line_head_updated_after_ingest).to.equal(true);
            expect(res.json.remote_line).to.include({ name: 'dev', head_snapshot_id: s4.snapshot.snapshot_id });
            expect((await api(server.url, 'GET', mainPath('dev'))).json.head_snapshot_id).to.equal(s4.snapshot.snapshot_id);
            expect((await api(server.url, 'GET', mainPath())).json.head_snapshot_id).to.equal(s1.snapshot.snapshot_id);
        });
    });
    // -------------------------------------------------------------- snapshots:exists
    describe('snapshots:exists', () => {
        it('classifies present, missing and invalid ids, keeping request order', async () => {
            const repo = await register(server.url, 'exists');
            const a = await store(server, repo, { 'x.txt': 'x' });
            const b = await store(server, repo, { 'y.txt': 'y' });
            const m1 = fakeId('exists-1');
            const m2 = fakeId('exists-2');
            const ids = [m1, b.snapshot.snapshot_id, 'nope', a.snapshot.snapshot_id.toUpperCase(), a.snapshot.snapshot_id, '', m2, `${a.snapshot.snapshot_id}00`];
            const res = await api(server.url, 'POST', repoPath(repo, '/snapshots:exists'), { json: { snapshot_ids: ids } });
            expect(res.status, res.text).to.equal(200);
            expect(res.json).to.deep.equal({
                checked_snapshot_ids: ids,
                present_snapshot_ids: [b.snapshot.snapshot_id, a.snapshot.snapshot_id],
                missing_snapshot_ids: [m1, m2],
                invalid_snapshot_ids: ['nope', a.snapshot.snapshot_id.toUpperCase(), '', `${a.snapshot.snapshot_id}00`],
            });
            const empty = await api(server.url, 'POST', repoPath(repo, '/snapshots:exists'), { json: { snapshot_ids: [] } });
            expect(empty.json).to.deep.equal({ checked_snapshot_ids: [], present_snapshot_ids: [], missing_snapshot_ids: [], invalid_snapshot_ids: [] });
            expectError(await api(server.url, 'POST', repoPath(repo, '/snapshots:exists'), { json: { snapshot_ids: [1] } }), 422);
            expectError(await api(server.url, 'POST', repoPath(repo, '/snapshots:exists'), { json: {} }), 422);
        });
    });
    // -------------------------------------------------------------- export
    describe('snapshot export', () => {
        let repo;
        let c;
        const allBytes = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 7 + (i >> 8)) & 0xff));
        const files = {
            'bin.dat': Buffer.concat([Buffer.from([0x00, 0xff, 0x00, 0x00, 0xfe, 0xff]), allBytes, Buffer.from([0xff, 0x00])]),
            'readme.txt': Buffer.from('hello\r\nworld\n'),
            'sub/inner.txt': Buffer.from('inner'),
            'sub/deeper/z.bin': Buffer.from([0xff, 0x00, 0xff, 0x00]),
        };
        const exportPath = (query = '', id = c.snapshot.snapshot_id) => repoPath(repo, `/snapshots/${id}${query}`);
        const fileOf = (p) => ({ path: p, kind: 'file', blob_id: blobId(files[p]), size: files[p].length });
        const withContent = (p) => ({ ...fileOf(p), encoding: 'base64', content: files[p].toString('base64') });
        const treeAt = (p) => {
            // Tree ids of the directories, recomputed from the built trees.
            let id = c.rootTreeId;
            for (const part of p ? p.split('/') : []) {
                id = decodeTree(c.trees.get(id)).find((e) => e.name === part).id;
            }
            return id;
        };
        before(async () => {
            repo = await register(server.url, 'export');
            c = await store(server, repo, files, { message: 'export fixture' });
        });
        it('exports every file with base64 content by default, byte for byte', async () => {
            const res = await api(server.url, 'GET', exportPath());
            expect(res.status, res.text).to.equal(200);
            const total = Object.values(files).reduce((n, b) => n + b.length, 0);
            expect(res.json.snapshot).to.include({ snapshot_id: c.snapshot.snapshot_id, root_tree_id: c.rootTreeId, created_at_s: c.snapshot.created_at_s, message: 'export fixture' });
            expect(res.json.snapshot.parent_snapshot_ids).to.deep.equal([]);
            expect(res.json).to.include({ path: null, include_content: true, file_count: 4, total_bytes: total });
            expect(res.json.directories).to.deep.equal([
                { path: '', tree_id: c.rootTreeId },
                { path: 'sub', tree_id: treeAt('sub') },
                { path: 'sub/deeper', tree_id: treeAt('sub/deeper') },
            ]);
            expect(res.json.files).to.deep.equal(['bin.dat', 'readme.txt', 'sub/deeper/z.bin', 'sub/inner.txt'].map(withContent));
            for (const f of res.json.files)
                expect(Buffer.from(f.content, 'base64').equals(files[f.path])).to.equal(true);
            const explicit = await api(server.url, 'GET', exportPath('?include_content=true'));
            expect(explicit.json).to.deep.equal(res.json);
        });
        it('include_content=false omits content', async () => {
            const res = await api(server.url, 'GET', exportPath('?include_content=false'));
            expect(res.status, res.text).to.equal(200);
            expect(res.json).to.include({ include_content: false, file_count: 4 });
            expect(res.json.files).to.deep.equal(['bin.dat', 'readme.txt', 'sub/deeper/z.bin', 'sub/inner.txt'].map(fileOf));
            for (const f of res.json.files)
                expect(f).to.not.have.any.keys('content', 'encoding');
        });
        it('path narrows the export to one file', async () => {
            const res = await api(server.url, 'GET', exportPath('?path=bin.dat'));
            expect(res.status, res.text).to.equal(200);
            expect(res.json).to.include({ path: 'bin.dat', file_count: 1, total_bytes: files['bin.dat'].length });
            expect(res.json.directories).to.deep.equal([]);
            expect(res.json.files).to.deep.equal([withContent('bin.dat')]);
            const nested = await api(server.url, 'GET', exportPath(`?path=${encodeURIComponent('sub/deeper/z.bin')}&include_content=false`));
            expect(nested.status, nested.text).to.equal(200);
            expect(nested.json.files).to.deep.equal([fileOf('sub/deeper/z.bin')]);
        });
        it('path narrows the export to a subdirectory', async () => {
            const res = await api(server.url, 'GET', exportPath('?path=sub'));
            expect(res.status, res.text).to.equal(200);
            expect(res.json).to.include({ path: 'sub', file_count: 2, total_bytes: files['sub/inner.txt'].length + files['sub/deeper/z.bin'].length });
            expect(res.json.directories).to.deep.equal([{ path: 'sub', tree_id: treeAt('sub') }, { path: 'sub/deeper', tree_id: treeAt('sub/deeper') }]);
            expect(res.json.files).to.deep.equal([withContent('sub/deeper/z.bin'), withContent('sub/inner.txt')]);
            const slash = await api(server.url, 'GET', exportPath('?path=sub%2F'));
            expect(slash.status, slash.text).to.equal(200);
            expect(slash.json).to.deep.equal(res.json);
        });
        it('a path not in the snapshot answers 404', async () => {
            for (const p of ['nope', 'sub/nope', 'bin.dat/inside', 'sub/deeper/z.bin/x', 'SUB']) {
                expectError(await api(server.url, 'GET', exportPath(`?path=${encodeURIComponent(p)}`)), 404);
            }
        });
        it("a path with '..' (or otherwise unclean) answers 400", async () => {
            for (const p of ['..', '../bin.dat', 'sub/..', 'sub/../bin.dat', './bin.dat', '/bin.dat', 'sub//inner.txt', '']) {
                expectError(await api(server.url, 'GET', exportPath(`?path=${encodeURIComponent(p)}`)), 400);
            }
        });
        it('include_content=maybe answers 400', async () => {
            expectError(await api(server.url, 'GET', exportPath('?include_content=maybe')), 400);
            expectError(await api(server.url, 'GET', exportPath('?include_content=')), 400);
        });
        it('an unknown snapshot answers 404', async () => {
            expectError(await api(server.url, 'GET', exportPath('', fakeId('export'))), 404);
            expectError(await api(server.url, 'GET', exportPath('', 'not-a-snapshot')), 404);
        });
    });
    // -------------------------------------------------------------- bulk sync
    describe('bulk sync', () => {
        let repo;
        before(async () => {
            repo = await register(server.url, 'bulk');
        });
        it('plan classifies snapshots and packs in request order (pack entries as strings or {pack_id})', async () => {
            const a = await store(server, repo, { 'plan-a.txt': 'a' });
            const b = await store(server, repo, { 'plan-b.txt': 'b' });
            const staged = buildContent({ 'plan-staged.txt': 'staged only' });
            await uploadPacks(server, repo, staged);
            const m = fakeId('plan-snapshot');
            const mp = fakeId('plan-pack');
            const res = await api(server.url, 'POST', syncPath(repo, '/plan'), {
                json: {
                    snapshot_ids: [m, b.snapshot.snapshot_id, a.snapshot.snapshot_id],
                    object_packs: [staged.objectPack.packId, { pack_id: b.objectPack.packId }, mp, a.objectPack.packId],
                    tree_packs: [{ pack_id: a.treePack.packId }, mp, b.treePack.packId],
                },
            });
            expect(res.status, res.text).to.equal(200);
            expect(res.json).to.deep.equal({
                checked_snapshot_ids: [m, b.snapshot.snapshot_id, a.snapshot.snapshot_id],
                present_snapshot_ids: [b.snapshot.snapshot_id, a.snapshot.snapshot_id],
                missing_snapshot_ids: [m],
                // A staged (uploaded, verified, uncommitted) pack counts as present: a push resumes.
                present_object_pack_ids: [staged.objectPack.packId, b.objectPack.packId, a.objectPack.packId],
                missing_object_pack_ids: [mp],
                present_tree_pack_ids: [a.treePack.packId, b.treePack.packId],
                missing_tree_pack_ids: [mp],
            });
            // An object pack id asked about as a tree pack is not present.
            const crossed = await api(server.url, 'POST', syncPath(repo, '/plan'), { json: { tree_packs: [a.objectPack.packId] } });
            expect(crossed.json.missing_tree_pack_ids).to.deep.equal([a.objectPack.packId]);
            const empty = await api(server.url, 'POST', syncPath(repo, '/plan'), { json: { snapshot_ids: [], object_packs: [], tree_packs: [] } });
            expect(empty.status).to.equal(200);
            expect(empty.json).to.deep.equal({
                checked_snapshot_ids: [], present_snapshot_ids: [], missing_snapshot_ids: [],
                present_object_pack_ids: [], missing_object_pack_ids: [], present_tree_pack_ids: [], missing_tree_pack_ids: [],
            });
        });
        it('PUT of an object pack with the wrong media type answers 415', async () => {
            const c = buildContent({ 'media.txt': 'media' });
            const p = c.objectPack;
            for (const type of ['application/octet-stream', MEDIA_TREE, 'application/json', `${MEDIA_OBJECT}x`]) {
                const res = await unchanged(server, repo, [], () => api(server.url, 'PUT', syncPath(repo, `/object-packs/${p.packId}`), { body: p.bytes, headers: { 'content-type': type } }));
                expectError(res, 415);
            }
            const none = await unchanged(server, repo, [], () => api(server.url, 'PUT', syncPath(repo, `/object-packs/${p.packId}`), { body: p.bytes }));
            expectError(none, 415);
        });
        it('tree pack bytes uploaded to the object-pack route answer 400', async () => {
            const c = buildContent({ 'kind.txt': 'kind' });
            const t = c.treePack;
            const res = await unchanged(server, repo, [], () => api(server.url, 'PUT', syncPath(repo, `/object-packs/${t.packId}`), { body: t.bytes, headers: { 'content-type': MEDIA_OBJECT } }));
            expectError(res, 400);
            // And object pack bytes on the tree-pack route.
            const o = c.objectPack;
            const res2 = await unchanged(server, repo, [], () => api(server.url, 'PUT', syncPath(repo, `/tree-packs/${o.packId}`), { body: o.bytes, headers: { 'content-type': MEDIA_TREE } }));
            expectError(res2, 400);
        });
        it('an empty pack body answers 400', async () => {
            const id = sha256Hex(Buffer.alloc(0));
            for (const [route, type] of [['object-packs', MEDIA_OBJECT], ['tree-packs', MEDIA_TREE]]) {
                const res = await unchanged(server, repo, [], () => api(server.url, 'PUT', syncPath(repo, `/${route}/${id}`), { body: Buffer.alloc(0), headers: { 'content-type': type } }));
                expectError(res, 400);
            }
        });
        it('a truncated pack answers 400', async () => {
            const c = buildContent({ 'trunc-1.txt': 'x'.repeat(5000), 'trunc-2.txt': 'y'.repeat(3000) });
            const p = c.objectPack;
            for (const cut of [p.bytes.length - 1, p.bytes.length - 10, p.entries[1].offset, p.entries[0].offset, p.entries[0].offset - 3, 20, 5]) {
                const bytes = p.bytes.subarray(0, cut);
                const res = await unchanged(server, repo, [], () => putPack(server, repo, p, sha256Hex(bytes), bytes));
                expectError(res, 400);
            }
            // Bytes after the last object are refused too.
            const longer = Buffer.concat([p.bytes, Buffer.from([0])]);
            expectError(await unchanged(server, repo, [], () => putPack(server, repo, p, sha256Hex(longer), longer)), 400);
        });
        it('a pack id in the path that is not the sha256 of the bytes answers 400', async () => {
            const c = buildContent({ 'mismatch.txt': 'mismatch' });
            for (const p of [c.objectPack, c.treePack]) {
                const res = await unchanged(server, repo, [], () => putPack(server, repo, p, fakeId('mismatch')));
                expectError(res, 400);
            }
            const plan = await api(server.url, 'POST', syncPath(repo, '/plan'), { json: { object_packs: [c.objectPack.packId, fakeId('mismatch')] } });
            expect(plan.json.present_object_pack_ids).to.deep.equal([]);
        });
        it('a pack_id that is not 64 lowercase hex answers 400', async () => {
            const c = buildContent({ 'nothex.txt': 'nothex' });
            const p = c.objectPack;
            for (const bad of ['not-hex', p.packId.toUpperCase(), p.packId.slice(2), `${p.packId}ab`]) {
                const res = await unchanged(server, repo, [], () => putPack(server, repo, p, encodeURIComponent(bad)));
                expectError(res, 400);
            }
        });
        it('re-uploading identical bytes is idempotent (200), staged and committed alike', async () => {
            const c = buildContent({ 'idem.txt': 'idempotent', 'idem/b.txt': 'b' });
            const p = c.objectPack;
            const first = await putPack(server, repo, p);
            expect(first.status, first.text).to.equal(200);
            expect(first.json).to.deep.equal({
                pack_id: p.packId, pack_kind: 'object', media_type: MEDIA_OBJECT, byte_length: p.bytes.length,
                object_count: p.entries.length, sha256: p.packId, state: 'new', committed: false,
            });
            const again = await unchanged(server, repo, [], () => putPack(server, repo, p));
            expect(again.status, again.text).to.equal(200);
            expect(again.json).to.deep.equal({ ...first.json, state: 'staged' });
            const dir = path.join(server.dataDir, 'repositories', String(repo));
            expect((await listFiles(path.join(dir, 'staging', 'objects'))).filter((f) => f.startsWith(p.packId))).to.deep.equal([`${p.packId}.pack`]);
            await uploadPacks(server, repo, c);
            expect((await commit(server, repo, commitBody(c))).status).to.equal(200);
            const committed = await unchanged(server, repo, [], () => putPack(server, repo, p));
            expect(committed.status, committed.text).to.equal(200);
            expect(committed.json).to.deep.equal({ ...first.json, state: 'committed', committed: true });
            // Different bytes under a committed id are still refused.
            const other = Buffer.from(p.bytes);
            other[other.length - 1] ^= 0xff;
            expectError(await unchanged(server, repo, [], () => putPack(server, repo, p, p.packId, other)), 400);
        });
        it('GET of a staged pack returns its bytes (resumable pushes); after commit too, with the media type', async () => {
            const c = buildContent({ 'download/a.bin': Buffer.from([0, 1, 2, 0xff]), 'download/b.txt': 'bee' });
            await uploadPacks(server, repo, c);
            const objectUrl = syncPath(repo, `/object-packs/${c.objectPack.packId}`);
            const treeUrl = syncPath(repo, `/tree-packs/${c.treePack.packId}`);
            const stagedObj = await getBytes(server, objectUrl);
            expect(stagedObj.status).to.equal(200);
            expect(stagedObj.bytes.equals(c.objectPack.bytes)).to.equal(true);
            expect((await getBytes(server, treeUrl)).bytes.equals(c.treePack.bytes)).to.equal(true);
            expectError(await api(server.url, 'GET', syncPath(repo, `/object-packs/${fakeId('never')}`)), 404);
            expectError(await api(server.url, 'GET', syncPath(repo, '/object-packs/not-hex')), 404);
            expect((await commit(server, repo, commitBody(c))).status).to.equal(200);
            const obj = await getBytes(server, objectUrl);
            expect(obj.status).to.equal(200);
            expect(obj.type).to.equal(MEDIA_OBJECT);
            expect(obj.bytes.equals(c.objectPack.bytes)).to.equal(true);
            const tree = await getBytes(server, treeUrl);
            expect(tree.status).to.equal(200);
            expect(tree.type).to.equal(MEDIA_TREE);
            expect(tree.bytes.equals(c.treePack.bytes)).to.equal(true);
            // A tree pack is not served from the object-pack route.
            expectError(await api(server.url, 'GET', syncPath(repo, `/object-packs/${c.treePack.packId}`)), 404);
        });
        it('a commit with the wrong contract answers 400', async () => {
            const c = buildContent({ 'contract.txt': 'contract' });
            await uploadPacks(server, repo, c);
            const ids = [c.snapshot.snapshot_id];
            for (const contract of ['svc.remote_sync.zstd_bulk.commit.v2', IMPORT, '']) {
                const res = await unchanged(server, repo, ids, () => commit(server, repo, { ...commitBody(c), contract }));
                expectError(res, 400);
            }
            const { contract: _omit, ...noContract } = commitBody(c);
            expectError(await unchanged(server, repo, ids, () => commit(server, repo, noContract)), 422);
        });
        it('a commit referencing a pack never uploaded answers 404', async () => {
            const c = buildContent({ 'never-uploaded.txt': 'never' });
            await putPack(server, repo, c.treePack);
            const ids = [c.snapshot.snapshot_id];
            expectError(await unchanged(server, repo, ids, () => commit(server, repo, commitBody(c))), 404);
            // A locator naming a pack neither listed nor committed is the same.
            const unlisted = { ...commitBody(c), object_packs: [] };
            expectError(await unchanged(server, repo, ids, () => commit(server, repo, unlisted)), 404);
        });
        it('a commit listing many packs answers the first bad row in row order, and the server stays healthy', async () => {
            const c = buildContent({ 'many-packs.txt': 'many' });
            await uploadPacks(server, repo, c);
            const ids = [c.snapshot.snapshot_id];
            const good = commitBody(c).object_packs[0];
            const wrongLength = { ...good, byte_length: good.byte_length + 1 };
            const missing = Array.from({ length: 5000 }, (_, i) => ({ pack_id: fakeId(`missing-pack-${i}`) }));
            // A pack row that disagrees with the staged pack, then thousands never uploaded: 409 for the first.
            expectError(await unchanged(server, repo, ids, () => commit(server, repo, { ...commitBody(c), object_packs: [wrongLength, ...missing] })), 409, /is \d+ bytes, the row says/);
            // The other way round: 404 naming the first missing pack.
            expectError(await unchanged(server, repo, ids, () => commit(server, repo, { ...commitBody(c), object_packs: [...missing, wrongLength] })), 404, new RegExp(missing[0].pack_id));
            expectError(await unchanged(server, repo, ids, () => commit(server, repo, { ...commitBody(c), object_packs: [{ pack_id: 'not-an-id' }, ...missing] })), 400);
            expect((await commit(server, repo, commitBody(c))).status).to.equal(200);
        });
        it('a snapshot row whose root tree is missing answers 404', async () => {
            const fields = { root_tree_id: fakeId('root-tree'), parent_snapshot_ids: [], created_at_s: 1_600_000_000, message: null };
            const row = { snapshot_id: snapshotId(fields), ...fields };
            const ids = [row.snapshot_id];
            const res = await unchanged(server, repo, ids, () => commit(server, repo, { contract: COMMIT, snapshots: [row] }));
            expectError(res, 404);
            // A missing parent is the same.
            const existing = await store(server, repo, { 'parent-missing.txt': 'p' });
            const f2 = { root_tree_id: existing.rootTreeId, parent_snapshot_ids: [fakeId('parent')], created_at_s: 1_600_000_001, message: null };
            const row2 = { snapshot_id: snapshotId(f2), ...f2 };
            expectError(await unchanged(server, repo, [row2.snapshot_id], () => commit(server, repo, { contract: COMMIT, snapshots: [row2] })), 404);
        });
        it('a snapshot row whose snapshot_id does not hash from its fields answers 400', async () => {
            const c = buildContent({ 'hash.txt': 'hash' }, { message: 'm' });
            await uploadPacks(server, repo, c);
            const ids = [c.snapshot.snapshot_id];
            const variants = [
                { ...c.snapshot, created_at_s: c.snapshot.created_at_s + 1 },
                { ...c.snapshot, message: 'other' },
                { ...c.snapshot, message: null },
                { ...c.snapshot, snapshot_id: fakeId('hash') },
            ];
            for (const row of variants) {
                const res = await unchanged(server, repo, [...ids, row.snapshot_id], () => commit(server, repo, { ...commitBody(c), snapshots: [row] }));
                expectError(res, 400);
            }
            // The canonical encoding is what hashes: recomputing it gives the row's id.
            expect(sha256Hex(encodeSnapshot(c.snapshot))).to.equal(c.snapshot.snapshot_id);
        });
        it('a tree whose child blob is missing answers 404', async () => {
            const c = buildContent({ 'orphan/child.txt': 'no blob uploaded' });
            await putPack(server, repo, c.treePack);
            const body = { ...commitBody(c), object_packs: [], blob_locators: [] };
            const ids = [c.snapshot.snapshot_id];
            expectError(await unchanged(server, repo, ids, () => commit(server, repo, body)), 404);
            // Without the snapshot row too: the tree alone is still refused.
            expectError(await unchanged(server, repo, ids, () => commit(server, repo, { ...body, snapshots: [] })), 404);
        });
        it('locator rows that disagree with the pack header answer 409', async () => {
            const c = buildContent({ 'loc-1.txt': 'one', 'loc-2.txt': 'two' });
            await uploadPacks(server, repo, c);
            const good = commitBody(c);
            const ids = [c.snapshot.snapshot_id];
            const mutate = (change) => ({ ...good, blob_locators: [{ ...good.blob_locators[0], ...change }, ...good.blob_locators.slice(1)] });
            const l0 = good.blob_locators[0];
            for (const change of [{ offset: l0.offset + 1 }, { offset: good.blob_locators[1].offset }, { length: l0.length + 1 }, { raw_length: l0.raw_length + 1 }, { crc32: ((Number.parseInt(l0.crc32, 16) ^ 1) >>> 0).toString(16).padStart(8, '0') }]) {
                const res = await unchanged(server, repo, ids, () => commit(server, repo, mutate(change)));
                expectError(res, 409);
            }
            const treeOff = { ...good, tree_locators: [{ ...good.tree_locators[0], offset: good.tree_locators[0].offset + 1 }] };
            expectError(await unchanged(server, repo, ids, () => commit(server, repo, treeOff)), 409);
            // The pack rows' own integrity fields are checked the same way.
            const badRow = { ...good, object_packs: [{ ...good.object_packs[0], byte_length: good.object_packs[0].byte_length + 1 }] };
            expectError(await unchanged(server, repo, ids, () => commit(server, repo, badRow)), 409);
            expect((await commit(server, repo, good)).status).to.equal(200);
        });
        it('a commit reports upserted and skipped counts; the same rows again are all skipped', async () => {
            const c = buildContent({ 'count/a.txt': 'count a', 'count/b.txt': 'count b', 'count/deep/c.txt': 'count c', 'top.txt': 'count top' });
            await uploadPacks(server, repo, c);
            const body = commitBody(c);
            const first = await commit(server, repo, body);
            expect(first.status, first.text).to.equal(200);
            const counts = { object_packs: 1, tree_packs: 1, blobs: 4, trees: 3, snapshots: 1 };
            const zero = { object_packs: 0, tree_packs: 0, blobs: 0, trees: 0, snapshots: 0 };
            expect(first.json).to.deep.equal({
                contract: COMMIT, upserted: counts, skipped: zero, remote_line: null, line_head_updated_after_ingest: false, raw_binary_upload: true,
            });
            const before = await fingerprint(server, repo, [c.snapshot.snapshot_id]);
            const second = await commit(server, repo, body);
            expect(second.status, second.text).to.equal(200);
            expect(second.json).to.deep.equal({
                contract: COMMIT, upserted: zero, skipped: counts, remote_line: null, line_head_updated_after_ingest: false, raw_binary_upload: true,
            });
            expect(await fingerprint(server, repo, [c.snapshot.snapshot_id])).to.deep.equal(before);
            expect(before.exists.present_snapshot_ids).to.deep.equal([c.snapshot.snapshot_id]);
        });
    });
    // -------------------------------------------------------------- manifests
    describe('manifests', () => {
        let source;
        let s1;
        let s2;
        const s1Files = { 'keep.txt': 'kept\n', 'dir/same.txt': 'same\n', 'dir/bytes.bin': Buffer.from([0, 0xff, 0, 0xff]) };
        const s2Files = { 'keep.txt': 'changed\n', 'dir/same.txt': 'same\n', 'dir/bytes.bin': Buffer.from([0, 0xff, 0, 0xff]), 'added.txt': 'new file\n' };
        before(async () => {
            source = await register(server.url, 'manifest-source');
            s1 = await store(server, source, s1Files, { message: 'first' });
            s2 = await store(server, source, s2Files, { parents: [s1.snapshot.snapshot_id], message: 'second', exclude: new Set([...s1.blobs.keys(), ...s1.trees.keys()]) });
        });
        it('import manifest rows, passed unchanged to another repository, reproduce the snapshot', async () => {
            const res = await api(server.url, 'GET', syncPath(source, `/import-manifests/${s2.snapshot.snapshot_id}`));
            expect(res.status, res.text).to.equal(200);
            const m = res.json;
            expect(m).to.include({ contract: IMPORT, repo_name: 'manifest-source', snapshot_id: s2.snapshot.snapshot_id, line_update: null });
            expect(m.snapshots).to.deep.equal([s1.snapshot, s2.snapshot]);
            expect(m.object_packs.map((p) => p.pack_id).sort()).to.deep.equal([s1.objectPack.packId, s2.objectPack.packId].sort());
            expect(m.tree_packs.map((p) => p.pack_id).sort()).to.deep.equal([s1.treePack.packId, s2.treePack.packId].sort());
            expect(m.blob_locators.map((l) => l.blob_id).sort()).to.deep.equal([...new Set([...s1.blobs.keys(), ...s2.blobs.keys()])].sort());
            expect(m.tree_locators.map((l) => l.tree_id).sort()).to.deep.equal([...new Set([...s1.trees.keys(), ...s2.trees.keys()])].sort());
            const dest = await register(server.url, 'manifest-dest');
            for (const [route, media, rows] of [['object-packs', MEDIA_OBJECT, m.object_packs], ['tree-packs', MEDIA_TREE, m.tree_packs]]) {
                for (const row of rows) {
                    const got = await getBytes(server, syncPath(source, `/${route}/${row.pack_id}`));
                    expect(got.status).to.equal(200);
                    const put = await api(server.url, 'PUT', syncPath(dest, `/${route}/${row.pack_id}`), { body: got.bytes, headers: { 'content-type': media } });
                    expect(put.status, put.text).to.equal(200);
                }
            }
            const { contract: _c, repo_name: _r, snapshot_id: _s, ...rows } = m;
            const committed = await commit(server, dest, { contract: COMMIT, ...rows });
            expect(committed.status, committed.text).to.equal(200);
            expect(committed.json.upserted).to.deep.equal({
                object_packs: m.object_packs.length, tree_packs: m.tree_packs.length, blobs: m.blob_locators.length, trees: m.tree_locators.length, snapshots: 2,
            });
            for (const id of [s1.snapshot.snapshot_id, s2.snapshot.snapshot_id]) {
                const a = await api(server.url, 'GET', repoPath(source, `/snapshots/${id}`));
                const b = await api(server.url, 'GET', repoPath(dest, `/snapshots/${id}`));
                expect(a.status).to.equal(200);
                expect(b.status, b.text).to.equal(200);
                expect(b.json).to.deep.equal(a.json);
            }
            // The destination's own import manifest describes the same rows.
            const again = await api(server.url, 'GET', syncPath(dest, `/import-manifests/${s2.snapshot.snapshot_id}`));
            expect({ ...again.json, repo_name: 'manifest-source' }).to.deep.equal(m);
        });
        it('an import manifest of an unknown snapshot answers 404', async () => {
            expectError(await api(server.url, 'GET', syncPath(source, `/import-manifests/${fakeId('import')}`)), 404);
        });
        const pull = (json) => api(server.url, 'POST', syncPath(source, '/pull-manifests'), { json });
        it('pull-manifests with the wrong contract answers 400', async () => {
            for (const contract of [COMMIT, PULL_MANIFEST, `${PULL_REQUEST}x`]) {
                expectError(await pull({ contract, head_snapshot_id: s2.snapshot.snapshot_id, have_snapshot_ids: [] }), 400);
            }
        });
        it('pull-manifests with duplicate have ids answers 400', async () => {
            const id = s1.snapshot.snapshot_id;
            expectError(await pull({ contract: PULL_REQUEST, head_snapshot_id: s2.snapshot.snapshot_id, have_snapshot_ids: [id, fakeId('dup'), id] }), 400);
        });
        it('pull-manifests with 100,001 have ids answers 400 (100,000 are accepted)', async () => {
            const ids = Array.from({ length: 100_001 }, (_, i) => sha256Hex(Buffer.from(`have-${i}`)));
            const over = await pull({ contract: PULL_REQUEST, head_snapshot_id: s2.snapshot.snapshot_id, have_snapshot_ids: ids });
            expectError(over, 400);
            const at = await pull({ contract: PULL_REQUEST, head_snapshot_id: s2.snapshot.snapshot_id, have_snapshot_ids: ids.slice(0, 100_000) });
            expect(at.status, at.text.slice(0, 300)).to.equal(200);
            expect(at.json.snapshots.map((s) => s.snapshot_id)).to.deep.equal([s1.snapshot.snapshot_id, s2.snapshot.snapshot_id]);
            expect(at.json.boundary_snapshot_ids).to.deep.equal([]);
        });
        it('a have id equal to the parent yields only the head row and boundary [parent]', async () => {
            const res = await pull({ contract: PULL_REQUEST, head_snapshot_id: s2.snapshot.snapshot_id, have_snapshot_ids: [s1.snapshot.snapshot_id] });
            expect(res.status, res.text).to.equal(200);
            const m = res.json;
            expect(m).to.include({ contract: PULL_MANIFEST, repo_name: 'manifest-source', head_snapshot_id: s2.snapshot.snapshot_id, snapshot_id: s2.snapshot.snapshot_id, line_update: null });
            expect(m.snapshots).to.deep.equal([s2.snapshot]);
            expect(m.boundary_snapshot_ids).to.deep.equal([s1.snapshot.snapshot_id]);
            // Only what S2 adds: its objects that S1 does not have, from S2's packs.
            const newBlobs = [...s2.blobs.keys()].filter((id) => !s1.blobs.has(id)).sort();
            const newTrees = [...s2.trees.keys()].filter((id) => !s1.trees.has(id)).sort();
            expect(m.blob_locators.map((l) => l.blob_id).sort()).to.deep.equal(newBlobs);
            expect(m.tree_locators.map((l) => l.tree_id).sort()).to.deep.equal(newTrees);
            expect(m.object_packs).to.deep.equal([packRow(s2.objectPack)]);
            expect(m.tree_packs).to.deep.equal([packRow(s2.treePack)]);
            // With no haves the pull manifest carries the import manifest's rows.
            const full = await pull({ contract: PULL_REQUEST, head_snapshot_id: s2.snapshot.snapshot_id });
            const imp = await api(server.url, 'GET', syncPath(source, `/import-manifests/${s2.snapshot.snapshot_id}`));
            expect(full.status, full.text).to.equal(200);
            const { contract: _a, head_snapshot_id: _h, boundary_snapshot_ids: boundary, ...fullRows } = full.json;
            const { contract: _b, ...impRows } = imp.json;
            expect(boundary).to.deep.equal([]);
            expect(fullRows).to.deep.equal(impRows);
        });
    });
});
//# sourceMappingURL=content-http.test.js.map