// The external CI runner: claim a job, materialize its snapshot into a fresh workspace, run the
// declared argv exactly (no shell), heartbeat at a third of the lease, then complete with a
// result or fail as retryable on infrastructure errors. Never prints the lease token.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FeedGoneError, GLOBAL_FEED, followFeed, repositoryFeed } from './events.js';
import { CairnClient, ServerError } from './http.js';
import { pull } from './transfer.js';

export interface RunnerOptions {
  server: string;
  repos: number[];
  kinds: number[];
  once: boolean;
  workdir: string;
  pollMs: number;
  /**
   * Wait on the event feed for queued jobs while idle (default true; --once never does). The
   * feed is a hint: claims stay the only truth, so a slow safety poll goes on beside it.
   */
  feed?: boolean;
  /** The claim interval while the feed is live (default 30 s, never shorter than pollMs). */
  safetyPollMs?: number;
  /** After the server said it has no feed (404/405/501), ask again this much later (default 60 s). */
  feedRetryMs?: number;
  /** One JSON line per job; `error` lines go to stderr. */
  log: (line: Record<string, unknown>, error?: boolean) => void;
  /** A human note for stderr ("no job available"). */
  notice: (text: string) => void;
  /** Resolves when the runner should stop (SIGTERM). */
  stopSignal: StopSignal;
}

/** Set by SIGTERM; `onStop` registers a callback and returns its unsubscribe function. */
export interface StopSignal {
  stopped: boolean;
  onStop(fn: () => void): () => void;
}

export function stopSignal(): StopSignal & { stop(): void } {
  const listeners = new Set<() => void>();
  const signal = {
    stopped: false,
    onStop(fn: () => void) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    stop() {
      signal.stopped = true;
      for (const fn of [...listeners]) fn();
    },
  };
  return signal;
}

interface Claim {
  repository_index: number;
  worker_job_index: number;
  job_kind: number;
  attempt_count: number;
  lease_token: string;
  lease_expires_at_s: number;
  runtime_request: {
    snapshot_id: string;
    timeout_s: number;
    results_file?: string;
    entrypoints: { posix: { path: string; argv: string[] }; windows: { path: string; argv: string[] } };
  };
}

interface SuiteResult { suite_id: string; status: 'pass' | 'fail'; blocking: boolean }

/** Suite results a CI script may write to ci/results.json: `{"suites": [{suite_id, status, blocking}]}`. */
async function readSuiteResults(file: string): Promise<SuiteResult[]> {
  try {
    const parsed = JSON.parse(await fsp.readFile(file, 'utf8')) as { suites?: unknown };
    if (!Array.isArray(parsed.suites)) return [];
    return parsed.suites
      .filter((s): s is SuiteResult => typeof s === 'object' && s !== null && typeof (s as SuiteResult).suite_id === 'string' && (s as SuiteResult).suite_id !== '')
      .map((s) => ({ suite_id: s.suite_id, status: s.status === 'pass' ? 'pass' : 'fail', blocking: s.blocking === true }));
  } catch {
    return [];
  }
}

