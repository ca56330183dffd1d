// `cairn push`, `pull`, `sync`, `checkout`, `status`, `update`: thin wrappers over
// lib/client/transfer.ts and working-copy.ts. Each prints one JSON object on stdout when it is
// not a terminal (or with --json), a short summary on a terminal.
import path from 'node:path';
import { parseU32 } from '../domain/repository.js';
import { CairnClient, normalizeServerUrl } from '../client/http.js';
import { formatBytes } from '../client/progress.js';
import { pull, push, sync } from '../client/transfer.js';
import { checkout, readWorkingCopy, status, update, writeWorkingCopy } from '../client/working-copy.js';
import { emit, short, useJson } from './output.js';
import { CliUsageError, parseCommandArgs, stallSeconds } from './args.js';
import { didYouMean } from './suggest.js';
import { placeOf } from './target.js';

export const PUSH_HELP = `Usage: cairn push [--server URL --repo N --line NAME] [--parent ID] [--no-line] [--message M] [DIR]
       cairn push --server URL --repo N --no-line [--parent ID] [--line NAME] DIR

Snapshot DIR and send it: walk the tree (leaving out .cairn/, .git/ and what .cairnignore
matches), hash it, pack only the blobs and trees the server does not hold already (it learns
that from the parent, the line's head and other line heads), upload the missing packs, commit
the snapshot and move the line. An unchanged tree uploads nothing and reports "unchanged": true.
Every name is stored exactly (newlines, tabs, quotes included). A name no snapshot may hold
(.git in another case or alias, a top-level .cairn alias, a backslash, bytes that are not
UTF-8) refuses the push before anything is read or sent, naming each path (exit 1), unless
.cairnignore leaves it out.

From a working copy (made by cairn checkout; DIR defaults to the current directory) the
server, repository and line come from .cairn/config.json, the base snapshot is the parent and
the compare-and-set guard: when the line moved since the base the push is refused (exit 6,
"line X moved since your base Y: update first") and nothing changes. On success the new
snapshot becomes the base.

From a plain directory --server, --repo and --line are required, and the parent is the line's
head unless --parent names one. With --no-line (ingest a snapshot without moving any line, as
history importers do) --line is optional: without it the parent is --parent or none; with it the
line's head is the default parent and its content is not uploaded again.

Options:
  --server URL    cairn server: http://HOST:PORT, https://HOST or just HOST:PORT (http)
  --repo N        repository index or name
  --line NAME     line to read the parent from and to move (compare-and-set on its head)
  --parent ID     parent snapshot (plain directory only; default: the line's head)
  --no-line       commit the snapshot without moving the line
  --message M     snapshot message
  --level N       zstd compression level (default 3)
  --quiet         no progress bar (it is shown only when stderr is a terminal)
  --json          print the result as JSON (default when stdout is not a terminal)
`;

export const PULL_HELP = `Usage: cairn pull [--server URL --repo N] (--line NAME | --snapshot ID) OUT_DIR

Materialize a snapshot into OUT_DIR (absent or empty) byte for byte: files, executable bits,
symlinks and empty directories. An exact export: no working-copy metadata is written (use
cairn checkout for a tracked working copy). A snapshot holding a name a checkout must not
write (.git or an alias of it, a top-level .cairn, a backslash) is refused before anything is
written, naming each path (exit 1).

Options:
  --server URL     cairn server (http://HOST:PORT or HOST:PORT)
  --repo N         repository index or name
  --line NAME      the line's head
  --snapshot ID    a snapshot by id
  --quiet          no progress bar
  --stall-seconds N
                   give up when nothing arrives and nothing is written for N seconds
                   (default $CAIRN_STALL_SECONDS, else 60; exit 1 naming what it waited for)
  --json           print the result as JSON (default when stdout is not a terminal)
`;

export const CHECKOUT_HELP = `Usage: cairn checkout [--server URL --repo N] --line NAME [--create] DIR

Make DIR (absent or empty) a working copy of the line: materialize its head and record the
server, repository, line and base snapshot in DIR/.cairn/config.json (never pushed). A line
that does not exist is refused (exit 1, naming the lines with a close name, nothing written)
unless --create is given: then the working copy is empty and its first push creates the line.
A head holding a name a checkout must not write is refused as cairn pull refuses it.

Options:
  --server URL     cairn server (http://HOST:PORT or HOST:PORT; default: $CAIRN_SERVER, the
                   working copy's or git remote's)
  --repo N         repository index or name (default: the working copy's or git remote's)
  --line NAME      line to track
  --create         the line may not exist yet: its first push from DIR creates it
  --quiet          no progress bar
  --stall-seconds N
                   give up when nothing arrives and nothing is written for N seconds
                   (default $CAIRN_STALL_SECONDS, else 60; exit 1 naming what it waited for)
  --json           print the result as JSON (default when stdout is not a terminal)
`;

