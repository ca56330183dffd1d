// Pure review rules (lib/domain/workflow/review-rules.ts): what each action does to a reviewer's
// vote, liveness across patchsets, the policy checks per author mode, and the decision chain.
import { expect } from 'chai';
import { decisionDigest, evaluatePolicy, liveVotes, reviewCounts, verifyDecisionChain, } from '../lib/domain/workflow/review-rules.js';
let n = 0;
const review = (reviewer, action, o = {}) => ({
    review_id: `change-1.review-${++n}`, change_id: 'change-1', sequence: n, patchset_id: 'change-1.ps-1', patchset_fingerprint: 'F1',
    reviewer, action, comment: '', blocking: false, reviewer_group: null, requested_by: null, created_at_s: 1, ...o,
});
const sel = { patchset_id: 'change-1.ps-1', fingerprint: 'F1' };
const attestation = (o = {}) => ({
    attestation_id: 'a', patchset_id: 'change-1.ps-1', sequence: 1, author_mode: 'human_only', verification_state: 'pass', revoked: false,
    require_tests_pass: false, require_human_review: false, require_lint_pass: false, detail: {}, created_at_s: 1, ...o,
});
describe('review rules', () => {
    it('votes: latest vote-bearing record per reviewer; comments keep the vote; blocking:true blocks; dismiss withdraws', () => {
        const rs = [
            review('a', 'approve'), review('a', 'comment'), // still approves
            review('b', 'approve'), review('b', 'task_request_changes'), // now blocks
            review('c', 'comment', { blocking: true }), review('c', 'dismiss'), // withdrawn
            review('d', 'defer'), review('e', 'code_review_summary'), review('g', 'request'),
        ];
        const votes = liveVotes(rs, sel);
        expect(votes.map((v) => `${v.reviewer}:${v.vote}`).sort()).to.deep.equal(['a:approve', 'b:block']);
        expect(reviewCounts(rs, votes)).to.deep.equal({ approvals: 1, blocking: 1, comments: 3, total: 9 });
    });
    it('liveness: same patchset or same fingerprint counts; a different fingerprint is stale; no fingerprint never carries', () => {
        const rs = [review('a', 'approve', { patchset_id: 'change-1.ps-1', patchset_fingerprint: 'F1' })];
        expect(liveVotes(rs, { patchset_id: 'change-1.ps-2', fingerprint: 'F1' })).to.have.length(1);
        expect(liveVotes(rs, { patchset_id: 'change-1.ps-3', fingerprint: 'F2' })).to.have.length(0);
        expect(liveVotes([review('a', 'approve', { patchset_fingerprint: null })], { patchset_id: 'change-1.ps-2', fingerprint: null })).to.have.length(0);
    });
    it('policy: independent approval for the three AI-involved modes even without require_human_review; skipped for human_only', () => {
        const own = liveVotes([review('alice', 'approve')], sel);
        for (const mode of ['ai_with_human_review', 'ai_only_experimental', 'human_with_ai_assist']) {
            const r = evaluatePolicy({ attestation: attestation({ author_mode: mode }), ci: null, votes: own, author_mode: mode, author: 'alice' });
            expect(r.decision, mode).to.equal('fail');
            expect(r.checks.find((c) => c.name === 'independent_approval').status).to.equal('fail');
            const other = evaluatePolicy({ attestation: attestation({ author_mode: mode }), ci: null, votes: liveVotes([review('bob', 'approve')], sel), author_mode: mode, author: 'alice' });
            expect(other.decision, mode).to.equal('pass');
        }
        const h = evaluatePolicy({ attestation: attestation(), ci: null, votes: [], author_mode: 'human_only', author: null });
        expect(h.decision).to.equal('pass');
        expect(h.checks.map((c) => `${c.name}:${c.status}`)).to.deep.equal(['attestation:pass', 'verification_state:pass', 'tests:skipped', 'lint:skipped', 'human_review:skipped', 'independent_approval:skipped', 'no_blocking_review:pass']);
    });
    it('policy: missing or revoked attestation, unverified state, required tests without evidence all fail', () => {
        const base = { ci: null, votes: [], author_mode: 'human_only', author: null };
        expect(evaluatePolicy({ ...base, attestation: null }).decision).to.equal('fail');
        expect(evaluatePolicy({ ...base, attestation: attestation({ revoked: true }) }).decision).to.equal('fail');
        expect(evaluatePolicy({ ...base, attestation: attestation({ verification_state: 'unknown' }) }).decision).to.equal('fail');
        expect(evaluatePolicy({ ...base, attestation: attestation({ require_tests_pass: true }) }).decision).to.equal('fail');
        const ci = { worker_job_index: 0, run_sequence: 1, overall: 'pass', status: 'succeeded', tests: 'pass', lint: 'fail', suite_results: [], completed_at_s: 1 };
        expect(evaluatePolicy({ ...base, ci, attestation: attestation({ require_tests_pass: true }) }).decision).to.equal('pass');
        expect(evaluatePolicy({ ...base, ci, attestation: attestation({ require_lint_pass: true }) }).decision).to.equal('fail');
    });
    it('decision chain: a clean chain verifies; an edit, a re-hashed edit and a removed link are each named', () => {
        const chain = [];
        let prev = '';
        for (let i = 1; i <= 3; i++) {
            const body = { decision_id: `d${i}`, patchset_id: 'p', sequence: i, chain_seq: i, decision: 'pass', checks: [], attestation_id: null, ci_run_sequence: 0, ci_worker_job_index: null, evaluated_at_s: i, prev_sha256: prev };
            const d = { ...body, sha256: decisionDigest(body) };
            chain.push(d);
            prev = d.sha256;
        }
        expect(verifyDecisionChain(chain)).to.equal(null);
        const edited = chain.map((d) => ({ ...d }));
        edited[1].decision = 'fail';
        expect(verifyDecisionChain(edited)).to.match(/^policy decision d2: content does not match/);
        edited[1].sha256 = decisionDigest(edited[1]);
        expect(verifyDecisionChain(edited)).to.match(/^policy decision d3: prev_sha256 does not match .* d2/);
        expect(verifyDecisionChain([chain[0], chain[2]])).to.match(/^policy decision d3: chain position 3, expected 2/);
        // Key order on disk does not matter.
        const reordered = Object.fromEntries(Object.entries(chain[0]).reverse());
        expect(verifyDecisionChain([reordered, chain[1], chain[2]])).to.equal(null);
    });
});
//# sourceMappingURL=review-domain.test.js.map