/** Output of the CI command, kept whole in `logFile`; its tail goes into detail.error on failure. */
function runCommand(argv: string[], cwd: string, timeoutS: number, stop: RunnerOptions['stopSignal'], logFile: string): Promise<{ code: number | null; timedOut: boolean; stopped: boolean }> {
  return new Promise((resolve, reject) => {
    const log = createWriteStream(logFile, { flags: 'a' });
    log.on('error', () => undefined); // a full disk must not crash the runner; the job still reports
    const child = spawn(argv[0], argv.slice(1), { cwd, stdio: ['ignore', 'pipe', 'pipe'], shell: false, detached: true });
    // Both streams go to the job's log file and, live, to the runner's stderr.
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.on('data', (chunk: Buffer) => {
        log.write(chunk);
        process.stderr.write(chunk);
      });
    }
    const closeLog = () => new Promise<void>((done) => {
      // Wait briefly for the pipes to drain (a background grandchild may hold them open).
      const t = setTimeout(finishLog, 500);
      let finished = false;
      function finishLog() {
        if (finished) return;
        finished = true;
        clearTimeout(t);
        child.stdout!.destroy();
        child.stderr!.destroy();
        log.end(() => done());
      }
      if (child.stdout!.readableEnded && child.stderr!.readableEnded) finishLog();
      else child.once('close', finishLog);
    });
    let timedOut = false;
    let stopped = false;
    const killGroup = (signal: NodeJS.Signals) => {
      try { process.kill(-child.pid!, signal); } catch { /* already gone */ }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup('SIGTERM');
      setTimeout(() => killGroup('SIGKILL'), 2000).unref();
    }, timeoutS * 1000);
    const unsubscribe = stop.onStop(() => {
      stopped = true;
      killGroup('SIGTERM');
    });
    child.on('error', (err) => { clearTimeout(timer); unsubscribe(); void closeLog().then(() => reject(err)); });
    child.on('exit', (code) => { clearTimeout(timer); unsubscribe(); void closeLog().then(() => resolve({ code, timedOut, stopped })); });
  });
}

/** Runs one claimed job; true when it passed (command succeeded and every suite passed). */
async function runJob(client: CairnClient, o: RunnerOptions, claim: Claim): Promise<boolean> {
  const jobPath = `/v1/native/repository-authorities/${claim.repository_index}/worker-jobs/${claim.worker_job_index}`;
  const lease = { attempt_count: claim.attempt_count, lease_token: claim.lease_token };
  const ident = { repository_index: claim.repository_index, worker_job_index: claim.worker_job_index, job_kind: claim.job_kind, attempt: claim.attempt_count };
  const leaseMs = Math.max(1000, (claim.lease_expires_at_s - Date.now() / 1000) * 1000);
  let heartbeatFailed = false;
  const beat = setInterval(() => {
    client.json('POST', `${jobPath}:heartbeat`, lease).catch(() => { heartbeatFailed = true; });
  }, Math.max(250, leaseMs / 3));
  await fsp.mkdir(o.workdir, { recursive: true });
  const logDir = path.join(o.workdir, 'logs');
  await fsp.mkdir(logDir, { recursive: true });
  const logFile = path.join(logDir, `repo${claim.repository_index}-job${claim.worker_job_index}-attempt${claim.attempt_count}.log`);
  const workspace = mkdtempSync(path.join(o.workdir, 'job-'));
  const fail = async (error: string) => {
    await client.json('POST', `${jobPath}:fail`, { ...lease, detail: { retryable: true, error: error.slice(0, 4096) } }).catch(() => undefined);
    o.log({ ...ident, outcome: 'infrastructure_error', retryable: true, error });
    return false;
  };
  try {
    const request = claim.runtime_request;
    const tree = path.join(workspace, 'tree');
    try {
      await pull({ server: o.server, repo: claim.repository_index, snapshot: request.snapshot_id, out: tree });
    } catch (err) {
      return fail(`snapshot fetch failed: ${(err as Error).message}`);
    }
    const entry = process.platform === 'win32' ? request.entrypoints.windows : request.entrypoints.posix;
    if (!existsSync(path.join(tree, entry.path))) {
      // The snapshot has no CI entry point: the command cannot succeed, which is the repository's outcome.
      return finish(client, jobPath, lease, claim, 'command_failed', [], o, ident, `${entry.path} is missing`, `${entry.path} is missing from snapshot ${request.snapshot_id}`);
    }
    if (o.stopSignal.stopped) {
      return fail('runner stopped (SIGTERM) before the command started');
    }
    let run;
    try {
      run = await runCommand(entry.argv, tree, request.timeout_s, o.stopSignal, logFile);
    } catch (err) {
      return fail(`could not start ${entry.argv[0]}: ${(err as Error).message}`);
    }
    if (run.stopped) {
      return fail('runner stopped (SIGTERM) before the command finished');
    }
    if (heartbeatFailed) o.log({ ...ident, warning: 'a heartbeat failed; the lease may have expired' });
    const suites = await readSuiteResults(path.join(tree, request.results_file ?? 'ci/results.json'));
    const status = run.timedOut ? 'timed_out' : run.code === 0 ? 'succeeded' : 'command_failed';
    const note = run.timedOut ? `timed out after ${request.timeout_s}s` : `exit ${run.code}`;
    const failed = status !== 'succeeded' || suites.some((x) => x.status !== 'pass');
    return finish(client, jobPath, lease, claim, status, suites, o, ident, note, failed ? await errorTail(logFile, `${entry.argv.join(' ')}: ${note}`) : null, logFile);
  } finally {
    clearInterval(beat);
    await fsp.rm(workspace, { recursive: true, force: true });
  }
}

