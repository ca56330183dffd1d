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

const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 256 }), https: new https.Agent({ keepAlive: true, maxSockets: 256 }) };

/**
 * Pass the request to `owner` (its node name and base URL) and its answer back. `body`: the request
 * body already read (a registration); otherwise the request's own stream is piped.
 */
export function proxyTo(ctx: Context, owner: { node: string; url: string }, via: string, body?: Buffer): Promise<void> {
  const base = new URL(owner.url);
  const lib = base.protocol === 'https:' ? https : http;
  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (!HOP.has(name) && value !== undefined) headers[name] = value;
  }
  const prior = ctx.req.headers['x-forwarded-for'];
  headers['x-forwarded-for'] = `${prior ? `${Array.isArray(prior) ? prior.join(', ') : prior}, ` : ''}${ctx.req.socket.remoteAddress ?? ''}`;
  headers[PROXIED_HEADER] = via;
  if (body !== undefined) {
    headers['content-length'] = String(body.length);
    delete headers['content-encoding'];
  }
  return new Promise<void>((resolve, reject) => {
    const upstream = lib.request({
      protocol: base.protocol,
      hostname: base.hostname,
      port: base.port,
      method: ctx.method,
      path: `${base.pathname.replace(/\/$/, '')}${ctx.originalUrl}`,
      headers,
      agent: base.protocol === 'https:' ? agents.https : agents.http,
    });
    let answered = false;
    upstream.on('response', (res) => {
      answered = true;
      ctx.respond = false;
      const out: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(res.headers)) if (!HOP.has(name) && value !== undefined) out[name] = value;
      ctx.res.writeHead(res.statusCode ?? 502, out);
      // Streamed as it comes: a pack, an event feed. The client gone: the owner's answer is dropped.
      res.pipe(ctx.res);
      ctx.res.once('close', () => { if (!res.complete) res.destroy(); });
      res.once('end', () => resolve());
      res.once('error', () => { ctx.res.destroy(); resolve(); });
      ctx.status = res.statusCode ?? 502;
    });
    upstream.on('error', (err) => {
      if (answered) return resolve();
      reject(new Busy(`node ${owner.node} (${owner.url}), which owns this repository, did not answer (${err.message}); retry, or see cairn cluster status`));
    });
    ctx.req.once('close', () => { if (!ctx.req.complete) upstream.destroy(); });
    if (body !== undefined) upstream.end(body);
    else ctx.req.pipe(upstream);
  });
}
