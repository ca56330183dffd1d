// `cairn export-git`: a line's history as git commits in a local bare repository, fetched from the
// server's clone URL (docs/git.md "Export"): the server builds the commits (deterministically, from
// stored data) in its shadow repository; this command brings them into OUT with git's own fetch.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { gitBinary, gitRun, GitUnavailable } from '../client/git-source.js';
import { parseCommandArgs } from './args.js';
import { COMMON, common, context, need, one, seg } from './command-context.js';

export const EXPORT_GIT_HELP = `Usage:
  cairn export-git --server URL --repo N --line NAME [--json] OUT.git

Write line NAME's history as git commits into the bare git repository OUT.git (created when
missing; fetched into when it exists), as branch NAME, with HEAD on it. The server builds the
commits from what it stores, never from a clock or a configuration: imported commits keep
their ids, and exporting again, anywhere, gives the same ids (docs/git.md "Export"). The same
history can be cloned with git itself, as this prints (the repository's URL: every line a branch):
  git clone -b NAME SERVER/v1/native/repository-authorities/N/git.git

Needs git (Debian: apt-get install git), or CAIRN_GIT naming the binary.

Options:
  --line NAME     the line to export
${COMMON}
Exit codes: 0 exported, 1 error (git missing, the server refused, the fetch failed), 2 usage.
`;

export async function exportGitCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { ...common, line: { type: 'string' } }, true);
  if (values.help) { process.stdout.write(EXPORT_GIT_HELP); return 0; }
  const ctx = context(values);
  const line = need(values.line, '--line');
  const out = path.resolve(one(positionals, 'output repository (OUT.git)'));
  try {
    const bin = gitBinary();
    const exported = await ctx.client.json('POST', ctx.client.repoPath(ctx.repo, '/git/exports'), { line });
    const url = `${ctx.client.base}${ctx.client.repoPath(ctx.repo, `/git/${seg(line)}.git`)}`;
    if (!existsSync(out)) gitRun(bin, path.dirname(out), ['init', '-q', '--bare', out]);
    else gitRun(bin, out, ['rev-parse', '--git-dir']);
    const branch = `refs/heads/${line}`;
    if (exported.head_commit_id) {
      gitRun(bin, out, ['fetch', '-q', '--no-tags', url, `+${branch}:${branch}`]);
      gitRun(bin, out, ['symbolic-ref', 'HEAD', branch]);
    }
    // The repository's URL, with the line as the branch to check out: a clone that works as printed, whatever the line.
    const cloneUrl = `${ctx.client.base}${ctx.client.repoPath(ctx.repo, '/git.git')}`;
    const clone = `git clone -b ${shellWord(line)} ${cloneUrl}`;
    const result = { line, head_commit_id: exported.head_commit_id as string | null, written: exported.written as number, out, url, clone };
    process.stdout.write(ctx.json ? `${JSON.stringify(result)}\n` : `${result.head_commit_id ? `exported ${line} to ${out} at ${result.head_commit_id.slice(0, 12)}` : `line ${line} has no snapshot: ${out} has no branch ${line}`}\n  clone it with: ${clone}\n`);
    return 0;
  } catch (err) {
    if (err instanceof GitUnavailable) {
      process.stderr.write(`cairn: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

/** A word a POSIX shell reads back as itself: quoted unless it is plain. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9._\/-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
