// A change's topic, work-in-progress mark and cc list over HTTP (docs/api.md "Topic, work in
// progress, cc"): `:setFlags` sets them with a `change.updated` event, the projection shows
// them, search finds them, a work-in-progress change asks no reviewer and stays out of the
// reviewer inbox until ready, they survive a restart (the people section, and a rebuild without
// it), and each bad body is refused with a clear 4xx that changes nothing.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { api, cli, expectError, ok, startTestServer, tempDir, type TestServer } from './helpers.js';
import { R, Seeder } from './ui-seed.js';

type Json = Record<string, any>;

describe('change flags: topic, work in progress, cc', function () {
  this.timeout(120_000);
  const data = path.join(tempDir(), 'data');
  let srv: TestServer;
  let s: Seeder;
  let c: string;
  let ps: string;
  before(async () => {
    srv = await startTestServer(data);
    s = await Seeder.register(srv.url, 'flags');
    const base = await s.snap({ 'a.txt': 'a\n' }, { moveLine: true });
    const rev = await s.snap({ 'a.txt': 'b\n' }, { parent: base });
    c = (await s.change('Flagged')).change;
    ps = await s.patchset(c, base, rev, 'one');
  });
  after(async () => { await srv.stop(); });

  const set = (body: unknown) => api(srv.url, 'POST', R(s.repo, `/changes/${c}:setFlags`), { json: body });
  const change = async () => (await s.get(`/changes/${c}`)).change as Json;

  it('sets, replaces and clears a topic, marks and unmarks work in progress, adds cc names; each change is one change.updated event', async () => {
    expect(await change()).to.include({ topic: null, wip: false });
    expect((await change()).cc).to.deep.equal([]);
    const before = (await s.get('/events?limit=1000')).events.length;
    let res = await ok(set({ topic: 'release-1', wip: true, cc: ['carol', 'dan', 'carol'] }));
    expect(res.change).to.include({ topic: 'release-1', wip: true });
    expect(res.change.cc).to.deep.equal(['carol', 'dan']);
    res = await ok(set({ topic: 'release-2', cc: ['dan', 'erin'] }));
    expect(res.change).to.include({ topic: 'release-2', wip: true });
    expect(res.change.cc).to.deep.equal(['carol', 'dan', 'erin']);
    // Nothing new: no event.
    await ok(set({ topic: 'release-2', wip: true, cc: ['carol'] }));
    res = await ok(set({ topic: null, wip: false }));
    expect(res.change).to.include({ topic: null, wip: false });
    const events = ((await s.get('/events?limit=1000')).events as Json[]).slice(before).filter((e) => e.type === 'change.updated');
    expect(events.map((e) => [e.data.fields, e.data.topic, e.data.wip])).to.deep.equal([
      ['topic,wip,cc', 'release-1', true],
      ['topic,cc', 'release-2', true],
      ['topic,wip', null, false],
    ]);
  });

  it('work in progress asks no reviewer and stays out of the reviewer inbox until ready', async () => {
    await s.post(`/changes/${c}:requestReview`, { patchset_id: ps, reviewers: ['bob'], reviewer_groups: ['core'] });
    const inbox = async () => ((await s.get('/read/reviewer-inbox')).rows as Json[]).map((r) => r.change_id);
    expect(await inbox()).to.deep.equal([c]);
    expect((await s.get(`/read/changes/${c}/attention`)).attention).to.deep.equal([{ name: 'bob', reason: 'review_requested' }]);
    await ok(set({ wip: true }));
    expect(await inbox()).to.deep.equal([]);
    expect((await s.get(`/read/changes/${c}/attention`)).attention).to.deep.equal([]);
    expect((await s.get('/read/dashboard?user=bob')).waiting_for_review).to.deep.equal([]);
    await ok(set({ topic: 'kept', cc: ['fay'] }));
    await ok(set({ wip: false }));
    expect(await inbox()).to.deep.equal([c]);
    expect((await s.get(`/read/changes/${c}/attention`)).attention).to.deep.equal([{ name: 'bob', reason: 'review_requested' }]);
    await ok(set({ wip: true }));
  });

  it('refuses bad bodies with a clear 4xx and changes nothing', async () => {
    const was = await change();
    const eventsBefore = (await s.get('/events?limit=1000')).events.length;
    for (const [body, status, msg] of [
      [{}, 422, /topic, wip or cc is required/],
      [[], 422, /./],
      [{ topic: 5 }, 422, /topic/],
      [{ wip: 'yes' }, 422, /wip/],
      [{ cc: 'carol' }, 422, /cc/],
      [{ cc: [1] }, 422, /cc/],
      [{ topic: ' ' }, 400, /topic must be non-empty/],
      [{ topic: 'x'.repeat(257) }, 400, /topic is longer than 256 characters/],
      [{ topic: 'a\nb' }, 400, /topic must not contain control characters/],
      [{ cc: [''] }, 400, /cc: a name must be non-empty/],
      [{ cc: ['ok', 'bad\u0007'] }, 400, /cc: a name must not contain control characters/],
      [{ cc: Array.from({ length: 51 }, (_, i) => `p${i}`) }, 400, /cc names more than 50 people/],
    ] as [unknown, number, RegExp][]) {
      const res = await set(body);
      expectError(res, status, JSON.stringify(body).slice(0, 60));
      expect(res.json.error, JSON.stringify(body).slice(0, 60)).to.match(msg);
    }
    // 48 more names would take the list past 50.
    const many = await set({ cc: Array.from({ length: 48 }, (_, i) => `q${i}`) });
    expectError(many, 400, 'past 50 in all');
    expect(many.json.error).to.match(/at most 50 people/);
    expectError(await api(srv.url, 'POST', R(s.repo, '/changes/change-999:setFlags'), { json: { wip: true } }), 404, 'no such change');
    expect(await change()).to.deep.equal(was);
    expect((await s.get('/events?limit=1000')).events).to.have.length(eventsBefore);
  });

  it('a closed change keeps its flags: setting them is refused (400)', async () => {
    const other = (await s.change('Closed')).change;
    await s.post(`/changes/${other}:close`, { status: 'abandoned' });
    const res = await api(srv.url, 'POST', R(s.repo, `/changes/${other}:setFlags`), { json: { topic: 'late' } });
    expectError(res, 400, 'closed');
    expect(res.json.error).to.match(/abandoned/);
  });

  it('searchable and kept across a restart: from the checkpoint\'s people section, and rebuilt from the records without it', async () => {
    const q = async (query: string) => ((await s.get(`/changes?q=${encodeURIComponent(query)}`)).changes as Json[]).map((x) => x.change_id);
    const expectAll = async () => {
      expect(await q('topic:kept')).to.deep.equal([c]);
      expect(await q('is:wip')).to.deep.equal([c]);
      expect(await q('cc:fay')).to.deep.equal([c]);
      expect(await q('is:wip is:open cc:erin topic:kept')).to.deep.equal([c]);
      expect(await q('topic:release-2')).to.deep.equal([]);
      expect((await s.get('/read/reviewer-inbox')).rows).to.deep.equal([]);
    };
    await expectAll();
    for (let round = 0; round < 2; round++) {
      await srv.stop();
      // fsck rebuilds the people section from the records and finds it the same bytes.
      const check = await cli(['fsck', '--data', data]);
      expect(check.code, check.stdout + check.stderr).to.equal(0);
      if (round === 1) {
        const ckpts: string[] = [];
        const walk = async (d: string): Promise<void> => {
          for (const e of await fsp.readdir(d, { withFileTypes: true })) {
            const p = path.join(d, e.name);
            if (e.isDirectory()) await walk(p);
            else if (e.name === 'workflow.ckpt') ckpts.push(p);
          }
        };
        await walk(data);
        expect(ckpts.length).to.be.greaterThan(0);
        for (const p of ckpts) await fsp.rm(p);
      }
      srv = await startTestServer(data);
      s = new Seeder(srv.url, s.repo, null);
      await expectAll();
    }
  });
});
