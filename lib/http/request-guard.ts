// Which requests this server answers at all, before anything else looks at them
// (docs/operations.md "Cross-site requests and DNS rebinding"). Two rules, both about browsers:
//  - Host (every request): a page whose name an attacker rebinds to this server's address
//    (DNS rebinding) sends its own name in Host. Only names that address this listener pass:
//    421 Misdirected Request otherwise.
//  - Origin and Sec-Fetch-Site (state-changing requests): a page on another origin can send a
//    body-less or form-encoded POST without a CORS preflight (`mode: 'no-cors'`). A browser
//    names the page's origin in Origin and says cross-site/same-site in Sec-Fetch-Site: a
//    write whose page is not this server's own is refused with 403.
// Clients that are not browsers (the CLI, the runner, curl) send neither Origin nor
// Sec-Fetch-Site and a Host naming the address they connect to, so they pass unchanged.
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { Forbidden, Misdirected, type CairnError } from '../domain/errors.js';

export interface GuardOptions {
  /** Further names (host names or IP literals) clients may use in Host, at any port (`--allowed-host`). */
  allowedHosts?: readonly string[];
  /** Further page origins allowed to send state-changing requests (`--allowed-origin`). */
  allowedOrigins?: readonly string[];
}

/** Methods that change nothing: never refused for their origin. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A Host header: a bracketed IPv6 literal or a name / IPv4 literal, then an optional port (RFC 9110 §7.2, without userinfo or pct-encoding). */
const HOST_HEADER = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/;

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** Host values whose judgement is kept; past it the map starts again. */
const JUDGED_HOSTS = 256;

/**
 * The canonical form of a host (as the WHATWG URL parser writes it, which is what browsers send:
 * lowercase, IPv4 forms such as `0x7f.1` as dotted quads, IPv6 compressed in brackets), or null
 * when it is not a plain host.
 */
export function canonicalHost(host: string): string | null {
  if (!/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)$/.test(host)) return null;
  try {
    const hostname = new URL(`http://${host}/`).hostname;
    return hostname === '' ? null : hostname;
  } catch {
    return null;
  }
}

/**
 * The server's public address as `--public-url` takes it (the front door's: `http(s)://host[:port]`
 * and an optional path, no credentials, query or fragment), without a trailing slash; null when
 * it is not one. Links the server prints (a push's `remote:` lines, the commit-msg hook's) start with it.
 */
