// The listener and its two phases (spec: "Startup behavior"). The socket accepts at once and a
// plain startup responder answers 503 until `activate` swaps in the ready Koa app: a single
// assignment, so every request is answered wholly by one phase or the other. `stop` is the
// listener's half of a shutdown (docs/operations.md "Stopping").
import http from 'node:http';
import { errorReply } from './errors.js';
const STARTING_ERROR = 'service is starting: repository authorities are being opened';
export function startupResponder(req, res) {
    const isHealth = (req.url ?? '').split('?')[0] === '/healthz';
    const body = isHealth ? { ready: false, status: 'starting' } : { error: STARTING_ERROR, ready: false, status: 'starting' };
    const text = JSON.stringify(body);
    res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'retry-after': '1' });
    res.end(text);
    req.resume();
}
/** How often, while stopping, connections that have become idle are looked for and closed. */
const IDLE_SWEEP_MS = 50;
export class PhasedServer {
    http;
    listener = startupResponder;
    ready = false;
    /** Host/origin rules (./request-guard.ts); the ready app applies them itself, this is for the startup phase. */
    guard = null;
    stopping = false;
    /** Responses not finished yet: those in flight when a stop begins get `Connection: close`. */
    inFlight = new Set();
    /** Resolves once the listener is closed and every connection has ended (set when a stop begins). */
    allClosed = null;
    constructor() {
        this.http = http.createServer((req, res) => this.handle(req, res));
        // A 2 GiB upload at 1 MB/s takes ~35 min: allow an hour per request. Finer request limits
        // belong to the trusted ingress in front (spec: "Authentication").
        this.http.requestTimeout = 3600_000;
        this.http.headersTimeout = 60_000;
    }
    handle(req, res) {
        // Every answer, of either phase and any kind (JSON, errors, files, packs, event streams, git,
        // the UI): no browser may take its bytes for another type than the one it names
        // (docs/operations.md "Security"). Set here, the one place every request passes.
        res.setHeader('X-Content-Type-Options', 'nosniff');
        if (this.stopping) {
            // A request on a connection that was busy when the stop began: answered, then the
            // connection closes (Node closes it after a response that says so).
            res.setHeader('Connection', 'close');
        }
        else {
            this.inFlight.add(res);
            res.once('close', () => this.inFlight.delete(res));
        }
        if (!this.ready && this.guard) {
            const refusal = this.guard.check(req);
            if (refusal) {
                const reply = errorReply(refusal);
                const text = JSON.stringify(reply.body);
                res.writeHead(reply.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
                res.end(text);
                req.resume();
                return;
            }
        }
        this.listener(req, res);
    }
    listen(host, port) {
        return new Promise((resolve, reject) => {
            this.http.once('error', reject);
            this.http.listen(port, host, () => {
                this.http.off('error', reject);
                resolve(this.http.address());
            });
        });
    }
    /** Replace the startup responder with the ready application in one step. */
    activate(listener) {
        this.listener = listener;
        this.ready = true;
    }
    get isReady() {
        return this.ready;
    }
    get isStopping() {
        return this.stopping;
    }
    /**
     * Stop accepting connections; answer every request in flight with `Connection: close` (and
     * any that arrives on a connection busy until now); close keep-alive connections as soon as
     * they are idle. Resolves once every connection has ended, or after `graceMs`, when those
     * still open are closed (a response cut off then was never acknowledged). Event streams never
     * end by themselves: the caller closes them first.
     */
    async stop(graceMs) {
        if (!this.allClosed) {
            this.stopping = true;
            for (const res of this.inFlight)
                if (!res.headersSent)
                    res.setHeader('Connection', 'close');
            this.inFlight.clear();
            this.allClosed = new Promise((resolve) => this.http.close(() => resolve()));
        }
        const allClosed = this.allClosed;
        this.http.closeIdleConnections();
        // A response whose headers were already out when the stop began (a download) leaves its
        // connection idle when it ends: the sweep closes it then.
        const sweep = setInterval(() => this.http.closeIdleConnections(), IDLE_SWEEP_MS);
        let timer;
        const graceOver = new Promise((resolve) => { timer = setTimeout(() => resolve('grace over'), graceMs); });
        try {
            if ((await Promise.race([allClosed, graceOver])) !== 'grace over')
                return { forced: 0 };
            const forced = await new Promise((resolve) => this.http.getConnections((err, count) => resolve(err ? 0 : count)));
            this.http.closeAllConnections();
            await allClosed;
            return { forced };
        }
        finally {
            clearInterval(sweep);
            clearTimeout(timer);
        }
    }
}
//# sourceMappingURL=server.js.map