// Content operations of one authority: lines, snapshot reads and export, bulk-sync plan,
// pack upload, commit and manifests. Each mutation runs under the authority mutex; validation
// happens before anything is written, so a rejected request leaves the store unchanged.
import { Semaphore } from 'async-mutex';
import {
  decodeTree,
  describeRefusedNames,
  encodeSnapshot,
  findRefusedNames,
  isContentId,
  refusedEntryName,
  requireContentId,
  sha256Hex,
  type RefusedName,
  type TreeEntry,
} from '../domain/content.js';
import { Conflict, Invalid, NotFound, TooLarge } from '../domain/errors.js';
import { describeOverLimit, Pace, pathsOf, WalkBudget } from '../domain/tree-size.js';
import { MAX_TREE_DEPTH, requireTreeDepth } from '../domain/tree-depth.js';
import { closeLine, moveLine, validateLineName, type LineMove, type LineState } from '../domain/lines.js';
import { nowSeconds } from '../domain/repository.js';
import { lineEvents } from '../domain/events.js';
import { checkGitCommitRow, checkGitTagRow, exportedCommitId, GIT_COMMIT, GIT_COMMIT_ID, GIT_TAG, isGitId, MAX_GIT_ROWS, MAX_GIT_TAGS, type GitCommitIdRecord, type GitCommitRecord, type GitTagRecord, type Gitlink } from '../domain/git.js';
import type { ContentStore, Locator, ObjectKind, StoredSnapshot, Txn } from '../store/content-store.js';
export type { StoredSnapshot } from '../store/content-store.js';
import { decodeObjectFrameStream, PACK_KIND_OBJECT, PACK_KIND_TREE, screenPackUpload, type PackEntry, type PackKind } from '../store/pack.js';

// ---------------------------------------------------------------- row shapes (docs/api.md "Bulk remote sync")

export interface PackRow { pack_id: string; byte_length?: number; object_count?: number }
export interface LocatorRow { pack_id: string; offset: number; length: number; raw_length: number; crc32: string }
export interface BlobLocatorRow extends LocatorRow { blob_id: string }
export interface TreeLocatorRow extends LocatorRow { tree_id: string }
export interface SnapshotRow { snapshot_id: string; root_tree_id: string; parent_snapshot_ids: string[]; created_at_s: number; message: string | null }
export interface LineUpdate { line_name: string; head_snapshot_id?: string | null; expected_head_snapshot_id?: string | null }

export interface CommitRequest {
  object_packs: PackRow[];
  tree_packs: PackRow[];
  blob_locators: BlobLocatorRow[];
  tree_locators: TreeLocatorRow[];
  snapshots: SnapshotRow[];
  line_update?: LineUpdate | null;
}

export interface KindCounts { object_packs: number; tree_packs: number; blobs: number; trees: number; snapshots: number }

export interface CommitResult {
  upserted: KindCounts;
  skipped: KindCounts;
  remote_line: LineProjection | null;
  line_head_updated_after_ingest: boolean;
}

export interface LineProjection {
  name: string;
  line_name: string;
  status: 'active' | 'archived';
  head_snapshot_id: string | null;
  updated_at_s: number;
}

export type LinesListing = Readonly<{ lines: readonly Readonly<LineProjection>[] }>;

export function lineProjection(line: LineState): LineProjection {
  return { name: line.name, line_name: line.name, status: line.status, head_snapshot_id: line.head_snapshot_id, updated_at_s: line.updated_at_s };
}

export function snapshotRow(s: StoredSnapshot): SnapshotRow {
  return { snapshot_id: s.snapshot_id, root_tree_id: s.root_tree_id, parent_snapshot_ids: s.parent_snapshot_ids, created_at_s: s.created_at_s, message: s.message };
}

const crcHex = (crc: number) => crc.toString(16).padStart(8, '0');

// One literal per row (no spread of a shared part): manifests build thousands of them.
export function blobLocatorRow(l: Locator): BlobLocatorRow {
  return { blob_id: l.id, pack_id: l.pack_id, offset: l.offset, length: l.length, raw_length: l.raw_length, crc32: crcHex(l.crc32) };
}

export function treeLocatorRow(l: Locator): TreeLocatorRow {
  return { tree_id: l.id, pack_id: l.pack_id, offset: l.offset, length: l.length, raw_length: l.raw_length, crc32: crcHex(l.crc32) };
}

function packRow(info: { pack_id: string; byte_length: number; object_count: number }): PackRow {
  return { pack_id: info.pack_id, byte_length: info.byte_length, object_count: info.object_count };
}

const CRC32_HEX = /^[0-9a-f]{8}$/;

const ZERO: KindCounts = { object_packs: 0, tree_packs: 0, blobs: 0, trees: 0, snapshots: 0 };

export class ContentOperations {
  constructor(private readonly store: ContentStore) {}

  // ------------------------------------------------------------ lines

  private listing: { from: readonly LineState[]; body: LinesListing } | null = null;

  /**
   * GET lines' body. Built once per change of the line set (the store hands out the same sorted
   * array until a line changes) and deeply frozen, so the HTTP layer may serialize it once too.
   */
  linesListing(): LinesListing {
    const from = this.store.lines();
    if (this.listing?.from !== from) {
      const lines = Object.freeze(from.map((l) => Object.freeze(lineProjection(l))));
      this.listing = { from, body: Object.freeze({ lines }) };
    }
    return this.listing.body;
  }

  line(name: string): LineProjection {
    validateLineName(name);
    const line = this.store.line(name);
    if (!line) throw new NotFound(`line ${name} does not exist`);
    return lineProjection(line);
  }

