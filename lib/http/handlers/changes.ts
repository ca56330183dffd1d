// Changes and patchsets (spec: "Change", "Patchset", the change and patchset rows of "Changes,
// patchsets, reviews, policy, CI, Land"; docs/api.md "Tasks, changes, patchsets").
import { array, boolean, integer, nullable, object as strictObject, optional, string, type as looseObject } from 'superstruct';
import { AUTHOR_MODES, CHANGE_STATUSES, parseTaskRef, requireChangeStatus } from '../../domain/workflow/rules.js';
import { Invalid, Unprocessable } from '../../domain/errors.js';
import { canonicalSearch, parseSearch } from '../../domain/workflow/search-query.js';
import { requireAuthority, type Handler, type QueryParam } from '../route-types.js';
import { validate } from '../validate.js';
import { REBASE_CODES, REBASE_LISTED_CONFLICTS, rebasePatchset } from '../../authority/workflow/rebase.js';
import { CONFLICT_KINDS } from '../../domain/workflow/merge.js';
import { actAs, identityOf, pageFields, pageRequest, queryValue, rejectRouteOwned, wellFormed } from './workflow-common.js';
import { arr, bool, constant, enumOf, extend, hex64, nullable as orNull, obj, PAGE_FIELDS, ref, str, uint, type SchemaObject, type Schemas } from '../json-schema.js';

export const CreateChange = looseObject({
  task_id: string(),
  title: string(),
  base_line: string(),
  fork_snapshot_id: optional(nullable(string())),
  change_id: optional(string()),
  owner: optional(nullable(string())),
});
export const CloseChange = looseObject({ status: string() });
export const Select = looseObject({ patchset_id: string() });
/** `:rebase`: which patchset (default the selected one); who asks is the caller's identity, never the body. */
export const Rebase = strictObject({ patchset_id: optional(string()) });
/** `:setFlags` (docs/api.md "Topic, work in progress, cc"): at least one field. */
export const SetFlags = looseObject({ topic: optional(nullable(string())), wip: optional(boolean()), cc: optional(array(string())) });
export const CreatePatchset = looseObject({
  base_snapshot_id: string(),
  revision_snapshot_id: string(),
  summary: string(),
  author_mode: string(),
  author: optional(nullable(string())),
  patchset_id: optional(string()),
  patchset_number: optional(integer()),
});

export const list: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  const status = queryValue(ctx, 'status');
  const taskRef = queryValue(ctx, 'task_id');
  const q = queryValue(ctx, 'q');
  if (q !== undefined) {
    if (status !== undefined || taskRef !== undefined) throw new Invalid('q is a search of its own: put status:S in it, and give no status or task_id beside it');
    const search = parseSearch(q, identityOf(ctx));
    const page = await a.workflow.search.search(search, pageRequest(ctx, 'changes', 'int', { q: canonicalSearch(search) }));
    const notes = await a.workflow.search.unknownPeople(search);
    return { json: { changes: page.rows.map((c) => a.workflow.changeProjection(c, a.index)), search_rows: page.rows.map((c) => a.workflow.searchRow(c)), notes, ...pageFields(page) } };
  }
  const filter = { status: status === undefined ? undefined : requireChangeStatus(status), task_id: taskRef };
  // The cursor is bound to the task itself, whichever spelling of its ref names it.
  const page = a.workflow.pageChanges(filter, pageRequest(ctx, 'changes', 'int', { ...filter, task_id: taskRef === undefined ? undefined : parseTaskRef(taskRef) ?? taskRef }));
  return { json: { changes: page.rows.map((c) => a.workflow.changeProjection(c, a.index)), ...pageFields(page) } };
};

export const create: Handler = async (ctx) => {
  rejectRouteOwned(ctx.body);
  actAs(ctx, 'owner');
  const req = wellFormed(validate(ctx.body, CreateChange));
  const a = requireAuthority(ctx);
  const change = await a.workflow.createChange(req);
  return { json: { change: a.workflow.changeProjection(change, a.index) } };
};

export const get: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  const change = a.workflow.change(ctx.params.change_ref);
  // The stack (docs/api.md "Stacks"): derived here, on the one change asked for (lists omit it).
  return { json: { change: { ...a.workflow.changeProjection(change, a.index), stack: a.workflow.stacks.stackOf(change) } } };
};

export const close: Handler = async (ctx) => {
  rejectRouteOwned(ctx.body);
  const req = validate(ctx.body, CloseChange);
  const a = requireAuthority(ctx);
  const change = await a.workflow.closeChange(ctx.params.change_ref, req.status);
  return { json: { change: a.workflow.changeProjection(change, a.index) } };
};

export const selectPatchset: Handler = async (ctx) => {
  rejectRouteOwned(ctx.body);
  const req = validate(ctx.body, Select);
  const a = requireAuthority(ctx);
  const change = await a.workflow.selectPatchset(ctx.params.change_ref, req.patchset_id);
  return { json: { change: a.workflow.changeProjection(change, a.index) } };
};

