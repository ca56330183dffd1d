// POST /archive/handover on in-process writers over an in-memory archive (the Swift drills are
// test/archive-switchover.test.ts): who may ask for it (403 from another address without a
// promotion secret, nothing changes), and the lease hook — called once, after the handover is
// recorded in archive.json and before the answer; a failed release answers 503 and is retried
// by calling again, the writer staying handed over meanwhile; `cairn archive reclaim` clears it.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { startServer, type RunningServer, type ServerOptions } from '../lib/cli/serve.js';
import { MemoryObjectStore } from './memory-store.js';
import { api, cli, register, tempDir, until } from './helpers.js';

const URL_ = 's3://handover/team/';
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;

function outsideAddress(): string | null {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const i of list ?? []) if (i.family === 'IPv4' && !i.internal) return i.address;
  }
  return null;
}

interface Writer { server: RunningServer; dataDir: string; port: number; store: MemoryObjectStore }

const handedOver = async (dataDir: string): Promise<unknown> => JSON.parse(await fsp.readFile(path.join(dataDir, 'archive.json'), 'utf8')).handed_over;

describe('POST /archive/handover: who may ask, and the lease it releases', function () {
  this.timeout(60_000);
  const running: RunningServer[] = [];
  const start = async (options: Partial<ServerOptions> & { host: string }, releaseLease?: () => Promise<void>): Promise<Writer> => {
    const store = new MemoryObjectStore(false);
    const dataDir = path.join(tempDir(), 'writer');
    const server = await startServer({ port: 0, dataDir, log: pino({ level: 'silent' }), ui: false, archive: { url: URL_, store, intervalMs: 100, ...(releaseLease ? { releaseLease } : {}) }, ...options });
    await server.ready;
    running.push(server);
    return { server, dataDir, port: Number(new URL(server.url).port), store };
  };
  after(async () => { for (const s of running) await s.stop(); });

  it('without a promotion secret, from another address: 403, and the writer goes on writing', async function () {
    const outside = outsideAddress();
    if (outside === null) this.skip();
    const w = await start({ host: '0.0.0.0', insecureOpen: true });
    const base = `http://${outside}:${w.port}`;
    const repo = await register(base, 'alpha');
    for (const url of [base, `http://127.0.0.1:${w.port}`]) {
      const res = await api(url, 'POST', '/archive/handover', { json: {} });
      expect(res.status, res.text).to.equal(403);
      expect(res.json.error).to.match(/--promote-secret-file/);
    }
    const task = await api(base, 'POST', R(repo, '/tasks'), { json: { title: 'still writing', intent: 'i' } });
    expect(task.status, task.text).to.equal(200);
    expect(await handedOver(w.dataDir)).to.equal(undefined);
    expect((await api(base, 'GET', '/healthz')).json.archive.state).to.not.equal('handed_over');
  });

  it('releases the lease once, after the handover is recorded and before it answers; a second call answers the same', async () => {
    const calls: unknown[] = [];
    let w!: Writer;
    w = await start({ host: '127.0.0.1' }, async () => { calls.push(await handedOver(w.dataDir)); });
    const repo = await register(w.server.url, 'alpha');
    const task = await api(w.server.url, 'POST', R(repo, '/tasks'), { json: { title: 'acknowledged', intent: 'i' } });
    expect(task.status, task.text).to.equal(200);
    await until('shipping to start', async () => (await api(w.server.url, 'GET', '/healthz')).json.archive?.repositories?.length === 1);
    const res = await api(w.server.url, 'POST', '/archive/handover', { json: { successor: 'http://10.0.0.2:8088' } });
    expect(res.status, res.text).to.equal(200);
    expect(calls).to.have.length(1);
    expect(calls[0], 'archive.json at the release').to.deep.equal(res.json);
    const [r] = res.json.repositories;
    expect(r.repository).to.equal(repo);
    expect(w.store.objects.has(r.manifest), `${r.manifest} is stored`).to.equal(true);
    const late = await api(w.server.url, 'POST', R(repo, '/tasks'), { json: { title: 'refused', intent: 'i' } });
    expect(late.status, late.text).to.equal(503);
    expect(late.json.error).to.match(/^handed over to http:\/\/10\.0\.0\.2:8088 at /);
    const again = await api(w.server.url, 'POST', '/archive/handover', { json: {} });
    expect(again.status, again.text).to.equal(200);
    expect(again.json).to.deep.equal(res.json);
    expect(calls).to.have.length(1);
  });

  it('a lease that cannot be released: 503 naming why, the writer stays handed over, and calling again releases it', async () => {
    let tries = 0;
    const w = await start({ host: '127.0.0.1' }, async () => {
      if (++tries === 1) throw new Error('the lease store does not answer');
    });
    const repo = await register(w.server.url, 'alpha');
    await until('shipping to start', async () => (await api(w.server.url, 'GET', '/healthz')).json.archive?.repositories?.length === 1);
    const first = await api(w.server.url, 'POST', '/archive/handover', { json: {} });
    expect(first.status, first.text).to.equal(503);
    expect(first.json.error).to.match(/^handed over .*lease could not be released: the lease store does not answer; call the handover again/);
    const refused = await api(w.server.url, 'POST', R(repo, '/tasks'), { json: { title: 'refused', intent: 'i' } });
    expect(refused.status, refused.text).to.equal(503);
    expect(await handedOver(w.dataDir)).to.not.equal(undefined);
    const second = await api(w.server.url, 'POST', '/archive/handover', { json: {} });
    expect(second.status, second.text).to.equal(200);
    expect(tries).to.equal(2);
  });

  it('cairn archive reclaim clears a handover: the directory writes again and claims a new generation', async () => {
    const w = await start({ host: '127.0.0.1' });
    const repo = await register(w.server.url, 'alpha');
    await until('shipping to start', async () => (await api(w.server.url, 'GET', '/healthz')).json.archive?.repositories?.length === 1);
    const res = await api(w.server.url, 'POST', '/archive/handover', { json: {} });
    expect(res.status, res.text).to.equal(200);
    await w.server.stop();
    const r = await cli(['archive', 'reclaim', '--data', w.dataDir, '--json']);
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout).was.handed_over.at).to.equal(res.json.handed_over_at);
    expect(await handedOver(w.dataDir)).to.equal(undefined);
    const again = await startServer({ port: 0, dataDir: w.dataDir, log: pino({ level: 'silent' }), ui: false, host: '127.0.0.1', archive: { url: URL_, store: w.store, intervalMs: 100 } });
    running.push(again);
    await again.ready;
    const task = await api(again.url, 'POST', R(repo, '/tasks'), { json: { title: 'writes again', intent: 'i' } });
    expect(task.status, task.text).to.equal(200);
    const h = await until('a new generation', async () => {
      const a = (await api(again.url, 'GET', '/healthz')).json.archive;
      return a && BigInt(a.generation) > BigInt(res.json.generation) ? a : null;
    });
    expect(h.state).to.not.equal('handed_over');
  });
});
