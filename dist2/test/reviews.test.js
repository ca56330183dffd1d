// Reviews, review requests, the reviewer inbox, attestations, policy decisions and patchset CI
// over real HTTP (spec: "Review", "Attestation", "Policy decision", the Worker Job kind-7 rows,
// the review / attestation / policy / CI rows of "Changes, patchsets, reviews, policy, CI,
// Land"; docs/api.md "Reviews, attestation, policy, patchset CI"): the story, every rule and bad
// input (status, `{"error"}` body and an unchanged repository), approval carry-over both ways,
// old-run completions, restart, and a decision edited on disk named by fsck.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { frameBody } from '../lib/store/framed-log.js';
import { api, cli, register, spawnServer, startTestServer, tempDir, expectError, ok, repoFiles } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const RUNTIME = 'svc.runner.native-job.v3';
async function writeTree(dir, files) {
    await fsp.rm(dir, { recursive: true, force: true });
    await fsp.mkdir(dir, { recursive: true });
    for (const [p, v] of Object.entries(files)) {
        await fsp.mkdir(path.dirname(path.join(dir, p)), { recursive: true });
        await fsp.writeFile(path.join(dir, p), v);
    }
}
/**
 * base → rev1 changes a.txt; base2 (= base + other.txt) → rev1b (= rev1 + other.txt) makes the
 * same change on another base (a rebase); rev2 changes a.txt differently.
 */
