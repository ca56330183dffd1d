// Sealed fields of workflow records (storage-layout.md §17.2): what only the server may read — a
// webhook's signing secret, a draft comment's body and suggestion — is written to workflow.log
// encrypted with the server's key (DATA/seal.key, outside every repository directory), so the
// files a retirement lists, an archive holds or a copy of the directory carries never hold it in
// clear. The in-memory records are plain: the store seals at its write and opens at its read.
// Which fields, and what a record becomes when its value cannot be opened (another server's
// key), are decided here; pure functions over node:crypto.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
export const SEAL_KEY_BYTES = 32;
export function sealKeyOf(bytes) {
    if (bytes.length !== SEAL_KEY_BYTES)
        throw new Error(`a seal key is ${SEAL_KEY_BYTES} bytes`);
    return { id: createHash('sha256').update('cairn seal key id\0').update(bytes).digest('hex').slice(0, 16), bytes };
}
export function isSealed(v) {
    return typeof v === 'object' && v !== null && (v.sealed === 1 || v.sealed === 2) && typeof v.key === 'string' && typeof v.box === 'string';
}
/** `context` (entity type, id and field) is authenticated with the value: a box moved to another record does not open. */
export function seal(key, context, plain, format = 2) {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key.bytes, nonce);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return { sealed: format, key: key.id, box: Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64') };
}
/** The plain string, or null when `key` is not the one it was sealed with (or it was altered). */
export function unseal(key, context, v) {
    if (!key || v.key !== key.id)
        return null;
    const box = Buffer.from(v.box, 'base64');
    if (box.length < 28)
        return null;
    try {
        const decipher = createDecipheriv('aes-256-gcm', key.bytes, box.subarray(0, 12));
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(box.subarray(box.length - 16));
        return Buffer.concat([decipher.update(box.subarray(12, box.length - 16)), decipher.final()]).toString('utf8');
    }
    catch {
        return null;
    }
}
/** The fields of a record of `type` kept sealed on disk (only string values are sealed). */
function sealedFields(type, body) {
    if (type === 'webhook')
        return ['secret'];
    // A draft is its author's alone until published; a published comment is everyone's, a discarded one empty.
    if (type === 'comment' && body.published === false && body.discarded !== true)
        return ['body', 'suggestion'];
    return [];
}
/**
 * The associated data of a sealed value (storage-layout.md §17.2). Format 2 also binds what
 * says whose the value is — a draft's `author` and `change_id`, a webhook's `url` — so a value
 * moved onto another record, or left on a record whose owner was edited on disk, does not open
 * (ids repeat across repositories: a crafted restore could otherwise carry one over).
 */
function contextOf(format, type, id, field, body) {
    if (format === 1)
        return `cairn.seal.v1\0${type}\0${id}\0${field}`;
    const str = (v) => (typeof v === 'string' ? v : null);
    const owner = type === 'webhook' ? [str(body.url)] : [str(body.author), str(body.change_id)];
    return `cairn.seal.v2\0${JSON.stringify([type, id, field, ...owner])}`;
}
const unsealField = (key, type, id, field, body, v) => unseal(key, contextOf(v.sealed, type, id, field, body), v);
/** Whether a record of `type` may have sealed fields (the store looks no further at any other). */
export const SEALING_TYPES = new Set(['webhook', 'comment']);
/**
 * Whether a record of `type` as it stands on disk holds a field that must be sealed in clear
 * (written by a server from before sealing, storage-layout.md §17.2), or a value the key of id
 * `keyId` sealed in format 1: the store counts them and rewrites the log sealed
 * (ContentStore.sealInClear).
 */
