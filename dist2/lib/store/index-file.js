// Sorted binary-v0 index files (storage-layout.md §8): blob and tree locators, and the snapshot
// index. Fixed 64-byte entries sorted by id behind a 256-entry fanout table, as git's pack
// .idx: a lookup reads the fanout (cached) and binary-searches one fanout bucket with a few
// positional reads, so it is O(log n) and never loads the file. New entries are merged in by a
// streaming pass that writes a new file (never all in memory).
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { ID_BYTES } from '../domain/content.js';
import { Corrupt } from '../domain/errors.js';
import { FORMAT_VERSION, HEADER_SIZE, TRAILER_SIZE, readU64, writeU64 } from './binary.js';
import { writeFileDurableWith } from './durable.js';
import { MAGIC } from './layout.js';
export const INDEX_MAGIC = MAGIC.index;
export const INDEX_KIND_BLOB = 1;
export const INDEX_KIND_TREE = 2;
export const INDEX_KIND_SNAPSHOT = 3;
export const INDEX_ENTRY_SIZE = 64;
const FIXED = 12; // kind u8, reserved 3, pack_count u32, entry_count u32
const FANOUT_SIZE = 256 * 4;
/**
 * Lookups read entries in blocks of 4 KiB, cached process-wide (least recently used goes first)
 * up to 8,192 of them (32 MiB). Index files are immutable and each reader has its own serial in
 * the key, so a cached block is never stale; a closed reader's blocks just age out.
 */