export const rebase: Handler = async (ctx) => {
  rejectRouteOwned(ctx.body);
  const req = wellFormed(validate(ctx.body, Rebase));
  const a = requireAuthority(ctx);
  const { patchset, change } = await rebasePatchset(a.store, a.workflow, a.lands, ctx.params.change_ref, { patchset_id: req.patchset_id, by: identityOf(ctx) });
  return { json: { patchset: a.workflow.patchsetProjection(patchset, a.index), change: a.workflow.changeProjection(change, a.index) } };
};

export const setFlags: Handler = async (ctx) => {
  rejectRouteOwned(ctx.body);
  const req = wellFormed(validate(ctx.body, SetFlags));
  if (req.topic === undefined && req.wip === undefined && req.cc === undefined) throw new Unprocessable('topic, wip or cc is required');
  for (const n of req.cc ?? []) wellFormed({ cc: n });
  const a = requireAuthority(ctx);
  const change = await a.workflow.setFlags(ctx.params.change_ref, { topic: req.topic, wip: req.wip, cc: req.cc });
  return { json: { change: a.workflow.changeProjection(change, a.index) } };
};

export const listPatchsets: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  const req = pageRequest(ctx, 'patchsets', 'int', { change_id: a.workflow.change(ctx.params.change_ref).change_id });
  const { change, page } = a.workflow.pagePatchsets(ctx.params.change_ref, req);
  return { json: { change_id: change.change_id, change_ref: change.change_ref, patchsets: page.rows.map((p) => a.workflow.patchsetProjection(p, a.index)), ...pageFields(page) } };
};

export const createPatchset: Handler = async (ctx) => {
  rejectRouteOwned(ctx.body);
  const req = wellFormed(validate(ctx.body, CreatePatchset));
  const a = requireAuthority(ctx);
  const { patchset, replayed } = await a.workflow.createPatchset(ctx.params.change_ref, req);
  return { json: { patchset: a.workflow.patchsetProjection(patchset, a.index), replayed } };
};

export const getPatchset: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  return { json: { patchset: a.workflow.patchsetProjection(a.workflow.patchset(ctx.params.patchset_id), a.index) } };
};

const entryKind = enumOf(['file', 'executable', 'symlink', null]);

const STACK_DESCRIPTION = 'the relation chain (docs/api.md "Stacks"): bottom first, this change marked; empty when the change stands alone';

