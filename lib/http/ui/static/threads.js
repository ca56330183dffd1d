// Comment threads on the change page (docs/ui.md "Comment threads"): the threads of the viewed
// patchset read once (GET changes/{ref}/threads?patchset=&author=, every page), indexed by file
// and line once, and rendered inline in the diff (diff.js asks this module for the threads of a
// row through ThreadsContext), at the top of their file, or in the Conversation card. Writing
// goes through the comment routes (docs/api.md "Comment threads (extensions)"): a thread or a
// reply (draft or published), resolve / reopen, and the Reply dialog's reviews:publish. Text
// typed in an editor is kept in localStorage until it is saved or cancelled, so a reload keeps
// it; saved drafts are the server's.
import { html, createContext, useCallback, useContext, useEffect, useMemo, useRef, useState } from './vendor/preact.js';
import { ApiError, api, get, post, query, repoPath, seg } from './api.js';
import { Markdown } from './markdown.js';
import { Badge, Time, plural, typing } from './util.js';
import { confirmAction, reviewerName } from './dialogs.js';

export const ThreadsContext = createContext(null);
/** Asks the change page to show one of its tabs (detail: the tab's id); n / p use it for the Conversation. */
export const SHOW_TAB = 'cairn:show-tab';
export const useThreads = () => useContext(ThreadsContext);

const psShort = (id) => String(id ?? '').replace(/^.*\./, '');
const lineLabel = (a) => (a.end_line && a.end_line !== a.line ? `lines ${a.line}–${a.end_line}` : `line ${a.line}`);
const sideLabel = (a) => (a.side === 'base' ? ' (base)' : '');

/** Where an anchor points, in words: `path line 12`, `path (file)`, `the patchset`. */
export function anchorLabel(a) {
  if (!a || a.kind === 'patchset') return 'the patchset';
  if (a.kind === 'file') return `${a.path} (file)`;
  return `${a.path} ${lineLabel(a)}${sideLabel(a)}`;
}

/** A row of the diff a thread or an editor sits under: `side:line` (the end line of a range). */
export const rowKey = (side, line) => `${side}:${line}`;
const endOf = (a) => a.end_line ?? a.line;

/** Every thread of the change as seen on `patchset` by `author` (their drafts too), all pages. */
/**
 * A read of the threads started with the page's first reads (pages/change.js), before the page
 * knows it needs them: the first reload of useThreadState takes it if it names the same change,
 * patchset and reader and is a few seconds old at most. One at a time.
 */
let early = null;
const EARLY_MS = 10000;
const earlyKey = (repo, change, patchset, author) => JSON.stringify([String(repo), change, patchset, author ?? null]);

export function readThreadsEarly(repo, change, patchset, author) {
  if (!patchset) return;
  const read = loadThreads(repo, change, patchset, author);
  read.catch(() => undefined);
  early = { key: earlyKey(repo, change, patchset, author), at: Date.now(), read };
}

function takeEarly(repo, change, patchset, author) {
  const e = early;
  early = null;
  if (!e || e.key !== earlyKey(repo, change, patchset, author) || Date.now() - e.at > EARLY_MS) return null;
  return e.read;
}

export async function loadThreads(repo, change, patchset, author) {
  const path = repoPath(repo, `/changes/${seg(change)}/threads`);
  const threads = [];
  let cursor = null;
  let unresolved = 0;
  for (let i = 0; i < 100; i++) {
    const page = await get(path + query({ patchset, author, limit: 1000, cursor }));
    if (i === 0) unresolved = page.unresolved;
    threads.push(...page.threads);
    cursor = page.next_cursor ?? null;
    if (cursor === null) break;
  }
  return { threads, unresolved };
}

/**
 * The threads placed once, for the whole page: by file (`top`: file threads, outdated ones and
 * lines the diff does not show; `lines`: a Map from rowKey to the threads ending there), the
 * general ones (patchset threads, and threads whose file the diff does not show), counts per
 * file (`against`: the diff compares with another patchset, so base-side lines are not its left side), and the unresolved ones in page order (for n / p). Linear in the threads: a rendered
 * row looks its threads up in a Map, never scans them.
 */
export function indexThreads(threads, files, against = null) {
  const inDiff = new Set(files.map((f) => f.path));
  const byFile = new Map();
  const general = [];
  const entry = (path) => {
    let e = byFile.get(path);
    if (!e) {
      e = { top: [], lines: new Map(), count: 0, unresolved: 0 };
      byFile.set(path, e);
    }
    return e;
  };
  for (const t of threads) {
    const a = t.anchor;
    const open = !t.draft && t.resolution === 'unresolved';
    if (a.kind === 'patchset' || !inDiff.has(a.path) || (t.outdated && t.outdated_reason === 'file_removed')) {
      general.push(t);
      continue;
    }
    const e = entry(a.path);
    e.count++;
    if (open) e.unresolved++;
    // compared with another patchset, the diff's left side is that patchset, not the base: base-side threads go on top
    if (a.kind === 'file' || t.outdated || (against && a.side === 'base')) e.top.push(t);
    else {
      const k = rowKey(a.side, endOf(a));
      const list = e.lines.get(k);
      if (list) list.push(t);
      else e.lines.set(k, [t]);
    }
  }
  // n / p order: the Conversation first (it is above the diff), then file by file, top threads then by line.
  const order = [];
  const isOpen = (t) => !t.draft && t.resolution === 'unresolved';
  for (const t of general) if (isOpen(t)) order.push({ id: t.thread_id, file: -1 });
  files.forEach((f, i) => {
    const e = byFile.get(f.path);
    if (!e) return;
    for (const t of e.top) if (isOpen(t)) order.push({ id: t.thread_id, file: i });
    const lined = [...e.lines.values()].flat().filter(isOpen).sort((x, y) => endOf(x.anchor) - endOf(y.anchor));
    for (const t of lined) order.push({ id: t.thread_id, file: i });
  });
  // every thread in page order, with where it sits: the list of threads (ThreadList) jumps there
  const all = general.map((t) => ({ t, file: -1, at: null }));
  files.forEach((f, i) => {
    const e = byFile.get(f.path);
    if (!e) return;
    for (const t of e.top) all.push({ t, file: i, at: null });
    const lined = [...e.lines.entries()].sort(([, x], [, y]) => endOf(x[0].anchor) - endOf(y[0].anchor));
    for (const [, ts] of lined) for (const t of ts) all.push({ t, file: i, at: { side: t.anchor.side, line: endOf(t.anchor) } });
  });
  return { byFile, general, order, all };
}

