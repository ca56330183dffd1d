// git's smart HTTP over a line (lib/http/git-http-backend.ts, docs/git.md "Clone and fetch"):
// the real git client clones, fetches and lists over protocol v2 and v0 from bare repositories
// these tests make and inject as the served repositories; pushes are refused with the reason on
// git's own output; hostile paths serve nothing; a client that goes away leaves no git process.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { randomBytes, createHash } from 'node:crypto';
import { promises as fsp, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { gitClientOfAddress } from '../lib/http/git-places.js';
import { api, register, startTestServer, tempDir, until } from './helpers.js';
// Async on purpose: the server answering the client runs in this process.
function git(args, cwd, env = {}) {
    return new Promise((resolve, reject) => {
        const child = spawn('git', args, {
            cwd,
            env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', LANG: 'C', ...env },
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => { stdout += d; });
        child.stderr.on('data', (d) => { stderr += d; });
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
}
async function ok(args, cwd, env = {}) {
    const r = await git(args, cwd, env);
    if (r.code !== 0)
        throw new Error(`git ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
    return r.stdout.trim();
}
const ID = ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main'];
async function commit(work, file, content, message) {
    await fsp.mkdir(path.dirname(path.join(work, file)), { recursive: true });
    await fsp.writeFile(path.join(work, file), content);
    await ok([...ID, 'add', '-A'], work);
    await ok([...ID, 'commit', '-q', '-m', message], work);
    return ok(['rev-parse', 'HEAD'], work);
}
/** Processes of this user whose environment names `root` as GIT_PROJECT_ROOT (git http-backend and its children). */
function gitProcessesUnder(root) {
    const found = [];
    for (const entry of readdirSync('/proc')) {
        if (!/^\d+$/.test(entry))
            continue;
        try {
            const env = readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0');
            if (env.includes(`GIT_PROJECT_ROOT=${root}`))
                found.push(Number(entry));
        }
        catch { /* gone, or not ours */ }
    }
    return found;
}
function pkt(s) {
    return (Buffer.byteLength(s) + 4).toString(16).padStart(4, '0') + s;
}
/** A raw HTTP request with the path sent exactly as given (fetch would normalize `..`). */
function rawRequest(url, method, rawPath, headers = {}, body) {
    const u = new URL(url);
    return new Promise((resolve, reject) => {
        const req = http.request({ host: u.hostname, port: u.port, method, path: rawPath, headers }, (res) => {
            const chunks = [];
            res.on('data', (c) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
            res.on('error', reject);
        });
        req.on('error', reject);
        req.end(body);
    });
}
describe('git clone and fetch over smart HTTP', function () {
    this.timeout(120_000);
    let server;
    let repo;
    let root;
    let work;
    let bare;
    let bigRoot;
    let url;
    let binary;
    const served = new Map();
    const source = async (_index, line) => served.get(line) ?? null;
    before(async () => {
        root = tempDir('cairn-git-serve-');
        work = path.join(root, 'work');
        await fsp.mkdir(work);
        await ok([...ID, 'init', '-q', '-b', 'main'], work);
        await commit(work, 'README.md', 'hello\n', 'first');
        await commit(work, 'dir with spaces/a file name.txt', 'spaced\n', 'a path with spaces');
        binary = randomBytes(1024 * 1024);
        await commit(work, 'blob.bin', binary, 'a 1 MiB binary');
        await ok([...ID, 'checkout', '-q', '-b', 'feature/x'], work);
        await commit(work, 'feature.txt', 'feature\n', 'on a feature line');
        await ok(['checkout', '-q', 'main'], work);
        const shadows = path.join(root, 'shadows');
        await fsp.mkdir(shadows);
        // Beside the served repository: what must never be served.
        await fsp.writeFile(path.join(shadows, 'secret.txt'), 'not for clients\n');
        bare = path.join(shadows, 'authority.git');
        await ok(['init', '-q', '--bare', '-b', 'main', bare], root);
        await ok(['push', '-q', bare, 'main', 'feature/x'], work);
        served.set('main', { repoDir: bare });
        served.set('feature/x', { repoDir: bare, ref: 'refs/heads/feature/x' });
        // A repository whose pack takes a while to stream (for the client that goes away).
        bigRoot = path.join(root, 'big-shadows');
        const bigWork = path.join(root, 'big-work');
        await fsp.mkdir(bigRoot);
        await fsp.mkdir(bigWork);
        await ok([...ID, 'init', '-q', '-b', 'main'], bigWork);
        await commit(bigWork, 'big.bin', randomBytes(24 * 1024 * 1024), 'big');
        await ok(['init', '-q', '--bare', '-b', 'main', path.join(bigRoot, 'big.git')], root);
        await ok(['push', '-q', path.join(bigRoot, 'big.git'), 'main'], bigWork);
        served.set('big', { repoDir: path.join(bigRoot, 'big.git') });
        server = await startTestServer(undefined, { gitShadows: source });
        repo = await register(server.url, 'git-serve');
        url = `${server.url}/v1/native/repository-authorities/${repo}/git/main.git`;
    });
    after(() => server?.stop());
    for (const version of ['2', '0']) {
        it(`clones a line with protocol v${version}: its commits, a path with spaces and a 1 MiB binary, HEAD on main`, async () => {
            const dest = path.join(root, `clone-v${version}`);
            const r = await git(['-c', `protocol.version=${version}`, 'clone', url, dest], root, { GIT_TRACE_PACKET: '1' });
            expect(r.code, r.stderr).to.equal(0);
            // The server spoke the version asked for.
            if (version === '2')
                expect(r.stderr).to.match(/git< version 2/);
            else
                expect(r.stderr).to.not.match(/git< version 2/);
            expect(await ok(['rev-parse', 'HEAD'], dest)).to.equal(await ok(['rev-parse', 'main'], work));
            expect(await ok(['rev-parse', '--abbrev-ref', 'HEAD'], dest)).to.equal('main');
            expect(await fsp.readFile(path.join(dest, 'dir with spaces/a file name.txt'), 'utf8')).to.equal('spaced\n');
            const got = await fsp.readFile(path.join(dest, 'blob.bin'));
            expect(createHash('sha256').update(got).digest('hex')).to.equal(createHash('sha256').update(binary).digest('hex'));
            expect(await ok(['fsck', '--no-progress'], dest)).to.equal('');
        });
    }
    it('lists the refs with ls-remote (v2 and v0)', async () => {
        for (const version of ['2', '0']) {
            const out = await ok(['-c', `protocol.version=${version}`, 'ls-remote', url], root);
            const main = await ok(['rev-parse', 'main'], work);
            expect(out).to.include(`${main}\tHEAD`);
            expect(out).to.include(`${main}\trefs/heads/main`);
        }
    });
    it('serves one line of a repository holding several: a line name with a slash, sent as %2F, sees only its ref', async () => {
        const featureUrl = `${server.url}/v1/native/repository-authorities/${repo}/git/feature%2Fx.git`;
        const out = await ok(['ls-remote', featureUrl], root);
        expect(out).to.include(`${await ok(['rev-parse', 'feature/x'], work)}\trefs/heads/feature/x`);
        expect(out).to.not.include('refs/heads/main');
        // HEAD names main, which this URL does not serve: it is not advertised either.
        expect(out).to.not.match(/\tHEAD$/m);
        for (const version of ['2', '0']) {
            const dest = path.join(root, `clone-feature-v${version}`);
            await ok(['-c', `protocol.version=${version}`, 'clone', '-q', '--branch', 'feature/x', featureUrl, dest], root);
            expect(await fsp.readFile(path.join(dest, 'feature.txt'), 'utf8')).to.equal('feature\n');
        }
    });
    for (const version of ['2', '0']) {
        it(`fetches a new commit after the line moved (v${version}), negotiating from local history the server does not have`, async () => {
            const dest = path.join(root, `fetch-v${version}`);
            await ok(['-c', `protocol.version=${version}`, 'clone', '-q', url, dest], root);
            // Local commits the server never saw: the fetch sends them as haves.
            for (let i = 0; i < 40; i++)
                await commit(dest, `local-${i}.txt`, `${i}\n`, `local ${i}`);
            const moved = await commit(work, `next-v${version}.txt`, 'next\n', `next for v${version}`);
            await ok(['push', '-q', bare, 'main'], work);
            await ok(['-c', `protocol.version=${version}`, 'fetch', '-q', 'origin'], dest);
            expect(await ok(['rev-parse', 'origin/main'], dest)).to.equal(moved);
        });
    }
    it('takes a gzip-encoded upload-pack request (as git sends a large negotiation)', async () => {
        const body = gzipSync(Buffer.from(`${pkt('command=ls-refs\n')}${pkt('object-format=sha1\n')}0001${pkt('symrefs\n')}0000`));
        const res = await fetch(`${url}/git-upload-pack`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-git-upload-pack-request', 'content-encoding': 'gzip', 'git-protocol': 'version=2' },
            body,
        });
        expect(res.status).to.equal(200);
        expect(res.headers.get('content-type')).to.equal('application/x-git-upload-pack-result');
        const text = await res.text();
        expect(text).to.include(`${await ok(['rev-parse', 'main'], work)} refs/heads/main`);
        expect(text).to.include('HEAD symref-target:refs/heads/main');
    });
    async function repositoryState() {
        const refs = await ok(['for-each-ref', '--format=%(objectname) %(refname)'], bare);
        const objects = await ok(['count-objects', '-v'], bare);
        return `${refs}\n${objects}`;
    }
    for (const [target, shown, message] of [
        ['refs/heads/main', 'main', 'pushes to refs/heads/* are refused: lines move only through lands; push for review to refs/for/main'],
        // The served repository here is injected: the repository has no line main (test/git-push.test.ts pushes for review).
        ['refs/for/main', 'refs/for/main', 'line main does not exist'],
    ]) {
        it(`refuses a push to ${target} with the reason on git's output, and changes nothing`, async () => {
            const dest = path.join(root, `push-${target.replace(/\//g, '-')}`);
            await ok(['clone', '-q', url, dest], root);
            await commit(dest, 'pushed.txt', randomBytes(3 * 1024 * 1024).toString('hex'), 'a push');
            const before = await repositoryState();
            const r = await git([...ID, 'push', url, `HEAD:${target}`], dest);
            expect(r.code).to.not.equal(0);
            expect(r.stderr).to.include(`remote: ${message}`);
            expect(r.stderr).to.include(`! [remote rejected] HEAD -> ${shown} (${message})`);
            expect(await repositoryState()).to.equal(before);
        });
    }
    it('refuses every command of a push, deletes and tags included, each with its reason', async () => {
        const dest = path.join(root, 'push-several');
        await ok(['clone', '-q', url, dest], root);
        const before = await repositoryState();
        const r = await git([...ID, 'push', url, ':refs/heads/main', 'HEAD:refs/tags/v1', 'HEAD:refs/for/main%topic=x'], dest);
        expect(r.code).to.not.equal(0);
        expect(r.stderr).to.include('! [remote rejected] main (pushes to refs/heads/* are refused: lines move only through lands; push for review to refs/for/main)');
        expect(r.stderr).to.include('! [remote rejected] HEAD -> v1 (this repository is read-only: lines move only through lands)');
        expect(r.stderr).to.include('! [remote rejected] HEAD -> refs/for/main%topic=x (unknown push option %topic=x: refs/for/main takes %task=task-N and %change=change-N)');
        expect(await repositoryState()).to.equal(before);
    });
    it('answers a push body that is not a push with 400, and the wrong media type with 415', async () => {
        const post = (body, headers = {}) => api(server.url, 'POST', `/v1/native/repository-authorities/${repo}/git/main.git/git-receive-pack`, {
            body, headers: { 'content-type': 'application/x-git-receive-pack-request', ...headers },
        });
        for (const body of [Buffer.from('not pkt-lines'), Buffer.from(pkt('0000 0000 refs/heads/main\n')), Buffer.from(pkt(`${'0'.repeat(40)} ${'1'.repeat(40)} refs/heads/main\n`))]) {
            const res = await post(body);
            expect(res.status, body.toString()).to.equal(400);
            expect(res.json.error).to.match(/malformed push request/);
        }
        const gz = await post(Buffer.from('not gzip'), { 'content-encoding': 'gzip' });
        expect(gz.status).to.equal(400);
        const br = await post(Buffer.from('0000'), { 'content-encoding': 'br' });
        expect(br.status).to.equal(400);
        // git's probe before a large push: no commands, nothing to report.
        const probe = await post(Buffer.from('0000'));
        expect(probe.status).to.equal(200);
        expect(probe.headers.get('content-type')).to.equal('application/x-git-receive-pack-result');
        const wrong = await api(server.url, 'POST', `/v1/native/repository-authorities/${repo}/git/main.git/git-upload-pack`, { body: '0000', headers: { 'content-type': 'application/json' } });
        expect(wrong.status).to.equal(415);
    });
    it('serves nothing outside the repository: dumb-protocol files, `..`, encoded dots and slashes, absolute names', async () => {
        const base = `/v1/native/repository-authorities/${repo}/git`;
        const cases = [
            [`${base}/main.git/info/refs`, 400], // the dumb protocol: no service
            [`${base}/main.git/info/refs?service=git-upload-archive`, 400],
            [`${base}/main.git/HEAD`, 404],
            [`${base}/main.git/objects/info/packs`, 404],
            [`${base}/main.git/config`, 404],
            [`${base}/main.git/../secret.txt`, 404],
            [`${base}/main.git/../../secret.txt`, 404],
            [`${base}/../git/main.git/info/refs/../../../../secret.txt`, 404],
            [`${base}/%2e%2e.git/info/refs?service=git-upload-pack`, 404],
            [`${base}/..%2Fsecret.txt%00.git/info/refs?service=git-upload-pack`, 400], // a control character: not a line name,
            [`${base}/%2Fetc%2Fpasswd.git/info/refs?service=git-upload-pack`, 404],
            [`${base}/main.git%2F..%2F..%2Fsecret.txt/info/refs?service=git-upload-pack`, 404],
            [`${base}/main.git/info%2F..%2F..%2Fsecret.txt`, 404],
        ];
        for (const [p, status] of cases) {
            const res = await rawRequest(server.url, 'GET', p);
            expect(res.status, p).to.equal(status);
            expect(res.body.toString('latin1'), p).to.not.include('not for clients');
            expect(res.body.toString('latin1'), p).to.not.include('[core]');
            expect(res.headers['content-type'], p).to.match(/^application\/json/);
        }
        const dumb = await api(server.url, 'GET', `${base}/main.git/info/refs`);
        expect(dumb.json.error).to.match(/smart HTTP/);
        const missing = await api(server.url, 'GET', `${base}/nothing.git/info/refs?service=git-upload-pack`);
        expect(missing.status).to.equal(404);
        expect(missing.json.error).to.equal('line "nothing" is not served over git');
    });
    it('stops git when the client goes away mid-clone: no git process is left', async () => {
        const head = await ok(['rev-parse', 'main'], path.join(bigRoot, 'big.git'));
        const body = Buffer.from(`${pkt(`want ${head} side-band-64k ofs-delta\n`)}0000${pkt('done\n')}`);
        const u = new URL(server.url);
        const req = http.request({
            host: u.hostname, port: u.port, method: 'POST',
            path: `/v1/native/repository-authorities/${repo}/git/big.git/git-upload-pack`,
            headers: { 'content-type': 'application/x-git-upload-pack-request', 'content-length': String(body.length) },
        });
        const response = new Promise((resolve, reject) => { req.on('response', resolve); req.on('error', reject); });
        req.end(body);
        const res = await response;
        expect(res.statusCode).to.equal(200);
        // The pack is being made and sent (nothing is read here, so it waits on a full pipe).
        await until('git serving the clone', () => gitProcessesUnder(bigRoot).length > 0);
        res.pause();
        req.destroy();
        await until('no git process left', () => gitProcessesUnder(bigRoot).length === 0, 20_000);
    });
    it('runs a bounded number of git processes at once: past the queue\'s wait 503 with Retry-After, and a finished one frees its place', async () => {
        const one = await startTestServer(undefined, { gitShadows: source, git: { places: 1, queueMs: 300 } });
        const index = await register(one.url, 'one-place');
        const u = new URL(one.url);
        const req = http.request({
            host: u.hostname, port: u.port, method: 'POST',
            path: `/v1/native/repository-authorities/${index}/git/big.git/git-upload-pack`,
            headers: { 'content-type': 'application/x-git-upload-pack-request', 'content-length': '100000' },
        });
        req.on('error', () => { });
        try {
            req.write(pkt('want '));
            await until('git serving the first request', () => one.gitPlaces.snapshot().running === 1 && gitProcessesUnder(bigRoot).length > 0);
            const busy = await api(one.url, 'GET', `/v1/native/repository-authorities/${index}/git/main.git/info/refs?service=git-upload-pack`);
            expect(busy.status).to.equal(503);
            expect(busy.headers.get('retry-after')).to.equal('1');
            expect(busy.json.error).to.match(/git requests are being served/);
            req.destroy();
            await until('the place freed', () => one.gitPlaces.snapshot().running === 0, 20_000);
            const res = await fetch(`${one.url}/v1/native/repository-authorities/${index}/git/main.git/info/refs?service=git-upload-pack`);
            expect(res.status).to.equal(200);
            await res.arrayBuffer();
        }
        finally {
            req.destroy();
            await one.stop();
        }
    });
    it('cuts off a client that stops reading its answer: git stops, its place is freed and the next request gets through', async () => {
        const one = await startTestServer(undefined, { gitShadows: source, git: { places: 1, queueMs: 60_000, bodyTimeoutMs: 1000 } });
        const index = await register(one.url, 'stalled-reader');
        const head = await ok(['rev-parse', 'main'], path.join(bigRoot, 'big.git'));
        const body = Buffer.from(`${pkt(`want ${head} side-band-64k ofs-delta\n`)}0000${pkt('done\n')}`);
        const u = new URL(one.url);
        // A raw socket: it asks for the 24 MiB clone, then reads nothing more, so git's answer fills
        // the socket buffers and waits.
        const socket = net.connect({ host: u.hostname, port: Number(u.port) });
        socket.on('error', () => { });
        const closed = new Promise((resolve) => socket.once('close', () => resolve()));
        try {
            await new Promise((resolve) => socket.once('connect', () => resolve()));
            socket.write(`POST /v1/native/repository-authorities/${index}/git/big.git/git-upload-pack HTTP/1.1\r\nHost: ${u.host}\r\n`
                + `Content-Type: application/x-git-upload-pack-request\r\nContent-Length: ${body.length}\r\n\r\n`);
            socket.write(body);
            await new Promise((resolve) => socket.once('data', () => resolve()));
            socket.pause();
            await until('git serving the stalled clone', () => one.gitPlaces.snapshot().running === 1);
            await until('the place freed', () => one.gitPlaces.snapshot().running === 0, 30_000);
            expect(gitProcessesUnder(bigRoot)).to.deep.equal([]);
            const res = await fetch(`${one.url}/v1/native/repository-authorities/${index}/git/main.git/info/refs?service=git-upload-pack`);
            expect(res.status).to.equal(200);
            await res.arrayBuffer();
            socket.resume(); // what was buffered drains, then the cut connection closes
            await closed;
        }
        finally {
            socket.destroy();
            await one.stop();
        }
    });
    it('stops git when the client goes away while sending its request', async () => {
        const u = new URL(server.url);
        const req = http.request({
            host: u.hostname, port: u.port, method: 'POST',
            path: `/v1/native/repository-authorities/${repo}/git/big.git/git-upload-pack`,
            headers: { 'content-type': 'application/x-git-upload-pack-request', 'content-length': '100000' },
        });
        req.on('error', () => { });
        req.write(pkt('want '));
        await until('git waiting for the request', () => gitProcessesUnder(bigRoot).length > 0);
        req.destroy();
        await until('no git process left', () => gitProcessesUnder(bigRoot).length === 0, 20_000);
    });
    it('answers 500 without git\'s words when git fails: a served directory that is not a repository, a git that cannot run', async () => {
        const hidden = path.join(root, 'shadows', 'missing-repository.git');
        served.set('broken', { repoDir: hidden });
        const res = await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}/git/broken.git/info/refs?service=git-upload-pack`);
        expect(res.status).to.equal(500);
        expect(res.text).to.not.include('missing-repository');
        const saved = process.env.CAIRN_GIT;
        process.env.CAIRN_GIT = path.join(root, 'no-such-git');
        try {
            const gone = await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}/git/main.git/info/refs?service=git-upload-pack`);
            expect(gone.status).to.equal(500);
            expect(gone.text).to.not.include('no-such-git');
        }
        finally {
            if (saved === undefined)
                delete process.env.CAIRN_GIT;
            else
                process.env.CAIRN_GIT = saved;
        }
    });
    it('cuts a chunked negotiation that grows past the 2 MiB limit, and leaves no git process', async () => {
        const head = await ok(['rev-parse', 'main'], bare);
        const u = new URL(server.url);
        const shadows = path.join(root, 'shadows');
        const outcome = await new Promise((resolve) => {
            const req = http.request({
                host: u.hostname, port: u.port, method: 'POST',
                path: `/v1/native/repository-authorities/${repo}/git/main.git/git-upload-pack`,
                headers: { 'content-type': 'application/x-git-upload-pack-request' },
            }, (res) => {
                res.on('data', () => { });
                res.on('end', () => resolve(`complete ${res.statusCode}`));
                res.on('error', () => resolve('cut'));
                res.on('aborted', () => resolve('cut'));
            });
            req.on('error', () => resolve('cut'));
            // Well-formed haves: git would read them all; the limit stops them.
            const haves = Buffer.from(pkt(`have ${'1'.repeat(40)}\n`).repeat(1000));
            let sent = pkt(`want ${head} ofs-delta\n`).length;
            req.write(`${pkt(`want ${head} ofs-delta\n`)}0000`);
            const more = () => {
                while (sent < 3 * 1024 * 1024) {
                    sent += haves.length;
                    if (!req.write(haves)) {
                        req.once('drain', more);
                        return;
                    }
                }
                req.end(`${pkt('done\n')}`);
            };
            more();
        });
        expect(outcome).to.equal('cut');
        await until('no git process left', () => gitProcessesUnder(shadows).length === 0, 20_000);
    });
    it('applies the request guard first: a Host that does not name the server is refused with 421', async () => {
        const res = await rawRequest(server.url, 'GET', `/v1/native/repository-authorities/${repo}/git/main.git/info/refs?service=git-upload-pack`, { host: 'evil.example' });
        expect(res.status).to.equal(421);
    });
    it('answers 404 naming the line when the repository has no such line (the default source: the exporter\'s shadow)', async () => {
        const plain = await startTestServer();
        try {
            const index = await register(plain.url, 'plain');
            const res = await api(plain.url, 'GET', `/v1/native/repository-authorities/${index}/git/main.git/info/refs?service=git-upload-pack`);
            expect(res.status).to.equal(404);
            expect(res.json.error).to.equal('line main does not exist');
            const r = await git(['ls-remote', `${plain.url}/v1/native/repository-authorities/${index}/git/main.git`], root);
            expect(r.code).to.not.equal(0);
            expect(r.stderr).to.match(/not found/);
        }
        finally {
            await plain.stop();
        }
    });
});
/** The bodies of an upload-pack fetch, as git's client sends them in each protocol version. */
function fetchBody(version, lines) {
    if (version === '0') {
        const [first, ...rest] = lines.wants;
        return Buffer.from(`${pkt(`want ${first} ofs-delta side-band-64k\n`)}${rest.map((w) => pkt(`want ${w}\n`)).join('')}${(lines.args ?? []).map((a) => pkt(`${a}\n`)).join('')}0000${pkt('done\n')}`);
    }
    return Buffer.from(`${pkt('command=fetch\n')}${pkt('object-format=sha1\n')}0001${pkt('ofs-delta\n')}${lines.wants.map((w) => pkt(`want ${w}\n`)).join('')}${(lines.args ?? []).map((a) => pkt(`${a}\n`)).join('')}${pkt('done\n')}0000`);
}
describe('a line\'s URL serves only what that line reaches (docs/git.md "Clone and fetch")', function () {
    this.timeout(120_000);
    let server;
    let root;
    let lines;
    let openUrl;
    let open;
    let secret;
    let secretBlob;
    let secretTree;
    const served = new Map();
    const source = async (_index, line) => served.get(line) ?? null;
    before(async () => {
        root = tempDir('cairn-git-lines-');
        const work = path.join(root, 'work');
        await fsp.mkdir(work);
        await ok([...ID, 'init', '-q', '-b', 'open'], work);
        const base = await commit(work, 'README.md', 'hello\n', 'first');
        await ok([...ID, 'checkout', '-q', '-b', 'secret'], work);
        secret = [await commit(work, 'secret.txt', 'top secret\n', 'secret one'), await commit(work, 'secret.txt', 'more secret\n', 'secret two')];
        secretBlob = await ok(['rev-parse', 'secret:secret.txt'], work);
        secretTree = await ok(['rev-parse', 'secret^{tree}'], work);
        await ok(['checkout', '-q', 'open'], work);
        open = [base];
        for (let i = 0; i < 3; i++)
            open.push(await commit(work, `open-${i}.txt`, `${i}\n`, `open ${i}`));
        lines = path.join(root, 'shadows', 'lines.git');
        await ok(['init', '-q', '--bare', '-b', 'open', lines], root);
        await ok(['push', '-q', lines, 'open', 'secret'], work);
        // One repository holding two lines, each served under its own URL (as the exporter's shadow is).
        served.set('open', { repoDir: lines, ref: 'refs/heads/open' });
        served.set('secret', { repoDir: lines, ref: 'refs/heads/secret' });
        server = await startTestServer(undefined, { gitShadows: source });
        const repo = await register(server.url, 'git-lines');
        openUrl = `${server.url}/v1/native/repository-authorities/${repo}/git/open.git`;
    });
    after(() => server?.stop());
    async function objectsOf(dir) {
        return ok(['cat-file', '--batch-all-objects', '--batch-check=%(objectname)'], dir);
    }
    for (const version of ['2', '0']) {
        it(`refuses a commit of another line fetched by id through this line's URL (v${version}): git says why, and nothing of it arrives`, async () => {
            const dest = path.join(root, `hidden-v${version}`);
            await ok(['-c', `protocol.version=${version}`, 'clone', '-q', openUrl, dest], root);
            for (const id of [secret[1], secret[0]]) {
                const r = await git(['-c', `protocol.version=${version}`, 'fetch', 'origin', id], dest);
                expect(r.code, r.stderr).to.not.equal(0);
                // v2: the server's refusal; v0: git itself asks for no object the server did not advertise.
                expect(r.stderr).to.match(new RegExp(version === '2' ? `remote error: upload-pack: not our ref ${id}` : `(remote error: upload-pack: not our ref|does not allow request for unadvertised object) ${id}`));
            }
            const objects = await objectsOf(dest);
            for (const id of [...secret, secretBlob, secretTree])
                expect(objects).to.not.include(id);
        });
        it(`refuses a tree or blob of another line asked by id, and a deepening from a shallow commit of it (v${version}): an ERR, no pack`, async () => {
            const post = async (body) => {
                const res = await fetch(`${openUrl}/git-upload-pack`, {
                    method: 'POST',
                    headers: { 'content-type': 'application/x-git-upload-pack-request', ...(version === '2' ? { 'git-protocol': 'version=2' } : {}) },
                    body: new Uint8Array(body),
                });
                return { status: res.status, body: Buffer.from(await res.arrayBuffer()).toString('latin1') };
            };
            // A client that ignores what was advertised (git's v0 client never sends such a want).
            for (const id of [secret[1], secret[0], secretBlob, secretTree, 'f'.repeat(40)]) {
                const res = await post(fetchBody(version, { wants: [id] }));
                expect(res.status).to.equal(200);
                expect(res.body, id).to.include(`ERR upload-pack: not our ref ${id}`);
                expect(res.body, id).to.not.include('PACK');
            }
            // `shallow <commit>` with `deepen`: git would send the shallow commit's parents (its --unshallow).
            const unshallow = await post(fetchBody(version, { wants: [open[3]], args: [`shallow ${secret[1]}`, 'deepen 2147483647'] }));
            expect(unshallow.body).to.include(`ERR upload-pack: not our ref ${secret[1]}`);
            expect(unshallow.body).to.not.include('PACK');
            // A ref as the boundary of a deepening (--shallow-exclude): git resolves it among every line's.
            for (const ref of ['refs/heads/secret', 'secret']) {
                const exclude = await post(fetchBody(version, { wants: [open[3]], args: [`deepen-not ${ref}`] }));
                expect(exclude.body).to.include('ERR upload-pack: deepen-not (--shallow-exclude) is not served');
                expect(exclude.body).to.not.include('PACK');
            }
            // Nothing but a request's own form: a want that is not an object id is refused too.
            const malformed = await post(fetchBody(version, { wants: [`${open[3]}0`] }));
            expect(malformed.body).to.include('ERR upload-pack: malformed request');
        });
        it(`still serves what the line reaches (v${version}): a shallow clone, a commit of it by id (v2), --deepen, --unshallow, --shallow-since`, async () => {
            const dest = path.join(root, `reach-v${version}`);
            const v = ['-c', `protocol.version=${version}`];
            await ok([...v, 'clone', '-q', '--depth', '1', openUrl, dest], root);
            expect(await ok(['rev-list', '--count', 'HEAD'], dest)).to.equal('1');
            if (version === '2') {
                // v2 takes a want of any commit the line reaches (git's v0 client asks only for advertised tips).
                await ok([...v, 'fetch', '-q', 'origin', open[1]], dest);
                expect(await ok(['cat-file', '-t', open[1]], dest)).to.equal('commit');
            }
            await ok([...v, 'fetch', '-q', '--deepen', '1'], dest);
            await ok([...v, 'fetch', '-q', '--unshallow'], dest);
            expect(await ok(['rev-list', '--count', 'HEAD'], dest)).to.equal(String(open.length));
            expect(await ok(['fsck', '--no-progress'], dest)).to.equal('');
            const objects = await objectsOf(dest);
            for (const id of [...secret, secretBlob])
                expect(objects).to.not.include(id);
            // A shallow clone by date (deepen-since).
            const since = path.join(root, `since-v${version}`);
            await ok([...v, 'clone', '-q', '--shallow-since', '2000-01-01', openUrl, since], root);
            expect(await ok(['rev-list', '--count', 'HEAD'], since)).to.equal(String(open.length));
        });
    }
    it('fetches into a shallow clone after the line moved back: its shallow commit, no longer on the line, is only a boundary (v2 and v0)', async () => {
        for (const version of ['2', '0']) {
            const dest = path.join(root, `moved-back-v${version}`);
            const v = ['-c', `protocol.version=${version}`];
            await ok([...v, 'clone', '-q', '--depth', '1', openUrl, dest], root);
            await ok(['update-ref', 'refs/heads/open', open[1]], lines);
            try {
                await ok([...v, 'fetch', '-q', 'origin'], dest);
                expect(await ok(['rev-parse', 'origin/open'], dest)).to.equal(open[1]);
            }
            finally {
                await ok(['update-ref', 'refs/heads/open', open[3]], lines);
            }
        }
    });
});
/** A raw upload-pack (or receive-pack) request from `from` (a loopback address of its own: its own client) that sends its body one byte every `everyMs`. */
function slowClient(base, index, from, everyMs = 200, service = 'upload') {
    const u = new URL(base);
    const req = http.request({
        host: u.hostname, port: u.port, localAddress: from, method: 'POST',
        path: `/v1/native/repository-authorities/${index}/git/main.git/git-${service}-pack`,
        headers: { 'content-type': `application/x-git-${service}-pack-request`, 'content-length': '100000' },
    });
    let timer;
    const stop = () => { clearInterval(timer); req.destroy(); };
    const done = new Promise((resolve) => {
        req.on('response', (res) => {
            clearInterval(timer);
            const chunks = [];
            res.on('data', (c) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? null, body: Buffer.concat(chunks).toString('utf8'), closed: false }));
            res.on('error', () => resolve({ status: res.statusCode ?? null, body: Buffer.concat(chunks).toString('utf8'), closed: true }));
        });
        req.on('error', () => { clearInterval(timer); resolve({ status: null, body: '', closed: true }); });
    });
    // One pkt-line as long as a pkt-line can be: git waits for all of it before it reads any.
    req.write('fff0');
    timer = setInterval(() => { if (!req.destroyed)
        req.write('a'); }, everyMs);
    return { done, stop };
}
/** `promise`, or a failure naming `what` after `ms` (the bound of a test that must not hang). */
function within(what, promise, ms) {
    let timer;
    const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms); });
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
describe('git serving under slow and greedy clients (docs/operations.md "Git serving limits")', function () {
    this.timeout(120_000);
    let root;
    const shadows = new Map();
    const source = async (index, line) => (line === 'main' ? shadows.get(index) ?? null : null);
    before(async () => {
        root = tempDir('cairn-git-limits-');
        const work = path.join(root, 'work');
        await fsp.mkdir(work);
        await ok([...ID, 'init', '-q', '-b', 'main'], work);
        await commit(work, 'README.md', 'hello\n', 'first');
        for (const name of ['a', 'b']) {
            await ok(['init', '-q', '--bare', '-b', 'main', path.join(root, `${name}.git`)], root);
            await ok(['push', '-q', path.join(root, `${name}.git`), 'main'], work);
        }
    });
    async function serverWith(git) {
        const server = await startTestServer(undefined, { gitShadows: source, git });
        const a = await register(server.url, 'slow-a');
        const b = await register(server.url, 'slow-b');
        shadows.set(a, { repoDir: path.join(root, 'a.git') });
        shadows.set(b, { repoDir: path.join(root, 'b.git') });
        return { server, a, b };
    }
    it('cuts off clients that trickle their request body (a push: 408; a fetch, whose answer began before its body is read: the connection closed) and a clone of another repository gets through meanwhile', async () => {
        // Two places; a body must bring 64 bytes a second, judged every 2 s.
        const { server, a, b } = await serverWith({ places: 2, perClient: 2, perRepository: 2, queueMs: 60_000, bodyTimeoutMs: 2000, minBytesPerSecond: 64 });
        const slow = [['127.0.0.2', 'receive'], ['127.0.0.3', 'upload'], ['127.0.0.4', 'receive'], ['127.0.0.5', 'upload']]
            .map(([from, service]) => slowClient(server.url, a, from, 200, service));
        try {
            // The clone may wait in the queue for a place the slow clients are cut from.
            const dest = path.join(root, 'clone-b');
            const r = await within('the clone of repository b', git(['clone', '-q', `${server.url}/v1/native/repository-authorities/${b}/git/main.git`, dest], root), 60_000);
            expect(r.code, r.stderr).to.equal(0);
            expect(await fsp.readFile(path.join(dest, 'README.md'), 'utf8')).to.equal('hello\n');
            const outcomes = await within('every slow client cut off', Promise.all(slow.map((s) => s.done)), 60_000);
            for (const o of [outcomes[0], outcomes[2]]) {
                expect(o.status).to.equal(408);
                expect(JSON.parse(o.body).error).to.match(/^the request body came slower than 64 bytes a second \(\d+ bytes in 2 s\)$/);
            }
            // git http-backend's answer head is out before upload-pack reads the body: the answer is cut.
            for (const o of [outcomes[1], outcomes[3]])
                expect(o.closed).to.equal(true);
        }
        finally {
            for (const s of slow)
                s.stop();
            await server.stop();
        }
    });
    it('gives one client and one repository at most their share of the places; the rest wait in a queue, and a freed place goes to the first that may take it', async () => {
        const { server, a, b } = await serverWith({ places: 3, perClient: 2, perRepository: 2, queueMs: 60_000, bodyTimeoutMs: 600_000, minBytesPerSecond: 0 });
        const places = server.gitPlaces;
        // Stalled requests (nothing more is sent), which hold their places until they go.
        const s = [0, 1, 2].map(() => slowClient(server.url, a, '127.0.0.2', 3_600_000));
        await until('client .2 holding two places, its third waiting', () => places.snapshot().running === 2 && places.snapshot().waiting === 1);
        const t = slowClient(server.url, a, '127.0.0.3', 3_600_000);
        try {
            await until('client .3 waiting: repository a holds its share', () => places.snapshot().waiting === 2);
            expect(places.snapshot()).to.deep.equal({ running: 2, waiting: 2, clients: { '127.0.0.2': 2 }, repositories: { [String(a)]: 2 } });
            // The third place is free for anyone else: a clone of repository b runs at once.
            const r = await within('the clone of repository b', git(['clone', '-q', `${server.url}/v1/native/repository-authorities/${b}/git/main.git`, path.join(root, 'clone-fair')], root), 60_000);
            expect(r.code, r.stderr).to.equal(0);
            // One of .2's requests goes: its place is .2's waiting third (first in the queue, within both shares).
            s[0].stop();
            await until('the queue moved', () => places.snapshot().waiting === 1);
            expect(places.snapshot()).to.deep.equal({ running: 2, waiting: 1, clients: { '127.0.0.2': 2 }, repositories: { [String(a)]: 2 } });
            s[1].stop();
            await until('.3 running', () => places.snapshot().waiting === 0);
            expect(places.snapshot()).to.deep.equal({ running: 2, waiting: 0, clients: { '127.0.0.2': 1, '127.0.0.3': 1 }, repositories: { [String(a)]: 2 } });
        }
        finally {
            for (const x of [...s, t])
                x.stop();
            await until('every place freed', () => places.snapshot().running === 0);
            await server.stop();
        }
    });
});
describe('the client an anonymous git request counts against (gitClientOfAddress)', () => {
    it('is an IPv4 address as it is (IPv4-mapped IPv6 too), and an IPv6 address\'s /64', () => {
        expect(gitClientOfAddress('192.0.2.7')).to.equal('192.0.2.7');
        expect(gitClientOfAddress('::ffff:192.0.2.7')).to.equal('192.0.2.7');
        expect(gitClientOfAddress('::FFFF:c000:0207')).to.equal('192.0.2.7');
        expect(gitClientOfAddress('2001:db8:1:2:aaaa::1')).to.equal('2001:db8:1:2::/64');
        expect(gitClientOfAddress('2001:DB8:1:2:ffff:1:2:3')).to.equal('2001:db8:1:2::/64');
        expect(gitClientOfAddress('2001:db8::1')).to.equal('2001:db8:0:0::/64');
        expect(gitClientOfAddress('2001:0db8:0000:0000:0001::')).to.equal('2001:db8:0:0::/64');
        expect(gitClientOfAddress('fe80::1%eth0')).to.equal('fe80:0:0:0::/64');
        expect(gitClientOfAddress('::1')).to.equal('0:0:0:0::/64');
        expect(gitClientOfAddress('2001:db8:1:3::1')).to.not.equal(gitClientOfAddress('2001:db8:1:2::1'));
    });
});
//# sourceMappingURL=git-serve.test.js.map