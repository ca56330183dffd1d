// Shipping to the archive (lib/archive/shipper.ts, lib/authority/archiving.ts) against the
// in-memory, fault-injecting store of test/memory-store.ts, through a real server: what a
// manifest names is all there and rebuilds the repository's files byte for byte; an outage
// never fails a commit and shipping catches up; a newer generation fences the writer; the
// lease where the store honours conditional writes.
import { buffer } from 'node:stream/consumers';
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { api, download, register, startTestServer, tempDir, until, type TestServer } from './helpers.js';
import { MemoryObjectStore } from './memory-store.js';
import { commitContent, commitWorkflow, expectNewestMatches, manifests, allKeys, verifyManifest } from './archive-fixture.js';
import { claimGeneration } from '../lib/archive/generations.js';
import { parseManifestKey } from '../lib/domain/archive-manifest.js';
import { parseRetention } from '../lib/domain/archive-retention.js';
import { sealingTestHooks } from '../lib/domain/sealing.js';
import { faults } from '../lib/store/crash-point.js';

const URL_ = 's3://cairn-test/site/';

async function health(server: TestServer): Promise<any> {
  const res = await api(server.url, 'GET', '/healthz');
  expect(res.status).to.equal(200);
  return res.json;
}

async function caughtUp(server: TestServer, repos: number[], ms = 30_000): Promise<any> {
  return until('shipping caught up', async () => {
    const h = await health(server);
    const a = h.archive;
    if (!a) return null;
    const ok = repos.every((r) => {
      const row = a.repositories.find((x: any) => x.repository === r);
      return row && row.shipped_commit !== '0' && row.shipped_commit === row.committed && row.lag_seconds === 0;
    });
    return ok ? a : null;
  }, ms);
}

