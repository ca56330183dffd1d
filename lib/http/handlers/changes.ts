// Changes and patchsets (spec: "Change", "Patchset", the change and patchset rows of "Changes,
// patchsets, reviews, policy, CI, Land"; README "Tasks, changes, patchsets").
import { integer, nullable, optional, string, type as looseObject } from 'superstruct';
import { requireChangeStatus } from '../../domain/workflow/rules.js';
import { requireAuthority, type Handler } from '../route-types.js';
import { validate } from '../validate.js';
import { pageFields, pageRequest, queryValue, rejectRouteOwned, wellFormed } from './workflow-common.js';

const CreateChange = looseObject({
  task_id: string(),
  title: string(),
  base_line: string(),
  fork_snapshot_id: optional(nullable(string())),
  change_id: optional(string()),
});
const CloseChange = looseObject({ status: string() });
const Select = looseObject({ patchset_id: string() });
const CreatePatchset = looseObject({
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
  const page = a.workflow.pageChanges({ status: status === undefined ? undefined : requireChangeStatus(status), task_id: queryValue(ctx, 'task_id') }, pageRequest(ctx, 'changes', 'int'));
  return { json: { changes: page.rows.map((c) => a.workflow.changeProjection(c, a.index)), ...pageFields(page) } };
};

export const create: Handler = async (ctx) => {
  rejectRouteOwned(ctx.body);
  const req = wellFormed(validate(ctx.body, CreateChange));
  const a = requireAuthority(ctx);
  const change = await a.workflow.createChange(req);
  return { json: { change: a.workflow.changeProjection(change, a.index) } };
};

export const get: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  return { json: { change: a.workflow.changeProjection(a.workflow.change(ctx.params.change_ref), a.index) } };
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

export const listPatchsets: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  const { change, page } = a.workflow.pagePatchsets(ctx.params.change_ref, pageRequest(ctx, 'patchsets', 'int'));
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
