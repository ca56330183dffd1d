// Lands (spec: "Land", `:submit`, `lands/{id}`, task-land; docs/api.md "Lands"). A land is decided in
// one request and recorded once: a successful land is ONE transaction (server-built packs of the
// merged objects, the landed snapshot, the target line move, the land record, the change set to
// `landed`, other open patchsets on the line marked `base_stale`, and for task-land the
// idempotency record); a refused land is one transaction that writes only its land record.
// The merge is computed before the transaction from immutable snapshots; the transaction checks
// the line still has the head the merge was computed against. Lands onto one line take turns;
// a line moved by something else meanwhile makes an unpinned land plan again (bounded), a
// pinned one is recorded `target_update_failed`.
import { createHash } from 'node:crypto';
import { Mutex } from 'async-mutex';
import { CairnError, Conflict, Forbidden, Invalid, NotFound } from '../../domain/errors.js';
import { decodeTree, encodeSnapshot, requireContentId, sha256Hex } from '../../domain/content.js';
import { validateLineName } from '../../domain/lines.js';
import { nowSeconds } from '../../domain/repository.js';
import { CHANGE, isOpenChange, PATCHSET, type ChangeRecord, type PatchsetRecord } from '../../domain/workflow/rules.js';
import { MAX_LISTED_CONFLICTS, mergeTrees, type MergeConflict, type MergeOutcome } from '../../domain/workflow/merge.js';
import { ancestryOf, MAX_ANCESTRY_WALK } from '../../domain/workflow/ancestry.js';
import { takePage, walkFrom, type Page, type PageRequest } from '../../domain/paging.js';
import { expandedSize, overLimit, Pace, pathsOf } from '../../domain/tree-size.js';
import type { ContentStore, Txn } from '../../store/content-store.js';
import { PACK_KIND_OBJECT, PACK_KIND_TREE, type PackKind } from '../../store/pack.js';
import { stagePack } from './server-objects.js';
import type { WorkflowBook } from './book.js';
import { landEvents, lineEvents } from '../../domain/events.js';
import type { GateOptions, GateRefusal, LandGates, SpeculationCi } from './gates.js';
import type { Requirement } from '../../domain/workflow/repo-rules.js';
import { LAND_SECTION, LandIndex } from '../../domain/workflow/land-index.js';
import { promotionReceiptIn, settlePromotionIn } from './promotion.js';
import { crashPoint } from '../../store/crash-point.js';

export const LAND = 'land';
export const IDEMPOTENCY = 'idempotency';
export const LAND_MODES = ['ff-only', 'merge', 'direct'] as const;
export type LandMode = (typeof LAND_MODES)[number];
/** `landed` (the line moved or already held the revision), `rejected` (a gate or guard refused it before any merge), `failed` (merge conflict, line moved meanwhile, internal error). All terminal. */
export type LandStatus = 'landed' | 'rejected' | 'failed';
export type FailureKind =
  | 'patchset_not_selected'
  | 'blocked_by_change_below'
  | 'blocked_by_policy'
  | 'blocked_by_review'
  | 'blocked_by_ci'
  | 'unresolved_threads'
  | 'land_not_allowed'
  | 'approvals_required'
  | 'code_owners_required'
  | 'stale_base'
  | 'conflict'
  | 'target_update_failed'
  | 'queue_required'
  | 'internal_error';
export type LineAction = 'fast_forward' | 'merge' | 'direct' | 'none';
export const LAND_STATUSES: readonly LandStatus[] = ['landed', 'rejected', 'failed'];
export const FAILURE_KINDS: readonly FailureKind[] = ['patchset_not_selected', 'blocked_by_change_below', 'blocked_by_policy', 'blocked_by_review', 'blocked_by_ci', 'unresolved_threads', 'land_not_allowed', 'approvals_required', 'code_owners_required', 'stale_base', 'conflict', 'target_update_failed', 'queue_required', 'internal_error'];
export const LINE_ACTIONS: readonly LineAction[] = ['fast_forward', 'merge', 'direct', 'none'];

export interface LandRecord {
  land_id: string;
  sequence: number;
  change_id: string;
  change_ref: string;
  task_id: string;
  patchset_id: string | null;
  target_line: string;
  mode: LandMode;
  status: LandStatus;
  failure_kind: FailureKind | null;
  failure_message: string | null;
  conflicts: MergeConflict[];
  conflicts_count: number;
  expected_head_snapshot_id: string | null;
  target_head_before: string | null;
  landed_snapshot_id: string | null;
  line_action: LineAction | null;
  /** The policy decision the land judged the patchset by, recorded in the land's own commit (null when no commit judged the gates: refusals decided before it). */
  policy_decision_id?: string | null;
  /** The land-queue entry this land came from (absent or null: a direct land). */
  land_queue_entry_id?: string | null;
  stale_patchset_ids: string[];
  /** How many times the land planned (1 unless the line moved under it and it planned again; absent on older records: 1). */
  attempts?: number;
  created_at_s: number;
  finished_at_s: number;
  /** Who asked for the land: the identified caller, or a queued land's enqueuer; written only when there is one (absent: null). */
  landed_by?: string;
  /** Only on a land that bypassed the repository's rules: who bypassed (the caller in bypass_allowed). */
  bypassed_by?: string;
  /** Only with `bypassed_by`: the refusals the bypass overrode, in gate order. */
  bypassed?: { kind: string; message: string }[];
}

/** A land's request. An explicit null is read as absent (clients that serialize unset optional fields as null can land). */
export interface LandRequest {
  mode: string;
  target_line?: string | null;
  patchset_id?: string | null;
  /** Absent or null: no guard; a snapshot id: the head must equal it. */
  expected_head_snapshot_id?: string | null;
  /** Land despite failing gates (the caller must be in the repository's bypass_allowed; docs/api.md "Repository rules"). */
  bypass?: boolean | null;
}

/** Task-land idempotency: the key's record id, the payload digest and the result builder. */
export interface Idempotent {
  record_id: string;
  /** The digest recorded with the result. */
  digest: string;
  /** Digests a replay may match (the recorded form first, then older forms of the same payload). */
  accepted: readonly string[];
  result: (tx: Txn, land: LandRecord) => Record<string, unknown>;
}

export interface IdempotencyRecord {
  contract: string;
  idempotency_key: string;
  payload_sha256: string;
  result: Record<string, unknown>;
  created_at_s: number;
}

export type LandOutcome = { land: LandRecord; replay: Record<string, unknown> | null; result: Record<string, unknown> | null };

const NEW_LAND = 'land:new';

/** How many times a land without a pinned head plans onto a line that keeps moving under it. */
export const MAX_LAND_ATTEMPTS = 5;
/** A commit's answer when the line moved since the plan and the land may plan again. */
const LINE_MOVED = Symbol('line moved');

/**
 * The digest an idempotency record keeps: sha256 of the payload's canonical JSON (keys sorted
 * at every level, object fields whose value is null dropped), so a retry that spells an unset
 * optional field as null, or orders keys differently, is the same payload.
 */
