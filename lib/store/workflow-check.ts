// fsck's checks of workflow.log records: the tamper-evident policy-decision chain (docs/api.md
// "Reviews, attestation, policy, patchset CI"; storage-layout.md §17: every policy_decision upsert,
// in chain order, must match its own sha256 and link to the previous decision's sha256), and the
// git commits kept with snapshots and their commit-id index (docs/git.md).
import { checkGitCommitRow, GIT_COMMIT, GIT_COMMIT_ID, type GitCommitIdRecord, type GitCommitRecord } from '../domain/git.js';
import { GIT_MIRROR, mirrorRecordProblems, type GitMirrorRecord } from '../domain/git-mirrors.js';
import { POLICY_DECISION, verifyDecisionChain, type PolicyDecisionRecord } from '../domain/workflow/review-rules.js';
import type { ContentStore } from './content-store.js';

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
        if (r.origin !== 'imported' && r.origin !== 'exported') problems.push(`${where} has origin ${JSON.stringify(r.origin)}`);
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
            if (r.origin !== 'imported') throw new Error(`only an imported record holds an export, not origin ${JSON.stringify(r.origin)}`);
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
 * Problems of the git mirror records (type `git_mirror`, docs/git.md "Mirror"): each one's id,
 * fields and state (lib/domain/git-mirrors.ts), as the store holds it now (the latest upsert
 * of each id). Reported, never repaired.
 */
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
