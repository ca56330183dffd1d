// `cairn task …`, `cairn change …`, `cairn patchset push`: thin clients of the workflow routes
// (docs/api.md "Tasks, changes, patchsets"). Output is one JSON object with --json or when stdout is
// not a terminal; on a terminal a short readable form.
import { patchsetRefName } from '../domain/git.js';
import path from 'node:path';
import { ServerError } from '../client/http.js';
import { push } from '../client/transfer.js';
import { actingAs } from '../client/identity.js';
import { choice, CliUsageError, parseCommandArgs } from './args.js';
import { AUTHOR_MODES, CHANGE_STATUSES, TASK_STATUSES } from '../domain/workflow/rules.js';

// What close takes (the server's words, both spellings of cancelled): checked before anything is sent.
const TASK_CLOSE = ['completed', 'abandoned', 'canceled', 'cancelled'];
const CHANGE_CLOSE = ['archived', 'superseded', 'abandoned', 'canceled', 'cancelled'];
import { COMMON, common, context, LIST_HELP, LIST_OPTIONS, need, one, print, rowsWanted, seg } from './command-context.js';
import { taskStartCommand } from './land-commands.js';


export const TASK_HELP = `Usage:
  cairn task create --title T --intent I [--task-id ID] [--plan-id P] [--revision R] [--item REF]
  cairn task list [--status active|completed|abandoned] [--plan-id P] [--limit N | --all]
  cairn task show TASK
  cairn task close TASK --status completed|abandoned|canceled|cancelled
  cairn task start …  (plan item → task → change in one commit; cairn task start --help)

TASK is a task id (task-7) or its sequence (7).

${COMMON}${LIST_HELP}`;

export const CHANGE_HELP = `Usage:
  cairn change create --task TASK --title T --base-line LINE [--fork SNAPSHOT] [--change-id ID]
                    (owned by who you are: cairn config set user.name NAME, or cairn --as NAME)
  cairn change list [--status S] [--task TASK] [--limit N | --all]
  cairn change list -q QUERY [--limit N | --all]   (search: status:S is:open is:unresolved owner:NAME
                                    reviewer:NAME file:PATH line:LINE and title words, all matched)
  cairn change show CHANGE          (the change, its reviewers' votes, its patchsets and whether it can land)
  cairn change close CHANGE --status archived|superseded|abandoned|canceled|cancelled
  cairn change select CHANGE PS     (PS is reviewed and landed: ps-2, 2 or change-3.ps-2)
  cairn change rebase CHANGE [PS]   (PS, default the selected one, onto the target line's head)
  cairn change apply-suggestions …  (suggested edits as a new patchset; cairn change apply-suggestions --help)
  cairn change viewed CHANGE --user U [--patchset PS] [--mark | --unmark PATH...]

CHANGE is a change id (change-3) or its full ref (task-1.change-3). show judges a merge land
now: CI, reviews, attestation, the policy, and whether the selected patchset still merges onto
the target line's head (each conflicting path, if not).

select makes PS the change's selected patchset: the one its reviews count on, its readiness
judges and a land lands. A push for review selects the patchset it makes (unless pushed with
-o noselect); select goes back to an earlier one, or forward to one pushed with noselect.

rebase builds a new patchset on the server: PS's revision merged onto the head of the change's
target line with the land's merge, based on that head. It becomes the selected patchset;
approvals carry to it when it changes the same files to the same content (the repository's
dismiss_stale_approvals rule). When a path conflicts nothing is written: each conflicting path
is listed (exit 6); rebase locally (git fetch, git rebase) and push. A patchset already based
on the head is left as it is (exit 0).

viewed lists the files U has viewed on a patchset (default: the current one), counting a file
viewed on an earlier patchset that this one leaves unchanged, and the patchset U last reviewed;
with --mark or --unmark it marks or unmarks each PATH on that patchset first.

${COMMON}${LIST_HELP}`;