// ---------------------------------------------------------------- kept text of open editors

const DRAFT_PREFIX = 'cairn.draft:';

/** The key of an editor: what it writes on (a line range, a file, the patchset, a reply, an edit). */
export function editorKey(target) {
  switch (target.kind) {
    case 'line': return `L|${target.anchor.path}|${target.anchor.side}|${target.anchor.line}|${endOf(target.anchor)}`;
    case 'file': return `F|${target.path}`;
    case 'general': return 'P';
    case 'reply': return `R|${target.threadId}`;
    case 'edit': return `E|${target.commentId}`;
    default: return 'X';
  }
}

const storageKey = (repo, change, key) => `${DRAFT_PREFIX}${repo}:${change}:${key}`;

function store(repo, change, target, text) {
  try {
    const k = storageKey(repo, change, editorKey(target));
    if (text) localStorage.setItem(k, JSON.stringify({ target, text }));
    else localStorage.removeItem(k);
  } catch {
    /* storage disabled: the text lives as long as the page */
  }
}

function kept(repo, change) {
  const out = [];
  try {
    const prefix = storageKey(repo, change, '');
    for (let i = 0; i < localStorage.length; i++) {
      const k = localStorage.key(i);
      if (!k || !k.startsWith(prefix)) continue;
      try {
        const v = JSON.parse(localStorage.getItem(k));
        if (v && v.target && typeof v.text === 'string') out.push(v);
      } catch {
        /* not ours */
      }
    }
  } catch {
    /* storage disabled */
  }
  return out;
}

// ---------------------------------------------------------------- the state of the page's threads

function explain(err) {
  if (err instanceof ApiError) return `${err.status ? `HTTP ${err.status}: ` : ''}${err.message}`;
  return String(err && err.message ? err.message : err);
}

/**
 * The threads of the viewed patchset and what the page does with them. `version` changes
 * whenever the change page read its data again (an event, an action): the threads follow.
 */
