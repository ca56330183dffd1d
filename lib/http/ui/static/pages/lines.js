// Lines and a line's history: the snapshots reached from its head through their parents
// (GET snapshots/{id}?include_content=false, first parents first, a page at a time), and the
// changes that landed on it. A snapshot's page lists its files. The Lines page also shows how
// to clone each line over git and the repository's git mirrors (docs/git.md "Mirror"), read
// again on `git_mirror.diverged` and every 10 s while the page is visible (a push that
// succeeds or fails writes no event).
import { html, useEffect, useState } from '../vendor/preact.js';
import { del, get, listAll, post, repoPath, seg } from '../api.js';
import { confirmAction } from '../dialogs.js';
import { useLiveRefresh } from '../live.js';
import { Async, Badge, Card, Empty, ErrorNote, LineLink, Snap, Time, plural, short, ui, useAsync, useTitle } from '../util.js';
import { ChangeRows } from './home.js';
import { useRepoAccess } from '../session.js';

const PAGE = 15;
/** How often the mirrors are read again while the page is visible. */
const MIRROR_POLL_MS = 10_000;

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
      </tr>`)}</tbody></table>
      <div class="lines-git">
        <${Card} title="Clone over git" id="clone">
          <p class="muted small">Each line is served as a git repository of its own (read-only); its branch is the line's name.</p>
          <ul class="rows clone-list">${d.rows.filter((l) => l.status !== 'archived').map((l) => html`<li class="row"><${CloneCommand} repo=${repo} line=${l.name} /></li>`)}</ul>
        </${Card}>
        <${Mirrors} repo=${repo} />
      </div>`)}</${Async}>
  </div>`;
}

/**
 * `git clone http://HOST/v1/native/repository-authorities/R/git/LINE.git` (a `/` in the line's
 * name sent as %2F). The served repository's HEAD names main, so another line needs --branch.
 */
export const cloneCommand = (repo, line) => `git clone ${line === 'main' ? '' : `--branch ${line} `}${location.origin}${repoPath(repo, `/git/${seg(line)}.git`)}`;

/** A line's clone command in a read-only field (select it, or Copy). */
function CloneCommand({ repo, line }) {
  const [copied, setCopied] = useState(null);
  const text = cloneCommand(repo, line);
  const copy = async (e) => {
    const field = e.currentTarget.parentElement.querySelector('input');
    try {
      await navigator.clipboard.writeText(text);
      setCopied('Copied');
    } catch {
      // No clipboard (a page served over plain http on another host): select it for Ctrl+C.
      field.focus();
      field.select();
      setCopied('Selected: press Ctrl+C');
    }
  };
  return html`<div class="clone" data-line=${line}>
    <label class="clone-line" for=${`clone-${line}`}><code>${line}</code></label>
    <input class="input clone-command" id=${`clone-${line}`} readonly value=${text} onFocus=${(e) => e.currentTarget.select()} spellcheck="false" />
    <button type="button" class="btn small" onClick=${copy} aria-label=${`Copy the clone command of line ${line}`}>Copy</button>
    <span class="muted small" role="status">${copied}</span>
  </div>`;
}

const MIRROR_TONES = { ok: 'good', pending: 'warn', retrying: 'warn', diverged: 'bad' };

/** "in 12 s", "in 3 minutes", "now": when a retrying mirror pushes next. */
function inTime(ms) {
  const d = Math.round((ms - Date.now()) / 1000);
  if (d <= 0) return 'now';
  if (d < 90) return `in ${d} s`;
  if (d < 5400) return `in ${Math.round(d / 60)} minutes`;
  return `at ${new Date(ms).toISOString().slice(11, 19)}Z`;
}

