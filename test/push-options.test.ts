// Gerrit's push-for-review conveniences (docs/git.md "Push for review"): the commit-msg hook
// served at /tools/hooks/commit-msg (installed over HTTP, it gives a commit one Change-Id that
// an amend keeps), the hint a push without a Change-Id prints, and the push options -o r=NAME
// (a review request in the push's commit) and -o m=MESSAGE (the patchset's summary); a bad
// value or an unknown option refuses the push and writes nothing.
import { expect } from 'chai';
import { promises as fsp, statSync } from 'node:fs';
import path from 'node:path';
import { installHookLine } from '../lib/http/commit-msg-hook.js';
import { canonicalPublicUrl } from '../lib/http/request-guard.js';
import { api, cli, ok, startTestServer, tempDir, type TestServer } from './helpers.js';
import { gitClient, hasGit, runClient, servedClone } from './git-fixture.js';

type Json = Record<string, any>;
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;

const run = runClient;
const client = gitClient;

(hasGit ? describe : describe.skip)('push for review: the commit-msg hook and push options', function () {
  this.timeout(180_000);
  let s: TestServer;
  let repo: number;
  let url: string;
  let dir: string;
  const get = (p: string) => ok(api(s.url, 'GET', R(repo, p)));
  const message = async () => (await client(['-C', dir, 'log', '-1', '--format=%B'])).stdout;
  const edit = async (text: string) => {
    await fsp.writeFile(path.join(dir, 'greeting.txt'), text);
    expect((await client(['-C', dir, 'add', '-A'])).code).to.equal(0);
  };

  before(async () => {
    s = await startTestServer();
    ({ repo, lineUrl: url, dir } = await servedClone(s.url, 'push-options'));
  });
  after(async () => { await s?.stop(); });

  it('serves the hook as a shell script to anyone', async () => {
    const res = await fetch(`${s.url}/tools/hooks/commit-msg`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/x-shellscript/);
    const text = await res.text();
    expect(text.startsWith('#!/bin/sh\n')).to.equal(true);
    expect(text).to.include('git interpret-trailers');
  });

  it('a push without a Change-Id opens a change and prints how to install the hook; the hook, installed by that line, gives a commit one Change-Id that amends keep; two pushes are one change with two patchsets', async () => {
    await edit('hello\n');
    expect((await client(['-C', dir, 'commit', '-q', '-m', 'Greet'])).code).to.equal(0);
    const bare = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
    expect(bare.code, bare.stderr).to.equal(0);
    expect(bare.stderr).to.include('New change:').and.to.include('This commit has no Change-Id');
    const line = installHookLine(s.url);
    expect(bare.stderr).to.include(`remote:   ${line}`);
    expect(bare.stderr).to.include('git commit --amend --no-edit && git push <remote> HEAD:refs/for/main%change=change-1');

    // The printed line installs the hook over HTTP (curl), executable.
    const installed = await run('sh', ['-c', line], dir);
    expect(installed.code, installed.stderr).to.equal(0);
    const hook = path.join(dir, '.git', 'hooks', 'commit-msg');
    expect(statSync(hook).mode & 0o111).to.not.equal(0);

    // As the hint says: amend (the hook adds a Change-Id), push once to change-1; then an
    // amend keeps that Change-Id and a plain push finds the change by it.
    expect((await client(['-C', dir, 'commit', '-q', '--amend', '--no-edit'])).code).to.equal(0);
    const ids = (await message()).match(/^Change-Id: I[0-9a-f]{40}$/gm) ?? [];
    expect(ids).to.have.length(1);
    const once = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main%change=change-1']);
    expect(once.code, once.stderr).to.equal(0);
    expect(once.stderr).to.include('Updated change (change-1.ps-2)').and.not.to.include('no Change-Id');
    await edit('hello, world\n');
    expect((await client(['-C', dir, 'commit', '-q', '--amend', '--no-edit'])).code).to.equal(0);
    expect((await message()).match(/^Change-Id: I[0-9a-f]{40}$/gm)).to.deep.equal(ids);
    // Amended through the editor (the file the hook reads holds git's comments and, with -v, the diff): still the one Change-Id.
    expect((await client(['-C', dir, '-c', 'core.editor=true', 'commit', '-q', '-v', '--amend'])).code).to.equal(0);
    expect((await message()).match(/^Change-Id: I[0-9a-f]{40}$/gm)).to.deep.equal(ids);
    const again = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stderr).to.include('Updated change (change-1.ps-3)');

    // A new commit with the hook: a new change; amended (message edited too), one Change-Id, the same; pushed twice: one change, two patchsets.
    await edit('bonjour\n');
    expect((await client(['-C', dir, 'commit', '-q', '-m', 'Greet in French\n\nSigned-off-by: Ada <ada@example.org>'])).code).to.equal(0);
    const first = (await message()).match(/^Change-Id: I[0-9a-f]{40}$/gm) ?? [];
    expect(first).to.have.length(1);
    const p1 = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
    expect(p1.code, p1.stderr).to.equal(0);
    expect(p1.stderr).to.include('task-2.change-2').and.to.include('[NEW]').and.not.to.include('no Change-Id');
    await edit('bonjour, monde\n');
    expect((await client(['-C', dir, 'commit', '-q', '--amend', '-m', `Greet in French, politely\n\nSigned-off-by: Ada <ada@example.org>\n${first[0]}`])).code).to.equal(0);
    expect((await message()).match(/^Change-Id: I[0-9a-f]{40}$/gm)).to.deep.equal(first);
    const p2 = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
    expect(p2.code, p2.stderr).to.equal(0);
    expect(p2.stderr).to.include('Updated change (change-2.ps-2)');
    expect((await get('/changes/change-2')).change).to.include({ patchset_count: 2 });
    expect((await get('/changes?limit=100')).changes).to.have.length(2);
  });

  it('-o r=NAME asks those people for review in the push\'s commit, -o m=MESSAGE is the patchset\'s summary; a bad value or an unknown option refuses the push and writes nothing', async () => {
    await edit('hallo\n');
    expect((await client(['-C', dir, 'commit', '-q', '--amend', '--no-edit'])).code).to.equal(0);
    const refusals: [string[], string][] = [
      [['-o', 'r='], '-o r=: a reviewer\'s name must be non-empty'],
      [['-o', `r=${'x'.repeat(300)}`], 'a reviewer\'s name is longer than 256 characters'],
      [['-o', 'm='], '-o m= must not be empty'],
      [['-o', 'm=one', '-o', 'm=two'], '-o m= may be given once'],
      [['-o', 'hashtag=greetings'], 'unknown push option -o hashtag=greetings: a push for review takes -o noselect, r=NAME, m=MESSAGE, topic=NAME, wip, ready, cc=NAME'],
      [['-o', 'private'], 'unknown push option -o private'],
      [['-o', 'topic='], '-o topic=: a topic must be non-empty'],
      [['-o', 'topic=a', '-o', 'topic=b'], '-o topic= may be given once'],
      [['-o', 'wip', '-o', 'ready'], '-o wip and -o ready contradict each other'],
      [['-o', 'cc= '], '-o cc= : a name must be non-empty'],
      [['-o', `cc=${'y'.repeat(300)}`], 'a name is longer than 256 characters'],
    ];
    const eventsBefore = (await get('/events?limit=1000')).events.length;
    for (const [options, reason] of refusals) {
      const refused = await client(['-C', dir, 'push', ...options, url, 'HEAD:refs/for/main']);
      expect(refused.code, options.join(' ')).to.not.equal(0);
      expect(refused.stderr, options.join(' ')).to.include(reason);
    }
    expect((await get('/changes/change-2')).change).to.include({ patchset_count: 2, status: 'active' });
    expect((await get('/events?limit=1000')).events).to.have.length(eventsBefore);

    const pushed = await client(['-C', dir, 'push', '-o', 'r=alice', '-o', 'r=bob', '-o', 'r=alice', '-o', 'm=Rebased, and in German', url, 'HEAD:refs/for/main']);
    expect(pushed.code, pushed.stderr).to.equal(0);
    expect(pushed.stderr).to.include('Updated change (change-2.ps-3)').and.to.include('reviewers: alice, bob');
    const change = (await get('/changes/change-2')).change as Json;
    expect(change).to.include({ patchset_count: 3, selected_patchset_id: 'change-2.ps-3', status: 'review' });
    expect(change.reviewers).to.deep.equal([{ name: 'alice', kind: 'person' }, { name: 'bob', kind: 'person' }]);
    expect((await get('/patchsets/change-2.ps-3')).patchset.summary).to.equal('Rebased, and in German');
    const requests = ((await get('/changes/change-2/reviews')).reviews as Json[]).filter((r) => r.action === 'request');
    expect(requests.map((r) => [r.reviewer, r.patchset_id])).to.deep.equal([['alice', 'change-2.ps-3'], ['bob', 'change-2.ps-3']]);
    // The same events :requestReview emits, committed with the patchset.
    const events = ((await get('/events?limit=1000')).events as Json[]).slice(eventsBefore).map((e) => e.type);
    expect(events.filter((t) => t.startsWith('patchset.') || t.startsWith('review.'))).to.deep.equal(['patchset.created', 'patchset.selected', 'review.requested', 'review.requested']);
  });

  it('-o topic=NAME, -o wip / -o ready and -o cc=NAME are kept on the change with their events, searchable; a wip change asks no reviewer until it is ready', async () => {
    await edit('topic\n');
    expect((await client(['-C', dir, 'commit', '-q', '-m', 'Topic work'])).code).to.equal(0);
    const eventsBefore = (await get('/events?limit=1000')).events.length;
    const pushed = await client(['-C', dir, 'push', '-o', 'topic=greetings', '-o', 'wip', '-o', 'cc=carol', '-o', 'cc=dan', '-o', 'r=erin', url, 'HEAD:refs/for/main']);
    expect(pushed.code, pushed.stderr).to.equal(0);
    expect(pushed.stderr).to.include('[NEW]').and.to.include('topic: greetings').and.to.include('work in progress').and.to.include('cc: carol, dan');
    const id = /changes\/task-\d+\.(change-\d+)/.exec(pushed.stderr)![1];
    let change = (await get(`/changes/${id}`)).change as Json;
    expect(change).to.include({ topic: 'greetings', wip: true });
    expect(change.cc).to.deep.equal(['carol', 'dan']);
    // Work in progress: erin was asked, but it is not her move yet.
    expect((await get(`/read/changes/${id}/attention`)).attention).to.deep.equal([]);
    expect((await get('/read/dashboard?user=erin')).waiting_for_review).to.deep.equal([]);
    // Searchable.
    const ids = async (q: string) => ((await get(`/changes?q=${encodeURIComponent(q)}`)).changes as Json[]).map((c) => c.change_id);
    expect(await ids('topic:greetings')).to.deep.equal([id]);
    expect(await ids('is:wip')).to.deep.equal([id]);
    expect(await ids('cc:carol')).to.deep.equal([id]);
    expect(await ids('cc:carol topic:greetings is:open')).to.deep.equal([id]);
    expect(await ids('topic:other')).to.deep.equal([]);
    // -o ready: the reviewers' move now; the topic and cc stay, cc adds.
    await edit('topic, ready\n');
    expect((await client(['-C', dir, 'commit', '-q', '--amend', '--no-edit'])).code).to.equal(0);
    const ready = await client(['-C', dir, 'push', '-o', 'ready', '-o', 'cc=carol', '-o', 'cc=fay', url, `HEAD:refs/for/main%change=${id}`]);
    expect(ready.code, ready.stderr).to.equal(0);
    change = (await get(`/changes/${id}`)).change as Json;
    expect(change).to.include({ topic: 'greetings', wip: false });
    expect(change.cc).to.deep.equal(['carol', 'dan', 'fay']);
    expect((await get(`/read/changes/${id}/attention`)).attention).to.deep.equal([{ name: 'erin', reason: 'new_patchset' }]);
    expect(await ids('is:wip')).to.deep.equal([]);
    const updates = ((await get('/events?limit=1000')).events as Json[]).slice(eventsBefore).filter((e) => e.type === 'change.updated');
    expect(updates.map((e) => [e.data.change_id, e.data.fields, e.data.wip])).to.deep.equal([[id, 'topic,wip,cc', true], [id, 'wip,cc', false]]);
  });
});

