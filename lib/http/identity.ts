// The caller's identity (docs/api.md "People"; docs/operations.md "A front door"): the name a
// trusted ingress puts in the request header `--ui-identity-header` names. cairn authenticates
// nobody itself; it believes that header only from the ingress: from the peer addresses of
// `--trust-identity-from` and, with `--trust-identity-secret-file`, only on requests that also
// carry the ingress's shared secret (an address cannot tell the ingress from another process on
// the same host: both dial from 127.0.0.1). A request that sets the header without passing
// those checks is refused (403) before anything reads it; the value is never echoed or logged.
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { timingSafeEqual, createHash } from 'node:crypto';
import { Forbidden, Invalid } from '../domain/errors.js';
import { nameProblem } from '../domain/text.js';

/** The header the ingress sends the shared secret in (with `--trust-identity-secret-file`). */
export const INGRESS_SECRET_HEADER = 'X-Cairn-Ingress-Secret';

export interface IdentityOptions {
  /** The request header naming the caller (`--ui-identity-header`). */
  header: string;
  /** Peer addresses the header is believed from (`--trust-identity-from`); null: any peer. */
  trustFrom?: readonly string[] | null;
  /** The shared secret the ingress sends in X-Cairn-Ingress-Secret (`--trust-identity-secret-file`); null: none asked. */
  secret?: string | null;
}

/** An address as the socket reports it, IPv4-mapped IPv6 as plain IPv4 (`::ffff:127.0.0.1` → `127.0.0.1`). */
export function canonicalAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return (mapped ? mapped[1] : address).toLowerCase();
}

/** `--trust-identity-from`'s list: IP addresses (v4 or v6), comma-separated; throws on anything else. */
export function parseTrustList(text: string): string[] {
  const out: string[] = [];
  for (const part of text.split(',')) {
    const a = part.trim();
    if (isIP(a) === 0) throw new Error(`"${a}" is not an IP address`);
    out.push(canonicalAddress(a));
  }
  return out;
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** The caller's name on `req`, or null when the header is absent (or none is configured); Forbidden/Invalid as above. */
export function callerIdentity(req: IncomingMessage, options: IdentityOptions | null | undefined): string | null {
  if (!options) return null;
  const name = options.header.toLowerCase();
  const values = req.headersDistinct?.[name];
  if (values === undefined || values.length === 0) return null;
  const label = options.header;
  if (options.trustFrom) {
    const peer = canonicalAddress(req.socket.remoteAddress ?? '');
    if (!options.trustFrom.includes(peer)) throw new Forbidden(`${label} is accepted only from the trusted ingress (--trust-identity-from); send the request through it`);
  }
  if (options.secret) {
    const sent = req.headers[INGRESS_SECRET_HEADER.toLowerCase()];
    // Compared as digests: equal lengths, and no timing hint about the secret's prefix.
    if (typeof sent !== 'string' || !timingSafeEqual(digest(sent), digest(options.secret))) {
      throw new Forbidden(`${label} is accepted only from the trusted ingress (it did not carry the ingress secret); send the request through it`);
    }
  }
  if (values.length !== 1) throw new Invalid(`${label} may be given once`);
  const value = headerText(values[0]).trim();
  if (value === '') return null;
  // The rule of every name in a body (lib/domain/text.ts); the value itself is never echoed.
  const problem = nameProblem(value);
  if (problem !== null) throw new Invalid(`${label} ${problem}`);
  return value;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A header value as text. Node hands header bytes over one character per byte (Latin-1); an
 * ingress sends a name as UTF-8 (Caddy's `{http.auth.user.id}`), so bytes that are valid UTF-8
 * are read as UTF-8, and others stay Latin-1 (what Node's own client sends for "José"). Either
 * way a byte 0x80–0x9F left over is a C1 control character, refused as in a body.
 */
function headerText(raw: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\u0000-\u007f]*$/.test(raw)) return raw;
  try {
    return utf8.decode(Buffer.from(raw, 'latin1'));
  } catch {
    return raw;
  }
}
