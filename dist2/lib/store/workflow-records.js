// Where each workflow entity's latest body lives in workflow.log (storage-layout.md §17), and
// reading it back. The bodies stay on disk: memory holds one location per entity, the record's
// byte offset and the upsert's ordinal inside the record packed in one number
// (offset × 2^16 + ordinal). Entities whose ids are `<prefix>-<sequence>` (tasks, changes,
// lands) keep their locations in typed arrays indexed by sequence; other types in a Map. A read
// is a positional read of the record, its CRC check and JSON.parse, behind a bounded cache of
// decoded bodies. It changes when the in-memory form of entity locations or the read path of
// one entity changes, never with the log's format (framed-log.ts) or the commit pipeline.
import { Corrupt } from '../domain/errors.js';
import { crc32 } from './binary.js';
import { FRAME_OVERHEAD } from './framed-log.js';
import { SectionWriter } from './workflow-checkpoint.js';
/** Ordinals per record a location can name (a compacted record holds one upsert). */
export const MAX_UPSERTS_PER_RECORD = 65_536;
const ORDINAL = MAX_UPSERTS_PER_RECORD;
export const packLocation = (offset, ordinal) => offset * ORDINAL + ordinal;
export const locationOffset = (loc) => Math.floor(loc / ORDINAL);
export const locationOrdinal = (loc) => loc % ORDINAL;
/** Types whose ids are `<type>-<sequence>`: locations by sequence in a typed array. */
const DENSE_TYPES = new Set(['task', 'change', 'land']);
const SEQ_RE = /^[a-z]+-([1-9][0-9]{0,9})$/;
/** Sequence of a dense-type id (`task-12` → 12), or 0 when the id has another shape. */
export function denseSequence(type, id) {
    if (!DENSE_TYPES.has(type) || !id.startsWith(type) || id.charCodeAt(type.length) !== 45 /* - */)
        return 0;
    const m = SEQ_RE.exec(id);
    if (!m)
        return 0;
    const n = Number(m[1]);
    return n <= 0x7fffffff ? n : 0;
}
/** A growable Float64Array of locations by sequence (0: absent; locations are never 0, the log header comes first). */
class DenseLocations {
    locs = new Float64Array(1024);
    /** Highest sequence set. */
    max = 0;
    count = 0;
    get(seq) {
        return seq < this.locs.length ? this.locs[seq] : 0;
    }
    set(seq, loc) {
        if (seq >= this.locs.length) {
            let n = this.locs.length;
            while (n <= seq)
                n *= 2;
            const grown = new Float64Array(n);
            grown.set(this.locs);
            this.locs = grown;
        }
        if (this.locs[seq] === 0)
            this.count++;
        this.locs[seq] = loc;
        if (seq > this.max)
            this.max = seq;
    }
    bytes() {
        return this.locs.byteLength;
    }
    /** The array up to the highest sequence (a checkpoint's copy). */
    used() {
        return this.locs.subarray(0, this.max + 1);
    }
    /** Take `locs` (from a checkpoint) as the whole table. */
    adopt(locs) {
        if (locs.length > 0 && locs[0] !== 0)
            throw new Error('a location at sequence 0');
        this.locs = new Float64Array(Math.max(1024, locs.length));
        this.locs.set(locs);
        this.max = 0;
        this.count = 0;
        for (let i = 1; i < locs.length; i++) {
            const loc = locs[i];
            if (loc === 0)
                continue;
            if (!Number.isSafeInteger(loc) || loc < 0)
                throw new Error(`location ${loc} is not a location`);
            this.count++;
            this.max = i;
        }
    }
}
/** Locations of one workflow entity type. */
class TypeLocations {
    type;
    dense = new DenseLocations();
    /** Ids of other shapes, in first-upsert order. */
    other = new Map();
    constructor(type) {
        this.type = type;
    }
    get(id) {
        const seq = denseSequence(this.type, id);
        if (seq) {
            const loc = this.dense.get(seq);
            return loc === 0 ? undefined : loc;
        }
        return this.other.get(id);
    }
    set(id, loc) {
        const seq = denseSequence(this.type, id);
        if (seq)
            this.dense.set(seq, loc);
        else
            this.other.set(id, loc);
    }
    get size() {
        return this.dense.count + this.other.size;
    }
    /** [id, location] of every entity: sequence order, then the others in first-upsert order. */
    *entries() {
        for (let seq = 1; seq <= this.dense.max; seq++) {
            const loc = this.dense.get(seq);
            if (loc !== 0)
                yield [`${this.type}-${seq}`, loc];
        }
        yield* this.other;
    }
}
/**
 * Decoded bodies most recently read or written, least recently used first out: at most
 * `capacity` entries and about `maxBytes` of encoded JSON (a body's share of its record's bytes).
 * Bodies are shared with callers, who never mutate them.
 */
