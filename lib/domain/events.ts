// The event catalogue (docs/api.md "Events", storage-layout.md §18): what happened, derived from
// a record as it was before a transaction and as the transaction stages it. Pure functions, so
// every write site derives its events by one rule and the catalogue is tested in one place.
// Events carry ids, never copies of records: a consumer reads the current projection.
import { Invalid } from './errors.js';
import { ERROR_KIND_NAMES, STATE_FAILED, STATE_NAMES, STATE_QUEUED, STATE_RUNNING, STATE_SUCCEEDED, type JobRecord } from './jobs.js';
import type { ChangeRecord, PatchsetRecord, TaskRecord } from './workflow/rules.js';
import type { CommentRecord, Resolution } from './workflow/comment-rules.js';
import type { AttestationRecord, PolicyDecisionRecord, ReviewRecord } from './workflow/review-rules.js';
import type { QueueEntryRecord } from './workflow/land-queue.js';
import { changedFlags } from './workflow/change-flags.js';

export type EventData = Record<string, string | number | boolean | null>;
export interface DomainEvent {
  type: string;
  data: EventData;
}

/** Every event type a repository's feed can carry, with the ids its `data` holds. */
export const EVENT_TYPES: Record<string, string[]> = {
  'line.created': ['line', 'head_snapshot_id'],
  'line.moved': ['line', 'head_snapshot_id', 'previous_head_snapshot_id'],
  'line.archived': ['line'],
  'task.created': ['task_id', 'plan_id'],
  'task.closed': ['task_id', 'status'],
  'change.created': ['change_id', 'change_ref', 'task_id'],
  'change.status_changed': ['change_id', 'change_ref', 'task_id', 'status', 'previous_status'],
  'change.closed': ['change_id', 'change_ref', 'task_id', 'status'],
  'change.landed': ['change_id', 'change_ref', 'task_id'],
  'change.updated': ['change_id', 'change_ref', 'task_id', 'fields', 'topic', 'wip'],
  'patchset.created': ['patchset_id', 'change_id', 'patchset_number'],
  'patchset.selected': ['patchset_id', 'change_id'],
  'patchset.base_stale': ['patchset_id', 'change_id', 'land_id'],
  'review.recorded': ['review_id', 'change_id', 'patchset_id', 'reviewer', 'action'],
  'review.requested': ['review_id', 'change_id', 'patchset_id', 'reviewer_group'],
  'review.updated': ['review_id', 'change_id', 'patchset_id', 'reviewer', 'action'],
  'comment.created': ['comment_id', 'change_id', 'patchset_id', 'thread_id', 'author'],
  'thread.resolved': ['thread_id', 'change_id', 'comment_id', 'author'],
  'thread.reopened': ['thread_id', 'change_id', 'comment_id', 'author'],
  'attestation.recorded': ['attestation_id', 'patchset_id'],
  'attestation.revoked': ['attestation_id', 'patchset_id'],
  'policy.decided': ['decision_id', 'patchset_id', 'decision', 'trigger'],
  'job.queued': ['worker_job_index', 'kind', 'patchset_id', 'snapshot_id'],
  'job.claimed': ['worker_job_index', 'kind', 'attempt'],
  'job.completed': ['worker_job_index', 'kind', 'patchset_id'],
  'job.failed': ['worker_job_index', 'kind', 'patchset_id', 'error_kind'],
  'job.requeued': ['worker_job_index', 'kind', 'error_kind'],
  'job.lease_expired': ['worker_job_index', 'kind', 'requeued'],
  'land.landed': ['land_id', 'change_id', 'change_ref', 'patchset_id', 'target_line', 'landed_snapshot_id'],
  'land.rejected': ['land_id', 'change_id', 'change_ref', 'patchset_id', 'target_line', 'failure_kind'],
  'land.failed': ['land_id', 'change_id', 'change_ref', 'patchset_id', 'target_line', 'failure_kind'],
  'land.bypassed': ['land_id', 'change_id', 'change_ref', 'patchset_id', 'target_line', 'by', 'kinds'],
  'rules.changed': ['by', 'fields'],
  'plan.created': ['plan_id', 'plan_revision_id'],
  'plan.revised': ['plan_id', 'plan_revision_id'],
  'plan.status_changed': ['plan_id', 'status', 'previous_status'],
  'promotion.prepared': ['promotion_id', 'target_line'],
  'queue.entry_added': ['entry_id', 'change_id', 'change_ref', 'target_line'],
  'queue.entry_testing': ['entry_id', 'change_id', 'target_line', 'snapshot_id', 'worker_job_index', 'reused'],
  'queue.entry_retried': ['entry_id', 'change_id', 'target_line', 'worker_job_index'],
  'queue.entry_requeued': ['entry_id', 'change_id', 'target_line'],
  'queue.entry_stalled': ['entry_id', 'change_id', 'target_line', 'worker_job_index'],
  'queue.entry_landed': ['entry_id', 'change_id', 'target_line', 'land_id', 'landed_snapshot_id', 'passed_on_retry'],
  'queue.entry_ejected': ['entry_id', 'change_id', 'target_line', 'reason'],
  'queue.entry_removed': ['entry_id', 'change_id', 'target_line'],
  'webhook.disabled': ['webhook_id', 'delivery_id', 'failed_deliveries'],
  'git_mirror.diverged': ['mirror_id', 'line', 'remote_commit_id', 'last_pushed_commit_id'],
};

