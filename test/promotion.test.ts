// History promotion over real HTTP (spec: "History promotion prepare body", Limits; docs/api.md
// "History promotion"): a 3-entry promotion and what task-land would pick from it, every
// validation failure with its status and an unchanged store, bounds, replay and key reuse,
// restart, export → restore, kill -9 during the commit, and `cairn promote`.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { Invalid } from '../lib/domain/errors.js';
import { checkPromotionRequest, type PromotionInput } from '../lib/domain/workflow/promotion.js';
import { api, cli, exportRepo, register, restoreRepo, spawnServer, startTestServer, tempDir, type TestServer, expectError, ok, repoFiles } from './helpers.js';

type Json = Record<string, any>;
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const PREPARE = (repo: number) => R(repo, '/history-promotion:prepare');
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');




/** Everything a rejected request must leave alone: every file of the repository and the read models. */
async function storeState(s: { url: string; dataDir: string }, repo: number): Promise<Json> {
  return {
    files: await repoFiles(path.join(s.dataDir, 'repositories', String(repo))),
    tasks: (await api(s.url, 'GET', R(repo, '/tasks'))).json,
    changes: (await api(s.url, 'GET', R(repo, '/changes'))).json,
    summary: (await api(s.url, 'GET', R(repo, '/read/queue-summary'))).json,
  };
}

interface History {
  repo: number;
  base: string;
  /** Entry snapshots: entry 1 lands c1 → l1, entry 2 lands l2, entry 3 lands c3 → l3. */
  c1: string; l1: string; l2: string; c3: string; l3: string;
  /** Pushed on main's head but on no promoted history. */
  stray: string;
  created: Record<string, number>;
  planId: string;
}

/** A repository with `main` at base and a local history of three lands on top of it (no line moved). */
async function history(s: { url: string }, name: string): Promise<History> {
  const repo = await register(s.url, name);
  const dir = path.join(tempDir(), 'tree');
  await fsp.mkdir(dir, { recursive: true });
  await fsp.writeFile(path.join(dir, 'README.md'), 'base\n');
  const snap = async (file: string, text: string, parent: string | undefined, moveLine = false) => {
    await fsp.writeFile(path.join(dir, file), text);
    return (await push({ server: s.url, repo, line: 'main', dir, moveLine, progress: false, parent, message: `${file}:${text}` })).snapshot_id;
  };
  const base = await snap('README.md', 'base\n', undefined, true);
  const c1 = await snap('one.txt', 'work in progress\n', base);
  const l1 = await snap('one.txt', 'one\n', c1);
  const l2 = await snap('two.txt', 'two\n', l1);
  const c3 = await snap('three.txt', 'draft\n', l2);
  const l3 = await snap('three.txt', 'three\n', c3);
  const stray = await snap('stray.txt', 'stray\n', base);
  const created: Record<string, number> = {};
  for (const id of [base, c1, l1, l2, c3, l3, stray]) {
    created[id] = await createdAt(s.url, repo, id);
  }
  const plan = await api(s.url, 'POST', R(repo, '/sprints'), { json: { title: 'Sprint', artifact_path: 'docs/s.md', artifact_heading: 'Sprint', artifact_body: '# Sprint\n- [ ] one {#one}\n' } });
  expect(plan.status, plan.text).to.equal(200);
  return { repo, base, c1, l1, l2, c3, l3, stray, created, planId: plan.json.plan.plan_id };
}

async function createdAt(url: string, repo: number, id: string): Promise<number> {
  const m = await api(url, 'GET', R(repo, `/remote-sync/zstd-bulk/import-manifests/${id}`));
  expect(m.status, m.text).to.equal(200);
  const row = (m.json.snapshots as Json[]).find((x) => x.snapshot_id === id)!;
  return row.created_at_s;
}

/** A valid 3-entry promotion body of `h`. */
function body(h: History, key = 'promote-1'): Json {
  const snaps = (...ids: string[]) => ids.map((id) => ({ snapshot_id: id, created_at_s: h.created[id] }));
  const entry = (n: number, fork: string, pre: string, landed: string, list: string[], task: Json = {}) => ({
    local_task_id: `local-task-${n}`,
    local_change_id: `local-change-${n}`,
    local_change_ref: `local-task-${n}.local-change-${n}`,
    task: { title: `Task ${n}`, intent: `Intent ${n}`, ...task },
    change: { title: `Change ${n}`, base_line: 'main', fork_snapshot_id: fork },
    pre_land_target_snapshot_id: pre,
    landed_snapshot_id: landed,
    landed_at_s: 1_800_000_000 + n,
    snapshots: snaps(...list),
  });
  return {
    contract: 'history-promotion-prepare/v1',
    idempotency_key: key,
    target_line: 'main',
    base_snapshot_id: h.base,
    revision_snapshot_id: h.l3,
    author_mode: 'human_with_ai_assist',
    summary: 'Offline work: one, two, three',
    entries: [
      entry(1, h.base, h.base, h.l1, [h.c1, h.l1], { plan_id: h.planId, plan_item_ref: 'one' }),
      entry(2, h.l1, h.l1, h.l2, [h.l2]),
      entry(3, h.l2, h.l2, h.l3, [h.c3, h.l3]),
    ],
  };
}

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v));

/** Everything the real land gates ask of the aggregate patchset: attestation, passing CI (a claimed kind-7 job), an approval, a passing policy decision. */
async function passGates(url: string, repo: number, receipt: Json): Promise<void> {
  const ps = receipt.patchset_id as string;
  await ok(api(url, 'PUT', R(repo, `/patchsets/${ps}/attestation`), { json: { verification_state: 'pass' } }), 'attest');
  const run = await ok(api(url, 'POST', R(repo, `/patchsets/${ps}:runCi`), { json: {} }), 'runCi');
  const claim = await ok(api(url, 'POST', R(repo, `/worker-jobs/${run.job.worker_job_index}:claim`), { json: { accepted_runtime_contracts: ['svc.runner.native-job.v3'] } }), 'claim');
  const result = { contract: 'svc.runner.native-result.v1', status: 'succeeded', tests_status: 'pass', suite_result_count: 1, suite_results: [{ suite_id: 'unit', status: 'pass', blocking: true }] };
  await ok(api(url, 'POST', R(repo, `/worker-jobs/${claim.worker_job_index}:complete`), { json: { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { job_kind: 7, result } } }), 'complete');
  await ok(api(url, 'POST', R(repo, `/changes/${receipt.change_ref}/reviews`), { json: { patchset_id: ps, reviewer: 'carol', action: 'approve' } }), 'approve');
  await ok(api(url, 'POST', R(repo, `/patchsets/${ps}:evaluatePolicy`), { json: {} }), 'evaluate');
}

