// Reviews, attestations, policy decisions and patchset CI evidence (spec: "Review",
// "Attestation", "Policy decision", the review / attestation / policy / CI rows of "Changes,
// patchsets, reviews, policy, CI, Land"; docs/api.md "Reviews, attestation, policy, patchset CI"):
// record shapes, identities, vote counting, approval carry-over, the policy checks and the
// decision chain. Pure functions; lib/authority/workflow/reviews.ts persists.
import { createHash } from 'node:crypto';
import { Invalid } from '../errors.js';
import { nameProblem } from '../text.js';
/** workflow.log entity types (storage-layout.md §17). */
export const REVIEW = 'review';
export const ATTESTATION = 'attestation';
export const POLICY_DECISION = 'policy_decision';
export const REVIEW_ACTIONS = ['request', 'comment', 'task_comment', 'code_review_summary', 'approve', 'task_approve', 'request_changes', 'task_request_changes', 'defer', 'task_defer', 'dismiss'];
const APPROVE = ['approve', 'task_approve'];
const BLOCK = ['request_changes', 'task_request_changes'];
const COMMENT = ['comment', 'task_comment', 'code_review_summary'];
export const VERIFICATION_STATES = ['unknown', 'pending', 'pass', 'fail'];
/** Author modes that need a live approval from someone other than the patchset's author. */
export const INDEPENDENT_REVIEW_MODES = ['ai_with_human_review', 'ai_only_experimental', 'human_with_ai_assist'];
export { MAX_NAME_CHARS } from '../text.js';
export const reviewId = (change, n) => `${change}.review-${n}`;
export const attestationId = (patchset, n) => `${patchset}.attestation-${n}`;
export const decisionId = (patchset, n) => `${patchset}.decision-${n}`;
const REVIEW_ID_RE = /^change-[1-9][0-9]{0,9}\.review-[1-9][0-9]{0,9}$/;
export function requireAction(value) {
    if (!REVIEW_ACTIONS.includes(value))
        throw new Invalid(`action must be one of ${REVIEW_ACTIONS.join(', ')}`);
    return value;
}
/** A person's or group's name: the one rule of lib/domain/text.ts `nameProblem` (the identity header's too). */
export function requireName(value, field) {
    const problem = nameProblem(value);
    if (problem !== null)
        throw new Invalid(`${field} ${problem}`);
    return value;
}
/** `reviewer_groups`: exactly one non-empty group name. */
export function requireOneGroup(groups) {
    if (!Array.isArray(groups) || groups.length !== 1 || typeof groups[0] !== 'string')
        throw new Invalid('reviewer_groups must be an array of exactly one group name');
    return requireName(groups[0], 'reviewer_groups[0]');
}
/** A caller-supplied review_id: malformed, or not the derived identity → 400. */
export function checkSuppliedReviewId(supplied, derived) {
    if (supplied === undefined)
        return;
    if (!REVIEW_ID_RE.test(supplied))
        throw new Invalid('review_id must be of the form change-<sequence>.review-<number>');
    if (supplied !== derived)
        throw new Invalid(`review_id ${supplied} is not the derived identity (${derived})`);
}
export function requireVerificationState(value) {
    if (!VERIFICATION_STATES.includes(value))
        throw new Invalid(`verification_state must be one of ${VERIFICATION_STATES.join(', ')}`);
    return value;
}
/** What one review record does to its reviewer's vote; undefined = leaves it unchanged. */
export function voteOf(r) {
    if (r.action === 'dismiss')
        return null;
    if (r.blocking || BLOCK.includes(r.action))
        return 'block';
    if (APPROVE.includes(r.action))
        return 'approve';
    return undefined;
}
/**
 * The live votes on `selected` (`reviews` are all the reviews of its change): each reviewer's
 * latest vote-bearing record (approve, block, dismiss) is their vote. An approval counts when
 * it was recorded on a patchset whose change fingerprint equals the selected patchset's (the
 * same patchset, or one changing exactly the same paths to the same blob ids and kinds
 * relative to its base). A block is a veto on the change: it counts on every patchset of the
 * change, whatever its content, until the reviewer dismisses it or votes again (Gerrit's
 * sticky -2). A dismiss withdraws the reviewer's vote.
 */
export function liveVotes(reviews, selected) {
    const latest = new Map();
    for (const r of reviews)
        if (voteOf(r) !== undefined)
            latest.set(r.reviewer, r);
    const out = [];
    for (const r of latest.values()) {
        const vote = voteOf(r);
        if (!vote || !isLive(r, selected))
            continue;
        out.push({ reviewer: r.reviewer, vote, review_id: r.review_id, patchset_id: r.patchset_id });
    }
    return out;
}
export function isLive(r, selected) {
    if (voteOf(r) === 'block')
        return true;
    if (selected.carry_all === true)
        return true;
    return r.patchset_id === selected.patchset_id || (selected.fingerprint !== null && r.patchset_fingerprint === selected.fingerprint);
}
/**
 * Why each reviewer's latest approval counts or not on `selected` (docs/api.md "Repository
 * rules", dismiss_stale_approvals): `live` on the patchset itself, `carried` from an earlier
 * patchset whose changes are the same (same fingerprint: the same paths changed to the same
 * content, a trivial rebase) or because the rule keeps approvals, `dismissed` when a later
 * patchset changed other content.
 */
