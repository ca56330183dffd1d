// Git mirrors through real servers and Debian's git binary (docs/git.md "Mirror"): a line pushed
// to a local bare repository over file:// and over a local `git http-backend` (a CGI run by a
// small node http server here, receive-pack on, a token required), with the same commit ids as
// the export; a diverged remote stops the mirror (state, event, CLI) and is never forced, and a
// resume after the remote is put right pushes again; a child server killed with SIGKILL while a
// push is due catches up after its restart; credentials never reach an answer or the log; and the
// refusals. Every git this process runs while an in-process server is up is asynchronous (a
// synchronous one would block the server it talks to, or that talks to it).
import { expect } from 'chai';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { push } from '../lib/client/transfer.js';
import { api, cli, exportRepo, onTty, register, restoreRepo, spawnServer, startTestServer, tempDir, until, untilOutput } from './helpers.js';
import { hasGit } from './git-fixture.js';
import { Invalid } from '../lib/domain/errors.js';
import { MirrorSlots } from '../lib/authority/mirror-slots.js';
import { credentialGrants, grantRefusal, mirrorBackoffMs, mirrorRecordProblems, parseCredentialGrant, scrubbed, validateCredentialName, validateMirrorUrl } from '../lib/domain/git-mirrors.js';
const R = (repo, p) => `/v1/native/repository-authorities/${repo}${p}`;
const GIT_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'Eve', GIT_AUTHOR_EMAIL: 'eve@example.org', GIT_COMMITTER_NAME: 'Eve', GIT_COMMITTER_EMAIL: 'eve@example.org' };
const TOKEN = 'tok-Secret-5f2b9c1e77';
const hasScript = spawnSync('script', ['--version']).status === 0;
/** git, asynchronously; resolves with stdout, rejects with stderr. */
function gitAsync(args, cwd) {
    return new Promise((resolve, reject) => {
        execFile('git', args, { cwd, env: { ...process.env, ...GIT_ENV, HOME: cwd ?? process.cwd() } }, (err, stdout, stderr) => (err ? reject(new Error(`git ${args.join(' ')}: ${stderr}`)) : resolve(stdout)));
    });
}
const refOf = async (bare, ref) => (await gitAsync(['--git-dir', bare, 'for-each-ref', '--format=%(objectname)', ref])).trim() || null;
/** A bare repository that accepts pushes. */
async function bareRemote(dir) {
    await fsp.mkdir(path.dirname(dir), { recursive: true });
    await gitAsync(['init', '-q', '--bare', dir]);
    await gitAsync(['--git-dir', dir, 'config', 'http.receivepack', 'true']);
    return dir;
}
/**
 * `git http-backend` as CGI behind a node http server on 127.0.0.1, serving the bare
 * repositories under `root`; with `token`, a request without `Basic x-access-token:TOKEN` is
 * answered 401.
 */
