// `cairn cluster status`: the nodes of a cluster (serve --cluster), which are live, how many
// repositories each owns, and with --repo N which node owns N (GET /v1/native/cluster;
// docs/operations.md "Several nodes").
import { serverOf } from './target.js';
import { CairnClient } from '../client/http.js';
import { CliUsageError, parseCommandArgs } from './args.js';
import { emit, table, useJson } from './output.js';

export const CLUSTER_HELP = `Usage:
  cairn cluster status --server URL [--repo N] [--json]

The nodes of the cluster the server belongs to (serve --cluster etcd://…): each node's name,
where it is reached, whether it is live (holds its membership in etcd now), since when, and how
many repositories are placed on it. With --repo N: the node that owns repository N. Any node
answers for every repository, passing requests for another node's to it.
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
  ].join('\n'));
  return s.nodes.some((n) => !n.live && n.repositories > 0) ? 1 : 0;
}
