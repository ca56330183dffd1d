// The content model (storage-layout.md §6): blobs, trees and snapshot records, their canonical
// encodings and ids. Pure functions: no I/O. Every id a client sends is recomputed from bytes.
import { isUtf8 } from 'node:buffer';
import { hash } from 'node:crypto';
import { Invalid } from './errors.js';
export const ID_BYTES = 32;
const ID_RE = /^[0-9a-f]{64}$/;
export function isContentId(value) {
    return typeof value === 'string' && ID_RE.test(value);
}
export function requireContentId(value, what) {
    if (!isContentId(value))
        throw new Invalid(`${what} must be 64 lowercase hex characters (a sha256 id)`);
    return value;
}
export function sha256Hex(data) {
    // crypto.hash: one call, no Hash object (for thousands of small objects the object costs more than the hashing).
    return hash('sha256', data, 'hex');
}
/** A blob's id is the sha256 of its bytes: its canonical encoding is the bytes themselves. */
export function blobId(bytes) {
    return sha256Hex(bytes);
}
// ---------------------------------------------------------------- trees
export const ENTRY_FILE = 1;
export const ENTRY_EXECUTABLE = 2;
export const ENTRY_SYMLINK = 3;
export const ENTRY_DIRECTORY = 4;
const KIND_CODES = { file: ENTRY_FILE, executable: ENTRY_EXECUTABLE, symlink: ENTRY_SYMLINK, directory: ENTRY_DIRECTORY };
const KIND_NAMES = { 1: 'file', 2: 'executable', 3: 'symlink', 4: 'directory' };
export const TREE_MAGIC = 'CTRE';
const MAX_NAME_BYTES = 1024;
export function validateEntryName(name) {
    if (name === '' || name === '.' || name === '..')
        throw new Invalid(`tree entry name "${name}" is not allowed`);
    if (name.includes('/') || name.includes('\u0000'))
        throw new Invalid('tree entry names must not contain "/" or NUL');
    if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES)
        throw new Invalid('tree entry name longer than 1024 bytes');
}
// ---------------------------------------------------------------- names a checkout must not write
//
// validateEntryName is the format's rule: every stored tree obeys it, and a tree that breaks it
// does not decode. The names below are well-formed but dangerous to write into a directory: a
// `.git` a later `git` command would obey (core.fsmonitor, hooks: code execution, the class git
// itself refuses as fsck.hasDotgit), the working copy's own metadata directory, or a name that
// becomes two on Windows. The server refuses them at ingest and the client refuses to write
// them, both through refusedEntryName; stores written before the rule can hold them (fsck
// reports them). storage-layout.md §6 states the rule.
/** The working copy's metadata directory at the top of a checkout (lib/client/working-copy.ts). */
export const WORKING_COPY_METADATA_DIR = '.cairn';
// Code points HFS+ ignores when it compares names, so ".g\u200cit" opens ".git" (git's next_hfs_char).
const HFS_IGNORABLE = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;
const MAYBE_IGNORABLE = /[\u200c-\ufeff]/;
// `.git` as Windows and macOS open it: any ASCII case (the `i` flag never folds non-ASCII onto
// ASCII), trailing dots and spaces dropped (`.git.`, `.git `, `.git. .`), an NTFS alternate data
// stream (`.git::$INDEX_ALLOCATION` is the directory itself), or the 8.3 short name (`git~1`).
// Git's is_ntfs_dotgit accepts `git~1` only; `~1` to `~4` are the short names Windows hands out
// before it falls back to hashed ones.
const DOT_GIT = /^(?:\.git|git~[1-4])[. ]*(?::.*)?$/is;
const DOT_CAIRN = /^(?:\.cairn|cairn~[1-4])[. ]*(?::.*)?$/is;
export const RULE_DOT_GIT = 'names .git in some case or alias (trailing dots or spaces, an NTFS stream, git~1, code points HFS+ ignores)';
export const RULE_DOT_CAIRN = `names ${WORKING_COPY_METADATA_DIR} at the top of the tree (the working copy's metadata directory), in some case or alias`;
export const RULE_BACKSLASH = 'holds a backslash (a path separator on Windows)';
/**
 * Why a checkout must not write a tree entry named `name` (`top`: an entry of a snapshot's root
 * tree), or null when it may. Called for every entry a server ingests and a client writes: the
 * common name is cleared by two character tests.
 */
