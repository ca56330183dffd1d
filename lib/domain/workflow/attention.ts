// Whose move it is on a change ("attention", Gerrit's attention set; docs/api.md "People"): a
// pure function of the change's records. Requested reviewers are asked to act after a request
// or a new patchset until they act on the current patchset; the owner is asked to act after a
// blocking vote on the current patchset, a failed CI run of it, an ejection of it from the land
// queue or a conflict. A closed change needs nobody. It changes when the rule changes, never
// with where the records come from (lib/authority/workflow/people.ts gathers them).

export type AttentionReason = 'review_requested' | 'new_patchset' | 'blocking_vote' | 'ci_failed' | 'ejected' | 'conflict';

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
}

export interface Attention {
  name: string;
  reason: AttentionReason;
}

/** Actions that are a reviewer's move (anything but a request). */
const ACTS = (action: string) => action !== 'request';
const BLOCKS = (r: AttentionReview) => r.blocking || r.action === 'request_changes' || r.action === 'task_request_changes';

/** Whose move it is, the owner first, then reviewers in the order they were first asked; each name once. */
export function attention(input: AttentionInput): Attention[] {
  if (!input.open || input.current_patchset === 0) return [];
  const out: Attention[] = [];
  const owner = input.owner;
  const current = input.current_patchset;
  if (owner !== null) {
    const ownReason: AttentionReason | null =
      input.ejection === 'conflict' ? 'conflict'
        : input.ejection !== null ? 'ejected'
          : input.ci === 'fail' || input.ci === 'error' ? 'ci_failed'
            : liveBlock(input.reviews, current) ? 'blocking_vote'
              : null;
    if (ownReason) out.push({ name: owner, reason: ownReason });
  }
  // Each requested person: the latest request, and whether they acted on the current patchset after it.
  const latest = new Map<string, AttentionReview>();
  for (const r of input.reviews) if (r.person_request) latest.set(r.reviewer, r);
  for (const [name, req] of latest) {
    if (name === owner) continue;
    const acted = input.reviews.some((r) => r.reviewer === name && ACTS(r.action) && r.sequence > req.sequence && r.patchset === current);
    if (!acted) out.push({ name, reason: req.patchset === current ? 'review_requested' : 'new_patchset' });
  }
  return out;
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