export function holdsClear(type, body, keyId = null) {
    if (!SEALING_TYPES.has(type) || typeof body !== 'object' || body === null)
        return false;
    const b = body;
    return sealedFields(type, b).some((f) => typeof b[f] === 'string') || (keyId !== null && Object.values(b).some((v) => isOldFormat(v, keyId)));
}
/** A value sealed in format 1 with the key of id `keyId`: counted like one in clear, so a reseal writes it in format 2 (those of another key stay as they are). */
const isOldFormat = (v, keyId) => isSealed(v) && v.sealed === 1 && v.key === keyId;
/** Sealed values of a record as on disk that `key` does not open (another server's key, or none): fsck counts them. */
export function unopenedFields(key, type, id, body) {
    if (!SEALING_TYPES.has(type) || typeof body !== 'object' || body === null)
        return 0;
    let n = 0;
    for (const [f, v] of Object.entries(body))
        if (isSealed(v) && unsealField(key, type, id, f, body, v) === null)
            n++;
    return n;
}
/** Test hook: commits write sealed fields in clear, as servers from before sealing did (test/reseal.test.ts builds such stores). */
export const sealingTestHooks = { writeInClear: false, /** Commits seal in format 1, as servers from before format 2 did. */ writeFormat1: false };
/**
 * On a record read with a sealed value that did not open: the fields as they stood on disk and
 * what the read made of them. A symbol key: copied by a spread (an edit of the record keeps it),
 * never by JSON (never answered, never written as such).
 */
const UNOPENED = Symbol('cairn.unopened');
/**
 * A record read with a value that did not open, written again (a webhook's failure count, an
 * edit of another field): each field still as the read made it is written as it stood on disk,
 * so the sealed value survives until the right key is back; a field given a new value (a secret
 * registered again, a webhook deleted) is written as given.
 */
function unopenedKept(type, b) {
    const u = b[UNOPENED];
    if (!u)
        return b;
    const out = { ...b };
    delete out[UNOPENED];
    if (type === 'webhook' && b.deleted === true) {
        delete out.secret_unavailable; // a deletion erases the secret, opened or not
        return out;
    }
    for (const [f, made] of Object.entries(u.made)) {
        if (!Object.is(b[f], made))
            continue;
        if (u.raw[f] === undefined)
            delete out[f];
        else
            out[f] = u.raw[f];
    }
    return out;
}
/** The record as written to disk: its sealed fields sealed with `key` (the same object when it has none). Throws without a key when one is needed. */
export function sealRecord(key, type, id, body) {
    if (!SEALING_TYPES.has(type) || typeof body !== 'object' || body === null)
        return body;
    const b = unopenedKept(type, body);
    const fields = sealedFields(type, b).filter((f) => typeof b[f] === 'string');
    // Values of format 1 this key opens are sealed again in format 2 (a reseal meets them on disk).
    const old = key ? Object.keys(b).filter((f) => isOldFormat(b[f], key.id)) : [];
    if (!fields.length && !old.length)
        return b === body ? body : b;
    if (!key)
        throw new Error(`no seal key: a ${type} record's ${fields.join(', ')} cannot be written in clear`);
    const out = { ...b };
    const format = sealingTestHooks.writeFormat1 ? 1 : 2;
    for (const f of fields)
        out[f] = seal(key, contextOf(format, type, id, f, b), b[f], format);
    for (const f of old) {
        const plain = unsealField(key, type, id, f, b, b[f]);
        if (plain !== null)
            out[f] = seal(key, contextOf(2, type, id, f, b), plain);
    }
    return out;
}
/**
 * The record as read from disk, its sealed fields opened. A value that does not open (sealed
 * with another server's key) leaves the record as its type says: a webhook without its secret
 * (`secret_unavailable`: its deliveries fail, saying so, until its URL is registered again with
 * a secret); a draft discarded (its author's text cannot be read here).
 */
export function openRecord(key, type, id, body) {
    if (!SEALING_TYPES.has(type) || typeof body !== 'object' || body === null)
        return body;
    const b = body;
    let out = null;
    let lost = false;
    for (const [f, v] of Object.entries(b)) {
        if (!isSealed(v))
            continue;
        out ??= { ...b };
        const plain = unsealField(key, type, id, f, b, v);
        if (plain === null)
            lost = true;
        else
            out[f] = plain;
    }
    if (!out)
        return body;
    if (!lost)
        return out;
    const made = type === 'webhook' ? { secret: null, secret_unavailable: true } : { body: '', suggestion: null, discarded: true };
    const raw = {};
    for (const f of Object.keys(made))
        raw[f] = b[f];
    return { ...out, ...made, [UNOPENED]: { raw, made } };
}
//# sourceMappingURL=sealing.js.map