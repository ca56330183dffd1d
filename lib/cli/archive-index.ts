// `cairn archive index`: give the manifests shipped before the time index their markers and move
// the index's origin down (lib/archive/time-index.ts; storage-layout.md §20.1.1), so `cairn
// restore --at` on an old archive costs a few requests, not one read per newer manifest.
// Runs against the object store only, beside a writer that ships (it only adds markers).
import { listArchivedRepositories } from '../archive/restore.js';
import { backfillTimeIndex, type TimeIndexReport } from '../archive/time-index.js';
import { openArchiveArgs } from './archive-store-args.js';
import { CliUsageError, parseCommandArgs } from './args.js';
import { emit, useJson } from './output.js';

export const ARCHIVE_INDEX_HELP = `Usage: cairn archive index --from s3://BUCKET/PREFIX [--repo N] [--archive-config FILE]
                          [--archive-key-file FILE] [--dry-run] [--json]

Index the manifests an archive holds from before its time index (written by an older cairn):
each gets its marker, then the index's origin (times-from) moves down to the oldest of them, so
cairn restore --at and serve --follow --at find a time with a few requests however many
manifests there are. Markers are written first and the origin last, so an interrupted run
leaves the index correct (run it again to finish). A manifest that cannot be read gets no
marker, and the origin stays above it: a restore still reads it and says it is damaged.
Safe while a writer ships (it adds markers; the writer's own are untouched); run it once after
an upgrade.

Options:
  --from URL            the archive: s3://BUCKET/PREFIX
  --repo N              one repository (default: every repository in the archive)
  --archive-config FILE JSON connection settings (as cairn archive prune)
  --archive-key-file FILE
                        the archive's keys, when it is encrypted (serve --archive-key-file)
  --dry-run             read the manifests and report; write nothing
  --json                print the report as JSON (the default when stdout is not a terminal)

Exit codes: 0 ok, 1 the object store failed, 2 usage, 5 a manifest could not be read (named;
every other one was indexed).
`;

export async function archiveIndexCommand(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, {
    from: { type: 'string' },
    repo: { type: 'string' },
    'archive-config': { type: 'string' },
    'archive-key-file': { type: 'string' },
    'dry-run': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) { process.stdout.write(ARCHIVE_INDEX_HELP); return 0; }
  if (typeof values.from !== 'string' || values.from === '') throw new CliUsageError('--from s3://BUCKET/PREFIX is required');
  let only: number | null = null;
  if (values.repo !== undefined) {
    if (!/^(0|[1-9][0-9]{0,9})$/.test(String(values.repo)) || Number(values.repo) > 0xffff_ffff) throw new CliUsageError('--repo must be a repository index (0 to 4294967295)');
    only = Number(values.repo);
  }
  const store = await openArchiveArgs(values.from, values);
  try {
    const indexes = only !== null ? [only] : await listArchivedRepositories(store);
    const reports: TimeIndexReport[] = [];
    for (const index of indexes) {
      const r = await backfillTimeIndex(store, index, { dryRun: values['dry-run'] === true });
      reports.push(r);
      if (process.stderr.isTTY) process.stderr.write(`repository ${index}: ${r.indexed} manifests ${values['dry-run'] ? 'to index' : 'indexed'}\n`);
    }
    const result = { archive: values.from, dry_run: values['dry-run'] === true, repositories: reports };
    emit(result, useJson(values.json), () => reports.map((r) => [
      `repository ${r.repository}: ${r.indexed} ${r.indexed === 1 ? 'manifest' : 'manifests'} ${result.dry_run ? 'would be indexed' : 'indexed'}; the index starts at ${r.from_after ?? '(no index)'}${r.from_after !== r.from_before ? ` (was ${r.from_before ?? 'none'})` : ''}`,
      ...r.damaged.map((d) => `  damaged, left unindexed: ${d.key}: ${d.problem}`),
    ].join('\n')).join('\n'));
    const damaged = reports.flatMap((r) => r.damaged);
    if (damaged.length > 0) {
      process.stderr.write(`cairn: ${damaged.length} ${damaged.length === 1 ? 'manifest' : 'manifests'} could not be read and ${damaged.length === 1 ? 'was' : 'were'} left unindexed (first: ${damaged[0]!.key})\n`);
      return 5;
    }
    return 0;
  } finally {
    store.close();
  }
}
