import { isIP } from 'node:net';
import { timingSafeEqual, createHash } from 'node:crypto';
import { Forbidden, Invalid } from '../domain/errors.js';
import { nameProblem } from '../domain/text.js';
/** The header the ingress sends the shared secret in (with `--trust-identity-secret-file`). */
export const INGRESS_SECRET_HEADER = 'X-Cairn-Ingress-Secret';
/** An address as the socket reports it, IPv4-mapped IPv6 as plain IPv4 (`::ffff:127.0.0.1` → `127.0.0.1`). */
export function canonicalAddress(address) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    return (mapped ? mapped[1] : address).toLowerCase();
}
/** `--trust-identity-from`'s list: IP addresses (v4 or v6), comma-separated; throws on anything else. */
export function parseTrustList(text) {
    const out = [];
    for (const part of text.split(',')) {
        const a = part.trim();
        if (isIP(a) === 0)
            throw new Error(`"${a}" is not an IP address`);
        out.push(canonicalAddress(a));
    }
    return out;
}
const digest = (s) => createHash('sha256').update(s, 'utf8').digest();
/** The caller's name on `req`, or null when the header is absent (or none is configured); Forbidden/Invalid as above. */
export function callerIdentity(req, options) {
    if (!options)
        return null;
    const name = options.header.toLowerCase();
    const values = req.headersDistinct?.[name];
    if (values === undefined || values.length === 0)
        return null;
    const label = options.header;
    if (options.trustFrom) {
        const peer = canonicalAddress(req.socket.remoteAddress ?? '');
        if (!options.trustFrom.includes(peer))
            throw new Forbidden(`${label} is accepted only from the trusted ingress (--trust-identity-from); send the request through it`);
    }
    if (options.secret) {
        const sent = req.headers[INGRESS_SECRET_HEADER.toLowerCase()];
        // Compared as digests: equal lengths, and no timing hint about the secret's prefix.
        if (typeof sent !== 'string' || !timingSafeEqual(digest(sent), digest(options.secret))) {
            throw new Forbidden(`${label} is accepted only from the trusted ingress (it did not carry the ingress secret); send the request through it`);
        }
    }
    if (values.length !== 1)
        throw new Invalid(`${label} may be given once`);
    const value = headerText(values[0]).trim();
    if (value === '')
        return null;
    // The rule of every name in a body (lib/domain/text.ts); the value itself is never echoed.
    const problem = nameProblem(value);
    if (problem !== null)
        throw new Invalid(`${label} ${problem}`);
    return value;
}
const utf8 = new TextDecoder('utf-8', { fatal: true });
/**
 * A header value as text. Node hands header bytes over one character per byte (Latin-1); an
 * ingress sends a name as UTF-8 (Caddy's `{http.auth.user.id}`), so bytes that are valid UTF-8
 * are read as UTF-8, and others stay Latin-1 (what Node's own client sends for "José"). Either
 * way a byte 0x80–0x9F left over is a C1 control character, refused as in a body.
 */
function headerText(raw) {
    // eslint-disable-next-line no-control-regex
    if (/^[\u0000-\u007f]*$/.test(raw))
        return raw;
    try {
        return utf8.decode(Buffer.from(raw, 'latin1'));
    }
    catch {
        return raw;
    }
}
//# sourceMappingURL=identity.js.map