const landBody = (ref: string, key: string) => ({ contract: 'task-land-atomic/v1', idempotency_key: key, task_or_change_ref: ref, mode: 'ff-only' });

/** Status, land line and landed_via of each change, and the audit verdict and counts of each task. */
async function aftermath(url: string, repo: number, changes: string[], tasks: string[]): Promise<Json> {
  const out: Json = { changes: {}, audits: {} };
  for (const c of changes) {
    const change = (await ok(api(url, 'GET', R(repo, `/changes/${c}`)))).change;
    out.changes[c] = { status: change.status, land_target_line: change.land_target_line, landed_via: change.landed_via };
  }
  for (const t of tasks) {
    const a = await ok(api(url, 'GET', R(repo, `/read/tasks/${t}/audit?target_line=main`)));
    out.audits[t] = { verdict: a.verdict, open: a.open_changes, landed: a.landed_changes };
  }
  out.summary = (await ok(api(url, 'GET', R(repo, '/read/queue-summary')))).changes;
  return out;
}

describe('history promotion, then task-land through the real gates', function () {
  this.timeout(60_000);
  it('a 3-entry promotion followed by a task-land of the aggregate patchset lands it (attestation, CI, approval, policy pass)', async () => {
    const s = await startTestServer();
    try {
      const h = await history(s, 'promote-then-land');
      const receipt = await ok(api(s.url, 'POST', PREPARE(h.repo), { json: body(h, 'promote-land') }), 'prepare');
      const ps = receipt.patchset_id as string;
      const RUNTIME = 'svc.runner.native-job.v3';
      // Refused before the evidence is in: the land gates read the real projections.
      const early = await api(s.url, 'POST', R(h.repo, '/task-land'), { json: { contract: 'task-land-atomic/v1', idempotency_key: 'early', task_or_change_ref: receipt.task_id, mode: 'ff-only' } });
      expect(early.status, early.text).to.equal(409);
      expect(early.json.land.failure_kind).to.equal('blocked_by_policy');
      await ok(api(s.url, 'PUT', R(h.repo, `/patchsets/${ps}/attestation`), { json: { verification_state: 'pass' } }), 'attest');
      const run = await ok(api(s.url, 'POST', R(h.repo, `/patchsets/${ps}:runCi`), { json: {} }), 'runCi');
      const claim = await ok(api(s.url, 'POST', R(h.repo, `/worker-jobs/${run.job.worker_job_index}:claim`), { json: { accepted_runtime_contracts: [RUNTIME] } }), 'claim');
      const result = { contract: 'svc.runner.native-result.v1', status: 'succeeded', tests_status: 'pass', suite_result_count: 1, suite_results: [{ suite_id: 'unit', status: 'pass', blocking: true }] };
      await ok(api(s.url, 'POST', R(h.repo, `/worker-jobs/${claim.worker_job_index}:complete`), { json: { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { job_kind: 7, result } } }), 'complete');
      // human_with_ai_assist needs a live approval from someone other than the author.
      expect((await api(s.url, 'POST', R(h.repo, `/changes/${receipt.change_ref}/reviews`), { json: { patchset_id: ps, reviewer: 'carol', action: 'approve' } })).status).to.equal(200);
      const decision = await ok(api(s.url, 'POST', R(h.repo, `/patchsets/${ps}:evaluatePolicy`), { json: {} }), 'evaluate');
      expect(JSON.stringify(decision)).to.match(/"decision":"pass"/);
      const landed = await ok(api(s.url, 'POST', R(h.repo, '/task-land'), { json: { contract: 'task-land-atomic/v1', idempotency_key: 'land-1', task_or_change_ref: receipt.task_id, mode: 'ff-only' } }), 'task-land');
      expect(landed).to.include({ replay: false, change_id: receipt.change_id, patchset_id: ps });
      expect(landed.land).to.include({ status: 'landed', mode: 'ff-only', landed_snapshot_id: h.l3, target_head_before: h.base });
      expect((await ok(api(s.url, 'GET', R(h.repo, '/lines/main')))).head_snapshot_id).to.equal(h.l3);
      expect((await ok(api(s.url, 'GET', R(h.repo, `/changes/${receipt.change_ref}`)))).change.status).to.equal('landed');
    } finally {
      await s.stop();
    }
  });
});

