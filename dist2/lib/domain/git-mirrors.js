// Git mirrors (docs/git.md "Mirror", storage-layout.md §17): a line pushed to a git remote after
// each move. The rules of a registration (the URL, the credential reference), of the record a
// mirror keeps, of where a push may go and of the retry schedule, as pure functions. The records
// live in lib/authority/git-mirrors.ts; the pushing in lib/authority/git-mirror-runner.ts.
import path from 'node:path';
import { Invalid } from './errors.js';
import { requireWellFormed } from './text.js';
import { hostAllowed, isLoopbackName, refusal, targetPort } from './webhook-targets.js';
/** Workflow entity type (storage-layout.md §17). */
export const GIT_MIRROR = 'git_mirror';
/** Live (not removed) mirrors per repository. */
export const MAX_MIRRORS = 50;
export const MAX_MIRROR_URL_LENGTH = 2048;
/** A grant's name: a plain name. An environment variable's name. */
const CREDENTIAL_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** Stored errors are cut here. */
export const MAX_ERROR_LENGTH = 500;
/** The first wait after a failed push; it doubles after each further failure, up to MAX_MIRROR_BACKOFF_MS. */
export const DEFAULT_MIRROR_BACKOFF_MS = 1000;
export const MAX_MIRROR_BACKOFF_MS = 300_000;
/**
 * `pending`: registered or resumed, no push finished yet; `ok`: the remote's branch is the commit
 * last pushed; `retrying`: the last push failed and another is due at `next_attempt_at_ms`;
 * `diverged`: the remote's branch holds a commit that is not ours, so nothing is pushed until the
 * mirror is resumed.
 */
export const MIRROR_STATES = ['pending', 'ok', 'retrying', 'diverged'];
export const mirrorId = (sequence) => `mirror-${sequence}`;
export const STRICT_MIRROR_TARGETS = { network: { allowRanges: [], allowHosts: [], listener: null }, fileRoot: null };
const OPEN_HINT = 'cairn serve --git-mirror-allow opens internal targets';
/**
 * A registration's URL, normalized: https or http (or file under --git-mirror-file-root), a host,
 * no password, no query or fragment. A user name alone is kept (the credential's user). Throws
 * Invalid naming the rule; the answer never repeats a password the URL held.
 */
