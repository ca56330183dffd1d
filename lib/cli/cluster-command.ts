// `cairn cluster status`: the nodes of a cluster (serve --cluster), which are live, how many
// repositories each owns, and with --repo N which node owns N (GET /v1/native/cluster;
// docs/operations.md "Several nodes").
import { serverOf } from './target.js';
import type { MoveResult } from '../authority/cluster.js';
import { CairnClient } from '../client/http.js';
import { CliUsageError, parseCommandArgs } from './args.js';
import { emit, table, useJson } from './output.js';

export const CLUSTER_HELP = `Usage:
  cairn cluster status --server URL [--repo N] [--json]

The nodes of the cluster the server belongs to (serve --cluster etcd://…): each node's name,
where it is reached, whether it is live (holds its membership in etcd now), since when, and how
many repositories are placed on it, then the read replicas the answering node holds (serve
--read-replicas). With --repo N: the node that owns repository N. Any node answers for every
repository, passing requests for another node's to it.
Exits 1 when a node that owns repositories is down, or the server is not in a cluster.

  --server URL    any node of the cluster, e.g. http://10.0.0.1:8088 (default: $CAIRN_SERVER, the
                  working copy's or git remote's, or the one server you are signed in to)
  --repo N        say which node owns repository N
  --json          print JSON (the default when stdout is not a terminal)
`;

interface ClusterStatus {
  node: string;
  nodes: { node: string; url: string | null; live: boolean; since: string | null; repositories: number }[];
  repository: { repository_index: number; node: string | null } | null;
  replicas?: { repository_index: number; owner: string; commit: string; captured_at: string }[];
}

export async function clusterCommand(argv: string[]): Promise<number> {
  const sub = argv[0];
  if (sub === undefined || sub === '--help' || sub === '-h') {
    process.stdout.write(CLUSTER_HELP);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== 'status') throw new CliUsageError(`unknown cluster subcommand "${sub}" (status)`);
  const { values, positionals } = parseCommandArgs(argv.slice(1), {
    server: { type: 'string' },
    repo: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) {
    process.stdout.write(CLUSTER_HELP);
    return 0;
  }
  if (positionals.length) throw new CliUsageError('cairn cluster status takes no arguments');
  if (values.repo !== undefined && (!/^(0|[1-9][0-9]{0,9})$/.test(String(values.repo)) || Number(values.repo) > 0xffff_ffff)) throw new CliUsageError('--repo must be a repository index (0 to 4294967295)');
  const server = serverOf(values.server, 'cairn cluster status');
  const s = await new CairnClient(server).json<ClusterStatus>('GET', `/v1/native/cluster${values.repo !== undefined ? `?repository=${values.repo}` : ''}`);
  emit(s, useJson(values.json), () => [
    `answered by ${s.node}`,
    ...(s.repository ? [`repository ${s.repository.repository_index}: ${s.repository.node === null ? 'placed on no node' : `on ${s.repository.node}`}`] : []),
    '',
    table([['NODE', 'URL', 'STATE', 'SINCE', 'REPOSITORIES'], ...s.nodes.map((n) => [n.node, n.url ?? '-', n.live ? 'live' : 'DOWN', n.since ?? '-', String(n.repositories)])]),
    ...(s.replicas?.length ? ['', `read replicas on ${s.node}:`, table([['REPOSITORY', 'OWNER', 'COMMIT', 'AS OF'], ...s.replicas.map((r) => [String(r.repository_index), r.owner, r.commit, r.captured_at])])] : []),
  ].join('\n'));
  return s.nodes.some((n) => !n.live && n.repositories > 0) ? 1 : 0;
}

export const REPO_MOVE_HELP = `Usage:
  cairn repo move N --to NODE --server URL [--json]
  cairn repo failover N [--to NODE] --server URL [--json]

Place repository N on another node of the cluster (serve --cluster; docs/operations.md
"Several nodes"). Any node's URL will do: the request goes to the target node.

move: the target copies N from the owner's archive while the owner still writes, then the
owner holds N's writes, ships its last commit and hands N over; the target applies it and takes
the placement. Nothing acknowledged is lost; writes to N wait meanwhile (the pause is printed)
and then go to the new owner. Both nodes ship to an archive (serve --archive).

failover: the owner is down (its membership expired); the target takes N from the owner's
archive as its newest manifest holds it: what the owner committed after that manifest (at most
the RPO) is not there. The old owner, when it is back, sets its copy aside.

  N               the repository's index
  --to NODE       the node to place it on (move: required; failover: default the node
                  --server reaches)
  --server URL    any node of the cluster (default: $CAIRN_SERVER, the working copy's or git
                  remote's, or the one server you are signed in to)
  --json          print JSON (the default when stdout is not a terminal)

Exit codes: 0 moved, 1 refused or failed (nothing moved: the message says why; the owner
writes on), 2 usage.
`;


/** `cairn repo move N --to NODE`, `cairn repo failover N [--to NODE]`. */
export async function repoMoveCommand(kind: 'move' | 'failover', argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    server: { type: 'string' },
    to: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) {
    process.stdout.write(REPO_MOVE_HELP);
    return 0;
  }
  if (positionals.length !== 1 || !/^(0|[1-9][0-9]{0,9})$/.test(positionals[0]) || Number(positionals[0]) > 0xffff_ffff) {
    throw new CliUsageError(`usage: cairn repo ${kind} N ${kind === 'move' ? '--to NODE' : '[--to NODE]'} --server URL (N: a repository index)`);
  }
  if (kind === 'move' && values.to === undefined) throw new CliUsageError('cairn repo move needs --to NODE: the node to place the repository on (cairn cluster status lists them)');
  const server = serverOf(values.server, `cairn repo ${kind}`);
  const index = Number(positionals[0]);
  const body = { repository_index: index, ...(values.to !== undefined ? { to: String(values.to) } : {}) };
  const r = await new CairnClient(server).json<MoveResult>('POST', kind === 'move' ? '/v1/native/cluster/moves' : '/v1/native/cluster/failovers', body);
  emit(r, useJson(values.json), () => [
    kind === 'move'
      ? `moved repository ${r.repository_index} from ${r.from} to ${r.to} at commit ${r.commit}; writes paused ${r.pause_ms} ms`
      : `failed repository ${r.repository_index} over from ${r.from} to ${r.to} at commit ${r.commit}, as of ${r.manifest_captured_at} (what ${r.from} committed after that is not there)`,
    `fetched ${r.fetched_objects} objects, ${formatBytes(r.fetched_bytes)} from ${r.from}'s archive (${r.manifest})`,
  ].join('\n'));
  return 0;
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
