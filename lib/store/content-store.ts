// The store of one authority (storage-layout.md §6–§17): packs, segmented locator and snapshot
// indexes, the logs (snapshots, jobs, plans, workflow) and lines, all published by one commit
// point, commit.bin, which names the committed length of every log and the segment files of
// every index. Nothing a commit writes is visible before the commit point is durable, and
// recovery at open cuts or removes whatever a crashed commit left beyond it.
//
// Mutations are transactions run by one group-commit queue per authority: transactions run one
// at a time against the published state plus what earlier transactions of the same batch
// staged; the batch is then written with one sync per touched file and one commit-point write,
// and only then is each caller answered. A transaction that throws stages nothing; a batch whose
// write fails fails exactly its callers, and nothing of it becomes visible.
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { decodeSnapshot, decodeTree, type SnapshotRecord, type TreeEntry } from '../domain/content.js';
import { Conflict, Corrupt, Invalid, NotFound, TooLarge } from '../domain/errors.js';
import { crc32 } from './binary.js';
import { CommitPointFile, COMMIT_FILE_SIZE, emptyCommitState, encodeCommitRecord, MAX_SEGMENTS, SLOT_SIZE, type CommitState } from './commit-point.js';
import { crashPoint } from './crash-point.js';
import { decodeLines, decodeState, type LineRecord } from './content-files.js';
import { ChunkWriter, exists, fsyncDir, mkdirDurable, removeDurable, renameDurable, tempPathFor, writeFileDurable } from './durable.js';
import { FRAME_OVERHEAD, LOG_HEADER_SIZE, LogFile, legacyValidLength, type LogRecord } from './framed-log.js';
import {
  INDEX_KIND_BLOB,
  INDEX_KIND_SNAPSHOT,
  INDEX_KIND_TREE,
  IndexReader,
  SegmentedIndex,
  writeMergedSegments,
  writeSegment,
  type IndexKind,
  type SegmentEntry,
} from './index-file.js';
import { AuthorityLayout, INDEX_NAMES, INDEX_SEGMENT_NAME, LINES_FILE_NAME, LOG_FILE_NAME, LOG_MAGIC, LOG_NAMES, type IndexName, type LogName, type PackDirName } from './layout.js';
import { decodeObjectFrame, decodePackHeader, packHeaderPayloadSize, PackVerifier, PACK_KIND_OBJECT, PACK_KIND_TREE, type PackEntry, type PackHeader, type PackKind } from './pack.js';
import { Staging, type Locator, type ObjectKind, type OpaqueLog, type StagedSnapshot, type Upsert } from './staging.js';

export type { Locator, ObjectKind } from './staging.js';

export interface StoredSnapshot extends SnapshotRecord {
  /** Ordinal of the record in snapshots.log: the snapshot's physical index in this authority. */
  snapshot_index: number;
}

export interface PackInfo {
  pack_id: string;
  kind: PackKind;
  byte_length: number;
  object_count: number;
}

/** Staged packs not committed within this many seconds are removed (git's default prune age). */
export const STAGED_PACK_TTL_S = 14 * 24 * 3600;
/** A background merge starts when an index has more segments than this. */
export const MERGE_SEGMENTS_AT = 8;
/** At most this many transactions share one commit. */
const MAX_BATCH = 256;

const PACK_DIR: Record<PackKind, PackDirName> = { [PACK_KIND_OBJECT]: 'objects', [PACK_KIND_TREE]: 'trees' };
const INDEX_KIND: Record<IndexName, IndexKind> = { blobs: INDEX_KIND_BLOB, trees: INDEX_KIND_TREE, snapshots: INDEX_KIND_SNAPSHOT };
const OBJECT_INDEX: Record<ObjectKind, IndexName> = { blob: 'blobs', tree: 'trees' };

interface QueuedOp {
  fn: (tx: Txn) => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  /** Runs alone, after every earlier transaction is durable (purge, expiry, segment swaps). */
  barrier: boolean;
}

export interface OpenOptions {
  rebuildingLocators?: boolean;
}

/** Upserts per record when workflow.log is compacted. */
const COMPACT_UPSERTS_PER_RECORD = 1024;

export class ContentStore {
  readonly layout: AuthorityLayout;
  private state: CommitState = emptyCommitState();
  private point!: CommitPointFile;
  private readonly logs = {} as Record<LogName, LogFile>;
  private readonly indexes = {} as Record<IndexName, SegmentedIndex>;
  private readonly readers = new Map<string, IndexReader>();
  private lineMap = new Map<string, LineRecord>();
  /** lineMap's values in name order, built on first read after a change (GET lines is hot). */
  private sortedLines: readonly LineRecord[] | null = null;
  private readonly entities = new Map<string, Map<string, unknown>>();
  private readonly committedPacks: Record<PackKind, Set<string>> = { [PACK_KIND_OBJECT]: new Set(), [PACK_KIND_TREE]: new Set() };
  private readonly queue: QueuedOp[] = [];
  private draining = false;
  private failed: Error | null = null;
  private closed = false;
  private merging = false;
  /** Records replayed from workflow.log at open (compaction decides from it). */
  private workflowRecords = 0;
  /** Called with a problem text when a background merge fails (the authority logs it). */
  onBackgroundError: (problem: string) => void = () => {};

  private constructor(readonly root: string) {
    this.layout = new AuthorityLayout(root);
  }

  // ------------------------------------------------------------ paths (layout.ts names them)
  packDir(kind: PackKind): string { return this.layout.packDir(PACK_DIR[kind]); }
  stagingDir(kind: PackKind): string { return this.layout.stagingDir(PACK_DIR[kind]); }
  packFile(kind: PackKind, id: string): string { return this.layout.packFile(PACK_DIR[kind], id); }
  stagedPackFile(kind: PackKind, id: string): string { return this.layout.stagedPackFile(PACK_DIR[kind], id); }

