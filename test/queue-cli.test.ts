// `cairn queue add|list|show|remove` against a real server (docs/land-queue.md): JSON when stdout
// is not a terminal, the readable table and detail on a pseudo-terminal (script(1)), refusals in
// the user's words with the fix, usage errors exit 2. CI is played by the test: it claims the
// queue's repo.ci job and fails it.
import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { api, CLI, cli, cliJson, ok, register, startTestServer, tempDir, type TestServer } from './helpers.js';

type Json = Record<string, any>;
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const RUNTIME = 'svc.runner.native-job.v3';

/** The command on a pseudo-terminal: stdout is a TTY, so the readable form is printed. */
function onTty(args: string[]): Promise<{ status: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn('script', ['-qefc', [process.execPath, CLI, ...args].map((a) => `'${a}'`).join(' '), '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stdout += d; });
    child.on('exit', (status) => resolve({ status, stdout: stdout.replace(/\r/g, '') }));
  });
}

describe('cairn queue', function () {
  this.timeout(120_000);
  let s: TestServer;
  let repo: number;
  let base: string;
  const dir = path.join(tempDir(), 'tree');
  const post = (rest: string, json: unknown) => api(s.url, 'POST', R(repo, rest), { json });
  const args = (...xs: string[]) => [...xs, '--server', s.url, '--repo', String(repo)];

  async function snap(files: Record<string, string>, moveLine: boolean, parent?: string): Promise<string> {
    await fsp.rm(dir, { recursive: true, force: true });
    await fsp.mkdir(dir, { recursive: true });
    for (const [p, v] of Object.entries(files)) await fsp.writeFile(path.join(dir, p), v);
    return (await push({ server: s.url, repo, line: 'main', dir, moveLine, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
  }

  /** An open change whose gates pass but for CI: an attestation that passes and an approval. */
  async function change(files: Record<string, string>, approve = true): Promise<{ id: string; ref: string; ps: string }> {
    const revision = await snap(files, false, base);
    const t = (await ok(post('/tasks', { title: 'T', intent: 'I' }))).task;
    const c = (await ok(post('/changes', { task_id: t.task_id, title: 'C', base_line: 'main' }))).change;
    const p = (await ok(post(`/changes/${c.change_id}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: revision, summary: 's', author_mode: 'human_with_ai_assist', author: 'carol' }))).patchset;
    await ok(api(s.url, 'PUT', R(repo, `/patchsets/${p.patchset_id}/attestation`), { json: { verification_state: 'pass' } }));
    if (approve) await ok(post(`/changes/${c.change_id}/reviews`, { patchset_id: p.patchset_id, reviewer: 'alice', action: 'approve' }));
    return { id: c.change_id, ref: c.change_ref, ps: p.patchset_id };
  }

  const settle = async () => (await (await s.ready).opened(repo)).queue.settle();

  before(async () => {
    s = await startTestServer(undefined, { queue: { depth: 4, retries: 0, batch: 1, stall_s: 3600 } });
    repo = await register(s.url, 'queue-cli');
    base = await snap({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, true);
  });
  after(() => s?.stop());

  it('add, list, show and remove; an ejected entry shows its evidence; refusals say what to do', async () => {
    const c1 = await change({ 'a.txt': 'A\n', 'b.txt': 'b\n' });
    const c2 = await change({ 'a.txt': 'a\n', 'b.txt': 'B\n' });

    // add: JSON when stdout is not a terminal; the entry as the route answers it
    const added = await cliJson(args('queue', 'add', c1.ref));
    expect(added.entry).to.include({ change_id: c1.id, patchset_id: c1.ps, target_line: 'main', mode: 'merge', position: 1, state: 'queued' });
    const e1 = added.entry.entry_id as string;
    const e2 = (await cliJson(args('queue', 'add', c2.id, '--mode', 'direct', '--line', 'main'))).entry;
    expect(e2).to.include({ mode: 'direct', position: 2 });
    await settle();

    // already queued: said in words, with the command that shows the entry
    const again = await cli(args('queue', 'add', c1.ref));
    expect(again.code).to.equal(1);
    expect(again.stdout).to.equal('');
    expect(again.stderr).to.include(`${c1.ref} is already in the land queue as ${e1}`).and.include(`cairn queue show ${e1}`).and.include('HTTP 409');

    // list: JSON, entries in order, each tested by its own job
    const list = await cliJson(args('queue', 'list'));
    expect(list).to.include({ target_line: null, count: 2 });
    expect(list.entries.map((e: Json) => [e.entry_id, e.position, e.state])).to.deep.equal([[e1, 1, 'testing'], [e2.entry_id, 2, 'testing']]);
    const job1 = list.entries[0].ci.worker_job_index as number;
    expect(list.entries[0].ci).to.include({ verdict: 'pending', job_state: 'queued', runs: 1 });
    expect((await cliJson(args('queue', 'list', '--line', 'main', '--json'))).count).to.equal(2);

    // the front entry's CI fails its unit suite: it is ejected with the evidence
    const claim = await ok(post(`/worker-jobs/${job1}:claim`, { accepted_runtime_contracts: [RUNTIME] }));
    await ok(post(`/worker-jobs/${job1}:complete`, {
      attempt_count: claim.attempt_count, lease_token: claim.lease_token,
      detail: { job_kind: 11, result: { contract: 'svc.runner.native-result.v1', status: 'succeeded', tests_status: 'fail', suite_result_count: 1, suite_results: [{ suite_id: 'unit', status: 'fail', blocking: true }] } },
    }));
    await settle();
    const shown = (await cliJson(args('queue', 'show', e1))).entry;
    expect(shown).to.include({ state: 'ejected', position: null });
    expect(shown.ejection).to.include({ reason: 'ci_failed' });
    expect(shown.ejection.failing_suites).to.deep.equal(['unit']);

    if (spawnSync('script', ['--version']).status === 0) {
      // the readable forms, on a terminal
      const table = await onTty(args('queue', 'list'));
      expect(table.status, table.stdout).to.equal(0);
      const rows = table.stdout.split('\n');
      expect(rows[0]).to.match(/^POS +ENTRY +CHANGE +LINE +MODE +STATE +CI/);
      expect(rows[1]).to.match(new RegExp(`^1 +${e2.entry_id} +${e2.change_ref} +main +direct +testing +pending #\\d+ \\(queued\\)`));
      expect(table.stdout).to.include('recently finished:');
      expect(table.stdout).to.match(new RegExp(`${e1} +${c1.ref} +main +ejected: ci_failed .* failing suites: unit \\(job #${job1}\\)`));
      const detail = await onTty(args('queue', 'show', e1));
      expect(detail.status, detail.stdout).to.equal(0);
      expect(detail.stdout).to.include(`${e1}: ${c1.ref} (${c1.ps}) onto main, merge`);
      expect(detail.stdout).to.match(new RegExp(`speculation: +merge of ${base} \\(base\\)`));
      expect(detail.stdout).to.match(new RegExp(`jobs: +#${job1}\\b`));
      expect(detail.stdout).to.match(/ejected: +ci_failed: /);
      expect(detail.stdout).to.match(/failing suites: unit/);
      const removedTty = await onTty(args('queue', 'remove', e2.entry_id));
      expect(removedTty.status, removedTty.stdout).to.equal(0);
      expect(removedTty.stdout).to.include(`removed ${e2.entry_id} (${e2.change_ref}) from the land queue of main`);
    } else {
      console.log('      (script(1) missing: the readable forms are not checked)');
      expect((await cliJson(args('queue', 'remove', e2.entry_id))).entry.state).to.equal('removed');
    }
    expect((await cliJson(args('queue', 'show', e2.entry_id))).entry.state).to.equal('removed');
    const after = await cliJson(args('queue', 'list'));
    expect(after.count).to.equal(0);
    expect(after.recent.map((e: Json) => e.entry_id)).to.deep.equal([e2.entry_id, e1]);

    // a finished entry cannot be removed: said, with where to look
    const twice = await cli(args('queue', 'remove', e1));
    expect(twice.code).to.equal(1);
    expect(twice.stderr).to.include(`${e1} is ejected`).and.include(`cairn queue show ${e1}`);
    // an unknown entry, an unknown change, a blocked change
    const unknown = await cli(args('queue', 'show', 'lq-999'));
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.include('no land-queue entry lq-999').and.include('cairn queue list');
    const noChange = await cli(args('queue', 'add', 'change-999'));
    expect(noChange.code).to.equal(1);
    expect(noChange.stderr).to.include('HTTP 404').and.include('cairn change list');
    const unapproved = await change({ 'a.txt': 'x\n', 'b.txt': 'b\n' }, false);
    const blocked = await cli(args('queue', 'add', unapproved.ref));
    expect(blocked.code).to.equal(1);
    expect(blocked.stderr).to.include('cannot join the land queue').and.include(`cairn change show ${unapproved.ref}`);
  });

  it('usage: a missing or unknown subcommand, ff-only, extra arguments exit 2; --help exits 0', async () => {
    const bare = await cli(['queue']);
    expect(bare.code).to.equal(2);
    expect(bare.stdout).to.include('cairn queue add CHANGE');
    const ff = await cli(args('queue', 'add', 'change-1', '--mode', 'ff-only'));
    expect(ff.code).to.equal(2);
    expect(ff.stderr).to.include('ff-only has nothing to test');
    expect((await cli(args('queue', 'frob'))).code).to.equal(2);
    expect((await cli(args('queue', 'show'))).code).to.equal(2);
    expect((await cli(args('queue', 'list', 'extra'))).code).to.equal(2);
    expect((await cli(['queue', 'show', 'lq-1'])).stderr).to.include('--server URL is required');
    for (const sub of ['add', 'list', 'show', 'remove']) {
      const h = await cli(['queue', sub, '--help']);
      expect(h.code, sub).to.equal(0);
      expect(h.stdout).to.include(`cairn queue ${sub}`);
    }
  });
});
