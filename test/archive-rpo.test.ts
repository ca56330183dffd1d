// The archive's RPO on the in-memory store (test/memory-store.ts), through a real server, with
// interleavings forced by holding chosen uploads: captures are pipelined (a later commit's
// objects upload while an earlier big pack is held; no object is HEADed), a manifest covers
// the newest commit whose objects and every earlier commit's are stored, manifests are
// incremental, the lag is the age of the oldest uncovered commit (and survives a restart), and
// with --archive-sync a commit is answered only once a manifest covers it.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { api, register, startTestServer, tempDir, until, type TestServer } from './helpers.js';
import { MemoryObjectStore } from './memory-store.js';
import { commitContent, commitWorkflow, expectNewestMatches, manifests } from './archive-fixture.js';
import { parseManifestKey } from '../lib/domain/archive-manifest.js';
import { restoreArchive } from '../lib/archive/restore.js';

const URL_ = 's3://cairn-test/rpo/';

async function health(server: TestServer): Promise<any> {
  const res = await api(server.url, 'GET', '/healthz');
  expect(res.status).to.equal(200);
  return res.json;
}

async function caughtUp(server: TestServer, repo: number): Promise<any> {
  return until('shipping caught up', async () => {
    const a = (await health(server)).archive;
    const row = a?.repositories.find((x: any) => x.repository === repo);
    return row && row.shipped_commit !== '0' && row.shipped_commit === row.committed && row.uncovered_commits === 0 ? a : null;
  }, 30_000);
}

