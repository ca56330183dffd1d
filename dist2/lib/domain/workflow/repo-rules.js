// Repository rules (docs/api.md "Repository rules"): what a land of this repository needs beyond
// the author's attestation — approvals from people other than the patchset's author and
// uploader, code owners' approvals, CI, resolved threads — and who may land or bypass them. The
// record shape, its validation, the defaults, and the rule checks over a patchset's evidence.
// Pure functions; lib/authority/workflow/rules-book.ts persists and lib/authority/workflow/gates.ts
// judges.
import { Invalid, Unprocessable } from '../errors.js';
import { nameProblem } from '../text.js';
import { ownersOf } from './codeowners.js';
/** workflow.log entity type and its one id (storage-layout.md §17). */
export const REPOSITORY_RULES = 'repository_rules';
export const RULES_ID = 'rules';
export const MAX_REQUIRED_APPROVALS = 10;
/** Names a list (land_allowed, bypass_allowed) holds at most. */
export const MAX_RULE_NAMES = 100;
export const RULE_FIELDS = ['required_approvals', 'require_code_owners', 'dismiss_stale_approvals', 'require_ci', 'require_resolved_threads', 'land_allowed', 'bypass_allowed'];
/**
 * The rules of a repository nobody set rules on: exactly what the land gates did before rules
 * existed. `dismiss_stale_approvals` true is the carry-over approvals always had: an approval
 * counts on a later patchset only when that patchset changes the same paths to the same
 * content (its diff fingerprint equals the approved one's, a trivial rebase).
 */
export const DEFAULT_RULES = Object.freeze({
    required_approvals: 0,
    require_code_owners: false,
    dismiss_stale_approvals: true,
    require_ci: true,
    require_resolved_threads: false,
    land_allowed: [],
    bypass_allowed: [],
});
/** Sensible defaults for a team: one approval from someone other than the author, CI required. */
export const TEAM_DEFAULT_RULES = Object.freeze({ ...DEFAULT_RULES, required_approvals: 1, require_ci: true });
export function teamDefaultRules() {
    return { ...TEAM_DEFAULT_RULES, land_allowed: [], bypass_allowed: [] };
}
function names(value, field) {
    if (!Array.isArray(value))
        throw new Unprocessable(`field ${field}: expected an array of names`);
    if (value.length > MAX_RULE_NAMES)
        throw new Invalid(`${field} names more than ${MAX_RULE_NAMES} accounts or groups`);
    const out = [];
    for (const [i, v] of value.entries()) {
        if (typeof v !== 'string')
            throw new Unprocessable(`field ${field}.${i}: expected a string`);
        const problem = nameProblem(v);
        if (problem)
            throw new Invalid(`${field}[${i}] ${problem}`);
        if (out.includes(v))
            throw new Invalid(`${field} names ${JSON.stringify(v.slice(0, 64))} twice`);
        out.push(v);
    }
    return out;
}
/**
 * A partial or full rules object from a request: unknown fields and wrong JSON types 422, values
 * out of range 400 (docs/api.md "Request errors"). Returns only the fields given.
 */
export function parseRulesPatch(value) {
    if (value === null || typeof value !== 'object' || Array.isArray(value))
        throw new Unprocessable('field rules: expected an object');
    const v = value;
    for (const k of Object.keys(v))
        if (!RULE_FIELDS.includes(k))
            throw new Unprocessable(`unknown field: rules.${k}`);
    const out = {};
    if (v.required_approvals !== undefined) {
        const n = v.required_approvals;
        if (typeof n !== 'number')
            throw new Unprocessable('field rules.required_approvals: expected an integer');
        if (!Number.isInteger(n) || n < 0 || n > MAX_REQUIRED_APPROVALS)
            throw new Invalid(`rules.required_approvals must be an integer from 0 to ${MAX_REQUIRED_APPROVALS}`);
        out.required_approvals = n;
    }
    for (const k of ['require_code_owners', 'dismiss_stale_approvals', 'require_ci', 'require_resolved_threads']) {
        if (v[k] === undefined)
            continue;
        if (typeof v[k] !== 'boolean')
            throw new Unprocessable(`field rules.${k}: expected a boolean`);
        out[k] = v[k];
    }
    if (v.land_allowed !== undefined)
        out.land_allowed = names(v.land_allowed, 'rules.land_allowed');
    if (v.bypass_allowed !== undefined)
        out.bypass_allowed = names(v.bypass_allowed, 'rules.bypass_allowed');
    return out;
}
/** What is wrong with a stored rules record (fsck), as sentences; none when it is well formed. */
export function rulesRecordProblems(id, r) {
    if (id !== RULES_ID)
        return [`has id ${JSON.stringify(id.slice(0, 64))}; the one rules record is "${RULES_ID}"`];
    if (!r || typeof r !== 'object')
        return ['is not an object'];
    const rec = r;
    const out = [];
    try {
        const parsed = parseRulesPatch(rec.rules);
        const missing = RULE_FIELDS.filter((k) => !(k in parsed));
        if (missing.length)
            out.push(`lacks ${missing.join(', ')}`);
    }
    catch (err) {
        out.push(`holds rules that do not parse: ${err.message}`);
    }
    if (!Number.isInteger(rec.updated_at_s) || rec.updated_at_s < 0)
        out.push('updated_at_s is not a time in seconds');
    if (rec.updated_by !== null && (typeof rec.updated_by !== 'string' || nameProblem(rec.updated_by) !== null))
        out.push('updated_by is neither null nor a name');
    return out;
}
/** The stored rules of a record as read (fields a record lacks take their defaults). */
export function rulesOf(record) {
    return { ...DEFAULT_RULES, land_allowed: [], bypass_allowed: [], ...(record?.rules ?? {}) };
}
export const NO_GROUPS = () => null;
/** Whether `who` is one of `list` or a member of a group it names. */
export function listed(list, who, groups) {
    if (who === null)
        return false;
    return list.some((n) => n === who || (groups(n)?.includes(who) ?? false));
}
/** Who wrote or uploaded the patchset: their approvals never count toward the rules. */
export function authorsOf(ps) {
    const out = [];
    for (const n of [ps.author, ps.pushed_by])
        if (typeof n === 'string' && n !== '' && !out.includes(n))
            out.push(n);
    return out;
}
/**
 * `required_approvals`: live approvals from reviewers who are not the patchset's author nor its
 * uploader.
 */
