// The archive's object keys and its manifest codec (storage-layout.md §20): pure functions, no
// I/O. A manifest names one shipped commit point and every object a restore needs, each with
// its size and sha256; a restore trusts nothing else. Decoding refuses a damaged manifest as a
// whole (Corrupt, naming the check).
import { crc32 } from 'node:zlib';
import { Corrupt } from './errors.js';
export const MANIFEST_MAGIC = Buffer.from('CAIRNAMF', 'latin1');
export const MANIFEST_VERSION = 1;
export const COMMIT_RECORD_SIZE = 512;
const COMMIT_MAGIC = Buffer.from('CAIRNCMT', 'latin1');
const HEADER = 556;
export const MAX_ENTRIES = 1_000_000;
const MAX_TEXT = 1024;
const KIND_CODE = { pack: 1, 'log-range': 2, file: 3, registry: 4 };
const KIND_OF = { 1: 'pack', 2: 'log-range', 3: 'file', 4: 'registry' };
/** The path of a registry entry: a restore builds registry.bin from it, never a file of this name. */
export const REGISTRY_RECORD_PATH = 'registry.rec';
const U64_MAX = (1n << 64n) - 1n;
const pad20 = (n) => {
    if (n < 0n || n > U64_MAX)
        throw new RangeError(`${n} is not a u64`);
    return n.toString().padStart(20, '0');
};
const repoPrefix = (index) => {
    if (!Number.isInteger(index) || index < 0 || index > 0xffff_ffff)
        throw new RangeError(`repository index ${index} is not a u32`);
    return `repositories/${index}/`;
};
export function manifestPrefix(index) {
    return `${repoPrefix(index)}manifests/`;
}
export function manifestKey(index, archiveGeneration, commitGeneration) {
    return `${manifestPrefix(index)}g${pad20(archiveGeneration)}-${pad20(commitGeneration)}.manifest`;
}
/** The generations a manifest key names, or null for a key that is not one. */
export function parseManifestKey(key) {
    const m = /^repositories\/(0|[1-9][0-9]{0,9})\/manifests\/g([0-9]{20})-([0-9]{20})\.manifest$/.exec(key);
    if (!m)
        return null;
    const repository = Number(m[1]);
    const archiveGeneration = BigInt(m[2]);
    const commitGeneration = BigInt(m[3]);
    if (repository > 0xffff_ffff || archiveGeneration > U64_MAX || commitGeneration > U64_MAX)
        return null;
    return { repository, archiveGeneration, commitGeneration };
}
/**
 * The marker a writer leaves when it sees a repository purged: its archive then follows the
 * retention windows like any other (the newest manifest is no longer kept for being newest).
 */
