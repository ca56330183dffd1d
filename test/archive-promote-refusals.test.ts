// POST /archive/promote and `cairn promote --server URL` on a server that does not follow an
// archive: a clear refusal that changes nothing, never a 500; other methods are 405.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { api, cli, startTestServer, tempDir, type TestServer } from './helpers.js';

describe('archive promotion refusals', function () {
  this.timeout(60_000);
  let s: TestServer;
  before(async () => { s = await startTestServer(path.join(tempDir(), 'data')); });
  after(async () => { await s.stop(); });

  it('a writer (no --follow) answers 409 naming why, writes no archive.json, and stays writable', async () => {
    for (const json of [undefined, { generation: '99' }]) {
      const r = await api(s.url, 'POST', '/archive/promote', { json, contract: false });
      expect(r.status, r.text).to.equal(409);
      expect(r.json.error).to.match(/does not follow an archive/);
    }
    await fsp.access(path.join(s.dataDir, 'archive.json')).then(() => { throw new Error('archive.json was written'); }, () => undefined);
    const reg = await api(s.url, 'POST', '/v1/native/repository-authorities', { json: { repository_name: 'still-writable', namespace: '', policy_flags: 0 } });
    expect(reg.status, reg.text).to.equal(201);
  });

  it('a handover or a takeover on a server that neither ships nor follows answers 409 and changes nothing', async () => {
    const h = await api(s.url, 'POST', '/archive/handover', { json: {}, contract: false });
    expect(h.status, h.text).to.equal(409);
    expect(h.json.error).to.match(/does not ship to an archive/);
    const t = await api(s.url, 'POST', '/archive/takeover', { json: { archive_id: '0'.repeat(32), repositories: [], access_log_length: null }, contract: false });
    expect(t.status, t.text).to.equal(409);
    expect(t.json.error).to.match(/does not follow an archive/);
    await fsp.access(path.join(s.dataDir, 'archive.json')).then(() => { throw new Error('archive.json was written'); }, () => undefined);
    const reg = await api(s.url, 'POST', '/v1/native/repository-authorities', { json: { repository_name: 'writable-after-handover', namespace: '', policy_flags: 0 } });
    expect(reg.status, reg.text).to.equal(201);
    const r = await cli(['promote', '--server', s.url, '--switchover', '--from', s.url]);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.match(/did not hand the archive over.*does not ship to an archive/);
  });

  it('other methods are 405', async () => {
    for (const route of ['/archive/promote', '/archive/handover', '/archive/takeover']) {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const r = await api(s.url, method, route, { contract: false });
        expect(r.status, `${method} ${route}: ${r.text}`).to.equal(405);
        expect(r.json.error).to.be.a('string');
      }
    }
  });

  it('cairn promote --server URL says it in the user\'s words and exits non-zero', async () => {
    const r = await cli(['promote', '--server', s.url]);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.match(/does not follow an archive/);
    expect(r.stderr).to.not.match(/at .*\.js:\d+/); // no stack trace
  });
});
