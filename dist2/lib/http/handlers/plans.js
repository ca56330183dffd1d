// Plans (spec: "Plans (sprints)", "Plan and revision", "Task linkage rules").
import { takePage, walkFrom } from '../../domain/paging.js';
import { pageFields, pageRequest } from './workflow-common.js';
import { array, integer, nullable, optional, string, type as looseObject } from 'superstruct';
import { planProjection, revisionProjection } from '../../authority/plans.js';
import { Conflict, Invalid } from '../../domain/errors.js';
import { normalizeTerms, PLAN_STATUSES } from '../../domain/plans.js';
import { TASK_STATUSES } from '../../domain/workflow/rules.js';
import { requireWellFormed } from '../../domain/text.js';
import { requireAuthority } from '../route-types.js';
import { validate } from '../validate.js';
import { arr, bool, constant, enumOf, extend, hex64, nullable as orNull, obj, PAGE_FIELDS, ref, str, strArr, uint } from '../json-schema.js';
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
export const PatchPlan = looseObject({ status: string() });
export const ByContains = looseObject({ contains_terms: array(string()) });
export const ResolveLinkage = looseObject({
    plan_id: optional(nullable(string())),
    origin_plan_revision_id: optional(nullable(string())),
    plan_item_ref: optional(nullable(string())),
});
function payload(body, struct) {
    return revisionPayload(validate(body, struct));
}
/** The rules on a payload that passed its schema (400), and its nulls as absent fields. */
export function revisionPayload(checked) {
    const p = checked;
    // Text is stored as UTF-8: a lone surrogate cannot be, so it is refused rather than replaced.
    for (const [name, value] of Object.entries(p)) {
        if (typeof value === 'string')
            requireWellFormed(value, name);
    }
    for (const item of p.items ?? []) {
        if (typeof item.text === 'string')
            requireWellFormed(item.text, 'items[].text');
        for (const h of item.heading_path ?? [])
            requireWellFormed(h, 'items[].heading_path');
    }
    return { ...p, items: p.items ?? undefined, packed_artifact: p.packed_artifact ?? undefined };
}
async function planWithHead(book, planId) {
    const plan = book.plan(planId);
    return { plan: planProjection(plan), head_revision: revisionProjection(book.head(plan)) };
}
export const list = async (ctx) => {
    const filter = ctx.koa.query.artifact_path;
    if (Array.isArray(filter))
        throw new Invalid('artifact_path may be given once');
    const req = pageRequest(ctx, 'plans', 'int', { artifact_path: filter });
    const book = requireAuthority(ctx).plans;
    const all = book.list(filter);
    const page = takePage(req, walkFrom(all.length, (i) => all[i], (p) => planSequence(p.plan_id), req.after, 'asc'), 'asc');
    return { json: { plans: page.rows.map((p) => ({ ...planProjection(p), artifact_path: book.head(p).artifact_path })), ...pageFields(page) } };
};
export const create = async (ctx) => {
    if (ctx.body && typeof ctx.body === 'object' && 'plan_id' in ctx.body)
        throw new Invalid('plan_id is assigned by the server; do not send it');
    const p = payload(ctx.body, CreatePayload);
    const { plan, revision } = await requireAuthority(ctx).plans.create(p);
    // 200: the spec keeps 201 for new repository authorities and restore sessions.
    return { json: { plan: planProjection(plan), revision: revisionProjection(revision) } };
};
export const get = async (ctx) => ({ json: await planWithHead(requireAuthority(ctx).plans, ctx.params.plan_id) });
export const patch = async (ctx) => {
    const req = validate(ctx.body, PatchPlan);
    const plan = await requireAuthority(ctx).plans.setStatus(ctx.params.plan_id, req.status);
    return { json: { plan: planProjection(plan) } };
};
export const listRevisions = async (ctx) => {
    const req = pageRequest(ctx, 'revisions', 'int', { plan_id: ctx.params.plan_id });
    const newestFirst = requireAuthority(ctx).plans.revisionsOf(ctx.params.plan_id);
    // walkFrom takes ascending keys: index from the oldest end.
    const n = newestFirst.length;
    const page = takePage(req, walkFrom(n, (i) => newestFirst[n - 1 - i], (r) => r.revision_number, req.after, 'desc'), 'desc');
    return { json: { plan_id: ctx.params.plan_id, revisions: page.rows.map(revisionProjection), ...pageFields(page) } };
};
export const revise = async (ctx) => {
    if (ctx.body && typeof ctx.body === 'object' && 'plan_id' in ctx.body)
        throw new Invalid('plan_id comes from the path; do not send it');
    const p = payload(ctx.body, RevisePayload);
    const { plan, revision, replayed } = await requireAuthority(ctx).plans.revise(ctx.params.plan_id, p);
    return { json: { plan: planProjection(plan), revision: revisionProjection(revision), replayed } };
};
export const getRevision = async (ctx) => ({
    json: { revision: revisionProjection(requireAuthority(ctx).plans.revision(ctx.params.plan_id, ctx.params.plan_revision_id)) },
});
export const getArtifacts = async (ctx) => {
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
export const putArtifacts = async (ctx) => {
    requireAuthority(ctx).plans.revision(ctx.params.plan_id, ctx.params.plan_revision_id);
    throw new Conflict('revision artifacts are immutable: send artifact bodies with plan create or revise');
};
export const byContains = async (ctx) => {
    const req = validate(ctx.body, ByContains);
    const planIds = requireAuthority(ctx).plans.byContains(req.contains_terms);
    return { json: { plan_ids: planIds, normalized_terms: normalizeTerms(req.contains_terms) } };
};
export const resolveLinkage = async (ctx) => {
    const req = validate(ctx.body, ResolveLinkage);
    return { json: requireAuthority(ctx).plans.resolveLinkage(req) };
};
export const candidateInputs = async (ctx) => {
    const raw = ctx.koa.query.contains;
    if (Array.isArray(raw))
        throw new Invalid('contains may be given once');
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
function planSequence(planId) {
    return Number(planId.slice(planId.lastIndexOf('-') + 1));
}
const plan = obj({
    plan_id: str,
    title: str,
    status: enumOf(PLAN_STATUSES),
    open: { ...bool, description: 'status is draft' },
    head_revision_id: str,
    revision_count: uint,
    created_at_s: uint,
    updated_at_s: uint,
});
const packedArtifact = obj({ blob_id: hex64, pack_id: hex64, size: uint, sha256: hex64, media_type: str });
const linkage = obj({ plan_id: orNull(str), origin_plan_revision_id: orNull(str), plan_item_ref: orNull(str) });
export const SCHEMAS = {
    Plan: plan,
    PlanItem: obj({ plan_item_ref: orNull(str), text: str, checkbox_state: enumOf(['checked', 'unchecked']), heading_path: strArr }),
    Revision: obj({
        plan_revision_id: str,
        plan_id: str,
        parent_revision_id: orNull(str),
        revision_number: uint,
        title: str,
        summary: orNull(str),
        artifact_path: str,
        artifact_selector: orNull(str),
        artifact_heading: str,
        items: arr(ref('PlanItem')),
        packed_artifact: packedArtifact,
        created_at_s: uint,
    }),
    PlanList: obj({ plans: { ...arr(extend(plan, { artifact_path: str })), description: 'creation order' }, ...PAGE_FIELDS }),
    PlanCreate: obj({ plan: ref('Plan'), revision: ref('Revision') }),
    PlanRevise: obj({ plan: ref('Plan'), revision: ref('Revision'), replayed: bool }),
    PlanRead: obj({ plan: ref('Plan'), head_revision: ref('Revision') }),
    PlanPatch: obj({ plan: ref('Plan') }),
    RevisionList: obj({ plan_id: str, revisions: { ...arr(ref('Revision')), description: 'newest first' }, ...PAGE_FIELDS }),
    RevisionRead: obj({ revision: ref('Revision') }),
    RevisionArtifacts: obj({
        revision: ref('Revision'),
        packed_artifact: extend(packedArtifact, { artifact_path: str, encoding: constant('utf-8'), body: { ...str, description: 'the Markdown artifact' } }),
    }),
    PlanIds: obj({ plan_ids: strArr, normalized_terms: strArr }),
    PlanLinkage: { ...linkage, description: 'all null when neither plan nor revision is given' },
    CandidateInputs: obj({
        normalized_terms: strArr,
        plans: arr(obj({
            plan: ref('Plan'),
            head_revision_id: str,
            items: arr(ref('PlanItem')),
            task_candidates: {
                ...arr(obj({ task_id: str, title: str, status: enumOf(TASK_STATUSES), origin_plan_revision_id: orNull(str), plan_item_ref: orNull(str), item_in_head: orNull(bool) })),
                description: 'tasks linked to the plan (any revision), oldest first',
            },
        })),
        count: uint,
    }),
};
export const ListQuery = { artifact_path: { schema: str, description: 'only plans whose head revision has this exact artifact path' } };
export const CandidateQuery = { contains: { schema: str, description: 'comma-separated terms (normalized); no term matches no plan' } };
//# sourceMappingURL=plans.js.map