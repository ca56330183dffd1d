// Repository rules (extension routes; docs/api.md "Repository rules"): read the rules as they
// apply, or set some of them. A PUT names only the rules it changes; unknown fields and wrong
// JSON types are 422, values out of range 400, and a refused PUT writes nothing.
import { array, boolean, number, object, optional, string } from 'superstruct';
import { MAX_REQUIRED_APPROVALS, MAX_RULE_NAMES } from '../../domain/workflow/repo-rules.js';
import { bool, nullable as orNull, obj, ref, str, uint } from '../json-schema.js';
import { requireAuthority } from '../route-types.js';
import { validate } from '../validate.js';
import { identityOf } from './workflow-common.js';
export const PutRules = object({
    rules: object({
        required_approvals: optional(number()),
        require_code_owners: optional(boolean()),
        dismiss_stale_approvals: optional(boolean()),
        require_ci: optional(boolean()),
        require_resolved_threads: optional(boolean()),
        land_allowed: optional(array(string())),
        bypass_allowed: optional(array(string())),
    }),
});
function projection(v, repositoryIndex) {
    return { repository_index: repositoryIndex, rules: v.rules, updated_at_s: v.updated_at_s, updated_by: v.updated_by };
}
export const get = async (ctx) => {
    const a = requireAuthority(ctx);
    return { json: projection(a.rules.view(), a.index) };
};
export const put = async (ctx) => {
    const req = validate(ctx.body, PutRules);
    const a = requireAuthority(ctx);
    const rules = await a.rules.set(req.rules, identityOf(ctx));
    await ctx.access?.book.audit(identityOf(ctx), 'rules.changed', { repository_index: a.index, fields: Object.keys(req.rules) });
    return { json: projection(rules, a.index) };
};
const names = { type: 'array', items: str, maxItems: MAX_RULE_NAMES };
export const SCHEMAS = {
    RepositoryRules: obj({
        required_approvals: { ...uint, maximum: MAX_REQUIRED_APPROVALS, description: 'live approvals needed from reviewers who are neither the patchset\'s author nor its uploader (0: none)' },
        require_code_owners: { ...bool, description: 'each touched path owned in the target head\'s CODEOWNERS needs a live approval from one of its owners; owners are asked to review each new patchset' },
        dismiss_stale_approvals: { ...bool, description: 'a new patchset dismisses approvals unless it changes the same paths to the same content (a trivial rebase); false: approvals carry to every later patchset' },
        require_ci: { ...bool, description: 'CI of the current run must pass (blocked_by_ci)' },
        require_resolved_threads: { ...bool, description: 'every published comment thread resolved (unresolved_threads); true also when the repository sets policy_flags bit 1' },
        land_allowed: { ...names, description: 'accounts and groups that may land; empty: anyone who may call the land' },
        bypass_allowed: { ...names, description: 'accounts and groups that may land with "bypass": true despite failing gates; empty: nobody' },
    }),
    RulesResult: obj({
        repository_index: uint,
        rules: { ...ref('RepositoryRules'), description: 'every rule with the value that applies' },
        updated_at_s: { ...orNull(uint), description: 'when the rules were last set; null: never (the defaults apply)' },
        updated_by: { ...orNull(str), description: 'who set them (the caller the trusted ingress named); null when nobody was named or never set' },
    }),
};
//# sourceMappingURL=rules.js.map