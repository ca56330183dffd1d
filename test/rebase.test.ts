// `:rebase` over real HTTP (docs/api.md "Rebase"): a patchset rebased server-side onto the target
// line's head with the land's merge code becomes a new, selected patchset (its revision read back
// by pulling it), approvals follow the stale-approval rule, a conflict is a 409 naming the paths
// with nothing written, an up-to-date patchset a 409 of its own; the rebase-aware interdiff marks
// what the target line brought (`from_rebase`); kill -9 inside the commit leaves all or nothing.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { pull, push } from '../lib/client/transfer.js';
import { api, cli, expectError, ok, onTty, register, repoFiles, spawnServer, startTestServer, tempDir, type TestServer } from './helpers.js';

type Json = Record<string, any>;
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const lines = (n: number, edit: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => edit[i + 1] ?? `line ${i + 1}`).join('\n') + '\n';
const USER = 'X-Cairn-User';
const LINE = 'dev';

/**
 * A tree pushed as a snapshot of line `dev` (an initialized `main` moves only through a land):
 * moving the line without a parent, else beside it unless `move`.
 */
async function snapshot(url: string, repo: number, tree: Record<string, string>, opts: { parent?: string; move?: boolean } = {}): Promise<string> {
  const dir = path.join(tempDir(), 'tree');
  for (const [p, v] of Object.entries(tree)) {
    await fsp.mkdir(path.dirname(path.join(dir, p)), { recursive: true });
    await fsp.writeFile(path.join(dir, p), v);
  }
  return (await push({ server: url, repo, line: LINE, dir, moveLine: opts.move ?? opts.parent === undefined, progress: false, ...(opts.parent ? { parent: opts.parent } : {}) })).snapshot_id;
}

async function read(url: string, repo: number, snapshotId: string, names: string[]): Promise<Record<string, string>> {
  const out = path.join(tempDir(), 'pulled');
  await pull({ server: url, repo, snapshot: snapshotId, out, progress: false });
  const got: Record<string, string> = {};
  for (const p of names) got[p] = await fsp.readFile(path.join(out, p), 'utf8').catch(() => '<absent>');
  return got;
}

