// The access gate on every route (docs/api.md "Accounts, tokens and roles"): one server with
// `--auth tokens`, a repository with something of each kind in it, and every row of the route
// table called by each kind of caller. Where `decide()` refuses, the answer is 401 (with a
// challenge) or 403, a `{"error"}` body that says what is needed, and the data directory is
// unchanged; where it allows, the gate let the request through (any answer but 401/403: a
// made-up id may well be 404, a minimal body 400/422; that is the handler's business).
// The refusals of all callers run first, on a quiet server, each caller's batch between two
// hashes of the data directory; then the allowed requests (which may change things).
import { expect } from 'chai';
import http from 'node:http';
import path from 'node:path';
import { ROUTES } from '../lib/http/routes.js';
import { decide, PERMISSIONS, type Principal, type Role, type Scope } from '../lib/domain/access.js';
import type { RouteSpec } from '../lib/http/route-types.js';
import { api, repoFiles, startTestServer, tempDir, until, type TestServer } from './helpers.js';
import { grantRoles, seedAdmin } from './access-seed.js';
import { Seeder } from './ui-seed.js';

const AUTH = '/v1/native/repository-authorities';

/**
 * Files that change on requests the gate lets through or refuses without being a change of
 * state: when each token was last used (a valid token's refused request still used it).
 * workflow.ckpt (a cache rewritten in the background) is left out by repoFiles itself.
 */
const CHANGE_ON_READS = new Set(['access-last-used.json']);

interface Caller {
  label: string;
  /** The Authorization header (none: anonymous). */
  token: string | null;
  /** What the gate should take the caller for; null: a token that does not authenticate. */
  principal: Principal | null;
  /** The caller's role in the repositories of the test. */
  role: Role | null;
}

interface Answer { status: number; headers: http.IncomingHttpHeaders; text: string }

