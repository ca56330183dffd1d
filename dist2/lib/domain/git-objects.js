// Git's object encodings (git's Documentation/gitformat-*; what `git hash-object` and `git mktree`
// write), for building git objects from stored data: a blob's id, a tree's canonical bytes and
// id, the modes of cairn's entry kinds, and the zlib-deflated loose-object file. Pure functions:
// the same input always gives the same bytes and ids (docs/git.md).
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { Invalid } from './errors.js';
/** The mode git writes for each kind (trees as `40000`, with no leading zero, as git does). */
export const GIT_MODES = {
    file: '100644',
    executable: '100755',
    symlink: '120000',
    directory: '40000',
    gitlink: '160000',
};
function header(type, length) {
    return Buffer.from(`${type} ${length}\0`, 'latin1');
}
export function gitId(type, body, hash = 'sha1') {
    return createHash(hash).update(header(type, body.length)).update(body).digest('hex');
}
/**
 * Git's tree order (base_name_compare): by name bytes, a directory compared as if its name
 * ended in `/`, so the file `a.b` sorts before the directory `a` (`a/`), and `a0` after it. A
 * submodule is not a directory here.
 */
function sortKey(e) {
    const name = Buffer.from(e.name, 'utf8');
    return e.kind === 'directory' ? Buffer.concat([name, Buffer.from('/')]) : name;
}
const ID_PATTERN = { sha1: /^[0-9a-f]{40}$/, sha256: /^[0-9a-f]{64}$/ };
/** Sorted in git's order. ASCII names sort as strings (the same order as their bytes, and cheaper). */
function gitOrder(entries) {
    if (entries.every((e) => /^[\x00-\x7f]*$/.test(e.name))) {
        const keyed = entries.map((e) => ({ e, key: e.kind === 'directory' ? `${e.name}/` : e.name, length: e.name.length }));
        keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
        return keyed;
    }
    const keyed = entries.map((e) => ({ e, key: sortKey(e), length: Buffer.byteLength(e.name) }));
    keyed.sort((a, b) => Buffer.compare(a.key, b.key));
    return keyed;
}
/** A tree's canonical bytes: `<mode> <name>\0<raw id>` per entry, in git's order. */
export function encodeGitTree(entries, hash = 'sha1') {
    const idBytes = hash === 'sha1' ? 20 : 32;
    const keyed = gitOrder(entries);
    let size = 0;
    const names = new Set();
    for (const { e, length } of keyed) {
        if (e.name === '' || e.name.includes('/') || e.name.includes('\0'))
            throw new Invalid(`git tree entry name ${JSON.stringify(e.name)} is not a single path component`);
        if (names.has(e.name))
            throw new Invalid(`git tree entry ${JSON.stringify(e.name)} is listed twice`);
        names.add(e.name);
        if (!ID_PATTERN[hash].test(e.id))
            throw new Invalid(`git tree entry ${e.name}: ${e.id} is not a ${hash} object id`);
        size += GIT_MODES[e.kind].length + 2 + length + idBytes;
    }
    const out = Buffer.allocUnsafe(size);
    let at = 0;
    for (const { e } of keyed) {
        at += out.write(GIT_MODES[e.kind], at, 'latin1');
        out[at++] = 0x20;
        at += out.write(e.name, at, 'utf8');
        out[at++] = 0;
        at += out.write(e.id, at, 'hex');
    }
    return out;
}
/** The bytes of a loose object file (`.git/objects/xx/yyyy…`): the object, zlib-deflated. */
export function looseObject(type, body) {
    return deflateSync(Buffer.concat([header(type, body.length), body]));
}
//# sourceMappingURL=git-objects.js.map