// Tasks, changes and patchsets over real HTTP (spec: "Task", "Change", "Patchset", the Task and
// Change rows of the transition table, "Tasks and read models", "Task linkage rules", the change
// and patchset rows of "Changes, patchsets, reviews, policy, CI, Land"; docs/api.md "Tasks, changes,
// patchsets"): the whole story, identities and their spellings, every rule and bad input (status,
// `{"error"}` body and an unchanged repository directory), concurrent creates, restart, and
// kill -9 during the two-record patchset write.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { ContentStore } from '../lib/store/content-store.js';
import { api, cli, register, spawnServer, startTestServer, tempDir, type TestServer, expectError, ok, repoFiles } from './helpers.js';

type Json = Record<string, any>;
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;




/** Everything a rejected request must leave alone: every file of the repository and the read models. */
async function storeState(s: { url: string; dataDir: string }, repo: number): Promise<Json> {
  return {
    files: await repoFiles(path.join(s.dataDir, 'repositories', String(repo))),
    tasks: (await api(s.url, 'GET', R(repo, '/tasks'))).json,
    changes: (await api(s.url, 'GET', R(repo, '/changes'))).json,
    summary: (await api(s.url, 'GET', R(repo, '/read/queue-summary'))).json,
  };
}

/** A directory tree for a snapshot. */
async function writeTree(dir: string, files: Record<string, string | { link: string } | { exec: string }>): Promise<void> {
  await fsp.rm(dir, { recursive: true, force: true });
  await fsp.mkdir(dir, { recursive: true });
  for (const [p, v] of Object.entries(files)) {
    const full = path.join(dir, p);
    await fsp.mkdir(path.dirname(full), { recursive: true });
    if (typeof v === 'string') await fsp.writeFile(full, v);
    else if ('link' in v) await fsp.symlink(v.link, full);
    else await fsp.writeFile(full, v.exec, { mode: 0o755 });
  }
}

interface Fixture { repo: number; base: string; rev1: string; rev2: string; planId: string; revisionId: string }

const BASE_TREE = {
  'README.md': 'one\ntwo\nthree\n',
  'src/a.txt': 'alpha\nbeta\ngamma\n',
  'src/old.txt': 'to be removed\nsecond\n',
  'tool.sh': 'echo hi\n',
  'bin.dat': 'x\u0000y',
  'lib/deep/same.txt': 'unchanged\n',
};

