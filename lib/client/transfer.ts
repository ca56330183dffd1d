// push, pull and sync over the bulk remote-sync interface. Transfer order (spec): plan, upload
// missing packs, commit rows and snapshots, then line handling. Pull: manifest, download its
// packs, read the objects locally.
import { closeSync, mkdtempSync, openSync, promises as fsp, readSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SingleBar } from 'cli-progress';
import { decodeTree, snapshotId, type EntryKind, type TreeEntry } from '../domain/content.js';
import { decodeObjectFrame, PACK_KIND_OBJECT, PACK_KIND_TREE, type BuiltPack, type PackKind } from '../store/pack.js';
import { CairnClient } from './http.js';
import { prepareOutput, scanDirectory, writeEntry } from './worktree.js';
import { Unpacker } from './unpack-worker.js';
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

interface Progress {
  start(total: number, label: string): void;
  increment(n: number): void;
  stop(): void;
}

function progressBar(enabled: boolean): Progress {
  if (!enabled) return { start() {}, increment() {}, stop() {} };
  const bar = new SingleBar({ format: '{label} [{bar}] {percentage}% {value}/{total}', stream: process.stderr, hideCursor: true, clearOnComplete: true });
  return {
    start: (total, label) => bar.start(total, 0, { label }),
    increment: (n) => bar.increment(n),
    stop: () => bar.stop(),
  };
}

export interface PushOptions {
  server: string;
  repo: number;
  line: string;
  dir: string;
  parent?: string;
  moveLine: boolean;
  message?: string;
  progress: boolean;
  compressionLevel?: number;
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
 * client compresses the next. Pack bytes are dropped once uploaded.
 */
class PackPipeline {
  readonly packs: { packId: string; kind: PackKind; byteLength: number; entries: BuiltPack['entries'] }[] = [];
  uploadedPacks = 0;
  uploadedBytes = 0;
  private batch: { id: string; raw: Buffer }[] = [];
  private batchBytes = 0;
  private readonly inflight = new Set<Promise<void>>();
  private readonly worker = new PackWorker();

  constructor(private readonly client: CairnClient, private readonly repo: number, private readonly level: number, private readonly progress: Progress, private readonly targetBytes = PACK_TARGET_BYTES) {}

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
    if (!items.length) return;
    while (this.inflight.size >= 3) await Promise.race(this.inflight);
    const task = this.worker.build(kind, items, this.level).then(async (pack) => {
      this.packs.push({ packId: pack.packId, kind, byteLength: pack.bytes.length, entries: pack.entries });
      await this.upload(pack);
    });
    const tracked = task.finally(() => this.inflight.delete(tracked));
    this.inflight.add(tracked);
    tracked.catch(() => undefined); // surfaced by finish()
  }

  private async upload(pack: BuiltPack): Promise<void> {
    const plan = await this.client.json('POST', this.client.repoPath(this.repo, `${SYNC}/plan`), {
      snapshot_ids: [],
      object_packs: pack.kind === PACK_KIND_OBJECT ? [pack.packId] : [],
      tree_packs: pack.kind === PACK_KIND_TREE ? [pack.packId] : [],
    });
    if ([...plan.missing_object_pack_ids, ...plan.missing_tree_pack_ids].includes(pack.packId)) {
      await this.client.putRaw(this.client.repoPath(this.repo, `${SYNC}/${PACK_PATH[pack.kind]}/${pack.packId}`), MEDIA[pack.kind], pack.bytes);
      this.uploadedPacks++;
      this.uploadedBytes += pack.bytes.length;
    }
    this.progress.increment(pack.bytes.length);
  }

  async finish(): Promise<void> {
    await this.flush(PACK_KIND_OBJECT);
    while (this.inflight.size) await Promise.all(this.inflight);
  }

  close(): Promise<void> {
    return this.worker.close();
  }
}

