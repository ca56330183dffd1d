// Who is looking (GET /v1/native/session) and what they may do in a repository
// (`?repository_index=N` → `may`, the operations of the route table their role allows there).
// The pages show only the controls whose operation is in `may`; the server decides anyway, so
// this is about not offering what would be refused, never about security.
import { useEffect, useState } from './vendor/preact.js';
import { AUTH_CHANGED, ApiError, UNAUTHORIZED, api, forgetToken, query, token } from './api.js';
import { OP_ROLE, ROLES } from './roles.js';

const SESSION = '/v1/native/session';
export const SESSION_CHANGED = 'cairn:session';

/**
 * The session as last read: undefined until read, then the route's answer, or
 * `{ auth_mode: 'none', ... }` when the server has no such route (an older server: no accounts).
 */
let current;
/** Why the last read failed (a 401 for a token the server does not take), else null. */
let failure = null;
let reading = null;
/** A kept token was refused by some request and dropped: the next session read reports it. */
let dropped = false;
/** Bumped whenever the token changes: cached repository sessions of an older one are dropped. */
let generation = 0;
const repoSessions = new Map();

const NO_ACCOUNTS = { auth_mode: 'none', account: null, server_admin: false, scopes: null, token_id: null, repository_index: null, role: null, may: null };

export const currentSession = () => current;
export const sessionFailure = () => failure;
/** True when the server signs callers in with tokens (alone or beside a front door). */
export const usesTokens = (s) => !!s && typeof s.auth_mode === 'string' && s.auth_mode.split('+').includes('tokens');

/** Show the sign-in form (the person asked for it). */
export function askSignIn() {
  dispatchEvent(new CustomEvent(UNAUTHORIZED, { detail: { reason: 'Paste your token to sign in.' } }));
}

/** Read the session again (after signing in or out, or at start). */
export function loadSession() {
  let mine = generation;
  const ask = () => api('GET', SESSION, undefined, { quiet: true });
  reading = (async () => {
    let s;
    let why = null;
    try {
      s = await ask();
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) s = NO_ACCOUNTS;
      else if (e instanceof ApiError && e.status === 401 && token()) {
        // The kept token is refused now (expired, revoked): forget it, read who we are
        // without it, and keep why, so the sign-in form can say so.
        forgetToken();
        // what was read with it (a repository's `may`) is no longer so
        if (mine === generation) {
          generation += 1;
          mine = generation;
          repoSessions.clear();
        }
        why = e;
        s = await ask().catch(() => ({ ...NO_ACCOUNTS, auth_mode: 'tokens' }));
      } else {
        why = e;
        s = current ?? { ...NO_ACCOUNTS, auth_mode: e instanceof ApiError && e.status === 429 ? 'tokens' : 'none' };
      }
    }
    if (mine !== generation) return;
    current = s;
    failure = why ?? (dropped ? new ApiError(401, 'the token was refused', null) : null);
    dropped = false;
    dispatchEvent(new Event(SESSION_CHANGED));
  })();
  return reading;
}

// A request refused with 401 while signed in: the token may have been revoked or expired since.
// Reading the session again finds out (and forgets the token, so the form says why).
addEventListener(UNAUTHORIZED, (e) => {
  if (!e.detail?.expired || !current?.account) return;
  // the token was dropped (./api.js tokenRefused): read who we are without it, and say why
  generation += 1;
  repoSessions.clear();
  dropped = true;
  loadSession();
});

addEventListener(AUTH_CHANGED, () => {
  dropped = false;
  generation += 1;
  repoSessions.clear();
  loadSession();
});

/** The session, re-rendering when it changes: { session (undefined while read), failure }. */
export function useSession() {
  const [, setTick] = useState(0);
  useEffect(() => {
    const f = () => setTick((n) => n + 1);
    addEventListener(SESSION_CHANGED, f);
    if (current === undefined && reading === null) loadSession();
    return () => removeEventListener(SESSION_CHANGED, f);
  }, []);
  return { session: current, failure };
}

function readRepoSession(repo) {
  const key = `${generation}:${repo}`;
  let p = repoSessions.get(key);
  if (!p) {
    p = api('GET', `${SESSION}${query({ repository_index: repo })}`, undefined, { quiet: true }).then(
      (s) => ({ role: s.role, may: s.may ? new Set(s.may) : null, scopes: s.scopes ?? null, account: s.account, auth_mode: s.auth_mode }),
      // No session route or no answer: offer everything (the server still refuses what it refuses).
      () => ({ role: null, may: null, scopes: null, account: null, auth_mode: null }),
    );
    repoSessions.set(key, p);
  }
  return p;
}

/**
 * The viewer's role and allowed operations in repository `repo`: { loaded, role, may(op) }.
 * `may(op)` is false until the answer is read (controls appear once known, never vanish).
 */
export function useRepoAccess(repo) {
  // No auth mode: every operation is open, known at once (no read, nothing appears late).
  const [state, setState] = useState(() => (current?.auth_mode === 'none' ? { loaded: true, role: null, may: null } : { loaded: false, role: null, may: null }));
  const [gen, setGen] = useState(generation);
  useEffect(() => {
    const f = () => setGen(generation);
    addEventListener(SESSION_CHANGED, f);
    return () => removeEventListener(SESSION_CHANGED, f);
  }, []);
  useEffect(() => {
    let live = true;
    if (current?.auth_mode === 'none') return undefined;
    readRepoSession(repo).then((r) => { if (live) setState({ loaded: true, role: r.role, may: r.may, scopes: r.scopes }); });
    return () => { live = false; };
  }, [repo, gen]);
  return {
    loaded: state.loaded,
    role: state.role,
    /** The token's scopes (null: not a token, or every scope). */
    scopes: state.scopes ?? null,
    may: (op) => state.loaded && (state.may === null || state.may.has(op)),
  };
}

/**
 * Why an operation is not open to the viewer, in words: "Landing needs the maintainer role", or,
 * when the role is enough, "… needs a token with the write scope".
 */
export function needs(access, op, what) {
  const role = OP_ROLE[op];
  if (role && ROLES.indexOf(access.role) >= ROLES.indexOf(role)) {
    return `${what} needs a token with the ${role === 'admin' ? 'admin' : 'write'} scope; this one has ${(access.scopes ?? []).join(', ') || 'none'} (cairn token create --scopes …)`;
  }
  return `${what} ${role ? `needs the ${role} role` : 'is not open to you'}`;
}

/** "You have the reader role here; a repository admin grants roles." */
export function yourRole(access) {
  return `${access.role ? `You have the ${access.role} role here` : 'You have no role in this repository'}; a repository admin grants roles.`;
}