export function payloadDigest(payload: unknown): string {
  const canon = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canon);
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      return Object.fromEntries(Object.keys(o).filter((k) => o[k] !== null && o[k] !== undefined).sort().map((k) => [k, canon(o[k])]));
    }
    return v;
  };
  return createHash('sha256').update(JSON.stringify(canon(payload))).digest('hex');
}

/** The digest records written before nulls were dropped keep (keys sorted, nulls kept); still accepted on replay. */
export function keptNullsPayloadDigest(payload: unknown): string {
  const canon = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canon);
    if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon((v as Record<string, unknown>)[k])]));
    return v;
  };
  return createHash('sha256').update(JSON.stringify(canon(payload))).digest('hex');
}

/** Drop the null fields of a land request (null reads as absent). */
export function withoutNulls<T extends object>(req: T): T {
  return Object.fromEntries(Object.entries(req).filter(([, v]) => v !== null)) as T;
}

const PROJECTIONS = ['task', 'change', 'patchset', 'land', 'history_promotion'];

/** The result as stored: no body holds the repository index (restore renumbers), so it is dropped from the projections. */
export function storedResult(result: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...result };
  for (const k of PROJECTIONS) {
    const v = out[k];
    if (v && typeof v === 'object') {
      const { repository_index: _drop, ...rest } = v as Record<string, unknown>;
      void _drop;
      out[k] = rest;
    }
  }
  return out;
}

/** A recorded result as replayed: `replay: true`, projections under the current repository index. */
export function replayedResult(stored: Record<string, unknown>, repositoryIndex: number): Record<string, unknown> {
  const out: Record<string, unknown> = { ...stored, replay: true };
  for (const k of PROJECTIONS) {
    const v = out[k];
    if (v && typeof v === 'object') out[k] = { ...(v as Record<string, unknown>), repository_index: repositoryIndex };
  }
  // Results recorded before lands counted their attempts: one; before they kept who asked: nobody.
  const land = out.land as Record<string, unknown> | undefined;
  if (land && typeof land === 'object' && (land.attempts === undefined || land.landed_by === undefined || land.bypassed === undefined)) out.land = { ...land, attempts: land.attempts ?? 1, landed_by: land.landed_by ?? null, bypassed_by: land.bypassed_by ?? null, bypassed: land.bypassed ?? [] };
  return out;
}

export function idempotencyRecordId(contract: string, key: string): string {
  return `${contract}:${key}`;
}

export function requireIdempotencyKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0) throw new Invalid('idempotency_key must be a non-empty string');
  if (Buffer.byteLength(key, 'utf8') > 256) throw new Invalid('idempotency_key is longer than 256 bytes (UTF-8)');
  return key;
}

interface Plan {
  change: ChangeRecord;
  patchset: PatchsetRecord | null;
  target: string;
  head: string | null;
  /** `gate`: refused by the land gates, judged again (and the decision recorded) in the refusal's commit. */
  refusal: { status: LandStatus; kind: FailureKind; message: string; conflicts?: MergeConflict[]; conflict_count?: number; gate?: boolean } | null;
  landed: string | null;
  action: LineAction | null;
  snapshot: Buffer | null;
  merge: MergeOutcome | null;
  /** The expanded size of each tree the merge created. */
  treeSizes: Map<string, number>;
}

const seqOf = (id: string) => Number(id.slice(id.lastIndexOf('-') + 1));

/** policy_flags bit 0: a merge or direct land whose tree differs from the patchset's revision tree (nothing tested it) must go through the land queue. */
export const POLICY_QUEUE_UNTESTED_MERGES = 0x01;

/**
 * Merges computed but not stored yet (the land queue builds a batch's speculations one on the
 * other before one transaction stores them all): their snapshots and new objects by id.
 */
export interface PendingMerges {
  snapshots: Map<string, { root_tree_id: string; parent_snapshot_ids: string[] }>;
  trees: Map<string, Buffer>;
  blobs: Map<string, Buffer>;
}

/**
 * What a land of a patchset onto a head would create: the snapshot (with the expanded size of
 * each new tree, recorded when it is stored), or the conflicts (the first MAX_LISTED_CONFLICTS).
 */
export type MergedLand =
  | { conflicts: MergeConflict[]; conflict_count: number }
  | { conflicts: null; landed: string; action: 'fast_forward' | 'merge' | 'direct'; snapshot: Buffer | null; merge: MergeOutcome | null; root_tree_id: string; revision_root_tree_id: string; tree_sizes: Map<string, number> };

/** What a readiness check reads of a merge at most: blob bytes and tree entries (the land itself has no bound). */
export const READINESS_MERGE_BUDGET = { bytes: 16 * 1024 * 1024, entries: 200_000 };
/** Milliseconds a readiness merge runs before it lets other requests in. */
const READINESS_SLICE_MS = 20;
/** Merge checks kept (each holds at most READINESS_LISTED_CONFLICTS paths). */
const MERGE_CHECK_CACHE = 256;
/** Conflicting paths a readiness answer lists (the count is complete). */
export const READINESS_LISTED_CONFLICTS = 100;

/** A merge read past its budget (readiness only). */
class MergeBudgetSpent extends Error {}

export interface MergeCheck {
  /** `clean`: a merge land would succeed; `conflict`; `unchecked`: the merge is bigger than the budget. */
  status: 'clean' | 'conflict' | 'unchecked';
  /** The head moved past the patchset base: it is neither the base nor an ancestor of the revision. */
  base_stale: boolean;
  /** Clean, and the landed tree would differ from the revision's (CI tested another tree). */
  untested_tree: boolean;
  conflicts: MergeConflict[];
  conflicts_count: number;
  note: string | null;
}

export interface ReadinessMerge {
  mode: 'merge';
  target_line: string;
  head_snapshot_id: string;
  status: MergeCheck['status'];
  conflicts: MergeConflict[];
  conflicts_count: number;
  note: string | null;
}

export interface Readiness {
  change: ChangeRecord;
  patchset: PatchsetRecord | null;
  can_land: boolean;
  blocked_by: string | null;
  reason: string | null;
  base_stale: boolean;
  merge: ReadinessMerge | null;
  /** Each gate and rule judged, in the land's order, met or not, and who can meet it. */
  requirements: Requirement[];
}

export class LandDesk {
  /** Each change's lands (the change page's land history); the records are read from the store. */
  private index = new LandIndex();

  /** Readiness' merge checks by `head:base:revision`, least recently used first (at most MERGE_CHECK_CACHE). */
  private readonly mergeChecks = new Map<string, Promise<MergeCheck>>();

  /** Lands waiting for or holding their line's turn, per target line (entries removed when unused). */
  private readonly lineTurns = new Map<string, { mutex: Mutex; users: number }>();

  /** The repository's policy_flags (the service sets it; bit POLICY_QUEUE_UNTESTED_MERGES matters here). */
  policyFlags: () => number = () => 0;

