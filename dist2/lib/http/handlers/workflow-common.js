// Shared request rules of the workflow routes.
import { Forbidden, Invalid } from '../../domain/errors.js';
import { decodeCursor, parseLimit } from '../../domain/paging.js';
import { requireWellFormed } from '../../domain/text.js';
/** Route-owned fields (spec: "Task linkage rules") come from the path, never the body. */
export function rejectRouteOwned(body) {
    if (!body || typeof body !== 'object' || Array.isArray(body))
        return;
    for (const field of ['repo_id', 'repository_index']) {
        if (field in body)
            throw new Invalid(`${field} is owned by the route; do not send it in the body`);
    }
}
/** Text is stored as UTF-8: a lone surrogate in any string field is refused (400). */
export function wellFormed(req) {
    for (const [name, value] of Object.entries(req))
        if (typeof value === 'string')
            requireWellFormed(value, name);
    return req;
}
/** A single-valued query parameter (given twice → 400). */
export function queryValue(ctx, name) {
    const v = ctx.koa.query[name];
    if (Array.isArray(v))
        throw new Invalid(`${name} may be given once`);
    return v;
}
/** What a cursor of `list` in this request's repository, under `filter` (as the handler parsed it), is bound to. */
export function cursorScope(ctx, list, filter = {}) {
    return { list, repository: ctx.repository?.repository_index ?? null, filter };
}
/**
 * `?limit=` and `?cursor=` of a paged list (docs/api.md "Lists and pagination"); bad values → 400.
 * `filter` is every filter of the list, normalized (parsed values; the entity a list of one
 * belongs to by its id): a cursor taken under another filter, in another repository or of
 * another list is 400.
 */
export function pageRequest(ctx, list, kind, filter = {}, defaultLimit) {
    const scope = cursorScope(ctx, list, filter);
    return { limit: parseLimit(queryValue(ctx, 'limit'), defaultLimit), after: decodeCursor(scope, queryValue(ctx, 'cursor'), kind), scope };
}
/** The paging fields every list body carries: `count` (rows on this page) and `next_cursor` (null on the last page). */
export function pageFields(page) {
    return { count: page.rows.length, next_cursor: page.next_cursor };
}
/** `limit` and `cursor` of every paged list (lib/domain/paging.ts). */
export const PAGE_QUERY = {
    limit: { schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 }, description: 'rows per page' },
    cursor: { schema: { type: 'string' }, description: "the previous page's next_cursor, unchanged (send the same filters with every page)" },
};
/** The caller's name (lib/http/identity.ts), or null when the request names nobody. */
export function identityOf(ctx) {
    return ctx.koa.state.identity ?? null;
}
/**
 * An operator's action (a repository's retirement: start, abort, purge): when the server names
 * its callers (an identity header is configured), only an identified caller may take it (403
 * otherwise). Roles are not modelled yet: any identified caller may. Without an identity header
 * the server has no callers to tell apart, and the request guard's cross-site rule is the bound.
 */
export function requireIdentified(ctx, action) {
    if (ctx.koa.state.identityConfigured === true && identityOf(ctx) === null) {
        throw new Forbidden(`${action} needs an identified caller (the request must come through the ingress that names its caller)`);
    }
}
/**
 * The body field that names the person a record is written for (a review's `reviewer`, a
 * comment's `author`, a change's `owner`...), reconciled with the caller's identity: with an
 * identity the field is filled in when absent (null counts as absent) and must name the same
 * person when present (403 otherwise: a caller acts only as themselves); without one the body
 * is left as it is. Runs before validation, so a required field may be left out.
 */
export function actAs(ctx, field) {
    const who = identityOf(ctx);
    const body = ctx.body;
    if (who === null || !body || typeof body !== 'object' || Array.isArray(body))
        return;
    const b = body;
    if (b[field] === undefined || b[field] === null)
        b[field] = who;
    else if (b[field] !== who)
        throw new Forbidden(`${field} must be the caller (the identity header names who acts); leave it out`);
}
/** A query parameter naming the person acting (`?author=`), reconciled with the identity as actAs does. */
export function actAsQuery(ctx, name) {
    const who = identityOf(ctx);
    const v = queryValue(ctx, name);
    if (who === null)
        return v;
    if (v !== undefined && v !== who)
        throw new Forbidden(`${name} must be the caller (the identity header names who acts); leave it out`);
    return who;
}
//# sourceMappingURL=workflow-common.js.map