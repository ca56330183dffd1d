// The reviewer's actions on a change, each one call to an existing route of the interface:
// approve, comment and request changes (POST changes/{ref}/reviews), request review
// (:requestReview), select a patchset (:selectPatchset), rebase it onto the line's head
// (:rebase: a new patchset built by the server, or the conflicting paths), run CI (patchsets/{id}:runCi), evaluate
// the policy (:evaluatePolicy) and land (POST task-land, with a mode and a confirmation). The
// reviewer's name comes from ../dialogs.js (asked once, or the ingress header).
import { html, useEffect, useState } from '../vendor/preact.js';
import { ApiError, get, post, randomKey, repoPath, seg } from '../api.js';
import { Badge, Card, Empty, LineLink, PsLink, Time, ui, useIdentity } from '../util.js';
import { confirmAction, reviewerName } from '../dialogs.js';
import { entryOfChange, isActiveEntry } from './queue.js';
import { needs, yourRole } from '../session.js';

const OPEN = ['draft', 'active', 'review'];

function Flash({ flash }) {
  if (!flash) return null;
  return html`<div class=${`flash ${flash.ok ? 'ok' : 'bad'}`} role=${flash.ok ? 'status' : 'alert'}>${flash.text}</div>`;
}

/** A rebase refused for conflicts: each conflicting path, and what to do instead. */
function rebaseConflicts(body, line) {
  const list = body.conflicts ?? [];
  const more = (body.conflicts_count ?? list.length) - list.length;
  return html`<div class="rebase-conflicts"><strong>Not rebased: ${body.conflicts_count === 1 ? '1 path conflicts' : `${body.conflicts_count} paths conflict`} with the head of ${line}.</strong>
    <ul class="conflict-list">${list.map((c) => html`<li data-conflict=${c.path}><code>${c.path}</code> <span class="muted small">${c.kind}</span></li>`)}</ul>
    ${more > 0 ? html`<p class="muted small">and ${more} more.</p>` : null}
    <p class="muted small">Nothing was written. Rebase it locally (<code>git fetch</code>, <code>git rebase</code>), resolve them and push a new patchset.</p></div>`;
}

function explain(err) {
  if (err instanceof ApiError) {
    const body = err.body ?? {};
    const kind = body.failure_kind ? ` (${body.failure_kind.replace(/_/g, ' ')})` : '';
    return `${err.status ? `HTTP ${err.status}: ` : ''}${err.message}${kind}`;
  }
  return String(err && err.message ? err.message : err);
}

/**
 * `access` (../session.js useRepoAccess): which of the actions the viewer may take here; the
 * others are left out, and a note says which role they need.
 */
