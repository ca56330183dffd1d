// `cairn comment …`, `cairn comments`, `cairn thread resolve|reopen`, `cairn review publish`,
// `cairn change apply-suggestions`:
// thin clients of the comment-thread routes (docs/api.md "Comment threads (extensions)"). Output
// is one JSON object with --json or when stdout is not a terminal; on a terminal a short
// readable form. The server's refusals are restated in the user's words with what to do next.
import { readFile } from 'node:fs/promises';
import { ServerError } from '../client/http.js';
import { CliUsageError, parseCommandArgs } from './args.js';
import { COMMON, common, context, one, print, seg, person } from './command-context.js';
import { colourDiff } from './diff-command.js';
export const COMMENT_HELP = `Usage:
  cairn comment CHANGE --author A -m TEXT [--path P [--line N [--end-line M] [--side base]]]
                       [--patchset PS] [--draft] [--suggest TEXT | --suggest-file F]
  cairn comment reply THREAD_OR_COMMENT --author A -m TEXT [--resolve | --reopen] [--draft]
  cairn comment edit DRAFT --author A [-m TEXT] [--suggest TEXT | --suggest-file F | --no-suggest]
  cairn comment delete DRAFT --author A

The first form opens a thread: on lines N..M of file P (--line; the revision side unless
--side base), on the file P as a whole (--path alone), or on the patchset (neither). It is
written on the change's selected patchset unless --patchset names another of its patchsets.
A new thread is unresolved. reply answers a comment (its thread carries the anchor); --resolve
or --reopen moves the thread (TEXT may then be empty: -m '').

--draft keeps the comment a draft: only "cairn comments CHANGE --author A" shows it, until
"cairn review publish CHANGE --author A" publishes every draft of A at once. The service has
no accounts: --author is the name you choose, as --reviewer is for "cairn review".

--suggest TEXT (or --suggest-file F, the file's text) suggests an edit: TEXT replaces lines
N..M of the revision (give --path and --line; "" deletes them). The change's author applies it
with "cairn change apply-suggestions CHANGE COMMENT_ID".

edit replaces the text (-m) or the suggestion of A's draft DRAFT (change-N.comment-M, as
"cairn comments CHANGE --author A" lists it; --no-suggest removes the suggestion); delete
discards it. Only drafts change: a published comment is answered with a reply, never edited.

Options:
  --author A      who writes the comment (default: who you are, cairn config set user.name)
  -m, --message TEXT  the comment, Markdown (required)
  --path P        the file the thread is on
  --line N        its first line (1-based); --end-line M its last (default N)
  --side S        revision (default) or base: the side of the diff the lines are on
  --patchset PS   the patchset to comment on (default: the change's selected patchset)
  --draft         write a draft instead of publishing
  --suggest TEXT  replacement text for the lines (a suggested edit)
  --suggest-file F  the replacement text read from file F

${COMMON}`;
export const COMMENTS_HELP = `Usage: cairn comments CHANGE [--patchset PS] [--path P] [--unresolved] [--author A]

List the change's comment threads in the order they were opened (every page). With --patchset,
each thread opened on another patchset is shown where its lines are on PS, or marked outdated
when those lines changed. --author A adds A's drafts. On a terminal: PATH:LINES, state,
outdated mark, the diff lines around the thread's lines (from the patchset's diff, coloured as
"cairn diff" colours them; plain with NO_COLOR set), then each comment's author and text, and a
suggested edit as the lines it puts in (+). An outdated thread shows the lines it was written on. Off a terminal, or with --json: the JSON of
the thread list, without the diff lines.

Options:
  --patchset PS   show threads where their anchors land on this patchset of the change
  --path P        only threads on file P
  --unresolved    only unresolved threads
  --author A      include A's drafts

${COMMON}`;
export const APPLY_HELP = `Usage: cairn change apply-suggestions CHANGE COMMENT_ID... --author A [--summary S]

Apply suggested edits (comments written with "cairn comment … --suggest") as a new patchset of
the change: the server replaces each suggestion's lines in the current patchset's revision,
records whose suggestion each was on the new patchset, and resolves the applied threads — one
commit. Only the change's author applies (the author of its current patchset, when it names
one). Each COMMENT_ID must be a published suggestion on the current patchset; suggestions on
overlapping lines of one file are applied one at a time. The new patchset is not selected:
select it with the land flow as any pushed patchset.

Options:
  --author A      who applies (the change's author; default: who you are)
  --summary S     the new patchset's summary (default: "Apply suggestions" and the ids)

${COMMON}`;
export const THREAD_HELP = `Usage: cairn thread resolve|reopen THREAD --author A [-m TEXT]

Resolve a thread (or reopen a resolved one) by replying to its last comment, with TEXT as the
reply (optional). THREAD is the thread's first comment, as "cairn comments CHANGE" lists it
(change-N.comment-M).

Options:
  --author A      who resolves or reopens (default: who you are)
  -m, --message TEXT  a reply to go with it

${COMMON}`;
export const PUBLISH_HELP = `Usage: cairn review publish CHANGE --author A [--approve | --request-changes | --comment] [-m TEXT]

Publish every draft comment A has on the change and, with a vote, record it as A's review of
the change's selected patchset — all at once. -m is the vote's message (it needs a vote).

Options:
  --author A          whose drafts to publish (required)
  --approve           vote approve
  --request-changes   vote request changes
  --comment           a review that is only a comment (-m)
  -m, --message TEXT  the vote's message

${COMMON}`;
/** `change-N.comment-M` → `change-N`: a thread or comment id names its change. */
function changeOfComment(id) {
    const m = /^(change-[1-9][0-9]*)\.comment-[1-9][0-9]*$/.exec(id);
    if (!m)
        throw new CliUsageError(`"${id}" is not a comment id: write it as change-N.comment-M, as "cairn comments CHANGE" lists it`);
    return m[1];
}
/** A server refusal restated: `hints` maps an HTTP status to the user's words (the server's reason follows). */
async function explained(work, hints) {
    try {
        return await work();
    }
    catch (err) {
        if (err instanceof ServerError && hints[err.status]) {
            const reason = err.body?.error;
            throw new Error(`${hints[err.status]}${reason && !hints[err.status].includes(reason) ? ` (server: ${reason})` : ''}`);
        }
        throw err;
    }
}
const changeMissing = (change) => `no change ${change} in this repository (list them with: cairn change list)`;
async function selectedPatchset(ctx, change) {
    const res = await explained(() => ctx.client.json('GET', ctx.client.repoPath(ctx.repo, `/changes/${seg(change)}`)), { 404: changeMissing(change) });
    const ps = res.change.selected_patchset_id;
    if (!ps)
        throw new Error(`change ${change} has no patchset yet (push one with: cairn patchset push --change ${change} DIR)`);
    return ps;
}
const lines = (a) => {
    if (a.kind === 'patchset')
        return '(patchset)';
    if (a.kind === 'file')
        return a.path;
    return `${a.path}:${a.line}${a.end_line !== null && a.end_line !== a.line ? `-${a.end_line}` : ''}${a.side === 'base' ? ' (base)' : ''}`;
};
const indent = (text) => text.split('\n').map((l) => `    ${l}`).join('\n');
/** A suggested edit as git shows a replacement: the new lines with `+` (an empty one deletes the lines). */
const suggestionText = (c, colour) => {
    if (typeof c.suggestion !== 'string')
        return [];
    const text = c.suggestion.endsWith('\n') ? c.suggestion.slice(0, -1) : c.suggestion;
    const added = c.suggestion === '' ? [] : text.split('\n').map((l) => `+${l}`);
    return [`    suggested replacement for ${lines(c.anchor)}${added.length ? ':' : ': delete the lines'}`, ...added.map((l) => `      ${colour ? colourDiff(l) : l}`)];
};
const commentText = (c, colour = false) => [
    `  ${c.author}${c.published ? '' : ' [draft]'}${c.resolution ? ` (${c.resolution === 'resolved' ? 'resolves' : 'reopens'})` : ''}  ${c.comment_id}${c.body ? `\n${indent(c.body)}` : ''}`,
    ...suggestionText(c, colour),
].join('\n');
const threadText = (t, around, colour = false) => [
    `${lines(t.anchor)}  ${t.resolution}${t.outdated ? ` [outdated: ${String(t.outdated_reason).replace(/_/g, ' ')}]` : ''}${t.draft ? ' [draft]' : ''}  ${t.thread_id}`,
    ...(around === undefined ? [] : around.length === 0 ? ['    (these lines are not in the diff: unchanged, away from any change)'] : around.map((l) => `    ${colour ? colourDiff(l) : l}`)),
    ...t.comments.map((c) => commentText(c, colour)),
].join('\n');
const written = (res) => `${res.comment.published ? 'wrote' : 'drafted'} ${res.comment.comment_id} on ${lines(res.comment.anchor)}; thread ${res.thread_id} is ${res.resolution}`;
function intArg(value, flag) {
    if (value === undefined)
        return undefined;
    const n = Number(value);
    if (typeof value !== 'string' || !/^[1-9][0-9]*$/.test(value) || !Number.isSafeInteger(n))
        throw new CliUsageError(`${flag} must be a line number (1 or more)`);
    return n;
}
function message(values, allowEmpty) {
    if (typeof values.message !== 'string')
        throw new CliUsageError('-m TEXT is required');
    if (!allowEmpty && values.message.trim() === '')
        throw new CliUsageError('-m TEXT must not be empty');
    return values.message;
}
const textOptions = { author: { type: 'string' }, message: { type: 'string', short: 'm' } };
const suggestOptions = { suggest: { type: 'string' }, 'suggest-file': { type: 'string' } };
/** The suggestion --suggest or --suggest-file gives (undefined: neither). */
async function suggestion(values) {
    if (values.suggest !== undefined && values['suggest-file'] !== undefined)
        throw new CliUsageError('give --suggest or --suggest-file, not both');
    if (typeof values.suggest === 'string')
        return values.suggest;
    if (typeof values['suggest-file'] !== 'string')
        return undefined;
    try {
        return await readFile(values['suggest-file'], 'utf8');
    }
    catch (err) {
        throw new CliUsageError(`--suggest-file ${values['suggest-file']}: ${err.code ?? err.message}`);
    }
}
/** `cairn comment edit|delete DRAFT …`: the author's own draft, rewritten or discarded. */
async function draftCommand(sub, argv) {
    const { values, positionals } = parseCommandArgs(argv, { ...common, ...textOptions, ...suggestOptions, 'no-suggest': { type: 'boolean', default: false } }, true);
    if (values.help) {
        process.stdout.write(COMMENT_HELP);
        return 0;
    }
    const ctx = context(values);
    const author = person(values.author, '--author');
    const id = one(positionals, 'DRAFT');
    const change = changeOfComment(id);
    const hints = {
        404: `${author} has no draft ${id} in change ${change} (list A's drafts with: cairn comments ${change} --author ${author})`,
        409: `comment ${id} is published: published comments are not edited or deleted; answer it with: cairn comment reply ${id}`,
    };
    const at = ctx.client.repoPath(ctx.repo, `/changes/${seg(change)}/comments/${seg(id)}`);
    if (sub === 'delete') {
        if (values.message !== undefined || values.suggest !== undefined || values['suggest-file'] !== undefined || values['no-suggest'])
            throw new CliUsageError('delete takes no -m or --suggest (it discards the draft)');
        const res = await explained(() => ctx.client.json('DELETE', `${at}?${new URLSearchParams({ author })}`), hints);
        return print(ctx, res, () => `deleted draft ${res.deleted}`);
    }
    const body = { author };
    if (values.message !== undefined)
        body.body = message(values, false);
    const suggest = await suggestion(values);
    if (suggest !== undefined && values['no-suggest'])
        throw new CliUsageError('give --suggest or --no-suggest, not both');
    if (suggest !== undefined)
        body.suggestion = suggest;
    if (values['no-suggest'])
        body.suggestion = null;
    if (Object.keys(body).length === 1)
        throw new CliUsageError('edit needs -m TEXT, --suggest TEXT, --suggest-file F or --no-suggest');
    const res = await explained(() => ctx.client.json('PATCH', at, body), hints);
    return print(ctx, res, () => `edited draft ${res.comment.comment_id} on ${lines(res.comment.anchor)}`);
}
export async function commentCommand(argv) {
    if (!argv.length) {
        process.stdout.write(COMMENT_HELP);
        return 2;
    }
    if (argv[0] === 'edit' || argv[0] === 'delete')
        return draftCommand(argv[0], argv.slice(1));
    const isReply = argv[0] === 'reply';
    const { values, positionals } = parseCommandArgs(isReply ? argv.slice(1) : argv, {
        ...common, ...textOptions, draft: { type: 'boolean', default: false },
        path: { type: 'string' }, line: { type: 'string' }, 'end-line': { type: 'string' }, side: { type: 'string' }, patchset: { type: 'string' },
        resolve: { type: 'boolean', default: false }, reopen: { type: 'boolean', default: false }, ...suggestOptions,
    }, true);
    if (values.help) {
        process.stdout.write(COMMENT_HELP);
        return 0;
    }
    const ctx = context(values);
    const author = person(values.author, '--author');
    if (isReply) {
        for (const flag of ['path', 'line', 'end-line', 'side']) {
            if (values[flag] !== undefined)
                throw new CliUsageError(`a reply carries its thread's place: --${flag} is for a new thread`);
        }
        if (values.resolve && values.reopen)
            throw new CliUsageError('give --resolve or --reopen, not both');
        if (values.suggest !== undefined || values['suggest-file'] !== undefined)
            throw new CliUsageError('a suggestion goes on a new thread on lines (--path, --line), not on a reply');
        const target = one(positionals, 'THREAD_OR_COMMENT');
        const change = changeOfComment(target);
        const body = { author, body: message(values, values.resolve === true || values.reopen === true), in_reply_to: target, draft: values.draft === true };
        if (values.resolve)
            body.resolution = 'resolved';
        if (values.reopen)
            body.resolution = 'unresolved';
        if (values.patchset !== undefined)
            body.patchset_id = values.patchset;
        const res = await explained(() => ctx.client.json('POST', ctx.client.repoPath(ctx.repo, `/changes/${seg(change)}/comments`), body), {
            404: `no comment ${target} in change ${change} (list its threads with: cairn comments ${change})`,
        });
        return print(ctx, res, () => written(res));
    }
    if (values.resolve || values.reopen)
        throw new CliUsageError('--resolve and --reopen go with "cairn comment reply" (a new thread opens unresolved)');
    const change = one(positionals, 'CHANGE');
    const line = intArg(values.line, '--line');
    const endLine = intArg(values['end-line'], '--end-line');
    if (line === undefined && (endLine !== undefined || values.side !== undefined))
        throw new CliUsageError('--end-line and --side go with --line');
    if (line !== undefined && values.path === undefined)
        throw new CliUsageError('--line needs --path (the file the lines are in)');
    if (values.side !== undefined && values.side !== 'base' && values.side !== 'revision')
        throw new CliUsageError('--side must be base or revision');
    if (line !== undefined && endLine !== undefined && endLine < line)
        throw new CliUsageError('--end-line must not be before --line');
    const text = message(values, false);
    const suggest = await suggestion(values);
    if (suggest !== undefined && (line === undefined || values.side === 'base'))
        throw new CliUsageError('--suggest replaces lines of the revision: give --path and --line (not --side base)');
    const patchset = typeof values.patchset === 'string' ? values.patchset : await selectedPatchset(ctx, change);
    const body = { author, body: text, patchset_id: patchset, draft: values.draft === true };
    if (suggest !== undefined)
        body.suggestion = suggest;
    if (values.path !== undefined) {
        body.anchor = { path: values.path };
        if (line !== undefined)
            Object.assign(body.anchor, { line, end_line: endLine ?? null, side: values.side ?? 'revision' });
    }
    const res = await explained(() => ctx.client.json('POST', ctx.client.repoPath(ctx.repo, `/changes/${seg(change)}/comments`), body), {
        404: `no change ${change} or no patchset ${patchset} in it (list them with: cairn change show ${change})`,
    });
    return print(ctx, res, () => written(res));
}
export async function commentsCommand(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
        ...common, patchset: { type: 'string' }, path: { type: 'string' }, unresolved: { type: 'boolean', default: false }, author: { type: 'string' },
    }, true);
    if (values.help) {
        process.stdout.write(COMMENTS_HELP);
        return 0;
    }
    if (!positionals.length) {
        process.stdout.write(COMMENTS_HELP);
        return 2;
    }
    const ctx = context(values);
    const change = one(positionals, 'CHANGE');
    const q = new URLSearchParams();
    if (typeof values.patchset === 'string')
        q.set('patchset', values.patchset);
    if (typeof values.path === 'string')
        q.set('path', values.path);
    if (values.unresolved)
        q.set('resolved', 'false');
    if (typeof values.author === 'string')
        q.set('author', values.author);
    const query = q.toString() ? `?${q}` : '';
    const res = await explained(() => ctx.client.collect(ctx.client.repoPath(ctx.repo, `/changes/${seg(change)}/threads${query}`), 'threads', Infinity), {
        404: typeof values.patchset === 'string' ? `no change ${change} or no patchset ${values.patchset} in it (list them with: cairn change show ${change})` : changeMissing(change),
    });
    // The diff lines around each line thread are fetched only for the readable form.
    const around = ctx.json ? new Map() : await diffContext(ctx, res);
    const colour = process.env.NO_COLOR === undefined || process.env.NO_COLOR === '';
    return print(ctx, res, () => [
        `${res.change_ref}: ${res.unresolved} unresolved thread(s)${res.patchset_id ? `, shown on ${res.patchset_id}` : ''}${res.threads.length ? '' : '; none listed'}`,
        ...res.threads.map((t) => `\n${threadText(t, around.get(t.thread_id), colour)}`),
    ].join('\n'));
}
/** Lines of diff shown on each side of a thread's lines. */
const CONTEXT_LINES = 2;
/** At most this many files get diff lines (one diff request per patchset names them all). */
const MAX_CONTEXT_FILES = 50;
/** Where a thread's lines are: on the listed patchset, or (outdated, or no patchset asked) where it was written. */
function placeOf(t, listedOn) {
    const ps = t.outdated || !listedOn ? t.patchset_id : listedOn;
    const anchor = t.outdated ? t.original_anchor : t.anchor;
    return anchor.kind === 'lines' ? { ps, anchor } : null;
}
/**
 * For each line thread of `res`, the diff lines of its patchset around its lines, formatted
 * `±NUMBER TEXT` (NUMBER on the thread's side): one diff request per patchset for the threads'
 * files (at most MAX_CONTEXT_FILES in all). A thread whose lines the diff does not show
 * (unchanged lines away from any hunk) gets a note instead; a failed diff request, nothing.
 */