(hasGit ? describe : describe.skip)('push for review behind a front door: --public-url', function () {
  this.timeout(180_000);

  it('the remote: lines of a push and the commit-msg hook hint start with the public URL', async () => {
    const front = 'https://cairn.example.com/code';
    const s = await startTestServer(undefined, { publicUrl: front });
    try {
      const { repo, lineUrl, dir } = await servedClone(s.url, 'public-url');
      await fsp.writeFile(path.join(dir, 'greeting.txt'), 'hi\n');
      expect((await client(['-C', dir, 'add', '-A'])).code).to.equal(0);
      expect((await client(['-C', dir, 'commit', '-q', '-m', 'Greet'])).code).to.equal(0);
      const pushed = await client(['-C', dir, 'push', lineUrl, 'HEAD:refs/for/main']);
      expect(pushed.code, pushed.stderr).to.equal(0);
      expect(pushed.stderr).to.include(`remote:   ${front}/ui/repos/${repo}/changes/task-1.change-1 Greet [NEW]`);
      expect(pushed.stderr).to.include(`remote:   ${installHookLine(front)}`);
      expect(pushed.stderr.split('\n').filter((l) => l.startsWith('remote:') && l.includes(s.url))).to.deep.equal([]);
    } finally {
      await s.stop();
    }
  });

  it('cairn serve refuses a --public-url that is not an http(s) URL with an optional path', async () => {
    for (const bad of ['ftp://cairn.example.com', 'cairn.example.com', 'https://user:pw@cairn.example.com', 'https://cairn.example.com/?a=1', 'https://cairn.example.com/#x', 'https://cairn.example.com/a/../b', 'https://cairn.example.com/%2e%2e/b', 'https://cairn .example.com', '']) {
      expect(canonicalPublicUrl(bad), bad).to.equal(null);
    }
    expect(canonicalPublicUrl('https://cairn.example.com')).to.equal('https://cairn.example.com');
    expect(canonicalPublicUrl('https://Cairn.Example.com:8443/code/')).to.equal('https://cairn.example.com:8443/code');
    expect(canonicalPublicUrl('http://127.0.0.1:8088/')).to.equal('http://127.0.0.1:8088');
    const res = await cli(['serve', '--data', path.join(tempDir(), 'data'), '--bind', '127.0.0.1:0', '--public-url', 'ftp://cairn.example.com']);
    expect(res.code).to.equal(2);
    expect(res.stderr).to.include('--public-url must be an http or https URL');
  });
});
