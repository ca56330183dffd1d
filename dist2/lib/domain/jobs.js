// Worker-job rules (spec: "Worker Job", transition table, "Worker jobs"): pure functions from
// a job record and an event to the next record. No I/O; lib/authority/jobs.ts persists.
import { createHash, randomBytes } from 'node:crypto';
import { Conflict, Invalid } from './errors.js';
import { JOB_KIND_PATCHSET_CI, jobKind } from './job-kinds.js';
export const STATE_QUEUED = 1;
export const STATE_RUNNING = 2;
export const STATE_SUCCEEDED = 3;
export const STATE_FAILED = 4;
export const STATE_NAMES = { 1: 'queued', 2: 'running', 3: 'succeeded', 4: 'failed' };
export const RETRY_NONE = 0;
export const RETRY_SCHEDULED = 1;
export const RETRY_EXHAUSTED = 2;
export const RETRY_NAMES = ['none', 'retry_scheduled', 'exhausted'];
export const ERROR_NONE = 0;
export const ERROR_RUNNER_RETRYABLE = 1;
export const ERROR_RUNNER_FATAL = 2;
export const ERROR_LEASE_EXPIRED = 3;
/** A patchset.ci job of a run that a newer run of the same patchset replaced. */
export const ERROR_SUPERSEDED = 4;
export const ERROR_KIND_NAMES = [null, 'runner_failure', 'runner_failure_non_retryable', 'lease_expired', 'superseded'];
export const OUTCOME_SUPERSEDED = 'superseded';
export const RUNTIME_CONTRACT = 'svc.runner.native-job.v3';
export const RESULT_CONTRACT = 'svc.runner.native-result.v1';
export const MAX_ERROR_CHARS = 4096;
export const DEFAULT_JOB_POLICY = { leaseSeconds: 120, maxAttempts: 3, timeoutSeconds: 1800 };
export function hashToken(token) {
    return createHash('sha256').update(token, 'utf8').digest('hex');
}
export function newLeaseToken() {
    return randomBytes(16).toString('hex');
}
export function isClaimable(job, now) {
    return job.state === STATE_QUEUED && !job.tombstoned && job.available_at_s <= now && (jobKind(job.kind)?.external ?? false);
}
export function claim(job, token, now, policy) {
    if (job.state !== STATE_QUEUED)
        throw new Conflict(`job ${job.worker_job_index} is ${STATE_NAMES[job.state]}, not queued`);
    return {
        ...job,
        state: STATE_RUNNING,
        attempt_count: job.attempt_count + 1,
        locked_at_s: now,
        lease_expires_at_s: now + policy.leaseSeconds,
        lease_token_hash: hashToken(token),
        updated_at_s: now,
    };
}
/** The lease check shared by heartbeat, complete and fail: current attempt, token, unexpired. */
export function checkLease(job, attemptCount, token, now) {
    if (job.state !== STATE_RUNNING)
        throw new Conflict(`job ${job.worker_job_index} is ${STATE_NAMES[job.state]}, not running`);
    if (attemptCount !== job.attempt_count)
        throw new Conflict(`stale attempt_count ${attemptCount}; the current attempt is ${job.attempt_count}`);
    if (hashToken(token) !== job.lease_token_hash)
        throw new Conflict('lease_token does not match the current lease');
    // Times are whole seconds: a lease is live through its expiry second, so N seconds never end early.
    if (job.lease_expires_at_s < now)
        throw new Conflict('the lease has expired');
}
export function heartbeat(job, now, policy) {
    return { ...job, lease_expires_at_s: now + policy.leaseSeconds, updated_at_s: now };
}
function released(job, now) {
    return { ...job, lease_token_hash: '', lease_expires_at_s: 0, updated_at_s: now };
}
/** `error`: the tail of a failed command's output (from `cairn runner`), kept in detail.error. */
export function complete(job, result, now, error = null) {
    return {
        ...released(job, now),
        state: STATE_SUCCEEDED,
        retry_status: RETRY_NONE,
        completed_at_s: now,
        detail: { ...job.detail, outcome: result ? result.status : 'succeeded', result, ...(error !== null ? { error } : {}) },
    };
}
/** A runner-reported failure, or a lease expiry: requeue while attempts remain, else fail for good. */
export function fail(job, error, errorKind, retryable, now) {
    const requeue = retryable && job.attempt_count < job.max_attempts;
    const base = { ...released(job, now), error_kind: errorKind, detail: { ...job.detail, error } };
    if (requeue)
        return { ...base, state: STATE_QUEUED, retry_status: RETRY_SCHEDULED, available_at_s: now };
    return { ...base, state: STATE_FAILED, retry_status: retryable ? RETRY_EXHAUSTED : RETRY_NONE, completed_at_s: now, detail: { ...base.detail, outcome: 'failed' } };
}
/**
 * A job of a replaced CI run, ended for good: failed with error kind `superseded`, never
 * requeued. A queued job is ended when the newer run starts (no runner spends time on it); a
 * running one when its runner fails or its lease expires.
 */