export function useThreadState({ repo, change, viewed, selected, open, me, version, suggestions, canApply = false, onApplied = () => {} }) {
  const changeId = change.change_id;
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const [editors, setEditors] = useState(() => new Map());
  const [flash, setFlash] = useState(null);
  // the thread list's filter ('all' or 'unresolved'): the head's "N unresolved" sets it
  const [listFilter, setListFilter] = useState('all');
  const generation = useRef(0);
  // `fromPage`: the read that follows a read of the page, which may take the read the page started early (never one after a write of this page's)
  const reload = useCallback(async (fromPage) => {
    if (!viewed) return;
    const mine = ++generation.current;
    // After a write of this page's, an early read not taken yet may have started before the write:
    // it is dropped, so the page's next read (an event, the write's own) cannot take it and undo the write.
    if (fromPage !== true) early = null;
    try {
      const taken = fromPage === true ? takeEarly(repo, changeId, viewed, me || undefined) : null;
      const r = await (taken ? taken.catch(() => loadThreads(repo, changeId, viewed, me || undefined)) : loadThreads(repo, changeId, viewed, me || undefined));
      if (generation.current === mine) {
        setData(r);
        setError(null);
      }
    } catch (e) {
      if (generation.current === mine) setError(e);
    }
  }, [repo, changeId, viewed, me]);
  useEffect(() => { reload(true); }, [reload, version]);
  // Editors left open with text (a reload, a crash): open them again with it.
  useEffect(() => {
    const m = new Map();
    for (const v of kept(repo, changeId)) {
      if (v.target.kind === 'line' || v.target.kind === 'file') {
        if (v.target.patchset && v.target.patchset !== viewed) continue;
      }
      m.set(editorKey(v.target), { ...v.target, text: v.text });
    }
    setEditors(m);
  }, [repo, changeId, viewed]);

  const openEditor = useCallback((target) => {
    setEditors((prev) => {
      const k = editorKey(target);
      if (prev.has(k)) return prev;
      const next = new Map(prev);
      next.set(k, { ...target, patchset: viewed, text: target.text ?? '' });
      return next;
    });
    requestAnimationFrame(() => document.querySelector(`[data-editor="${CSS.escape(editorKey(target))}"] textarea`)?.focus());
  }, [viewed]);
  const closeEditor = useCallback((target) => {
    store(repo, changeId, target, '');
    setEditors((prev) => {
      const next = new Map(prev);
      next.delete(editorKey(target));
      return next;
    });
  }, [repo, changeId]);
  const keepText = useCallback((target, text) => store(repo, changeId, { ...target, text: undefined }, text), [repo, changeId]);
  /** Closes an editor nothing was typed in (the one-line editor a click opened, when shift-click makes it a range). */
  const closeIfEmpty = useCallback((target) => {
    let typed = false;
    try {
      typed = !!localStorage.getItem(storageKey(repo, changeId, editorKey(target)));
    } catch {
      /* storage disabled: the editor is left open */
      typed = true;
    }
    if (!typed) closeEditor(target);
  }, [repo, changeId, closeEditor]);

  const C = (rest = '') => repoPath(repo, `/changes/${seg(changeId)}${rest}`);
  /** One write: the reviewer's name first (asked once), then `fn(author)`; the threads are read again after. */
  const act = useCallback(async (fn, success) => {
    setFlash(null);
    const author = await reviewerName();
    if (!author) return false;
    try {
      const r = await fn(author);
      if (success) setFlash({ ok: true, text: typeof success === 'function' ? success(r) : success });
      await reload();
      return r ?? true;
    } catch (e) {
      setFlash({ ok: false, text: explain(e) });
      return false;
    }
  }, [reload]);

  const comment = (body) => post(C('/comments'), body);
  const ops = {
    create: (target, text, draft) => act((author) => {
      const anchor = target.kind === 'line' ? { path: target.anchor.path, side: target.anchor.side, line: target.anchor.line, ...(target.anchor.end_line ? { end_line: target.anchor.end_line } : {}) }
        : target.kind === 'file' ? { path: target.path } : null;
      return comment({ patchset_id: viewed, author, body: text, anchor, draft, ...(target.suggestion !== undefined && suggestions ? { suggestion: target.suggestion } : {}) });
    }, draft ? 'Draft saved.' : 'Comment posted.'),
    reply: (thread, text, draft, resolution) => act((author) => comment({ author, body: text, in_reply_to: lastPublished(thread).comment_id, patchset_id: viewed, draft, ...(resolution ? { resolution } : {}) }), draft ? 'Draft reply saved.' : 'Reply posted.'),
    done: (thread) => act((author) => comment({ author, body: 'Done', in_reply_to: lastPublished(thread).comment_id, patchset_id: viewed, resolution: 'resolved' }), 'Marked done.'),
    resolve: (thread, to) => act((author) => post(C(`/threads/${seg(thread.thread_id)}:${to === 'resolved' ? 'resolve' : 'reopen'}`), { author, patchset_id: viewed }), to === 'resolved' ? 'Thread resolved.' : 'Thread reopened.'),
    edit: (c, text) => act((author) => api('PATCH', C(`/comments/${seg(c.comment_id)}`), { author, body: text }), 'Draft updated.'),
    discard: (c) => act((author) => api('DELETE', C(`/comments/${seg(c.comment_id)}${query({ author })}`)), 'Draft discarded.'),
    // the change's author applies suggestions as a new patchset (the page then reads everything again)
    apply: async (ids) => {
      const r = await act((author) => post(C('/patchsets:applySuggestions'), { author, comment_ids: ids }), (x) => `Applied ${plural(x.applied.length, 'suggestion')} as ${psShort(x.patchset.patchset_id)}.`);
      if (r) onApplied();
      return r;
    },
    publish: (body) => act((author) => post(C('/reviews:publish'), { author, patchset_id: selected, ...body }), (r) => `Published ${plural(r.published.length, 'draft')}${r.review ? ` with your vote (${r.review.action.replace(/_/g, ' ')})` : ''}.`),
  };

  // The diff's files (DiffView hands them over once it has read the diff): the threads are placed on them.
  const [files, setFiles] = useState(null);
  const index = useMemo(() => (data && files ? indexThreads(data.threads, files.files, files.against) : null), [data, files]);
  const fileOf = useMemo(() => {
    const m = new Map((files?.files ?? []).map((f) => [f.path, f]));
    return (path) => m.get(path) ?? null;
  }, [files]);

  /** My drafts on the change: what the Reply dialog publishes. */
  const drafts = useMemo(() => {
    const out = [];
    for (const t of data?.threads ?? []) for (const c of t.comments) if (!c.published && c.author === me) out.push({ thread: t, comment: c });
    return out;
  }, [data, me]);

  // Published suggestions written on the current patchset, in unresolved threads: what "Apply suggestions" applies.
  const current = change.current_patchset_id ?? null;
  const applicable = useMemo(() => {
    const out = [];
    for (const t of data?.threads ?? []) {
      if (t.resolution !== 'unresolved') continue;
      for (const c of t.comments) if (c.published && c.suggestion !== null && c.suggestion !== undefined && !c.discarded && c.patchset_id === current) out.push(c.comment_id);
    }
    return out;
  }, [data, current]);

  return { repo, changeId, viewed, selected, open, me, data, current, canApply: canApply && open, applicable, error, reload, editors, openEditor, closeEditor, closeIfEmpty, keepText, ops, flash, setFlash, drafts, suggestions, index, setFiles, fileOf, against: files?.against ?? null, fileCount: files ? files.files.length : null, listFilter, setListFilter };
}