/** Events of the registry (the data directory's feed, storage-layout.md §18). */
export const REGISTRY_EVENT_TYPES: Record<string, string[]> = {
  'repository.registered': ['repository_index', 'name', 'namespace'],
  'repository.retiring': ['repository_index'],
  'repository.retirement_aborted': ['repository_index'],
  'repository.purged': ['repository_index'],
  'repository.restored': ['repository_index', 'restored_from_index'],
  'archive.lagging': ['repository_index', 'archive', 'lag_seconds', 'uncovered_commits'],
  'archive.fenced': ['repository_index', 'archive', 'generation', 'newer'],
  'archive.verify_failed': ['repository_index', 'archive', 'manifest', 'problem'],
};

/** An event as both feeds answer it (docs/api.md "Events"): the committed event, its id and repository. */
export interface FeedEvent {
  /** Repository feed: the seq; global feed: `<at_us>-<stream>-<seq>`. */
  id: string;
  repository_index: number;
  seq: number;
  at_us: number;
  type: string;
  data: EventData;
}

const ev = (type: string, data: EventData): DomainEvent => ({ type, data });

export function lineEvents(name: string, before: { status: string; head_snapshot_id: string | null } | undefined, after: { status: string; head_snapshot_id: string | null }): DomainEvent[] {
  if (!before) return [ev('line.created', { line: name, head_snapshot_id: after.head_snapshot_id })];
  const out: DomainEvent[] = [];
  if (before.head_snapshot_id !== after.head_snapshot_id) out.push(ev('line.moved', { line: name, head_snapshot_id: after.head_snapshot_id, previous_head_snapshot_id: before.head_snapshot_id }));
  if (before.status !== after.status && after.status === 'archived') out.push(ev('line.archived', { line: name }));
  return out;
}

export function taskEvents(before: TaskRecord | undefined, after: TaskRecord): DomainEvent[] {
  if (!before) return [ev('task.created', { task_id: after.task_id, plan_id: after.plan_id })];
  if (before.status !== after.status && after.status !== 'active') return [ev('task.closed', { task_id: after.task_id, status: after.status })];
  return [];
}

const CHANGE_CLOSED = new Set(['archived', 'superseded', 'abandoned']);

export function changeEvents(before: ChangeRecord | undefined, after: ChangeRecord): DomainEvent[] {
  const ids = { change_id: after.change_id, change_ref: after.change_ref, task_id: after.task_id };
  const out: DomainEvent[] = [];
  if (!before) out.push(ev('change.created', ids));
  else if (before.status !== after.status) {
    if (after.status === 'landed') out.push(ev('change.landed', ids));
    else if (CHANGE_CLOSED.has(after.status)) out.push(ev('change.closed', { ...ids, status: after.status }));
    else out.push(ev('change.status_changed', { ...ids, status: after.status, previous_status: before.status }));
  }
  // Topic, work in progress, cc (./workflow/change-flags.ts): a created change carries them in its record.
  const flags = before ? changedFlags(before, after) : [];
  if (flags.length > 0) out.push(ev('change.updated', { ...ids, fields: flags.join(','), topic: after.topic ?? null, wip: after.wip === true }));
  if (after.selected_patchset_id && after.selected_patchset_id !== (before?.selected_patchset_id ?? null)) {
    out.push(ev('patchset.selected', { patchset_id: after.selected_patchset_id, change_id: after.change_id }));
  }
  return out;
}