async function diffContext(ctx, res) {
    const out = new Map();
    const byPs = new Map();
    let files = 0;
    for (const t of res.threads) {
        const p = placeOf(t, res.patchset_id);
        if (!p)
            continue;
        const set = byPs.get(p.ps) ?? new Set();
        if (!set.has(p.anchor.path)) {
            if (files >= MAX_CONTEXT_FILES)
                continue;
            files++;
            set.add(p.anchor.path);
        }
        byPs.set(p.ps, set);
    }
    const diffs = new Map();
    for (const [ps, paths] of byPs) {
        const q = new URLSearchParams({ context: String(CONTEXT_LINES + 1) });
        for (const p of paths)
            q.append('path', p);
        try {
            const d = await ctx.client.json('GET', ctx.client.repoPath(ctx.repo, `/read/patchsets/${seg(ps)}/diff?${q}`));
            diffs.set(ps, new Map(d.files.map((f) => [f.path, f])));
        }
        catch {
            // The threads are still listed; only their diff lines are missing.
        }
    }
    for (const t of res.threads) {
        const p = placeOf(t, res.patchset_id);
        const file = p ? diffs.get(p.ps)?.get(p.anchor.path) : undefined;
        if (!p || !diffs.has(p.ps) || !byPs.get(p.ps)?.has(p.anchor.path))
            continue;
        out.set(t.thread_id, file ? linesAround(file, p.anchor) : []);
    }
    return out;
}
/** The diff lines of `file` within CONTEXT_LINES of the anchor's lines on its side. */
export function linesAround(file, anchor) {
    const first = anchor.line - CONTEXT_LINES;
    const last = (anchor.end_line ?? anchor.line) + CONTEXT_LINES;
    const shown = [];
    for (const h of (file.hunks ?? [])) {
        // Git's numbering: a hunk of no lines on a side starts after that line.
        let o = h.old_lines === 0 ? h.old_start + 1 : h.old_start;
        let n = h.new_lines === 0 ? h.new_start + 1 : h.new_start;
        for (const l of h.lines) {
            const sign = l[0];
            if (sign === '\\')
                continue;
            // Lines of the other side sit where they fall among this side's lines (as the diff interleaves them).
            const onSide = sign === ' ' || (sign === '-') === (anchor.side === 'base');
            const pos = anchor.side === 'base' ? o : n;
            if (pos >= first && pos <= last)
                shown.push(`${sign}${onSide ? String(pos).padStart(5) : ' '.repeat(5)} ${l.slice(1)}`);
            if (sign !== '+')
                o++;
            if (sign !== '-')
                n++;
        }
    }
    return shown;
}
export async function threadCommand(argv) {
    const sub = argv[0];
    if (!sub) {
        process.stdout.write(THREAD_HELP);
        return 2;
    }
    if (sub === '--help' || sub === '-h') {
        process.stdout.write(THREAD_HELP);
        return 0;
    }
    const { values, positionals } = parseCommandArgs(argv.slice(1), { ...common, ...textOptions }, true);
    if (values.help) {
        process.stdout.write(THREAD_HELP);
        return 0;
    }
    if (sub !== 'resolve' && sub !== 'reopen')
        throw new CliUsageError(`unknown thread subcommand "${sub}" (resolve, reopen)`);
    const ctx = context(values);
    const author = person(values.author, '--author');
    const thread = one(positionals, 'THREAD');
    const change = changeOfComment(thread);
    const body = { author };
    if (typeof values.message === 'string' && values.message !== '')
        body.body = values.message;
    const res = await explained(() => ctx.client.json('POST', ctx.client.repoPath(ctx.repo, `/changes/${seg(change)}/threads/${seg(thread)}:${sub}`), body), {
        404: `no thread ${thread} in change ${change} (list its threads with: cairn comments ${change})`,
        409: `thread ${thread} is already ${sub === 'resolve' ? 'resolved' : 'unresolved'}: nothing to do`,
    });
    return print(ctx, res, () => `${sub === 'resolve' ? 'resolved' : 'reopened'} thread ${res.thread_id} (${res.comment.comment_id})`);
}
/** `cairn review publish CHANGE …` (reached from `cairn review`). */
export async function publishCommand(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
        ...common, ...textOptions, approve: { type: 'boolean', default: false }, 'request-changes': { type: 'boolean', default: false }, comment: { type: 'boolean', default: false },
    }, true);
    if (values.help) {
        process.stdout.write(PUBLISH_HELP);
        return 0;
    }
    const ctx = context(values);
    const author = person(values.author, '--author');
    const change = one(positionals, 'CHANGE');
    const votes = ['approve', 'request-changes', 'comment'].filter((v) => values[v] === true);
    if (votes.length > 1)
        throw new CliUsageError('give one vote: --approve, --request-changes or --comment');
    if (typeof values.message === 'string' && !votes.length)
        throw new CliUsageError('-m is the vote\'s message: give --approve, --request-changes or --comment with it');
    const body = { author, patchset_id: await selectedPatchset(ctx, change) };
    if (votes.length)
        body.action = votes[0].replace('-', '_');
    if (typeof values.message === 'string')
        body.comment = values.message;
    const res = await explained(() => ctx.client.json('POST', ctx.client.repoPath(ctx.repo, `/changes/${seg(change)}/reviews:publish`), body), {
        404: changeMissing(change),
    });
    return print(ctx, res, () => [
        `published ${res.published.length} draft(s) of ${author}${res.review ? `; recorded ${res.review.action} on ${res.review.patchset_id}` : ''}`,
        ...res.published.map((c) => `  ${c.comment_id} on ${lines(c.anchor)}`),
    ].join('\n'));
}
/** `cairn change apply-suggestions CHANGE COMMENT_ID…` (reached from `cairn change`). */
export async function applySuggestionsCommand(argv) {
    const { values, positionals } = parseCommandArgs(argv, { ...common, author: { type: 'string' }, summary: { type: 'string' } }, true);
    if (values.help) {
        process.stdout.write(APPLY_HELP);
        return 0;
    }
    if (!positionals.length) {
        process.stdout.write(APPLY_HELP);
        return 2;
    }
    const ctx = context(values);
    const author = person(values.author, '--author');
    const [change, ...ids] = positionals;
    if (!ids.length)
        throw new CliUsageError('name at least one COMMENT_ID to apply (list the threads with: cairn comments CHANGE)');
    for (const id of ids) {
        if (changeOfComment(id) !== change && !change.endsWith(`.${changeOfComment(id)}`))
            throw new CliUsageError(`comment ${id} is not a comment of ${change}`);
    }
    const body = { author, comment_ids: ids };
    if (typeof values.summary === 'string')
        body.summary = values.summary;
    const res = await explained(() => ctx.client.json('POST', ctx.client.repoPath(ctx.repo, `/changes/${seg(change)}/patchsets:applySuggestions`), body), {
        403: `only the change's author applies its suggestions`,
        404: changeMissing(change),
        409: 'these suggestions overlap (or the change moved on): apply them one at a time',
    });
    return print(ctx, res, () => [
        `created ${res.patchset.patchset_id} applying ${res.applied.length} suggestion(s)`,
        ...res.applied.map((x) => `  ${x.comment_id} by ${x.author} on ${x.path}:${x.line}${x.end_line !== null ? `-${x.end_line}` : ''}${x.resolved_by ? `; thread ${x.thread_id} resolved` : ''}`),
    ].join('\n'));
}
//# sourceMappingURL=comment-commands.js.map