// Shared pieces of the pages: the router (History API, path-based URLs under /ui/), a data
// hook, formatting, status badges and the reviewer's identity. Every string from the server is
// rendered as text through preact, which escapes it.
import { html, useState, useEffect, useRef, useCallback } from './vendor/preact.js';
import { get, repoPath } from './api.js';
import { saveScroll } from './scroll.js';
import { currentSession, SESSION_CHANGED } from './session.js';

// ---------------------------------------------------------------- URLs of the pages

const s = (v) => encodeURIComponent(String(v));
export const ui = {
  home: () => '/ui/',
  repo: (r) => `/ui/repos/${s(r)}`,
  changes: (r, status) => `/ui/repos/${s(r)}/changes${status ? `?status=${s(status)}` : ''}`,
  change: (r, ref, params = {}) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
    const qs = q.toString();
    return `/ui/repos/${s(r)}/changes/${s(ref)}${qs ? `?${qs}` : ''}`;
  },
  task: (r, id) => `/ui/repos/${s(r)}/tasks/${s(id)}`,
  lines: (r) => `/ui/repos/${s(r)}/lines`,
  line: (r, name) => `/ui/repos/${s(r)}/lines/${s(name)}`,
  plans: (r) => `/ui/repos/${s(r)}/plans`,
  plan: (r, id) => `/ui/repos/${s(r)}/plans/${s(id)}`,
  revision: (r, plan, rev) => `/ui/repos/${s(r)}/plans/${s(plan)}/revisions/${s(rev)}`,
  jobs: (r) => `/ui/repos/${s(r)}/jobs`,
  job: (r, index) => `/ui/repos/${s(r)}/jobs/${s(index)}`,
  land: (r, id) => `/ui/repos/${s(r)}/lands/${s(id)}`,
  snapshot: (r, id) => `/ui/repos/${s(r)}/snapshots/${s(id)}`,
  settings: (r) => `/ui/repos/${s(r)}/settings`,
};

// ---------------------------------------------------------------- router

const NAVIGATE = 'cairn:navigate';

export function navigate(url, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', url);
  else {
    saveScroll(); // Back returns here (scroll.js)
    history.pushState(null, '', url);
  }
  dispatchEvent(new Event(NAVIGATE));
}

/** Re-renders on every navigation (links, back/forward); returns the current location. */
export function useLocation() {
  const [, setTick] = useState(0);
  useEffect(() => {
    const bump = () => setTick((n) => n + 1);
    addEventListener('popstate', bump);
    addEventListener(NAVIGATE, bump);
    return () => {
      removeEventListener('popstate', bump);
      removeEventListener(NAVIGATE, bump);
    };
  }, []);
  return { path: location.pathname, params: new URLSearchParams(location.search), hash: location.hash };
}

/** Same-origin /ui/ links navigate without a reload (unless opened in a new tab or window). */
export function interceptLinks(root) {
  root.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = e.target.closest && e.target.closest('a[href]');
    if (!a || a.target || a.hasAttribute('download')) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !url.pathname.startsWith('/ui/')) return;
    e.preventDefault();
    if (url.pathname === location.pathname && url.search === location.search && url.hash) {
      saveScroll();
      history.pushState(null, '', url.href);
      dispatchEvent(new HashChangeEvent('hashchange'));
      return;
    }
    navigate(url.pathname + url.search + url.hash);
    if (!url.hash) scrollTo(0, 0);
  });
}

/** A path split into decoded segments: /ui/repos/0/lines/a%2Fb → ['repos', '0', 'lines', 'a/b']. */
export function pathSegments(pathname) {
  return pathname.replace(/^\/ui\/?/, '').split('/').filter(Boolean).map((x) => {
    try {
      return decodeURIComponent(x);
    } catch {
      return x;
    }
  });
}

// ---------------------------------------------------------------- data

/**
 * Runs `load()` when `deps` change; { data, error, loading, reload }. An answer that arrives
 * after the deps changed again is dropped. A failed reload keeps the data read before (with
 * the error beside it), so a page that was showing something does not go blank.
 */
