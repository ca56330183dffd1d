// Comment threads on a change's diff lines (docs/api.md "Comment threads"): published comments,
// replies, resolve/reopen and the paged thread list, over the pure rules of
// lib/domain/workflow/comment-rules.ts. Records are workflow.log upserts of type `comment`
// (storage-layout.md §17), written in one transaction with their events. A change's comments
// are numbered densely from 1 (`change-N.comment-M`), so its records are read by id, one
// lookup each, with no index held in memory. Anchors are checked against the patchset's own
// trees before the transaction (trees are immutable); the transaction re-checks what can
// change (the change open, the thread's state).
import { isUtf8 } from 'node:buffer';
import { Conflict, Invalid, NotFound } from '../../domain/errors.js';
import { commentEvents } from '../../domain/events.js';
import { takePage, walkFrom, type PageRequest } from '../../domain/paging.js';
import { nowSeconds } from '../../domain/repository.js';
import { cleanRelativePath } from '../../domain/paths.js';
import { MAX_DIFF_FILE_BYTES } from '../../domain/workflow/content-diff.js';
import {
  checkOwnDraft,
  checkReplyTarget,
  COMMENT,
  commentId,
  discardedDraft,
  editedDraft,
  foldThreads,
  parseCommentId,
  portAnchor,
  portLineAnchors,
  requireAnchor,
  requireBody,
  requireResolution,
  requireSuggestion,
  textLineCount,
  type AnchorInput,
  type CommentAnchor,
  type CommentRecord,
  type DraftEdit,
  type LineAnchor,
  type OutdatedReason,
  type Resolution,
  type Side,
  type Thread,
} from '../../domain/workflow/comment-rules.js';
import { requireName, type ReviewAction } from '../../domain/workflow/review-rules.js';
import { CHANGE, checkChangeOpen, MAX_TEXT_CHARS, parseChangeRef, requireText, type ChangeRecord, type PatchsetRecord } from '../../domain/workflow/rules.js';
import type { TreeEntry } from '../../domain/content.js';
import type { ContentStore, Txn } from '../../store/content-store.js';

/** What this book needs of the task/change/patchset book (./book.ts), which owns it. */
export interface CommentView {
  patchset(id: string): PatchsetRecord;
  change(ref: string): ChangeRecord;
  /** The review book: a publish records its vote in the same commit. */
  readonly reviews: { stageReview(tx: Txn, change: ChangeRecord, patchsetId: string, v: { reviewer: string; action: ReviewAction; comment: string; blocking: boolean }): unknown };
}

export interface CommentInput {
  patchset_id?: string;
  author: string;
  body: string;
  anchor?: AnchorInput | null;
  in_reply_to?: string | null;
  resolution?: string | null;
  /** Replacement text for the anchored lines (a new thread on revision-side lines only). */
  suggestion?: string | null;
  /** A draft: seen only through its author's `?author=` list, no event and no thread change until published. */
  draft?: boolean;
}

export interface DraftEditInput extends DraftEdit { author: string }

export interface PublishInput { author: string; patchset_id: string; action?: string; comment?: string }

/** The votes a publish may carry (Gerrit's Reply dialog, GitHub's "Submit review"). */
export const PUBLISH_ACTIONS = ['approve', 'request_changes', 'comment'] as const;

export interface ResolveInput { author: string; body?: string; patchset_id?: string }

export interface ThreadFilter { patchset?: string; path?: string; resolved?: boolean; author?: string }

/** A thread as the list shows it: its anchor on the requested patchset, and whether it could follow. */
export interface ThreadView {
  thread_id: string;
  change_id: string;
  patchset_id: string;
  resolution: Resolution;
  anchor: CommentAnchor;
  original_anchor: CommentAnchor;
  outdated: boolean;
  outdated_reason: OutdatedReason | null;
  /** The thread's first comment is the viewer's draft. */
  draft: boolean;
  /** The resolution once the viewer's drafts are published. */
  resolution_with_drafts: Resolution;
  comments: CommentRecord[];
}

