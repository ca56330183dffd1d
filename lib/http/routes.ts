// THE route table: all 78 operations of ../shared/spec/http-interface.md, one row each.
// The router (./router.ts), the 405 Allow header, the handshake `endpoints` hint and the
// route-count test all derive from this array. A row without a handler answers 501.
import {
  MEDIA_AUTHORITY_FILE,
  MEDIA_OBJECT_PACK,
  MEDIA_TREE_PACK,
  RAISED_LIMIT,
  STANDARD_LIMIT,
  type Admission,
  type BodyKind,
  type Handler,
  type Method,
  type RouteSpec,
} from './route-types.js';
import { PULL_MANIFEST_JSON, RAISED_JSON, STANDARD_JSON, type JsonCaps } from './json-body.js';
import * as discovery from './handlers/discovery.js';
import * as registry from './handlers/registry.js';
import * as content from './handlers/content.js';
import * as jobs from './handlers/jobs.js';
import * as plans from './handlers/plans.js';
import * as lifecycle from './handlers/lifecycle.js';
import * as tasks from './handlers/tasks.js';
import * as changes from './handlers/changes.js';
import * as reviews from './handlers/reviews.js';
import * as promotion from './handlers/promotion.js';
import * as lands from './handlers/lands.js';
import * as diffs from './handlers/diffs.js';

const AUTH = '/v1/native/repository-authorities';
const REPO = `${AUTH}/{repository_index}`;
const SYNC = `${REPO}/remote-sync/zstd-bulk`;
const RESTORES = '/v1/native/repository-restores';

const NONE: BodyKind = { kind: 'none' };
const JSON_BODY: BodyKind = { kind: 'json' };
const raw = (mediaType: string): BodyKind => ({ kind: 'raw', mediaType });

interface Options {
  action?: string;
  body?: BodyKind;
  raised?: boolean;
  /** JSON caps tighter than the route's default (raised or standard). */
  jsonCaps?: JsonCaps;
  admission?: Admission;
  discover?: boolean;
  extension?: boolean;
  handler?: Handler;
}

function route(operation: string, method: Method, template: string, o: Options = {}): RouteSpec {
  const underRepo = template.startsWith(REPO);
  return {
    operation,
    logName: template + (o.action ? `:${o.action}` : ''),
    method,
    template,
    action: o.action,
    body: o.body ?? (method === 'GET' ? NONE : JSON_BODY),
    limit: o.raised ? RAISED_LIMIT : STANDARD_LIMIT,
    jsonCaps: o.jsonCaps ?? (o.raised ? RAISED_JSON : STANDARD_JSON),
    admission: o.admission ?? (underRepo ? 'active' : 'global'),
    discover: o.discover,
    extension: o.extension,
    handler: o.handler,
  };
}