/**
 * The text of revision lines `line`..`end` of a file of the diff (what a suggestion replaces), or
 * null when a line of the range is not in the diff's hunks (or the diff compares two patchsets).
 */
export function revisionLines(file, line, end) {
  if (!file) return null;
  const out = [];
  for (const h of file.hunks) {
    let n = h.new_start;
    for (const l of h.lines) {
      const c = l[0];
      if (c !== ' ' && c !== '+') continue;
      if (n >= line && n <= end) out[n - line] = l.slice(1);
      n++;
    }
  }
  for (let i = 0; i <= end - line; i++) if (out[i] === undefined) return null;
  return out;
}

const lastPublished = (t) => [...t.comments].reverse().find((c) => c.published) ?? t.comments[0];

// ---------------------------------------------------------------- components

/** A comment editor: Write / Preview (the same Markdown renderer), Save draft, Comment now, Cancel. */
export function CommentEditor({ target, thread, comment }) {
  const T = useThreads();
  const [text, setText] = useState((target.text ?? comment?.body ?? '').trim() ? target.text ?? comment?.body : '');
  const [preview, setPreview] = useState(false);
  const [busy, setBusy] = useState(false);
  const [resolve, setResolve] = useState(false);
  // a suggested replacement of the lines (revision-side line threads only)
  const canSuggest = !!T.suggestions && target.kind === 'line' && target.anchor.side === 'revision';
  const [suggestion, setSuggestion] = useState(target.suggestion ?? null);
  const key = editorKey(target);
  const id = `ed-${key.replace(/[^a-zA-Z0-9]/g, '_')}`;
  const reply = target.kind === 'reply';
  const edit = target.kind === 'edit';
  const update = (v, sug = suggestion) => {
    setText(v);
    T.keepText({ ...target, suggestion: sug ?? undefined }, v || (sug !== null ? ' ' : ''));
  };
  const toggleSuggest = () => {
    if (suggestion !== null) {
      setSuggestion(null);
      update(text, null);
      return;
    }
    const a = target.anchor;
    const lines = T.against ? null : revisionLines(T.fileOf(a.path), a.line, a.end_line ?? a.line);
    const start = lines ? `${lines.join('\n')}\n` : '';
    setSuggestion(start);
    update(text, start);
  };
  const run = async (draft) => {
    if (!text.trim() && !(reply && resolve) && suggestion === null) {
      T.setFlash({ ok: false, text: 'Write something first.' });
      return;
    }
    setBusy(true);
    let ok;
    if (edit) ok = await T.ops.edit(comment, text);
    else if (reply) ok = await T.ops.reply(thread, text, draft, resolve ? (thread.resolution === 'resolved' ? 'unresolved' : 'resolved') : null);
    else ok = await T.ops.create(suggestion !== null ? { ...target, suggestion } : target, text.trim() ? text : 'Suggested change.', draft);
    setBusy(false);
    if (ok) T.closeEditor(target);
  };
  // Escape closes an empty editor at once; typed text (or an edited suggestion) is discarded only when the reviewer says so
  const escape = async () => {
    const typed = text.trim() !== '' && text !== (comment?.body ?? '');
    if (typed && !(await confirmAction({ title: 'Discard what you typed?', body: 'The text of this comment is not saved anywhere else.', confirm: 'Discard', danger: true }))) {
      document.getElementById(id)?.focus();
      return;
    }
    T.closeEditor(target);
  };
  const what = target.kind === 'line' ? anchorLabel({ kind: 'lines', ...target.anchor })
    : target.kind === 'file' ? `${target.path} (file)` : target.kind === 'general' ? 'the change' : reply ? 'the thread' : 'your draft';
  const label = edit ? `Edit your draft on ${what}` : reply ? 'Reply' : `Comment on ${what}`;
  return html`<div class="comment-editor" data-editor=${key}>
    <div class="editor-tabs" role="group" aria-label="Editor mode">
      <button type="button" class=${`btn small ${preview ? '' : 'on'}`} aria-pressed=${!preview} onClick=${() => setPreview(false)}>Write</button>
      <button type="button" class=${`btn small ${preview ? 'on' : ''}`} aria-pressed=${preview} onClick=${() => setPreview(true)}>Preview</button>
      ${canSuggest ? html`<button type="button" class=${`btn small ${suggestion !== null ? 'on' : ''}`} aria-pressed=${suggestion !== null} onClick=${toggleSuggest} title="Propose replacement text for these lines; the change's author can apply it">Suggest change</button>` : null}
      <span class="muted small editor-what">${label}</span>
    </div>
    ${preview
      ? html`<div class="editor-preview">${text.trim() ? html`<${Markdown} text=${text} />` : html`<p class="muted">Nothing to preview.</p>`}</div>`
      : html`<textarea id=${id} rows="4" aria-label=${label} value=${text} onInput=${(e) => update(e.currentTarget.value)}
          onKeyDown=${(e) => { if (e.key === 'Escape') { e.stopPropagation(); escape(); } if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); run(false); } }}
          placeholder="Markdown: **bold**, \`code\`, lists, links"></textarea>`}
    ${suggestion !== null ? html`<label class="field suggestion-field"><span>Suggested replacement for ${lineLabel(target.anchor)}</span>
      <textarea rows=${Math.min(12, Math.max(2, suggestion.split('\n').length))} class="suggestion-text" value=${suggestion} onInput=${(e) => { setSuggestion(e.currentTarget.value); T.keepText({ ...target, suggestion: e.currentTarget.value }, text || ' '); }}></textarea>
    </label>` : null}
    ${reply && T.open ? html`<label class="check"><input type="checkbox" checked=${resolve} onChange=${(e) => setResolve(e.currentTarget.checked)} /> ${thread.resolution === 'resolved' ? 'Reopen the thread' : 'Resolve the thread'}</label>` : null}
    <div class="btn-row">
      ${edit ? html`<button type="button" class="btn primary small" disabled=${busy} onClick=${() => run(true)}>Save</button>`
        : html`<button type="button" class="btn small" disabled=${busy} onClick=${() => run(true)} title="Only you see it until you publish your drafts (Reply…)">Save draft</button>
          <button type="button" class="btn primary small" disabled=${busy} onClick=${() => run(false)}>${reply ? 'Reply now' : 'Comment now'}</button>`}
      <button type="button" class="btn small" disabled=${busy} onClick=${() => T.closeEditor(target)}>Cancel</button>
    </div>
  </div>`;
}

