// DATA/access.log (accounts, tokens, grants; storage-layout.md §21) in the archive: the writer
// ships it beside the repositories, a restore writes it back byte for byte, and a standby
// promoted from the archive authenticates the writer's tokens and keeps its grants. In-process
// servers on the in-memory store (test/memory-store.ts).
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { startServer, type RunningServer } from '../lib/cli/serve.js';
import { restoreArchive } from '../lib/archive/restore.js';
import { AccessBook } from '../lib/authority/access.js';
import { Layout } from '../lib/store/layout.js';
import { MemoryObjectStore } from './memory-store.js';
import { grantRoles, seedAccounts, seedAdmin } from './access-seed.js';
import { api, tempDir, until } from './helpers.js';

const URL_ = 's3://cairn-test/access/';
const REGISTER = '/v1/native/repository-authorities';

describe('archive: access.log is shipped, restored and promoted', function () {
  this.timeout(120_000);
  const running: RunningServer[] = [];
  afterEach(async () => { for (const s of running.splice(0)) await s.stop(); });
  const serve = async (o: Omit<Parameters<typeof startServer>[0], 'log'>): Promise<RunningServer> => {
    const s = await startServer({ ...o, log: pino({ level: 'silent' }), ui: false });
    running.push(s);
    await s.ready;
    return s;
  };

  it('ships access.log as it grows; a restore brings it back byte for byte and a promoted standby authenticates the writer\'s tokens with their grants', async () => {
    const store = new MemoryObjectStore(false);
    const dataDir = path.join(tempDir(), 'writer');
    const admin = await seedAdmin(dataDir);
    const { dana } = await seedAccounts(dataDir, [{ name: 'dana', token: ['read', 'write'] }]);
    const writer = await serve({ host: '127.0.0.1', port: 0, dataDir, auth: 'tokens', archive: { url: URL_, store, intervalMs: 50 } });
    const reg = await api(writer.url, 'POST', REGISTER, { json: { repository_name: 'alpha', namespace: '', policy_flags: 0 }, headers: admin.headers });
    expect(reg.status, reg.text).to.equal(201);
    const repo = reg.json.repository.repository_index as number;
    await grantRoles(writer.url, admin.headers, repo, { dana: 'contributor' }); // access.log grows while serving
    const local = path.join(dataDir, 'access.log');
    const shipped = await until('access.log shipped whole', async () => {
      const keys = [...store.objects.keys()].filter((k) => k.startsWith('access/manifests/'));
      const size = (await fsp.stat(local)).size;
      return keys.some((k) => k.endsWith(`-${String(size).padStart(20, '0')}.json`)) ? keys : null;
    });
    expect(shipped.length).to.be.greaterThan(0);
    await until('the repository shipped', async () => [...store.objects.keys()].some((k) => k.startsWith(`repositories/${repo}/manifests/`)));

    // A restore writes access.log back.
    const restored = path.join(tempDir(), 'restored');
    await restoreArchive(store, { url: URL_, repositories: 'all', target: {}, dataDir: restored });
    expect((await fsp.readFile(path.join(restored, 'access.log'))).equals(await fsp.readFile(local)), 'access.log byte for byte').to.equal(true);
    const book = AccessBook.open(new Layout(restored));
    try {
      expect(book.authenticate(dana), 'dana\'s token authenticates on the restored directory').to.not.equal(null);
    } finally {
      await book.close();
    }

    // A standby (no accounts of its own) promoted from the archive: the writer's tokens and grants hold there.
    await writer.stop();
    running.splice(running.indexOf(writer), 1);
    const standbyDir = path.join(tempDir(), 'standby');
    const standby = await serve({ host: '127.0.0.1', port: 0, dataDir: standbyDir, auth: 'tokens', follow: { url: URL_, store, intervalMs: 50 } });
    await until('the standby applied the repository', async () => ((await api(standby.url, 'GET', '/healthz', { contract: false })).json.follow?.repositories ?? []).length > 0);
    const promoted = await api(standby.url, 'POST', '/archive/promote', { contract: false });
    expect(promoted.status, promoted.text).to.equal(200);
    const asDana = await api(standby.url, 'GET', `${REGISTER}/${repo}/tasks`, { headers: { authorization: `Bearer ${dana}` } });
    expect(asDana.status, asDana.text).to.equal(200);
    const write = await api(standby.url, 'POST', `${REGISTER}/${repo}/sprints`, { headers: { authorization: `Bearer ${dana}` }, json: { title: 'After promotion', artifact_path: 'docs/plan.md', artifact_heading: 'Sprint', artifact_body: '# Sprint\n- [ ] a {#a}\n' } });
    expect(write.status, `dana's contributor grant holds on the promoted standby: ${write.text}`).to.equal(200);
  });
});
