// The webhook dispatcher of one open authority (docs/api.md "Webhooks"): it takes the
// repository's events into delivery records and POSTs them to the registered URLs. The service
// starts it after the authority opens and stops it before the authority closes.
//
// - It listens to the store's published events and, at start, catches up from each webhook's
//   durable cursor by reading events.log; the log is the queue, so nothing waits in memory:
//   a webhook takes events into pending deliveries only while it has fewer than MAX_PENDING.
// - Per webhook, one delivery is in flight at a time, in delivery (event) order; a failing
//   delivery holds the later ones back until it is delivered or failed. Webhooks share nothing
//   that an attempt holds (no pool of connections or slots): a receiver that hangs holds its own
//   webhook's one attempt, for at most the attempt timeout, and no other webhook's.
// - Targets (docs/operations.md "Webhook targets"): each attempt resolves the URL's host itself
//   and judges every address (lib/domain/webhook-targets.ts) before a connection is opened, so
//   a name that resolves elsewhere after the registration reaches nothing internal. Names are
//   asked of DNS by each attempt on its own (webhookResolver), never through getaddrinfo, whose
//   few shared threads a name that never resolves would hold for every webhook of the server.
// - Every write is its own small transaction after the commit that made the event, so a
//   delivery never holds a commit back. While the repository is not active (retiring) nothing is
//   written, so its files stay as exported; pending deliveries go on after an abort or a restore.
// - Delivery is at least once: an attempt cut off by a crash is sent again after the restart.
import { promises as dns } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { setImmediate as yieldTurn } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { STRICT_TARGETS, hostAllowed, isLoopbackName, refusal, refusalError, targetPort } from '../domain/webhook-targets.js';
import { DEFAULT_BACKOFF_BASE_MS, DEFAULT_DISABLE_AFTER, DEFAULT_MAX_ATTEMPTS, DELIVERY_TIMEOUT_MS, MAX_PENDING, signDelivery, typeMatches, wireEvent, } from '../domain/webhooks.js';
import { localAddresses } from './local-addresses.js';
export const DEFAULT_WEBHOOK_POLICY = { maxAttempts: DEFAULT_MAX_ATTEMPTS, backoffBaseMs: DEFAULT_BACKOFF_BASE_MS, timeoutMs: DELIVERY_TIMEOUT_MS, disableAfter: DEFAULT_DISABLE_AFTER };
/** One DNS query's wait for an answer, and the queries sent per name server (c-ares doubles the wait on each retry). */
const DNS_TIMEOUT_MS = 2000;
const DNS_TRIES = 2;
/**
 * How webhook host names are resolved. A name --webhook-allow opens is the operator's: the system
 * resolver (getaddrinfo: /etc/hosts, then DNS) answers it. Any other name is sent to DNS by the
 * attempt itself (c-ares: a channel of its own, A and AAAA, cancelled when the attempt is cut
 * off). getaddrinfo runs on libuv's thread pool, which runs two lookups at a time for the whole
 * process and cannot cancel one: a name whose DNS never answers would hold a thread for its full
 * timeout, and with a few such names every other webhook's lookup would wait behind them past its
 * own attempt's bound. `servers`: the DNS servers to ask (default: those of /etc/resolv.conf).
 */
