// The event feeds (docs/api.md "Events"): pages and live subscriptions over one repository's
// events.log, and over every repository merged into one global order. The HTTP layer only
// parses the request and writes what a subscription hands it; reading, ordering, resuming,
// retention and the limits that keep a subscriber from growing the server are here.
//
// One mechanism serves both feeds: a merge of N streams (one per repository, plus the
// registry's), each read from its EventIndex by sequence number. A subscription never takes
// events from a listener's payload: listeners only wake it, and it reads what is new from the
// index (the recent tail is in memory). So catching up and following live are the same read
// from the same position: nothing can be lost or delivered twice across the switch, and a
// subscriber that is behind costs a position, not a buffer.
//  - Catching up, a subscription reads only when its consumer asks (a chunk at a time).
//  - Caught up (live), every wake reads what is new into the subscription's unsent queue; a
//    consumer that does not take it (a socket that does not drain) lets the queue grow to the
//    bound, and the subscription is then closed ('overflow'): it resumes with Last-Event-ID.
//  - The global merge hands out an event only when its time is below the event clock's
//    low-water mark (lib/store/event-clock.ts): every event that sorts before it is then
//    published, so no later delivery can sort ahead of an earlier one.
import { Busy, Corrupt, Gone, Invalid, NotFound, TooManyRequests } from '../domain/errors.js';
import { compareGlobal, formatGlobalEventId, matchesEventTypes, } from '../domain/events.js';
import { LIFECYCLE_ACTIVE } from '../domain/repository.js';
import { eventLowWater, lastEventTime, onEventTimeSettled } from '../store/event-clock.js';
/** The registry's event log (lib/store/registry-events.ts) as the stream the global feed merges. */
export function registryEventStream(source) {
    return {
        name: 'registry',
        log: source.index,
        onEvents: (fn) => source.onEvents(fn),
        repositoryIndexOf: (e) => Number(e.data.repository_index),
    };
}
const repositoryStreams = new WeakMap();
/** The stream of one open repository authority. */
export function repositoryStream(authority) {
    let stream = repositoryStreams.get(authority);
    if (!stream) {
        const index = authority.index;
        const store = authority.store;
        stream = {
            name: index,
            get log() { return store.events; },
            onEvents: (fn) => store.onEvents(fn),
            repositoryIndexOf: () => index,
        };
        repositoryStreams.set(authority, stream);
    }
    return stream;
}
function feedEvent(e, stream, form) {
    const id = form === 'repository' ? String(e.seq) : formatGlobalEventId({ at_us: e.at_us, stream: stream.name, seq: e.seq });
    return { id, repository_index: stream.repositoryIndexOf(e), seq: e.seq, at_us: e.at_us, type: e.type, data: e.data };
}
/**
 * The JSON of an event, made once per event record and id form: live subscribers all read the
 * same records from the index's recent tail, so a thousand subscribers encode an event once.
 */
const encoded = { repository: new WeakMap(), global: new WeakMap() };
function feedItem(e, stream, form) {
    let item = encoded[form].get(e);
    if (!item) {
        const event = feedEvent(e, stream, form);
        item = { id: event.id, type: e.type, json: JSON.stringify(event) };
        encoded[form].set(e, item);
    }
    return item;
}
// ---------------------------------------------------------------- the merge
/** Events read ahead from one stream at a time. */
const READ_AHEAD = 256;
/** Events a page or one step of a subscription considers at most (a types filter may skip most). */
const SCAN_LIMIT = 10_000;
/** Matching events one catch-up step hands a consumer. */
const CATCH_UP_BATCH = 256;
/** A stream dropped events a reader positioned before them still needed. */
class GapError extends Error {
}
function laneHead(lane) {
    if (lane.at < lane.ahead.length)
        return lane.ahead[lane.at];
    const log = lane.stream.log;
    if (lane.pos >= log.lastSeq)
        return null;
    if (lane.pos + 1 < log.oldestSeq)
        throw new GapError(`stream ${lane.stream.name} no longer keeps event ${lane.pos + 1}`);
    lane.ahead = log.read(lane.pos, READ_AHEAD);
    lane.at = 0;
    return lane.ahead[0] ?? null;
}
const positionOf = (e, lane) => ({ at_us: e.at_us, stream: lane.stream.name, seq: e.seq });
/**
 * A k-way merge of lanes in the global order (one lane: simply its sequence). `position` is
 * the last event consumed, or where the merge started.
 */