export async function reviewFixture(url, name = 'rv') {
    const repo = await register(url, name);
    const dir = path.join(tempDir(), 'tree');
    const snap = async (files, moveLine, parent) => {
        await writeTree(dir, files);
        return (await push({ server: url, repo, line: 'main', dir, moveLine, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
    };
    const base = await snap({ 'a.txt': 'one\n', 'b.txt': 'bee\n' }, true);
    const rev1 = await snap({ 'a.txt': 'one\ntwo\n', 'b.txt': 'bee\n' }, false, base);
    const base2 = await snap({ 'a.txt': 'one\n', 'b.txt': 'bee\n', 'other.txt': 'x\n' }, false, base);
    const rev1b = await snap({ 'a.txt': 'one\ntwo\n', 'b.txt': 'bee\n', 'other.txt': 'x\n' }, false, base2);
    const rev2 = await snap({ 'a.txt': 'one\nTWO\n', 'b.txt': 'bee\n' }, false, base);
    return { repo, base, rev1, base2, rev1b, rev2 };
}
/** task-1, change-1 and its first patchset (selected), by `author`. */
async function changeWithPatchset(url, fx, authorMode = 'ai_with_human_review', author = 'alice') {
    const t = (await ok(api(url, 'POST', R(fx.repo, '/tasks'), { json: { title: 'T', intent: 'I' } }), 'task')).task;
    const change = (await ok(api(url, 'POST', R(fx.repo, '/changes'), { json: { task_id: t.task_id, title: 'C', base_line: 'main' } }), 'change')).change;
    const ps = (await ok(api(url, 'POST', R(fx.repo, `/changes/${change.change_id}/patchsets`), { json: { base_snapshot_id: fx.base, revision_snapshot_id: fx.rev1, summary: 's', author_mode: authorMode, ...(author ? { author } : {}) } }), 'ps')).patchset;
    return { change, ps };
}
const passResult = (suites = [{ suite_id: 'unit', status: 'pass', blocking: true }, { suite_id: 'lint', status: 'pass', blocking: false }]) => ({
    contract: 'svc.runner.native-result.v1', status: 'succeeded', tests_status: suites.every((s) => s.status === 'pass') ? 'pass' : 'fail', suite_result_count: suites.length, suite_results: suites,
});
async function claimExact(url, repo, index) {
    return ok(api(url, 'POST', R(repo, `/worker-jobs/${index}:claim`), { json: { accepted_runtime_contracts: [RUNTIME] } }), 'claim');
}
async function completeJob(url, repo, claim, result) {
    return ok(api(url, 'POST', R(repo, `/worker-jobs/${claim.worker_job_index}:complete`), { json: { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { job_kind: 7, result } } }), 'complete');
}
async function state(s, repo, change, ps) {
    return {
        files: await repoFiles(path.join(s.dataDir, 'repositories', String(repo))),
        reviews: (await api(s.url, 'GET', R(repo, `/changes/${change}/reviews`))).json,
        change: (await api(s.url, 'GET', R(repo, `/changes/${change}`))).json,
        patchset: (await api(s.url, 'GET', R(repo, `/patchsets/${ps}`))).json,
        inbox: (await api(s.url, 'GET', R(repo, '/read/reviewer-inbox'))).json,
        jobs: (await api(s.url, 'GET', R(repo, '/worker-jobs'))).json,
    };
}
describe('reviews, attestation, policy, patchset CI: the story over HTTP', function () {
    this.timeout(60_000);
    let s;
    let fx;
    const data = path.join(tempDir(), 'data');
    before(async () => {
        s = await startTestServer(data);
        fx = await reviewFixture(s.url);
    });
    after(() => s.stop());
    it('request → inbox → reviews → attestation → CI → policy fail then pass; the chain links; restart keeps it; fsck names an edited decision', async () => {
        const { repo } = fx;
        const { change, ps } = await changeWithPatchset(s.url, fx);
        expect(ps).to.include({ author: 'alice', evaluation_state: 'not_evaluated' });
        expect(ps.policy).to.deep.equal({ decision: 'pending', checks: [] });
        expect((await ok(api(s.url, 'GET', R(repo, `/patchsets/${ps.patchset_id}/policy`)))).policy).to.deep.equal({ patchset_id: ps.patchset_id, decision: 'pending', checks: [] });
        expectError(await api(s.url, 'GET', R(repo, `/patchsets/${ps.patchset_id}/attestation`)), 404, 'no attestation yet');
        // Review request: the change moves to review, the inbox lists it under its group.
        const rr = await ok(api(s.url, 'POST', R(repo, `/changes/${change.change_ref}:requestReview`), { json: { patchset_id: ps.patchset_id, reviewer_groups: ['core'], note: 'please look', review_id: 'change-1.review-1', requested_by: 'alice' } }), 'request');
        expect(rr.review_id).to.equal('change-1.review-1');
        expect(rr.review_request).to.include({ action: 'request', reviewer_group: 'core', comment: 'please look', requested_by: 'alice', patchset_id: ps.patchset_id });
        expect(rr.change.status).to.equal('review');
        let inbox = await ok(api(s.url, 'GET', R(repo, '/read/reviewer-inbox')));
        expect(inbox.count).to.equal(1);
        expect(inbox.groups).to.deep.equal({ core: 1 });
        expect(inbox.rows[0]).to.include({ reviewer_group: 'core', change_id: 'change-1', selected_patchset_id: ps.patchset_id, requested_by: 'alice', note: 'please look', ci_in: false, policy_in: false, policy_decision: 'pending' });
        expect((await ok(api(s.url, 'GET', R(repo, '/read/reviewer-inbox?reviewer_group=docs')))).count).to.equal(0);
        // Reviews: a comment, the author's own approval, a deferral.
        const c1 = (await ok(api(s.url, 'POST', R(repo, `/changes/${change.change_id}/reviews`), { json: { patchset_id: ps.patchset_id, reviewer: 'bob', action: 'comment', comment: 'nit' } }))).review;
        expect(c1).to.include({ review_id: 'change-1.review-2', action: 'comment', blocking: false, reviewer: 'bob' });
        await ok(api(s.url, 'POST', R(repo, `/changes/${change.change_id}/reviews`), { json: { patchset_id: ps.patchset_id, reviewer: 'alice', action: 'approve' } }));
        await ok(api(s.url, 'POST', R(repo, `/changes/${change.change_id}/reviews`), { json: { patchset_id: ps.patchset_id, reviewer: 'carol', action: 'defer' } }));
        let list = await ok(api(s.url, 'GET', R(repo, `/changes/${change.change_id}/reviews`)));
        expect(list).to.include({ approvals: 1, blocking: 0, comments: 1, total: 4 });
        // Attestation with defaults; a verification pass.
        const att = (await ok(api(s.url, 'PUT', R(repo, `/patchsets/${ps.patchset_id}/attestation`), { json: { verification_state: 'pass', author_mode: 'ai_with_human_review', require_lint_pass: true } }), 'attest')).attestation;
        expect(att).to.include({ attestation_id: `${ps.patchset_id}.attestation-1`, author_mode: 'ai_with_human_review', verification_state: 'pass', revoked: false, require_tests_pass: true, require_human_review: false, require_lint_pass: true, ci_backed: false, tests: 'none', lint: 'none' });
        // CI: queued in run 1, claimed and completed through the worker-job endpoints.
        const run = await ok(api(s.url, 'POST', R(repo, `/patchsets/${ps.patchset_id}:runCi`), { json: {} }), 'runCi');
        expect(run).to.include({ queued: true, delivery: 'worker_job', trigger: 'manual_rerun' });
        expect(run.job).to.include({ job_kind: 7, state: 'queued', patchset_id: ps.patchset_id, snapshot_id: fx.rev1, run_sequence: 1, trigger: 'manual_rerun' });
        expect(run.ci).to.include({ ci_run_sequence: 1, overall: 'pending', active_worker_job_index: run.job.worker_job_index });
        const claim = await claimExact(s.url, repo, run.job.worker_job_index);
        expect(claim.runtime_request).to.include({ snapshot_id: fx.rev1, patchset_id: ps.patchset_id });
        await completeJob(s.url, repo, claim, passResult());
        const after = (await ok(api(s.url, 'GET', R(repo, `/patchsets/${ps.patchset_id}`)))).patchset;
        expect(after.ci).to.include({ ci_run_sequence: 1, overall: 'pass', tests: 'pass', lint: 'pass', status: 'succeeded', evidence_worker_job_index: run.job.worker_job_index });
        expect(after.ci.completed_at_s).to.be.a('number');
        const status = await ok(api(s.url, 'GET', R(repo, `/read/patchsets/${ps.patchset_id}/ci-status?recent_limit=5&projection=readiness`)));
        expect(status).to.include({ availability: 'available', ci_run_sequence: 1, status: 'succeeded', has_runnable_evidence: true, overall: 'pass' });
        expect(status.counts).to.include({ suites: 2, passed: 2, failed: 0, jobs: 1 });
        expect(status.selected_job.worker_job_index).to.equal(run.job.worker_job_index);
        expect(status.recent_jobs).to.have.length(1);
        expect(status.selected_suite_ids).to.deep.equal([]);
        expect(status.suite_results).to.deep.equal([]);
        expect((await ok(api(s.url, 'GET', R(repo, `/patchsets/${ps.patchset_id}/attestation`)))).attestation).to.include({ ci_backed: true, tests: 'pass', lint: 'pass' });
        // Policy: the author's own approval is not independent → fail, each check named.
        const d1 = (await ok(api(s.url, 'POST', R(repo, `/patchsets/${ps.patchset_id}:evaluatePolicy`), { json: {} }), 'evaluate')).policy;
        expect(d1.decision).to.equal('fail');
        const byName = (d) => Object.fromEntries(d.checks.map((c) => [c.name, c.status]));
        expect(byName(d1)).to.deep.equal({ attestation: 'pass', verification_state: 'pass', tests: 'pass', lint: 'pass', human_review: 'skipped', independent_approval: 'fail', no_blocking_review: 'pass' });
        for (const c of d1.checks)
            expect(c.explanation).to.be.a('string').and.not.equal('');
        expect(d1).to.include({ chain_seq: 1, prev_sha256: '', decision_id: `${ps.patchset_id}.decision-1` });
        // bob approves → pass; the second decision links to the first.
        await ok(api(s.url, 'POST', R(repo, `/changes/${change.change_id}/reviews`), { json: { patchset_id: ps.patchset_id, reviewer: 'bob', action: 'task_approve' } }));
        const d2 = (await ok(api(s.url, 'POST', R(repo, `/patchsets/${ps.patchset_id}:evaluatePolicy`), { json: {} }))).policy;
        expect(d2.decision).to.equal('pass');
        expect(d2).to.include({ chain_seq: 2, prev_sha256: d1.sha256 });
        expect((await ok(api(s.url, 'GET', R(repo, `/patchsets/${ps.patchset_id}/policy`)))).policy).to.deep.equal(d2);
        inbox = await ok(api(s.url, 'GET', R(repo, '/read/reviewer-inbox')));
        expect(inbox.rows[0]).to.include({ ci_in: true, policy_in: true, policy_decision: 'pass', approvals: 2 });
        expect((await ok(api(s.url, 'GET', R(repo, `/patchsets/${ps.patchset_id}`)))).patchset.evaluation_state).to.equal('pass');
        // A blocking comment blocks; its dismissal lifts the block.
        await ok(api(s.url, 'POST', R(repo, `/changes/${change.change_id}/reviews`), { json: { patchset_id: ps.patchset_id, reviewer: 'dave', action: 'comment', blocking: true } }));
        list = await ok(api(s.url, 'GET', R(repo, `/changes/${change.change_id}/reviews`)));
        expect(list).to.include({ approvals: 2, blocking: 1, comments: 2 });
        expect((await ok(api(s.url, 'POST', R(repo, `/patchsets/${ps.patchset_id}:evaluatePolicy`), { json: {} }))).policy.decision).to.equal('fail');
        await ok(api(s.url, 'POST', R(repo, `/changes/${change.change_id}/reviews`), { json: { patchset_id: ps.patchset_id, reviewer: 'dave', action: 'dismiss' } }));
        list = await ok(api(s.url, 'GET', R(repo, `/changes/${change.change_id}/reviews`)));
        expect(list).to.include({ approvals: 2, blocking: 0, total: 7 });
        // Restart keeps everything.
        const before = await state(s, repo, change.change_id, ps.patchset_id);
        await s.stop();
        s = await startTestServer(data);
        expect(await state(s, repo, change.change_id, ps.patchset_id)).to.deep.equal(before);
        await s.stop();
        const clean = await cli(['fsck', '--data', data]);
        expect(clean.code, clean.stdout + clean.stderr).to.equal(0);
        // A decision edited on disk (same length, CRC recomputed) breaks the chain; fsck names it.
        const log = path.join(data, 'repositories', String(repo), 'workflow.log');
        const bytes = await fsp.readFile(log);
        let off = 12;
        let edited = false;
        while (off < bytes.length) {
            const len = bytes.readUInt32LE(off);
            const body = bytes.subarray(off + 4, off + 4 + len);
            const text = body.toString('utf8');
            if (text.includes(`"decision_id":"${d1.decision_id}"`)) {
                const tampered = Buffer.from(text.replace('"decision":"fail"', '"decision":"pass"'), 'utf8');
                expect(tampered.length).to.equal(body.length);
                frameBody(tampered).copy(bytes, off);
                edited = true;
                break;
            }
            off += len + 8;
        }
        expect(edited).to.equal(true);
        await fsp.writeFile(log, bytes);
        const check = await cli(['fsck', '--data', data]);
        expect(check.code).to.not.equal(0);
        expect(check.stdout + check.stderr).to.include(d1.decision_id).and.include('sha256');
        s = await startTestServer(data);
    });
});
describe('reviews: approval carry-over, CI runs, bad input', function () {
    this.timeout(60_000);
    let s;
    before(async () => {
        s = await startTestServer();
    });
    after(() => s.stop());
    it('an approval carries over to a patchset with the same changes on another base, and goes stale on different changes', async () => {
        const fx = await reviewFixture(s.url, 'carry');
        const { change, ps } = await changeWithPatchset(s.url, fx, 'human_only', null);
        await ok(api(s.url, 'POST', R(fx.repo, `/changes/${change.change_id}/reviews`), { json: { patchset_id: ps.patchset_id, reviewer: 'bob', action: 'approve' } }));
        // ps-2: base2 → rev1b makes exactly the change base → rev1 made.
        const ps2 = (await ok(api(s.url, 'POST', R(fx.repo, `/changes/${change.change_id}/patchsets`), { json: { base_snapshot_id: fx.base2, revision_snapshot_id: fx.rev1b, summary: 'rebased', author_mode: 'human_only' } }))).patchset;
        // ps-3: a different change of a.txt.
        const ps3 = (await ok(api(s.url, 'POST', R(fx.repo, `/changes/${change.change_id}/patchsets`), { json: { base_snapshot_id: fx.base, revision_snapshot_id: fx.rev2, summary: 'other', author_mode: 'human_only' } }))).patchset;
        await ok(api(s.url, 'POST', R(fx.repo, `/changes/${change.change_id}:selectPatchset`), { json: { patchset_id: ps2.patchset_id } }));
        let list = await ok(api(s.url, 'GET', R(fx.repo, `/changes/${change.change_id}/reviews`)));
        expect(list).to.include({ approvals: 1, selected_patchset_id: ps2.patchset_id });
        expect(list.reviews[0]).to.include({ live: true, stale: false });
        expect((await ok(api(s.url, 'GET', R(fx.repo, `/patchsets/${ps2.patchset_id}`)))).patchset.review).to.include({ approvals: 1, state: 'approved' });
        await ok(api(s.url, 'POST', R(fx.repo, `/changes/${change.change_id}:selectPatchset`), { json: { patchset_id: ps3.patchset_id } }));
        list = await ok(api(s.url, 'GET', R(fx.repo, `/changes/${change.change_id}/reviews`)));
        expect(list).to.include({ approvals: 0, total: 1 });
        expect(list.reviews[0]).to.include({ live: false, stale: true });
        // A policy with require_human_review fails on the stale approval.
        await ok(api(s.url, 'PUT', R(fx.repo, `/patchsets/${ps3.patchset_id}/attestation`), { json: { verification_state: 'pass', require_tests_pass: false, require_human_review: true } }));
        const d = (await ok(api(s.url, 'POST', R(fx.repo, `/patchsets/${ps3.patchset_id}:evaluatePolicy`), { json: {} }))).policy;
        expect(d.decision).to.equal('fail');
        expect(d.checks.find((c) => c.name === 'human_review').status).to.equal('fail');
        expect(d.checks.find((c) => c.name === 'tests').status).to.equal('skipped');
    });
    it('CI runs: a completion of an older run is recorded on its job but does not replace newer evidence; other triggers reuse evidence', async () => {
        const fx = await reviewFixture(s.url, 'ci');
        const { ps } = await changeWithPatchset(s.url, fx);
        const p = (rest = '') => R(fx.repo, `/patchsets/${ps.patchset_id}${rest}`);
        const a = await ok(api(s.url, 'POST', p(':runCi'), { json: { trigger: 'manual_rerun' } }));
        // A non-advancing trigger while run 1 is active returns the active job.
        const again = await ok(api(s.url, 'POST', p(':runCi'), { json: { trigger: 'push' } }));
        expect(again).to.include({ queued: false, delivery: 'active_run', trigger: 'push' });
        expect(again.job.worker_job_index).to.equal(a.job.worker_job_index);
        const claimA = await claimExact(s.url, fx.repo, a.job.worker_job_index);
        const b = await ok(api(s.url, 'POST', p(':runCi'), { json: { trigger: 'base_stale_after_land_rerun' } }));
        expect(b.job.run_sequence).to.equal(2);
        expect(b.ci.ci_run_sequence).to.equal(2);
        const claimB = await claimExact(s.url, fx.repo, b.job.worker_job_index);
        await completeJob(s.url, fx.repo, claimB, passResult());
        // Run 1 completes late, failing: recorded on its job, evidence stays run 2's.
        const lateJob = (await completeJob(s.url, fx.repo, claimA, passResult([{ suite_id: 'unit', status: 'fail', blocking: true }]))).job;
        expect(lateJob).to.include({ state: 'succeeded', run_sequence: 1 });
        const ci = (await ok(api(s.url, 'GET', p()))).patchset.ci;
        expect(ci).to.include({ ci_run_sequence: 2, overall: 'pass', evidence_worker_job_index: b.job.worker_job_index, latest_worker_job_index: b.job.worker_job_index });
        const reuse = await ok(api(s.url, 'POST', p(':runCi'), { json: { trigger: 'review_requested' } }));
        expect(reuse).to.include({ queued: false, delivery: 'reused_evidence' });
        expect(reuse.job.worker_job_index).to.equal(b.job.worker_job_index);
        const st = await ok(api(s.url, 'GET', R(fx.repo, `/read/patchsets/${ps.patchset_id}/ci-status?recent_limit=1`)));
        expect(st.recent_jobs.map((j) => j.worker_job_index)).to.deep.equal([b.job.worker_job_index]);
        expect(st.counts).to.include({ jobs: 2, current_run_jobs: 1 });
    });
    it('every bad input is refused with its status and changes nothing', async () => {
        const fx = await reviewFixture(s.url, 'bad');
        const { change, ps } = await changeWithPatchset(s.url, fx);
        // A second, unselected patchset; a closed change elsewhere.
        const other = (await ok(api(s.url, 'POST', R(fx.repo, `/changes/${change.change_id}/patchsets`), { json: { base_snapshot_id: fx.base, revision_snapshot_id: fx.rev2, summary: 'x', author_mode: 'ai_with_human_review' } }))).patchset;
        const t2 = (await ok(api(s.url, 'POST', R(fx.repo, '/tasks'), { json: { title: 'T2', intent: 'I' } }))).task;
        const closed = (await ok(api(s.url, 'POST', R(fx.repo, '/changes'), { json: { task_id: t2.task_id, title: 'C2', base_line: 'main' } }))).change;
        const closedPs = (await ok(api(s.url, 'POST', R(fx.repo, `/changes/${closed.change_id}/patchsets`), { json: { base_snapshot_id: fx.base, revision_snapshot_id: fx.rev1, summary: 'x', author_mode: 'human_only' } }))).patchset;
        await ok(api(s.url, 'POST', R(fx.repo, `/changes/${closed.change_id}:close`), { json: { status: 'abandoned' } }));
        const rv = (rest) => R(fx.repo, `/changes/${change.change_id}${rest}`);
        const pp = (rest, id = ps.patchset_id) => R(fx.repo, `/patchsets/${id}${rest}`);
        const good = { patchset_id: ps.patchset_id, reviewer: 'bob', action: 'approve' };
        const goodReq = { patchset_id: ps.patchset_id, reviewer_groups: ['core'], note: '' };
        const cases = [
            ['review: unknown action', 'POST', rv('/reviews'), { ...good, action: 'lgtm' }, 400],
            ['review: empty reviewer', 'POST', rv('/reviews'), { ...good, reviewer: ' ' }, 400],
            ['review: reviewer not a string', 'POST', rv('/reviews'), { ...good, reviewer: 7 }, 422],
            ['review: blocking not boolean', 'POST', rv('/reviews'), { ...good, blocking: 'yes' }, 422],
            ['review: lone surrogate', 'POST', rv('/reviews'), { ...good, comment: '\ud800' }, 400],
            ['review: unknown patchset', 'POST', rv('/reviews'), { ...good, patchset_id: 'change-1.ps-99' }, 404],
            ['review: not the selected patchset', 'POST', rv('/reviews'), { ...good, patchset_id: other.patchset_id }, 400],
            ['review: unknown change', 'POST', R(fx.repo, '/changes/change-99/reviews'), good, 404],
            ['review: closed change', 'POST', R(fx.repo, `/changes/${closed.change_id}/reviews`), { ...good, patchset_id: closedPs.patchset_id }, 400],
            ['review: route-owned field', 'POST', rv('/reviews'), { ...good, repository_index: 0 }, 400],
            ['request: two groups', 'POST', rv(':requestReview'), { ...goodReq, reviewer_groups: ['a', 'b'] }, 400],
            ['request: no group', 'POST', rv(':requestReview'), { ...goodReq, reviewer_groups: [] }, 400],
            ['request: groups not an array', 'POST', rv(':requestReview'), { ...goodReq, reviewer_groups: 'core' }, 422],
            ['request: groups missing', 'POST', rv(':requestReview'), { patchset_id: ps.patchset_id }, 422],
            ['request: a group not a string', 'POST', rv(':requestReview'), { ...goodReq, reviewer_groups: [7] }, 422],
            ['request: empty group', 'POST', rv(':requestReview'), { ...goodReq, reviewer_groups: [''] }, 400],
            ['request: malformed review_id', 'POST', rv(':requestReview'), { ...goodReq, review_id: 'r1' }, 400],
            ['request: another review_id', 'POST', rv(':requestReview'), { ...goodReq, review_id: 'change-1.review-5' }, 400],
            ['request: not selected', 'POST', rv(':requestReview'), { ...goodReq, patchset_id: other.patchset_id }, 400],
            ['request: unknown patchset', 'POST', rv(':requestReview'), { ...goodReq, patchset_id: 'change-1.ps-9' }, 404],
            ['request: missing patchset_id', 'POST', rv(':requestReview'), { reviewer_groups: ['core'] }, 422],
            ['attest: author_mode disagrees', 'PUT', pp('/attestation'), { author_mode: 'human_only' }, 400],
            ['attest: unknown author_mode', 'PUT', pp('/attestation'), { author_mode: 'robot' }, 400],
            ['attest: unknown verification_state', 'PUT', pp('/attestation'), { verification_state: 'ok' }, 400],
            ['attest: detail.patchset_ci', 'PUT', pp('/attestation'), { detail: { patchset_ci: { overall: 'pass' } } }, 400],
            ['attest: detail not an object', 'PUT', pp('/attestation'), { detail: [1] }, 422],
            ['attest: detail null', 'PUT', pp('/attestation'), { detail: null }, 422],
            ['attest: revoked not boolean', 'PUT', pp('/attestation'), { revoked: 'no' }, 422],
            ['attest: body an array', 'PUT', pp('/attestation'), [], 422],
            ['attest: unknown patchset', 'PUT', pp('/attestation', 'change-1.ps-77'), {}, 404],
            ['attest: closed change', 'PUT', pp('/attestation', closedPs.patchset_id), {}, 400],
            ['evaluate: non-empty body', 'POST', pp(':evaluatePolicy'), { force: true }, 422],
            ['evaluate: body an array', 'POST', pp(':evaluatePolicy'), [], 422],
            ['evaluate: route-owned field', 'POST', pp(':evaluatePolicy'), { repository_index: 0 }, 400],
            ['evaluate: unknown patchset', 'POST', pp(':evaluatePolicy', 'change-1.ps-77'), {}, 404],
            ['evaluate: closed change', 'POST', pp(':evaluatePolicy', closedPs.patchset_id), {}, 400],
            ['runCi: empty trigger', 'POST', pp(':runCi'), { trigger: '' }, 400],
            ['runCi: trigger not a string', 'POST', pp(':runCi'), { trigger: 1 }, 422],
            ['runCi: long trigger', 'POST', pp(':runCi'), { trigger: 'x'.repeat(129) }, 400],
            ['runCi: unknown patchset', 'POST', pp(':runCi', 'change-1.ps-77'), {}, 404],
            ['runCi: closed change', 'POST', pp(':runCi', closedPs.patchset_id), {}, 400],
            ['runCi: body an array', 'POST', pp(':runCi'), [], 422],
        ];
        const before = await state(s, fx.repo, change.change_id, ps.patchset_id);
        for (const [what, method, url, json, status] of cases) {
            expectError(await api(s.url, method, url, { json }), status, what);
        }
        for (const [what, url, status] of [
            ['ci-status: recent_limit 0', `/read/patchsets/${ps.patchset_id}/ci-status?recent_limit=0`, 400],
            ['ci-status: recent_limit 1001', `/read/patchsets/${ps.patchset_id}/ci-status?recent_limit=1001`, 400],
            ['ci-status: recent_limit text', `/read/patchsets/${ps.patchset_id}/ci-status?recent_limit=ten`, 400],
            ['ci-status: projection', `/read/patchsets/${ps.patchset_id}/ci-status?projection=full`, 400],
            ['ci-status: unknown patchset', '/read/patchsets/change-1.ps-77/ci-status', 404],
            ['reviews: unknown change', '/changes/change-77/reviews', 404],
            ['policy: unknown patchset', '/patchsets/change-1.ps-77/policy', 404],
            ['attestation: unknown patchset', '/patchsets/change-1.ps-77/attestation', 404],
            ['inbox: group twice', '/read/reviewer-inbox?reviewer_group=a&reviewer_group=b', 400],
        ]) {
            expectError(await api(s.url, 'GET', R(fx.repo, url)), status, what);
        }
        expect(await state(s, fx.repo, change.change_id, ps.patchset_id)).to.deep.equal(before);
        expect((await ok(api(s.url, 'GET', R(fx.repo, `/read/patchsets/${ps.patchset_id}/ci-status?recent_limit=1000`)))).availability).to.equal('none');
    });
});
describe('reviews: concurrent writes share commits without breaking sequences or the chain', function () {
    this.timeout(60_000);
    it('30 concurrent reviews and 30 concurrent evaluations: unique ids, one unbroken chain, fsck clean after restart', async () => {
        const data = path.join(tempDir(), 'data');
        let s = await startTestServer(data);
        const fx = await reviewFixture(s.url, 'conc');
        const { change, ps } = await changeWithPatchset(s.url, fx, 'human_only', null);
        const reviews = await Promise.all(Array.from({ length: 30 }, (_, i) => ok(api(s.url, 'POST', R(fx.repo, `/changes/${change.change_id}/reviews`), { json: { patchset_id: ps.patchset_id, reviewer: `r${i}`, action: 'approve' } }))));
        expect(new Set(reviews.map((r) => r.review.review_id)).size).to.equal(30);
        await ok(api(s.url, 'PUT', R(fx.repo, `/patchsets/${ps.patchset_id}/attestation`), { json: { verification_state: 'pass', require_tests_pass: false } }));
        const decisions = (await Promise.all(Array.from({ length: 30 }, () => ok(api(s.url, 'POST', R(fx.repo, `/patchsets/${ps.patchset_id}:evaluatePolicy`), { json: {} }))))).map((r) => r.policy);
        const bySeq = [...decisions].sort((a, b) => a.chain_seq - b.chain_seq);
        expect(bySeq.map((d) => d.chain_seq)).to.deep.equal(Array.from({ length: 30 }, (_, i) => i + 1));
        for (let i = 1; i < bySeq.length; i++)
            expect(bySeq[i].prev_sha256).to.equal(bySeq[i - 1].sha256);
        expect(new Set(decisions.map((d) => d.decision_id)).size).to.equal(30);
        expect(decisions.every((d) => d.decision === 'pass')).to.equal(true);
        expect((await ok(api(s.url, 'GET', R(fx.repo, `/changes/${change.change_id}/reviews`)))).approvals).to.equal(30);
        await s.stop();
        const check = await cli(['fsck', '--data', data]);
        expect(check.code, check.stdout + check.stderr).to.equal(0);
        s = await startTestServer(data);
        expect((await ok(api(s.url, 'GET', R(fx.repo, `/patchsets/${ps.patchset_id}/policy`)))).policy.chain_seq).to.equal(30);
        await s.stop();
    });
});
describe('reviews: kill -9 at the commit of a patchset CI completion or run request', function () {
    this.timeout(60_000);
    for (const point of ['commit:after-log', 'commit:after-state']) {
        it(`a kind-7 completion killed at ${point}: the job is running with no evidence, or succeeded with its evidence`, async () => {
            const data = path.join(tempDir(), 'data');
            const first = await spawnServer(data);
            const fx = await reviewFixture(first.url, 'crash');
            const { ps } = await changeWithPatchset(first.url, fx);
            const run = await ok(api(first.url, 'POST', R(fx.repo, `/patchsets/${ps.patchset_id}:runCi`), { json: {} }));
            const claim = await claimExact(first.url, fx.repo, run.job.worker_job_index);
            first.proc.kill('SIGTERM');
            await first.exited;
            const doomed = await spawnServer(data, [], true, { CAIRN_TEST_CRASH_AT: point });
            const res = await api(doomed.url, 'POST', R(fx.repo, `/worker-jobs/${claim.worker_job_index}:complete`), { json: { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { job_kind: 7, result: passResult() } } }).catch(() => null);
            expect(res).to.equal(null);
            expect(await doomed.exited).to.equal(null);
            const restarted = await spawnServer(data);
            try {
                const job = (await ok(api(restarted.url, 'GET', R(fx.repo, `/worker-jobs/${claim.worker_job_index}`)))).job;
                const ci = (await ok(api(restarted.url, 'GET', R(fx.repo, `/patchsets/${ps.patchset_id}`)))).patchset.ci;
                if (point === 'commit:after-state') {
                    expect(job.state).to.equal('succeeded');
                    expect(ci).to.include({ overall: 'pass', evidence_worker_job_index: claim.worker_job_index });
                }
                else {
                    expect(job.state).to.equal('running');
                    expect(ci).to.include({ overall: 'pending', evidence_worker_job_index: null });
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
//# sourceMappingURL=reviews.test.js.map