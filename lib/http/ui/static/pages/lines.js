// Lines and a line's history: the snapshots reached from its head through their parents
// (GET snapshots/{id}?include_content=false, first parents first, a page at a time), and the
// changes that landed on it. A snapshot's page lists its files.
import { html, useEffect, useState } from '../vendor/preact.js';
import { get, listAll, repoPath, seg } from '../api.js';
import { Async, Badge, Card, Empty, Snap, Time, plural, ui, useAsync, useTitle } from '../util.js';
import { ChangeRows } from './home.js';

const PAGE = 15;

export function LinesPage({ repo }) {
  useTitle('Lines');
  const lines = useAsync(() => listAll(repoPath(repo, '/lines'), 'lines'), [repo]);
  return html`<div class="page">
    <h1>Lines</h1>
    <${Async} state=${lines} what="lines">${(d) => (d.rows.length === 0 ? html`<${Empty}>No line yet: <code>cairn push</code> creates one.</${Empty}>` : html`<table class="table">
      <thead><tr><th>Line</th><th>Status</th><th>Head</th><th>Moved</th></tr></thead>
      <tbody>${d.rows.map((l) => html`<tr>
        <td><a href=${ui.line(repo, l.name)}>${l.name}</a></td>
        <td><${Badge} value=${l.status} /></td>
        <td><${Snap} repo=${repo} id=${l.head_snapshot_id} /></td>
        <td><${Time} s=${l.updated_at_s} /></td>
      </tr>`)}</tbody></table>`)}</${Async}>
  </div>`;
}

const snapshot = (repo, id) => get(repoPath(repo, `/snapshots/${seg(id)}?include_content=false`));

function human(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** The snapshots of a line from its head, following first parents, PAGE at a time. */
function History({ repo, head }) {
  const [rows, setRows] = useState([]);
  const [next, setNext] = useState(head);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const more = async (from) => {
    setBusy(true);
    try {
      let id = from;
      const got = [];
      while (id && got.length < PAGE) {
        const s = await snapshot(repo, id);
        got.push(s);
        id = s.snapshot.parent_snapshot_ids[0] ?? null;
      }
      setRows((r) => [...r, ...got]);
      setNext(id);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    setRows([]);
    if (head) more(head);
  }, [repo, head]);
  if (!head) return html`<${Empty}>The line is empty.</${Empty}>`;
  return html`<ol class="history">${rows.map((s) => {
    const sn = s.snapshot;
    return html`<li class="commit">
      <div class="commit-main">
        <a class="row-title" href=${ui.snapshot(repo, sn.snapshot_id)}>${sn.message || html`<span class="muted">(no message)</span>`}</a>
        <div class="row-meta"><${Snap} repo=${repo} id=${sn.snapshot_id} /> · ${plural(s.file_count, 'file')}, ${human(s.total_bytes)}
          ${sn.parent_snapshot_ids.length > 1 ? html` · <${Badge} value="merge" tone="accent" /> of ${sn.parent_snapshot_ids.map((p) => html` <${Snap} repo=${repo} id=${p} />`)}` : null}</div>
      </div>
      <${Time} s=${sn.created_at_s} />
    </li>`;
  })}</ol>
  ${error ? html`<p class="bad-text">${error.message}</p>` : null}
  ${busy ? html`<p class="loading" role="status">Reading snapshots…</p>` : next ? html`<button type="button" class="btn" onClick=${() => more(next)}>Older snapshots</button>` : html`<p class="muted small">The first snapshot of the line.</p>`}`;
}

export function LinePage({ repo, name }) {
  useTitle(`Line ${name}`);
  const line = useAsync(async () => {
    const [l, landed] = await Promise.all([get(repoPath(repo, `/lines/${seg(name)}`)), get(repoPath(repo, '/changes?status=landed&limit=100'))]);
    return { line: l.line ?? l, landed: landed.changes.filter((c) => (c.land_target_line ?? c.base_line) === name) };
  }, [repo, name]);
  return html`<div class="page">
    <${Async} state=${line} what=${`line ${name}`}>${(d) => html`
      <div class="page-head"><h1>Line <code>${d.line.name}</code> <${Badge} value=${d.line.status} /></h1>
        <p class="meta">head <${Snap} repo=${repo} id=${d.line.head_snapshot_id} /> · moved <${Time} s=${d.line.updated_at_s} /></p></div>
      <div class="grid-2">
        <${Card} title="History"><${History} repo=${repo} head=${d.line.head_snapshot_id} /></${Card}>
        <${Card} title="Changes landed here"><${ChangeRows} repo=${repo} changes=${d.landed} showStatus=${false} empty="No change has landed on this line." /></${Card}>
      </div>`}</${Async}>
  </div>`;
}

export function SnapshotPage({ repo, snapshotId }) {
  useTitle(`Snapshot ${snapshotId.slice(0, 12)}`);
  const s = useAsync(() => snapshot(repo, snapshotId), [repo, snapshotId]);
  return html`<div class="page">
    <${Async} state=${s} what="the snapshot">${(d) => html`
      <div class="page-head"><h1>${d.snapshot.message || 'Snapshot'}</h1>
        <p class="meta"><code>${d.snapshot.snapshot_id}</code> · <${Time} s=${d.snapshot.created_at_s} /> · ${plural(d.file_count, 'file')}, ${human(d.total_bytes)}
          · parents ${d.snapshot.parent_snapshot_ids.length ? d.snapshot.parent_snapshot_ids.map((p) => html` <${Snap} repo=${repo} id=${p} />`) : html`<span class="muted">none</span>`}</p></div>
      <${Card} title="Files">
        <table class="table compact"><thead><tr><th>Path</th><th>Kind</th><th class="num">Size</th></tr></thead>
          <tbody>${d.files.map((f) => html`<tr><td><code>${f.path}</code></td><td>${f.kind}</td><td class="num">${human(f.size)}</td></tr>`)}</tbody></table>
      </${Card}>`}</${Async}>
  </div>`;
}