  /**
   * Open after a restart (recovery, storage-layout.md §9): read commit.bin (upgrading a format-v0
   * authority once), cut every log to its committed length, open the named index segments,
   * remove segment and lines files no commit names, move packs that no segment references back
   * to staging, and replay workflow.log. Returns notes about what was repaired or upgraded.
   */
  static async open(root: string, options: OpenOptions = {}): Promise<{ store: ContentStore; notes: string[] }> {
    const store = new ContentStore(root);
    const notes: string[] = [];
    const L = store.layout;
    for (const kind of [PACK_KIND_OBJECT, PACK_KIND_TREE] as PackKind[]) {
      await mkdirDurable(store.packDir(kind));
      await mkdirDurable(store.stagingDir(kind));
    }
    await mkdirDurable(L.indexDir);
    if (!(await exists(L.commitFile))) await store.upgradeFromV0(notes);
    else if (await exists(L.legacyStateFile)) {
      // An upgrade that stopped after writing commit.bin: state.bin is no longer read.
      await removeDurable(L.legacyStateFile);
      notes.push('removed state.bin left by an interrupted format upgrade');
    }
    const { point, state } = CommitPointFile.open(L.commitFile, false);
    store.point = point;
    try {
      if (state) store.state = state;
      for (const name of LOG_NAMES) store.logs[name] = LogFile.open(L.logFile(name, store.state.log_files[name]), LOG_MAGIC[name], store.state.logs[name], notes);
      for (const name of INDEX_NAMES) {
        const segs: { segment: number; reader: IndexReader }[] = [];
        for (const segment of store.state.segments[name]) {
          const file = L.indexSegment(name, segment);
          let reader: IndexReader;
          try {
            reader = IndexReader.open(file, INDEX_KIND[name]);
          } catch (err) {
            if (!(options.rebuildingLocators && name !== 'snapshots')) throw relabel(err, root);
            notes.push(`index/${name}.${segment}.idx unusable (${(err as Error).message.replace(root + '/', '')}); rebuilding`);
            continue;
          }
          store.readers.set(file, reader);
          segs.push({ segment, reader });
        }
        store.indexes[name] = new SegmentedIndex(INDEX_KIND[name], segs);
      }
      if (store.indexes.snapshots.count !== store.state.snapshot_count) throw new Corrupt(`snapshot index holds ${store.indexes.snapshots.count} entries, commit.bin says ${store.state.snapshot_count}`);
      if (store.state.lines_gen) {
        for (const line of decodeLines(await fsp.readFile(L.linesFile(store.state.lines_gen)), `lines.${store.state.lines_gen}.bin`)) store.lineMap.set(line.name, line);
        store.sortedLines = null;
      }
      let workflowRecords = 0;
      for (const rec of store.logs.workflow.records()) {
        store.replayWorkflow(rec);
        workflowRecords++;
      }
      store.workflowRecords = workflowRecords;
      await store.removeUnnamedFiles(notes);
      for (const kind of [PACK_KIND_OBJECT, PACK_KIND_TREE] as PackKind[]) {
        const index = store.indexes[kind === PACK_KIND_OBJECT ? 'blobs' : 'trees'];
        const referenced = options.rebuildingLocators ? new Set(await store.packFiles(kind)) : index.packIds();
        for (const name of await fsp.readdir(store.packDir(kind))) {
          const id = name.replace(/\.pack$/, '');
          if (referenced.has(id)) continue;
          notes.push(`pack ${PACK_DIR[kind]}/${name} was not committed; moved back to staging`);
          await renameDurable(path.join(store.packDir(kind), name), path.join(store.stagingDir(kind), name));
        }
        for (const id of referenced) {
          if (!(await exists(store.packFile(kind, id)))) throw new Corrupt(`committed pack ${PACK_DIR[kind]}/${id}.pack is missing`);
          store.committedPacks[kind].add(id);
        }
      }
    } catch (err) {
      store.close();
      throw err;
    }
    return { store, notes };
  }

