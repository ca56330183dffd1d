// Safe by default (docs/operations.md "Who may reach the listener"): without an auth mode the
// server listens on loopback only; a network address (0.0.0.0, ::, a name resolving beyond
// loopback) is a usage error before anything listens or is created, unless a front door is
// named or --insecure-open is given (then a warning is logged).
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import { spawnSync } from 'node:child_process';
import { pino } from 'pino';
import { startServer } from '../lib/cli/serve.js';
import { CLI, ports, spawnServer, tempDir, untilOutput } from './helpers.js';
/** Whether something accepts a connection at host:port. */
function accepts(host, port) {
    return new Promise((resolve) => {
        const socket = net.connect({ host, port });
        socket.once('connect', () => { socket.destroy(); resolve(true); });
        socket.once('error', () => resolve(false));
    });
}
function serveSync(bind, data, args = []) {
    return spawnSync(process.execPath, [CLI, 'serve', '--bind', bind, '--data', data, '--log-level', 'info', ...args], { encoding: 'utf8', timeout: 20_000 });
}
describe('cairn serve on a network address', function () {
    this.timeout(60_000);
    const children = [];
    after(async () => {
        for (const c of children) {
            c.proc.kill('SIGTERM');
            await c.exited;
        }
    });
    const spawned = async (bindHost, args = []) => {
        const c = await spawnServer(path.join(tempDir(), 'data'), args, true, {}, bindHost);
        children.push(c);
        return c;
    };
    for (const bind of ['0.0.0.0', '[::]']) {
        it(`without an auth mode: --bind ${bind}:PORT exits 2 saying how to fix it, never listens, creates nothing`, async () => {
            const data = path.join(tempDir(), 'data');
            const port = ports.pick();
            const r = serveSync(`${bind}:${port}`, data);
            expect(r.status, r.stderr + r.stdout).to.equal(2);
            expect(r.stderr).to.match(/refusing to listen on (0\.0\.0\.0|::) without authentication/);
            expect(r.stderr).to.match(/--insecure-open/);
            expect(r.stderr).to.match(/--trust-identity-from/);
            expect(r.stdout, 'nothing logged: it never started').to.equal('');
            expect(existsSync(data), 'data directory created').to.equal(false);
            expect(await accepts('127.0.0.1', port)).to.equal(false);
        });
    }
    it('with --insecure-open: listens on every interface and warns at start', async () => {
        const s = await spawned('0.0.0.0', ['--insecure-open']);
        // The log is written in batches: wait for the line, then read it.
        await untilOutput(s, /without authentication/);
        const warning = s.output().split('\n').find((l) => l.includes('without authentication'));
        expect(warning, s.output()).to.be.a('string');
        const line = JSON.parse(warning);
        expect(line.level).to.equal(40);
        expect(line.msg).to.match(/^listening on 0\.0\.0\.0:\d+ without authentication \(--insecure-open\): anyone who reaches it may read and change every repository$/);
    });
    it('behind a named front door (--ui-identity-header with --trust-identity-from): listens without a warning', async () => {
        const s = await spawned('0.0.0.0', ['--ui-identity-header', 'X-Cairn-User', '--trust-identity-from', '10.9.8.7']);
        // "ready" is logged after the warning would be: once it is out, so would the warning be.
        await untilOutput(s, /"msg":"ready"/);
        expect((await fetch(`${s.url}/healthz`)).status).to.equal(200);
        expect(s.output()).not.to.match(/without authentication/);
    });
    it('an identity header believed from anyone is no front door: refused', () => {
        const data = path.join(tempDir(), 'data');
        const r = serveSync(`0.0.0.0:${ports.pick()}`, data, ['--ui-identity-header', 'X-Cairn-User']);
        expect(r.status, r.stderr).to.equal(2);
        expect(r.stderr).to.match(/refusing to listen on 0\.0\.0\.0/);
        expect(existsSync(data)).to.equal(false);
    });
    it('loopback as today: 127.0.0.1 and localhost listen without a warning', async () => {
        for (const host of ['127.0.0.1', 'localhost']) {
            const s = await spawned(host);
            await untilOutput(s, /"msg":"ready"/);
            expect((await fetch(`${s.url}/healthz`)).status, host).to.equal(200);
            expect(s.output(), host).not.to.match(/without authentication/);
        }
    });
    it('loopback as today: [::1] listens without a warning', async () => {
        const c = await spawnServer(path.join(tempDir(), 'data'), [], false, {}, '::1');
        children.push(c);
        await untilOutput(c, /"msg":"ready"/);
        const port = new URL(c.url).port;
        expect((await fetch(`http://[::1]:${port}/healthz`)).status).to.equal(200);
        expect(c.output()).not.to.match(/without authentication/);
    });
    it('a host name that does not resolve is a usage error', () => {
        const data = path.join(tempDir(), 'data');
        const r = serveSync(`no-such-host.invalid:${ports.pick()}`, data);
        expect(r.status, r.stderr).to.equal(2);
        expect(r.stderr).to.match(/--bind: cannot resolve no-such-host\.invalid/);
        expect(existsSync(data)).to.equal(false);
    });
});
describe('startServer on a network address', function () {
    this.timeout(60_000);
    const running = [];
    after(async () => { for (const s of running)
        await s.stop(); });
    const start = async (options) => {
        const lines = [];
        const sink = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
        const dataDir = path.join(tempDir(), 'data');
        const server = await startServer({ port: 0, dataDir, log: pino({ level: 'info' }, sink), ui: false, ...options });
        running.push(server);
        await server.ready;
        return { server, log: () => lines.join('') };
    };
    const refused = async (options, pattern) => {
        const dataDir = path.join(tempDir(), 'data');
        let error = null;
        try {
            running.push(await startServer({ port: 0, dataDir, log: pino({ level: 'silent' }), ui: false, ...options }));
        }
        catch (err) {
            error = err;
        }
        expect(error?.message).to.match(pattern);
        expect(existsSync(dataDir), 'data directory created').to.equal(false);
    };
    it('refuses 0.0.0.0 and :: without insecureOpen or a front door', async () => {
        await refused({ host: '0.0.0.0' }, /refusing to listen on 0\.0\.0\.0 without authentication/);
        await refused({ host: '::' }, /refusing to listen on :: without authentication/);
    });
    it('refuses a name any of whose addresses is not loopback (resolved before listening)', async () => {
        const asked = [];
        const lookup = (addresses) => async (host) => { asked.push(host); return addresses; };
        await refused({ host: 'cairn.test', bindLookup: lookup(['10.1.2.3']) }, /refusing to listen on cairn\.test \(10\.1\.2\.3\) without authentication/);
        await refused({ host: 'cairn.test', bindLookup: lookup(['127.0.0.1', 'fd00::7']) }, /refusing to listen on cairn\.test \(fd00::7\)/);
        expect(asked).to.deep.equal(['cairn.test', 'cairn.test']);
    });
    it('listens on loopback (127.0.0.1, ::1, localhost) as today', async () => {
        for (const host of ['127.0.0.1', '::1', 'localhost']) {
            const { server, log } = await start({ host });
            expect((await fetch(`${server.url}/healthz`)).status, host).to.equal(200);
            expect(log()).not.to.match(/without authentication/);
        }
    });
    it('with insecureOpen: listens on 0.0.0.0 and warns; with a front door secret: no warning', async () => {
        const open = await start({ host: '0.0.0.0', insecureOpen: true });
        expect(open.log()).to.match(/"level":40,.*"msg":"listening on 0\.0\.0\.0:\d+ without authentication \(--insecure-open\)/);
        const door = await start({ host: '0.0.0.0', identity: { header: 'X-Cairn-User', secret: 'a-secret-of-sixteen-or-more' } });
        expect(door.log()).not.to.match(/without authentication/);
        expect(door.log()).not.to.match(/a-secret-of-sixteen/);
    });
});
//# sourceMappingURL=bind-policy.test.js.map