// The diff of a patchset, rendered from the JSON diff route (README "Diffs and land readiness"):
// a file list with stats, then one section per file, unified or side by side, syntax
// highlighted. Large diffs stay usable: a file's body is built only when its place scrolls
// near the viewport (IntersectionObserver) or when it is expanded, so a 2,000-file patchset
// costs 2,000 headers at first, not 2,000 tables. Files with very many lines start collapsed.
import { html, h, Component, useEffect, useMemo, useRef, useState, useCallback } from './vendor/preact.js';
import { get, repoPath, seg, query } from './api.js';
import { useHighlighter, languageOf, highlightLines } from './syntax.js';
import { NUMBER, plural, typing, Badge } from './util.js';
import { ThreadStack, editorsOfFile, rowKey, useThreadKeys, useThreads } from './threads.js';

/** Files with more diff lines than this start collapsed. */
const COLLAPSE_LINES = 1500;
/** File sections rendered at first; the rest follow in slices, one per frame. */
const FIRST_SLICE = 150;
const SLICE = 400;
/** Estimated height of one diff line, for the placeholder of a file not built yet. */
const LINE_PX = 20;

/**
 * A component rendered again only when one of its props changed (a shallow compare): preact's
 * `memo`, which its standalone build lacks. A diff of 2,000 files renders each file section and
 * the file tree once, not once per slice and per read of the page.
 */
function memo(C) {
  class Memo extends Component {
    shouldComponentUpdate(next) {
      for (const k in next) if (next[k] !== this.props[k]) return true;
      for (const k in this.props) if (!(k in next)) return true;
      return false;
    }

    render(props) {
      return h(C, props);
    }
  }
  Memo.displayName = `Memo(${C.name})`;
  return Memo;
}

/** A callback that keeps its identity and always calls the latest `fn` (a memo'd child's prop). */
function useStable(fn) {
  const ref = useRef(fn);
  ref.current = fn;
  return useCallback((...args) => ref.current(...args), []);
}

const lineCount = (f) => f.hunks.reduce((n, h) => n + h.lines.length + 1, 0);

/** Whether a file's context can be widened (diff.js FileBody): it has hunks and both sides. */
const expandable = (f) => f.hunks.length > 0 && f.change !== 'added' && f.change !== 'deleted';

/** Rows the file's table will have in this view: the placeholder takes their height, so building a body moves nothing below or above it. */
function rowCount(f, view) {
  return rowsOf(f, view) + (expandable(f) ? 1 : 0); // the row that widens the context after the last hunk
}

function rowsOf(f, view) {
  if (view !== 'split') return lineCount(f);
  let rows = 0;
  for (const h of f.hunks) {
    rows += 1;
    let dels = 0;
    let adds = 0;
    for (const l of h.lines) {
      if (l[0] === '-') dels++;
      else if (l[0] === '+') adds++;
      else {
        rows += Math.max(dels, adds) + 1;
        dels = 0;
        adds = 0;
      }
    }
    rows += Math.max(dels, adds);
  }
  return rows;
}

export const fileHash = (path) => `#file=${encodeURIComponent(path)}`;

/** A line's stable anchor: `#file=PATH&line=R12` (R: the revision side, L: the base side). */
export const lineHash = (path, side, n) => `${fileHash(path)}&line=${side === 'base' ? 'L' : 'R'}${n}`;

/** `#file=PATH[&line=R12]` → { path, side, line } (side and line null without `&line=`), or null. */
export function anchorFromHash(hash) {
  const m = /^#file=([^&]*)(?:&line=([LR])([1-9][0-9]*))?$/.exec(hash || '');
  if (!m) return null;
  try {
    return { path: decodeURIComponent(m[1]), side: m[2] ? (m[2] === 'L' ? 'base' : 'revision') : null, line: m[3] ? Number(m[3]) : null };
  } catch {
    return null;
  }
}

export function fileFromHash(hash) {
  return anchorFromHash(hash)?.path ?? null;
}

// ---------------------------------------------------------------- lines of a hunk

/**
 * The hunk's lines with their numbers on each side and, once highlight.js is there, their
 * highlighted HTML: the old side (context and removed lines) and the new side (context and
 * added lines) are each highlighted as one text, so a construct spanning lines keeps its colour.
 */
function numberedLines(hunk, h, language, path = '', cross = null) {
  const oldText = [];
  const newText = [];
  for (const l of hunk.lines) {
    const c = l[0];
    if (c === ' ' || c === '-') oldText.push(l.slice(1));
    if (c === ' ' || c === '+') newText.push(l.slice(1));
  }
  const oldHtml = highlightLines(h, language, oldText);
  const newHtml = highlightLines(h, language, newText);
  let o = hunk.old_start;
  let n = hunk.new_start;
  let oi = 0;
  let ni = 0;
  return hunk.lines.map((l, i) => {
    const c = l[0];
    const text = l.slice(1);
    const spans = hunk.spans?.[i] ?? null;
    if (c === ' ') {
      const row = { kind: 'ctx', old: o++, new: n++, text, html: newHtml ? newHtml[ni] : null };
      oi++;
      ni++;
      return row;
    }
    if (c === '-') {
      const own = o++;
      return { kind: 'del', old: own, new: null, text, html: oldHtml ? oldHtml[oi++] : null, spans, moved: movedMark(hunk.moved_to, i, 'revision', path, own) ?? crossMark(cross?.to, own, 'revision') };
    }
    if (c === '+') {
      const own = n++;
      return { kind: 'add', old: null, new: own, text, html: newHtml ? newHtml[ni++] : null, spans, moved: movedMark(hunk.moved_from, i, 'base', path, own) ?? crossMark(cross?.from, own, 'base') };
    }
    return { kind: 'note', old: null, new: null, text: l.slice(2) || l, html: null };
  });
}

/**
 * A line of a moved block (the hunk's `moved_to` / `moved_from`, docs/api.md "Moved lines"): the
 * other place's side and line, its link, and whether the line starts its block (the label shows there).
 */
function movedMark(list, i, side, path, own) {
  const n = list?.[i] ?? null;
  if (n === null) return null;
  const prev = i > 0 ? list[i - 1] ?? null : null;
  // `down`: the other place is further down the file (line numbers of the two sides taken as alike)
  return { side, n, href: lineHash(path, side, n), start: prev === null || prev !== n - 1, down: n > own };
}

/**
 * A line of a block moved to or from another file (the diff's `moved_blocks`, docs/api.md "Moved
 * lines"): `blocks` are this file's, { line (on its own side), lines, path, other (the other file's first line) }.
 */
function crossMark(blocks, own, side) {
  const b = blocks?.find((x) => own >= x.line && own < x.line + x.lines);
  if (!b) return null;
  const n = b.other + (own - b.line);
  return { side, n, path: b.path, href: lineHash(b.path, side, n), start: own === b.line, down: false };
}

/**
 * The diff's blocks moved across files, set on the files they touch as `cross_moves` ({ to, from }:
 * the blocks removed here, with where they went, and those added here, with where they came from).
 * A file no block touches is kept as it is (its section does not render again).
 */
export function withCrossMoves(files, moved) {
  if (!moved || moved.length === 0) return files;
  const by = new Map();
  const at = (p) => {
    let x = by.get(p);
    if (!x) by.set(p, (x = { to: [], from: [] }));
    return x;
  };
  for (const m of moved) {
    at(m.from.path).to.push({ line: m.from.line, lines: m.lines, path: m.to.path, other: m.to.line });
    at(m.to.path).from.push({ line: m.to.line, lines: m.lines, path: m.from.path, other: m.from.line });
  }
  return files.map((f) => (by.has(f.path) ? { ...f, cross_moves: by.get(f.path) } : f));
}

