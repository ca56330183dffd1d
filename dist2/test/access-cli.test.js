// The command-line side of accounts and tokens (docs/operations.md "Team setup"): the first
// admin made offline (and refused while the server runs), cairn login / logout with the stored
// token (mode 0600) and git's credential helper (git clone with no password in the URL),
// cairn token create / list / revoke, cairn repo access, the sign-in hint of a 401, and fsck of
// DATA/access.log. Every CLI run is a child process; the server runs in this process.
import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, promises as fsp, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, api, cli, onTty, startTestServer, tempDir, until } from './helpers.js';
import { hasGit } from './git-fixture.js';
import { Layout } from '../lib/store/layout.js';
const TOKEN = /cairn_[A-Za-z0-9_-]{43}/;
const hasScript = spawnSync('script', ['--version']).status === 0;
const bearer = (token) => ({ authorization: `Bearer ${token}` });
/** The CLI with `input` on stdin. */
function cliIn(args, input, env = {}) {
    return new Promise((resolve) => {
        const p = spawn(process.execPath, [CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
        let stdout = '';
        let stderr = '';
        p.stdout.on('data', (d) => { stdout += d; });
        p.stderr.on('data', (d) => { stderr += d; });
        p.on('exit', (code) => resolve({ code, stdout, stderr }));
        p.stdin.end(input);
    });
}
/** git as a client of the in-process server (asynchronous: this process answers it). */
function git(args, env) {
    return new Promise((resolve, reject) => {
        const child = spawn('git', args, { env: { ...process.env, GIT_TERMINAL_PROMPT: '0', ...env } });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => { stdout += d; });
        child.stderr.on('data', (d) => { stderr += d; });
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
}
/** A home of its own: credentials file, ~/.gitconfig (optionally with the store helper), ~/.git-credentials. */
function person(helper) {
    const home = tempDir('cairn-home-');
    mkdirSync(path.join(home, '.config'), { recursive: true });
    writeFileSync(path.join(home, '.gitconfig'), helper ? `[credential]\n\thelper = ${helper}\n` : '');
    return { HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), GIT_CONFIG_GLOBAL: path.join(home, '.gitconfig') };
}
const credentialsFile = (env) => path.join(env.XDG_CONFIG_HOME, 'cairn', 'credentials.json');
describe('the access commands: admin, token, login, logout, whoami, repo access', function () {
    this.timeout(120_000);
    let dataDir;
    let rootToken;
    let server = null;
    let repo;
    before(async () => {
        dataDir = path.join(tempDir(), 'data');
        // The first admin, offline, before the first start (the data directory is made by it).
        const made = await cli(['admin', 'user', 'add', 'root', '--admin', '--data', dataDir, '--json']);
        expect(made.code, made.stderr).to.equal(0);
        const out = JSON.parse(made.stdout);
        expect(out.account).to.include({ name: 'root', server_admin: true, disabled: false });
        expect(out.token.scopes).to.deep.equal(['read', 'write', 'admin']);
        expect(out.token.token).to.match(TOKEN);
        rootToken = out.token.token;
        server = await startTestServer(dataDir, { auth: 'tokens' });
        const reg = await api(server.url, 'POST', '/v1/native/repository-authorities', { json: { repository_name: 'team', namespace: '', policy_flags: 0 }, headers: bearer(rootToken) });
        expect(reg.status, reg.text).to.be.oneOf([200, 201]);
        repo = reg.json.repository.repository_index;
    });
    after(async () => {
        await server?.stop();
    });
    it('admin user add --data refuses while the server runs (exit 4, says to stop it or use --server), and adds nothing', async () => {
        const before = readFileSync(new Layout(dataDir).accessLogFile);
        const res = await cli(['admin', 'user', 'add', 'zed', '--data', dataDir]);
        expect(res.code, res.stderr).to.equal(4);
        expect(res.stderr).to.match(/stop the server, or run this against it with --server URL as a server admin/);
        expect(readFileSync(new Layout(dataDir).accessLogFile).equals(before)).to.equal(true);
    });
    it('admin user add over --server: a server admin adds bob and his first token (shown once); a non-admin is refused with the server\'s 403', async () => {
        const res = await cli(['admin', 'user', 'add', 'bob', '--server', server.url, '--token-name', 'laptop', '--json'], { CAIRN_TOKEN: rootToken });
        expect(res.code, res.stderr).to.equal(0);
        const out = JSON.parse(res.stdout);
        expect(out.account.name).to.equal('bob');
        expect(out.token).to.include({ account: 'bob', name: 'laptop' });
        expect(out.token.scopes).to.deep.equal(['read', 'write']);
        expect(out.token.token).to.match(TOKEN);
        const list = await cli(['admin', 'user', 'list', '--server', server.url, '--json'], { CAIRN_TOKEN: rootToken });
        expect(JSON.parse(list.stdout).accounts.map((a) => a.name)).to.deep.equal(['bob', 'root']);
        const refused = await cli(['admin', 'user', 'add', 'eve', '--server', server.url], { CAIRN_TOKEN: out.token.token });
        expect(refused.code).to.equal(1);
        expect(refused.stderr).to.match(/HTTP 403: .*server admins/);
        expect(refused.stderr + refused.stdout).to.not.match(TOKEN);
    });
    it('token create / list / revoke: the token is shown once, never listed, and stops signing in when revoked', async () => {
        const env = { CAIRN_TOKEN: rootToken };
        const made = await cli(['token', 'create', 'script', '--scopes', 'read', '--expires-days', '7', '--server', server.url, '--json'], env);
        expect(made.code, made.stderr).to.equal(0);
        const token = JSON.parse(made.stdout).token;
        expect(token).to.include({ account: 'root', name: 'script' });
        expect(token.scopes).to.deep.equal(['read']);
        expect(token.expires_at_s - token.created_at_s).to.equal(7 * 86_400);
        expect((await api(server.url, 'GET', '/v1/native/session', { headers: bearer(token.token) })).json.account).to.equal('root');
        const list = await cli(['token', 'list', '--server', server.url, '--json'], env);
        expect(list.code, list.stderr).to.equal(0);
        expect(list.stdout).to.not.match(TOKEN);
        expect(JSON.parse(list.stdout).tokens.map((t) => t.token_id)).to.include(token.token_id);
        // Another account's, as a server admin.
        const bobs = await cli(['token', 'list', '--user', 'bob', '--server', server.url, '--json'], env);
        expect(JSON.parse(bobs.stdout).tokens.map((t) => t.name)).to.deep.equal(['laptop']);
        // A bad --scopes is a usage error before anything is sent.
        expect((await cli(['token', 'create', 'x', '--scopes', 'root', '--server', server.url], env)).code).to.equal(2);
        // Revoke by id (never by the token's text, which is refused without being echoed).
        const byText = await cli(['token', 'revoke', token.token, '--server', server.url], env);
        expect(byText.code).to.equal(2);
        expect(byText.stderr).to.not.include(token.token);
        const revoked = await cli(['token', 'revoke', token.token_id, '--server', server.url, '--json'], env);
        expect(revoked.code, revoked.stderr).to.equal(0);
        expect(JSON.parse(revoked.stdout).token.revoked_at_s).to.be.a('number');
        expect((await api(server.url, 'GET', '/v1/native/session', { headers: bearer(token.token) })).status).to.equal(401);
        // --token-file: the token goes to a new 0600 file, not to stdout.
        const file = path.join(tempDir(), 'ci.token');
        const filed = await cli(['token', 'create', 'filed', '--token-file', file, '--server', server.url, '--json'], env);
        expect(filed.code, filed.stderr).to.equal(0);
        expect(filed.stdout).to.not.match(TOKEN);
        expect(statSync(file).mode & 0o777).to.equal(0o600);
        expect(readFileSync(file, 'utf8').trim()).to.match(TOKEN);
        expect((await cli(['token', 'create', 'again', '--token-file', file, '--server', server.url], env)).code).to.equal(2);
    });
    it('repo access: grant (a bare name is user:NAME), list, revoke, anonymous-read on and off', async () => {
        const env = { CAIRN_TOKEN: rootToken };
        const base = ['--server', server.url, '--repo', String(repo), '--json'];
        const granted = await cli(['repo', 'access', 'grant', 'bob', 'contributor', ...base], env);
        expect(granted.code, granted.stderr).to.equal(0);
        expect(JSON.parse(granted.stdout).grants).to.deep.equal([{ subject: 'user:bob', role: 'contributor' }]);
        await cli(['admin', 'group', 'set', 'core', '--members', 'bob,root', '--server', server.url], env);
        expect(JSON.parse((await cli(['repo', 'access', 'grant', 'group:core', 'reader', ...base], env)).stdout).grants).to.have.length(2);
        const shown = JSON.parse((await cli(['repo', 'access', ...base], env)).stdout);
        expect(shown).to.deep.include({ repository_index: repo, anonymous_read: false, your_role: 'admin' });
        expect(shown.grants).to.deep.equal([{ subject: 'group:core', role: 'reader' }, { subject: 'user:bob', role: 'contributor' }]);
        expect(JSON.parse((await cli(['repo', 'access', 'revoke', 'group:core', ...base], env)).stdout).grants).to.deep.equal([{ subject: 'user:bob', role: 'contributor' }]);
        expect((await cli(['repo', 'access', 'grant', 'bob', 'owner', ...base], env)).code).to.equal(2);
        expect((await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}`)).status).to.equal(401);
        expect(JSON.parse((await cli(['repo', 'access', 'anonymous-read', 'on', ...base], env)).stdout).anonymous_read).to.equal(true);
        expect((await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}`)).status).to.equal(200);
        await cli(['repo', 'access', 'anonymous-read', 'off', ...base], env);
        expect((await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}`)).status).to.equal(401);
    });
    it('a 401 says how to sign in (cairn login --server URL, or CAIRN_TOKEN), a refused token says so, and neither shows the token', async () => {
        const none = await cli(['repo', 'show', '--server', server.url, '--repo', String(repo)], person(null));
        expect(none.code).to.equal(1);
        expect(none.stderr).to.include(`not signed in to ${server.url}: sign in with cairn login --server ${server.url}`);
        expect(none.stderr).to.include('CAIRN_TOKEN');
        const dead = 'cairn_' + 'A'.repeat(43);
        const bad = await cli(['lines', '--server', server.url, '--repo', String(repo)], { CAIRN_TOKEN: dead });
        expect(bad.code).to.equal(1);
        expect(bad.stderr).to.include(`${server.url} did not accept the token in CAIRN_TOKEN`);
        expect(bad.stderr).to.include(`cairn login --server ${server.url}`);
        expect(bad.stderr).to.not.include(dead);
        // The event feed too (its own client).
        const watch = await cli(['watch', '--server', server.url, '--repo', String(repo)], person(null));
        expect(watch.code).to.equal(1);
        expect(watch.stderr).to.include(`sign in with cairn login --server ${server.url}`);
        const who = await cli(['whoami', '--server', server.url, '--json'], person(null));
        expect(who.code).to.equal(1);
        expect(JSON.parse(who.stdout).account).to.equal(null);
    });
    (hasGit ? it : it.skip)('login checks the token, stores it 0600 and hands it to git: git clone works with no password in the URL; logout forgets both', async () => {
        // A line to clone.
        const site = tempDir('cairn-site-');
        writeFileSync(path.join(site, 'README.md'), '# team\n');
        const pushed = await cli(['push', site, '--server', server.url, '--repo', String(repo), '--line', 'main', '--message', 'first'], { CAIRN_TOKEN: rootToken });
        expect(pushed.code, pushed.stderr).to.equal(0);
        const made = JSON.parse((await cli(['token', 'create', 'laptop2', '--user', 'bob', '--server', server.url, '--json'], { CAIRN_TOKEN: rootToken })).stdout).token;
        const bob = person('store');
        const cloneUrl = `${server.url}/v1/native/repository-authorities/${repo}/git/main.git`;
        // Before: git has nothing to sign in with.
        expect((await git(['ls-remote', cloneUrl], bob)).code).to.not.equal(0);
        // A token the server does not accept: refused, nothing stored, not echoed.
        const wrong = 'cairn_' + 'B'.repeat(43);
        const refused = await cliIn(['login', '--server', server.url, '--token-stdin'], `${wrong}\n`, bob);
        expect(refused.code).to.equal(1);
        expect(refused.stderr).to.match(/did not accept the token.*nothing was stored/);
        expect(refused.stderr + refused.stdout).to.not.include(wrong);
        expect(existsSync(credentialsFile(bob))).to.equal(false);
        // Not a token at all: refused before the server is asked.
        expect((await cliIn(['login', '--server', server.url, '--token-stdin'], 'hunter2\n', bob)).stderr).to.match(/not a cairn token/);
        const login = await cliIn(['login', '--server', server.url, '--token-stdin', '--json'], `${made.token}\n`, bob);
        expect(login.code, login.stderr).to.equal(0);
        const out = JSON.parse(login.stdout);
        expect(out).to.include({ account: 'bob', server_admin: false, token_id: made.token_id });
        expect(out.git).to.include({ done: 'approved', helper: 'store' });
        expect(login.stdout + login.stderr).to.not.include(made.token);
        expect(statSync(credentialsFile(bob)).mode & 0o777).to.equal(0o600);
        expect(JSON.parse(readFileSync(credentialsFile(bob), 'utf8')).servers[server.url]).to.include({ token: made.token, account: 'bob' });
        // whoami with the stored token.
        const who = JSON.parse((await cli(['whoami', '--server', server.url, '--repo', String(repo), '--json'], bob)).stdout);
        expect(who).to.include({ account: 'bob', role: 'contributor', token_source: 'cairn login' });
        // git signs in through its helper: no user or password in the URL.
        const ls = await git(['ls-remote', cloneUrl], bob);
        expect(ls.code, ls.stderr).to.equal(0);
        expect(ls.stdout).to.match(/refs\/heads\/main/);
        const dest = path.join(tempDir('cairn-clone-'), 'team');
        const cloned = await git(['clone', '-q', cloneUrl, dest], bob);
        expect(cloned.code, cloned.stderr).to.equal(0);
        expect(readFileSync(path.join(dest, 'README.md'), 'utf8')).to.equal('# team\n');
        const logout = await cli(['logout', '--server', server.url, '--json'], bob);
        expect(logout.code, logout.stderr).to.equal(0);
        expect(JSON.parse(logout.stdout)).to.deep.include({ signed_out: true, account: 'bob' });
        expect(JSON.parse(readFileSync(credentialsFile(bob), 'utf8')).servers).to.deep.equal({});
        expect(readFileSync(path.join(bob.HOME, '.git-credentials'), 'utf8')).to.not.include(made.token);
        expect((await git(['ls-remote', cloneUrl], bob)).code).to.not.equal(0);
    });
    it('login without a git credential helper, or without git, still signs in and says what git will do', async () => {
        const made = JSON.parse((await cli(['token', 'create', 'nohelper', '--server', server.url, '--json'], { CAIRN_TOKEN: rootToken })).stdout).token;
        const plain = person(null);
        const res = await cliIn(['login', '--server', server.url, '--token-stdin'], `${made.token}\n`, plain);
        expect(res.code, res.stderr).to.equal(0);
        expect(res.stdout).to.match(/git has no credential helper configured.*git config --global credential.helper store/);
        const nogit = person(null);
        const res2 = await cliIn(['login', '--server', server.url, '--token-stdin', '--json'], `${made.token}\n`, { ...nogit, CAIRN_GIT: path.join(tempDir(), 'no-such-git') });
        expect(res2.code, res2.stderr).to.equal(0);
        expect(JSON.parse(res2.stdout).git.done).to.equal('no-git');
        expect(statSync(credentialsFile(nogit)).mode & 0o777).to.equal(0o600);
    });
    (hasScript ? it : it.skip)('login on a terminal reads the token without echoing it', async () => {
        const made = JSON.parse((await cli(['token', 'create', 'typed', '--server', server.url, '--json'], { CAIRN_TOKEN: rootToken })).stdout).token;
        const env = person(null);
        const child = spawn('script', ['-qefc', `'${process.execPath}' '${CLI}' login --server ${server.url}`, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
        let out = '';
        child.stdout.on('data', (d) => { out += d; });
        child.stderr.on('data', (d) => { out += d; });
        const exited = new Promise((resolve) => child.on('exit', resolve));
        await until('the prompt', () => out.includes('(input is hidden)'));
        child.stdin.write(`${made.token}\r`);
        expect(await exited).to.equal(0);
        expect(out).to.include('signed in to').and.include('as root');
        expect(out).to.not.include(made.token);
        expect(JSON.parse(readFileSync(credentialsFile(env), 'utf8')).servers[server.url].token).to.equal(made.token);
    });
    it('login refuses a stdin that is not a terminal without --token-stdin (exit 2), and a server without accounts', async () => {
        const res = await cliIn(['login', '--server', server.url], 'x\n', person(null));
        expect(res.code).to.equal(2);
        expect(res.stderr).to.match(/--token-stdin/);
        const open = await startTestServer();
        try {
            const made = JSON.parse((await cli(['token', 'create', 'elsewhere', '--server', server.url, '--json'], { CAIRN_TOKEN: rootToken })).stdout).token;
            const r = await cliIn(['login', '--server', open.url, '--token-stdin'], `${made.token}\n`, person(null));
            expect(r.code).to.equal(1);
            expect(r.stderr).to.match(/runs without accounts/);
        }
        finally {
            await open.stop();
        }
    });
    it('admin user disable / enable, group list and the audit feed', async () => {
        const env = { CAIRN_TOKEN: rootToken };
        const bobToken = JSON.parse((await cli(['token', 'create', 'later', '--user', 'bob', '--server', server.url, '--json'], env)).stdout).token.token;
        expect((await cli(['admin', 'user', 'disable', 'bob', '--server', server.url], env)).code).to.equal(0);
        expect((await api(server.url, 'GET', '/v1/native/session', { headers: bearer(bobToken) })).status).to.equal(401);
        expect((await cli(['admin', 'user', 'enable', 'bob', '--server', server.url], env)).code).to.equal(0);
        expect((await api(server.url, 'GET', '/v1/native/session', { headers: bearer(bobToken) })).json.account).to.equal('bob');
        const groups = JSON.parse((await cli(['admin', 'group', 'list', '--server', server.url, '--json'], env)).stdout);
        expect(groups.groups).to.deep.equal([{ name: 'core', members: ['bob', 'root'] }]);
        const page = JSON.parse((await cli(['admin', 'audit', '--limit', '2', '--server', server.url, '--json'], env)).stdout);
        expect(page.records).to.have.length(2);
        expect(page.next_after).to.equal(2);
        const all = JSON.parse((await cli(['admin', 'audit', '--after', '2', '--limit', '1000', '--server', server.url, '--json'], env)).stdout);
        expect(JSON.stringify(all)).to.not.match(TOKEN).and.not.include('digest');
        expect(all.records.map((r) => r.type)).to.include.members(['account.changed', 'group.set', 'access.changed', 'token.revoked']);
    });
});
(hasScript ? describe : describe.skip)('cairn admin user add on a terminal', () => {
    it('prints the account and its token once, saying to copy it now', async () => {
        const dataDir = path.join(tempDir(), 'data');
        const res = await onTty(['admin', 'user', 'add', 'gus', '--admin', '--data', dataDir]);
        expect(res.status, res.stdout).to.equal(0);
        expect(res.stdout).to.include('account gus added (server admin)');
        expect(res.stdout).to.match(/token token-1 "first" for gus: scopes read, write, admin; expires/);
        expect(res.stdout).to.include('copy it now, it is not shown again');
        expect(res.stdout).to.match(TOKEN);
    });
});
describe('cairn fsck checks DATA/access.log', () => {
    it('reports a damaged record of access.log as a problem (exit 1)', async () => {
        const dataDir = path.join(tempDir(), 'data');
        for (const name of ['ann', 'ben'])
            expect((await cli(['admin', 'user', 'add', name, '--data', dataDir])).code).to.equal(0);
        expect((await cli(['fsck', '--data', dataDir])).code).to.equal(0);
        const file = new Layout(dataDir).accessLogFile;
        const bytes = await fsp.readFile(file);
        // A byte inside the first record's body (not the last record: a torn tail is only a note).
        const at = bytes.indexOf(Buffer.from('"ann"'));
        expect(at).to.be.greaterThan(0);
        bytes[at + 1] ^= 0x01;
        await fsp.writeFile(file, bytes);
        const res = await cli(['fsck', '--data', dataDir]);
        expect(res.code).to.equal(1);
        expect(res.stdout).to.match(/access\.log/);
    });
});
//# sourceMappingURL=access-cli.test.js.map