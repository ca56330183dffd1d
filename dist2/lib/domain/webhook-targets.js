// Where webhooks may send (docs/operations.md "Webhook targets"): pure rules over addresses, so
// the registration (the URL as written) and the connection (every address its host resolves to,
// lib/authority/webhook-dispatcher.ts) are judged by one function.
//
// Only global unicast addresses are open by default. Loopback, link-local (cloud metadata
// services included), private, shared (CGNAT), unique-local, multicast, unspecified, broadcast,
// reserved and IPv4-embedding IPv6 forms are refused unless `cairn serve --webhook-allow` opens
// them. The server's own listener is refused always. Parsing and range tables are ipaddr.js's:
// the special-purpose registries are long and change, and a hand-written parser would have to
// agree with every form that URL parsing and getaddrinfo accept.
import ipaddr from 'ipaddr.js';
import { Invalid } from './errors.js';
/** Nothing opened, no listener known. */
export const STRICT_TARGETS = { allowRanges: [], allowHosts: [], listener: null };
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;
/** A host name as compared: lowercase, without the root's trailing dot. */
const hostKey = (host) => host.toLowerCase().replace(/\.$/, '');
/**
 * The policy of `cairn serve --webhook-allow` entries: each a CIDR range (`10.0.0.0/8`,
 * `fd00::/8`), one address (`10.1.2.3`, `::1`) or a host name (`hooks.internal`). Throws
 * Invalid naming a malformed entry.
 */
export function webhookTargets(allow, listener) {
    const allowRanges = [];
    const allowHosts = [];
    for (const entry of allow) {
        const e = entry.trim();
        if (e.includes('/')) {
            if (!ipaddr.isValidCIDR(e))
                throw new Invalid(`--webhook-allow ${JSON.stringify(entry)} is not a CIDR range (e.g. 10.0.0.0/8, fd00::/8)`);
            const [addr, bits] = ipaddr.parseCIDR(e);
            allowRanges.push([unmapped(addr), addr.kind() === 'ipv6' && addr.isIPv4MappedAddress() ? Math.max(0, bits - 96) : bits]);
        }
        else if (ipaddr.isValid(bracketless(e)) && isIpLiteral(bracketless(e))) {
            const addr = unmapped(ipaddr.parse(bracketless(e)));
            allowRanges.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
        }
        else if (isHostName(hostKey(e))) {
            allowHosts.push(hostKey(e));
        }
        else {
            throw new Invalid(`--webhook-allow ${JSON.stringify(entry)} is neither a CIDR range, an IP address nor a host name`);
        }
    }
    return { allowRanges, allowHosts, listener };
}
/** A name URL parsing keeps as it is (not `0x7f.1` or `2130706433`, which it turns into an address). */
function isHostName(h) {
    if (!HOST_NAME.test(h))
        return false;
    try {
        return new URL(`http://${h}/`).hostname === h;
    }
    catch {
        return false;
    }
}
const bracketless = (host) => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);
/** Strict literal forms only: ipaddr.isValid also takes `0x7f.1` and `2130706433`, which are host names to a resolver. */
function isIpLiteral(s) {
    return ipaddr.IPv4.isValidFourPartDecimal(s) || (s.includes(':') && ipaddr.IPv6.isValid(s));
}
/** `::ffff:a.b.c.d` is a.b.c.d on a dual-stack socket: judge it as what it reaches. */
function unmapped(addr) {
    return addr.kind() === 'ipv6' && addr.isIPv4MappedAddress() ? addr.toIPv4Address() : addr;
}
const RULES = {
    loopback: 'a loopback address',
    linkLocal: 'a link-local address (cloud metadata services live there)',
    private: 'a private address (RFC 1918)',
    carrierGradeNat: 'a shared address (100.64.0.0/10, carrier-grade NAT)',
    uniqueLocal: 'a unique-local address (fc00::/7)',
    multicast: 'a multicast address',
    unspecified: 'an unspecified address',
    broadcast: 'a broadcast address',
};
/**
 * Why `address` (an IP literal as a resolver returns it) is not a default target, or null when
 * it is global unicast. IPv4-mapped IPv6 addresses are judged as the IPv4 address they reach;
 * every other special-purpose range (reserved, documentation, benchmarking, 6to4, Teredo,
 * NAT64, ...) is refused as such.
 */
