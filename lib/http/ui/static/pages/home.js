// The repositories list, a repository's dashboard (the person's own lists: your turn, your
// changes, waiting for your review, recently landed; then open changes by status, the reviewer
// inbox, the land queue, recently landed changes, the CI queue) and the changes list.
import { html } from '../vendor/preact.js';
import { AUTHORITIES, get, repoPath, query } from '../api.js';
import { Async, Badge, Card, ChangeLink, Empty, JobOutcome, LineLink, Part, PartError, PsLink, Snap, Time, plural, settle, ui, useAsync, useIdentity, useLocation, useTitle } from '../util.js';
import { changeName } from '../dialogs.js';
import { useLiveRefresh } from '../live.js';
import { LandQueueSection, entryHref } from './queue.js';
import { askSignIn, useRepoAccess, useSession, usesTokens } from '../session.js';

/** What the dashboard shows: changes and their reviews, tasks, the land queue, the CI queue, lands. */
const DASHBOARD_EVENTS = ['change.*', 'patchset.created', 'review.*', 'task.*', 'job.*', 'land.*', 'policy.decided', 'queue.*'];

const LIFECYCLE = { 1: 'active', 2: 'retiring', 3: 'purged' };

export function ReposPage() {
  useTitle('Repositories');
  const repos = useAsync(() => get(AUTHORITIES), []);
  const { session } = useSession();
  const anonymous = usesTokens(session) && !session.account;
  return html`<div class="page">
    <h1>Repositories</h1>
    ${anonymous ? html`<p class="note-box anonymous-note">You are not signed in: the list holds only the repositories open to anonymous readers. <button type="button" class="btn small primary" onClick=${askSignIn}>Sign in</button></p>` : null}
    <${Async} state=${repos} what="repositories">${(d) => (d.repositories.length === 0
      ? (anonymous ? html`<${Empty}>None is open to anonymous readers.</${Empty}>` : html`<${Empty}>No repository is registered on this server yet (<code>cairn repo create NAME</code>).</${Empty}>`)
      : html`<table class="table">
          <thead><tr><th>Index</th><th>Name</th><th>Namespace</th><th>State</th><th>Created</th></tr></thead>
          <tbody>${d.repositories.map((r) => html`<tr>
            <td class="num">${r.repository_index}</td>
            <td><a href=${ui.repo(r.repository_index)}>${r.repository_name}</a></td>
            <td>${r.namespace ? html`<code>${r.namespace}</code>` : html`<span class="muted">—</span>`}</td>
            <td><${Badge} value=${LIFECYCLE[r.lifecycle_kind] ?? r.lifecycle_kind} /></td>
            <td><${Time} s=${r.created_at_s} /></td>
          </tr>`)}</tbody>
        </table>`)}</${Async}>
  </div>`;
}

/** One row per change: title and ref, status, patchsets, age. */
export function ChangeRows({ repo, changes, showStatus = true, empty = 'None.' }) {
  if (changes.length === 0) return html`<${Empty}>${empty}</${Empty}>`;
  return html`<ul class="rows">${changes.map((c) => html`<li class="row">
    <div class="row-main">
      <a class="row-title" href=${ui.change(repo, c.change_id)}>${c.title}</a>
      <div class="row-meta"><${ChangeLink} repo=${repo} id=${c.change_id} label=${c.change_ref} /> · into <${LineLink} repo=${repo} name=${c.land_target_line ?? c.base_line} /> · ${plural(c.patchset_count ?? 0, 'patchset')}</div>
    </div>
    <div class="row-side">${showStatus ? html`<${Badge} value=${c.status} />` : null}<${Time} s=${c.updated_at_s} /></div>
  </li>`)}</ul>`;
}

