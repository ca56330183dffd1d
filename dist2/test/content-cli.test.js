import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { CLI, api, cli, register, spawnServer, startTestServer, tempDir } from './helpers.js';
/** A tree with the awkward cases: binary, empty, executable, symlinks, unicode and spaces, deep nesting, an empty directory. */
async function makeFixtureTree(root) {
    await fsp.mkdir(path.join(root, 'src/deep/a/b/c/d/e/f'), { recursive: true });
    await fsp.mkdir(path.join(root, 'empty dir'), { recursive: true });
    await fsp.writeFile(path.join(root, 'README.md'), '# hello\r\nCRLF and ünïcödé\n');
    await fsp.writeFile(path.join(root, 'empty'), '');
    await fsp.writeFile(path.join(root, 'src/blob.bin'), Buffer.concat([Buffer.from([0, 255, 0, 10, 13]), randomBytes(200_000)]));
    await fsp.writeFile(path.join(root, 'src/deep/a/b/c/d/e/f/leaf.txt'), 'deep\n');
    await fsp.writeFile(path.join(root, 'name with spaces.txt'), 'spaces');
    await fsp.writeFile(path.join(root, '日本語 ファイル.txt'), 'unicode name');
    await fsp.writeFile(path.join(root, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    await fsp.symlink('src/blob.bin', path.join(root, 'link-to-blob'));
    await fsp.symlink('../../nowhere', path.join(root, 'src/dangling'));
    await fsp.writeFile(path.join(root, '.hidden'), 'dotfile');
}
async function describeTree(root) {
    const out = {};
    const walk = async (dir, rel) => {
        for (const name of (await fsp.readdir(dir)).sort()) {
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
describe('push / pull / sync commands', () => {
    let server;
    let repo;
    let tree;
    before(async () => {
        server = await startTestServer();
        repo = await register(server.url, 'content');
        tree = path.join(tempDir(), 'tree');
        await makeFixtureTree(tree);
    });
    after(() => server.stop());
    it('round-trips a tree byte for byte: modes, symlinks, unicode and space names, deep nesting, empty dirs', async () => {
        const pushed = await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'dev', '--message', 'first', tree]);
        expect(pushed.code, pushed.stderr).to.equal(0);
        const result = JSON.parse(pushed.stdout);
        expect(result.snapshot_id).to.match(/^[0-9a-f]{64}$/);
        expect(result.line_updated).to.equal(true);
        const out = path.join(tempDir(), 'out');
        const pulled = await cli(['pull', '--server', server.url, '--repo', String(repo), '--line', 'dev', out]);
        expect(pulled.code, pulled.stderr).to.equal(0);
        expect(JSON.parse(pulled.stdout).snapshot_id).to.equal(result.snapshot_id);
        expect(await describeTree(out)).to.deep.equal(await describeTree(tree));
        const bySnapshot = path.join(tempDir(), 'out2');
        expect((await cli(['pull', '--server', server.url, '--repo', String(repo), '--snapshot', result.snapshot_id, bySnapshot])).code).to.equal(0);
        expect(await describeTree(bySnapshot)).to.deep.equal(await describeTree(tree));
    });
    it('uploads nothing when the tree is unchanged, and only new content after an edit', async () => {
        const again = JSON.parse((await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'dev', tree])).stdout);
        expect(again.unchanged).to.equal(true);
        expect(again.uploaded_packs).to.equal(0);
        const edited = path.join(tempDir(), 'edited');
        await fsp.cp(tree, edited, { recursive: true, verbatimSymlinks: true });
        await fsp.writeFile(path.join(edited, 'src/new.txt'), 'new file');
        const next = JSON.parse((await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'dev', edited])).stdout);
        expect(next.unchanged).to.equal(false);
        expect(next.parent_snapshot_ids).to.deep.equal([again.snapshot_id]);
        // One small object pack (the new blob) and one tree pack (the changed trees).
        expect(next.uploaded_packs).to.equal(2);
        expect(next.uploaded_bytes).to.be.lessThan(5000);
    });
    it('push --no-line ingests a snapshot without any line: --line is then optional, --parent sets the parent', async () => {
        const lines = async () => (await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}/lines`)).json;
        const before = await lines();
        const edited = path.join(tempDir(), 'noline');
        await fsp.cp(tree, edited, { recursive: true, verbatimSymlinks: true });
        await fsp.writeFile(path.join(edited, 'imported.txt'), 'from history');
        const root = await cli(['push', '--server', server.url, '--repo', String(repo), '--no-line', '--message', 'import', edited]);
        expect(root.code, root.stderr).to.equal(0);
        const first = JSON.parse(root.stdout);
        expect(first).to.include({ line: null, line_updated: false, unchanged: false });
        expect(first.parent_snapshot_ids).to.deep.equal([]);
        await fsp.writeFile(path.join(edited, 'imported.txt'), 'from history, later');
        const child = JSON.parse((await cli(['push', '--server', server.url, '--repo', String(repo), '--no-line', '--parent', first.snapshot_id, edited])).stdout);
        expect(child.parent_snapshot_ids).to.deep.equal([first.snapshot_id]);
        expect(child.uploaded_packs).to.equal(2); // the new blob and the changed root tree; the rest is known through the parent
        expect((await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}/snapshots/${child.snapshot_id}?include_content=false`)).status).to.equal(200);
        expect(await lines()).to.deep.equal(before);
        // without --no-line a plain directory still needs --line
        const usage = await cli(['push', '--server', server.url, '--repo', String(repo), edited]);
        expect(usage.code).to.equal(2);
        expect(usage.stderr).to.match(/--line is required/);
    });
    it('refuses a push that would move an initialized main (governed) and leaves main alone', async () => {
        const first = await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'main', tree]);
        expect(first.code, first.stderr).to.equal(0);
        const head = JSON.parse(first.stdout).snapshot_id;
        const other = path.join(tempDir(), 'other');
        await fsp.mkdir(other);
        await fsp.writeFile(path.join(other, 'x'), 'different');
        const refused = await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'main', other]);
        expect(refused.code).to.equal(1);
        expect(refused.stderr).to.match(/409/);
        expect((await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}/lines/main`)).json.head_snapshot_id).to.equal(head);
    });
    it('syncs a snapshot and its history to another repository on another server', async () => {
        const other = await startTestServer();
        try {
            const target = await register(other.url, 'mirror');
            const head = (await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}/lines/dev`)).json.head_snapshot_id;
            const synced = await cli(['sync', '--from', server.url, '--from-repo', String(repo), '--to', other.url, '--to-repo', String(target), '--snapshot', head, '--line', 'dev']);
            expect(synced.code, synced.stderr).to.equal(0);
            expect(JSON.parse(synced.stdout).line_updated).to.equal(true);
            const a = await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}/snapshots/${head}`);
            const b = await api(other.url, 'GET', `/v1/native/repository-authorities/${target}/snapshots/${head}`);
            expect(b.status).to.equal(200);
            const strip = (x) => ({ ...x, snapshot: { ...x.snapshot, snapshot_index: undefined } });
            expect(strip(b.json)).to.deep.equal(strip(a.json));
            // A second sync is a no-op that transfers nothing.
            const again = JSON.parse((await cli(['sync', '--from', server.url, '--from-repo', String(repo), '--to', other.url, '--to-repo', String(target), '--snapshot', head, '--line', 'dev'])).stdout);
            expect(again.transferred_packs).to.equal(0);
        }
        finally {
            await other.stop();
        }
    });
    it('syncs between two repositories of one server', async () => {
        const target = await register(server.url, 'sibling');
        const head = (await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}/lines/dev`)).json.head_snapshot_id;
        const synced = await cli(['sync', '--from', server.url, '--from-repo', String(repo), '--to', server.url, '--to-repo', String(target), '--snapshot', head, '--line', 'copy']);
        expect(synced.code, synced.stderr).to.equal(0);
        const out = path.join(tempDir(), 'sibling-out');
        expect((await cli(['pull', '--server', server.url, '--repo', String(target), '--line', 'copy', out])).code).to.equal(0);
        expect(await fsp.readFile(path.join(out, 'src/new.txt'), 'utf8')).to.equal('new file');
    });
    it('refuses to push a directory that does not exist, and says which', async () => {
        const missing = path.join(tempDir(), 'no-such-dir');
        const res = await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'dev', missing]);
        expect(res.code).to.equal(1);
        expect(res.stderr).to.include(`${missing} does not exist`);
        const unreachable = await cli(['push', '--server', 'http://127.0.0.1:9', '--repo', String(repo), '--line', 'dev', tree]);
        expect(unreachable.code).to.equal(1);
        expect(unreachable.stderr).to.match(/cannot reach http:\/\/127\.0\.0\.1:9/);
    });
    it('explains every option of push, pull, sync and fsck in --help', async () => {
        for (const [cmd, flags] of [['push', ['--server', '--repo', '--line', '--parent', '--no-line', '--message']], ['pull', ['--line', '--snapshot']], ['sync', ['--from', '--from-repo', '--to', '--to-repo', '--snapshot', '--line']], ['fsck', ['--data', '--repo', '--rebuild-locators']], ['serve', ['--bind', '--data']]]) {
            const r = spawnSync(process.execPath, [CLI, cmd, '--help'], { encoding: 'utf8' });
            expect(r.status).to.equal(0);
            for (const f of flags)
                expect(r.stdout, `${cmd} ${f}`).to.include(f);
        }
    });
});
describe('fsck and crash safety of commits', () => {
    it('finds a corrupted pack byte, and reports a clean store as clean', async () => {
        const data = path.join(tempDir(), 'data');
        const server = await spawnServer(data);
        const repo = await register(server.url, 'fsck');
        const tree = path.join(tempDir(), 'tree');
        await makeFixtureTree(tree);
        expect((await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'dev', tree])).code).to.equal(0);
        const refused = await cli(['fsck', '--data', data]);
        expect(refused.code).to.equal(4);
        expect(refused.stderr).to.match(/in use/);
        server.proc.kill('SIGTERM');
        await server.exited;
        const clean = await cli(['fsck', '--data', data]);
        expect(clean.code, clean.stdout).to.equal(0);
        expect(JSON.parse(clean.stdout.trim().split('\n').at(-1)).ok).to.equal(true);
        const packs = path.join(data, `repositories/${repo}/packs/objects`);
        const [pack] = await fsp.readdir(packs);
        const file = path.join(packs, pack);
        const bytes = await fsp.readFile(file);
        bytes[bytes.length - 100] ^= 0x5a;
        await fsp.writeFile(file, bytes);
        const damaged = await cli(['fsck', '--data', data, '--repo', String(repo)]);
        expect(damaged.code).to.equal(1);
        expect(damaged.stdout).to.include(pack.replace('.pack', ''));
    });
    it('rebuilds locator indexes from packs alone', async () => {
        const data = path.join(tempDir(), 'data');
        const server = await startTestServer(data);
        const repo = await register(server.url, 'rebuild');
        const tree = path.join(tempDir(), 'tree');
        await makeFixtureTree(tree);
        expect((await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'dev', tree])).code).to.equal(0);
        await server.stop();
        const index = path.join(data, `repositories/${repo}/index`);
        for (const f of await fsp.readdir(index))
            if (f.startsWith('blobs.'))
                await fsp.rm(path.join(index, f));
        const broken = await cli(['fsck', '--data', data]);
        expect(broken.code).to.equal(1);
        const rebuilt = await cli(['fsck', '--data', data, '--rebuild-locators']);
        expect(rebuilt.code, rebuilt.stdout + rebuilt.stderr).to.equal(0);
        const again = await startTestServer(data);
        try {
            const out = path.join(tempDir(), 'out');
            expect((await cli(['pull', '--server', again.url, '--repo', String(repo), '--line', 'dev', out])).code).to.equal(0);
            expect(await describeTree(out)).to.deep.equal(await describeTree(tree));
        }
        finally {
            await again.stop();
        }
    });
    it('keeps the old state or the new across kill -9 during large commits, and fsck stays clean', async function () {
        this.timeout(120_000);
        const data = path.join(tempDir(), 'data');
        const tree = path.join(tempDir(), 'big');
        await fsp.mkdir(tree);
        for (let i = 0; i < 300; i++)
            await fsp.writeFile(path.join(tree, `f${i}.bin`), randomBytes(20_000 + i));
        for (let round = 0; round < 3; round++) {
            const server = await spawnServer(data);
            const repo = round === 0 ? await register(server.url, 'crash') : 0;
            const before = (await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}/lines/dev`)).json?.head_snapshot_id ?? null;
            await fsp.writeFile(path.join(tree, 'round.txt'), `round ${round}`);
            const pushing = cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'dev', tree]);
            await new Promise((r) => setTimeout(r, 150 + round * 120));
            server.proc.kill('SIGKILL');
            await server.exited;
            const pushed = await pushing;
            const restarted = await spawnServer(data);
            const after = (await api(restarted.url, 'GET', `/v1/native/repository-authorities/${repo}/lines/dev`)).json?.head_snapshot_id ?? null;
            if (pushed.code === 0)
                expect(after).to.equal(JSON.parse(pushed.stdout).snapshot_id);
            if (after !== before) {
                // The new state: a whole snapshot whose parent is the old head, readable in full.
                const exp = await api(restarted.url, 'GET', `/v1/native/repository-authorities/${repo}/snapshots/${after}?include_content=false`);
                expect(exp.status).to.equal(200);
                expect(exp.json.snapshot.parent_snapshot_ids).to.deep.equal(before ? [before] : []);
                expect(exp.json.file_count).to.equal(301);
            }
            restarted.proc.kill('SIGTERM');
            await restarted.exited;
            const check = await cli(['fsck', '--data', data]);
            expect(check.code, check.stdout + check.stderr).to.equal(0);
        }
    });
    for (const point of ['commit:after-adopt', 'commit:after-log', 'commit:after-index', 'commit:before-state', 'commit:after-state']) {
        it(`recovers to exactly the old or the new state when killed at ${point}`, async function () {
            this.timeout(60_000);
            const data = path.join(tempDir(), 'data');
            const tree = path.join(tempDir(), 'tree');
            await makeFixtureTree(tree);
            const first = await spawnServer(data);
            const repo = await register(first.url, 'crash-point');
            const base = JSON.parse((await cli(['push', '--server', first.url, '--repo', String(repo), '--line', 'dev', tree])).stdout).snapshot_id;
            first.proc.kill('SIGTERM');
            await first.exited;
            const doomed = await spawnServer(data, [], true, { CAIRN_TEST_CRASH_AT: point });
            await fsp.writeFile(path.join(tree, 'changed.txt'), randomBytes(5000));
            const pushed = await cli(['push', '--server', doomed.url, '--repo', String(repo), '--line', 'dev', tree]);
            expect(await doomed.exited).to.equal(null); // killed by SIGKILL mid-commit
            expect(pushed.code).to.not.equal(0);
            const restarted = await spawnServer(data);
            try {
                const head = (await api(restarted.url, 'GET', `/v1/native/repository-authorities/${repo}/lines/dev`)).json.head_snapshot_id;
                if (point === 'commit:after-state') {
                    expect(head).to.not.equal(base); // the commit point was passed: the new state
                    const out = path.join(tempDir(), 'out');
                    expect((await cli(['pull', '--server', restarted.url, '--repo', String(repo), '--line', 'dev', out])).code).to.equal(0);
                    expect(await describeTree(out)).to.deep.equal(await describeTree(tree));
                }
                else {
                    expect(head).to.equal(base); // not published: the old state, nothing half-visible
                    const list = await api(restarted.url, 'POST', `/v1/native/repository-authorities/${repo}/snapshots:exists`, { json: { snapshot_ids: [base] } });
                    expect(list.json.present_snapshot_ids).to.deep.equal([base]);
                    // A retry succeeds (uncommitted packs went back to staging or are re-uploaded).
                    const retry = await cli(['push', '--server', restarted.url, '--repo', String(repo), '--line', 'dev', tree]);
                    expect(retry.code, retry.stderr).to.equal(0);
                }
            }
            finally {
                restarted.proc.kill('SIGTERM');
                await restarted.exited;
            }
            const check = await cli(['fsck', '--data', data]);
            expect(check.code, check.stdout + check.stderr).to.equal(0);
        });
    }
});
//# sourceMappingURL=content-cli.test.js.map