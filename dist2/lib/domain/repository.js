// The repository authority record and the pure rules of registration (spec: "Repository authority").
import { Invalid } from './errors.js';
import { requireWellFormed } from './text.js';
export const LIFECYCLE_ACTIVE = 1;
export const LIFECYCLE_RETIRING = 2;
export const LIFECYCLE_PURGED = 3;
export const U32_MAX = 4294967295;
/** The name of a purged placeholder record that holds an index a restore skipped (indexes are positions). */
export const RESERVED_NAME = '(reserved: index skipped by a restore)';
const NAMESPACE_RE = /^[A-Za-z0-9_-]{0,2}$/;
export function validateNamespace(namespace) {
    if (!NAMESPACE_RE.test(namespace)) {
        throw new Invalid('namespace must be 0 to 2 characters of A-Z, a-z, 0-9, "_" or "-"');
    }
}
export function validateRepositoryName(name) {
    if (name.length === 0)
        throw new Invalid('repository_name must be non-empty');
    if (name.includes('\u0000'))
        throw new Invalid('repository_name must not contain NUL');
    requireWellFormed(name, 'repository_name');
    if (Buffer.byteLength(name, 'utf8') > 4096)
        throw new Invalid('repository_name is longer than 4096 bytes');
}
export function validatePolicyFlags(flags) {
    if (!Number.isInteger(flags) || flags < 0 || flags > 255)
        throw new Invalid('policy_flags must be an unsigned 8-bit integer (0 to 255)');
}
/** A repository "owns" its namespace while it is not purged; empty namespaces are never owned. */
export function ownsNamespace(record, namespace) {
    return namespace !== '' && record.namespace === namespace && record.lifecycle_kind !== LIFECYCLE_PURGED;
}
/**
 * Canonical unsigned base-10 u32: "0" or a digit string without leading zeros, at most
 * 4294967295. Anything else (signs, spaces, leading zeros, non-digits) is rejected.
 */
export function parseU32(text, what) {
    if (!/^(0|[1-9][0-9]{0,9})$/.test(text))
        throw new Invalid(`${what} must be a canonical unsigned base-10 u32`);
    const value = Number(text);
    if (value > U32_MAX)
        throw new Invalid(`${what} exceeds 4294967295`);
    return value;
}
export function nowSeconds() {
    return Math.floor(Date.now() / 1000);
}
//# sourceMappingURL=repository.js.map