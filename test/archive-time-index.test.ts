// The time index of manifests (storage-layout.md §20.1.1): `restore --at` finds its manifest
// with one read of the index's origin, one listing from the time asked and the manifest itself,
// however many manifests the archive holds; the right one at the boundaries (exactly at a
// capture time, before the first, after the last); a damaged or missing newer manifest passed
// over with a warning; an archive from before the index (no origin) still found by reading the
// manifests, and one whose older part predates the index found across the two. The writer
// leaves a marker beside each manifest, and a prune removes a dropped manifest's marker.
import { expect } from 'chai';
import path from 'node:path';
import { encodeManifest, manifestKey, timeIndexOriginKey, timeMarkerKey, timeMarkerPrefix } from '../lib/domain/archive-manifest.js';
import { sha256Hex, type ObjectStore } from '../lib/archive/object-store.js';
import { findManifest } from '../lib/archive/restore.js';
import { pruneArchive } from '../lib/archive/prune.js';
import { backfillTimeIndex } from '../lib/archive/time-index.js';
import { parseRetention } from '../lib/domain/archive-retention.js';
import { MemoryObjectStore } from './memory-store.js';
import { allKeys, commitWorkflow } from './archive-fixture.js';
import { api, cli, register, startTestServer, tempDir, until } from './helpers.js';

const REPO = 3;
const GEN = 1n;
const T0 = 1_700_000_000_000_000n; // µs
const STEP = 60_000_000n; // one manifest a minute

function record(commit: bigint): Buffer {
  const r = Buffer.alloc(512);
  Buffer.from('CAIRNCMT', 'latin1').copy(r, 0);
  r.writeUInt8(2, 8);
  r.writeBigUInt64LE(commit, 12);
  return r;
}

const timeOf = (commit: bigint): bigint => T0 + (commit - 1n) * STEP;

/** `n` full manifests of REPO (commits 1..n, a minute apart), each with its marker unless `indexedFrom` says it predates the index. */
async function archiveOf(store: ObjectStore, n: number, indexedFrom: number | null): Promise<void> {
  const put = (key: string, body: Buffer): Promise<void> => store.put(key, body, { sha256: sha256Hex(body), size: body.length });
  for (let c = 1n; c <= BigInt(n); c++) {
    const entry = { kind: 'file' as const, key: `repositories/${REPO}/g${'1'.padStart(20, '0')}/files/${c.toString().padStart(20, '0')}/authority.bin`, path: 'authority.bin', offset: 0n, size: 1n, sha256: 'ab'.repeat(32) };
    await put(manifestKey(REPO, GEN, c), encodeManifest({ archiveGeneration: GEN, repository: REPO, commitGeneration: c, capturedAtUs: timeOf(c), commitPoint: record(c), entries: [entry] }));
    if (indexedFrom !== null && c >= BigInt(indexedFrom)) await put(timeMarkerKey(REPO, timeOf(c), GEN, c), Buffer.alloc(0));
  }
  if (indexedFrom !== null) await put(timeIndexOriginKey(REPO), Buffer.from(`${JSON.stringify({ from: manifestKey(REPO, GEN, BigInt(indexedFrom)) })}\n`));
}

/** The store calls `fn` makes. */
async function counted<T>(store: MemoryObjectStore, fn: () => Promise<T>): Promise<{ value: T; calls: string[] }> {
  const mark = store.calls.length;
  const value = await fn();
  return { value, calls: store.calls.slice(mark) };
}

const commitOf = (f: Awaited<ReturnType<typeof findManifest>>): bigint | null => f?.manifest.commitGeneration ?? null;

