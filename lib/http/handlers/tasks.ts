// Tasks and the task read models (spec: "Task", "Tasks and read models", "Task linkage rules";
// README "Tasks, changes, patchsets"). Schemas check shape (422); rules live in
// lib/domain/workflow and lib/authority/workflow (400/404/409).
import { nullable, optional, string, type as looseObject } from 'superstruct';
import { requireTaskStatus, type TaskStatus } from '../../domain/workflow/rules.js';
import { requireAuthority, type Handler, type RouteContext } from '../route-types.js';
import { validate } from '../validate.js';
import { pageFields, pageRequest, queryValue, rejectRouteOwned, wellFormed } from './workflow-common.js';

const CreateTask = looseObject({
  title: string(),
  intent: string(),
  task_id: optional(string()),
  plan_id: optional(nullable(string())),
  origin_plan_revision_id: optional(nullable(string())),
  plan_item_ref: optional(nullable(string())),
});
const CloseTask = looseObject({ status: string() });

function statusFilter(ctx: RouteContext): TaskStatus | undefined {
  const s = queryValue(ctx, 'status');
  return s === undefined ? undefined : requireTaskStatus(s);
}

export const list: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  const planId = queryValue(ctx, 'plan_id');
  const page = a.workflow.pageTasks({ status: statusFilter(ctx), plan_id: planId }, pageRequest(ctx, 'tasks', 'int'));
  return { json: { tasks: page.rows.map((t) => a.workflow.taskProjection(t, a.index)), ...pageFields(page) } };
};

export const create: Handler = async (ctx) => {
  rejectRouteOwned(ctx.body);
  const req = wellFormed(validate(ctx.body, CreateTask));
  const a = requireAuthority(ctx);
  const task = await a.workflow.createTask(req);
  return { json: { task: a.workflow.taskProjection(task, a.index) } };
};

export const get: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  return { json: { task: a.workflow.taskProjection(a.workflow.task(ctx.params.task_ref), a.index) } };
};

export const close: Handler = async (ctx) => {
  rejectRouteOwned(ctx.body);
  const req = validate(ctx.body, CloseTask);
  const a = requireAuthority(ctx);
  const task = await a.workflow.closeTask(ctx.params.task_ref, req.status);
  return { json: { task: a.workflow.taskProjection(task, a.index) } };
};

export const audit: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  return { json: a.workflow.audit(ctx.params.task_id, queryValue(ctx, 'target_line') ?? 'main', a.index) };
};

export const queueSummary: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  return { json: a.workflow.queueSummary(statusFilter(ctx)) };
};

export const taskQueue: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  const status = statusFilter(ctx);
  const page = a.workflow.taskQueue(status, pageRequest(ctx, 'task-queue', 'int'), a.index);
  return { json: { status_filter: status ?? null, tasks: page.rows, ...pageFields(page) } };
};
