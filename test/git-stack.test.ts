// Stacks with the real git client (docs/git.md "Stacks"): a push of a series of commits makes one
// change per commit, each based on the one below; GET change lists the stack; a change above an
// unlanded one is blocked_by_change_below; amending the middle commit and pushing again updates
// the middle and the top only; the changes land in order and main holds all of them; the land
// queue takes a stack from its top and lands it in order; a series over the limit is refused and
// writes nothing; a push of a series killed at its commit leaves all of it or none of it.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { importGit } from '../lib/client/git-import.js';
import { NO_PROGRESS } from '../lib/client/progress.js';
import { api, cli, CLI, cliJson, ok, register, spawnServer, startTestServer, tempDir, type ChildServer, type TestServer } from './helpers.js';
import { commit, git, gitClient, hasGit, runClient, servedClone } from './git-fixture.js';
import { stackText } from '../lib/cli/stack-command.js';
import { RUNTIME, result } from './land-queue-fixture.js';

type Json = Record<string, any>;
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const changeIdOf = (seed: string) => `I${createHash('sha1').update(seed).digest('hex')}`;

async function commitFile(dir: string, file: string, text: string, message: string, amend = false): Promise<string> {
  await fsp.writeFile(path.join(dir, file), text);
  expect((await gitClient(['-C', dir, 'add', '-A'])).code).to.equal(0);
  const c = await gitClient(['-C', dir, 'commit', '-q', ...(amend ? ['--amend'] : []), '-m', message]);
  expect(c.code, c.stderr).to.equal(0);
  return (await gitClient(['-C', dir, 'rev-parse', 'HEAD'])).stdout.trim();
}

/** Three commits on top of the clone's main, each with its Change-Id; their ids, bottom first. */
async function series(dir: string, seed: string, n = 3): Promise<string[]> {
  const out: string[] = [];
  for (let i = 1; i <= n; i++) out.push(await commitFile(dir, `s${i}.txt`, `${i}\n`, `Step ${i}\n\nChange-Id: ${changeIdOf(`${seed}-${i}`)}\n`));
  return out;
}

