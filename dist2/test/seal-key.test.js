// DATA/seal.key (storage-layout.md §17.2): a server started with the wrong key never destroys
// what it cannot open — a webhook's failed delivery leaves its sealed secret as it was, so the
// right key put back signs again — and a data directory that holds repositories does not start
// without its key unless the operator asks for a new one (serve --new-seal-key).
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { openRecord, seal, sealKeyOf, sealRecord } from '../lib/domain/sealing.js';
import { pino } from 'pino';
import { startServer } from '../lib/cli/serve.js';
import { crc32 } from '../lib/store/binary.js';
import { api, cli, ok, register, startTestServer, tempDir, until } from './helpers.js';
import { receiver, signedWith } from './webhook-receiver.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const SECRET = 'hook-Secret-5d1c0e9b7a24f6';
describe('seal key: a wrong or missing key destroys nothing', function () {
    this.timeout(120_000);
    it('codec: a webhook read with another key and written again keeps its sealed secret (and never writes secret_unavailable)', () => {
        const right = sealKeyOf(randomBytes(32));
        const wrong = sealKeyOf(randomBytes(32));
        const disk = sealRecord(right, 'webhook', 'webhook-1', { webhook_id: 'webhook-1', url: 'http://x/', secret: SECRET, deleted: false, consecutive_failures: 0 });
        const read = openRecord(wrong, 'webhook', 'webhook-1', disk);
        expect(read.secret).to.equal(null);
        expect(read.secret_unavailable).to.equal(true);
        const again = JSON.parse(JSON.stringify(sealRecord(wrong, 'webhook', 'webhook-1', { ...read, consecutive_failures: 1 })));
        expect(again.secret).to.deep.equal(disk.secret);
        expect(again).to.not.have.property('secret_unavailable');
        expect(openRecord(right, 'webhook', 'webhook-1', again).secret).to.equal(SECRET);
        // A secret given again, or a deletion, is written as given.
        const replaced = openRecord(right, 'webhook', 'webhook-1', sealRecord(wrong, 'webhook', 'webhook-1', { ...read, secret: 'another-secret-0123456' }));
        expect(replaced.secret).to.equal(null); // sealed with `wrong` now: `right` does not open it
        expect(openRecord(wrong, 'webhook', 'webhook-1', sealRecord(wrong, 'webhook', 'webhook-1', { ...read, secret: 'another-secret-0123456' })).secret).to.equal('another-secret-0123456');
        expect(JSON.parse(JSON.stringify(sealRecord(wrong, 'webhook', 'webhook-1', { ...read, deleted: true })))).to.include({ secret: null }).and.not.have.property('secret_unavailable');
        // A draft read as discarded and written again keeps its sealed text.
        const draft = sealRecord(right, 'comment', 'c.comment-1', { comment_id: 'c.comment-1', author: 'alice', body: 'private', suggestion: 'line', published: false });
        const dread = openRecord(wrong, 'comment', 'c.comment-1', draft);
        expect(dread.discarded).to.equal(true);
        const dagain = JSON.parse(JSON.stringify(sealRecord(wrong, 'comment', 'c.comment-1', { ...dread, updated_at_s: 5 })));
        expect(dagain).to.not.have.property('discarded');
        expect(openRecord(right, 'comment', 'c.comment-1', dagain).body).to.equal('private');
    });
    it('started with the wrong key, a failed delivery keeps the sealed secret: with the right key back the webhook signs again', async () => {
        const rx = await receiver();
        const dataDir = path.join(tempDir(), 'data');
        const keyFile = path.join(dataDir, 'seal.key');
        const opts = { webhookAllow: ['127.0.0.1'], webhooks: { maxAttempts: 1, backoffBaseMs: 10 } };
        try {
            let s = await startTestServer(dataDir, opts);
            let repo;
            try {
                repo = await register(s.url, 'hooked');
                expect((await api(s.url, 'POST', R(repo, '/webhooks'), { json: { url: rx.url, secret: SECRET, types: ['task.*'] } })).status).to.equal(201);
            }
            finally {
                await s.stop();
            }
            const rightKey = await fsp.readFile(keyFile);
            await fsp.writeFile(keyFile, `cairn-seal-key-v1 ${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
            s = await startTestServer(dataDir, opts);
            try {
                await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'with the wrong key', intent: 'i' } }));
                const d = await until('the delivery to fail', async () => (await ok(api(s.url, 'GET', R(repo, '/webhooks/webhook-1/deliveries')))).deliveries.find((x) => x.state === 'failed'));
                expect(d.attempts[0].error).to.match(/sealed with another server's key/);
                expect(rx.received.length).to.equal(0);
            }
            finally {
                await s.stop();
            }
            await fsp.writeFile(keyFile, rightKey);
            s = await startTestServer(dataDir, opts);
            try {
                await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'with the right key', intent: 'i' } }));
                const got = await until('a delivery', () => rx.received[0]);
                expect(signedWith(got, SECRET)).to.equal(true);
                const hook = (await ok(api(s.url, 'GET', R(repo, '/webhooks/webhook-1')))).webhook;
                expect(hook.active).to.equal(true);
            }
            finally {
                await s.stop();
            }
        }
        finally {
            await rx.close();
        }
    });
    it('a data directory whose repositories hold sealed values does not start without DATA/seal.key (exit 2, saying why) unless --new-seal-key', async () => {
        const dataDir = path.join(tempDir(), 'data');
        let s = await startTestServer(dataDir, { webhookAllow: ['127.0.0.1'] });
        try {
            const repo = await register(s.url, 'hooked');
            expect((await api(s.url, 'POST', R(repo, '/webhooks'), { json: { url: 'http://127.0.0.1:9/hook', secret: SECRET, types: ['task.*'] } })).status).to.equal(201);
        }
        finally {
            await s.stop();
        }
        const keyFile = path.join(dataDir, 'seal.key');
        const kept = await fsp.readFile(keyFile);
        await fsp.rm(keyFile);
        const refused = await startServer({ host: '127.0.0.1', port: 0, dataDir, log: pino({ level: 'silent' }), webhookAllow: ['127.0.0.1'] }).then(async (r) => { await r.ready.catch(() => { }); await r.stop(); return null; }, (err) => err);
        expect(refused?.message).to.match(/seal\.key is missing.*--new-seal-key/s);
        await fsp.access(keyFile).then(() => { throw new Error('a new seal.key was made'); }, () => { });
        // The CLI: exit 2, the message on stderr, nothing made.
        const r = await cli(['serve', '--data', dataDir, '--bind', '127.0.0.1:0', '--no-ui']);
        expect(r.code, r.stderr).to.equal(2);
        expect(r.stderr).to.match(/seal\.key is missing/);
        await fsp.access(keyFile).then(() => { throw new Error('a new seal.key was made'); }, () => { });
        // Asked for a new key, it starts (the webhook's secret is then unavailable, and kept).
        const running = await startServer({ host: '127.0.0.1', port: 0, dataDir, log: pino({ level: 'silent' }), webhookAllow: ['127.0.0.1'], newSealKey: true });
        await running.ready;
        await running.stop();
        expect((await fsp.readFile(keyFile)).equals(kept)).to.equal(false);
        // A data directory with nothing sealed starts without a key (and makes one).
        const fresh = path.join(tempDir(), 'data');
        s = await startTestServer(fresh);
        try {
            await register(s.url, 'plain');
        }
        finally {
            await s.stop();
        }
        await fsp.rm(path.join(fresh, 'seal.key'));
        s = await startTestServer(fresh);
        await s.stop();
    });
});
describe('sealed values are bound to whose they are', () => {
    const key = sealKeyOf(randomBytes(32));
    const draft = { comment_id: 'ch-1.comment-1', change_id: 'ch-1', author: 'alice', body: 'private words', suggestion: 'a line', published: false };
    const hook = { webhook_id: 'webhook-1', url: 'https://alice.example/hook', secret: SECRET, deleted: false };
    it('a draft whose author or change was edited on disk, its sealed text kept, reads as unavailable (discarded)', () => {
        const disk = sealRecord(key, 'comment', draft.comment_id, draft);
        expect(openRecord(key, 'comment', draft.comment_id, disk).body).to.equal('private words');
        for (const edit of [{ author: 'mallory' }, { change_id: 'ch-2' }]) {
            const read = openRecord(key, 'comment', draft.comment_id, { ...disk, ...edit });
            expect(read, JSON.stringify(edit)).to.include({ discarded: true, body: '', suggestion: null });
        }
    });
    it('a webhook whose url was edited on disk, its sealed secret kept, has no secret', () => {
        const disk = sealRecord(key, 'webhook', hook.webhook_id, hook);
        expect(openRecord(key, 'webhook', hook.webhook_id, disk).secret).to.equal(SECRET);
        const moved = openRecord(key, 'webhook', hook.webhook_id, { ...disk, url: 'https://mallory.example/hook' });
        expect(moved).to.include({ secret: null, secret_unavailable: true });
    });
    it('an edit through the server (the record written again) seals for the new owner', () => {
        const read = openRecord(key, 'comment', draft.comment_id, sealRecord(key, 'comment', draft.comment_id, draft));
        const again = JSON.parse(JSON.stringify(sealRecord(key, 'comment', draft.comment_id, { ...read, author: 'bob' })));
        expect(again.body.sealed).to.equal(2);
        expect(openRecord(key, 'comment', draft.comment_id, again).body).to.equal('private words');
    });
    it('a value in format 1 (type, id and field only) still opens', () => {
        const v1 = seal(key, `cairn.seal.v1\0webhook\0webhook-1\0secret`, SECRET, 1);
        expect(openRecord(key, 'webhook', 'webhook-1', { ...hook, secret: v1 }).secret).to.equal(SECRET);
    });
});
describe('format-1 values are rewritten in format 2 by the reseal', () => {
    it('counts a format-1 value of the store\'s key like one in clear, and sealRecord writes it in format 2 (one of another key is kept)', async () => {
        const { holdsClear } = await import('../lib/domain/sealing.js');
        const key = sealKeyOf(randomBytes(32));
        const other = sealKeyOf(randomBytes(32));
        const hook = { webhook_id: 'webhook-1', url: 'https://ci.example/hook', secret: seal(key, `cairn.seal.v1\0webhook\0webhook-1\0secret`, SECRET, 1), deleted: false };
        expect(holdsClear('webhook', hook, key.id)).to.equal(true);
        expect(holdsClear('webhook', hook, other.id)).to.equal(false);
        const again = sealRecord(key, 'webhook', 'webhook-1', hook);
        expect(again.secret.sealed).to.equal(2);
        expect(holdsClear('webhook', again, key.id)).to.equal(false);
        expect(openRecord(key, 'webhook', 'webhook-1', again).secret).to.equal(SECRET);
        expect(sealRecord(other, 'webhook', 'webhook-1', hook).secret).to.deep.equal(hook.secret);
    });
});
describe('format-1 values in a store: the open reseals them', function () {
    this.timeout(120_000);
    it('a webhook secret sealed in format 1 is rewritten in format 2 at the next open, and still signs', async () => {
        const { sealingTestHooks } = await import('../lib/domain/sealing.js');
        const rx = await receiver();
        const dataDir = path.join(tempDir(), 'data');
        const opts = { webhookAllow: ['127.0.0.1'] };
        try {
            let s = await startTestServer(dataDir, opts);
            let repo;
            sealingTestHooks.writeFormat1 = true;
            try {
                repo = await register(s.url, 'old-format');
                expect((await api(s.url, 'POST', R(repo, '/webhooks'), { json: { url: rx.url, secret: SECRET, types: ['task.*'] } })).status).to.equal(201);
            }
            finally {
                sealingTestHooks.writeFormat1 = false;
                await s.stop();
            }
            const logs = async () => {
                const dir = path.join(dataDir, 'repositories', String(repo));
                const names = (await fsp.readdir(dir)).filter((f) => /^workflow(\.\d+)?\.log$/.test(f));
                return Buffer.concat(await Promise.all(names.map((f) => fsp.readFile(path.join(dir, f))))).toString('latin1');
            };
            expect(await logs()).to.include('"sealed":1,');
            // As a server from before format 2 left it: its checkpoint of version 2 (which did not count them).
            const ckpt = path.join(dataDir, 'repositories', String(repo), 'workflow.ckpt');
            const b = await fsp.readFile(ckpt);
            b.writeUInt16LE(2, 8);
            b.writeUInt32LE(crc32(b.subarray(0, b.length - 4)), b.length - 4);
            await fsp.writeFile(ckpt, b);
            s = await startTestServer(dataDir, opts);
            try {
                await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'after', intent: 'i' } }));
                const got = await until('a delivery', () => rx.received[0]);
                expect(signedWith(got, SECRET)).to.equal(true);
            }
            finally {
                await s.stop();
            }
            const after = await logs();
            expect(after).to.not.include('"sealed":1,');
            expect(after).to.include('"sealed":2,');
        }
        finally {
            await rx.close();
        }
    });
});
//# sourceMappingURL=seal-key.test.js.map