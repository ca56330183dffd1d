// push, pull and sync over the bulk remote-sync interface. Transfer order (spec): plan, upload
// missing packs, commit rows and snapshots, then line handling. Pull: manifest, download its
// packs, read the objects locally.
import { closeSync, mkdtempSync, openSync, promises as fsp, readSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeTree, snapshotId, type EntryKind, type TreeEntry } from '../domain/content.js';
import { decodeObjectFrame, PACK_KIND_OBJECT, PACK_KIND_TREE, type BuiltPack, type PackKind } from '../store/pack.js';
import { CairnClient, ServerError } from './http.js';
import { progressFor, type Progress } from './progress.js';
import { prepareOutput, scanDirectory } from './worktree.js';
import { MaterializePool, type MaterializeEntry } from './materialize-worker.js';
import { PackWorker } from './pack-worker.js';

const MEDIA: Record<PackKind, string> = {
  [PACK_KIND_OBJECT]: 'application/vnd.svc.remote-sync.object-pack+zstd',
  [PACK_KIND_TREE]: 'application/vnd.svc.remote-sync.tree-pack+zstd',
};
const PACK_PATH: Record<PackKind, string> = { [PACK_KIND_OBJECT]: 'object-packs', [PACK_KIND_TREE]: 'tree-packs' };
const SYNC = '/remote-sync/zstd-bulk';
/** Raw bytes per pack before a new pack is started. */
export const PACK_TARGET_BYTES = 16 * 1024 * 1024;
/** Objects per pack: well under the server's upload bound (MAX_UPLOAD_PACK_ENTRIES). */
export const PACK_TARGET_OBJECTS = 100_000;

/** CAIRN_TIMING=1 prints the duration of each transfer phase to stderr. */
function timer(): (label: string) => void {
  let last = performance.now();
  return (label) => {
    if (process.env.CAIRN_TIMING !== '1') return;
    const now = performance.now();
    process.stderr.write(`[timing] ${label}: ${(now - last).toFixed(0)} ms\n`);
    last = now;
  };
}

/** The line moved past the working copy's base: the push is refused, nothing changed. */
export class LineMovedError extends Error {
  constructor(readonly line: string, readonly base: string | null, readonly head: string | null) {
    super(`line ${line} moved since your base ${base ? base.slice(0, 12) : '(empty)'} (now at ${head ? head.slice(0, 12) : 'nothing'}): update first (cairn update)`);
  }
}

export interface PushOptions {
  server: string;
  repo: number;
  line: string;
  dir: string;
  parent?: string;
  /**
   * Working-copy push: the snapshot the copy was based on. It becomes the parent and the
   * compare-and-set guard; a line that moved past it refuses the push (LineMovedError).
   */
  base?: string | null;
  moveLine: boolean;
  message?: string;
  progress: Progress | boolean;
  compressionLevel?: number;
  /** Called with each path left out because it is not a file, directory or symlink. */
  onSkipped?: (rel: string) => void;
  /** Test hook: stop (throw) after this many packs were uploaded, before the commit. */
  stopAfterUploads?: number;
  /** Raw bytes per object pack (default PACK_TARGET_BYTES). */
  packTargetBytes?: number;
}

export interface PushResult {
  snapshot_id: string;
  root_tree_id: string;
  parent_snapshot_ids: string[];
  line: string;
  line_updated: boolean;
  unchanged: boolean;
  files: number;
  bytes: number;
  uploaded_packs: number;
  uploaded_bytes: number;
}

/**
 * Packs objects as they are found and uploads each pack as soon as it is built (plan, then PUT
 * when missing), at most two uploads in flight, so the server verifies one pack while the
 * client compresses the next. Pack bytes are dropped once uploaded. Packs are deterministic
 * (same objects in walk order, same level), so a push re-run after an interruption builds the
 * same pack ids and the plan reports the ones that arrived (staged) as present.
 */
