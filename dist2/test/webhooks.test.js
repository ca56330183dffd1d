// Webhooks (docs/api.md "Webhooks"): registrations, signed deliveries to a receiver on
// 127.0.0.1, the types filter, retries with their attempts recorded, failure and redelivery,
// a pending delivery resumed after kill -9, and a secret that never leaves the server.
import { expect } from 'chai';
import { createHmac, timingSafeEqual } from 'node:crypto';
import dgram from 'node:dgram';
import { promises as dns } from 'node:dns';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { webhookResolver } from '../lib/authority/webhook-dispatcher.js';
import { startServer } from '../lib/cli/serve.js';
import { api, cli, expectError, register, spawnServer, tempDir } from './helpers.js';
const SECRET = 'webhook-secret-7f3a9c1e5b2d8f40';
const REPOS = '/v1/native/repository-authorities';
/** A webhook receiver on 127.0.0.1: records every request and answers as `behaviour` says (by request number, from 1). */
async function receiver(behaviour = () => 200) {
    const received = [];
    const held = [];
    const state = { behaviour };
    const server = http.createServer((req, res) => {
        const chunks = [];
        req.on('data', (c) => chunks.push(c));
        req.on('end', () => {
            const r = { url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
            received.push(r);
            const answer = state.behaviour(received.length, r);
            if (answer === 'hang') {
                held.push(res); // answered by release(), if ever
                return;
            }
            res.writeHead(answer, { 'Content-Type': 'text/plain' });
            res.end('thanks');
        });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = server.address().port;
    return {
        url: `http://127.0.0.1:${port}/hook`,
        received,
        state,
        /** Answer the requests left hanging so far with `status`. */
        release: (status = 200) => {
            for (const res of held.splice(0))
                res.writeHead(status).end();
        },
        close: async () => {
            server.closeAllConnections();
            await new Promise((resolve) => server.close(resolve));
        },
    };
}
/** What a receiver does with a delivery: recompute the signature with the secret and compare in constant time. */
function verified(r, secret) {
    const timestamp = String(r.headers['x-cairn-timestamp']);
    const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${timestamp}.${r.body}`).digest('hex')}`);
    const given = Buffer.from(String(r.headers['x-cairn-signature']));
    return given.length === expected.length && timingSafeEqual(given, expected) && Math.abs(Date.now() / 1000 - Number(timestamp)) < 300;
}
async function until(what, probe, ms = 15000) {
    const deadline = Date.now() + ms;
    for (;;) {
        const v = await probe();
        if (v)
            return v;
        if (Date.now() > deadline)
            throw new Error(`timed out waiting for ${what}`);
        await sleep(25);
    }
}
describe('webhooks', function () {
    this.timeout(60000);
    let base;
    let stop;
    let service;
    let logText = '';
    const bodies = [];
    const aliases = new Map();
    const call = async (method, urlPath, options = {}) => {
        const res = await api(base, method, urlPath, options);
        bodies.push(res.text);
        return res;
    };
    before(async () => {
        const stream = { write: (line) => { logText += line; } };
        // Receivers listen on 127.0.0.1: that address is opened, as --webhook-allow 127.0.0.1 does
        // (the server's own port stays refused). Names in `aliases` resolve as the test says.
        const running = await startServer({
            host: '127.0.0.1', port: 0, dataDir: path.join(tempDir(), 'data'), log: pino({ level: 'debug' }, stream),
            webhooks: { maxAttempts: 3, backoffBaseMs: 20, disableAfter: 3 }, webhookAllow: ['127.0.0.1'],
            webhookResolve: async (host) => aliases.get(host)?.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })) ?? dns.lookup(host, { all: true }),
        });
        service = await running.ready;
        base = running.url;
        stop = running.stop;
    });
    after(async () => {
        await stop();
        // The secret was sent in request bodies only: no answer and no log line carries it.
        for (const text of bodies)
            expect(text).to.not.include(SECRET);
        expect(logText).to.include('"operation":"webhooks.create"');
        expect(logText).to.not.include(SECRET);
    });
    const hooksOf = (repo) => `${REPOS}/${repo}/webhooks`;
    const createTask = async (repo, title) => {
        const res = await call('POST', `${REPOS}/${repo}/tasks`, { json: { title, intent: 'exercise webhooks' } });
        expect(res.status, res.text).to.equal(200);
        return res.json.task.task_id;
    };
    /** A delivery, or undefined while it is not recorded yet. */
    const delivery = async (repo, hook, id) => {
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
        expect(page1.json.webhooks.map((w) => w.webhook_id)).to.deep.equal(['webhook-1']);
        const page2 = await call('GET', `${hooksOf(repo)}?limit=1&cursor=${page1.json.next_cursor}`);
        expect(page2.json.webhooks.map((w) => w.webhook_id)).to.deep.equal(['webhook-2']);
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
        expect((await call('GET', hooksOf(repo))).json.webhooks.map((w) => w.webhook_id)).to.deep.equal(['webhook-2']);
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
        for (const json of rule)
            expectError(await call('POST', hooksOf(repo), { json }), 400, JSON.stringify(json));
        const shape = [
            { url: 'http://example.com/x' },
            { url: 'http://example.com/x', secret: 42 },
            { url: 'http://example.com/x', secret: SECRET, types: 'task.created' },
            { url: 'http://example.com/x', secret: SECRET, active: 'yes' },
            { url: 'http://example.com/x', secret: SECRET, event_types: ['task.created'] },
        ];
        for (const json of shape)
            expectError(await call('POST', hooksOf(repo), { json }), 422, JSON.stringify(json));
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
            expect(JSON.stringify(d), 'the answer\'s body is not kept').to.not.include('thanks');
            const list = await call('GET', `${hooksOf(repo)}/${hook}/deliveries`);
            expect(list.json.deliveries.map((x) => x.delivery_id)).to.deep.equal([`${hook}.delivery-1`]);
            expect(rx.received).to.have.length(1);
        }
        finally {
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
            expect(d.attempts.map((a) => a.status_code)).to.deep.equal([500, 500, 204]);
            expect(d.attempts.map((a) => a.error)).to.deep.equal(['HTTP 500', 'HTTP 500', null]);
            expect(rx.received.map((r) => r.headers['x-cairn-delivery'])).to.deep.equal(Array(3).fill(`${hook}.delivery-1`));
            for (const r of rx.received)
                expect(verified(r, SECRET)).to.equal(true);
        }
        finally {
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
            expect(failed.attempts.map((a) => a.status_code)).to.deep.equal([503, 503, 503]);
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
            expect(rx.received.at(-1).headers['x-cairn-delivery']).to.equal(id);
            expect(verified(rx.received.at(-1), SECRET)).to.equal(true);
            // A delivered one can be sent again too; an unknown one is 404.
            expect((await call('POST', `${hooksOf(repo)}/${hook}/deliveries/${id}:redeliver`)).status).to.equal(200);
            await until('delivered again', async () => { const x = await delivery(repo, hook, id); return x.state === 'delivered' && x.attempt_count === 5; });
            expectError(await call('POST', `${hooksOf(repo)}/${hook}/deliveries/${hook}.delivery-7:redeliver`), 404, 'unknown delivery');
        }
        finally {
            await rx.close();
        }
    });
    it('keeps at most 64 deliveries pending behind a receiver that hangs; the other events wait in the log', async () => {
        const rx = await receiver((n) => (n === 1 ? 'hang' : 200));
        try {
            const repo = await register(base, 'hooks-bounded');
            const hook = (await call('POST', hooksOf(repo), { json: { url: rx.url, types: ['task.created'], secret: SECRET } })).json.webhook.webhook_id;
            for (let i = 1; i <= 70; i++)
                await createTask(repo, `task ${i}`);
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
        }
        finally {
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
        }
        finally {
            await rx.close();
        }
    });
    it('a new webhook does not take an event of an earlier transaction of its own commit', async () => {
        const rx = await receiver();
        try {
            const repo = await register(base, 'hooks-same-commit');
            const a = service.authority(repo);
            // Both transactions join one commit: the event is staged before the registration.
            const [, { webhook }] = await Promise.all([
                a.store.transact((tx) => tx.emit('task.created', { task_id: 'task-staged-before', plan_id: null })),
                a.webhooks.register({ url: rx.url, types: ['task.created'], secret: SECRET }, service.webhookTargets),
            ]);
            expect(a.store.events.lastSeq).to.equal(1);
            const later = await createTask(repo, 'after the registration');
            await until('the delivery of the later event', async () => (await delivery(repo, webhook.webhook_id, `${webhook.webhook_id}.delivery-1`)).state === 'delivered');
            expect(rx.received.map((r) => JSON.parse(r.body).data.task_id)).to.deep.equal([later]);
        }
        finally {
            await rx.close();
        }
    });
    it("never sends to the server's own listener, even with loopback opened: registration 400, a name resolving to it refused at connect time", async () => {
        const victim = await register(base, 'hooks-victim');
        const attacker = await register(base, 'hooks-attacker');
        const { port } = new URL(base);
        const own = [
            `${base}${REPOS}/${victim}/retirement`,
            `${base}${REPOS}/${victim}/lines/main:close`,
            `${base}${REPOS}/${victim}:runCi`,
            `http://localhost:${port}${REPOS}/${victim}/retirement`,
            `http://0.0.0.0:${port}${REPOS}/${victim}/retirement`,
            `http://[::ffff:127.0.0.1]:${port}${REPOS}/${victim}/retirement`,
            // Two webhooks aimed at each other's redelivery: neither is registered.
            `${base}${hooksOf(attacker)}/webhook-2/deliveries/webhook-2.delivery-1:redeliver`,
            `${base}${hooksOf(attacker)}/webhook-1/deliveries/webhook-1.delivery-1:redeliver`,
        ];
        for (const url of own) {
            const res = await call('POST', hooksOf(attacker), { json: { url, secret: SECRET } });
            expectError(res, 400, url);
            expect(res.json.error, url).to.match(/^webhook url: .* (is this server's own listener|is an unspecified address|in IPv4-mapped form)/);
        }
        expect((await call('GET', hooksOf(attacker))).json.webhooks).to.deep.equal([]);
        // A host name is judged when it is resolved, at each attempt: this one resolves to the listener.
        aliases.set('cairn-self.test', ['127.0.0.1']);
        const created = await call('POST', hooksOf(attacker), { json: { url: `http://cairn-self.test:${port}${REPOS}/${victim}/retirement`, types: ['task.created'], secret: SECRET } });
        expect(created.status, created.text).to.equal(201);
        const hook = created.json.webhook.webhook_id;
        await createTask(attacker, 'aimed at the victim');
        const d = await until('the refused delivery', async () => { const x = await delivery(attacker, hook, `${hook}.delivery-1`); return x.state === 'failed' && x; });
        expect(d.attempts.map((a) => a.status_code)).to.deep.equal([null, null, null]);
        for (const a of d.attempts)
            expect(a.error).to.equal("refused by the webhook target policy: the host is this server's own listener");
        const victimRecord = await call('GET', `${REPOS}/${victim}`);
        expect(victimRecord.json.repository.lifecycle_kind, 'the victim is not retiring').to.equal(1);
        expect((await call('GET', `${REPOS}/${victim}/events`)).json.events, 'nothing happened to the victim').to.deep.equal([]);
        expect((await call('DELETE', `${hooksOf(attacker)}/${hook}`)).status).to.equal(200);
    });
    it('judges every address a name resolves to at connect time, and records a refusal without the address', async () => {
        const rx = await receiver();
        try {
            const repo = await register(base, 'hooks-rebind');
            const port = new URL(rx.url).port;
            // At registration the name is not resolved; by the attempt it points inside.
            aliases.set('rebind.test', ['93.184.216.34']);
            aliases.set('mixed.test', ['93.184.216.34', '10.11.12.13']);
            aliases.set('metadata.test', ['fd00:ec2::254']);
            aliases.set('receiver.test', ['127.0.0.1']);
            const hooks = {};
            for (const name of ['rebind.test', 'mixed.test', 'metadata.test', 'receiver.test']) {
                const res = await call('POST', hooksOf(repo), { json: { url: `http://${name}:${port}/hook`, types: ['task.created'], secret: SECRET } });
                expect(res.status, res.text).to.equal(201);
                hooks[name] = res.json.webhook.webhook_id;
            }
            aliases.set('rebind.test', ['169.254.169.254']);
            await createTask(repo, 'judged at connect time');
            for (const name of ['rebind.test', 'mixed.test', 'metadata.test']) {
                const id = hooks[name];
                const d = await until(`${name} refused`, async () => { const x = await delivery(repo, id, `${id}.delivery-1`); return x.state === 'failed' && x; });
                for (const a of d.attempts) {
                    expect(a, name).to.include({ status_code: null, error: 'refused by the webhook target policy: the host resolves to an internal address (cairn serve --webhook-allow opens internal targets)' });
                }
                expect(JSON.stringify(d)).to.not.match(/169\.254|10\.11\.12\.13|fd00|93\.184/);
            }
            // The name that resolves to the opened 127.0.0.1 is delivered: the receiver got exactly that one.
            const ok = hooks['receiver.test'];
            await until('receiver.test delivered', async () => (await delivery(repo, ok, `${ok}.delivery-1`)).state === 'delivered');
            expect(rx.received.map((r) => r.headers['x-cairn-delivery'])).to.deep.equal([`${ok}.delivery-1`]);
        }
        finally {
            await rx.close();
        }
    });
    it('disables a webhook after deliveries failed in a row (reason, time, webhook.disabled event); the owner re-enables it', async () => {
        const rx = await receiver(() => 500);
        try {
            const repo = await register(base, 'hooks-disable');
            const created = await call('POST', hooksOf(repo), { json: { url: rx.url, types: ['task.created'], secret: SECRET } });
            const hook = created.json.webhook.webhook_id;
            expect(created.json.webhook).to.include({ active: true, disabled_reason: null, disabled_at_s: null, consecutive_failures: 0 });
            // A delivered delivery resets the count.
            rx.state.behaviour = (n) => (n <= 3 ? 500 : 200);
            await createTask(repo, 'fails');
            await until('delivery 1 failed', async () => (await delivery(repo, hook, `${hook}.delivery-1`)).state === 'failed');
            expect((await call('GET', `${hooksOf(repo)}/${hook}`)).json.webhook).to.include({ active: true, consecutive_failures: 1 });
            await createTask(repo, 'delivered');
            await until('delivery 2 delivered', async () => (await delivery(repo, hook, `${hook}.delivery-2`)).state === 'delivered');
            expect((await call('GET', `${hooksOf(repo)}/${hook}`)).json.webhook).to.include({ active: true, consecutive_failures: 0 });
            // Three failed in a row (disableAfter: 3) disable it.
            rx.state.behaviour = () => 503;
            for (let i = 3; i <= 5; i++)
                await createTask(repo, `fails ${i}`);
            const disabled = await until('disabled', async () => { const w = (await call('GET', `${hooksOf(repo)}/${hook}`)).json.webhook; return !w.active && w; });
            expect(disabled).to.include({ consecutive_failures: 3, disabled_reason: '3 deliveries in a row failed (the last: HTTP 503); register the URL again with active: true to re-enable it' });
            expect(disabled.disabled_at_s).to.be.a('number');
            for (const n of [3, 4, 5])
                expect((await delivery(repo, hook, `${hook}.delivery-${n}`)).state).to.equal('failed');
            const feed = (await call('GET', `${REPOS}/${repo}/events?types=webhook.*`)).json.events;
            expect(feed.map((e) => [e.type, e.data])).to.deep.equal([['webhook.disabled', { webhook_id: hook, delivery_id: `${hook}.delivery-5`, failed_deliveries: 3 }]]);
            expect(logText).to.include('webhook disabled');
            expectError(await call('POST', `${hooksOf(repo)}/${hook}/deliveries/${hook}.delivery-5:redeliver`), 400, 'redelivery of a disabled webhook');
            // While disabled nothing is taken; re-enabled, it takes the events from then on.
            const sent = rx.received.length;
            await createTask(repo, 'while disabled');
            rx.state.behaviour = () => 200;
            const again = await call('POST', hooksOf(repo), { json: { url: rx.url, types: ['task.created'], secret: SECRET } });
            expect(again.status, again.text).to.equal(200);
            expect(again.json.webhook).to.include({ webhook_id: hook, active: true, disabled_reason: null, disabled_at_s: null, consecutive_failures: 0 });
            const after = await createTask(repo, 'after re-enabling');
            await until('delivery 6 delivered', async () => (await delivery(repo, hook, `${hook}.delivery-6`)).state === 'delivered');
            expect(rx.received.slice(sent).map((r) => JSON.parse(r.body).data.task_id)).to.deep.equal([after]);
        }
        finally {
            await rx.close();
        }
    });
    it('reads a webhook record written before disabling existed as active, never disabled', async () => {
        const repo = await register(base, 'hooks-old-record');
        const a = service.authority(repo);
        const old = { webhook_id: 'webhook-1', sequence: 1, url: 'https://example.invalid/old', types: null, secret: SECRET, active: true, deleted: false, created_at_s: 1, updated_at_s: 1, deleted_at_s: null };
        await a.store.transact((tx) => tx.upsert('webhook', 'webhook-1', old));
        // Open the repository again: the record is read back from workflow.log.
        service.closeAuthority(repo);
        await service.ensureOpen(repo);
        expect((await call('GET', `${hooksOf(repo)}/webhook-1`)).json.webhook).to.include({ active: true, disabled_reason: null, disabled_at_s: null, consecutive_failures: 0 });
    });
    it('resumes pending deliveries after kill -9, in order, one in flight per webhook', async () => {
        const rx = await receiver((n) => (n === 1 ? 'hang' : 200));
        const dataDir = path.join(tempDir(), 'data');
        const flags = ['--webhook-backoff-ms', '20', '--webhook-allow', '127.0.0.1'];
        let server = await spawnServer(dataDir, flags);
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
            server = await spawnServer(dataDir, flags);
            // No request names the repository yet: the background pass after the start opens it and its dispatcher resends.
            await until('delivery 1 sent again before any request to the repository', () => rx.received.length >= 2);
            for (const n of [1, 2]) {
                await until(`delivery ${n} after the restart`, async () => (await api(server.url, 'GET', `${hooksOf(repo)}/${hook}/deliveries/${hook}.delivery-${n}`)).json.delivery.state === 'delivered');
            }
            expect(rx.received.map((r) => r.headers['x-cairn-delivery'])).to.deep.equal([`${hook}.delivery-1`, `${hook}.delivery-1`, `${hook}.delivery-2`]);
            expect(rx.received.map((r) => JSON.parse(r.body).data.task_id)).to.deep.equal(['task-1', 'task-1', 'task-2']);
            for (const r of rx.received)
                expect(verified(r, SECRET)).to.equal(true);
        }
        finally {
            server.proc.kill('SIGTERM');
            await server.exited;
            output += server.output();
            await rx.close();
        }
        expect(output).to.include('"operation":"webhooks.deliveries.get"');
        expect(output).to.not.include(SECRET);
    });
});
describe('webhooks: targets', function () {
    this.timeout(60000);
    it('refuses every internal address at registration by default, in each form URL parsing accepts, naming the rule', async () => {
        // Nothing opened: what the server does without --webhook-allow.
        const server = await startServer({ host: '127.0.0.1', port: 0, dataDir: path.join(tempDir(), 'data'), log: pino({ level: 'silent' }) });
        try {
            await server.ready;
            const repo = await register(server.url, 'targets');
            const hooks = `${REPOS}/${repo}/webhooks`;
            const refused = [
                ['http://127.0.0.1:9/x', /^webhook url: 127\.0\.0\.1 is a loopback address; cairn serve --webhook-allow opens internal targets$/],
                ['http://2130706433/x', /127\.0\.0\.1 is a loopback address/],
                ['http://0x7f.1/x', /127\.0\.0\.1 is a loopback address/],
                ['http://127.1/x', /127\.0\.0\.1 is a loopback address/],
                ['http://017700000001/x', /127\.0\.0\.1 is a loopback address/],
                ['http://127.9.9.9/x', /127\.9\.9\.9 is a loopback address/],
                ['http://[::1]/x', /::1 is a loopback address/],
                ['http://[::ffff:127.0.0.1]/x', /::ffff:7f00:1 is a loopback address in IPv4-mapped form \(127\.0\.0\.1\)/],
                ['http://[::ffff:169.254.169.254]/x', /link-local address .* in IPv4-mapped form/],
                ['http://localhost:9/x', /^webhook url: localhost is a loopback name; cairn serve --webhook-allow/],
                ['http://LOCALHOST./x', /localhost is a loopback name/],
                ['http://hooks.localhost/x', /hooks\.localhost is a loopback name/],
                ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a link-local address/],
                ['http://[fd00:ec2::254]/latest/meta-data/', /fd00:ec2::254 is a unique-local address/],
                ['http://[fe80::1]/x', /fe80::1 is a link-local address/],
                ['http://10.1.2.3/x', /10\.1\.2\.3 is a private address/],
                ['http://172.16.0.1/x', /is a private address/],
                ['http://192.168.1.1/x', /is a private address/],
                ['http://100.64.0.1/x', /100\.64\.0\.1 is a shared address/],
                ['http://0.0.0.0/x', /0\.0\.0\.0 is an unspecified address/],
                ['http://0/x', /0\.0\.0\.0 is an unspecified address/],
                ['http://[::]/x', /:: is an unspecified address/],
                ['http://255.255.255.255/x', /is a broadcast address/],
                ['http://224.0.0.1/x', /is a multicast address/],
                ['http://[ff02::1]/x', /is a multicast address/],
                ['http://192.0.2.1/x', /is a special-purpose address/],
                ['http://[64:ff9b::7f00:1]/x', /is a special-purpose address/],
                ['http://[::7f00:1]/x', /is a reserved address/],
            ];
            for (const [url, rule] of refused) {
                const res = await api(server.url, 'POST', hooks, { json: { url, secret: SECRET } });
                expectError(res, 400, url);
                expect(res.json.error, url).to.match(rule);
            }
            expect((await api(server.url, 'GET', hooks)).json.webhooks).to.deep.equal([]);
            // A public address, and a host name (judged when resolved, at each attempt), are accepted.
            for (const url of ['http://93.184.216.34/hook', 'https://hooks.example.invalid/hook']) {
                expect((await api(server.url, 'POST', hooks, { json: { url, secret: SECRET } })).status, url).to.equal(201);
            }
        }
        finally {
            await server.stop();
        }
    });
    it('--webhook-allow opens a range or a host name; without it the same webhooks are refused at connect time, and bad entries are usage errors', async () => {
        const rx = await receiver();
        const dataDir = path.join(tempDir(), 'data');
        const port = new URL(rx.url).port;
        let server = await spawnServer(dataDir, ['--webhook-backoff-ms', '20', '--webhook-attempts', '1', '--webhook-allow', '127.0.0.0/8', '--webhook-allow', 'localhost']);
        try {
            const repo = await register(server.url, 'allowed');
            const hooks = `${REPOS}/${repo}/webhooks`;
            const byRange = (await api(server.url, 'POST', hooks, { json: { url: `http://127.0.0.1:${port}/range`, types: ['task.created'], secret: SECRET } })).json.webhook.webhook_id;
            const byName = (await api(server.url, 'POST', hooks, { json: { url: `http://localhost:${port}/name`, types: ['task.created'], secret: SECRET } })).json.webhook.webhook_id;
            // Opened or not, the listener itself stays refused.
            expectError(await api(server.url, 'POST', hooks, { json: { url: `${server.url}${REPOS}/${repo}/retirement`, secret: SECRET } }), 400, 'own listener');
            expectError(await api(server.url, 'POST', hooks, { json: { url: `http://localhost:${new URL(server.url).port}/`, secret: SECRET } }), 400, 'own listener by name');
            await api(server.url, 'POST', `${REPOS}/${repo}/tasks`, { json: { title: 'one', intent: 'i' } });
            for (const id of [byRange, byName]) {
                await until(`${id} delivered`, async () => (await api(server.url, 'GET', `${hooks}/${id}/deliveries/${id}.delivery-1`)).json.delivery?.state === 'delivered');
            }
            expect(rx.received.map((r) => r.url).sort()).to.deep.equal(['/name', '/range']);
            // The same registrations under a server that opens nothing: refused when they connect.
            server.proc.kill('SIGTERM');
            await server.exited;
            server = await spawnServer(dataDir, ['--webhook-backoff-ms', '20', '--webhook-attempts', '1']);
            await api(server.url, 'POST', `${REPOS}/${repo}/tasks`, { json: { title: 'two', intent: 'i' } });
            for (const id of [byRange, byName]) {
                const d = await until(`${id} refused`, async () => { const x = (await api(server.url, 'GET', `${hooks}/${id}/deliveries/${id}.delivery-2`)).json.delivery; return x?.state === 'failed' && x; });
                expect(d.attempts[0]).to.include({ status_code: null, error: 'refused by the webhook target policy: the host resolves to an internal address (cairn serve --webhook-allow opens internal targets)' });
            }
            expect(rx.received).to.have.length(2);
        }
        finally {
            server.proc.kill('SIGTERM');
            await server.exited;
            await rx.close();
        }
        for (const bad of ['10.0.0.0/33', '127.1', 'not a host', '']) {
            const r = await cli(['serve', '--data', path.join(tempDir(), 'data'), '--bind', '127.0.0.1:0', '--webhook-allow', bad]);
            expect(r.code, bad).to.equal(2);
            expect(r.stderr, bad).to.include('--webhook-allow');
        }
    });
});
/** A TCP server that accepts connections and never answers (it reads and drops what comes, so it sees the close). */
async function silentReceiver() {
    const sockets = new Set();
    let accepted = 0;
    const server = net.createServer((socket) => {
        accepted++;
        sockets.add(socket);
        socket.resume();
        socket.on('error', () => { });
        socket.on('close', () => sockets.delete(socket));
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        url: (pathName) => `http://127.0.0.1:${server.address().port}${pathName}`,
        accepted: () => accepted,
        open: () => sockets.size,
        close: async () => {
            for (const s of sockets)
                s.destroy();
            await new Promise((resolve) => server.close(resolve));
        },
    };
}
/**
 * A DNS server on 127.0.0.1 (UDP) that answers A queries for the names in `names` and never
 * answers anything else, as a zone whose name servers drop every packet does.
 */
async function fakeDns(names) {
    const socket = dgram.createSocket('udp4');
    const unanswered = new Set();
    socket.on('message', (query, from) => {
        // Header (12 bytes), then the question: length-prefixed labels, a zero byte, QTYPE, QCLASS.
        const labels = [];
        let at = 12;
        while (at < query.length && query[at] !== 0) {
            labels.push(query.toString('latin1', at + 1, at + 1 + query[at]));
            at += 1 + query[at];
        }
        const questionEnd = at + 5;
        const name = labels.join('.').toLowerCase();
        const qtype = query.readUInt16BE(at + 1);
        if (!(name in names)) {
            unanswered.add(name);
            return;
        }
        const answers = qtype === 1 ? [names[name].split('.').map(Number)] : [];
        const header = Buffer.alloc(12);
        query.copy(header, 0, 0, 2); // the id
        header.writeUInt16BE(0x8180, 2); // a response, recursion desired and available, no error
        header.writeUInt16BE(1, 4);
        header.writeUInt16BE(answers.length, 6);
        const records = answers.map((octets) => {
            const r = Buffer.alloc(16);
            r.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
            r.writeUInt16BE(1, 2); // A
            r.writeUInt16BE(1, 4); // IN
            r.writeUInt32BE(60, 6); // TTL
            r.writeUInt16BE(4, 10);
            Buffer.from(octets).copy(r, 12);
            return r;
        });
        socket.send(Buffer.concat([header, query.subarray(12, questionEnd), ...records]), from.port, from.address);
    });
    await new Promise((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return {
        server: `127.0.0.1:${socket.address().port}`,
        /** Names asked for and never answered. */
        unanswered,
        close: () => new Promise((resolve) => socket.close(() => resolve())),
    };
}
describe('webhooks: isolation', function () {
    this.timeout(60000);
    it('hung receivers hold only their own webhooks: a healthy webhook of the same repository gets every event, in order', async () => {
        // Attempts wait far longer than the test for an answer, so the hung ones stay hung throughout.
        const server = await startServer({ host: '127.0.0.1', port: 0, dataDir: path.join(tempDir(), 'data'), log: pino({ level: 'silent' }), webhookAllow: ['127.0.0.1'], webhooks: { timeoutMs: 300_000 } });
        const silent = await silentReceiver();
        const rx = await receiver();
        try {
            await server.ready;
            const repo = await register(server.url, 'isolation');
            const hooks = `${REPOS}/${repo}/webhooks`;
            const HUNG = 19; // with the healthy one: MAX_WEBHOOKS
            for (let i = 1; i <= HUNG; i++) {
                expect((await api(server.url, 'POST', hooks, { json: { url: silent.url(`/hung-${i}`), types: ['task.created'], secret: SECRET } })).status).to.equal(201);
            }
            const healthy = (await api(server.url, 'POST', hooks, { json: { url: rx.url, types: ['task.created'], secret: SECRET } })).json.webhook.webhook_id;
            const tasks = [];
            for (let i = 1; i <= 30; i++)
                tasks.push((await api(server.url, 'POST', `${REPOS}/${repo}/tasks`, { json: { title: `t${i}`, intent: 'i' } })).json.task.task_id);
            await until('the healthy webhook got every event', () => rx.received.length >= tasks.length, 20000);
            await until('every hung webhook has its attempt in flight', () => silent.open() === HUNG, 20000);
            expect(rx.received.map((r) => JSON.parse(r.body).data.task_id)).to.deep.equal(tasks);
            expect(rx.received.map((r) => r.headers['x-cairn-delivery'])).to.deep.equal(tasks.map((_, i) => `${healthy}.delivery-${i + 1}`));
            // The hung ones are still on their first attempt: one connection each, never a second.
            expect(silent.accepted()).to.equal(HUNG);
            expect(silent.open()).to.equal(HUNG);
        }
        finally {
            await server.stop();
            await silent.close();
            await rx.close();
        }
    });
    it('bounds each attempt, from the name lookup to the end of the headers: a name DNS never answers, a receiver that never answers, one that trickles its headers', async () => {
        const names = await fakeDns({});
        const server = await startServer({
            host: '127.0.0.1', port: 0, dataDir: path.join(tempDir(), 'data'), log: pino({ level: 'silent' }), webhookAllow: ['127.0.0.1'],
            webhooks: { timeoutMs: 500, maxAttempts: 2, backoffBaseMs: 20 }, webhookResolve: webhookResolver([names.server]),
        });
        const silent = await silentReceiver();
        // Answers a status line at once, then one header line every 50 ms, never ending the headers.
        const trickled = new Set();
        let trickleClosed = 0;
        const trickle = net.createServer((socket) => {
            trickled.add(socket);
            socket.write('HTTP/1.1 200 OK\r\n');
            const t = setInterval(() => socket.write('X-Slow: 1\r\n'), 50);
            socket.on('error', () => { });
            socket.on('close', () => { clearInterval(t); trickled.delete(socket); trickleClosed++; });
        });
        await new Promise((resolve) => trickle.listen(0, '127.0.0.1', resolve));
        try {
            await server.ready;
            const repo = await register(server.url, 'timeouts');
            const hooks = `${REPOS}/${repo}/webhooks`;
            const ids = [];
            for (const url of ['http://never-resolves.test/', silent.url('/never'), `http://127.0.0.1:${trickle.address().port}/trickle`]) {
                ids.push((await api(server.url, 'POST', hooks, { json: { url, types: ['task.created'], secret: SECRET } })).json.webhook.webhook_id);
            }
            await api(server.url, 'POST', `${REPOS}/${repo}/tasks`, { json: { title: 't', intent: 'i' } });
            for (const id of ids) {
                const d = await until(`${id} failed`, async () => { const x = (await api(server.url, 'GET', `${hooks}/${id}/deliveries/${id}.delivery-1`)).json.delivery; return x?.state === 'failed' && x; });
                expect(d.attempts.map((a) => [a.status_code, a.error])).to.deep.equal([[null, 'no answer within 0.5 s'], [null, 'no answer within 0.5 s']]);
            }
            // Each cut-off attempt closed its connection.
            await until('the trickling connections closed', () => trickleClosed === 2 && trickled.size === 0);
            await until('the silent connections closed', () => silent.accepted() === 2 && silent.open() === 0);
        }
        finally {
            await server.stop();
            await silent.close();
            for (const s of trickled)
                s.destroy();
            await new Promise((resolve) => trickle.close(resolve));
            await names.close();
        }
    });
    it('a name whose DNS never answers holds only its own webhook: a webhook of another repository, resolved by name, is delivered on its first attempt', async () => {
        // The webhooks' names are resolved through this DNS server: good.test answers, hang-N.test never does.
        const names = await fakeDns({ 'good.test': '127.0.0.1' });
        const rx = await receiver();
        const server = await startServer({
            host: '127.0.0.1', port: 0, dataDir: path.join(tempDir(), 'data'), log: pino({ level: 'silent' }), webhookAllow: ['127.0.0.1'],
            // Attempts wait far longer than the test for an answer, so the hung lookups stay hung throughout.
            webhooks: { timeoutMs: 300_000, maxAttempts: 1 }, webhookResolve: webhookResolver([names.server]),
        });
        try {
            await server.ready;
            const attacker = await register(server.url, 'dns-attacker');
            const HUNG = 20; // MAX_WEBHOOKS: far more lookups than the few a shared resolver runs at once
            for (let i = 1; i <= HUNG; i++) {
                expect((await api(server.url, 'POST', `${REPOS}/${attacker}/webhooks`, { json: { url: `http://hang-${i}.test/x`, types: ['task.created'], secret: SECRET } })).status).to.equal(201);
            }
            await api(server.url, 'POST', `${REPOS}/${attacker}/tasks`, { json: { title: 'hang', intent: 'i' } });
            await until('every hung name was asked for', () => names.unanswered.size === HUNG);
            const victim = await register(server.url, 'dns-victim');
            const hook = (await api(server.url, 'POST', `${REPOS}/${victim}/webhooks`, { json: { url: `http://good.test:${new URL(rx.url).port}/hook`, types: ['task.created'], secret: SECRET } })).json.webhook.webhook_id;
            await api(server.url, 'POST', `${REPOS}/${victim}/tasks`, { json: { title: 'meanwhile', intent: 'i' } });
            const d = await until('the victim delivered', async () => {
                const x = (await api(server.url, 'GET', `${REPOS}/${victim}/webhooks/${hook}/deliveries/${hook}.delivery-1`)).json.delivery;
                return x && x.state !== 'pending' && x;
            }, 20000);
            expect(d.attempts.map((a) => [a.status_code, a.error])).to.deep.equal([[200, null]]);
            expect(rx.received.map((r) => r.url)).to.deep.equal(['/hook']);
        }
        finally {
            await server.stop();
            await rx.close();
            await names.close();
        }
    });
});
//# sourceMappingURL=webhooks.test.js.map