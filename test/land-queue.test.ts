// The land queue over real HTTP against the real gates (docs/land-queue.md): speculative CI on
// the merged result, ordered lands onto the tested heads, ejection with evidence, retries on
// the same tree, reuse of a passed run of an identical tree, conflicts, bisection of batches,
// and the policy flag that sends untested merges through the queue. CI is played by the test:
// it claims the queue's repo.ci jobs and completes or fails them.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { silentLog } from '../lib/authority/logger.js';
import { nextQueueMove, DEFAULT_QUEUE_OPTIONS, type QueueEntryRecord, type QueueFacts } from '../lib/domain/workflow/land-queue.js';
import { statusLines } from '../lib/cli/workflow-commands.js';
import { api, cli, expectError, ok, register, startTestServer, tempDir, type TestServer } from './helpers.js';
import { Fixture, R, result, RUNTIME, type Json } from './land-queue-fixture.js';

const BASE = { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n', 'shared.txt': '1\n2\n3\n' };

describe('land queue over HTTP', function () {
  this.timeout(120_000);
  let s: TestServer;
  after(() => s?.stop());

  async function fresh(name: string, flags = 0): Promise<{ f: Fixture; base: string }> {
    const f = new Fixture(s, await register(s.url, name, '', flags));
    const base = await f.snap(BASE, 'main', true);
    return { f, base };
  }

  before(async () => {
    s = await startTestServer(undefined, { queue: { depth: 4, retries: 1, batch: 1, stall_s: 3600 } });
  });

  it('three changes, the middle one fails CI: the first and third land in order, each onto the tree its CI tested; the second is ejected with its evidence', async () => {
    const { f, base } = await fresh('three');
    const c1 = await f.change(base, { ...BASE, 'a.txt': 'A\n' });
    const c2 = await f.change(base, { ...BASE, 'b.txt': 'B\n' });
    const c3 = await f.change(base, { ...BASE, 'c.txt': 'C\n' });
    const e1 = await f.enqueue(c1.ref);
    const e2 = await f.enqueue(c2.ref);
    const e3 = await f.enqueue(c3.ref);
    expect(e1).to.include({ state: 'queued', position: 1, target_line: 'main', mode: 'merge', patchset_id: c1.ps });
    // Speculation: S1 = base + c1, S2 = S1 + c2, S3 = S2 + c3, one repo.ci job each.
    const [s1, s2, s3] = [await f.entry(e1.entry_id), await f.entry(e2.entry_id), await f.entry(e3.entry_id)];
    for (const e of [s1, s2, s3]) expect(e.state).to.equal('testing');
    expect(s1.speculation.base_snapshot_id).to.equal(base);
    expect(s2.speculation.base_snapshot_id).to.equal(s1.speculation.snapshot_id);
    expect(s3.speculation.base_snapshot_id).to.equal(s2.speculation.snapshot_id);
    expect(s3.speculation.ahead).to.deep.equal([e1.entry_id, e2.entry_id]);
    const job1 = await f.job(s1.speculation.worker_job_indexes[0]);
    expect(job1).to.include({ job_kind: 11, snapshot_id: s1.speculation.snapshot_id, trigger: 'land_queue' });
    expect(job1.snapshot_index).to.be.a('number');
    expect(job1.land_queue_entry_ids).to.deep.equal([e1.entry_id]);
    // Nothing lands before its CI passes.
    expect(await f.head()).to.equal(base);

    // c2 fails twice on the same tree (one retry), c3 passes on S3, c1 passes.
    await f.runJob(s2.speculation.worker_job_indexes[0], 'fail');
    const retried = await f.entry(e2.entry_id);
    expect(retried.speculation.worker_job_indexes).to.have.length(2);
    expect(retried.speculation.snapshot_id).to.equal(s2.speculation.snapshot_id);
    await f.runJob(retried.speculation.worker_job_indexes[1], 'fail');
    expect((await f.entry(e2.entry_id)).state, 'c2 waits while c1 is ahead of it').to.equal('testing');
    await f.runJob(s3.speculation.worker_job_indexes[0], 'pass');
    expect(await f.head()).to.equal(base);
    await f.runJob(s1.speculation.worker_job_indexes[0], 'pass');

    const l1 = await f.entry(e1.entry_id);
    expect(l1).to.include({ state: 'landed', landed_snapshot_id: s1.speculation.snapshot_id, passed_on_retry: false });
    const land1 = (await ok(f.get(`/lands/${l1.land_id}`))).land;
    expect(land1).to.include({ status: 'landed', target_head_before: base, landed_snapshot_id: s1.speculation.snapshot_id, land_queue_entry_id: e1.entry_id, mode: 'merge' });

    const x2 = await f.entry(e2.entry_id);
    expect(x2.state).to.equal('ejected');
    expect(x2.ejection).to.include({ reason: 'ci_failed' });
    expect(x2.ejection.worker_job_indexes).to.deep.equal(retried.speculation.worker_job_indexes);
    expect(x2.ejection.failing_suites).to.deep.equal(['unit']);
    expect(x2.ejection.message).to.match(/failed 2 time/);
    expect((await ok(f.get(`/changes/${c2.change}`))).change.status, 'an ejected change stays open').to.equal('active');

    // c3's speculation held c2: it is rebuilt on S1 alone and tested again.
    const r3 = await f.entry(e3.entry_id);
    expect(r3.state).to.equal('testing');
    expect(r3.speculation.base_snapshot_id).to.equal(s1.speculation.snapshot_id);
    expect(r3.speculation.snapshot_id).to.not.equal(s3.speculation.snapshot_id);
    expect(await f.head()).to.equal(s1.speculation.snapshot_id);
    const job3 = r3.speculation.worker_job_indexes[0];
    expect((await f.job(job3)).snapshot_id).to.equal(r3.speculation.snapshot_id);
    await f.runJob(job3, 'pass');
    const l3 = await f.entry(e3.entry_id);
    expect(l3).to.include({ state: 'landed', landed_snapshot_id: r3.speculation.snapshot_id });
    expect(await f.head()).to.equal(r3.speculation.snapshot_id);
    const land3 = (await ok(f.get(`/lands/${l3.land_id}`))).land;
    expect(land3.target_head_before).to.equal(s1.speculation.snapshot_id);
    // The landed tree holds c1 and c3, not c2.
    const a = await f.authority();
    const tree = a.store.snapshot(await f.head())!.root_tree_id;
    const names = Object.fromEntries(await Promise.all((await a.store.readTree(tree)).map(async (e) => [e.name, (await a.store.readObject('blob', e.id)).toString()])));
    expect(names).to.include({ 'a.txt': 'A\n', 'b.txt': 'b\n', 'c.txt': 'C\n' });
    // Each change landed once; the list shows the finished entries, newest first.
    expect((await f.landsOf(c1.change)).filter((l) => l.status === 'landed')).to.have.length(1);
    expect((await f.landsOf(c3.change)).filter((l) => l.status === 'landed')).to.have.length(1);
    const list = await ok(f.get('/land-queue?target_line=main'));
    expect(list.entries).to.deep.equal([]);
    expect(list.recent.map((e: Json) => e.entry_id)).to.deep.equal([e3.entry_id, e2.entry_id, e1.entry_id]);
    // Every move is an event on the repository feed, in order.
    const feed = (await ok(f.get('/events?types=queue.*&limit=1000'))).events as Json[];
    const moves = feed.map((e) => `${e.type}:${e.data.entry_id}`);
    for (const m of [`queue.entry_added:${e1.entry_id}`, `queue.entry_testing:${e2.entry_id}`, `queue.entry_retried:${e2.entry_id}`, `queue.entry_landed:${e1.entry_id}`, `queue.entry_ejected:${e2.entry_id}`, `queue.entry_requeued:${e3.entry_id}`, `queue.entry_landed:${e3.entry_id}`]) expect(moves).to.include(m);
    expect(moves.indexOf(`queue.entry_landed:${e1.entry_id}`)).to.be.lessThan(moves.indexOf(`queue.entry_landed:${e3.entry_id}`));
    expect(feed.find((e) => e.type === 'queue.entry_ejected')!.data.reason).to.equal('ci_failed');
    // The land's policy decision names the queue's job as its CI evidence.
    const decision = (await ok(f.get(`/patchsets/${c1.ps}/policy`)));
    expect(decision.ci_worker_job_index ?? decision.policy?.ci_worker_job_index).to.equal(s1.speculation.worker_job_indexes[0]);
  });

  it('a flaky failure followed by a pass on the same tree lands, recorded as passed on retry', async () => {
    const { f, base } = await fresh('flaky');
    const c = await f.change(base, { ...BASE, 'a.txt': 'flaky\n' });
    const e = await f.enqueue(c.ref);
    const t = await f.entry(e.entry_id);
    expect(t.speculation.base_snapshot_id).to.equal(base);
    await f.runJob(t.speculation.worker_job_indexes[0], 'error');
    const again = await f.entry(e.entry_id);
    expect(again.speculation.worker_job_indexes).to.have.length(2);
    expect(again.ci).to.include({ verdict: 'pending', runs: 2 });
    await f.runJob(again.speculation.worker_job_indexes[1], 'pass');
    const done = await f.entry(e.entry_id);
    expect(done).to.include({ state: 'landed', passed_on_retry: true });
    expect(await f.head()).to.equal(t.speculation.snapshot_id);
  });

  it('a speculation whose tree is the one the patchset CI already passed reuses that run: no new job', async () => {
    const { f, base } = await fresh('reuse');
    const c = await f.change(base, { ...BASE, 'a.txt': 'reuse\n' });
    const run = await ok(f.post(`/patchsets/${c.ps}:runCi`, {}), 'runCi');
    const claim = await ok(f.post(`/worker-jobs/${run.job.worker_job_index}:claim`, { accepted_runtime_contracts: [RUNTIME] }));
    await ok(f.post(`/worker-jobs/${run.job.worker_job_index}:complete`, { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { job_kind: 7, result: result('pass') } }));
    const jobsBefore = (await ok(f.get('/worker-jobs'))).jobs.length;
    const e = await f.enqueue(c.ref, 'direct');
    const done = await f.entry(e.entry_id);
    expect(done.state).to.equal('landed');
    expect(done.speculation).to.include({ reused_worker_job_index: run.job.worker_job_index, line_action: 'fast_forward', snapshot_id: c.revision });
    expect(done.speculation.worker_job_indexes).to.deep.equal([]);
    expect((await ok(f.get('/worker-jobs'))).jobs.length, 'no job was queued').to.equal(jobsBefore);
    expect(await f.head()).to.equal(c.revision);
  });

  it('a queue job that passed on a tree is reused for an identical speculative tree', async () => {
    const { f, base } = await fresh('reuse-queue');
    const c = await f.change(base, { ...BASE, 'a.txt': 'x\n' });
    const e = await f.enqueue(c.ref);
    const t = await f.entry(e.entry_id);
    await f.runJob(t.speculation.worker_job_indexes[0], 'pass');
    expect((await f.entry(e.entry_id)).state).to.equal('landed');
    // A second change making the same edit from the same base: merged onto the new head, its
    // tree is the one the first job passed on (both sides made the same change).
    const c2 = await f.change(base, { ...BASE, 'a.txt': 'x\n' });
    const jobsBefore = (await ok(f.get('/worker-jobs'))).jobs.length;
    const e2 = await f.enqueue(c2.ref);
    const t2 = await f.entry(e2.entry_id);
    expect(t2.speculation.root_tree_id).to.equal(t.speculation.root_tree_id);
    expect(t2.speculation.worker_job_indexes).to.deep.equal([]);
    expect((await ok(f.get('/worker-jobs'))).jobs.length, 'no job was queued').to.equal(jobsBefore);
    expect(t2.speculation.reused_worker_job_index).to.equal(t.speculation.worker_job_indexes[0]);
    expect(t2.state).to.equal('landed');
  });

  it('a conflict ejects at build time with its paths; the entries behind go on', async () => {
    const { f, base } = await fresh('conflict');
    const c1 = await f.change(base, { ...BASE, 'shared.txt': '1\nX\n3\n' });
    const c2 = await f.change(base, { ...BASE, 'shared.txt': '1\nY\n3\n' });
    const c3 = await f.change(base, { ...BASE, 'c.txt': 'C\n' });
    const [e1, e2, e3] = [await f.enqueue(c1.ref), await f.enqueue(c2.ref), await f.enqueue(c3.ref)];
    const x2 = await f.entry(e2.entry_id);
    expect(x2.state).to.equal('ejected');
    expect(x2.ejection.reason).to.equal('conflict');
    expect(x2.ejection.conflict_paths).to.deep.equal(['shared.txt']);
    const s1 = await f.entry(e1.entry_id);
    const s3 = await f.entry(e3.entry_id);
    expect(s3.speculation.base_snapshot_id).to.equal(s1.speculation.snapshot_id);
    await f.runJob(s1.speculation.worker_job_indexes[0], 'pass');
    await f.runJob(s3.speculation.worker_job_indexes[0], 'pass');
    expect((await f.entry(e3.entry_id)).state).to.equal('landed');
  });

  it('an attestation revoked while queued: the land judges the gates in its commit and ejects the entry', async () => {
    const { f, base } = await fresh('revoked');
    const c = await f.change(base, { ...BASE, 'a.txt': 'r\n' });
    const e = await f.enqueue(c.ref);
    const t = await f.entry(e.entry_id);
    await ok(api(s.url, 'PUT', R(f.repo, `/patchsets/${c.ps}/attestation`), { json: { verification_state: 'fail', revoked: true } }), 'revoke');
    await f.runJob(t.speculation.worker_job_indexes[0], 'pass');
    const x = await f.entry(e.entry_id);
    expect(x.state).to.equal('ejected');
    expect(x.ejection.reason).to.equal('gates');
    expect(x.ejection.message).to.match(/blocked_by_policy/);
    expect(await f.head()).to.equal(base);
    const land = (await ok(f.get(`/lands/${x.land_id}`))).land;
    expect(land).to.include({ status: 'rejected', failure_kind: 'blocked_by_policy', land_queue_entry_id: e.entry_id });
  });

  it('a new patchset, a closed change or a removal takes the entry out; a land outside the queue rebuilds the speculation', async () => {
    const { f, base } = await fresh('leave');
    const c1 = await f.change(base, { ...BASE, 'a.txt': '1\n' });
    const c2 = await f.change(base, { ...BASE, 'b.txt': '2\n' });
    const e1 = await f.enqueue(c1.ref);
    const e2 = await f.enqueue(c2.ref);
    await f.settle();
    const removed = await ok(api(s.url, 'DELETE', R(f.repo, `/land-queue/${e1.entry_id}`)));
    expect(removed.entry.state).to.equal('removed');
    const job1 = (await f.entry(e1.entry_id)).speculation.worker_job_indexes[0];
    expect((await f.job(job1)).state, 'its queued job ended').to.equal('failed');
    expectError(await api(s.url, 'DELETE', R(f.repo, `/land-queue/${e1.entry_id}`)), 409);
    const r2 = await f.entry(e2.entry_id);
    expect(r2.speculation.base_snapshot_id, 'rebuilt without the removed entry').to.equal(base);
    await ok(f.post(`/changes/${c2.change}:close`, { status: 'abandoned' }));
    const x2 = await f.entry(e2.entry_id);
    expect(x2).to.include({ state: 'ejected' });
    expect(x2.ejection.reason).to.equal('change_not_landable');
  });

  it('a patchset pushed or selected while queued ejects the entry in that same commit (patchset_changed); the queued patchset never lands, the new one lands when queued again', async () => {
    const { f, base } = await fresh('new-patchset');
    const c1 = await f.change(base, { ...BASE, 'a.txt': 'first try\n' });
    const c2 = await f.change(base, { ...BASE, 'b.txt': 'behind\n' });
    const e1 = await f.enqueue(c1.ref);
    const e2 = await f.enqueue(c2.ref);
    const [s1, s2] = [await f.entry(e1.entry_id), await f.entry(e2.entry_id)];
    expect(s2.speculation.base_snapshot_id, 'e2 is built on e1').to.equal(s1.speculation.snapshot_id);
    const job1 = s1.speculation.worker_job_indexes[0];
    const job2 = s2.speculation.worker_job_indexes[0];

    // With the queue's driver stopped, only the push's own commit can take the entry out.
    const a = await f.authority();
    const restart = async () => {
      a.queue.start({ depth: 4, retries: 1, batch: 1, stall_s: 3600 }, () => true, silentLog);
      await f.settle();
    };
    a.queue.stop();
    const fixed = await f.snap({ ...BASE, 'a.txt': 'the fix\n' }, 'main', false, base);
    const ps2 = (await ok(f.post(`/changes/${c1.change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: fixed, summary: 'fix', author_mode: 'human_with_ai_assist', author: 'carol' }), 'push')).patchset;
    const x1 = (await ok(f.get(`/land-queue/${e1.entry_id}`))).entry;
    expect(x1.state, JSON.stringify(x1)).to.equal('ejected');
    expect(x1.ejection.reason).to.equal('patchset_changed');
    expect(x1.ejection.message).to.include(ps2.patchset_id);
    expect((await f.job(job1)).state, 'the ejected entry\'s queued job ended with it').to.equal('failed');
    expectError(await f.post(`/worker-jobs/${job1}:claim`, { accepted_runtime_contracts: [RUNTIME] }), 409, 'the ended job cannot be claimed');
    await restart();
    // The entry behind is rebuilt without it, as after any ejection.
    const r2 = await f.entry(e2.entry_id);
    expect(r2.speculation.base_snapshot_id).to.equal(base);
    expect((await f.job(job2)).state, 'its speculation on the ejected entry ended').to.equal('failed');
    await f.runJob(r2.speculation.worker_job_indexes[0], 'pass');
    expect((await f.entry(e2.entry_id)).state).to.equal('landed');

    // Queued again while the first patchset is still selected, then another selection: ejected in the select's commit.
    const e1b = await f.enqueue(c1.ref);
    expect(e1b.patchset_id).to.equal(c1.ps);
    const b1 = await f.entry(e1b.entry_id);
    expect(b1.state).to.equal('testing');
    a.queue.stop();
    await ok(f.post(`/changes/${c1.change}:selectPatchset`, { patchset_id: ps2.patchset_id }), 'select');
    const xb = (await ok(f.get(`/land-queue/${e1b.entry_id}`))).entry;
    expect(xb.state, JSON.stringify(xb)).to.equal('ejected');
    expect(xb.ejection.reason).to.equal('patchset_changed');
    expect((await f.job(b1.speculation.worker_job_indexes[0])).state).to.equal('failed');
    await restart();

    // The fix, attested and approved, queued again: it lands, and the first patchset never did.
    await ok(api(s.url, 'PUT', R(f.repo, `/patchsets/${ps2.patchset_id}/attestation`), { json: { verification_state: 'pass' } }), 'attest');
    await ok(f.post(`/changes/${c1.change}/reviews`, { patchset_id: ps2.patchset_id, reviewer: 'alice', action: 'approve' }), 'approve');
    const e1c = await f.enqueue(c1.ref);
    expect(e1c.patchset_id).to.equal(ps2.patchset_id);
    const c = await f.entry(e1c.entry_id);
    await f.runJob(c.speculation.worker_job_indexes[0], 'pass');
    const done = await f.entry(e1c.entry_id);
    expect(done.state, JSON.stringify(done)).to.equal('landed');
    const landed = (await f.landsOf(c1.change)).filter((l) => l.status === 'landed');
    expect(landed.map((l) => l.patchset_id)).to.deep.equal([ps2.patchset_id]);
    expect(await f.head()).to.equal(done.landed_snapshot_id);
    const tree = a.store.snapshot(done.landed_snapshot_id)!.root_tree_id;
    const files = Object.fromEntries(await Promise.all((await a.store.readTree(tree)).map(async (e) => [e.name, (await a.store.readObject('blob', e.id)).toString()])));
    expect(files).to.deep.equal({ ...BASE, 'a.txt': 'the fix\n', 'b.txt': 'behind\n' });
  });

  it('a move that fails on one line holds up that line only; the other lines go on', async () => {
    const { f, base } = await fresh('two-lines');
    const devBase = await f.snap({ ...BASE, 'dev.txt': 'd\n' }, 'dev', true);
    const devRev = await f.snap({ ...BASE, 'dev.txt': 'D\n' }, 'dev', false, devBase);
    const t = (await ok(f.post('/tasks', { title: 'T', intent: 'I' }))).task;
    const dc = (await ok(f.post('/changes', { task_id: t.task_id, title: 'dev', base_line: 'dev' }))).change;
    const dp = (await ok(f.post(`/changes/${dc.change_id}/patchsets`, { base_snapshot_id: devBase, revision_snapshot_id: devRev, summary: 's', author_mode: 'human_with_ai_assist', author: 'carol' }))).patchset;
    await ok(api(s.url, 'PUT', R(f.repo, `/patchsets/${dp.patchset_id}/attestation`), { json: { verification_state: 'pass' } }));
    await ok(f.post(`/changes/${dc.change_id}/reviews`, { patchset_id: dp.patchset_id, reviewer: 'alice', action: 'approve' }));
    const c = await f.change(base, { ...BASE, 'a.txt': 'main\n' });
    // The dev line's builds fail (as a damaged object would make them).
    const a = await f.authority();
    const merge = a.lands.mergeOnto.bind(a.lands);
    a.lands.mergeOnto = (head, ps, mode, ref, pending) => (ps.patchset_id === dp.patchset_id ? Promise.reject(new Error('object damaged')) : merge(head, ps, mode, ref, pending));
    try {
      const ed = await f.enqueue(dc.change_ref);
      const em = await f.enqueue(c.ref);
      const m = await f.entry(em.entry_id);
      expect(m.state).to.equal('testing');
      await f.runJob(m.speculation.worker_job_indexes[0], 'pass');
      expect((await f.entry(em.entry_id)).state).to.equal('landed');
      expect((await f.entry(ed.entry_id)).state, 'the dev entry waits').to.equal('queued');
    } finally {
      a.lands.mergeOnto = merge;
    }
    a.queue.kick();
    await f.settle();
  });

  it('refuses what cannot join: unknown change 404, closed or already queued 409, blocked review 409, bad body 400/422; nothing written', async () => {
    const { f, base } = await fresh('refusals');
    const c = await f.change(base, { ...BASE, 'a.txt': 'q\n' });
    expectError(await f.post('/land-queue', { change_ref: 'change-99', mode: 'merge' }), 404);
    expectError(await f.post('/land-queue', { change_ref: c.ref, mode: 'ff-only' }), 422);
    expectError(await f.post('/land-queue', { change_ref: c.ref, mode: 'merge', extra: 1 }), 422);
    expectError(await f.post('/land-queue', { change_ref: c.ref, mode: 'merge', target_line: 'nope' }), 404);
    expectError(await api(s.url, 'GET', R(f.repo, '/land-queue/lq-99')), 404);
    expectError(await api(s.url, 'GET', R(f.repo, '/land-queue/lq-0')), 404);
    expectError(await api(s.url, 'GET', R(f.repo, '/land-queue/..%2Fx')), 404);
    const blocked = await f.change(base, { ...BASE, 'b.txt': 'q\n' });
    await ok(f.post(`/changes/${blocked.change}/reviews`, { patchset_id: blocked.ps, reviewer: 'bob', action: 'request_changes', blocking: true }));
    const res = await f.post('/land-queue', { change_ref: blocked.ref, mode: 'merge' });
    expectError(res, 409);
    expect(res.json.error).to.match(/cannot join the land queue: blocked_by_(policy|review)/);
    expect((await ok(f.get('/land-queue'))).entries).to.deep.equal([]);
    await f.enqueue(c.ref);
    const twice = await f.post('/land-queue', { change_ref: c.ref, mode: 'merge' });
    expectError(twice, 409);
    expect(twice.json.error).to.match(/already in the land queue/);
  });

  it('policy_flags bit 0: a merge whose tree no CI tested is refused with queue_required; a fresh merge and the queue still land', async () => {
    const { f, base } = await fresh('flagged', 1);
    const c1 = await f.change(base, { ...BASE, 'a.txt': 'p\n' });
    const c2 = await f.change(base, { ...BASE, 'b.txt': 'p\n' });
    // c1: its own CI passed, head = base: the merge's tree is the revision's tree.
    for (const c of [c1, c2]) {
      const run = await ok(f.post(`/patchsets/${c.ps}:runCi`, {}), 'runCi');
      const claim = await ok(f.post(`/worker-jobs/${run.job.worker_job_index}:claim`, { accepted_runtime_contracts: [RUNTIME] }));
      await ok(f.post(`/worker-jobs/${run.job.worker_job_index}:complete`, { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { job_kind: 7, result: result('pass') } }));
      await ok(f.post(`/patchsets/${c.ps}:evaluatePolicy`, {}));
    }
    const landed = await f.post(`/changes/${c1.change}:submit`, { mode: 'merge' });
    expect(landed.status, landed.text).to.equal(200);
    const refused = await f.post(`/changes/${c2.change}:submit`, { mode: 'merge' });
    expect(refused.status, refused.text).to.equal(409);
    expect(refused.json.failure_kind).to.equal('queue_required');
    expect(refused.json.error).to.match(/land queue/);
    const e = await f.enqueue(c2.ref);
    const t = await f.entry(e.entry_id);
    await f.runJob(t.speculation.worker_job_indexes[0], 'pass');
    expect((await f.entry(e.entry_id)).state).to.equal('landed');
  });

  describe('policy_flags bit 1: unresolved comment threads block the land', () => {
    const ciPass = async (f: Fixture, ps: string) => {
      const run = await ok(f.post(`/patchsets/${ps}:runCi`, {}), 'runCi');
      const claim = await ok(f.post(`/worker-jobs/${run.job.worker_job_index}:claim`, { accepted_runtime_contracts: [RUNTIME] }));
      await ok(f.post(`/worker-jobs/${run.job.worker_job_index}:complete`, { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { job_kind: 7, result: result('pass') } }));
      await ok(f.post(`/patchsets/${ps}:evaluatePolicy`, {}));
    };
    const readiness = async (f: Fixture, ref: string) => ok(f.get(`/read/changes/${ref}/readiness`));
    const thread = async (f: Fixture, c: { change: string; ps: string }, json: Json = {}) => (await ok(f.post(`/changes/${c.change}/comments`, { patchset_id: c.ps, author: 'alice', body: 'why?', anchor: { path: 'a.txt', line: 1 }, ...json }), 'comment')).thread_id;

    it('readiness names unresolved_threads with the count; the land is refused 409 and recorded; resolving the thread clears both', async () => {
      const { f, base } = await fresh('resolve-gate', 2);
      const c = await f.change(base, { ...BASE, 'a.txt': 'x\n' });
      await ciPass(f, c.ps);
      const open = await thread(f, c);
      await thread(f, c, { resolution: 'resolved', anchor: undefined });
      const r = await readiness(f, c.ref);
      expect(r).to.include({ can_land: false, blocked_by: 'unresolved_threads', unresolved_threads: 1 });
      expect(r.reason).to.match(/^1 unresolved comment thread/);
      // `cairn change show` prints the blocker as the readiness answer names it.
      const shown = JSON.parse((await cli(['change', 'show', '--server', s.url, '--repo', String(f.repo), c.ref])).stdout);
      expect(shown.readiness).to.include({ blocked_by: 'unresolved_threads', unresolved_threads: 1 });
      expect(statusLines(shown.readiness).at(-1)).to.match(/^can land: no, because 1 unresolved comment thread.* \(unresolved_threads\)$/);
      const refused = await f.post(`/changes/${c.change}:submit`, { mode: 'merge' });
      expect(refused.status, refused.text).to.equal(409);
      expect(refused.json.failure_kind).to.equal('unresolved_threads');
      expect(refused.json.error).to.match(/1 unresolved comment thread/);
      expect((await f.landsOf(c.change)).map((l) => [l.status, l.failure_kind])).to.deep.equal([['rejected', 'unresolved_threads']]);
      const joined = await f.post('/land-queue', { change_ref: c.ref, mode: 'merge' });
      expectError(joined, 409);
      expect(joined.json.error).to.match(/cannot join the land queue: unresolved_threads: 1 unresolved/);
      expect(await f.head()).to.equal(base);

      await ok(f.post(`/changes/${c.change}/threads/${open}:resolve`, { author: 'carol' }), 'resolve');
      expect(await readiness(f, c.ref)).to.include({ can_land: true, blocked_by: null, unresolved_threads: 0 });
      const landed = await f.post(`/changes/${c.change}:submit`, { mode: 'merge' });
      expect(landed.status, landed.text).to.equal(200);
      expect(await f.head()).to.not.equal(base);
    });

    it('without the bit an unresolved thread is counted but does not block', async () => {
      const { f, base } = await fresh('resolve-off', 1);
      const c = await f.change(base, { ...BASE, 'a.txt': 'y\n' });
      await ciPass(f, c.ps);
      await thread(f, c);
      expect(await readiness(f, c.ref)).to.include({ can_land: true, blocked_by: null, unresolved_threads: 1 });
      const landed = await f.post(`/changes/${c.change}:submit`, { mode: 'merge' });
      expect(landed.status, landed.text).to.equal(200);
    });

    it('a thread opened while the change is queued: the land judges it in its commit and ejects the entry', async () => {
      const { f, base } = await fresh('resolve-queue', 3);
      const c = await f.change(base, { ...BASE, 'a.txt': 'z\n' });
      const e = await f.enqueue(c.ref);
      const t = await f.entry(e.entry_id);
      expect(t.state).to.equal('testing');
      await thread(f, c);
      await f.runJob(t.speculation.worker_job_indexes[0], 'pass');
      const x = await f.entry(e.entry_id);
      expect(x.state).to.equal('ejected');
      expect(x.ejection.reason).to.equal('gates');
      expect(x.ejection.message).to.match(/^unresolved_threads: 1 unresolved/);
      expect(await f.head()).to.equal(base);
      const land = (await ok(f.get(`/lands/${x.land_id}`))).land;
      expect(land).to.include({ status: 'rejected', failure_kind: 'unresolved_threads', land_queue_entry_id: e.entry_id });
    });
  });

  it('batches: two entries tested by one job; a failed batch is bisected and the failing entry ejected', async () => {
    const b = await startTestServer(undefined, { queue: { depth: 2, retries: 0, batch: 2, stall_s: 3600 } });
    try {
      const f = new Fixture(b, await register(b.url, 'batch'));
      const base = await f.snap(BASE, 'main', true);
      const c1 = await f.change(base, { ...BASE, 'a.txt': '1\n' });
      const c2 = await f.change(base, { ...BASE, 'b.txt': '2\n' });
      // Both queued before the queue moves (else the first would be built alone on arrival).
      const a = await f.authority();
      a.queue.stop();
      const e1 = await f.enqueue(c1.ref);
      const e2 = await f.enqueue(c2.ref);
      a.queue.start({ depth: 2, retries: 0, batch: 2, stall_s: 3600 }, () => true, silentLog);
      await f.settle();
      const [s1, s2] = [await f.entry(e1.entry_id), await f.entry(e2.entry_id)];
      // One build may have taken e1 alone before e2 arrived; then e2 is its own batch.
      if (s1.speculation.tested_by === e2.entry_id) {
        expect(s2.speculation.covers).to.deep.equal([e1.entry_id, e2.entry_id]);
        expect((await f.job(s2.speculation.worker_job_indexes[0])).land_queue_entry_ids).to.deep.equal([e1.entry_id, e2.entry_id]);
        await f.runJob(s2.speculation.worker_job_indexes[0], 'fail');
        // Bisected: e1 alone, then e2 alone.
        const h1 = await f.entry(e1.entry_id);
        expect(h1.batch_limit, JSON.stringify(h1)).to.equal(1);
        expect(h1.speculation.tested_by).to.equal(e1.entry_id);
        await f.runJob(h1.speculation.worker_job_indexes[0], 'pass');
        const h2 = await f.entry(e2.entry_id);
        await f.runJob(h2.speculation.worker_job_indexes[0], 'fail');
        expect((await f.entry(e1.entry_id)).state).to.equal('landed');
        expect((await f.entry(e2.entry_id)).state).to.equal('ejected');
      } else {
        expect.fail(`expected one batch of two; got ${JSON.stringify([s1.speculation, s2.speculation])}`);
      }
    } finally {
      await b.stop();
    }
  });
});

describe('land queue across restarts', function () {
  this.timeout(120_000);
  it('the active entries come back in order from workflow.ckpt, and from workflow.log when the checkpoint is gone; fsck agrees', async () => {
    const data = path.join(tempDir(), 'data');
    let s = await startTestServer(data, { queue: { depth: 1, retries: 0, batch: 1, stall_s: 3600 } });
    const f = new Fixture(s, await register(s.url, 'restart'));
    const base = await f.snap(BASE, 'main', true);
    const ids: string[] = [];
    for (const file of ['a.txt', 'b.txt', 'c.txt']) ids.push((await f.enqueue((await f.change(base, { ...BASE, [file]: 'new\n' })).ref)).entry_id);
    await f.settle();
    const first = await f.entry(ids[0]);
    await f.runJob(first.speculation.worker_job_indexes[0], 'pass');
    const before = (await ok(f.get('/land-queue'))).entries.map((e: Json) => [e.entry_id, e.state, e.position]);
    expect(before.map((e: string[]) => e[0])).to.deep.equal([ids[1], ids[2]]);
    await s.stop();
    for (const drop of [false, true]) {
      const ckpt = path.join(data, 'repositories', String(f.repo), 'workflow.ckpt');
      if (drop) await fsp.rm(ckpt);
      else expect((await fsp.stat(ckpt)).size).to.be.greaterThan(0);
      s = await startTestServer(data, { queue: { depth: 1, retries: 0, batch: 1, stall_s: 3600 } });
      const g = new Fixture(s, f.repo);
      await g.settle();
      const after = (await ok(g.get('/land-queue'))).entries.map((e: Json) => [e.entry_id, e.state, e.position]);
      expect(after, drop ? 'rebuilt from workflow.log' : 'from workflow.ckpt').to.deep.equal(before);
      expect((await ok(g.get(`/land-queue/${ids[0]}`))).entry.state).to.equal('landed');
      await s.stop();
    }
    const fsck = await cli(['fsck', '--data', data, '--json']);
    expect(fsck.code, fsck.stdout + fsck.stderr).to.equal(0);
  });
});

describe('land queue: id floors (serve --lease: after a failover new entries continue past what the old writer may have handed out)', function () {
  this.timeout(120_000);
  it('new entries take sequences past the `land_queue_entry` floor; the list and its recent entries read across the gap; a sequence in the gap is 404; restarts (with and without workflow.ckpt) keep it; fsck agrees', async () => {
    const data = path.join(tempDir(), 'data');
    const opts = { queue: { depth: 1, retries: 0, batch: 1, stall_s: 3600 } };
    let s = await startTestServer(data, opts);
    try {
      let f = new Fixture(s, await register(s.url, 'floors'));
      const base = await f.snap(BASE, 'main', true);
      const enqueue = async (file: string) => (await f.enqueue((await f.change(base, { ...BASE, [file]: `${file}\n` })).ref)).entry_id as string;
      expect(await enqueue('a.txt')).to.equal('lq-1');
      await (await s.ready).setIdFloors(new Map([[f.repo, { land_queue_entry: 7 }]]));
      expect([await enqueue('b.txt'), await enqueue('c.txt')]).to.deep.equal(['lq-8', 'lq-9']);
      expect((await s.ready).idHighs(f.repo)).to.include({ land_queue_entry: 9 });
      await f.settle();
      expect((await ok(f.get('/land-queue'))).entries.map((e: Json) => [e.entry_id, e.sequence, e.position])).to.deep.equal([['lq-1', 1, 1], ['lq-8', 8, 2], ['lq-9', 9, 3]]);
      for (const gap of ['lq-2', 'lq-7']) expectError(await f.get(`/land-queue/${gap}`), 404, gap);
      // Finished entries are read newest first across the gap.
      for (const id of ['lq-9', 'lq-1', 'lq-8']) await ok(api(s.url, 'DELETE', R(f.repo, `/land-queue/${id}`)));
      const recent = async () => (await ok(f.get('/land-queue'))).recent.map((e: Json) => e.entry_id);
      expect(await recent()).to.deep.equal(['lq-9', 'lq-8', 'lq-1']);
      await s.stop();
      // Without the floors file the highest entry held (named by no checkpoint section: every
      // entry is finished) still sets the next sequence.
      await fsp.rm(path.join(data, 'id-floors.json'));
      let next = 10;
      for (const drop of [false, true]) {
        const ckpt = path.join(data, 'repositories', String(f.repo), 'workflow.ckpt');
        if (drop) await fsp.rm(ckpt);
        else expect((await fsp.stat(ckpt)).size).to.be.greaterThan(0);
        s = await startTestServer(data, opts);
        f = new Fixture(s, f.repo);
        const e = await enqueue(drop ? 'shared.txt' : 'a.txt');
        expect(e, drop ? 'rebuilt from workflow.log' : 'from workflow.ckpt').to.equal(`lq-${next++}`);
        await ok(api(s.url, 'DELETE', R(f.repo, `/land-queue/${e}`)));
        expect((await recent()).slice(0, 2)).to.deep.equal([e, drop ? 'lq-10' : 'lq-9']);
        await s.stop();
      }
      const fsck = await cli(['fsck', '--data', data, '--json']);
      expect(fsck.code, fsck.stdout + fsck.stderr).to.equal(0);
    } finally {
      await s.stop();
    }
  });
});

describe('land queue rules (pure)', () => {
  const entry = (id: number, spec: Partial<QueueEntryRecord['speculation']> | null = null): QueueEntryRecord => ({
    entry_id: `lq-${id}`, sequence: id, version: 1, change_id: `change-${id}`, change_ref: `change-${id}`, task_id: `task-${id}`, patchset_id: `change-${id}.ps-1`,
    target_line: 'main', mode: 'merge', state: spec ? 'testing' : 'queued', batch_limit: null, passed_on_retry: false, land_id: null, landed_snapshot_id: null, ejection: null,
    enqueued_at_s: 0, updated_at_s: 0, finished_at_s: null,
    speculation: spec ? { base_snapshot_id: 'h', snapshot_id: `s${id}`, root_tree_id: `t${id}`, line_action: 'merge', ahead: [], tested_by: `lq-${id}`, covers: [`lq-${id}`], worker_job_indexes: [id], reused_worker_job_index: null, built_at_s: 0, stalled_at_s: null, ...spec } : null,
  });
  const facts = (entries: QueueEntryRecord[], verdicts: Record<number, 'pass' | 'fail' | 'pending'>, head = 'h'): QueueFacts => ({
    head, line_problem: null, entries, unlandable: () => null, job: (i) => (verdicts[i] ? { verdict: verdicts[i], updated_at_s: 0 } : null), now_s: 10,
  });

  it('builds the first entry on the head, then each on the one before it, up to the depth', () => {
    const m = nextQueueMove(facts([entry(1), entry(2)], {}), DEFAULT_QUEUE_OPTIONS);
    expect(m).to.include({ kind: 'build', base: 'h' });
    const m2 = nextQueueMove(facts([entry(1, {}), entry(2)], { 1: 'pending' }), DEFAULT_QUEUE_OPTIONS);
    expect(m2).to.include({ kind: 'build', base: 's1' });
    const m3 = nextQueueMove(facts([entry(1, {}), entry(2)], { 1: 'pending' }), { ...DEFAULT_QUEUE_OPTIONS, depth: 1 });
    expect(m3).to.equal(null);
  });
  it('lands only the front, only on a pass; a failure behind the front waits', () => {
    const e1 = entry(1, {});
    const e2 = entry(2, { base_snapshot_id: 's1' });
    expect(nextQueueMove(facts([e1, e2], { 1: 'pending', 2: 'pass' }), DEFAULT_QUEUE_OPTIONS)).to.equal(null);
    expect(nextQueueMove(facts([e1, e2], { 1: 'pass', 2: 'pending' }), DEFAULT_QUEUE_OPTIONS)).to.include({ kind: 'land', entry: e1 });
    expect(nextQueueMove(facts([e1, e2], { 1: 'pending', 2: 'fail' }), { ...DEFAULT_QUEUE_OPTIONS, retries: 0 })).to.equal(null);
    expect(nextQueueMove(facts([e1, e2], { 1: 'pending', 2: 'fail' }), { ...DEFAULT_QUEUE_OPTIONS, retries: 1 })).to.include({ kind: 'retry', entry: e2 });
    expect(nextQueueMove(facts([e1, e2], { 1: 'fail', 2: 'pending' }), { ...DEFAULT_QUEUE_OPTIONS, retries: 0 })).to.include({ kind: 'eject_failed', entry: e1 });
  });
  it('resets every speculation after a break in the chain (the head moved, an entry ahead left)', () => {
    const e1 = entry(1, {});
    const e2 = entry(2, { base_snapshot_id: 's1' });
    const m = nextQueueMove(facts([e1, e2], { 1: 'pending', 2: 'pending' }, 'other'), DEFAULT_QUEUE_OPTIONS);
    expect(m?.kind).to.equal('reset');
    expect((m as { entries: QueueEntryRecord[] }).entries).to.deep.equal([e1, e2]);
    const m2 = nextQueueMove(facts([e2], { 2: 'pending' }, 'h'), DEFAULT_QUEUE_OPTIONS);
    expect(m2).to.deep.include({ kind: 'reset', entries: [e2] });
  });
  it('reports a job without progress past the bound once', () => {
    const e1 = entry(1, {});
    const f = { ...facts([e1], { 1: 'pending' }), now_s: 5000 };
    expect(nextQueueMove(f, { ...DEFAULT_QUEUE_OPTIONS, stall_s: 60 })).to.include({ kind: 'stalled' });
    const reported = entry(1, { stalled_at_s: 4000 });
    expect(nextQueueMove({ ...f, entries: [reported] }, { ...DEFAULT_QUEUE_OPTIONS, stall_s: 60 })).to.equal(null);
  });
});
