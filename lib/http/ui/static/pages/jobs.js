// The CI queue (worker jobs), one job, one land, and a task with its audit.
import { html } from '../vendor/preact.js';
import { get, repoPath, seg, query } from '../api.js';
import { Async, Badge, Card, Empty, JOB_STATES, Snap, Time, dateTime, plural, ui, useAsync, useLocation, useTitle } from '../util.js';
import { ChangeRows, JobRows } from './home.js';
import { useLiveRefresh } from '../live.js';

const JOB_EVENTS = ['job.*'];

export function JobsPage({ repo }) {
  const loc = useLocation();
  const state = loc.params.get('state_kind') ?? '';
  const cursor = loc.params.get('cursor') ?? '';
  useTitle('CI queue');
  const jobs = useAsync(() => get(repoPath(repo, `/worker-jobs${query({ state_kind: state, cursor, limit: 50 })}`)), [repo, state, cursor]);
  useLiveRefresh(repo, JOB_EVENTS, () => true, jobs.reload);
  const href = (params) => `${ui.jobs(repo)}${query(params)}`;
  return html`<div class="page">
    <div class="page-head"><h1>CI queue</h1>
      <nav class="subnav" aria-label="Filter by state">
        <a href=${href({})} aria-current=${state === '' ? 'page' : undefined}>all</a>
        ${[1, 2, 3, 4].map((k) => html`<a href=${href({ state_kind: k })} aria-current=${state === String(k) ? 'page' : undefined}>${JOB_STATES[k]}</a>`)}
      </nav></div>
    <${Async} state=${jobs} what="jobs">${(d) => html`
      <${JobRows} repo=${repo} jobs=${d.jobs} />
      ${d.next_cursor ? html`<p><a class="btn" href=${href({ state_kind: state, cursor: d.next_cursor })}>Older jobs →</a></p>` : null}`}</${Async}>
  </div>`;
}

const Row = ({ k, children }) => html`<div><dt>${k}</dt><dd>${children}</dd></div>`;

export function JobPage({ repo, index }) {
  useTitle(`Job ${index}`);
  const job = useAsync(() => get(repoPath(repo, `/worker-jobs/${seg(index)}`)), [repo, index]);
  useLiveRefresh(repo, JOB_EVENTS, (event) => String(event.data?.worker_job_index) === String(index), job.reload);
  return html`<div class="page">
    <${Async} state=${job} what=${`job ${index}`}>${(d) => {
      const j = d.job ?? d;
      return html`
        <div class="page-head"><h1>Job #${j.worker_job_index} <code>${j.job_type}</code> <${Badge} value=${j.state ?? JOB_STATES[j.state_kind]} /></h1>
          <p class="meta">${j.patchset_id ? html`patchset <code>${j.patchset_id}</code> · ` : null}snapshot <${Snap} id=${j.snapshot_id} /> · created <${Time} s=${j.created_at_s} /></p></div>
        <div class="grid-2">
          <${Card} title="State">
            <dl class="facts">
              <${Row} k="Outcome">${j.outcome ? html`<${Badge} value=${j.outcome} />` : html`<span class="muted">not finished</span>`}</${Row}>
              <${Row} k="Attempts">${j.attempt_count} of ${j.max_attempts}</${Row}>
              <${Row} k="Retry">${j.retry_status}</${Row}>
              ${j.error_kind ? html`<${Row} k="Error kind"><${Badge} value=${j.error_kind} tone="bad" /></${Row}>` : null}
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
          <p class="meta"><a href=${ui.change(repo, l.change_id)}>${l.change_ref}</a> · <code>${l.patchset_id}</code> · ${l.mode} onto <a href=${ui.line(repo, l.target_line)}><code>${l.target_line}</code></a> · <${Time} s=${l.finished_at_s} /></p></div>
        <${Card} title="What it did">
          <dl class="facts">
            <${Row} k="Outcome"><${Badge} value=${l.result?.outcome ?? l.status} /></${Row}>
            ${l.line_action ? html`<${Row} k="Line action">${l.line_action.replace(/_/g, ' ')}</${Row}>` : null}
            <${Row} k="Head before"><${Snap} id=${l.target_head_before} /></${Row}>
            <${Row} k="Landed snapshot"><${Snap} id=${l.landed_snapshot_id} /></${Row}>
            ${l.failure_kind ? html`<${Row} k="Failure"><${Badge} value=${l.failure_kind} tone="bad" /> ${l.failure_message}</${Row}>` : null}
            ${l.policy_decision_id ? html`<${Row} k="Judged by"><code>${l.policy_decision_id}</code></${Row}>` : null}
            ${l.stale_patchset_ids?.length ? html`<${Row} k="Made stale">${l.stale_patchset_ids.map((p) => html`<code>${p}</code> `)}</${Row}>` : null}
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
