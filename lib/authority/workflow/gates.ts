// The land gates (docs: "Lands"): the one seam between a land and a patchset's evidence. A land
// judges the evidence as it stands at the moment of the land, inside the land's own commit
// (Gerrit evaluates submit requirements at submit time): the policy is evaluated afresh on the
// latest attestation, the live reviews and the CI of the current run, and that decision is
// recorded in the same commit, so the land names the decision it relied on. A stored decision
// is never trusted on its own: an attestation revoked or an approval dismissed after it was
// made is seen by the land. The rule, in this order:
//   1. policy: the fresh decision must be `pass` (else `blocked_by_policy`);
//   2. review: no live blocking review, `blocking === 0` (else `blocked_by_review`);
//   3. CI: evidence of the current run present and passing, `overall === 'pass'` (else
//      `blocked_by_ci`);
//   4. threads: under policy_flags bit 1, no published comment thread of the change left
//      unresolved (else `unresolved_threads`).
import type { PatchsetRecord } from '../../domain/workflow/rules.js';
import type { CiState } from './reviews.js';
import type { Txn } from '../../store/content-store.js';
import type { ReviewBook } from './reviews.js';

export type GateKind = 'blocked_by_policy' | 'blocked_by_review' | 'blocked_by_ci' | 'unresolved_threads';

/** policy_flags bit 1: an unresolved comment thread of the change blocks its land (as GitHub's "require conversation resolution"). */
export const POLICY_RESOLVE_THREADS = 0x02;

export interface GateRefusal {
  kind: GateKind;
  message: string;
  /** `unresolved_threads`: how many threads are unresolved. */
  count?: number;
}

export interface Evidence {
  policy: Record<string, unknown>;
  review: Record<string, unknown>;
  ci: Record<string, unknown>;
  /** Published unresolved threads of the change; null when the repository does not require resolution. */
  unresolved_threads?: number | null;
}

export interface GateJudgement {
  refusal: GateRefusal | null;
  /** The policy decision recorded for this judgement (null when nothing was recorded). */
  policy_decision_id: string | null;
}

/**
 * The gate function a land calls (injected; the default reads the review book). With `tx` it
 * judges the evidence as that transaction sees it and records its policy decision there;
 * without, it judges the published evidence and writes nothing.
 */
export type LandGates = (patchset: PatchsetRecord, tx?: Txn, ci?: SpeculationCi) => GateJudgement;

/**
 * The CI a land-queue land is judged by: the state of the job that tested the speculative
 * snapshot (the tree that lands), in place of the patchset's own CI.
 */
export type SpeculationCi = CiState;

/** The rule on the evidence (pure). */
export function checkGates(e: Evidence): GateRefusal | null {
  if (e.policy.decision !== 'pass') {
    const failing = Array.isArray(e.policy.checks) ? (e.policy.checks as { name: string; status: string }[]).filter((c) => c.status === 'fail').map((c) => c.name) : [];
    return { kind: 'blocked_by_policy', message: `the policy decision at the land is ${String(e.policy.decision)}, not pass${failing.length ? ` (failing checks: ${failing.join(', ')})` : ''}` };
  }
  const blocking = Number(e.review.blocking ?? 0);
  if (blocking !== 0) return { kind: 'blocked_by_review', message: `${blocking} live blocking review(s)` };
  if (e.ci.overall !== 'pass') return { kind: 'blocked_by_ci', message: `CI of the current run is ${String(e.ci.overall)}, not pass` };
  const unresolved = e.unresolved_threads ?? 0;
  if (unresolved > 0) return { kind: 'unresolved_threads', message: `${unresolved} unresolved comment thread(s); this repository requires every thread resolved before a land`, count: unresolved };
  return null;
}

/**
 * The gates of this repository; `reviews` is read at land time (the book is built at open).
 * `unresolvedThreads` counts the change's unresolved threads as `tx` sees them, or is null when
 * the repository's policy does not require resolution.
 */
export function landGates(reviews: () => Pick<ReviewBook, 'judgeForLand'>, unresolvedThreads: (patchset: PatchsetRecord, tx?: Txn) => number | null = () => null): LandGates {
  return (patchset, tx, ci) => {
    const e = reviews().judgeForLand(patchset, tx, ci);
    return { refusal: checkGates({ ...e, unresolved_threads: unresolvedThreads(patchset, tx) }), policy_decision_id: e.policy.decision_id };
  };
}