export function addressRule(address) {
    const addr = parseAddress(address);
    if (!addr)
        return 'not an IP address';
    const inner = unmapped(addr);
    const range = inner.range();
    if (range === 'unicast')
        return inner.kind() === 'ipv6' && !inner.match(GLOBAL_UNICAST_V6) ? 'a reserved address (outside 2000::/3)' : null;
    const rule = RULES[range] ?? `a special-purpose address (${range})`;
    return inner === addr ? rule : `${rule} in IPv4-mapped form (${inner.toString()})`;
}
/** IPv6 global unicast: everything else (the IPv4-compatible ::/96 included) is reserved or unassigned. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
function parseAddress(address) {
    const a = bracketless(address).replace(/%.*$/, ''); // a zone id (fe80::1%eth0) names the interface, not the address
    return ipaddr.isValid(a) ? ipaddr.parse(a) : null;
}
/** Whether the host name (as the URL has it) is opened by a --webhook-allow host entry. */
export function hostAllowed(targets, host) {
    return targets.allowHosts.includes(hostKey(bracketless(host)));
}
/** The names RFC 6761 reserves for loopback: they never leave the machine, whatever DNS says. */
export function isLoopbackName(host) {
    const h = hostKey(host);
    return h === 'localhost' || h.endsWith('.localhost');
}
/**
 * Whether sending to `address`:`port` is refused. `byHost`: the URL's host name is opened by
 * --webhook-allow (its addresses are then not judged by range). `localAddresses`: this
 * machine's interface addresses, which a wildcard listener answers on.
 */
export function refusal(targets, address, port, byHost, localAddresses) {
    const addr = parseAddress(address);
    if (!addr)
        return { kind: 'internal', rule: 'not an IP address' };
    const inner = unmapped(addr);
    if (isListener(targets.listener, inner, port, localAddresses))
        return { kind: 'listener' };
    if (byHost)
        return null;
    const rule = addressRule(address);
    if (rule === null)
        return null;
    if (targets.allowRanges.some(([net, bits]) => net.kind() === inner.kind() && inner.match(net, bits)))
        return null;
    return { kind: 'internal', rule };
}
/**
 * The listener's own port at its address, at any loopback or unspecified address (a connection
 * to 0.0.0.0 reaches the local host), and, when it is bound to every interface, at any of them.
 */
function isListener(listener, addr, port, localAddresses) {
    if (!listener || port !== listener.port)
        return false;
    const range = addr.range();
    if (range === 'loopback' || range === 'unspecified')
        return true;
    const bound = parseAddress(listener.address);
    if (!bound)
        return false;
    const own = unmapped(bound);
    if (own.kind() === addr.kind() && own.toNormalizedString() === addr.toNormalizedString())
        return true;
    if (own.range() !== 'unspecified')
        return false;
    return localAddresses.some((l) => {
        const a = parseAddress(l);
        return a !== null && unmapped(a).kind() === addr.kind() && unmapped(a).toNormalizedString() === addr.toNormalizedString();
    });
}
/** The port a URL connects to. */
export function targetPort(url) {
    return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}
const OPEN_HINT = 'cairn serve --webhook-allow opens internal targets';
/**
 * A registration's target as written (the URL normalized by validateWebhookUrl): a literal
 * address is judged here, and so is a loopback name; any other host name is judged at each
 * attempt, address by address, once resolved. Throws Invalid naming the rule.
 */
export function checkRegisteredTarget(url, targets, localAddresses) {
    const parsed = new URL(url);
    const host = bracketless(parsed.hostname);
    const port = targetPort(parsed);
    const byHost = hostAllowed(targets, host);
    if (isIpLiteral(host)) {
        const r = refusal(targets, host, port, byHost, localAddresses);
        if (r?.kind === 'listener')
            throw new Invalid(`webhook url: ${host}:${port} is this server's own listener; deliveries are never sent to it`);
        if (r)
            throw new Invalid(`webhook url: ${host} is ${r.rule}; ${OPEN_HINT}`);
        return;
    }
    if (isLoopbackName(host)) {
        if (targets.listener && port === targets.listener.port)
            throw new Invalid(`webhook url: ${hostKey(host)}:${port} is this server's own listener; deliveries are never sent to it`);
        if (!byHost)
            throw new Invalid(`webhook url: ${hostKey(host)} is a loopback name; ${OPEN_HINT}`);
    }
}
/** The error an attempt records when the policy refuses its target: never the address. */
export function refusalError(r) {
    return r.kind === 'listener'
        ? "refused by the webhook target policy: the host is this server's own listener"
        : `refused by the webhook target policy: the host resolves to an internal address (${OPEN_HINT})`;
}
//# sourceMappingURL=webhook-targets.js.map