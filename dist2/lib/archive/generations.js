// The archive's single-writer rule (storage-layout.md §20.3): every writer ships under a
// generation it claimed (`generations/<gen>`, one object per claim, the greatest is the current
// writer); a writer that sees a claim above its own stops. Where the store honours conditional
// writes, the claim is exclusive (put-if-absent) and the writer also holds a lease
// (`lease/<gen>/<epoch>`, renewed by creating the next epoch), so two processes shipping the
// same generation (a copied data directory) cannot both write.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { buffer } from 'node:stream/consumers';
import { ObjectStoreError, sha256Hex } from './object-store.js';
export const GENERATIONS_PREFIX = 'generations/';
export const LEASE_PREFIX = 'lease/';
/** The archive's identity, written once when it is first claimed: JSON `{"archive_id": "32 hex", "created_at": "ISO 8601"}`. */
export const ARCHIVE_ID_KEY = 'archive-id';
const ARCHIVE_ID_HEX = /^[0-9a-f]{32}$/;
const pad20 = (n) => n.toString().padStart(20, '0');
export const generationKey = (gen) => `${GENERATIONS_PREFIX}${pad20(gen)}`;
const leaseKey = (gen, epoch) => `${LEASE_PREFIX}${pad20(gen)}/${pad20(epoch)}`;
async function listAll(store, prefix, after) {
    const keys = [];
    let from = after;
    for (;;) {
        const page = await store.list(prefix, from ? { after: from } : {});
        keys.push(...page.objects.map((o) => o.key));
        if (!page.next)
            return keys;
        from = page.next;
    }
}
/** The archive's id, or null when none was written yet (an archive from before ids, or a new one). */
export async function readArchiveId(store) {
    let bytes;
    try {
        bytes = await buffer((await store.get(ARCHIVE_ID_KEY)).body);
    }
    catch (err) {
        if (err instanceof ObjectStoreError && err.kind === 'not-found')
            return null;
        throw err;
    }
    let id;
    try {
        id = JSON.parse(bytes.toString('utf8')).archive_id;
    }
    catch { /* reported below */ }
    if (typeof id !== 'string' || !ARCHIVE_ID_HEX.test(id))
        throw new ObjectStoreError('other', `the archive's ${ARCHIVE_ID_KEY} object is damaged: it holds no archive id`);
    return id;
}
/**
 * The archive's id, written now when there is none (put-if-absent where the store honours it;
 * elsewhere two first writers may both put, and both take what stands after: the read-back).
 */
export async function ensureArchiveId(store, conditional) {
    const found = await readArchiveId(store);
    if (found)
        return found;
    const id = randomBytes(16).toString('hex');
    const body = Buffer.from(`${JSON.stringify({ archive_id: id, created_at: new Date().toISOString() })}\n`);
    const options = { sha256: sha256Hex(body), size: body.length };
    if (conditional) {
        if ((await store.putIfAbsent(ARCHIVE_ID_KEY, body, options)) === 'created')
            return id;
    }
    else {
        await store.put(ARCHIVE_ID_KEY, body, options);
    }
    return (await readArchiveId(store)) ?? id;
}
/** The greatest claimed generation (0n: none). */
export async function newestGeneration(store, after) {
    let max = 0n;
    for (const key of await listAll(store, GENERATIONS_PREFIX, after !== undefined ? generationKey(after) : undefined)) {
        const m = /^generations\/([0-9]{20})$/.exec(key);
        if (m && BigInt(m[1]) > max)
            max = BigInt(m[1]);
    }
    return max;
}
/**
 * Claim the next generation (greatest + 1) for `reason` ('first' when no claim exists and the
 * caller asked for 'restore': a fresh archive). Exclusive with put-if-absent where the store
 * honours it; HEAD-then-put otherwise.
 */
