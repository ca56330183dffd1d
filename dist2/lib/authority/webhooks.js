// Webhook registrations and their deliveries (docs/api.md "Webhooks"): workflow entities written
// through the authority's transactions (storage-layout.md §17), so they are durable, exported
// with the repository and replayed at open. This module owns the records and their in-memory
// indexes; lib/authority/webhook-dispatcher.ts decides when to take events and send them.
//
// Bounded memory: a webhook keeps its newest DELIVERY_SLOTS deliveries (delivery n in slot
// n mod DELIVERY_SLOTS, so a newer delivery replaces the oldest) and has at most MAX_PENDING of
// them pending; events beyond that wait in events.log behind the webhook's cursor.
import { Conflict, Invalid, NotFound } from '../domain/errors.js';
import { takePage } from '../domain/paging.js';
import { nowSeconds } from '../domain/repository.js';
import { DELIVERY_SLOTS, MAX_KEPT_ATTEMPTS, MAX_PENDING, MAX_WEBHOOKS, WEBHOOK, WEBHOOK_CURSOR, WEBHOOK_DELIVERY, backoffMs, deliveryId, disabledReason, deliverySlotId, parseDeliveryId, validateSecret, validateTypes, validateWebhookUrl, webhookId, } from '../domain/webhooks.js';
import { checkRegisteredTarget } from '../domain/webhook-targets.js';
import { localAddresses } from './local-addresses.js';
/** Per-batch staged state: webhook ids created by earlier transactions of the batch, live URLs. */
const NEW_WEBHOOK = 'webhook:new';
const WEBHOOK_URL = 'webhook:url';
export class WebhookBook {
    store;
    /** Every registration ever made (deleted ones too), by id, in sequence order. */
    hooks = new Map();
    state = new Map();
    /** Called after a commit that changes what a webhook has to do (registration, redelivery). */
    onChange = () => { };
    constructor(store) {
        this.store = store;
        const all = [...store.entitiesOf(WEBHOOK)].map(([, w]) => w).sort((a, b) => a.sequence - b.sequence);
        for (const w of all) {
            this.hooks.set(w.webhook_id, w);
            this.state.set(w.webhook_id, { last: 0, pending: [], cursor: store.entity(WEBHOOK_CURSOR, w.webhook_id)?.event_seq ?? 0 });
        }
        for (const [, d] of store.entitiesOf(WEBHOOK_DELIVERY)) {
            const s = this.state.get(d.webhook_id);
            if (!s)
                continue;
            if (d.sequence > s.last)
                s.last = d.sequence;
            if (d.state === 'pending')
                s.pending.push(d.sequence);
        }
        for (const s of this.state.values())
            s.pending.sort((a, b) => a - b);
    }
    // ------------------------------------------------------------ reads
    /** Live registrations in sequence order. */
    live() {
        return [...this.hooks.values()].filter((w) => !w.deleted);
    }
    /** A live registration; 404 otherwise (deleted ones are gone for callers). */
    webhook(id) {
        const w = this.hooks.get(id);
        if (!w || w.deleted)
            throw new NotFound(`webhook ${id} does not exist`);
        return w;
    }
    /** A live, active registration or null (the dispatcher's view). */
    activeWebhook(id) {
        const w = this.hooks.get(id);
        return w && !w.deleted && w.active ? w : null;
    }
    /** One page of live registrations, oldest first (cursor key: the webhook sequence). */
    page(req) {
        const rows = function* (hooks) {
            for (const w of hooks)
                yield [w.sequence, w];
        };
        return takePage(req, rows(this.live()), 'asc');
    }
    /** The durable cursor of a webhook (events with seq ≤ it have been examined). */
    cursor(id) {
        return this.state.get(id)?.cursor ?? 0;
    }
    pendingCount(id) {
        return this.state.get(id)?.pending.length ?? 0;
    }
    /** The pending delivery to attempt next: the lowest sequence. */
    nextPending(id) {
        const s = this.state.get(id);
        while (s && s.pending.length) {
            const d = this.slot(id, s.pending[0]);
            if (d && d.state === 'pending')
                return d;
            s.pending.shift(); // settled or replaced meanwhile
        }
        return null;
    }
    slot(hook, sequence) {
        const d = this.store.entity(WEBHOOK_DELIVERY, deliverySlotId(hook, sequence));
        return d && d.sequence === sequence ? d : null;
    }
    /** A delivery of a live webhook; 404 when unknown or no longer kept. */
    delivery(hook, id) {
        this.webhook(hook);
        const n = parseDeliveryId(hook, id);
        const d = n === null ? null : this.slot(hook, n);
        if (!d)
            throw new NotFound(`delivery ${id} of webhook ${hook} does not exist (or is older than the newest ${DELIVERY_SLOTS} kept)`);
        return d;
    }
    /** One page of a webhook's kept deliveries, newest first (cursor key: the delivery sequence). */
    deliveries(hook, req, state) {
        this.webhook(hook);
        const s = this.state.get(hook);
        const self = this;
        const rows = function* () {
            const top = req.after === null ? s.last : Math.min(s.last, Number(req.after) - 1);
            for (let n = top; n >= 1 && n > s.last - DELIVERY_SLOTS; n--) {
                const d = self.slot(hook, n);
                if (d && (state === undefined || d.state === state))
                    yield [n, d];
            }
        };
        return takePage(req, rows(), 'desc');
    }
    // ------------------------------------------------------------ registrations
    /**
     * Register `input.url`, or replace the types, secret and active flag of the live webhook that
     * has that URL (one registration per URL per repository). A new webhook, and one turned from
     * inactive to active, takes the events committed after this commit; turned active, a webhook
     * the server disabled loses its reason and its count of failed deliveries. `targets`: where
     * deliveries may go (a literal internal address or the server's own listener is refused here).
     */
    register(input, targets) {
        const url = validateWebhookUrl(input.url);
        checkRegisteredTarget(url, targets, localAddresses());
        const types = validateTypes(input.types);
        const secret = validateSecret(input.secret);
        const active = input.active ?? true;
        return this.store.transact((tx) => {
            const now = nowSeconds();
            const existingId = tx.staged(WEBHOOK_URL, url) ?? this.live().find((w) => w.url === url)?.webhook_id;
            const existing = existingId ? tx.entity(WEBHOOK, existingId) : undefined;
            let hook;
            let resetCursor;
            if (existing && !existing.deleted) {
                resetCursor = active && !existing.active;
                // A secret given again replaces one this server could not open (secret_unavailable).
                const { secret_unavailable: _unavailable, ...kept } = existing;
                hook = { ...kept, types, secret, active, updated_at_s: now };
                if (resetCursor)
                    Object.assign(hook, { consecutive_failures: 0, disabled_reason: null, disabled_at_s: null });
            }
            else {
                const staged = tx.stagedKeys(NEW_WEBHOOK);
                const liveCount = this.live().length + staged.length;
                if (liveCount >= MAX_WEBHOOKS)
                    throw new Conflict(`a repository has at most ${MAX_WEBHOOKS} webhooks; delete one first`);
                const sequence = this.hooks.size + staged.length + 1;
                hook = {
                    webhook_id: webhookId(sequence), sequence, url, types, secret, active, deleted: false, created_at_s: now, updated_at_s: now, deleted_at_s: null,
                    consecutive_failures: 0, disabled_reason: null, disabled_at_s: null,
                };
                tx.stage(NEW_WEBHOOK, hook.webhook_id, true);
                resetCursor = true;
            }
            tx.stage(WEBHOOK_URL, url, hook.webhook_id);
            tx.upsert(WEBHOOK, hook.webhook_id, hook);
            // Events already committed (or committed earlier in this batch) are not the new webhook's.
            const cursor = { webhook_id: hook.webhook_id, event_seq: tx.eventSeq };
            if (resetCursor)
                tx.upsert(WEBHOOK_CURSOR, hook.webhook_id, cursor);
            tx.onPublish(() => {
                this.hooks.set(hook.webhook_id, hook);
                const s = this.state.get(hook.webhook_id) ?? { last: 0, pending: [], cursor: 0 };
                if (resetCursor)
                    s.cursor = Math.max(s.cursor, cursor.event_seq);
                this.state.set(hook.webhook_id, s);
            });
            return { webhook: hook, created: !(existing && !existing.deleted) };
        }).then((r) => {
            this.onChange(r.webhook.webhook_id);
            return r;
        });
    }
    /** Delete a webhook: it stops at once (pending deliveries are dropped) and its secret is erased from its record. */
    remove(id) {
        this.webhook(id);
        return this.store.transact((tx) => {
            const cur = tx.entity(WEBHOOK, id);
            if (!cur || cur.deleted)
                throw new NotFound(`webhook ${id} does not exist`);
            const now = nowSeconds();
            const gone = { ...cur, secret: null, active: false, deleted: true, updated_at_s: now, deleted_at_s: now };
            tx.upsert(WEBHOOK, id, gone);
            tx.onPublish(() => {
                this.hooks.set(id, gone);
                const s = this.state.get(id);
                if (s)
                    s.pending = [];
            });
            return gone;
        });
    }
    // ------------------------------------------------------------ deliveries (the dispatcher's writes)
    /**
     * Take `events` (ascending, all after the webhook's cursor) into pending deliveries, in one
     * commit that also moves the cursor to `through` (the last event examined). Stops early, with
     * the cursor at the last event taken, when the webhook has MAX_PENDING pending deliveries or
     * the slot the next delivery needs still holds a pending one. Returns the cursor reached.
     */
    take(hook, events, through, admitted) {
        return this.store.transact((tx) => {
            const w = tx.entity(WEBHOOK, hook);
            const s = this.state.get(hook);
            if (!w || w.deleted || !w.active || !s || !admitted())
                return s?.cursor ?? 0;
            const now = nowSeconds();
            let last = s.last;
            let pending = s.pending.length;
            let cursor = through;
            const created = [];
            for (const e of events) {
                const n = last + 1;
                const occupant = tx.entity(WEBHOOK_DELIVERY, deliverySlotId(hook, n));
                if (pending >= MAX_PENDING || occupant?.state === 'pending') {
                    cursor = e.seq - 1;
                    break;
                }
                const d = {
                    delivery_id: deliveryId(hook, n), webhook_id: hook, sequence: n, event: { seq: e.seq, at_us: e.at_us, type: e.type, data: e.data },
                    state: 'pending', attempt_count: 0, round: 0, round_attempts: 0, attempts: [], next_attempt_at_ms: Date.now(),
                    created_at_s: now, updated_at_s: now, finished_at_s: null,
                };
                tx.upsert(WEBHOOK_DELIVERY, deliverySlotId(hook, n), d);
                created.push(n);
                last = n;
                pending++;
            }
            if (cursor <= s.cursor)
                return s.cursor;
            tx.upsert(WEBHOOK_CURSOR, hook, { webhook_id: hook, event_seq: cursor });
            tx.onPublish(() => {
                s.cursor = Math.max(s.cursor, cursor);
                if (created.length) {
                    s.last = Math.max(s.last, created[created.length - 1]);
                    s.pending.push(...created);
                    s.pending.sort((a, b) => a - b);
                }
            });
            return cursor;
        });
    }
    /**
     * Record an attempt of a pending delivery: delivered, pending again after the backoff, or
     * failed once the round has had `maxAttempts`. A delivery that settles also settles its
     * webhook's count of deliveries failed in a row: delivered resets it; the `disableAfter`-th
     * failure in a row makes the webhook inactive with a reason and writes `webhook.disabled`, in
     * the same commit. Nothing is written when the delivery is no longer the one attempted
     * (replaced, settled, or its webhook deleted).
     */
    recordAttempt(d, outcome, policy, admitted) {
        const slotId = deliverySlotId(d.webhook_id, d.sequence);
        return this.store.transact((tx) => {
            if (!admitted())
                return null;
            const cur = tx.entity(WEBHOOK_DELIVERY, slotId);
            const w = tx.entity(WEBHOOK, d.webhook_id);
            if (!cur || !w || w.deleted || cur.delivery_id !== d.delivery_id || cur.state !== 'pending' || cur.attempt_count !== d.attempt_count || cur.round !== d.round)
                return null;
            const attempt = { attempt: cur.attempt_count + 1, round: cur.round, at_s: outcome.at_s, duration_ms: outcome.duration_ms, status_code: outcome.status_code, error: outcome.ok ? null : outcome.error };
            const roundAttempts = cur.round_attempts + 1;
            const state = outcome.ok ? 'delivered' : roundAttempts >= policy.maxAttempts ? 'failed' : 'pending';
            const now = nowSeconds();
            const next = {
                ...cur,
                state,
                attempt_count: attempt.attempt,
                round_attempts: roundAttempts,
                attempts: [...cur.attempts, attempt].slice(-MAX_KEPT_ATTEMPTS),
                next_attempt_at_ms: state === 'pending' ? Date.now() + backoffMs(roundAttempts, policy.backoffBaseMs) : null,
                updated_at_s: now,
                finished_at_s: state === 'pending' ? null : now,
            };
            tx.upsert(WEBHOOK_DELIVERY, slotId, next);
            // The webhook record is written only when its count changes (a delivery that settles).
            let hook = null;
            let disabled = null;
            const failures = w.consecutive_failures ?? 0;
            if (state === 'delivered' && failures > 0)
                hook = { ...w, consecutive_failures: 0 };
            // A secret this server cannot open is no failure of the receiver: nothing written for it.
            if (state === 'failed' && !w.secret_unavailable) {
                hook = { ...w, consecutive_failures: failures + 1 };
                if (w.active && failures + 1 >= policy.disableAfter) {
                    hook = { ...hook, active: false, disabled_reason: disabledReason(failures + 1, attempt.error), disabled_at_s: now, updated_at_s: now };
                    disabled = hook;
                    tx.emit('webhook.disabled', { webhook_id: w.webhook_id, delivery_id: cur.delivery_id, failed_deliveries: failures + 1 });
                }
            }
            if (hook)
                tx.upsert(WEBHOOK, w.webhook_id, hook);
            tx.onPublish(() => {
                if (state !== 'pending')
                    this.dropPending(d.webhook_id, d.sequence);
                if (hook)
                    this.hooks.set(hook.webhook_id, hook);
            });
            return { delivery: next, disabled };
        });
    }
    dropPending(hook, sequence) {
        const s = this.state.get(hook);
        if (s)
            s.pending = s.pending.filter((n) => n !== sequence);
    }
    /** Send a delivered or failed delivery again: a new round of attempts of the same delivery (same id, same event). */
    redeliver(hook, id) {
        const w = this.webhook(hook);
        if (!w.active)
            throw new Invalid(`webhook ${hook} is inactive; register its URL again with active: true first`);
        const known = this.delivery(hook, id);
        return this.store.transact((tx) => {
            const cur = tx.entity(WEBHOOK_DELIVERY, deliverySlotId(hook, known.sequence));
            if (!cur || cur.delivery_id !== id)
                throw new NotFound(`delivery ${id} of webhook ${hook} does not exist`);
            if (cur.state === 'pending')
                throw new Invalid(`delivery ${id} is pending already; it is redelivered once it is delivered or failed`);
            const now = nowSeconds();
            const next = { ...cur, state: 'pending', round: cur.round + 1, round_attempts: 0, next_attempt_at_ms: Date.now(), updated_at_s: now, finished_at_s: null };
            tx.upsert(WEBHOOK_DELIVERY, deliverySlotId(hook, cur.sequence), next);
            tx.onPublish(() => {
                const s = this.state.get(hook);
                if (s && !s.pending.includes(cur.sequence)) {
                    s.pending.push(cur.sequence);
                    s.pending.sort((a, b) => a - b);
                }
            });
            return next;
        }).then((d) => {
            this.onChange(hook);
            return d;
        });
    }
    /** Move a webhook's durable cursor past events it examined and did not take (no delivery matched). */
    advance(hook, through, admitted) {
        return this.store.transact((tx) => {
            const s = this.state.get(hook);
            if (!s || through <= s.cursor || !admitted())
                return;
            tx.upsert(WEBHOOK_CURSOR, hook, { webhook_id: hook, event_seq: through });
            tx.onPublish(() => { s.cursor = Math.max(s.cursor, through); });
        });
    }
}
//# sourceMappingURL=webhooks.js.map