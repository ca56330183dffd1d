// Which status a refused workflow request gets (spec "Errors", "Transition table"; docs/api.md "Request
// errors" and "400 or 409 for workflow refusals"), over real HTTP:
// - invalid state transitions and caller-named identities that are not the derived ones are 400,
//   while compare-and-set, idempotency and governed-line conflicts stay 409;
// - `:close` is "any → closed status": the same status again is an idempotent retry (200,
//   nothing written), another closed status of a change is a recorded move, a landed change and
//   completed ↔ abandoned tasks are 400;
// - every workflow route checks its body's shape through one helper: a JSON array, a missing
//   required field or a field of the wrong JSON type is 422, a right-typed value breaking a rule 400.
// Every refusal changes nothing: each case compares the repository's files and read models before
// and after.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import type { Authority } from '../lib/authority/authority.js';
import { LandDesk } from '../lib/authority/workflow/lands.js';
import { api, expectError, ok, register, repoFiles, startTestServer, tempDir, type ApiResponse, type TestServer } from './helpers.js';

type Json = Record<string, any>;
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;

/** Everything a refused request must leave alone: every file of the repository and the read models. */
async function storeState(s: TestServer, repo: number): Promise<Json> {
  return {
    files: await repoFiles(path.join(s.dataDir, 'repositories', String(repo))),
    tasks: (await api(s.url, 'GET', R(repo, '/tasks'))).json,
    changes: (await api(s.url, 'GET', R(repo, '/changes'))).json,
    summary: (await api(s.url, 'GET', R(repo, '/read/queue-summary'))).json,
    plans: (await api(s.url, 'GET', R(repo, '/sprints'))).json,
  };
}

interface World {
  repo: number;
  base: string;
  rev1: string;
  rev2: string;
  rev3: string;
  planId: string;
  revisionId: string;
}

/** A repository with three snapshots pushed (base on `main`, three revisions of it) and a plan with items `a` and `b`. */
async function world(s: TestServer, name: string): Promise<World> {
  const repo = await register(s.url, name);
  const dir = path.join(tempDir(), 'tree');
  const snap = async (body: string, moveLine: boolean, parent?: string) => {
    await fsp.rm(dir, { recursive: true, force: true });
    await fsp.mkdir(dir, { recursive: true });
    await fsp.writeFile(path.join(dir, 'a.txt'), body);
    return (await push({ server: s.url, repo, line: 'main', dir, moveLine, progress: false, parent })).snapshot_id;
  };
  const base = await snap('base\n', true);
  const rev1 = await snap('one\n', false, base);
  const rev2 = await snap('two\n', false, base);
  const rev3 = await snap('three\n', false, base);
  const plan = await api(s.url, 'POST', R(repo, '/sprints'), { json: { title: 'Sprint', artifact_path: 'docs/s.md', artifact_heading: 'Sprint', artifact_body: '# Sprint\n- [ ] a {#a}\n- [ ] b {#b}\n' } });
  expect(plan.status, plan.text).to.equal(200);
  return { repo, base, rev1, rev2, rev3, planId: plan.json.plan.plan_id, revisionId: plan.json.revision.plan_revision_id };
}

/** Lands in these tests pass the gates (the LandDesk's constructor seam, as in lands.test.ts): only the statuses are under test. */
async function passGates(s: TestServer, repo: number): Promise<void> {
  const a: Authority = await (await s.ready).opened(repo);
  (a as unknown as { lands: LandDesk }).lands = new LandDesk(a.store, a.workflow, () => ({ refusal: null, policy_decision_id: null }));
}

const post = (s: TestServer, repo: number, rest: string, json: unknown) => ok(api(s.url, 'POST', R(repo, rest), { json }), rest);
const task = async (s: TestServer, repo: number) => (await post(s, repo, '/tasks', { title: 'T', intent: 'i' })).task as Json;
const change = async (s: TestServer, repo: number, taskId: string) => (await post(s, repo, '/changes', { task_id: taskId, title: 'C', base_line: 'main' })).change as Json;
const patchset = async (s: TestServer, w: World, changeId: string, revision: string) =>
  (await post(s, w.repo, `/changes/${changeId}/patchsets`, { base_snapshot_id: w.base, revision_snapshot_id: revision, summary: 's', author_mode: 'human_only' })).patchset as Json;

