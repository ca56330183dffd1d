// `cairn review …`, `cairn attest`, `cairn policy …`, `cairn ci …`: thin clients of the review,
// attestation, policy and patchset CI routes (docs/api.md "Reviews, attestation, policy, patchset
// CI"). Output is one JSON object with --json or when stdout is not a terminal; on a terminal a
// short readable form.
import { choice, CliUsageError, parseCommandArgs } from './args.js';
import { AUTHOR_MODES } from '../domain/workflow/rules.js';
import { VERIFICATION_STATES } from '../domain/workflow/review-rules.js';
import { COMMON, common, context, LIST_HELP, LIST_OPTIONS, need, one, print, rowsWanted, seg, person } from './command-context.js';
import { actingAs } from '../client/identity.js';

export const REVIEW_HELP = `Usage:
  cairn review request --change CHANGE [--group G] [--reviewer NAME]... [--note N] [--by WHO]
  cairn review approve|comment|block|dismiss --change CHANGE [--reviewer R] [--comment C]
  cairn review list --change CHANGE [--limit N | --all]   (default: every review)
  cairn review inbox [--group G] [--limit N | --all]      (changes waiting for review, by group)
  cairn review publish CHANGE --author A [--approve | --request-changes | --comment] [-m TEXT]
                                          (publish A's draft comments; see cairn review publish --help)

Reviews act on the change's selected patchset. block records request_changes with
blocking: true; dismiss withdraws the reviewer's earlier approval or block. request asks a
group (--group) and/or people (--reviewer, repeatable); "cairn change show" lists each
reviewer's vote. --reviewer of approve/comment/block/dismiss and --by default to who you are
(cairn config set user.name NAME, or cairn --as NAME).

${COMMON}${LIST_HELP}`;

export const ATTEST_HELP = `Usage:
  cairn attest PATCHSET [--verification unknown|pending|pass|fail] [--author-mode M] [--revoked]
                        [--require-human-review] [--require-lint] [--no-require-tests]

${COMMON}`;

export const POLICY_HELP = `Usage:
  cairn policy evaluate PATCHSET    append a decision from the attestation, CI and live reviews
  cairn policy show PATCHSET        the latest decision (or pending)

${COMMON}`;

export const CI_HELP = `Usage:
  cairn ci run PATCHSET [--trigger T]        (default manual_rerun: a new run)
  cairn ci status PATCHSET [--recent N]

${COMMON}`;

type Json = Record<string, any>;

function helpFirst(argv: string[], help: string): number | null {
  const sub = argv[0];
  if (!sub) { process.stdout.write(help); return 2; }
  if (sub === '--help' || sub === '-h') { process.stdout.write(help); return 0; }
  return null;
}

const reviewLine = (r: Json) => `${r.review_id}  ${r.action.padEnd(14)} ${r.reviewer}${r.blocking ? ' (blocking)' : ''}${r.stale ? ' [stale]' : ''}${r.comment ? `  ${r.comment}` : ''}`;
const decisionText = (d: Json) => [`${d.patchset_id}: ${d.decision}${d.decision_id ? ` (${d.decision_id})` : ''}`, ...d.checks.map((c: Json) => `  ${c.status.padEnd(7)} ${c.name}: ${c.explanation}`)].join('\n');
const ciText = (c: Json) => `run ${c.ci_run_sequence}: ${c.overall} (tests ${c.tests}, lint ${c.lint})`;

const ACTIONS: Record<string, { action: string; blocking?: boolean }> = {
  approve: { action: 'approve' },
  comment: { action: 'comment' },
  block: { action: 'request_changes', blocking: true },
  dismiss: { action: 'dismiss' },
};

