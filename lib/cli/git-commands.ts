// `cairn import-git`: a local git repository's first-parent history onto a line, with the side
// histories of its merges (docs/git.md).
import path from 'node:path';
import { importGit, ImportRefused, type ImportGitResult } from '../client/git-import.js';
import { gitBinary, gitRun, GitUnavailable } from '../client/git-source.js';
import type { CairnClient } from '../client/http.js';
import { progressFor } from '../client/progress.js';
import { CliUsageError, parseCommandArgs } from './args.js';
import { COMMON, common, context, need, one } from './command-context.js';

export const IMPORT_GIT_HELP = `Usage:
  cairn import-git --server URL --repo N --line NAME [--ref REF] [--incremental] [-q] [--json] SRC
  cairn import-git --server URL --repo N --all [-q] [--json] SRC

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

With --all, every branch of SRC is imported onto the line of the same name (as above, each
its own import), then every tag, lightweight or annotated, is recorded as a read-only tag of
the repository (its object kept as it was), served by the repository's git URL and pushed by
mirrors (docs/git.md "Import every branch and tag"). A tag of a commit no branch holds, or of a
tag, is left out and said.

Needs git (Debian: apt-get install git), or CAIRN_GIT naming the binary.

Options:
  --all           every branch (each onto its own line) and every tag
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
    all: { type: 'boolean', default: false },
  }, true);
  if (values.help) { process.stdout.write(IMPORT_GIT_HELP); return 0; }
  const ctx = context(values);
  if (values.all === true) {
    if (values.line !== undefined || values.ref !== undefined || values.incremental === true) throw new CliUsageError('--all imports every branch onto its own line: no --line, --ref or --incremental with it');
    return importAll(ctx, values.server as string, path.resolve(one(positionals, 'git repository (SRC)')), values.quiet === true);
  }
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

/** Tags sent per request of POST {repo}/git/tags. */
const TAG_BATCH = 1000;

/** `--all`: each branch onto its line, then the tags. Exit 6 when a branch was refused (the others are imported). */
async function importAll(ctx: { client: CairnClient; repo: number; json: boolean }, server: string, source: string, quiet: boolean): Promise<number> {
  try {
    const bin = gitBinary();
    gitRun(bin, source, ['rev-parse', '--git-dir']);
    const branches = gitRun(bin, source, ['for-each-ref', '--format=%(refname:strip=2)', 'refs/heads/']).toString('utf8').split('\n').filter(Boolean);
    const lines: { line: string; result?: ImportGitResult; refused?: string }[] = [];
    for (const branch of branches) {
      try {
        lines.push({ line: branch, result: await importGit({ server, repo: ctx.repo, source, ref: `refs/heads/${branch}`, line: branch, incremental: false, progress: progressFor(process.stderr, !quiet, 'commits') }) });
      } catch (err) {
        if (!(err instanceof ImportRefused)) throw err;
        lines.push({ line: branch, refused: err.message });
      }
    }
    // name NUL type NUL id NUL peeled type NUL peeled id (the peeled pair: an annotated tag's target).
    const rows = gitRun(bin, source, ['for-each-ref', '--format=%(refname:strip=2)%00%(objecttype)%00%(objectname)%00%(*objecttype)%00%(*objectname)', 'refs/tags/']).toString('latin1').split('\n').filter(Boolean);
    const tags: { name: string; commit_id: string; raw: string | null }[] = [];
    const skipped: { name: string; reason: string }[] = [];
    for (const row of rows) {
      const [rawName, type, id, peeledType, peeled] = row.split('\0');
      const name = Buffer.from(rawName, 'latin1').toString('utf8');
      if (type === 'commit') tags.push({ name, commit_id: id, raw: null });
      else if (type === 'tag' && peeledType === 'commit') tags.push({ name, commit_id: peeled, raw: gitRun(bin, source, ['cat-file', 'tag', id]).toString('base64') });
      else skipped.push({ name, reason: `it names a ${type === 'tag' ? `tag of a ${peeledType}` : type}, not a commit` });
    }
    let recorded = 0;
    let unchanged = 0;
    for (let i = 0; i < tags.length; i += TAG_BATCH) {
      const r = await ctx.client.json('POST', ctx.client.repoPath(ctx.repo, '/git/tags'), { tags: tags.slice(i, i + TAG_BATCH) });
      recorded += r.recorded;
      unchanged += r.unchanged;
      skipped.push(...(r.refused as { name: string; reason: string }[]));
    }
    const refused = lines.filter((l) => l.refused !== undefined);
    if (ctx.json) {
      process.stdout.write(`${JSON.stringify({ lines: lines.map((l) => ({ line: l.line, imported: l.result?.imported ?? 0, head_commit_id: l.result?.head_commit_id ?? null, refused: l.refused ?? null })), tags: { recorded, unchanged, skipped } })}\n`);
    } else {
      const out = lines.map((l) => (l.refused !== undefined ? `  ${l.line}: refused: ${l.refused}` : `  ${l.line}: ${l.result!.imported} commits imported, head ${l.result!.head_commit_id.slice(0, 12)}`));
      out.push(`tags: ${recorded} recorded, ${unchanged} already recorded, ${skipped.length} left out`);
      for (const t of skipped.slice(0, 50)) out.push(`  tag ${t.name}: ${t.reason}`);
      process.stdout.write(`imported ${lines.length - refused.length} of ${lines.length} branches\n${out.join('\n')}\n`);
    }
    return refused.length > 0 ? 6 : 0;
  } catch (err) {
    if (err instanceof GitUnavailable) {
      process.stderr.write(`cairn: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
