// Change search (`/ui/repos/N/search?q=`): a query box and the matching changes, newest first,
// paged like the changes list; the query language is the API's (docs/api.md "Searching
// changes"). SearchBox is the small form a header can carry: it opens this page.
import { html, useState } from '../vendor/preact.js';
import { get, repoPath, query } from '../api.js';
import { Async, navigate, useAsync, useLocation, useTitle } from '../util.js';
import { ChangeRows } from './home.js';

/** The search page's address for a repository and query (a cursor continues a walk). */
export const searchHref = (repo, q, cursor) => `/ui/repos/${encodeURIComponent(String(repo))}/search${query({ q, cursor })}`;

const EXAMPLES = ['status:review', 'is:open is:unresolved', 'file:lib/http', 'reviewer:core', 'owner:NAME', 'line:main', 'fix router'];

/**
 * A query box that opens the search page on submit. The top bar carries one on every page of a
 * repository (`id` "top-search"); the search page has its own. `/` focuses it (app.js), except on
 * the change page, where `/` filters the changed files.
 */
export function SearchBox({ repo, initial = '', autofocus = false, id = 'change-search', className = '', placeholder = 'Search changes: status:review file:lib words…' }) {
  const [q, setQ] = useState(initial);
  const submit = (e) => {
    e.preventDefault();
    if (q.trim() !== '') navigate(searchHref(repo, q.trim()));
  };
  return html`<form class=${`search-box ${className}`} role="search" aria-label="Changes" onSubmit=${submit}>
    <label class="sr-only" for=${id}>Search changes</label>
    <input class="input" id=${id} name="q" type="search" placeholder=${placeholder} value=${q}
      onInput=${(e) => setQ(e.currentTarget.value)} autofocus=${autofocus} maxlength="1024" autocomplete="off" />
    <button type="submit" class="btn small">Search</button>
  </form>`;
}

export function SearchPage({ repo }) {
  const loc = useLocation();
  const q = loc.params.get('q') ?? '';
  const cursor = loc.params.get('cursor') ?? '';
  useTitle(q ? `Search: ${q}` : 'Search changes');
  const page = useAsync(() => (q.trim() === '' ? Promise.resolve(null) : get(repoPath(repo, `/changes${query({ q, cursor, limit: 50 })}`))), [repo, q, cursor]);
  return html`<div class="page">
    <div class="page-head"><h1>Search changes</h1></div>
    <${SearchBox} repo=${repo} initial=${q} autofocus=${q === ''} key=${q} />
    ${q.trim() === ''
      ? html`<p class="muted">Terms, all of which a change matches: ${EXAMPLES.map((x, i) => html`${i ? ', ' : ''}<a href=${searchHref(repo, x)}><code>${x}</code></a>`)}.</p>`
      : html`<${Async} state=${page} what="search results">${(d) => (d === null ? null : html`
          <p class="muted" aria-live="polite">${d.count === 0 && !cursor ? 'No change matches.' : `${d.count} change${d.count === 1 ? '' : 's'}${d.next_cursor ? ' on this page' : ''}.`}</p>
          <${ChangeRows} repo=${repo} changes=${d.changes} empty="No change matches." />
          ${d.next_cursor ? html`<p><a class="btn" href=${searchHref(repo, q, d.next_cursor)}>More results →</a></p>` : null}`)}</${Async}>`}
  </div>`;
}