function CommentItem({ c, thread }) {
  const T = useThreads();
  const mine = !c.published && c.author === T.me;
  const editing = T.editors.get(editorKey({ kind: 'edit', commentId: c.comment_id }));
  return html`<div class=${`comment-item${c.published ? '' : ' is-draft'}`} data-comment-id=${c.comment_id}>
    <div class="comment-head">
      <strong class="who">${c.author}</strong>
      <span class="muted small"><${Time} s=${c.created_at_s} />${c.patchset_id !== thread.patchset_id ? ` · on ${psShort(c.patchset_id)}` : ''}</span>
      ${c.published ? null : html`<${Badge} value="Draft" tone="warn" title="only you see it until you publish it (Reply…)" />`}
      ${c.resolution && c.in_reply_to ? html`<span class="muted small">${c.resolution === 'resolved' ? 'resolved the thread' : 'reopened the thread'}</span>` : null}
    </div>
    ${editing ? html`<${CommentEditor} target=${editing} comment=${c} thread=${thread} />`
      : c.body ? html`<div class="comment-body"><${Markdown} text=${c.body} /></div>` : null}
    ${c.suggestion !== null && c.suggestion !== undefined ? html`<${Suggestion} c=${c} thread=${thread} />` : null}
    ${mine && !editing && T.open ? html`<div class="btn-row draft-actions">
      <button type="button" class="btn small link" onClick=${() => T.openEditor({ kind: 'edit', commentId: c.comment_id, text: c.body })}>Edit</button>
      <button type="button" class="btn small link danger-text" onClick=${() => T.ops.discard(c)}>Discard</button>
    </div>` : null}
  </div>`;
}

/** A suggested replacement: the lines it replaces (removed) and its text (added). */
function Suggestion({ c, thread }) {
  const T = useThreads();
  const [busy, setBusy] = useState(false);
  const applicable = T.canApply && c.published && c.patchset_id === T.current;
  const lines = c.suggestion === '' ? [] : c.suggestion.replace(/\n$/, '').split('\n');
  const a = thread.anchor;
  // the lines it replaces, as the diff shows them (when the thread sits where it was written)
  const old = !thread.outdated && a.kind === 'lines' && !T.against ? revisionLines(T.fileOf(a.path), a.line, a.end_line ?? a.line) : null;
  return html`<div class="suggestion">
    <div class="muted small">Suggested change${a.kind === 'lines' ? ` to ${lineLabel(a)}` : ''}</div>
    ${applicable ? html`<div class="btn-row"><button type="button" class="btn small" disabled=${busy} onClick=${async () => { setBusy(true); await T.ops.apply([c.comment_id]); setBusy(false); }} title="Apply it as a new patchset of the change">Apply suggestion</button></div>` : null}
    <pre class="suggestion-diff">${(old ?? []).map((l) => html`<span class="s-del">-${l}\n</span>`)}${lines.length === 0 ? html`<span class="s-del">(remove the lines)</span>` : lines.map((l) => html`<span class="s-add">+${l}\n</span>`)}</pre>
  </div>`;
}