  /** Whether `caller` may bypass the gates (the repository's bypass_allowed; set by the authority). */
  mayBypass: (caller: string | null) => boolean = () => false;

  /** Read what the gates need before they judge: the target head's CODEOWNERS, the paths `ps` touches (set by the authority). */
  prepare: (head: string | null, ps: PatchsetRecord | null) => Promise<void> = async () => {};

  constructor(private readonly store: ContentStore, private readonly book: WorkflowBook, private readonly gates: LandGates) {
    const section = store.takeCheckpointSection(LAND_SECTION);
    let done = false;
    if (section) {
      try {
        this.index = LandIndex.decode(section);
        for (const id of store.tailEntities(LAND).sort((a, b) => seqOf(a) - seqOf(b))) this.track(store.entity<LandRecord>(LAND, id)!);
        if (this.index.size !== store.entityCount(LAND) || this.index.highest !== store.highestSequence(LAND)) throw new Error(`it holds ${this.index.size} lands up to land-${this.index.highest}, workflow.log ${store.entityCount(LAND)} up to land-${store.highestSequence(LAND)}`);
        done = true;
      } catch {
        this.index = new LandIndex();
      }
    }
    if (!done) for (const [, l] of store.entitiesOf<LandRecord>(LAND)) this.track(l);
    store.registerCheckpointSection(LAND_SECTION, () => this.index.encode());
  }

  private track(l: LandRecord): void {
    this.index.add(l.sequence, seqOf(l.change_id));
    if (this.byLanded && l.status === 'landed' && l.landed_snapshot_id) this.noteLanded(l.landed_snapshot_id, l.sequence);
  }

  /**
   * Landed snapshot → land sequences, keyed by the id's first 52 bits (a number key keeps the map
   * small; a collision is told apart by reading the record). Built on first use by one pass over
   * the lands (the export needs it; a server that never exports never pays for it), then kept up
   * to date as lands commit.
   */
  private byLanded: Map<number, number | number[]> | null = null;

  private noteLanded(snapshotId: string, seq: number): void {
    const key = Number.parseInt(snapshotId.slice(0, 13), 16);
    const had = this.byLanded!.get(key);
    if (had === undefined) this.byLanded!.set(key, seq);
    else if (Array.isArray(had)) { if (!had.includes(seq)) had.push(seq); }
    else if (had !== seq) this.byLanded!.set(key, [had, seq]);
  }

  /** The land whose landed snapshot is `snapshotId` (the oldest, should several name it), or null. */
  landOfSnapshot(snapshotId: string): LandRecord | null {
    if (!this.byLanded) {
      this.byLanded = new Map();
      for (const [, l] of this.store.entitiesOf<LandRecord>(LAND)) if (l.status === 'landed' && l.landed_snapshot_id) this.noteLanded(l.landed_snapshot_id, l.sequence);
    }
    const had = this.byLanded.get(Number.parseInt(snapshotId.slice(0, 13), 16));
    if (had === undefined) return null;
    for (const seq of (Array.isArray(had) ? [...had].sort((a, b) => a - b) : [had])) {
      const l = this.store.entity<LandRecord>(LAND, `land-${seq}`);
      if (l && l.status === 'landed' && l.landed_snapshot_id === snapshotId) return l;
    }
    return null;
  }

  private landAt(seq: number): LandRecord {
    const l = this.store.entity<LandRecord>(LAND, `land-${seq}`);
    if (!l) throw new NotFound(`land land-${seq} does not exist`);
    return l;
  }

  /** One page of a change's lands, newest first (cursor key: the land sequence). */
  landsOf(changeRef: string, req: PageRequest): { change: ChangeRecord; page: Page<LandRecord> } {
    const change = this.book.change(changeRef);
    const seqs = this.index.ofChange(change.sequence);
    const page = takePage(req, walkFrom(seqs.length, (i) => seqs[i], (s) => s, req.after, 'desc'), 'desc');
    return { change, page: { rows: page.rows.map((s) => this.landAt(s)), next_cursor: page.next_cursor } };
  }

  land(id: string): LandRecord {
    const l = this.store.entity<LandRecord>(LAND, id);
    if (!l) throw new NotFound(`land ${id} does not exist`);
    return l;
  }

  landProjection(l: LandRecord, repositoryIndex: number): Record<string, unknown> {
    return { ...l, policy_decision_id: l.policy_decision_id ?? null, land_queue_entry_id: l.land_queue_entry_id ?? null, attempts: l.attempts ?? 1, landed_by: l.landed_by ?? null, bypassed_by: l.bypassed_by ?? null, bypassed: l.bypassed ?? [], submission_id: l.land_id, repository_index: repositoryIndex, selected_patchset_id: l.patchset_id, result: landResult(l) };
  }

  /**
   * A recorded idempotent result, or null; 409 when the key was used with another payload.
   * `digest` may list the digests one payload has had (the current form first).
   */
  recorded(recordId: string, digest: string | readonly string[], tx?: Txn): Record<string, unknown> | null {
    const rec = tx ? tx.entity<IdempotencyRecord>(IDEMPOTENCY, recordId) : this.store.entity<IdempotencyRecord>(IDEMPOTENCY, recordId);
    if (!rec) return null;
    if (!(typeof digest === 'string' ? [digest] : digest).includes(rec.payload_sha256)) throw new Conflict('idempotency_key was already used with another payload');
    return rec.result;
  }

