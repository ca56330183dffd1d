// Reviews, review requests, attestations, policy decisions and patchset CI of one authority
// (spec: "Review", "Attestation", "Policy decision", the review / attestation / policy / CI rows
// of "Changes, patchsets, reviews, policy, CI, Land"; docs/api.md "Reviews, attestation, policy,
// patchset CI"). Records are workflow.log upserts (storage-layout.md §17), one transaction per
// operation. The records stay on disk (the store reads one by its id, behind its bounded cache);
// memory holds the compact index of lib/domain/workflow/review-index.ts (per change and patchset
// the counts that name its records, each change's latest group request, the decision chain's
// head), which follows each commit through `onPublish` and opens from its checkpoint section
// and the log's tail, or, without a usable section, from the records. CI evidence is never
// written here: it is derived from the patchset's kind-7 job records.
import { Corrupt, Invalid, NotFound } from '../../domain/errors.js';
import { JOB_KIND_PATCHSET_CI } from '../../domain/job-kinds.js';
import { STATE_FAILED, STATE_QUEUED, STATE_RUNNING, STATE_SUCCEEDED, type JobRecord } from '../../domain/jobs.js';
import { compareKeys, takePage, walkFrom, type CursorKey, type Page, type PageRequest } from '../../domain/paging.js';
import { changeSeqOf, patchsetSeqOf, REVIEW_SECTION, REVIEW_TYPES, ReviewIndex, type InboxRequest } from '../../domain/workflow/review-index.js';
import { nowSeconds } from '../../domain/repository.js';
import {
  ATTESTATION,
  attestationId,
  checkSuppliedReviewId,
  decisionDigest,
  decisionId,
  evaluatePolicy,
  isLive,
  lintStatus,
  liveVotes,
  POLICY_DECISION,
  requireAction,
  requireName,
  requireOneGroup,
  requireVerificationState,
  REVIEW,
  reviewCounts,
  reviewId,
  type AttestationRecord,
  type CiEvidence,
  type DecisionTrigger,
  type PolicyDecisionRecord,
  type ReviewAction,
  type ReviewRecord,
  type Selected,
  approvalStates,
} from '../../domain/workflow/review-rules.js';
import { CHANGE, changeId, checkChangeOpen, MAX_TEXT_CHARS, parseChangeRef, PATCHSET, requireAuthorMode, requireText, type ChangeRecord, type PatchsetRecord } from '../../domain/workflow/rules.js';
import type { ContentStore, Txn } from '../../store/content-store.js';
import { attestationEvents, decisionEvents, reviewEvents } from '../../domain/events.js';
import { jobProjection, type JobQueue } from '../jobs.js';

/** What this book needs of the task/change/patchset book (./book.ts), which owns it. */
export interface WorkflowView {
  patchset(id: string): PatchsetRecord;
  change(ref: string): ChangeRecord;
  upsertChange(tx: Txn, c: ChangeRecord): void;
  /** The book's indexes: the sequences of the changes in status `review`, newest first. */
  readonly index: { reviewChanges(): number[] };
  /** Work-in-progress changes stay out of the inbox until ready. */
  readonly people: { isWip(seq: number): boolean };
}

export interface ReviewInput { patchset_id: string; reviewer: string; action: string; comment?: string; blocking?: boolean }
export interface ReviewRequestInput { patchset_id: string; reviewer_groups?: unknown; reviewers?: unknown; note?: string; review_id?: string; requested_by?: string | null }

/** Persons one review request may name. */
export const MAX_REQUESTED_REVIEWERS = 50;

/** `reviewers`: distinct non-empty person names (at most MAX_REQUESTED_REVIEWERS); undefined → none. */
export function requirePersons(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new Invalid('reviewers must be an array of names');
  if (value.length > MAX_REQUESTED_REVIEWERS) throw new Invalid(`reviewers names more than ${MAX_REQUESTED_REVIEWERS} people`);
  const out: string[] = [];
  for (const [i, v] of value.entries()) {
    if (typeof v !== 'string') throw new Invalid(`reviewers[${i}] must be a name`);
    const name = requireName(v, `reviewers[${i}]`);
    if (out.includes(name)) throw new Invalid(`reviewers names ${i === 0 ? 'a person' : `reviewers[${i}]`} twice`);
    out.push(name);
  }
  return out;
}

/** The reviewer list after a request naming `asked` (new names appended in order; the list unchanged when none is new). */
export function withReviewers(list: readonly { name: string; kind: 'person' | 'group' }[], asked: readonly { name: string; kind: 'person' | 'group' }[]): { name: string; kind: 'person' | 'group' }[] {
  const out = [...list];
  for (const r of asked) if (!out.some((x) => x.name === r.name && x.kind === r.kind)) out.push(r);
  return out;
}
export interface AttestationInput {
  author_mode?: string;
  verification_state?: string;
  revoked?: boolean;
  require_tests_pass?: boolean;
  require_human_review?: boolean;
  require_lint_pass?: boolean;
  detail?: Record<string, unknown>;
}

