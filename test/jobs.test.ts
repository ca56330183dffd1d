// Worker jobs over real HTTP (spec: "Worker Job", the transition table's Worker Job rows,
// "Worker jobs", "Authentication", "Limits"): the lifecycle, every rejected input with its
// status and an unchanged job, lease fencing, expiry with a short configured lease, claim
// races, restarts in the middle of a lease, kind-7 completion rules and the binary job key.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import type { CairnService } from '../lib/authority/service.js';
import { startServer } from '../lib/cli/serve.js';
import { push } from '../lib/client/transfer.js';
import { snapshotId } from '../lib/domain/content.js';
import type { JobPolicy } from '../lib/domain/jobs.js';
import { api, register, spawnServer, tempDir, type ApiResponse } from './helpers.js';

const V3 = 'svc.runner.native-job.v3';
const QUEUE = 'svc.server.worker-job.service.v1';
const RESULT = 'svc.runner.native-result.v1';
const COMMIT = 'svc.remote_sync.zstd_bulk.commit.v1';
const CLAIM = '/v1/native/worker-jobs:claim';

const R = (repo: number) => `/v1/native/repository-authorities/${repo}`;
const JOB = (repo: number, index: number | string) => `${R(repo)}/worker-jobs/${index}`;
const nowS = () => Math.floor(Date.now() / 1000);

/** binary-worker-job-key.v0 as hex: repository_index u32 LE, worker_job_index u32 LE. */
function jobKey(repo: number, index: number): string {
  const b = Buffer.alloc(8);
  b.writeUInt32LE(repo, 0);
  b.writeUInt32LE(index, 4);
  return b.toString('hex');
}

interface JobServer {
  url: string;
  service: CairnService;
  dataDir: string;
  stop(): Promise<void>;
}

/** startTestServer cannot pass a jobPolicy, so build the in-process server here. */
async function startJobServer(jobPolicy?: JobPolicy, dataDir = path.join(tempDir(), 'data')): Promise<JobServer> {
  const running = await startServer({ host: '127.0.0.1', port: 0, dataDir, log: pino({ level: 'silent' }), jobPolicy });
  const service = await running.ready;
  return { url: running.url, service, dataDir, stop: () => running.stop() };
}

async function pushTree(url: string, repo: number, files: Record<string, string>, line = 'main') {
  const dir = path.join(tempDir(), 'tree');
  for (const [name, content] of Object.entries(files)) {
    await fsp.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await fsp.writeFile(path.join(dir, name), content);
  }
  return push({ server: url, repo, line, dir, moveLine: true, progress: false });
}

function expectError(res: ApiResponse, status: number, what = ''): void {
  expect(res.status, `${what}: ${res.text}`).to.equal(status);
  expect(res.headers.get('content-type'), what).to.match(/^application\/json/);
  expect(res.json, what).to.be.an('object').that.has.all.keys('error');
  expect(res.json.error, what).to.be.a('string').and.not.equal('');
}

async function getJob(url: string, repo: number, index: number): Promise<Record<string, any>> {
  const res = await api(url, 'GET', JOB(repo, index));
  expect(res.status, res.text).to.equal(200);
  expect(res.json.contract).to.equal(QUEUE);
  return res.json.job;
}

async function listAll(url: string, repo: number): Promise<unknown> {
  const res = await api(url, 'GET', `${R(repo)}/worker-jobs?limit=1000`);
  expect(res.status, res.text).to.equal(200);
  return res.json;
}

const claimBody = (kinds: number[] = [11], repos: number[] = []) => ({ accepted_job_kinds: kinds, repository_indexes: repos, accepted_runtime_contracts: [V3] });

async function claimNext(url: string, repos: number[], kinds: number[] = [11]): Promise<Record<string, any> | null> {
  const res = await api(url, 'POST', CLAIM, { json: claimBody(kinds, repos) });
  expect(res.status, res.text).to.equal(200);
  expect(res.json.contract).to.equal(V3);
  return res.json.claimed_job;
}

async function claimExact(url: string, repo: number, index: number): Promise<Record<string, any>> {
  const res = await api(url, 'POST', `${JOB(repo, index)}:claim`, { json: { accepted_runtime_contracts: [V3] } });
  expect(res.status, res.text).to.equal(200);
  expect(res.json.claimed_job.worker_job_index).to.equal(index);
  return res.json.claimed_job;
}

async function runCi(url: string, repo: number, snapshot?: string): Promise<Record<string, any>> {
  const res = await api(url, 'POST', `${R(repo)}:runCi`, { json: snapshot ? { snapshot_id: snapshot } : {} });
  expect(res.status, res.text).to.equal(200);
  return res.json;
}

/** A new repository with one snapshot on main and one queued repo.ci job for it. */
async function repoWithJob(url: string, name: string): Promise<{ repo: number; job: number; snapshot: string }> {
  const repo = await register(url, name);
  const pushed = await pushTree(url, repo, { 'ci/run.sh': `echo ${name}\n` });
  const run = await runCi(url, repo);
  return { repo, job: run.job.worker_job_index, snapshot: pushed.snapshot_id };
}

/** Send `req`, expect an error, and expect the job (and the repository's whole list) unchanged. */
async function rejectedUnchanged(url: string, repo: number, index: number, what: string, status: number, send: () => Promise<ApiResponse>): Promise<ApiResponse> {
  const before = await getJob(url, repo, index);
  const listBefore = await listAll(url, repo);
  const res = await send();
  expectError(res, status, what);
  expect(await getJob(url, repo, index), what).to.deep.equal(before);
  expect(await listAll(url, repo), what).to.deep.equal(listBefore);
  return res;
}

