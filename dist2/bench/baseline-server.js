// Baseline for the pack-upload benchmark: a bare node:http server that does the minimum a
// durable upload needs, the same way cairn's staging does it (for-await over the request,
// sha256 every chunk, write it to a file, fsync, close). No verification, no decompression.
// With GET_BODY_FILE set, every GET answers 200 with that file's bytes as application/json (the
// per-request overhead baseline: same bytes as cairn's answer, nothing else done).
// Usage: node dist/bench/baseline-server.js DIR   → prints {"port": N} on stdout once listening.
import { createHash } from 'node:crypto';
import { promises as fsp, readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
const dir = process.argv[2];
if (!dir) {
    process.stderr.write('usage: baseline-server DIR\n');
    process.exit(2);
}
let uploads = 0;
const getBody = process.env.GET_BODY_FILE ? readFileSync(process.env.GET_BODY_FILE) : null;
const server = http.createServer((req, res) => {
    void (async () => {
        if (req.method === 'GET' && getBody) {
            res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': getBody.length }).end(getBody);
            return;
        }
        if (req.method !== 'PUT') {
            res.writeHead(405).end();
            return;
        }
        const file = path.join(dir, `upload-${uploads++}`);
        const handle = await fsp.open(file, 'wx', 0o644);
        const hash = createHash('sha256');
        let bytes = 0;
        try {
            for await (const chunk of req) {
                hash.update(chunk);
                bytes += chunk.length;
                let written = 0;
                while (written < chunk.length)
                    written += (await handle.write(chunk, written, chunk.length - written)).bytesWritten;
            }
            await handle.sync();
        }
        finally {
            await handle.close();
        }
        const body = JSON.stringify({ sha256: hash.digest('hex'), byte_length: bytes });
        res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    })().catch((err) => {
        if (!res.headersSent)
            res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: err.message }));
    });
});
server.requestTimeout = 0;
server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
//# sourceMappingURL=baseline-server.js.map