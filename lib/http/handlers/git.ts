// Git interoperability (extension routes; docs/git.md, docs/api.md "Git"): an import commit that
// records each snapshot's git commit in the same transaction, and the read of that record.
import { array, nullable, object, optional, string, unknown as anyValue } from 'superstruct';
import { gitCommitProjection, patchsetRefName } from '../../domain/git.js';
import { arr, enumOf, extend, hex64, int, nullable as orNull, obj, ref, str, uint, type SchemaObject, type Schemas } from '../json-schema.js';
import { requireAuthority, type Handler, type QueryParam } from '../route-types.js';
import { parsePushCommands, receiveForReview, serveGit, serviceOf, type GitServing, type ReviewOutcome } from '../git-http-backend.js';
import { gitClientOfAddress } from '../git-places.js';
import { COMMIT_MSG_HOOK, installHookLine } from '../commit-msg-hook.js';
import type { RouteContext } from '../route-types.js';
import { pushLimit, receivePush } from '../../authority/git-push.js';
import type { GitShadow } from '../../authority/git-shadow.js';
import type { ChangeRecord, PatchsetRecord } from '../../domain/workflow/rules.js';
import { validate } from '../validate.js';
import { COMMIT_CONTRACT, commitRequest, SCHEMAS as CONTENT_SCHEMAS } from './content.js';

/** `commit` is a bulk-sync commit body (checked as POST …/commit checks it); unknown fields → 422. */
export const ImportBody = object({
  commit: anyValue(),
  git_commits: array(object({
    snapshot_id: string(),
    commit_id: string(),
    raw: string(),
    gitlinks: optional(nullable(array(object({ path: string(), commit_id: string() })))),
  })),
});

export const importCommits: Handler = async (ctx) => {
  const body = validate(ctx.body, ImportBody);
  const result = await requireAuthority(ctx).content.importGit(commitRequest(body.commit), body.git_commits);
  return { json: { contract: COMMIT_CONTRACT, ...result, raw_binary_upload: true } };
};

/** POST git/tags: `{tags: [{name, commit_id, raw?}]}`; unknown fields → 422. */
export const TagsBody = object({
  tags: array(object({ name: string(), commit_id: string(), raw: optional(nullable(string())) })),
});

export const recordTags: Handler = async (ctx) => {
  const body = validate(ctx.body, TagsBody);
  return { json: await requireAuthority(ctx).content.recordGitTags(body.tags) };
};

/** POST git/exports: `{line}`; unknown fields → 422. */
export const ExportBody = object({ line: string() });

export const exportLine: Handler = async (ctx) => {
  const body = validate(ctx.body, ExportBody);
  const authority = requireAuthority(ctx);
  const result = await ctx.service.gitExporter(authority).syncLine(body.line);
  return { json: { ...result, shadow_ref: `refs/heads/${result.line}` } };
};

/** GET info/refs: the smart protocol's first request (no `service`: the dumb protocol, refused with 400). */
export const GitServiceQuery: Record<string, QueryParam> = {
  service: { schema: enumOf(['git-upload-pack', 'git-receive-pack']), description: 'the smart HTTP service; git-receive-pack: the advertisement before a push (push for review to refs/for/<line>)' },
};

/**
 * A git request's claim on the places git serving has: its client is the caller's identity when
 * the trusted ingress names one, else its peer address (an IPv6 one's /64); its repository, the authority's index.
 */
function servingOf(ctx: RouteContext): GitServing {
  const identity = ctx.koa.state.identity;
  const client = typeof identity === 'string' ? `identity:${identity}` : gitClientOfAddress(ctx.koa.req.socket.remoteAddress ?? '');
  return { places: ctx.gitPlaces, client, repository: ctx.params.repository_index };
}

// Clone, fetch, ls-remote over git's smart HTTP (lib/http/git-http-backend.ts): the authority
// names the bare repository serving the line (lib/authority/git-shadow.ts), or 404.
export const gitInfoRefs: Handler = async (ctx) => {
  const service = serviceOf(ctx.koa.query.service);
  const shadow = await requireAuthority(ctx).gitShadow(ctx.params.line_name);
  return serveGit(ctx.koa, { shadow, request: 'advertise', service, limit: ctx.limit, log: ctx.service.log, serving: servingOf(ctx) });
};

export const gitUploadPack: Handler = async (ctx) => {
  const shadow = await requireAuthority(ctx).gitShadow(ctx.params.line_name);
  return serveGit(ctx.koa, { shadow, request: 'rpc', service: 'git-upload-pack', limit: ctx.limit, log: ctx.service.log, serving: servingOf(ctx) });
};

// The repository's URL, `{repo}/git.git` (docs/git.md "Clone and fetch"): every line a branch, HEAD on main.
export const gitRepositoryInfoRefs: Handler = async (ctx) => {
  const service = serviceOf(ctx.koa.query.service);
  const shadow = await requireAuthority(ctx).gitRepositoryShadow();
  return serveGit(ctx.koa, { shadow, request: 'advertise', service, limit: ctx.limit, log: ctx.service.log, serving: servingOf(ctx) });
};