describe('history promotion: after the aggregate lands', function () {
  this.timeout(120_000);

  it('the land marks the earlier entries\' changes landed through it (audits ready_to_close, nothing open); task-land answers the receipt', async () => {
    const data = path.join(tempDir(), 'data');
    let s = await startTestServer(data);
    try {
      const h = await history(s, 'aftermath');
      const receipt = await ok(api(s.url, 'POST', PREPARE(h.repo), { json: body(h, 'promote') }), 'prepare');
      await passGates(s.url, h.repo, receipt);
      const landed = await ok(api(s.url, 'POST', R(h.repo, '/task-land'), { json: landBody(receipt.task_id, 'land') }), 'task-land');
      const landId = landed.land.land_id;
      expect(landed.history_promotion).to.deep.equal(receipt.history_promotion);
      expect(landed.change).to.include({ status: 'landed', landed_via: null });
      const via = { promotion_id: receipt.promotion_id, land_id: landId, change_id: receipt.change_id };
      const expected = {
        changes: {
          'change-1': { status: 'landed', land_target_line: 'main', landed_via: via },
          'change-2': { status: 'landed', land_target_line: 'main', landed_via: via },
          'change-3': { status: 'landed', land_target_line: 'main', landed_via: null },
        },
        audits: Object.fromEntries(['task-1', 'task-2', 'task-3'].map((t) => [t, { verdict: 'ready_to_close', open: 0, landed: 1 }])),
        summary: { draft: 0, active: 0, review: 0, landed: 3, archived: 0, superseded: 0, abandoned: 0, open: 0, total: 3 },
      };
      expect(await aftermath(s.url, h.repo, ['change-1', 'change-2', 'change-3'], ['task-1', 'task-2', 'task-3'])).to.deep.equal(expected);
      const c1 = (await ok(api(s.url, 'GET', R(h.repo, '/changes/change-1')))).change;
      expect(c1.landed_at_s).to.equal(landed.land.finished_at_s);
      // The replay answers the same receipt; a restart keeps all of it.
      expect(await ok(api(s.url, 'POST', R(h.repo, '/task-land'), { json: landBody(receipt.task_id, 'land') }))).to.deep.equal({ ...landed, replay: true });
      await s.stop();
      s = await startTestServer(data);
      expect(await aftermath(s.url, h.repo, ['change-1', 'change-2', 'change-3'], ['task-1', 'task-2', 'task-3'])).to.deep.equal(expected);
      expect(await ok(api(s.url, 'POST', R(h.repo, '/task-land'), { json: landBody(receipt.task_id, 'land') }))).to.deep.equal({ ...landed, replay: true });
    } finally {
      await s.stop();
    }
  });

  it('an earlier entry\'s change closed before the land stays closed; the others are landed through it', async () => {
    const s = await startTestServer();
    try {
      const h = await history(s, 'closed-before');
      const receipt = await ok(api(s.url, 'POST', PREPARE(h.repo), { json: body(h, 'promote') }), 'prepare');
      await ok(api(s.url, 'POST', R(h.repo, '/changes/change-2:close'), { json: { status: 'abandoned' } }), 'close');
      await passGates(s.url, h.repo, receipt);
      await ok(api(s.url, 'POST', R(h.repo, '/task-land'), { json: landBody(receipt.change_ref, 'land') }), 'task-land');
      const after = await aftermath(s.url, h.repo, ['change-1', 'change-2'], ['task-1', 'task-2']);
      expect(after.changes['change-1']).to.include({ status: 'landed' });
      expect(after.changes['change-2']).to.deep.equal({ status: 'abandoned', land_target_line: 'main', landed_via: null });
      expect(after.audits).to.deep.equal({ 'task-1': { verdict: 'ready_to_close', open: 0, landed: 1 }, 'task-2': { verdict: 'no_changes', open: 0, landed: 0 } });
    } finally {
      await s.stop();
    }
  });

  it('a local task with several lands: its entries share one remote task, one change each; expected identities follow; all land together', async () => {
    const s = await startTestServer();
    try {
      const h = await history(s, 'repeated-task');
      const b = body(h, 'repeated');
      b.entries[2].local_task_id = b.entries[0].local_task_id;
      b.entries[2].task = clone(b.entries[0].task);
      // Fail closed: entry 3's change goes to task-1 (local-task-1's remote task), not to a task-3.
      const wrong = clone(b);
      wrong.entries[2].expected_remote_task_id = 'task-3';
      expectError(await api(s.url, 'POST', PREPARE(h.repo), { json: wrong }), 400);
      b.entries[2].expected_remote_task_id = 'task-1';
      b.entries[2].expected_remote_change_ref = 'task-1.change-3';
      b.entries[1].expected_remote_change_ref = 'task-2.change-2';
      const receipt = await ok(api(s.url, 'POST', PREPARE(h.repo), { json: b }), 'prepare');
      expect(receipt).to.include({ task_id: 'task-1', change_ref: 'task-1.change-3', patchset_id: 'change-3.ps-1' });
      expect(receipt.history_promotion.entries.map((e: Json) => [e.local_task_id, e.remote_task_id, e.remote_change_ref])).to.deep.equal([
        ['local-task-1', 'task-1', 'task-1.change-1'],
        ['local-task-2', 'task-2', 'task-2.change-2'],
        ['local-task-1', 'task-1', 'task-1.change-3'],
      ]);
      expect((await ok(api(s.url, 'GET', R(h.repo, '/tasks')))).count).to.equal(2);
      expect((await ok(api(s.url, 'GET', R(h.repo, '/tasks/task-1')))).task).to.include({ plan_id: h.planId, plan_item_ref: 'one' });
      // The aggregate is the task's one landable change, so task-land resolves it from the task.
      await passGates(s.url, h.repo, receipt);
      const landed = await ok(api(s.url, 'POST', R(h.repo, '/task-land'), { json: landBody('task-1', 'land') }), 'task-land');
      expect(landed).to.include({ change_id: 'change-3' });
      expect(landed.history_promotion.entries).to.have.length(3);
      const after = await aftermath(s.url, h.repo, ['change-1', 'change-2', 'change-3'], ['task-1', 'task-2']);
      expect(Object.values(after.changes).map((c: any) => c.status)).to.deep.equal(['landed', 'landed', 'landed']);
      expect(after.audits).to.deep.equal({ 'task-1': { verdict: 'ready_to_close', open: 0, landed: 2 }, 'task-2': { verdict: 'ready_to_close', open: 0, landed: 1 } });
    } finally {
      await s.stop();
    }
  });
});

