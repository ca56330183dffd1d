// Documentation that cannot drift: the shell blocks of README.md, docs/guide.md and docs/git.md marked
// runnable (```sh runnable, ```console runnable; CONTRIBUTING.md "Runnable documentation") are
// run in order, as written, in a scratch directory against a fresh server, with `cairn` on PATH
// (a shim to bin/cairn.js), on a terminal (script(1)) as a reader would see them. Where a block
// shows output (a console block's lines after `$ command`, or `# -> ...` after a command of an
// sh block) the output must match it (see matches() for the rule). DOCS_RECORD=1 prints what
// each command printed, to write a block's output from.
import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, PROJECT_ROOT, startTestServer, tempDir, type TestServer } from './helpers.js';

export interface Step {
  /** The shell text of one command (continuation lines and here-documents included). */
  command: string;
  /** The output the document shows for it (empty: none shown; the command must exit 0). */
  expected: string[];
  /** Where it is written, for messages. */
  where: string;
}

/** The runnable steps of a Markdown document, in order. */
export function runnableSteps(markdown: string, file: string): Step[] {
  const steps: Step[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(sh|console)\s+runnable\s*$/.exec(lines[i]);
    if (!open) continue;
    const body: string[] = [];
    const start = i + 1;
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    const at = (k: number) => `${file}:${start + k + 1}`;
    if (open[1] === 'console') {
      for (let k = 0; k < body.length; k++) {
        if (!body[k].startsWith('$ ')) throw new Error(`${at(k)}: a console block's output must follow a "$ " command`);
        let command = body[k].slice(2);
        while (command.endsWith('\\') && k + 1 < body.length) command += `\n${body[++k]}`;
        const expected: string[] = [];
        while (k + 1 < body.length && !body[k + 1].startsWith('$ ')) expected.push(body[++k]);
        steps.push({ command, expected, where: at(k) });
      }
    } else {
      for (let k = 0; k < body.length; k++) {
        const line = body[k];
        if (/^\s*(#.*)?$/.test(line)) continue;
        const where = at(k);
        let command = line;
        while (command.endsWith('\\') && k + 1 < body.length) command += `\n${body[++k]}`;
        const heredoc = /<<-?\s*'?(\w+)'?/.exec(command);
        if (heredoc) {
          while (k + 1 < body.length && body[k].trim() !== heredoc[1]) command += `\n${body[++k]}`;
        }
        const expected: string[] = [];
        if (k + 1 < body.length && body[k + 1].startsWith('# -> ')) {
          let text = body[++k].slice('# -> '.length);
          while (k + 1 < body.length && /^#\s{2,}\S/.test(body[k + 1])) text += body[++k].replace(/^#\s+/, '');
          expected.push(text);
        }
        steps.push({ command, expected, where });
      }
    }
  }
  return steps;
}

/**
 * What varies from run to run, made equal: terminal escapes and progress redraws, ids (hex of
 * 12 or more digits), idempotency keys, times and byte sizes, and runs of spaces (column widths).
 */
export function normalize(line: string): string {
  return line
    .replace(/\x1b\[1G|\x1b8/g, '\r')
    .replace(/\x1b7/g, '')
    .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')
    .replace(/^[\s\S]*\r(?!$)/, '')
    .replace(/\r/g, '')
    .replace(/cli-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'cli-<key>')
    .replace(/\b[0-9a-f]{12,}\b/g, '<id>')
    .replace(/\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d(\.\d+)?)?Z?/g, '<time>')
    .replace(/\b\d\d:\d\d:\d\d\b/g, '<time>')
    .replace(/\b\d+(\.\d+)? (B|KiB|MiB|GiB)\b/g, '<size>')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The rule: after normalize(), every line the document shows equals a line of the output, in
 * order (the output may have more lines between them: progress, notes); "..." or "…" in a
 * documented line stands for any text.
 */
export function matches(expected: string[], actual: string[]): { ok: true } | { ok: false; missing: string } {
  const got = actual.map(normalize).filter((l) => l !== '');
  let at = 0;
  for (const want of expected.map(normalize).filter((l) => l !== '')) {
    const pattern = new RegExp(`^${want.split(/\.\.\.|…/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    while (at < got.length && !pattern.test(got[at])) at++;
    if (at === got.length) return { ok: false, missing: want };
    at++;
  }
  return { ok: true };
}

const MARK = '@@cairn-docs-step';

/** Run the steps in one bash on a terminal (script(1)) in `dir`; each step's output and exit code. */
async function runSteps(steps: Step[], dir: string, env: NodeJS.ProcessEnv): Promise<{ output: string[]; code: number }[]> {
  const script = ['set +e'];
  steps.forEach((s, i) => {
    script.push(`printf '\\n${MARK} ${i}\\n'`, s.command, `printf '\\n${MARK} ${i} exit %d\\n' $?`);
  });
  const file = path.join(dir, '.docs-steps.sh');
  await fsp.writeFile(file, `${script.join('\n')}\n`);
  const text = await new Promise<string>((resolve, reject) => {
    const child = spawn('script', ['-qefc', `bash ${file}`, '/dev/null'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    child.on('error', reject);
    child.on('exit', () => resolve(out));
  });
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  return steps.map((s, i) => {
    const from = lines.findIndex((l) => normalize(l) === `${MARK} ${i}`);
    const to = lines.findIndex((l) => normalize(l).startsWith(`${MARK} ${i} exit `));
    if (from < 0 || to < 0) throw new Error(`${s.where}: the step did not run to its end; output so far:\n${text.slice(-4000)}`);
    return { output: lines.slice(from + 1, to), code: Number(normalize(lines[to]).split(' ').pop()) };
  });
}

/** A scratch directory with `cairn` on PATH and the documented server address served by `server`. */
async function runDocument(file: string, documented: string, server: TestServer): Promise<void> {
  const steps = runnableSteps(readFileSync(path.join(PROJECT_ROOT, file), 'utf8'), file);
  expect(steps.length, `${file} has no runnable blocks`).to.be.above(0);
  const actual = server.url.replace(/^http:\/\//, '');
  const dir = tempDir('cairn-docs-');
  const bin = path.join(dir, '.bin');
  await fsp.mkdir(bin);
  await fsp.writeFile(path.join(bin, 'cairn'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`, { mode: 0o755 });
  const home = path.join(dir, '.home');
  await fsp.mkdir(home);
  const env = {
    ...process.env,
    PATH: `${bin}:${process.env.PATH}`,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    PAGER: 'cat',
    NO_COLOR: '1',
    TERM: 'dumb',
    COLUMNS: '200',
    GIT_AUTHOR_NAME: 'Alice', GIT_AUTHOR_EMAIL: 'alice@example.com', GIT_COMMITTER_NAME: 'Alice', GIT_COMMITTER_EMAIL: 'alice@example.com',
  };
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
