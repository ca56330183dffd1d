// The access gate (docs/api.md "Accounts, tokens and roles"): who the caller is, and whether the
// route's permission (the route table's `permission` column) lets them through. It runs after
// the route matched and before anything reads the repository or the body, so a refused request
// changes nothing and learns nothing (not even whether the repository exists).
//  - `Authorization: Bearer TOKEN`, or HTTP basic auth with the token as the password (git);
//  - else the name the front door puts in the identity header (lib/http/identity.ts), whose
//    account is made at first sight without any role;
//  - else anonymous.
// A credential that does not authenticate is 401, whatever the reason (unknown, revoked,
// expired, disabled account: one message). Failed attempts are counted per source (an IPv6
// /64 counts as one) and past the limit the source gets 429 until its window passes, before
// any token is looked at. Tokens are never logged or echoed.
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { TooManyRequests, Unauthorized, Forbidden } from '../domain/errors.js';
import { ANONYMOUS, decide, type Permission, type Principal, type Role } from '../domain/access.js';

/** What the gate reads of a route of the table (./route-types.ts RouteSpec). */
export interface GatedRoute {
  operation: string;
  permission: Permission;
}
import type { AccessBook } from '../authority/access.js';
import { canonicalAddress } from './identity.js';

export type AuthMode = 'tokens' | 'ingress' | 'tokens+ingress';

export interface AccessGateOptions {
  book: AccessBook;
  mode: AuthMode;
  /** Failed authentications a source may make per window before it gets 429. */
  failuresPerWindow?: number;
  windowMs?: number;
}

const GIT_CHALLENGE = 'Basic realm="cairn", charset="UTF-8"';
const API_CHALLENGE = 'Bearer realm="cairn"';
const BAD_CREDENTIAL = 'authentication failed: the token is not valid (unknown, revoked or expired, or its account is disabled); create a new one with cairn token create, or sign in again with cairn login';
const MAX_SOURCES = 10_000;

export class AccessGate {
  readonly book: AccessBook;
  readonly mode: AuthMode;
  private readonly failuresPerWindow: number;
  private readonly windowMs: number;
  /** Failed attempts per source in the current window (bounded: the oldest source is forgotten first). */
  private readonly failures = new Map<string, { count: number; since: number }>();

  constructor(o: AccessGateOptions) {
    this.book = o.book;
    this.mode = o.mode;
    this.failuresPerWindow = o.failuresPerWindow ?? 10;
    this.windowMs = o.windowMs ?? 60_000;
  }

  /** The principal of `req` (`identity`: the name the front door gave, already checked). */
  async principal(req: IncomingMessage, identity: string | null, route: GatedRoute): Promise<Principal> {
    const header = req.headers.authorization;
    if (header !== undefined) {
      const source = sourceOf(req);
      this.checkRate(source);
      const token = credentialToken(header);
      const who = token === null ? null : this.book.authenticate(token);
      if (!who) {
        this.fail(source);
        throw new Unauthorized(token === null ? 'the Authorization header must be "Bearer TOKEN" or HTTP basic auth with the token as the password' : BAD_CREDENTIAL, challengeFor(route));
      }
      return who;
    }
    if (identity !== null) {
      const who = await this.book.ingressPrincipal(identity);
      if (!who) throw new Forbidden('this account is disabled; ask a server admin');
      return who;
    }
    return ANONYMOUS;
  }

  /** Throws 401/403 unless `who` may call `route` in repository `index` (null: not under one). */
  check(route: GatedRoute, who: Principal, index: number | null): void {
    const role: Role | null = index === null ? null : this.book.roleIn(who, index);
    const d = decide(route.permission, who, role, route.operation);
    if (d.allow) return;
    if (d.status === 401) throw new Unauthorized(d.message, challengeFor(route));
    throw new Forbidden(d.message);
  }

  private checkRate(source: string): void {
    const f = this.failures.get(source);
    if (!f) return;
    const now = Date.now();
    if (now - f.since >= this.windowMs) {
      this.failures.delete(source);
      return;
    }
    if (f.count >= this.failuresPerWindow) {
      throw new TooManyRequests('too many failed sign-ins from this address; wait and try again with a valid token', Math.max(1, Math.ceil((f.since + this.windowMs - now) / 1000)));
    }
  }

  private fail(source: string): void {
    const now = Date.now();
    const f = this.failures.get(source);
    if (f && now - f.since < this.windowMs) {
      f.count += 1;
      return;
    }
    if (f) this.failures.delete(source);
    if (this.failures.size >= MAX_SOURCES) this.failures.delete(this.failures.keys().next().value!);
    this.failures.set(source, { count: 1, since: now });
  }
}

/** The token of an Authorization header value, or null when it is neither Bearer nor basic auth. */
export function credentialToken(header: string): string | null {
  const m = /^(\S+)\s+(\S+)\s*$/.exec(header);
  if (!m) return null;
  const scheme = m[1].toLowerCase();
  if (scheme === 'bearer') return m[2];
  if (scheme !== 'basic') return null;
  // base64 of "user:password": the user is ignored, the password is the token.
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(m[2]) || m[2].length > 1024) return null;
  const text = Buffer.from(m[2], 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return colon < 0 ? null : text.slice(colon + 1);
}

/** git asks for a password on a Basic challenge; API clients get a Bearer one. */
function challengeFor(route: GatedRoute): string {
  return route.operation.startsWith('git.') ? GIT_CHALLENGE : API_CHALLENGE;
}

/** Where a request comes from, for counting failures: its address, an IPv6 address as its /64. */
function sourceOf(req: IncomingMessage): string {
  const a = canonicalAddress(req.socket.remoteAddress ?? '');
  if (isIP(a) !== 6) return a;
  const groups = expandV6(a);
  return groups ? `${groups.slice(0, 4).join(':')}::/64` : a;
}

function expandV6(a: string): string[] | null {
  const [head, tail] = a.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  if (tail === undefined && h.length !== 8) return null;
  const fill = new Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => g.toLowerCase());
}

