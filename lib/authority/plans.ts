// Plans ("sprints") of one authority: plans with immutable revisions, each backed by one
// Markdown artifact packed into the content store. Each mutation is one transaction of the
// authority's store: the plans.log record and, when the artifact is new, its pack and blob
// locator commit together (the pack is uploaded to staging first, like any push).
import { blobId, isContentId } from '../domain/content.js';
import { Conflict, Invalid, NotFound } from '../domain/errors.js';
import {
  checkStatusMove,
  itemsFromMarkdown,
  markdownFromItems,
  matchesAll,
  normalizeStatus,
  normalizeTerms,
  revisionContentDigest,
  revisionId,
  validateItemRef,
  type PlanItem,
  type PlanStatus,
} from '../domain/plans.js';
import { nowSeconds } from '../domain/repository.js';
import { requireTitle } from '../domain/workflow/rules.js';
import { cleanRelativePath } from '../domain/paths.js';
import type { ContentStore, Txn } from '../store/content-store.js';
import { planEvents } from '../domain/events.js';
import { Corrupt } from '../domain/errors.js';
import { buildPack, PACK_KIND_OBJECT, type PackEntry } from '../store/pack.js';

export const MARKDOWN = 'text/markdown';

export interface PackedArtifact {
  blob_id: string;
  pack_id: string;
  size: number;
  sha256: string;
  media_type: string;
}

export interface PlanRecord {
  plan_id: string;
  title: string;
  status: PlanStatus;
  head_revision_id: string;
  revision_count: number;
  created_at_s: number;
  updated_at_s: number;
}

export interface RevisionRecord {
  plan_revision_id: string;
  plan_id: string;
  parent_revision_id: string | null;
  revision_number: number;
  title: string;
  summary: string | null;
  artifact_path: string;
  artifact_selector: string | null;
  artifact_heading: string;
  items: PlanItem[];
  packed_artifact: PackedArtifact;
  created_at_s: number;
}

interface PlanLogRecord {
  plan?: PlanRecord;
  revision?: RevisionRecord;
}

export interface RevisionPayload {
  title?: string;
  status?: string;
  summary?: string | null;
  artifact_path: string;
  artifact_selector?: string | null;
  artifact_heading: string;
  items?: { plan_item_ref?: string | null; text?: string | null; checkbox_state?: string; heading_path?: string[] }[];
  artifact_body?: string;
  packed_artifact?: Partial<PackedArtifact> & { blob_id: string };
  expected_head_revision_id?: string | null;
}


export function planProjection(plan: PlanRecord): Record<string, unknown> {
  return { ...plan, open: plan.status === 'draft' };
}

export function revisionProjection(rev: RevisionRecord): Record<string, unknown> {
  return { ...rev };
}

/** The revision content a payload describes, validated before any transaction runs. */
export interface Draft {
  title: string;
  summary: string | null;
  artifact_path: string;
  artifact_selector: string | null;
  artifact_heading: string;
  items: PlanItem[];
  blob: string;
  /** A pack holding the artifact, built when the store lacked the blob (the commit writes it). */
  staged: { packId: string; entry: PackEntry; bytes: Buffer } | null;
  descriptor: (Partial<PackedArtifact> & { blob_id: string }) | undefined;
}

export class PlanBook {
  private readonly plans = new Map<string, PlanRecord>();
  /** The highest plan-N used (ids continue past it, and past the id floor: gaps are possible). */
  highestPlan = 0;
  private readonly revisions = new Map<string, RevisionRecord>();
  private readonly byPlan = new Map<string, string[]>();
  /** `<plan_id> NUL <content digest>` → the newest revision of that plan with that content. */
  private readonly byContent = new Map<string, string>();

  private constructor(private readonly store: ContentStore) {}

  /** Replay plans.log (its committed records). */
  static open(store: ContentStore): PlanBook {
    const book = new PlanBook(store);
    for (const rec of store.logRecords('plans')) {
      let record: PlanLogRecord;
      try {
        record = JSON.parse(rec.body.toString('utf8')) as PlanLogRecord;
      } catch {
        throw new Corrupt(`plans.log: record at byte ${rec.offset} is not JSON`);
      }
      book.apply(record);
    }
    return book;
  }