/** Triggers that explicitly advance the patchset's CI run (spec: "CI trigger rules"). */
export const ADVANCING_TRIGGERS = ['manual_rerun', 'base_stale_after_land_rerun'];
export const MAX_TRIGGER_CHARS = 128;
const NEW_REVIEW = 'wf:new-review';
const NEW_ATTESTATION = 'wf:new-attestation';
const NEW_DECISION = 'wf:new-decision';
const CHAIN = 'wf:decision-chain';
const CI_RUN = 'wf:ci-run';

/** The CI state of a patchset, derived from its kind-7 jobs (oldest first). */
export interface CiState {
  run_sequence: number;
  evidence: CiEvidence | null;
  evidence_job: JobRecord | null;
  active_job: JobRecord | null;
  latest_job: JobRecord | null;
  /** The current run's jobs all failed (no evidence, nothing active). */
  failed: boolean;
  jobs: JobRecord[];
}

export const runOf = (j: JobRecord) => j.detail.run_sequence ?? 1;

export function ciState(jobs: JobRecord[]): CiState {
  const run = jobs.reduce((m, j) => Math.max(m, runOf(j)), 0);
  const current = jobs.filter((j) => runOf(j) === run);
  let evidenceJob: JobRecord | null = null;
  let active: JobRecord | null = null;
  for (const j of current) {
    if (j.state === STATE_SUCCEEDED && j.detail.result) evidenceJob = j;
    if (j.state === STATE_QUEUED || j.state === STATE_RUNNING) active = j;
  }
  let evidence: CiEvidence | null = null;
  if (evidenceJob) {
    const r = evidenceJob.detail.result!;
    evidence = {
      worker_job_index: evidenceJob.worker_job_index,
      run_sequence: run,
      overall: r.status === 'succeeded' && r.tests_status === 'pass' && !r.suite_results.some((s) => s.status === 'fail' && s.blocking) ? 'pass' : 'fail',
      status: r.status,
      tests: r.tests_status,
      lint: lintStatus(r),
      suite_results: r.suite_results,
      completed_at_s: evidenceJob.completed_at_s,
    };
  }
  const failed = current.length > 0 && !evidence && !active && current.every((j) => j.state === STATE_FAILED);
  return { run_sequence: run, evidence, evidence_job: evidenceJob, active_job: active, latest_job: jobs.at(-1) ?? null, failed, jobs };
}

/** The compact CI projection carried by a patchset. */
export function ciProjectionOf(s: CiState): Record<string, unknown> {
  const e = s.evidence;
  const overall = e ? e.overall : s.active_job ? 'pending' : s.failed ? 'error' : 'none';
  return {
    ci_run_sequence: s.run_sequence,
    overall,
    status: e?.status ?? null,
    tests: e?.tests ?? 'none',
    lint: e?.lint ?? 'none',
    evidence_worker_job_index: e?.worker_job_index ?? null,
    latest_worker_job_index: s.latest_job?.worker_job_index ?? null,
    active_worker_job_index: s.active_job?.worker_job_index ?? null,
    completed_at_s: e?.completed_at_s ?? null,
  };
}

/** The owner of a patchset id as index keys (0, 0 when the id is not a patchset id: it has nothing). */
const psKey = (id: string) => patchsetSeqOf(id) ?? { change: 0, number: 0 };

export class ReviewBook {
  /** Per change and patchset the counts that name its records, the inbox requests, the chain head. */
  index = new ReviewIndex();

  private constructor(private readonly store: ContentStore, private readonly book: WorkflowView, private readonly jobs: JobQueue) {}

  /** Whether approvals carry to every later patchset (the repository rule dismiss_stale_approvals off); set by the authority. */
  carryAllApprovals: () => boolean = () => false;

  /** The patchset votes are counted on, under the repository's carry-over rule. */
  selectedOf(ps: PatchsetRecord): Selected {
    return { patchset_id: ps.patchset_id, fingerprint: ps.diff.fingerprint ?? null, ...(this.carryAllApprovals() ? { carry_all: true } : {}) };
  }