class Merge {
    gated;
    position;
    lanes = new Map();
    constructor(gated, position) {
        this.gated = gated;
        this.position = position;
    }
    add(stream, pos) {
        this.lanes.set(stream.name, { stream, pos, ahead: [], at: 0 });
    }
    /**
     * Consume events in order into `out` (those the filter matches) until `limit` matched,
     * `scanLimit` considered, or none is left that may be handed out now. Returns true when
     * none is left (caught up). Throws GapError when a lane's next event is no longer kept.
     */
    step(out, limit, scanLimit, filter, form, objects = false) {
        const low = this.gated ? eventLowWater() : Number.POSITIVE_INFINITY;
        const heap = new LaneHeap();
        for (const lane of this.lanes.values()) {
            const head = laneHead(lane);
            if (head)
                heap.push(lane, head);
        }
        let considered = 0;
        for (;;) {
            const top = heap.peek();
            if (!top || top.head.at_us >= low)
                return true;
            if (out.length >= limit || considered >= scanLimit)
                return false;
            heap.pop();
            const { lane, head: e } = top;
            lane.at++;
            lane.pos = e.seq;
            this.position = positionOf(e, lane);
            considered++;
            if (matchesEventTypes(filter, e.type)) {
                if (objects)
                    out.push(feedEvent(e, lane.stream, form));
                else
                    out.push(feedItem(e, lane.stream, form));
            }
            const next = laneHead(lane);
            if (next)
                heap.push(lane, next);
        }
    }
}
/** A binary min-heap of lanes by their head event's global position. */
class LaneHeap {
    items = [];
    push(lane, head) {
        const items = this.items;
        items.push({ lane, head, key: positionOf(head, lane) });
        let i = items.length - 1;
        while (i > 0) {
            const parent = (i - 1) >> 1;
            if (compareGlobal(items[parent].key, items[i].key) <= 0)
                break;
            [items[parent], items[i]] = [items[i], items[parent]];
            i = parent;
        }
    }
    peek() {
        return this.items[0];
    }
    pop() {
        const items = this.items;
        const last = items.pop();
        if (items.length === 0)
            return;
        items[0] = last;
        let i = 0;
        for (;;) {
            const l = 2 * i + 1;
            const r = l + 1;
            let m = i;
            if (l < items.length && compareGlobal(items[l].key, items[m].key) < 0)
                m = l;
            if (r < items.length && compareGlobal(items[r].key, items[m].key) < 0)
                m = r;
            if (m === i)
                return;
            [items[m], items[i]] = [items[i], items[m]];
            i = m;
        }
    }
}
// ---------------------------------------------------------------- positions in the global order
/** Before every event (times are µs since the epoch, seqs start at 1). */
const BEGINNING = { at_us: 0, stream: 0, seq: 0 };
/**
 * Where a stream that dropped events (retention) may have dropped one: at the latest, just
 * before its oldest kept event, at that event's time. Null when the stream dropped none.
 * Retention always keeps the newest event, so a stream that dropped events keeps one.
 */
