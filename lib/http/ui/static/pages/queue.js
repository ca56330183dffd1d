// The land queue (docs/land-queue.md) in the UI: the dashboard's "Land queue" section (active
// entries in order, then the recently finished ones) and the change page's "Land queue" card
// (its entry's state, position, speculation, CI and ejection evidence, with "Add to land queue"
// and "Remove from queue"). Read from GET land-queue; the buttons are POST land-queue and
// DELETE land-queue/{entry_id}, the same routes the CLI uses.
import { html, useState } from '../vendor/preact.js';
import { ApiError, del, post, repoPath, seg } from '../api.js';
import { Badge, Card, ChangeLink, Empty, LineLink, PsLink, Snap, Time, plural, ui } from '../util.js';
import { confirmAction } from '../dialogs.js';

const OPEN = ['draft', 'active', 'review'];
export const isActiveEntry = (e) => e.state === 'queued' || e.state === 'testing';

const REASONS = {
  ci_failed: 'CI failed on the merged result',
  conflict: 'conflict while merging',
  gates: 'the gates refused the land',
  change_not_landable: 'the change was closed or landed elsewhere',
  patchset_changed: 'another patchset was selected',
  line_unavailable: 'the line was archived',
};

/** The entry of a change: its active one, else the newest finished one the list still shows. */
export function entryOfChange(queue, changeId) {
  return queue.entries.find((e) => e.change_id === changeId) ?? queue.recent.find((e) => e.change_id === changeId) ?? null;
}

/** Every CI job an entry names (its speculation's runs, a reused run, the jobs of its ejection). */
export function entryJobs(e) {
  if (!e) return [];
  return [...(e.speculation?.worker_job_indexes ?? []), ...(e.speculation?.reused_worker_job_index != null ? [e.speculation.reused_worker_job_index] : []), ...(e.ejection?.worker_job_indexes ?? [])];
}

const JobLink = ({ repo, index }) => html`<a href=${ui.job(repo, index)}>#${index}</a>`;

/** An entry has no page of its own: its id links to its change's page, at the Land queue card. */
export const entryHref = (repo, changeId) => `${ui.change(repo, changeId)}#queue`;
const EntryId = ({ repo, e }) => html`<a class="id-link" href=${entryHref(repo, e.change_id)}><code>${e.entry_id}</code></a>`;

/** An entry named only by its id (`ahead`): linked when the queue read holds it. */
function EntryRef({ repo, id, queue }) {
  const e = queue ? [...queue.entries, ...queue.recent].find((x) => x.entry_id === id) : null;
  return e ? html`<${EntryId} repo=${repo} e=${e} />` : html`<code>${id}</code>`;
}

/** The CI of an entry: verdict, the job testing it (linked) and its state, runs, reuse. */
function CiCell({ repo, e }) {
  const c = e.ci;
  if (!c) return html`<span class="muted">${e.state === 'queued' ? 'not built yet' : '—'}</span>`;
  return html`<span class="queue-ci"><${Badge} value=${c.verdict} />
    ${c.worker_job_index !== null ? html` <${JobLink} repo=${repo} index=${c.worker_job_index} />` : null}
    ${c.job_state && c.verdict === 'pending' ? html` <span class="muted small">${c.job_state}</span>` : null}
    ${c.reused ? html` <span class="muted small">reused</span>` : null}
    ${c.runs > 1 ? html` <span class="muted small">${c.runs} runs</span>` : null}
    ${c.tested_by !== e.entry_id ? html` <span class="muted small">batch of <code>${c.tested_by}</code></span>` : null}</span>`;
}

const Stalled = ({ e }) => (e.stalled ? html`<${Badge} value="stalled" title=${e.stalled.message} />` : null);

/** A change's title when the page has read it (`titles`: change_id → title), else its ref. */
const ChangeName = ({ repo, e, titles }) => html`<a class="row-title" href=${ui.change(repo, e.change_id)}>${titles?.get(e.change_id) ?? e.change_ref}</a>`;

