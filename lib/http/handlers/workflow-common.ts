// Shared request rules of the workflow routes.
import { Invalid } from '../../domain/errors.js';
import { decodeCursor, parseLimit, type CursorScope, type FilterValue, type KeyKind, type Page, type PageRequest } from '../../domain/paging.js';
import { requireWellFormed } from '../../domain/text.js';
import type { QueryParam, RouteContext } from '../route-types.js';

/** Route-owned fields (spec: "Task linkage rules") come from the path, never the body. */
export function rejectRouteOwned(body: unknown): void {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return;
  for (const field of ['repo_id', 'repository_index']) {
    if (field in body) throw new Invalid(`${field} is owned by the route; do not send it in the body`);
  }
}

/** Text is stored as UTF-8: a lone surrogate in any string field is refused (400). */
export function wellFormed<T extends object>(req: T): T {
  for (const [name, value] of Object.entries(req)) if (typeof value === 'string') requireWellFormed(value, name);
  return req;
}

/** A single-valued query parameter (given twice → 400). */
export function queryValue(ctx: RouteContext, name: string): string | undefined {
  const v = ctx.koa.query[name];
  if (Array.isArray(v)) throw new Invalid(`${name} may be given once`);
  return v;
}

/** What a cursor of `list` in this request's repository, under `filter` (as the handler parsed it), is bound to. */
export function cursorScope(ctx: RouteContext, list: string, filter: Record<string, FilterValue> = {}): CursorScope {
  return { list, repository: ctx.repository?.repository_index ?? null, filter };
}

/**
 * `?limit=` and `?cursor=` of a paged list (docs/api.md "Lists and pagination"); bad values → 400.
 * `filter` is every filter of the list, normalized (parsed values; the entity a list of one
 * belongs to by its id): a cursor taken under another filter, in another repository or of
 * another list is 400.
 */
export function pageRequest(ctx: RouteContext, list: string, kind: KeyKind, filter: Record<string, FilterValue> = {}, defaultLimit?: number): PageRequest {
  const scope = cursorScope(ctx, list, filter);
  return { limit: parseLimit(queryValue(ctx, 'limit'), defaultLimit), after: decodeCursor(scope, queryValue(ctx, 'cursor'), kind), scope };
}

/** The paging fields every list body carries: `count` (rows on this page) and `next_cursor` (null on the last page). */
export function pageFields(page: Page<unknown>): { count: number; next_cursor: string | null } {
  return { count: page.rows.length, next_cursor: page.next_cursor };
}

/** `limit` and `cursor` of every paged list (lib/domain/paging.ts). */
export const PAGE_QUERY: Record<string, QueryParam> = {
  limit: { schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 }, description: 'rows per page' },
  cursor: { schema: { type: 'string' }, description: "the previous page's next_cursor, unchanged (send the same filters with every page)" },
};
