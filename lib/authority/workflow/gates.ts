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
// The repository's rules (docs/api.md "Repository rules", ./rules-book.ts) add their own steps
// and may turn steps 3 and 4 off or on; with no rule set the order and messages are the above:
//   0. land_allowed: the caller may land (else `land_not_allowed`; only when the caller is judged);
//   1. policy; 2. review;
//   2a. required_approvals: live approvals from people other than the author and the uploader
//       (else `approvals_required`);
//   2b. require_code_owners: each owned path approved by one of its owners (else
//       `code_owners_required`);
//   3. CI when require_ci; 4. threads when require_resolved_threads (or policy_flags bit 1).
// A land with `bypass` by a caller in bypass_allowed lands whatever these say; the refusals it
// overrode are answered in `bypassed`.
// Before all of them, a change above an unlanded change in its stack is `blocked_by_change_below`
// (./stacks.ts): its land would bring its own commit without the one below. A bypass does not
// override it (landing the change below first is the way).
// Readiness, the land and the land queue call this one function.
import type { PatchsetRecord } from '../../domain/workflow/rules.js';
import type { CiState } from './reviews.js';
import type { Txn } from '../../store/content-store.js';
import type { ReviewBook } from './reviews.js';
import { approvalsRequirement, codeOwnersRequirement, DEFAULT_RULES, landAllowedRequirement, listed, NO_GROUPS, touchedPaths, type GroupMembers, type RepositoryRules, type Requirement } from '../../domain/workflow/repo-rules.js';
import type { CodeOwners } from '../../domain/workflow/codeowners.js';

export type GateKind = 'blocked_by_change_below' | 'blocked_by_policy' | 'blocked_by_review' | 'blocked_by_ci' | 'unresolved_threads' | 'land_not_allowed' | 'approvals_required' | 'code_owners_required';

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
  /** Each requirement judged, in order, met or not (readiness' lines); absent from gates that list none. */
  requirements?: Requirement[];
  /** The refusals a bypass overrode (the land landed anyway); absent or empty: nothing was bypassed. */
  bypassed?: GateRefusal[];
}

/** Who asks, onto which line, and whether they bypass the rules. */
export interface GateOptions {
  /** The line the land moves (default: the change's land target line): its head's CODEOWNERS count. */
  target?: string;
  /** The caller; undefined: who lands is not judged (the land queue's admission, a bare read). */
  caller?: string | null;
  /** Land whatever the gates say (the caller must be in bypass_allowed). */
  bypass?: boolean;
  /** false: the change below is not judged (the land queue lands it first: it is queued ahead). */
  stack?: boolean;
}

/**
 * The gate function a land calls (injected; the default reads the review book). With `tx` it
 * judges the evidence as that transaction sees it and records its policy decision there;
 * without, it judges the published evidence and writes nothing.
 */
export type LandGates = (patchset: PatchsetRecord, tx?: Txn, ci?: SpeculationCi, opts?: GateOptions) => GateJudgement;

/**
 * The CI a land-queue land is judged by: the state of the job that tested the speculative
 * snapshot (the tree that lands), in place of the patchset's own CI.
 */
export type SpeculationCi = CiState;

/** The rule on the evidence (pure): the first refusal of the gates a repository without rules has. */
export function checkGates(e: Evidence): GateRefusal | null {
  const failed = requirementsOf(e, DEFAULT_RULES).find((r) => !r.satisfied);
  return failed ? refusalOf(failed, e) : null;
}

/** What the rules read beyond the evidence (null when the rule is off or does not apply). */
export interface RuleInputs {
  /** The live approvers of the patchset (each reviewer whose vote is a live approval). */
  approvers: readonly string[];
  patchset: Pick<PatchsetRecord, 'author' | 'pushed_by' | 'diff'>;
  /** The target head's CODEOWNERS: null none, undefined not read (the judgement refuses: read it first). */
  code_owners?: CodeOwners | null;
  /** Every path the patchset touches (default: its record's list, when complete); null unknown. */
  paths?: string[] | null;
  caller?: string | null;
  groups?: GroupMembers;
}

function refusalOf(r: Requirement, e: Evidence): GateRefusal {
  return { kind: r.kind as GateKind, message: r.message, ...(r.kind === 'unresolved_threads' ? { count: e.unresolved_threads ?? 0 } : {}) };
}

/**
 * Every requirement of `rules` on the evidence, in the order the gates judge them (pure). Without
 * rule inputs only the gates of a repository without rules are listed.
 */