async function fixture(s: { url: string }, name = 'wf'): Promise<Fixture> {
  const repo = await register(s.url, name);
  const dir = path.join(tempDir(), 'tree');
  await writeTree(dir, BASE_TREE);
  const base = (await push({ server: s.url, repo, line: 'main', dir, moveLine: true, progress: false })).snapshot_id;
  await writeTree(dir, {
    'README.md': 'one\n2\nthree\nfour\n', // one line replaced, one added
    'src/a.txt': 'alpha\nbeta\ngamma\n',
    'src/new.txt': 'n1\nn2\n', // added
    'tool.sh': { exec: 'echo hi\n' }, // mode only
    'bin.dat': 'x\u0000z', // binary modified
    'link': { link: 'src/a.txt' }, // symlink added
    'lib/deep/same.txt': 'unchanged\n',
  });
  const rev1 = (await push({ server: s.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
  await fsp.writeFile(path.join(dir, 'src/a.txt'), 'alpha\nBETA\ngamma\n');
  const rev2 = (await push({ server: s.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
  const plan = await api(s.url, 'POST', R(repo, '/sprints'), { json: { title: 'Sprint', artifact_path: 'docs/s.md', artifact_heading: 'Sprint', artifact_body: '# Sprint\n- [ ] build it {#build}\n- [ ] test it {#test}\n' } });
  expect(plan.status, plan.text).to.equal(200);
  return { repo, base, rev1, rev2, planId: plan.json.plan.plan_id, revisionId: plan.json.revision.plan_revision_id };
}

describe('workflow: the whole story over HTTP', function () {
  this.timeout(60_000);
  let s: TestServer;
  let fx: Fixture;
  before(async () => {
    s = await startTestServer();
    fx = await fixture(s);
  });
  after(() => s.stop());

  it('plan → task linked to an item → change → two patchsets → select → audit; read models follow', async () => {
    const { repo } = fx;
    // Task linked to a plan item: the head revision is resolved from the plan id.
    const t = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'Build', intent: 'Build the thing', plan_id: fx.planId, plan_item_ref: 'build' } }), 'task')).task;
    expect(t).to.include({ task_id: 'task-1', sequence: 1, title: 'Build', intent: 'Build the thing', status: 'active', plan_id: fx.planId, origin_plan_revision_id: fx.revisionId, plan_item_ref: 'build', repository_index: repo, closed_at_s: null });
    expect(t.plan_drift).to.deep.equal({ plan_status: 'draft', head_revision_id: fx.revisionId, plan_moved: false, item_in_head: true });
    expect(t.created_at_s).to.be.a('number');
    // Both spellings of {task_ref}.
    expect((await ok(api(s.url, 'GET', R(repo, '/tasks/task-1')))).task).to.deep.equal(t);
    expect((await ok(api(s.url, 'GET', R(repo, '/tasks/1')))).task).to.deep.equal(t);

    // candidate-inputs now lists the linked task.
    const cands = await ok(api(s.url, 'GET', R(repo, '/read/plans/candidate-inputs?contains=sprint')));
    expect(cands.plans[0].task_candidates).to.deep.equal([{ task_id: 'task-1', title: 'Build', status: 'active', origin_plan_revision_id: fx.revisionId, plan_item_ref: 'build', item_in_head: true }]);

    // Change: created draft, fork recorded as the base line's head.
    const c = (await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: 'task-1', title: 'First cut', base_line: 'main' } }), 'change')).change;
    expect(c).to.include({ change_id: 'change-1', change_ref: 'task-1.change-1', task_id: 'task-1', base_line: 'main', fork_snapshot_id: fx.base, status: 'draft', patchset_count: 0, current_patchset_id: null, selected_patchset_id: null, land_target_line: 'main', landed_at_s: null, closed_at_s: null });
    // GET adds the change's stack (docs/api.md "Stacks"): none for a change that stands alone.
    expect((await ok(api(s.url, 'GET', R(repo, '/changes/task-1.change-1')))).change).to.deep.equal({ ...c, stack: [] });

    // First patchset: selected automatically, the change becomes active; the diff is real.
    const p1 = await ok(api(s.url, 'POST', R(repo, '/changes/change-1/patchsets'), { json: { base_snapshot_id: fx.base, revision_snapshot_id: fx.rev1, summary: 'first', author_mode: 'human_only' } }), 'ps1');
    expect(p1.replayed).to.equal(false);
    expect(p1.patchset).to.include({ patchset_id: 'change-1.ps-1', change_id: 'change-1', patchset_number: 1, publish_state: 'published', withdrawn: false, invalidated: false, evaluation_state: 'not_evaluated', author_mode: 'human_only' });
    expect(p1.patchset.ci).to.include({ ci_run_sequence: 0, overall: 'none' });
    expect(p1.patchset.policy).to.deep.equal({ decision: 'pending', checks: [] });
    const st = p1.patchset.changed_file_stats;
    expect(st).to.deep.include({ files_changed: 6, files_added: 2, files_modified: 3, files_deleted: 1, mode_only: 1, symlinks_changed: 1, lines_added: 4, lines_removed: 3, lines_complete: true });
    const byPath = Object.fromEntries(p1.patchset.changed_files.map((f: Json) => [f.path, f]));
    expect(Object.keys(byPath)).to.deep.equal(['README.md', 'bin.dat', 'link', 'src/new.txt', 'src/old.txt', 'tool.sh']);
    expect(byPath['README.md']).to.include({ change: 'modified', lines_added: 2, lines_removed: 1, old_bytes: 14, new_bytes: 17, binary: false });
    expect(byPath['bin.dat']).to.include({ change: 'modified', binary: true, lines_added: null });
    expect(byPath['link']).to.include({ change: 'added', new_kind: 'symlink', lines_added: null });
    expect(byPath['src/old.txt']).to.include({ change: 'deleted', lines_removed: 2, old_kind: 'file', new_kind: null });
    expect(byPath['tool.sh']).to.include({ change: 'modified', mode_changed: true, content_changed: false, old_kind: 'file', new_kind: 'executable', lines_added: 0 });
    let change = (await ok(api(s.url, 'GET', R(repo, '/changes/change-1')))).change;
    expect(change).to.include({ status: 'active', patchset_count: 1, current_patchset_id: 'change-1.ps-1', selected_patchset_id: 'change-1.ps-1' });

    // A replay (same change, base, revision) returns the existing patchset.
    const replay = await ok(api(s.url, 'POST', R(repo, '/changes/task-1.change-1/patchsets'), { json: { base_snapshot_id: fx.base, revision_snapshot_id: fx.rev1, summary: 'again', author_mode: 'human_only' } }));
    expect(replay.replayed).to.equal(true);
    expect(replay.patchset).to.deep.equal(p1.patchset);

    // Second patchset with the derived identity supplied: accepted; selection stays on the first.
    const p2 = await ok(api(s.url, 'POST', R(repo, '/changes/change-1/patchsets'), { json: { base_snapshot_id: fx.base, revision_snapshot_id: fx.rev2, summary: 'second', author_mode: 'ai_with_human_review', patchset_id: 'change-1.ps-2', patchset_number: 2 } }), 'ps2');
    expect(p2.patchset).to.include({ patchset_id: 'change-1.ps-2', patchset_number: 2 });
    expect(p2.patchset.changed_file_stats).to.include({ files_changed: 7, lines_added: 5, lines_removed: 4 });
    change = (await ok(api(s.url, 'GET', R(repo, '/changes/change-1')))).change;
    expect(change).to.include({ status: 'active', patchset_count: 2, current_patchset_id: 'change-1.ps-2', selected_patchset_id: 'change-1.ps-1' });
    const listed = await ok(api(s.url, 'GET', R(repo, '/changes/change-1/patchsets')));
    expect(listed.patchsets.map((p: Json) => p.patchset_id)).to.deep.equal(['change-1.ps-1', 'change-1.ps-2']);
    expect((await ok(api(s.url, 'GET', R(repo, '/patchsets/change-1.ps-2')))).patchset).to.deep.equal(p2.patchset);

    // Select the second.
    const sel = await ok(api(s.url, 'POST', R(repo, '/changes/change-1:selectPatchset'), { json: { patchset_id: 'change-1.ps-2' } }));
    expect(sel.change).to.include({ selected_patchset_id: 'change-1.ps-2', status: 'active' });

    // Audit: the task, its changes, the target line head, counts and the verdict.
    let audit = await ok(api(s.url, 'GET', R(repo, '/read/tasks/task-1/audit?target_line=main')));
    expect(audit).to.include({ target_line: 'main', target_line_exists: true, target_line_head_snapshot_id: fx.base, open_changes: 1, landed_changes: 0, verdict: 'in_progress' });
    expect(audit.task.task_id).to.equal('task-1');
    expect(audit.changes.map((x: Json) => [x.change_id, x.selected_patchset_id])).to.deep.equal([['change-1', 'change-1.ps-2']]);
    const elsewhere = await ok(api(s.url, 'GET', R(repo, '/read/tasks/task-1/audit?target_line=nope')));
    expect(elsewhere).to.include({ target_line: 'nope', target_line_exists: false, target_line_head_snapshot_id: null, verdict: 'in_progress' });

    // Queue read models.
    const summary = await ok(api(s.url, 'GET', R(repo, '/read/queue-summary')));
    expect(summary.tasks).to.deep.equal({ active: 1, completed: 0, abandoned: 0, total: 1 });
    expect(summary.changes).to.include({ active: 1, draft: 0, open: 1, total: 1 });
    const queue = await ok(api(s.url, 'GET', R(repo, '/read/task-queue?status=active')));
    expect(queue.tasks).to.have.length(1);
    expect(queue.tasks[0]).to.include({ task_id: 'task-1', change_count: 1, open_change_count: 1, landed_change_count: 0 });
    expect(queue.tasks[0].changes[0]).to.include({ change_id: 'change-1', status: 'active', patchset_count: 2, selected_patchset_id: 'change-1.ps-2' });

    // Close the change, then the task: the verdict follows.
    const closed = await ok(api(s.url, 'POST', R(repo, '/changes/change-1:close'), { json: { status: 'cancelled' } }));
    expect(closed.change.status).to.equal('abandoned');
    expect(closed.change.closed_at_s).to.be.a('number');
    audit = await ok(api(s.url, 'GET', R(repo, '/read/tasks/1/audit?target_line=main')));
    expect(audit).to.include({ open_changes: 0, verdict: 'no_changes' });
    const done = await ok(api(s.url, 'POST', R(repo, '/tasks/task-1:close'), { json: { status: 'completed' } }));
    expect(done.task).to.include({ status: 'completed' });
    audit = await ok(api(s.url, 'GET', R(repo, '/read/tasks/task-1/audit')));
    expect(audit.verdict).to.equal('task_completed');
    expect((await ok(api(s.url, 'GET', R(repo, '/read/queue-summary?status=completed')))).changes).to.include({ abandoned: 1, total: 1 });
    expect((await ok(api(s.url, 'GET', R(repo, '/read/queue-summary?status=active')))).changes).to.include({ total: 0 });
    expect((await ok(api(s.url, 'GET', R(repo, '/read/task-queue?status=active')))).tasks).to.deep.equal([]);
  });

  it('projects plan drift once the plan moves past the linked revision and the item is gone', async () => {
    const { repo } = fx;
    const t = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'Test', intent: 'Test it', origin_plan_revision_id: fx.revisionId, plan_item_ref: 'test' } }))).task;
    expect(t.plan_id).to.equal(fx.planId);
    await ok(api(s.url, 'POST', R(repo, `/sprints/${fx.planId}/revisions`), { json: { artifact_path: 'docs/s.md', artifact_heading: 'Sprint', artifact_body: '# Sprint\n- [ ] build it {#build}\n' } }));
    const again = (await ok(api(s.url, 'GET', R(repo, `/tasks/${t.task_id}`)))).task;
    expect(again.plan_drift).to.include({ plan_moved: true, item_in_head: false });
    expect(again.origin_plan_revision_id).to.equal(fx.revisionId);
  });

  it('abandons with abandoned, canceled or cancelled; lists newest first with filters', async () => {
    const { repo } = fx;
    const ids: string[] = [];
    for (const status of ['abandoned', 'canceled', 'cancelled']) {
      const t = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: status, intent: 'x' } }))).task;
      ids.push(t.task_id);
      expect((await ok(api(s.url, 'POST', R(repo, `/tasks/${t.task_id}:close`), { json: { status } }))).task.status).to.equal('abandoned');
    }
    const all = await ok(api(s.url, 'GET', R(repo, '/tasks')));
    const seqs = all.tasks.map((t: Json) => t.sequence);
    expect(seqs).to.deep.equal([...seqs].sort((a: number, b: number) => b - a));
    expect(all.count).to.equal(all.tasks.length);
    const abandoned = await ok(api(s.url, 'GET', R(repo, '/tasks?status=abandoned')));
    expect(abandoned.tasks.map((t: Json) => t.task_id)).to.deep.equal([...ids].reverse());
    const linked = await ok(api(s.url, 'GET', R(repo, `/tasks?plan_id=${fx.planId}`)));
    expect(linked.tasks.every((t: Json) => t.plan_id === fx.planId)).to.equal(true);
    expect(linked.tasks.length).to.be.greaterThan(0);
  });
});

