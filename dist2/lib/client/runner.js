// The external CI runner: claim a job, materialize its snapshot into a fresh workspace, run the
// declared argv exactly (no shell), heartbeat at a third of the lease, then complete with a
// result or fail as retryable on infrastructure errors. Never prints the lease token.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FeedGoneError, GLOBAL_FEED, followFeed, repositoryFeed } from './events.js';
import { CairnClient, ServerError } from './http.js';
import { StalledError, StallWatch, stallSecondsFromEnv } from './stall.js';
import { pull } from './transfer.js';
export function stopSignal() {
    const listeners = new Set();
    const signal = {
        stopped: false,
        reason: null,
        onStop(fn) {
            listeners.add(fn);
            return () => listeners.delete(fn);
        },
        stop(reason = 'SIGTERM') {
            if (signal.stopped)
                return;
            signal.stopped = true;
            signal.reason = reason;
            for (const fn of [...listeners])
                fn();
        },
    };
    return signal;
}
/** The runner was told to stop while a job was in `stage`. */
class StoppedError extends Error {
    signalName;
    stage;
    constructor(signalName, stage) {
        super(`runner stopped (${signalName}) ${stage}`);
        this.signalName = signalName;
        this.stage = stage;
    }
}
/** How long a stage's work may take to wind down once stopped, and a report to land after a stop. */
const STOP_GRACE_MS = 5000;
/** Beyond its timeout, how long a CI command may take to be killed and its output closed. */
const RUN_GRACE_MS = 10_000;
/** Suite results a CI script may write to ci/results.json: `{"suites": [{suite_id, status, blocking}]}`. */
async function readSuiteResults(file) {
    try {
        const parsed = JSON.parse(await fsp.readFile(file, 'utf8'));
        if (!Array.isArray(parsed.suites))
            return [];
        return parsed.suites
            .filter((s) => typeof s === 'object' && s !== null && typeof s.suite_id === 'string' && s.suite_id !== '')
            .map((s) => ({ suite_id: s.suite_id, status: s.status === 'pass' ? 'pass' : 'fail', blocking: s.blocking === true }));
    }
    catch {
        return [];
    }
}
/** Output of the CI command, kept whole in `logFile`; its tail goes into detail.error on failure. */
function runCommand(argv, cwd, timeoutS, stop, logFile) {
    return new Promise((resolve, reject) => {
        const log = createWriteStream(logFile, { flags: 'a' });
        log.on('error', () => undefined); // a full disk must not crash the runner; the job still reports
        const child = spawn(argv[0], argv.slice(1), { cwd, stdio: ['ignore', 'pipe', 'pipe'], shell: false, detached: true });
        // Both streams go to the job's log file and, live, to the runner's stderr.
        for (const stream of [child.stdout, child.stderr]) {
            stream.on('data', (chunk) => {
                log.write(chunk);
                process.stderr.write(chunk);
            });
        }
        const closeLog = () => new Promise((done) => {
            // Wait briefly for the pipes to drain (a background grandchild may hold them open).
            const t = setTimeout(finishLog, 500);
            let finished = false;
            function finishLog() {
                if (finished)
                    return;
                finished = true;
                clearTimeout(t);
                child.stdout.destroy();
                child.stderr.destroy();
                log.end(() => done());
            }
            if (child.stdout.readableEnded && child.stderr.readableEnded)
                finishLog();
            else
                child.once('close', finishLog);
        });
        let timedOut = false;
        let stopped = false;
        const killGroup = (signal) => {
            try {
                process.kill(-child.pid, signal);
            }
            catch { /* already gone */ }
        };
        const timer = setTimeout(() => {
            timedOut = true;
            killGroup('SIGTERM');
            setTimeout(() => killGroup('SIGKILL'), 2000).unref();
        }, timeoutS * 1000);
        // Stopped (a signal to the runner, or the stage gave up): the group gets SIGTERM, then SIGKILL.
        const onStop = () => {
            stopped = true;
            killGroup('SIGTERM');
            setTimeout(() => killGroup('SIGKILL'), 2000).unref();
        };
        if (stop.aborted)
            onStop();
        else
            stop.addEventListener('abort', onStop, { once: true });
        const unsubscribe = () => stop.removeEventListener('abort', onStop);
        child.on('error', (err) => { clearTimeout(timer); unsubscribe(); void closeLog().then(() => reject(err)); });
        child.on('exit', (code) => { clearTimeout(timer); unsubscribe(); void closeLog().then(() => resolve({ code, timedOut, stopped })); });
    });
}
/** Runs one claimed job; true when it passed (command succeeded and every suite passed). */
async function runJob(client, o, claim) {
    const jobPath = `/v1/native/repository-authorities/${claim.repository_index}/worker-jobs/${claim.worker_job_index}`;
    const lease = { attempt_count: claim.attempt_count, lease_token: claim.lease_token };
    const ident = { repository_index: claim.repository_index, worker_job_index: claim.worker_job_index, job_kind: claim.job_kind, attempt: claim.attempt_count };
    const name = `job ${claim.repository_index}/${claim.worker_job_index} (attempt ${claim.attempt_count})`;
    const leaseMs = Math.max(1000, (claim.lease_expires_at_s - Date.now() / 1000) * 1000);
    const stallSeconds = o.stallSeconds ?? stallSecondsFromEnv();
    const stallMs = stallSeconds * 1000;
    // Heartbeats keep the lease only while the job's work moves: a stage that stalls stops them
    // at once, so the lease runs out even if the attempt cannot be failed.
    let heartbeatFailed = false;
    const beatMs = Math.max(250, Math.round(leaseMs / 3));
    const beat = setInterval(() => {
        client.json('POST', `${jobPath}:heartbeat`, lease, { signal: AbortSignal.timeout(beatMs) }).catch(() => { heartbeatFailed = true; });
    }, beatMs);
    const stopHeartbeats = () => clearInterval(beat);
    /**
     * One stage of the job. Its work gets a signal that aborts when the runner is stopped (at
     * once, or after STOP_GRACE_MS for `graceful` stages whose answer is worth waiting for) or
     * when it made no progress for `boundMs`; the stage then fails with the reason, at the
     * latest STOP_GRACE_MS later, whether or not the work ever settles.
     */
    const stage = async (what, boundMs, graceful, work) => {
        if (o.stopSignal.stopped)
            throw new StoppedError(o.stopSignal.reason ?? 'SIGTERM', `before ${what}`);
        const ac = new AbortController();
        const timers = [];
        const watch = new StallWatch(boundMs, () => {
            stopHeartbeats();
            o.notice(`${name}: no progress in ${what} for ${Math.round(boundMs / 1000)} s: heartbeats stopped, failing the attempt`);
            ac.abort(new StalledError(`no progress in ${what} for ${Math.round(boundMs / 1000)} s`));
        });
        const off = o.stopSignal.onStop(() => {
            const sig = o.stopSignal.reason ?? 'SIGTERM';
            o.notice(`${sig}: stopping ${name} during ${what}; the job is failed as retryable, then the runner exits`);
            const stopNow = () => ac.abort(new StoppedError(sig, `during ${what}`));
            if (graceful)
                timers.push(setTimeout(stopNow, STOP_GRACE_MS));
            else
                stopNow();
        });
        // Stopped work gets time to wind down (the command to be killed); stalled work a second.
        const gaveUp = new Promise((_, reject) => {
            ac.signal.addEventListener('abort', () => { timers.push(setTimeout(() => reject(ac.signal.reason), ac.signal.reason instanceof StalledError ? 1000 : STOP_GRACE_MS)); }, { once: true });
        });
        gaveUp.catch(() => undefined);
        const running = work(ac.signal, () => watch.touch());
        running.catch(() => undefined);
        try {
            const value = await Promise.race([running, gaveUp]);
            if (ac.signal.aborted)
                throw ac.signal.reason;
            return value;
        }
        catch (err) {
            throw ac.signal.aborted ? ac.signal.reason : err;
        }
        finally {
            watch.stop();
            off();
            for (const t of timers)
                clearTimeout(t);
        }
    };
    await fsp.mkdir(o.workdir, { recursive: true });
    const logDir = path.join(o.workdir, 'logs');
    await fsp.mkdir(logDir, { recursive: true });
    const logFile = path.join(logDir, `repo${claim.repository_index}-job${claim.worker_job_index}-attempt${claim.attempt_count}.log`);
    const workspace = mkdtempSync(path.join(o.workdir, 'job-'));
    const fail = async (error, loud = false) => {
        stopHeartbeats();
        const bound = o.stopSignal.stopped ? STOP_GRACE_MS : stallMs;
        const told = await client.json('POST', `${jobPath}:fail`, { ...lease, detail: { retryable: true, error: error.slice(0, 4096) } }, { signal: AbortSignal.timeout(bound) })
            .then(() => null, (err) => err);
        o.log({ ...ident, outcome: 'infrastructure_error', retryable: true, error });
        if (loud || told) {
            o.notice(told
                ? `${name}: could not be failed (${told.message}); its lease runs out within ${Math.ceil(leaseMs / 1000)} s and the server requeues it: ${error}`
                : `${name} failed as retryable: ${error}`);
        }
        return false;
    };
    try {
        const request = claim.runtime_request;
        const tree = path.join(workspace, 'tree');
        try {
            // The pull has its own stall watch (same bound); the stage's is the backstop.
            await stage('the snapshot fetch', stallMs + 1000, false, (signal, touch) => (o.fetch ?? pull)({
                server: o.server, repo: claim.repository_index, snapshot: request.snapshot_id, out: tree, signal, onActivity: touch, stallSeconds,
            }));
        }
        catch (err) {
            if (err instanceof StoppedError)
                return fail(err.message, true);
            if (err instanceof StalledError)
                return fail(`snapshot fetch stalled: ${err.message}`, true);
            return fail(`snapshot fetch failed: ${err.message}`, true);
        }
        const entry = process.platform === 'win32' ? request.entrypoints.windows : request.entrypoints.posix;
        if (!existsSync(path.join(tree, entry.path))) {
            // The snapshot has no CI entry point: the command cannot succeed, which is the repository's outcome.
            return finish(`${entry.path} is missing`, 'command_failed', [], `${entry.path} is missing from snapshot ${request.snapshot_id}`);
        }
        let run;
        try {
            // The command has its own timeout; the stage bound only catches one that will not die.
            run = await stage('the command', request.timeout_s * 1000 + RUN_GRACE_MS, false, (signal) => runCommand(entry.argv, tree, request.timeout_s, signal, logFile));
        }
        catch (err) {
            if (err instanceof StoppedError)
                return fail(err.message, true);
            if (err instanceof StalledError)
                return fail(`the command did not end within its ${request.timeout_s} s timeout and ${RUN_GRACE_MS / 1000} s more`, true);
            return fail(`could not start ${entry.argv[0]}: ${err.message}`);
        }
        if (heartbeatFailed)
            o.log({ ...ident, warning: 'a heartbeat failed; the lease may have expired' });
        const suites = await readSuiteResults(path.join(tree, request.results_file ?? 'ci/results.json'));
        const status = run.timedOut ? 'timed_out' : run.code === 0 ? 'succeeded' : 'command_failed';
        const note = run.timedOut ? `timed out after ${request.timeout_s}s` : `exit ${run.code}`;
        const failed = status !== 'succeeded' || suites.some((x) => x.status !== 'pass');
        return finish(note, status, suites, failed ? await errorTail(logFile, `${entry.argv.join(' ')}: ${note}`) : null, logFile);
    }
    finally {
        stopHeartbeats();
        await fsp.rm(workspace, { recursive: true, force: true });
    }
    /** Report the result (the report stage): a stop waits STOP_GRACE_MS for the answer, a silent server stallMs. */
    async function finish(note, status, suites, error = null, logFile) {
        const testsPass = status === 'succeeded' && suites.every((x) => x.status === 'pass');
        const result = {
            contract: 'svc.runner.native-result.v1',
            status,
            tests_status: testsPass ? 'pass' : 'fail',
            suite_result_count: suites.length,
            suite_results: suites,
        };
        try {
            await stage('the report of the result', stallMs, true, (signal) => client.json('POST', `${jobPath}:complete`, { ...lease, detail: { job_kind: claim.job_kind, result, ...(error !== null ? { error } : {}) } }, { signal }));
            o.log({ ...ident, outcome: status, tests_status: result.tests_status, suites: suites.length, note, ...(logFile ? { log: logFile } : {}) });
        }
        catch (err) {
            if (err instanceof StoppedError || err instanceof StalledError)
                return fail(`${err.message}: the result (${status}) was not recorded`, true);
            o.log({ ...ident, outcome: 'complete_rejected', error: err instanceof ServerError ? err.message : String(err) }, true);
            return false;
        }
        return testsPass;
    }
}
/** "<what>; output tail:\n..." within the spec's 4,096 characters for detail.error. */
async function errorTail(logFile, what) {
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
        }
        finally {
            await fh.close();
        }
    }
    catch { /* no log */ }
    const head = `${what}; output tail:\n`;
    const chars = [...text];
    const room = limit - [...head].length;
    return head + chars.slice(Math.max(0, chars.length - room)).join('');
}
/**
 * While the runner is idle it waits on the event feed for jobs becoming claimable (QUEUED_TYPES): one repository's
 * feed per --repo, the global feed without. An event for one of its kinds wakes it to claim at
 * once; so does every (re)connection, because events in between may have been missed. While
 * every feed is live the runner polls slowly (safetyPollMs); while one is down (no route,
 * busy, unreachable, silent) it polls at pollMs as it always did, and the feed is retried.
 */
