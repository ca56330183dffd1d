// `cairn archive verify` (lib/authority/archive-verify.ts) against the in-memory store: a good
// archive verifies (restored into a temporary directory, opened, fsck clean); a byte flipped in
// a stored object, or an object deleted, fails naming the object and its manifest, and the
// temporary directory is gone either way. The command's own usage checks run as the CLI.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { readManifest } from '../lib/archive/restore.js';
import { verifyArchive } from '../lib/authority/archive-verify.js';
import { shipDataDir, type ShippedManifest } from './archive-dir-ship.js';
import { write } from './archive-reads.js';
import { MemoryObjectStore } from './memory-store.js';
import { api, cli, register, spawnServer, startTestServer, tempDir, until } from './helpers.js';
import { commitContent } from './archive-fixture.js';

describe('cairn archive verify (in-memory store)', function () {
  this.timeout(180_000);
  const source = path.join(tempDir(), 'data');
  const url = 's3://bucket/site/';
  let memory: MemoryObjectStore;
  let shipped: ShippedManifest[];
  let scratch: string;

  before(async () => {
    const s = await spawnServer(source, ['--no-ui']);
    await register(s.url, 'alpha');
    await register(s.url, 'beta');
    await write(s.url, 0, 1);
    await write(s.url, 1, 1);
    s.proc.kill('SIGTERM');
    await s.exited;
    memory = new MemoryObjectStore();
    shipped = await shipDataDir(memory, source);
  });
  beforeEach(async () => { scratch = tempDir(); });
  afterEach(async () => {
    // Whatever happened, no temporary directory is left.
    expect(await fsp.readdir(scratch)).to.deep.equal([]);
  });

  it('a good archive verifies: the newest manifest by default, every repository with --all, a sample', async () => {
    const newest = await verifyArchive(memory, { url, selection: { kind: 'newest' }, tempRoot: scratch });
    expect(newest.ok, JSON.stringify(newest)).to.equal(true);
    expect(newest.archived).to.equal(2);
    expect(newest.repositories).to.have.length(1);
    expect(newest.repositories[0]!.objects).to.be.greaterThan(3);

    const all = await verifyArchive(memory, { url, selection: { kind: 'all' }, tempRoot: scratch });
    expect(all.ok, JSON.stringify(all)).to.equal(true);
    expect(all.repositories.map((r) => [r.repository, r.manifest])).to.deep.equal(shipped.map((m) => [m.repository, m.key]));

    const sample = await verifyArchive(memory, { url, selection: { kind: 'sample', count: 1 }, tempRoot: scratch });
    expect(sample.ok).to.equal(true);
    expect(sample.repositories).to.have.length(1);
  });

  it('a byte flipped in a stored object fails, naming the object and its manifest', async () => {
    const m = await readManifest(memory, shipped[1]!.key);
    const pack = m.entries.find((e) => e.kind === 'pack')!;
    const good = memory.objects.get(pack.key)!;
    const bad = Buffer.from(good.bytes);
    bad[bad.length >> 1] ^= 0x01;
    memory.objects.set(pack.key, { ...good, bytes: bad });
    try {
      const r = await verifyArchive(memory, { url, selection: { kind: 'all' }, tempRoot: scratch });
      expect(r.ok).to.equal(false);
      expect(r.repositories[0]!.ok, r.repositories[0]!.problem ?? '').to.equal(true);
      const failed = r.repositories[1]!;
      expect(failed.ok).to.equal(false);
      expect(failed.problem).to.include(pack.key).and.include(shipped[1]!.key).and.match(/damaged/);
    } finally {
      memory.objects.set(pack.key, good);
    }
  });

  it('a missing object fails, naming the object and its manifest', async () => {
    const m = await readManifest(memory, shipped[0]!.key);
    const range = m.entries.find((e) => e.kind === 'log-range')!;
    const good = memory.objects.get(range.key)!;
    memory.objects.delete(range.key);
    try {
      const r = await verifyArchive(memory, { url, selection: { kind: 'all' }, tempRoot: scratch });
      expect(r.ok).to.equal(false);
      expect(r.repositories[0]!.problem).to.include(range.key).and.include(shipped[0]!.key).and.match(/missing from the archive/);
      expect(r.repositories[1]!.ok).to.equal(true);
    } finally {
      memory.objects.set(range.key, good);
    }
  });

  it('a damaged newest manifest fails naming it', async () => {
    const key = shipped[1]!.key;
    const good = memory.objects.get(key)!;
    const bad = Buffer.from(good.bytes);
    bad[40] ^= 0x01;
    memory.objects.set(key, { ...good, bytes: bad });
    try {
      const r = await verifyArchive(memory, { url, selection: { kind: 'newest' }, tempRoot: scratch });
      expect(r.ok).to.equal(false);
      expect(r.repositories.map((x) => x.problem).join('\n')).to.include(key);
    } finally {
      memory.objects.set(key, good);
    }
  });

  it('the command: --help, and usage errors exit 2 before the store is asked', async () => {
    const help = await cli(['archive', 'verify', '--help']);
    expect(help.code).to.equal(0);
    expect(help.stdout).to.match(/--sample N/).and.match(/--all/).and.match(/Exit codes/);
    expect((await cli(['archive', 'verify'])).code).to.equal(2);
    const both = await cli(['archive', 'verify', '--from', url, '--all', '--sample', '2']);
    expect(both.code).to.equal(2);
    expect(both.stderr).to.match(/exclude each other/);
    expect((await cli(['archive', 'verify', '--from', url, '--sample', '0'])).code).to.equal(2);
    expect((await cli(['archive', 'verify', '--from', url, '--concurrency', '0'])).code).to.equal(2);
  });
});