/** The label of a moved block's first line: where the block went (a removed line) or came from (an added one), a link there. */
function MovedLink({ m }) {
  const to = m.side === 'revision';
  if (m.path) return html`<a class="moved-link cross" href=${m.href} title=${to ? `This block moved to ${m.path}, line ${m.n}` : `This block moved here from ${m.path}, line ${m.n}`}>${to ? 'moved to' : 'moved from'} ${m.path}:${m.n}</a>`;
  return html`<a class="moved-link" href=${m.href} title=${to ? `This block moved to line ${m.n}` : `This block moved here from line ${m.n}`}>${to ? 'moved to' : 'moved from'} line ${m.n} ${m.down ? '↓' : '↑'}</a>`;
}

/** Pairs a run of removed lines with the added lines that follow it, for the side-by-side view. */
function sideBySide(lines) {
  const rows = [];
  let dels = [];
  let adds = [];
  const flush = () => {
    for (let i = 0; i < Math.max(dels.length, adds.length); i++) rows.push({ left: dels[i] ?? null, right: adds[i] ?? null });
    dels = [];
    adds = [];
  };
  for (const l of lines) {
    if (l.kind === 'del') {
      if (adds.length) flush();
      dels.push(l);
    } else if (l.kind === 'add') adds.push(l);
    else {
      flush();
      if (l.kind === 'ctx') rows.push({ left: l, right: l });
      else rows.push({ note: l });
    }
  }
  flush();
  return rows;
}

const SIGN = { ctx: ' ', del: '-', add: '+' };

/**
 * Word highlights on highlighted HTML: wraps the characters of `spans` ([start, end) offsets
 * into the line's text) in <mark class="wd">. Only text between tags is cut, so the marks nest
 * inside highlight.js's spans; an entity (&amp;, &lt;, …) counts as the one character it stands for.
 * The HTML is highlight.js's (it escaped the line); nothing of the line's text becomes markup.
 */
export function markHtml(markup, spans) {
  let out = '';
  let at = 0; // offset into the text
  let k = 0; // the span being walked
  let inMark = false;
  const re = /<[^>]*>|&[^;]+;|[^<&]/g;
  for (let m = re.exec(markup); m; m = re.exec(markup)) {
    const t = m[0];
    if (t[0] === '<') {
      if (inMark) out += '</mark>';
      out += t;
      if (inMark) out += '<mark class="wd">';
      continue;
    }
    while (k < spans.length && at >= spans[k][1]) k++;
    const inside = k < spans.length && at >= spans[k][0];
    if (inside && !inMark) { out += '<mark class="wd">'; inMark = true; }
    if (!inside && inMark) { out += '</mark>'; inMark = false; }
    out += t;
    at++;
  }
  if (inMark) out += '</mark>';
  return out.replace(/<mark class="wd"><\/mark>/g, '');
}

/** Plain text with word highlights, as elements. */
function markText(text, spans) {
  const parts = [];
  let at = 0;
  for (const [a, b] of spans) {
    if (a > at) parts.push(text.slice(at, a));
    parts.push(html`<mark class="wd">${text.slice(a, b)}</mark>`);
    at = b;
  }
  if (at < text.length) parts.push(text.slice(at));
  return parts;
}

/** The code of one line: highlighted HTML from highlight.js (which escaped it), else plain text; the changed words marked. */
function Code({ line }) {
  // a moved line's word pairing is with an unrelated line: no changed words on it
  const spans = line.spans && line.spans.length && !line.moved ? line.spans : null;
  const moved = line.moved?.start ? html`<${MovedLink} m=${line.moved} />` : null;
  if (line.html !== null && line.html !== undefined) return html`<td class="code"><span class="sign" aria-hidden="true">${SIGN[line.kind]}</span><span class="text" dangerouslySetInnerHTML=${{ __html: spans ? markHtml(line.html, spans) : line.html }}></span>${moved}</td>`;
  return html`<td class="code"><span class="sign" aria-hidden="true">${SIGN[line.kind]}</span><span class="text">${spans ? markText(line.text, spans) : line.text}</span>${moved}</td>`;
}

const hunkHeader = (h) => `@@ -${h.old_start},${h.old_lines} +${h.new_start},${h.new_lines} @@`;

/** The threads and open editors under one diff row (a thread sits under its anchor's end line). */
function rowThreads(ft, keys) {
  let threads = null;
  let editors = null;
  for (const k of keys) {
    const t = ft.threads?.get(k);
    if (t) threads = threads ? [...threads, ...t] : t;
    const e = ft.editors?.get(k);
    if (e) editors = editors ? [...editors, ...e] : e;
  }
  return threads || editors ? { threads, editors } : null;
}

/** The row keys a unified row shows: the revision line, and the base line (a removed or context line). */
function unifiedKeys(l) {
  const keys = [];
  if (l.new !== null) keys.push(rowKey('revision', l.new));
  if (l.old !== null) keys.push(rowKey('base', l.old));
  return keys;
}

/** Context rows read with ?lines= (expanded): plain rows, no threads (those of hidden lines stay at the top of the file). */
function ctxRowsUnified(rows) {
  return rows.map((l) => html`<tr class="ctx expanded" tabindex="-1"><td class="ln" data-side="base" data-n=${l.old}></td><td class="ln" data-side="revision" data-n=${l.new}></td><${Code} line=${l} /></tr>`);
}

/** The buttons that widen a gap between hunks (or after the last one): up, down, all of it, or the whole file. */
function ExpandButtons({ x }) {
  if (!x || !x.onExpand) return null;
  const { gi, remaining, trailing, onExpand } = x;
  if (remaining === 0) return null;
  const few = remaining !== null && remaining <= EXPAND_STEP;
  return html`<span class="expand">
    ${few ? html`<button type="button" class="expand-btn" onClick=${() => onExpand(gi, 'all')} title=${`Show the ${remaining} hidden lines`}>↕ ${remaining}</button>`
      : html`${trailing ? null : html`<button type="button" class="expand-btn" onClick=${() => onExpand(gi, 'up')} title=${`Show ${EXPAND_STEP} more lines above`} aria-label=${`Show ${EXPAND_STEP} more lines above`}>↑</button>`}
        <button type="button" class="expand-btn" onClick=${() => onExpand(gi, 'down')} title=${`Show ${EXPAND_STEP} more lines below`} aria-label=${`Show ${EXPAND_STEP} more lines below`}>↓</button>
        <button type="button" class="expand-btn wide" onClick=${() => onExpand(gi, 'file')} title="Show the whole file">whole file</button>`}
  </span>`;
}

/** A hunk the target line brought through a rebase (an inter-patchset diff's `from_rebase`): greyed, and said so in its header. */
const rebaseClass = (hunk) => (hunk?.from_rebase ? ' from-rebase' : '');
const rebaseTag = (hunk) => (hunk?.from_rebase ? html` <span class="rebase-tag" title="The target line's change between the two patchsets' bases, brought by the rebase: not the author's">from the rebase</span>` : null);