/** A refusal with `status` that leaves the repository exactly as it was. */
async function refusedUnchanged(s: TestServer, repo: number, what: string, send: () => Promise<ApiResponse>, status: number, extraFields: string[] = []): Promise<ApiResponse> {
  const before = await storeState(s, repo);
  const res = await send();
  if (extraFields.length === 0) expectError(res, status, what);
  else {
    expect(res.status, `${what}: ${res.text}`).to.equal(status);
    expect(Object.keys(res.json).sort(), what).to.deep.equal(['error', ...extraFields].sort());
  }
  expect(await storeState(s, repo), `${what}: the repository changed`).to.deep.equal(before);
  return res;
}

describe('request statuses: invalid state transitions and non-derived identities are 400; compare-and-set conflicts stay 409', function () {
  this.timeout(120_000);
  let s: TestServer;
  let w: World;
  // Fixture: task-1 active with change-1 (ps-1 selected, ps-2 not), change-2 (no patchset),
  // change-3 closed (abandoned, one patchset); task-2 with change-4 landed through task-land
  // (key `landed`); task-3 completed; task-4 with two landable changes (change-5, change-6).
  const ids: Json = {};
  before(async () => {
    s = await startTestServer();
    w = await world(s, 'transitions');
    await passGates(s, w.repo);
    const t1 = await task(s, w.repo);
    ids.open = await change(s, w.repo, t1.task_id);
    ids.ps1 = (await patchset(s, w, ids.open.change_id, w.rev1)).patchset_id;
    ids.ps2 = (await patchset(s, w, ids.open.change_id, w.rev2)).patchset_id;
    ids.empty = await change(s, w.repo, t1.task_id);
    ids.closed = await change(s, w.repo, t1.task_id);
    ids.closedPs = (await patchset(s, w, ids.closed.change_id, w.rev1)).patchset_id;
    await post(s, w.repo, `/changes/${ids.closed.change_id}:close`, { status: 'abandoned' });
    const t2 = await task(s, w.repo);
    ids.landed = await change(s, w.repo, t2.task_id);
    ids.landedPs = (await patchset(s, w, ids.landed.change_id, w.rev1)).patchset_id;
    ids.landBody = { contract: 'task-land-atomic/v1', idempotency_key: 'landed', task_or_change_ref: t2.task_id, mode: 'ff-only' };
    expect((await post(s, w.repo, '/task-land', ids.landBody)).change.status).to.equal('landed');
    ids.done = await task(s, w.repo);
    await post(s, w.repo, `/tasks/${ids.done.task_id}:close`, { status: 'completed' });
    ids.two = await task(s, w.repo);
    for (const rev of [w.rev2, w.rev3]) await patchset(s, w, (await change(s, w.repo, ids.two.task_id)).change_id, rev);
  });
  after(() => s.stop());

  it('invalid state transitions are 400 and change nothing', async () => {
    const { repo } = w;
    const open = ids.open.change_id;
    const closed = ids.closed.change_id;
    const landed = ids.landed.change_id;
    const cases: [string, string, string, unknown][] = [
      ['select a patchset on a landed change', 'POST', `/changes/${landed}:selectPatchset`, { patchset_id: ids.landedPs }],
      ['select a patchset on a closed change', 'POST', `/changes/${closed}:selectPatchset`, { patchset_id: ids.closedPs }],
      ['rebase a landed change', 'POST', `/changes/${landed}:rebase`, {}],
      ['rebase a closed change', 'POST', `/changes/${closed}:rebase`, {}],
      ['a topic on a landed change', 'POST', `/changes/${landed}:setFlags`, { topic: 'late' }],
      ['work in progress on a closed change', 'POST', `/changes/${closed}:setFlags`, { wip: true }],
      ['a blank topic', 'POST', `/changes/${open}:setFlags`, { topic: '  ' }],
      ['a patchset on a closed change', 'POST', `/changes/${closed}/patchsets`, { base_snapshot_id: w.base, revision_snapshot_id: w.rev3, summary: 's', author_mode: 'human_only' }],
      ['a patchset on a landed change', 'POST', `/changes/${landed}/patchsets`, { base_snapshot_id: w.base, revision_snapshot_id: w.rev3, summary: 's', author_mode: 'human_only' }],
      ['a review on a closed change', 'POST', `/changes/${closed}/reviews`, { patchset_id: ids.closedPs, reviewer: 'bob', action: 'approve' }],
      ['a review on a landed change', 'POST', `/changes/${landed}/reviews`, { patchset_id: ids.landedPs, reviewer: 'bob', action: 'approve' }],
      ['a review on a patchset that is not the selected one', 'POST', `/changes/${open}/reviews`, { patchset_id: ids.ps2, reviewer: 'bob', action: 'approve' }],
      ['a comment on a closed change', 'POST', `/changes/${closed}/comments`, { patchset_id: ids.closedPs, author: 'bob', body: 'b' }],
      ['a comment on a landed change', 'POST', `/changes/${landed}/comments`, { patchset_id: ids.landedPs, author: 'bob', body: 'b' }],
      ['a review request on a closed change', 'POST', `/changes/${closed}:requestReview`, { patchset_id: ids.closedPs, reviewer_groups: ['core'] }],
      ['a review request on a patchset that is not the selected one', 'POST', `/changes/${open}:requestReview`, { patchset_id: ids.ps2, reviewer_groups: ['core'] }],
      ['an attestation on a closed change', 'PUT', `/patchsets/${ids.closedPs}/attestation`, {}],
      ['an attestation whose author_mode disagrees with the patchset', 'PUT', `/patchsets/${ids.ps1}/attestation`, { author_mode: 'ai_only_experimental' }],
      [':runCi on a closed change', 'POST', `/patchsets/${ids.closedPs}:runCi`, {}],
      [':runCi on a landed change', 'POST', `/patchsets/${ids.landedPs}:runCi`, {}],
      [':evaluatePolicy on a closed change', 'POST', `/patchsets/${ids.closedPs}:evaluatePolicy`, {}],
      ['a change for a completed task', 'POST', '/changes', { task_id: ids.done.task_id, title: 'c', base_line: 'main' }],
      [':submit of a landed change', 'POST', `/changes/${landed}:submit`, { mode: 'ff-only' }],
      [':submit of a closed change', 'POST', `/changes/${closed}:submit`, { mode: 'merge' }],
      [':submit of a change with no patchset', 'POST', `/changes/${ids.empty.change_id}:submit`, { mode: 'merge' }],
      ['task-land of a landed change', 'POST', '/task-land', { ...ids.landBody, idempotency_key: 'again', task_or_change_ref: ids.landed.change_ref }],
    ];
    for (const [what, method, p, json] of cases) await refusedUnchanged(s, repo, what, () => api(s.url, method, R(repo, p), { json }), 400);
    // A task with two landable changes: name the change (400, listing them).
    const two = await refusedUnchanged(s, repo, 'task-land of a task with two landable changes', () => api(s.url, 'POST', R(repo, '/task-land'), { json: { ...ids.landBody, idempotency_key: 'two', task_or_change_ref: ids.two.task_id } }), 400, ['landable_change_refs']);
    expect(two.json.landable_change_refs).to.have.length(2);
  });

  it('caller-supplied identities that are not the derived ones are 400 and change nothing', async () => {
    const { repo } = w;
    const next = (await ok(api(s.url, 'GET', R(repo, '/tasks')))).count + 1;
    const open = ids.open.change_id;
    const ps = { base_snapshot_id: w.base, revision_snapshot_id: w.rev3, summary: 's', author_mode: 'human_only' };
    const cases: [string, string, unknown][] = [
      ['task_id not the next', '/tasks', { title: 't', intent: 'i', task_id: `task-${next + 1}` }],
      ['task_id already taken', '/tasks', { title: 't', intent: 'i', task_id: 'task-1' }],
      ['change_id not the next', '/changes', { task_id: 'task-1', title: 'c', base_line: 'main', change_id: 'change-1' }],
      ['change_id naming another task', '/changes', { task_id: 'task-1', title: 'c', base_line: 'main', change_id: 'task-2.change-7' }],
      ['patchset_id not the next', `/changes/${open}/patchsets`, { ...ps, patchset_id: `${open}.ps-1` }],
      ['patchset_number not the next', `/changes/${open}/patchsets`, { ...ps, patchset_number: 4 }],
      ['a patchset replay naming another identity', `/changes/${open}/patchsets`, { ...ps, revision_snapshot_id: w.rev1, patchset_number: 2 }],
      ['review_id not the derived one', `/changes/${open}:requestReview`, { patchset_id: ids.ps1, reviewer_groups: ['core'], review_id: `${open}.review-9` }],
    ];
    for (const [what, p, json] of cases) await refusedUnchanged(s, repo, what, () => api(s.url, 'POST', R(repo, p), { json }), 400);
  });

  it('compare-and-set, idempotency and governed-line conflicts stay 409 and change nothing', async () => {
    const { repo } = w;
    const head = (await ok(api(s.url, 'GET', R(repo, '/lines/main')))).head_snapshot_id;
    expect(head).to.not.equal(w.base);
    await refusedUnchanged(s, repo, 'a stale fork_snapshot_id', () => api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: 'task-1', title: 'c', base_line: 'main', fork_snapshot_id: w.base } }), 409);
    await refusedUnchanged(s, repo, 'an idempotency key used with another payload', () => api(s.url, 'POST', R(repo, '/task-land'), { json: { ...ids.landBody, mode: 'merge' } }), 409);
    await refusedUnchanged(s, repo, 'a stale expected_head_revision_id', () => api(s.url, 'POST', R(repo, `/sprints/${w.planId}/revisions`), { json: { artifact_path: 'docs/s.md', artifact_heading: 'Sprint', artifact_body: '# Sprint\n- [ ] a {#a}\n', expected_head_revision_id: 'rev-stale' } }), 409);
    await refusedUnchanged(s, repo, 'a stale line head', () => api(s.url, 'PUT', R(repo, '/lines/other'), { json: { head_snapshot_id: w.rev1, expected_head_snapshot_id: w.base } }), 409);
    await refusedUnchanged(s, repo, 'a direct move of the governed main', () => api(s.url, 'PUT', R(repo, '/lines/main'), { json: { head_snapshot_id: w.base } }), 409, ['code']);
  });
});

