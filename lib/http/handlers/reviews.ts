// Reviews, review requests, the reviewer inbox, attestations, policy and patchset CI (spec:
// "Review", "Attestation", "Policy decision", the review / attestation / policy / CI rows of
// "Changes, patchsets, reviews, policy, CI, Land"; README "Reviews, attestation, policy,
// patchset CI"). Schemas check shape (422); rules live in lib/domain/workflow/review-rules.ts
// and lib/authority/workflow/reviews.ts (400/404/409).
import { array, boolean, nullable, object as strictObject, optional, record, string, unknown, type as looseObject } from 'superstruct';
import { Invalid } from '../../domain/errors.js';
import { requireAuthority, type Handler } from '../route-types.js';
import { validate } from '../validate.js';
import { jobProjection } from '../../authority/jobs.js';
import { ciProjectionOf } from '../../authority/workflow/reviews.js';
import { takePage, walkFrom } from '../../domain/paging.js';
import { pageFields, pageRequest, queryValue, rejectRouteOwned, wellFormed } from './workflow-common.js';

const CreateReview = looseObject({ patchset_id: string(), reviewer: string(), action: string(), comment: optional(string()), blocking: optional(boolean()) });
// `reviewer_groups` is an array of strings (shape, 422); that it holds exactly one non-empty group is a rule (400).
const RequestReview = looseObject({ patchset_id: string(), reviewer_groups: array(string()), note: optional(string()), review_id: optional(string()), requested_by: optional(nullable(string())) });
const Attest = looseObject({
  author_mode: optional(string()),
  verification_state: optional(string()),
  revoked: optional(boolean()),
  require_tests_pass: optional(boolean()),
  require_human_review: optional(boolean()),
  require_lint_pass: optional(boolean()),
  detail: optional(record(string(), unknown())),
});
const RunCi = looseObject({ trigger: optional(string()) });
/** `:evaluatePolicy` takes exactly `{}`: any field is one the typed request does not have (422). */
const EvaluatePolicy = strictObject({});

export const list: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  return { json: a.workflow.reviews.listReviews(ctx.params.change_ref, pageRequest(ctx, 'reviews', 'int')) };
};

export const create: Handler = async (ctx) => {
  rejectRouteOwned(ctx.body);
  const req = wellFormed(validate(ctx.body, CreateReview));
  const a = requireAuthority(ctx);
  const review = await a.workflow.reviews.createReview(ctx.params.change_ref, req);
  return { json: { review } };
};

export const requestReview: Handler = async (ctx) => {
  rejectRouteOwned(ctx.body);
  const req = wellFormed(validate(ctx.body, RequestReview));
  for (const g of req.reviewer_groups) wellFormed({ reviewer_groups: g });
  const a = requireAuthority(ctx);
  const { review, change } = await a.workflow.reviews.requestReview(ctx.params.change_ref, req);
  return { json: { review_request: review, review_id: review.review_id, reviewer_group: review.reviewer_group, change: a.workflow.changeProjection(change, a.index) } };
};

export const inbox: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  const group = queryValue(ctx, 'reviewer_group');
  const req = pageRequest(ctx, 'reviewer-inbox', 'tuple');
  const rows = a.workflow.reviews.inbox(group, a.index);
  // `groups` counts every row of the filter; `rows` is one page in inbox order (group, request time, change).
  const groups: Record<string, number> = {};
  for (const r of rows) groups[r.reviewer_group as string] = (groups[r.reviewer_group as string] ?? 0) + 1;
  const key = (r: Record<string, unknown>) => [r.reviewer_group as string, r.requested_at_s as number, r.change_id as string];
  const page = takePage('reviewer-inbox', req, walkFrom(rows.length, (i) => rows[i], key, req.after, 'asc'), 'asc');
  return { json: { reviewer_group_filter: group ?? null, rows: page.rows, ...pageFields(page), groups } };
};

export const getAttestation: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  return { json: { attestation: a.workflow.reviews.attestationView(ctx.params.patchset_id) } };
};

export const putAttestation: Handler = async (ctx) => {
  rejectRouteOwned(ctx.body);
  const req = wellFormed(validate(ctx.body, Attest));
  const a = requireAuthority(ctx);
  await a.workflow.reviews.putAttestation(ctx.params.patchset_id, req);
  return { json: { attestation: a.workflow.reviews.attestationView(ctx.params.patchset_id) } };
};

export const getPolicy: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  return { json: { policy: a.workflow.reviews.policyView(ctx.params.patchset_id) } };
};

export const evaluatePolicy: Handler = async (ctx) => {
  rejectRouteOwned(ctx.body);
  validate(ctx.body, EvaluatePolicy);
  const a = requireAuthority(ctx);
  const decision = await a.workflow.reviews.evaluate(ctx.params.patchset_id);
  return { json: { policy: decision } };
};

export const runCi: Handler = async (ctx) => {
  rejectRouteOwned(ctx.body);
  const req = validate(ctx.body, RunCi);
  const a = requireAuthority(ctx);
  const trigger = req.trigger ?? 'manual_rerun';
  const { queued, job, delivery } = await a.workflow.reviews.runCi(ctx.params.patchset_id, trigger);
  return { json: { queued, job: job ? jobProjection(job) : null, delivery, trigger, ci: ciProjectionOf(a.workflow.reviews.ci(ctx.params.patchset_id)) } };
};

export const ciStatus: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  const limitText = queryValue(ctx, 'recent_limit');
  let limit = 10;
  if (limitText !== undefined) {
    if (!/^[1-9][0-9]{0,3}$/.test(limitText) || Number(limitText) > 1000) throw new Invalid('recent_limit must be an integer from 1 to 1000');
    limit = Number(limitText);
  }
  const projection = queryValue(ctx, 'projection');
  if (projection !== undefined && projection !== 'readiness') throw new Invalid('projection must be readiness');
  return { json: a.workflow.reviews.ciStatus(ctx.params.patchset_id, limit) };
};