function UnifiedHunks({ hunks, ft }) {
  return html`<table class="diff unified"><colgroup><col class="ln-col" /><col class="ln-col" /><col /></colgroup><tbody>${hunks.map(({ hunk, lines, above = [], below = [], expand }) => html`
    ${ctxRowsUnified(above)}
    ${hunk ? html`<tr class=${`hunk${rebaseClass(hunk)}`}><td class="ln expand-cell" colspan="2"></td><td class="code hunk-head"><${ExpandButtons} x=${expand} /><span class="hunk-text">${hunkHeader(hunk)}</span>${rebaseTag(hunk)}</td></tr>`
      : expand && expand.remaining !== 0 ? html`<tr class="hunk trailing"><td class="ln expand-cell" colspan="2"></td><td class="code hunk-head"><${ExpandButtons} x=${expand} /></td></tr>` : null}
    ${ctxRowsUnified(below)}
    ${lines.map((l) => {
      if (l.kind === 'note') return html`<tr class="note"><td class="ln" colspan="2"></td><td class="code">\\ ${l.text}</td></tr>`;
      const under = ft && rowThreads(ft, unifiedKeys(l));
      return html`<tr class=${`${l.kind}${rebaseClass(hunk)}${l.moved ? ' moved' : ''}${ft?.selected?.has(l.new !== null ? rowKey('revision', l.new) : rowKey('base', l.old)) ? ' selected' : ''}${ft?.mark && ((ft.mark.side === 'revision' && ft.mark.line === l.new) || (ft.mark.side === 'base' && ft.mark.line === l.old)) ? ' anchored' : ''}`} tabindex="-1"><td class="ln" data-side="base" data-n=${l.old ?? ''}></td><td class="ln" data-side="revision" data-n=${l.new ?? ''}></td><${Code} line=${l} /></tr>
        ${under ? html`<tr class="thread-row"><td colspan="3"><${ThreadStack} threads=${under.threads} editors=${under.editors} /></td></tr>` : null}`;
    })}`)}
  </tbody></table>`;
}

function SplitHunks({ hunks, ft }) {
  const side = (l, which) => (l
    ? html`<td class=${`ln ${l.kind}${l.moved ? ' moved' : ''}${ft?.selected?.has(which === 'left' ? rowKey('base', l.old) : rowKey('revision', l.new)) ? ' selected' : ''}`} data-side=${which === 'left' ? 'base' : 'revision'} data-n=${which === 'left' ? l.old : l.new}></td><${Code} line=${l} />`
    : html`<td class="ln empty"></td><td class="code empty"></td>`);
  const ctxRows = (rows) => rows.map((l) => html`<tr class="pair ctx-ctx expanded" tabindex="-1">${side(l, 'left')}${side(l, 'right')}</tr>`);
  return html`<table class="diff split"><colgroup><col class="ln-col" /><col class="half" /><col class="ln-col" /><col class="half" /></colgroup><tbody>${hunks.map(({ hunk, lines, above = [], below = [], expand }) => html`
    ${ctxRows(above)}
    ${hunk ? html`<tr class=${`hunk${rebaseClass(hunk)}`}><td class="ln expand-cell"></td><td class="code hunk-head" colspan="3"><${ExpandButtons} x=${expand} /><span class="hunk-text">${hunkHeader(hunk)}</span>${rebaseTag(hunk)}</td></tr>`
      : expand && expand.remaining !== 0 ? html`<tr class="hunk trailing"><td class="ln expand-cell"></td><td class="code hunk-head" colspan="3"><${ExpandButtons} x=${expand} /></td></tr>` : null}
    ${ctxRows(below)}
    ${sideBySide(lines).map((r) => {
      if (r.note) return html`<tr class="note"><td class="ln"></td><td class="code" colspan="3">\\ ${r.note.text}</td></tr>`;
      // base-side threads under the left column, revision-side ones under the right
      const left = ft && r.left && r.left.old !== null ? rowThreads(ft, [rowKey('base', r.left.old)]) : null;
      const right = ft && r.right && r.right.new !== null ? rowThreads(ft, [rowKey('revision', r.right.new)]) : null;
      const marked = ft?.mark && ((ft.mark.side === 'base' && r.left?.old === ft.mark.line) || (ft.mark.side === 'revision' && r.right?.new === ft.mark.line));
      return html`<tr class=${`pair ${r.left ? r.left.kind : 'none'}-${r.right ? r.right.kind : 'none'}${rebaseClass(hunk)}${marked ? ' anchored' : ''}`} tabindex="-1">${side(r.left, 'left')}${side(r.right, 'right')}</tr>
        ${left || right ? html`<tr class="thread-row"><td colspan="2">${left ? html`<${ThreadStack} threads=${left.threads} editors=${left.editors} />` : null}</td><td colspan="2">${right ? html`<${ThreadStack} threads=${right.threads} editors=${right.editors} />` : null}</td></tr>` : null}`;
    })}`)}
  </tbody></table>`;
}

/** Row keys the file's hunks show (a thread on a line the diff does not show goes to the top of its file). */
function shownKeys(file) {
  const keys = new Set();
  for (const h of file.hunks) {
    let o = h.old_start;
    let n = h.new_start;
    for (const l of h.lines) {
      const c = l[0];
      if (c === ' ' || c === '-') keys.add(rowKey('base', o++));
      if (c === ' ' || c === '+') keys.add(rowKey('revision', n++));
    }
  }
  return keys;
}

/** Lines one ↑ / ↓ shows; the most one ?lines= read gives (the route's bound). */
const EXPAND_STEP = 20;
const MAX_LINES_READ = 10000;

/**
 * The unchanged stretches around the hunks, by the revision's line numbers: before each hunk
 * (`from`..`to`), and after the last (`to` null: up to the file's end). `d` turns a revision
 * line of the stretch into its base line (unchanged lines are shifted, not edited).
 */
export function gapsOf(hunks) {
  const out = [];
  let newEnd = 0;
  let oldEnd = 0;
  for (const h of hunks) {
    // a side with no lines names the line before the hunk (`@@ -5,2 +4,0 @@`)
    const firstNew = h.new_lines === 0 ? h.new_start + 1 : h.new_start;
    const firstOld = h.old_lines === 0 ? h.old_start + 1 : h.old_start;
    out.push({ from: newEnd + 1, to: firstNew - 1, d: firstNew - firstOld });
    newEnd = firstNew + h.new_lines - 1;
    oldEnd = firstOld + h.old_lines - 1;
  }
  out.push({ from: newEnd + 1, to: null, d: newEnd - oldEnd });
  return out;
}

/** The last line number clicked (shift-click makes a range from it). */
let lastClick = null;

/** A line number cell under an event: { side, line }, or null. */
function lineCell(target) {
  const td = target && target.closest ? target.closest('td.ln[data-side]') : null;
  if (!td) return null;
  const n = Number(td.getAttribute('data-n'));
  return Number.isInteger(n) && n > 0 ? { side: td.getAttribute('data-side'), line: n } : null;
}

