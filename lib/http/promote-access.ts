// Who may promote a standby (POST /archive/promote, /archive/takeover) or hand a writer's archive
// over (POST /archive/handover; docs/operations.md "Who may promote"). A promotion makes this
// server the archive's writer and fences the one before it, a handover stops this one writing,
// so reaching the port is not enough:
//  - with a promotion secret (`serve --promote-secret-file`), the request must carry it as
//    `Authorization: Bearer <secret>`, from wherever it comes: 401 otherwise;
//  - without one, only a caller on this machine: a loopback listener, a loopback peer, no web
//    page (Origin, Sec-Fetch-Site) and no proxy header (PROXY_HEADERS: Forwarded, Via,
//    X-Forwarded-*, X-Real-IP, True-Client-IP, …) in between. A server that believes an identity header from a front door refuses it outright:
//    the front door dials from loopback too, on behalf of anyone who reaches it. 403 otherwise.
// The secret is compared as digests in constant time, and never echoed or logged.
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { createHash, timingSafeEqual } from 'node:crypto';
import { Forbidden, Unauthorized } from '../domain/errors.js';
import { canonicalAddress } from './identity.js';

export interface PromoteAccess {
  /** The promotion secret (`--promote-secret-file`), or null when none is configured. */
  secret: string | null;
  /** The listener is bound to a loopback address (not a wildcard, not a network address). */
  loopbackListener: boolean;
  /** The server believes an identity header (`--ui-identity-header`): a front door forwards to it. */
  frontDoor: boolean;
}

/** What an unconfigured caller gets: no promotion at all (in-process tools never promote). */
export const NO_PROMOTION: PromoteAccess = { secret: null, loopbackListener: false, frontDoor: false };

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** An IP address (IPv4-mapped IPv6 as IPv4) in 127.0.0.0/8 or ::1. */
export function isLoopbackAddress(address: string): boolean {
  const a = canonicalAddress(address);
  const family = isIP(a);
  return family !== 0 && LOOPBACK.check(a, family === 4 ? 'ipv4' : 'ipv6');
}

const CHALLENGE = 'Bearer realm="cairn promote"';
const HOW = 'cairn promote --server URL --secret-file FILE sends it';
const CONFIGURE = 'start the standby with --promote-secret-file FILE (a random secret, readable by the server only) and promote with cairn promote --secret-file FILE';
// Headers some proxy or CDN adds on the way in (lower case, as Node names them). A proxy on this
// machine that adds none of them still looks local: docs/operations.md "Who may promote".
const PROXY_HEADERS: readonly string[] = [
  'forwarded', 'via',
  'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port', 'x-original-forwarded-for',
  'x-real-ip', 'x-client-ip', 'client-ip', 'true-client-ip', 'cf-connecting-ip',
];

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** The token of `Authorization: Bearer <token>` (scheme in any case), or null. */
function bearer(req: IncomingMessage): string | null {
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(req.headers.authorization ?? '');
  return m ? m[1]! : null;
}

/** Throws Unauthorized (401) or Forbidden (403) unless `req` may promote this server. */
export function checkPromotion(req: IncomingMessage, access: PromoteAccess): void {
  if (access.secret !== null) {
    const sent = bearer(req);
    if (sent === null) throw new Unauthorized(`promotion needs the promotion secret in Authorization: Bearer (${HOW})`, CHALLENGE);
    // Digests: equal lengths, and no timing hint about how much of the secret matched.
    if (!timingSafeEqual(digest(sent), digest(access.secret))) throw new Unauthorized(`the promotion secret does not match (${HOW})`, CHALLENGE);
    return;
  }
  if (access.frontDoor) {
    throw new Forbidden(`this server believes an identity header from a front door (--ui-identity-header), which connects from loopback for whoever reaches it: promotion needs a promotion secret; ${CONFIGURE}`);
  }
  if (!access.loopbackListener || !isLoopbackAddress(req.socket.remoteAddress ?? '')) {
    throw new Forbidden(`without a promotion secret, a promotion is accepted only on a loopback listener (--bind 127.0.0.1:PORT) from the same machine; ${CONFIGURE}`);
  }
  if (req.headers.origin !== undefined || req.headers['sec-fetch-site'] !== undefined) {
    throw new Forbidden('a promotion from a web page is refused: run cairn promote --server URL on the standby\'s machine');
  }
  const proxied = PROXY_HEADERS.find((h) => req.headers[h] !== undefined);
  if (proxied !== undefined) {
    throw new Forbidden(`a promotion forwarded by a proxy (it carries ${proxied}) may come from anywhere: it needs a promotion secret; ${CONFIGURE}`);
  }
}
