// Worker jobs and repository CI (spec: "Worker jobs", the repository :runCi row).
import { decodeCursor } from '../../domain/paging.js';
import { cursorScope, queryValue } from './workflow-common.js';
import { array, boolean, integer, never, nullable, object, optional, record, string, type as looseObject, unknown } from 'superstruct';
import { jobProjection, type ClaimResult } from '../../authority/jobs.js';
import { Busy, Conflict, Invalid, NotFound, Unprocessable } from '../../domain/errors.js';
import { JOB_KINDS, jobKind } from '../../domain/job-kinds.js';
import { CI_OUTCOMES, ERROR_KIND_NAMES, OUTCOME_SUPERSEDED, RETRY_NAMES, RUNTIME_CONTRACT, STATE_NAMES, type CiOutcome } from '../../domain/jobs.js';
import { U32_MAX } from '../../domain/repository.js';
import { isContentId } from '../../domain/content.js';
import { requireAuthority, type Handler, type QueryParam, type RouteContext } from '../route-types.js';
import { validate } from '../validate.js';
import { PROXIED_HEADER, peerHeaders } from '../cluster-proxy.js';
import type { ClusterPlacement } from '../../authority/cluster.js';
import { arr, bool, constant, enumOf, extend, hex64, nullable as orNull, obj, PAGE_FIELDS, ref, str, strArr, uint, type Schemas } from '../json-schema.js';

export const QUEUE_CONTRACT = 'svc.server.worker-job.service.v1';

export const RunCiRequest = looseObject({ snapshot_id: optional(nullable(string())) });

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

function queryOutcome(ctx: RouteContext): CiOutcome | null {
  const value = ctx.koa.query.outcome;
  if (value === undefined) return null;
  if (Array.isArray(value) || !(CI_OUTCOMES as readonly string[]).includes(value)) throw new Invalid(`outcome must be one of ${CI_OUTCOMES.join(', ')}`);
  return value as CiOutcome;
}

