// THE route table: all 78 operations of ../shared/spec/http-interface.md, one row each, and the
// extension rows (`extension: true`: the OpenAPI document and its rendered reference), which the
// spec's counts leave out. The router (./router.ts), the 405 Allow header, the handshake
// `endpoints` hint, the route-count test and the OpenAPI document (./openapi.ts: request schema,
// answers, query, refusals of each row) all derive from this array. A row without a handler
// answers 501.
import type { Struct } from 'superstruct';
import type { Permission } from '../domain/access.js';
import {
  MEDIA_AUTHORITY_FILE,
  MEDIA_OBJECT_PACK,
  MEDIA_TREE_PACK,
  RAISED_LIMIT,
  STANDARD_LIMIT,
  type Admission,
  type Answer,
  type BodyKind,
  type Handler,
  type Method,
  type QueryParam,
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
import * as comments from './handlers/comments.js';
import * as viewed from './handlers/viewed.js';
import * as promotion from './handlers/promotion.js';
import * as lands from './handlers/lands.js';
import * as diffs from './handlers/diffs.js';
import * as docs from './handlers/docs.js';
import * as events from './handlers/events.js';
import * as webhooks from './handlers/webhooks.js';
import * as landQueue from './handlers/land-queue.js';
import * as rules from './handlers/rules.js';
import * as git from './handlers/git.js';
import * as people from './handlers/people.js';
import * as gitMirrors from './handlers/git-mirrors.js';
import * as archive from './handlers/archive.js';
import * as cluster from './handlers/cluster.js';
import * as access from './handlers/access.js';
import { COMMIT_MSG_HOOK_PATH } from './commit-msg-hook.js';
import {
  MEDIA_RECEIVE_PACK_ADVERTISEMENT,
  MEDIA_RECEIVE_PACK_REQUEST,
  MEDIA_RECEIVE_PACK_RESULT,
  MEDIA_UPLOAD_PACK_ADVERTISEMENT,
  MEDIA_UPLOAD_PACK_REQUEST,
  MEDIA_UPLOAD_PACK_RESULT,
} from './git-http-backend.js';

const AUTH = '/v1/native/repository-authorities';
const REPO = `${AUTH}/{repository_index}`;
const SYNC = `${REPO}/remote-sync/zstd-bulk`;
const RESTORES = '/v1/native/repository-restores';
/** A line served over git: `{repo}/git/main.git` (a line name holding `/` sends it as %2F). */
const GIT_LINE = `${REPO}/git/{line_name}.git`;
/** The repository served over git as a whole: every line a branch, HEAD on main. */
const GIT_REPO = `${REPO}/git.git`;

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
  handler?: Handler;
  /** JSON routes: the struct the handler validates its body with. */
  request?: Struct<any, any>;
  /** The success answer: a components/schemas name for 200, or answers by status. */
  ok?: Answer | Record<number, Answer>;
  /** Refusals beyond those the row's shape implies (lib/http/openapi.ts `refusalsOf`). */
  refuses?: number[];
  query?: Record<string, QueryParam>;
  paged?: boolean;
  extension?: boolean;
  /** ETag answers, 304 to a matching If-None-Match (RouteSpec `conditional`). */
  conditional?: boolean;
}

function route(operation: string, method: Method, template: string, permission: Permission, o: Options = {}): RouteSpec {
  const underRepo = template.startsWith(REPO);
  const ok = o.ok ?? {};
  return {
    operation,
    logName: template + (o.action ? `:${o.action}` : ''),
    permission,
    method,
    template,
    action: o.action,
    body: o.body ?? (method === 'GET' ? NONE : JSON_BODY),
    limit: o.raised ? RAISED_LIMIT : STANDARD_LIMIT,
    jsonCaps: o.jsonCaps ?? (o.raised ? RAISED_JSON : STANDARD_JSON),
    admission: o.admission ?? (underRepo ? 'active' : 'global'),
    discover: o.discover,
    handler: o.handler,
    request: o.request,
    answers: typeof ok === 'string' || 'raw' in ok ? { 200: ok as Answer } : ok,
    refusals: o.refuses ?? [],
    query: o.query ?? {},
    paged: o.paged ?? false,
    extension: o.extension ?? false,
    ...(o.conditional ? { conditional: true } : {}),
  };
}

const PACK_MEDIA = (mediaType: string) => ({ raw: [mediaType] });

