// `cairn stack [CHANGE]`: the stack a change stands in (docs/git.md "Stacks"), a thin client of
// GET …/changes/{ref} (its `stack` member). Without CHANGE, the change of the checkout's HEAD
// commit (the one a push for review made of it). One JSON object with --json or when stdout is
// not a terminal; on a terminal, the chain top first (as `git log` reads), this change marked.
import { spawnSync } from 'node:child_process';
import { ServerError } from '../client/http.js';
import { CliUsageError, parseCommandArgs } from './args.js';
import { COMMON, common, context, print, seg, type Ctx } from './command-context.js';
import { table } from './output.js';

type Json = Record<string, any>;

export const STACK_HELP = `Usage:
  cairn stack [CHANGE] [--server URL --repo N] [--json]

The stack CHANGE stands in: the changes below it (each based on the patchset of the one below,
as a series of commits pushed with git push origin HEAD:refs/for/main makes them) and above it,
top first, with each change's status and selected patchset. "*" marks CHANGE; "outdated" says
the change below has a newer patchset than the one this change is based on (push the series
again). A change that stands alone has no stack.
Without CHANGE: the change of the commit at HEAD of the git checkout in the current directory.
CHANGE is a change id (change-3) or its full ref (task-1.change-3).
Exit codes: 0 ok, 1 the server refused, 2 usage.

${COMMON}`;

/** The readable form: the chain top first, this change marked. */
export function stackText(change: Json): string {
  const stack = change.stack as Json[];
  if (stack.length === 0) return `${change.change_ref} stands alone: no change below or above it`;
  const rows = [...stack].reverse().map((e) => [
    e.this ? '*' : ' ',
    e.change_id,
    e.status,
    e.selected_patchset_id ?? '-',
    `${e.title}${e.outdated ? `  (outdated: based on ${e.based_on_patchset_id})` : ''}`,
  ]);
  const below = stack.filter((e) => !e.this && stack.indexOf(e) < stack.findIndex((x) => x.this)).length;
  return `${table(rows)}\n${stack.length} changes; ${change.change_id} is ${below === 0 ? 'the bottom' : `${below} up from the bottom`} (land bottom first, or queue the top: cairn queue add ${stack.at(-1)!.change_id})`;
}

/** The change a commit pushed for review became: GET git/commits/{id}'s change_id. */
async function changeOfHead(ctx: Ctx): Promise<string> {
  const head = spawnSync('git', ['rev-parse', '--verify', '-q', 'HEAD'], { encoding: 'utf8' });
  const id = head.status === 0 ? head.stdout.trim() : '';
  if (!/^[0-9a-f]{40}$/.test(id)) throw new CliUsageError('name a CHANGE (the current directory is not a git checkout with a commit at HEAD)');
  try {
    const res = await ctx.client.json('GET', ctx.client.repoPath(ctx.repo, `/git/commits/${id}`));
    if (typeof res.git_commit?.change_id === 'string') return res.git_commit.change_id;
  } catch (err) {
    if (!(err instanceof ServerError) || err.status !== 404) throw err;
  }
  throw new CliUsageError(`HEAD (${id.slice(0, 12)}) is not a commit pushed for review: push it (git push origin HEAD:refs/for/main) or name a CHANGE`);
}

export async function stackCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { ...common } as const, true);
  if (values.help) { process.stdout.write(STACK_HELP); return 0; }
  if (positionals.length > 1) throw new CliUsageError('give at most one CHANGE');
  const ctx = context(values);
  const ref = positionals[0] ?? (await changeOfHead(ctx));
  let res: Json;
  try {
    res = await ctx.client.json('GET', ctx.client.repoPath(ctx.repo, `/changes/${seg(ref)}`));
  } catch (err) {
    if (err instanceof ServerError && err.status === 404) throw new Error(`${err.body?.error ?? err.message} (HTTP 404); \`cairn change list\` lists the changes`);
    throw err;
  }
  return print(ctx, { change_id: res.change.change_id, change_ref: res.change.change_ref, stack: res.change.stack }, () => stackText(res.change));
}
