// Tree depth (docs/operations.md "Tree depth", lib/domain/tree-depth.ts): a chain of directories
// thousands deep is a few hundred KiB of trees. Every ingest path refuses a path deeper than
// MAX_TREE_DEPTH (400 naming the limit and the path, nothing written): the native commit, POST
// git/imports, cairn import-git and git push for review, including a new tree that is only too
// deep through a stored tree below it. A store holding a deeper tree from before the rule
// (written here with the store API, below every check) still answers every read that walks it:
// both diff routes, a new patchset's tree diff, the export, the file route, the git export and
// fsck, with no stack overflow, no 500 and no dropped connection.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { blobId, decodeTree, encodeSnapshot, encodeTree, sha256Hex, snapshotId } from '../lib/domain/content.js';
import { PATCHSET } from '../lib/domain/workflow/rules.js';
import { mergeTrees } from '../lib/domain/workflow/merge.js';
import { ContentStore } from '../lib/store/content-store.js';
import { buildPack, PACK_KIND_OBJECT, PACK_KIND_TREE } from '../lib/store/pack.js';
import { importGit } from '../lib/client/git-import.js';
import { NO_PROGRESS } from '../lib/client/progress.js';
import { api, cli, expectError, ok, register, repoFiles, spawnServer, startTestServer, tempDir } from './helpers.js';
import { commit as gitCommit, git, hasGit } from './git-fixture.js';
import { findTooDeep, MAX_TREE_DEPTH, pathDepth } from '../lib/domain/tree-depth.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const SYNC = (repo, rest) => R(repo, `/remote-sync/zstd-bulk${rest}`);
const COMMIT = 'svc.remote_sync.zstd_bulk.commit.v1';
const MEDIA = { [PACK_KIND_OBJECT]: 'application/vnd.svc.remote-sync.object-pack+zstd', [PACK_KIND_TREE]: 'application/vnd.svc.remote-sync.tree-pack+zstd' };
const LIMIT = MAX_TREE_DEPTH.toLocaleString('en-US');
let clock = 1_700_000_000;
function built(root, trees, blobs) {
    const fields = { root_tree_id: root, parent_snapshot_ids: [], created_at_s: clock++, message: null };
    return {
        root,
        trees,
        blobs,
        snapshot: { snapshot_id: snapshotId(fields), ...fields },
        objectPack: buildPack(PACK_KIND_OBJECT, [...blobs].map(([id, raw]) => ({ id, raw }))),
        treePack: buildPack(PACK_KIND_TREE, [...trees].map(([id, raw]) => ({ id, raw }))),
    };
}
const tree = (trees, entries) => {
    const raw = encodeTree(entries);
    const id = sha256Hex(raw);
    trees.set(id, raw);
    return id;
};
/** The path of chain(depth): `depth - 1` directories named `d`, then the file `f` (`depth` levels). */
const chainPath = (depth) => `${'d/'.repeat(depth - 1)}f`;
/**
 * A snapshot whose one path is chainPath(depth), holding `text`, beside `top.txt`; `below`: a
 * stored tree to put at the bottom instead of the file (the chain then adds `depth` directories).
 */