export const PATCHSET_HELP = `Usage:
  cairn patchset push --change CHANGE [--summary S] [--author-mode M] [--author WHO] DIR

Snapshot DIR on top of the change's fork snapshot (its base), without moving any line, and
create a patchset from base to that snapshot. --author-mode: human_only (default), human_with_ai_assist,
ai_with_human_review, ai_only_experimental. --summary defaults to "patchset from DIR".

${COMMON}`;

const query = (q: Record<string, unknown>) => {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (typeof v === 'string') p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
};

type Json = Record<string, any>;
/** Markers after a patchset line: current, base moved by a land. */
/** The reviewer table: name, kind, vote, the patchset voted on, and whether the vote counts on the selected patchset. */
function reviewerLines(rows: Json[]): string[] {
  if (!rows.length) return [];
  const w = Math.max(...rows.map((r) => r.name.length));
  return ['reviewers:', ...rows.map((r) => `  ${r.name.padEnd(w)}  ${r.kind.padEnd(6)}  ${(r.vote ?? '-').padEnd(7)}  ${r.vote === null ? '' : `${r.patchset_id}${r.live ? '' : '  (not on the selected patchset)'}`}`.trimEnd())];
}

const patchsetMarks = (x: Json, change: Json) => `${x.patchset_id === change.current_patchset_id ? '  [current]' : ''}${x.base_stale ? '  [base stale: the line moved]' : ''}`;

/**
 * The glanceable status of a change (from read/changes/{ref}/readiness, which runs the land's
 * own gate function and a dry run of its merge): CI, reviews, attestation, the policy with each
 * check, whether the revision still merges onto the target head (each conflicting path), and
 * whether it can land now.
 */
export function statusLines(r: Json): string[] {
  const out: string[] = [];
  if (r.ci) out.push(`CI: ${r.ci.overall}${r.ci.ci_run_sequence ? ` (run ${r.ci.ci_run_sequence}, tests ${r.ci.tests}, lint ${r.ci.lint}${r.ci.evidence_worker_job_index !== null ? `, job ${r.ci.evidence_worker_job_index}` : ''})` : ''}`);
  if (r.review) out.push(`reviews: ${r.review.approvals} approval(s), ${r.review.blocking} blocking, ${r.review.comments} comment(s)`);
  if (r.selected_patchset_id) out.push(`attestation: ${r.attestation ? `${r.attestation.verification_state}${r.attestation.revoked ? ', revoked' : ''}` : 'none'}`);
  if (r.policy) {
    out.push(`policy now: ${r.policy.decision}`);
    for (const c of r.policy.checks as Json[]) out.push(`  ${c.status === 'pass' ? '✓' : c.status === 'fail' ? '✗' : '-'} ${c.name}: ${c.explanation}`);
  }
  const m = r.merge;
  if (m) {
    const onto = `merge onto ${m.target_line} (head ${String(m.head_snapshot_id).slice(0, 12)})`;
    if (m.status === 'conflict') {
      out.push(`${onto}: ${m.conflicts_count} conflicting path(s)`);
      for (const c of m.conflicts as Json[]) out.push(`  ✗ ${c.path} (${c.kind})`);
      if (m.conflicts_count > m.conflicts.length) out.push(`  … ${m.conflicts_count - m.conflicts.length} more`);
    } else if (m.status === 'clean') {
      out.push(`${onto}: clean${r.base_stale ? ' (the line moved past the base; the land merges onto the new head)' : ''}`);
    } else {
      out.push(`${onto}: not checked (${m.note})`);
    }
  }
  out.push(r.can_land ? 'can land: yes' : `can land: no, because ${r.reason} (${r.blocked_by})`);
  return out;
}

