// commit.bin: the single commit point of one authority (storage-layout.md §9). It names the
// committed length of every log the authority keeps and the segment files of every index, so a
// commit that appended to several logs and wrote several files becomes visible in one step: the
// write of one slot.
//
// The file holds two 4096-byte slots; commit G writes slot G % 2 in place (pwrite on an O_DSYNC fd),
// so the previous commit's slot is never touched while the next one is written (LMDB's two meta
// pages work the same way). Each slot's record fits in its first 512 bytes, one sector, and the
// rest of the slot stays zero. At open the valid slot with the higher generation is current; a
// slot that is all zeros was never written; a slot with any other content that fails its checks
// is damage and is reported, never skipped.
import { closeSync, constants as fsConstants, fdatasync, fstatSync, openSync, readSync, write } from 'node:fs';
import { promisify } from 'node:util';
import { Corrupt } from '../domain/errors.js';
import { crc32, readU64, writeU64 } from './binary.js';
import { faults } from './crash-point.js';
import { INDEX_NAMES, MAGIC } from './layout.js';
/** Written by this version; version 1 (no events log) is still read. */
export const COMMIT_FORMAT_VERSION = 2;
export const SLOT_SIZE = 4096;
export const RECORD_SIZE = 512;
export const COMMIT_FILE_SIZE = 2 * SLOT_SIZE;
/** At most this many segment files per index (a commit past it merges first). */
export const MAX_SEGMENTS = 14;
const OFF_GENERATION = 12;
const OFF_CRC = RECORD_SIZE - 4;
const V1 = {
    logs: ['snapshots', 'jobs', 'plans', 'workflow'],
    offLogs: 20, offSnapshotCount: 52, offLinesGen: 60, offSegmentCounts: 68, offSegments: 80, segmentSlots: 16,
    offLogFiles: 464, offEvents: null, offReserved: 496,
};
const V2 = {
    logs: ['snapshots', 'jobs', 'plans', 'workflow', 'events'],
    offLogs: 20, offSnapshotCount: 60, offLinesGen: 68, offSegmentCounts: 76, offSegments: 88, segmentSlots: MAX_SEGMENTS,
    offLogFiles: 424, offEvents: 464, offReserved: 480,
};
const LAYOUTS = { 1: V1, 2: V2 };
export function emptyCommitState() {
    return {
        generation: 0,
        logs: { snapshots: 0, jobs: 0, plans: 0, workflow: 0, events: 0 },
        log_files: { snapshots: 0, jobs: 0, plans: 0, workflow: 0, events: 0 },
        snapshot_count: 0,
        lines_gen: 0,
        segments: { blobs: [], trees: [], snapshots: [] },
        event_count: 0,
        last_event_at_us: 0,
    };
}
export function encodeCommitRecord(s) {
    // A store from before events.log may hold more segments than version 2 has slots for: until
    // the merge at open (ContentStore.open) brings them within MAX_SEGMENTS, and while it has no
    // event yet, its commit points stay in version 1.
    const L = INDEX_NAMES.some((name) => s.segments[name].length > V2.segmentSlots) && !hasEvents(s) ? V1 : V2;
    const out = Buffer.alloc(RECORD_SIZE);
    out.write(MAGIC.commitPoint, 0, 'ascii');
    out.writeUInt8(L === V1 ? 1 : COMMIT_FORMAT_VERSION, 8);
    writeU64(out, s.generation, OFF_GENERATION);
    L.logs.forEach((name, i) => writeU64(out, s.logs[name], L.offLogs + i * 8));
    writeU64(out, s.snapshot_count, L.offSnapshotCount);
    writeU64(out, s.lines_gen, L.offLinesGen);
    INDEX_NAMES.forEach((name, k) => {
        const list = s.segments[name];
        if (list.length > L.segmentSlots)
            throw new Error(`${name}: ${list.length} segments exceed ${L.segmentSlots}`);
        // A slot a reader would refuse is never written: the list must be strictly increasing.
        list.forEach((seg, j) => { if (seg <= 0 || (j > 0 && seg <= list[j - 1]))
            throw new Error(`${name}: segment list ${list.join(',')} is not strictly increasing`); });
        out.writeUInt32LE(list.length, L.offSegmentCounts + k * 4);
        list.forEach((seg, j) => writeU64(out, seg, L.offSegments + (k * L.segmentSlots + j) * 8));
    });
    L.logs.forEach((name, i) => writeU64(out, s.log_files[name], L.offLogFiles + i * 8));
    if (L.offEvents !== null) {
        writeU64(out, s.event_count, L.offEvents);
        writeU64(out, s.last_event_at_us, L.offEvents + 8);
    }
    out.writeUInt32LE(crc32(out.subarray(0, OFF_CRC)), OFF_CRC);
    return out;
}
/** Decode one slot (SLOT_SIZE bytes): null when it was never written (all zeros). */
/** Whether a state names anything of events.log (version 1 has no room for it). */
function hasEvents(s) {
    return s.event_count !== 0 || s.last_event_at_us !== 0 || s.logs.events !== 0 || s.log_files.events !== 0;
}
export function decodeCommitSlot(slot, what) {
    if (slot.length !== SLOT_SIZE)
        throw new Corrupt(`${what}: slot is ${slot.length} bytes, expected ${SLOT_SIZE}`);
    if (isZero(slot))
        return null;
    if (slot.toString('ascii', 0, 8) !== MAGIC.commitPoint)
        throw new Corrupt(`${what}: bad magic`);
    const L = LAYOUTS[slot.readUInt8(8)];
    if (!L)
        throw new Corrupt(`${what}: unsupported version ${slot.readUInt8(8)}`);
    if (slot.readUIntLE(9, 3) !== 0)
        throw new Corrupt(`${what}: reserved header bytes are not zero`);
    if (slot.readUInt32LE(OFF_CRC) !== crc32(slot.subarray(0, OFF_CRC)))
        throw new Corrupt(`${what}: checksum mismatch`);
    if (!isZero(slot.subarray(RECORD_SIZE)))
        throw new Corrupt(`${what}: bytes after the record are not zero`);
    const s = emptyCommitState();
    s.generation = readU64(slot, OFF_GENERATION);
    if (s.generation === 0)
        throw new Corrupt(`${what}: generation 0`);
    L.logs.forEach((name, i) => { s.logs[name] = readU64(slot, L.offLogs + i * 8); });
    s.snapshot_count = readU64(slot, L.offSnapshotCount);
    s.lines_gen = readU64(slot, L.offLinesGen);
    INDEX_NAMES.forEach((name, k) => {
        const count = slot.readUInt32LE(L.offSegmentCounts + k * 4);
        if (count > L.segmentSlots)
            throw new Corrupt(`${what}: ${name} has ${count} segments (at most ${L.segmentSlots})`);
        for (let j = 0; j < L.segmentSlots; j++) {
            const seg = readU64(slot, L.offSegments + (k * L.segmentSlots + j) * 8);
            if (j < count) {
                if (seg === 0 || (j > 0 && seg <= s.segments[name][j - 1]))
                    throw new Corrupt(`${what}: ${name} segment list is not increasing`);
                s.segments[name].push(seg);
            }
            else if (seg !== 0) {
                throw new Corrupt(`${what}: unused ${name} segment entries are not zero`);
            }
        }
    });
    L.logs.forEach((name, i) => { s.log_files[name] = readU64(slot, L.offLogFiles + i * 8); });
    if (L.offEvents !== null) {
        s.event_count = readU64(slot, L.offEvents);
        s.last_event_at_us = readU64(slot, L.offEvents + 8);
    }
    for (let at = L.offReserved; at < OFF_CRC; at++) {
        if (slot[at] !== 0)
            throw new Corrupt(`${what}: reserved bytes are not zero`);
    }
    return s;
}
function isZero(buf) {
    for (let i = 0; i < buf.length; i++)
        if (buf[i] !== 0)
            return false;
    return true;
}
/** Decode a whole commit.bin: the current state, or null when neither slot was ever written. */
export function decodeCommitFile(data) {
    if (data.length !== COMMIT_FILE_SIZE)
        throw new Corrupt(`commit.bin is ${data.length} bytes, expected ${COMMIT_FILE_SIZE}`);
    const a = decodeCommitSlot(data.subarray(0, SLOT_SIZE), 'commit.bin slot 0');
    const b = decodeCommitSlot(data.subarray(SLOT_SIZE), 'commit.bin slot 1');
    if (a && a.generation % 2 !== 0)
        throw new Corrupt('commit.bin slot 0 holds an odd generation');
    if (b && b.generation % 2 !== 1)
        throw new Corrupt('commit.bin slot 1 holds an even generation');
    if (!a)
        return b;
    if (!b)
        return a;
    if (Math.abs(a.generation - b.generation) !== 1)
        throw new Corrupt(`commit.bin slots hold generations ${a.generation} and ${b.generation}, not consecutive`);
    return a.generation > b.generation ? a : b;
}
const writeAsync = promisify(write);
const datasync = promisify(fdatasync);
/** The open commit.bin of one authority. Only ContentStore writes it. */
export class CommitPointFile {
    fd;
    constructor(fd) {
        this.fd = fd;
    }
    /** Open (creating a zeroed file when absent) and return the current state. */
    static open(file, create) {
        let fd;
        try {
            fd = openSync(file, fsConstants.O_RDWR | fsConstants.O_DSYNC);
        }
        catch (err) {
            if (err.code !== 'ENOENT' || !create)
                throw err;
            fd = openSync(file, 'w+', 0o644);
        }
        try {
            const size = fstatSync(fd).size;
            if (size === 0)
                return { point: new CommitPointFile(fd), state: null };
            const data = Buffer.alloc(size);
            readSync(fd, data, 0, size, 0);
            return { point: new CommitPointFile(fd), state: decodeCommitFile(data) };
        }
        catch (err) {
            closeSync(fd);
            throw err;
        }
    }
    /** Write the record of `state` into slot generation % 2 and make it durable: the commit point. */
    async write(state) {
        const record = encodeCommitRecord(state);
        const at = (state.generation % 2) * SLOT_SIZE;
        const { bytesWritten } = await writeAsync(this.fd, record, 0, record.length, at);
        if (bytesWritten !== record.length)
            throw new Error('short write of the commit point');
        // The file is open with O_DSYNC: the write above returned once the slot was durable.
        if (faults.failCommitPoint?.())
            throw Object.assign(new Error('injected EIO writing commit.bin'), { code: 'EIO' });
    }
    /** Extend a new file to its full size with zeros (both slots unwritten) and make it durable. */
    async initialize() {
        const zero = Buffer.alloc(COMMIT_FILE_SIZE);
        await writeAsync(this.fd, zero, 0, zero.length, 0);
        await datasync(this.fd);
    }
    close() {
        closeSync(this.fd);
    }
}
//# sourceMappingURL=commit-point.js.map