export function patchsetEvents(before: PatchsetRecord | undefined, after: PatchsetRecord): DomainEvent[] {
  const ids = { patchset_id: after.patchset_id, change_id: after.change_id };
  if (!before) return [ev('patchset.created', { ...ids, patchset_number: after.patchset_number })];
  if (!before.base_stale && after.base_stale) return [ev('patchset.base_stale', { ...ids, land_id: after.base_stale_land_id ?? null })];
  return [];
}

export function reviewEvents(before: ReviewRecord | undefined, after: ReviewRecord): DomainEvent[] {
  const ids = { review_id: after.review_id, change_id: after.change_id, patchset_id: after.patchset_id };
  if (before) return [ev('review.updated', { ...ids, reviewer: after.reviewer, action: after.action })];
  if (after.action === 'request') return [ev('review.requested', { ...ids, reviewer_group: after.reviewer_group })];
  return [ev('review.recorded', { ...ids, reviewer: after.reviewer, action: after.action })];
}

/**
 * A comment published (written published, or a draft published): `comment.created`, and
 * `thread.resolved` / `thread.reopened` when publishing it moved its thread to `moved` (null: the
 * thread's resolution is what it was).
 */
export function commentEvents(c: CommentRecord, threadId: string, moved: Resolution | null): DomainEvent[] {
  const out = [ev('comment.created', { comment_id: c.comment_id, change_id: c.change_id, patchset_id: c.patchset_id, thread_id: threadId, author: c.author })];
  if (moved !== null) out.push(ev(moved === 'resolved' ? 'thread.resolved' : 'thread.reopened', { thread_id: threadId, change_id: c.change_id, comment_id: c.comment_id, author: c.author }));
  return out;
}

export function attestationEvents(before: AttestationRecord | undefined, after: AttestationRecord): DomainEvent[] {
  const ids = { attestation_id: after.attestation_id, patchset_id: after.patchset_id };
  if (!before) return [ev(after.revoked ? 'attestation.revoked' : 'attestation.recorded', ids)];
  if (!before.revoked && after.revoked) return [ev('attestation.revoked', ids)];
  return [];
}

export function decisionEvents(d: PolicyDecisionRecord): DomainEvent[] {
  return [ev('policy.decided', { decision_id: d.decision_id, patchset_id: d.patchset_id, decision: d.decision, trigger: d.trigger ?? 'evaluate' })];
}

export function jobEvents(before: JobRecord | undefined, after: JobRecord): DomainEvent[] {
  const ids = { worker_job_index: after.worker_job_index, kind: after.kind };
  const errorKind = ERROR_KIND_NAMES[after.error_kind] ?? null;
  if (!before) {
    if (after.state === STATE_QUEUED) return [ev('job.queued', { ...ids, patchset_id: after.detail.patchset_id, snapshot_id: after.detail.snapshot_id })];
    return [];
  }
  if (before.state === after.state && before.attempt_count === after.attempt_count) return [];
  if (after.state === STATE_RUNNING) return [ev('job.claimed', { ...ids, attempt: after.attempt_count })];
  if (before.state === STATE_RUNNING && errorKind === 'lease_expired') {
    const expired = ev('job.lease_expired', { ...ids, requeued: after.state === STATE_QUEUED });
    // An expiry that ends the job for good is also its failure: a consumer of job.failed hears of it.
    if (after.state === STATE_FAILED) return [expired, ev('job.failed', { ...ids, patchset_id: after.detail.patchset_id, error_kind: errorKind })];
    return [expired];
  }
  if (after.state === STATE_QUEUED) return [ev('job.requeued', { ...ids, error_kind: errorKind })];
  if (after.state === STATE_SUCCEEDED) return [ev('job.completed', { ...ids, patchset_id: after.detail.patchset_id })];
  if (after.state === STATE_FAILED) return [ev('job.failed', { ...ids, patchset_id: after.detail.patchset_id, error_kind: errorKind })];
  return [ev(`job.${STATE_NAMES[after.state]}`, ids)];
}

