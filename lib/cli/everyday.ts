// The everyday commands, so a user need not write curl for the basics: `cairn repo
// create|list|show|rules`, `cairn lines`, `cairn log`, `cairn jobs list|show`. Each prints JSON with
// --json or when stdout is not a terminal, a short table or summary on a terminal. --server and
// --repo default as for every client command (./target.ts).
import { CairnClient, ServerError } from '../client/http.js';
import { findWorkingCopy } from '../client/working-copy.js';
import { gitRemotePlace, placeOf } from './target.js';
import { rowsWanted } from './command-context.js';
import { CliUsageError, parseCommandArgs } from './args.js';
import { emit, short, table, useJson, when } from './output.js';

const COMMON = {
  server: { type: 'string' }, repo: { type: 'string' }, json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

function connect(values: { server?: unknown; repo?: unknown }, needRepo: boolean): { client: CairnClient; repo: number } {
  const place = placeOf(values.server, values.repo, 'this command', needRepo);
  return { client: new CairnClient(place.server), repo: place.repo ?? -1 };
}

function repoLine(r: Record<string, any>): string[] {
  return [String(r.repository_index), r.namespace ? `${r.namespace}/${r.repository_name}` : r.repository_name, r.tombstoned ? 'retired' : 'active', when(r.created_at_s)];
}

export const REPO_HELP = `Usage: cairn repo create NAME [--namespace NS] [--policy-flags N] --server URL
       cairn repo list --server URL [--name NAME]
       cairn repo show --server URL --repo N
       cairn repo rules [--server URL] [--repo N]
       cairn repo rules set [--required-approvals N] [--code-owners on|off] [--dismiss-stale on|off]
                            [--require-ci on|off] [--require-resolved-threads on|off]
                            [--land-allowed A,B] [--bypass-allowed A,B]
       cairn repo move N --to NODE --server URL
       cairn repo failover N [--to NODE] --server URL

Register a repository (prints its index), list the registered ones, or show one. "rules" shows
the repository's rules (what a land needs: approvals from someone other than the author, code
owners, CI, resolved threads; who may land and who may bypass); "rules set" changes the rules
named and keeps the others (docs/api.md "Repository rules"). "move" and "failover" place a
repository on another node of a cluster (cairn repo move --help).

Options:
  --server URL        cairn server (http://HOST:PORT or HOST:PORT; default: $CAIRN_SERVER, the working copy's, the git remote's)
  --repo N            repository index or name (show, rules)
  --namespace NS      namespace of a new repository (default "")
  --policy-flags N    policy flags of a new repository (default 0; 1 = main is governed)
  --name NAME         list only repositories with this name
  --json              print JSON (default when stdout is not a terminal)

Options of "rules set":
  --required-approvals N          approvals needed from reviewers other than the author and uploader (0-10)
  --code-owners on|off            each touched path owned in CODEOWNERS needs an owner's approval
  --dismiss-stale on|off          a new patchset with other changes dismisses approvals (off: they carry)
  --require-ci on|off             CI of the current run must pass
  --require-resolved-threads on|off   every comment thread resolved before a land
  --land-allowed A,B              accounts or groups that may land ("" = anyone)
  --bypass-allowed A,B            accounts or groups that may land with --bypass ("" = nobody)
Exit codes: 0 ok, 1 refused by the server (a bad value; nothing changed), 2 usage.
`;

export async function repoCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    ...COMMON, namespace: { type: 'string', default: '' }, 'policy-flags': { type: 'string', default: '0' }, name: { type: 'string' },
    'required-approvals': { type: 'string' }, 'code-owners': { type: 'string' }, 'dismiss-stale': { type: 'string' }, 'require-ci': { type: 'string' },
    'require-resolved-threads': { type: 'string' }, 'land-allowed': { type: 'string' }, 'bypass-allowed': { type: 'string' },
  }, true);
  if (values.help) { process.stdout.write(REPO_HELP); return 0; }
  const [sub, ...rest] = positionals;
  const json = useJson(values.json);
  if (sub === 'create') {
    if (rest.length !== 1) throw new CliUsageError('usage: cairn repo create NAME --server URL');
    const { client } = connect(values, false);
    const flags = Number(values['policy-flags']);
    if (!Number.isInteger(flags) || flags < 0 || flags > 255) throw new CliUsageError('--policy-flags must be an integer from 0 to 255');
    const res = await client.json('POST', '/v1/native/repository-authorities', { repository_name: rest[0], namespace: values.namespace, policy_flags: flags });
    emit(res, json, () => `${res.created === false ? 'already registered' : 'registered'}: repository ${res.repository.repository_index} (${rest[0]})`);
    return 0;
  }
  if (sub === 'list') {
    if (rest.length) throw new CliUsageError('usage: cairn repo list --server URL');
    const { client } = connect(values, false);
    const q = typeof values.name === 'string' ? `?repository_name=${encodeURIComponent(values.name)}` : '';
    const res = await client.json('GET', `/v1/native/repository-authorities${q}`);
    emit(res, json, () => (res.repositories.length ? table([['INDEX', 'NAME', 'STATE', 'CREATED'], ...res.repositories.map(repoLine)]) : 'no repositories'));
    return 0;
  }
  if (sub === 'show') {
    if (rest.length) throw new CliUsageError('usage: cairn repo show --server URL --repo N');
    const { client, repo } = connect(values, true);
    const res = { repository: await client.requireRepository(repo), lines: (await client.collect(client.repoPath(repo, '/lines'), 'lines', Infinity)).lines };
    emit(res, json, () => {
      const r = res.repository as Record<string, any>;
      return [`repository ${r.repository_index}: ${repoLine(r)[1]} (${repoLine(r)[2]}, policy flags ${r.policy_flags}, created ${when(r.created_at_s)})`,
        `lines: ${res.lines.length ? res.lines.map((l: any) => `${l.line_name}@${short(l.head_snapshot_id)}`).join(', ') : 'none'}`].join('\n');
    });
    return 0;
  }
  if (sub === 'rules') {
    const { client, repo } = connect(values, true);
    if (rest.length === 0) {
      const res = await client.json('GET', client.repoPath(repo, '/rules'));
      emit(res, json, () => rulesText(res));
      return 0;
    }
    if (rest.length !== 1 || rest[0] !== 'set') throw new CliUsageError('usage: cairn repo rules [set --required-approvals N ...] (see cairn repo --help)');
    const rules = rulesFromFlags(values);
    if (Object.keys(rules).length === 0) throw new CliUsageError('cairn repo rules set: name at least one rule to set (see cairn repo --help)');
    const res = await client.json('PUT', client.repoPath(repo, '/rules'), { rules });
    emit(res, json, () => rulesText(res));
    return 0;
  }
  throw new CliUsageError(sub === undefined ? 'usage: cairn repo create|list|show|rules (see cairn repo --help)' : `unknown repo subcommand "${sub}" (create, list, show, rules, access)`);
}