  /** Move a line (PUT lines/{name}); one transaction, so concurrent moves share a commit. */
  putLine(name: string, move: LineMove): Promise<LineProjection> {
    return this.store.transact((tx) => {
      const next = checkLineMove(tx, name, move);
      if (next) {
        tx.emitAll(lineEvents(name, tx.line(name), next));
        tx.setLine(next);
      }
      return lineProjection(next ?? tx.line(name)!);
    });
  }

  closeLine(name: string, status: string): Promise<LineProjection> {
    return this.store.transact((tx) => {
      const current = tx.line(name);
      const next = closeLine(name, current, status, nowSeconds());
      if (!next) throw new NotFound(`line ${name} does not exist`);
      if (next !== current) {
        tx.emitAll(lineEvents(name, current, next));
        tx.setLine(next);
      }
      return lineProjection(next);
    });
  }

  // ------------------------------------------------------------ snapshots

  /** Classify ids without reading content: present, missing (well-formed, unknown), invalid. */
  classify(ids: string[]): { present_snapshot_ids: string[]; missing_snapshot_ids: string[]; invalid_snapshot_ids: string[] } {
    const out = { present_snapshot_ids: [] as string[], missing_snapshot_ids: [] as string[], invalid_snapshot_ids: [] as string[] };
    for (const id of ids) {
      if (!isContentId(id)) out.invalid_snapshot_ids.push(id);
      else if (this.store.hasSnapshot(id)) out.present_snapshot_ids.push(id);
      else out.missing_snapshot_ids.push(id);
    }
    return out;
  }

  snapshot(id: string): StoredSnapshot {
    if (!isContentId(id)) throw new NotFound(`snapshot ${id} is not present (not a sha256 id)`);
    const s = this.store.snapshot(id);
    if (!s) throw new NotFound(`snapshot ${id} is not present`);
    return s;
  }

  /**
   * Walk a tree depth-first in name order, yielding every entry with its path (a directory before
   * its contents). An explicit stack: nested `yield*` costs every item a hop per level.
   */
  async *walk(treeId: string, prefix = '', readTree = (id: string) => this.store.readTree(id), budget: WalkBudget = this.store.walkBudget(`the walk of tree ${treeId}`)): AsyncGenerator<{ path: string; entry: TreeEntry }> {
    const stack = [{ entries: await readTree(treeId), next: 0, prefix }];
    while (stack.length) {
      const top = stack[stack.length - 1];
      if (top.next === top.entries.length) {
        stack.pop();
        continue;
      }
      const entry = top.entries[top.next++];
      const p = top.prefix ? `${top.prefix}/${entry.name}` : entry.name;
      // Trees read from memory resolve at once: without a pause the walk would hold the event loop.
      if (budget.take()) await budget.pause();
      yield { path: p, entry };
      if (entry.kind === 'directory') stack.push({ entries: await readTree(entry.id), next: 0, prefix: p });
    }
  }

  /**
   * A tree reader that keeps what it read, up to `maxEntries` entries in all, for one request
   * that walks the same trees several times (each tree is still read and verified once).
   */
  treeMemo(maxEntries = 65_536): (id: string) => Promise<TreeEntry[]> {
    const kept = new Map<string, TreeEntry[]>();
    let held = 0;
    return async (id) => {
      let entries = kept.get(id);
      if (entries) return entries;
      entries = await this.store.readTree(id);
      if (held + entries.length <= maxEntries) {
        kept.set(id, entries);
        held += entries.length;
      }
      return entries;
    };
  }

  /** Refuse (400) to expand a stored tree over the limit a snapshot may hold (ContentStore.requireExpandable). */
  requireExpandable(treeId: string, what: string): Promise<void> {
    return this.store.requireExpandable(treeId, what);
  }

  /**
   * Refuse (400, naming `what` and the path) a tree holding a path deeper than MAX_TREE_DEPTH
   * (lib/domain/tree-depth.ts). `built`: trees the server built and has not stored yet, with
   * their expanded `sizes`; the rest are read from the store.
   */
  requireTreeDepth(root: string, what: string, built: ReadonlyMap<string, Buffer> = new Map(), sizes: ReadonlyMap<string, number> = new Map()): Promise<void> {
    const read = async (id: string) => {
      const raw = built.get(id);
      return raw ? decodeTree(raw) : this.store.readTree(id);
    };
    const bound = (id: string) => {
      const size = sizes.get(id);
      const known = this.store.depthBound(id);
      return size === undefined ? known : Math.min(pathsOf(size), known ?? Infinity);
    };
    return requireTreeDepth(root, what, read, bound, (id, depth) => this.store.rememberDepth(id, depth), MAX_TREE_DEPTH, new Pace());
  }

  /** A budget for one walk of a tree checked by requireExpandable. */
  walkBudget(what: string): WalkBudget {
    return this.store.walkBudget(what);
  }

  /** Resolve a clean relative path inside a snapshot's tree to its entry (null for the root). */
  async resolvePath(rootTree: string, relative: string): Promise<TreeEntry | null> {
    if (relative === '') return null;
    let treeId = rootTree;
    const parts = relative.split('/');
    let found: TreeEntry | null = null;
    for (let i = 0; i < parts.length; i++) {
      const entry = (await this.store.readTree(treeId)).find((e) => e.name === parts[i]);
      if (!entry) throw new NotFound(`path ${relative} is not in the snapshot`);
      if (i < parts.length - 1 && entry.kind !== 'directory') throw new NotFound(`path ${relative} is not in the snapshot`);
      found = entry;
      treeId = entry.id;
    }
    return found;
  }

  readBlob(id: string): Promise<Buffer> {
    return this.store.readObject('blob', id);
  }

