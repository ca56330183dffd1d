// The land gate judges the evidence as it stands at the moment of the land (docs/api.md
// "Lands"), blocking reviews stick to the change, a new CI run supersedes the older run's jobs,
// ff-only follows ancestry, and explicit nulls read as absent. Every test here runs through real
// HTTP against the real gates (no injected gate function) unless it says otherwise.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { LandDesk } from '../lib/authority/workflow/lands.js';
import { ancestryOf } from '../lib/domain/workflow/ancestry.js';
import { liveVotes } from '../lib/domain/workflow/review-rules.js';
import { api, register, startTestServer, tempDir, ok, repoFiles } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const RUNTIME = 'svc.runner.native-job.v3';
const passResult = (tests = 'pass') => ({
    contract: 'svc.runner.native-result.v1', status: 'succeeded', tests_status: tests, suite_result_count: 1, suite_results: [{ suite_id: 'unit', status: tests, blocking: true }],
});
class Fixture {
    s;
    repo;
    dir = path.join(tempDir(), 'tree');
    constructor(s, repo) {
        this.s = s;
        this.repo = repo;
    }
    post(rest, json) {
        return api(this.s.url, 'POST', R(this.repo, rest), { json });
    }
    get(rest) {
        return api(this.s.url, 'GET', R(this.repo, rest));
    }
    async snap(files, line, moveLine, parent) {
        await fsp.rm(this.dir, { recursive: true, force: true });
        await fsp.mkdir(this.dir, { recursive: true });
        for (const [p, v] of Object.entries(files))
            await fsp.writeFile(path.join(this.dir, p), v);
        return (await push({ server: this.s.url, repo: this.repo, line, dir: this.dir, moveLine, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
    }
    async authority() {
        return (await this.s.ready).opened(this.repo);
    }
    /** A task, a change on `line` and its first patchset (human_with_ai_assist, author carol). */
    async change(line, base, revision, authorMode = 'human_with_ai_assist') {
        const t = (await ok(this.post('/tasks', { title: 'T', intent: 'I' }), 'task')).task;
        const c = (await ok(this.post('/changes', { task_id: t.task_id, title: 'C', base_line: line }), 'change')).change;
        const p = (await ok(this.post(`/changes/${c.change_id}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: revision, summary: 's', author_mode: authorMode, author: 'carol' }), 'patchset')).patchset;
        return { task: t.task_id, change: c.change_id, ps: p.patchset_id };
    }
    async runCi(ps, trigger) {
        return ok(this.post(`/patchsets/${ps}:runCi`, trigger ? { trigger } : {}), 'runCi');
    }
    async claim(index) {
        return ok(this.post(`/worker-jobs/${index}:claim`, { accepted_runtime_contracts: [RUNTIME] }), 'claim');
    }
    async complete(claim, tests = 'pass') {
        return ok(this.post(`/worker-jobs/${claim.worker_job_index}:complete`, { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { job_kind: 7, result: passResult(tests) } }), 'complete');
    }
    /** Passing CI, a passing attestation, alice's approval and a `pass` decision. */
    async passEverything(change, ps) {
        const run = await this.runCi(ps);
        await this.complete(await this.claim(run.job.worker_job_index));
        await ok(api(this.s.url, 'PUT', R(this.repo, `/patchsets/${ps}/attestation`), { json: { verification_state: 'pass' } }), 'attest');
        await ok(this.post(`/changes/${change}/reviews`, { patchset_id: ps, reviewer: 'alice', action: 'approve' }), 'approve');
        const decision = (await ok(this.post(`/patchsets/${ps}:evaluatePolicy`, {}), 'evaluate')).policy;
        expect(decision.decision, JSON.stringify(decision)).to.equal('pass');
        return decision;
    }
    submit(change, body) {
        return this.post(`/changes/${change}:submit`, body);
    }
    async head(line) {
        const j = (await ok(this.get(`/lines/${line}`)));
        return j.line?.head_snapshot_id ?? j.head_snapshot_id;
    }
}
function refused(res, kind) {
    expect(res.status, res.text).to.equal(409);
    expect(res.json.failure_kind, res.text).to.equal(kind);
    return res.json.land;
}
/** Hold the authority's commit queue until `release()`: transactions queued meanwhile share the next batch. */
async function holdCommits(a) {
    let release;
    const gate = new Promise((r) => { release = r; });
    let entered;
    const inside = new Promise((r) => { entered = r; });
    const done = a.store.barrier(async () => { entered(); await gate; });
    await inside;
    return { release, queued: () => a.store.commits.queue.length, done };
}
async function until(cond, what) {
    for (let i = 0; i < 500; i++) {
        if (cond())
            return;
        await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`timed out waiting for ${what}`);
}
/**
 * Send `first` and then `second` while the commit queue is held, so both run in one batch, in
 * that order; resolves with both answers once the batch has committed.
 */
async function inOneBatch(a, first, second) {
    const hold = await holdCommits(a);
    const one = first();
    await until(() => hold.queued() === 1, 'the first request to queue');
    const two = second();
    await until(() => hold.queued() === 2, 'the second request to queue');
    hold.release();
    await hold.done;
    return [await one, await two];
}
describe('governance: the land judges the evidence at the moment of the land', function () {
    this.timeout(60_000);
    let s;
    let f;
    let base;
    let rev;
    before(async () => {
        s = await startTestServer();
        f = new Fixture(s, await register(s.url, 'gov'));
        base = await f.snap({ 'a.txt': 'a\n' }, 'main', true);
        rev = await f.snap({ 'a.txt': 'a\nb\n' }, 'main', false, base);
    });
    after(() => s.stop());
    it('a pass decision made before the attestation was revoked and the approval dismissed does not land; the land records the decision it judged by', async () => {
        const c = await f.change('main', base, rev);
        const stored = await f.passEverything(c.change, c.ps);
        await ok(api(s.url, 'PUT', R(f.repo, `/patchsets/${c.ps}/attestation`), { json: { verification_state: 'fail', revoked: true } }), 'revoke');
        await ok(f.post(`/changes/${c.change}/reviews`, { patchset_id: c.ps, reviewer: 'alice', action: 'dismiss' }), 'dismiss');
        // the stored decision still says pass
        expect((await ok(f.get(`/patchsets/${c.ps}/policy`))).policy.decision_id).to.equal(stored.decision_id);
        const land = refused(await f.submit(c.change, { mode: 'merge' }), 'blocked_by_policy');
        expect(land.failure_message).to.match(/attestation/).and.match(/independent_approval/);
        expect(land.policy_decision_id).to.be.a('string').and.not.equal(stored.decision_id);
        expect(land.result).to.deep.include({ outcome: 'rejected', failure_kind: 'blocked_by_policy' });
        const policy = (await ok(f.get(`/patchsets/${c.ps}/policy`))).policy;
        expect(policy).to.include({ decision_id: land.policy_decision_id, decision: 'fail', trigger: 'land' });
        expect(await f.head('main')).to.equal(base);
        expect((await ok(f.get(`/changes/${c.change}`))).change.status).to.equal('active');
    });
    it('a passing land names the pass decision recorded in its own commit, and its result says what it did', async () => {
        const c = await f.change('main', base, rev);
        const stored = await f.passEverything(c.change, c.ps);
        const res = await ok(f.submit(c.change, { mode: 'ff-only' }));
        expect(res.land.policy_decision_id).to.be.a('string').and.not.equal(stored.decision_id);
        expect(res.land.result).to.deep.equal({ outcome: 'landed', line_action: 'fast_forward', target_head_before: base, landed_snapshot_id: rev, stale_patchset_count: res.land.stale_patchset_ids.length });
        const policy = (await ok(f.get(`/patchsets/${c.ps}/policy`))).policy;
        expect(policy).to.include({ decision_id: res.land.policy_decision_id, decision: 'pass', trigger: 'land' });
        expect(await f.head('main')).to.equal(rev);
        // the land's decision joins the chain: fsck-style verification over every decision
        const a = await f.authority();
        const { verifyDecisionChain } = await import('../lib/domain/workflow/review-rules.js');
        const chain = [...a.store.entitiesOf('policy_decision')].map(([, d]) => d).sort((x, y) => x.chain_seq - y.chain_seq);
        expect(verifyDecisionChain(chain)).to.equal(null);
    });
});
describe('governance: evidence staged in the same commit batch as the land', function () {
    this.timeout(60_000);
    let s;
    let f;
    let base;
    before(async () => {
        s = await startTestServer();
        f = new Fixture(s, await register(s.url, 'gov-batch'));
        base = await f.snap({ 'a.txt': 'a\n' }, 'dev', true);
    });
    after(() => s.stop());
    it('a revocation queued just before the land in one batch: the land sees it and is refused by policy', async () => {
        const rev = await f.snap({ 'a.txt': 'a\nrevoked\n' }, 'dev', false, base);
        const c = await f.change('dev', base, rev);
        await f.passEverything(c.change, c.ps);
        const a = await f.authority();
        const [revoke, land] = await inOneBatch(a, () => api(s.url, 'PUT', R(f.repo, `/patchsets/${c.ps}/attestation`), { json: { verification_state: 'pass', revoked: true } }), () => f.submit(c.change, { mode: 'ff-only' }));
        expect(revoke.status).to.equal(200);
        const l = refused(land, 'blocked_by_policy');
        expect(l.failure_message).to.match(/attestation/);
        expect(await f.head('dev')).to.equal(base);
    });
    it('a blocking review queued just before the land in one batch: refused; the land queued first wins and the review is refused', async () => {
        const rev = await f.snap({ 'a.txt': 'a\nblocked\n' }, 'dev', false, base);
        const c = await f.change('dev', base, rev);
        await f.passEverything(c.change, c.ps);
        const a = await f.authority();
        const [block, land] = await inOneBatch(a, () => f.post(`/changes/${c.change}/reviews`, { patchset_id: c.ps, reviewer: 'bob', action: 'request_changes', blocking: true }), () => f.submit(c.change, { mode: 'ff-only' }));
        expect(block.status).to.equal(200);
        refused(land, 'blocked_by_policy');
        expect(await f.head('dev')).to.equal(base);
        // the other order: bob dismisses, then the land queues before a new veto
        await ok(f.post(`/changes/${c.change}/reviews`, { patchset_id: c.ps, reviewer: 'bob', action: 'dismiss' }));
        const [land2, block2] = await inOneBatch(a, () => f.submit(c.change, { mode: 'ff-only' }), () => f.post(`/changes/${c.change}/reviews`, { patchset_id: c.ps, reviewer: 'bob', action: 'request_changes', blocking: true }));
        expect(land2.status, land2.text).to.equal(200);
        expect(block2.status).to.be.oneOf([400, 409]); // a review of a landed change
        expect(await f.head('dev')).to.equal(rev);
    });
    it('a CI rerun queued just before the land in one batch: the new run has no evidence yet, so the land is blocked', async () => {
        const base2 = await f.head('dev');
        const rev = await f.snap({ 'a.txt': 'a\nblocked\nrerun\n' }, 'dev', false, base2);
        const c = await f.change('dev', base2, rev);
        await f.passEverything(c.change, c.ps);
        const a = await f.authority();
        const [rerun, land] = await inOneBatch(a, () => f.post(`/patchsets/${c.ps}:runCi`, { trigger: 'manual_rerun' }), () => f.submit(c.change, { mode: 'ff-only' }));
        expect(rerun.status).to.equal(200);
        const l = refused(land, 'blocked_by_policy'); // tests required by the attestation: no evidence of run 2
        expect(l.failure_message).to.match(/tests/);
    });
});
describe('governance: blocking reviews stick to the change', function () {
    this.timeout(60_000);
    let s;
    let f;
    let base;
    before(async () => {
        s = await startTestServer();
        f = new Fixture(s, await register(s.url, 'gov-veto'));
        base = await f.snap({ 'a.txt': 'a\n' }, 'main', true);
    });
    after(() => s.stop());
    it('a veto on ps-1 still counts on a new patchset with other content, until the reviewer dismisses it', async () => {
        const rev1 = await f.snap({ 'a.txt': 'a\n1\n' }, 'main', false, base);
        const rev2 = await f.snap({ 'a.txt': 'a\n2\n' }, 'main', false, base);
        const c = await f.change('main', base, rev1);
        await ok(f.post(`/changes/${c.change}/reviews`, { patchset_id: c.ps, reviewer: 'bob', action: 'request_changes', blocking: true }));
        const ps2 = (await ok(f.post(`/changes/${c.change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev2, summary: 's2', author_mode: 'human_with_ai_assist', author: 'carol' }))).patchset;
        await ok(f.post(`/changes/${c.change}:selectPatchset`, { patchset_id: ps2.patchset_id }));
        let reviews = await ok(f.get(`/changes/${c.change}/reviews`));
        expect(reviews.blocking).to.equal(1);
        expect(reviews.reviews.find((r) => r.reviewer === 'bob')).to.include({ live: true, stale: false });
        expect((await ok(f.get(`/patchsets/${ps2.patchset_id}`))).patchset.review).to.include({ state: 'blocked', blocking: 1 });
        // everything else passes, yet the veto holds
        const run = await f.runCi(ps2.patchset_id);
        await f.complete(await f.claim(run.job.worker_job_index));
        await ok(api(s.url, 'PUT', R(f.repo, `/patchsets/${ps2.patchset_id}/attestation`), { json: { verification_state: 'pass' } }));
        await ok(f.post(`/changes/${c.change}/reviews`, { patchset_id: ps2.patchset_id, reviewer: 'alice', action: 'approve' }));
        const d = (await ok(f.post(`/patchsets/${ps2.patchset_id}:evaluatePolicy`, {}))).policy;
        expect(d.decision).to.equal('fail');
        expect(d.checks.find((x) => x.name === 'no_blocking_review').status).to.equal('fail');
        refused(await f.submit(c.change, { mode: 'ff-only' }), 'blocked_by_policy');
        // bob dismisses: the veto is gone and the change lands
        await ok(f.post(`/changes/${c.change}/reviews`, { patchset_id: ps2.patchset_id, reviewer: 'bob', action: 'dismiss' }));
        reviews = await ok(f.get(`/changes/${c.change}/reviews`));
        expect(reviews.blocking).to.equal(0);
        expect((await ok(f.submit(c.change, { mode: 'ff-only' }))).land.status).to.equal('landed');
    });
    it('liveVotes: a block counts on any patchset of the change; an approval only on the same content; a later vote replaces a block', () => {
        const rec = (n, reviewer, action, ps, fp, blocking = false) => ({
            review_id: `change-1.review-${n}`, change_id: 'change-1', sequence: n, patchset_id: ps, patchset_fingerprint: fp, reviewer, action, comment: '', blocking, reviewer_group: null, requested_by: null, created_at_s: n,
        });
        const reviews = [rec(1, 'bob', 'request_changes', 'change-1.ps-1', 'f1'), rec(2, 'alice', 'approve', 'change-1.ps-1', 'f1'), rec(3, 'dan', 'comment', 'change-1.ps-1', 'f1', true)];
        const on2 = liveVotes(reviews, { patchset_id: 'change-1.ps-2', fingerprint: 'f2' });
        expect(on2.map((v) => `${v.reviewer}:${v.vote}`).sort()).to.deep.equal(['bob:block', 'dan:block']);
        const onSame = liveVotes(reviews, { patchset_id: 'change-1.ps-3', fingerprint: 'f1' });
        expect(onSame.map((v) => `${v.reviewer}:${v.vote}`).sort()).to.deep.equal(['alice:approve', 'bob:block', 'dan:block']);
        const after = liveVotes([...reviews, rec(4, 'bob', 'approve', 'change-1.ps-2', 'f2'), rec(5, 'dan', 'dismiss', 'change-1.ps-2', 'f2')], { patchset_id: 'change-1.ps-2', fingerprint: 'f2' });
        expect(after.map((v) => `${v.reviewer}:${v.vote}`)).to.deep.equal(['bob:approve']);
    });
});
describe('governance: a new CI run supersedes the older run\'s jobs', function () {
    this.timeout(60_000);
    let s;
    let f;
    let base;
    before(async () => {
        s = await startTestServer();
        f = new Fixture(s, await register(s.url, 'gov-ci'));
        base = await f.snap({ 'a.txt': 'a\n' }, 'main', true);
    });
    after(() => s.stop());
    it('manual_rerun ends the queued job of the older run: no runner can claim it', async () => {
        const c = await f.change('main', base, await f.snap({ 'a.txt': 'q\n' }, 'main', false, base));
        const first = (await f.runCi(c.ps)).job;
        const second = (await f.runCi(c.ps, 'manual_rerun')).job;
        expect(second.run_sequence).to.equal(2);
        const old = (await ok(f.get(`/worker-jobs/${first.worker_job_index}`))).job ?? (await ok(f.get(`/worker-jobs/${first.worker_job_index}`)));
        expect(old).to.include({ state: 'failed', error_kind: 'superseded', outcome: 'superseded', available: false });
        expect((await f.post(`/worker-jobs/${first.worker_job_index}:claim`, { accepted_runtime_contracts: [RUNTIME] })).status).to.equal(409);
        const next = await ok(api(s.url, 'POST', '/v1/native/worker-jobs:claim', { json: { accepted_job_kinds: [7], repository_indexes: [f.repo], accepted_runtime_contracts: [RUNTIME] } }));
        expect(next.worker_job_index ?? next.claimed_job?.worker_job_index).to.equal(second.worker_job_index);
    });
    it('a running job of the older run may finish, recorded as superseded; it never becomes the evidence; a retryable failure is not requeued', async () => {
        const c = await f.change('main', base, await f.snap({ 'a.txt': 'r\n' }, 'main', false, base));
        const first = (await f.runCi(c.ps)).job;
        const claim1 = await f.claim(first.worker_job_index);
        const second = (await f.runCi(c.ps, 'manual_rerun')).job;
        expect((await ok(f.get(`/worker-jobs/${first.worker_job_index}`))).job?.state ?? (await ok(f.get(`/worker-jobs/${first.worker_job_index}`))).state).to.equal('running');
        const done = await f.complete(claim1);
        const rec = done.job ?? done;
        expect(rec).to.include({ state: 'succeeded', outcome: 'superseded' });
        const ps = (await ok(f.get(`/patchsets/${c.ps}`))).patchset;
        expect(ps.ci).to.include({ ci_run_sequence: 2, overall: 'pending', active_worker_job_index: second.worker_job_index });
        // a third run while the second is running; the second's runner fails retryably: not requeued
        const claim2 = await f.claim(second.worker_job_index);
        await f.runCi(c.ps, 'manual_rerun');
        const failed = await ok(f.post(`/worker-jobs/${second.worker_job_index}:fail`, { attempt_count: claim2.attempt_count, lease_token: claim2.lease_token, detail: { retryable: true, error: 'flaky' } }));
        expect(failed.job ?? failed).to.include({ state: 'failed', error_kind: 'superseded', outcome: 'superseded' });
    });
    it('a :runCi that reuses the current run sees a failure staged earlier in its batch: it queues a retry instead of pointing at the dead job', async () => {
        const c = await f.change('main', base, await f.snap({ 'a.txt': 'batch-fail\n' }, 'main', false, base));
        const job = (await f.runCi(c.ps)).job;
        const cl = await f.claim(job.worker_job_index);
        const a = await f.authority();
        const [failing, rerun] = await inOneBatch(a, () => f.post(`/worker-jobs/${job.worker_job_index}:fail`, { attempt_count: cl.attempt_count, lease_token: cl.lease_token, detail: { retryable: false, error: 'broken' } }), () => f.post(`/patchsets/${c.ps}:runCi`, { trigger: 'push' }));
        expect(failing.status).to.equal(200);
        expect(rerun.json).to.include({ queued: true, delivery: 'worker_job' });
        expect((await ok(f.get(`/patchsets/${c.ps}`))).patchset.ci.overall).to.equal('pending');
    });
    it('a job of the current run is still requeued on a retryable failure', async () => {
        const c = await f.change('main', base, await f.snap({ 'a.txt': 's\n' }, 'main', false, base));
        const job = (await f.runCi(c.ps)).job;
        const cl = await f.claim(job.worker_job_index);
        const failed = await ok(f.post(`/worker-jobs/${job.worker_job_index}:fail`, { attempt_count: cl.attempt_count, lease_token: cl.lease_token, detail: { retryable: true, error: 'flaky' } }));
        expect(failed.job ?? failed).to.include({ state: 'queued', retry_status: 'retry_scheduled' });
    });
});
describe('governance: ff-only follows ancestry; nulls read as absent; unknown patchsets are 404', function () {
    this.timeout(60_000);
    let s;
    let f;
    before(async () => {
        s = await startTestServer();
        f = new Fixture(s, await register(s.url, 'gov-ff'));
        const a = await f.authority();
        a.lands = new LandDesk(a.store, a.workflow, () => ({ refusal: null, policy_decision_id: null }));
    });
    after(() => s.stop());
    it('ancestryOf: found, not found, and the walk bound', () => {
        const parents = { d: ['c'], c: ['b', 'x'], b: ['a'], x: [], a: [] };
        const p = (id) => parents[id] ?? null;
        expect(ancestryOf(p, 'a', 'd')).to.equal('ancestor');
        expect(ancestryOf(p, 'x', 'd')).to.equal('ancestor');
        expect(ancestryOf(p, 'd', 'a')).to.equal('not_ancestor');
        expect(ancestryOf(p, 'a', 'd', 2)).to.equal('walk_bound_reached');
    });
    it('head H newer than the patchset base but an ancestor of its revision: ff-only (and direct) fast-forward; otherwise stale_base', async () => {
        const B = await f.snap({ 'a.txt': 'b\n' }, 'dev', true);
        const H = await f.snap({ 'a.txt': 'b\nh\n' }, 'dev', true, B);
        const Rv = await f.snap({ 'a.txt': 'b\nh\nr\n' }, 'dev', false, H);
        const c = await f.change('dev', B, Rv, 'human_only');
        const res = await ok(f.submit(c.change, { mode: 'ff-only' }));
        expect(res.land).to.include({ line_action: 'fast_forward', landed_snapshot_id: Rv, target_head_before: H });
        expect(await f.head('dev')).to.equal(Rv);
        // a revision that does not descend from the head: stale_base, nothing moves
        const side = await f.snap({ 'a.txt': 'b\nside\n' }, 'dev', false, B);
        const c2 = await f.change('dev', B, side, 'human_only');
        const land = refused(await f.submit(c2.change, { mode: 'ff-only' }), 'stale_base');
        expect(land.failure_message).to.match(/not an ancestor/);
        expect(await f.head('dev')).to.equal(Rv);
        // direct takes the fast-forward too when the head is an ancestor
        const R2 = await f.snap({ 'a.txt': 'b\nh\nr\nr2\n' }, 'dev', false, Rv);
        const c3 = await f.change('dev', B, R2, 'human_only');
        expect((await ok(f.submit(c3.change, { mode: 'direct' }))).land).to.include({ line_action: 'fast_forward', landed_snapshot_id: R2 });
    });
    it('explicit nulls on :submit and task-land read as absent; a task-land retry that adds nulls replays', async () => {
        const head = await f.head('dev');
        const rv = await f.snap({ 'n.txt': 'n\n' }, 'dev', false, head);
        const c = await f.change('dev', head, rv, 'human_only');
        const res = await ok(f.submit(c.change, { mode: 'ff-only', expected_head_snapshot_id: null, expected_target_line_head: null, target_line: null, patchset_id: null }));
        expect(res.land).to.include({ status: 'landed', expected_head_snapshot_id: null });
        const rv2 = await f.snap({ 'n.txt': 'n2\n' }, 'dev', false, rv);
        const c2 = await f.change('dev', rv, rv2, 'human_only');
        const body = { contract: 'task-land-atomic/v1', idempotency_key: 'nulls', task_or_change_ref: c2.change, mode: 'ff-only' };
        const first = await ok(f.post('/task-land', { ...body, expected_target_line_head: null }));
        expect(first.replay).to.equal(false);
        const again = await ok(f.post('/task-land', { ...body, target_line: null, patchset_id: null }));
        expect(again.replay).to.equal(true);
        expect(again.land.land_id).to.equal(first.land.land_id);
        // another payload is still another payload
        expect((await f.post('/task-land', { ...body, mode: 'merge' })).status).to.equal(409);
    });
    it('an explicit null beside the other guard name reads as absent, in either order', async () => {
        for (const nulled of ['expected_target_line_head', 'expected_head_snapshot_id']) {
            const head = await f.head('dev');
            const rv = await f.snap({ 'g.txt': nulled }, 'dev', false, head);
            const c = await f.change('dev', head, rv, 'human_only');
            const other = nulled === 'expected_target_line_head' ? 'expected_head_snapshot_id' : 'expected_target_line_head';
            const res = await f.submit(c.change, { mode: 'ff-only', [other]: head, [nulled]: null });
            expect(res.status, res.text).to.equal(200);
        }
    });
    it('a line archived earlier in the land\'s batch is not moved (nor reopened) by the land', async () => {
        const a = await f.authority();
        const b = await f.snap({ 'a.txt': 'ar\n' }, 'arch', true);
        const rv = await f.snap({ 'a.txt': 'ar\nb\n' }, 'arch', false, b);
        const c = await f.change('arch', b, rv, 'human_only');
        const [close, land] = await inOneBatch(a, () => f.post('/lines/arch:close', {}), () => f.submit(c.change, { mode: 'ff-only' }));
        expect(close.status).to.equal(200);
        const l = refused(land, 'target_update_failed');
        expect(l.failure_message).to.match(/archived during the land/);
        const line = await ok(f.get('/lines/arch'));
        expect(line.line?.status ?? line.status).to.equal('archived');
        expect(line.line?.head_snapshot_id ?? line.head_snapshot_id).to.equal(b);
    });
    it('a change lists its lands, newest first and paged: refusals and the land that moved the line', async () => {
        const head = await f.head('dev');
        const side = await f.snap({ 'list.txt': 'side\n' }, 'dev', false, head);
        const c = await f.change('dev', head, side, 'human_only');
        const stale = refused(await f.submit(c.change, { mode: 'ff-only', expected_head_snapshot_id: 'f'.repeat(64) }), 'stale_base');
        const landed = (await ok(f.submit(c.change, { mode: 'ff-only' }))).land;
        const all = await ok(f.get(`/read/changes/${c.change}/lands`));
        expect(all.lands.map((l) => l.land_id)).to.deep.equal([landed.land_id, stale.land_id]);
        expect(all.lands[0]).to.deep.include({ status: 'landed', change_id: c.change });
        const first = await ok(f.get(`/read/changes/${c.change}/lands?limit=1`));
        expect(first.lands.map((l) => l.land_id)).to.deep.equal([landed.land_id]);
        const second = await ok(f.get(`/read/changes/${c.change}/lands?limit=1&cursor=${first.next_cursor}`));
        expect(second.lands.map((l) => l.land_id)).to.deep.equal([stale.land_id]);
        expect(second.next_cursor).to.equal(null);
        expect((await f.get('/read/changes/change-999/lands')).status).to.equal(404);
    });
    it('a land naming a patchset that does not exist is 404 and records nothing', async () => {
        const head = await f.head('dev');
        const rv = await f.snap({ 'z.txt': 'z\n' }, 'dev', false, head);
        const c = await f.change('dev', head, rv, 'human_only');
        const a = await f.authority();
        const lands = [...a.store.entitiesOf('land')].length;
        const before = await repoFiles(path.join(s.dataDir, 'repositories', String(f.repo)));
        const res = await f.submit(c.change, { mode: 'ff-only', patchset_id: `${c.change}.ps-9` });
        expect(res.status, res.text).to.equal(404);
        expect([...a.store.entitiesOf('land')].length).to.equal(lands);
        expect(await repoFiles(path.join(s.dataDir, 'repositories', String(f.repo)))).to.deep.equal(before);
    });
});
//# sourceMappingURL=governance.test.js.map