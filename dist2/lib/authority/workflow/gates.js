import { approvalsRequirement, codeOwnersRequirement, DEFAULT_RULES, landAllowedRequirement, listed, NO_GROUPS, touchedPaths } from '../../domain/workflow/repo-rules.js';
/** policy_flags bit 1: an unresolved comment thread of the change blocks its land (as GitHub's "require conversation resolution"). */
export const POLICY_RESOLVE_THREADS = 0x02;
/** The rule on the evidence (pure): the first refusal of the gates a repository without rules has. */
export function checkGates(e) {
    const failed = requirementsOf(e, DEFAULT_RULES).find((r) => !r.satisfied);
    return failed ? refusalOf(failed, e) : null;
}
function refusalOf(r, e) {
    return { kind: r.kind, message: r.message, ...(r.kind === 'unresolved_threads' ? { count: e.unresolved_threads ?? 0 } : {}) };
}
/**
 * Every requirement of `rules` on the evidence, in the order the gates judge them (pure). Without
 * rule inputs only the gates of a repository without rules are listed.
 */
export function requirementsOf(e, rules, inp) {
    const out = [];
    const groups = inp?.groups ?? NO_GROUPS;
    if (inp && inp.caller !== undefined && rules.land_allowed.length > 0)
        out.push(landAllowedRequirement(rules.land_allowed, inp.caller, groups));
    if (e.policy.decision !== 'pass') {
        const failing = Array.isArray(e.policy.checks) ? e.policy.checks.filter((c) => c.status === 'fail').map((c) => c.name) : [];
        out.push({ kind: 'blocked_by_policy', rule: 'policy', satisfied: false, message: `the policy decision at the land is ${String(e.policy.decision)}, not pass${failing.length ? ` (failing checks: ${failing.join(', ')})` : ''}` });
    }
    else
        out.push({ kind: 'blocked_by_policy', rule: 'policy', satisfied: true, message: 'the policy decision is pass' });
    const blocking = Number(e.review.blocking ?? 0);
    out.push({ kind: 'blocked_by_review', rule: 'review', satisfied: blocking === 0, message: blocking !== 0 ? `${blocking} live blocking review(s)` : 'no live blocking review' });
    if (inp && rules.required_approvals > 0)
        out.push(approvalsRequirement(rules.required_approvals, inp.approvers, inp.patchset));
    if (inp && rules.require_code_owners) {
        out.push(inp.code_owners === undefined
            ? { kind: 'code_owners_required', rule: 'require_code_owners', satisfied: false, message: 'the CODEOWNERS of the target line\'s head was not read for this judgement; retry' }
            : codeOwnersRequirement(inp.code_owners, inp.paths !== undefined ? inp.paths : touchedPaths(inp.patchset), inp.approvers, inp.patchset, groups));
    }
    if (rules.require_ci)
        out.push({ kind: 'blocked_by_ci', rule: 'require_ci', satisfied: e.ci.overall === 'pass', message: e.ci.overall !== 'pass' ? `CI of the current run is ${String(e.ci.overall)}, not pass` : 'CI of the current run passed' });
    const unresolved = e.unresolved_threads ?? 0;
    if (e.unresolved_threads !== null && e.unresolved_threads !== undefined) {
        out.push({ kind: 'unresolved_threads', rule: 'require_resolved_threads', satisfied: unresolved === 0, message: unresolved > 0 ? `${unresolved} unresolved comment thread(s); this repository requires every thread resolved before a land` : 'every comment thread is resolved' });
    }
    return out;
}
/**
 * The gates of this repository; `reviews` is read at land time (the book is built at open).
 * `unresolvedThreads` counts the change's unresolved threads as `tx` sees them, or is null when
 * the repository does not require resolution. `rules` (absent: none set, today's gates).
 */
export function landGates(reviews, unresolvedThreads = () => null, rules) {
    return (patchset, tx, ci, opts = {}) => {
        const e = reviews().judgeForLand(patchset, tx, ci);
        const src = rules?.();
        const r = src ? src.effective(tx) : DEFAULT_RULES;
        const groups = src?.groupMembers ?? NO_GROUPS;
        const inputs = {
            approvers: e.approvers,
            patchset,
            code_owners: r.require_code_owners && src ? src.codeOwnersFor(patchset, tx, opts.target) : null,
            paths: src ? src.touchedOf(patchset) : touchedPaths(patchset),
            caller: opts.caller,
            groups,
        };
        const ev = { ...e, unresolved_threads: unresolvedThreads(patchset, tx) };
        const requirements = requirementsOf(ev, r, inputs);
        const failed = requirements.filter((x) => !x.satisfied).map((x) => refusalOf(x, ev));
        const bypass = opts.bypass === true && opts.caller !== undefined && listed(r.bypass_allowed, opts.caller, groups);
        if (bypass && failed.length > 0)
            return { refusal: null, policy_decision_id: e.policy.decision_id, requirements, bypassed: failed };
        return { refusal: failed[0] ?? null, policy_decision_id: e.policy.decision_id, requirements };
    };
}
//# sourceMappingURL=gates.js.map