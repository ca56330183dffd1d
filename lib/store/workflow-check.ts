// fsck's checks of workflow.log records: the tamper-evident policy-decision chain (docs/api.md
// "Reviews, attestation, policy, patchset CI"; storage-layout.md §17: every policy_decision upsert,
// in chain order, must match its own sha256 and link to the previous decision's sha256), and the
// git commits kept with snapshots and their commit-id index (docs/git.md), the viewed marks, the
// git mirrors and the repository rules.
import { checkGitCommitRow, checkGitTagRow, GIT_COMMIT, GIT_COMMIT_ID, GIT_TAG, type GitCommitIdRecord, type GitCommitRecord, type GitTagRecord } from '../domain/git.js';
import { GIT_MIRROR, mirrorRecordProblems, type GitMirrorRecord } from '../domain/git-mirrors.js';
import { REPOSITORY_RULES, rulesRecordProblems } from '../domain/workflow/repo-rules.js';
import { POLICY_DECISION, verifyDecisionChain, type PolicyDecisionRecord } from '../domain/workflow/review-rules.js';
import { MAX_VIEWED_PER_USER, parseViewedId, requireViewedPath, userKey, VIEWED, type ViewedRecord } from '../domain/workflow/viewed-rules.js';
import { CHANGE, PATCHSET, type PatchsetRecord } from '../domain/workflow/rules.js';
import type { ContentStore } from './content-store.js';
import { GIT_CHANGE_KEY, type GitChangeKeyRecord } from '../domain/git-push.js';

interface Upsert { type?: string; id?: string; body?: unknown }

/** Each transaction record of workflow.log with its upserts (a record that does not parse is the log decoder check's to report). */
function* workflowRecords(store: ContentStore): Generator<{ offset: number; upserts: Upsert[] }> {
  for (const rec of store.logRecords('workflow')) {
    let txn: { upserts?: Upsert[] };
    try {
      txn = JSON.parse(rec.body.toString('utf8'));
    } catch {
      continue;
    }
    yield { offset: rec.offset, upserts: (txn.upserts ?? []).filter((u) => u && typeof u === 'object') };
  }
}

/** Problems of the decision chain (the first broken link, named), or none. */
export function checkDecisionChain(store: ContentStore): string[] {
  const decisions = new Map<string, PolicyDecisionRecord>();
  try {
    for (const rec of workflowRecords(store)) {
      for (const u of rec.upserts) {
        if (u.type !== POLICY_DECISION || typeof u.id !== 'string') continue;
        if (decisions.has(u.id)) return [`workflow.log: policy decision ${u.id} is written twice (record at byte ${rec.offset}); decisions are immutable`];
        decisions.set(u.id, u.body as PolicyDecisionRecord);
      }
    }
  } catch (err) {
    return [(err as Error).message];
  }
  const chain = [...decisions.values()].sort((a, b) => a.chain_seq - b.chain_seq);
  const broken = verifyDecisionChain(chain);
  return broken ? [`workflow.log: ${broken}`] : [];
}

/**
 * Problems of the git commits kept with snapshots (type `git_commit`, docs/git.md): each names
 * a stored snapshot, is filed under that snapshot's id, and its commit id is the hash of its
 * bytes, which parse as a commit. Reported, never repaired.
 */
