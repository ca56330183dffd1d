// This machine's own addresses, read by the webhook registration and the dispatcher alike: a
// listener bound to every interface answers on each of them (lib/domain/webhook-targets.ts).
import os from 'node:os';
/** This machine's interface addresses, as the OS reports them now (interfaces come and go). */
export function localAddresses() {
    return Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
}
//# sourceMappingURL=local-addresses.js.map