  /**
   * Format v0 kept `state.bin` (rewritten per commit) and no committed length for jobs.log and
   * plans.log. Build commit.bin from it once: the same generations and snapshot length, the
   * other logs' intact length under v0's rule; then remove state.bin.
   */
  private async upgradeFromV0(notes: string[]): Promise<void> {
    const L = this.layout;
    const s = emptyCommitState();
    let legacy = false;
    try {
      const v0 = decodeState(await fsp.readFile(L.legacyStateFile));
      legacy = true;
      s.generation = v0.generation;
      s.logs.snapshots = v0.snapshot_log_length;
      s.snapshot_count = v0.snapshot_count;
      s.lines_gen = v0.lines_gen;
      if (v0.blobs_idx_gen) s.segments.blobs = [v0.blobs_idx_gen];
      if (v0.trees_idx_gen) s.segments.trees = [v0.trees_idx_gen];
      if (v0.snapshots_idx_gen) s.segments.snapshots = [v0.snapshots_idx_gen];
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    for (const name of ['jobs', 'plans'] as const) {
      const file = L.logFile(name);
      if (!(await exists(file))) continue;
      legacy = true;
      const fd = openSync(file, 'r');
      try {
        const { length, note } = legacyValidLength(fd, LOG_MAGIC[name], `${name}.log`);
        s.logs[name] = length;
        if (note) notes.push(note);
      } finally {
        closeSync(fd);
      }
    }
    const file = Buffer.alloc(COMMIT_FILE_SIZE);
    if (legacy) {
      s.generation += 1;
      encodeCommitRecord(s).copy(file, (s.generation % 2) * SLOT_SIZE);
    }
    await writeFileDurable(L.commitFile, file);
    if (legacy) {
      await removeDurable(L.legacyStateFile);
      notes.push(`upgraded storage format v0 to v1 (commit.bin generation ${s.generation}, ${s.logs.jobs} bytes of jobs.log and ${s.logs.plans} of plans.log committed)`);
    }
  }

  private async removeUnnamedFiles(notes: string[]): Promise<void> {
    const L = this.layout;
    const keep = new Set<string>();
    for (const name of INDEX_NAMES) for (const seg of this.state.segments[name]) keep.add(`${name}.${seg}.idx`);
    let removed = false;
    for (const name of await fsp.readdir(L.indexDir)) {
      if (keep.has(name)) continue;
      await fsp.rm(path.join(L.indexDir, name), { force: true });
      removed = true;
      if (!INDEX_SEGMENT_NAME.test(name)) notes.push(`removed unexpected file index/${name}`);
    }
    if (removed) await fsyncDir(L.indexDir);
    for (const name of await fsp.readdir(this.root)) {
      const m = LINES_FILE_NAME.exec(name);
      const log = LOG_FILE_NAME.exec(name);
      // A lines checkpoint, or a log file a compaction replaced or never committed.
      const stale = (m && Number(m[1]) !== this.state.lines_gen) || (log && Number(log[2] ?? 0) !== this.state.log_files[log[1] as LogName]);
      if (stale) {
        await fsp.rm(path.join(this.root, name), { force: true });
        await fsyncDir(this.root);
      }
    }
  }

  private replayWorkflow(rec: LogRecord): void {
    let txn: { at_s: number; upserts: Upsert[] };
    try {
      txn = JSON.parse(rec.body.toString('utf8'));
      if (!txn || !Array.isArray(txn.upserts)) throw new Error('no upserts');
    } catch (err) {
      throw new Corrupt(`workflow.log: record at byte ${rec.offset} is not a transaction (${(err as Error).message})`);
    }
    for (const u of txn.upserts) this.applyUpsert(u, rec.offset);
  }

  private applyUpsert(u: Upsert, offset: number): void {
    if (typeof u?.type !== 'string' || typeof u.id !== 'string') throw new Corrupt(`workflow.log: record at byte ${offset} has an upsert without type and id`);
    if (u.type === 'line') {
      const b = u.body as Omit<LineRecord, 'name'>;
      this.lineMap.set(u.id, { name: u.id, status: b.status, head_snapshot_id: b.head_snapshot_id, updated_at_s: b.updated_at_s });
      this.sortedLines = null;
      return;
    }
    let m = this.entities.get(u.type);
    if (!m) this.entities.set(u.type, (m = new Map()));
    m.set(u.id, u.body);
  }

  /**
   * Close the store. Transactions still queued are refused; a batch being written or a
   * background merge finishes first, and the files are closed when it does (never under it).
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.draining && !this.merging) this.closeFiles();
  }

  private filesClosed = false;

  private closeFiles(): void {
    if (this.filesClosed) return;
    this.filesClosed = true;
    for (const fd of this.packFds.values()) closeSync(fd);
    this.packFds.clear();
    for (const r of this.readers.values()) r.close();
    this.readers.clear();
    for (const name of LOG_NAMES) this.logs[name]?.close();
    this.point?.close();
  }

  // ------------------------------------------------------------ published reads

  get generation(): number { return this.state.generation; }
  get snapshotCount(): number { return this.state.snapshot_count; }
  /** The committed state (for fsck and tests). */
  get commitState(): CommitState { return structuredClone(this.state); }

  locator(kind: ObjectKind, id: string): Locator | null {
    const e = this.indexes[OBJECT_INDEX[kind]].lookup(id);
    return e ? toLocator(kind, e) : null;
  }

  has(kind: ObjectKind, id: string): boolean {
    return this.indexes[OBJECT_INDEX[kind]].has(id);
  }

  *locators(kind: ObjectKind): Generator<Locator> {
    for (const e of this.indexes[OBJECT_INDEX[kind]].entries()) yield toLocator(kind, e);
  }

  /** Read and verify one object through its locator. */
  async readObject(kind: ObjectKind, id: string): Promise<Buffer> {
    const loc = this.locator(kind, id);
    if (!loc) throw new NotFound(`${kind} ${id} is not present`);
    return this.readLocated(loc);
  }

  async readLocated(loc: Locator): Promise<Buffer> {
    const packKind = loc.kind === 'blob' ? PACK_KIND_OBJECT : PACK_KIND_TREE;
    // A transaction validating a commit reads new objects from their staged packs.
    const file = this.isCommittedPack(packKind, loc.pack_id) ? this.packFile(packKind, loc.pack_id) : this.stagedPackFile(packKind, loc.pack_id);
    const frame = Buffer.allocUnsafe(loc.length);
    const n = readSync(this.packFd(file), frame, 0, loc.length, loc.offset);
    const entry: PackEntry = { id: loc.id, offset: loc.offset, length: loc.length, raw_length: loc.raw_length, crc32: loc.crc32 };
    return decodeObjectFrame(entry, frame.subarray(0, n), loc.kind);
  }

  /**
   * Open pack files are cached (at most 64; the oldest is closed first): object reads are many
   * small positional reads, and pack files never change once written. A renamed pack keeps its
   * inode, so a cached descriptor stays valid.
   */
  private readonly packFds = new Map<string, number>();

  private packFd(file: string): number {
    let fd = this.packFds.get(file);
    if (fd !== undefined) {
      this.packFds.delete(file);
      this.packFds.set(file, fd);
      return fd;
    }
    fd = openSync(file, 'r');
    this.packFds.set(file, fd);
    if (this.packFds.size > 64) {
      const [oldest, oldFd] = this.packFds.entries().next().value as [string, number];
      this.packFds.delete(oldest);
      closeSync(oldFd);
    }
    return fd;
  }

  async readTree(id: string): Promise<TreeEntry[]> {
    const raw = await this.readObject('tree', id);
    try {
      return decodeTree(raw);
    } catch (err) {
      throw new Corrupt(`tree ${id} is stored but does not decode: ${(err as Error).message}`);
    }
  }

  hasSnapshot(id: string): boolean {
    return this.indexes.snapshots.has(id);
  }

  snapshot(id: string): StoredSnapshot | null {
    const e = this.indexes.snapshots.lookup(id);
    if (!e) return null;
    const canonical = this.logs.snapshots.read(e.c, e.d);
    if (crc32(canonical) !== e.b) throw new Corrupt(`snapshot ${id}: record CRC-32 mismatch in snapshots.log`);
    let record: SnapshotRecord;
    try {
      record = decodeSnapshot(canonical);
    } catch (err) {
      throw new Corrupt(`snapshot ${id}: record does not decode (${(err as Error).message})`);
    }
    if (record.snapshot_id !== id) throw new Corrupt(`snapshot ${id}: record hashes to ${record.snapshot_id}`);
    return { ...record, snapshot_index: e.a };
  }

  *snapshotIds(): Generator<string> {
    for (const e of this.indexes.snapshots.entries()) yield e.id;
  }

  /**
   * Every line in name order (UTF-8 byte order). The same frozen array is returned until a line
   * changes, so callers may cache what they derive from it by identity.
   */
  lines(): readonly LineRecord[] {
    this.sortedLines ??= Object.freeze(sortByName([...this.lineMap.values()]));
    return this.sortedLines;
  }

  line(name: string): LineRecord | undefined {
    return this.lineMap.get(name);
  }

  /** The latest body of a workflow entity (workflow.log upserts other than lines). */
  entity<T>(type: string, id: string): T | undefined {
    return this.entities.get(type)?.get(id) as T | undefined;
  }

  /** Every committed entity of a workflow type, in first-upsert order (owners build indexes at open). */
  *entitiesOf<T>(type: string): Generator<[string, T]> {
    const m = this.entities.get(type);
    if (m) for (const [id, body] of m) yield [id, body as T];
  }

  /** Every committed record of an opaque log (jobs, plans), for its owner's replay at open. */
  logRecords(name: OpaqueLog | 'snapshots' | 'workflow'): Generator<LogRecord> {
    return this.logs[name].records();
  }

  isCommittedPack(kind: PackKind, id: string): boolean {
    return this.committedPacks[kind].has(id);
  }

  committedPackIds(kind: PackKind): string[] {
    return [...this.committedPacks[kind]];
  }

  async isStagedPack(kind: PackKind, id: string): Promise<boolean> {
    return exists(this.stagedPackFile(kind, id));
  }

  /** Segment numbers of each index (fsck, bench). */
  segmentCounts(): Record<IndexName, number> {
    return { blobs: this.indexes.blobs.segments.length, trees: this.indexes.trees.segments.length, snapshots: this.indexes.snapshots.segments.length };
  }

  /** Header of a committed or staged pack, read from the file. */
  async packHeader(kind: PackKind, id: string): Promise<{ header: PackHeader; byteLength: number; committed: boolean }> {
    const committed = this.isCommittedPack(kind, id);
    const file = committed ? this.packFile(kind, id) : this.stagedPackFile(kind, id);
    try {
      return { ...(await this.packHeaderFile(file, kind)), committed };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFound(`${kind === PACK_KIND_OBJECT ? 'object' : 'tree'} pack ${id} is not present`);
      if (err instanceof Invalid) throw new Corrupt(`pack ${id}: ${err.message}`);
      throw err;
    }
  }

  /** A committed or staged pack's bytes as a stream, with its length (staged: issue 11, resumable pushes). */
  async openPack(kind: PackKind, id: string): Promise<{ stream: Readable; length: number }> {
    const notFound = () => new NotFound(`${kind === PACK_KIND_OBJECT ? 'object' : 'tree'} pack ${id} is not present`);
    // A staged pack may be adopted (renamed into packs/) between the checks: look at both.
    for (const file of this.isCommittedPack(kind, id) ? [this.packFile(kind, id)] : [this.stagedPackFile(kind, id), this.packFile(kind, id)]) {
      let fd: fsp.FileHandle;
      try {
        fd = await fsp.open(file, 'r');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      const { size } = await fd.stat();
      return { stream: fd.createReadStream({ highWaterMark: 1024 * 1024 }), length: size };
    }
    throw notFound();
  }

  // ------------------------------------------------------------ uploads (outside commits)

  /**
   * Stream an uploaded pack to a temp file in staging/, hashing and verifying every byte on the
   * way (never held in memory), then rename it into staging/. Idempotent: the same bytes under
   * an id already committed or staged are accepted without a second copy; other bytes under an
   * id never pass the hash check. Not a transaction: staged packs are invisible until a commit.
   */
  async stagePack(kind: PackKind, packId: string, body: AsyncIterable<Buffer> | Iterable<Buffer>, limit: number): Promise<{ info: PackInfo; state: 'committed' | 'staged' | 'new' }> {
    const already = this.isCommittedPack(kind, packId) ? 'committed' : (await this.isStagedPack(kind, packId)) ? 'staged' : null;
    const verifier = already ? null : new PackVerifier(kind);
    const hash = already ? createHash('sha256') : null;
    const target = this.stagedPackFile(kind, packId);
    const temp = already ? null : tempPathFor(target);
    const handle = temp ? await fsp.open(temp, 'wx', 0o644) : null;
    const writer = handle ? new ChunkWriter(handle) : null;
    let received = 0;
    try {
      for await (const chunk of body) {
        received += chunk.length;
        if (received > limit) throw new TooLarge(`request body exceeds the route limit of ${limit} bytes`);
        if (verifier) {
          verifier.update(chunk);
          await writer!.write(chunk);
        } else {
          hash!.update(chunk);
        }
      }
      if (received === 0) throw new Invalid('empty pack upload');
      if (already) {
        const actual = hash!.digest('hex');
        if (actual !== packId) throw new Invalid(`uploaded bytes hash to ${actual}, not to the pack id in the path`);
        // A commit may have adopted the staged pack while these bytes streamed: look again.
        let state: 'committed' | 'staged' = this.isCommittedPack(kind, packId) ? 'committed' : 'staged';
        if (state === 'staged') {
          try {
            await fsp.utimes(target, new Date(), new Date());
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !this.isCommittedPack(kind, packId)) throw err;
            state = 'committed';
          }
        }
        const header = await this.packHeader(kind, packId);
        return { info: { pack_id: packId, kind, byte_length: header.byteLength, object_count: header.header.entries.length }, state };
      }
      const verified = verifier!.finish();
      if (verified.packId !== packId) throw new Invalid(`uploaded bytes hash to ${verified.packId}, not to the pack id in the path`);
      await writer!.end();
      await handle!.sync();
      await handle!.close();
      await renameDurable(temp!, target);
      return { info: { pack_id: packId, kind, byte_length: verified.byteLength, object_count: verified.header.entries.length }, state: 'new' };
    } catch (err) {
      await writer?.end().catch(() => {});
      if (handle) await handle.close().catch(() => {});
      if (temp) await fsp.rm(temp, { force: true });
      throw err;
    }
  }

  /** Remove staged packs older than `ttlSeconds`; runs alone in the commit queue, so never races a commit. */
  expireStagedPacks(ttlSeconds = STAGED_PACK_TTL_S, now = Date.now()): Promise<string[]> {
    return this.barrier(async () => {
      const removed: string[] = [];
      for (const kind of [PACK_KIND_OBJECT, PACK_KIND_TREE] as PackKind[]) {
        const dir = this.stagingDir(kind);
        let any = false;
        for (const name of await fsp.readdir(dir)) {
          const file = path.join(dir, name);
          const { mtimeMs } = await fsp.stat(file);
          if (now - mtimeMs > ttlSeconds * 1000) {
            await fsp.rm(file, { force: true });
            removed.push(`${PACK_DIR[kind]}/${name}`);
            any = true;
          }
        }
        if (any) await fsyncDir(dir);
      }
      return removed;
    });
  }

  // ------------------------------------------------------------ transactions and group commit

  /**
   * Run `fn` as one transaction of this authority and resolve with its result once the commit
   * holding it is durable. `fn` reads through `tx` (published state plus what earlier
   * transactions of its batch staged) and stages its changes on `tx`; if it throws, nothing it
   * staged is kept. `fn` must not call `transact` itself (it would wait for itself).
   */
  transact<T>(fn: (tx: Txn) => Promise<T> | T): Promise<T> {
    return this.enqueue(fn, false);
  }

  /** Run `fn` alone: after every earlier transaction is durable and before any later one starts. */
  barrier<T>(fn: () => Promise<T> | T): Promise<T> {
    return this.enqueue(() => fn(), true);
  }

  private enqueue<T>(fn: (tx: Txn) => Promise<T> | T, barrier: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject, barrier });
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length) {
        if (this.queue[0].barrier) {
          const op = this.queue.shift()!;
          try {
            this.assertWritable();
            op.resolve(await op.fn(new Txn(this, new Staging())));
          } catch (err) {
            op.reject(err);
          }
          continue;
        }
        const batch = new Staging();
        const done: { op: QueuedOp; value: unknown }[] = [];
        const atS = Math.floor(Date.now() / 1000);
        while (this.queue.length && !this.queue[0].barrier && done.length < MAX_BATCH) {
          const op = this.queue.shift()!;
          const own = new Staging();
          try {
            this.assertWritable();
            const value = await op.fn(new Txn(this, batch, own));
            batch.absorb(own, atS);
            done.push({ op, value });
          } catch (err) {
            op.reject(err);
          }
        }
        if (!batch.empty) {
          try {
            await this.writeBatch(batch);
          } catch (err) {
            for (const d of done) d.op.reject(err);
            continue;
          }
        }
        for (const d of done) d.op.resolve(d.value);
      }
    } finally {
      this.draining = false;
      if (this.closed && !this.merging) this.closeFiles();
    }
    this.maybeMerge();
  }

  private assertWritable(): void {
    if (this.closed) throw new Conflict('the repository is closed');
    if (this.failed) throw new Corrupt(`a commit failed in a way that leaves its outcome unknown (${this.failed.message}); restart to recover`);
  }

  /**
   * Write a batch and publish it (storage-layout.md §9, write order): adopt packs, write new
   * index segments, append to the logs, then the commit point. A failure before the commit
   * point undoes what it can and publishes nothing.
   */
  private async writeBatch(batch: Staging): Promise<void> {
    const next: CommitState = structuredClone(this.state);
    next.generation += 1;
    const gen = next.generation;
    const adopted: { kind: PackKind; packId: string; written?: boolean }[] = [];
    const newSegments: string[] = [];
    const appended: { log: LogFile; from: number }[] = [];
    let pointWritten = false;
    try {
      // Independent renames, and below independent fsyncs and segment files, run concurrently;
      // every one has settled before a phase ends (so an undo never races a write).
      const toAdopt = [...batch.adopt.values()].filter(({ kind, packId }) => !this.isCommittedPack(kind, packId));
      const renames = await Promise.allSettled(toAdopt.map(({ kind, packId }) => fsp.rename(this.stagedPackFile(kind, packId), this.packFile(kind, packId))));
      renames.forEach((r, i) => { if (r.status === 'fulfilled') adopted.push(toAdopt[i]); });
      throwFirstRejection(renames);
      for (const { kind, packId, bytes } of batch.newPacks.values()) {
        if (this.isCommittedPack(kind, packId) || adopted.some((a) => a.kind === kind && a.packId === packId)) continue;
        const target = this.packFile(kind, packId);
        const temp = tempPathFor(target);
        await fsp.writeFile(temp, bytes, { flag: 'wx', mode: 0o644 });
        const h = await fsp.open(temp, 'r+');
        try {
          await h.sync();
        } finally {
          await h.close();
        }
        await fsp.rename(temp, target);
        adopted.push({ kind, packId, written: true });
      }
      if (adopted.length) {
        const kinds = [...new Set(adopted.map((a) => a.kind))];
        throwFirstRejection(await Promise.allSettled(kinds.flatMap((kind) => [fsyncDir(this.packDir(kind)), fsyncDir(this.stagingDir(kind))])));
      }
      crashPoint('commit:after-adopt');

      // Snapshot records go to snapshots.log at known offsets; the index segment points there.
      const snapRows: SegmentEntry[] = [];
      const snapFrames: Buffer[] = [];
      if (batch.snapshots.size) {
        let offset = Math.max(this.state.logs.snapshots, LOG_HEADER_SIZE);
        let ordinal = this.state.snapshot_count;
        for (const { canonical, record } of batch.snapshots.values()) {
          snapRows.push({ id: record.snapshot_id, pack_id: '', a: ordinal++, b: crc32(canonical), c: offset + 4, d: canonical.length, e: record.created_at_s });
          snapFrames.push(canonical);
          offset += canonical.length + FRAME_OVERHEAD;
        }
        next.snapshot_count = ordinal;
      }
      const rows: Record<IndexName, SegmentEntry[]> = {
        blobs: [...batch.blobs.values()].map(fromLocator),
        trees: [...batch.trees.values()].map(fromLocator),
        snapshots: snapRows,
      };
      const names = INDEX_NAMES.filter((name) => rows[name].length);
      for (const name of names) {
        if (next.segments[name].length >= MAX_SEGMENTS) throw new Conflict(`index ${name} is waiting for a segment merge; retry`);
      }
      const files = names.map((name) => this.layout.indexSegment(name, gen));
      newSegments.push(...files); // removed on failure (rm of one never written is harmless)
      throwFirstRejection(await Promise.allSettled(names.map((name, i) => writeSegment(files[i], INDEX_KIND[name], rows[name]))));
      for (const name of names) next.segments[name] = [...next.segments[name], gen];
      crashPoint('commit:after-index');

      const writes: Promise<void>[] = [];
      const appendLog = (name: LogName, bodies: Buffer[]) => {
        if (!bodies.length) return;
        const log = this.logs[name];
        const from = this.state.logs[name];
        appended.push({ log, from });
        writes.push(log.appendAt(from, log.frame(bodies, from)).then((end) => { next.logs[name] = end; }));
      };
      appendLog('snapshots', snapFrames);
      appendLog('jobs', batch.appends.jobs);
      appendLog('plans', batch.appends.plans);
      appendLog('workflow', batch.workflow.map((t) => Buffer.from(JSON.stringify(t), 'utf8')));
      throwFirstRejection(await Promise.allSettled(writes));
      crashPoint('commit:after-log');
      crashPoint('commit:before-state');
      pointWritten = true;
      await this.writePoint(next);
      crashPoint('commit:after-state');
    } catch (err) {
      // After a failed commit-point write nothing it may name is removed (writePoint stopped writes).
      if (pointWritten) throw err;
      for (const { log, from } of appended) await log.truncate(from).catch(() => {});
      for (const file of newSegments) await fsp.rm(file, { force: true }).catch(() => {});
      for (const { kind, packId, written } of adopted) {
        if (written) await fsp.rm(this.packFile(kind, packId), { force: true }).catch(() => {});
        else await fsp.rename(this.packFile(kind, packId), this.stagedPackFile(kind, packId)).catch(() => {});
      }
      throw err;
    }
    this.publish(batch, next, adopted);
  }

  /**
   * Write the commit point: the only writer of commit.bin. A failed write leaves its outcome
   * unknown (the slot may or may not be durable), so writes stop until a restart reads back
   * which state is current; callers must then not remove anything the new state names.
   */
  private async writePoint(next: CommitState): Promise<void> {
    try {
      await this.point.write(next);
    } catch (err) {
      this.failed = err as Error;
      throw err;
    }
  }

  /** Make a durable commit visible to readers. */
  private publish(batch: Staging, next: CommitState, adopted: { kind: PackKind; packId: string }[]): void {
    const prev = this.state;
    this.state = next;
    for (const name of LOG_NAMES) this.logs[name].length = next.logs[name];
    for (const name of INDEX_NAMES) {
      if (next.segments[name] === prev.segments[name] || sameList(next.segments[name], prev.segments[name])) continue;
      this.indexes[name] = this.segmentedIndex(name, next.segments[name]);
    }
    for (const { kind, packId } of adopted) this.committedPacks[kind].add(packId);
    for (const [name, line] of batch.lines) this.lineMap.set(name, line);
    if (batch.lines.size > 0) this.sortedLines = null;
    for (const t of batch.workflow) for (const u of t.upserts) if (u.type !== 'line') this.applyUpsert(u, -1);
    this.workflowRecords += batch.workflow.length;
    for (const hook of batch.hooks) hook();
  }

  private segmentedIndex(name: IndexName, segments: number[]): SegmentedIndex {
    return new SegmentedIndex(INDEX_KIND[name], segments.map((segment) => {
      const file = this.layout.indexSegment(name, segment);
      let reader = this.readers.get(file);
      if (!reader) {
        reader = IndexReader.open(file, INDEX_KIND[name]);
        this.readers.set(file, reader);
      }
      return { segment, reader };
    }));
  }

  // ------------------------------------------------------------ segment merges

  /**
   * Start a background merge when an index has more than MERGE_SEGMENTS_AT segments: every
   * segment but the newest few is merged into one new file while commits go on (the files are
   * immutable), then a barrier transaction swaps the list. Bases grow geometrically, so each
   * entry is rewritten O(log n) times in all and a small commit never pays for a big rewrite.
   */
  private mergeBackoffMs = 0;

  private maybeMerge(): void {
    if (this.merging || this.closed || this.failed) return;
    const name = INDEX_NAMES.find((n) => this.state.segments[n].length > MERGE_SEGMENTS_AT);
    if (!name) return;
    this.merging = true;
    this.mergeSegments(name).then(() => {
      this.mergeBackoffMs = 0;
      return 0;
    }, (err) => {
      // Retry later, backing off (each attempt costs a commit), never in a tight loop.
      this.onBackgroundError(`merging index ${name} segments failed: ${(err as Error).message}`);
      this.mergeBackoffMs = Math.min(60_000, Math.max(100, this.mergeBackoffMs * 2));
      return this.mergeBackoffMs;
    }).then((delay) => {
      this.merging = false;
      if (this.closed) {
        if (!this.draining) this.closeFiles();
        return;
      }
      setTimeout(() => this.maybeMerge(), delay).unref();
    });
  }

  /**
   * Merge a run of the newest segments of `name` into one: older segments each larger than all
   * the segments after them together are kept (size-tiered, like an LSM tree), but at least the
   * newest two are always merged, so every merge makes progress. Each entry is rewritten
   * O(log n) times in all, and a small commit never waits for a big rewrite.
   */
  async mergeSegments(name: IndexName): Promise<void> {
    // Choose the run and reserve the merged file's number in one barrier: every segment that
    // exists then is in the run or older, every segment committed later is numbered above it.
    const plan = await this.barrier(async () => {
      this.assertWritable();
      const current = this.indexes[name].segments;
      if (current.length < 2) return null;
      let start = 0;
      let after = current.reduce((n, seg) => n + seg.reader.count, 0);
      while (start < current.length - 2) {
        after -= current[start].reader.count;
        if (current[start].reader.count <= after) break;
        start++;
      }
      const next: CommitState = structuredClone(this.state);
      next.generation += 1;
      await this.writePoint(next);
      this.state = next;
      return { chosen: current.slice(start), mergedSeg: next.generation };
    });
    if (!plan) return;
    const { chosen, mergedSeg } = plan;
    const file = this.layout.indexSegment(name, mergedSeg);
    try {
      await writeMergedSegments(file, INDEX_KIND[name], chosen.map((seg) => seg.reader));
    } catch (err) {
      await fsp.rm(file, { force: true });
      throw err;
    }
    const dropped = chosen.map((seg) => seg.segment);
    let attempted = false;
    try {
      await this.barrier(async () => {
        this.assertWritable();
        const list = this.state.segments[name];
        const at = list.indexOf(dropped[0]);
        if (at < 0 || !sameList(list.slice(at, at + dropped.length), dropped)) throw new Error('segments changed during the merge');
        const next: CommitState = structuredClone(this.state);
        next.generation += 1;
        next.segments[name] = [...list.slice(0, at), mergedSeg, ...list.slice(at + dropped.length)];
        crashPoint('merge:before-state');
        attempted = true;
        await this.writePoint(next);
        this.state = next;
        this.indexes[name] = this.segmentedIndex(name, next.segments[name]);
        for (const seg of dropped) {
          const f = this.layout.indexSegment(name, seg);
          this.readers.get(f)?.close();
          this.readers.delete(f);
          await fsp.rm(f, { force: true });
        }
      });
    } catch (err) {
      if (!attempted) await fsp.rm(file, { force: true });
      throw err;
    }
  }

  /**
   * Replace an opaque log with exactly `bodies` (a compaction: one record per job instead of
   * one per transition). The new file is `<name>.<G>.log`, written and synced before the commit
   * point names it, so a crash leaves the old file current; the old file is removed after.
   */
  compactLog(name: OpaqueLog | 'workflow', bodies: Buffer[]): Promise<void> {
    return this.barrier(async () => {
      this.assertWritable();
      const next: CommitState = structuredClone(this.state);
      next.generation += 1;
      const file = this.layout.logFile(name, next.generation);
      const bytes = this.logs[name].frame(bodies, 0);
      await writeFileDurable(file, bytes);
      next.logs[name] = bytes.length;
      next.log_files[name] = next.generation;
      const fresh = LogFile.open(file, LOG_MAGIC[name], bytes.length, []);
      crashPoint('compact:before-state');
      try {
        await this.writePoint(next);
      } catch (err) {
        fresh.close(); // the file stays: the slot may name it
        throw err;
      }
      const old = this.logs[name];
      this.logs[name] = fresh;
      this.state = next;
      old.close();
      await removeDurable(old.file);
    });
  }

  /**
   * Compact workflow.log when most of its records are superseded (more than 1,024 records and
   * more than four per live line or entity): the new log holds the latest upsert of each
   * `(type, id)`, 1,024 per record. The caller skips it for a retiring repository.
   */
  async maybeCompactWorkflow(): Promise<string | null> {
    let live = this.lineMap.size;
    for (const m of this.entities.values()) live += m.size;
    if (this.workflowRecords <= 1024 || this.workflowRecords <= 4 * live) return null;
    const upserts: Upsert[] = [];
    for (const l of this.lineMap.values()) upserts.push({ type: 'line', id: l.name, body: { status: l.status, head_snapshot_id: l.head_snapshot_id, updated_at_s: l.updated_at_s } });
    for (const [type, m] of this.entities) for (const [id, body] of m) upserts.push({ type, id, body });
    const atS = Math.floor(Date.now() / 1000);
    const bodies: Buffer[] = [];
    for (let i = 0; i < upserts.length; i += COMPACT_UPSERTS_PER_RECORD) {
      bodies.push(Buffer.from(JSON.stringify({ at_s: atS, upserts: upserts.slice(i, i + COMPACT_UPSERTS_PER_RECORD) }), 'utf8'));
    }
    const before = this.workflowRecords;
    await this.compactLog('workflow', bodies);
    this.workflowRecords = bodies.length;
    return `workflow.log compacted from ${before} to ${bodies.length} records`;
  }

  /** Wait for a running merge (tests and bench). */
  async settle(): Promise<void> {
    const pause = () => new Promise((r) => setTimeout(r, 5));
    for (;;) {
      while (this.merging || this.draining) await pause();
      if (this.closed || this.failed || !INDEX_NAMES.some((n) => this.state.segments[n].length > MERGE_SEGMENTS_AT)) return;
      await pause();
    }
  }

  /** Pack files present in packs/<kind>/ (committed ones after open). */
  async packFiles(kind: PackKind): Promise<string[]> {
    return (await fsp.readdir(this.packDir(kind))).filter((n) => n.endsWith('.pack')).map((n) => n.slice(0, -5));
  }

  /** Check the whole-file checksums of the current index segments (fsck). */
  verifyIndexes(): void {
    for (const name of INDEX_NAMES) this.indexes[name].verify();
  }

  /**
   * Recreate the blob and tree indexes from the headers of the committed packs alone (fsck
   * --rebuild-locators): one new segment per kind, published by a commit like any other.
   */
  async rebuildLocators(): Promise<{ blobs: number; trees: number; skipped: string[] }> {
    return this.barrier(async () => {
      const skipped: string[] = [];
      const next: CommitState = structuredClone(this.state);
      next.generation += 1;
      const gen = next.generation;
      const counts = { blobs: 0, trees: 0, skipped };
      for (const kind of [PACK_KIND_OBJECT, PACK_KIND_TREE] as PackKind[]) {
        const packs = (await this.packFiles(kind)).sort();
        const byId = new Map<string, SegmentEntry>();
        for (const packId of packs) {
          let header: PackHeader;
          try {
            ({ header } = await this.packHeaderFile(this.packFile(kind, packId), kind));
          } catch (err) {
            // A pack whose header is unreadable contributes no locators; fsck reports it.
            skipped.push(`${PACK_DIR[kind]}/${packId}.pack: ${(err as Error).message}`);
            continue;
          }
          for (const e of header.entries) {
            if (!byId.has(e.id)) byId.set(e.id, { id: e.id, pack_id: packId, a: 0, b: e.crc32, c: e.offset, d: e.length, e: e.raw_length });
          }
        }
        const name: IndexName = kind === PACK_KIND_OBJECT ? 'blobs' : 'trees';
        await writeSegment(this.layout.indexSegment(name, gen), INDEX_KIND[name], [...byId.values()]);
        next.segments[name] = [gen];
        counts[name] = byId.size;
        this.committedPacks[kind] = new Set(packs);
      }
      await this.writePoint(next);
      const prev = this.state;
      this.state = next;
      for (const name of ['blobs', 'trees'] as IndexName[]) {
        this.indexes[name] = this.segmentedIndex(name, next.segments[name]);
        for (const seg of prev.segments[name]) {
          const f = this.layout.indexSegment(name, seg);
          this.readers.get(f)?.close();
          this.readers.delete(f);
          await fsp.rm(f, { force: true });
        }
      }
      return counts;
    });
  }

  private async packHeaderFile(file: string, kind: PackKind): Promise<{ header: PackHeader; byteLength: number }> {
    const handle = await fsp.open(file, 'r');
    try {
      const first = Buffer.alloc(8);
      await handle.read(first, 0, 8, 0);
      const frame = Buffer.alloc(8 + packHeaderPayloadSize(first));
      await handle.read(frame, 0, frame.length, 0);
      const { size } = await handle.stat();
      return { header: decodePackHeader(frame, kind), byteLength: size };
    } finally {
      await handle.close();
    }
  }
}

