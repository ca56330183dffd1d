// The interface described by itself (not in the spec; marked x-cairn-extension in the document):
// GET /v1/openapi.json (./../openapi.ts, generated from the route table), GET /docs/api (an API
// reference page rendered in the browser by swagger-ui-dist from that document) and the
// renderer's files under /docs/api/assets/, served from node_modules by the server (no CDN).
import { NotFound } from '../../domain/errors.js';
import { openApiDocument } from '../openapi.js';
export const OPENAPI_PATH = '/v1/openapi.json';
export const DOCS_PATH = '/docs/api';
export const DOCS_ASSETS_PATH = `${DOCS_PATH}/assets`;
/** The renderer's files the page loads, by the name they are served under: swagger-ui-dist's file and media type. */
export const DOCS_ASSETS = {
    'swagger-ui.css': { file: 'swagger-ui.css', mediaType: 'text/css; charset=utf-8' },
    'swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', mediaType: 'text/javascript; charset=utf-8' },
    'favicon-32x32.png': { file: 'favicon-32x32.png', mediaType: 'image/png' },
};
/** GET /v1/openapi.json: the document of `routes()` (given lazily: the route table imports this module). */
export const openapiHandler = (routes) => async () => ({ json: frozen(openApiDocument(routes())) });
/** The same object every time, frozen deep, so the app serializes it once (app.ts `jsonText`). */
const frozenDocs = new WeakSet();
function frozen(doc) {
    if (!frozenDocs.has(doc)) {
        deepFreeze(doc);
        frozenDocs.add(doc);
    }
    return doc;
}
function deepFreeze(value) {
    if (value === null || typeof value !== 'object' || Object.isFrozen(value))
        return;
    Object.freeze(value);
    for (const v of Object.values(value))
        deepFreeze(v);
}
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>cairn HTTP interface</title>
<link rel="icon" type="image/png" href="${DOCS_ASSETS_PATH}/favicon-32x32.png">
<link rel="stylesheet" href="${DOCS_ASSETS_PATH}/swagger-ui.css">
<style>body { margin: 0; } .swagger-ui .topbar { display: none; }</style>
</head>
<body>
<div id="api-reference"></div>
<script src="${DOCS_ASSETS_PATH}/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(OPENAPI_PATH)},
  dom_id: '#api-reference',
  deepLinking: true,
  displayOperationId: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  filter: true,
  tryItOutEnabled: false,
  validatorUrl: null,
});
</script>
</body>
</html>
`;
/** GET /docs/api: the API reference page. */
export const page = async () => ({ mediaType: 'text/html; charset=utf-8', bytes: Buffer.from(PAGE) });
/** GET /docs/api/assets/{asset}: one of DOCS_ASSETS, as the server's asset source reads it. */
export const asset = async (ctx) => {
    const name = ctx.params.asset;
    const known = Object.hasOwn(DOCS_ASSETS, name) ? DOCS_ASSETS[name] : undefined;
    const found = known && ctx.assets ? await ctx.assets.read(known.file) : null;
    if (!known || !found)
        throw new NotFound('no such API reference asset');
    return { mediaType: known.mediaType, bytes: found, length: found.length };
};
//# sourceMappingURL=docs.js.map