// Viewed marks (docs/api.md "Viewed marks"): a reviewer's "I have looked at this file" per
// change, per patchset, per path. The rules here are pure: the record's shape and id, the input
// checks, and which paths count as viewed on a patchset, given each marked path's blob there.
// Records are workflow.log upserts of type `viewed` (storage-layout.md §17); one record per
// (change, user, patchset, path), rewritten in place when the mark is toggled, numbered densely
// per (change, user) from 1 so a user's marks are read by id until the first gap.
import { createHash } from 'node:crypto';
import { Conflict, Invalid } from '../errors.js';
import { cleanRelativePath } from '../paths.js';
import { requireName } from './review-rules.js';
export const VIEWED = 'viewed';
/** At most this many marks (distinct patchset and path) per user per change; one more is refused (409). */
export const MAX_VIEWED_PER_USER = 10_000;
/** A marked path is at most this many UTF-8 bytes (a tree path of the store is bounded likewise). */
export const MAX_VIEWED_PATH_BYTES = 4096;
/** 16 hex characters naming a user inside ids (names may hold any character; the body holds the name). */
export const userKey = (user) => createHash('sha256').update(user, 'utf8').digest('hex').slice(0, 16);
export const viewedId = (changeIdValue, user, sequence) => `${changeIdValue}.viewed-${userKey(user)}-${sequence}`;
const VIEWED_ID_RE = /^(change-[1-9][0-9]{0,9})\.viewed-([0-9a-f]{16})-([1-9][0-9]{0,9})$/;
export function parseViewedId(id) {
    const m = VIEWED_ID_RE.exec(id);
    return m ? { change_id: m[1], user_key: m[2], sequence: Number(m[3]) } : null;
}
/** A user name as reviewer names are checked (non-empty, at most 256 characters). */
export const requireUser = (value) => {
    if (typeof value !== 'string')
        throw new Invalid('user is required (the reviewer whose marks these are)');
    return requireName(value, 'user');
};
/** A file path as the diff routes' `path=` takes it: relative, no empty, "." or ".." segment, no trailing slash. */
export function requireViewedPath(value) {
    if (value.endsWith('/'))
        throw new Invalid('path must be a relative path inside the tree (no empty, "." or ".." segments)');
    let p;
    try {
        p = cleanRelativePath(value, 'path');
    }
    catch {
        throw new Invalid('path must be a relative path inside the tree (no empty, "." or ".." segments)');
    }
    if (Buffer.byteLength(p, 'utf8') > MAX_VIEWED_PATH_BYTES)
        throw new Invalid(`path is longer than ${MAX_VIEWED_PATH_BYTES} bytes`);
    return p;
}
/** A new mark would be the user's `count + 1`-th on the change: refused beyond the cap. */
export function checkViewedRoom(changeIdValue, count, max = MAX_VIEWED_PER_USER) {
    if (count >= max)
        throw new Conflict(`user holds ${max} viewed marks on ${changeIdValue}, the most one user may hold on a change`);
}
/** The number of a patchset id `<change_id>.ps-<n>`. */
export const patchsetNumberOf = (id) => Number(id.slice(id.lastIndexOf('-') + 1));
/**
 * The paths viewed on patchset `number`: a mark on that patchset decides its path; a path with no
 * mark there takes the mark of the latest earlier patchset that has one, and counts as viewed
 * when that mark is `viewed` and the file's blob is the same on both (`blobOn(path)`: the blob at
 * the path in patchset `number`'s revision, null when absent). Later patchsets' marks are
 * ignored. Sorted by path (UTF-16 code units).
 */
export function viewedPaths(marks, number, blobOn) {
    const best = new Map();
    for (const m of marks) {
        const n = patchsetNumberOf(m.patchset_id);
        if (n > number)
            continue;
        const b = best.get(m.path);
        if (!b || n > b.n)
            best.set(m.path, { n, mark: m });
    }
    const out = [];
    for (const [path, { n, mark }] of best) {
        if (!mark.viewed)
            continue;
        if (n === number || blobOn(path) === mark.blob_id)
            out.push(path);
    }
    return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
/** Paths of `marks` that an earlier patchset than `number` decides (those whose blobs the caller must look up). */
export function carriedPaths(marks, number) {
    const own = new Set();
    const earlier = new Set();
    for (const m of marks) {
        const n = patchsetNumberOf(m.patchset_id);
        if (n === number)
            own.add(m.path);
        else if (n < number && m.viewed)
            earlier.add(m.path);
    }
    for (const p of own)
        earlier.delete(p);
    return earlier;
}
//# sourceMappingURL=viewed-rules.js.map