// The evidence projections of a patchset: CI (derived from its kind-7 worker jobs' records,
// never written on the patchset), review and policy. The workflow issue that builds reviews,
// attestation, policy and CI on patchsets replaces the "none yet" forms here; the patchset
// projection calls only these functions.
import { STATE_FAILED, STATE_QUEUED, STATE_RUNNING, STATE_SUCCEEDED, type JobRecord } from '../../domain/jobs.js';

export function ciProjection(jobs: readonly JobRecord[]): Record<string, unknown> {
  const last = jobs.at(-1);
  if (!last) return { ci_run_sequence: 0, overall: 'none', tests: 'none', lint: 'none', latest_worker_job_index: null, completed_at_s: null };
  const result = last.detail.result as { status?: string; tests_status?: string } | null;
  let overall = 'pending';
  if (last.state === STATE_SUCCEEDED) overall = result?.status === 'succeeded' && result.tests_status === 'pass' ? 'pass' : 'fail';
  else if (last.state === STATE_FAILED) overall = 'error';
  else if (last.state !== STATE_QUEUED && last.state !== STATE_RUNNING) overall = 'none';
  return {
    ci_run_sequence: jobs.length,
    overall,
    tests: result?.tests_status ?? 'none',
    lint: 'none',
    latest_worker_job_index: last.worker_job_index,
    completed_at_s: last.completed_at_s > 0 ? last.completed_at_s : null,
  };
}

export function reviewProjection(): Record<string, unknown> {
  return { state: 'none', approvals: 0, blocking: 0, comments: 0, total: 0 };
}

export function policyProjection(): Record<string, unknown> {
  return { decision: 'pending', checks: [] };
}

/** `not_evaluated` until a policy evaluation exists (next issue). */
export function evaluationState(): string {
  return 'not_evaluated';
}