  /**
   * Whether the change's selected patchset would land now in `merge` mode (the default of the
   * CLI and the page), writing nothing: the change is open with a usable selected patchset, the
   * land gates (the same function a land calls) pass on the published evidence, and its target
   * line has a head the revision still merges onto: a dry run of the land's own merge
   * (`mergeCheck`, bounded and cached). `blocked_by` is the first refusal in the land's order
   * (gates, then the line, then the merge); `merge` is reported whatever blocked it.
   */
  async readiness(changeRef: string, caller?: string | null): Promise<Readiness> {
    const change = this.book.change(changeRef);
    const no = (patchset: PatchsetRecord | null, blocked_by: string, reason: string): Readiness => ({ change, patchset, can_land: false, blocked_by, reason, base_stale: false, merge: null, requirements: [] });
    if (!isOpenChange(change.status)) return no(null, 'change_not_open', `change ${change.change_id} is ${change.status}`);
    if (!change.selected_patchset_id) return no(null, 'no_patchset', `change ${change.change_id} has no patchset`);
    const ps = this.book.patchset(change.selected_patchset_id);
    if (ps.withdrawn || ps.invalidated) return no(ps, 'patchset_not_selected', `patchset ${ps.patchset_id} is withdrawn or invalidated`);
    const target = change.land_target_line;
    const line = this.store.line(target);
    let lineRefusal: { kind: string; message: string } | null = null;
    let merge: ReadinessMerge | null = null;
    let baseStale = false;
    // A change above an unlanded one in its stack (blocked_by_change_below, judged by the gates)
    // is not merged onto the head without the change below: that merge says nothing of its land.
    const stacked = this.book.stacks.requirement(ps) !== null;
    if (!line || line.status === 'archived') lineRefusal = { kind: 'target_line_unavailable', message: `line ${target} ${line ? 'is archived; archived lines do not move' : 'does not exist'}` };
    else if (stacked) lineRefusal = null;
    else if (line.head_snapshot_id === null) lineRefusal = { kind: 'stale_base', message: `line ${target} is empty; a land needs a head to land onto` };
    else {
      const head = line.head_snapshot_id;
      const check = await this.mergeCheck(head, ps, change.change_ref);
      baseStale = check.base_stale;
      merge = { mode: 'merge', target_line: target, head_snapshot_id: head, status: check.status, conflicts: check.conflicts, conflicts_count: check.conflicts_count, note: check.note };
      if (check.status === 'conflict') {
        const paths = check.conflicts.map((c) => c.path).slice(0, 5).join(', ');
        lineRefusal = { kind: 'conflict', message: `the revision no longer merges onto the head of line ${target}: ${check.conflicts_count} conflicting path(s): ${paths}${check.conflicts_count > 5 ? ', …' : ''}` };
      } else if (check.status === 'clean' && check.untested_tree && (this.policyFlags() & POLICY_QUEUE_UNTESTED_MERGES) !== 0) {
        lineRefusal = { kind: 'queue_required', message: `the land would create a tree the CI of ${ps.patchset_id} did not test (line ${target} moved since its base); this repository lands such changes through the land queue` };
      }
    }
    await this.prepare(line?.head_snapshot_id ?? null, ps);
    const judged = this.gates(ps, undefined, undefined, { target, caller });
    const gate = judged.refusal;
    const refusal = gate ? { kind: gate.kind as string, message: gate.message } : lineRefusal;
    return { change, patchset: ps, can_land: refusal === null, blocked_by: refusal?.kind ?? null, reason: refusal?.message ?? null, base_stale: baseStale, merge, requirements: judged.requirements ?? [] };
  }

  /**
   * Whether `ps` merges onto `head` as a `merge` land would merge it, and whether `head` moved
   * past its base: a pure function of the three snapshots, so the answer is cached by (head,
   * base, revision) in a bounded LRU (a page reload, or every reviewer of one change, costs one
   * merge), and concurrent asks share one computation. The merge reads at most
   * READINESS_MERGE_BUDGET; a bigger one is `unchecked` (the land itself decides).
   */
  mergeCheck(head: string, ps: PatchsetRecord, changeRef: string): Promise<MergeCheck> {
    const key = `${head}:${ps.base_snapshot_id}:${ps.revision_snapshot_id}`;
    const hit = this.mergeChecks.get(key);
    if (hit) {
      this.mergeChecks.delete(key);
      this.mergeChecks.set(key, hit);
      return hit;
    }
    const computed = this.computeMergeCheck(head, ps, changeRef);
    this.mergeChecks.set(key, computed);
    if (this.mergeChecks.size > MERGE_CHECK_CACHE) this.mergeChecks.delete(this.mergeChecks.keys().next().value!);
    // A failure (a missing object) is not an answer to keep.
    computed.catch(() => {
      if (this.mergeChecks.get(key) === computed) this.mergeChecks.delete(key);
    });
    return computed;
  }

  private async computeMergeCheck(head: string, ps: PatchsetRecord, changeRef: string): Promise<MergeCheck> {
    const clean = (base_stale: boolean, untested_tree: boolean): MergeCheck => ({ status: 'clean', base_stale, untested_tree, conflicts: [], conflicts_count: 0, note: null });
    if (head === ps.revision_snapshot_id) return clean(false, false);
    // Stale: the head is neither the base nor an ancestor of the revision (no fast-forward), the
    // test ff-only makes; a head beyond the walk's bound counts as stale.
    const baseStale = head !== ps.base_snapshot_id && ancestryOf((id) => this.store.snapshot(id)?.parent_snapshot_ids ?? null, head, ps.revision_snapshot_id) !== 'ancestor';
    const budget = { bytes: READINESS_MERGE_BUDGET.bytes, entries: READINESS_MERGE_BUDGET.entries };
    let merged: MergedLand;
    try {
      merged = await this.mergeOnto(head, ps, 'merge', changeRef, undefined, budget);
    } catch (err) {
      if (!(err instanceof MergeBudgetSpent)) throw err;
      return { status: 'unchecked', base_stale: baseStale, untested_tree: false, conflicts: [], conflicts_count: 0, note: `the merge reads more than a readiness check does (${READINESS_MERGE_BUDGET.bytes} bytes of file content, ${READINESS_MERGE_BUDGET.entries} tree entries); the land itself decides` };
    }
    if (merged.conflicts) {
      return { status: 'conflict', base_stale: baseStale, untested_tree: false, conflicts: merged.conflicts.slice(0, READINESS_LISTED_CONFLICTS), conflicts_count: merged.conflicts.length, note: null };
    }
    return clean(baseStale, merged.root_tree_id !== merged.revision_root_tree_id);
  }