export function purgedMarkerKey(index) {
    return `${repoPrefix(index)}purged`;
}
export function packKey(index, kind, packId) {
    if (!/^[0-9a-f]{64}$/.test(packId))
        throw new RangeError('pack id must be 64 lowercase hex digits');
    return `${repoPrefix(index)}packs/${kind}/${packId}.pack`;
}
export function logRangeKey(index, archiveGeneration, logName, start, end) {
    if (!isCleanPath(logName) || logName.includes('/'))
        throw new RangeError(`log name ${JSON.stringify(logName)} is not a file name`);
    if (end < start)
        throw new RangeError('a log range ends before it starts');
    return `${repoPrefix(index)}g${pad20(archiveGeneration)}/logs/${logName}/${pad20(start)}-${pad20(end)}`;
}
/** The key of a repository's registry record (§4) as it was at commit `<commit>`. */
export function registryRecordKey(index, archiveGeneration, commitGeneration) {
    return fileKey(index, archiveGeneration, commitGeneration, REGISTRY_RECORD_PATH);
}
export function fileKey(index, archiveGeneration, commitGeneration, path) {
    if (!isCleanPath(path))
        throw new RangeError(`path ${JSON.stringify(path)} is not a clean relative path`);
    return `${repoPrefix(index)}g${pad20(archiveGeneration)}/files/${pad20(commitGeneration)}/${path}`;
}
/** `/`-separated, relative, no empty, `.` or `..` segment, no control character, ≤ 1024 bytes. */
export function isCleanPath(path) {
    // eslint-disable-next-line no-control-regex
    if (path === '' || Buffer.byteLength(path) > MAX_TEXT || /[\u0000-\u001f\u007f\\]/.test(path))
        return false;
    return path.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..');
}
function compareBytes(a, b) {
    return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
/** The manifest's bytes (§20.2). Throws RangeError for a manifest that breaks a rule. */
export function encodeManifest(m) {
    if (m.archiveGeneration < 1n || m.archiveGeneration > U64_MAX)
        throw new RangeError('archive generation must be a u64 ≥ 1');
    if (m.commitGeneration < 1n || m.commitGeneration > U64_MAX)
        throw new RangeError('commit generation must be a u64 ≥ 1');
    if (m.capturedAtUs < 0n || m.capturedAtUs > U64_MAX)
        throw new RangeError('captured_at_us must be a u64');
    repoPrefix(m.repository);
    checkCommitPoint(m.commitPoint, m.commitGeneration, (msg) => new RangeError(msg));
    if (m.entries.length > MAX_ENTRIES)
        throw new RangeError(`more than ${MAX_ENTRIES} entries`);
    const parts = [];
    const head = Buffer.alloc(HEADER);
    MANIFEST_MAGIC.copy(head, 0);
    head.writeUInt8(MANIFEST_VERSION, 8);
    head.writeBigUInt64LE(m.archiveGeneration, 12);
    head.writeUInt32LE(m.repository, 20);
    head.writeBigUInt64LE(m.commitGeneration, 24);
    head.writeBigUInt64LE(m.capturedAtUs, 32);
    m.commitPoint.copy(head, 40);
    head.writeUInt32LE(m.entries.length, 552);
    parts.push(head);
    let previous;
    for (const e of m.entries) {
        if (previous !== undefined && compareBytes(previous, e.key) >= 0)
            throw new RangeError(`entries must be in strictly increasing key order (${e.key})`);
        previous = e.key;
        parts.push(encodeEntry(e, m.repository));
    }
    const body = Buffer.concat(parts);
    const crc = Buffer.alloc(4);
    crc.writeUInt32LE(crc32(body), 0);
    return Buffer.concat([body, crc]);
}
function encodeEntry(e, repository) {
    const code = KIND_CODE[e.kind];
    if (code === undefined)
        throw new RangeError(`unknown entry kind ${String(e.kind)}`);
    const key = Buffer.from(e.key, 'utf8');
    const path = Buffer.from(e.path, 'utf8');
    if (!e.key.startsWith(repoPrefix(repository)) || key.length > MAX_TEXT)
        throw new RangeError(`key ${JSON.stringify(e.key)} is not one of repository ${repository}`);
    if (!isCleanPath(e.path))
        throw new RangeError(`path ${JSON.stringify(e.path)} is not a clean relative path`);
    if (e.offset < 0n || e.offset > U64_MAX || e.size < 0n || e.size > U64_MAX)
        throw new RangeError('offset and size must be u64');
    if (e.kind !== 'log-range' && e.offset !== 0n)
        throw new RangeError(`a ${e.kind} entry starts at offset 0`);
    if (e.kind === 'registry' && e.path !== REGISTRY_RECORD_PATH)
        throw new RangeError(`a registry entry's path is ${REGISTRY_RECORD_PATH}`);
    if (!/^[0-9a-f]{64}$/.test(e.sha256))
        throw new RangeError('sha256 must be 64 lowercase hex digits');
    const out = Buffer.alloc(1 + 1 + 2 + key.length + 2 + path.length + 8 + 8 + 32);
    let o = 0;
    out.writeUInt8(code, o);
    o += 2; // kind, reserved
    out.writeUInt16LE(key.length, o);
    o += 2;
    key.copy(out, o);
    o += key.length;
    out.writeUInt16LE(path.length, o);
    o += 2;
    path.copy(out, o);
    o += path.length;
    out.writeBigUInt64LE(e.offset, o);
    o += 8;
    out.writeBigUInt64LE(e.size, o);
    o += 8;
    Buffer.from(e.sha256, 'hex').copy(out, o);
    return out;
}
function checkCommitPoint(record, generation, fail) {
    if (record.length !== COMMIT_RECORD_SIZE)
        throw fail(`the commit point must be ${COMMIT_RECORD_SIZE} bytes`);
    if (!record.subarray(0, 8).equals(COMMIT_MAGIC))
        throw fail('the commit point does not begin with CAIRNCMT');
    if (record.readBigUInt64LE(12) !== generation)
        throw fail('the commit point\'s generation is not the manifest\'s commit generation');
}
/** Decode and check a manifest; `what` names it in errors (its key). Throws Corrupt. */
export function decodeManifest(bytes, what) {
    const fail = (check) => new Corrupt(`archive manifest ${what}: ${check}`);
    if (bytes.length < HEADER + 4)
        throw fail('truncated header');
    if (!bytes.subarray(0, 8).equals(MANIFEST_MAGIC))
        throw fail('bad magic');
    if (bytes.readUInt8(8) !== MANIFEST_VERSION)
        throw fail(`unknown version ${bytes.readUInt8(8)}`);
    if (bytes.readUIntLE(9, 3) !== 0)
        throw fail('reserved header bytes are not zero');
    const end = bytes.length - 4;
    if (bytes.readUInt32LE(end) !== crc32(bytes.subarray(0, end)))
        throw fail('checksum mismatch');
    const archiveGeneration = bytes.readBigUInt64LE(12);
    const repository = bytes.readUInt32LE(20);
    const commitGeneration = bytes.readBigUInt64LE(24);
    const capturedAtUs = bytes.readBigUInt64LE(32);
    if (archiveGeneration < 1n)
        throw fail('archive generation 0');
    if (commitGeneration < 1n)
        throw fail('commit generation 0');
    const commitPoint = Buffer.from(bytes.subarray(40, 40 + COMMIT_RECORD_SIZE));
    checkCommitPoint(commitPoint, commitGeneration, fail);
    const count = bytes.readUInt32LE(552);
    if (count > MAX_ENTRIES)
        throw fail(`entry count ${count} above ${MAX_ENTRIES}`);
    const prefix = repoPrefix(repository);
    const entries = [];
    let o = HEADER;
    const need = (n) => { if (o + n > end)
        throw fail(`entry ${entries.length} runs past the end`); };
    const text = (len, name) => {
        need(len);
        const raw = bytes.subarray(o, o + len);
        const s = raw.toString('utf8');
        if (!Buffer.from(s, 'utf8').equals(raw))
            throw fail(`entry ${entries.length}: ${name} is not UTF-8`);
        o += len;
        return s;
    };
    for (let i = 0; i < count; i++) {
        need(4);
        const kind = KIND_OF[bytes.readUInt8(o)];
        if (kind === undefined)
            throw fail(`entry ${i}: unknown kind ${bytes.readUInt8(o)}`);
        if (bytes.readUInt8(o + 1) !== 0)
            throw fail(`entry ${i}: reserved byte is not zero`);
        const keyLength = bytes.readUInt16LE(o + 2);
        o += 4;
        if (keyLength < 1 || keyLength > MAX_TEXT)
            throw fail(`entry ${i}: key length ${keyLength}`);
        const key = text(keyLength, 'key');
        if (!key.startsWith(prefix))
            throw fail(`entry ${i}: key ${JSON.stringify(key)} is not of repository ${repository}`);
        need(2);
        const pathLength = bytes.readUInt16LE(o);
        o += 2;
        if (pathLength < 1 || pathLength > MAX_TEXT)
            throw fail(`entry ${i}: path length ${pathLength}`);
        const path = text(pathLength, 'path');
        if (!isCleanPath(path))
            throw fail(`entry ${i}: path ${JSON.stringify(path)} is not a clean relative path`);
        need(48);
        const offset = bytes.readBigUInt64LE(o);
        const size = bytes.readBigUInt64LE(o + 8);
        const sha256 = bytes.subarray(o + 16, o + 48).toString('hex');
        o += 48;
        if (kind !== 'log-range' && offset !== 0n)
            throw fail(`entry ${i}: a ${kind} entry at offset ${offset}`);
        if (kind === 'registry' && path !== REGISTRY_RECORD_PATH)
            throw fail(`entry ${i}: a registry entry with path ${JSON.stringify(path)}`);
        const previous = entries[entries.length - 1];
        if (previous && compareBytes(previous.key, key) >= 0)
            throw fail(`entry ${i}: keys out of order`);
        entries.push({ kind, key, path, offset, size, sha256 });
    }
    if (o !== end)
        throw fail(`${end - o} bytes after the last entry`);
    return { archiveGeneration, repository, commitGeneration, capturedAtUs, commitPoint, entries };
}
//# sourceMappingURL=archive-manifest.js.map