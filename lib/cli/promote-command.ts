// `cairn promote --server URL`: promote a standby (serve --follow) to the archive's writer.
// `cairn promote FILE`: send a history promotion (spec: "History promotion prepare body") read
// from a JSON file in the spec's shape, and print the receipt (docs/api.md "History promotion").
// Building the body from a working copy's local history is not implemented: local lands do
// not exist in this client.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CairnClient, DeadlineError, ServerError } from '../client/http.js';
import { parseU32 } from '../domain/repository.js';
import { CliUsageError, parseCommandArgs } from './args.js';

export const PROMOTE_HELP = `Usage:
  cairn promote --server URL [--secret-file FILE] [--timeout SECONDS] [--json]
  cairn promote --server URL --switchover --from OLD_URL [--secret-file FILE]
                [--from-secret-file FILE] [--handover-timeout SECONDS] [--timeout SECONDS] [--json]
  cairn promote --server URL --repo N [--json] FILE

Without FILE: promote a standby (a server started with cairn serve --follow) to the writer of
its archive (POST /archive/promote). It applies the newest manifests, claims the next archive
generation — a writer still shipping under an older one stops at its next manifest — turns
writable and starts shipping to the same archive. Repoint clients to it afterwards
(docs/operations.md "Standby and failover"). Every object-store call of the promotion has a
timeout, so it ends; when it fails the standby still follows, read-only, and the message says
whether the claim may have been stored. --timeout (default 300) bounds the wait: the command
then hangs up — a standby that has not claimed yet stops there — waits for the standby to
settle and says which state it is in (promoted, or still following).

With --switchover --from OLD_URL: a planned switchover without loss (docs/operations.md
"Planned switchover"). The old writer (serve --archive at OLD_URL) stops accepting writes (503
naming the standby), lets the writes under way finish, ships everything and records that it
handed over (POST /archive/handover; it stays read-only, restarts included, until cairn archive
reclaim); then the standby applies manifests until it holds exactly the commits the old writer
acknowledged, claims the next generation and turns writable (POST /archive/takeover). It prints
how long writes were refused and the commits taken over. --handover-timeout (default 60) bounds
the old writer's part: when it cannot ship everything in time (the store down) it accepts writes
again and the standby is not promoted. Running the command again after a failed promotion is
safe: the handover answers the same. --from-secret-file (default: the --secret-file) is the old
writer's promotion secret (its serve --promote-secret-file).

A promotion needs the standby's promotion secret when it has one (serve --promote-secret-file):
--secret-file FILE (or CAIRN_PROMOTE_SECRET_FILE=FILE) sends FILE's first line as
Authorization: Bearer. Without a secret the standby accepts a promotion only from its own
machine on a loopback listener (docs/operations.md "Who may promote"). The secret travels as
it is: over plain http, use it on the standby's machine or a private network.

With FILE: publish an offline history as remote tasks and changes plus one aggregate patchset on the last
entry's change (POST {repo}/history-promotion:prepare). FILE holds the request body as JSON
(contract "history-promotion-prepare/v1", idempotency_key, target_line, base_snapshot_id,
revision_snapshot_id, author_mode, summary, entries). Sending the same file again returns the
recorded receipt ("replay": true). Building FILE from a working copy is not implemented.
`;

type Json = Record<string, any>;

