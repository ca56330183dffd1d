// Whose move it is on a change ("attention", Gerrit's attention set; docs/api.md "People"): a
// pure function of the change's records. Requested reviewers are asked to act after a request
// or a new patchset until they act on the current patchset (a review, or a published comment);
// the owner is asked to act after a blocking vote on the current patchset, a failed CI run of
// it, an ejection of it from the land queue, a conflict, or a reviewer's comment since the
// current patchset that nobody answered yet (an unresolved thread whose last word is not the
// owner's); the owner's reply in a thread hands it back to the people who wrote in it. A
// work-in-progress change asks no reviewer. A closed change needs nobody. It changes when the
// rule changes, never with where the records come from (lib/authority/workflow/people.ts
// gathers them).
//
// Reviews and comments are numbered apart and their records carry times in seconds, so the
// order across the two follows two facts: a comment written on the current patchset came after
// it, and within one second a comment counts as after a request and a review as after a
// comment (the order the flows that meet there run in).

export type AttentionReason = 'review_requested' | 'new_patchset' | 'blocking_vote' | 'ci_failed' | 'ejected' | 'conflict' | 'reviewer_comment' | 'owner_replied';

export interface AttentionReview {
  /** The review's sequence within its change (the order records were written). */
  sequence: number;
  reviewer: string;
  action: string;
  /** Whether this record is a person's review request (action `request`, no group). */
  person_request: boolean;
  blocking: boolean;
  /** The patchset number it was recorded on. */
  patchset: number;
  /** When it was recorded (seconds; absent: ordered by sequence alone, as before comments counted). */
  at_s?: number;
}

/** A published comment of a thread. */
export interface AttentionComment {
  /** The comment's sequence within its change. */
  sequence: number;
  author: string;
  /** The patchset number it was written on (a reply's is its thread's unless it named another). */
  patchset: number;
  /** When it was published (seconds). */
  at_s: number;
}

/** A published thread: its comments in the order they were published, and whether it is unresolved. */
export interface AttentionThread {
  unresolved: boolean;
  comments: readonly AttentionComment[];
}

export interface AttentionInput {
  /** The change is draft, active or review (closed changes need nobody). */
  open: boolean;
  owner: string | null;
  /** The current patchset's number (0: none yet). */
  current_patchset: number;
  /** Every review record of the change, in sequence order. */
  reviews: readonly AttentionReview[];
  /** The current patchset's CI: `fail` or `error` ask the owner to act. */
  ci: 'none' | 'pending' | 'pass' | 'fail' | 'error';
  /** The change's latest land-queue entry was ejected on the current patchset (its reason). */
  ejection: string | null;
  /** When the current patchset was created (seconds); with `threads`. */
  current_patchset_at_s?: number;
  /** The change's published threads (absent: none counted). */
  threads?: readonly AttentionThread[];
  /** Work in progress: no reviewer is asked to act until the change is ready. */
  wip?: boolean;
}

export interface Attention {
  name: string;
  reason: AttentionReason;
}

/** Actions that are a reviewer's move (anything but a request). */
const ACTS = (action: string) => action !== 'request';
const BLOCKS = (r: AttentionReview) => r.blocking || r.action === 'request_changes' || r.action === 'task_request_changes';

/** Whose move it is, the owner first, then reviewers in the order they were first asked, then people the owner answered; each name once. */
export function attention(input: AttentionInput): Attention[] {
  if (!input.open || input.current_patchset === 0) return [];
  const out: Attention[] = [];
  const owner = input.owner;
  const current = input.current_patchset;
  const psAt = input.current_patchset_at_s ?? 0;
  // A comment written since the current patchset: on it, or in a later second than it.
  const since = (c: AttentionComment) => c.patchset === current || c.at_s > psAt;
  const threads = input.threads ?? [];
  const lastOf = (t: AttentionThread) => t.comments[t.comments.length - 1];
  if (owner !== null) {
    const ownReason: AttentionReason | null =
      input.ejection === 'conflict' ? 'conflict'
        : input.ejection !== null ? 'ejected'
          : input.ci === 'fail' || input.ci === 'error' ? 'ci_failed'
            : liveBlock(input.reviews, current) ? 'blocking_vote'
              : threads.some((t) => t.unresolved && t.comments.length > 0 && lastOf(t).author !== owner && since(lastOf(t))) ? 'reviewer_comment'
                : null;
    if (ownReason) out.push({ name: owner, reason: ownReason });
  }
  if (input.wip) return out;
  // Per person: their latest published comment, and their latest comment since the current patchset.
  const latestComment = new Map<string, AttentionComment>();
  const latestSince = new Map<string, AttentionComment>();
  for (const t of threads) {
    for (const c of t.comments) {
      const l = latestComment.get(c.author);
      if (!l || after(c, l)) latestComment.set(c.author, c);
      const ls = latestSince.get(c.author);
      if (since(c) && (!ls || after(c, ls))) latestSince.set(c.author, c);
    }
  }
  // Each requested person: the latest request, and whether they acted on the current patchset after it.
  const latest = new Map<string, AttentionReview>();
  for (const r of input.reviews) if (r.person_request) latest.set(r.reviewer, r);
  for (const [name, req] of latest) {
    if (name === owner) continue;
    const said = latestSince.get(name);
    const acted = input.reviews.some((r) => r.reviewer === name && ACTS(r.action) && r.sequence > req.sequence && r.patchset === current)
      || (said !== undefined && said.at_s >= (req.at_s ?? 0));
    if (!acted) out.push({ name, reason: req.patchset === current ? 'review_requested' : 'new_patchset' });
  }
  // The owner's reply since the current patchset hands a thread back to everyone else who wrote
  // in it, until they act again (a later comment, or a review in the same second or after).
  if (owner !== null) {
    const reviewedAt = new Map<string, number>();
    for (const r of input.reviews) if (ACTS(r.action) && r.at_s !== undefined) reviewedAt.set(r.reviewer, Math.max(r.at_s, reviewedAt.get(r.reviewer) ?? 0));
    for (const t of threads) {
      const last = t.comments.length > 0 ? lastOf(t) : undefined;
      if (!last || last.author !== owner || !since(last)) continue;
      for (const c of t.comments) {
        const name = c.author;
        if (name === owner || out.some((a) => a.name === name)) continue;
        const theirs = latestComment.get(name);
        const later = (theirs !== undefined && after(theirs, last)) || (reviewedAt.get(name) ?? -1) >= last.at_s;
        if (!later) out.push({ name, reason: 'owner_replied' });
      }
    }
  }
  return out;
}

/** Comment `a` was published after comment `b` (seconds, then sequence). */
function after(a: AttentionComment, b: AttentionComment): boolean {
  return a.at_s !== b.at_s ? a.at_s > b.at_s : a.sequence > b.sequence;
}

/** A reviewer's latest vote-bearing record is a block cast on the current patchset. */
function liveBlock(reviews: readonly AttentionReview[], current: number): boolean {
  const last = new Map<string, AttentionReview>();
  for (const r of reviews) {
    if (r.action === 'dismiss' || r.action === 'approve' || r.action === 'task_approve' || BLOCKS(r)) last.set(r.reviewer, r);
  }
  for (const r of last.values()) if (BLOCKS(r) && r.patchset === current) return true;
  return false;
}
