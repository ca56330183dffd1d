// Signing in with a personal access token (`cairn serve --auth tokens`; docs/ui.md "Signing
// in"). The token is checked by asking the session with it before it is kept; it is kept in
// sessionStorage (./api.js) and never shown again, put in a URL or logged.
import { html, useEffect, useRef, useState } from './vendor/preact.js';
import { ApiError, api, setToken } from './api.js';

/** The form: `reason` says why it shows (a request answered 401, the token was refused, or the person asked). */
export function SignIn({ reason }) {
  const input = useRef(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  useEffect(() => { input.current?.focus(); }, []);
  const submit = async (e) => {
    e.preventDefault();
    const value = input.current.value.trim();
    if (!value) {
      setError('Paste a token first.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const s = await api('GET', '/v1/native/session', undefined, { bearer: value, quiet: true });
      if (!s.account) throw new Error('the server took the request but names no account for this token');
      input.current.value = '';
      setToken(value);
    } catch (err) {
      // the server's words (which never repeat the token), or why there was no answer
      const why = err instanceof ApiError && err.status === 401 ? 'The server did not accept this token: it is mistyped, expired or revoked.'
        : err instanceof ApiError && err.status === 429 ? `Too many failed sign-ins from this address: ${err.message}`
          : `Could not sign in: ${err.message}`;
      setError(why);
    } finally {
      setBusy(false);
    }
  };
  return html`<div class="page signin-page">
    <form class="card signin" onSubmit=${submit} aria-labelledby="signin-title">
      <div class="card-body">
        <h1 id="signin-title">Sign in</h1>
        ${reason ? html`<p class="signin-reason">${reason}</p>` : null}
        <p>This server signs people in with a <strong>personal access token</strong>. Make one with <code>cairn token create NAME</code> (after <code>cairn login</code>), or ask a server admin: <code>cairn admin user add NAME</code> prints a new account's first token.</p>
        <label class="field"><span>Token</span>
          <input ref=${input} type="password" name="token" class="input token-input" autocomplete="off" spellcheck="false" placeholder="paste your token here" aria-describedby="signin-note" required />
        </label>
        ${error ? html`<p class="flash bad signin-error" role="alert">${error}</p>` : null}
        <div class="btn-row"><button type="submit" class="btn primary" disabled=${busy}>${busy ? 'Signing in…' : 'Sign in'}</button></div>
        <p class="muted small" id="signin-note">The token stays in this browser tab only (sessionStorage) and goes to this server with each request; closing the tab or <em>Sign out</em> forgets it.</p>
      </div>
    </form>
  </div>`;
}
