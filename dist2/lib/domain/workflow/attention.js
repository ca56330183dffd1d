// Whose move it is on a change ("attention", Gerrit's attention set; docs/api.md "People"): a
// pure function of the change's records. Requested reviewers are asked to act after a request
// or a new patchset until they act on the current patchset; the owner is asked to act after a
// blocking vote on the current patchset, a failed CI run of it, an ejection of it from the land
// queue or a conflict. A closed change needs nobody. It changes when the rule changes, never
// with where the records come from (lib/authority/workflow/people.ts gathers them).
/** Actions that are a reviewer's move (anything but a request). */
const ACTS = (action) => action !== 'request';
const BLOCKS = (r) => r.blocking || r.action === 'request_changes' || r.action === 'task_request_changes';
/** Whose move it is, the owner first, then reviewers in the order they were first asked; each name once. */
export function attention(input) {
    if (!input.open || input.current_patchset === 0)
        return [];
    const out = [];
    const owner = input.owner;
    const current = input.current_patchset;
    if (owner !== null) {
        const ownReason = input.ejection === 'conflict' ? 'conflict'
            : input.ejection !== null ? 'ejected'
                : input.ci === 'fail' || input.ci === 'error' ? 'ci_failed'
                    : liveBlock(input.reviews, current) ? 'blocking_vote'
                        : null;
        if (ownReason)
            out.push({ name: owner, reason: ownReason });
    }
    // Each requested person: the latest request, and whether they acted on the current patchset after it.
    const latest = new Map();
    for (const r of input.reviews)
        if (r.person_request)
            latest.set(r.reviewer, r);
    for (const [name, req] of latest) {
        if (name === owner)
            continue;
        const acted = input.reviews.some((r) => r.reviewer === name && ACTS(r.action) && r.sequence > req.sequence && r.patchset === current);
        if (!acted)
            out.push({ name, reason: req.patchset === current ? 'review_requested' : 'new_patchset' });
    }
    return out;
}
/** A reviewer's latest vote-bearing record is a block cast on the current patchset. */
function liveBlock(reviews, current) {
    const last = new Map();
    for (const r of reviews) {
        if (r.action === 'dismiss' || r.action === 'approve' || r.action === 'task_approve' || BLOCKS(r))
            last.set(r.reviewer, r);
    }
    for (const r of last.values())
        if (BLOCKS(r) && r.patchset === current)
            return true;
    return false;
}
//# sourceMappingURL=attention.js.map