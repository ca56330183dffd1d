// GET /v1/native/cluster (serve --cluster; docs/operations.md "Several nodes"): this node, the
// live nodes with how many repositories each owns, and, with ?repository=N, where N lives.
import { Invalid, NotFound } from '../../domain/errors.js';
import type { Handler, QueryParam } from '../route-types.js';
import { arr, constant, nullable, obj, str, uint, type Schemas } from '../json-schema.js';

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
    },
  };
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
  }),
};