export function Actions({ repo, d, access, onDone, onReply, drafts = 0 }) {
  const me = useIdentity();
  const c = d.change;
  const selected = c.selected_patchset_id;
  const viewed = d.viewed;
  const open = OPEN.includes(c.status);
  const [busy, setBusy] = useState(null);
  const [flash, setFlash] = useState(null);
  const [comment, setComment] = useState('');
  const [group, setGroup] = useState('');
  const [people, setPeople] = useState('');
  const [mode, setMode] = useState('merge');
  const R = (rest) => repoPath(repo, rest);

  const run = async (name, fn, success) => {
    setBusy(name);
    setFlash(null);
    try {
      const result = await fn();
      if (result === undefined) return; // cancelled
      setFlash({ ok: true, text: typeof success === 'function' ? success(result) : success });
      onDone();
    } catch (err) {
      setFlash({ ok: false, text: explain(err) });
      // A refused or failed land is recorded by the server too: show it in the Lands card.
      if (name === 'land' && err instanceof ApiError && err.body?.land) onDone();
    } finally {
      setBusy(null);
    }
  };

  // Every vote goes out through reviews:publish: the vote and every draft comment of the reviewer
  // on the change, in one commit (request_changes blocks by its action: docs/api.md "Reviews").
  const review = (action) => run(action, async () => {
    const reviewer = await reviewerName();
    if (!reviewer) return undefined;
    if ((action === 'comment') && !comment.trim()) throw new Error('write a comment first');
    const r = await post(R(`/changes/${seg(c.change_id)}/reviews:publish`), { author: reviewer, patchset_id: selected, action, ...(comment ? { comment } : {}) });
    setComment('');
    return r;
  }, (r) => {
    const said = action === 'approve' ? 'Approved.' : action === 'comment' ? 'Comment posted.' : 'Changes requested (blocking).';
    const n = r?.published?.length ?? 0;
    return n ? `${said} Published ${n === 1 ? '1 draft' : `${n} drafts`} with it.` : said;
  });

  // Review is asked of persons (comma- or space-separated names), a group, or both, in one call.
  const requestReview = () => run('request', async () => {
    const names = [...new Set(people.split(/[\s,]+/).filter(Boolean))];
    if (!names.length && !group.trim()) throw new Error('name the people or the group to ask');
    const by = await reviewerName();
    if (!by) return undefined;
    const r = await post(R(`/changes/${seg(c.change_id)}:requestReview`), {
      patchset_id: selected, note: comment, requested_by: by,
      ...(names.length ? { reviewers: names } : {}), ...(group.trim() ? { reviewer_groups: [group.trim()] } : {}),
    });
    setGroup('');
    setPeople('');
    return r;
  }, (r) => `Review requested from ${(r.review_requests ?? [r]).map((q) => (q.reviewer_group ? `the ${q.reviewer_group} group` : q.reviewer)).join(', ')}.`);

  const runCi = () => run('ci', () => post(R(`/patchsets/${seg(viewed)}:runCi`), { trigger: 'manual_rerun' }), (r) => `CI run ${r.job?.run_sequence ?? ''} queued as job #${r.job?.worker_job_index}.`);
  const evaluate = () => run('policy', () => post(R(`/patchsets/${seg(viewed)}:evaluatePolicy`), {}), (r) => `Policy evaluated: ${r.policy.decision}.`);
  // A rebase refused for conflicts lists the paths; already up to date is said, not an error.
  const rebase = async () => {
    setBusy('rebase');
    setFlash(null);
    try {
      const r = await post(R(`/changes/${seg(c.change_id)}:rebase`), { patchset_id: selected });
      setFlash({ ok: true, text: `Rebased ${selected.replace(/^.*\./, '')} onto the head of ${c.land_target_line} as ${r.patchset.patchset_id.replace(/^.*\./, '')}, now selected.` });
      onDone();
    } catch (err) {
      const body = err instanceof ApiError ? err.body ?? {} : {};
      if (body.code === 'REBASE_CONFLICT' && body.conflicts_count > 0) setFlash({ ok: false, text: rebaseConflicts(body, c.land_target_line) });
      else if (body.code === 'ALREADY_UP_TO_DATE') setFlash({ ok: true, text: `${selected.replace(/^.*\./, '')} is already based on the head of ${c.land_target_line}: nothing to rebase.` });
      else setFlash({ ok: false, text: explain(err) });
    } finally {
      setBusy(null);
    }
  };
  const select = () => run('select', () => post(R(`/changes/${seg(c.change_id)}:selectPatchset`), { patchset_id: viewed }), `Selected ${viewed}.`);

  const readiness = d.readiness.data ?? null;
  const canLand = !!readiness?.can_land;
  // Queued: the land queue lands the change onto exactly what it tested; a land by hand now
  // would race it. (Unknown when the queue could not be read: the button stays, the land's
  // own checks still apply.)
  const entry = d.queue.data ? entryOfChange(d.queue.data, c.change_id) : null;
  const queued = entry && isActiveEntry(entry) ? entry : null;
  // Conflicting with the line's head: every mode refuses it (merge and direct on the conflict,
  // ff-only on the moved base), so the button is off and says why.
  const conflict = readiness?.merge?.status === 'conflict' ? readiness.merge : null;
  const landOff = queued ? 'land-queued-reason' : conflict ? 'land-conflict-reason' : undefined;

  const land = () => run('land', async () => {
    const r = readiness;
    const ok = await confirmAction({
      title: `Land ${c.change_id}?`,
      body: html`<p>Land <code>${selected}</code> onto <code>${c.land_target_line}</code> as a <strong>${mode}</strong>.</p>
        ${!r ? html`<p class="warn-text">Whether the gates pass now could not be read; the land judges them itself.</p>`
          : r.can_land ? html`<p class="good-text">The gates pass on the evidence as it stands now.</p>` : html`<p class="bad-text">The gates refuse it now: ${r.reason}. The land will be recorded as refused.</p>`}
        <p class="muted">The land evaluates the policy again at the moment it runs and moves the line in one commit.</p>`,
      confirm: `Land (${mode})`,
      danger: !canLand,
    });
    if (!ok) return undefined;
    return post(R('/task-land'), { contract: 'task-land-atomic/v1', idempotency_key: randomKey('ui-land'), task_or_change_ref: c.change_ref, mode, patchset_id: selected });
  }, (r) => {
    return `Landed ${r.patchset_id} on ${r.target_line}: ${r.land.line_action?.replace(/_/g, ' ') ?? 'done'} (${r.land.land_id}).`;
  });

  const noName = me.source === 'header' && !me.name;
  const may = access.may;
  const canReview = may('comments.publish');
  const canRequest = may('changes.requestReview');
  const canSelect = may('changes.selectPatchset');
  const canRebase = may('changes.rebase');
  // Offered when the line moved past the selected patchset's base (or that is not known yet).
  const stale = !readiness || readiness.base_stale;
  const canCi = may('patchsets.runCi');
  const canPolicy = may('patchsets.evaluatePolicy');
  const canAttest = may('attestations.put');
  const landOk = may('tasks.land');
  // What is left out, and why (one line each; nothing when the answer is not read yet).
  const missing = !access.loaded ? [] : [
    !canReview && needs(access, 'comments.publish', 'Reviewing'),
    !landOk && needs(access, 'tasks.land', 'Landing'),
  ].filter(Boolean);
  return html`<${Card} title="Actions" id="actions" className="actions-card">
    <${Flash} flash=${flash} />
    ${!open ? html`<${Empty}>The change is ${c.status}; it takes no more reviews or lands.</${Empty}>` : html`
      ${viewed !== selected ? html`<p class="note-box">You are viewing <code>${viewed}</code>; reviews and lands act on the selected patchset <code>${selected}</code>.
        ${canSelect ? html`<button type="button" class="btn small select-ps" onClick=${select} disabled=${!!busy}>Select ${viewed.replace(/^.*\./, '')}</button>` : null}</p>` : null}
      ${noName ? html`<p class="warn-text">This page was served without the ${me.header} header: actions that record your name are off.</p>` : null}
      ${canReview ? html`<label class="field"><span>Comment</span>
        <textarea rows="3" value=${comment} onInput=${(e) => setComment(e.currentTarget.value)} placeholder="What you think of this patchset (optional for approve and request changes)"></textarea>
      </label>
      <div class="btn-row review-row">
        <button type="button" class="btn primary" onClick=${() => review('approve')} disabled=${!!busy || noName}>Approve</button>
        <button type="button" class="btn" onClick=${() => review('comment')} disabled=${!!busy || noName}>Comment</button>
        <button type="button" class="btn danger" onClick=${() => review('request_changes')} disabled=${!!busy || noName} title="A blocking vote: it sticks to the change until you dismiss it or approve">Request changes</button>
      </div>
      ${onReply ? html`<p class="muted small reply-note">${drafts ? `You have ${drafts === 1 ? '1 draft comment' : `${drafts} draft comments`}: Approve, Request changes and Comment publish them with your vote.` : 'Comment on lines in the diff below; '}
        <button type="button" class="btn small link" onClick=${onReply}>${drafts ? 'Review them in Reply…' : 'Reply…'}</button></p>` : null}` : null}
      ${canRequest ? html`<div class="btn-row request-row">
        <input class="input" aria-label="Reviewers (people)" placeholder="people: alice, bob" value=${people} onInput=${(e) => setPeople(e.currentTarget.value)} />
        <input class="input" aria-label="Reviewer group" placeholder="and/or a group" value=${group} onInput=${(e) => setGroup(e.currentTarget.value)} />
        <button type="button" class="btn" onClick=${requestReview} disabled=${!!busy || noName}>Request review</button>
      </div>` : null}
      ${canCi || canPolicy || canAttest ? html`<div class="btn-row evidence-row">
        ${canCi ? html`<button type="button" class="btn" onClick=${runCi} disabled=${!!busy} title=${`Queue a new CI run for ${viewed}`}>Run CI</button>` : null}
        ${canPolicy ? html`<button type="button" class="btn" onClick=${evaluate} disabled=${!!busy} title=${`Evaluate the policy of ${viewed} now`}>Evaluate policy</button>` : null}
        ${canAttest ? html`<a class="btn attest-link" href="#attestation" title=${`Record the attestation of ${viewed} (the Checks tab)`}>Attest…</a>` : null}
      </div>` : null}
      ${canRebase && selected && stale ? html`<div class="btn-row rebase-row">
        <button type="button" class="btn rebase-btn" onClick=${rebase} disabled=${!!busy} title=${`Build a new patchset: ${selected} merged onto the head of ${c.land_target_line} by the server (nothing is written if a path conflicts)`}>Rebase</button>
        <span class="muted small">${c.land_target_line} moved since ${selected.replace(/^.*\./, '')}'s base: rebase it onto the head as a new patchset.</span>
      </div>` : null}
      ${landOk ? html`<div class="btn-row land-row">
        <label class="field inline"><span>Land as</span>
          <select value=${mode} onChange=${(e) => setMode(e.currentTarget.value)}>
            <option value="merge">merge</option>
            <option value="ff-only">fast-forward only</option>
            <option value="direct">direct (rebase)</option>
          </select>
        </label>
        <button type="button" class=${`btn ${canLand && !landOff ? 'primary' : ''}`} onClick=${land} disabled=${!!busy || !!landOff} aria-describedby=${landOff}>Land…</button>
      </div>
      ${queued ? html`<p class="muted small" id="land-queued-reason">In the land queue as <code>${queued.entry_id}</code> (${queued.state}${queued.position != null ? `, position ${queued.position}` : ''}): the queue lands it onto what it tested. Remove it from the queue to land it by hand.</p>`
        : conflict ? html`<p class="muted small" id="land-conflict-reason">It conflicts with the head of ${conflict.target_line} in ${conflict.conflicts_count === 1 ? '1 path' : `${conflict.conflicts_count} paths`}: rebase it locally, resolve them and push a new patchset; a land now would be refused.</p>` : null}` : null}
      ${missing.length ? html`<div class="muted small role-note">${missing.map((m) => html`<p>${m}.</p>`)}<p>${yourRole(access)}</p></div>` : null}
      ${!access.loaded ? html`<p class="muted small" role="status">Reading what you may do here…</p>` : null}`}
    ${busy ? html`<p class="muted" role="status">Working…</p>` : null}
  </${Card}>`;
}

