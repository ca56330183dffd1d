// `cairn fsck`: offline check of a data directory; takes the data-dir lock (refuses while a
// server holds it). Prints each problem; exit 1 when there is any. What the next start's
// recovery removes (temp files of writes a crash cut short) is a note, not a problem.
import path from 'node:path';
import { promises as fsp } from 'node:fs';
import { LIFECYCLE_PURGED, type RepositoryRecord } from '../domain/repository.js';
import { lockDataDir } from '../store/datadir-lock.js';
import { findTempFiles } from '../store/durable.js';
import { fsckAuthority, tempFileNote } from '../store/fsck.js';
import { Layout } from '../store/layout.js';
import { openSealKey } from '../store/seal-key.js';
import type { SealKey } from '../domain/sealing.js';
import { checkRegistryEvents } from '../store/registry-events.js';
import { checkAccessLog } from '../store/access-log.js';
import { decodeRegistry } from '../store/registry-file.js';
import { CliUsageError, parseCommandArgs, parseMaxSnapshotPaths, requireDataDir } from './args.js';
import { repositoryInDataDir } from './target.js';
import { DEFAULT_MAX_SNAPSHOT_PATHS } from '../domain/tree-size.js';

export const FSCK_HELP = `Usage: cairn fsck --data DIR [--repo N] [--rebuild-locators] [--max-snapshot-paths N]

Verify a data directory offline: the registry and its event log, the access log (accounts,
tokens, grants: access.log), and for each repository (or only N) every pack hash and frame,
every index checksum and locator, every reachable tree and snapshot, every line head. Prints each problem on its own line and a JSON summary; exits 1 when any problem
is found. Takes the data-directory lock, so it refuses to run while a server holds it.

Notes (on stderr, "note: ...") are not problems: what recovery repaired while fsck opened a
repository, and what the next start of cairn serve removes without loss, such as the temp file
of an upload, a commit or a rewrite cut short by a crash ("... removed at the next start").
fsck itself leaves those files in place. Only notes: exit 0.

Options:
  --data DIR           data directory
  --repo N             check only repository N: an index or a name, looked up in the data
                       directory (a name several active repositories share is refused)
  --rebuild-locators   recreate the blob and tree locator indexes from the packs alone first
  --max-snapshot-paths N
                       paths a snapshot may hold, as cairn serve's option (default 10000000):
                       a snapshot holding more is a problem
  --json               accepted for uniformity: the summary is always JSON
`;

export async function fsckCommand(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, {
    data: { type: 'string' }, repo: { type: 'string' }, 'rebuild-locators': { type: 'boolean', default: false }, json: { type: 'boolean', default: false },
    'max-snapshot-paths': { type: 'string', default: String(DEFAULT_MAX_SNAPSHOT_PATHS) },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) { process.stdout.write(FSCK_HELP); return 0; }
  if (typeof values.data !== 'string') throw new CliUsageError('--data is required');
  const dataDir = path.resolve(values.data);
  const maxSnapshotPaths = parseMaxSnapshotPaths(values['max-snapshot-paths']);
  requireDataDir(dataDir);
  const lock = await lockDataDir(dataDir);
  try {
    const layout = new Layout(dataDir);
    let records: RepositoryRecord[];
    try {
      records = decodeRegistry(await fsp.readFile(layout.registryFile));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') records = [];
      else {
        process.stdout.write(`registry.bin: ${(err as Error).message}\n`);
        return 1;
      }
    }
    // --repo: an index, or a name looked up in this directory's registry.
    const only = values.repo === undefined ? null : repositoryInDataDir(records, String(values.repo), dataDir);
    let problems = 0;
    const summary: Record<string, unknown>[] = [];
    // Sealed drafts read as drafts with the key (without it, as discarded); never created here.
    let sealKey: SealKey | null = null;
    try {
      sealKey = await openSealKey(layout.sealKeyFile, false);
    } catch (err) {
      process.stdout.write(`seal.key: ${(err as Error).message.replace(dataDir + '/', '')}\n`);
      problems++;
    }
    if (only === null) {
      // Temp files outside the repositories' own directories, as CairnService.open sweeps them.
      for (const file of await findTempFiles(dataDir, (dir) => layout.sweepsShallow(dir))) process.stderr.write(`note: ${tempFileNote(path.relative(dataDir, file))}\n`);
      const events = checkRegistryEvents(layout.registryEventsFile);
      for (const p of events.problems) process.stdout.write(`${p}\n`);
      for (const n of events.notes) process.stderr.write(`note: ${n}\n`);
      problems += events.problems.length;
      // Accounts, tokens and grants (cairn serve --auth tokens): every record decodes, in sequence.
      const access = checkAccessLog(layout.accessLogFile);
      for (const p of access.problems) process.stdout.write(`${p}\n`);
      for (const n of access.notes) process.stderr.write(`note: ${n}\n`);
      problems += access.problems.length;
    }
    for (const record of records) {
      if (only !== null && record.repository_index !== only) continue;
      if (record.lifecycle_kind === LIFECYCLE_PURGED) continue;
      const result = await fsckAuthority(layout.repositoryDir(record.repository_index), record.repository_index, { rebuildLocators: values['rebuild-locators'] === true, maxSnapshotPaths, sealKey });
      for (const p of result.problems) process.stdout.write(`repository ${record.repository_index}: ${p}\n`);
      for (const n of result.notes) process.stderr.write(`repository ${record.repository_index}: note: ${n}\n`);
      problems += result.problems.length;
      summary.push({ repository_index: record.repository_index, problems: result.problems.length, ...result.counts });
    }
    if (only !== null && summary.length === 0) throw new CliUsageError(`repository ${only} is not registered (or purged)`);
    process.stdout.write(`${JSON.stringify({ ok: problems === 0, problems, repositories: summary })}\n`);
    return problems === 0 ? 0 : 1;
  } finally {
    await lock.release();
  }
}
