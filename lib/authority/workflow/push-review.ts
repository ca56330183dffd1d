// A push for review as ONE commit of the store (docs/git.md "Push for review"): the packs of the
// commit's trees and blobs, its snapshot, a merge's side commits the map lacked (each a snapshot
// with its git commit), the task and change when they are new, the patchset, the git commit
// (origin `pushed`) with its commit-id entry, and the Change-Id key. Each record
// is staged by the same function its own route uses (stageTask, stageChange, stagePatchset), so
// every event they emit is emitted here too, and visible exactly when the push is.
import type { ChangeFlags } from '../../domain/workflow/change-flags.js';
import { Conflict, Forbidden, Invalid, NotFound } from '../../domain/errors.js';
import { changeKeyId, GIT_CHANGE_KEY, type GitChangeKeyRecord } from '../../domain/git-push.js';
import { GIT_COMMIT, GIT_COMMIT_ID, type GitCommitIdRecord, type GitCommitRecord, type Gitlink } from '../../domain/git.js';
import { withoutControlCharacters } from '../../domain/text.js';
import { checkChangeOpen, MAX_TEXT_CHARS, MAX_TITLE_CHARS, PATCHSET, patchsetId, requireText, requireTitle, type ChangeRecord, type PatchsetRecord, type TaskRecord } from '../../domain/workflow/rules.js';
import type { ContentStore, Txn } from '../../store/content-store.js';
import { crashPoint } from '../../store/crash-point.js';
import { PACK_KIND_OBJECT, PACK_KIND_TREE, type PackEntry } from '../../store/pack.js';
import type { WorkflowBook } from './book.js';
import { stagePack, type BuiltObjects } from './server-objects.js';

export interface PushedPatchset {
  line: string;
  /** The snapshot of the commit's first parent. */
  base_snapshot_id: string;
  snapshot: { id: string; bytes: Buffer; root_tree_id: string };
  built: BuiltObjects;
  sizes: Map<string, number>;
  commit: { commit_id: string; raw: Buffer; gitlinks: Gitlink[] };
  /** The pack of the push's new blobs, staged already (adopted here), or null. */
  blob_pack: { pack_id: string; entries: PackEntry[] } | null;
  /**
   * A merge's side commits cairn did not know, parents first: each a snapshot on no line
   * (its parent the snapshot of its first parent) with its git commit, as an import keeps them.
   */
  sides: PushedSide[];
  title: string;
  intent: string;
  summary: string;
  author: string;
  /** The pusher's identity (the trusted ingress's header), or null: the push named none. */
  pushed_by: string | null;
  change_key: string | null;
  task_id: string | null;
  change_id: string | null;
  /** The new patchset becomes the change's selected one (false: `-o noselect`, the selection is kept). */
  select: boolean;
  /** `-o r=NAME`: review requested from these people on the selected patchset, in the same commit. */
  reviewers: string[];
  /** `-o topic=`, `-o wip` / `-o ready`, `-o cc=`: the change's flags, in the same commit (absent: none). */
  flags?: ChangeFlags;
}

export interface PushedSide {
  snapshot: { id: string; bytes: Buffer };
  commit: { commit_id: string; raw: Buffer; gitlinks: Gitlink[] };
}

export interface PushedResult {
  task: TaskRecord;
  change: ChangeRecord;
  patchset: PatchsetRecord;
  /** A change made by this push (Gerrit's `[NEW]`). */
  created: boolean;
}

/** The change a push adds to, when it names one (`%change=`, or a known Change-Id); null: a new change. */
function existingChange(book: WorkflowBook, tx: Txn, p: PushedPatchset): ChangeRecord | null {
  let change: ChangeRecord | null = null;
  if (p.change_id !== null) change = book.changeIn(tx, p.change_id);
  else if (p.change_key !== null) {
    const key = tx.entity<GitChangeKeyRecord>(GIT_CHANGE_KEY, changeKeyId(p.line, p.change_key));
    if (key) change = book.changeIn(tx, key.change_id);
  }
  if (change === null) return null;
  // A change is its owner's: another identified pusher may not add to it (Gerrit asks for a
  // permission; there are no roles here). An unidentified push, or an ownerless change, as before.
  if (p.pushed_by !== null && change.owner !== undefined && change.owner !== p.pushed_by) {
    throw new Forbidden(`${change.change_id} belongs to ${change.owner}: a push by ${p.pushed_by} cannot add a patchset to it; push with a new Change-Id for a change of your own`);
  }
  if (p.task_id !== null && p.task_id !== change.task_id) throw new Invalid(`${change.change_id} is a change of ${change.task_id}, not of ${p.task_id}`);
  if (change.land_target_line !== p.line) throw new Invalid(`${change.change_id} lands on ${change.land_target_line}, not on ${p.line}: push to refs/for/${change.land_target_line}`);
  checkChangeOpen(change, 'add a patchset (push with a new Change-Id for a new change)');
  return change;
}