export const SCHEMAS: Schemas = {
  Change: obj({
    change_id: str,
    change_ref: str,
    sequence: uint,
    task_id: str,
    repository_index: uint,
    title: str,
    base_line: str,
    fork_snapshot_id: orNull(hex64),
    status: enumOf(CHANGE_STATUSES),
    patchset_count: uint,
    current_patchset_id: orNull(str),
    selected_patchset_id: orNull(str),
    land_target_line: str,
    created_at_s: uint,
    updated_at_s: uint,
    closed_at_s: orNull(uint),
    landed_at_s: orNull(uint),
    promoted_from: {
      ...orNull(obj({ local_change_id: str, local_change_ref: str, local_task_id: str, promotion_id: str })),
      description: 'set on a change published by a history promotion',
    },
    landed_via: {
      ...orNull(obj({ promotion_id: str, land_id: str, change_id: str })),
      description: "set on an earlier entry's change of a history promotion when the promotion's aggregate change landed",
    },
    owner: { ...orNull(str), description: 'the person who created the change (the caller identity, or the create body\'s owner); null when none was named' },
    reviewers: { ...arr(ref('ReviewerRef')), description: 'the people and groups asked to review, in the order first asked' },
    attention: { ...arr(str), description: 'whose move it is (names; docs/api.md "People")' },
    topic: { ...orNull(str), description: 'the change\'s topic (-o topic=, :setFlags); null: none' },
    wip: { ...bool, description: 'work in progress (-o wip): no reviewer is asked to act until it is ready' },
    cc: { ...arr(str), description: 'people copied on the change (-o cc=, :setFlags), in the order first named' },
  }),
  ReviewerRef: obj({ name: str, kind: enumOf(['person', 'group']) }),
  ChangeResult: obj({ change: ref('Change') }),
  StackEntry: obj({
    change_id: str,
    change_ref: str,
    title: str,
    status: enumOf(CHANGE_STATUSES),
    selected_patchset_id: orNull(str),
    below: { ...orNull(str), description: 'the change this one is based on; null: the bottom of the stack' },
    based_on_patchset_id: { ...orNull(str), description: 'the patchset of the change below that this change\'s selected patchset is based on' },
    outdated: { ...bool, description: 'the change below has a newer patchset than the one this change is based on (push the series again)' },
    this: { ...bool, description: 'the change that was asked for' },
  }),
  ChangeStackResult: obj({ change: ref('ChangeWithStack') }),
  ChangeList: obj({
    changes: arr(ref('Change')),
    search_rows: {
      ...arr(obj({
        change_id: str,
        owner: orNull(str),
        ci: { ...enumOf(['none', 'pending', 'pass', 'fail', 'error']), description: "the selected patchset's CI" },
        votes: { ...obj({ approvals: uint, blocking: uint }), description: 'live votes on the selected patchset' },
        unresolved_threads: uint,
      })),
      description: 'with q only: per row of changes (same order), what a result list shows',
    },
    notes: { ...arr(str), description: 'with q only: each person the query names that no change names in that role ("no one named X owns a change in this repository")' },
    ...PAGE_FIELDS,
  }, { optional: ['search_rows', 'notes'] }),
  ChangedFile: obj({
    path: str,
    change: enumOf(['added', 'modified', 'deleted']),
    old_kind: entryKind,
    new_kind: entryKind,
    mode_changed: bool,
    content_changed: bool,
    old_bytes: orNull(uint),
    new_bytes: orNull(uint),
    lines_added: orNull(uint),
    lines_removed: orNull(uint),
    binary: bool,
  }),
  DiffStats: obj({
    files_changed: uint,
    files_added: uint,
    files_modified: uint,
    files_deleted: uint,
    mode_only: uint,
    symlinks_changed: uint,
    bytes_before: uint,
    bytes_after: uint,
    lines_added: uint,
    lines_removed: uint,
    lines_complete: bool,
  }),
  Patchset: obj({
    patchset_id: str,
    change_id: str,
    patchset_number: uint,
    repository_index: uint,
    base_snapshot_id: hex64,
    revision_snapshot_id: hex64,
    summary: str,
    author_mode: enumOf(AUTHOR_MODES),
    author: orNull(str),
    pushed_by: { ...orNull(str), description: 'a patchset received by a push for review: the identity that pushed it (the trusted ingress\'s header; docs/git.md "Who pushed"); null when it was not pushed, or the push named no identity. The pushed commit\'s author says nothing of it' },
    publish_state: constant('published'),
    withdrawn: bool,
    invalidated: bool,
    changed_file_stats: ref('DiffStats'),
    changed_files: { ...arr(ref('ChangedFile')), description: 'at most 1,000 paths; the stats count all' },
    changed_files_truncated: bool,
    evaluation_state: enumOf(['not_evaluated', 'pass', 'fail']),
    ci: ref('PatchsetCi'),
    review: ref('PatchsetReview'),
    policy: ref('PatchsetPolicy'),
    created_at_s: uint,
    base_stale: { ...constant(true), description: "set when a land moved the target line past this patchset's base" },
    base_stale_land_id: { ...str, description: 'the land that did' },
    applied_suggestions: { ...arr(obj({ comment_id: str, author: str })), description: 'a patchset made by :applySuggestions: the comments whose suggestions it applied and their authors' },
    rebased_from: { ...obj({ patchset_id: str, onto_snapshot_id: hex64, by: orNull(str) }), description: "a patchset made by :rebase: the patchset it rebased, the target line's head it was rebased onto (its base), and who asked (null: no identity)" },
  }, { optional: ['base_stale', 'base_stale_land_id', 'applied_suggestions', 'rebased_from'] }),
  PatchsetResult: obj({ patchset: ref('Patchset') }),
  RebaseRefused: obj({
    error: str,
    code: { ...enumOf(REBASE_CODES), description: 'REBASE_CONFLICT: the revision does not merge onto the head (`conflicts`), or nothing of it would remain; ALREADY_UP_TO_DATE: the patchset is based on the head already; REBASE_RACED: the line or the change moved meanwhile (rebase again). Absent on a lifecycle refusal' },
    patchset_id: { ...str, description: 'the patchset that was to be rebased' },
    head_snapshot_id: { ...hex64, description: "the target line's head it was to be rebased onto" },
    conflicts: { ...arr(obj({ path: str, kind: enumOf(CONFLICT_KINDS) })), description: `REBASE_CONFLICT: the conflicting paths, sorted, at most ${REBASE_LISTED_CONFLICTS} listed` },
    conflicts_count: { ...uint, description: 'REBASE_CONFLICT: how many paths conflict' },
  }, { optional: ['code', 'patchset_id', 'head_snapshot_id', 'conflicts', 'conflicts_count'], description: 'a rebase refused: nothing was written' }),
  PatchsetRebase: obj({ patchset: { ...ref('Patchset'), description: 'the new patchset: base the target head, revision the rebased one; selected' }, change: ref('Change') }),
  PatchsetCreate: obj({ patchset: ref('Patchset'), replayed: bool }),
  PatchsetList: obj({ change_id: str, change_ref: str, patchsets: arr(ref('Patchset')), ...PAGE_FIELDS }),
};
SCHEMAS.ChangeWithStack = extend(SCHEMAS.Change as SchemaObject, { stack: { ...arr(ref('StackEntry')), description: STACK_DESCRIPTION } });

export const ListQuery: Record<string, QueryParam> = {
  status: { schema: enumOf(CHANGE_STATUSES), description: 'only changes in this status' },
  task_id: { schema: str, description: 'only changes of this task (task-7 or 7)' },
  q: { schema: str, description: 'a search (not with status or task_id): terms all of which a change matches — status:S, is:open, is:unresolved, owner:NAME, reviewer:NAME, file:PATH, line:LINE, and title words (docs/api.md "Searching changes")' },
};
