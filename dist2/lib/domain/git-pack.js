// git's pack format (git's Documentation/gitformat-pack.txt), the parts an exporter needs to write
// a pack of whole objects and offset deltas, and its version-2 index: an entry's header, an
// OFS_DELTA's distance to its base, a delta (copy and insert instructions), the .idx file. Pure
// functions: the object bytes go in unchanged, so an object's id is the same as a loose one's.
import { createHash } from 'node:crypto';
/** Pack entry types: the four object types, and a delta against an earlier entry of the same pack. */
export const PACK_OBJECT_TYPE = { commit: 1, tree: 2, blob: 3, tag: 4 };
export const PACK_OFS_DELTA = 6;
/** `PACK`, version 2, the number of entries. */
export function packHeader(count) {
    const b = Buffer.alloc(12);
    b.write('PACK', 0, 'latin1');
    b.writeUInt32BE(2, 4);
    b.writeUInt32BE(count, 8);
    return b;
}
/** An entry's header: its type and its (inflated) size, 4 bits then 7 bits a byte, low bits first. */
export function packEntryHeader(type, size) {
    const out = [];
    let byte = (type << 4) | (size % 16);
    let rest = Math.floor(size / 16);
    while (rest > 0) {
        out.push(byte | 0x80);
        byte = rest % 128;
        rest = Math.floor(rest / 128);
    }
    out.push(byte);
    return Buffer.from(out);
}
/** How far back an OFS_DELTA's base starts (git's offset encoding: big-endian 7-bit groups, each but the last minus one). */
export function ofsDeltaDistance(distance) {
    const out = [distance % 128];
    let rest = Math.floor(distance / 128);
    while (rest > 0) {
        rest -= 1;
        out.unshift(0x80 | (rest % 128));
        rest = Math.floor(rest / 128);
    }
    return Buffer.from(out);
}
/** Writes `n` as a delta header size (7 bits a byte, low first) at `at`; returns the end. */
function varint(n, out, at) {
    while (n >= 128) {
        out[at++] = 0x80 | (n % 128);
        n = Math.floor(n / 128);
    }
    out[at++] = n;
    return at;
}
/** Largest copy one instruction makes (git's own encoder never makes larger ones). */
const MAX_COPY = 0x10000;
/** Writes copy instructions for base bytes [offset, offset + size) at `at`; returns the end. */
function copy(offset, size, out, at) {
    while (size > 0) {
        const n = Math.min(size, MAX_COPY);
        const cmdAt = at++;
        let cmd = 0x80;
        for (let i = 0; i < 4; i++) {
            const byte = Math.floor(offset / 2 ** (8 * i)) & 0xff;
            if (byte !== 0) {
                cmd |= 1 << i;
                out[at++] = byte;
            }
        }
        for (let i = 0; i < 3; i++) {
            const byte = (n >>> (8 * i)) & 0xff;
            if (byte !== 0) {
                cmd |= 0x10 << i;
                out[at++] = byte;
            }
        }
        out[cmdAt] = cmd;
        offset += n;
        size -= n;
    }
    return at;
}
/** Smallest object worth a delta (git does not try below 50 bytes either). */
const MIN_DELTA_TARGET = 50;
/**
 * A delta that makes `target` from `base`: the bytes both share at the start and at the end are
 * copied from the base and the middle is inserted. Linear and cheap, and close to what git finds
 * for a tree with one entry changed or a file with one place edited. Null when it would not be at
 * most half the target (git's own bound), or when the base is too large to address.
 */