/** Calls `f` every `ms` while the page is visible, and once when it becomes visible again. */
function useVisiblePoll(ms, f, deps) {
  useEffect(() => {
    let timer = null;
    const arm = () => {
      clearInterval(timer);
      timer = document.visibilityState === 'visible' ? setInterval(f, ms) : null;
    };
    const onVisibility = () => {
      if (document.visibilityState === 'visible') f();
      arm();
    };
    arm();
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, deps);
}

/** The repository's git mirrors: each one's state, what it pushed last, and why it stopped. */
function Mirrors({ repo }) {
  const mirrors = useAsync(() => get(repoPath(repo, '/git-mirrors')), [repo]);
  const [busy, setBusy] = useState(null);
  const [error, setError] = useState(null);
  const access = useRepoAccess(repo);
  useLiveRefresh(repo, ['git_mirror.diverged'], () => true, mirrors.reload);
  useVisiblePoll(MIRROR_POLL_MS, () => mirrors.reload(), [repo, mirrors.reload]);
  const act = async (m, what) => {
    if (what === 'remove') {
      const ok = await confirmAction({
        title: `Remove ${m.mirror_id}?`,
        body: html`<p>Line <code>${m.line}</code> stops being pushed to <code>${m.url}</code>. The remote keeps what it holds; nothing is deleted there.</p>`,
        confirm: 'Remove the mirror',
        danger: true,
      });
      if (!ok) return;
    }
    setBusy(m.mirror_id);
    setError(null);
    try {
      const path = repoPath(repo, `/git-mirrors/${seg(m.mirror_id)}`);
      await (what === 'remove' ? del(path) : post(`${path}:resume`));
    } catch (err) {
      setError({ err, what: `Could not ${what} ${m.mirror_id}` });
    } finally {
      setBusy(null);
      mirrors.reload();
    }
  };
  return html`<${Card} title="Git mirrors" id="mirrors" right=${mirrors.data ? html`<span class="count">${mirrors.data.count}</span>` : null}>
    ${error ? html`<${ErrorNote} error=${error.err} what=${error.what} />` : null}
    <${Async} state=${mirrors} what="the git mirrors">${(d) => (d.mirrors.length === 0
      ? html`<${Empty}>No mirror: <code>cairn mirror add LINE URL</code> pushes a line to a git remote after each move.</${Empty}>`
      : html`<ul class="rows mirrors">${d.mirrors.map((m) => html`<li class="mirror" data-mirror-id=${m.mirror_id} data-state=${m.state}>
          <${Mirror} repo=${repo} m=${m} busy=${busy === m.mirror_id} act=${act} canResume=${access.may('gitMirrors.resume')} canRemove=${access.may('gitMirrors.delete')} />
        </li>`)}</ul>`)}</${Async}>
  </${Card}>`;
}

function Mirror({ repo, m, busy, act, canResume = true, canRemove = true }) {
  const head = html`<div class="mirror-head">
    <span class="mirror-title"><${LineLink} repo=${repo} name=${m.line} /> <span aria-label="pushed to">→</span> <code class="mirror-url">${m.url}</code></span>
    <${Badge} value=${m.state} tone=${MIRROR_TONES[m.state]} title=${`mirror ${m.mirror_id}: ${m.state}`} />
  </div>`;
  const pushed = m.last_pushed_commit_id
    ? html`<code title=${m.last_pushed_commit_id}>${short(m.last_pushed_commit_id)}</code> <${Time} s=${m.last_pushed_at_s} />`
    : html`<span class="muted">nothing yet</span>`;
  const diverged = m.state === 'diverged';
  return html`${head}
    ${diverged ? html`<div class="error-note mirror-diverged" role="group" aria-label=${`${m.mirror_id} diverged`}>
      <p><strong>Stopped: the remote diverged.</strong> ${m.diverged_remote_commit_id
        ? html`The remote's branch <code>${m.line}</code> is at <code title=${m.diverged_remote_commit_id}>${short(m.diverged_remote_commit_id)}</code>, which is not a commit of line <code>${m.line}</code> (someone pushed to it).`
        : html`The remote's branch <code>${m.line}</code> was deleted after this mirror had pushed it.`}${' '}Nothing was forced, and nothing is pushed until the mirror is resumed${m.diverged_at_s ? html` (diverged <${Time} s=${m.diverged_at_s} />)` : null}.</p>
      <p>Put the remote right first: reset its branch to one of the line's commits, or delete it. Then Resume: the mirror pushes as it did the first time.</p>
      <div class="btn-row">
        ${canResume ? html`<button type="button" class="btn primary" disabled=${busy} onClick=${() => act(m, 'resume')}>Resume</button>` : null}
        ${canRemove ? html`<button type="button" class="btn danger" disabled=${busy} onClick=${() => act(m, 'remove')}>Remove</button>` : null}
      </div>
    </div>` : null}
    <dl class="facts mirror-facts">
      <div><dt>Last pushed</dt><dd>${pushed}</dd></div>
      ${m.state === 'retrying' ? html`<div><dt>Retrying</dt><dd>${plural(m.failures, 'failure')} in a row; next attempt ${m.next_attempt_at_ms ? html`<time datetime=${new Date(m.next_attempt_at_ms).toISOString()}>${inTime(m.next_attempt_at_ms)}</time>` : 'soon'}</dd></div>` : null}
      ${m.last_error && !diverged ? html`<div><dt>Last error</dt><dd class="prewrap mirror-error">${m.last_error}</dd></div>` : null}
      ${m.credential ? html`<div><dt>Credential</dt><dd><code>${m.credential}</code></dd></div>` : null}
    </dl>
    ${diverged || !canRemove ? null : html`<div class="btn-row">
      <button type="button" class="btn small danger" disabled=${busy} onClick=${() => act(m, 'remove')} aria-label=${`Remove ${m.mirror_id}`}>Remove</button>
    </div>`}`;
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