function droppedUpTo(stream) {
    const log = stream.log;
    if (log.oldestSeq <= 1 || log.oldestAtUs === null)
        return null;
    return { at_us: log.oldestAtUs, stream: stream.name, seq: log.oldestSeq - 1 };
}
/** The seq after which `stream` holds the events that sort after `position`. */
function laneStart(stream, position) {
    const log = stream.log;
    let after = log.firstAtOrAfter(position.at_us) - 1;
    // Events at exactly that time may still sort at or before it (the position's own batch).
    for (;;) {
        const chunk = log.read(after, READ_AHEAD);
        for (const e of chunk) {
            if (compareGlobal({ at_us: e.at_us, stream: stream.name, seq: e.seq }, position) > 0)
                return after;
            after = e.seq;
        }
        if (chunk.length < READ_AHEAD)
            return after;
    }
}
export const DEFAULT_EVENT_FEED_OPTIONS = {
    maxSubscribers: 1000,
    maxSubscribersPerClient: 50,
    heartbeatMs: 15_000,
    retention: null,
    retentionIntervalMs: 600_000,
    maxUnsentEvents: 10_000,
    maxUnsentBytes: 1024 * 1024,
};
// ---------------------------------------------------------------- the feeds
/** Seconds a client over its stream cap is asked to wait: its own streams must end first. */
export const PER_CLIENT_RETRY_AFTER_S = 5;
export class EventFeeds {
    host;
    options;
    active = new Set();
    /** Open subscriptions per client key (entries at 0 are removed). */
    perClient = new Map();
    registry = null;
    stopped = false;
    retentionTimer = null;
    constructor(host, options = {}) {
        this.host = host;
        this.options = { ...DEFAULT_EVENT_FEED_OPTIONS, ...options };
    }
    /** Plug in the registry's event stream: the global feed merges it from then on. */
    attachRegistry(stream) {
        this.registry = stream;
    }
    /** Live subscriptions now open (both feeds). */
    get subscribers() {
        return this.active.size;
    }
    /** The streams the global feed merges now: the registry's, then every serving repository's. */
    streams() {
        const out = this.registry ? [this.registry] : [];
        for (const authority of this.host.serving())
            out.push(repositoryStream(authority));
        return out;
    }
    // ------------------------------------------------------------ one repository
    /** Resolve `since` of a repository feed against what is kept (400 ahead of the newest, 410 before the oldest). */
    repositoryStart(stream, since, live) {
        const log = stream.log;
        if (since === null)
            return live ? log.lastSeq : log.oldestSeq - 1;
        if (since > log.lastSeq)
            throw new Invalid(`since ${since} is ahead of the newest event of repository ${stream.name} (${log.lastSeq})`);
        if (since + 1 < log.oldestSeq) {
            throw new Gone(`events after ${since} are no longer kept: repository ${stream.name} keeps events from ${log.oldestSeq} (resume from since=${log.oldestSeq - 1})`, { oldest_seq: log.oldestSeq });
        }
        return since;
    }
    /** Events of one repository after `since` (null: from the oldest kept), up to `limit` matching. */
    repositoryPage(index, since, limit, filter) {
        const stream = repositoryStream(this.host.authority(index));
        const start = this.repositoryStart(stream, since, false);
        const merge = new Merge(false, { at_us: 0, stream: stream.name, seq: start });
        merge.add(stream, start);
        const events = [];
        merge.step(events, limit, SCAN_LIMIT, filter, 'repository', true);
        return { events, next_since: merge.lanes.get(stream.name).pos, oldest_seq: stream.log.oldestSeq, last_seq: stream.log.lastSeq };
    }
    /** Follow one repository after `since` (null: from the newest, live only), for `client` (its key counts against the per-client cap). */
    subscribeRepository(index, since, filter, client) {
        let authority = this.host.authority(index);
        const stream = repositoryStream(authority);
        const start = this.repositoryStart(stream, since, true);
        this.admit(client);
        const merge = new Merge(false, { at_us: 0, stream: stream.name, seq: start });
        merge.add(stream, start);
        const sub = new Subscription(this, merge, filter, 'repository', this.options, client);
        let unfollow = stream.onEvents(() => sub.wake());
        sub.addCleanup(() => unfollow());
        // Closed for a reopen (a follower applying a manifest), the subscription holds its place
        // and goes on reading the reopened authority; closed for good (purged, or failed to
        // reopen), it ends.
        let held = null;
        sub.addCleanup(this.host.onAuthoritiesChanged(() => {
            let current;
            try {
                current = this.host.authority(index);
            }
            catch (err) {
                // Purged or failed its checks: gone; otherwise only not open (again) yet.
                current = err instanceof NotFound || err instanceof Corrupt ? 'gone' : 'closed';
            }
            if (current === authority)
                return;
            if (current === 'gone' || (current === 'closed' && held === null && !this.host.reopening(index))) {
                sub.close('removed');
                return;
            }
            if (held === null) {
                held = merge.lanes.get(index)?.pos ?? start;
                merge.lanes.delete(index);
                unfollow();
                unfollow = () => { };
            }
            if (current === 'closed')
                return;
            const reopened = repositoryStream(current);
            merge.add(reopened, held);
            held = null;
            authority = current;
            unfollow = reopened.onEvents(() => sub.wake());
            sub.wake();
        }));
        return sub;
    }
    // ------------------------------------------------------------ every repository
    /**
     * The oldest position a global reader can resume from without a gap: after the latest point
     * where a stream may have dropped events, or the beginning when none dropped any.
     */
    oldestGlobalPosition(streams = this.streams()) {
        let oldest = BEGINNING;
        for (const stream of streams) {
            const dropped = droppedUpTo(stream);
            if (dropped && compareGlobal(dropped, oldest) > 0)
                oldest = dropped;
        }
        return oldest;
    }
    /**
     * A global `since` must be a position this server handed out: the beginning (0-0-0), an
     * event's id, or the oldest position without a gap (its `oldest_id`, which sits just before
     * a stream's oldest kept event). Anything else names no event and is 400 (a typo or a
     * position of another server would otherwise read as "nothing new" forever). A trimmed
     * event's id passes here and is 410 below. An event of a repository that is registered but
     * not merged now (purged since, or left out until repaired) cannot be checked against its
     * log and passes when its time is not in the future: a reader resuming after the last event
     * it saw is never refused.
     */
    checkGlobalPosition(since, streams) {
        if (compareGlobal(since, BEGINNING) === 0)
            return;
        const shown = formatGlobalEventId(since);
        const none = (why) => new Invalid(`since ${shown} names no event: ${why} (pass the id of an event received, a next_since or oldest_id, or 0-0-0 for the beginning)`);
        if (since.at_us > Math.max(lastEventTime(), Date.now() * 1000))
            throw none('its time is ahead of the newest event');
        if (since.seq === 0)
            throw none('event numbers start at 1');
        const stream = streams.find((s) => s.name === since.stream);
        if (!stream) {
            if (since.stream === 'registry' || !this.registered(since.stream))
                throw none(`no stream ${since.stream} exists`);
            return;
        }
        const log = stream.log;
        if (since.seq > log.lastSeq)
            throw none(`stream ${stream.name} has ${log.lastSeq} events`);
        if (since.seq >= log.oldestSeq) {
            if (log.read(since.seq - 1, 1)[0]?.at_us !== since.at_us)
                throw none(`event ${since.seq} of stream ${stream.name} has another time`);
        }
        else if (log.oldestAtUs !== null && since.at_us > log.oldestAtUs) {
            // Dropped by retention: it was timed no later than the oldest event kept.
            throw none(`event ${since.seq} of stream ${stream.name} was timed before ${log.oldestAtUs}`);
        }
    }
    registered(index) {
        try {
            this.host.record(index);
            return true;
        }
        catch {
            return false;
        }
    }
    /** Check a global `since` and position a merge just after it (or at the start a reader without one gets). */
    globalMerge(since, live) {
        const streams = this.streams();
        let position;
        if (since === null) {
            // Live only: everything not yet handed out to anyone (at or after the low-water mark).
            // A page: the oldest position without a gap.
            position = live ? { at_us: eventLowWater(), stream: 'registry', seq: 0 } : this.oldestGlobalPosition(streams);
        }
        else {
            this.checkGlobalPosition(since, streams);
            for (const stream of streams) {
                const dropped = droppedUpTo(stream);
                if (dropped && compareGlobal(dropped, since) > 0) {
                    const oldest = formatGlobalEventId(this.oldestGlobalPosition(streams));
                    throw new Gone(`events after ${formatGlobalEventId(since)} are no longer all kept: stream ${stream.name} keeps events from ${stream.log.oldestSeq} (resume from ${oldest})`, { oldest_id: oldest });
                }
            }
            position = since;
        }
        const merge = new Merge(true, position);
        for (const stream of streams)
            merge.add(stream, laneStart(stream, position));
        return merge;
    }
    /** Events of every repository after the global id `since` (null: from the oldest position without a gap). */
    globalPage(since, limit, filter) {
        const merge = this.globalMerge(since, false);
        const events = [];
        merge.step(events, limit, SCAN_LIMIT, filter, 'global', true);
        return { events, next_since: formatGlobalEventId(merge.position), oldest_id: formatGlobalEventId(this.oldestGlobalPosition()) };
    }
    /** Follow every repository after the global id `since` (null: live only), for `client`. */
    subscribeGlobal(since, filter, client) {
        const merge = this.globalMerge(since, true);
        this.admit(client);
        const sub = new Subscription(this, merge, filter, 'global', this.options, client);
        const unsubscribes = new Map();
        const follow = (stream) => unsubscribes.set(stream.name, stream.onEvents(() => sub.wake()));
        for (const lane of merge.lanes.values())
            follow(lane.stream);
        sub.addCleanup(() => { for (const off of unsubscribes.values())
            off(); });
        sub.addCleanup(onEventTimeSettled(() => sub.wake()));
        // A repository registered or restored joins the merge after the current position; a purged
        // one leaves it (its files are closed).
        // A repository closed for a reopen keeps its lane's place.
        const held = new Map();
        sub.addCleanup(this.host.onAuthoritiesChanged(() => {
            const now = new Map(this.streams().map((s) => [s.name, s]));
            for (const [name, lane] of merge.lanes) {
                if (now.get(name) === lane.stream)
                    continue;
                if (typeof name === 'number' && (now.has(name) || this.host.reopening(name)))
                    held.set(name, lane.pos);
                merge.lanes.delete(name);
                unsubscribes.get(name)?.();
                unsubscribes.delete(name);
            }
            for (const [name, stream] of now) {
                if (merge.lanes.has(name))
                    continue;
                merge.add(stream, held.get(name) ?? laneStart(stream, merge.position));
                held.delete(name);
                follow(stream);
            }
            sub.wake();
        }));
        return sub;
    }
    // ------------------------------------------------------------ subscribers, shutdown, retention
    /** Live subscriptions `client` holds now. */
    subscribersOf(client) {
        return this.perClient.get(client) ?? 0;
    }
    /**
     * Room for one more subscription of `client`? The client's own cap is checked first: a client
     * at its cap hears that it is the one to back off (429), not that the server is full (503).
     */
    admit(client) {
        if (this.stopped)
            throw new Busy('the server is stopping');
        const perClient = this.options.maxSubscribersPerClient;
        if (this.subscribersOf(client) >= perClient) {
            throw new TooManyRequests(`${perClient} event streams are open from this client address, the most one client may hold; close one, or retry later`, PER_CLIENT_RETRY_AFTER_S);
        }
        if (this.active.size >= this.options.maxSubscribers) {
            throw new Busy(`${this.options.maxSubscribers} event subscribers are connected, the most this server takes; retry later`);
        }
    }
    /** @internal A subscription opened. */
    opened(sub) {
        this.active.add(sub);
        this.perClient.set(sub.client, this.subscribersOf(sub.client) + 1);
    }
    /** @internal A subscription closed (once per subscription). */
    released(sub, reason, detail) {
        if (this.active.delete(sub)) {
            const left = this.subscribersOf(sub.client) - 1;
            if (left > 0)
                this.perClient.set(sub.client, left);
            else
                this.perClient.delete(sub.client);
        }
        if (reason === 'overflow')
            this.host.log.warn({ unsent_events_limit: this.options.maxUnsentEvents, unsent_bytes_limit: this.options.maxUnsentBytes }, 'event subscriber disconnected: it did not take its events (it resumes with Last-Event-ID)');
        else if (reason === 'stalled')
            this.host.log.warn({}, 'event subscriber disconnected: its connection stopped draining (it resumes with Last-Event-ID)');
        else if (reason === 'error')
            this.host.log.error({ problem: detail }, 'event subscription failed');
    }
    /** Close every subscription and refuse new ones (server shutdown); stops retention. */
    close() {
        this.stopped = true;
        if (this.retentionTimer)
            clearInterval(this.retentionTimer);
        this.retentionTimer = null;
        for (const sub of [...this.active])
            sub.close('shutdown');
    }
    /**
     * Retention: drop all but the newest `retention` events of every active repository (a
     * retiring one keeps its files as exported). Runs under the repository's lifecycle lock, so
     * it never races the start of a retirement.
     */
    async applyRetention(authorities = this.host.serving()) {
        const keep = this.options.retention;
        if (keep === null)
            return;
        for (const authority of authorities) {
            const index = authority.index;
            try {
                await this.host.lifecycleExclusive(index, async () => {
                    if (this.host.record(index).lifecycle_kind !== LIFECYCLE_ACTIVE)
                        return;
                    const log = authority.store.events;
                    if (log.lastSeq - log.oldestSeq + 1 <= keep)
                        return;
                    const dropped = await authority.store.trimEvents(keep);
                    if (dropped)
                        this.host.log.info({ repository_index: index, dropped, kept: keep }, 'event retention dropped the oldest events');
                });
            }
            catch (err) {
                this.host.log.error({ repository_index: index, problem: err.message }, 'event retention failed');
            }
        }
    }
    /** Apply retention now and then every retentionIntervalMs (no-op when every event is kept). */
    startRetention() {
        if (this.options.retention === null || this.retentionTimer)
            return;
        this.retentionTimer = setInterval(() => void this.applyRetention(), this.options.retentionIntervalMs);
        this.retentionTimer.unref();
    }
}
// ---------------------------------------------------------------- one subscriber
/**
 * A live reader of a feed. The consumer calls `next()` for the next events (waiting while
 * there are none) until it returns null (closed: `reason` says why); it calls `close('client')`
 * when it goes away. While catching up, `next()` reads a chunk from the logs; once caught up,
 * wakes read new events into the unsent queue, which is bounded.
 */