/** One request from source address `from` (the failed-sign-in limit counts per address). */
function request(url: string, method: string, urlPath: string, headers: Record<string, string>, body: Buffer | null, from = '127.0.0.1'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request({ host: u.hostname, port: u.port, method, path: urlPath, localAddress: from, headers: { ...headers, ...(body ? { 'content-length': String(body.length) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

function dataFiles(dir: string): Promise<Record<string, string>> {
  return repoFiles(dir).then((all) => Object.fromEntries(Object.entries(all).filter(([p]) => !CHANGE_ON_READS.has(p))));
}

describe('the access gate on every route (--auth tokens)', function () {
  this.timeout(120_000);
  let s: TestServer;
  let repo: number;
  let doomed: number;
  const values: Record<string, string> = {};
  const callers: Caller[] = [];

  before(async () => {
    const dataDir = path.join(tempDir(), 'data');
    const root = await seedAdmin(dataDir, 'root');
    s = await startTestServer(dataDir, { auth: 'tokens', gitRefresh: false });
    const H = root.headers;
    // Content for the routes to find: a line, a task, a change with a patchset, a comment, a webhook, a worker job.
    const seed = await Seeder.register(s.url, 'matrix', root.token);
    repo = seed.repo;
    const base = await seed.snap({ 'a.txt': 'a\n' }, { moveLine: true });
    const rev = await seed.snap({ 'a.txt': 'b\n' }, { parent: base });
    const c = await seed.change('gate');
    const ps = await seed.patchset(c.change, base, rev, 'one');
    const comment = await seed.comment(c.change, { patchset_id: ps, author: 'root', anchor: { path: 'a.txt', line: 1 }, body: 'why?' });
    const job = (await seed.post(`/patchsets/${ps}:runCi`, { trigger: 'manual_rerun' })).job;
    const hook = await api(s.url, 'POST', `${AUTH}/${repo}/webhooks`, { json: { url: 'https://hooks.example.com/cairn', secret: 'a-webhook-secret-long-enough', active: false }, headers: H });
    expect(hook.status, hook.text).to.be.oneOf([200, 201]);
    // The retirement routes act on a second repository (a retirement started by an allowed caller leaves `repo` alone).
    doomed = (await Seeder.register(s.url, 'doomed', root.token)).repo;
    Object.assign(values, {
      repository_index: String(repo), line_name: 'main', snapshot_id: rev, task_ref: c.task, task_id: c.task,
      change_ref: c.change, patchset_id: ps, comment_id: comment.comment?.comment_id ?? comment.comment_id ?? 'comment-1',
      thread_id: comment.comment?.thread_id ?? comment.thread_id ?? 'thread-1', webhook_id: hook.json.webhook.webhook_id,
      delivery_id: 'delivery-999', worker_job_index: String(job.worker_job_index), plan_id: 'plan-999', plan_revision_id: 'rev-999',
      pack_id: 'f'.repeat(64), file_path: 'a.txt', restore_token: 'restore-made-up', account_name: 'ghost', token_id: 'token-999999',
      group_name: 'core', mirror_id: 'mirror-999', entry_id: 'entry-999', submission_id: 'land-999', commit_id: 'e'.repeat(40), asset: 'none.css',
    });

    // The callers: accounts made by the server admin, roles granted in both repositories.
    const account = async (name: string, scopes: Scope[] = ['read', 'write']): Promise<{ token: string; tokenId: string }> => {
      const made = await api(s.url, 'POST', '/v1/native/accounts', { json: { name, token: { name: 'matrix', scopes } }, headers: H });
      expect(made.status, made.text).to.equal(201);
      return { token: made.json.token.token, tokenId: made.json.token.token_id };
    };
    const roles: Record<string, Role> = { rita: 'reader', carl: 'contributor', mia: 'maintainer', ada: 'admin' };
    for (const r of [repo, doomed]) await grantRoles(s.url, H, r, roles);
    const who = (name: string, scopes: Scope[] | null, serverAdmin = false): Principal => ({ kind: 'account', name, serverAdmin, scopes: scopes && new Set(scopes), tokenId: 'x' });
    callers.push({ label: 'anonymous', token: null, principal: { kind: 'anonymous' }, role: null });
    callers.push({ label: 'an account with no role', token: (await account('nora')).token, principal: who('nora', ['read', 'write']), role: null });
    for (const [name, role] of Object.entries(roles)) callers.push({ label: role, token: (await account(name)).token, principal: who(name, ['read', 'write']), role });
    callers.push({ label: 'server admin', token: root.token, principal: who('root', ['read', 'write', 'admin', 'runner'], true), role: 'admin' });
    callers.push({ label: 'a runner-scope token', token: (await account('ci', ['runner'])).token, principal: who('ci', ['runner']), role: null });
    const readOnly = await api(s.url, 'POST', '/v1/native/tokens', { json: { name: 'read-only', scopes: ['read'], account: 'mia' }, headers: H });
    expect(readOnly.status, readOnly.text).to.equal(201);
    callers.push({ label: 'a read-only token of a maintainer', token: readOnly.json.token.token, principal: who('mia', ['read']), role: 'maintainer' });
    const gone = await account('rex');
    await grantRoles(s.url, H, repo, { rex: 'admin' });
    expect((await api(s.url, 'DELETE', `/v1/native/tokens/${gone.tokenId}`, { headers: H })).status).to.equal(200);
    callers.push({ label: 'a revoked token', token: gone.token, principal: null, role: 'admin' });
  });
  after(() => s?.stop());

  /** A concrete request for `route`: its path from the template and action, a minimal body of the right media type. */
  function requestFor(route: RouteSpec): { path: string; headers: Record<string, string>; body: Buffer | null } {
    const index = route.operation.startsWith('retirement.') ? String(doomed) : values.repository_index;
    let p = route.template.replace(/\{(\w+)\}/g, (_, name: string) => {
      if (name === 'repository_index') return index;
      if (!(name in values)) throw new Error(`${route.operation}: no value for {${name}}`);
      return encodeURIComponent(values[name]);
    });
    if (route.action) p += `:${route.action}`;
    // git.infoRefs is a reader's with git-upload-pack (git-receive-pack: see its own test below).
    if (route.operation === 'git.infoRefs' || route.operation === 'git.repositoryInfoRefs') p += '?service=git-upload-pack';
    if (route.body.kind === 'json') return { path: p, headers: { 'content-type': 'application/json' }, body: Buffer.from('{}') };
    if (route.body.kind === 'raw') return { path: p, headers: { 'content-type': route.body.mediaType }, body: Buffer.from('not really') };
    return { path: p, headers: {}, body: null };
  }

  /** What the gate should answer `caller` on `route`: allow, or the status of its refusal. */
  function expected(route: RouteSpec, caller: Caller, permission = route.permission): true | 401 | 403 {
    if (permission === 'public' || permission === 'promotion') return true;
    if (caller.principal === null) return 401;
    const role = route.template.includes('{repository_index}') ? caller.role : null;
    const d = decide(permission, caller.principal, role, route.operation);
    return d.allow ? true : d.status;
  }

  const send = (route: RouteSpec, caller: Caller, from?: string) => {
    const r = requestFor(route);
    const headers = { ...r.headers, ...(caller.token ? { authorization: `Bearer ${caller.token}` } : {}) };
    return request(s.url, route.method, r.path, headers, r.body, from);
  };

  it('has a known permission on every row', () => {
    for (const r of ROUTES) expect(PERMISSIONS as readonly string[], r.operation).to.include(r.permission);
  });

  it('refuses, with 401 or 403 and an error that says what is needed, exactly where decide() refuses, and changes nothing', async () => {
    let refusals = 0;
    let source = 0;
    // Background work the seeding started (indexes, checkpoints) settles first: two looks at the data directory agree.
    let last = JSON.stringify(await dataFiles(s.dataDir));
    await until('the data directory to settle after seeding', async () => {
      await new Promise((r) => setTimeout(r, 100));
      const now = JSON.stringify(await dataFiles(s.dataDir));
      const same = now === last;
      last = now;
      return same;
    });
    for (const caller of callers) {
      const before = await dataFiles(s.dataDir);
      for (const route of ROUTES) {
        const want = expected(route, caller);
        if (want === true) continue;
        refusals++;
        // A token that does not authenticate counts as a failed sign-in: each from its own address, so the limit (10 per address) is not what answers.
        const from = caller.principal === null ? `127.0.${1 + Math.floor(source / 200)}.${1 + (source++ % 200)}` : undefined;
        const res = await send(route, caller, from);
        const what = `${caller.label} on ${route.operation} (${route.permission})`;
        expect(res.status, `${what}: ${res.text}`).to.equal(want);
        const body = JSON.parse(res.text);
        expect(Object.keys(body), what).to.deep.equal(['error']);
        if (want === 401) {
          expect(res.headers['www-authenticate'], what).to.match(route.operation.startsWith('git.') ? /^Basic realm="cairn"/ : /^Bearer realm="cairn"/);
          expect(body.error, what).to.match(/token/);
        } else {
          expect(body.error, what).to.match(/needs the (reader|contributor|maintainer|admin) role|for server admins|needs a token with the (read|write|admin|runner) scope/);
        }
        if (caller.token) expect(res.text, what).to.not.include(caller.token);
      }
      expect(await dataFiles(s.dataDir), `the data directory after the refusals of ${caller.label}`).to.deep.equal(before);
    }
    expect(refusals).to.be.greaterThan(500);
  });

  it('lets through (neither 401 nor 403) exactly where decide() allows', async () => {
    // archive.promote (`promotion`) passes the gate for everyone: its own secret is checked by its
    // handler (lib/http/promote-access.ts, test/archive-promote-access.test.ts); on this server,
    // which follows no archive, it answers 409 before that, and is checked here like any row.
    let allowed = 0;
    // The destructive rows last: a repository admin's retirement start (on the second repository) and token revocation.
    const ordered = [...ROUTES].sort((a, b) => Number(a.operation.startsWith('retirement.')) - Number(b.operation.startsWith('retirement.')));
    for (const caller of callers) {
      if (caller.principal === null) continue; // a revoked token: only the public rows let it through, checked below
      for (const route of ordered) {
        if (expected(route, caller) !== true) continue;
        allowed++;
        const res = await send(route, caller);
        const what = `${caller.label} on ${route.operation} (${route.permission}): ${res.text}`;
        if (route.permission === 'session' && caller.principal?.kind === 'anonymous' && route.refusals.includes(401)) {
          // A `session` row lets everyone through the gate; those about the caller's own tokens and groups then ask the anonymous caller to sign in (their handler's 401, documented on the row).
          expect(res.status, what).to.not.equal(403);
          continue;
        }
        expect(res.status, what).to.not.be.oneOf([401, 403]);
      }
    }
    for (const route of ROUTES.filter((r) => r.permission === 'public')) {
      const res = await send(route, callers.find((c) => c.principal === null)!, '127.0.9.9');
      expect(res.status, `a revoked token on public ${route.operation}: ${res.text}`).to.not.be.oneOf([401, 403, 429]);
    }
    expect(allowed).to.be.greaterThan(500);
  });

  it('asks a contributor for git-receive-pack\'s advertisement (a push), a reader for git-upload-pack\'s', async () => {
    for (const [operation, at] of [['git.infoRefs', 'git/main.git'], ['git.repositoryInfoRefs', 'git.git']]) {
      const route = ROUTES.find((r) => r.operation === operation)!;
      const p = `${AUTH}/${repo}/${at}/info/refs?service=git-receive-pack`;
      for (const caller of callers.filter((c) => c.principal !== null)) {
        const want = expected(route, caller, 'contributor');
        const res = await request(s.url, 'GET', p, caller.token ? { authorization: `Bearer ${caller.token}` } : {}, null);
        if (want === true) expect(res.status, `${caller.label}: ${res.text}`).to.not.be.oneOf([401, 403]);
        else expect(res.status, `${caller.label}: ${res.text}`).to.equal(want);
      }
    }
  });
});
