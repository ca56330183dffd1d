// The OpenAPI document (lib/http/openapi.ts): a valid OpenAPI 3.1 document, one operation per
// route-table row, request schemas that accept exactly what the handlers' superstruct schemas
// accept, and the document served at /v1/openapi.json. The server's real answers are checked
// against it by every HTTP test (./contract.ts through `api()`).
import { expect } from 'chai';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ROUTES, SPEC_ROUTES } from '../lib/http/routes.js';
import { EXTENSION_MARK, PERMISSION_MARK, openApiDocument, pathOf, refusalsOf } from '../lib/http/openapi.js';
import { PERMISSIONS } from '../lib/domain/access.js';
import { toJsonSchema, type JsonSchema } from '../lib/http/json-schema.js';
import { api, register, startTestServer, type TestServer } from './helpers.js';

interface Operation {
  operationId: string;
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }>;
  [EXTENSION_MARK]?: boolean;
  [PERMISSION_MARK]?: string;
  security?: Record<string, string[]>[];
}
interface Doc { openapi: string; paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, { type: string; scheme?: string; in?: string; name?: string; description?: string }> } }

const doc = openApiDocument(ROUTES) as unknown as Doc;
const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method: method.toUpperCase(), op })));

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc as unknown as Record<string, unknown>);
    expect(result.errors, JSON.stringify(result.errors, null, 2)?.slice(0, 2000)).to.equal(undefined);
    expect(result.valid).to.equal(true);
    expect(validator.version).to.equal('3.1');
    expect(doc.openapi).to.match(/^3\.1\./);
  });

  it('has every route-table row exactly once, at its path and method, named by its operation', () => {
    expect(operations.map((o) => o.op.operationId).sort()).to.deep.equal(ROUTES.map((r) => r.operation).sort());
    for (const r of ROUTES) {
      const found = operations.filter((o) => o.op.operationId === r.operation);
      expect(found, r.operation).to.have.length(1);
      expect(found[0].path, r.operation).to.equal(pathOf(r));
      expect(found[0].method, r.operation).to.equal(r.method);
    }
    expect(operations.filter((o) => !o.op[EXTENSION_MARK])).to.have.length(SPEC_ROUTES.length).and.to.have.length(78);
    expect(doc.paths['/v1/native/repository-authorities/{repository_index}/changes/{change_ref}:close'].post.operationId).to.equal('changes.close');
  });

  it(`marks the extension operations, and only them, with ${EXTENSION_MARK}`, () => {
    const marked = operations.filter((o) => o.op[EXTENSION_MARK] === true).map((o) => `${o.method} ${o.path}`);
    expect(marked).to.deep.equal([
      'GET /v1/openapi.json', 'GET /docs/api', 'GET /docs/api/assets/{asset}',
      ...['read/patchsets/{patchset_id}/diff', 'read/changes/{change_ref}/diff', 'read/snapshots/{snapshot_id}/files/{file_path}', 'read/changes/{change_ref}/attention', 'read/changes/{change_ref}/reviewers', 'read/dashboard', 'read/changes/{change_ref}/readiness', 'read/changes/{change_ref}/lands'].map((p) => `GET /v1/native/repository-authorities/{repository_index}/${p}`),
      'POST /v1/native/repository-authorities/{repository_index}/changes/{change_ref}:setFlags',
      ...['POST git/imports', 'POST git/tags', 'POST git/exports', 'GET git/snapshots/{snapshot_id}', 'GET git/commits/{commit_id}', 'GET /tools/hooks/commit-msg', 'GET git/{line_name}.git/info/refs', 'POST git/{line_name}.git/git-upload-pack', 'POST git/{line_name}.git/git-receive-pack', 'GET git.git/info/refs', 'POST git.git/git-upload-pack', 'POST git.git/git-receive-pack',
        'POST changes/{change_ref}/comments', 'PATCH changes/{change_ref}/comments/{comment_id}', 'DELETE changes/{change_ref}/comments/{comment_id}', 'GET changes/{change_ref}/threads', 'POST changes/{change_ref}/threads/{thread_id}:resolve', 'POST changes/{change_ref}/threads/{thread_id}:reopen', 'POST changes/{change_ref}/patchsets:applySuggestions', 'POST changes/{change_ref}/reviews:publish',
        'POST changes/{change_ref}:rebase',
        'GET changes/{change_ref}/viewed', 'PUT changes/{change_ref}/viewed',
        'POST git-mirrors', 'GET git-mirrors', 'GET git-mirrors/{mirror_id}', 'DELETE git-mirrors/{mirror_id}', 'POST git-mirrors/{mirror_id}:resume',
        'POST webhooks', 'GET webhooks', 'GET webhooks/{webhook_id}', 'DELETE webhooks/{webhook_id}', 'GET webhooks/{webhook_id}/deliveries', 'GET webhooks/{webhook_id}/deliveries/{delivery_id}', 'POST webhooks/{webhook_id}/deliveries/{delivery_id}:redeliver',
        'GET rules', 'PUT rules',
        'POST land-queue', 'GET land-queue', 'GET land-queue/{entry_id}', 'DELETE land-queue/{entry_id}']
        .map((mp) => (mp.includes(' /') ? mp : mp.replace(' ', ' /v1/native/repository-authorities/{repository_index}/'))),
      'GET /v1/native/repository-authorities/{repository_index}/events', 'GET /v1/native/events',
      'POST /archive/promote', 'POST /archive/handover', 'POST /archive/takeover',
      'GET /v1/native/cluster', 'POST /v1/native/cluster/moves', 'POST /v1/native/cluster/failovers', 'POST /v1/native/cluster/handoffs',
      'GET /v1/native/session', 'GET /v1/native/accounts', 'POST /v1/native/accounts', 'PATCH /v1/native/accounts/{account_name}',
      'GET /v1/native/tokens', 'POST /v1/native/tokens', 'DELETE /v1/native/tokens/{token_id}', 'GET /v1/native/groups', 'PUT /v1/native/groups/{group_name}',
      'GET /v1/native/repository-authorities/{repository_index}/access', 'PATCH /v1/native/repository-authorities/{repository_index}/access', 'GET /v1/native/audit',
    ]);
  });

  it(`names each operation's permission (${PERMISSION_MARK}) and its security from it`, () => {
    const schemes = doc.components.securitySchemes;
    expect(schemes.bearerToken).to.include({ type: 'http', scheme: 'bearer' });
    expect(schemes.basicToken).to.include({ type: 'http', scheme: 'basic' });
    expect(schemes.ingressIdentity).to.include({ type: 'apiKey', in: 'header' });
    for (const s of Object.values(schemes)) expect(s.description).to.be.a('string').and.not.equal('');
    const signedIn = [{ bearerToken: [] }, { basicToken: [] }, { ingressIdentity: [] }];
    for (const r of ROUTES) {
      const op = operations.find((o) => o.op.operationId === r.operation)!.op;
      expect(op[PERMISSION_MARK], r.operation).to.equal(r.permission);
      expect(PERMISSIONS as readonly string[], r.operation).to.include(op[PERMISSION_MARK]);
      const expected = r.permission === 'public' ? [] : r.permission === 'session' ? [{}, ...signedIn] : r.permission === 'promotion' ? [{}, { promotionSecret: [] }] : signedIn;
      expect(op.security, r.operation).to.deep.equal(expected);
      for (const req of op.security!) for (const name of Object.keys(req)) expect(schemes, `${r.operation}: ${name}`).to.have.property(name);
      // Only an operation a caller may be refused for who they are documents 401.
      expect(Object.keys(op.responses).includes('401'), r.operation).to.equal(r.permission !== 'public' && (r.permission !== 'promotion' || r.refusals.includes(401)));
    }
  });

  it('describes bodies: JSON routes with their request schema, raw routes with their media type, body-less routes none', () => {
    for (const r of ROUTES) {
      const op = operations.find((o) => o.op.operationId === r.operation)!.op;
      if (r.body.kind === 'none') expect(op.requestBody, r.operation).to.equal(undefined);
      else if (r.body.kind === 'raw') expect(Object.keys(op.requestBody!.content), r.operation).to.deep.equal([r.body.mediaType]);
      else {
        expect(r.request, `${r.operation} has no request struct`).to.not.equal(undefined);
        expect(op.requestBody!.content['application/json'].schema, r.operation).to.deep.equal(toJsonSchema(r.request!));
      }
    }
  });

  it('documents the refusals of each operation, with the error body', () => {
    for (const r of ROUTES) {
      const op = operations.find((o) => o.op.operationId === r.operation)!.op;
      for (const status of refusalsOf(r)) expect(op.responses, `${r.operation} ${status}`).to.have.property(String(status));
      expect(op.responses, r.operation).to.have.property('500');
      if (r.body.kind === 'json') expect(op.responses, r.operation).to.include.keys('400', '413', '415', '422');
      if (r.template.includes('{')) expect(op.responses, r.operation).to.include.keys('400', '404');
    }
  });

  it('pages every list with limit and cursor and answers count and next_cursor', () => {
    const paged = ROUTES.filter((r) => r.paged).map((r) => r.operation).sort();
    expect(paged).to.deep.equal([
      'changes.list', 'comments.threads', 'lines.list', 'patchsets.list', 'plans.list', 'plans.revisions.list', 'read.changeLands', 'read.reviewerInbox',
      'read.taskQueue', 'reviews.list', 'tasks.list', 'webhooks.deliveries.list', 'webhooks.list', 'workerJobs.list',
    ]);
    for (const r of ROUTES.filter((x) => x.paged)) {
      const op = operations.find((o) => o.op.operationId === r.operation)!.op;
      expect(op.parameters!.filter((p) => p.in === 'query').map((p) => p.name), r.operation).to.include.members(['limit', 'cursor']);
      const name = (op.responses['200'].content!['application/json'].schema as { $ref: string }).$ref.split('/').pop()!;
      const schema = doc.components.schemas[name] as { required: string[] };
      expect(schema.required, r.operation).to.include.members(['count', 'next_cursor']);
    }
  });

  it('compiles as JSON Schema 2020-12 (strict): every component and request schema, every reference resolved', () => {
    const ajv = new Ajv2020({ strict: true });
    ajv.addKeyword('components');
    ajv.addSchema({ $id: 'doc', components: doc.components });
    for (const name of Object.keys(doc.components.schemas)) expect(ajv.getSchema(`doc#/components/schemas/${name}`), name).to.be.a('function');
    for (const { op } of operations) {
      const schema = op.requestBody?.content['application/json']?.schema;
      if (schema !== undefined) expect(() => ajv.compile(schema as object), op.operationId).to.not.throw();
    }
  });

  it('uses every component schema', () => {
    const text = JSON.stringify(doc.paths);
    const used = new Set<string>();
    const visit = (name: string) => {
      if (used.has(name)) return;
      used.add(name);
      for (const m of JSON.stringify(doc.components.schemas[name]).matchAll(/#\/components\/schemas\/(\w+)/g)) visit(m[1]);
    };
    for (const m of text.matchAll(/#\/components\/schemas\/(\w+)/g)) visit(m[1]);
    expect(Object.keys(doc.components.schemas).filter((n) => !used.has(n))).to.deep.equal([]);
  });
});

// ---------------------------------------------------------------- request schemas = the structs

/** A value for `schema`: often valid, sometimes with a field missing, of a wrong type or unknown. */
function sample(schema: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  const junk = fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.double({ noNaN: true }), fc.boolean(), fc.constant(null), fc.constant([1]), fc.constant({}));
  if (schema === true) return fc.jsonValue({ maxDepth: 2 });
  if (schema === false || depth > 6) return junk;
  const s = schema as Record<string, any>;
  let valid: fc.Arbitrary<unknown>;
  if (s.const !== undefined) valid = fc.constant(s.const);
  else if (s.enum) valid = fc.constantFrom(...(s.enum as unknown[]));
  else if (s.anyOf) valid = fc.oneof(...(s.anyOf as JsonSchema[]).map((m) => sample(m, depth + 1)));
  else if (s.allOf) {
    // byField: a variant's schema, with the field set to its case (or to another value).
    const branches = (s.allOf as Record<string, any>[]).map((b) => {
      const field = Object.keys(b.if.properties)[0];
      const value = b.if.properties[field].const ?? 'other';
      return sample(b.then ?? b.else, depth + 1).map((v) => (v && typeof v === 'object' && !Array.isArray(v) ? { ...v, [field]: value } : v));
    });
    valid = fc.oneof(...branches);
  } else {
    const types: string[] = Array.isArray(s.type) ? s.type : [s.type];
    valid = fc.oneof(...types.map((t): fc.Arbitrary<unknown> => {
      switch (t) {
        case 'string': return fc.string({ maxLength: 6 });
        case 'integer': return fc.integer({ min: -3, max: 1e6 });
        case 'number': return fc.double({ noNaN: true });
        case 'boolean': return fc.boolean();
        case 'null': return fc.constant(null);
        case 'array': return fc.array(s.items === undefined ? fc.jsonValue({ maxDepth: 1 }) : sample(s.items, depth + 1), { maxLength: 3 });
        case 'object': {
          const props = Object.fromEntries(Object.entries((s.properties ?? {}) as Record<string, JsonSchema>).map(([k, v]) => [k, sample(v, depth + 1)]));
          const full = fc.record(props, { requiredKeys: Object.keys(props).filter((k) => (s.required ?? []).includes(k)) });
          const partial = fc.record(props, { requiredKeys: [] });
          const withUnknown = full.map((v) => ({ ...v, unknown_field: 1 }));
          return fc.oneof(full, partial, withUnknown);
        }
        default: return junk;
      }
    }));
  }
  return fc.oneof({ arbitrary: valid, weight: 6 }, { arbitrary: junk, weight: 1 });
}

describe('OpenAPI request schemas', () => {
  const ajv = new Ajv2020({ strict: true });
  for (const r of ROUTES.filter((x) => x.request)) {
    it(`${r.operation}: the document accepts exactly the bodies its struct accepts`, () => {
      const schema = toJsonSchema(r.request!);
      const validate = ajv.compile(schema as object);
      let accepted = 0;
      // Through JSON text, as a request body arrives (plain objects, no undefined).
      fc.assert(fc.property(sample(schema).map((v) => JSON.parse(JSON.stringify(v ?? null)) as unknown), (body) => {
        const byStruct = r.request!.is(body);
        if (byStruct) accepted++;
        expect(validate(body), `${JSON.stringify(body)}: struct ${byStruct}, schema ${JSON.stringify(validate.errors)}`).to.equal(byStruct);
      }), { numRuns: 300, seed: 4242 });
      expect(accepted, 'some sampled bodies were valid').to.be.greaterThan(0);
    });
  }
});

// ---------------------------------------------------------------- served

describe('GET /v1/openapi.json', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
    await register(server.url, 'described');
  });
  after(() => server.stop());

  it('serves the document the route table generates', async () => {
    const res = await api(server.url, 'GET', '/v1/openapi.json');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    expect(res.json).to.deep.equal(JSON.parse(JSON.stringify(doc)));
    const again = await api(server.url, 'GET', '/v1/openapi.json');
    expect(again.text).to.equal(res.text);
  });

  it('keeps the handshake endpoints hint to the discovery rows', async () => {
    const res = await api(server.url, 'GET', '/v1/handshake');
    const paths = (res.json.endpoints as { path: string }[]).map((e) => e.path);
    expect(paths).to.not.include('/v1/openapi.json');
    expect(paths).to.have.length(ROUTES.filter((r) => r.discover).length);
  });

  it('serves the API reference page and its renderer from the server itself', async () => {
    const page = await api(server.url, 'GET', '/docs/api');
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/^text\/html/);
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(assets.every((a) => a.startsWith('/docs/api/assets/')), assets.join(' ')).to.equal(true);
    expect(page.text).to.include('/v1/openapi.json');
    for (const a of assets) {
      const res = await api(server.url, 'GET', a);
      expect(res.status, a).to.equal(200);
      expect(Number(res.headers.get('content-length')), a).to.be.greaterThan(0);
    }
    const missing = await api(server.url, 'GET', '/docs/api/assets/package.json');
    expect(missing.status).to.equal(404);
  });
});
