// The OpenAPI 3.1 document of the interface, generated from the route table (./routes.ts): one
// operation per row (operationId = the row's `operation`, path = its template with `:action`),
// request bodies converted from the superstruct schemas the handlers validate with
// (./json-schema.ts), responses from each row's `answers` and the refusals its shape implies,
// components/schemas from the `SCHEMAS` the handler modules export beside their handlers.
// Nothing here is written by hand per operation, so the document cannot drift from the table;
// the contract test (test/contract.ts) checks the server's real answers against it.
import type { RouteSpec } from './route-types.js';
import type { Permission } from '../domain/access.js';
import { toJsonSchema, type JsonSchema, type Schemas } from './json-schema.js';
import { CONTRACT_VERSION } from './handlers/discovery.js';
import { PAGE_QUERY } from './handlers/workflow-common.js';
import { SCHEMAS as errorSchemas } from './errors.js';
import { SCHEMAS as discoverySchemas } from './handlers/discovery.js';
import { SCHEMAS as registrySchemas } from './handlers/registry.js';
import { SCHEMAS as lifecycleSchemas } from './handlers/lifecycle.js';
import { SCHEMAS as jobSchemas } from './handlers/jobs.js';
import { SCHEMAS as contentSchemas } from './handlers/content.js';
import { SCHEMAS as taskSchemas } from './handlers/tasks.js';
import { SCHEMAS as changeSchemas } from './handlers/changes.js';
import { SCHEMAS as reviewSchemas } from './handlers/reviews.js';
import { SCHEMAS as commentSchemas } from './handlers/comments.js';
import { SCHEMAS as viewedSchemas } from './handlers/viewed.js';
import { SCHEMAS as landSchemas } from './handlers/lands.js';
import { SCHEMAS as promotionSchemas } from './handlers/promotion.js';
import { SCHEMAS as planSchemas } from './handlers/plans.js';
import { SCHEMAS as diffSchemas } from './handlers/diffs.js';
import { SCHEMAS as eventSchemas } from './handlers/events.js';
import { SCHEMAS as webhookSchemas } from './handlers/webhooks.js';
import { SCHEMAS as landQueueSchemas } from './handlers/land-queue.js';
import { SCHEMAS as gitSchemas } from './handlers/git.js';
import { SCHEMAS as peopleSchemas } from './handlers/people.js';
import { SCHEMAS as gitMirrorSchemas } from './handlers/git-mirrors.js';
import { SCHEMAS as archiveSchemas } from './handlers/archive.js';
import { SCHEMAS as clusterSchemas } from './handlers/cluster.js';
import { SCHEMAS as accessSchemas } from './handlers/access.js';
import { SCHEMAS as rulesSchemas } from './handlers/rules.js';

export const OPENAPI_VERSION = '3.1.0';
/** Marks operations that are not part of the spec's 78 (the document itself, the API reference). */
export const EXTENSION_MARK = 'x-cairn-extension';

/** This document, as an answer (GET /v1/openapi.json). */
const DOCUMENT_SCHEMAS: Schemas = {
  OpenApiDocument: {
    type: 'object',
    properties: { openapi: { const: OPENAPI_VERSION }, info: { type: 'object' }, paths: { type: 'object' }, components: { type: 'object' } },
    required: ['openapi', 'info', 'paths', 'components'],
    description: 'this document',
  },
};

const SCHEMA_MODULES: readonly Schemas[] = [
  errorSchemas, discoverySchemas, registrySchemas, lifecycleSchemas, jobSchemas, contentSchemas,
  taskSchemas, changeSchemas, reviewSchemas, commentSchemas, viewedSchemas, landSchemas, promotionSchemas, planSchemas, diffSchemas, webhookSchemas, landQueueSchemas, gitSchemas, gitMirrorSchemas, peopleSchemas, eventSchemas, archiveSchemas, clusterSchemas, accessSchemas, rulesSchemas, DOCUMENT_SCHEMAS,
];