/**
 * A transaction's view and its staging area. Reads see the published state, then what earlier
 * transactions of the batch staged, then this transaction's own changes.
 */
export class Txn {
  constructor(private readonly store: ContentStore, private readonly batch: Staging, private readonly own: Staging = batch) {}

  // reads
  line(name: string): LineRecord | undefined {
    return this.own.lines.get(name) ?? this.batch.lines.get(name) ?? this.store.line(name);
  }

  lines(): LineRecord[] {
    if (this.batch.lines.size === 0 && this.own.lines.size === 0) return [...this.store.lines()];
    const all = new Map(this.store.lines().map((l) => [l.name, l]));
    for (const [n, l] of this.batch.lines) all.set(n, l);
    for (const [n, l] of this.own.lines) all.set(n, l);
    return sortByName([...all.values()]);
  }

  locator(kind: ObjectKind, id: string): Locator | null {
    const map = (s: Staging) => (kind === 'blob' ? s.blobs : s.trees);
    return map(this.own).get(id) ?? map(this.batch).get(id) ?? this.store.locator(kind, id);
  }

  has(kind: ObjectKind, id: string): boolean {
    const map = (s: Staging) => (kind === 'blob' ? s.blobs : s.trees);
    return map(this.own).has(id) || map(this.batch).has(id) || this.store.has(kind, id);
  }

