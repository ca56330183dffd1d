// The land gates (README "Lands"): the one seam between a land and a patchset's evidence. The
// evidence is read ONLY through ./evidence.ts (`policyProjection`, `reviewProjection`,
// `ciProjection`); the rule is defined on their projection fields, in this order:
//   1. policy: the latest decision must be `pass` (else `blocked_by_policy`; `pending` before
//      any evaluation, so an unevaluated patchset never lands);
//   2. review: no live blocking review, `blocking === 0` (else `blocked_by_review`);
//   3. CI: evidence of the current run present and passing, `overall === 'pass'` (else
//      `blocked_by_ci`).
import type { PatchsetRecord } from '../../domain/workflow/rules.js';
import type { JobQueue } from '../jobs.js';
import { ciProjection, policyProjection, reviewProjection } from './evidence.js';

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

/** The gate function a land calls (injected; the default reads evidence.ts). */
export type LandGates = (patchset: PatchsetRecord) => GateRefusal | null;

/** The rule on the projections (pure). */
export function checkGates(e: Evidence): GateRefusal | null {
  if (e.policy.decision !== 'pass') return { kind: 'blocked_by_policy', message: `the latest policy decision is ${String(e.policy.decision)}, not pass` };
  const blocking = Number(e.review.blocking ?? 0);
  if (blocking !== 0) return { kind: 'blocked_by_review', message: `${blocking} live blocking review(s)` };
  if (e.ci.overall !== 'pass') return { kind: 'blocked_by_ci', message: `CI of the current run is ${String(e.ci.overall)}, not pass` };
  return null;
}

/** The evidence of a patchset, through evidence.ts only. */
export function evidenceOf(jobs: JobQueue, patchset: PatchsetRecord): Evidence {
  return { policy: policyProjection(), review: reviewProjection(), ci: ciProjection(jobs.ciJobsOf(patchset.patchset_id)) };
}

export function landGates(jobs: JobQueue): LandGates {
  return (patchset) => checkGates(evidenceOf(jobs, patchset));
}
