import { isIP } from 'node:net';
import { TooManyRequests, Unauthorized, Forbidden } from '../domain/errors.js';
import { ANONYMOUS, decide } from '../domain/access.js';
import { canonicalAddress } from './identity.js';
const GIT_CHALLENGE = 'Basic realm="cairn", charset="UTF-8"';
const API_CHALLENGE = 'Bearer realm="cairn"';
const BAD_CREDENTIAL = 'authentication failed: the token is not valid (unknown, revoked or expired, or its account is disabled); create a new one with cairn token create, or sign in again with cairn login';
const MAX_SOURCES = 10_000;
export class AccessGate {
    book;
    mode;
    failuresPerWindow;
    windowMs;
    /** Failed attempts per source in the current window (bounded: the oldest source is forgotten first). */
    failures = new Map();
    constructor(o) {
        this.book = o.book;
        this.mode = o.mode;
        this.failuresPerWindow = o.failuresPerWindow ?? 10;
        this.windowMs = o.windowMs ?? 60_000;
    }
    /** The principal of `req` (`identity`: the name the front door gave, already checked). */
    principal(req, identity, route) {
        const header = req.headers.authorization;
        if (header !== undefined) {
            // Addresses are worked out only while some source has failed (the common case pays nothing).
            if (this.failures.size > 0)
                this.checkRate(sourceOf(req));
            const token = credentialToken(header);
            const who = token === null ? null : this.book.authenticate(token);
            if (!who) {
                this.fail(sourceOf(req));
                throw new Unauthorized(token === null ? 'the Authorization header must be "Bearer TOKEN" or HTTP basic auth with the token as the password' : BAD_CREDENTIAL, challengeFor(route));
            }
            return who;
        }
        if (identity !== null) {
            const known = this.book.knownIngressPrincipal(identity);
            if (known !== undefined)
                return known ?? disabled();
            return this.book.ingressPrincipal(identity).then((who) => who ?? disabled());
        }
        return ANONYMOUS;
    }
    /** Throws 401/403 unless `who` may call `route` in repository `index` (null: not under one). */
    check(operation, permission, who, index) {
        const role = index === null ? null : this.book.roleIn(who, index);
        const d = decide(permission, who, role, operation);
        if (d.allow)
            return;
        if (d.status === 401)
            throw new Unauthorized(d.message, challengeFor({ operation, permission }));
        throw new Forbidden(d.message);
    }
    checkRate(source) {
        const f = this.failures.get(source);
        if (!f)
            return;
        const now = Date.now();
        if (now - f.since >= this.windowMs) {
            this.failures.delete(source);
            return;
        }
        if (f.count >= this.failuresPerWindow) {
            throw new TooManyRequests('too many failed sign-ins from this address; wait and try again with a valid token', Math.max(1, Math.ceil((f.since + this.windowMs - now) / 1000)));
        }
    }
    fail(source) {
        const now = Date.now();
        const f = this.failures.get(source);
        if (f && now - f.since < this.windowMs) {
            f.count += 1;
            return;
        }
        if (f)
            this.failures.delete(source);
        if (this.failures.size >= MAX_SOURCES)
            this.failures.delete(this.failures.keys().next().value);
        this.failures.set(source, { count: 1, since: now });
    }
}
function disabled() {
    throw new Forbidden('this account is disabled; ask a server admin');
}
/** The token of an Authorization header value, or null when it is neither Bearer nor basic auth. */
export function credentialToken(header) {
    const m = /^(\S+)\s+(\S+)\s*$/.exec(header);
    if (!m)
        return null;
    const scheme = m[1].toLowerCase();
    if (scheme === 'bearer')
        return m[2];
    if (scheme !== 'basic')
        return null;
    // base64 of "user:password": the user is ignored, the password is the token.
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(m[2]) || m[2].length > 1024)
        return null;
    const text = Buffer.from(m[2], 'base64').toString('utf8');
    const colon = text.indexOf(':');
    return colon < 0 ? null : text.slice(colon + 1);
}
/** git asks for a password on a Basic challenge; API clients get a Bearer one. */
function challengeFor(route) {
    return route.operation.startsWith('git.') ? GIT_CHALLENGE : API_CHALLENGE;
}
/** Where a request comes from, for counting failures: its address, an IPv6 address as its /64. */
function sourceOf(req) {
    return failureSource(req.socket.remoteAddress ?? '');
}
/** The key failed sign-ins of `address` are counted under: the address, an IPv6 address as its /64 (IPv4-mapped: the IPv4 address). */
export function failureSource(address) {
    const a = canonicalAddress(address);
    if (isIP(a) !== 6)
        return a;
    const groups = expandV6(a);
    return groups ? `${groups.slice(0, 4).join(':')}::/64` : a;
}
function expandV6(a) {
    const [head, tail] = a.split('::');
    const h = head ? head.split(':') : [];
    const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
    if (tail === undefined && h.length !== 8)
        return null;
    const fill = new Array(8 - h.length - t.length).fill('0');
    return [...h, ...fill, ...t].map((g) => g.toLowerCase());
}
//# sourceMappingURL=access-gate.js.map