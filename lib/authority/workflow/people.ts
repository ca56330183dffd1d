// People on changes (docs/api.md "People"): whose move it is (the attention rule of
// lib/domain/workflow/attention.ts on a change's records), each reviewer's current vote (the
// reviewer table), and a person's dashboard. Plain functions over the workflow book: they read
// the records of the changes they show and write nothing. A dashboard reads only the changes the
// person owns or was asked to review (the book's per-person lists), never every change.
import { attention, type Attention, type AttentionReview } from '../../domain/workflow/attention.js';
import { isOpenChange, type ChangeRecord } from '../../domain/workflow/rules.js';
import { voteOf, type ReviewRecord } from '../../domain/workflow/review-rules.js';
import { changeId } from '../../domain/workflow/rules.js';
import { ciProjectionOf } from './reviews.js';
import type { ReviewBook } from './reviews.js';
import type { CommentBook } from './comments.js';
import type { PeopleIndex } from '../../domain/workflow/people-index.js';
import type { WorkflowIndexes } from '../../domain/workflow/indexes.js';

/** What these functions read of the workflow book (a structural type: book.ts imports this module). */
export interface PeopleBook {
  readonly reviews: ReviewBook;
  readonly comments: CommentBook;
  readonly people: PeopleIndex;
  readonly index: WorkflowIndexes;
  ejectionOf(changeId: string): { patchset_id: string; reason: string } | null;
  change(ref: string): ChangeRecord;
  patchset(id: string): { created_at_s: number };
}
import { requireName } from '../../domain/workflow/review-rules.js';

/** The patchset number in a patchset id (`change-3.ps-2` → 2). */
const psNumber = (id: string | null): number => (id === null ? 0 : Number(id.slice(id.lastIndexOf('-') + 1)) || 0);

/** Whose move it is on `change`, from its records. */
export function changeAttention(book: PeopleBook, change: ChangeRecord, reviews?: ReviewRecord[]): Attention[] {
  const current = change.current_patchset_id;
  if (!isOpenChange(change.status) || current === null) return [];
  const all = reviews ?? book.reviews.reviewsOf(change.change_id);
  const rows: AttentionReview[] = all.map((r) => ({
    sequence: r.sequence,
    reviewer: r.reviewer,
    action: r.action,
    person_request: r.action === 'request' && r.reviewer_group === null,
    blocking: r.blocking,
    patchset: psNumber(r.patchset_id),
    at_s: r.created_at_s,
  }));
  const ci = ciProjectionOf(book.reviews.ci(current)).overall as 'none' | 'pending' | 'pass' | 'fail' | 'error';
  const ejected = book.ejectionOf(change.change_id);
  return attention({
    open: true,
    owner: change.owner ?? null,
    current_patchset: psNumber(current),
    reviews: rows,
    ci,
    ejection: ejected && ejected.patchset_id === current ? ejected.reason : null,
    current_patchset_at_s: book.patchset(current).created_at_s,
    // From the change's thread summary (held in memory): no comment record is read.
    threads: book.comments.summary(change.change_id).publishedThreads(),
    wip: change.wip === true,
  });
}

export interface ReviewerRow {
  name: string;
  kind: 'person' | 'group';
  /** The reviewer's current vote (approve, block), or null (none, or dismissed). */
  vote: 'approve' | 'block' | null;
  /** The patchset the vote was cast on (null without a vote). */
  patchset_id: string | null;
  /** The vote counts on the selected patchset (the same patchset or one with the same content; a block always). */
  live: boolean;
}