  private apply(record: PlanLogRecord): void {
    if (record.revision) {
      this.revisions.set(record.revision.plan_revision_id, record.revision);
      const list = this.byPlan.get(record.revision.plan_id) ?? [];
      list.push(record.revision.plan_revision_id);
      this.byPlan.set(record.revision.plan_id, list);
      this.byContent.set(contentKey(record.revision.plan_id, recordContent(record.revision)), record.revision.plan_revision_id);
    }
    if (record.plan) {
      this.plans.set(record.plan.plan_id, record.plan);
      const seq = Number(/^plan-([0-9]+)$/.exec(record.plan.plan_id)?.[1] ?? 0);
      if (seq > this.highestPlan) this.highestPlan = seq;
    }
  }

  /** Stage one plans.log record; memory follows once the commit is durable. */
  private stageRecord(tx: Txn, record: PlanLogRecord): void {
    const before = record.plan ? (tx.staged<PlanRecord>('plan', record.plan.plan_id) ?? this.plans.get(record.plan.plan_id)) : undefined;
    tx.emitAll(planEvents(before, record.plan, record.revision));
    tx.append('plans', Buffer.from(JSON.stringify(record), 'utf8'));
    if (record.plan) tx.stage('plan', record.plan.plan_id, record.plan);
    if (record.revision) {
      tx.stage('revision', record.revision.plan_revision_id, record.revision);
      tx.stage(REVISION_CONTENT, contentKey(record.revision.plan_id, recordContent(record.revision)), record.revision.plan_revision_id);
    }
    tx.onPublish(() => this.apply(record));
  }

  private planIn(tx: Txn, planId: string): PlanRecord {
    const plan = tx.staged<PlanRecord>('plan', planId) ?? this.plans.get(planId);
    if (!plan) throw new NotFound(`plan ${planId} does not exist`);
    return plan;
  }

  private revisionIn(tx: Txn, id: string): RevisionRecord | undefined {
    return tx.staged<RevisionRecord>('revision', id) ?? this.revisions.get(id);
  }

  // ------------------------------------------------------------ reads

  list(artifactPath?: string): PlanRecord[] {
    const all = [...this.plans.values()];
    const filtered = artifactPath === undefined ? all : all.filter((p) => this.revisions.get(p.head_revision_id)!.artifact_path === artifactPath);
    return filtered;
  }

  plan(planId: string): PlanRecord {
    const plan = this.plans.get(planId);
    if (!plan) throw new NotFound(`plan ${planId} does not exist`);
    return plan;
  }

  head(plan: PlanRecord): RevisionRecord {
    return this.revisions.get(plan.head_revision_id)!;
  }

  revisionsOf(planId: string): RevisionRecord[] {
    this.plan(planId);
    return (this.byPlan.get(planId) ?? []).map((id) => this.revisions.get(id)!).reverse();
  }

  revision(planId: string, revisionIdValue: string): RevisionRecord {
    this.plan(planId);
    const rev = this.revisions.get(revisionIdValue);
    if (!rev || rev.plan_id !== planId) throw new NotFound(`revision ${revisionIdValue} does not exist in plan ${planId}`);
    return rev;
  }

  async artifactBody(rev: RevisionRecord): Promise<string> {
    return (await this.store.readObject('blob', rev.packed_artifact.blob_id)).toString('utf8');
  }

  /** Ids of open plans whose title, summary, heading and item texts contain every term. */
  byContains(terms: readonly string[]): string[] {
    const normalized = normalizeTerms(terms);
    if (normalized.length === 0) return [];
    return this.openMatching(normalized).map((p) => p.plan_id);
  }

  openMatching(normalizedTerms: readonly string[]): PlanRecord[] {
    const out: PlanRecord[] = [];
    for (const plan of this.plans.values()) {
      if (plan.status !== 'draft') continue;
      const head = this.head(plan);
      const texts = [head.title, head.summary ?? '', head.artifact_heading, ...head.items.map((i) => i.text)];
      if (matchesAll(texts, normalizedTerms)) out.push(plan);
    }
    return out;
  }

