// Git mirrors (docs/git.md "Mirror", storage-layout.md §17): a line pushed to a git remote after
// each move. The rules of a registration (the URL, the credential reference), of the record a
// mirror keeps, of where a push may go and of the retry schedule, as pure functions. The records
// live in lib/authority/git-mirrors.ts; the pushing in lib/authority/git-mirror-runner.ts.
import path from 'node:path';
import { Invalid } from './errors.js';
import { requireWellFormed } from './text.js';
import { hostAllowed, isLoopbackName, refusal, targetPort, type WebhookTargets } from './webhook-targets.js';

/** Workflow entity type (storage-layout.md §17). */
export const GIT_MIRROR = 'git_mirror';

/** Live (not removed) mirrors per repository. */
export const MAX_MIRRORS = 50;
export const MAX_MIRROR_URL_LENGTH = 2048;
/** A credential file's name, or an environment variable's: a plain name, never a path. */
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
export const MIRROR_STATES = ['pending', 'ok', 'retrying', 'diverged'] as const;
export type MirrorState = (typeof MIRROR_STATES)[number];

export interface GitMirrorRecord {
  mirror_id: string;
  /** ≥ 1, per repository; the next is the number of git_mirror entities plus one (ids are never reused). */
  sequence: number;
  /** 1 when registered, plus one per write: an attempt records its result only on the version it started from. */
  version: number;
  line: string;
  /** Normalized; never holds a user name's password. */
  url: string;
  /** `env:NAME` or `file:NAME`: where the server finds the secret; null: none. Cleared on removal. */
  credential: string | null;
  state: MirrorState;
  /** The commit the remote's branch was last seen at after our push (or found equal to ours); null: none yet. */
  last_pushed_commit_id: string | null;
  last_pushed_at_s: number | null;
  /** Why the last attempt failed or why the mirror diverged; null after a success. Never holds a secret. */
  last_error: string | null;
  /** Failed attempts in a row (a success resets it). */
  failures: number;
  /** When a retrying mirror is attempted next (ms since the epoch); null otherwise. */
  next_attempt_at_ms: number | null;
  /** The remote's commit that made the mirror stop; null unless diverged. */
  diverged_remote_commit_id: string | null;
  diverged_at_s: number | null;
  removed: boolean;
  created_at_s: number;
  updated_at_s: number;
  removed_at_s: number | null;
}

export const mirrorId = (sequence: number): string => `mirror-${sequence}`;

/** Where mirrors may push (cairn serve --git-mirror-allow, --git-mirror-file-root). */
export interface MirrorTargets {
  /** The same rules as webhook targets: public addresses, ranges and hosts opened, never the listener. */
  network: WebhookTargets;
  /** file:// URLs are allowed only under this directory (absolute); null: refused. */
  fileRoot: string | null;
}

export const STRICT_MIRROR_TARGETS: MirrorTargets = { network: { allowRanges: [], allowHosts: [], listener: null }, fileRoot: null };

const OPEN_HINT = 'cairn serve --git-mirror-allow opens internal targets';

/**
 * A registration's URL, normalized: https or http (or file under --git-mirror-file-root), a host,
 * no password, no query or fragment. A user name alone is kept (the credential's user). Throws
 * Invalid naming the rule; the answer never repeats a password the URL held.
 */
