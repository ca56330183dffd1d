// `cairn push`, `cairn pull`, `cairn sync`: thin wrappers over lib/client/transfer.ts. Each
// prints one JSON object on stdout.
import path from 'node:path';
import { parseU32 } from '../domain/repository.js';
import { pull, push, sync } from '../client/transfer.js';
import { CliUsageError, parseCommandArgs } from './args.js';

export const PUSH_HELP = `Usage: cairn push --server URL --repo N --line NAME [--parent ID] [--no-line] [--message M] DIR

Snapshot DIR and send it: walk the tree, hash it, pack only what the server lacks (compared
with the parent snapshot), upload missing packs, commit the snapshot and move the line.
Prints one JSON object with snapshot_id. An unchanged tree uploads nothing and reports
"unchanged": true with the current head.

Options:
  --server URL    cairn server, e.g. http://127.0.0.1:8088
  --repo N        repository index
  --line NAME     line to read the parent from and to move (compare-and-set on its head)
  --parent ID     parent snapshot (default: the line's head)
  --no-line       commit the snapshot without moving the line
  --message M     snapshot message
  --level N       zstd compression level (default 3)
`;

export const PULL_HELP = `Usage: cairn pull --server URL --repo N (--line NAME | --snapshot ID) OUT_DIR

Materialize a snapshot into OUT_DIR (absent or empty) byte for byte: files, executable bits,
symlinks and empty directories. Prints one JSON object.
`;

export const SYNC_HELP = `Usage: cairn sync --from URL --from-repo N --to URL --to-repo M --snapshot ID [--line NAME]

Copy a snapshot and its history between repositories (and servers): pull manifest from the
source, upload the packs the destination lacks, commit the rows unchanged, and move --line on
the destination (compare-and-set on its current head). Prints one JSON object.
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
    help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) { process.stdout.write(PUSH_HELP); return 0; }
  if (positionals.length !== 1) throw new CliUsageError('push takes exactly one directory');
  const level = values.level === undefined ? 3 : Number(values.level);
  if (!Number.isInteger(level) || level < 1 || level > 19) throw new CliUsageError('--level must be 1 to 19');
  const result = await push({
    server: required(values.server, '--server'),
    repo: repoIndex(values.repo, '--repo'),
    line: required(values.line, '--line'),
    parent: values.parent as string | undefined,
    moveLine: !values['no-line'],
    message: values.message as string | undefined,
    dir: path.resolve(positionals[0]),
    progress: process.stderr.isTTY === true,
    compressionLevel: level,
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return 0;
}

export async function pullCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    server: { type: 'string' }, repo: { type: 'string' }, line: { type: 'string' }, snapshot: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) { process.stdout.write(PULL_HELP); return 0; }
  if (positionals.length !== 1) throw new CliUsageError('pull takes exactly one output directory');
  if ((values.line === undefined) === (values.snapshot === undefined)) throw new CliUsageError('give exactly one of --line and --snapshot');
  const result = await pull({
    server: required(values.server, '--server'),
    repo: repoIndex(values.repo, '--repo'),
    line: values.line as string | undefined,
    snapshot: values.snapshot as string | undefined,
    out: path.resolve(positionals[0]),
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return 0;
}

export async function syncCommand(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, {
    from: { type: 'string' }, 'from-repo': { type: 'string' }, to: { type: 'string' }, 'to-repo': { type: 'string' },
    snapshot: { type: 'string' }, line: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false },
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
