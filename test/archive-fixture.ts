// Helpers of the archive shipping tests: a small workload over HTTP (content commits with packs,
// workflow records), and a test-only reader that checks every manifest of an archive — each
// object it names exists with its size and sha256 — and rebuilds the repository files a
// manifest describes, to compare with the data directory.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { blobId, encodeSnapshot, encodeTree, sha256Hex, snapshotId } from '../lib/domain/content.js';
import { buildPack, PACK_KIND_OBJECT, PACK_KIND_TREE, type BuiltPack } from '../lib/store/pack.js';
import { readManifest } from '../lib/archive/restore.js';
import { decodeManifest, manifestPrefix, parseManifestKey, type Manifest } from '../lib/domain/archive-manifest.js';
import type { ObjectStore } from '../lib/archive/object-store.js';
import { decodeCommitFile, SLOT_SIZE } from '../lib/store/commit-point.js';
import { api } from './helpers.js';

void encodeSnapshot;
const AUTH = '/v1/native/repository-authorities';
const COMMIT = 'svc.remote_sync.zstd_bulk.commit.v1';
let clock = 1_700_000_000;

const packRow = (p: BuiltPack) => ({ pack_id: p.packId, byte_length: p.bytes.length, object_count: p.entries.length });
const loc = (p: BuiltPack, e: BuiltPack['entries'][number]) => ({ pack_id: p.packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32.toString(16).padStart(8, '0') });

/** Commit one snapshot holding `text` (new packs, index entries, a snapshot record). */
export async function commitContent(url: string, repo: number, text: string): Promise<void> {
  const blob = Buffer.from(text, 'utf8');
  const id = blobId(blob);
  const tree = encodeTree([{ name: 'file.txt', kind: 'file', id }]);
  const treeId = sha256Hex(tree);
  const objectPack = buildPack(PACK_KIND_OBJECT, [{ id, raw: blob }]);
  const treePack = buildPack(PACK_KIND_TREE, [{ id: treeId, raw: tree }]);
  for (const [p, kind, media] of [[objectPack, 'object', 'application/vnd.svc.remote-sync.object-pack+zstd'], [treePack, 'tree', 'application/vnd.svc.remote-sync.tree-pack+zstd']] as const) {
    const res = await api(url, 'PUT', `${AUTH}/${repo}/remote-sync/zstd-bulk/${kind}-packs/${p.packId}`, { body: p.bytes, headers: { 'content-type': media } });
    expect(res.status, res.text).to.equal(200);
  }
  const fields = { root_tree_id: treeId, parent_snapshot_ids: [] as string[], created_at_s: clock++, message: null };
  const res = await api(url, 'POST', `${AUTH}/${repo}/remote-sync/zstd-bulk/commit`, {
    json: {
      contract: COMMIT,
      object_packs: [packRow(objectPack)],
      tree_packs: [packRow(treePack)],
      blob_locators: objectPack.entries.map((e) => ({ blob_id: e.id, ...loc(objectPack, e) })),
      tree_locators: treePack.entries.map((e) => ({ tree_id: e.id, ...loc(treePack, e) })),
      snapshots: [{ snapshot_id: snapshotId(fields), ...fields }],
      line_update: null,
    },
  });
  expect(res.status, res.text).to.equal(200);
}

/** A workflow record (a sprint plan): workflow.log and events.log grow. */
export async function commitWorkflow(url: string, repo: number, n: number): Promise<void> {
  const res = await api(url, 'POST', `${AUTH}/${repo}/sprints`, { json: { title: `Sprint ${n}`, artifact_path: 'docs/plan.md', artifact_heading: 'Sprint', artifact_body: `# Sprint\n- [ ] item ${n} {#i${n}}\n` } });
  expect(res.status, res.text).to.equal(200);
}

export async function allKeys(store: ObjectStore, prefix = ''): Promise<string[]> {
  const keys: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await store.list(prefix, after ? { after } : {});
    keys.push(...page.objects.map((o) => o.key));
    if (!page.next) return keys;
    after = page.next;
  }
}