export async function promoteCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    server: { type: 'string' },
    repo: { type: 'string' },
    json: { type: 'boolean', default: false },
    timeout: { type: 'string' },
    'secret-file': { type: 'string' },
    switchover: { type: 'boolean', default: false },
    from: { type: 'string' },
    'from-secret-file': { type: 'string' },
    'handover-timeout': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) { process.stdout.write(PROMOTE_HELP); return 0; }
  if (typeof values.server !== 'string' || values.server === '') throw new CliUsageError('--server is required');
  let timeoutS = 300;
  if (values.timeout !== undefined) {
    if (!/^[1-9][0-9]{0,5}$/.test(String(values.timeout))) throw new CliUsageError('--timeout must be a whole number of seconds (1 to 999999)');
    timeoutS = Number(values.timeout);
  }
  const switchover = values.switchover === true;
  if (!switchover && (values.from !== undefined || values['from-secret-file'] !== undefined || values['handover-timeout'] !== undefined)) {
    throw new CliUsageError('--from, --from-secret-file and --handover-timeout apply to a switchover (--switchover)');
  }
  if (positionals.length === 0 && values.repo === undefined) {
    const secretFile = values['secret-file'] ?? process.env.CAIRN_PROMOTE_SECRET_FILE;
    const secret = typeof secretFile === 'string' && secretFile !== '' ? await readSecret(values['secret-file'] !== undefined ? '--secret-file' : 'CAIRN_PROMOTE_SECRET_FILE', secretFile) : null;
    if (!switchover) return promoteStandby(values.server, values.json === true, timeoutS, secret);
    if (typeof values.from !== 'string' || values.from === '') throw new CliUsageError('--switchover needs --from OLD_URL (the writer that hands the archive over)');
    const fromSecret = typeof values['from-secret-file'] === 'string' ? await readSecret('--from-secret-file', values['from-secret-file']) : secret;
    let handoverS = 60;
    if (values['handover-timeout'] !== undefined) {
      if (!/^[1-9][0-9]{0,3}$/.test(String(values['handover-timeout'])) || Number(values['handover-timeout']) > 3600) throw new CliUsageError('--handover-timeout must be a whole number of seconds (1 to 3600)');
      handoverS = Number(values['handover-timeout']);
    }
    return switchoverStandby({ server: values.server, from: values.from, json: values.json === true, timeoutS, handoverS, secret, fromSecret });
  }
  if (switchover) throw new CliUsageError('--switchover applies to the promotion of a standby (without --repo and FILE)');
  if (values.timeout !== undefined) throw new CliUsageError('--timeout applies to the promotion of a standby (without --repo and FILE)');
  if (values['secret-file'] !== undefined) throw new CliUsageError('--secret-file applies to the promotion of a standby (without --repo and FILE)');
  if (typeof values.repo !== 'string') throw new CliUsageError('--repo is required');
  if (positionals.length !== 1) throw new CliUsageError('give exactly one FILE (the promotion request as JSON)');
  let repo: number;
  try {
    repo = parseU32(values.repo, '--repo');
  } catch {
    throw new CliUsageError('--repo must be a repository index (unsigned integer)');
  }
  const file = path.resolve(positionals[0]);
  let body: unknown;
  try {
    body = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new CliUsageError(`${positionals[0]}: not a readable JSON file (${(err as Error).message})`);
  }
  const client = new CairnClient(values.server);
  const res: Json = await client.json('POST', client.repoPath(repo, '/history-promotion:prepare'), body);
  const json = values.json === true || process.stdout.isTTY !== true;
  if (json) {
    process.stdout.write(`${JSON.stringify(res)}\n`);
    return 0;
  }
  const lines = [
    `${res.replay ? 'already promoted' : 'promoted'} as ${res.promotion_id}: patchset ${res.patchset_id} on ${res.change_ref} (ready for task-land onto ${res.target_line})`,
    ...res.history_promotion.entries.map((e: Json) => `  ${e.local_change_ref} -> ${e.remote_change_ref}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

/** A promotion secret file's first line, trimmed (its text never in a message). */
async function readSecret(source: string, file: string): Promise<string> {
  let secret: string;
  try {
    secret = (await readFile(file, 'utf8')).split(/\r?\n/)[0]!.trim();
  } catch (err) {
    throw new CliUsageError(`${source}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (secret === '' || /\s/.test(secret)) throw new CliUsageError(`${source}: the first line of ${file} must hold the secret (no spaces)`);
  return secret;
}

/** `cairn promote --server URL`: the standby's promotion to writer. */
async function promoteStandby(server: string, jsonFlag: boolean, timeoutS: number, secret: string | null): Promise<number> {
  // No retry of a refusal: a failed promotion is reported, not tried again behind the operator's back.
  const client = new CairnClient(server, 0);
  // Only the promotion carries the secret (the /healthz reads after a timeout have their own client).
  if (secret !== null) client.standing.authorization = `Bearer ${secret}`;
  client.signal = AbortSignal.timeout(timeoutS * 1000);
  let res: Json;
  try {
    res = await client.json('POST', '/archive/promote');
  } catch (err) {
    if (!(err instanceof DeadlineError)) throw err;
    // Hung up: a standby that had not claimed yet stops before the claim. Say where it ended.
    const state = await settledFollowState(server);
    const where = state === null ? `its state is unknown (${server} does not answer GET /healthz): check it before trying again`
      : state.state === 'promoted' ? `it was promoted all the same (generation ${state.generation}): it writes now; repoint clients to it`
        : `it was not promoted: it still follows the archive read-only (state ${state.state}${state.last_error ? `: ${state.last_error}` : ''})`;
    throw new Error(`gave up after ${timeoutS} s waiting for ${server} to promote; ${where}`);
  }
  if (jsonFlag || process.stdout.isTTY !== true) {
    process.stdout.write(`${JSON.stringify(res)}\n`);
    return 0;
  }
  process.stdout.write(`${server} now writes ${res.url} as generation ${res.generation} (${res.repositories.length} ${res.repositories.length === 1 ? 'repository' : 'repositories'} at their newest manifest); repoint clients to it\n`);
  return 0;
}

/**
 * `cairn promote --switchover`: the old writer's handover, then the standby's promotion at
 * exactly the commits it handed over. The pause printed is from the handover's request to the
 * standby's answer: no write was accepted anywhere in between.
 */
async function switchoverStandby(o: { server: string; from: string; json: boolean; timeoutS: number; handoverS: number; secret: string | null; fromSecret: string | null }): Promise<number> {
  const old = new CairnClient(o.from, 0);
  if (o.fromSecret !== null) old.standing.authorization = `Bearer ${o.fromSecret}`;
  old.signal = AbortSignal.timeout((o.handoverS + 30) * 1000);
  const standby = new CairnClient(o.server, 0);
  if (o.secret !== null) standby.standing.authorization = `Bearer ${o.secret}`;
  standby.signal = AbortSignal.timeout(o.timeoutS * 1000);
  const started = process.hrtime.bigint();
  let handover: Json;
  try {
    handover = await old.json('POST', '/archive/handover', { successor: standby.base, timeout_seconds: o.handoverS });
  } catch (err) {
    throw new Error(`${old.base} did not hand the archive over, and ${standby.base} was not promoted: ${(err as Error).message}`);
  }
  const handedMs = Number(process.hrtime.bigint() - started) / 1e6;
  let promotion: Json;
  try {
    promotion = await standby.json('POST', '/archive/takeover', {
      archive_id: handover.archive_id,
      repositories: handover.repositories.map((r: Json) => ({ repository: r.repository, commit: r.commit })),
      access_log_length: handover.access_log_length,
    });
  } catch (err) {
    let where = '';
    if (err instanceof DeadlineError) {
      const state = await settledFollowState(o.server);
      where = state?.state === 'promoted' ? ` (it was promoted all the same, generation ${state.generation}: repoint clients to it)` : state ? ` (it still follows, state ${state.state})` : ' (its state is unknown)';
    }
    throw new Error(`${old.base} handed the archive over and accepts no more writes, but ${standby.base} was not promoted${where}: ${(err as Error).message}; run the same command again (the handover answers the same), or take the old writer back with cairn archive reclaim --data DIR and a restart`);
  }
  const pauseMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (o.json || process.stdout.isTTY !== true) {
    process.stdout.write(`${JSON.stringify({ handover, promotion, pause_ms: Math.round(pauseMs), handover_ms: Math.round(handedMs) })}\n`);
    return 0;
  }
  const commits = handover.repositories.map((r: Json) => `  repository ${r.repository}: commit ${r.commit}`);
  process.stdout.write([
    `${old.base} handed ${handover.url} over (generation ${handover.generation}); it accepts no more writes`,
    `${standby.base} now writes ${promotion.url} as generation ${promotion.generation}, at exactly the commits handed over:`,
    ...commits,
    `writes were refused for ${(pauseMs / 1000).toFixed(2)} s (the handover ${(handedMs / 1000).toFixed(2)} s, the promotion ${((pauseMs - handedMs) / 1000).toFixed(2)} s); repoint clients to ${standby.base}`,
  ].join('\n') + '\n');
  return 0;
}

/** The standby's follow state once it is no longer "promoting" (bounded wait), or null when it does not say. */
async function settledFollowState(server: string): Promise<{ state: string; generation: string | null; last_error: string | null } | null> {
  const client = new CairnClient(server, 0);
  const deadline = Date.now() + 120_000;
  for (;;) {
    client.signal = AbortSignal.timeout(10_000);
    try {
      const follow = (await client.json<{ follow?: { state: string; generation: string | null; last_error: string | null } }>('GET', '/healthz')).follow;
      if (!follow) return null;
      if (follow.state !== 'promoting' || Date.now() > deadline) return follow;
    } catch (err) {
      if (!(err instanceof DeadlineError || err instanceof ServerError) || Date.now() > deadline) return null;
    }
    await sleep(500);
  }
}