export function canonicalPublicUrl(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username || url.password || url.search || url.hash || value.includes('?') || value.includes('#')) return null;
  if (!/^https?:\/\/[^/?#@\s]+(\/[^?#\s]*)?$/i.test(value)) return null;
  // The path as written (URL would resolve `a/../b`): no `.` or `..` segment.
  const written = value.replace(/^https?:\/\/[^/]+/i, '');
  if (written.split('/').some((seg) => seg === '.' || seg === '..' || /^%2e(%2e)?$/i.test(seg) || seg === '.%2e' || seg === '%2e.')) return null;
  const pathPart = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${pathPart}`;
}

/** An origin as `--allowed-origin` takes it (`http(s)://host[:port]`, nothing after), serialized; null when it is not one. */
export function canonicalOrigin(origin: string): string | null {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) return null;
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#@]+\/?$/i.test(origin)) return null;
  return url.origin;
}

const isLiteral = (hostname: string) => isIP(hostname.replace(/^\[(.*)\]$/, '$1')) !== 0;

function isLoopback(hostname: string): boolean {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1');
  return hostname === 'localhost' || bare === '::1' || (isIP(bare) === 4 && bare.startsWith('127.'));
}

function isWildcard(hostname: string): boolean {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1');
  return bare === '0.0.0.0' || bare === '::';
}

/**
 * The authority a request names: its Host header, or, for an absolute-form target
 * (`GET http://host:port/path`), the target's authority, the Host header then being ignored
 * (RFC 9112 §3.2.2) as the router ignores it in routing the path. Only plain http targets
 * can name this listener; null for anything else.
 */
function authorityOf(req: IncomingMessage): string | null {
  const target = req.url ?? '';
  if (target.startsWith('/') || target === '*') return typeof req.headers.host === 'string' ? req.headers.host : null;
  const m = /^http:\/\/([^/?#@]*)(?:[/?#]|$)/i.exec(target);
  return m ? m[1] : null;
}

export class RequestGuard {
  /** Names that address this listener at its own port. */
  private readonly ownNames = new Set<string>();
  /** With a wildcard bind, every IP literal at the listener's port is one of its addresses. */
  private readonly anyLiteral: boolean;
  /** Names allowed at any port (--allowed-host). */
  private readonly extraNames: Set<string>;
  private readonly extraOrigins: Set<string>;
  /** Host values already judged (their authority, or null when refused). */
  private readonly judged = new Map<string, string | null>();

  /** `host` as bound (--bind, brackets optional), `port` the port actually listened on. */
  constructor(host: string, private readonly port: number, options: GuardOptions = {}) {
    const bound = canonicalHost(isIP(host) === 6 ? `[${host}]` : host) ?? host.toLowerCase();
    this.anyLiteral = isWildcard(bound);
    if (!this.anyLiteral) this.ownNames.add(bound);
    if (this.anyLiteral || isLoopback(bound)) for (const name of LOOPBACK_NAMES) this.ownNames.add(name);
    this.extraNames = new Set((options.allowedHosts ?? []).map((h) => {
      const name = canonicalHost(h);
      if (name === null) throw new Error(`--allowed-host: "${h}" is not a host name or IP address`);
      return name;
    }));
    this.extraOrigins = new Set((options.allowedOrigins ?? []).map((o) => {
      const origin = canonicalOrigin(o);
      if (origin === null) throw new Error(`--allowed-origin: "${o}" is not an origin (http://HOST[:PORT] or https://HOST[:PORT])`);
      return origin;
    }));
  }

  /** The refusal this request gets (421 Misdirected, 403 Forbidden), or null when it passes. */
  check(req: IncomingMessage): CairnError | null {
    const host = this.hostOf(req);
    if (host === null) return new Misdirected('this server does not answer for the host the request names (see cairn serve --allowed-host)');
    if (SAFE_METHODS.has(req.method ?? '')) return null;

    const originHeader = req.headers.origin;
    const origin = typeof originHeader === 'string' ? canonicalOrigin(originHeader) : null;
    const explicitlyAllowed = origin !== null && this.extraOrigins.has(origin);
    if (originHeader !== undefined && !explicitlyAllowed) {
      // The page's own origin: plain http, at exactly the authority (host and port) the request
      // names in Host, which passed the check above. "null" (sandboxed frames, file: pages) and
      // anything unparsable are never this server's.
      if (origin === null || !origin.startsWith('http://') || new URL(origin).host !== host) {
        return new Forbidden('a state-changing request from a page of another origin is refused (see cairn serve --allowed-origin)');
      }
    }
    // A browser that sends Sec-Fetch-Site says where the page came from. same-site is another
    // origin on the same host (another port, e.g. a development server): not this server's page.
    const site = req.headers['sec-fetch-site'];
    if ((site === 'cross-site' || site === 'same-site') && !explicitlyAllowed) {
      return new Forbidden(`a state-changing request from a ${site} page is refused (see cairn serve --allowed-origin)`);
    }
    return null;
  }

  /** The request's Host as `hostname[:port]` (the port left out when it is 80, as URL.host writes it), or null when it does not address this listener. */
  private hostOf(req: IncomingMessage): string | null {
    const header = authorityOf(req);
    if (header === null) return null;
    // Nearly every request names the same few hosts: their answers are kept (a bounded map, so
    // a client sending a new Host each time costs the parse, never memory).
    const known = this.judged.get(header);
    if (known !== undefined) return known;
    const judged = this.judgeHost(header);
    if (this.judged.size >= JUDGED_HOSTS) this.judged.clear();
    this.judged.set(header, judged);
    return judged;
  }

  private judgeHost(header: string): string | null {
    const m = HOST_HEADER.exec(header);
    if (!m) return null;
    const name = canonicalHost(m[1]);
    if (name === null) return null;
    const port = m[2] === undefined ? 80 : Number(m[2]);
    const authority = port === 80 ? name : `${name}:${port}`;
    if (this.extraNames.has(name)) return authority;
    if (port !== this.port) return null;
    if (this.ownNames.has(name) || (this.anyLiteral && isLiteral(name))) return authority;
    return null;
  }
}