describe('serve --archive-verify-every (in-memory store)', function () {
  this.timeout(120_000);

  it('verifies now and then; a damaged object is an archive.verify_failed event naming it and shows on /healthz', async () => {
    const store = new MemoryObjectStore();
    const server = await startTestServer(path.join(tempDir(), 'data'), { archive: { url: 's3://bucket/verify/', store, intervalMs: 50, verify: { everyMs: 200 } } });
    try {
      const repo = await register(server.url, 'gamma');
      await commitContent(server.url, repo, 'one');
      await commitContent(server.url, repo, 'two');
      const health = async (): Promise<any> => (await api(server.url, 'GET', '/healthz')).json.archive;
      await until('shipped', async () => (await health()).repositories.find((r: any) => r.repository === repo && r.uncovered_commits === 0 && r.shipped_commit !== '0'), 30_000);
      const good = await until('a verification passed', async () => {
        const v = (await health()).last_verify;
        return v?.ok === true && v.repositories[0]?.manifest ? v : null;
      }, 30_000);
      expect(good.repositories[0].repository).to.equal(repo);
      // Damage one pack the newest manifest names.
      const m = await readManifest(store, (await until('manifest', async () => (await health()).last_verify?.repositories?.[0]?.manifest, 5_000)) as string);
      const pack = m.entries.find((e) => e.kind === 'pack')!;
      const stored = store.objects.get(pack.key)!;
      const bad = Buffer.from(stored.bytes);
      bad[bad.length - 1] ^= 0xff;
      store.objects.set(pack.key, { ...stored, bytes: bad });
      const event = await until('archive.verify_failed', async () => ((await api(server.url, 'GET', '/v1/native/events')).json.events as any[]).find((e) => e.type === 'archive.verify_failed'), 30_000);
      expect(event.data.repository_index).to.equal(repo);
      expect(event.data.archive).to.equal('s3://bucket/verify/');
      expect(event.data.problem).to.include(pack.key).and.match(/damaged/);
      const failed = (await health()).last_verify;
      expect(failed.ok).to.equal(false);
      expect(failed.repositories[0].problem).to.include(pack.key);
    } finally {
      await server.stop();
    }
  });
});