const onOff = (v: unknown, flag: string): boolean => {
  if (v === 'on' || v === 'true') return true;
  if (v === 'off' || v === 'false') return false;
  throw new CliUsageError(`${flag} must be on or off`);
};
const nameList = (v: string): string[] => v.split(',').map((s) => s.trim()).filter((s) => s !== '');

/** The rules a `rules set` names (only those given). */
function rulesFromFlags(values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const n = values['required-approvals'];
  if (typeof n === 'string') {
    if (!/^(0|[1-9][0-9]?)$/.test(n)) throw new CliUsageError('--required-approvals must be an integer from 0 to 10');
    out.required_approvals = Number(n);
  }
  for (const [flag, field] of [['code-owners', 'require_code_owners'], ['dismiss-stale', 'dismiss_stale_approvals'], ['require-ci', 'require_ci'], ['require-resolved-threads', 'require_resolved_threads']] as const) {
    if (values[flag] !== undefined) out[field] = onOff(values[flag], `--${flag}`);
  }
  if (typeof values['land-allowed'] === 'string') out.land_allowed = nameList(values['land-allowed']);
  if (typeof values['bypass-allowed'] === 'string') out.bypass_allowed = nameList(values['bypass-allowed']);
  return out;
}

function rulesText(res: Record<string, any>): string {
  const r = res.rules;
  const on = (b: boolean) => (b ? 'on' : 'off');
  return table([
    ['RULE', 'VALUE'],
    ['required approvals', `${r.required_approvals}${r.required_approvals ? ' (from someone other than the author and uploader)' : ''}`],
    ['code owners', on(r.require_code_owners)],
    ['dismiss stale approvals', on(r.dismiss_stale_approvals)],
    ['require CI', on(r.require_ci)],
    ['require resolved threads', on(r.require_resolved_threads)],
    ['land allowed', r.land_allowed.length ? r.land_allowed.join(', ') : 'anyone'],
    ['bypass allowed', r.bypass_allowed.length ? r.bypass_allowed.join(', ') : 'nobody'],
  ]) + `\n${res.updated_at_s === null ? 'never set: the defaults apply' : `set ${when(res.updated_at_s)}${res.updated_by ? ` by ${res.updated_by}` : ''}`}`;
}