export const gitRepositoryUploadPack: Handler = async (ctx) => {
  const shadow = await requireAuthority(ctx).gitRepositoryShadow();
  return serveGit(ctx.koa, { shadow, request: 'rpc', service: 'git-upload-pack', limit: ctx.limit, log: ctx.service.log, serving: servingOf(ctx) });
};

/** A push for review to the repository's URL: as to a line's (`refs/for/<line>` names the line). */
export const gitRepositoryReceivePack: Handler = async (ctx) => receiveAt(ctx, await requireAuthority(ctx).gitRepositoryShadow());

/**
 * A push: `refs/for/<line>` becomes a patchset (docs/git.md "Push for review"); every other ref
 * is refused, ref by ref, in git's own report (the client prints each reason).
 */
export const gitReceivePack: Handler = async (ctx) => receiveAt(ctx, await requireAuthority(ctx).gitShadow(ctx.params.line_name));

async function receiveAt(ctx: RouteContext, shadow: GitShadow): ReturnType<Handler> {
  const authority = requireAuthority(ctx);
  // The caller's identity from the trusted ingress header (lib/http/identity.ts checked it), when the server takes one.
  const identity = typeof ctx.koa.state.identity === 'string' ? ctx.koa.state.identity : null;
  // Links start with the front door's address when the server was told it (--public-url), else the request's own.
  const base = ctx.publicUrl ?? `${ctx.koa.protocol}://${ctx.koa.host}`;
  // The URL the client pushed to (its patchsets are fetched from it too).
  const gitUrl = `${base}${ctx.koa.path.replace(/\/git-receive-pack$/, '')}`;
  return receiveForReview(ctx.koa, Math.min(ctx.limit, pushLimit()), servingOf(ctx), async (body, signal) => {
    const receipt = await receivePush(authority, { shadowDir: shadow.repoDir, servedRef: shadow.ref, quarantineRoot: ctx.service.layout.gitQuarantineDir, body, parse: parsePushCommands, identity, log: ctx.service.log, signal });
    const outcomes: ReviewOutcome[] = receipt.outcomes.map((o) => {
      if (!o.ok) return o;
      // A series (docs/git.md "Stacks"): one block per commit, bottom first, the tip last.
      const each = [...(o.below ?? []), { result: o.result, change_key: o.change_key }];
      const blocks = each.flatMap(({ result: { change, patchset, created } }) => {
        const url = `${base}/ui/repos/${authority.index}/changes/${encodeURIComponent(change.change_ref)}`;
        return [created ? 'New change:' : `Updated change (${patchset.patchset_id}):`, `  ${url} ${change.title.slice(0, 120)}${created ? ' [NEW]' : ''}`, ...selection(change, patchset, created), ...requested(change), ...flagLines(change), `  fetch: ${fetchCommand(gitUrl, change, patchset)}`];
      });
      const stack = each.length > 1 ? [`A stack of ${each.length} changes, each based on the one above it in this list: see it with cairn stack ${o.result.change.change_id}`] : [];
      const keyless = each.filter((x) => x.change_key === null).length;
      const hint = o.change_key === null && each.length === 1 ? noChangeId(base, o.result.change) : keyless > 0 ? seriesWithoutChangeId(base, keyless) : [];
      return {
        ref: o.ref,
        ok: true,
        lines: ['', ...blocks, ...stack, '', ...o.notes, ...hint],
      };
    });
    return { unpack: receipt.unpack, outcomes, capabilities: receipt.capabilities };
  });
}

/** Gerrit's "Download" command: fetch a patchset's ref (docs/git.md "Fetch a patchset") and check it out. */
export function fetchCommand(gitUrl: string, change: ChangeRecord, patchset: PatchsetRecord): string {
  return `git fetch ${gitUrl} ${patchsetRefName(change.sequence, patchset.patchset_number)} && git checkout FETCH_HEAD`;
}

/** Which patchset of a change a push left selected (what is reviewed and landed), for the pusher. */
function selection(change: ChangeRecord, patchset: PatchsetRecord, created: boolean): string[] {
  if (created) return [];
  if (change.selected_patchset_id === patchset.patchset_id) return [`  selected: ${patchset.patchset_id} (what is reviewed and landed)`];
  return [`  kept selected: ${change.selected_patchset_id ?? 'none'} (noselect); to review this push: cairn change select ${change.change_id} ${patchset.patchset_id}`];
}

/** Who a push asked for review (`-o r=`), as the change's reviewer list now says. */
function requested(change: ChangeRecord): string[] {
  const people = (change.reviewers ?? []).filter((r) => r.kind === 'person').map((r) => r.name);
  return people.length === 0 ? [] : [`  reviewers: ${people.join(', ').slice(0, 300)}`];
}

