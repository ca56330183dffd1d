// Who may promote a standby (POST /archive/promote, docs/operations.md "Who may promote"):
// reaching the port is not enough. With a promotion secret (serve --promote-secret-file) the
// request must carry it (401 otherwise, WWW-Authenticate: Bearer); without one, only a request
// on a loopback listener from a loopback peer that is neither a web page nor forwarded by a
// proxy, and never on a server that believes an identity header from a front door (403). A
// refused promotion writes nothing to the archive and the standby stays a read-only follower;
// the secret never shows in an answer or the server's log. In-process standbys on an
// in-memory archive; the non-loopback case connects through this machine's own network address.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { startServer } from '../lib/cli/serve.js';
import { MemoryObjectStore } from './memory-store.js';
import { api, cli, tempDir, until } from './helpers.js';
const REGISTER = '/v1/native/repository-authorities';
/** An IPv4 address of this machine that is not loopback, or null when it has none. */
function outsideAddress() {
    for (const list of Object.values(os.networkInterfaces())) {
        for (const i of list ?? [])
            if (i.family === 'IPv4' && !i.internal)
                return i.address;
    }
    return null;
}
async function standby(options) {
    const store = new MemoryObjectStore();
    const dataDir = path.join(tempDir(), 'standby');
    const lines = [];
    const sink = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
    const server = await startServer({ port: 0, dataDir, log: pino({ level: 'debug' }, sink), ui: false, follow: { url: 's3://standby-access/team/', store, intervalMs: 100 }, ...options });
    await server.ready;
    return { server, store, dataDir, port: Number(new URL(server.url).port), log: () => lines.join('') };
}
/** Nothing was written to the archive, no archive.json, and the server still follows read-only. */
async function stillFollows(s, base) {
    expect(s.store.calls.filter((c) => c.startsWith('put ')), 'archive writes').to.deep.equal([]);
    await fsp.access(path.join(s.dataDir, 'archive.json')).then(() => { throw new Error('archive.json was written'); }, () => undefined);
    const health = await api(base, 'GET', '/healthz');
    expect(health.json.follow.state).to.be.oneOf(['following', 'error']);
    expect(health.json.follow.generation).to.equal(null);
    const write = await api(base, 'POST', REGISTER, { json: { repository_name: 'no', namespace: '', policy_flags: 0 }, contract: false });
    expect(write.status, write.text).to.equal(503);
}
/** Promoted: a claim in the archive, and writable. */
async function promoted(s, base, res) {
    expect(res.status, res.text).to.equal(200);
    expect(res.json.generation).to.equal('1');
    expect([...s.store.objects.keys()].filter((k) => k.startsWith('generations/'))).to.have.length(1);
    const write = await api(base, 'POST', REGISTER, { json: { repository_name: 'now-writable', namespace: '', policy_flags: 0 } });
    expect(write.status, write.text).to.equal(201);
}
describe('who may promote a standby', function () {
    this.timeout(60_000);
    const running = [];
    const start = async (options) => {
        const s = await standby(options);
        running.push(s.server);
        return s;
    };
    after(async () => { for (const s of running)
        await s.stop(); });
    describe('on a listener every interface reaches (--bind 0.0.0.0)', () => {
        let outside;
        before(function () {
            const a = outsideAddress();
            if (a === null) {
                console.log('      (skipped: this machine has no non-loopback IPv4 address to connect through)');
                this.skip();
            }
            outside = a;
        });
        it('without a promotion secret: 403 from another address and from loopback alike; nothing claimed, still a read-only follower', async () => {
            const s = await start({ host: '0.0.0.0', insecureOpen: true });
            const base = `http://${outside}:${s.port}`;
            const res = await api(base, 'POST', '/archive/promote');
            expect(res.status, res.text).to.equal(403);
            expect(res.json.error).to.match(/--promote-secret-file/);
            // A loopback peer on a listener that also faces the network is no proof of a local caller.
            const local = await api(`http://127.0.0.1:${s.port}`, 'POST', '/archive/promote');
            expect(local.status, local.text).to.equal(403);
            await stillFollows(s, base);
            const c = await cli(['promote', '--server', base]);
            expect(c.code).to.equal(1);
            expect(c.stderr).to.match(/HTTP 403: .*--promote-secret-file/);
            await stillFollows(s, base);
        });
        it('with a promotion secret: 401 without it or with a wrong one, the secret never shown; cairn promote --secret-file promotes', async () => {
            const secret = randomBytes(24).toString('hex');
            const wrong = `${secret.slice(0, -1)}${secret.endsWith('0') ? '1' : '0'}`;
            const s = await start({ host: '0.0.0.0', insecureOpen: true, promoteSecret: secret });
            const base = `http://${outside}:${s.port}`;
            const seen = [];
            for (const authorization of [undefined, `Bearer ${wrong}`, `Bearer ${secret.slice(0, 16)}`, `Basic ${Buffer.from(`x:${secret}`).toString('base64')}`, `Bearer`, secret]) {
                const res = await api(base, 'POST', '/archive/promote', { headers: authorization === undefined ? {} : { authorization } });
                expect(res.status, `${authorization}: ${res.text}`).to.equal(401);
                expect(res.headers.get('www-authenticate')).to.match(/^Bearer\b/);
                expect(res.json.error).to.match(/promotion secret/);
                seen.push(res.text, JSON.stringify([...res.headers]));
            }
            await stillFollows(s, base);
            const files = tempDir();
            const wrongFile = path.join(files, 'wrong');
            await fsp.writeFile(wrongFile, `${wrong}\n`, { mode: 0o600 });
            const bad = await cli(['promote', '--server', base, '--secret-file', wrongFile]);
            expect(bad.code).to.equal(1);
            expect(bad.stderr).to.match(/HTTP 401: the promotion secret does not match/);
            seen.push(bad.stdout, bad.stderr);
            await stillFollows(s, base);
            const file = path.join(files, 'secret');
            await fsp.writeFile(file, `${secret}\n`, { mode: 0o600 });
            // The environment variable names the file as --secret-file does.
            const ok = await cli(['promote', '--server', base, '--json'], { CAIRN_PROMOTE_SECRET_FILE: file });
            expect(ok.code, ok.stderr).to.equal(0);
            expect(JSON.parse(ok.stdout).generation).to.equal('1');
            seen.push(ok.stdout, ok.stderr);
            await promoted(s, base, { status: 200, json: JSON.parse(ok.stdout), text: ok.stdout, headers: new Headers() });
            await until('the log lines of the requests', () => /"operation":"archive.promote"/.test(s.log()));
            for (const text of [...seen, s.log()]) {
                expect(text).to.not.include(secret);
                expect(text).to.not.include(wrong);
                expect(text).to.not.include(secret.slice(0, 16));
            }
        });
    });
    describe('on a loopback listener', () => {
        it('refuses a web page (Origin, Sec-Fetch-Site) and a forwarded request (403); a plain local request promotes', async () => {
            const s = await start({ host: '127.0.0.1' });
            const base = s.server.url;
            for (const headers of [{ origin: base }, { 'sec-fetch-site': 'same-origin' }, { 'x-forwarded-for': '203.0.113.9' }, { forwarded: 'for=203.0.113.9' }, { 'x-real-ip': '203.0.113.9' }]) {
                const res = await api(base, 'POST', '/archive/promote', { headers });
                expect(res.status, `${JSON.stringify(headers)}: ${res.text}`).to.equal(403);
            }
            await stillFollows(s, base);
            await promoted(s, base, await api(base, 'POST', '/archive/promote'));
        });
        it('refuses a request carrying any header a proxy adds (Via, X-Forwarded-Proto, True-Client-IP, …): 403, nothing written', async () => {
            const s = await start({ host: '127.0.0.1' });
            const base = s.server.url;
            const proxied = {
                via: '1.1 proxy.example', 'x-forwarded-proto': 'https', 'x-forwarded-port': '443', 'x-forwarded-host': 'cairn.example',
                'x-client-ip': '203.0.113.9', 'true-client-ip': '203.0.113.9', 'cf-connecting-ip': '203.0.113.9',
                'x-original-forwarded-for': '203.0.113.9', 'client-ip': '203.0.113.9',
            };
            for (const [name, value] of Object.entries(proxied)) {
                const res = await api(base, 'POST', '/archive/promote', { headers: { [name]: value } });
                expect(res.status, `${name}: ${res.text}`).to.equal(403);
                expect(res.json.error, name).to.match(/proxy.*--promote-secret-file/);
            }
            await stillFollows(s, base);
        });
        it('behind a front door (an identity header is believed): 403 without a promotion secret, naming how to configure one', async () => {
            const s = await start({ host: '127.0.0.1', identity: { header: 'X-Cairn-User', trustFrom: ['127.0.0.1'] } });
            const base = s.server.url;
            for (const headers of [{}, { 'x-cairn-user': 'alice' }]) {
                const res = await api(base, 'POST', '/archive/promote', { headers });
                expect(res.status, res.text).to.equal(403);
                expect(res.json.error).to.match(/front door.*--promote-secret-file/);
            }
            await stillFollows(s, base);
        });
        it('behind a front door with a promotion secret: 401 without it, 200 with it', async () => {
            const secret = randomBytes(24).toString('base64url');
            const s = await start({ host: '127.0.0.1', identity: { header: 'X-Cairn-User' }, promoteSecret: secret });
            const base = s.server.url;
            const res = await api(base, 'POST', '/archive/promote');
            expect(res.status, res.text).to.equal(401);
            await stillFollows(s, base);
            await promoted(s, base, await api(base, 'POST', '/archive/promote', { headers: { authorization: `bearer ${secret}` } }));
        });
    });
    describe('cairn serve --promote-secret-file and cairn promote --secret-file', () => {
        it('are refused as usage errors when they cannot apply or the file is unusable, without showing its text', async () => {
            const dir = tempDir();
            const short = path.join(dir, 'short');
            await fsp.writeFile(short, 'tooshort-secret\n');
            const good = path.join(dir, 'good');
            await fsp.writeFile(good, `${randomBytes(24).toString('hex')}\n`);
            const data = path.join(dir, 'data');
            const noFollow = await cli(['serve', '--data', data, '--bind', '127.0.0.1:0', '--promote-secret-file', good]);
            expect(noFollow.code).to.equal(2);
            expect(noFollow.stderr).to.match(/--promote-secret-file needs --follow/);
            const tooShort = await cli(['serve', '--data', data, '--bind', '127.0.0.1:0', '--follow', 's3://b/p/', '--promote-secret-file', short]);
            expect(tooShort.code).to.equal(2);
            expect(tooShort.stderr).to.match(/--promote-secret-file: the secret must be at least 16 characters/);
            expect(tooShort.stderr).to.not.include('tooshort-secret');
            // Sent as Authorization: Bearer <secret>, a secret with whitespace (or outside printable ASCII) could never match.
            for (const [name, text] of [['spaced', 'correct horse battery staple\n'], ['tabbed', `${'a'.repeat(10)}\t${'b'.repeat(10)}\n`], ['accented', `sécrétsécrétsécrét\n`]]) {
                const file = path.join(dir, name);
                await fsp.writeFile(file, text);
                // A follow URL the store refuses: the old code got past the secret and stopped there.
                const r = await cli(['serve', '--data', data, '--bind', '127.0.0.1:0', '--follow', 'ftp://b/p/', '--promote-secret-file', file]);
                expect(r.code, name).to.equal(2);
                expect(r.stderr, name).to.match(/--promote-secret-file: the secret must be printable ASCII without whitespace/);
                expect(r.stderr, name).to.not.include(text.trim().slice(0, 8));
            }
            const missing = await cli(['serve', '--data', data, '--bind', '127.0.0.1:0', '--follow', 's3://b/p/', '--promote-secret-file', path.join(dir, 'none')]);
            expect(missing.code).to.equal(2);
            expect(missing.stderr).to.match(/--promote-secret-file: ENOENT/);
            const cliMissing = await cli(['promote', '--server', 'http://127.0.0.1:9', '--secret-file', path.join(dir, 'none')]);
            expect(cliMissing.code).to.equal(2);
            expect(cliMissing.stderr).to.match(/--secret-file: ENOENT/);
            const withFile = await cli(['promote', '--server', 'http://127.0.0.1:9', '--repo', '1', '--secret-file', good, path.join(dir, 'body.json')]);
            expect(withFile.code).to.equal(2);
            expect(withFile.stderr).to.match(/--secret-file applies to the promotion of a standby/);
        });
    });
});
//# sourceMappingURL=archive-promote-access.test.js.map