  /**
   * Land the change's selected patchset. Refusals are recorded and returned (not thrown).
   *
   * Lands onto one line run one at a time (plan, then commit), so lands racing each other never
   * fail for it. When something else moves the line between the plan and the commit (a land
   * from the queue, a line move, a push) and the caller pinned no head, the land plans again
   * onto the new head, up to MAX_LAND_ATTEMPTS times (Gerrit's submit and Mononoke's
   * pushrebase retry likewise). An attempt that finds the line moved writes nothing; the
   * attempt that decides (landed, refused by a gate, a conflict, or the last one finding the
   * line moved again) is recorded in its own commit, as one land with its `attempts`.
   */
  async submit(changeRef: string, request: LandRequest, idem?: Idempotent, by: string | null = null): Promise<LandOutcome> {
    const req = withoutNulls(request);
    if (!(LAND_MODES as readonly string[]).includes(req.mode)) throw new Invalid(`mode must be one of ${LAND_MODES.join(', ')}`);
    const mode = req.mode as LandMode;
    if (req.target_line !== undefined) validateLineName(req.target_line!);
    if (req.expected_head_snapshot_id !== undefined) requireContentId(req.expected_head_snapshot_id!, 'expected_head_snapshot_id');
    if (req.patchset_id !== undefined && typeof req.patchset_id !== 'string') throw new Invalid('patchset_id must be a string');
    if (req.bypass !== undefined && typeof req.bypass !== 'boolean') throw new Invalid('bypass must be true or false');
    if (req.bypass === true && !this.mayBypass(by)) throw new Forbidden(`${by === null ? 'an unidentified caller' : by} may not bypass the rules of this repository (only the accounts and groups of its bypass_allowed rule may)`);
    if (idem) {
      const replay = this.recorded(idem.record_id, idem.accepted);
      if (replay) return { land: this.land(String((replay.land as { land_id: string }).land_id)), replay, result: null };
    }
    const first = this.book.change(changeRef);
    const target = req.target_line ?? first.land_target_line;
    return this.oneAtATime(target, async () => {
      // Judged again in turn: a land of the same change or key may have finished while this one waited.
      if (idem) {
        const replay = this.recorded(idem.record_id, idem.accepted);
        if (replay) return { land: this.land(String((replay.land as { land_id: string }).land_id)), replay, result: null };
      }
      const change = this.book.change(changeRef);
      if (!isOpenChange(change.status)) throw new Invalid(`change ${change.change_id} is ${change.status}; only open changes land`);
      const line = this.store.line(target);
      if (!line) throw new NotFound(`line ${target} does not exist`);
      if (line.status === 'archived') throw new Conflict(`line ${target} is archived; archived lines do not move`);
      if (!change.selected_patchset_id) throw new Invalid(`change ${change.change_id} has no patchset to land`);
      // A patchset that does not exist is an unknown entity (404), not a land to record.
      if (req.patchset_id !== undefined) this.book.patchset(req.patchset_id!);
      const pinned = req.expected_head_snapshot_id !== undefined;
      for (let attempt = 1; ; attempt++) {
        const head = attempt === 1 ? line.head_snapshot_id : (this.store.line(target)?.head_snapshot_id ?? null);
        const current = attempt === 1 ? change : this.book.change(changeRef);
        let plan: Plan;
        try {
          await this.prepare(head, current.selected_patchset_id ? this.book.patchset(current.selected_patchset_id) : null);
          plan = await this.plan(current, target, head, mode, req, by);
        } catch (err) {
          if (err instanceof CairnError && err.code !== 'Corrupt' && err.code !== 'Internal') throw err;
          const land = await this.record(current, req, mode, target, head, null, { status: 'failed', kind: 'internal_error', message: 'the land failed unexpectedly (see server log)' }, attempt, by);
          throw new CairnError('Internal', String((err as Error)?.message ?? err), { land_id: land.land_id, failure_kind: 'internal_error' });
        }
        if (plan.refusal) return { land: await this.record(current, req, mode, target, plan.head, plan.patchset, plan.refusal, attempt, by), replay: null, result: null };
        const out = await this.commit(plan, req, mode, attempt, !pinned && attempt < MAX_LAND_ATTEMPTS, by, idem);
        if (out !== LINE_MOVED) return out;
        crashPoint('land:retry');
      }
    });
  }

  /** Run `fn` after every earlier call for the same line has finished (one land per line at a time). */
  private async oneAtATime<T>(line: string, fn: () => Promise<T>): Promise<T> {
    let turn = this.lineTurns.get(line);
    if (!turn) {
      turn = { mutex: new Mutex(), users: 0 };
      this.lineTurns.set(line, turn);
    }
    turn.users++;
    try {
      return await turn.mutex.runExclusive(fn);
    } finally {
      if (--turn.users === 0) this.lineTurns.delete(line);
    }
  }

  private async plan(change: ChangeRecord, target: string, head: string | null, mode: LandMode, req: LandRequest, by: string | null): Promise<Plan> {
    const plan: Plan = { change, patchset: null, target, head, refusal: null, landed: null, action: null, snapshot: null, merge: null, treeSizes: new Map() };
    const refuse = (status: LandStatus, kind: FailureKind, message: string, conflicts?: MergeConflict[], conflictCount?: number) => {
      plan.refusal = { status, kind, message, conflicts, conflict_count: conflictCount };
      return plan;
    };
    const selected = change.selected_patchset_id!;
    if (req.patchset_id !== undefined && req.patchset_id !== selected) {
      return refuse('rejected', 'patchset_not_selected', `patchset ${req.patchset_id} is not the selected patchset (${selected}) of ${change.change_id}`);
    }
    const ps = this.book.patchset(selected);
    plan.patchset = ps;
    if (ps.withdrawn || ps.invalidated) return refuse('rejected', 'patchset_not_selected', `patchset ${ps.patchset_id} is withdrawn or invalidated`);
    // An early judgement of the published evidence, so a blocked land computes no merge; the
    // judgement that counts is made again inside the land's commit.
    const gate = this.gates(ps, undefined, undefined, { target, caller: by, bypass: req.bypass === true }).refusal;
    if (gate) {
      refuse('rejected', gate.kind, gate.message);
      plan.refusal!.gate = true;
      return plan;
    }
    if (req.expected_head_snapshot_id !== undefined && req.expected_head_snapshot_id !== head) {
      return refuse('rejected', 'stale_base', `line ${target} head is ${head ?? 'empty'}, not the expected ${req.expected_head_snapshot_id}`);
    }
    if (head === null) return refuse('rejected', 'stale_base', `line ${target} is empty; a land needs a head to land onto`);
    if (head === ps.revision_snapshot_id) {
      plan.landed = head;
      plan.action = 'none';
      return plan;
    }
    // A revision over the limit a snapshot may hold (stored before the limit) never becomes a
    // line head, whatever the mode: every checkout of it would be refused.
    const revision = this.store.snapshot(ps.revision_snapshot_id);
    if (revision) await this.store.requireExpandable(revision.root_tree_id, `snapshot ${ps.revision_snapshot_id}`);
    // A fast-forward when the head is the patchset base or any ancestor of the revision (as
    // git's --ff-only), for ff-only and for direct; merge always records a merge.
    if (mode === 'ff-only') {
      const ancestry = head === ps.base_snapshot_id ? 'ancestor' : ancestryOf((id) => this.store.snapshot(id)?.parent_snapshot_ids ?? null, head, ps.revision_snapshot_id);
      if (ancestry === 'ancestor') {
        plan.landed = ps.revision_snapshot_id;
        plan.action = 'fast_forward';
        return plan;
      }
      const why = ancestry === 'walk_bound_reached' ? `not found within the ${MAX_ANCESTRY_WALK} nearest ancestors of revision ${ps.revision_snapshot_id}` : `not an ancestor of revision ${ps.revision_snapshot_id}`;
      return refuse('rejected', 'stale_base', `line ${target} head ${head} is ${why}; ff-only needs the head to be the patchset base or an ancestor of its revision`);
    }
    const merged = await this.mergeOnto(head, ps, mode, change.change_ref);
    if (merged.conflicts) {
      const paths = merged.conflicts.map((c) => c.path).slice(0, 5).join(', ');
      return refuse('failed', 'conflict', `${merged.conflict_count} conflicting path(s): ${paths}${merged.conflict_count > 5 ? ', …' : ''}`, merged.conflicts, merged.conflict_count);
    }
    // With the repository's queue flag, a land whose tree no CI has seen goes through the queue.
    if ((this.policyFlags() & POLICY_QUEUE_UNTESTED_MERGES) !== 0 && merged.root_tree_id !== merged.revision_root_tree_id) {
      return refuse('rejected', 'queue_required', `the land would create tree ${merged.root_tree_id}, which the CI of ${ps.patchset_id} did not test (the line moved since its base); this repository lands such changes through the land queue (POST land-queue)`);
    }
    plan.merge = merged.merge;
    plan.treeSizes = merged.tree_sizes;
    plan.snapshot = merged.snapshot;
    plan.landed = merged.landed;
    plan.action = merged.action;
    return plan;
  }