  /** A blob's bytes in pieces of at most `piece` bytes, verified as readBlob does (see decodeObjectFrameStream). */
  async *blobPieces(id: string, piece = 1024 * 1024): AsyncGenerator<Buffer> {
    const loc = this.store.locator('blob', id);
    if (!loc) throw new NotFound(`blob ${id} is not present`);
    if (loc.raw_length <= piece) {
      yield await this.store.readLocated(loc);
      return;
    }
    const entry: PackEntry = { id: loc.id, offset: loc.offset, length: loc.length, raw_length: loc.raw_length, crc32: loc.crc32 };
    yield* decodeObjectFrameStream(entry, this.store.packFile(PACK_KIND_OBJECT, loc.pack_id), 'blob', piece);
  }

  rawSize(kind: ObjectKind, id: string): number {
    const loc = this.store.locator(kind, id);
    if (!loc) throw new NotFound(`${kind} ${id} is not present`);
    return loc.raw_length;
  }

  // ------------------------------------------------------------ plan and packs

  /**
   * A pack counts as present when it is committed or staged (uploaded and verified, not yet
   * committed): an interrupted push resumes without re-sending what arrived.
   */
  async plan(snapshotIds: string[], objectPacks: string[], treePacks: string[]) {
    const split = async (ids: string[], present: (id: string) => boolean | Promise<boolean>) => {
      const p: string[] = [];
      const m: string[] = [];
      for (const id of ids) (isContentId(id) && (await present(id)) ? p : m).push(id);
      return [p, m];
    };
    const packPresent = (kind: PackKind) => async (id: string) => this.store.isCommittedPack(kind, id) || (await this.store.isStagedPack(kind, id));
    const [presentSnapshots, missingSnapshots] = await split(snapshotIds, (id) => this.store.hasSnapshot(id));
    const [presentObjects, missingObjects] = await split(objectPacks, packPresent(PACK_KIND_OBJECT));
    const [presentTrees, missingTrees] = await split(treePacks, packPresent(PACK_KIND_TREE));
    return {
      checked_snapshot_ids: snapshotIds,
      present_snapshot_ids: presentSnapshots,
      missing_snapshot_ids: missingSnapshots,
      present_object_pack_ids: presentObjects,
      missing_object_pack_ids: missingObjects,
      present_tree_pack_ids: presentTrees,
      missing_tree_pack_ids: missingTrees,
    };
  }

  /** `declaredLength`: the body's Content-Length when known; it bounds the header frame. */
  uploadPack(kind: PackKind, packId: string, body: AsyncIterable<Buffer> | Iterable<Buffer>, limit: number, declaredLength: number | null = null) {
    requireContentId(packId, 'pack_id');
    return this.store.stagePack(kind, packId, screenPackUpload(body, kind, declaredLength), limit);
  }

  openPack(kind: PackKind, packId: string) {
    if (!isContentId(packId)) throw new NotFound(`pack ${packId} is not present`);
    return this.store.openPack(kind, packId);
  }

  // ------------------------------------------------------------ commit

  /** A bulk-sync commit: everything is checked against the transaction's view before any staging. */
  commit(req: CommitRequest): Promise<CommitResult> {
    return this.store.transact((tx) => this.commitIn(tx, req));
  }

  /**
   * A bulk-sync commit that also records, for each of its snapshots, the git commit it was
   * imported from (docs/git.md): one transaction, so the snapshots, their git commits and the
   * line move are all durable or none is. Rows are checked before the transaction (a commit
   * id is the hash of its bytes); a snapshot that already has another git commit → 409.
   */
  async importGit(req: CommitRequest, rows: { snapshot_id: string; commit_id: string; raw: string; gitlinks?: Gitlink[] | null }[]): Promise<CommitResult & { git_commits: { recorded: number; skipped: number } }> {
    if (rows.length > MAX_GIT_ROWS) throw new Invalid(`git_commits holds ${rows.length} rows, more than ${MAX_GIT_ROWS}`);
    const records: GitCommitRecord[] = [];
    const bySnapshot = new Map<string, GitCommitRecord>();
    for (const row of rows) {
      requireContentId(row.snapshot_id, 'git_commits[].snapshot_id');
      const { gitlinks } = checkGitCommitRow(row);
      const record: GitCommitRecord = { snapshot_id: row.snapshot_id, commit_id: row.commit_id, origin: 'imported', raw: row.raw, gitlinks };
      const twin = bySnapshot.get(row.snapshot_id);
      if (twin) {
        if (twin.commit_id !== record.commit_id) throw new Conflict(`snapshot ${row.snapshot_id} is given two git commits (${twin.commit_id}, ${record.commit_id})`);
        continue;
      }
      bySnapshot.set(row.snapshot_id, record);
      records.push(record);
    }
    const incoming = new Set(req.snapshots.map((s) => s.snapshot_id));
    return this.store.transact(async (tx) => {
      const result = await this.commitIn(tx, req);
      let recorded = 0;
      let skipped = 0;
      for (const r of records) {
        if (!incoming.has(r.snapshot_id) && !tx.hasSnapshot(r.snapshot_id)) throw new NotFound(`git commit ${r.commit_id}: snapshot ${r.snapshot_id} is neither stored nor in this commit`);
        const existing = tx.entity<GitCommitRecord>(GIT_COMMIT, r.snapshot_id);
        if (existing) {
          if (existing.commit_id !== r.commit_id) throw new Conflict(`snapshot ${r.snapshot_id} already has git commit ${existing.commit_id}, not ${r.commit_id}`);
          skipped++;
          continue;
        }
        const twin = tx.entity<GitCommitIdRecord>(GIT_COMMIT_ID, r.commit_id);
        if (twin && twin.snapshot_id !== r.snapshot_id) throw new Conflict(`git commit ${r.commit_id} is already the commit of snapshot ${twin.snapshot_id}`);
        tx.upsert(GIT_COMMIT, r.snapshot_id, r);
        tx.upsert(GIT_COMMIT_ID, r.commit_id, { commit_id: r.commit_id, snapshot_id: r.snapshot_id } satisfies GitCommitIdRecord);
        recorded++;
      }
      return { ...result, git_commits: { recorded, skipped } };
    });
  }

