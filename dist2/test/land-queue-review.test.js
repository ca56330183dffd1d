// The land queue's edges (docs/land-queue.md): the gates checked at enqueue with CI assumed to
// pass (lint included), a queue job's malformed result, the running job of a dropped
// speculation, over real HTTP against a real data directory. CI is played by the test.
import { expect } from 'chai';
import { api, expectError, ok, register, startTestServer } from './helpers.js';
import { Fixture, R, result } from './land-queue-fixture.js';
const BASE = { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' };
describe('land queue review', function () {
    this.timeout(120_000);
    let s;
    after(() => s?.stop());
    before(async () => {
        s = await startTestServer(undefined, { queue: { depth: 4, retries: 0, batch: 1, stall_s: 3600 } });
    });
    async function fresh(name) {
        const f = new Fixture(s, await register(s.url, name));
        return { f, base: await f.snap(BASE, 'main', true) };
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
    let s;
    after(() => s?.stop());
    before(async () => {
        s = await startTestServer();
    });
    it('bad ids, bodies and queries are 4xx with an {"error"} body, never a 500', async () => {
        const repo = await register(s.url, 'bad');
        const f = new Fixture(s, repo);
        const base = await f.snap(BASE, 'main', true);
        const c = await f.change(base, { ...BASE, 'a.txt': 'x\n' });
        const bodies = [null, [], 'x', 5, {}, { change_ref: 5, mode: 'merge' }, { change_ref: c.ref, mode: 'merge', target_line: '' }, { change_ref: c.ref, mode: 'merge', target_line: 'a/../b' }, { change_ref: '', mode: 'merge' }, { change_ref: '../../x', mode: 'merge' }, { change_ref: c.ref }, { change_ref: c.ref, mode: null }, { change_ref: 'x'.repeat(100_000), mode: 'merge' }];
        for (const b of bodies) {
            const res = await f.post('/land-queue', b);
            expect(res.status, `${JSON.stringify(b).slice(0, 80)}: ${res.text}`).to.be.within(400, 499);
            expect(Object.keys(res.json ?? {})).to.deep.equal(['error']);
        }
        for (const q of ['?target_line=', '?target_line=..', '?target_line=a%00b', '?target_line=x&target_line=y']) {
            const res = await f.get(`/land-queue${q}`);
            expect(res.status, `${q}: ${res.text}`).to.be.oneOf([200, 400, 404, 422]);
            if (res.status !== 200)
                expect(Object.keys(res.json ?? {})).to.deep.equal(['error']);
        }
        for (const id of ['lq-', 'lq-1x', 'lq-99999999999', '%00', 'lq-01', 'x'.repeat(5000)]) {
            for (const m of ['GET', 'DELETE']) {
                const res = await api(s.url, m, R(repo, `/land-queue/${id}`));
                expect(res.status, `${m} ${id.slice(0, 20)}: ${res.text}`).to.be.within(400, 499);
                expect(Object.keys(res.json ?? {})).to.deep.equal(['error']);
            }
        }
    });
});
//# sourceMappingURL=land-queue-review.test.js.map