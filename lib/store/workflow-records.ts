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
import { FRAME_OVERHEAD, type LogFile } from './framed-log.js';
import type { Upsert } from './staging.js';
import { SectionReader, SectionWriter } from './workflow-checkpoint.js';

/** Ordinals per record a location can name (a compacted record holds one upsert). */
export const MAX_UPSERTS_PER_RECORD = 65_536;
const ORDINAL = MAX_UPSERTS_PER_RECORD;

export const packLocation = (offset: number, ordinal: number): number => offset * ORDINAL + ordinal;
export const locationOffset = (loc: number): number => Math.floor(loc / ORDINAL);
export const locationOrdinal = (loc: number): number => loc % ORDINAL;

/** Types whose ids are `<type>-<sequence>`: locations by sequence in a typed array. */
const DENSE_TYPES: ReadonlySet<string> = new Set(['task', 'change', 'land']);
const SEQ_RE = /^[a-z]+-([1-9][0-9]{0,9})$/;
/**
 * Other types whose ids are `<prefix>-<sequence>` (their locations stay in the Map, as the
 * checkpoint's `records` section has always held them): the highest sequence is tracked, since
 * with id floors (serve --lease) the count of entities is not the highest sequence.
 */
const SEQUENCED_TYPES: ReadonlyMap<string, string> = new Map([['land_queue_entry', 'lq'], ['history_promotion', 'promotion']]);

/** Sequence of a dense-type id (`task-12` → 12), or 0 when the id has another shape. */
export function denseSequence(type: string, id: string): number {
  if (!DENSE_TYPES.has(type) || !id.startsWith(type) || id.charCodeAt(type.length) !== 45 /* - */) return 0;
  const m = SEQ_RE.exec(id);
  if (!m) return 0;
  const n = Number(m[1]);
  return n <= 0x7fffffff ? n : 0;
}

/** A growable Float64Array of locations by sequence (0: absent; locations are never 0, the log header comes first). */
class DenseLocations {
  private locs = new Float64Array(1024);
  /** Highest sequence set. */
  max = 0;
  count = 0;

  get(seq: number): number {
    return seq < this.locs.length ? this.locs[seq] : 0;
  }

  set(seq: number, loc: number): void {
    if (seq >= this.locs.length) {
      let n = this.locs.length;
      while (n <= seq) n *= 2;
      const grown = new Float64Array(n);
      grown.set(this.locs);
      this.locs = grown;
    }
    if (this.locs[seq] === 0) this.count++;
    this.locs[seq] = loc;
    if (seq > this.max) this.max = seq;
  }

  bytes(): number {
    return this.locs.byteLength;
  }

  /** The array up to the highest sequence (a checkpoint's copy). */
  used(): Float64Array {
    return this.locs.subarray(0, this.max + 1);
  }

  /** Take `locs` (from a checkpoint) as the whole table. */
  adopt(locs: Float64Array): void {
    if (locs.length > 0 && locs[0] !== 0) throw new Error('a location at sequence 0');
    this.locs = new Float64Array(Math.max(1024, locs.length));
    this.locs.set(locs);
    this.max = 0;
    this.count = 0;
    for (let i = 1; i < locs.length; i++) {
      const loc = locs[i];
      if (loc === 0) continue;
      if (!Number.isSafeInteger(loc) || loc < 0) throw new Error(`location ${loc} is not a location`);
      this.count++;
      this.max = i;
    }
  }
}

/** Locations of one workflow entity type. */
class TypeLocations {
  readonly dense = new DenseLocations();
  /** Ids of other shapes, in first-upsert order. */
  readonly other = new Map<string, number>();
  /** Of a SEQUENCED_TYPES type: the highest sequence among `other`'s ids. */
  private otherHigh = 0;
  private readonly prefix: string | undefined;

  constructor(readonly type: string) {
    this.prefix = SEQUENCED_TYPES.get(type);
  }

  /** The highest sequence of an id `<type>-<sequence>` (dense types) or `<prefix>-<sequence>` (SEQUENCED_TYPES); 0: none. */
  get highest(): number {
    return this.prefix === undefined ? this.dense.max : this.otherHigh;
  }

  /** An id kept in the Map (an upsert, or a checkpoint's list). */
  setOther(id: string, loc: number): void {
    if (this.prefix !== undefined && !this.other.has(id) && id.startsWith(this.prefix) && id.charCodeAt(this.prefix.length) === 45 /* - */) {
      const m = SEQ_RE.exec(id);
      if (m) this.otherHigh = Math.max(this.otherHigh, Number(m[1]));
    }
    this.other.set(id, loc);
  }

  get(id: string): number | undefined {
    const seq = denseSequence(this.type, id);
    if (seq) {
      const loc = this.dense.get(seq);
      return loc === 0 ? undefined : loc;
    }
    return this.other.get(id);
  }

  set(id: string, loc: number): void {
    const seq = denseSequence(this.type, id);
    if (seq) this.dense.set(seq, loc);
    else this.setOther(id, loc);
  }

  get size(): number {
    return this.dense.count + this.other.size;
  }