  /**
   * Record commits an export wrote (docs/git.md, "Export"), one transaction for the batch: a
   * snapshot with no git commit gets an `exported` record; an imported one the export had to
   * rewrite keeps its record, with the written commit added as `export`. Each gets its commit-id
   * entry. A row that is already recorded is skipped; one that contradicts the map is a conflict.
   */
  recordGitExports(rows: readonly { snapshot_id: string; commit_id: string; raw: string }[]): Promise<{ recorded: number; skipped: number }> {
    return this.store.transact(async (tx) => {
      let recorded = 0;
      let skipped = 0;
      for (const row of rows) {
        if (!tx.hasSnapshot(row.snapshot_id)) throw new NotFound(`snapshot ${row.snapshot_id} is not present`);
        const existing = tx.entity<GitCommitRecord>(GIT_COMMIT, row.snapshot_id);
        if (existing && exportedCommitId(existing) === row.commit_id) {
          skipped++;
          continue;
        }
        if (existing && (existing.origin === 'exported' || existing.export)) throw new Conflict(`snapshot ${row.snapshot_id} was exported as git commit ${exportedCommitId(existing)}, not ${row.commit_id}`);
        const twin = tx.entity<GitCommitIdRecord>(GIT_COMMIT_ID, row.commit_id);
        if (twin && twin.snapshot_id !== row.snapshot_id) throw new Conflict(`git commit ${row.commit_id} is already the commit of snapshot ${twin.snapshot_id}`);
        const record: GitCommitRecord = existing
          ? { ...existing, export: { commit_id: row.commit_id, raw: row.raw } }
          : { snapshot_id: row.snapshot_id, commit_id: row.commit_id, origin: 'exported', raw: row.raw, gitlinks: [] };
        tx.upsert(GIT_COMMIT, row.snapshot_id, record);
        tx.upsert(GIT_COMMIT_ID, row.commit_id, { commit_id: row.commit_id, snapshot_id: row.snapshot_id } satisfies GitCommitIdRecord);
        recorded++;
      }
      return { recorded, skipped };
    });
  }

  /**
   * Record git tags an import brought (docs/git.md "Import every branch and tag"), in one
   * commit: each names a commit some import recorded (its snapshot is the tag's). Tags are
   * read-only: one recorded already is left as it is when the row says the same, and refused
   * (said in `refused`, the others still recorded) when it names another commit or object. A
   * malformed row is 400 and nothing is written.
   */
  recordGitTags(rows: readonly { name: string; commit_id: string; raw?: string | null }[]): Promise<{ recorded: number; unchanged: number; refused: { name: string; reason: string }[] }> {
    if (rows.length > MAX_GIT_TAGS) throw new TooLarge(`at most ${MAX_GIT_TAGS} tags per request`);
    const checked = rows.map((row) => ({ row, tagId: checkGitTagRow(row) }));
    const names = new Set<string>();
    for (const { row } of checked) {
      if (names.has(row.name)) throw new Invalid(`tag ${row.name} is given twice`);
      names.add(row.name);
    }
    return this.store.transact(async (tx) => {
      let recorded = 0;
      let unchanged = 0;
      const refused: { name: string; reason: string }[] = [];
      const now = nowSeconds();
      for (const { row, tagId } of checked) {
        const index = tx.entity<GitCommitIdRecord>(GIT_COMMIT_ID, row.commit_id);
        if (!index) {
          refused.push({ name: row.name, reason: `commit ${row.commit_id} was not imported (a tag is recorded only for a commit of an imported line)` });
          continue;
        }
        const existing = tx.entity<GitTagRecord>(GIT_TAG, row.name);
        if (existing) {
          if (existing.commit_id === row.commit_id && existing.tag_id === tagId) unchanged++;
          else refused.push({ name: row.name, reason: `tag ${row.name} is read-only: it names ${existing.tag_id ?? existing.commit_id} already` });
          continue;
        }
        tx.upsert(GIT_TAG, row.name, { name: row.name, commit_id: row.commit_id, snapshot_id: index.snapshot_id, tag_id: tagId, raw: tagId === null ? null : row.raw!, recorded_at_s: now } satisfies GitTagRecord);
        recorded++;
      }
      return { recorded, unchanged, refused };
    });
  }

  /** The git commit with this id and its snapshot, through the commit-id index (404 when none). */
  gitCommitById(commitId: string): GitCommitRecord {
    const key = commitId.toLowerCase() === commitId ? commitId : '';
    const index = isGitId(key) ? this.store.entity<GitCommitIdRecord>(GIT_COMMIT_ID, key) : undefined;
    const r = index ? this.store.entity<GitCommitRecord>(GIT_COMMIT, index.snapshot_id) : undefined;
    if (!r) throw new NotFound(`no snapshot has git commit ${commitId.slice(0, 80)}`);
    return r;
  }

  /** The git commit a snapshot was imported from or exported as (404 when it has none). */
  gitCommit(snapshotId: string): GitCommitRecord {
    if (!isContentId(snapshotId)) throw new NotFound(`snapshot ${snapshotId} is not present`);
    if (!this.store.hasSnapshot(snapshotId)) throw new NotFound(`snapshot ${snapshotId} is not present`);
    const r = this.store.entity<GitCommitRecord>(GIT_COMMIT, snapshotId);
    if (!r) throw new NotFound(`snapshot ${snapshotId} has no git commit`);
    return r;
  }