export async function claimGeneration(store, reason, conditional) {
    for (let attempt = 0; attempt < 20; attempt++) {
        const newest = await newestGeneration(store);
        const generation = newest + 1n;
        const why = newest === 0n && reason !== 'promote' && reason !== 'reclaim' ? 'first' : reason === 'first' ? 'restore' : reason;
        const claim = { generation: Number(generation), claimed_at: new Date().toISOString(), host: hostname(), pid: process.pid, reason: why };
        const body = Buffer.from(JSON.stringify(claim));
        const options = { sha256: sha256Hex(body), size: body.length };
        const key = generationKey(generation);
        if (conditional) {
            if ((await store.putIfAbsent(key, body, options)) === 'created')
                return { generation, reason: why };
        }
        else if (!(await store.head(key))) {
            await store.put(key, body, options);
            return { generation, reason: why };
        }
    }
    throw new ObjectStoreError('other', 'could not claim an archive generation: other writers claimed every one tried');
}
/** A claim above `own`, or null: the HEAD of own + 1 (cheap, before each manifest). */
export async function newerClaim(store, own, listToo = false) {
    if (await store.head(generationKey(own + 1n)))
        return own + 1n;
    if (listToo) {
        const newest = await newestGeneration(store, own);
        if (newest > own)
            return newest;
    }
    return null;
}
/**
 * The writer's lease on its generation (stores with conditional writes only). Acquire waits for
 * another holder's lease to expire; `renew` creates the next epoch with put-if-absent, so a
 * second holder makes it fail (`lost`). `valid` is what a writer checks before each manifest.
 */
export class Lease {
    store;
    generation;
    seconds;
    epoch = 0n;
    expiresAt = 0;
    holder = randomBytes(12).toString('hex');
    lost = false;
    constructor(store, generation, seconds) {
        this.store = store;
        this.generation = generation;
        this.seconds = seconds;
    }
    /** The newest lease epoch of this generation and its body. */
    async newest() {
        const keys = await listAll(this.store, `${LEASE_PREFIX}${pad20(this.generation)}/`);
        const epochs = keys.map((k) => /\/([0-9]{20})$/.exec(k)?.[1]).filter((x) => !!x).map((x) => BigInt(x)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        for (let i = epochs.length - 1; i >= 0; i--) {
            try {
                const got = await this.store.get(leaseKey(this.generation, epochs[i]));
                return { epoch: epochs[i], body: JSON.parse((await buffer(got.body)).toString('utf8')) };
            }
            catch (err) {
                if (err.kind !== 'not-found')
                    throw err;
            }
        }
        return null;
    }
    /** Try once: true when held, false when another holder's lease is still live (its expiry in `waitUntil`). */
    async tryAcquire() {
        const newest = await this.newest();
        if (newest && newest.body.holder !== this.holder && Date.parse(newest.body.expires_at) > Date.now())
            return { held: false, until: newest.body.expires_at };
        return { held: await this.create((newest?.epoch ?? 0n) + 1n) };
    }
    async create(epoch) {
        const expires = Date.now() + this.seconds * 1000;
        const body = Buffer.from(JSON.stringify({ generation: Number(this.generation), epoch: Number(epoch), holder: this.holder, host: hostname(), pid: process.pid, expires_at: new Date(expires).toISOString() }));
        const outcome = await this.store.putIfAbsent(leaseKey(this.generation, epoch), body, { sha256: sha256Hex(body), size: body.length });
        if (outcome === 'exists')
            return false;
        const previous = this.epoch;
        this.epoch = epoch;
        this.expiresAt = expires;
        if (previous > 0n)
            await this.store.delete(leaseKey(this.generation, previous)).catch(() => { });
        return true;
    }
    /** Renew (the next epoch); false and `lost` when another holder created it first. */
    async renew() {
        if (this.lost)
            return false;
        if (!(await this.create(this.epoch + 1n))) {
            this.lost = true;
            return false;
        }
        return true;
    }
    /** Held with at least a third of its time left (renewing first when less is left). */
    async ensure() {
        if (this.lost)
            throw new ObjectStoreError('other', `the archive lease of generation ${this.generation} is held by another writer`);
        if (this.expiresAt - Date.now() < (this.seconds * 1000) / 3 && !(await this.renew())) {
            throw new ObjectStoreError('other', `the archive lease of generation ${this.generation} was taken by another writer`);
        }
    }
    get renewEveryMs() {
        return (this.seconds * 1000) / 3;
    }
}
//# sourceMappingURL=generations.js.map