/** One thread: its state, its comments (replies collapsible), and what the reviewer can do. */
export function Thread({ t, where = false }) {
  const T = useThreads();
  // A resolved thread starts folded to one line (its first comment's start); an open one shows all.
  const [folded, setFolded] = useState(t.resolution === 'resolved' && !t.draft);
  const [collapsed, setCollapsed] = useState(false);
  const replies = t.comments.slice(1);
  const replyTarget = { kind: 'reply', threadId: t.thread_id };
  const replying = T.editors.get(editorKey(replyTarget));
  const a = t.anchor;
  const o = t.original_anchor;
  const ported = !t.outdated && t.patchset_id !== T.viewed && o && o.kind === 'lines';
  const published = !t.draft;
  const resolved = t.resolution === 'resolved';
  const first = t.comments[0];
  const isFolded = folded && !replying;
  return html`<article class=${`thread ${resolved ? 'resolved' : 'unresolved'}${t.outdated ? ' outdated' : ''}${t.draft ? ' draft' : ''}${isFolded ? ' folded' : ''}`} data-thread-id=${t.thread_id} tabindex="-1"
      aria-label=${`Thread on ${anchorLabel(a)}${resolved ? ', resolved' : ', unresolved'}`}>
    <header class="thread-head">
      ${t.draft ? html`<${Badge} value="Draft" tone="warn" />` : html`<${Badge} value=${resolved ? 'Resolved' : 'Unresolved'} tone=${resolved ? 'good' : 'warn'} />`}
      ${t.outdated ? html`<${Badge} value="Outdated" tone="plain" title=${OUTDATED[t.outdated_reason] ?? ''} />` : null}
      ${where || t.outdated ? html`<span class="thread-where">${anchorLabel(t.outdated ? o : a)}${t.outdated ? ` on ${psShort(t.patchset_id)}` : ''}</span>` : null}
      ${t.outdated ? html`<span class="muted small">${OUTDATED[t.outdated_reason] ?? ''}</span>` : null}
      ${ported ? html`<span class="muted small ported">from ${psShort(t.patchset_id)} line ${o.line}</span>` : null}
      ${resolved !== (t.resolution_with_drafts === 'resolved') && published ? html`<span class="muted small">(your draft ${t.resolution_with_drafts === 'resolved' ? 'resolves' : 'reopens'} it)</span>` : null}
      ${isFolded ? html`<span class="thread-summary"><strong>${first.author}</strong> <span class="muted">${first.body.split('\n')[0]}</span></span>` : null}
      <span class="spacer"></span>
      ${isFolded ? html`<button type="button" class="btn small link" aria-expanded="false" onClick=${() => setFolded(false)}>Show ${plural(t.comments.length, 'comment')}</button>`
        : replies.length ? html`<button type="button" class="btn small link" aria-expanded=${collapsed ? 'false' : 'true'} onClick=${() => setCollapsed(!collapsed)}>${collapsed ? `Show ${plural(replies.length, 'reply', 'replies')}` : 'Hide replies'}</button>` : null}
    </header>
    ${isFolded ? null : html`<${CommentItem} c=${first} thread=${t} />`}
    ${isFolded || collapsed ? null : replies.map((c) => html`<${CommentItem} key=${c.comment_id} c=${c} thread=${t} />`)}
    ${replying ? html`<${CommentEditor} target=${replying} thread=${t} />` : null}
    ${published && T.open && !replying && !isFolded ? html`<div class="btn-row thread-actions">
      <button type="button" class="btn small" onClick=${() => T.openEditor(replyTarget)} title="Reply (r)">Reply</button>
      ${resolved ? null : html`<button type="button" class="btn small" onClick=${() => T.ops.done(t)} title="Reply 'Done' and resolve the thread">Done</button>`}
      <button type="button" class="btn small" onClick=${() => T.ops.resolve(t, resolved ? 'unresolved' : 'resolved')}>${resolved ? 'Reopen' : 'Resolve'}</button>
    </div>` : null}
  </article>`;
}

const OUTDATED = {
  lines_changed: 'its lines changed since',
  file_removed: 'its file is gone',
  beyond_file: 'its line is beyond the file',
  no_line_diff: 'its file cannot be followed line by line',
};

/** Threads and editors under a diff row (or at the top of a file). */
export function ThreadStack({ threads, editors, where = false }) {
  return html`<div class="thread-stack">
    ${(threads ?? []).map((t) => html`<${Thread} key=${t.thread_id} t=${t} where=${where} />`)}
    ${(editors ?? []).map((e) => html`<${CommentEditor} key=${editorKey(e)} target=${e} />`)}
  </div>`;
}

/** Flash of the last thread action (saved, posted, refused). */
export function ThreadFlash() {
  const T = useThreads();
  const flash = T?.flash;
  // Shown fixed at the bottom of the screen (the action may be far down the diff); a success goes by itself.
  useEffect(() => {
    if (!flash || !flash.ok) return undefined;
    const id = setTimeout(() => T.setFlash((f) => (f === flash ? null : f)), 8000);
    return () => clearTimeout(id);
  }, [flash]);
  if (!flash) return null;
  return html`<div class=${`flash thread-flash ${flash.ok ? 'ok' : 'bad'}`} role=${flash.ok ? 'status' : 'alert'}><span>${flash.text}</span>
    <button type="button" class="btn small link" aria-label="Dismiss" onClick=${() => T.setFlash(null)}>×</button></div>`;
}

/**
 * The Conversation card: threads on the patchset as a whole, and those whose file the diff does
 * not show (placed once the diff is read; until then, the patchset threads).
 */
export function Conversation() {
  const T = useThreads();
  const target = { kind: 'general' };
  const editing = T.editors.get(editorKey(target));
  const count = T.data?.threads.length ?? 0;
  const general = T.index ? T.index.general : (T.data?.threads ?? []).filter((t) => t.anchor.kind === 'patchset');
  return html`<section class="card conversation" id="conversation" aria-label="Conversation">
    <header class="card-head"><h2>Conversation</h2><div class="card-right"><span class="muted">${plural(count, 'thread')}${T.data ? html` · <span class=${T.data.unresolved ? 'warn-text' : ''}>${T.data.unresolved} unresolved</span>` : null}</span></div></header>
    <div class="card-body">
      ${T.error ? html`<p class="bad-text">Could not read the threads: ${explain(T.error)} <button type="button" class="btn small" onClick=${T.reload}>Retry</button></p>` : null}
      ${general.length ? html`<${ThreadStack} threads=${general} where=${true} />` : html`<p class="empty">No comment on the change as a whole${count ? '' : ' yet'}.</p>`}
      ${editing ? html`<${CommentEditor} target=${editing} />` : T.open ? html`<button type="button" class="btn small" onClick=${() => T.openEditor(target)}>Comment on the change…</button>` : null}
    </div>
  </section>`;
}