  /**
   * The snapshot a land of `ps` onto `head` creates (the land's merge code; the land queue builds
   * its speculations with it): a fast-forward to the revision (direct mode, when `head` is an
   * ancestor of it), else a merge of the revision into `head` — two parents in merge mode, one
   * in direct mode. Reads immutable snapshots only; writes nothing.
   */
  async mergeOnto(head: string, ps: PatchsetRecord, mode: Exclude<LandMode, 'ff-only'>, changeRef: string, pending?: PendingMerges, budget?: { bytes: number; entries: number }): Promise<MergedLand> {
    const snap = (id: string) => {
      const s = pending?.snapshots.get(id) ?? this.store.snapshot(id);
      if (!s) throw new CairnError('Internal', `snapshot ${id} is missing`);
      return s;
    };
    const theirs = snap(ps.revision_snapshot_id);
    if (mode === 'direct') {
      const ancestry = head === ps.base_snapshot_id ? 'ancestor' : ancestryOf((id) => (pending?.snapshots.get(id) ?? this.store.snapshot(id))?.parent_snapshot_ids ?? null, head, ps.revision_snapshot_id);
      if (ancestry === 'ancestor') return { conflicts: null, landed: ps.revision_snapshot_id, action: 'fast_forward', snapshot: null, merge: null, root_tree_id: theirs.root_tree_id, revision_root_tree_id: theirs.root_tree_id, tree_sizes: new Map() };
    }
    const base = snap(ps.base_snapshot_id);
    const ours = snap(head);
    let created = new Map<string, Buffer>();
    // The store reads synchronously, so awaiting them never lets the event loop run: a dry run
    // (readiness, a GET) gives other requests a turn every READINESS_SLICE_MS of merging.
    let sliceStart = performance.now();
    const breathe = async () => {
      if (!budget || performance.now() - sliceStart < READINESS_SLICE_MS) return;
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    };
    const objects = {
      readTree: async (id: string) => {
        await breathe();
        const raw = created.get(id) ?? pending?.trees.get(id);
        const entries = raw ? decodeTree(raw) : await this.store.readTree(id);
        if (budget && (budget.entries -= entries.length) < 0) throw new MergeBudgetSpent();
        return entries;
      },
      readBlob: async (id: string) => {
        await breathe();
        const staged = pending?.blobs.get(id);
        if (staged) return staged;
        // Charged before the read (the locator has the size), so a budget never reads a blob past itself.
        if (budget && (budget.bytes -= this.store.locator('blob', id)?.raw_length ?? 0) < 0) throw new MergeBudgetSpent();
        return this.store.readObject('blob', id);
      },
    };
    // Sizes (lib/domain/tree-size.ts) over stored, pending and new trees alike: a lookup for a
    // tree whose size is recorded or known, else computed once over its distinct subtrees.
    const pace = new Pace();
    const limit = this.store.maxSnapshotPaths;
    const learned = new Map<string, number>();
    const sizeOf = (id: string) => expandedSize(id, objects.readTree, (t) => learned.get(t) ?? this.store.knownSize(t), (t, n) => {
      learned.set(t, n);
      this.store.rememberSize(t, n);
    }, pace);
    // Each side within the limit (a store from before it may hold larger ones) bounds the merge.
    for (const [what, s] of [[ps.base_snapshot_id, base], [head, ours], [ps.revision_snapshot_id, theirs]] as const) {
      const paths = pathsOf(await sizeOf(s.root_tree_id));
      if (paths > limit) throw overLimit(`snapshot ${what}`, paths, limit);
    }
    const merged = await mergeTrees(objects, base.root_tree_id, ours.root_tree_id, theirs.root_tree_id, mode, this.store.walkBudget(`the merge of ${ps.patchset_id} onto ${head}`, 3));
    if (merged.root_tree_id === null) return { conflicts: merged.conflicts, conflict_count: merged.conflict_count };
    created = merged.trees;
    const paths = pathsOf(await sizeOf(merged.root_tree_id));
    if (paths > limit) throw overLimit(`the land of ${ps.patchset_id} onto ${head}`, paths, limit);
    const treeSizes = new Map<string, number>();
    for (const id of merged.trees.keys()) treeSizes.set(id, (await sizeOf(id)));
    const snapshot = encodeSnapshot({
      root_tree_id: merged.root_tree_id,
      parent_snapshot_ids: mode === 'merge' ? [head, ps.revision_snapshot_id] : [head],
      created_at_s: nowSeconds(),
      message: `land ${changeRef} ${ps.patchset_id} (${mode})`,
    });
    return { conflicts: null, landed: sha256Hex(snapshot), action: mode === 'merge' ? 'merge' : 'direct', snapshot, merge: merged, root_tree_id: merged.root_tree_id, revision_root_tree_id: theirs.root_tree_id, tree_sizes: treeSizes };
  }

  /** Stage the objects and snapshot of a computed merge (a land, or a land-queue speculation). */
  stageMerged(tx: Txn, merged: Extract<MergedLand, { conflicts: null }>): number | null {
    if (merged.merge) {
      this.stagePack(tx, PACK_KIND_OBJECT, 'blob', merged.merge.blobs);
      this.stagePack(tx, PACK_KIND_TREE, 'tree', merged.merge.trees, merged.tree_sizes);
    }
    if (merged.snapshot && !tx.hasSnapshot(merged.landed)) return tx.addSnapshot(merged.snapshot);
    return null;
  }

  /**
   * The highest land sequence (the id space `land` of serve --lease's id floors). Sequences are
   * dense from 1 but for the gaps an id floor leaves: a sequence in a gap names no land (404).
   */
  get highestLand(): number {
    return this.index.highest;
  }

  private newRecord(tx: Txn, change: ChangeRecord, req: LandRequest, mode: LandMode, target: string, head: string | null, ps: PatchsetRecord | null, attempts: number, by: string | null): LandRecord {
    const sequence = Math.max(this.index.highest, this.store.idFloor('land')) + tx.stagedKeys(NEW_LAND).length + 1;
    const id = `land-${sequence}`;
    tx.stage(NEW_LAND, id, true);
    const now = nowSeconds();
    return {
      land_id: id,
      sequence,
      change_id: change.change_id,
      change_ref: change.change_ref,
      task_id: change.task_id,
      patchset_id: ps?.patchset_id ?? req.patchset_id ?? change.selected_patchset_id,
      target_line: target,
      mode,
      status: 'landed',
      failure_kind: null,
      failure_message: null,
      conflicts: [],
      conflicts_count: 0,
      expected_head_snapshot_id: req.expected_head_snapshot_id ?? null,
      target_head_before: head,
      landed_snapshot_id: null,
      line_action: null,
      policy_decision_id: null,
      stale_patchset_ids: [],
      attempts,
      created_at_s: now,
      finished_at_s: now,
      // Last, and only when named: a land nobody named keeps the bytes it had before the field.
      ...(by !== null ? { landed_by: by } : {}),
    };
  }