  /**
   * Open the index: from the checkpoint's section and the reviews, attestations and decisions
   * upserted in the log's tail after it (storage-layout.md §17.1), or, without a usable
   * section, from every such record.
   */
  static open(store: ContentStore, book: WorkflowView, jobs: JobQueue, notes: string[] = []): ReviewBook {
    const r = new ReviewBook(store, book, jobs);
    const section = store.takeCheckpointSection(REVIEW_SECTION);
    let done = false;
    if (section) {
      try {
        r.index = ReviewIndex.decode(section);
        for (const type of REVIEW_TYPES) {
          for (const id of store.tailEntities(type)) {
            const body = store.entity<unknown>(type, id);
            if (body === undefined) throw new Error(`${type} ${id} has no record`);
            r.index.addRecord(type, id, body);
          }
        }
        r.checkCounts();
        done = true;
      } catch (err) {
        notes.push(`workflow.ckpt: the review indexes do not fit workflow.log (${(err as Error).message}); rebuilt from workflow.log`);
      }
    }
    if (!done) {
      if (REVIEW_TYPES.some((t) => store.entityCount(t) > 0)) store.checkpointIncomplete();
      try {
        r.index = ReviewIndex.rebuild((type) => store.entitiesOf<unknown>(type));
      } catch (err) {
        if (err instanceof Corrupt) throw err;
        throw new Corrupt(`workflow.log: ${(err as Error).message}`);
      }
      r.checkCounts();
    }
    store.registerCheckpointSection(REVIEW_SECTION, () => r.index.encode());
    return r;
  }

  /** The index names exactly the records the store holds (sequences dense from 1 per owner). */
  private checkCounts(): void {
    const have = { reviews: this.store.entityCount(REVIEW), attestations: this.store.entityCount(ATTESTATION), decisions: this.store.entityCount(POLICY_DECISION) };
    const x = this.index;
    if (x.reviews !== have.reviews || x.attestations !== have.attestations || x.decisions !== have.decisions) {
      throw new Corrupt(`review indexes name ${x.reviews} reviews, ${x.attestations} attestations and ${x.decisions} decisions, workflow.log holds ${have.reviews}, ${have.attestations} and ${have.decisions}`);
    }
  }

  /** A record committed by this book (its id derives from its owner and sequence). */
  private apply(type: string, id: string, body: unknown): void {
    this.index.addRecord(type, id, body);
  }

  /** A record the index names (it exists: the open checked the counts). */
  private recordAt<T>(type: string, id: string): T {
    const body = this.store.entity<T>(type, id);
    if (body === undefined) throw new Corrupt(`workflow.log: ${type} ${id} is indexed but has no record`);
    return body;
  }

  // ------------------------------------------------------------ lookups (transaction views)

  private changeIn(tx: Txn, ref: string): ChangeRecord {
    const parsed = parseChangeRef(ref);
    const c = parsed === null ? undefined : tx.entity<ChangeRecord>(CHANGE, parsed.change_id);
    if (!c || (parsed!.task_id !== null && parsed!.task_id !== c.task_id)) throw new NotFound(`change ${ref} does not exist`);
    return c;
  }

  private patchsetIn(tx: Txn | null, id: string): PatchsetRecord {
    const p = tx ? tx.entity<PatchsetRecord>(PATCHSET, id) : this.book.patchset(id);
    if (!p) throw new NotFound(`patchset ${id} does not exist`);
    return p;
  }

  /** The change's selected patchset named by the request (404 unknown; 400 when not selected). */
  private selectedIn(tx: Txn, change: ChangeRecord, patchsetIdValue: string, action: string): PatchsetRecord {
    const ps = this.patchsetIn(tx, patchsetIdValue);
    checkChangeOpen(change, action);
    if (change.selected_patchset_id !== ps.patchset_id) throw new Invalid(`patchset ${ps.patchset_id} is not the selected patchset of ${change.change_id} (${change.selected_patchset_id ?? 'none'})`);
    return ps;
  }

  private changeOfPatchset(tx: Txn | null, ps: PatchsetRecord): ChangeRecord {
    return tx ? tx.entity<ChangeRecord>(CHANGE, ps.change_id)! : this.book.change(ps.change_id);
  }

  private staged<T>(tx: Txn, ns: string, owner: string): T[] {
    return tx.stagedKeys(`${ns}:${owner}`).map((k) => tx.staged<T>(`${ns}:${owner}`, k)!);
  }

  // ------------------------------------------------------------ reviews

  /** Every review of a change, oldest first (read from the store). */
  reviewsOf(changeIdValue: string): ReviewRecord[] {
    const out: ReviewRecord[] = [];
    const n = this.index.reviewsOf(changeSeqOf(changeIdValue));
    for (let k = 1; k <= n; k++) out.push(this.recordAt<ReviewRecord>(REVIEW, reviewId(changeIdValue, k)));
    return out;
  }

  private nextReviewSeq(tx: Txn, change: string): number {
    return this.index.reviewsOf(changeSeqOf(change)) + tx.stagedKeys(`${NEW_REVIEW}:${change}`).length + 1;
  }

  private upsertReview(tx: Txn, r: ReviewRecord): void {
    tx.emitAll(reviewEvents(tx.entity<ReviewRecord>(REVIEW, r.review_id), r));
    tx.upsert(REVIEW, r.review_id, r);
    tx.stage(`${NEW_REVIEW}:${r.change_id}`, r.review_id, r);
    tx.onPublish(() => this.apply(REVIEW, r.review_id, r));
  }