  hasSnapshot(id: string): boolean {
    return this.own.snapshots.has(id) || this.batch.snapshots.has(id) || this.store.hasSnapshot(id);
  }

  /** A pack committed, or adopted or written by an earlier transaction of this batch. */
  isAdoptedPack(kind: PackKind, id: string): boolean {
    const key = `${kind}:${id}`;
    return this.store.isCommittedPack(kind, id) || this.batch.adopt.has(key) || this.own.adopt.has(key) || this.batch.newPacks.has(key) || this.own.newPacks.has(key);
  }

  packHeader(kind: PackKind, id: string) {
    return this.store.packHeader(kind, id);
  }

  /** Read an object: from a pack this batch is about to write, else from packs/ or staging/. */
  async readLocated(loc: Locator): Promise<Buffer> {
    const key = `${loc.kind === 'blob' ? PACK_KIND_OBJECT : PACK_KIND_TREE}:${loc.pack_id}`;
    const pending = this.own.newPacks.get(key) ?? this.batch.newPacks.get(key);
    if (pending) {
      const entry: PackEntry = { id: loc.id, offset: loc.offset, length: loc.length, raw_length: loc.raw_length, crc32: loc.crc32 };
      return decodeObjectFrame(entry, pending.bytes.subarray(loc.offset, loc.offset + loc.length), loc.kind);
    }
    return this.store.readLocated(loc);
  }

