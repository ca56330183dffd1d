// The contract check: every answer the HTTP tests receive through `api()` (./helpers.ts) is
// checked against the OpenAPI document the server publishes (lib/http/openapi.ts), so the
// whole suite is the contract test. For each answer: the method and path must name an
// operation of the document (or a documented path answering 405/OPTIONS), the status must be
// one the operation documents, the query parameters ones it declares, the Content-Type one it
// lists for that status, and a JSON body must validate against the status's schema (ajv,
// JSON Schema 2020-12). A mismatch throws, failing the test that made the request. Validators
// are compiled once per process. A request that is deliberately outside the interface (a
// nonsense path, say) opts out with `api(..., { contract: false })`.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { ROUTES } from '../lib/http/routes.js';
import { openApiDocument } from '../lib/http/openapi.js';
export class ContractViolation extends Error {
    name = 'ContractViolation';
}
const DOC = openApiDocument(ROUTES);
const DOC_ID = 'cairn-openapi';
const ajv = new Ajv2020({ strict: true, allErrors: true });
// The document's `paths` and `components` are not JSON Schema keywords: declared, so that the
// document registers as one schema and its `#/components/schemas/...` references resolve in it.
ajv.addKeyword('paths');
ajv.addKeyword('components');
ajv.addSchema({ $id: DOC_ID, paths: DOC.paths, components: DOC.components });
/** Validators by operation, status and media type: compiled on first use, once per process. */
const validators = new Map();
function validatorFor(operationId, status) {
    const key = `${operationId} ${status}`;
    let v = validators.get(key);
    if (!v) {
        // The response schema where the document has it (its $refs resolve inside the document).
        const at = `#/paths/${pointer(pathKeyOf(operationId))}/${methodOf(operationId)}/responses/${status}/content/application~1json/schema`;
        v = ajv.getSchema(`${DOC_ID}${at}`);
        if (!v)
            throw new Error(`no schema at ${at}`);
        validators.set(key, v);
    }
    return v;
}
const pointer = (s) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Path templates as the server matches them (docs/api.md "Paths and actions"). */
function compile(key, item) {
    const segments = key.split('/').slice(1);
    let literals = 0;
    let rest = false;
    const parts = segments.map((seg, i) => {
        const last = i === segments.length - 1;
        if (last && seg === '{file_path}') {
            rest = true;
            return '.+';
        }
        const m = /^\{(\w+)\}([\w.-]*)(:.+)?$/.exec(seg);
        if (m) {
            // A parameter with a literal suffix (`{line_name}.git`) holds more than its suffix.
            if (m[2])
                return `[^/]+${escape(m[2])}${m[3] ? escape(m[3]) : ''}`;
            // A last segment with a ':' always names an action: a parameter alone there holds none.
            if (m[3])
                return `[^/]+${escape(m[3])}`;
            return last ? '[^/:]+' : '[^/]+';
        }
        literals++;
        return escape(seg);
    });
    return { key, re: new RegExp(`^/${parts.join('/')}$`), literals, rest, item };
}
const PATHS = Object.entries(DOC.paths)
    .map(([key, item]) => compile(key, item))
    .sort((a, b) => b.literals - a.literals || Number(a.rest) - Number(b.rest));
const byOperation = new Map();
for (const [key, item] of Object.entries(DOC.paths))
    for (const [method, op] of Object.entries(item))
        byOperation.set(op.operationId, { key, method });