  createReview(ref: string, input: ReviewInput): Promise<ReviewRecord> {
    const reviewer = requireName(input.reviewer, 'reviewer');
    const action = requireAction(input.action);
    const comment = requireText(input.comment ?? '', 'comment', MAX_TEXT_CHARS, true);
    return this.store.transact((tx) => {
      const change = this.changeIn(tx, ref);
      return this.stageReview(tx, change, input.patchset_id, { reviewer, action, comment, blocking: input.blocking ?? false });
    });
  }

  /**
   * A review of the change's selected patchset staged in `tx` (its caller checked the fields):
   * createReview's, and the vote a publish of comment drafts records in its own commit.
   */
  stageReview(tx: Txn, change: ChangeRecord, patchsetIdValue: string, v: { reviewer: string; action: ReviewAction; comment: string; blocking: boolean }): ReviewRecord {
    const ps = this.selectedIn(tx, change, patchsetIdValue, 'review it');
    const sequence = this.nextReviewSeq(tx, change.change_id);
    const r: ReviewRecord = {
      review_id: reviewId(change.change_id, sequence),
      change_id: change.change_id,
      sequence,
      patchset_id: ps.patchset_id,
      patchset_fingerprint: ps.diff.fingerprint ?? null,
      reviewer: v.reviewer,
      action: v.action,
      comment: v.comment,
      blocking: v.blocking,
      reviewer_group: null,
      requested_by: null,
      created_at_s: nowSeconds(),
    };
    this.upsertReview(tx, r);
    return r;
  }

  /**
   * `:requestReview`: one review record (action `request`) per group and person named, in one
   * commit with the change's reviewer list and its move to `review`. A person's request has
   * `reviewer` = the person and `reviewer_group` null (the reviewer inbox lists group requests).
   * The first record is the answer's `review_request` (the group's when one is named).
   */
  requestReview(ref: string, input: ReviewRequestInput): Promise<{ review: ReviewRecord; reviews: ReviewRecord[]; change: ChangeRecord }> {
    const group = input.reviewer_groups === undefined ? null : requireOneGroup(input.reviewer_groups);
    const persons = requirePersons(input.reviewers);
    if (group === null && persons.length === 0) throw new Invalid('name at least one reviewer: reviewer_groups (one group) or reviewers (people)');
    const note = requireText(input.note ?? '', 'note', MAX_TEXT_CHARS, true);
    const requestedBy = input.requested_by === undefined || input.requested_by === null ? null : requireName(input.requested_by, 'requested_by');
    if (input.review_id !== undefined) checkSuppliedReviewId(input.review_id, input.review_id); // shape first (400)
    const asked: { name: string; kind: 'person' | 'group' }[] = [...(group === null ? [] : [{ name: group, kind: 'group' as const }]), ...persons.map((name) => ({ name, kind: 'person' as const }))];
    return this.store.transact((tx) => {
      const change = this.changeIn(tx, ref);
      const ps = this.selectedIn(tx, change, input.patchset_id, 'request a review');
      return this.stageRequests(tx, change, ps, asked, requestedBy, note, input.review_id);
    });
  }

  /**
   * Stage one review request per name of `asked` on `ps`, with the change's reviewer list and
   * its move to `review` (requestReview's commit, and the code owners a new patchset asks for).
   */
  stageRequests(tx: Txn, change: ChangeRecord, ps: PatchsetRecord, asked: readonly { name: string; kind: 'person' | 'group' }[], requestedBy: string | null, note: string, suppliedId?: string): { review: ReviewRecord; reviews: ReviewRecord[]; change: ChangeRecord } {
    {
      const now = nowSeconds();
      const reviews: ReviewRecord[] = [];
      for (const who of asked) {
        const sequence = this.nextReviewSeq(tx, change.change_id);
        const id = reviewId(change.change_id, sequence);
        if (reviews.length === 0) checkSuppliedReviewId(suppliedId, id);
        const r: ReviewRecord = {
          review_id: id,
          change_id: change.change_id,
          sequence,
          patchset_id: ps.patchset_id,
          patchset_fingerprint: ps.diff.fingerprint ?? null,
          reviewer: who.name,
          action: 'request',
          comment: note,
          blocking: false,
          reviewer_group: who.kind === 'group' ? who.name : null,
          requested_by: requestedBy,
          created_at_s: now,
        };
        this.upsertReview(tx, r);
        reviews.push(r);
      }
      const list = withReviewers(this.reviewerList(change), asked);
      let next = change;
      if (change.status !== 'review' || list.length !== (change.reviewers?.length ?? -1)) {
        next = { ...change, status: 'review', reviewers: list, updated_at_s: now };
        this.book.upsertChange(tx, next);
      }
      return { review: reviews[0], reviews, change: next };
    }
  }

