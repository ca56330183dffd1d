// Webhooks (extension routes; docs/api.md "Webhooks"): registrations under a repository, their
// deliveries and redelivery. A registration's secret is accepted, stored and used to sign, and
// never answered: the projection says `secret_set: true`.
import { array, boolean, object, optional, string } from 'superstruct';
import { Invalid } from '../../domain/errors.js';
import { DELIVERY_STATES, MAX_KEPT_ATTEMPTS, wireEvent } from '../../domain/webhooks.js';
import { PAGE_FIELDS, arr, bool, constant, enumOf, int, nullable, obj, ref, str, strArr, uint } from '../json-schema.js';
import { requireAuthority } from '../route-types.js';
import { validate } from '../validate.js';
import { pageFields, pageRequest, queryValue } from './workflow-common.js';
/** Unknown fields are refused (422): a misspelt `types` must not register a webhook for every event. */
export const Register = object({ url: string(), types: optional(array(string())), secret: string(), active: optional(boolean()) });
export const DeliveriesQuery = {
    state: { schema: enumOf(DELIVERY_STATES), description: 'only deliveries in this state' },
};
function webhookProjection(w, repositoryIndex, pending) {
    return {
        webhook_id: w.webhook_id,
        repository_index: repositoryIndex,
        url: w.url,
        types: w.types,
        active: w.active,
        disabled_reason: w.disabled_reason ?? null,
        disabled_at_s: w.disabled_at_s ?? null,
        consecutive_failures: w.consecutive_failures ?? 0,
        secret_set: true,
        pending_deliveries: pending,
        created_at_s: w.created_at_s,
        updated_at_s: w.updated_at_s,
    };
}
function deliveryProjection(d, repositoryIndex) {
    return {
        delivery_id: d.delivery_id,
        webhook_id: d.webhook_id,
        repository_index: repositoryIndex,
        sequence: d.sequence,
        event_type: d.event.type,
        event: wireEvent(repositoryIndex, d.event),
        state: d.state,
        attempt_count: d.attempt_count,
        redeliveries: d.round,
        attempts: d.attempts,
        next_attempt_at_ms: d.next_attempt_at_ms,
        created_at_s: d.created_at_s,
        updated_at_s: d.updated_at_s,
        finished_at_s: d.finished_at_s,
    };
}
export const create = async (ctx) => {
    const req = validate(ctx.body, Register);
    const a = requireAuthority(ctx);
    const { webhook, created } = await a.webhooks.register(req, ctx.service.webhookTargets);
    return { status: created ? 201 : 200, json: { webhook: webhookProjection(webhook, a.index, a.webhooks.pendingCount(webhook.webhook_id)) } };
};
export const list = async (ctx) => {
    const a = requireAuthority(ctx);
    const page = a.webhooks.page(pageRequest(ctx, 'webhooks', 'int'));
    return { json: { webhooks: page.rows.map((w) => webhookProjection(w, a.index, a.webhooks.pendingCount(w.webhook_id))), ...pageFields(page) } };
};
export const get = async (ctx) => {
    const a = requireAuthority(ctx);
    const w = a.webhooks.webhook(ctx.params.webhook_id);
    return { json: { webhook: webhookProjection(w, a.index, a.webhooks.pendingCount(w.webhook_id)) } };
};
export const remove = async (ctx) => {
    const a = requireAuthority(ctx);
    const w = await a.webhooks.remove(ctx.params.webhook_id);
    return { json: { webhook_id: w.webhook_id, deleted: true } };
};
export const listDeliveries = async (ctx) => {
    const a = requireAuthority(ctx);
    const state = queryValue(ctx, 'state');
    if (state !== undefined && !DELIVERY_STATES.includes(state))
        throw new Invalid(`state must be one of ${DELIVERY_STATES.join(', ')}`);
    const hook = ctx.params.webhook_id;
    const page = a.webhooks.deliveries(hook, pageRequest(ctx, 'webhook-deliveries', 'int', { webhook_id: hook, state }), state);
    return { json: { webhook_id: hook, deliveries: page.rows.map((d) => deliveryProjection(d, a.index)), ...pageFields(page) } };
};
export const getDelivery = async (ctx) => {
    const a = requireAuthority(ctx);
    return { json: { delivery: deliveryProjection(a.webhooks.delivery(ctx.params.webhook_id, ctx.params.delivery_id), a.index) } };
};
export const redeliver = async (ctx) => {
    const a = requireAuthority(ctx);
    return { json: { delivery: deliveryProjection(await a.webhooks.redeliver(ctx.params.webhook_id, ctx.params.delivery_id), a.index) } };
};
const eventSchema = obj({
    id: { ...str, description: 'the event\'s id in the repository feed (its seq, decimal)' },
    repository_index: uint,
    seq: uint,
    at_us: uint,
    type: str,
    data: { type: 'object', description: 'ids of what the event describes (docs/api.md "Events")' },
}, { description: 'the event JSON a delivery POSTs (its body, byte for byte as signed)' });
export const SCHEMAS = {
    Webhook: obj({
        webhook_id: { ...str, description: 'webhook-<sequence>' },
        repository_index: uint,
        url: { ...str, description: 'where deliveries are POSTed (normalized)' },
        types: { ...nullable(strArr), description: 'event types or <family>.*; null: every type' },
        active: { ...bool, description: 'false: takes no events and sends nothing (set by the owner, or by the server after failures)' },
        disabled_reason: { ...nullable(str), description: 'why the server made the webhook inactive (deliveries failed in a row); null unless it did. Registering the URL again with active: true clears it' },
        disabled_at_s: { ...nullable(uint), description: 'when the server disabled the webhook; null unless it did' },
        consecutive_failures: { ...uint, description: 'deliveries failed in a row (a delivered one resets it)' },
        secret_set: { ...constant(true), description: 'the secret is stored to sign deliveries and never answered' },
        pending_deliveries: uint,
        created_at_s: uint,
        updated_at_s: uint,
    }),
    WebhookResult: obj({ webhook: ref('Webhook') }),
    WebhookList: obj({ webhooks: { ...arr(ref('Webhook')), description: 'oldest first' }, ...PAGE_FIELDS }),
    WebhookDeleted: obj({ webhook_id: str, deleted: constant(true) }),
    WebhookEvent: eventSchema,
    WebhookDeliveryAttempt: obj({
        attempt: { ...int, minimum: 1 },
        round: { ...uint, description: '0: the first delivery; k: the k-th redelivery' },
        at_s: uint,
        duration_ms: uint,
        status_code: { ...nullable(int), description: "the receiver's status; null when none arrived" },
        error: { ...nullable(str), description: 'null when delivered' },
    }),
    WebhookDelivery: obj({
        delivery_id: { ...str, description: '<webhook_id>.delivery-<sequence> (the X-Cairn-Delivery header)' },
        webhook_id: str,
        repository_index: uint,
        sequence: { ...int, minimum: 1 },
        event_type: str,
        event: ref('WebhookEvent'),
        state: enumOf(DELIVERY_STATES),
        attempt_count: uint,
        redeliveries: uint,
        attempts: { ...arr(ref('WebhookDeliveryAttempt')), description: `oldest first; the newest ${MAX_KEPT_ATTEMPTS} kept` },
        next_attempt_at_ms: { ...nullable(uint), description: 'when a pending delivery is attempted next; null once delivered or failed' },
        created_at_s: uint,
        updated_at_s: uint,
        finished_at_s: nullable(uint),
    }),
    WebhookDeliveryResult: obj({ delivery: ref('WebhookDelivery') }),
    WebhookDeliveryList: obj({ webhook_id: str, deliveries: { ...arr(ref('WebhookDelivery')), description: 'newest first' }, ...PAGE_FIELDS }),
};
//# sourceMappingURL=webhooks.js.map