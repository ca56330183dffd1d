// Syntax highlighting with highlight.js, loaded on the first diff that needs it (it is the
// largest file of the UI). highlight.js escapes the code it is given and emits only
// <span class="hljs-..."> markup, so its output is the one HTML the page inserts as HTML
// (diff.js); everything else is text. A file in a language we do not know stays plain text:
// guessing the language of a fragment is slow and often wrong.
import { useEffect, useState } from './vendor/preact.js';

let hljs = null;
let loading = null;

function load() {
  loading ??= import('./vendor/highlight.js').then((m) => {
    hljs = m.default;
    return hljs;
  });
  return loading;
}

/** highlight.js once it has loaded (null until then; the component re-renders when it arrives). */
export function useHighlighter() {
  const [h, setH] = useState(hljs);
  useEffect(() => {
    if (!h) load().then(setH, () => { /* stays plain text */ });
  }, []);
  return h;
}

const BY_NAME = {
  Makefile: 'makefile', makefile: 'makefile', GNUmakefile: 'makefile', Dockerfile: 'dockerfile', 'CMakeLists.txt': 'cmake',
  Gemfile: 'ruby', Rakefile: 'ruby', '.bashrc': 'bash', '.profile': 'bash', '.gitignore': 'bash', '.cairnignore': 'bash',
};

/** The highlight.js language for a path, or null. */
export function languageOf(h, path) {
  if (!h || !path) return null;
  const base = path.slice(path.lastIndexOf('/') + 1);
  if (BY_NAME[base] && h.getLanguage(BY_NAME[base])) return BY_NAME[base];
  const dot = base.lastIndexOf('.');
  if (dot <= 0) return null;
  const ext = base.slice(dot + 1).toLowerCase();
  return h.getLanguage(ext) ? ext : null;
}

/** Split highlighted HTML into lines, closing the spans open at each line end and reopening them on the next. */
export function splitHighlighted(markup) {
  const out = [];
  const open = [];
  let line = '';
  let last = 0;
  const re = /<span[^>]*>|<\/span>|\n/g;
  for (let m = re.exec(markup); m; m = re.exec(markup)) {
    line += markup.slice(last, m.index);
    last = re.lastIndex;
    if (m[0] === '\n') {
      out.push(line + '</span>'.repeat(open.length));
      line = open.join('');
    } else if (m[0] === '</span>') {
      open.pop();
      line += m[0];
    } else {
      open.push(m[0]);
      line += m[0];
    }
  }
  out.push(line + markup.slice(last));
  return out;
}

/** Highlighted HTML, one string per line of `lines`, or null when it cannot be done. */
export function highlightLines(h, language, lines) {
  if (!h || !language || lines.length === 0) return null;
  const text = lines.join('\n');
  if (text.length > 400_000) return null;
  try {
    const out = splitHighlighted(h.highlight(text, { language, ignoreIllegals: true }).value);
    return out.length === lines.length ? out : null;
  } catch {
    return null;
  }
}
