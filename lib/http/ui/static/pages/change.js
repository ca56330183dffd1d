// The change page: what the change is, whether it can land and why not, the reviews, the
// evidence (attestation, CI, policy), the reviewer's actions, and the diff of a patchset (against
// its base, or against another patchset of the change with ?against=).
// URL: /ui/repos/R/changes/REF[?ps=PATCHSET][&against=PATCHSET][&view=split][#file=PATH]
import { html, useCallback } from '../vendor/preact.js';
import { ApiError, get, listAll, repoPath, seg, query } from '../api.js';
import { Async, Badge, Card, Empty, Snap, Time, ErrorNote, navigate, plural, ui, useAsync, useLocation, useTitle } from '../util.js';
import { DiffView } from '../diff.js';
import { Actions, LandHistory } from './actions.js';
import { useLiveRefresh } from '../live.js';
import { LandQueueCard, entryJobs, entryOfChange } from './queue.js';

const VIEW_KEY = 'cairn.diffView';

/** What can change on this page: the change, its patchsets and the evidence on them, its lands, its land-queue entry. */
const CHANGE_EVENTS = ['change.*', 'patchset.*', 'review.*', 'attestation.*', 'policy.*', 'job.*', 'land.*', 'queue.*'];

/** An event about this change: it names the change, one of its patchsets, or a CI job the page shows (its own or its queue entry's). */
function aboutChange(d, event) {
  if (!d) return false;
  const x = event.data ?? {};
  const id = d.change.change_id;
  if (x.change_id === id) return true;
  if (typeof x.patchset_id === 'string' && x.patchset_id.startsWith(`${id}.`)) return true;
  if (x.worker_job_index === undefined) return false;
  return (d.evidence?.ci?.recent_jobs ?? []).some((j) => j.worker_job_index === x.worker_job_index)
    || entryJobs(entryOfChange(d.queue, id)).includes(x.worker_job_index);
}

function storedView() {
  try {
    return localStorage.getItem(VIEW_KEY) === 'split' ? 'split' : 'unified';
  } catch {
    return 'unified';
  }
}

/** Everything about the change but the diff, read in parallel. */
async function loadChange(repo, ref, viewedParam) {
  const P = (rest) => get(repoPath(repo, rest));
  const change = (await P(`/changes/${seg(ref)}`)).change;
  const C = `/changes/${seg(change.change_id)}`;
  const [patchsets, reviews, readiness, task, queue] = await Promise.all([
    listAll(repoPath(repo, `${C}/patchsets`), 'patchsets'),
    (async () => {
      const first = await P(`${C}/reviews?limit=1000`);
      const rest = first.next_cursor ? await listAll(repoPath(repo, `${C}/reviews`), 'reviews') : null;
      return { ...first, reviews: rest ? rest.rows : first.reviews };
    })(),
    P(`/read/changes/${seg(change.change_id)}/readiness`),
    P(`/tasks/${seg(change.task_id)}`).then((t) => t.task, () => null),
    // Every line's queue: the active entries and the newest finished ones (where this change's entry is).
    P('/land-queue'),
  ]);
  const viewed = viewedParam && patchsets.rows.some((p) => p.patchset_id === viewedParam)
    ? viewedParam
    : change.selected_patchset_id ?? change.current_patchset_id ?? null;
  let evidence = null;
  if (viewed) {
    const PS = `/patchsets/${seg(viewed)}`;
    const [policy, ci, attestation] = await Promise.all([
      P(`${PS}/policy`).then((r) => r.policy),
      P(`/read/patchsets/${seg(viewed)}/ci-status?recent_limit=10`),
      // The readiness answer carries the selected patchset's latest attestation; another
      // patchset's is asked for (404 when it has none).
      viewed === change.selected_patchset_id
        ? Promise.resolve(readiness.attestation ?? null)
        : P(`${PS}/attestation`).then((r) => r.attestation, (e) => { if (e instanceof ApiError && e.status === 404) return null; throw e; }),
    ]);
    evidence = { policy, ci, attestation };
  }
  return { change, patchsets: patchsets.rows, reviews, readiness, task, viewed, evidence, queue };
}

