// The event feeds (extensions; docs/api.md "Events"): GET {repo}/events and GET /v1/native/events,
// a JSON page by default and server-sent events with `Accept: text/event-stream`. The feeds
// themselves are lib/authority/event-feed.ts; this module parses the request and picks the form.
import ipaddr from 'ipaddr.js';
import { Invalid } from '../../domain/errors.js';
import { EVENT_TYPES, parseEventSeq, parseEventTypes, parseGlobalEventId, REGISTRY_EVENT_TYPES } from '../../domain/events.js';
import { EVENT_STREAM_MEDIA, eventStreamReply } from '../event-stream.js';
import { arr, int, obj, ref, str, uint } from '../json-schema.js';
import { queryValue } from './workflow-common.js';
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;
export const EventsQuery = {
    since: { schema: { type: 'string' }, description: 'resume after this position: an event seq (repository feed) or a global id <at_us>-<stream>-<seq> (global feed); Last-Event-ID wins over it' },
    types: { schema: { type: 'string' }, description: 'comma-separated event types or family.* entries (job.*, change.*, ...); unknown ones, and ones that never appear on the feed (repository.* on a repository feed), are 400' },
    limit: { schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT }, description: 'events per page (JSON only)' },
};
/** `Accept: text/event-stream` (preferred over JSON) asks for the stream. */
function wantsStream(ctx) {
    return ctx.koa.accepts('application/json', EVENT_STREAM_MEDIA) === EVENT_STREAM_MEDIA;
}
function typesOf(ctx, feed) {
    const text = queryValue(ctx, 'types');
    return text === undefined ? null : parseEventTypes(text, feed);
}
function limitOf(ctx) {
    const text = queryValue(ctx, 'limit');
    if (text === undefined)
        return DEFAULT_LIMIT;
    const n = /^[1-9][0-9]{0,3}$/.test(text) ? Number(text) : 0;
    if (n < 1 || n > MAX_LIMIT)
        throw new Invalid(`limit must be an integer from 1 to ${MAX_LIMIT}`);
    return n;
}
/** The resume position: the Last-Event-ID header of a stream wins over `?since=`. */
function sinceText(ctx, stream) {
    const header = stream ? ctx.koa.get('last-event-id') : '';
    if (header !== '')
        return { text: header, name: 'Last-Event-ID' };
    const since = queryValue(ctx, 'since');
    return since === undefined ? null : { text: since, name: 'since' };
}
/**
 * The client a stream counts against (the per-client cap, EventFeedOptions): the remote address
 * of the connection (`app.proxy` is off, so a forwarded-for header is never believed). IPv4 and
 * IPv4-mapped IPv6 by address; other IPv6 by /64, the block one host usually holds, so a host
 * cannot pass the cap by picking another address of its own.
 */
export function clientKey(address) {
    if (!address || !ipaddr.isValid(address))
        return address || 'unknown';
    const ip = ipaddr.process(address);
    if (ip.kind() === 'ipv4')
        return ip.toString();
    const parts = ip.parts.slice(0, 4).map((p) => p.toString(16));
    return `${parts.join(':')}::/64`;
}
const clientOf = (ctx) => clientKey(ctx.koa.req.socket.remoteAddress);
export const repositoryEvents = async (ctx) => {
    const index = ctx.repository.repository_index;
    const stream = wantsStream(ctx);
    const filter = typesOf(ctx, 'repository');
    const limit = limitOf(ctx);
    const given = sinceText(ctx, stream);
    const since = given ? parseEventSeq(given.text, given.name) : null;
    const feeds = ctx.service.feeds;
    if (!stream)
        return { json: feeds.repositoryPage(index, since, limit, filter) };
    if (ctx.koa.method === 'HEAD') {
        feeds.repositoryPage(index, since, 1, filter); // the same refusals as the stream
        return { mediaType: `${EVENT_STREAM_MEDIA}; charset=utf-8`, bytes: Buffer.alloc(0) };
    }
    return eventStreamReply(feeds.subscribeRepository(index, since, filter, clientOf(ctx)), feeds.options.heartbeatMs);
};
export const globalEvents = async (ctx) => {
    const stream = wantsStream(ctx);
    const filter = typesOf(ctx, 'global');
    const limit = limitOf(ctx);
    const given = sinceText(ctx, stream);
    const since = given ? parseGlobalEventId(given.text, given.name) : null;
    const feeds = ctx.service.feeds;
    // Every repository is merged from the start: wait for the ones not opened yet (lib/authority/service.ts).
    await ctx.service.openAllInBackground();
    if (!stream)
        return { json: feeds.globalPage(since, limit, filter) };
    if (ctx.koa.method === 'HEAD') {
        feeds.globalPage(since, 1, filter);
        return { mediaType: `${EVENT_STREAM_MEDIA}; charset=utf-8`, bytes: Buffer.alloc(0) };
    }
    return eventStreamReply(feeds.subscribeGlobal(since, filter, clientOf(ctx)), feeds.options.heartbeatMs);
};
const dataValue = { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'null' }] };
const ALL_TYPES = [...Object.keys(EVENT_TYPES), ...Object.keys(REGISTRY_EVENT_TYPES)];
export const SCHEMAS = {
    Event: obj({
        id: { ...str, description: 'repository feed: the seq; global feed: <at_us>-<stream>-<seq> (stream: the repository index or registry)' },
        repository_index: { ...uint, description: 'the repository the event concerns' },
        seq: { ...uint, description: "the event's sequence number in its stream (gap-free from 1)" },
        at_us: { ...int, description: 'commit time, µs since the epoch; orders events of all repositories' },
        type: { type: 'string', enum: ALL_TYPES, description: 'the event catalogue (docs/api.md "Events")' },
        data: { type: 'object', additionalProperties: dataValue, description: 'the ids the type lists: read the current projection they name' },
    }, { description: 'an event of a feed' }),
    EventPage: obj({
        events: arr(ref('Event')),
        next_since: { ...uint, description: 'pass as since for the next page: the seq the page read up to (the last event returned, or with a types filter the last one considered; since when none)' },
        oldest_seq: { ...uint, description: 'the oldest event still kept (last_seq + 1 when none is)' },
        last_seq: { ...uint, description: 'the newest event (0: none yet)' },
    }, { description: 'a page of a repository feed' }),
    GlobalEventPage: obj({
        events: arr(ref('Event')),
        next_since: { ...str, description: 'pass as since for the next page: the global id the page read up to' },
        oldest_id: { ...str, description: 'the oldest position a reader can resume from without a gap (0-0-0: the beginning)' },
    }, { description: 'a page of the global feed' }),
};
//# sourceMappingURL=events.js.map