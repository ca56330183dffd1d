// Repository registry: register, list, read (spec: "Repository registry, CI, retirement, restore").
import { integer, object, string } from 'superstruct';
import type { Context } from 'koa';
import { Busy, Invalid } from '../../domain/errors.js';
import type { ClusterPlacement } from '../../authority/cluster.js';
import { PROXIED_HEADER } from '../cluster-proxy.js';
import { LIFECYCLE_ACTIVE, LIFECYCLE_PURGED, LIFECYCLE_RETIRING, validateNamespace, validatePolicyFlags, validateRepositoryName, type RepositoryRecord } from '../../domain/repository.js';
import type { Handler, QueryParam } from '../route-types.js';
import type { Principal } from '../../domain/access.js';
import { validate } from '../validate.js';
import { bool, constant, enumOf, obj, ref, str, uint, arr, type Schemas } from '../json-schema.js';

/** Unknown fields are rejected here (spec: "Common request and response rules"). */
export const RegisterRequest = object({
  repository_name: string(),
  namespace: string(),
  policy_flags: integer(),
});

export function repositoryProjection(r: RepositoryRecord): Record<string, unknown> {
  return {
    repository_index: r.repository_index,
    repository_name: r.repository_name,
    lifecycle_kind: r.lifecycle_kind,
    namespace: r.namespace,
    policy_flags: r.policy_flags,
    created_at_s: r.created_at_s,
    updated_at_s: r.updated_at_s,
    tombstoned: r.tombstoned,
  };
}

export const register: Handler = async ({ body, service, access, koa }) => {
  const req = validate(body, RegisterRequest);
  validateRepositoryName(req.repository_name);
  validateNamespace(req.namespace);
  validatePolicyFlags(req.policy_flags);
  const { record, created } = await service.register(req.repository_name, req.namespace, req.policy_flags);
  if (created) await access?.book.audit(koa.state.identity ?? null, 'repository.registered', { repository_index: record.repository_index, repository_name: record.repository_name });
  return {
    status: created ? 201 : 200,
    json: { contract: 'svc.server.repository-registration.v1', created, repository: repositoryProjection(record) },
  };
};

export const list: Handler = async ({ koa, service, access }) => {
  const filter = koa.query.repository_name;
  if (Array.isArray(filter)) throw new Invalid('repository_name may be given once');
  // With an auth mode the list holds only the repositories the caller may read.
  const who = koa.state.principal as Principal | undefined;
  const readable = (r: RepositoryRecord) => !access || !who || access.book.canRead(who, r.repository_index);
  let repositories = service.listed(filter).filter(readable).map(repositoryProjection);
  // serve --cluster: every node's repositories, asked of each with the caller's credentials
  // (each node applies its own access rules), in index order. A node that does not answer makes
  // the list fail rather than come back short.
  if (service.cluster && !koa.get(PROXIED_HEADER)) repositories = await clusterList(koa, service.cluster, repositories);
  return {
    json: {
      contract: 'svc.server.repository-authority-list.v1',
      repositories,
      count: repositories.length,
      discovery: { routing_authority: false },
    },
  };
};

async function clusterList(koa: Context, cluster: ClusterPlacement, mine: Record<string, unknown>[]): Promise<Record<string, unknown>[]> {
  const all = [...mine];
  const headers: Record<string, string> = { [PROXIED_HEADER]: cluster.node, accept: 'application/json' };
  for (const h of ['authorization', 'cookie']) if (koa.get(h)) headers[h] = koa.get(h);
  const live = await cluster.nodes();
  const down = [...new Set(cluster.placements().values())].filter((name) => !live.has(name)).sort();
  if (down.length > 0) throw new Busy(`node ${down.join(', ')} ${down.length === 1 ? 'is' : 'are'} down (no membership in the cluster now), so the list would be short; its repositories answer again when it is back (cairn cluster status)`);
  for (const [name, n] of live) {
    if (name === cluster.node) continue;
    let res: Response;
    try {
      res = await fetch(`${n.url.replace(/\/$/, '')}/v1/native/repository-authorities${koa.querystring ? `?${koa.querystring}` : ''}`, { headers, signal: AbortSignal.timeout(10_000) });
    } catch (err) {
      throw new Busy(`node ${name} (${n.url}) did not answer, so the list would be short; retry, or see cairn cluster status (${(err as Error).message})`);
    }
    if (!res.ok) throw new Busy(`node ${name} (${n.url}) answered ${res.status} to its list, so the list would be short; retry`);
    const body = (await res.json()) as { repositories?: Record<string, unknown>[] };
    all.push(...(body.repositories ?? []));
  }
  return all.sort((a, b) => (a.repository_index as number) - (b.repository_index as number));
}

export const get: Handler = async ({ repository }) => ({
  json: { contract: 'svc.server.repository-authority.v1', repository: repositoryProjection(repository!) },
});

export const SCHEMAS: Schemas = {
  Repository: obj({
    repository_index: uint,
    repository_name: str,
    lifecycle_kind: { ...enumOf([LIFECYCLE_ACTIVE, LIFECYCLE_RETIRING, LIFECYCLE_PURGED]), description: '1 active, 2 retiring, 3 purged' },
    namespace: str,
    policy_flags: { ...uint, maximum: 255 },
    created_at_s: uint,
    updated_at_s: uint,
    tombstoned: bool,
  }),
  RepositoryRegistration: obj({ contract: constant('svc.server.repository-registration.v1'), created: bool, repository: ref('Repository') }),
  RepositoryList: obj({
    contract: constant('svc.server.repository-authority-list.v1'),
    repositories: arr(ref('Repository')),
    count: uint,
    discovery: obj({ routing_authority: constant(false) }),
  }),
  RepositoryRead: obj({ contract: constant('svc.server.repository-authority.v1'), repository: ref('Repository') }),
};

export const ListQuery: Record<string, QueryParam> = { repository_name: { schema: str, description: 'inventory filter: an exact repository name' } };
