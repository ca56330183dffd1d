// Reviews, review requests, the reviewer inbox, attestations, policy and patchset CI (spec:
// "Review", "Attestation", "Policy decision", the review / attestation / policy / CI rows of
// "Changes, patchsets, reviews, policy, CI, Land"; docs/api.md "Reviews, attestation, policy,
// patchset CI"). Schemas check shape (422); rules live in lib/domain/workflow/review-rules.ts
// and lib/authority/workflow/reviews.ts (400/404/409).
import { array, boolean, nullable, object as strictObject, optional, record, string, unknown, type as looseObject } from 'superstruct';
import { Invalid, Unprocessable } from '../../domain/errors.js';
import { requireAuthority } from '../route-types.js';
import { validate } from '../validate.js';
import { jobProjection } from '../../authority/jobs.js';
import { ciProjectionOf } from '../../authority/workflow/reviews.js';
import { actAs, pageFields, pageRequest, queryValue, rejectRouteOwned, wellFormed } from './workflow-common.js';
import { AUTHOR_MODES, CHANGE_STATUSES } from '../../domain/workflow/rules.js';
import { REVIEW_ACTIONS, VERIFICATION_STATES } from '../../domain/workflow/review-rules.js';
import { arr, bool, constant, enumOf, extend, nullable as orNull, obj, PAGE_FIELDS, ref, str, uint } from '../json-schema.js';
export const CreateReview = looseObject({ patchset_id: string(), reviewer: string(), action: string(), comment: optional(string()), blocking: optional(boolean()) });
// `reviewer_groups` is an array of strings (shape, 422); that it holds exactly one non-empty group is a rule (400).
// `reviewers` (people) may stand beside or instead of `reviewer_groups`; a body with neither is 422 (a missing field).
export const RequestReview = looseObject({ patchset_id: string(), reviewer_groups: optional(array(string())), reviewers: optional(array(string())), note: optional(string()), review_id: optional(string()), requested_by: optional(nullable(string())) });
export const Attest = looseObject({
    author_mode: optional(string()),
    verification_state: optional(string()),
    revoked: optional(boolean()),
    require_tests_pass: optional(boolean()),
    require_human_review: optional(boolean()),
    require_lint_pass: optional(boolean()),
    detail: optional(record(string(), unknown())),
});
export const RunCi = looseObject({ trigger: optional(string()) });
/** `:evaluatePolicy` takes exactly `{}`: any field is one the typed request does not have (422). */
export const EvaluatePolicy = strictObject({});
export const list = async (ctx) => {
    const a = requireAuthority(ctx);
    const req = pageRequest(ctx, 'reviews', 'int', { change_id: a.workflow.change(ctx.params.change_ref).change_id });
    return { json: a.workflow.reviews.listReviews(ctx.params.change_ref, req) };
};
export const create = async (ctx) => {
    rejectRouteOwned(ctx.body);
    actAs(ctx, 'reviewer');
    const req = wellFormed(validate(ctx.body, CreateReview));
    const a = requireAuthority(ctx);
    const review = await a.workflow.reviews.createReview(ctx.params.change_ref, req);
    return { json: { review } };
};
export const requestReview = async (ctx) => {
    rejectRouteOwned(ctx.body);
    actAs(ctx, 'requested_by');
    const req = wellFormed(validate(ctx.body, RequestReview));
    if (req.reviewer_groups === undefined && req.reviewers === undefined)
        throw new Unprocessable('reviewer_groups or reviewers is required');
    for (const g of req.reviewer_groups ?? [])
        wellFormed({ reviewer_groups: g });
    for (const g of req.reviewers ?? [])
        wellFormed({ reviewers: g });
    const a = requireAuthority(ctx);
    const { review, reviews, change } = await a.workflow.reviews.requestReview(ctx.params.change_ref, req);
    return { json: { review_request: review, review_requests: reviews, review_id: review.review_id, reviewer_group: review.reviewer_group, change: a.workflow.changeProjection(change, a.index) } };
};
export const inbox = async (ctx) => {
    const a = requireAuthority(ctx);
    const group = queryValue(ctx, 'reviewer_group');
    const req = pageRequest(ctx, 'reviewer-inbox', 'tuple', { reviewer_group: group });
    // `groups` counts every row of the filter; `rows` is one page in inbox order (group, request time, change).
    const { page, groups } = a.workflow.reviews.inboxPage(group, req, a.index);
    return { json: { reviewer_group_filter: group ?? null, rows: page.rows, ...pageFields(page), groups } };
};
export const getAttestation = async (ctx) => {
    const a = requireAuthority(ctx);
    return { json: { attestation: a.workflow.reviews.attestationView(ctx.params.patchset_id) } };
};
export const putAttestation = async (ctx) => {
    rejectRouteOwned(ctx.body);
    const req = wellFormed(validate(ctx.body, Attest));
    const a = requireAuthority(ctx);
    await a.workflow.reviews.putAttestation(ctx.params.patchset_id, req);
    return { json: { attestation: a.workflow.reviews.attestationView(ctx.params.patchset_id) } };
};
export const getPolicy = async (ctx) => {
    const a = requireAuthority(ctx);
    return { json: { policy: a.workflow.reviews.policyView(ctx.params.patchset_id) } };
};
export const evaluatePolicy = async (ctx) => {
    rejectRouteOwned(ctx.body);
    validate(ctx.body, EvaluatePolicy);
    const a = requireAuthority(ctx);
    const decision = await a.workflow.reviews.evaluate(ctx.params.patchset_id);
    return { json: { policy: decision } };
};
export const runCi = async (ctx) => {
    rejectRouteOwned(ctx.body);
    const req = validate(ctx.body, RunCi);
    const a = requireAuthority(ctx);
    const trigger = req.trigger ?? 'manual_rerun';
    const { queued, job, delivery } = await a.workflow.reviews.runCi(ctx.params.patchset_id, trigger);
    return { json: { queued, job: job ? jobProjection(job) : null, delivery, trigger, ci: ciProjectionOf(a.workflow.reviews.ci(ctx.params.patchset_id)) } };
};
export const ciStatus = async (ctx) => {
    const a = requireAuthority(ctx);
    const limitText = queryValue(ctx, 'recent_limit');
    let limit = 10;
    if (limitText !== undefined) {
        if (!/^[1-9][0-9]{0,3}$/.test(limitText) || Number(limitText) > 1000)
            throw new Invalid('recent_limit must be an integer from 1 to 1000');
        limit = Number(limitText);
    }
    const projection = queryValue(ctx, 'projection');
    if (projection !== undefined && projection !== 'readiness')
        throw new Invalid('projection must be readiness');
    return { json: a.workflow.reviews.ciStatus(ctx.params.patchset_id, limit) };
};
const evidence = enumOf(['pass', 'fail', 'none']);
const overall = enumOf(['none', 'pending', 'pass', 'fail', 'error']);
const reviewCounts = { approvals: uint, blocking: uint, comments: uint, total: uint };
const review = obj({
    review_id: str,
    change_id: str,
    sequence: uint,
    patchset_id: str,
    patchset_fingerprint: orNull(str),
    reviewer: str,
    action: enumOf(REVIEW_ACTIONS),
    comment: str,
    blocking: bool,
    reviewer_group: { ...orNull(str), description: 'review requests only' },
    requested_by: orNull(str),
    created_at_s: uint,
});
const decisionFields = {
    decision_id: str,
    patchset_id: str,
    sequence: uint,
    chain_seq: uint,
    decision: enumOf(['pass', 'fail']),
    checks: arr(ref('PolicyCheck')),
    attestation_id: orNull(str),
    ci_run_sequence: uint,
    ci_worker_job_index: orNull(uint),
    evaluated_at_s: uint,
    trigger: { ...enumOf(['evaluate', 'land']), description: 'absent on decisions recorded before lands recorded theirs' },
    prev_sha256: { type: 'string', pattern: '^([0-9a-f]{64})?$', description: "the previous decision's sha256 ('' for the first)" },
    sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
};
/** An attestation as recorded (the read form adds what CI backs it). */
const attestationRecord = obj({
    attestation_id: str,
    patchset_id: str,
    sequence: uint,
    author_mode: enumOf(AUTHOR_MODES),
    verification_state: enumOf(VERIFICATION_STATES),
    revoked: bool,
    require_tests_pass: bool,
    require_human_review: bool,
    require_lint_pass: bool,
    detail: { type: 'object', description: "the caller's own fields, as sent" },
    created_at_s: uint,
});
export const SCHEMAS = {
    PatchsetCi: obj({
        ci_run_sequence: uint,
        overall,
        status: orNull(str),
        tests: evidence,
        lint: evidence,
        evidence_worker_job_index: orNull(uint),
        latest_worker_job_index: orNull(uint),
        active_worker_job_index: orNull(uint),
        completed_at_s: orNull(uint),
    }, { description: "compact CI of the patchset's current run, derived from its patchset.ci jobs" }),
    PatchsetReview: obj({ state: enumOf(['none', 'in_review', 'approved', 'blocked']), ...reviewCounts }),
    PatchsetPolicy: {
        anyOf: [
            obj({ decision: enumOf(['pass', 'fail']), decision_id: str, evaluated_at_s: uint, checks: arr(ref('PolicyCheck')) }),
            obj({ decision: constant('pending'), checks: { type: 'array', maxItems: 0 } }),
        ],
    },
    PolicyCheck: obj({ name: str, status: enumOf(['pass', 'fail', 'skipped']), explanation: str }),
    Review: review,
    ReviewResult: obj({ review: ref('Review') }),
    ReviewList: obj({
        change_id: str,
        change_ref: str,
        selected_patchset_id: orNull(str),
        reviews: {
            ...arr(extend(review, {
                live: bool,
                stale: bool,
                approval: { ...orNull(obj({ state: enumOf(['live', 'carried', 'dismissed']), reason: str })), description: "on each reviewer's latest approval: whether it counts on the selected patchset (live on it, carried from an earlier one) or was dismissed by a new patchset, and why (docs/api.md \"Repository rules\"); null on every other record" },
            })),
            description: 'oldest first',
        },
        ...reviewCounts,
        ...PAGE_FIELDS,
    }, { description: 'approvals, blocking, comments and total count the whole change; count the rows of this page' }),
    ReviewRequestResult: obj({
        review_request: { ...ref('Review'), description: 'the first record written: the group\'s when one is named' },
        review_requests: { ...arr(ref('Review')), description: 'one record per group and person named, in request order' },
        review_id: str,
        reviewer_group: { ...orNull(str), description: 'null when only people are named' },
        change: ref('Change'),
    }),
    ReviewerInbox: obj({
        reviewer_group_filter: orNull(str),
        rows: arr(obj({
            repository_index: uint,
            reviewer_group: str,
            change_id: str,
            change_ref: str,
            task_id: str,
            title: str,
            change_status: enumOf(CHANGE_STATUSES),
            review_id: str,
            requested_by: orNull(str),
            requested_at_s: uint,
            note: str,
            requested_patchset_id: str,
            selected_patchset_id: orNull(str),
            selected_patchset_number: orNull(uint),
            author_mode: orNull(enumOf(AUTHOR_MODES)),
            ci_in: bool,
            ci_overall: overall,
            policy_in: bool,
            policy_decision: enumOf(['pass', 'fail', 'pending']),
            approvals: uint,
            blocking: uint,
        })),
        ...PAGE_FIELDS,
        groups: { type: 'object', additionalProperties: uint, description: 'rows per group over the whole filter' },
    }),
    AttestationRecord: attestationRecord,
    Attestation: extend(attestationRecord, { ci_backed: bool, ci_run_sequence: uint, tests: evidence, lint: evidence }),
    AttestationResult: obj({ attestation: ref('Attestation') }),
    PolicyDecision: obj(decisionFields, { optional: ['trigger'] }),
    PolicyResult: obj({ policy: ref('PolicyDecision') }),
    PolicyRead: obj({
        policy: { anyOf: [ref('PolicyDecision'), obj({ patchset_id: str, decision: constant('pending'), checks: { type: 'array', maxItems: 0 } })] },
    }),
    PatchsetCiRun: obj({
        queued: bool,
        job: orNull(ref('WorkerJob')),
        delivery: enumOf(['worker_job', 'reused_evidence', 'active_run']),
        trigger: str,
        ci: ref('PatchsetCi'),
    }),
    CiStatus: obj({
        patchset_id: str,
        projection: constant('readiness'),
        availability: enumOf(['available', 'pending', 'failed', 'none']),
        ci_run_sequence: uint,
        completed_at_s: orNull(uint),
        status: orNull(str),
        overall,
        tests: evidence,
        lint: evidence,
        counts: obj({ suites: uint, passed: uint, failed: uint, blocking_failed: uint, jobs: uint, current_run_jobs: uint }),
        has_runnable_evidence: bool,
        selected_job: orNull(ref('WorkerJob')),
        latest_job: orNull(ref('WorkerJob')),
        recent_jobs: { ...arr(ref('WorkerJob')), description: 'newest first, at most recent_limit' },
        selected_suite_ids: { type: 'array', maxItems: 0, description: 'always empty here' },
        suite_results: { type: 'array', maxItems: 0, description: 'always empty here' },
    }),
};
export const InboxQuery = { reviewer_group: { schema: str, description: 'only requests naming this group' } };
export const CiStatusQuery = {
    recent_limit: { schema: { type: 'integer', minimum: 1, maximum: 1000, default: 10 }, description: 'how many recent jobs' },
    projection: { schema: constant('readiness') },
};
//# sourceMappingURL=reviews.js.map