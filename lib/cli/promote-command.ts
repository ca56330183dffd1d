// `cairn promote --server URL`: promote a standby (serve --follow) to the archive's writer.
// `cairn promote FILE`: send a history promotion (spec: "History promotion prepare body") read
// from a JSON file in the spec's shape, and print the receipt (docs/api.md "History promotion").
// Building the body from a working copy's local history is not implemented: local lands do
// not exist in this client.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CairnClient } from '../client/http.js';
import { parseU32 } from '../domain/repository.js';
import { CliUsageError, parseCommandArgs } from './args.js';

export const PROMOTE_HELP = `Usage:
  cairn promote --server URL [--json]
  cairn promote --server URL --repo N [--json] FILE

Without FILE: promote a standby (a server started with cairn serve --follow) to the writer of
its archive (POST /archive/promote). It applies the newest manifests, claims the next archive
generation — a writer still shipping under an older one stops at its next manifest — turns
writable and starts shipping to the same archive. Repoint clients to it afterwards
(docs/operations.md "Standby and failover").

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
    help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) { process.stdout.write(PROMOTE_HELP); return 0; }
  if (typeof values.server !== 'string' || values.server === '') throw new CliUsageError('--server is required');
  if (positionals.length === 0 && values.repo === undefined) return promoteStandby(values.server, values.json === true);
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

/** `cairn promote --server URL`: the standby's promotion to writer. */
async function promoteStandby(server: string, jsonFlag: boolean): Promise<number> {
  const client = new CairnClient(server);
  const res: Json = await client.json('POST', '/archive/promote');
  if (jsonFlag || process.stdout.isTTY !== true) {
    process.stdout.write(`${JSON.stringify(res)}\n`);
    return 0;
  }
  process.stdout.write(`${server} now writes ${res.url} as generation ${res.generation} (${res.repositories.length} repositories at their newest manifest); repoint clients to it\n`);
  return 0;
}
