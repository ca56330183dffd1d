// Any node answers (serve --cluster; docs/operations.md "Several nodes"): a request for a
// repository another node owns is passed to that node and its answer passed back, both bodies
// streamed as they come (a push's pack, a clone's, an event feed), never held whole. The owner
// applies its own rules (access, admission, limits) to the request as if it came straight from
// the client, whose address goes along in X-Forwarded-For.
import http from 'node:http';
import https from 'node:https';
import type { Context } from 'koa';
import { Busy } from '../domain/errors.js';

/** Set on a request a node passes on: the owner answers it itself, never passes it again. */
export const PROXIED_HEADER = 'x-cairn-proxied-by';

/** Connection-level headers a proxy does not pass on (RFC 9110 §7.6.1). */
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-authenticate', 'host']);

/**
 * Checks this node made already (the cross-site guard, app.ts): the owner would make them
 * against its own host name, which the browser did not talk to, and refuse a write from the page.
 */
const PASSED_CHECKS = new Set(['origin', 'sec-fetch-site', 'sec-fetch-mode', 'sec-fetch-dest', 'sec-fetch-user']);

/** How long the owner may take to send its answer's headers once the request is sent (a push's is processed first). */
const HEADERS_MS = 10 * 60_000;

// Unbounded sockets per owner: an event feed holds one for as long as its client stays, and a
// bound would queue every other passed request behind them (each is bounded by its client).
const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

/**
 * Pass the request to `owner` (its node name and base URL) and its answer back. `body`: the request
 * body already read (a registration); otherwise the request's own stream is piped.
 */
export function proxyTo(ctx: Context, owner: { node: string; url: string }, via: string, body?: Buffer): Promise<void> {
  const base = new URL(owner.url);
  const lib = base.protocol === 'https:' ? https : http;
  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (!HOP.has(name) && !PASSED_CHECKS.has(name) && value !== undefined) headers[name] = value;
  }
  const prior = ctx.req.headers['x-forwarded-for'];
  headers['x-forwarded-for'] = `${prior ? `${Array.isArray(prior) ? prior.join(', ') : prior}, ` : ''}${ctx.req.socket.remoteAddress ?? ''}`;
  headers[PROXIED_HEADER] = via;
  if (body !== undefined) {
    headers['content-length'] = String(body.length);
    delete headers['content-encoding'];
  }
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let answered = false;
    const done = (err?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(headersTimer);
      if (err) reject(err);
      else resolve();
    };
    const upstream = lib.request({
      protocol: base.protocol,
      hostname: base.hostname,
      port: base.port,
      method: ctx.method,
      path: `${base.pathname.replace(/\/$/, '')}${ctx.originalUrl}`,
      headers,
      agent: base.protocol === 'https:' ? agents.https : agents.http,
    });
    // The client gone, at any moment (before the owner's answer too): the owner's request goes.
    const gone = (): void => {
      if (!ctx.res.writableFinished) upstream.destroy();
      done();
    };
    ctx.res.once('close', gone);
    if (ctx.res.destroyed || ctx.req.socket.destroyed) gone();
    // The owner's headers within the bound once the request is sent (a push's answer waits for
    // its processing); its body (an event feed) may then last.
    let headersTimer: NodeJS.Timeout | undefined;
    upstream.once('finish', () => {
      if (settled || answered) return;
      headersTimer = setTimeout(() => {
        upstream.destroy();
        done(new Busy(`node ${owner.node} (${owner.url}), which owns this repository, did not answer within ${HEADERS_MS / 1000} s; retry, or see cairn cluster status`));
      }, HEADERS_MS);
    });
    upstream.on('response', (res) => {
      answered = true;
      clearTimeout(headersTimer);
      if (settled) {
        res.destroy();
        return;
      }
      ctx.respond = false;
      const out: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(res.headers)) if (!HOP.has(name) && value !== undefined) out[name] = value;
      ctx.status = res.statusCode ?? 502;
      ctx.res.writeHead(res.statusCode ?? 502, out);
      // Streamed as it comes: a pack, an event feed.
      res.pipe(ctx.res);
      res.once('end', () => done());
      // An owner's answer cut short (an error, or destroyed when the client left): ours ends too.
      res.once('close', () => { if (!res.complete) ctx.res.destroy(); done(); });
      res.once('error', () => { ctx.res.destroy(); done(); });
    });
    upstream.on('error', (err) => {
      if (answered) return done();
      done(new Busy(`node ${owner.node} (${owner.url}), which owns this repository, did not answer (${err.message}); retry, or see cairn cluster status`));
    });
    if (body !== undefined) upstream.end(body);
    else ctx.req.pipe(upstream);
  });
}

/**
 * The headers a node sends on a request of its own to another node on a caller's behalf (a
 * move's handoff): the caller's (its credentials, its identity as the front door named it), less
 * the connection's and the body's, and marked as passed by this node.
 */
export function peerHeaders(req: http.IncomingMessage, via: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (HOP.has(name) || PASSED_CHECKS.has(name) || value === undefined) continue;
    if (name === 'content-length' || name === 'content-type' || name === 'content-encoding' || name === 'accept' || name === 'accept-encoding') continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  out[PROXIED_HEADER] = via;
  return out;
}