describe(':rebase — a patchset rebased onto the target head by the server', function () {
  this.timeout(120_000);
  let s: TestServer;
  let repo: number;
  let change: string;
  let ps1: Json;
  let base: string;
  let head1: string;
  const as = (who: string | null): Record<string, string> => (who ? { [USER]: who } : {});
  const post = (p: string, json: unknown, who: string | null = 'ann') => api(s.url, 'POST', R(repo, p), { json, headers: as(who) });
  const get = (p: string) => ok(api(s.url, 'GET', R(repo, p)));
  const events = async () => (await get('/events?limit=1000')).events as Json[];
  /** Everything a refusal must leave alone: the repository's files (once the background index merges are done) and what the change reads. */
  const state = async () => ({
    files: await (await (await s.ready).opened(repo)).store.settle().then(() => repoFiles(path.join(s.dataDir, 'repositories', String(repo)))),
    change: await get(`/changes/${change}`),
    patchsets: await get(`/changes/${change}/patchsets`),
  });

  before(async () => {
    s = await startTestServer(path.join(tempDir(), 'data'), { identity: { header: USER } });
    repo = await register(s.url, 'rebase');
    base = await snapshot(s.url, repo, { 'a.txt': lines(10), 'b.txt': 'b\n', 'c.txt': 'c\n' });
    const rev1 = await snapshot(s.url, repo, { 'a.txt': lines(10, { 2: 'two' }), 'b.txt': 'b\n', 'c.txt': 'c\n' }, { parent: base });
    const t = (await ok(post('/tasks', { title: 'T', intent: 'i' }))).task;
    change = (await ok(post('/changes', { task_id: t.task_id, title: 'C', base_line: LINE }))).change.change_id;
    ps1 = (await ok(post(`/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev1, summary: 'edit line two', author_mode: 'human_only', author: 'ann', rebased_from: { patchset_id: 'x', onto_snapshot_id: base, by: 'mallory' } }))).patchset;
    // A caller cannot write the server's record through POST …/patchsets.
    expect(ps1).to.not.have.property('rebased_from');
    // bob approves ps-1; then main moves on another file.
    await ok(post(`/changes/${change}/reviews`, { patchset_id: ps1.patchset_id, reviewer: 'bob', action: 'approve' }, 'bob'));
    head1 = await snapshot(s.url, repo, { 'a.txt': lines(10), 'b.txt': 'B on main\n', 'c.txt': 'c\n' }, { parent: base, move: true });
  });
  after(async () => { await s.stop(); });

  it('builds a new patchset on the head: the revision merged onto it, selected, recorded, with its events; a trivial rebase keeps the approval', async () => {
    const before = (await events()).length;
    const res = await ok(post(`/changes/${change}:rebase`, {}));
    const ps2 = res.patchset;
    expect(ps2).to.include({ patchset_number: 2, base_snapshot_id: head1, summary: 'edit line two', author: 'ann' });
    expect(ps2.rebased_from).to.deep.equal({ patchset_id: ps1.patchset_id, onto_snapshot_id: head1, by: 'ann' });
    expect(ps2.changed_files.map((f: Json) => f.path)).to.deep.equal(['a.txt']);
    expect(res.change).to.include({ current_patchset_id: ps2.patchset_id, selected_patchset_id: ps2.patchset_id });
    expect(await read(s.url, repo, ps2.revision_snapshot_id, ['a.txt', 'b.txt', 'c.txt'])).to.deep.equal({ 'a.txt': lines(10, { 2: 'two' }), 'b.txt': 'B on main\n', 'c.txt': 'c\n' });
    const fresh = (await events()).slice(before).map((e) => `${e.type} ${e.data?.patchset_id ?? ''}`);
    expect(fresh).to.include(`patchset.created ${ps2.patchset_id}`);
    expect(fresh).to.include(`patchset.selected ${ps2.patchset_id}`);
    // The same paths changed to the same content: bob's approval carries (dismiss_stale_approvals).
    const ready = await get(`/read/changes/${change}/readiness`);
    expect(ready.approvals.map((a: Json) => `${a.reviewer} ${a.state}`)).to.deep.equal(['bob carried']);
  });

  it('an up-to-date patchset: 409 ALREADY_UP_TO_DATE, nothing written', async () => {
    const before = await state();
    const res = await post(`/changes/${change}:rebase`, {});
    expect(res.status, res.text).to.equal(409);
    expect(res.json.code).to.equal('ALREADY_UP_TO_DATE');
    expect(res.json.error).to.match(/already based on the head of dev/);
    expect(await state()).to.deep.equal(before);
  });

  it('a rebase onto a head that edits the same file elsewhere merges it, and the approval is dismissed as the rule says', async () => {
    const cur = (await get(`/changes/${change}`)).change;
    const ps2 = (await get(`/patchsets/${cur.selected_patchset_id}`)).patchset;
    const head2 = await snapshot(s.url, repo, { 'a.txt': lines(10, { 9: 'NINE' }), 'b.txt': 'B on main\n', 'c.txt': 'c\n' }, { parent: head1, move: true });
    const ps3 = (await ok(post(`/changes/${change}:rebase`, { patchset_id: ps2.patchset_id }, null))).patchset;
    expect(ps3.rebased_from).to.deep.equal({ patchset_id: ps2.patchset_id, onto_snapshot_id: head2, by: null });
    expect((await read(s.url, repo, ps3.revision_snapshot_id, ['a.txt']))['a.txt']).to.equal(lines(10, { 2: 'two', 9: 'NINE' }));
    const ready = await get(`/read/changes/${change}/readiness`);
    expect(ready.approvals.map((a: Json) => `${a.reviewer} ${a.state}`)).to.deep.equal(['bob dismissed']);
  });

  it('a conflict: 409 REBASE_CONFLICT naming each conflicting path, nothing written', async () => {
    const cur = (await get(`/changes/${change}`)).change;
    await snapshot(s.url, repo, { 'a.txt': lines(10, { 2: 'TWO on main', 9: 'NINE' }), 'b.txt': 'B on main\n' }, { parent: (await get(`/patchsets/${cur.selected_patchset_id}`)).patchset.base_snapshot_id, move: true });
    const before = await state();
    const res = await post(`/changes/${change}:rebase`, {});
    expect(res.status, res.text).to.equal(409);
    expect(res.json).to.include({ code: 'REBASE_CONFLICT', conflicts_count: 1 });
    expect(res.json.conflicts).to.deep.equal([{ path: 'a.txt', kind: 'content' }]);
    expect(res.json.error).to.match(/conflicting path\(s\): a\.txt/);
    expect(await state()).to.deep.equal(before);
  });

  it('the line moving while the merge runs: 409 REBASE_RACED, nothing written (the move forced between the merge and the commit)', async () => {
    const cur = (await get(`/changes/${change}`)).change;
    const head = (await get(`/lines/${LINE}`)).head_snapshot_id;
    // The conflicting head of the test before: move the line to a head that merges cleanly first.
    const clean = await snapshot(s.url, repo, { 'a.txt': lines(10, { 9: 'NINE' }), 'b.txt': 'B on main\n', 'c.txt': 'c2\n' }, { parent: head, move: true });
    const a = await (await s.ready).opened(repo);
    const prepare = a.workflow.preparePatchset;
    let moved = false;
    a.workflow.preparePatchset = async (line) => {
      // After the merge was computed onto `clean`, before its commit: another head.
      if (!moved) {
        moved = true;
        await snapshot(s.url, repo, { 'a.txt': lines(10, { 9: 'NINE' }), 'b.txt': 'B on main\n', 'c.txt': 'c3\n' }, { parent: clean, move: true });
      }
      return prepare(line);
    };
    try {
      const before = await state();
      const res = await post(`/changes/${change}:rebase`, {});
      expect(res.status, res.text).to.equal(409);
      expect(res.json).to.include({ code: 'REBASE_RACED', patchset_id: cur.selected_patchset_id, head_snapshot_id: clean });
      expect(res.json.error).to.match(/line dev moved while .* was being rebased; rebase again/);
      const after = await state();
      expect(after.change).to.deep.equal(before.change);
      expect(after.patchsets).to.deep.equal(before.patchsets);
    } finally {
      a.workflow.preparePatchset = prepare;
    }
    // Asked again, it rebases onto the new head.
    expect((await ok(post(`/changes/${change}:rebase`, {}))).patchset.rebased_from.onto_snapshot_id).to.not.equal(clean);
  });

  it('hostile input: an unknown change 404, an unknown or foreign patchset, a bad body; nothing written', async () => {
    const before = await state();
    expectError(await post('/changes/change-99:rebase', {}), 404, 'unknown change');
    expectError(await post(`/changes/${change}:rebase`, { patchset_id: `${change}.ps-99` }), 404, 'unknown patchset');
    expectError(await post(`/changes/${change}:rebase`, { patchset_id: 'change-77.ps-1' }), 404, 'a patchset of no change');
    expectError(await post(`/changes/${change}:rebase`, { patchset_id: 'nonsense' }), 404, 'not a patchset id');
    expectError(await post(`/changes/${change}:rebase`, []), 422, 'an array');
    expectError(await post(`/changes/${change}:rebase`, { patchset_id: 5 }), 422, 'a number');
    expectError(await post(`/changes/${change}:rebase`, { onto: 'main' }), 422, 'an unknown field');
    const raw = await api(s.url, 'POST', R(repo, `/changes/${change}:rebase`), { body: '{"patchset_id":', headers: { 'content-type': 'application/json' } });
    expect(raw.status, raw.text).to.be.within(400, 422);
    expect(await state()).to.deep.equal(before);
  });

  it('an abandoned change: 400, nothing written', async () => {
    const t = (await ok(post('/tasks', { title: 'T2', intent: 'i' }))).task;
    const other = (await ok(post('/changes', { task_id: t.task_id, title: 'gone', base_line: LINE }))).change.change_id;
    await ok(post(`/changes/${other}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: ps1.revision_snapshot_id, summary: 's', author_mode: 'human_only' }));
    await ok(post(`/changes/${other}:close`, { status: 'abandoned' }));
    const before = await state();
    expectError(await post(`/changes/${other}:rebase`, {}), 400, 'abandoned');
    expectError(await post(`/changes/${change}:rebase`, { patchset_id: `${other}.ps-1` }), 400, 'a patchset of another change');
    expect(await state()).to.deep.equal(before);
  });
});

