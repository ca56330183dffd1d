// `cairn land` (task-land) and `cairn task start` (task-start): thin clients of the atomic routes
// (docs/api.md "Lands"). Each call carries an idempotency key: generated and printed (stderr) unless
// --idempotency-key names one, and reused when the request is retried after a network error, so
// a retry can never land or start twice.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CairnClient, ServerError } from '../client/http.js';
import { choice, CliUsageError, parseCommandArgs } from './args.js';
import type { LandMode } from '../authority/workflow/lands.js';

/** The land modes (lib/authority/workflow/lands.ts), checked here before anything is sent. */
const LAND_MODES: readonly LandMode[] = ['ff-only', 'merge', 'direct'];
import { context, need } from './command-context.js';

type Json = Record<string, any>;

export const LAND_HELP = `Usage:
  cairn land [--mode ff-only|merge|direct] [--target-line LINE] [--patchset ID]
             [--expect-head SNAPSHOT] [--bypass] [--idempotency-key K] TASK_OR_CHANGE

Land the selected patchset of a change (or of a task's one landable change) onto its target
line (default: the change's base line). --mode defaults to merge. The idempotency key is printed
on stderr; run again with --idempotency-key K to retry the same land safely. --bypass lands
despite failing gates and rules, when you are in the repository's bypass_allowed rule (cairn
repo rules); the land records that it was a bypass and by whom.
Exit codes: 0 landed (or replayed), 6 refused (the failure kind is printed; for a conflict, each
path and its kind), 1 other errors.

Common options:
  --server URL    cairn server
  --repo N        repository index or name
  --json          print JSON (the default when stdout is not a terminal)
`;

export const TASK_START_HELP = `Usage:
  cairn task start --item REF --title T --intent I --change-title T --base-line LINE PLAN [--idempotency-key K]

PLAN is one of:
  --plan-id P --revision R                   the plan's current head revision (existing)
  --create FILE.md [--artifact-path PATH]    a new plan from a Markdown file (create)
  --plan-id P --revise FILE.md --expected-head R [--artifact-path PATH]   a new revision (revise)
The plan item, task and change are created in one commit.
`;

const common = {
  server: { type: 'string' },
  repo: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  'idempotency-key': { type: 'string' },
} as const;

/** POST with a fixed idempotency key; network errors (no HTTP status) are retried with the same key. */
async function postIdempotent(c: CairnClient, path: string, body: Json): Promise<Json> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await c.json('POST', path, body);
    } catch (err) {
      if (err instanceof ServerError || attempt >= 5) throw err;
      process.stderr.write(`network error (${(err as Error).message}); retrying with the same idempotency key\n`);
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }
}

function key(values: Record<string, unknown>): string {
  const k = typeof values['idempotency-key'] === 'string' ? values['idempotency-key'] : `cli-${randomUUID()}`;
  process.stderr.write(`idempotency key: ${k}\n`);
  return k;
}

