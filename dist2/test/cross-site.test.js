// Who may address the server (docs/operations.md "Cross-site requests and DNS rebinding"):
// a Host that does not name the listener answers 421 on every path (DNS rebinding); a
// state-changing request whose page is of another origin (Origin, Sec-Fetch-Site) answers 403;
// neither changes anything or opens a repository. Then the clients that must keep working (the
// CLI, the runner, curl) and, in Chromium, a page of another origin sending the no-cors POST
// that would retire a repository, a rebound name, and the UI's own writes.
import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Authority } from '../lib/authority/authority.js';
import { checkAnswer } from './contract.js';
import { CLI, api, cli, expectError, register, repoFiles, spawnServer, startTestServer, tempDir } from './helpers.js';
const AUTH = '/v1/native/repository-authorities';
const CHROMIUM = [process.env.CAIRN_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => !!p && existsSync(p));
/** One request over node:http with the headers exactly as given (Host included); API answers are checked against the OpenAPI document. */
function raw(base, method, urlPath, headers, body, contract = true) {
    const u = new URL(base);
    return new Promise((resolve, reject) => {
        const req = http.request({ host: u.hostname, port: u.port, method, path: urlPath, agent: false, headers: { ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}), ...headers } }, (res) => {
            const chunks = [];
            res.on('data', (c) => chunks.push(c));
            res.on('end', () => {
                const text = Buffer.concat(chunks).toString('utf8');
                let json;
                try {
                    json = JSON.parse(text);
                }
                catch {
                    json = undefined;
                }
                if (contract && urlPath.startsWith('/v1/')) {
                    checkAnswer({ method, urlPath, status: res.statusCode ?? 0, headers: new Headers(Object.entries(res.headers).map(([k, v]) => [k, String(v)])), text });
                }
                resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
            });
        });
        req.on('error', reject);
        req.end(body);
    });
}
/** A request without a Host header, over a plain socket: its status. */
function withoutHost(base, urlPath, version = '1.0') {
    const u = new URL(base);
    return new Promise((resolve, reject) => {
        const socket = net.connect(Number(u.port), u.hostname, () => socket.write(`GET ${urlPath} HTTP/${version}\r\nConnection: close\r\n\r\n`));
        let text = '';
        socket.on('data', (d) => { text += d; });
        socket.on('end', () => resolve(Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0)));
        socket.on('error', reject);
    });
}
const refused = (res, status, what) => expectError({ status: res.status, headers: new Headers(), json: res.json, text: res.text }, status, what);
describe('Host and Origin rules over HTTP', function () {
    this.timeout(60_000);
    let s;
    let port;
    let repo;
    const logged = [];
    before(async () => {
        s = await startTestServer(undefined, { requestLog: (entry) => logged.push(entry) });
        port = Number(new URL(s.url).port);
        repo = await register(s.url, 'guarded');
    });
    after(() => s.stop());
    const own = () => `127.0.0.1:${port}`;
    const lifecycle = async () => (await api(s.url, 'GET', `${AUTH}/${repo}`)).json.repository.lifecycle_kind;
    it('answers 421 to a Host that does not name this listener, on every kind of path, and changes nothing', async () => {
        const before = await repoFiles(path.join(s.dataDir, 'repositories', String(repo)));
        const hosts = [`rebind.example:${port}`, 'rebind.example', `127.0.0.1:${port + 1}`, '127.0.0.1', `localhost.:${port}`, `[::2]:${port}`, `0.0.0.0:${port}`, `127.0.0.1:${port}@evil.example`];
        const paths = [
            ['GET', '/healthz'], ['GET', '/v1/handshake'], ['GET', `${AUTH}/${repo}`], ['GET', `${AUTH}/${repo}/tasks`],
            ['GET', `${AUTH}/${repo}/events`], ['GET', '/v1/native/events'], ['POST', `${AUTH}/${repo}/retirement`],
            ['POST', `${AUTH}/${repo}/tasks`, JSON.stringify({ title: 't', intent: 'i' })], ['OPTIONS', `${AUTH}/${repo}/tasks`],
            ['GET', '/ui/'], ['GET', '/'], ['GET', '/docs/api'], ['GET', '/v1/openapi.json'],
        ];
        for (const host of hosts) {
            for (const [method, p, body] of paths) {
                const res = await raw(s.url, method, p, { host, accept: p.endsWith('/events') ? 'text/event-stream' : 'application/json' }, body, method !== 'OPTIONS');
                refused(res, 421, `${method} ${p} Host ${host}`);
            }
        }
        expect(await withoutHost(s.url, '/v1/handshake'), 'HTTP/1.0 without Host').to.equal(421);
        expect(await withoutHost(s.url, '/v1/handshake', '1.1'), 'HTTP/1.1 without Host: Node refuses it itself').to.equal(400);
        expect(await lifecycle()).to.equal(1);
        expect((await api(s.url, 'GET', `${AUTH}/${repo}/tasks`)).json.count).to.equal(0);
        expect(await repoFiles(path.join(s.dataDir, 'repositories', String(repo)))).to.deep.equal(before);
        // Refused before any route matched: the log line names no route or operation.
        const refusals = logged.filter((l) => l.status === 421);
        expect(refusals.length).to.be.greaterThan(0);
        for (const l of refusals)
            expect([l.route, l.operation]).to.deep.equal([null, null]);
    });
    it('judges an absolute-form request target by the host it names (the Host header is then ignored)', async () => {
        const before = await repoFiles(path.join(s.dataDir, 'repositories', String(repo)));
        for (const target of [`http://rebind.example:${port}`, 'http://rebind.example', `http://127.0.0.1:${port + 1}`, `https://127.0.0.1:${port}`, `ftp://127.0.0.1:${port}`]) {
            for (const [method, p] of [['GET', '/v1/handshake'], ['POST', `${AUTH}/${repo}/retirement`]]) {
                const res = await raw(s.url, method, `${target}${p}`, { host: own() });
                refused(res, 421, `${method} ${target}${p}`);
            }
        }
        expect(await lifecycle()).to.equal(1);
        expect(await repoFiles(path.join(s.dataDir, 'repositories', String(repo)))).to.deep.equal(before);
        // A target naming this listener is served (as a proxy-style client may send it), whatever Host says.
        for (const host of [own(), 'rebind.example']) {
            expect((await raw(s.url, 'GET', `http://127.0.0.1:${port}/v1/handshake`, { host })).status, host).to.equal(200);
            expect((await raw(s.url, 'GET', `HTTP://LOCALHOST:${port}/v1/handshake`, { host })).status, host).to.equal(200);
        }
    });
    it('answers the bound address, localhost, 127.0.0.1 and [::1] at its port', async () => {
        for (const host of [own(), `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`, `127.1:${port}`]) {
            const res = await raw(s.url, 'GET', '/v1/handshake', { host });
            expect(res.status, host).to.equal(200);
        }
    });
    it('refuses a state-changing request from a page of another origin with 403, changing nothing', async () => {
        const before = await repoFiles(path.join(s.dataDir, 'repositories', String(repo)));
        const foreign = [
            { origin: 'http://evil.example' },
            { origin: 'null' },
            { origin: `http://127.0.0.1:${port + 1}` }, // another port on the same host (same-site)
            { origin: `https://127.0.0.1:${port}` },
            { origin: `http://localhost:${port}` }, // not the authority this request names (Host 127.0.0.1)
            { origin: 'not an origin' },
            { 'sec-fetch-site': 'cross-site' },
            { 'sec-fetch-site': 'same-site' },
            { origin: `http://${own()}`, 'sec-fetch-site': 'cross-site' },
        ];
        for (const headers of foreign) {
            const what = JSON.stringify(headers);
            refused(await raw(s.url, 'POST', `${AUTH}/${repo}/retirement`, { host: own(), ...headers }), 403, `retirement ${what}`);
            refused(await raw(s.url, 'POST', `${AUTH}/${repo}/retirement/abort`, { host: own(), ...headers }), 403, `retirement abort ${what}`);
            refused(await raw(s.url, 'POST', `${AUTH}/${repo}/tasks`, { host: own(), ...headers }, JSON.stringify({ title: 'x', intent: 'y' })), 403, `task ${what}`);
            refused(await raw(s.url, 'PUT', `${AUTH}/${repo}/lines/main`, { host: own(), ...headers }, JSON.stringify({})), 403, `line ${what}`);
            refused(await raw(s.url, 'POST', AUTH, { host: own(), ...headers }, JSON.stringify({ repository_name: 'x', namespace: '', policy_flags: 0 })), 403, `register ${what}`);
        }
        expect(await lifecycle()).to.equal(1);
        expect((await api(s.url, 'GET', `${AUTH}/${repo}/tasks`)).json.count).to.equal(0);
        expect((await api(s.url, 'GET', AUTH)).json.count).to.equal(1);
        expect(await repoFiles(path.join(s.dataDir, 'repositories', String(repo)))).to.deep.equal(before);
    });
    it('accepts writes from its own origin or from no browser at all, and reads from any page', async () => {
        const task = (headers) => raw(s.url, 'POST', `${AUTH}/${repo}/tasks`, headers, JSON.stringify({ title: 'mine', intent: 'ok' }));
        expect((await task({ host: own() })).status, 'no Origin (CLI, curl)').to.equal(200);
        expect((await task({ host: own(), origin: `http://${own()}`, 'sec-fetch-site': 'same-origin' })).status, 'own origin').to.equal(200);
        expect((await task({ host: `localhost:${port}`, origin: `http://localhost:${port}`, 'sec-fetch-site': 'same-origin' })).status, 'own origin by name').to.equal(200);
        expect((await task({ host: own(), 'sec-fetch-site': 'none' })).status, 'user-initiated').to.equal(200);
        const foreignReads = [{ origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }];
        for (const headers of foreignReads) {
            const read = await raw(s.url, 'GET', `${AUTH}/${repo}/tasks`, { host: own(), ...headers });
            expect(read.status, JSON.stringify(headers)).to.equal(200);
            expect(read.headers['access-control-allow-origin'], 'no CORS: another origin cannot read the answer').to.equal(undefined);
        }
        const options = await raw(s.url, 'OPTIONS', `${AUTH}/${repo}/tasks`, { host: own(), origin: 'http://evil.example' }, undefined, false);
        expect(options.status).to.equal(204);
    });
    it('opens no repository for a refused request', async () => {
        const dataDir = path.join(tempDir(), 'data');
        const first = await startTestServer(dataDir);
        await register(first.url, 'zero');
        await register(first.url, 'one');
        await first.stop();
        // The background pass opens repositories in index order: held at 0, it never reaches 1,
        // so only a request can open repository 1.
        const original = Authority.open;
        const opens = [];
        let release;
        const held = new Promise((resolve) => { release = resolve; });
        Authority.open = async (root, index, ...rest) => {
            opens.push(index);
            if (index === 0)
                await held;
            return original.call(Authority, root, index, ...rest);
        };
        try {
            const again = await startTestServer(dataDir);
            try {
                const p = new URL(again.url).port;
                for (let waited = 0; !opens.includes(0) && waited < 20_000; waited += 25)
                    await sleep(25);
                expect(opens).to.deep.equal([0]);
                refused(await raw(again.url, 'GET', `${AUTH}/1/tasks`, { host: `rebind.example:${p}` }), 421, 'read under a foreign Host');
                refused(await raw(again.url, 'POST', `${AUTH}/1/retirement`, { host: `127.0.0.1:${p}`, origin: 'http://evil.example' }), 403, 'cross-origin write');
                expect(opens, 'refusals open nothing').to.deep.equal([0]);
                expect((await raw(again.url, 'GET', `${AUTH}/1/tasks`, { host: `127.0.0.1:${p}` })).status).to.equal(200);
                expect(opens, 'an accepted request opens its repository').to.deep.equal([0, 1]);
            }
            finally {
                release();
                await again.stop();
            }
        }
        finally {
            Authority.open = original;
        }
    });
    it('answers the startup phase by the same Host rule', async () => {
        const starting = await startTestServer(undefined, { activationDelayMs: 60_000 });
        try {
            const p = new URL(starting.url).port;
            refused(await raw(starting.url, 'GET', '/v1/handshake', { host: `rebind.example:${p}` }), 421, 'starting, foreign Host');
            expect((await raw(starting.url, 'GET', '/v1/handshake', { host: `127.0.0.1:${p}` })).status).to.equal(503);
        }
        finally {
            await starting.stop();
        }
    });
});
describe('--allowed-host and --allowed-origin', function () {
    this.timeout(60_000);
    it('answers a configured name at any port and accepts writes from a configured origin', async () => {
        const s = await startTestServer(undefined, { allowedHosts: ['cairn.example', '10.0.0.7'], allowedOrigins: ['https://cairn.example', 'http://dev.example:3000'] });
        try {
            const port = Number(new URL(s.url).port);
            const repo = await register(s.url, 'allowed');
            for (const host of ['cairn.example', 'cairn.example:443', `CAIRN.example:${port}`, '10.0.0.7:9']) {
                expect((await raw(s.url, 'GET', '/v1/handshake', { host })).status, host).to.equal(200);
            }
            refused(await raw(s.url, 'GET', '/v1/handshake', { host: 'other.example' }), 421, 'unlisted name');
            const task = (headers) => raw(s.url, 'POST', `${AUTH}/${repo}/tasks`, headers, JSON.stringify({ title: 'a', intent: 'b' }));
            expect((await task({ host: 'cairn.example', origin: 'https://cairn.example', 'sec-fetch-site': 'same-origin' })).status, 'behind a TLS ingress').to.equal(200);
            expect((await task({ host: `127.0.0.1:${port}`, origin: 'http://dev.example:3000', 'sec-fetch-site': 'cross-site' })).status, 'a configured other site').to.equal(200);
            // The page's own origin is plain http at the authority the request names; another port is not.
            expect((await task({ host: 'cairn.example', origin: 'http://cairn.example' })).status, 'the page of the name addressed').to.equal(200);
            refused(await task({ host: 'cairn.example', origin: 'http://cairn.example:8080' }), 403, 'another port of an allowed name');
            refused(await task({ host: `127.0.0.1:${port}`, origin: 'http://dev.example:3001' }), 403, 'another port of a configured origin');
        }
        finally {
            await s.stop();
        }
    });
    it('refuses option values that are not a host name or an origin (exit 2)', async () => {
        const data = path.join(tempDir(), 'data');
        for (const args of [['--allowed-host', 'cairn.example:443'], ['--allowed-host', 'a/b'], ['--allowed-origin', 'cairn.example'], ['--allowed-origin', 'https://cairn.example/path'], ['--allowed-origin', 'ftp://cairn.example'], ['--shutdown-seconds', '0']]) {
            const r = spawnSync(process.execPath, [CLI, 'serve', '--bind', '127.0.0.1:0', '--data', data, ...args], { encoding: 'utf8', timeout: 20_000 });
            expect(r.status, args.join(' ')).to.equal(2);
            expect(r.stderr, args.join(' ')).to.match(/--allowed-host|--allowed-origin|--shutdown-seconds/);
        }
        expect(existsSync(data)).to.equal(false);
    });
});
describe('a wildcard bind', function () {
    this.timeout(60_000);
    let server;
    before(async () => {
        // No front door here: the wildcard listener needs --insecure-open (docs/operations.md "Who may reach the listener").
        server = await spawnServer(path.join(tempDir(), 'data'), ['--insecure-open'], true, {}, '0.0.0.0');
    });
    after(async () => {
        server.proc.kill('SIGTERM');
        await server.exited;
    });
    it('answers any IP address and localhost at its port, no other name, and writes only from the page it serves', async () => {
        const port = Number(new URL(server.url).port);
        for (const host of [`127.0.0.1:${port}`, `10.1.2.3:${port}`, `[fd00::1]:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
            expect((await raw(server.url, 'GET', '/v1/handshake', { host })).status, host).to.equal(200);
        }
        for (const host of [`evil.example:${port}`, `10.1.2.3:${port + 1}`, '10.1.2.3']) {
            refused(await raw(server.url, 'GET', '/v1/handshake', { host }), 421, host);
        }
        const body = JSON.stringify({ repository_name: 'w', namespace: '', policy_flags: 0 });
        // A page at another address on the same port is another origin.
        refused(await raw(server.url, 'POST', AUTH, { host: `10.1.2.3:${port}`, origin: `http://10.9.9.9:${port}` }, body), 403, 'another address');
        expect((await raw(server.url, 'POST', AUTH, { host: `10.1.2.3:${port}`, origin: `http://10.1.2.3:${port}` }, body)).status).to.equal(201);
    });
});
describe('clients that are not browsers keep working', function () {
    this.timeout(120_000);
    let server;
    let repo;
    before(async () => {
        server = await spawnServer(path.join(tempDir(), 'data'));
        repo = await register(server.url, 'clients');
    });
    after(async () => {
        server.proc.kill('SIGTERM');
        await server.exited;
    });
    it('the CLI writes and reads, by address and by localhost', async () => {
        const created = await cli(['task', 'create', '--server', server.url, '--repo', String(repo), '--title', 'from the CLI', '--intent', 'works', '--json']);
        expect(created.code, created.stderr).to.equal(0);
        const byName = server.url.replace('127.0.0.1', 'localhost');
        const listed = await cli(['task', 'list', '--server', byName, '--repo', String(repo), '--json']);
        expect(listed.code, listed.stderr).to.equal(0);
        expect(listed.stdout).to.include('from the CLI');
    });
    it('the runner claims over HTTP (a POST) and is answered', async () => {
        const dir = path.join(tempDir(), 'work');
        const r = await new Promise((resolve) => {
            const p = spawn(process.execPath, [CLI, 'runner', '--server', server.url, '--repo', String(repo), '--once', '--workdir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
            let out = '';
            p.stdout.on('data', (d) => { out += d; });
            p.stderr.on('data', (d) => { out += d; });
            p.on('exit', (code) => resolve({ code, out }));
        });
        // --once with nothing to claim: exit 0; a refused claim would be an error (exit 1).
        expect(r.code, r.out).to.equal(0);
        expect(r.out).to.match(/no job available/);
        // The server's log lines are written in batches: wait (bounded) for the claim's line.
        const claimed = /worker-jobs:claim","operation":"[^"]*","status":200/;
        for (let waited = 0; !claimed.test(server.output()) && waited < 10_000; waited += 50)
            await sleep(50);
        expect(server.output()).to.match(claimed);
    });
    it('curl writes, and a forged Origin through curl is refused', function () {
        if (spawnSync('curl', ['--version']).status !== 0) {
            console.log('      skipped: no curl binary');
            this.skip();
        }
        const post = (extra) => spawnSync('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-X', 'POST', `${server.url}${AUTH}/${repo}/tasks`, '-H', 'content-type: application/json', '-d', '{"title":"curl","intent":"works"}', ...extra], { encoding: 'utf8' }).stdout;
        expect(post([])).to.equal('200');
        expect(post(['-H', 'Origin: http://evil.example'])).to.equal('403');
        expect(spawnSync('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-H', 'Host: rebind.example', `${server.url}/v1/handshake`], { encoding: 'utf8' }).stdout).to.equal('421');
    });
});
// ---------------------------------------------------------------- in a browser
describe('cross-site requests in Chromium', function () {
    this.timeout(120_000);
    let browser;
    let s;
    let attacker;
    let attackerPort;
    let repo;
    const logged = [];
    before(async function () {
        if (!CHROMIUM) {
            console.log('      SKIPPED: the browser tests need a chromium binary (apt-get install chromium; .ci/run installs it)');
            this.skip();
        }
        s = await startTestServer(undefined, { requestLog: (entry) => logged.push(entry) });
        repo = await register(s.url, 'target');
        // A page of another origin that sends what any web page may send without asking: a no-cors
        // POST (no preflight) to the body-less route that starts a retirement.
        attacker = http.createServer((_req, res) => {
            res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
            res.end(`<!doctype html><title>waiting</title><script>
        fetch(${JSON.stringify(`${s.url}${AUTH}/${repo}/retirement`)}, { method: 'POST', mode: 'no-cors' })
          .then(() => { document.title = 'sent'; }, (e) => { document.title = 'failed: ' + e; });
      </script>`);
        });
        await new Promise((resolve) => attacker.listen(0, '127.0.0.1', resolve));
        attackerPort = attacker.address().port;
        const { chromium } = await import('playwright-core');
        browser = await chromium.launch({
            executablePath: CHROMIUM,
            // attacker.test and rebind.test resolve to loopback, as a rebound name would.
            args: [...(process.getuid?.() === 0 ? ['--no-sandbox'] : []), '--host-resolver-rules=MAP attacker.test 127.0.0.1, MAP rebind.test 127.0.0.1', '--disable-gpu', '--no-first-run'],
        });
    });
    after(async () => {
        await browser?.close();
        await new Promise((resolve) => (attacker ? attacker.close(() => resolve()) : resolve()));
        await s?.stop();
    });
    /** Wait (bounded) until the server logged `n` answers to POST …/retirement, and return their statuses. */
    async function retirementAnswers(n) {
        const statuses = () => logged.filter((l) => l.method === 'POST' && (l.route === null || l.route.endsWith('/retirement'))).map((l) => l.status);
        for (let waited = 0; statuses().length < n && waited < 20_000; waited += 50)
            await sleep(50);
        return statuses();
    }
    it('a page of another origin cannot retire a repository with a no-cors POST (same-site and cross-site)', async () => {
        const context = await browser.newContext();
        try {
            let expected = 0;
            for (const origin of [`http://127.0.0.1:${attackerPort}`, `http://attacker.test:${attackerPort}`]) {
                const page = await context.newPage();
                await page.goto(`${origin}/`);
                await page.waitForFunction(() => document.title !== 'waiting', undefined, { timeout: 20_000 });
                expect(await page.title(), origin).to.equal('sent');
                expected++;
                // The request reached the server and was refused there.
                expect(await retirementAnswers(expected), origin).to.deep.equal(Array(expected).fill(403));
                await page.close();
            }
            const record = await api(s.url, 'GET', `${AUTH}/${repo}`);
            expect(record.json.repository.lifecycle_kind, 'the repository is not retiring').to.equal(1);
        }
        finally {
            await context.close();
        }
    });
    it('a rebound name gets 421 for the page and for its requests', async () => {
        const context = await browser.newContext();
        try {
            const page = await context.newPage();
            const port = new URL(s.url).port;
            const res = await page.goto(`http://rebind.test:${port}/ui/`);
            expect(res?.status()).to.equal(421);
            // Script of that origin (what a rebinding page runs) gets 421 for a read and a write.
            const statuses = await page.evaluate(async (p) => {
                const read = await fetch('/v1/native/repository-authorities');
                const write = await fetch(`/v1/native/repository-authorities/${p}/retirement`, { method: 'POST' });
                return [read.status, write.status];
            }, repo);
            expect(statuses).to.deep.equal([421, 421]);
            expect((await api(s.url, 'GET', `${AUTH}/${repo}`)).json.repository.lifecycle_kind).to.equal(1);
        }
        finally {
            await context.close();
        }
    });
    it('the UI served by the server still writes through the interface, by address and by localhost', async () => {
        const context = await browser.newContext();
        try {
            const page = await context.newPage();
            for (const base of [s.url, s.url.replace('127.0.0.1', 'localhost')]) {
                const res = await page.goto(`${base}/ui/`);
                expect(res?.status(), base).to.equal(200);
                const created = await page.evaluate(async (p) => {
                    const r = await fetch(`/v1/native/repository-authorities/${p}/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: 'from the UI origin', intent: 'same origin' }) });
                    return r.status;
                }, repo);
                expect(created, base).to.equal(200);
            }
        }
        finally {
            await context.close();
        }
    });
});
//# sourceMappingURL=cross-site.test.js.map