describe('rebase-aware interdiff: what the target line brought is marked from_rebase', function () {
  this.timeout(120_000);
  let s: TestServer;
  let repo: number;
  let change: string;
  const post = (p: string, json: unknown) => api(s.url, 'POST', R(repo, p), { json });

  before(async () => {
    s = await startTestServer();
    repo = await register(s.url, 'interdiff');
    const base = await snapshot(s.url, repo, { 'a.txt': lines(20), 'b.txt': 'b\n', 'm.txt': lines(20) });
    const rev1 = await snapshot(s.url, repo, { 'a.txt': lines(20, { 2: 'two' }), 'b.txt': 'b\n', 'm.txt': lines(20) }, { parent: base });
    const t = (await ok(post('/tasks', { title: 'T', intent: 'i' }))).task;
    change = (await ok(post('/changes', { task_id: t.task_id, title: 'C', base_line: LINE }))).change.change_id;
    await ok(post(`/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev1, summary: 's', author_mode: 'human_only' }));
    // main: b.txt rewritten, a.txt line 18 edited, m.txt line 17 edited; new.txt added.
    const head = await snapshot(s.url, repo, { 'a.txt': lines(20, { 18: 'EIGHTEEN' }), 'b.txt': 'B\n', 'm.txt': lines(20, { 17: 'seventeen' }), 'new.txt': 'new\n' }, { parent: base, move: true });
    // The author rebases (as git would) and amends: line 2 again, and line 16 of m.txt, near main's edit of line 17.
    const rev2 = await snapshot(s.url, repo, { 'a.txt': lines(20, { 2: 'TWO', 18: 'EIGHTEEN' }), 'b.txt': 'B\n', 'm.txt': lines(20, { 16: 'sixteen', 17: 'seventeen' }), 'new.txt': 'new\n' }, { parent: head });
    await ok(post(`/changes/${change}/patchsets`, { base_snapshot_id: head, revision_snapshot_id: rev2, summary: 's2', author_mode: 'human_only' }));
  });
  after(async () => { await s.stop(); });

  it('ps-2 against ps-1: files and hunks of the base → base change are marked, the author\'s own are not', async () => {
    const d = await ok(api(s.url, 'GET', R(repo, `/read/patchsets/${change}.ps-2/diff?against=${change}.ps-1`)));
    const by: Record<string, Json> = Object.fromEntries(d.files.map((f: Json) => [f.path, f]));
    expect(Object.keys(by).sort()).to.deep.equal(['a.txt', 'b.txt', 'm.txt', 'new.txt']);
    expect(by['b.txt'].from_rebase).to.equal(true);
    expect(by['new.txt'].from_rebase).to.equal(true);
    expect(by['a.txt'].from_rebase).to.equal(false);
    expect(by['a.txt'].hunks.map((h: Json) => [h.lines.filter((l: string) => l[0] === '+').join(), h.from_rebase])).to.deep.equal([['+TWO', false], ['+EIGHTEEN', true]]);
    // The author's edit next to main's: one hunk mixing both, not marked.
    expect(by['m.txt'].from_rebase).to.equal(false);
    expect(by['m.txt'].hunks.map((h: Json) => h.from_rebase)).to.deep.equal([false]);
    expect(d.rebase).to.include({ files: 2, hunks: 3 });
    // Against the base (no comparison), or two patchsets on one base: nothing is marked.
    const plain = await ok(api(s.url, 'GET', R(repo, `/read/patchsets/${change}.ps-2/diff`)));
    expect(plain.rebase).to.equal(null);
    expect(plain.files.every((f: Json) => f.from_rebase === false && f.hunks.every((h: Json) => !('from_rebase' in h)))).to.equal(true);
  });
});

describe(':rebase — kill -9 inside its commit', function () {
  this.timeout(120_000);
  for (const point of ['rebase:commit', 'rebase:commit>commit:after-adopt', 'rebase:commit>commit:after-log', 'rebase:commit>commit:after-state']) {
    it(`killed at ${point}: the store reopens with none of it or all of it`, async () => {
      const data = path.join(tempDir(), 'data');
      const first = await spawnServer(data);
      const repo = await register(first.url, 'crash');
      const base = await snapshot(first.url, repo, { 'a.txt': lines(5), 'b.txt': 'b\n' });
      const rev = await snapshot(first.url, repo, { 'a.txt': lines(5, { 2: 'two' }), 'b.txt': 'b\n' }, { parent: base });
      const post = (url: string, p: string, json: unknown) => api(url, 'POST', R(repo, p), { json });
      const t = (await ok(post(first.url, '/tasks', { title: 'T', intent: 'i' }))).task;
      const change = (await ok(post(first.url, '/changes', { task_id: t.task_id, title: 'C', base_line: LINE }))).change.change_id;
      await ok(post(first.url, `/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' }));
      // main merges a.txt with an edit of line 4 and a changed b.txt: the rebase writes a merged blob and trees.
      const head = await snapshot(first.url, repo, { 'a.txt': lines(5, { 4: 'FOUR' }), 'b.txt': 'B\n' }, { parent: base, move: true });
      first.proc.kill('SIGTERM');
      await first.exited;

      const doomed = await spawnServer(data, [], true, { CAIRN_TEST_CRASH_AT: point });
      const res = await post(doomed.url, `/changes/${change}:rebase`, {}).catch(() => null);
      expect(res).to.equal(null);
      expect(await doomed.exited).to.equal(null);

      const restarted = await spawnServer(data);
      try {
        const pss = (await ok(api(restarted.url, 'GET', R(repo, `/changes/${change}/patchsets`)))).patchsets;
        const c = (await ok(api(restarted.url, 'GET', R(repo, `/changes/${change}`)))).change;
        if (point.endsWith('after-state')) {
          expect(pss).to.have.length(2);
          expect(c.selected_patchset_id).to.equal(pss[1].patchset_id);
          expect(pss[1].base_snapshot_id).to.equal(head);
          expect((await read(restarted.url, repo, pss[1].revision_snapshot_id, ['a.txt']))['a.txt']).to.equal(lines(5, { 2: 'two', 4: 'FOUR' }));
        } else {
          expect(pss).to.have.length(1);
          expect(c.selected_patchset_id).to.equal(pss[0].patchset_id);
          // And it rebases after the restart.
          expect((await ok(post(restarted.url, `/changes/${change}:rebase`, {}))).patchset.patchset_number).to.equal(2);
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

describe('cairn change rebase', function () {
  this.timeout(120_000);
  let s: TestServer;
  let repo: number;
  before(async () => {
    s = await startTestServer();
    repo = await register(s.url, 'rebase-cli');
  });
  after(async () => { await s.stop(); });

  it('rebases (readable and --json), says when it is up to date, lists conflicts (exit 6), and explains itself in --help', async () => {
    const at = ['--server', s.url, '--repo', String(repo)];
    const post = (p: string, json: unknown) => ok(api(s.url, 'POST', R(repo, p), { json }));
    const base = await snapshot(s.url, repo, { 'a.txt': lines(6), 'b.txt': 'b\n' });
    const rev = await snapshot(s.url, repo, { 'a.txt': lines(6, { 1: 'one' }), 'b.txt': 'b\n' }, { parent: base });
    const t = (await post('/tasks', { title: 'T', intent: 'i' })).task;
    const change = (await post('/changes', { task_id: t.task_id, title: 'C', base_line: LINE })).change.change_id;
    await post(`/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' });
    const head = await snapshot(s.url, repo, { 'a.txt': lines(6), 'b.txt': 'B\n' }, { parent: base, move: true });

    // Readable on a terminal (script(1)), JSON otherwise.
    const done = await onTty(['change', 'rebase', ...at, change]);
    expect(done.status, done.stdout).to.equal(0);
    expect(done.stdout).to.include(`rebased ${change}.ps-1 onto the head of dev (${head.slice(0, 12)}) as ${change}.ps-2, now selected: 1 file(s) changed`);
    const again = await onTty(['change', 'rebase', ...at, change]);
    expect(again.status, again.stdout).to.equal(0);
    expect(again.stdout).to.match(/ps-2 is already based on the head of dev/);
    const againJson = await cli(['change', 'rebase', ...at, change]);
    expect(againJson.code).to.equal(0);
    expect(JSON.parse(againJson.stdout)).to.include({ code: 'ALREADY_UP_TO_DATE' });

    const head2 = await snapshot(s.url, repo, { 'a.txt': lines(6, { 6: 'six' }), 'b.txt': 'B\n' }, { parent: head, move: true });
    const json = await cli(['change', 'rebase', ...at, '--json', change, 'ps-2']);
    expect(json.code, json.stderr).to.equal(0);
    const out = JSON.parse(json.stdout);
    expect(out.patchset).to.include({ patchset_id: `${change}.ps-3`, base_snapshot_id: head2 });
    expect(out.change.selected_patchset_id).to.equal(`${change}.ps-3`);

    await snapshot(s.url, repo, { 'a.txt': lines(6, { 1: 'ONE', 6: 'six' }), 'b.txt': 'B\n' }, { parent: head2, move: true });
    const refused = await onTty(['change', 'rebase', ...at, change]);
    expect(refused.status).to.equal(6);
    expect(refused.stdout).to.include('conflict (content): a.txt').and.include('nothing was written');
    const refusedJson = await cli(['change', 'rebase', ...at, '--json', change]);
    expect(refusedJson.code).to.equal(6);
    expect(JSON.parse(refusedJson.stdout)).to.include({ code: 'REBASE_CONFLICT', conflicts_count: 1 });

    const missing = await cli(['change', 'rebase', ...at, 'change-9']);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include('change change-9 does not exist');
    const usage = await cli(['change', 'rebase', ...at]);
    expect(usage.code).to.equal(2);
    const help = await cli(['change', '--help']);
    expect(help.code).to.equal(0);
    expect(help.stdout).to.include('cairn change rebase CHANGE [PS]').and.include('rebase builds a new patchset on the server');
  });
});