/** The moves of a land-queue entry (docs/land-queue.md), from its record before and after. */
export function queueEntryEvents(before: QueueEntryRecord | undefined, after: QueueEntryRecord): DomainEvent[] {
  const ids = { entry_id: after.entry_id, change_id: after.change_id, target_line: after.target_line };
  if (!before) return [ev('queue.entry_added', { entry_id: after.entry_id, change_id: after.change_id, change_ref: after.change_ref, target_line: after.target_line })];
  if (before.state !== after.state) {
    if (after.state === 'landed') return [ev('queue.entry_landed', { ...ids, land_id: after.land_id, landed_snapshot_id: after.landed_snapshot_id, passed_on_retry: after.passed_on_retry })];
    if (after.state === 'ejected') return [ev('queue.entry_ejected', { ...ids, reason: after.ejection?.reason ?? null })];
    if (after.state === 'removed') return [ev('queue.entry_removed', ids)];
  }
  const b = before.speculation;
  const a = after.speculation;
  if (a && (!b || b.snapshot_id !== a.snapshot_id || b.base_snapshot_id !== a.base_snapshot_id)) {
    // A batch's other entries name no job of their own (their `tested_by` entry runs it).
    return [ev('queue.entry_testing', { ...ids, snapshot_id: a.snapshot_id, worker_job_index: a.reused_worker_job_index ?? a.worker_job_indexes.at(-1) ?? null, reused: a.reused_worker_job_index !== null })];
  }
  if (a && b && a.snapshot_id === b.snapshot_id && a.worker_job_indexes.length > b.worker_job_indexes.length) return [ev('queue.entry_retried', { ...ids, worker_job_index: a.worker_job_indexes.at(-1)! })];
  if (a && b && a.stalled_at_s !== null && b.stalled_at_s === null) return [ev('queue.entry_stalled', { ...ids, worker_job_index: a.worker_job_indexes.at(-1) ?? null })];
  if (b && !a && after.state === 'queued') return [ev('queue.entry_requeued', ids)];
  return [];
}

export function landEvents(land: { land_id: string; change_id: string; change_ref: string; patchset_id: string | null; target_line: string; status: string; failure_kind: string | null; landed_snapshot_id: string | null; bypassed_by?: string; bypassed?: { kind: string }[] }): DomainEvent[] {
  const ids = { land_id: land.land_id, change_id: land.change_id, change_ref: land.change_ref, patchset_id: land.patchset_id, target_line: land.target_line };
  if (land.status === 'landed') {
    const landed = ev('land.landed', { ...ids, landed_snapshot_id: land.landed_snapshot_id });
    if (!land.bypassed?.length) return [landed];
    return [landed, ev('land.bypassed', { ...ids, by: land.bypassed_by ?? null, kinds: land.bypassed.map((b) => b.kind).join(',') })];
  }
  return [ev(land.status === 'rejected' ? 'land.rejected' : 'land.failed', { ...ids, failure_kind: land.failure_kind })];
}

export function planEvents(before: { status: string } | undefined, after: { plan_id: string; status: string; head_revision_id: string; revision_count: number } | undefined, revision: { plan_revision_id: string; plan_id: string } | undefined): DomainEvent[] {
  const out: DomainEvent[] = [];
  if (after && !before) out.push(ev('plan.created', { plan_id: after.plan_id, plan_revision_id: after.head_revision_id }));
  else if (revision) out.push(ev('plan.revised', { plan_id: revision.plan_id, plan_revision_id: revision.plan_revision_id }));
  if (after && before && before.status !== after.status) out.push(ev('plan.status_changed', { plan_id: after.plan_id, status: after.status, previous_status: before.status }));
  return out;
}

// ---------------------------------------------------------------- feeds (docs/api.md "Events")

const familyOf = (type: string) => type.slice(0, type.indexOf('.'));

