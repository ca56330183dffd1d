// Lands (spec: "Land", the `:submit`, lands and task-land rows, "Atomic task land body"; docs/api.md
// "Lands"). A refused land is recorded and answered 409 with `error`, `failure_kind` and the land
// projection; a successful one 200.
import { boolean, nullable, optional, string, type as looseObject } from 'superstruct';
import { Invalid } from '../../domain/errors.js';
import { FAILURE_KINDS, LAND_MODES, LAND_STATUSES, LINE_ACTIONS, MAX_LAND_ATTEMPTS, TASK_LAND_CONTRACT, taskLand } from '../../authority/workflow/lands.js';
import { TASK_START_CONTRACT, taskStart } from '../../authority/workflow/task-start.js';
import { CONFLICT_KINDS } from '../../domain/workflow/merge.js';
import { PAGE_FIELDS, arr, bool, byField, constant, enumOf, hex64, nullable as orNull, obj, ref, str, strArr, uint } from '../json-schema.js';
import { requireAuthority } from '../route-types.js';
import { validate } from '../validate.js';
import { identityOf, pageFields, pageRequest, rejectRouteOwned, wellFormed } from './workflow-common.js';
import { CreatePayload, RevisePayload, revisionPayload } from './plans.js';
import { requireWellFormed } from '../../domain/text.js';
const LandFields = {
    mode: string(),
    target_line: optional(nullable(string())),
    patchset_id: optional(nullable(string())),
    expected_head_snapshot_id: optional(nullable(string())),
    expected_target_line_head: optional(nullable(string())),
    /** Land despite failing gates: only a caller in the repository's bypass_allowed (else 403). */
    bypass: optional(nullable(boolean())),
};
export const Submit = looseObject(LandFields);
const planFields = { action: string(), plan_id: optional(string()), plan_revision_id: optional(string()), expected_head_revision_id: optional(nullable(string())) };
const StartPlan = {
    existing: looseObject({ ...planFields, plan_id: string(), plan_revision_id: string() }),
    create: looseObject({ ...planFields, payload: CreatePayload }),
    revise: looseObject({ ...planFields, plan_id: string(), payload: RevisePayload }),
    other: looseObject(planFields),
};
export const TaskStart = looseObject({
    contract: string(),
    idempotency_key: string(),
    plan_item_ref: string(),
    plan: byField('action', { existing: StartPlan.existing, create: StartPlan.create, revise: StartPlan.revise }, StartPlan.other),
    task: looseObject({ title: string(), intent: string() }),
    change: looseObject({ title: string(), base_line: string() }),
});
export const TaskLand = looseObject({ ...LandFields, contract: string(), idempotency_key: string(), task_or_change_ref: string() });
/** Either guard name; both given (not null: null reads as absent) must agree. */
function landRequest(req) {
    const { expected_target_line_head: alias, ...rest } = req;
    if (alias !== undefined && alias !== null) {
        if (rest.expected_head_snapshot_id !== undefined && rest.expected_head_snapshot_id !== null && rest.expected_head_snapshot_id !== alias)
            throw new Invalid('expected_head_snapshot_id and expected_target_line_head disagree');
        return { ...rest, expected_head_snapshot_id: alias };
    }
    return rest;
}
function refused(ctx, land) {
    const a = requireAuthority(ctx);
    return { status: 409, json: { error: `land ${land.land_id} ${land.status}: ${land.failure_kind}: ${land.failure_message}`, failure_kind: land.failure_kind, land: a.lands.landProjection(land, a.index) } };
}
export const submit = async (ctx) => {
    rejectRouteOwned(ctx.body);
    const req = landRequest(wellFormed(validate(ctx.body, Submit)));
    const a = requireAuthority(ctx);
    // Who asked: the caller the ingress names, never the body (docs/api.md "Lands").
    const { land } = await a.lands.submit(ctx.params.change_ref, req, undefined, identityOf(ctx));
    if (land.status !== 'landed')
        return refused(ctx, land);
    await auditBypass(ctx, land, a.index);
    return {
        json: {
            land: a.lands.landProjection(land, a.index),
            change: a.workflow.changeProjection(a.workflow.change(land.change_id), a.index),
            landed_snapshot_id: land.landed_snapshot_id,
        },
    };
};
export const get = async (ctx) => {
    const a = requireAuthority(ctx);
    return { json: { land: a.lands.landProjection(a.lands.land(ctx.params.submission_id), a.index) } };
};
export const taskLandHandler = async (ctx) => {
    rejectRouteOwned(ctx.body);
    const req = landRequest(wellFormed(validate(ctx.body, TaskLand)));
    const a = requireAuthority(ctx);
    const { result, land, refused: no } = await taskLand(a.lands, a.workflow, req, a.index, identityOf(ctx));
    if (no)
        return refused(ctx, land);
    await auditBypass(ctx, land, a.index);
    return { json: result };
};
/** A land made over failing rules is an admin action: it goes to the audit feed too (docs/api.md "The audit feed"). */
async function auditBypass(ctx, land, index) {
    if (!land.bypassed_by && !land.bypassed?.length)
        return;
    await ctx.access?.book.audit(identityOf(ctx), 'land.bypassed', { repository_index: index, land_id: land.land_id ?? null, kinds: (land.bypassed ?? []).map((b) => b.kind) });
}
export const taskStartHandler = async (ctx) => {
    rejectRouteOwned(ctx.body);
    const req = wellFormed(validate(ctx.body, TaskStart));
    // The nested texts and the plan payload get the same checks as their own routes give them.
    requireWellFormed(req.task.title, 'task.title');
    requireWellFormed(req.task.intent, 'task.intent');
    requireWellFormed(req.change.title, 'change.title');
    if (req.plan.action === 'create' || req.plan.action === 'revise')
        req.plan.payload = revisionPayload(req.plan.payload);
    const a = requireAuthority(ctx);
    return { json: await taskStart(a.store, a.plans, a.workflow, a.lands, req, a.index, identityOf(ctx)) };
};
const landResult = {
    anyOf: [
        obj({ outcome: constant('landed'), line_action: enumOf(LINE_ACTIONS), target_head_before: orNull(hex64), landed_snapshot_id: hex64, stale_patchset_count: uint }),
        obj({ outcome: enumOf(LAND_STATUSES.filter((s) => s !== 'landed')), failure_kind: enumOf(FAILURE_KINDS), failure_message: str, conflicts_count: uint }),
    ],
    description: 'what the land did, derived from the record',
};
/** A change's lands, newest first (extension: the change page's land history). */
export const changeLands = async (ctx) => {
    const a = requireAuthority(ctx);
    const req = pageRequest(ctx, 'change-lands', 'int', { change_id: a.workflow.change(ctx.params.change_ref).change_id });
    const { change, page } = a.lands.landsOf(ctx.params.change_ref, req);
    return { json: { change_id: change.change_id, change_ref: change.change_ref, lands: page.rows.map((l) => a.lands.landProjection(l, a.index)), ...pageFields(page) } };
};
export const SCHEMAS = {
    Land: obj({
        land_id: str,
        submission_id: { ...str, description: '= land_id' },
        sequence: uint,
        repository_index: uint,
        change_id: str,
        change_ref: str,
        task_id: str,
        patchset_id: orNull(str),
        selected_patchset_id: { ...orNull(str), description: '= patchset_id' },
        target_line: str,
        mode: enumOf(LAND_MODES),
        status: enumOf(LAND_STATUSES),
        failure_kind: orNull(enumOf(FAILURE_KINDS)),
        failure_message: orNull(str),
        conflicts: { ...arr(obj({ path: str, kind: enumOf(CONFLICT_KINDS) })), description: 'sorted, at most 1,000 listed' },
        conflicts_count: uint,
        expected_head_snapshot_id: orNull(hex64),
        target_head_before: orNull(hex64),
        landed_snapshot_id: orNull(hex64),
        line_action: orNull(enumOf(LINE_ACTIONS)),
        policy_decision_id: { ...orNull(str), description: "the decision recorded by the land's own judgement; null when it stopped before the gates" },
        land_queue_entry_id: { ...orNull(str), description: 'the land-queue entry that landed it; null for a direct land' },
        stale_patchset_ids: strArr,
        attempts: { ...uint, minimum: 1, maximum: MAX_LAND_ATTEMPTS, description: 'how many times the land planned: more than 1 when the line moved under an unpinned land and it planned again onto the new head' },
        landed_by: { ...orNull(str), description: 'who asked for the land: the caller the trusted ingress named (docs/api.md "People"), or for a land from the queue the entry\'s enqueued_by; null when the request named no one (and on lands recorded before it was kept)' },
        bypassed_by: { ...orNull(str), description: 'who landed it with "bypass": true over failing gates (docs/api.md "Repository rules"); null when nothing was bypassed' },
        bypassed: { ...arr(obj({ kind: str, message: str })), description: 'the gate refusals the bypass overrode, in gate order; empty when nothing was bypassed' },
        created_at_s: uint,
        finished_at_s: uint,
        result: landResult,
    }),
    LandRead: obj({ land: ref('Land') }),
    LandList: obj({ change_id: str, change_ref: str, lands: { ...arr(ref('Land')), description: 'newest first' }, ...PAGE_FIELDS }),
    LandSubmit: obj({ land: ref('Land'), change: ref('Change'), landed_snapshot_id: hex64 }),
    LandRefused: obj({ error: str, failure_kind: enumOf(FAILURE_KINDS), land: ref('Land') }, { description: 'a land refused by its gates or guards: recorded, answered 409' }),
    TaskLandResult: obj({
        contract: constant(TASK_LAND_CONTRACT),
        replay: bool,
        task_id: str,
        change_id: str,
        change_ref: str,
        patchset_id: str,
        target_line: str,
        target_snapshot_id: { ...orNull(hex64), description: 'the head landed onto' },
        landed_snapshot_id: hex64,
        task: ref('Task'),
        change: ref('Change'),
        patchset: ref('Patchset'),
        land: ref('Land'),
        history_promotion: { ...orNull(ref('PromotionReceipt')), description: 'the receipt of the promotion that published the landed change, or null' },
    }, { description: 'a replay returns the recorded result (replay: true), projections as recorded' }),
    TaskStartResult: obj({
        contract: constant(TASK_START_CONTRACT),
        replay: bool,
        plan_action: enumOf(['existing', 'create', 'revise', 'revise (existing revision)']),
        plan_id: str,
        plan_revision_id: str,
        plan_item_ref: str,
        task_id: str,
        change_id: str,
        change_ref: str,
        plan: ref('Plan'),
        revision: ref('Revision'),
        task: ref('Task'),
        change: ref('Change'),
    }, { description: 'a replay returns the recorded result (replay: true)' }),
};
//# sourceMappingURL=lands.js.map