// Lands over real HTTP (spec: "Land", `:submit`, `lands/{id}`, task-land; docs/api.md "Lands").
// The refusal paths run against the real gates (no evidence recorded, so every land is
// `blocked_by_policy`). The success paths run over the same HTTP routes against an authority
// whose LandDesk was constructed with an injected gate function (the constructor's DI
// parameter) that passes, to test modes and merges apart from the evidence; the real gates are
// tested end to end in test/governance.test.ts. The gate rule itself is tested on stubbed
// evidence.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import type { Authority } from '../lib/authority/authority.js';
import { checkGates, type LandGates } from '../lib/authority/workflow/gates.js';
import { LandDesk } from '../lib/authority/workflow/lands.js';
import { LandIndex } from '../lib/domain/workflow/land-index.js';
import { api, register, startTestServer, tempDir, type ApiResponse, type TestServer } from './helpers.js';

type Json = Record<string, any>;
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
type Files = Record<string, string | { link: string } | { exec: string }>;

async function writeTree(dir: string, files: Files): Promise<void> {
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

async function ok(res: Promise<ApiResponse> | ApiResponse, what = ''): Promise<Json> {
  const r = await res;
  expect(r.status, `${what}: ${r.text}`).to.equal(200);
  return r.json;
}

const PASS: LandGates = () => ({ refusal: null, policy_decision_id: null });

class Repo {
  dir = path.join(tempDir(), 'tree');
  constructor(readonly s: TestServer, readonly repo: number) {}
  async snap(files: Files, line: string, moveLine: boolean, parent?: string): Promise<string> {
    await writeTree(this.dir, files);
    return (await push({ server: this.s.url, repo: this.repo, line, dir: this.dir, moveLine, progress: false, parent })).snapshot_id;
  }
  async authority(): Promise<Authority> {
    return (await this.s.ready).opened(this.repo);
  }
  /** Replace the authority's LandDesk with one built on `gates` (the DI seam). */
  async injectGates(gates: LandGates): Promise<void> {
    const a = await this.authority();
    (a as unknown as { lands: LandDesk }).lands = new LandDesk(a.store, a.workflow, gates);
  }
  /** A task with one change on `line` and one patchset base → revision. */
  async change(line: string, base: string, revision: string): Promise<{ task: string; change: string; ref: string; ps: string }> {
    const t = (await ok(api(this.s.url, 'POST', R(this.repo, '/tasks'), { json: { title: 'T', intent: 'i' } }))).task;
    const c = (await ok(api(this.s.url, 'POST', R(this.repo, '/changes'), { json: { task_id: t.task_id, title: 'C', base_line: line } }))).change;
    const p = (await ok(api(this.s.url, 'POST', R(this.repo, `/changes/${c.change_id}/patchsets`), { json: { base_snapshot_id: base, revision_snapshot_id: revision, summary: 's', author_mode: 'human_only' } }))).patchset;
    return { task: t.task_id, change: c.change_id, ref: c.change_ref, ps: p.patchset_id };
  }
  submit(change: string, body: Json): Promise<ApiResponse> {
    return api(this.s.url, 'POST', R(this.repo, `/changes/${change}:submit`), { json: body });
  }
  async head(line: string): Promise<string | null> {
    return (await ok(api(this.s.url, 'GET', R(this.repo, `/lines/${line}`)))).line?.head_snapshot_id ?? (await ok(api(this.s.url, 'GET', R(this.repo, `/lines/${line}`)))).head_snapshot_id;
  }
  /** The files of a snapshot, read from the store: path → "kind:content". */
  async files(snapshotId: string): Promise<Record<string, string>> {
    const a = await this.authority();
    const out: Record<string, string> = {};
    const walk = async (tree: string, prefix: string) => {
      for (const e of await a.store.readTree(tree)) {
        if (e.kind === 'directory') await walk(e.id, `${prefix}${e.name}/`);
        else out[prefix + e.name] = `${e.kind}:${(await a.store.readObject('blob', e.id)).toString()}`;
      }
    };
    await walk(a.store.snapshot(snapshotId)!.root_tree_id, '');
    return out;
  }
}

function refused(res: ApiResponse, kind: string): Json {
  expect(res.status, res.text).to.equal(409);
  expect(res.json.error).to.be.a('string').and.not.equal('');
  expect(res.json.failure_kind).to.equal(kind);
  expect(res.json.land.failure_kind).to.equal(kind);
  return res.json.land;
}

const BASE: Files = { 'a.txt': '1\n2\n3\n4\n5\n6\n', 'b.txt': 'b\n', 'tool.sh': { exec: 'echo\n' }, 'bin.dat': 'x\u0000y', 'd/x.txt': 'x\n' };

describe('lands: gate rule on stubbed projections', () => {
  const ev = (policy: string, blocking: number, ci: string) => ({ policy: { decision: policy, checks: [] }, review: { blocking }, ci: { overall: ci } });
  it('checks policy, then review, then CI, on the projection fields', () => {
    expect(checkGates(ev('pass', 0, 'pass'))).to.equal(null);
    expect(checkGates(ev('pending', 2, 'fail'))!.kind).to.equal('blocked_by_policy');
    expect(checkGates(ev('fail', 0, 'pass'))!.kind).to.equal('blocked_by_policy');
    expect(checkGates(ev('pass', 1, 'fail'))!.kind).to.equal('blocked_by_review');
    for (const ci of ['none', 'pending', 'fail', 'error']) expect(checkGates(ev('pass', 0, ci))!.kind, ci).to.equal('blocked_by_ci');
  });
});

describe('lands over HTTP: refusals with the real gates', function () {
  this.timeout(60_000);
  let s: TestServer;
  let r: Repo;
  let base: string;
  let rev: string;
  before(async () => {
    s = await startTestServer();
    r = new Repo(s, await register(s.url, 'lands-refusals'));
    base = await r.snap(BASE, 'main', true);
    rev = await r.snap({ ...BASE, 'b.txt': 'B\n' }, 'main', false, base);
  });
  after(() => s.stop());

  it('policy pending (no evaluation yet) → blocked_by_policy, recorded as a rejected land, nothing moves', async () => {
    const c = await r.change('main', base, rev);
    const land = refused(await r.submit(c.change, { mode: 'ff-only' }), 'blocked_by_policy');
    expect(land).to.include({ status: 'rejected', mode: 'ff-only', target_line: 'main', patchset_id: c.ps, selected_patchset_id: c.ps, landed_snapshot_id: null, target_head_before: base });
    const got = (await ok(api(s.url, 'GET', R(r.repo, `/lands/${land.land_id}`)))).land;
    expect(got).to.deep.equal(land);
    expect(await r.head('main')).to.equal(base);
    expect((await ok(api(s.url, 'GET', R(r.repo, `/changes/${c.change}`)))).change.status).to.equal('active');
  });

  it('a patchset other than the selected one → patchset_not_selected (checked before the gates), recorded', async () => {
    const c = await r.change('main', base, rev);
    const land = refused(await r.submit(c.change, { mode: 'merge', patchset_id: 'change-1.ps-1' }), 'patchset_not_selected');
    expect(land.status).to.equal('rejected');
    // a patchset that does not exist is an unknown entity: 404, nothing recorded
    expect((await r.submit(c.change, { mode: 'merge', patchset_id: `${c.change}.ps-9` })).status).to.equal(404);
  });

  it('bad input is 400/404 and records nothing', async () => {
    const c = await r.change('main', base, rev);
    const before = (await r.authority()).store.entitiesOf('land');
    const count = [...before].length;
    for (const body of [{ mode: 'rebase' }, {}, { mode: 'merge', expected_head_snapshot_id: 'nope' }, { mode: 'merge', target_line: '' }, { mode: 'merge', expected_head_snapshot_id: base, expected_target_line_head: rev }]) {
      const res = await r.submit(c.change, body);
      expect([400, 422], JSON.stringify(body) + res.text).to.include(res.status);
    }
    expect((await r.submit('change-99', { mode: 'merge' })).status).to.equal(404);
    expect((await r.submit(c.change, { mode: 'merge', target_line: 'nope' })).status).to.equal(404);
    expect((await api(s.url, 'GET', R(r.repo, '/lands/land-999'))).status).to.equal(404);
    expect([...(await r.authority()).store.entitiesOf('land')].length).to.equal(count);
  });

  it('task-land: contract, idempotency key bytes (not characters), task resolution', async () => {
    const c = await r.change('main', base, rev);
    const tl = (body: Json) => api(s.url, 'POST', R(r.repo, '/task-land'), { json: body });
    const good = { contract: 'task-land-atomic/v1', idempotency_key: 'k1', task_or_change_ref: c.task, mode: 'ff-only' };
    expect((await tl({ ...good, contract: 'task-land-atomic/v2' })).status).to.equal(400);
    expect((await tl({ ...good, idempotency_key: '€'.repeat(86) })).status).to.equal(400); // 86 chars, 258 bytes
    expect((await tl({ ...good, idempotency_key: '' })).status).to.equal(400);
    refused(await tl({ ...good, idempotency_key: '€'.repeat(85) }), 'blocked_by_policy'); // 255 bytes
    expect((await tl({ ...good, task_or_change_ref: 'task-999' })).status).to.equal(404);
    // a task with two landable changes must be named by change
    const c2 = (await ok(api(s.url, 'POST', R(r.repo, '/changes'), { json: { task_id: c.task, title: 'second', base_line: 'main' } }))).change;
    await ok(api(s.url, 'POST', R(r.repo, `/changes/${c2.change_id}/patchsets`), { json: { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' } }));
    const two = await tl({ ...good, idempotency_key: 'k2' });
    expect(two.status, two.text).to.equal(400);
    expect(two.json.landable_change_refs).to.have.length(2);
  });
});

describe('lands: id floors (serve --lease: after a failover new lands continue past what the old writer may have handed out)', function () {
  this.timeout(60_000);
  it('new lands take sequences past the `land` floor; a change\'s land history pages across the gap; a sequence in the gap is 404; a restart keeps it', async () => {
    const dataDir = path.join(tempDir(), 'data');
    let s = await startTestServer(dataDir);
    try {
      let r = new Repo(s, await register(s.url, 'land-floors'));
      const base = await r.snap(BASE, 'main', true);
      const rev = await r.snap({ ...BASE, 'b.txt': 'B\n' }, 'main', false, base);
      const c = await r.change('main', base, rev);
      const land = async () => refused(await r.submit(c.change, { mode: 'ff-only' }), 'blocked_by_policy');
      expect((await land()).land_id).to.equal('land-1');
      await (await s.ready).setIdFloors(new Map([[r.repo, { land: 7 }]]));
      const after = [await land(), await land()];
      expect(after.map((l) => [l.land_id, l.sequence])).to.deep.equal([['land-8', 8], ['land-9', 9]]);
      expect((await s.ready).idHighs(r.repo)).to.include({ land: 9 });
      const history = async (): Promise<string[]> => {
        const out: string[] = [];
        let cursor: string | null = null;
        do {
          const page = await ok(api(s.url, 'GET', R(r.repo, `/read/changes/${c.change}/lands?limit=1${cursor ? `&cursor=${cursor}` : ''}`)));
          out.push(...page.lands.map((l: Json) => l.land_id));
          cursor = page.next_cursor;
        } while (cursor !== null && out.length < 10);
        return out;
      };
      expect(await history()).to.deep.equal(['land-9', 'land-8', 'land-1']);
      for (const gap of ['land-2', 'land-7']) expect((await api(s.url, 'GET', R(r.repo, `/lands/${gap}`))).status, gap).to.equal(404);
      // A restart without the floors file: the land index (from the checkpoint, gap and all) still
      // knows land-9, so the next land is land-10.
      await s.stop();
      await fsp.rm(path.join(dataDir, 'id-floors.json'));
      s = await startTestServer(dataDir);
      r = new Repo(s, r.repo);
      expect(await history()).to.deep.equal(['land-9', 'land-8', 'land-1']);
      expect((await land()).land_id).to.equal('land-10');
      expect((await ok(api(s.url, 'GET', R(r.repo, '/lands/land-8')))).land.land_id).to.equal('land-8');
    } finally {
      await s.stop();
    }
  });

  it('the land index section (workflow.ckpt) keeps a gap: it decodes to the same lands and encodes to the same bytes', () => {
    const x = new LandIndex();
    x.add(1, 1);
    x.add(8, 2);
    x.add(9, 1);
    const y = LandIndex.decode(x.encode());
    expect([y.ofChange(1), y.ofChange(2), y.highest, y.size]).to.deep.equal([[1, 9], [8], 9, 3]);
    expect(y.has(5)).to.equal(false);
    expect(y.encode()).to.deep.equal(x.encode());
  });
});

describe('lands over HTTP: modes, failure kinds and replay (gates injected to pass)', function () {
  this.timeout(120_000);
  let s: TestServer;
  let r: Repo;
  let base: string;
  before(async () => {
    s = await startTestServer();
    r = new Repo(s, await register(s.url, 'lands'));
    await r.injectGates(PASS);
    base = await r.snap(BASE, 'main', true);
  });
  after(() => s.stop());

  it('ff-only moves the governed main to the revision; the change is landed; a second ff-only onto the moved head is stale_base', async () => {
    const rev = await r.snap({ ...BASE, 'b.txt': 'B\n' }, 'main', false, base);
    const c = await r.change('main', base, rev);
    const other = await r.change('main', base, await r.snap({ ...BASE, 'new.txt': 'n\n' }, 'main', false, base));
    const res = await ok(r.submit(c.change, { mode: 'ff-only', expected_head_snapshot_id: base }));
    expect(res.land).to.include({ status: 'landed', mode: 'ff-only', line_action: 'fast_forward', landed_snapshot_id: rev, target_head_before: base, failure_kind: null });
    expect(res.land.stale_patchset_ids).to.deep.equal([other.ps]);
    expect(res.change.status).to.equal('landed');
    expect(await r.head('main')).to.equal(rev);
    expect((await ok(api(s.url, 'GET', R(r.repo, `/lands/${res.land.land_id}`)))).land).to.deep.equal(res.land);
    expect((await ok(api(s.url, 'GET', R(r.repo, `/patchsets/${other.ps}`)))).patchset).to.include({ base_stale: true, base_stale_land_id: res.land.land_id });
    // the landed change does not land again (an invalid state transition, not recorded)
    expect((await r.submit(c.change, { mode: 'ff-only' })).status).to.equal(400);
    const stale = refused(await r.submit(other.change, { mode: 'ff-only' }), 'stale_base');
    expect(stale.status).to.equal('rejected');
    // a guard naming the old head → stale_base, either name
    refused(await r.submit(other.change, { mode: 'merge', expected_target_line_head: base }), 'stale_base');
    // direct move of main is still governed
    expect((await api(s.url, 'PUT', R(r.repo, '/lines/main'), { json: { head_snapshot_id: base } })).json.code).to.equal('GOVERNED_TARGET_LINE_REQUIRES_LAND');
  });

  it('merge: sides touching different files and different regions of one text file merge into a two-parent snapshot', async () => {
    const b = await r.snap(BASE, 'dev', true);
    const theirs = await r.snap({ ...BASE, 'a.txt': '1\n2\n3\n4\n5\nsix\n', 'd/new.txt': 'new\n', 'tool.sh': 'echo\n' }, 'dev', false, b);
    const c = await r.change('dev', b, theirs);
    const ours = await r.snap({ ...BASE, 'a.txt': 'one\n2\n3\n4\n5\n6\n', 'b.txt': 'ours\n' }, 'dev', true, b);
    const res = await ok(r.submit(c.change, { mode: 'merge' }));
    expect(res.land).to.include({ status: 'landed', line_action: 'merge', target_head_before: ours });
    const landed = res.land.landed_snapshot_id;
    expect(await r.head('dev')).to.equal(landed);
    const a = await r.authority();
    expect(a.store.snapshot(landed)!.parent_snapshot_ids).to.deep.equal([ours, theirs]);
    expect(await r.files(landed)).to.deep.equal({
      'a.txt': 'file:one\n2\n3\n4\n5\nsix\n', 'b.txt': 'file:ours\n', 'bin.dat': 'file:x\u0000y', 'd/new.txt': 'file:new\n', 'd/x.txt': 'file:x\n', 'tool.sh': 'file:echo\n',
    });
  });

  it('merge conflict: 409 `conflict` listing each path and kind; the line and the change stay', async () => {
    const b = await r.snap(BASE, 'c1', true);
    const theirs = await r.snap({ 'a.txt': '1\n2\n3\n4\n5\nT\n', 'b.txt': 'theirs\n', 'tool.sh': { exec: 'echo\n' }, 'bin.dat': 'x\u0000T', 'd': 'now a file\n', 'added.txt': 'T\n' }, 'c1', false, b);
    const c = await r.change('c1', b, theirs);
    const ours = await r.snap({ 'a.txt': '1\n2\n3\n4\n5\nO\n', 'tool.sh': { exec: 'echo\n' }, 'bin.dat': 'x\u0000O', 'd/x.txt': 'changed\n', 'added.txt': 'O\n' }, 'c1', true, b);
    const land = refused(await r.submit(c.change, { mode: 'merge' }), 'conflict');
    expect(land.status).to.equal('failed');
    expect(land.conflicts).to.deep.equal([
      { path: 'a.txt', kind: 'content' },
      { path: 'added.txt', kind: 'add/add' },
      { path: 'b.txt', kind: 'delete/modify' },
      { path: 'bin.dat', kind: 'content' },
      { path: 'd', kind: 'file/directory' },
    ]);
    expect(land.conflicts_count).to.equal(5);
    expect(await r.head('c1')).to.equal(ours);
    expect((await ok(api(s.url, 'GET', R(r.repo, `/changes/${c.change}`)))).change.status).to.equal('active');
  });

  it('direct: applies the patch onto the moved head as a single-parent snapshot; fails when the same file changed on both sides', async () => {
    const b = await r.snap(BASE, 'dr', true);
    const theirs = await r.snap({ ...BASE, 'b.txt': 'T\n' }, 'dr', false, b);
    const c = await r.change('dr', b, theirs);
    const ours = await r.snap({ ...BASE, 'a.txt': 'one\n2\n3\n4\n5\n6\n' }, 'dr', true, b);
    const res = await ok(r.submit(c.change, { mode: 'direct' }));
    expect(res.land).to.include({ status: 'landed', line_action: 'direct' });
    expect((await r.authority()).store.snapshot(res.land.landed_snapshot_id)!.parent_snapshot_ids).to.deep.equal([ours]);
    expect((await r.files(res.land.landed_snapshot_id))['b.txt']).to.equal('file:T\n');
    // same file, different regions: a merge would succeed, direct refuses
    const theirs2 = await r.snap({ ...BASE, 'a.txt': '1\n2\n3\n4\n5\nsix\n' }, 'dr', false, b);
    const c2 = await r.change('dr', b, theirs2);
    const land = refused(await r.submit(c2.change, { mode: 'direct' }), 'conflict');
    expect(land.conflicts).to.deep.equal([{ path: 'a.txt', kind: 'content' }]);
  });

  it('task-land: result shape; the same key and payload replays (also after a restart); the same key with another payload is 409', async () => {
    const b = await r.snap(BASE, 'tl', true);
    const rev = await r.snap({ ...BASE, 'b.txt': 'tl\n' }, 'tl', false, b);
    const c = await r.change('tl', b, rev);
    const body = { contract: 'task-land-atomic/v1', idempotency_key: 'land-key-1', task_or_change_ref: c.task, mode: 'ff-only' };
    const first = await ok(api(s.url, 'POST', R(r.repo, '/task-land'), { json: body }));
    expect(first).to.include({ contract: 'task-land-atomic/v1', replay: false, task_id: c.task, change_id: c.change, patchset_id: c.ps, target_line: 'tl', target_snapshot_id: b, landed_snapshot_id: rev });
    expect(first.change.status).to.equal('landed');
    expect(first.land.status).to.equal('landed');
    expect(first.task.task_id).to.equal(c.task);
    const again = await ok(api(s.url, 'POST', R(r.repo, '/task-land'), { json: body }));
    expect(again).to.deep.equal({ ...first, replay: true });
    const other = await api(s.url, 'POST', R(r.repo, '/task-land'), { json: { ...body, mode: 'merge' } });
    expect(other.status).to.equal(409);
    expect([...(await r.authority()).store.entitiesOf('land')].filter(([, l]) => (l as Json).change_id === c.change)).to.have.length(1);
    // restart: the idempotency record is a workflow.log upsert
    await s.stop();
    s = await startTestServer(s.dataDir);
    r = new Repo(s, r.repo);
    await r.injectGates(PASS);
    expect(await ok(api(s.url, 'POST', R(r.repo, '/task-land'), { json: body }))).to.deep.equal({ ...first, replay: true });
  });

  it('20 concurrent ff-only lands onto one line: exactly one moves it; the others fail with a recorded kind', async () => {
    const b = await r.snap(BASE, 'race', true);
    const changes = [];
    for (let i = 0; i < 20; i++) changes.push(await r.change('race', b, await r.snap({ ...BASE, [`f${i}.txt`]: `${i}\n` }, 'race', false, b)));
    const results = await Promise.all(changes.map((c) => r.submit(c.change, { mode: 'ff-only' })));
    const wins = results.filter((x) => x.status === 200);
    expect(wins).to.have.length(1);
    for (const x of results.filter((y) => y.status !== 200)) {
      expect(x.status).to.equal(409);
      expect(['stale_base', 'target_update_failed']).to.include(x.json.failure_kind);
      expect((await ok(api(s.url, 'GET', R(r.repo, `/lands/${x.json.land.land_id}`)))).land.failure_kind).to.equal(x.json.failure_kind);
    }
    expect(await r.head('race')).to.equal(wins[0].json.land.landed_snapshot_id);
  });

  it('20 concurrent merge lands of disjoint changes: all land, each from a distinct head, in a chain', async () => {
    const b = await r.snap(BASE, 'race2', true);
    const changes = [];
    for (let i = 0; i < 20; i++) changes.push(await r.change('race2', b, await r.snap({ ...BASE, [`g${i}.txt`]: `${i}\n` }, 'race2', false, b)));
    const results = await Promise.all(changes.map((c) => r.submit(c.change, { mode: 'merge' })));
    for (const x of results) expect(x.status, x.text).to.equal(200);
    const wins = results.map((x) => x.json.land);
    const befores = wins.map((w: Json) => w.target_head_before);
    expect(new Set(befores).size).to.equal(wins.length);
    // the chain: starts at b, each success's head_before is another's landed snapshot, ends at the line head
    const byBefore = new Map(wins.map((w: Json) => [w.target_head_before, w.landed_snapshot_id]));
    let at: string = b;
    for (let i = 0; i < wins.length; i++) at = byBefore.get(at) as string;
    expect(await r.head('race2')).to.equal(at);
  });
});

/** The revisions merged into `line` (the second parents along its first-parent chain), newest first. */
async function mergedRevisions(r: Repo, head: string, stopAt: string): Promise<string[]> {
  const a = await r.authority();
  const out: string[] = [];
  for (let at = head; at !== stopAt;) {
    const parents = a.store.snapshot(at)!.parent_snapshot_ids;
    if (parents.length === 2) out.push(parents[1]);
    at = parents[0];
  }
  return out;
}

describe('lands over HTTP: a line that moves under a land (gates injected to pass)', function () {
  this.timeout(120_000);
  let s: TestServer;
  let r: Repo;
  type Planner = { plan: (...args: unknown[]) => Promise<{ head: string | null }> };
  let desk: Planner;
  let realPlan: Planner['plan'];
  before(async () => {
    s = await startTestServer();
    r = new Repo(s, await register(s.url, 'lands-moving'));
    await r.injectGates(PASS);
    desk = (await r.authority()).lands as unknown as Planner;
    realPlan = desk.plan;
  });
  afterEach(() => {
    desk.plan = realPlan;
  });
  after(() => s.stop());

  /**
   * Move `line` (over HTTP, as another client would) after the land's plan, the first `times`
   * times it plans, each time to a new snapshot made by `next`: the line moves between the
   * land's plan and its commit.
   */
  function moveAfterPlan(line: string, times: number, next: (i: number, head: string) => Promise<string>): { moves: string[] } {
    const state = { moves: [] as string[] };
    desk.plan = async function (this: Planner, ...args: unknown[]) {
      const plan = await realPlan.apply(this, args);
      if (state.moves.length < times) {
        const head = plan.head!;
        const to = await next(state.moves.length, head);
        await ok(api(s.url, 'PUT', R(r.repo, `/lines/${line}`), { json: { head_snapshot_id: to, expected_head_snapshot_id: head } }), 'move the line');
        state.moves.push(to);
      }
      return plan;
    };
    return state;
  }

  it('8 concurrent merge lands of disjoint changes over HTTP: all land; the line\'s history holds all 8', async () => {
    const b = await r.snap(BASE, 'eight', true);
    const changes = [];
    for (let i = 0; i < 8; i++) changes.push(await r.change('eight', b, await r.snap({ ...BASE, [`e${i}.txt`]: `${i}\n` }, 'eight', false, b)));
    const results = await Promise.all(changes.map((c) => r.submit(c.change, { mode: 'merge' })));
    for (const x of results) expect(x.status, x.text).to.equal(200);
    const head = (await r.head('eight'))!;
    const revisions = await mergedRevisions(r, head, b);
    const a = await r.authority();
    const wanted = changes.map((c) => a.workflow.patchset(c.ps).revision_snapshot_id);
    expect([...revisions].sort()).to.deep.equal([...wanted].sort());
    const files = await r.files(head);
    for (let i = 0; i < 8; i++) expect(files[`e${i}.txt`]).to.equal(`file:${i}\n`);
  });

  it('a line moved between the plan and the commit: an unpinned merge land plans again onto the new head and lands (one record, attempts 2)', async () => {
    const b = await r.snap(BASE, 'mv', true);
    const rev = await r.snap({ ...BASE, 'mine.txt': 'mine\n' }, 'mv', false, b);
    const c = await r.change('mv', b, rev);
    const moved = moveAfterPlan('mv', 1, (_i, head) => r.snap({ ...BASE, 'theirs.txt': 'theirs\n' }, 'mv', false, head));
    const res = await ok(r.submit(c.change, { mode: 'merge' }));
    expect(res.land).to.include({ status: 'landed', line_action: 'merge', attempts: 2, target_head_before: moved.moves[0] });
    const head = (await r.head('mv'))!;
    expect(head).to.equal(res.land.landed_snapshot_id);
    expect((await r.authority()).store.snapshot(head)!.parent_snapshot_ids).to.deep.equal([moved.moves[0], rev]);
    expect(await r.files(head)).to.include({ 'mine.txt': 'file:mine\n', 'theirs.txt': 'file:theirs\n' });
    // the abandoned attempt wrote nothing: the change has exactly one land
    const lands = (await ok(api(s.url, 'GET', R(r.repo, `/read/changes/${c.change}/lands`)))).lands;
    expect(lands.map((l: Json) => l.status)).to.deep.equal(['landed']);
  });

  it('direct mode plans again too (pushrebase onto the new head)', async () => {
    const b = await r.snap(BASE, 'mvd', true);
    const rev = await r.snap({ ...BASE, 'mine.txt': 'mine\n' }, 'mvd', false, b);
    const c = await r.change('mvd', b, rev);
    const moved = moveAfterPlan('mvd', 1, (_i, head) => r.snap({ ...BASE, 'theirs.txt': 'theirs\n' }, 'mvd', false, head));
    const res = await ok(r.submit(c.change, { mode: 'direct' }));
    expect(res.land).to.include({ status: 'landed', line_action: 'direct', attempts: 2, target_head_before: moved.moves[0] });
    expect((await r.authority()).store.snapshot(res.land.landed_snapshot_id)!.parent_snapshot_ids).to.deep.equal([moved.moves[0]]);
  });

  it('a pinned expected_head_snapshot_id that moved during the land is refused 409 target_update_failed, and not retried', async () => {
    const b = await r.snap(BASE, 'pin', true);
    const c = await r.change('pin', b, await r.snap({ ...BASE, 'mine.txt': 'mine\n' }, 'pin', false, b));
    const moved = moveAfterPlan('pin', 5, (i, head) => r.snap({ ...BASE, [`t${i}.txt`]: 't\n' }, 'pin', false, head));
    const land = refused(await r.submit(c.change, { mode: 'merge', expected_head_snapshot_id: b }), 'target_update_failed');
    expect(land).to.include({ status: 'failed', attempts: 1, target_head_before: b, expected_head_snapshot_id: b });
    expect(land.failure_message).to.match(/pinned/);
    expect(moved.moves).to.have.length(1);
    expect(await r.head('pin')).to.equal(moved.moves[0]);
  });

  it('a line that moves under every attempt: refused target_update_failed after 5 attempts, one record', async () => {
    const b = await r.snap(BASE, 'busy', true);
    const c = await r.change('busy', b, await r.snap({ ...BASE, 'mine.txt': 'mine\n' }, 'busy', false, b));
    const moved = moveAfterPlan('busy', 100, (i, head) => r.snap({ ...BASE, [`t${i}.txt`]: 't\n' }, 'busy', false, head));
    const land = refused(await r.submit(c.change, { mode: 'merge' }), 'target_update_failed');
    expect(land).to.include({ status: 'failed', attempts: 5, target_head_before: moved.moves[3] });
    expect(land.failure_message).to.match(/planned 5 times/);
    expect(moved.moves).to.have.length(5);
    const lands = (await ok(api(s.url, 'GET', R(r.repo, `/read/changes/${c.change}/lands`)))).lands;
    expect(lands).to.have.length(1);
    expect((await ok(api(s.url, 'GET', R(r.repo, `/changes/${c.change}`)))).change.status).to.equal('active');
  });

  it('a retry that meets a real conflict on the new head is refused `conflict` (attempts 2)', async () => {
    const b = await r.snap(BASE, 'mvc', true);
    const c = await r.change('mvc', b, await r.snap({ ...BASE, 'b.txt': 'mine\n' }, 'mvc', false, b));
    moveAfterPlan('mvc', 1, (_i, head) => r.snap({ ...BASE, 'b.txt': 'theirs\n' }, 'mvc', false, head));
    const land = refused(await r.submit(c.change, { mode: 'merge' }), 'conflict');
    expect(land).to.include({ status: 'failed', attempts: 2 });
    expect(land.conflicts).to.deep.equal([{ path: 'b.txt', kind: 'content' }]);
  });

  it('ff-only cannot rebase: a head moved during the land is judged again and refused stale_base (attempts 2)', async () => {
    const b = await r.snap(BASE, 'mvf', true);
    const c = await r.change('mvf', b, await r.snap({ ...BASE, 'mine.txt': 'mine\n' }, 'mvf', false, b));
    moveAfterPlan('mvf', 1, (_i, head) => r.snap({ ...BASE, 'theirs.txt': 't\n' }, 'mvf', false, head));
    const land = refused(await r.submit(c.change, { mode: 'ff-only' }), 'stale_base');
    expect(land).to.include({ status: 'rejected', attempts: 2 });
  });
});

describe('task-start over HTTP (task-start-atomic/v1)', function () {
  this.timeout(60_000);
  let s: TestServer;
  let repo: number;
  const start = (body: Json) => api(s.url, 'POST', R(repo, '/task-start'), { json: body });
  const payload = (body: string) => ({ title: 'Sprint', artifact_path: 'docs/s.md', artifact_heading: 'Sprint', artifact_body: body });
  before(async () => {
    s = await startTestServer();
    repo = await register(s.url, 'task-start');
    const dir = path.join(tempDir(), 't');
    await writeTree(dir, BASE);
    await push({ server: s.url, repo, line: 'main', dir, moveLine: true, progress: false });
  });
  after(() => s.stop());

  const counts = async () => ({
    plans: (await ok(api(s.url, 'GET', R(repo, '/sprints')))).plans?.length,
    tasks: (await ok(api(s.url, 'GET', R(repo, '/tasks')))).tasks.length,
    changes: (await ok(api(s.url, 'GET', R(repo, '/changes')))).changes.length,
  });

  it('create: plan, revision, task linked to the item and change in one commit; replay; other payload 409', async () => {
    const body = {
      contract: 'task-start-atomic/v1', idempotency_key: 's1', plan_item_ref: 'build',
      plan: { action: 'create', payload: payload('# Sprint\n- [ ] build it {#build}\n') },
      task: { title: 'Build', intent: 'build it' }, change: { title: 'first', base_line: 'main' },
    };
    const res = await ok(start(body));
    expect(res).to.include({ contract: 'task-start-atomic/v1', replay: false, plan_action: 'create', plan_item_ref: 'build' });
    expect(res.task).to.include({ task_id: res.task_id, plan_id: res.plan_id, origin_plan_revision_id: res.plan_revision_id, plan_item_ref: 'build' });
    expect(res.change).to.include({ change_id: res.change_id, task_id: res.task_id, base_line: 'main', status: 'draft' });
    expect((await ok(api(s.url, 'GET', R(repo, `/tasks/${res.task_id}`)))).task.origin_plan_revision_id).to.equal(res.plan_revision_id);
    const before = await counts();
    expect(await ok(start(body))).to.deep.equal({ ...res, replay: true });
    // a retry that spells unset optional fields as null (or reorders keys) is the same payload
    const withNulls = { change: { base_line: 'main', title: 'first' }, task: body.task, plan: { ...body.plan, expected_head_revision_id: null }, plan_item_ref: 'build', idempotency_key: 's1', contract: 'task-start-atomic/v1' };
    expect(await ok(start(withNulls))).to.deep.equal({ ...res, replay: true });
    expect((await start({ ...body, task: { title: 'Other', intent: 'x' } })).status).to.equal(409);
    expect(await counts()).to.deep.equal(before);
  });

  it('existing needs the head revision (409 otherwise); revise needs the expected head; derived fields are rejected; a failure creates nothing', async () => {
    const created = await ok(start({
      contract: 'task-start-atomic/v1', idempotency_key: 's2', plan_item_ref: 'a',
      plan: { action: 'create', payload: payload('# Sprint\n- [ ] a {#a}\n- [ ] b {#b}\n') },
      task: { title: 'A', intent: 'a' }, change: { title: 'a', base_line: 'main' },
    }));
    const planId = created.plan_id;
    const head1 = created.plan_revision_id;
    const base = { contract: 'task-start-atomic/v1', plan_item_ref: 'b', task: { title: 'B', intent: 'b' }, change: { title: 'b', base_line: 'main' } };
    const ex = await ok(start({ ...base, idempotency_key: 's3', plan: { action: 'existing', plan_id: planId, plan_revision_id: head1 } }));
    expect(ex.plan_revision_id).to.equal(head1);
    const rev = await ok(start({ ...base, idempotency_key: 's4', plan_item_ref: 'c', plan: { action: 'revise', plan_id: planId, expected_head_revision_id: head1, payload: payload('# Sprint\n- [ ] a {#a}\n- [ ] b {#b}\n- [ ] c {#c}\n') } }));
    expect(rev.plan_revision_id).to.not.equal(head1);
    const before = await counts();
    const stale = await start({ ...base, idempotency_key: 's5', plan: { action: 'existing', plan_id: planId, plan_revision_id: head1 } });
    expect(stale.status, stale.text).to.equal(409);
    const noGuard = await start({ ...base, idempotency_key: 's6', plan_item_ref: 'd', plan: { action: 'revise', plan_id: planId, payload: payload('# Sprint\n- [ ] d {#d}\n') } });
    expect(noGuard.status, noGuard.text).to.equal(400);
    for (const bad of [
      { ...base, idempotency_key: 's7', task: { ...base.task, plan_id: planId }, plan: { action: 'existing', plan_id: planId, plan_revision_id: rev.plan_revision_id } },
      { ...base, idempotency_key: 's8', change: { ...base.change, task_id: 'task-1' }, plan: { action: 'existing', plan_id: planId, plan_revision_id: rev.plan_revision_id } },
      { ...base, idempotency_key: 's9', task_id: 'task-9', plan: { action: 'existing', plan_id: planId, plan_revision_id: rev.plan_revision_id } },
      { ...base, idempotency_key: 'x'.repeat(257), plan: { action: 'existing', plan_id: planId, plan_revision_id: rev.plan_revision_id } },
      { ...base, idempotency_key: 's10', plan: { action: 'adopt' } },
    ]) expect((await start(bad)).status, JSON.stringify(bad).slice(0, 80)).to.equal(400);
    // a create whose change names a missing line creates no plan, task or change
    const missing = await start({ ...base, idempotency_key: 's11', plan_item_ref: 'z', change: { title: 'z', base_line: 'nope' }, plan: { action: 'create', payload: payload('# Sprint\n- [ ] z {#z}\n') } });
    expect(missing.status).to.equal(404);
    expect(await counts()).to.deep.equal(before);
  });

  it('revise without a guard takes the exact revision already in the plan (any parent); otherwise 400 and nothing changes', async () => {
    const base = { contract: 'task-start-atomic/v1', task: { title: 'T', intent: 'i' }, change: { title: 'c', base_line: 'main' } };
    const created = await ok(start({ ...base, idempotency_key: 'u1', plan_item_ref: 'a', plan: { action: 'create', payload: payload('# Sprint\n- [ ] a {#a}\n') } }));
    const planId = created.plan_id;
    const revisions = async () => (await ok(api(s.url, 'GET', R(repo, `/sprints/${planId}/revisions`)))).revisions.map((r: Json) => r.plan_revision_id);
    const two = payload('# Sprint\n- [ ] a {#a}\n- [ ] b {#b}\n');
    const r2 = await ok(start({ ...base, idempotency_key: 'u2', plan_item_ref: 'b', plan: { action: 'revise', plan_id: planId, expected_head_revision_id: created.plan_revision_id, payload: two } }));
    expect(r2.plan_action).to.equal('revise');
    // The same content again, no guard: the head is that revision; it is linked, nothing is appended.
    const same = await ok(start({ ...base, idempotency_key: 'u3', plan_item_ref: 'a', plan: { action: 'revise', plan_id: planId, payload: two } }));
    expect(same).to.include({ plan_action: 'revise (existing revision)', plan_revision_id: r2.plan_revision_id });
    expect(same.task).to.include({ origin_plan_revision_id: r2.plan_revision_id, plan_item_ref: 'a' });
    expect(await revisions()).to.deep.equal([r2.plan_revision_id, created.plan_revision_id]);
    // The head moves on; the same content without a guard still names that (now older) revision.
    const r3 = await ok(start({ ...base, idempotency_key: 'u4', plan_item_ref: 'c', plan: { action: 'revise', plan_id: planId, expected_head_revision_id: r2.plan_revision_id, payload: payload('# Sprint\n- [ ] c {#c}\n') } }));
    const older = await ok(start({ ...base, idempotency_key: 'u5', plan_item_ref: 'b', plan: { action: 'revise', plan_id: planId, payload: { ...two, title: undefined, status: 'active' } } }));
    expect(older).to.include({ plan_action: 'revise (existing revision)', plan_revision_id: r2.plan_revision_id });
    expect(older.revision.parent_revision_id).to.equal(created.plan_revision_id);
    expect(older.task.plan_drift).to.deep.equal({ plan_status: 'draft', head_revision_id: r3.plan_revision_id, plan_moved: true, item_in_head: false });
    expect((await ok(api(s.url, 'GET', R(repo, `/tasks/${older.task_id}`)))).task.plan_drift).to.deep.equal(older.task.plan_drift);
    expect(await revisions()).to.deep.equal([r3.plan_revision_id, r2.plan_revision_id, created.plan_revision_id]);
    // Refusals without a guard, each changing nothing (400): new content, or the exact content with another status.
    const before = { ...(await counts()), revisions: await revisions() };
    for (const [key, body] of [
      ['u6', { ...base, plan_item_ref: 'd', plan: { action: 'revise', plan_id: planId, payload: payload('# Sprint\n- [ ] d {#d}\n') } }],
      ['u7', { ...base, plan_item_ref: 'b', plan: { action: 'revise', plan_id: planId, payload: { ...two, status: 'archived' } } }],
      ['u8', { ...base, plan_item_ref: 'b', plan: { action: 'revise', plan_id: planId, expected_head_revision_id: null, payload: { ...two, summary: 'other' } } }],
    ] as [string, Json][]) {
      const res = await start({ ...body, idempotency_key: key });
      expect(res.status, `${key}: ${res.text}`).to.equal(400);
    }
    expect({ ...(await counts()), revisions: await revisions() }).to.deep.equal(before);
  });

  it('a top-level plan_id is derived by the server: 400, nothing created', async () => {
    const created = await ok(start({ contract: 'task-start-atomic/v1', idempotency_key: 'd1', plan_item_ref: 'a', plan: { action: 'create', payload: payload('# Sprint\n- [ ] a {#a}\n') }, task: { title: 'T', intent: 'i' }, change: { title: 'c', base_line: 'main' } }));
    const before = await counts();
    const res = await start({ contract: 'task-start-atomic/v1', idempotency_key: 'd2', plan_id: created.plan_id, plan_item_ref: 'a', plan: { action: 'existing', plan_id: created.plan_id, plan_revision_id: created.plan_revision_id }, task: { title: 'T', intent: 'i' }, change: { title: 'c', base_line: 'main' } });
    expect(res.status, res.text).to.equal(400);
    expect(res.json.error).to.match(/plan_id is derived/);
    expect(await counts()).to.deep.equal(before);
  });

  it('a malformed plan payload or a lone surrogate in a nested text is a 4xx, never a 500, and creates nothing', async () => {
    const before = await counts();
    const base = { contract: 'task-start-atomic/v1', plan_item_ref: 'q', task: { title: 't', intent: 'i' }, change: { title: 'c', base_line: 'main' } };
    const cases: [Json, number][] = [
      [{ ...base, idempotency_key: 'p1', plan: { action: 'create', payload: { title: 5, artifact_path: 'a.md', artifact_heading: 'A' } } }, 422],
      [{ ...base, idempotency_key: 'p2', plan: { action: 'create', payload: { title: 't', artifact_path: 'a.md', artifact_heading: 'A', items: 'x' } } }, 422],
      [{ ...base, idempotency_key: 'p3', plan: { action: 'create', payload: { title: 't', artifact_path: 'a.md', artifact_heading: 'A', items: [null] } } }, 422],
      [{ ...base, idempotency_key: 'p4', plan: { action: 'create', payload: { title: 't' } } }, 422],
      [{ ...base, idempotency_key: 'p5', task: { title: 'bad \ud800', intent: 'i' }, plan: { action: 'create', payload: payload('# Sprint\n- [ ] q {#q}\n') } }, 400],
    ];
    for (const [body, status] of cases) {
      const res = await start(body);
      expect(res.status, `${JSON.stringify(body).slice(0, 120)}: ${res.text}`).to.equal(status);
      expect(Object.keys(res.json)).to.deep.equal(['error']);
    }
    expect(await counts()).to.deep.equal(before);
  });
});

describe('lands: kill -9 at every step of a land commit', function () {
  this.timeout(120_000);
  for (const point of ['commit:after-adopt', 'commit:after-index', 'commit:after-log', 'commit:before-state', 'commit:after-state']) {
    it(`a merge land killed at ${point} leaves the old state or the whole new one`, async () => {
      let s = await startTestServer();
      const r = new Repo(s, await register(s.url, 'crash'));
      const b = await r.snap(BASE, 'dev', true);
      const theirs = await r.snap({ ...BASE, 'a.txt': '1\n2\n3\n4\n5\nsix\n' }, 'dev', false, b);
      const c = await r.change('dev', b, theirs);
      const other = await r.change('dev', b, await r.snap({ ...BASE, 'z.txt': 'z\n' }, 'dev', false, b));
      const ours = await r.snap({ ...BASE, 'a.txt': 'one\n2\n3\n4\n5\n6\n' }, 'dev', true, b);
      await s.stop();
      const { spawn } = await import('node:child_process');
      const child = spawn(process.execPath, [path.join(path.dirname(new URL(import.meta.url).pathname), 'land-crash-child.js'), path.join(s.dataDir, 'repositories', String(r.repo)), String(r.repo), c.change, 'merge'], {
        env: { ...process.env, CAIRN_TEST_CRASH_AT: point }, stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const signal = await new Promise<string | null>((res) => child.on('exit', (_code, sig) => res(sig)));
      expect(signal, stderr).to.equal('SIGKILL');
      s = await startTestServer(s.dataDir);
      const r2 = new Repo(s, r.repo);
      try {
        const head = await r2.head('dev');
        const change = (await ok(api(s.url, 'GET', R(r.repo, `/changes/${c.change}`)))).change;
        const otherPs = (await ok(api(s.url, 'GET', R(r.repo, `/patchsets/${other.ps}`)))).patchset;
        const land = await api(s.url, 'GET', R(r.repo, '/lands/land-1'));
        if (head === ours) {
          expect(change.status).to.equal('active');
          expect(land.status).to.equal(404);
          expect(otherPs.base_stale).to.equal(undefined);
        } else {
          expect(land.json.land).to.include({ status: 'landed', landed_snapshot_id: head });
          expect(change.status).to.equal('landed');
          expect(otherPs.base_stale).to.equal(true);
          expect((await r2.files(head!))['a.txt']).to.equal('file:one\n2\n3\n4\n5\nsix\n');
        }
        // either way a land now completes (or has completed) and the store is consistent
        if (head === ours) {
          await r2.injectGates(PASS);
          const res = await ok(r2.submit(c.change, { mode: 'merge' }));
          expect((await r2.files(res.land.landed_snapshot_id))['a.txt']).to.equal('file:one\n2\n3\n4\n5\nsix\n');
        }
      } finally {
        await s.stop();
      }
    });
  }
});

describe('lands: kill -9 while a land plans again onto a moved line', function () {
  this.timeout(120_000);
  // land:retry: after an attempt found the line moved (it wrote nothing), before the next plan.
  // Before the commit point is written the store opens to the old state; after it, to the new one.
  for (const [point, landed] of [['land:retry', false], ['land:retry>commit:after-log', false], ['land:retry>commit:after-state', true]] as const) {
    it(`killed at ${point}: the moved line and no land, or the whole land of the second attempt`, async () => {
      let s = await startTestServer();
      const r = new Repo(s, await register(s.url, 'crash-retry'));
      const b = await r.snap(BASE, 'dev', true);
      const theirs = await r.snap({ ...BASE, 'a.txt': '1\n2\n3\n4\n5\nsix\n' }, 'dev', false, b);
      const c = await r.change('dev', b, theirs);
      const moved = await r.snap({ ...BASE, 'moved.txt': 'm\n' }, 'dev', false, b);
      await s.stop();
      const { spawn } = await import('node:child_process');
      const child = spawn(process.execPath, [path.join(path.dirname(new URL(import.meta.url).pathname), 'land-crash-child.js'), path.join(s.dataDir, 'repositories', String(r.repo)), String(r.repo), c.change, 'merge', moved], {
        env: { ...process.env, CAIRN_TEST_CRASH_AT: point }, stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const signal = await new Promise<string | null>((res) => child.on('exit', (_code, sig) => res(sig)));
      expect(signal, stderr).to.equal('SIGKILL');
      s = await startTestServer(s.dataDir);
      const r2 = new Repo(s, r.repo);
      try {
        const head = await r2.head('dev');
        const change = (await ok(api(s.url, 'GET', R(r.repo, `/changes/${c.change}`)))).change;
        const lands = (await ok(api(s.url, 'GET', R(r.repo, `/read/changes/${c.change}/lands`)))).lands;
        expect(head === moved, `head ${head}`).to.equal(!landed);
        if (head === moved) {
          // the first attempt left nothing behind, and the second did not commit
          expect(change.status).to.equal('active');
          expect(lands).to.deep.equal([]);
          await r2.injectGates(PASS);
          const res = await ok(r2.submit(c.change, { mode: 'merge' }));
          expect(res.land).to.include({ attempts: 1, target_head_before: moved });
        } else {
          expect(lands).to.have.length(1);
          expect(lands[0]).to.include({ status: 'landed', attempts: 2, target_head_before: moved, landed_snapshot_id: head });
          expect(change.status).to.equal('landed');
          expect((await r2.authority()).store.snapshot(head!)!.parent_snapshot_ids).to.deep.equal([moved, theirs]);
        }
        expect(await r2.files((await r2.head('dev'))!)).to.include({ 'a.txt': 'file:1\n2\n3\n4\n5\nsix\n', 'moved.txt': 'file:m\n' });
      } finally {
        await s.stop();
      }
    });
  }
});

describe('lands: land and idempotency records travel with export and restore', function () {
  this.timeout(120_000);
  const AUTH = '/v1/native/repository-authorities';
  const FILE_MEDIA = 'application/vnd.svc.remote-authority-file.v1';
  it('a task-land replays on the restored repository (under its new index); the land record reads back', async () => {
    const one = await startTestServer();
    const two = await startTestServer();
    try {
      const r = new Repo(one, await register(one.url, 'src', '', 7));
      await r.injectGates(PASS);
      const b = await r.snap(BASE, 'dev', true);
      const rev = await r.snap({ ...BASE, 'b.txt': 'moved\n' }, 'dev', false, b);
      const c = await r.change('dev', b, rev);
      const body = { contract: 'task-land-atomic/v1', idempotency_key: 'exported', task_or_change_ref: c.change, mode: 'ff-only' };
      const first = await ok(api(one.url, 'POST', R(r.repo, '/task-land'), { json: body }));
      // A change no promotion published: no receipt, no landed_via.
      expect(first.history_promotion).to.equal(null);
      expect(first.change.landed_via).to.equal(null);
      const land = (await ok(api(one.url, 'GET', R(r.repo, `/lands/${first.land.land_id}`)))).land;
      expect((await api(one.url, 'POST', `${AUTH}/${r.repo}/retirement`)).status).to.equal(200);
      const manifest = (await ok(api(one.url, 'GET', `${AUTH}/${r.repo}/retirement`))).manifest;
      const start = await api(two.url, 'POST', '/v1/native/repository-restores', { json: { manifest, policy_flags: 7 } });
      expect(start.status, start.text).to.equal(201);
      await register(two.url, 'padding');
      for (const f of manifest.files) {
        const bytes = Buffer.from(await (await fetch(`${one.url}${AUTH}/${r.repo}/retirement/files/${encodeURIComponent(f.path)}`)).arrayBuffer());
        const up = await api(two.url, 'PUT', `/v1/native/repository-restores/${start.json.restore_token}/files/${encodeURIComponent(f.path)}`, { body: bytes, headers: { 'content-type': FILE_MEDIA } });
        expect(up.status, up.text).to.equal(200);
      }
      const restored = (await ok(api(two.url, 'POST', `/v1/native/repository-restores/${start.json.restore_token}/commit`))).repository_index;
      expect(restored).to.not.equal(r.repo);
      const reindex = (v: Json) => JSON.parse(JSON.stringify(v, (k, x) => (k === 'repository_index' ? restored : x)));
      expect((await ok(api(two.url, 'GET', R(restored, `/lands/${land.land_id}`)))).land).to.deep.equal(reindex(land));
      const replay = await ok(api(two.url, 'POST', R(restored, '/task-land'), { json: body }));
      expect(replay).to.deep.equal(reindex({ ...first, replay: true }));
      expect((await api(two.url, 'POST', R(restored, '/task-land'), { json: { ...body, mode: 'merge' } })).status).to.equal(409);
    } finally {
      await two.stop();
      await one.stop();
    }
  });
});