class PackPipeline {
  readonly packs: { packId: string; kind: PackKind; byteLength: number; entries: BuiltPack['entries'] }[] = [];
  uploadedPacks = 0;
  uploadedBytes = 0;
  private batch: { id: string; raw: Buffer }[] = [];
  private batchBytes = 0;
  private readonly inflight = new Set<Promise<void>>();
  private readonly worker = new PackWorker();

  constructor(private readonly client: CairnClient, private readonly repo: number, private readonly level: number, private readonly progress: Progress,
    private readonly stopAfterUploads = Infinity, private readonly targetBytes = PACK_TARGET_BYTES) {}

  async add(id: string, raw: Buffer): Promise<void> {
    this.batch.push({ id, raw });
    this.batchBytes += raw.length;
    if (this.batchBytes >= this.targetBytes || this.batch.length >= PACK_TARGET_OBJECTS) await this.flush(PACK_KIND_OBJECT);
  }

  /** Hand a batch to the pack worker; its upload follows. At most three batches in flight. */
  async flush(kind: PackKind, objects?: { id: string; raw: Buffer }[]): Promise<void> {
    const items = objects ?? this.batch;
    if (!objects) {
      this.batch = [];
      this.batchBytes = 0;
    }
    if (this.failure !== null) {
      await this.settle();
      throw this.failure;
    }
    if (!items.length) return;
    // Waiting for a slot never rejects: a failed upload is reported once all others settled.
    while (this.inflight.size >= 3) await Promise.race([...this.inflight].map((p) => p.catch(() => undefined)));
    const task = this.worker.build(kind, items, this.level).then(async (pack) => {
      this.packs.push({ packId: pack.packId, kind, byteLength: pack.bytes.length, entries: pack.entries });
      await this.upload(pack);
    });
    const tracked = task.finally(() => this.inflight.delete(tracked));
    this.inflight.add(tracked);
    tracked.catch((err) => { if (this.failure === null) this.failure = err; }); // surfaced by flush()/finish()
  }

  private failure: unknown = null;

  /** Wait until no build or upload is in flight (whatever their outcome). */
  async settle(): Promise<void> {
    while (this.inflight.size) await Promise.allSettled(this.inflight);
  }

  private async upload(pack: BuiltPack): Promise<void> {
    const plan = await this.client.json('POST', this.client.repoPath(this.repo, `${SYNC}/plan`), {
      snapshot_ids: [],
      object_packs: pack.kind === PACK_KIND_OBJECT ? [pack.packId] : [],
      tree_packs: pack.kind === PACK_KIND_TREE ? [pack.packId] : [],
    });
    if ([...plan.missing_object_pack_ids, ...plan.missing_tree_pack_ids].includes(pack.packId)) {
      if (this.uploadedPacks >= this.stopAfterUploads) throw new Error('stopped before the upload (test hook)');
      await this.client.putRaw(this.client.repoPath(this.repo, `${SYNC}/${PACK_PATH[pack.kind]}/${pack.packId}`), MEDIA[pack.kind], pack.bytes);
      this.uploadedPacks++;
      this.uploadedBytes += pack.bytes.length;
    }
    if (pack.kind === PACK_KIND_OBJECT) this.progress.increment(pack.entries.reduce((n, e) => n + e.raw_length, 0));
  }

  /** Wait for every build and upload; on a failure, let the others settle first, then throw. */
  async finish(): Promise<void> {
    await this.flush(PACK_KIND_OBJECT);
    await this.settle();
    if (this.failure !== null) throw this.failure;
  }

  close(): Promise<void> {
    return this.worker.close();
  }
}

interface SnapshotListing {
  snapshot: { snapshot_id: string; root_tree_id: string; parent_snapshot_ids: string[]; created_at_s: number; message: string | null };
  files: { path: string; kind: EntryKind; blob_id: string; size: number }[];
  directories: { path: string; tree_id: string }[];
}