export function validateMirrorUrl(url, targets, localAddresses = []) {
    requireWellFormed(url, 'url');
    if (url.length > MAX_MIRROR_URL_LENGTH)
        throw new Invalid(`url is longer than ${MAX_MIRROR_URL_LENGTH} characters`);
    let parsed;
    try {
        parsed = new URL(url);
    }
    catch {
        throw new Invalid('url must be an absolute URL (https://host/path.git)');
    }
    if (parsed.password)
        throw new Invalid('url must not carry a password (user:password@); give credential: the name of a grant of the server instead');
    if (parsed.search || parsed.hash || url.includes('#') || url.includes('?'))
        throw new Invalid('url must not have a query or a fragment');
    if (parsed.protocol === 'file:') {
        if (targets.fileRoot === null)
            throw new Invalid('url: file:// mirrors are refused (they reach the server\'s own disk); cairn serve --git-mirror-file-root DIR allows them under DIR');
        if (parsed.host !== '' || parsed.username)
            throw new Invalid('url: a file:// URL names no host (file:///path/to/repo.git)');
        const p = decodeURIComponent(parsed.pathname);
        if (p.includes('\0'))
            throw new Invalid('url: the path holds a NUL');
        if (!insideRoot(p, targets.fileRoot))
            throw new Invalid('url: a file:// mirror must lie under the directory cairn serve --git-mirror-file-root names');
        return parsed.href;
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
        throw new Invalid('url must be an https or http URL (ssh is not supported)');
    if (!parsed.hostname)
        throw new Invalid('url must name a host');
    if (parsed.href.length > MAX_MIRROR_URL_LENGTH)
        throw new Invalid(`url is longer than ${MAX_MIRROR_URL_LENGTH} characters`);
    checkMirrorHost(parsed, targets.network, localAddresses);
    return parsed.href;
}
/** `p` (absolute, as given) lies in `root` once `.` and `..` are resolved. */
export function insideRoot(p, root) {
    if (!path.isAbsolute(p))
        return false;
    const rel = path.relative(root, path.resolve(p));
    return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}
const bracketless = (host) => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);
const isIpLiteral = (h) => /^[0-9.]+$/.test(h) || h.includes(':');
/** A literal address or a loopback name is judged at registration; any other name at each push, once resolved. */
function checkMirrorHost(url, targets, localAddresses) {
    const host = bracketless(url.hostname);
    const port = targetPort(url);
    const byHost = hostAllowed(targets, host);
    if (isIpLiteral(host)) {
        const r = refusal(targets, host, port, byHost, localAddresses);
        if (r?.kind === 'listener')
            throw new Invalid(`url: ${host}:${port} is this server's own listener; a mirror never pushes to it`);
        if (r)
            throw new Invalid(`url: ${host} is ${r.rule}; ${OPEN_HINT}`);
        return;
    }
    if (isLoopbackName(host)) {
        if (targets.listener && port === targets.listener.port)
            throw new Invalid(`url: ${host}:${port} is this server's own listener; a mirror never pushes to it`);
        if (!byHost)
            throw new Invalid(`url: ${host} is a loopback name; ${OPEN_HINT}`);
    }
}
export const NO_GRANTS = new Map();
const GRANT_FORM = 'NAME[@INDEX,...][:HOST,...]=env:VAR or =file:PATH, a HOST written http://HOST allowing plain http to it';
/** A grant as the command line gives it; throws Invalid naming what is wrong (never repeating a secret: none is given here). */
export function parseCredentialGrant(text) {
    const eq = text.indexOf('=');
    if (eq < 0)
        throw new Invalid(`"${text}" is not a grant (${GRANT_FORM})`);
    const left = text.slice(0, eq);
    const right = text.slice(eq + 1);
    const colon = left.indexOf(':');
    const head = colon < 0 ? left : left.slice(0, colon);
    const at = head.indexOf('@');
    const name = at < 0 ? head : head.slice(0, at);
    if (!CREDENTIAL_NAME.test(name))
        throw new Invalid(`grant "${left}": NAME must be letters, digits and . _ - (${GRANT_FORM})`);
    let repositories = null;
    if (at >= 0) {
        repositories = head.slice(at + 1).split(',').map((x) => {
            if (!/^(0|[1-9][0-9]{0,9})$/.test(x) || Number(x) > 0xffffffff)
                throw new Invalid(`grant "${left}": "${x}" is not a repository index`);
            return Number(x);
        });
    }
    let hosts = null;
    const httpHosts = [];
    if (colon >= 0) {
        hosts = left.slice(colon + 1).split(',').map((written) => {
            // `http://HOST` opts that host into plain http (the secret then travels in clear); `https://HOST` is HOST.
            const scheme = /^(https?):\/\//i.exec(written);
            const h = scheme ? written.slice(scheme[0].length) : written;
            const canonical = canonicalMirrorHost(h);
            if (canonical === null)
                throw new Invalid(`grant "${left}": "${written}" is not a host name or address (HOST, or http://HOST to allow plain http)`);
            if (scheme && scheme[1].toLowerCase() === 'http')
                httpHosts.push(canonical);
            return canonical;
        });
    }
    const m = /^(env|file):(.+)$/s.exec(right);
    if (!m)
        throw new Invalid(`grant ${name}: the source must be env:VAR (an environment variable of the server) or file:PATH (a file of one line)`);
    let source;
    if (m[1] === 'env') {
        if (!ENV_NAME.test(m[2]))
            throw new Invalid(`grant ${name}: env:VAR: VAR must be an environment variable name (letters, digits, _)`);
        source = { kind: 'env', variable: m[2] };
    }
    else {
        if (!path.isAbsolute(m[2]) || m[2].includes('\0'))
            throw new Invalid(`grant ${name}: file:PATH: PATH must be an absolute path`);
        source = { kind: 'file', path: m[2] };
    }
    return { name, source, repositories, hosts, ...(httpHosts.length ? { httpHosts } : {}) };
}
/** Grants by name; a name given twice is refused. */
export function credentialGrants(texts) {
    const out = new Map();
    for (const t of texts) {
        const g = parseCredentialGrant(t);
        if (out.has(g.name))
            throw new Invalid(`grant ${g.name} is given twice`);
        out.set(g.name, g);
    }
    return out;
}
/** A host as a URL's hostname spells it (lowercase, IPv6 without brackets), or null. */
function canonicalMirrorHost(host) {
    if (!/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)$/.test(host))
        return null;
    try {
        const h = new URL(`http://${host}/`).hostname;
        return h === '' ? null : bracketless(h);
    }
    catch {
        return null;
    }
}
/**
 * A registration's credential: null, or the name of a grant. References to where a secret lives
 * (`env:NAME`, `file:NAME`, what older servers took) are refused: the caller never chooses which
 * of the server's secrets is sent.
 */
