// Fetchable patchsets (docs/git.md "Fetch a patchset"): every patchset has a ref in Gerrit's
// layout, refs/changes/<nn>/<change>/<ps>, that git's client fetches from the line's URL — a
// pushed one (the pushed commit as it was) and one the server made (applied suggestions: a
// commit on the base with the pushed commit's message and Change-Id, so an amend of it pushed
// again updates the same change). The push prints the fetch command.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import { AccessBook } from '../lib/authority/access.js';
import { importGit } from '../lib/client/git-import.js';
import { NO_PROGRESS } from '../lib/client/progress.js';
import { Layout } from '../lib/store/layout.js';
import { api, cli, exportRepo, ok, onTty, register, restoreRepo, startTestServer, tempDir, type TestServer } from './helpers.js';
import { commit, git, gitClient, hasGit, runClient, servedClone } from './git-fixture.js';

const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const client = gitClient;

(hasGit ? describe : describe.skip)('fetchable patchsets (refs/changes/…)', function () {
  this.timeout(180_000);
  let s: TestServer;
  let repo: number;
  let url: string;
  let dir: string;
  const get = (p: string) => ok(api(s.url, 'GET', R(repo, p)));
  const post = (p: string, json: unknown) => ok(api(s.url, 'POST', R(repo, p), { json }));

  before(async () => {
    s = await startTestServer();
    ({ repo, lineUrl: url, dir } = await servedClone(s.url, 'git-refs'));
  });
  after(async () => { await s?.stop(); });

  const ok0 = (r: { code: number | null; stderr: string }) => expect(r.code, r.stderr).to.equal(0);

  it('a pushed patchset and one made by applying a suggestion are fetched by their refs; the push prints the fetch command', async () => {
    const key = `I${createHash('sha1').update('refs').digest('hex')}`;
    await fsp.writeFile(path.join(dir, 'greeting.txt'), 'hello\nworld\n');
    ok0(await client(['-C', dir, 'add', '-A']));
    ok0(await client(['-C', dir, 'commit', '-q', '-m', `Greet\n\nChange-Id: ${key}\n`]));
    const pushedId = (await client(['-C', dir, 'rev-parse', 'HEAD'])).stdout.trim();
    const mainId = (await client(['-C', dir, 'rev-parse', 'HEAD~1'])).stdout.trim();
    const pushed = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
    ok0(pushed);
    expect(pushed.stderr).to.include(`remote:   fetch: git fetch ${url} refs/changes/01/1/1 && git checkout FETCH_HEAD`);

    // The pushed patchset: its ref names the very commit pushed.
    const other = path.join(tempDir('cairn-fetch-'), 'other');
    ok0(await client(['clone', '-q', url, other]));
    const f1 = await client(['-C', other, 'fetch', url, 'refs/changes/01/1/1']);
    ok0(f1);
    expect((await client(['-C', other, 'rev-parse', 'FETCH_HEAD'])).stdout.trim()).to.equal(pushedId);
    ok0(await client(['-C', other, 'checkout', '-q', 'FETCH_HEAD']));
    expect(await fsp.readFile(path.join(other, 'greeting.txt'), 'utf8')).to.equal('hello\nworld\n');

    // A suggestion applied through the API: patchset 2, made by the server.
    const ps1 = (await get('/changes/change-1')).change.current_patchset_id;
    const c = (await post('/changes/change-1/comments', { patchset_id: ps1, author: 'bob', body: 'louder', anchor: { path: 'greeting.txt', line: 2 }, suggestion: 'WORLD\n' })).comment.comment_id;
    const ps2 = (await post('/changes/change-1/patchsets:applySuggestions', { author: 'ada@example.org', comment_ids: [c] })).patchset;
    expect(ps2.patchset_number).to.equal(2);

    const ls = await client(['ls-remote', url]);
    ok0(ls);
    expect(ls.stdout).to.include('\trefs/changes/01/1/1\n').and.to.include('\trefs/changes/01/1/2\n');
    const f2 = await client(['-C', other, 'fetch', url, 'refs/changes/01/1/2']);
    ok0(f2);
    ok0(await client(['-C', other, 'checkout', '-q', 'FETCH_HEAD']));
    expect(await fsp.readFile(path.join(other, 'greeting.txt'), 'utf8')).to.equal('hello\nWORLD\n');
    // On the base (main's commit), with the pushed commit's message and Change-Id: an amend goes on as this change.
    expect((await client(['-C', other, 'rev-parse', 'HEAD~1'])).stdout.trim()).to.equal(mainId);
    const message = (await client(['-C', other, 'log', '-1', '--format=%B'])).stdout;
    expect(message).to.include('Greet').and.to.include(`Change-Id: ${key}`);
    expect((await client(['-C', other, 'log', '-1', '--format=%an <%ae>|%cn'])).stdout.trim()).to.equal('Ada <ada@example.org>|cairn');

    // cairn change show says how to fetch the newest patchset (and the selected one when older).
    const shown = await onTty(['change', 'show', '--server', s.url, '--repo', String(repo), 'change-1']);
    expect(shown.stdout).to.include(`fetch ps-2: git fetch ${s.url}${R(repo, '/git.git')} refs/changes/01/1/2 && git checkout FETCH_HEAD`);

    // Going on from it: amend, push, patchset 3 of the same change.
    await fsp.writeFile(path.join(other, 'greeting.txt'), 'hello\nWORLD!\n');
    ok0(await client(['-C', other, 'commit', '-q', '-a', '--amend', '--no-edit']));
    const again = await client(['-C', other, 'push', url, 'HEAD:refs/for/main']);
    ok0(again);
    expect(again.stderr).to.include('Updated change (change-1.ps-3)');
    expect((await get('/changes/change-1')).change.patchset_count).to.equal(3);

    // The same ids again from a fresh server process's shadow: derived from stored data alone.
    const ids = (await client(['ls-remote', url, 'refs/changes/*'])).stdout;
    expect(ids.split('\n').filter(Boolean)).to.have.length(3);
  });

  it('a commit reachable from no served ref is still refused (the refs/changes/ prefix is what widens a line\'s URL)', async () => {
    // A want of an object id the shadow does not serve: the guard refuses it as before.
    const other = path.join(tempDir('cairn-fetch-'), 'other');
    ok0(await client(['clone', '-q', url, other]));
    const bogus = await client(['-C', other, 'fetch', url, '1234567890123456789012345678901234567890']);
    expect(bogus.code).to.not.equal(0);
  });
});


