// The reviewer UI: one page per URL under /ui/ (the server answers every /ui/* path with the
// same shell), rendered with preact + htm. Reads and writes go through ./api.js only.
import { html, render, useEffect, useState } from './vendor/preact.js';
import { interceptLinks, navigate, pathSegments, useIdentity, useLocation, ui, typing, RepoName } from './util.js';
import { DialogHost, changeName } from './dialogs.js';
import { LiveIndicator } from './live.js';
import { installScrollMemory } from './scroll.js';
import { ReposPage, Dashboard, ChangesPage } from './pages/home.js';
import { ChangePage } from './pages/change.js';
import { LinesPage, LinePage, SnapshotPage } from './pages/lines.js';
import { PlansPage, PlanPage, RevisionPage } from './pages/plans.js';
import { JobsPage, JobPage, LandPage, TaskPage } from './pages/jobs.js';
import { SearchPage, SearchBox } from './pages/search.js';
import { SettingsPage } from './pages/settings.js';
import { UNAUTHORIZED, setToken, token } from './api.js';
import { askSignIn, useSession, usesTokens } from './session.js';
import { SignIn } from './signin.js';

/**
 * The page for a path, and the breadcrumb trail above it. The server knows the same shapes
 * (lib/http/ui/routes.ts `uiPage`) and answers 404 for a path that is none of them.
 */
function route(segments) {
  const [a, repo, area, id, sub, subId] = segments;
  const n = segments.length;
  if (n === 0) return { page: html`<${ReposPage} />`, crumbs: [] };
  if (a !== 'repos' || repo === undefined || !/^(0|[1-9][0-9]*)$/.test(repo)) return { page: html`<${NotFound} />`, crumbs: [] };
  const r = Number(repo);
  const base = [{ href: ui.repo(r), label: html`<${RepoName} repo=${r} />` }];
  const props = { repo: r, key: segments.join('/') };
  if (area === undefined) return { page: html`<${Dashboard} ...${props} />`, crumbs: base };
  const one = (page, label, listHref, listLabel) => ({ page, crumbs: [...base, ...(listHref ? [{ href: listHref, label: listLabel }] : []), ...(label ? [{ label }] : [])] });
  switch (area) {
    case 'changes':
      if (id === undefined) return one(html`<${ChangesPage} ...${props} />`, 'changes');
      if (n === 4) return one(html`<${ChangePage} ...${props} changeRef=${id} />`, id, ui.changes(r), 'changes');
      break;
    case 'tasks':
      if (n === 4) return one(html`<${TaskPage} ...${props} taskId=${id} />`, id);
      break;
    case 'lines':
      if (id === undefined) return one(html`<${LinesPage} ...${props} />`, 'lines');
      if (n === 4) return one(html`<${LinePage} ...${props} name=${id} />`, id, ui.lines(r), 'lines');
      break;
    case 'snapshots':
      if (n === 4) return one(html`<${SnapshotPage} ...${props} snapshotId=${id} />`, id.slice(0, 12));
      break;
    case 'plans':
      if (id === undefined) return one(html`<${PlansPage} ...${props} />`, 'plans');
      if (n === 4) return one(html`<${PlanPage} ...${props} planId=${id} />`, id, ui.plans(r), 'plans');
      if (n === 6 && sub === 'revisions') return { page: html`<${RevisionPage} ...${props} planId=${id} revisionId=${subId} />`, crumbs: [...base, { href: ui.plans(r), label: 'plans' }, { href: ui.plan(r, id), label: id }, { label: subId }] };
      break;
    case 'jobs':
      if (id === undefined) return one(html`<${JobsPage} ...${props} />`, 'CI queue');
      if (n === 4) return one(html`<${JobPage} ...${props} index=${id} />`, `job ${id}`, ui.jobs(r), 'CI queue');
      break;
    case 'lands':
      if (n === 4) return one(html`<${LandPage} ...${props} landId=${id} />`, id);
      break;
    case 'settings':
      if (n === 3) return one(html`<${SettingsPage} ...${props} />`, 'settings');
      break;
    case 'search':
      // the key keeps one page across queries: the box and the results follow ?q= and ?cursor=
      if (n === 3) return one(html`<${SearchPage} ...${props} />`, 'search');
      break;
    default:
  }
  return { page: html`<${NotFound} />`, crumbs: base };
}

