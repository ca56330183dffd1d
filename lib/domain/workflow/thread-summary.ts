// The derived per-change summary of comment threads that the thread list, readiness and the
// resolution gate read instead of every comment record: per comment its thread, author,
// published flag and resolution; per thread its anchor's path; the count of published
// unresolved threads. Built from a change's records (in sequence order) and kept current by
// applying each committed record (lib/authority/workflow/comments.ts); never stored. It agrees
// with foldThreads over the same records (test/comments-domain.test.ts checks that as a property).
import type { CommentAnchor, CommentRecord, Resolution } from './comment-rules.js';
import { parseCommentId } from './comment-rules.js';

/** The most comments one change may hold: a new comment beyond it is refused (409). */
export const MAX_COMMENTS_PER_CHANGE = 10_000;

interface Meta { root: number; published: boolean; author: string; resolution: Resolution | null; discarded: boolean; at_s: number; patchset: number }

/** A published comment as the attention rule reads it (lib/domain/workflow/attention.ts). */
export interface SummaryComment { sequence: number; author: string; patchset: number; at_s: number }

/** The patchset number of a patchset id (`change-3.ps-2` → 2; 0 when it is not one). */
const psNumber = (id: string): number => Number(/\.ps-([1-9][0-9]{0,9})$/.exec(id)?.[1] ?? 0);

export interface SummaryThread {
  /** The root comment's sequence. */
  seq: number;
  anchor: CommentAnchor;
  published: boolean;
  author: string;
  /** The root is a draft its author discarded: nobody sees the thread. */
  discarded: boolean;
  /** Sequences of the root and its replies (drafts included), ascending. */
  members: number[];
  /** The last published comment that set one (the root opens it unresolved). */
  resolution: Resolution;
}

export class ThreadSummary {
  /** Highest sequence applied (the change's comment count: sequences are dense). */
  count = 0;
  /** Published threads still unresolved (what the resolution gate counts). */
  unresolved = 0;
  private readonly meta: (Meta | undefined)[] = [];
  private readonly threads = new Map<number, SummaryThread>();
  /** Root sequences, ascending (the list's order). */
  private readonly order: number[] = [];
  /** Roots counted in `unresolved`. */
  private readonly counted = new Set<number>();

  static of(records: Iterable<CommentRecord>): ThreadSummary {
    const s = new ThreadSummary();
    for (const r of records) s.apply(r);
    return s;
  }

  /** A committed record of the change, new or rewritten (a draft published). */
  apply(c: CommentRecord): void {
    const seq = c.sequence;
    const known = this.meta[seq];
    if (known) {
      known.published = c.published;
      known.author = c.author;
      known.resolution = c.resolution;
      known.discarded = c.discarded === true;
      known.at_s = c.updated_at_s;
      known.patchset = psNumber(c.patchset_id);
      const t = known.root === 0 ? undefined : this.threads.get(known.root);
      if (t && t.seq === seq) { t.published = c.published; t.author = c.author; t.discarded = known.discarded; }
      if (t) this.settle(t);
      return;
    }
    let root = 0;
    if (c.in_reply_to === null) root = seq;
    else {
      const parent = parseCommentId(c.in_reply_to);
      // A reply joins its parent's thread; the parent comes earlier (fsck reports any that does not).
      if (parent && parent.change_id === c.change_id && parent.number < seq) root = this.meta[parent.number]?.root ?? 0;
    }
    this.meta[seq] = { root, published: c.published, author: c.author, resolution: c.resolution, discarded: c.discarded === true, at_s: c.updated_at_s, patchset: psNumber(c.patchset_id) };
    if (seq > this.count) this.count = seq;
    if (root === seq) {
      const t: SummaryThread = { seq, anchor: c.anchor, published: c.published, author: c.author, discarded: c.discarded === true, members: [seq], resolution: 'unresolved' };
      this.threads.set(seq, t);
      insertSorted(this.order, seq);
      this.settle(t);
    } else if (root !== 0) {
      const t = this.threads.get(root)!;
      const last = t.members[t.members.length - 1] < seq;
      insertSorted(t.members, seq);
      // The usual case, a new last comment: only it can move the thread (no walk of a long thread).
      if (last) this.setResolution(t, c.published && c.resolution !== null ? c.resolution : t.resolution);
      else this.settle(t);
    }
  }

  /** Recompute a thread's published resolution and its share of the unresolved count. */
  private settle(t: SummaryThread): void {
    let res: Resolution = 'unresolved';
    for (const m of t.members) {
      const x = this.meta[m]!;
      if (x.published && x.resolution !== null) res = x.resolution;
    }
    this.setResolution(t, res);
  }

  private setResolution(t: SummaryThread, res: Resolution): void {
    t.resolution = res;
    const counts = t.published && res === 'unresolved';
    if (counts !== this.counted.has(t.seq)) {
      this.unresolved += counts ? 1 : -1;
      if (counts) this.counted.add(t.seq);
      else this.counted.delete(t.seq);
    }
  }

  /** Threads `viewer` sees (published ones and the viewer's own drafts, never a discarded one), in root order. */
  visible(viewer: string | null): SummaryThread[] {
    const out: SummaryThread[] = [];
    for (const seq of this.order) {
      const t = this.threads.get(seq)!;
      if (!t.discarded && (t.published || t.author === viewer)) out.push(t);
    }
    return out;
  }

  /** Each published thread: unresolved or not, and its published comments in the order they were published (time, then sequence). */
  publishedThreads(): { unresolved: boolean; comments: SummaryComment[] }[] {
    const out: { unresolved: boolean; comments: SummaryComment[] }[] = [];
    for (const seq of this.order) {
      const t = this.threads.get(seq)!;
      if (t.discarded || !t.published) continue;
      const comments: SummaryComment[] = [];
      for (const m of t.members) {
        const x = this.meta[m]!;
        if (x.published && !x.discarded) comments.push({ sequence: m, author: x.author, patchset: x.patchset, at_s: x.at_s });
      }
      comments.sort((a, b) => a.at_s - b.at_s || a.sequence - b.sequence);
      out.push({ unresolved: t.resolution === 'unresolved', comments });
    }
    return out;
  }

  /** The members of `t` that `viewer` sees (what foldThreads keeps of them). */
  membersSeen(t: SummaryThread, viewer: string | null): number[] {
    return t.members.filter((m) => { const x = this.meta[m]!; return !x.discarded && (x.published || x.author === viewer); });
  }
}

function insertSorted(xs: number[], x: number): void {
  let i = xs.length;
  while (i > 0 && xs[i - 1] > x) i--;
  xs.splice(i, 0, x);
}
