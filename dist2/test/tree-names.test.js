// Tree entry names a checkout must not write (storage-layout.md §6, docs/operations.md "Tree
// entry names"): `.git` and every alias of it, a top-level `.cairn`, a backslash. The server
// refuses them at upload and commit over real HTTP; a client refuses to write them even when a
// store holds them (written here below the server's check, with the store API); fsck reports them.
import { expect } from 'chai';
import { existsSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { blobId, encodeSnapshot, encodeTree, refusedEntryName, refusedPath, sha256Hex, snapshotId } from '../lib/domain/content.js';
import { buildPack, PACK_KIND_OBJECT, PACK_KIND_TREE } from '../lib/store/pack.js';
import { ContentStore } from '../lib/store/content-store.js';
import { api, cli, expectError, exportRepo, register, repoFiles, startTestServer, tempDir } from './helpers.js';
const COMMIT = 'svc.remote_sync.zstd_bulk.commit.v1';
const MEDIA_OBJECT = 'application/vnd.svc.remote-sync.object-pack+zstd';
const MEDIA_TREE = 'application/vnd.svc.remote-sync.tree-pack+zstd';
const syncPath = (repo, rest) => `/v1/native/repository-authorities/${repo}/remote-sync/zstd-bulk${rest}`;
// The aliases git refuses (is_ntfs_dotgit, is_hfs_dotgit), and more of the same kind.
const DOT_GIT_FORMS = ['.git', '.GIT', '.Git', '.git.', '.git ', '.git. .', '.git::$INDEX_ALLOCATION', '.git:stream', 'git~1', 'GIT~1',
    '.g\u200cit', '.gi\u200dt', '\u200e.git', '.git\u200f', '.\u202agit', '.g\u202eit', '.gi\u206at', '.git\u206f', '\ufeff.git'];
const ALLOWED = ['.gitignore', '.github', '.gitmodules', 'git', 'a.git', '.git~1', '.gitx', 'gi t', 'normal', '.cairnignore', 'cairn', 'gamma', 'c'];
let clock = 1_700_000_000;
/** A snapshot of `spec` (strings are files, objects directories), packed as a client packs it. */
function build(spec) {
    const blobs = new Map();
    const trees = new Map();
    const encode = (node) => {
        const entries = Object.entries(node).map(([name, v]) => {
            if (typeof v === 'string') {
                const bytes = Buffer.from(v);
                blobs.set(blobId(bytes), bytes);
                return { name, kind: 'file', id: blobId(bytes) };
            }
            return { name, kind: 'directory', id: encode(v) };
        });
        const bytes = encodeTree(entries);
        trees.set(sha256Hex(bytes), bytes);
        return sha256Hex(bytes);
    };
    const rootTreeId = encode(spec);
    if (!blobs.size)
        blobs.set(blobId(Buffer.from('x')), Buffer.from('x'));
    const fields = { root_tree_id: rootTreeId, parent_snapshot_ids: [], created_at_s: clock++, message: null };
    return {
        rootTreeId,
        snapshot: { snapshot_id: snapshotId(fields), ...fields },
        objectPack: buildPack(PACK_KIND_OBJECT, [...blobs].map(([id, raw]) => ({ id, raw }))),
        treePack: buildPack(PACK_KIND_TREE, [...trees].map(([id, raw]) => ({ id, raw }))),
    };
}
const putPack = (s, repo, p) => api(s.url, 'PUT', syncPath(repo, `/${p.kind === PACK_KIND_OBJECT ? 'object' : 'tree'}-packs/${p.packId}`), {
    body: p.bytes, headers: { 'content-type': p.kind === PACK_KIND_OBJECT ? MEDIA_OBJECT : MEDIA_TREE },
});
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
const commit = (s, repo, b, line = 'main') => api(s.url, 'POST', syncPath(repo, '/commit'), { json: commitBody(b, line) });
/** Store `b` in the repository below every check of the server (a store from before the rule). */
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
/** Every path below `dir` (nothing at all when it does not exist). */
async function listAll(dir) {
    if (!existsSync(dir))
        return [];
    return (await fsp.readdir(dir, { recursive: true })).map(String).sort();
}
describe('tree entry names a checkout must not write', () => {
    it('refusedEntryName: .git in any case and every alias, .cairn at the top only, a backslash', () => {
        for (const name of DOT_GIT_FORMS) {
            expect(refusedEntryName(name, false), JSON.stringify(name)).to.match(/^names \.git/);
            expect(refusedEntryName(name, true), JSON.stringify(name)).to.match(/^names \.git/);
        }
        for (const name of ['.cairn', '.CAIRN', '.cairn.', '.cairn ', 'cairn~1', 'CAIRN~2', '.ca\u200cirn', '.cairn::$INDEX_ALLOCATION']) {
            expect(refusedEntryName(name, true), JSON.stringify(name)).to.match(/^names \.cairn at the top/);
            expect(refusedEntryName(name, false), JSON.stringify(name)).to.equal(null);
        }
        for (const name of ['a\\b', '\\', 'x\\.git'])
            expect(refusedEntryName(name, false), name).to.match(/backslash/);
        for (const name of ALLOWED) {
            expect(refusedEntryName(name, true), JSON.stringify(name)).to.equal(null);
            expect(refusedEntryName(name, false), JSON.stringify(name)).to.equal(null);
        }
        expect(refusedPath('src/.GIT/config')).to.deep.include({ path: 'src/.GIT' });
        expect(refusedPath('.cairn/config.json')).to.deep.include({ path: '.cairn' });
        expect(refusedPath('src/.cairn/x')).to.equal(null);
        expect(refusedPath('a/../b')).to.deep.include({ path: 'a/..' });
    });
    describe('the server refuses them at ingest', () => {
        let s;
        let repo;
        let repoDir;
        before(async () => {
            s = await startTestServer();
            repo = await register(s.url, 'names');
            repoDir = path.join(s.dataDir, 'repositories', String(repo));
        });
        after(() => s.stop());
        it('a tree pack holding .git or an alias of it at any depth, or a backslash: 400 naming the entry, nothing staged', async () => {
            const before = await repoFiles(repoDir);
            for (const name of [...DOT_GIT_FORMS, 'a\\b']) {
                for (const spec of [{ [name]: { config: '[core]\n\tfsmonitor = touch /tmp/pwned\n' } }, { src: { deep: { [name]: 'x' } } }]) {
                    const b = build(spec);
                    expect((await putPack(s, repo, b.objectPack)).status).to.equal(200);
                    const res = await putPack(s, repo, b.treePack);
                    expectError(res, 400, JSON.stringify(name));
                    expect(res.json.error).to.include(`entry ${JSON.stringify(name)} is refused`);
                    expect(res.json.error).to.match(name.includes('\\') ? /backslash/ : /names \.git/);
                    // Nothing to commit: the tree pack was never staged.
                    expect((await commit(s, repo, b)).status).to.equal(404);
                }
            }
            // Only the (harmless) object packs were staged; no line, no snapshot, no tree pack.
            const after = await repoFiles(repoDir);
            expect(Object.keys(after).filter((f) => !(f in before)).every((f) => f.startsWith('staging/objects/')), Object.keys(after).join()).to.equal(true);
            expect((await api(s.url, 'GET', `/v1/native/repository-authorities/${repo}/lines/main`)).status).to.equal(404);
        });
        it('a top-level .cairn (any case or alias) is refused at the commit, naming the path; one below the top is stored', async () => {
            for (const name of ['.cairn', '.CAIRN', 'cairn~1', '.cairn.']) {
                const b = build({ [name]: { 'config.json': '{"server":"http://evil.example"}' }, 'README': 'hi\n' });
                for (const p of [b.objectPack, b.treePack])
                    expect((await putPack(s, repo, p)).status, name).to.equal(200);
                const before = await repoFiles(repoDir);
                const res = await commit(s, repo, b);
                expectError(res, 400, name);
                expect(res.json.error).to.include(`${JSON.stringify(name)} names .cairn at the top`);
                expect(await repoFiles(repoDir)).to.deep.equal(before);
            }
            const nested = build({ sub: { '.cairn': { x: 'fine\n' } } });
            for (const p of [nested.objectPack, nested.treePack])
                expect((await putPack(s, repo, p)).status).to.equal(200);
            expect((await commit(s, repo, nested, 'nested')).status).to.equal(200);
        });
        it('a tree pack staged before the rule existed is refused at the commit, naming every path', async () => {
            const b = build({ src: { '.Git': { hooks: { 'post-checkout': '#!/bin/sh\n' } }, ok: 'ok\n' }, 'x\\y': 'z', fine: { 'git~1': 'a' } });
            expect((await putPack(s, repo, b.objectPack)).status).to.equal(200);
            // The upload check is bypassed: the verified pack is put where an upload leaves it.
            await fsp.writeFile(path.join(repoDir, 'staging', 'trees', `${b.treePack.packId}.pack`), b.treePack.bytes);
            const before = await repoFiles(repoDir);
            const res = await commit(s, repo, b, 'staged');
            expectError(res, 400);
            for (const p of ['src/.Git', 'x\\y', 'fine/git~1'])
                expect(res.json.error).to.include(JSON.stringify(p));
            expect(await repoFiles(repoDir)).to.deep.equal(before);
            expect((await api(s.url, 'GET', `/v1/native/repository-authorities/${repo}/lines/staged`)).status).to.equal(404);
        });
        it('names git allows and the rule does not refuse are stored: .gitignore, .github, newlines, tabs, quotes', async () => {
            const b = build({ '.gitignore': 'x', '.github': { 'ci.yml': 'y' }, 'a\nb': 'n', 't\tx': 't', 'cr\rx': 'r', 'q"x': 'q', git: { c: 'c' } });
            for (const p of [b.objectPack, b.treePack])
                expect((await putPack(s, repo, p)).status).to.equal(200);
            expect((await commit(s, repo, b, 'allowed')).status).to.equal(200);
        });
    });
    describe('the client refuses to write them, and fsck reports them, when a store holds them', () => {
        let s;
        let data;
        let repo;
        let repoDir;
        let clean;
        let evil;
        before(async () => {
            data = path.join(tempDir(), 'data');
            s = await startTestServer(data);
            repo = await register(s.url, 'planted');
            repoDir = path.join(data, 'repositories', String(repo));
            clean = build({ README: 'clean\n' });
            for (const p of [clean.objectPack, clean.treePack])
                expect((await putPack(s, repo, p)).status).to.equal(200);
            expect((await commit(s, repo, clean, 'work')).status).to.equal(200);
            await s.stop();
            evil = build({
                README: 'evil\n',
                '.git': { config: '[core]\n\tfsmonitor = touch pwned\n', HEAD: 'ref: refs/heads/main\n' },
                src: { '.GIT': { config: 'x' }, 'a\\b': 'b' },
                '.cairn': { 'config.json': '{}' },
            });
            await plant(repoDir, evil);
            s = await startTestServer(data);
            // The line moves to the planted snapshot through the API (it is present, and main is not governed).
            const moved = await api(s.url, 'PUT', `/v1/native/repository-authorities/${repo}/lines/evil`, { json: { head_snapshot_id: evil.snapshot.snapshot_id } });
            expect(moved.status, moved.text).to.equal(200);
        });
        after(() => s.stop());
        const expectRefusal = (r) => {
            expect(r.code, r.stderr).to.equal(1);
            for (const p of ['.git', 'src/.GIT', 'src/a\\b', '.cairn'])
                expect(r.stderr).to.include(JSON.stringify(p));
            expect(r.stderr).to.match(/must not write/);
        };
        it('checkout and pull refuse the snapshot, naming each path, and write nothing', async () => {
            const root = tempDir();
            const wc = path.join(root, 'wc');
            expectRefusal(await cli(['checkout', '--server', s.url, '--repo', String(repo), '--line', 'evil', '--quiet', wc]));
            const out = path.join(root, 'out');
            expectRefusal(await cli(['pull', '--server', s.url, '--repo', String(repo), '--snapshot', evil.snapshot.snapshot_id, '--quiet', out]));
            expect(await listAll(root)).to.deep.equal([]);
            // An existing empty directory stays empty.
            await fsp.mkdir(out);
            expectRefusal(await cli(['pull', '--server', s.url, '--repo', String(repo), '--line', 'evil', '--quiet', out]));
            expect(await listAll(root)).to.deep.equal(['out']);
        });
        it('update refuses to bring a working copy to it, changing nothing', async () => {
            const wc = path.join(tempDir(), 'wc');
            const made = await cli(['checkout', '--server', s.url, '--repo', String(repo), '--line', 'work', '--quiet', wc]);
            expect(made.code, made.stderr).to.equal(0);
            const before = await repoFiles(wc);
            expect((await api(s.url, 'PUT', `/v1/native/repository-authorities/${repo}/lines/work`, { json: { head_snapshot_id: evil.snapshot.snapshot_id, expected_head_snapshot_id: clean.snapshot.snapshot_id } })).status).to.equal(200);
            const r = await cli(['update', '--quiet', wc]);
            expectRefusal(r);
            expect(await repoFiles(wc)).to.deep.equal(before);
        });
        it('fsck reports each tree and the line heads that hold such names', async () => {
            await s.stop();
            try {
                const r = await cli(['fsck', '--data', data, '--repo', String(repo)]);
                expect(r.code, r.stdout + r.stderr).to.equal(1);
                expect(r.stdout).to.include('entry ".git" is refused');
                expect(r.stdout).to.include('entry ".GIT" is refused');
                expect(r.stdout).to.include('entry "a\\\\b" is refused');
                expect(r.stdout).to.match(new RegExp(`snapshot ${evil.snapshot.snapshot_id}: root tree .* names \\.cairn at the top`));
                expect(r.stdout).to.match(/line evil: head [0-9a-f]{64} holds names a checkout refuses: ".cairn" names .cairn/);
                expect(r.stdout).to.include('"src/.GIT" names .git');
            }
            finally {
                s = await startTestServer(data);
            }
        });
        it('a restore of such a repository is refused by its check (a restore is ingest too), naming the tree', async () => {
            const { manifest, files } = await exportRepo(s.url, repo);
            const start = await api(s.url, 'POST', '/v1/native/repository-restores', { json: { manifest, policy_flags: 0 } });
            expect(start.status, start.text).to.equal(201);
            for (const [p, bytes] of files) {
                const up = await api(s.url, 'PUT', `/v1/native/repository-restores/${start.json.restore_token}/files/${encodeURIComponent(p)}`, { body: bytes, headers: { 'content-type': 'application/vnd.svc.remote-authority-file.v1' } });
                expect(up.status, up.text).to.equal(200);
            }
            const before = await api(s.url, 'GET', '/v1/native/repository-authorities');
            const res = await api(s.url, 'POST', `/v1/native/repository-restores/${start.json.restore_token}/commit`);
            expectError(res, 400);
            expect(res.json.error).to.match(/entry "\.git" is refused: it names \.git/);
            expect((await api(s.url, 'GET', '/v1/native/repository-authorities')).json).to.deep.equal(before.json);
        });
    });
});
// Names a file system allows and the format stores (UTF-8 without "/" or NUL): a push stores
// them exactly and a pull writes them back; what the format cannot hold or a checkout must not
// write refuses the push, naming each path, before anything is sent.
describe('push and pull of names with newlines and other unusual bytes', () => {
    let s;
    let repo;
    before(async () => {
        s = await startTestServer();
        repo = await register(s.url, 'bytes');
    });
    after(() => s.stop());
    const UNUSUAL = ['a\nb', 'nl-at-end\n', '\nnl-first', 't\tx', 'cr\rx', 'crlf\r\n', 'q"x', "s'q", ' lead', 'trail ', 'trail.', 'star*', '[br]', '{a,b}', '!bang', '#hash',
        'ctl\u0001\u001f\u007f', 'ü-nfc', 'u\u0308-nfd', '\u200cjoiner', '.gitignore', '.github', '-dash', '~tilde', '%41', 'sp ace'];
    async function describeTree(root) {
        const out = {};
        const walk = async (dir, rel) => {
            for (const name of (await fsp.readdir(dir)).sort()) {
                if (rel === '' && name === '.cairn')
                    continue;
                const abs = path.join(dir, name);
                const r = rel ? `${rel}/${name}` : name;
                const st = await fsp.lstat(abs);
                if (st.isSymbolicLink())
                    out[r] = `link:${await fsp.readlink(abs)}`;
                else if (st.isDirectory()) {
                    out[r] = 'dir';
                    await walk(abs, r);
                }
                else
                    out[r] = `${st.mode & 0o111 ? 'exec' : 'file'}:${(await fsp.readFile(abs)).toString('base64')}`;
            }
        };
        await walk(root, '');
        return out;
    }
    it('stores every such name exactly and pulls it back byte for byte (files, directories, symlinks)', async () => {
        const tree = path.join(tempDir(), 'tree');
        await fsp.mkdir(path.join(tree, 'dir\nwith newline', 'inner\ttab'), { recursive: true });
        await fsp.mkdir(path.join(tree, 'empty\ndir'));
        for (const name of UNUSUAL)
            await fsp.writeFile(path.join(tree, name), `content of ${JSON.stringify(name)}\n`);
        await fsp.writeFile(path.join(tree, 'dir\nwith newline', 'inner\ttab', 'f\n"q"'), 'deep\n');
        await fsp.symlink('a\nb', path.join(tree, 'link\nto newline'));
        const files = UNUSUAL.length + 2;
        const pushed = await cli(['push', '--server', s.url, '--repo', String(repo), '--line', 'dev', '--quiet', '--json', tree]);
        expect(pushed.code, pushed.stderr).to.equal(0);
        const result = JSON.parse(pushed.stdout);
        expect(result.files, 'every file is in the snapshot').to.equal(files);
        const listing = await api(s.url, 'GET', `/v1/native/repository-authorities/${repo}/snapshots/${result.snapshot_id}?include_content=false`);
        expect(listing.json.files.map((f) => f.path)).to.include.members([...UNUSUAL, 'dir\nwith newline/inner\ttab/f\n"q"', 'link\nto newline']);
        const out = path.join(tempDir(), 'out');
        const pulled = await cli(['pull', '--server', s.url, '--repo', String(repo), '--line', 'dev', '--quiet', out]);
        expect(pulled.code, pulled.stderr).to.equal(0);
        expect(await describeTree(out)).to.deep.equal(await describeTree(tree));
        // A working copy of it: status sees exactly the names it checked out.
        const wc = path.join(tempDir(), 'wc');
        expect((await cli(['checkout', '--server', s.url, '--repo', String(repo), '--line', 'dev', '--quiet', wc])).code).to.equal(0);
        expect(await describeTree(wc)).to.deep.equal(await describeTree(tree));
        const st = await cli(['status', '--json', wc]);
        expect(st.code, st.stderr).to.equal(0);
        expect(JSON.parse(st.stdout)).to.include({ clean: true });
    });
    it('refuses a tree it cannot store, naming each path (exit 1), and sends nothing', async () => {
        const tree = path.join(tempDir(), 'refused');
        await fsp.mkdir(path.join(tree, '.GIT'), { recursive: true });
        await fsp.mkdir(path.join(tree, 'sub'));
        await fsp.writeFile(path.join(tree, '.GIT', 'config'), '[core]\n\tfsmonitor = touch pwned\n');
        await fsp.writeFile(path.join(tree, 'sub', 'git~1'), 'x');
        await fsp.writeFile(path.join(tree, 'back\\slash'), 'x');
        await fsp.mkdir(path.join(tree, '.CAIRN'));
        await fsp.writeFile(path.join(tree, 'ok\nfine'), 'stored when the rest is fixed');
        // A name that is not UTF-8 (Buffer paths reach the file system's bytes).
        await fsp.writeFile(Buffer.concat([Buffer.from(`${tree}/bad`), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]), 'x');
        const repoDir = path.join(s.dataDir, 'repositories', String(repo));
        const before = await repoFiles(repoDir);
        const r = await cli(['push', '--server', s.url, '--repo', String(repo), '--line', 'refused', '--quiet', tree]);
        expect(r.code, r.stderr).to.equal(1);
        expect(r.stderr).to.include('5 path(s) cannot be stored');
        for (const [p, rule] of [['.GIT', 'names .git'], ['sub/git~1', 'names .git'], ['back\\slash', 'holds a backslash'], ['.CAIRN', 'names .cairn'], ['bad\\xff\\xfe.txt', 'is not valid UTF-8']]) {
            expect(r.stderr).to.include(`${JSON.stringify(p)} ${rule}`);
        }
        expect(r.stderr).to.not.include('config'); // a refused directory is named once
        expect(await repoFiles(repoDir)).to.deep.equal(before);
        expect((await api(s.url, 'GET', `/v1/native/repository-authorities/${repo}/lines/refused`)).status).to.equal(404);
        // Left out on purpose by .cairnignore, the same tree pushes (without them).
        await fsp.writeFile(path.join(tree, '.cairnignore'), '.GIT/\ngit~1\nback*\nbad*\n.CAIRN/\n');
        const ignored = await cli(['push', '--server', s.url, '--repo', String(repo), '--line', 'refused', '--quiet', '--json', tree]);
        expect(ignored.code, ignored.stderr).to.equal(0);
        const listing = await api(s.url, 'GET', `/v1/native/repository-authorities/${repo}/snapshots/${JSON.parse(ignored.stdout).snapshot_id}?include_content=false`);
        expect(listing.json.files.map((f) => f.path).sort()).to.deep.equal(['.cairnignore', 'ok\nfine']);
    });
});
//# sourceMappingURL=tree-names.test.js.map