function NotFound() {
  return html`<div class="page"><h1>No such page</h1><p><a href="/ui/">Back to the repositories</a></p></div>`;
}

function Identity({ session, onSignIn }) {
  const id = useIdentity();
  if (id.source === 'session') {
    const viaToken = usesTokens(session) && !!token();
    return html`<span class="identity" title=${viaToken ? 'signed in with a personal access token (kept in this tab only)' : 'named by the front door'}>
      <span class="muted">signed in as</span> <strong class="account-name">${id.name}</strong>
      ${viaToken ? html`<button type="button" class="btn link small sign-out" onClick=${() => setToken(null)}>Sign out</button>` : null}
    </span>`;
  }
  if (usesTokens(session)) {
    return html`<span class="identity"><span class="muted">not signed in</span>
      <button type="button" class="btn link small sign-in" onClick=${onSignIn}>Sign in</button></span>`;
  }
  if (id.source === 'header') {
    return html`<span class="identity" title=${`from the ${id.header} request header`}>${id.name ? html`<span class="muted">signed in as</span> <strong>${id.name}</strong>` : html`<span class="warn-text">no ${id.header} header</span>`}</span>`;
  }
  return html`<span class="identity">
    ${id.name ? html`<span class="muted">reviewing as</span> <strong>${id.name}</strong>` : html`<span class="muted">anonymous</span>`}
    <button type="button" class="btn link small" onClick=${() => changeName()}>${id.name ? 'change' : 'set your name'}</button>
  </span>`;
}

function Shortcuts({ onClose }) {
  return html`<div class="shortcuts" role="dialog" aria-label="Keyboard shortcuts">
    <h2>Keyboard shortcuts</h2>
    <dl>
      <dt><kbd>j</kbd> / <kbd>k</kbd></dt><dd>next / previous file in the diff</dd>
      <dt><kbd>n</kbd> / <kbd>p</kbd></dt><dd>next / previous unresolved comment thread</dd>
      <dt><kbd>N</kbd> / <kbd>P</kbd></dt><dd>next / previous hunk</dd>
      <dt><kbd>v</kbd></dt><dd>mark the current file viewed (it folds) or not viewed</dd>
      <dt><kbd>/</kbd></dt><dd>on a change: filter the changed files; elsewhere: search the repository's changes</dd>
      <dt><kbd>↓</kbd> / <kbd>↑</kbd></dt><dd>from a file's header into its lines, then line by line</dd>
      <dt><kbd>c</kbd></dt><dd>comment on the focused diff line (or click its line number; shift-click or drag for a range)</dd>
      <dt><kbd>r</kbd></dt><dd>reply to the focused thread</dd>
      <dt>line number</dt><dd>a click puts the line's link in the address bar (<code>#file=…&line=R12</code>) and marks the line</dd>
      <dt><kbd>o</kbd></dt><dd>collapse or expand the current file (<kbd>Enter</kbd> on a file's header too)</dd>
      <dt><kbd>u</kbd> / <kbd>s</kbd></dt><dd>unified or side-by-side diff</dd>
      <dt><kbd>g</kbd> <kbd>d</kbd></dt><dd>the repository's dashboard</dd>
      <dt><kbd>?</kbd></dt><dd>this help</dd>
      <dt><kbd>Esc</kbd></dt><dd>close it</dd>
    </dl>
    <button type="button" class="btn" onClick=${onClose}>Close</button>
  </div>`;
}

/**
 * Whether the page shows the sign-in form instead of itself, and why: a request answered 401 on
 * a server that signs in with tokens, the stored token was refused, or the person asked.
 */