const FIRST_WORDS = 90;
/** The start of a comment, on one line: what a row of the thread list shows. */
export function firstWords(body) {
  // the Markdown's marks left out: links keep their text, code its letters
  const text = String(body ?? '').replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*]+|(^|\n)\s*(#+|>|[-+] )\s*/g, '$1').replace(/\s+/g, ' ').trim();
  return text.length > FIRST_WORDS ? `${text.slice(0, FIRST_WORDS - 1).replace(/\s+\S*$/, '')}…` : text;
}

/** Where a thread of the list sits, as a link: the line in the diff (`#file=P&line=R12`), its file, or the Conversation. */
function listHref(x) {
  if (x.file < 0) return '#conversation';
  const file = `#file=${encodeURIComponent(x.t.anchor.path)}`;
  return x.at ? `${file}&line=${x.at.side === 'base' ? 'L' : 'R'}${x.at.line}` : file;
}

/**
 * Shows a thread: its line or file in the diff (the hash makes the diff open the file and build
 * it), or the Conversation card; then the thread itself is scrolled to and focused once it has a box.
 */
export function jumpToThread(id, href) {
  if (href === '#conversation') dispatchEvent(new CustomEvent(SHOW_TAB, { detail: 'conversation' }));
  else if (location.hash === href) dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = href;
  const started = performance.now();
  const find = () => {
    const el = document.querySelector(`.thread[data-thread-id="${CSS.escape(id)}"]`);
    if (el && el.getClientRects().length) {
      el.scrollIntoView({ block: 'center' });
      el.focus({ preventScroll: true });
      return;
    }
    if (performance.now() - started < 8000) requestAnimationFrame(find);
  };
  requestAnimationFrame(find);
}

/**
 * Every thread of the change in one list (the Conversation tab): its state, where it is (file and
 * line, or the change), who started it, its first words and how many replies, each a link to the
 * thread in the diff. "All" or "Unresolved" (the head's "N unresolved" opens it on those). Rows are
 * plain text (no Markdown), so hundreds of threads cost little.
 */
export function ThreadList() {
  const T = useThreads();
  const list = useMemo(() => {
    if (T.index) return T.index.all;
    return (T.data?.threads ?? []).map((t) => ({ t, file: t.anchor.kind === 'patchset' ? -1 : 0, at: null }));
  }, [T.index, T.data]);
  if (!T.data) return null;
  const isOpen = (t) => !t.draft && t.resolution === 'unresolved';
  const unresolved = list.filter((x) => isOpen(x.t)).length;
  const filter = T.listFilter;
  const rows = filter === 'unresolved' ? list.filter((x) => isOpen(x.t)) : list;
  const pick = (v) => T.setListFilter(v);
  return html`<section class="card thread-list-card" id="threads" aria-label="Threads">
    <header class="card-head"><h2>Threads</h2><div class="card-right">
      <div class="seg" role="group" aria-label="Which threads">
        <button type="button" class=${`btn small ${filter === 'unresolved' ? 'on' : ''}`} aria-pressed=${filter === 'unresolved'} onClick=${() => pick('unresolved')}>Unresolved <span class="count-pill">${unresolved}</span></button>
        <button type="button" class=${`btn small ${filter === 'all' ? 'on' : ''}`} aria-pressed=${filter === 'all'} onClick=${() => pick('all')}>All <span class="count-pill">${list.length}</span></button>
      </div>
    </div></header>
    <div class="card-body">
      ${rows.length === 0 ? html`<p class="empty">${list.length ? 'No unresolved thread.' : 'No thread yet.'}</p>` : html`<table class="table compact thread-list">
        <thead><tr><th>State</th><th>Where</th><th>By</th><th>Comment</th><th class="num">Replies</th></tr></thead>
        <tbody>${rows.map((x) => {
          const t = x.t;
          const first = t.comments[0];
          const href = listHref(x);
          const where = anchorLabel(t.anchor);
          const state = t.draft ? 'Draft' : t.resolution === 'resolved' ? 'Resolved' : 'Unresolved';
          return html`<tr class=${`list-thread ${state.toLowerCase()}${t.outdated ? ' outdated' : ''}`} data-list-thread=${t.thread_id}>
            <td><${Badge} value=${state} tone=${state === 'Resolved' ? 'good' : 'warn'} />${t.outdated ? html` <span class="muted small">outdated</span>` : null}</td>
            <td class="where-cell"><a class="thread-jump" href=${href} onClick=${(e) => { e.preventDefault(); jumpToThread(t.thread_id, href); }} title="Show the thread">${where}</a></td>
            <td>${first?.author ?? ''}</td>
            <td class="wrap-cell first-words">${firstWords(first?.body)}</td>
            <td class="num">${t.comments.length - 1}</td>
          </tr>`;
        })}</tbody>
      </table>`}
    </div>
  </section>`;
}