export async function landCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    ...common, mode: { type: 'string', default: 'merge' }, 'target-line': { type: 'string' }, patchset: { type: 'string' }, 'expect-head': { type: 'string' },
    bypass: { type: 'boolean', default: false },
  }, true);
  if (values.help) { process.stdout.write(LAND_HELP); return 0; }
  if (positionals.length !== 1) throw new CliUsageError('give exactly one TASK_OR_CHANGE');
  const mode = choice(values.mode, '--mode', LAND_MODES);
  const ctx = context(values);
  const body: Json = { contract: 'task-land-atomic/v1', idempotency_key: key(values), task_or_change_ref: positionals[0], mode };
  if (values['target-line'] !== undefined) body.target_line = values['target-line'];
  if (values.patchset !== undefined) body.patchset_id = values.patchset;
  if (values['expect-head'] !== undefined) body.expected_head_snapshot_id = values['expect-head'];
  if (values.bypass) body.bypass = true;
  try {
    const res = await postIdempotent(ctx.client, ctx.client.repoPath(ctx.repo, '/task-land'), body);
    const l = res.land;
    process.stdout.write(ctx.json ? `${JSON.stringify(res)}\n`
      : `${res.replay ? 'already landed (replay)' : 'landed'} ${res.change_ref} ${res.patchset_id} onto ${res.target_line} (${l.mode}, ${l.line_action}): ${res.landed_snapshot_id}\n${l.bypassed_by ? `bypassed by ${l.bypassed_by}: ${l.bypassed.map((b: Json) => b.kind).join(', ')}\n` : ''}`);
    return 0;
  } catch (err) {
    const land = err instanceof ServerError ? (err.body as Json | null)?.land : undefined;
    if (!land) throw err;
    const body2 = err instanceof ServerError ? (err.body as Json) : {};
    if (ctx.json) process.stdout.write(`${JSON.stringify(body2)}\n`);
    else {
      const lines = [`land ${land.land_id} ${land.status}: ${land.failure_kind}`, `  ${land.failure_message}`];
      for (const c of land.conflicts ?? []) lines.push(`  conflict (${c.kind}): ${c.path}`);
      if (land.conflicts_count > (land.conflicts?.length ?? 0)) lines.push(`  … ${land.conflicts_count - land.conflicts.length} more`);
      process.stdout.write(`${lines.join('\n')}\n`);
    }
    return 6;
  }
}

function planFile(file: string, artifactPath: unknown): Json {
  const body = readFileSync(file, 'utf8');
  const heading = /^#\s+(.+)$/m.exec(body)?.[1]?.trim();
  if (!heading) throw new CliUsageError(`${file} has no "# heading" line`);
  return { title: heading, artifact_path: typeof artifactPath === 'string' ? artifactPath : file, artifact_heading: heading, artifact_body: body };
}

export async function taskStartCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    ...common, item: { type: 'string' }, title: { type: 'string' }, intent: { type: 'string' }, 'change-title': { type: 'string' }, 'base-line': { type: 'string' },
    'plan-id': { type: 'string' }, revision: { type: 'string' }, create: { type: 'string' }, revise: { type: 'string' }, 'expected-head': { type: 'string' }, 'artifact-path': { type: 'string' },
  }, true);
  if (values.help) { process.stdout.write(TASK_START_HELP); return 0; }
  if (positionals.length) throw new CliUsageError('task start takes no positional arguments');
  const ctx = context(values);
  let plan: Json;
  if (values.create !== undefined) plan = { action: 'create', payload: planFile(String(values.create), values['artifact-path']) };
  else if (values.revise !== undefined) plan = { action: 'revise', plan_id: need(values['plan-id'], '--plan-id'), payload: { ...planFile(String(values.revise), values['artifact-path']), expected_head_revision_id: values['expected-head'] ?? null } };
  else plan = { action: 'existing', plan_id: need(values['plan-id'], '--plan-id'), plan_revision_id: need(values.revision, '--revision') };
  const body = {
    contract: 'task-start-atomic/v1',
    plan_item_ref: need(values.item, '--item'),
    plan,
    task: { title: need(values.title, '--title'), intent: need(values.intent, '--intent') },
    change: { title: need(values['change-title'], '--change-title'), base_line: need(values['base-line'], '--base-line') },
    // Last: the key is printed only once every option is known good (a usage error sends nothing).
    idempotency_key: '',
  };
  body.idempotency_key = key(values);
  const res = await postIdempotent(ctx.client, ctx.client.repoPath(ctx.repo, '/task-start'), body);
  process.stdout.write(ctx.json ? `${JSON.stringify(res)}\n` : `${res.replay ? 'already started (replay)' : 'started'} ${res.task_id} (${res.plan_id}#${res.plan_item_ref}, revision ${res.plan_revision_id}) with change ${res.change_ref} on ${res.change.base_line}\n`);
  return 0;
}