/** A source repository with branches main and feature (feature one commit ahead). */
async function twoBranches(): Promise<string> {
  const src = path.join(tempDir('cairn-git-'), 'src');
  await fsp.mkdir(src, { recursive: true });
  git(src, ['init', '-q', '-b', 'main']);
  await fsp.writeFile(path.join(src, 'README.md'), '# demo\n');
  git(src, ['add', '-A']);
  commit(src, 'first\n');
  git(src, ['checkout', '-q', '-b', 'feature']);
  await fsp.writeFile(path.join(src, 'feature.txt'), 'on feature\n');
  git(src, ['add', '-A']);
  commit(src, 'feature work\n');
  git(src, ['checkout', '-q', 'main']);
  return src;
}

(hasGit ? describe : describe.skip)('the repository\'s URL ({repo}/git.git): every line a branch, HEAD on main', function () {
  this.timeout(180_000);
  let s: TestServer;
  let repo: number;
  let repoUrl: string;
  const ok0 = (r: { code: number | null; stderr: string }) => expect(r.code, r.stderr).to.equal(0);

  before(async () => {
    s = await startTestServer();
    repo = await register(s.url, 'git-repo-url');
    const src = await twoBranches();
    await importGit({ server: s.url, repo, source: src, ref: 'refs/heads/main', line: 'main', progress: NO_PROGRESS });
    await importGit({ server: s.url, repo, source: src, ref: 'refs/heads/feature', line: 'feature', progress: NO_PROGRESS });
    repoUrl = `${s.url}${R(repo, '/git.git')}`;
  });
  after(async () => { await s?.stop(); });

  it('git clone gives a checkout of main and every line as a branch; git clone -b LINE checks the line out', async () => {
    const d1 = path.join(tempDir('cairn-clone-'), 'd1');
    ok0(await client(['clone', '-q', repoUrl, d1]));
    expect((await client(['-C', d1, 'symbolic-ref', 'HEAD'])).stdout.trim()).to.equal('refs/heads/main');
    expect(await fsp.readFile(path.join(d1, 'README.md'), 'utf8')).to.equal('# demo\n');
    const remote = (await client(['-C', d1, 'branch', '-r'])).stdout;
    expect(remote).to.include('origin/main').and.to.include('origin/feature');
    const d2 = path.join(tempDir('cairn-clone-'), 'd2');
    ok0(await client(['clone', '-q', '-b', 'feature', repoUrl, d2]));
    expect(await fsp.readFile(path.join(d2, 'feature.txt'), 'utf8')).to.equal('on feature\n');
    // The per-line URL still serves its line alone.
    const one = await client(['ls-remote', `${s.url}${R(repo, '/git/feature.git')}`]);
    ok0(one);
    expect(one.stdout).to.include('refs/heads/feature').and.not.include('refs/heads/main');
  });

  it('hostile requests to the repository\'s URL: a malformed upload-pack body, a want of no served commit, the dumb protocol: refused, never a 500', async () => {
    const post = (body: Buffer) => api(s.url, 'POST', R(repo, '/git.git/git-upload-pack'), { headers: { 'content-type': 'application/x-git-upload-pack-request' }, body, contract: false });
    const pkt = (t: string) => Buffer.concat([Buffer.from((Buffer.byteLength(t) + 4).toString(16).padStart(4, '0')), Buffer.from(t)]);
    const garbage = await post(Buffer.from('zzzz not a pkt-line'));
    expect(garbage.status).to.be.lessThan(500);
    // An empty request: refused before git runs, as a whole answer (git would fail after a 200).
    const empty = await post(Buffer.alloc(0));
    expect(empty.status).to.equal(400);
    expect(empty.json.error).to.match(/empty body/);
    const unserved = await post(Buffer.concat([pkt(`want ${'ab'.repeat(20)}\n`), Buffer.from('0000'), pkt('done\n')]));
    expect(unserved.status).to.be.lessThan(500);
    expect(unserved.text).to.include('not our ref');
    const dumb = await api(s.url, 'GET', R(repo, '/git.git/info/refs'));
    expect(dumb.status).to.equal(400);
    expect(dumb.json.error).to.match(/smart HTTP/);
  });

  it('takes a push for review as a line\'s URL does (its advertisement names the branches alone)', async () => {
    const d = path.join(tempDir('cairn-clone-'), 'd');
    ok0(await client(['clone', '-q', repoUrl, d]));
    await fsp.writeFile(path.join(d, 'new.txt'), 'new\n');
    ok0(await client(['-C', d, 'add', '-A']));
    ok0(await client(['-C', d, 'commit', '-q', '-m', `New\n\nChange-Id: I${createHash('sha1').update('repo-url').digest('hex')}\n`]));
    const pushed = await client(['-C', d, 'push', repoUrl, 'HEAD:refs/for/main']);
    ok0(pushed);
    expect(pushed.stderr).to.include('New change:').and.to.match(/fetch: git fetch \S+\/git\.git refs\/changes\/01\/1\/1/);
    // The same commit again: its patchset's ref is not in a push's advertisement, so git sends it and the server says so.
    const again = await client(['-C', d, 'push', repoUrl, 'HEAD:refs/for/main']);
    expect(again.stderr).to.include('no new changes');
  });

  it('an archived line is no longer a branch of the repository\'s URL', async () => {
    const head = (await ok(api(s.url, 'GET', R(repo, '/lines/main')))).head_snapshot_id;
    await ok(api(s.url, 'PUT', R(repo, '/lines/gone'), { json: { head_snapshot_id: head } }));
    expect((await client(['ls-remote', repoUrl])).stdout).to.include('refs/heads/gone');
    await ok(api(s.url, 'POST', R(repo, '/lines/gone:close'), { json: { status: 'archived' } }));
    const after = await client(['ls-remote', repoUrl]);
    ok0(after);
    expect(after.stdout).to.not.include('refs/heads/gone');
  });

  it('export-git prints a clone command that works as printed, for any line', async () => {
    const out = path.join(tempDir('cairn-export-'), 'out.git');
    const r = await cli(['export-git', '--server', s.url, '--repo', String(repo), '--line', 'feature', '--json', out]);
    expect(r.code, r.stderr).to.equal(0);
    const printed = JSON.parse(r.stdout).clone as string;
    expect(printed, r.stdout).to.equal(`git clone -b feature ${repoUrl}`);
    const cwd = tempDir('cairn-printed-');
    ok0(await runClient('sh', ['-c', printed!], cwd));
    expect(await fsp.readFile(path.join(cwd, 'git.git'.replace(/\.git$/, ''), 'feature.txt'), 'utf8')).to.equal('on feature\n');
  });
});

