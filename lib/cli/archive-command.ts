// `cairn archive`: `status`, what a server's shipping to its archive looks like (the `archive`
// object of GET /healthz, docs/operations.md "Archive"; one JSON object with --json or when
// stdout is not a terminal, a table on a terminal), and `prune` (lib/cli/archive-prune.ts).
import { serverOf } from './target.js';
import { CairnClient } from '../client/http.js';
import { CliUsageError, parseCommandArgs } from './args.js';
import { emit, table, useJson } from './output.js';
import { archivePruneCommand } from './archive-prune.js';
import { archiveReclaimCommand } from './archive-reclaim.js';
import { archiveVerifyCommand } from './archive-verify.js';
import { archiveIndexCommand } from './archive-index.js';

export const ARCHIVE_HELP = `Usage:
  cairn archive status --server URL [--json]      (cairn archive status --help)
  cairn archive prune --from s3://BUCKET/PREFIX [--keep POLICY] [--grace DURATION] [--dry-run]
                                                 (cairn archive prune --help)
  cairn archive reclaim --data DIR [--json]       (cairn archive reclaim --help)
  cairn archive verify --from s3://BUCKET/PREFIX [--sample N | --all]
                                                 (cairn archive verify --help)
  cairn archive index --from s3://BUCKET/PREFIX [--repo N] [--dry-run]
                                                 (cairn archive index --help)

The archive is a continuous copy of every repository in S3-compatible object storage,
shipped by \`cairn serve --archive s3://BUCKET/PREFIX\` (docs/operations.md "Archive");
prune applies a retention policy to it (docs/operations.md "Archive retention"); reclaim lets
a data directory that a newer writer fenced claim the archive again (docs/operations.md "One
writer"); verify restores the newest manifest into a temporary directory and checks it
(docs/operations.md "Verifying the archive"); index gives manifests shipped before the time
index their markers (docs/operations.md "Point-in-time restore").
`;

const STATUS_HELP = `Usage:
  cairn archive status --server URL [--json]

How the server's shipping to its archive stands: the archive and the generation it ships
under, its state (shipping, idle, error: retrying after a failure, fenced: a newer writer
claimed the archive and this server stopped), whether commits wait for the archive
(--archive-sync), the lag: the age of the oldest commit no stored manifest covers and how many
commits are uncovered, over every repository and per repository (with the commit shipped last,
the commit committed now and the lag in bytes); the last error; with serve
--archive-verify-every, the last verification. Secrets are never part of it.
On a standby (serve --follow): its state and, per repository, the commit applied, the
writer's newest manifest as last read from the store, the commits and manifests behind it and
the lag (the newest manifest's capture time minus the applied one's: 0 only when it applied
the newest); JSON {"follow": {...}}.
Exits 1 when the server neither archives nor follows, is fenced, or (a standby) cannot read
the archive.

  --server URL    cairn server, e.g. http://127.0.0.1:8088 (default: $CAIRN_SERVER, the working
                  copy's or git remote's, or the one server you are signed in to)
  --json          print JSON (the default when stdout is not a terminal)
`;

interface ArchiveStatus {
  url: string;
  generation: string;
  state: string;
  sync?: boolean;
  lag_seconds?: number;
  uncovered_commits?: number;
  sealed_with?: string | null;
  repositories: { repository: number; shipped_commit: string; committed: string; lag_seconds: number; lag_bytes: number; uncovered_commits?: number }[];
  last_error: string | null;
  last_shipped_at: string | null;
  last_verify?: { at: string; ok?: boolean; repositories?: { repository: number; manifest: string | null; ok: boolean; problem: string | null }[]; error?: string } | null;
}

interface FollowStatus {
  url: string;
  state: string;
  generation: string | null;
  lag_seconds: number;
  behind_commits: number;
  repositories: { repository: number; applied_commit: string; newest_commit: string; behind_commits: number; behind_manifests: number; lag_seconds: number }[];
  last_error: string | null;
  last_applied_at: string | null;
  checked_at: string | null;
}