export function refusedEntryName(name, top) {
    if (name.includes('\\'))
        return RULE_BACKSLASH;
    const c = name.charCodeAt(0);
    // Only a name starting with ".", "g" or "c" (any case), or with an ignorable code point, can alias.
    if (c !== 0x2e && (c | 0x20) !== 0x67 && (c | 0x20) !== 0x63 && c < 0x200c)
        return null;
    const plain = c < 0x80 && !MAYBE_IGNORABLE.test(name) ? name : name.replace(HFS_IGNORABLE, '');
    if (DOT_GIT.test(plain))
        return RULE_DOT_GIT;
    if (top && DOT_CAIRN.test(plain))
        return RULE_DOT_CAIRN;
    return null;
}
/**
 * The first segment of a repository-relative, '/'-separated path that must not be written (as
 * the path up to it, with its rule; each segment judged as above), or null.
 */
export function refusedPath(p) {
    const parts = p.split('/');
    for (let i = 0; i < parts.length; i++) {
        const part = parts[i];
        const rule = part === '' || part === '.' || part === '..' || part.includes('\u0000') ? 'is not a clean relative path' : refusedEntryName(part, i === 0);
        if (rule)
            return { path: parts.slice(0, i + 1).join('/'), rule };
    }
    return null;
}
/** One message naming each refused path (JSON-quoted: names may hold newlines or quotes) and its rule. */
export function describeRefusedNames(refused, limit = 20) {
    const shown = refused.slice(0, limit).map((r) => `${JSON.stringify(r.path)} ${r.rule}`);
    if (refused.length > limit)
        shown.push(`and ${refused.length - limit} more`);
    return shown.join('; ');
}
/**
 * Every refused entry in the trees below `root` (paths from it), descending into the trees
 * `descend` allows (default: all); each tree is read once. A refused directory is reported, not
 * entered. `readTree` is the caller's (the domain layer does no I/O).
 */
