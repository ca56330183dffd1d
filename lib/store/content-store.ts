// The store of one authority (storage-layout.md §6–§17): packs, segmented locator and snapshot
// indexes, the logs (snapshots, jobs, plans, workflow) and lines, all published by one commit
// point, commit.bin, which names the committed length of every log and the segment files of
// every index. Nothing a commit writes is visible before the commit point is durable, and
// recovery at open cuts or removes whatever a crashed commit left beyond it.
//
// ContentStore is the one entry the rest of the service imports; it owns the store's lifetime
// (open, close) and delegates the work, one concern per module:
//   recovery.ts      opening after a restart: format upgrade, cutting and removing what no commit names
//   published.ts     the read side: what the current commit point names, open for reading
//   commit-queue.ts  transactions, group commit, the write order up to the commit point, barriers
//   txn.ts           a transaction's view and staging area
//   pack-uploads.ts  uploads of packs into staging/ and their expiry
//   maintenance.ts   segment merges, log compaction, locator rebuild
import type { Readable } from 'node:stream';
import type { TreeEntry } from '../domain/content.js';
import { MAX_SEGMENTS, type CommitPointFile, type CommitState } from './commit-point.js';
import { CommitQueue, type CommitHooks } from './commit-queue.js';
import type { LineRecord } from './content-files.js';
import type { EventIndex, EventRecord } from './event-log.js';
import type { LogRecord } from './framed-log.js';
import { INDEX_NAMES, type AuthorityLayout, type IndexName, type LogName } from './layout.js';
import { StoreMaintenance } from './maintenance.js';
import { StreamingPackWriter } from './pack-writer.js';
import { PackUploads, STAGED_PACK_TTL_S, type PackInfo } from './pack-uploads.js';
import type { PackHeader, PackKind } from './pack.js';
import type { PublishedStore, StoredSnapshot } from './published.js';
import { recoverStore, type OpenOptions } from './recovery.js';
import { crashPoint } from './crash-point.js';
import type { CheckpointCover } from './workflow-checkpoint.js';
import type { WorkflowRecords } from './workflow-records.js';
import { writeFileDurableWith } from './durable.js';
import { TreeSizes } from './tree-sizes.js';
import { openCapture, type Capture, type CaptureWants } from './capture.js';
import { DEFAULT_MAX_SNAPSHOT_PATHS, overLimit, Pace, pathsOf, WalkBudget, walkOverLimit } from '../domain/tree-size.js';

/** Workflow.log records between background checkpoints (an open replays at most about this many). */
export const DEFAULT_CHECKPOINT_EVERY = 50_000;
import type { Locator, ObjectKind, OpaqueLog } from './staging.js';
import type { Txn } from './txn.js';

export type { Locator, ObjectKind } from './staging.js';
export type { StoredSnapshot } from './published.js';
export type { PackInfo } from './pack-uploads.js';
export type { OpenOptions } from './recovery.js';
export { packKindOf } from './published.js';
export { STAGED_PACK_TTL_S } from './pack-uploads.js';
export { MERGE_SEGMENTS_AT } from './maintenance.js';
export { Txn } from './txn.js';
export type { Capture, CapturedFile, CaptureWants } from './capture.js';

export class ContentStore {
  readonly layout: AuthorityLayout;
  /** Called with a problem text when a background merge, compaction or checkpoint fails (the authority logs it). */
  onBackgroundError: (problem: string) => void = () => {};
  /** Called with a note when a background compaction of workflow.log made its new file current. */
  onCompacted: (note: string) => void = () => {};
  private readonly commits: CommitQueue;
  private readonly maintenance: StoreMaintenance;
  private readonly uploads: PackUploads;
  private filesClosed = false;
  private markFilesClosed!: () => void;
  private readonly filesClosedPromise = new Promise<void>((resolve) => { this.markFilesClosed = resolve; });
  private checkpointing = false;
  /** Set once the owners of checkpoint sections have opened (before, a checkpoint would lack their sections). */
  private ownersOpen = false;
  private readonly checkpointEnabled: boolean;
  private readonly checkpointEvery: number;
  /** Compact workflow.log in the background whenever it is due (compactWhenDue). */
  private compactingWhenDue = false;