/** A snapshot's file projection without content (paths, kinds, blob ids, tree ids). */
export function listSnapshot(client: CairnClient, repo: number, id: string): Promise<SnapshotListing> {
  return client.json('GET', client.repoPath(repo, `/snapshots/${id}?include_content=false`));
}

/** At most this many other line heads are consulted for blobs the server already holds. */
const MAX_KNOWN_HEADS = 8;

/**
 * What the server already holds, learned from snapshots it can name: the parent, the target
 * line's head, then the most recently moved other line heads. Their listings (no content) name
 * every blob and tree; a push packs only the rest.
 */
async function knownContent(client: CairnClient, repo: number, first: (string | null)[]): Promise<{ blobs: Set<string>; trees: Set<string>; listings: Map<string, SnapshotListing> }> {
  const ids = new Set(first.filter((x): x is string => !!x));
  const lines = await client.json('GET', client.repoPath(repo, '/lines')).catch(() => ({ lines: [] }));
  const others = (lines.lines as { head_snapshot_id: string | null; updated_at_s?: number }[])
    .filter((l) => l.head_snapshot_id && !ids.has(l.head_snapshot_id))
    .sort((a, b) => (b.updated_at_s ?? 0) - (a.updated_at_s ?? 0))
    .slice(0, MAX_KNOWN_HEADS)
    .map((l) => l.head_snapshot_id!);
  for (const id of others) ids.add(id);
  const listings = new Map<string, SnapshotListing>();
  const blobs = new Set<string>();
  const trees = new Set<string>();
  await Promise.all([...ids].map(async (id) => {
    const listing = await listSnapshot(client, repo, id);
    listings.set(id, listing);
    for (const f of listing.files) blobs.add(f.blob_id);
    for (const d of listing.directories) trees.add(d.tree_id);
  }));
  return { blobs, trees, listings };
}

function asProgress(p: Progress | boolean): Progress {
  return typeof p === 'boolean' ? progressFor(process.stderr, p) : p;
}