  /**
   * The change's reviewers: its `reviewers` field, or for a change written before that field,
   * the group of its latest group request (what the index kept of earlier requests).
   */
  reviewerList(change: ChangeRecord): { name: string; kind: 'person' | 'group' }[] {
    if (change.reviewers) return change.reviewers;
    const request = this.index.requestOf(changeSeqOf(change.change_id));
    return request ? [{ name: request.group, kind: 'group' }] : [];
  }

  /** Live votes and counts of a change against its selected patchset. */
  reviewSummary(change: ChangeRecord): { reviews: Record<string, unknown>[]; counts: ReturnType<typeof reviewCounts>; votes: ReturnType<typeof liveVotes> } {
    const reviews = this.reviewsOf(change.change_id);
    const sel = change.selected_patchset_id ? this.book.patchset(change.selected_patchset_id) : null;
    const selected: Selected = sel ? this.selectedOf(sel) : { patchset_id: '', fingerprint: null };
    const votes = sel ? liveVotes(reviews, selected) : [];
    const liveIds = new Set(votes.map((v) => v.review_id));
    const approvals = new Map(sel ? approvalStates(reviews, selected).map((a) => [a.review_id, { state: a.state, reason: a.reason }]) : []);
    return {
      reviews: reviews.map((r) => ({ ...r, live: liveIds.has(r.review_id), stale: sel !== null && !isLive(r, selected), approval: approvals.get(r.review_id) ?? null })),
      counts: reviewCounts(reviews, votes),
      votes,
    };
  }

  /** One page of a change's reviews, oldest first (cursor key: the review sequence); the counts cover every review of the change. */
  listReviews(ref: string, req: PageRequest): Record<string, unknown> {
    const change = this.book.change(ref);
    const { reviews, counts } = this.reviewSummary(change);
    const page = takePage(req, walkFrom(reviews.length, (i) => reviews[i], (r) => r.sequence as number, req.after, 'asc'), 'asc');
    return { change_id: change.change_id, change_ref: change.change_ref, selected_patchset_id: change.selected_patchset_id, reviews: page.rows, ...counts, count: page.rows.length, next_cursor: page.next_cursor };
  }

  // ------------------------------------------------------------ attestations

  /** The latest attestation of a patchset, or null (read from the store). */
  latestAttestation(ps: string): AttestationRecord | null {
    const { change, number } = psKey(ps);
    const n = this.index.attestationsOf(change, number);
    return n === 0 ? null : this.recordAt<AttestationRecord>(ATTESTATION, attestationId(ps, n));
  }

  putAttestation(patchsetIdValue: string, input: AttestationInput): Promise<AttestationRecord> {
    const verification = requireVerificationState(input.verification_state ?? 'unknown');
    const mode = input.author_mode === undefined ? undefined : requireAuthorMode(input.author_mode);
    const detail = input.detail ?? {};
    if (typeof detail !== 'object' || detail === null || Array.isArray(detail)) throw new Invalid('detail must be an object');
    if ('patchset_ci' in detail) throw new Invalid('detail.patchset_ci is owned by the patchset and worker-job authority; it cannot be supplied');
    if (JSON.stringify(detail).length > MAX_TEXT_CHARS) throw new Invalid(`detail is larger than ${MAX_TEXT_CHARS} characters of JSON`);
    return this.store.transact((tx) => {
      const ps = this.patchsetIn(tx, patchsetIdValue);
      if (mode !== undefined && mode !== ps.author_mode) throw new Invalid(`author_mode ${mode} does not agree with the patchset's ${ps.author_mode}`);
      checkChangeOpen(this.changeOfPatchset(tx, ps), 'attest a patchset');
      const key = psKey(ps.patchset_id);
      const sequence = this.index.attestationsOf(key.change, key.number) + tx.stagedKeys(`${NEW_ATTESTATION}:${ps.patchset_id}`).length + 1;
      const a: AttestationRecord = {
        attestation_id: attestationId(ps.patchset_id, sequence),
        patchset_id: ps.patchset_id,
        sequence,
        author_mode: ps.author_mode,
        verification_state: verification,
        revoked: input.revoked ?? false,
        require_tests_pass: input.require_tests_pass ?? true,
        require_human_review: input.require_human_review ?? false,
        require_lint_pass: input.require_lint_pass ?? false,
        detail,
        created_at_s: nowSeconds(),
      };
      tx.emitAll(attestationEvents(tx.entity<AttestationRecord>(ATTESTATION, a.attestation_id), a));
      tx.upsert(ATTESTATION, a.attestation_id, a);
      tx.stage(`${NEW_ATTESTATION}:${ps.patchset_id}`, a.attestation_id, a);
      tx.onPublish(() => this.apply(ATTESTATION, a.attestation_id, a));
      return a;
    });
  }

  private latestAttestationIn(tx: Txn, ps: string): AttestationRecord | null {
    return this.staged<AttestationRecord>(tx, NEW_ATTESTATION, ps).at(-1) ?? this.latestAttestation(ps);
  }