export function validateCredentialName(ref) {
    if (ref === undefined || ref === null)
        return null;
    if (/^(env|file):/.test(ref))
        throw new Invalid('credential: "env:NAME" and "file:NAME" are not taken: the server\'s operator grants credentials by name (cairn serve --git-mirror-credential NAME=env:VAR) and a mirror names the grant');
    if (!CREDENTIAL_NAME.test(ref))
        throw new Invalid('credential must be the name of a grant of the server (letters, digits and . _ -; cairn serve --git-mirror-credential NAME=env:VAR)');
    return ref;
}
/**
 * Why `name` may not be used by a mirror of repository `repositoryIndex` pushing to `url`, or
 * null when it may. Asked at registration and again before each push (the grants are the
 * server's configuration of the moment).
 */
export function grantRefusal(grants, name, repositoryIndex, url) {
    const g = CREDENTIAL_NAME.test(name) ? grants.get(name) : undefined;
    if (!g)
        return `credential ${name} is not granted by this server (the operator grants one with cairn serve --git-mirror-credential ${CREDENTIAL_NAME.test(name) ? name : 'NAME'}=env:VAR)`;
    if (g.repositories !== null && !g.repositories.includes(repositoryIndex)) {
        return `credential ${name} is granted to repositor${g.repositories.length === 1 ? 'y' : 'ies'} ${g.repositories.join(', ')}, not to repository ${repositoryIndex}`;
    }
    if (g.hosts !== null) {
        let host = '';
        try {
            host = bracketless(new URL(url).hostname);
        }
        catch {
            // No host: refused below.
        }
        if (!g.hosts.includes(host))
            return `credential ${name} is granted for host${g.hosts.length === 1 ? '' : 's'} ${g.hosts.join(', ')}; the url's host ${host || '(none)'} is not one of them`;
    }
    // Plain http would carry the secret in clear (basic auth): only to a host the grant wrote as http://HOST.
    let scheme = '';
    let host = '';
    try {
        const u = new URL(url);
        scheme = u.protocol;
        host = bracketless(u.hostname);
    }
    catch {
        // Not a URL: validateMirrorUrl refuses it first.
    }
    if (scheme === 'http:' && !(g.httpHosts ?? []).includes(host)) {
        return `credential ${name} is sent only over https; the url is http:// (a grant allows http for a host written http://HOST: cairn serve --git-mirror-credential ${name}:http://${host || 'HOST'}=…)`;
    }
    return null;
}
/** The wait before attempt `failures + 1`: base × 2^(failures − 1), capped. */
export function mirrorBackoffMs(failures, baseMs) {
    return Math.min(MAX_MIRROR_BACKOFF_MS, baseMs * 2 ** Math.max(0, Math.min(30, failures - 1)));
}
/** Text fit to store and answer: `secrets` removed wherever they occur, cut to MAX_ERROR_LENGTH. */
export function scrubbed(text, secrets) {
    let out = text;
    for (const s of secrets)
        if (s.length >= 4)
            out = out.split(s).join('***');
    out = out.replace(/(authorization:\s*)\S.*$/gim, '$1***');
    return out.length > MAX_ERROR_LENGTH ? `${out.slice(0, MAX_ERROR_LENGTH - 1)}…` : out;
}
/** The problems of a stored record (fsck): its id, fields and states. */
export function mirrorRecordProblems(id, r) {
    const out = [];
    if (!r || typeof r !== 'object')
        return ['is not an object'];
    if (r.mirror_id !== id || id !== mirrorId(r.sequence))
        out.push(`is not filed under mirror-<sequence> (${JSON.stringify(r.mirror_id)}, sequence ${r.sequence})`);
    if (typeof r.line !== 'string' || r.line === '')
        out.push('has no line');
    try {
        const u = new URL(r.url);
        if (u.password)
            out.push('has a password in its url');
        if (!['https:', 'http:', 'file:'].includes(u.protocol))
            out.push(`has a url of scheme ${u.protocol}`);
    }
    catch {
        out.push('has no valid url');
    }
    // An older record's `env:NAME` or `file:NAME` is kept as it is: its pushes fail, saying why.
    if (r.credential !== null && !(typeof r.credential === 'string' && (CREDENTIAL_NAME.test(r.credential) || /^(env|file):./.test(r.credential))))
        out.push('has a credential that is neither a grant name nor null');
    if (!MIRROR_STATES.includes(r.state))
        out.push(`has state ${JSON.stringify(r.state)}`);
    for (const k of ['last_pushed_commit_id', 'diverged_remote_commit_id']) {
        if (r[k] !== null && !/^[0-9a-f]{40}$/.test(String(r[k])))
            out.push(`${k} is not a commit id`);
    }
    if (r.state === 'diverged' && r.diverged_remote_commit_id === null && r.last_error === null)
        out.push('is diverged without a reason');
    if (r.removed && r.credential !== null)
        out.push('is removed but keeps its credential reference');
    return out;
}
//# sourceMappingURL=git-mirrors.js.map