function FileBody({ repo, snaps, file, view, ft, mark, onAnchor }) {
  const h = useHighlighter();
  const T = useThreads();
  const language = languageOf(h, file.path);
  const numbered = useMemo(() => file.hunks.map((hunk) => ({ hunk, lines: numberedLines(hunk, h, language, file.path, file.cross_moves) })), [file, h, language]);
  // Context widened with ?lines= of the file content route (the revision's file): the lines read,
  // the file's length once known, and per gap how many lines are shown at its top and its bottom.
  const canExpand = !!snaps && repo !== undefined && repo !== null && expandable(file);
  const [ctx, setCtx] = useState({ text: new Map(), total: null, shown: new Map() });
  const gaps = useMemo(() => gapsOf(file.hunks), [file]);
  const onExpand = useCallback(async (gi, how) => {
    const g = gaps[gi];
    const cur = ctx.shown.get(gi) ?? { top: 0, bottom: 0 };
    const end = g.to ?? ctx.total;
    let a;
    let b;
    if (how === 'file') { a = 1; b = MAX_LINES_READ; }
    else if (how === 'all') { a = g.from + cur.top; b = end - cur.bottom; }
    else if (how === 'down') { a = g.from + cur.top; b = Math.min(a + EXPAND_STEP - 1, end === null ? Infinity : end - cur.bottom); }
    else { b = end - cur.bottom; a = Math.max(g.from + cur.top, b - EXPAND_STEP + 1); }
    if (!(b >= a)) return;
    let r;
    try {
      r = await get(`${fileUrl(repo, snaps.rev, file.path)}${query({ lines: `${a}-${Number.isFinite(b) ? b : a + EXPAND_STEP - 1}` })}`);
    } catch (e) {
      T?.setFlash?.({ ok: false, text: `Could not read more of ${file.path}: ${e.message}` });
      return;
    }
    setCtx((c) => {
      const text = new Map(c.text);
      r.lines.forEach((line, i) => text.set(r.start + i, line));
      const total = r.total_lines;
      const shown = new Map(c.shown);
      if (how === 'file') {
        gaps.forEach((x, i) => shown.set(i, { top: (x.to ?? total) - x.from + 1, bottom: 0 }));
      } else {
        const s0 = shown.get(gi) ?? { top: 0, bottom: 0 };
        const got = Math.max(0, r.end - r.start + 1);
        shown.set(gi, how === 'up' ? { ...s0, bottom: s0.bottom + got } : { ...s0, top: s0.top + got });
      }
      return { text, total, shown };
    });
  }, [gaps, ctx, repo, snaps, file, T]);
  const hunks = useMemo(() => {
    const rows = (from, to, d) => {
      const out = [];
      for (let n = from; n <= to; n++) {
        const text = ctx.text.get(n);
        if (text === undefined) break;
        out.push({ kind: 'ctx', old: n - d, new: n, text, html: null });
      }
      return out;
    };
    const items = numbered.map(({ hunk, lines }, gi) => {
      const g = gaps[gi];
      const sh = ctx.shown.get(gi) ?? { top: 0, bottom: 0 };
      const size = Math.max(0, g.to - g.from + 1);
      const top = Math.min(sh.top, size);
      const bottom = Math.min(sh.bottom, size - top);
      return {
        hunk, lines,
        above: rows(g.from, g.from + top - 1, g.d),
        below: rows(g.to - bottom + 1, g.to, g.d),
        expand: canExpand ? { gi, remaining: size - top - bottom, onExpand } : null,
      };
    });
    if (canExpand) {
      const gi = gaps.length - 1;
      const g = gaps[gi];
      const sh = ctx.shown.get(gi) ?? { top: 0, bottom: 0 };
      const remaining = ctx.total === null ? null : Math.max(0, ctx.total - g.from + 1 - sh.top);
      items.push({ hunk: null, lines: [], above: rows(g.from, g.from + sh.top - 1, g.d), below: [], expand: { gi, remaining, trailing: true, onExpand } });
    }
    return items;
  }, [numbered, gaps, ctx, canExpand, onExpand]);
  const [drag, setDrag] = useState(null);
  const canComment = !!T && T.open;
  const startEditor = (side, a, b) => {
    const line = Math.min(a, b);
    const end = Math.max(a, b);
    T.openEditor({ kind: 'line', anchor: { path: file.path, side, line, end_line: end > line ? end : null } });
  };
  // click a line number: an editor under that line; shift-click or drag over numbers: a range
  const onMouseDown = (e) => {
    if (e.button !== 0) return;
    const at = lineCell(e.target);
    if (!at) return;
    e.preventDefault();
    // a line number is the line's link: the URL names it (#file=P&line=R12) and the row is marked
    if (onAnchor) onAnchor(file.path, at.side, at.line);
    if (!canComment) return;
    if (e.shiftKey && lastClick && lastClick.path === file.path && lastClick.side === at.side) {
      // one editor for the range: the one-line editor the first click opened goes (unless text was typed in it)
      if (lastClick.line !== at.line) T.closeIfEmpty({ kind: 'line', anchor: { path: file.path, side: at.side, line: lastClick.line, end_line: null } });
      startEditor(at.side, lastClick.line, at.line);
      lastClick = null;
      return;
    }
    lastClick = { path: file.path, ...at };
    setDrag({ side: at.side, from: at.line, to: at.line });
    const up = (u) => {
      removeEventListener('mouseup', up, true);
      const end = lineCell(u.target);
      setDrag(null);
      startEditor(at.side, at.line, end && end.side === at.side ? end.line : at.line);
    };
    addEventListener('mouseup', up, true);
  };
  const onMouseOver = (e) => {
    if (!drag) return;
    const at = lineCell(e.target);
    if (at && at.side === drag.side && at.line !== drag.to) setDrag({ ...drag, to: at.line });
  };
  // ↓ / ↑ on a focused row: the next / previous line; c: an editor under it (its revision line, else its base line)
  const onKeyDown = (e) => {
    if (e.metaKey || e.ctrlKey || e.altKey || typing(e)) return;
    const tr = e.target.closest && e.target.closest('tr');
    if (!tr || tr !== e.target) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      const rows = [...e.currentTarget.querySelectorAll('tr[tabindex]')];
      const next = rows[rows.indexOf(tr) + (e.key === 'ArrowDown' ? 1 : -1)];
      if (next) {
        e.preventDefault();
        next.focus();
      }
      return;
    }
    if (e.key !== 'c' || !canComment) return;
    const cells = [...tr.querySelectorAll('td.ln[data-side]')].map((td) => lineCell(td)).filter(Boolean);
    const at = cells.find((c) => c.side === 'revision') ?? cells[0];
    if (!at) return;
    e.preventDefault();
    startEditor(at.side, at.line, at.line);
  };
  let selected = null;
  if (drag) {
    selected = new Set();
    for (let i = Math.min(drag.from, drag.to); i <= Math.max(drag.from, drag.to); i++) selected.add(rowKey(drag.side, i));
  }
  const rowft = ft || selected || mark ? { ...(ft ?? {}), selected, mark: mark ?? null } : null;
  return html`<div class=${`file-body${canComment ? ' can-comment' : ''}`} onMouseDown=${onMouseDown} onMouseOver=${onMouseOver} onKeyDown=${onKeyDown}>${view === 'split' ? html`<${SplitHunks} hunks=${hunks} ft=${rowft} />` : html`<${UnifiedHunks} hunks=${hunks} ft=${rowft} />`}</div>`;
}

const NO_EDITORS = { rows: new Map(), top: [] };

const CHANGE_LETTER = { added: 'A', deleted: 'D', modified: 'M', renamed: 'R', copied: 'C' };

function modeNote(f) {
  if (f.old_mode && f.new_mode && f.old_mode !== f.new_mode) return `mode ${f.old_mode} → ${f.new_mode}`;
  if (f.change === 'added' && f.new_mode && f.new_mode !== '100644') return `mode ${f.new_mode}`;
  return null;
}

/** A snapshot's file as served by the file content route (the path's segments percent-encoded). */
export const fileUrl = (repo, snapshot, path) => repoPath(repo, `/read/snapshots/${seg(snapshot)}/files/${path.split('/').map(encodeURIComponent).join('/')}`);