/** Every named schema, each defined once. */
export function componentSchemas(): Schemas {
  const all: Schemas = {};
  for (const module of SCHEMA_MODULES) {
    for (const [name, schema] of Object.entries(module)) {
      if (name in all) throw new Error(`schema ${name} is defined twice`);
      all[name] = schema;
    }
  }
  return all;
}

/** The path of a row in the document: its template, with `:action` when it has one. */
export const pathOf = (route: RouteSpec): string => route.template + (route.action ? `:${route.action}` : '');

/** The query parameters of a row: its own, plus `limit` and `cursor` on paged lists. */
export function queryOf(route: RouteSpec): RouteSpec['query'] {
  return route.paged ? { ...PAGE_QUERY, ...route.query } : route.query;
}

/**
 * The refusals an operation can answer: those its shape implies (below) and those its row adds.
 *  - 400: a path parameter (malformed index, bad percent-encoding), a query parameter or a body
 *    (malformed JSON, undecodable Content-Encoding, an aborted upload, a broken rule);
 *  - 403: every operation (the identity header from a peer the server does not believe it from);
 *    any method but GET also for a state-changing request from a page of another origin;
 *  - 404: a path parameter (unregistered repository, unknown entity);
 *  - 409: a mutation under a repository (lifecycle admission: retiring or purged);
 *  - 410: only where the row adds it (the event feeds: a position retention no longer keeps);
 *  - 408: only where the row adds it (git's POSTs: a body that stalls or trickles);
 *  - 429: only where the row adds it (the event feeds: a client's streams at its cap);
 *  - 413: any method but GET (a body over the route's limit; body-less routes drain at most 2 MiB);
 *  - 415: a body of the wrong Content-Type; 422: a JSON body that does not fit the typed request;
 *  - 421: every operation (a Host that does not name this server: DNS rebinding);
 *  - 500: an internal or corrupt authority operation; 501: a row without a handler;
 *  - 503: before activation (every path), or retryably busy;
 *  - 507: any method but GET (the server's disk is full; nothing was written).
 */
export function refusalsOf(route: RouteSpec): number[] {
  const out = new Set<number>(route.refusals);
  const hasParams = route.template.includes('{');
  if (hasParams || Object.keys(queryOf(route)).length > 0 || route.body.kind !== 'none') out.add(400);
  if (hasParams) out.add(404);
  if (route.method !== 'GET' && (route.admission === 'active' || route.admission === 'worker')) out.add(409);
  if (route.method !== 'GET') out.add(413);
  out.add(403);
  // With an auth mode, a route that is not public answers 401 to a caller without a valid
  // token (429 after too many failed ones) and 403 to one without the role (docs/api.md "Accounts, tokens and roles").
  if (route.permission !== 'public' && route.permission !== 'promotion') {
    out.add(401);
    out.add(429);
  }
  out.add(421);
  if (route.body.kind !== 'none') out.add(415);
  if (route.body.kind === 'json') out.add(422);
  if (!route.handler) out.add(501);
  out.add(500);
  out.add(503);
  if (route.method !== 'GET') out.add(507);
  return [...out].sort((a, b) => a - b);
}

