// The per-request context of the HTTP layer: the Node request and response plus the few things
// the dispatcher and the handlers read (method, path, query, headers) and what the request log
// line names. It replaces Koa's context on the request path (README "Per-request overhead"):
// Koa's per-request objects, delegations, on-finished hooks and respond() were most of the
// server's own CPU time per small request. Semantics kept from Koa: `path` is the raw pathname
// (not decoded), `query` parses with URLSearchParams (a repeated key gives an array), `get`
// answers '' for a missing header.
import type { IncomingMessage, ServerResponse } from 'node:http';

export type Query = Record<string, string | string[] | undefined>;

export class HttpContext {
  readonly method: string;
  readonly path: string;
  private readonly search: string;
  private parsedQuery: Query | null = null;
  /** The route template (with `:action`) and operation, once matched: what the log line names. */
  routeTemplate: string | null = null;
  operation: string | null = null;

  constructor(readonly req: IncomingMessage, readonly res: ServerResponse) {
    this.method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    let pathname = q < 0 ? url : url.slice(0, q);
    if (!pathname.startsWith('/')) {
      // Absolute form (`GET http://host/path`), as parseurl reads it.
      try {
        pathname = new URL(url).pathname;
      } catch {
        /* left as sent: no route matches it */
      }
    }
    this.path = pathname;
    this.search = q < 0 ? '' : url.slice(q + 1);
  }

  get query(): Query {
    if (this.parsedQuery) return this.parsedQuery;
    const out: Query = {};
    if (this.search !== '') {
      const params = new URLSearchParams(this.search);
      for (const key of new Set(params.keys())) {
        const values = params.getAll(key);
        Object.defineProperty(out, key, { value: values.length <= 1 ? values[0] : values, writable: true, enumerable: true, configurable: true });
      }
    }
    this.parsedQuery = out;
    return out;
  }

  /** A request header ('' when absent). */
  get(name: string): string {
    const v = this.req.headers[name.toLowerCase()];
    if (v === undefined) return '';
    return Array.isArray(v) ? v.join(', ') : v;
  }

  set(name: string, value: string): void {
    this.res.setHeader(name, value);
  }

  get status(): number {
    return this.res.statusCode;
  }

  set status(code: number) {
    this.res.statusCode = code;
  }

  /** Whether the request announces a body (RFC 9112 §6.3: Content-Length or Transfer-Encoding). */
  get hasBody(): boolean {
    const h = this.req.headers;
    return h['transfer-encoding'] !== undefined || h['content-length'] !== undefined;
  }
}