export function useAsync(load, deps) {
  const [state, setState] = useState({ data: undefined, error: null, loading: true });
  const generation = useRef(0);
  const run = useCallback(() => {
    const mine = ++generation.current;
    setState((st) => ({ ...st, loading: true }));
    load().then(
      (data) => { if (generation.current === mine) setState({ data, error: null, loading: false }); },
      (error) => { if (generation.current === mine) setState((st) => ({ data: st.data, error, loading: false })); },
    );
  }, deps);
  useEffect(() => {
    run();
  }, [run]);
  return { ...state, reload: run };
}

/** Sets document.title while mounted. */
export function useTitle(title) {
  useEffect(() => {
    document.title = title ? `${title} · cairn` : 'cairn';
  }, [title]);
}

// ---------------------------------------------------------------- formatting

export function ago(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  const d = Math.round(Date.now() / 1000 - seconds);
  if (d < 45) return 'just now';
  if (d < 90) return '1 minute ago';
  if (d < 3600) return `${Math.round(d / 60)} minutes ago`;
  if (d < 5400) return '1 hour ago';
  if (d < 86400) return `${Math.round(d / 3600)} hours ago`;
  if (d < 172800) return 'yesterday';
  if (d < 30 * 86400) return `${Math.round(d / 86400)} days ago`;
  return new Date(seconds * 1000).toISOString().slice(0, 10);
}

