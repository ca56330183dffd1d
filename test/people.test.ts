// People on changes over HTTP (docs/api.md "People"): the caller identity taken from the
// ingress header and the rules for believing it (--trust-identity-from, the ingress secret),
// the change's owner, reviewers who are people as well as groups, the reviewer table, whose
// move it is (attention) and a person's dashboard, kept across a restart.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { api, expectError, ok, spawnServer, startTestServer, tempDir, type TestServer } from './helpers.js';
import { R, Seeder } from './ui-seed.js';

const H = 'X-Cairn-User';
const as = (name: string) => ({ headers: { [H]: name } });

async function fixture(url: string): Promise<{ s: Seeder; base: string; rev1: string; rev2: string }> {
  const s = await Seeder.register(url, `people-${Math.random().toString(36).slice(2, 8)}`);
  const base = await s.snap({ 'a.txt': 'a\n' }, { moveLine: true });
  const rev1 = await s.snap({ 'a.txt': 'b\n' }, { parent: base });
  const rev2 = await s.snap({ 'a.txt': 'c\n' }, { parent: base });
  return { s, base, rev1, rev2 };
}

describe('people: identity, owner, reviewers, attention, dashboard', function () {
  this.timeout(120_000);
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer(undefined, { identity: { header: H } });
  });
  after(async () => { await srv.stop(); });

  it('a change created with the identity header is owned by that person; the body may name only the same one', async () => {
    const { s } = await fixture(srv.url);
    const t = (await s.post('/tasks', { title: 'T', intent: 'I' })).task;
    const mine = await ok(api(srv.url, 'POST', R(s.repo, '/changes'), { json: { task_id: t.task_id, title: 'mine', base_line: 'main' }, ...as('alice') }));
    expect(mine.change.owner).to.equal('alice');
    const same = await ok(api(srv.url, 'POST', R(s.repo, '/changes'), { json: { task_id: t.task_id, title: 'same', base_line: 'main', owner: 'alice' }, ...as('alice') }));
    expect(same.change.owner).to.equal('alice');
    const other = await api(srv.url, 'POST', R(s.repo, '/changes'), { json: { task_id: t.task_id, title: 'other', base_line: 'main', owner: 'bob' }, ...as('alice') });
    expectError(other, 403, 'owner naming someone else');
    // Without the header the body names the owner; without either there is none.
    const bodyOwner = await ok(api(srv.url, 'POST', R(s.repo, '/changes'), { json: { task_id: t.task_id, title: 'b', base_line: 'main', owner: 'bob' } }));
    expect(bodyOwner.change.owner).to.equal('bob');
    const none = await ok(api(srv.url, 'POST', R(s.repo, '/changes'), { json: { task_id: t.task_id, title: 'n', base_line: 'main' } }));
    expect(none.change.owner).to.equal(null);
    const list = await ok(api(srv.url, 'GET', R(s.repo, '/changes')));
    expect(list.changes.map((c: any) => c.title)).to.deep.equal(['n', 'b', 'same', 'mine']);
  });

  it('reviews and comments written with the identity name that person; naming another is 403', async () => {
    const { s, base, rev1 } = await fixture(srv.url);
    const c = await s.change('Reviewed');
    const ps = await s.patchset(c.change, base, rev1, 'one');
    const r = await ok(api(srv.url, 'POST', R(s.repo, `/changes/${c.change}/reviews`), { json: { patchset_id: ps, action: 'approve' }, ...as('bob') }));
    expect(r.review.reviewer).to.equal('bob');
    expectError(await api(srv.url, 'POST', R(s.repo, `/changes/${c.change}/reviews`), { json: { patchset_id: ps, action: 'approve', reviewer: 'mallory' }, ...as('bob') }), 403, 'reviewer naming someone else');
    const cm = await ok(api(srv.url, 'POST', R(s.repo, `/changes/${c.change}/comments`), { json: { patchset_id: ps, anchor: { path: 'a.txt' }, body: 'hm' }, ...as('bob') }));
    expect(cm.comment.author).to.equal('bob');
    expectError(await api(srv.url, 'POST', R(s.repo, `/changes/${c.change}/comments`), { json: { patchset_id: ps, anchor: { path: 'a.txt' }, body: 'x', author: 'eve' }, ...as('bob') }), 403, 'author naming someone else');
    const rq = await ok(api(srv.url, 'POST', R(s.repo, `/changes/${c.change}:requestReview`), { json: { patchset_id: ps, reviewers: ['carol'] }, ...as('bob') }));
    expect(rq.review_request.requested_by).to.equal('bob');
  });

  it('review is requested from people and groups; the change keeps its reviewer list and the table shows each current vote', async () => {
    const { s, base, rev1, rev2 } = await fixture(srv.url);
    const c = await s.change('People review');
    const ps1 = await s.patchset(c.change, base, rev1, 'one');
    const rq = await ok(api(srv.url, 'POST', R(s.repo, `/changes/${c.change}:requestReview`), { json: { patchset_id: ps1, reviewer_groups: ['core'], reviewers: ['bob', 'carol'] } }));
    expect(rq.review_requests.map((r: any) => [r.reviewer, r.reviewer_group])).to.deep.equal([['core', 'core'], ['bob', null], ['carol', null]]);
    expect(rq.reviewer_group).to.equal('core');
    expect(rq.change.status).to.equal('review');
    expect(rq.change.reviewers).to.deep.equal([{ name: 'core', kind: 'group' }, { name: 'bob', kind: 'person' }, { name: 'carol', kind: 'person' }]);
    // People only; a name asked again is not listed twice.
    const again = await ok(api(srv.url, 'POST', R(s.repo, `/changes/${c.change}:requestReview`), { json: { patchset_id: ps1, reviewers: ['carol', 'dan'] } }));
    expect(again.reviewer_group).to.equal(null);
    expect(again.change.reviewers.map((r: any) => r.name)).to.deep.equal(['core', 'bob', 'carol', 'dan']);
    expectError(await api(srv.url, 'POST', R(s.repo, `/changes/${c.change}:requestReview`), { json: { patchset_id: ps1, reviewers: [] } }), 400, 'nobody named');
    expectError(await api(srv.url, 'POST', R(s.repo, `/changes/${c.change}:requestReview`), { json: { patchset_id: ps1, reviewers: ['x', 'x'] } }), 400, 'a name twice');
    expectError(await api(srv.url, 'POST', R(s.repo, `/changes/${c.change}:requestReview`), { json: { patchset_id: ps1, reviewers: [' '] } }), 400, 'a blank name');
    expectError(await api(srv.url, 'POST', R(s.repo, `/changes/${c.change}:requestReview`), { json: { patchset_id: ps1 } }), 422, 'neither field');
    expectError(await api(srv.url, 'POST', R(s.repo, `/changes/${c.change}:requestReview`), { json: { patchset_id: ps1, reviewers: 'bob' } }), 422, 'not an array');

    await s.review(c.change, ps1, 'bob', 'approve');
    await s.review(c.change, ps1, 'erin', 'request_changes', 'no');
    let table = (await s.get(`/read/changes/${c.change}/reviewers`)).reviewers;
    const byName = (rows: any[]) => Object.fromEntries(rows.map((r) => [r.name, r]));
    expect(byName(table).bob).to.deep.equal({ name: 'bob', kind: 'person', vote: 'approve', patchset_id: ps1, live: true });
    expect(byName(table).carol).to.deep.equal({ name: 'carol', kind: 'person', vote: null, patchset_id: null, live: false });
    expect(byName(table).core).to.deep.equal({ name: 'core', kind: 'group', vote: null, patchset_id: null, live: false });
    expect(byName(table).erin, 'a person who voted unasked is listed').to.deep.equal({ name: 'erin', kind: 'person', vote: 'block', patchset_id: ps1, live: true });
    // A new patchset with other content, selected: bob's approval no longer counts; erin's block still does.
    const ps2 = await s.patchset(c.change, base, rev2, 'two');
    await s.post(`/changes/${c.change}:selectPatchset`, { patchset_id: ps2 });
    table = (await s.get(`/read/changes/${c.change}/reviewers`)).reviewers;
    expect(byName(table).bob).to.include({ vote: 'approve', patchset_id: ps1, live: false });
    expect(byName(table).erin).to.include({ vote: 'block', live: true });
    expectError(await api(srv.url, 'GET', R(s.repo, '/read/changes/change-999999/reviewers')), 404, 'no such change');
  });

  it('attention moves between the requested reviewers and the owner, and the dashboard sorts changes per person', async () => {
    const { s, base, rev1, rev2 } = await fixture(srv.url);
    const t = (await s.post('/tasks', { title: 'T', intent: 'I' })).task;
    const c = (await ok(api(srv.url, 'POST', R(s.repo, '/changes'), { json: { task_id: t.task_id, title: 'Turns', base_line: 'main' }, ...as('alice') }))).change.change_id;
    const ps1 = await s.patchset(c, base, rev1, 'one');
    const turn = async () => (await s.get(`/read/changes/${c}/attention`)).attention;
    expect(await turn()).to.deep.equal([]);
    await s.post(`/changes/${c}:requestReview`, { patchset_id: ps1, reviewers: ['bob', 'carol'] });
    expect(await turn()).to.deep.equal([{ name: 'bob', reason: 'review_requested' }, { name: 'carol', reason: 'review_requested' }]);
    expect((await s.get(`/changes/${c}`)).change.attention).to.deep.equal(['bob', 'carol']);
    await s.review(c, ps1, 'bob', 'approve');
    expect(await turn()).to.deep.equal([{ name: 'carol', reason: 'review_requested' }]);

    let dash = await s.get('/read/dashboard?user=carol');
    expect(dash.user).to.equal('carol');
    expect(dash.your_turn.map((r: any) => [r.change_id, r.reason])).to.deep.equal([[c, 'review_requested']]);
    expect(dash.waiting_for_review.map((r: any) => r.change_id)).to.deep.equal([c]);
    expect(dash.your_changes).to.deep.equal([]);
    expect(dash.your_turn[0]).to.include({ owner: 'alice', ci: 'none', unresolved_threads: 0 });
    expect(dash.your_turn[0].votes).to.deep.equal({ approvals: 1, blocking: 0 });

    await s.review(c, ps1, 'carol', 'request_changes', 'not yet');
    expect(await turn()).to.deep.equal([{ name: 'alice', reason: 'blocking_vote' }]);
    dash = await s.get('/read/dashboard?user=alice');
    expect(dash.your_turn.map((r: any) => [r.change_id, r.reason])).to.deep.equal([[c, 'blocking_vote']]);
    expect(dash.your_changes.map((r: any) => r.change_id)).to.deep.equal([c]);
    expect(dash.your_changes[0].votes).to.deep.equal({ approvals: 1, blocking: 1 });

    // A new patchset: the reviewers' move again, the owner's no longer.
    await s.patchset(c, base, rev2, 'two');
    expect(await turn()).to.deep.equal([{ name: 'bob', reason: 'new_patchset' }, { name: 'carol', reason: 'new_patchset' }]);
    // The caller's identity is the default user.
    dash = await ok(api(srv.url, 'GET', R(s.repo, '/read/dashboard'), as('bob')));
    expect(dash.user).to.equal('bob');
    expect(dash.your_turn.map((r: any) => r.reason)).to.deep.equal(['new_patchset']);
    expectError(await api(srv.url, 'GET', R(s.repo, '/read/dashboard')), 400, 'no user');
    expectError(await api(srv.url, 'GET', R(s.repo, '/read/dashboard?user=a&user=b')), 400, 'user twice');
    const nobody = await s.get('/read/dashboard?user=nobody');
    expect([nobody.your_turn, nobody.your_changes, nobody.waiting_for_review, nobody.recently_landed]).to.deep.equal([[], [], [], []]);
  });

  it('a failing CI run of the current patchset is the owner\'s move', async () => {
    const { s, base, rev1 } = await fixture(srv.url);
    const t = (await s.post('/tasks', { title: 'T', intent: 'I' })).task;
    const c = (await ok(api(srv.url, 'POST', R(s.repo, '/changes'), { json: { task_id: t.task_id, title: 'CI', base_line: 'main' }, ...as('alice') }))).change.change_id;
    const ps = await s.patchset(c, base, rev1, 'one');
    await s.ci(ps, 'fail');
    expect((await s.get(`/read/changes/${c}/attention`)).attention).to.deep.equal([{ name: 'alice', reason: 'ci_failed' }]);
    const dash = await s.get('/read/dashboard?user=alice');
    expect(dash.your_turn[0]).to.include({ change_id: c, ci: 'fail', reason: 'ci_failed' });
  });
});

