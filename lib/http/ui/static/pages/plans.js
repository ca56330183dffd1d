// Plans (the interface's "sprints"): the list, a plan with its head revision's Markdown artifact
// rendered (../markdown.js) and its revisions, and one revision.
import { html } from '../vendor/preact.js';
import { get, listAll, repoPath, seg } from '../api.js';
import { Async, Badge, Card, Empty, Time, plural, ui, useAsync, useTitle } from '../util.js';
import { Markdown } from '../markdown.js';

export function PlansPage({ repo }) {
  useTitle('Plans');
  const plans = useAsync(() => listAll(repoPath(repo, '/sprints'), 'plans'), [repo]);
  return html`<div class="page">
    <h1>Plans</h1>
    <${Async} state=${plans} what="plans">${(d) => (d.rows.length === 0 ? html`<${Empty}>No plan yet (<code>cairn task start --create PLAN.md</code>).</${Empty}>` : html`<ul class="rows">${d.rows.map((p) => html`<li class="row">
      <div class="row-main"><a class="row-title" href=${ui.plan(repo, p.plan_id)}>${p.title}</a>
        <div class="row-meta"><code>${p.plan_id}</code>${p.artifact_path ? html` · <code>${p.artifact_path}</code>` : null} · ${plural(p.revision_count, 'revision')}</div></div>
      <div class="row-side"><${Badge} value=${p.status} /><${Time} s=${p.updated_at_s} /></div>
    </li>`)}</ul>`)}</${Async}>
  </div>`;
}

function Items({ items }) {
  if (!items || items.length === 0) return html`<${Empty}>No items.</${Empty}>`;
  return html`<ul class="items">${items.map((it) => html`<li class=${`item ${it.checkbox_state}`}>
    <input type="checkbox" disabled checked=${it.checkbox_state === 'checked'} aria-label=${it.checkbox_state} />
    <span>${it.text || html`<span class="muted">(no text)</span>`}</span>
    ${it.plan_item_ref ? html`<code class="item-ref">#${it.plan_item_ref}</code>` : null}
    ${it.heading_path && it.heading_path.length > 1 ? html`<span class="muted small">${it.heading_path.join(' › ')}</span>` : null}
  </li>`)}</ul>`;
}

function Revision({ repo, planId, artifact }) {
  const r = artifact.revision;
  const a = artifact.packed_artifact;
  return html`<div class="grid-2 wide-left">
    <${Card} title=${a.artifact_path ?? r.artifact_path} className="doc-card">
      <${Markdown} text=${a.body ?? ''} />
    </${Card}>
    <div class="col">
      <${Card} title="Revision">
        <dl class="facts">
          <div><dt>Revision</dt><dd><a href=${ui.revision(repo, planId, r.plan_revision_id)}><code>${r.plan_revision_id.slice(0, 16)}…</code></a> (#${r.revision_number})</dd></div>
          <div><dt>Parent</dt><dd>${r.parent_revision_id ? html`<a href=${ui.revision(repo, planId, r.parent_revision_id)}><code>${r.parent_revision_id.slice(0, 16)}…</code></a>` : 'none'}</dd></div>
          <div><dt>Heading</dt><dd>${r.artifact_heading}</dd></div>
          ${r.summary ? html`<div><dt>Summary</dt><dd>${r.summary}</dd></div>` : null}
          <div><dt>Artifact</dt><dd><code title=${a.sha256}>${a.size} bytes</code></dd></div>
          <div><dt>Created</dt><dd><${Time} s=${r.created_at_s} /></dd></div>
        </dl>
      </${Card}>
      <${Card} title="Items"><${Items} items=${r.items} /></${Card}>
    </div>
  </div>`;
}

export function PlanPage({ repo, planId }) {
  const state = useAsync(async () => {
    const P = (rest) => get(repoPath(repo, `/sprints/${seg(planId)}${rest}`));
    const detail = await P('');
    const [revisions, artifact] = await Promise.all([
      listAll(repoPath(repo, `/sprints/${seg(planId)}/revisions`), 'revisions'),
      detail.head_revision ? P(`/revisions/${seg(detail.head_revision.plan_revision_id)}/artifacts`) : null,
    ]);
    return { plan: detail.plan, revisions: revisions.rows, artifact };
  }, [repo, planId]);
  useTitle(state.data ? state.data.plan.title : planId);
  return html`<div class="page">
    <${Async} state=${state} what=${`plan ${planId}`}>${(d) => html`
      <div class="page-head"><h1>${d.plan.title} <${Badge} value=${d.plan.status} /></h1>
        <p class="meta"><code>${d.plan.plan_id}</code> · ${plural(d.plan.revision_count, 'revision')} · updated <${Time} s=${d.plan.updated_at_s} /></p></div>
      ${d.artifact ? html`<${Revision} repo=${repo} planId=${planId} artifact=${d.artifact} />` : html`<${Empty}>No revision.</${Empty}>`}
      <${Card} title="Revisions">
        <ol class="rows">${d.revisions.map((r) => html`<li class="row">
          <div class="row-main"><a class="row-title" href=${ui.revision(repo, planId, r.plan_revision_id)}>#${r.revision_number} ${r.title}</a>
            <div class="row-meta"><code>${r.plan_revision_id}</code>${r.summary ? html` · ${r.summary}` : null}</div></div>
          <div class="row-side">${r.plan_revision_id === d.plan.head_revision_id ? html`<${Badge} value="head" tone="accent" />` : null}<${Time} s=${r.created_at_s} /></div>
        </li>`)}</ol>
      </${Card}>`}</${Async}>
  </div>`;
}

export function RevisionPage({ repo, planId, revisionId }) {
  useTitle(`Revision ${revisionId.slice(0, 12)}`);
  const state = useAsync(() => get(repoPath(repo, `/sprints/${seg(planId)}/revisions/${seg(revisionId)}/artifacts`)), [repo, planId, revisionId]);
  return html`<div class="page">
    <${Async} state=${state} what="the revision">${(d) => html`
      <div class="page-head"><h1>${d.revision.title} <span class="muted">revision #${d.revision.revision_number}</span></h1>
        <p class="meta"><a href=${ui.plan(repo, planId)}>${planId}</a> · <code>${d.revision.plan_revision_id}</code></p></div>
      <${Revision} repo=${repo} planId=${planId} artifact=${d} />`}</${Async}>
  </div>`;
}
