// Lands (spec: "Land", the `:submit`, lands and task-land rows, "Atomic task land body"; README
// "Lands"). A refused land is recorded and answered 409 with `error`, `failure_kind` and the land
// projection; a successful one 200.
import { dynamic, nullable, optional, string, type as looseObject, type Struct } from 'superstruct';
import { Invalid } from '../../domain/errors.js';
import { taskLand, type LandRecord, type LandRequest } from '../../authority/workflow/lands.js';
import { taskStart, type TaskStartBody } from '../../authority/workflow/task-start.js';
import { requireAuthority, type Handler, type RouteContext } from '../route-types.js';
import { validate } from '../validate.js';
import { rejectRouteOwned, wellFormed } from './workflow-common.js';
import { CreatePayload, RevisePayload, revisionPayload } from './plans.js';
import { requireWellFormed } from '../../domain/text.js';

const LandFields = {
  mode: string(),
  target_line: optional(nullable(string())),
  patchset_id: optional(nullable(string())),
  expected_head_snapshot_id: optional(nullable(string())),
  expected_target_line_head: optional(nullable(string())),
};
const Submit = looseObject(LandFields);
/**
 * task-start's `plan`: which fields are required depends on `action` (a field the action needs
 * and the body lacks is missing, 422); an unknown action is a rule (400, in task-start.ts).
 */
type StartPlanBody = { action: string; plan_id?: string; plan_revision_id?: string; expected_head_revision_id?: string | null; payload?: unknown };
const planFields = { action: string(), plan_id: optional(string()), plan_revision_id: optional(string()), expected_head_revision_id: optional(nullable(string())) };
const StartPlan = {
  existing: looseObject({ ...planFields, plan_id: string(), plan_revision_id: string() }),
  create: looseObject({ ...planFields, payload: CreatePayload }),
  revise: looseObject({ ...planFields, plan_id: string(), payload: RevisePayload }),
  other: looseObject(planFields),
};
const TaskStart = looseObject({
  contract: string(),
  idempotency_key: string(),
  plan_item_ref: string(),
  plan: dynamic<StartPlanBody>((plan) => {
    const action = (plan as { action?: unknown } | null)?.action;
    return (action === 'existing' || action === 'create' || action === 'revise' ? StartPlan[action] : StartPlan.other) as Struct<StartPlanBody, any>;
  }),
  task: looseObject({ title: string(), intent: string() }),
  change: looseObject({ title: string(), base_line: string() }),
});
const TaskLand = looseObject({ ...LandFields, contract: string(), idempotency_key: string(), task_or_change_ref: string() });

/** Either guard name; both given (not null: null reads as absent) must agree. */
function landRequest<T extends { expected_head_snapshot_id?: string | null; expected_target_line_head?: string | null }>(req: T): Omit<T, 'expected_target_line_head'> & LandRequest {
  const { expected_target_line_head: alias, ...rest } = req;
  if (alias !== undefined && alias !== null) {
    if (rest.expected_head_snapshot_id !== undefined && rest.expected_head_snapshot_id !== null && rest.expected_head_snapshot_id !== alias) throw new Invalid('expected_head_snapshot_id and expected_target_line_head disagree');
    return { ...rest, expected_head_snapshot_id: alias } as Omit<T, 'expected_target_line_head'> & LandRequest;
  }
  return rest as Omit<T, 'expected_target_line_head'> & LandRequest;
}

function refused(ctx: RouteContext, land: LandRecord) {
  const a = requireAuthority(ctx);
  return { status: 409, json: { error: `land ${land.land_id} ${land.status}: ${land.failure_kind}: ${land.failure_message}`, failure_kind: land.failure_kind, land: a.lands.landProjection(land, a.index) } };
}

export const submit: Handler = async (ctx) => {
  rejectRouteOwned(ctx.body);
  const req = landRequest(wellFormed(validate(ctx.body, Submit)));
  const a = requireAuthority(ctx);
  const { land } = await a.lands.submit(ctx.params.change_ref, req);
  if (land.status !== 'landed') return refused(ctx, land);
  return {
    json: {
      land: a.lands.landProjection(land, a.index),
      change: a.workflow.changeProjection(a.workflow.change(land.change_id), a.index),
      landed_snapshot_id: land.landed_snapshot_id,
    },
  };
};

export const get: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  return { json: { land: a.lands.landProjection(a.lands.land(ctx.params.submission_id), a.index) } };
};

export const taskLandHandler: Handler = async (ctx) => {
  rejectRouteOwned(ctx.body);
  const req = landRequest(wellFormed(validate(ctx.body, TaskLand)));
  const a = requireAuthority(ctx);
  const { result, land, refused: no } = await taskLand(a.lands, a.workflow, req, a.index);
  if (no) return refused(ctx, land);
  return { json: result };
};

export const taskStartHandler: Handler = async (ctx) => {
  rejectRouteOwned(ctx.body);
  const req = wellFormed(validate(ctx.body, TaskStart)) as unknown as TaskStartBody;
  // The nested texts and the plan payload get the same checks as their own routes give them.
  requireWellFormed(req.task.title, 'task.title');
  requireWellFormed(req.task.intent, 'task.intent');
  requireWellFormed(req.change.title, 'change.title');
  if (req.plan.action === 'create' || req.plan.action === 'revise') req.plan.payload = revisionPayload(req.plan.payload);
  const a = requireAuthority(ctx);
  return { json: await taskStart(a.store, a.plans, a.workflow, a.lands, req, a.index) };
};
