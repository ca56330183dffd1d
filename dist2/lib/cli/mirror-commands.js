// `cairn mirror add|list|status|remove|resume`: thin clients of the git mirror routes
// (extensions, docs/git.md "Mirror"). Output is one JSON object with --json or when stdout is not
// a terminal; on a terminal a readable form. A refusal of the server is told with what to do next
// (exit 1); a bad option is a usage error (exit 2).
import { ServerError } from '../client/http.js';
import { CliUsageError, parseCommandArgs } from './args.js';
import { COMMON, common, context, one, print, seg } from './command-context.js';
import { table, when } from './output.js';
export const MIRROR_HELP = `Usage:
  cairn mirror add LINE URL [--credential NAME]   (cairn mirror add --help)
  cairn mirror list                                             (cairn mirror list --help)
  cairn mirror status [MIRROR]                                  (cairn mirror status --help)
  cairn mirror remove MIRROR                                    (cairn mirror remove --help)
  cairn mirror resume MIRROR                                    (cairn mirror resume --help)

A git mirror pushes a line, as git commits (the same ids as cairn export-git), to a git remote
after each move: branch LINE of URL follows the line. A remote someone else pushed to is never
forced: the mirror stops as "diverged" until it is resumed (docs/git.md "Mirror").
MIRROR is a mirror id (mirror-2).
Exit codes: 0 ok, 1 the server refused (the reason is printed), 2 usage; cairn mirror status
exits 1 when a mirror it shows is diverged.

${COMMON}`;
const ADD_HELP = `Usage:
  cairn mirror add LINE URL [--credential NAME]

Mirror line LINE to the git remote URL (https://host/org/repo.git) as its branch LINE. The
server pushes in the background after each move of the line, and once now.

  --credential NAME  the remote's token: the name of a credential the server's operator
                     granted (cairn serve --git-mirror-credential NAME=env:VAR), open to this
                     repository and the URL's host. The token itself is never sent to or
                     shown by cairn; it goes to git as HTTP basic auth (user: the URL's user
                     name, or x-access-token)

URLs with a password (user:pass@) are refused; file:// URLs only under the server's
--git-mirror-file-root; internal addresses only when --git-mirror-allow opens them.

${COMMON}`;
const LIST_HELP_TEXT = `Usage:
  cairn mirror list

Every mirror of the repository: its line, remote, state and the commit pushed last.

${COMMON}`;
const STATUS_HELP = `Usage:
  cairn mirror status [MIRROR]

The state of one mirror (or every mirror): ok (the remote is at the commit pushed last),
pending (no push finished yet), retrying (the last push failed: the error and when the next
runs), diverged (the remote holds a commit that is not the line's: why, and how to resume).
Exits 1 when a mirror shown is diverged.

${COMMON}`;
const REMOVE_HELP = `Usage:
  cairn mirror remove MIRROR

Stop mirroring: nothing more is pushed (the remote keeps what it has).

${COMMON}`;
const RESUME_HELP = `Usage:
  cairn mirror resume MIRROR

Push again now. For a diverged mirror, first put the remote right (reset its branch to one of
the line's commits, or delete it): the mirror forgets what it pushed before and pushes as it did
the first time; a remote still holding a foreign commit diverges again.

${COMMON}`;
const SUB_HELP = { add: ADD_HELP, list: LIST_HELP_TEXT, status: STATUS_HELP, remove: REMOVE_HELP, resume: RESUME_HELP };
const short = (id) => (id ? id.slice(0, 12) : '-');
function stateText(m) {
    if (m.state === 'retrying')
        return `retrying (${m.failures} failed)`;
    return m.state === 'diverged' ? 'DIVERGED' : m.state;
}
function listText(res) {
    if (res.mirrors.length === 0)
        return 'no git mirrors; add one with `cairn mirror add LINE URL`';
    return table([
        ['MIRROR', 'LINE', 'STATE', 'PUSHED', 'URL'],
        ...res.mirrors.map((m) => [m.mirror_id, m.line, stateText(m), short(m.last_pushed_commit_id), m.url]),
    ]);
}
function statusText(m) {
    const lines = [
        `${m.mirror_id}: line ${m.line} -> ${m.url} (branch ${m.line})`,
        `  state:        ${stateText(m)}`,
        `  pushed:       ${m.last_pushed_commit_id ?? '-'}${m.last_pushed_at_s ? ` at ${when(m.last_pushed_at_s)}` : ''}`,
    ];
    if (m.credential)
        lines.push(`  credential:   ${m.credential}`);
    if (m.state === 'retrying')
        lines.push(`  next attempt: ${m.next_attempt_at_ms ? new Date(m.next_attempt_at_ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '-'}`);
    if (m.last_error)
        lines.push(`  ${`${m.state === 'diverged' ? 'why' : 'last error'}:`.padEnd(14)}${m.last_error}`);
    if (m.state === 'diverged') {
        lines.push(`  remote is at: ${m.diverged_remote_commit_id ?? '(branch deleted)'}${m.diverged_at_s ? ` (seen ${when(m.diverged_at_s)})` : ''}`);
        lines.push(`  to resume:    put the remote's branch ${m.line} back on one of the line's commits (or delete it), then \`cairn mirror resume ${m.mirror_id}\``);
    }
    return lines.join('\n');
}
function explain(err, mirror) {
    if (!(err instanceof ServerError))
        throw err;
    const msg = err.body?.error ?? err.message;
    const tail = ` (HTTP ${err.status})`;
    if (err.status === 404 && mirror && /git mirror/.test(msg))
        throw new Error(`no git mirror ${mirror} in this repository${tail}; \`cairn mirror list\` shows them`);
    if (err.status === 404 && /line/.test(msg))
        throw new Error(`${msg}${tail}; \`cairn lines\` lists the lines`);
    throw new Error(`${msg}${tail}`);
}
async function call(ctx, method, rest, body, mirror) {
    try {
        return await ctx.client.json(method, ctx.client.repoPath(ctx.repo, rest), body);
    }
    catch (err) {
        return explain(err, mirror);
    }
}
export async function mirrorCommand(argv) {
    const sub = argv[0];
    if (!sub) {
        process.stdout.write(MIRROR_HELP);
        return 2;
    }
    if (sub === '--help' || sub === '-h') {
        process.stdout.write(MIRROR_HELP);
        return 0;
    }
    if (!(sub in SUB_HELP))
        throw new CliUsageError(`unknown mirror subcommand "${sub}" (add, list, status, remove, resume)`);
    const { values, positionals } = parseCommandArgs(argv.slice(1), { ...common, credential: { type: 'string' } }, true);
    if (values.help) {
        process.stdout.write(SUB_HELP[sub]);
        return 0;
    }
    const credential = values.credential;
    if (sub !== 'add' && credential !== undefined)
        throw new CliUsageError(`mirror ${sub} takes no --credential`);
    if (sub === 'add') {
        if (positionals.length !== 2)
            throw new CliUsageError('give LINE and URL');
        const [line, url] = positionals;
        const ctx = context(values);
        const res = await call(ctx, 'POST', '/git-mirrors', credential === undefined ? { line, url } : { line, url, credential });
        const m = res.mirror;
        return print(ctx, res, () => `added ${m.mirror_id}: line ${m.line} -> ${m.url}; the first push runs now (follow it with \`cairn mirror status ${m.mirror_id}\`)`);
    }
    if (sub === 'list') {
        if (positionals.length)
            throw new CliUsageError('mirror list takes no positional arguments');
        const ctx = context(values);
        const res = await call(ctx, 'GET', '/git-mirrors', undefined);
        return print(ctx, res, () => listText(res));
    }
    if (sub === 'status') {
        if (positionals.length > 1)
            throw new CliUsageError('give at most one MIRROR');
        const ctx = context(values);
        const mirrors = positionals.length ? [(await call(ctx, 'GET', `/git-mirrors/${seg(positionals[0])}`, undefined, positionals[0])).mirror] : (await call(ctx, 'GET', '/git-mirrors', undefined)).mirrors;
        const value = positionals.length ? { mirror: mirrors[0] } : { mirrors, count: mirrors.length };
        print(ctx, value, () => (mirrors.length ? mirrors.map(statusText).join('\n\n') : 'no git mirrors'));
        return mirrors.some((m) => m.state === 'diverged') ? 1 : 0;
    }
    const mirror = one(positionals, 'MIRROR');
    const ctx = context(values);
    if (sub === 'remove') {
        const res = await call(ctx, 'DELETE', `/git-mirrors/${seg(mirror)}`, undefined, mirror);
        return print(ctx, res, () => `removed ${res.mirror_id}: nothing more is pushed (the remote keeps what it has)`);
    }
    const res = await call(ctx, 'POST', `/git-mirrors/${seg(mirror)}:resume`, undefined, mirror);
    return print(ctx, res, () => `resumed ${res.mirror.mirror_id}: it pushes again now (follow it with \`cairn mirror status ${res.mirror.mirror_id}\`)`);
}
//# sourceMappingURL=mirror-commands.js.map