  /** The read form: the latest attestation, whether CI backed it, the current tests and lint. */
  attestationView(patchsetIdValue: string): Record<string, unknown> {
    const ps = this.book.patchset(patchsetIdValue);
    const a = this.latestAttestation(ps.patchset_id);
    if (!a) throw new NotFound(`patchset ${ps.patchset_id} has no attestation`);
    const ci = this.ci(ps.patchset_id);
    return { ...a, ci_backed: ci.evidence !== null, ci_run_sequence: ci.run_sequence, tests: ci.evidence?.tests ?? 'none', lint: ci.evidence?.lint ?? 'none' };
  }

  // ------------------------------------------------------------ policy

  /** The latest policy decision of a patchset, or undefined (read from the store). */
  latestDecision(ps: string): PolicyDecisionRecord | undefined {
    const { change, number } = psKey(ps);
    const n = this.index.decisionsOf(change, number);
    return n === 0 ? undefined : this.recordAt<PolicyDecisionRecord>(POLICY_DECISION, decisionId(ps, n));
  }

  evaluate(patchsetIdValue: string): Promise<PolicyDecisionRecord> {
    return this.store.transact((tx) => {
      const ps = this.patchsetIn(tx, patchsetIdValue);
      checkChangeOpen(this.changeOfPatchset(tx, ps), 'evaluate policy');
      return this.stageDecision(tx, ps, this.evidenceIn(tx, ps), 'evaluate');
    });
  }

  /**
   * The evidence of `ps` as `tx` sees it: the published records plus what earlier transactions
   * of its batch staged (reviews, attestations, CI job transitions). Without `tx`, as published.
   */
  private evidenceIn(tx: Txn | null, ps: PatchsetRecord) {
    const change = this.changeOfPatchset(tx, ps);
    const reviews = tx ? [...this.reviewsOf(change.change_id), ...this.staged<ReviewRecord>(tx, NEW_REVIEW, change.change_id)] : this.reviewsOf(change.change_id);
    const votes = liveVotes(reviews, this.selectedOf(ps));
    const attestation = tx ? this.latestAttestationIn(tx, ps.patchset_id) : this.latestAttestation(ps.patchset_id);
    const ci = tx ? ciState(this.jobs.ciJobsIn(tx, ps.patchset_id)) : this.ci(ps.patchset_id);
    return { reviews, votes, attestation, ci };
  }

  /** Evaluate the policy on `ev` and stage the decision as the next link of the chain. */
  private stageDecision(tx: Txn, ps: PatchsetRecord, ev: ReturnType<ReviewBook['evidenceIn']>, trigger: DecisionTrigger): PolicyDecisionRecord {
    const { decision, checks } = evaluatePolicy({ attestation: ev.attestation, ci: ev.ci.evidence, votes: ev.votes, author_mode: ps.author_mode, author: ps.author ?? null });
    const head = tx.staged<{ seq: number; sha256: string }>(CHAIN, 'head') ?? { seq: this.index.chainSeq, sha256: this.index.chainSha256 };
    const { change, number } = psKey(ps.patchset_id);
    const sequence = this.index.decisionsOf(change, number) + tx.stagedKeys(`${NEW_DECISION}:${ps.patchset_id}`).length + 1;
    const body: Omit<PolicyDecisionRecord, 'sha256'> = {
      decision_id: decisionId(ps.patchset_id, sequence),
      patchset_id: ps.patchset_id,
      sequence,
      chain_seq: head.seq + 1,
      decision,
      checks,
      attestation_id: ev.attestation?.attestation_id ?? null,
      ci_run_sequence: ev.ci.run_sequence,
      ci_worker_job_index: ev.ci.evidence?.worker_job_index ?? null,
      evaluated_at_s: nowSeconds(),
      trigger,
      prev_sha256: head.sha256,
    };
    const d: PolicyDecisionRecord = { ...body, sha256: decisionDigest(body) };
    tx.emitAll(decisionEvents(d));
    tx.upsert(POLICY_DECISION, d.decision_id, d);
    tx.stage(`${NEW_DECISION}:${ps.patchset_id}`, d.decision_id, d);
    tx.stage(CHAIN, 'head', { seq: d.chain_seq, sha256: d.sha256 });
    tx.onPublish(() => this.apply(POLICY_DECISION, d.decision_id, d));
    return d;
  }

