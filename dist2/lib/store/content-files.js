// Codecs of the small per-authority content files (storage-layout.md §9–§11): state.bin (the
// commit point), lines.<gen>.bin and the snapshots.log record framing.
import { Corrupt } from '../domain/errors.js';
import { decodeEnvelope, encodeEnvelope, readU64, writeU64 } from './binary.js';
import { frameBody, LOG_HEADER_SIZE, logHeader } from './framed-log.js';
import { MAGIC } from './layout.js';
// ---------------------------------------------------------------- state.bin
export const STATE_MAGIC = MAGIC.legacyState;
export const STATE_BODY_SIZE = 64;
export const EMPTY_STATE = {
    generation: 0, blobs_idx_gen: 0, trees_idx_gen: 0, snapshots_idx_gen: 0, lines_gen: 0, snapshot_log_length: 0, snapshot_count: 0,
};
export function encodeState(s) {
    const body = Buffer.alloc(STATE_BODY_SIZE);
    writeU64(body, s.generation, 0);
    writeU64(body, s.blobs_idx_gen, 8);
    writeU64(body, s.trees_idx_gen, 16);
    writeU64(body, s.snapshots_idx_gen, 24);
    writeU64(body, s.lines_gen, 32);
    writeU64(body, s.snapshot_log_length, 40);
    writeU64(body, s.snapshot_count, 48);
    return encodeEnvelope(STATE_MAGIC, body);
}
export function decodeState(data) {
    const body = decodeEnvelope(STATE_MAGIC, data, 'state.bin');
    if (body.length !== STATE_BODY_SIZE)
        throw new Corrupt(`state.bin: body is ${body.length} bytes, expected ${STATE_BODY_SIZE}`);
    if (body.readBigUInt64LE(56) !== 0n)
        throw new Corrupt('state.bin: reserved bytes are not zero');
    return {
        generation: readU64(body, 0),
        blobs_idx_gen: readU64(body, 8),
        trees_idx_gen: readU64(body, 16),
        snapshots_idx_gen: readU64(body, 24),
        lines_gen: readU64(body, 32),
        snapshot_log_length: readU64(body, 40),
        snapshot_count: readU64(body, 48),
    };
}
// ---------------------------------------------------------------- lines.<gen>.bin
export const LINES_MAGIC = MAGIC.lines;
export const LINE_STATUS_ACTIVE = 1;
export const LINE_STATUS_ARCHIVED = 2;
const LINE_FIXED = 44; // name_length u16, status u8, has_head u8, head 32, updated_at_s u64
export function encodeLines(lines) {
    const sorted = [...lines].sort((a, b) => Buffer.compare(Buffer.from(a.name, 'utf8'), Buffer.from(b.name, 'utf8')));
    const parts = [];
    const count = Buffer.alloc(4);
    count.writeUInt32LE(sorted.length, 0);
    parts.push(count);
    for (const line of sorted) {
        const name = Buffer.from(line.name, 'utf8');
        const rec = Buffer.alloc(LINE_FIXED + name.length);
        rec.writeUInt16LE(name.length, 0);
        rec.writeUInt8(line.status === 'archived' ? LINE_STATUS_ARCHIVED : LINE_STATUS_ACTIVE, 2);
        rec.writeUInt8(line.head_snapshot_id ? 1 : 0, 3);
        if (line.head_snapshot_id)
            rec.write(line.head_snapshot_id, 4, 32, 'hex');
        writeU64(rec, line.updated_at_s, 36);
        name.copy(rec, LINE_FIXED);
        parts.push(rec);
    }
    return encodeEnvelope(LINES_MAGIC, Buffer.concat(parts));
}
export function decodeLines(data, what = 'lines file') {
    const body = decodeEnvelope(LINES_MAGIC, data, what);
    if (body.length < 4)
        throw new Corrupt(`${what}: body shorter than its count`);
    const count = body.readUInt32LE(0);
    const lines = [];
    let at = 4;
    for (let i = 0; i < count; i++) {
        if (at + LINE_FIXED > body.length)
            throw new Corrupt(`${what}: record ${i} is truncated`);
        const nameLength = body.readUInt16LE(at);
        const status = body.readUInt8(at + 2);
        const hasHead = body.readUInt8(at + 3);
        if (status !== LINE_STATUS_ACTIVE && status !== LINE_STATUS_ARCHIVED)
            throw new Corrupt(`${what}: record ${i} has status ${status}`);
        if (hasHead > 1)
            throw new Corrupt(`${what}: record ${i} has has_head ${hasHead}`);
        if (at + LINE_FIXED + nameLength > body.length)
            throw new Corrupt(`${what}: record ${i} name is truncated`);
        lines.push({
            name: body.toString('utf8', at + LINE_FIXED, at + LINE_FIXED + nameLength),
            status: status === LINE_STATUS_ARCHIVED ? 'archived' : 'active',
            head_snapshot_id: hasHead ? body.toString('hex', at + 4, at + 36) : null,
            updated_at_s: readU64(body, at + 36),
        });
        at += LINE_FIXED + nameLength;
    }
    if (at !== body.length)
        throw new Corrupt(`${what}: trailing bytes after ${count} records`);
    return lines;
}
// ---------------------------------------------------------------- snapshots.log
export const SNAPSHOT_LOG_MAGIC = MAGIC.snapshotsLog;
export const SNAPSHOT_LOG_HEADER = LOG_HEADER_SIZE;
export function snapshotLogHeader() {
    return logHeader(SNAPSHOT_LOG_MAGIC);
}
/** One log record: length u32, the canonical snapshot encoding, CRC-32 of the encoding. */
export function frameSnapshotRecord(canonical) {
    return frameBody(canonical);
}
//# sourceMappingURL=content-files.js.map