describe('archive time index: restore --at in a constant number of requests', function () {
  this.timeout(120_000);

  it('--at over 30 and over 300 manifests: the same few requests (one listing, two reads); without the index, one read per newer manifest', async () => {
    const costs: Record<string, number> = {};
    for (const n of [30, 300]) {
      const indexed = new MemoryObjectStore();
      await archiveOf(indexed, n, 1);
      const old = new MemoryObjectStore();
      await archiveOf(old, n, null);
      const at = timeOf(5n) + 1n; // early: every later manifest is newer
      const a = await counted(indexed, () => findManifest(indexed, REPO, { atUs: at }));
      const b = await counted(old, () => findManifest(old, REPO, { atUs: at }));
      expect(commitOf(a.value)).to.equal(5n);
      expect(commitOf(b.value)).to.equal(5n);
      expect(a.calls.filter((c) => c.startsWith('get ')), `${n}: reads`).to.deep.equal([`get ${timeIndexOriginKey(REPO)}`, `get ${manifestKey(REPO, GEN, 5n)}`]);
      expect(a.calls.filter((c) => c.startsWith('list ')), `${n}: listings`).to.have.length(1);
      costs[`new ${n}`] = a.calls.length;
      costs[`old ${n}`] = b.calls.filter((c) => c.startsWith('get ')).length;
    }
    expect(costs['new 300']).to.equal(costs['new 30']);
    expect(costs['old 300']).to.be.greaterThan(290);
  });

  it('chooses the right manifest at the boundaries: exactly at a capture time, a µs before it, before the first, after the last', async () => {
    const store = new MemoryObjectStore();
    await archiveOf(store, 50, 1);
    for (const [at, want] of [
      [timeOf(17n), 17n],
      [timeOf(17n) - 1n, 16n],
      [timeOf(1n), 1n],
      [timeOf(1n) - 1n, null],
      [0n, null],
      [timeOf(50n), 50n],
      [timeOf(50n) + 1_000_000_000n, 50n],
    ] as const) {
      const found = await findManifest(store, REPO, { atUs: at });
      expect(commitOf(found), `at ${at}`).to.equal(want);
    }
    // Before the first, in a fully indexed archive: no manifest is read at all.
    const early = await counted(store, () => findManifest(store, REPO, { atUs: timeOf(1n) - 1n }));
    expect(early.calls.filter((c) => c.startsWith('get ') && c.includes('/manifests/'))).to.deep.equal([]);
    // --seq with --at: the newest at or before both.
    expect(commitOf(await findManifest(store, REPO, { atUs: timeOf(40n), seq: 30n }))).to.equal(30n);
  });

  it('passes over a damaged or missing newer manifest with a warning, and goes on to the one before', async () => {
    const store = new MemoryObjectStore();
    await archiveOf(store, 20, 1);
    store.objects.get(manifestKey(REPO, GEN, 12n))!.bytes[600] ^= 0xff;
    await store.delete(manifestKey(REPO, GEN, 11n)); // a marker left behind (an interrupted prune)
    const found = await findManifest(store, REPO, { atUs: timeOf(12n) });
    expect(commitOf(found)).to.equal(10n);
    expect(found!.skipped.map((s) => s.key)).to.deep.equal([manifestKey(REPO, GEN, 12n), manifestKey(REPO, GEN, 11n)]);
    expect(found!.skipped[1]!.problem).to.match(/indexed at .* but missing/);
  });

  it('an archive whose older manifests predate the index: found by the index when it can, by reading the older ones when the time is before it', async () => {
    const store = new MemoryObjectStore();
    await archiveOf(store, 40, 25); // manifests 1..24 have no marker
    expect(commitOf(await findManifest(store, REPO, { atUs: timeOf(30n) }))).to.equal(30n);
    expect(commitOf(await findManifest(store, REPO, { atUs: timeOf(25n) }))).to.equal(25n);
    expect(commitOf(await findManifest(store, REPO, { atUs: timeOf(24n) + 5n }))).to.equal(24n);
    expect(commitOf(await findManifest(store, REPO, { atUs: timeOf(3n) }))).to.equal(3n);
    expect(commitOf(await findManifest(store, REPO, { atUs: timeOf(1n) - 1n }))).to.equal(null);
    // Without any origin: every manifest is a candidate, read newest first (the old way).
    await store.delete(timeIndexOriginKey(REPO));
    expect(commitOf(await findManifest(store, REPO, { atUs: timeOf(33n) }))).to.equal(33n);
  });

  it('cairn archive index backfills an old archive: --at then costs the same few requests; a damaged manifest stays unindexed below the origin and is still read; a second run leaves the origin where it is; usage errors exit 2', async () => {
    const store = new MemoryObjectStore();
    await archiveOf(store, 60, 41); // manifests 1..40 predate the index
    store.objects.get(manifestKey(REPO, GEN, 7n))!.bytes[600] ^= 0xff;
    const dry = await backfillTimeIndex(store, REPO, { dryRun: true });
    expect(dry).to.deep.include({ indexed: 39, from_after: manifestKey(REPO, GEN, 8n) });
    expect([...store.objects.keys()].filter((k) => k.startsWith(timeMarkerPrefix(REPO)))).to.have.length(20);
    const r = await backfillTimeIndex(store, REPO);
    expect(r.from_before).to.equal(manifestKey(REPO, GEN, 41n));
    expect(r.from_after).to.equal(manifestKey(REPO, GEN, 8n));
    expect(r.indexed).to.equal(39);
    expect(r.damaged.map((d) => d.key)).to.deep.equal([manifestKey(REPO, GEN, 7n)]);
    // --at into the old part: the index's few requests now (was one read per newer manifest).
    const a = await counted(store, () => findManifest(store, REPO, { atUs: timeOf(20n) }));
    expect(commitOf(a.value)).to.equal(20n);
    expect(a.calls.filter((c) => c.startsWith('get '))).to.deep.equal([`get ${timeIndexOriginKey(REPO)}`, `get ${manifestKey(REPO, GEN, 20n)}`]);
    // Below the origin, the damaged manifest is still read, and reported.
    const low = await findManifest(store, REPO, { atUs: timeOf(7n) });
    expect(commitOf(low)).to.equal(6n);
    expect(low!.skipped.map((x) => x.key)).to.deep.equal([manifestKey(REPO, GEN, 7n)]);
    // Idempotent: nothing left to index above the damaged one.
    const again = await backfillTimeIndex(store, REPO);
    expect(again.from_after).to.equal(again.from_before);
    // Without any origin (an archive from before the index): every manifest gets its marker.
    const bare = new MemoryObjectStore();
    await archiveOf(bare, 12, null);
    const b = await backfillTimeIndex(bare, REPO);
    expect(b).to.deep.include({ from_before: null, from_after: manifestKey(REPO, GEN, 1n), indexed: 12 });
    expect(commitOf(await findManifest(bare, REPO, { atUs: timeOf(3n) }))).to.equal(3n);
    for (const args of [['archive', 'index'], ['archive', 'index', '--from', 's3://b/p/', '--repo', 'x'], ['archive', 'index', '--from', 's3://b/p/', '--repo', '4294967296']]) {
      const u = await cli(args);
      expect(u.code, `${args.join(' ')}: ${u.stderr}`).to.equal(2);
    }
    expect((await cli(['archive', 'index', '--help'])).stdout).to.match(/^Usage: cairn archive index --from/);
  });

  it('the writer leaves a marker beside each manifest and the index\'s origin; a prune removes a dropped manifest\'s marker', async () => {
    const store = new MemoryObjectStore(false);
    const server = await startTestServer(path.join(tempDir(), 'data'), { archive: { url: 's3://cairn-test/times/', store, intervalMs: 50, manifestChain: 0 } });
    let repo: number;
    try {
      repo = await register(server.url, 'alpha');
      for (let i = 1; i <= 3; i++) {
        await commitWorkflow(server.url, repo, i);
        await until('shipped', async () => {
          const row = (await api(server.url, 'GET', '/healthz')).json.archive?.repositories.find((x: any) => x.repository === repo);
          return row && row.shipped_commit === row.committed && row.shipped_commit !== '0';
        });
      }
    } finally {
      await server.stop();
    }
    const keys = await allKeys(store, `repositories/${repo}/`);
    const manifests = keys.filter((k) => k.includes('/manifests/'));
    const markers = keys.filter((k) => k.startsWith(timeMarkerPrefix(repo)));
    expect(manifests.length).to.be.greaterThan(1);
    expect(markers).to.have.length(manifests.length);
    expect(keys).to.include(timeIndexOriginKey(repo));
    const manifestReads = (calls: string[]): string[] => calls.filter((c) => c.startsWith('get ') && c.includes('/manifests/'));
    const newest = await counted(store, () => findManifest(store, repo));
    const viaIndex = await counted(store, () => findManifest(store, repo, { atUs: newest.value!.manifest.capturedAtUs }));
    expect(viaIndex.value!.key).to.equal(newest.value!.key);
    // The chosen manifest and its chain of bases, as a restore of the newest reads: nothing more.
    expect(manifestReads(viaIndex.calls)).to.deep.equal(manifestReads(newest.calls));
    // Keep only the newest: every other manifest and its marker go; the origin stays.
    const later = Date.now() + 3_600_000;
    await pruneArchive(store, { policy: parseRetention('all:1s', 'test'), graceMs: 0, now: () => later });
    const after = await allKeys(store, `repositories/${repo}/`);
    const left = after.filter((k) => k.includes('/manifests/'));
    expect(left.length).to.be.lessThan(manifests.length);
    expect(after.filter((k) => k.startsWith(timeMarkerPrefix(repo)))).to.have.length(left.length);
    expect(after).to.include(timeIndexOriginKey(repo));
  });
});
