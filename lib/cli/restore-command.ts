// `cairn restore --from s3://…`: rebuild a data directory from the archive (storage-layout.md
// §20; docs/operations.md "Restore"). The directory is built beside DIR and moved into place
// only after it opened and checked clean, so a failure never leaves a half-restored DIR.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { ObjectStoreError } from '../archive/object-store.js';
import { archivedRepositoryRecords, restoreArchive, type ManifestTarget, type RestoredRepository } from '../archive/restore.js';
import { repositoryInArchive } from './target.js';
import { openArchiveArgs } from './archive-store-args.js';
import { proveRestored } from '../authority/archive-verify.js';
import { parseU32 } from '../domain/repository.js';
import { formatBytes, progressFor } from '../client/progress.js';
import { Layout } from '../store/layout.js';
import { CliUsageError, parseCommandArgs } from './args.js';
import { emit, useJson } from './output.js';

export const RESTORE_HELP = `Usage: cairn restore --from s3://BUCKET[/PREFIX] --data DIR [--repo N]... [--all]
                     [--at TIME | --seq N] [--concurrency N] [--archive-config FILE]
                     [--archive-key-file FILE] [--json]

Rebuild a data directory from an archive that cairn serve --archive ships to: for each
repository, the newest manifest at or before the target, every object it names (each checked
against its size and sha256), the commit point last. The result is opened (recovery) and
checked (fsck) before it is moved to DIR; on any failure DIR is not created. A damaged or
missing object is reported with its key and the manifest's key.

Options:
  --from URL            the archive: s3://bucket/prefix
  --data DIR            the new data directory: must not exist, or be empty
  --repo N|NAME         restore repository N, or the one named NAME in the archive (repeatable);
                        the registry keeps every index up to the highest one, others as purged
                        placeholders
  --all                 restore every repository that has a manifest (the default)
  --at TIME             the newest commit point captured at or before TIME (ISO 8601, e.g.
                        2026-11-26T12:00:00Z, or unix seconds)
                        A newer manifest that cannot be read (its time unknown) is skipped
                        with a warning naming it
  --seq N               the newest commit point whose commit generation is at most N
  --concurrency N       objects downloaded at once (default 8, at most 256); many small
                        objects restore about as fast as the store answers requests in parallel
  --archive-config FILE a JSON file of region, endpoint, access_key_id, secret_access_key,
                        session_token, force_path_style, connect_timeout_ms, timeout_ms,
                        max_attempts (the standard AWS_* environment otherwise); secrets are
                        never printed. Every request to the store is bounded by the timeouts
                        (defaults 5 s to connect, 20 s without a byte, 3 tries), so a hung
                        store fails the restore instead of hanging it
  --archive-key-file FILE
                        the archive's keys (lines KEYID:BASE64, mode 600): needed when the
                        archive is encrypted (serve --archive-key-file); the object headers
                        name the key id each needs
  --json                print the result as JSON (the default when stdout is not a terminal)
  -h, --help            show this help

The restored DATA/archive.json names the archive with generation 0: the directory has not
claimed a generation, so it fences nobody until it is served with --archive.
`;

/** `--concurrency N`: objects fetched at once, 1 to 256. */
export function parseConcurrency(text: string): number {
  if (!/^[1-9][0-9]{0,2}$/.test(text) || Number(text) > 256) throw new CliUsageError('--concurrency must be a number of objects from 1 to 256');
  return Number(text);
}

/** `--at`: ISO 8601 or unix seconds, as µs since the epoch. */
export function parseAt(text: string): bigint {
  if (/^[0-9]{1,12}(\.[0-9]{1,6})?$/.test(text)) return BigInt(Math.round(Number(text) * 1_000_000));
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text)) throw new CliUsageError('--at must be an ISO 8601 time (2026-11-26T12:00:00Z) or unix seconds');
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new CliUsageError(`--at ${text} is not a time`);
  return BigInt(ms) * 1000n;
}

