// The land queue's test fixture (test/land-queue*.test.ts): a repository on a test server with
// changes whose gates pass but for CI, and CI played by the test (claim, then complete or fail
// the queue's repo.ci jobs) over real HTTP.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { api, ok, tempDir } from './helpers.js';
export const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
export const RUNTIME = 'svc.runner.native-job.v3';
export const result = (tests) => ({
    contract: 'svc.runner.native-result.v1', status: 'succeeded', tests_status: tests, suite_result_count: 2,
    suite_results: [{ suite_id: 'unit', status: tests, blocking: true }, { suite_id: 'lint', status: 'pass', blocking: false }],
});
export class Fixture {
    s;
    repo;
    headers;
    pushServer;
    dir = path.join(tempDir(), 'tree');
    /** `headers`: sent with every request (a server with an auth mode: a token, or the front door's identity; test/access-seed.ts). `pushServer`: the address the client's push uses (credentials in it). */
    constructor(s, repo, headers = {}, pushServer = s.url) {
        this.s = s;
        this.repo = repo;
        this.headers = headers;
        this.pushServer = pushServer;
    }
    post(rest, json) {
        return api(this.s.url, 'POST', R(this.repo, rest), { json, headers: this.headers });
    }
    get(rest) {
        return api(this.s.url, 'GET', R(this.repo, rest), { headers: this.headers });
    }
    async snap(files, line, moveLine, parent) {
        await fsp.rm(this.dir, { recursive: true, force: true });
        await fsp.mkdir(this.dir, { recursive: true });
        for (const [p, v] of Object.entries(files))
            await fsp.writeFile(path.join(this.dir, p), v);
        return (await push({ server: this.pushServer, repo: this.repo, line, dir: this.dir, moveLine, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
    }
    async authority() {
        return (await this.s.ready).opened(this.repo);
    }
    /** A change on main from `base` to `files`, with an attestation (passing by default) and an approval (no CI of its own). */
    async change(base, files, attestation = { verification_state: 'pass' }) {
        const revision = await this.snap(files, 'main', false, base);
        const t = (await ok(this.post('/tasks', { title: 'T', intent: 'I' }), 'task')).task;
        const c = (await ok(this.post('/changes', { task_id: t.task_id, title: 'C', base_line: 'main' }), 'change')).change;
        const p = (await ok(this.post(`/changes/${c.change_id}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: revision, summary: 's', author_mode: 'human_with_ai_assist', author: 'carol' }), 'patchset')).patchset;
        await ok(api(this.s.url, 'PUT', R(this.repo, `/patchsets/${p.patchset_id}/attestation`), { json: attestation, headers: this.headers }), 'attest');
        await ok(this.post(`/changes/${c.change_id}/reviews`, { patchset_id: p.patchset_id, reviewer: 'alice', action: 'approve' }), 'approve');
        return { change: c.change_id, ref: c.change_ref, ps: p.patchset_id, revision };
    }
    async enqueue(ref, mode = 'merge') {
        const res = await this.post('/land-queue', { change_ref: ref, mode });
        expect(res.status, res.text).to.equal(201);
        return res.json.entry;
    }
    async settle() {
        await (await this.authority()).queue.settle();
    }
    async entry(id) {
        await this.settle();
        return (await ok(this.get(`/land-queue/${id}`))).entry;
    }
    async head() {
        const j = await ok(this.get('/lines/main'));
        return j.line?.head_snapshot_id ?? j.head_snapshot_id;
    }
    /** Play CI for one queue job: claim it and pass, fail the tests, or fail the job. */
    async runJob(index, outcome) {
        const claim = await ok(this.post(`/worker-jobs/${index}:claim`, { accepted_runtime_contracts: [RUNTIME] }), `claim ${index}`);
        if (outcome === 'error')
            await ok(this.post(`/worker-jobs/${index}:fail`, { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { retryable: false, error: 'runner exploded' } }), 'fail');
        else
            await ok(this.post(`/worker-jobs/${index}:complete`, { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { job_kind: 11, result: result(outcome) } }), 'complete');
        await this.settle();
        return claim;
    }
    async claim(index) {
        return ok(this.post(`/worker-jobs/${index}:claim`, { accepted_runtime_contracts: [RUNTIME] }), `claim ${index}`);
    }
    async job(index) {
        const j = await ok(this.get(`/worker-jobs/${index}`));
        return j.job ?? j;
    }
    async landsOf(change) {
        return (await ok(this.get(`/read/changes/${change}/lands`))).lands;
    }
}
//# sourceMappingURL=land-queue-fixture.js.map