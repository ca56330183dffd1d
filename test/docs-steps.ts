// The machinery of runnable documentation (CONTRIBUTING.md "Runnable documentation"): the
// shell blocks of a Markdown document marked runnable (```sh runnable, ```console runnable),
// split into commands with the output each shows, run in order in one bash on a terminal
// (script(1)), and the rule an output must match. Used by test/docs-runnable.test.ts (README.md,
// docs/guide.md) and test/docs-operations-runbook.test.ts (docs/operations.md's archive drill).
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { CLI, tempDir } from './helpers.js';

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
/**
 * Run the steps; with `timeoutMs`, a run that has not ended by then is killed (a step waiting
 * for something that never comes fails with the output so far, not with the test's timeout).
 */
export async function runSteps(steps: Step[], dir: string, env: NodeJS.ProcessEnv, timeoutMs?: number): Promise<{ output: string[]; code: number }[]> {
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
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => { out += `\n(killed: the steps had not ended after ${timeoutMs / 1000} s)\n`; child.kill('SIGKILL'); }, timeoutMs);
    child.on('error', reject);
    child.on('exit', () => { clearTimeout(timer); resolve(out); });
  });
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  return steps.map((s, i) => {
    const from = lines.findIndex((l) => normalize(l) === `${MARK} ${i}`);
    const to = lines.findIndex((l) => normalize(l).startsWith(`${MARK} ${i} exit `));
    if (from < 0 || to < 0) throw new Error(`${s.where}: the step did not run to its end; output so far:\n${text.slice(-4000)}`);
    return { output: lines.slice(from + 1, to), code: Number(normalize(lines[to]).split(' ').pop()) };
  });
}


/**
 * A scratch directory for a document's commands: `cairn` on PATH (this checkout's CLI), a HOME of
 * its own, no pager or colour, wide columns, and `extra` on top (a store's credentials, git's
 * author).
 */
export async function scratchShell(prefix: string, extra: Record<string, string>): Promise<{ dir: string; env: NodeJS.ProcessEnv }> {
  const dir = tempDir(prefix);
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
    ...extra,
  };
  return { dir, env };
}
