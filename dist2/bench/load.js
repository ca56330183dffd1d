// A small closed-loop HTTP/1.1 load generator in the style of autocannon: C keep-alive
// connections on raw sockets, each sending the next GET as soon as the previous response is
// complete, for S seconds. Responses are framed by Content-Length (the servers measured here
// always send one). Run in its own process so it does not share the server's event loop.
// Usage: node dist/bench/load.js URL [CONNECTIONS=32] [SECONDS=5] [WARMUP_SECONDS=1]
//   (LOAD_AUTHORIZATION in the environment: an Authorization header for every request)
//   → prints {"requests", "seconds", "rps", "non2xx", "errors", "bytes"} on stdout.
import net from 'node:net';
/** `authorization`: an Authorization header sent with every request (a token; the per-request cost of the access gate). */
export function load(url, connections, seconds, warmupSeconds = 1, authorization) {
    const u = new URL(url);
    const auth = authorization ? `Authorization: ${authorization}\r\n` : '';
    const request = Buffer.from(`GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nAccept: application/json\r\n${auth}\r\n`, 'latin1');
    let counting = false;
    let stopped = false;
    let requests = 0;
    let non2xx = 0;
    let errors = 0;
    let bytes = 0;
    let started = 0;
    const sockets = [];
    const open = () => {
        const socket = net.connect(Number(u.port), u.hostname);
        socket.setNoDelay(true);
        sockets.push(socket);
        let buf = Buffer.alloc(0);
        socket.on('connect', () => socket.write(request));
        socket.on('data', (chunk) => {
            buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
            for (;;) {
                const end = buf.indexOf('\r\n\r\n');
                if (end < 0)
                    return;
                const head = buf.toString('latin1', 0, end);
                const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
                const length = m ? Number(m[1]) : 0;
                if (buf.length < end + 4 + length)
                    return;
                const status = Number(head.slice(9, 12));
                buf = buf.subarray(end + 4 + length);
                if (counting) {
                    requests++;
                    bytes += end + 4 + length;
                    if (status < 200 || status > 299)
                        non2xx++;
                }
                if (stopped)
                    return;
                socket.write(request);
            }
        });
        socket.on('error', () => {
            if (counting)
                errors++;
        });
        socket.on('close', () => {
            if (!stopped)
                setTimeout(open, 10);
        });
    };
    for (let i = 0; i < connections; i++)
        open();
    return new Promise((resolve) => {
        setTimeout(() => {
            counting = true;
            started = performance.now();
            setTimeout(() => {
                stopped = true;
                counting = false;
                const elapsed = (performance.now() - started) / 1000;
                for (const s of sockets)
                    s.destroy();
                resolve({ requests, seconds: elapsed, rps: requests / elapsed, non2xx, errors, bytes });
            }, seconds * 1000);
        }, warmupSeconds * 1000);
    });
}
if (process.argv[1] && process.argv[1].endsWith('load.js')) {
    const [url, c = '32', s = '5', w = '1'] = process.argv.slice(2);
    if (!url) {
        process.stderr.write('usage: load URL [CONNECTIONS] [SECONDS] [WARMUP_SECONDS]\n');
        process.exit(2);
    }
    // The header comes from the environment, not the command line (a token is not for ps to show).
    const result = await load(url, Number(c), Number(s), Number(w), process.env.LOAD_AUTHORIZATION || undefined);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    process.exit(0);
}
//# sourceMappingURL=load.js.map