(hasGit ? describe : describe.skip)('git serving needs the reader role: the repository\'s URL and the patchsets\' refs', function () {
  this.timeout(120_000);
  let s: TestServer;
  let repo: number;
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  let root: string;
  let bob: string;

  before(async () => {
    const dataDir = path.join(tempDir(), 'data');
    mkdirSync(dataDir, { recursive: true });
    const book = AccessBook.open(new Layout(dataDir));
    try {
      await book.addAccount(null, 'root', true);
      root = (await book.createToken(null, 'root', 'setup', ['read', 'write', 'admin'])).token;
    } finally {
      await book.close();
    }
    s = await startTestServer(dataDir, { auth: 'tokens' });
    const reg = await api(s.url, 'POST', '/v1/native/repository-authorities', { json: { repository_name: 'refs', namespace: 't1', policy_flags: 0 }, headers: bearer(root) });
    repo = reg.json.repository.repository_index;
    bob = (await api(s.url, 'POST', '/v1/native/accounts', { json: { name: 'bob', token: { name: 'laptop' } }, headers: bearer(root) })).json.token.token;
  });
  after(async () => { await s?.stop(); });

  it('401 without a token, 403 without a role, on both URLs; a reader is served', async () => {
    for (const p of ['/git.git/info/refs?service=git-upload-pack', '/git/main.git/info/refs?service=git-upload-pack']) {
      const anon = await api(s.url, 'GET', R(repo, p));
      expect(anon.status, p).to.equal(401);
      expect(anon.headers.get('www-authenticate')).to.match(/^Basic/);
      expect((await api(s.url, 'GET', R(repo, p), { headers: bearer(bob) })).status, p).to.equal(403);
    }
    const upload = await api(s.url, 'POST', R(repo, '/git.git/git-upload-pack'), { headers: { 'content-type': 'application/x-git-upload-pack-request' }, body: Buffer.from('0000') });
    expect(upload.status).to.equal(401);
    const push = await api(s.url, 'POST', R(repo, '/git.git/git-receive-pack'), { headers: { ...bearer(bob), 'content-type': 'application/x-git-receive-pack-request' }, body: Buffer.from('0000') });
    expect(push.status).to.equal(403);
    // git itself: a fetch of a patchset's ref without credentials is refused.
    const anonFetch = await client(['ls-remote', `${s.url}${R(repo, '/git.git')}`, 'refs/changes/*']);
    expect(anonFetch.code).to.not.equal(0);
    await ok(api(s.url, 'PATCH', R(repo, '/access'), { json: { grant: [{ subject: 'user:bob', role: 'reader' }] }, headers: bearer(root) }));
    const reader = await api(s.url, 'GET', R(repo, '/git.git/info/refs?service=git-upload-pack'), { headers: bearer(bob) });
    // Served (the repository has no line yet: nothing to advertise but the capabilities).
    expect(reader.status).to.equal(200);
  });
});

