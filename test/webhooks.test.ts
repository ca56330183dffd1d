// Webhooks (docs/api.md "Webhooks"): registrations, signed deliveries to a receiver on
// 127.0.0.1, the types filter, retries with their attempts recorded, failure and redelivery,
// a pending delivery resumed after kill -9, and a secret that never leaves the server.
import { expect } from 'chai';
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { startServer } from '../lib/cli/serve.js';
import { api, expectError, register, spawnServer, tempDir, type ApiResponse } from './helpers.js';

const SECRET = 'webhook-secret-7f3a9c1e5b2d8f40';
const REPOS = '/v1/native/repository-authorities';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

type Behaviour = (n: number) => number | 'hang';

/** A webhook receiver on 127.0.0.1: records every request and answers as `behaviour` says (by request number, from 1). */
async function receiver(behaviour: Behaviour = () => 200) {
  const received: Received[] = [];
  const held: http.ServerResponse[] = [];
  const state = { behaviour };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const answer = state.behaviour(received.length);
      if (answer === 'hang') {
        held.push(res); // answered by release(), if ever
        return;
      }
      res.writeHead(answer, { 'Content-Type': 'text/plain' });
      res.end('thanks');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    state,
    /** Answer the requests left hanging so far with `status`. */
    release: (status = 200) => {
      for (const res of held.splice(0)) res.writeHead(status).end();
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** What a receiver does with a delivery: recompute the signature with the secret and compare in constant time. */
function verified(r: Received, secret: string): boolean {
  const timestamp = String(r.headers['x-cairn-timestamp']);
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${timestamp}.${r.body}`).digest('hex')}`);
  const given = Buffer.from(String(r.headers['x-cairn-signature']));
  return given.length === expected.length && timingSafeEqual(given, expected) && Math.abs(Date.now() / 1000 - Number(timestamp)) < 300;
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, ms = 15000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

describe('webhooks', function () {
  this.timeout(60000);
  let base: string;
  let stop: () => Promise<void>;
  let logText = '';
  const bodies: string[] = [];
  const call = async (method: string, urlPath: string, options: Parameters<typeof api>[3] = {}): Promise<ApiResponse> => {
    const res = await api(base, method, urlPath, options);
    bodies.push(res.text);
    return res;
  };

  before(async () => {
    const stream = { write: (line: string) => { logText += line; } };
    const running = await startServer({ host: '127.0.0.1', port: 0, dataDir: path.join(tempDir(), 'data'), log: pino({ level: 'debug' }, stream), webhooks: { maxAttempts: 3, backoffBaseMs: 20 } });
    await running.ready;
    base = running.url;
    stop = running.stop;
  });
  after(async () => {
    await stop();
    // The secret was sent in request bodies only: no answer and no log line carries it.
    for (const text of bodies) expect(text).to.not.include(SECRET);
    expect(logText).to.include('"operation":"webhooks.create"');
    expect(logText).to.not.include(SECRET);
  });

  const hooksOf = (repo: number) => `${REPOS}/${repo}/webhooks`;
  const createTask = async (repo: number, title: string) => {
    const res = await call('POST', `${REPOS}/${repo}/tasks`, { json: { title, intent: 'exercise webhooks' } });
    expect(res.status, res.text).to.equal(200);
    return res.json.task.task_id as string;
  };
  /** A delivery, or undefined while it is not recorded yet. */
  const delivery = async (repo: number, hook: string, id: string) => {
    const res = await call('GET', `${hooksOf(repo)}/${hook}/deliveries/${id}`);
    expect(res.status, res.text).to.be.oneOf([200, 404]);
    return res.json.delivery ?? { state: 'unrecorded' };
  };

  it('registers, lists, reads and deletes webhooks, answering secret_set and never the secret', async () => {
    const repo = await register(base, 'hooks-crud');
    const created = await call('POST', hooksOf(repo), { json: { url: 'http://127.0.0.1:9/a', types: ['task.created', 'job.*'], secret: SECRET } });
    expect(created.status, created.text).to.equal(201);
    expect(created.json.webhook).to.include({ webhook_id: 'webhook-1', repository_index: repo, url: 'http://127.0.0.1:9/a', active: true, secret_set: true });
    expect(created.json.webhook.types).to.deep.equal(['task.created', 'job.*']);
    expect(created.json.webhook).to.not.have.property('secret');

    // The same URL again replaces the registration's settings (200), it does not add one.
    const again = await call('POST', hooksOf(repo), { json: { url: 'http://127.0.0.1:9/a', secret: `${SECRET}-rotated`, active: false } });
    expect(again.status, again.text).to.equal(200);
    expect(again.json.webhook).to.include({ webhook_id: 'webhook-1', active: false, types: null });
    const second = await call('POST', hooksOf(repo), { json: { url: 'https://example.invalid/b', secret: SECRET } });
    expect(second.status).to.equal(201);
    expect(second.json.webhook.webhook_id).to.equal('webhook-2');

    const page1 = await call('GET', `${hooksOf(repo)}?limit=1`);
    expect(page1.status).to.equal(200);
    expect(page1.json.webhooks.map((w: { webhook_id: string }) => w.webhook_id)).to.deep.equal(['webhook-1']);
    const page2 = await call('GET', `${hooksOf(repo)}?limit=1&cursor=${page1.json.next_cursor}`);
    expect(page2.json.webhooks.map((w: { webhook_id: string }) => w.webhook_id)).to.deep.equal(['webhook-2']);
    expect(page2.json.next_cursor).to.equal(null);
    expect((await call('GET', `${hooksOf(repo)}/webhook-2`)).json.webhook.url).to.equal('https://example.invalid/b');

    const deleted = await call('DELETE', `${hooksOf(repo)}/webhook-1`);
    expect(deleted.status).to.equal(200);
    expect(deleted.json).to.deep.equal({ webhook_id: 'webhook-1', deleted: true });
    expectError(await call('GET', `${hooksOf(repo)}/webhook-1`), 404, 'deleted webhook');
    expectError(await call('DELETE', `${hooksOf(repo)}/webhook-1`), 404, 'deleted twice');
    expectError(await call('GET', `${hooksOf(repo)}/webhook-9/deliveries`), 404, 'unknown webhook');
    expectError(await call('GET', `${hooksOf(repo)}/webhook-2/deliveries/webhook-2.delivery-1`), 404, 'no such delivery');
    expectError(await call('GET', `${hooksOf(repo)}/webhook-2/deliveries/webhook-1.delivery-1`), 404, "another webhook's delivery id");
    expect((await call('GET', hooksOf(repo))).json.webhooks.map((w: { webhook_id: string }) => w.webhook_id)).to.deep.equal(['webhook-2']);
    // A new registration never reuses a deleted one's id.
    expect((await call('POST', hooksOf(repo), { json: { url: 'http://127.0.0.1:9/a', secret: SECRET } })).json.webhook.webhook_id).to.equal('webhook-3');
  });

  it('refuses bad registrations: rules 400, shapes 422', async () => {
    const repo = await register(base, 'hooks-bad');
    const rule = [
      { url: 'ftp://example.com/x', secret: SECRET },
      { url: 'http://', secret: SECRET },
      { url: 'not a url', secret: SECRET },
      { url: 'http://user:pw@example.com/x', secret: SECRET },
      { url: 'http://example.com/x', secret: 'short' },
      { url: 'http://example.com/x', secret: 'x'.repeat(257) },
      { url: 'http://example.com/x', secret: SECRET, types: ['task.nope'] },
      { url: 'http://example.com/x', secret: SECRET, types: ['nope.*'] },
      { url: 'http://example.com/x', secret: SECRET, types: [] },
    ];
    for (const json of rule) expectError(await call('POST', hooksOf(repo), { json }), 400, JSON.stringify(json));
    const shape = [
      { url: 'http://example.com/x' },
      { url: 'http://example.com/x', secret: 42 },
      { url: 'http://example.com/x', secret: SECRET, types: 'task.created' },
      { url: 'http://example.com/x', secret: SECRET, active: 'yes' },
      { url: 'http://example.com/x', secret: SECRET, event_types: ['task.created'] },
    ];
    for (const json of shape) expectError(await call('POST', hooksOf(repo), { json }), 422, JSON.stringify(json));
    expect((await call('GET', hooksOf(repo))).json.webhooks).to.deep.equal([]);
  });

  it('POSTs each matching event, signed with the secret, and skips the types it was not registered for', async () => {
    const rx = await receiver();
    try {
      const repo = await register(base, 'hooks-deliver');
      const hook = (await call('POST', hooksOf(repo), { json: { url: rx.url, types: ['task.*'], secret: SECRET } })).json.webhook.webhook_id;
      expect((await call('PUT', `${REPOS}/${repo}/lines/topic`, { json: {} })).status).to.equal(200); // line.created: not for this webhook
      const taskId = await createTask(repo, 'first');
      await until('the delivery', () => rx.received.length >= 1);
      const [r] = rx.received;
      expect(verified(r, SECRET), 'signature').to.equal(true);
      expect(verified(r, `${SECRET}x`), 'a wrong secret fails').to.equal(false);
      expect(r.headers['content-type']).to.equal('application/json');
      expect(r.headers['x-cairn-event']).to.equal('task.created');
      expect(r.headers['x-cairn-delivery']).to.equal(`${hook}.delivery-1`);
      const event = JSON.parse(r.body);
      expect(Object.keys(event)).to.deep.equal(['id', 'repository_index', 'seq', 'at_us', 'type', 'data']);
      expect(event).to.include({ id: String(event.seq), repository_index: repo, type: 'task.created' });
      expect(event.data).to.deep.equal({ task_id: taskId, plan_id: null });

      const d = await until('delivered', async () => { const x = await delivery(repo, hook, `${hook}.delivery-1`); return x.state === 'delivered' && x; });
      expect(d).to.include({ attempt_count: 1, redeliveries: 0, event_type: 'task.created', next_attempt_at_ms: null });
      expect(d.attempts).to.have.length(1);
      expect(d.attempts[0]).to.include({ attempt: 1, round: 0, status_code: 200, error: null });
      expect(d.event).to.deep.equal(event);
      const list = await call('GET', `${hooksOf(repo)}/${hook}/deliveries`);
      expect(list.json.deliveries.map((x: { delivery_id: string }) => x.delivery_id)).to.deep.equal([`${hook}.delivery-1`]);
      expect(rx.received).to.have.length(1);
    } finally {
      await rx.close();
    }
  });

  it('retries a failing receiver with backoff and records every attempt: delivered on attempt 3', async () => {
    const rx = await receiver((n) => (n <= 2 ? 500 : 204));
    try {
      const repo = await register(base, 'hooks-retry');
      const hook = (await call('POST', hooksOf(repo), { json: { url: rx.url, types: ['task.created'], secret: SECRET } })).json.webhook.webhook_id;
      await createTask(repo, 'retried');
      const d = await until('delivered', async () => { const x = await delivery(repo, hook, `${hook}.delivery-1`); return x.state === 'delivered' && x; });
      expect(d.attempt_count).to.equal(3);
      expect(d.attempts.map((a: { status_code: number }) => a.status_code)).to.deep.equal([500, 500, 204]);
      expect(d.attempts.map((a: { error: string | null }) => a.error)).to.deep.equal(['HTTP 500', 'HTTP 500', null]);
      expect(rx.received.map((r) => r.headers['x-cairn-delivery'])).to.deep.equal(Array(3).fill(`${hook}.delivery-1`));
      for (const r of rx.received) expect(verified(r, SECRET)).to.equal(true);
    } finally {
      await rx.close();
    }
  });

  it('fails a delivery after the last attempt, then delivers it when redelivered', async () => {
    const rx = await receiver(() => 503);
    try {
      const repo = await register(base, 'hooks-fail');
      const hook = (await call('POST', hooksOf(repo), { json: { url: rx.url, secret: SECRET } })).json.webhook.webhook_id;
      await createTask(repo, 'doomed');
      const id = `${hook}.delivery-1`;
      const failed = await until('failed', async () => { const x = await delivery(repo, hook, id); return x.state === 'failed' && x; });
      expect(failed.attempt_count).to.equal(3);
      expect(failed.attempts.map((a: { status_code: number }) => a.status_code)).to.deep.equal([503, 503, 503]);
      expect((await call('GET', `${hooksOf(repo)}/${hook}/deliveries?state=failed`)).json.count).to.equal(1);
      expect((await call('GET', `${hooksOf(repo)}/${hook}/deliveries?state=delivered`)).json.count).to.equal(0);
      expectError(await call('GET', `${hooksOf(repo)}/${hook}/deliveries?state=lost`), 400, 'unknown state');
      expect(logText).to.include('webhook delivery failed');

      rx.state.behaviour = () => 200;
      const again = await call('POST', `${hooksOf(repo)}/${hook}/deliveries/${id}:redeliver`);
      expect(again.status, again.text).to.equal(200);
      expect(again.json.delivery).to.include({ delivery_id: id, state: 'pending', redeliveries: 1 });
      const delivered = await until('redelivered', async () => { const x = await delivery(repo, hook, id); return x.state === 'delivered' && x; });
      expect(delivered.attempt_count).to.equal(4);
      expect(delivered.attempts.at(-1)).to.include({ attempt: 4, round: 1, status_code: 200, error: null });
      expect(rx.received.at(-1)!.headers['x-cairn-delivery']).to.equal(id);
      expect(verified(rx.received.at(-1)!, SECRET)).to.equal(true);

      // A delivered one can be sent again too; an unknown one is 404.
      expect((await call('POST', `${hooksOf(repo)}/${hook}/deliveries/${id}:redeliver`)).status).to.equal(200);
      await until('delivered again', async () => { const x = await delivery(repo, hook, id); return x.state === 'delivered' && x.attempt_count === 5; });
      expectError(await call('POST', `${hooksOf(repo)}/${hook}/deliveries/${hook}.delivery-7:redeliver`), 404, 'unknown delivery');
    } finally {
      await rx.close();
    }
  });

  it('keeps at most 64 deliveries pending behind a receiver that hangs; the other events wait in the log', async () => {
    const rx = await receiver((n) => (n === 1 ? 'hang' : 200));
    try {
      const repo = await register(base, 'hooks-bounded');
      const hook = (await call('POST', hooksOf(repo), { json: { url: rx.url, types: ['task.created'], secret: SECRET } })).json.webhook.webhook_id;
      for (let i = 1; i <= 70; i++) await createTask(repo, `task ${i}`);
      await until('64 pending deliveries', async () => (await call('GET', `${hooksOf(repo)}/${hook}`)).json.webhook.pending_deliveries >= 64);
      expect((await call('GET', `${hooksOf(repo)}/${hook}`)).json.webhook.pending_deliveries).to.equal(64);
      expect((await call('GET', `${hooksOf(repo)}/${hook}/deliveries?limit=1000`)).json.count).to.equal(64);
      expect(rx.received).to.have.length(1); // one in flight per webhook

      rx.release();
      await until('every event delivered', async () => {
        const page = (await call('GET', `${hooksOf(repo)}/${hook}/deliveries?limit=1000&state=delivered`)).json;
        return page.count === 70;
      });
      const tasks = rx.received.map((r) => JSON.parse(r.body).data.task_id);
      expect(tasks).to.deep.equal(Array.from({ length: 70 }, (_, i) => `task-${i + 1}`)); // in event order
      expect((await call('GET', `${hooksOf(repo)}/${hook}`)).json.webhook.pending_deliveries).to.equal(0);
    } finally {
      await rx.close();
    }
  });

  it('records nothing while the repository is retiring; after an abort the pending delivery is sent again', async () => {
    const rx = await receiver((n) => (n === 1 ? 'hang' : 200));
    try {
      const repo = await register(base, 'hooks-retiring');
      const hook = (await call('POST', hooksOf(repo), { json: { url: rx.url, types: ['task.created'], secret: SECRET } })).json.webhook.webhook_id;
      await createTask(repo, 'before retirement');
      await until('the first attempt (held)', () => rx.received.length === 1);
      expect((await call('POST', `${REPOS}/${repo}/retirement`)).status).to.equal(200);
      expectError(await call('POST', hooksOf(repo), { json: { url: rx.url, secret: SECRET } }), 409, 'registration while retiring');
      // The receiver answers 200 now, but the repository is retiring: the answer is not recorded
      // (its files stay as exported), so the delivery stays pending and is sent again later.
      rx.release(200);
      await until('the answer left unrecorded', () => logText.includes('webhook attempt not recorded'));
      expect((await delivery(repo, hook, `${hook}.delivery-1`))).to.include({ state: 'pending', attempt_count: 0 });
      expect((await call('POST', `${REPOS}/${repo}/retirement/abort`)).status).to.equal(200);
      const d = await until('delivered after the abort', async () => { const x = await delivery(repo, hook, `${hook}.delivery-1`); return x.state === 'delivered' && x; });
      expect(d.attempt_count).to.equal(1);
      expect(rx.received.map((r) => r.headers['x-cairn-delivery'])).to.deep.equal([`${hook}.delivery-1`, `${hook}.delivery-1`]);
    } finally {
      await rx.close();
    }
  });

  it('resumes pending deliveries after kill -9, in order, one in flight per webhook', async () => {
    const rx = await receiver((n) => (n === 1 ? 'hang' : 200));
    const dataDir = path.join(tempDir(), 'data');
    let server = await spawnServer(dataDir, ['--webhook-backoff-ms', '20']);
    let output = '';
    try {
      const repo = await register(server.url, 'hooks-crash');
      const created = await api(server.url, 'POST', hooksOf(repo), { json: { url: rx.url, types: ['task.created'], secret: SECRET } });
      expect(created.text).to.not.include(SECRET);
      const hook = created.json.webhook.webhook_id;
      await api(server.url, 'POST', `${REPOS}/${repo}/tasks`, { json: { title: 'one', intent: 'i' } });
      await until('the first attempt (left hanging)', () => rx.received.length === 1);
      await api(server.url, 'POST', `${REPOS}/${repo}/tasks`, { json: { title: 'two', intent: 'i' } });
      await until('the second event taken as a pending delivery', async () => (await api(server.url, 'GET', `${hooksOf(repo)}/${hook}/deliveries`)).json.count === 2);
      const before = (await api(server.url, 'GET', `${hooksOf(repo)}/${hook}`)).json.webhook;
      expect(before.pending_deliveries).to.equal(2);

      server.proc.kill('SIGKILL');
      await server.exited;
      output += server.output();
      server = await spawnServer(dataDir, ['--webhook-backoff-ms', '20']);
      // No request names the repository yet: the background pass after the start opens it and its dispatcher resends.
      await until('delivery 1 sent again before any request to the repository', () => rx.received.length >= 2);
      for (const n of [1, 2]) {
        await until(`delivery ${n} after the restart`, async () => (await api(server.url, 'GET', `${hooksOf(repo)}/${hook}/deliveries/${hook}.delivery-${n}`)).json.delivery.state === 'delivered');
      }
      expect(rx.received.map((r) => r.headers['x-cairn-delivery'])).to.deep.equal([`${hook}.delivery-1`, `${hook}.delivery-1`, `${hook}.delivery-2`]);
      expect(rx.received.map((r) => JSON.parse(r.body).data.task_id)).to.deep.equal(['task-1', 'task-1', 'task-2']);
      for (const r of rx.received) expect(verified(r, SECRET)).to.equal(true);
    } finally {
      server.proc.kill('SIGTERM');
      await server.exited;
      output += server.output();
      await rx.close();
    }
    expect(output).to.include('"operation":"webhooks.deliveries.get"');
    expect(output).to.not.include(SECRET);
  });
});
