// The workflow checkpoint, workflow.ckpt (storage-layout.md §17.1): what replaying workflow.log
// up to a point builds in memory (the lines, every entity's location, and the owners' compact
// indexes), so an open reads it and replays only the log's tail. It is a cache: the log stays
// the only authority, the commit point never names the checkpoint, and a checkpoint that is
// missing, damaged or not of the current log is rebuilt from the log (with a note), never a
// reason to refuse to open. The file names what it covers (the log's file generation, its
// committed length, and the CRC-32 of the last record inside it), and open checks that against
// the log. It changes when the checkpoint's layout changes, never with what the sections hold.
import { closeSync, openSync, readSync } from 'node:fs';
import { crc32 } from './binary.js';
import { MAGIC } from './layout.js';
/** 2: the header counts the covered upserts holding a sealed field in clear (§17.2); 3: and those holding a value sealed in format 1 with the store's key. An older file is rebuilt from the log. */
export const CHECKPOINT_VERSION = 3;
export const CHECKPOINT_HEADER_SIZE = 48;
/**
 * Layout (little-endian): magic `CAIRNWCK` (8) | version u16 | reserved u16 (0) | section count
 * u32 | log file generation u64 | covered length u64 | last record CRC u32 | upserts in clear u32 |
 * record count u64 | then per section: name length u16 | name (UTF-8) | payload length u32 |
 * payload | and last the CRC-32 of every byte before it (u32).
 */