export function webhookResolver(servers) {
    return async (host, { system, signal }) => {
        if (system)
            return dns.lookup(host, { all: true });
        const resolver = new dns.Resolver({ timeout: DNS_TIMEOUT_MS, tries: DNS_TRIES });
        if (servers)
            resolver.setServers(servers);
        const cancel = () => resolver.cancel();
        signal.addEventListener('abort', cancel, { once: true });
        try {
            if (signal.aborted)
                throw signal.reason;
            const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
            const found = [
                ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
                ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
            ];
            if (found.length)
                return found;
            throw v4.status === 'rejected' ? v4.reason : v6.reason;
        }
        finally {
            signal.removeEventListener('abort', cancel);
        }
    };
}
export const DEFAULT_WEBHOOK_NETWORK = { targets: STRICT_TARGETS, resolve: webhookResolver() };
/** Every webhook is looked at this often (retirement aborted, a wake-up missed). */
const TICK_MS = 5000;
/** Events read from events.log per step. */
const READ_CHUNK = 256;
/** Steps of taking events before the next attempt. */
const CHUNKS_PER_PASS = 16;
/** Events examined without a match before the cursor is written anyway (bounds the catch-up after a restart). */
const CURSOR_LAG = 1024;
const USER_AGENT = 'cairn-webhook/1';
export class WebhookDispatcher {
    authority;
    log;
    policy;
    network;
    stopped = false;
    unsubscribe = null;
    tick = null;
    /** Webhooks whose take or send loop runs, and those poked meanwhile. */
    running = { take: new Set(), send: new Set() };
    again = { take: new Set(), send: new Set() };
    /** Wake-ups of webhooks whose next pending delivery waits out its backoff. */
    timers = new Map();
    /** Events examined per webhook (ahead of the durable cursor when no delivery matched). */
    examined = new Map();
    controllers = new Set();
    scheduled = false;
    admitted;
    /** `admitted`: whether the repository may be written (active); checked inside each transaction. */
    constructor(authority, admitted, log, policy = DEFAULT_WEBHOOK_POLICY, network = DEFAULT_WEBHOOK_NETWORK) {
        this.authority = authority;
        this.log = log;
        this.policy = policy;
        this.network = network;
        this.admitted = () => !this.stopped && admitted();
    }
    start() {
        this.authority.webhooks.onChange = (id) => this.poke(id);
        this.unsubscribe = this.authority.store.onEvents(() => this.pokeSoon());
        this.tick = setInterval(() => this.pokeAll(), TICK_MS);
        this.tick.unref();
        this.pokeSoon();
    }
    /** Look at every webhook on the next turn: the commit that published the events is not held up, and a burst of commits is one look. */
    pokeSoon() {
        if (this.scheduled || this.stopped)
            return;
        this.scheduled = true;
        setImmediate(() => {
            this.scheduled = false;
            this.pokeAll();
        });
    }
    /** Stop: no new attempt or write; attempts in flight are cut off (their deliveries stay pending). */
    stop() {
        if (this.stopped)
            return;
        this.stopped = true;
        this.unsubscribe?.();
        this.authority.webhooks.onChange = () => { };
        if (this.tick)
            clearInterval(this.tick);
        for (const t of this.timers.values())
            clearTimeout(t);
        this.timers.clear();
        for (const c of this.controllers)
            c.abort();
    }
    pokeAll() {
        if (this.stopped)
            return;
        for (const w of this.authority.webhooks.live())
            if (w.active)
                this.poke(w.webhook_id);
    }
    /** Make webhook `id` look for work now: events to take, a delivery to send. */
    poke(id) {
        this.run(id, 'take');
        this.run(id, 'send');
    }
    /**
     * Run one of a webhook's two loops unless it runs already (then it runs again after its
     * current pass): taking events into deliveries, and sending them one at a time. They are
     * separate so that a receiver that hangs does not hold back the recording of new events.
     */
    run(id, loop) {
        if (this.stopped)
            return;
        const running = this.running[loop];
        if (running.has(id)) {
            this.again[loop].add(id);
            return;
        }
        if (loop === 'send') {
            const timer = this.timers.get(id);
            if (timer)
                clearTimeout(timer);
            this.timers.delete(id);
        }
        running.add(id);
        (loop === 'take' ? this.takeLoop(id) : this.sendLoop(id))
            .catch((err) => {
            if (!this.stopped)
                this.log.error({ repository_index: this.authority.index, webhook_id: id, problem: err.message }, 'webhook dispatch failed; retried shortly');
        })
            .finally(() => {
            running.delete(id);
            if (this.again[loop].delete(id))
                this.run(id, loop);
        });
    }
    async takeLoop(id) {
        const book = this.authority.webhooks;
        while (!this.stopped) {
            const hook = book.activeWebhook(id);
            if (!hook || !this.admitted())
                return;
            const more = await this.take(hook);
            if (book.pendingCount(id) > 0)
                this.run(id, 'send');
            if (!more)
                return;
            await yieldTurn();
        }
    }
    async sendLoop(id) {
        const book = this.authority.webhooks;
        while (!this.stopped) {
            const hook = book.activeWebhook(id);
            if (!hook || !this.admitted())
                return;
            const next = book.nextPending(id);
            if (!next)
                return;
            const wait = (next.next_attempt_at_ms ?? 0) - Date.now();
            if (wait > 0) {
                this.timers.set(id, setTimeout(() => { this.timers.delete(id); this.run(id, 'send'); }, wait));
                return;
            }
            await this.attempt(hook, next);
            // A settled delivery makes room for events that wait behind the cursor.
            this.run(id, 'take');
        }
    }
    /**
     * Take events after the webhook's cursor into pending deliveries, while it has room. Returns
     * whether events are left to examine (and room to take them).
     */
    async take(hook) {
        const id = hook.webhook_id;
        const book = this.authority.webhooks;
        const events = this.authority.store.events;
        let examined = Math.max(this.examined.get(id) ?? 0, book.cursor(id));
        for (let step = 0; step < CHUNKS_PER_PASS && !this.stopped; step++) {
            if (book.pendingCount(id) >= MAX_PENDING || examined >= events.lastSeq)
                break;
            if (examined + 1 < events.oldestSeq) {
                this.log.warn({ repository_index: this.authority.index, webhook_id: id, dropped_from_seq: examined + 1, dropped_to_seq: events.oldestSeq - 1 }, 'events were dropped from events.log before this webhook took them; they are not delivered');
                examined = events.oldestSeq - 1;
            }
            const batch = events.read(examined, READ_CHUNK);
            if (batch.length === 0)
                break;
            const through = batch[batch.length - 1].seq;
            const matching = batch.filter((e) => typeMatches(hook.types, e.type));
            if (matching.length) {
                examined = await book.take(id, matching, through, this.admitted);
                this.examined.set(id, examined);
                if (examined < through)
                    break;
            }
            else {
                examined = through;
                this.examined.set(id, examined);
                if (examined - book.cursor(id) >= CURSOR_LAG)
                    await book.advance(id, examined, this.admitted);
                else
                    await yieldTurn(); // a long catch-up leaves room for requests between reads
            }
        }
        return !this.stopped && examined < events.lastSeq && book.pendingCount(id) < MAX_PENDING;
    }
    /** One attempt: POST the event, signed, then record what happened in its own transaction. */
    async attempt(hook, d) {
        if (this.stopped || !this.admitted())
            return;
        if (!hook.secret) {
            // A restored repository whose secret this server cannot open: each attempt fails, saying so, and sends nothing.
            if (hook.secret_unavailable)
                await this.record(hook, d, { ok: false, status_code: null, error: UNAVAILABLE_SECRET, at_s: Math.floor(Date.now() / 1000), duration_ms: 0 });
            return;
        }
        const body = Buffer.from(JSON.stringify(wireEvent(this.authority.index, d.event)), 'utf8');
        const timestamp = Math.floor(Date.now() / 1000);
        const controller = new AbortController();
        this.controllers.add(controller);
        // One bound for the whole wait: the lookup, the connection, and the answer's status line and
        // headers (a receiver that accepts and never answers, or trickles its headers, is cut off).
        const timer = setTimeout(() => controller.abort(), this.policy.timeoutMs);
        const started = performance.now();
        let status = null;
        let error = null;
        try {
            status = await post(hook.url, {
                'Content-Type': 'application/json',
                'User-Agent': USER_AGENT,
                'X-Cairn-Event': d.event.type,
                'X-Cairn-Delivery': d.delivery_id,
                'X-Cairn-Timestamp': String(timestamp),
                'X-Cairn-Signature': signDelivery(hook.secret, timestamp, body),
            }, body, controller.signal, this.network);
            if (status < 200 || status > 299)
                error = status >= 300 && status < 400 ? `HTTP ${status}: redirects are not followed` : `HTTP ${status}`;
        }
        catch (err) {
            error = err instanceof TargetRefused ? refusalError(err.refusal) : controller.signal.aborted ? `no answer within ${this.policy.timeoutMs / 1000} s` : describeFailure(err);
        }
        finally {
            clearTimeout(timer);
            this.controllers.delete(controller);
        }
        // Stopping: the attempt was cut off; the delivery stays pending and is sent after the restart.
        if (this.stopped)
            return;
        await this.record(hook, d, { ok: error === null, status_code: status, error, at_s: Math.floor(Date.now() / 1000), duration_ms: Math.round(performance.now() - started) });
    }
    async record(hook, d, outcome) {
        const recorded = await this.authority.webhooks.recordAttempt(d, outcome, this.policy, this.admitted);
        if (recorded === null && !this.admitted() && !this.stopped) {
            this.log.info({ repository_index: this.authority.index, webhook_id: hook.webhook_id, delivery_id: d.delivery_id }, 'webhook attempt not recorded: the repository is not active; the delivery stays pending');
        }
        if (recorded?.delivery.state === 'failed') {
            this.log.warn({ repository_index: this.authority.index, webhook_id: hook.webhook_id, delivery_id: d.delivery_id, attempts: recorded.delivery.attempt_count }, 'webhook delivery failed');
        }
        if (recorded?.disabled) {
            this.log.warn({ repository_index: this.authority.index, webhook_id: hook.webhook_id, failed_deliveries: recorded.disabled.consecutive_failures }, 'webhook disabled: its deliveries failed in a row; re-enable it by registering its URL again with active: true');
        }
    }
}
/** The error of an attempt of a webhook whose secret cannot be opened here. */
const UNAVAILABLE_SECRET = 'the webhook\'s secret was sealed with another server\'s key (the repository was restored from another server): nothing was sent; register the URL again with its secret';
/** An attempt the target policy refused (lib/domain/webhook-targets.ts); its address is not kept. */
class TargetRefused extends Error {
    refusal;
    code = 'ECAIRN_TARGET_REFUSED';
    constructor(refusal) {
        super('refused by the webhook target policy');
        this.refusal = refusal;
    }
}
/**
 * The `lookup` of a delivery's connection: every address the name has is judged, and one refused
 * address refuses the connection (a name cannot mix an internal address among public ones).
 */