/** The dashboard's section: the active entries in queue order, then the recently finished ones. */
export function LandQueueSection({ repo, queue, titles }) {
  const recent = queue.recent.slice(0, 8);
  return html`<${Card} title="Land queue" id="land-queue" right=${html`<span class="muted">${plural(queue.count, 'entry', 'entries')} waiting</span>`}>
    ${queue.entries.length === 0 ? html`<${Empty}>Nothing is queued. A change joins from its page (<em>Add to land queue</em>) or with <code>cairn queue add</code>.</${Empty}>` : html`<table class="table compact queue">
      <thead><tr><th class="num">#</th><th>Change</th><th>State</th><th>CI</th></tr></thead>
      <tbody>${queue.entries.map((e) => html`<tr data-entry=${e.entry_id}>
        <td class="num">${e.position}</td>
        <td><${ChangeName} repo=${repo} e=${e} titles=${titles} /><div class="row-meta"><${ChangeLink} repo=${repo} id=${e.change_id} label=${e.change_ref} /> · <${EntryId} repo=${repo} e=${e} /> · ${e.mode} into <${LineLink} repo=${repo} name=${e.target_line} /></div></td>
        <td class="nowrap"><${Badge} value=${e.state} /> <${Stalled} e=${e} /></td>
        <td><${CiCell} repo=${repo} e=${e} /></td>
      </tr>`)}</tbody>
    </table>`}
    ${recent.length ? html`<h3 class="sub">Recently finished</h3>
      <ul class="rows queue-recent">${recent.map((e) => html`<li class="row" data-entry=${e.entry_id}>
        <div class="row-main">
          <${ChangeName} repo=${repo} e=${e} titles=${titles} />
          <div class="row-meta"><${ChangeLink} repo=${repo} id=${e.change_id} label=${e.change_ref} /> · <${EntryId} repo=${repo} e=${e} /> · into <${LineLink} repo=${repo} name=${e.target_line} /> · <${Time} s=${e.finished_at_s} />
            ${e.land_id ? html` · <a href=${ui.land(repo, e.land_id)}>${e.land_id}</a>${e.passed_on_retry ? ' (passed on retry)' : ''}` : null}
            ${e.ejection ? html` · <span class="bad-text">${REASONS[e.ejection.reason] ?? e.ejection.reason}</span>` : null}</div>
        </div>
        <div class="row-side"><${Badge} value=${e.state} title=${e.ejection ? e.ejection.message : undefined} /></div>
      </li>`)}</ul>` : null}
  </${Card}>`;
}

function explain(err) {
  if (err instanceof ApiError) return `${err.status ? `HTTP ${err.status}: ` : ''}${err.message}`;
  return String(err && err.message ? err.message : err);
}

/** The facts of one entry: state and position, speculation, CI, and how it ended. */
function EntryFacts({ repo, e, count, queue }) {
  const s = e.speculation;
  const x = e.ejection;
  return html`<dl class="facts">
    <div><dt>Entry</dt><dd><code>${e.entry_id}</code> <span class="muted">${e.mode} into <${LineLink} repo=${repo} name=${e.target_line} />, <${PsLink} repo=${repo} id=${e.patchset_id} /></span></dd></div>
    <div><dt>State</dt><dd><${Badge} value=${e.state} /> <${Stalled} e=${e} />${e.position !== null ? html` <span>position <strong>${e.position}</strong>${count ? ` of ${count}` : ''}</span>` : null}</dd></div>
    ${s ? html`
      <div><dt>Tested on</dt><dd><${Snap} repo=${repo} id=${s.snapshot_id} /> <span class="muted">= <${Snap} repo=${repo} id=${s.base_snapshot_id} /> + this change (${s.line_action.replace(/_/g, ' ')})</span></dd></div>
      ${s.ahead.length ? html`<div><dt>Ahead</dt><dd>${s.ahead.map((id, i) => html`${i ? ', ' : ''}<${EntryRef} repo=${repo} id=${id} queue=${queue} />`)}</dd></div>` : null}` : null}
    <div><dt>CI</dt><dd><${CiCell} repo=${repo} e=${e} /></dd></div>
    ${s && !x && s.worker_job_indexes.length > 1 ? html`<div><dt>Runs</dt><dd>${s.worker_job_indexes.map((j, i) => html`${i ? ', ' : ''}<${JobLink} repo=${repo} index=${j} />`)}</dd></div>` : null}
    ${e.passed_on_retry ? html`<div><dt>Retry</dt><dd class="warn-text">passed on retry (a run failed first)</dd></div>` : null}
    ${e.stalled ? html`<div><dt>Stalled</dt><dd class="bad-text">${e.stalled.message}</dd></div>` : null}
    ${e.land_id ? html`<div><dt>Landed</dt><dd><a href=${ui.land(repo, e.land_id)}>${e.land_id}</a> → <${Snap} repo=${repo} id=${e.landed_snapshot_id} /></dd></div>` : null}
    ${x ? html`
      <div><dt>Ejected</dt><dd><strong class="bad-text">${REASONS[x.reason] ?? x.reason}</strong><div class="muted small ejection-message">${x.message}</div></dd></div>
      ${x.worker_job_indexes.length ? html`<div><dt>Failing jobs</dt><dd>${x.worker_job_indexes.map((j, i) => html`${i ? ', ' : ''}<${JobLink} repo=${repo} index=${j} />`)}</dd></div>` : null}
      ${x.failing_suites.length ? html`<div><dt>Failing suites</dt><dd>${x.failing_suites.map((t) => html`<code class="suite">${t}</code> `)}</dd></div>` : null}
      ${x.conflict_paths.length ? html`<div><dt>Conflicts</dt><dd><ul class="plain-list">${x.conflict_paths.map((p) => html`<li><code>${p}</code></li>`)}</ul></dd></div>` : null}` : null}
    ${e.finished_at_s ? html`<div><dt>Finished</dt><dd><${Time} s=${e.finished_at_s} /></dd></div>` : html`<div><dt>Queued</dt><dd><${Time} s=${e.enqueued_at_s} /></dd></div>`}
  </dl>`;
}