export const ROUTES: readonly RouteSpec[] = [
  // Service discovery
  route('health', 'GET', '/healthz', { discover: true, handler: discovery.health }),
  // The handshake lists this table's discovery rows; it is given them lazily (no import cycle).
  route('handshake', 'GET', '/v1/handshake', { discover: true, handler: discovery.handshakeHandler(() => ROUTES.filter((r) => r.discover)) }),
  route('capabilities', 'GET', '/v1/native/capabilities', { discover: true, handler: discovery.capabilities }),

  // Repository registry, CI, retirement, restore
  route('repositories.list', 'GET', AUTH, { discover: true, handler: registry.list }),
  route('repositories.register', 'POST', AUTH, { discover: true, handler: registry.register }),
  route('repositories.get', 'GET', REPO, { discover: true, handler: registry.get }),
  route('repositories.runCi', 'POST', REPO, { action: 'runCi', discover: true, handler: jobs.runRepositoryCi }),
  route('retirement.status', 'GET', `${REPO}/retirement`, { admission: 'retirement', handler: lifecycle.retirementStatus }),
  route('retirement.start', 'POST', `${REPO}/retirement`, { body: NONE, admission: 'retirement', handler: lifecycle.startRetirement }),
  route('retirement.file', 'GET', `${REPO}/retirement/files/{file_path}`, { admission: 'retirement', handler: lifecycle.retirementFile }),
  route('retirement.purge', 'POST', `${REPO}/retirement/purge`, { admission: 'retirement', handler: lifecycle.purge }),
  route('retirement.abort', 'POST', `${REPO}/retirement/abort`, { body: NONE, admission: 'retirement', handler: lifecycle.abortRetirement }),
  route('restores.start', 'POST', RESTORES, { discover: true, handler: lifecycle.startRestore }),
  route('restores.uploadFile', 'PUT', `${RESTORES}/{restore_token}/files/{file_path}`, { body: raw(MEDIA_AUTHORITY_FILE), raised: true, handler: lifecycle.uploadRestoreFile }),
  route('restores.commit', 'POST', `${RESTORES}/{restore_token}/commit`, { body: NONE, handler: lifecycle.commitRestore }),

  // Worker jobs
  route('workerJobs.list', 'GET', `${REPO}/worker-jobs`, { handler: jobs.listJobs }),
  route('workerJobs.get', 'GET', `${REPO}/worker-jobs/{worker_job_index}`, { handler: jobs.getJob }),
  route('workerJobs.claimNext', 'POST', '/v1/native/worker-jobs', { action: 'claim', discover: true, handler: jobs.claimNext }),
  route('workerJobs.claim', 'POST', `${REPO}/worker-jobs/{worker_job_index}`, { action: 'claim', admission: 'worker', handler: jobs.claimExact }),
  route('workerJobs.heartbeat', 'POST', `${REPO}/worker-jobs/{worker_job_index}`, { action: 'heartbeat', admission: 'worker', handler: jobs.heartbeat }),
  route('workerJobs.complete', 'POST', `${REPO}/worker-jobs/{worker_job_index}`, { action: 'complete', admission: 'worker', handler: jobs.complete }),
  route('workerJobs.fail', 'POST', `${REPO}/worker-jobs/{worker_job_index}`, { action: 'fail', admission: 'worker', handler: jobs.failJob }),

  // Lines and snapshots
  route('lines.list', 'GET', `${REPO}/lines`, { discover: true, handler: content.listLines }),
  route('lines.get', 'GET', `${REPO}/lines/{line_name}`, { handler: content.getLine }),
  route('lines.put', 'PUT', `${REPO}/lines/{line_name}`, { handler: content.putLine }),
  route('lines.close', 'POST', `${REPO}/lines/{line_name}`, { action: 'close', handler: content.closeLine }),
  route('snapshots.exists', 'POST', `${REPO}/snapshots`, { action: 'exists', handler: content.snapshotsExist }),
  route('snapshots.export', 'GET', `${REPO}/snapshots/{snapshot_id}`, { handler: content.exportSnapshot }),

  // Bulk remote sync
  route('sync.plan', 'POST', `${SYNC}/plan`, { raised: true, discover: true, handler: content.plan }),
  route('sync.putObjectPack', 'PUT', `${SYNC}/object-packs/{pack_id}`, { body: raw(MEDIA_OBJECT_PACK), raised: true, handler: content.putObjectPack }),
  route('sync.getObjectPack', 'GET', `${SYNC}/object-packs/{pack_id}`, { handler: content.getObjectPack }),
  route('sync.putTreePack', 'PUT', `${SYNC}/tree-packs/{pack_id}`, { body: raw(MEDIA_TREE_PACK), raised: true, handler: content.putTreePack }),
  route('sync.getTreePack', 'GET', `${SYNC}/tree-packs/{pack_id}`, { handler: content.getTreePack }),
  route('sync.commit', 'POST', `${SYNC}/commit`, { raised: true, discover: true, handler: content.commit }),
  route('sync.importManifest', 'GET', `${SYNC}/import-manifests/{snapshot_id}`, { handler: content.importManifest }),
  route('sync.pullManifest', 'POST', `${SYNC}/pull-manifests`, { raised: true, jsonCaps: PULL_MANIFEST_JSON, discover: true, handler: content.pullManifest }),

  // Tasks and read models
  route('tasks.list', 'GET', `${REPO}/tasks`, { handler: tasks.list }),
  route('tasks.create', 'POST', `${REPO}/tasks`, { handler: tasks.create }),
  route('tasks.start', 'POST', `${REPO}/task-start`, { discover: true, handler: lands.taskStartHandler }),
  route('tasks.get', 'GET', `${REPO}/tasks/{task_ref}`, { handler: tasks.get }),
  route('tasks.close', 'POST', `${REPO}/tasks/{task_ref}`, { action: 'close', handler: tasks.close }),
  route('read.taskAudit', 'GET', `${REPO}/read/tasks/{task_id}/audit`, { handler: tasks.audit }),
  route('read.queueSummary', 'GET', `${REPO}/read/queue-summary`, { handler: tasks.queueSummary }),
  route('read.taskQueue', 'GET', `${REPO}/read/task-queue`, { handler: tasks.taskQueue }),
  route('read.reviewerInbox', 'GET', `${REPO}/read/reviewer-inbox`, { handler: reviews.inbox }),

  // Changes, patchsets, reviews, policy, CI, Land
  route('changes.list', 'GET', `${REPO}/changes`, { handler: changes.list }),
  route('changes.create', 'POST', `${REPO}/changes`, { handler: changes.create }),
  route('changes.get', 'GET', `${REPO}/changes/{change_ref}`, { handler: changes.get }),
  route('changes.close', 'POST', `${REPO}/changes/{change_ref}`, { action: 'close', handler: changes.close }),
  route('changes.selectPatchset', 'POST', `${REPO}/changes/{change_ref}`, { action: 'selectPatchset', handler: changes.selectPatchset }),
  route('changes.requestReview', 'POST', `${REPO}/changes/{change_ref}`, { action: 'requestReview', handler: reviews.requestReview }),
  route('changes.submit', 'POST', `${REPO}/changes/{change_ref}`, { action: 'submit', handler: lands.submit }),
  route('patchsets.list', 'GET', `${REPO}/changes/{change_ref}/patchsets`, { handler: changes.listPatchsets }),
  route('patchsets.create', 'POST', `${REPO}/changes/{change_ref}/patchsets`, { handler: changes.createPatchset }),
  route('reviews.list', 'GET', `${REPO}/changes/{change_ref}/reviews`, { handler: reviews.list }),
  route('reviews.create', 'POST', `${REPO}/changes/{change_ref}/reviews`, { handler: reviews.create }),
  route('patchsets.get', 'GET', `${REPO}/patchsets/{patchset_id}`, { handler: changes.getPatchset }),
  route('patchsets.runCi', 'POST', `${REPO}/patchsets/{patchset_id}`, { action: 'runCi', handler: reviews.runCi }),
  route('patchsets.evaluatePolicy', 'POST', `${REPO}/patchsets/{patchset_id}`, { action: 'evaluatePolicy', handler: reviews.evaluatePolicy }),
  route('attestations.get', 'GET', `${REPO}/patchsets/{patchset_id}/attestation`, { handler: reviews.getAttestation }),
  route('attestations.put', 'PUT', `${REPO}/patchsets/{patchset_id}/attestation`, { handler: reviews.putAttestation }),
  route('policy.get', 'GET', `${REPO}/patchsets/{patchset_id}/policy`, { handler: reviews.getPolicy }),
  route('read.ciStatus', 'GET', `${REPO}/read/patchsets/{patchset_id}/ci-status`, { handler: reviews.ciStatus }),
  route('lands.get', 'GET', `${REPO}/lands/{submission_id}`, { handler: lands.get }),
  route('tasks.land', 'POST', `${REPO}/task-land`, { discover: true, handler: lands.taskLandHandler }),
  route('historyPromotion.prepare', 'POST', `${REPO}/history-promotion`, { action: 'prepare', handler: promotion.prepare }),

  // Plans (sprints)
  route('plans.list', 'GET', `${REPO}/sprints`, { handler: plans.list }),
  route('plans.create', 'POST', `${REPO}/sprints`, { handler: plans.create }),
  route('plans.get', 'GET', `${REPO}/sprints/{plan_id}`, { handler: plans.get }),
  route('plans.patch', 'PATCH', `${REPO}/sprints/{plan_id}`, { handler: plans.patch }),
  route('plans.revisions.list', 'GET', `${REPO}/sprints/{plan_id}/revisions`, { handler: plans.listRevisions }),
  route('plans.revisions.create', 'POST', `${REPO}/sprints/{plan_id}/revisions`, { handler: plans.revise }),
  route('plans.revisions.get', 'GET', `${REPO}/sprints/{plan_id}/revisions/{plan_revision_id}`, { handler: plans.getRevision }),
  route('plans.artifacts.get', 'GET', `${REPO}/sprints/{plan_id}/revisions/{plan_revision_id}/artifacts`, { handler: plans.getArtifacts }),
  route('plans.artifacts.put', 'PUT', `${REPO}/sprints/{plan_id}/revisions/{plan_revision_id}/artifacts`, { body: NONE, handler: plans.putArtifacts }),
  route('plans.byContains', 'POST', `${REPO}/sprint-plan-ids/by-contains`, { handler: plans.byContains }),
  route('plans.resolveLinkage', 'POST', `${REPO}/sprint-task-linkage/resolve`, { handler: plans.resolveLinkage }),
  route('read.planCandidates', 'GET', `${REPO}/read/plans/candidate-inputs`, { handler: plans.candidateInputs }),

  // Extensions (not in the spec): diffs and land readiness for reviewers
  route('read.patchsetDiff', 'GET', `${REPO}/read/patchsets/{patchset_id}/diff`, { extension: true, handler: diffs.patchsetDiffHandler }),
  route('read.changeDiff', 'GET', `${REPO}/read/changes/{change_ref}/diff`, { extension: true, handler: diffs.changeDiffHandler }),
  route('read.changeReadiness', 'GET', `${REPO}/read/changes/{change_ref}/readiness`, { extension: true, handler: diffs.readinessHandler }),
];

/** The spec's 78 operations (every row that is not an extension). */
export const SPEC_ROUTES: readonly RouteSpec[] = ROUTES.filter((r) => !r.extension);

/** Operations that answer 501 until their issue lands. */
export function unimplementedOperations(): string[] {
  return ROUTES.filter((r) => !r.handler).map((r) => r.operation);
}
