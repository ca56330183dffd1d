// authority.bin: the identity file at the root of every repository directory
// (storage-layout.md §5). It is the one place the repository index is stored inside an
// authority, so restore rewrites it when the authority is adopted under a new index.
import { Corrupt } from '../domain/errors.js';
import { decodeEnvelope, encodeEnvelope, readU64, writeU64 } from './binary.js';
import { MAGIC } from './layout.js';
export const AUTHORITY_MAGIC = MAGIC.authority;
export const AUTHORITY_BODY_SIZE = 16;
export function encodeAuthorityFile(identity) {
    const body = Buffer.alloc(AUTHORITY_BODY_SIZE);
    body.writeUInt32LE(identity.repository_index, 0);
    // bytes 4..7 reserved, zero
    writeU64(body, identity.created_at_s, 8);
    return encodeEnvelope(AUTHORITY_MAGIC, body);
}
export function decodeAuthorityFile(data) {
    const body = decodeEnvelope(AUTHORITY_MAGIC, data, 'authority.bin');
    if (body.length !== AUTHORITY_BODY_SIZE)
        throw new Corrupt(`authority.bin: body is ${body.length} bytes, expected ${AUTHORITY_BODY_SIZE}`);
    if (body.readUInt32LE(4) !== 0)
        throw new Corrupt('authority.bin: reserved bytes are not zero');
    return { repository_index: body.readUInt32LE(0), created_at_s: readU64(body, 8) };
}
//# sourceMappingURL=authority-file.js.map