/** "<what>; output tail:\n..." within the spec's 4,096 characters for detail.error. */
async function errorTail(logFile: string, what: string): Promise<string> {
  const limit = 4096;
  let text = '';
  try {
    const fh = await fsp.open(logFile, 'r');
    try {
      const { size } = await fh.stat();
      const n = Math.min(size, limit * 4);
      const buf = Buffer.alloc(n);
      await fh.read(buf, 0, n, size - n);
      text = buf.toString('utf8');
    } finally {
      await fh.close();
    }
  } catch { /* no log */ }
  const head = `${what}; output tail:\n`;
  const chars = [...text];
  const room = limit - [...head].length;
  return head + chars.slice(Math.max(0, chars.length - room)).join('');
}

async function finish(
  client: CairnClient, jobPath: string, lease: object, claim: Claim,
  status: 'succeeded' | 'command_failed' | 'timed_out', suites: SuiteResult[], o: RunnerOptions, ident: object, note: string,
  error: string | null = null, logFile?: string,
): Promise<boolean> {
  const testsPass = status === 'succeeded' && suites.every((s) => s.status === 'pass');
  const result = {
    contract: 'svc.runner.native-result.v1',
    status,
    tests_status: testsPass ? 'pass' : 'fail',
    suite_result_count: suites.length,
    suite_results: suites,
  };
  try {
    await client.json('POST', `${jobPath}:complete`, { ...lease, detail: { job_kind: claim.job_kind, result, ...(error !== null ? { error } : {}) } });
    o.log({ ...ident, outcome: status, tests_status: result.tests_status, suites: suites.length, note, ...(logFile ? { log: logFile } : {}) });
  } catch (err) {
    o.log({ ...ident, outcome: 'complete_rejected', error: err instanceof ServerError ? err.message : String(err) }, true);
    return false;
  }
  return testsPass;
}

/**
 * While the runner is idle it waits on the event feed (`types=job.queued`): one repository's
 * feed per --repo, the global feed without. An event for one of its kinds wakes it to claim at
 * once; so does every (re)connection, because events in between may have been missed. While
 * every feed is live the runner polls slowly (safetyPollMs); while one is down (no route,
 * busy, unreachable, silent) it polls at pollMs as it always did, and the feed is retried.
 */
class QueueHints {
  private pending = false;
  private wake: (() => void) | null = null;
  private readonly liveFeeds = new Set<string>();
  private readonly stopped = new AbortController();
  private announced: 'live' | 'down' | null = null;
  private readonly paths: string[];

  constructor(private readonly o: RunnerOptions) {
    this.paths = o.repos.length ? o.repos.map(repositoryFeed) : [GLOBAL_FEED];
  }

  get live(): boolean {
    return this.liveFeeds.size === this.paths.length;
  }

  start(): void {
    for (const p of this.paths) void this.follow(p);
  }

  stop(): void {
    this.stopped.abort();
    this.poke();
  }

