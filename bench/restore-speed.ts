// Restore speed on many small objects (docs/benchmarks.md "Archive: restore speed"): a repository
// of BENCH_RESTORE_COMMITS small commits (two packs each) shipped to a local Swift s3api
// (test/archive-dir-ship.ts writes the archive), then restored in this process by
// restoreArchive at several --concurrency values (download, sha256 checks, durable writes; no
// open/fsck, which costs the same at any concurrency), against a plain parallel download of the
// same objects (GetObject into files, no checks, no fsync). Run after a build:
//   node dist/bench/restore-speed.js
import { promises as fsp, createWriteStream } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { CreateBucketCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { S3ObjectStore, s3Settings } from '../lib/archive/s3-store.js';
import { readManifest, restoreArchive } from '../lib/archive/restore.js';
import { blobId, encodeTree, sha256Hex, snapshotId } from '../lib/domain/content.js';
import { buildPack, PACK_KIND_OBJECT, PACK_KIND_TREE, type BuiltPack } from '../lib/store/pack.js';
import { startSwift } from '../test/swift.js';
import { shipDataDir } from '../test/archive-dir-ship.js';
import { registerRepository, startCairn } from './proc.js';

const COMMITS = Number(process.env.BENCH_RESTORE_COMMITS ?? 600);
const LEVELS = (process.env.BENCH_RESTORE_LEVELS ?? '1,4,8,16,32').split(',').map(Number);
const AUTH = '/v1/native/repository-authorities';

const packRow = (p: BuiltPack) => ({ pack_id: p.packId, byte_length: p.bytes.length, object_count: p.entries.length });
const loc = (p: BuiltPack, e: BuiltPack['entries'][number]) => ({ pack_id: p.packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32.toString(16).padStart(8, '0') });

async function commit(url: string, repo: number, n: number): Promise<void> {
  const blob = Buffer.from(`small file ${n}\n`.repeat(1 + (n % 50)), 'utf8');
  const id = blobId(blob);
  const tree = encodeTree([{ name: 'file.txt', kind: 'file', id }]);
  const treeId = sha256Hex(tree);
  const objectPack = buildPack(PACK_KIND_OBJECT, [{ id, raw: blob }]);
  const treePack = buildPack(PACK_KIND_TREE, [{ id: treeId, raw: tree }]);
  for (const [p, kind, media] of [[objectPack, 'object', 'application/vnd.svc.remote-sync.object-pack+zstd'], [treePack, 'tree', 'application/vnd.svc.remote-sync.tree-pack+zstd']] as const) {
    const res = await fetch(`${url}${AUTH}/${repo}/remote-sync/zstd-bulk/${kind}-packs/${p.packId}`, { method: 'PUT', body: new Uint8Array(p.bytes), headers: { 'content-type': media } });
    if (res.status !== 200) throw new Error(`pack: ${res.status} ${await res.text()}`);
  }
  const fields = { root_tree_id: treeId, parent_snapshot_ids: [] as string[], created_at_s: 1_700_000_000 + n, message: null };
  const res = await fetch(`${url}${AUTH}/${repo}/remote-sync/zstd-bulk/commit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      contract: 'svc.remote_sync.zstd_bulk.commit.v1',
      object_packs: [packRow(objectPack)],
      tree_packs: [packRow(treePack)],
      blob_locators: objectPack.entries.map((e) => ({ blob_id: e.id, ...loc(objectPack, e) })),
      tree_locators: treePack.entries.map((e) => ({ tree_id: e.id, ...loc(treePack, e) })),
      snapshots: [{ snapshot_id: snapshotId(fields), ...fields }],
      line_update: null,
    }),
  });
  if (res.status !== 200) throw new Error(`commit: ${res.status} ${await res.text()}`);
}

async function main(): Promise<void> {
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'cairn-restore-bench-'));
  const cli = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../bin/cairn.js');
  const swift = await startSwift();
  const env = { AWS_ACCESS_KEY_ID: swift.accessKeyId, AWS_SECRET_ACCESS_KEY: swift.secretAccessKey, AWS_REGION: swift.region, AWS_ENDPOINT_URL_S3: swift.endpoint };
  const s3 = new S3Client({ region: swift.region, endpoint: swift.endpoint, forcePathStyle: true, credentials: { accessKeyId: swift.accessKeyId, secretAccessKey: swift.secretAccessKey } });
  try {
    await s3.send(new CreateBucketCommand({ Bucket: 'bench' }));
    const data = path.join(root, 'data');
    const server = await startCairn(cli, data);
    const repo = await registerRepository(server.url, 'many-small');
    for (let i = 0; i < COMMITS; i++) await commit(server.url, repo, i);
    await server.stop();
    const store = new S3ObjectStore({ bucket: 'bench', prefix: 'a/' }, s3Settings(env));
    const shipped = await shipDataDir(store, data, { repositories: [repo] });
    const manifest = await readManifest(store, shipped[0]!.key);
    const objects = manifest.entries.filter((e) => e.kind !== 'registry');
    const bytes = objects.reduce((n, e) => n + Number(e.size), 0);
    console.log(`repository ${repo}: ${objects.length} objects, ${(bytes / 1024).toFixed(0)} KiB`);

    const plain = async (concurrency: number): Promise<number> => {
      const dir = path.join(root, `plain-${concurrency}-${Date.now()}`);
      await fsp.mkdir(dir);
      const t0 = performance.now();
      let next = 0;
      await Promise.all(Array.from({ length: concurrency }, async () => {
        while (next < objects.length) {
          const e = objects[next++]!;
          const got = await s3.send(new GetObjectCommand({ Bucket: 'bench', Key: `a/${e.key}` }));
          await pipeline(got.Body as Readable, createWriteStream(path.join(dir, String(next))));
        }
      }));
      const took = performance.now() - t0;
      await fsp.rm(dir, { recursive: true, force: true });
      return took;
    };
    const restore = async (concurrency: number): Promise<number> => {
      const dir = path.join(root, `restored-${concurrency}-${Date.now()}`);
      const t0 = performance.now();
      await restoreArchive(store, { url: 's3://bench/a/', repositories: [repo], target: {}, dataDir: dir, concurrency });
      const took = performance.now() - t0;
      await fsp.rm(dir, { recursive: true, force: true });
      return took;
    };
    await plain(8); // warm Swift's caches and connections
    for (const c of LEVELS) {
      const runs: { r: number; p: number }[] = [];
      for (let i = 0; i < 3; i++) runs.push({ r: await restore(c), p: await plain(c) });
      const med = (xs: number[]) => xs.sort((a, b) => a - b)[1]!;
      const r = med(runs.map((x) => x.r));
      const p = med(runs.map((x) => x.p));
      console.log(`concurrency ${c}: restore ${r.toFixed(0)} ms (${(objects.length / (r / 1000)).toFixed(0)} objects/s), plain download ${p.toFixed(0)} ms (${(objects.length / (p / 1000)).toFixed(0)} objects/s), ratio ${(p / r).toFixed(2)}`);
    }
    store.close();
  } finally {
    s3.destroy();
    await swift.stop();
    await fsp.rm(root, { recursive: true, force: true });
  }
}

await main();
