// Modal dialogs of the page (a native <dialog>, so focus stays inside and Escape closes it):
// asking the reviewer's name once, and confirming an action. Never window.prompt/confirm.
import { html, useState, useEffect, useRef } from './vendor/preact.js';
import { identity, setReviewerName } from './util.js';

const OPEN = 'cairn:dialog';

function open(spec) {
  return new Promise((resolve) => dispatchEvent(new CustomEvent(OPEN, { detail: { ...spec, resolve } })));
}

/**
 * The reviewer's name for an action: the ingress header's value, the stored name, or asked once
 * now. Null when there is none (the reviewer cancelled, or the ingress sent no header).
 */
export async function reviewerName() {
  const id = identity();
  if (id.name) return id.name;
  if (id.source === 'header') {
    await open({ kind: 'notice', title: 'No identity', body: `This server takes your name from the ${id.header} request header, and this page was served without it. Ask whoever runs the ingress.` });
    return null;
  }
  return open({ kind: 'name' });
}

/** Ask the reviewer to confirm; resolves true or false. */
export function confirmAction({ title, body, confirm = 'Confirm', danger = false }) {
  return open({ kind: 'confirm', title, body, confirm, danger });
}

export function changeName() {
  return open({ kind: 'name', change: true });
}

/** Mounted once by the app: shows the dialog a call above asked for. */
export function DialogHost() {
  const [spec, setSpec] = useState(null);
  const ref = useRef(null);
  const input = useRef(null);
  useEffect(() => {
    const f = (e) => setSpec(e.detail);
    addEventListener(OPEN, f);
    return () => removeEventListener(OPEN, f);
  }, []);
  useEffect(() => {
    const d = ref.current;
    if (spec && d && !d.open) {
      d.showModal();
      if (input.current) input.current.focus();
    }
  }, [spec]);
  if (!spec) return null;
  const finish = (value) => {
    const d = ref.current;
    if (d && d.open) d.close();
    setSpec(null);
    spec.resolve(value);
  };
  const onCancel = (e) => {
    e.preventDefault();
    finish(spec.kind === 'confirm' ? false : null);
  };
  if (spec.kind === 'name') {
    const submit = (e) => {
      e.preventDefault();
      const name = input.current.value.trim();
      if (!name) return;
      setReviewerName(name);
      finish(name);
    };
    return html`<dialog ref=${ref} class="dialog" onCancel=${onCancel} aria-labelledby="dlg-title">
      <form method="dialog" onSubmit=${submit}>
        <h2 id="dlg-title">${spec.change ? 'Change your name' : 'Who are you?'}</h2>
        <p>Reviews are recorded under this name. It is kept in this browser (localStorage) and sent as the <code>reviewer</code> of your reviews; the server does not check it.</p>
        <label class="field"><span>Your name</span>
          <input ref=${input} name="reviewer" autocomplete="username" maxlength="256" required value=${spec.change ? identity().name ?? '' : ''} />
        </label>
        <div class="dialog-actions">
          <button type="button" class="btn" onClick=${() => finish(null)}>Cancel</button>
          <button type="submit" class="btn primary">Save</button>
        </div>
      </form>
    </dialog>`;
  }
  return html`<dialog ref=${ref} class="dialog" onCancel=${onCancel} aria-labelledby="dlg-title">
    <form method="dialog" onSubmit=${(e) => { e.preventDefault(); finish(true); }}>
      <h2 id="dlg-title">${spec.title}</h2>
      <div class="dialog-body">${spec.body}</div>
      <div class="dialog-actions">
        ${spec.kind === 'confirm' ? html`<button type="button" class="btn" onClick=${() => finish(false)}>Cancel</button>` : null}
        <button type="submit" class=${`btn ${spec.danger ? 'danger' : 'primary'}`} ref=${input}>${spec.kind === 'confirm' ? spec.confirm : 'OK'}</button>
      </div>
    </form>
  </dialog>`;
}
