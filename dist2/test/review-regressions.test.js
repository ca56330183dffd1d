// Regressions for defects found in review: each test failed before its fix.
import { expect } from 'chai';
import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { loggableError } from '../lib/http/errors.js';
import { validateManifest } from '../lib/domain/export-manifest.js';
import { Invalid } from '../lib/domain/errors.js';
import { api, register, startTestServer, tempDir } from './helpers.js';
import { push } from '../lib/client/transfer.js';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
const AUTH = '/v1/native/repository-authorities';
describe('review regressions', () => {
    let server;
    let repo;
    before(async () => {
        server = await startTestServer();
        repo = await register(server.url, 'review');
    });
    after(() => server.stop());
    it('never logs raw request bytes attached to library errors', () => {
        const err = Object.assign(new Error('Parse Error'), { code: 'HPE_INVALID', rawPacket: Buffer.from('lease_token=secret') });
        const logged = JSON.stringify(loggableError(err));
        expect(logged).to.include('Parse Error');
        expect(logged).to.not.include('rawPacket');
    });
    it('queues a new repo.ci job on every :runCi, also for a snapshot with an active job (a re-run is a new run)', async () => {
        const tree = path.join(tempDir(), 'tree');
        await fsp.mkdir(tree);
        await fsp.writeFile(path.join(tree, 'a'), 'a');
        const head = (await push({ server: server.url, repo, line: 'main', dir: tree, moveLine: true, progress: false })).snapshot_id;
        const results = await Promise.all(Array.from({ length: 8 }, () => api(server.url, 'POST', `${AUTH}/${repo}:runCi`, { json: {} })));
        expect(results.map((r) => r.status)).to.deep.equal(Array(8).fill(200));
        expect(results.every((r) => r.json.queued === true && r.json.job.state === 'queued' && r.json.snapshot_id === head)).to.equal(true);
        const indexes = results.map((r) => r.json.job.worker_job_index);
        expect(new Set(indexes).size).to.equal(8);
        const again = await api(server.url, 'POST', `${AUTH}/${repo}:runCi`, { json: { snapshot_id: head } });
        expect(again.json.queued).to.equal(true);
        const listed = (await api(server.url, 'GET', `${AUTH}/${repo}/worker-jobs?state_kind=1`)).json;
        expect(listed.jobs[0].worker_job_index).to.equal(again.json.job.worker_job_index); // newest first
        expect(listed.count).to.equal(9);
    });
    it('rejects manifests whose paths cannot all exist (file and directory, long segment)', () => {
        const base = { schema: 'svc.remote-export.v1', state: 'complete', repo_name: 'r', namespace: '', exported_at_s: 1 };
        const f = (p) => ({ path: p, size: 1, sha256: 'a'.repeat(64) });
        expect(() => validateManifest({ ...base, files: [f('authority.bin'), f('authority.bin/x')] })).to.throw(Invalid, /both as a file and as a directory/);
        expect(() => validateManifest({ ...base, files: [f('authority.bin'), f(`${'x'.repeat(256)}`)] })).to.throw(Invalid, /longer than 255/);
    });
    it('answers 400, not 500, for a body that does not decode under its Content-Encoding', async () => {
        for (const encoding of ['gzip', 'deflate', 'br']) {
            const res = await api(server.url, 'POST', AUTH, { body: '{"not":"compressed"}', headers: { 'content-type': 'application/json', 'content-encoding': encoding } });
            expect(res.status, encoding).to.equal(400);
            expect(res.json.error).to.match(/Content-Encoding/);
        }
        const good = gzipSync(Buffer.from(JSON.stringify({ repository_name: 'gz', namespace: '', policy_flags: 0 })));
        const ok = await api(server.url, 'POST', AUTH, { body: good, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
        expect(ok.status).to.equal(201);
    });
    it('rejects lone surrogates in repository and line names (400) instead of changing them', async () => {
        const reg = await api(server.url, 'POST', AUTH, { body: '{"repository_name":"\\ud800","namespace":"","policy_flags":0}', headers: { 'content-type': 'application/json' } });
        expect(reg.status).to.equal(400);
        const commit = await api(server.url, 'POST', `${AUTH}/${repo}/remote-sync/zstd-bulk/commit`, {
            body: '{"contract":"svc.remote_sync.zstd_bulk.commit.v1","line_update":{"line_name":"lone\\ud800","head_snapshot_id":null}}',
            headers: { 'content-type': 'application/json' },
        });
        expect(commit.status).to.equal(400);
    });
    it('answers 413 for a large body on a route that takes none, and 422 for the JSON string ""', async () => {
        const big = Buffer.alloc(3 * 1024 * 1024, 0x20);
        const res = await api(server.url, 'POST', `${AUTH}/${repo}/retirement/abort`, { body: big, headers: { 'content-type': 'application/octet-stream' } });
        expect(res.status).to.equal(413);
        const empty = await api(server.url, 'POST', AUTH, { body: '""', headers: { 'content-type': 'application/json' } });
        expect(empty.status).to.equal(422);
    });
    it('applies index and registration rules to OPTIONS too', async () => {
        const options = (p) => new Promise((resolve, reject) => {
            const req = request(`${server.url}${p}`, { method: 'OPTIONS' }, (res) => { res.resume(); resolve(res.statusCode); });
            req.on('error', reject);
            req.end();
        });
        expect(await options(`${AUTH}/${repo}/lines`)).to.equal(204);
        expect(await options(`${AUTH}/999/lines`)).to.equal(404);
        expect(await options(`${AUTH}/01/lines`)).to.equal(400);
    });
    it('does not echo the received value in 422 messages', async () => {
        const res = await api(server.url, 'POST', `${AUTH}/${repo}/worker-jobs/0:heartbeat`, { json: { attempt_count: 1, lease_token: 123456789 } });
        expect(res.status).to.equal(422);
        expect(res.json.error).to.not.include('123456789');
    });
    it('treats a revise that differs only in status as a new request, not a replay', async () => {
        const body = { title: 'P', artifact_path: 'p.md', artifact_heading: 'P', artifact_body: '# P\n- [ ] a {#a}\n' };
        const created = await api(server.url, 'POST', `${AUTH}/${repo}/sprints`, { json: body });
        const planId = created.json.plan.plan_id;
        const head = created.json.revision.plan_revision_id;
        const revise = { ...body, artifact_body: '# P\n- [x] a {#a}\n', expected_head_revision_id: head };
        expect((await api(server.url, 'POST', `${AUTH}/${repo}/sprints/${planId}/revisions`, { json: revise })).json.replayed).to.equal(false);
        expect((await api(server.url, 'POST', `${AUTH}/${repo}/sprints/${planId}/revisions`, { json: revise })).json.replayed).to.equal(true);
        const withStatus = await api(server.url, 'POST', `${AUTH}/${repo}/sprints/${planId}/revisions`, { json: { ...revise, status: 'archived' } });
        expect(withStatus.status).to.equal(409);
        expect((await api(server.url, 'GET', `${AUTH}/${repo}/sprints/${planId}`)).json.plan.status).to.equal('draft');
    });
    it('answers 413 at once for a declared JSON body above what can be parsed (512 MiB), reading none of it', async () => {
        const status = await new Promise((resolve, reject) => {
            const req = request(`${server.url}${AUTH}/${repo}/remote-sync/zstd-bulk/commit`, {
                method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(600 * 1024 * 1024) },
            }, (res) => { res.resume(); resolve(res.statusCode); req.destroy(); });
            req.on('error', reject);
            req.write('{');
        });
        expect(status).to.equal(413);
    });
});
//# sourceMappingURL=review-regressions.test.js.map