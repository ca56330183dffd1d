// A repository's settings, for its admins (docs/ui.md "Settings"): who has which role
// (GET / PATCH {repo}/access: grants to accounts and groups, and whether anonymous callers may
// read) and the repository's rules (GET / PUT {repo}/rules), shown only when the server has
// that route. URL: /ui/repos/R/settings. Nobody but an admin is offered the page (the session's
// `may` holds access.change); the server refuses the writes of anyone else anyway.
import { html, useState } from '../vendor/preact.js';
import { ApiError, api, get, repoPath } from '../api.js';
import { confirmAction } from '../dialogs.js';
import { ROLES } from '../roles.js';
import { needs, useRepoAccess, yourRole } from '../session.js';
import { Async, Card, Empty, Time, useAsync, useTitle } from '../util.js';

function explain(err) {
  if (err instanceof ApiError) return `${err.status ? `HTTP ${err.status}: ` : ''}${err.message}`;
  return String(err && err.message ? err.message : err);
}

function Flash({ flash }) {
  if (!flash) return null;
  return html`<div class=${`flash ${flash.ok ? 'ok' : 'bad'}`} role=${flash.ok ? 'status' : 'alert'}>${flash.text}</div>`;
}

export function SettingsPage({ repo }) {
  useTitle(`Settings of repository ${repo}`);
  const access = useRepoAccess(repo);
  if (!access.loaded) return html`<div class="page"><p class="loading" role="status">Loading…</p></div>`;
  if (!access.may('access.change')) {
    return html`<div class="page settings-page">
      <h1>Settings</h1>
      <p class="note-box not-admin">Only an admin of this repository sees its settings: ${needs(access, 'access.change', 'this page')}. ${yourRole(access)}</p>
    </div>`;
  }
  return html`<div class="page settings-page">
    <div class="page-head"><h1>Settings</h1></div>
    <${AccessCard} repo=${repo} />
    <${RulesCard} repo=${repo} canPut=${access.may('rules.put')} />
  </div>`;
}

// ---------------------------------------------------------------- access

const SUBJECT_KINDS = [['user', 'account'], ['group', 'group']];

function AccessCard({ repo }) {
  // 404: the server runs without accounts (no auth mode), so there is nothing to grant
  const state = useAsync(() => get(repoPath(repo, '/access')).catch((e) => {
    if (e instanceof ApiError && e.status === 404) return { none: e.message };
    throw e;
  }), [repo]);
  const [busy, setBusy] = useState(false);
  const [flash, setFlash] = useState(null);
  const [kind, setKind] = useState('user');
  const [name, setName] = useState('');
  const [role, setRole] = useState('reader');
  const change = async (body, success) => {
    setBusy(true);
    setFlash(null);
    try {
      await api('PATCH', repoPath(repo, '/access'), body);
      setFlash({ ok: true, text: success });
      state.reload();
      return true;
    } catch (err) {
      setFlash({ ok: false, text: explain(err) });
      return false;
    } finally {
      setBusy(false);
    }
  };
  const grant = async (e) => {
    e.preventDefault();
    const who = name.trim();
    if (!who) {
      setFlash({ ok: false, text: `Name the ${kind === 'user' ? 'account' : 'group'} first.` });
      return;
    }
    const subject = `${kind}:${who}`;
    if (await change({ grant: [{ subject, role }] }, `Granted ${role} to ${subject}.`)) setName('');
  };
  const revoke = async (g) => {
    const ok = await confirmAction({
      title: `Revoke ${g.subject}?`,
      body: html`<p><code>${g.subject}</code> loses the <strong>${g.role}</strong> role in this repository (a role held through a group stays).</p>`,
      confirm: 'Revoke',
      danger: true,
    });
    if (ok) await change({ revoke: [g.subject] }, `Revoked ${g.subject}.`);
  };
  return html`<${Card} title="Access" id="access">
    <${Flash} flash=${flash} />
    <${Async} state=${state} what="the access">${(d) => (d.none ? html`<p class="muted no-accounts">${d.none.charAt(0).toUpperCase()}${d.none.slice(1)}. Every caller may do everything here.</p>` : html`
      <label class="check anonymous-read"><input type="checkbox" name="anonymous_read" checked=${d.anonymous_read} disabled=${busy}
        onChange=${(e) => change({ anonymous_read: e.currentTarget.checked }, e.currentTarget.checked ? 'Anyone may now read this repository without signing in.' : 'Reading now needs a role.')} />
        Anyone may read this repository without signing in (anonymous read)</label>
      ${d.grants.length === 0 ? html`<${Empty}>No grant: only server admins have a role here.</${Empty}>` : html`<table class="table compact grants">
        <thead><tr><th>Who</th><th>Role</th><th><span class="sr-only">Revoke</span></th></tr></thead>
        <tbody>${d.grants.map((g) => html`<tr data-subject=${g.subject} data-role=${g.role}>
          <td><span class="muted small">${g.subject.startsWith('group:') ? 'group' : 'account'}</span> <strong>${g.subject.replace(/^[a-z]+:/, '')}</strong></td>
          <td>${g.role}</td>
          <td class="num"><button type="button" class="btn small danger revoke" disabled=${busy} onClick=${() => revoke(g)} aria-label=${`Revoke ${g.subject}`}>Revoke</button></td>
        </tr>`)}</tbody>
      </table>`}
      <form class="grant-form" onSubmit=${grant} aria-label="Grant a role">
        <h3 class="small-head">Grant a role</h3>
        <div class="btn-row grant-row">
          <select aria-label="Account or group" name="kind" value=${kind} onChange=${(e) => setKind(e.currentTarget.value)}>
            ${SUBJECT_KINDS.map(([k, label]) => html`<option value=${k}>${label}</option>`)}
          </select>
          <input class="input" name="subject" aria-label="Name" placeholder=${kind === 'user' ? 'account name' : 'group name'} value=${name} onInput=${(e) => setName(e.currentTarget.value)} />
          <select aria-label="Role" name="role" value=${role} onChange=${(e) => setRole(e.currentTarget.value)}>
            ${ROLES.map((r) => html`<option value=${r}>${r}</option>`)}
          </select>
          <button type="submit" class="btn primary" disabled=${busy}>Grant</button>
        </div>
        <p class="muted small">Roles: a <strong>reader</strong> reads; a <strong>contributor</strong> also pushes, reviews, comments and attests; a <strong>maintainer</strong> also lands and runs the land queue; an <strong>admin</strong> also changes this page. Granting again changes the role.</p>
      </form>`)}</${Async}>
  </${Card}>`;
}