describe('lands: the gates are judged at the commit too', function () {
  this.timeout(60_000);
  it('a blocking review racing a task-land: never both succeed (the land does not pass over unpublished evidence)', async () => {
    const s = await startTestServer();
    try {
      const h = await history(s, 'gate-race');
      const receipt = await ok(api(s.url, 'POST', PREPARE(h.repo), { json: body(h, 'gate-race') }), 'prepare');
      const ps = receipt.patchset_id as string;
      await ok(api(s.url, 'PUT', R(h.repo, `/patchsets/${ps}/attestation`), { json: { verification_state: 'pass' } }), 'attest');
      const run = await ok(api(s.url, 'POST', R(h.repo, `/patchsets/${ps}:runCi`), { json: {} }), 'runCi');
      const claim = await ok(api(s.url, 'POST', R(h.repo, `/worker-jobs/${run.job.worker_job_index}:claim`), { json: { accepted_runtime_contracts: ['svc.runner.native-job.v3'] } }), 'claim');
      const result = { contract: 'svc.runner.native-result.v1', status: 'succeeded', tests_status: 'pass', suite_result_count: 1, suite_results: [{ suite_id: 'unit', status: 'pass', blocking: true }] };
      await ok(api(s.url, 'POST', R(h.repo, `/worker-jobs/${claim.worker_job_index}:complete`), { json: { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { job_kind: 7, result } } }), 'complete');
      await ok(api(s.url, 'POST', R(h.repo, `/changes/${receipt.change_ref}/reviews`), { json: { patchset_id: ps, reviewer: 'carol', action: 'approve' } }), 'approve');
      await ok(api(s.url, 'POST', R(h.repo, `/patchsets/${ps}:evaluatePolicy`), { json: {} }), 'evaluate');
      const [review, land] = await Promise.all([
        api(s.url, 'POST', R(h.repo, `/changes/${receipt.change_ref}/reviews`), { json: { patchset_id: ps, reviewer: 'dave', action: 'request_changes', blocking: true } }),
        api(s.url, 'POST', R(h.repo, '/task-land'), { json: { contract: 'task-land-atomic/v1', idempotency_key: 'race', task_or_change_ref: receipt.task_id, mode: 'ff-only' } }),
      ]);
      expect(review.status === 200 && land.status === 200, `review ${review.status} ${review.text}; land ${land.status} ${land.text}`).to.equal(false);
      const head = (await ok(api(s.url, 'GET', R(h.repo, '/lines/main')))).head_snapshot_id;
      if (review.status === 200) {
        expect(land.status).to.equal(409);
        expect(['blocked_by_policy', 'blocked_by_review']).to.include(land.json.land.failure_kind);
        expect(head).to.equal(h.base);
      } else {
        expect(land.status).to.equal(200);
        expect(head).to.equal(h.l3);
      }
    } finally {
      await s.stop();
    }
  });
});

