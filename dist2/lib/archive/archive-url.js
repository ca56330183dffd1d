// An archive's location, `s3://bucket/prefix`, and its one spelling. No SDK here: restore,
// the follower and the writer name archives without talking to a store.
import { ObjectStoreError } from './object-store.js';
// S3's bucket naming rules (3-63 lowercase letters, digits, dots, hyphens), which Swift's
// s3api also applies.
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/**
 * Where `url` points. One archive has one spelling: the scheme's case, repeated slashes and a
 * trailing slash do not matter (`S3://b//p`, `s3://b/p` and `s3://b/p/` are all `s3://b/p/`,
 * see `canonicalArchiveUrl`).
 */
export function parseArchiveUrl(url) {
    const m = /^s3:\/\/([^/]+)(?:\/(.*))?$/i.exec(url.trim());
    if (!m)
        throw new ObjectStoreError('config', `archive location ${JSON.stringify(url)} is not s3://bucket[/prefix]`);
    const bucket = m[1];
    if (!BUCKET.test(bucket))
        throw new ObjectStoreError('config', `archive bucket ${JSON.stringify(bucket)} is not a valid bucket name`);
    const parts = (m[2] ?? '').split('/').filter((part) => part !== '');
    if (parts.some((p) => p === '.' || p === '..')) {
        throw new ObjectStoreError('config', `archive prefix ${JSON.stringify(m[2])} has a "." or ".." segment`);
    }
    return { bucket, prefix: parts.map((p) => `${p}/`).join('') };
}
/** The one spelling of an archive's location: `s3://bucket/prefix/` (`s3://bucket/` without a prefix). */
export function canonicalArchiveUrl(url) {
    const t = typeof url === 'string' ? parseArchiveUrl(url) : url;
    return `s3://${t.bucket}/${t.prefix}`;
}
/** Whether two spellings name the same location (false when either is not a usable URL). */
export function sameArchiveUrl(a, b) {
    try {
        return canonicalArchiveUrl(a) === canonicalArchiveUrl(b);
    }
    catch {
        return false;
    }
}
//# sourceMappingURL=archive-url.js.map