/**
 * Write a pushed commit as a patchset: a new task and change, a new change of `task_id`, or a
 * new patchset of the change the Change-Id or `change_id` names. All of it, or nothing.
 */
export async function commitPushedPatchset(store: ContentStore, book: WorkflowBook, p: PushedPatchset): Promise<PushedResult> {
  return (await commitPushedSeries(store, book, [p]))[0];
}

/**
 * Write a series of pushed commits (docs/git.md "Stacks"), bottom first, each based on the one
 * before it, as one patchset each (of its own change, found as commitPushedPatchset finds it) in
 * ONE commit of the store: all of them, or nothing. The items share one `built`, `sizes` and
 * `blob_pack` (one conversion of the push): the first item's are staged.
 */
export async function commitPushedSeries(store: ContentStore, book: WorkflowBook, series: PushedPatchset[]): Promise<PushedResult[]> {
  const prepared: { p: PushedPatchset; diff: Awaited<ReturnType<WorkflowBook['diff']>>; summary: string; author: string; title: string }[] = [];
  for (const [i, p] of series.entries()) {
    // The base of an item above the first is the snapshot of the item before it (not stored yet).
    const below = i > 0 && series[i - 1].snapshot.id === p.base_snapshot_id ? series[i - 1].snapshot : null;
    const base = below ?? store.snapshot(p.base_snapshot_id);
    if (!base) throw new NotFound(`snapshot ${p.base_snapshot_id} is not present`);
    const summary = requireText(p.summary.slice(0, MAX_TEXT_CHARS), 'summary', MAX_TEXT_CHARS, true);
    // A commit's subject and author may hold tabs or other control characters, which titles and
    // names do not (lib/domain/text.ts): they become spaces rather than refuse the push.
    const author = requireText(withoutControlCharacters(p.author).slice(0, MAX_TITLE_CHARS), 'author', MAX_TITLE_CHARS);
    const title = withoutControlCharacters(p.title);
    // Outside the transaction, as createPatchset does (snapshots are immutable; the revision is built).
    const diff = await book.diff({ snapshot_id: p.base_snapshot_id, root_tree_id: base.root_tree_id }, { snapshot_id: p.snapshot.id, root_tree_id: p.snapshot.root_tree_id }, p.built);
    prepared.push({ p, diff, summary, author, title });
  }
  if (series.length > 0) await book.preparePatchset(series[0].line);
  crashPoint('git-push:commit');
  return store.transact((tx) => prepared.map(({ p, diff, summary, author, title }, i) => {
    const found = existingChange(book, tx, p);
    let change = found;
    let task: TaskRecord;
    if (change === null) {
      task = p.task_id === null
        ? book.createTaskIn(tx, { title: requireTitle(title, 'title'), intent: p.intent.trim() === '' ? title : p.intent.slice(0, MAX_TEXT_CHARS) }, { plan_id: null, origin_plan_revision_id: null, plan_item_ref: null })
        : book.taskIn(tx, p.task_id);
      if (task.status !== 'active') throw new Invalid(`task ${task.task_id} is ${task.status}; changes are created only for active tasks`);
      const line = tx.line(p.line);
      if (!line) throw new NotFound(`line ${p.line} does not exist`);
      change = book.stageChange(tx, task, { title: requireTitle(title, 'title'), base_line: p.line, fork_snapshot_id: line.head_snapshot_id, owner: p.pushed_by });
    } else {
      task = book.taskIn(tx, change.task_id);
      for (let n = change.patchset_count; n >= 1; n--) {
        const ps = tx.entity<PatchsetRecord>(PATCHSET, patchsetId(change.change_id, n));
        if (ps && ps.revision_snapshot_id === p.snapshot.id && ps.base_snapshot_id === p.base_snapshot_id) throw new Conflict(`no new changes: ${ps.patchset_id} is this commit already`);
      }
    }
    if (i === 0) stagePack(tx, PACK_KIND_OBJECT, 'blob', p.built.blobs);
    if (p.blob_pack && i === 0) {
      const fresh = p.blob_pack.entries.filter((e) => !tx.has('blob', e.id));
      if (fresh.length) tx.adoptPack(PACK_KIND_OBJECT, p.blob_pack.pack_id);
      for (const e of fresh) tx.addLocator({ kind: 'blob', id: e.id, pack_id: p.blob_pack.pack_id, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32 });
    }
    if (i === 0) stagePack(tx, PACK_KIND_TREE, 'tree', p.built.trees, p.sizes);
    for (const side of p.sides) if (!tx.hasSnapshot(side.snapshot.id)) tx.addSnapshot(side.snapshot.bytes);
    if (!tx.hasSnapshot(p.snapshot.id)) tx.addSnapshot(p.snapshot.bytes);
    const staged = book.stagePatchset(tx, change, { base_snapshot_id: p.base_snapshot_id, revision_snapshot_id: p.snapshot.id, summary, author_mode: 'human_only', author, pushed_by: p.pushed_by }, diff);
    // The git map: the pushed commit is this snapshot's commit (unless it already was).
    const existing = tx.entity<GitCommitRecord>(GIT_COMMIT, p.snapshot.id);
    if (existing && existing.commit_id !== p.commit.commit_id) throw new Conflict(`the snapshot of this commit already has git commit ${existing.commit_id}`);
    if (!existing) {
      const twin = tx.entity<GitCommitIdRecord>(GIT_COMMIT_ID, p.commit.commit_id);
      if (twin && twin.snapshot_id !== p.snapshot.id) throw new Conflict(`git commit ${p.commit.commit_id} is already the commit of snapshot ${twin.snapshot_id}`);
      const record: GitCommitRecord = { snapshot_id: p.snapshot.id, commit_id: p.commit.commit_id, origin: 'pushed', raw: p.commit.raw.toString('base64'), gitlinks: p.commit.gitlinks, change_id: staged.change.change_id, ...(p.pushed_by !== null ? { pushed_by: p.pushed_by } : {}) };
      tx.upsert(GIT_COMMIT, p.snapshot.id, record);
      tx.upsert(GIT_COMMIT_ID, p.commit.commit_id, { commit_id: p.commit.commit_id, snapshot_id: p.snapshot.id } satisfies GitCommitIdRecord);
    }
    // A side commit is recorded unless its snapshot or its id already has a commit (then the
    // export rewrites the merge, as it does an imported merge whose side history is not in the map).
    for (const side of p.sides) {
      if (tx.entity<GitCommitRecord>(GIT_COMMIT, side.snapshot.id) || tx.entity<GitCommitIdRecord>(GIT_COMMIT_ID, side.commit.commit_id)) continue;
      const record: GitCommitRecord = { snapshot_id: side.snapshot.id, commit_id: side.commit.commit_id, origin: 'pushed', raw: side.commit.raw.toString('base64'), gitlinks: side.commit.gitlinks, change_id: staged.change.change_id, ...(p.pushed_by !== null ? { pushed_by: p.pushed_by } : {}) };
      tx.upsert(GIT_COMMIT, side.snapshot.id, record);
      tx.upsert(GIT_COMMIT_ID, side.commit.commit_id, { commit_id: side.commit.commit_id, snapshot_id: side.snapshot.id } satisfies GitCommitIdRecord);
    }
    if (p.change_key !== null) {
      const id = changeKeyId(p.line, p.change_key);
      const key = tx.entity<GitChangeKeyRecord>(GIT_CHANGE_KEY, id);
      if (!key || key.change_id !== staged.change.change_id) tx.upsert(GIT_CHANGE_KEY, id, { line: p.line, change_key: p.change_key, change_id: staged.change.change_id } satisfies GitChangeKeyRecord);
    }
    // What is reviewed is what lands: the newest push is the selected patchset, selected as
    // changes:selectPatchset selects (the same record and event), unless the push said noselect.
    let final = p.select ? book.selectPatchsetIn(tx, staged.change, staged.patchset.patchset_id) : staged.change;
    // `-o r=`: the requests :requestReview stages (records, reviewer list, status review), on
    // the patchset that is reviewed: the selected one.
    if (p.reviewers.length > 0) {
      const selected = final.selected_patchset_id === staged.patchset.patchset_id ? staged.patchset : tx.entity<PatchsetRecord>(PATCHSET, final.selected_patchset_id ?? '');
      if (!selected) throw new Conflict(`${final.change_id} has no selected patchset to request a review of`);
      final = book.reviews.stageRequests(tx, final, selected, p.reviewers.map((name) => ({ name, kind: 'person' as const })), p.pushed_by, '').change;
    }
    if (p.flags) final = book.setFlagsIn(tx, final, p.flags);
    if (i < prepared.length - 1) crashPoint('git-push:series-staged');
    return { task, change: final, patchset: staged.patchset, created: found === null };
  }));
}
