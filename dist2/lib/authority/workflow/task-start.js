// task-start (contract task-start-atomic/v1; spec "Atomic task start body"; docs/api.md "Lands" →
// "task-start"): plan item → (plan create or revise when asked) → task → change, one commit.
// The server derives the task's plan linkage and the change's task_id; callers that send them are
// rejected. The result is recorded under the idempotency key in the same commit; the same key with
// the same payload returns it with `replay: true`, with another payload 409.
import { Conflict, Invalid, NotFound } from '../../domain/errors.js';
import { validateLineName } from '../../domain/lines.js';
import { MAX_TEXT_CHARS, requireText, requireTitle } from '../../domain/workflow/rules.js';
import { planProjection, revisionProjection } from '../plans.js';
import { IDEMPOTENCY, idempotencyRecordId, keptNullsPayloadDigest, payloadDigest, replayedResult, requireIdempotencyKey, storedResult } from './lands.js';
import { nowSeconds } from '../../domain/repository.js';
export const TASK_START_CONTRACT = 'task-start-atomic/v1';
const DERIVED = {
    '': ['task_id', 'change_id', 'plan_id', 'plan_linkage', 'origin_plan_revision_id'],
    task: ['task_id', 'plan_id', 'origin_plan_revision_id', 'plan_item_ref'],
    change: ['task_id', 'change_id', 'fork_snapshot_id'],
};
function rejectDerived(body) {
    for (const [where, fields] of Object.entries(DERIVED)) {
        const obj = (where === '' ? body : body[where]);
        if (!obj || typeof obj !== 'object')
            continue;
        for (const f of fields)
            if (f in obj)
                throw new Invalid(`${where ? where + '.' : ''}${f} is derived by the server; do not send it`);
    }
}
/** `owner`: the caller's identity (the new change's owner; not part of the payload the idempotency key binds). */
export async function taskStart(store, plans, book, desk, body, repositoryIndex, owner = null) {
    if (body.contract !== TASK_START_CONTRACT)
        throw new Invalid(`contract must be ${TASK_START_CONTRACT}`);
    rejectDerived(body);
    const key = requireIdempotencyKey(body.idempotency_key);
    const { idempotency_key: _k, ...payload } = body;
    void _k;
    const recordId = idempotencyRecordId(TASK_START_CONTRACT, key);
    const digest = payloadDigest(payload);
    const digests = [digest, keptNullsPayloadDigest(payload)];
    const early = desk.recorded(recordId, digests);
    if (early)
        return replayedResult(early, repositoryIndex);
    if (typeof body.plan_item_ref !== 'string' || body.plan_item_ref === '')
        throw new Invalid('plan_item_ref is required');
    const title = requireTitle(body.task?.title, 'task.title');
    const intent = requireText(body.task?.intent, 'task.intent', MAX_TEXT_CHARS);
    const changeTitle = requireTitle(body.change?.title, 'change.title');
    validateLineName(body.change?.base_line ?? '');
    const action = body.plan?.action;
    let created = null;
    let revise = null;
    if (action === 'existing') {
        if (!body.plan.plan_id || !body.plan.plan_revision_id)
            throw new Invalid('plan.action existing needs plan.plan_id and plan.plan_revision_id');
    }
    else if (action === 'create') {
        if (!body.plan.payload)
            throw new Invalid('plan.action create needs plan.payload');
        if (body.plan.plan_id !== undefined)
            throw new Invalid('plan.action create derives the plan id; do not send plan.plan_id');
        created = plans.draftForCreate(body.plan.payload);
    }
    else if (action === 'revise') {
        if (!body.plan.plan_id || !body.plan.payload)
            throw new Invalid('plan.action revise needs plan.plan_id and plan.payload');
        revise = plans.draftForRevise(body.plan.plan_id, body.plan.payload);
    }
    else
        throw new Invalid('plan.action must be existing, create or revise');
    return store.transact((tx) => {
        const again = desk.recorded(recordId, digests, tx);
        if (again)
            return replayedResult(again, repositoryIndex);
        let revision;
        let planAction = action;
        if (action === 'existing') {
            const { plan, revision: rev } = plans.planAndRevisionIn(tx, body.plan.plan_id, body.plan.plan_revision_id);
            if (!rev)
                throw new NotFound(`revision ${body.plan.plan_revision_id} of plan ${plan.plan_id} does not exist`);
            if (plan.head_revision_id !== rev.plan_revision_id)
                throw new Conflict(`revision ${rev.plan_revision_id} is not the head of plan ${plan.plan_id} (${plan.head_revision_id})`);
            revision = rev;
        }
        else if (created) {
            revision = plans.createIn(tx, created.draft, created.status).revision;
        }
        else {
            const p = { ...body.plan.payload, expected_head_revision_id: body.plan.payload.expected_head_revision_id ?? body.plan.expected_head_revision_id };
            if (p.expected_head_revision_id === undefined || p.expected_head_revision_id === null) {
                // No guard: only the exact revision, already in the plan under any parent, is taken.
                const existing = plans.exactRevisionIn(tx, body.plan.plan_id, p, revise);
                if (!existing)
                    throw new Invalid('plan.action revise needs expected_head_revision_id unless the exact revision already exists');
                planAction = 'revise (existing revision)';
                revision = existing;
            }
            else {
                const out = plans.reviseIn(tx, body.plan.plan_id, p, revise);
                if (out.replayed)
                    planAction = 'revise (existing revision)';
                revision = out.revision;
            }
        }
        if (!revision.items.some((i) => i.plan_item_ref === body.plan_item_ref))
            throw new NotFound(`item ${body.plan_item_ref} does not exist in revision ${revision.plan_revision_id}`);
        const task = book.createTaskIn(tx, { title, intent }, { plan_id: revision.plan_id, origin_plan_revision_id: revision.plan_revision_id, plan_item_ref: body.plan_item_ref });
        const change = book.createChangeIn(tx, { task_id: task.task_id, title: changeTitle, base_line: body.change.base_line, owner }, changeTitle);
        const planRecord = plans.planAndRevisionIn(tx, revision.plan_id, revision.plan_revision_id).plan;
        // The linked revision need not be the head (an existing revision found by content).
        const head = plans.planAndRevisionIn(tx, revision.plan_id, planRecord.head_revision_id).revision;
        const result = {
            contract: TASK_START_CONTRACT,
            replay: false,
            plan_action: planAction,
            plan_id: revision.plan_id,
            plan_revision_id: revision.plan_revision_id,
            plan_item_ref: body.plan_item_ref,
            task_id: task.task_id,
            change_id: change.change_id,
            change_ref: change.change_ref,
            plan: planProjection(planRecord),
            revision: revisionProjection(revision),
            task: { ...task, promoted_from: task.promoted_from ?? null, repository_index: repositoryIndex, plan_drift: { plan_status: planRecord.status, head_revision_id: planRecord.head_revision_id, plan_moved: head.plan_revision_id !== revision.plan_revision_id, item_in_head: head.items.some((i) => i.plan_item_ref === body.plan_item_ref) } },
            change: book.changeProjection(change, repositoryIndex),
        };
        const rec = { contract: TASK_START_CONTRACT, idempotency_key: key, payload_sha256: digest, result: storedResult(result), created_at_s: nowSeconds() };
        tx.upsert(IDEMPOTENCY, recordId, rec);
        return result;
    });
}
//# sourceMappingURL=task-start.js.map