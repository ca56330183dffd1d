import { MAX_SEGMENTS } from './commit-point.js';
import { CommitQueue } from './commit-queue.js';
import { INDEX_NAMES } from './layout.js';
import { StoreMaintenance } from './maintenance.js';
import { StreamingPackWriter } from './pack-writer.js';
import { PackUploads, STAGED_PACK_TTL_S } from './pack-uploads.js';
import { recoverStore } from './recovery.js';
import { crashPoint } from './crash-point.js';
import { writeFileDurableWith } from './durable.js';
import { TreeSizes } from './tree-sizes.js';
import { openCapture } from './capture.js';
import { DEFAULT_MAX_SNAPSHOT_PATHS, overLimit, pathsOf, WalkBudget, walkOverLimit } from '../domain/tree-size.js';
/** Workflow.log records between background checkpoints (an open replays at most about this many). */
export const DEFAULT_CHECKPOINT_EVERY = 50_000;
export { packKindOf } from './published.js';
export { STAGED_PACK_TTL_S } from './pack-uploads.js';
export { MERGE_SEGMENTS_AT } from './maintenance.js';
export { Txn } from './txn.js';
export class ContentStore {
    root;
    published;
    point;
    layout;
    /** Called with a problem text when a background merge, compaction or checkpoint fails (the authority logs it). */
    onBackgroundError = () => { };
    /** Called with a note when a background compaction of workflow.log made its new file current. */
    onCompacted = () => { };
    commits;
    maintenance;
    uploads;
    filesClosed = false;
    markFilesClosed;
    filesClosedPromise = new Promise((resolve) => { this.markFilesClosed = resolve; });
    checkpointing = false;
    /** Set once the owners of checkpoint sections have opened (before, a checkpoint would lack their sections). */
    ownersOpen = false;
    checkpointEnabled;
    checkpointEvery;
    /** Compact workflow.log in the background whenever it is due (compactWhenDue). */
    compactingWhenDue = false;
    constructor(root, published, point, options) {
        this.root = root;
        this.published = published;
        this.point = point;
        this.layout = published.layout;
        published.setSealKey(options.sealKey ?? null);
        published.sizes = new TreeSizes(options.maxSnapshotPaths ?? DEFAULT_MAX_SNAPSHOT_PATHS);
        this.checkpointEnabled = options.checkpoint !== false;
        this.checkpointEvery = options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY;
        this.commits = new CommitQueue(published, point, () => {
            if (this.commits.closed)
                this.closeFilesWhenIdle();
            this.maintenance.maybeMerge();
            if (this.compactingWhenDue)
                this.maintenance.maybeCompactWorkflow();
            this.maybeCheckpoint();
        });
        this.maintenance = new StoreMaintenance(published, this.commits, {
            backgroundError: (problem) => this.onBackgroundError(problem),
            stoppedForClose: () => this.closeFilesWhenIdle(),
            compacted: (note) => {
                this.onCompacted(note);
                // The checkpoint covers the replaced log generation: write one of the new file.
                this.maybeCheckpoint();
            },
        }, options.frozen === true);
        this.uploads = new PackUploads(published, this.commits);
    }
    /**
     * Open after a restart (recovery, storage-layout.md §9): read commit.bin (upgrading a format-v0
     * authority once), cut every log to its committed length, open the named index segments,
     * remove segment and lines files no commit names, move packs that no segment references back
     * to staging, and replay workflow.log. Returns notes about what was repaired or upgraded.
     */
    static async open(root, options = {}) {
        const { published, point, notes } = await recoverStore(root, options);
        const store = new ContentStore(root, published, point, options);
        // A store from before events.log may hold more segments than the commit point now has room
        // for (MAX_SEGMENTS): merge them first, so that commits with events can be written.
        // (Version 1 commit points are written meanwhile; see encodeCommitRecord.)
        const over = INDEX_NAMES.filter((name) => published.state.segments[name].length > MAX_SEGMENTS);
        if (over.length) {
            store.maintenance.maybeMerge();
            await store.settle();
            notes.push(`merged the segments of ${over.join(', ')} (a commit point now holds at most ${MAX_SEGMENTS} per index)`);
        }
        return { store, notes };
    }
    /**
     * Close the store. Transactions still queued are refused; a batch being written or a
     * background merge finishes first, and the files are closed when it does (never under it).
     */
    close() {
        if (this.commits.closed)
            return;
        this.commits.close();
        this.closeFilesWhenIdle();
    }
    closeFilesWhenIdle() {
        if (this.filesClosed || this.commits.draining || this.maintenance.busy || this.checkpointing)
            return;
        this.filesClosed = true;
        // A clean close leaves a checkpoint of everything committed, so the next open replays nothing.
        if (this.checkpointEnabled && this.ownersOpen && !this.commits.failed && this.checkpointBehind() > 0) {
            try {
                this.published.writeCheckpointSync(this.published.encodeCheckpoint().bytes);
            }
            catch (err) {
                this.onBackgroundError(`writing workflow.ckpt at close failed: ${err.message}`);
            }
        }
        this.published.close();
        this.point.close();
        this.markFilesClosed();
    }
    /** Resolves once close() has closed the files (after the batch being written and any background work). */
    whenClosed() {
        return this.filesClosedPromise;
    }
    // ------------------------------------------------------------ the workflow checkpoint (workflow-checkpoint.ts)
    /** workflow.log records after what the newest checkpoint covers (all of them when it is of another log file). */
    checkpointBehind() {
        const c = this.published.checkpointCover;
        if (!c || c.log_file !== this.published.state.log_files.workflow)
            return this.published.workflowRecords;
        return this.published.workflowRecords - c.records;
    }
    /**
     * Write workflow.ckpt in the background when it is missing, of another log file, or
     * `checkpointEvery` records behind. The state is encoded in a barrier (nothing commits while
     * it is copied), the file written after it while commits go on.
     */
    maybeCheckpoint() {
        if (!this.checkpointEnabled || !this.ownersOpen || this.checkpointing || this.commits.closed || this.commits.failed)
            return;
        const behind = this.checkpointBehind();
        const stale = !this.published.checkpointCover || this.published.checkpointCover.log_file !== this.published.state.log_files.workflow;
        if (!(behind >= this.checkpointEvery || (stale && this.published.workflowRecords > 0)))
            return;
        this.checkpointing = true;
        this.writeCheckpoint().then(() => true, (err) => {
            this.onBackgroundError(`writing workflow.ckpt failed: ${err.message}`);
            return false;
        }).then((written) => {
            this.checkpointing = false;
            if (this.commits.closed)
                this.closeFilesWhenIdle();
            // A compaction may have replaced the log while this one was written: check again.
            else if (written)
                this.maybeCheckpoint();
        });
    }
    /** Encode the current state in a barrier and write workflow.ckpt durably (tests call it directly). */
    async writeCheckpoint() {
        const { bytes, cover } = await this.commits.barrier(() => this.published.encodeCheckpoint());
        crashPoint('checkpoint:before-write');
        await writeFileDurableWith(this.layout.workflowCheckpoint, async (handle) => {
            await handle.write(bytes, 0, bytes.length >> 1, 0);
            crashPoint('checkpoint:mid-write');
            await handle.write(bytes, bytes.length >> 1, bytes.length - (bytes.length >> 1), bytes.length >> 1);
        });
        crashPoint('checkpoint:after-write');
        const prev = this.published.checkpointCover;
        if (!prev || prev.log_file !== cover.log_file || prev.records <= cover.records)
            this.published.checkpointCover = cover;
    }
    /** Closed, or failed (a commit-point write failed): no transaction is taken. */
    get isClosed() { return this.commits.closed || this.commits.failed !== null; }
    /** An owner's section of every checkpoint from now on (lib/store/workflow-checkpoint.ts); `encode` answers null to leave it out of one. */
    registerCheckpointSection(name, encode) { this.published.registerCheckpointSection(name, encode); }
    /** The owner's section of the checkpoint this open started from; undefined: rebuild from the records. */
    takeCheckpointSection(name) { return this.published.takeCheckpointSection(name); }
    /** An owner rebuilt its indexes (its section was missing or unusable): write a whole checkpoint soon. */
    checkpointIncomplete() { this.published.checkpointCover = null; }
    /** Ids of `type` upserted in workflow.log after the checkpoint this open started from. */
    tailEntities(type) { return this.published.tailEntities(type); }
    /**
     * Every owner of a checkpoint section has opened (Authority.open): drop what the open's
     * checkpoint left, and from now on write checkpoints (in the background and at close).
     */
    ownersOpened() {
        this.published.releaseCheckpoint();
        this.ownersOpen = true;
    }
    /** The checkpoint as of `cover`, rebuilt from workflow.log (fsck). */
    rebuildCheckpoint(cover, sections) { return this.published.rebuildCheckpoint(cover, sections); }
    /** Live entities of a workflow type (without reading them). */
    entityCount(type) { return this.published.records.count(type); }
    // ------------------------------------------------------------ paths (published.ts)
    packDir(kind) { return this.published.packDir(kind); }
    stagingDir(kind) { return this.published.stagingDir(kind); }
    packFile(kind, id) { return this.published.packFile(kind, id); }
    stagedPackFile(kind, id) { return this.published.stagedPackFile(kind, id); }
    // ------------------------------------------------------------ published reads (published.ts)
    get generation() { return this.published.generation; }
    get snapshotCount() { return this.published.snapshotCount; }
    /** The committed state (for fsck and tests). */
    get commitState() { return structuredClone(this.published.state); }
    locator(kind, id) { return this.published.locator(kind, id); }
    has(kind, id) { return this.published.has(kind, id); }
    locators(kind) { return this.published.locators(kind); }
    readObject(kind, id) { return this.published.readObject(kind, id); }
    readLocated(loc) { return this.published.readLocated(loc); }
    readTree(id) { return this.published.readTree(id); }
    /** Paths a snapshot may hold (lib/domain/tree-size.ts). */
    get maxSnapshotPaths() { return this.published.sizes.maxSnapshotPaths; }
    /**
     * A committed tree's expanded size: recorded in its index entry, or computed once over its
     * distinct subtrees (a tree indexed before sizes were recorded) and kept (tree-sizes.ts).
     */
    expandedSize(treeId, pace) {
        return this.published.sizes.size(treeId, (id) => this.published.recordedSize(id), (id) => this.published.readTree(id), pace);
    }
    /** A tree's expanded size when recorded or computed before; undefined otherwise (never reads). */
    knownSize(treeId) {
        return this.published.sizes.known(treeId, this.published.recordedSize(treeId));
    }
    /** Keep a size computed elsewhere (a merge's new trees): sizes depend on the tree id alone. */
    rememberSize(treeId, size) {
        this.published.sizes.remember(treeId, size);
    }
    /** An upper bound on a committed tree's depth without reading it (tree-sizes.ts depthBound). */
    depthBound(treeId) {
        return this.published.sizes.depthBound(treeId, this.published.recordedSize(treeId));
    }
    /** Keep a bound a depth check computed: a tree's depth depends on its id alone. */
    rememberDepth(treeId, depth) {
        this.published.sizes.rememberDepth(treeId, depth);
    }
    /**
     * Refuse (400, an Invalid naming `what`) to expand a stored tree that holds more paths than a
     * snapshot may: a store written before the limit may hold one. A lookup when recorded.
     */
    async requireExpandable(treeId, what) {
        const paths = pathsOf(await this.expandedSize(treeId));
        if (paths > this.maxSnapshotPaths)
            throw overLimit(what, paths, this.maxSnapshotPaths);
    }
    /** The budget of one walk that expands trees checked by requireExpandable: `factor` × the limit, then 400. */
    walkBudget(what, factor = 1) {
        return new WalkBudget(this.maxSnapshotPaths * factor, walkOverLimit(what));
    }
    hasSnapshot(id) { return this.published.hasSnapshot(id); }
    snapshot(id) { return this.published.snapshot(id); }
    snapshotIds() { return this.published.snapshotIds(); }
    lines() { return this.published.lines(); }
    line(name) { return this.published.line(name); }
    entity(type, id) { return this.published.entity(type, id); }
    entitiesOf(type) { return this.published.entitiesOf(type); }
    scanEntity(type, id) { return this.published.scanEntity(type, id); }
    entityIds(type) { return this.published.entityIds(type); }
    logRecords(name) { return this.published.logRecords(name); }
    /** events.log by sequence (storage-layout.md §18). */
    get events() { return this.published.events; }
    /** Call `fn` with each published commit's events, after what they describe is readable. */
    onEvents(fn) { return this.published.onEvents(fn); }
    onUpsert(type, fn) { return this.published.onUpsert(type, fn); }
    isCommittedPack(kind, id) { return this.published.isCommittedPack(kind, id); }
    committedPackIds(kind) { return this.published.committedPackIds(kind); }
    isStagedPack(kind, id) { return this.published.isStagedPack(kind, id); }
    packFiles(kind) { return this.published.packFiles(kind); }
    segmentCounts() { return this.published.segmentCounts(); }
    verifyIndexes() { this.published.verifyIndexes(); }
    packHeader(kind, id) { return this.published.packHeader(kind, id); }
    openPack(kind, id) { return this.published.openPack(kind, id); }
    // ------------------------------------------------------------ uploads, outside commits (pack-uploads.ts)
    stagePack(kind, packId, body, limit) {
        return this.uploads.stagePack(kind, packId, body, limit);
    }
    expireStagedPacks(ttlSeconds = STAGED_PACK_TTL_S, now = Date.now()) { return this.uploads.expireStagedPacks(ttlSeconds, now); }
    /**
     * A pack whose objects stream in (a push's blobs), staged when finished (./pack-writer.ts) and
     * held there until dropStagedPack lets go of it.
     */
    streamingPack(kind) {
        return StreamingPackWriter.create(kind, (id) => this.published.stagedPackFile(kind, id), 3, (id, temp) => this.uploads.stageHeld(kind, id, temp));
    }
    /** Let go of a streamingPack's staged pack: the last holder removes it unless a commit adopted it. */
    dropStagedPack(kind, packId) { return this.uploads.dropStagedPack(kind, packId); }
    // ------------------------------------------------------------ transactions and group commit (commit-queue.ts)
    transact(fn) { return this.commits.transact(fn); }
    barrier(fn) { return this.commits.barrier(fn); }
    /**
     * The current commit point and open read handles on the files it names (./capture.ts), taken
     * in one barrier: a copier reads them beside later commits, merges and compactions. The
     * caller closes the capture.
     */
    capture(wants = {}) {
        return this.commits.barrier(() => openCapture(this.layout, this.published.state, (kind) => this.published.committedPackIds(kind), wants));
    }
    // ------------------------------------------------------------ merges, compaction, rebuild (maintenance.ts)
    mergeSegments(name) { return this.maintenance.mergeSegments(name); }
    /** Wait for background merges, a compaction and a checkpoint being written (tests and bench). */
    async settle() {
        await this.maintenance.settle();
        while (this.checkpointing)
            await new Promise((r) => setTimeout(r, 5));
    }
    compactLog(name, bodies) { return this.maintenance.compactLog(name, bodies); }
    /** Drop all but the newest `keep` events from events.log (retention). Returns how many were dropped. */
    trimEvents(keep) { return this.maintenance.trimEvents(keep); }
    /**
     * From now on compact workflow.log in the background whenever it is due (now, and after
     * commits): Authority.open calls it; fsck and tools opening a store never compact.
     */
    compactWhenDue() {
        this.compactingWhenDue = true;
        this.maintenance.maybeCompactWorkflow();
    }
    /** Compact workflow.log now when it is due, and wait (tests, bench): the note, or null. */
    compactWorkflow() { return this.maintenance.compactWorkflow(); }
    /** Test hook: awaited before a workflow.log compaction's snapshot and before its tail copy (commits go on meanwhile). */
    set compactionPause(hook) { this.maintenance.compactionPause = hook; }
    /**
     * Keep every file as it is (a retiring repository's files stay as exported): no compaction
     * rewrites a log from now on. Resolves once a compaction already running has finished or
     * stopped; a commit point written after it never names a compacted log.
     */
    freezeFiles() { return this.maintenance.freezeFiles(); }
    /** Compactions may rewrite the logs again (a retirement was aborted). */
    thawFiles() {
        this.maintenance.thawFiles();
        if (this.compactingWhenDue)
            this.maintenance.maybeCompactWorkflow();
    }
    get filesFrozen() { return this.maintenance.filesFrozen; }
    /** Upserts of workflow.log holding a field that is sealed (storage-layout.md §17.2) in clear: written before sealing existed. */
    get fieldsInClear() { return this.published.workflowInClear; }
    /**
     * Seal what a server from before sealing left in clear in workflow.log (webhook secrets,
     * drafts: storage-layout.md §17.2) by rewriting the log, every record kept
     * (StoreMaintenance.resealWorkflow); also when the files are frozen. Resolves with a note
     * saying how much was sealed, or null when nothing was in clear. Throws without a seal key
     * when something is, and when the rewrite fails (the old log stays current).
     */
    async sealInClear() {
        if (this.published.workflowInClear === 0)
            return null;
        const key = this.published.sealKey;
        if (!key)
            throw new Error(`workflow.log holds ${this.published.workflowInClear} webhook or draft records in clear, and the store was opened without the seal key`);
        const sealed = await this.maintenance.resealWorkflow(key);
        if (!sealed)
            return null;
        // The checkpoint covers the replaced log generation: write one of the new file.
        this.maybeCheckpoint();
        return `workflow.log rewritten to seal ${sealed} webhook and draft records a server from before sealing wrote in clear (every record kept)`;
    }
    rebuildLocators() { return this.maintenance.rebuildLocators(); }
}
//# sourceMappingURL=content-store.js.map