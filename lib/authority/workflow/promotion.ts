// History promotion (spec: "History promotion prepare body", Limits; docs/api.md "History
// promotion"): a client's offline history — local tasks, changes and lands — published as
// remote tasks (one per local task) and changes (one per entry), plus one aggregate patchset
// (base → revision) on the last entry's change, ready for task-land. Everything is validated
// before anything is staged; the tasks, changes, patchset, receipt and idempotency record are
// one transaction, so one workflow.log record under one commit point (storage-layout.md §17).
// When the aggregate change lands, the land's own transaction marks the earlier entries'
// changes landed through it (settlePromotionIn, called by LandDesk.commit).
import { Conflict, NotFound } from '../../domain/errors.js';
import { nowSeconds } from '../../domain/repository.js';
import {
  checkEntryAncestry,
  checkExpectedIdentities,
  checkPromotionRequest,
  normalizePromotion,
  payloadFingerprint,
  PROMOTION,
  PROMOTION_CONTRACT,
  PROMOTION_KEY,
  promotionId,
  taskSlots,
  type PromotionInput,
  type PromotionKeyRecord,
  type PromotionReceiptEntry,
  type PromotionRecord,
} from '../../domain/workflow/promotion.js';
import { CHANGE, isOpenChange, type ChangeRecord, type TaskRecord } from '../../domain/workflow/rules.js';
import type { ContentStore, Txn } from '../../store/content-store.js';
import type { PlanBook } from '../plans.js';
import type { WorkflowBook } from './book.js';

/** Per-batch staged promotion ids (the next sequence counts them). */
const NEW_PROMOTION = 'wf:new-promotion';

export interface PromotionOutcome {
  record: PromotionRecord;
  replay: boolean;
}

export class HistoryPromotions {
  /**
   * The highest promotion sequence (the id space `promotion` of serve --lease's id floors).
   * Sequences are dense from 1 but for the gaps an id floor leaves.
   */
  highestPromotion: number;

  constructor(private readonly store: ContentStore, private readonly plans: PlanBook, private readonly book: WorkflowBook) {
    this.highestPromotion = store.highestSequence(PROMOTION);
  }

  /** A recorded receipt by its id. */
  record(id: string): PromotionRecord {
    const r = this.store.entity<PromotionRecord>(PROMOTION, id);
    if (!r) throw new NotFound(`history promotion ${id} does not exist`);
    return r;
  }

  /** The receipt the key recorded, when the payload matches; 409 when the key was used for another payload. */
  private replayOf(key: PromotionKeyRecord | undefined, fingerprint: string, read: (id: string) => PromotionRecord | undefined): PromotionRecord | null {
    if (!key) return null;
    if (key.payload_sha256 !== fingerprint) throw new Conflict('idempotency_key was already used for a different history promotion payload');
    const r = read(key.promotion_id);
    if (!r) throw new Conflict(`idempotency_key names promotion ${key.promotion_id}, which is not recorded`);
    return r;
  }