// ---------------------------------------------------------------- rules

const RULE_FLAGS = [
  ['require_code_owners', 'Require an approval from a code owner of each changed path'],
  ['dismiss_stale_approvals', 'Dismiss approvals when a new patchset changes the content'],
  ['require_ci', 'Require CI to pass'],
  ['require_resolved_threads', 'Require every comment thread resolved'],
];

const names = (text) => [...new Set(text.split(/[\s,]+/).filter(Boolean))];

/** The rules card: hidden when the server has no rules route (GET answers 404). */
function RulesCard({ repo, canPut }) {
  const state = useAsync(() => get(repoPath(repo, '/rules')).catch((e) => {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }), [repo]);
  // the form starts again from what the server holds after each save; what the save said stays
  const [flash, setFlash] = useState(null);
  // nothing until it is known whether the server has rules (no card that shows and goes)
  if (state.data === null || (state.data === undefined && !state.error)) return null;
  return html`<${Card} title="Rules" id="rules">
    <${Flash} flash=${flash} />
    <${Async} state=${state} what="the rules">${(d) => html`<${RulesForm} key=${d.updated_at_s ?? 0} repo=${repo} d=${d} canPut=${canPut} onDone=${state.reload} setFlash=${setFlash} />`}</${Async}>
  </${Card}>`;
}

function RulesForm({ repo, d, canPut, onDone, setFlash }) {
  const r = d.rules;
  const [approvals, setApprovals] = useState(String(r.required_approvals ?? 0));
  const [flags, setFlags] = useState(() => Object.fromEntries(RULE_FLAGS.map(([k]) => [k, !!r[k]])));
  const [land, setLand] = useState((r.land_allowed ?? []).join(', '));
  const [bypass, setBypass] = useState((r.bypass_allowed ?? []).join(', '));
  const [busy, setBusy] = useState(false);
  const save = async (e) => {
    e.preventDefault();
    const n = Number(approvals);
    if (!/^[0-9]+$/.test(approvals.trim()) || n > 10) {
      setFlash({ ok: false, text: 'Required approvals is a whole number from 0 to 10.' });
      return;
    }
    // Only what changed goes out (the route takes a partial set of rules).
    const next = { required_approvals: n, ...flags, land_allowed: names(land), bypass_allowed: names(bypass) };
    const partial = {};
    for (const [k, v] of Object.entries(next)) if (JSON.stringify(v) !== JSON.stringify(r[k] ?? (Array.isArray(v) ? [] : null))) partial[k] = v;
    if (Object.keys(partial).length === 0) {
      setFlash({ ok: true, text: 'Nothing changed.' });
      return;
    }
    setBusy(true);
    setFlash(null);
    try {
      await api('PUT', repoPath(repo, '/rules'), { rules: partial });
      setFlash({ ok: true, text: `Saved (${Object.keys(partial).join(', ')}).` });
      onDone();
    } catch (err) {
      setFlash({ ok: false, text: explain(err) });
    } finally {
      setBusy(false);
    }
  };
  const off = !canPut || busy;
  return html`<form class="rules-form" onSubmit=${save} aria-label="Repository rules">
    <label class="field inline"><span>Required approvals</span>
      <input class="input num-input" type="number" min="0" max="10" step="1" name="required_approvals" value=${approvals} disabled=${off} onInput=${(e) => setApprovals(e.currentTarget.value)} />
    </label>
    ${RULE_FLAGS.map(([k, label]) => html`<label class="check"><input type="checkbox" name=${k} checked=${flags[k]} disabled=${off} onChange=${(e) => { const on = e.currentTarget.checked; setFlags((f) => ({ ...f, [k]: on })); }} /> ${label}</label>`)}
    <label class="field"><span>Who may land (accounts and groups; empty: anyone whose role lets them land)</span>
      <input class="input" name="land_allowed" value=${land} disabled=${off} placeholder="alice, release" onInput=${(e) => setLand(e.currentTarget.value)} />
    </label>
    <label class="field"><span>Who may land past the rules (bypass; accounts and groups)</span>
      <input class="input" name="bypass_allowed" value=${bypass} disabled=${off} placeholder="nobody" onInput=${(e) => setBypass(e.currentTarget.value)} />
    </label>
    ${canPut ? html`<div class="btn-row"><button type="submit" class="btn primary" disabled=${busy}>Save rules</button></div>` : html`<p class="muted small">Changing the rules is not open to you.</p>`}
    ${d.updated_at_s ? html`<p class="muted small">Last changed <${Time} s=${d.updated_at_s} />${d.updated_by ? ` by ${d.updated_by}` : ''}.</p>` : null}
  </form>`;
}