  /** Resolve task linkage (spec: "Task linkage rules"). */
  resolveLinkage(input: { plan_id?: string | null; origin_plan_revision_id?: string | null; plan_item_ref?: string | null }) {
    const planId = input.plan_id ?? null;
    const revId = input.origin_plan_revision_id ?? null;
    const ref = input.plan_item_ref ?? null;
    if (planId === null && revId === null) {
      if (ref !== null) throw new Invalid('plan_item_ref needs Plan linkage: give plan_id or origin_plan_revision_id');
      return { plan_id: null, origin_plan_revision_id: null, plan_item_ref: null };
    }
    let rev: RevisionRecord;
    if (revId !== null) {
      const found = this.revisions.get(revId);
      if (!found) throw new NotFound(`revision ${revId} does not exist in this repository`);
      if (planId !== null && found.plan_id !== planId) throw new Invalid(`revision ${revId} belongs to plan ${found.plan_id}, not ${planId}`);
      rev = found;
    } else {
      rev = this.head(this.plan(planId!));
    }
    if (ref !== null && !rev.items.some((i) => i.plan_item_ref === ref)) throw new NotFound(`item ${ref} does not exist in revision ${rev.plan_revision_id}`);
    return { plan_id: rev.plan_id, origin_plan_revision_id: rev.plan_revision_id, plan_item_ref: ref };
  }

  // ------------------------------------------------------------ writes

  create(payload: RevisionPayload): Promise<{ plan: PlanRecord; revision: RevisionRecord }> {
    if (payload.title === undefined) throw new Invalid('title is required to create a plan');
    const status = normalizeStatus(payload.status ?? 'draft');
    const draft = this.prepare(payload, payload.title);
    return this.store.transact((tx) => this.createIn(tx, draft, status));
  }

  /** Stage a new plan and its first revision in `tx` (task-start `plan.action: create`). */
  createIn(tx: Txn, draft: Draft, status: PlanRecord['status']): { plan: PlanRecord; revision: RevisionRecord } {
    {
      const planId = `plan-${Math.max(this.highestPlan, this.store.idFloor('plan')) + tx.stagedKeys('plan').filter((id) => !this.plans.has(id)).length + 1}`;
      const revision = this.buildRevision(tx, planId, null, 1, draft);
      const now = nowSeconds();
      const plan: PlanRecord = { plan_id: planId, title: revision.title, status, head_revision_id: revision.plan_revision_id, revision_count: 1, created_at_s: now, updated_at_s: now };
      this.stageRecord(tx, { plan, revision });
      return { plan, revision };
    }
  }

  /** Validate a create payload into a draft (outside any transaction). */
  draftForCreate(payload: RevisionPayload): { draft: Draft; status: PlanRecord['status'] } {
    if (payload.title === undefined) throw new Invalid('title is required to create a plan');
    return { status: normalizeStatus(payload.status ?? 'draft'), draft: this.prepare(payload, payload.title) };
  }

  /** Validate a revise payload into a draft (outside any transaction). */
  draftForRevise(planId: string, payload: RevisionPayload): Draft {
    const published = this.plan(planId);
    return this.prepare(payload, payload.title ?? this.head(published).title);
  }

  revise(planId: string, payload: RevisionPayload): Promise<{ plan: PlanRecord; revision: RevisionRecord; replayed: boolean }> {
    const published = this.plan(planId);
    const draft = this.prepare(payload, payload.title ?? this.head(published).title);
    return this.store.transact((tx) => this.reviseIn(tx, planId, payload, draft));
  }

  /** Stage a revision in `tx` (task-start `plan.action: revise`); an exact existing revision replays. */
  reviseIn(tx: Txn, planId: string, payload: RevisionPayload, draft: Draft): { plan: PlanRecord; revision: RevisionRecord; replayed: boolean } {
    {
      const plan = this.planIn(tx, planId);
      const head = this.revisionIn(tx, plan.head_revision_id)!;
      if (payload.title === undefined) draft.title = head.title;
      const expected = payload.expected_head_revision_id;
      const parent = expected ?? head.plan_revision_id;
      // The exact revision already exists (a replay of an applied revise): return it.
      const existing = this.revisionIn(tx, revisionId(planId, parent, contentOf(draft)));
      // A replay must be exact: a different status is a new request, not a replay.
      const sameStatus = payload.status === undefined || normalizeStatus(payload.status) === plan.status;
      if (existing && existing.plan_id === planId && sameStatus) return { plan, revision: existing, replayed: true };
      if (expected !== undefined && expected !== null && expected !== head.plan_revision_id) {
        throw new Conflict(`plan ${planId} head is ${head.plan_revision_id}, not the expected ${expected}`);
      }
      if (plan.status !== 'draft') throw new Invalid(`plan ${planId} is ${plan.status}; only open plans take new revisions`);
      const status = payload.status === undefined ? plan.status : normalizeStatus(payload.status);
      checkStatusMove(plan.status, status);
      const revision = this.buildRevision(tx, planId, head.plan_revision_id, plan.revision_count + 1, draft);
      const now = nowSeconds();
      const next: PlanRecord = { ...plan, title: revision.title, status, head_revision_id: revision.plan_revision_id, revision_count: plan.revision_count + 1, updated_at_s: now };
      this.stageRecord(tx, { plan: next, revision });
      return { plan: next, revision, replayed: false };
    }
  }

