// Safe by default (docs/operations.md "Who may reach the listener"): cairn authenticates nobody
// itself, so `serve` listens beyond loopback only behind a front door (the trusted ingress
// identity) or when the operator says, with --insecure-open, that the network is trusted.
// A name is resolved before listening: every address it stands for must be loopback.
import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { isLoopbackAddress } from '../http/promote-access.js';
import { CliUsageError } from './args.js';
export const systemLookup = async (host) => (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
/** The addresses of `host` that are not loopback (a wildcard, 0.0.0.0 or ::, faces the network): empty when it is loopback only. */
export async function networkAddresses(host, lookup = systemLookup) {
    let addresses;
    if (isIP(host) !== 0) {
        addresses = [host];
    }
    else {
        try {
            addresses = await lookup(host);
        }
        catch (err) {
            throw new CliUsageError(`--bind: cannot resolve ${host} (${err.code ?? err.message})`);
        }
        if (addresses.length === 0)
            throw new CliUsageError(`--bind: ${host} has no address`);
    }
    return addresses.filter((a) => !isLoopbackAddress(a));
}
/** The usage error refusing to listen on `host`, whose `network` addresses are not loopback. */
export function openRefusal(host, network) {
    const where = network.includes(host) ? host : `${host} (${network.join(', ')})`;
    return new CliUsageError(`refusing to listen on ${where} without authentication: cairn checks no passwords itself, so anyone who reaches ` +
        'that address could read and change every repository. Either keep --bind on loopback (127.0.0.1:PORT) and put ' +
        'an authenticating front door before it, or name that front door with --ui-identity-header NAME plus ' +
        '--trust-identity-from ADDR and/or --trust-identity-secret-file FILE (docs/operations.md "A front door"), ' +
        'or pass --insecure-open if every client on that network is trusted.');
}
/** The warning a start with --insecure-open logs on a network address. */
export function insecureOpenWarning(address) {
    return `listening on ${address} without authentication (--insecure-open): anyone who reaches it may read and change every repository`;
}
//# sourceMappingURL=bind-policy.js.map