export function validateMirrorUrl(url: string, targets: MirrorTargets, localAddresses: readonly string[] = []): string {
  requireWellFormed(url, 'url');
  if (url.length > MAX_MIRROR_URL_LENGTH) throw new Invalid(`url is longer than ${MAX_MIRROR_URL_LENGTH} characters`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Invalid('url must be an absolute URL (https://host/path.git)');
  }
  if (parsed.password) throw new Invalid('url must not carry a password (user:password@); give credential: "env:NAME" or "file:NAME" instead');
  if (parsed.search || parsed.hash || url.includes('#') || url.includes('?')) throw new Invalid('url must not have a query or a fragment');
  if (parsed.protocol === 'file:') {
    if (targets.fileRoot === null) throw new Invalid('url: file:// mirrors are refused (they reach the server\'s own disk); cairn serve --git-mirror-file-root DIR allows them under DIR');
    if (parsed.host !== '' || parsed.username) throw new Invalid('url: a file:// URL names no host (file:///path/to/repo.git)');
    const p = decodeURIComponent(parsed.pathname);
    if (p.includes('\0')) throw new Invalid('url: the path holds a NUL');
    if (!insideRoot(p, targets.fileRoot)) throw new Invalid('url: a file:// mirror must lie under the directory cairn serve --git-mirror-file-root names');
    return parsed.href;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new Invalid('url must be an https or http URL (ssh is not supported)');
  if (!parsed.hostname) throw new Invalid('url must name a host');
  if (parsed.href.length > MAX_MIRROR_URL_LENGTH) throw new Invalid(`url is longer than ${MAX_MIRROR_URL_LENGTH} characters`);
  checkMirrorHost(parsed, targets.network, localAddresses);
  return parsed.href;
}

/** `p` (absolute, as given) lies in `root` once `.` and `..` are resolved. */
export function insideRoot(p: string, root: string): boolean {
  if (!path.isAbsolute(p)) return false;
  const rel = path.relative(root, path.resolve(p));
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

const bracketless = (host: string): string => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);
const isIpLiteral = (h: string): boolean => /^[0-9.]+$/.test(h) || h.includes(':');

/** A literal address or a loopback name is judged at registration; any other name at each push, once resolved. */
function checkMirrorHost(url: URL, targets: WebhookTargets, localAddresses: readonly string[]): void {
  const host = bracketless(url.hostname);
  const port = targetPort(url);
  const byHost = hostAllowed(targets, host);
  if (isIpLiteral(host)) {
    const r = refusal(targets, host, port, byHost, localAddresses);
    if (r?.kind === 'listener') throw new Invalid(`url: ${host}:${port} is this server's own listener; a mirror never pushes to it`);
    if (r) throw new Invalid(`url: ${host} is ${r.rule}; ${OPEN_HINT}`);
    return;
  }
  if (isLoopbackName(host)) {
    if (targets.listener && port === targets.listener.port) throw new Invalid(`url: ${host}:${port} is this server's own listener; a mirror never pushes to it`);
    if (!byHost) throw new Invalid(`url: ${host} is a loopback name; ${OPEN_HINT}`);
  }
}

/** A credential reference: `env:NAME` (an environment variable of the server) or `file:NAME` (a file in --git-credentials-dir). */
export function validateCredentialRef(ref: string | null | undefined): string | null {
  if (ref === undefined || ref === null) return null;
  const m = /^(env|file):(.*)$/s.exec(ref);
  if (!m) throw new Invalid('credential must be "env:NAME" (an environment variable of the server) or "file:NAME" (a file in the server\'s credentials directory)');
  const [, kind, name] = m;
  if (kind === 'env' && !ENV_NAME.test(name)) throw new Invalid('credential env:NAME: NAME must be an environment variable name (letters, digits, _)');
  if (kind === 'file' && (!CREDENTIAL_NAME.test(name) || name.includes('..'))) throw new Invalid('credential file:NAME: NAME must be a plain file name in the credentials directory (letters, digits, . _ -), never a path');
  return ref;
}

/** The wait before attempt `failures + 1`: base × 2^(failures − 1), capped. */
export function mirrorBackoffMs(failures: number, baseMs: number): number {
  return Math.min(MAX_MIRROR_BACKOFF_MS, baseMs * 2 ** Math.max(0, Math.min(30, failures - 1)));
}

/** Text fit to store and answer: `secrets` removed wherever they occur, cut to MAX_ERROR_LENGTH. */
export function scrubbed(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('***');
  out = out.replace(/(authorization:\s*)\S.*$/gim, '$1***');
  return out.length > MAX_ERROR_LENGTH ? `${out.slice(0, MAX_ERROR_LENGTH - 1)}…` : out;
}

/** The problems of a stored record (fsck): its id, fields and states. */
export function mirrorRecordProblems(id: string, r: GitMirrorRecord): string[] {
  const out: string[] = [];
  if (!r || typeof r !== 'object') return ['is not an object'];
  if (r.mirror_id !== id || id !== mirrorId(r.sequence)) out.push(`is not filed under mirror-<sequence> (${JSON.stringify(r.mirror_id)}, sequence ${r.sequence})`);
  if (typeof r.line !== 'string' || r.line === '') out.push('has no line');
  try {
    const u = new URL(r.url);
    if (u.password) out.push('has a password in its url');
    if (!['https:', 'http:', 'file:'].includes(u.protocol)) out.push(`has a url of scheme ${u.protocol}`);
  } catch {
    out.push('has no valid url');
  }
  if (r.credential !== null) {
    try {
      validateCredentialRef(r.credential);
    } catch (err) {
      out.push(`credential: ${(err as Error).message}`);
    }
  }
  if (!(MIRROR_STATES as readonly string[]).includes(r.state)) out.push(`has state ${JSON.stringify(r.state)}`);
  for (const k of ['last_pushed_commit_id', 'diverged_remote_commit_id'] as const) {
    if (r[k] !== null && !/^[0-9a-f]{40}$/.test(String(r[k]))) out.push(`${k} is not a commit id`);
  }
  if (r.state === 'diverged' && r.diverged_remote_commit_id === null && r.last_error === null) out.push('is diverged without a reason');
  if (r.removed && r.credential !== null) out.push('is removed but keeps its credential reference');
  return out;
}
