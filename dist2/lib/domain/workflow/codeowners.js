// CODEOWNERS (docs/api.md "Repository rules"): GitHub's syntax, read from the target line's head
// tree. One rule per line: a path pattern, then owners (`@name`, a person or a group); `#`
// starts a comment; a later matching line wins over an earlier one; a pattern with no owners
// leaves its paths unowned. Patterns are gitignore-like with GitHub's differences: no `!`
// negation and no `[...]` ranges (both reported as problems), and `dir/*` matches only the files
// directly in `dir`. A problem is reported with its line number and the line is skipped. Pure.
import { nameProblem } from '../text.js';
/** Where a tree may hold its CODEOWNERS file, in the order GitHub looks. */
export const CODEOWNERS_PATHS = ['CODEOWNERS', '.cairn/CODEOWNERS', 'docs/CODEOWNERS'];
/** The largest CODEOWNERS file read (GitHub's limit is 3 MB). */
export const MAX_CODEOWNERS_BYTES = 1024 * 1024;
/** Problems listed at most (the count is complete). */
export const MAX_LISTED_PROBLEMS = 50;
const escapeRe = (c) => c.replace(/[.+^${}()|[\]\\*?]/g, '\\$&');
/** The regex of one pattern, or a problem. */
export function compilePattern(raw) {
    if (raw.startsWith('!'))
        return 'negated patterns (!) are not supported in CODEOWNERS';
    if (/(^|[^\\])\[/.test(raw))
        return 'character ranges ([...]) are not supported in CODEOWNERS';
    let p = raw;
    const dirOnly = p.endsWith('/');
    if (dirOnly)
        p = p.slice(0, -1);
    const anchored = p.startsWith('/') || p.includes('/');
    if (p.startsWith('/'))
        p = p.slice(1);
    if (p === '')
        return raw === '/' ? 'the pattern "/" names no path' : 'empty pattern';
    if (p.split('/').some((s) => s === '' || s === '.' || s === '..'))
        return 'a pattern has no empty, "." or ".." segments';
    let body = '';
    for (let i = 0; i < p.length; i++) {
        const c = p[i];
        if (c === '\\' && i + 1 < p.length)
            body += escapeRe(p[++i]);
        else if (c === '*' && p[i + 1] === '*') {
            const atStart = i === 0 || p[i - 1] === '/';
            const atEnd = i + 2 === p.length;
            if (atStart && p[i + 2] === '/') {
                body += '(?:.*/)?';
                i += 2;
            }
            else if (atStart && atEnd) {
                body += '.*';
                i += 1;
            }
            else
                return '"**" must be a whole path segment';
        }
        else if (c === '*')
            body += '[^/]*';
        else if (c === '?')
            body += '[^/]';
        else
            body += escapeRe(c);
    }
    // `dir/*` owns the files directly in dir, not deeper ones (GitHub); otherwise a pattern that
    // names a directory owns everything under it.
    const directOnly = /(^|\/)\*$/.test(p) && p !== '*';
    const tail = dirOnly ? '/.*' : directOnly ? '' : '(?:/.*)?';
    return new RegExp(`^${anchored ? '' : '(?:.*/)?'}${body}${tail}$`, 's');
}
/** An owner token: `@name` (a person or a group); the name without the `@`, or a problem. */
export function ownerName(token) {
    if (!token.startsWith('@') || token.length === 1)
        return { problem: `owner "${token.slice(0, 64)}" must be @name (a person or a group; e-mail addresses are not supported)` };
    const name = token.slice(1);
    if (name.includes('@'))
        return { problem: `owner "${token.slice(0, 64)}" must be @name (a person or a group; e-mail addresses are not supported)` };
    const problem = nameProblem(name);
    return problem ? { problem: `owner name ${problem}` } : { name };
}
/** Parse a CODEOWNERS file (its text; `path` names it in messages). */
export function parseCodeOwners(text, path) {
    const out = { path, rules: [], problems: [], problem_count: 0 };
    const problem = (line, message) => {
        out.problem_count++;
        if (out.problems.length < MAX_LISTED_PROBLEMS)
            out.problems.push({ line, message });
    };
    const lines = text.split(/\r?\n/);
    for (let i = 0; i < lines.length; i++) {
        const n = i + 1;
        // A comment starts at a `#` that is not escaped.
        let line = lines[i];
        const hash = line.search(/(^|[^\\])#/);
        if (hash >= 0)
            line = line.slice(0, line[hash] === '#' ? hash : hash + 1);
        const tokens = line.trim().split(/\s+/).filter((t) => t !== '');
        if (tokens.length === 0)
            continue;
        const [pattern, ...owners] = tokens;
        const regex = compilePattern(pattern);
        if (typeof regex === 'string') {
            problem(n, `pattern "${pattern.slice(0, 200)}": ${regex}`);
            continue;
        }
        const names = [];
        let bad = false;
        for (const o of owners) {
            const r = ownerName(o);
            if ('problem' in r) {
                problem(n, r.problem);
                bad = true;
            }
            else if (!names.includes(r.name))
                names.push(r.name);
        }
        if (!bad)
            out.rules.push({ line: n, pattern, owners: names, regex });
    }
    return out;
}
/** The owners of `path`: the last matching rule's (an empty list: unowned), or null when no rule matches. */
export function ownersOf(co, path) {
    for (let i = co.rules.length - 1; i >= 0; i--) {
        const r = co.rules[i];
        if (r.regex.test(path))
            return { owners: r.owners, line: r.line };
    }
    return null;
}
//# sourceMappingURL=codeowners.js.map