  private async commitIn(tx: Txn, req: CommitRequest): Promise<CommitResult> {
    const upserted = { ...ZERO };
    const skipped = { ...ZERO };
    const adopt: { kind: PackKind; packId: string }[] = [];
    // Headers of every pack this commit may reference: committed ones and the listed staged ones.
    const headers = new Map<string, Map<string, PackEntry>>();
    // A listed pack that a locator row points into is read once: its header is kept from the
    // listing check until the rows are checked against it (then only the id map above stays).
    // Others are dropped at once, so listing many packs costs one header's memory at a time.
    const pointedAt = new Set<string>();
    for (const r of req.blob_locators) pointedAt.add(`${PACK_KIND_OBJECT}:${r.pack_id}`);
    for (const r of req.tree_locators) pointedAt.add(`${PACK_KIND_TREE}:${r.pack_id}`);
    const kept = new Map<string, Awaited<ReturnType<Txn['packHeader']>>>();
    const readHeader = async (kind: PackKind, packId: string, keep: boolean) => {
      const key = `${kind}:${packId}`;
      const cached = kept.get(key);
      if (cached) {
        if (!keep) kept.delete(key);
        return cached;
      }
      const read = await tx.packHeader(kind, packId);
      if (keep && pointedAt.has(key)) kept.set(key, read);
      return read;
    };
    const headerOf = async (kind: PackKind, packId: string, listed: Set<string>): Promise<Map<string, PackEntry>> => {
      const key = `${kind}:${packId}`;
      let entries = headers.get(key);
      if (entries) return entries;
      if (!tx.isAdoptedPack(kind, packId) && !listed.has(packId)) {
        throw new NotFound(`${kind === PACK_KIND_OBJECT ? 'object' : 'tree'} pack ${packId} is neither committed nor listed in this commit`);
      }
      const { header } = await readHeader(kind, packId, false);
      entries = new Map(header.entries.map((e) => [e.id, e]));
      headers.set(key, entries);
      return entries;
    };

    const listedPacks = async (kind: PackKind, rows: PackRow[], counter: 'object_packs' | 'tree_packs') => {
      const listed = new Set<string>();
      for (const row of rows) {
        requireContentId(row.pack_id, 'pack_id');
        if (listed.has(row.pack_id)) continue;
        listed.add(row.pack_id);
        const { header, byteLength } = await readHeader(kind, row.pack_id, true);
        const committed = tx.isAdoptedPack(kind, row.pack_id);
        if (row.byte_length !== undefined && row.byte_length !== byteLength) throw new Conflict(`pack ${row.pack_id} is ${byteLength} bytes, the row says ${row.byte_length}`);
        if (row.object_count !== undefined && row.object_count !== header.entries.length) throw new Conflict(`pack ${row.pack_id} holds ${header.entries.length} objects, the row says ${row.object_count}`);
        if (committed) skipped[counter]++;
        else {
          upserted[counter]++;
          adopt.push({ kind, packId: row.pack_id });
        }
      }
      return listed;
    };
    const listedObjectPacks = await listedPacks(PACK_KIND_OBJECT, req.object_packs, 'object_packs');
    const listedTreePacks = await listedPacks(PACK_KIND_TREE, req.tree_packs, 'tree_packs');

    // Thousands of rows: the header of the row's pack is awaited only when the pack changes
    // (rows come grouped by pack), and a pack id equal to the previous row's is valid already.
    const newLocators = async <R extends LocatorRow>(kind: ObjectKind, rows: R[], idOf: (row: R) => string): Promise<Map<string, Locator>> => {
      const packKind = kind === 'blob' ? PACK_KIND_OBJECT : PACK_KIND_TREE;
      const listed = kind === 'blob' ? listedObjectPacks : listedTreePacks;
      const counter = kind === 'blob' ? 'blobs' : 'trees';
      const idField = `${kind}_id`;
      const fresh = new Map<string, Locator>();
      const skippedIds = new Set<string>();
      let lastPack: string | null = null;
      let header = new Map<string, PackEntry>();
      for (const row of rows) {
        const id = idOf(row);
        requireContentId(id, idField);
        if (row.pack_id !== lastPack) requireContentId(row.pack_id, 'pack_id');
        if (!CRC32_HEX.test(row.crc32)) throw new Invalid(`${kind} ${id}: crc32 must be 8 lowercase hex characters`);
        if (row.pack_id !== lastPack) {
          header = await headerOf(packKind, row.pack_id, listed);
          lastPack = row.pack_id;
        }
        const entry = header.get(id);
        const loc: Locator = { kind, id, pack_id: row.pack_id, offset: row.offset, length: row.length, raw_length: row.raw_length, crc32: Number.parseInt(row.crc32, 16) };
        if (!entry || entry.offset !== loc.offset || entry.length !== loc.length || entry.raw_length !== loc.raw_length || entry.crc32 !== loc.crc32) {
          throw new Conflict(`${kind} ${id}: the row disagrees with the header of pack ${row.pack_id}`);
        }
        const existing = tx.locator(kind, id);
        if (existing) {
          if (existing.raw_length !== loc.raw_length) throw new Conflict(`${kind} ${id}: the row disagrees with the stored object`);
          if (!skippedIds.has(id)) skipped[counter]++;
          skippedIds.add(id);
          continue;
        }
        if (fresh.has(id)) continue;
        fresh.set(id, loc);
        upserted[counter]++;
      }
      return fresh;
    };
    const blobs = await newLocators('blob', req.blob_locators, (r) => r.blob_id);
    const trees = await newLocators('tree', req.tree_locators, (r) => r.tree_id);
    // Adopt only the staged packs a new locator points into: a listed pack whose objects are all
    // stored already stays in staging (and expires) instead of sitting unreferenced in packs/.
    const referenced = new Set([...blobs.values(), ...trees.values()].map((l) => `${l.kind === 'blob' ? PACK_KIND_OBJECT : PACK_KIND_TREE}:${l.pack_id}`));
    for (let i = adopt.length - 1; i >= 0; i--) {
      if (referenced.has(`${adopt[i].kind}:${adopt[i].packId}`)) continue;
      const counter = adopt[i].kind === PACK_KIND_OBJECT ? 'object_packs' : 'tree_packs';
      upserted[counter]--;
      skipped[counter]++;
      adopt.splice(i, 1);
    }

    // Closure: every new tree's children must be present already or arrive in this commit.
    // Names a checkout must not write are noted on the way (uploads refuse most of them; a pack
    // staged before that check, or a name refused only at the top, is caught here).
    let refusedBelow = false;
    const refusedAtTop = new Set<string>();
    // What each new tree's size depends on (its blob entries, its directories' tree ids).
    const shapes = new Map<string, TreeShape>();
    const pace = new Pace();
    for (const loc of trees.values()) {
      const raw = await tx.readLocated(loc);
      let entries: TreeEntry[];
      try {
        entries = decodeTree(raw);
      } catch (err) {
        throw new Invalid(`tree ${loc.id}: ${(err as Error).message}`);
      }
      const shape: TreeShape = { blobs: 0, dirs: [] };
      shapes.set(loc.id, shape);
      if (pace.tick(entries.length)) await pace.pause();
      for (const e of entries) {
        if (e.kind === 'directory') shape.dirs.push(e.id);
        else shape.blobs++;
        if (refusedEntryName(e.name, true)) {
          if (refusedEntryName(e.name, false)) refusedBelow = true;
          else refusedAtTop.add(loc.id);
        }
        const isTree = e.kind === 'directory';
        // This commit's own objects first: a map lookup, where the store's is an index search.
        const present = isTree ? trees.has(e.id) || tx.has('tree', e.id) : blobs.has(e.id) || tx.has('blob', e.id);
        if (!present) throw new NotFound(`tree ${loc.id} references ${isTree ? 'tree' : 'blob'} ${e.id} (${e.name}), which is not present`);
      }
    }

    // Snapshots: recompute every id; roots and parents present or arriving; parents first.
    const incoming = new Map<string, { row: SnapshotRow; canonical: Buffer }>();
    for (const row of req.snapshots) {
      requireContentId(row.snapshot_id, 'snapshot_id');
      const canonical = encodeSnapshot({ root_tree_id: row.root_tree_id, parent_snapshot_ids: row.parent_snapshot_ids, created_at_s: row.created_at_s, message: row.message });
      const actual = sha256Hex(canonical);
      if (actual !== row.snapshot_id) throw new Invalid(`snapshot row ${row.snapshot_id} hashes to ${actual}`);
      if (tx.hasSnapshot(row.snapshot_id) || incoming.has(row.snapshot_id)) {
        skipped.snapshots++;
        continue;
      }
      incoming.set(row.snapshot_id, { row, canonical });
    }
    for (const { row } of incoming.values()) {
      if (!tx.has('tree', row.root_tree_id) && !trees.has(row.root_tree_id)) throw new NotFound(`snapshot ${row.snapshot_id} root tree ${row.root_tree_id} is not present`);
      for (const p of row.parent_snapshot_ids) {
        if (!tx.hasSnapshot(p) && !incoming.has(p)) throw new NotFound(`snapshot ${row.snapshot_id} parent ${p} is not present`);
      }
    }
    // Expanded sizes before anything walks a new tree by path (the names check below does).
    const sizes = await newTreeSizes(tx, shapes, pace);
    for (const { row } of incoming.values()) {
      const paths = pathsOf(sizes.get(row.root_tree_id) ?? (await tx.expandedSize(row.root_tree_id)));
      if (paths > tx.maxSnapshotPaths) throw new TooLarge(describeOverLimit(`snapshot ${row.snapshot_id}`, paths, tx.maxSnapshotPaths));
    }
    for (const [id, size] of sizes) {
      if (trees.has(id) && pathsOf(size) > tx.maxSnapshotPaths) throw new TooLarge(describeOverLimit(`tree ${id}`, pathsOf(size), tx.maxSnapshotPaths));
    }
    await refuseTooDeep(tx, [...incoming.values()].map(({ row }) => ({ id: row.root_tree_id, what: `snapshot ${row.snapshot_id}` })), trees, shapes, sizes, pace);
    await this.refuseNames(tx, [...incoming.values()].map(({ row }) => row.root_tree_id), trees, refusedBelow, refusedAtTop);
    const ordered: Buffer[] = [];
    const placed = new Set<string>();
    const place = (id: string) => {
      if (placed.has(id)) return;
      placed.add(id);
      const item = incoming.get(id)!;
      for (const p of item.row.parent_snapshot_ids) if (incoming.has(p)) place(p);
      ordered.push(item.canonical);
    };
    for (const id of incoming.keys()) place(id);
    upserted.snapshots = ordered.length;

    // The line moves after ingest, under the same rules as PUT; checked before anything is written.
    let nextLine: LineState | null = null;
    let remoteLine: LineProjection | null = null;
    if (req.line_update) {
      const u = req.line_update;
      nextLine = checkLineMove(tx, u.line_name, { head_snapshot_id: u.head_snapshot_id, expected_head_snapshot_id: u.expected_head_snapshot_id }, new Set(incoming.keys()));
      const current = tx.line(u.line_name);
      remoteLine = nextLine ? lineProjection(nextLine) : current ? lineProjection(current) : null;
    }

    // Everything checked: stage it (one transaction, so all of it commits or none).
    for (const { kind, packId } of adopt) tx.adoptPack(kind, packId);
    for (const loc of blobs.values()) tx.addLocator(loc);
    for (const loc of trees.values()) tx.addLocator({ ...loc, expanded: sizes.get(loc.id)! });
    for (const canonical of ordered) tx.addSnapshot(canonical);
    if (nextLine) {
      tx.emitAll(lineEvents(nextLine.name, tx.line(nextLine.name), nextLine));
      tx.setLine(nextLine);
    }
    return { upserted, skipped, remote_line: remoteLine, line_head_updated_after_ingest: nextLine !== null };
  }

