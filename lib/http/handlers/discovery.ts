// Service discovery (spec: "Health and handshake", "Service discovery").
import { createRequire } from 'node:module';
import { JOB_KINDS } from '../../domain/job-kinds.js';
import type { Handler, RouteSpec } from '../route-types.js';
import { arr, bool, constant, enumOf, nullable, obj, ref, str, strArr, type Schemas } from '../json-schema.js';

const packageVersion: string = (createRequire(import.meta.url)('../../../../package.json') as { version: string }).version;

export const CONTRACT_VERSION = '1.0.0';

export const OPERATIONAL_CAPABILITIES = {
  contract: 'svc.server.operational-capabilities.v1',
  repository_identity: 'binary-repository-index.v0',
  worker_job_identity: 'binary-worker-job-key.v0',
  runner_contracts: ['svc.runner.native-job.v3'],
};

export function readyBody(): Record<string, unknown> {
  return {
    ready: true,
    status: 'ready',
    authority_backend: 'binary_v0',
    repository_identity: 'repository_index',
    operational_capabilities: OPERATIONAL_CAPABILITIES,
  };
}

export const health: Handler = async ({ service }) => {
  const archive = service.archiveStatus?.();
  const follow = service.followStatus?.();
  const lease = service.leaseStatus?.();
  return { json: { ...readyBody(), ...(archive ? { archive } : {}), ...(follow ? { follow } : {}), ...(lease ? { lease } : {}) } };
};

export const capabilities: Handler = async () => ({ json: OPERATIONAL_CAPABILITIES });

/** The handshake, listing `discoverable()` (the route table's discovery rows) as its endpoints hint. */
export const handshakeHandler = (discoverable: () => readonly RouteSpec[]): Handler => async () => ({
  json: {
    ready: true,
    contract_version: CONTRACT_VERSION,
    package_version: packageVersion,
    authority_backend: 'binary_v0',
    repository_identity: 'repository_index',
    ci_capabilities: {
      contract: 'svc.server.ci-capabilities.v1',
      runner_job_kinds: JOB_KINDS.filter((k) => k.external).map((k) => k.kind),
      runtime_contracts: ['svc.runner.native-job.v3'],
      result_contracts: ['svc.runner.native-result.v1'],
      entrypoints: ['ci/run.sh', 'ci/run.ps1'],
      delivery: 'binary_worker_job',
    },
    operational_capabilities: OPERATIONAL_CAPABILITIES,
    supported_async_job_types: JOB_KINDS.map((k) => k.job_type),
    async_job_kinds: JOB_KINDS.map((k) => ({ kind: k.kind, job_type: k.job_type, external_claim: k.external })),
    endpoints: discoverable().map((r) => ({
      operation: r.operation,
      method: r.method,
      path: r.template + (r.action ? `:${r.action}` : ''),
    })),
  },
});