/** The change's topic, work-in-progress mark and cc list (`-o topic=`, `-o wip`, `-o cc=`), when set. */
function flagLines(change: ChangeRecord): string[] {
  const out: string[] = [];
  if (change.topic) out.push(`  topic: ${change.topic.slice(0, 120)}`);
  if (change.wip) out.push('  work in progress: no reviewer is asked until it is ready (push with -o ready)');
  if (change.cc && change.cc.length > 0) out.push(`  cc: ${change.cc.join(', ').slice(0, 300)}`);
  return out;
}

/** A commit without a Change-Id: an amend would open another change. How to get one (Gerrit's hint). */
function noChangeId(base: string, change: ChangeRecord): string[] {
  return [
    'This commit has no Change-Id: a push of an amended commit would open another change.',
    'Install the commit-msg hook (it adds a Change-Id to each commit message):',
    `  ${installHookLine(base)}`,
    `then amend, and push once to this change; later amends find it by their Change-Id:`,
    `  git commit --amend --no-edit && git push <remote> HEAD:refs/for/${change.land_target_line}%change=${change.change_id}`,
    '',
  ];
}

/** Commits of a series without a Change-Id: a push of the amended series would open other changes. */
function seriesWithoutChangeId(base: string, count: number): string[] {
  return [
    `${count} commit(s) of this series have no Change-Id: a push of the amended series would open other changes for them.`,
    'Install the commit-msg hook (it adds a Change-Id to each commit message):',
    `  ${installHookLine(base)}`,
    '',
  ];
}

/** GET /tools/hooks/commit-msg: the hook that gives each commit message a Change-Id (docs/git.md "Push for review"). */
export const commitMsgHook: Handler = async () => ({ mediaType: 'text/x-shellscript; charset=utf-8', bytes: Buffer.from(COMMIT_MSG_HOOK) });

export const commitById: Handler = async (ctx) => {
  const record = requireAuthority(ctx).content.gitCommitById(ctx.params.commit_id);
  return { json: { git_commit: gitCommitProjection(record) } };
};

export const snapshotCommit: Handler = async (ctx) => {
  const record = requireAuthority(ctx).content.gitCommit(ctx.params.snapshot_id);
  return { json: { git_commit: gitCommitProjection(record) } };
};

const gitId = { ...str, pattern: '^([0-9a-f]{40}|[0-9a-f]{64})$', description: 'a git object id: sha1 (40 hex) or sha256 (64 hex)' };
const ident = obj({
  name: str,
  email: str,
  time: { ...int, description: 'seconds since the epoch, as git wrote it' },
  tz: { ...str, pattern: '^[+-][0-9]{4}$', description: 'the offset as git wrote it (+0100, -0830)' },
});

export const SCHEMAS: Schemas = {
  // The sync commit's answer, and what the import recorded of the git commits.
  GitImportResult: extend(CONTENT_SCHEMAS.SyncCommit as SchemaObject, {
    git_commits: obj({ recorded: uint, skipped: { ...uint, description: 'rows whose snapshot already had this git commit' } }),
  }),
  GitCommit: obj({
    snapshot_id: hex64,
    commit_id: gitId,
    origin: { ...enumOf(['imported', 'exported', 'pushed']), description: 'imported: written by an import from git; exported: built by an export; pushed: received by a push for review' },
    tree_id: gitId,
    parent_ids: { ...arr(gitId), description: 'all parents, in order (the snapshot keeps only the first-parent chain)' },
    author: ident,
    committer: ident,
    encoding: { ...orNull(str), description: 'the commit\'s encoding header; null: UTF-8' },
    message: { ...str, description: 'the message as text (decoded by its encoding; Latin-1 when it is not valid in it)' },
    gitlinks: { ...arr(obj({ path: str, commit_id: gitId })), description: 'submodule entries of the commit\'s tree (a snapshot cannot hold them)' },
    raw: { ...str, description: 'the commit object\'s bytes, base64: `git cat-file commit <commit_id>`' },
    export_commit_id: { ...orNull(gitId), description: 'an imported commit the export could not keep as it was: the commit it wrote instead; otherwise null' },
    change_id: { ...orNull(str), description: 'a pushed commit: the change whose patchset it became; otherwise null' },
    pushed_by: { ...orNull(str), description: 'a pushed commit: the identity that pushed it (docs/git.md "Who pushed"); null when the push named none, or the commit was not pushed' },
  }),
  GitExportResult: obj({
    line: str,
    head_commit_id: { ...orNull(gitId), description: 'the commit of the line\'s head; null when the line is empty' },
    written: { ...uint, description: 'commits this export wrote to the shadow repository (0: it held them already)' },
    shadow_ref: { ...str, description: 'the branch of the shadow repository that now names head_commit_id: refs/heads/<line>' },
  }),
  GitCommitResult: obj({ git_commit: ref('GitCommit') }),
  GitTagsResult: obj({
    recorded: { ...uint, description: 'tags recorded by this request' },
    unchanged: { ...uint, description: 'tags recorded before with the same commit and object' },
    refused: { ...arr(obj({ name: str, reason: str })), description: 'tags not recorded: a commit no import recorded, or a tag recorded before that names something else (tags are read-only)' },
  }),
};