  entity<T>(type: string, id: string): T | undefined {
    for (const s of [this.own, this.batch]) {
      for (let i = s.upserts.length - 1; i >= 0; i--) if (s.upserts[i].type === type && s.upserts[i].id === id) return s.upserts[i].body as T;
    }
    for (let t = this.batch.workflow.length - 1; t >= 0; t--) {
      const ups = this.batch.workflow[t].upserts;
      for (let i = ups.length - 1; i >= 0; i--) if (ups[i].type === type && ups[i].id === id) return ups[i].body as T;
    }
    return this.store.entity<T>(type, id);
  }

  /** Module state staged earlier in this batch or this transaction (namespace `ns`). */
  staged<T>(ns: string, key: string): T | undefined {
    return this.own.staged<T>(ns, key) ?? this.batch.staged<T>(ns, key);
  }

  /** Keys staged in namespace `ns` by this batch so far (this transaction included). */
  stagedKeys(ns: string): string[] {
    return [...new Set([...(this.batch.overlay.get(ns)?.keys() ?? []), ...(this.own.overlay.get(ns)?.keys() ?? [])])];
  }

  // staging
  adoptPack(kind: PackKind, packId: string): void {
    if (!this.isAdoptedPack(kind, packId)) this.own.adopt.set(`${kind}:${packId}`, { kind, packId });
  }

