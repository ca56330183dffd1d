// No request can crash or exhaust the server. Each reproducer runs against a server in
// a child process (a crash is an exit, not a test-process abort) and reads its memory from
// /proc/<pid>/status. Big bodies are generated on the fly and streamed; the sender stops as soon
// as the server answers.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createGzip } from 'node:zlib';
import { push } from '../lib/client/transfer.js';
import { PACK_FRAME_MAGIC } from '../lib/store/pack.js';
import { api, register, spawnServer, tempDir, until } from './helpers.js';
const AUTH = '/v1/native/repository-authorities';
const MiB = 1024 * 1024;
/**
 * Send a streamed body; stop writing as soon as the response (or an error) arrives. Resolves with
 * the response, or rejects with the transport error (e.g. the server died).
 */
function sendStreaming(url, method, headers, chunks) {
    return new Promise((resolve, reject) => {
        let answered = false;
        let failed = null;
        const req = http.request(url, { method, headers, agent: false }, (res) => {
            answered = true;
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (d) => { text += d; });
            res.on('end', () => { resolve({ status: res.statusCode, text, headers: res.headers }); req.destroy(); });
            res.on('error', () => undefined);
        });
        req.on('error', (err) => {
            failed = err;
            if (!answered)
                reject(err);
        });
        void (async () => {
            for await (const chunk of chunks) {
                if (answered || failed)
                    return;
                if (!req.write(chunk)) {
                    await new Promise((r) => {
                        const done = () => { req.off('drain', done); req.off('response', done); req.off('error', done); r(); };
                        req.once('drain', done);
                        req.once('response', done);
                        req.once('error', done);
                    });
                }
            }
            if (!answered && !failed)
                req.end();
        })();
    });
}
function* repeat(piece, total) {
    for (let sent = 0; sent < total; sent += piece.length)
        yield sent + piece.length <= total ? piece : piece.subarray(0, total - sent);
}
/** gzip of `open` + `fill` repeated to `total` bytes + `close`, produced lazily. */
async function* gzipOf(open, fill, total, close) {
    const gz = createGzip({ level: 1 });
    const out = [];
    gz.on('data', (d) => out.push(d));
    const feed = async (b) => {
        if (!gz.write(b))
            await new Promise((r) => gz.once('drain', r));
    };
    await feed(Buffer.from(open));
    for (const piece of repeat(fill, total)) {
        await feed(piece);
        while (out.length)
            yield out.shift();
    }
    gz.end(Buffer.from(close));
    await new Promise((r) => gz.once('end', r));
    while (out.length)
        yield out.shift();
}
function memoryKiB(pid) {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)[1]);
    return { rss: field('VmRSS'), hwm: field('VmHWM') };
}
/** Reset the peak-RSS counter (Linux ≥ 4.0), so VmHWM covers what follows only. */
function resetPeak(pid) {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
}
/** Memory figures, printed with CAIRN_TEST_VERBOSE=1. */
const note = (text) => { if (process.env.CAIRN_TEST_VERBOSE)
    console.log(`      ${text}`); };