export function dateTime(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  const d = new Date(seconds * 1000);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** A time with its exact value on hover. */
export const Time = ({ s }) => html`<time datetime=${s ? new Date(s * 1000).toISOString() : ''} title=${dateTime(s)}>${ago(s)}</time>`;

export const short = (id, n = 12) => (id ? String(id).slice(0, n) : '—');

/** A snapshot id, shortened, with the full id on hover; a link to its page when `repo` is given. */
export const Snap = ({ id, repo }) => {
  if (!id) return html`<span class="muted">none</span>`;
  const code = html`<code class="snap" title=${id}>${short(id)}</code>`;
  return repo === undefined ? code : html`<a class="id-link" href=${ui.snapshot(repo, id)}>${code}</a>`;
};

/** The change a patchset belongs to: patchset ids are `<change_id>.ps-<number>`. */
export const changeOfPatchset = (id) => String(id).replace(/\.ps-[0-9]+$/, '');

/** A patchset id, linked to its change's page showing that patchset (`#anchor` optional: `policy`, `attestation`). */
export const PsLink = ({ repo, id, anchor }) => (id
  ? html`<a class="id-link" href=${`${ui.change(repo, changeOfPatchset(id), { ps: id })}${anchor ? `#${anchor}` : ''}`}><code>${id}</code></a>`
  : html`<span class="muted">none</span>`);

/** A record id that lives on its patchset's change page (a policy decision, an attestation): `<patchset_id>.kind-N`. */
export const RecordLink = ({ repo, id, anchor }) => {
  const m = /^(.*\.ps-[0-9]+)\.[a-z]+-[0-9]+$/.exec(String(id));
  if (!m) return html`<code>${id}</code>`;
  return html`<a class="id-link" href=${`${ui.change(repo, changeOfPatchset(m[1]), { ps: m[1] })}#${anchor}`}><code>${id}</code></a>`;
};

/** A change ref or id, linked to the change's page. */
export const ChangeLink = ({ repo, id, label }) => html`<a class="id-link" href=${ui.change(repo, id)}><code>${label ?? id}</code></a>`;

/** A line name, linked to its history. */
export const LineLink = ({ repo, name }) => html`<a class="id-link" href=${ui.line(repo, name)}><code>${name}</code></a>`;

export const NUMBER = new Intl.NumberFormat('en');
export const plural = (n, one, many = `${one}s`) => `${NUMBER.format(n)} ${n === 1 ? one : many}`;

// ---------------------------------------------------------------- badges

const TONES = {
  pass: 'good', landed: 'good', succeeded: 'good', approved: 'good', active: 'info', completed: 'good', yes: 'good', available: 'good',
  fail: 'bad', failed: 'bad', error: 'bad', blocked: 'bad', rejected: 'bad', command_failed: 'bad', timed_out: 'bad', exhausted: 'bad', no: 'bad',
  pending: 'warn', queued: 'warn', running: 'warn', testing: 'warn', stalled: 'bad', ejected: 'bad', removed: 'plain', review: 'accent', in_review: 'accent', retry_scheduled: 'warn', unknown: 'warn', not_evaluated: 'warn',
  draft: 'plain', none: 'plain', skipped: 'plain', archived: 'plain', abandoned: 'plain', superseded: 'plain',
};

export function Badge({ value, tone, title }) {
  const text = value === null || value === undefined ? '—' : String(value);
  return html`<span class=${`badge tone-${tone ?? TONES[text] ?? 'plain'}`} title=${title}>${text.replace(/_/g, ' ')}</span>`;
}

export const JOB_STATES = { 1: 'queued', 2: 'running', 3: 'succeeded', 4: 'failed' };

const CI_JOB_TYPES = ['patchset.ci', 'repo.ci'];

/**
 * What a finished CI job says about the code: `pass`, `fail`, `timed_out` or `superseded` (a
 * newer run replaced it). The server derives it (`ci_outcome` of the job projection,
 * lib/domain/jobs.ts `ciOutcome`, the rule the land gate judges a result by) and the page shows
 * that; a job read from a projection without it is judged here by the same rule. Null while the
 * job is queued or running, and for a job that is not a CI run (its state is all there is to
 * say then). The job *state* `succeeded` only means the runner reported back, whatever the
 * tests did.
 */
export function jobOutcome(j) {
  if (!j || !CI_JOB_TYPES.includes(j.job_type)) return null;
  if (j.ci_outcome !== undefined) return j.ci_outcome;
  if (j.outcome === null || j.outcome === undefined) return null;
  if (j.outcome === 'superseded') return 'superseded';
  if (j.state_kind === 4 || j.outcome === 'failed') return 'fail';
  if (j.outcome === 'timed_out' || j.ci?.status === 'timed_out') return 'timed_out';
  if (j.ci) return j.ci.status === 'succeeded' && j.ci.tests_status === 'pass' && !j.ci.blocking_failure_count ? 'pass' : 'fail';
  if (j.outcome === 'command_failed') return 'fail';
  // A land-queue run may complete without a result: its runner reports failures through :fail
  // (docs/land-queue.md), so a completion is a pass.
  return j.job_type === 'repo.ci' && j.outcome === 'succeeded' ? 'pass' : null;
}

export const OUTCOME_TITLES = {
  pass: 'the run succeeded and its tests pass',
  fail: 'the tests (or a blocking suite) failed, the command failed, or the runner gave up',
  timed_out: 'the run timed out',
  superseded: 'a newer CI run of the patchset replaced this one',
};

/** A job's CI outcome as the badge, its state beside it as text (the state alone while it runs). */
export function JobOutcome({ j }) {
  const state = j.state ?? JOB_STATES[j.state_kind];
  const outcome = jobOutcome(j);
  if (outcome === null) return html`<span class="job-outcome"><${Badge} value=${state} title="job state" /></span>`;
  return html`<span class="job-outcome"><${Badge} value=${outcome} title=${OUTCOME_TITLES[outcome]} /> <span class="muted small job-state" title="job state">${state}</span></span>`;
}

// ---------------------------------------------------------------- small components

export function Loading({ what = 'Loading' }) {
  return html`<p class="loading" role="status">${what}…</p>`;
}

export function ErrorNote({ error, what }) {
  if (!error) return null;
  return html`<div class="error-note" role="alert"><strong>${what ? `${what}: ` : ''}</strong>${error.status ? `HTTP ${error.status}: ` : ''}${error.message}</div>`;
}

/** The three states of a useAsync result: loading, error, or the children rendered with the data. */
export function Async({ state, what, children }) {
  if (state.error) return html`<${ErrorNote} error=${state.error} what=${what} />`;
  if (state.data === undefined) return html`<${Loading} what=${what ? `Loading ${what}` : 'Loading'} />`;
  return children(state.data);
}

/** A read that may fail on its own (see `settle`): { data } or { error }. */
export const settle = (promise) => promise.then((data) => ({ data, error: null }), (error) => ({ data: undefined, error }));

/** A part of a page that failed to load: what and why, and a Retry (which reads the page's data again). */
export function PartError({ error, what, retry, busy }) {
  return html`<div class="part-error">
    <${ErrorNote} error=${error} what=${`Could not load ${what}`} />
    ${retry ? html`<button type="button" class="btn small" onClick=${retry} disabled=${busy}>${busy ? 'Retrying…' : 'Retry'}</button>` : null}
  </div>`;
}

/**
 * One card's data from a settled read: its children with the data, or the card with the error
 * and a Retry, so one failed request leaves the rest of the page as it is.
 */
export function Part({ part, title, id, what, retry, busy, children }) {
  if (!part) return null;
  if (part.error) {
    const body = html`<${PartError} error=${part.error} what=${what ?? (typeof title === 'string' ? title.toLowerCase() : 'this part')} retry=${retry} busy=${busy} />`;
    return title ? html`<${Card} title=${title} id=${id} className="failed">${body}</${Card}>` : body;
  }
  return children(part.data);
}

export function Empty({ children }) {
  return html`<p class="empty">${children}</p>`;
}

export function Card({ title, right, children, id, className = '' }) {
  return html`<section class=${`card ${className}`} id=${id} aria-label=${typeof title === 'string' ? title : undefined}>
    ${title ? html`<header class="card-head"><h2>${title}</h2>${right ? html`<div class="card-right">${right}</div>` : null}</header>` : null}
    <div class="card-body">${children}</div>
  </section>`;
}

const repoNames = new Map();

/** A repository's name (read once per page load), its index until then. */
export function RepoName({ repo }) {
  const [name, setName] = useState(repoNames.get(repo) ?? null);
  useEffect(() => {
    if (name !== null) return;
    get(repoPath(repo)).then((r) => {
      repoNames.set(repo, r.repository.repository_name);
      setName(r.repository.repository_name);
    }, () => { /* the page itself reports the error */ });
  }, [repo]);
  return name ?? `repository ${repo}`;
}

// ---------------------------------------------------------------- identity

const NAME_KEY = 'cairn.reviewer';
let memoryName = null;

function meta(name) {
  const el = document.querySelector(`meta[name="${name}"]`);
  return el ? el.getAttribute('content') : null;
}

/**
 * Who acts. With `cairn serve --ui-identity-header H` the server hands the page the header's
 * value (a <meta> the server escaped); otherwise the reviewer names themselves once and the
 * name is kept in localStorage. The interface itself has no caller identity.
 */
export function identity() {
  // Signed in (a token, or the front door with accounts): the server names the caller, and
  // every action is recorded under that name whatever a body says.
  const s = currentSession();
  if (s && s.account) return { source: 'session', header: null, name: s.account, mode: s.auth_mode };
  const header = meta('cairn-identity-header');
  if (header !== null) return { source: 'header', header, name: meta('cairn-identity') || null };
  let name = memoryName;
  try {
    name = localStorage.getItem(NAME_KEY) || memoryName;
  } catch {
    /* storage disabled: keep the name for this page only */
  }
  return { source: 'local', header: null, name };
}

export function setReviewerName(name) {
  memoryName = name;
  try {
    localStorage.setItem(NAME_KEY, name);
  } catch {
    /* storage disabled */
  }
  dispatchEvent(new Event('cairn:identity'));
}

export function useIdentity() {
  const [id, setId] = useState(identity);
  useEffect(() => {
    const f = () => setId(identity());
    addEventListener('cairn:identity', f);
    addEventListener(SESSION_CHANGED, f);
    addEventListener('storage', f);
    return () => {
      removeEventListener('cairn:identity', f);
      removeEventListener(SESSION_CHANGED, f);
      removeEventListener('storage', f);
    };
  }, []);
  return id;
}

/** True when focus is in a field where keys are text (keyboard shortcuts stay out of the way). */
export function typing(e) {
  const t = e.target;
  if (!t) return false;
  // a checkbox or a radio button takes no text: the page's keys still work there (a file's Viewed box)
  if (t.tagName === 'INPUT' && (t.type === 'checkbox' || t.type === 'radio')) return false;
  return t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName);
}
