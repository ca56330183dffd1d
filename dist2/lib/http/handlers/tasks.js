// Tasks and the task read models (spec: "Task", "Tasks and read models", "Task linkage rules";
// docs/api.md "Tasks, changes, patchsets"). Schemas check shape (422); rules live in
// lib/domain/workflow and lib/authority/workflow (400/404/409).
import { nullable, optional, string, type as looseObject } from 'superstruct';
import { AUDIT_VERDICTS, CHANGE_STATUSES, requireTaskStatus, TASK_STATUSES } from '../../domain/workflow/rules.js';
import { PLAN_STATUSES } from '../../domain/plans.js';
import { requireAuthority } from '../route-types.js';
import { validate } from '../validate.js';
import { queueSummary as summarize, taskAudit, taskQueue as queueRows } from '../../authority/workflow/read-models.js';
import { pageFields, pageRequest, queryValue, rejectRouteOwned, wellFormed } from './workflow-common.js';
import { arr, bool, enumOf, nullable as orNull, obj, PAGE_FIELDS, ref, str, uint, hex64 } from '../json-schema.js';
export const CreateTask = looseObject({
    title: string(),
    intent: string(),
    task_id: optional(string()),
    plan_id: optional(nullable(string())),
    origin_plan_revision_id: optional(nullable(string())),
    plan_item_ref: optional(nullable(string())),
});
export const CloseTask = looseObject({ status: string() });
function statusFilter(ctx) {
    const s = queryValue(ctx, 'status');
    return s === undefined ? undefined : requireTaskStatus(s);
}
export const list = async (ctx) => {
    const a = requireAuthority(ctx);
    const filter = { status: statusFilter(ctx), plan_id: queryValue(ctx, 'plan_id') };
    const page = a.workflow.pageTasks(filter, pageRequest(ctx, 'tasks', 'int', filter));
    return { json: { tasks: page.rows.map((t) => a.workflow.taskProjection(t, a.index)), ...pageFields(page) } };
};
export const create = async (ctx) => {
    rejectRouteOwned(ctx.body);
    const req = wellFormed(validate(ctx.body, CreateTask));
    const a = requireAuthority(ctx);
    const task = await a.workflow.createTask(req);
    return { json: { task: a.workflow.taskProjection(task, a.index) } };
};
export const get = async (ctx) => {
    const a = requireAuthority(ctx);
    return { json: { task: a.workflow.taskProjection(a.workflow.task(ctx.params.task_ref), a.index) } };
};
export const close = async (ctx) => {
    rejectRouteOwned(ctx.body);
    const req = validate(ctx.body, CloseTask);
    const a = requireAuthority(ctx);
    const task = await a.workflow.closeTask(ctx.params.task_ref, req.status);
    return { json: { task: a.workflow.taskProjection(task, a.index) } };
};
export const audit = async (ctx) => {
    const a = requireAuthority(ctx);
    return { json: taskAudit(a.workflow, ctx.params.task_id, queryValue(ctx, 'target_line') ?? 'main', a.index) };
};
export const queueSummary = async (ctx) => {
    const a = requireAuthority(ctx);
    return { json: summarize(a.workflow, statusFilter(ctx)) };
};
export const taskQueue = async (ctx) => {
    const a = requireAuthority(ctx);
    const status = statusFilter(ctx);
    const page = queueRows(a.workflow, status, pageRequest(ctx, 'task-queue', 'int', { status }), a.index);
    return { json: { status_filter: status ?? null, tasks: page.rows, ...pageFields(page) } };
};
const counts = (names) => obj(Object.fromEntries(names.map((n) => [n, uint])));
export const SCHEMAS = {
    Task: obj({
        task_id: str,
        sequence: uint,
        repository_index: uint,
        title: str,
        intent: str,
        plan_id: orNull(str),
        origin_plan_revision_id: orNull(str),
        plan_item_ref: orNull(str),
        plan_drift: {
            ...orNull(obj({ plan_status: enumOf(PLAN_STATUSES), head_revision_id: str, plan_moved: bool, item_in_head: orNull(bool) })),
            description: 'null when the task is not linked to a plan; computed when read',
        },
        status: enumOf(TASK_STATUSES),
        created_at_s: uint,
        updated_at_s: uint,
        closed_at_s: orNull(uint),
        promoted_from: { ...orNull(obj({ local_task_id: str, promotion_id: str })), description: 'set on a task published by a history promotion' },
    }),
    TaskResult: obj({ task: ref('Task') }),
    TaskList: obj({ tasks: arr(ref('Task')), ...PAGE_FIELDS }),
    TaskAudit: obj({
        task: ref('Task'),
        changes: { ...arr(ref('Change')), description: 'oldest first' },
        target_line: str,
        target_line_exists: bool,
        target_line_head_snapshot_id: orNull(hex64),
        open_changes: uint,
        landed_changes: uint,
        verdict: enumOf(AUDIT_VERDICTS),
    }),
    QueueSummary: obj({
        status_filter: orNull(enumOf(TASK_STATUSES)),
        tasks: counts([...TASK_STATUSES, 'total']),
        changes: counts([...CHANGE_STATUSES, 'open', 'total']),
    }),
    TaskQueue: obj({
        status_filter: orNull(enumOf(TASK_STATUSES)),
        tasks: arr(obj({
            task_id: str,
            sequence: uint,
            repository_index: uint,
            title: str,
            status: enumOf(TASK_STATUSES),
            plan_id: orNull(str),
            plan_item_ref: orNull(str),
            created_at_s: uint,
            updated_at_s: uint,
            change_count: uint,
            open_change_count: uint,
            landed_change_count: uint,
            changes: arr(obj({
                change_id: str,
                change_ref: str,
                title: str,
                status: enumOf(CHANGE_STATUSES),
                base_line: str,
                patchset_count: uint,
                selected_patchset_id: orNull(str),
            })),
        })),
        ...PAGE_FIELDS,
    }),
};
const statusQuery = { schema: enumOf(TASK_STATUSES), description: 'only tasks in this status' };
export const ListQuery = { status: statusQuery, plan_id: { schema: str, description: 'only tasks linked to this plan' } };
export const StatusQuery = { status: statusQuery };
export const AuditQuery = { target_line: { schema: { type: 'string', default: 'main' }, description: 'the line the verdict is about' } };
//# sourceMappingURL=tasks.js.map