class BodyCache {
    capacity;
    maxBytes;
    map = new Map();
    bytes = 0;
    constructor(capacity, maxBytes) {
        this.capacity = capacity;
        this.maxBytes = maxBytes;
    }
    get(key) {
        const v = this.map.get(key);
        if (v === undefined)
            return undefined;
        this.map.delete(key);
        this.map.set(key, v);
        return v.body;
    }
    set(key, body, size) {
        const old = this.map.get(key);
        if (old) {
            this.bytes -= old.size;
            this.map.delete(key);
        }
        if (size > this.maxBytes)
            return;
        this.map.set(key, { body, size });
        this.bytes += size;
        while (this.map.size > this.capacity || this.bytes > this.maxBytes) {
            const [k, v] = this.map.entries().next().value;
            this.map.delete(k);
            this.bytes -= v.size;
        }
    }
    delete(key) {
        const old = this.map.get(key);
        if (!old)
            return;
        this.bytes -= old.size;
        this.map.delete(key);
    }
    clear() {
        this.map.clear();
        this.bytes = 0;
    }
}
export const BODY_CACHE_ENTRIES = 4096;
export const BODY_CACHE_BYTES = 16 * 1024 * 1024;
/** Read-ahead of a scan through the locations (entitiesOf). */
const WINDOW = 1024 * 1024;
/**
 * The locations of every live workflow entity (lines excepted: the published store keeps those
 * whole) and the reads through them. `log` returns the current workflow.log (a compaction
 * replaces it, and the locations with it).
 */
