// `cairn archive verify`: restore the archive's newest manifest (or a sample of repositories, or
// all) into a temporary directory and check it (lib/authority/archive-verify.ts;
// docs/operations.md "Verifying the archive"). Runs against the object store only.
import { openArchiveArgs } from './archive-store-args.js';
import { verifyArchive, type VerifyReport, type VerifySelection } from '../authority/archive-verify.js';
import { formatBytes } from '../client/progress.js';
import { CliUsageError, parseCommandArgs } from './args.js';
import { emit, useJson } from './output.js';
import { parseConcurrency } from './restore-command.js';

export const ARCHIVE_VERIFY_HELP = `Usage: cairn archive verify --from s3://BUCKET/PREFIX [--sample N | --all]
                           [--concurrency N] [--archive-config FILE]
                           [--archive-key-file FILE] [--json]

Prove that the archive restores: restore the newest manifest of the archive (by default the
repository whose newest manifest was captured last; --sample N: N repositories chosen at random;
--all: every repository) into a temporary directory with the restore code — every object the
manifest names is downloaded and checked against its size and sha256 — then open it as cairn
serve does and check it as cairn fsck does (every record of every log read and decoded, every
index segment, pack and tree). Nothing in the archive is changed; the temporary directory
is removed. A failure names the repository, the manifest and the damaged or missing object.

Options:
  --from URL            the archive: s3://BUCKET/PREFIX
  --sample N            verify N repositories chosen at random
  --all                 verify every repository that has a manifest
  --concurrency N       objects downloaded at once (default 8, at most 256)
  --archive-config FILE JSON connection settings (region, endpoint, access_key_id,
                        secret_access_key, session_token, force_path_style, connect_timeout_ms,
                        timeout_ms, max_attempts); without it, the AWS_* environment
  --archive-key-file FILE
                        the archive's keys (lines KEYID:BASE64, mode 600): needed when the
                        archive is encrypted (serve --archive-key-file); the object headers
                        name the key id each needs
  --json                print the report as JSON (the default when stdout is not a terminal)

Exit codes: 0 every repository verified, 1 the object store failed or the archive holds no
manifest, 2 usage, 5 a repository failed verification (a damaged, missing or inconsistent
object or manifest: named).
`;

function human(r: VerifyReport): string {
  const lines = [`${r.ok ? 'verified' : 'FAILED'}: ${r.archive} (${r.selection}; ${r.archived} repositor${r.archived === 1 ? 'y' : 'ies'} archived)`];
  for (const x of r.repositories) {
    if (x.ok) lines.push(`  ok      repository ${x.repository}: manifest ${x.manifest}, commit ${x.commit} captured ${x.captured_at}, ${x.objects} objects, ${formatBytes(x.bytes)}`);
    else lines.push(`  FAILED  repository ${x.repository}: manifest ${x.manifest ?? '-'}: ${x.problem}`);
  }
  return lines.join('\n');
}

export async function archiveVerifyCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    from: { type: 'string' },
    sample: { type: 'string' },
    all: { type: 'boolean', default: false },
    concurrency: { type: 'string', default: '8' },
    'archive-config': { type: 'string' },
    'archive-key-file': { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) { process.stdout.write(ARCHIVE_VERIFY_HELP); return 0; }
  if (positionals.length) throw new CliUsageError('cairn archive verify takes no arguments');
  if (typeof values.from !== 'string' || values.from === '') throw new CliUsageError('--from s3://BUCKET/PREFIX is required');
  if (values.sample !== undefined && values.all) throw new CliUsageError('--sample and --all exclude each other');
  let selection: VerifySelection = { kind: 'newest' };
  if (values.all) selection = { kind: 'all' };
  if (values.sample !== undefined) {
    if (!/^[1-9][0-9]{0,5}$/.test(String(values.sample))) throw new CliUsageError('--sample must be a number of repositories (1 or more)');
    selection = { kind: 'sample', count: Number(values.sample) };
  }
  const concurrency = parseConcurrency(String(values.concurrency));
  const url = String(values.from);
  const store = await openArchiveArgs(url, values);
  let report: VerifyReport;
  try {
    report = await verifyArchive(store, { url, selection, concurrency });
  } finally {
    store.close();
  }
  const json = useJson(values.json);
  if (report.repositories.length === 0) {
    if (json) emit(report, true, () => '');
    else process.stderr.write(`cairn: the archive ${url} holds no manifest to verify\n`);
    return 1;
  }
  emit(report, json, () => human(report));
  return report.ok ? 0 : 5;
}