export const LINES_HELP = `Usage: cairn lines --server URL --repo N

List the repository's lines with their head snapshots, status and last move.

Options:
  --server URL   cairn server (default: $CAIRN_SERVER, the working copy's, the git remote's)
  --repo N       repository index or name (default: the working copy's or git remote's)
  --json         print JSON (default when stdout is not a terminal)
`;

export async function linesCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, COMMON, true);
  if (values.help) { process.stdout.write(LINES_HELP); return 0; }
  if (positionals.length) throw new CliUsageError('lines takes no arguments');
  const { client, repo } = connect(values, true);
  await client.requireRepository(repo);
  const res = await client.collect(client.repoPath(repo, '/lines'), 'lines', Infinity);
  emit(res, useJson(values.json), () => (res.lines.length
    ? table([['LINE', 'HEAD', 'STATUS', 'UPDATED'], ...res.lines.map((l: any) => [l.line_name, short(l.head_snapshot_id), l.status, when(l.updated_at_s)])])
    : 'no lines'));
  return 0;
}

export const LOG_HELP = `Usage: cairn log --server URL --repo N (--line NAME | --snapshot ID) [--limit N]

Snapshot history from the line's head (or a snapshot) back through its parents, newest first:
id, time and message of each.

Options:
  --server URL     cairn server (default: $CAIRN_SERVER, the working copy's, the git remote's)
  --repo N         repository index or name (default: the working copy's or git remote's)
  --line NAME      start at this line's head (default: the working copy's line, or the git remote's)
  --snapshot ID    start at this snapshot
  --limit N        at most N snapshots (default 50)
  --json           print JSON (default when stdout is not a terminal)
`;

export async function logCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { ...COMMON, line: { type: 'string' }, snapshot: { type: 'string' }, limit: { type: 'string', default: '50' } }, true);
  if (values.help) { process.stdout.write(LOG_HELP); return 0; }
  if (positionals.length) throw new CliUsageError('log takes no arguments');
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new CliUsageError('--limit must be a positive integer');
  const { client, repo } = connect(values, true);
  let head = values.snapshot as string | undefined;
  let lineName = values.line as string | undefined;
  // The working copy's line, else the git remote's (…/git/LINE.git); checked before anything is sent.
  if (!head && !lineName) lineName = findWorkingCopy(process.cwd())?.config.line ?? gitRemotePlace()?.line ?? undefined;
  if (!head && !lineName) throw new CliUsageError('give --line NAME or --snapshot ID');
  await client.requireRepository(repo);
  if (!head) {
    if (!lineName) throw new CliUsageError('give --line NAME or --snapshot ID');
    const line = await client.lineOrNull(repo, lineName);
    if (!line) throw new Error(`line ${lineName} does not exist in repository ${repo} on ${client.base}`);
    head = line.head_snapshot_id ?? undefined;
  }
  let snapshots: any[] = [];
  if (head) {
    // The pull manifest lists the whole ancestry (parents first) with messages and times.
    const manifest = await client.json('POST', client.repoPath(repo, '/remote-sync/zstd-bulk/pull-manifests'), {
      contract: 'svc.remote_sync.zstd_bulk.pull_manifest.request.v1', head_snapshot_id: head, have_snapshot_ids: [],
    }).catch((err) => {
      if (err instanceof ServerError && err.status === 404) throw new Error(`snapshot ${head} is not present in repository ${repo} on ${client.base}`);
      throw err;
    });
    const byId = new Map<string, any>(manifest.snapshots.map((s: any) => [s.snapshot_id, s]));
    // First-parent walk from the head.
    for (let id: string | undefined = head; id && snapshots.length < limit; id = byId.get(id)?.parent_snapshot_ids[0]) {
      const s = byId.get(id);
      if (!s) break;
      snapshots.push({ snapshot_id: s.snapshot_id, parent_snapshot_ids: s.parent_snapshot_ids, created_at_s: s.created_at_s, message: s.message, root_tree_id: s.root_tree_id });
    }
  }
  const res = { line: lineName ?? null, head_snapshot_id: head ?? null, snapshots };
  emit(res, useJson(values.json), () => (snapshots.length
    ? snapshots.map((s) => `${short(s.snapshot_id)}  ${when(s.created_at_s)}  ${s.message ?? '(no message)'}`).join('\n')
    : 'no snapshots'));
  return 0;
}

