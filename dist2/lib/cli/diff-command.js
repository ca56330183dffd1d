// `cairn diff`: what a change or patchset changes, as git shows it — unified text coloured on a
// terminal and sent through a pager, plain when piped, `--stat`, `--name-only`, or the JSON form.
import { spawn } from 'node:child_process';
import { CliUsageError, parseCommandArgs } from './args.js';
import { COMMON, common, context, seg } from './command-context.js';
import { unifiedFile } from '../domain/workflow/content-diff.js';
import { wordDiffLines } from '../domain/workflow/word-diff.js';
export const DIFF_HELP = `Usage: cairn diff CHANGE|PATCHSET [--against PATCHSET] [--stat | --name-only | --word-diff] [-U N] [-w | -b | --ignore-space-at-eol] [--no-renames] [PATH...]

Show what a patchset changes: base → revision (a CHANGE means its selected patchset). With
--against, what changed between two patchsets of one change ("since I last looked"). PATHs
narrow to those files or directories. On a terminal the diff is coloured and sent through
$PAGER (less -FRX by default); piped, it is plain git-style text that git apply accepts. A
file left out of the diff (too large, or past the diff's budget) is written as a binary entry
without data, which git apply refuses, so the patch never applies as a different tree: name
the other PATHs (or git apply --exclude) to apply the rest. Renames and copies are found as
git's -M -C finds them (similarity index, rename from/to: git apply accepts them); a renamed
file shows only its edited lines.

Options:
  --against PS    compare with another patchset of the same change instead of the base
  --stat          one line per file with its added and removed line counts
  --name-only     the changed paths only
  -U, --unified N lines of context (default 3, at most 1000)
  --word-diff     changed words inline, as git's --word-diff: [-removed-]{+added+}
  -w, --ignore-all-space      lines that differ only in whitespace are unchanged
  -b, --ignore-space-change   changes in the amount of whitespace (and at line ends) are no change
  --ignore-space-at-eol       whitespace at line ends is no change
  -M, --find-renames          detect renames and copies (the default)
  --no-renames    show a renamed file as a delete and an add
  --no-pager      write to stdout even on a terminal
${COMMON}`;
const COLOURS = { bold: '\u001b[1m', red: '\u001b[31m', green: '\u001b[32m', cyan: '\u001b[36m', dim: '\u001b[2m', reset: '\u001b[0m' };
/** git's colours for a unified diff. */
export function colourDiff(text) {
    const c = COLOURS;
    return text.split('\n').map((line) => {
        if (line.startsWith('diff --git') || line.startsWith('--- ') || line.startsWith('+++ ') || /^(new|deleted) file mode|^(old|new) mode/.test(line))
            return `${c.bold}${line}${c.reset}`;
        if (line.startsWith('@@'))
            return `${c.cyan}${line}${c.reset}`;
        if (line.startsWith('+'))
            return `${c.green}${line}${c.reset}`;
        if (line.startsWith('-'))
            return `${c.red}${line}${c.reset}`;
        if (line.startsWith('#') || line.startsWith('\\'))
            return `${c.dim}${line}${c.reset}`;
        return line;
    }).join('\n');
}
/** git's `--word-diff=plain` text from the JSON form: the headers of the unified form, each hunk's lines merged by their spans. */
export function wordDiffText(files) {
    return files.map((f) => unifiedFile({ ...f, hunks: f.hunks.map((h) => ({ ...h, lines: wordDiffLines(h.lines, h.spans ?? h.lines.map(() => null)) })) })).join('');
}
/** git's colours for word diff: headers bold, hunk lines cyan, removed words red, added words green. */
function colourWordDiff(text) {
    const c = COLOURS;
    let inHeader = false;
    return text.split('\n').map((line) => {
        if (line.startsWith('diff --git'))
            inHeader = true;
        if (line.startsWith('@@')) {
            inHeader = false;
            return `${c.cyan}${line}${c.reset}`;
        }
        if (inHeader)
            return `${c.bold}${line}${c.reset}`;
        return line.replace(/\[-([\s\S]*?)-\]/g, `${c.red}[-$1-]${c.reset}`).replace(/\{\+([\s\S]*?)\+\}/g, `${c.green}{+$1+}${c.reset}`);
    }).join('\n');
}
/** `git diff --stat` lines from the JSON form. */
/** git's stat name of a renamed or copied file: the common prefix and suffix outside braces (`src/{a => b}.ts`). */
export function statName(f) {
    if ((f.change !== 'renamed' && f.change !== 'copied') || !f.old_path)
        return f.path;
    const a = f.old_path;
    const b = f.path;
    let pre = 0;
    // The common leading directories, whole.
    for (let i = 0; i < Math.min(a.length, b.length) && a[i] === b[i]; i++)
        if (a[i] === '/')
            pre = i + 1;
    let suf = 0;
    // The common trailing directories and file name, starting at a slash (which may be the prefix's last one, as in git).
    for (let i = 1; i <= Math.min(a.length, b.length) - Math.max(0, pre - 1) && a[a.length - i] === b[b.length - i]; i++)
        if (a[a.length - i] === '/')
            suf = i;
    if (pre === 0 && suf === 0)
        return `${a} => ${b}`;
    const mid = (x) => x.slice(pre, Math.max(pre, x.length - suf));
    return `${a.slice(0, pre)}{${mid(a)} => ${mid(b)}}${a.slice(a.length - suf)}`;
}
export function statLines(d, width = 40) {
    const files = d.files;
    const nameWidth = Math.min(60, Math.max(0, ...files.map((f) => statName(f).length)));
    const most = Math.max(1, ...files.map((f) => (f.additions ?? 0) + (f.deletions ?? 0)));
    const rows = files.map((f) => {
        const n = (f.additions ?? 0) + (f.deletions ?? 0);
        // As git: one mark per line while the largest file fits the width, else scaled to it.
        const bar = most <= width ? n : Math.max(n > 0 ? 1 : 0, Math.round((n / most) * width));
        const plus = n === 0 ? 0 : Math.round((f.additions / n) * bar);
        // A count the server did not compute (null) is said so, never shown as 0.
        const graph = f.binary ? 'Bin' : f.additions === null || f.deletions === null ? '(not counted)' : `${n} ${'+'.repeat(plus)}${'-'.repeat(bar - plus)}`;
        return ` ${statName(f).padEnd(nameWidth)} | ${graph}`;
    });
    const s = d.stats;
    const uncounted = s.uncounted_files ? ` (${s.uncounted_files} file${s.uncounted_files === 1 ? '' : 's'} not counted)` : '';
    rows.push(` ${s.files_changed} file${s.files_changed === 1 ? '' : 's'} changed, ${s.additions} insertion${s.additions === 1 ? '' : 's'}(+), ${s.deletions} deletion${s.deletions === 1 ? '' : 's'}(-)${uncounted}`);
    return rows.join('\n');
}
/** Write `text` through $PAGER (less -FRX by default), or straight to stdout when there is no pager. */
function page(text) {
    const pager = process.env.PAGER ?? 'less';
    if (pager === '' || pager === 'cat') {
        process.stdout.write(text);
        return Promise.resolve();
    }
    return new Promise((resolve) => {
        const child = spawn('sh', ['-c', pager], { stdio: ['pipe', 'inherit', 'inherit'], env: { ...process.env, LESS: process.env.LESS ?? 'FRX' } });
        child.on('error', () => { process.stdout.write(text); resolve(); });
        child.stdin.on('error', () => undefined); // the reader quit early (q in less): not an error
        child.on('close', () => resolve());
        child.stdin.end(text);
    });
}
export async function diffCommand(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
        ...common,
        against: { type: 'string' }, stat: { type: 'boolean', default: false }, 'name-only': { type: 'boolean', default: false },
        unified: { type: 'string', short: 'U' }, 'no-pager': { type: 'boolean', default: false },
        'word-diff': { type: 'boolean', default: false },
        'ignore-all-space': { type: 'boolean', short: 'w', default: false }, 'ignore-space-change': { type: 'boolean', short: 'b', default: false }, 'ignore-space-at-eol': { type: 'boolean', default: false },
        'find-renames': { type: 'boolean', short: 'M', default: false }, 'no-renames': { type: 'boolean', default: false },
    }, true);
    if (values.help) {
        process.stdout.write(DIFF_HELP);
        return 0;
    }
    if (positionals.length === 0)
        throw new CliUsageError('give a change or a patchset (cairn diff CHANGE [PATH...])');
    if ([values.stat, values['name-only'], values['word-diff']].filter(Boolean).length > 1)
        throw new CliUsageError('give one of --stat, --name-only and --word-diff');
    const spaces = ['ignore-all-space', 'ignore-space-change', 'ignore-space-at-eol'].filter((k) => values[k]);
    if (spaces.length > 1)
        throw new CliUsageError('give one of -w, -b and --ignore-space-at-eol');
    if (values['find-renames'] && values['no-renames'])
        throw new CliUsageError('give -M or --no-renames, not both');
    const ctx = context(values);
    const [target, ...paths] = positionals;
    const q = new URLSearchParams();
    if (values.against !== undefined)
        q.set('against', String(values.against));
    if (values.unified !== undefined) {
        if (!/^\d+$/.test(String(values.unified)))
            throw new CliUsageError('-U takes a number of context lines');
        q.set('context', String(values.unified));
    }
    if (spaces.length)
        q.set('whitespace', { 'ignore-all-space': 'ignore-all', 'ignore-space-change': 'ignore-change', 'ignore-space-at-eol': 'ignore-eol' }[spaces[0]]);
    if (values['no-renames'])
        q.set('renames', 'false');
    for (const p of paths)
        q.append('path', p.replace(/\/+$/, ''));
    const isPatchset = /\.ps-[1-9][0-9]*$/.test(target);
    if (!isPatchset && values.against !== undefined)
        throw new CliUsageError('--against compares two patchsets: name the newer PATCHSET (change-3.ps-2), not a change');
    const route = ctx.client.repoPath(ctx.repo, isPatchset ? `/read/patchsets/${seg(target)}/diff` : `/read/changes/${seg(target)}/diff`);
    const query = q.size ? `?${q}` : '';
    // Unlike the other commands, a diff is text when piped (as git's); JSON only with --json.
    const json = values.json === true;
    const terminal = process.stdout.isTTY === true && !json;
    if (values['word-diff'] && !json) {
        const d = await ctx.client.json('GET', `${route}${query}`);
        // A large diff comes without its hunks among other files: ask for each such file alone (its
        // `links.diff`, the same diff narrowed to it), as the page's "Load diff" does.
        const files = d.files;
        for (let i = 0; i < files.length; i++) {
            const link = files[i].truncated_reason === 'large_diff' ? files[i].links?.diff : null;
            if (!link)
                continue;
            const one = await ctx.client.json('GET', link);
            files[i] = one.files.find((f) => f.path === files[i].path) ?? files[i];
        }
        const text = wordDiffText(files);
        if (!terminal) {
            process.stdout.write(text);
            return 0;
        }
        if (text === '') {
            process.stdout.write('no changes\n');
            return 0;
        }
        if (values['no-pager'])
            process.stdout.write(colourWordDiff(text));
        else
            await page(colourWordDiff(text));
        return 0;
    }
    if (json || values.stat || values['name-only']) {
        const d = await ctx.client.json('GET', `${route}${query}`);
        if (json && !values.stat && !values['name-only']) {
            process.stdout.write(`${JSON.stringify(d)}\n`);
            return 0;
        }
        const out = values['name-only'] ? d.files.map((f) => f.path).join('\n') : statLines(d);
        if (json)
            process.stdout.write(`${JSON.stringify({ files: d.files.map((f) => ({ path: f.path, change: f.change, ...(f.change === 'renamed' || f.change === 'copied' ? { old_path: f.old_path, similarity: f.similarity } : {}), additions: f.additions, deletions: f.deletions, binary: f.binary, truncated: f.truncated })), stats: d.stats })}\n`);
        else
            process.stdout.write(out ? `${out}\n` : '');
        return 0;
    }
    const text = await ctx.client.text(`${route}${query}`, 'text/x-diff');
    if (!terminal) {
        process.stdout.write(text);
        return 0;
    }
    if (text === '') {
        process.stdout.write('no changes\n');
        return 0;
    }
    if (values['no-pager'])
        process.stdout.write(colourDiff(text));
    else
        await page(colourDiff(text));
    return 0;
}
//# sourceMappingURL=diff-command.js.map