/** The readable form's last line when rows remain: how to see them. */
const more = (res: Json) => (res.next_cursor ? `\n… more rows: --limit N or --all` : '');
const taskLine = (t: Json) => `${t.task_id}  ${t.status.padEnd(9)}  ${t.title}${t.plan_id ? `  [${t.plan_id}${t.plan_item_ref ? `#${t.plan_item_ref}` : ''}]` : ''}`;
const changeLine = (c: Json) => `${c.change_ref}  ${c.status.padEnd(10)}  ${c.title}  (${c.base_line}, ${c.patchset_count} patchset${c.patchset_count === 1 ? '' : 's'}${c.selected_patchset_id ? `, selected ${c.selected_patchset_id}` : ''})`;
const patchsetLine = (p: Json) => {
  const s = p.changed_file_stats;
  return `${p.patchset_id}  ${p.author_mode}  ${s.files_changed} files (+${s.files_added} ~${s.files_modified} -${s.files_deleted}), +${s.lines_added}/-${s.lines_removed} lines  ${p.summary}`;
};

function split(argv: string[]): [string | undefined, string[]] {
  return [argv[0], argv.slice(1)];
}

export async function taskCommand(argv: string[]): Promise<number> {
  const [sub, rest] = split(argv);
  if (sub === 'start') return taskStartCommand(rest);
  if (!sub || sub === '--help' || sub === '-h') { process.stdout.write(TASK_HELP); return sub ? 0 : 2; }
  const { values, positionals } = parseCommandArgs(rest, {
    ...common,
    title: { type: 'string' }, intent: { type: 'string' }, 'task-id': { type: 'string' }, 'plan-id': { type: 'string' },
    revision: { type: 'string' }, item: { type: 'string' }, status: { type: 'string' }, ...LIST_OPTIONS,
  }, true);
  if (values.help) { process.stdout.write(TASK_HELP); return 0; }
  const ctx = context(values);
  const p = (rest: string) => ctx.client.repoPath(ctx.repo, rest);
  switch (sub) {
    case 'create': {
      if (positionals.length) throw new CliUsageError('task create takes no positional arguments');
      const body: Json = { title: need(values.title, '--title'), intent: need(values.intent, '--intent') };
      if (values['task-id'] !== undefined) body.task_id = values['task-id'];
      if (values['plan-id'] !== undefined) body.plan_id = values['plan-id'];
      if (values.revision !== undefined) body.origin_plan_revision_id = values.revision;
      if (values.item !== undefined) body.plan_item_ref = values.item;
      const res = await ctx.client.json('POST', p('/tasks'), body);
      return print(ctx, res, () => `created ${taskLine(res.task)}`);
    }
    case 'list': {
      if (positionals.length) throw new CliUsageError('task list takes no positional arguments');
      const res = await ctx.client.collect(p(`/tasks${query({ status: choice(values.status, '--status', TASK_STATUSES), plan_id: values['plan-id'] })}`), 'tasks', rowsWanted(values));
      return print(ctx, res, () => (res.tasks.length ? res.tasks.map(taskLine).join('\n') + more(res) : 'no tasks'));
    }
    case 'show': {
      const res = await ctx.client.json('GET', p(`/tasks/${seg(one(positionals, 'TASK'))}`));
      const t = res.task;
      return print(ctx, res, () => [taskLine(t), `intent: ${t.intent}`, ...(t.plan_drift ? [`plan: revision ${t.origin_plan_revision_id}${t.plan_drift.plan_moved ? ' (plan has moved on)' : ''}${t.plan_drift.item_in_head === false ? ', item no longer in the plan' : ''}`] : [])].join('\n'));
    }
    case 'close': {
      const res = await ctx.client.json('POST', p(`/tasks/${seg(one(positionals, 'TASK'))}:close`), { status: choice(need(values.status, '--status'), '--status', TASK_CLOSE) });
      return print(ctx, res, () => `closed ${taskLine(res.task)}`);
    }
    default:
      throw new CliUsageError(`unknown task subcommand "${sub}" (create, list, show, close)`);
  }
}

/**
 * The patchset id PS names on the change: `ps-2` or `2` (its number on this change), or a full
 * id (`change-3.ps-2`, checked by the server). A number the change does not have is refused here,
 * in the user's words.
 */