const NEW_COMMENT = 'wf:new-comment';

/** A file of a snapshot as anchors see it: its line count, `'binary'`, `'large'`, or absent. */
type FileInfo = { blob: string; size: number; lines: number | 'binary' | 'large' } | null;

export class CommentBook {
  constructor(private readonly store: ContentStore, private readonly book: CommentView) {}

  // ------------------------------------------------------------ reads

  /** Every comment of a change in sequence order (ids are dense from 1: read until the first gap). */
  commentsOf(changeIdValue: string): CommentRecord[] {
    const out: CommentRecord[] = [];
    for (let k = 1; ; k++) {
      const c = this.store.entity<CommentRecord>(COMMENT, commentId(changeIdValue, k));
      if (c === undefined) return out;
      out.push(c);
    }
  }

  /** Published threads of the change still unresolved (what the resolution gate counts), as `tx` sees them when given. */
  unresolvedCount(changeIdValue: string, tx?: Txn): number {
    return foldThreads(tx ? this.commentsIn(tx, changeIdValue) : this.commentsOf(changeIdValue), null).unresolved;
  }

  /** The change's comments as `tx` sees them: staged writes (new comments, published drafts) win by id. */
  private commentsIn(tx: Txn, changeIdValue: string): CommentRecord[] {
    const ns = `${NEW_COMMENT}:${changeIdValue}`;
    const byId = new Map(this.commentsOf(changeIdValue).map((c) => [c.comment_id, c]));
    for (const k of tx.stagedKeys(ns)) byId.set(k, tx.staged<CommentRecord>(ns, k)!);
    return [...byId.values()].sort((a, b) => a.sequence - b.sequence);
  }

  private changeIn(tx: Txn, ref: string): ChangeRecord {
    const parsed = parseChangeRef(ref);
    const c = parsed === null ? undefined : tx.entity<ChangeRecord>(CHANGE, parsed.change_id);
    if (!c || (parsed!.task_id !== null && parsed!.task_id !== c.task_id)) throw new NotFound(`change ${ref} does not exist`);
    return c;
  }

  /** A patchset of `change` (404 unknown; 400 when it belongs to another change). */
  private patchsetOf(change: ChangeRecord, id: string): PatchsetRecord {
    const ps = this.book.patchset(id);
    if (ps.change_id !== change.change_id) throw new Invalid(`patchset ${id} belongs to ${ps.change_id}, not to ${change.change_id}`);
    return ps;
  }

  /** The file at a clean `path` of a snapshot (null when there is none or it is a directory). */
  private async fileAt(snapshotId: string, path: string): Promise<FileInfo> {
    const snap = this.store.snapshot(snapshotId);
    if (!snap) throw new NotFound(`snapshot ${snapshotId} is not present`);
    let treeId = snap.root_tree_id;
    const parts = path.split('/');
    let entry: TreeEntry | undefined;
    for (let i = 0; i < parts.length; i++) {
      entry = (await this.store.readTree(treeId)).find((e) => e.name === parts[i]);
      if (!entry || (i < parts.length - 1 && entry.kind !== 'directory')) return null;
      treeId = entry.id;
    }
    if (!entry || entry.kind === 'directory') return null;
    const size = this.store.locator('blob', entry.id)?.raw_length ?? 0;
    if (entry.kind === 'symlink') return { blob: entry.id, size, lines: 'binary' };
    if (size > MAX_DIFF_FILE_BYTES) return { blob: entry.id, size, lines: 'large' };
    const bytes = await this.store.readObject('blob', entry.id);
    return { blob: entry.id, size, lines: isUtf8(bytes) ? textLineCount(bytes) : 'binary' };
  }