  /**
   * The land's judgement of `ps` (lib/authority/workflow/gates.ts): the policy evaluated on the
   * evidence as it stands, the live review counts and the CI of the current run, all from the
   * same view. Inside a land's transaction (`tx`) the decision is recorded in that commit
   * (trigger `land`), so the land names the decision it relied on; without `tx` nothing is
   * written (the land's early check, before it computes a merge).
   */
  judgeForLand(ps: PatchsetRecord, tx?: Txn, ci?: CiState): { policy: { decision: string; decision_id: string | null; checks: unknown[] }; review: Record<string, unknown>; ci: Record<string, unknown>; approvers: string[] } {
    const ev = this.evidenceIn(tx ?? null, ps);
    // A land-queue land is judged by the CI of the tree that lands (its speculation's job).
    if (ci) ev.ci = ci;
    const counts = reviewCounts(ev.reviews, ev.votes);
    let policy;
    if (tx) {
      const d = this.stageDecision(tx, ps, ev, 'land');
      policy = { decision: d.decision, decision_id: d.decision_id, checks: d.checks };
    } else {
      const d = evaluatePolicy({ attestation: ev.attestation, ci: ev.ci.evidence, votes: ev.votes, author_mode: ps.author_mode, author: ps.author ?? null });
      policy = { decision: d.decision, decision_id: null, checks: d.checks };
    }
    return { policy, review: { ...counts }, ci: ciProjectionOf(ev.ci), approvers: ev.votes.filter((v) => v.vote === 'approve').map((v) => v.reviewer) };
  }

  policyView(patchsetIdValue: string): Record<string, unknown> {
    const ps = this.book.patchset(patchsetIdValue);
    const d = this.latestDecision(ps.patchset_id);
    return d ? { ...d } : { patchset_id: ps.patchset_id, decision: 'pending', checks: [] };
  }

  // ------------------------------------------------------------ CI

  ci(ps: string): CiState {
    return ciState(this.jobs.ciJobsOf(ps));
  }

  /**
   * `:runCi` (spec: "CI trigger rules"): manual_rerun and base_stale_after_land_rerun advance
   * the run and queue a kind-7 job; any other trigger reuses the current run's evidence, or its
   * active job, else queues (in run 1 when there is none yet, else in the current run).
   */
  async runCi(patchsetIdValue: string, trigger: string): Promise<{ queued: boolean; job: JobRecord | null; delivery: string }> {
    if (trigger === '') throw new Invalid('trigger must be non-empty');
    if (trigger.length > MAX_TRIGGER_CHARS) throw new Invalid(`trigger is longer than ${MAX_TRIGGER_CHARS} characters`);
    return this.store.transact((tx) => {
      const ps = this.patchsetIn(tx, patchsetIdValue);
      checkChangeOpen(this.changeOfPatchset(tx, ps), 'run CI');
      if (ps.withdrawn || ps.invalidated) throw new Invalid(`patchset ${ps.patchset_id} is ${ps.withdrawn ? 'withdrawn' : 'invalidated'}`);
      // The CI state as this transaction sees it (a job that failed earlier in the batch is failed).
      const published = ciState(this.jobs.ciJobsIn(tx, ps.patchset_id));
      const staged = tx.staged<{ run: number; job: JobRecord }>(CI_RUN, ps.patchset_id);
      const run = Math.max(published.run_sequence, staged?.run ?? 0);
      if (!ADVANCING_TRIGGERS.includes(trigger)) {
        if (staged) return { queued: false, job: staged.job, delivery: 'active_run' };
        if (published.evidence) return { queued: false, job: published.evidence_job, delivery: 'reused_evidence' };
        if (published.active_job) return { queued: false, job: published.active_job, delivery: 'active_run' };
      }
      const nextRun = ADVANCING_TRIGGERS.includes(trigger) || run === 0 ? run + 1 : run;
      if (nextRun > run) this.jobs.supersedeOlderRunsIn(tx, ps.patchset_id, nextRun);
      const job = this.jobs.enqueueIn(tx, JOB_KIND_PATCHSET_CI, { snapshot_id: ps.revision_snapshot_id, patchset_id: ps.patchset_id, trigger, run_sequence: nextRun });
      tx.stage(CI_RUN, ps.patchset_id, { run: nextRun, job });
      return { queued: true, job, delivery: 'worker_job' };
    });
  }

  ciStatus(patchsetIdValue: string, recentLimit: number): Record<string, unknown> {
    const ps = this.book.patchset(patchsetIdValue);
    const s = this.ci(ps.patchset_id);
    const e = s.evidence;
    const suites = e?.suite_results ?? [];
    return {
      patchset_id: ps.patchset_id,
      projection: 'readiness',
      availability: e ? 'available' : s.active_job ? 'pending' : s.failed ? 'failed' : 'none',
      ci_run_sequence: s.run_sequence,
      completed_at_s: e?.completed_at_s ?? null,
      status: e?.status ?? null,
      overall: e?.overall ?? (s.active_job ? 'pending' : s.failed ? 'error' : 'none'),
      tests: e?.tests ?? 'none',
      lint: e?.lint ?? 'none',
      counts: {
        suites: suites.length,
        passed: suites.filter((x) => x.status === 'pass').length,
        failed: suites.filter((x) => x.status === 'fail').length,
        blocking_failed: suites.filter((x) => x.status === 'fail' && x.blocking).length,
        jobs: s.jobs.length,
        current_run_jobs: s.jobs.filter((j) => runOf(j) === s.run_sequence).length,
      },
      has_runnable_evidence: e !== null,
      selected_job: s.evidence_job ? jobProjection(s.evidence_job) : null,
      latest_job: s.latest_job ? jobProjection(s.latest_job) : null,
      recent_jobs: s.jobs.slice(-recentLimit).reverse().map((j) => jobProjection(j)),
      selected_suite_ids: [],
      suite_results: [],
    };
  }