/** The families a `?types=` entry may name as `family.*` (job.*, change.*, repository.*, ...). */
const FAMILIES = new Set([...Object.keys(EVENT_TYPES), ...Object.keys(REGISTRY_EVENT_TYPES)].map(familyOf));

/**
 * The two feeds (docs/api.md "Events"): a repository's feed carries the repository events of
 * the catalogue (EVENT_TYPES); the global feed carries those of every repository and the
 * registry's (REGISTRY_EVENT_TYPES).
 */
export type EventFeedKind = 'repository' | 'global';

/** The types and families that can appear on each feed, derived from the catalogue. */
const ON_FEED: Record<EventFeedKind, { types: ReadonlySet<string>; families: ReadonlySet<string> }> = {
  repository: { types: new Set(Object.keys(EVENT_TYPES)), families: new Set(Object.keys(EVENT_TYPES).map(familyOf)) },
  global: { types: new Set([...Object.keys(EVENT_TYPES), ...Object.keys(REGISTRY_EVENT_TYPES)]), families: FAMILIES },
};

/** A parsed `?types=` list: exact types and whole families. */
export interface EventTypeFilter {
  exact: ReadonlySet<string>;
  families: ReadonlySet<string>;
}

/**
 * Parse `?types=a,b,job.*` of `feed`: comma-separated, each an event type of the catalogue
 * (EVENT_TYPES or REGISTRY_EVENT_TYPES) or `family.*` of one. Throws Invalid naming the first
 * entry that is neither, or that names only types the feed never carries (registry events on a
 * repository feed): a filter entry that can never match is refused rather than silently
 * matching nothing.
 */
export function parseEventTypes(text: string, feed: EventFeedKind): EventTypeFilter {
  const on = ON_FEED[feed];
  const elsewhere = (shown: string) => new Invalid(`types: "${shown}" never appears on a repository feed: registry events (repository.*) are on the global feed, /v1/native/events`);
  const exact = new Set<string>();
  const families = new Set<string>();
  const entries = text.split(',');
  if (entries.length > 256) throw new Invalid('types lists at most 256 entries');
  for (const entry of entries) {
    const shown = entry.length > 64 ? `${entry.slice(0, 64)}...` : entry;
    if (entry.endsWith('.*')) {
      const family = entry.slice(0, -2);
      if (!FAMILIES.has(family)) throw new Invalid(`types: "${shown}" names no event family (one of ${[...on.families].map((f) => `${f}.*`).join(', ')})`);
      if (!on.families.has(family)) throw elsewhere(shown);
      families.add(family);
    } else if (Object.hasOwn(EVENT_TYPES, entry) || Object.hasOwn(REGISTRY_EVENT_TYPES, entry)) {
      if (!on.types.has(entry)) throw elsewhere(shown);
      exact.add(entry);
    } else {
      throw new Invalid(entry === '' ? 'types: an empty entry (the list is comma-separated types or family.* entries)' : `types: "${shown}" is not an event type (see the event catalogue) or a family.* of one`);
    }
  }
  return { exact, families };
}

export function matchesEventTypes(filter: EventTypeFilter | null, type: string): boolean {
  if (!filter) return true;
  if (filter.exact.has(type)) return true;
  const dot = type.indexOf('.');
  return dot > 0 && filter.families.has(type.slice(0, dot));
}

/** The stream part of a global event id: a repository index, or the registry. */
export type EventStreamName = number | 'registry';

/** A position in the global order: the event `<at_us>-<stream>-<seq>`, or a point between events. */
export interface GlobalEventId {
  at_us: number;
  stream: EventStreamName;
  seq: number;
}

export function formatGlobalEventId(id: GlobalEventId): string {
  return `${id.at_us}-${id.stream}-${id.seq}`;
}

const U64_DEC = '(0|[1-9][0-9]{0,15})';
const GLOBAL_ID = new RegExp(`^${U64_DEC}-(${U64_DEC}|registry)-${U64_DEC}$`);

