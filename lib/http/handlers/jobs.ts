// Worker jobs and repository CI (spec: "Worker jobs", the repository :runCi row).
import { decodeCursor } from '../../domain/paging.js';
import { queryValue } from './workflow-common.js';
import { array, boolean, integer, nullable, object, optional, record, string, type as looseObject, unknown } from 'superstruct';
import { jobProjection, type ClaimResult } from '../../authority/jobs.js';
import { Conflict, Invalid, NotFound, Unprocessable } from '../../domain/errors.js';
import { jobKind } from '../../domain/job-kinds.js';
import { RUNTIME_CONTRACT } from '../../domain/jobs.js';
import { U32_MAX } from '../../domain/repository.js';
import { isContentId } from '../../domain/content.js';
import { requireAuthority, type Handler, type RouteContext } from '../route-types.js';
import { validate } from '../validate.js';

export const QUEUE_CONTRACT = 'svc.server.worker-job.service.v1';

const RunCiRequest = looseObject({ snapshot_id: optional(nullable(string())) });

export const runRepositoryCi: Handler = async (ctx) => {
  const authority = requireAuthority(ctx);
  const req = validate(ctx.body, RunCiRequest);
  let snapshotId = req.snapshot_id ?? null;
  if (snapshotId === null) {
    const main = authority.store.line('main');
    if (!main?.head_snapshot_id) throw new NotFound('no snapshot to run: snapshot_id was not given and line main has no head');
    snapshotId = main.head_snapshot_id;
  }
  if (!isContentId(snapshotId)) throw new Invalid('snapshot_id must be a 64-hex snapshot id');
  const snapshot = authority.store.snapshot(snapshotId);
  if (!snapshot) throw new NotFound(`snapshot ${snapshotId} is not present`);
  const { job, queued } = await authority.jobs.enqueueRepoCi(snapshotId, snapshot.snapshot_index);
  return {
    json: {
      repository_index: authority.index,
      snapshot_id: snapshotId,
      snapshot_index: snapshot.snapshot_index,
      queued,
      job: jobProjection(job),
      delivery: 'binary_worker_job',
    },
  };
};

function queryInteger(ctx: RouteContext, name: string, min: number, max: number, fallback: number | null): number | null {
  const value = ctx.koa.query[name];
  if (value === undefined) return fallback;
  if (Array.isArray(value) || !/^(0|[1-9][0-9]{0,9})$/.test(value)) throw new Invalid(`${name} must be an integer from ${min} to ${max}`);
  const n = Number(value);
  if (n < min || n > max) throw new Invalid(`${name} must be an integer from ${min} to ${max}`);
  return n;
}

export const listJobs: Handler = async (ctx) => {
  const authority = requireAuthority(ctx);
  const stateKind = queryInteger(ctx, 'state_kind', 1, 4, null);
  const limit = queryInteger(ctx, 'limit', 1, 1000, 50)!;
  const page = await authority.jobs.list(stateKind, { limit, after: decodeCursor('worker-jobs', queryValue(ctx, 'cursor'), 'int') });
  const jobs = page.rows.map((j) => jobProjection(j));
  return { json: { contract: QUEUE_CONTRACT, repository_index: authority.index, state_kind: stateKind, limit, count: jobs.length, next_cursor: page.next_cursor, jobs } };
};

export const getJob: Handler = async (ctx) => {
  const job = await requireAuthority(ctx).jobs.get(Number(ctx.params.worker_job_index));
  return { json: { contract: QUEUE_CONTRACT, job: jobProjection(job) } };
};

function noDuplicates<T>(values: T[], name: string): void {
  if (new Set(values).size !== values.length) throw new Invalid(`${name} must not contain duplicates`);
}

function claimResponse(claimed: ClaimResult | null): Record<string, unknown> {
  if (!claimed) return { contract: RUNTIME_CONTRACT, claimed_job: null };
  return { contract: RUNTIME_CONTRACT, claimed_job: claimed, ...claimed };
}

const ClaimNextRequest = looseObject({
  accepted_job_kinds: array(integer()),
  repository_indexes: optional(array(integer())),
  accepted_runtime_contracts: array(string()),
});