export class WorkflowRecords {
    log;
    types = new Map();
    cache = new BodyCache(BODY_CACHE_ENTRIES, BODY_CACHE_BYTES);
    /** Body bytes of the last record decoded, per upsert (the cache's size estimate of a body read from it). */
    lastShare = 0;
    /** The last record decoded (a scan in location order reads each multi-upsert record once). */
    lastRecord = null;
    constructor(log) {
        this.log = log;
    }
    typeOf(type) {
        let t = this.types.get(type);
        if (!t)
            this.types.set(type, (t = new TypeLocations(type)));
        return t;
    }
    /** Upsert `u` is the latest of its entity: at ordinal `ordinal` of the record at `offset`. */
    set(u, offset, ordinal) {
        if (ordinal >= MAX_UPSERTS_PER_RECORD)
            throw new Corrupt(`workflow.log: record at byte ${offset} holds more than ${MAX_UPSERTS_PER_RECORD} upserts`);
        this.typeOf(u.type).set(u.id, packLocation(offset, ordinal));
    }
    /** A committed upsert whose body the caller holds (a published batch, `share` bytes of its record): cached as the latest. */
    setPublished(u, offset, ordinal, share) {
        this.set(u, offset, ordinal);
        this.cache.set(`${u.type}\u0000${u.id}`, u.body, share);
    }
    location(type, id) {
        return this.types.get(type)?.get(id);
    }
    has(type, id) {
        return this.location(type, id) !== undefined;
    }
    count(type) {
        return this.types.get(type)?.size ?? 0;
    }
    /** Live entities of every type. */
    liveCount() {
        let n = 0;
        for (const t of this.types.values())
            n += t.size;
        return n;
    }
    typeNames() {
        return [...this.types.keys()];
    }
    /** The latest body of `(type, id)`, or undefined. */
    get(type, id) {
        const key = `${type}\u0000${id}`;
        const cached = this.cache.get(key);
        if (cached !== undefined)
            return cached;
        const loc = this.location(type, id);
        if (loc === undefined)
            return undefined;
        const body = this.readAt(type, id, loc);
        this.cache.set(key, body, this.lastShare);
        return body;
    }
    /**
     * One entity for a long scan that yields between reads (the change search's build): its
     * location looked up now (a compaction may have moved it since the last read), read through
     * the read-ahead window, without filling the cache.
     */
    scanGet(type, id) {
        const cached = this.cache.get(`${type}\u0000${id}`);
        if (cached !== undefined)
            return cached;
        const loc = this.location(type, id);
        return loc === undefined ? undefined : this.readAt(type, id, loc, true);
    }
    /** [id, location] of every entity of `type`, in entries' order, reading nothing. */
    *locations(type) {
        const t = this.types.get(type);
        if (t)
            yield* t.entries();
    }
    /** Every entity of `type` with its body (dense types in sequence order), read from disk without filling the cache. */
    *entries(type) {
        const t = this.types.get(type);
        if (!t)
            return;
        try {
            for (const [id, loc] of t.entries()) {
                const cached = this.cache.get(`${type}\u0000${id}`);
                yield [id, (cached !== undefined ? cached : this.readAt(type, id, loc, true))];
            }
        }
        finally {
            this.window = null;
        }
    }
    /**
     * [type, id, location] of every entity whose latest upsert is in a record before byte
     * `end`, for a compaction that consumes it while commits go on. The types and each dense
     * table's highest sequence are taken now (later entities lie at or beyond `end`); each
     * location is read when its entity is visited, so one that moved to `end` or beyond by then
     * is skipped. Maps iterate live (inserts are visited, then skipped; nothing is deleted), and
     * nothing is copied, whatever the number of entities.
     */
    liveBefore(end) {
        const tables = [...this.types.values()].map((t) => ({ t, max: t.dense.max }));
        return (function* () {
            for (const { t, max } of tables) {
                for (let seq = 1; seq <= max; seq++) {
                    const loc = t.dense.get(seq);
                    if (loc !== 0 && locationOffset(loc) < end)
                        yield [t.type, `${t.type}-${seq}`, loc];
                }
                for (const [id, loc] of t.other)
                    if (locationOffset(loc) < end)
                        yield [t.type, id, loc];
            }
        })();
    }
    /** What a body read from disk becomes (its sealed fields opened: lib/domain/sealing.ts); set by the store. recordAt stays raw. */
    open = (_type, _id, body) => body;
    /** The upsert at `loc`, checked to be of `(type, id)`. */
    readAt(type, id, loc, scan = false) {
        const offset = locationOffset(loc);
        const ordinal = locationOrdinal(loc);
        const upserts = this.recordAt(offset, scan);
        const u = upserts[ordinal];
        if (!u || u.type !== type || u.id !== id)
            throw new Corrupt(`workflow.log: record at byte ${offset} does not hold ${type} ${id} at upsert ${ordinal}`);
        return this.open(type, id, u.body);
    }
    /** The upserts of the record whose frame starts at `offset` (CRC checked). */
    recordAt(offset, scan = false) {
        if (this.lastRecord?.offset === offset)
            return this.lastRecord.upserts;
        const log = this.log();
        if (offset + FRAME_OVERHEAD > log.length)
            throw new Corrupt(`${log.name}: no record at byte ${offset} (committed length ${log.length})`);
        let head = this.bytesAt(log, offset, 4096, scan);
        const length = head.readUInt32LE(0);
        if (offset + FRAME_OVERHEAD + length > log.length)
            throw new Corrupt(`${log.name}: record at byte ${offset}: its length field (${length}) runs past the committed length ${log.length}`);
        if (head.length < FRAME_OVERHEAD + length)
            head = this.bytesAt(log, offset, FRAME_OVERHEAD + length, scan);
        const body = head.subarray(4, 4 + length);
        if (head.readUInt32LE(4 + length) !== crc32(body))
            throw new Corrupt(`${log.name}: record at byte ${offset} fails its checksum`);
        let upserts;
        try {
            upserts = JSON.parse(body.toString('utf8')).upserts;
            if (!Array.isArray(upserts))
                throw new Error('no upserts');
        }
        catch (err) {
            throw new Corrupt(`${log.name}: record at byte ${offset} is not a transaction (${err.message})`);
        }
        this.lastRecord = { offset, upserts };
        this.lastShare = Math.ceil(length / Math.max(1, upserts.length));
        return upserts;
    }
    /**
     * Up to `want` bytes at `offset` (fewer only at the committed end). A scan (entries in
     * location order) reads 1 MiB windows ahead and serves the next records from them; single
     * reads read only what they need.
     */
    bytesAt(log, offset, want, scan) {
        const n = Math.min(want, log.length - offset);
        const w = this.window;
        if (w && w.log === log && offset >= w.start && offset + n <= w.start + w.bytes.length)
            return w.bytes.subarray(offset - w.start, offset - w.start + n);
        if (!scan)
            return log.read(offset, n);
        const bytes = log.read(offset, Math.min(Math.max(n, WINDOW), log.length - offset));
        this.window = { log, start: offset, bytes };
        return bytes.subarray(0, n);
    }
    window = null;
    /** The log was replaced by a compaction: `fresh` holds every entity's new location. */
    replace(fresh) {
        this.types = fresh.types;
        this.lastRecord = null;
        this.window = null;
    }
    /** Forget every location (a replay starts over). */
    reset() {
        this.types = new Map();
        this.dropCache();
    }
    /** Forget decoded bodies (tests measure reads from disk). */
    dropCache() {
        this.cache.clear();
        this.lastRecord = null;
        this.window = null;
    }
    /** The location tables as a checkpoint section (workflow-checkpoint.ts). */
    encode() {
        const w = new SectionWriter().u32(this.types.size);
        for (const [type, t] of this.types)
            w.string(type).bytes(t.dense.used()).json([...t.other]);
        return w.done();
    }
    /** Replace the tables by a checkpoint section's (throws when it does not decode). */
    decode(r) {
        const types = new Map();
        const n = r.u32();
        for (let i = 0; i < n; i++) {
            const type = r.string();
            const t = new TypeLocations(type);
            t.dense.adopt(r.float64());
            const other = r.json();
            if (!Array.isArray(other))
                throw new Error(`locations of ${type} are not a list`);
            for (const [id, loc] of other) {
                if (typeof id !== 'string' || !Number.isSafeInteger(loc) || loc <= 0)
                    throw new Error(`a location of ${type} is malformed`);
                t.other.set(id, loc);
            }
            types.set(type, t);
        }
        this.types = types;
        this.lastRecord = null;
        this.window = null;
        this.cache.clear();
    }
    /** Bytes held by the location tables (the dense arrays and an estimate for the maps). */
    bytes() {
        let n = 0;
        for (const t of this.types.values())
            n += t.dense.bytes() + t.other.size * 64;
        return n;
    }
}
//# sourceMappingURL=workflow-records.js.map