async function alive(server) {
    expect(server.proc.exitCode, `server exited: ${server.output().slice(-2000)}`).to.equal(null);
    // A new connection each time: a pooled keep-alive one may be closed by the server's idle
    // timeout (5 s) just as it is reused after a long test ("other side closed").
    const status = await new Promise((resolve, reject) => {
        http.get(`${server.url}/healthz`, { agent: false }, (r) => {
            r.resume();
            r.on('end', () => resolve(r.statusCode));
        }).on('error', reject);
    });
    expect(status).to.equal(200);
}
describe('hostile request bodies', function () {
    this.timeout(180_000);
    let server;
    let repo;
    let sync;
    const dataDir = path.join(tempDir(), 'data');
    before(async () => {
        server = await spawnServer(dataDir, ['--log-level', 'info']);
        repo = await register(server.url, 'hostile');
        sync = `${server.url}${AUTH}/${repo}/remote-sync/zstd-bulk`;
    });
    // A test that kills the server (old code did) must not take the others down with it.
    beforeEach(async () => {
        if (server.proc.exitCode === null && server.proc.signalCode === null)
            return;
        server = await spawnServer(dataDir, ['--log-level', 'info']);
        sync = `${server.url}${AUTH}/${repo}/remote-sync/zstd-bulk`;
    });
    after(async () => {
        server.proc.kill('SIGKILL');
        await server.exited;
    });
    /** Every test ends by checking that the server is still up and answering. */
    const it = (title, fn) => globalThis.it(title, async function () {
        await fn.call(this);
        await alive(server);
    });
    it('a JSON body between the parse cap and V8\'s longest string is 413 at once (plain, with Content-Length)', async () => {
        const total = 536_870_900;
        const res = await sendStreaming(`${sync}/plan`, 'POST', { 'content-type': 'application/json', 'content-length': String(total) }, (function* () { yield Buffer.from('{'); yield* repeat(Buffer.alloc(MiB, 0x20), total - 2); yield Buffer.from('}'); })());
        expect(res.status).to.equal(413);
    });
    it('the same body gzip-compressed is 413 once its decoded bytes pass the cap; memory stays bounded', async () => {
        resetPeak(server.proc.pid);
        const res = await sendStreaming(`${sync}/plan`, 'POST', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipOf('{', Buffer.alloc(MiB, 0x20), 536_870_898, '}'));
        expect(res.status).to.equal(413);
        expect(JSON.parse(res.text).error).to.match(/once decompressed/);
        note(`gzip of 536,870,900 bytes of spaces: server VmHWM ${(memoryKiB(server.proc.pid).hwm / 1024).toFixed(0)} MiB`);
        // The decoded text is held up to the 256 MiB cap (as a one-byte string), never beyond.
        expect(memoryKiB(server.proc.pid).hwm / 1024).to.be.below(900);
    });
    it('a small gzip of 200 million array elements is refused by the value count, with bounded memory', async () => {
        resetPeak(server.proc.pid);
        const idle = memoryKiB(server.proc.pid).rss;
        const res = await sendStreaming(`${sync}/plan`, 'POST', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipOf('{"snapshot_ids":[', Buffer.from('0,'.repeat(512 * 1024)), 400_000_000, '0]}'));
        expect(res.status).to.equal(413);
        expect(JSON.parse(res.text).error).to.match(/JSON values/);
        note(`gzip of 200M zeros: VmHWM ${((memoryKiB(server.proc.pid).hwm - idle) / 1024).toFixed(0)} MiB above idle`);
        expect((memoryKiB(server.proc.pid).hwm - idle) / 1024).to.be.below(200);
    });
    it('a plain array of small numbers is refused before JSON.parse materializes it', async () => {
        const body = Buffer.concat([Buffer.from('{"snapshot_ids":['), Buffer.from('0,'.repeat(17 * MiB)), Buffer.from('0]}')]);
        const res = await sendStreaming(`${sync}/plan`, 'POST', { 'content-type': 'application/json', 'content-length': String(body.length) }, [body]);
        expect(res.status).to.equal(413);
    });
    it('pull-manifests refuses more have_snapshot_ids than the spec allows before materializing them', async () => {
        const id = 'a'.repeat(64);
        const haves = Buffer.from(`"${id}",`.repeat(150_000));
        const body = Buffer.concat([Buffer.from(`{"contract":"svc.remote_sync.zstd_bulk.pull_manifest.request.v1","head_snapshot_id":"${id}","have_snapshot_ids":[`), haves, Buffer.from(`"${id}"]}`)]);
        const res = await sendStreaming(`${sync}/pull-manifests`, 'POST', { 'content-type': 'application/json', 'content-length': String(body.length) }, [body]);
        expect(res.status).to.equal(413);
    });
    it('JSON nested deeper than the limit is refused', async () => {
        const res = await api(server.url, 'POST', `${AUTH}/${repo}/remote-sync/zstd-bulk/plan`, { body: '['.repeat(100_000), headers: { 'content-type': 'application/json' } });
        expect(res.status).to.equal(413);
    });
    it('eight parallel pack uploads with a bad CAIRNPAK magic are refused within their first bytes; memory stays bounded', async () => {
        resetPeak(server.proc.pid);
        const idle = memoryKiB(server.proc.pid).rss;
        const uploads = Array.from({ length: 8 }, (_, i) => {
            const head = Buffer.alloc(24);
            head.writeUInt32LE(PACK_FRAME_MAGIC, 0);
            head.writeUInt32LE(16 + 4 + 64 * 4_000_000, 4); // a 256 MB header frame, as far as the size says
            head.write('NOTAPACK', 8, 'ascii');
            const total = 300 * MiB;
            const id = randomBytes(32).toString('hex');
            return sendStreaming(`${sync}/${i % 2 ? 'tree' : 'object'}-packs/${id}`, 'PUT', { 'content-type': `application/vnd.svc.remote-sync.${i % 2 ? 'tree' : 'object'}-pack+zstd`, 'content-length': String(total) }, (function* () { yield head; yield* repeat(Buffer.alloc(MiB, 7), total - head.length); })());
        });
        const results = await Promise.all(uploads);
        for (const r of results)
            expect(r.status).to.equal(400);
        note(`8 bad packs: VmHWM ${((memoryKiB(server.proc.pid).hwm - idle) / 1024).toFixed(0)} MiB above idle`);
        expect((memoryKiB(server.proc.pid).hwm - idle) / 1024).to.be.below(200);
    });
    it('a pack header larger than the body can hold, or listing too many objects, is refused at once', async () => {
        const head = Buffer.alloc(24);
        head.writeUInt32LE(PACK_FRAME_MAGIC, 0);
        head.writeUInt32LE(16 + 4 + 64 * 1000, 4);
        head.write('CAIRNPAK', 8, 'ascii');
        head.writeUInt8(1, 17);
        head.writeUInt32LE(1000, 20);
        const id = randomBytes(32).toString('hex');
        const small = await sendStreaming(`${sync}/object-packs/${id}`, 'PUT', { 'content-type': 'application/vnd.svc.remote-sync.object-pack+zstd', 'content-length': '5000' }, [head]);
        expect(small.status).to.equal(400);
        expect(JSON.parse(small.text).error).to.match(/cannot fit/);
        head.writeUInt32LE(16 + 4 + 64 * 300_000, 4);
        head.writeUInt32LE(300_000, 20);
        const many = await sendStreaming(`${sync}/object-packs/${id}`, 'PUT', { 'content-type': 'application/vnd.svc.remote-sync.object-pack+zstd', 'content-length': String(1024 * MiB) }, [head]);
        expect(many.status).to.equal(400);
        expect(JSON.parse(many.text).error).to.match(/at most 262144/);
    });
    it('a pack header at the upload bound (262,144 entries) is buffered and refused within 200 MB per upload', async () => {
        resetPeak(server.proc.pid);
        const idle = memoryKiB(server.proc.pid).rss;
        const count = 262_144;
        const head = Buffer.alloc(24);
        head.writeUInt32LE(PACK_FRAME_MAGIC, 0);
        head.writeUInt32LE(16 + 4 + 64 * count, 4);
        head.write('CAIRNPAK', 8, 'ascii');
        head.writeUInt8(1, 17);
        head.writeUInt32LE(count, 20);
        const total = 24 + 64 * count + 4 + count;
        const uploads = Array.from({ length: 2 }, () => sendStreaming(`${sync}/object-packs/${randomBytes(32).toString('hex')}`, 'PUT', { 'content-type': 'application/vnd.svc.remote-sync.object-pack+zstd', 'content-length': String(total) }, (function* () { yield head; yield* repeat(Buffer.alloc(MiB), total - head.length); })()));
        for (const r of await Promise.all(uploads)) {
            expect(r.status).to.equal(400);
            expect(JSON.parse(r.text).error).to.match(/checksum/); // the whole header was read, then refused
        }
        const grew = (memoryKiB(server.proc.pid).hwm - idle) / 1024;
        note(`2 uploads with a 16 MiB header: VmHWM ${grew.toFixed(0)} MiB above idle`);
        expect(grew).to.be.below(2 * 200);
    });
    it('never echoes a restore token in an error body or a log line', async () => {
        const token = randomBytes(16).toString('hex');
        for (const [method, p] of [['PUT', `/v1/native/repository-restores/${token}/file/x`], ['POST', `/v1/native/repository-restores/${token}`], ['POST', `/${token}`]]) {
            // Paths of no route on purpose (a token in a mistyped path): outside the documented interface.
            const res = await api(server.url, method, p, { body: 'x', headers: { 'content-type': 'application/vnd.svc.remote-authority-file.v1' }, contract: false });
            expect(res.status).to.equal(404);
            expect(res.text).to.not.include(token);
            expect(res.json.error).to.match(/^no route for/);
        }
        // The log is written in batches (every 200 ms): wait for the three request lines.
        const notFound = () => server.output().split('\n').filter((l) => l.includes('"msg":"request"') && l.includes('"status":404'));
        await until('the three 404 request lines in the log', () => notFound().length >= 3);
        expect(server.output()).to.not.include(token);
    });
    it('refuses a restore manifest path with a lone surrogate (400)', async () => {
        const manifest = {
            schema: 'svc.remote-export.v1', state: 'complete', repo_name: 'r', namespace: '', exported_at_s: 1,
            files: [{ path: 'authority.bin', size: 1, sha256: 'a'.repeat(64) }, { path: 'x\ud800', size: 1, sha256: 'b'.repeat(64) }],
        };
        const res = await api(server.url, 'POST', '/v1/native/repository-restores', { json: { manifest, policy_flags: 0 } });
        expect(res.status).to.equal(400);
        expect(res.json.error).to.match(/lone surrogate/);
    });
    describe('snapshot export of a large snapshot', () => {
        let snapshotId;
        const FILES = 6;
        const FILE_BYTES = 36 * MiB; // 216 MiB in all, under the 256 MiB export cap
        before(async () => {
            const dir = path.join(tempDir(), 'tree');
            mkdirSync(path.join(dir, 'sub'), { recursive: true });
            const block = randomBytes(256 * 1024);
            for (let i = 0; i < FILES; i++) {
                const data = Buffer.alloc(FILE_BYTES);
                for (let at = 0; at < FILE_BYTES; at += block.length)
                    block.copy(data, at);
                data.writeUInt32LE(i, 0);
                writeFileSync(path.join(dir, i % 2 ? 'sub' : '', `f${i}.bin`), data);
            }
            writeFileSync(path.join(dir, 'small.txt'), 'hello\n');
            const pushed = await push({ server: server.url, repo, line: 'big', dir, moveLine: true, progress: false, compressionLevel: 1 });
            snapshotId = pushed.snapshot_id;
        });
        it('streams the export with the exact JSON bytes, in bounded memory', async () => {
            const pid = server.proc.pid;
            await new Promise((r) => setTimeout(r, 300));
            resetPeak(pid);
            const idle = memoryKiB(pid).rss;
            const res = await new Promise((resolve, reject) => {
                http.get(`${server.url}${AUTH}/${repo}/snapshots/${snapshotId}`, (r) => {
                    const parts = [];
                    r.on('data', (d) => parts.push(d));
                    r.on('end', () => resolve({ status: r.statusCode, length: Number(r.headers['content-length']), text: Buffer.concat(parts).toString('utf8') }));
                    r.on('error', reject);
                }).on('error', reject);
            });
            const grew = (memoryKiB(pid).hwm - idle) / 1024;
            note(`export of ${FILES * FILE_BYTES / MiB} MiB: VmHWM ${grew.toFixed(1)} MiB above idle`);
            expect(res.status).to.equal(200);
            expect(res.length).to.equal(Buffer.byteLength(res.text));
            const parsed = JSON.parse(res.text);
            // Byte-compatible with JSON.stringify of the whole object (key order, no spaces).
            expect(JSON.stringify(parsed)).to.equal(res.text);
            expect(Object.keys(parsed)).to.deep.equal(['snapshot', 'path', 'include_content', 'file_count', 'total_bytes', 'directories', 'files']);
            expect(parsed.file_count).to.equal(FILES + 1);
            expect(parsed.total_bytes).to.equal(FILES * FILE_BYTES + 6);
            const small = parsed.files.find((f) => f.path === 'small.txt');
            expect(Buffer.from(small.content, 'base64').toString()).to.equal('hello\n');
            const f1 = parsed.files.find((f) => f.path === 'sub/f1.bin');
            const bytes = Buffer.from(f1.content, 'base64');
            expect(bytes.length).to.equal(FILE_BYTES);
            expect(bytes.readUInt32LE(0)).to.equal(1);
            expect(grew, `server grew by ${grew} MiB`).to.be.below(64);
        });
        it('caps concurrent content exports with 503 and Retry-After: 1', async () => {
            const url = `${server.url}${AUTH}/${repo}/snapshots/${snapshotId}`;
            const held = [];
            try {
                for (let i = 0; i < 4; i++) {
                    await new Promise((resolve, reject) => {
                        const req = http.get(url, { agent: false }, (r) => {
                            expect(r.statusCode).to.equal(200);
                            r.pause();
                            resolve();
                        });
                        req.on('error', reject);
                        held.push(req);
                    });
                }
                const busy = await api(server.url, 'GET', `${AUTH}/${repo}/snapshots/${snapshotId}`);
                expect(busy.status).to.equal(503);
                expect(busy.headers.get('retry-after')).to.equal('1');
                const listing = await api(server.url, 'GET', `${AUTH}/${repo}/snapshots/${snapshotId}?include_content=false`);
                expect(listing.status).to.equal(200);
            }
            finally {
                for (const req of held)
                    req.destroy();
            }
            // The places free as the server notices the closed sockets: wait for it (bounded). The
            // wait asks with a GET, which takes a place; a HEAD takes none, so it cannot tell.
            const one = await until('an export place to free', async () => {
                const res = await api(server.url, 'GET', `${AUTH}/${repo}/snapshots/${snapshotId}?path=small.txt`);
                return res.status === 503 ? null : res;
            });
            expect(one.status).to.equal(200);
            const head = await api(server.url, 'HEAD', `${AUTH}/${repo}/snapshots/${snapshotId}?path=small.txt`);
            expect(head.status).to.equal(200);
            expect(Number(head.headers.get('content-length'))).to.equal(Buffer.byteLength(one.text));
        });
    });
});
//# sourceMappingURL=hostile-bodies.test.js.map