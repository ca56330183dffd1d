// `cairn review`, `cairn attest`, `cairn policy`, `cairn ci` against a real server, with CI run by
// `cairn runner --once`: the story from the command line (patchset pushed → review request →
// CI → reviews → attestation → passing policy), JSON off a terminal, usage errors (exit 2) and
// server refusals (exit 1).
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { cli, cliJson, onTty, register, startTestServer, tempDir, type TestServer } from './helpers.js';

describe('review, attest, policy and ci commands', function () {
  this.timeout(60_000);
  let s: TestServer;
  let common: string[];
  before(async () => {
    s = await startTestServer();
    const repo = await register(s.url, 'review-cli');
    common = ['--server', s.url, '--repo', String(repo)];
  });
  after(() => s.stop());

  const run = cliJson;

  it('runs the story: request, CI through cairn runner, reviews, attestation, a passing policy', async () => {
    const dir = path.join(tempDir(), 'tree');
    await fsp.mkdir(path.join(dir, 'ci'), { recursive: true });
    await fsp.writeFile(path.join(dir, 'a.txt'), 'one\n');
    await run(['push', ...common, '--line', 'main', dir]);
    await run(['task', 'create', ...common, '--title', 'T', '--intent', 'I']);
    await run(['change', 'create', ...common, '--task', 'task-1', '--title', 'C', '--base-line', 'main']);
    const results = JSON.stringify({ suites: [{ suite_id: 'unit', status: 'pass', blocking: true }] });
    await fsp.writeFile(path.join(dir, 'ci/run.sh'), `printf '%s' '${results}' > ci/results.json\n`);
    const ps = (await run(['patchset', 'push', ...common, '--change', 'change-1', '--author-mode', 'human_with_ai_assist', dir])).patchset.patchset_id;

    const req = await run(['review', 'request', ...common, '--change', 'change-1', '--group', 'core', '--note', 'look', '--by', 'alice']);
    expect(req).to.include({ review_id: 'change-1.review-1', reviewer_group: 'core' });
    expect(req.change.status).to.equal('review');

    const queued = await run(['ci', 'run', ...common, ps]);
    expect(queued).to.include({ queued: true, delivery: 'worker_job', trigger: 'manual_rerun' });
    const runner = await cli(['runner', '--server', s.url, '--once', '--repo', common[3], '--workdir', path.join(tempDir(), 'work')]);
    expect(runner.code, runner.stderr).to.equal(0);
    const status = await run(['ci', 'status', ...common, ps, '--recent', '5']);
    expect(status).to.include({ availability: 'available', overall: 'pass', ci_run_sequence: 1 });

    await run(['review', 'comment', ...common, '--change', 'change-1', '--reviewer', 'carol', '--comment', 'nit']);
    await run(['review', 'block', ...common, '--change', 'change-1', '--reviewer', 'dave']);
    await run(['review', 'dismiss', ...common, '--change', 'change-1', '--reviewer', 'dave']);
    const approved = await run(['review', 'approve', ...common, '--change', 'change-1', '--reviewer', 'bob']);
    expect(approved.review).to.include({ action: 'approve', reviewer: 'bob', patchset_id: ps });
    const list = await run(['review', 'list', ...common, '--change', 'change-1', '--json']);
    expect(list).to.include({ approvals: 1, blocking: 0, comments: 1, total: 5 });

    const att = await run(['attest', ...common, ps, '--verification', 'pass']);
    expect(att.attestation).to.include({ verification_state: 'pass', require_tests_pass: true, ci_backed: true, tests: 'pass' });
    const decision = await run(['policy', 'evaluate', ...common, ps]);
    expect(decision.policy.decision, JSON.stringify(decision.policy.checks)).to.equal('pass');
    expect((await run(['policy', 'show', ...common, ps])).policy).to.deep.equal(decision.policy);
  });

  it('on a terminal, prints the short readable form (policy checks, review counts, CI run)', async function () {
    if (spawnSync('script', ['--version']).status !== 0) this.skip();
    const policy = await onTty(['policy', 'show', ...common, 'change-1.ps-1']);
    expect(policy.status, policy.stdout).to.equal(0);
    expect(policy.stdout).to.match(/change-1\.ps-1: pass \(change-1\.ps-1\.decision-1\)/);
    expect(policy.stdout).to.match(/pass\s+independent_approval: approved by bob/);
    expect(policy.stdout).to.not.include('{');
    const reviews = await onTty(['review', 'list', ...common, '--change', 'change-1']);
    expect(reviews.stdout).to.include('task-1.change-1: 1 approval(s), 0 blocking, 1 comment(s), 5 total');
    const ci = await onTty(['ci', 'status', ...common, 'change-1.ps-1']);
    expect(ci.stdout).to.match(/change-1\.ps-1: available, run 1, pass/);
  });

  it('exits 2 on usage errors and 1 with the server\'s reason on refusals', async () => {
    for (const args of [['review'], ['review', 'frobnicate', ...common, '--change', 'change-1'], ['review', 'approve', ...common], ['policy', 'judge', ...common, 'x'], ['ci', 'run', ...common], ['attest', ...common]]) {
      const r = await cli(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(2);
    }
    // A value outside the option's set is a usage error, refused before anything is sent.
    const refused = await cli(['attest', ...common, 'change-1.ps-1', '--verification', 'maybe']);
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.include('--verification must be one of unknown, pending, pass, fail');
    const missing = await cli(['policy', 'show', ...common, 'change-9.ps-1']);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include('change-9.ps-1');
  });
});