/** A row key's editors for a file: Map rowKey → [targets], built once per render of the file. */
export function editorsOfFile(editors, path) {
  const rows = new Map();
  const top = [];
  for (const e of editors.values()) {
    if (e.kind === 'line' && e.anchor.path === path) {
      const k = rowKey(e.anchor.side, endOf(e.anchor));
      rows.set(k, [...(rows.get(k) ?? []), e]);
    } else if (e.kind === 'file' && e.path === path) top.push(e);
  }
  return { rows, top };
}

/** The Reply dialog: my drafts, a vote and a message, published in one reviews:publish call. */
export function ReplyDialog({ onClose, onDone }) {
  const T = useThreads();
  const ref = useRef(null);
  const [vote, setVote] = useState('none');
  const [message, setMessage] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  const close = () => {
    ref.current?.close();
    onClose();
  };
  const publish = async (e) => {
    e.preventDefault();
    const action = vote !== 'none' ? vote : message.trim() ? 'comment' : undefined;
    if (!action && T.drafts.length === 0) {
      T.setFlash({ ok: false, text: 'Nothing to publish: no draft, no vote.' });
      return;
    }
    setBusy(true);
    const r = await T.ops.publish({ ...(action ? { action } : {}), ...(message.trim() ? { comment: message } : {}) });
    setBusy(false);
    if (r) {
      close();
      onDone();
    }
  };
  const VOTES = [['none', 'No vote'], ['approve', 'Approve'], ['request_changes', 'Request changes'], ['comment', 'Comment']];
  return html`<dialog ref=${ref} class="dialog reply-dialog" aria-labelledby="reply-title" onCancel=${(e) => { e.preventDefault(); close(); }}>
    <form method="dialog" onSubmit=${publish}>
      <h2 id="reply-title">Reply to ${T.changeId}</h2>
      <h3 class="small-head">Your drafts</h3>
      ${T.drafts.length ? html`<ul class="draft-list">${T.drafts.map(({ thread, comment }) => html`<li data-comment-id=${comment.comment_id}>
        <code>${anchorLabel(thread.anchor)}</code>${comment.in_reply_to ? html` <span class="muted small">reply</span>` : null}
        <div class="draft-text">${comment.body || html`<span class="muted">(no text)</span>`}</div>
      </li>`)}</ul>` : html`<p class="muted">No draft: publishing records your vote and message only.</p>`}
      <fieldset class="vote">
        <legend>Vote on ${psShort(T.selected)}</legend>
        ${VOTES.map(([v, label]) => html`<label class="check"><input type="radio" name="vote" value=${v} checked=${vote === v} onChange=${() => setVote(v)} /> ${label}</label>`)}
      </fieldset>
      <label class="field"><span>Message</span>
        <textarea rows="3" value=${message} onInput=${(e) => setMessage(e.currentTarget.value)} placeholder="What you think of the change as a whole (optional)"></textarea>
      </label>
      ${T.flash && !T.flash.ok ? html`<p class="bad-text" role="alert">${T.flash.text}</p>` : null}
      <div class="dialog-actions">
        <button type="button" class="btn" onClick=${close}>Cancel</button>
        <button type="submit" class="btn primary" disabled=${busy}>${busy ? 'Publishing…' : 'Publish'}</button>
      </div>
    </form>
  </dialog>`;
}

/**
 * n / p: the next / previous unresolved thread (in page order, across files), scrolled to and
 * focused; r on a focused thread opens its reply editor. `goToFile(i)` makes file i's section
 * render; its body is built once it is in view, so the thread is waited for a little.
 */
export function useThreadKeys(T, index, goToFile) {
  const at = useRef(-1);
  useEffect(() => {
    const onKey = (e) => {
      if (typing(e) || e.metaKey || e.ctrlKey || e.altKey) return;
      if (document.querySelector('dialog[open]')) return;
      if (e.key === 'r') {
        const el = document.activeElement?.closest?.('[data-thread-id]');
        const t = el && T.data?.threads.find((x) => x.thread_id === el.getAttribute('data-thread-id'));
        if (!t || t.draft || !T.open) return;
        e.preventDefault();
        T.openEditor({ kind: 'reply', threadId: t.thread_id });
        return;
      }
      if (e.key !== 'n' && e.key !== 'p') return;
      const order = index?.order ?? [];
      if (!order.length) return;
      e.preventDefault();
      // from the focused thread when there is one, else from where n / p last went
      const focused = document.activeElement?.closest?.('[data-thread-id]')?.getAttribute('data-thread-id');
      let i = focused ? order.findIndex((x) => x.id === focused) : -1;
      if (i < 0) i = at.current;
      i = e.key === 'n' ? (i + 1) % order.length : (i <= 0 ? order.length - 1 : i - 1);
      at.current = i;
      const { id, file } = order[i];
      // a thread of a file: the Files tab, at that file; one on the change: the Conversation tab
      if (file >= 0) goToFile(file);
      else dispatchEvent(new CustomEvent(SHOW_TAB, { detail: 'conversation' }));
      const started = performance.now();
      const find = () => {
        const el = document.querySelector(`[data-thread-id="${CSS.escape(id)}"]`);
        // a thread in a tab not shown yet has no box: wait for it
        if (el && el.getClientRects().length) {
          el.scrollIntoView({ block: 'center' });
          el.focus({ preventScroll: true });
          return;
        }
        if (performance.now() - started < 3000) requestAnimationFrame(find);
      };
      requestAnimationFrame(find);
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [T, index, goToFile]);
}
