// `cairn runner`: an external CI runner over the worker-job claim protocol.
import { serverOf } from './target.js';
import path from 'node:path';
import { defaultWorkdir, runRunner, stopSignal } from '../client/runner.js';
import { parseU32 } from '../domain/repository.js';
import { stallSecondsFromEnv } from '../client/stall.js';
import { CliUsageError, parseCommandArgs, stallSeconds as cliStallSeconds } from './args.js';

export const RUNNER_HELP = `Usage: cairn runner --server URL [--repo N ...] [--kinds 7,11] [--once] [--workdir DIR]

Claim CI jobs and run them. For each job: materialize its snapshot into a fresh workspace under
--workdir (never the current directory), run the declared argv exactly (ci/run.sh with sh;
ci/run.ps1 with pwsh on Windows) with the declared timeout and no shell, heartbeat at a third
of the lease, then complete with the result (succeeded, command_failed or timed_out; tests pass
only when the command succeeded and every suite in ci/results.json passed), or fail as
retryable on infrastructure errors.

SIGTERM or SIGINT, at any stage (claim, fetch, command, report), fails the current job as
retryable saying so on stderr, then exits (the command's process group gets SIGTERM, then
SIGKILL 2 s later; a claim or a report in flight gets 5 s to be answered); a second signal
exits at once (exit 1), leaving the job to its lease. A fetch that makes no progress (no
bytes, no file written) for --stall-seconds, a claim or report unanswered that long, or a
command still running 10 s past its timeout, fails the attempt as retryable with the reason;
heartbeats stop as soon as the job's work stalls, so its lease runs out even then.
Prints one JSON line per job on stdout (errors on stderr); never prints the lease token. The
CI command's output (stdout and stderr) is kept in --workdir/logs/repoR-jobJ-attemptA.log; when
the job fails its tail goes into the job's detail.error (at most 4,096 characters).

While idle it waits on the server's event feed for queued jobs (job.queued, job.requeued and a
requeued job.lease_expired of its kinds) and claims as soon as one is queued, polling only every 30 s (or --poll-ms, if longer) beside it.
When the feed is unavailable (no such route, busy, unreachable) it polls every --poll-ms and
tries the feed again later; notes about it go to stderr.

Exit status: 0 when every job it ran passed; with --once, 1 when the job it ran failed
(command failed, timed out, a suite failed, or an infrastructure error), 0 with "no job
available" on stderr when there was none; 1 when the server cannot be reached.

ci/results.json (optional, written by the CI script):
  {"suites": [{"suite_id": "unit", "status": "pass", "blocking": true}]}

Options:
  --server URL     cairn server (default: $CAIRN_SERVER, the working copy's or git remote's,
                   or the one server you are signed in to)
  --repo N         repository to serve (repeatable; default: every serving repository)
  --kinds LIST     job kinds to accept (default 7,11)
  --once           handle at most one job (or none), then exit
  --workdir DIR    where workspaces are created (default: $TMPDIR/cairn-runner)
  --poll-ms N      wait between empty claims while the event feed is unavailable
                   (default 1000)
  --stall-seconds N
                   bound on a fetch without progress, a claim or report without an answer
                   (default $CAIRN_STALL_SECONDS, else 60)
  --json           accepted for uniformity: job lines are always JSON
`;

export async function runnerCommand(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, {
    server: { type: 'string' }, repo: { type: 'string', multiple: true }, kinds: { type: 'string', default: '7,11' },
    once: { type: 'boolean', default: false }, workdir: { type: 'string' }, 'poll-ms': { type: 'string', default: '1000' }, json: { type: 'boolean', default: false },
    'stall-seconds': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) { process.stdout.write(RUNNER_HELP); return 0; }
  const server = serverOf(values.server, 'cairn runner');
  const kinds = String(values.kinds).split(',').map((k) => Number(k.trim()));
  if (kinds.some((k) => k !== 7 && k !== 11)) throw new CliUsageError('--kinds accepts 7 and 11');
  const repos = ((values.repo as string[] | undefined) ?? []).map((r) => {
    try { return parseU32(r, '--repo'); } catch { throw new CliUsageError('--repo must be a repository index'); }
  });
  const pollMs = Number(values['poll-ms']);
  if (!Number.isInteger(pollMs) || pollMs < 10) throw new CliUsageError('--poll-ms must be an integer ≥ 10');
  const stallSeconds = values['stall-seconds'] === undefined ? stallSecondsFromEnv() : cliStallSeconds(values['stall-seconds']);
  const stop = stopSignal();
  // The first SIGTERM or SIGINT stops the runner in order (its job failed as retryable); a
  // second one exits at once, leaving the job to its lease.
  const onSignal = (sig: NodeJS.Signals) => {
    if (!stop.stopped) {
      process.stderr.write(`cairn runner: ${sig}: stopping (send it again to exit at once)\n`);
      stop.stop(sig);
      return;
    }
    process.stderr.write(`cairn runner: second signal (${sig}): exiting now; a running job is left to its lease\n`);
    process.exit(1);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return runRunner({
    stallSeconds,
    server,
    repos,
    kinds: [...new Set(kinds)],
    once: values.once === true,
    workdir: path.resolve(typeof values.workdir === 'string' ? values.workdir : defaultWorkdir()),
    pollMs,
    log: (line, error) => (error ? process.stderr : process.stdout).write(`${JSON.stringify(line)}\n`),
    notice: (text) => process.stderr.write(`cairn runner: ${text}\n`),
    stopSignal: stop,
  });
}