async function waitFor(cond: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

// ---------------------------------------------------------------------------------------------

describe('worker jobs: the lifecycle over HTTP', () => {
  let s: JobServer;
  let repo: number;
  let head: string;
  before(async () => {
    s = await startJobServer();
    await register(s.url, 'pad-0');
    await register(s.url, 'pad-1');
    repo = await register(s.url, 'jobs');
    expect(repo).to.equal(2);
    head = (await pushTree(s.url, repo, { 'ci/run.sh': 'exit 0\n', 'README.md': 'hello\n' })).snapshot_id;
  });
  after(() => s.stop());

  const tokens: string[] = [];
  const texts: string[] = [];
  const keep = (res: ApiResponse) => { texts.push(res.text); return res; };

  it(':runCi → get/list → claim → heartbeat → complete', async () => {
    const t0 = nowS();
    const run = keep(await api(s.url, 'POST', `${R(repo)}:runCi`, { json: {} }));
    expect(run.status, run.text).to.equal(200);
    expect(run.json).to.include({ repository_index: repo, snapshot_id: head, queued: true, delivery: 'binary_worker_job' });
    expect(run.json.snapshot_index).to.be.a('number');
    const queued = run.json.job;
    expect(queued).to.include({
      repository_index: repo, worker_job_index: 0, job_key: jobKey(repo, 0), job_kind: 11, job_type: 'repo.ci',
      state_kind: 1, state: 'queued', retry_status: 'none', outcome: null, attempt_count: 0, max_attempts: 3,
      error_kind: null, error: null, snapshot_id: head, snapshot_index: run.json.snapshot_index, patchset_id: null,
      trigger: 'manual', timeout_s: 1800, available: true, locked_at_s: null, lease_expires_at_s: null,
      completed_at_s: null, tombstoned: false, ci_outcome: null,
    });
    expect(queued.created_at_s).to.be.within(t0, nowS());
    expect(queued).to.not.have.property('ci'); // the compact CI projection is for patchset.ci only

    expect(keep(await api(s.url, 'GET', JOB(repo, 0))).json).to.deep.equal({ contract: QUEUE, job: queued });
    expect(keep(await api(s.url, 'GET', `${R(repo)}/worker-jobs`)).json).to.deep.equal({
      contract: QUEUE, repository_index: repo, state_kind: null, outcome: null, limit: 50, count: 1, next_cursor: null, jobs: [queued],
    });

    const claim = await api(s.url, 'POST', CLAIM, { json: claimBody([11], []) });
    expect(claim.status, claim.text).to.equal(200);
    const { contract, claimed_job: c, ...flat } = claim.json;
    expect(contract).to.equal(V3);
    expect(flat).to.deep.equal(c); // the claim result is also spread at the top level
    tokens.push(c.lease_token);
    expect(c).to.include({ repository_index: repo, worker_job_index: 0, job_kind: 11, job_type: 'repo.ci', attempt_count: 1 });
    expect(c.lease_token).to.match(/^[0-9a-f]{32}$/);
    expect(c.lease_expires_at_s).to.be.within(t0 + 120, nowS() + 120);
    expect(c.runtime_request).to.include({ contract: V3, repository_index: repo, snapshot_id: head, patchset_id: null, timeout_s: 1800 });
    expect(c.runtime_request.entrypoints.posix).to.deep.equal({ path: 'ci/run.sh', argv: ['sh', 'ci/run.sh'] });
    expect(c.runtime_request.entrypoints.windows.path).to.equal('ci/run.ps1');
    expect(c.job).to.include({ state_kind: 2, state: 'running', attempt_count: 1, available: false, lease_expires_at_s: c.lease_expires_at_s, job_key: jobKey(repo, 0) });
    expect(c.job.locked_at_s).to.be.within(t0, nowS());
    expect(JSON.stringify(c.job)).to.not.include(c.lease_token);

    const running = await getJob(s.url, repo, 0);
    expect(running).to.deep.equal(c.job);
    expect(running).to.not.have.any.keys('lease_token', 'lease_token_hash');

    const lease = { attempt_count: 1, lease_token: c.lease_token };
    const hb = keep(await api(s.url, 'POST', `${JOB(repo, 0)}:heartbeat`, { json: lease }));
    expect(hb.status, hb.text).to.equal(200);
    expect(hb.json).to.include({ contract: QUEUE, heartbeat: true, attempt_count: 1 });
    expect(hb.json.lease_expires_at_s).to.be.at.least(c.lease_expires_at_s);
    expect(hb.json.job).to.include({ state: 'running', lease_expires_at_s: hb.json.lease_expires_at_s });

    const done = keep(await api(s.url, 'POST', `${JOB(repo, 0)}:complete`, { json: { ...lease, detail: {} } }));
    expect(done.status, done.text).to.equal(200);
    expect(done.json).to.include({ contract: QUEUE, completed: true });
    expect(done.json.job).to.include({
      state_kind: 3, state: 'succeeded', outcome: 'succeeded', retry_status: 'none', attempt_count: 1,
      error_kind: null, available: false, lease_expires_at_s: null, ci_outcome: 'pass',
    });
    expect(done.json.job.completed_at_s).to.be.within(t0, nowS());
    expect(await getJob(s.url, repo, 0)).to.deep.equal(done.json.job);

    // A finished job takes no further lease actions, and nothing is left to claim.
    for (const action of ['heartbeat', 'complete', 'fail']) {
      const body = action === 'heartbeat' ? lease : { ...lease, detail: action === 'fail' ? { retryable: true, error: 'x' } : {} };
      keep(await rejectedUnchanged(s.url, repo, 0, `${action} after complete`, 409, () => api(s.url, 'POST', `${JOB(repo, 0)}:${action}`, { json: body })));
    }
    expect(await claimNext(s.url, [repo])).to.equal(null);
  });

  it('fail: retryable requeues (new attempt, new token, the old lease is fenced); non-retryable fails for good', async () => {
    const run = keep(await api(s.url, 'POST', `${R(repo)}:runCi`, { json: {} }));
    expect(run.json.queued).to.equal(true);
    const index = run.json.job.worker_job_index;
    expect(index).to.equal(1);
    const c1 = (await claimNext(s.url, [repo]))!;
    tokens.push(c1.lease_token);
    expect(c1).to.include({ worker_job_index: index, attempt_count: 1 });

    const f1 = keep(await api(s.url, 'POST', `${JOB(repo, index)}:fail`, { json: { attempt_count: 1, lease_token: c1.lease_token, detail: { retryable: true, error: 'network flake' } } }));
    expect(f1.status, f1.text).to.equal(200);
    expect(f1.json).to.include({ contract: QUEUE, failed: true, requeued: true });
    expect(f1.json.job).to.include({
      state_kind: 1, state: 'queued', retry_status: 'retry_scheduled', error_kind: 'runner_failure', error: 'network flake',
      attempt_count: 1, outcome: null, available: true, lease_expires_at_s: null, completed_at_s: null,
    });
    keep(await rejectedUnchanged(s.url, repo, index, 'heartbeat on the requeued job with the old lease', 409,
      () => api(s.url, 'POST', `${JOB(repo, index)}:heartbeat`, { json: { attempt_count: 1, lease_token: c1.lease_token } })));

    const c2 = (await claimNext(s.url, [repo]))!;
    tokens.push(c2.lease_token);
    expect(c2).to.include({ worker_job_index: index, attempt_count: 2 });
    expect(c2.lease_token).to.not.equal(c1.lease_token);
    const stale = [
      ['the old attempt with the new token', { attempt_count: 1, lease_token: c2.lease_token }],
      ['the new attempt with the old token', { attempt_count: 2, lease_token: c1.lease_token }],
      ['the old lease', { attempt_count: 1, lease_token: c1.lease_token }],
    ] as const;
    for (const [what, lease] of stale) {
      for (const action of ['heartbeat', 'complete', 'fail']) {
        const body = action === 'heartbeat' ? lease : { ...lease, detail: action === 'fail' ? { retryable: false, error: 'x' } : {} };
        keep(await rejectedUnchanged(s.url, repo, index, `${action} with ${what}`, 409, () => api(s.url, 'POST', `${JOB(repo, index)}:${action}`, { json: body })));
      }
    }

    const f2 = keep(await api(s.url, 'POST', `${JOB(repo, index)}:fail`, { json: { attempt_count: 2, lease_token: c2.lease_token, detail: { retryable: false, error: 'bad config' } } }));
    expect(f2.status, f2.text).to.equal(200);
    expect(f2.json).to.include({ failed: true, requeued: false });
    expect(f2.json.job).to.include({
      state_kind: 4, state: 'failed', retry_status: 'none', error_kind: 'runner_failure_non_retryable', error: 'bad config',
      outcome: 'failed', attempt_count: 2, available: false, lease_expires_at_s: null,
    });
    expect(f2.json.job.completed_at_s).to.be.a('number');
    expect(await claimNext(s.url, [repo])).to.equal(null);
  });

  it('job_key is repository_index u32 LE followed by worker_job_index u32 LE, in get, list and claim projections', async () => {
    expect(jobKey(2, 1)).to.equal('0200000001000000');
    const list = (await api(s.url, 'GET', `${R(repo)}/worker-jobs`)).json;
    expect(list.jobs.map((j: any) => [j.worker_job_index, j.job_key])).to.deep.equal([[1, '0200000001000000'], [0, '0200000000000000']]);
    expect((await getJob(s.url, repo, 1)).job_key).to.equal('0200000001000000');
    const other = await register(s.url, 'other');
    await pushTree(s.url, other, { x: 'y' });
    const run = await runCi(s.url, other);
    expect(run.job.job_key).to.equal(jobKey(other, 0)).and.equal('0300000000000000');
    const c = (await claimNext(s.url, [other]))!;
    expect(c.job.job_key).to.equal('0300000000000000');
    await api(s.url, 'POST', `${JOB(other, 0)}:complete`, { json: { attempt_count: 1, lease_token: c.lease_token, detail: {} } });
  });

  it('never discloses a lease token: not in responses other than the claim, nor in jobs.log', async () => {
    expect(tokens.length).to.equal(3);
    texts.push(JSON.stringify(await listAll(s.url, repo)));
    for (const text of texts) for (const token of tokens) expect(text).to.not.include(token);
    const log = await fsp.readFile(path.join(s.dataDir, 'repositories', String(repo), 'jobs.log'));
    for (const token of tokens) {
      expect(log.includes(Buffer.from(token, 'utf8'))).to.equal(false);
      expect(log.includes(Buffer.from(token, 'hex'))).to.equal(false);
    }
  });

  it(':runCi rejects an unresolvable or malformed snapshot', async () => {
    const empty = await register(s.url, 'empty');
    expectError(await api(s.url, 'POST', `${R(empty)}:runCi`, { json: {} }), 404, 'no main head');
    expectError(await api(s.url, 'POST', `${R(empty)}:runCi`, { json: { snapshot_id: null } }), 404, 'null snapshot, no main head');
    expectError(await api(s.url, 'POST', `${R(repo)}:runCi`, { json: { snapshot_id: 'abc' } }), 400, 'short id');
    expectError(await api(s.url, 'POST', `${R(repo)}:runCi`, { json: { snapshot_id: 'A'.repeat(64) } }), 400, 'uppercase id');
    expectError(await api(s.url, 'POST', `${R(repo)}:runCi`, { json: { snapshot_id: 'a'.repeat(64) } }), 404, 'unknown snapshot');
    expectError(await api(s.url, 'POST', `${R(repo)}:runCi`, { json: { snapshot_id: 5 } }), 422, 'number');
    expectError(await api(s.url, 'POST', `${R(repo)}:runCi`, { json: [] }), 422, 'array body');
    expectError(await api(s.url, 'POST', `${R(99)}:runCi`, { json: {} }), 404, 'unregistered repository');
    expect((await api(s.url, 'GET', `${R(empty)}/worker-jobs`)).json.count).to.equal(0);
  });
});

// ---------------------------------------------------------------------------------------------

describe('worker jobs: every bad input is rejected with its status and changes nothing', () => {
  let s: JobServer;
  let repo: number;
  let queuedJob: number; // stays queued
  let runningJob: number; // claimed exactly, stays running
  let internalJob: number; // kind 1 (snapshot.ingest), enqueued inside the service
  let lease: { attempt_count: number; lease_token: string };
  const post = (p: string, json: unknown) => api(s.url, 'POST', p, { json });

  before(async () => {
    s = await startJobServer();
    const a = await repoWithJob(s.url, 'bad-input');
    repo = a.repo;
    queuedJob = a.job;
    const dev = await pushTree(s.url, repo, { 'ci/run.sh': 'exit 1\n' }, 'dev');
    runningJob = (await runCi(s.url, repo, dev.snapshot_id)).job.worker_job_index;
    const c = await claimExact(s.url, repo, runningJob);
    lease = { attempt_count: c.attempt_count, lease_token: c.lease_token };
    internalJob = (await s.service.authority(repo).jobs.enqueue(1, { snapshot_id: a.snapshot })).worker_job_index;
    expect([queuedJob, runningJob, internalJob]).to.deep.equal([0, 1, 2]);
  });
  after(() => s.stop());

  it('claim-next: duplicates, unknown or internal kinds, bad repository indexes and bad types', async () => {
    const cases: [string, unknown, number][] = [
      ['duplicate accepted_job_kinds', { accepted_job_kinds: [11, 11], repository_indexes: [], accepted_runtime_contracts: [V3] }, 400],
      ['duplicate repository_indexes', { accepted_job_kinds: [11], repository_indexes: [repo, repo], accepted_runtime_contracts: [V3] }, 400],
      ['duplicate accepted_runtime_contracts', { accepted_job_kinds: [11], repository_indexes: [], accepted_runtime_contracts: [V3, V3] }, 400],
      ['unknown kind 10', claimBody([10]), 400],
      ['unknown kind 12', claimBody([11, 12]), 400],
      ['unknown kind 0', claimBody([0]), 400],
      ['negative kind', claimBody([-7]), 400],
      ['internal kind 1', claimBody([1]), 400],
      ['internal kind 6 next to 11', claimBody([11, 6]), 400],
      ['internal kind 9', claimBody([7, 9]), 400],
      ['no kinds', claimBody([]), 400],
      ['negative repository index', claimBody([11], [-1]), 400],
      ['repository index above u32', claimBody([11], [4294967296]), 400],
      ['unregistered repository index', claimBody([11], [99]), 404],
      ['a serving and an unregistered repository index', claimBody([11], [repo, 99]), 404],
      ['accepted_job_kinds missing', { repository_indexes: [], accepted_runtime_contracts: [V3] }, 422],
      ['accepted_job_kinds not an array', { accepted_job_kinds: 11, accepted_runtime_contracts: [V3] }, 422],
      ['kind as a string', { accepted_job_kinds: ['11'], accepted_runtime_contracts: [V3] }, 422],
      ['fractional kind', { accepted_job_kinds: [11.5], accepted_runtime_contracts: [V3] }, 422],
      ['repository index as a string', { accepted_job_kinds: [11], repository_indexes: ['0'], accepted_runtime_contracts: [V3] }, 422],
      ['accepted_runtime_contracts missing', { accepted_job_kinds: [11] }, 422],
      ['runtime contract not a string', { accepted_job_kinds: [11], accepted_runtime_contracts: [3] }, 422],
      ['array body', [claimBody()], 422],
    ];
    for (const [what, body, status] of cases) {
      await rejectedUnchanged(s.url, repo, queuedJob, what, status, () => post(CLAIM, body));
    }
    await rejectedUnchanged(s.url, repo, queuedJob, 'malformed JSON', 400, () => api(s.url, 'POST', CLAIM, { body: '{"accepted_job_kinds": [11', headers: { 'content-type': 'application/json' } }));
    await rejectedUnchanged(s.url, repo, queuedJob, 'no content type', 415, () => api(s.url, 'POST', CLAIM, { body: JSON.stringify(claimBody()) }));
  });

  it('claim-next without the runner contract answers claimed_job null; internal jobs are never handed out', async () => {
    const before = await listAll(s.url, repo);
    const res = await post(CLAIM, { accepted_job_kinds: [7, 11], repository_indexes: [repo], accepted_runtime_contracts: ['svc.runner.native-job.v2'] });
    expect(res.status, res.text).to.equal(200);
    expect(res.json).to.deep.equal({ contract: V3, claimed_job: null });
    expect(await listAll(s.url, repo)).to.deep.equal(before);
    // The only queued jobs are the repo.ci one and the internal one: a kind-7 claim gets neither.
    expect(await claimNext(s.url, [repo], [7])).to.equal(null);
    expect(await listAll(s.url, repo)).to.deep.equal(before);
  });

  it('exact claim: unknown fields, duplicates, missing runner contract, internal kind, not queued, unknown job', async () => {
    const at = (i: number | string) => `${JOB(repo, i)}:claim`;
    const cases: [string, number, unknown, number][] = [
      ['unknown field', queuedJob, { accepted_runtime_contracts: [V3], accepted_job_kinds: [11] }, 422],
      ['missing contracts', queuedJob, {}, 422],
      ['contracts not an array', queuedJob, { accepted_runtime_contracts: V3 }, 422],
      ['duplicate contracts', queuedJob, { accepted_runtime_contracts: [V3, V3] }, 400],
      ['no runner contract', queuedJob, { accepted_runtime_contracts: ['svc.runner.native-job.v2'] }, 409],
      ['empty contracts', queuedJob, { accepted_runtime_contracts: [] }, 409],
      ['internal kind', internalJob, { accepted_runtime_contracts: [V3] }, 409],
      ['running job', runningJob, { accepted_runtime_contracts: [V3] }, 409],
    ];
    for (const [what, index, body, status] of cases) {
      await rejectedUnchanged(s.url, repo, index, what, status, () => post(at(index), body));
    }
    const listBefore = await listAll(s.url, repo);
    expectError(await post(at(3), { accepted_runtime_contracts: [V3] }), 404, 'unknown job');
    expectError(await post(at(4294967295), { accepted_runtime_contracts: [V3] }), 404, 'max u32 job');
    expectError(await post(at('01'), { accepted_runtime_contracts: [V3] }), 400, 'non-canonical index');
    expectError(await post(at(4294967296), { accepted_runtime_contracts: [V3] }), 400, 'index above u32');
    expectError(await post(`${R(99)}/worker-jobs/0:claim`, { accepted_runtime_contracts: [V3] }), 404, 'unregistered repository');
    expect(await listAll(s.url, repo)).to.deep.equal(listBefore);
    // The internal job is still queued and still not available to external runners.
    expect(await getJob(s.url, repo, internalJob)).to.include({ job_kind: 1, job_type: 'snapshot.ingest', state: 'queued', available: false });
  });

  it('heartbeat: detail is forbidden; bad types, wrong token and stale attempt are rejected', async () => {
    const hb = `${JOB(repo, runningJob)}:heartbeat`;
    const t = lease.lease_token;
    const cases: [string, unknown, number][] = [
      ['detail object', { ...lease, detail: {} }, 422],
      ['detail null', { ...lease, detail: null }, 422],
      ['detail string', { ...lease, detail: 'x' }, 422],
      ['attempt_count missing', { lease_token: t }, 422],
      ['lease_token missing', { attempt_count: 1 }, 422],
      ['attempt_count as string', { attempt_count: '1', lease_token: t }, 422],
      ['fractional attempt_count', { attempt_count: 1.5, lease_token: t }, 422],
      ['lease_token as number', { attempt_count: 1, lease_token: 123 }, 422],
      ['negative attempt_count', { attempt_count: -1, lease_token: t }, 400],
      ['attempt_count above u16', { attempt_count: 65536, lease_token: t }, 400],
      ['wrong token', { attempt_count: 1, lease_token: 'f'.repeat(32) }, 409],
      ['empty token', { attempt_count: 1, lease_token: '' }, 409],
      ['uppercased token', { attempt_count: 1, lease_token: t.toUpperCase() }, 409],
      ['token with a suffix', { attempt_count: 1, lease_token: `${t}0` }, 409],
      ['stale attempt 0', { attempt_count: 0, lease_token: t }, 409],
      ['future attempt 2', { attempt_count: 2, lease_token: t }, 409],
      ['array body', [lease], 422],
    ];
    for (const [what, body, status] of cases) {
      const res = await rejectedUnchanged(s.url, repo, runningJob, what, status, () => post(hb, body));
      expect(res.text).to.not.include(t);
    }
    await rejectedUnchanged(s.url, repo, runningJob, 'malformed JSON', 400, () => api(s.url, 'POST', hb, { body: '{', headers: { 'content-type': 'application/json' } }));
    await rejectedUnchanged(s.url, repo, runningJob, 'empty body', 400, () => api(s.url, 'POST', hb, { body: '', headers: { 'content-type': 'application/json' } }));
    await rejectedUnchanged(s.url, repo, runningJob, 'text/plain', 415, () => api(s.url, 'POST', hb, { body: JSON.stringify(lease), headers: { 'content-type': 'text/plain' } }));
    // A lease action on a queued job, an internal job, an unknown job, a bad index.
    await rejectedUnchanged(s.url, repo, queuedJob, 'heartbeat on a queued job', 409, () => post(`${JOB(repo, queuedJob)}:heartbeat`, lease));
    await rejectedUnchanged(s.url, repo, internalJob, 'heartbeat on an internal job', 409, () => post(`${JOB(repo, internalJob)}:heartbeat`, lease));
    expectError(await post(`${JOB(repo, 3)}:heartbeat`, lease), 404, 'unknown job');
    expectError(await post(`${JOB(repo, '1 ')}:heartbeat`, lease), 400, 'index with a space');
    expectError(await post(`${JOB(repo, '+1')}:heartbeat`, lease), 400, 'signed index');
  });

  it('complete (kind 11): detail is required and must be an object; the lease is checked', async () => {
    const at = `${JOB(repo, runningJob)}:complete`;
    const cases: [string, unknown, number][] = [
      ['detail missing', { ...lease }, 422],
      ['detail null', { ...lease, detail: null }, 422],
      ['detail string', { ...lease, detail: 'done' }, 422],
      ['detail number', { ...lease, detail: 1 }, 422],
      ['lease_token missing', { attempt_count: 1, detail: {} }, 422],
      ['attempt_count above u16', { attempt_count: 70000, lease_token: lease.lease_token, detail: {} }, 400],
      ['wrong token', { attempt_count: 1, lease_token: 'a'.repeat(32), detail: {} }, 409],
      ['stale attempt', { attempt_count: 0, lease_token: lease.lease_token, detail: {} }, 409],
    ];
    for (const [what, body, status] of cases) await rejectedUnchanged(s.url, repo, runningJob, what, status, () => post(at, body));
    await rejectedUnchanged(s.url, repo, queuedJob, 'complete on a queued job', 409, () => post(`${JOB(repo, queuedJob)}:complete`, { ...lease, detail: {} }));
    expectError(await post(`${JOB(repo, 3)}:complete`, { ...lease, detail: {} }), 404, 'unknown job');
  });

  it('fail: malformed detail and error text over 4,096 characters are rejected; exactly 4,096 is accepted', async () => {
    const at = `${JOB(repo, runningJob)}:fail`;
    const cases: [string, unknown, number][] = [
      ['detail missing', { ...lease }, 422],
      ['detail empty', { ...lease, detail: {} }, 422],
      ['error missing', { ...lease, detail: { retryable: true } }, 422],
      ['retryable missing', { ...lease, detail: { error: 'x' } }, 422],
      ['retryable as string', { ...lease, detail: { retryable: 'true', error: 'x' } }, 422],
      ['error as number', { ...lease, detail: { retryable: true, error: 5 } }, 422],
      ['error null', { ...lease, detail: { retryable: true, error: null } }, 422],
      ['4,097 ASCII characters', { ...lease, detail: { retryable: true, error: 'e'.repeat(4097) } }, 400],
      ['4,097 astral characters', { ...lease, detail: { retryable: true, error: '😀'.repeat(4097) } }, 400],
      ['wrong token', { attempt_count: 1, lease_token: 'b'.repeat(32), detail: { retryable: true, error: 'x' } }, 409],
      ['stale attempt', { attempt_count: 2, lease_token: lease.lease_token, detail: { retryable: true, error: 'x' } }, 409],
    ];
    for (const [what, body, status] of cases) await rejectedUnchanged(s.url, repo, runningJob, what, status, () => post(at, body));
    await rejectedUnchanged(s.url, repo, queuedJob, 'fail on a queued job', 409, () => post(`${JOB(repo, queuedJob)}:fail`, { ...lease, detail: { retryable: true, error: 'x' } }));

    const max = 'é'.repeat(4096);
    const ok = await post(at, { ...lease, detail: { retryable: false, error: max } });
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.json.job).to.include({ state: 'failed', error: max });
  });

  it('list: state_kind outside 1..4 and limit outside 1..1000 (or not canonical integers) are 400', async () => {
    const before = await listAll(s.url, repo);
    const bad = [
      'state_kind=0', 'state_kind=5', 'state_kind=-1', 'state_kind=1.5', 'state_kind=01', 'state_kind=abc', 'state_kind=',
      'state_kind=%201', 'state_kind=1&state_kind=2', 'state_kind=4294967297',
      'limit=0', 'limit=1001', 'limit=-5', 'limit=abc', 'limit=', 'limit=01', 'limit=1e3', 'limit=50.0', 'limit=99999999999',
      'limit=1&limit=2',
    ];
    for (const q of bad) expectError(await api(s.url, 'GET', `${R(repo)}/worker-jobs?${q}`), 400, q);
    expect(await listAll(s.url, repo)).to.deep.equal(before);

    const one = (await api(s.url, 'GET', `${R(repo)}/worker-jobs?limit=1`)).json;
    expect(one).to.include({ limit: 1, count: 1, state_kind: null });
    expect(one.jobs[0].worker_job_index).to.equal(2); // newest first
    const byState = async (k: number) => (await api(s.url, 'GET', `${R(repo)}/worker-jobs?state_kind=${k}&limit=1000`)).json;
    expect((await byState(1)).jobs.map((j: any) => j.worker_job_index)).to.deep.equal([2, 0]);
    expect((await byState(2)).jobs).to.deep.equal([]);
    expect((await byState(4)).jobs.map((j: any) => j.worker_job_index)).to.deep.equal([1]);
    expect((await byState(3))).to.include({ state_kind: 3, count: 0 });
    expectError(await api(s.url, 'GET', `${R(99)}/worker-jobs`), 404, 'unregistered repository');
    expectError(await api(s.url, 'GET', JOB(repo, 3)), 404, 'unknown job');
    expectError(await api(s.url, 'GET', JOB(repo, '007')), 400, 'non-canonical job index');
  });
});

