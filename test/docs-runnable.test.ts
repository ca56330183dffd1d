// Documentation that cannot drift: the shell blocks of README.md, docs/guide.md and docs/git.md marked
// runnable (```sh runnable, ```console runnable; CONTRIBUTING.md "Runnable documentation") are
// run in order, as written, in a scratch directory against a fresh server, with `cairn` on PATH
// (a shim to bin/cairn.js), on a terminal (script(1)) as a reader would see them. Where a block
// shows output (a console block's lines after `$ command`, or `# -> ...` after a command of an
// sh block) the output must match it (see matches() for the rule). DOCS_RECORD=1 prints what
// each command printed, to write a block's output from.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT, startTestServer, type TestServer } from './helpers.js';
import { matches, normalize, runnableSteps, runSteps, scratchShell } from './docs-steps.js';

/** A scratch directory with `cairn` on PATH and the documented server address served by `server`. */
async function runDocument(file: string, documented: string, server: TestServer): Promise<void> {
  const steps = runnableSteps(readFileSync(path.join(PROJECT_ROOT, file), 'utf8'), file);
  expect(steps.length, `${file} has no runnable blocks`).to.be.above(0);
  const actual = server.url.replace(/^http:\/\//, '');
  const { dir, env } = await scratchShell('cairn-docs-', {
    GIT_AUTHOR_NAME: 'Alice', GIT_AUTHOR_EMAIL: 'alice@example.com', GIT_COMMITTER_NAME: 'Alice', GIT_COMMITTER_EMAIL: 'alice@example.com',
  });
  const run = steps.map((s) => ({ ...s, command: s.command.split(documented).join(actual) }));
  const results = await runSteps(run, dir, env);
  const problems: string[] = [];
  results.forEach((r, i) => {
    const output = r.output.map((l) => l.split(actual).join(documented));
    if (process.env.DOCS_RECORD) process.stdout.write(`--- ${steps[i].where} (exit ${r.code})\n$ ${steps[i].command}\n${output.join('\n')}\n`);
    if (!steps[i].expected.length) {
      if (r.code !== 0) problems.push(`${steps[i].where}: \`${steps[i].command}\` exited ${r.code}:\n${output.join('\n')}`);
      return;
    }
    const m = matches(steps[i].expected, output);
    if (!m.ok) problems.push(`${steps[i].where}: \`${steps[i].command}\` did not print\n  ${m.missing}\nit printed (normalized):\n${output.map(normalize).filter((l) => l).map((l) => `  ${l}`).join('\n')}`);
  });
  expect(problems, problems.join('\n\n')).to.deep.equal([]);
}

describe('runnable documentation', function () {
  // Each document's commands start ~50 node processes, one after another.
  this.timeout(240_000);

  before(function () {
    if (spawnSync('script', ['--version']).status !== 0 || spawnSync('git', ['--version']).status !== 0) {
      if (process.env.CI) throw new Error('script(1) and git are needed by the documentation test');
      this.skip();
    }
  });

  it('the matching rule: documented lines in order, ids, times and sizes aside, "..." for any text', () => {
    expect(matches(['pushed 9f2305268614 to main: 2 files, 120 B'], ['\x1b[2Kpushing', 'pushed 0123456789ab to main: 2 files, 99 B'])).to.deep.equal({ ok: true });
    expect(matches(['a', 'b'], ['b', 'a']).ok).to.equal(false);
    expect(matches(['{"created":true,...}'], ['{"created":true,"x":1}'])).to.deep.equal({ ok: true });
    expect(matches(['landed x'], ['landed y']).ok).to.equal(false);
    const steps = runnableSteps(['```console runnable', '$ cairn a \\', '  --b', 'out', '$ cairn c', '```', '```sh', 'not run', '```', '```sh runnable', 'cat > f <<\'X\'', 'body', 'X', 'echo hi   # note', '# -> hi', '```'].join('\n'), 'x.md');
    expect(steps.map((s) => [s.command, s.expected])).to.deep.equal([['cairn a \\\n  --b', ['out']], ['cairn c', []], ["cat > f <<'X'\nbody\nX", []], ['echo hi   # note', ['hi']]]);
  });

  for (const [file, address] of [['README.md', '127.0.0.1:8088'], ['docs/guide.md', '127.0.0.1:8089'], ['docs/git.md', '127.0.0.1:8088']] as const) {
    it(`${file}: the runnable blocks run as written and print what they show`, async () => {
      const server = await startTestServer();
      try {
        await runDocument(file, address, server);
      } finally {
        await server.stop();
      }
    });
  }
});
