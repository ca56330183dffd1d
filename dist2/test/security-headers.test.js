// Every answer cairn gives carries `X-Content-Type-Options: nosniff` (docs/operations.md
// "Security", docs/api.md "Request errors"), so no browser takes a JSON answer, an error, a file
// or a pack for HTML or script: every row of the route table (whatever it answers to an empty
// body: a refusal, 404, 409, ...), and one answer of each kind besides — JSON, a file's bytes, a
// pack, the API reference and its assets, the OpenAPI document, an event stream, git's smart
// HTTP, the UI's pages and assets, a redirect, OPTIONS, 404 without a route, 405, 415, 421, 413
// and the startup phase's 503.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { ROUTES } from '../lib/http/routes.js';
import { PhasedServer } from '../lib/http/server.js';
import { api, ok, register, startTestServer, tempDir } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
describe('X-Content-Type-Options: nosniff on every answer', function () {
    this.timeout(120_000);
    let s;
    let repo;
    let snapshot;
    before(async () => {
        s = await startTestServer();
        repo = await register(s.url, 'files');
        const dir = path.join(tempDir(), 'tree');
        await fsp.mkdir(dir, { recursive: true });
        await fsp.writeFile(path.join(dir, 'a.txt'), 'a\n');
        await fsp.writeFile(path.join(dir, 'page.html'), '<script>alert(1)</script>\n');
        snapshot = (await push({ server: s.url, repo, line: 'main', dir, moveLine: true, progress: false })).snapshot_id;
    });
    after(() => s.stop());
    const expectNosniff = (res, what) => {
        expect(res.headers.get('x-content-type-options'), `${what} (${res.status})`).to.equal('nosniff');
    };
    it('every row of the route table, sent an empty body of its kind', async () => {
        // A repository of its own: some rows change it (a retirement starts); the answers' headers are under test, not their statuses.
        const walk = await register(s.url, 'walk');
        const values = { repository_index: String(walk), worker_job_index: '1', line_name: 'main', file_path: 'a.txt', snapshot_id: snapshot };
        const statuses = new Set();
        for (const r of ROUTES) {
            const p = r.template.replace(/\{(\w+)\}/g, (_m, name) => encodeURIComponent(values[name] ?? 'x')) + (r.action ? `:${r.action}` : '');
            const init = { method: r.method };
            if (r.body.kind === 'json')
                init.headers = { 'content-type': 'application/json' };
            if (r.body.kind === 'raw')
                init.headers = { 'content-type': r.body.mediaType };
            if (r.body.kind !== 'none')
                init.body = r.body.kind === 'json' ? '{}' : '';
            const res = await fetch(`${s.url}${p}`, init);
            await res.arrayBuffer();
            expectNosniff(res, `${r.operation} ${r.method} ${p}`);
            statuses.add(res.status);
        }
        // Successes and refusals of several kinds were among them.
        expect([...statuses].some((x) => x < 300) && [...statuses].some((x) => x >= 400)).to.equal(true);
    });
    it('one answer of each kind: JSON, files, packs, documents, streams, git, the UI, and refusals', async () => {
        const get = async (p, init = {}) => {
            const res = await fetch(`${s.url}${p}`, { redirect: 'manual', ...init });
            await res.arrayBuffer();
            return res;
        };
        const cases = [
            ['JSON /healthz', () => get('/healthz'), 200],
            ['JSON list', () => get(R(repo, '/lines')), 200],
            ['a file as bytes (HTML inside)', () => get(R(repo, `/read/snapshots/${snapshot}/files/page.html`)), 200],
            ['the OpenAPI document', () => get('/v1/openapi.json'), 200],
            ['the API reference page', () => get('/docs/api'), 200],
            ['the UI page', () => get('/ui/'), 200],
            ['a redirect to the UI', () => get('/'), 302],
            ['a UI asset that does not exist', () => get('/ui/assets/nope.js'), 404],
            ['the UI refusing POST', () => get('/ui/', { method: 'POST' }), 405],
            ['git info/refs', () => get(R(repo, '/git/main.git/info/refs?service=git-upload-pack')), 200],
            ['OPTIONS', () => get(R(repo, '/lines'), { method: 'OPTIONS' }), 204],
            ['404 without a route', () => get('/v1/native/nothing-here'), 404],
            ['404 of an unknown entity', () => get(R(repo, '/changes/change-99')), 404],
            ['405', () => get('/healthz', { method: 'DELETE' }), 405],
            ['415', () => get(R(repo, '/tasks'), { method: 'POST', body: '{}', headers: { 'content-type': 'text/plain' } }), 415],
            ['422', () => get(R(repo, '/tasks'), { method: 'POST', body: '[]', headers: { 'content-type': 'application/json' } }), 422],
            ['400', () => get(R(repo, '/tasks'), { method: 'POST', body: '{', headers: { 'content-type': 'application/json' } }), 400],
            ['413 on Content-Length', () => get(R(repo, '/tasks'), { method: 'POST', body: 'x'.repeat(3 * 1024 * 1024), headers: { 'content-type': 'application/json' } }), 413],
        ];
        for (const [what, send, status] of cases) {
            const res = await send();
            expect(res.status, what).to.equal(status);
            expectNosniff(res, what);
        }
        // 421: a Host that does not name this server (a request fetch cannot make: Host is its own).
        const http = await import('node:http');
        const wrongHost = await new Promise((resolve, reject) => {
            const url = new URL(s.url);
            http.get({ host: url.hostname, port: url.port, path: '/healthz', headers: { host: 'evil.example' } }, (res) => {
                res.resume();
                res.on('end', () => resolve({ status: res.statusCode, nosniff: res.headers['x-content-type-options'] }));
            }).on('error', reject);
        });
        expect(wrongHost).to.deep.equal({ status: 421, nosniff: 'nosniff' });
        // An event stream: its headers, then it is let go.
        const ac = new AbortController();
        const stream = await fetch(`${s.url}${R(repo, '/events')}`, { headers: { accept: 'text/event-stream' }, signal: ac.signal });
        expect(stream.headers.get('content-type')).to.match(/^text\/event-stream/);
        expectNosniff(stream, 'an event stream');
        ac.abort();
        await stream.body?.cancel().catch(() => undefined);
        // A pack's bytes.
        const manifest = await ok(api(s.url, 'POST', R(repo, '/remote-sync/zstd-bulk/pull-manifests'), { json: { contract: 'svc.remote_sync.zstd_bulk.pull_manifest.request.v1', head_snapshot_id: snapshot } }));
        const pack = await get(R(repo, `/remote-sync/zstd-bulk/object-packs/${manifest.object_packs[0].pack_id}`));
        expect(pack.status).to.equal(200);
        expectNosniff(pack, 'an object pack');
    });
    it('the startup phase: its 503s carry it too', async () => {
        const server = new PhasedServer();
        const address = await server.listen('127.0.0.1', 0);
        try {
            for (const p of ['/healthz', '/v1/native/repository-authorities']) {
                const res = await fetch(`http://127.0.0.1:${address.port}${p}`);
                await res.arrayBuffer();
                expect(res.status).to.equal(503);
                expectNosniff(res, `starting: ${p}`);
            }
        }
        finally {
            await server.stop(1000);
        }
    });
});
//# sourceMappingURL=security-headers.test.js.map