const BLOCK_ENTRIES = 64;
let cachedBlocks = 8192;
const MAX_BLOCKS_PER_FILE = 2 ** 26; // 2^32 entries (the u32 count) / 64
const blockCache = new Map();
/** Set the block cache's capacity (tests exercise eviction); returns the previous one. */
export function setCachedIndexBlocks(blocks) {
    const previous = cachedBlocks;
    cachedBlocks = Math.max(1, blocks);
    while (blockCache.size > cachedBlocks)
        blockCache.delete(blockCache.keys().next().value);
    return previous;
}
/** Lookups are synchronous: one buffer holds the id being looked up. */
const idScratch = Buffer.alloc(ID_BYTES);
let nextSerial = 0;
/** The version an index of `kind` is written with: trees carry their expanded size from version 1 on. */
export function indexVersion(kind) {
    return kind === INDEX_KIND_TREE ? TREE_INDEX_VERSION : FORMAT_VERSION;
}
export const TREE_INDEX_VERSION = 1;
/** The largest expanded size a version-1 tree entry holds (u32); larger sizes are stored as this. */
export const MAX_RECORDED_SIZE = 0xffff_ffff;
/** `sized`: a version-1 tree entry, whose last 8 bytes are raw length u32 and expanded size u32. */
function encodeEntry(entry, out, at, sized) {
    out.write(entry.id, at, ID_BYTES, 'hex');
    out.writeUInt32LE(entry.a, at + 32);
    out.writeUInt32LE(entry.b, at + 36);
    writeU64(out, entry.c, at + 40);
    writeU64(out, entry.d, at + 48);
    if (sized) {
        out.writeUInt32LE(entry.e, at + 56);
        out.writeUInt32LE(Math.min(entry.f ?? 0, MAX_RECORDED_SIZE), at + 60);
    }
    else {
        writeU64(out, entry.e, at + 56);
    }
}
const EMPTY_BLOCK = Buffer.alloc(0);
function decodeEntry(buf, at, sized) {
    const entry = {
        id: buf.toString('hex', at, at + ID_BYTES),
        a: buf.readUInt32LE(at + 32),
        b: buf.readUInt32LE(at + 36),
        c: readU64(buf, at + 40),
        d: readU64(buf, at + 48),
        e: sized ? buf.readUInt32LE(at + 56) : readU64(buf, at + 56),
    };
    if (sized)
        entry.f = buf.readUInt32LE(at + 60);
    return entry;
}
export class IndexReader {
    path;
    fd;
    kind;
    packs;
    count;
    fanout;
    entriesAt;
    sized;
    constructor(path, fd, kind, packs, count, fanout, entriesAt, 
    /** A version-1 tree index: entries carry expanded sizes. */
    sized = false) {
        this.path = path;
        this.fd = fd;
        this.kind = kind;
        this.packs = packs;
        this.count = count;
        this.fanout = fanout;
        this.entriesAt = entriesAt;
        this.sized = sized;
    }
    /** Names this reader's blocks in the cache (below 2^27 readers per process keeps keys exact). */
    serial = nextSerial++;
    static empty(kind) {
        return new IndexReader(null, null, kind, [], 0, new Uint32Array(256), 0);
    }
    /** Open and check the header, fanout, pack table and size (the full CRC is checked by `verify`). */
    static open(path, kind) {
        const fd = openSync(path, 'r');
        try {
            const size = fstatSync(fd).size;
            const head = Buffer.alloc(HEADER_SIZE + FIXED + FANOUT_SIZE);
            if (size < head.length + TRAILER_SIZE || readSync(fd, head, 0, head.length, 0) !== head.length)
                throw new Corrupt(`${path}: shorter than an index header`);
            if (head.toString('ascii', 0, 8) !== INDEX_MAGIC)
                throw new Corrupt(`${path}: bad magic`);
            const version = head.readUInt8(8);
            // Version 1 exists for tree indexes only; version 0 of every kind is still read.
            if ((version !== FORMAT_VERSION && version !== indexVersion(kind)) || head.readUIntLE(9, 3) !== 0)
                throw new Corrupt(`${path}: bad version or reserved bytes`);
            const fileKind = head.readUInt8(12);
            if (fileKind !== kind)
                throw new Corrupt(`${path}: index kind ${fileKind}, expected ${kind}`);
            const packCount = head.readUInt32LE(16);
            const count = head.readUInt32LE(20);
            const fanout = new Uint32Array(256);
            for (let i = 0; i < 256; i++) {
                fanout[i] = head.readUInt32LE(24 + i * 4);
                if (i > 0 && fanout[i] < fanout[i - 1])
                    throw new Corrupt(`${path}: fanout is not monotonic`);
            }
            if (fanout[255] !== count)
                throw new Corrupt(`${path}: fanout total ${fanout[255]} disagrees with entry count ${count}`);
            const packsAt = head.length;
            const entriesAt = packsAt + packCount * ID_BYTES;
            if (size !== entriesAt + count * INDEX_ENTRY_SIZE + TRAILER_SIZE)
                throw new Corrupt(`${path}: size ${size} disagrees with its header`);
            const packTable = Buffer.alloc(packCount * ID_BYTES);
            readSync(fd, packTable, 0, packTable.length, packsAt);
            const packs = [];
            for (let i = 0; i < packCount; i++)
                packs.push(packTable.toString('hex', i * ID_BYTES, (i + 1) * ID_BYTES));
            return new IndexReader(path, fd, kind, packs, count, fanout, entriesAt, kind === INDEX_KIND_TREE && version === TREE_INDEX_VERSION);
        }
        catch (err) {
            closeSync(fd);
            throw err;
        }
    }
    close() {
        if (this.fd !== null)
            closeSync(this.fd);
    }
    lookup(id) {
        const at = this.find(id);
        return at < 0 ? null : decodeEntry(this.found, at, this.sized);
    }
    /** `lookup`, with the pack id the entry's ordinal names ('' in the snapshot index). */
    lookupWithPack(id) {
        const at = this.find(id);
        if (at < 0)
            return null;
        const e = decodeEntry(this.found, at, this.sized);
        return { ...e, pack_id: this.kind === INDEX_KIND_SNAPSHOT ? '' : this.packs[e.a] };
    }
    /** The block `find` last found an entry in. */
    found = null;
    /**
     * Binary search within the id's fanout bucket over 4 KiB blocks of entries, each read once and
     * then kept in a process-wide LRU (index files never change once written): a bulk manifest or
     * listing looks up thousands of ids, and a read costs a system call each. Returns the entry's
     * byte offset in `this.found`, or -1.
     */
    find(id) {
        if (this.count === 0)
            return -1;
        // An id that is not 64 hex characters never matches.
        if (id.length !== 2 * ID_BYTES)
            return -1;
        const target = idScratch;
        if (target.write(id, 0, ID_BYTES, 'hex') !== ID_BYTES)
            return -1;
        const first = target[0];
        let lo = first === 0 ? 0 : this.fanout[first - 1];
        let hi = this.fanout[first];
        // A bucket mostly lies within one or two blocks: consecutive probes into the same block
        // fetch it (and touch it in the LRU) once, not once per probe.
        let blockNo = -1;
        let block = EMPTY_BLOCK;
        while (lo < hi) {
            const mid = (lo + hi) >>> 1;
            const n = Math.floor(mid / BLOCK_ENTRIES);
            if (n !== blockNo) {
                block = this.block(n);
                blockNo = n;
            }
            const at = (mid % BLOCK_ENTRIES) * INDEX_ENTRY_SIZE;
            // Byte by byte in JS: ids differ within a byte or two, and a native compare costs a call.
            let cmp = 0;
            for (let i = 0; i < ID_BYTES && cmp === 0; i++)
                cmp = block[at + i] - target[i];
            if (cmp === 0) {
                this.found = block;
                return at;
            }
            if (cmp < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        return -1;
    }
    /** Entries [n × BLOCK_ENTRIES, …) of this file, from the block cache or one read. */
    block(n) {
        const key = this.serial * MAX_BLOCKS_PER_FILE + n;
        let block = blockCache.get(key);
        if (block) {
            blockCache.delete(key);
            blockCache.set(key, block);
            return block;
        }
        const entries = Math.min(BLOCK_ENTRIES, this.count - n * BLOCK_ENTRIES);
        block = Buffer.allocUnsafeSlow(entries * INDEX_ENTRY_SIZE);
        if (readSync(this.fd, block, 0, block.length, this.entriesAt + n * BLOCK_ENTRIES * INDEX_ENTRY_SIZE) !== block.length) {
            throw new Corrupt(`${this.path}: short read`);
        }
        blockCache.set(key, block);
        while (blockCache.size > cachedBlocks)
            blockCache.delete(blockCache.keys().next().value);
        return block;
    }
    /** Number of entries whose id starts with byte `b`. */
    bucketSize(b) {
        return this.fanout[b] - (b === 0 ? 0 : this.fanout[b - 1]);
    }
    has(id) {
        return this.find(id) >= 0;
    }
    /** A tree's recorded expanded size without decoding its entry: null when absent, 0 when not recorded. */
    expandedOf(id) {
        const at = this.find(id);
        if (at < 0)
            return null;
        return this.sized ? this.found.readUInt32LE(at + 60) : 0;
    }
    /** Every entry in id order, read in 4 MiB chunks. */
    *entries() {
        const perChunk = 65536;
        const buf = Buffer.alloc(perChunk * INDEX_ENTRY_SIZE);
        for (let start = 0; start < this.count; start += perChunk) {
            const n = Math.min(perChunk, this.count - start);
            readSync(this.fd, buf, 0, n * INDEX_ENTRY_SIZE, this.entriesAt + start * INDEX_ENTRY_SIZE);
            for (let i = 0; i < n; i++)
                yield decodeEntry(buf, i * INDEX_ENTRY_SIZE, this.sized);
        }
    }
    /** Check the whole-file CRC (a full read). */
    verify() {
        if (this.fd === null)
            return;
        const size = fstatSync(this.fd).size;
        const chunk = Buffer.alloc(4 * 1024 * 1024);
        let crc = 0;
        let pos = 0;
        const end = size - TRAILER_SIZE;
        while (pos < end) {
            const n = readSync(this.fd, chunk, 0, Math.min(chunk.length, end - pos), pos);
            crc = crc32(chunk.subarray(0, n), crc);
            pos += n;
        }
        const trailer = Buffer.alloc(4);
        readSync(this.fd, trailer, 0, 4, end);
        if (trailer.readUInt32LE(0) !== crc)
            throw new Corrupt(`${this.path}: checksum mismatch`);
    }
}
/**
 * Write an index file at `target` (durably: temp, fsync, rename, fsync dir) from entries
 * given in id order, unique. `buckets[b]` is the number of entries whose id starts with byte b;
 * `packs` the pack table the entries' `a` ordinals point into. Streams: never all in memory.
 */
export async function writeIndexFile(target, kind, packs, buckets, entries) {
    let count = 0;
    for (let i = 0; i < 256; i++)
        count += buckets[i];
    const head = Buffer.alloc(HEADER_SIZE + FIXED + FANOUT_SIZE + packs.length * ID_BYTES);
    head.write(INDEX_MAGIC, 0, 'ascii');
    head.writeUInt8(indexVersion(kind), 8);
    const sized = indexVersion(kind) === TREE_INDEX_VERSION;
    head.writeUInt8(kind, 12);
    head.writeUInt32LE(packs.length, 16);
    head.writeUInt32LE(count, 20);
    let running = 0;
    for (let i = 0; i < 256; i++) {
        running += buckets[i];
        head.writeUInt32LE(running, 24 + i * 4);
    }
    packs.forEach((p, i) => head.write(p, HEADER_SIZE + FIXED + FANOUT_SIZE + i * ID_BYTES, ID_BYTES, 'hex'));
    await writeFileDurableWith(target, async (handle) => {
        let crc = crc32(head);
        await handle.write(head);
        const chunkEntries = 16384;
        const chunk = Buffer.alloc(chunkEntries * INDEX_ENTRY_SIZE);
        let filled = 0;
        let written = 0;
        let previous = '';
        const flush = async () => {
            if (filled === 0)
                return;
            const part = chunk.subarray(0, filled * INDEX_ENTRY_SIZE);
            crc = crc32(part, crc);
            await handle.write(part);
            filled = 0;
        };
        for (const e of entries) {
            if (e.id <= previous)
                throw new Error(`index entries must be sorted and unique (${e.id} after ${previous})`);
            previous = e.id;
            encodeEntry(e, chunk, filled * INDEX_ENTRY_SIZE, sized);
            written++;
            if (++filled === chunkEntries)
                await flush();
        }
        await flush();
        if (written !== count)
            throw new Error(`index writer got ${written} entries, its fanout says ${count}`);
        const trailer = Buffer.alloc(4);
        trailer.writeUInt32LE(crc >>> 0, 0);
        await handle.write(trailer);
    });
}
/** A k-way merge of id-sorted entry streams, in id order, naming the stream each entry came from. */
function* mergeById(streams) {
    const heads = streams.map((it) => it.next());
    for (;;) {
        let best = -1;
        for (let i = 0; i < heads.length; i++) {
            const h = heads[i];
            if (!h.done && (best < 0 || h.value.id < heads[best].value.id))
                best = i;
        }
        if (best < 0)
            return;
        yield { source: best, entry: heads[best].value };
        heads[best] = streams[best].next();
    }
}
function bucketOf(id) {
    return Number.parseInt(id.slice(0, 2), 16);
}
/**
 * Write a segment holding `rows` (any order, unique ids), with its own pack table in first-use
 * order. Used for the small per-commit segments and for a rebuild from packs.
 */
export async function writeSegment(target, kind, rows) {
    const packs = [];
    const ordinal = new Map();
    const buckets = new Uint32Array(256);
    const entries = rows.map((r) => {
        let a = r.a;
        if (kind !== INDEX_KIND_SNAPSHOT) {
            let o = ordinal.get(r.pack_id);
            if (o === undefined) {
                o = packs.length;
                packs.push(r.pack_id);
                ordinal.set(r.pack_id, o);
            }
            a = o;
        }
        buckets[bucketOf(r.id)]++;
        return { id: r.id, a, b: r.b, c: r.c, d: r.d, e: r.e, f: r.f };
    }).sort((x, y) => (x.id < y.id ? -1 : 1));
    await writeIndexFile(target, kind, packs, buckets, entries);
}
/**
 * Merge segments (oldest first) into one file: a k-way merge in id order with pack ordinals
 * remapped into the union of their pack tables. Reads the segments' immutable files only, so it
 * can run while commits go on.
 */
export async function writeMergedSegments(target, kind, readers) {
    const packs = [];
    const ordinal = new Map();
    const remap = readers.map((r) => r.packs.map((p) => {
        let o = ordinal.get(p);
        if (o === undefined) {
            o = packs.length;
            packs.push(p);
            ordinal.set(p, o);
        }
        return o;
    }));
    const buckets = new Uint32Array(256);
    for (const r of readers)
        for (let b = 0; b < 256; b++)
            buckets[b] += r.bucketSize(b);
    function* merged() {
        for (const { source, entry } of mergeById(readers.map((r) => r.entries())))
            yield kind === INDEX_KIND_SNAPSHOT ? entry : { ...entry, a: remap[source][entry.a] };
    }
    await writeIndexFile(target, kind, packs, buckets, merged());
}
/**
 * Write a new index file holding the entries of `base` plus `added` (sorted by id, none already
 * in `base`); `packs` must extend `base.packs`. Kept for the golden-fixture tests.
 */
export async function writeMergedIndex(target, base, added, packs) {
    for (let i = 0; i < base.packs.length; i++) {
        if (packs[i] !== base.packs[i])
            throw new Error('new pack table must extend the old one');
    }
    const buckets = new Uint32Array(256);
    for (let i = 0; i < 256; i++)
        buckets[i] = base.bucketSize(i);
    for (const e of added)
        buckets[bucketOf(e.id)]++;
    function* merged() {
        let j = 0;
        for (const e of base.entries()) {
            while (j < added.length && added[j].id < e.id)
                yield added[j++];
            if (j < added.length && added[j].id === e.id)
                throw new Error(`index already holds ${e.id}`);
            yield e;
        }
        while (j < added.length)
            yield added[j++];
    }
    await writeIndexFile(target, base.kind, packs, buckets, merged());
}
/**
 * The segments of one index, oldest first. A lookup asks the newest segment first; an id is in
 * at most one segment (a commit never adds an id the index holds).
 */
export class SegmentedIndex {
    kind;
    segments;
    constructor(kind, segments) {
        this.kind = kind;
        this.segments = segments;
    }
    static empty(kind) {
        return new SegmentedIndex(kind, []);
    }
    get count() {
        let n = 0;
        for (const s of this.segments)
            n += s.reader.count;
        return n;
    }
    lookup(id) {
        for (let i = this.segments.length - 1; i >= 0; i--) {
            const e = this.segments[i].reader.lookupWithPack(id);
            if (e)
                return e;
        }
        return null;
    }
    has(id) {
        for (let i = this.segments.length - 1; i >= 0; i--)
            if (this.segments[i].reader.has(id))
                return true;
        return false;
    }
    /** A tree's recorded expanded size (IndexReader.expandedOf): null when absent, 0 when not recorded. */
    expandedOf(id) {
        for (let i = this.segments.length - 1; i >= 0; i--) {
            const size = this.segments[i].reader.expandedOf(id);
            if (size !== null)
                return size;
        }
        return null;
    }
    /** Every entry in id order (a k-way merge of the segments). */
    *entries() {
        for (const { source, entry } of mergeById(this.segments.map((s) => s.reader.entries()))) {
            yield { ...entry, pack_id: this.kind === INDEX_KIND_SNAPSHOT ? '' : this.segments[source].reader.packs[entry.a] };
        }
    }
    /** Pack ids any segment's pack table names. */
    packIds() {
        const out = new Set();
        for (const s of this.segments)
            for (const p of s.reader.packs)
                out.add(p);
        return out;
    }
    verify() {
        for (const s of this.segments)
            s.reader.verify();
    }
    close() {
        for (const s of this.segments)
            s.reader.close();
    }
}
//# sourceMappingURL=index-file.js.map