/** Parse a global event id (`since` or Last-Event-ID of the global feed); Invalid when malformed. */
export function parseGlobalEventId(text: string, name: string): GlobalEventId {
  const m = GLOBAL_ID.exec(text);
  // Groups: 1 at_us, 2 stream (3: its digits), 4 seq.
  const id = m ? { at_us: Number(m[1]), stream: m[2] === 'registry' ? 'registry' as const : Number(m[2]), seq: Number(m[4]) } : null;
  if (!id || !Number.isSafeInteger(id.at_us) || !Number.isSafeInteger(id.seq) || (id.stream !== 'registry' && id.stream > 0xffffffff)) {
    throw new Invalid(`${name} must be a global event id <at_us>-<repository index or registry>-<seq>`);
  }
  return id;
}

/** Parse a repository feed position (`since`, Last-Event-ID): a sequence number; Invalid when malformed. */
export function parseEventSeq(text: string, name: string): number {
  if (!new RegExp(`^${U64_DEC}$`).test(text) || !Number.isSafeInteger(Number(text))) throw new Invalid(`${name} must be an event sequence number (a decimal integer ≥ 0)`);
  return Number(text);
}

/**
 * The global order: (at_us, seq), then the stream (the registry first, then repositories by
 * index); the event clock makes times unique per batch, so the stream only orders equal
 * positions of different streams, which the clock does not produce.
 */
export function compareGlobal(a: GlobalEventId, b: GlobalEventId): number {
  if (a.at_us !== b.at_us) return a.at_us < b.at_us ? -1 : 1;
  if (a.seq !== b.seq) return a.seq < b.seq ? -1 : 1;
  const ra = a.stream === 'registry' ? -1 : a.stream;
  const rb = b.stream === 'registry' ? -1 : b.stream;
  return ra === rb ? 0 : ra < rb ? -1 : 1;
}

/** The registry's lifecycle of one repository as its events tell it (reconciliation at open). */
export type RegistryEventState = 'active' | 'retiring' | 'purged';

export function registryStateAfter(type: string): RegistryEventState | null {
  switch (type) {
    case 'repository.registered':
    case 'repository.restored':
    case 'repository.retirement_aborted':
      return 'active';
    case 'repository.retiring':
      return 'retiring';
    case 'repository.purged':
      return 'purged';
    default:
      return null;
  }
}

const LIFECYCLE_STATE: Record<number, RegistryEventState> = { 1: 'active', 2: 'retiring', 3: 'purged' };

/**
 * The events of a registry record's change: `before` undefined is a new record (`restoredFrom`
 * set when a restore made it). `recovered` marks events appended at open for a change whose
 * event a crash lost.
 */
export function registryEvents(
  before: { lifecycle_kind: number } | undefined,
  after: { repository_index: number; repository_name: string; namespace: string; lifecycle_kind: number },
  restoredFrom: number | null = null,
): DomainEvent[] {
  const index = after.repository_index;
  if (!before) {
    return restoredFrom === null
      ? [ev('repository.registered', { repository_index: index, name: after.repository_name, namespace: after.namespace })]
      : [ev('repository.restored', { repository_index: index, restored_from_index: restoredFrom })];
  }
  const from = LIFECYCLE_STATE[before.lifecycle_kind];
  const to = LIFECYCLE_STATE[after.lifecycle_kind];
  if (from === to) return [];
  if (to === 'retiring') return [ev('repository.retiring', { repository_index: index })];
  if (to === 'purged') return [ev('repository.purged', { repository_index: index })];
  return [ev('repository.retirement_aborted', { repository_index: index })];
}

/**
 * What the registry's event log lacks for `record`, given the state its events left it in
 * (`known`: null when the log has no event of it): the events that bring the log to the
 * registry's state. A record with no event at all is announced as registered.
 */
export function missingRegistryEvents(
  known: RegistryEventState | null,
  record: { repository_index: number; repository_name: string; namespace: string; lifecycle_kind: number },
): DomainEvent[] {
  const target = LIFECYCLE_STATE[record.lifecycle_kind];
  const out: DomainEvent[] = [];
  let state = known;
  if (state === null) {
    out.push(...registryEvents(undefined, { ...record, lifecycle_kind: 1 }));
    state = 'active';
  }
  if (state === target || state === 'purged') return out;
  const code = { active: 1, retiring: 2, purged: 3 } as const;
  out.push(...registryEvents({ lifecycle_kind: code[state] }, record));
  return out;
}