(hasGit ? describe : describe.skip)('import-git --all: every branch a line, tags read-only, served and mirrored', function () {
  this.timeout(180_000);
  let s: TestServer;
  let repo: number;
  let src: string;
  let remotes: string;
  const ok0 = (r: { code: number | null; stderr: string }) => expect(r.code, r.stderr).to.equal(0);

  before(async () => {
    remotes = path.join(tempDir('cairn-mirror-remotes-'), 'remotes');
    await fsp.mkdir(remotes, { recursive: true });
    s = await startTestServer(undefined, { gitMirrors: { fileRoot: remotes, allow: ['127.0.0.1'], backoffBaseMs: 50 } });
    repo = await register(s.url, 'import-all');
    src = await twoBranches();
    git(src, ['tag', 'v0.1', 'main']);
    git(src, ['tag', '-a', '-m', 'the feature release\n', 'v1.0', 'feature']);
    // A tag of a commit no branch holds: left out, and said.
    git(src, ['checkout', '-q', '--orphan', 'loose']);
    commit(src, 'loose\n');
    git(src, ['tag', 'nowhere']);
    git(src, ['checkout', '-q', 'main']);
    git(src, ['branch', '-D', 'loose']);
  });
  let stopped = false;
  after(async () => { if (!stopped) await s?.stop(); });

  it('imports each branch onto its line and records the tags; a clone of the repository\'s URL has them, with the source\'s ids', async () => {
    const r = await cli(['import-git', '--server', s.url, '--repo', String(repo), '--all', '-q', '--json', src]);
    expect(r.code, r.stderr).to.equal(0);
    const out = JSON.parse(r.stdout);
    expect(out.lines.map((l: { line: string }) => l.line).sort()).to.deep.equal(['feature', 'main']);
    expect(out.tags).to.deep.include({ recorded: 2, unchanged: 0 });
    expect(out.tags.skipped.map((t: { name: string }) => t.name)).to.deep.equal(['nowhere']);

    const repoUrl = `${s.url}${R(repo, '/git.git')}`;
    const d = path.join(tempDir('cairn-clone-'), 'd');
    ok0(await client(['clone', '-q', repoUrl, d]));
    expect((await client(['-C', d, 'tag', '-l'])).stdout.split('\n').filter(Boolean)).to.deep.equal(['v0.1', 'v1.0']);
    expect((await client(['-C', d, 'cat-file', '-t', 'v1.0'])).stdout.trim()).to.equal('tag');
    expect((await client(['-C', d, 'rev-parse', 'v1.0'])).stdout.trim()).to.equal(git(src, ['rev-parse', 'v1.0']).trim());
    expect((await client(['-C', d, 'rev-parse', 'v0.1'])).stdout.trim()).to.equal(git(src, ['rev-parse', 'main']).trim());

    // Read-only: a second import says the same and changes nothing; another target is refused.
    const again = await cli(['import-git', '--server', s.url, '--repo', String(repo), '--all', '-q', '--json', src]);
    expect(again.code, again.stderr).to.equal(0);
    expect(JSON.parse(again.stdout).tags).to.deep.include({ recorded: 0, unchanged: 2 });
    const moved = await api(s.url, 'POST', R(repo, '/git/tags'), { json: { tags: [{ name: 'v0.1', commit_id: git(src, ['rev-parse', 'feature']).trim() }] } });
    expect(moved.status, moved.text).to.equal(200);
    expect(moved.json.refused[0].reason).to.match(/read-only/);
    // Malformed: 400, nothing written.
    const bad = await api(s.url, 'POST', R(repo, '/git/tags'), { json: { tags: [{ name: 'ok', commit_id: git(src, ['rev-parse', 'main']).trim() }, { name: 'bad..name', commit_id: 'a'.repeat(40) }] } });
    expect(bad.status).to.equal(400);
    const forged = await api(s.url, 'POST', R(repo, '/git/tags'), { json: { tags: [{ name: 'forged', commit_id: git(src, ['rev-parse', 'main']).trim(), raw: Buffer.from(`object ${'b'.repeat(40)}\ntype commit\ntag forged\n\nx\n`).toString('base64') }] } });
    expect(forged.status).to.equal(400);
    ok0(await client(['-C', d, 'fetch', '-q', '--tags', repoUrl]));
    expect((await client(['-C', d, 'tag', '-l'])).stdout.split('\n').filter(Boolean)).to.deep.equal(['v0.1', 'v1.0']);
  });

  it('a mirror of a line pushes the tags the line reaches', async () => {
    const remote = path.join(remotes, 'tags.git');
    git(path.dirname(remote), ['init', '-q', '--bare', remote]);
    const res = await api(s.url, 'POST', R(repo, '/git-mirrors'), { json: { line: 'feature', url: `file://${remote}` } });
    expect(res.status, res.text).to.equal(201);
    const until = async (): Promise<string> => {
      for (let i = 0; i < 600; i++) {
        const m = (await api(s.url, 'GET', R(repo, `/git-mirrors/${res.json.mirror.mirror_id}`))).json.mirror;
        if (m.state === 'ok' && m.last_pushed_commit_id) return m.last_pushed_commit_id;
        if (m.state === 'diverged') throw new Error(JSON.stringify(m));
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error('the mirror never pushed');
    };
    await until();
    const tags = git(remote, ['for-each-ref', '--format=%(refname) %(objecttype) %(objectname)', 'refs/tags/']).trim().split('\n');
    expect(tags).to.deep.equal([`refs/tags/v0.1 commit ${git(src, ['rev-parse', 'main']).trim()}`, `refs/tags/v1.0 tag ${git(src, ['rev-parse', 'v1.0']).trim()}`]);
  });

  // Last: the export retires the repository.
  it('export and restore carry the tags: the restored repository serves them with the same ids', async () => {
    const { manifest, files } = await exportRepo(s.url, repo);
    const restored = await restoreRepo(s.url, manifest, files);
    const listed = await client(['ls-remote', '--tags', `${s.url}${R(restored, '/git.git')}`]);
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stdout).to.include(`${git(src, ['rev-parse', 'v1.0']).trim()}\trefs/tags/v1.0\n`).and.to.include(`${git(src, ['rev-parse', 'main']).trim()}\trefs/tags/v0.1\n`);
    // fsck checks the tag records (filed under their names, ids the hash of their bytes, commits imported).
    await s.stop();
    stopped = true;
    const check = await cli(['fsck', '--data', s.dataDir]);
    expect(check.code, check.stdout + check.stderr).to.equal(0);
  });
});