export async function reviewCommand(argv: string[]): Promise<number> {
  const early = helpFirst(argv, REVIEW_HELP);
  if (early !== null) return early;
  const [sub, ...rest] = argv;
  if (sub === 'publish') return (await import('./comment-commands.js')).publishCommand(rest);
  // A mistyped sub-command is named before its options are judged.
  if (!['request', 'list', 'inbox'].includes(sub) && !(sub in ACTIONS)) throw new CliUsageError(`unknown review subcommand "${sub}" (request, approve, comment, block, dismiss, list, inbox, publish)`);
  const { values, positionals } = parseCommandArgs(rest, {
    ...common, change: { type: 'string' }, group: { type: 'string' }, note: { type: 'string' }, by: { type: 'string' },
    reviewer: { type: 'string', multiple: true }, comment: { type: 'string' }, ...LIST_OPTIONS,
  }, true);
  if (values.help) { process.stdout.write(REVIEW_HELP); return 0; }
  if (positionals.length) throw new CliUsageError(`review ${sub} takes no positional arguments`);
  const ctx = context(values);
  const p = (r: string) => ctx.client.repoPath(ctx.repo, r);
  if (sub === 'inbox') {
    const q = typeof values.group === 'string' ? `?reviewer_group=${encodeURIComponent(values.group)}` : '';
    const res = await ctx.client.collect(p(`/read/reviewer-inbox${q}`), 'rows', rowsWanted(values));
    return print(ctx, res, () => (res.rows.length
      ? res.rows.map((r: Json) => `${r.reviewer_group}  ${r.change_ref}  ${r.title}  (${r.selected_patchset_id ?? 'no patchset'}; CI ${r.ci_overall}, policy ${r.policy_decision}, ${r.approvals} approval(s), ${r.blocking} blocking; asked ${new Date(r.requested_at_s * 1000).toISOString().slice(0, 16).replace('T', ' ')}${r.requested_by ? ` by ${r.requested_by}` : ''})`).join('\n')
      : `nothing waits for review${typeof values.group === 'string' ? ` by ${values.group}` : ''}`));
  }
  const ref = seg(need(values.change, '--change'));
  if (sub === 'list') {
    const res = await ctx.client.collect(p(`/changes/${ref}/reviews`), 'reviews', rowsWanted(values, Infinity));
    return print(ctx, res, () => [`${res.change_ref}: ${res.approvals} approval(s), ${res.blocking} blocking, ${res.comments} comment(s), ${res.total} total`, ...res.reviews.map(reviewLine)].join('\n'));
  }
  const { change } = await ctx.client.json('GET', p(`/changes/${ref}`));
  if (!change.selected_patchset_id) throw new Error(`change ${change.change_id} has no selected patchset`);
  if (sub === 'request') {
    const people = (values.reviewer as string[] | undefined) ?? [];
    if (values.group === undefined && people.length === 0) throw new CliUsageError('name a group (--group) or people (--reviewer NAME, repeatable)');
    const body: Json = { patchset_id: change.selected_patchset_id, note: (values.note as string | undefined) ?? '' };
    if (values.group !== undefined) body.reviewer_groups = [need(values.group, '--group')];
    if (people.length) body.reviewers = people;
    const by = values.by ?? actingAs();
    if (by !== undefined && by !== null) body.requested_by = by;
    const res = await ctx.client.json('POST', p(`/changes/${ref}:requestReview`), body);
    const asked = res.review_requests.map((r: Json) => r.reviewer).join(', ');
    return print(ctx, res, () => `requested review from ${asked} on ${change.selected_patchset_id}; ${res.change.change_ref} is ${res.change.status}`);
  }
  const a = ACTIONS[sub];
  const reviewers = (values.reviewer as string[] | undefined) ?? [];
  if (reviewers.length > 1) throw new CliUsageError(`review ${sub} takes one --reviewer`);
  const body: Json = { patchset_id: change.selected_patchset_id, reviewer: person(reviewers[0], '--reviewer'), action: a.action, comment: (values.comment as string | undefined) ?? '' };
  if (a.blocking) body.blocking = true;
  const res = await ctx.client.json('POST', p(`/changes/${ref}/reviews`), body);
  return print(ctx, res, () => `recorded ${reviewLine(res.review)}`);
}