describe('request statuses: :close is any → closed status', function () {
  this.timeout(120_000);
  let s: TestServer;
  let w: World;
  before(async () => {
    s = await startTestServer();
    w = await world(s, 'closing');
    await passGates(s, w.repo);
  });
  after(() => s.stop());

  /** A 200 that returns `expected` exactly and writes nothing. */
  async function unchanged(p: string, status: string, key: 'task' | 'change', expected: Json): Promise<void> {
    const before = await storeState(s, w.repo);
    const res = await ok(api(s.url, 'POST', R(w.repo, p), { json: { status } }), `${p} ${status}`);
    expect(res[key], `${p} ${status}`).to.deep.equal(expected);
    expect(await storeState(s, w.repo), `${p} ${status}: the repository changed`).to.deep.equal(before);
  }

  it('a change: the same closed status again is 200 with nothing written; another closed status is a recorded move; a landed change stays landed (400)', async () => {
    const { repo } = w;
    const t = await task(s, repo);
    const c = await change(s, repo, t.task_id);
    const close = (status: string) => post(s, repo, `/changes/${c.change_id}:close`, { status });
    const archived = (await close('archived')).change;
    expect(archived).to.include({ status: 'archived' });
    expect(archived.closed_at_s).to.be.a('number');
    // A retry after a lost response: the same answer, nothing written.
    await unchanged(`/changes/${c.change_id}:close`, 'archived', 'change', archived);
    // Another closed status: a recorded move (the read models follow); closed_at_s keeps the first close.
    const superseded = (await close('superseded')).change;
    expect(superseded).to.include({ status: 'superseded', closed_at_s: archived.closed_at_s });
    expect(superseded.updated_at_s).to.be.at.least(archived.updated_at_s);
    expect((await ok(api(s.url, 'GET', R(repo, `/changes/${c.change_id}`)))).change).to.deep.equal({ ...superseded, stack: [] });
    expect((await ok(api(s.url, 'GET', R(repo, '/read/queue-summary')))).changes).to.include({ archived: 0, superseded: 1, open: 0 });
    await unchanged(`/changes/${c.change_id}:close`, 'superseded', 'change', superseded);
    // canceled and cancelled are abandoned: after one, every spelling of abandoned is a retry.
    const abandoned = (await close('cancelled')).change;
    expect(abandoned.status).to.equal('abandoned');
    for (const status of ['abandoned', 'canceled', 'cancelled']) await unchanged(`/changes/${c.change_id}:close`, status, 'change', abandoned);
    // `landed` is never a close status, whatever the change's status.
    await refusedUnchanged(s, repo, 'close as landed', () => api(s.url, 'POST', R(repo, `/changes/${c.change_id}:close`), { json: { status: 'landed' } }), 400);

    // A landed change: every close status is an invalid transition.
    const t2 = await task(s, repo);
    const l = await change(s, repo, t2.task_id);
    await patchset(s, w, l.change_id, w.rev1);
    expect((await post(s, repo, `/changes/${l.change_id}:submit`, { mode: 'ff-only' })).change.status).to.equal('landed');
    for (const status of ['archived', 'superseded', 'abandoned', 'canceled', 'cancelled']) {
      await refusedUnchanged(s, repo, `close a landed change as ${status}`, () => api(s.url, 'POST', R(repo, `/changes/${l.change_id}:close`), { json: { status } }), 400);
    }
    expect((await ok(api(s.url, 'GET', R(repo, `/changes/${l.change_id}`)))).change.status).to.equal('landed');
  });

  it('a change closed from each open status (draft, active, review)', async () => {
    const { repo } = w;
    const t = await task(s, repo);
    const draft = await change(s, repo, t.task_id);
    const active = await change(s, repo, t.task_id);
    const ps = await patchset(s, w, active.change_id, w.rev2);
    const review = await change(s, repo, t.task_id);
    const rps = await patchset(s, w, review.change_id, w.rev3);
    await post(s, repo, `/changes/${review.change_id}:requestReview`, { patchset_id: rps.patchset_id, reviewer_groups: ['core'] });
    expect((await ok(api(s.url, 'GET', R(repo, `/changes/${review.change_id}`)))).change.status).to.equal('review');
    expect(ps.patchset_id).to.be.a('string');
    for (const [c, status] of [[draft, 'archived'], [active, 'superseded'], [review, 'canceled']] as const) {
      const closed = (await post(s, repo, `/changes/${c.change_id}:close`, { status })).change;
      expect(closed.status).to.equal(status === 'canceled' ? 'abandoned' : status);
    }
  });

  it('a task: the same closed status again is 200 with nothing written; completed ↔ abandoned is 400', async () => {
    const { repo } = w;
    const done = await task(s, repo);
    const completed = (await post(s, repo, `/tasks/${done.task_id}:close`, { status: 'completed' })).task;
    expect(completed.status).to.equal('completed');
    await unchanged(`/tasks/${done.task_id}:close`, 'completed', 'task', completed);
    for (const status of ['abandoned', 'canceled', 'cancelled']) {
      await refusedUnchanged(s, repo, `completed → ${status}`, () => api(s.url, 'POST', R(repo, `/tasks/${done.task_id}:close`), { json: { status } }), 400);
    }
    const dropped = await task(s, repo);
    const abandoned = (await post(s, repo, `/tasks/${dropped.task_id}:close`, { status: 'canceled' })).task;
    expect(abandoned.status).to.equal('abandoned');
    for (const status of ['abandoned', 'canceled', 'cancelled']) await unchanged(`/tasks/${dropped.task_id}:close`, status, 'task', abandoned);
    await refusedUnchanged(s, repo, 'abandoned → completed', () => api(s.url, 'POST', R(repo, `/tasks/${dropped.task_id}:close`), { json: { status: 'completed' } }), 400);
    expect((await ok(api(s.url, 'GET', R(repo, `/tasks/${done.task_id}`)))).task).to.deep.equal(completed);
    expect((await ok(api(s.url, 'GET', R(repo, `/tasks/${dropped.task_id}`)))).task).to.deep.equal(abandoned);
  });
});