export const claimNext: Handler = async (ctx) => {
  const req = validate(ctx.body, ClaimNextRequest);
  const repositories = req.repository_indexes ?? [];
  noDuplicates(req.accepted_job_kinds, 'accepted_job_kinds');
  noDuplicates(repositories, 'repository_indexes');
  noDuplicates(req.accepted_runtime_contracts, 'accepted_runtime_contracts');
  if (req.accepted_job_kinds.length === 0) throw new Invalid('accepted_job_kinds must name at least one kind (7 or 11)');
  for (const kind of req.accepted_job_kinds) {
    const known = jobKind(kind);
    if (!known) throw new Invalid(`unknown job kind ${kind}`);
    if (!known.external) throw new Invalid(`job kind ${kind} (${known.job_type}) is internal; external runners may claim only 7 and 11`);
  }
  for (const index of repositories) if (index < 0 || index > U32_MAX) throw new Invalid('repository_indexes entries must be u32');
  if (!req.accepted_runtime_contracts.includes(RUNTIME_CONTRACT)) return { json: claimResponse(null) };
  const claimed = await ctx.service.claimNext(new Set(req.accepted_job_kinds), repositories);
  return { json: claimResponse(claimed) };
};

const ClaimExactRequest = object({ accepted_runtime_contracts: array(string()) });

export const claimExact: Handler = async (ctx) => {
  const req = validate(ctx.body, ClaimExactRequest);
  noDuplicates(req.accepted_runtime_contracts, 'accepted_runtime_contracts');
  if (!req.accepted_runtime_contracts.includes(RUNTIME_CONTRACT)) throw new Conflict(`the job needs runtime contract ${RUNTIME_CONTRACT}, which the caller does not accept`);
  const claimed = await requireAuthority(ctx).jobs.claimExact(Number(ctx.params.worker_job_index));
  return { json: claimResponse(claimed) };
};

const LeaseFields = { attempt_count: integer(), lease_token: string() };
const HeartbeatRequest = looseObject({ ...LeaseFields, detail: optional(unknown()) });
const CompleteRequest = looseObject({ ...LeaseFields, detail: record(string(), unknown()) });
const FailRequest = looseObject({ ...LeaseFields, detail: looseObject({ retryable: boolean(), error: string() }) });
const ResultShape = looseObject({
  contract: string(),
  status: string(),
  tests_status: string(),
  suite_result_count: integer(),
  suite_results: array(looseObject({ suite_id: string(), status: string(), blocking: boolean() })),
});

function checkAttempt(n: number): void {
  if (n < 0 || n > 65535) throw new Invalid('attempt_count must be an unsigned integer');
}

export const heartbeat: Handler = async (ctx) => {
  const req = validate(ctx.body, HeartbeatRequest);
  if (Object.prototype.hasOwnProperty.call(ctx.body, 'detail')) throw new Unprocessable('detail is forbidden on heartbeat');
  checkAttempt(req.attempt_count);
  const job = await requireAuthority(ctx).jobs.heartbeat(Number(ctx.params.worker_job_index), req.attempt_count, req.lease_token);
  return { json: { contract: QUEUE_CONTRACT, heartbeat: true, attempt_count: job.attempt_count, lease_expires_at_s: job.lease_expires_at_s, job: jobProjection(job) } };
};

export const complete: Handler = async (ctx) => {
  const req = validate(ctx.body, CompleteRequest);
  checkAttempt(req.attempt_count);
  const authority = requireAuthority(ctx);
  const index = Number(ctx.params.worker_job_index);
  const current = await authority.jobs.get(index);
  if (current.kind === 7) {
    // Shape errors of the result are 422; value rules (status, counts) are 400 in the domain.
    if (req.detail.result === undefined) throw new Unprocessable('missing required field: detail.result');
    validate(req.detail.result, ResultShape);
  }
  const job = await authority.jobs.complete(index, req.attempt_count, req.lease_token, req.detail);
  return { json: { contract: QUEUE_CONTRACT, completed: true, job: jobProjection(job) } };
};

export const failJob: Handler = async (ctx) => {
  const req = validate(ctx.body, FailRequest);
  checkAttempt(req.attempt_count);
  const job = await requireAuthority(ctx).jobs.fail(Number(ctx.params.worker_job_index), req.attempt_count, req.lease_token, req.detail.retryable, req.detail.error);
  return { json: { contract: QUEUE_CONTRACT, failed: true, requeued: job.state === 1, job: jobProjection(job) } };
};