  // ------------------------------------------------------------ projections and inbox

  /** The review, policy and evaluation parts of a patchset projection. */
  patchsetParts(p: PatchsetRecord): Record<string, unknown> {
    const change = this.book.change(p.change_id);
    const reviews = this.reviewsOf(change.change_id);
    const votes = liveVotes(reviews, this.selectedOf(p));
    const counts = reviewCounts(reviews, votes);
    const d = this.latestDecision(p.patchset_id);
    return {
      evaluation_state: d ? d.decision : 'not_evaluated',
      ci: ciProjectionOf(this.ci(p.patchset_id)),
      review: { state: counts.blocking > 0 ? 'blocked' : counts.approvals > 0 ? 'approved' : reviews.length > 0 ? 'in_review' : 'none', ...counts },
      policy: d ? { decision: d.decision, decision_id: d.decision_id, evaluated_at_s: d.evaluated_at_s, checks: d.checks } : { decision: 'pending', checks: [] },
    };
  }

  /**
   * Open review work in inbox order: one key per change in status `review`, not work in
   * progress, whose latest review request names a group (optionally only `group`), ordered by group (UTF-8 bytes), then
   * request time, then change. From the indexes alone: no record is read.
   */
  private inboxKeys(group: string | undefined): { change: number; request: InboxRequest; key: CursorKey }[] {
    const out: { change: number; request: InboxRequest; key: CursorKey }[] = [];
    for (const change of this.book.index.reviewChanges()) {
      const request = this.index.requestOf(change);
      if (!request || (group !== undefined && request.group !== group) || this.book.people.isWip(change)) continue;
      out.push({ change, request, key: [request.group, request.requested_at_s, changeId(change)] });
    }
    // The order the inbox pages in (lib/domain/paging.ts compareKeys): group and change by UTF-8 bytes.
    out.sort((a, b) => compareKeys(a.key, b.key));
    return out;
  }

  /** The inbox row of a change and its latest group request (reads the records it shows). */
  private inboxRow(changeSeq: number, request: InboxRequest, repositoryIndex: number): Record<string, unknown> {
    const change = this.book.change(changeId(changeSeq));
    const req = this.recordAt<ReviewRecord>(REVIEW, reviewId(change.change_id, request.review));
    const sel = change.selected_patchset_id ? this.book.patchset(change.selected_patchset_id) : null;
    const ci = sel ? this.ci(sel.patchset_id) : null;
    const d = sel ? this.latestDecision(sel.patchset_id) : undefined;
    const counts = this.reviewSummary(change).counts;
    return {
      repository_index: repositoryIndex,
      reviewer_group: req.reviewer_group,
      change_id: change.change_id,
      change_ref: change.change_ref,
      task_id: change.task_id,
      title: change.title,
      change_status: change.status,
      review_id: req.review_id,
      requested_by: req.requested_by,
      requested_at_s: req.created_at_s,
      note: req.comment,
      requested_patchset_id: req.patchset_id,
      selected_patchset_id: sel?.patchset_id ?? null,
      selected_patchset_number: sel?.patchset_number ?? null,
      author_mode: sel?.author_mode ?? null,
      ci_in: ci?.evidence !== null && ci !== null,
      ci_overall: ci ? ciProjectionOf(ci).overall : 'none',
      policy_in: d !== undefined,
      policy_decision: d?.decision ?? 'pending',
      approvals: counts.approvals,
      blocking: counts.blocking,
    };
  }

  /** Every row of open review work (optionally only `group`), in inbox order. */
  inbox(group: string | undefined, repositoryIndex: number): Record<string, unknown>[] {
    return this.inboxKeys(group).map((k) => this.inboxRow(k.change, k.request, repositoryIndex));
  }

  /**
   * One page of the inbox (cursor key: group, request time, change) and the row count of each
   * group over the whole filter; only the page's rows read their records.
   */
  inboxPage(group: string | undefined, req: PageRequest, repositoryIndex: number): { page: Page<Record<string, unknown>>; groups: Record<string, number> } {
    const keys = this.inboxKeys(group);
    const groups: Record<string, number> = {};
    for (const k of keys) groups[k.request.group] = (groups[k.request.group] ?? 0) + 1;
    const page = takePage(req, walkFrom(keys.length, (i) => keys[i], (k) => k.key, req.after, 'asc'), 'asc');
    return { page: { rows: page.rows.map((k) => this.inboxRow(k.change, k.request, repositoryIndex)), next_cursor: page.next_cursor }, groups };
  }
}