  /**
   * The revision of `planId` whose content (everything but the parent link) is the one `payload`
   * describes, whatever its parent — the newest such revision — or undefined. A payload without
   * a title means the head's title, as in a revise; a payload whose `status` is not the plan's
   * current status names no existing revision (a status change is a new request). An index
   * lookup (per plan, by content digest), as `tx` sees the plans; nothing is staged.
   */
  exactRevisionIn(tx: Txn, planId: string, payload: RevisionPayload, draft: Draft): RevisionRecord | undefined {
    const plan = this.planIn(tx, planId);
    if (payload.status !== undefined && normalizeStatus(payload.status) !== plan.status) return undefined;
    const title = payload.title ?? this.revisionIn(tx, plan.head_revision_id)!.title;
    const key = contentKey(planId, contentOf({ ...draft, title }));
    const id = tx.staged<string>(REVISION_CONTENT, key) ?? this.byContent.get(key);
    const rev = id === undefined ? undefined : this.revisionIn(tx, id);
    return rev && rev.plan_id === planId ? rev : undefined;
  }

  /** A plan and revision as seen by `tx`. */
  planAndRevisionIn(tx: Txn, planId: string, revisionIdValue: string): { plan: PlanRecord; revision: RevisionRecord | undefined } {
    const plan = this.planIn(tx, planId);
    const revision = this.revisionIn(tx, revisionIdValue);
    return { plan, revision: revision && revision.plan_id === planId ? revision : undefined };
  }

  setStatus(planId: string, statusValue: string): Promise<PlanRecord> {
    this.plan(planId);
    const status = normalizeStatus(statusValue);
    return this.store.transact((tx) => {
      const plan = this.planIn(tx, planId);
      checkStatusMove(plan.status, status);
      if (status === plan.status) return plan;
      const next = { ...plan, status, updated_at_s: nowSeconds() };
      this.stageRecord(tx, { plan: next });
      return next;
    });
  }

  /**
   * Validate a payload into a draft (no transaction needed) and, when the artifact's blob is
   * not stored yet, pack it into its own object pack for the transaction to commit.
   */
  private prepare(p: RevisionPayload, title: string): Draft {
    requireTitle(title, 'title');
    const artifactPath = cleanRelativePath(p.artifact_path, 'artifact_path');
    if (p.artifact_heading.trim() === '') throw new Invalid('artifact_heading must be non-empty');
    let items: PlanItem[];
    if (p.items && p.items.length > 0) {
      items = p.items.map((i, n) => {
        // Every item field is optional; a missing (or null) text projects as "".
        const text = i.text ?? '';
        if (typeof text !== 'string') throw new Invalid(`items[${n}].text must be a string`);
        if (i.plan_item_ref !== undefined && i.plan_item_ref !== null) validateItemRef(i.plan_item_ref);
        const state = i.checkbox_state ?? 'unchecked';
        if (state !== 'checked' && state !== 'unchecked') throw new Invalid(`items[${n}].checkbox_state must be checked or unchecked`);
        return { plan_item_ref: i.plan_item_ref ?? null, text, checkbox_state: state, heading_path: i.heading_path ?? [p.artifact_heading] };
      });
    } else if (p.artifact_body !== undefined) {
      items = itemsFromMarkdown(p.artifact_body, p.artifact_heading);
    } else {
      items = [];
    }
    const refs = items.map((i) => i.plan_item_ref).filter((r): r is string => r !== null);
    if (new Set(refs).size !== refs.length) throw new Invalid('plan_item_ref values must be unique within a revision');

    let blob: string;
    let body: Buffer | null = null;
    if (p.artifact_body !== undefined) {
      body = Buffer.from(p.artifact_body, 'utf8');
      blob = blobId(body);
      if (p.packed_artifact && p.packed_artifact.blob_id !== blob) throw new Invalid('packed_artifact does not describe artifact_body');
    } else if (p.packed_artifact) {
      blob = p.packed_artifact.blob_id;
    } else {
      body = Buffer.from(markdownFromItems(p.artifact_heading, items), 'utf8');
      blob = blobId(body);
    }
    if (p.packed_artifact) checkDescriptorShape(p.packed_artifact);
    let staged: Draft['staged'] = null;
    if (body && !this.store.has('blob', blob)) {
      const pack = buildPack(PACK_KIND_OBJECT, [{ id: blob, raw: body }]);
      staged = { packId: pack.packId, entry: pack.entries[0], bytes: pack.bytes };
    }
    return { title, summary: p.summary ?? null, artifact_path: artifactPath, artifact_selector: p.artifact_selector ?? null, artifact_heading: p.artifact_heading, items, blob, staged, descriptor: p.packed_artifact };
  }