  /**
   * Refuse the commit (400, nothing staged) when a snapshot's tree holds a name a checkout must
   * not write (domain/content.ts refusedEntryName), naming each path from the snapshot's root.
   * Only this commit's new trees are walked (and each snapshot's root, which the top-level rule
   * needs even when it is stored already); trees stored before the rule existed are fsck's to report.
   */
  private async refuseNames(tx: Txn, roots: string[], fresh: Map<string, Locator>, refusedBelow: boolean, refusedAtTop: Set<string>): Promise<void> {
    const read = async (id: string) => decodeTree(await tx.readLocated((fresh.get(id) ?? tx.locator('tree', id))!));
    let refused = refusedBelow || roots.some((root) => refusedAtTop.has(root));
    for (const root of roots) {
      if (refused) break;
      if (!fresh.has(root)) refused = (await read(root)).some((e) => refusedEntryName(e.name, true));
    }
    if (!refused) return;
    const found: RefusedName[] = [];
    const seen = new Set<string>();
    for (const root of new Set(roots)) found.push(...(await findRefusedNames(root, read, (id) => fresh.has(id), seen)));
    // A new tree no snapshot of this commit reaches: named by its id.
    for (const id of fresh.keys()) {
      if (seen.has(id)) continue;
      for (const e of await read(id)) {
        const rule = refusedEntryName(e.name, false);
        if (rule) found.push({ path: `tree ${id}: ${e.name}`, rule });
      }
    }
    if (found.length) throw new Invalid(`refused tree entry names (a checkout must not write them): ${describeRefusedNames(found)}`);
  }

