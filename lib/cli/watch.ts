// `cairn watch`: print a server's events as they happen (docs/guide.md "Watching events").
// One repository's feed with --repo, the global feed without. Readable lines on a terminal,
// the server's JSON, one object per line, when piped or with --json. Ctrl-C ends it with 0.
import { normalizeServerUrl } from '../client/http.js';
import { placeOf, serverOf } from './target.js';
import { FeedConnectError, FeedGoneError, FeedRefusedError, FeedUnavailableError, GLOBAL_FEED, followFeed, repositoryFeed, type FeedEvent } from '../client/events.js';
import { CliUsageError, parseCommandArgs } from './args.js';
import { useJson } from './output.js';

export const WATCH_HELP = `Usage: cairn watch --server URL [--repo N] [--types LIST] [--since ID] [--json]

Print the server's events as they happen, until Ctrl-C. With --repo, that repository's
events; without, every repository's and the registry's (repository.registered, ...). On a
terminal, one line per event: time, type, repository and the ids it names. Piped or with
--json, one JSON object per line, as the server sent it (its "id" is what --since takes).
A dropped connection is resumed where it stopped, with no event lost or repeated; notes
about it go to stderr.

Options:
  --server URL    cairn server (default: $CAIRN_SERVER, the working copy's, the git remote's)
  --repo N        one repository's events (default: every repository and the registry)
  --types LIST    only these types, comma-separated: exact (review.recorded) or a
                  prefix (job.*)
  --since ID      first the kept events after ID, then the new ones: a sequence number
                  with --repo, a global id (<at_us>-<stream>-<seq>) without. Default: new
                  events only
  --json          JSON lines (the default when stdout is not a terminal)

Exit status: 0 after Ctrl-C; 7 when the events after --since (or after the point a dropped
connection resumes from) are no longer all kept: the message names the --since of the
oldest kept event; 1 when the server cannot be reached, has no such feed or refuses you
(401: the message says how to sign in; 403); 2 usage.
`;

/** 410 from a feed, in the user's words: exit code 7 (lib/cli/main.ts). */
export class EventsGoneError extends Error {}

const SNAPSHOT_KEYS = new Set(['head_snapshot_id', 'snapshot_id', 'landed_snapshot_id']);