export async function push(o: PushOptions): Promise<PushResult> {
  const client = new CairnClient(o.server);
  const t = timer();
  const line = await client.jsonOrNull(`GET`, client.repoPath(o.repo, `/lines/${encodeURIComponent(o.line)}`));
  const lineHead: string | null = line?.head_snapshot_id ?? null;
  const parent = o.parent ?? lineHead;

  // What the server already holds, from the parent's file projection (no content): known
  // before the scan, so each file is read once and packed in the same pass if it is new.
  const presentBlobs = new Set<string>();
  const presentTrees = new Set<string>();
  let parentRecord: { root_tree_id: string; parent_snapshot_ids: string[] } | null = null;
  if (parent) {
    const exp = await client.json('GET', client.repoPath(o.repo, `/snapshots/${parent}?include_content=false`));
    parentRecord = exp.snapshot;
    for (const f of exp.files) presentBlobs.add(f.blob_id);
    for (const d of exp.directories) presentTrees.add(d.tree_id);
  }
  t('parent');

  const progress = progressBar(o.progress);
  progress.start(0, 'packing+uploading');
  const pipeline = new PackPipeline(client, o.repo, o.compressionLevel ?? 3, progress);
  let scan: Awaited<ReturnType<typeof scanDirectory>>;
  try {
    scan = await scanDirectory(o.dir, async (id, read) => {
      if (!presentBlobs.has(id)) await pipeline.add(id, read());
    });
    t('scan+pack');
    if (!(parentRecord && parentRecord.root_tree_id === scan.rootTreeId && !o.parent && o.message === undefined)) {
      const missingTrees = [...scan.trees.entries()].filter(([id]) => !presentTrees.has(id)).sort(([a], [b]) => (a < b ? -1 : 1));
      for (let i = 0; i < missingTrees.length; i += PACK_TARGET_OBJECTS) {
        await pipeline.flush(PACK_KIND_TREE, missingTrees.slice(i, i + PACK_TARGET_OBJECTS).map(([id, raw]) => ({ id, raw })));
      }
    }
    await pipeline.finish();
  } finally {
    // The pack worker must not outlive a failed scan or upload (it would keep the process alive).
    await pipeline.close();
    progress.stop();
  }
  t('upload');
  const base = { root_tree_id: scan.rootTreeId, line: o.line, files: scan.fileCount, bytes: scan.byteCount };
  if (parentRecord && parentRecord.root_tree_id === scan.rootTreeId && !o.parent && o.message === undefined) {
    return { ...base, snapshot_id: parent!, parent_snapshot_ids: parentRecord.parent_snapshot_ids, line_updated: false, unchanged: true, uploaded_packs: 0, uploaded_bytes: 0 };
  }

  const snapshot = {
    root_tree_id: scan.rootTreeId,
    parent_snapshot_ids: parent ? [parent] : [],
    created_at_s: Math.floor(Date.now() / 1000),
    message: o.message ?? null,
  };
  const id = snapshotId(snapshot);
  const packs = pipeline.packs;
  const commit = await client.json('POST', client.repoPath(o.repo, `${SYNC}/commit`), {
    contract: 'svc.remote_sync.zstd_bulk.commit.v1',
    object_packs: packs.filter((p) => p.kind === PACK_KIND_OBJECT).map(packRow),
    tree_packs: packs.filter((p) => p.kind === PACK_KIND_TREE).map(packRow),
    blob_locators: packs.filter((p) => p.kind === PACK_KIND_OBJECT).flatMap((p) => p.entries.map((e) => ({ blob_id: e.id, ...locatorFields(p.packId, e) }))),
    tree_locators: packs.filter((p) => p.kind === PACK_KIND_TREE).flatMap((p) => p.entries.map((e) => ({ tree_id: e.id, ...locatorFields(p.packId, e) }))),
    snapshots: [{ snapshot_id: id, ...snapshot }],
    line_update: o.moveLine ? { line_name: o.line, head_snapshot_id: id, expected_head_snapshot_id: lineHead } : null,
  });
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
}