  private stageLand(tx: Txn, land: LandRecord): void {
    tx.emitAll(landEvents(land));
    tx.upsert(LAND, land.land_id, land);
    tx.onPublish(() => this.track(land));
  }

  /**
   * Record a refused land (its own transaction). A refusal by the gates is judged again here,
   * on the evidence as this transaction sees it, and that decision is recorded with the land.
   */
  private record(change: ChangeRecord, req: LandRequest, mode: LandMode, target: string, head: string | null, ps: PatchsetRecord | null, refusal: NonNullable<Plan['refusal']>, attempt: number, by: string | null): Promise<LandRecord> {
    return this.store.transact((tx) => {
      const land = this.newRecord(tx, change, req, mode, target, head, ps, attempt, by);
      const conflicts = refusal.conflicts ?? [];
      let { status, kind, message } = refusal;
      if (refusal.gate && ps) {
        const judged = this.gates(tx.entity<PatchsetRecord>(PATCHSET, ps.patchset_id) ?? ps, tx, undefined, { target, caller: by, bypass: req.bypass === true });
        land.policy_decision_id = judged.policy_decision_id;
        if (judged.refusal) ({ kind, message } = judged.refusal);
        else ({ status, kind, message } = { status: 'failed', kind: 'target_update_failed', message: `the evidence of patchset ${ps.patchset_id} changed during the land; retry` });
      }
      Object.assign(land, { status, failure_kind: kind, failure_message: message, conflicts: conflicts.slice(0, MAX_LISTED_CONFLICTS), conflicts_count: refusal.conflict_count ?? conflicts.length });
      this.stageLand(tx, land);
      return land;
    });
  }

  /**
   * The land's commit. With `retry`, a line that moved since the plan stages nothing and answers
   * LINE_MOVED (the caller plans again); without, it is recorded `target_update_failed`.
   */
  private commit(plan: Plan, req: LandRequest, mode: LandMode, attempt: number, retry: boolean, by: string | null, idem?: Idempotent): Promise<LandOutcome | typeof LINE_MOVED> {
    const ps = plan.patchset!;
    return this.store.transact((tx) => {
      if (idem) {
        const replay = this.recorded(idem.record_id, idem.accepted, tx);
        if (replay) return { land: tx.entity<LandRecord>(LAND, String((replay.land as { land_id: string }).land_id))!, replay, result: null };
      }
      if (retry && (tx.line(plan.target)?.head_snapshot_id ?? null) !== plan.head) return LINE_MOVED;
      const land = this.newRecord(tx, plan.change, req, mode, plan.target, plan.head, ps, attempt, by);
      const landed = this.landIn(tx, land, ps, { target: plan.target, head: plan.head, landed: plan.landed!, action: plan.action! }, { target: plan.target, caller: by, bypass: req.bypass === true }, () => {
        if (plan.merge) {
          this.stagePack(tx, PACK_KIND_OBJECT, 'blob', plan.merge.blobs);
          this.stagePack(tx, PACK_KIND_TREE, 'tree', plan.merge.trees, plan.treeSizes);
        }
        if (plan.snapshot && !tx.hasSnapshot(plan.landed!)) tx.addSnapshot(plan.snapshot);
      });
      let result: Record<string, unknown> | null = null;
      if (landed && idem) {
        result = idem.result(tx, land);
        const rec: IdempotencyRecord = { contract: String(result.contract), idempotency_key: idem.record_id.slice(idem.record_id.indexOf(':') + 1), payload_sha256: idem.digest, result: storedResult(result), created_at_s: land.finished_at_s };
        tx.upsert(IDEMPOTENCY, idem.record_id, rec);
      }
      return { land, replay: null, result };
    });
  }

  /**
   * Land the queue's tested speculation of `ps` (in the queue's transaction): the line must still
   * be at `head` (the snapshot the speculation was built on), and the gates are judged with the
   * CI evidence of the speculation itself (`ci`) in place of the patchset's own. Returns the land
   * record, landed or refused.
   */
  landSpeculationIn(tx: Txn, args: { change: ChangeRecord; patchset: PatchsetRecord; mode: LandMode; target: string; head: string; landed: string; action: LineAction; entry_id: string; ci: SpeculationCi; by: string | null; bypass?: boolean }): LandRecord {
    const land = this.newRecord(tx, args.change, { mode: args.mode, expected_head_snapshot_id: args.head }, args.mode, args.target, args.head, args.patchset, 1, args.by);
    land.land_queue_entry_id = args.entry_id;
    this.landIn(tx, land, args.patchset, { target: args.target, head: args.head, landed: args.landed, action: args.action }, { target: args.target, caller: args.by, bypass: args.bypass === true }, () => {}, args.ci);
    return land;
  }