export const ROUTES: readonly RouteSpec[] = [
  // Service discovery
  route('health', 'GET', '/healthz', 'public', { discover: true, ok: 'Health', handler: discovery.health }),
  // The handshake lists this table's discovery rows; it is given them lazily (no import cycle).
  route('handshake', 'GET', '/v1/handshake', 'public', { discover: true, ok: 'Handshake', handler: discovery.handshakeHandler(() => ROUTES.filter((r) => r.discover)) }),
  route('capabilities', 'GET', '/v1/native/capabilities', 'public', { discover: true, ok: 'OperationalCapabilities', handler: discovery.capabilities }),

  // Repository registry, CI, retirement, restore
  route('repositories.list', 'GET', AUTH, 'session', { discover: true, query: registry.ListQuery, ok: 'RepositoryList', handler: registry.list }),
  route('repositories.register', 'POST', AUTH, 'server_admin', { discover: true, request: registry.RegisterRequest, ok: { 200: 'RepositoryRegistration', 201: 'RepositoryRegistration' }, refuses: [409], handler: registry.register }),
  route('repositories.get', 'GET', REPO, 'reader', { discover: true, ok: 'RepositoryRead', handler: registry.get }),
  route('repositories.runCi', 'POST', REPO, 'contributor', { action: 'runCi', discover: true, request: jobs.RunCiRequest, ok: 'RepositoryCiRun', handler: jobs.runRepositoryCi }),
  route('retirement.status', 'GET', `${REPO}/retirement`, 'admin', { admission: 'retirement', ok: 'RetirementStatus', handler: lifecycle.retirementStatus }),
  route('retirement.start', 'POST', `${REPO}/retirement`, 'admin', { body: NONE, admission: 'retirement', ok: 'RetirementStatus', refuses: [409], handler: lifecycle.startRetirement }),
  route('retirement.file', 'GET', `${REPO}/retirement/files/{file_path}`, 'admin', { admission: 'retirement', ok: PACK_MEDIA(MEDIA_AUTHORITY_FILE), handler: lifecycle.retirementFile }),
  route('retirement.purge', 'POST', `${REPO}/retirement/purge`, 'admin', { admission: 'retirement', request: lifecycle.ManifestStruct, ok: 'RetirementPurge', refuses: [409], handler: lifecycle.purge }),
  route('retirement.abort', 'POST', `${REPO}/retirement/abort`, 'admin', { body: NONE, admission: 'retirement', ok: 'RetirementAbort', refuses: [409], handler: lifecycle.abortRetirement }),
  route('restores.start', 'POST', RESTORES, 'server_admin', { discover: true, request: lifecycle.RestoreStart, ok: { 201: 'RestoreSession' }, refuses: [409], handler: lifecycle.startRestore }),
  route('restores.uploadFile', 'PUT', `${RESTORES}/{restore_token}/files/{file_path}`, 'server_admin', { body: raw(MEDIA_AUTHORITY_FILE), raised: true, ok: 'RestoreUpload', refuses: [409], handler: lifecycle.uploadRestoreFile }),
  route('restores.commit', 'POST', `${RESTORES}/{restore_token}/commit`, 'server_admin', { body: NONE, ok: 'RestoreCommit', refuses: [409], handler: lifecycle.commitRestore }),

  // Worker jobs
  route('workerJobs.list', 'GET', `${REPO}/worker-jobs`, 'reader', { paged: true, query: jobs.ListQuery, ok: 'WorkerJobList', handler: jobs.listJobs }),
  route('workerJobs.get', 'GET', `${REPO}/worker-jobs/{worker_job_index}`, 'reader', { ok: 'WorkerJobRead', handler: jobs.getJob }),
  route('workerJobs.claimNext', 'POST', '/v1/native/worker-jobs', 'runner', { action: 'claim', discover: true, request: jobs.ClaimNextRequest, ok: 'WorkerJobClaimNext', refuses: [404], handler: jobs.claimNext }),
  route('workerJobs.claim', 'POST', `${REPO}/worker-jobs/{worker_job_index}`, 'runner', { action: 'claim', admission: 'worker', request: jobs.ClaimExactRequest, ok: 'WorkerJobClaim', handler: jobs.claimExact }),
  route('workerJobs.heartbeat', 'POST', `${REPO}/worker-jobs/{worker_job_index}`, 'runner', { action: 'heartbeat', admission: 'worker', request: jobs.HeartbeatRequest, ok: 'WorkerJobHeartbeat', handler: jobs.heartbeat }),
  route('workerJobs.complete', 'POST', `${REPO}/worker-jobs/{worker_job_index}`, 'runner', { action: 'complete', admission: 'worker', request: jobs.CompleteRequest, ok: 'WorkerJobCompletion', handler: jobs.complete }),
  route('workerJobs.fail', 'POST', `${REPO}/worker-jobs/{worker_job_index}`, 'runner', { action: 'fail', admission: 'worker', request: jobs.FailRequest, ok: 'WorkerJobFailure', handler: jobs.failJob }),

  // Lines and snapshots
  route('lines.list', 'GET', `${REPO}/lines`, 'reader', { discover: true, paged: true, ok: 'LineList', handler: content.listLines }),
  route('lines.get', 'GET', `${REPO}/lines/{line_name}`, 'reader', { ok: 'Line', handler: content.getLine }),
  route('lines.put', 'PUT', `${REPO}/lines/{line_name}`, 'maintainer', { request: content.PutLineRequest, ok: 'Line', handler: content.putLine }),
  route('lines.close', 'POST', `${REPO}/lines/{line_name}`, 'maintainer', { action: 'close', request: content.CloseLineRequest, ok: 'LineClose', handler: content.closeLine }),
  route('snapshots.exists', 'POST', `${REPO}/snapshots`, 'reader', { action: 'exists', request: content.ExistsRequest, ok: 'SnapshotClassification', handler: content.snapshotsExist }),
  route('snapshots.export', 'GET', `${REPO}/snapshots/{snapshot_id}`, 'reader', { query: content.ExportQuery, ok: 'SnapshotExport', handler: content.exportSnapshot }),

  // Bulk remote sync
  route('sync.plan', 'POST', `${SYNC}/plan`, 'contributor', { raised: true, discover: true, request: content.PlanRequest, ok: 'SyncPlan', handler: content.plan }),
  route('sync.putObjectPack', 'PUT', `${SYNC}/object-packs/{pack_id}`, 'contributor', { body: raw(MEDIA_OBJECT_PACK), raised: true, ok: 'PackUpload', handler: content.putObjectPack }),
  route('sync.getObjectPack', 'GET', `${SYNC}/object-packs/{pack_id}`, 'reader', { ok: PACK_MEDIA(MEDIA_OBJECT_PACK), handler: content.getObjectPack }),
  route('sync.putTreePack', 'PUT', `${SYNC}/tree-packs/{pack_id}`, 'contributor', { body: raw(MEDIA_TREE_PACK), raised: true, ok: 'PackUpload', handler: content.putTreePack }),
  route('sync.getTreePack', 'GET', `${SYNC}/tree-packs/{pack_id}`, 'reader', { ok: PACK_MEDIA(MEDIA_TREE_PACK), handler: content.getTreePack }),
  route('sync.commit', 'POST', `${SYNC}/commit`, 'contributor', { raised: true, discover: true, request: content.CommitBody, ok: 'SyncCommit', handler: content.commit }),
  route('sync.importManifest', 'GET', `${SYNC}/import-manifests/{snapshot_id}`, 'reader', { ok: 'ImportManifest', handler: content.importManifest }),
  route('sync.pullManifest', 'POST', `${SYNC}/pull-manifests`, 'reader', { raised: true, jsonCaps: PULL_MANIFEST_JSON, discover: true, request: content.PullRequest, ok: 'PullManifest', handler: content.pullManifest }),

  // Tasks and read models
  route('tasks.list', 'GET', `${REPO}/tasks`, 'reader', { paged: true, query: tasks.ListQuery, ok: 'TaskList', handler: tasks.list }),
  route('tasks.create', 'POST', `${REPO}/tasks`, 'contributor', { request: tasks.CreateTask, ok: 'TaskResult', handler: tasks.create }),
  route('tasks.start', 'POST', `${REPO}/task-start`, 'contributor', { discover: true, request: lands.TaskStart, ok: 'TaskStartResult', handler: lands.taskStartHandler }),
  route('tasks.get', 'GET', `${REPO}/tasks/{task_ref}`, 'reader', { ok: 'TaskResult', handler: tasks.get }),
  route('tasks.close', 'POST', `${REPO}/tasks/{task_ref}`, 'contributor', { action: 'close', request: tasks.CloseTask, ok: 'TaskResult', handler: tasks.close }),
  route('read.taskAudit', 'GET', `${REPO}/read/tasks/{task_id}/audit`, 'reader', { query: tasks.AuditQuery, ok: 'TaskAudit', handler: tasks.audit }),
  route('read.queueSummary', 'GET', `${REPO}/read/queue-summary`, 'reader', { query: tasks.StatusQuery, ok: 'QueueSummary', handler: tasks.queueSummary }),
  route('read.taskQueue', 'GET', `${REPO}/read/task-queue`, 'reader', { paged: true, query: tasks.StatusQuery, ok: 'TaskQueue', handler: tasks.taskQueue }),
  route('read.reviewerInbox', 'GET', `${REPO}/read/reviewer-inbox`, 'reader', { paged: true, query: reviews.InboxQuery, ok: 'ReviewerInbox', handler: reviews.inbox }),

  // Changes, patchsets, reviews, policy, CI, Land
  route('changes.list', 'GET', `${REPO}/changes`, 'reader', { paged: true, query: changes.ListQuery, ok: 'ChangeList', refuses: [422], handler: changes.list }),
  route('changes.create', 'POST', `${REPO}/changes`, 'contributor', { request: changes.CreateChange, ok: 'ChangeResult', handler: changes.create }),
  route('changes.get', 'GET', `${REPO}/changes/{change_ref}`, 'reader', { ok: 'ChangeStackResult', handler: changes.get }),
  route('changes.close', 'POST', `${REPO}/changes/{change_ref}`, 'contributor', { action: 'close', request: changes.CloseChange, ok: 'ChangeResult', handler: changes.close }),
  route('changes.selectPatchset', 'POST', `${REPO}/changes/{change_ref}`, 'maintainer', { action: 'selectPatchset', request: changes.Select, ok: 'ChangeResult', handler: changes.selectPatchset }),
  route('changes.requestReview', 'POST', `${REPO}/changes/{change_ref}`, 'contributor', { action: 'requestReview', request: reviews.RequestReview, ok: 'ReviewRequestResult', handler: reviews.requestReview }),
  route('changes.submit', 'POST', `${REPO}/changes/{change_ref}`, 'maintainer', { action: 'submit', request: lands.Submit, ok: { 200: 'LandSubmit', 409: 'LandRefused' }, handler: lands.submit }),
  route('patchsets.list', 'GET', `${REPO}/changes/{change_ref}/patchsets`, 'reader', { paged: true, ok: 'PatchsetList', handler: changes.listPatchsets }),
  route('patchsets.create', 'POST', `${REPO}/changes/{change_ref}/patchsets`, 'contributor', { request: changes.CreatePatchset, ok: 'PatchsetCreate', handler: changes.createPatchset }),
  route('reviews.list', 'GET', `${REPO}/changes/{change_ref}/reviews`, 'reader', { paged: true, ok: 'ReviewList', handler: reviews.list }),
  route('reviews.create', 'POST', `${REPO}/changes/{change_ref}/reviews`, 'contributor', { request: reviews.CreateReview, ok: 'ReviewResult', handler: reviews.create }),
  route('patchsets.get', 'GET', `${REPO}/patchsets/{patchset_id}`, 'reader', { ok: 'PatchsetResult', handler: changes.getPatchset }),
  route('patchsets.runCi', 'POST', `${REPO}/patchsets/{patchset_id}`, 'contributor', { action: 'runCi', request: reviews.RunCi, ok: 'PatchsetCiRun', handler: reviews.runCi }),
  route('patchsets.evaluatePolicy', 'POST', `${REPO}/patchsets/{patchset_id}`, 'contributor', { action: 'evaluatePolicy', request: reviews.EvaluatePolicy, ok: 'PolicyResult', handler: reviews.evaluatePolicy }),
  route('attestations.get', 'GET', `${REPO}/patchsets/{patchset_id}/attestation`, 'reader', { ok: 'AttestationResult', handler: reviews.getAttestation }),
  route('attestations.put', 'PUT', `${REPO}/patchsets/{patchset_id}/attestation`, 'contributor', { request: reviews.Attest, ok: 'AttestationResult', handler: reviews.putAttestation }),
  route('policy.get', 'GET', `${REPO}/patchsets/{patchset_id}/policy`, 'reader', { ok: 'PolicyRead', handler: reviews.getPolicy }),
  route('read.ciStatus', 'GET', `${REPO}/read/patchsets/{patchset_id}/ci-status`, 'reader', { query: reviews.CiStatusQuery, ok: 'CiStatus', handler: reviews.ciStatus }),
  route('lands.get', 'GET', `${REPO}/lands/{submission_id}`, 'reader', { ok: 'LandRead', handler: lands.get }),
  route('tasks.land', 'POST', `${REPO}/task-land`, 'maintainer', { discover: true, request: lands.TaskLand, ok: { 200: 'TaskLandResult', 409: 'LandRefused' }, handler: lands.taskLandHandler }),
  route('historyPromotion.prepare', 'POST', `${REPO}/history-promotion`, 'maintainer', { action: 'prepare', request: promotion.Prepare, ok: 'PromotionResult', handler: promotion.prepare }),

  // Plans (sprints)
  route('plans.list', 'GET', `${REPO}/sprints`, 'reader', { paged: true, query: plans.ListQuery, ok: 'PlanList', handler: plans.list }),
  route('plans.create', 'POST', `${REPO}/sprints`, 'contributor', { request: plans.CreatePayload, ok: 'PlanCreate', handler: plans.create }),
  route('plans.get', 'GET', `${REPO}/sprints/{plan_id}`, 'reader', { ok: 'PlanRead', handler: plans.get }),
  route('plans.patch', 'PATCH', `${REPO}/sprints/{plan_id}`, 'contributor', { request: plans.PatchPlan, ok: 'PlanPatch', handler: plans.patch }),
  route('plans.revisions.list', 'GET', `${REPO}/sprints/{plan_id}/revisions`, 'reader', { paged: true, ok: 'RevisionList', handler: plans.listRevisions }),
  route('plans.revisions.create', 'POST', `${REPO}/sprints/{plan_id}/revisions`, 'contributor', { request: plans.RevisePayload, ok: 'PlanRevise', handler: plans.revise }),
  route('plans.revisions.get', 'GET', `${REPO}/sprints/{plan_id}/revisions/{plan_revision_id}`, 'reader', { ok: 'RevisionRead', handler: plans.getRevision }),
  route('plans.artifacts.get', 'GET', `${REPO}/sprints/{plan_id}/revisions/{plan_revision_id}/artifacts`, 'reader', { ok: 'RevisionArtifacts', handler: plans.getArtifacts }),
  // Always 409: revisions are immutable (no success answer).
  route('plans.artifacts.put', 'PUT', `${REPO}/sprints/{plan_id}/revisions/{plan_revision_id}/artifacts`, 'contributor', { body: NONE, handler: plans.putArtifacts }),
  route('plans.byContains', 'POST', `${REPO}/sprint-plan-ids/by-contains`, 'reader', { request: plans.ByContains, ok: 'PlanIds', handler: plans.byContains }),
  route('plans.resolveLinkage', 'POST', `${REPO}/sprint-task-linkage/resolve`, 'reader', { request: plans.ResolveLinkage, ok: 'PlanLinkage', handler: plans.resolveLinkage }),
  route('read.planCandidates', 'GET', `${REPO}/read/plans/candidate-inputs`, 'reader', { query: plans.CandidateQuery, ok: 'CandidateInputs', handler: plans.candidateInputs }),

  // Extensions (not in the spec): the interface described by itself.
  route('openapi.document', 'GET', docs.OPENAPI_PATH, 'public', { extension: true, ok: 'OpenApiDocument', handler: docs.openapiHandler(() => ROUTES) }),
  route('docs.page', 'GET', docs.DOCS_PATH, 'public', { extension: true, ok: { raw: ['text/html'] }, handler: docs.page }),
  route('docs.asset', 'GET', `${docs.DOCS_ASSETS_PATH}/{asset}`, 'public', { extension: true, ok: { raw: ['text/css', 'text/javascript', 'image/png'] }, handler: docs.asset }),

  // Extensions: diffs and land readiness for reviewers
  route('read.patchsetDiff', 'GET', `${REPO}/read/patchsets/{patchset_id}/diff`, 'reader', { extension: true, conditional: true, query: diffs.DiffQuery, ok: { json: 'PatchsetDiff', raw: ['text/x-diff'] }, handler: diffs.patchsetDiffHandler }),
  route('read.changeDiff', 'GET', `${REPO}/read/changes/{change_ref}/diff`, 'reader', { extension: true, conditional: true, query: diffs.DiffQuery, ok: { json: 'PatchsetDiff', raw: ['text/x-diff'] }, handler: diffs.changeDiffHandler }),
  route('read.snapshotFile', 'GET', `${REPO}/read/snapshots/{snapshot_id}/files/{file_path}`, 'reader', { extension: true, query: diffs.FileQuery, ok: { json: 'FileLines', raw: diffs.FILE_MEDIA_TYPES }, refuses: [413], handler: diffs.snapshotFileHandler }),
  route('read.changeAttention', 'GET', `${REPO}/read/changes/{change_ref}/attention`, 'reader', { extension: true, ok: 'ChangeAttention', handler: people.attentionHandler }),
  route('read.changeReviewers', 'GET', `${REPO}/read/changes/{change_ref}/reviewers`, 'reader', { extension: true, ok: 'ChangeReviewers', handler: people.reviewersHandler }),
  route('read.dashboard', 'GET', `${REPO}/read/dashboard`, 'reader', { extension: true, query: people.DashboardQuery, ok: 'Dashboard', handler: people.dashboardHandler }),
  route('read.changeReadiness', 'GET', `${REPO}/read/changes/{change_ref}/readiness`, 'reader', { extension: true, ok: 'LandReadiness', handler: diffs.readinessHandler }),
  route('read.changeLands', 'GET', `${REPO}/read/changes/{change_ref}/lands`, 'reader', { extension: true, paged: true, ok: 'LandList', handler: lands.changeLands }),
  // A change's topic, work-in-progress mark and cc list (docs/api.md "Topic, work in progress, cc")
  route('changes.setFlags', 'POST', `${REPO}/changes/{change_ref}`, 'contributor', { action: 'setFlags', extension: true, request: changes.SetFlags, ok: 'ChangeResult', handler: changes.setFlags }),

  // Extensions: git interoperability (docs/git.md)
  route('git.import', 'POST', `${REPO}/git/imports`, 'maintainer', { extension: true, raised: true, request: git.ImportBody, ok: 'GitImportResult', handler: git.importCommits }),
  route('git.tags', 'POST', `${REPO}/git/tags`, 'maintainer', { extension: true, request: git.TagsBody, ok: 'GitTagsResult', handler: git.recordTags }),
  route('git.export', 'POST', `${REPO}/git/exports`, 'maintainer', { extension: true, request: git.ExportBody, ok: 'GitExportResult', handler: git.exportLine }),
  route('git.snapshotCommit', 'GET', `${REPO}/git/snapshots/{snapshot_id}`, 'reader', { extension: true, ok: 'GitCommitResult', handler: git.snapshotCommit }),
  route('git.commit', 'GET', `${REPO}/git/commits/{commit_id}`, 'reader', { extension: true, ok: 'GitCommitResult', handler: git.commitById }),
  // The commit-msg hook that gives a commit a Change-Id (curl -o .git/hooks/commit-msg …), where Gerrit serves its own
  route('git.commitMsgHook', 'GET', COMMIT_MSG_HOOK_PATH, 'public', { extension: true, ok: { raw: ['text/x-shellscript'] }, handler: git.commitMsgHook }),
  // git's smart HTTP at `{repo}/git/{line}.git` (clone, fetch, ls-remote; push for review to refs/for/*): lib/http/git-http-backend.ts, lib/authority/git-push.ts
  route('git.infoRefs', 'GET', `${GIT_LINE}/info/refs`, 'reader', { extension: true, query: git.GitServiceQuery, ok: { raw: [MEDIA_UPLOAD_PACK_ADVERTISEMENT, MEDIA_RECEIVE_PACK_ADVERTISEMENT] }, handler: git.gitInfoRefs }),
  route('git.uploadPack', 'POST', `${GIT_LINE}/git-upload-pack`, 'reader', { extension: true, body: raw(MEDIA_UPLOAD_PACK_REQUEST), ok: { raw: [MEDIA_UPLOAD_PACK_RESULT] }, refuses: [408], handler: git.gitUploadPack }),
  route('git.receivePack', 'POST', `${GIT_LINE}/git-receive-pack`, 'contributor', { extension: true, body: raw(MEDIA_RECEIVE_PACK_REQUEST), raised: true, ok: { raw: [MEDIA_RECEIVE_PACK_RESULT] }, refuses: [408], handler: git.gitReceivePack }),
  // The same at `{repo}/git.git`, the whole repository: every line a branch, tags, HEAD on main (docs/git.md "Clone and fetch")
  route('git.repositoryInfoRefs', 'GET', `${GIT_REPO}/info/refs`, 'reader', { extension: true, query: git.GitServiceQuery, ok: { raw: [MEDIA_UPLOAD_PACK_ADVERTISEMENT, MEDIA_RECEIVE_PACK_ADVERTISEMENT] }, handler: git.gitRepositoryInfoRefs }),
  route('git.repositoryUploadPack', 'POST', `${GIT_REPO}/git-upload-pack`, 'reader', { extension: true, body: raw(MEDIA_UPLOAD_PACK_REQUEST), ok: { raw: [MEDIA_UPLOAD_PACK_RESULT] }, refuses: [408], handler: git.gitRepositoryUploadPack }),
  route('git.repositoryReceivePack', 'POST', `${GIT_REPO}/git-receive-pack`, 'contributor', { extension: true, body: raw(MEDIA_RECEIVE_PACK_REQUEST), raised: true, ok: { raw: [MEDIA_RECEIVE_PACK_RESULT] }, refuses: [408], handler: git.gitRepositoryReceivePack }),
  // Extensions: comment threads on a change's diff lines (docs/api.md "Comment threads")
  route('comments.create', 'POST', `${REPO}/changes/{change_ref}/comments`, 'contributor', { extension: true, request: comments.CreateComment, ok: 'CommentResult', handler: comments.create }),
  route('comments.edit', 'PATCH', `${REPO}/changes/{change_ref}/comments/{comment_id}`, 'contributor', { extension: true, request: comments.EditDraft, ok: 'CommentResult', handler: comments.editDraft }),
  route('comments.delete', 'DELETE', `${REPO}/changes/{change_ref}/comments/{comment_id}`, 'contributor', { extension: true, body: NONE, query: comments.DiscardQuery, ok: 'CommentDeleted', handler: comments.discardDraft }),
  route('comments.threads', 'GET', `${REPO}/changes/{change_ref}/threads`, 'reader', { extension: true, paged: true, query: comments.ThreadsQuery, ok: 'CommentThreadList', handler: comments.threads }),
  route('comments.resolve', 'POST', `${REPO}/changes/{change_ref}/threads/{thread_id}`, 'contributor', { action: 'resolve', extension: true, request: comments.ResolveThread, ok: 'CommentResult', handler: comments.resolve }),
  route('comments.reopen', 'POST', `${REPO}/changes/{change_ref}/threads/{thread_id}`, 'contributor', { action: 'reopen', extension: true, request: comments.ResolveThread, ok: 'CommentResult', handler: comments.reopen }),
  route('comments.applySuggestions', 'POST', `${REPO}/changes/{change_ref}/patchsets`, 'contributor', { action: 'applySuggestions', extension: true, request: comments.ApplySuggestions, ok: 'SuggestionsApplied', handler: comments.applySuggestions }),
  route('comments.publish', 'POST', `${REPO}/changes/{change_ref}/reviews`, 'contributor', { action: 'publish', extension: true, request: comments.PublishDrafts, ok: 'CommentPublishResult', handler: comments.publish }),
  // Extensions: a server-side rebase of a patchset onto the target line's head (docs/api.md "Rebase")
  route('changes.rebase', 'POST', `${REPO}/changes/{change_ref}`, 'contributor', { action: 'rebase', extension: true, request: changes.Rebase, ok: { 200: 'PatchsetRebase', 409: 'RebaseRefused' }, handler: changes.rebase }),
  // Extensions: viewed marks per reviewer, patchset and file (docs/api.md "Viewed marks")
  route('viewed.get', 'GET', `${REPO}/changes/{change_ref}/viewed`, 'reader', { extension: true, query: viewed.ViewedQuery, ok: 'ViewedMarks', refuses: [403], handler: viewed.get }),
  route('viewed.put', 'PUT', `${REPO}/changes/{change_ref}/viewed`, 'contributor', { extension: true, request: viewed.MarkViewed, ok: 'ViewedMarks', refuses: [403, 409], handler: viewed.put }),

  // Extensions: git mirrors (docs/git.md "Mirror")
  route('gitMirrors.create', 'POST', `${REPO}/git-mirrors`, 'maintainer', { extension: true, request: gitMirrors.Register, ok: { 201: 'GitMirrorResult' }, handler: gitMirrors.create }),
  route('gitMirrors.list', 'GET', `${REPO}/git-mirrors`, 'reader', { extension: true, ok: 'GitMirrorList', handler: gitMirrors.list }),
  route('gitMirrors.get', 'GET', `${REPO}/git-mirrors/{mirror_id}`, 'reader', { extension: true, ok: 'GitMirrorResult', handler: gitMirrors.get }),
  route('gitMirrors.delete', 'DELETE', `${REPO}/git-mirrors/{mirror_id}`, 'maintainer', { extension: true, body: NONE, ok: 'GitMirrorRemoved', handler: gitMirrors.remove }),
  route('gitMirrors.resume', 'POST', `${REPO}/git-mirrors/{mirror_id}`, 'maintainer', { action: 'resume', extension: true, body: NONE, ok: 'GitMirrorResult', handler: gitMirrors.resume }),
  // Extensions: webhooks (docs/api.md "Webhooks")
  route('webhooks.create', 'POST', `${REPO}/webhooks`, 'maintainer', { extension: true, request: webhooks.Register, ok: { 200: 'WebhookResult', 201: 'WebhookResult' }, handler: webhooks.create }),
  route('webhooks.list', 'GET', `${REPO}/webhooks`, 'maintainer', { extension: true, paged: true, ok: 'WebhookList', handler: webhooks.list }),
  route('webhooks.get', 'GET', `${REPO}/webhooks/{webhook_id}`, 'maintainer', { extension: true, ok: 'WebhookResult', handler: webhooks.get }),
  route('webhooks.delete', 'DELETE', `${REPO}/webhooks/{webhook_id}`, 'maintainer', { extension: true, body: NONE, ok: 'WebhookDeleted', handler: webhooks.remove }),
  route('webhooks.deliveries.list', 'GET', `${REPO}/webhooks/{webhook_id}/deliveries`, 'maintainer', { extension: true, paged: true, query: webhooks.DeliveriesQuery, ok: 'WebhookDeliveryList', handler: webhooks.listDeliveries }),
  route('webhooks.deliveries.get', 'GET', `${REPO}/webhooks/{webhook_id}/deliveries/{delivery_id}`, 'maintainer', { extension: true, ok: 'WebhookDeliveryResult', handler: webhooks.getDelivery }),
  route('webhooks.deliveries.redeliver', 'POST', `${REPO}/webhooks/{webhook_id}/deliveries/{delivery_id}`, 'maintainer', { action: 'redeliver', extension: true, body: NONE, ok: 'WebhookDeliveryResult', handler: webhooks.redeliver }),

  // Extensions: repository rules (docs/api.md "Repository rules")
  route('rules.get', 'GET', `${REPO}/rules`, 'reader', { extension: true, ok: 'RulesResult', handler: rules.get }),
  route('rules.put', 'PUT', `${REPO}/rules`, 'admin', { extension: true, request: rules.PutRules, ok: 'RulesResult', handler: rules.put }),
  // Extensions: the land queue (docs/land-queue.md)
  route('landQueue.enqueue', 'POST', `${REPO}/land-queue`, 'maintainer', { extension: true, request: landQueue.Enqueue, ok: { 201: 'LandQueueEntryResult' }, handler: landQueue.enqueue }),
  route('landQueue.list', 'GET', `${REPO}/land-queue`, 'reader', { extension: true, query: landQueue.ListQuery, ok: 'LandQueueList', handler: landQueue.list }),
  route('landQueue.get', 'GET', `${REPO}/land-queue/{entry_id}`, 'reader', { extension: true, ok: 'LandQueueEntryResult', handler: landQueue.get }),
  route('landQueue.remove', 'DELETE', `${REPO}/land-queue/{entry_id}`, 'maintainer', { extension: true, body: NONE, ok: 'LandQueueEntryResult', handler: landQueue.remove }),

  // Extensions: event feeds (a JSON page, or server-sent events with Accept: text/event-stream)
  route('events.repository', 'GET', `${REPO}/events`, 'reader', { extension: true, query: events.EventsQuery, ok: { json: 'EventPage', raw: ['text/event-stream'] }, refuses: [410, 429], handler: events.repositoryEvents }),
  route('events.global', 'GET', '/v1/native/events', 'server_admin', { extension: true, query: events.EventsQuery, ok: { json: 'GlobalEventPage', raw: ['text/event-stream'] }, refuses: [410, 429], handler: events.globalEvents }),

  // Extensions: the archive (docs/api.md "Archive (extensions)"): a follower's promotion to writer
  route('archive.promote', 'POST', '/archive/promote', 'promotion', { extension: true, body: NONE, ok: 'ArchivePromotion', refuses: [401, 409], handler: archive.promote }),
  // …a writer's handover and a switchover's promotion (docs/operations.md "Planned switchover")
  route('archive.handover', 'POST', '/archive/handover', 'promotion', { extension: true, request: archive.Handover, ok: 'ArchiveHandover', refuses: [401, 409], handler: archive.handover }),
  route('archive.takeover', 'POST', '/archive/takeover', 'promotion', { extension: true, request: archive.Takeover, ok: 'ArchivePromotion', refuses: [401, 409], handler: archive.takeover }),

  // Extensions: several nodes (docs/operations.md "Several nodes"): where each repository lives
  route('cluster.status', 'GET', '/v1/native/cluster', 'session', { extension: true, query: cluster.StatusQuery, ok: 'ClusterStatus', handler: cluster.status }),
  route('cluster.move', 'POST', '/v1/native/cluster/moves', 'server_admin', { extension: true, request: cluster.Move, ok: 'ClusterMove', refuses: [401, 403, 409], handler: cluster.move }),
  route('cluster.failover', 'POST', '/v1/native/cluster/failovers', 'server_admin', { extension: true, request: cluster.Failover, ok: 'ClusterMove', refuses: [401, 403, 409], handler: cluster.failover }),
  route('cluster.handoff', 'POST', '/v1/native/cluster/handoffs', 'server_admin', { extension: true, request: cluster.Handoff, ok: 'ClusterHandoff', refuses: [401, 403, 409], handler: cluster.handoff }),

  // Extensions: accounts, tokens, groups, repository grants and the audit feed (docs/api.md "Accounts, tokens and roles")
  route('session.get', 'GET', '/v1/native/session', 'session', { extension: true, query: { repository_index: { schema: { type: 'integer', minimum: 0, maximum: 4294967295 }, description: 'also say the caller\'s role in this repository and the operations it allows' } }, ok: 'Session', handler: access.sessionHandler(() => ROUTES) }),
  route('accounts.list', 'GET', '/v1/native/accounts', 'server_admin', { extension: true, ok: 'AccountList', refuses: [401, 403], handler: access.listAccounts }),
  route('accounts.add', 'POST', '/v1/native/accounts', 'server_admin', { extension: true, request: access.AddAccount, ok: { 201: 'AccountAdded' }, refuses: [401, 403, 409], handler: access.addAccount }),
  route('accounts.change', 'PATCH', '/v1/native/accounts/{account_name}', 'server_admin', { extension: true, request: access.ChangeAccount, ok: 'AccountResult', refuses: [401, 403], handler: access.changeAccount }),
  route('tokens.list', 'GET', '/v1/native/tokens', 'session', { extension: true, query: { account: { schema: { type: 'string' }, description: 'another account\'s tokens (server admins only)' } }, ok: 'TokenList', refuses: [401, 403], handler: access.listTokens }),
  route('tokens.create', 'POST', '/v1/native/tokens', 'session', { extension: true, request: access.CreateToken, ok: { 201: 'TokenCreated' }, refuses: [401, 403, 409], handler: access.createToken }),
  route('tokens.revoke', 'DELETE', '/v1/native/tokens/{token_id}', 'session', { extension: true, body: NONE, ok: 'TokenResult', refuses: [401], handler: access.revokeToken }),
  route('groups.list', 'GET', '/v1/native/groups', 'session', { extension: true, ok: 'GroupList', refuses: [401], handler: access.listGroups }),
  route('groups.set', 'PUT', '/v1/native/groups/{group_name}', 'server_admin', { extension: true, request: access.SetGroup, ok: 'GroupResult', refuses: [401, 403], handler: access.setGroup }),
  route('access.get', 'GET', `${REPO}/access`, 'reader', { extension: true, ok: 'RepositoryAccess', refuses: [401, 403], handler: access.getAccess }),
  route('access.change', 'PATCH', `${REPO}/access`, 'admin', { extension: true, request: access.ChangeAccess, ok: 'RepositoryAccess', refuses: [401, 403], handler: access.changeAccess }),
  route('audit.list', 'GET', '/v1/native/audit', 'server_admin', { extension: true, query: { after: { schema: { type: 'integer', minimum: 0 }, description: 'records after this seq' }, limit: { schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } } }, ok: 'AuditPage', refuses: [401, 403], handler: access.audit }),
];

/** The rows of the spec's operations (the 78), without the extension rows. */
export const SPEC_ROUTES: readonly RouteSpec[] = ROUTES.filter((r) => !r.extension);

/** Operations without a handler (they answer 501); none today, and the route test keeps it so. */
export function unimplementedOperations(): string[] {
  return ROUTES.filter((r) => !r.handler).map((r) => r.operation);
}
