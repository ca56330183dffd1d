// Fetchable patchsets (docs/git.md "Fetch a patchset"): every patchset has a ref in Gerrit's
// layout, refs/changes/<nn>/<change>/<ps>, that git's client fetches from the line's URL — a
// pushed one (the pushed commit as it was) and one the server made (applied suggestions: a
// commit on the base with the pushed commit's message and Change-Id, so an amend of it pushed
// again updates the same change). The push prints the fetch command.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { api, ok, startTestServer, tempDir, type TestServer } from './helpers.js';
import { gitClient, hasGit, servedClone } from './git-fixture.js';

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

