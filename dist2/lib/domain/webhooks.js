// Webhooks (docs/api.md "Webhooks", storage-layout.md §17): the rules of a registration, of the
// records a delivery keeps and of what is sent, as pure functions. The registrations and the
// deliveries live in lib/authority/webhooks.ts; the sending in lib/authority/webhook-dispatcher.ts.
import { createHmac } from 'node:crypto';
import { Invalid } from './errors.js';
import { EVENT_TYPES } from './events.js';
import { requireWellFormed } from './text.js';
/** Workflow entity types (storage-layout.md §17). */
export const WEBHOOK = 'webhook';
export const WEBHOOK_CURSOR = 'webhook_cursor';
export const WEBHOOK_DELIVERY = 'webhook_delivery';
/** Live (not deleted) registrations per repository. */
export const MAX_WEBHOOKS = 20;
/** The newest deliveries kept per webhook: delivery n is stored in slot n mod DELIVERY_SLOTS. */
export const DELIVERY_SLOTS = 256;
/** Pending deliveries per webhook; later events wait in events.log until one settles. */
export const MAX_PENDING = 64;
/** Attempts kept in a delivery record (the newest; `attempt_count` counts them all). */
export const MAX_KEPT_ATTEMPTS = 20;
/** Attempts of one round (the first delivery, or one redelivery) before a delivery fails. */
export const DEFAULT_MAX_ATTEMPTS = 8;
/** The wait after the first failed attempt; it doubles after each further one. */
export const DEFAULT_BACKOFF_BASE_MS = 1000;
export const MAX_BACKOFF_MS = 300_000;
/** An attempt that has no answer (status line and headers) this long after it started fails. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/**
 * Deliveries failed in a row (each after its whole retry schedule) that disable a webhook: with
 * the defaults about 8 minutes of a receiver that refuses (4 × 127 s of backoff) to 14 of one that hangs.
 */
export const DEFAULT_DISABLE_AFTER = 4;
export const MAX_URL_LENGTH = 2048;
export const MIN_SECRET_LENGTH = 16;
export const MAX_SECRET_LENGTH = 256;
export const MAX_TYPES = 64;
export const DELIVERY_STATES = ['pending', 'delivered', 'failed'];
/** The reason recorded when `failures` deliveries in a row failed, the last with `lastError` (never a URL or an address). */
export function disabledReason(failures, lastError) {
    return `${failures} deliveries in a row failed (the last: ${lastError ?? 'unknown'}); register the URL again with active: true to re-enable it`;
}
export const webhookId = (sequence) => `webhook-${sequence}`;
export const deliveryId = (hook, sequence) => `${hook}.delivery-${sequence}`;
/** The entity id delivery `sequence` of `hook` is stored under (a ring of DELIVERY_SLOTS per webhook). */
export const deliverySlotId = (hook, sequence) => `${hook}.slot-${sequence % DELIVERY_SLOTS}`;
/** The sequence of a delivery id of webhook `hook`, or null when it is not one. */
export function parseDeliveryId(hook, id) {
    const m = /^(webhook-[1-9][0-9]{0,9})\.delivery-([1-9][0-9]{0,14})$/.exec(id);
    if (!m || m[1] !== hook)
        return null;
    const n = Number(m[2]);
    return Number.isSafeInteger(n) ? n : null;
}
/** A registration's URL: absolute http(s) with a host, no credentials, no fragment. Returns it normalized (WHATWG URL). */
export function validateWebhookUrl(url) {
    requireWellFormed(url, 'url');
    if (url.length > MAX_URL_LENGTH)
        throw new Invalid(`url is longer than ${MAX_URL_LENGTH} characters`);
    let parsed;
    try {
        parsed = new URL(url);
    }
    catch {
        throw new Invalid('url must be an absolute http or https URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
        throw new Invalid('url must be an http or https URL');
    if (!parsed.hostname)
        throw new Invalid('url must name a host');
    if (parsed.username || parsed.password)
        throw new Invalid('url must not carry credentials (user:password@); authenticate deliveries by their signature');
    if (parsed.hash || url.includes('#'))
        throw new Invalid('url must not have a fragment');
    if (parsed.href.length > MAX_URL_LENGTH)
        throw new Invalid(`url is longer than ${MAX_URL_LENGTH} characters`);
    return parsed.href;
}
/** Families of the catalogue (`job` for `job.queued`, ...): what `prefix.*` may name. */
const FAMILIES = new Set(Object.keys(EVENT_TYPES).map((t) => t.slice(0, t.indexOf('.'))));
/** A registration's types: absent means every type; otherwise 1..64 exact types of the catalogue or `family.*`, duplicates dropped. */
export function validateTypes(types) {
    if (types === undefined)
        return null;
    if (types.length === 0)
        throw new Invalid('types must name at least one event type (omit it for every type)');
    if (types.length > MAX_TYPES)
        throw new Invalid(`types may name at most ${MAX_TYPES} entries`);
    const out = [];
    for (const t of types) {
        if (t.endsWith('.*') ? !FAMILIES.has(t.slice(0, -2)) : !Object.hasOwn(EVENT_TYPES, t)) {
            throw new Invalid(`types: ${JSON.stringify(t.length > 64 ? `${t.slice(0, 64)}...` : t)} is neither an event type of the catalogue nor <family>.* (docs/api.md "Events")`);
        }
        if (!out.includes(t))
            out.push(t);
    }
    return out;
}
export function validateSecret(secret) {
    requireWellFormed(secret, 'secret');
    const length = [...secret].length;
    if (length < MIN_SECRET_LENGTH || length > MAX_SECRET_LENGTH)
        throw new Invalid(`secret must be ${MIN_SECRET_LENGTH} to ${MAX_SECRET_LENGTH} characters`);
    return secret;
}
/** Whether an event of `type` goes to a webhook registered for `types` (null: every type). */
export function typeMatches(types, type) {
    if (types === null)
        return true;
    return types.some((t) => (t.endsWith('.*') ? type.startsWith(t.slice(0, -1)) : t === type));
}
/** The event as the feeds and the deliveries show it (docs/api.md "Events"): the per-repository id is the seq. */
export function wireEvent(repositoryIndex, e) {
    return { id: String(e.seq), repository_index: repositoryIndex, seq: e.seq, at_us: e.at_us, type: e.type, data: e.data };
}
/** `X-Cairn-Signature`: `sha256=` and the hex HMAC-SHA256, keyed by the secret (UTF-8), of `<timestamp>.<body>`. */
export function signDelivery(secret, timestampS, body) {
    return `sha256=${createHmac('sha256', secret).update(`${timestampS}.`).update(body).digest('hex')}`;
}
/** The wait after the `failedInRound`-th failed attempt of a round: base × 2^(k−1), at most MAX_BACKOFF_MS. */
export function backoffMs(failedInRound, baseMs) {
    return Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.min(30, Math.max(0, failedInRound - 1)));
}
//# sourceMappingURL=webhooks.js.map