export async function attestCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    ...common, verification: { type: 'string' }, 'author-mode': { type: 'string' }, revoked: { type: 'boolean', default: false },
    'require-human-review': { type: 'boolean', default: false }, 'require-lint': { type: 'boolean', default: false }, 'no-require-tests': { type: 'boolean', default: false },
  }, true);
  if (values.help) { process.stdout.write(ATTEST_HELP); return 0; }
  const ctx = context(values);
  const ps = seg(one(positionals, 'PATCHSET'));
  const body: Json = { revoked: values.revoked === true, require_human_review: values['require-human-review'] === true, require_lint_pass: values['require-lint'] === true, require_tests_pass: values['no-require-tests'] !== true };
  if (values.verification !== undefined) body.verification_state = choice(values.verification, '--verification', VERIFICATION_STATES);
  if (values['author-mode'] !== undefined) body.author_mode = choice(values['author-mode'], '--author-mode', AUTHOR_MODES);
  const res = await ctx.client.json('PUT', ctx.client.repoPath(ctx.repo, `/patchsets/${ps}/attestation`), body);
  const a = res.attestation;
  return print(ctx, res, () => `${a.attestation_id}: ${a.author_mode}, verification ${a.verification_state}${a.revoked ? ', revoked' : ''}; CI ${a.ci_backed ? `tests ${a.tests}, lint ${a.lint}` : 'not in yet'}`);
}

export async function policyCommand(argv: string[]): Promise<number> {
  const early = helpFirst(argv, POLICY_HELP);
  if (early !== null) return early;
  const [sub, ...rest] = argv;
  if (sub !== 'evaluate' && sub !== 'show') throw new CliUsageError(`unknown policy subcommand "${sub}" (evaluate, show)`);
  const { values, positionals } = parseCommandArgs(rest, { ...common }, true);
  if (values.help) { process.stdout.write(POLICY_HELP); return 0; }
  const ctx = context(values);
  const ps = seg(one(positionals, 'PATCHSET'));
  const path = ctx.client.repoPath(ctx.repo, `/patchsets/${ps}`);
  let res: Json;
  if (sub === 'evaluate') res = await ctx.client.json('POST', `${path}:evaluatePolicy`, {});
  else if (sub === 'show') res = await ctx.client.json('GET', `${path}/policy`);
  else throw new CliUsageError(`unknown policy subcommand "${sub}" (evaluate, show)`);
  return print(ctx, res, () => decisionText(res.policy));
}

export async function ciCommand(argv: string[]): Promise<number> {
  const early = helpFirst(argv, CI_HELP);
  if (early !== null) return early;
  const [sub, ...rest] = argv;
  if (sub !== 'run' && sub !== 'status') throw new CliUsageError(`unknown ci subcommand "${sub}" (run, status)`);
  const { values, positionals } = parseCommandArgs(rest, { ...common, trigger: { type: 'string' }, recent: { type: 'string' } }, true);
  if (values.help) { process.stdout.write(CI_HELP); return 0; }
  const ctx = context(values);
  const ps = seg(one(positionals, 'PATCHSET'));
  if (sub === 'run') {
    const body: Json = values.trigger !== undefined ? { trigger: values.trigger } : {};
    const res = await ctx.client.json('POST', ctx.client.repoPath(ctx.repo, `/patchsets/${ps}:runCi`), body);
    return print(ctx, res, () => `${res.delivery}${res.job ? ` job ${res.job.worker_job_index} (${res.job.state})` : ''}; ${ciText(res.ci)}`);
  }
  if (sub === 'status') {
    const q = values.recent !== undefined ? `?recent_limit=${encodeURIComponent(values.recent as string)}` : '';
    const res = await ctx.client.json('GET', ctx.client.repoPath(ctx.repo, `/read/patchsets/${ps}/ci-status${q}`));
    return print(ctx, res, () => [`${res.patchset_id}: ${res.availability}, run ${res.ci_run_sequence}, ${res.overall} (tests ${res.tests}, lint ${res.lint})`, ...res.recent_jobs.map((j: Json) => `  job ${j.worker_job_index}  run ${j.run_sequence}  ${j.state}${j.outcome ? ` ${j.outcome}` : ''}`)].join('\n'));
  }
  throw new CliUsageError(`unknown ci subcommand "${sub}" (run, status)`);
}