describe('history promotion: a 3-entry promotion', function () {
  this.timeout(60_000);
  let s: TestServer;
  let h: History;
  let first: Json;
  before(async () => {
    s = await startTestServer();
    h = await history(s, 'promo');
    first = await ok(api(s.url, 'POST', PREPARE(h.repo), { json: body(h) }), 'prepare');
  });
  after(() => s.stop());

  it('publishes a task and a change per entry, with the local identities, and one aggregate patchset on the last change', async () => {
    expect(first).to.include({ contract: 'history-promotion-prepare/v1', replay: false, promotion_id: 'promotion-1', task_id: 'task-3', change_id: 'change-3', change_ref: 'task-3.change-3', patchset_id: 'change-3.ps-1', target_line: 'main', base_snapshot_id: h.base, revision_snapshot_id: h.l3 });
    expect(first.history_promotion.entries).to.deep.equal([1, 2, 3].map((n) => ({
      local_task_id: `local-task-${n}`,
      local_change_id: `local-change-${n}`,
      local_change_ref: `local-task-${n}.local-change-${n}`,
      remote_task_id: `task-${n}`,
      remote_change_id: `change-${n}`,
      remote_change_ref: `task-${n}.change-${n}`,
      pre_land_target_snapshot_id: [h.base, h.l1, h.l2][n - 1],
      landed_snapshot_id: [h.l1, h.l2, h.l3][n - 1],
      landed_at_s: 1_800_000_000 + n,
    })));
    expect(first.patchset).to.include({ patchset_id: 'change-3.ps-1', base_snapshot_id: h.base, revision_snapshot_id: h.l3, summary: 'Offline work: one, two, three', author_mode: 'human_with_ai_assist' });
    expect(first.patchset.changed_files.map((f: Json) => f.path).sort()).to.deep.equal(['one.txt', 'three.txt', 'two.txt']);
    // Local identities are visible in the task and change projections.
    const t1 = (await ok(api(s.url, 'GET', R(h.repo, '/tasks/task-1')))).task;
    expect(t1.promoted_from).to.deep.equal({ local_task_id: 'local-task-1', promotion_id: 'promotion-1' });
    expect(t1).to.include({ plan_id: h.planId, plan_item_ref: 'one', status: 'active', title: 'Task 1' });
    const c2 = (await ok(api(s.url, 'GET', R(h.repo, '/changes/change-2')))).change;
    expect(c2.promoted_from).to.deep.equal({ local_change_id: 'local-change-2', local_change_ref: 'local-task-2.local-change-2', local_task_id: 'local-task-2', promotion_id: 'promotion-1' });
    expect(c2).to.include({ fork_snapshot_id: h.l1, base_line: 'main', status: 'draft', patchset_count: 0 });
    // Entities made by the ordinary routes say they were not promoted.
    const plain = await ok(api(s.url, 'POST', R(h.repo, '/tasks'), { json: { title: 'plain', intent: 'i' } }));
    expect(plain.task.promoted_from).to.equal(null);
    expect(plain.task.task_id).to.equal('task-4');
  });

  it('prepares exactly what task-land picks: the selected patchset of the only landable change of the task', async () => {
    const task = first.task_id;
    const changes = (await ok(api(s.url, 'GET', R(h.repo, `/changes?task_id=${task}`)))).changes as Json[];
    const landable = changes.filter((c) => ['draft', 'active', 'review'].includes(c.status) && c.selected_patchset_id !== null);
    expect(landable).to.have.length(1);
    const change = landable[0];
    expect(change).to.include({ change_id: first.change_id, change_ref: first.change_ref, status: 'active', base_line: 'main', land_target_line: 'main', fork_snapshot_id: h.l2, selected_patchset_id: first.patchset_id, current_patchset_id: first.patchset_id });
    const ps = (await ok(api(s.url, 'GET', R(h.repo, `/patchsets/${change.selected_patchset_id}`)))).patchset;
    expect(ps).to.include({ change_id: first.change_id, base_snapshot_id: h.base, revision_snapshot_id: h.l3, withdrawn: false, invalidated: false, publish_state: 'published' });
    // A normal patchset of the change: the patchset routes list it and replay it.
    const list = await ok(api(s.url, 'GET', R(h.repo, `/changes/${first.change_ref}/patchsets`)));
    expect(list.patchsets.map((p: Json) => p.patchset_id)).to.deep.equal([first.patchset_id]);
    const again = await ok(api(s.url, 'POST', R(h.repo, `/changes/${first.change_id}/patchsets`), { json: { base_snapshot_id: h.base, revision_snapshot_id: h.l3, summary: 'x', author_mode: 'human_only' } }));
    expect(again).to.include({ replayed: true });
    expect(again.patchset.patchset_id).to.equal(first.patchset_id);
    // The earlier entries' tasks have no landable change (no patchset).
    for (const t of ['task-1', 'task-2']) {
      const cs = (await ok(api(s.url, 'GET', R(h.repo, `/changes?task_id=${t}`)))).changes as Json[];
      expect(cs.filter((c) => c.selected_patchset_id !== null), t).to.have.length(0);
    }
  });

  it('replays the same key and payload (replay: true, the recorded receipt) and changes nothing', async () => {
    const target = { url: s.url, dataDir: s.dataDir };
    const before = await storeState(target, h.repo);
    const replay = await ok(api(s.url, 'POST', PREPARE(h.repo), { json: body(h) }));
    expect(replay.replay).to.equal(true);
    expect(replay.history_promotion).to.deep.equal(first.history_promotion);
    expect(replay.patchset_id).to.equal(first.patchset_id);
    // The same payload spelled differently (absent optional fields given as null, keys reordered) is the same payload.
    const spelled = body(h);
    spelled.entries[1].expected_remote_task_id = null;
    spelled.entries[1].task.plan_id = null;
    const reordered = Object.fromEntries(Object.entries(spelled).reverse());
    expect((await ok(api(s.url, 'POST', PREPARE(h.repo), { json: reordered }))).replay).to.equal(true);
    expect(await storeState(target, h.repo)).to.deep.equal(before);
  });

  it('refuses the same key with another payload (409), changing nothing', async () => {
    const target = { url: s.url, dataDir: s.dataDir };
    const before = await storeState(target, h.repo);
    const other = body(h);
    other.summary = 'another summary';
    expectError(await api(s.url, 'POST', PREPARE(h.repo), { json: other }), 409, 'key reuse');
    const fewer = body(h);
    fewer.entries[2].landed_at_s += 1;
    expectError(await api(s.url, 'POST', PREPARE(h.repo), { json: fewer }), 409, 'key reuse (landed_at_s)');
    expect(await storeState(target, h.repo)).to.deep.equal(before);
  });

  it('concurrent requests with one new key: one promotion, the others replay it', async () => {
    const h2 = await history(s, 'twins');
    const all = await Promise.all(Array.from({ length: 4 }, () => ok(api(s.url, 'POST', PREPARE(h2.repo), { json: body(h2, 'twin') }))));
    expect(all.filter((r) => !r.replay)).to.have.length(1);
    expect(new Set(all.map((r) => r.promotion_id))).to.deep.equal(new Set(['promotion-1']));
    expect((await ok(api(s.url, 'GET', R(h2.repo, '/tasks')))).count).to.equal(3);
  });

  it('a second promotion with another key publishes new identities; expected identities are checked against them', async () => {
    const b = body(h, 'promote-2');
    b.entries[0].expected_remote_task_id = 'task-5';
    b.entries[0].expected_remote_change_ref = 'task-5.change-4';
    b.entries[2].expected_remote_task_id = 'task-7';
    b.entries[2].expected_remote_change_ref = 'task-7.change-6';
    const second = await ok(api(s.url, 'POST', PREPARE(h.repo), { json: b }));
    expect(second).to.include({ replay: false, promotion_id: 'promotion-2', task_id: 'task-7', change_ref: 'task-7.change-6', patchset_id: 'change-6.ps-1' });
  });
});