describe('archive shipping (memory store)', function () {
  this.timeout(120_000);
  let server: TestServer | undefined;
  afterEach(async () => { await server?.stop(); server = undefined; });

  const start = async (store: MemoryObjectStore, dataDir = path.join(tempDir(), 'data'), extra: Record<string, unknown> = {}): Promise<TestServer> => {
    server = await startTestServer(dataDir, { archive: { url: URL_, store, intervalMs: 50, ...extra } });
    return server;
  };

  it('ships packs, log ranges, files and then one manifest per commit point; the newest rebuilds the files byte for byte', async () => {
    const store = new MemoryObjectStore(false);
    const s = await start(store);
    const a = await register(s.url, 'alpha');
    const b = await register(s.url, 'beta');
    await commitContent(s.url, a, 'one');
    await commitWorkflow(s.url, a, 1);
    await commitWorkflow(s.url, b, 1);
    const status = await caughtUp(s, [a, b]);
    expect(status.generation).to.equal('1');
    expect(status.url).to.equal(URL_);
    expect(['idle', 'shipping']).to.include(status.state);
    await commitContent(s.url, a, 'two');
    await commitWorkflow(s.url, a, 2);
    await caughtUp(s, [a, b]);
    await expectNewestMatches(store, s.dataDir, a);
    await expectNewestMatches(store, s.dataDir, b);
    // Order: within one shipping round of a repository the manifest is the last put.
    const puts = store.calls.filter((c) => c.startsWith(`put repositories/${a}/`));
    expect(puts.at(-1)).to.include('/manifests/');
    // The claim and archive.json.
    expect(await allKeys(store, 'generations/')).to.deep.equal(['generations/00000000000000000001']);
    const id = JSON.parse(store.objects.get('archive-id')!.bytes.toString('utf8')).archive_id;
    expect(JSON.parse(await fsp.readFile(path.join(s.dataDir, 'archive.json'), 'utf8'))).to.deep.equal({ url: URL_, archive_id: id, generation: '1' });
    // Ranges after the first base: a later manifest names the base plus new ranges, not a new copy.
    const all = await manifests(store, a);
    const ev = all.at(-1)!.manifest.entries.filter((e) => e.kind === 'log-range' && e.path === 'events.log');
    expect(ev[0]!.offset, 'the base').to.equal(0n);
    expect(ev.length, 'the base and later ranges').to.be.greaterThan(1);
  });

  it('counts the commits of a repository registered since the last round as uncovered before the shipper has read it', async () => {
    const store = new MemoryObjectStore(false);
    // A round an hour away: the new repository is not read from the archive before the look.
    const s = await start(store, path.join(tempDir(), 'data'), { intervalMs: 3_600_000 });
    await until('the first round ran', async () => (await health(s)).archive?.state === 'idle', 30_000);
    const a = await register(s.url, 'fresh');
    await commitWorkflow(s.url, a, 2);
    const h = (await health(s)).archive;
    expect(h.repositories.map((r: { repository: number }) => r.repository)).to.not.include(a);
    expect(h.uncovered_commits).to.be.greaterThan(0);
    expect(h.state).to.equal('shipping');
  });

  it('ships a base (the whole committed prefix) every --archive-checkpoint-ranges ranges, so a manifest names few log objects', async () => {
    const store = new MemoryObjectStore(false);
    const s = await start(store, undefined, { checkpointRanges: 2 });
    const a = await register(s.url, 'alpha');
    for (let i = 1; i <= 6; i++) {
      await commitWorkflow(s.url, a, i);
      await caughtUp(s, [a]);
    }
    const all = await manifests(store, a);
    const newest = all.at(-1)!.manifest.entries.filter((e) => e.kind === 'log-range' && e.path === 'events.log');
    expect(newest[0]!.offset, 'a base first').to.equal(0n);
    expect(newest.length, 'a base and at most 2 ranges').to.be.at.most(3);
    const bases = new Set(all.flatMap((m) => m.manifest.entries.filter((e) => e.path === 'events.log' && e.offset === 0n).map((e) => e.key)));
    expect(bases.size, 'more than one base over the rounds').to.be.greaterThan(1);
    await expectNewestMatches(store, s.dataDir, a);
  });

  it('a capture reads its files after a merge unlinked them, and a compacted log is shipped as a new base', async () => {
    const store = new MemoryObjectStore(false);
    const s = await start(store);
    const a = await register(s.url, 'alpha');
    for (let i = 1; i <= 3; i++) await commitContent(s.url, a, `content ${i}`);
    await caughtUp(s, [a]);
    const service = await s.ready;
    const authority = await service.opened(a);
    const capture = await authority.store.capture({ file: () => true });
    try {
      const segs = capture.files.filter((f) => f.kind === 'index' && f.path.startsWith('index/blobs.'));
      expect(segs.length, 'several blobs segments').to.be.greaterThan(1);
      const before = await Promise.all(segs.map((f) => fsp.readFile(path.join(s.dataDir, 'repositories', String(a), f.path))));
      await authority.store.mergeSegments('blobs');
      for (const f of segs) {
        await fsp.access(path.join(s.dataDir, 'repositories', String(a), f.path)).then(() => { throw new Error(`${f.path} still there after the merge`); }, () => {});
      }
      for (const [i, f] of segs.entries()) {
        const bytes = Buffer.alloc(f.size);
        await f.handle.read(bytes, 0, f.size, 0);
        expect(bytes.equals(before[i]!), `${f.path} read through the capture after its unlink`).to.equal(true);
      }
    } finally {
      await capture.close();
    }
    // events.log rewritten as events.<n>.log (retention): the next manifest names a base of the new file.
    await commitWorkflow(s.url, a, 1);
    await commitWorkflow(s.url, a, 2);
    await caughtUp(s, [a]);
    expect(await authority.store.trimEvents(1)).to.be.greaterThan(0);
    await commitWorkflow(s.url, a, 3);
    await caughtUp(s, [a]);
    const newest = (await manifests(store, a)).at(-1)!.manifest;
    const ev = newest.entries.filter((e) => e.kind === 'log-range' && /^events\.[0-9]+\.log$/.test(e.path));
    expect(ev.length, 'ranges of the compacted events log').to.be.greaterThan(0);
    expect(ev[0]!.offset).to.equal(0n);
    expect(newest.entries.some((e) => e.path === 'events.log'), 'the old file is no longer named').to.equal(false);
    await expectNewestMatches(store, s.dataDir, a);
  });

  it('ships many new packs over several rounds (a bounded number open at once), the manifest after the last', async () => {
    const store = new MemoryObjectStore(false);
    const s = await start(store, undefined, { packsPerRound: 1 });
    const a = await register(s.url, 'alpha');
    await commitContent(s.url, a, 'one');
    await commitContent(s.url, a, 'two');
    await commitContent(s.url, a, 'three');
    await caughtUp(s, [a]);
    const newest = (await manifests(store, a)).at(-1)!.manifest;
    expect(newest.entries.filter((e) => e.kind === 'pack').length).to.equal(6);
    await expectNewestMatches(store, s.dataDir, a);
  });

  it('keeps its generation across a restart and ships only what is new (packs already there are not uploaded again)', async () => {
    const store = new MemoryObjectStore(false);
    const dataDir = path.join(tempDir(), 'data');
    let s = await start(store, dataDir);
    const a = await register(s.url, 'alpha');
    await commitContent(s.url, a, 'one');
    await caughtUp(s, [a]);
    await s.stop();
    const packPuts = (): string[] => store.calls.filter((c) => c.startsWith('put ') && c.includes('/packs/'));
    const before = packPuts();
    s = await start(store, dataDir);
    await commitWorkflow(s.url, a, 1);
    await caughtUp(s, [a]);
    const again = packPuts().slice(before.length).filter((c) => before.includes(c));
    expect(again, 'no pack uploaded again after the restart').to.deep.equal([]);
    expect(JSON.parse(await fsp.readFile(path.join(dataDir, 'archive.json'), 'utf8')).generation).to.equal('1');
    await expectNewestMatches(store, s.dataDir, a);
  });

  it('restarts behind a stale listing (the newest manifest not listed yet): catches up without a broken manifest', async () => {
    const store = new MemoryObjectStore(true);
    const dataDir = path.join(tempDir(), 'data');
    let s = await start(store, dataDir, { leaseSeconds: 1 });
    const a = await register(s.url, 'alpha');
    await commitWorkflow(s.url, a, 1);
    await caughtUp(s, [a]);
    store.staleListing();
    await commitWorkflow(s.url, a, 2);
    const shipped = await caughtUp(s, [a]);
    await s.stop();
    server = undefined;
    s = await start(store, dataDir, { leaseSeconds: 1 });
    await until('caught up again after the restart', async () => {
      const row = (await health(s)).archive.repositories.find((r: any) => r.repository === a);
      return row && row.shipped_commit === shipped.repositories[0].shipped_commit && row.committed === row.shipped_commit;
    }, 30_000);
    store.freshListing();
    await commitWorkflow(s.url, a, 3);
    await caughtUp(s, [a]);
    await expectNewestMatches(store, s.dataDir, a);
  });

  it('prunes by --archive-keep beside the shipping: old manifests go, every kept one stays whole, the newest matches the files', async () => {
    const store = new MemoryObjectStore(false);
    // A full manifest every other one: a kept incremental manifest keeps its base.
    const s = await start(store, undefined, { manifestChain: 1, prune: { policy: parseRetention('all:1s'), graceMs: 500, everyMs: 300 } });
    const a = await register(s.url, 'alpha');
    for (let i = 1; i <= 3; i++) {
      await commitWorkflow(s.url, a, i);
      await caughtUp(s, [a]);
    }
    const before = (await manifests(store, a)).length;
    expect(before).to.be.greaterThan(2);
    const pruned = await until('a prune dropped the old manifests', async () => {
      const p = (await health(s)).archive.last_prune;
      return p && p.deleted_manifests > 0 ? p : null;
    });
    expect(pruned).to.not.have.property('error');
    await commitWorkflow(s.url, a, 4);
    await caughtUp(s, [a]);
    const kept = await manifests(store, a);
    expect(kept.length).to.be.lessThan(before + 1);
    for (const { key, manifest: m } of kept) await verifyManifest(store, m, key);
    await expectNewestMatches(store, s.dataDir, a);
    // the claims are never pruned
    expect(await allKeys(store, 'generations/')).to.deep.equal(['generations/00000000000000000001']);
  });

  it('ships a retiring repository until it is purged; a purged one stops and its objects stay', async () => {
    const store = new MemoryObjectStore(false);
    const s = await start(store);
    const a = await register(s.url, 'alpha');
    const b = await register(s.url, 'beta');
    await commitWorkflow(s.url, a, 1);
    await commitWorkflow(s.url, b, 1);
    await caughtUp(s, [a, b]);
    const AUTH = '/v1/native/repository-authorities';
    expect((await api(s.url, 'POST', `${AUTH}/${a}/retirement`)).status).to.equal(200);
    const status = await api(s.url, 'GET', `${AUTH}/${a}/retirement`);
    const manifest = status.json.manifest;
    for (const f of manifest.files) await download(s.url, `${AUTH}/${a}/retirement/files/${encodeURIComponent(f.path)}`);
    expect((await health(s)).archive.repositories.map((r: any) => r.repository)).to.include(a);
    const purge = await api(s.url, 'POST', `${AUTH}/${a}/retirement/purge`, { json: manifest });
    expect(purge.status, purge.text).to.equal(200);
    await commitWorkflow(s.url, b, 2);
    await caughtUp(s, [b]);
    await until('the purged repository leaves the status', async () => !(await health(s)).archive.repositories.some((r: any) => r.repository === a));
    const kept = await manifests(store, a);
    expect(kept.length).to.be.greaterThan(0);
    for (const { key, manifest: m } of kept) await verifyManifest(store, m, key);
    // the purge marker: its archive now follows the retention windows (the live one has none)
    await until('the purge marker is stored', async () => (await store.head(`repositories/${a}/purged`)) !== null);
    expect(JSON.parse((await buffer((await store.get(`repositories/${a}/purged`)).body)).toString())).to.include({ repository_index: a });
    expect(await store.head(`repositories/${b}/purged`)).to.equal(null);
  });

  it('never fails a commit while the store is down (5xx, throttling, a partial upload), warns of the lag, and catches up after', async () => {
    const store = new MemoryObjectStore(false);
    const s = await start(store, undefined, { lagWarnSeconds: 1 });
    const a = await register(s.url, 'alpha');
    await commitWorkflow(s.url, a, 0);
    await caughtUp(s, [a]);
    store.partialUpload(`repositories/${a}/`, 3);
    for (let i = 0; i < 50; i++) store.inject({ op: 'put', kind: i % 2 ? 'throttled' : 'unavailable', times: 1 });
    store.crashAtPutNumber(1);
    for (let i = 1; i <= 5; i++) await commitWorkflow(s.url, a, i); // each commit answers 201 (asserted inside)
    await commitContent(s.url, a, 'during the outage');
    await until('the outage shows in /healthz', async () => {
      const h = (await health(s)).archive;
      return h.state === 'error' && h.last_error && h.repositories[0].lag_seconds > 0 && h.repositories[0].lag_bytes > 0 && h.repositories[0].committed !== h.repositories[0].shipped_commit ? h : null;
    });
    // Behind for longer than --archive-lag-warn-seconds: an archive.lagging event.
    const lagging = await until('archive.lagging in the global event feed', async () => {
      const events = (await api(s.url, 'GET', '/v1/native/events')).json.events as any[];
      return events.find((e) => e.type === 'archive.lagging');
    });
    expect(lagging.data).to.include({ repository_index: a, archive: URL_ });
    store.recover();
    await caughtUp(s, [a]);
    const h = (await health(s)).archive;
    expect(h.last_error).to.equal(null);
    await expectNewestMatches(store, s.dataDir, a);
  });

  it('stops shipping when a newer generation is claimed (fenced), says so in /healthz and the registry events', async () => {
    const store = new MemoryObjectStore(false);
    const s = await start(store);
    const a = await register(s.url, 'alpha');
    await commitWorkflow(s.url, a, 1);
    await caughtUp(s, [a]);
    // Another data directory (a restore, a promotion) claims the next generation.
    const other = await claimGeneration(store, 'promote', false);
    expect(other.generation).to.equal(2n);
    const shippedBefore = (await manifests(store, a)).length;
    await commitWorkflow(s.url, a, 2);
    const fenced = await until('fenced', async () => ((await health(s)).archive.state === 'fenced' ? (await health(s)).archive : null));
    expect(fenced.last_error).to.match(/fenced/);
    await commitWorkflow(s.url, a, 3); // commits go on
    expect((await manifests(store, a)).length, 'no manifest after the fence').to.equal(shippedBefore);
    for (const m of await manifests(store, a)) expect(parseManifestKey(m.key)!.archiveGeneration).to.equal(1n);
    await until('archive.fenced in the global event feed', async () => JSON.stringify((await api(s.url, 'GET', '/v1/native/events')).json).includes('archive.fenced'));
  });

  it('holds a lease where the store honours conditional writes: a second writer of the same generation waits', async () => {
    const store = new MemoryObjectStore(true);
    const dataDir = path.join(tempDir(), 'data');
    const s = await start(store, dataDir, { leaseSeconds: 3 });
    const a = await register(s.url, 'alpha');
    await commitWorkflow(s.url, a, 1);
    await caughtUp(s, [a]);
    const leases = await allKeys(store, 'lease/');
    expect(leases.length).to.be.greaterThan(0);
    expect(leases[0]).to.match(/^lease\/00000000000000000001\/[0-9]{20}$/);
    // A copy of the data directory (same archive.json, same generation) may not ship beside it.
    const copy = path.join(tempDir(), 'copy');
    await s.stop();
    server = undefined;
    await fsp.cp(dataDir, copy, { recursive: true });
    await fsp.rm(path.join(copy, 'cairn.lock'), { recursive: true, force: true });
    await fsp.rm(path.join(copy, 'cairn.lock.pid'), { force: true });
    const first = await startTestServer(dataDir, { archive: { url: URL_, store, intervalMs: 50, leaseSeconds: 30 } });
    try {
      await until('the first holds the lease', async () => ((await api(first.url, 'GET', '/healthz')).json.archive.state !== 'error' && (await allKeys(store, 'lease/')).length > 0));
      await new Promise((r) => setTimeout(r, 50));
      server = await startTestServer(copy, { archive: { url: URL_, store, intervalMs: 50, leaseSeconds: 30 } });
      const waiting = await until('the copy waits for the lease', async () => {
        const h = (await health(server!)).archive;
        return h.last_error && /lease/.test(h.last_error) ? h : null;
      });
      expect(waiting.repositories).to.deep.equal([]);
    } finally {
      await first.stop();
    }
  });

  it('stops as fenced when another process creates its next lease epoch (the lease is lost)', async () => {
    const store = new MemoryObjectStore(true);
    const s = await start(store, undefined, { leaseSeconds: 3 });
    const a = await register(s.url, 'alpha');
    await commitWorkflow(s.url, a, 1);
    await caughtUp(s, [a]);
    const newest = (await allKeys(store, 'lease/00000000000000000001/')).at(-1)!;
    const epoch = BigInt(newest.split('/').at(-1)!);
    const body = Buffer.from('{"holder":"someone else"}');
    const { sha256Hex } = await import('../lib/archive/object-store.js');
    for (let e = epoch + 1n; e <= epoch + 5n; e++) await store.putIfAbsent(`lease/00000000000000000001/${e.toString().padStart(20, '0')}`, body, { sha256: sha256Hex(body), size: body.length });
    const fenced = await until('fenced by the lost lease', async () => ((await health(s)).archive.state === 'fenced' ? (await health(s)).archive : null));
    expect(fenced.last_error).to.match(/lease/);
    const before = (await manifests(store, a)).length;
    await commitWorkflow(s.url, a, 2);
    expect((await manifests(store, a)).length).to.equal(before);
  });

  it('never ships a repository whose workflow.log holds a webhook secret in clear: the reseal is retried first, and while it fails /healthz says why', async () => {
    const SECRET = 'hook-Secret-archive-3f9a0c1d77';
    const store = new MemoryObjectStore(false);
    // The reseal fails (at the open and at every capture) until the fault is lifted.
    faults.failReseal = () => true;
    let s: TestServer;
    try {
      s = await startTestServer(path.join(tempDir(), 'data'), { webhookAllow: ['127.0.0.1'], archive: { url: URL_, store, intervalMs: 50 } });
      server = s;
      const a = await register(s.url, 'alpha');
      sealingTestHooks.writeInClear = true; // as a server from before sealing wrote it
      try {
        const res = await api(s.url, 'POST', `/v1/native/repository-authorities/${a}/webhooks`, { json: { url: 'http://127.0.0.1:9/hook', secret: SECRET, types: ['task.*'] } });
        expect(res.status, res.text).to.equal(201);
      } finally {
        sealingTestHooks.writeInClear = false;
      }
      await commitWorkflow(s.url, a, 1);
      const holding = () => [...store.objects.entries()].filter(([, o]) => o.bytes.includes(Buffer.from(SECRET))).map(([k]) => k);
      const refused = await until('the archive to refuse the repository (or ship it)', async () => {
        const h = (await health(s)).archive;
        if (holding().length) return { shipped: true, h };
        return h.state === 'error' && h.last_error ? { shipped: false, h } : null;
      });
      expect(holding(), 'objects holding the secret').to.deep.equal([]);
      expect(refused.h.last_error).to.match(new RegExp(`repository ${a}.*in clear`));
      expect(refused.h.last_error).to.not.include(SECRET);
      // The reseal succeeds at the next capture: shipping resumes, sealed.
      faults.failReseal = null;
      await caughtUp(s, [a]);
      expect(holding(), 'objects holding the secret').to.deep.equal([]);
      await until('the error to clear after a whole round', async () => (await health(s)).archive.last_error === null);
    } finally {
      faults.failReseal = null;
    }
  });

  it('never shows a secret in /healthz or the log', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write(chunk, _e, done) { lines.push(String(chunk)); done(); } });
    const store = new MemoryObjectStore(false);
    for (let i = 0; i < 5; i++) store.inject({ op: 'put', kind: 'unavailable' });
    const dataDir = path.join(tempDir(), 'data');
    const { startServer } = await import('../lib/cli/serve.js');
    const running = await startServer({ host: '127.0.0.1', port: 0, dataDir, log: pino({ level: 'debug' }, sink), archive: { url: URL_, store, intervalMs: 50 } });
    await running.ready;
    try {
      const a = await register(running.url, 'alpha');
      await commitWorkflow(running.url, a, 1);
      await until('shipped', async () => (await api(running.url, 'GET', '/healthz')).json.archive.repositories[0]?.shipped_commit !== '0');
      const h = JSON.stringify((await api(running.url, 'GET', '/healthz')).json);
      for (const text of [h, lines.join('')]) {
        expect(text).to.not.match(/secret|AWS_SECRET|access_key/i);
      }
    } finally {
      await running.stop();
    }
  });
});