async function selectedId(ctx: ReturnType<typeof context>, changePath: string, changeRef: string, ps: string): Promise<string> {
  const m = /^(?:ps-?)?([1-9][0-9]{0,8})$/i.exec(ps);
  if (!m) {
    if (/\.ps-[1-9][0-9]*$/.test(ps)) return ps;
    throw new CliUsageError(`PS must name a patchset: ps-2, 2 or change-3.ps-2 (not "${ps}")`);
  }
  const { change } = await ctx.client.json('GET', changePath);
  const n = Number(m[1]);
  if (n > change.patchset_count) throw new Error(`${change.change_ref} has ${change.patchset_count === 1 ? 'one patchset' : `${change.patchset_count} patchsets`}: it has no ps-${n} (cairn change show ${changeRef} lists them)`);
  return `${change.change_id}.ps-${n}`;
}

export async function changeCommand(argv: string[]): Promise<number> {
  const [sub, rest] = split(argv);
  if (sub === 'apply-suggestions') return (await import('./comment-commands.js')).applySuggestionsCommand(rest);
  if (!sub || sub === '--help' || sub === '-h') { process.stdout.write(CHANGE_HELP); return sub ? 0 : 2; }
  const { values, positionals } = parseCommandArgs(rest, {
    ...common,
    task: { type: 'string' }, title: { type: 'string' }, 'base-line': { type: 'string' }, fork: { type: 'string' },
    'change-id': { type: 'string' }, status: { type: 'string' }, ...LIST_OPTIONS,
    user: { type: 'string' }, patchset: { type: 'string' }, mark: { type: 'boolean' }, unmark: { type: 'boolean' },
    query: { type: 'string', short: 'q' },
  }, true);
  if (values.help) { process.stdout.write(CHANGE_HELP); return 0; }
  const ctx = context(values);
  const p = (rest: string) => ctx.client.repoPath(ctx.repo, rest);
  switch (sub) {
    case 'create': {
      if (positionals.length) throw new CliUsageError('change create takes no positional arguments');
      const body: Json = { task_id: need(values.task, '--task'), title: need(values.title, '--title'), base_line: need(values['base-line'], '--base-line') };
      if (values.fork !== undefined) body.fork_snapshot_id = values.fork;
      if (values['change-id'] !== undefined) body.change_id = values['change-id'];
      const owner = actingAs();
      if (owner !== null) body.owner = owner;
      const res = await ctx.client.json('POST', p('/changes'), body);
      return print(ctx, res, () => `created ${changeLine(res.change)}`);
    }
    case 'list': {
      if (positionals.length) throw new CliUsageError('change list takes no positional arguments');
      const res = await ctx.client.collect(p(`/changes${query({ status: choice(values.status, '--status', CHANGE_STATUSES), task_id: values.task, q: values.query })}`), 'changes', rowsWanted(values));
      return print(ctx, res, () => (res.changes.length ? res.changes.map(changeLine).join('\n') + more(res) : 'no changes'));
    }
    case 'show': {
      const ref = seg(one(positionals, 'CHANGE'));
      const { change } = await ctx.client.json('GET', p(`/changes/${ref}`));
      const [{ patchsets }, readiness, { reviewers }] = await Promise.all([
        ctx.client.collect(p(`/changes/${ref}/patchsets`), 'patchsets', Infinity),
        ctx.client.json('GET', p(`/read/changes/${ref}/readiness`)),
        ctx.client.json('GET', p(`/read/changes/${ref}/reviewers`)),
      ]);
      const res = { change, patchsets, readiness, reviewers };
      return print(ctx, res, () => [
        changeLine(change),
        `fork: ${change.fork_snapshot_id ?? '(empty line)'}`,
        ...(change.owner ? [`owner: ${change.owner}`] : []),
        ...(change.attention?.length ? [`your turn: ${change.attention.join(', ')}`] : []),
        ...reviewerLines(reviewers),
        'patchsets (* selected):',
        ...patchsets.map((x: Json) => `  ${x.patchset_id === change.selected_patchset_id ? '*' : ' '} ${patchsetLine(x)}${patchsetMarks(x, change)}`),
        ...fetchLines(`${ctx.client.base}${p('/git.git')}`, change, patchsets),
        ...statusLines(readiness),
      ].join('\n'));
    }
    case 'close': {
      const res = await ctx.client.json('POST', p(`/changes/${seg(one(positionals, 'CHANGE'))}:close`), { status: choice(need(values.status, '--status'), '--status', CHANGE_CLOSE) });
      return print(ctx, res, () => `closed ${changeLine(res.change)}`);
    }
    case 'select': {
      if (positionals.length !== 2) throw new CliUsageError('change select needs CHANGE and PS (cairn change select change-3 ps-2)');
      const [changeRef, ps] = positionals;
      const ref = seg(changeRef);
      const patchsetId = await selectedId(ctx, p(`/changes/${ref}`), changeRef, ps);
      const res = await ctx.client.json('POST', p(`/changes/${ref}:selectPatchset`), { patchset_id: patchsetId });
      return print(ctx, res, () => `selected ${res.change.selected_patchset_id} of ${res.change.change_ref} (what is reviewed and landed)`);
    }
    case 'rebase': {
      if (positionals.length < 1 || positionals.length > 2) throw new CliUsageError('change rebase needs CHANGE and optionally PS (cairn change rebase change-3)');
      const [changeRef, ps] = positionals;
      const ref = seg(changeRef);
      const body: Json = ps === undefined ? {} : { patchset_id: await selectedId(ctx, p(`/changes/${ref}`), changeRef, ps) };
      try {
        const res = await ctx.client.json('POST', p(`/changes/${ref}:rebase`), body);
        const x = res.patchset;
        return print(ctx, res, () => `rebased ${x.rebased_from.patchset_id} onto the head of ${res.change.land_target_line} (${x.base_snapshot_id.slice(0, 12)}) as ${x.patchset_id}, now selected: ${x.changed_file_stats.files_changed} file(s) changed`);
      } catch (err) {
        const refusal = err instanceof ServerError && err.status === 409 ? (err.body as Json | null) : null;
        if (!refusal || (refusal.code !== 'REBASE_CONFLICT' && refusal.code !== 'ALREADY_UP_TO_DATE')) throw err;
        if (ctx.json) process.stdout.write(`${JSON.stringify(refusal)}\n`);
        else if (refusal.code === 'ALREADY_UP_TO_DATE') process.stdout.write(`${refusal.error}\n`);
        else {
          const lines = [`not rebased: ${refusal.error}`];
          for (const c of refusal.conflicts ?? []) lines.push(`  conflict (${c.kind}): ${c.path}`);
          if (refusal.conflicts_count > (refusal.conflicts?.length ?? 0)) lines.push(`  … ${refusal.conflicts_count - refusal.conflicts.length} more`);
          if ((refusal.conflicts ?? []).length) lines.push('nothing was written; rebase locally (git fetch, git rebase), resolve them and push');
          process.stdout.write(`${lines.join('\n')}\n`);
        }
        return refusal.code === 'ALREADY_UP_TO_DATE' ? 0 : 6;
      }
    }
    case 'viewed': {
      const [change, ...paths] = positionals;
      if (change === undefined) throw new CliUsageError('change viewed needs CHANGE');
      const user = need(values.user, '--user');
      if (values.mark && values.unmark) throw new CliUsageError('give --mark or --unmark, not both');
      const marking = values.mark || values.unmark;
      if (marking && paths.length === 0) throw new CliUsageError(`--${values.mark ? 'mark' : 'unmark'} needs one or more PATH`);
      if (!marking && paths.length > 0) throw new CliUsageError('give --mark or --unmark with PATH');
      const ref = seg(change);
      let patchset = values.patchset;
      if (marking && patchset === undefined) {
        patchset = (await ctx.client.json('GET', p(`/changes/${ref}`))).change.current_patchset_id ?? undefined;
        if (patchset === undefined) throw new Error(`change ${change} has no patchset to mark files on`);
      }
      let res: Json | undefined;
      for (const path of paths) res = await ctx.client.json('PUT', p(`/changes/${ref}/viewed`), { user, patchset_id: patchset, path, viewed: Boolean(values.mark) });
      res ??= await ctx.client.json('GET', p(`/changes/${ref}/viewed${query({ user, patchset })}`));
      const r = res!;
      return print(ctx, r, () => [
        `${r.patchset_id || '(no patchset)'}: ${r.paths.length} file${r.paths.length === 1 ? '' : 's'} viewed by ${r.user}`,
        ...r.paths.map((x: string) => `  ${x}`),
        `last reviewed: ${r.last_reviewed_patchset_id ?? 'never'}`,
      ].join('\n'));
    }
    default:
      throw new CliUsageError(`unknown change subcommand "${sub}" (create, list, show, close, select, rebase, viewed, apply-suggestions)`);
  }
}

