// Plans (spec: "Plans (sprints)", "Plan and revision", "Task linkage rules").
import { takePage, walkFrom } from '../../domain/paging.js';
import { pageFields, pageRequest } from './workflow-common.js';
import { array, integer, nullable, optional, string, type as looseObject, type Struct } from 'superstruct';
import { planProjection, revisionProjection, type RevisionPayload } from '../../authority/plans.js';
import { Conflict, Invalid } from '../../domain/errors.js';
import { normalizeTerms } from '../../domain/plans.js';
import { requireWellFormed } from '../../domain/text.js';
import { requireAuthority, type Handler } from '../route-types.js';
import { validate } from '../validate.js';

const Item = looseObject({
  plan_item_ref: optional(nullable(string())),
  // Every item field is optional (spec: an item "may" carry each); a missing text projects as "".
  text: optional(nullable(string())),
  checkbox_state: optional(string()),
  heading_path: optional(array(string())),
});
const Descriptor = looseObject({
  blob_id: string(),
  pack_id: optional(string()),
  size: optional(integer()),
  sha256: optional(string()),
  media_type: optional(string()),
});
const payloadFields = {
  title: optional(string()),
  status: optional(string()),
  summary: optional(nullable(string())),
  artifact_path: string(),
  artifact_selector: optional(nullable(string())),
  artifact_heading: string(),
  items: optional(nullable(array(Item))),
  artifact_body: optional(string()),
  packed_artifact: optional(nullable(Descriptor)),
};
/** A plan create payload (POST sprints, task-start's `plan.payload` for `create`): `title` is required. */
export const CreatePayload = looseObject({ ...payloadFields, title: string() });
/** A revise payload (POST sprints/{id}/revisions, task-start's `plan.payload` for `revise`). */
export const RevisePayload = looseObject({ ...payloadFields, expected_head_revision_id: optional(nullable(string())) });

function payload(body: unknown, struct: Struct<any, any>): RevisionPayload {
  return revisionPayload(validate(body, struct));
}

/** The rules on a payload that passed its schema (400), and its nulls as absent fields. */
export function revisionPayload(checked: unknown): RevisionPayload {
  const p = checked as RevisionPayload & { items?: RevisionPayload['items'] | null; packed_artifact?: RevisionPayload['packed_artifact'] | null };
  // Text is stored as UTF-8: a lone surrogate cannot be, so it is refused rather than replaced.
  for (const [name, value] of Object.entries(p)) {
    if (typeof value === 'string') requireWellFormed(value, name);
  }
  for (const item of p.items ?? []) {
    if (typeof item.text === 'string') requireWellFormed(item.text, 'items[].text');
    for (const h of item.heading_path ?? []) requireWellFormed(h, 'items[].heading_path');
  }
  return { ...p, items: p.items ?? undefined, packed_artifact: p.packed_artifact ?? undefined };
}

async function planWithHead(book: ReturnType<typeof requireAuthority>['plans'], planId: string) {
  const plan = book.plan(planId);
  return { plan: planProjection(plan), head_revision: revisionProjection(book.head(plan)) };
}

export const list: Handler = async (ctx) => {
  const filter = ctx.koa.query.artifact_path;
  if (Array.isArray(filter)) throw new Invalid('artifact_path may be given once');
  const req = pageRequest(ctx, 'plans', 'int');
  const book = requireAuthority(ctx).plans;
  const all = book.list(filter);
  const page = takePage('plans', req, walkFrom(all.length, (i) => all[i], (p) => planSequence(p.plan_id), req.after, 'asc'), 'asc');
  return { json: { plans: page.rows.map((p) => ({ ...planProjection(p), artifact_path: book.head(p).artifact_path })), ...pageFields(page) } };
};

export const create: Handler = async (ctx) => {
  if (ctx.body && typeof ctx.body === 'object' && 'plan_id' in (ctx.body as object)) throw new Invalid('plan_id is assigned by the server; do not send it');
  const p = payload(ctx.body, CreatePayload);
  const { plan, revision } = await requireAuthority(ctx).plans.create(p);
  // 200: the spec keeps 201 for new repository authorities and restore sessions.
  return { json: { plan: planProjection(plan), revision: revisionProjection(revision) } };
};

export const get: Handler = async (ctx) => ({ json: await planWithHead(requireAuthority(ctx).plans, ctx.params.plan_id) });