export function approvalStates(reviews, selected) {
    const latest = new Map();
    for (const r of reviews)
        if (voteOf(r) !== undefined)
            latest.set(r.reviewer, r);
    const out = [];
    for (const r of latest.values()) {
        if (voteOf(r) !== 'approve')
            continue;
        const base = { reviewer: r.reviewer, review_id: r.review_id, patchset_id: r.patchset_id };
        if (r.patchset_id === selected.patchset_id)
            out.push({ ...base, state: 'live', reason: `approved ${r.patchset_id}` });
        else if (selected.carry_all === true)
            out.push({ ...base, state: 'carried', reason: `approved ${r.patchset_id}; this repository keeps approvals on new patchsets (dismiss_stale_approvals off)` });
        else if (isLive(r, selected))
            out.push({ ...base, state: 'carried', reason: `approved ${r.patchset_id}, whose changes ${selected.patchset_id} repeats exactly (same paths, same content: a trivial rebase)` });
        else
            out.push({ ...base, state: 'dismissed', reason: `approved ${r.patchset_id}; ${selected.patchset_id} changes other content, so the approval was dismissed (dismiss_stale_approvals)` });
    }
    return out;
}
export function reviewCounts(reviews, votes) {
    return {
        approvals: votes.filter((v) => v.vote === 'approve').length,
        blocking: votes.filter((v) => v.vote === 'block').length,
        comments: reviews.filter((r) => COMMENT.includes(r.action)).length,
        total: reviews.length,
    };
}
/** Lint status of a result: the suites whose id is `lint` or starts with `lint` (all pass → pass; none → none). */
export function lintStatus(result) {
    const lint = result.suite_results.filter((s) => s.suite_id.toLowerCase().startsWith('lint'));
    if (lint.length === 0)
        return 'none';
    return lint.every((s) => s.status === 'pass') ? 'pass' : 'fail';
}
export function evaluatePolicy(inp) {
    const checks = [];
    const add = (name, ok, pass, fail, skip = '') => checks.push({ name, status: ok === null ? 'skipped' : ok ? 'pass' : 'fail', explanation: ok === null ? skip : ok ? pass : fail });
    const a = inp.attestation;
    add('attestation', a !== null && !a.revoked, `attestation ${a?.attestation_id} is present and not revoked`, a ? `attestation ${a.attestation_id} is revoked` : 'no attestation has been recorded for this patchset');
    add('verification_state', a ? a.verification_state === 'pass' : false, 'the attestation\'s verification_state is pass', `verification_state is ${a?.verification_state ?? 'absent'}; only pass passes`);
    const ci = inp.ci;
    const ciText = ci ? `CI run ${ci.run_sequence} (job ${ci.worker_job_index}): tests ${ci.tests}, lint ${ci.lint}, status ${ci.status}` : 'no CI evidence for the current run';
    add('tests', a && a.require_tests_pass ? ci !== null && ci.tests === 'pass' && ci.status === 'succeeded' : null, `tests pass: ${ciText}`, `tests required: ${ciText}`, 'the attestation does not require tests to pass');
    add('lint', a && a.require_lint_pass ? ci !== null && ci.lint === 'pass' : null, `lint passes: ${ciText}`, `lint required: ${ciText}`, 'the attestation does not require lint to pass');
    const approvals = inp.votes.filter((v) => v.vote === 'approve');
    add('human_review', a && a.require_human_review ? approvals.length > 0 : null, `${approvals.length} live approval(s)`, 'human review required: no live approval', 'the attestation does not require human review');
    const independent = approvals.filter((v) => v.reviewer !== inp.author);
    const needsIndependent = INDEPENDENT_REVIEW_MODES.includes(inp.author_mode);
    add('independent_approval', needsIndependent ? independent.length > 0 : null, `approved by ${independent.map((v) => v.reviewer).join(', ')} (not the author)`, `author_mode ${inp.author_mode} needs a live approval from a reviewer other than the author${inp.author ? ` (${inp.author})` : ''}`, `author_mode ${inp.author_mode} needs no independent approval`);
    const blocks = inp.votes.filter((v) => v.vote === 'block');
    add('no_blocking_review', blocks.length === 0, 'no live blocking review', `blocked by ${blocks.map((v) => `${v.reviewer} (${v.review_id})`).join(', ')}`);
    return { decision: checks.every((c) => c.status !== 'fail') ? 'pass' : 'fail', checks };
}
// ------------------------------------------------------------------ decision chain
/** Canonical JSON: keys sorted at every level (the digest never depends on key order on disk). */
export function canonicalJson(v) {
    if (Array.isArray(v))
        return `[${v.map(canonicalJson).join(',')}]`;
    if (v && typeof v === 'object')
        return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`).join(',')}}`;
    return JSON.stringify(v);
}
/** sha256 (hex) of a decision's canonical JSON without its own `sha256` field. */
export function decisionDigest(d) {
    const { sha256: _omit, ...rest } = d;
    return createHash('sha256').update(canonicalJson(rest), 'utf8').digest('hex');
}
/**
 * Verify a chain given in chain order: each record's own digest, its position, and its link to
 * the previous record. Returns the first broken link as a sentence, or null.
 */
export function verifyDecisionChain(chain) {
    let prev = '';
    for (let i = 0; i < chain.length; i++) {
        const d = chain[i];
        if (d.chain_seq !== i + 1)
            return `policy decision ${d.decision_id}: chain position ${d.chain_seq}, expected ${i + 1}`;
        if (d.prev_sha256 !== prev)
            return `policy decision ${d.decision_id}: prev_sha256 does not match the sha256 of the previous decision${i > 0 ? ` ${chain[i - 1].decision_id}` : ''}`;
        if (decisionDigest(d) !== d.sha256)
            return `policy decision ${d.decision_id}: content does not match its sha256 (edited after it was written)`;
        prev = d.sha256;
    }
    return null;
}
//# sourceMappingURL=review-rules.js.map