describe('workflow: rules and bad input (status, body, unchanged store)', function () {
  this.timeout(120_000);
  let s: TestServer;
  let fx: Fixture;
  before(async () => {
    s = await startTestServer();
    fx = await fixture(s, 'rules');
    const { repo } = fx;
    // task-1 active with change-1 (one patchset), task-2 completed, change-2 archived.
    await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T1', intent: 'i' } }));
    await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T2', intent: 'i' } }));
    await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: 'task-1', title: 'C1', base_line: 'main' } }));
    await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: 'task-1', title: 'C2', base_line: 'main' } }));
    await ok(api(s.url, 'POST', R(repo, '/changes/change-1/patchsets'), { json: { base_snapshot_id: fx.base, revision_snapshot_id: fx.rev1, summary: 's', author_mode: 'human_only' } }));
    await ok(api(s.url, 'POST', R(repo, '/changes/change-2/patchsets'), { json: { base_snapshot_id: fx.base, revision_snapshot_id: fx.rev1, summary: 's', author_mode: 'human_only' } }));
    await ok(api(s.url, 'POST', R(repo, '/changes/change-2:close'), { json: { status: 'archived' } }));
    await ok(api(s.url, 'POST', R(repo, '/tasks/task-2:close'), { json: { status: 'completed' } }));
    await ok(api(s.url, 'PUT', R(repo, '/lines/empty'), { json: { head_snapshot_id: null } }));
  });
  after(() => s.stop());

  const missing = 'f'.repeat(64);
  const cases: [string, string, string, (fx: Fixture) => unknown, number][] = [
    // tasks.create
    ['task without title', 'POST', '/tasks', () => ({ intent: 'i' }), 422],
    ['task without intent', 'POST', '/tasks', () => ({ title: 't' }), 422],
    ['task title not a string', 'POST', '/tasks', () => ({ title: 7, intent: 'i' }), 422],
    ['task empty title', 'POST', '/tasks', () => ({ title: ' ', intent: 'i' }), 400],
    ['task empty intent', 'POST', '/tasks', () => ({ title: 't', intent: '' }), 400],
    ['task title with a lone surrogate', 'POST', '/tasks', () => ({ title: 'a\ud800', intent: 'i' }), 400],
    ['task with repository_index', 'POST', '/tasks', () => ({ title: 't', intent: 'i', repository_index: 0 }), 400],
    ['task with repo_id', 'POST', '/tasks', () => ({ title: 't', intent: 'i', repo_id: 'x' }), 400],
    ['task_id malformed', 'POST', '/tasks', () => ({ title: 't', intent: 'i', task_id: 'T1' }), 400],
    ['task_id not the next', 'POST', '/tasks', () => ({ title: 't', intent: 'i', task_id: 'task-1' }), 400],
    ['task_id skipping ahead', 'POST', '/tasks', () => ({ title: 't', intent: 'i', task_id: 'task-9' }), 400],
    ['item without plan linkage', 'POST', '/tasks', () => ({ title: 't', intent: 'i', plan_item_ref: 'build' }), 400],
    ['unknown plan', 'POST', '/tasks', () => ({ title: 't', intent: 'i', plan_id: 'plan-99' }), 404],
    ['unknown revision', 'POST', '/tasks', () => ({ title: 't', intent: 'i', origin_plan_revision_id: 'rev-0' }), 404],
    ['item missing in the revision', 'POST', '/tasks', (f) => ({ title: 't', intent: 'i', plan_id: f.planId, plan_item_ref: 'nope' }), 404],
    ['revision of another plan', 'POST', '/tasks', (f) => ({ title: 't', intent: 'i', plan_id: 'plan-2', origin_plan_revision_id: f.revisionId }), 400],
    // tasks.close
    ['close with a bad status', 'POST', '/tasks/task-1:close', () => ({ status: 'done' }), 400],
    ['close without status', 'POST', '/tasks/task-1:close', () => ({}), 422],
    ['close a completed task as abandoned', 'POST', '/tasks/task-2:close', () => ({ status: 'abandoned' }), 400],
    ['close a completed task as cancelled', 'POST', '/tasks/task-2:close', () => ({ status: 'cancelled' }), 400],
    ['close an unknown task', 'POST', '/tasks/task-99:close', () => ({ status: 'completed' }), 404],
    ['close a malformed task ref', 'POST', '/tasks/task-01:close', () => ({ status: 'completed' }), 404],
    // changes.create
    ['change without base_line', 'POST', '/changes', () => ({ task_id: 'task-1', title: 'c' }), 422],
    ['change without task_id', 'POST', '/changes', () => ({ title: 'c', base_line: 'main' }), 422],
    ['change with empty title', 'POST', '/changes', () => ({ task_id: 'task-1', title: '', base_line: 'main' }), 400],
    ['change for an unknown task', 'POST', '/changes', () => ({ task_id: 'task-99', title: 'c', base_line: 'main' }), 404],
    ['change with a malformed task_id', 'POST', '/changes', () => ({ task_id: 'x', title: 'c', base_line: 'main' }), 400],
    ['change for a closed task', 'POST', '/changes', () => ({ task_id: 'task-2', title: 'c', base_line: 'main' }), 400],
    ['change on an unknown line', 'POST', '/changes', () => ({ task_id: 'task-1', title: 'c', base_line: 'nope' }), 404],
    ['change with a stale fork', 'POST', '/changes', (f) => ({ task_id: 'task-1', title: 'c', base_line: 'main', fork_snapshot_id: f.rev1 }), 409],
    ['change with a fork on an empty line', 'POST', '/changes', (f) => ({ task_id: 'task-1', title: 'c', base_line: 'empty', fork_snapshot_id: f.base }), 409],
    ['change with a malformed fork', 'POST', '/changes', () => ({ task_id: 'task-1', title: 'c', base_line: 'main', fork_snapshot_id: 'abc' }), 400],
    ['change_id not derived', 'POST', '/changes', () => ({ task_id: 'task-1', title: 'c', base_line: 'main', change_id: 'change-1' }), 400],
    ['change_id full spelling of another task', 'POST', '/changes', () => ({ task_id: 'task-1', title: 'c', base_line: 'main', change_id: 'task-2.change-3' }), 400],
    ['change_id malformed', 'POST', '/changes', () => ({ task_id: 'task-1', title: 'c', base_line: 'main', change_id: 'C3' }), 400],
    ['change with repository_index', 'POST', '/changes', () => ({ task_id: 'task-1', title: 'c', base_line: 'main', repository_index: 1 }), 400],
    // changes.close
    ['change close landed', 'POST', '/changes/change-1:close', () => ({ status: 'landed' }), 400],
    ['change close bad status', 'POST', '/changes/change-1:close', () => ({ status: 'completed' }), 400],
    ['change close unknown', 'POST', '/changes/change-9:close', () => ({ status: 'archived' }), 404],
    ['change close full ref of the wrong task', 'POST', '/changes/task-2.change-1:close', () => ({ status: 'archived' }), 404],
    // changes.selectPatchset
    ['select an unknown patchset', 'POST', '/changes/change-1:selectPatchset', () => ({ patchset_id: 'change-1.ps-9' }), 404],
    ['select another change\'s patchset', 'POST', '/changes/change-1:selectPatchset', () => ({ patchset_id: 'change-2.ps-1' }), 400],
    ['select on a closed change', 'POST', '/changes/change-2:selectPatchset', () => ({ patchset_id: 'change-2.ps-1' }), 400],
    ['select without patchset_id', 'POST', '/changes/change-1:selectPatchset', () => ({}), 422],
    // patchsets.create
    ['patchset without author_mode', 'POST', '/changes/change-1/patchsets', (f) => ({ base_snapshot_id: f.base, revision_snapshot_id: f.rev2, summary: 's' }), 422],
    ['patchset with a bad author_mode', 'POST', '/changes/change-1/patchsets', (f) => ({ base_snapshot_id: f.base, revision_snapshot_id: f.rev2, summary: 's', author_mode: 'robot' }), 400],
    ['patchset with an empty summary', 'POST', '/changes/change-1/patchsets', (f) => ({ base_snapshot_id: f.base, revision_snapshot_id: f.rev2, summary: '', author_mode: 'human_only' }), 400],
    ['patchset with a malformed snapshot', 'POST', '/changes/change-1/patchsets', (f) => ({ base_snapshot_id: f.base, revision_snapshot_id: 'xyz', summary: 's', author_mode: 'human_only' }), 400],
    ['patchset with a missing revision', 'POST', '/changes/change-1/patchsets', (f) => ({ base_snapshot_id: f.base, revision_snapshot_id: missing, summary: 's', author_mode: 'human_only' }), 404],
    ['patchset with a missing base', 'POST', '/changes/change-1/patchsets', (f) => ({ base_snapshot_id: missing, revision_snapshot_id: f.rev2, summary: 's', author_mode: 'human_only' }), 404],
    ['patchset on an unknown change', 'POST', '/changes/change-9/patchsets', (f) => ({ base_snapshot_id: f.base, revision_snapshot_id: f.rev2, summary: 's', author_mode: 'human_only' }), 404],
    ['patchset on a closed change', 'POST', '/changes/change-2/patchsets', (f) => ({ base_snapshot_id: f.base, revision_snapshot_id: f.rev2, summary: 's', author_mode: 'human_only' }), 400],
    ['patchset_number not next', 'POST', '/changes/change-1/patchsets', (f) => ({ base_snapshot_id: f.base, revision_snapshot_id: f.rev2, summary: 's', author_mode: 'human_only', patchset_number: 3 }), 400],
    ['patchset_number zero', 'POST', '/changes/change-1/patchsets', (f) => ({ base_snapshot_id: f.base, revision_snapshot_id: f.rev2, summary: 's', author_mode: 'human_only', patchset_number: 0 }), 400],
    ['patchset_id not derived', 'POST', '/changes/change-1/patchsets', (f) => ({ base_snapshot_id: f.base, revision_snapshot_id: f.rev2, summary: 's', author_mode: 'human_only', patchset_id: 'change-1.ps-1' }), 400],
    ['patchset_id malformed', 'POST', '/changes/change-1/patchsets', (f) => ({ base_snapshot_id: f.base, revision_snapshot_id: f.rev2, summary: 's', author_mode: 'human_only', patchset_id: 'ps2' }), 400],
    ['replay naming another identity', 'POST', '/changes/change-1/patchsets', (f) => ({ base_snapshot_id: f.base, revision_snapshot_id: f.rev1, summary: 's', author_mode: 'human_only', patchset_number: 2 }), 400],
    ['patchset with repo_id', 'POST', '/changes/change-1/patchsets', (f) => ({ base_snapshot_id: f.base, revision_snapshot_id: f.rev2, summary: 's', author_mode: 'human_only', repo_id: 'r' }), 400],
    // reads
    ['unknown task', 'GET', '/tasks/task-42', () => undefined, 404],
    ['task ref with leading zero', 'GET', '/tasks/007', () => undefined, 404],
    ['unknown change', 'GET', '/changes/change-42', () => undefined, 404],
    ['unknown patchset', 'GET', '/patchsets/change-1.ps-42', () => undefined, 404],
    ['patchsets of an unknown change', 'GET', '/changes/nope/patchsets', () => undefined, 404],
    ['audit of an unknown task', 'GET', '/read/tasks/task-42/audit', () => undefined, 404],
    ['task list with a bad status', 'GET', '/tasks?status=open', () => undefined, 400],
    ['task list with status twice', 'GET', '/tasks?status=active&status=completed', () => undefined, 400],
    ['change list with a bad status', 'GET', '/changes?status=done', () => undefined, 400],
    ['change list for an unknown task', 'GET', '/changes?task_id=task-42', () => undefined, 404],
    ['queue summary with a bad status', 'GET', '/read/queue-summary?status=x', () => undefined, 400],
    ['task queue with a bad status', 'GET', '/read/task-queue?status=x', () => undefined, 400],
  ];

  for (const [what, method, p, body, status] of cases) {
    it(`${what} → ${status}, nothing changes`, async () => {
      const before = await storeState(s, fx.repo);
      const b = body(fx);
      expectError(await api(s.url, method, R(fx.repo, p), b === undefined ? {} : { json: b }), status, what);
      expect(await storeState(s, fx.repo)).to.deep.equal(before);
    });
  }

  it('selecting the already selected patchset writes nothing', async () => {
    const before = await storeState(s, fx.repo);
    const res = await ok(api(s.url, 'POST', R(fx.repo, '/changes/change-1:selectPatchset'), { json: { patchset_id: 'change-1.ps-1' } }));
    expect(res.change.selected_patchset_id).to.equal('change-1.ps-1');
    expect(await storeState(s, fx.repo)).to.deep.equal(before);
  });

  it('accepts the derived identities the caller names (task_id, short and full change_id)', async () => {
    const { repo } = fx;
    const next = (await ok(api(s.url, 'GET', R(repo, '/tasks')))).count + 1;
    const t = await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 't', intent: 'i', task_id: `task-${next}` } }));
    expect(t.task.task_id).to.equal(`task-${next}`);
    const c3 = await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: t.task.task_id, title: 'c', base_line: 'main', change_id: 'change-3', fork_snapshot_id: fx.base } }));
    expect(c3.change.change_id).to.equal('change-3');
    const c4 = await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: String(next), title: 'c', base_line: 'empty', change_id: `task-${next}.change-4` } }));
    expect(c4.change).to.include({ change_ref: `task-${next}.change-4`, fork_snapshot_id: null });
  });

  it('refuses mutations while the repository retires (409) and keeps reads', async () => {
    const other = await register(s.url, 'retiring');
    await ok(api(s.url, 'POST', R(other, '/tasks'), { json: { title: 't', intent: 'i' } }));
    await ok(api(s.url, 'POST', R(other, '/retirement')));
    expectError(await api(s.url, 'POST', R(other, '/tasks'), { json: { title: 't', intent: 'i' } }), 409, 'retiring');
    expect((await ok(api(s.url, 'GET', R(other, '/tasks')))).count).to.equal(1);
  });
});