export async function findRefusedNames(root, readTree, descend = () => true, seen = new Set()) {
    const found = [];
    const byPath = (a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
    if (seen.has(root)) {
        // Walked below another root already: only what the top-level rule adds is new.
        for (const e of await readTree(root)) {
            const rule = refusedEntryName(e.name, true);
            if (rule && !refusedEntryName(e.name, false))
                found.push({ path: e.name, rule });
        }
        return found.sort(byPath);
    }
    const stack = [{ id: root, prefix: '' }];
    while (stack.length) {
        const { id, prefix } = stack.pop();
        if (seen.has(id))
            continue;
        seen.add(id);
        for (const e of await readTree(id)) {
            const p = prefix + e.name;
            const rule = refusedEntryName(e.name, prefix === '');
            if (rule)
                found.push({ path: p, rule });
            else if (e.kind === 'directory' && descend(e.id))
                stack.push({ id: e.id, prefix: `${p}/` });
        }
    }
    return found.sort(byPath);
}
function compareNames(a, b) {
    return Buffer.compare(a, b);
}
/**
 * Canonical tree encoding: "CTRE", version u8 0, reserved u8×3, entry_count u32, then per entry
 * (sorted by the UTF-8 bytes of the name, names unique): kind u8, name_length u16, name, id 32 bytes.
 */
export function encodeTree(entries) {
    const named = entries.map((e) => {
        validateEntryName(e.name);
        requireContentId(e.id, 'tree entry id');
        if (!(e.kind in KIND_CODES))
            throw new Invalid(`unknown tree entry kind ${e.kind}`);
        return { ...e, nameBytes: Buffer.from(e.name, 'utf8') };
    });
    named.sort((a, b) => compareNames(a.nameBytes, b.nameBytes));
    for (let i = 1; i < named.length; i++) {
        if (named[i].nameBytes.equals(named[i - 1].nameBytes))
            throw new Invalid(`duplicate tree entry name "${named[i].name}"`);
    }
    const size = 12 + named.reduce((n, e) => n + 1 + 2 + e.nameBytes.length + ID_BYTES, 0);
    const out = Buffer.alloc(size);
    out.write(TREE_MAGIC, 0, 'ascii');
    out.writeUInt32LE(named.length, 8);
    let at = 12;
    for (const e of named) {
        out.writeUInt8(KIND_CODES[e.kind], at);
        out.writeUInt16LE(e.nameBytes.length, at + 1);
        e.nameBytes.copy(out, at + 3);
        at += 3 + e.nameBytes.length;
        Buffer.from(e.id, 'hex').copy(out, at);
        at += ID_BYTES;
    }
    return out;
}
/**
 * Decode a canonical tree, checking that `bytes` is exactly its encoding; with `keep` false,
 * only check it (nothing is materialized); `visit` sees each name. Trees are decoded for every
 * upload, commit, manifest and pull, thousands of entries at a time: ASCII names are decoded as
 * latin1 (the same for them), anything else must be valid UTF-8 (one native call), and names
 * are compared with the previous one in JS, with no Buffer made per entry.
 */
export function decodeTree(bytes, keep = true, visit) {
    const bad = (why) => new Invalid(`not a canonical tree: ${why}`);
    if (bytes.length < 12 || bytes.toString('ascii', 0, 4) !== TREE_MAGIC)
        throw bad('bad magic');
    if (bytes.readUInt8(4) !== 0)
        throw bad(`version ${bytes.readUInt8(4)}`);
    if (bytes.readUIntLE(5, 3) !== 0)
        throw bad('reserved bytes are not zero');
    const count = bytes.readUInt32LE(8);
    const entries = [];
    let at = 12;
    let previousStart = -1;
    let previousEnd = -1;
    for (let i = 0; i < count; i++) {
        if (at + 3 > bytes.length)
            throw bad('truncated entry');
        const kind = KIND_NAMES[bytes[at]];
        if (!kind)
            throw bad(`entry ${i} has unknown kind ${bytes[at]}`);
        const nameLength = bytes[at + 1] | (bytes[at + 2] << 8);
        const start = at + 3;
        const end = start + nameLength;
        if (end + ID_BYTES > bytes.length)
            throw bad('truncated entry');
        let ascii = true;
        for (let j = start; j < end && ascii; j++)
            ascii = bytes[j] < 0x80;
        if (!ascii && !isUtf8(bytes.subarray(start, end)))
            throw bad(`entry ${i} name is not valid UTF-8`);
        const name = ascii ? bytes.toString('latin1', start, end) : bytes.toString('utf8', start, end);
        validateEntryName(name);
        visit?.(name);
        if (previousStart >= 0 && compareRanges(bytes, previousStart, previousEnd, start, end) >= 0)
            throw bad('entries are not sorted and unique');
        previousStart = start;
        previousEnd = end;
        at = end;
        if (keep)
            entries.push({ name, kind, id: bytes.toString('hex', at, at + ID_BYTES) });
        at += ID_BYTES;
    }
    if (at !== bytes.length)
        throw bad('trailing bytes');
    return entries;
}
/** Byte order of bytes[aStart, aEnd) against bytes[bStart, bEnd) (Buffer.compare's order). */
function compareRanges(bytes, aStart, aEnd, bStart, bEnd) {
    const n = Math.min(aEnd - aStart, bEnd - bStart);
    for (let k = 0; k < n; k++) {
        const d = bytes[aStart + k] - bytes[bStart + k];
        if (d !== 0)
            return d;
    }
    return (aEnd - aStart) - (bEnd - bStart);
}
export function treeId(entries) {
    return sha256Hex(encodeTree(entries));
}
export const SNAPSHOT_MAGIC = 'CSNP';
export const MAX_PARENTS = 64;
export const MAX_MESSAGE_BYTES = 64 * 1024;
/**
 * Canonical snapshot encoding: "CSNP", version u8 0, has_message u8, parent_count u16,
 * root tree id 32, parents 32 each (in the given order, unique), created_at_s u64,
 * message_length u32, message UTF-8 (empty when has_message is 0).
 */
export function encodeSnapshot(s) {
    requireContentId(s.root_tree_id, 'root_tree_id');
    if (s.parent_snapshot_ids.length > MAX_PARENTS)
        throw new Invalid(`a snapshot has at most ${MAX_PARENTS} parents`);
    const seen = new Set();
    for (const p of s.parent_snapshot_ids) {
        requireContentId(p, 'parent snapshot id');
        if (seen.has(p))
            throw new Invalid('parent snapshot ids must be unique');
        seen.add(p);
    }
    if (!Number.isSafeInteger(s.created_at_s) || s.created_at_s < 0)
        throw new Invalid('created_at_s must be unsigned Unix seconds');
    const message = s.message === null ? Buffer.alloc(0) : Buffer.from(s.message, 'utf8');
    if (message.length > MAX_MESSAGE_BYTES)
        throw new Invalid('snapshot message longer than 64 KiB');
    const out = Buffer.alloc(8 + 32 + 32 * s.parent_snapshot_ids.length + 8 + 4 + message.length);
    out.write(SNAPSHOT_MAGIC, 0, 'ascii');
    out.writeUInt8(0, 4);
    out.writeUInt8(s.message === null ? 0 : 1, 5);
    out.writeUInt16LE(s.parent_snapshot_ids.length, 6);
    Buffer.from(s.root_tree_id, 'hex').copy(out, 8);
    let at = 40;
    for (const p of s.parent_snapshot_ids) {
        Buffer.from(p, 'hex').copy(out, at);
        at += 32;
    }
    out.writeBigUInt64LE(BigInt(s.created_at_s), at);
    out.writeUInt32LE(message.length, at + 8);
    message.copy(out, at + 12);
    return out;
}
export function decodeSnapshot(bytes) {
    const bad = (why) => new Invalid(`not a canonical snapshot record: ${why}`);
    if (bytes.length < 52 || bytes.toString('ascii', 0, 4) !== SNAPSHOT_MAGIC)
        throw bad('bad magic');
    if (bytes.readUInt8(4) !== 0)
        throw bad('version');
    const hasMessage = bytes.readUInt8(5);
    if (hasMessage > 1)
        throw bad('has_message');
    const parents = bytes.readUInt16LE(6);
    const fixed = 40 + 32 * parents + 12;
    if (bytes.length < fixed)
        throw bad('truncated');
    const parent_snapshot_ids = [];
    for (let i = 0; i < parents; i++)
        parent_snapshot_ids.push(bytes.toString('hex', 40 + 32 * i, 72 + 32 * i));
    const at = 40 + 32 * parents;
    const created = bytes.readBigUInt64LE(at);
    const messageLength = bytes.readUInt32LE(at + 8);
    if (bytes.length !== fixed + messageLength)
        throw bad('length');
    if (!hasMessage && messageLength !== 0)
        throw bad('message without has_message');
    const record = {
        root_tree_id: bytes.toString('hex', 8, 40),
        parent_snapshot_ids,
        created_at_s: Number(created),
        message: hasMessage ? bytes.toString('utf8', at + 12) : null,
    };
    const canonical = encodeSnapshot(record);
    if (!canonical.equals(bytes))
        throw bad('not canonical');
    return { snapshot_id: sha256Hex(bytes), ...record };
}
export function snapshotId(s) {
    return sha256Hex(encodeSnapshot(s));
}
//# sourceMappingURL=content.js.map