describe('request statuses: one shape rule on every workflow route (422 shape, 400 rule)', function () {
  this.timeout(180_000);
  let s: TestServer;
  let w: World;
  let fx: Json;
  before(async () => {
    s = await startTestServer();
    w = await world(s, 'shapes');
    const t = await task(s, w.repo);
    const c1 = await change(s, w.repo, t.task_id);
    const ps = await patchset(s, w, c1.change_id, w.rev1);
    const c2 = await change(s, w.repo, t.task_id);
    const other = await patchset(s, w, c2.change_id, w.rev2);
    fx = { task: t.task_id, change: c1.change_id, ps: ps.patchset_id, otherPs: other.patchset_id };
  });
  after(() => s.stop());

  // Per route: (a) a JSON array body, (b) a required field missing, (c) a field of the wrong JSON
  // type, (d) a right-typed value that breaks a rule. A route without required fields, or without
  // fields at all, says why instead of a body.
  type Case = unknown | { na: string };
  interface Cases { a: Case; b: Case; c: Case; d: Case; more?: [string, unknown, number][] }
  interface RouteCases { route: string; method: string; path: () => string; cases: () => Cases }
  const NA = (why: string) => ({ na: why });
  const isNa = (c: Case): c is { na: string } => typeof c === 'object' && c !== null && !Array.isArray(c) && Object.keys(c).length === 1 && 'na' in c;
  // Bodies are built when a test runs (they name the fixture's identities).
  const startBody = () => ({ contract: 'task-start-atomic/v1', idempotency_key: 'shape', plan_item_ref: 'a', plan: { action: 'existing', plan_id: w.planId, plan_revision_id: w.revisionId }, task: { title: 't', intent: 'i' }, change: { title: 'c', base_line: 'main' } });
  const landBody = () => ({ contract: 'task-land-atomic/v1', idempotency_key: 'shape', task_or_change_ref: fx.change, mode: 'merge' });
  const promotionBody = () => ({ contract: 'history-promotion-prepare/v1', idempotency_key: 'shape', target_line: 'main', base_snapshot_id: w.base, revision_snapshot_id: w.rev1, author_mode: 'human_only', summary: 's' });
  const planPayload = { artifact_path: 'docs/t.md', artifact_heading: 'T', artifact_body: '# T\n- [ ] x {#x}\n' };
  const without = (o: Json, k: string) => Object.fromEntries(Object.entries(o).filter(([key]) => key !== k));

  const routes: RouteCases[] = [
    { route: 'tasks.create', method: 'POST', path: () => '/tasks', cases: () => ({ a: [], b: { intent: 'i' }, c: { title: 7, intent: 'i' }, d: { title: ' ', intent: 'i' } }) },
    { route: 'tasks.close', method: 'POST', path: () => `/tasks/${fx.task}:close`, cases: () => ({ a: [], b: {}, c: { status: 1 }, d: { status: 'done' } }) },
    {
      route: 'task-start', method: 'POST', path: () => '/task-start',
      cases: () => ({
        a: [], b: without(startBody(), 'idempotency_key'), c: { ...startBody(), task: 'x' }, d: { ...startBody(), contract: 'task-start-atomic/v2' },
        more: [
          ['(b) plan.payload without title for action create', { ...startBody(), plan: { action: 'create', payload: planPayload } }, 422],
          ['(b) plan.payload missing for action create', { ...startBody(), plan: { action: 'create' } }, 422],
          ['(b) plan.plan_revision_id missing for action existing', { ...startBody(), plan: { action: 'existing', plan_id: w.planId } }, 422],
          ['(b) plan.plan_id missing for action revise', { ...startBody(), plan: { action: 'revise', payload: planPayload } }, 422],
          ['(c) plan.payload an array', { ...startBody(), plan: { action: 'create', payload: [] } }, 422],
          ['(d) plan.action unknown', { ...startBody(), plan: { action: 'adopt' } }, 400],
        ],
      }),
    },
    { route: 'changes.create', method: 'POST', path: () => '/changes', cases: () => ({ a: [], b: { task_id: fx.task, title: 'c' }, c: { task_id: fx.task, title: [], base_line: 'main' }, d: { task_id: fx.task, title: '', base_line: 'main' } }) },
    { route: 'changes.close', method: 'POST', path: () => `/changes/${fx.change}:close`, cases: () => ({ a: [], b: {}, c: { status: true }, d: { status: 'landed' } }) },
    { route: 'changes.selectPatchset', method: 'POST', path: () => `/changes/${fx.change}:selectPatchset`, cases: () => ({ a: [], b: {}, c: { patchset_id: 5 }, d: { patchset_id: fx.otherPs } }) },
    { route: 'changes.rebase', method: 'POST', path: () => `/changes/${fx.change}:rebase`, cases: () => ({ a: [], b: NA('patchset_id is optional (default the selected patchset)'), c: { patchset_id: 5 }, d: { patchset_id: fx.otherPs }, more: [['(c) an unknown field', { onto: 'main' }, 422]] }) },
    {
      route: 'patchsets.create', method: 'POST', path: () => `/changes/${fx.change}/patchsets`,
      cases: () => ({
        a: [],
        b: { base_snapshot_id: w.base, revision_snapshot_id: w.rev3, summary: 's' },
        c: { base_snapshot_id: w.base, revision_snapshot_id: w.rev3, summary: 1, author_mode: 'human_only' },
        d: { base_snapshot_id: w.base, revision_snapshot_id: w.rev3, summary: 's', author_mode: 'robot' },
      }),
    },
    { route: 'reviews.create', method: 'POST', path: () => `/changes/${fx.change}/reviews`, cases: () => ({ a: [], b: { patchset_id: fx.ps, action: 'approve' }, c: { patchset_id: fx.ps, reviewer: 'bob', action: 'approve', blocking: 'yes' }, d: { patchset_id: fx.ps, reviewer: 'bob', action: 'lgtm' } }) },
    {
      route: 'comments.create', method: 'POST', path: () => `/changes/${fx.change}/comments`,
      cases: () => ({
        a: [], b: { patchset_id: fx.ps, author: 'bob' }, c: { patchset_id: fx.ps, author: 'bob', body: 'b', anchor: { path: 'a.txt', line: '1' } }, d: { patchset_id: fx.ps, author: 'bob', body: 'b', anchor: { path: 'a.txt', line: 2 } },
        more: [
          ['(c) an unknown field (drafts are not accepted here)', { patchset_id: fx.ps, author: 'bob', body: 'b', published: false }, 422],
          ['(d) an unknown path', { patchset_id: fx.ps, author: 'bob', body: 'b', anchor: { path: 'nope.txt' } }, 400],
          ['(d) a patchset of another change', { patchset_id: fx.otherPs, author: 'bob', body: 'b' }, 400],
          ['(d) a reply to no comment', { author: 'bob', body: 'b', in_reply_to: `${fx.change}.comment-99` }, 404],
        ],
      }),
    },
    {
      route: 'viewed.put', method: 'PUT', path: () => `/changes/${fx.change}/viewed`,
      cases: () => ({
        a: [], b: { user: 'bob', path: 'a.txt', viewed: true }, c: { user: 'bob', patchset_id: fx.ps, path: 'a.txt', viewed: 'yes' }, d: { user: 'bob', patchset_id: fx.ps, path: '../a.txt', viewed: true },
        more: [['(c) an unknown field', { user: 'bob', patchset_id: fx.ps, path: 'a.txt', viewed: true, at: 1 }, 422], ['(d) a patchset of another change', { user: 'bob', patchset_id: fx.otherPs, path: 'a.txt', viewed: true }, 400], ['(d) a path the patchset does not hold', { user: 'bob', patchset_id: fx.ps, path: 'nope.txt', viewed: true }, 400]],
      }),
    },
    {
      route: 'comments.edit', method: 'PATCH', path: () => `/changes/${fx.change}/comments/${fx.change}.comment-1`,
      cases: () => ({
        a: [], b: { body: 'x' }, c: { author: 'bob', body: 1 }, d: { author: ' ', body: 'x' },
        more: [['(c) an unknown field', { author: 'bob', body: 'x', published: true }, 422], ['(d) no comment of that id', { author: 'bob', body: 'x' }, 404]],
      }),
    },
    {
      route: 'comments.applySuggestions', method: 'POST', path: () => `/changes/${fx.change}/patchsets:applySuggestions`,
      cases: () => ({
        a: [], b: { author: 'bob' }, c: { author: 'bob', comment_ids: 'x' }, d: { author: 'bob', comment_ids: [] },
        more: [['(c) an unknown field', { author: 'bob', comment_ids: [], patchset_id: fx.ps }, 422], ['(d) no such comment', { author: 'bob', comment_ids: [`${fx.change}.comment-99`] }, 400]],
      }),
    },
    { route: 'comments.publish', method: 'POST', path: () => `/changes/${fx.change}/reviews:publish`, cases: () => ({ a: [], b: { author: 'bob' }, c: { author: 'bob', patchset_id: 1 }, d: { author: 'bob', patchset_id: fx.ps, action: 'lgtm' }, more: [['(d) nothing to publish and no vote', { author: 'bob', patchset_id: fx.ps }, 400]] }) },
    { route: 'comments.resolve', method: 'POST', path: () => `/changes/${fx.change}/threads/${fx.change}.comment-1:resolve`, cases: () => ({ a: [], b: { body: 'done' }, c: { author: 'bob', body: 1 }, d: { author: ' ' } }) },
    {
      route: 'changes.requestReview', method: 'POST', path: () => `/changes/${fx.change}:requestReview`,
      cases: () => ({
        a: [], b: { patchset_id: fx.ps }, c: { patchset_id: fx.ps, reviewer_groups: 'core' }, d: { patchset_id: fx.ps, reviewer_groups: ['a', 'b'] },
        more: [['(c) a group that is not a string', { patchset_id: fx.ps, reviewer_groups: [1] }, 422], ['(d) no group', { patchset_id: fx.ps, reviewer_groups: [] }, 400]],
      }),
    },
    {
      route: 'attestations.put', method: 'PUT', path: () => `/patchsets/${fx.ps}/attestation`,
      cases: () => ({
        a: [], b: NA('every field is optional (documented defaults)'), c: { detail: null }, d: { verification_state: 'ok' },
        more: [['(c) detail an array', { detail: [1] }, 422], ['(c) revoked a string', { revoked: 'no' }, 422], ['(d) detail.patchset_ci supplied', { detail: { patchset_ci: {} } }, 400]],
      }),
    },
    { route: 'patchsets.runCi', method: 'POST', path: () => `/patchsets/${fx.ps}:runCi`, cases: () => ({ a: [], b: NA('trigger is optional (default manual_rerun)'), c: { trigger: 1 }, d: { trigger: '' } }) },
    {
      route: 'patchsets.evaluatePolicy', method: 'POST', path: () => `/patchsets/${fx.ps}:evaluatePolicy`,
      cases: () => ({ a: [], b: NA('the request is the empty object'), c: { force: true }, d: NA('the request has no field to carry a value') }),
    },
    {
      route: 'changes.setFlags', method: 'POST', path: () => `/changes/${fx.change}:setFlags`,
      cases: () => ({
        a: [], b: {}, c: { wip: 'yes' }, d: { topic: '' },
        more: [['(c) cc not an array', { cc: 'bob' }, 422], ['(c) a cc name not a string', { cc: [1] }, 422], ['(d) a blank cc name', { cc: [' '] }, 400], ['(d) a topic with a newline', { topic: 'a\nb' }, 400]],
      }),
    },
    { route: 'changes.submit', method: 'POST', path: () => `/changes/${fx.change}:submit`, cases: () => ({ a: [], b: {}, c: { mode: 1 }, d: { mode: 'rebase' } }) },
    { route: 'task-land', method: 'POST', path: () => '/task-land', cases: () => ({ a: [], b: without(landBody(), 'task_or_change_ref'), c: { ...landBody(), idempotency_key: 5 }, d: { ...landBody(), contract: 'task-land-atomic/v2' } }) },
    {
      route: 'history-promotion:prepare', method: 'POST', path: () => '/history-promotion:prepare',
      cases: () => ({ a: [], b: promotionBody(), c: { ...promotionBody(), entries: 'x' }, d: { ...promotionBody(), contract: 'history-promotion-prepare/v2', entries: [] } }),
    },
    { route: 'plans.create (POST sprints)', method: 'POST', path: () => '/sprints', cases: () => ({ a: [], b: planPayload, c: { ...planPayload, title: 7 }, d: { ...planPayload, title: 'P', status: 'open' } }) },
    { route: 'plans.revisions.create', method: 'POST', path: () => `/sprints/${w.planId}/revisions`, cases: () => ({ a: [], b: without(planPayload, 'artifact_heading'), c: { ...planPayload, items: 'x' }, d: { ...planPayload, artifact_heading: ' ' } }) },
    { route: 'plans.patch', method: 'PATCH', path: () => `/sprints/${w.planId}`, cases: () => ({ a: [], b: {}, c: { status: 3 }, d: { status: 'open' } }) },
  ];

  const kinds = [['a', 'a JSON array body', 422], ['b', 'a required field missing', 422], ['c', 'a field of the wrong JSON type', 422], ['d', 'a right-typed value that breaks a rule', 400]] as const;
  for (const r of routes) {
    it(`${r.route}: (a) array 422, (b) missing 422, (c) wrong type 422, (d) invalid value 400; nothing changes`, async function () {
      const checked: string[] = [];
      const cases: [string, unknown, number][] = [];
      const all = r.cases();
      for (const [k, what, status] of kinds) {
        const body = all[k];
        if (isNa(body)) checked.push(`(${k}) n/a: ${body.na}`);
        else cases.push([`(${k}) ${what}`, body, status]);
      }
      cases.push(...(all.more ?? []));
      for (const [what, body, status] of cases) await refusedUnchanged(s, w.repo, `${r.route} ${what}`, () => api(s.url, r.method, R(w.repo, r.path()), { json: body }), status);
      expect(cases.length + checked.length).to.be.at.least(4);
    });
  }
});