describe('workflow: concurrency, restart and kill -9', function () {
  this.timeout(120_000);

  it('50 concurrent task creates get unique, sequential ids; a restart keeps everything', async () => {
    const data = path.join(tempDir(), 'data');
    let s = await startTestServer(data);
    const fx = await fixture(s, 'many');
    const made = await Promise.all(Array.from({ length: 50 }, (_, i) => api(s.url, 'POST', R(fx.repo, '/tasks'), { json: { title: `t${i}`, intent: 'i' } })));
    for (const r of made) expect(r.status, r.text).to.equal(200);
    const seqs = made.map((r) => r.json.task.sequence).sort((a, b) => a - b);
    expect(seqs).to.deep.equal(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(new Set(made.map((r) => r.json.task.task_id)).size).to.equal(50);
    // Concurrent changes and patchsets too.
    const changes = await Promise.all(Array.from({ length: 10 }, (_, i) => ok(api(s.url, 'POST', R(fx.repo, '/changes'), { json: { task_id: `task-${i + 1}`, title: 'c', base_line: 'main' } }))));
    expect(changes.map((c) => c.change.sequence).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 10 }, (_, i) => i + 1));
    const pss = await Promise.all([fx.rev1, fx.rev2, fx.rev1].map((rev) => ok(api(s.url, 'POST', R(fx.repo, '/changes/change-1/patchsets'), { json: { base_snapshot_id: fx.base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' } }))));
    expect(pss[0].patchset.patchset_id).to.equal(pss[2].patchset.patchset_id);
    expect(pss.filter((p) => p.replayed)).to.have.length(1);
    expect(new Set(pss.map((p) => p.patchset.patchset_id))).to.deep.equal(new Set(['change-1.ps-1', 'change-1.ps-2']));
    await ok(api(s.url, 'POST', R(fx.repo, '/tasks/task-50:close'), { json: { status: 'abandoned' } }));
    const views = ['/tasks', '/changes', '/changes/change-1/patchsets', '/read/queue-summary', '/read/task-queue', '/read/tasks/task-1/audit', '/changes/change-1'];
    const before = await Promise.all(views.map((v) => ok(api(s.url, 'GET', R(fx.repo, v)))));
    await s.stop();
    s = await startTestServer(data);
    try {
      const after = await Promise.all(views.map((v) => ok(api(s.url, 'GET', R(fx.repo, v)))));
      expect(after).to.deep.equal(before);
      // Sequences continue after a restart.
      expect((await ok(api(s.url, 'POST', R(fx.repo, '/tasks'), { json: { title: 'next', intent: 'i' } }))).task.task_id).to.equal('task-51');
    } finally {
      await s.stop();
    }
  });

  it('refuses to select a withdrawn or invalidated patchset (400), changing nothing', async () => {
    // No route withdraws or invalidates a patchset; the flags are set in workflow.log directly.
    const data = path.join(tempDir(), 'data');
    let s = await startTestServer(data);
    const fx = await fixture(s, 'flags');
    await ok(api(s.url, 'POST', R(fx.repo, '/tasks'), { json: { title: 't', intent: 'i' } }));
    await ok(api(s.url, 'POST', R(fx.repo, '/changes'), { json: { task_id: 'task-1', title: 'c', base_line: 'main' } }));
    const p1 = (await ok(api(s.url, 'POST', R(fx.repo, '/changes/change-1/patchsets'), { json: { base_snapshot_id: fx.base, revision_snapshot_id: fx.rev1, summary: 's', author_mode: 'human_only' } }))).patchset;
    const p2 = (await ok(api(s.url, 'POST', R(fx.repo, '/changes/change-1/patchsets'), { json: { base_snapshot_id: fx.base, revision_snapshot_id: fx.rev2, summary: 's', author_mode: 'human_only' } }))).patchset;
    await s.stop();
    const { store } = await ContentStore.open(path.join(data, 'repositories', String(fx.repo)));
    try {
      await store.transact((tx) => {
        tx.upsert('patchset', p2.patchset_id, { ...tx.entity<Json>('patchset', p2.patchset_id), withdrawn: true });
      });
      await store.transact((tx) => {
        tx.upsert('patchset', p1.patchset_id, { ...tx.entity<Json>('patchset', p1.patchset_id), invalidated: true });
      });
    } finally {
      store.close();
    }
    s = await startTestServer(data);
    try {
      const target = { url: s.url, dataDir: data };
      expect((await ok(api(s.url, 'GET', R(fx.repo, `/patchsets/${p2.patchset_id}`)))).patchset.withdrawn).to.equal(true);
      const before = await storeState(target, fx.repo);
      expectError(await api(s.url, 'POST', R(fx.repo, '/changes/change-1:selectPatchset'), { json: { patchset_id: p2.patchset_id } }), 400, 'withdrawn');
      expectError(await api(s.url, 'POST', R(fx.repo, '/changes/change-1:selectPatchset'), { json: { patchset_id: p1.patchset_id } }), 400, 'invalidated');
      expect(await storeState(target, fx.repo)).to.deep.equal(before);
    } finally {
      await s.stop();
    }
  });

  for (const point of ['commit:after-log', 'commit:before-state', 'commit:after-state']) {
    it(`a patchset create (patchset + change records) killed at ${point} is all there or not at all`, async function () {
      const data = path.join(tempDir(), 'data');
      const first = await spawnServer(data);
      const fx = await fixture(first, 'crash');
      await ok(api(first.url, 'POST', R(fx.repo, '/tasks'), { json: { title: 't', intent: 'i' } }));
      await ok(api(first.url, 'POST', R(fx.repo, '/changes'), { json: { task_id: 'task-1', title: 'c', base_line: 'main' } }));
      first.proc.kill('SIGTERM');
      await first.exited;
      const doomed = await spawnServer(data, [], true, { CAIRN_TEST_CRASH_AT: point });
      const res = await api(doomed.url, 'POST', R(fx.repo, '/changes/change-1/patchsets'), { json: { base_snapshot_id: fx.base, revision_snapshot_id: fx.rev1, summary: 's', author_mode: 'human_only' } }).catch(() => null);
      expect(res).to.equal(null);
      expect(await doomed.exited).to.equal(null);
      const restarted = await spawnServer(data);
      try {
        const change = (await ok(api(restarted.url, 'GET', R(fx.repo, '/changes/change-1')))).change;
        const list = await ok(api(restarted.url, 'GET', R(fx.repo, '/changes/change-1/patchsets')));
        if (point === 'commit:after-state') {
          expect(list.count).to.equal(1);
          expect(change).to.include({ status: 'active', patchset_count: 1, selected_patchset_id: 'change-1.ps-1' });
        } else {
          expect(list.count).to.equal(0);
          expect(change).to.include({ status: 'draft', patchset_count: 0, selected_patchset_id: null });
          const again = await ok(api(restarted.url, 'POST', R(fx.repo, '/changes/change-1/patchsets'), { json: { base_snapshot_id: fx.base, revision_snapshot_id: fx.rev1, summary: 's', author_mode: 'human_only' } }));
          expect(again.patchset.patchset_id).to.equal('change-1.ps-1');
        }
      } finally {
        restarted.proc.kill('SIGTERM');
        await restarted.exited;
      }
      const check = await cli(['fsck', '--data', data]);
      expect(check.code, check.stdout + check.stderr).to.equal(0);
    });
  }
});