/** The ids an event names, compactly: `task-1.change-2 ps task-1.change-2.ps-1`, `job 4 kind 7`, `line main 1a2b3c4d5e6f`. */
export function eventSummary(e: Pick<FeedEvent, 'data' | 'repository_index'>): string {
  const d = e.data ?? {};
  const parts: string[] = [];
  const hasRef = typeof d.change_ref === 'string';
  // change-1.ps-2 names its change already
  const psNamesChange = typeof d.patchset_id === 'string' && typeof d.change_id === 'string' && d.patchset_id.startsWith(`${d.change_id}.`);
  for (const [k, v] of Object.entries(d)) {
    if (v === null || v === undefined || v === '') continue;
    if (hasRef && (k === 'change_id' || k === 'task_id')) continue; // the ref names both
    if (psNamesChange && k === 'change_id') continue;
    if (k === 'repository_index' && v === e.repository_index) continue;
    const text = String(v);
    if (k === 'worker_job_index') parts.push(`job ${text}`);
    else if (k === 'kind') parts.push(`kind ${text}`);
    else if (k === 'line') parts.push(`line ${text}`);
    else if (k === 'target_line') parts.push(`onto ${text}`);
    else if (SNAPSHOT_KEYS.has(k)) parts.push(text.slice(0, 12));
    else if (k === 'previous_head_snapshot_id') parts.push(`(was ${text.slice(0, 12)})`);
    else if (k === 'previous_status') parts.push(`(was ${text})`);
    else if (/_(id|ref)$/.test(k)) parts.push(text);
    else parts.push(`${k}=${text}`);
  }
  return parts.join('  ');
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/** `12:03:04  change.created         repo 3  task-1.change-2` (local time). */
export function readableEvent(e: FeedEvent): string {
  const t = new Date(Math.floor(e.at_us / 1000));
  const time = `${pad2(t.getHours())}:${pad2(t.getMinutes())}:${pad2(t.getSeconds())}`;
  const summary = eventSummary(e);
  return `${time}  ${e.type.padEnd(22)} repo ${e.repository_index}${summary ? `  ${summary}` : ''}`;
}

/** What to say for a 410, with the --since that starts at the oldest kept event. */
export function goneMessage(err: FeedGoneError, repo: number | null): string {
  const b = err.body;
  const after = err.resumeId !== undefined ? ` (asked for those after ${err.resumeId})` : '';
  if (typeof b.oldest_seq === 'number' && repo !== null) {
    const oldest = b.oldest_seq;
    return `events before seq ${oldest} of repository ${repo} are no longer kept${after}; resume with --since ${Math.max(0, oldest - 1)} (from the oldest kept), or leave out --since to follow new events only`;
  }
  const oldestId = typeof b.oldest_id === 'string' ? b.oldest_id : typeof b.resume_id === 'string' ? b.resume_id : null;
  if (oldestId !== null) {
    return `those events are no longer kept${after}; resume with --since ${oldestId} (from the oldest kept), or leave out --since to follow new events only`;
  }
  return `those events are no longer kept${after} (${err.message}); leave out --since to follow new events only`;
}

export async function watchCommand(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, {
    server: { type: 'string' }, repo: { type: 'string' }, types: { type: 'string' }, since: { type: 'string' },
    json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) { process.stdout.write(WATCH_HELP); return 0; }
  // Without --repo: every repository's events (the working copy's repository is not implied here).
  const server = serverOf(values.server, 'cairn watch');
  let repo: number | null = null;
  if (typeof values.repo === 'string') repo = placeOf(server, values.repo).repo;
  let types: string[] | undefined;
  if (typeof values.types === 'string') {
    types = values.types.split(',').map((t) => t.trim()).filter((t) => t !== '');
    const bad = types.find((t) => !/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*(\.\*)?$/.test(t));
    if (!types.length || bad !== undefined) throw new CliUsageError(`--types takes event types separated by commas, such as review.recorded,job.*${bad !== undefined ? ` (not "${bad}")` : ''}`);
  }
  const since = typeof values.since === 'string' ? values.since : undefined;
  if (since !== undefined) {
    if (repo !== null && !/^(0|[1-9][0-9]*)$/.test(since)) throw new CliUsageError('--since takes a sequence number with --repo (the "seq" or "id" of an event of that repository)');
    if (repo === null && !/^[0-9]+(-([0-9]+|registry)-[0-9]+)?$/.test(since)) throw new CliUsageError('--since takes a global event id without --repo (<at_us>-<stream>-<seq>, the "id" of a JSON line)');
  }
  const json = useJson(values.json);

  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // A reader that went away (`cairn watch | head -3`) ends the watch quietly.
  const onStdoutError = () => stop.abort();
  process.stdout.on('error', onStdoutError);
  const note = (text: string) => process.stderr.write(`cairn watch: ${text}\n`);
  const what = repo === null ? 'every repository' : `repository ${repo}`;
  let down = false;
  try {
    await followFeed({
      server,
      path: repo === null ? GLOBAL_FEED : repositoryFeed(repo),
      types,
      since,
      signal: stop.signal,
      failBeforeOpen: true,
      onStatus: (s) => {
        if (s.state === 'live') {
          if (down) note('connected again; resuming after the last event printed');
          else note(`watching ${what}${types ? ` (${types.join(', ')})` : ''}; Ctrl-C to stop`);
          down = false;
        } else {
          down = true;
          note(`${s.reason}; trying again in ${Math.max(1, Math.round(s.retryInMs / 1000))} s`);
        }
      },
      onEvent: (e) => {
        if (stop.signal.aborted) return;
        const ok = process.stdout.write(json ? `${JSON.stringify(e)}\n` : `${readableEvent(e)}\n`);
        if (!ok) {
          return new Promise<void>((resolve) => {
            process.stdout.once('drain', resolve);
            stop.signal.addEventListener('abort', () => resolve(), { once: true });
          });
        }
      },
    });
  } catch (err) {
    if (err instanceof FeedGoneError) throw new EventsGoneError(goneMessage(err, repo));
    // Not signed in, or not allowed: exit 1 with how to sign in (main.ts), not a usage error.
    if (err instanceof FeedRefusedError && (err.status === 401 || err.status === 403)) {
      throw Object.assign(new Error(`the server refused the request: HTTP ${err.status}: ${err.message}`), { status: err.status, body: err.body, server: normalizeServerUrl(server) });
    }
    if (err instanceof FeedRefusedError) throw new CliUsageError(`the server refused the request: ${err.message}`);
    if (err instanceof FeedUnavailableError) {
      throw new Error(err.status === 404 && repo !== null ? `no event feed for repository ${repo} on ${server}${typeof err.body?.error === 'string' ? ` (${err.body.error})` : ''}` : `${server} has no event feed (${err.message})`);
    }
    if (err instanceof FeedConnectError) throw new Error(err.message);
    throw err;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.stdout.off('error', onStdoutError);
  }
  return 0;
}