describe('people: believing the identity header', function () {
  this.timeout(120_000);

  it('--trust-identity-from: the header from another peer is refused (403, the value not echoed); without it the request passes', async () => {
    const srv = await spawnServer(path.join(tempDir(), 'data'), ['--ui-identity-header', H, '--trust-identity-from', '192.0.2.7']);
    try {
      const res = await api(srv.url, 'GET', '/v1/native/repository-authorities', as('secret-name-1234'));
      expectError(res, 403, 'untrusted peer');
      expect(res.text).not.to.include('secret-name-1234');
      const page = await fetch(`${srv.url}/ui/`, as('secret-name-1234'));
      expect(page.status).to.equal(403);
      expect(await page.text()).not.to.include('secret-name-1234');
      await ok(api(srv.url, 'GET', '/v1/native/repository-authorities'));
    } finally {
      srv.proc.kill('SIGTERM');
      await srv.exited;
    }
    const trusted = await spawnServer(path.join(tempDir(), 'data'), ['--ui-identity-header', H, '--trust-identity-from', '192.0.2.7,127.0.0.1']);
    try {
      const { s } = await fixture(trusted.url);
      const t = (await s.post('/tasks', { title: 'T', intent: 'I' })).task;
      const c = await ok(api(trusted.url, 'POST', R(s.repo, '/changes'), { json: { task_id: t.task_id, title: 'x', base_line: 'main' }, ...as('alice') }));
      expect(c.change.owner).to.equal('alice');
    } finally {
      trusted.proc.kill('SIGTERM');
      await trusted.exited;
    }
  });

  it('--trust-identity-secret-file: the header is believed only with the ingress secret', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'secret');
    await fsp.writeFile(file, 'a-long-enough-shared-secret\n', { mode: 0o600 });
    const srv = await spawnServer(path.join(dir, 'data'), ['--ui-identity-header', H, '--trust-identity-secret-file', file]);
    try {
      expectError(await api(srv.url, 'GET', '/v1/native/repository-authorities', as('alice')), 403, 'no secret');
      expectError(await api(srv.url, 'GET', '/v1/native/repository-authorities', { headers: { [H]: 'alice', 'X-Cairn-Ingress-Secret': 'wrong' } }), 403, 'wrong secret');
      const { s } = await fixture(srv.url);
      const t = (await s.post('/tasks', { title: 'T', intent: 'I' })).task;
      const c = await ok(api(srv.url, 'POST', R(s.repo, '/changes'), { json: { task_id: t.task_id, title: 'x', base_line: 'main' }, headers: { [H]: 'alice', 'X-Cairn-Ingress-Secret': 'a-long-enough-shared-secret' } }));
      expect(c.change.owner).to.equal('alice');
    } finally {
      srv.proc.kill('SIGTERM');
      await srv.exited;
    }
  });

  it('the per-person lists survive a restart (checkpoint section) and a restart without it (rebuilt from the records)', async () => {
    const dir = tempDir();
    let srv = await spawnServer(path.join(dir, 'data'), ['--ui-identity-header', H]);
    let repo: number;
    let change: string;
    try {
      const { s, base, rev1 } = await fixture(srv.url);
      repo = s.repo;
      const t = (await s.post('/tasks', { title: 'T', intent: 'I' })).task;
      change = (await ok(api(srv.url, 'POST', R(s.repo, '/changes'), { json: { task_id: t.task_id, title: 'kept', base_line: 'main' }, ...as('alice') }))).change.change_id;
      const ps = await s.patchset(change, base, rev1, 'one');
      await s.post(`/changes/${change}:requestReview`, { patchset_id: ps, reviewers: ['bob'] });
    } finally {
      srv.proc.kill('SIGTERM');
      await srv.exited;
    }
    const ckpts: string[] = [];
    for (let round = 0; round < 2; round++) {
      srv = await spawnServer(path.join(dir, 'data'), []);
      try {
        const alice = await ok(api(srv.url, 'GET', R(repo!, '/read/dashboard?user=alice')));
        expect(alice.your_changes.map((r: any) => r.change_id), `round ${round}`).to.deep.equal([change!]);
        const bob = await ok(api(srv.url, 'GET', R(repo!, '/read/dashboard?user=bob')));
        expect(bob.your_turn.map((r: any) => r.change_id), `round ${round}`).to.deep.equal([change!]);
      } finally {
        srv.proc.kill('SIGTERM');
        await srv.exited;
      }
      // The second open has no checkpoint: every list is rebuilt from workflow.log.
      if (round === 0) {
        const walk = async (d: string): Promise<void> => {
          for (const e of await fsp.readdir(d, { withFileTypes: true })) {
            const p = path.join(d, e.name);
            if (e.isDirectory()) await walk(p);
            else if (e.name === 'workflow.ckpt') ckpts.push(p);
          }
        };
        await walk(path.join(dir, 'data'));
        expect(ckpts.length, 'a checkpoint was written at the clean stop').to.be.greaterThan(0);
        for (const p of ckpts) await fsp.rm(p);
      }
    }
  });
});