describe('history promotion: validation (status, body, unchanged store)', function () {
  this.timeout(60_000);
  let s: TestServer;
  let h: History;
  before(async () => {
    s = await startTestServer();
    h = await history(s, 'rules');
    // One task exists already, so published identities start at task-2 / change-1.
    await ok(api(s.url, 'POST', R(h.repo, '/tasks'), { json: { title: 'earlier', intent: 'i' } }));
  });
  after(() => s.stop());

  const cases: [string, number, (b: Json, h: History) => unknown, RegExp?][] = [
    ['body is an array', 422, () => [1]],
    ['entries missing', 422, (b) => { delete b.entries; }],
    ['entries not an array', 422, (b) => { b.entries = {}; }],
    ['landed_at_s a string', 422, (b) => { b.entries[0].landed_at_s = '1'; }],
    ['snapshot created_at_s fractional', 422, (b) => { b.entries[0].snapshots[0].created_at_s = 1.5; }],
    ['task title missing', 422, (b) => { delete b.entries[1].task.title; }],
    ['change fork missing', 422, (b) => { delete b.entries[1].change.fork_snapshot_id; }],
    ['repository_index in the body', 400, (b) => { b.repository_index = 0; }],
    ['wrong contract', 400, (b) => { b.contract = 'task-land-atomic/v1'; }],
    ['0 entries', 400, (b) => { b.entries = []; }],
    ['65 entries', 400, (b) => { b.entries = Array.from({ length: 65 }, () => clone(b.entries[0])); }],
    ['65 snapshots in an entry', 400, (b) => { b.entries[0].snapshots = Array.from({ length: 65 }, (_, i) => ({ snapshot_id: sha256(`s${i}`), created_at_s: i })); }],
    ['0 snapshots in an entry', 400, (b) => { b.entries[1].snapshots = []; }],
    ['257-byte idempotency key', 400, (b) => { b.idempotency_key = 'é'.repeat(128) + 'x'; }],
    ['empty idempotency key', 400, (b) => { b.idempotency_key = ''; }],
    ['unknown author_mode', 400, (b) => { b.author_mode = 'robot'; }],
    ['empty summary', 400, (b) => { b.summary = ' '; }],
    ['target line name empty', 400, (b) => { b.target_line = ''; }],
    ['malformed base snapshot id', 400, (b) => { b.base_snapshot_id = 'abc'; }],
    ['entries out of landed_at_s order', 400, (b) => { b.entries[2].landed_at_s = b.entries[1].landed_at_s - 1; }],
    ['snapshots out of created_at_s order', 400, (b) => { b.entries[0].snapshots.reverse(); b.entries[0].snapshots[0].created_at_s = b.entries[0].snapshots[1].created_at_s + 1; }],
    ['first entry does not start at base', 400, (b, x) => { b.entries[0].pre_land_target_snapshot_id = x.stray; }],
    ['an entry does not start where the previous landed', 400, (b, x) => { b.entries[1].pre_land_target_snapshot_id = x.c1; }],
    ['the last entry does not land at revision', 400, (b, x) => { b.revision_snapshot_id = x.l2; }],
    ['landed snapshot not among the entry snapshots', 400, (b) => { b.entries[0].snapshots.pop(); }],
    ['repeated snapshot in an entry', 400, (b) => { b.entries[0].snapshots.push(clone(b.entries[0].snapshots[1])); }],
    ['fork not a recorded target head', 400, (b, x) => { b.entries[1].change.fork_snapshot_id = x.c1; }],
    ['fork of a later land', 400, (b, x) => { b.entries[0].change.fork_snapshot_id = x.l1; }],
    ['change base_line is not the target line', 400, (b) => { b.entries[1].change.base_line = 'dev'; }],
    ['duplicate local change id', 400, (b) => { b.entries[1].local_change_id = b.entries[0].local_change_id; }],
    ['a repeated local task with other task fields', 400, (b) => { b.entries[2].local_task_id = b.entries[0].local_task_id; }],
    ['a repeated local task with other plan linkage', 400, (b) => { b.entries[2].local_task_id = b.entries[0].local_task_id; b.entries[2].task = { ...b.entries[0].task, plan_item_ref: null, plan_id: null }; }],
    ['empty local change ref', 400, (b) => { b.entries[2].local_change_ref = ''; }],
    ['malformed expected task id', 400, (b) => { b.entries[0].expected_remote_task_id = 'task-02'; }],
    ['expected change ref in short form', 400, (b) => { b.entries[0].expected_remote_change_ref = 'change-1'; }],
    ['plan item without plan linkage', 400, (b) => { b.entries[1].task.plan_item_ref = 'one'; }],
    ['lone surrogate in a title', 400, (b) => { b.entries[1].task.title = 'x\ud800'; }],
    ['a snapshot not present', 404, (b) => { b.entries[2].snapshots.splice(1, 0, { snapshot_id: 'f'.repeat(64), created_at_s: b.entries[2].snapshots[1].created_at_s }); }],
    ['target line missing', 404, (b) => { b.target_line = 'nowhere'; for (const e of b.entries) e.change.base_line = 'nowhere'; }],
    ['plan missing', 404, (b) => { b.entries[0].task.plan_id = 'plan-99'; }],
    ['plan item missing', 404, (b) => { b.entries[0].task.plan_item_ref = 'nine'; }],
    ['landed does not descend from pre-land through the listed snapshots', 409, (b) => { b.entries[0].snapshots.shift(); }, /does not descend/],
    ['a listed snapshot is not on the landed history', 409, (b, x) => {
      b.entries[0].snapshots.push({ snapshot_id: x.stray, created_at_s: x.created[x.stray] });
      b.entries[0].snapshots.sort((p: Json, q: Json) => p.created_at_s - q.created_at_s);
    }, /is not on the history/],
    ['stored created_at_s differs', 409, (b) => { b.entries[1].snapshots[0].created_at_s += 1; }, /was created at/],
    ['expected remote task id not what would be published', 400, (b) => { b.entries[0].expected_remote_task_id = 'task-1'; }],
    ['expected remote change ref not what would be published', 400, (b) => { b.entries[2].expected_remote_change_ref = 'task-4.change-4'; }],
  ];

  for (const [what, status, mutate, message] of cases) {
    it(`${status}: ${what}`, async () => {
      const target = { url: s.url, dataDir: s.dataDir };
      const before = await storeState(target, h.repo);
      const b = body(h, `rules-${what}`);
      const replaced = mutate(b, h);
      const res = await api(s.url, 'POST', PREPARE(h.repo), { json: replaced ?? b });
      expectError(res, status, what);
      if (message) expect(res.json.error, what).to.match(message);
      expect(await storeState(target, h.repo), what).to.deep.equal(before);
    });
  }

  it('404 names the first missing snapshot', async () => {
    const b = body(h, 'rules-missing-name');
    const missing = 'e'.repeat(64);
    b.entries[1].snapshots.unshift({ snapshot_id: missing, created_at_s: 0 });
    const res = await api(s.url, 'POST', PREPARE(h.repo), { json: b });
    expectError(res, 404);
    expect(res.json.error).to.include(missing);
  });

  it('accepts a 256-byte key and the expected identities it would publish (the store moved by one task before)', async () => {
    const b = body(h, 'é'.repeat(128));
    b.entries.forEach((e: Json, i: number) => {
      e.expected_remote_task_id = `task-${i + 2}`;
      e.expected_remote_change_ref = `task-${i + 2}.change-${i + 1}`;
    });
    const res = await ok(api(s.url, 'POST', PREPARE(h.repo), { json: b }));
    expect(res).to.include({ task_id: 'task-4', change_ref: 'task-4.change-3', replay: false });
    expect(res.history_promotion.idempotency_key).to.equal('é'.repeat(128));
  });
});