(hasGit ? describe : describe.skip)('stacks: a series pushed for review', function () {
  this.timeout(180_000);
  let s: TestServer;
  before(async () => {
    s = await startTestServer(undefined, { queue: { depth: 4, retries: 0, batch: 1, stall_s: 3600 } });
  });
  after(() => s?.stop());

  const get = (repo: number, p: string) => ok(api(s.url, 'GET', R(repo, p)));
  const post = (repo: number, p: string, json: unknown) => api(s.url, 'POST', R(repo, p), { json });
  /** Attestation and an approval (what the queue needs); with `ci`, the patchset's own CI too (what a direct land needs). */
  async function ready(repo: number, change: string, ci: boolean): Promise<void> {
    const ps = (await get(repo, `/changes/${change}`)).change.selected_patchset_id;
    await ok(api(s.url, 'PUT', R(repo, `/patchsets/${ps}/attestation`), { json: { verification_state: 'pass' } }), 'attest');
    await ok(post(repo, `/changes/${change}/reviews`, { patchset_id: ps, reviewer: 'alice', action: 'approve' }), 'approve');
    if (!ci) return;
    const run = await ok(post(repo, `/patchsets/${ps}:runCi`, {}), 'runCi');
    const claim = await ok(post(repo, `/worker-jobs/${run.job.worker_job_index}:claim`, { accepted_runtime_contracts: [RUNTIME] }));
    await ok(post(repo, `/worker-jobs/${run.job.worker_job_index}:complete`, { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { job_kind: 7, result: result('pass') } }));
    await ok(post(repo, `/patchsets/${ps}:evaluatePolicy`, {}));
  }

  it('a series of 3 is 3 chained changes; amending the middle updates the middle and the top; they land in order and main holds all', async () => {
    const { repo, lineUrl, dir } = await servedClone(s.url, 'stack-three');
    const [c1, c2, c3] = await series(dir, 'three');
    const pushed = await gitClient(['-C', dir, 'push', lineUrl, 'HEAD:refs/for/main']);
    expect(pushed.code, pushed.stderr).to.equal(0);
    // One block per commit, bottom first.
    const order = ['Step 1', 'Step 2', 'Step 3'].map((t) => pushed.stderr.indexOf(`task-${t.slice(-1)}.change-${t.slice(-1)} ${t} [NEW]`));
    expect(order.every((i) => i > 0), pushed.stderr).to.equal(true);
    expect(order).to.deep.equal([...order].sort((a, b) => a - b));
    expect(pushed.stderr).to.include('A stack of 3 changes');
    const changes = (await get(repo, '/changes?limit=10')).changes as Json[];
    expect(changes.map((c) => c.title).sort()).to.deep.equal(['Step 1', 'Step 2', 'Step 3']);
    const ps = async (change: string, n = 1) => (await get(repo, `/patchsets/${change}.ps-${n}`)).patchset;
    expect((await ps('change-2')).base_snapshot_id).to.equal((await ps('change-1')).revision_snapshot_id);
    expect((await ps('change-3')).base_snapshot_id).to.equal((await ps('change-2')).revision_snapshot_id);
    for (const [id, c] of [['change-1', c1], ['change-2', c2], ['change-3', c3]]) expect((await get(repo, `/git/commits/${c}`)).git_commit.change_id).to.equal(id);

    // The stack, from the middle: bottom first, this change marked.
    const stack = (await get(repo, '/changes/change-2')).change.stack as Json[];
    expect(stack.map((e) => [e.change_id, e.below, e.this, e.outdated, e.status])).to.deep.equal([
      ['change-1', null, false, false, 'active'],
      ['change-2', 'change-1', true, false, 'active'],
      ['change-3', 'change-2', false, false, 'active'],
    ]);
    expect(stack[1]).to.include({ title: 'Step 2', change_ref: 'task-2.change-2', selected_patchset_id: 'change-2.ps-1', based_on_patchset_id: 'change-1.ps-1' });
    // Lists do not carry it (it is derived per change).
    expect(changes[0]).to.not.have.property('stack');
    // cairn stack: a named change, or the change of the checkout's HEAD (the top).
    const named = await cliJson(['stack', 'change-2', '--server', s.url, '--repo', String(repo), '--json']);
    expect(named.stack.map((e: Json) => e.change_id)).to.deep.equal(['change-1', 'change-2', 'change-3']);
    const fromHead = await runClient(process.execPath, [CLI, 'stack', '--server', s.url, '--repo', String(repo), '--json'], dir);
    expect(fromHead.code, fromHead.stderr).to.equal(0);
    expect(JSON.parse(fromHead.stdout).change_id).to.equal('change-3');
    expect(stackText((await get(repo, '/changes/change-2')).change).split('\n').slice(0, 3).map((l) => l.slice(0, 12))).to.deep.equal(['   change-3 ', '*  change-2 ', '   change-1 ']);
    const help = await cli(['stack', '--help']);
    expect(help.code).to.equal(0);
    expect(help.stdout).to.include('Usage:\n  cairn stack [CHANGE]');

    // Readiness: the change above an unlanded change is blocked by it, first.
    const r2 = await get(repo, '/read/changes/change-2/readiness');
    expect(r2).to.include({ can_land: false, blocked_by: 'blocked_by_change_below' });
    expect(r2.reason).to.include('change-1').and.include('Step 1');
    expect(r2.requirements[0]).to.include({ kind: 'blocked_by_change_below', rule: 'stack', satisfied: false });
    // No merge check onto the line without the change below: it would say nothing of the land.
    expect(r2.merge).to.equal(null);

    // Amend the middle commit and push it alone: the top is now outdated.
    expect((await gitClient(['-C', dir, 'checkout', '-q', c2])).code).to.equal(0);
    const c2b = await commitFile(dir, 's2.txt', '2 amended\n', `Step 2\n\nChange-Id: ${changeIdOf('three-2')}\n`, true);
    const alone = await gitClient(['-C', dir, 'push', lineUrl, 'HEAD:refs/for/main']);
    expect(alone.code, alone.stderr).to.equal(0);
    expect(alone.stderr).to.include('Updated change (change-2.ps-2)');
    expect(((await get(repo, '/changes/change-1')).change.stack as Json[]).find((e) => e.change_id === 'change-3')).to.include({ outdated: true, based_on_patchset_id: 'change-2.ps-1' });
    // The whole series again (the top rebased onto the amended middle): the top gets a new
    // patchset; the bottom, unchanged, none.
    expect((await gitClient(['-C', dir, 'cherry-pick', c3])).code).to.equal(0);
    const again = await gitClient(['-C', dir, 'push', lineUrl, 'HEAD:refs/for/main']);
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stderr).to.include('Updated change (change-3.ps-2)');
    expect(again.stderr).to.not.include('change-1');
    expect((await get(repo, '/changes/change-1')).change.patchset_count).to.equal(1);
    expect((await get(repo, '/changes/change-2')).change.patchset_count).to.equal(2);
    expect((await get(repo, '/changes/change-3')).change).to.include({ patchset_count: 2, selected_patchset_id: 'change-3.ps-2' });
    expect((await ps('change-3', 2)).base_snapshot_id).to.equal((await ps('change-2', 2)).revision_snapshot_id);
    expect(((await get(repo, '/changes/change-3')).change.stack as Json[]).map((e) => [e.change_id, e.outdated])).to.deep.equal([['change-1', false], ['change-2', false], ['change-3', false]]);
    void c2b;

    // Land: the top first is refused (recorded), then bottom, middle, top in order.
    for (const c of ['change-1', 'change-2', 'change-3']) await ready(repo, c, true);
    const early = await post(repo, '/changes/change-3:submit', { mode: 'merge' });
    expect(early.status, early.text).to.equal(409);
    expect(early.text).to.include('blocked_by_change_below').and.include('change-2');
    for (const c of ['change-1', 'change-2', 'change-3']) {
      const land = await ok(post(repo, `/changes/${c}:submit`, { mode: 'merge' }), `land ${c}`);
      expect(land.land.status, c).to.equal('landed');
    }
    expect((await gitClient(['-C', dir, 'fetch', '-q', lineUrl, 'main'])).code).to.equal(0);
    for (const [file, text] of [['s1.txt', '1\n'], ['s2.txt', '2 amended\n'], ['s3.txt', '3\n']]) {
      expect((await gitClient(['-C', dir, 'show', `FETCH_HEAD:${file}`])).stdout).to.equal(text);
    }
    expect((await get(repo, '/changes/change-3')).change.stack).to.deep.equal([]);
  });

  it('a change below that is abandoned blocks the one above (rebase it); the stack lists it and ends there', async () => {
    const { repo, lineUrl, dir } = await servedClone(s.url, 'stack-abandoned');
    await series(dir, 'abandoned', 2);
    expect((await gitClient(['-C', dir, 'push', lineUrl, 'HEAD:refs/for/main'])).code).to.equal(0);
    await ok(post(repo, '/changes/change-1:close', { status: 'abandoned' }), 'abandon');
    const r = await get(repo, '/read/changes/change-2/readiness');
    expect(r).to.include({ can_land: false, blocked_by: 'blocked_by_change_below' });
    expect(r.reason).to.include('change-1').and.include('abandoned').and.include('rebase');
    expect(((await get(repo, '/changes/change-2')).change.stack as Json[]).map((e) => [e.change_id, e.status])).to.deep.equal([['change-1', 'abandoned'], ['change-2', 'active']]);
    // The queue refuses it too (the change below cannot join), writing nothing.
    await ready(repo, 'change-2', false);
    const queued = await post(repo, '/land-queue', { change_ref: 'change-2', mode: 'merge' });
    expect(queued.status, queued.text).to.equal(409);
    expect(queued.json.error).to.include('blocked_by_change_below');
    expect((await get(repo, '/land-queue?target_line=main')).entries).to.deep.equal([]);
  });

  it('a series over the limit is refused, naming the limit, and writes nothing', async () => {
    const { repo, lineUrl, dir } = await servedClone(s.url, 'stack-limit');
    const before = ((await get(repo, '/events?limit=1000')).events as Json[]).length;
    await series(dir, 'limit', 3);
    process.env.CAIRN_GIT_PUSH_MAX_SERIES = '2';
    try {
      const pushed = await gitClient(['-C', dir, 'push', lineUrl, 'HEAD:refs/for/main']);
      expect(pushed.code).to.not.equal(0);
      expect(pushed.stderr).to.include('the push brings more than 2 commits cairn does not know');
    } finally {
      delete process.env.CAIRN_GIT_PUSH_MAX_SERIES;
    }
    expect((await get(repo, '/changes?limit=10')).changes).to.deep.equal([]);
    expect(((await get(repo, '/events?limit=1000')).events as Json[]).length).to.equal(before);
    // Within the limit, the same push works.
    const pushed = await gitClient(['-C', dir, 'push', lineUrl, 'HEAD:refs/for/main']);
    expect(pushed.code, pushed.stderr).to.equal(0);
    expect((await get(repo, '/changes?limit=10')).changes).to.have.length(3);
  });

  it('a merge below the tip of a series is refused; %change= with a series is refused', async () => {
    const { repo, lineUrl, dir } = await servedClone(s.url, 'stack-merge');
    const base = (await gitClient(['-C', dir, 'rev-parse', 'HEAD'])).stdout.trim();
    expect((await gitClient(['-C', dir, 'checkout', '-q', '-b', 'side'])).code).to.equal(0);
    await commitFile(dir, 'side.txt', 'side\n', 'Side');
    expect((await gitClient(['-C', dir, 'checkout', '-q', 'main'])).code).to.equal(0);
    await commitFile(dir, 'm.txt', 'm\n', 'Main');
    expect((await gitClient(['-C', dir, 'merge', '-q', '--no-ff', '-m', 'Merge side', 'side'])).code).to.equal(0);
    await commitFile(dir, 'top.txt', 'top\n', 'Top');
    const merged = await gitClient(['-C', dir, 'push', lineUrl, 'HEAD:refs/for/main']);
    expect(merged.code).to.not.equal(0);
    expect(merged.stderr).to.include('is a merge below the tip of the series: only the pushed tip may be a merge');
    expect((await gitClient(['-C', dir, 'reset', '-q', '--hard', base])).code).to.equal(0);
    await series(dir, 'pct', 2);
    const pct = await gitClient(['-C', dir, 'push', lineUrl, 'HEAD:refs/for/main%change=change-1']);
    expect(pct.code).to.not.equal(0);
    expect(pct.stderr).to.include('%change= names one change, and this push brings 2 new commits');
    expect((await get(repo, '/changes?limit=10')).changes).to.deep.equal([]);
  });

  it('the land queue: enqueueing the top takes the changes below along, bottom first, and lands them in order (CI on each prefix)', async () => {
    const { repo, lineUrl, dir } = await servedClone(s.url, 'stack-queue');
    await series(dir, 'queue');
    expect((await gitClient(['-C', dir, 'push', lineUrl, 'HEAD:refs/for/main'])).code).to.equal(0);
    // A change below that cannot join (no attestation yet): nothing is queued, and it is named.
    await ready(repo, 'change-2', false);
    await ready(repo, 'change-3', false);
    const refused = await post(repo, '/land-queue', { change_ref: 'change-3', mode: 'merge' });
    expect(refused.status, refused.text).to.equal(409);
    expect(refused.json.error).to.include('change-1');
    expect((await get(repo, '/land-queue?target_line=main')).entries).to.deep.equal([]);
    await ready(repo, 'change-1', false);
    const queued = await post(repo, '/land-queue', { change_ref: 'change-3', mode: 'merge' });
    expect(queued.status, queued.text).to.equal(201);
    expect(queued.json.entry.change_id).to.equal('change-3');
    const a = await (await s.ready).opened(repo);
    await a.queue.settle();
    const entries = (await get(repo, '/land-queue?target_line=main')).entries as Json[];
    expect(entries.map((e) => [e.change_id, e.position])).to.deep.equal([['change-1', 1], ['change-2', 2], ['change-3', 3]]);
    // Speculation on each prefix: S1 = head + 1, S2 = S1 + 2, S3 = S2 + 3, one CI job each.
    expect(entries[1].speculation.base_snapshot_id).to.equal(entries[0].speculation.snapshot_id);
    expect(entries[2].speculation.base_snapshot_id).to.equal(entries[1].speculation.snapshot_id);
    const jobs = entries.map((e) => e.speculation.worker_job_indexes[0]);
    expect(new Set(jobs).size).to.equal(3);
    for (const j of [...jobs].reverse()) {
      const claim = await ok(post(repo, `/worker-jobs/${j}:claim`, { accepted_runtime_contracts: [RUNTIME] }));
      await ok(post(repo, `/worker-jobs/${j}:complete`, { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { job_kind: 11, result: result('pass') } }));
      await a.queue.settle();
    }
    for (const c of ['change-1', 'change-2', 'change-3']) expect((await get(repo, `/changes/${c}`)).change.status, c).to.equal('landed');
    expect((await get(repo, '/lines/main')).head_snapshot_id ?? (await get(repo, '/lines/main')).line.head_snapshot_id).to.equal(entries[2].speculation.snapshot_id);
  });
});

