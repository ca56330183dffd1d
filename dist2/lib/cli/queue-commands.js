// `cairn queue add|list|show|remove`: thin clients of the land-queue routes (extensions,
// docs/land-queue.md). Output is one JSON object with --json or when stdout is not a terminal; on
// a terminal a readable form. A refusal of the server is told in the user's words with what to
// do next (exit 1); a bad option is a usage error (exit 2).
import { ServerError } from '../client/http.js';
import { CliUsageError, parseCommandArgs } from './args.js';
import { COMMON, common, context, one, print, seg } from './command-context.js';
import { short, table, when } from './output.js';
export const QUEUE_HELP = `Usage:
  cairn queue add CHANGE [--mode merge|direct] [--line LINE] [--bypass]   (cairn queue add --help)
  cairn queue list [--line LINE]                                (cairn queue list --help)
  cairn queue show ENTRY                                        (cairn queue show --help)
  cairn queue remove ENTRY                                      (cairn queue remove --help)

The land queue tests what will land: the line's head with every entry ahead merged in, then the
change, and lands each change in order onto the exact head its CI tested (docs/land-queue.md).
CHANGE is a change id (change-3) or its full ref (task-1.change-3); ENTRY is an entry id (lq-4).
Exit codes: 0 ok, 1 the server refused (the reason and what to do are printed), 2 usage.

${COMMON}`;
const ADD_HELP = `Usage:
  cairn queue add CHANGE [--mode merge|direct] [--line LINE] [--bypass]

Put the change's selected patchset in the land queue of LINE (default: the change's target
line). Its gates must pass but for CI, which the queue runs on the merged result: an attestation
and the reviews the policy asks for, and no blocking review. --mode defaults to merge; direct
lands the patchset's changes as one commit on the tested head. (ff-only has nothing to test, so
it is not a queue mode: use cairn land.) --bypass queues it despite failing gates and rules, when
you are in the repository's bypass_allowed rule (cairn repo rules); its land records the bypass.

${COMMON}`;
const LIST_HELP_TEXT = `Usage:
  cairn queue list [--line LINE]

The active entries in queue order (per line), with their state, their CI (the job testing the
speculative snapshot, and its verdict) and a stall mark; then the finished entries, newest first
(landed, ejected with the reason, removed).

${COMMON}`;
const SHOW_HELP = `Usage:
  cairn queue show ENTRY

One entry: its change and patchset, state and position, the speculation (the base it starts
from, the snapshot that lands, the entries ahead), the CI jobs and verdict, whether it passed on
a retry, and for an ejected entry the evidence (failing jobs and suites, conflicting paths).

${COMMON}`;
const REMOVE_HELP = `Usage:
  cairn queue remove ENTRY

Take a queued or testing entry out of the queue (its queued CI jobs end; the entries behind it
are tested again without it). A finished entry cannot be removed.

${COMMON}`;
const SUB_HELP = { add: ADD_HELP, list: LIST_HELP_TEXT, show: SHOW_HELP, remove: REMOVE_HELP };
const MODES = ['merge', 'direct'];
/** The state column: the state, and for a finished entry what ended it. */
function stateText(e) {
    if (e.state === 'ejected' && e.ejection)
        return `ejected: ${e.ejection.reason}`;
    return e.state;
}
/** "pass #12", "pending #13 (running)", "reused #7", "-". */
function ciText(e) {
    const c = e.ci;
    if (!c)
        return '-';
    const job = c.worker_job_index === null ? '' : ` #${c.worker_job_index}`;
    const state = c.job_state && c.verdict === 'pending' ? ` (${c.job_state})` : '';
    const runs = c.runs > 1 ? `, ${c.runs} runs` : '';
    return `${c.reused ? 'reused ' : ''}${c.verdict}${job}${state}${runs}`;
}
/** The evidence of an ejection in a few words: the failing suites, the conflicting paths, or the message. */
function ejectionSummary(x) {
    if (x.failing_suites.length)
        return `failing suites: ${x.failing_suites.join(', ')}${x.worker_job_indexes.length ? ` (job ${x.worker_job_indexes.map((j) => `#${j}`).join(', ')})` : ''}`;
    if (x.conflict_paths.length)
        return `conflicts: ${x.conflict_paths.slice(0, 3).join(', ')}${x.conflict_paths.length > 3 ? ', …' : ''}`;
    return x.message;
}
function listText(res) {
    const out = [];
    if (res.entries.length === 0)
        out.push(`the land queue${res.target_line ? ` of ${res.target_line}` : ''} is empty`);
    else {
        out.push(table([
            ['POS', 'ENTRY', 'CHANGE', 'LINE', 'MODE', 'STATE', 'CI', ''],
            ...res.entries.map((e) => [String(e.position ?? '-'), e.entry_id, e.change_ref, e.target_line, e.mode, stateText(e), ciText(e), e.stalled ? `STALLED ${e.stalled.since_s}s` : '']),
        ]));
    }
    if (res.recent.length) {
        out.push('', 'recently finished:');
        out.push(table([
            ['ENTRY', 'CHANGE', 'LINE', 'STATE', 'FINISHED', 'DETAIL'],
            ...res.recent.map((e) => [e.entry_id, e.change_ref, e.target_line, stateText(e), when(e.finished_at_s),
                e.state === 'landed' ? `${e.land_id ?? ''} ${short(e.landed_snapshot_id)}${e.passed_on_retry ? ' (passed on retry)' : ''}` : e.ejection ? ejectionSummary(e.ejection) : '']),
        ]));
    }
    return out.join('\n').replace(/ +$/gm, '');
}
function showText(e) {
    const lines = [
        `${e.entry_id}: ${e.change_ref} (${e.patchset_id}) onto ${e.target_line}, ${e.mode}`,
        `  state:        ${stateText(e)}${e.position !== null ? `, position ${e.position}` : ''}`,
        `  queued:       ${when(e.enqueued_at_s)}${e.finished_at_s ? `; finished ${when(e.finished_at_s)}` : ''}`,
    ];
    const s = e.speculation;
    if (s) {
        lines.push(`  speculation:  ${s.line_action} of ${s.base_snapshot_id} (base)`);
        lines.push(`                -> ${s.snapshot_id} (lands; tree ${short(s.root_tree_id)})`);
        if (s.ahead.length)
            lines.push(`  ahead:        ${s.ahead.join(', ')}`);
        if (s.tested_by !== e.entry_id)
            lines.push(`  tested by:    ${s.tested_by} (a batch)`);
        if (s.covers.length > 1)
            lines.push(`  covers:       ${s.covers.join(', ')}`);
        if (s.worker_job_indexes.length)
            lines.push(`  jobs:         ${s.worker_job_indexes.map((j) => `#${j}`).join(', ')}`);
        if (s.reused_worker_job_index !== null)
            lines.push(`  reused:       job #${s.reused_worker_job_index} passed on this tree`);
    }
    else if (e.state === 'queued')
        lines.push('  speculation:  not built yet (behind the queue depth, or being rebuilt)');
    if (e.ci)
        lines.push(`  CI:           ${ciText(e)}`);
    if (e.passed_on_retry)
        lines.push('  passed on retry: yes (a failed run came first)');
    if (e.stalled)
        lines.push(`  STALLED:      ${e.stalled.message} (job #${e.stalled.worker_job_index}, since ${when(e.stalled.since_s)})`);
    if (e.land_id)
        lines.push(`  landed:       ${e.land_id} -> ${e.landed_snapshot_id}`);
    const x = e.ejection;
    if (x) {
        lines.push(`  ejected:      ${x.reason}: ${x.message}`);
        if (x.worker_job_indexes.length)
            lines.push(`  failing jobs: ${x.worker_job_indexes.map((j) => `#${j}`).join(', ')}`);
        if (x.failing_suites.length)
            lines.push(`  failing suites: ${x.failing_suites.join(', ')}`);
        for (const p of x.conflict_paths)
            lines.push(`  conflict:     ${p}`);
    }
    return lines.join('\n');
}
/** The server's refusal, told with what to do about it. */
function explain(err, what) {
    if (!(err instanceof ServerError))
        throw err;
    const msg = err.body?.error ?? err.message;
    const tail = ` (HTTP ${err.status})`;
    if (err.status === 404 && /^repository /.test(msg))
        throw new Error(`${msg}${tail}; \`cairn repo list\` lists the repositories`);
    if (err.status === 404 && what.entry)
        throw new Error(`no land-queue entry ${what.entry} in this repository${tail}; \`cairn queue list\` shows the entries`);
    if (err.status === 404 && /line/.test(msg))
        throw new Error(`${msg}${tail}; \`cairn lines\` lists the lines`);
    if (err.status === 404 && what.change)
        throw new Error(`${msg}${tail}; \`cairn change list\` lists the changes`);
    if (err.status === 409) {
        const queued = /already in the land queue as (\S+)/.exec(msg);
        if (queued)
            throw new Error(`${what.change} is already in the land queue as ${queued[1]}${tail}; see it with \`cairn queue show ${queued[1]}\` (or take it out with \`cairn queue remove ${queued[1]}\`)`);
        if (/cannot join the land queue/.test(msg))
            throw new Error(`${msg}${tail}. Its gates must pass but for CI: \`cairn change show ${what.change}\` shows why they do not (an attestation, the approvals the policy asks for, no blocking review)`);
        if (what.entry && /only queued or testing entries/.test(msg))
            throw new Error(`${msg}${tail}; \`cairn queue show ${what.entry}\` shows how it ended`);
    }
    throw new Error(`${msg}${tail}`);
}
async function call(ctx, method, rest, body, what) {
    try {
        return await ctx.client.json(method, ctx.client.repoPath(ctx.repo, rest), body);
    }
    catch (err) {
        return explain(err, what);
    }
}
export async function queueCommand(argv) {
    const sub = argv[0];
    if (!sub) {
        process.stdout.write(QUEUE_HELP);
        return 2;
    }
    if (sub === '--help' || sub === '-h') {
        process.stdout.write(QUEUE_HELP);
        return 0;
    }
    if (!(sub in SUB_HELP))
        throw new CliUsageError(`unknown queue subcommand "${sub}" (add, list, show, remove)`);
    const { values, positionals } = parseCommandArgs(argv.slice(1), { ...common, mode: { type: 'string' }, line: { type: 'string' }, bypass: { type: 'boolean', default: false } }, true);
    if (values.help) {
        process.stdout.write(SUB_HELP[sub]);
        return 0;
    }
    const modeOpt = values.mode;
    const line = values.line;
    if (sub !== 'add' && modeOpt !== undefined)
        throw new CliUsageError(`queue ${sub} takes no --mode`);
    if (sub !== 'add' && values.bypass)
        throw new CliUsageError(`queue ${sub} takes no --bypass`);
    if ((sub === 'show' || sub === 'remove') && line !== undefined)
        throw new CliUsageError(`queue ${sub} takes no --line`);
    if (sub === 'add') {
        const change = one(positionals, 'CHANGE');
        const mode = modeOpt ?? 'merge';
        if (!MODES.includes(mode))
            throw new CliUsageError(`--mode must be merge or direct${mode === 'ff-only' ? ' (ff-only has nothing to test: use cairn land --mode ff-only)' : ''}`);
        const ctx = context(values);
        const body = { change_ref: change, mode };
        if (line !== undefined)
            body.target_line = line;
        if (values.bypass)
            body.bypass = true;
        const res = await call(ctx, 'POST', '/land-queue', body, { change, line });
        const e = res.entry;
        return print(ctx, res, () => `queued ${e.change_ref} (${e.patchset_id}) as ${e.entry_id}, position ${e.position} on ${e.target_line} (${e.mode}); follow it with \`cairn queue show ${e.entry_id}\``);
    }
    if (sub === 'list') {
        if (positionals.length)
            throw new CliUsageError('queue list takes no positional arguments (--line LINE names a line)');
        const ctx = context(values);
        const q = line !== undefined ? `?target_line=${encodeURIComponent(line)}` : '';
        const res = await call(ctx, 'GET', `/land-queue${q}`, undefined, { line });
        return print(ctx, res, () => listText(res));
    }
    const entry = one(positionals, 'ENTRY');
    const ctx = context(values);
    if (sub === 'show') {
        const res = await call(ctx, 'GET', `/land-queue/${seg(entry)}`, undefined, { entry });
        return print(ctx, res, () => showText(res.entry));
    }
    const res = await call(ctx, 'DELETE', `/land-queue/${seg(entry)}`, undefined, { entry });
    return print(ctx, res, () => `removed ${res.entry.entry_id} (${res.entry.change_ref}) from the land queue of ${res.entry.target_line}`);
}
//# sourceMappingURL=queue-commands.js.map