/** Each reviewer asked (people and groups) and each person who voted, with their current vote. */
export function reviewerTable(book: PeopleBook, change: ChangeRecord): ReviewerRow[] {
  const { votes } = book.reviews.reviewSummary(change);
  const reviews = book.reviews.reviewsOf(change.change_id);
  const latest = new Map<string, ReviewRecord>();
  for (const r of reviews) if (voteOf(r) !== undefined) latest.set(r.reviewer, r);
  const rows: ReviewerRow[] = [];
  const row = (name: string, kind: 'person' | 'group'): ReviewerRow => {
    const r = kind === 'person' ? latest.get(name) : undefined;
    const vote = r ? voteOf(r) ?? null : null;
    return { name, kind, vote, patchset_id: vote === null ? null : r!.patchset_id, live: vote !== null && votes.some((v) => v.review_id === r!.review_id) };
  };
  for (const r of book.reviews.reviewerList(change)) rows.push(row(r.name, r.kind));
  for (const name of latest.keys()) if (!rows.some((x) => x.kind === 'person' && x.name === name)) rows.push(row(name, 'person'));
  return rows;
}

/** Rows per dashboard section at most. */
export const DASHBOARD_ROWS = 50;

/** A change as a dashboard row: status, CI of the selected patchset, live votes, unresolved threads, attention. */
function dashboardRow(book: PeopleBook, change: ChangeRecord, repositoryIndex: number): Record<string, unknown> {
  const reviews = book.reviews.reviewsOf(change.change_id);
  const { counts } = book.reviews.reviewSummary(change);
  const turn = changeAttention(book, change, reviews);
  return {
    repository_index: repositoryIndex,
    change_id: change.change_id,
    change_ref: change.change_ref,
    title: change.title,
    status: change.status,
    owner: change.owner ?? null,
    updated_at_s: change.updated_at_s,
    landed_at_s: change.landed_at_s,
    selected_patchset_id: change.selected_patchset_id,
    ci: change.selected_patchset_id ? ciProjectionOf(book.reviews.ci(change.selected_patchset_id)).overall : 'none',
    votes: { approvals: counts.approvals, blocking: counts.blocking },
    unresolved_threads: book.comments.unresolvedCount(change.change_id),
    attention: turn,
  };
}

/**
 * `user`'s dashboard: changes where it is their move, their open changes, open changes they were
 * asked to review (Gerrit's incoming reviews; not work in progress), and their changes (owned or reviewed) landed most
 * recently. Each section newest first, at most DASHBOARD_ROWS rows.
 */
export function dashboard(book: PeopleBook, user: string, repositoryIndex: number): Record<string, unknown> {
  requireName(user, 'user');
  const owned = book.people.ownedBy(user);
  const reviewing = book.people.reviewedBy(user);
  const seqs = [...new Set([...owned, ...reviewing])].sort((a, b) => b - a);
  const rows = new Map<number, Record<string, unknown>>();
  const rowOf = (s: number) => {
    let r = rows.get(s);
    if (!r) rows.set(s, (r = dashboardRow(book, book.change(changeId(s)), repositoryIndex)));
    return r;
  };
  const ownedSet = new Set(owned);
  const yourTurn: Record<string, unknown>[] = [];
  const yours: Record<string, unknown>[] = [];
  const waiting: Record<string, unknown>[] = [];
  const landed: Record<string, unknown>[] = [];
  for (const s of seqs) {
    const status = book.index.changeStatusOf(s);
    if (status === 'landed') {
      // The newest changes by sequence: the person's older history is not read.
      if (landed.length < DASHBOARD_ROWS) landed.push(rowOf(s));
      continue;
    }
    if (!isOpenChange(status)) continue;
    const r = rowOf(s);
    const mine = (r.attention as Attention[]).find((x) => x.name === user);
    if (mine) yourTurn.push({ ...r, reason: mine.reason });
    if (ownedSet.has(s)) yours.push(r);
    // Work in progress is not yet the reviewers' (Gerrit's WIP): off their list until ready.
    else if (!book.people.isWip(s)) waiting.push(r);
  }
  landed.sort((a, b) => (b.landed_at_s as number) - (a.landed_at_s as number));
  const cap = (xs: Record<string, unknown>[]) => xs.slice(0, DASHBOARD_ROWS);
  return { user, your_turn: cap(yourTurn), your_changes: cap(yours), waiting_for_review: cap(waiting), recently_landed: cap(landed) };
}
