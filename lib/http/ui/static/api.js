// The UI's only way to the data: fetch() to this origin's /v1 routes, the same public interface
// the CLI and runners use (no private shortcut into the store).
export const AUTHORITIES = '/v1/native/repository-authorities';

/** A path under one repository: repoPath(0, '/changes') → /v1/native/repository-authorities/0/changes. */
export const repoPath = (repo, rest = '') => `${AUTHORITIES}/${repo}${rest}`;

/** One path segment (identifiers are opaque: a ':' or '/' inside one must not split the path). */
export const seg = (value) => encodeURIComponent(String(value));

export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

export async function api(method, path, body) {
  const init = { method, headers: { accept: 'application/json' }, credentials: 'same-origin' };
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
    const message = json && typeof json.error === 'string' ? json.error : `HTTP ${res.status}`;
    throw new ApiError(res.status, message, json);
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