  /**
   * The land's commit after its plan: the guards (line, change, patchset unchanged), the gates
   * judged as this transaction sees the evidence, then the writes (`stageObjects` stages what
   * the landed snapshot needs). A refusal is staged as the land record. Returns whether it landed.
   */
  private landIn(tx: Txn, land: LandRecord, ps: PatchsetRecord, to: { target: string; head: string | null; landed: string; action: LineAction }, opts: GateOptions, stageObjects: () => void, ci?: SpeculationCi): boolean {
    const change = tx.entity<ChangeRecord>(CHANGE, land.change_id)!;
    const current = tx.entity<PatchsetRecord>(PATCHSET, ps.patchset_id) ?? ps;
    const line = tx.line(to.target);
    let why: string | null = null;
    if ((line?.head_snapshot_id ?? null) !== to.head) {
      const tries = (land.attempts ?? 1) > 1 ? `; planned ${land.attempts} times, the line moved each time` : land.expected_head_snapshot_id !== null && !land.land_queue_entry_id ? ' (the land pinned its head, so it does not retry)' : '';
      why = `line ${to.target} moved during the land (now ${line?.head_snapshot_id ?? 'empty'})${tries}`;
    }
    else if (line?.status === 'archived') why = `line ${to.target} was archived during the land`;
    else if (!isOpenChange(change.status)) why = `change ${change.change_id} became ${change.status} during the land`;
    else if (change.selected_patchset_id !== ps.patchset_id) why = `change ${change.change_id} selected another patchset during the land`;
    else if (current.withdrawn || current.invalidated) why = `patchset ${ps.patchset_id} was withdrawn or invalidated during the land`;
    if (why !== null) {
      Object.assign(land, { status: 'failed', failure_kind: 'target_update_failed', failure_message: why });
      this.stageLand(tx, land);
      return false;
    }
    // The judgement that counts: the evidence as this commit sees it (published, and what
    // earlier transactions of its batch staged: a review, an attestation, a CI job's move),
    // with the policy evaluated afresh and that decision recorded in this commit.
    const judged = this.gates(current, tx, ci, opts);
    land.policy_decision_id = judged.policy_decision_id;
    if (judged.refusal) {
      Object.assign(land, { status: 'rejected', failure_kind: judged.refusal.kind, failure_message: judged.refusal.message });
      this.stageLand(tx, land);
      return false;
    }
    const now = nowSeconds();
    stageObjects();
    if (to.action !== 'none') {
      const moved = { name: to.target, status: 'active' as const, head_snapshot_id: to.landed, updated_at_s: now };
      tx.emitAll(lineEvents(to.target, tx.line(to.target), moved));
      tx.setLine(moved);
    }
    // Other open patchsets targeting this line whose base is no longer its head.
    const stale: string[] = [];
    for (const other of this.book.listChanges({ open: true })) {
      if (other.change_id === change.change_id || !isOpenChange(other.status) || other.land_target_line !== to.target) continue;
      for (const p of this.book.patchsetsOf(other.change_id).patchsets) {
        const cur = tx.entity<PatchsetRecord>(PATCHSET, p.patchset_id)!;
        if (cur.withdrawn || cur.invalidated || cur.base_stale || cur.base_snapshot_id === to.landed) continue;
        this.book.upsertPatchset(tx, { ...cur, base_stale: true, base_stale_land_id: land.land_id });
        stale.push(cur.patchset_id);
      }
    }
    Object.assign(land, { landed_snapshot_id: to.landed, line_action: to.action, stale_patchset_ids: stale, finished_at_s: now });
    if (judged.bypassed && judged.bypassed.length > 0) bypassedBy(land, opts.caller ?? null, judged.bypassed);
    this.stageLand(tx, land);
    const landedChange: ChangeRecord = { ...change, status: 'landed', land_target_line: to.target, landed_at_s: now, updated_at_s: now };
    this.book.upsertChange(tx, landedChange);
    settlePromotionIn(tx, this.book, landedChange, land);
    return true;
  }

  /** `sizes`: each new tree's expanded size, recorded in its index entry (storage-layout.md §8). */
  private stagePack(tx: Txn, kind: PackKind, objectKind: 'blob' | 'tree', objects: Map<string, Buffer>, sizes?: Map<string, number>): void {
    stagePack(tx, kind, objectKind, objects, sizes);
  }
}

/** Mark a land as landed by a bypass of `who` over `refusals` (its last fields, written only then). */
function bypassedBy(land: LandRecord, who: string | null, refusals: readonly GateRefusal[]): void {
  if (who !== null) land.bypassed_by = who;
  land.bypassed = refusals.map((r) => ({ kind: r.kind, message: r.message }));
}

/** What the land did: the line move and landed snapshot, or the failure (derived from the record). */
export function landResult(l: LandRecord): Record<string, unknown> {
  if (l.status === 'landed') {
    return { outcome: 'landed', line_action: l.line_action, target_head_before: l.target_head_before, landed_snapshot_id: l.landed_snapshot_id, stale_patchset_count: l.stale_patchset_ids.length };
  }
  return { outcome: l.status, failure_kind: l.failure_kind, failure_message: l.failure_message, conflicts_count: l.conflicts_count };
}

export const TASK_LAND_CONTRACT = 'task-land-atomic/v1';

export interface TaskLandBody extends LandRequest {
  contract: string;
  idempotency_key: string;
  task_or_change_ref: string;
}

/** task-land (contract task-land-atomic/v1): task resolution, land, idempotent result. */
export async function taskLand(desk: LandDesk, book: WorkflowBook, body: TaskLandBody, repositoryIndex: number, by: string | null = null): Promise<{ result: Record<string, unknown>; land: LandRecord; refused: boolean }> {
  if (body.contract !== TASK_LAND_CONTRACT) throw new Invalid(`contract must be ${TASK_LAND_CONTRACT}`);
  const key = requireIdempotencyKey(body.idempotency_key);
  if (typeof body.task_or_change_ref !== 'string' || body.task_or_change_ref === '') throw new Invalid('task_or_change_ref is required');
  const { idempotency_key: _k, ...payload } = body;
  void _k;
  const recordId = idempotencyRecordId(TASK_LAND_CONTRACT, key);
  const digest = payloadDigest(payload);
  const digests = [digest, keptNullsPayloadDigest(payload)];
  const early = desk.recorded(recordId, digests);
  if (early) return { result: replayedResult(early, repositoryIndex), land: desk.land(String((early.land as { land_id: string }).land_id)), refused: false };
  const change = resolveLandable(book, body.task_or_change_ref);
  const outcome = await desk.submit(change.change_ref, body, {
    record_id: recordId,
    digest,
    accepted: digests,
    result: (tx, land) => {
      const c = tx.entity<ChangeRecord>(CHANGE, land.change_id)!;
      const p = tx.entity<PatchsetRecord>(PATCHSET, land.patchset_id!)!;
      const t = book.taskIn(tx, land.task_id);
      return {
        contract: TASK_LAND_CONTRACT,
        replay: false,
        task_id: land.task_id,
        change_id: land.change_id,
        change_ref: land.change_ref,
        patchset_id: land.patchset_id,
        target_line: land.target_line,
        target_snapshot_id: land.target_head_before,
        landed_snapshot_id: land.landed_snapshot_id,
        task: book.taskProjection(t, repositoryIndex),
        change: { ...book.changeProjection(c, repositoryIndex), status: 'landed', landed_at_s: land.finished_at_s, updated_at_s: land.finished_at_s, land_target_line: land.target_line },
        patchset: book.patchsetProjection(p, repositoryIndex),
        land: desk.landProjection(land, repositoryIndex),
        history_promotion: promotionReceiptIn(tx, c, repositoryIndex),
      };
    },
  }, by);
  if (outcome.replay) return { result: replayedResult(outcome.replay, repositoryIndex), land: outcome.land, refused: false };
  if (outcome.result) return { result: outcome.result, land: outcome.land, refused: false };
  return { result: {}, land: outcome.land, refused: true };
}

/** A task names its one landable change (open, with a selected patchset); otherwise the exact change. */
export function resolveLandable(book: WorkflowBook, ref: string): ChangeRecord {
  if (/^(task-)?[1-9][0-9]*$/.test(ref)) {
    const task = book.task(ref);
    const landable = book.changesOf(task.task_id).filter((c) => isOpenChange(c.status) && c.selected_patchset_id !== null);
    if (landable.length !== 1) throw new Invalid(`task ${task.task_id} has ${landable.length} landable changes; name the change`, { landable_change_refs: landable.map((c) => c.change_ref) });
    return landable[0];
  }
  return book.change(ref);
}