export function checkGitCommits(store: ContentStore): string[] {
  const problems: string[] = [];
  try {
    for (const rec of workflowRecords(store)) {
      for (const u of rec.upserts) {
        if (u.type !== GIT_COMMIT) continue;
        const r = u.body as GitCommitRecord;
        const where = `workflow.log: git commit of snapshot ${String(u.id)} (record at byte ${rec.offset})`;
        if (!r || typeof r !== 'object' || r.snapshot_id !== u.id) {
          problems.push(`${where} is not filed under its snapshot id`);
          continue;
        }
        if (!store.hasSnapshot(r.snapshot_id)) problems.push(`${where} names a snapshot that is not stored`);
        if (r.origin !== 'imported' && r.origin !== 'exported' && r.origin !== 'pushed') problems.push(`${where} has origin ${JSON.stringify(r.origin)}`);
        // A pushed commit names the change it became a patchset of, and that change exists.
        if (r.origin === 'pushed' && (typeof r.change_id !== 'string' || !store.entity(CHANGE, r.change_id))) problems.push(`${where}: a pushed commit names no stored change (${JSON.stringify(r.change_id ?? null)})`);
        if (r.origin !== 'pushed' && r.change_id !== undefined) problems.push(`${where}: only a pushed commit names a change`);
        try {
          checkGitCommitRow(r);
        } catch (err) {
          problems.push(`${where}: ${(err as Error).message}`);
        }
        // Its commit-id index entry points back at it.
        const index = store.entity<GitCommitIdRecord>(GIT_COMMIT_ID, r.commit_id);
        if (!index || index.snapshot_id !== r.snapshot_id) problems.push(`${where}: the commit-id index does not name this snapshot for ${r.commit_id}`);
        // The commit an export wrote instead of an imported one: its id is the hash of its bytes, and it is indexed.
        if (r.export !== undefined) {
          try {
            if (r.origin === 'exported') throw new Error('an exported record holds no export of its own');
            checkGitCommitRow({ snapshot_id: r.snapshot_id, commit_id: r.export.commit_id, raw: r.export.raw });
            const exported = store.entity<GitCommitIdRecord>(GIT_COMMIT_ID, r.export.commit_id);
            if (!exported || exported.snapshot_id !== r.snapshot_id) throw new Error(`the commit-id index does not name this snapshot for its exported commit ${r.export.commit_id}`);
          } catch (err) {
            problems.push(`${where}: export: ${(err as Error).message}`);
          }
        }
        if (problems.length >= 100) return problems;
      }
      for (const u of rec.upserts) {
        if (u.type !== GIT_TAG) continue;
        // A tag (docs/git.md "Import every branch and tag"): filed under its name, its commit one
        // an import recorded (for its snapshot), an annotated tag's id the hash of its bytes.
        const t = u.body as GitTagRecord;
        const where = `workflow.log: git tag ${String(u.id).slice(0, 200)} (record at byte ${rec.offset})`;
        try {
          if (!t || typeof t !== 'object' || t.name !== u.id) throw new Error('is not filed under its name');
          const tagId = checkGitTagRow(t);
          if (tagId !== t.tag_id) throw new Error(`its tag_id ${JSON.stringify(t.tag_id)} is not the id of its bytes (${tagId ?? 'none: lightweight'})`);
          const index = store.entity<GitCommitIdRecord>(GIT_COMMIT_ID, t.commit_id);
          if (!index || index.snapshot_id !== t.snapshot_id) throw new Error(`the commit-id index does not name its snapshot for ${t.commit_id}`);
        } catch (err) {
          problems.push(`${where} ${(err as Error).message}`);
        }
      }
      for (const u of rec.upserts) {
        if (u.type !== GIT_CHANGE_KEY) continue;
        const body = u.body as GitChangeKeyRecord;
        if (!body || typeof body.change_id !== 'string' || u.id !== `${body.line} ${body.change_key}` || !store.entity(CHANGE, body.change_id)) problems.push(`workflow.log: Change-Id key ${String(u.id)} (record at byte ${rec.offset}) is not filed under "<line> <Change-Id>" or names no stored change`);
      }
      for (const u of rec.upserts) {
        if (u.type !== GIT_COMMIT_ID) continue;
        const body = u.body as GitCommitIdRecord;
        const target = body && typeof body.snapshot_id === 'string' ? store.entity<GitCommitRecord>(GIT_COMMIT, body.snapshot_id) : undefined;
        if (!target || (target.commit_id !== u.id && target.export?.commit_id !== u.id) || body.commit_id !== u.id) problems.push(`workflow.log: commit-id index entry ${String(u.id)} (record at byte ${rec.offset}) names no git commit of that id`);
      }
    }
  } catch (err) {
    problems.push((err as Error).message);
  }
  return problems;
}

/**
 * Problems of the viewed marks (type `viewed`, storage-layout.md §17 "Viewed marks"): each id is
 * `change-N.viewed-<user key>-<k>` and its record names that change, the key of its user and
 * that sequence; the sequences of a (change, user key) run from 1 without a gap (reads stop at
 * the first gap) and stay within the per-user cap; the change exists; the patchset is the
 * change's; the path is clean; `viewed` is true or false; `blob_id` is 64 hex or null. At most
 * 50 are listed, then a count of the rest. Reported, never repaired.
 */
