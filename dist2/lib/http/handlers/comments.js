// Comment threads on a change's diff lines (docs/api.md "Comment threads"): create a thread or a
// reply, edit or discard one's own draft, resolve / reopen a thread, and the paged thread list. Schemas check shape (422); rules
// live in lib/domain/workflow/comment-rules.ts and lib/authority/workflow/comments.ts
// (400/404/409). Extension routes (not in the spec).
import { array, boolean, integer, nullable, object as strictObject, optional, string } from 'superstruct';
import { Invalid } from '../../domain/errors.js';
import { requireAuthority } from '../route-types.js';
import { validate } from '../validate.js';
import { actAs, actAsQuery, pageRequest, queryValue, rejectRouteOwned, wellFormed } from './workflow-common.js';
import { SIDES } from '../../domain/workflow/comment-rules.js';
import { arr, bool, enumOf, nullable as orNull, obj, PAGE_FIELDS, ref, str, uint } from '../json-schema.js';
const AnchorStruct = strictObject({ path: optional(string()), side: optional(string()), line: optional(integer()), end_line: optional(nullable(integer())) });
/** Unknown fields are refused (422). */
export const CreateComment = strictObject({
    draft: optional(boolean()),
    patchset_id: optional(string()),
    author: string(),
    body: string(),
    anchor: optional(nullable(AnchorStruct)),
    in_reply_to: optional(nullable(string())),
    resolution: optional(nullable(string())),
    suggestion: optional(nullable(string())),
});
/** An edit of one's own draft: the fields sent replace the draft's (null clears a resolution or suggestion). */
export const EditDraft = strictObject({
    author: string(),
    body: optional(string()),
    resolution: optional(nullable(string())),
    suggestion: optional(nullable(string())),
});
export const DiscardQuery = {
    author: { schema: str, description: "the draft's author (required: only they may discard it)" },
};
export const ApplySuggestions = strictObject({ author: string(), comment_ids: array(string()), summary: optional(string()) });
export const PublishDrafts = strictObject({ author: string(), patchset_id: string(), action: optional(string()), comment: optional(string()) });
export const ResolveThread = strictObject({ author: string(), body: optional(string()), patchset_id: optional(string()) });
export const ThreadsQuery = {
    patchset: { schema: str, description: "show each thread where its anchor lands on this patchset of the change (outdated when its lines changed)" },
    path: { schema: str, description: 'only threads anchored to this file' },
    resolved: { schema: enumOf(['true', 'false']), description: 'only resolved (true) or unresolved (false) threads' },
    author: { schema: str, description: "include this author's drafts (threads and replies)" },
};
export const create = async (ctx) => {
    rejectRouteOwned(ctx.body);
    actAs(ctx, 'author');
    const req = wellFormed(validate(ctx.body, CreateComment));
    if (req.anchor)
        wellFormed(req.anchor);
    const a = requireAuthority(ctx);
    const out = await a.workflow.comments.create(ctx.params.change_ref, req);
    return { json: out };
};
export const editDraft = async (ctx) => {
    rejectRouteOwned(ctx.body);
    actAs(ctx, 'author');
    const req = wellFormed(validate(ctx.body, EditDraft));
    const a = requireAuthority(ctx);
    return { json: await a.workflow.comments.editDraft(ctx.params.change_ref, ctx.params.comment_id, req) };
};
export const discardDraft = async (ctx) => {
    const author = actAsQuery(ctx, 'author');
    if (author === undefined)
        throw new Invalid('author is required: only the draft\'s author may delete it (?author=NAME)');
    const a = requireAuthority(ctx);
    return { json: await a.workflow.comments.discardDraft(ctx.params.change_ref, ctx.params.comment_id, author) };
};
const resolution = (to) => async (ctx) => {
    rejectRouteOwned(ctx.body);
    actAs(ctx, 'author');
    const req = wellFormed(validate(ctx.body, ResolveThread));
    const a = requireAuthority(ctx);
    return { json: await a.workflow.comments.setResolution(ctx.params.change_ref, ctx.params.thread_id, to, req) };
};
export const resolve = resolution('resolved');
export const reopen = resolution('unresolved');
export const threads = async (ctx) => {
    const a = requireAuthority(ctx);
    const patchset = queryValue(ctx, 'patchset');
    const path = queryValue(ctx, 'path');
    const resolvedText = queryValue(ctx, 'resolved');
    if (resolvedText !== undefined && resolvedText !== 'true' && resolvedText !== 'false')
        throw new Invalid('resolved must be true or false');
    const resolved = resolvedText === undefined ? undefined : resolvedText === 'true';
    // Another person's drafts are not the caller's to read (absent: no drafts, as without an identity).
    const author = queryValue(ctx, 'author') === undefined ? undefined : actAsQuery(ctx, 'author');
    const change = a.workflow.change(ctx.params.change_ref);
    const req = pageRequest(ctx, 'comment-threads', 'int', { change_id: change.change_id, patchset, path, resolved, author });
    return { json: await a.workflow.comments.listThreads(ctx.params.change_ref, { patchset, path, resolved, author }, req) };
};
export const applySuggestions = async (ctx) => {
    rejectRouteOwned(ctx.body);
    actAs(ctx, 'author');
    const req = wellFormed(validate(ctx.body, ApplySuggestions));
    for (const id of req.comment_ids)
        wellFormed({ comment_id: id });
    const a = requireAuthority(ctx);
    const { patchset, applied } = await a.workflow.comments.applySuggestions(ctx.params.change_ref, req);
    return { json: { patchset: a.workflow.patchsetProjection(patchset, a.index), applied } };
};
export const publish = async (ctx) => {
    rejectRouteOwned(ctx.body);
    actAs(ctx, 'author');
    const req = wellFormed(validate(ctx.body, PublishDrafts));
    const a = requireAuthority(ctx);
    return { json: await a.workflow.comments.publish(ctx.params.change_ref, req) };
};
const anchor = {
    anyOf: [
        obj({ kind: enumOf(['lines']), path: str, side: enumOf(SIDES), line: { type: 'integer', minimum: 1 }, end_line: orNull({ type: 'integer', minimum: 1 }) }),
        obj({ kind: enumOf(['file']), path: str }),
        obj({ kind: enumOf(['patchset']) }),
    ],
};
const resolutionSchema = enumOf(['unresolved', 'resolved']);
export const SCHEMAS = {
    CommentAnchor: anchor,
    Comment: obj({
        comment_id: str,
        change_id: str,
        sequence: uint,
        patchset_id: str,
        author: str,
        anchor: ref('CommentAnchor'),
        in_reply_to: orNull(str),
        body: { ...str, description: 'Markdown source' },
        resolution: orNull(resolutionSchema),
        suggestion: { ...orNull(str), description: "replacement text for the anchored revision-side lines (a thread's first comment only)" },
        published: bool,
        created_at_s: uint,
        updated_at_s: uint,
    }),
    CommentDeleted: obj({ deleted: { ...str, description: 'the id of the discarded draft (kept as a tombstone: ids stay dense; the id is unknown afterwards)' } }),
    CommentResult: obj({ comment: ref('Comment'), thread_id: str, resolution: resolutionSchema }, { description: "the comment written and its thread's resolution after it" }),
    SuggestionsApplied: obj({
        patchset: { ...ref('Patchset'), description: 'the new patchset (its applied_suggestions say whose suggestion each was)' },
        applied: {
            ...arr(obj({
                comment_id: str,
                author: { ...str, description: "the suggestion's author" },
                thread_id: str,
                path: str,
                line: uint,
                end_line: orNull(uint),
                resolved_by: { ...orNull(str), description: 'the reply that resolved the thread (null: it was resolved already)' },
            })),
            description: 'in the order of comment_ids',
        },
    }),
    CommentPublishResult: obj({ published: { ...arr(ref('Comment')), description: 'the drafts published, in sequence order' }, review: orNull(ref('Review')) }, { description: 'the vote is a review record of the selected patchset (null without an action)' }),
    CommentThreadList: obj({
        change_id: str,
        change_ref: str,
        patchset_id: orNull(str),
        unresolved: { ...uint, description: 'unresolved threads of the whole change' },
        threads: {
            ...arr(obj({
                thread_id: str,
                change_id: str,
                patchset_id: str,
                resolution: resolutionSchema,
                anchor: { ...ref('CommentAnchor'), description: 'where the thread sits on the requested patchset (its original anchor when outdated or not ported)' },
                original_anchor: ref('CommentAnchor'),
                outdated: bool,
                outdated_reason: orNull(enumOf(['lines_changed', 'file_removed', 'beyond_file', 'no_line_diff'])),
                draft: { ...bool, description: "the thread's first comment is the ?author= viewer's draft" },
                resolution_with_drafts: { ...resolutionSchema, description: "the resolution once the viewer's drafts are published" },
                comments: arr(ref('Comment')),
            })),
            description: 'in the order their threads were opened',
        },
        ...PAGE_FIELDS,
    }),
};
//# sourceMappingURL=comments.js.map