export async function push(o: PushOptions): Promise<PushResult> {
  const client = new CairnClient(o.server);
  const t = timer();
  // Unknown repository (or unreachable server) is reported before the tree is scanned.
  await client.requireRepository(o.repo);
  const line = await client.lineOrNull(o.repo, o.line);
  const lineHead: string | null = line?.head_snapshot_id ?? null;
  const workingCopy = o.base !== undefined;
  if (workingCopy && lineHead !== o.base) throw new LineMovedError(o.line, o.base ?? null, lineHead);
  const parent = workingCopy ? o.base ?? null : o.parent ?? lineHead;
  const expectedHead = workingCopy ? o.base ?? null : lineHead;

  // Known before the scan, so each file is read once and packed in the same pass if it is new.
  const known = await knownContent(client, o.repo, [parent, lineHead]);
  const parentRecord = parent ? known.listings.get(parent)!.snapshot : null;
  t('known content');

  const progress = asProgress(o.progress);
  progress.start('push', 0);
  const pipeline = new PackPipeline(client, o.repo, o.compressionLevel ?? 3, progress, o.stopAfterUploads, o.packTargetBytes);
  let scan: Awaited<ReturnType<typeof scanDirectory>>;
  const unchangedTree = () => parentRecord !== null && parentRecord.root_tree_id === scan.rootTreeId && !o.parent && o.message === undefined;
  try {
    scan = await scanDirectory(o.dir, async (id, read) => {
      if (!known.blobs.has(id)) await pipeline.add(id, read());
    }, {
      onTotal: (bytes) => progress.setTotal(bytes),
      onFile: (size, id, first) => { if (!first || known.blobs.has(id)) progress.increment(size); },
    });
    t('scan+pack');
    for (const rel of scan.skipped) o.onSkipped?.(rel);
    if (!unchangedTree()) {
      const missingTrees = [...scan.trees.entries()].filter(([id]) => !known.trees.has(id)).sort(([a], [b]) => (a < b ? -1 : 1));
      for (let i = 0; i < missingTrees.length; i += PACK_TARGET_OBJECTS) {
        await pipeline.flush(PACK_KIND_TREE, missingTrees.slice(i, i + PACK_TARGET_OBJECTS).map(([id, raw]) => ({ id, raw })));
      }
    }
    await pipeline.finish();
  } finally {
    progress.stop();
    await pipeline.settle(); // an interrupted push leaves no upload running behind it
    await pipeline.close();
  }
  t('upload');
  const base = { root_tree_id: scan.rootTreeId, line: o.line, files: scan.fileCount, bytes: scan.byteCount };
  if (unchangedTree()) {
    return { ...base, snapshot_id: parent!, parent_snapshot_ids: parentRecord!.parent_snapshot_ids, line_updated: false, unchanged: true, uploaded_packs: 0, uploaded_bytes: 0 };
  }

  const snapshot = {
    root_tree_id: scan.rootTreeId,
    parent_snapshot_ids: parent ? [parent] : [],
    created_at_s: Math.floor(Date.now() / 1000),
    message: o.message ?? null,
  };
  const id = snapshotId(snapshot);
  const packs = pipeline.packs;
  let commit;
  try {
    commit = await client.json('POST', client.repoPath(o.repo, `${SYNC}/commit`), {
      contract: 'svc.remote_sync.zstd_bulk.commit.v1',
      object_packs: packs.filter((p) => p.kind === PACK_KIND_OBJECT).map(packRow),
      tree_packs: packs.filter((p) => p.kind === PACK_KIND_TREE).map(packRow),
      blob_locators: packs.filter((p) => p.kind === PACK_KIND_OBJECT).flatMap((p) => p.entries.map((e) => ({ blob_id: e.id, ...locatorFields(p.packId, e) }))),
      tree_locators: packs.filter((p) => p.kind === PACK_KIND_TREE).flatMap((p) => p.entries.map((e) => ({ tree_id: e.id, ...locatorFields(p.packId, e) }))),
      snapshots: [{ snapshot_id: id, ...snapshot }],
      line_update: o.moveLine ? { line_name: o.line, head_snapshot_id: id, expected_head_snapshot_id: expectedHead } : null,
    });
  } catch (err) {
    if (workingCopy && err instanceof ServerError && err.status === 409) {
      const now = await client.lineOrNull(o.repo, o.line).catch(() => null);
      if ((now?.head_snapshot_id ?? null) !== expectedHead) throw new LineMovedError(o.line, expectedHead, now?.head_snapshot_id ?? null);
    }
    throw err;
  }
  t('commit');
  return {
    ...base,
    snapshot_id: id,
    parent_snapshot_ids: snapshot.parent_snapshot_ids,
    line_updated: commit.line_head_updated_after_ingest === true,
    unchanged: false,
    uploaded_packs: pipeline.uploadedPacks,
    uploaded_bytes: pipeline.uploadedBytes,
  };
}

function packRow(p: { packId: string; byteLength: number; entries: unknown[] }) {
  return { pack_id: p.packId, byte_length: p.byteLength, object_count: p.entries.length };
}

function locatorFields(packId: string, e: { offset: number; length: number; raw_length: number; crc32: number }) {
  return { pack_id: packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32.toString(16).padStart(8, '0') };
}

// ---------------------------------------------------------------- pull

interface ManifestLocator { pack_id: string; offset: number; length: number; raw_length: number; crc32: string }

/** Objects read from packs downloaded into a local directory (kept open for positional reads). */
class LocalPacks {
  private readonly files = new Map<string, number>();
  constructor(private readonly client: CairnClient, private readonly repo: number, private readonly dir: string) {}