(hasGit ? describe : describe.skip)('stacks: a series push killed at its commit', function () {
  this.timeout(180_000);
  const template = path.join(tempDir(), 'data');
  const spawned: ChildServer[] = [];
  let repo: number;
  before(async () => {
    const src = path.join(tempDir('cairn-git-'), 'src');
    await fsp.mkdir(src, { recursive: true });
    git(src, ['init', '-q', '-b', 'main']);
    await fsp.writeFile(path.join(src, 'README.md'), '# demo\n');
    git(src, ['add', '-A']);
    commit(src, 'first\n');
    const t = await spawnServer(template);
    spawned.push(t);
    repo = await register(t.url, 'crash');
    await importGit({ server: t.url, repo, source: src, line: 'main', progress: NO_PROGRESS });
    t.proc.kill('SIGTERM');
    await t.exited;
  });
  after(async () => {
    for (const x of spawned) if (x.proc.exitCode === null && x.proc.signalCode === null) { x.proc.kill('SIGKILL'); await x.exited; }
  });

  for (const point of ['git-push:commit', 'git-push:series-staged', 'git-push:commit>commit:after-log', 'git-push:commit>commit:after-state']) {
    it(`killed at ${point}: after a restart all three changes are there, or none`, async () => {
      const data = path.join(tempDir(), 'data');
      await fsp.cp(template, data, { recursive: true });
      const dir = path.join(tempDir('cairn-push-'), 'work');
      const plain = await spawnServer(data);
      spawned.push(plain);
      expect((await gitClient(['clone', '-q', `${plain.url}${R(repo, '/git/main.git')}`, dir])).code).to.equal(0);
      plain.proc.kill('SIGTERM');
      await plain.exited;
      const commits = await series(dir, point);
      const doomed = await spawnServer(data, [], true, { CAIRN_TEST_CRASH_AT: point });
      spawned.push(doomed);
      const pushing = gitClient(['-C', dir, 'push', `${doomed.url}${R(repo, '/git/main.git')}`, 'HEAD:refs/for/main']);
      const code = await Promise.race([doomed.exited, sleep(30_000).then(() => 'alive' as const)]);
      if (code === 'alive') expect.fail(`the server was not killed at ${point}: ${(await pushing).stderr}`);
      expect(code, 'killed by SIGKILL').to.equal(null);
      expect((await pushing).code).to.not.equal(0);

      const restarted = await spawnServer(data);
      spawned.push(restarted);
      const url = `${restarted.url}${R(repo, '/git/main.git')}`;
      const listed = async () => ((await ok(api(restarted.url, 'GET', R(repo, '/changes?limit=10')))).changes as Json[]).map((c) => c.change_id).sort();
      const found = await Promise.all(commits.map(async (c) => (await api(restarted.url, 'GET', R(repo, `/git/commits/${c}`))).status));
      if (point.endsWith('after-state')) {
        expect(await listed()).to.deep.equal(['change-1', 'change-2', 'change-3']);
        expect(found).to.deep.equal([200, 200, 200]);
      } else {
        expect(await listed()).to.deep.equal([]);
        expect(found).to.deep.equal([404, 404, 404]);
        const again = await gitClient(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
        expect(again.code, again.stderr).to.equal(0);
        expect(await listed()).to.deep.equal(['change-1', 'change-2', 'change-3']);
      }
      restarted.proc.kill('SIGTERM');
      await restarted.exited;
      const check = await cli(['fsck', '--data', data]);
      expect(check.code, check.stdout + check.stderr).to.equal(0);
    });
  }
});
