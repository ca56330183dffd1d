// History promotion (spec: "History promotion prepare body", Limits; docs/api.md "History
// promotion"). The schema checks shape (422); the rules live in lib/domain/workflow/promotion.ts
// (400, 409) and lib/authority/workflow/promotion.ts (404, 409).
import { array, integer, nullable, optional, string, type as looseObject } from 'superstruct';
import { PROMOTION_CONTRACT } from '../../domain/workflow/promotion.js';
import { AUTHOR_MODES } from '../../domain/workflow/rules.js';
import { requireAuthority } from '../route-types.js';
import { validate } from '../validate.js';
import { rejectRouteOwned } from './workflow-common.js';
import { arr, bool, constant, enumOf, hex64, obj, ref, str, uint } from '../json-schema.js';
const Snapshot = looseObject({ snapshot_id: string(), created_at_s: integer() });
const Entry = looseObject({
    local_task_id: string(),
    local_change_id: string(),
    local_change_ref: string(),
    expected_remote_task_id: optional(nullable(string())),
    expected_remote_change_ref: optional(nullable(string())),
    task: looseObject({
        title: string(),
        intent: string(),
        plan_id: optional(nullable(string())),
        origin_plan_revision_id: optional(nullable(string())),
        plan_item_ref: optional(nullable(string())),
    }),
    change: looseObject({ title: string(), base_line: string(), fork_snapshot_id: string() }),
    pre_land_target_snapshot_id: string(),
    landed_snapshot_id: string(),
    landed_at_s: integer(),
    snapshots: array(Snapshot),
});
export const Prepare = looseObject({
    contract: string(),
    idempotency_key: string(),
    target_line: string(),
    base_snapshot_id: string(),
    revision_snapshot_id: string(),
    author_mode: string(),
    summary: string(),
    entries: array(Entry),
});
/** The promotion result: the receipt's identities on top, the current projections, the receipt itself. */
export function promotionResult(a, record, replay) {
    return {
        contract: record.contract,
        replay,
        promotion_id: record.promotion_id,
        task_id: record.task_id,
        change_id: record.change_id,
        change_ref: record.change_ref,
        patchset_id: record.patchset_id,
        target_line: record.target_line,
        base_snapshot_id: record.base_snapshot_id,
        revision_snapshot_id: record.revision_snapshot_id,
        task: a.workflow.taskProjection(a.workflow.task(record.task_id), a.index),
        change: a.workflow.changeProjection(a.workflow.change(record.change_id), a.index),
        patchset: a.workflow.patchsetProjection(a.workflow.patchset(record.patchset_id), a.index),
        history_promotion: { ...record, repository_index: a.index },
    };
}
export const prepare = async (ctx) => {
    rejectRouteOwned(ctx.body);
    const req = validate(ctx.body, Prepare);
    const a = requireAuthority(ctx);
    const { record, replay } = await a.promotions.prepare(req);
    return { json: promotionResult(a, record, replay) };
};
export const SCHEMAS = {
    PromotionReceipt: obj({
        promotion_id: str,
        sequence: uint,
        contract: constant(PROMOTION_CONTRACT),
        idempotency_key: str,
        payload_sha256: hex64,
        repository_index: uint,
        target_line: str,
        base_snapshot_id: hex64,
        revision_snapshot_id: hex64,
        author_mode: enumOf(AUTHOR_MODES),
        task_id: str,
        change_id: str,
        change_ref: str,
        patchset_id: str,
        entries: arr(obj({
            local_task_id: str,
            local_change_id: str,
            local_change_ref: str,
            remote_task_id: str,
            remote_change_id: str,
            remote_change_ref: str,
            pre_land_target_snapshot_id: hex64,
            landed_snapshot_id: hex64,
            landed_at_s: uint,
        })),
        created_at_s: uint,
    }, { description: 'the recorded receipt: every local identity mapped to the remote one' }),
    PromotionResult: obj({
        contract: constant(PROMOTION_CONTRACT),
        replay: bool,
        promotion_id: str,
        task_id: str,
        change_id: str,
        change_ref: str,
        patchset_id: str,
        target_line: str,
        base_snapshot_id: hex64,
        revision_snapshot_id: hex64,
        task: ref('Task'),
        change: ref('Change'),
        patchset: ref('Patchset'),
        history_promotion: ref('PromotionReceipt'),
    }, { description: "the receipt's identities on top, the entities' current projections, the receipt itself" }),
};
//# sourceMappingURL=promotion.js.map