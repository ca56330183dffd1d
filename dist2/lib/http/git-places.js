// The places git serving has (docs/operations.md "Git serving limits"): every clone, fetch and
// push runs git processes whose memory grows with the repository, so at most `places` run at
// once. They are shared: one client (its identity, or its address: an IPv6 one's /64) holds at most `perClient`,
// one repository at most `perRepository`. A request that finds no place it may take waits in a
// queue (first come, first served among those a freed place fits) for up to `queueMs`, then is
// refused 503; so does one that finds the queue full. And a request body must keep coming:
// `bodyGuard` cuts one that stalls or trickles (408), so a slow client cannot hold a place for
// the whole request timeout; an answer the client stops reading is cut as well
// (git-http-backend.ts).
import { isIP } from 'node:net';
import { Transform } from 'node:stream';
import { Busy, RequestTimeout, TooLarge } from '../domain/errors.js';
import { canonicalAddress } from './identity.js';
/**
 * The client an anonymous git request counts against: an IPv4 address (IPv4-mapped IPv6 as
 * IPv4), or an IPv6 address's /64 — one host is commonly given a whole /64, so counting each
 * address apart would let it take every place.
 */
export function gitClientOfAddress(address) {
    const a = canonicalAddress(address.split('%')[0]);
    if (isIP(a) !== 6)
        return a;
    const groups = (text) => (text === '' ? [] : text.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])));
    const cut = a.indexOf('::');
    const head = groups(cut < 0 ? a : a.slice(0, cut));
    const tail = cut < 0 ? [] : groups(a.slice(cut + 2));
    const all = [...head, ...Array(Math.max(0, 8 - head.length - tail.length)).fill('0'), ...tail];
    const n = all.map((g) => parseInt(g, 16));
    // ::ffff:a.b.c.d written in hex.
    if (n.slice(0, 5).every((g) => g === 0) && n[5] === 0xffff)
        return `${n[6] >> 8}.${n[6] & 255}.${n[7] >> 8}.${n[7] & 255}`;
    return `${n.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}
export const DEFAULT_GIT_LIMITS = {
    places: 16,
    perClient: 4,
    perRepository: 8,
    queueMs: 10_000,
    bodyTimeoutMs: 30_000,
    minBytesPerSecond: 1024,
};
/** Requests waiting at most, per place (past it a request is refused at once). */
const QUEUE_PER_PLACE = 4;
export class GitPlaces {
    limits;
    running = 0;
    byClient = new Map();
    byRepository = new Map();
    queue = [];
    constructor(limits) {
        this.limits = limits;
    }
    /**
     * A place for `client` on `repository`: resolves with its release (call it once), or fails
     * with Busy when none came within the queue's wait (or the queue is full), or when `signal`
     * aborts (the client went away) while waiting.
     */
    take(client, repository, signal) {
        if (this.fits(client, repository))
            return Promise.resolve(this.hold(client, repository));
        const { places, queueMs } = this.limits;
        if (queueMs <= 0 || this.queue.length >= places * QUEUE_PER_PLACE)
            return Promise.reject(this.busy());
        return new Promise((resolve, reject) => {
            let timer;
            const leave = () => {
                clearTimeout(timer);
                signal?.removeEventListener('abort', onAbort);
                const at = this.queue.indexOf(waiter);
                if (at >= 0)
                    this.queue.splice(at, 1);
            };
            const onAbort = () => { leave(); reject(new Busy('the client went away while waiting for a git place')); };
            const waiter = { client, repository, grant: () => { leave(); resolve(this.hold(client, repository)); } };
            this.queue.push(waiter);
            timer = setTimeout(() => { leave(); reject(this.busy()); }, queueMs);
            signal?.addEventListener('abort', onAbort, { once: true });
        });
    }
    snapshot() {
        return { running: this.running, waiting: this.queue.length, clients: Object.fromEntries(this.byClient), repositories: Object.fromEntries(this.byRepository) };
    }
    busy() {
        return new Busy(`${this.limits.places} git requests are being served (at most ${this.limits.perClient} for one client, ${this.limits.perRepository} for one repository), the most this server runs at once; retry`);
    }
    fits(client, repository) {
        const { places, perClient, perRepository } = this.limits;
        return this.running < places && (this.byClient.get(client) ?? 0) < perClient && (this.byRepository.get(repository) ?? 0) < perRepository;
    }
    hold(client, repository) {
        this.running++;
        this.byClient.set(client, (this.byClient.get(client) ?? 0) + 1);
        this.byRepository.set(repository, (this.byRepository.get(repository) ?? 0) + 1);
        let released = false;
        return () => {
            if (released)
                return;
            released = true;
            this.running--;
            drop(this.byClient, client);
            drop(this.byRepository, repository);
            // The first waiters a freed place fits (a waiter held back by its own share lets the next pass).
            for (let i = 0; i < this.queue.length && this.running < this.limits.places;) {
                const w = this.queue[i];
                if (this.fits(w.client, w.repository))
                    w.grant(); // removes it from the queue
                else
                    i++;
            }
        };
    }
}
function drop(counts, key) {
    const n = (counts.get(key) ?? 1) - 1;
    if (n <= 0)
        counts.delete(key);
    else
        counts.set(key, n);
}
/**
 * Passes a request body through, failing with TooLarge past `limit` bytes and with
 * RequestTimeout when no byte came for `bodyTimeoutMs`, or fewer than `minBytesPerSecond` a
 * second over one such window. Time the reader was the slow side (bytes were waiting in
 * `source`, unread) is not held against the client.
 */
export function bodyGuard(source, limit, limits) {
    let seen = 0;
    let inWindow = 0;
    let lastByte = Date.now();
    let windowStart = lastByte;
    const windowMs = limits.bodyTimeoutMs;
    const need = Math.ceil((limits.minBytesPerSecond * windowMs) / 1000);
    // Looked at four times a window: a stall is seen at most a quarter window late.
    const timer = setInterval(() => {
        if (guard.destroyed || guard.writableFinished || source.readableEnded)
            return stop();
        const now = Date.now();
        if (source.readableLength > 0 || source.readableFlowing === false) {
            // Bytes wait unread: the reader is the slow side, not the client. Its window starts again.
            lastByte = now;
            windowStart = now;
            inWindow = 0;
            return;
        }
        if (now - lastByte >= windowMs)
            return guard.destroy(new RequestTimeout(`the request body stopped: no byte came for ${windowMs / 1000} s`));
        if (now - windowStart < windowMs)
            return;
        if (inWindow < need)
            return guard.destroy(new RequestTimeout(`the request body came slower than ${limits.minBytesPerSecond} bytes a second (${inWindow} bytes in ${Math.round((now - windowStart) / 1000)} s)`));
        windowStart = now;
        inWindow = 0;
    }, Math.max(10, Math.floor(windowMs / 4)));
    timer.unref();
    const stop = () => clearInterval(timer);
    const guard = new Transform({
        transform(chunk, _enc, callback) {
            seen += chunk.length;
            inWindow += chunk.length;
            lastByte = Date.now();
            if (seen > limit)
                callback(new TooLarge(`request body exceeds the route limit of ${limit} bytes`));
            else
                callback(null, chunk);
        },
        flush(callback) { stop(); callback(); },
        destroy(err, callback) { stop(); callback(err); },
    });
    return guard;
}
//# sourceMappingURL=git-places.js.map