export const STATUS_HELP = `Usage: cairn status [DIR]

List the paths of the working copy containing DIR (default: the current directory) that were
added, modified or deleted against its base, and whether the line moved since (then push is
refused until cairn update).

Options:
  --json           print the result as JSON (default when stdout is not a terminal)
`;

export const UPDATE_HELP = `Usage: cairn update [DIR]

Bring the working copy to the line's head and make that the new base. Paths changed on the
line and not locally are updated; local changes to other paths are kept. When a path changed
on both sides (differently) the update is refused, naming the paths, and nothing is changed
(exit 6). A head holding a name a checkout must not write is refused, naming each path, and
nothing is changed (exit 1).

Options:
  --quiet          no progress bar
  --stall-seconds N
                   give up when nothing arrives and nothing is written for N seconds
                   (default $CAIRN_STALL_SECONDS, else 60; exit 1 naming what it waited for)
  --json           print the result as JSON (default when stdout is not a terminal)
`;

export const SYNC_HELP = `Usage: cairn sync --from URL --from-repo N --to URL --to-repo M --snapshot ID [--line NAME]

Copy a snapshot and its history between repositories (and servers): pull manifest from the
source, upload the packs the destination lacks, commit the rows unchanged, and move --line on
the destination (compare-and-set on its current head). Prints one JSON object.

Options:
  --json           accepted for uniformity: sync always prints JSON
`;

function repoIndex(value: unknown, flag: string): number {
  if (typeof value !== 'string') throw new CliUsageError(`${flag} is required`);
  try {
    return parseU32(value, flag);
  } catch {
    throw new CliUsageError(`${flag} must be a repository index (unsigned integer)`);
  }
}

function required(value: unknown, flag: string): string {
  if (typeof value !== 'string' || value === '') throw new CliUsageError(`${flag} is required`);
  return value;
}

export async function pushCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    server: { type: 'string' }, repo: { type: 'string' }, line: { type: 'string' }, parent: { type: 'string' },
    'no-line': { type: 'boolean', default: false }, message: { type: 'string' }, level: { type: 'string' },
    quiet: { type: 'boolean', short: 'q', default: false }, json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) { process.stdout.write(PUSH_HELP); return 0; }
  if (positionals.length > 1) throw new CliUsageError('push takes one directory');
  const level = values.level === undefined ? 3 : Number(values.level);
  if (!Number.isInteger(level) || level < 1 || level > 19) throw new CliUsageError('--level must be 1 to 19');
  const dir = path.resolve(positionals[0] ?? '.');
  const wc = readWorkingCopy(dir);
  if (!wc && positionals.length === 0) throw new CliUsageError('push takes a directory (or run it inside a working copy made by cairn checkout)');
  if (wc) {
    for (const [flag, mine, given] of [['--server', wc.server, values.server], ['--repo', String(wc.repo), values.repo], ['--line', wc.line, values.line]] as const) {
      if (given !== undefined && given !== mine && !(flag === '--server' && safeNormalize(String(given)) === mine)) {
        throw new CliUsageError(`${dir} is a working copy of ${flag === '--line' ? 'line' : flag.slice(2)} ${mine}; ${flag} ${given} does not match (push a plain copy for anything else)`);
      }
    }
    if (values.parent !== undefined) throw new CliUsageError('--parent is not used in a working copy: its base is the parent');
  }
  const result = await push({
    server: wc ? wc.server : required(values.server, '--server'),
    repo: wc ? wc.repo : repoIndex(values.repo, '--repo'),
    line: wc ? wc.line : values['no-line'] === true ? (values.line as string | undefined) : required(values.line, '--line'),
    parent: values.parent as string | undefined,
    base: wc ? wc.base : undefined,
    moveLine: !values['no-line'],
    message: values.message as string | undefined,
    dir,
    progress: !values.quiet,
    compressionLevel: level,
    onSkipped: (rel) => process.stderr.write(`cairn: warning: skipped ${rel} (not a file, directory or symlink)\n`),
  });
  if (wc && values['no-line'] !== true && !result.unchanged) await writeWorkingCopy(dir, { ...wc, base: result.snapshot_id });
  emit(result, useJson(values.json), () => (result.unchanged
    ? `nothing to push: ${result.line} is at ${short(result.snapshot_id)} and the tree is unchanged`
    : `pushed ${short(result.snapshot_id)}${result.line === null ? ' (no line)' : ` to ${result.line}${result.line_updated ? '' : ' (line not moved)'}`}: ${result.files} files, ${formatBytes(result.bytes)}; uploaded ${result.uploaded_packs} packs, ${formatBytes(result.uploaded_bytes)}`));
  return 0;
}

function safeNormalize(server: string): string | null {
  try { return normalizeServerUrl(server); } catch { return null; }
}