export function supersede(job, now, why) {
    return {
        ...released(job, now),
        state: STATE_FAILED,
        retry_status: RETRY_NONE,
        error_kind: ERROR_SUPERSEDED,
        completed_at_s: now,
        detail: { ...job.detail, outcome: OUTCOME_SUPERSEDED, error: why },
    };
}
export function expireIfDue(job, now) {
    if (job.state !== STATE_RUNNING || job.lease_expires_at_s >= now)
        return null;
    return fail(job, `lease expired at ${job.lease_expires_at_s} without a heartbeat (attempt ${job.attempt_count})`, ERROR_LEASE_EXPIRED, true, now);
}
/** What a finished job says about CI (docs/api.md "Worker jobs"): the filter values of `GET worker-jobs?outcome=`. */
export const CI_OUTCOMES = ['pass', 'fail', 'timed_out', 'superseded'];
/**
 * The CI outcome of a job, derived from its completion record (null while it is queued or
 * running). A job's `state` says whether it ran (`succeeded`) or not (`failed`); this says
 * whether CI passed, by the rule the land gate and the land queue judge a result by: a job of
 * a replaced run is `superseded`; a runner result with status `timed_out` is `timed_out`; a
 * completion passes when its result succeeded with tests passing and no blocking suite failing
 * (or, for repo.ci, when it came without a result: the runner reports failures with :fail);
 * everything else that ended (a failed command, failing tests, a failed job) is `fail`.
 */
export function ciOutcome(job) {
    if (job.state === STATE_QUEUED || job.state === STATE_RUNNING)
        return null;
    if (job.detail.outcome === OUTCOME_SUPERSEDED)
        return 'superseded';
    if (job.state === STATE_FAILED)
        return 'fail';
    const r = job.detail.result;
    if (!r)
        return 'pass';
    if (r.status === 'timed_out')
        return 'timed_out';
    return r.status === 'succeeded' && r.tests_status === 'pass' && !r.suite_results.some((s) => s.status === 'fail' && s.blocking) ? 'pass' : 'fail';
}
/** Check a kind-7 completion `detail` (spec: "Completion detail rules"); returns the result. */
export function patchsetResult(detail) {
    if (detail.job_kind !== JOB_KIND_PATCHSET_CI)
        throw new Invalid('detail.job_kind must be 7 for a patchset.ci job');
    const r = detail.result;
    if (r.contract !== RESULT_CONTRACT)
        throw new Invalid(`detail.result.contract must be ${RESULT_CONTRACT}`);
    if (!['succeeded', 'command_failed', 'timed_out'].includes(r.status))
        throw new Invalid('detail.result.status must be succeeded, command_failed or timed_out');
    if (!['pass', 'fail'].includes(r.tests_status))
        throw new Invalid('detail.result.tests_status must be pass or fail');
    if (r.suite_result_count !== r.suite_results.length)
        throw new Invalid(`detail.result.suite_result_count ${r.suite_result_count} does not equal the ${r.suite_results.length} suite_results`);
    for (const s of r.suite_results) {
        if (s.suite_id === '')
            throw new Invalid('suite_id must be non-empty');
        if (s.status !== 'pass' && s.status !== 'fail')
            throw new Invalid('suite_results[].status must be pass or fail');
    }
    return { contract: r.contract, status: r.status, tests_status: r.tests_status, suite_result_count: r.suite_result_count, suite_results: r.suite_results.map((s) => ({ suite_id: s.suite_id, status: s.status, blocking: s.blocking })) };
}
/** Compact CI evidence derived from a result (attached to the patchset by the workflow layer). */
export function compactEvidence(result) {
    const failing = result.suite_results.filter((s) => s.status === 'fail');
    return {
        status: result.status,
        tests_status: result.tests_status,
        suite_result_count: result.suite_result_count,
        failed_suite_count: failing.length,
        blocking_failure_count: failing.filter((s) => s.blocking).length,
        suite_results: result.suite_results.map((s) => ({ suite_id: s.suite_id, status: s.status, blocking: s.blocking })),
    };
}
export function validateErrorText(error) {
    if ([...error].length > MAX_ERROR_CHARS)
        throw new Invalid(`detail.error is longer than ${MAX_ERROR_CHARS} characters`);
}
//# sourceMappingURL=jobs.js.map