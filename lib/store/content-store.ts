// The content engine of one authority (storage-layout.md §6–§12): packs, locator indexes,
// snapshot records and lines. Everything committed is published by one atomic rewrite of
// state.bin, which names the current generation of every index and lines file and the
// committed length of snapshots.log. Files a crashed commit left behind are unreferenced by
// state.bin and are cleaned at open; staged packs go back to staging/. Callers serialize
// mutations (the authority mutex); reads see the last published state.
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { decodeSnapshot, decodeTree, type SnapshotRecord, type TreeEntry } from '../domain/content.js';
import { Corrupt, Invalid, NotFound, TooLarge } from '../domain/errors.js';
import { crc32 } from './binary.js';
import { crashPoint } from './crash-point.js';
import {
  EMPTY_STATE,
  SNAPSHOT_LOG_HEADER,
  decodeLines,
  decodeState,
  encodeLines,
  encodeState,
  frameSnapshotRecord,
  snapshotLogHeader,
  type ContentState,
  type LineRecord,
} from './content-files.js';
import { ChunkWriter, exists, fsyncDir, mkdirDurable, renameDurable, tempPathFor, writeFileDurable } from './durable.js';
import {
  INDEX_KIND_BLOB,
  INDEX_KIND_SNAPSHOT,
  INDEX_KIND_TREE,
  IndexReader,
  writeMergedIndex,
  type IndexEntry,
  type IndexKind,
} from './index-file.js';
import { decodeObjectFrame, decodePackHeader, packHeaderPayloadSize, PackVerifier, PACK_KIND_OBJECT, PACK_KIND_TREE, type PackEntry, type PackHeader, type PackKind } from './pack.js';

export type ObjectKind = 'blob' | 'tree';

export interface Locator {
  kind: ObjectKind;
  id: string;
  pack_id: string;
  offset: number;
  length: number;
  raw_length: number;
  crc32: number;
}

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

/** What a commit publishes; the caller has validated it against the store. */
export interface ContentChanges {
  adoptPacks: { kind: PackKind; packId: string }[];
  blobs: Locator[];
  trees: Locator[];
  /** Canonical snapshot encodings, parents before children. */
  snapshots: Buffer[];
  /** The complete new set of lines, when lines change. */
  lines?: LineRecord[];
}

/** Staged packs not committed within this many seconds are removed (git's default prune age). */
export const STAGED_PACK_TTL_S = 14 * 24 * 3600;

const PACK_DIR: Record<PackKind, string> = { [PACK_KIND_OBJECT]: 'objects', [PACK_KIND_TREE]: 'trees' };

export class ContentStore {
  private state: ContentState = EMPTY_STATE;
  private blobs: IndexReader = IndexReader.empty(INDEX_KIND_BLOB);
  private trees: IndexReader = IndexReader.empty(INDEX_KIND_TREE);
  private snapshots: IndexReader = IndexReader.empty(INDEX_KIND_SNAPSHOT);
  private lineMap = new Map<string, LineRecord>();
  private committedPacks: Record<PackKind, Set<string>> = { [PACK_KIND_OBJECT]: new Set(), [PACK_KIND_TREE]: new Set() };
  private logFd: number | null = null;

  private constructor(readonly root: string) {}

  // ------------------------------------------------------------ paths (mirror of §6)
  get stateFile(): string { return path.join(this.root, 'state.bin'); }
  get logFile(): string { return path.join(this.root, 'snapshots.log'); }
  get indexDir(): string { return path.join(this.root, 'index'); }
  indexFile(name: 'blobs' | 'trees' | 'snapshots', gen: number): string { return path.join(this.indexDir, `${name}.${gen}.idx`); }
  linesFile(gen: number): string { return path.join(this.root, `lines.${gen}.bin`); }
  packDir(kind: PackKind): string { return path.join(this.root, 'packs', PACK_DIR[kind]); }
  stagingDir(kind: PackKind): string { return path.join(this.root, 'staging', PACK_DIR[kind]); }
  packFile(kind: PackKind, id: string): string { return path.join(this.packDir(kind), `${id}.pack`); }
  stagedPackFile(kind: PackKind, id: string): string { return path.join(this.stagingDir(kind), `${id}.pack`); }