export async function pullCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    server: { type: 'string' }, repo: { type: 'string' }, line: { type: 'string' }, snapshot: { type: 'string' },
    quiet: { type: 'boolean', short: 'q', default: false }, json: { type: 'boolean', default: false }, 'stall-seconds': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) { process.stdout.write(PULL_HELP); return 0; }
  if (positionals.length !== 1) throw new CliUsageError('pull takes exactly one output directory');
  if ((values.line === undefined) === (values.snapshot === undefined)) throw new CliUsageError('give exactly one of --line and --snapshot');
  const place = placeOf(values.server, values.repo, 'cairn pull');
  const result = await pull({
    server: place.server,
    repo: place.repo!,
    line: values.line as string | undefined,
    snapshot: values.snapshot as string | undefined,
    out: path.resolve(positionals[0]),
    progress: !values.quiet,
    stallSeconds: stallSeconds(values['stall-seconds']),
  });
  emit(result, useJson(values.json), () => `pulled ${short(result.snapshot_id)} into ${positionals[0]}: ${result.files} files, ${formatBytes(result.bytes)}`);
  return 0;
}

/** A checkout of a line that does not exist is a typo until --create says otherwise: name the lines it may have meant. */
async function requireLine(server: string, repo: number, line: string): Promise<void> {
  const client = new CairnClient(server);
  await client.requireRepository(repo);
  if (await client.lineOrNull(repo, line) !== null) return;
  const names = ((await client.collect(client.repoPath(repo, '/lines'), 'lines', 1000)).lines as { name: string }[]).map((l) => l.name);
  throw new Error(`line "${line}" does not exist in repository ${repo}${didYouMean(line, names)}; to start it, run cairn checkout --create --line ${line} (its first push creates it)`);
}

export async function checkoutCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    server: { type: 'string' }, repo: { type: 'string' }, line: { type: 'string' }, create: { type: 'boolean', default: false },
    quiet: { type: 'boolean', short: 'q', default: false }, json: { type: 'boolean', default: false }, 'stall-seconds': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) { process.stdout.write(CHECKOUT_HELP); return 0; }
  if (positionals.length !== 1) throw new CliUsageError('checkout takes exactly one directory');
  const place = placeOf(values.server, values.repo, 'cairn checkout');
  const line = required(values.line, '--line');
  if (values.create !== true) await requireLine(place.server, place.repo!, line);
  const result = await checkout({
    server: place.server,
    repo: place.repo!,
    line,
    dir: path.resolve(positionals[0]),
    progress: !values.quiet,
    stallSeconds: stallSeconds(values['stall-seconds']),
  });
  if (!result.base) process.stderr.write(`cairn: line ${result.line} has no snapshot yet: the working copy is empty and its first push creates it\n`);
  emit(result, useJson(values.json), () => `checked out ${result.line} at ${short(result.base)} into ${positionals[0]}: ${result.files} files, ${formatBytes(result.bytes)}`);
  return 0;
}

export async function statusCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) { process.stdout.write(STATUS_HELP); return 0; }
  if (positionals.length > 1) throw new CliUsageError('status takes at most one directory');
  const result = await status(path.resolve(positionals[0] ?? '.'));
  emit(result, useJson(values.json), () => {
    const lines = [`line ${result.line} of repository ${result.repo} on ${result.server}, base ${short(result.base)}`];
    if (result.behind) lines.push(`the line moved to ${short(result.line_head)}: run cairn update before pushing`);
    for (const [label, list] of [['added', result.added], ['modified', result.modified], ['deleted', result.deleted]] as const) {
      for (const p of list) lines.push(`  ${label.padEnd(9)} ${p}`);
    }
    if (result.clean) lines.push('no local changes');
    return lines.join('\n');
  });
  return 0;
}

export async function updateCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    quiet: { type: 'boolean', short: 'q', default: false }, json: { type: 'boolean', default: false }, 'stall-seconds': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) { process.stdout.write(UPDATE_HELP); return 0; }
  if (positionals.length > 1) throw new CliUsageError('update takes at most one directory');
  const result = await update(path.resolve(positionals[0] ?? '.'), !values.quiet, stallSeconds(values['stall-seconds']));
  emit(result, useJson(values.json), () => (result.up_to_date
    ? `already up to date with ${result.line} at ${short(result.base)}`
    : `updated to ${short(result.base)} on ${result.line}: ${result.updated.length} updated, ${result.deleted.length} deleted, ${result.kept_local.length} local changes kept`));
  return 0;
}

export async function syncCommand(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, {
    from: { type: 'string' }, 'from-repo': { type: 'string' }, to: { type: 'string' }, 'to-repo': { type: 'string' },
    snapshot: { type: 'string' }, line: { type: 'string' }, json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) { process.stdout.write(SYNC_HELP); return 0; }
  const result = await sync({
    from: required(values.from, '--from'),
    fromRepo: repoIndex(values['from-repo'], '--from-repo'),
    to: required(values.to, '--to'),
    toRepo: repoIndex(values['to-repo'], '--to-repo'),
    snapshot: required(values.snapshot, '--snapshot'),
    line: values.line as string | undefined,
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return 0;
}