export function approvalsRequirement(required, approvers, ps) {
    const authors = authorsOf(ps);
    const counted = approvers.filter((a) => !authors.includes(a));
    const ok = counted.length >= required;
    const others = authors.length > 0 ? `someone other than ${authors.join(' and ')}` : 'a reviewer';
    const ignored = approvers.filter((a) => authors.includes(a));
    const message = ok
        ? `${counted.length} approval(s) of ${required} required from reviewers other than the author (${counted.join(', ') || 'none needed'})`
        : `needs ${required - counted.length}${counted.length ? ' more' : ''} approval${required - counted.length > 1 ? 's' : ''} from ${others} (${required} required; ${counted.length} counted${counted.length ? `: ${counted.join(', ')}` : ''})${ignored.length ? `; the approval of ${ignored.join(', ')} does not count: the patchset's author or uploader` : ''}`;
    return { kind: 'approvals_required', rule: 'required_approvals', satisfied: ok, message };
}
/** The changed paths of a patchset (every one; null when the record lists only some). */
export function touchedPaths(ps) {
    return ps.diff.files_truncated ? null : ps.diff.files.map((f) => f.path);
}
/** The owners of each touched path that has any (paths in order). */
export function ownedPaths(co, paths) {
    const out = [];
    for (const p of paths) {
        const o = ownersOf(co, p);
        if (o && o.owners.length > 0)
            out.push({ path: p, owners: o.owners });
    }
    return out;
}
/** Paths listed in a code-owners message at most. */
const LISTED_PATHS = 5;
/**
 * `require_code_owners`: every touched path with owners has a live approval from one of them
 * (an owner is a named person, or a member of a named group), not counting the author's or
 * uploader's. `co` null: the target head has no CODEOWNERS (nothing is owned); a file with
 * problems blocks until it is fixed.
 */
export function codeOwnersRequirement(co, paths, approvers, ps, groups) {
    const base = { kind: 'code_owners_required', rule: 'require_code_owners' };
    if (co === null)
        return { ...base, satisfied: true, message: 'no CODEOWNERS file in the target line\'s head: no path is owned' };
    if (co.problem_count > 0) {
        const first = co.problems.slice(0, 3).map((p) => `line ${p.line}: ${p.message}`).join('; ');
        return { ...base, satisfied: false, message: `${co.path} has ${co.problem_count} problem(s) (${first}); fix it on the target line before code owners can approve` };
    }
    if (paths === null)
        return { ...base, satisfied: false, message: `the patchset touches more paths than can be read for its code owners; it cannot be judged by them` };
    const authors = authorsOf(ps);
    const counted = approvers.filter((a) => !authors.includes(a));
    const owns = (owner, who) => owner === who || (groups(owner)?.includes(who) ?? false);
    const missing = ownedPaths(co, paths).filter((o) => !counted.some((a) => o.owners.some((owner) => owns(owner, a))));
    if (missing.length === 0)
        return { ...base, satisfied: true, message: 'every owned path has an approval from one of its code owners' };
    const who = [...new Set(missing.flatMap((m) => m.owners))];
    const lines = missing.slice(0, LISTED_PATHS).map((m) => `${m.path}: ${m.owners.map((o) => `@${o}`).join(' or ')}`);
    return { ...base, satisfied: false, who, message: `needs an approval from an owner of ${lines.join('; ')}${missing.length > LISTED_PATHS ? `; and ${missing.length - LISTED_PATHS} more path(s)` : ''}${authors.length ? ` (not ${authors.join(' or ')})` : ''}` };
}
/** `land_allowed`: the caller is listed (or a member of a listed group); an empty list lets anyone. */
export function landAllowedRequirement(list, caller, groups) {
    const ok = list.length === 0 || listed(list, caller, groups);
    return {
        kind: 'land_not_allowed',
        rule: 'land_allowed',
        satisfied: ok,
        message: ok ? (list.length === 0 ? 'anyone who may call the land may land' : `${caller} may land`) : `${caller === null ? 'an unidentified caller' : caller} may not land in this repository; who may: ${list.join(', ')}`,
        who: ok ? [] : [...list],
    };
}
//# sourceMappingURL=repo-rules.js.map