function InboxGroups({ repo, inbox }) {
  // Rows come ordered by group, then request time (README "Reviewer inbox").
  const byGroup = new Map();
  for (const r of inbox.rows) {
    if (!byGroup.has(r.reviewer_group)) byGroup.set(r.reviewer_group, []);
    byGroup.get(r.reviewer_group).push(r);
  }
  const groups = [...byGroup.entries()];
  if (groups.length === 0) return html`<${Empty}>Nothing waits for review: request a review from a change's page.</${Empty}>`;
  return groups.map(([group, rows]) => html`<div class="inbox-group">
    <h3><span class="group-name">${group}</span> <span class="count">${rows.length}</span></h3>
    <ul class="rows">${rows.map((r) => html`<li class="row">
      <div class="row-main">
        <a class="row-title" href=${ui.change(repo, r.change_id)}>${r.title}</a>
        <div class="row-meta"><${ChangeLink} repo=${repo} id=${r.change_id} label=${r.change_ref} /> · ps ${r.selected_patchset_number ?? '—'}${r.requested_by ? html` · asked by ${r.requested_by}` : null} · <${Time} s=${r.requested_at_s} />${r.note ? html` · <span class="note">${r.note}</span>` : null}</div>
      </div>
      <div class="row-side">
        <span title="CI of the current run">CI <${Badge} value=${r.ci_overall ?? 'none'} /></span>
        <span title="latest policy decision">policy <${Badge} value=${r.policy_decision ?? 'pending'} /></span>
        <span class="votes" title="live approvals / blocking votes"><span class="good-text">✓${r.approvals}</span> <span class=${r.blocking ? 'bad-text' : 'muted'}>✗${r.blocking}</span></span>
      </div>
    </li>`)}</ul>
  </div>`);
}

/** Land-queue entry ids of a job, each linked to its change's queue card when `entries` (id → change_id) knows it. */
export function EntryIds({ repo, ids, entries }) {
  return ids.map((id, i) => {
    const change = entries?.get(id);
    return html`${i ? ', ' : ''}${change ? html`<a class="id-link" href=${entryHref(repo, change)}><code>${id}</code></a>` : html`<code>${id}</code>`}`;
  });
}

/** Every entry id the land queue read lists, with its change. */
export const entryChanges = (queue) => new Map(queue ? [...queue.entries, ...queue.recent].map((e) => [e.entry_id, e.change_id]) : []);

/** One row per job: its CI outcome first (pass, fail, timed out, superseded), the job state beside it. */
export function JobRows({ repo, jobs, entries, empty = 'No CI job yet.' }) {
  if (jobs.length === 0) return html`<${Empty}>${empty}</${Empty}>`;
  return html`<table class="table compact jobs">
    <thead><tr><th>Job</th><th>Target</th><th>Outcome</th><th class="num">Attempts</th><th>Updated</th></tr></thead>
    <tbody>${jobs.map((j) => html`<tr data-job=${j.worker_job_index}>
      <td><a href=${ui.job(repo, j.worker_job_index)}>#${j.worker_job_index}</a></td>
      <td>${j.patchset_id ? html`<${PsLink} repo=${repo} id=${j.patchset_id} />` : html`<${Snap} repo=${repo} id=${j.snapshot_id} />`} <span class="muted small">${j.job_type}${j.land_queue_entry_ids?.length ? html` · land queue <${EntryIds} repo=${repo} ids=${j.land_queue_entry_ids} entries=${entries} />` : ''}${j.run_sequence ? ` · run ${j.run_sequence}` : ''}</span></td>
      <td><${JobOutcome} j=${j} /></td>
      <td class="num">${j.attempt_count}/${j.max_attempts}</td>
      <td class="nowrap"><${Time} s=${j.updated_at_s} /></td>
    </tr>`)}</tbody>
  </table>`;
}

/** Why it is the person's move, in words (reasons of GET {repo}/read/dashboard). */
const TURN_REASONS = {
  review_requested: 'review requested',
  new_patchset: 'new patchset to review',
  blocking_vote: 'a reviewer blocks it',
  ci_failed: 'CI failed',
  ejected: 'left the land queue',
  conflict: 'conflicts with its line',
  reviewer_comment: 'a reviewer commented',
  owner_replied: 'the author replied',
};

/** A dashboard row: the change, then CI, live votes and unresolved threads (and, on "Your turn", why). */
function PersonRows({ repo, rows, empty, turn = false }) {
  if (rows.length === 0) return html`<${Empty}>${empty}</${Empty}>`;
  return html`<ul class="rows">${rows.map((r) => html`<li class="row" data-change=${r.change_id}>
    <div class="row-main">
      <a class="row-title" href=${ui.change(repo, r.change_id)}>${r.title}</a>
      <div class="row-meta"><${ChangeLink} repo=${repo} id=${r.change_id} label=${r.change_ref} />${r.owner ? ` · by ${r.owner}` : ''}${turn && r.reason ? html` · <strong class="turn-reason">${TURN_REASONS[r.reason] ?? r.reason}</strong>` : null}${!turn && r.attention.length ? html` · <span class="muted">waiting for ${r.attention.map((a) => a.name).join(', ')}</span>` : null}</div>
    </div>
    <div class="row-side">
      <span title="CI of the selected patchset">CI <${Badge} value=${r.ci} /></span>
      <span class="votes" title="live approvals / blocking votes"><span class="good-text">✓${r.votes.approvals}</span> <span class=${r.votes.blocking ? 'bad-text' : 'muted'}>✗${r.votes.blocking}</span></span>
      <span class="threads" title="unresolved comment threads">${plural(r.unresolved_threads, 'open thread')}</span>
      ${r.status === 'landed' ? html`<${Time} s=${r.landed_at_s} />` : html`<${Time} s=${r.updated_at_s} />`}
    </div>
  </li>`)}</ul>`;
}