// ---------------------------------------------------------------------------------------------

describe('worker jobs: the CI outcome (ci_outcome) and the ?outcome= filter', () => {
  let s: JobServer;
  let repo: number;
  const expected = new Map<number, string | null>();
  const result = (status: string, tests: string, suites: { suite_id: string; status: string; blocking: boolean }[] = []) =>
    ({ contract: RESULT, status, tests_status: tests, suite_result_count: suites.length, suite_results: suites });

  /** Queue a repo.ci job, claim it and end it with `end` (a completion detail, or `fail`). */
  async function repoJob(end: Record<string, unknown> | 'fail' | 'queued', outcome: string | null): Promise<number> {
    const index = (await runCi(s.url, repo)).job.worker_job_index;
    expected.set(index, outcome);
    if (end === 'queued') return index;
    const c = await claimExact(s.url, repo, index);
    const lease = { attempt_count: c.attempt_count, lease_token: c.lease_token };
    const res = end === 'fail'
      ? await api(s.url, 'POST', `${JOB(repo, index)}:fail`, { json: { ...lease, detail: { retryable: false, error: 'boom' } } })
      : await api(s.url, 'POST', `${JOB(repo, index)}:complete`, { json: { ...lease, detail: end } });
    expect(res.status, res.text).to.equal(200);
    expect(res.json.job.ci_outcome).to.equal(outcome);
    return index;
  }

  const page = async (q: string) => {
    const res = await api(s.url, 'GET', `${R(repo)}/worker-jobs?${q}`);
    expect(res.status, `${q}: ${res.text}`).to.equal(200);
    return res.json;
  };
  const indexes = (list: { jobs: { worker_job_index: number }[] }) => list.jobs.map((j) => j.worker_job_index);
  const wanted = (outcome: string, state?: number, all?: Record<string, any>[]) =>
    [...expected].filter(([i, o]) => o === outcome && (state === undefined || all!.find((j) => j.worker_job_index === i)!.state_kind === state)).map(([i]) => i).sort((a, b) => b - a);

  before(async () => {
    s = await startJobServer();
    repo = await register(s.url, 'outcomes');
    const base = (await pushTree(s.url, repo, { 'ci/run.sh': 'exit 0\n' })).snapshot_id;
    await repoJob({}, 'pass'); // no result: the runner reported success
    await repoJob({ result: result('succeeded', 'pass') }, 'pass');
    await repoJob({ result: result('succeeded', 'fail') }, 'fail'); // the job ran (state succeeded); its tests failed
    await repoJob({ result: result('succeeded', 'pass', [{ suite_id: 'e2e', status: 'fail', blocking: true }]) }, 'fail');
    await repoJob({ result: result('succeeded', 'pass', [{ suite_id: 'lint', status: 'fail', blocking: false }]) }, 'pass');
    await repoJob({ result: result('command_failed', 'fail') }, 'fail');
    await repoJob({ result: result('timed_out', 'fail') }, 'timed_out');
    await repoJob('fail', 'fail'); // failed for good: state failed
    // a patchset.ci job of a run that a newer run replaced: superseded
    const t = (await api(s.url, 'POST', `${R(repo)}/tasks`, { json: { title: 'T', intent: 'i' } })).json.task;
    const c = (await api(s.url, 'POST', `${R(repo)}/changes`, { json: { task_id: t.task_id, title: 'C', base_line: 'main' } })).json.change;
    const rev = (await pushTree(s.url, repo, { 'ci/run.sh': 'exit 1\n' }, 'side')).snapshot_id;
    const ps = (await api(s.url, 'POST', `${R(repo)}/changes/${c.change_id}/patchsets`, { json: { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' } })).json.patchset;
    for (let run = 0; run < 2; run++) {
      const r = await api(s.url, 'POST', `${R(repo)}/patchsets/${ps.patchset_id}:runCi`, { json: { trigger: 'manual_rerun' } });
      expect(r.status, r.text).to.equal(200);
      expected.set(r.json.job.worker_job_index, run === 0 ? 'superseded' : null);
    }
    await repoJob('queued', null);
  });
  after(() => s.stop());

  it('every job carries ci_outcome, derived from its completion (null while queued or running)', async () => {
    const all = (await page('limit=1000')).jobs as Record<string, any>[];
    expect(all).to.have.length(expected.size);
    for (const j of all) expect(j.ci_outcome, `job ${j.worker_job_index} (${j.state}, ${j.outcome})`).to.equal(expected.get(j.worker_job_index));
    for (const j of all) expect((await getJob(s.url, repo, j.worker_job_index)).ci_outcome).to.equal(j.ci_outcome);
  });

  it('?outcome= lists only the finished jobs of that outcome, newest first; with state_kind, of that state too', async () => {
    const all = (await page('limit=1000')).jobs as Record<string, any>[];
    for (const outcome of ['pass', 'fail', 'timed_out', 'superseded']) {
      const list = await page(`outcome=${outcome}&limit=1000`);
      expect(list).to.include({ outcome, state_kind: null, count: wanted(outcome).length, next_cursor: null });
      expect(indexes(list), outcome).to.deep.equal(wanted(outcome));
      expect(wanted(outcome)).to.not.deep.equal([]);
    }
    // the failing tests of a job that ran (state 3) are a `fail`, as is a job that failed (state 4)
    expect(indexes(await page('outcome=fail&state_kind=3&limit=1000'))).to.deep.equal(wanted('fail', 3, all));
    expect(indexes(await page('outcome=fail&state_kind=4&limit=1000'))).to.deep.equal(wanted('fail', 4, all));
    expect(wanted('fail', 3, all)).to.have.length(3);
    expect((await page('outcome=pass&state_kind=1')).jobs).to.deep.equal([]);
  });

  it('pages by cursor within the filter; a cursor of another outcome or of the unfiltered list is 400', async () => {
    const seen: number[] = [];
    let q = 'outcome=fail&limit=2';
    let first: Record<string, any> | null = null;
    for (;;) {
      const list = await page(q);
      first ??= list;
      seen.push(...indexes(list));
      if (!list.next_cursor) break;
      q = `outcome=fail&limit=2&cursor=${list.next_cursor}`;
    }
    expect(seen).to.deep.equal(wanted('fail'));
    const cursor = first!.next_cursor as string;
    expectError(await api(s.url, 'GET', `${R(repo)}/worker-jobs?outcome=pass&cursor=${cursor}`), 400, 'cursor of another outcome');
    expectError(await api(s.url, 'GET', `${R(repo)}/worker-jobs?cursor=${cursor}`), 400, 'outcome cursor without the filter');
    const plain = (await page('limit=1')).next_cursor;
    expectError(await api(s.url, 'GET', `${R(repo)}/worker-jobs?outcome=fail&cursor=${plain}`), 400, 'unfiltered cursor with a filter');
  });

  it('an unknown outcome is 400 and changes nothing', async () => {
    const before = await listAll(s.url, repo);
    for (const q of ['outcome=passed', 'outcome=', 'outcome=FAIL', 'outcome=succeeded', 'outcome=pass&outcome=fail', 'outcome=timed%20out']) {
      expectError(await api(s.url, 'GET', `${R(repo)}/worker-jobs?${q}`), 400, q);
    }
    expect(await listAll(s.url, repo)).to.deep.equal(before);
  });

  it('the outcome index is rebuilt from jobs.log at open: the same pages after a restart', async () => {
    const before = await Promise.all(['pass', 'fail', 'timed_out', 'superseded'].map((o) => page(`outcome=${o}&limit=1000`)));
    await s.stop();
    s = await startJobServer(undefined, s.dataDir);
    const after = await Promise.all(['pass', 'fail', 'timed_out', 'superseded'].map((o) => page(`outcome=${o}&limit=1000`)));
    expect(after.map(indexes)).to.deep.equal(before.map(indexes));
  });
});

// ---------------------------------------------------------------------------------------------

describe('worker jobs: patchset.ci (kind 7) completion rules', () => {
  let s: JobServer;
  let repo: number;
  let index: number;
  let lease: { attempt_count: number; lease_token: string };
  const suites = [
    { suite_id: 'unit', status: 'pass', blocking: true },
    { suite_id: 'lint', status: 'fail', blocking: false },
    { suite_id: 'e2e', status: 'fail', blocking: true },
  ];
  const good = { contract: RESULT, status: 'command_failed', tests_status: 'fail', suite_result_count: 3, suite_results: suites };

  before(async () => {
    s = await startJobServer();
    repo = await register(s.url, 'patchsets');
    const snapshot = (await pushTree(s.url, repo, { 'ci/run.sh': 'exit 0\n' })).snapshot_id;
    const job = await s.service.authority(repo).jobs.enqueue(7, { patchset_id: 'P1', snapshot_id: snapshot });
    index = job.worker_job_index;
    const projected = await getJob(s.url, repo, index);
    expect(projected).to.include({ job_kind: 7, job_type: 'patchset.ci', patchset_id: 'P1', snapshot_id: snapshot, state: 'queued', available: true, ci: null });
    expect(await claimNext(s.url, [repo], [11])).to.equal(null); // a repo.ci runner does not get it
    const c = (await claimNext(s.url, [repo], [7]))!;
    expect(c).to.include({ worker_job_index: index, job_kind: 7, job_type: 'patchset.ci', attempt_count: 1 });
    expect(c.runtime_request).to.include({ contract: V3, patchset_id: 'P1', snapshot_id: snapshot });
    lease = { attempt_count: 1, lease_token: c.lease_token };
  });
  after(() => s.stop());

  it('rejects a detail that breaks the rules (400) or does not fit the result shape (422), leaving the job running', async () => {
    const withResult = (patch: Record<string, unknown>) => ({ job_kind: 7, result: { ...good, ...patch } });
    const suite = (patch: Record<string, unknown>) => withResult({ suite_results: [{ ...suites[0], ...patch }], suite_result_count: 1 });
    const noField = (field: string) => {
      const r: Record<string, unknown> = { ...good };
      delete r[field];
      return { job_kind: 7, result: r };
    };
    const cases: [string, unknown, number][] = [
      ['empty detail', {}, 422],
      ['result missing', { job_kind: 7 }, 422],
      ['result null', { job_kind: 7, result: null }, 422],
      ['result string', { job_kind: 7, result: 'ok' }, 422],
      ['result array', { job_kind: 7, result: [good] }, 422],
      ['job_kind missing', { result: good }, 400],
      ['job_kind 11', { job_kind: 11, result: good }, 400],
      ['job_kind "7"', { job_kind: '7', result: good }, 400],
      ['other result contract', withResult({ contract: 'svc.runner.native-result.v2' }), 400],
      ['contract missing', noField('contract'), 422],
      ['status "passed"', withResult({ status: 'passed' }), 400],
      ['status missing', noField('status'), 422],
      ['tests_status "ok"', withResult({ tests_status: 'ok' }), 400],
      ['tests_status missing', noField('tests_status'), 422],
      ['suite_result_count too high', withResult({ suite_result_count: 4 }), 400],
      ['suite_result_count too low', withResult({ suite_result_count: 0 }), 400],
      ['suite_result_count string', withResult({ suite_result_count: '3' }), 422],
      ['suite_result_count fractional', withResult({ suite_result_count: 2.5 }), 422],
      ['suite_result_count missing', noField('suite_result_count'), 422],
      ['suite_results not an array', withResult({ suite_results: 'unit' }), 422],
      ['suite_results missing', noField('suite_results'), 422],
      ['suite status "skipped"', suite({ status: 'skipped' }), 400],
      ['suite status missing', withResult({ suite_results: [{ suite_id: 'x', blocking: true }], suite_result_count: 1 }), 422],
      ['suite blocking string', suite({ blocking: 'yes' }), 422],
      ['suite blocking missing', withResult({ suite_results: [{ suite_id: 'x', status: 'pass' }], suite_result_count: 1 }), 422],
      ['suite_id number', suite({ suite_id: 5 }), 422],
      ['suite_id empty', suite({ suite_id: '' }), 400],
      ['suite entry null', withResult({ suite_results: [null], suite_result_count: 1 }), 422],
    ];
    for (const [what, detail, status] of cases) {
      await rejectedUnchanged(s.url, repo, index, what, status, () => api(s.url, 'POST', `${JOB(repo, index)}:complete`, { json: { ...lease, detail } }));
    }
    await rejectedUnchanged(s.url, repo, index, 'good detail, wrong token', 409,
      () => api(s.url, 'POST', `${JOB(repo, index)}:complete`, { json: { attempt_count: 1, lease_token: 'c'.repeat(32), detail: { job_kind: 7, result: good } } }));
    expect(await getJob(s.url, repo, index)).to.include({ state: 'running', ci: null, outcome: null });
  });

  it('completes with a valid result and projects the compact CI evidence', async () => {
    const res = await api(s.url, 'POST', `${JOB(repo, index)}:complete`, { json: { ...lease, detail: { job_kind: 7, result: good } } });
    expect(res.status, res.text).to.equal(200);
    expect(res.json.job).to.include({ state: 'succeeded', state_kind: 3, outcome: 'command_failed', patchset_id: 'P1' });
    const evidence = { status: 'command_failed', tests_status: 'fail', suite_result_count: 3, failed_suite_count: 2, blocking_failure_count: 1, suite_results: good.suite_results.map((x: Record<string, unknown>) => ({ suite_id: x.suite_id, status: x.status, blocking: x.blocking })) };
    expect(res.json.job.ci).to.deep.equal(evidence);
    expect((await getJob(s.url, repo, index)).ci).to.deep.equal(evidence);
    expectError(await api(s.url, 'POST', `${JOB(repo, index)}:complete`, { json: { ...lease, detail: { job_kind: 7, result: good } } }), 409, 'second complete');
  });

  it('accepts an empty suite list when suite_result_count is 0', async () => {
    const snapshot = (await getJob(s.url, repo, index)).snapshot_id;
    const job = await s.service.authority(repo).jobs.enqueue(7, { patchset_id: 'P2', snapshot_id: snapshot });
    const c = await claimExact(s.url, repo, job.worker_job_index);
    const result = { contract: RESULT, status: 'succeeded', tests_status: 'pass', suite_result_count: 0, suite_results: [] };
    const res = await api(s.url, 'POST', `${JOB(repo, job.worker_job_index)}:complete`, { json: { attempt_count: 1, lease_token: c.lease_token, detail: { job_kind: 7, result } } });
    expect(res.status, res.text).to.equal(200);
    expect(res.json.job.ci).to.deep.equal({ status: 'succeeded', tests_status: 'pass', suite_result_count: 0, failed_suite_count: 0, blocking_failure_count: 0, suite_results: [] });
  });
});

// ---------------------------------------------------------------------------------------------

describe('worker jobs: lease expiry with a short configured lease (2 s, 2 attempts)', () => {
  let s: JobServer;
  const policy: JobPolicy = { leaseSeconds: 2, maxAttempts: 2, timeoutSeconds: 5 };
  before(async () => { s = await startJobServer(policy); });
  after(() => s.stop());

  const stored = (repo: number, index: number) => s.service.authority(repo).jobs.all()[index];

  it('applies the configured policy to new jobs', async () => {
    const { repo, job } = await repoWithJob(s.url, 'policy');
    expect(await getJob(s.url, repo, job)).to.include({ max_attempts: 2, timeout_s: 5 });
    const t0 = nowS();
    const c = await claimExact(s.url, repo, job);
    expect(c.lease_expires_at_s).to.be.within(t0 + 2, nowS() + 2);
    expect(c.runtime_request.timeout_s).to.equal(5);
  });

  it('heartbeats keep the lease alive past several lease lengths', async () => {
    const { repo, job } = await repoWithJob(s.url, 'heartbeat');
    const c = await claimExact(s.url, repo, job);
    const lease = { attempt_count: 1, lease_token: c.lease_token };
    let last = c.lease_expires_at_s;
    const started = Date.now();
    while (Date.now() - started < 4500) {
      await sleep(400);
      const hb = await api(s.url, 'POST', `${JOB(repo, job)}:heartbeat`, { json: lease });
      expect(hb.status, hb.text).to.equal(200);
      expect(hb.json.lease_expires_at_s).to.be.at.least(last).and.at.least(nowS() + 1);
      last = hb.json.lease_expires_at_s;
    }
    expect(last).to.be.greaterThan(c.lease_expires_at_s);
    const done = await api(s.url, 'POST', `${JOB(repo, job)}:complete`, { json: { ...lease, detail: {} } });
    expect(done.status, done.text).to.equal(200);
    expect(done.json.job).to.include({ state: 'succeeded', attempt_count: 1, error_kind: null });
  });

  it('an expired lease requeues the job (attempt counted), the old lease is rejected, and the last attempt exhausts it', async () => {
    const { repo, job } = await repoWithJob(s.url, 'expiry');
    const c1 = await claimExact(s.url, repo, job);
    // The maintenance timer expires it without any request.
    await waitFor(() => stored(repo, job).state !== 2, 4000, 'the first lease to expire');
    expect(stored(repo, job)).to.include({ state: 1, attempt_count: 1, retry_status: 1, error_kind: 3, lease_token_hash: '' });
    const requeued = await getJob(s.url, repo, job);
    expect(requeued).to.include({
      state: 'queued', retry_status: 'retry_scheduled', error_kind: 'lease_expired', attempt_count: 1, max_attempts: 2,
      available: true, lease_expires_at_s: null, outcome: null, completed_at_s: null,
    });
    expect(requeued.error).to.match(/lease expired/);
    const lease1 = { attempt_count: 1, lease_token: c1.lease_token };
    await rejectedUnchanged(s.url, repo, job, 'heartbeat, expired lease', 409, () => api(s.url, 'POST', `${JOB(repo, job)}:heartbeat`, { json: lease1 }));
    await rejectedUnchanged(s.url, repo, job, 'complete, expired lease', 409, () => api(s.url, 'POST', `${JOB(repo, job)}:complete`, { json: { ...lease1, detail: {} } }));
    await rejectedUnchanged(s.url, repo, job, 'fail, expired lease', 409, () => api(s.url, 'POST', `${JOB(repo, job)}:fail`, { json: { ...lease1, detail: { retryable: true, error: 'late' } } }));

    const c2 = (await claimNext(s.url, [repo]))!;
    expect(c2).to.include({ worker_job_index: job, attempt_count: 2 });
    expect(c2.lease_token).to.not.equal(c1.lease_token);
    // No timer this time: a read applies the expiry too.
    // A lease is live through its expiry second (whole-second times), so wait past it.
    await sleep(Math.max(0, (c2.lease_expires_at_s + 1 - Date.now() / 1000) * 1000) + 50);
    const failed = await getJob(s.url, repo, job);
    expect(failed).to.include({
      state: 'failed', state_kind: 4, retry_status: 'exhausted', error_kind: 'lease_expired', outcome: 'failed',
      attempt_count: 2, available: false, lease_expires_at_s: null,
    });
    expect(failed.completed_at_s).to.be.a('number');
    await rejectedUnchanged(s.url, repo, job, 'heartbeat after exhaustion', 409, () => api(s.url, 'POST', `${JOB(repo, job)}:heartbeat`, { json: { attempt_count: 2, lease_token: c2.lease_token } }));
    await rejectedUnchanged(s.url, repo, job, 'exact claim after exhaustion', 409, () => api(s.url, 'POST', `${JOB(repo, job)}:claim`, { json: { accepted_runtime_contracts: [V3] } }));
    expect(await claimNext(s.url, [repo])).to.equal(null);
  });

  it('retryable failures requeue until max_attempts, then the job fails as exhausted', async () => {
    const { repo, job } = await repoWithJob(s.url, 'retries');
    const c1 = await claimExact(s.url, repo, job);
    const f1 = await api(s.url, 'POST', `${JOB(repo, job)}:fail`, { json: { attempt_count: 1, lease_token: c1.lease_token, detail: { retryable: true, error: 'one' } } });
    expect(f1.json).to.include({ requeued: true });
    const c2 = await claimExact(s.url, repo, job);
    expect(c2.attempt_count).to.equal(2);
    const f2 = await api(s.url, 'POST', `${JOB(repo, job)}:fail`, { json: { attempt_count: 2, lease_token: c2.lease_token, detail: { retryable: true, error: 'two' } } });
    expect(f2.status, f2.text).to.equal(200);
    expect(f2.json).to.include({ failed: true, requeued: false });
    expect(f2.json.job).to.include({ state: 'failed', retry_status: 'exhausted', error_kind: 'runner_failure', error: 'two', outcome: 'failed', attempt_count: 2 });
  });
});

// ---------------------------------------------------------------------------------------------

describe('worker jobs: claim races', () => {
  let s: JobServer;
  let repo: number;
  let rootTree: string;
  before(async () => {
    s = await startJobServer();
    repo = await register(s.url, 'race');
    rootTree = (await pushTree(s.url, repo, { 'ci/run.sh': 'exit 0\n' })).root_tree_id;
  });
  after(() => s.stop());

  /** `n` distinct snapshots of one tree in one bulk commit (no packs), each with a queued repo.ci job. */
  async function queueJobs(n: number, tag: string): Promise<number[]> {
    const created = nowS();
    const rows = Array.from({ length: n }, (_, i) => {
      const row = { root_tree_id: rootTree, parent_snapshot_ids: [] as string[], created_at_s: created, message: `${tag} ${i}` };
      return { snapshot_id: snapshotId(row), ...row };
    });
    const commit = await api(s.url, 'POST', `${R(repo)}/remote-sync/zstd-bulk/commit`, { json: { contract: COMMIT, snapshots: rows, line_update: null } });
    expect(commit.status, commit.text).to.equal(200);
    const runs = await Promise.all(rows.map((r) => runCi(s.url, repo, r.snapshot_id)));
    for (const r of runs) expect(r.queued).to.equal(true);
    return runs.map((r) => r.job.worker_job_index);
  }

  it('1,000 concurrent claim requests over 200 queued jobs claim each job exactly once', async () => {
    const indexes = await queueJobs(200, 'race');
    expect(new Set(indexes).size).to.equal(200);
    const results = await Promise.all(Array.from({ length: 1000 }, () => api(s.url, 'POST', CLAIM, { json: claimBody([11], [repo]) })));
    for (const r of results) expect(r.status, r.text).to.equal(200);
    const claimed = results.map((r) => r.json.claimed_job).filter((c) => c !== null);
    expect(claimed.length).to.equal(200);
    expect(claimed.map((c) => c.worker_job_index).sort((a, b) => a - b)).to.deep.equal([...indexes].sort((a, b) => a - b));
    expect(new Set(claimed.map((c) => c.lease_token)).size).to.equal(200);
    for (const c of claimed) expect(c.attempt_count).to.equal(1);

    const running = (await api(s.url, 'GET', `${R(repo)}/worker-jobs?state_kind=2&limit=1000`)).json;
    expect(running.count).to.equal(200);
    for (const j of running.jobs) expect(j).to.include({ attempt_count: 1, state: 'running' });
    expect((await api(s.url, 'GET', `${R(repo)}/worker-jobs?state_kind=1`)).json.count).to.equal(0);

    // The list: default limit 50, newest first; limit=1000 returns all of them.
    const page = (await api(s.url, 'GET', `${R(repo)}/worker-jobs`)).json;
    expect(page).to.include({ limit: 50, count: 50 });
    expect(page.jobs.map((j: any) => j.worker_job_index)).to.deep.equal(Array.from({ length: 50 }, (_, i) => 199 - i));
    expect((await api(s.url, 'GET', `${R(repo)}/worker-jobs?limit=1000`)).json.count).to.equal(200);

    // Every lease is live and completes once.
    const done = await Promise.all(claimed.map((c) => api(s.url, 'POST', `${JOB(repo, c.worker_job_index)}:complete`, { json: { attempt_count: 1, lease_token: c.lease_token, detail: {} } })));
    for (const d of done) expect(d.status, d.text).to.equal(200);
    expect((await api(s.url, 'GET', `${R(repo)}/worker-jobs?state_kind=3&limit=1000`)).json.count).to.equal(200);
  });

  it('50 concurrent exact claims of one job: one 200, the rest 409', async () => {
    const [index] = await queueJobs(1, 'exact');
    const results = await Promise.all(Array.from({ length: 50 }, () => api(s.url, 'POST', `${JOB(repo, index)}:claim`, { json: { accepted_runtime_contracts: [V3] } })));
    const won = results.filter((r) => r.status === 200);
    expect(won.length).to.equal(1);
    for (const r of results.filter((x) => x.status !== 200)) expectError(r, 409, 'lost exact claim');
    expect(await getJob(s.url, repo, index)).to.include({ state: 'running', attempt_count: 1 });
  });

  it('claim-next across repositories hands out each job once, only from the listed repositories', async () => {
    const a = await repoWithJob(s.url, 'multi-a');
    const b = await repoWithJob(s.url, 'multi-b');
    expect(await claimNext(s.url, [b.repo, a.repo], [7])).to.equal(null);
    const first = (await claimNext(s.url, [b.repo]))!;
    expect([first.repository_index, first.worker_job_index]).to.deep.equal([b.repo, b.job]);
    const second = (await claimNext(s.url, []))!; // empty = every serving repository
    expect([second.repository_index, second.worker_job_index]).to.deep.equal([a.repo, a.job]);
    expect(await claimNext(s.url, [])).to.equal(null);
  });
});

// ---------------------------------------------------------------------------------------------

describe('worker jobs: restart in the middle of a running lease', () => {
  it('after kill -9, the job is still running and the same lease heartbeats and completes; tokens never reach the server log', async () => {
    const data = path.join(tempDir(), 'data');
    const first = await spawnServer(data);
    let second: Awaited<ReturnType<typeof spawnServer>> | null = null;
    try {
      const { repo, job } = await repoWithJob(first.url, 'restart');
      const c = await claimExact(first.url, repo, job);
      const lease = { attempt_count: 1, lease_token: c.lease_token };
      // Requests carrying the token that are rejected are logged too: the token must not be.
      expectError(await api(first.url, 'POST', `${JOB(repo, job)}:heartbeat`, { json: { ...lease, attempt_count: 2 } }), 409, 'stale attempt');
      expectError(await api(first.url, 'POST', `${JOB(repo, job)}:heartbeat`, { json: { ...lease, detail: {} } }), 422, 'detail');
      expect((await api(first.url, 'POST', `${JOB(repo, job)}:heartbeat`, { json: lease })).status).to.equal(200);
      const before = await getJob(first.url, repo, job);
      first.proc.kill('SIGKILL');
      await first.exited;

      second = await spawnServer(data);
      expect(await getJob(second.url, repo, job)).to.deep.equal(before);
      expect(await claimNext(second.url, [repo])).to.equal(null);
      const hb = await api(second.url, 'POST', `${JOB(repo, job)}:heartbeat`, { json: lease });
      expect(hb.status, hb.text).to.equal(200);
      expect(hb.json.attempt_count).to.equal(1);
      const done = await api(second.url, 'POST', `${JOB(repo, job)}:complete`, { json: { ...lease, detail: {} } });
      expect(done.status, done.text).to.equal(200);
      expect(done.json.job).to.include({ state: 'succeeded', attempt_count: 1 });
      second.proc.kill('SIGTERM');
      expect(await second.exited).to.equal(0);

      const logs = first.output() + second.output();
      expect(logs).to.match(/workerJobs\.heartbeat/); // the requests were logged...
      expect(logs).to.not.include(c.lease_token); // ...without the token
      expect(logs).to.not.include('lease_token');
    } finally {
      if (first.proc.exitCode === null && first.proc.signalCode === null) first.proc.kill('SIGKILL');
      if (second && second.proc.exitCode === null && second.proc.signalCode === null) second.proc.kill('SIGKILL');
    }
  });

  it('jobs.log is compacted at startup and an uncommitted tail is cut, with the running lease intact across both', async () => {
    const data = path.join(tempDir(), 'data');
    const first = await startJobServer(undefined, data);
    const { repo, job } = await repoWithJob(first.url, 'compact');
    const c = await claimExact(first.url, repo, job);
    const lease = { attempt_count: 1, lease_token: c.lease_token };
    for (let i = 0; i < 70; i++) {
      const hb = await api(first.url, 'POST', `${JOB(repo, job)}:heartbeat`, { json: lease });
      expect(hb.status, hb.text).to.equal(200);
    }
    const before = await getJob(first.url, repo, job);
    await first.stop();
    const log = path.join(data, 'repositories', String(repo), 'jobs.log');
    const grown = (await fsp.stat(log)).size;
    // An append whose write never finished (so was never acknowledged): length prefix and a few bytes.
    await fsp.appendFile(log, Buffer.from([0xc8, 0, 0, 0, 1, 2, 3]));

    const second = await startJobServer(undefined, data);
    try {
      expect(await getJob(second.url, repo, job)).to.deep.equal(before);
      // 72 records became 1, in a new file the commit point names (jobs.<generation>.log).
      const names = (await fsp.readdir(path.dirname(log))).filter((n) => /^jobs(\.\d+)?\.log$/.test(n));
      expect(names).to.have.length(1).and.not.include('jobs.log');
      expect((await fsp.stat(path.join(path.dirname(log), names[0]))).size).to.be.below(grown / 10);
      const hb = await api(second.url, 'POST', `${JOB(repo, job)}:heartbeat`, { json: lease });
      expect(hb.status, hb.text).to.equal(200);
    } finally {
      await second.stop();
    }
    const third = await startJobServer(undefined, data);
    try {
      expect(await getJob(third.url, repo, job)).to.include({ state: 'running', attempt_count: 1 });
      const done = await api(third.url, 'POST', `${JOB(repo, job)}:complete`, { json: { ...lease, detail: {} } });
      expect(done.status, done.text).to.equal(200);
    } finally {
      await third.stop();
    }
  });

  it('a lease that ran out while the server was down is expired at startup: requeued, attempt counted, old lease rejected', async () => {
    const policy: JobPolicy = { leaseSeconds: 2, maxAttempts: 3, timeoutSeconds: 60 };
    const data = path.join(tempDir(), 'data');
    const first = await startJobServer(policy, data);
    const { repo, job } = await repoWithJob(first.url, 'down');
    const c = await claimExact(first.url, repo, job);
    await first.stop();
    await sleep(Math.max(0, (c.lease_expires_at_s + 1 - Date.now() / 1000) * 1000) + 100);

    const second = await startJobServer(policy, data);
    try {
      const record = (await second.service.opened(repo)).jobs.all()[job];
      expect(record).to.include({ state: 1, attempt_count: 1, error_kind: 3, retry_status: 1 });
      expect(await getJob(second.url, repo, job)).to.include({ state: 'queued', error_kind: 'lease_expired', attempt_count: 1, available: true });
      await rejectedUnchanged(second.url, repo, job, 'old lease after restart', 409,
        () => api(second.url, 'POST', `${JOB(repo, job)}:heartbeat`, { json: { attempt_count: 1, lease_token: c.lease_token } }));
      const again = (await claimNext(second.url, [repo]))!;
      expect(again).to.include({ worker_job_index: job, attempt_count: 2 });
    } finally {
      await second.stop();
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('worker jobs: a 1 s lease', () => {
  let s: JobServer;
  before(async () => { s = await startJobServer({ leaseSeconds: 1, maxAttempts: 3, timeoutSeconds: 5 }); });
  after(() => s.stop());

  // Regression: whole-second lease times once let a lease end up to 1 s early.
  it('heartbeats every 250 ms keep a 1 s lease alive', async () => {
    const { repo, job } = await repoWithJob(s.url, 'one-second');
    const c = await claimExact(s.url, repo, job);
    const lease = { attempt_count: 1, lease_token: c.lease_token };
    for (let i = 0; i < 10; i++) {
      await sleep(250);
      const hb = await api(s.url, 'POST', `${JOB(repo, job)}:heartbeat`, { json: lease });
      expect(hb.status, `heartbeat ${i}: ${hb.text}`).to.equal(200);
    }
    const done = await api(s.url, 'POST', `${JOB(repo, job)}:complete`, { json: { ...lease, detail: {} } });
    expect(done.status, done.text).to.equal(200);
  });
});

describe('worker jobs: unknown fields inside detail', () => {
  let s: JobServer;
  before(async () => { s = await startJobServer(); });
  after(() => s.stop());

  // Unknown fields are ignored everywhere except registration and restore start (docs/api.md).
  it('fail and kind-7 complete ignore unknown fields inside detail and the result', async () => {
    const repo = await register(s.url, 'extra-fields');
    const snapshot = (await pushTree(s.url, repo, { a: 'b' })).snapshot_id;
    const k11 = (await runCi(s.url, repo, snapshot)).job.worker_job_index;
    const c11 = await claimExact(s.url, repo, k11);
    const failed = await api(s.url, 'POST', `${JOB(repo, k11)}:fail`, { json: { attempt_count: 1, lease_token: c11.lease_token, detail: { retryable: false, error: 'x', exit_code: 3 } } });
    expect(failed.status, failed.text).to.equal(200);
    const k7 = (await s.service.authority(repo).jobs.enqueue(7, { patchset_id: 'P1', snapshot_id: snapshot })).worker_job_index;
    const c7 = await claimExact(s.url, repo, k7);
    const result = { contract: RESULT, status: 'succeeded', tests_status: 'pass', suite_result_count: 1, duration_ms: 12, suite_results: [{ suite_id: 'u', status: 'pass', blocking: true, duration_ms: 3 }] };
    const done = await api(s.url, 'POST', `${JOB(repo, k7)}:complete`, { json: { attempt_count: 1, lease_token: c7.lease_token, detail: { job_kind: 7, result } } });
    expect(done.status, done.text).to.equal(200);
  });
});

// ---------------------------------------------------------------------------------------------

describe('worker jobs: id floors (serve --lease: after a failover new jobs continue past what the old writer may have handed out)', () => {
  it('new jobs take indexes past the `job` floor; pages across the gap list every job once, newest first; an index in the gap is 404; a restart keeps it', async () => {
    let s = await startJobServer();
    try {
      const { repo, job: first } = await repoWithJob(s.url, 'floors');
      expect(first).to.equal(0);
      // The floor of `job` is a sequence: index i is sequence i + 1, so floor 50 leaves 0..49 to the old writer.
      await s.service.setIdFloors(new Map([[repo, { job: 50 }]]));
      expect((await runCi(s.url, repo)).job.worker_job_index).to.equal(50);
      expect((await runCi(s.url, repo)).job.worker_job_index).to.equal(51);
      expect(s.service.idHighs(repo)).to.include({ job: 52 });
      const walk = async (q = ''): Promise<number[]> => {
        const out: number[] = [];
        let cursor: string | null = null;
        do {
          const res: ApiResponse = await api(s.url, 'GET', `${R(repo)}/worker-jobs?limit=1${q}${cursor ? `&cursor=${cursor}` : ''}`);
          expect(res.status, res.text).to.equal(200);
          out.push(...res.json.jobs.map((j: { worker_job_index: number }) => j.worker_job_index));
          cursor = res.json.next_cursor;
        } while (cursor !== null && out.length < 10);
        return out;
      };
      expect(await walk()).to.deep.equal([51, 50, 0]);
      expect(await walk('&state_kind=1')).to.deep.equal([51, 50, 0]);
      const whole = await listAll(s.url, repo) as { jobs: { worker_job_index: number }[] };
      expect(whole.jobs.map((j) => j.worker_job_index)).to.deep.equal([51, 50, 0]);
      for (const gap of [1, 7, 49]) {
        expectError(await api(s.url, 'GET', JOB(repo, gap)), 404, `job ${gap} in the gap`);
        expectError(await api(s.url, 'POST', `${JOB(repo, gap)}:claim`, { json: { accepted_runtime_contracts: [V3] } }), 404, `claim of job ${gap} in the gap`);
      }
      // A restart replays jobs.log with its gap; the floor is read back from DATA/id-floors.json.
      const floors = JSON.parse(await fsp.readFile(path.join(s.dataDir, 'id-floors.json'), 'utf8'));
      expect(floors.floors[String(repo)]).to.deep.equal({ job: 50 });
      await s.stop();
      s = await startJobServer(undefined, s.dataDir);
      expect(await walk()).to.deep.equal([51, 50, 0]);
      expect((await runCi(s.url, repo)).job.worker_job_index).to.equal(52);
      // A floor above every job held (a later takeover's) is honoured after a restart too.
      await s.service.setIdFloors(new Map([[repo, { job: 80 }]]));
      await s.stop();
      s = await startJobServer(undefined, s.dataDir);
      expect((await runCi(s.url, repo)).job.worker_job_index).to.equal(80);
      expect(await walk()).to.deep.equal([80, 52, 51, 50, 0]);
      // The claims take the oldest first across the gaps.
      expect((await claimNext(s.url, [repo]))!.worker_job_index).to.equal(0);
      expect((await claimNext(s.url, [repo]))!.worker_job_index).to.equal(50);
    } finally {
      await s.stop();
    }
  });
});
