// Comment threads on a change's diff lines (docs/api.md "Comment threads"): published comments,
// replies, resolve/reopen and the paged thread list, over the pure rules of
// lib/domain/workflow/comment-rules.ts. Records are workflow.log upserts of type `comment`
// (storage-layout.md §17), written in one transaction with their events. A change's comments
// are numbered densely from 1 (`change-N.comment-M`), so its records are read by id, one
// lookup each. The thread list, readiness and the resolution gate read a derived summary per
// change (lib/domain/workflow/thread-summary.ts: each comment's thread, author, state; each
// thread's resolution; the unresolved count), built from the change's records on its first
// read after open, kept current from every committed `comment` upsert, held for the most
// recently read changes only; a list page then reads only its own threads' records. Anchors
// are checked against the patchset's own trees before the transaction (trees are immutable);
// the transaction re-checks what can change (the change open, the thread's state).
import { isUtf8 } from 'node:buffer';
import { Conflict, Forbidden, Invalid, NotFound } from '../../domain/errors.js';
import { commentEvents } from '../../domain/events.js';
import { takePage, walkFrom } from '../../domain/paging.js';
import { nowSeconds } from '../../domain/repository.js';
import { cleanRelativePath } from '../../domain/paths.js';
import { MAX_DIFF_FILE_BYTES } from '../../domain/workflow/content-diff.js';
import { applySuggestions, checkOwnDraft, checkReplyTarget, COMMENT, commentId, discardedDraft, editedDraft, foldThreads, parseCommentId, filePort, placeAnchors, portAnchor, requireAnchor, requireBody, requireResolution, requireSuggestion, textLineCount, } from '../../domain/workflow/comment-rules.js';
import { MAX_COMMENTS_PER_CHANGE, ThreadSummary } from '../../domain/workflow/thread-summary.js';
import { requireName } from '../../domain/workflow/review-rules.js';
import { CHANGE, checkChangeOpen, MAX_TEXT_CHARS, parseChangeRef, requireText } from '../../domain/workflow/rules.js';
import { blobId, encodeSnapshot, encodeTree, sha256Hex } from '../../domain/content.js';
import { PACK_KIND_OBJECT, PACK_KIND_TREE } from '../../store/pack.js';
import { stagePack } from './server-objects.js';
import { crashPoint } from '../../store/crash-point.js';
/** The votes a publish may carry (Gerrit's Reply dialog, GitHub's "Submit review"). */
export const PUBLISH_ACTIONS = ['approve', 'request_changes', 'comment'];
/** At most this many suggestions go into one new patchset. */
export const MAX_APPLIED_SUGGESTIONS = 100;
const NEW_COMMENT = 'wf:new-comment';
/**
 * Thread summaries stay in memory for the most recently read changes, at most this many and
 * covering at most this many comments in all (a few hundred bytes each); others are rebuilt
 * from their records when next read.
 */