  /** A pack the server built; the commit writes it into packs/ before its commit point. */
  writePack(kind: PackKind, packId: string, bytes: Buffer): void {
    if (!this.isAdoptedPack(kind, packId)) this.own.newPacks.set(`${kind}:${packId}`, { kind, packId, bytes });
  }

  addLocator(loc: Locator): void {
    (loc.kind === 'blob' ? this.own.blobs : this.own.trees).set(loc.id, loc);
  }

  /** Stage a snapshot record (parents first); returns its snapshot_index. */
  addSnapshot(canonical: Buffer): number {
    const record = decodeSnapshot(canonical);
    const staged: StagedSnapshot = { canonical, record };
    this.own.snapshots.set(record.snapshot_id, staged);
    return this.store.snapshotCount + this.batch.snapshots.size + this.own.snapshots.size - 1;
  }

  setLine(line: LineRecord): void {
    this.own.lines.set(line.name, line);
    this.own.upserts.push({ type: 'line', id: line.name, body: { status: line.status, head_snapshot_id: line.head_snapshot_id, updated_at_s: line.updated_at_s } });
  }

  /** A workflow entity upsert (issue-12 entities); written in this transaction's workflow.log record. */
  upsert(type: string, id: string, body: unknown): void {
    if (type === 'line') throw new Error('lines are set with setLine');
    this.own.upserts.push({ type, id, body });
  }