describe('history promotion: request rules at their bounds (domain)', () => {
  const id = (n: number) => sha256(`snap-${n}`);
  function chain(entries: number, perEntry: number): PromotionInput {
    let n = 0;
    const base = id(n++);
    let pre = base;
    const list = [];
    for (let i = 0; i < entries; i++) {
      const snaps = Array.from({ length: perEntry }, () => ({ snapshot_id: id(n++), created_at_s: n }));
      const landed = snaps[snaps.length - 1].snapshot_id;
      list.push({ local_task_id: `t${i}`, local_change_id: `c${i}`, local_change_ref: `t${i}.c${i}`, task: { title: 't', intent: 'i' }, change: { title: 'c', base_line: 'main', fork_snapshot_id: pre }, pre_land_target_snapshot_id: pre, landed_snapshot_id: landed, landed_at_s: i, snapshots: snaps });
      pre = landed;
    }
    return { contract: 'history-promotion-prepare/v1', idempotency_key: 'k', target_line: 'main', base_snapshot_id: base, revision_snapshot_id: pre, author_mode: 'human_only', summary: 's', entries: list };
  }
  it('accepts 64 entries and 64 snapshots per entry; refuses 65 of either (Invalid)', () => {
    expect(checkPromotionRequest(chain(64, 1))).to.equal('human_only');
    expect(checkPromotionRequest(chain(1, 64))).to.equal('human_only');
    expect(() => checkPromotionRequest(chain(65, 1))).to.throw(Invalid, /entries/);
    expect(() => checkPromotionRequest(chain(1, 65))).to.throw(Invalid, /snapshots/);
  });
});