export function requirementsOf(e: Evidence, rules: RepositoryRules, inp?: RuleInputs): Requirement[] {
  const out: Requirement[] = [];
  const groups = inp?.groups ?? NO_GROUPS;
  if (inp && inp.caller !== undefined && rules.land_allowed.length > 0) out.push(landAllowedRequirement(rules.land_allowed, inp.caller, groups));
  if (e.policy.decision !== 'pass') {
    const failing = Array.isArray(e.policy.checks) ? (e.policy.checks as { name: string; status: string }[]).filter((c) => c.status === 'fail').map((c) => c.name) : [];
    out.push({ kind: 'blocked_by_policy', rule: 'policy', satisfied: false, message: `the policy decision at the land is ${String(e.policy.decision)}, not pass${failing.length ? ` (failing checks: ${failing.join(', ')})` : ''}` });
  } else out.push({ kind: 'blocked_by_policy', rule: 'policy', satisfied: true, message: 'the policy decision is pass' });
  const blocking = Number(e.review.blocking ?? 0);
  out.push({ kind: 'blocked_by_review', rule: 'review', satisfied: blocking === 0, message: blocking !== 0 ? `${blocking} live blocking review(s)` : 'no live blocking review' });
  if (inp && rules.required_approvals > 0) out.push(approvalsRequirement(rules.required_approvals, inp.approvers, inp.patchset));
  if (inp && rules.require_code_owners) {
    out.push(inp.code_owners === undefined
      ? { kind: 'code_owners_required', rule: 'require_code_owners', satisfied: false, message: 'the CODEOWNERS of the target line\'s head was not read for this judgement; retry' }
      : codeOwnersRequirement(inp.code_owners, inp.paths !== undefined ? inp.paths : touchedPaths(inp.patchset), inp.approvers, inp.patchset, groups));
  }
  if (rules.require_ci) out.push({ kind: 'blocked_by_ci', rule: 'require_ci', satisfied: e.ci.overall === 'pass', message: e.ci.overall !== 'pass' ? `CI of the current run is ${String(e.ci.overall)}, not pass` : 'CI of the current run passed' });
  const unresolved = e.unresolved_threads ?? 0;
  if (e.unresolved_threads !== null && e.unresolved_threads !== undefined) {
    out.push({ kind: 'unresolved_threads', rule: 'require_resolved_threads', satisfied: unresolved === 0, message: unresolved > 0 ? `${unresolved} unresolved comment thread(s); this repository requires every thread resolved before a land` : 'every comment thread is resolved' });
  }
  return out;
}

/** What the gates read of the repository's rules (./rules-book.ts through the authority). */
export interface RulesSource {
  effective(tx?: Txn): RepositoryRules;
  readonly groupMembers: GroupMembers;
  /** The CODEOWNERS of the head of `target` (or the change's target line) as `tx` sees it: null none, undefined not read yet. */
  codeOwnersFor(patchset: PatchsetRecord, tx: Txn | undefined, target: string | undefined): CodeOwners | null | undefined;
  /** Every path the patchset touches (null: not known). */
  touchedOf(patchset: PatchsetRecord): string[] | null;
}

/**
 * The gates of this repository; `reviews` is read at land time (the book is built at open).
 * `unresolvedThreads` counts the change's unresolved threads as `tx` sees them, or is null when
 * the repository does not require resolution. `rules` (absent: none set, today's gates).
 */
export function landGates(reviews: () => Pick<ReviewBook, 'judgeForLand'>, unresolvedThreads: (patchset: PatchsetRecord, tx?: Txn) => number | null = () => null, rules?: () => RulesSource, stack?: (patchset: PatchsetRecord, tx?: Txn) => Requirement | null): LandGates {
  return (patchset, tx, ci, opts = {}) => {
    const e = reviews().judgeForLand(patchset, tx, ci);
    const src = rules?.();
    const r = src ? src.effective(tx) : DEFAULT_RULES;
    const groups = src?.groupMembers ?? NO_GROUPS;
    const inputs: RuleInputs = {
      approvers: e.approvers,
      patchset,
      code_owners: r.require_code_owners && src ? src.codeOwnersFor(patchset, tx, opts.target) : null,
      paths: src ? src.touchedOf(patchset) : touchedPaths(patchset),
      caller: opts.caller,
      groups,
    };
    const ev: Evidence = { ...e, unresolved_threads: unresolvedThreads(patchset, tx) };
    const below = opts.stack === false ? null : stack?.(patchset, tx) ?? null;
    const requirements = [...(below ? [below] : []), ...requirementsOf(ev, r, inputs)];
    const failed = requirements.filter((x) => !x.satisfied).map((x) => refusalOf(x, ev));
    if (below) return { refusal: failed[0], policy_decision_id: e.policy.decision_id, requirements };
    const bypass = opts.bypass === true && opts.caller !== undefined && listed(r.bypass_allowed, opts.caller, groups);
    if (bypass && failed.length > 0) return { refusal: null, policy_decision_id: e.policy.decision_id, requirements, bypassed: failed };
    return { refusal: failed[0] ?? null, policy_decision_id: e.policy.decision_id, requirements };
  };
}
