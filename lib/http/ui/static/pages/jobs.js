// The CI queue (worker jobs), one job, one land, and a task with its audit.
import { html } from '../vendor/preact.js';
import { get, repoPath, seg, query } from '../api.js';
import { Async, Badge, Card, Empty, JOB_STATES, JobOutcome, LineLink, OUTCOME_TITLES, PsLink, RecordLink, Snap, Time, dateTime, jobOutcome, plural, ui, useAsync, useLocation, useTitle } from '../util.js';
import { ChangeRows, EntryIds, JobRows, entryChanges } from './home.js';
import { useLiveRefresh } from '../live.js';

const JOB_EVENTS = ['job.*'];
/** The CI outcomes `GET worker-jobs?outcome=` filters by (CI_OUTCOMES in lib/domain/jobs.ts). */
const OUTCOMES = ['pass', 'fail', 'timed_out', 'superseded'];
const PAGE = 50;

/**
 * The CI queue, newest first, filtered by CI outcome (`outcome`) or by job state (`state_kind`),
 * both filtered by the server (`GET worker-jobs?outcome=` reads an index of finished jobs by
 * outcome), paged with the server's cursor.
 */
export function JobsPage({ repo }) {
  const loc = useLocation();
  const state = loc.params.get('state_kind') ?? '';
  const outcome = OUTCOMES.includes(loc.params.get('outcome')) ? loc.params.get('outcome') : '';
  const cursor = loc.params.get('cursor') ?? '';
  useTitle('CI queue');
  const jobs = useAsync(async () => {
    const [page, queue] = await Promise.all([
      get(repoPath(repo, `/worker-jobs${query({ outcome, state_kind: state, cursor, limit: PAGE })}`)),
      get(repoPath(repo, '/land-queue')).catch(() => null), // only to link entry ids to their changes
    ]);
    return { ...page, entries: entryChanges(queue) };
  }, [repo, state, outcome, cursor]);
  useLiveRefresh(repo, JOB_EVENTS, () => true, jobs.reload);
  const href = (params) => `${ui.jobs(repo)}${query(params)}`;
  const current = (on) => (on ? 'page' : undefined);
  const label = (o) => o.replace(/_/g, ' ');
  return html`<div class="page">
    <div class="page-head"><h1>CI queue</h1>
      <nav class="subnav" aria-label="Filter by CI outcome">
        <span class="muted small">outcome</span>
        <a href=${href({})} aria-current=${current(state === '' && outcome === '')}>all</a>
        ${OUTCOMES.map((o) => html`<a href=${href({ outcome: o })} aria-current=${current(outcome === o && state === '')} title=${OUTCOME_TITLES[o]}>${label(o)}</a>`)}
      </nav>
      <nav class="subnav" aria-label="Filter by job state">
        <span class="muted small">job state</span>
        ${[1, 2, 3, 4].map((k) => html`<a href=${href({ state_kind: k })} aria-current=${current(state === String(k) && outcome === '')}>${JOB_STATES[k]}</a>`)}
      </nav></div>
    <${Async} state=${jobs} what="jobs">${(d) => html`
      <${JobRows} repo=${repo} jobs=${d.jobs} entries=${d.entries} empty=${outcome ? `No${cursor ? ' older' : ''} job has the CI outcome ${label(outcome)}.` : state ? `No${cursor ? ' older' : ''} job is ${JOB_STATES[state] ?? state}.` : 'No CI job yet.'} />
      <p class="pager">${cursor ? html`<a class="btn" href=${href({ state_kind: state, outcome })}>← Newest</a> ` : null}${d.next_cursor ? html`<a class="btn" href=${href({ state_kind: state, outcome, cursor: d.next_cursor })}>Older jobs →</a>` : null}</p>`}</${Async}>
  </div>`;
}

const Row = ({ k, children }) => html`<div><dt>${k}</dt><dd>${children}</dd></div>`;

export function JobPage({ repo, index }) {
  useTitle(`Job ${index}`);
  const job = useAsync(async () => {
    const [j, queue] = await Promise.all([
      get(repoPath(repo, `/worker-jobs/${seg(index)}`)),
      get(repoPath(repo, '/land-queue')).catch(() => null), // only to link entry ids to their changes
    ]);
    return { ...j, entries: entryChanges(queue) };
  }, [repo, index]);
  useLiveRefresh(repo, JOB_EVENTS, (event) => String(event.data?.worker_job_index) === String(index), job.reload);
  return html`<div class="page">
    <${Async} state=${job} what=${`job ${index}`}>${(d) => {
      const j = d.job ?? d;
      const outcome = jobOutcome(j);
      return html`
        <div class="page-head"><h1>Job #${j.worker_job_index} <code>${j.job_type}</code> <${JobOutcome} j=${j} /></h1>
          <p class="meta">${j.patchset_id ? html`patchset <${PsLink} repo=${repo} id=${j.patchset_id} /> · ` : null}snapshot <${Snap} repo=${repo} id=${j.snapshot_id} />${j.land_queue_entry_ids?.length ? html` · land queue <${EntryIds} repo=${repo} ids=${j.land_queue_entry_ids} entries=${d.entries} />` : null} · created <${Time} s=${j.created_at_s} /></p></div>
        <div class="grid-2">
          <${Card} title="State">
            <dl class="facts">
              <${Row} k="CI outcome">${outcome ? html`<${Badge} value=${outcome} title=${OUTCOME_TITLES[outcome]} />` : html`<span class="muted">${j.outcome ? 'not a CI run' : 'not finished'}</span>`}</${Row}>
              <${Row} k="Job state">${j.state ?? JOB_STATES[j.state_kind]}${j.outcome && j.outcome !== j.state ? html` <span class="muted">(runner: ${j.outcome.replace(/_/g, ' ')})</span>` : null}</${Row}>
              <${Row} k="Attempts">${j.attempt_count} of ${j.max_attempts}</${Row}>
              <${Row} k="Retry">${j.retry_status}</${Row}>
              ${j.error_kind ? html`<${Row} k="Error kind"><${Badge} value=${j.error_kind} tone=${j.error_kind === 'superseded' ? 'plain' : 'bad'} /></${Row}>` : null}
              <${Row} k="Trigger">${j.trigger ?? '—'}</${Row}>
              <${Row} k="CI run">${j.run_sequence ?? '—'}</${Row}>
              <${Row} k="Timeout">${j.timeout_s ? `${j.timeout_s} s` : '—'}</${Row}>
              <${Row} k="Lease until">${j.lease_expires_at_s ? dateTime(j.lease_expires_at_s) : '—'}</${Row}>
              <${Row} k="Completed">${j.completed_at_s ? html`<${Time} s=${j.completed_at_s} />` : '—'}</${Row}>
              <${Row} k="Updated"><${Time} s=${j.updated_at_s} /></${Row}>
            </dl>
          </${Card}>
          <${Card} title="Result">
            ${j.ci ? html`<dl class="facts">
              <${Row} k="Status">${j.ci.status}</${Row}>
              <${Row} k="Tests"><${Badge} value=${j.ci.tests_status} /></${Row}>
              <${Row} k="Suites">${j.ci.suite_result_count} run, ${j.ci.failed_suite_count} failed, ${j.ci.blocking_failure_count} blocking</${Row}>
            </dl>` : html`<${Empty}>No runner result yet.</${Empty}>`}
            ${j.error ? html`<h3 class="sub">Runner output (tail)</h3><pre class="log">${j.error}</pre>` : null}
          </${Card}>
        </div>`;
    }}</${Async}>
  </div>`;
}