  append(log: OpaqueLog, body: Buffer): void {
    this.own.appends[log].push(body);
  }

  stage(ns: string, key: string, value: unknown): void {
    this.own.stage(ns, key, value);
  }

  /** Run after the commit is durable, before callers are answered (update in-memory state). */
  onPublish(hook: () => void): void {
    this.own.hooks.push(hook);
  }
}

function toLocator(kind: ObjectKind, e: SegmentEntry): Locator {
  return { kind, id: e.id, pack_id: e.pack_id, offset: e.c, length: e.d, raw_length: e.e, crc32: e.b };
}

function fromLocator(l: Locator): SegmentEntry {
  return { id: l.id, pack_id: l.pack_id, a: 0, b: l.crc32, c: l.offset, d: l.length, e: l.raw_length };
}

function sameList(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function relabel(err: unknown, root: string): unknown {
  if (err instanceof Corrupt) return new Corrupt(err.message.replace(root + '/', ''));
  return err;
}

export function packKindOf(kind: ObjectKind): PackKind {
  return kind === 'blob' ? PACK_KIND_OBJECT : PACK_KIND_TREE;
}

/** Lines in UTF-8 byte order of their names (each name encoded once, not once per comparison). */
function sortByName(lines: LineRecord[]): LineRecord[] {
  const keyed = lines.map((line) => ({ key: Buffer.from(line.name), line }));
  keyed.sort((a, b) => Buffer.compare(a.key, b.key));
  return keyed.map((k) => k.line);
}

/** After concurrent steps have all settled: throw the first failure, if any. */
function throwFirstRejection(results: PromiseSettledResult<unknown>[]): void {
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
}
