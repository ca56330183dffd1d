// fsck's check of the tamper-evident policy-decision chain (docs/api.md "Reviews, attestation,
// policy, patchset CI"; storage-layout.md §17): every policy_decision upsert of workflow.log,
// in chain order, must match its own sha256 and link to the previous decision's sha256.
import { POLICY_DECISION, verifyDecisionChain, type PolicyDecisionRecord } from '../domain/workflow/review-rules.js';
import type { ContentStore } from './content-store.js';

/** Problems of the decision chain (the first broken link, named), or none. */
export function checkDecisionChain(store: ContentStore): string[] {
  const decisions = new Map<string, PolicyDecisionRecord>();
  try {
    for (const rec of store.logRecords('workflow')) {
      let txn: { upserts?: { type?: string; id?: string; body?: unknown }[] };
      try {
        txn = JSON.parse(rec.body.toString('utf8'));
      } catch {
        continue; // reported by the log decoder check
      }
      for (const u of txn.upserts ?? []) {
        if (u?.type !== POLICY_DECISION || typeof u.id !== 'string') continue;
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