// ---------------------------------------------------------------- land history

// A change's lands, newest first, from GET read/changes/{ref}/lands (paged: the newest 50 here,
// with a link to read more).
const LAND_PAGE = 50;

function LandRows({ repo, lands }) {
  return html`<ul class="rows">${lands.map((l) => html`<li class="row">
    <div class="row-main">
      <a class="row-title" href=${ui.land(repo, l.land_id)}>${l.land_id}</a>
      <div class="row-meta">${l.mode} onto <${LineLink} repo=${repo} name=${l.target_line} /> · <${PsLink} repo=${repo} id=${l.patchset_id} />${l.landed_by ? html` · <span class="landed-by" title="who asked for the land, as the server's trusted ingress named them">by ${l.landed_by}</span>` : null} · <${Time} s=${l.finished_at_s} /></div>
      ${l.failure_message ? html`<div class="muted small">${l.failure_message}</div>` : null}
    </div>
    <div class="row-side"><${Badge} value=${l.status} />${l.failure_kind ? html` <${Badge} value=${l.failure_kind} tone="bad" />` : null}</div>
  </li>`)}</ul>`;
}

/** `version`: a new value whenever the change page read its data again (after a land event or an action), to read the lands again too. */
export function LandHistory({ repo, change, version }) {
  const [state, setState] = useState({ lands: [], next: null, error: null, loaded: false, busy: false });
  const load = async (cursor) => {
    setState((st) => ({ ...st, busy: true }));
    try {
      const page = await get(repoPath(repo, `/read/changes/${seg(change.change_id)}/lands?limit=${LAND_PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`));
      setState((st) => ({ lands: cursor ? [...st.lands, ...page.lands] : page.lands, next: page.next_cursor, error: null, loaded: true, busy: false }));
    } catch (error) {
      setState((st) => ({ ...st, error, loaded: true, busy: false }));
    }
  };
  useEffect(() => { load(null); }, [repo, change.change_id, change.updated_at_s, version]);
  return html`<${Card} title="Lands" id="lands">
    ${state.lands.length ? html`<${LandRows} repo=${repo} lands=${state.lands} />` : null}
    ${state.loaded && !state.error && state.lands.length === 0 ? html`<${Empty}>No land of this change yet.</${Empty}>` : null}
    ${state.error ? html`<p class="bad-text">${explain(state.error)}</p>` : null}
    ${state.next ? html`<button type="button" class="btn small" onClick=${() => load(state.next)} disabled=${state.busy}>${state.busy ? 'Loading…' : 'Older lands'}</button>` : null}
  </${Card}>`;
}