export async function patchsetCommand(argv: string[]): Promise<number> {
  const [sub, rest] = split(argv);
  if (!sub || sub === '--help' || sub === '-h') { process.stdout.write(PATCHSET_HELP); return sub ? 0 : 2; }
  if (sub !== 'push') throw new CliUsageError(`unknown patchset subcommand "${sub}" (push)`);
  const { values, positionals } = parseCommandArgs(rest, {
    ...common, change: { type: 'string' }, summary: { type: 'string' }, 'author-mode': { type: 'string' }, author: { type: 'string' },
  }, true);
  if (values.help) { process.stdout.write(PATCHSET_HELP); return 0; }
  const ctx = context(values);
  const dir = path.resolve(one(positionals, 'directory'));
  const ref = seg(need(values.change, '--change'));
  const authorMode = choice(values['author-mode'], '--author-mode', AUTHOR_MODES) ?? 'human_only';
  const { change } = await ctx.client.json('GET', ctx.client.repoPath(ctx.repo, `/changes/${ref}`));
  if (!change.fork_snapshot_id) throw new Error(`change ${change.change_id} was forked from an empty line: it has no base snapshot to push on`);
  const pushed = await push({
    server: ctx.server,
    repo: ctx.repo,
    line: change.base_line,
    dir,
    parent: change.fork_snapshot_id,
    moveLine: false,
    progress: process.stderr.isTTY === true && !ctx.json,
  });
  const res = await ctx.client.json('POST', ctx.client.repoPath(ctx.repo, `/changes/${ref}/patchsets`), {
    base_snapshot_id: change.fork_snapshot_id,
    revision_snapshot_id: pushed.snapshot_id,
    summary: (values.summary as string | undefined) ?? `patchset from ${path.basename(dir)}`,
    author_mode: authorMode,
    ...(values.author !== undefined ? { author: values.author } : {}),
  });
  const out = { ...res, snapshot_id: pushed.snapshot_id, uploaded_packs: pushed.uploaded_packs, uploaded_bytes: pushed.uploaded_bytes };
  return print(ctx, out, () => `${res.replayed ? 'existing' : 'created'} ${patchsetLine(res.patchset)}`);
}

/**
 * How to fetch the newest patchset (and the selected one when older) with git, as Gerrit's
 * Download box says it (docs/git.md "Fetch a patchset").
 */
function fetchLines(gitUrl: string, change: Json, patchsets: Json[]): string[] {
  const wanted = new Set([change.current_patchset_id, change.selected_patchset_id].filter(Boolean));
  return patchsets.filter((x) => wanted.has(x.patchset_id)).reverse()
    .map((x) => `fetch ps-${x.patchset_number}: git fetch ${gitUrl} ${patchsetRefName(change.sequence, x.patchset_number)} && git checkout FETCH_HEAD`);
}