  /**
   * Open after a restart (recovery): read state.bin, truncate snapshots.log to its committed
   * length, open the current indexes, delete index/lines files of other generations, and move
   * packs that no index references back to staging. Returns notes about what was repaired.
   */
  static async open(root: string, options: { rebuildingLocators?: boolean } = {}): Promise<{ store: ContentStore; notes: string[] }> {
    const store = new ContentStore(root);
    const notes: string[] = [];
    for (const kind of [PACK_KIND_OBJECT, PACK_KIND_TREE] as PackKind[]) {
      await mkdirDurable(store.packDir(kind));
      await mkdirDurable(store.stagingDir(kind));
    }
    await mkdirDurable(store.indexDir);
    try {
      store.state = decodeState(await fsp.readFile(store.stateFile));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const s = store.state;
    // When locators are about to be rebuilt from packs, a missing or damaged locator index is
    // expected: open it as empty and treat every pack in packs/ as committed.
    const openLocators = (name: 'blobs' | 'trees', gen: number, kind: IndexKind): IndexReader => {
      if (!gen) return IndexReader.empty(kind);
      try {
        return IndexReader.open(store.indexFile(name, gen), kind);
      } catch (err) {
        if (!options.rebuildingLocators) throw err;
        notes.push(`index/${name}.${gen}.idx unusable (${(err as Error).message}); rebuilding`);
        return IndexReader.empty(kind);
      }
    };
    store.blobs = openLocators('blobs', s.blobs_idx_gen, INDEX_KIND_BLOB);
    store.trees = openLocators('trees', s.trees_idx_gen, INDEX_KIND_TREE);
    store.snapshots = s.snapshots_idx_gen ? IndexReader.open(store.indexFile('snapshots', s.snapshots_idx_gen), INDEX_KIND_SNAPSHOT) : IndexReader.empty(INDEX_KIND_SNAPSHOT);
    if (store.snapshots.count !== s.snapshot_count) throw new Corrupt(`snapshot index holds ${store.snapshots.count} entries, state.bin says ${s.snapshot_count}`);
    if (s.lines_gen) {
      for (const line of decodeLines(await fsp.readFile(store.linesFile(s.lines_gen)), `lines.${s.lines_gen}.bin`)) store.lineMap.set(line.name, line);
    }
    await store.recoverLog(notes);
    await store.removeOtherGenerations(notes);
    for (const kind of [PACK_KIND_OBJECT, PACK_KIND_TREE] as PackKind[]) {
      const reader = kind === PACK_KIND_OBJECT ? store.blobs : store.trees;
      const referenced = new Set(options.rebuildingLocators ? await store.packFiles(kind) : reader.packs);
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
    return { store, notes };
  }

  private async recoverLog(notes: string[]): Promise<void> {
    const committed = this.state.snapshot_log_length;
    let size = -1;
    try {
      size = (await fsp.stat(this.logFile)).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (size < 0) {
      if (committed > 0) throw new Corrupt('snapshots.log is missing');
      await writeFileDurable(this.logFile, snapshotLogHeader());
      size = SNAPSHOT_LOG_HEADER;
    }
    const expected = Math.max(committed, SNAPSHOT_LOG_HEADER);
    if (size < expected) throw new Corrupt(`snapshots.log is ${size} bytes, state.bin commits ${expected}`);
    const head = Buffer.alloc(SNAPSHOT_LOG_HEADER);
    const fd = openSync(this.logFile, 'r+');
    readSync(fd, head, 0, SNAPSHOT_LOG_HEADER, 0);
    if (!head.equals(snapshotLogHeader())) {
      closeSync(fd);
      throw new Corrupt('snapshots.log has a bad header');
    }
    this.logFd = fd;
    if (size > expected) {
      notes.push(`snapshots.log had ${size - expected} uncommitted bytes; truncated`);
      const handle = await fsp.open(this.logFile, 'r+');
      await handle.truncate(expected);
      await handle.sync();
      await handle.close();
    }
    if (this.state.snapshot_log_length === 0) this.state = { ...this.state, snapshot_log_length: SNAPSHOT_LOG_HEADER };
  }

  private async removeOtherGenerations(notes: string[]): Promise<void> {
    const s = this.state;
    const keep = new Set([
      `blobs.${s.blobs_idx_gen}.idx`, `trees.${s.trees_idx_gen}.idx`, `snapshots.${s.snapshots_idx_gen}.idx`,
    ]);
    let removed = false;
    for (const name of await fsp.readdir(this.indexDir)) {
      if (keep.has(name)) continue;
      await fsp.rm(path.join(this.indexDir, name), { force: true });
      removed = true;
      if (!/^(blobs|trees|snapshots)\.\d+\.idx$/.test(name)) notes.push(`removed unexpected file index/${name}`);
    }
    if (removed) await fsyncDir(this.indexDir);
    for (const name of await fsp.readdir(this.root)) {
      const m = /^lines\.(\d+)\.bin$/.exec(name);
      if (m && Number(m[1]) !== s.lines_gen) {
        await fsp.rm(path.join(this.root, name), { force: true });
        await fsyncDir(this.root);
      }
    }
  }

  close(): void {
    for (const fd of this.packFds.values()) closeSync(fd);
    this.packFds.clear();
    this.blobs.close();
    this.trees.close();
    this.snapshots.close();
    if (this.logFd !== null) closeSync(this.logFd);
    this.logFd = null;
  }

  // ------------------------------------------------------------ reads

  get generation(): number { return this.state.generation; }
  get snapshotCount(): number { return this.state.snapshot_count; }

  private reader(kind: ObjectKind): IndexReader {
    return kind === 'blob' ? this.blobs : this.trees;
  }

  locator(kind: ObjectKind, id: string): Locator | null {
    const reader = this.reader(kind);
    const e = reader.lookup(id);
    if (!e) return null;
    return { kind, id, pack_id: reader.packs[e.a], offset: e.c, length: e.d, raw_length: e.e, crc32: e.b };
  }

  has(kind: ObjectKind, id: string): boolean {
    return this.reader(kind).has(id);
  }

  *locators(kind: ObjectKind): Generator<Locator> {
    const reader = this.reader(kind);
    for (const e of reader.entries()) yield { kind, id: e.id, pack_id: reader.packs[e.a], offset: e.c, length: e.d, raw_length: e.e, crc32: e.b };
  }

  /** Read and verify one object through its locator. */
  async readObject(kind: ObjectKind, id: string): Promise<Buffer> {
    const loc = this.locator(kind, id);
    if (!loc) throw new NotFound(`${kind} ${id} is not present`);
    return this.readLocated(loc);
  }

  async readLocated(loc: Locator): Promise<Buffer> {
    const packKind = loc.kind === 'blob' ? PACK_KIND_OBJECT : PACK_KIND_TREE;
    // A commit in progress reads new trees from their staged packs.
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
    return this.snapshots.has(id);
  }

  snapshot(id: string): StoredSnapshot | null {
    const e = this.snapshots.lookup(id);
    if (!e) return null;
    const canonical = Buffer.alloc(e.d);
    readSync(this.logFd!, canonical, 0, e.d, e.c);
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
    for (const e of this.snapshots.entries()) yield e.id;
  }

  lines(): LineRecord[] {
    return [...this.lineMap.values()].sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
  }

  line(name: string): LineRecord | undefined {
    return this.lineMap.get(name);
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

  // ------------------------------------------------------------ writes

  /**
   * Stream an uploaded pack to a temp file in staging/, hashing and verifying every byte on the
   * way (never held in memory), then rename it into staging/. Idempotent: the same bytes under
   * an id already committed or staged are accepted without a second copy; other bytes under an
   * id never pass the hash check. Does not need the authority mutex.
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

  /** Remove staged packs older than `ttlSeconds`. Caller holds the authority mutex. */
  async expireStagedPacks(ttlSeconds = STAGED_PACK_TTL_S, now = Date.now()): Promise<string[]> {
    const removed: string[] = [];
    for (const kind of [PACK_KIND_OBJECT, PACK_KIND_TREE] as PackKind[]) {
      const dir = this.stagingDir(kind);
      for (const name of await fsp.readdir(dir)) {
        const file = path.join(dir, name);
        const { mtimeMs } = await fsp.stat(file);
        if (now - mtimeMs > ttlSeconds * 1000) {
          await fsp.rm(file, { force: true });
          removed.push(`${PACK_DIR[kind]}/${name}`);
        }
      }
      if (removed.length) await fsyncDir(dir);
    }
    return removed;
  }

  /**
   * Publish `changes` atomically. Order: adopt staged packs (rename into packs/), append
   * snapshot records to snapshots.log (fsync), write the new index and lines files, then
   * rewrite state.bin — the commit point. A crash before that point leaves state.bin naming
   * the old generation; recovery at open removes or un-adopts what the commit wrote.
   */
  async commit(changes: ContentChanges): Promise<void> {
    const gen = this.state.generation + 1;
    const next: ContentState = { ...this.state, generation: gen };

    const adopted: { kind: PackKind; packId: string }[] = [];
    try {
      await this.publish(changes, next, adopted);
    } catch (err) {
      // Not published: put adopted packs back so a retry finds them staged.
      for (const { kind, packId } of adopted) await fsp.rename(this.packFile(kind, packId), this.stagedPackFile(kind, packId)).catch(() => {});
      throw err;
    }
  }

  private async publish(changes: ContentChanges, next: ContentState, adopted: { kind: PackKind; packId: string }[]): Promise<void> {
    const gen = next.generation;
    for (const { kind, packId } of changes.adoptPacks) {
      if (this.isCommittedPack(kind, packId)) continue;
      await fsp.rename(this.stagedPackFile(kind, packId), this.packFile(kind, packId));
      adopted.push({ kind, packId });
    }
    crashPoint('commit:after-adopt');
    if (changes.adoptPacks.length) {
      await fsyncDir(this.packDir(PACK_KIND_OBJECT));
      await fsyncDir(this.packDir(PACK_KIND_TREE));
      await fsyncDir(this.stagingDir(PACK_KIND_OBJECT));
      await fsyncDir(this.stagingDir(PACK_KIND_TREE));
    }

    let newSnapshots: IndexEntry[] = [];
    if (changes.snapshots.length) {
      const handle = await fsp.open(this.logFile, 'r+');
      try {
        await handle.truncate(this.state.snapshot_log_length);
        let offset = this.state.snapshot_log_length;
        let ordinal = this.state.snapshot_count;
        const frames: Buffer[] = [];
        for (const canonical of changes.snapshots) {
          const record = decodeSnapshot(canonical);
          newSnapshots.push({ id: record.snapshot_id, a: ordinal++, b: crc32(canonical), c: offset + 4, d: canonical.length, e: record.created_at_s });
          const framed = frameSnapshotRecord(canonical);
          frames.push(framed);
          offset += framed.length;
        }
        await handle.write(Buffer.concat(frames), 0, undefined, this.state.snapshot_log_length);
        await handle.sync();
        next.snapshot_log_length = offset;
        next.snapshot_count = ordinal;
      } finally {
        await handle.close();
      }
      crashPoint('commit:after-log');
      newSnapshots = newSnapshots.sort((x, y) => (x.id < y.id ? -1 : 1));
      await writeMergedIndex(this.indexFile('snapshots', gen), this.snapshots, newSnapshots, []);
      next.snapshots_idx_gen = gen;
    }

    for (const [kind, rows] of [['blob', changes.blobs], ['tree', changes.trees]] as const) {
      if (!rows.length) continue;
      const base = this.reader(kind);
      const packs = [...base.packs];
      const ordinal = new Map(packs.map((p, i) => [p, i]));
      const entries: IndexEntry[] = rows.map((r) => {
        let a = ordinal.get(r.pack_id);
        if (a === undefined) {
          a = packs.length;
          packs.push(r.pack_id);
          ordinal.set(r.pack_id, a);
        }
        return { id: r.id, a, b: r.crc32, c: r.offset, d: r.length, e: r.raw_length };
      }).sort((x, y) => (x.id < y.id ? -1 : 1));
      await writeMergedIndex(this.indexFile(kind === 'blob' ? 'blobs' : 'trees', gen), base, entries, packs);
      if (kind === 'blob') next.blobs_idx_gen = gen;
      else next.trees_idx_gen = gen;
    }

    crashPoint('commit:after-index');
    if (changes.lines) {
      await writeFileDurable(this.linesFile(gen), encodeLines(changes.lines));
      next.lines_gen = gen;
    }
    crashPoint('commit:before-state');
    await writeFileDurable(this.stateFile, encodeState(next));
    crashPoint('commit:after-state');
    // Published. Swap readers and drop what the previous generation used.
    const old = { ...this.state };
    this.state = next;
    if (next.blobs_idx_gen !== old.blobs_idx_gen) this.blobs = this.swap(this.blobs, IndexReader.open(this.indexFile('blobs', gen), INDEX_KIND_BLOB), this.indexFile('blobs', old.blobs_idx_gen));
    if (next.trees_idx_gen !== old.trees_idx_gen) this.trees = this.swap(this.trees, IndexReader.open(this.indexFile('trees', gen), INDEX_KIND_TREE), this.indexFile('trees', old.trees_idx_gen));
    if (next.snapshots_idx_gen !== old.snapshots_idx_gen) this.snapshots = this.swap(this.snapshots, IndexReader.open(this.indexFile('snapshots', gen), INDEX_KIND_SNAPSHOT), this.indexFile('snapshots', old.snapshots_idx_gen));
    for (const { kind, packId } of changes.adoptPacks) this.committedPacks[kind].add(packId);
    if (changes.lines) {
      this.lineMap = new Map(changes.lines.map((l) => [l.name, l]));
      if (old.lines_gen) await fsp.rm(this.linesFile(old.lines_gen), { force: true });
    }
  }

  /** Check the whole-file checksums of the current index files (fsck). */
  verifyIndexes(): void {
    this.blobs.verify();
    this.trees.verify();
    this.snapshots.verify();
  }

  /** Pack files present in packs/<kind>/ (committed ones after open). */
  async packFiles(kind: PackKind): Promise<string[]> {
    return (await fsp.readdir(this.packDir(kind))).filter((n) => n.endsWith('.pack')).map((n) => n.slice(0, -5));
  }

  /**
   * Recreate the blob and tree indexes from the headers of the committed packs alone (fsck
   * --rebuild-locators). Published like any commit: new generation files, then state.bin.
   */
  async rebuildLocators(): Promise<{ blobs: number; trees: number; skipped: string[] }> {
    const skipped: string[] = [];
    const gen = this.state.generation + 1;
    const next: ContentState = { ...this.state, generation: gen };
    const counts = { blobs: 0, trees: 0, skipped };
    for (const kind of [PACK_KIND_OBJECT, PACK_KIND_TREE] as PackKind[]) {
      const packs = (await this.packFiles(kind)).sort();
      const byId = new Map<string, IndexEntry>();
      for (let ordinal = 0; ordinal < packs.length; ordinal++) {
        let header: PackHeader;
        try {
          ({ header } = await this.packHeaderFile(this.packFile(kind, packs[ordinal]), kind));
        } catch (err) {
          // A pack whose header is unreadable contributes no locators; fsck reports it.
          skipped.push(`${PACK_DIR[kind]}/${packs[ordinal]}.pack: ${(err as Error).message}`);
          continue;
        }
        for (const e of header.entries) {
          if (!byId.has(e.id)) byId.set(e.id, { id: e.id, a: ordinal, b: e.crc32, c: e.offset, d: e.length, e: e.raw_length });
        }
      }
      const entries = [...byId.values()].sort((x, y) => (x.id < y.id ? -1 : 1));
      const name = kind === PACK_KIND_OBJECT ? 'blobs' : 'trees';
      await writeMergedIndex(this.indexFile(name, gen), IndexReader.empty(kind === PACK_KIND_OBJECT ? INDEX_KIND_BLOB : INDEX_KIND_TREE), entries, packs);
      if (kind === PACK_KIND_OBJECT) { next.blobs_idx_gen = gen; counts.blobs = entries.length; } else { next.trees_idx_gen = gen; counts.trees = entries.length; }
      this.committedPacks[kind] = new Set(packs);
    }
    await writeFileDurable(this.stateFile, encodeState(next));
    const old = this.state;
    this.state = next;
    this.blobs = this.swap(this.blobs, IndexReader.open(this.indexFile('blobs', gen), INDEX_KIND_BLOB), this.indexFile('blobs', old.blobs_idx_gen));
    this.trees = this.swap(this.trees, IndexReader.open(this.indexFile('trees', gen), INDEX_KIND_TREE), this.indexFile('trees', old.trees_idx_gen));
    return counts;
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

  private swap(old: IndexReader, fresh: IndexReader, oldFile: string): IndexReader {
    old.close();
    if (old.path) void fsp.rm(oldFile, { force: true });
    return fresh;
  }
}

export function packKindOf(kind: ObjectKind): PackKind {
  return kind === 'blob' ? PACK_KIND_OBJECT : PACK_KIND_TREE;
}

