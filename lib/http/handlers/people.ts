// People on changes (docs/api.md "People"): whose move it is on a change, each reviewer's
// current vote, and a person's dashboard. Extensions; the rules are
// lib/domain/workflow/attention.ts and lib/authority/workflow/people.ts.
import { Invalid } from '../../domain/errors.js';
import { changeAttention, dashboard, reviewerTable } from '../../authority/workflow/people.js';
import { requireAuthority, type Handler, type QueryParam } from '../route-types.js';
import { identityOf, queryValue } from './workflow-common.js';
import { arr, bool, enumOf, nullable as orNull, obj, ref, str, uint, type Schemas } from '../json-schema.js';

export const ATTENTION_REASONS = ['review_requested', 'new_patchset', 'blocking_vote', 'ci_failed', 'ejected', 'conflict', 'reviewer_comment', 'owner_replied'] as const;

export const attentionHandler: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  const change = a.workflow.change(ctx.params.change_ref);
  return { json: { change_id: change.change_id, change_ref: change.change_ref, attention: changeAttention(a.workflow, change) } };
};

export const reviewersHandler: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  const change = a.workflow.change(ctx.params.change_ref);
  return { json: { change_id: change.change_id, change_ref: change.change_ref, selected_patchset_id: change.selected_patchset_id, reviewers: reviewerTable(a.workflow, change) } };
};

export const DashboardQuery: Record<string, QueryParam> = {
  user: { schema: str, description: "whose dashboard (default: the caller's identity; required without one)" },
};

export const dashboardHandler: Handler = async (ctx) => {
  const a = requireAuthority(ctx);
  const user = queryValue(ctx, 'user') ?? identityOf(ctx);
  if (user === null || user === undefined) throw new Invalid('user is required (?user=NAME) when the request names no caller');
  return { json: dashboard(a.workflow, user, a.index) };
};

const attention = obj({ name: str, reason: enumOf(ATTENTION_REASONS) });
const row = obj({
  repository_index: uint,
  change_id: str,
  change_ref: str,
  title: str,
  status: str,
  owner: orNull(str),
  updated_at_s: uint,
  landed_at_s: orNull(uint),
  selected_patchset_id: orNull(str),
  ci: { ...enumOf(['none', 'pending', 'pass', 'fail', 'error']), description: "the selected patchset's CI" },
  votes: obj({ approvals: uint, blocking: uint }),
  unresolved_threads: uint,
  attention: arr(attention),
});

export const SCHEMAS: Schemas = {
  ChangeAttention: obj({ change_id: str, change_ref: str, attention: { ...arr(attention), description: 'the owner first (when it is their move), then requested reviewers in the order first asked' } }),
  ChangeReviewers: obj({
    change_id: str,
    change_ref: str,
    selected_patchset_id: orNull(str),
    reviewers: arr(obj({
      name: str,
      kind: enumOf(['person', 'group']),
      vote: { ...enumOf(['approve', 'block', null]), description: "the reviewer's current vote (null: none or dismissed; groups never vote)" },
      patchset_id: { ...orNull(str), description: 'the patchset the vote was cast on' },
      live: { ...bool, description: 'the vote counts on the selected patchset' },
    })),
  }),
  DashboardRow: row,
  Dashboard: obj({
    user: str,
    your_turn: { ...arr(ref('DashboardTurnRow')), description: "open changes where it is the user's move" },
    your_changes: { ...arr(ref('DashboardRow')), description: 'open changes the user owns' },
    waiting_for_review: { ...arr(ref('DashboardRow')), description: 'open changes the user was asked to review (whoever\'s move it is)' },
    recently_landed: { ...arr(ref('DashboardRow')), description: 'landed changes the user owns or reviewed' },
  }),
  DashboardTurnRow: { ...row, properties: { ...(row.properties as Record<string, unknown>), reason: { ...enumOf(ATTENTION_REASONS), description: "why it is the user's move" } }, required: [...(row.required as string[]), 'reason'] },
};
