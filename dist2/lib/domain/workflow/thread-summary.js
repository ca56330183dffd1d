import { parseCommentId } from './comment-rules.js';
/** The most comments one change may hold: a new comment beyond it is refused (409). */
export const MAX_COMMENTS_PER_CHANGE = 10_000;
export class ThreadSummary {
    /** Highest sequence applied (the change's comment count: sequences are dense). */
    count = 0;
    /** Published threads still unresolved (what the resolution gate counts). */
    unresolved = 0;
    meta = [];
    threads = new Map();
    /** Root sequences, ascending (the list's order). */
    order = [];
    /** Roots counted in `unresolved`. */
    counted = new Set();
    static of(records) {
        const s = new ThreadSummary();
        for (const r of records)
            s.apply(r);
        return s;
    }
    /** A committed record of the change, new or rewritten (a draft published). */
    apply(c) {
        const seq = c.sequence;
        const known = this.meta[seq];
        if (known) {
            known.published = c.published;
            known.author = c.author;
            known.resolution = c.resolution;
            known.discarded = c.discarded === true;
            const t = known.root === 0 ? undefined : this.threads.get(known.root);
            if (t && t.seq === seq) {
                t.published = c.published;
                t.author = c.author;
                t.discarded = known.discarded;
            }
            if (t)
                this.settle(t);
            return;
        }
        let root = 0;
        if (c.in_reply_to === null)
            root = seq;
        else {
            const parent = parseCommentId(c.in_reply_to);
            // A reply joins its parent's thread; the parent comes earlier (fsck reports any that does not).
            if (parent && parent.change_id === c.change_id && parent.number < seq)
                root = this.meta[parent.number]?.root ?? 0;
        }
        this.meta[seq] = { root, published: c.published, author: c.author, resolution: c.resolution, discarded: c.discarded === true };
        if (seq > this.count)
            this.count = seq;
        if (root === seq) {
            const t = { seq, anchor: c.anchor, published: c.published, author: c.author, discarded: c.discarded === true, members: [seq], resolution: 'unresolved' };
            this.threads.set(seq, t);
            insertSorted(this.order, seq);
            this.settle(t);
        }
        else if (root !== 0) {
            const t = this.threads.get(root);
            const last = t.members[t.members.length - 1] < seq;
            insertSorted(t.members, seq);
            // The usual case, a new last comment: only it can move the thread (no walk of a long thread).
            if (last)
                this.setResolution(t, c.published && c.resolution !== null ? c.resolution : t.resolution);
            else
                this.settle(t);
        }
    }
    /** Recompute a thread's published resolution and its share of the unresolved count. */
    settle(t) {
        let res = 'unresolved';
        for (const m of t.members) {
            const x = this.meta[m];
            if (x.published && x.resolution !== null)
                res = x.resolution;
        }
        this.setResolution(t, res);
    }
    setResolution(t, res) {
        t.resolution = res;
        const counts = t.published && res === 'unresolved';
        if (counts !== this.counted.has(t.seq)) {
            this.unresolved += counts ? 1 : -1;
            if (counts)
                this.counted.add(t.seq);
            else
                this.counted.delete(t.seq);
        }
    }
    /** Threads `viewer` sees (published ones and the viewer's own drafts, never a discarded one), in root order. */
    visible(viewer) {
        const out = [];
        for (const seq of this.order) {
            const t = this.threads.get(seq);
            if (!t.discarded && (t.published || t.author === viewer))
                out.push(t);
        }
        return out;
    }
    /** The members of `t` that `viewer` sees (what foldThreads keeps of them). */
    membersSeen(t, viewer) {
        return t.members.filter((m) => { const x = this.meta[m]; return !x.discarded && (x.published || x.author === viewer); });
    }
}
function insertSorted(xs, x) {
    let i = xs.length;
    while (i > 0 && xs[i - 1] > x)
        i--;
    xs.splice(i, 0, x);
}
//# sourceMappingURL=thread-summary.js.map