// ---------------------------------------------------------------- panels

const BLOCKED = {
  blocked_by_policy: 'The policy does not pass',
  blocked_by_review: 'A reviewer blocks it',
  blocked_by_ci: 'CI has not passed',
  patchset_not_selected: 'The selected patchset cannot land',
  change_not_open: 'The change is closed',
  no_patchset: 'The change has no patchset',
};

/** "Why can't this land": the land's own gates, judged on the evidence as it stands. */
function Readiness({ r }) {
  const failing = (r.policy?.checks ?? []).filter((c) => c.status === 'fail');
  return html`<section class=${`readiness ${r.can_land ? 'ok' : 'no'}`} aria-label="Land readiness">
    <div class="readiness-head">
      <span class="big-mark" aria-hidden="true">${r.can_land ? '✓' : '✗'}</span>
      <div>
        <h2>${r.can_land ? 'Ready to land' : r.change_status === 'landed' ? 'Landed' : `Can't land: ${BLOCKED[r.blocked_by] ?? r.blocked_by}`}</h2>
        ${r.reason ? html`<p class="reason">${r.reason}</p>` : null}
        ${r.base_stale ? html`<p class="warn-text">The base is stale: another land moved the target line since this patchset was made. Rerun CI (base_stale_after_land_rerun) or rebase.</p>` : null}
      </div>
    </div>
    ${failing.length ? html`<ul class="checks">${failing.map((c) => html`<li><${Badge} value=${c.status} /> <strong>${c.name.replace(/_/g, ' ')}</strong> <span class="muted">${c.explanation}</span></li>`)}</ul>` : null}
    ${r.review || r.ci ? html`<dl class="facts">
      ${r.ci ? html`<div><dt>CI</dt><dd><${Badge} value=${r.ci.overall} /> ${r.ci.ci_run_sequence ? html`<span class="muted">run ${r.ci.ci_run_sequence}</span>` : null}</dd></div>` : null}
      ${r.review ? html`<div><dt>Reviews</dt><dd><span class="good-text">${plural(r.review.approvals ?? 0, 'approval')}</span>, <span class=${r.review.blocking ? 'bad-text' : ''}>${r.review.blocking ?? 0} blocking</span></dd></div>` : null}
      <div><dt>Attestation</dt><dd>${r.attestation ? html`<${Badge} value=${r.attestation.revoked ? 'revoked' : r.attestation.verification_state} tone=${r.attestation.revoked ? 'bad' : undefined} />` : html`<span class="muted">none</span>`}</dd></div>
      <div><dt>Policy</dt><dd><${Badge} value=${r.policy?.decision ?? 'pending'} /></dd></div>
    </dl>` : null}
  </section>`;
}

const ACTION_LABEL = {
  request: 'requested review', comment: 'commented', task_comment: 'commented', code_review_summary: 'summarized', approve: 'approved', task_approve: 'approved',
  request_changes: 'requested changes', task_request_changes: 'requested changes', defer: 'deferred', task_defer: 'deferred', dismiss: 'dismissed their vote',
};
const ACTION_TONE = { approve: 'good', task_approve: 'good', request_changes: 'bad', task_request_changes: 'bad', request: 'accent', dismiss: 'plain' };

function Reviews({ reviews }) {
  const list = reviews.reviews;
  return html`<${Card} title="Reviews and comments" id="reviews" right=${html`<span class="muted"><span class="good-text">${plural(reviews.approvals, 'approval')}</span> · <span class=${reviews.blocking ? 'bad-text' : ''}>${reviews.blocking} blocking</span> · ${plural(reviews.comments, 'comment')}</span>`}>
    ${list.length === 0 ? html`<${Empty}>No review yet.</${Empty}>` : html`<ol class="timeline">${list.map((r) => html`<li class=${`event ev-${r.blocking ? 'bad' : ACTION_TONE[r.action] ?? 'plain'}`}>
      <div class="event-head">
        <strong class="who">${r.action === 'request' ? r.requested_by ?? 'someone' : r.reviewer}</strong>
        <span>${ACTION_LABEL[r.action] ?? r.action}${r.action === 'request' ? html` from the <strong class="group-name">${r.reviewer_group ?? r.reviewer}</strong> group` : null}</span>
        ${r.blocking ? html`<${Badge} value="blocking" tone="bad" />` : null}
        ${r.stale ? html`<${Badge} value="stale" tone="plain" title="recorded on a patchset whose content differs from the selected one" />` : null}
        <span class="muted">on <code>${r.patchset_id}</code> · <${Time} s=${r.created_at_s} /></span>
      </div>
      ${r.comment ? html`<div class="comment">${r.comment}</div>` : null}
    </li>`)}</ol>`}
  </${Card}>`;
}

function Policy({ policy }) {
  return html`<${Card} title="Policy" id="policy" right=${html`<${Badge} value=${policy.decision} />`}>
    ${policy.checks.length === 0
      ? html`<${Empty}>Not evaluated yet. The land evaluates it anyway, on the evidence as it stands then.</${Empty}>`
      : html`<ul class="checks">${policy.checks.map((c) => html`<li class=${`check ${c.status}`}>
          <${Badge} value=${c.status} /> <strong>${c.name.replace(/_/g, ' ')}</strong>
          <div class="muted explanation">${c.explanation}</div>
        </li>`)}</ul>
        <p class="muted small">Decision <code>${policy.decision_id}</code> (${policy.trigger === 'land' ? 'recorded by a land' : 'evaluated'}) <${Time} s=${policy.evaluated_at_s} /></p>`}
  </${Card}>`;
}

function Ci({ repo, ci }) {
  const jobs = ci.recent_jobs ?? [];
  if (!ci.ci_run_sequence && jobs.length === 0) return html`<${Card} title="CI" id="ci" right=${html`<${Badge} value="none" />`}><${Empty}>No CI run yet: <em>Run CI</em> queues one for a runner.</${Empty}></${Card}>`;
  return html`<${Card} title="CI" id="ci" right=${html`<${Badge} value=${ci.overall ?? ci.availability} />`}>
    <dl class="facts">
      <div><dt>Run</dt><dd>${ci.ci_run_sequence ?? '—'}</dd></div>
      <div><dt>Status</dt><dd>${ci.status ?? '—'}</dd></div>
      <div><dt>Tests</dt><dd><${Badge} value=${ci.tests ?? 'none'} /></dd></div>
      <div><dt>Lint</dt><dd><${Badge} value=${ci.lint ?? 'none'} /></dd></div>
    </dl>
    ${ci.counts ? html`<p class="suites">Suites: <strong>${ci.counts.suites}</strong> · <span class="good-text">${ci.counts.passed} passed</span> · <span class=${ci.counts.failed ? 'bad-text' : ''}>${ci.counts.failed} failed</span>${ci.counts.blocking_failed ? html` · <span class="bad-text">${ci.counts.blocking_failed} blocking</span>` : null}</p>` : null}
    ${ci.selected_job?.ci?.suite_results?.length ? html`<ul class="checks suite-list">${ci.selected_job.ci.suite_results.map((s) => html`<li class=${`check ${s.status}`}><${Badge} value=${s.status} /> <code>${s.suite_id}</code>${s.blocking ? null : html` <span class="muted small">(not blocking)</span>`}</li>`)}</ul>` : null}
    ${jobs.length === 0 ? html`<${Empty}>No CI run yet.</${Empty}>` : html`<table class="table compact">
      <thead><tr><th>Job</th><th>Run</th><th>State</th><th>Suites</th><th>Updated</th></tr></thead>
      <tbody>${jobs.map((j) => html`<tr>
        <td><a href=${ui.job(repo, j.worker_job_index)}>#${j.worker_job_index}</a></td>
        <td class="num">${j.run_sequence ?? '—'}</td>
        <td><${Badge} value=${j.state} />${j.outcome && j.outcome !== j.state ? html` <${Badge} value=${j.outcome} />` : null}</td>
        <td>${j.ci ? html`${j.ci.suite_result_count - j.ci.failed_suite_count}/${j.ci.suite_result_count}${j.ci.blocking_failure_count ? html` <span class="bad-text">(${j.ci.blocking_failure_count} blocking)</span>` : null}` : html`<span class="muted">—</span>`}</td>
        <td><${Time} s=${j.updated_at_s} /></td>
      </tr>`)}</tbody></table>`}
  </${Card}>`;
}

function Attestation({ a }) {
  return html`<${Card} title="Attestation" id="attestation" right=${a ? html`<${Badge} value=${a.revoked ? 'revoked' : a.verification_state} tone=${a.revoked ? 'bad' : undefined} />` : null}>
    ${!a ? html`<${Empty}>No attestation for this patchset yet; <code>cairn attest</code> records one.</${Empty}>` : html`<dl class="facts">
      <div><dt>Author mode</dt><dd>${a.author_mode.replace(/_/g, ' ')}</dd></div>
      <div><dt>Verification</dt><dd><${Badge} value=${a.verification_state} /></dd></div>
      <div><dt>Requires</dt><dd>${[a.require_tests_pass && 'tests', a.require_lint_pass && 'lint', a.require_human_review && 'human review'].filter(Boolean).join(', ') || 'nothing more'}</dd></div>
      ${a.ci_backed !== undefined ? html`<div><dt>CI backed</dt><dd>${a.ci_backed ? 'yes' : 'no'}</dd></div>` : null}
      <div><dt>Recorded</dt><dd><code>${a.attestation_id}</code> <${Time} s=${a.created_at_s} /></dd></div>
    </dl>`}
  </${Card}>`;
}

// ---------------------------------------------------------------- patchsets and the diff

function psLabel(p, change) {
  const tags = [];
  if (p.patchset_id === change.selected_patchset_id) tags.push('selected');
  if (p.patchset_id === change.current_patchset_id) tags.push('latest');
  if (p.withdrawn) tags.push('withdrawn');
  return `${p.patchset_id.replace(/^.*\./, '')}${tags.length ? ` (${tags.join(', ')})` : ''} — ${p.summary}`;
}

function DiffSection({ repo, d, viewed, against, view, setParams }) {
  const diff = useAsync(
    () => get(repoPath(repo, `/read/patchsets/${seg(viewed)}/diff${query({ against })}`)),
    [repo, viewed, against],
  );
  const others = d.patchsets.filter((p) => p.patchset_id !== viewed);
  const onView = useCallback((v) => {
    try {
      localStorage.setItem(VIEW_KEY, v);
    } catch {
      /* storage disabled */
    }
    setParams({ view: v === 'split' ? 'split' : null });
  }, [setParams]);
  return html`<section class="files-section" id="files" aria-label="Files">
    <div class="files-toolbar">
      <label class="field inline"><span>Patchset</span>
        <select value=${viewed} onChange=${(e) => setParams({ ps: e.currentTarget.value === d.change.selected_patchset_id ? null : e.currentTarget.value, against: null })}>
          ${d.patchsets.map((p) => html`<option value=${p.patchset_id}>${psLabel(p, d.change)}</option>`)}
        </select>
      </label>
      <label class="field inline"><span>compared with</span>
        <select value=${against ?? ''} onChange=${(e) => setParams({ against: e.currentTarget.value || null })} aria-label="Compare with">
          <option value="">its base</option>
          ${others.map((p) => html`<option value=${p.patchset_id}>${p.patchset_id.replace(/^.*\./, '')} — ${p.summary}</option>`)}
        </select>
      </label>
      ${against ? html`<span class="muted">changes from <code>${against}</code> to <code>${viewed}</code></span>` : null}
    </div>
    <${Async} state=${diff} what="the diff">${(x) => html`<${DiffView} repo=${repo} diff=${x} view=${view} onView=${onView} />`}</${Async}>
  </section>`;
}

function Patchsets({ repo, d, viewed }) {
  return html`<${Card} title="Patchsets" id="patchsets">
    <table class="table compact">
      <thead><tr><th>#</th><th>Summary</th><th>Files</th><th>Created</th></tr></thead>
      <tbody>${d.patchsets.map((p) => html`<tr class=${p.patchset_id === viewed ? 'current' : ''}>
        <td><a href=${ui.change(repo, d.change.change_id, { ps: p.patchset_id === d.change.selected_patchset_id ? null : p.patchset_id })}>${p.patchset_number}</a>
          ${p.patchset_id === d.change.selected_patchset_id ? html` <${Badge} value="selected" tone="accent" />` : null}</td>
        <td>${p.summary}${p.author ? html` <span class="muted">by ${p.author}</span>` : null}</td>
        <td class="num">${p.changed_file_stats?.files_changed ?? '—'}</td>
        <td><${Time} s=${p.created_at_s} /></td>
      </tr>`)}</tbody>
    </table>
  </${Card}>`;
}

export function ChangePage({ repo, changeRef }) {
  const loc = useLocation();
  const psParam = loc.params.get('ps');
  const against = loc.params.get('against') || null;
  const view = loc.params.get('view') === 'split' ? 'split' : loc.params.get('view') === 'unified' ? 'unified' : storedView();
  const state = useAsync(() => loadChange(repo, changeRef, psParam), [repo, changeRef, psParam]);
  const d = state.data;
  useLiveRefresh(repo, CHANGE_EVENTS, (event) => aboutChange(d, event), state.reload);
  useTitle(d ? `${d.change.title} (${d.change.change_id})` : changeRef);

  const setParams = useCallback((next) => {
    const p = new URLSearchParams(location.search);
    for (const [k, v] of Object.entries(next)) {
      if (v === null || v === undefined) p.delete(k);
      else p.set(k, v);
    }
    const qs = p.toString();
    navigate(`${location.pathname}${qs ? `?${qs}` : ''}${location.hash}`, { replace: true });
  }, []);

  if (state.error) return html`<div class="page"><${ErrorNote} error=${state.error} what=${`change ${changeRef}`} /></div>`;
  if (!d) return html`<div class="page"><p class="loading" role="status">Loading change ${changeRef}…</p></div>`;
  const c = d.change;
  return html`<div class="page change-page">
    <div class="page-head">
      <h1><span class="title-text">${c.title}</span> <${Badge} value=${c.status} /></h1>
      <p class="meta parts">
        <span><code>${c.change_ref}</code></span>
        <span>task ${d.task ? html`<a href=${ui.task(repo, c.task_id)}>${d.task.title}</a>` : html`<code>${c.task_id}</code>`}</span>
        <span>into <a href=${ui.line(repo, c.land_target_line ?? c.base_line)}><code>${c.land_target_line ?? c.base_line}</code></a></span>
        <span>forked from <${Snap} id=${c.fork_snapshot_id} /></span>
        <span>created <${Time} s=${c.created_at_s} /></span>
        ${c.landed_at_s ? html`<span>landed <${Time} s=${c.landed_at_s} /></span>` : null}
        <span><a href="#files">${plural(d.patchsets.length, 'patchset')}, files ↓</a></span>
      </p>
    </div>
    <div class="change-grid">
      <div class="col main-col">
        <${Readiness} r=${d.readiness} />
        <${Reviews} reviews=${d.reviews} />
        ${d.evidence ? html`<${Policy} policy=${d.evidence.policy} />` : null}
        <${Patchsets} repo=${repo} d=${d} viewed=${d.viewed} />
      </div>
      <div class="col side-col">
        <${Actions} repo=${repo} d=${d} onDone=${state.reload} />
        <${LandQueueCard} repo=${repo} change=${c} queue=${d.queue} onDone=${state.reload} />
        ${d.evidence ? html`
          <${Ci} repo=${repo} ci=${d.evidence.ci} />
          <${Attestation} a=${d.evidence.attestation} />` : null}
        <${LandHistory} repo=${repo} change=${c} />
      </div>
    </div>
    ${d.viewed ? html`<${DiffSection} key=${`${d.viewed}|${against}`} repo=${repo} d=${d} viewed=${d.viewed} against=${against} view=${view} setParams=${setParams} />` : html`<${Empty}>This change has no patchset yet.</${Empty}>`}
  </div>`;
}