export const patch: Handler = async (ctx) => {
  const req = validate(ctx.body, looseObject({ status: string() }));
  const plan = await requireAuthority(ctx).plans.setStatus(ctx.params.plan_id, req.status);
  return { json: { plan: planProjection(plan) } };
};

export const listRevisions: Handler = async (ctx) => {
  const req = pageRequest(ctx, 'revisions', 'int');
  const newestFirst = requireAuthority(ctx).plans.revisionsOf(ctx.params.plan_id);
  // walkFrom takes ascending keys: index from the oldest end.
  const n = newestFirst.length;
  const page = takePage('revisions', req, walkFrom(n, (i) => newestFirst[n - 1 - i], (r) => r.revision_number, req.after, 'desc'), 'desc');
  return { json: { plan_id: ctx.params.plan_id, revisions: page.rows.map(revisionProjection), ...pageFields(page) } };
};

export const revise: Handler = async (ctx) => {
  if (ctx.body && typeof ctx.body === 'object' && 'plan_id' in (ctx.body as object)) throw new Invalid('plan_id comes from the path; do not send it');
  const p = payload(ctx.body, RevisePayload);
  const { plan, revision, replayed } = await requireAuthority(ctx).plans.revise(ctx.params.plan_id, p);
  return { json: { plan: planProjection(plan), revision: revisionProjection(revision), replayed } };
};

export const getRevision: Handler = async (ctx) => ({
  json: { revision: revisionProjection(requireAuthority(ctx).plans.revision(ctx.params.plan_id, ctx.params.plan_revision_id)) },
});

export const getArtifacts: Handler = async (ctx) => {
  const book = requireAuthority(ctx).plans;
  const rev = book.revision(ctx.params.plan_id, ctx.params.plan_revision_id);
  const body = await book.artifactBody(rev);
  return {
    json: {
      revision: revisionProjection(rev),
      packed_artifact: { ...rev.packed_artifact, artifact_path: rev.artifact_path, encoding: 'utf-8', body },
    },
  };
};

export const putArtifacts: Handler = async (ctx) => {
  requireAuthority(ctx).plans.revision(ctx.params.plan_id, ctx.params.plan_revision_id);
  throw new Conflict('revision artifacts are immutable: send artifact bodies with plan create or revise');
};

export const byContains: Handler = async (ctx) => {
  const req = validate(ctx.body, looseObject({ contains_terms: array(string()) }));
  const planIds = requireAuthority(ctx).plans.byContains(req.contains_terms);
  return { json: { plan_ids: planIds, normalized_terms: normalizeTerms(req.contains_terms) } };
};

export const resolveLinkage: Handler = async (ctx) => {
  const req = validate(ctx.body, looseObject({
    plan_id: optional(nullable(string())),
    origin_plan_revision_id: optional(nullable(string())),
    plan_item_ref: optional(nullable(string())),
  }));
  return { json: requireAuthority(ctx).plans.resolveLinkage(req) };
};

export const candidateInputs: Handler = async (ctx) => {
  const raw = ctx.koa.query.contains;
  if (Array.isArray(raw)) throw new Invalid('contains may be given once');
  const terms = normalizeTerms((raw ?? '').split(','));
  const a = requireAuthority(ctx);
  const book = a.plans;
  const plans = terms.length === 0 ? [] : book.openMatching(terms).map((p) => {
    const head = book.head(p);
    return {
      plan: planProjection(p),
      head_revision_id: head.plan_revision_id,
      items: head.items,
      // Tasks linked to this Plan (any revision), oldest first.
      task_candidates: a.workflow.tasksLinkedTo(p.plan_id).map((t) => ({
        task_id: t.task_id,
        title: t.title,
        status: t.status,
        origin_plan_revision_id: t.origin_plan_revision_id,
        plan_item_ref: t.plan_item_ref,
        item_in_head: t.plan_item_ref === null ? null : head.items.some((i) => i.plan_item_ref === t.plan_item_ref),
      })),
    };
  });
  return { json: { normalized_terms: terms, plans, count: plans.length } };
};


/** A plan's creation sequence (`plan-<n>`), its position in the plan list. */
function planSequence(planId: string): number {
  return Number(planId.slice(planId.lastIndexOf('-') + 1));
}
