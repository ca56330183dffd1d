// Typed HTTP access to a cairn server for the CLI and the runner: JSON calls, raw uploads and
// streamed downloads over node:http (keep-alive), with retries when the server answers 503.
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { actingAs, identityHeaderName } from './identity.js';
import { tokenFor } from './credentials.js';
// node:https (and TLS behind it) only for an https:// server: it is a tenth of a pull's start-up.
const require = createRequire(import.meta.url);
const httpsRequest = (url, options, callback) => require('node:https').request(url, options, callback);
/** A request stopped by the client's own `signal` (its deadline), not by the server. */
export class DeadlineError extends Error {
}
export class ServerError extends Error {
    status;
    body;
    /** The server's address (no credentials) when a CairnClient made the request: what a sign-in hint names. */
    server;
    constructor(status, body, what) {
        super(`${describeRequest(what)}: HTTP ${status}${body?.error ? `: ${body.error}` : ''}`);
        this.status = status;
        this.body = body;
    }
}
/** "POST /v1/native/repository-authorities/3/remote-sync/zstd-bulk/commit" -> "repository 3: commit". */
export function describeRequest(what) {
    const m = /^(\w+) \/v1\/native\/repository-authorities\/(\d+)(\/[^?]*)?/.exec(what);
    if (!m)
        return what;
    const rest = (m[3] ?? '').replace('/remote-sync/zstd-bulk/', '').replace(/^\//, '');
    const [kind, id] = rest.split('/');
    const short = (x) => (x && x.length > 16 ? `${x.slice(0, 12)}…` : x ?? '');
    const words = {
        plan: 'upload plan', commit: 'commit', 'object-packs': `object pack ${short(id)}`, 'tree-packs': `tree pack ${short(id)}`,
        'import-manifests': `manifest of snapshot ${short(id)}`, 'pull-manifests': 'pull manifest', snapshots: `snapshot ${short(id)}`,
        lines: `line ${decodeURIComponent(id ?? '')}`, 'worker-jobs': id ? `job ${id}` : 'jobs',
    };
    return `repository ${m[2]}${kind ? `: ${words[kind] ?? rest}` : ''}`;
}
/**
 * A server address as the user typed it: "http://h:p", "https://h", or a bare "host:port"
 * (taken as http). Anything else is refused with what to write instead.
 */
export function normalizeServerUrl(server) {
    let text = server.trim();
    if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text))
        text = `http://${text}`;
    let url;
    try {
        url = new URL(text);
    }
    catch {
        throw new Error(`cannot use server address "${server}": write it as http://HOST:PORT (for example http://127.0.0.1:8088)`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw new Error(`cannot use server address "${server}": only http:// and https:// are supported: write it as http://HOST:PORT (for example http://127.0.0.1:8088)`);
    }
    if (!url.hostname)
        throw new Error(`cannot use server address "${server}": it names no host (write http://HOST:PORT)`);
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}
/**
 * Credentials written in a server address (`http://USER:PASSWORD@host`, for a server behind an
 * ingress that asks for basic auth) as an Authorization header; null when it has none.
 */