  async prepare(raw: PromotionInput): Promise<PromotionOutcome> {
    // 1. Rules on the request alone (400).
    const authorMode = checkPromotionRequest(raw);
    const req = normalizePromotion(raw);
    const fingerprint = payloadFingerprint(req);
    // 2. A recorded key: replay or 409 (re-checked inside the transaction for concurrent twins).
    const early = this.replayOf(this.store.entity<PromotionKeyRecord>(PROMOTION_KEY, req.idempotency_key), fingerprint, (id) => this.store.entity<PromotionRecord>(PROMOTION, id));
    if (early) return { record: early, replay: true };
    // 3. Stored state that cannot change under us: snapshots (immutable, 404 naming the first
    //    missing), their ancestry (409), plan linkage (revisions are immutable).
    const snaps = new Map<string, { parent_snapshot_ids: string[]; created_at_s: number; root_tree_id: string }>();
    const need = (id: string) => {
      if (snaps.has(id)) return snaps.get(id)!;
      const s = this.store.snapshot(id);
      if (!s) throw new NotFound(`snapshot ${id} is not present`);
      snaps.set(id, s);
      return s;
    };
    need(req.base_snapshot_id);
    need(req.revision_snapshot_id);
    for (const e of req.entries) {
      need(e.change.fork_snapshot_id);
      need(e.pre_land_target_snapshot_id);
      need(e.landed_snapshot_id);
      for (const s of e.snapshots) need(s.snapshot_id);
    }
    req.entries.forEach((e, i) => checkEntryAncestry(e, i, need));
    const linkages = req.entries.map((e) => this.plans.resolveLinkage(e.task));
    // The aggregate patchset's diff, computed once outside the commit queue.
    const diff = await this.book.diff({ snapshot_id: req.base_snapshot_id, root_tree_id: need(req.base_snapshot_id).root_tree_id }, { snapshot_id: req.revision_snapshot_id, root_tree_id: need(req.revision_snapshot_id).root_tree_id });
    // 4. One transaction: re-check the key, the target line and the expected identities, then stage.
    return this.store.transact((tx) => {
      const again = this.replayOf(tx.entity<PromotionKeyRecord>(PROMOTION_KEY, req.idempotency_key), fingerprint, (id) => tx.entity<PromotionRecord>(PROMOTION, id));
      if (again) return { record: again, replay: true };
      if (!tx.line(req.target_line)) throw new NotFound(`line ${req.target_line} does not exist`);
      this.checkIdentities(tx, req);
      const sequence = Math.max(this.highestPromotion, this.store.idFloor('promotion')) + tx.stagedKeys(NEW_PROMOTION).length + 1;
      const id = promotionId(sequence);
      const entries: PromotionReceiptEntry[] = [];
      let last = null;
      // One remote task per local task, published at its first entry; later entries of the same
      // local task (its later lands) add their change to it.
      const tasks = new Map<string, TaskRecord>();
      for (const [i, e] of req.entries.entries()) {
        let task = tasks.get(e.local_task_id);
        if (!task) {
          task = this.book.stageTask(tx, { title: e.task.title, intent: e.task.intent, linkage: linkages[i], promoted_from: { local_task_id: e.local_task_id, promotion_id: id } });
          tasks.set(e.local_task_id, task);
        }
        const change = this.book.stageChange(tx, task, {
          title: e.change.title,
          base_line: e.change.base_line,
          fork_snapshot_id: e.change.fork_snapshot_id,
          promoted_from: { local_change_id: e.local_change_id, local_change_ref: e.local_change_ref, local_task_id: e.local_task_id, promotion_id: id },
        });
        entries.push({
          local_task_id: e.local_task_id,
          local_change_id: e.local_change_id,
          local_change_ref: e.local_change_ref,
          remote_task_id: task.task_id,
          remote_change_id: change.change_id,
          remote_change_ref: change.change_ref,
          pre_land_target_snapshot_id: e.pre_land_target_snapshot_id,
          landed_snapshot_id: e.landed_snapshot_id,
          landed_at_s: e.landed_at_s,
        });
        last = { task, change };
      }
      const { patchset } = this.book.stagePatchset(tx, last!.change, {
        base_snapshot_id: req.base_snapshot_id,
        revision_snapshot_id: req.revision_snapshot_id,
        summary: req.summary,
        author_mode: authorMode,
      }, diff);
      const record: PromotionRecord = {
        promotion_id: id,
        sequence,
        contract: PROMOTION_CONTRACT,
        idempotency_key: req.idempotency_key,
        payload_sha256: fingerprint,
        target_line: req.target_line,
        base_snapshot_id: req.base_snapshot_id,
        revision_snapshot_id: req.revision_snapshot_id,
        author_mode: authorMode,
        task_id: last!.task.task_id,
        change_id: last!.change.change_id,
        change_ref: last!.change.change_ref,
        patchset_id: patchset.patchset_id,
        entries,
        created_at_s: nowSeconds(),
      };
      const key: PromotionKeyRecord = { idempotency_key: req.idempotency_key, payload_sha256: fingerprint, promotion_id: id };
      tx.stage(NEW_PROMOTION, id, true);
      tx.emit('promotion.prepared', { promotion_id: id, target_line: req.target_line });
      tx.upsert(PROMOTION, id, record);
      tx.upsert(PROMOTION_KEY, req.idempotency_key, key);
      tx.onPublish(() => {
        this.highestPromotion = Math.max(this.highestPromotion, sequence);
      });
      return { record, replay: false };
    });
  }

  /** Expected remote identities against what this transaction would publish, before staging anything (409). */
  private checkIdentities(tx: Txn, req: PromotionInput): void {
    const firstTask = Number(this.book.nextTaskId(tx).slice('task-'.length));
    const firstChange = Number(this.book.nextChangeIdentity(tx, 'task-1').change_id.slice('change-'.length));
    const slots = taskSlots(req.entries);
    req.entries.forEach((e, i) => {
      const task = `task-${firstTask + slots[i]}`;
      checkExpectedIdentities(e, i, { task_id: task, change_ref: `${task}.change-${firstChange + i}` });
    });
  }
}

/**
 * The receipt of the promotion a change was published by, as projected (`history_promotion` of
 * prepare's result and of task-land's), read through `tx`; null for a change no promotion published.
 */
export function promotionReceiptIn(tx: Txn, change: ChangeRecord, repositoryIndex: number): Record<string, unknown> | null {
  const id = change.promoted_from?.promotion_id;
  const record = id === undefined ? undefined : tx.entity<PromotionRecord>(PROMOTION, id);
  return record ? { ...record, repository_index: repositoryIndex } : null;
}

/**
 * Inside the transaction of a successful land of `landed` (already staged as landed): when it is
 * the aggregate change of a promotion, the changes of that promotion's earlier entries carry
 * work that has now landed with it. Each of them still open (draft, active, review) is staged
 * `landed` too — the same target line and time as the land, plus `landed_via` naming the
 * promotion, the land and the aggregate change; a change closed or landed meanwhile is left as it
 * is. One land transaction holds all of it, so a crash leaves the whole land or none of it.
 * Reads by id only: the change's `promoted_from`, the receipt, one change per entry.
 */
export function settlePromotionIn(tx: Txn, book: WorkflowBook, landed: ChangeRecord, land: { land_id: string; target_line: string; finished_at_s: number }): void {
  const id = landed.promoted_from?.promotion_id;
  if (id === undefined) return;
  const record = tx.entity<PromotionRecord>(PROMOTION, id);
  if (!record || record.change_id !== landed.change_id) return;
  for (const e of record.entries) {
    if (e.remote_change_id === landed.change_id) continue;
    const c = tx.entity<ChangeRecord>(CHANGE, e.remote_change_id);
    if (!c || !isOpenChange(c.status)) continue;
    const at = land.finished_at_s;
    book.upsertChange(tx, { ...c, status: 'landed', land_target_line: land.target_line, landed_at_s: at, updated_at_s: at, landed_via: { promotion_id: id, land_id: land.land_id, change_id: landed.change_id } });
  }
}
