// People on changes over HTTP (docs/api.md "People"): the caller identity taken from the
// ingress header and the rules for believing it (--trust-identity-from, the ingress secret),
// the change's owner, reviewers who are people as well as groups, the reviewer table, whose
// move it is (attention) and a person's dashboard, kept across a restart.
import { expect } from 'chai';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { api, cli, expectError, ok, PROJECT_ROOT, spawnServer, startTestServer, tempDir, until, type TestServer } from './helpers.js';
import { CHROMIUM } from './ui-browser.js';
import { grantRoles, seedAccounts, seedAdmin } from './access-seed.js';
import { R, Seeder } from './ui-seed.js';

const H = 'X-Cairn-User';
const as = (name: string) => ({ headers: { [H]: name } });
type Json = Record<string, any>;

async function fixture(url: string, token: string | null = null): Promise<{ s: Seeder; base: string; rev1: string; rev2: string }> {
  const s = await Seeder.register(url, `people-${Math.random().toString(36).slice(2, 8)}`, token);
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

  it('a task start names the caller as its change\'s owner', async () => {
    const { s } = await fixture(srv.url);
    const body = {
      contract: 'task-start-atomic/v1', idempotency_key: 'own-1', plan_item_ref: 'build',
      plan: { action: 'create', payload: { title: 'Sprint', artifact_path: 'docs/s.md', artifact_heading: 'Sprint', artifact_body: '# Sprint\n- [ ] build it {#build}\n' } },
      task: { title: 'Build', intent: 'build it' }, change: { title: 'first', base_line: 'main' },
    };
    const res = await ok(api(srv.url, 'POST', R(s.repo, '/task-start'), { json: body, ...as('alice') }));
    expect(res.change.owner).to.equal('alice');
    expect((await s.get(`/changes/${res.change_id}`)).change.owner).to.equal('alice');
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

  it('a reviewer\'s comment is the owner\'s move; the owner\'s reply, or a new patchset, hands it back; the dashboard follows', async () => {
    const { s, base, rev1, rev2 } = await fixture(srv.url);
    const t = (await s.post('/tasks', { title: 'T', intent: 'I' })).task;
    const c = (await ok(api(srv.url, 'POST', R(s.repo, '/changes'), { json: { task_id: t.task_id, title: 'Talk', base_line: 'main' }, ...as('alice') }))).change.change_id;
    const ps1 = await s.patchset(c, base, rev1, 'one');
    const turn = async () => (await s.get(`/read/changes/${c}/attention`)).attention;
    const say = async (who: string, body: Json) => (await ok(api(srv.url, 'POST', R(s.repo, `/changes/${c}/comments`), { json: body, ...as(who) }))).comment.comment_id as string;
    await s.post(`/changes/${c}:requestReview`, { patchset_id: ps1, reviewers: ['bob'] });
    expect(await turn()).to.deep.equal([{ name: 'bob', reason: 'review_requested' }]);
    // bob's comment: his move is made, it is alice's (the author's) now.
    const thread = await say('bob', { patchset_id: ps1, anchor: { path: 'a.txt', line: 1 }, body: 'Why b?' });
    expect(await turn()).to.deep.equal([{ name: 'alice', reason: 'reviewer_comment' }]);
    let dash = await ok(api(srv.url, 'GET', R(s.repo, '/read/dashboard'), as('alice')));
    expect(dash.your_turn.map((r: any) => [r.change_id, r.reason])).to.deep.equal([[c, 'reviewer_comment']]);
    // alice answers: bob's move again.
    await say('alice', { in_reply_to: thread, body: 'Because a came before.' });
    expect(await turn()).to.deep.equal([{ name: 'bob', reason: 'owner_replied' }]);
    dash = await ok(api(srv.url, 'GET', R(s.repo, '/read/dashboard'), as('bob')));
    expect(dash.your_turn.map((r: any) => [r.change_id, r.reason])).to.deep.equal([[c, 'owner_replied']]);
    expect((await ok(api(srv.url, 'GET', R(s.repo, '/read/dashboard'), as('alice')))).your_turn).to.deep.equal([]);
    // bob replies again (alice's move), and a third person comments too; a resolved thread asks nobody.
    await say('bob', { in_reply_to: thread, body: 'Fair.' });
    await say('carol', { patchset_id: ps1, anchor: { path: 'a.txt' }, body: 'Looks fine', resolution: 'resolved' });
    expect(await turn()).to.deep.equal([{ name: 'alice', reason: 'reviewer_comment' }]);
    // A new patchset hands it back: bob is asked to look at it; alice is no longer asked.
    const ps2 = await s.patchset(c, base, rev2, 'two');
    await s.post(`/changes/${c}:selectPatchset`, { patchset_id: ps2 });
    expect(await turn()).to.deep.equal([{ name: 'bob', reason: 'new_patchset' }]);
    // bob's review of the new patchset is his move; a comment of his on it is alice's move again.
    await s.review(c, `${c}.ps-2`, 'bob', 'approve');
    expect(await turn()).to.deep.equal([]);
    await say('bob', { patchset_id: `${c}.ps-2`, anchor: { path: 'a.txt', line: 1 }, body: 'One more thing' });
    expect(await turn()).to.deep.equal([{ name: 'alice', reason: 'reviewer_comment' }]);
    expect((await s.get(`/changes/${c}`)).change.attention).to.deep.equal(['alice']);
    // The owner's own comment asks nobody.
    const own = (await ok(api(srv.url, 'POST', R(s.repo, '/changes'), { json: { task_id: t.task_id, title: 'Own', base_line: 'main' }, ...as('alice') }))).change.change_id;
    const ops = await s.patchset(own, base, rev1, 'one');
    await ok(api(srv.url, 'POST', R(s.repo, `/changes/${own}/comments`), { json: { patchset_id: ops, anchor: { path: 'a.txt' }, body: 'note to self' }, ...as('alice') }));
    expect((await s.get(`/read/changes/${own}/attention`)).attention).to.deep.equal([]);
  });

  it('an ejection from the land queue is the owner\'s move, until the change is queued again', async () => {
    const { s, base, rev1 } = await fixture(srv.url);
    const t = (await s.post('/tasks', { title: 'T', intent: 'I' })).task;
    const c = (await s.post('/changes', { task_id: t.task_id, title: 'Queued', base_line: 'main', owner: 'alice' })).change;
    const ps = await s.patchset(c.change_id, base, rev1, 'one');
    await s.attest(ps);
    await s.review(c.change_id, ps, 'erin', 'approve');
    expect((await s.get(`/read/changes/${c.change_id}/attention`)).attention).to.deep.equal([]);
    const entry = (await s.post('/land-queue', { change_ref: c.change_ref, mode: 'merge' })).entry.entry_id as string;
    for (let run = 1; run <= 2; run++) {
      const e = await s.queueEntry(entry, (x) => (x.speculation?.worker_job_indexes.length ?? 0) >= run);
      await s.queueJob(e.speculation.worker_job_indexes[run - 1], 'fail');
    }
    await s.queueEntry(entry, (x) => x.state === 'ejected');
    expect((await s.get(`/read/changes/${c.change_id}/attention`)).attention).to.deep.equal([{ name: 'alice', reason: 'ejected' }]);
    await s.post('/land-queue', { change_ref: c.change_ref, mode: 'merge' });
    expect((await s.get(`/read/changes/${c.change_id}/attention`)).attention).to.deep.equal([]);
  });

  it('an ejection is still the owner\'s move after a restart from the checkpoint, and after one without it; fsck agrees', async () => {
    const data = path.join(tempDir(), 'data');
    let own: TestServer = await startTestServer(data);
    let repo: number;
    let change: string;
    try {
      const { s, base, rev1 } = await fixture(own.url);
      repo = s.repo;
      const t = (await s.post('/tasks', { title: 'T', intent: 'I' })).task;
      const c = (await s.post('/changes', { task_id: t.task_id, title: 'Ejected', base_line: 'main', owner: 'alice' })).change;
      change = c.change_id;
      const ps = await s.patchset(c.change_id, base, rev1, 'one');
      await s.attest(ps);
      await s.review(c.change_id, ps, 'erin', 'approve');
      const entry = (await s.post('/land-queue', { change_ref: c.change_ref, mode: 'merge' })).entry.entry_id as string;
      for (let run = 1; run <= 2; run++) {
        const e = await s.queueEntry(entry, (x) => (x.speculation?.worker_job_indexes.length ?? 0) >= run);
        await s.queueJob(e.speculation.worker_job_indexes[run - 1], 'fail');
      }
      await s.queueEntry(entry, (x) => x.state === 'ejected');
    } finally {
      await own.stop();
    }
    const ckpts: string[] = [];
    const walk = async (d: string): Promise<void> => {
      for (const e of await fsp.readdir(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) await walk(p);
        else if (e.name === 'workflow.ckpt') ckpts.push(p);
      }
    };
    await walk(data);
    expect(ckpts.length, 'a checkpoint was written at the clean stop').to.be.greaterThan(0);
    const check = await cli(['fsck', '--data', data]);
    expect(check.code, check.stdout + check.stderr).to.equal(0);
    // First from the checkpoint (the ejected entry is among the entries its section names), then rebuilt from workflow.log.
    for (let round = 0; round < 2; round++) {
      own = await startTestServer(data);
      try {
        const turn = await ok(api(own.url, 'GET', R(repo!, `/read/changes/${change!}/attention`)));
        expect(turn.attention, `round ${round}`).to.deep.equal([{ name: 'alice', reason: 'ejected' }]);
      } finally {
        await own.stop();
      }
      if (round === 0) for (const p of ckpts) await fsp.rm(p);
    }
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
    // A front door makes roles apply: the setup admin and alice (a contributor) have accounts.
    const trustedData = path.join(tempDir(), 'data');
    const admin = await seedAdmin(trustedData);
    await seedAccounts(trustedData, [{ name: 'alice' }]);
    const trusted = await spawnServer(trustedData, ['--ui-identity-header', H, '--trust-identity-from', '192.0.2.7,127.0.0.1']);
    try {
      const { s } = await fixture(trusted.url, admin.token);
      await grantRoles(trusted.url, admin.headers, s.repo, { alice: 'contributor' });
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
    const admin = await seedAdmin(path.join(dir, 'data'));
    await seedAccounts(path.join(dir, 'data'), [{ name: 'alice' }]);
    const srv = await spawnServer(path.join(dir, 'data'), ['--ui-identity-header', H, '--trust-identity-secret-file', file]);
    try {
      expectError(await api(srv.url, 'GET', '/v1/native/repository-authorities', as('alice')), 403, 'no secret');
      expectError(await api(srv.url, 'GET', '/v1/native/repository-authorities', { headers: { [H]: 'alice', 'X-Cairn-Ingress-Secret': 'wrong' } }), 403, 'wrong secret');
      const { s } = await fixture(srv.url, admin.token);
      await grantRoles(srv.url, admin.headers, s.repo, { alice: 'contributor' });
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

// ---------------------------------------------------------------- the front door (Caddy)

const CADDY = ['/usr/bin/caddy', '/usr/local/bin/caddy'].find((p) => existsSync(p));

/** The Caddyfile of docs/operations.md "A front door", as written there. */
async function recipeCaddyfile(): Promise<string> {
  const doc = await fsp.readFile(path.join(PROJECT_ROOT, 'docs/operations.md'), 'utf8');
  const from = doc.indexOf('### A front door');
  const m = /^( *)```caddyfile\n([\s\S]*?)^\1```$/m.exec(doc.slice(from));
  if (from < 0 || !m) throw new Error('docs/operations.md has no Caddyfile under "A front door"');
  return m[2].split('\n').map((line) => line.slice(Math.min(m[1].length, line.length - line.trimStart().length))).join('\n');
}

describe('people: a front door (Caddy from docs/operations.md, basic auth, the identity header)', function () {
  this.timeout(180_000);
  const PASSWORDS: Record<string, string> = { alice: 'alice-pw-1', bob: 'bob-pw-2' };
  const auth = (user: string, pw = PASSWORDS[user]) => ({ authorization: `Basic ${Buffer.from(`${user}:${pw}`).toString('base64')}` });
  let dir: string;
  let cairn: Awaited<ReturnType<typeof spawnServer>>;
  let caddy: ChildProcess;
  let caddyOut = '';
  let front: string;
  let frontHostPort: string;

  before(async function () {
    if (!CADDY) {
      // In CI (.ci/run installs Debian's caddy) the front door is always tested.
      if (process.env.CI) throw new Error('caddy is not installed (apt-get install caddy; .ci/run installs it)');
      console.log('      SKIPPED: the front-door test needs Debian\'s caddy (apt-get install caddy; .ci/run installs it)');
      this.skip();
    }
    dir = tempDir('cairn-caddy-');
    const users = path.join(dir, 'users');
    let lines = '';
    for (const [name, pw] of Object.entries(PASSWORDS)) lines += `${name} ${execFileSync(CADDY!, ['hash-password', '--plaintext', pw], { encoding: 'utf8' }).trim()}\n`;
    await fsp.writeFile(users, lines, { mode: 0o600 });
    const secret = path.join(dir, 'ingress-secret');
    await fsp.writeFile(secret, `${randomBytes(24).toString('base64')}\n`, { mode: 0o600 });
    await fsp.writeFile(path.join(dir, 'Caddyfile'), await recipeCaddyfile());
    for (let attempt = 0; ; attempt++) {
      const port = 20000 + Math.floor(Math.random() * 20000);
      frontHostPort = `127.0.0.1:${port}`;
      front = `http://${frontHostPort}`;
      // The front door makes roles apply: alice is a server admin (she creates repositories), bob gets roles per repository.
      await seedAccounts(path.join(dir, `data-${attempt}`), [{ name: 'alice', serverAdmin: true }, { name: 'bob' }]);
      cairn = await spawnServer(path.join(dir, `data-${attempt}`), ['--ui-identity-header', H, '--trust-identity-from', '127.0.0.1', '--trust-identity-secret-file', secret, '--allowed-origin', front]);
      caddyOut = '';
      caddy = spawn(CADDY!, ['run', '--config', path.join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir, CAIRN_SITE: front, CAIRN_UPSTREAM: new URL(cairn.url).host, CAIRN_USERS_FILE: users, CAIRN_INGRESS_SECRET: (await fsp.readFile(secret, 'utf8')).trim() },
      });
      caddy.stdout!.on('data', (d) => { caddyOut += d; });
      caddy.stderr!.on('data', (d) => { caddyOut += d; });
      const up = await until('caddy answering', async () => {
        if (caddy.exitCode !== null) return 'exited';
        try { return (await fetch(`${front}/healthz`)).status === 401 ? 'up' : null; } catch { return null; }
      }, 30_000);
      if (up === 'up') break;
      cairn.proc.kill('SIGTERM');
      await cairn.exited;
      if (attempt >= 3 || !/address already in use/.test(caddyOut)) throw new Error(`caddy did not start: ${caddyOut}`);
    }
  });

  after(async () => {
    if (caddy && caddy.exitCode === null) {
      const gone = new Promise((r) => caddy.once('exit', r));
      caddy.kill('SIGTERM');
      await gone;
    }
    if (cairn) {
      cairn.proc.kill('SIGTERM');
      await cairn.exited;
    }
  });

  it('without credentials, or with a wrong password, Caddy answers 401 and cairn is not asked', async () => {
    const none = await fetch(`${front}/v1/native/repository-authorities`);
    expect(none.status).to.equal(401);
    expect(none.headers.get('www-authenticate')).to.match(/^Basic/);
    expect((await fetch(`${front}/v1/native/repository-authorities`, { headers: auth('alice', 'wrong') })).status).to.equal(401);
  });

  it('a request through Caddy is attributed to the authenticated person, whatever identity header the client sent; the same header sent to cairn directly is 403', async () => {
    const reg = await fetch(`${front}/v1/native/repository-authorities`, { method: 'POST', headers: { ...auth('alice'), 'content-type': 'application/json' }, body: JSON.stringify({ repository_name: 'front', namespace: '', policy_flags: 0 }) });
    expect(reg.status).to.be.oneOf([200, 201]);
    const repo = (await reg.json()).repository.repository_index;
    const post = async (rest: string, json: unknown, headers: Record<string, string>) => {
      const res = await fetch(`${front}${R(repo, rest)}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(json) });
      return { status: res.status, json: await res.json() as any };
    };
    const t = await post('/tasks', { title: 'T', intent: 'I' }, auth('alice'));
    expect(t.status).to.equal(200);
    // Who the server takes the caller for: the dashboard's default user is the caller's identity.
    for (const sent of [{}, { [H]: 'mallory' }, { 'X-Cairn-Ingress-Secret': 'guess-guess-guess-guess', [H]: 'mallory' }] as Record<string, string>[]) {
      const res = await fetch(`${front}${R(repo, '/read/dashboard')}`, { headers: { ...auth('alice'), ...sent } });
      expect(res.status).to.equal(200);
      expect((await res.json() as any).user, JSON.stringify(sent)).to.equal('alice');
    }
    const refused = await fetch(`${front}${R(repo, '/read/dashboard')}`, { headers: auth('bob') });
    expect(refused.status, 'bob has no role yet').to.equal(403);
    const grant = await fetch(`${front}${R(repo, '/access')}`, { method: 'PATCH', headers: { ...auth('alice'), 'content-type': 'application/json' }, body: JSON.stringify({ grant: [{ subject: 'user:bob', role: 'reader' }] }) });
    expect(grant.status).to.equal(200);
    const asBob = await fetch(`${front}${R(repo, '/read/dashboard')}`, { headers: auth('bob') });
    expect((await asBob.json() as any).user).to.equal('bob');
    // A body naming someone else than the authenticated person is refused.
    expect((await post('/changes', { task_id: t.json.task.task_id, title: 'x', base_line: 'main', owner: 'mallory' }, auth('alice'))).status).to.equal(403);
    const direct = await api(cairn.url, 'GET', '/v1/native/repository-authorities', as('alice'));
    expectError(direct, 403, 'the identity header sent around the ingress');
    const directWrite = await api(cairn.url, 'POST', R(repo, '/tasks'), { json: { title: 'sneaky', intent: 'I' }, headers: { [H]: 'alice', 'X-Cairn-Ingress-Secret': 'guess-guess-guess-guess' } });
    expectError(directWrite, 403, 'a guessed secret');
  });

  it('the CLI works through the door (credentials in --server): records name the person, change show lists the reviewers', async () => {
    const xdg = tempDir('cairn-xdg-');
    const env = { XDG_CONFIG_HOME: xdg, CAIRN_USER: '', CAIRN_IDENTITY_HEADER: '' };
    const alice = `http://alice:${PASSWORDS.alice}@${frontHostPort}`;
    const bob = `http://bob:${PASSWORDS.bob}@${frontHostPort}`;
    const run = async (args: string[], extra: Record<string, string> = {}) => {
      const r = await cli(args, { ...env, ...extra });
      expect(r.code, `${args.join(' ')}: ${r.stderr}${r.stdout}`).to.equal(0);
      expect(r.stderr + r.stdout).not.to.include(PASSWORDS.alice);
      return r.stdout;
    };
    const repo = JSON.parse(await run(['repo', 'create', '--server', alice, 'door-cli', '--json'])).repository.repository_index;
    // bob reviews here: alice (a server admin) grants him the contributor role through the door.
    const grant = await fetch(`${front}${R(repo, '/access')}`, { method: 'PATCH', headers: { ...auth('alice'), 'content-type': 'application/json' }, body: JSON.stringify({ grant: [{ subject: 'user:bob', role: 'contributor' }] }) });
    expect(grant.status).to.equal(200);
    const src = path.join(tempDir(), 'src');
    await fsp.mkdir(src, { recursive: true });
    await fsp.writeFile(path.join(src, 'a.txt'), 'a\n');
    await run(['push', '--server', alice, '--repo', String(repo), '--line', 'main', src]);
    const task = JSON.parse(await run(['task', 'create', '--server', alice, '--repo', String(repo), '--title', 'T', '--intent', 'I', '--json'])).task.task_id;
    // Nobody configured: the owner is the person Caddy authenticated.
    const change = JSON.parse(await run(['change', 'create', '--server', alice, '--repo', String(repo), '--task', task, '--title', 'by CLI', '--base-line', 'main', '--json'])).change;
    expect(change.owner).to.equal('alice');
    await fsp.writeFile(path.join(src, 'a.txt'), 'b\n');
    await run(['patchset', 'push', '--server', alice, '--repo', String(repo), '--change', change.change_id, '--summary', 'one', src]);
    await run(['review', 'request', '--server', alice, '--repo', String(repo), '--change', change.change_id, '--reviewer', 'bob', '--json']);
    // bob, set up once with cairn config: --reviewer left out.
    await run(['config', 'set', 'user.name', 'bob']);
    expect((await run(['config', 'get', 'user.name'])).trim()).to.equal('bob');
    const review = JSON.parse(await run(['review', 'approve', '--server', bob, '--repo', String(repo), '--change', change.change_id, '--json'])).review;
    expect(review.reviewer).to.equal('bob');
    // A name that is not the authenticated person's is refused through the door.
    const wrong = await cli(['--as', 'mallory', 'review', 'approve', '--server', bob, '--repo', String(repo), '--change', change.change_id], env);
    expect(wrong.code).to.equal(1);
    expect(wrong.stderr).to.match(/HTTP 403/);
    const shown = await cli(['change', 'show', '--server', alice, '--repo', String(repo), change.change_id], env);
    expect(shown.code, shown.stderr).to.equal(0);
    const json = JSON.parse(shown.stdout);
    expect(json.reviewers).to.deep.equal([{ name: 'bob', kind: 'person', vote: 'approve', patchset_id: review.patchset_id, live: true }]);
    expect(json.change.owner).to.equal('alice');
  });

  it('the event feed streams through Caddy (server-sent events)', async () => {
    const repo = (await (await fetch(`${front}/v1/native/repository-authorities`, { method: 'POST', headers: { ...auth('alice'), 'content-type': 'application/json' }, body: JSON.stringify({ repository_name: 'front-sse', namespace: '', policy_flags: 0 }) })).json()).repository.repository_index;
    const ac = new AbortController();
    const res = await fetch(`${front}${R(repo, '/events')}`, { headers: { ...auth('alice'), accept: 'text/event-stream' }, signal: ac.signal });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    let text = '';
    const reader = res.body!.getReader();
    const reading = (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          text += Buffer.from(value).toString('utf8');
        }
      } catch { /* aborted */ }
    })();
    const made = await fetch(`${front}${R(repo, '/tasks')}`, { method: 'POST', headers: { ...auth('alice'), 'content-type': 'application/json' }, body: JSON.stringify({ title: 'streamed', intent: 'I' }) });
    const taskId = (await made.json()).task.task_id;
    await until('the task event through Caddy', () => text.includes(taskId));
    ac.abort();
    await reading;
  });

  it('the UI loads through Caddy in a browser and names the authenticated person', async function () {
    if (!CHROMIUM) {
      if (process.env.CI) throw new Error('chromium is not installed');
      this.skip();
    }
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
    try {
      const context = await browser.newContext({ httpCredentials: { username: 'alice', password: PASSWORDS.alice } });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      const res = await page.goto(`${front}/ui/`);
      expect(res!.status()).to.equal(200);
      expect(await page.locator('meta[name="cairn-identity"]').getAttribute('content')).to.equal('alice');
      await page.locator('.identity', { hasText: 'alice' }).first().waitFor();
      expect(errors).to.deep.equal([]);
    } finally {
      await browser.close();
    }
  });
});