const REFUSAL_TEXT: Record<number, string> = {
  400: 'Invalid request: a path value, query parameter or body field breaks a rule, malformed JSON, or an invalid state transition',
  401: 'With an auth mode (cairn serve --auth tokens, or a front door): no token, or one that does not authenticate (unknown, revoked, expired, its account disabled: one answer for all). Otherwise: the request lacks the secret the route needs, or it is wrong (POST /archive/promote: the promotion secret in Authorization: Bearer, see cairn serve --promote-secret-file); WWW-Authenticate names the scheme',
  403: "With an auth mode: the caller lacks the role the route needs in this repository (x-cairn-permission), or the token lacks the scope. Otherwise: the identity header from a peer that is not the trusted ingress (cairn serve --trust-identity-from, --trust-identity-secret-file), or a body field naming another person than the caller's identity; a state-changing request from a page of another origin (Origin or Sec-Fetch-Site; see cairn serve --allowed-origin); on :applySuggestions, a caller who is not the change's author; on POST /archive/promote without a promotion secret configured, a caller that is not on the standby's own machine (docs/operations.md \"Who may promote\")",
  404: 'Unknown repository, entity, pack or file',
  405: 'Method not bound for this path (Allow lists those that are)',
  408: 'The request body stopped, or came slower than the server takes (cairn serve --git-body-timeout-seconds, --git-body-min-rate); the connection is closed',
  409: 'Authority, lifecycle or compare-and-set conflict',
  410: 'The position asked for is older than the oldest event still kept (event retention): the body names where to resume',
  413: "Body over the route's limit (a remote-sync commit: a snapshot or tree that expands past the paths a snapshot may hold)",
  415: 'Wrong Content-Type (or Content-Encoding)',
  421: 'Misdirected: the Host header does not name this server (DNS rebinding; see cairn serve --allowed-host)',
  422: 'JSON that does not fit the typed request: not an object, a missing required field, a field of the wrong type, an unknown field where the route rejects them',
  429: 'Too many failed sign-ins from this address (with an auth mode), or: this client address holds as many event streams as one client may (--event-subscribers-per-client); Retry-After says when to try again',
  500: 'Corrupt or failed authority operation (details in the server log only)',
  501: 'Operation declared but not built',
  503: 'Starting (before activation), or retryably busy',
  507: "Insufficient storage: the server's disk (or quota) is full; nothing was written (the server log names the directory)",
};

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonSchema) => ({ 'application/json': { schema } });
const binary: JsonSchema = { type: 'string', format: 'binary' };

function tagOf(route: RouteSpec): string {
  const head = route.operation.split('.')[0];
  if (head === 'webhooks') return 'webhooks';
  if (head === 'events') return 'events';
  if (head === 'comments') return 'comments';
  if (head === 'viewed') return 'viewed';
  if (head === 'git' || head === 'gitMirrors') return 'git';
  if (['session', 'accounts', 'tokens', 'groups', 'access', 'audit'].includes(head)) return 'access';
  if (route.extension) return 'reference';
  if (['health', 'handshake', 'capabilities'].includes(head)) return 'discovery';
  if (head === 'read') return route.operation === 'read.planCandidates' ? 'plans' : route.operation === 'read.ciStatus' ? 'patchsets' : 'tasks';
  if (head === 'historyPromotion') return 'lands';
  return head;
}

const TAGS = [
  { name: 'discovery', description: 'Health, handshake and capabilities' },
  { name: 'repositories', description: 'The repository registry and repository CI' },
  { name: 'retirement', description: 'Retirement, export and purge of a repository authority' },
  { name: 'restores', description: 'Restore of an exported authority under a new index' },
  { name: 'workerJobs', description: 'The worker-job queue of external runners' },
  { name: 'lines', description: 'Lines (named heads)' },
  { name: 'snapshots', description: 'Snapshot classification and export' },
  { name: 'sync', description: 'Bulk remote sync: plan, packs, commit, manifests' },
  { name: 'tasks', description: 'Tasks and the task read models' },
  { name: 'changes', description: 'Changes' },
  { name: 'patchsets', description: 'Patchsets, their CI and policy' },
  { name: 'reviews', description: 'Reviews and the reviewer inbox' },
  { name: 'attestations', description: 'Attestations of patchsets' },
  { name: 'policy', description: 'Policy decisions' },
  { name: 'lands', description: 'Lands, task-land, task-start and history promotion' },
  { name: 'plans', description: 'Plans (the paths say sprints)' },
  { name: 'comments', description: `Comment threads on a change's diff lines (not in the spec; marked ${EXTENSION_MARK})` },
  { name: 'viewed', description: `Viewed marks: the files of a patchset a reviewer has viewed (not in the spec; marked ${EXTENSION_MARK})` },
  { name: 'git', description: `Git interoperability: import commits with their git metadata, export, serve, mirror and receive pushes for review (not in the spec; marked ${EXTENSION_MARK})` },
  { name: 'webhooks', description: `Webhook registrations and their deliveries (not in the spec; marked ${EXTENSION_MARK})` },
  { name: 'access', description: `Accounts, personal access tokens, groups, repository grants and the audit feed (not in the spec; marked ${EXTENSION_MARK})` },
  { name: 'reference', description: `This document and its rendered reference (not in the spec; marked ${EXTENSION_MARK})` },
  { name: 'events', description: `Event feeds of a repository and of all of them, as JSON pages or server-sent events (not in the spec; marked ${EXTENSION_MARK})` },
];

