// The UI's only way to the data: fetch() to this origin's /v1 routes, the same public interface
// the CLI and runners use (no private shortcut into the store).
export const AUTHORITIES = '/v1/native/repository-authorities';

/** A path under one repository: repoPath(0, '/changes') → /v1/native/repository-authorities/0/changes. */
export const repoPath = (repo, rest = '') => `${AUTHORITIES}/${repo}${rest}`;

/** One path segment (identifiers are opaque: a ':' or '/' inside one must not split the path). */
export const seg = (value) => encodeURIComponent(String(value));

// ---------------------------------------------------------------- the signed-in token

/**
 * With `cairn serve --auth tokens` the page signs in with a personal access token, kept in
 * sessionStorage (this tab only, gone when it closes; docs/ui.md "Signing in" says why not
 * localStorage or a cookie) and sent as `Authorization: Bearer` on every request of this module.
 * It never goes into a URL, the page's text or the console.
 */
const TOKEN_KEY = 'cairn.token';
let memoryToken = null;
export const AUTH_CHANGED = 'cairn:auth';
/** Dispatched when a request answers 401: the app shows the sign-in form. */
export const UNAUTHORIZED = 'cairn:unauthorized';

export function token() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || memoryToken;
  } catch {
    return memoryToken; // storage disabled: the token lasts as long as the page
  }
}

function keep(value) {
  memoryToken = value || null;
  try {
    if (value) sessionStorage.setItem(TOKEN_KEY, value);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    /* storage disabled */
  }
}

/** Keep `value` as the token of this tab (null: sign out), and tell the app. */
export function setToken(value) {
  keep(value);
  dispatchEvent(new Event(AUTH_CHANGED));
}

/** Drop a token the server refused (expired, revoked), without the sign-out event: the caller says why. */
export const forgetToken = () => keep(null);

/**
 * A request that carried the kept token answered 401: the token was revoked or expired. It is
 * dropped at once, so the page's next requests do not send it again (each would count as a
 * failed sign-in, and the server stops answering an address after ten a minute), and the app
 * is told, to ask for a new one.
 */
export function tokenRefused(sent) {
  if (!sent || sent !== token()) return;
  forgetToken();
  dispatchEvent(new CustomEvent(UNAUTHORIZED, { detail: { expired: true } }));
}

/** The headers every request of the page carries: the token, when signed in with one. */
export function authHeaders(bearer = token()) {
  return bearer ? { authorization: `Bearer ${bearer}` } : {};
}

export class ApiError extends Error {
  constructor(status, message, body, statusText = '') {
    super(message);
    this.status = status;
    this.body = body;
    /** The HTTP reason phrase (`Bad Gateway`), for an answer that is not the server's JSON (a proxy's). */
    this.statusText = statusText;
  }
}

export async function api(method, path, body, { bearer, quiet = false } = {}) {
  const sent = bearer ?? token();
  const init = { method, headers: { accept: 'application/json', ...authHeaders(sent) }, credentials: 'same-origin' };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (err) {
    throw new ApiError(0, `the server did not answer (${err.message})`, null);
  }
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!res.ok) {
    const message = json && typeof json.error === 'string' ? json.error : `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
    if (res.status === 401 && !quiet) {
      if (sent && sent === token()) tokenRefused(sent);
      else dispatchEvent(new CustomEvent(UNAUTHORIZED, { detail: { message } }));
    }
    throw new ApiError(res.status, message, json, res.statusText);
  }
  return json;
}

export const get = (path) => api('GET', path);
export const post = (path, body = {}) => api('POST', path, body);
export const put = (path, body = {}) => api('PUT', path, body);
export const del = (path) => api('DELETE', path);

/** A query string from an object, skipping null/undefined; arrays repeat the key. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === null || v === undefined || v === '') continue;
    if (Array.isArray(v)) for (const x of v) q.append(k, String(x));
    else q.append(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

/**
 * Every row of a paged list (README "Lists and pagination": `limit`, `cursor`, `next_cursor`),
 * up to `max` rows. Returns { rows, more } where `more` says rows were left.
 */
export async function listAll(path, key, { max = 5000, params = {} } = {}) {
  const rows = [];
  let cursor = null;
  for (;;) {
    const page = await get(path + query({ ...params, limit: Math.min(1000, max - rows.length), cursor }));
    rows.push(...(page[key] ?? []));
    cursor = page.next_cursor ?? null;
    if (cursor === null) return { rows, more: false };
    if (rows.length >= max) return { rows, more: true };
  }
}

/** A random idempotency key (crypto.randomUUID needs a secure context; getRandomValues does not). */
export function randomKey(prefix = 'ui') {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `${prefix}-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}
