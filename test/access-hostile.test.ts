// Hostile input to the access gate (docs/api.md "Accounts, tokens and roles"): fuzzed
// Authorization and identity headers (garbage schemes, huge values, bad base64, bytes that are
// not UTF-8, tokens of the right shape that nobody holds, basic auth without a colon, the header
// twice) never get a 500, never stop the server and are never echoed; the failed sign-in limit
// (429 + Retry-After, per address, an IPv6 /64 as one); a token revoked, or its account disabled,
// while its event stream is open ends the stream; and git over HTTP with the token as the
// password of basic auth: a clone, none without a token, no fetch once it is revoked, and a push
// for review only for a contributor.
import { expect } from 'chai';
import fc from 'fast-check';
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { importGit } from '../lib/client/git-import.js';
import { NO_PROGRESS } from '../lib/client/progress.js';
import { failureSource } from '../lib/http/access-gate.js';
import { api, startTestServer, tempDir, until, type TestServer } from './helpers.js';
import { grantRoles, seedAdmin, withToken } from './access-seed.js';
import { hasGit, makeHistory } from './git-fixture.js';

const AUTH = '/v1/native/repository-authorities';
const H = 'X-Cairn-User';

/** One request written byte for byte (header values the HTTP client would refuse to send), from `from`. */
function raw(port: number, head: Buffer, from: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress: from });
    const chunks: Buffer[] = [];
    socket.on('data', (d) => chunks.push(d));
    // Node 24 answers a head over its limit (431) and then drops the connection with the rest of
    // the head unread, which the peer sees as a reset: the answer that came before it counts.
    socket.on('error', (err) => (/^HTTP\/1\.1 \d{3}/.test(Buffer.concat(chunks).toString('latin1')) ? undefined : reject(err)));
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (!m) return reject(new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
      resolve({ status: Number(m[1]), text });
    });
    // Written, not ended: a client that half-closes is a client that went away (the server may drop its request).
    socket.write(head);
  });
}