  /** [id, location] of every entity: sequence order, then the others in first-upsert order. */
  *entries(): Generator<[string, number]> {
    for (let seq = 1; seq <= this.dense.max; seq++) {
      const loc = this.dense.get(seq);
      if (loc !== 0) yield [`${this.type}-${seq}`, loc];
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
  private readonly map = new Map<string, { body: unknown; size: number }>();
  private bytes = 0;

  constructor(private readonly capacity: number, private readonly maxBytes: number) {}

  get(key: string): unknown {
    const v = this.map.get(key);
    if (v === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, v);
    return v.body;
  }

  set(key: string, body: unknown, size: number): void {
    const old = this.map.get(key);
    if (old) {
      this.bytes -= old.size;
      this.map.delete(key);
    }
    if (size > this.maxBytes) return;
    this.map.set(key, { body, size });
    this.bytes += size;
    while (this.map.size > this.capacity || this.bytes > this.maxBytes) {
      const [k, v] = this.map.entries().next().value as [string, { size: number }];
      this.map.delete(k);
      this.bytes -= v.size;
    }
  }

  delete(key: string): void {
    const old = this.map.get(key);
    if (!old) return;
    this.bytes -= old.size;
    this.map.delete(key);
  }

  clear(): void {
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
  private types = new Map<string, TypeLocations>();
  private readonly cache = new BodyCache(BODY_CACHE_ENTRIES, BODY_CACHE_BYTES);
  /** Body bytes of the last record decoded, per upsert (the cache's size estimate of a body read from it). */
  private lastShare = 0;
  /** The last record decoded (a scan in location order reads each multi-upsert record once). */
  private lastRecord: { offset: number; upserts: Upsert[] } | null = null;

  constructor(private readonly log: () => LogFile) {}

  private typeOf(type: string): TypeLocations {
    let t = this.types.get(type);
    if (!t) this.types.set(type, (t = new TypeLocations(type)));
    return t;
  }

  /** Upsert `u` is the latest of its entity: at ordinal `ordinal` of the record at `offset`. */
  set(u: Upsert, offset: number, ordinal: number): void {
    if (ordinal >= MAX_UPSERTS_PER_RECORD) throw new Corrupt(`workflow.log: record at byte ${offset} holds more than ${MAX_UPSERTS_PER_RECORD} upserts`);
    this.typeOf(u.type).set(u.id, packLocation(offset, ordinal));
  }

  /** A committed upsert whose body the caller holds (a published batch, `share` bytes of its record): cached as the latest. */
  setPublished(u: Upsert, offset: number, ordinal: number, share: number): void {
    this.set(u, offset, ordinal);
    this.cache.set(`${u.type}\u0000${u.id}`, u.body, share);
  }

  location(type: string, id: string): number | undefined {
    return this.types.get(type)?.get(id);
  }

  has(type: string, id: string): boolean {
    return this.location(type, id) !== undefined;
  }

  count(type: string): number {
    return this.types.get(type)?.size ?? 0;
  }

  /**
   * The highest sequence of the ids `<prefix>-<sequence>` of `type` (`task`, `change`, `land`,
   * `land_queue_entry`, `history_promotion`); 0 when none. Above count(type) when an id floor
   * left a gap.
   */
  highestSequence(type: string): number {
    return this.types.get(type)?.highest ?? 0;
  }

  /** Live entities of every type. */
  liveCount(): number {
    let n = 0;
    for (const t of this.types.values()) n += t.size;
    return n;
  }

  typeNames(): string[] {
    return [...this.types.keys()];
  }

  /** The latest body of `(type, id)`, or undefined. */
  get<T>(type: string, id: string): T | undefined {
    const key = `${type}\u0000${id}`;
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached as T;
    const loc = this.location(type, id);
    if (loc === undefined) return undefined;
    const body = this.readAt(type, id, loc);
    this.cache.set(key, body, this.lastShare);
    return body as T;
  }

  /**
   * One entity for a long scan that yields between reads (the change search's build): its
   * location looked up now (a compaction may have moved it since the last read), read through
   * the read-ahead window, without filling the cache.
   */
  scanGet<T>(type: string, id: string): T | undefined {
    const cached = this.cache.get(`${type}\u0000${id}`);
    if (cached !== undefined) return cached as T;
    const loc = this.location(type, id);
    return loc === undefined ? undefined : (this.readAt(type, id, loc, true) as T);
  }

  /** [id, location] of every entity of `type`, in entries' order, reading nothing. */
  *locations(type: string): Generator<[string, number]> {
    const t = this.types.get(type);
    if (t) yield* t.entries();
  }

  /** Every entity of `type` with its body (dense types in sequence order), read from disk without filling the cache. */
  *entries<T>(type: string): Generator<[string, T]> {
    const t = this.types.get(type);
    if (!t) return;
    try {
      for (const [id, loc] of t.entries()) {
        const cached = this.cache.get(`${type}\u0000${id}`);
        yield [id, (cached !== undefined ? cached : this.readAt(type, id, loc, true)) as T];
      }
    } finally {
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
  liveBefore(end: number): Iterator<[string, string, number]> {
    const tables = [...this.types.values()].map((t) => ({ t, max: t.dense.max }));
    return (function* () {
      for (const { t, max } of tables) {
        for (let seq = 1; seq <= max; seq++) {
          const loc = t.dense.get(seq);
          if (loc !== 0 && locationOffset(loc) < end) yield [t.type, `${t.type}-${seq}`, loc] as [string, string, number];
        }
        for (const [id, loc] of t.other) if (locationOffset(loc) < end) yield [t.type, id, loc] as [string, string, number];
      }
    })();
  }

  /** What a body read from disk becomes (its sealed fields opened: lib/domain/sealing.ts); set by the store. recordAt stays raw. */
  open: (type: string, id: string, body: unknown) => unknown = (_type, _id, body) => body;

  /** The upsert at `loc`, checked to be of `(type, id)`. */
  private readAt(type: string, id: string, loc: number, scan = false): unknown {
    const offset = locationOffset(loc);
    const ordinal = locationOrdinal(loc);
    const upserts = this.recordAt(offset, scan);
    const u = upserts[ordinal];
    if (!u || u.type !== type || u.id !== id) throw new Corrupt(`workflow.log: record at byte ${offset} does not hold ${type} ${id} at upsert ${ordinal}`);
    return this.open(type, id, u.body);
  }

  /** The upserts of the record whose frame starts at `offset` (CRC checked). */
  recordAt(offset: number, scan = false): Upsert[] {
    if (this.lastRecord?.offset === offset) return this.lastRecord.upserts;
    const log = this.log();
    if (offset + FRAME_OVERHEAD > log.length) throw new Corrupt(`${log.name}: no record at byte ${offset} (committed length ${log.length})`);
    let head = this.bytesAt(log, offset, 4096, scan);
    const length = head.readUInt32LE(0);
    if (offset + FRAME_OVERHEAD + length > log.length) throw new Corrupt(`${log.name}: record at byte ${offset}: its length field (${length}) runs past the committed length ${log.length}`);
    if (head.length < FRAME_OVERHEAD + length) head = this.bytesAt(log, offset, FRAME_OVERHEAD + length, scan);
    const body = head.subarray(4, 4 + length);
    if (head.readUInt32LE(4 + length) !== crc32(body)) throw new Corrupt(`${log.name}: record at byte ${offset} fails its checksum`);
    let upserts: Upsert[];
    try {
      upserts = (JSON.parse(body.toString('utf8')) as { upserts: Upsert[] }).upserts;
      if (!Array.isArray(upserts)) throw new Error('no upserts');
    } catch (err) {
      throw new Corrupt(`${log.name}: record at byte ${offset} is not a transaction (${(err as Error).message})`);
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
  private bytesAt(log: LogFile, offset: number, want: number, scan: boolean): Buffer {
    const n = Math.min(want, log.length - offset);
    const w = this.window;
    if (w && w.log === log && offset >= w.start && offset + n <= w.start + w.bytes.length) return w.bytes.subarray(offset - w.start, offset - w.start + n);
    if (!scan) return log.read(offset, n);
    const bytes = log.read(offset, Math.min(Math.max(n, WINDOW), log.length - offset));
    this.window = { log, start: offset, bytes };
    return bytes.subarray(0, n);
  }

  private window: { log: LogFile; start: number; bytes: Buffer } | null = null;

  /** The log was replaced by a compaction: `fresh` holds every entity's new location. */
  replace(fresh: WorkflowRecords): void {
    this.types = fresh.types;
    this.lastRecord = null;
    this.window = null;
  }

  /** Forget every location (a replay starts over). */
  reset(): void {
    this.types = new Map();
    this.dropCache();
  }

  /** Forget decoded bodies (tests measure reads from disk). */
  dropCache(): void {
    this.cache.clear();
    this.lastRecord = null;
    this.window = null;
  }

  /** The location tables as a checkpoint section (workflow-checkpoint.ts). */
  encode(): Buffer {
    const w = new SectionWriter().u32(this.types.size);
    for (const [type, t] of this.types) w.string(type).bytes(t.dense.used()).json([...t.other]);
    return w.done();
  }

  /** Replace the tables by a checkpoint section's (throws when it does not decode). */
  decode(r: SectionReader): void {
    const types = new Map<string, TypeLocations>();
    const n = r.u32();
    for (let i = 0; i < n; i++) {
      const type = r.string();
      const t = new TypeLocations(type);
      t.dense.adopt(r.float64());
      const other = r.json<[string, number][]>();
      if (!Array.isArray(other)) throw new Error(`locations of ${type} are not a list`);
      for (const [id, loc] of other) {
        if (typeof id !== 'string' || !Number.isSafeInteger(loc) || loc <= 0) throw new Error(`a location of ${type} is malformed`);
        t.setOther(id, loc);
      }
      types.set(type, t);
    }
    this.types = types;
    this.lastRecord = null;
    this.window = null;
    this.cache.clear();
  }

  /** Bytes held by the location tables (the dense arrays and an estimate for the maps). */
  bytes(): number {
    let n = 0;
    for (const t of this.types.values()) n += t.dense.bytes() + t.other.size * 64;
    return n;
  }
}