describe('history promotion: restart, export → restore, kill -9', function () {
  this.timeout(120_000);

  it('a restart keeps the receipt: replay returns it, another payload is still 409, sequences continue', async () => {
    const data = path.join(tempDir(), 'data');
    let s = await startTestServer(data);
    const h = await history(s, 'restart');
    const first = await ok(api(s.url, 'POST', PREPARE(h.repo), { json: body(h) }));
    await s.stop();
    s = await startTestServer(data);
    try {
      const replay = await ok(api(s.url, 'POST', PREPARE(h.repo), { json: body(h) }));
      expect(replay.replay).to.equal(true);
      expect(replay.history_promotion).to.deep.equal(first.history_promotion);
      expect(replay.task).to.deep.equal(first.task);
      expectError(await api(s.url, 'POST', PREPARE(h.repo), { json: { ...body(h), summary: 'changed' } }), 409);
      const next = await ok(api(s.url, 'POST', PREPARE(h.repo), { json: body(h, 'after-restart') }));
      expect(next).to.include({ promotion_id: 'promotion-2', task_id: 'task-6', replay: false });
    } finally {
      await s.stop();
    }
  });

  it('id floors (serve --lease): a new promotion takes the sequence past the `promotion` floor; a restart without the floors file continues past the highest held', async () => {
    const data = path.join(tempDir(), 'data');
    let s = await startTestServer(data);
    try {
      const h = await history(s, 'floors');
      expect((await ok(api(s.url, 'POST', PREPARE(h.repo), { json: body(h) }))).promotion_id).to.equal('promotion-1');
      await (await s.ready).setIdFloors(new Map([[h.repo, { promotion: 4 }]]));
      const past = await ok(api(s.url, 'POST', PREPARE(h.repo), { json: body(h, 'past-the-floor') }));
      expect(past).to.include({ promotion_id: 'promotion-5', replay: false });
      expect(past.history_promotion.sequence).to.equal(5);
      expect((await s.ready).idHighs(h.repo)).to.include({ promotion: 5 });
      await s.stop();
      await fsp.rm(path.join(data, 'id-floors.json'));
      s = await startTestServer(data);
      expect(await ok(api(s.url, 'POST', PREPARE(h.repo), { json: body(h, 'past-the-floor') }))).to.include({ promotion_id: 'promotion-5', replay: true });
      expect(await ok(api(s.url, 'POST', PREPARE(h.repo), { json: body(h, 'after-restart') }))).to.include({ promotion_id: 'promotion-6', replay: false });
    } finally {
      await s.stop();
    }
  });

  it('export → restore carries the receipt and its key', async () => {
    const source = await startTestServer();
    const target = await startTestServer();
    try {
      const h = await history(source, 'exported');
      const first = await ok(api(source.url, 'POST', PREPARE(h.repo), { json: body(h) }));
      const { manifest, files } = await exportRepo(source.url, h.repo);
      const restored = await restoreRepo(target.url, manifest, files);
      const replay = await ok(api(target.url, 'POST', PREPARE(restored), { json: body(h) }));
      expect(replay.replay).to.equal(true);
      expect(replay.history_promotion).to.deep.equal({ ...first.history_promotion, repository_index: restored });
      expect(replay.change.promoted_from).to.deep.equal(first.change.promoted_from);
      expectError(await api(target.url, 'POST', PREPARE(restored), { json: { ...body(h), summary: 'changed' } }), 409);
    } finally {
      await source.stop();
      await target.stop();
    }
  });

  it('a task-land of the aggregate replays on the restored repository: the receipt under the new index, the earlier changes landed', async () => {
    const source = await startTestServer();
    const target = await startTestServer();
    try {
      const h = await history(source, 'exported-land');
      const receipt = await ok(api(source.url, 'POST', PREPARE(h.repo), { json: body(h) }));
      await passGates(source.url, h.repo, receipt);
      const landed = await ok(api(source.url, 'POST', R(h.repo, '/task-land'), { json: landBody(receipt.task_id, 'exported-land') }));
      const before = await aftermath(source.url, h.repo, ['change-1', 'change-2', 'change-3'], ['task-1', 'task-2', 'task-3']);
      const { manifest, files } = await exportRepo(source.url, h.repo);
      await register(target.url, 'padding');
      const restored = await restoreRepo(target.url, manifest, files);
      expect(restored).to.not.equal(h.repo);
      const reindex = (v: Json) => JSON.parse(JSON.stringify(v, (k, x) => (k === 'repository_index' ? restored : x)));
      const replay = await ok(api(target.url, 'POST', R(restored, '/task-land'), { json: landBody(receipt.task_id, 'exported-land') }));
      expect(replay).to.deep.equal(reindex({ ...landed, replay: true }));
      expect(replay.history_promotion.repository_index).to.equal(restored);
      expect(await aftermath(target.url, restored, ['change-1', 'change-2', 'change-3'], ['task-1', 'task-2', 'task-3'])).to.deep.equal(before);
    } finally {
      await source.stop();
      await target.stop();
    }
  });

  for (const point of ['commit:after-log', 'commit:before-state', 'commit:after-state']) {
    it(`a land of the aggregate killed at ${point}: the line, the aggregate and the earlier changes all moved, or none did`, async () => {
      const data = path.join(tempDir(), 'data');
      let s = await startTestServer(data);
      const h = await history(s, 'land-crash');
      await ok(api(s.url, 'POST', PREPARE(h.repo), { json: body(h) }));
      await s.stop();
      // The child lands through a LandDesk with a passing gate function (test/land-crash-child.ts).
      const { spawn } = await import('node:child_process');
      const child = spawn(process.execPath, [path.join(path.dirname(new URL(import.meta.url).pathname), 'land-crash-child.js'), path.join(data, 'repositories', String(h.repo)), String(h.repo), 'change-3', 'ff-only'], {
        env: { ...process.env, CAIRN_TEST_CRASH_AT: point }, stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const signal = await new Promise<string | null>((res) => child.on('exit', (_code, sig) => res(sig)));
      expect(signal, stderr).to.equal('SIGKILL');
      s = await startTestServer(data);
      try {
        const head = (await ok(api(s.url, 'GET', R(h.repo, '/lines/main')))).head_snapshot_id;
        const after = await aftermath(s.url, h.repo, ['change-1', 'change-2', 'change-3'], ['task-1', 'task-2', 'task-3']);
        const statuses = Object.values(after.changes).map((c: any) => c.status);
        if (point === 'commit:after-state') {
          expect(head).to.equal(h.l3);
          expect(statuses).to.deep.equal(['landed', 'landed', 'landed']);
          expect(after.changes['change-1'].landed_via).to.deep.equal({ promotion_id: 'promotion-1', land_id: 'land-1', change_id: 'change-3' });
          expect(after.summary).to.include({ landed: 3, open: 0 });
        } else {
          expect(head).to.equal(h.base);
          expect(statuses).to.deep.equal(['draft', 'draft', 'active']);
          expect(after.summary).to.include({ landed: 0, open: 3 });
          expect((await api(s.url, 'GET', R(h.repo, '/lands/land-1'))).status).to.equal(404);
        }
      } finally {
        await s.stop();
      }
      const check = await cli(['fsck', '--data', data]);
      expect(check.code, check.stdout + check.stderr).to.equal(0);
    });
  }

  for (const point of ['commit:after-log', 'commit:before-state', 'commit:after-state']) {
    it(`a promotion killed at ${point} is all there or not at all`, async () => {
      const data = path.join(tempDir(), 'data');
      const firstServer = await spawnServer(data);
      const h = await history(firstServer, 'crash');
      firstServer.proc.kill('SIGTERM');
      await firstServer.exited;
      const doomed = await spawnServer(data, [], true, { CAIRN_TEST_CRASH_AT: point });
      const res = await api(doomed.url, 'POST', PREPARE(h.repo), { json: body(h) }).catch(() => null);
      expect(res).to.equal(null);
      expect(await doomed.exited).to.equal(null);
      const restarted = await spawnServer(data);
      try {
        const tasks = await ok(api(restarted.url, 'GET', R(h.repo, '/tasks')));
        const changes = await ok(api(restarted.url, 'GET', R(h.repo, '/changes')));
        const again = await ok(api(restarted.url, 'POST', PREPARE(h.repo), { json: body(h) }));
        if (point === 'commit:after-state') {
          expect(tasks.count).to.equal(3);
          expect(changes.count).to.equal(3);
          expect(again.replay).to.equal(true);
        } else {
          expect(tasks.count).to.equal(0);
          expect(changes.count).to.equal(0);
          expect(again.replay).to.equal(false);
        }
        expect(again).to.include({ promotion_id: 'promotion-1', task_id: 'task-3', patchset_id: 'change-3.ps-1' });
        expect((await ok(api(restarted.url, 'GET', R(h.repo, '/changes/change-3')))).change.selected_patchset_id).to.equal('change-3.ps-1');
      } finally {
        restarted.proc.kill('SIGTERM');
        await restarted.exited;
      }
      const check = await cli(['fsck', '--data', data]);
      expect(check.code, check.stdout + check.stderr).to.equal(0);
    });
  }
});

describe('history promotion: cairn promote FILE', function () {
  this.timeout(60_000);
  it('sends the file and prints the receipt; a second run replays it; a bad file is a usage error', async () => {
    const s = await startTestServer();
    try {
      const h = await history(s, 'cli');
      const file = path.join(tempDir(), 'promotion.json');
      await fsp.writeFile(file, JSON.stringify(body(h)));
      const run = await cli(['promote', '--server', s.url, '--repo', String(h.repo), file]);
      expect(run.code, run.stderr).to.equal(0);
      const out = JSON.parse(run.stdout);
      expect(out).to.include({ replay: false, patchset_id: 'change-3.ps-1', change_ref: 'task-3.change-3' });
      const again = await cli(['promote', '--server', s.url, '--repo', String(h.repo), '--json', file]);
      expect(again.code, again.stderr).to.equal(0);
      expect(JSON.parse(again.stdout).replay).to.equal(true);
      await fsp.writeFile(file, '{not json');
      const bad = await cli(['promote', '--server', s.url, '--repo', String(h.repo), file]);
      expect(bad.code).to.equal(2);
      await fsp.writeFile(file, JSON.stringify({ ...body(h), summary: 'other' }));
      const reuse = await cli(['promote', '--server', s.url, '--repo', String(h.repo), file]);
      expect(reuse.code).to.equal(1);
      expect(reuse.stderr).to.match(/409|idempotency_key/);
    } finally {
      await s.stop();
    }
  });
});