export function prefixSuffixDelta(base, target) {
    if (target.length < MIN_DELTA_TARGET || base.length === 0 || base.length > 0xffffffff)
        return null;
    const limit = Math.min(base.length, target.length);
    // The longest common prefix and suffix, by binary search over native comparisons (memcmp).
    let lo = 0;
    let hi = limit;
    while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1;
        if (target.compare(base, 0, mid, 0, mid) === 0)
            lo = mid;
        else
            hi = mid - 1;
    }
    const prefix = lo;
    lo = 0;
    hi = limit - prefix;
    while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1;
        if (target.compare(base, base.length - mid, base.length, target.length - mid, target.length) === 0)
            lo = mid;
        else
            hi = mid - 1;
    }
    const suffix = lo;
    const middle = target.length - prefix - suffix;
    // At most: two sizes of 5 bytes, 8 bytes a copy of up to 64 KiB, a length byte per 127 inserted.
    const most = 10 + 8 * (Math.ceil(prefix / MAX_COPY) + Math.ceil(suffix / MAX_COPY)) + middle + Math.ceil(middle / 127);
    if (most >= target.length / 2)
        return null;
    const out = Buffer.allocUnsafe(most);
    let at = varint(base.length, out, 0);
    at = varint(target.length, out, at);
    at = copy(0, prefix, out, at);
    for (let from = prefix; from < prefix + middle; from += 127) {
        const n = Math.min(127, prefix + middle - from);
        out[at++] = n;
        at += target.copy(out, at, from, from + n);
    }
    at = copy(base.length - suffix, suffix, out, at);
    return out.subarray(0, at);
}
/** Apply a delta to its base (git's patch_delta); what a reader of the pack does. Throws on a malformed delta. */
export function applyDelta(base, delta) {
    let at = 0;
    const read = () => {
        let n = 0;
        let shift = 1;
        for (;;) {
            if (at >= delta.length)
                throw new Error('delta: truncated size');
            const b = delta[at++];
            n += (b & 0x7f) * shift;
            shift *= 128;
            if (!(b & 0x80))
                return n;
        }
    };
    if (read() !== base.length)
        throw new Error('delta: base size differs');
    const out = Buffer.alloc(read());
    let pos = 0;
    while (at < delta.length) {
        const cmd = delta[at++];
        if (cmd & 0x80) {
            let offset = 0;
            let size = 0;
            for (let i = 0; i < 4; i++)
                if (cmd & (1 << i))
                    offset += delta[at++] * 2 ** (8 * i);
            for (let i = 0; i < 3; i++)
                if (cmd & (0x10 << i))
                    size += delta[at++] << (8 * i);
            if (size === 0)
                size = 0x10000;
            if (offset + size > base.length || pos + size > out.length)
                throw new Error('delta: copy out of bounds');
            base.copy(out, pos, offset, offset + size);
            pos += size;
        }
        else if (cmd > 0) {
            if (at + cmd > delta.length || pos + cmd > out.length)
                throw new Error('delta: insert out of bounds');
            delta.copy(out, pos, at, at + cmd);
            at += cmd;
            pos += cmd;
        }
        else {
            throw new Error('delta: reserved instruction 0');
        }
    }
    if (pos !== out.length)
        throw new Error('delta: result size differs');
    return out;
}
/** Adler-32 (RFC 1950), the checksum ending a zlib stream. */
export function adler32(data) {
    let a = 1;
    let b = 0;
    for (let at = 0; at < data.length;) {
        // 5552: the most bytes before b can pass 2^32 (zlib's NMAX).
        const end = Math.min(data.length, at + 5552);
        for (; at < end; at++) {
            a += data[at];
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    return ((b << 16) | a) >>> 0;
}
/**
 * `data` as a zlib stream of stored (uncompressed) deflate blocks: what a reader inflates like
 * any other, made with a copy and a checksum. For objects too small for deflate to shrink much
 * (most deltas), where a call into zlib would cost more than the object.
 */
export function storedZlib(data) {
    const blocks = Math.max(1, Math.ceil(data.length / 0xffff));
    const out = Buffer.allocUnsafe(2 + blocks * 5 + data.length + 4);
    // CMF 0x78 (deflate, 32 KiB window), FLG 0x01 (no dictionary, check bits: 0x7801 % 31 === 0).
    out[0] = 0x78;
    out[1] = 0x01;
    let at = 2;
    for (let i = 0; i < blocks; i++) {
        const start = i * 0xffff;
        const len = Math.min(0xffff, data.length - start);
        out[at] = i === blocks - 1 ? 1 : 0;
        out.writeUInt16LE(len, at + 1);
        out.writeUInt16LE(~len & 0xffff, at + 3);
        out.set(data.subarray(start, start + len), at + 5);
        at += 5 + len;
    }
    out.writeUInt32BE(adler32(data), at);
    return out;
}
/**
 * A version-2 .idx: magic and version, the fan-out table, the sorted names, their CRC-32s, their
 * offsets (those past 2 GiB through the table of 8-byte offsets), the pack's checksum, and the
 * index's own sha1.
 */
export function encodePackIndex(entries, packChecksum) {
    // Lower-case hex sorts as the bytes do.
    const sorted = [...entries].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const n = sorted.length;
    const large = sorted.filter((e) => e.offset >= 0x80000000).length;
    const out = Buffer.alloc(8 + 256 * 4 + n * 28 + large * 8 + 40);
    out.writeUInt32BE(0xff744f63, 0);
    out.writeUInt32BE(2, 4);
    let at = 8;
    let i = 0;
    for (let byte = 0; byte < 256; byte++) {
        while (i < n && Number.parseInt(sorted[i].id.slice(0, 2), 16) === byte)
            i++;
        out.writeUInt32BE(i, at);
        at += 4;
    }
    for (const e of sorted)
        at += out.write(e.id, at, 20, 'hex');
    for (const e of sorted)
        at = out.writeUInt32BE(e.crc32 >>> 0, at);
    let nextLarge = 0;
    const larges = [];
    for (const e of sorted) {
        if (e.offset >= 0x80000000) {
            at = out.writeUInt32BE((0x80000000 | nextLarge++) >>> 0, at);
            larges.push(e.offset);
        }
        else {
            at = out.writeUInt32BE(e.offset, at);
        }
    }
    for (const o of larges)
        at = out.writeBigUInt64BE(BigInt(o), at);
    at += packChecksum.copy(out, at, 0, 20);
    createHash('sha1').update(out.subarray(0, at)).digest().copy(out, at);
    return out;
}
//# sourceMappingURL=git-pack.js.map