async function httpBackend(root, token) {
    const state = { url: '', auth: [], failing: false, close: async () => { } };
    const server = http.createServer((req, res) => {
        if (req.headers.authorization)
            state.auth.push(req.headers.authorization);
        if (state.failing) {
            res.writeHead(503);
            res.end('down for a while');
            return;
        }
        if (token !== null && req.headers.authorization !== `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`) {
            res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="test"' });
            res.end('authentication required');
            return;
        }
        const u = new URL(req.url, 'http://x');
        const cgi = spawn('git', ['http-backend'], {
            env: {
                ...process.env, ...GIT_ENV, GIT_PROJECT_ROOT: root, GIT_HTTP_EXPORT_ALL: '1', REQUEST_METHOD: req.method, PATH_INFO: decodeURIComponent(u.pathname),
                QUERY_STRING: u.search.slice(1), CONTENT_TYPE: req.headers['content-type'] ?? '', REMOTE_USER: 'mirror', REMOTE_ADDR: '127.0.0.1',
                ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) } : {}),
                ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
            },
        });
        req.pipe(cgi.stdin);
        let head = Buffer.alloc(0);
        let headersDone = false;
        cgi.stdout.on('data', (chunk) => {
            if (headersDone) {
                res.write(chunk);
                return;
            }
            head = Buffer.concat([head, chunk]);
            const end = head.indexOf('\r\n\r\n');
            if (end < 0)
                return;
            headersDone = true;
            let status = 200;
            for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
                const i = line.indexOf(':');
                const [k, v] = [line.slice(0, i).trim(), line.slice(i + 1).trim()];
                if (k.toLowerCase() === 'status')
                    status = Number(v.split(' ')[0]);
                else
                    res.setHeader(k, v);
            }
            res.writeHead(status);
            res.write(head.subarray(end + 4));
        });
        cgi.stdout.on('end', () => res.end());
        cgi.on('error', () => { res.writeHead(500); res.end(); });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    state.url = `http://127.0.0.1:${server.address().port}`;
    state.close = () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
    return state;
}
/** A working directory whose pushes move line `line` of `repo` (created by the first). */
function lineWriter(url, repo, line) {
    const dir = path.join(tempDir('cairn-mirror-wc-'), 'tree');
    let n = 0;
    return async () => {
        n++;
        await fsp.mkdir(dir, { recursive: true });
        await fsp.writeFile(path.join(dir, `file-${n}.txt`), `change ${n}\n`);
        if (n === 1) {
            const first = await push({ server: url, repo, line, dir, moveLine: false, progress: false, message: `change ${n}` });
            const put = await api(url, 'PUT', R(repo, `/lines/${line}`), { json: { head_snapshot_id: first.snapshot_id } });
            expect(put.status, put.text).to.be.oneOf([200, 201]);
            return first.snapshot_id;
        }
        return (await push({ server: url, repo, line, dir, moveLine: true, progress: false, message: `change ${n}` })).snapshot_id;
    };
}
const registerRepo = (url, name) => register(url, name);
const exportHead = async (url, repo, line) => {
    const res = await api(url, 'POST', R(repo, '/git/exports'), { json: { line } });
    expect(res.status, res.text).to.equal(200);
    return res.json.head_commit_id;
};
const mirrorOf = async (url, repo, id) => {
    const res = await api(url, 'GET', R(repo, `/git-mirrors/${id}`));
    expect(res.status, res.text).to.equal(200);
    return res.json.mirror;
};
/** Wait until the mirror is `ok` at the line's exported head and the remote's branch is there too. */
async function untilMirrored(url, repo, id, remote, line = 'dev') {
    return until(`mirror ${id} to reach the line's head`, async () => {
        const head = await exportHead(url, repo, line);
        const m = await mirrorOf(url, repo, id);
        return m.state === 'ok' && m.last_pushed_commit_id === head && (await remote()) === head ? head : null;
    }, 30_000);
}
function addMirror(url, repo, body) {
    return api(url, 'POST', R(repo, '/git-mirrors'), { json: body });
}
(hasGit ? describe : describe.skip)('git mirrors (POST {repo}/git-mirrors)', function () {
    this.timeout(180_000);
    let s;
    let remotes;
    let backend;
    let open;
    before(async () => {
        remotes = path.join(tempDir('cairn-mirror-remotes-'), 'remotes');
        await fsp.mkdir(remotes, { recursive: true });
        process.env.CAIRN_TEST_MIRROR_TOKEN = TOKEN;
        backend = await httpBackend(remotes, TOKEN);
        open = await httpBackend(remotes, null);
        s = await startTestServer(undefined, { gitMirrors: { fileRoot: remotes, allow: ['127.0.0.1', 'localhost'], backoffBaseMs: 50, credentials: ['token=env:CAIRN_TEST_MIRROR_TOKEN', 'token-http:http://127.0.0.1=env:CAIRN_TEST_MIRROR_TOKEN'] } });
    });
    after(async () => {
        await s.stop();
        await backend.close();
        await open.close();
        delete process.env.CAIRN_TEST_MIRROR_TOKEN;
    });
    it('mirrors a line to a bare repository over file://: the remote branch follows each move, with the commit ids of the export', async () => {
        const repo = await registerRepo(s.url, 'mirror-file');
        const advance = lineWriter(s.url, repo, 'dev');
        await advance();
        await advance();
        const remote = await bareRemote(path.join(remotes, 'file.git'));
        const res = await addMirror(s.url, repo, { line: 'dev', url: pathToFileURL(remote).href });
        expect(res.status, res.text).to.equal(201);
        expect(res.json.mirror).to.deep.include({ mirror_id: 'mirror-1', line: 'dev', url: pathToFileURL(remote).href, credential: null, state: 'pending', last_pushed_commit_id: null });
        const head = await untilMirrored(s.url, repo, 'mirror-1', () => refOf(remote, 'refs/heads/dev'));
        // The remote holds the exported history, commit for commit.
        const shadow = path.join(s.dataDir, 'git-shadow', `${repo}.git`);
        expect(await gitAsync(['--git-dir', remote, 'rev-list', head])).to.equal(await gitAsync(['--git-dir', shadow, 'rev-list', head]));
        // A move is followed.
        await advance();
        const next = await untilMirrored(s.url, repo, 'mirror-1', () => refOf(remote, 'refs/heads/dev'));
        expect(next).to.not.equal(head);
        expect((await gitAsync(['--git-dir', remote, 'rev-parse', `${next}^`])).trim()).to.equal(head);
        const list = await api(s.url, 'GET', R(repo, '/git-mirrors'));
        expect(list.json.count).to.equal(1);
        expect(list.json.mirrors[0]).to.deep.include({ mirror_id: 'mirror-1', state: 'ok', last_pushed_commit_id: next, last_error: null, failures: 0 });
    });
    it('mirrors over a local git http-backend with a token the operator granted from the server\'s environment; without the token it retries, and neither answer holds the token', async () => {
        const repo = await registerRepo(s.url, 'mirror-http');
        const advance = lineWriter(s.url, repo, 'dev');
        await advance();
        const remote = await bareRemote(path.join(remotes, 'http.git'));
        const noToken = await addMirror(s.url, repo, { line: 'dev', url: `${backend.url}/http.git` });
        expect(noToken.status, noToken.text).to.equal(201);
        const failing = await until('the mirror without a token to retry', async () => {
            const m = await mirrorOf(s.url, repo, 'mirror-1');
            return m.state === 'retrying' && m.failures >= 1 ? m : null;
        });
        expect(failing.last_error).to.match(/ls-remote failed/);
        expect(failing.next_attempt_at_ms).to.be.a('number');
        expect(await refOf(remote, 'refs/heads/dev')).to.equal(null);
        // A grant that does not allow http is refused for an http remote: its token would go in clear.
        const clear = await addMirror(s.url, repo, { line: 'dev', url: `${backend.url}/http.git`, credential: 'token' });
        expect(clear.status, clear.text).to.equal(400);
        expect(clear.json.error).to.match(/credential token is sent only over https.*http:\/\/HOST/);
        const res = await addMirror(s.url, repo, { line: 'dev', url: `${backend.url}/http.git`.replace('http://', 'http://x-access-token@'), credential: 'token-http' });
        expect(res.status, res.text).to.equal(201);
        expect(res.json.mirror.credential).to.equal('token-http');
        await untilMirrored(s.url, repo, 'mirror-2', () => refOf(remote, 'refs/heads/dev'));
        expect(backend.auth.some((a) => a === `Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`)).to.equal(true);
        await advance();
        await untilMirrored(s.url, repo, 'mirror-2', () => refOf(remote, 'refs/heads/dev'));
        const basic = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
        for (const p of ['/git-mirrors', '/git-mirrors/mirror-1', '/git-mirrors/mirror-2', '/events']) {
            const text = (await api(s.url, 'GET', R(repo, p))).text;
            expect(text, p).to.not.include(TOKEN);
            expect(text, p).to.not.include(basic);
        }
        const removed = await api(s.url, 'DELETE', R(repo, '/git-mirrors/mirror-1'));
        expect(removed.status, removed.text).to.equal(200);
        expect(removed.json).to.deep.equal({ mirror_id: 'mirror-1', removed: true });
        expect((await api(s.url, 'GET', R(repo, '/git-mirrors/mirror-1'))).status).to.equal(404);
        expect((await api(s.url, 'GET', R(repo, '/git-mirrors'))).json.mirrors.map((m) => m.mirror_id)).to.deep.equal(['mirror-2']);
    });
    it('stops a mirror whose remote diverged (someone pushed to it): state diverged, the event, the CLI says so, nothing is forced; resumed after the remote is put right, it pushes again', async () => {
        const repo = await registerRepo(s.url, 'mirror-diverged');
        const advance = lineWriter(s.url, repo, 'dev');
        await advance();
        const remote = await bareRemote(path.join(remotes, 'diverged.git'));
        expect((await addMirror(s.url, repo, { line: 'dev', url: `${open.url}/diverged.git` })).status).to.equal(201);
        const ours = await untilMirrored(s.url, repo, 'mirror-1', () => refOf(remote, 'refs/heads/dev'));
        // Someone else pushes a commit of their own onto the mirrored branch.
        const work = path.join(tempDir('cairn-mirror-other-'), 'w');
        await gitAsync(['clone', '-q', '--branch', 'dev', remote, work]);
        await fsp.writeFile(path.join(work, 'theirs.txt'), 'not from cairn\n');
        await gitAsync(['add', '-A'], work);
        await gitAsync(['commit', '-q', '-m', 'theirs'], work);
        await gitAsync(['push', '-q', 'origin', 'HEAD:refs/heads/dev'], work);
        const theirs = (await gitAsync(['rev-parse', 'HEAD'], work)).trim();
        await advance();
        const m = await until('the mirror to diverge', async () => {
            const x = await mirrorOf(s.url, repo, 'mirror-1');
            return x.state === 'diverged' ? x : null;
        });
        expect(m).to.deep.include({ diverged_remote_commit_id: theirs, last_pushed_commit_id: ours, next_attempt_at_ms: null });
        expect(m.last_error).to.include(theirs).and.include('nothing is forced');
        expect(await refOf(remote, 'refs/heads/dev')).to.equal(theirs);
        const events = (await api(s.url, 'GET', R(repo, '/events'))).json.events;
        const diverged = events.filter((e) => e.type === 'git_mirror.diverged');
        expect(diverged.map((e) => e.data)).to.deep.equal([{ mirror_id: 'mirror-1', line: 'dev', remote_commit_id: theirs, last_pushed_commit_id: ours }]);
        const status = await cli(['mirror', 'status', 'mirror-1', '--server', s.url, '--repo', String(repo)]);
        expect(status.code, status.stderr).to.equal(1);
        expect(JSON.parse(status.stdout).mirror.state).to.equal('diverged');
        if (hasScript) {
            const tty = await onTty(['mirror', 'status', '--server', s.url, '--repo', String(repo)]);
            expect(tty.status).to.equal(1);
            expect(tty.stdout).to.include('state:        DIVERGED').and.include(`remote is at: ${theirs}`).and.include('cairn mirror resume mirror-1');
        }
        // Another move does not push either.
        await advance();
        expect((await mirrorOf(s.url, repo, 'mirror-1')).state).to.equal('diverged');
        expect(await refOf(remote, 'refs/heads/dev')).to.equal(theirs);
        // Put right (the branch back on our commit), then resumed: it pushes.
        await gitAsync(['--git-dir', remote, 'update-ref', 'refs/heads/dev', ours]);
        const resumed = await cli(['mirror', 'resume', 'mirror-1', '--server', s.url, '--repo', String(repo), '--json']);
        expect(resumed.code, resumed.stderr).to.equal(0);
        await untilMirrored(s.url, repo, 'mirror-1', () => refOf(remote, 'refs/heads/dev'));
        const listed = await cli(['mirror', 'list', '--server', s.url, '--repo', String(repo)]);
        expect(listed.code).to.equal(0);
        expect(JSON.parse(listed.stdout).mirrors[0].state).to.equal('ok');
    });
    it('pushes to a host name the server resolves, judges and pins (here localhost, opened by --git-mirror-allow)', async () => {
        const repo = await registerRepo(s.url, 'mirror-name');
        const advance = lineWriter(s.url, repo, 'dev');
        await advance();
        const remote = await bareRemote(path.join(remotes, 'named.git'));
        const res = await addMirror(s.url, repo, { line: 'dev', url: `${open.url.replace('127.0.0.1', 'localhost')}/named.git` });
        expect(res.status, res.text).to.equal(201);
        await untilMirrored(s.url, repo, 'mirror-1', () => refOf(remote, 'refs/heads/dev'));
    });
    it('travels with the repository\'s export: the restored repository keeps its mirrors and pushes its moves, continuing the remote\'s history', async () => {
        const repo = await registerRepo(s.url, 'mirror-moved');
        const advance = lineWriter(s.url, repo, 'dev');
        await advance();
        const remote = await bareRemote(path.join(remotes, 'moved.git'));
        expect((await addMirror(s.url, repo, { line: 'dev', url: pathToFileURL(remote).href, credential: 'token' })).status).to.equal(201);
        const before = await untilMirrored(s.url, repo, 'mirror-1', () => refOf(remote, 'refs/heads/dev'));
        const { manifest, files } = await exportRepo(s.url, repo);
        const restored = await restoreRepo(s.url, manifest, files);
        const m = await mirrorOf(s.url, restored, 'mirror-1');
        expect(m).to.deep.include({ line: 'dev', url: pathToFileURL(remote).href, credential: 'token', state: 'ok', last_pushed_commit_id: before });
        // The restored line moves: the mirror pushes from the restored repository.
        const dir = path.join(tempDir('cairn-mirror-wc-'), 'tree');
        await fsp.mkdir(dir, { recursive: true });
        await fsp.writeFile(path.join(dir, 'after-restore.txt'), 'moved\n');
        await push({ server: s.url, repo: restored, line: 'dev', dir, moveLine: true, progress: false, message: 'after the restore' });
        const after = await untilMirrored(s.url, restored, 'mirror-1', () => refOf(remote, 'refs/heads/dev'));
        expect((await gitAsync(['--git-dir', remote, 'rev-parse', `${after}^`])).trim()).to.equal(before);
    });
    it('refuses bad registrations with a clear error and changes nothing; a password in the URL is never repeated', async () => {
        const repo = await registerRepo(s.url, 'mirror-hostile');
        const advance = lineWriter(s.url, repo, 'dev');
        await advance();
        const port = new URL(s.url).port;
        const cases = [
            [{ line: 'dev', url: 'https://bob:hunter2-Pa55@example.com/r.git' }, 400, /password/],
            [{ line: 'dev', url: 'ftp://example.com/r.git' }, 400, /https or http/],
            [{ line: 'dev', url: 'ssh://git@example.com/r.git' }, 400, /https or http/],
            [{ line: 'dev', url: 'git@example.com:r.git' }, 400, /https or http|absolute/],
            [{ line: 'dev', url: 'not a url' }, 400, /absolute URL/],
            [{ line: 'dev', url: 'https://example.com/r.git?x=1' }, 400, /query/],
            [{ line: 'dev', url: `http://127.0.0.1:${port}/v1/native/repository-authorities/${repo}/git/dev.git` }, 400, /own listener/],
            [{ line: 'dev', url: `http://localhost:${port}/r.git` }, 400, /own listener/],
            [{ line: 'dev', url: 'http://10.1.2.3/r.git' }, 400, /private address.*--git-mirror-allow/],
            [{ line: 'dev', url: 'http://169.254.169.254/latest' }, 400, /link-local/],
            [{ line: 'dev', url: 'file:///etc/r.git' }, 400, /under the directory/],
            [{ line: 'dev', url: `file://${remotes}/../outside.git` }, 400, /under the directory/],
            [{ line: 'nope', url: 'https://example.com/r.git' }, 404, /line nope does not exist/],
            [{ line: 'a..b', url: 'https://example.com/r.git' }, 400, /git branch name/],
            [{ line: 'dev', url: 'https://example.com/r.git', credential: 'file:../x' }, 400, /--git-mirror-credential/],
            [{ line: 'dev', url: 'https://example.com/r.git', credential: 'file:/etc/passwd' }, 400, /--git-mirror-credential/],
            [{ line: 'dev', url: 'https://example.com/r.git', credential: 'env:' }, 400, /--git-mirror-credential/],
            [{ line: 'dev', url: 'https://example.com/r.git', credential: 'sub/x' }, 400, /name of a grant/],
            [{ line: 'dev', url: 'https://example.com/r.git', credential: 'ghp_plaintexttoken' }, 400, /not granted/],
            [{ line: 'dev', url: 'https://example.com/r.git', token: 'x' }, 422, /token/],
            [{ line: 'dev' }, 422, /url/],
            [{ line: 'dev', url: 7 }, 422, /url/],
        ];
        for (const [body, status, message] of cases) {
            const res = await addMirror(s.url, repo, body);
            expect(res.status, `${JSON.stringify(body)}: ${res.text}`).to.equal(status);
            expect(res.json.error, JSON.stringify(body)).to.match(message);
            expect(res.text).to.not.include('hunter2');
        }
        expect((await api(s.url, 'GET', R(repo, '/git-mirrors'))).json.count).to.equal(0);
        expect((await api(s.url, 'GET', R(repo, '/git-mirrors/mirror-1'))).status).to.equal(404);
        expect((await api(s.url, 'DELETE', R(repo, '/git-mirrors/mirror-1'))).status).to.equal(404);
        expect((await api(s.url, 'POST', R(repo, '/git-mirrors/mirror-1:resume'))).status).to.equal(404);
        // One mirror per line and URL.
        expect((await addMirror(s.url, repo, { line: 'dev', url: 'https://example.com/r.git' })).status).to.equal(201);
        const twin = await addMirror(s.url, repo, { line: 'dev', url: 'https://example.com/r.git' });
        expect(twin.status, twin.text).to.equal(409);
        expect(twin.json.error).to.include('mirror-1');
    });
});
(hasGit ? describe : describe.skip)('git mirror credentials are granted by the operator (cairn serve --git-mirror-credential)', function () {
    this.timeout(180_000);
    let s = null;
    let backend;
    let remotes;
    let data;
    const grants = (repo) => [`deploy:http://127.0.0.1=env:CAIRN_TEST_GRANTED_TOKEN`, `scoped@${repo + 100}=env:CAIRN_TEST_GRANTED_TOKEN`, `pinned:example.org=env:CAIRN_TEST_GRANTED_TOKEN`, `tls:127.0.0.1=env:CAIRN_TEST_GRANTED_TOKEN`, `anyhost=env:CAIRN_TEST_GRANTED_TOKEN`];
    before(async () => {
        const root = tempDir('cairn-mirror-grant-');
        remotes = path.join(root, 'remotes');
        data = path.join(root, 'data');
        await fsp.mkdir(remotes, { recursive: true });
        process.env.CAIRN_TEST_GRANTED_TOKEN = TOKEN;
        process.env.CAIRN_TEST_UNGRANTED_SECRET = 'aws-Secret-0123456789abcdef';
        backend = await httpBackend(remotes, TOKEN);
    });
    after(async () => {
        await s?.stop();
        await backend.close();
        delete process.env.CAIRN_TEST_GRANTED_TOKEN;
        delete process.env.CAIRN_TEST_UNGRANTED_SECRET;
    });
    it('refuses a reference to any variable or file of the server, a name not granted, a grant of another repository or host (400 naming the rule); a granted name pushes with its secret', async () => {
        s = await startTestServer(data, { gitMirrors: { allow: ['127.0.0.1'], backoffBaseMs: 50, credentials: grants(0) } });
        const repo = await registerRepo(s.url, 'mirror-grants');
        expect(repo).to.equal(0);
        const advance = lineWriter(s.url, repo, 'dev');
        await advance();
        const remote = await bareRemote(path.join(remotes, 'granted.git'));
        const url = `${backend.url}/granted.git`;
        const cases = [
            ['env:CAIRN_TEST_UNGRANTED_SECRET', /env:NAME.*no longer|--git-mirror-credential/],
            ['env:AWS_SECRET_ACCESS_KEY', /--git-mirror-credential/],
            ['file:remote-token', /--git-mirror-credential/],
            ['nobody', /credential nobody is not granted.*--git-mirror-credential/],
            ['scoped', /credential scoped is granted to repository 100, not to repository 0/],
            ['pinned', /credential pinned is granted for host example\.org; the url's host 127\.0\.0\.1 is not one of them/],
            ['../etc/passwd', /credential must be the name of a grant/],
            ['tls', /credential tls is sent only over https; the url is http:\/\/ \(a grant allows http for a host written http:\/\/HOST/],
            ['anyhost', /credential anyhost is sent only over https/],
        ];
        const before = backend.auth.length;
        for (const [credential, message] of cases) {
            const res = await addMirror(s.url, repo, { line: 'dev', url, credential });
            expect(res.status, `${credential}: ${res.text}`).to.equal(400);
            expect(res.json.error, credential).to.match(message);
        }
        expect((await api(s.url, 'GET', R(repo, '/git-mirrors'))).json.count).to.equal(0);
        expect(backend.auth.length).to.equal(before);
        const ok = await addMirror(s.url, repo, { line: 'dev', url, credential: 'deploy' });
        expect(ok.status, ok.text).to.equal(201);
        expect(ok.json.mirror.credential).to.equal('deploy');
        await untilMirrored(s.url, repo, 'mirror-1', () => refOf(remote, 'refs/heads/dev'));
        expect(backend.auth).to.include(`Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`);
    });
    it('a stored mirror whose credential is no longer granted fails its pushes with a clear error and sends nothing', async () => {
        await s.stop();
        s = await startTestServer(data, { gitMirrors: { allow: ['127.0.0.1'], backoffBaseMs: 50 } });
        const sent = backend.auth.length;
        const remote = path.join(remotes, 'granted.git');
        const was = await refOf(remote, 'refs/heads/dev');
        const dir = path.join(tempDir('cairn-mirror-wc-'), 'tree');
        await fsp.mkdir(dir, { recursive: true });
        await fsp.writeFile(path.join(dir, 'later.txt'), 'later\n');
        await push({ server: s.url, repo: 0, line: 'dev', dir, moveLine: true, progress: false, message: 'later' });
        const m = await until('the mirror to fail for its credential', async () => {
            const x = await mirrorOf(s.url, 0, 'mirror-1');
            return x.state === 'retrying' ? x : null;
        });
        expect(m.last_error).to.match(/credential deploy is not granted by this server/);
        expect(backend.auth.length).to.equal(sent);
        expect(await refOf(remote, 'refs/heads/dev')).to.equal(was);
    });
    it('a stored http mirror whose grant no longer allows http fails its pushes naming the rule, and sends nothing', async () => {
        await s.stop();
        // The same grant name, now https only: the push re-checks the scheme before sending the token.
        s = await startTestServer(data, { gitMirrors: { allow: ['127.0.0.1'], backoffBaseMs: 50, credentials: ['deploy:127.0.0.1=env:CAIRN_TEST_GRANTED_TOKEN'] } });
        const sent = backend.auth.length;
        const remote = path.join(remotes, 'granted.git');
        const was = await refOf(remote, 'refs/heads/dev');
        const dir = path.join(tempDir('cairn-mirror-wc-'), 'tree');
        await fsp.mkdir(dir, { recursive: true });
        await fsp.writeFile(path.join(dir, 'later2.txt'), 'later still\n');
        await push({ server: s.url, repo: 0, line: 'dev', dir, moveLine: true, progress: false, message: 'later still' });
        const m = await until('the mirror to push or fail for its scheme', async () => {
            const x = await mirrorOf(s.url, 0, 'mirror-1');
            return x.state === 'ok' || /https/.test(x.last_error ?? '') ? x : null;
        });
        expect(m.state).to.equal('retrying');
        expect(m.last_error).to.match(/credential deploy is sent only over https/);
        expect(backend.auth.length, 'no credential sent').to.equal(sent);
        expect(await refOf(remote, 'refs/heads/dev')).to.equal(was);
    });
});
/** A TCP server on 127.0.0.1 that accepts every connection and never answers (nor closes). */
async function silentServer() {
    const sockets = new Set();
    let accepted = 0;
    const server = net.createServer((socket) => {
        accepted++;
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => { });
        socket.resume();
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        port: server.address().port,
        open: () => sockets.size,
        accepted: () => accepted,
        close: () => new Promise((resolve) => { for (const s of sockets)
            s.destroy(); server.close(() => resolve()); }),
    };
}
(hasGit ? describe : describe.skip)('git mirror pushes share the server fairly and stop on a stalled remote', function () {
    this.timeout(180_000);
    let s = null;
    let silent;
    let remotes;
    before(async () => {
        remotes = path.join(tempDir('cairn-mirror-fair-'), 'remotes');
        await fsp.mkdir(remotes, { recursive: true });
        silent = await silentServer();
    });
    after(async () => {
        await s?.stop();
        await silent.close();
    });
    it('one repository\'s mirrors to a remote that never answers do not hold every push slot: another repository\'s mirror pushes meanwhile', async () => {
        // The stall limit is far beyond the test's time: the silent pushes hold their slots throughout.
        s = await startTestServer(undefined, { gitMirrors: { fileRoot: remotes, allow: ['127.0.0.1'], backoffBaseMs: 50, concurrency: 4, stallSeconds: 3600 } });
        const hog = await registerRepo(s.url, 'mirror-hog');
        await lineWriter(s.url, hog, 'dev')();
        for (let i = 1; i <= 4; i++)
            expect((await addMirror(s.url, hog, { line: 'dev', url: `http://127.0.0.1:${silent.port}/hog-${i}.git` })).status).to.equal(201);
        await until('the hog\'s pushes to reach the silent remote', () => silent.open() >= 2);
        const other = await registerRepo(s.url, 'mirror-other');
        await lineWriter(s.url, other, 'dev')();
        const remote = await bareRemote(path.join(remotes, 'other.git'));
        expect((await addMirror(s.url, other, { line: 'dev', url: pathToFileURL(remote).href })).status).to.equal(201);
        await untilMirrored(s.url, other, 'mirror-1', () => refOf(remote, 'refs/heads/dev'));
        // Meanwhile the silent remote's connections are still open, unanswered: nothing was waited out.
        expect(silent.open()).to.be.at.least(2);
        // At most two of one repository's pushes run at once.
        expect(silent.accepted()).to.equal(2);
        for (let i = 1; i <= 4; i++)
            expect((await mirrorOf(s.url, hog, `mirror-${i}`)).state).to.equal('pending');
        await s.stop();
        s = null;
    });
    it('a push that receives nothing for the stall limit is stopped and recorded as a clear failure', async () => {
        await s?.stop();
        s = await startTestServer(undefined, { gitMirrors: { allow: ['127.0.0.1'], backoffBaseMs: 60_000, stallSeconds: 1 } });
        const repo = await registerRepo(s.url, 'mirror-stalled');
        await lineWriter(s.url, repo, 'dev')();
        expect((await addMirror(s.url, repo, { line: 'dev', url: `http://127.0.0.1:${silent.port}/stalled.git` })).status).to.equal(201);
        const m = await until('the stalled push to fail', async () => {
            const x = await mirrorOf(s.url, repo, 'mirror-1');
            return x.state === 'retrying' ? x : null;
        }, 60_000);
        expect(m.failures).to.equal(1);
        expect(m.last_error).to.match(/the remote stalled: nothing arrived for 1 s/);
    });
});
(hasGit ? describe : describe.skip)('git mirrors across a SIGKILL (child server)', function () {
    this.timeout(180_000);
    let child = null;
    let backend;
    after(async () => {
        child?.proc.kill('SIGKILL');
        await backend?.close();
    });
    it('a mirror whose push is due when the server is killed catches up after the restart; its token (a granted credential file) is never in the log', async () => {
        const root = tempDir('cairn-mirror-kill-');
        const data = path.join(root, 'data');
        const remotes = path.join(root, 'remotes');
        const creds = path.join(root, 'creds');
        await fsp.mkdir(creds, { recursive: true });
        await fsp.writeFile(path.join(creds, 'remote-token'), `${TOKEN}\n`, { mode: 0o600 });
        const remote = await bareRemote(path.join(remotes, 'kill.git'));
        backend = await httpBackend(remotes, TOKEN);
        const flags = ['--git-mirror-allow', '127.0.0.1', '--git-mirror-credential', `remote-token:http://127.0.0.1=file:${path.join(creds, 'remote-token')}`, '--git-mirror-backoff-ms', '100', '--log-format', 'json'];
        child = await spawnServer(data, flags);
        const repo = await registerRepo(child.url, 'mirror-kill');
        const advance = lineWriter(child.url, repo, 'dev');
        await advance();
        const added = await addMirror(child.url, repo, { line: 'dev', url: `${backend.url}/kill.git`, credential: 'remote-token' });
        expect(added.status, added.text).to.equal(201);
        await untilMirrored(child.url, repo, 'mirror-1', () => refOf(remote, 'refs/heads/dev'));
        // The remote goes down; the line moves: the push is due, and fails until the remote is back.
        backend.failing = true;
        await advance();
        await until('the mirror to retry', async () => (await mirrorOf(child.url, repo, 'mirror-1')).state === 'retrying');
        const before = child.output();
        child.proc.kill('SIGKILL');
        await child.exited;
        backend.failing = false;
        child = await spawnServer(data, flags);
        const head = await untilMirrored(child.url, repo, 'mirror-1', () => refOf(remote, 'refs/heads/dev'));
        expect(head).to.equal(await exportHead(child.url, repo, 'dev'));
        // Log lines are written in batches (a SIGKILL loses the last one): wait for the restarted server's.
        await untilOutput(child, /git mirror pushed/);
        const basic = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
        for (const out of [before, child.output()]) {
            expect(out).to.not.include(TOKEN);
            expect(out).to.not.include(basic);
        }
        child.proc.kill('SIGTERM');
        await child.exited;
        child = null;
        const fsck = await cli(['fsck', '--data', data]);
        expect(fsck.code, fsck.stdout + fsck.stderr).to.equal(0);
    });
});
describe('git mirror rules (lib/domain/git-mirrors.ts)', () => {
    const targets = { network: { allowRanges: [], allowHosts: [], listener: { address: '127.0.0.1', port: 8088 } }, fileRoot: '/srv/mirrors' };
    it('normalizes a URL and refuses passwords, other schemes, internal hosts, the listener and file:// outside the root', () => {
        expect(validateMirrorUrl('https://Example.com/org/r.git', targets)).to.equal('https://example.com/org/r.git');
        expect(validateMirrorUrl('https://ci@example.com/r.git', targets)).to.equal('https://ci@example.com/r.git');
        expect(validateMirrorUrl('file:///srv/mirrors/a/r.git', targets)).to.equal('file:///srv/mirrors/a/r.git');
        for (const bad of ['https://u:p@example.com/r.git', 'ssh://example.com/r.git', 'http://127.0.0.1:8088/x', 'http://[::1]/x', 'http://localhost/x', 'file:///srv/mirrors', 'file:///srv/mirrors/../etc', 'file://host/srv/mirrors/r.git', 'file:///srv/mirrorsX/r.git']) {
            expect(() => validateMirrorUrl(bad, targets), bad).to.throw(Invalid);
        }
        expect(() => validateMirrorUrl('file:///srv/mirrors/r.git', { ...targets, fileRoot: null })).to.throw(Invalid, /--git-mirror-file-root/);
    });
    it('takes a credential as the name of an operator\'s grant, scoped to repositories and hosts, and scrubs secrets from stored text', () => {
        expect(validateCredentialName('github.token')).to.equal('github.token');
        expect(validateCredentialName(undefined)).to.equal(null);
        for (const bad of ['env:GITHUB_TOKEN', 'file:github.token', 'file:../x', 'a/b', '', 'x y'])
            expect(() => validateCredentialName(bad), bad).to.throw(Invalid);
        expect(parseCredentialGrant('gh=env:GITHUB_TOKEN')).to.deep.equal({ name: 'gh', source: { kind: 'env', variable: 'GITHUB_TOKEN' }, repositories: null, hosts: null });
        expect(parseCredentialGrant('gh@3,7:GitHub.com,[::1]=file:/etc/cairn/gh')).to.deep.equal({ name: 'gh', source: { kind: 'file', path: '/etc/cairn/gh' }, repositories: [3, 7], hosts: ['github.com', '::1'] });
        for (const bad of ['gh', 'gh=', 'gh=GITHUB_TOKEN', 'gh=env:A-B', 'gh=file:rel', 'a/b=env:X', 'gh@x=env:X', 'gh@=env:X', 'gh:=env:X', 'gh:a b=env:X'])
            expect(() => parseCredentialGrant(bad), bad).to.throw(Invalid);
        expect(() => credentialGrants(['gh=env:A', 'gh=env:B'])).to.throw(Invalid, /twice/);
        const grants = credentialGrants(['any=env:A', 'three@3=env:A', 'hub:github.com=env:A']);
        expect(grantRefusal(grants, 'any', 9, 'https://example.com/r.git')).to.equal(null);
        expect(grantRefusal(grants, 'three', 3, 'https://example.com/r.git')).to.equal(null);
        expect(grantRefusal(grants, 'three', 4, 'https://example.com/r.git')).to.match(/granted to repository 3, not to repository 4/);
        expect(grantRefusal(grants, 'hub', 4, 'https://github.com/r.git')).to.equal(null);
        expect(grantRefusal(grants, 'hub', 4, 'https://evil.example/r.git')).to.match(/host evil\.example is not one of them/);
        expect(grantRefusal(grants, 'hub', 4, 'file:///srv/r.git')).to.match(/is not one of them/);
        expect(grantRefusal(grants, 'env:A', 4, 'https://github.com/r.git')).to.match(/not granted/);
        // The scheme: a credential goes over https only, unless the grant writes a host as http://HOST.
        expect(grantRefusal(grants, 'hub', 4, 'http://github.com/r.git')).to.match(/sent only over https/);
        expect(grantRefusal(grants, 'any', 9, 'http://example.com/r.git')).to.match(/sent only over https/);
        expect(parseCredentialGrant('ci:http://CI.local,https://github.com,gitlab.com=env:A')).to.deep.equal({ name: 'ci', source: { kind: 'env', variable: 'A' }, repositories: null, hosts: ['ci.local', 'github.com', 'gitlab.com'], httpHosts: ['ci.local'] });
        for (const bad of ['ci:ftp://x=env:A', 'ci:http://=env:A', 'ci:http://x/y=env:A', 'ci:http://x:80=env:A'])
            expect(() => parseCredentialGrant(bad), bad).to.throw(Invalid);
        const mixed = credentialGrants(['ci:http://ci.local,github.com=env:A']);
        expect(grantRefusal(mixed, 'ci', 0, 'http://ci.local/r.git')).to.equal(null);
        expect(grantRefusal(mixed, 'ci', 0, 'https://ci.local/r.git')).to.equal(null);
        expect(grantRefusal(mixed, 'ci', 0, 'HTTP://CI.LOCAL:8080/r.git')).to.equal(null);
        expect(grantRefusal(mixed, 'ci', 0, 'http://github.com/r.git')).to.match(/credential ci is sent only over https/);
        expect(scrubbed('fatal: Authorization: Basic abc; token s3cr3t-value here', ['s3cr3t-value'])).to.equal('fatal: Authorization: ***');
        expect(scrubbed('x'.repeat(600), []).length).to.equal(500);
    });
    it('shares push slots: at most the per-repository share each, a freed slot to the next repository in turn', async () => {
        const slots = new MirrorSlots(3, 2);
        const started = [];
        const gates = new Map();
        const job = (repo, name) => slots.run(repo, () => new Promise((resolve) => { started.push(name); gates.set(name, resolve); }));
        const all = [job(0, 'a1'), job(0, 'a2'), job(0, 'a3'), job(0, 'a4'), job(1, 'b1'), job(2, 'c1'), job(1, 'b2')];
        expect(started).to.deep.equal(['a1', 'a2', 'b1']);
        const finish = async (name) => {
            gates.get(name)();
            await new Promise((r) => setImmediate(r));
        };
        // Repository 2 has not been served yet: it goes first.
        await finish('a1');
        expect(started.slice(3)).to.deep.equal(['c1']);
        // Repository 0 was served before repository 1 last.
        await finish('c1');
        expect(started.slice(4)).to.deep.equal(['a3']);
        // Repository 0 holds its two (a2, a3) until one ends.
        await finish('b1');
        expect(started.slice(5)).to.deep.equal(['b2']);
        await finish('b2');
        expect(started.slice(6)).to.deep.equal([]);
        await finish('a2');
        expect(started.slice(6)).to.deep.equal(['a4']);
        await finish('a3');
        await finish('a4');
        await Promise.all(all);
        expect(slots.inFlight()).to.equal(0);
    });
    it('backs off exponentially up to five minutes', () => {
        expect([1, 2, 3, 4].map((n) => mirrorBackoffMs(n, 1000))).to.deep.equal([1000, 2000, 4000, 8000]);
        expect(mirrorBackoffMs(40, 1000)).to.equal(300_000);
    });
    it('names the problems of a damaged record (fsck)', () => {
        const good = {
            mirror_id: 'mirror-1', sequence: 1, version: 1, line: 'dev', url: 'https://example.com/r.git', credential: 'env:T', state: 'ok', last_pushed_commit_id: 'a'.repeat(40),
            last_pushed_at_s: 1, last_error: null, failures: 0, next_attempt_at_ms: null, diverged_remote_commit_id: null, diverged_at_s: null, removed: false, created_at_s: 1, updated_at_s: 1, removed_at_s: null,
        };
        expect(mirrorRecordProblems('mirror-1', good)).to.deep.equal([]);
        expect(mirrorRecordProblems('mirror-2', good)[0]).to.match(/not filed/);
        expect(mirrorRecordProblems('mirror-1', { ...good, url: 'https://u:p@example.com/r.git' })).to.deep.equal(['has a password in its url']);
        expect(mirrorRecordProblems('mirror-1', { ...good, state: 'weird' })).to.deep.equal(['has state "weird"']);
        expect(mirrorRecordProblems('mirror-1', { ...good, removed: true })).to.deep.equal(['is removed but keeps its credential reference']);
        expect(mirrorRecordProblems('mirror-1', { ...good, credential: 'gh' })).to.deep.equal([]);
        expect(mirrorRecordProblems('mirror-1', { ...good, credential: 'a/b' })).to.deep.equal(['has a credential that is neither a grant name nor null']);
    });
});
//# sourceMappingURL=git-mirror.test.js.map