const pathKeyOf = (operationId) => byOperation.get(operationId).key;
const methodOf = (operationId) => byOperation.get(operationId).method;
function findPath(path) {
    return PATHS.find((p) => p.re.test(path));
}
// ---------------------------------------------------------------- the check
/** What was checked in this process: operation → statuses seen. */
export const seen = new Map();
let checked = 0;
function allowOf(item) {
    const methods = Object.keys(item).map((m) => m.toUpperCase());
    if (methods.includes('GET'))
        methods.push('HEAD');
    return [...methods, 'OPTIONS'].sort();
}
function fail(a, what) {
    const body = a.text.length > 600 ? `${a.text.slice(0, 600)}...` : a.text;
    throw new ContractViolation(`contract: ${a.method} ${a.urlPath} answered ${a.status}: ${what}\n  body: ${body}`);
}
function checkAllow(a, item) {
    const allow = (a.headers.get('allow') ?? '').split(',').map((m) => m.trim()).filter(Boolean).sort();
    const expected = allowOf(item);
    if (allow.join(',') !== expected.join(','))
        fail(a, `Allow is "${allow.join(', ')}", the document lists ${expected.join(', ')}`);
}
const mediaType = (headers) => (headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
function checkBody(a, op, status, response, head) {
    const content = response.content ?? {};
    const type = mediaType(a.headers);
    if (Object.keys(content).length === 0) {
        if (a.text !== '')
            fail(a, `${op.operationId} documents no body for ${status}`);
        return;
    }
    if (!(type in content))
        fail(a, `Content-Type ${type || '(none)'} is not documented for ${op.operationId} ${status} (${Object.keys(content).join(', ')})`);
    if (head || type !== 'application/json')
        return;
    let value;
    try {
        value = JSON.parse(a.text);
    }
    catch {
        fail(a, 'the body is not JSON');
    }
    const validate = validatorFor(op.operationId, status);
    if (!validate(value)) {
        const errors = (validate.errors ?? []).slice(0, 8).map((e) => `${e.instancePath || '(body)'} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`);
        fail(a, `the body does not match the ${op.operationId} ${status} schema:\n  - ${errors.join('\n  - ')}`);
    }
}
/** Check one answer against the document; throws ContractViolation on any mismatch. */
export function checkAnswer(a) {
    const url = new URL(a.urlPath, 'http://x');
    const entry = findPath(url.pathname);
    if (!entry)
        fail(a, 'no operation of the OpenAPI document has this path (a deliberate nonsense request opts out with { contract: false })');
    const method = a.method.toUpperCase();
    checked++;
    if (a.status === 503 && mediaType(a.headers) === 'application/json') {
        // Before activation every path answers 503 "starting", whatever the method.
        const body = JSON.parse(a.text);
        if (body.status === 'starting')
            return;
    }
    if (method === 'OPTIONS') {
        if (a.status === 204)
            return checkAllow(a, entry.item);
        if (a.status !== 400 && a.status !== 404)
            fail(a, 'OPTIONS answers 204 (or 400/404 for a bad or unknown repository)');
        return;
    }
    const head = method === 'HEAD';
    const op = entry.item[head ? 'get' : method.toLowerCase()];
    if (!op) {
        if (a.status !== 405)
            fail(a, `the document binds ${allowOf(entry.item).join(', ')} on ${entry.key}, not ${method}: expected 405`);
        checkAllow(a, entry.item);
        return;
    }
    const declared = new Set((op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name));
    for (const name of url.searchParams.keys())
        if (!declared.has(name))
            fail(a, `query parameter ${name} is not documented for ${op.operationId}`);
    const status = String(a.status);
    const response = op.responses[status];
    if (!response)
        fail(a, `status ${status} is not documented for ${op.operationId} (documented: ${Object.keys(op.responses).join(', ')})`);
    let statuses = seen.get(op.operationId);
    if (!statuses)
        seen.set(op.operationId, (statuses = new Set()));
    statuses.add(a.status);
    checkBody(a, op, status, response, head);
}
after(() => {
    if (checked === 0)
        return;
    const unseen = ROUTES.filter((r) => !seen.has(r.operation)).map((r) => r.operation);
    console.log(`      contract: ${checked} answers checked against the OpenAPI document; ${ROUTES.length - unseen.length} of ${ROUTES.length} operations answered`);
    // In a run of (most of) the suite, name the operations no test reached through api().
    if (unseen.length > 0 && unseen.length < ROUTES.length / 2)
        console.log(`      contract: never answered: ${unseen.join(', ')}`);
});
//# sourceMappingURL=contract.js.map