export const listJobs: Handler = async (ctx) => {
  const authority = requireAuthority(ctx);
  const stateKind = queryInteger(ctx, 'state_kind', 1, 4, null);
  const outcome = queryOutcome(ctx);
  const limit = queryInteger(ctx, 'limit', 1, 1000, 50)!;
  // The outcome filter is part of the cursor's scope: a cursor of another outcome (or of the unfiltered list) is 400.
  const scope = cursorScope(ctx, 'worker-jobs', { state_kind: stateKind, outcome });
  const page = await authority.jobs.list({ stateKind, outcome }, { limit, after: decodeCursor(scope, queryValue(ctx, 'cursor'), 'int'), scope });
  const jobs = page.rows.map((j) => jobProjection(j));
  return { json: { contract: QUEUE_CONTRACT, repository_index: authority.index, state_kind: stateKind, outcome, limit, count: jobs.length, next_cursor: page.next_cursor, jobs } };
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

export const ClaimNextRequest = looseObject({
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
  const cluster = ctx.service.cluster;
  if (cluster && !ctx.koa.get(PROXIED_HEADER)) return { json: await clusterClaim(ctx, cluster, req, repositories) };
  const claimed = await ctx.service.claimNext(new Set(req.accepted_job_kinds), repositories);
  return { json: claimResponse(claimed) };
};

/**
 * serve --cluster: a runner may talk to any node. The repositories it names are claimed at
 * their owners (grouped by node); naming none, this node's jobs come first, then each other
 * live node's in name order, until one has a job. A node that does not answer is passed over
 * (the runner asks again at its next poll). The job's later calls name its repository, so they
 * reach its owner.
 */
async function clusterClaim(ctx: RouteContext, cluster: ClusterPlacement, req: { accepted_job_kinds: number[]; accepted_runtime_contracts: string[] }, repositories: number[]): Promise<Record<string, unknown>> {
  const groups = new Map<string, number[]>();
  // etcd not answering: a 503 saying so.
  const etcd = async <T>(read: () => Promise<T>): Promise<T> => {
    try {
      return await read();
    } catch {
      throw new Busy('the cluster\'s etcd did not answer, so where the jobs are is not known now; retry');
    }
  };
  if (repositories.length) {
    for (const index of repositories) {
      const owner = (await etcd(() => cluster.owner(index))) ?? cluster.node;
      groups.set(owner, [...(groups.get(owner) ?? []), index]);
    }
  } else {
    groups.set(cluster.node, []);
    for (const name of [...(await etcd(() => cluster.nodes())).keys()].sort()) if (name !== cluster.node) groups.set(name, []);
  }
  const peer = peerHeaders(ctx.koa.req, cluster.node);
  for (const [node, indexes] of groups) {
    if (node === cluster.node) {
      const claimed = await ctx.service.claimNext(new Set(req.accepted_job_kinds), indexes);
      if (claimed) return claimResponse(claimed);
      continue;
    }
    const n = cluster.nodeKnown(node);
    if (!n) continue;
    try {
      const res = await fetch(`${n.url.replace(/\/$/, '')}/v1/native/worker-jobs:claim`, {
        method: 'POST',
        headers: { ...peer, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ accepted_job_kinds: req.accepted_job_kinds, accepted_runtime_contracts: req.accepted_runtime_contracts, ...(indexes.length ? { repository_indexes: indexes } : {}) }),
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) continue;
      const body = (await res.json()) as Record<string, unknown>;
      if (body.claimed_job) return body;
    } catch {
      // Passed over: the runner asks again at its next poll.
    }
  }
  return claimResponse(null);
}

export const ClaimExactRequest = object({ accepted_runtime_contracts: array(string()) });

export const claimExact: Handler = async (ctx) => {
  const req = validate(ctx.body, ClaimExactRequest);
  noDuplicates(req.accepted_runtime_contracts, 'accepted_runtime_contracts');
  if (!req.accepted_runtime_contracts.includes(RUNTIME_CONTRACT)) throw new Conflict(`the job needs runtime contract ${RUNTIME_CONTRACT}, which the caller does not accept`);
  const claimed = await requireAuthority(ctx).jobs.claimExact(Number(ctx.params.worker_job_index));
  return { json: claimResponse(claimed) };
};

const LeaseFields = { attempt_count: integer(), lease_token: string() };
/** `detail` is forbidden on heartbeat (422): `never` says so in the schema and in the check. */
export const HeartbeatRequest = looseObject({ ...LeaseFields, detail: optional(never()) });
export const CompleteRequest = looseObject({ ...LeaseFields, detail: record(string(), unknown()) });
export const FailRequest = looseObject({ ...LeaseFields, detail: looseObject({ retryable: boolean(), error: string() }) });
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

const compactEvidence = obj({
  status: enumOf(['succeeded', 'command_failed', 'timed_out']),
  tests_status: enumOf(['pass', 'fail']),
  suite_result_count: uint,
  failed_suite_count: uint,
  blocking_failure_count: uint,
  suite_results: { ...arr(obj({ suite_id: str, status: enumOf(['pass', 'fail']), blocking: bool })), description: "the runner's suites, in its order" },
}, { description: 'compact CI evidence of the runner result' });

const entrypoint = obj({ path: str, argv: strArr });

const claimedJob = obj({
  repository_index: uint,
  worker_job_index: uint,
  job_kind: enumOf(JOB_KINDS.filter((k) => k.external).map((k) => k.kind)),
  job_type: str,
  attempt_count: uint,
  lease_token: { type: 'string', pattern: '^[0-9a-f]{32}$', description: 'the lease capability: never logged, never shown again' },
  lease_expires_at_s: uint,
  runtime_request: ref('RuntimeRequest'),
  job: ref('WorkerJob'),
});

export const SCHEMAS: Schemas = {
  WorkerJob: obj({
    repository_index: uint,
    worker_job_index: uint,
    job_key: { type: 'string', pattern: '^[0-9a-f]+$', description: 'hex of binary-worker-job-key.v0' },
    job_kind: enumOf(JOB_KINDS.map((k) => k.kind)),
    job_type: orNull(enumOf(JOB_KINDS.map((k) => k.job_type))),
    state_kind: enumOf(Object.keys(STATE_NAMES).map(Number)),
    state: enumOf(Object.values(STATE_NAMES)),
    retry_status: enumOf(RETRY_NAMES),
    outcome: enumOf([null, 'succeeded', 'command_failed', 'timed_out', 'failed', OUTCOME_SUPERSEDED]),
    attempt_count: uint,
    max_attempts: uint,
    error_kind: enumOf(ERROR_KIND_NAMES),
    error: orNull(str),
    snapshot_id: orNull(hex64),
    snapshot_index: orNull(uint),
    patchset_id: orNull(str),
    trigger: orNull(str),
    run_sequence: { ...orNull(uint), description: 'patchset.ci: its CI run; null for other kinds' },
    land_queue_entry_ids: { ...orNull(strArr), description: 'repo.ci of a land-queue speculation: the entries its snapshot tests, in queue order; null otherwise' },
    timeout_s: uint,
    available: bool,
    available_at_s: orNull(uint),
    locked_at_s: orNull(uint),
    lease_expires_at_s: orNull(uint),
    created_at_s: uint,
    updated_at_s: uint,
    completed_at_s: orNull(uint),
    tombstoned: bool,
    ci: { ...orNull(compactEvidence), description: 'patchset.ci jobs always (null before a result); repo.ci jobs whose runner sent a result' },
    ci_outcome: { ...orNull(enumOf(CI_OUTCOMES)), description: 'whether CI passed, derived from the completion (`outcome` and `ci`); null while queued or running' },
  }, { optional: ['ci'], description: 'never carries a lease token' }),
  WorkerJobList: obj({
    contract: constant(QUEUE_CONTRACT),
    repository_index: uint,
    state_kind: orNull(enumOf(Object.keys(STATE_NAMES).map(Number))),
    outcome: { ...orNull(enumOf(CI_OUTCOMES)), description: 'the outcome filter, null when none' },
    limit: uint,
    ...PAGE_FIELDS,
    jobs: arr(ref('WorkerJob')),
  }),
  WorkerJobRead: obj({ contract: constant(QUEUE_CONTRACT), job: ref('WorkerJob') }),
  RepositoryCiRun: obj({
    repository_index: uint,
    snapshot_id: hex64,
    snapshot_index: uint,
    queued: bool,
    job: ref('WorkerJob'),
    delivery: constant('binary_worker_job'),
  }),
  RuntimeRequest: obj({
    contract: constant(RUNTIME_CONTRACT),
    repository_index: uint,
    snapshot_id: orNull(hex64),
    patchset_id: orNull(str),
    entrypoints: obj({ posix: entrypoint, windows: entrypoint }),
    timeout_s: uint,
    results_file: str,
  }),
  ClaimedJob: claimedJob,
  WorkerJobClaim: extend(claimedJob, { contract: constant(RUNTIME_CONTRACT), claimed_job: ref('ClaimedJob') }, { description: 'the claimed job, also repeated at the top level' }),
  WorkerJobClaimNext: {
    anyOf: [ref('WorkerJobClaim'), obj({ contract: constant(RUNTIME_CONTRACT), claimed_job: constant(null) }, { description: 'nothing matched' })],
  },
  WorkerJobHeartbeat: obj({ contract: constant(QUEUE_CONTRACT), heartbeat: constant(true), attempt_count: uint, lease_expires_at_s: uint, job: ref('WorkerJob') }),
  WorkerJobCompletion: obj({ contract: constant(QUEUE_CONTRACT), completed: constant(true), job: ref('WorkerJob') }),
  WorkerJobFailure: obj({ contract: constant(QUEUE_CONTRACT), failed: constant(true), requeued: bool, job: ref('WorkerJob') }),
};

export const ListQuery: Record<string, QueryParam> = {
  state_kind: { schema: { type: 'integer', minimum: 1, maximum: 4 }, description: '1 queued, 2 running, 3 succeeded, 4 failed' },
  outcome: { schema: enumOf(CI_OUTCOMES), description: 'only finished jobs of this CI outcome (`ci_outcome`); other values are 400' },
  limit: { schema: { type: 'integer', minimum: 1, maximum: 1000, default: 50 }, description: 'rows per page' },
  cursor: { schema: str, description: "the previous page's next_cursor, unchanged" },
};