const BYTES = new Intl.NumberFormat('en', { maximumFractionDigits: 1 });
function size(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${BYTES.format(n / 1024)} KB`;
  return `${BYTES.format(n / 1024 / 1024)} MB`;
}

/**
 * An image change: both versions side by side with their sizes and dimensions, read from the
 * file content route. An SVG is shown through <img> too (never inlined: it runs no script there).
 */
function ImagePair({ repo, file, snaps }) {
  const side = (img, snapshot, path, label) => html`<figure class=${`image-side ${label === 'before' ? 'del' : 'add'}`}>
    <figcaption><strong>${label === 'before' ? 'Before' : 'After'}</strong>${img ? html` <span class="muted">${img.width && img.height ? `${img.width} × ${img.height} px · ` : ''}${size(img.bytes)} · ${img.media_type.replace('image/', '')}</span>` : null}</figcaption>
    ${img ? html`<div class="image-box"><img src=${fileUrl(repo, snapshot, path)} alt=${`${path}, ${label}`} loading="lazy" /></div>` : html`<p class="muted image-none">${label === 'before' ? 'added' : 'deleted'}</p>`}
  </figure>`;
  return html`<div class="image-pair">
    ${side(file.old_image, snaps.base, file.old_path ?? file.path, 'before')}
    ${side(file.new_image, snaps.rev, file.path, 'after')}
  </div>`;
}

/** A file's +/− counts; a count the server did not compute (binary, too large, past its budget) is said so, never shown as 0. */
function Counts({ file }) {
  if (file.additions === null || file.deletions === null) return file.binary ? null : html`<span class="stat muted" title=${file.note ?? ''}>not counted</span>`;
  return html`<span class="stat"><span class="add-text">+${NUMBER.format(file.additions)}</span> <span class="del-text">−${NUMBER.format(file.deletions)}</span></span>`;
}

/** Why a file's diff is not shown, in words, for each `truncated_reason`. */
const LEFT_OUT = {
  large_diff: 'This diff is large, so it is not loaded with the others.',
  byte_budget: 'This diff was left out: the page\'s diff had reached its size budget.',
  time_budget: 'This diff was left out: the page\'s diff had used its time budget.',
  file_size: 'This file is too large to show as a diff; compare the two versions.',
};

/**
 * A file whose hunks were left out: why, a "Load diff" button when the file alone has them
 * (its size said), and links to both versions (the file route).
 */
function LeftOut({ repo, snaps, file, onLoad }) {
  const [state, setState] = useState({ busy: false, error: null });
  const load = async () => {
    setState({ busy: true, error: null });
    try {
      await onLoad(file);
    } catch (e) {
      setState({ busy: false, error: e.message || String(e) });
    }
  };
  const sizeText = file.diff_lines !== null && file.diff_bytes !== null ? ` (${plural(file.diff_lines, 'line')}, ${size(file.diff_bytes)})` : '';
  const canLoad = !!file.links?.diff;
  // The server's note, for what the words above do not say (a size); its advice to the API's callers is the button here.
  const detail = file.truncated_reason === 'large_diff' ? null : (file.note ?? '').replace(/; ask for this file with \?path=$/, '');
  const side = (snapshot, path, label) => html`<a href=${fileUrl(repo, snapshot, path)} target="_blank" rel="noopener">${label}</a>`;
  return html`<div class="file-note left-out">
    <p>${LEFT_OUT[file.truncated_reason] ?? 'This diff was left out.'}${detail ? html` <span class="muted">${detail}</span>` : null}</p>
    <p class="left-out-actions">
      ${canLoad ? html`<button type="button" class="btn small" onClick=${load} disabled=${state.busy} aria-busy=${state.busy ? 'true' : 'false'}>${state.busy ? 'Loading…' : `Load diff${sizeText}`}</button>` : null}
      ${snaps && file.old_path !== null && file.change !== 'added' ? side(snaps.base, file.old_path, 'Old version') : null}
      ${snaps && file.new_blob_id ? side(snaps.rev, file.path, 'New version') : null}
    </p>
    ${state.error ? html`<p class="warn-text" role="alert">Could not load the diff: ${state.error}</p>` : null}
  </div>`;
}

/** One file: a sticky header (always there) and its body, built once it is near the viewport. */
const FileDiff = memo(function FileDiff({ repo, snaps, file, index, view, observe, open, onToggle, current, onLoadFull, entry, editors, viewed, onViewed, mark, onAnchor, all, canComment, onComment }) {
  const box = useRef(null);
  const [seen, setNear] = useState(false);
  // `all`: every body is built (printing, or a small diff built in the background for a full-page capture).
  // A section far from the screen has its header's button only: its counts, Comment and Viewed
  // come with its body (a 2,000-file diff makes 2,000 sections: each node counts).
  const near = seen || all;
  useEffect(() => observe(box.current, () => setNear(true)), [observe]);
  const lines = lineCount(file);
  const mode = modeNote(file);
  const hasBody = file.hunks.length > 0;
  let body = null;
  const images = open && snaps && (file.old_image || file.new_image) ? html`<${ImagePair} repo=${repo} file=${file} snaps=${snaps} />` : null;
  if (!open) body = null;
  else if (file.binary) body = images ? null : html`<p class="file-note">Binary file ${file.change}.</p>`;
  else if (file.truncated) body = html`<${LeftOut} repo=${repo} snaps=${snaps} file=${file} onLoad=${onLoadFull} />`;
  else if (!hasBody) body = html`<p class="file-note">${mode ? 'Only the mode changed.' : file.change === 'modified' ? 'No change in content.' : `Empty file ${file.change}.`}</p>`;
  else if (near) body = html`<${FileBody} repo=${repo} snaps=${snaps} file=${file} view=${view} ft=${entry || editors.rows.size ? { threads: entry?.lines, editors: editors.rows } : null} mark=${mark} onAnchor=${onAnchor} />`;
  // A style object is set through the CSSOM (el.style.height), which the CSP allows; no style attribute is written.
  // (its words come from the stylesheet, ::before: a 2,000-file diff's placeholders make no text nodes)
  else body = html`<div class="file-placeholder" style=${{ height: `${rowCount(file, view) * LINE_PX}px` }} aria-busy="true" data-lines=${`${plural(lines, 'line')}…`}></div>`;
  // A section not built yet is skipped by the browser's layout while off screen (content-visibility),
  // at the size its placeholder has.
  const lazy = open && !near && hasBody && !file.binary && !file.truncated;
  const size = lazy ? { containIntrinsicSize: `auto ${rowCount(file, view) * LINE_PX + 40}px` } : undefined;
  // Threads at the top of the file: on the file, outdated ones, and those on lines the diff does not show.
  const hidden = useMemo(() => {
    if (!entry || entry.lines.size === 0) return [];
    const shown = shownKeys(file);
    return [...entry.lines].filter(([k]) => !shown.has(k) || !hasBody || file.binary || file.truncated).flatMap(([, ts]) => ts);
  }, [entry, file, hasBody]);
  const topThreads = entry ? [...entry.top, ...hidden] : [];
  const fileTarget = { kind: 'file', path: file.path };
  return html`<section class=${`diff-file${current ? ' current' : ''}${lazy ? ' lazy' : ''}${viewed ? ' viewed' : ''}${file.from_rebase ? ' from-rebase' : ''}`} id=${`f${index}`} data-path=${file.path} ref=${box} style=${size}>
    <header class="file-head">
      <button type="button" class="file-toggle" aria-expanded=${open ? 'true' : 'false'} onClick=${() => onToggle(index)}
        onKeyDown=${(e) => { if (e.key === 'ArrowDown') { const row = box.current?.querySelector('.file-body tr[tabindex]'); if (row) { e.preventDefault(); row.focus(); } } }} title=${open ? 'Collapse (o)' : 'Expand (o)'}>
        <span class=${`chg chg-${file.change}`} title=${file.change}>${CHANGE_LETTER[file.change] ?? '?'}</span>
        <span class="file-path">${file.path}</span>
        ${file.old_path && (file.change === 'renamed' || file.change === 'copied') ? html`<span class="renamed-from muted">${file.change} from <code>${file.old_path}</code>${typeof file.similarity === 'number' ? ` (${file.similarity}%)` : ''}</span>` : null}
      </button>
      ${near || current ? html`<span class="file-meta">
        ${mode ? html`<span class="muted">${mode}</span>` : null}
        ${file.from_rebase ? html`<span class="rebase-tag" title="Changed only by the rebase: the target line's change between the two patchsets' bases, not the author's">only the rebase</span>` : null}
        ${file.binary ? html`<${Badge} value="binary" tone="plain" />` : null}
        ${file.truncated ? html`<${Badge} value=${file.truncated_reason === 'file_size' ? 'too large' : 'not loaded'} tone="warn" />` : null}
        ${entry?.count ? html`<span class=${`thread-count${entry.unresolved ? ' has-unresolved' : ''}`} title="comment threads on this file">${plural(entry.count, 'thread')}${entry.unresolved ? html` · ${entry.unresolved} unresolved` : null}</span>` : null}
        <${Counts} file=${file} />
        ${canComment ? html`<button type="button" class="btn small link comment-file" onClick=${() => onComment(fileTarget)} aria-label=${`Comment on file ${file.path}`}>Comment on file</button>` : null}
        ${onViewed ? html`<label class="viewed-check" title="Mark the file viewed (v); it folds, and stays viewed on later patchsets while its content does not change"><input type="checkbox" checked=${!!viewed} onChange=${(e) => onViewed(index, e.currentTarget.checked)} aria-label=${`Viewed: ${file.path}`} /> Viewed</label>` : null}
      </span>` : null}
    </header>
    ${file.truncated ? body : null}
    ${open && (topThreads.length || editors.top.length) ? html`<div class="file-threads"><${ThreadStack} threads=${topThreads} editors=${editors.top} where=${true} /></div>` : null}
    ${images}
    ${file.truncated ? null : body}
  </section>`;
});

/**
 * A path in two parts, for a box that cuts it in the middle when it does not fit: the directory
 * shrinks (with an ellipsis), the file name does not (app.css .path-cut). CSS has no middle
 * ellipsis, so the cut is made in the markup; the whole path is the box's title.
 */
export function pathParts(path) {
  const i = path.lastIndexOf('/');
  return html`${i >= 0 ? html`<span class="path-dir">${path.slice(0, i + 1)}</span>` : null}<span class="path-name">${path.slice(i + 1)}</span>`;
}

/** Whether a media query matches, following changes (a rotated phone, a resized window). */
function useMedia(query) {
  const [on, setOn] = useState(() => matchMedia(query).matches);
  useEffect(() => {
    const m = matchMedia(query);
    const change = () => setOn(m.matches);
    change();
    m.addEventListener('change', change);
    return () => m.removeEventListener('change', change);
  }, [query]);
  return on;
}

/** Below this width side by side has no room for two columns of code: the diff shows unified. */
export const NARROW = '(max-width: 720px)';

/** A path's directory with its slash ('' at the top). */
const dirOf = (path) => path.slice(0, path.lastIndexOf('/') + 1);

/**
 * The files grouped by directory, directories in the order they first appear: the tree and the
 * diff show the files in this one order (for a diff sorted by path, the order it came in).
 */
export function byDirectory(files) {
  const groups = new Map();
  for (const f of files) {
    const d = dirOf(f.path);
    const g = groups.get(d);
    if (g) g.push(f);
    else groups.set(d, [f]);
  }
  return [...groups.values()].flat();
}

/**
 * The changed files as a tree grouped by directory: each file's change, +/−, thread counts and
 * viewed mark; a filter box (`/`) keeps the files whose path contains what is typed. Sticky
 * beside the diff (app.css), rows off screen are skipped by the browser (content-visibility).
 */
const FileTree = memo(function FileTree({ files, current, onPick, index, viewed, filterRef }) {
  const [filter, setFilter] = useState('');
  // on a phone the tree starts folded to its count, so the first screen shows code
  const narrow = useMedia(NARROW);
  const [unfolded, setUnfolded] = useState(false);
  const folded = narrow && !unfolded;
  const q = filter.trim().toLowerCase();
  // Rows past the first screens are added once the page is idle (a 2,000-file tree is 20,000 nodes:
  // building them all at once would delay the diff beside it); the count is of every file.
  const [limit, setLimit] = useState(TREE_FIRST);
  useEffect(() => {
    if (limit >= files.length) return undefined;
    const idle = window.requestIdleCallback ?? ((f) => setTimeout(f, 50));
    const cancel = window.cancelIdleCallback ?? clearTimeout;
    const id = idle(() => setLimit((n) => n + TREE_SLICE), { timeout: 1000 });
    return () => cancel(id);
  }, [limit, files]);
  const rows = [];
  // the directories above the last row: a file opens the ones it does not share with it, one row each, indented by depth
  let dirs = [];
  let shown = 0;
  // viewed among the files listed (a mark can name a path this diff does not show)
  let seen = 0;
  files.forEach((f, i) => {
    if (q && !f.path.toLowerCase().includes(q)) return;
    shown++;
    const isViewed = viewed?.has(f.path);
    if (isViewed) seen++;
    if (shown > limit) return;
    const parts = dirOf(f.path).split('/').slice(0, -1);
    let k = 0;
    while (k < parts.length && k < dirs.length && parts[k] === dirs[k]) k++;
    if (parts.length === 0 && dirs.length > 0) rows.push(html`<li class="dir-row" title="(top level)"><span class="dir-icon" aria-hidden="true">▾</span><span class="muted">(top level)</span></li>`);
    for (let j = k; j < parts.length; j++) {
      rows.push(html`<li class="dir-row" title=${`${parts.slice(0, j + 1).join('/')}/`} style=${{ '--depth': j }}><span class="dir-icon" aria-hidden="true">▾</span>${parts[j]}/</li>`);
    }
    dirs = parts;
    rows.push(html`<li class=${`file-row${i === current ? ' current' : ''}${isViewed ? ' viewed' : ''}`} data-path=${f.path} style=${{ '--depth': parts.length }}>
      <span class=${`chg chg-${f.change}`} title=${f.change}>${CHANGE_LETTER[f.change] ?? '?'}</span>
      <span class="path-cell"><a class="path-cut" title=${f.path} href=${fileHash(f.path)} onClick=${(e) => { e.preventDefault(); onPick(i); }}>${pathParts(f.path)}</a></span>
      ${f.additions === null ? html`<span class="num muted" title=${f.binary ? 'binary' : 'not counted'}>${f.binary ? 'bin' : '?'}</span><span class="num"></span>` : html`<span class="num add-text">+${f.additions}</span>
      <span class="num del-text">−${f.deletions}</span>`}
      ${index ? html`<${FileThreadCount} e=${index.byFile.get(f.path)} />` : html`<span class="num thread-num"></span>`}
      <span class="viewed-mark" title=${isViewed ? 'viewed' : ''}>${isViewed ? html`<span aria-hidden="true">✓</span><span class="sr-only">viewed</span>` : null}</span>
    </li>`);
  });
  return html`<nav class=${`file-list file-tree${folded ? ' folded' : ''}`} aria-label="Changed files">
    <div class="tree-filter">
      <input type="search" ref=${filterRef} value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)} placeholder="Filter files ( / )" aria-label="Filter the changed files"
        onKeyDown=${(e) => { if (e.key === 'Escape') { setFilter(''); e.currentTarget.blur(); } }} />
      <span class="muted small tree-count">${q ? `${shown} of ${files.length}` : plural(files.length, 'file')}${seen ? ` · ${seen} viewed` : ''}</span>
      ${narrow ? html`<button type="button" class="btn small link tree-fold" aria-expanded=${folded ? 'false' : 'true'} onClick=${() => setUnfolded(folded)}>${folded ? 'Show the files' : 'Hide the files'}</button>` : null}
    </div>
    ${shown === 0 ? html`<p class="empty small">No file matches.</p>` : html`<ol class="files">${rows}</ol>`}
  </nav>`;
});

/** A file list row's threads: how many, and how many are unresolved. */
function FileThreadCount({ e }) {
  if (!e || !e.count) return html`<span class="num thread-num"></span>`;
  return html`<span class=${`num thread-num${e.unresolved ? ' warn-text' : ' muted'}`} title=${`${plural(e.count, 'thread')}, ${e.unresolved} unresolved`}><span class="sr-only">threads: </span>${e.unresolved ? `${e.unresolved}/${e.count}` : e.count}</span>`;
}

/** File tree rows built at first, and added per idle moment after. */
const TREE_FIRST = 100;
const TREE_SLICE = 500;

/** Diffs up to this many lines have every body built in the background once the page is idle, so a full-page capture shows them all. */
const BUILD_ALL_LINES = 3000;

/**
 * The files of a diff. `diff` is the JSON of GET read/patchsets/{id}/diff; `view` is 'unified'
 * or 'split'; `marks` the reader's viewed marks (useViewed in pages/change.js). Keyboard: j / k
 * next / previous file, o toggles the current one, v marks it viewed, N / P the next / previous
 * hunk, / the file filter; n / p the next and previous unresolved thread (threads.js), c a
 * comment on the focused line. `active`: the Files tab is shown (`onShow` shows it).
 */
export function DiffView({ repo, diff, view: asked, onView, marks = null, active = true, onShow = () => {}, toolbar = null, whitespace = null }) {
  const narrow = useMedia(NARROW);
  const T = useThreads();
  const view = narrow ? 'unified' : asked;
  const [files, setFiles] = useState(() => withCrossMoves(byDirectory(diff.files), diff.moved_blocks));
  // Files changed only by the rebase (an inter-patchset diff) start folded, as viewed ones do.
  const initialOpen = (fs, seen) => new Set(fs.map((f, i) => (lineCount(f) > COLLAPSE_LINES || seen?.has(f.path) || f.from_rebase ? -1 : i)).filter((i) => i >= 0));
  const [openSet, setOpenSet] = useState(() => initialOpen(files, marks?.paths));
  const [current, setCurrentState] = useState(-1);
  // The line a #file=P&line=R12 names (or a line number clicked): its row is marked.
  const [mark, setMark] = useState(() => anchorFromHash(location.hash));
  // Every body built: while printing, and for a diff small enough, once the page is idle.
  const [all, setAll] = useState(false);
  const filterRef = useRef(null);
  // The keyboard handler reads the current file from here: keys pressed faster than renders still move one file each.
  const currentRef = useRef(-1);
  const setCurrent = (i) => {
    currentRef.current = i;
    setCurrentState(i);
  };
  const list = useRef(null);
  // Sections are added in slices, so the first files show at once however many there are.
  const [shown, setShown] = useState(Math.min(diff.files.length, FIRST_SLICE));
  const pending = useRef(null);
  useEffect(() => {
    const fs = withCrossMoves(byDirectory(diff.files), diff.moved_blocks);
    setFiles(fs);
    setOpenSet(initialOpen(fs, marks?.paths));
  }, [diff]);
  // Viewed marks read after the diff: the files viewed start folded (once per read of the marks).
  const foldedFor = useRef(null);
  useEffect(() => {
    if (!marks || marks.paths.size === 0 || foldedFor.current === marks.paths) return;
    const first = foldedFor.current === null;
    foldedFor.current = marks.paths;
    if (!first) return;
    setOpenSet((s) => {
      const next = new Set(s);
      files.forEach((f, i) => { if (marks.paths.has(f.path)) next.delete(i); });
      return next;
    });
  }, [marks?.paths, files]);
  useEffect(() => {
    if (shown >= files.length) return undefined;
    const id = requestAnimationFrame(() => setShown((n) => Math.min(files.length, n + SLICE)));
    return () => cancelAnimationFrame(id);
  }, [shown, files]);
  // Print: every section and every body, open; the browser lays the page out after this handler.
  useEffect(() => {
    const before = () => {
      setShown(files.length);
      setAll(true);
      setOpenSet(new Set(files.map((_, i) => i)));
    };
    addEventListener('beforeprint', before);
    return () => removeEventListener('beforeprint', before);
  }, [files]);
  useEffect(() => {
    const total = files.reduce((n, f) => n + lineCount(f), 0);
    if (total > BUILD_ALL_LINES || all) return undefined;
    const idle = window.requestIdleCallback ?? ((f) => setTimeout(f, 200));
    const cancel = window.cancelIdleCallback ?? clearTimeout;
    const id = idle(() => setAll(true));
    return () => cancel(id);
  }, [files]);

  // One observer for every file section: a section's body is built when it comes within a
  // screen or so of the viewport, and stays built.
  const observer = useRef(null);
  const waiting = useRef(new Map());
  const observe = useCallback((el, onNear) => {
    if (!el) return undefined;
    if (!observer.current) {
      observer.current = new IntersectionObserver((entries) => {
        for (const e of entries) {
          if (!e.isIntersecting) continue;
          const f = waiting.current.get(e.target);
          waiting.current.delete(e.target);
          observer.current.unobserve(e.target);
          if (f) f();
        }
      }, { rootMargin: '800px 0px 800px 0px' });
    }
    waiting.current.set(el, onNear);
    observer.current.observe(el);
    return () => {
      waiting.current.delete(el);
      observer.current?.unobserve(el);
    };
  }, []);
  useEffect(() => () => observer.current?.disconnect(), []);

  const goTo = useCallback((i, { focus = true, hash = true } = {}) => {
    if (i < 0 || i >= files.length) return;
    onShow();
    if (i >= shown) {
      // not rendered yet: render every section, then go there
      pending.current = { i, focus, hash };
      setShown(files.length);
      return;
    }
    setCurrent(i);
    const el = document.getElementById(`f${i}`);
    if (el) {
      el.scrollIntoView({ block: 'start' });
      if (focus) el.querySelector('.file-toggle')?.focus({ preventScroll: true });
    }
    if (hash) history.replaceState(history.state, '', location.pathname + location.search + fileHash(files[i].path));
  }, [files, shown, onShow]);
  useEffect(() => {
    const p = pending.current;
    if (p && p.i < shown) {
      pending.current = null;
      goTo(p.i, p);
    }
  }, [shown, goTo]);

  // #file=PATH[&line=R12] in the URL: go to that file, and to that line, marked (on load, and
  // when a link changes the hash). The line's row exists once the file's body is built.
  useEffect(() => {
    let frame = 0;
    const jump = () => {
      const at = anchorFromHash(location.hash);
      if (at === null) return;
      const i = files.findIndex((f) => f.path === at.path);
      if (i < 0) return;
      setOpenSet((s) => (s.has(i) ? s : new Set([...s, i])));
      setMark(at.line ? at : null);
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => goTo(i, { focus: false, hash: false }));
      if (!at.line) return;
      const started = performance.now();
      const find = () => {
        const td = document.querySelector(`#f${i} td.ln[data-side="${at.side}"][data-n="${at.line}"]`);
        if (td) {
          td.closest('tr').scrollIntoView({ block: 'center' });
          return;
        }
        if (performance.now() - started < 8000) frame = requestAnimationFrame(find);
      };
      frame = requestAnimationFrame(() => requestAnimationFrame(find));
    };
    jump();
    addEventListener('hashchange', jump);
    return () => {
      cancelAnimationFrame(frame);
      removeEventListener('hashchange', jump);
    };
  }, [files, goTo]);

  /** A line number clicked: the URL names the line (replaced, not pushed: Back leaves the page as before) and its row is marked. */
  const onAnchor = useCallback((path, side, line) => {
    setMark({ path, side, line });
    history.replaceState(history.state, '', location.pathname + location.search + lineHash(path, side, line));
  }, []);

  const toggle = useCallback((i) => setOpenSet((s) => {
    const next = new Set(s);
    if (next.has(i)) next.delete(i);
    else next.add(i);
    return next;
  }), []);

  /** Mark file i viewed (it folds) or not viewed (it opens). */
  const setViewed = useStable(async (i, on) => {
    const f = files[i];
    if (!f || !marks) return;
    setOpenSet((s) => {
      const next = new Set(s);
      if (on) next.delete(i);
      else next.add(i);
      return next;
    });
    await marks.toggle(f.path, on);
  });

  /** The file the reader is at: the current one while it is on screen, else the one at the top of the viewport. */
  const here = () => {
    const sections = list.current ? list.current.children : [];
    const cur = currentRef.current;
    if (cur >= 0 && sections[cur]) {
      const r = sections[cur].getBoundingClientRect();
      if (r.bottom > 60 && r.top < innerHeight) return cur;
    }
    let lo = 0;
    let hi = sections.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (sections[mid].getBoundingClientRect().top <= 64) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };

  /** N / P: the next / previous hunk header below / above the top of the screen, across files. */
  const hunk = (dir) => {
    const heads = list.current ? [...list.current.querySelectorAll('.diff-file tr.hunk')] : [];
    const top = 72;
    const target = dir > 0
      ? heads.find((h) => h.getBoundingClientRect().top > top + 2)
      : heads.reverse().find((h) => h.getBoundingClientRect().top < top - 2);
    if (target) {
      target.scrollIntoView({ block: 'start' });
      scrollBy(0, -top);
      target.nextElementSibling?.focus?.({ preventScroll: true });
      return;
    }
    // the next file's hunks are not built yet: go to that file
    const i = here();
    if (dir > 0 && i + 1 < files.length) goTo(i + 1, { focus: false });
  };

  useEffect(() => {
    const onKey = (e) => {
      if (typing(e) || e.metaKey || e.ctrlKey || e.altKey) return;
      if (document.querySelector('dialog[open]')) return;
      const k = e.key;
      if (k === 'j') goTo(here() + 1);
      else if (k === 'k') goTo(Math.max(0, here() - 1));
      else if (k === 'o' && currentRef.current >= 0) toggle(currentRef.current);
      else if (k === 'v' && marks) {
        const i = currentRef.current >= 0 ? currentRef.current : here();
        if (i < 0) return;
        setViewed(i, !marks.paths.has(files[i].path));
        // viewed: on to the next file, as a reviewer does
        if (!marks.paths.has(files[i].path) && i + 1 < files.length) requestAnimationFrame(() => goTo(i + 1, { focus: true }));
      } else if (k === 'N' || k === 'P') {
        if (!active) return;
        hunk(k === 'N' ? 1 : -1);
      } else if (k === '/') {
        onShow();
        requestAnimationFrame(() => filterRef.current?.focus());
      } else if (k === 'u') onView('unified');
      else if (k === 's') onView('split');
      else return;
      e.preventDefault();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [goTo, toggle, onView, marks, setViewed, files, active, onShow]);

  /** A file left out, loaded alone (its `links.diff`: the same diff narrowed to its old and new path); it replaces its entry, so its threads find their lines. */
  const loadFull = useStable(async (file) => {
    const one = await get(file.links?.diff ?? repoPath(repo, `/read/patchsets/${seg(diff.patchset_id)}/diff${query({ path: file.path, against: diff.against, whitespace: whitespace ?? undefined })}`));
    const f = one.files.find((x) => x.path === file.path);
    if (!f) throw new Error(`${file.path} is not in the diff`);
    setFiles((fs) => fs.map((x) => (x.path === file.path ? { ...f, ...(x.cross_moves ? { cross_moves: x.cross_moves } : {}) } : x)));
    setOpenSet((s) => {
      const i = files.findIndex((x) => x.path === file.path);
      return i < 0 || s.has(i) ? s : new Set([...s, i]);
    });
  });

  // The threads placed once per read of the threads (a Map by file and line), and the open editors by file.
  useEffect(() => { T?.setFiles({ files, against: diff.against ?? null }); }, [files, diff]);
  const index = T?.index ?? null;
  const editorsByFile = useMemo(() => {
    const m = new Map();
    for (const e of T?.editors?.values() ?? []) {
      const path = e.kind === 'line' ? e.anchor.path : e.kind === 'file' ? e.path : null;
      if (path !== null && !m.has(path)) m.set(path, editorsOfFile(T.editors, path));
    }
    return m;
  }, [T?.editors]);
  const goToFile = useCallback((i) => {
    setOpenSet((s) => (s.has(i) ? s : new Set([...s, i])));
    goTo(i, { focus: false });
  }, [goTo]);
  useThreadKeys(T, index, goToFile);
  const onPick = useStable((i) => {
    setOpenSet((s) => (s.has(i) ? s : new Set([...s, i])));
    goTo(i, { focus: true });
  });
  const onComment = useStable((target) => T?.openEditor(target));
  const st = diff.stats;
  // Files still without their hunks (a loaded one no longer counts).
  const leftOut = files.reduce((n, f) => n + (f.truncated ? 1 : 0), 0);
  const viewedPaths = marks?.paths ?? null;
  const onlyRebase = files.reduce((n, f) => n + (f.from_rebase ? 1 : 0), 0);
  const showRebase = () => setOpenSet((s) => new Set([...s, ...files.flatMap((f, i) => (f.from_rebase ? [i] : []))]));
  const snaps = useMemo(() => (diff.base_snapshot_id && diff.revision_snapshot_id ? { base: diff.base_snapshot_id, rev: diff.revision_snapshot_id } : null), [diff]);
  return html`<div class="diff-view">
    <div class="files-toolbar diff-summary">
      ${toolbar}
      <span><strong>${plural(files.length, 'file')}</strong> changed</span>
      <span class="add-text">+${NUMBER.format(st.additions)}</span> <span class="del-text">−${NUMBER.format(st.deletions)}</span>
      ${st.uncounted_files ? html`<span class="warn-text" title="these files' lines were not counted: the totals leave them out">${plural(st.uncounted_files, 'file')} not counted</span>` : null}
      ${st.binary_files ? html`<span class="muted">${plural(st.binary_files, 'binary file')}</span>` : null}
      ${leftOut ? html`<span class="muted">${plural(leftOut, 'diff')} not loaded</span>` : null}
      ${diff.rebase && (onlyRebase || diff.rebase.hunks) ? html`<span class="rebase-note muted" title="The two patchsets have different bases: what the target line changed between them is greyed, and files it alone changed are folded">${onlyRebase ? html`${plural(onlyRebase, 'file')} changed only by the rebase <button type="button" class="btn small link show-rebase" onClick=${showRebase}>show</button>` : `${plural(diff.rebase.hunks, 'hunk')} from the rebase greyed`}</span>` : null}
      ${marks?.error ? html`<span class="warn-text small" role="status">viewed marks: ${marks.error.status ? `HTTP ${marks.error.status}: ` : ''}${marks.error.message}</span>` : null}
      <span class="spacer"></span>
      <span class="muted kbd-hint" title="j / k files · v viewed · n / p unresolved threads · N / P hunks · / filter"><kbd>?</kbd> keys</span>
      <div class="seg" role="group" aria-label="Diff layout">
        <button type="button" class=${`btn small ${view === 'unified' ? 'on' : ''}`} aria-pressed=${view === 'unified'} onClick=${() => onView('unified')}>Unified</button>
        <button type="button" class=${`btn small ${view === 'split' ? 'on' : ''}`} aria-pressed=${view === 'split'} onClick=${() => onView('split')} disabled=${narrow} title=${narrow ? 'The screen is too narrow for side by side' : undefined}>Side by side</button>
      </div>
    </div>
    ${files.length === 0 ? html`<p class="empty">No file differs.</p>` : html`<div class="files-layout">
      <${FileTree} files=${files} current=${current} onPick=${onPick} index=${index} viewed=${viewedPaths} filterRef=${filterRef} />
      <div class="diff-files" ref=${list}>${files.slice(0, shown).map((f, i) => html`<${FileDiff} key=${f.path} repo=${repo} snaps=${snaps} file=${f} index=${i} view=${view} observe=${observe} open=${openSet.has(i)} onToggle=${toggle} current=${i === current} onLoadFull=${loadFull} entry=${index?.byFile.get(f.path)} editors=${editorsByFile.get(f.path) ?? NO_EDITORS}
        viewed=${viewedPaths?.has(f.path) ?? false} onViewed=${marks ? setViewed : null} mark=${mark && mark.path === f.path ? mark : null} onAnchor=${onAnchor} all=${all} canComment=${!!T?.open} onComment=${onComment} />`)}</div>
    </div>`}
  </div>`;
}
