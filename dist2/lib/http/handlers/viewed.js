// Viewed marks (docs/api.md "Viewed marks"): which files of a patchset a reviewer has viewed,
// and marking one. Schemas check shape (422); rules live in lib/domain/workflow/viewed-rules.ts
// and lib/authority/workflow/viewed.ts (400/404/409). Extension routes (not in the spec).
import { boolean, object as strictObject, optional, string } from 'superstruct';
import { Invalid } from '../../domain/errors.js';
import { requireAuthority } from '../route-types.js';
import { validate } from '../validate.js';
import { actAs, actAsQuery, queryValue, rejectRouteOwned, wellFormed } from './workflow-common.js';
import { arr, nullable as orNull, obj, str } from '../json-schema.js';
/** Unknown fields are refused (422). */
export const MarkViewed = strictObject({ user: optional(string()), patchset_id: string(), path: string(), viewed: boolean() });
export const ViewedQuery = {
    user: { schema: str, description: 'whose marks (required unless the server takes the caller from an identity header)' },
    patchset: { schema: str, description: "the patchset (default: the change's current patchset)" },
};
export const get = async (ctx) => {
    const a = requireAuthority(ctx);
    const user = actAsQuery(ctx, 'user');
    if (user === undefined)
        throw new Invalid('user is required (?user=NAME)');
    return { json: await a.workflow.viewed.viewed(ctx.params.change_ref, user, queryValue(ctx, 'patchset')) };
};
export const put = async (ctx) => {
    rejectRouteOwned(ctx.body);
    actAs(ctx, 'user');
    const req = wellFormed(validate(ctx.body, MarkViewed));
    const a = requireAuthority(ctx);
    if (req.user === undefined)
        throw new Invalid('user is required');
    return { json: await a.workflow.viewed.mark(ctx.params.change_ref, { user: req.user, patchset_id: req.patchset_id, path: req.path, viewed: req.viewed }) };
};
export const SCHEMAS = {
    ViewedMarks: obj({
        change_id: str,
        patchset_id: { ...str, description: "the patchset asked for (empty when the change has none)" },
        user: str,
        paths: { ...arr(str), description: 'files viewed on this patchset, or on an earlier one where the file has the same blob; sorted' },
        last_reviewed_patchset_id: { ...orNull(str), description: 'the patchset of the newest review the user wrote on the change (review requests aside); null when none' },
    }),
};
//# sourceMappingURL=viewed.js.map