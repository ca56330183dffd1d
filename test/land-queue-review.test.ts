// The land queue's edges (docs/land-queue.md): the gates checked at enqueue with CI assumed to
// pass (lint included), a queue job's malformed result, the running job of a dropped
// speculation, over real HTTP against a real data directory. CI is played by the test.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import type { Authority } from '../lib/authority/authority.js';
import { api, expectError, ok, register, startTestServer, tempDir, type ApiResponse, type TestServer } from './helpers.js';

type Json = Record<string, any>;
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const RUNTIME = 'svc.runner.native-job.v3';
const result = (tests: 'pass' | 'fail') => ({
  contract: 'svc.runner.native-result.v1', status: 'succeeded', tests_status: tests, suite_result_count: 2,
  suite_results: [{ suite_id: 'unit', status: tests, blocking: true }, { suite_id: 'lint', status: 'pass', blocking: false }],
});
const BASE = { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' };

class Fixture {
  dir = path.join(tempDir(), 'tree');
  constructor(readonly s: TestServer, readonly repo: number) {}
  post(rest: string, json: unknown): Promise<ApiResponse> {
    return api(this.s.url, 'POST', R(this.repo, rest), { json });
  }
  get(rest: string): Promise<ApiResponse> {
    return api(this.s.url, 'GET', R(this.repo, rest));
  }
  async snap(files: Record<string, string>, moveLine: boolean, parent?: string): Promise<string> {
    await fsp.rm(this.dir, { recursive: true, force: true });
    await fsp.mkdir(this.dir, { recursive: true });
    for (const [p, v] of Object.entries(files)) await fsp.writeFile(path.join(this.dir, p), v);
    return (await push({ server: this.s.url, repo: this.repo, line: 'main', dir: this.dir, moveLine, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
  }
  async authority(): Promise<Authority> {
    return (await this.s.ready).opened(this.repo);
  }
  async change(base: string, files: Record<string, string>, attestation: Json = { verification_state: 'pass' }): Promise<{ change: string; ref: string; ps: string }> {
    const revision = await this.snap(files, false, base);
    const t = (await ok(this.post('/tasks', { title: 'T', intent: 'I' }), 'task')).task;
    const c = (await ok(this.post('/changes', { task_id: t.task_id, title: 'C', base_line: 'main' }), 'change')).change;
    const p = (await ok(this.post(`/changes/${c.change_id}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: revision, summary: 's', author_mode: 'human_with_ai_assist', author: 'carol' }), 'patchset')).patchset;
    await ok(api(this.s.url, 'PUT', R(this.repo, `/patchsets/${p.patchset_id}/attestation`), { json: attestation }), 'attest');
    await ok(this.post(`/changes/${c.change_id}/reviews`, { patchset_id: p.patchset_id, reviewer: 'alice', action: 'approve' }), 'approve');
    return { change: c.change_id, ref: c.change_ref, ps: p.patchset_id };
  }
  async enqueue(ref: string, mode = 'merge'): Promise<Json> {
    const res = await this.post('/land-queue', { change_ref: ref, mode });
    expect(res.status, res.text).to.equal(201);
    return res.json.entry;
  }
  async settle(): Promise<void> {
    await (await this.authority()).queue.settle();
  }
  async entry(id: string): Promise<Json> {
    await this.settle();
    return (await ok(this.get(`/land-queue/${id}`))).entry;
  }
  async head(): Promise<string> {
    return (await ok(this.get('/lines/main'))).head_snapshot_id;
  }
  async claim(index: number): Promise<Json> {
    return ok(this.post(`/worker-jobs/${index}:claim`, { accepted_runtime_contracts: [RUNTIME] }), `claim ${index}`);
  }
  async job(index: number): Promise<Json> {
    const j = await ok(this.get(`/worker-jobs/${index}`));
    return j.job ?? j;
  }
}

describe('land queue review', function () {
  this.timeout(120_000);
  let s: TestServer;
  after(() => s?.stop());
  before(async () => {
    s = await startTestServer(undefined, { queue: { depth: 4, retries: 0, batch: 1, stall_s: 3600 } });
  });
  async function fresh(name: string): Promise<{ f: Fixture; base: string }> {
    const f = new Fixture(s, await register(s.url, name));
    return { f, base: await f.snap(BASE, true) };
  }

  it('an attestation that requires lint to pass: the change joins the queue (CI, lint included, assumed to pass) and lands on a passing lint suite', async () => {
    const { f, base } = await fresh('lint');
    const c = await f.change(base, { ...BASE, 'a.txt': 'L\n' }, { verification_state: 'pass', require_lint_pass: true });
    const e = await f.enqueue(c.ref);
    const t = await f.entry(e.entry_id);
    const claim = await f.claim(t.speculation.worker_job_indexes[0]);
    await ok(f.post(`/worker-jobs/${claim.worker_job_index}:complete`, { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { job_kind: 11, result: result('pass') } }));
    expect((await f.entry(e.entry_id)).state).to.equal('landed');
  });

  it('a queue job completed with a malformed failing result is refused (400), not read as a pass: nothing lands', async () => {
    const { f, base } = await fresh('malformed');
    const c = await f.change(base, { ...BASE, 'a.txt': 'M\n' });
    const e = await f.enqueue(c.ref);
    const t = await f.entry(e.entry_id);
    const claim = await f.claim(t.speculation.worker_job_indexes[0]);
    // A failing run whose result miscounts its suites.
    const bad = { ...result('fail'), status: 'command_failed', suite_result_count: 3 };
    expectError(await f.post(`/worker-jobs/${claim.worker_job_index}:complete`, { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { job_kind: 11, result: bad } }), 400);
    expectError(await f.post(`/worker-jobs/${claim.worker_job_index}:complete`, { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { job_kind: 11, result: { ...bad, suite_results: 'x' } } }), 400);
    const after = await f.entry(e.entry_id);
    expect(after.state).to.equal('testing');
    expect(await f.head()).to.equal(base);
    expect((await f.job(claim.worker_job_index)).state).to.equal('running');
    // The runner can still report the failure: the entry is ejected.
    await ok(f.post(`/worker-jobs/${claim.worker_job_index}:fail`, { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { retryable: false, error: 'tests failed' } }));
    expect((await f.entry(e.entry_id)).state).to.equal('ejected');
    expect(await f.head()).to.equal(base);
  });

  it('the running job of a dropped speculation is not run again: a retryable failure ends it instead of requeueing it', async () => {
    const { f, base } = await fresh('orphan');
    const c1 = await f.change(base, { ...BASE, 'a.txt': '1\n' });
    const c2 = await f.change(base, { ...BASE, 'b.txt': '2\n' });
    const e1 = await f.enqueue(c1.ref);
    const e2 = await f.enqueue(c2.ref);
    const t2 = await f.entry(e2.entry_id);
    expect(t2.speculation.ahead).to.deep.equal([e1.entry_id]);
    const job2 = t2.speculation.worker_job_indexes[0];
    const claim = await f.claim(job2);
    // The entry ahead leaves: e2's speculation is dropped and rebuilt on the head.
    await ok(api(s.url, 'DELETE', R(f.repo, `/land-queue/${e1.entry_id}`)));
    const r2 = await f.entry(e2.entry_id);
    expect(r2.speculation.base_snapshot_id).to.equal(base);
    expect(r2.speculation.worker_job_indexes).to.not.include(job2);
    await ok(f.post(`/worker-jobs/${job2}:fail`, { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { retryable: true, error: 'runner lost its network' } }));
    await f.settle();
    const j = await f.job(job2);
    expect(j.state, JSON.stringify(j)).to.equal('failed');
    expect(j.available).to.equal(false);
  });
});

describe('land queue review: bad requests', function () {
  this.timeout(60_000);
  let s: TestServer;
  after(() => s?.stop());
  before(async () => {
    s = await startTestServer();
  });
  it('bad ids, bodies and queries are 4xx with an {"error"} body, never a 500', async () => {
    const repo = await register(s.url, 'bad');
    const f = new Fixture(s, repo);
    const base = await f.snap(BASE, true);
    const c = await f.change(base, { ...BASE, 'a.txt': 'x\n' });
    const bodies: unknown[] = [null, [], 'x', 5, {}, { change_ref: 5, mode: 'merge' }, { change_ref: c.ref, mode: 'merge', target_line: '' }, { change_ref: c.ref, mode: 'merge', target_line: 'a/../b' }, { change_ref: '', mode: 'merge' }, { change_ref: '../../x', mode: 'merge' }, { change_ref: c.ref }, { change_ref: c.ref, mode: null }, { change_ref: 'x'.repeat(100_000), mode: 'merge' }];
    for (const b of bodies) {
      const res = await f.post('/land-queue', b);
      expect(res.status, `${JSON.stringify(b).slice(0, 80)}: ${res.text}`).to.be.within(400, 499);
      expect(Object.keys(res.json ?? {})).to.deep.equal(['error']);
    }
    for (const q of ['?target_line=', '?target_line=..', '?target_line=a%00b', '?target_line=x&target_line=y']) {
      const res = await f.get(`/land-queue${q}`);
      expect(res.status, `${q}: ${res.text}`).to.be.oneOf([200, 400, 404, 422]);
      if (res.status !== 200) expect(Object.keys(res.json ?? {})).to.deep.equal(['error']);
    }
    for (const id of ['lq-', 'lq-1x', 'lq-99999999999', '%00', 'lq-01', 'x'.repeat(5000)]) {
      for (const m of ['GET', 'DELETE'] as const) {
        const res = await api(s.url, m, R(repo, `/land-queue/${id}`));
        expect(res.status, `${m} ${id.slice(0, 20)}: ${res.text}`).to.be.within(400, 499);
        expect(Object.keys(res.json ?? {})).to.deep.equal(['error']);
      }
    }
  });
});