  /** Download packs, three at a time. */
  async fetch(kind: PackKind, packIds: Iterable<string>): Promise<void> {
    const todo = [...new Set(packIds)].filter((id) => !this.files.has(id));
    let next = 0;
    await Promise.all([0, 1, 2].map(async () => {
      while (next < todo.length) {
        const packId = todo[next++];
        const file = path.join(this.dir, `${packId}.pack`);
        await this.client.download(this.client.repoPath(this.repo, `${SYNC}/${PACK_PATH[kind]}/${packId}`), file);
        this.files.set(packId, openSync(file, 'r'));
      }
    }));
  }

  /** Start downloading each pack (three at a time, in order); each promise yields the file path. */
  fetchEach(kind: PackKind, packIds: string[]): Map<string, Promise<string>> {
    const resolvers = new Map<string, { resolve: (file: string) => void; reject: (err: Error) => void }>();
    const promises = new Map<string, Promise<string>>();
    for (const id of packIds) promises.set(id, new Promise((resolve, reject) => resolvers.set(id, { resolve, reject })));
    for (const p of promises.values()) p.catch(() => undefined); // awaited (and surfaced) by the caller
    let next = 0;
    void Promise.all([0, 1, 2].map(async () => {
      while (next < packIds.length) {
        const packId = packIds[next++];
        const file = path.join(this.dir, `${packId}.pack`);
        try {
          await this.client.download(this.client.repoPath(this.repo, `${SYNC}/${PACK_PATH[kind]}/${packId}`), file);
          resolvers.get(packId)!.resolve(file);
        } catch (err) {
          resolvers.get(packId)!.reject(err as Error);
        }
      }
    }));
    return promises;
  }

  read(id: string, loc: ManifestLocator): Buffer {
    const fd = this.files.get(loc.pack_id);
    if (fd === undefined) throw new Error(`pack ${loc.pack_id} was not downloaded`);
    const frame = Buffer.allocUnsafe(loc.length);
    readSync(fd, frame, 0, loc.length, loc.offset);
    return decodeObjectFrame({ id, offset: loc.offset, length: loc.length, raw_length: loc.raw_length, crc32: Number.parseInt(loc.crc32, 16) }, frame);
  }

  close(): void {
    for (const fd of this.files.values()) closeSync(fd);
    this.files.clear();
  }
}

export interface PullOptions {
  server: string;
  repo: number;
  line?: string;
  snapshot?: string;
  out: string;
  progress?: Progress | boolean;
}

export async function resolveSnapshot(client: CairnClient, repo: number, line?: string, snapshot?: string): Promise<string> {
  if (snapshot) return snapshot;
  const found = await client.lineOrNull(repo, line!);
  if (!found) throw new Error(`line ${line} does not exist in repository ${repo} on ${client.base}`);
  if (!found.head_snapshot_id) throw new Error(`line ${line} has no head snapshot`);
  return found.head_snapshot_id;
}

/** Object packs up to this size are downloaded into memory and handed to a worker without a copy. */
const IN_MEMORY_PACK_BYTES = 64 * 1024 * 1024;
/** Downloaded packs waiting for a worker, at most (bounds memory when writing is the slow side). */
const MAX_PACKS_AHEAD = 4;

