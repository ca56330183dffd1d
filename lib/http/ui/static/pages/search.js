// Change search (`/ui/repos/N/search?q=`): a query box and the matching changes, newest first,
// paged like the changes list; the query language is the API's (docs/api.md "Searching
// changes"). SearchBox is the small form a header can carry: it opens this page.
import { html, useState } from '../vendor/preact.js';
import { get, repoPath, query } from '../api.js';
import { Async, Badge, ChangeLink, Empty, LineLink, Time, navigate, plural, ui, useAsync, useLocation, useTitle } from '../util.js';

/** The search page's address for a repository and query (a cursor continues a walk). */
export const searchHref = (repo, q, cursor) => `/ui/repos/${encodeURIComponent(String(repo))}/search${query({ q, cursor })}`;

const EXAMPLES = ['status:review', 'is:open is:unresolved', 'owner:@me is:open', 'reviewer:@me', 'is:wip', 'topic:NAME', 'cc:NAME', 'file:lib/http', 'reviewer:core', 'line:main', 'fix router'];

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

/**
 * The matching changes, one row each: title, ref, owner, topic and WIP mark, then the selected
 * patchset's CI, live votes and unresolved threads (the answer's `search_rows`, same order).
 */
function ResultRows({ repo, changes, rows }) {
  if (changes.length === 0) return html`<${Empty}>No change matches.</${Empty}>`;
  const facts = new Map((rows ?? []).map((r) => [r.change_id, r]));
  return html`<ul class="rows search-rows">${changes.map((c) => {
    const f = facts.get(c.change_id);
    return html`<li class="row" data-change=${c.change_id}>
      <div class="row-main">
        <a class="row-title" href=${ui.change(repo, c.change_id)}>${c.title}</a>${c.wip ? html` <span class="badge tone-plain wip-badge" title="Work in progress: no reviewer is asked until it is ready">WIP</span>` : null}
        <div class="row-meta"><${ChangeLink} repo=${repo} id=${c.change_id} label=${c.change_ref} />${c.owner ? html` · by <span class="owner">${c.owner}</span>` : null} · into <${LineLink} repo=${repo} name=${c.land_target_line ?? c.base_line} />${c.topic ? html` · topic <a href=${searchHref(repo, `topic:"${c.topic}"`)}>${c.topic}</a>` : null}</div>
      </div>
      <div class="row-side">
        <${Badge} value=${c.status} />
        ${f ? html`<span title="CI of the selected patchset">CI <${Badge} value=${f.ci} /></span>
        <span class="votes" title="live approvals / blocking votes"><span class="good-text">✓${f.votes.approvals}</span> <span class=${f.votes.blocking ? 'bad-text' : 'muted'}>✗${f.votes.blocking}</span></span>
        <span class="threads" title="unresolved comment threads">${plural(f.unresolved_threads, 'open thread')}</span>` : null}
        <${Time} s=${c.updated_at_s} />
      </div>
    </li>`;
  })}</ul>`;
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
          ${(d.notes ?? []).map((n) => html`<p class="note-box search-note" role="status">${n[0].toUpperCase()}${n.slice(1)}.</p>`)}
          <p class="muted" aria-live="polite">${d.count === 0 && !cursor ? 'No change matches.' : `${d.count} change${d.count === 1 ? '' : 's'}${d.next_cursor ? ' on this page' : ''}.`}</p>
          <${ResultRows} repo=${repo} changes=${d.changes} rows=${d.search_rows} />
          ${d.next_cursor ? html`<p><a class="btn" href=${searchHref(repo, q, d.next_cursor)}>More results →</a></p>` : null}`)}</${Async}>`}
  </div>`;
}