/** The signed-in (or named) person's four lists, from GET {repo}/read/dashboard. */
function PersonDashboard({ repo }) {
  const id = useIdentity();
  const name = id.name;
  const data = useAsync(() => (name ? get(repoPath(repo, `/read/dashboard${query({ user: name })}`)) : Promise.resolve(null)), [repo, name]);
  useLiveRefresh(repo, DASHBOARD_EVENTS, () => true, data.reload);
  if (!name) {
    return html`<${Card} title="Your turn"><p class="muted">Set your name to see the changes that wait for you.
      ${id.source === 'header' ? null : html` <button type="button" class="btn small" onClick=${() => changeName()}>Set your name</button>`}</p></${Card}>`;
  }
  return html`<div class="person-dashboard">
    <${Async} state=${data} what="your dashboard">${(d) => html`
      <div class="grid-2">
        <div class="col">
          <${Card} title="Your turn" right=${html`<span class="count">${d.your_turn.length}</span>`}><${PersonRows} repo=${repo} rows=${d.your_turn} turn=${true} empty="Nothing waits for you." /></${Card}>
          <${Card} title="Waiting for your review" right=${html`<span class="count">${d.waiting_for_review.length}</span>`}><${PersonRows} repo=${repo} rows=${d.waiting_for_review} empty="Nobody asked you to review an open change." /></${Card}>
        </div>
        <div class="col">
          <${Card} title="Your changes" right=${html`<span class="count">${d.your_changes.length}</span>`}><${PersonRows} repo=${repo} rows=${d.your_changes} empty="You own no open change." /></${Card}>
          <${Card} title="Landed: yours and reviewed"><${PersonRows} repo=${repo} rows=${d.recently_landed} empty="Nothing of yours has landed yet." /></${Card}>
        </div>
      </div>`}</${Async}>
  </div>`;
}

function Counts({ summary }) {
  const c = summary.changes;
  const items = [['review', 'in review'], ['active', 'active'], ['draft', 'draft'], ['landed', 'landed'], ['abandoned', 'abandoned'], ['archived', 'archived']];
  return html`<ul class="counts">${items.map(([k, label]) => html`<li class=${`count-${k}`}><span class="n">${c[k] ?? 0}</span><span class="label">${label}</span></li>`)}
    <li><span class="n">${summary.tasks.active}</span><span class="label">active tasks</span></li></ul>`;
}