const INDEX_PARAM = { type: 'string', pattern: '^(0|[1-9][0-9]{0,9})$', description: 'canonical unsigned base-10 u32 (0 to 4294967295)' };

function parameters(route: RouteSpec): Record<string, unknown>[] {
  const path = [...route.template.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: name === 'repository_index' || name === 'worker_job_index' ? INDEX_PARAM : { type: 'string' },
    ...(name === 'file_path' ? { description: 'a relative path: URL-encoded (a%2Fb.txt) or with its slashes (a/b.txt)' } : {}),
  }));
  const query = Object.entries(queryOf(route)).map(([name, q]) => ({ name, in: 'query', required: false, schema: q.schema, ...(q.description ? { description: q.description } : {}) }));
  return [...path, ...query];
}

function requestBody(route: RouteSpec): Record<string, unknown> | undefined {
  const body = route.body;
  if (body.kind === 'none') return undefined;
  if (body.kind === 'raw') return { required: true, content: { [body.mediaType]: { schema: binary } }, description: `exactly ${body.mediaType}; streamed, at most ${route.limit} bytes` };
  if (!route.request) throw new Error(`JSON route ${route.operation} has no request schema`);
  return { required: true, content: json(toJsonSchema(route.request)), description: 'Content-Type: application/json (gzip, deflate or br Content-Encoding accepted)' };
}

function responses(route: RouteSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, answer] of Object.entries(route.answers)) {
    out[status] = typeof answer === 'string'
      ? { description: status === '201' ? 'Created' : 'OK', content: json(ref(answer)) }
      : { description: 'OK', content: { ...(answer.json ? json(ref(answer.json)) : {}), ...Object.fromEntries(answer.raw.map((m) => [m, { schema: binary }])) } };
  }
  if (route.conditional) {
    out['304'] = {
      description: 'Not Modified: If-None-Match named the ETag of an earlier whole answer to the same request (nothing cut by a budget); the client reuses its copy',
      headers: { ETag: { schema: { type: 'string' }, description: 'the tag named' } },
    };
  }
  for (const status of refusalsOf(route)) {
    const key = String(status);
    const error = status === 503 ? { anyOf: [ref(route.operation === 'health' ? 'HealthStarting' : 'Starting'), ref('Error')] } : ref('Error');
    const answered = out[key] as { content?: Record<string, { schema: JsonSchema }> } | undefined;
    const schema = answered?.content?.['application/json'] ? { anyOf: [answered.content['application/json'].schema, error] } : error;
    out[key] = {
      description: REFUSAL_TEXT[status] ?? 'Refused',
      ...(status === 503 ? { headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'seconds (1)' } } } : {}),
      ...(status === 429 ? { headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'seconds' } } } : {}),
      ...(status === 401 ? { headers: { 'WWW-Authenticate': { schema: { type: 'string' }, description: 'the scheme the route takes: Basic on git routes (so git asks for a password), Bearer elsewhere' } } } : {}),
      content: json(schema),
    };
  }
  return out;
}