describe('archive RPO (memory store)', function () {
  this.timeout(120_000);
  let server: TestServer | undefined;
  afterEach(async () => { await server?.stop(); server = undefined; });

  const start = async (store: MemoryObjectStore, dataDir = path.join(tempDir(), 'data'), extra: Record<string, unknown> = {}): Promise<TestServer> => {
    server = await startTestServer(dataDir, { archive: { url: URL_, store, intervalMs: 50, ...extra } });
    return server;
  };

  it('uploads a later commit\'s objects while an earlier big pack is held, writes no manifest past the held commit, and covers every later commit as soon as the pack is stored; no object is HEADed', async () => {
    const store = new MemoryObjectStore(false);
    const s = await start(store, undefined, { concurrency: 2 });
    const a = await register(s.url, 'alpha');
    await commitWorkflow(s.url, a, 1);
    await caughtUp(s, a);
    // Held: the upload of a big pack (over 1 MiB).
    const release = store.hold(`repositories/${a}/packs/`, 1024 * 1024);
    const mark = store.calls.length;
    await commitContent(s.url, a, randomBytes(1536 * 1024).toString('base64'));
    await until('the pack upload is held', async () => store.held > 0);
    const before = (await manifests(store, a)).length;
    for (let i = 2; i <= 4; i++) await commitWorkflow(s.url, a, i);
    const committed = Number((await health(s)).archive.repositories[0].committed);
    // The later commits' log ranges are stored while the pack waits (a capture per interval, pipelined).
    await until('a later commit\'s plans.log range stored while the pack is held', async () => {
      const ranges = store.calls.slice(mark).filter((c) => c.startsWith(`put repositories/${a}/`) && c.includes('/logs/plans.log/'));
      const ends = ranges.map((c) => Number(c.split('-').at(-1)));
      return ends.length >= 1 && store.held > 0 ? ends : null;
    });
    expect((await manifests(store, a)).length, 'no manifest passes the commit whose pack is held').to.equal(before);
    const row = (await health(s)).archive.repositories[0];
    expect(row.uncovered_commits, 'the held commit and the later ones are uncovered').to.be.at.least(committed - Number(row.shipped_commit));
    expect(row.lag_seconds).to.be.greaterThan(0);
    release();
    await caughtUp(s, a);
    const after = await manifests(store, a);
    // Once the pack is stored, one manifest covers the held commit and every later one (none in between needed).
    expect(after.length - before, 'manifests written after the release').to.be.at.most(2);
    expect(parseManifestKey(after.at(-1)!.key)!.commitGeneration).to.equal(BigInt(committed));
    const heads = store.calls.filter((c) => c.startsWith('head repositories/') && !c.includes('/manifests/') && !c.endsWith('/purged'));
    expect(heads, 'no object HEADed').to.deep.equal([]);
    await expectNewestMatches(store, s.dataDir, a);
  });

  it('writes incremental manifests (what changed since the previous one), a full one every --archive-manifest-chain, and a restore of the newest rebuilds the repository', async () => {
    const store = new MemoryObjectStore(false);
    const s = await start(store, undefined, { manifestChain: 3 });
    const a = await register(s.url, 'alpha');
    for (let i = 1; i <= 3; i++) await commitContent(s.url, a, `content ${i}`);
    for (let i = 1; i <= 8; i++) {
      await commitWorkflow(s.url, a, i);
      await caughtUp(s, a);
    }
    const all = await manifests(store, a);
    const chains = all.map((m) => m.stored.delta?.chainLength ?? 0);
    expect(chains.filter((c) => c === 0).length, 'full manifests').to.be.greaterThan(1);
    expect(Math.max(...chains), 'chains bounded').to.be.at.most(3);
    const newestDelta = all.filter((m) => m.stored.delta).at(-1)!;
    expect(newestDelta.stored.entries.length, 'an incremental manifest names only what changed').to.be.lessThan(newestDelta.manifest.entries.length / 2);
    const packs = (m: { entries: { kind: string }[] }): number => m.entries.filter((e) => e.kind === 'pack').length;
    expect(packs(newestDelta.stored), 'no unchanged pack named again').to.be.lessThan(packs(newestDelta.manifest) - 3);
    await expectNewestMatches(store, s.dataDir, a);
    const out = path.join(tempDir(), 'restored');
    const restored = await restoreArchive(store, { url: URL_, repositories: [a], target: { seq: newestDelta.stored.commitGeneration }, dataDir: out });
    expect(restored[0]!.commit).to.equal(Number(newestDelta.stored.commitGeneration));
  });

  it('reports the lag as the age of the oldest uncovered commit and the count of such commits, and a restart does not reset it', async () => {
    const store = new MemoryObjectStore(false);
    const dataDir = path.join(tempDir(), 'data');
    let s = await start(store, dataDir, { lagWarnSeconds: 1 });
    const a = await register(s.url, 'alpha');
    await commitWorkflow(s.url, a, 1);
    await caughtUp(s, a);
    const shippedAtMs = Number(all0(await manifests(store, a)).capturedAtUs / 1000n);
    store.inject({ op: 'put', kind: 'unavailable', times: 1_000_000 });
    for (let i = 2; i <= 4; i++) await commitWorkflow(s.url, a, i);
    const row = await until('three uncovered commits', async () => {
      const r = (await health(s)).archive.repositories[0];
      return r.uncovered_commits >= 3 && r.lag_seconds > 0 ? r : null;
    });
    expect(Date.parse(row.oldest_uncovered_at)).to.be.at.least(shippedAtMs);
    await s.stop();
    server = undefined;
    await new Promise((r) => setTimeout(r, 1200)); // the restart comes well after the commits
    s = await start(store, dataDir, { lagWarnSeconds: 1 });
    const asked = Date.now();
    const again = await until('the uncovered commits known after the restart', async () => {
      const r = (await health(s)).archive.repositories.find((x: any) => x.repository === a);
      return r && r.uncovered_commits >= 3 ? r : null;
    });
    // Counted from the newest stored manifest (the uncovered commits' own times died with the process): never less than the truth.
    expect(again.lag_seconds, 'the lag after the restart').to.be.at.least((asked - shippedAtMs) / 1000 - 0.2);
    expect((await health(s)).archive.uncovered_commits).to.be.at.least(3);
    const lagging = await until('archive.lagging with the count', async () => ((await api(s.url, 'GET', '/v1/native/events')).json.events as any[]).find((e) => e.type === 'archive.lagging'));
    expect(lagging.data.uncovered_commits).to.be.at.least(3);
    store.recover();
    await caughtUp(s, a);
    await expectNewestMatches(store, s.dataDir, a);
  });

  it('--archive-sync answers a commit only once a manifest covering it is stored, many commits share a manifest, and a commit not covered in time is answered 503', async () => {
    const store = new MemoryObjectStore(false);
    const s = await start(store, undefined, { sync: true, syncTimeoutMs: 60_000 });
    const a = await register(s.url, 'alpha');
    await commitWorkflow(s.url, a, 0);
    const release = store.hold(`repositories/${a}/manifests/`);
    let answered = 0;
    const writes = Array.from({ length: 20 }, (_, i) => commitWorkflow(s.url, a, i + 1).then(() => { answered++; }));
    await until('a manifest put is held', async () => store.held > 0);
    await new Promise((r) => setTimeout(r, 300));
    expect(answered, 'no commit answered while its manifest is held').to.equal(0);
    const before = (await manifests(store, a)).length;
    release();
    await Promise.all(writes);
    const committed = Number((await health(s)).archive.repositories[0].committed);
    const all = await manifests(store, a);
    expect(parseManifestKey(all.at(-1)!.key)!.commitGeneration, 'the answered commits are covered').to.equal(BigInt(committed));
    expect(all.length - before, 'manifests for 20 commits (group shipping)').to.be.lessThan(10);
    expect((await health(s)).archive.sync).to.equal(true);
    await expectNewestMatches(store, s.dataDir, a);
  });

  it('--archive-sync: a commit the archive cannot cover in time is answered 503, saying it is committed here', async () => {
    const store = new MemoryObjectStore(false);
    const s = await start(store, undefined, { sync: true, syncTimeoutMs: 1000 });
    const a = await register(s.url, 'alpha');
    store.inject({ op: 'put', kind: 'unavailable', times: 1_000_000 });
    const res = await api(s.url, 'POST', `/v1/native/repository-authorities/${a}/sprints`, { json: { title: 'Sprint x', artifact_path: 'docs/plan.md', artifact_heading: 'Sprint', artifact_body: '# Sprint\n- [ ] x {#x}\n' } });
    expect(res.status, res.text).to.equal(503);
    expect(res.json.error).to.match(/committed on this server.*no archive manifest covers it/);
    store.recover();
    await caughtUp(s, a);
  });
});

function all0(list: { manifest: { capturedAtUs: bigint } }[]): { capturedAtUs: bigint } {
  return list.at(-1)!.manifest;
}
