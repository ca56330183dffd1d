// With --archive-sync, a commit the archive does not cover in time (a store outage, a fenced
// writer) is answered 503 "committed on this server, but not acknowledged": the write happened
// here. A client must not send it again as if it had not: the answer carries no Retry-After
// (and `committed: true`), and the cairn client retries a 503 of a write only when the server
// asks for it with Retry-After. Run by the runbook drill first (docs/operations.md "An archive
// drill"): one `cairn task create` against a fenced --archive-sync writer made 21 tasks.
import { expect } from 'chai';
import path from 'node:path';
import { api, cli, register, startTestServer, tempDir, type TestServer } from './helpers.js';
import { MemoryObjectStore } from './memory-store.js';

describe('archive --archive-sync: a write committed but not acknowledged is not sent again', function () {
  this.timeout(120_000);
  let server: TestServer | undefined;
  afterEach(async () => { await server?.stop(); server = undefined; });

  it('answers 503 with committed: true and no Retry-After; `cairn task create` makes one task, not one per retry', async () => {
    const store = new MemoryObjectStore(false);
    server = await startTestServer(path.join(tempDir(), 'data'), { archive: { url: 's3://cairn-test/sync-retry/', store, intervalMs: 50, sync: true, syncTimeoutMs: 500 } });
    const a = await register(server.url, 'alpha');
    store.inject({ op: 'put', kind: 'unavailable', times: 1_000_000 });
    const res = await api(server.url, 'POST', `/v1/native/repository-authorities/${a}/tasks`, { json: { title: 'raw', intent: 'i' }, contract: false });
    expect(res.status, res.text).to.equal(503);
    expect(res.json.committed).to.equal(true);
    expect(res.headers.get('retry-after'), 'no Retry-After: the write happened').to.equal(null);
    const r = await cli(['task', 'create', '--server', server.url, '--repo', String(a), '--title', 'once', '--intent', 'i']);
    expect(r.code, r.stderr).to.equal(1);
    expect(r.stderr).to.match(/committed on this server/);
    const tasks = (await api(server.url, 'GET', `/v1/native/repository-authorities/${a}/tasks?limit=100`, { contract: false })).json.tasks as { title: string }[];
    expect(tasks.filter((t) => t.title === 'once').length, 'tasks the command made').to.equal(1);
    store.recover();
  });
});