export const SCHEMAS: Schemas = {
  OperationalCapabilities: obj({
    contract: constant(OPERATIONAL_CAPABILITIES.contract),
    repository_identity: constant(OPERATIONAL_CAPABILITIES.repository_identity),
    worker_job_identity: constant(OPERATIONAL_CAPABILITIES.worker_job_identity),
    runner_contracts: strArr,
  }),
  Health: obj({
    ready: constant(true),
    status: constant('ready'),
    authority_backend: constant('binary_v0'),
    repository_identity: constant('repository_index'),
    operational_capabilities: ref('OperationalCapabilities'),
    archive: ref('ArchiveStatus'),
    follow: ref('FollowStatus'),
    lease: ref('LeaseStatus'),
  }, { optional: ['archive', 'follow', 'lease'] }),
  LeaseStatus: obj({
    url: { ...str, description: 'the etcd URL and key prefix (serve --lease)' },
    node: { ...str, description: 'this server\'s node id in the writer record (host/pid/random)' },
    state: enumOf(['idle', 'held', 'uncertain', 'lost', 'superseded', 'released', 'stopped']),
    remaining_ms: { type: 'integer', description: 'milliseconds before this writer\'s deadline (0: not held)' },
    holder: nullable(obj({ node: str, url: nullable(str), generation: nullable(str) }, { description: 'the other writer holding the lease (waiting for it, or superseded by it)' })),
    refusal: { ...nullable(str), description: 'why writes are refused now (503), or null' },
  }, { description: 'present only with serve --lease' }),
  ArchiveStatus: obj({
    url: str,
    generation: { ...str, description: 'the archive generation this server ships under (decimal)' },
    state: enumOf(['shipping', 'idle', 'fenced', 'error', 'handed_over']),
    sync: { ...bool, description: 'serve --archive-sync: a commit is answered only once a stored manifest covers it' },
    lag_seconds: { type: 'number', description: 'age of the oldest commit no stored manifest covers, over every repository (0: none); never reset by a restart' },
    uncovered_commits: { type: 'integer', description: 'commits no stored manifest covers, over every repository' },
    repositories: arr(obj({
      repository: { type: 'integer' },
      shipped_commit: { ...str, description: 'commit generation of the newest shipped manifest (decimal; "0": none yet)' },
      committed: { ...str, description: 'commit generation committed now (decimal)' },
      lag_seconds: { type: 'number', description: 'age of the oldest commit of this repository no stored manifest covers (0: none)' },
      lag_bytes: { type: 'integer' },
      uncovered_commits: { type: 'integer', description: 'commits of this repository no stored manifest covers' },
      oldest_uncovered_at: { ...nullable(str), description: 'when the oldest of them was committed (after a restart: the newest manifest\'s capture time, an upper bound of the age); null when none' },
    })),
    last_error: nullable(str),
    last_shipped_at: nullable(str),
    sealed_with: { ...nullable(str), description: 'serve --archive-key-file: the id of the key new objects are sealed with (the key file\'s first); null: the archive is not encrypted' },
    last_prune: nullable(obj({
      at: str,
      deleted_manifests: { type: 'integer' },
      deleted_objects: { type: 'integer' },
      deleted_bytes: { type: 'integer' },
      error: str,
    }, { optional: ['deleted_manifests', 'deleted_objects', 'deleted_bytes', 'error'], description: 'the last prune by serve --archive-keep: its counts, or its error; null before the first' })),
    last_verify: nullable(obj({
      at: str,
      ok: bool,
      repositories: arr(obj({ repository: { type: 'integer' }, manifest: nullable(str), ok: bool, problem: nullable(str) })),
      error: str,
    }, { optional: ['ok', 'repositories', 'error'], description: 'the last verification by serve --archive-verify-every: each repository verified (its manifest, ok, the problem), or the error that kept it from running; null before the first' })),
  }, { optional: ['last_prune', 'last_verify'], description: 'present only while the server ships to an archive (serve --archive)' }),
  HealthStarting: obj({ ready: constant(false), status: constant('starting') }, { description: 'GET /healthz before activation (503)' }),
  Handshake: obj({
    ready: constant(true),
    contract_version: constant(CONTRACT_VERSION),
    package_version: str,
    authority_backend: constant('binary_v0'),
    repository_identity: constant('repository_index'),
    ci_capabilities: obj({
      contract: constant('svc.server.ci-capabilities.v1'),
      runner_job_kinds: arr(enumOf(JOB_KINDS.filter((k) => k.external).map((k) => k.kind))),
      runtime_contracts: strArr,
      result_contracts: strArr,
      entrypoints: strArr,
      delivery: constant('binary_worker_job'),
    }),
    operational_capabilities: ref('OperationalCapabilities'),
    supported_async_job_types: arr(enumOf(JOB_KINDS.map((k) => k.job_type))),
    async_job_kinds: arr(obj({ kind: enumOf(JOB_KINDS.map((k) => k.kind)), job_type: enumOf(JOB_KINDS.map((k) => k.job_type)), external_claim: bool })),
    endpoints: {
      ...arr(obj({ operation: str, method: str, path: str })),
      description: 'a compact hint: the discovery rows of the route table, not the full route list (that is this document)',
    },
  }),
};
