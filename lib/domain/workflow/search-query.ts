// The change search language (docs/api.md "Searching changes"): `GET changes?q=` takes terms
// separated by spaces, all of which a change must match: `status:S`, `is:open`,
// `is:unresolved`, `is:wip`, `owner:NAME`, `reviewer:NAME`, `cc:NAME`, `topic:NAME`,
// `file:PATH`, `line:LINE`, and bare words, each a whole word of the title (case-insensitive).
// A value with spaces is quoted (`owner:"Ann Lee"`). `self` or `@me` as a person's name is the
// caller (Gerrit's `owner:self`, GitHub's `author:@me`): resolved here, so a cursor is bound to
// the name. Parsing is pure; lib/authority/workflow/search.ts answers a query from its indexes.
import { Invalid, Unprocessable } from '../errors.js';
import { CHANGE_STATUSES, type ChangeStatus } from './rules.js';

export const MAX_QUERY_CHARS = 1024;
export const MAX_QUERY_TERMS = 16;
/** Words longer than this are not indexed (nor searched for). */
export const MAX_WORD_CHARS = 64;

export interface SearchQuery {
  status: ChangeStatus | null;
  open: boolean;
  unresolved: boolean;
  owner: string | null;
  reviewer: string | null;
  /** A person copied on the change (`cc:`). */
  cc: string | null;
  topic: string | null;
  /** `is:wip`: work in progress only. */
  wip: boolean;
  /** A path or directory prefix (clean, relative). */
  file: string | null;
  line: string | null;
  /** Title words, lower-cased, each once. */
  words: string[];
}

/** The words of a text as the index keeps them: runs of letters and digits, lower-cased, each once, at most 64 characters. */
export function titleWords(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) if (m[0].length <= MAX_WORD_CHARS) out.add(m[0]);
  return [...out];
}

/** Split `q` into raw terms: runs of non-space characters, a `"…"` part kept whole (quotes removed). */
function splitTerms(q: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < q.length) {
    while (i < q.length && /\s/.test(q[i])) i++;
    if (i >= q.length) break;
    let term = '';
    while (i < q.length && !/\s/.test(q[i])) {
      if (q[i] === '"') {
        const end = q.indexOf('"', i + 1);
        if (end < 0) throw new Invalid('q: a quote is not closed');
        term += q.slice(i + 1, end);
        i = end + 1;
      } else term += q[i++];
    }
    out.push(term);
  }
  return out;
}

const KEYS = ['status', 'is', 'owner', 'reviewer', 'cc', 'topic', 'file', 'line'] as const;
/** Values of owner:, reviewer: and cc: that name the caller. */
const SELF = ['self', '@me'];

/**
 * Parse a search; a malformed one → 400 naming what is wrong. `caller` is the request's identity
 * (`self` / `@me` name it); a query naming the caller without one → 422 saying to sign in.
 */
export function parseSearch(q: string, caller: string | null = null): SearchQuery {
  if (q.length > MAX_QUERY_CHARS) throw new Invalid(`q is longer than ${MAX_QUERY_CHARS} characters`);
  const terms = splitTerms(q);
  if (terms.length === 0) throw new Invalid('q is empty: give one or more terms (status:review owner:NAME reviewer:NAME cc:NAME topic:NAME is:open is:unresolved is:wip file:PATH line:LINE, or title words)');
  if (terms.length > MAX_QUERY_TERMS) throw new Invalid(`q has ${terms.length} terms, more than ${MAX_QUERY_TERMS}`);
  const out: SearchQuery = { status: null, open: false, unresolved: false, owner: null, reviewer: null, cc: null, topic: null, wip: false, file: null, line: null, words: [] };
  const person = (key: string, value: string): string => {
    if (!SELF.includes(value.toLowerCase())) return value;
    if (caller === null) throw new Unprocessable(`q: ${key}:${value} means you, and this request names no one: sign in (through the server's front door) or give a name`);
    return caller;
  };
  const once = (key: string, current: unknown) => {
    if (current !== null) throw new Invalid(`q: ${key}: may be given once`);
  };
  for (const term of terms) {
    const colon = term.indexOf(':');
    const key = colon > 0 ? term.slice(0, colon).toLowerCase() : null;
    if (term.toLowerCase() === '@me') throw new Invalid('q: @me is a name, not a term of its own: owner:@me, reviewer:@me or cc:@me');
    if (key === null || !(KEYS as readonly string[]).includes(key)) {
      if (colon > 0 && /^[a-z]+$/i.test(term.slice(0, colon))) throw new Invalid(`q: unknown term ${JSON.stringify(term.slice(0, colon + 1))} (known: ${KEYS.map((k) => `${k}:`).join(' ')})`);
      const words = titleWords(term);
      if (words.length === 0) throw new Invalid(`q: ${JSON.stringify(term)} holds no letter or digit to search titles for`);
      for (const w of words) if (!out.words.includes(w)) out.words.push(w);
      continue;
    }
    const value = term.slice(colon + 1);
    if (value === '') throw new Invalid(`q: ${key}: needs a value`);
    if (value.length > 256) throw new Invalid(`q: the value of ${key}: is longer than 256 characters`);
    switch (key) {
      case 'status':
        once('status', out.status);
        if (!(CHANGE_STATUSES as readonly string[]).includes(value)) throw new Invalid(`q: status must be one of ${CHANGE_STATUSES.join(', ')}`);
        out.status = value as ChangeStatus;
        break;
      case 'is':
        if (value === 'open') out.open = true;
        else if (value === 'unresolved') out.unresolved = true;
        else if (value === 'wip') out.wip = true;
        else throw new Invalid('q: is: must be open, unresolved or wip');
        break;
      case 'owner':
        once('owner', out.owner);
        out.owner = person(key, value);
        break;
      case 'reviewer':
        once('reviewer', out.reviewer);
        out.reviewer = person(key, value);
        break;
      case 'cc':
        once('cc', out.cc);
        out.cc = person(key, value);
        break;
      case 'topic':
        once('topic', out.topic);
        out.topic = value;
        break;
      case 'line':
        once('line', out.line);
        out.line = value;
        break;
      case 'file': {
        once('file', out.file);
        const p = value.endsWith('/') ? value.slice(0, -1) : value;
        if (p === '' || p.startsWith('/') || p.includes('\\') || p.includes('\u0000') || p.split('/').some((s) => s === '' || s === '.' || s === '..')) throw new Invalid('q: file: must be a relative path or directory inside the tree (no empty, "." or ".." segments)');
        out.file = p;
        break;
      }
    }
  }
  return out;
}

/** The query in one canonical form (a cursor is bound to it, whatever spacing or order the terms came in). */
export function canonicalSearch(s: SearchQuery): string {
  return JSON.stringify([s.status, s.open, s.unresolved, s.owner, s.reviewer, s.file, s.line, [...s.words].sort(), s.cc, s.topic, s.wip]);
}