export async function restoreCommand(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, {
    from: { type: 'string' },
    data: { type: 'string' },
    repo: { type: 'string', multiple: true, default: [] },
    all: { type: 'boolean', default: false },
    at: { type: 'string' },
    seq: { type: 'string' },
    'archive-config': { type: 'string' },
    'archive-key-file': { type: 'string' },
    concurrency: { type: 'string', default: '8' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) { process.stdout.write(RESTORE_HELP); return 0; }
  const concurrency = parseConcurrency(String(values.concurrency));
  if (typeof values.from !== 'string') throw new CliUsageError('--from s3://bucket/prefix is required');
  if (typeof values.data !== 'string') throw new CliUsageError('--data DIR is required (a new, or empty, directory)');
  // Digits are an index, checked now; a name is looked up in the archive once it is opened.
  const repoValues = values.repo as string[];
  for (const r of repoValues) {
    if (/^\d+$/.test(r)) {
      try { parseU32(r, '--repo'); } catch (err) { throw new CliUsageError((err as Error).message); }
    } else if (r === '' || /[\u0000-\u001f]/.test(r)) throw new CliUsageError(`--repo ${JSON.stringify(r)} is neither an index nor a repository name`);
  }
  if (repoValues.length && values.all) throw new CliUsageError('--repo and --all exclude each other');
  if (values.at !== undefined && values.seq !== undefined) throw new CliUsageError('--at and --seq exclude each other');
  const target: ManifestTarget = {};
  if (values.at !== undefined) target.atUs = parseAt(String(values.at));
  if (values.seq !== undefined) {
    if (!/^[1-9][0-9]{0,19}$/.test(String(values.seq))) throw new CliUsageError('--seq must be a commit generation (a positive integer)');
    target.seq = BigInt(String(values.seq));
  }
  const json = useJson(values.json);
  const url = String(values.from);
  const store = await openArchiveArgs(url, values);
  let repos: number[] = [];
  if (repoValues.some((r) => !/^\d+$/.test(r))) {
    const records = await archivedRepositoryRecords(store);
    repos = repoValues.map((r) => repositoryInArchive(records, r, url));
  } else repos = repoValues.map((r) => Number(r));
  const bar = progressFor(process.stderr, !json);
  let current = -1;
  let shown = 0;
  const dataDir = path.resolve(String(values.data));
  let restored: RestoredRepository[];
  try {
    restored = await restoreArchive(store, {
      url,
      repositories: repos.length ? repos : 'all',
      target,
      dataDir,
      concurrency,
      onWarning: (message) => {
        bar.stop();
        process.stderr.write(`cairn: warning: ${message}\n`);
      },
      onProgress: (p) => {
        if (p.repository !== current) {
          current = p.repository;
          shown = 0;
          bar.start(`repository ${p.repository}`, p.totalBytes);
        }
        bar.increment(p.bytes - shown);
        shown = p.bytes;
      },
      verify: async (dir) => {
        bar.stop();
        await proveRestored(dir, (await readdir(new Layout(dir).repositoriesDir)).map(Number).filter((n) => Number.isInteger(n)));
      },
    });
  } catch (err) {
    // Say what state the failure left: restore builds beside DIR and renames last.
    if (err instanceof Error) err.message = `${err.message} (restore stopped: ${dataDir} was not written; the partial copy beside it was removed)`;
    // No key, or not the archive's (--archive-key-file): the invocation is what must change (exit 2).
    if (err instanceof ObjectStoreError && err.kind === 'config') throw new CliUsageError(err.message);
    throw err;
  } finally {
    bar.stop();
    store.close();
  }
  emit({ ok: true, data: dataDir, from: url, repositories: restored }, json, () => [
    `restored ${restored.length} repositor${restored.length === 1 ? 'y' : 'ies'} into ${dataDir}:`,
    ...restored.map((r) => `  repository ${r.repository}: commit ${r.commit} captured ${r.captured_at}, ${r.objects} objects, ${formatBytes(r.bytes)}`),
  ].join('\n'));
  return 0;
}
