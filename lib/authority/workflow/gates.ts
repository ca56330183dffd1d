// The land gates (README "Lands"): the one seam between a land and a patchset's evidence. The
// evidence is read ONLY through the review book's patchset projection (`patchsetParts`: the
// latest policy decision, the live review counts, and the CI state derived from the patchset's
// kind-7 job records); the rule is defined on those projection fields, in this order:
//   1. policy: the latest decision must be `pass` (else `blocked_by_policy`; `pending` before
//      any evaluation, so an unevaluated patchset never lands);
//   2. review: no live blocking review, `blocking === 0` (else `blocked_by_review`);
//   3. CI: evidence of the current run present and passing, `overall === 'pass'` (else
//      `blocked_by_ci`).
import type { PatchsetRecord } from '../../domain/workflow/rules.js';
import type { ReviewBook } from './reviews.js';

export type GateKind = 'blocked_by_policy' | 'blocked_by_review' | 'blocked_by_ci';

export interface GateRefusal {
  kind: GateKind;
  message: string;
}

export interface Evidence {
  policy: Record<string, unknown>;
  review: Record<string, unknown>;
  ci: Record<string, unknown>;
}

/** The gate function a land calls (injected; the default reads the review book). */
export type LandGates = (patchset: PatchsetRecord) => GateRefusal | null;

/** The rule on the projections (pure). */
export function checkGates(e: Evidence): GateRefusal | null {
  if (e.policy.decision !== 'pass') return { kind: 'blocked_by_policy', message: `the latest policy decision is ${String(e.policy.decision)}, not pass` };
  const blocking = Number(e.review.blocking ?? 0);
  if (blocking !== 0) return { kind: 'blocked_by_review', message: `${blocking} live blocking review(s)` };
  if (e.ci.overall !== 'pass') return { kind: 'blocked_by_ci', message: `CI of the current run is ${String(e.ci.overall)}, not pass` };
  return null;
}

/** The evidence of a patchset, as its projection shows it. */
export function evidenceOf(reviews: Pick<ReviewBook, 'patchsetParts'>, patchset: PatchsetRecord): Evidence {
  const parts = reviews.patchsetParts(patchset);
  return { policy: parts.policy as Record<string, unknown>, review: parts.review as Record<string, unknown>, ci: parts.ci as Record<string, unknown> };
}

/** The gates of this repository; `reviews` is read at land time (the book is built at open). */
export function landGates(reviews: () => Pick<ReviewBook, 'patchsetParts'>): LandGates {
  return (patchset) => checkGates(evidenceOf(reviews(), patchset));
}
