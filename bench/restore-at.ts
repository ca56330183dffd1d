// restore --at: how many store requests and how long it takes to find the manifest of a time
// (lib/archive/restore.ts findManifest) in an archive of N manifests of one repository, with the
// time index (storage-layout.md §20.1.1) and without it (an archive from before the index: its
// manifests read newest first), against Swift's s3api on loopback (test/swift.ts). The time asked
// is early in the history, so every later manifest is newer: the old way's worst case.
// BENCH_AT_SIZES=100,300,600 by default. Run: node dist/bench/restore-at.js
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { encodeManifest, manifestKey, timeIndexOriginKey, timeMarkerKey } from '../lib/domain/archive-manifest.js';
import { sha256Hex, type ObjectStore } from '../lib/archive/object-store.js';
import { S3ObjectStore, s3Settings } from '../lib/archive/s3-store.js';
import { findManifest } from '../lib/archive/restore.js';
import { startSwift } from '../test/swift.js';

const T0 = 1_700_000_000_000_000n;
const STEP = 60_000_000n;

function counting(inner: ObjectStore): ObjectStore & { calls: number } {
  const c = Object.create(inner) as ObjectStore & { calls: number };
  c.calls = 0;
  for (const op of ['get', 'head', 'list', 'put'] as const) {
    (c as any)[op] = (...args: unknown[]) => { c.calls++; return (inner as any)[op](...args); };
  }
  return c;
}

async function fill(store: ObjectStore, n: number, indexed: boolean): Promise<void> {
  const put = (key: string, body: Buffer): Promise<void> => store.put(key, body, { sha256: sha256Hex(body), size: body.length });
  const jobs: Promise<void>[] = [];
  for (let c = 1n; c <= BigInt(n); c++) {
    const record = Buffer.alloc(512);
    Buffer.from('CAIRNCMT', 'latin1').copy(record, 0);
    record.writeUInt8(2, 8);
    record.writeBigUInt64LE(c, 12);
    const entry = { kind: 'file' as const, key: `repositories/1/g${'1'.padStart(20, '0')}/files/${c.toString().padStart(20, '0')}/authority.bin`, path: 'authority.bin', offset: 0n, size: 1n, sha256: 'ab'.repeat(32) };
    const at = T0 + (c - 1n) * STEP;
    jobs.push(put(manifestKey(1, 1n, c), encodeManifest({ archiveGeneration: 1n, repository: 1, commitGeneration: c, capturedAtUs: at, commitPoint: record, entries: [entry] })));
    if (indexed) jobs.push(put(timeMarkerKey(1, at, 1n, c), Buffer.alloc(0)));
    if (jobs.length >= 32) await Promise.all(jobs.splice(0));
  }
  if (indexed) jobs.push(put(timeIndexOriginKey(1), Buffer.from(`${JSON.stringify({ from: manifestKey(1, 1n, 1n) })}\n`)));
  await Promise.all(jobs);
}

async function main(): Promise<void> {
  const sizes = (process.env.BENCH_AT_SIZES ?? '100,300,600').split(',').map(Number);
  const swift = await startSwift();
  const env = { AWS_ACCESS_KEY_ID: swift.accessKeyId, AWS_SECRET_ACCESS_KEY: swift.secretAccessKey, AWS_REGION: swift.region, AWS_ENDPOINT_URL_S3: swift.endpoint };
  const admin = new S3Client({ region: swift.region, endpoint: swift.endpoint, forcePathStyle: true, credentials: { accessKeyId: swift.accessKeyId, secretAccessKey: swift.secretAccessKey } });
  await admin.send(new CreateBucketCommand({ Bucket: 'bench-at' }));
  admin.destroy();
  try {
    console.log('| manifests | without the index: requests, time | with the index: requests, time |');
    console.log('|---|---|---|');
    for (const n of sizes) {
      const row: string[] = [];
      for (const indexed of [false, true]) {
        const s3 = new S3ObjectStore({ bucket: 'bench-at', prefix: `n${n}-${indexed ? 'new' : 'old'}/` }, s3Settings(env));
        await fill(s3, n, indexed);
        const times: number[] = [];
        let calls = 0;
        for (let i = 0; i < 3; i++) {
          const store = counting(s3);
          const t = process.hrtime.bigint();
          const found = await findManifest(store, 1, { atUs: T0 + 2n * STEP });
          times.push(Number(process.hrtime.bigint() - t) / 1e6);
          if (found?.manifest.commitGeneration !== 3n) throw new Error('wrong manifest');
          calls = store.calls;
        }
        times.sort((a, b) => a - b);
        row.push(`${calls} requests, ${times[1]!.toFixed(0)} ms`);
        s3.close();
      }
      console.log(`| ${n} | ${row[0]} | ${row[1]} |`);
    }
  } finally {
    await swift.stop();
  }
}

void main().catch((err) => { console.error(err); process.exit(1); });
