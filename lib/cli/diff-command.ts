// `cairn diff`: what a change or patchset changes, as git shows it — unified text coloured on a
// terminal and sent through a pager, plain when piped, `--stat`, `--name-only`, or the JSON form.
import { spawn } from 'node:child_process';
import { CliUsageError, parseCommandArgs } from './args.js';
import { COMMON, common, context, seg } from './command-context.js';

export const DIFF_HELP = `Usage: cairn diff CHANGE|PATCHSET [--against PATCHSET] [--stat | --name-only] [-U N] [PATH...]

Show what a patchset changes: base → revision (a CHANGE means its selected patchset). With
--against, what changed between two patchsets of one change ("since I last looked"). PATHs
narrow to those files or directories. On a terminal the diff is coloured and sent through
$PAGER (less -FRX by default); piped, it is plain git-style text that git apply accepts. A
file left out of the diff (too large, or past the diff's budget) is written as a binary entry
without data, which git apply refuses, so the patch never applies as a different tree: name
the other PATHs (or git apply --exclude) to apply the rest.

Options:
  --against PS    compare with another patchset of the same change instead of the base
  --stat          one line per file with its added and removed line counts
  --name-only     the changed paths only
  -U, --unified N lines of context (default 3, at most 1000)
  --no-pager      write to stdout even on a terminal
${COMMON}`;

type Json = Record<string, any>;

const COLOURS = { bold: '\u001b[1m', red: '\u001b[31m', green: '\u001b[32m', cyan: '\u001b[36m', dim: '\u001b[2m', reset: '\u001b[0m' };

/** git's colours for a unified diff. */
export function colourDiff(text: string): string {
  const c = COLOURS;
  return text.split('\n').map((line) => {
    if (line.startsWith('diff --git') || line.startsWith('--- ') || line.startsWith('+++ ') || /^(new|deleted) file mode|^(old|new) mode/.test(line)) return `${c.bold}${line}${c.reset}`;
    if (line.startsWith('@@')) return `${c.cyan}${line}${c.reset}`;
    if (line.startsWith('+')) return `${c.green}${line}${c.reset}`;
    if (line.startsWith('-')) return `${c.red}${line}${c.reset}`;
    if (line.startsWith('#') || line.startsWith('\\')) return `${c.dim}${line}${c.reset}`;
    return line;
  }).join('\n');
}

/** `git diff --stat` lines from the JSON form. */
export function statLines(d: Json, width = 40): string {
  const files = d.files as Json[];
  const nameWidth = Math.min(60, Math.max(0, ...files.map((f) => f.path.length)));
  const most = Math.max(1, ...files.map((f) => f.additions + f.deletions));
  const rows = files.map((f) => {
    const n = f.additions + f.deletions;
    // As git: one mark per line while the largest file fits the width, else scaled to it.
    const bar = most <= width ? n : Math.max(n > 0 ? 1 : 0, Math.round((n / most) * width));
    const plus = n === 0 ? 0 : Math.round((f.additions / n) * bar);
    const graph = f.binary ? 'Bin' : f.truncated ? '(not counted)' : `${n} ${'+'.repeat(plus)}${'-'.repeat(bar - plus)}`;
    return ` ${f.path.padEnd(nameWidth)} | ${graph}`;
  });
  const s = d.stats;
  rows.push(` ${s.files_changed} file${s.files_changed === 1 ? '' : 's'} changed, ${s.additions} insertion${s.additions === 1 ? '' : 's'}(+), ${s.deletions} deletion${s.deletions === 1 ? '' : 's'}(-)`);
  return rows.join('\n');
}

/** Write `text` through $PAGER (less -FRX by default), or straight to stdout when there is no pager. */
function page(text: string): Promise<void> {
  const pager = process.env.PAGER ?? 'less';
  if (pager === '' || pager === 'cat') {
    process.stdout.write(text);
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', pager], { stdio: ['pipe', 'inherit', 'inherit'], env: { ...process.env, LESS: process.env.LESS ?? 'FRX' } });
    child.on('error', () => { process.stdout.write(text); resolve(); });
    child.stdin.on('error', () => undefined); // the reader quit early (q in less): not an error
    child.on('close', () => resolve());
    child.stdin.end(text);
  });
}

export async function diffCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    ...common,
    against: { type: 'string' }, stat: { type: 'boolean', default: false }, 'name-only': { type: 'boolean', default: false },
    unified: { type: 'string', short: 'U' }, 'no-pager': { type: 'boolean', default: false },
  }, true);
  if (values.help) { process.stdout.write(DIFF_HELP); return 0; }
  if (positionals.length === 0) throw new CliUsageError('give a change or a patchset (cairn diff CHANGE [PATH...])');
  if (values.stat && values['name-only']) throw new CliUsageError('give --stat or --name-only, not both');
  const ctx = context(values);
  const [target, ...paths] = positionals;
  const q = new URLSearchParams();
  if (values.against !== undefined) q.set('against', String(values.against));
  if (values.unified !== undefined) {
    if (!/^\d+$/.test(String(values.unified))) throw new CliUsageError('-U takes a number of context lines');
    q.set('context', String(values.unified));
  }
  for (const p of paths) q.append('path', p.replace(/\/+$/, ''));
  const isPatchset = /\.ps-[1-9][0-9]*$/.test(target);
  if (!isPatchset && values.against !== undefined) throw new CliUsageError('--against compares two patchsets: name the newer PATCHSET (change-3.ps-2), not a change');
  const route = ctx.client.repoPath(ctx.repo, isPatchset ? `/read/patchsets/${seg(target)}/diff` : `/read/changes/${seg(target)}/diff`);
  const query = q.size ? `?${q}` : '';
  // Unlike the other commands, a diff is text when piped (as git's); JSON only with --json.
  const json = values.json === true;
  const terminal = process.stdout.isTTY === true && !json;
  if (json || values.stat || values['name-only']) {
    const d = await ctx.client.json('GET', `${route}${query}`);
    if (json && !values.stat && !values['name-only']) { process.stdout.write(`${JSON.stringify(d)}\n`); return 0; }
    const out = values['name-only'] ? (d.files as Json[]).map((f) => f.path).join('\n') : statLines(d);
    if (json) process.stdout.write(`${JSON.stringify({ files: (d.files as Json[]).map((f) => ({ path: f.path, change: f.change, additions: f.additions, deletions: f.deletions, binary: f.binary, truncated: f.truncated })), stats: d.stats })}\n`);
    else process.stdout.write(out ? `${out}\n` : '');
    return 0;
  }
  const text = await ctx.client.text(`${route}${query}`, 'text/x-diff');
  if (!terminal) { process.stdout.write(text); return 0; }
  if (text === '') { process.stdout.write('no changes\n'); return 0; }
  if (values['no-pager']) process.stdout.write(colourDiff(text));
  else await page(colourDiff(text));
  return 0;
}
