// Viewed marks (docs/api.md "Viewed marks"): per user, per change, per patchset, per path,
// over the pure rules of lib/domain/workflow/viewed-rules.ts. Each mark is a workflow.log upsert
// of type `viewed` (storage-layout.md §17), one record per (change, user, patchset, path),
// rewritten when toggled, numbered densely per (change, user): a user's marks on a change are
// read by id from 1 until the first gap. Memory: the marks of the most recently used
// (change, user) pairs, at most 256 pairs and 200,000 marks in all (a user holds at most 10,000
// on one change); others are read again from their records when next used, and every committed
// `viewed` upsert updates the pair it belongs to when held. Nothing is kept in the checkpoint.
import { Invalid, NotFound } from '../../domain/errors.js';
import { nowSeconds } from '../../domain/repository.js';
import { parseChangeRef } from '../../domain/workflow/rules.js';
import { carriedPaths, checkViewedRoom, MAX_VIEWED_PER_USER, patchsetNumberOf, requireUser, requireViewedPath, VIEWED, viewedId, viewedPaths, } from '../../domain/workflow/viewed-rules.js';
import { CHANGE } from '../../domain/workflow/rules.js';
const HELD_PAIRS = 256;
const HELD_MARKS = 200_000;
const NEW_MARK = 'wf:new-viewed';
/** One (change, user)'s marks by `<patchset number>\0<path>`. */
class UserMarks {
    byKey = new Map();
    /** Highest sequence numbered for the pair (the next mark is one more). */
    last = 0;
    apply(m) {
        this.byKey.set(markKey(m.patchset_id, m.path), m);
        if (m.sequence > this.last)
            this.last = m.sequence;
    }
}
const markKey = (patchsetIdValue, path) => `${patchsetNumberOf(patchsetIdValue)}\u0000${path}`;
const pairKey = (changeIdValue, user) => `${changeIdValue}\u0000${user}`;
export class ViewedBook {
    store;
    book;
    held = new Map();
    /** Marks one user may hold on one change (tests lower it). */
    maxPerUser = MAX_VIEWED_PER_USER;
    constructor(store, book) {
        this.store = store;
        this.book = book;
        store.onUpsert(VIEWED, (_id, body) => {
            const m = body;
            this.held.get(pairKey(m.change_id, m.user))?.apply(m);
        });
    }
    /** The user's marks on the change as committed (read from their records when not held). */
    marksOf(changeIdValue, user) {
        const key = pairKey(changeIdValue, user);
        let u = this.held.get(key);
        if (u) {
            this.held.delete(key);
            this.held.set(key, u);
            return u;
        }
        u = new UserMarks();
        for (let k = 1;; k++) {
            const m = this.store.entity(VIEWED, viewedId(changeIdValue, user, k));
            if (m === undefined)
                break;
            // Another name whose key collides shares the numbering; its marks are not this user's.
            if (m.user === user)
                u.apply(m);
            else
                u.last = k;
        }
        this.held.set(key, u);
        let marks = 0;
        for (const x of this.held.values())
            marks += x.byKey.size;
        while (this.held.size > 1 && (this.held.size > HELD_PAIRS || marks > HELD_MARKS)) {
            const oldest = this.held.keys().next().value;
            marks -= this.held.get(oldest).byKey.size;
            this.held.delete(oldest);
        }
        return u;
    }
    /** A patchset of `change` (404 unknown; 400 when it belongs to another change). */
    patchsetOf(change, id) {
        if (typeof id !== 'string' || id === '')
            throw new Invalid('patchset_id is required');
        const ps = this.book.patchset(id);
        if (ps.change_id !== change.change_id)
            throw new Invalid(`patchset ${id} belongs to ${ps.change_id}, not to ${change.change_id}`);
        return ps;
    }
    /** The entry at `path` of a snapshot's tree, or null (`trees`: the request's memo of tree reads; trees never change). */
    async entryAt(snapshotId, path, trees) {
        const snap = this.store.snapshot(snapshotId);
        if (!snap)
            throw new NotFound(`snapshot ${snapshotId} is not present`);
        let treeId = snap.root_tree_id;
        const parts = path.split('/');
        for (let i = 0; i < parts.length; i++) {
            let t = trees.get(treeId);
            if (!t)
                trees.set(treeId, (t = new Map((await this.store.readTree(treeId)).map((e) => [e.name, e]))));
            const e = t.get(parts[i]);
            if (!e)
                return null;
            if (i === parts.length - 1)
                return e.kind === 'directory' ? null : e;
            if (e.kind !== 'directory')
                return null;
            treeId = e.id;
        }
        return null;
    }
    /** The patchset the user last reviewed (any review but a request), or null. */
    lastReviewed(changeIdValue, user) {
        const reviews = this.book.reviews.reviewsOf(changeIdValue);
        for (let i = reviews.length - 1; i >= 0; i--)
            if (reviews[i].reviewer === user && reviews[i].action !== 'request')
                return reviews[i].patchset_id;
        return null;
    }
    /** The paths `user` has viewed on a patchset of the change (default: its current patchset). */
    async viewed(ref, userValue, patchsetIdValue) {
        const user = requireUser(userValue);
        const change = this.book.change(ref);
        const psId = patchsetIdValue ?? change.current_patchset_id;
        if (psId === null)
            return { change_id: change.change_id, patchset_id: '', user, paths: [], last_reviewed_patchset_id: null };
        const ps = this.patchsetOf(change, psId);
        const marks = [...this.marksOf(change.change_id, user).byKey.values()];
        const number = ps.patchset_number;
        const trees = new Map();
        const blobs = new Map();
        for (const p of carriedPaths(marks, number))
            blobs.set(p, (await this.entryAt(ps.revision_snapshot_id, p, trees))?.id ?? null);
        const paths = viewedPaths(marks, number, (p) => blobs.get(p) ?? null);
        return { change_id: change.change_id, patchset_id: ps.patchset_id, user, paths, last_reviewed_patchset_id: this.lastReviewed(change.change_id, user) };
    }
    /** Mark or unmark one path on one patchset; durable before it returns. Answers the patchset's viewed paths. */
    async mark(ref, input) {
        const user = requireUser(input.user);
        const path = requireViewedPath(input.path);
        const change = this.book.change(ref);
        const ps = this.patchsetOf(change, input.patchset_id);
        const trees = new Map();
        const after = await this.entryAt(ps.revision_snapshot_id, path, trees);
        if (!after && !(await this.entryAt(ps.base_snapshot_id, path, trees)))
            throw new Invalid(`path ${path} is not a file of patchset ${ps.patchset_id} (neither its base nor its revision holds it)`);
        const blob = after?.id ?? null;
        await this.store.transact((tx) => {
            const parsed = parseChangeRef(ref);
            if (!parsed || !tx.entity(CHANGE, parsed.change_id))
                throw new NotFound(`change ${ref} does not exist`);
            // The pair's marks as committed, then those staged earlier in this batch.
            const held = this.marksOf(change.change_id, user);
            const ns = `${NEW_MARK}:${change.change_id}\u0000${user}`;
            const key = markKey(ps.patchset_id, path);
            const existing = tx.staged(ns, key) ?? held.byKey.get(key);
            let sequence;
            if (existing) {
                if (existing.viewed === input.viewed && existing.blob_id === blob)
                    return;
                sequence = existing.sequence;
            }
            else {
                let last = held.last;
                let count = held.byKey.size;
                for (const k of tx.stagedKeys(ns)) {
                    const s = tx.staged(ns, k);
                    if (s.sequence > last)
                        last = s.sequence;
                    if (!held.byKey.has(k))
                        count++;
                }
                checkViewedRoom(change.change_id, count, this.maxPerUser);
                sequence = last + 1;
            }
            const rec = { viewed_id: viewedId(change.change_id, user, sequence), change_id: change.change_id, user, sequence, patchset_id: ps.patchset_id, path, blob_id: blob, viewed: input.viewed, updated_at_s: nowSeconds() };
            tx.upsert(VIEWED, rec.viewed_id, rec);
            tx.stage(ns, key, rec);
        });
        return this.viewed(ref, user, ps.patchset_id);
    }
}
//# sourceMappingURL=viewed.js.map