  /** The anchor of a new thread on `ps`, checked against the patchset's base and revision trees. */
  private async anchorOn(ps: PatchsetRecord, input: AnchorInput | null | undefined): Promise<CommentAnchor> {
    const a = input ?? {};
    let files: Record<Side, FileInfo> = { base: null, revision: null };
    if (typeof a.path === 'string') {
      let p: string | null = null;
      try {
        p = cleanRelativePath(a.path, 'path');
      } catch {
        // requireAnchor names the broken path rule.
      }
      if (p !== null) files = { base: await this.fileAt(ps.base_snapshot_id, p), revision: await this.fileAt(ps.revision_snapshot_id, p) };
    }
    const anchor = requireAnchor(a, (_p, side) => {
      const f = files[side];
      if (f === null) return null;
      // A file anchor asks only whether the file is there; its size does not matter.
      if (a.line === undefined || a.line === null) return 0;
      if (f.lines === 'large') throw new Invalid(`path ${_p} is larger than ${MAX_DIFF_FILE_BYTES} bytes on the ${side} side, more than the diff shows by line; comment on the file instead`);
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
  private stageComment(tx: Txn, c: CommentRecord, threadId: string, moved: Resolution | null): void {
    if (c.published) tx.emitAll(commentEvents(c, threadId, moved));
    tx.upsert(COMMENT, c.comment_id, c);
    tx.stage(`${NEW_COMMENT}:${c.change_id}`, c.comment_id, c);
  }

  /** The thread (as published) that `id` roots or belongs to, among `records`. */
  private threadOf(records: CommentRecord[], id: string): Thread | undefined {
    return foldThreads(records, null).threads.find((t) => t.thread_id === id || t.replies.some((r) => r.comment_id === id));
  }

  /** A new thread (no `in_reply_to`) or a reply. */
  async create(ref: string, input: CommentInput): Promise<{ comment: CommentRecord; thread_id: string; resolution: Resolution }> {
    const author = requireName(input.author, 'author');
    const resolution = requireResolution(input.resolution);
    const reply = input.in_reply_to !== undefined && input.in_reply_to !== null;
    const published = input.draft !== true;
    const body = requireBody(input.body, { reply, resolution });
    const change = this.book.change(ref);
    let anchor: CommentAnchor | null = null;
    let psId: string | null = null;
    if (reply) {
      if (input.anchor !== undefined && input.anchor !== null) throw new Invalid('a reply carries its thread\'s anchor; send no anchor with in_reply_to');
      if (input.patchset_id !== undefined) psId = this.patchsetOf(change, input.patchset_id).patchset_id;
    } else {
      if (input.patchset_id === undefined) throw new Invalid('patchset_id is required for a new thread');
      const ps = this.patchsetOf(change, input.patchset_id);
      anchor = await this.anchorOn(ps, input.anchor);
      psId = ps.patchset_id;
    }
    if (reply && input.suggestion !== undefined && input.suggestion !== null) throw new Invalid('a suggestion goes on a thread\'s first comment, not on a reply');
    const suggestion = reply ? null : requireSuggestion(input.suggestion, anchor!);
    return this.store.transact((tx) => {
      const c = this.changeIn(tx, ref);
      checkChangeOpen(c, 'comment on it');
      const records = this.commentsIn(tx, c.change_id);
      let threadId: string;
      let previous: Resolution = 'unresolved';
      if (reply) {
        const target = input.in_reply_to!;
        const parsed = parseCommentId(target);
        const parent = checkReplyTarget(parsed === null ? undefined : records.find((r) => r.comment_id === target) ?? this.store.entity<CommentRecord>(COMMENT, target), target, c.change_id, author);
        const thread = this.threadOf(records, parent.comment_id)!;
        threadId = thread.thread_id;
        previous = thread.resolution;
        anchor = thread.root.anchor;
        psId ??= thread.root.patchset_id;
      } else {
        threadId = '';
      }
      const sequence = records.length + 1;
      const now = nowSeconds();
      const comment: CommentRecord = {
        comment_id: commentId(c.change_id, sequence),
        change_id: c.change_id,
        sequence,
        patchset_id: psId!,
        author,
        anchor: anchor!,
        in_reply_to: reply ? input.in_reply_to! : null,
        body,
        resolution,
        suggestion,
        published,
        created_at_s: now,
        updated_at_s: now,
      };
      if (!reply) threadId = comment.comment_id;
      this.stageComment(tx, comment, threadId, resolution !== null && resolution !== previous ? resolution : null);
      return { comment, thread_id: threadId, resolution: published ? resolution ?? previous : previous };
    });
  }

  /** `:resolve` / `:reopen` of a thread: a reply that sets its resolution (409 when it already has it). */
  async setResolution(ref: string, threadId: string, to: Resolution, input: ResolveInput): Promise<{ comment: CommentRecord; thread_id: string; resolution: Resolution }> {
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
      if (!root || !root.published) throw new NotFound(`thread ${threadId} not found in ${c.change_id}`);
      if (root.in_reply_to !== null) throw new Invalid(`comment ${threadId} is a reply, not a thread; name its thread's first comment`);
      const thread = this.threadOf(records, threadId)!;
      if (thread.resolution === to) throw new Conflict(`thread ${threadId} is already ${to}`);
      const sequence = records.length + 1;
      const now = nowSeconds();
      const last = thread.replies.at(-1) ?? thread.root;
      const comment: CommentRecord = {
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
  async editDraft(ref: string, id: string, input: DraftEditInput): Promise<{ comment: CommentRecord; thread_id: string; resolution: Resolution }> {
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
  async discardDraft(ref: string, id: string, authorName: string): Promise<{ deleted: string }> {
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
  private recordOf(records: CommentRecord[], changeIdValue: string, id: string): CommentRecord | undefined {
    const parsed = parseCommentId(id);
    if (parsed === null || parsed.change_id !== changeIdValue) return undefined;
    return records[parsed.number - 1]?.comment_id === id ? records[parsed.number - 1] : records.find((r) => r.comment_id === id);
  }

  /**
   * Publish every draft `author` has on the change, with an optional vote on the selected
   * patchset `patchset_id` (a review record), as one commit: each draft is rewritten published
   * (same id and sequence) with the events it would have had when written published, in
   * sequence order. Nothing to publish and no vote → 400.
   */
  async publish(ref: string, input: PublishInput): Promise<{ published: CommentRecord[]; review: unknown }> {
    const author = requireName(input.author, 'author');
    if (input.action !== undefined && !(PUBLISH_ACTIONS as readonly string[]).includes(input.action)) throw new Invalid(`action must be one of ${PUBLISH_ACTIONS.join(', ')}`);
    const comment = requireText(input.comment ?? '', 'comment', MAX_TEXT_CHARS, true);
    if (input.comment !== undefined && input.action === undefined) throw new Invalid('comment is the vote\'s message; send an action with it');
    return this.store.transact((tx) => {
      const c = this.changeIn(tx, ref);
      checkChangeOpen(c, 'publish comments on it');
      const ps = this.patchsetOf(c, input.patchset_id);
      let working = this.commentsIn(tx, c.change_id);
      const drafts = working.filter((r) => !r.published && !r.discarded && r.author === author);
      if (drafts.length === 0 && input.action === undefined) throw new Invalid(`${author} has no drafts on ${c.change_id} and sent no action: nothing to publish`);
      const now = nowSeconds();
      const out: CommentRecord[] = [];
      for (const d of drafts) {
        const thread = d.in_reply_to === null ? undefined : this.threadOf(working, d.in_reply_to);
        // A draft reply's parent is published (checked when it was written), or a draft of this publish, now published.
        if (d.in_reply_to !== null && !thread) throw new Conflict(`draft ${d.comment_id} answers ${d.in_reply_to}, which is not published`);
        const p: CommentRecord = { ...d, published: true, updated_at_s: now };
        working = working.map((r) => (r.comment_id === p.comment_id ? p : r));
        // The thread's state is its last published comment that set one, by sequence: a draft
        // written before a later reply does not override that reply when it is published.
        const threadId = thread ? thread.thread_id : p.comment_id;
        const before = thread ? thread.resolution : 'unresolved';
        const after = this.threadOf(working, threadId)!.resolution;
        this.stageComment(tx, p, threadId, after !== before ? after : null);
        out.push(p);
      }
      const review = input.action === undefined ? null : this.book.reviews.stageReview(tx, c, ps.patchset_id, { reviewer: author, action: input.action as ReviewAction, comment, blocking: false });
      return { published: out, review };
    });
  }

  // ------------------------------------------------------------ the thread list

  /**
   * One page of a change's published threads in root order (cursor key: the root's sequence),
   * filtered by path and resolution; with `patchset`, each thread written on another patchset
   * is shown where its anchor lands on that one (outdated when its lines changed). `unresolved`
   * counts the whole change.
   */
  async listThreads(ref: string, filter: ThreadFilter, req: PageRequest): Promise<Record<string, unknown>> {
    const change = this.book.change(ref);
    const target = filter.patchset === undefined ? null : this.patchsetOf(change, filter.patchset);
    const path = filter.path === undefined ? undefined : cleanRelativePath(filter.path, 'path');
    const viewer = filter.author === undefined ? null : requireName(filter.author, 'author');
    const folded = foldThreads(this.commentsOf(change.change_id), viewer);
    const kept = folded.threads.filter((t) => {
      if (path !== undefined && (t.root.anchor.kind === 'patchset' || t.root.anchor.path !== path)) return false;
      if (filter.resolved !== undefined && (t.resolution === 'resolved') !== filter.resolved) return false;
      return true;
    });
    const page = takePage(req, walkFrom(kept.length, (i) => kept[i], (t) => t.root.sequence, req.after, 'asc'), 'asc');
    const threads = await this.views(page.rows, target);
    return {
      change_id: change.change_id,
      change_ref: change.change_ref,
      patchset_id: target?.patchset_id ?? null,
      unresolved: folded.unresolved,
      threads,
      count: threads.length,
      next_cursor: page.next_cursor,
    };
  }

  /** The page's threads as shown on `target` (one line diff per file and side of each source patchset). */
  private async views(threads: Thread[], target: PatchsetRecord | null): Promise<ThreadView[]> {
    const shown = new Map<string, { anchor: CommentAnchor; outdated: boolean; reason: OutdatedReason | null }>();
    if (target !== null) {
      const groups = new Map<string, { from: PatchsetRecord; side: Side; path: string; threads: Thread[] }>();
      for (const t of threads) {
        const a = t.root.anchor;
        if (t.root.patchset_id === target.patchset_id || a.kind === 'patchset') continue;
        if (a.kind === 'file') {
          const after = await this.fileAt(target.revision_snapshot_id, a.path) ?? await this.fileAt(target.base_snapshot_id, a.path);
          const p = portAnchor(a, null, after === null ? null : Buffer.alloc(0));
          shown.set(t.thread_id, { anchor: p.anchor, outdated: p.outdated, reason: p.outdated ? p.reason : null });
          continue;
        }
        const key = `${t.root.patchset_id}\u0000${a.side}\u0000${a.path}`;
        if (!groups.has(key)) groups.set(key, { from: this.book.patchset(t.root.patchset_id), side: a.side, path: a.path, threads: [] });
        groups.get(key)!.threads.push(t);
      }
      for (const g of groups.values()) {
        const snap = (ps: PatchsetRecord) => (g.side === 'base' ? ps.base_snapshot_id : ps.revision_snapshot_id);
        const before = await this.fileAt(snap(g.from), g.path);
        const after = await this.fileAt(snap(target), g.path);
        const anchors = g.threads.map((t) => t.root.anchor as LineAnchor);
        let ported;
        if (before === null || before.lines === 'large' || (after !== null && after.lines === 'large')) {
          const reason: OutdatedReason = before === null ? 'beyond_file' : after === null ? 'file_removed' : 'no_line_diff';
          ported = anchors.map((a) => ({ outdated: true as const, reason, anchor: a as CommentAnchor }));
        } else {
          const b = await this.store.readObject('blob', before.blob);
          const x = after === null ? null : await this.store.readObject('blob', after.blob);
          ported = portLineAnchors(anchors, b, x);
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