  private constructor(readonly root: string, private readonly published: PublishedStore, private readonly point: CommitPointFile, options: OpenOptions) {
    this.layout = published.layout;
    published.setSealKey(options.sealKey ?? null);
    published.sizes = new TreeSizes(options.maxSnapshotPaths ?? DEFAULT_MAX_SNAPSHOT_PATHS);
    this.checkpointEnabled = options.checkpoint !== false;
    this.checkpointEvery = options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY;
    this.commits = new CommitQueue(published, point, () => {
      if (this.commits.closed) this.closeFilesWhenIdle();
      this.maintenance.maybeMerge();
      if (this.compactingWhenDue) this.maintenance.maybeCompactWorkflow();
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
  static async open(root: string, options: OpenOptions = {}): Promise<{ store: ContentStore; notes: string[] }> {
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
  close(): void {
    if (this.commits.closed) return;
    this.commits.close();
    this.closeFilesWhenIdle();
  }

  private closeFilesWhenIdle(): void {
    if (this.filesClosed || this.commits.draining || this.maintenance.busy || this.checkpointing) return;
    this.filesClosed = true;
    // A clean close leaves a checkpoint of everything committed, so the next open replays nothing.
    if (this.checkpointEnabled && this.ownersOpen && !this.commits.failed && this.checkpointBehind() > 0) {
      try {
        this.published.writeCheckpointSync(this.published.encodeCheckpoint().bytes);
      } catch (err) {
        this.onBackgroundError(`writing workflow.ckpt at close failed: ${(err as Error).message}`);
      }
    }
    this.published.close();
    this.point.close();
    this.markFilesClosed();
  }

  /** Resolves once close() has closed the files (after the batch being written and any background work). */
  whenClosed(): Promise<void> {
    return this.filesClosedPromise;
  }

  // ------------------------------------------------------------ the workflow checkpoint (workflow-checkpoint.ts)

  /** workflow.log records after what the newest checkpoint covers (all of them when it is of another log file). */
  private checkpointBehind(): number {
    const c = this.published.checkpointCover;
    if (!c || c.log_file !== this.published.state.log_files.workflow) return this.published.workflowRecords;
    return this.published.workflowRecords - c.records;
  }

  /**
   * Write workflow.ckpt in the background when it is missing, of another log file, or
   * `checkpointEvery` records behind. The state is encoded in a barrier (nothing commits while
   * it is copied), the file written after it while commits go on.
   */
  maybeCheckpoint(): void {
    if (!this.checkpointEnabled || !this.ownersOpen || this.checkpointing || this.commits.closed || this.commits.failed) return;
    const behind = this.checkpointBehind();
    const stale = !this.published.checkpointCover || this.published.checkpointCover.log_file !== this.published.state.log_files.workflow;
    if (!(behind >= this.checkpointEvery || (stale && this.published.workflowRecords > 0))) return;
    this.checkpointing = true;
    this.writeCheckpoint().then(() => true, (err) => {
      this.onBackgroundError(`writing workflow.ckpt failed: ${(err as Error).message}`);
      return false;
    }).then((written) => {
      this.checkpointing = false;
      if (this.commits.closed) this.closeFilesWhenIdle();
      // A compaction may have replaced the log while this one was written: check again.
      else if (written) this.maybeCheckpoint();
    });
  }

  /** Encode the current state in a barrier and write workflow.ckpt durably (tests call it directly). */
  async writeCheckpoint(): Promise<void> {
    const { bytes, cover } = await this.commits.barrier(() => this.published.encodeCheckpoint());
    crashPoint('checkpoint:before-write');
    await writeFileDurableWith(this.layout.workflowCheckpoint, async (handle) => {
      await handle.write(bytes, 0, bytes.length >> 1, 0);
      crashPoint('checkpoint:mid-write');
      await handle.write(bytes, bytes.length >> 1, bytes.length - (bytes.length >> 1), bytes.length >> 1);
    });
    crashPoint('checkpoint:after-write');
    const prev = this.published.checkpointCover;
    if (!prev || prev.log_file !== cover.log_file || prev.records <= cover.records) this.published.checkpointCover = cover;
  }

  /** Closed, or failed (a commit-point write failed): no transaction is taken. */
  get isClosed(): boolean { return this.commits.closed || this.commits.failed !== null; }
  /** An owner's section of every checkpoint from now on (lib/store/workflow-checkpoint.ts); `encode` answers null to leave it out of one. */
  registerCheckpointSection(name: string, encode: () => Buffer | null): void { this.published.registerCheckpointSection(name, encode); }
  /** The owner's section of the checkpoint this open started from; undefined: rebuild from the records. */
  takeCheckpointSection(name: string): Buffer | undefined { return this.published.takeCheckpointSection(name); }
  /** An owner rebuilt its indexes (its section was missing or unusable): write a whole checkpoint soon. */
  checkpointIncomplete(): void { this.published.checkpointCover = null; }
  /** Ids of `type` upserted in workflow.log after the checkpoint this open started from. */
  tailEntities(type: string): string[] { return this.published.tailEntities(type); }
  /**
   * Every owner of a checkpoint section has opened (Authority.open): drop what the open's
   * checkpoint left, and from now on write checkpoints (in the background and at close).
   */
  ownersOpened(): void {
    this.published.releaseCheckpoint();
    this.ownersOpen = true;
  }
  /** The checkpoint as of `cover`, rebuilt from workflow.log (fsck). */
  rebuildCheckpoint(cover: CheckpointCover, sections: (records: WorkflowRecords) => Map<string, Buffer>): Promise<Buffer> { return this.published.rebuildCheckpoint(cover, sections); }
  /** Live entities of a workflow type (without reading them). */
  entityCount(type: string): number { return this.published.records.count(type); }
  /** The highest sequence of a sequenced workflow type's committed ids (workflow-records.ts highestSequence; 0: none). */
  highestSequence(type: string): number { return this.published.records.highestSequence(type); }

  // ------------------------------------------------------------ paths (published.ts)
  packDir(kind: PackKind): string { return this.published.packDir(kind); }
  stagingDir(kind: PackKind): string { return this.published.stagingDir(kind); }
  packFile(kind: PackKind, id: string): string { return this.published.packFile(kind, id); }
  stagedPackFile(kind: PackKind, id: string): string { return this.published.stagedPackFile(kind, id); }

  // ------------------------------------------------------------ published reads (published.ts)
  get generation(): number { return this.published.generation; }
  get snapshotCount(): number { return this.published.snapshotCount; }
  /** The committed state (for fsck and tests). */
  get commitState(): CommitState { return structuredClone(this.published.state); }
  locator(kind: ObjectKind, id: string): Locator | null { return this.published.locator(kind, id); }
  has(kind: ObjectKind, id: string): boolean { return this.published.has(kind, id); }
  locators(kind: ObjectKind): Generator<Locator> { return this.published.locators(kind); }
  readObject(kind: ObjectKind, id: string): Promise<Buffer> { return this.published.readObject(kind, id); }
  readLocated(loc: Locator): Promise<Buffer> { return this.published.readLocated(loc); }
  readTree(id: string): Promise<TreeEntry[]> { return this.published.readTree(id); }
  /** Paths a snapshot may hold (lib/domain/tree-size.ts). */
  get maxSnapshotPaths(): number { return this.published.sizes.maxSnapshotPaths; }
  /**
   * A committed tree's expanded size: recorded in its index entry, or computed once over its
   * distinct subtrees (a tree indexed before sizes were recorded) and kept (tree-sizes.ts).
   */
  expandedSize(treeId: string, pace?: Pace): Promise<number> {
    return this.published.sizes.size(treeId, (id) => this.published.recordedSize(id), (id) => this.published.readTree(id), pace);
  }
  /** A tree's expanded size when recorded or computed before; undefined otherwise (never reads). */
  knownSize(treeId: string): number | undefined {
    return this.published.sizes.known(treeId, this.published.recordedSize(treeId));
  }
  /** Keep a size computed elsewhere (a merge's new trees): sizes depend on the tree id alone. */
  rememberSize(treeId: string, size: number): void {
    this.published.sizes.remember(treeId, size);
  }
  /** An upper bound on a committed tree's depth without reading it (tree-sizes.ts depthBound). */
  depthBound(treeId: string): number | undefined {
    return this.published.sizes.depthBound(treeId, this.published.recordedSize(treeId));
  }
  /** Keep a bound a depth check computed: a tree's depth depends on its id alone. */
  rememberDepth(treeId: string, depth: number): void {
    this.published.sizes.rememberDepth(treeId, depth);
  }
  /**
   * Refuse (400, an Invalid naming `what`) to expand a stored tree that holds more paths than a
   * snapshot may: a store written before the limit may hold one. A lookup when recorded.
   */
  async requireExpandable(treeId: string, what: string): Promise<void> {
    const paths = pathsOf(await this.expandedSize(treeId));
    if (paths > this.maxSnapshotPaths) throw overLimit(what, paths, this.maxSnapshotPaths);
  }
  /** The budget of one walk that expands trees checked by requireExpandable: `factor` × the limit, then 400. */
  walkBudget(what: string, factor = 1): WalkBudget {
    return new WalkBudget(this.maxSnapshotPaths * factor, walkOverLimit(what));
  }
  hasSnapshot(id: string): boolean { return this.published.hasSnapshot(id); }
  snapshot(id: string): StoredSnapshot | null { return this.published.snapshot(id); }
  snapshotIds(): Generator<string> { return this.published.snapshotIds(); }
  lines(): readonly LineRecord[] { return this.published.lines(); }
  line(name: string): LineRecord | undefined { return this.published.line(name); }
  entity<T>(type: string, id: string): T | undefined { return this.published.entity<T>(type, id); }
  entitiesOf<T>(type: string): Generator<[string, T]> { return this.published.entitiesOf<T>(type); }
  scanEntity<T>(type: string, id: string): T | undefined { return this.published.scanEntity<T>(type, id); }
  entityIds(type: string): Generator<string> { return this.published.entityIds(type); }
  logRecords(name: LogName): Generator<LogRecord> { return this.published.logRecords(name); }
  /** events.log by sequence (storage-layout.md §18). */
  get events(): EventIndex { return this.published.events; }
  /** Call `fn` with each published commit's events, after what they describe is readable. */
  onEvents(fn: (events: readonly EventRecord[]) => void): () => void { return this.published.onEvents(fn); }
  onUpsert(type: string, fn: (id: string, body: unknown) => void): () => void { return this.published.onUpsert(type, fn); }
  isCommittedPack(kind: PackKind, id: string): boolean { return this.published.isCommittedPack(kind, id); }
  committedPackIds(kind: PackKind): string[] { return this.published.committedPackIds(kind); }
  isStagedPack(kind: PackKind, id: string): Promise<boolean> { return this.published.isStagedPack(kind, id); }
  packFiles(kind: PackKind): Promise<string[]> { return this.published.packFiles(kind); }
  segmentCounts(): Record<IndexName, number> { return this.published.segmentCounts(); }
  verifyIndexes(): void { this.published.verifyIndexes(); }
  packHeader(kind: PackKind, id: string): Promise<{ header: PackHeader; byteLength: number; committed: boolean }> { return this.published.packHeader(kind, id); }
  openPack(kind: PackKind, id: string): Promise<{ stream: Readable; length: number }> { return this.published.openPack(kind, id); }

  // ------------------------------------------------------------ uploads, outside commits (pack-uploads.ts)
  stagePack(kind: PackKind, packId: string, body: AsyncIterable<Buffer> | Iterable<Buffer>, limit: number): Promise<{ info: PackInfo; state: 'committed' | 'staged' | 'new' }> {
    return this.uploads.stagePack(kind, packId, body, limit);
  }
  expireStagedPacks(ttlSeconds = STAGED_PACK_TTL_S, now = Date.now()): Promise<string[]> { return this.uploads.expireStagedPacks(ttlSeconds, now); }
  /**
   * A pack whose objects stream in (a push's blobs), staged when finished (./pack-writer.ts) and
   * held there until dropStagedPack lets go of it.
   */
  streamingPack(kind: PackKind): Promise<StreamingPackWriter> {
    return StreamingPackWriter.create(kind, (id) => this.published.stagedPackFile(kind, id), 3, (id, temp) => this.uploads.stageHeld(kind, id, temp));
  }
  /** Let go of a streamingPack's staged pack: the last holder removes it unless a commit adopted it. */
  dropStagedPack(kind: PackKind, packId: string): Promise<void> { return this.uploads.dropStagedPack(kind, packId); }

  // ------------------------------------------------------------ transactions and group commit (commit-queue.ts)
  transact<T>(fn: (tx: Txn) => Promise<T> | T): Promise<T> { return this.commits.transact(fn); }
  /** Hear of each durable commit point, and hold answers until a commit is archived (commit-queue.ts CommitHooks). */
  setCommitHooks(hooks: CommitHooks): void { this.commits.hooks = hooks; }
  /**
   * The id floors of this repository (serve --lease, lib/authority/writer-lease.ts): per id space
   * (`task`, `change`, `plan`, `job`, `land`, `land_queue_entry`, `promotion`), the highest
   * sequence another writer may have handed out; a new id's sequence is above it. Empty: none.
   */
  idFloors: Readonly<Record<string, number>> = {};
  idFloor(space: string): number { return this.idFloors[space] ?? 0; }
  barrier<T>(fn: () => Promise<T> | T): Promise<T> { return this.commits.barrier(fn); }

  /**
   * The current commit point and open read handles on the files it names (./capture.ts), taken
   * in one barrier: a copier reads them beside later commits, merges and compactions. The
   * caller closes the capture.
   */
  capture(wants: CaptureWants = {}): Promise<Capture> {
    return this.commits.barrier(() => openCapture(this.layout, this.published.state, (kind) => this.published.committedPackIds(kind), wants));
  }

  // ------------------------------------------------------------ merges, compaction, rebuild (maintenance.ts)
  mergeSegments(name: IndexName): Promise<void> { return this.maintenance.mergeSegments(name); }
  /** Wait for background merges, a compaction and a checkpoint being written (tests and bench). */
  async settle(): Promise<void> {
    await this.maintenance.settle();
    while (this.checkpointing) await new Promise((r) => setTimeout(r, 5));
  }
  compactLog(name: OpaqueLog, bodies: Buffer[]): Promise<void> { return this.maintenance.compactLog(name, bodies); }
  /** Drop all but the newest `keep` events from events.log (retention). Returns how many were dropped. */
  trimEvents(keep: number): Promise<number> { return this.maintenance.trimEvents(keep); }
  /**
   * From now on compact workflow.log in the background whenever it is due (now, and after
   * commits): Authority.open calls it; fsck and tools opening a store never compact.
   */
  compactWhenDue(): void {
    this.compactingWhenDue = true;
    this.maintenance.maybeCompactWorkflow();
  }
  /** Compact workflow.log now when it is due, and wait (tests, bench): the note, or null. */
  compactWorkflow(): Promise<string | null> { return this.maintenance.compactWorkflow(); }
  /** Test hook: awaited before a workflow.log compaction's snapshot and before its tail copy (commits go on meanwhile). */
  set compactionPause(hook: ((before: 'snapshot' | 'tail') => Promise<void>) | null) { this.maintenance.compactionPause = hook; }
  /**
   * Keep every file as it is (a retiring repository's files stay as exported): no compaction
   * rewrites a log from now on. Resolves once a compaction already running has finished or
   * stopped; a commit point written after it never names a compacted log.
   */
  freezeFiles(): Promise<void> { return this.maintenance.freezeFiles(); }
  /** Compactions may rewrite the logs again (a retirement was aborted). */
  thawFiles(): void {
    this.maintenance.thawFiles();
    if (this.compactingWhenDue) this.maintenance.maybeCompactWorkflow();
  }
  get filesFrozen(): boolean { return this.maintenance.filesFrozen; }

  /** Upserts of workflow.log holding a field that is sealed (storage-layout.md §17.2) in clear: written before sealing existed. */
  get fieldsInClear(): number { return this.published.workflowInClear; }

  /**
   * Seal what a server from before sealing left in clear in workflow.log (webhook secrets,
   * drafts: storage-layout.md §17.2) by rewriting the log, every record kept
   * (StoreMaintenance.resealWorkflow); also when the files are frozen. Resolves with a note
   * saying how much was sealed, or null when nothing was in clear. Throws without a seal key
   * when something is, and when the rewrite fails (the old log stays current).
   */
  async sealInClear(): Promise<string | null> {
    if (this.published.workflowInClear === 0) return null;
    const key = this.published.sealKey;
    if (!key) throw new Error(`workflow.log holds ${this.published.workflowInClear} webhook or draft records in clear, and the store was opened without the seal key`);
    const sealed = await this.maintenance.resealWorkflow(key);
    if (!sealed) return null;
    // The checkpoint covers the replaced log generation: write one of the new file.
    this.maybeCheckpoint();
    return `workflow.log rewritten to seal ${sealed} webhook and draft records a server from before sealing wrote in clear (every record kept)`;
  }
  rebuildLocators(): Promise<{ blobs: number; trees: number; skipped: string[] }> { return this.maintenance.rebuildLocators(); }
}
