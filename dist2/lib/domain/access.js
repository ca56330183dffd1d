// Who may do what (docs/api.md "Accounts, tokens and roles"): roles per repository, the
// permission every route of the route table names, token scopes, and the one decision that
// joins them. Pure: the access book (lib/authority/access.ts) keeps the state, the HTTP gate
// (lib/http/access-gate.ts) asks `decide` for every request.
import { createHash } from 'node:crypto';
import { Invalid } from './errors.js';
import { nameProblem } from './text.js';
/** Roles in a repository, weakest first: each holds every right of the ones before it. */
export const ROLES = ['reader', 'contributor', 'maintainer', 'admin'];
/**
 * What a route asks of its caller (the route table's `permission` column):
 *  - `public`: anyone, signed in or not (health, discovery, the API reference);
 *  - `session`: anyone; the answer depends on who asks (their own tokens, "who am I");
 *  - a role: at least that role in the route's repository;
 *  - `runner`: a token with the `runner` scope, or a maintainer of the repository (worker jobs);
 *  - `server_admin`: an account with the server-admin flag (accounts, new repositories, restores, the audit feed);
 *  - `promotion`: a standby's promotion, with its own secret (lib/http/promote-access.ts).
 */
export const PERMISSIONS = ['public', 'session', ...ROLES, 'runner', 'server_admin', 'promotion'];
/** Token scopes: what a token may be used for, within its account's roles. */
export const SCOPES = ['read', 'write', 'admin', 'runner'];
/** The scopes of `cairn token create` when none are named: everyday work, no administration. */
export const DEFAULT_SCOPES = ['read', 'write'];
/** The scope a permission needs of a token (null: none). */
export function scopeFor(permission) {
    switch (permission) {
        case 'reader': return 'read';
        case 'contributor':
        case 'maintainer': return 'write';
        case 'admin':
        case 'server_admin': return 'admin';
        case 'runner': return 'runner';
        default: return null;
    }
}
/**
 * Reads a runner needs to test what it claimed (the repository, its lines, a snapshot's packs
 * and manifests, the job itself): a `runner` token may make these and nothing else beside the
 * worker-job routes.
 */
export const RUNNER_READS = new Set([
    'repositories.get', 'lines.list', 'lines.get', 'snapshots.exists', 'snapshots.export',
    'sync.getObjectPack', 'sync.getTreePack', 'sync.importManifest', 'sync.pullManifest',
    'workerJobs.list', 'workerJobs.get', 'patchsets.get',
]);
export const ANONYMOUS = { kind: 'anonymous' };
export const roleRank = (role) => (role === null ? -1 : ROLES.indexOf(role));
export const atLeast = (role, needed) => roleRank(role) >= roleRank(needed);
/**
 * The decision for one request: `permission` of the route, the caller, the caller's role in the
 * route's repository (null: none, or the route is not under one), and the operation's name.
 */
export function decide(permission, who, role, operation) {
    if (permission === 'public' || permission === 'session' || permission === 'promotion')
        return { allow: true };
    const scopes = who.kind === 'account' ? who.scopes : null;
    const scoped = (s) => s === null || scopes === null || scopes.has(s);
    // A runner token: the worker-job routes and the reads a run needs, nothing else.
    if (scopes !== null && scopes.has('runner') && (permission === 'runner' || RUNNER_READS.has(operation)))
        return { allow: true };
    if (permission === 'server_admin') {
        if (who.kind === 'anonymous')
            return unauthenticated();
        if (!who.serverAdmin)
            return { allow: false, status: 403, message: `${operation} is for server admins; ask one (cairn admin user list shows them)` };
        if (!scoped('admin'))
            return noScope('admin', operation);
        return { allow: true };
    }
    const needed = permission === 'runner' ? 'maintainer' : permission;
    if (!atLeast(role, needed)) {
        if (who.kind === 'anonymous')
            return unauthenticated();
        const has = role === null ? 'no role' : `the ${role} role`;
        const hint = permission === 'runner' ? ' (or a token with the runner scope)' : '';
        return { allow: false, status: 403, message: `${operation} needs the ${needed} role in this repository${hint}; ${who.name} has ${has} (a repository admin grants roles: cairn repo access grant)` };
    }
    if (!scoped(scopeFor(permission)))
        return noScope(scopeFor(permission), operation);
    return { allow: true };
}
function unauthenticated() {
    return { allow: false, status: 401, message: 'this needs a signed-in caller: send a token (Authorization: Bearer TOKEN, or as the password of HTTP basic auth for git); cairn login stores one' };
}
function noScope(scope, operation) {
    return { allow: false, status: 403, message: `${operation} needs a token with the ${scope} scope; this token does not have it (cairn token create --scopes ${scope})` };
}
// ---------------------------------------------------------------- names, subjects, tokens
/** An account or group name: the rule of every name (lib/domain/text.ts), no ':' (subjects use it) and no '@' first (CODEOWNERS). */
export function requireAccountName(value, field = 'name') {
    if (typeof value !== 'string')
        throw new Invalid(`${field} must be a string`);
    const problem = nameProblem(value);
    if (problem !== null)
        throw new Invalid(`${field} ${problem}`);
    if (value !== value.trim())
        throw new Invalid(`${field} must not start or end with spaces`);
    if (value.includes(':') || value.startsWith('@'))
        throw new Invalid(`${field} must not contain ':' or start with '@'`);
    return value;
}
export function parseSubject(value, field = 'subject') {
    if (typeof value !== 'string')
        throw new Invalid(`${field} must be a string like user:alice or group:core`);
    const colon = value.indexOf(':');
    const kind = value.slice(0, colon);
    if (colon < 0 || (kind !== 'user' && kind !== 'group'))
        throw new Invalid(`${field} must be user:NAME or group:NAME`);
    return { kind, name: requireAccountName(value.slice(colon + 1), field) };
}
export const subjectText = (s) => `${s.kind}:${s.name}`;
export function requireRole(value, field = 'role') {
    if (typeof value !== 'string' || !ROLES.includes(value))
        throw new Invalid(`${field} must be one of ${ROLES.join(', ')}`);
    return value;
}
export function requireScopes(value, field = 'scopes') {
    if (!Array.isArray(value) || value.length === 0 || value.length > SCOPES.length)
        throw new Invalid(`${field} must be a non-empty array of ${SCOPES.join(', ')}`);
    const out = new Set();
    for (const s of value) {
        if (typeof s !== 'string' || !SCOPES.includes(s))
            throw new Invalid(`${field} must hold only ${SCOPES.join(', ')}`);
        out.add(s);
    }
    return [...out].sort((a, b) => SCOPES.indexOf(a) - SCOPES.indexOf(b));
}
/** A token's text: this prefix, then 43 characters of base64url (32 random bytes, 256 bits). */
export const TOKEN_PREFIX = 'cairn_';
export const TOKEN_RE = /^cairn_[A-Za-z0-9_-]{43}$/;
/** What is stored of a token: the hex sha256 of its text (the text itself is shown once and never kept). */
export function tokenDigest(token) {
    return createHash('sha256').update(token, 'utf8').digest('hex');
}
/** The longest lifetime a token may be given, and the default. */
export const MAX_TOKEN_DAYS = 366;
export const DEFAULT_TOKEN_DAYS = 90;
//# sourceMappingURL=access.js.map