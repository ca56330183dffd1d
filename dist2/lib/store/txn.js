// Txn: what the authority's modules see inside a transaction of the commit queue. It reads
// through the layers of staged changes to the published state and stages what the commit will
// write; it changes when what a transaction may read or stage changes, never with how a batch
// is written (commit-queue.ts) or how committed content is read (published.ts).
import { existsSync } from 'node:fs';
import { decodeSnapshot, decodeTree } from '../domain/content.js';
import { Corrupt } from '../domain/errors.js';
import { decodeObjectFrame } from './pack.js';
import { packKindOf, sortByName } from './published.js';
/**
 * A transaction's view and its staging area. Reads see the published state, then what earlier
 * transactions of the batch staged, then this transaction's own changes.
 */
export class Txn {
    published;
    batch;
    own;
    constructor(published, batch, own = batch) {
        this.published = published;
        this.batch = batch;
        this.own = own;
    }
    // reads
    line(name) {
        return this.own.lines.get(name) ?? this.batch.lines.get(name) ?? this.published.line(name);
    }
    lines() {
        if (this.batch.lines.size === 0 && this.own.lines.size === 0)
            return [...this.published.lines()];
        const all = new Map(this.published.lines().map((l) => [l.name, l]));
        for (const [n, l] of this.batch.lines)
            all.set(n, l);
        for (const [n, l] of this.own.lines)
            all.set(n, l);
        return sortByName([...all.values()]);
    }
    locator(kind, id) {
        const map = (s) => (kind === 'blob' ? s.blobs : s.trees);
        return map(this.own).get(id) ?? map(this.batch).get(id) ?? this.published.locator(kind, id);
    }
    has(kind, id) {
        const map = (s) => (kind === 'blob' ? s.blobs : s.trees);
        return map(this.own).has(id) || map(this.batch).has(id) || this.published.has(kind, id);
    }
    hasSnapshot(id) {
        return this.own.snapshots.has(id) || this.batch.snapshots.has(id) || this.published.hasSnapshot(id);
    }
    /** A pack committed, or adopted or written by an earlier transaction of this batch. */
    isAdoptedPack(kind, id) {
        const key = `${kind}:${id}`;
        return this.published.isCommittedPack(kind, id) || this.batch.adopt.has(key) || this.own.adopt.has(key) || this.batch.newPacks.has(key) || this.own.newPacks.has(key);
    }
    packHeader(kind, id) {
        return this.published.packHeader(kind, id);
    }
    /** Read an object: from a pack this batch is about to write, else from packs/ or staging/. */
    async readLocated(loc) {
        const key = `${packKindOf(loc.kind)}:${loc.pack_id}`;
        const pending = this.own.newPacks.get(key) ?? this.batch.newPacks.get(key);
        if (pending) {
            const entry = { id: loc.id, offset: loc.offset, length: loc.length, raw_length: loc.raw_length, crc32: loc.crc32 };
            return decodeObjectFrame(entry, pending.bytes.subarray(loc.offset, loc.offset + loc.length), loc.kind);
        }
        return this.published.readLocated(loc);
    }
    /** Paths a snapshot may hold (lib/domain/tree-size.ts). */
    get maxSnapshotPaths() {
        return this.published.sizes.maxSnapshotPaths;
    }
    /**
     * A tree's expanded size as this transaction sees it: recorded in a staged or committed
     * locator, or computed once over the distinct subtrees that have none (tree-sizes.ts).
     */
    expandedSize(treeId) {
        const staged = (id) => this.own.trees.get(id) ?? this.batch.trees.get(id);
        return this.published.sizes.size(treeId, (id) => staged(id)?.expanded ?? this.published.recordedSize(id), async (id) => {
            const loc = this.locator('tree', id);
            if (!loc)
                throw new Corrupt(`tree ${id} is not present`);
            return decodeTree(await this.readLocated(loc));
        });
    }
    /** An upper bound on a tree's depth without reading it (tree-sizes.ts), as this transaction sees the tree. */
    depthBound(treeId) {
        const staged = this.own.trees.get(treeId) ?? this.batch.trees.get(treeId);
        return this.published.sizes.depthBound(treeId, staged?.expanded ?? this.published.recordedSize(treeId));
    }
    /** Keep a bound a depth check computed: a tree's depth depends on its id alone. */
    rememberDepth(treeId, depth) {
        this.published.sizes.rememberDepth(treeId, depth);
    }
    entity(type, id) {
        for (const s of [this.own, this.batch]) {
            for (let i = s.upserts.length - 1; i >= 0; i--)
                if (s.upserts[i].type === type && s.upserts[i].id === id)
                    return s.upserts[i].body;
        }
        for (let t = this.batch.workflow.length - 1; t >= 0; t--) {
            const ups = this.batch.workflow[t].upserts;
            for (let i = ups.length - 1; i >= 0; i--)
                if (ups[i].type === type && ups[i].id === id)
                    return ups[i].body;
        }
        return this.published.entity(type, id);
    }
    /** Module state staged earlier in this batch or this transaction (namespace `ns`). */
    staged(ns, key) {
        return this.own.staged(ns, key) ?? this.batch.staged(ns, key);
    }
    /** Keys staged in namespace `ns` by this batch so far (this transaction included). */
    stagedKeys(ns) {
        return [...new Set([...(this.batch.overlay.get(ns)?.keys() ?? []), ...(this.own.overlay.get(ns)?.keys() ?? [])])];
    }
    // staging
    adoptPack(kind, packId) {
        if (this.isAdoptedPack(kind, packId))
            return;
        // Checked here, not only at the rename: a pack gone from staging/ fails this transaction
        // alone, never the unrelated ones grouped in its batch (only barriers remove staged packs,
        // and none runs between a transaction and its batch's write).
        if (!existsSync(this.published.stagedPackFile(kind, packId)))
            throw new Error(`staged pack ${packId} is gone from staging/`);
        this.own.adopt.set(`${kind}:${packId}`, { kind, packId });
    }
    /** A pack the server built; the commit writes it into packs/ before its commit point. */
    writePack(kind, packId, bytes) {
        if (!this.isAdoptedPack(kind, packId))
            this.own.newPacks.set(`${kind}:${packId}`, { kind, packId, bytes });
    }
    addLocator(loc) {
        (loc.kind === 'blob' ? this.own.blobs : this.own.trees).set(loc.id, loc);
    }
    /** Stage a snapshot record (parents first); returns its snapshot_index. */
    addSnapshot(canonical) {
        const record = decodeSnapshot(canonical);
        const staged = { canonical, record };
        this.own.snapshots.set(record.snapshot_id, staged);
        return this.published.snapshotCount + this.batch.snapshots.size + this.own.snapshots.size - 1;
    }
    setLine(line) {
        this.own.lines.set(line.name, line);
        this.own.upserts.push({ type: 'line', id: line.name, body: { status: line.status, head_snapshot_id: line.head_snapshot_id, updated_at_s: line.updated_at_s } });
    }
    /** A workflow entity upsert (storage-layout.md §17); written in this transaction's workflow.log record. */
    upsert(type, id, body) {
        if (type === 'line')
            throw new Error('lines are set with setLine');
        this.own.upserts.push({ type, id, body });
    }
    /**
     * Record that something happened, in this transaction's commit (storage-layout.md §18): the
     * event becomes visible exactly when the records it describes do. `data` holds the ids a
     * consumer needs to read the current projection, not copies of records.
     */
    emit(type, data) {
        this.own.events.push({ type, data });
    }
    emitAll(events) {
        for (const e of events)
            this.own.events.push(e);
    }
    /** The sequence number the newest event emitted so far will have: committed ones, then those of this batch. */
    get eventSeq() {
        return this.published.events.lastSeq + this.batch.events.length + (this.own === this.batch ? 0 : this.own.events.length);
    }
    /** Events this transaction has emitted so far (tests and sanity checks). */
    get emitted() {
        return this.own.events;
    }
    append(log, body) {
        this.own.appends[log].push(body);
    }
    stage(ns, key, value) {
        this.own.stage(ns, key, value);
    }
    /** Run after the commit is durable, before callers are answered (update in-memory state). */
    onPublish(hook) {
        this.own.hooks.push(hook);
    }
}
//# sourceMappingURL=txn.js.map