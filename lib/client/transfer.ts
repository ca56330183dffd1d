// push, pull and sync over the bulk remote-sync interface. Transfer order (spec): plan, upload
// missing packs, commit rows and snapshots, then line handling. Pull: manifest, download its
// packs, read the objects locally.
import { mkdtempSync, promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SingleBar } from 'cli-progress';
import { decodeTree, snapshotId, type TreeEntry } from '../domain/content.js';
import { buildPack, decodeObjectFrame, PACK_KIND_OBJECT, PACK_KIND_TREE, type BuiltPack, type PackKind } from '../store/pack.js';
import { CairnClient, ServerError } from './http.js';
import { materialize, readBlobSource, scanDirectory } from './worktree.js';

const MEDIA: Record<PackKind, string> = {
  [PACK_KIND_OBJECT]: 'application/vnd.svc.remote-sync.object-pack+zstd',
  [PACK_KIND_TREE]: 'application/vnd.svc.remote-sync.tree-pack+zstd',
};
const PACK_PATH: Record<PackKind, string> = { [PACK_KIND_OBJECT]: 'object-packs', [PACK_KIND_TREE]: 'tree-packs' };
const SYNC = '/remote-sync/zstd-bulk';
/** Raw bytes per pack before a new pack is started. */
export const PACK_TARGET_BYTES = 64 * 1024 * 1024;

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

export async function push(o: PushOptions): Promise<PushResult> {
  const client = new CairnClient(o.server);
  const scan = await scanDirectory(o.dir);
  const line = await client.jsonOrNull(`GET`, client.repoPath(o.repo, `/lines/${encodeURIComponent(o.line)}`));
  const lineHead: string | null = line?.head_snapshot_id ?? null;
  const parent = o.parent ?? lineHead;
  const base = { root_tree_id: scan.rootTreeId, line: o.line, files: scan.fileCount, bytes: scan.byteCount, uploaded_packs: 0, uploaded_bytes: 0 };

  // What the server already holds, from the parent's file projection (no content).
  const presentBlobs = new Set<string>();
  const presentTrees = new Set<string>();
  if (parent) {
    const exp = await client.json('GET', client.repoPath(o.repo, `/snapshots/${parent}?include_content=false`));
    if (exp.snapshot.root_tree_id === scan.rootTreeId && !o.parent && o.message === undefined) {
      return { ...base, snapshot_id: parent, parent_snapshot_ids: exp.snapshot.parent_snapshot_ids, line_updated: false, unchanged: true };
    }
    for (const f of exp.files) presentBlobs.add(f.blob_id);
    for (const d of exp.directories) presentTrees.add(d.tree_id);
  }

  const progress = progressBar(o.progress);
  const missingBlobs = [...scan.blobs.values()].filter((b) => !presentBlobs.has(b.id)).sort((a, b) => (a.id < b.id ? -1 : 1));
  const missingTrees = [...scan.trees.entries()].filter(([id]) => !presentTrees.has(id)).sort(([a], [b]) => (a < b ? -1 : 1));
  const packs: BuiltPack[] = [];
  progress.start(missingBlobs.length + missingTrees.length, 'packing');
  let batch: { id: string; raw: Buffer }[] = [];
  let batchBytes = 0;
  const flushObjects = () => {
    if (batch.length) packs.push(buildPack(PACK_KIND_OBJECT, batch, o.compressionLevel));
    batch = [];
    batchBytes = 0;
  };
  for (const blob of missingBlobs) {
    const raw = await readBlobSource(blob);
    if (batchBytes + raw.length > PACK_TARGET_BYTES && batch.length) flushObjects();
    batch.push({ id: blob.id, raw });
    batchBytes += raw.length;
    progress.increment(1);
  }
  flushObjects();
  if (missingTrees.length) packs.push(buildPack(PACK_KIND_TREE, missingTrees.map(([id, raw]) => ({ id, raw })), o.compressionLevel));
  progress.increment(missingTrees.length);
  progress.stop();

  const snapshot = {
    root_tree_id: scan.rootTreeId,
    parent_snapshot_ids: parent ? [parent] : [],
    created_at_s: Math.floor(Date.now() / 1000),
    message: o.message ?? null,
  };
  const id = snapshotId(snapshot);
  const uploaded = await uploadMissing(client, o.repo, packs, progressBar(o.progress));
  const commit = await client.json('POST', client.repoPath(o.repo, `${SYNC}/commit`), {
    contract: 'svc.remote_sync.zstd_bulk.commit.v1',
    object_packs: packs.filter((p) => p.kind === PACK_KIND_OBJECT).map(packRow),
    tree_packs: packs.filter((p) => p.kind === PACK_KIND_TREE).map(packRow),
    blob_locators: packs.filter((p) => p.kind === PACK_KIND_OBJECT).flatMap((p) => p.entries.map((e) => ({ blob_id: e.id, ...locatorFields(p, e) }))),
    tree_locators: packs.filter((p) => p.kind === PACK_KIND_TREE).flatMap((p) => p.entries.map((e) => ({ tree_id: e.id, ...locatorFields(p, e) }))),
    snapshots: [{ snapshot_id: id, ...snapshot }],
    line_update: o.moveLine ? { line_name: o.line, head_snapshot_id: id, expected_head_snapshot_id: lineHead } : null,
  });
  return {
    ...base,
    snapshot_id: id,
    parent_snapshot_ids: snapshot.parent_snapshot_ids,
    line_updated: commit.line_head_updated_after_ingest === true,
    unchanged: false,
    uploaded_packs: uploaded.packs,
    uploaded_bytes: uploaded.bytes,
  };
}

