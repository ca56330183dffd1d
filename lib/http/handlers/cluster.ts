// GET /v1/native/cluster (serve --cluster; docs/operations.md "Several nodes"): this node, the
// live nodes with how many repositories each owns, and, with ?repository=N, where N lives.
// POST /v1/native/cluster/moves, /failovers and /handoffs: a repository changes nodes
// (lib/authority/cluster-moves.ts); the first two are answered by the target node, passed there
// by whichever node the client reached.
import { integer, object, optional, string } from 'superstruct';
import { Busy, Conflict, Invalid, NotFound } from '../../domain/errors.js';
import { ForNode } from '../../authority/cluster.js';
import type { CairnService } from '../../authority/service.js';
import type { Handler, QueryParam, RouteContext } from '../route-types.js';
import { arr, constant, enumOf, nullable, obj, str, uint, type Schemas } from '../json-schema.js';
import { validate } from '../validate.js';
import { peerHeaders } from '../cluster-proxy.js';

export const status: Handler = async ({ koa, service }) => {
  const cluster = service.cluster;
  if (!cluster) throw new NotFound('this server is not part of a cluster (serve --cluster etcd://…)');
  const asked = koa.query.repository;
  if (Array.isArray(asked)) throw new Invalid('repository may be given once');
  let repository: { repository_index: number; node: string | null } | null = null;
  if (asked !== undefined) {
    if (!/^(0|[1-9][0-9]{0,9})$/.test(asked) || Number(asked) > 0xffff_ffff) throw new Invalid('repository must be a repository index');
    repository = { repository_index: Number(asked), node: await cluster.owner(Number(asked)) };
  }
  const live = await cluster.nodes();
  const counts = new Map<string, number>();
  for (const node of cluster.placements().values()) counts.set(node, (counts.get(node) ?? 0) + 1);
  // A node that owns repositories but holds no membership now is listed, down.
  const names = [...new Set([...live.keys(), ...counts.keys()])].sort();
  return {
    json: {
      contract: 'svc.server.cluster.v1',
      node: cluster.node,
      nodes: names.map((name) => ({ node: name, url: live.get(name)?.url ?? null, live: live.has(name), since: live.get(name)?.since ?? null, repositories: counts.get(name) ?? 0 })),
      repository,
      replicas: service.replicas?.status() ?? [],
    },
  };
};

export const Move = object({ repository_index: integer(), to: string() });
export const Failover = object({ repository_index: integer(), to: optional(string()) });
export const Handoff = object({ repository_index: integer(), token: string() });

function repositoryIndex(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > 0xffff_ffff) throw new Invalid('repository_index must be a repository index (0 to 4294967295)');
  return n;
}

/** The node's moves, or 404 on a server that is not a cluster node. */
function movesOf(service: CairnService) {
  if (!service.cluster || !service.moves) throw new NotFound('this server is not part of a cluster (serve --cluster etcd://…)');
  return { cluster: service.cluster, moves: service.moves };
}

/** The target named: this node answers, another live one is passed the request (ForNode), an unknown one is refused. */
async function target(service: CairnService, to: string): Promise<void> {
  const { cluster } = movesOf(service);
  if (to === cluster.node) return;
  let live: Map<string, unknown>;
  try {
    live = await cluster.nodes();
  } catch {
    throw new Busy('the cluster\'s etcd did not answer, so the live nodes are not known now; retry');
  }
  if (!live.has(to)) throw new Conflict(`node ${to} is not a live node of the cluster (cairn cluster status lists them)`);
  throw new ForNode(to);
}

/** POST /v1/native/cluster/moves: move a repository to node `to` without loss (its writes pause meanwhile). */
export const move: Handler = async ({ service, body, koa, access }) => {
  const { moves } = movesOf(service);
  const req = validate(body, Move);
  const index = repositoryIndex(req.repository_index);
  await target(service, req.to);
  const result = await moves.move(index, peerHeaders(koa.req, service.cluster!.node));
  await access?.book.audit(null, 'cluster.moved', { repository_index: index, from: result.from, to: result.to, commit: result.commit });
  return { json: result };
};

/** POST /v1/native/cluster/failovers: take a repository of a node that is down from its archive (to `to`, default the node answering). */
export const failover: Handler = async ({ service, body, access }) => {
  const { cluster, moves } = movesOf(service);
  const req = validate(body, Failover);
  const index = repositoryIndex(req.repository_index);
  await target(service, req.to ?? cluster.node);
  const result = await moves.failover(index);
  await access?.book.audit(null, 'cluster.failed_over', { repository_index: index, from: result.from, to: result.to, commit: result.commit, manifest: result.manifest });
  return { json: result };
};

/** POST /v1/native/cluster/handoffs: asked by a move's target of the owner (docs/api.md "Several nodes"). */
export const handoff: Handler = async ({ service, body }: RouteContext) => {
  const { moves } = movesOf(service);
  const req = validate(body, Handoff);
  const index = repositoryIndex(req.repository_index);
  if (!/^[0-9a-f]{32}$/.test(req.token)) throw new Invalid('token must be the move\'s token (32 hexadecimal digits)');
  return { json: { contract: 'svc.server.cluster-handoff.v1', repository_index: index, ...(await moves.handoff(index, req.token)) } };
};

export const StatusQuery: Record<string, QueryParam> = { repository: { schema: str, description: 'a repository index: say which node owns it' } };

export const SCHEMAS: Schemas = {
  ClusterStatus: obj({
    contract: constant('svc.server.cluster.v1'),
    node: { ...str, description: 'the node that answered' },
    nodes: arr(obj({
      node: str,
      url: { ...nullable(str), description: 'where the node is reached (its serve --public-url); null while it is down' },
      live: { type: 'boolean', description: 'it holds its membership in etcd now' },
      since: nullable(str),
      repositories: { ...uint, description: 'repositories placed on it' },
    })),
    repository: { ...nullable(obj({ repository_index: uint, node: nullable(str) })), description: 'with ?repository=N: the node owning N (null: none placed)' },
    replicas: { ...arr(obj({
      repository_index: uint,
      owner: str,
      commit: { ...str, description: 'the commit the replica holds (decimal)' },
      manifest: str,
      captured_at: { ...str, description: 'when the owner captured that manifest' },
      applied_at: str,
    })), description: 'the read replicas the answering node holds (serve --read-replicas)' },
  }),
  ClusterMove: obj({
    contract: constant('svc.server.cluster-move.v1'),
    repository_index: uint,
    kind: enumOf(['move', 'failover']),
    from: { ...str, description: 'the node that owned it' },
    to: { ...str, description: 'the node that owns it now' },
    commit: { ...str, description: 'the commit it is at on its new node (decimal)' },
    manifest: { ...str, description: 'the archive manifest it was taken from' },
    manifest_captured_at: { ...str, description: 'when that manifest was captured: a failover lacks what the old owner committed after it' },
    pause_ms: { ...nullable({ type: 'number' }), description: 'a move: how long its writes were held (handoff to flip); null for a failover' },
    fetched_objects: uint,
    fetched_bytes: uint,
  }, { description: 'the repository is served by its new node; the old one set its copy aside' }),
  ClusterHandoff: obj({
    contract: constant('svc.server.cluster-handoff.v1'),
    repository_index: uint,
    commit: { ...str, description: 'the repository\'s last commit on this node (decimal); its writes are held' },
    manifest: { ...str, description: 'the stored manifest of this node\'s archive covering it' },
  }),
};