/**
 * The events after which a job may be claimable: queued, queued again after a retryable
 * failure (a runner stopped with SIGTERM gives its job back so), or after its lease expired.
 */
const QUEUED_TYPES = ['job.queued', 'job.requeued', 'job.lease_expired'];
class QueueHints {
    o;
    pending = false;
    wake = null;
    liveFeeds = new Set();
    stopped = new AbortController();
    announced = null;
    paths;
    constructor(o) {
        this.o = o;
        this.paths = o.repos.length ? o.repos.map(repositoryFeed) : [GLOBAL_FEED];
    }
    get live() {
        return this.liveFeeds.size === this.paths.length;
    }
    start() {
        for (const p of this.paths)
            void this.follow(p);
    }
    stop() {
        this.stopped.abort();
        this.poke();
    }
    /** Before a claim: what the claim will see needs no further wake-up. */
    take() {
        this.pending = false;
    }
    /** Resolves after `ms`, at a hint, or at stop. */
    wait(ms) {
        if (this.pending || this.stopped.signal.aborted)
            return Promise.resolve();
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
    poke() {
        this.pending = true;
        this.wake?.();
    }
    setLive(p, live, reason = '') {
        const was = this.live;
        if (live)
            this.liveFeeds.add(p);
        else
            this.liveFeeds.delete(p);
        if (this.live && this.announced !== 'live') {
            this.announced = 'live';
            this.o.notice('waiting on the event feed for queued jobs');
        }
        else if (!live && this.announced !== 'down') {
            this.announced = 'down';
            this.o.notice(`event feed unavailable (${reason}); polling every ${this.o.pollMs} ms until it is back`);
        }
        if (was && !this.live)
            this.poke(); // the next wait is the shorter poll interval
    }
    async follow(p) {
        const signal = this.stopped.signal;
        while (!signal.aborted) {
            try {
                await followFeed({
                    server: this.o.server,
                    path: p,
                    types: QUEUED_TYPES,
                    signal,
                    onStatus: (s) => {
                        if (s.state === 'live') {
                            this.setLive(p, true);
                            this.poke(); // jobs queued before this stream opened are not on it
                        }
                        else {
                            this.setLive(p, false, s.reason);
                        }
                    },
                    onEvent: (e) => {
                        // A lease that expired without a requeue leaves nothing to claim.
                        if (e.type === 'job.lease_expired' && e.data.requeued !== true)
                            return;
                        if (this.o.kinds.includes(Number(e.data.kind)))
                            this.poke();
                    },
                });
            }
            catch (err) {
                // 410 (the resume point is gone): follow live again; the claim is the truth anyway.
                if (err instanceof FeedGoneError) {
                    this.poke();
                    continue;
                }
                this.setLive(p, false, err.message);
                await new Promise((resolve) => {
                    const t = setTimeout(done, this.o.feedRetryMs ?? 60_000);
                    function done() { clearTimeout(t); signal.removeEventListener('abort', done); resolve(); }
                    signal.addEventListener('abort', done, { once: true });
                });
            }
        }
    }
}
export async function runRunner(o) {
    const client = new CairnClient(o.server);
    const stallSeconds = o.stallSeconds ?? stallSecondsFromEnv();
    const hints = !o.once && o.feed !== false ? new QueueHints(o) : null;
    const idle = (ms) => {
        if (hints)
            return hints.wait(ms);
        return new Promise((resolve) => {
            const off = o.stopSignal.onStop(done);
            const t = setTimeout(done, ms);
            function done() { clearTimeout(t); off(); resolve(); }
        });
    };
    const unsubscribe = hints ? o.stopSignal.onStop(() => hints.stop()) : () => undefined;
    hints?.start();
    try {
        while (!o.stopSignal.stopped) {
            let claim;
            hints?.take();
            // A claim is bounded like a stage: no answer within the stall bound, or STOP_GRACE_MS
            // after a stop, and it is given up (a job it did claim then waits for its lease to run out).
            const bound = new AbortController();
            const limit = setTimeout(() => bound.abort(new StalledError(`no answer to the claim for ${stallSeconds} s`)), stallSeconds * 1000);
            let grace;
            const off = o.stopSignal.onStop(() => { grace = setTimeout(() => bound.abort(new Error(`runner stopped (${o.stopSignal.reason}) while claiming`)), STOP_GRACE_MS); });
            try {
                const res = await client.json('POST', '/v1/native/worker-jobs:claim', {
                    accepted_job_kinds: o.kinds,
                    repository_indexes: o.repos,
                    accepted_runtime_contracts: ['svc.runner.native-job.v3'],
                }, { signal: bound.signal });
                claim = res.claimed_job;
            }
            catch (err) {
                if (o.stopSignal.stopped) {
                    o.notice(`${err.message}; exiting`);
                    return o.once ? 1 : 0;
                }
                o.log({ error: `claim failed: ${err.message}` }, true);
                if (o.once)
                    return 1;
                await idle(o.pollMs);
                continue;
            }
            finally {
                clearTimeout(limit);
                clearTimeout(grace);
                off();
            }
            const passed = claim ? await runJob(client, o, claim) : true;
            if (o.once) {
                // --once: exit 1 when the job it ran did not pass; say so when there was none.
                if (!claim)
                    o.notice('no job available');
                return passed ? 0 : 1;
            }
            if (!claim && !o.stopSignal.stopped)
                await idle(hints?.live ? Math.max(o.pollMs, o.safetyPollMs ?? 30_000) : o.pollMs);
        }
        return 0;
    }
    finally {
        unsubscribe();
        hints?.stop();
    }
}
export function defaultWorkdir() {
    return path.join(os.tmpdir(), 'cairn-runner');
}
//# sourceMappingURL=runner.js.map