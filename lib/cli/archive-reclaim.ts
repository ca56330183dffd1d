// `cairn archive reclaim --data DIR`: the operator's decision that a data directory takes its
// archive back (docs/operations.md "One writer"). A directory a newer writer fenced records so
// in DATA/archive.json and claims nothing at any later start, whatever URL it is given; this
// clears the fence and sets the generation to "0", so the next `serve --archive` claims the
// next generation (reason "reclaim") — which fences the writer that holds the archive now. A
// handover recorded there (docs/operations.md "Planned switchover") is cleared the same way.
// Offline, like pgBackRest's `stanza-create --force` after a failover: it takes the data
// directory's lock (no server may run on it) and touches no object store.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { readArchiveFile, writeArchiveFile, type ArchiveFile } from '../archive/archive-file.js';
import { lockDataDir } from '../store/datadir-lock.js';
import { Layout } from '../store/layout.js';
import { CliUsageError, parseCommandArgs } from './args.js';
import { emit, useJson } from './output.js';

export const RECLAIM_HELP = `Usage:
  cairn archive reclaim --data DIR [--json]

Take the archive back for the data directory DIR, which a newer writer fenced (a promoted
standby, another directory that claimed the archive). A fenced directory records the fence in
DIR/archive.json and never claims the archive again by itself, whatever spelling of the URL it
is started with. This clears the fence: the next cairn serve --data DIR --archive URL claims
the next generation (reason "reclaim"), which fences the writer that ships now — its writes
after DIR's last shipped commit are not in DIR's history. Run it only when that writer is to
stop being the writer. A directory that handed the archive over (cairn promote --switchover)
is read-only at every start; this clears that too, and DIR writes again. The server must not
run on DIR (its lock is taken); the archive is not contacted.

  --data DIR    the data directory (it must hold archive.json)
  --json        print JSON (the default when stdout is not a terminal)
`;

export async function archiveReclaimCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    data: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) {
    process.stdout.write(RECLAIM_HELP);
    return 0;
  }
  if (positionals.length) throw new CliUsageError('cairn archive reclaim takes no arguments');
  if (typeof values.data !== 'string' || values.data === '') throw new CliUsageError('--data DIR is required');
  const dataDir = path.resolve(values.data);
  const layout = new Layout(dataDir);
  if (!existsSync(layout.archiveFile)) throw new CliUsageError(`${dataDir} has no archive.json: it never shipped to an archive, there is nothing to reclaim`);
  const lock = await lockDataDir(dataDir);
  let before: ArchiveFile;
  let after: ArchiveFile;
  try {
    const read = await readArchiveFile(layout.archiveFile);
    if (!read) throw new CliUsageError(`${dataDir} has no archive.json: there is nothing to reclaim`);
    before = read;
    const { fenced: _fenced, handed_over: _handedOver, ...rest } = read;
    after = { ...rest, generation: '0', reclaimed_at: new Date().toISOString() };
    await writeArchiveFile(layout.archiveFile, after, { clearFence: true });
  } finally {
    await lock.release();
  }
  const handed = before.handed_over;
  emit({ ok: true, data: dataDir, archive: after.url, was: { generation: before.generation, fenced: before.fenced ?? null, handed_over: handed ? { successor: handed.successor, at: handed.handed_over_at } : null }, next: 'the next serve --archive claims a new generation (reason reclaim)' }, useJson(values.json), () => [
    `${dataDir}: ${before.fenced ? `cleared the fence (generation ${before.fenced.by} fenced generation ${before.generation} at ${before.fenced.at})` : `was not fenced (generation ${before.generation})`}.`,
    ...(handed ? [`Cleared the handover${handed.successor ? ` to ${handed.successor}` : ''} of ${handed.handed_over_at}: the server on it accepts writes again.`] : []),
    `The next cairn serve --data ${values.data} --archive ${after.url} claims a new generation of ${after.url}, which fences the writer that holds it now.`,
  ].join('\n'));
  return 0;
}