export function encodeCheckpoint(cp) {
    const parts = [];
    const head = Buffer.alloc(CHECKPOINT_HEADER_SIZE);
    head.write(MAGIC.workflowCheckpoint, 0, 'ascii');
    head.writeUInt16LE(CHECKPOINT_VERSION, 8);
    head.writeUInt32LE(cp.sections.size, 12);
    head.writeBigUInt64LE(BigInt(cp.cover.log_file), 16);
    head.writeBigUInt64LE(BigInt(cp.cover.length), 24);
    head.writeUInt32LE(cp.cover.last_crc >>> 0, 32);
    head.writeUInt32LE(cp.cover.in_clear >>> 0, 36);
    head.writeBigUInt64LE(BigInt(cp.cover.records), 40);
    parts.push(head);
    for (const [name, payload] of cp.sections) {
        const n = Buffer.from(name, 'utf8');
        const h = Buffer.alloc(2 + n.length + 4);
        h.writeUInt16LE(n.length, 0);
        n.copy(h, 2);
        h.writeUInt32LE(payload.length, 2 + n.length);
        parts.push(h, payload);
    }
    const body = Buffer.concat(parts);
    const tail = Buffer.alloc(4);
    tail.writeUInt32LE(crc32(body), 0);
    return Buffer.concat([body, tail]);
}
/** Decode a checkpoint; throws an Error saying what is wrong (the caller rebuilds). */
export function decodeCheckpoint(data) {
    if (data.length < CHECKPOINT_HEADER_SIZE + 4)
        throw new Error(`${data.length} bytes, shorter than a checkpoint`);
    const body = data.subarray(0, data.length - 4);
    if (crc32(body) !== data.readUInt32LE(data.length - 4))
        throw new Error('checksum mismatch');
    if (body.toString('ascii', 0, 8) !== MAGIC.workflowCheckpoint)
        throw new Error('bad magic');
    const version = body.readUInt16LE(8);
    if (version !== CHECKPOINT_VERSION)
        throw new Error(`version ${version} is not ${CHECKPOINT_VERSION}`);
    if (body.readUInt16LE(10) !== 0)
        throw new Error('reserved bytes are not zero');
    const count = body.readUInt32LE(12);
    const cover = {
        log_file: Number(body.readBigUInt64LE(16)),
        length: Number(body.readBigUInt64LE(24)),
        last_crc: body.readUInt32LE(32),
        records: Number(body.readBigUInt64LE(40)),
        in_clear: body.readUInt32LE(36),
    };
    const sections = new Map();
    let at = CHECKPOINT_HEADER_SIZE;
    for (let i = 0; i < count; i++) {
        if (at + 2 > body.length)
            throw new Error('section header runs past the end');
        const n = body.readUInt16LE(at);
        if (at + 2 + n + 4 > body.length)
            throw new Error('section header runs past the end');
        const name = body.toString('utf8', at + 2, at + 2 + n);
        const len = body.readUInt32LE(at + 2 + n);
        const start = at + 2 + n + 4;
        if (start + len > body.length)
            throw new Error(`section ${name} runs past the end`);
        if (sections.has(name))
            throw new Error(`section ${name} appears twice`);
        sections.set(name, body.subarray(start, start + len));
        at = start + len;
    }
    if (at !== body.length)
        throw new Error(`${body.length - at} bytes after the last section`);
    return { cover, sections };
}
/** The version field of a checkpoint file whose magic is right (fsck tells an older version from damage); null otherwise. */
export function checkpointVersion(data) {
    return data.length >= CHECKPOINT_HEADER_SIZE && data.toString('ascii', 0, 8) === MAGIC.workflowCheckpoint ? data.readUInt16LE(8) : null;
}
/** The stored CRC field of the record that ends at `length` of the open log file `file` (0: none). */
export function lastRecordCrc(read, length, headerSize) {
    if (length <= headerSize)
        return 0;
    return read(length - 4, 4).readUInt32LE(0);
}
/** Read a checkpoint file whole; null when there is none. */
export function readCheckpointFile(file) {
    let fd;
    try {
        fd = openSync(file, 'r');
    }
    catch (err) {
        if (err.code === 'ENOENT')
            return null;
        throw err;
    }
    try {
        const chunks = [];
        for (;;) {
            const b = Buffer.allocUnsafe(4 * 1024 * 1024);
            const n = readSync(fd, b, 0, b.length, null);
            if (n === 0)
                break;
            chunks.push(b.subarray(0, n));
        }
        return Buffer.concat(chunks);
    }
    finally {
        closeSync(fd);
    }
}
// ------------------------------------------------------------ a small byte writer and reader for sections
export class SectionWriter {
    parts = [];
    u32(n) {
        const b = Buffer.alloc(4);
        b.writeUInt32LE(n >>> 0, 0);
        this.parts.push(b);
        return this;
    }
    bytes(b) {
        this.u32(b.byteLength);
        this.parts.push(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
        return this;
    }
    json(v) {
        return this.bytes(Buffer.from(JSON.stringify(v), 'utf8'));
    }
    string(s) {
        return this.bytes(Buffer.from(s, 'utf8'));
    }
    done() {
        return Buffer.concat(this.parts);
    }
}
export class SectionReader {
    buf;
    name;
    at = 0;
    constructor(buf, name) {
        this.buf = buf;
        this.name = name;
    }
    u32() {
        if (this.at + 4 > this.buf.length)
            throw new Error(`section ${this.name} ends early`);
        const n = this.buf.readUInt32LE(this.at);
        this.at += 4;
        return n;
    }
    bytes() {
        const n = this.u32();
        if (this.at + n > this.buf.length)
            throw new Error(`section ${this.name} ends early`);
        const b = this.buf.subarray(this.at, this.at + n);
        this.at += n;
        return b;
    }
    json() {
        try {
            return JSON.parse(this.bytes().toString('utf8'));
        }
        catch (err) {
            throw new Error(`section ${this.name}: ${err.message}`);
        }
    }
    string() {
        return this.bytes().toString('utf8');
    }
    /** A typed array copied out of the section (its bytes need not be aligned). */
    float64() {
        const b = this.bytes();
        if (b.length % 8)
            throw new Error(`section ${this.name}: an array of 8-byte numbers has ${b.length} bytes`);
        const out = new Float64Array(b.length / 8);
        Buffer.from(out.buffer).set(b);
        return out;
    }
    int32() {
        const b = this.bytes();
        if (b.length % 4)
            throw new Error(`section ${this.name}: an array of 4-byte numbers has ${b.length} bytes`);
        const out = new Int32Array(b.length / 4);
        Buffer.from(out.buffer).set(b);
        return out;
    }
    uint8() {
        return Uint8Array.from(this.bytes());
    }
    end() {
        if (this.at !== this.buf.length)
            throw new Error(`section ${this.name}: ${this.buf.length - this.at} bytes left over`);
    }
}
//# sourceMappingURL=workflow-checkpoint.js.map