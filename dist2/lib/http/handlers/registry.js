// Repository registry: register, list, read (spec: "Repository registry, CI, retirement, restore").
import { integer, object, string } from 'superstruct';
import { Invalid } from '../../domain/errors.js';
import { LIFECYCLE_ACTIVE, LIFECYCLE_PURGED, LIFECYCLE_RETIRING, validateNamespace, validatePolicyFlags, validateRepositoryName } from '../../domain/repository.js';
import { validate } from '../validate.js';
import { bool, constant, enumOf, obj, ref, str, uint, arr } from '../json-schema.js';
/** Unknown fields are rejected here (spec: "Common request and response rules"). */
export const RegisterRequest = object({
    repository_name: string(),
    namespace: string(),
    policy_flags: integer(),
});
export function repositoryProjection(r) {
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
export const register = async ({ body, service, access, koa }) => {
    const req = validate(body, RegisterRequest);
    validateRepositoryName(req.repository_name);
    validateNamespace(req.namespace);
    validatePolicyFlags(req.policy_flags);
    const { record, created } = await service.register(req.repository_name, req.namespace, req.policy_flags);
    if (created)
        await access?.book.audit(koa.state.identity ?? null, 'repository.registered', { repository_index: record.repository_index, repository_name: record.repository_name });
    return {
        status: created ? 201 : 200,
        json: { contract: 'svc.server.repository-registration.v1', created, repository: repositoryProjection(record) },
    };
};
export const list = async ({ koa, service, access }) => {
    const filter = koa.query.repository_name;
    if (Array.isArray(filter))
        throw new Invalid('repository_name may be given once');
    // With an auth mode the list holds only the repositories the caller may read.
    const who = koa.state.principal;
    const readable = (r) => !access || !who || access.book.canRead(who, r.repository_index);
    const repositories = service.listed(filter).filter(readable).map(repositoryProjection);
    return {
        json: {
            contract: 'svc.server.repository-authority-list.v1',
            repositories,
            count: repositories.length,
            discovery: { routing_authority: false },
        },
    };
};
export const get = async ({ repository }) => ({
    json: { contract: 'svc.server.repository-authority.v1', repository: repositoryProjection(repository) },
});
export const SCHEMAS = {
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
export const ListQuery = { repository_name: { schema: str, description: 'inventory filter: an exact repository name' } };
//# sourceMappingURL=registry.js.map