/** git as a client: no config of the machine, never a prompt for credentials. */
function gitClient(args: string[], cwd?: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '/bin/false', GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.org', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.org' };
    const child = spawn('git', args, { cwd, env });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    child.stdout.resume();
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('hostile input to the access gate', function () {
  this.timeout(120_000);
  let s: TestServer;
  let port: number;
  let root: { token: string; headers: Record<string, string> };
  let repo: number;
  /** A fresh source address for each batch that must not hit the failed sign-in limit of another. */
  let nextSource = 0;
  const source = () => `127.4.${Math.floor(nextSource / 250)}.${1 + (nextSource++ % 250)}`;

  before(async () => {
    const dataDir = path.join(tempDir(), 'data');
    root = await seedAdmin(dataDir, 'root');
    s = await startTestServer(dataDir, { auth: 'tokens', identity: { header: H, trustFrom: ['127.0.0.1'] } });
    port = Number(new URL(s.url).port);
    const reg = await api(s.url, 'POST', AUTH, { json: { repository_name: 'hostile', namespace: '', policy_flags: 0 }, headers: root.headers });
    repo = reg.json.repository.repository_index;
  });
  after(() => s?.stop());

  const request = (lines: Buffer[], from: string) => raw(port, Buffer.concat([Buffer.from(`GET ${AUTH}/${repo} HTTP/1.1\r\nHost: ${new URL(s.url).host}\r\nConnection: close\r\n`), ...lines.map((l) => Buffer.concat([l, Buffer.from('\r\n')])), Buffer.from('\r\n')]), from);

  /** A header value as bytes: printable ASCII, or any byte but CR, LF and NUL (Latin-1 and broken UTF-8 included). */
  const valueBytes = fc.oneof(
    fc.string({ maxLength: 200, size: 'medium' }).map((t) => Buffer.from(t, 'utf8')),
    fc.string({ unit: 'grapheme', maxLength: 60, size: 'medium' }).map((t) => Buffer.from(t, 'utf8')),
    fc.uint8Array({ maxLength: 200, size: 'medium' }).map((a) => Buffer.from(a.filter((b) => b !== 13 && b !== 10 && b !== 0))),
  );
  const tokenShaped = fc.stringMatching(/^cairn_[A-Za-z0-9_-]{43}$/);
  const authorization = fc.oneof(
    fc.tuple(fc.constantFrom('Bearer', 'bearer', 'BEARER', 'Basic', 'basic', 'Digest', 'Token', 'Negotiate', '', 'Bearer\t'), valueBytes).map(([scheme, v]) => Buffer.concat([Buffer.from(`${scheme} `), v])),
    tokenShaped.map((t) => Buffer.from(`Bearer ${t}`)),
    tokenShaped.map((t) => Buffer.from(`Basic ${Buffer.from(`user:${t}`).toString('base64')}`)),
    // Basic without a colon, bad base64, base64 of bytes that are not UTF-8.
    fc.string({ maxLength: 80 }).filter((t) => !t.includes(':')).map((t) => Buffer.from(`Basic ${Buffer.from(t).toString('base64')}`)),
    fc.string({ maxLength: 80 }).map((t) => Buffer.from(`Basic ${t.replace(/[\r\n\0]/g, '')}!!==`)),
    fc.uint8Array({ maxLength: 60 }).map((a) => Buffer.from(`Basic ${Buffer.from(a).toString('base64')}`)),
    valueBytes,
  );

  it('answers fuzzed Authorization headers (one or two of them) with 400, 401 or 429, never echoing a token', async () => {
    await fc.assert(fc.asyncProperty(fc.array(authorization, { minLength: 1, maxLength: 2 }), async (values) => {
      const res = await request(values.map((v) => Buffer.concat([Buffer.from('Authorization: '), v])), source());
      expect(res.status, res.text).to.be.oneOf([400, 401, 429]);
      for (const v of values) {
        const text = v.toString('latin1');
        const token = /cairn_[A-Za-z0-9_-]{43}/.exec(text)?.[0] ?? (text.length >= 24 ? text.slice(7) : null);
        if (token) expect(res.text).to.not.include(token);
      }
    }), { numRuns: 150 });
    expect((await api(s.url, 'GET', '/healthz')).status).to.equal(200);
  });

  it('answers a value as long as the server takes, and a longer one, with no 500', async () => {
    for (const size of [1024, 8 * 1024, 15 * 1024, 64 * 1024]) {
      const res = await request([Buffer.from(`Authorization: Bearer ${'A'.repeat(size)}`)], source());
      expect(res.status, `${size}: ${res.text.slice(0, 200)}`).to.be.oneOf([401, 431, 400]);
      const id = await request([Buffer.from(`${H}: ${'a'.repeat(size)}`)], source());
      expect(id.status, `identity ${size}`).to.be.oneOf([400, 403, 431]);
    }
    expect((await api(s.url, 'GET', '/healthz')).status).to.equal(200);
  });

  it('answers fuzzed identity headers with a 4xx (or the request\'s own answer), never a 500; from an untrusted peer, never echoed', async () => {
    await fc.assert(fc.asyncProperty(valueBytes, async (v) => {
      // From the trusted ingress: a name the gate takes (a 403 names the caller's own account: it is theirs), or a 400 for one that breaks the rule of names.
      const res = await request([Buffer.concat([Buffer.from(`${H}: `), v])], '127.0.0.1');
      expect(res.status, res.text).to.be.within(200, 499);
      // From any other peer: 403 (400 from Node's parser for a byte no header may hold), and the value is not in the answer.
      const text = v.toString('latin1').trim();
      const other = await request([Buffer.concat([Buffer.from(`${H}: `), v])], source());
      if (text !== '') {
        expect(other.status, other.text).to.be.oneOf([400, 403]);
        if (text.length >= 4) expect(other.text.split('\r\n\r\n').slice(1).join('')).to.not.include(text);
      }
    }), { numRuns: 100 });
    expect((await api(s.url, 'GET', '/healthz')).status).to.equal(200);
  });

  it('makes no account for a name the front door gives that no grant could name (a \':\', a leading \'@\'): 400', async () => {
    for (const name of ['x:y', 'user:mallory', '@core']) {
      const res = await api(s.url, 'GET', `${AUTH}/${repo}`, { headers: { [H]: name } });
      expect(res.status, `${name}: ${res.text}`).to.equal(400);
      expect(res.text).to.not.include(name);
    }
    const accounts = await api(s.url, 'GET', '/v1/native/accounts', { headers: root.headers });
    const names = (accounts.json.accounts as { name: string }[]).map((a) => a.name);
    expect(names).to.not.include.members(['x:y']).and.not.include('user:mallory').and.not.include('@core');
  });

  it('limits failed sign-ins to 10 a minute per address (429 with Retry-After), not the next address', async () => {
    const from = source();
    const bad = [Buffer.from(`Authorization: Bearer cairn_${'B'.repeat(43)}`)];
    for (let i = 0; i < 10; i++) expect((await request(bad, from)).status, `attempt ${i + 1}`).to.equal(401);
    const limited = await request(bad, from);
    expect(limited.status).to.equal(429);
    expect(limited.text).to.match(/\r\nretry-after: \d+\r\n/i);
    // A valid token from there is refused as well until the window passes; another address is not limited.
    expect((await request([Buffer.from(`Authorization: Bearer ${root.token}`)], from)).status).to.equal(429);
    expect((await request(bad, source())).status).to.equal(401);
    expect((await request([Buffer.from(`Authorization: Bearer ${root.token}`)], source())).status).to.equal(200);
  });

  it('counts an IPv6 /64 as one source (and an IPv4-mapped address as its IPv4 one)', () => {
    expect(failureSource('2001:db8:1:2::5')).to.equal(failureSource('2001:db8:1:2:ffff:ffff:ffff:ffff'));
    expect(failureSource('2001:db8:1:2::5')).to.equal('2001:db8:1:2::/64');
    expect(failureSource('2001:db8:1:3::5')).to.not.equal(failureSource('2001:db8:1:2::5'));
    expect(failureSource('::1')).to.equal('0:0:0:0::/64');
    expect(failureSource('::ffff:127.0.0.1')).to.equal('127.0.0.1');
    expect(failureSource('192.0.2.7')).to.equal('192.0.2.7');
    fc.assert(fc.property(fc.ipV6(), (a) => {
      const key = failureSource(a);
      expect(key.length).to.be.greaterThan(0);
    }));
  });

  async function account(name: string, role: 'reader' | 'contributor' | null): Promise<{ token: string; tokenId: string }> {
    const made = await api(s.url, 'POST', '/v1/native/accounts', { json: { name, token: { name: 't' } }, headers: root.headers });
    expect(made.status, made.text).to.equal(201);
    if (role) await grantRoles(s.url, root.headers, repo, { [name]: role });
    return { token: made.json.token.token, tokenId: made.json.token.token_id };
  }

  /** Open the repository's event stream with `token`; resolves with a promise of its end. */
  async function openStream(token: string): Promise<{ ended: Promise<string> }> {
    const res = await fetch(`${s.url}${AUTH}/${repo}/events`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    const reader = res.body!.getReader();
    const ended = (async () => {
      try {
        for (;;) if ((await reader.read()).done) return 'ended';
      } catch {
        return 'cut';
      }
    })();
    return { ended };
  }

  it('ends an open event stream when its token is revoked, and when its account is disabled', async () => {
    const a = await account('streamer', 'reader');
    const first = await openStream(a.token);
    let over = false;
    void first.ended.then(() => { over = true; });
    // The stream stays open while nothing happens to the token (an event goes through it).
    await api(s.url, 'POST', `${AUTH}/${repo}/tasks`, { json: { title: 'T', intent: 'I' }, headers: root.headers });
    expect(over).to.equal(false);
    expect((await api(s.url, 'DELETE', `/v1/native/tokens/${a.tokenId}`, { headers: root.headers })).status).to.equal(200);
    await until('the stream of the revoked token ends', () => over);
    const b = await account('streamer2', 'reader');
    const second = await openStream(b.token);
    let over2 = false;
    void second.ended.then(() => { over2 = true; });
    const off = await api(s.url, 'PATCH', '/v1/native/accounts/streamer2', { json: { disabled: true }, headers: root.headers });
    expect(off.status, off.text).to.equal(200);
    await until('the stream of the disabled account ends', () => over2);
    expect((await api(s.url, 'GET', `${AUTH}/${repo}`, { headers: { authorization: `Bearer ${b.token}` } })).status).to.equal(401);
  });

  (hasGit ? describe : describe.skip)('git over HTTP with a token', () => {
    let gitUrl: string;
    before(async () => {
      const src = await makeHistory();
      await importGit({ server: withToken(s.url, root.token), repo, source: src, line: 'main', progress: NO_PROGRESS });
      gitUrl = `${AUTH}/${repo}/git/main.git`;
    });
    const withCred = (token: string) => `${withToken(s.url, token)}${gitUrl}`;

    it('clones with the token as the password of basic auth; without one git is asked to authenticate (401) and fails', async () => {
      const reader = await account('gitreader', 'reader');
      const dest = path.join(tempDir('cairn-hostile-git-'), 'work');
      const cloned = await gitClient(['clone', '-q', withCred(reader.token), dest]);
      expect(cloned.code, cloned.stderr).to.equal(0);
      expect(cloned.stderr).to.not.include(reader.token);
      const anon = await gitClient(['clone', '-q', `${s.url}${gitUrl}`, path.join(tempDir('cairn-hostile-git-'), 'anon')]);
      expect(anon.code).to.not.equal(0);
      expect(anon.stderr).to.match(/Authentication failed|could not read Username|401/);
      const info = await fetch(`${s.url}${gitUrl}/info/refs?service=git-upload-pack`);
      expect(info.status).to.equal(401);
      expect(info.headers.get('www-authenticate')).to.match(/^Basic realm="cairn"/);
      // Revoked: the next fetch fails.
      expect((await api(s.url, 'DELETE', `/v1/native/tokens/${reader.tokenId}`, { headers: root.headers })).status).to.equal(200);
      const fetched = await gitClient(['-C', dest, 'fetch', '-q', 'origin']);
      expect(fetched.code).to.not.equal(0);
      expect(fetched.stderr).to.match(/Authentication failed|401|could not read/);
    });

    it('takes a push for review from a contributor, not from a reader', async () => {
      const reader = await account('pushreader', 'reader');
      const writer = await account('pushwriter', 'contributor');
      const dest = path.join(tempDir('cairn-hostile-git-'), 'work');
      expect((await gitClient(['clone', '-q', withCred(reader.token), dest])).code).to.equal(0);
      await fsp.writeFile(path.join(dest, 'pushed.txt'), 'for review\n');
      expect((await gitClient(['add', '-A'], dest)).code).to.equal(0);
      expect((await gitClient(['commit', '-q', '-m', 'for review'], dest)).code).to.equal(0);
      const refused = await gitClient(['push', '-q', 'origin', 'HEAD:refs/for/main'], dest);
      expect(refused.code).to.not.equal(0);
      expect(refused.stderr).to.match(/403/);
      const pushed = await gitClient(['push', '-q', withCred(writer.token), 'HEAD:refs/for/main'], dest);
      expect(pushed.code, pushed.stderr).to.equal(0);
      expect(pushed.stderr).to.not.include(writer.token);
      const changes = await api(s.url, 'GET', `${AUTH}/${repo}/changes`, { headers: root.headers });
      expect(changes.json.changes.map((c: { owner: string }) => c.owner)).to.include('pushwriter');
    });
  });
});
