// Change search over real HTTP (docs/api.md "Searching changes"): `GET changes?q=` with each
// term (status:, is:open, is:unresolved, reviewer:, file:, line:, title words), all terms
// together, newest first, paged with a cursor bound to the query; changes written after the
// first search are found (the lists follow the commits); after a restart the lists come from the
// workflow checkpoint's section with the log's tail applied (no build), and a damaged section or
// one of another version falls back to the build; fsck checks the section; bad queries refused
// with a clear 400.
import { expect } from 'chai';
import { promises as fsp, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { searchBuild, searchPaging, searchStats } from '../lib/authority/workflow/search.js';
import { SEARCH_SECTION } from '../lib/domain/workflow/search-index.js';
import { fsckAuthority } from '../lib/store/fsck.js';
import { decodeCheckpoint, encodeCheckpoint } from '../lib/store/workflow-checkpoint.js';
import { api, cli, expectError, ok, register, startTestServer, tempDir, until, type TestServer } from './helpers.js';

type Json = Record<string, any>;
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;

describe('change search', function () {
  this.timeout(120_000);
  const dataDir = path.join(tempDir(), 'data');
  let s: TestServer;
  let repo: number;
  let task: string;
  let base: string;
  const ids: Record<string, string> = {};
  const dir = path.join(tempDir(), 'tree');
  const snap = async (files: Record<string, string>, parent?: string) => {
    await fsp.rm(dir, { recursive: true, force: true });
    for (const [p, v] of Object.entries(files)) {
      await fsp.mkdir(path.dirname(path.join(dir, p)), { recursive: true });
      await fsp.writeFile(path.join(dir, p), v);
    }
    return (await push({ server: s.url, repo, line: 'main', dir, moveLine: parent === undefined, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
  };
  const post = (p: string, json: unknown) => api(s.url, 'POST', R(repo, p), { json });
  const search = async (q: string, extra = '') => ok(api(s.url, 'GET', R(repo, `/changes?q=${encodeURIComponent(q)}${extra}`)));
  const found = async (q: string) => (await search(q)).changes.map((c: Json) => c.title);
  const files = { 'lib/http/routes.ts': 'r\n', 'lib/store/log.ts': 'l\n', 'docs/api.md': 'd\n', 'README.md': 'x\n' };
  const make = async (title: string, edit: Record<string, string>, line = 'main') => {
    const c = (await ok(post('/changes', { task_id: task, title, base_line: line }))).change.change_id;
    const rev = await snap({ ...files, ...edit }, base);
    await ok(post(`/changes/${c}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: title, author_mode: 'human_only' }));
    ids[title] = c;
    return c;
  };

  before(async () => {
    s = await startTestServer(dataDir);
    repo = await register(s.url, 'search');
    base = await snap(files);
    await ok(api(s.url, 'PUT', R(repo, '/lines/dev'), { json: { head_snapshot_id: base } }));
    task = (await ok(post('/tasks', { title: 'T', intent: 'i' }))).task.task_id;
    await make('Fix the router crash', { 'lib/http/routes.ts': 'r2\n' });
    await make('Speed up the log writer', { 'lib/store/log.ts': 'l2\n' });
    await make('Document the router', { 'docs/api.md': 'd2\n' });
    await make('Router: fix paging', { 'lib/http/routes.ts': 'r3\n', 'docs/api.md': 'd3\n' }, 'dev');
    await make('Readme typo', { 'README.md': 'y\n' });
    // Reviews: a request from group core on the first; bob votes on the fourth.
    const ps = async (t: string) => (await ok(api(s.url, 'GET', R(repo, `/changes/${ids[t]}`)))).change.current_patchset_id;
    await ok(post(`/changes/${ids['Fix the router crash']}:requestReview`, { patchset_id: await ps('Fix the router crash'), reviewer_groups: ['core'] }));
    await ok(post(`/changes/${ids['Router: fix paging']}/reviews`, { patchset_id: await ps('Router: fix paging'), reviewer: 'bob', action: 'approve' }));
    // An unresolved thread on the second, a resolved one on the third.
    await ok(post(`/changes/${ids['Speed up the log writer']}/comments`, { patchset_id: await ps('Speed up the log writer'), author: 'ann', body: 'why?' }));
    await ok(post(`/changes/${ids['Document the router']}/comments`, { patchset_id: await ps('Document the router'), author: 'ann', body: 'ok', resolution: 'resolved' }));
    await ok(post(`/changes/${ids['Readme typo']}:close`, { status: 'abandoned' }));
  });
  after(async () => { await s.stop(); });

  it('matches title words, whole and case-insensitive, newest first', async () => {
    expect(await found('router')).to.deep.equal(['Router: fix paging', 'Document the router', 'Fix the router crash']);
    expect(await found('ROUTER fix')).to.deep.equal(['Router: fix paging', 'Fix the router crash']);
    expect(await found('rout')).to.deep.equal([]);
    expect(await found('nothing-like-this')).to.deep.equal([]);
  });

  it('filters by status, is:open, is:unresolved, reviewer, file and line, and combines terms', async () => {
    expect(await found('status:abandoned')).to.deep.equal(['Readme typo']);
    expect(await found('status:review')).to.deep.equal(['Fix the router crash']);
    expect(await found('is:open')).to.deep.equal(['Router: fix paging', 'Document the router', 'Speed up the log writer', 'Fix the router crash']);
    expect(await found('is:unresolved')).to.deep.equal(['Speed up the log writer']);
    expect(await found('reviewer:core')).to.deep.equal(['Fix the router crash']);
    expect(await found('reviewer:bob')).to.deep.equal(['Router: fix paging']);
    expect(await found('file:lib/http')).to.deep.equal(['Router: fix paging', 'Fix the router crash']);
    expect(await found('file:lib/http/routes.ts')).to.deep.equal(['Router: fix paging', 'Fix the router crash']);
    expect(await found('file:lib')).to.deep.equal(['Router: fix paging', 'Speed up the log writer', 'Fix the router crash']);
    expect(await found('file:lib/http/rout')).to.deep.equal([]);
    expect(await found('file:README.md')).to.deep.equal(['Readme typo']);
    expect(await found('line:dev')).to.deep.equal(['Router: fix paging']);
    expect(await found('router file:docs is:open line:main')).to.deep.equal(['Document the router']);
    expect(await found('owner:nobody')).to.deep.equal([]);
  });

  it('pages with a cursor bound to the query (its terms in any order)', async () => {
    const p1 = await search('router', '&limit=2');
    expect(p1.changes.map((c: Json) => c.title)).to.deep.equal(['Router: fix paging', 'Document the router']);
    expect(p1.count).to.equal(2);
    expect(p1.next_cursor).to.be.a('string');
    const p2 = await search('  router  ', `&limit=2&cursor=${p1.next_cursor}`);
    expect(p2.changes.map((c: Json) => c.title)).to.deep.equal(['Fix the router crash']);
    expect(p2.next_cursor).to.equal(null);
    const other = await api(s.url, 'GET', R(repo, `/changes?q=fix&limit=2&cursor=${p1.next_cursor}`));
    expectError(other, 400, 'cursor of another query');
    expect(other.json.error).to.match(/other filters/);
  });

  it('finds changes, patchsets and comments written after the first search', async () => {
    await found('router');
    const c = await make('Another router tweak', { 'lib/store/log.ts': 'l9\n' });
    expect(await found('router tweak')).to.deep.equal(['Another router tweak']);
    expect((await found('file:lib/store'))[0]).to.equal('Another router tweak');
    const ps = (await ok(api(s.url, 'GET', R(repo, `/changes/${c}`)))).change.current_patchset_id;
    await ok(post(`/changes/${c}/comments`, { patchset_id: ps, author: 'ann', body: 'hmm' }));
    expect(await found('is:unresolved')).to.deep.equal(['Another router tweak', 'Speed up the log writer']);
    await ok(post(`/changes/${c}:close`, { status: 'abandoned' }));
    expect(await found('is:unresolved is:open')).to.deep.equal(['Speed up the log writer']);
  });

  it('finds changes by owner and by a person asked to review', async () => {
    const c = (await ok(post('/changes', { task_id: task, title: 'Owned router work', base_line: 'main', owner: 'alice' }))).change;
    expect(c.owner).to.equal('alice');
    const rev = await snap({ ...files, 'lib/http/routes.ts': 'owned\n' }, base);
    const ps = (await ok(post(`/changes/${c.change_id}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' }))).patchset.patchset_id;
    await ok(post(`/changes/${c.change_id}:requestReview`, { patchset_id: ps, reviewers: ['carol'], requested_by: 'alice' }));
    expect(await found('owner:alice')).to.deep.equal(['Owned router work']);
    expect(await found('owner:alice reviewer:carol router')).to.deep.equal(['Owned router work']);
    expect(await found('reviewer:carol file:lib/http')).to.deep.equal(['Owned router work']);
    expect(await found('owner:carol')).to.deep.equal([]);
    await ok(post(`/changes/${c.change_id}:close`, { status: 'abandoned' }));
  });

  const repoDir = () => path.join(dataDir, 'repositories', String(repo));
  const ckptFile = () => path.join(repoDir(), 'workflow.ckpt');
  /** Rewrite workflow.ckpt with its search section changed by `edit` (undefined: dropped); the file stays whole. */
  const editSection = (edit: (b: Buffer) => Buffer | undefined) => {
    const ck = decodeCheckpoint(readFileSync(ckptFile()));
    const b = ck.sections.get(SEARCH_SECTION);
    expect(b, 'the checkpoint holds the search section').to.not.equal(undefined);
    const next = edit(Buffer.from(b!));
    if (next) ck.sections.set(SEARCH_SECTION, next);
    else ck.sections.delete(SEARCH_SECTION);
    writeFileSync(ckptFile(), encodeCheckpoint(ck));
  };
  const stats = () => ({ ...searchStats });

  it('after a restart answers from the checkpoint section at once, with the changes committed after the checkpoint (no build)', async () => {
    const want = await found('router');
    await s.stop();
    // The clean stop wrote a checkpoint with the lists; keep it, commit more, and put it back:
    // the next open starts from it and applies the log's tail (the new change, its patchset, a
    // review and a comment).
    const ckpt = readFileSync(ckptFile());
    expect(decodeCheckpoint(ckpt).sections.has(SEARCH_SECTION)).to.equal(true);
    s = await startTestServer(dataDir);
    const c = await make('Tail router entry', { 'docs/api.md': 'tail\n' });
    const ps = (await ok(api(s.url, 'GET', R(repo, `/changes/${c}`)))).change.current_patchset_id;
    await ok(post(`/changes/${c}/reviews`, { patchset_id: ps, reviewer: 'dora', action: 'approve' }));
    await ok(post(`/changes/${c}/comments`, { patchset_id: ps, author: 'ann', body: 'tail?' }));
    await s.stop();
    writeFileSync(ckptFile(), ckpt);
    const before = stats();
    s = await startTestServer(dataDir);
    expect(await found('router')).to.deep.equal(['Tail router entry', ...want]);
    expect(stats().loaded, 'the lists came from the section').to.equal(before.loaded + 1);
    expect(await found('file:lib/http reviewer:bob')).to.deep.equal(['Router: fix paging']);
    expect(await found('reviewer:dora file:docs tail')).to.deep.equal(['Tail router entry']);
    expect(await found('is:unresolved')).to.deep.equal(['Tail router entry', 'Another router tweak', 'Speed up the log writer']);
    expect(stats().builds, 'no search built the lists').to.equal(before.builds);
    expect(stats().refused).to.equal(before.refused);
    await ok(post(`/changes/${c}:close`, { status: 'abandoned' }));
    expect(await found('is:unresolved is:open')).to.deep.equal(['Speed up the log writer']);
  });

  it('fsck checks the section byte for byte against the records', async () => {
    await s.stop();
    expect((await fsckAuthority(repoDir(), repo)).problems).to.deep.equal([]);
    const good = readFileSync(ckptFile());
    // A list that names one more change (encoded whole, the file's CRC right): not the records'.
    editSection((b) => {
      const ck = decodeCheckpoint(good).sections.get(SEARCH_SECTION)!;
      expect(ck.equals(b)).to.equal(true);
      return Buffer.concat([b.subarray(0, b.length - 1), Buffer.from([b[b.length - 1] + 1])]);
    });
    expect((await fsckAuthority(repoDir(), repo)).problems.join('\n')).to.match(/workflow\.ckpt does not match the checkpoint rebuilt/);
    writeFileSync(ckptFile(), good);
    s = await startTestServer(dataDir);
  });

  for (const [what, edit] of [
    ['one that does not decode', (b: Buffer) => b.subarray(0, b.length - 3)],
    ['one of another version', (b: Buffer) => { const x = Buffer.from(b); x.writeUInt32LE(99, 0); return x; }],
    ['one that counts more changes than the log holds', (b: Buffer) => { const x = Buffer.from(b); x.writeUInt32LE(x.readUInt32LE(4) + 5, 4); return x; }],
  ] as [string, (b: Buffer) => Buffer][]) {
    it(`a checkpoint section that is ${what} is not used: the first search builds the lists, with the same answers`, async () => {
      const want = await found('router');
      const wantFile = await found('file:lib/http reviewer:bob');
      await s.stop();
      editSection(edit);
      const before = stats();
      s = await startTestServer(dataDir);
      expect(await found('router')).to.deep.equal(want);
      expect(stats().refused, 'the section was refused').to.equal(before.refused + 1);
      expect(stats().loaded).to.equal(before.loaded);
      expect(await found('file:lib/http reviewer:bob')).to.deep.equal(wantFile);
      expect(stats().builds, 'the first search built the lists').to.equal(before.builds + 1);
      // The next checkpoint holds the lists again.
      await s.stop();
      const after = stats();
      s = await startTestServer(dataDir);
      expect(await found('router')).to.deep.equal(want);
      expect(stats().loaded).to.equal(after.loaded + 1);
      expect(stats().builds).to.equal(after.builds);
    });
  }

  it('builds the lists in slices: other requests are answered meanwhile, both searches wait for it, a change created during it is found', async () => {
    const want = await found('router');
    await s.stop();
    // Without the section the first search builds the lists.
    editSection(() => undefined);
    s = await startTestServer(dataDir);
    // Every change a slice; the build waits at each slice end until the test lets it go.
    let reached = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    searchBuild.sliceMs = 0;
    searchBuild.pause = () => { reached++; return gate; };
    try {
      let settled = 0;
      const first = found('router').finally(() => { settled++; });
      const second = found('file:lib/http reviewer:bob').finally(() => { settled++; });
      await until('the build to reach a slice end', () => reached > 0);
      // The build is paused between slices: the server answers, and commits go on.
      const got = await ok(api(s.url, 'GET', R(repo, `/changes/${ids['Fix the router crash']}`)));
      expect(got.change.title).to.equal('Fix the router crash');
      const late = (await ok(post('/changes', { task_id: task, title: 'Late router change', base_line: 'main' }))).change.change_id;
      expect(settled, 'searches settled before the build was let go').to.equal(0);
      release();
      // The search waited for the build, and the change created during it is among its rows.
      expect(await first).to.deep.equal(['Late router change', ...want]);
      expect(await second).to.deep.equal(['Router: fix paging']);
      expect(reached, 'the build paused at slice ends').to.be.at.least(1);
      expect(await found('late router')).to.deep.equal(['Late router change']);
      await ok(post(`/changes/${late}:close`, { status: 'abandoned' }));
    } finally {
      searchBuild.sliceMs = 20;
      searchBuild.pause = null;
      release();
    }
  });

  it('says which named people no change names (200 with notes), and shows each row\'s owner, CI, votes and unresolved threads', async () => {
    const none = await search('owner:nobody reviewer:noone cc:nocc');
    expect(none.changes).to.deep.equal([]);
    expect(none.notes).to.deep.equal([
      'no one named "nobody" owns a change in this repository',
      'no one named "noone" was asked to review or reviewed a change in this repository',
      'no one named "nocc" is copied on a change in this repository',
    ]);
    // A known person with nothing matching: no note.
    const known = await search('owner:alice readme');
    expect(known.changes).to.deep.equal([]);
    expect(known.notes).to.deep.equal([]);
    const rows = await search('router');
    expect(rows.notes).to.deep.equal([]);
    expect(rows.search_rows.map((r: Json) => r.change_id)).to.deep.equal(rows.changes.map((c: Json) => c.change_id));
    const owned = rows.search_rows.find((r: Json) => r.change_id === rows.changes.find((c: Json) => c.title === 'Owned router work').change_id);
    expect(owned).to.deep.equal({ change_id: owned.change_id, owner: 'alice', ci: 'none', votes: { approvals: 0, blocking: 0 }, unresolved_threads: 0 });
    // Without a search the list is as it was.
    const plain = await ok(api(s.url, 'GET', R(repo, '/changes')));
    expect(plain).to.not.have.property('notes');
    expect(plain).to.not.have.property('search_rows');
  });

  it('owner:self, reviewer:@me and cc:self without a caller identity: 422 saying to sign in', async () => {
    for (const q of ['owner:self', 'reviewer:@me', 'cc:SELF router']) {
      const res = await api(s.url, 'GET', R(repo, `/changes?q=${encodeURIComponent(q)}`));
      expectError(res, 422, q);
      expect(res.json.error, q).to.match(/means you, and this request names no one: sign in/);
    }
  });

  it('refuses bad queries with a clear 400', async () => {
    for (const [q, msg] of [
      ['', /q is empty/],
      ['   ', /q is empty/],
      ['status:merged', /status must be one of/],
      ['is:closed', /is: must be open, unresolved or wip/],
      ['@me', /@me is a name, not a term of its own/],
      ['topic:a topic:b', /topic: may be given once/],
      ['color:red', /unknown term "color:"/],
      ['file:../etc', /file: must be a relative path/],
      ['file:/abs', /file: must be a relative path/],
      ['owner:', /owner: needs a value/],
      ['status:review status:draft', /status: may be given once/],
      ['"unclosed', /quote is not closed/],
      ['---', /no letter or digit/],
      [Array.from({ length: 17 }, (_, i) => `w${i}`).join(' '), /more than 16/],
      ['x'.repeat(1025), /longer than 1024/],
    ] as [string, RegExp][]) {
      const res = await api(s.url, 'GET', R(repo, `/changes?q=${encodeURIComponent(q)}`));
      expectError(res, 400, q);
      expect(res.json.error, q).to.match(msg);
    }
    expectError(await api(s.url, 'GET', R(repo, '/changes?q=router&status=draft')), 400, 'q with status');
    expectError(await api(s.url, 'GET', R(repo, '/changes?q=a&q=b')), 400, 'q twice');
  });

  it('serves the UI shell at /ui/repos/N/search, and 404 below it', async () => {
    const page = await fetch(`${s.url}/ui/repos/${repo}/search?q=router`);
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/text\/html/);
    expect((await fetch(`${s.url}/ui/repos/${repo}/search/more`)).status).to.equal(404);
  });

  it('cairn change list -q searches', async () => {
    const res = await cli(['change', 'list', '--server', s.url, '--repo', String(repo), '-q', 'router file:docs', '--json']);
    expect(res.code, res.stderr).to.equal(0);
    expect(JSON.parse(res.stdout).changes.map((c: Json) => c.title)).to.deep.equal(['Tail router entry', 'Router: fix paging', 'Document the router']);
  });
});

describe('change search over wide patchsets', function () {
  this.timeout(180_000);
  const dataDir = path.join(tempDir(), 'data');
  const dir = path.join(tempDir(), 'tree');
  let s: TestServer;
  let repo: number;
  let task: string;
  const titles: string[] = [];
  const post = (p: string, json: unknown) => api(s.url, 'POST', R(repo, p), { json });
  const search = async (q: string, extra = '') => ok(api(s.url, 'GET', R(repo, `/changes?q=${encodeURIComponent(q)}${extra}`)));
  /** Every page of `q` (pages of `limit`), concatenated. */
  const allPages = async (q: string, limit: number) => {
    const out: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Json = await search(q, `&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      out.push(...page.changes.map((c: Json) => c.title));
      cursor = page.next_cursor;
    } while (cursor);
    return out;
  };

  before(async () => {
    s = await startTestServer(dataDir);
    repo = await register(s.url, 'wide');
    // 100 files in directories of their own, four segments deep: every patchset touches 200
    // one- and two-segment prefixes (more than the 64 a list holds), so each change is on the
    // "wide" list and every file: search checks it against its records.
    const snap = async (v: string, parent?: string) => {
      await fsp.rm(dir, { recursive: true, force: true });
      for (let i = 0; i < 100; i++) {
        const p = path.join(dir, `d${i}`, 'sub', 'deep', 'f.txt');
        await fsp.mkdir(path.dirname(p), { recursive: true });
        await fsp.writeFile(p, `${v}\n`);
      }
      return (await push({ server: s.url, repo, line: 'main', dir, moveLine: parent === undefined, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
    };
    const base = await snap('a');
    const rev = await snap('b', base);
    task = (await ok(post('/tasks', { title: 'T', intent: 'i' }))).task.task_id;
    for (let i = 0; i < 12; i++) {
      const title = `wide ${i}`;
      const c = (await ok(post('/changes', { task_id: task, title, base_line: 'main' }))).change.change_id;
      await ok(post(`/changes/${c}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: title, author_mode: 'human_only' }));
      titles.unshift(title);
    }
  });
  after(async () => { await s.stop(); });

  it('a file: page over wide patchsets yields to the event loop between checks: /healthz and commits are answered meanwhile, and the rows and pages are the same', async () => {
    const want = {
      deep: await allPages('file:d3/sub/deep/f.txt', 100),
      top: await allPages('file:d7', 100),
      none: await allPages('file:nowhere/at/all', 100),
      paged: await allPages('file:d5/sub', 5),
    };
    expect(want.deep).to.deep.equal(titles);
    expect(want.top).to.deep.equal(titles);
    expect(want.none).to.deep.equal([]);
    expect(want.paged).to.deep.equal(titles);
    // Every record read a slice: the page waits at each slice end until the test lets it go.
    let reached = 0;
    let release!: () => void;
    let gate = new Promise<void>((r) => { release = r; });
    searchPaging.sliceMs = 0;
    searchPaging.pause = () => { reached++; return gate; };
    try {
      let settled = false;
      const paused = search('file:d3/sub/deep/f.txt', '&limit=100').finally(() => { settled = true; });
      await until('the page to reach a slice end', () => reached > 0);
      // The page is paused mid-walk: the server answers, and commits go on.
      expect((await fetch(`${s.url}/healthz`)).status).to.equal(200);
      expect((await ok(api(s.url, 'GET', R(repo, '/changes?limit=1')))).changes).to.have.length(1);
      const late = (await ok(post('/changes', { task_id: task, title: 'late', base_line: 'main' }))).change.change_id;
      expect(settled, 'the search settled before it was let go').to.equal(false);
      release();
      expect((await paused).changes.map((c: Json) => c.title)).to.deep.equal(want.deep);
      await ok(post(`/changes/${late}:close`, { status: 'abandoned' }));
      // Paced at every step, every query answers the same rows and the same pages.
      const pauses = reached;
      gate = Promise.resolve();
      expect(await allPages('file:d3/sub/deep/f.txt', 100)).to.deep.equal(want.deep);
      expect(await allPages('file:d7', 100)).to.deep.equal(want.top);
      expect(await allPages('file:nowhere/at/all', 100)).to.deep.equal(want.none);
      expect(await allPages('file:d5/sub', 5)).to.deep.equal(want.paged);
      expect(await allPages('is:open', 4)).to.deep.equal(titles);
      expect(reached, 'the pages paused between their checks').to.be.greaterThan(pauses + 12);
    } finally {
      searchPaging.sliceMs = 20;
      searchPaging.pause = null;
      release();
    }
  });
});

