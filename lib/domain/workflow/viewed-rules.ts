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

export interface ViewedRecord {
  /** `<change_id>.viewed-<user key>-<sequence>` */
  viewed_id: string;
  change_id: string;
  user: string;
  /** Per (change, user), from 1. */
  sequence: number;
  patchset_id: string;
  path: string;
  /** The file's blob in the patchset's revision when marked; null when the patchset deletes it. */
  blob_id: string | null;
  viewed: boolean;
  updated_at_s: number;
}

/** 16 hex characters naming a user inside ids (names may hold any character; the body holds the name). */
export const userKey = (user: string): string => createHash('sha256').update(user, 'utf8').digest('hex').slice(0, 16);

export const viewedId = (changeIdValue: string, user: string, sequence: number): string => `${changeIdValue}.viewed-${userKey(user)}-${sequence}`;

const VIEWED_ID_RE = /^(change-[1-9][0-9]{0,9})\.viewed-([0-9a-f]{16})-([1-9][0-9]{0,9})$/;

export function parseViewedId(id: string): { change_id: string; user_key: string; sequence: number } | null {
  const m = VIEWED_ID_RE.exec(id);
  return m ? { change_id: m[1], user_key: m[2], sequence: Number(m[3]) } : null;
}

/** A user name as reviewer names are checked (non-empty, at most 256 characters). */
export const requireUser = (value: unknown): string => {
  if (typeof value !== 'string') throw new Invalid('user is required (the reviewer whose marks these are)');
  return requireName(value, 'user');
};

/** A file path as the diff routes' `path=` takes it: relative, no empty, "." or ".." segment, no trailing slash. */
export function requireViewedPath(value: string): string {
  if (value.endsWith('/')) throw new Invalid('path must be a relative path inside the tree (no empty, "." or ".." segments)');
  let p: string;
  try {
    p = cleanRelativePath(value, 'path');
  } catch {
    throw new Invalid('path must be a relative path inside the tree (no empty, "." or ".." segments)');
  }
  if (Buffer.byteLength(p, 'utf8') > MAX_VIEWED_PATH_BYTES) throw new Invalid(`path is longer than ${MAX_VIEWED_PATH_BYTES} bytes`);
  return p;
}

/** A new mark would be the user's `count + 1`-th on the change: refused beyond the cap. */
export function checkViewedRoom(changeIdValue: string, count: number, max = MAX_VIEWED_PER_USER): void {
  if (count >= max) throw new Conflict(`user holds ${max} viewed marks on ${changeIdValue}, the most one user may hold on a change`);
}

/** The number of a patchset id `<change_id>.ps-<n>`. */
export const patchsetNumberOf = (id: string): number => Number(id.slice(id.lastIndexOf('-') + 1));

/**
 * The paths viewed on patchset `number`: a mark on that patchset decides its path; a path with no
 * mark there takes the mark of the latest earlier patchset that has one, and counts as viewed
 * when that mark is `viewed` and the file's blob is the same on both (`blobOn(path)`: the blob at
 * the path in patchset `number`'s revision, null when absent). Later patchsets' marks are
 * ignored. Sorted by path (UTF-16 code units).
 */
export function viewedPaths(marks: Iterable<ViewedRecord>, number: number, blobOn: (path: string) => string | null): string[] {
  const best = new Map<string, { n: number; mark: ViewedRecord }>();
  for (const m of marks) {
    const n = patchsetNumberOf(m.patchset_id);
    if (n > number) continue;
    const b = best.get(m.path);
    if (!b || n > b.n) best.set(m.path, { n, mark: m });
  }
  const out: string[] = [];
  for (const [path, { n, mark }] of best) {
    if (!mark.viewed) continue;
    if (n === number || blobOn(path) === mark.blob_id) out.push(path);
  }
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Paths of `marks` that an earlier patchset than `number` decides (those whose blobs the caller must look up). */
export function carriedPaths(marks: Iterable<ViewedRecord>, number: number): Set<string> {
  const own = new Set<string>();
  const earlier = new Set<string>();
  for (const m of marks) {
    const n = patchsetNumberOf(m.patchset_id);
    if (n === number) own.add(m.path);
    else if (n < number && m.viewed) earlier.add(m.path);
  }
  for (const p of own) earlier.delete(p);
  return earlier;
}