  /** Before a claim: what the claim will see needs no further wake-up. */
  take(): void {
    this.pending = false;
  }

  /** Resolves after `ms`, at a hint, or at stop. */
  wait(ms: number): Promise<void> {
    if (this.pending || this.stopped.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.wake = null;
        resolve();
      };
      const t = setTimeout(done, ms);
      this.wake = done;
    });
  }

  private poke(): void {
    this.pending = true;
    this.wake?.();
  }

  private setLive(p: string, live: boolean, reason = ''): void {
    const was = this.live;
    if (live) this.liveFeeds.add(p);
    else this.liveFeeds.delete(p);
    if (this.live && this.announced !== 'live') {
      this.announced = 'live';
      this.o.notice('waiting on the event feed for queued jobs');
    } else if (!live && this.announced !== 'down') {
      this.announced = 'down';
      this.o.notice(`event feed unavailable (${reason}); polling every ${this.o.pollMs} ms until it is back`);
    }
    if (was && !this.live) this.poke(); // the next wait is the shorter poll interval
  }

  private async follow(p: string): Promise<void> {
    const signal = this.stopped.signal;
    while (!signal.aborted) {
      try {
        await followFeed({
          server: this.o.server,
          path: p,
          types: ['job.queued'],
          signal,
          onStatus: (s) => {
            if (s.state === 'live') {
              this.setLive(p, true);
              this.poke(); // jobs queued before this stream opened are not on it
            } else {
              this.setLive(p, false, s.reason);
            }
          },
          onEvent: (e) => {
            if (this.o.kinds.includes(Number(e.data.kind))) this.poke();
          },
        });
      } catch (err) {
        // 410 (the resume point is gone): follow live again; the claim is the truth anyway.
        if (err instanceof FeedGoneError) { this.poke(); continue; }
        this.setLive(p, false, (err as Error).message);
        await new Promise<void>((resolve) => {
          const t = setTimeout(done, this.o.feedRetryMs ?? 60_000);
          function done() { clearTimeout(t); signal.removeEventListener('abort', done); resolve(); }
          signal.addEventListener('abort', done, { once: true });
        });
      }
    }
  }
}

export async function runRunner(o: RunnerOptions): Promise<number> {
  const client = new CairnClient(o.server);
  const hints = !o.once && o.feed !== false ? new QueueHints(o) : null;
  const idle = (ms: number) => {
    if (hints) return hints.wait(ms);
    return new Promise<void>((resolve) => {
      const off = o.stopSignal.onStop(done);
      const t = setTimeout(done, ms);
      function done() { clearTimeout(t); off(); resolve(); }
    });
  };
  const unsubscribe = hints ? o.stopSignal.onStop(() => hints.stop()) : () => undefined;
  hints?.start();
  try {
    while (!o.stopSignal.stopped) {
      let claim: Claim | null;
      hints?.take();
      try {
        const res = await client.json('POST', '/v1/native/worker-jobs:claim', {
          accepted_job_kinds: o.kinds,
          repository_indexes: o.repos,
          accepted_runtime_contracts: ['svc.runner.native-job.v3'],
        });
        claim = res.claimed_job;
      } catch (err) {
        o.log({ error: `claim failed: ${(err as Error).message}` }, true);
        if (o.once) return 1;
        await idle(o.pollMs);
        continue;
      }
      const passed = claim ? await runJob(client, o, claim) : true;
      if (o.once) {
        // --once: exit 1 when the job it ran did not pass; say so when there was none.
        if (!claim) o.notice('no job available');
        return passed ? 0 : 1;
      }
      if (!claim && !o.stopSignal.stopped) await idle(hints?.live ? Math.max(o.pollMs, o.safetyPollMs ?? 30_000) : o.pollMs);
    }
    return 0;
  } finally {
    unsubscribe();
    hints?.stop();
  }
}

export function defaultWorkdir(): string {
  return path.join(os.tmpdir(), 'cairn-runner');
}