  // ------------------------------------------------------------ manifests

  /** Snapshots from `head` back to (not including) `stop`, parents before children. */
  private ancestry(head: string, stop: Set<string>): StoredSnapshot[] {
    const out: StoredSnapshot[] = [];
    const seen = new Set<string>();
    // Iterative post-order DFS so deep histories do not overflow the stack.
    const stack: { id: string; expanded: boolean }[] = [{ id: head, expanded: false }];
    const records = new Map<string, StoredSnapshot>();
    while (stack.length) {
      const top = stack[stack.length - 1];
      if (top.expanded) {
        stack.pop();
        out.push(records.get(top.id)!);
        continue;
      }
      if (seen.has(top.id) || stop.has(top.id)) {
        stack.pop();
        continue;
      }
      seen.add(top.id);
      top.expanded = true;
      const record = this.store.snapshot(top.id);
      if (!record) throw new NotFound(`snapshot ${top.id} is not present`);
      records.set(top.id, record);
      for (const p of [...record.parent_snapshot_ids].reverse()) if (!seen.has(p) && !stop.has(p)) stack.push({ id: p, expanded: false });
    }
    return out;
  }

  /** Every snapshot reachable from `ids` (inclusive). */
  private closureOfSnapshots(ids: string[]): Set<string> {
    const seen = new Set<string>();
    const stack = [...ids];
    while (stack.length) {
      const id = stack.pop()!;
      if (seen.has(id)) continue;
      const record = this.store.snapshot(id);
      if (!record) continue;
      seen.add(id);
      stack.push(...record.parent_snapshot_ids);
    }
    return seen;
  }

  /** Tree and blob ids reachable from `roots`, not descending into ids in `exclude`. */
  private async objectClosure(roots: string[], exclude: { trees: Set<string>; blobs: Set<string> }) {
    const trees: string[] = [];
    const blobs: string[] = [];
    const seenTrees = new Set<string>();
    const seenBlobs = new Set<string>();
    const stack = roots.filter((r) => !exclude.trees.has(r));
    // Distinct trees only (never the expansion), but many of them: yield as it goes.
    const pace = new Pace();
    while (stack.length) {
      const id = stack.pop()!;
      if (seenTrees.has(id)) continue;
      seenTrees.add(id);
      trees.push(id);
      const entries = await this.store.readTree(id);
      if (pace.tick(entries.length)) await pace.pause();
      for (const e of entries) {
        if (e.kind === 'directory') {
          if (!seenTrees.has(e.id) && !exclude.trees.has(e.id)) stack.push(e.id);
        } else if (!seenBlobs.has(e.id) && !exclude.blobs.has(e.id)) {
          seenBlobs.add(e.id);
          blobs.push(e.id);
        }
      }
    }
    return { trees, blobs };
  }

  private async manifestRows(snapshots: StoredSnapshot[], exclude: { trees: Set<string>; blobs: Set<string> }) {
    const roots = snapshots.map((s) => s.root_tree_id);
    const { trees, blobs } = await this.objectClosure(roots, exclude);
    const blobLocs = blobs.map((id) => this.mustLocate('blob', id));
    // Trees leaves-first, so a reader can commit them in order (children before parents).
    const treeLocs = trees.reverse().map((id) => this.mustLocate('tree', id));
    const objectPacks = this.packRows(PACK_KIND_OBJECT, blobLocs);
    const treePacks = this.packRows(PACK_KIND_TREE, treeLocs);
    return {
      snapshots: snapshots.map(snapshotRow),
      object_packs: await objectPacks,
      tree_packs: await treePacks,
      blob_locators: blobLocs.map(blobLocatorRow),
      tree_locators: treeLocs.map(treeLocatorRow),
    };
  }