export async function resolveSnapshot(client: CairnClient, repo: number, line?: string, snapshot?: string): Promise<string> {
  if (snapshot) return snapshot;
  const found = await client.json('GET', client.repoPath(repo, `/lines/${encodeURIComponent(line!)}`));
  if (!found.head_snapshot_id) throw new Error(`line ${line} has no head snapshot`);
  return found.head_snapshot_id;
}

export async function pull(o: PullOptions): Promise<{ snapshot_id: string; files: number; bytes: number }> {
  const client = new CairnClient(o.server);
  const t = timer();
  const id = await resolveSnapshot(client, o.repo, o.line, o.snapshot);
  const manifest = await client.json('GET', client.repoPath(o.repo, `${SYNC}/import-manifests/${id}`));
  t('manifest');
  const root = manifest.snapshots.find((s: { snapshot_id: string }) => s.snapshot_id === id)?.root_tree_id;
  if (!root) throw new Error(`import manifest does not describe snapshot ${id}`);
  const trees = new Map<string, ManifestLocator>(manifest.tree_locators.map((l: ManifestLocator & { tree_id: string }) => [l.tree_id, l]));
  const blobs = new Map<string, ManifestLocator>(manifest.blob_locators.map((l: ManifestLocator & { blob_id: string }) => [l.blob_id, l]));
  const temp = mkdtempSync(path.join(os.tmpdir(), 'cairn-pull-'));
  const packs = new LocalPacks(client, o.repo, temp);
  try {
    // Trees first (small), then only the object packs that hold this snapshot's blobs.
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
    // The snapshot's directories and files in walk order.
    const dirs: string[] = [];
    const files: { path: string; kind: EntryKind; blob: string }[] = [];
    const list = (treeId: string, rel: string): void => {
      for (const e of readTree(treeId)) {
        const p = rel ? `${rel}/${e.name}` : e.name;
        if (e.kind === 'directory') {
          dirs.push(p);
          list(e.id, p);
        } else {
          if (!blobs.has(e.id)) throw new Error(`manifest lacks blob ${e.id}`);
          files.push({ path: p, kind: e.kind, blob: e.id });
        }
      }
    };
    list(root, '');
    const out = prepareOutput(o.out, dirs);
    // Object packs in the order the walk first needs them; all download in the background
    // (three at a time) while earlier packs are decoded (worker thread) and written (here).
    const byBlob = new Map<string, typeof files>();
    const packOrder: string[] = [];
    for (const f of files) {
      const same = byBlob.get(f.blob);
      if (same) same.push(f);
      else {
        byBlob.set(f.blob, [f]);
        const pack = blobs.get(f.blob)!.pack_id;
        if (!packOrder.includes(pack)) packOrder.push(pack);
      }
    }
    const downloads = packs.fetchEach(PACK_KIND_OBJECT, packOrder);
    const unpacker = new Unpacker();
    let written = 0;
    let bytes = 0;
    try {
      for (const packId of packOrder) {
        const file = await downloads.get(packId)!;
        const wanted = [...byBlob.keys()].map((blob) => ({ blob, loc: blobs.get(blob)! })).filter((x) => x.loc.pack_id === packId)
          .sort((a, b) => a.loc.offset - b.loc.offset)
          .map(({ blob, loc }) => ({ id: blob, offset: loc.offset, length: loc.length, raw_length: loc.raw_length, crc32: Number.parseInt(loc.crc32, 16) }));
        for await (const batch of unpacker.objects(file, wanted)) {
          for (const obj of batch) {
            for (const f of byBlob.get(obj.id)!) {
              writeEntry(path.join(out, ...f.path.split('/')), f.kind, obj.bytes);
              written++;
              bytes += obj.bytes.length;
            }
          }
        }
      }
    } finally {
      await unpacker.close();
      await Promise.allSettled(downloads.values());
    }
    t('download+materialize');
    const result = { files: written, bytes };
    return { snapshot_id: id, ...result };
  } finally {
    packs.close();
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