function packRow(p: BuiltPack) {
  return { pack_id: p.packId, byte_length: p.bytes.length, object_count: p.entries.length };
}

function locatorFields(p: BuiltPack, e: { offset: number; length: number; raw_length: number; crc32: number }) {
  return { pack_id: p.packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32.toString(16).padStart(8, '0') };
}

async function uploadMissing(client: CairnClient, repo: number, packs: BuiltPack[], progress: Progress): Promise<{ packs: number; bytes: number }> {
  if (!packs.length) return { packs: 0, bytes: 0 };
  const plan = await client.json('POST', client.repoPath(repo, `${SYNC}/plan`), {
    snapshot_ids: [],
    object_packs: packs.filter((p) => p.kind === PACK_KIND_OBJECT).map((p) => p.packId),
    tree_packs: packs.filter((p) => p.kind === PACK_KIND_TREE).map((p) => p.packId),
  });
  const missing = new Set<string>([...plan.missing_object_pack_ids, ...plan.missing_tree_pack_ids]);
  const todo = packs.filter((p) => missing.has(p.packId));
  progress.start(todo.reduce((n, p) => n + p.bytes.length, 0), 'uploading');
  let bytes = 0;
  // Two uploads in flight: the server verifies while the next one streams.
  let next = 0;
  await Promise.all([0, 1].map(async () => {
    while (next < todo.length) {
      const p = todo[next++];
      await client.putRaw(client.repoPath(repo, `${SYNC}/${PACK_PATH[p.kind]}/${p.packId}`), MEDIA[p.kind], p.bytes);
      bytes += p.bytes.length;
      progress.increment(p.bytes.length);
    }
  }));
  progress.stop();
  return { packs: todo.length, bytes };
}

// ---------------------------------------------------------------- pull

interface ManifestLocator { pack_id: string; offset: number; length: number; raw_length: number; crc32: string }

/** Objects read from packs downloaded into a local directory. */
class LocalPacks {
  private readonly downloaded = new Map<string, string>();
  constructor(private readonly client: CairnClient, private readonly repo: number, private readonly dir: string) {}

  private async file(kind: PackKind, packId: string): Promise<string> {
    let file = this.downloaded.get(packId);
    if (!file) {
      file = path.join(this.dir, `${packId}.pack`);
      await this.client.download(this.client.repoPath(this.repo, `${SYNC}/${PACK_PATH[kind]}/${packId}`), file);
      this.downloaded.set(packId, file);
    }
    return file;
  }

  async read(kind: PackKind, id: string, loc: ManifestLocator): Promise<Buffer> {
    const handle = await fsp.open(await this.file(kind, loc.pack_id), 'r');
    try {
      const frame = Buffer.alloc(loc.length);
      await handle.read(frame, 0, loc.length, loc.offset);
      return decodeObjectFrame({ id, offset: loc.offset, length: loc.length, raw_length: loc.raw_length, crc32: Number.parseInt(loc.crc32, 16) }, frame);
    } finally {
      await handle.close();
    }
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
  const id = await resolveSnapshot(client, o.repo, o.line, o.snapshot);
  const manifest = await client.json('GET', client.repoPath(o.repo, `${SYNC}/import-manifests/${id}`));
  const root = manifest.snapshots.find((s: { snapshot_id: string }) => s.snapshot_id === id)?.root_tree_id;
  if (!root) throw new Error(`import manifest does not describe snapshot ${id}`);
  const trees = new Map<string, ManifestLocator>(manifest.tree_locators.map((l: ManifestLocator & { tree_id: string }) => [l.tree_id, l]));
  const blobs = new Map<string, ManifestLocator>(manifest.blob_locators.map((l: ManifestLocator & { blob_id: string }) => [l.blob_id, l]));
  const temp = mkdtempSync(path.join(os.tmpdir(), 'cairn-pull-'));
  try {
    const packs = new LocalPacks(client, o.repo, temp);
    const treeCache = new Map<string, TreeEntry[]>();
    const result = await materialize({
      async readTree(treeId) {
        let entries = treeCache.get(treeId);
        if (!entries) {
          const loc = trees.get(treeId);
          if (!loc) throw new Error(`manifest lacks tree ${treeId}`);
          entries = decodeTree(await packs.read(PACK_KIND_TREE, treeId, loc));
          treeCache.set(treeId, entries);
        }
        return entries;
      },
      async readBlob(blobId) {
        const loc = blobs.get(blobId);
        if (!loc) throw new Error(`manifest lacks blob ${blobId}`);
        return packs.read(PACK_KIND_OBJECT, blobId, loc);
      },
    }, root, o.out);
    return { snapshot_id: id, ...result };
  } finally {
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

export { ServerError };