export function Dashboard({ repo }) {
  // Each section's read settles on its own: one failed request shows in its card, with a Retry.
  const data = useAsync(async () => {
    const P = (rest) => settle(get(repoPath(repo, rest)));
    const [repository, summary, review, active, draft, landed, inbox, jobs, queue] = await Promise.all([
      P(''), P('/read/queue-summary'), P('/changes?status=review&limit=50'), P('/changes?status=active&limit=50'), P('/changes?status=draft&limit=50'),
      P('/changes?status=landed&limit=10'), P('/read/reviewer-inbox?limit=200'), P('/worker-jobs?limit=20'), P('/land-queue'),
    ]);
    // An unknown repository is the page's answer, not one card's.
    if (repository.error) throw repository.error;
    return { repository: repository.data.repository, summary, review, active, draft, landed, inbox, jobs, queue };
  }, [repo]);
  useLiveRefresh(repo, DASHBOARD_EVENTS, () => true, data.reload);
  const access = useRepoAccess(repo);
  useTitle(data.data ? data.data.repository.repository_name : `Repository ${repo}`);
  const retry = data.reload;
  const busy = data.loading;
  return html`<div class="page dashboard">
    <${Async} state=${{ ...data, error: data.data ? null : data.error }} what="the dashboard">${(d) => {
      const part = (p, title, children, what) => html`<${Part} part=${p} title=${title} what=${what} retry=${retry} busy=${busy}>${children}</${Part}>`;
      const titles = new Map([d.review, d.active, d.draft, d.landed].flatMap((l) => (l.data ? l.data.changes.map((c) => [c.change_id, c.title]) : [])));
      const openList = (p, label, empty) => html`<h3 class="sub">${label} ${p.data ? html`<span class="count">${p.data.changes.length}${p.data.next_cursor ? '+' : ''}</span>` : null}</h3>
        ${part(p, null, (x) => html`<${ChangeRows} repo=${repo} changes=${x.changes} showStatus=${false} empty=${empty} />`, `the changes ${label.toLowerCase()}`)}`;
      return html`
      ${data.error ? html`<${PartError} error=${data.error} what="the dashboard again" retry=${retry} busy=${busy} />` : null}
      <div class="page-head">
        <h1>${d.repository.repository_name} <span class="muted">#${repo}</span></h1>
        <nav class="subnav" aria-label="Repository">
          <a href=${ui.changes(repo)}>Changes</a><a href=${ui.lines(repo)}>Lines</a><a href=${ui.plans(repo)}>Plans</a><a href=${ui.jobs(repo)}>CI queue</a>${access.may('access.change') ? html`<a class="settings-link" href=${ui.settings(repo)}>Settings</a>` : null}
        </nav>
      </div>
      ${part(d.summary, null, (x) => html`<${Counts} summary=${x} />`, 'the counts')}
      <${PersonDashboard} repo=${repo} />
      <div class="grid-2">
        <div class="col">
          ${part(d.inbox, 'Needs review', (x) => html`<${Card} title="Needs review" right=${html`<span class="muted">${plural(x.count ?? x.rows.length, 'request')}</span>`}><${InboxGroups} repo=${repo} inbox=${x} /></${Card}>`, 'the reviewer inbox')}
          <${Card} title="Open changes" right=${html`<a href=${ui.changes(repo)}>all changes</a>`}>
            ${openList(d.review, 'In review', 'No change is in review.')}
            ${openList(d.active, 'Active', 'No active change.')}
            ${openList(d.draft, 'Draft', 'No draft.')}
          </${Card}>
        </div>
        <div class="col">
          ${part(d.queue, 'Land queue', (x) => html`<${LandQueueSection} repo=${repo} queue=${x} titles=${titles} />`, 'the land queue')}
          ${part(d.jobs, 'CI queue', (x) => html`<${Card} title="CI queue" right=${html`<a href=${ui.jobs(repo)}>all jobs</a>`}><${JobRows} repo=${repo} jobs=${x.jobs} entries=${entryChanges(d.queue.data)} /></${Card}>`, 'the CI queue')}
          ${part(d.landed, 'Recently landed', (x) => html`<${Card} title="Recently landed"><${ChangeRows} repo=${repo} changes=${x.changes} showStatus=${false} empty="Nothing has landed yet." /></${Card}>`, 'the recently landed changes')}
        </div>
      </div>`;
    }}</${Async}>
  </div>`;
}

const STATUSES = ['', 'draft', 'active', 'review', 'landed', 'archived', 'superseded', 'abandoned'];

export function ChangesPage({ repo }) {
  const loc = useLocation();
  const status = loc.params.get('status') ?? '';
  const cursor = loc.params.get('cursor') ?? '';
  useTitle('Changes');
  const page = useAsync(() => get(repoPath(repo, `/changes${query({ status, cursor, limit: 50 })}`)), [repo, status, cursor]);
  return html`<div class="page">
    <div class="page-head"><h1>Changes</h1>
      <nav class="subnav" aria-label="Filter by status">${STATUSES.map((st) => html`<a href=${ui.changes(repo, st)} aria-current=${st === status ? 'page' : undefined}>${st || 'all'}</a>`)}</nav>
    </div>
    <${Async} state=${page} what="changes">${(d) => html`
      <${ChangeRows} repo=${repo} changes=${d.changes} empty="No change." />
      ${d.next_cursor ? html`<p><a class="btn" href=${`${ui.changes(repo, status)}${status ? '&' : '?'}cursor=${encodeURIComponent(d.next_cursor)}`}>Older changes →</a></p>` : null}`}</${Async}>
  </div>`;
}