export function basicAuthOf(server) {
    let url;
    try {
        url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(server.trim()) ? server.trim() : `http://${server.trim()}`);
    }
    catch {
        return null;
    }
    if (!url.username && !url.password)
        return null;
    return `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`, 'utf8').toString('base64')}`;
}
/** Headers every request of this process carries: the address's credentials, and the identity header when configured (./identity.ts). */
export function standingHeaders(server) {
    const out = {};
    // Credentials in the address win; else the signed-in token (CAIRN_TOKEN or cairn login's, ./credentials.ts).
    const auth = basicAuthOf(server);
    const token = auth ? null : tokenFor(server);
    if (auth)
        out.authorization = auth;
    else if (token)
        out.authorization = `Bearer ${token}`;
    const header = identityHeaderName();
    const who = header ? actingAs() : null;
    if (header && who)
        out[header.toLowerCase()] = who;
    return out;
}
export class CairnClient {
    retries;
    /** The server address without credentials (what messages name). */
    base;
    agent = new Agent({ keepAlive: true, maxSockets: 8 });
    /** Sent with every request (never printed). */
    standing;
    /**
     * Aborts every request of this client (the rejection is the signal's reason; a timeout's,
     * e.g. `AbortSignal.timeout(ms)` as a command's deadline, is a DeadlineError).
     */
    signal;
    /** Told of every chunk of a response body this client reads (a stall watch's progress). */
    onData;
    constructor(server, retries = 20, options = {}) {
        this.retries = retries;
        this.base = normalizeServerUrl(server);
        this.standing = standingHeaders(server);
        this.signal = options.signal;
        this.onData = options.onData;
    }
    /** This client's signal and a call's own, as one. */
    signalFor(own) {
        if (!own)
            return this.signal;
        return this.signal ? AbortSignal.any([this.signal, own]) : own;
    }
    /** An error seen after `signal` aborted is reported as the abort's reason (e.g. "stopped", "stalled"). */
    static aborted(signal, err) {
        if (!signal?.aborted)
            return err;
        const reason = signal.reason;
        return reason?.name === 'TimeoutError' ? new DeadlineError('gave up waiting for the server') : signal.reason;
    }
    /** Fail in the user's terms when `repo` is not registered here (before any work is done). */
    async requireRepository(repo) {
        try {
            const found = await this.json('GET', this.repoPath(repo, ''));
            return found.repository ?? found;
        }
        catch (err) {
            if (err instanceof ServerError && err.status === 404)
                throw new Error(`repository ${repo} is not registered on ${this.base}`);
            throw err;
        }
    }
    /** The line's projection, or null when the line does not exist (the repository must). */
    async lineOrNull(repo, line) {
        return this.jsonOrNull('GET', this.repoPath(repo, `/lines/${encodeURIComponent(line)}`));
    }
    repoPath(repo, rest) {
        return `/v1/native/repository-authorities/${repo}${rest}`;
    }
    /**
     * One request over node:http (keep-alive), retried while the server answers 503 (starting,
     * quiesced). node:http rather than fetch: fetch loads undici on first use, ~100-200 ms of a
     * short command's start-up. `body` is a buffer or a function giving a fresh stream per attempt.
     */
    async send(method, urlPath, headers, body, own) {
        const signal = this.signalFor(own);
        try {
            return await this.sendOnce(method, urlPath, headers, body, signal);
        }
        catch (err) {
            throw CairnClient.aborted(signal, err);
        }
    }
    async sendOnce(method, urlPath, headers, body, signal) {
        for (let attempt = 0;; attempt++) {
            const url = new URL(this.base + urlPath);
            const res = await new Promise((resolve, reject) => {
                const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method, headers: { ...this.standing, ...headers }, agent: url.protocol === 'https:' ? undefined : this.agent, signal }, resolve);
                req.on('error', (err) => reject(signal?.aborted ? signal.reason : new Error(`cannot reach ${this.base}: ${err.code ?? err.message}`)));
                if (body === undefined)
                    req.end();
                else if (Buffer.isBuffer(body))
                    req.end(body);
                else {
                    const stream = body();
                    stream.on('error', (err) => req.destroy(err));
                    stream.pipe(req);
                }
            });
            const chunks = [];
            for await (const chunk of res) {
                chunks.push(chunk);
                this.onData?.();
            }
            const status = res.statusCode ?? 0;
            if (status === 503 && attempt < this.retries) {
                const wait = Number(res.headers['retry-after'] ?? '1');
                await sleep(Math.min(Number.isFinite(wait) ? wait : 1, 5) * 1000, undefined, { signal });
                continue;
            }
            return { status, headers: res.headers, body: Buffer.concat(chunks) };
        }
    }
    parsed(method, urlPath, res) {
        let parsed = null;
        try {
            parsed = res.body.length ? JSON.parse(res.body.toString('utf8')) : null;
        }
        catch {
            parsed = null;
        }
        if (res.status < 200 || res.status >= 300) {
            const err = new ServerError(res.status, parsed, `${method} ${urlPath}`);
            err.server = this.base;
            throw err;
        }
        return parsed;
    }
    /** `signal` aborts this call alone (its reason is the rejection). */
    async json(method, path, body, options = {}) {
        const headers = { accept: 'application/json' };
        let bytes;
        if (body !== undefined) {
            bytes = Buffer.from(JSON.stringify(body), 'utf8');
            headers['content-type'] = 'application/json';
            headers['content-length'] = String(bytes.length);
        }
        return this.parsed(method, path, await this.send(method, path, headers, bytes, options.signal));
    }
    /**
     * Up to `want` rows of a paged list (Infinity: all of them), following `next_cursor` page by
     * page. The answer is the last page's body with the collected rows under `field`, `count` =
     * their number and `next_cursor` where the walk stopped (null when the list is exhausted).
     */
    async collect(path, field, want) {
        const rows = [];
        let cursor = null;
        let body;
        do {
            const limit = Math.min(1000, want - rows.length);
            body = await this.json('GET', `${path}${path.includes('?') ? '&' : '?'}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
            rows.push(...body[field]);
            cursor = body.next_cursor ?? null;
        } while (cursor !== null && rows.length < want);
        return { ...body, [field]: rows, count: rows.length, next_cursor: cursor };
    }
    /** A GET whose answer is text (e.g. a unified diff); errors as for `json`. */
    async text(path, accept) {
        const res = await this.send('GET', path, { accept });
        if (res.status < 200 || res.status >= 300)
            this.parsed('GET', path, res);
        return res.body.toString('utf8');
    }
    /** Like `json` but resolves to null on 404. */
    async jsonOrNull(method, path, body) {
        try {
            return await this.json(method, path, body);
        }
        catch (err) {
            if (err instanceof ServerError && err.status === 404)
                return null;
            throw err;
        }
    }
    async putRaw(path, mediaType, bytes) {
        const headers = { 'content-type': mediaType, 'content-length': String(bytes.length), accept: 'application/json' };
        return this.parsed('PUT', path, await this.send('PUT', path, headers, bytes));
    }
    /** Upload a file's bytes as a raw body, streamed (never read whole into memory). */
    async putFile(path, mediaType, file) {
        const { size } = await stat(file);
        const headers = { 'content-type': mediaType, 'content-length': String(size), accept: 'application/json' };
        return this.parsed('PUT', path, await this.send('PUT', path, headers, () => createReadStream(file)));
    }
    /** A raw GET read whole into one buffer (sized from content-length when the server gives it). */
    async downloadBuffer(urlPath) {
        const res = await this.send('GET', urlPath, {});
        if (res.status !== 200) {
            let parsed = null;
            try {
                parsed = JSON.parse(res.body.toString('utf8'));
            }
            catch {
                parsed = null;
            }
            throw Object.assign(new ServerError(res.status, parsed, `GET ${urlPath}`), { server: this.base });
        }
        return res.body;
    }
    /**
     * A raw GET's response for the caller to read as it arrives (status 200 only; an error status
     * becomes a ServerError, 503 is retried). `destroy()` it to stop early.
     */
    async openDownload(urlPath) {
        try {
            return await this.openDownloadOnce(urlPath);
        }
        catch (err) {
            throw CairnClient.aborted(this.signal, err);
        }
    }
    async openDownloadOnce(urlPath) {
        const signal = this.signal;
        for (let attempt = 0;; attempt++) {
            const res = await new Promise((resolve, reject) => {
                const url = new URL(this.base + urlPath);
                const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method: 'GET', headers: this.standing, agent: url.protocol === 'https:' ? undefined : this.agent, signal }, resolve);
                req.on('error', (err) => reject(signal?.aborted ? signal.reason : new Error(`cannot reach ${this.base}: ${err.code ?? err.message}`)));
                req.end();
            });
            if (res.statusCode === 200)
                return res;
            const chunks = [];
            for await (const chunk of res)
                chunks.push(chunk);
            if (res.statusCode === 503 && attempt < this.retries) {
                await sleep(1000, undefined, { signal });
                continue;
            }
            let parsed = null;
            try {
                parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            }
            catch {
                parsed = null;
            }
            throw Object.assign(new ServerError(res.statusCode ?? 0, parsed, `GET ${urlPath}`), { server: this.base });
        }
    }
    /**
     * Stream a raw GET to `file`; returns the byte count. Uses node:http directly: for large
     * bodies it is several times faster than fetch's web-stream bridge.
     */
    async download(urlPath, file) {
        const res = await this.openDownload(urlPath);
        let bytes = 0;
        res.on('data', (chunk) => { bytes += chunk.length; });
        await pipeline(res, createWriteStream(file));
        return bytes;
    }
}
//# sourceMappingURL=http.js.map