describe('change search: the caller as self / @me', function () {
  this.timeout(120_000);
  const H = 'X-Cairn-User';
  let s: TestServer;
  before(async () => { s = await startTestServer(undefined, { identity: { header: H } }); });
  after(async () => { await s.stop(); });

  it('owner:self, reviewer:@me and cc:self are the caller\'s identity; the cursor is bound to the name', async () => {
    const repo = await register(s.url, 'search-self');
    const as = (who: string) => ({ headers: { [H]: who } });
    await ok(api(s.url, 'PUT', R(repo, '/lines/main'), { json: { head_snapshot_id: null } }));
    const task = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } }))).task.task_id;
    const mk = async (title: string, who: string) => (await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: task, title, base_line: 'main' }, ...as(who) }))).change.change_id as string;
    const a1 = await mk('Alice one', 'alice');
    const a2 = await mk('Alice two', 'alice');
    const b1 = await mk('Bob one', 'bob');
    await ok(api(s.url, 'POST', R(repo, `/changes/${b1}:setFlags`), { json: { cc: ['alice'] }, ...as('bob') }));
    const q = async (query: string, who: string, extra = '') => ok(api(s.url, 'GET', R(repo, `/changes?q=${encodeURIComponent(query)}${extra}`), as(who)));
    const titles = (res: Json) => res.changes.map((c: Json) => c.title);
    expect(titles(await q('owner:self', 'alice'))).to.deep.equal(['Alice two', 'Alice one']);
    expect(titles(await q('owner:@me', 'bob'))).to.deep.equal(['Bob one']);
    expect(titles(await q('cc:@me', 'alice'))).to.deep.equal(['Bob one']);
    // Someone with no changes: self is not "unknown" (no note), the list is just empty.
    const carol = await q('owner:self', 'carol');
    expect(carol.changes).to.deep.equal([]);
    expect(carol.notes).to.deep.equal(['no one named "carol" owns a change in this repository']);
    // A cursor of alice's owner:self is alice's: bob's page with it is refused.
    const first = await q('owner:self', 'alice', '&limit=1');
    expect(titles(first)).to.deep.equal(['Alice two']);
    expect(titles(await q('owner:self', 'alice', `&limit=1&cursor=${encodeURIComponent(first.next_cursor)}`))).to.deep.equal(['Alice one']);
    expectError(await api(s.url, 'GET', R(repo, `/changes?q=owner:self&limit=1&cursor=${encodeURIComponent(first.next_cursor)}`), as('bob')), 400, 'another caller\'s cursor');
    void a1; void a2;
  });
});
