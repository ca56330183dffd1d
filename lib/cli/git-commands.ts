// `cairn import-git`: a local git repository's first-parent history onto a line, with the side
// histories of its merges (docs/git.md).
import path from 'node:path';
import { importGit, ImportRefused } from '../client/git-import.js';
import { GitUnavailable } from '../client/git-source.js';
import { progressFor } from '../client/progress.js';
import { parseCommandArgs } from './args.js';
import { COMMON, common, context, need, one } from './command-context.js';

export const IMPORT_GIT_HELP = `Usage:
  cairn import-git --server URL --repo N --line NAME [--ref REF] [--incremental] [-q] [--json] SRC

Write the first-parent history of REF (default HEAD) in the git repository SRC onto line NAME:
one snapshot per commit, oldest first, each with the commit's tree (files, executables,
symlinks) and the commit kept with it (author, committer, time zones, the raw message, the
commit id, tree id and every parent id: GET {repo}/git/snapshots/{snapshot_id}). The commits
each merge brought in are imported too, as snapshots on no line, so an export keeps the merge's
commit id. Submodules (gitlinks) are kept with the commits and listed at the end; a snapshot
cannot hold them.

The line must be new, empty, or at a snapshot imported from this history: the import then
continues after it, so running it again imports only newer commits (nothing when there are
none), and an interrupted import resumes where its last batch committed. Commits are sent
500 at a time, each batch one all-or-nothing commit that moves the line.

Needs git (Debian: apt-get install git), or CAIRN_GIT naming the binary.

Options:
  --line NAME     the line to write (created when missing)
  --ref REF       the ref or commit to import (default HEAD), e.g. refs/heads/main
  --incremental   refuse unless the line already holds an import of this history
  -q, --quiet     no progress bar (it is drawn only on a terminal anyway)
${COMMON}
Exit codes: 0 imported (or nothing new), 1 error (git missing, SRC not a repository, REF
unknown, a path cairn cannot store), 2 usage, 6 refused: the line holds other history or moved
during the import (nothing of the refused batch was written).
`;

export async function importGitCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    ...common,
    line: { type: 'string' },
    ref: { type: 'string' },
    incremental: { type: 'boolean', default: false },
    quiet: { type: 'boolean', short: 'q', default: false },
  }, true);
  if (values.help) { process.stdout.write(IMPORT_GIT_HELP); return 0; }
  const ctx = context(values);
  const line = need(values.line, '--line');
  const source = path.resolve(one(positionals, 'git repository (SRC)'));
  try {
    const r = await importGit({
      server: ctx.server,
      repo: ctx.repo,
      source,
      ref: values.ref as string | undefined,
      line,
      incremental: values.incremental === true,
      progress: progressFor(process.stderr, values.quiet !== true, 'commits'),
    });
    if (ctx.json) {
      process.stdout.write(`${JSON.stringify(r)}\n`);
    } else {
      const lines = [r.imported === 0
        ? `nothing to import: ${r.line} holds all ${r.commits} commits of ${r.ref} (at ${r.head_commit_id.slice(0, 12)})`
        : `imported ${r.imported} commits of ${r.ref} onto ${r.line}${r.already ? ` (after the ${r.already} it held)` : ''}: head ${r.head_snapshot_id!.slice(0, 12)} = git ${r.head_commit_id.slice(0, 12)}, ${r.uploaded_packs} packs uploaded${r.side_imported ? `; and ${r.side_imported} commits of merged branches (on no line)` : ''}`];
      for (const s of r.submodules) lines.push(`  submodule ${s.path} at ${s.commit_id.slice(0, 12)} (kept with the commits, not in the snapshots)`);
      process.stdout.write(`${lines.join('\n')}\n`);
    }
    return 0;
  } catch (err) {
    if (err instanceof ImportRefused) {
      process.stderr.write(`cairn: ${err.message}\n`);
      return 6;
    }
    if (err instanceof GitUnavailable) {
      process.stderr.write(`cairn: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
