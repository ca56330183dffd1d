// binary-v0: the envelope shared by every binary file cairn writes (storage-layout.md §2).
//
//   offset  size  field
//   0       8     magic, ASCII, names the file kind (e.g. "CAIRNREG")
//   8       1     format version, 0
//   9       3     reserved, zero
//   12      n     body (kind-specific, fixed-width little-endian fields)
//   12+n    4     CRC-32 (IEEE, zlib) of bytes [0, 12+n), little-endian
//
// Decoders check each of these and fail with a Corrupt error that names the broken check.
import { crc32 } from 'node:zlib';
import { Corrupt } from '../domain/errors.js';
export const HEADER_SIZE = 12;
export const TRAILER_SIZE = 4;
export const FORMAT_VERSION = 0;
export function encodeEnvelope(magic, body) {
    if (Buffer.byteLength(magic, 'ascii') !== 8)
        throw new Error(`magic must be 8 ASCII bytes: ${magic}`);
    const out = Buffer.alloc(HEADER_SIZE + body.length + TRAILER_SIZE);
    out.write(magic, 0, 'ascii');
    out.writeUInt8(FORMAT_VERSION, 8);
    Buffer.from(body.buffer, body.byteOffset, body.byteLength).copy(out, HEADER_SIZE);
    out.writeUInt32LE(crc32(out.subarray(0, HEADER_SIZE + body.length)), HEADER_SIZE + body.length);
    return out;
}
/** Check magic, version, reserved bytes and checksum; return the body. `what` names the file in errors. */
export function decodeEnvelope(magic, data, what) {
    if (data.length < HEADER_SIZE + TRAILER_SIZE)
        throw new Corrupt(`${what}: file is shorter than the binary-v0 header and trailer (${data.length} bytes)`);
    if (data.toString('ascii', 0, 8) !== magic)
        throw new Corrupt(`${what}: bad magic (expected ${magic})`);
    const version = data.readUInt8(8);
    if (version !== FORMAT_VERSION)
        throw new Corrupt(`${what}: unsupported format version ${version}`);
    if (data.readUIntLE(9, 3) !== 0)
        throw new Corrupt(`${what}: reserved header bytes are not zero`);
    const end = data.length - TRAILER_SIZE;
    const stored = data.readUInt32LE(end);
    const actual = crc32(data.subarray(0, end));
    if (stored !== actual)
        throw new Corrupt(`${what}: checksum mismatch (stored ${hex32(stored)}, computed ${hex32(actual)})`);
    return data.subarray(HEADER_SIZE, end);
}
export function hex32(n) {
    return n.toString(16).padStart(8, '0');
}
/** u64 seconds as a JS number; cairn's times fit in 2^53. */
export function readU64(buf, offset) {
    // Two u32 halves, no BigInt (index entries and pack headers decode many of these).
    const low = buf.readUInt32LE(offset);
    const high = buf.readUInt32LE(offset + 4);
    if (high > 0x1fffff)
        throw new Corrupt(`u64 field at ${offset} exceeds 2^53`);
    return high * 0x100000000 + low;
}
export function writeU64(buf, value, offset) {
    if (Number.isSafeInteger(value) && value >= 0) {
        // Two u32 halves, no BigInt (index segments encode three per entry).
        buf.writeUInt32LE(value % 0x100000000, offset);
        buf.writeUInt32LE(Math.floor(value / 0x100000000), offset + 4);
        return;
    }
    buf.writeBigUInt64LE(BigInt(value), offset); // throws for what a u64 cannot hold, as before
}
export { crc32 };
//# sourceMappingURL=binary.js.map