export const JOBS_HELP = `Usage: cairn jobs list --server URL --repo N [--state queued|running|succeeded|failed] [--limit N | --all]
       cairn jobs show --server URL --repo N JOB

List a repository's worker jobs (CI runs) or show one with its outcome and error.

Options:
  --server URL   cairn server (default: $CAIRN_SERVER, the working copy's, the git remote's)
  --repo N       repository index or name (default: the working copy's or git remote's)
  --state S      only jobs in this state
  --limit N      at most N jobs, newest first (default 50; pages are followed as needed)
  --all          every job
  --json         print JSON (default when stdout is not a terminal)
`;

const STATES: Record<string, number> = { queued: 1, running: 2, succeeded: 3, failed: 4 };

export async function jobsCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { ...COMMON, state: { type: 'string' }, limit: { type: 'string' }, all: { type: 'boolean', default: false } }, true);
  if (values.help) { process.stdout.write(JOBS_HELP); return 0; }
  const [sub, ...rest] = positionals;
  const json = useJson(values.json);
  const { client, repo } = connect(values, true);
  if (sub === 'list') {
    if (rest.length) throw new CliUsageError('usage: cairn jobs list --server URL --repo N');
    const q = new URLSearchParams();
    if (values.state !== undefined) {
      const k = STATES[String(values.state)];
      if (!k) throw new CliUsageError('--state must be queued, running, succeeded or failed');
      q.set('state_kind', String(k));
    }
    await client.requireRepository(repo);
    const res = await client.collect(client.repoPath(repo, `/worker-jobs${q.size ? `?${q}` : ''}`), 'jobs', rowsWanted(values, 50));
    emit(res, json, () => (res.jobs.length
      ? table([['JOB', 'TYPE', 'STATE', 'OUTCOME', 'ATTEMPTS', 'SNAPSHOT', 'CREATED'], ...res.jobs.map((j: any) => [String(j.worker_job_index), String(j.job_type ?? j.job_kind), j.state, j.outcome ?? '-', `${j.attempt_count}/${j.max_attempts}`, short(j.snapshot_id), when(j.created_at_s)])])
      : 'no jobs'));
    return 0;
  }
  if (sub === 'show') {
    if (rest.length !== 1 || !/^\d+$/.test(rest[0])) throw new CliUsageError('usage: cairn jobs show --server URL --repo N JOB');
    await client.requireRepository(repo);
    const res = await client.json('GET', client.repoPath(repo, `/worker-jobs/${rest[0]}`)).catch((err) => {
      if (err instanceof ServerError && err.status === 404) throw new Error(`job ${rest[0]} does not exist in repository ${repo} on ${client.base}`);
      throw err;
    });
    const j = res.job;
    emit(res, json, () => [`job ${j.worker_job_index} (${j.job_type ?? j.job_kind}): ${j.state}${j.outcome ? `, ${j.outcome}` : ''}`,
      `snapshot ${short(j.snapshot_id)}, attempt ${j.attempt_count}/${j.max_attempts}, created ${when(j.created_at_s)}`,
      ...(j.error ? ['error:', String(j.error)] : [])].join('\n'));
    return 0;
  }
  throw new CliUsageError(sub === undefined ? 'usage: cairn jobs list|show (see cairn jobs --help)' : `unknown jobs subcommand "${sub}" (list, show)`);
}
