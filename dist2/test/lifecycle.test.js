import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { api, cli, download, register, startTestServer, tempDir } from './helpers.js';
const AUTH = '/v1/native/repository-authorities';
const FILE_MEDIA = 'application/vnd.svc.remote-authority-file.v1';
/** A repository with lines, snapshots, packs, a finished job and a plan with two revisions. */
async function populate(server, name, namespace) {
    const repo = await register(server.url, name, namespace, 7);
    const tree = path.join(tempDir(), 'tree');
    await fsp.mkdir(path.join(tree, 'ci'), { recursive: true });
    await fsp.writeFile(path.join(tree, 'ci/run.sh'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    await fsp.writeFile(path.join(tree, 'data.bin'), Buffer.from([0, 1, 2, 255]));
    const first = await push({ server: server.url, repo, line: 'main', dir: tree, moveLine: true, progress: false });
    await fsp.writeFile(path.join(tree, 'more.txt'), 'more');
    await push({ server: server.url, repo, line: 'dev', dir: tree, moveLine: true, progress: false, parent: first.snapshot_id });
    const ci = await api(server.url, 'POST', `${AUTH}/${repo}:runCi`, { json: {} });
    const claim = await api(server.url, 'POST', `${AUTH}/${repo}/worker-jobs/${ci.json.job.worker_job_index}:claim`, { json: { accepted_runtime_contracts: ['svc.runner.native-job.v3'] } });
    await api(server.url, 'POST', `${AUTH}/${repo}/worker-jobs/${ci.json.job.worker_job_index}:complete`, { json: { attempt_count: 1, lease_token: claim.json.lease_token, detail: {} } });
    const plan = await api(server.url, 'POST', `${AUTH}/${repo}/sprints`, { json: { title: 'Sprint', artifact_path: 'docs/plan.md', artifact_heading: 'Sprint', artifact_body: '# Sprint\r\n- [ ] one {#one}\n' } });
    await api(server.url, 'POST', `${AUTH}/${repo}/sprints/${plan.json.plan.plan_id}/revisions`, { json: { artifact_path: 'docs/plan.md', artifact_heading: 'Sprint', artifact_body: '# Sprint\n- [x] one {#one}\n- [ ] two {#two}' } });
    return repo;
}
/** Everything a client reads back, with the repository index blanked out. */
async function readBack(server, repo) {
    const get = async (p) => {
        const res = await api(server.url, 'GET', `${AUTH}/${repo}${p}`);
        expect(res.status, p).to.equal(200);
        return res.json;
    };
    const lines = await get('/lines');
    const snapshots = [];
    for (const line of lines.lines)
        snapshots.push(await get(`/snapshots/${line.head_snapshot_id}`));
    const jobs = await get('/worker-jobs');
    const plans = await get('/sprints');
    const planDetails = [];
    for (const p of plans.plans) {
        planDetails.push(await get(`/sprints/${p.plan_id}`), await get(`/sprints/${p.plan_id}/revisions`));
        for (const r of (await get(`/sprints/${p.plan_id}/revisions`)).revisions)
            planDetails.push(await get(`/sprints/${p.plan_id}/revisions/${r.plan_revision_id}/artifacts`));
    }
    const blank = (v) => JSON.parse(JSON.stringify(v, (k, x) => (k === 'repository_index' ? 'N' : k === 'job_key' ? String(x).slice(8) : x)));
    return blank({ lines, snapshots, jobs, plans, planDetails });
}
async function retireAndExport(server, repo) {
    const start = await api(server.url, 'POST', `${AUTH}/${repo}/retirement`);
    expect(start.status).to.equal(200);
    expect(start.json.repository.lifecycle_kind).to.equal(2);
    const status = await api(server.url, 'GET', `${AUTH}/${repo}/retirement`);
    expect(status.json).to.include({ contract: 'svc.server.repository-retirement.v1', ready_for_export: true });
    expect(status.json.drain).to.deep.equal({ queued_worker_jobs: 0, running_worker_jobs: 0 });
    const manifest = status.json.manifest;
    const files = new Map();
    for (const f of manifest.files) {
        const res = await download(server.url, `${AUTH}/${repo}/retirement/files/${encodeURIComponent(f.path)}`);
        expect(res.status, f.path).to.equal(200);
        expect(res.headers.get('content-type')).to.equal(FILE_MEDIA);
        files.set(f.path, res.bytes);
    }
    return { manifest, files };
}
async function restore(server, manifest, files, flags = 7) {
    const start = await api(server.url, 'POST', '/v1/native/repository-restores', { json: { manifest, policy_flags: flags } });
    expect(start.status, start.text).to.equal(201);
    expect(start.json.restore_token).to.match(/^[0-9a-f]{32}$/);
    expect(start.json.state).to.equal('uploading');
    const token = start.json.restore_token;
    for (const [p, bytes] of files) {
        const up = await api(server.url, 'PUT', `/v1/native/repository-restores/${token}/files/${encodeURIComponent(p)}`, { body: bytes, headers: { 'content-type': FILE_MEDIA } });
        expect(up.status, `${p}: ${up.text}`).to.equal(200);
        expect(up.text).to.not.include(token);
    }
    const commit = await api(server.url, 'POST', `/v1/native/repository-restores/${token}/commit`);
    expect(commit.status, commit.text).to.equal(200);
    expect(commit.json.contract).to.equal('svc.server.repository-restore.v1');
    const replay = await api(server.url, 'POST', `/v1/native/repository-restores/${token}/commit`);
    expect(replay.json).to.deep.equal(commit.json);
    return commit.json.repository_index;
}
describe('retirement, export and restore: the round trip', function () {
    this.timeout(120_000);
    it('restores into another server, and into the same server after purge, reading back identical but for the index', async () => {
        const one = await startTestServer();
        const two = await startTestServer();
        try {
            await register(one.url, 'padding'); // so the source index is not 0
            const repo = await populate(one, 'source', 'sr');
            const before = await readBack(one, repo);
            const { manifest, files } = await retireAndExport(one, repo);
            expect(manifest).to.include({ schema: 'svc.remote-export.v1', state: 'complete', repo_name: 'source', namespace: 'sr' });
            // Server 2: a new index, never the old one.
            await register(two.url, 'a');
            await register(two.url, 'b');
            await register(two.url, 'c');
            const restored = await restore(two, manifest, files);
            expect(restored).to.not.equal(repo);
            expect(await readBack(two, restored)).to.deep.equal(before);
            // The restored authority is live: it takes new pushes.
            const tree = path.join(tempDir(), 't2');
            await fsp.mkdir(tree);
            await fsp.writeFile(path.join(tree, 'x'), 'x');
            expect((await push({ server: two.url, repo: restored, line: 'after-restore', dir: tree, moveLine: true, progress: false })).line_updated).to.equal(true);
            // Server 1: purge, then restore under a new index there too.
            const purge = await api(one.url, 'POST', `${AUTH}/${repo}/retirement/purge`, { json: manifest });
            expect(purge.status, purge.text).to.equal(200);
            expect(purge.json).to.include({ purged: true, already_purged: false });
            expect(purge.json.repository).to.include({ lifecycle_kind: 3, tombstoned: true });
            const replay = await api(one.url, 'POST', `${AUTH}/${repo}/retirement/purge`, { json: manifest });
            expect(replay.json).to.include({ purged: true, already_purged: true });
            expect((await api(one.url, 'GET', AUTH)).json.repositories.map((r) => r.repository_index)).to.not.include(repo);
            expect(await fsp.readdir(path.join(one.dataDir, 'repositories'))).to.not.include(String(repo));
            const again = await restore(one, manifest, files);
            expect(again).to.not.equal(repo);
            expect(await readBack(one, again)).to.deep.equal(before);
            // Restart keeps the restored authority.
            await one.stop();
            const reopened = await startTestServer(one.dataDir);
            try {
                expect(await readBack(reopened, again)).to.deep.equal(before);
            }
            finally {
                await reopened.stop();
            }
        }
        finally {
            await two.stop();
            await one.stop().catch(() => { });
        }
    });
    it('exports and imports offline with cairn export / cairn import, refusing while a server holds the lock', async () => {
        const server = await startTestServer();
        const repo = await populate(server, 'offline', 'of');
        const before = await readBack(server, repo);
        const out = path.join(tempDir(), 'export');
        const refused = await cli(['export', '--data', server.dataDir, '--repo', String(repo), out]);
        expect(refused.code).to.equal(4);
        await server.stop();
        const exported = await cli(['export', '--data', server.dataDir, '--repo', String(repo), out]);
        expect(exported.code, exported.stderr).to.equal(0);
        const manifest = JSON.parse(await fsp.readFile(path.join(out, 'manifest.json'), 'utf8'));
        expect(manifest.schema).to.equal('svc.remote-export.v1');
        const target = path.join(tempDir(), 'data2');
        // --data must exist (a typo is an error, not a new store): an empty directory is a new store.
        const typo = await cli(['import', '--data', target, '--policy-flags', '7', out]);
        expect(typo.code).to.equal(2);
        expect(typo.stderr).to.include('does not exist');
        expect(await fsp.stat(target).catch(() => null)).to.equal(null);
        await fsp.mkdir(target);
        const imported = await cli(['import', '--data', target, '--policy-flags', '7', out]);
        expect(imported.code, imported.stderr).to.equal(0);
        const index = JSON.parse(imported.stdout).repository_index;
        const second = await startTestServer(target);
        try {
            expect(await readBack(second, index)).to.deep.equal(before);
        }
        finally {
            await second.stop();
        }
        // A damaged export is refused and registers nothing.
        await fsp.appendFile(path.join(out, 'authority.bin'), 'x');
        const fresh = path.join(tempDir(), 'data3');
        await fsp.mkdir(fresh);
        const damaged = await cli(['import', '--data', fresh, out]);
        expect(damaged.code).to.not.equal(0);
        expect(damaged.stderr).to.match(/authority.bin/);
        const list = await cli(['fsck', '--data', fresh]);
        expect(JSON.parse(list.stdout.trim().split('\n').at(-1)).repositories).to.deep.equal([]);
    });
});
//# sourceMappingURL=lifecycle.test.js.map