function operation(route: RouteSpec): Record<string, unknown> {
  const params = parameters(route);
  const body = requestBody(route);
  return {
    operationId: route.operation,
    tags: [tagOf(route)],
    ...(params.length ? { parameters: params } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: responses(route),
    security: securityOf(route.permission),
    [PERMISSION_MARK]: route.permission,
    ...(route.extension ? { [EXTENSION_MARK]: true } : {}),
  };
}

/** The route table's `permission` of each operation, as the access gate reads it (docs/api.md "Accounts, tokens and roles"). */
export const PERMISSION_MARK = 'x-cairn-permission';

/** How a caller may say who they are, when the server has an auth mode (components/securitySchemes). */
export const SECURITY_SCHEMES: Record<string, Record<string, unknown>> = {
  bearerToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'cairn_ + 43 base64url characters',
    description: 'A personal access token (cairn token create, cairn login): Authorization: Bearer TOKEN. Used with `cairn serve --auth tokens`. The token\'s scopes (read, write, admin, runner) bound what it may do within its account\'s roles.',
  },
  basicToken: {
    type: 'http',
    scheme: 'basic',
    description: 'The same token as the password of HTTP basic auth (the user name is ignored): what git sends (http://x:TOKEN@host/...). git routes challenge with Basic, the others with Bearer.',
  },
  ingressIdentity: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Cairn-User',
    description: 'A front door names the person it authenticated in the header `cairn serve --ui-identity-header` names (X-Cairn-User here), believed only from `--trust-identity-from` addresses and/or with the secret of `--trust-identity-secret-file` in X-Cairn-Ingress-Secret. The account is made at first sight, without any role.',
  },
  promotionSecret: {
    type: 'http',
    scheme: 'bearer',
    description: 'POST /archive/promote only: the standby\'s promotion secret (cairn serve --promote-secret-file); without one configured, only a caller on the standby\'s own machine may promote.',
  },
};

const SIGNED_IN: Record<string, string[]>[] = [{ bearerToken: [] }, { basicToken: [] }, { ingressIdentity: [] }];

/**
 * The `security` of an operation from its permission. Without an auth mode the server asks for
 * none of these (every route open, as the interface specification has it).
 *  - public: none (a credential sent is not even looked at);
 *  - session: optional (`{}` first): the answer depends on who asks;
 *  - promotion: the promotion secret, or none from the standby's own machine;
 *  - any other: a signed-in caller, whose role or token scope the gate then checks.
 */
export function securityOf(permission: Permission): Record<string, string[]>[] {
  switch (permission) {
    case 'public': return [];
    case 'session': return [{}, ...SIGNED_IN];
    case 'promotion': return [{}, { promotionSecret: [] }];
    default: return SIGNED_IN;
  }
}

const DESCRIPTION = `The JSON-over-HTTP interface of cairn, generated from the server's route table.

- Paths take an action suffix on their last segment (\`:close\`, \`:runCi\`, ...): each is its own operation. A \`:\` meant as data in a last segment is sent as \`%3A\`.
- A method not listed for a path answers 405 with \`Allow\` (the listed methods, HEAD where GET is, and OPTIONS); OPTIONS answers 204 with \`Allow\`; HEAD is served wherever GET is. An unknown path or action is 404.
- Every error body is \`{"error": "<text>"}\` (schema Error), with extra fields only where documented.
- Lists page with \`limit\` and \`cursor\` and answer \`count\` (rows on this page) and \`next_cursor\` (null on the last page).
- Operations marked \`${EXTENSION_MARK}\` are not part of the interface specification.
- \`${PERMISSION_MARK}\` names what an operation asks of its caller when the server has an auth mode (\`cairn serve --auth tokens\`, or a front door): public, session (anyone; the answer depends on who asks), reader, contributor, maintainer, admin (a role in the repository), runner, server_admin, promotion. \`security\` says the same in OpenAPI's terms. A server without an auth mode asks for no credential anywhere.`;

const cache = new WeakMap<readonly RouteSpec[], Record<string, unknown>>();

/** The OpenAPI 3.1 document of `routes` (built once per table). */
export function openApiDocument(routes: readonly RouteSpec[]): Record<string, unknown> {
  let doc = cache.get(routes);
  if (doc) return doc;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const item = (paths[pathOf(route)] ??= {});
    const method = route.method.toLowerCase();
    if (item[method]) throw new Error(`${route.method} ${pathOf(route)} is bound twice`);
    item[method] = operation(route);
  }
  doc = {
    openapi: OPENAPI_VERSION,
    info: { title: 'cairn', version: CONTRACT_VERSION, description: DESCRIPTION },
    tags: TAGS,
    paths,
    components: { schemas: componentSchemas(), securitySchemes: SECURITY_SCHEMES },
  };
  cache.set(routes, doc);
  return doc;
}