  /** The revision record of a draft; stages the artifact's pack and locator when the blob is new. */
  private buildRevision(tx: Txn, planId: string, parent: string | null, number: number, d: Draft): RevisionRecord {
    let loc = tx.locator('blob', d.blob);
    if (d.descriptor) this.checkDescriptor(d.descriptor, loc);
    if (!loc) {
      if (!d.staged) throw new NotFound(`artifact blob ${d.blob} is not in the content store`);
      const e = d.staged.entry;
      loc = { kind: 'blob', id: d.blob, pack_id: d.staged.packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32 };
      tx.writePack(PACK_KIND_OBJECT, d.staged.packId, d.staged.bytes);
      tx.addLocator(loc);
    }
    return {
      plan_revision_id: revisionId(planId, parent, contentOf(d)),
      plan_id: planId,
      parent_revision_id: parent,
      revision_number: number,
      title: d.title,
      summary: d.summary,
      artifact_path: d.artifact_path,
      artifact_selector: d.artifact_selector,
      artifact_heading: d.artifact_heading,
      items: d.items,
      packed_artifact: { blob_id: d.blob, pack_id: loc.pack_id, size: loc.raw_length, sha256: d.blob, media_type: MARKDOWN },
      created_at_s: nowSeconds(),
    };
  }

  /** A descriptor from a compatible client must name a blob the store holds, and agree with it. */
  private checkDescriptor(d: Partial<PackedArtifact> & { blob_id: string }, loc: { pack_id: string; raw_length: number } | null): void {
    if (!loc) throw new NotFound(`packed_artifact blob ${d.blob_id} is not in the content store`);
    if (d.pack_id !== undefined && d.pack_id !== loc.pack_id) throw new Invalid('packed_artifact.pack_id disagrees with the stored blob');
    if (d.size !== undefined && d.size !== loc.raw_length) throw new Invalid('packed_artifact.size disagrees with the stored blob');
    if (d.sha256 !== undefined && d.sha256 !== d.blob_id) throw new Invalid('packed_artifact.sha256 disagrees with the stored blob');
  }
}

function checkDescriptorShape(d: Partial<PackedArtifact> & { blob_id: string }): void {
  if (!isContentId(d.blob_id)) throw new Invalid('packed_artifact.blob_id must be a sha256 id');
  if (d.media_type !== undefined && d.media_type !== MARKDOWN) throw new Invalid(`packed_artifact.media_type must be ${MARKDOWN}`);
}

/** The content a revision id is computed over (unchanged from format v0). */
function contentOf(d: Pick<Draft, 'title' | 'summary' | 'artifact_path' | 'artifact_selector' | 'artifact_heading' | 'items' | 'blob'>) {
  return { title: d.title, summary: d.summary, artifact_path: d.artifact_path, artifact_selector: d.artifact_selector, artifact_heading: d.artifact_heading, items: d.items, blob: d.blob };
}

/** The same content read back from a stored revision. */
function recordContent(r: RevisionRecord) {
  return contentOf({ ...r, blob: r.packed_artifact.blob_id });
}

/** Batch-staged content index entries (revisions staged by earlier transactions of the batch). */
const REVISION_CONTENT = 'plan:revision-content';

function contentKey(planId: string, content: ReturnType<typeof contentOf>): string {
  return `${planId}\u0000${revisionContentDigest(content)}`;
}