function guardedLookup(network, byHost, port, signal) {
    return (hostname, options, callback) => {
        network.resolve(hostname, { system: byHost, signal }).then((all) => {
            const local = localAddresses();
            for (const a of all) {
                const r = refusal(network.targets, a.address, port, byHost, local);
                if (r)
                    return callback(new TargetRefused(r), '', 0);
            }
            const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
            const found = family ? all.filter((a) => a.family === family) : all;
            if (!found.length)
                return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
            if (options.all)
                callback(null, found);
            else
                callback(null, found[0].address, found[0].family);
        }, (err) => callback(err, '', 0));
    };
}
/**
 * POST `body` to `url` and resolve with the status of the answer (node:http, which never follows
 * a redirect). Only the status counts: the answer's body is not read, its connection is closed.
 * A fresh connection each time (no agent's pool): every attempt resolves and judges its target.
 */
function post(url, headers, body, signal, network) {
    return new Promise((resolve, reject) => {
        const target = new URL(url);
        const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
        const port = targetPort(target);
        const byHost = hostAllowed(network.targets, host);
        // A literal address is connected to without a lookup: judge it here.
        if (net.isIP(host)) {
            const r = refusal(network.targets, host, port, byHost, localAddresses());
            if (r)
                return reject(new TargetRefused(r));
        }
        // A loopback name never leaves the machine, whatever DNS would say (as at registration).
        if (!byHost && isLoopbackName(host))
            return reject(new TargetRefused({ kind: 'internal', rule: 'a loopback name' }));
        const req = (target.protocol === 'https:' ? https : http).request(target, {
            method: 'POST',
            headers: { ...headers, 'Content-Length': String(body.length) },
            signal,
            agent: false,
            lookup: guardedLookup(network, byHost, port, signal),
        }, (res) => {
            resolve(res.statusCode ?? 0);
            res.destroy();
        });
        req.on('error', reject);
        req.end(body);
    });
}
/** Why a request failed, without the URL (the error's code where it has one). */
function describeFailure(err) {
    const code = err.code;
    if (typeof code === 'string')
        return `connection failed (${code})`;
    return `request failed (${String(err?.message ?? err).slice(0, 200)})`;
}
//# sourceMappingURL=webhook-dispatcher.js.map