/** Every manifest of a repository, decoded (an incremental one with its chain resolved: `manifest.entries` is the whole list), oldest first. */
export async function manifests(store: ObjectStore, repo: number): Promise<{ key: string; manifest: Manifest; stored: Manifest }[]> {
  const out: { key: string; manifest: Manifest; stored: Manifest }[] = [];
  for (const key of await allKeys(store, manifestPrefix(repo))) {
    if (!parseManifestKey(key)) continue;
    const got = await store.get(key);
    out.push({ key, manifest: await readManifest(store, key), stored: decodeManifest(await buffer(got.body), key) });
  }
  return out;
}

/** Check that every object a manifest names is stored with its size and sha256; return the bytes by key. */
export async function verifyManifest(store: ObjectStore, m: Manifest, key: string): Promise<Map<string, Buffer>> {
  const bytes = new Map<string, Buffer>();
  for (const e of m.entries) {
    let body: Buffer;
    try {
      body = await buffer((await store.get(e.key)).body);
    } catch (err) {
      throw new Error(`manifest ${key} names ${e.key}, which is not there: ${(err as Error).message}`);
    }
    expect(BigInt(body.length), `size of ${e.key} (manifest ${key})`).to.equal(e.size);
    expect(sha256Hex(body), `sha256 of ${e.key} (manifest ${key})`).to.equal(e.sha256);
    bytes.set(e.key, body);
  }
  return bytes;
}

/** The repository files a manifest rebuilds (path → bytes), the registry record apart, commit.bin's record. */
export async function rebuild(store: ObjectStore, m: Manifest, key: string): Promise<{ files: Map<string, Buffer>; registry: Buffer | null }> {
  const bytes = await verifyManifest(store, m, key);
  const files = new Map<string, Buffer>();
  let registry: Buffer | null = null;
  for (const e of [...m.entries].sort((a, b) => (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0))) {
    const body = bytes.get(e.key)!;
    if (e.kind === 'registry') { registry = body; continue; }
    if (e.kind !== 'log-range') { files.set(e.path, body); continue; }
    const have = files.get(e.path) ?? Buffer.alloc(0);
    const off = Number(e.offset);
    expect(off, `log range ${e.key} starts within what the earlier ranges of ${e.path} cover`).to.be.at.most(have.length);
    files.set(e.path, Buffer.concat([have.subarray(0, off), body]));
  }
  return { files, registry };
}

/** The commit-point record (512 bytes) of the current slot of a data directory's commit.bin. */
export async function currentRecord(repoDir: string): Promise<Buffer> {
  const data = await fsp.readFile(path.join(repoDir, 'commit.bin'));
  const state = decodeCommitFile(data)!;
  const at = (state.generation % 2) * SLOT_SIZE;
  return data.subarray(at, at + 512);
}

/** Compare what the newest manifest of `repo` rebuilds with the data directory's files. */
export async function expectNewestMatches(store: ObjectStore, dataDir: string, repo: number): Promise<void> {
  const all = await manifests(store, repo);
  expect(all.length, 'manifests').to.be.greaterThan(0);
  for (const { key, manifest } of all) await rebuild(store, manifest, key); // every manifest verifies
  const { key, manifest } = all.at(-1)!;
  const { files, registry } = await rebuild(store, manifest, key);
  const dir = path.join(dataDir, 'repositories', String(repo));
  expect(manifest.commitPoint.equals(await currentRecord(dir)), 'commit point equals commit.bin\'s current record').to.equal(true);
  for (const [p, bytes] of files) {
    const disk = await fsp.readFile(path.join(dir, p));
    if (/\.log$/.test(p)) expect(disk.subarray(0, bytes.length).equals(bytes), `${p}: the committed prefix`).to.equal(true);
    else expect(disk.equals(bytes), `${p} byte for byte`).to.equal(true);
  }
  // Every committed pack and index segment on disk is named.
  for (const sub of ['packs/objects', 'packs/trees', 'index']) {
    for (const name of await fsp.readdir(path.join(dir, sub)).catch(() => [] as string[])) {
      expect(files.has(`${sub}/${name}`), `${sub}/${name} named by the newest manifest`).to.equal(true);
    }
  }
  expect(registry, 'registry record').to.not.equal(null);
  expect(registry!.readUInt32LE(0)).to.equal(repo);
  expect(registry!.readUInt32LE(28), 'name_offset 0').to.equal(0);
}