export function LandPage({ repo, landId }) {
  useTitle(landId);
  const land = useAsync(() => get(repoPath(repo, `/lands/${seg(landId)}`)), [repo, landId]);
  return html`<div class="page">
    <${Async} state=${land} what=${landId}>${(d) => {
      const l = d.land;
      return html`
        <div class="page-head"><h1>${l.land_id} <${Badge} value=${l.status} /></h1>
          <p class="meta"><a href=${ui.change(repo, l.change_id)}>${l.change_ref}</a> · <${PsLink} repo=${repo} id=${l.patchset_id} /> · ${l.mode} onto <${LineLink} repo=${repo} name=${l.target_line} /> · <${Time} s=${l.finished_at_s} /></p></div>
        <${Card} title="What it did">
          <dl class="facts">
            <${Row} k="Outcome"><${Badge} value=${l.result?.outcome ?? l.status} /></${Row}>
            ${l.line_action ? html`<${Row} k="Line action">${l.line_action.replace(/_/g, ' ')}</${Row}>` : null}
            <${Row} k="Head before"><${Snap} repo=${repo} id=${l.target_head_before} /></${Row}>
            <${Row} k="Landed snapshot"><${Snap} repo=${repo} id=${l.landed_snapshot_id} /></${Row}>
            ${l.failure_kind ? html`<${Row} k="Failure"><${Badge} value=${l.failure_kind} tone="bad" /> ${l.failure_message}</${Row}>` : null}
            ${l.policy_decision_id ? html`<${Row} k="Judged by"><${RecordLink} repo=${repo} id=${l.policy_decision_id} anchor="policy" /></${Row}>` : null}
            ${l.stale_patchset_ids?.length ? html`<${Row} k="Made stale">${l.stale_patchset_ids.map((p) => html`<${PsLink} repo=${repo} id=${p} /> `)}</${Row}>` : null}
            ${l.land_queue_entry_id ? html`<${Row} k="Land queue"><a class="id-link" href=${`${ui.change(repo, l.change_id)}#queue`}><code>${l.land_queue_entry_id}</code></a></${Row}>` : null}
          </dl>
          ${l.conflicts?.length ? html`<h3 class="sub">Conflicts (${l.conflicts_count})</h3><ul>${l.conflicts.map((c) => html`<li><code>${c.path}</code> <span class="muted">${c.kind}</span></li>`)}</ul>` : null}
        </${Card}>`;
    }}</${Async}>
  </div>`;
}

export function TaskPage({ repo, taskId }) {
  useTitle(taskId);
  const state = useAsync(() => get(repoPath(repo, `/read/tasks/${seg(taskId)}/audit`)), [repo, taskId]);
  return html`<div class="page">
    <${Async} state=${state} what=${taskId}>${(d) => html`
      <div class="page-head"><h1>${d.task.title} <${Badge} value=${d.task.status} /></h1>
        <p class="meta"><code>${d.task.task_id}</code>${d.task.plan_id ? html` · plan <a href=${ui.plan(repo, d.task.plan_id)}>${d.task.plan_id}</a>${d.task.plan_item_ref ? html` item <code>#${d.task.plan_item_ref}</code>` : null}` : null} · created <${Time} s=${d.task.created_at_s} /></p></div>
      <div class="grid-2">
        <${Card} title="Intent"><p class="prewrap">${d.task.intent}</p></${Card}>
        <${Card} title="Audit" right=${html`<${Badge} value=${d.verdict} tone=${d.verdict === 'ready_to_close' || d.verdict === 'task_completed' ? 'good' : 'plain'} />`}>
          <p>${plural(d.open_changes, 'open change')}, ${plural(d.landed_changes, 'change')} landed on <code>${d.target_line}</code>.</p>
        </${Card}>
      </div>
      <${Card} title="Changes"><${ChangeRows} repo=${repo} changes=${d.changes} empty="No change." /></${Card}>`}</${Async}>
  </div>`;
}