const SUMMARY_CHANGES = 256;
const SUMMARY_COMMENTS = 200_000;
/** Line maps kept by (blob, blob): a thread list ports each file pair once, not once per page or request. */
const PORT_PAIRS = 1024;
export class CommentBook {
    store;
    book;
    summaries = new Map();
    ports = new Map();
    constructor(store, book) {
        this.store = store;
        this.book = book;
        // Whoever writes a comment record, the summary of its change follows the commit.
        store.onUpsert(COMMENT, (_id, body) => {
            const c = body;
            this.summaries.get(c.change_id)?.apply(c);
        });
    }
    // ------------------------------------------------------------ reads
    /** The change's thread summary as committed (built from its records when not held). */
    summary(changeIdValue) {
        let s = this.summaries.get(changeIdValue);
        if (s) {
            this.summaries.delete(changeIdValue);
            this.summaries.set(changeIdValue, s);
            return s;
        }
        s = ThreadSummary.of(this.commentsOf(changeIdValue));
        this.summaries.set(changeIdValue, s);
        // Least recently read first out, until both bounds hold (the newest always stays).
        let held = 0;
        for (const x of this.summaries.values())
            held += x.count;
        while (this.summaries.size > 1 && (this.summaries.size > SUMMARY_CHANGES || held > SUMMARY_COMMENTS)) {
            const oldest = this.summaries.keys().next().value;
            held -= this.summaries.get(oldest).count;
            this.summaries.delete(oldest);
        }
        return s;
    }
    /** A new comment would be sequence `sequence`: refused beyond the per-change cap. */
    checkRoom(changeIdValue, sequence) {
        if (sequence > MAX_COMMENTS_PER_CHANGE)
            throw new Conflict(`change ${changeIdValue} holds ${MAX_COMMENTS_PER_CHANGE} comments, the most a change may hold; resolve its threads and continue the discussion elsewhere`);
    }
    /** Every comment of a change in sequence order (ids are dense from 1: read until the first gap). */
    commentsOf(changeIdValue) {
        const out = [];
        for (let k = 1;; k++) {
            const c = this.store.entity(COMMENT, commentId(changeIdValue, k));
            if (c === undefined)
                return out;
            out.push(c);
        }
    }
    /**
     * Published threads of the change still unresolved (what the resolution gate counts), as `tx`
     * sees them when given: from the summary, unless the batch has staged comments of the change.
     */
    unresolvedCount(changeIdValue, tx) {
        if (tx && tx.stagedKeys(`${NEW_COMMENT}:${changeIdValue}`).length > 0)
            return foldThreads(this.commentsIn(tx, changeIdValue), null).unresolved;
        return this.summary(changeIdValue).unresolved;
    }
    /** The change's comments as `tx` sees them: staged writes (new comments, published drafts) win by id. */
    commentsIn(tx, changeIdValue) {
        const ns = `${NEW_COMMENT}:${changeIdValue}`;
        const byId = new Map(this.commentsOf(changeIdValue).map((c) => [c.comment_id, c]));
        for (const k of tx.stagedKeys(ns))
            byId.set(k, tx.staged(ns, k));
        return [...byId.values()].sort((a, b) => a.sequence - b.sequence);
    }
    changeIn(tx, ref) {
        const parsed = parseChangeRef(ref);
        const c = parsed === null ? undefined : tx.entity(CHANGE, parsed.change_id);
        if (!c || (parsed.task_id !== null && parsed.task_id !== c.task_id))
            throw new NotFound(`change ${ref} does not exist`);
        return c;
    }
    /** A patchset of `change` (404 unknown; 400 when it belongs to another change). */
    patchsetOf(change, id) {
        const ps = this.book.patchset(id);
        if (ps.change_id !== change.change_id)
            throw new Invalid(`patchset ${id} belongs to ${ps.change_id}, not to ${change.change_id}`);
        return ps;
    }
    /** The file at a clean `path` of a snapshot (null when there is none or it is a directory). */
    async fileAt(snapshotId, path, trees) {
        const snap = this.store.snapshot(snapshotId);
        if (!snap)
            throw new NotFound(`snapshot ${snapshotId} is not present`);
        let treeId = snap.root_tree_id;
        const parts = path.split('/');
        let entry;
        for (let i = 0; i < parts.length; i++) {
            entry = trees ? (await this.treeIn(trees, treeId)).get(parts[i]) : (await this.store.readTree(treeId)).find((e) => e.name === parts[i]);
            if (!entry || (i < parts.length - 1 && entry.kind !== 'directory'))
                return null;
            treeId = entry.id;
        }
        if (!entry || entry.kind === 'directory')
            return null;
        const size = this.store.locator('blob', entry.id)?.raw_length ?? 0;
        if (entry.kind === 'symlink')
            return { blob: entry.id, size, lines: 'binary' };
        if (size > MAX_DIFF_FILE_BYTES)
            return { blob: entry.id, size, lines: 'large' };
        const bytes = await this.store.readObject('blob', entry.id);
        return { blob: entry.id, size, lines: isUtf8(bytes) ? textLineCount(bytes) : 'binary' };
    }
    /** A tree's entries by name, read once per request (`trees`: the request's memo; trees never change). */
    async treeIn(trees, id) {
        let t = trees.get(id);
        if (!t)
            trees.set(id, (t = new Map((await this.store.readTree(id)).map((e) => [e.name, e]))));
        return t;
    }
    /** The anchor of a new thread on `ps`, checked against the patchset's base and revision trees. */
    async anchorOn(ps, input) {
        const a = input ?? {};
        let files = { base: null, revision: null };
        if (typeof a.path === 'string') {
            let p = null;
            try {
                p = cleanRelativePath(a.path, 'path');
            }
            catch {
                // requireAnchor names the broken path rule.
            }
            if (p !== null)
                files = { base: await this.fileAt(ps.base_snapshot_id, p), revision: await this.fileAt(ps.revision_snapshot_id, p) };
        }
        const anchor = requireAnchor(a, (_p, side) => {
            const f = files[side];
            if (f === null)
                return null;
            // A file anchor asks only whether the file is there; its size does not matter.
            if (a.line === undefined || a.line === null)
                return 0;
            if (f.lines === 'large')
                throw new Invalid(`path ${_p} is larger than ${MAX_DIFF_FILE_BYTES} bytes on the ${side} side, more than the diff shows by line; comment on the file instead`);
            return f.lines;
        });
        return anchor;
    }
    // ------------------------------------------------------------ writes
    /**
     * Stage one comment, with its events when it is published: `moved` is the thread's new
     * resolution when the comment changed it (a new comment is the thread's last: it moves the
     * thread when it sets a resolution the thread did not have).
     */
    stageComment(tx, c, threadId, moved) {
        if (c.published)
            tx.emitAll(commentEvents(c, threadId, moved));
        tx.upsert(COMMENT, c.comment_id, c);
        tx.stage(`${NEW_COMMENT}:${c.change_id}`, c.comment_id, c);
    }
    /** The thread (as published) that `id` roots or belongs to, among `records`. */
    threadOf(records, id) {
        return foldThreads(records, null).threads.find((t) => t.thread_id === id || t.replies.some((r) => r.comment_id === id));
    }
    /** A new thread (no `in_reply_to`) or a reply. */
    async create(ref, input) {
        const author = requireName(input.author, 'author');
        const resolution = requireResolution(input.resolution);
        const reply = input.in_reply_to !== undefined && input.in_reply_to !== null;
        const published = input.draft !== true;
        const body = requireBody(input.body, { reply, resolution });
        const change = this.book.change(ref);
        let anchor = null;
        let psId = null;
        if (reply) {
            if (input.anchor !== undefined && input.anchor !== null)
                throw new Invalid('a reply carries its thread\'s anchor; send no anchor with in_reply_to');
            if (input.patchset_id !== undefined)
                psId = this.patchsetOf(change, input.patchset_id).patchset_id;
        }
        else {
            if (input.patchset_id === undefined)
                throw new Invalid('patchset_id is required for a new thread');
            const ps = this.patchsetOf(change, input.patchset_id);
            anchor = await this.anchorOn(ps, input.anchor);
            psId = ps.patchset_id;
        }
        if (reply && input.suggestion !== undefined && input.suggestion !== null)
            throw new Invalid('a suggestion goes on a thread\'s first comment, not on a reply');
        const suggestion = reply ? null : requireSuggestion(input.suggestion, anchor);
        return this.store.transact((tx) => {
            const c = this.changeIn(tx, ref);
            checkChangeOpen(c, 'comment on it');
            const records = this.commentsIn(tx, c.change_id);
            let threadId;
            let previous = 'unresolved';
            if (reply) {
                const target = input.in_reply_to;
                const parsed = parseCommentId(target);
                const parent = checkReplyTarget(parsed === null ? undefined : records.find((r) => r.comment_id === target) ?? this.store.entity(COMMENT, target), target, c.change_id, author);
                const thread = this.threadOf(records, parent.comment_id);
                threadId = thread.thread_id;
                previous = thread.resolution;
                anchor = thread.root.anchor;
                psId ??= thread.root.patchset_id;
            }
            else {
                threadId = '';
            }
            const sequence = records.length + 1;
            this.checkRoom(c.change_id, sequence);
            const now = nowSeconds();
            const comment = {
                comment_id: commentId(c.change_id, sequence),
                change_id: c.change_id,
                sequence,
                patchset_id: psId,
                author,
                anchor: anchor,
                in_reply_to: reply ? input.in_reply_to : null,
                body,
                resolution,
                suggestion,
                published,
                created_at_s: now,
                updated_at_s: now,
            };
            if (!reply)
                threadId = comment.comment_id;
            this.stageComment(tx, comment, threadId, resolution !== null && resolution !== previous ? resolution : null);
            return { comment, thread_id: threadId, resolution: published ? resolution ?? previous : previous };
        });
    }
    /** `:resolve` / `:reopen` of a thread: a reply that sets its resolution (409 when it already has it). */
    async setResolution(ref, threadId, to, input) {
        const author = requireName(input.author, 'author');
        const body = requireBody(input.body ?? '', { reply: true, resolution: to });
        const change = this.book.change(ref);
        const psId = input.patchset_id === undefined ? null : this.patchsetOf(change, input.patchset_id).patchset_id;
        return this.store.transact((tx) => {
            const c = this.changeIn(tx, ref);
            checkChangeOpen(c, to === 'resolved' ? 'resolve a thread' : 'reopen a thread');
            const records = this.commentsIn(tx, c.change_id);
            const parsed = parseCommentId(threadId);
            const root = parsed === null || parsed.change_id !== c.change_id ? undefined : records.find((r) => r.comment_id === threadId);
            if (!root || !root.published)
                throw new NotFound(`thread ${threadId} not found in ${c.change_id}`);
            if (root.in_reply_to !== null)
                throw new Invalid(`comment ${threadId} is a reply, not a thread; name its thread's first comment`);
            const thread = this.threadOf(records, threadId);
            if (thread.resolution === to)
                throw new Conflict(`thread ${threadId} is already ${to}`);
            const sequence = records.length + 1;
            this.checkRoom(c.change_id, sequence);
            const now = nowSeconds();
            const last = thread.replies.at(-1) ?? thread.root;
            const comment = {
                comment_id: commentId(c.change_id, sequence),
                change_id: c.change_id,
                sequence,
                patchset_id: psId ?? root.patchset_id,
                author,
                anchor: root.anchor,
                in_reply_to: last.comment_id,
                body,
                resolution: to,
                suggestion: null,
                published: true,
                created_at_s: now,
                updated_at_s: now,
            };
            this.stageComment(tx, comment, threadId, to);
            return { comment, thread_id: threadId, resolution: to };
        });
    }
    /**
     * Edit `author`'s own draft `id` (body, resolution, suggestion; checked as a new comment is):
     * rewritten with the same id and sequence, one commit, no event (drafts have none). Unknown,
     * discarded or someone else's draft → 404; a published comment → 409; a closed change → 400.
     */
    async editDraft(ref, id, input) {
        const author = requireName(input.author, 'author');
        this.book.change(ref);
        return this.store.transact((tx) => {
            const c = this.changeIn(tx, ref);
            checkChangeOpen(c, 'edit a draft on it');
            const records = this.commentsIn(tx, c.change_id);
            const draft = checkOwnDraft(this.recordOf(records, c.change_id, id), id, author);
            const edited = editedDraft(draft, input, nowSeconds());
            // The thread is its root's; a draft changes no published resolution.
            const thread = edited.in_reply_to === null ? undefined : this.threadOf(records, edited.in_reply_to);
            this.stageComment(tx, edited, thread?.thread_id ?? edited.comment_id, null);
            return { comment: edited, thread_id: thread?.thread_id ?? edited.comment_id, resolution: thread?.resolution ?? 'unresolved' };
        });
    }
    /**
     * Discard `author`'s own draft `id`: the record is rewritten as a tombstone (`discarded`,
     * body and suggestion emptied; same id and sequence, so ids stay dense), one commit, no
     * event. The same refusals as an edit; afterwards the id is unknown (404).
     */
    async discardDraft(ref, id, authorName) {
        const author = requireName(authorName, 'author');
        this.book.change(ref);
        return this.store.transact((tx) => {
            const c = this.changeIn(tx, ref);
            checkChangeOpen(c, 'delete a draft on it');
            const records = this.commentsIn(tx, c.change_id);
            const draft = checkOwnDraft(this.recordOf(records, c.change_id, id), id, author);
            this.stageComment(tx, discardedDraft(draft, nowSeconds()), draft.comment_id, null);
            return { deleted: draft.comment_id };
        });
    }
    /** The record `id` names among the change's `records` (undefined when malformed, another change's or unknown). */
    recordOf(records, changeIdValue, id) {
        const parsed = parseCommentId(id);
        if (parsed === null || parsed.change_id !== changeIdValue)
            return undefined;
        return records[parsed.number - 1]?.comment_id === id ? records[parsed.number - 1] : records.find((r) => r.comment_id === id);
    }
    /**
     * Publish every draft `author` has on the change, with an optional vote on the selected
     * patchset `patchset_id` (a review record), as one commit: each draft is rewritten published
     * (same id and sequence) with the events it would have had when written published, in
     * sequence order. Nothing to publish and no vote → 400.
     */
    async publish(ref, input) {
        const author = requireName(input.author, 'author');
        if (input.action !== undefined && !PUBLISH_ACTIONS.includes(input.action))
            throw new Invalid(`action must be one of ${PUBLISH_ACTIONS.join(', ')}`);
        const comment = requireText(input.comment ?? '', 'comment', MAX_TEXT_CHARS, true);
        if (input.comment !== undefined && input.action === undefined)
            throw new Invalid('comment is the vote\'s message; send an action with it');
        return this.store.transact((tx) => {
            // Test-only: `comments:publish>commit:<step>` kills the server inside this publish's own commit.
            crashPoint('comments:publish');
            const c = this.changeIn(tx, ref);
            checkChangeOpen(c, 'publish comments on it');
            const ps = this.patchsetOf(c, input.patchset_id);
            let working = this.commentsIn(tx, c.change_id);
            const drafts = working.filter((r) => !r.published && !r.discarded && r.author === author);
            if (drafts.length === 0 && input.action === undefined)
                throw new Invalid(`${author} has no drafts on ${c.change_id} and sent no action: nothing to publish`);
            const now = nowSeconds();
            const out = [];
            for (const d of drafts) {
                const thread = d.in_reply_to === null ? undefined : this.threadOf(working, d.in_reply_to);
                // A draft reply's parent is published (checked when it was written), or a draft of this publish, now published.
                if (d.in_reply_to !== null && !thread)
                    throw new Conflict(`draft ${d.comment_id} answers ${d.in_reply_to}, which is not published`);
                const p = { ...d, published: true, updated_at_s: now };
                working = working.map((r) => (r.comment_id === p.comment_id ? p : r));
                // The thread's state is its last published comment that set one, by sequence: a draft
                // written before a later reply does not override that reply when it is published.
                const threadId = thread ? thread.thread_id : p.comment_id;
                const before = thread ? thread.resolution : 'unresolved';
                const after = this.threadOf(working, threadId).resolution;
                this.stageComment(tx, p, threadId, after !== before ? after : null);
                out.push(p);
            }
            const review = input.action === undefined ? null : this.book.reviews.stageReview(tx, c, ps.patchset_id, { reviewer: author, action: input.action, comment, blocking: false });
            return { published: out, review };
        });
    }
    /**
     * Apply published suggestions of the change's current patchset as a new patchset (GitHub's
     * "Commit suggestions"): each comment's `suggestion` replaces its anchored lines of the current
     * revision (`applySuggestions`, one pass per file); the new revision snapshot (parent: the
     * current revision) and its blobs and trees are built here, before the transaction (the trees
     * read are immutable), then ONE commit stages the packs and the snapshot, the patchset (as
     * `POST …/patchsets` creates one: same record, counters and events, plus
     * `applied_suggestions`) and, on each applied thread still unresolved, a reply by `author`
     * resolving it. Only the change's author applies: the current patchset's `author` (when it
     * records one; else anyone, as the independent-approval rule reads a patchset without author).
     */
    async applySuggestions(ref, input) {
        const author = requireName(input.author, 'author');
        const ids = input.comment_ids;
        if (ids.length === 0)
            throw new Invalid('comment_ids must name at least one suggestion');
        if (ids.length > MAX_APPLIED_SUGGESTIONS)
            throw new Invalid(`comment_ids names ${ids.length} suggestions; at most ${MAX_APPLIED_SUGGESTIONS} are applied at once`);
        const dup = ids.find((id, i) => ids.indexOf(id) !== i);
        if (dup !== undefined)
            throw new Invalid(`comment_ids names ${dup} twice`);
        const change = this.book.change(ref);
        checkChangeOpen(change, 'apply suggestions to it');
        if (change.current_patchset_id === null)
            throw new Invalid(`change ${change.change_id} has no patchset`);
        const ps = this.book.patchset(change.current_patchset_id);
        if (ps.author != null && ps.author !== author)
            throw new Forbidden(`only the change's author (${ps.author}, the author of its current patchset ${ps.patchset_id}) applies suggestions; ${author} may not`);
        // Each comment: a published suggestion of this change, opened on its current patchset.
        const picked = [];
        for (const id of ids) {
            const parsed = parseCommentId(id);
            const c = parsed === null || parsed.change_id !== change.change_id ? undefined : this.store.entity(COMMENT, id);
            if (!c || !c.published || c.discarded)
                throw new Invalid(`comment ${id} is not a published comment of ${change.change_id}`);
            if (c.in_reply_to !== null || c.suggestion === null || c.anchor.kind !== 'lines' || c.anchor.side !== 'revision')
                throw new Invalid(`comment ${id} carries no suggestion (only a thread's first comment on revision-side lines does)`);
            if (c.patchset_id !== ps.patchset_id)
                throw new Invalid(`comment ${id} suggests an edit of ${c.patchset_id}, not of the current patchset ${ps.patchset_id}; suggest it again on the current patchset`);
            picked.push({ c, a: c.anchor, suggestion: c.suggestion });
        }
        const byPath = new Map();
        for (const p of picked)
            byPath.set(p.a.path, [...(byPath.get(p.a.path) ?? []), p]);
        for (const [path, list] of byPath) {
            const sorted = [...list].sort((x, y) => x.a.line - y.a.line);
            for (let i = 1; i < sorted.length; i++) {
                const prev = sorted[i - 1];
                if (sorted[i].a.line <= (prev.a.end_line ?? prev.a.line))
                    throw new Conflict(`suggestions ${prev.c.comment_id} and ${sorted[i].c.comment_id} overlap in ${path}; apply them one at a time`);
            }
        }
        // The new revision: each file's text with its suggestions, then the trees above it.
        const revision = this.store.snapshot(ps.revision_snapshot_id);
        if (!revision)
            throw new NotFound(`snapshot ${ps.revision_snapshot_id} is not present`);
        const built = { trees: new Map(), blobs: new Map() };
        const replaced = new Map();
        for (const [path, list] of byPath) {
            const f = await this.fileAt(ps.revision_snapshot_id, path);
            if (f === null)
                throw new Invalid(`${path} is not a file of ${ps.patchset_id}'s revision`);
            if (f.lines === 'binary')
                throw new Invalid(`${path} is not text in ${ps.patchset_id}'s revision; a suggestion replaces lines of a text file`);
            if (f.lines === 'large')
                throw new Invalid(`${path} is larger than ${MAX_DIFF_FILE_BYTES} bytes in ${ps.patchset_id}'s revision; a suggestion replaces lines the diff shows`);
            const text = (await this.store.readObject('blob', f.blob)).toString('utf8');
            const bytes = Buffer.from(applySuggestions(text, list.map((p) => ({ line: p.a.line, end_line: p.a.end_line, suggestion: p.suggestion }))), 'utf8');
            if (bytes.length > MAX_DIFF_FILE_BYTES)
                throw new Invalid(`${path} would be ${bytes.length} bytes with these suggestions, more than the ${MAX_DIFF_FILE_BYTES} the diff shows by line`);
            const id = blobId(bytes);
            built.blobs.set(id, bytes);
            replaced.set(path, id);
        }
        const sizes = new Map();
        const root = await this.rewriteTree(revision.root_tree_id, replaced, built, sizes);
        if (root === revision.root_tree_id)
            throw new Invalid(`the suggestions change nothing in ${ps.patchset_id}: each replaces its lines with the same text`);
        const summary = requireText(input.summary ?? `Apply suggestions ${ids.join(', ')}`, 'summary', MAX_TEXT_CHARS);
        const snapshot = encodeSnapshot({ root_tree_id: root, parent_snapshot_ids: [ps.revision_snapshot_id], created_at_s: nowSeconds(), message: summary.slice(0, 4096) });
        const snapshotId = sha256Hex(snapshot);
        const diff = await this.book.diff({ snapshot_id: ps.base_snapshot_id, root_tree_id: this.store.snapshot(ps.base_snapshot_id).root_tree_id }, { snapshot_id: snapshotId, root_tree_id: root }, built);
        await this.book.preparePatchset(this.book.change(ref).land_target_line);
        return this.store.transact((tx) => {
            const c = this.changeIn(tx, ref);
            checkChangeOpen(c, 'apply suggestions to it');
            if (c.current_patchset_id !== ps.patchset_id)
                throw new Conflict(`change ${c.change_id} moved to patchset ${c.current_patchset_id} while the suggestions were applied to ${ps.patchset_id}; apply them again`);
            stagePack(tx, PACK_KIND_OBJECT, 'blob', built.blobs);
            stagePack(tx, PACK_KIND_TREE, 'tree', built.trees, sizes);
            if (!tx.hasSnapshot(snapshotId))
                tx.addSnapshot(snapshot);
            const applied = picked.map((p) => ({ comment_id: p.c.comment_id, author: p.c.author }));
            const { patchset } = this.book.stagePatchset(tx, c, {
                base_snapshot_id: ps.base_snapshot_id, revision_snapshot_id: snapshotId, summary, author_mode: ps.author_mode, author, applied_suggestions: applied,
            }, diff);
            // Each applied thread still unresolved is resolved by a reply naming the new patchset.
            const now = nowSeconds();
            const views = [];
            for (const p of picked) {
                const records = this.commentsIn(tx, c.change_id);
                const thread = this.threadOf(records, p.c.comment_id);
                let resolvedBy = null;
                if (thread.resolution !== 'resolved') {
                    const sequence = records.length + 1;
                    const reply = {
                        comment_id: commentId(c.change_id, sequence),
                        change_id: c.change_id,
                        sequence,
                        patchset_id: patchset.patchset_id,
                        author,
                        anchor: p.c.anchor,
                        in_reply_to: (thread.replies.at(-1) ?? thread.root).comment_id,
                        body: `Applied in ${patchset.patchset_id}.`,
                        resolution: 'resolved',
                        suggestion: null,
                        published: true,
                        created_at_s: now,
                        updated_at_s: now,
                    };
                    this.stageComment(tx, reply, thread.thread_id, 'resolved');
                    resolvedBy = reply.comment_id;
                }
                views.push({ comment_id: p.c.comment_id, author: p.c.author, thread_id: thread.thread_id, path: p.a.path, line: p.a.line, end_line: p.a.end_line, resolved_by: resolvedBy });
            }
            return { patchset, applied: views };
        });
    }
    /**
     * `treeId` with the files `replaced` names (paths relative to it → new blob id) pointed at
     * their new blobs: each tree on the way is rewritten (into `built.trees`), the rest shared.
     * Entries keep their kind (a file stays a file, an executable executable). A rewritten tree
     * has the same shape, so its expanded size is the old tree's (into `sizes`).
     */
    async rewriteTree(treeId, replaced, built, sizes) {
        const below = new Map();
        const here = new Map();
        for (const [p, blob] of replaced) {
            const slash = p.indexOf('/');
            if (slash === -1)
                here.set(p, blob);
            else {
                const head = p.slice(0, slash);
                if (!below.has(head))
                    below.set(head, new Map());
                below.get(head).set(p.slice(slash + 1), blob);
            }
        }
        const entries = await this.store.readTree(treeId);
        const next = [];
        for (const e of entries) {
            if (here.has(e.name) && (e.kind === 'file' || e.kind === 'executable'))
                next.push({ ...e, id: here.get(e.name) });
            else if (below.has(e.name) && e.kind === 'directory')
                next.push({ ...e, id: await this.rewriteTree(e.id, below.get(e.name), built, sizes) });
            else
                next.push(e);
        }
        const raw = encodeTree(next);
        const id = sha256Hex(raw);
        if (id !== treeId) {
            built.trees.set(id, raw);
            sizes.set(id, await this.store.expandedSize(treeId));
            this.store.rememberSize(id, sizes.get(id));
        }
        return id;
    }
    // ------------------------------------------------------------ the thread list
    /**
     * One page of a change's published threads in root order (cursor key: the root's sequence),
     * filtered by path and resolution; with `patchset`, each thread written on another patchset
     * is shown where its anchor lands on that one (outdated when its lines changed). `unresolved`
     * counts the whole change.
     */
    async listThreads(ref, filter, req) {
        const change = this.book.change(ref);
        const target = filter.patchset === undefined ? null : this.patchsetOf(change, filter.patchset);
        const path = filter.path === undefined ? undefined : cleanRelativePath(filter.path, 'path');
        const viewer = filter.author === undefined ? null : requireName(filter.author, 'author');
        const summary = this.summary(change.change_id);
        const kept = summary.visible(viewer).filter((t) => {
            if (path !== undefined && (t.anchor.kind === 'patchset' || t.anchor.path !== path))
                return false;
            if (filter.resolved !== undefined && (t.resolution === 'resolved') !== filter.resolved)
                return false;
            return true;
        });
        const page = takePage(req, walkFrom(kept.length, (i) => kept[i], (t) => t.seq, req.after, 'asc'), 'asc');
        const threads = await this.views(this.threadsOf(change.change_id, summary, page.rows, viewer), target);
        return {
            change_id: change.change_id,
            change_ref: change.change_ref,
            patchset_id: target?.patchset_id ?? null,
            unresolved: summary.unresolved,
            threads,
            count: threads.length,
            next_cursor: page.next_cursor,
        };
    }
    /** The threads of a page, folded from only their own records as `viewer` sees them. */
    threadsOf(changeIdValue, summary, rows, viewer) {
        const records = [];
        for (const t of rows) {
            for (const seq of summary.membersSeen(t, viewer)) {
                const c = this.store.entity(COMMENT, commentId(changeIdValue, seq));
                if (c)
                    records.push(c);
            }
        }
        return foldThreads(records, viewer).threads;
    }
    /** How the file `before` maps onto `after` (kept by blob pair: contents never change). */
    async portOf(before, after) {
        const key = `${before.blob}\u0000${after?.blob ?? ''}`;
        let p = this.ports.get(key);
        if (p) {
            this.ports.delete(key);
        }
        else {
            const b = await this.store.readObject('blob', before.blob);
            const x = after === null ? null : await this.store.readObject('blob', after.blob);
            p = filePort(b, x);
            if (this.ports.size >= PORT_PAIRS)
                this.ports.delete(this.ports.keys().next().value);
        }
        this.ports.set(key, p);
        return p;
    }
    /** The page's threads as shown on `target` (one line diff per file and side of each source patchset). */
    async views(threads, target) {
        const shown = new Map();
        if (target !== null) {
            // Threads on files of the same directories walk the same trees: each is read once here.
            const trees = new Map();
            const groups = new Map();
            for (const t of threads) {
                const a = t.root.anchor;
                if (t.root.patchset_id === target.patchset_id || a.kind === 'patchset')
                    continue;
                if (a.kind === 'file') {
                    const after = await this.fileAt(target.revision_snapshot_id, a.path, trees) ?? await this.fileAt(target.base_snapshot_id, a.path, trees);
                    const p = portAnchor(a, null, after === null ? null : Buffer.alloc(0));
                    shown.set(t.thread_id, { anchor: p.anchor, outdated: p.outdated, reason: p.outdated ? p.reason : null });
                    continue;
                }
                const key = `${t.root.patchset_id}\u0000${a.side}\u0000${a.path}`;
                if (!groups.has(key))
                    groups.set(key, { from: this.book.patchset(t.root.patchset_id), side: a.side, path: a.path, threads: [] });
                groups.get(key).threads.push(t);
            }
            for (const g of groups.values()) {
                const snap = (ps) => (g.side === 'base' ? ps.base_snapshot_id : ps.revision_snapshot_id);
                const before = await this.fileAt(snap(g.from), g.path, trees);
                const after = await this.fileAt(snap(target), g.path, trees);
                const anchors = g.threads.map((t) => t.root.anchor);
                let ported;
                if (before === null || before.lines === 'large' || (after !== null && after.lines === 'large')) {
                    const reason = before === null ? 'beyond_file' : after === null ? 'file_removed' : 'no_line_diff';
                    ported = anchors.map((a) => ({ outdated: true, reason, anchor: a }));
                }
                else {
                    ported = placeAnchors(await this.portOf(before, after), anchors);
                }
                g.threads.forEach((t, i) => {
                    const p = ported[i];
                    shown.set(t.thread_id, { anchor: p.anchor, outdated: p.outdated, reason: p.outdated ? p.reason : null });
                });
            }
        }
        return threads.map((t) => {
            const s = shown.get(t.thread_id);
            return {
                thread_id: t.thread_id,
                change_id: t.root.change_id,
                patchset_id: t.root.patchset_id,
                resolution: t.resolution,
                anchor: s?.anchor ?? t.root.anchor,
                original_anchor: t.root.anchor,
                outdated: s?.outdated ?? false,
                outdated_reason: s?.reason ?? null,
                draft: t.draft,
                resolution_with_drafts: t.resolution_with_drafts,
                comments: [t.root, ...t.replies],
            };
        });
    }
}
//# sourceMappingURL=comments.js.map