export function checkViewedMarks(store: ContentStore): string[] {
  const problems: string[] = [];
  const pairs = new Map<string, { change: string; seqs: Set<number> }>();
  try {
    for (const [id, m] of store.entitiesOf<ViewedRecord>(VIEWED)) {
      const at = `viewed mark ${id}`;
      const parsed = parseViewedId(id);
      if (!parsed) { problems.push(`${at}: the id is not change-N.viewed-<user key>-<k>`); continue; }
      if (typeof m !== 'object' || m === null || m.viewed_id !== id || m.change_id !== parsed.change_id || m.sequence !== parsed.sequence || typeof m.user !== 'string' || userKey(m.user) !== parsed.user_key) {
        problems.push(`${at}: its record names mark ${m?.viewed_id}, change ${m?.change_id}, sequence ${m?.sequence}, user ${JSON.stringify(m?.user)}`);
        continue;
      }
      const key = `${parsed.change_id}\u0000${parsed.user_key}`;
      let p = pairs.get(key);
      if (!p) pairs.set(key, (p = { change: parsed.change_id, seqs: new Set() }));
      p.seqs.add(m.sequence);
      const ps = typeof m.patchset_id === 'string' ? store.entity<PatchsetRecord>(PATCHSET, m.patchset_id) : undefined;
      if (!ps) problems.push(`${at}: patchset ${m.patchset_id} does not exist`);
      else if (ps.change_id !== m.change_id) problems.push(`${at}: patchset ${m.patchset_id} belongs to ${ps.change_id}, not ${m.change_id}`);
      try {
        if (typeof m.path !== 'string' || requireViewedPath(m.path) !== m.path) problems.push(`${at}: path ${JSON.stringify(m.path)} is not clean`);
      } catch (err) {
        problems.push(`${at}: ${(err as Error).message}`);
      }
      if (typeof m.viewed !== 'boolean') problems.push(`${at}: viewed is not true or false`);
      if (m.blob_id !== null && !(typeof m.blob_id === 'string' && /^[0-9a-f]{64}$/.test(m.blob_id))) problems.push(`${at}: blob_id ${JSON.stringify(m.blob_id)} is not a blob id or null`);
    }
  } catch (err) {
    return [`workflow.log: viewed marks: ${(err as Error).message}`];
  }
  for (const { change, seqs } of pairs.values()) {
    if (store.entity(CHANGE, change) === undefined) problems.push(`viewed marks of ${change}: change ${change} does not exist (${seqs.size} marks)`);
    if (seqs.size > MAX_VIEWED_PER_USER) problems.push(`viewed marks of ${change}: one user holds ${seqs.size}, more than ${MAX_VIEWED_PER_USER}`);
    for (let k = 1; k <= seqs.size; k++) {
      if (!seqs.has(k)) {
        problems.push(`viewed marks of ${change}: mark ${k} of a user is missing but ${seqs.size} are stored; reads stop at the gap`);
        break;
      }
    }
  }
  return problems.length > 50 ? [...problems.slice(0, 50), `… and ${problems.length - 50} more viewed-mark problems`] : problems;
}

/**
 * Problems of the git mirror records (type `git_mirror`, docs/git.md "Mirror"): each one's id,
 * fields and state (lib/domain/git-mirrors.ts), as the store holds it now (the latest upsert
 * of each id). Reported, never repaired.
 */
/** Problems of the repository's rules record (docs/api.md "Repository rules"): one id, every rule parses. Reported, never repaired. */
export function checkRepositoryRules(store: ContentStore): string[] {
  const problems: string[] = [];
  try {
    for (const [id, r] of store.entitiesOf<unknown>(REPOSITORY_RULES)) {
      for (const p of rulesRecordProblems(id, r)) problems.push(`workflow.log: repository rules ${p}`);
    }
  } catch (err) {
    problems.push((err as Error).message);
  }
  return problems;
}

export function checkGitMirrors(store: ContentStore): string[] {
  const problems: string[] = [];
  try {
    for (const [id, r] of store.entitiesOf<GitMirrorRecord>(GIT_MIRROR)) {
      for (const p of mirrorRecordProblems(id, r)) problems.push(`workflow.log: git mirror ${id} ${p}`);
      if (problems.length >= 100) break;
    }
  } catch (err) {
    problems.push((err as Error).message);
  }
  return problems;
}
