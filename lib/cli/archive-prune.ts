// `cairn archive prune`: apply a retention policy to an archive in object storage and sweep the
// objects no kept manifest names (lib/archive/prune.ts; docs/operations.md "Archive retention").
// Runs against the object store only: no data directory, no server.
import { pruneArchive, type PruneReport } from '../archive/prune.js';
import { openArchiveArgs } from './archive-store-args.js';
import { DEFAULT_GRACE, DEFAULT_RETENTION, parseDuration, parseRetention } from '../domain/archive-retention.js';
import { Invalid } from '../domain/errors.js';
import { CliUsageError, parseCommandArgs } from './args.js';
import { emit, useJson } from './output.js';

export const ARCHIVE_PRUNE_HELP = `Usage: cairn archive prune --from s3://BUCKET/PREFIX [--archive-config FILE] [--keep POLICY]
                          [--archive-key-file FILE] [--grace DURATION] [--dry-run] [--json]

Delete the manifests a retention policy lets go, then every object of an authority that no kept
manifest names and that is older than the grace period (mark and sweep). Manifests are deleted
first, so a prune that stops midway leaves only unreferenced objects, never a manifest naming a
missing one. The newest manifest of every repository is always kept (unless it records that
the authority was purged). A kept manifest that does not decode stops the prune before anything
is deleted. generations/, lease/ and archive-id are never touched.

Options:
  --from URL            the archive: s3://BUCKET/PREFIX
  --archive-config FILE JSON connection settings (region, endpoint, access_key_id,
                        secret_access_key, session_token, force_path_style, connect_timeout_ms,
                        timeout_ms, max_attempts); without it, the AWS_* environment and the
                        SDK's own chain
  --archive-key-file FILE
                        the archive's keys (lines KEYID:BASE64, mode 600): needed when the
                        archive is encrypted (serve --archive-key-file); the object headers
                        name the key id each needs
  --keep POLICY         comma-separated rules KIND:DURATION (default ${DEFAULT_RETENTION}):
                          all:W     every manifest captured in the last W
                          hourly:W  the newest of each UTC hour in the last W
                          daily:W   the newest of each UTC day in the last W
                          weekly:W  the newest of each week (Monday to Sunday, UTC) in the last W
                        DURATION is a number and a unit: s, m, h, d or w (30d, 48h)
  --grace DURATION      leave unreferenced objects younger than this (default ${DEFAULT_GRACE}): an
                        upload whose manifest is not written yet
  --dry-run             report what would be deleted; delete nothing
  --json                print the report as JSON (the default when stdout is not a terminal)

Exit codes: 0 ok, 1 the object store failed (the message says which request), 2 usage, 5 a
manifest the prune must read is damaged (named; nothing was deleted).
`;


function kib(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

function human(where: string, r: PruneReport): string {
  const verb = r.dry_run ? 'would delete' : 'deleted';
  const lines = [
    `${r.dry_run ? 'dry run: ' : ''}pruned ${where} (keep ${r.policy}, grace ${r.grace}; ${r.repositories} ${r.repositories === 1 ? 'repository' : 'repositories'})`,
    `manifests: ${r.manifests.kept} kept, ${verb} ${r.manifests.deleted} (${kib(r.manifests.deleted_bytes)})`,
    `objects:   ${r.objects.referenced} referenced, ${verb} ${r.objects.deleted} (${kib(r.objects.deleted_bytes)}), ${r.objects.within_grace} unreferenced within the grace period`,
  ];
  if (r.purged.length > 0) lines.push(`purged:    repositories ${r.purged.join(', ')} (their newest manifest is not kept for being the newest)`);
  if (r.missing.count > 0) lines.push(`missing:   ${r.missing.count} objects named by kept manifests are not in the listing, e.g. ${r.missing.first[0]}`);
  return lines.join('\n');
}

export async function archivePruneCommand(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, {
    from: { type: 'string' },
    'archive-config': { type: 'string' },
    'archive-key-file': { type: 'string' },
    keep: { type: 'string', default: DEFAULT_RETENTION },
    grace: { type: 'string', default: DEFAULT_GRACE },
    'dry-run': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) { process.stdout.write(ARCHIVE_PRUNE_HELP); return 0; }
  if (typeof values.from !== 'string' || values.from === '') throw new CliUsageError('--from s3://BUCKET/PREFIX is required');
  let policy;
  let graceMs;
  try {
    policy = parseRetention(String(values.keep), '--keep');
    graceMs = parseDuration(String(values.grace), '--grace');
  } catch (err) {
    if (err instanceof Invalid) throw new CliUsageError(err.message);
    throw err;
  }
  const store = await openArchiveArgs(values.from, values);
  try {
    const progress = process.stderr.isTTY === true ? (m: string): void => { process.stderr.write(`${m}\n`); } : undefined;
    const report = await pruneArchive(store, { policy, graceMs, dryRun: values['dry-run'] === true, ...(progress ? { log: progress } : {}) });
    emit(report, useJson(values.json), () => human(values.from as string, report));
    if (report.missing.count > 0) process.stderr.write(`cairn: warning: ${report.missing.count} objects named by kept manifests are not in the listing (first: ${report.missing.first[0]})\n`);
    return 0;
  } finally {
    store.close();
  }
}