export async function pull(o: PullOptions): Promise<{ snapshot_id: string; files: number; bytes: number }> {
  const client = new CairnClient(o.server);
  const t = timer();
  // Workers boot while the manifest travels; the main thread downloads, two workers decode and
  // write. (One worker was the default while two seemed to multiply the kernel's time: that was
  // ext4 scanning past recently freed inodes on every create, slow for any writer; on a clean
  // directory two workers pull the benchmark tree ~15 % faster.)
  const pool = new MaterializePool(Number(process.env.CAIRN_PULL_WORKERS) || 2);
  const temp = mkdtempSync(path.join(os.tmpdir(), 'cairn-pull-'));
  const packs = new LocalPacks(client, o.repo, temp);
  try {
    const [, id] = await Promise.all([client.requireRepository(o.repo), resolveSnapshot(client, o.repo, o.line, o.snapshot)]);
    let manifest;
    try {
      manifest = await client.json('GET', client.repoPath(o.repo, `${SYNC}/import-manifests/${id}`));
    } catch (err) {
      if (err instanceof ServerError && err.status === 404) throw new Error(`snapshot ${id} is not present in repository ${o.repo} on ${client.base}`);
      throw err;
    }
    t('manifest');
    const root = manifest.snapshots.find((s: { snapshot_id: string }) => s.snapshot_id === id)?.root_tree_id;
    if (!root) throw new Error(`import manifest does not describe snapshot ${id}`);
    const trees = new Map<string, ManifestLocator>(manifest.tree_locators.map((l: ManifestLocator & { tree_id: string }) => [l.tree_id, l]));
    const blobs = new Map<string, ManifestLocator>(manifest.blob_locators.map((l: ManifestLocator & { blob_id: string }) => [l.blob_id, l]));
    const packSize = new Map<string, number>((manifest.object_packs as { pack_id: string; byte_length?: number }[]).map((p) => [p.pack_id, p.byte_length ?? Infinity]));

    // Trees first (small), read here; then only the object packs that hold this snapshot's blobs.
    await packs.fetch(PACK_KIND_TREE, [...trees.values()].map((l) => l.pack_id));
    const treeCache = new Map<string, TreeEntry[]>();
    const readTree = (treeId: string): TreeEntry[] => {
      let entries = treeCache.get(treeId);
      if (!entries) {
        const loc = trees.get(treeId);
        if (!loc) throw new Error(`manifest lacks tree ${treeId}`);
        entries = decodeTree(packs.read(treeId, loc));
        treeCache.set(treeId, entries);
      }
      return entries;
    };
    // The snapshot's directories, and per object pack the objects to decode with their paths.
    const dirs: string[] = [];
    const byPack = new Map<string, Map<string, MaterializeEntry>>();
    let totalBytes = 0;
    const list = (treeId: string, rel: string): void => {
      for (const e of readTree(treeId)) {
        const p = rel ? `${rel}/${e.name}` : e.name;
        if (e.kind === 'directory') {
          dirs.push(p);
          list(e.id, p);
          continue;
        }
        const loc = blobs.get(e.id);
        if (!loc) throw new Error(`manifest lacks blob ${e.id}`);
        let objects = byPack.get(loc.pack_id);
        if (!objects) byPack.set(loc.pack_id, (objects = new Map()));
        let entry = objects.get(e.id);
        if (!entry) {
          entry = { id: e.id, offset: loc.offset, length: loc.length, raw_length: loc.raw_length, crc32: Number.parseInt(loc.crc32, 16), targets: [] };
          objects.set(e.id, entry);
        }
        entry.targets.push({ path: p, kind: e.kind });
        totalBytes += loc.raw_length;
      }
    };
    list(root, '');
    const out = prepareOutput(o.out, dirs);
    t('trees');

    const progress = asProgress(o.progress ?? false);
    progress.start('pull', totalBytes);
    let written = 0;
    let bytes = 0;
    try {
      // Downloads (three at a time) feed the workers; each pack is decoded and written whole by one.
      const order = [...byPack.keys()];
      let next = 0;
      let ahead = 0;
      const wake: (() => void)[] = [];
      const jobs: Promise<void>[] = [];
      await Promise.all([0, 1, 2].map(async () => {
        while (next < order.length) {
          const packId = order[next++];
          while (ahead >= MAX_PACKS_AHEAD) await new Promise<void>((r) => wake.push(r));
          ahead++;
          const urlPath = client.repoPath(o.repo, `${SYNC}/${PACK_PATH[PACK_KIND_OBJECT]}/${packId}`);
          let source: { file: string } | { bytes: Buffer };
          if ((packSize.get(packId) ?? Infinity) <= IN_MEMORY_PACK_BYTES) source = { bytes: await client.downloadBuffer(urlPath) };
          else {
            const file = path.join(temp, `${packId}.pack`);
            await client.download(urlPath, file);
            source = { file };
          }
          const entries = [...byPack.get(packId)!.values()].sort((a, b) => a.offset - b.offset);
          const job = pool.run(out, entries, source, (n) => progress.increment(n)).then((r) => {
            written += r.files;
            bytes += r.bytes;
          }).finally(() => {
            ahead--;
            wake.shift()?.();
            if ('file' in source) void fsp.rm(source.file, { force: true });
          });
          job.catch(() => undefined); // surfaced below
          jobs.push(job);
        }
      }));
      await Promise.all(jobs);
    } finally {
      progress.stop();
    }
    t('download+materialize');
    return { snapshot_id: id, files: written, bytes };
  } finally {
    packs.close();
    await pool.close();
    await fsp.rm(temp, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- sync

export interface SyncOptions {
  from: string;
  fromRepo: number;
  to: string;
  toRepo: number;
  snapshot: string;
  line?: string;
}

export async function sync(o: SyncOptions) {
  const source = new CairnClient(o.from);
  const dest = new CairnClient(o.to);
  const destLine = o.line ? await dest.jsonOrNull('GET', dest.repoPath(o.toRepo, `/lines/${encodeURIComponent(o.line)}`)) : null;
  const destHead: string | null = destLine?.head_snapshot_id ?? null;
  // The destination's line head is what it already has; the manifest stops there.
  const haves: string[] = [];
  if (destHead) {
    const known = await source.json('POST', source.repoPath(o.fromRepo, '/snapshots:exists'), { snapshot_ids: [destHead] });
    if (known.present_snapshot_ids.includes(destHead)) haves.push(destHead);
  }
  const manifest = await source.json('POST', source.repoPath(o.fromRepo, `${SYNC}/pull-manifests`), {
    contract: 'svc.remote_sync.zstd_bulk.pull_manifest.request.v1',
    head_snapshot_id: o.snapshot,
    have_snapshot_ids: haves,
  });
  const plan = await dest.json('POST', dest.repoPath(o.toRepo, `${SYNC}/plan`), {
    snapshot_ids: manifest.snapshots.map((s: { snapshot_id: string }) => s.snapshot_id),
    object_packs: manifest.object_packs,
    tree_packs: manifest.tree_packs,
  });
  const temp = mkdtempSync(path.join(os.tmpdir(), 'cairn-sync-'));
  let transferred = 0;
  try {
    for (const [kind, ids] of [[PACK_KIND_OBJECT, plan.missing_object_pack_ids], [PACK_KIND_TREE, plan.missing_tree_pack_ids]] as [PackKind, string[]][]) {
      for (const packId of ids) {
        const file = path.join(temp, `${packId}.pack`);
        await source.download(source.repoPath(o.fromRepo, `${SYNC}/${PACK_PATH[kind]}/${packId}`), file);
        await dest.putFile(dest.repoPath(o.toRepo, `${SYNC}/${PACK_PATH[kind]}/${packId}`), MEDIA[kind], file);
        transferred++;
        await fsp.rm(file);
      }
    }
  } finally {
    await fsp.rm(temp, { recursive: true, force: true });
  }
  const commit = await dest.json('POST', dest.repoPath(o.toRepo, `${SYNC}/commit`), {
    contract: 'svc.remote_sync.zstd_bulk.commit.v1',
    object_packs: manifest.object_packs,
    tree_packs: manifest.tree_packs,
    blob_locators: manifest.blob_locators,
    tree_locators: manifest.tree_locators,
    snapshots: manifest.snapshots,
    line_update: o.line ? { line_name: o.line, head_snapshot_id: o.snapshot, expected_head_snapshot_id: destHead } : null,
  });
  return { snapshot_id: o.snapshot, transferred_packs: transferred, upserted: commit.upserted, skipped: commit.skipped, line_updated: commit.line_head_updated_after_ingest };
}

