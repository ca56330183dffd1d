// registry.bin: every repository record ever registered, as fixed-width binary-v0 records plus a
// name store (storage-layout.md §4). The whole file is small and rewritten atomically on every
// change, so a reader sees the old registry or the new one, never a torn mix.
import { Corrupt } from '../domain/errors.js';
import { crc32, decodeEnvelope, encodeEnvelope, readU64, writeU64 } from './binary.js';
import { MAGIC } from './layout.js';
export const REGISTRY_MAGIC = MAGIC.registry;
export const REGISTRY_HEADER_SIZE = 8; // record_count u32, name_store_length u32
export const REGISTRY_RECORD_SIZE = 40;
export function encodeRegistry(records) {
    const names = [];
    let nameOffset = 0;
    const recordBytes = Buffer.alloc(records.length * REGISTRY_RECORD_SIZE);
    records.forEach((r, i) => {
        const name = Buffer.from(r.repository_name, 'utf8');
        const at = i * REGISTRY_RECORD_SIZE;
        recordBytes.writeUInt32LE(r.repository_index, at);
        recordBytes.writeUInt8(r.lifecycle_kind, at + 4);
        recordBytes.write(r.namespace.padEnd(2, '\0'), at + 5, 2, 'latin1');
        recordBytes.writeUInt8(r.policy_flags, at + 7);
        writeU64(recordBytes, r.created_at_s, at + 8);
        writeU64(recordBytes, r.updated_at_s, at + 16);
        recordBytes.writeUInt8(r.tombstoned ? 1 : 0, at + 24);
        // bytes 25..27 reserved, zero
        recordBytes.writeUInt32LE(nameOffset, at + 28);
        recordBytes.writeUInt32LE(name.length, at + 32);
        recordBytes.writeUInt32LE(crc32(recordBytes.subarray(at, at + 36)), at + 36);
        names.push(name);
        nameOffset += name.length;
    });
    const header = Buffer.alloc(REGISTRY_HEADER_SIZE);
    header.writeUInt32LE(records.length, 0);
    header.writeUInt32LE(nameOffset, 4);
    return encodeEnvelope(REGISTRY_MAGIC, Buffer.concat([header, recordBytes, ...names]));
}
/**
 * One repository's record as the archive ships it (storage-layout.md §20.1): the 40-byte record
 * with name_offset 0, followed by the UTF-8 name.
 */
export function encodeRegistryRecord(r) {
    const one = encodeRegistry([r]);
    const body = decodeEnvelope(REGISTRY_MAGIC, one, 'registry record');
    return Buffer.from(body.subarray(REGISTRY_HEADER_SIZE));
}
export function decodeRegistry(data) {
    const body = decodeEnvelope(REGISTRY_MAGIC, data, 'registry.bin');
    if (body.length < REGISTRY_HEADER_SIZE)
        throw new Corrupt('registry.bin: body shorter than its header');
    const count = body.readUInt32LE(0);
    const nameStoreLength = body.readUInt32LE(4);
    const recordsEnd = REGISTRY_HEADER_SIZE + count * REGISTRY_RECORD_SIZE;
    if (body.length !== recordsEnd + nameStoreLength) {
        throw new Corrupt(`registry.bin: body is ${body.length} bytes, header promises ${recordsEnd + nameStoreLength}`);
    }
    const names = body.subarray(recordsEnd);
    const records = [];
    for (let i = 0; i < count; i++) {
        const at = REGISTRY_HEADER_SIZE + i * REGISTRY_RECORD_SIZE;
        const rec = body.subarray(at, at + REGISTRY_RECORD_SIZE);
        const fields = recordFields(rec, i, (check) => new Corrupt(`registry.bin: record ${i} ${check}`));
        const nameOffset = rec.readUInt32LE(28);
        const nameLength = rec.readUInt32LE(32);
        if (nameOffset + nameLength > names.length)
            throw new Corrupt(`registry.bin: record ${i} name lies outside the name store`);
        records.push({ ...fields, repository_name: names.toString('utf8', nameOffset, nameOffset + nameLength) });
    }
    return records;
}
/**
 * A record as encodeRegistryRecord writes it (the archive's `registry.rec`, storage-layout.md
 * §20.1): the 40-byte record with name_offset 0, then the UTF-8 name. `what` names the object.
 */
export function decodeRegistryRecord(bytes, index, what) {
    const fail = (check) => new Corrupt(`${what}: ${check}`);
    if (bytes.length < REGISTRY_RECORD_SIZE)
        throw fail('shorter than a registry record');
    const fields = recordFields(bytes, index, fail);
    if (bytes.readUInt32LE(28) !== 0)
        throw fail('name offset is not 0');
    const nameLength = bytes.readUInt32LE(32);
    if (nameLength !== bytes.length - REGISTRY_RECORD_SIZE)
        throw fail(`name length ${nameLength}, ${bytes.length - REGISTRY_RECORD_SIZE} bytes follow`);
    const raw = bytes.subarray(REGISTRY_RECORD_SIZE);
    const name = raw.toString('utf8');
    if (!Buffer.from(name, 'utf8').equals(raw))
        throw fail('name is not UTF-8');
    return { ...fields, repository_name: name };
}
/** The checked fields of one 40-byte record but its name; `fail(check)` builds the error. */
function recordFields(rec, index, fail) {
    if (rec.readUInt32LE(36) !== crc32(rec.subarray(0, 36)))
        throw fail('checksum mismatch');
    const carried = rec.readUInt32LE(0);
    if (carried !== index)
        throw fail(`carries index ${carried}`);
    const lifecycle = rec.readUInt8(4);
    if (lifecycle < 1 || lifecycle > 3)
        throw fail(`has lifecycle ${lifecycle}`);
    const tomb = rec.readUInt8(24);
    if (tomb > 1)
        throw fail(`has tombstone byte ${tomb}`);
    return {
        repository_index: index,
        lifecycle_kind: lifecycle,
        namespace: rec.toString('latin1', 5, 7).replace(/\0+$/, ''),
        policy_flags: rec.readUInt8(7),
        created_at_s: readU64(rec, 8),
        updated_at_s: readU64(rec, 16),
        tombstoned: tomb === 1,
    };
}
//# sourceMappingURL=registry-file.js.map