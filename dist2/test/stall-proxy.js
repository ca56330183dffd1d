// A loopback proxy in front of a test server that can go silent on purpose: for the requests a
// rule picks it answers nothing at all, or sends the headers and the first N body bytes and
// then holds the connection open. Tests use it to make a transfer stall for as long as they like.
import { createServer, request } from 'node:http';
export async function stallProxy(target, rule) {
    const seen = [];
    const heldList = [];
    const waiters = [];
    const sockets = new Set();
    const hold = (what) => {
        heldList.push(what);
        for (const w of waiters.splice(0)) {
            if (w.pattern.test(what))
                w.resolve(what);
            else
                waiters.push(w);
        }
    };
    const base = new URL(target);
    const server = createServer((req, res) => {
        const what = `${req.method} ${req.url}`;
        seen.push(what);
        const decision = rule(req.method ?? 'GET', req.url ?? '/');
        if (decision === 'silent') {
            req.resume();
            hold(what);
            return;
        }
        const upstream = request({ host: base.hostname, port: base.port, method: req.method, path: req.url, headers: { ...req.headers, host: base.host } }, (up) => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            if (decision === false) {
                up.pipe(res);
                return;
            }
            if (typeof decision === 'object') {
                let last = null;
                up.on('data', (chunk) => {
                    if (last)
                        res.write(last);
                    last = chunk;
                });
                up.on('end', () => setTimeout(() => res.end(last ?? undefined), decision.lastChunkDelayMs));
                return;
            }
            let left = decision;
            up.on('data', (chunk) => {
                if (left <= 0)
                    return;
                res.write(chunk.subarray(0, left));
                left -= chunk.length;
                if (left <= 0)
                    hold(what);
            });
        });
        upstream.on('error', () => res.destroy());
        req.pipe(upstream);
    });
    server.on('connection', (s) => {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address();
    return {
        url: `http://127.0.0.1:${port}`,
        seen,
        held: (pattern) => {
            const already = heldList.find((w) => pattern.test(w));
            return already ? Promise.resolve(already) : new Promise((resolve) => waiters.push({ pattern, resolve }));
        },
        close: async () => {
            for (const s of sockets)
                s.destroy();
            await new Promise((resolve) => server.close(() => resolve()));
        },
    };
}
//# sourceMappingURL=stall-proxy.js.map