export class Subscription {
    feeds;
    merge;
    filter;
    form;
    limits;
    client;
    queue = [];
    queuedBytes = 0;
    live = false;
    closedFor = null;
    consumer = null;
    cleanups = [];
    closeListeners = new Set();
    wakeScheduled = false;
    constructor(feeds, merge, filter, form, limits, 
    /** The client key the subscription counts against (EventFeedOptions.maxSubscribersPerClient). */
    client) {
        this.feeds = feeds;
        this.merge = merge;
        this.filter = filter;
        this.form = form;
        this.limits = limits;
        this.client = client;
        feeds.opened(this);
    }
    /** Why the subscription closed; null while open. */
    get reason() {
        return this.closedFor;
    }
    /** @internal Run `fn` when the subscription closes (removes a listener it holds). */
    addCleanup(fn) {
        if (this.closedFor)
            fn();
        else
            this.cleanups.push(fn);
    }
    /** Call `fn` once when the subscription closes; returns the function that forgets it. */
    whenClosed(fn) {
        if (this.closedFor) {
            fn(this.closedFor);
            return () => { };
        }
        this.closeListeners.add(fn);
        return () => this.closeListeners.delete(fn);
    }
    /** The next events to send, oldest first; waits while there are none; null once closed. */
    async next() {
        for (;;) {
            if (this.closedFor)
                return null;
            if (this.queue.length) {
                const out = this.queue;
                this.queue = [];
                this.queuedBytes = 0;
                return out;
            }
            if (!this.live) {
                const out = [];
                const caughtUp = this.read(out, CATCH_UP_BATCH);
                if (this.closedFor)
                    return null;
                // Caught up: from here on wakes read new events as they are published. The switch
                // happens in the same turn as the read that found nothing more, so no event is missed.
                if (caughtUp)
                    this.live = true;
                if (out.length)
                    return out;
                if (!caughtUp)
                    await new Promise((resolve) => setImmediate(resolve));
                continue;
            }
            await new Promise((resolve) => { this.consumer = resolve; });
        }
    }
    /** Consume from the merge into `out`; closes the subscription on a gap or a read failure. */
    read(out, limit) {
        try {
            return this.merge.step(out, limit, SCAN_LIMIT, this.filter, this.form);
        }
        catch (err) {
            if (err instanceof GapError)
                this.close('gone');
            else
                this.close('error', err.message);
            return true;
        }
    }
    /** @internal Events may have been published (or the low-water mark moved). */
    wake() {
        if (this.closedFor || !this.live)
            return;
        const before = this.queue.length;
        const caughtUp = this.read(this.queue, this.limits.maxUnsentEvents + 1);
        for (let i = before; i < this.queue.length; i++)
            this.queuedBytes += this.queue[i].json.length;
        if (this.queue.length > this.limits.maxUnsentEvents || this.queuedBytes > this.limits.maxUnsentBytes) {
            this.close('overflow');
            return;
        }
        // More than one step's worth was published: read on in a later turn.
        if (!caughtUp && !this.wakeScheduled) {
            this.wakeScheduled = true;
            setImmediate(() => {
                this.wakeScheduled = false;
                this.wake();
            });
        }
        if (this.queue.length > before)
            this.notifyConsumer();
    }
    notifyConsumer() {
        const consumer = this.consumer;
        this.consumer = null;
        consumer?.();
    }
    /** End the subscription (idempotent). Unsent events are dropped: the reader resumes after the last it received. */
    close(reason, detail) {
        if (this.closedFor)
            return;
        this.closedFor = reason;
        this.queue = [];
        this.queuedBytes = 0;
        for (const fn of this.cleanups.splice(0))
            fn();
        this.feeds.released(this, reason, detail);
        for (const fn of this.closeListeners)
            fn(reason);
        this.closeListeners.clear();
        this.notifyConsumer();
    }
}
//# sourceMappingURL=event-feed.js.map