export async function archiveCommand(argv: string[]): Promise<number> {
  const sub = argv[0];
  if (sub === undefined || sub === '--help' || sub === '-h') {
    process.stdout.write(ARCHIVE_HELP);
    return sub === undefined ? 2 : 0;
  }
  if (sub === 'prune') return archivePruneCommand(argv.slice(1));
  if (sub === 'reclaim') return archiveReclaimCommand(argv.slice(1));
  if (sub === 'verify') return archiveVerifyCommand(argv.slice(1));
  if (sub === 'index') return archiveIndexCommand(argv.slice(1));
  if (sub !== 'status') throw new CliUsageError(`unknown archive subcommand "${sub}" (status, prune, reclaim, verify, index)`);
  const { values, positionals } = parseCommandArgs(argv.slice(1), {
    server: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) {
    process.stdout.write(STATUS_HELP);
    return 0;
  }
  if (positionals.length) throw new CliUsageError('cairn archive status takes no arguments');
  const server = serverOf(values.server, 'cairn archive status');
  const health = await new CairnClient(server).json<{ archive?: ArchiveStatus; follow?: FollowStatus }>('GET', '/healthz');
  const json = useJson(values.json);
  if (!health.archive && health.follow) return followStatus(health.follow, json);
  if (!health.archive) {
    if (json) emit({ archive: null }, true, () => '');
    else process.stderr.write(`cairn: ${server} does not ship to an archive (start it with --archive s3://BUCKET/PREFIX)\n`);
    return 1;
  }
  const a = health.archive;
  emit(a, json, () => {
    const lines = [
      `archive     ${a.url}`,
      `generation  ${a.generation}`,
      `state       ${a.state}${a.sync ? ' (sync: commits answered once archived)' : ''}`,
      ...(a.sealed_with ? [`sealed with key ${a.sealed_with}`] : []),
      `lag         ${a.lag_seconds ?? 0} s, ${a.uncovered_commits ?? 0} commits uncovered`,
      `last ship   ${a.last_shipped_at ?? '-'}`,
      ...(a.last_error ? [`last error  ${a.last_error}`] : []),
      ...(a.last_verify ? [`last verify ${a.last_verify.at} ${a.last_verify.error ? `could not run: ${a.last_verify.error}` : (a.last_verify.repositories ?? []).map((r) => `repository ${r.repository} ${r.ok ? 'ok' : `FAILED: ${r.problem}`}`).join('; ')}`] : []),
      '',
      table([['REPO', 'SHIPPED', 'COMMITTED', 'UNCOVERED', 'LAG S', 'LAG BYTES'], ...a.repositories.map((r) => [String(r.repository), r.shipped_commit, r.committed, String(r.uncovered_commits ?? 0), String(r.lag_seconds), String(r.lag_bytes)])]),
    ];
    return lines.join('\n');
  });
  return a.state === 'fenced' ? 1 : 0;
}

/** A standby's side: how far it is behind the writer's newest manifest. */
function followStatus(f: FollowStatus, json: boolean): number {
  emit({ follow: f }, json, () => [
    `follows     ${f.url}`,
    `state       ${f.state}`,
    `lag         ${f.lag_seconds} s, ${f.behind_commits} commits behind the writer's newest manifest`,
    `checked     ${f.checked_at ?? '-'}`,
    `last apply  ${f.last_applied_at ?? '-'}`,
    ...(f.last_error ? [`last error  ${f.last_error}`] : []),
    '',
    table([['REPO', 'APPLIED', 'NEWEST', 'BEHIND', 'MANIFESTS', 'LAG S'], ...f.repositories.map((r) => [String(r.repository), r.applied_commit, r.newest_commit, String(r.behind_commits), String(r.behind_manifests), String(r.lag_seconds)])]),
  ].join('\n'));
  return f.state === 'error' ? 1 : 0;
}