/** The change page's card: the change's entry (if any) and the queue's two buttons. */
export function LandQueueCard({ repo, change, queue, onDone, access }) {
  const [busy, setBusy] = useState(false);
  const [flash, setFlash] = useState(null);
  const e = entryOfChange(queue, change.change_id);
  const active = e && isActiveEntry(e);
  const open = OPEN.includes(change.status) && !!change.selected_patchset_id;
  const count = e ? queue.entries.filter((x) => x.target_line === e.target_line).length : 0;
  const run = async (fn, success) => {
    setBusy(true);
    setFlash(null);
    try {
      const r = await fn();
      setFlash({ ok: true, text: success(r.entry) });
      onDone();
    } catch (err) {
      setFlash({ ok: false, text: explain(err) });
    } finally {
      setBusy(false);
    }
  };
  if (!e && !open) return null; // a closed change that never was queued: nothing to say
  // without access (a page that passes none) every button shows; the server decides anyway
  const may = access ? access.may : () => true;
  const add = () => run(() => post(repoPath(repo, '/land-queue'), { change_ref: change.change_id, mode: 'merge' }), (x) => `Queued as ${x.entry_id}, position ${x.position} on ${x.target_line}.`);
  const remove = async () => {
    const ok = await confirmAction({
      title: `Remove ${e.entry_id} from the land queue?`,
      body: html`<p><code>${change.change_ref}</code> leaves the queue of <code>${e.target_line}</code>${e.position != null ? ` (it is at position ${e.position})` : ''}. The entries behind it are built and tested again without it. It can join again, at the back.</p>`,
      confirm: 'Remove from queue',
      danger: true,
    });
    if (ok) await run(() => del(repoPath(repo, `/land-queue/${seg(e.entry_id)}`)), (x) => `Removed ${x.entry_id} from the queue.`);
  };
  return html`<${Card} title="Land queue" id="queue" right=${e ? html`<${Badge} value=${e.state} />` : null}>
    ${flash ? html`<div class=${`flash ${flash.ok ? 'ok' : 'bad'}`} role=${flash.ok ? 'status' : 'alert'}>${flash.text}</div>` : null}
    ${e ? html`<${EntryFacts} repo=${repo} e=${e} count=${count} queue=${queue} />` : html`<${Empty}>Not in the land queue.</${Empty}>`}
    ${active ? (may('landQueue.remove') ? html`<div class="btn-row"><button type="button" class="btn danger" onClick=${remove} disabled=${busy}>Remove from queue</button></div>` : null)
      : open && may('landQueue.enqueue') ? html`<div class="btn-row"><button type="button" class="btn" onClick=${add} disabled=${busy} title="The queue tests this change merged onto the line, with the entries ahead of it, and lands it onto exactly what it tested. Its gates must pass but for CI.">Add to land queue</button></div>` : null}
  </${Card}>`;
}