function useSignIn(session, failure) {
  const [asked, setAsked] = useState(null);
  useEffect(() => {
    // (the server's words name headers and the CLI: the form itself says what to do)
    const f = (e) => setAsked(e.detail?.reason ?? 'This page is open only to signed-in people: sign in to see it.');
    addEventListener(UNAUTHORIZED, f);
    return () => removeEventListener(UNAUTHORIZED, f);
  }, []);
  // signed in (or out) since: the form goes
  const account = session?.account ?? null;
  useEffect(() => { if (account) setAsked(null); }, [account]);
  if (!usesTokens(session) || account) return { reason: null };
  if (failure && failure.status === 401) return { reason: 'Your token was not accepted any more (expired or revoked): sign in again.' };
  if (failure && failure.status === 429) return { reason: failure.message };
  return { reason: asked };
}

function App() {
  const loc = useLocation();
  const segments = pathSegments(loc.path);
  const { session, failure } = useSession();
  const signIn = useSignIn(session, failure);
  const { page, crumbs } = session === undefined
    ? { page: html`<div class="page"><p class="loading" role="status">Loading…</p></div>`, crumbs: [] }
    : signIn.reason !== null ? { page: html`<${SignIn} reason=${signIn.reason} />`, crumbs: [{ label: 'sign in' }] }
      : route(segments);
  const [help, setHelp] = useState(false);
  const repoPage = segments[0] === 'repos' && segments[1] !== undefined && /^(0|[1-9][0-9]*)$/.test(segments[1]);
  const changePage = repoPage && segments[2] === 'changes' && segments.length === 4;
  const searchPage = repoPage && segments[2] === 'search';
  useEffect(() => {
    let pendingG = false;
    const onKey = (e) => {
      if (typing(e) || e.metaKey || e.ctrlKey || e.altKey) return;
      if (e.key === '?') {
        setHelp((h) => !h);
        e.preventDefault();
      } else if (e.key === 'Escape') setHelp(false);
      else if (e.key === '/' && !changePage) {
        // the change page keeps `/` for its file filter (diff.js); everywhere else it is search
        const box = document.getElementById('change-search') ?? document.getElementById('top-search');
        if (box) {
          box.focus();
          box.select();
          e.preventDefault();
        }
      }
      else if (e.key === 'g') {
        pendingG = true;
        setTimeout(() => { pendingG = false; }, 800);
        return;
      } else if (pendingG && e.key === 'd' && segments[0] === 'repos' && segments[1] !== undefined) {
        navigate(ui.repo(segments[1]));
      }
      pendingG = false;
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [loc.path]);
  return html`
    <a class="skip" href="#main">Skip to content</a>
    <header class="topbar">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a class="brand" href="/ui/"><span class="brand-mark" aria-hidden="true"></span>cairn</a>
        ${crumbs.map((c) => html`<span class="sep" aria-hidden="true">/</span>${c.href ? html`<a href=${c.href}>${c.label}</a>` : html`<span aria-current="page">${c.label}</span>`}`)}
      </nav>
      ${repoPage && !searchPage && signIn.reason === null && session !== undefined ? html`<${SearchBox} repo=${Number(segments[1])} id="top-search" className="top-search" placeholder="Search changes ( / )" key=${segments[1]} />` : null}
      <div class="topbar-right">
        <${LiveIndicator} />
        <${Identity} session=${session} onSignIn=${askSignIn} />
        <button type="button" class="btn link small" onClick=${() => setHelp((h) => !h)} aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)">?</button>
      </div>
    </header>
    <main id="main" tabindex="-1" key=${session === undefined ? 'loading' : session.account ?? 'anonymous'}>${page}</main>
    ${help ? html`<${Shortcuts} onClose=${() => setHelp(false)} />` : null}
    <${DialogHost} />
  `;
}

const root = document.getElementById('app');
interceptLinks(document);
installScrollMemory();
root.textContent = '';
render(html`<${App} />`, root);