function chain(depth, text = 'deep\n', below) {
    const trees = new Map();
    const blob = Buffer.from(text);
    const top = Buffer.from('top\n');
    const blobs = new Map([[blobId(blob), blob], [blobId(top), top]]);
    let id = below ?? tree(trees, [{ name: 'f', kind: 'file', id: blobId(blob) }]);
    for (let i = below ? 0 : 1; i < depth - 1; i++)
        id = tree(trees, [{ name: 'd', kind: 'directory', id }]);
    const root = tree(trees, [{ name: 'd', kind: 'directory', id }, { name: 'top.txt', kind: 'file', id: blobId(top) }]);
    return built(root, trees, blobs);
}
/** A snapshot of one file. */
function flat(text) {
    const trees = new Map();
    const blob = Buffer.from(text);
    const top = Buffer.from('top\n');
    const root = tree(trees, [{ name: 'a.txt', kind: 'file', id: blobId(blob) }, { name: 'top.txt', kind: 'file', id: blobId(top) }]);
    return built(root, trees, new Map([[blobId(blob), blob], [blobId(top), top]]));
}
const putPack = (url, repo, p) => api(url, 'PUT', SYNC(repo, `/${p.kind === PACK_KIND_OBJECT ? 'object' : 'tree'}-packs/${p.packId}`), { body: p.bytes, headers: { 'content-type': MEDIA[p.kind] } });
const locator = (p, e) => ({ pack_id: p.packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32.toString(16).padStart(8, '0') });
function commitBody(b, line) {
    return {
        contract: COMMIT,
        object_packs: [{ pack_id: b.objectPack.packId }],
        tree_packs: [{ pack_id: b.treePack.packId }],
        blob_locators: b.objectPack.entries.map((e) => ({ blob_id: e.id, ...locator(b.objectPack, e) })),
        tree_locators: b.treePack.entries.map((e) => ({ tree_id: e.id, ...locator(b.treePack, e) })),
        snapshots: [b.snapshot],
        line_update: line ? { line_name: line, head_snapshot_id: b.snapshot.snapshot_id, expected_head_snapshot_id: null } : null,
    };
}
async function upload(url, repo, b) {
    for (const p of [b.objectPack, b.treePack]) {
        const res = await putPack(url, repo, p);
        expect(res.status, res.text).to.equal(200);
    }
}
async function commit(url, repo, b, line = null) {
    await upload(url, repo, b);
    return api(url, 'POST', SYNC(repo, '/commit'), { json: commitBody(b, line) });
}
/** Store `b` below every check of the server, as a store written before the rule holds it. */
async function plant(repoDir, b) {
    const { store } = await ContentStore.open(repoDir);
    try {
        await store.transact((tx) => {
            for (const p of [b.objectPack, b.treePack]) {
                tx.writePack(p.kind, p.packId, p.bytes);
                for (const e of p.entries)
                    tx.addLocator({ kind: p.kind === PACK_KIND_OBJECT ? 'blob' : 'tree', id: e.id, pack_id: p.packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32 });
            }
            tx.addSnapshot(encodeSnapshot(b.snapshot));
        });
    }
    finally {
        store.close();
    }
}
/** Make a stored patchset name `revision` (a patchset recorded before the rule existed). */
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
/** A change on `line` with a patchset base → revision; its id. */
async function changeOf(url, repo, line, base, revision) {
    const task = (await ok(api(url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } }))).task;
    const change = (await ok(api(url, 'POST', R(repo, '/changes'), { json: { task_id: task.task_id, title: 'C', base_line: line } }))).change.change_id;
    await ok(api(url, 'POST', R(repo, `/changes/${change}/patchsets`), { json: { base_snapshot_id: base, revision_snapshot_id: revision, summary: 's', author_mode: 'human_only' } }));
    return change;
}
/** Every diff route on `change` answers 200 and shows the file at `deepPath` (added, with its text). */
async function expectDiffsAnswer(url, repo, change, deepPath, text) {
    const routes = [R(repo, `/read/patchsets/${change}.ps-1/diff`), R(repo, `/read/changes/${change}/diff`)];
    for (const route of routes) {
        const json = await api(url, 'GET', route);
        expect(json.status, `${route}: ${json.text.slice(0, 300)}`).to.equal(200);
        const file = json.json.files.find((f) => f.path === deepPath);
        expect(file, route).to.not.equal(undefined);
        expect(file.change).to.equal('added');
        expect(file.hunks[0].lines).to.deep.equal([`+${text}`]);
        const narrowed = await api(url, 'GET', `${route}?renames=false&path=${encodeURIComponent(deepPath)}`);
        expect(narrowed.status, narrowed.text.slice(0, 300)).to.equal(200);
        expect(narrowed.json.files.map((f) => f.path)).to.deep.equal([deepPath]);
        const unified = await api(url, 'GET', `${route}?format=unified`);
        expect(unified.status, unified.text.slice(0, 300)).to.equal(200);
        expect(unified.text).to.include(`+++ b/${deepPath}\n`);
    }
}
describe('tree depth', function () {
    this.timeout(300_000);
    describe('the rule (lib/domain/tree-depth.ts)', () => {
        const read = (b) => (id) => decodeTree(b.trees.get(id));
        it('a path is as deep as its segments; a chain exactly at the limit passes, one level more is named', async () => {
            expect(pathDepth('a/b/cde/f')).to.equal(4);
            const at = chain(MAX_TREE_DEPTH);
            expect(await findTooDeep(at.root, read(at), () => undefined)).to.equal(null);
            const over = chain(MAX_TREE_DEPTH + 1);
            expect(await findTooDeep(over.root, read(over), () => undefined)).to.equal(chainPath(MAX_TREE_DEPTH + 1));
            // 3,000 levels: an iterative walk, no stack overflow.
            const deep = chain(3000);
            expect(await findTooDeep(deep.root, read(deep), () => undefined)).to.equal(`${'d/'.repeat(MAX_TREE_DEPTH)}d`);
        });
        it('a subtree whose path count already rules out a too-deep path is not read', async () => {
            const b = chain(MAX_TREE_DEPTH);
            const reads = [];
            // The tree below the root has at most 1,023 paths, so it is at most that deep: not read.
            const below = decodeTree(b.trees.get(b.root)).find((e) => e.name === 'd').id;
            const result = await findTooDeep(b.root, (id) => { reads.push(id); return decodeTree(b.trees.get(id)); }, (id) => (id === below ? MAX_TREE_DEPTH - 1 : undefined));
            expect(result).to.equal(null);
            expect(reads).to.deep.equal([b.root]);
            // A known bound is used (and kept) the same way.
            const kept = new Map();
            expect(await findTooDeep(b.root, read(b), () => undefined, (id, d) => kept.set(id, d))).to.equal(null);
            expect(kept.get(b.root)).to.equal(MAX_TREE_DEPTH);
        });
    });
    it('a three-way merge of 3,000-deep trees changed on both sides at the bottom merges (no frame per level)', async () => {
        const trees = new Map();
        const blobs = new Map();
        const leaf = (files) => {
            const entries = Object.entries(files).map(([name, text]) => {
                blobs.set(blobId(Buffer.from(text)), Buffer.from(text));
                return { name, kind: 'file', id: blobId(Buffer.from(text)) };
            });
            let id = tree(trees, entries);
            for (let i = 0; i < 2999; i++)
                id = tree(trees, [{ name: 'd', kind: 'directory', id }]);
            return id;
        };
        const base = leaf({ f: 'one\n' });
        const ours = leaf({ f: 'two\n' });
        const theirs = leaf({ f: 'one\n', g: 'new\n' });
        const reader = { readTree: async (id) => decodeTree(trees.get(id)), readBlob: async (id) => blobs.get(id) };
        const merged = await mergeTrees(reader, base, ours, theirs, 'merge');
        expect(merged.conflicts).to.deep.equal([]);
        expect(merged.root_tree_id).to.equal(leaf({ f: 'two\n', g: 'new\n' }));
    });
    describe('at ingest, over HTTP', () => {
        let s;
        let repo;
        let repoDir;
        before(async () => {
            s = await startTestServer();
            repo = await register(s.url, 'ingest');
            repoDir = path.join(s.dataDir, 'repositories', String(repo));
        });
        after(() => s.stop());
        it('a 3,000-deep tree is refused (400) at the commit and at POST git/imports, naming the limit and the path; nothing is written', async () => {
            const b = chain(3000);
            await upload(s.url, repo, b);
            const before = await repoFiles(repoDir);
            const res = await api(s.url, 'POST', SYNC(repo, '/commit'), { json: commitBody(b, 'main') });
            expectError(res, 400);
            expect(res.json.error).to.include(`deeper than the limit of ${LIMIT} levels`);
            expect(res.json.error).to.include(`"d/d/d/d/d/`);
            expect(res.json.error).to.include(`level ${(MAX_TREE_DEPTH + 1).toLocaleString('en-US')}`);
            const imported = await api(s.url, 'POST', R(repo, '/git/imports'), { json: { commit: commitBody(b, 'main'), git_commits: [] } });
            expectError(imported, 400);
            expect(imported.json.error).to.include(`deeper than the limit of ${LIMIT} levels`);
            expect(await repoFiles(repoDir)).to.deep.equal(before);
            expect((await api(s.url, 'GET', R(repo, '/lines/main'))).status).to.equal(404);
            expect((await api(s.url, 'POST', R(repo, '/snapshots:exists'), { json: { snapshot_ids: [b.snapshot.snapshot_id] } })).json.missing_snapshot_ids).to.deep.equal([b.snapshot.snapshot_id]);
        });
        it('a tree exactly at the limit commits, and both diff routes answer on it', async () => {
            const base = flat('base\n');
            expect((await commit(s.url, repo, base, 'exact')).status).to.equal(200);
            const at = chain(MAX_TREE_DEPTH, 'at the limit\n');
            const res = await commit(s.url, repo, at);
            expect(res.status, res.text).to.equal(200);
            const change = await changeOf(s.url, repo, 'exact', base.snapshot.snapshot_id, at.snapshot.snapshot_id);
            await expectDiffsAnswer(s.url, repo, change, chainPath(MAX_TREE_DEPTH), 'at the limit');
        });
        it('a new tree that is too deep only through the stored tree below it is refused', async () => {
            // Stored: 1,000 levels. New: 100 directories above it (1,101 levels with the root's).
            const stored = chain(1000, 'stored\n');
            expect((await commit(s.url, repo, stored)).status).to.equal(200);
            const storedBelow = decodeTree(stored.trees.get(stored.root)).find((e) => e.name === 'd').id;
            const stacked = chain(100, 'x\n', storedBelow);
            const res = await commit(s.url, repo, stacked, 'stacked');
            expectError(res, 400);
            expect(res.json.error).to.include(`deeper than the limit of ${LIMIT} levels`);
            expect((await api(s.url, 'GET', R(repo, '/lines/stacked'))).status).to.equal(404);
        });
    });
    (hasGit ? describe : describe.skip)('git: cairn import-git and push for review', () => {
        let child;
        let repo;
        let src;
        let deepCommit;
        const DEEP = chainPath(3000);
        before(async () => {
            src = path.join(tempDir('cairn-git-'), 'src');
            await fsp.mkdir(src, { recursive: true });
            git(src, ['init', '-q', '-b', 'main']);
            await fsp.writeFile(path.join(src, 'README.md'), '# demo\n');
            git(src, ['add', '-A']);
            gitCommit(src, 'first\n');
            // A path no file system takes (6,000 bytes): written with git fast-import, on a side branch.
            const stream = `commit refs/heads/deep\ncommitter Bob <bob@example.org> 1700000000 +0000\ndata 5\ndeep\nfrom refs/heads/main\nM 100644 inline ${DEEP}\ndata 5\ndeep\n\n`;
            const fi = spawnSync('git', ['-C', src, 'fast-import', '--quiet'], { input: stream, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
            expect(fi.status, fi.stderr.toString()).to.equal(0);
            deepCommit = git(src, ['rev-parse', 'deep']).trim();
            child = await spawnServer(path.join(tempDir(), 'data'));
            repo = await register(child.url, 'git');
            await importGit({ server: child.url, repo, source: src, line: 'main', progress: NO_PROGRESS });
        });
        after(async () => {
            if (child.proc.exitCode === null)
                child.proc.kill('SIGKILL');
            await child.exited;
        });
        it('cairn import-git refuses the commit, naming the limit and the path', async () => {
            const head = (await ok(api(child.url, 'GET', R(repo, '/lines/main')))).head_snapshot_id;
            const r = await cli(['import-git', '--server', child.url, '--repo', String(repo), '--line', 'deep', '--ref', 'deep', '-q', src]);
            expect(r.code, r.stdout + r.stderr).to.not.equal(0);
            expect(r.stderr).to.include(`deeper than the limit of ${LIMIT} levels`);
            expect(r.stderr).to.include('"d/d/d/d/');
            expect((await ok(api(child.url, 'GET', R(repo, '/lines/main')))).head_snapshot_id).to.equal(head);
            // The commits before it are imported (the import's way with a refused commit), not it.
            expect((await ok(api(child.url, 'GET', R(repo, '/lines/deep')))).head_snapshot_id).to.equal(head);
        });
        it('git push for review refuses the commit with the limit and the path; no change is created', async () => {
            const url = `${child.url}${R(repo, '/git/main.git')}`;
            // From a bare copy: git reads no attributes from a work tree (where the path cannot be).
            const bare = path.join(tempDir('cairn-git-'), 'bare.git');
            expect(spawnSync('git', ['clone', '-q', '--bare', src, bare]).status).to.equal(0);
            const pushed = spawnSync('git', ['-C', bare, 'push', url, `${deepCommit}:refs/for/main`], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' } });
            const stderr = pushed.stderr.toString();
            expect(pushed.status, stderr).to.not.equal(0);
            expect(stderr, stderr.slice(-3000)).to.include(`deeper than the limit of ${LIMIT} levels`);
            expect((await ok(api(child.url, 'GET', R(repo, '/changes?limit=10')))).changes).to.deep.equal([]);
            expect((await api(child.url, 'GET', '/healthz')).status).to.equal(200);
        });
    });
    describe('a store holding a 3,000-deep tree from before the rule', () => {
        const data = path.join(tempDir(), 'data');
        const TEXT = 'below every level\n';
        const deep = chain(3000, `${TEXT}`);
        const DEEP = chainPath(3000);
        const base = flat('base\n');
        let repo;
        let repoDir;
        let change;
        let child;
        before(async () => {
            const s = await startTestServer(data);
            repo = await register(s.url, 'planted');
            repoDir = path.join(data, 'repositories', String(repo));
            expect((await commit(s.url, repo, base, 'main')).status).to.equal(200);
            const small = flat('small\n');
            expect((await commit(s.url, repo, small)).status).to.equal(200);
            change = await changeOf(s.url, repo, 'main', base.snapshot.snapshot_id, small.snapshot.snapshot_id);
            await s.stop();
            await plant(repoDir, deep);
            await plantRevision(repoDir, `${change}.ps-1`, deep.snapshot.snapshot_id);
            child = await spawnServer(data);
        });
        after(async () => {
            if (child.proc.exitCode === null)
                child.proc.kill('SIGKILL');
            await child.exited;
        });
        it('both diff routes answer 200 with the deep file (JSON, narrowed, unified)', async () => {
            await expectDiffsAnswer(child.url, repo, change, DEEP, TEXT.trimEnd());
            expect((await api(child.url, 'GET', '/healthz')).status).to.equal(200);
        });
        it('a new patchset of it (its tree diff), a diff against another patchset, the export and the file route answer', async () => {
            const fresh = await changeOf(child.url, repo, 'main', base.snapshot.snapshot_id, deep.snapshot.snapshot_id);
            const ps = (await ok(api(child.url, 'GET', R(repo, `/changes/${fresh}/patchsets`)))).patchsets[0];
            expect(ps.changed_files.map((f) => f.path)).to.deep.equal(['a.txt', DEEP]);
            // The deep revision against the small one (a compare of two patchsets).
            const ps3 = await ok(api(child.url, 'POST', R(repo, `/changes/${change}/patchsets`), { json: { base_snapshot_id: base.snapshot.snapshot_id, revision_snapshot_id: base.snapshot.snapshot_id, summary: 's3', author_mode: 'human_only' } }));
            const against = await api(child.url, 'GET', R(repo, `/read/patchsets/${ps3.patchset.patchset_id}/diff?against=${change}.ps-1`));
            expect(against.status, against.text.slice(0, 300)).to.equal(200);
            expect(against.json.files.map((f) => f.path)).to.include(DEEP);
            const exported = await api(child.url, 'GET', R(repo, `/snapshots/${deep.snapshot.snapshot_id}?include_content=false`));
            expect(exported.status, exported.text.slice(0, 300)).to.equal(200);
            expect(exported.text).to.include(DEEP);
            const file = await api(child.url, 'GET', R(repo, `/read/snapshots/${deep.snapshot.snapshot_id}/files/${DEEP}`));
            expect(file.status, file.text.slice(0, 300)).to.equal(200);
            expect(file.text).to.equal(TEXT);
        });
        (hasGit ? it : it.skip)('the git export builds its git trees (no frame per level) and git reads the path back', async () => {
            await ok(api(child.url, 'PUT', R(repo, '/lines/deep'), { json: { head_snapshot_id: deep.snapshot.snapshot_id, expected_head_snapshot_id: null } }));
            const exported = await ok(api(child.url, 'POST', R(repo, '/git/exports'), { json: { line: 'deep' } }));
            const shadow = path.join(data, 'git-shadow', `${repo}.git`);
            const listed = spawnSync('git', ['--git-dir', shadow, 'ls-tree', '-r', '--name-only', exported.head_commit_id], { maxBuffer: 64 * 1024 * 1024 });
            expect(listed.status, listed.stderr.toString()).to.equal(0);
            expect(listed.stdout.toString().split('\n')).to.include(DEEP);
        });
        it('fsck walks it and reports the path deeper than the limit', async () => {
            child.proc.kill('SIGTERM');
            await child.exited;
            try {
                const r = await cli(['fsck', '--data', data, '--repo', String(repo)]);
                expect(r.code, r.stdout + r.stderr).to.equal(1);
                expect(r.stdout).to.include(`snapshot ${deep.snapshot.snapshot_id}: its tree holds a path deeper than the limit of ${LIMIT} levels`);
            }
            finally {
                child = await spawnServer(data);
            }
        });
    });
});
//# sourceMappingURL=tree-depth.test.js.map