  private mustLocate(kind: ObjectKind, id: string): Locator {
    const loc = this.store.locator(kind, id);
    if (!loc) throw new NotFound(`${kind} ${id} is not present`);
    return loc;
  }

  private async packRows(kind: PackKind, locs: Locator[]): Promise<PackRow[]> {
    const ids: string[] = [];
    const seen = new Set<string>();
    for (const l of locs) if (!seen.has(l.pack_id)) { seen.add(l.pack_id); ids.push(l.pack_id); }
    // A header is a few small reads: several files at a time rather than one after another
    // (at most 16 for all of this authority's manifests); a failure is reported in id order.
    const reads = await Promise.allSettled(ids.map((id) => this.headerReads.runExclusive(async () => {
      const { header, byteLength } = await this.store.packHeader(kind, id);
      return packRow({ pack_id: id, byte_length: byteLength, object_count: header.entries.length });
    })));
    return reads.map((r) => {
      if (r.status === 'rejected') throw r.reason;
      return r.value;
    });
  }

  /** Pack header reads of manifests in flight, across requests. */
  private readonly headerReads = new Semaphore(16);

  async importManifest(snapshotId: string) {
    this.snapshot(snapshotId);
    const snapshots = this.ancestry(snapshotId, new Set());
    const rows = await this.manifestRows(snapshots, { trees: new Set(), blobs: new Set() });
    return { snapshot_id: snapshotId, ...rows, line_update: null };
  }

  async pullManifest(headId: string, haveIds: string[]) {
    this.snapshot(headId);
    const haveClosure = this.closureOfSnapshots(haveIds.filter((id) => this.store.hasSnapshot(id)));
    const snapshots = this.ancestry(headId, haveClosure);
    // The boundary: snapshots the caller has that the walk from head stopped at.
    const boundary = new Set<string>();
    for (const s of snapshots) for (const p of s.parent_snapshot_ids) if (haveClosure.has(p)) boundary.add(p);
    if (haveClosure.has(headId)) boundary.add(headId);
    const exclude = { trees: new Set<string>(), blobs: new Set<string>() };
    if (boundary.size) {
      const roots = [...boundary].map((id) => this.store.snapshot(id)!.root_tree_id);
      const have = await this.objectClosure(roots, exclude);
      have.trees.forEach((t) => exclude.trees.add(t));
      have.blobs.forEach((b) => exclude.blobs.add(b));
    }
    const rows = await this.manifestRows(snapshots, exclude);
    return { head_snapshot_id: headId, boundary_snapshot_ids: [...boundary], snapshot_id: headId, ...rows, line_update: null };
  }
}

/** A new tree as its expanded size needs it: how many blob entries, which directory entries. */
interface TreeShape { blobs: number; dirs: string[] }

/**
 * The expanded sizes of a commit's new trees (`shapes`), children first; a stored child's size
 * is its recorded one (or computed once, for a tree indexed before sizes were). O(new trees and
 * their entries), whatever they expand to. The map also holds the stored children it looked up.
 */
async function newTreeSizes(tx: Txn, shapes: Map<string, TreeShape>, pace: Pace): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  for (const start of shapes.keys()) {
    const stack = [start];
    while (stack.length) {
      const top = stack[stack.length - 1];
      if (sizes.has(top)) {
        stack.pop();
        continue;
      }
      const shape = shapes.get(top)!;
      let ready = true;
      for (const d of shape.dirs) {
        if (!sizes.has(d) && shapes.has(d)) {
          stack.push(d);
          ready = false;
        }
      }
      if (!ready) continue;
      stack.pop();
      let size = 1 + shape.blobs;
      for (const d of shape.dirs) {
        let child = sizes.get(d);
        if (child === undefined) sizes.set(d, (child = await tx.expandedSize(d)));
        size += child;
      }
      sizes.set(top, size);
      if (pace.tick(shape.dirs.length + 1)) await pace.pause();
    }
  }
  return sizes;
}

/**
 * Refuse the commit (400, nothing staged) when a snapshot's root or a new tree holds a path
 * deeper than MAX_TREE_DEPTH (lib/domain/tree-depth.ts), stored trees below it included: each
 * root, and each new tree no other new tree names (the others lie below one of those). A subtree
 * whose path count or known depth fits where it sits is not read, so a commit on top of stored
 * trees reads little more than its new ones.
 */
async function refuseTooDeep(tx: Txn, roots: { id: string; what: string }[], fresh: Map<string, Locator>, shapes: Map<string, TreeShape>, sizes: Map<string, number>, pace: Pace): Promise<void> {
  const read = async (id: string) => decodeTree(await tx.readLocated((fresh.get(id) ?? tx.locator('tree', id))!));
  const bound = (id: string) => {
    const size = sizes.get(id);
    const known = tx.depthBound(id);
    return size === undefined ? known : Math.min(pathsOf(size), known ?? Infinity);
  };
  const named = new Set<string>();
  for (const shape of shapes.values()) for (const d of shape.dirs) named.add(d);
  const tops = [...roots];
  for (const id of fresh.keys()) if (!named.has(id)) tops.push({ id, what: `tree ${id}` });
  for (const { id, what } of tops) await requireTreeDepth(id, what, read, bound, (t, d) => tx.rememberDepth(t, d), MAX_TREE_DEPTH, pace);
}

/** The line after `move`, or null for a replay; the new head must exist (or be in `incoming`). */
function checkLineMove(tx: Txn, name: string, move: LineMove, incoming?: Set<string>): LineState | null {
  const next = moveLine(name, tx.line(name), move, nowSeconds());
  const head = next?.head_snapshot_id;
  if (head && !tx.hasSnapshot(head) && !incoming?.has(head)) throw new NotFound(`snapshot ${head} is not present`);
  return next;
}
