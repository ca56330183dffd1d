// Stacks (docs/git.md "Stacks", docs/api.md "Stacks"): the relation chain of changes, derived
// from the patchsets themselves and never written twice. A patchset's change below is the change
// whose patchset has this patchset's base snapshot as its revision (a series pushed for review
// bases each commit on the one before it). The index behind the lookups
// (lib/domain/workflow/stack-index.ts) is built on first use from the patchsets of the OPEN
// changes only (what a stack is made of; never every record), then kept up to date as patchsets
// commit. A base snapshot whose git commit was pushed names its change in the git map, so a
// pushed change below is found whatever its status, without the index.
import { isOpenChange, CHANGE, PATCHSET, patchsetId, type ChangeRecord, type ChangeStatus, type PatchsetRecord } from '../../domain/workflow/rules.js';
import { MAX_STACK, SnapshotPatchsets } from '../../domain/workflow/stack-index.js';
import type { Requirement } from '../../domain/workflow/repo-rules.js';
import type { ContentStore, Txn } from '../../store/content-store.js';
import { GIT_COMMIT, type GitCommitRecord } from '../../domain/git.js';

/** The readiness kind (and land failure kind) of a change above an unlanded change. */
export const BLOCKED_BY_CHANGE_BELOW = 'blocked_by_change_below';

export interface StackEntry {
  change_id: string;
  change_ref: string;
  title: string;
  status: ChangeStatus;
  selected_patchset_id: string | null;
  /** The change this one is based on (null: the bottom of the stack). */
  below: string | null;
  /** The patchset of the change below that this change's selected patchset is based on. */
  based_on_patchset_id: string | null;
  /** The change below has a newer patchset than the one this change is based on (rebase: push the series again). */
  outdated: boolean;
  /** The change the stack was asked for. */
  this: boolean;
}

export interface Below {
  change: ChangeRecord;
  patchset: PatchsetRecord;
}

export class StackBook {
  private byRevision: SnapshotPatchsets | null = null;
  private byBase: SnapshotPatchsets | null = null;

  /** `openChanges`: the ids of the open changes (the book's index). */
  constructor(private readonly store: ContentStore, private readonly openChanges: () => string[]) {}

  private built(): { byRevision: SnapshotPatchsets; byBase: SnapshotPatchsets } {
    if (!this.byRevision || !this.byBase) {
      const byRevision = new SnapshotPatchsets();
      const byBase = new SnapshotPatchsets();
      for (const id of this.openChanges()) {
        const c = this.store.entity<ChangeRecord>(CHANGE, id);
        for (let n = 1; c && n <= c.patchset_count; n++) {
          const p = this.store.entity<PatchsetRecord>(PATCHSET, patchsetId(id, n));
          if (!p) continue;
          byRevision.add(p.revision_snapshot_id, p.patchset_id);
          byBase.add(p.base_snapshot_id, p.patchset_id);
        }
      }
      this.byRevision = byRevision;
      this.byBase = byBase;
    }
    return { byRevision: this.byRevision, byBase: this.byBase };
  }

  /** A patchset committed (called on publish): indexed when the index exists (else the first build reads it). */
  note(p: PatchsetRecord): void {
    this.byRevision?.add(p.revision_snapshot_id, p.patchset_id);
    this.byBase?.add(p.base_snapshot_id, p.patchset_id);
  }

  private read<T>(tx: Txn | undefined, type: string, id: string): T | undefined {
    return tx ? tx.entity<T>(type, id) : this.store.entity<T>(type, id);
  }

  /**
   * The change below `ps` (as `tx` sees it): of the other changes with a patchset whose revision
   * is `ps`'s base, an open one first, then a landed one, then the newest. Null: `ps` is based on no change (a line's
   * head, or a landed commit).
   */
  belowOf(ps: Pick<PatchsetRecord, 'change_id' | 'base_snapshot_id'>, tx?: Txn): Below | null {
    let best: Below | null = null;
    const candidates = [...this.built().byRevision.get(ps.base_snapshot_id)];
    // A pushed base commit names its change (whatever its status now): its patchsets of that revision.
    const pushed = this.read<GitCommitRecord>(tx, GIT_COMMIT, ps.base_snapshot_id);
    const owner = pushed?.change_id ? this.read<ChangeRecord>(tx, CHANGE, pushed.change_id) : undefined;
    for (let n = 1; owner && n <= owner.patchset_count; n++) candidates.push(patchsetId(owner.change_id, n));
    for (const id of candidates) {
      const p = this.read<PatchsetRecord>(tx, PATCHSET, id);
      if (!p || p.revision_snapshot_id !== ps.base_snapshot_id || p.change_id === ps.change_id) continue;
      const c = this.read<ChangeRecord>(tx, CHANGE, p.change_id);
      if (!c) continue;
      // Open first, then landed (what it brought is on the line), then the rest; newest among equals.
      const rank = (x: Below) => (isOpenChange(x.change.status) ? 2 : x.change.status === 'landed' ? 1 : 0) * 1e12 + x.change.sequence;
      const cand = { change: c, patchset: p };
      if (best === null || rank(cand) > rank(best)) best = cand;
    }
    return best;
  }

  /**
   * Whether `ps` may land as `tx` sees it: its change below must be landed. A change below that is
   * open (or abandoned, or archived) refuses it, naming that change and who can act on it.
   */
  requirement(ps: PatchsetRecord, tx?: Txn): Requirement | null {
    const below = this.belowOf(ps, tx);
    if (below === null || below.change.status === 'landed') return null;
    const c = below.change;
    const who = [...new Set([...(c.owner ? [c.owner] : []), ...(c.reviewers ?? []).filter((r) => r.kind === 'person').map((r) => r.name)])];
    const message = isOpenChange(c.status)
      ? `change ${c.change_id} ("${c.title.slice(0, 80)}") below this one in its stack is ${c.status}, not landed: land it first (or enqueue this change: the land queue lands the stack in order)`
      : `change ${c.change_id} ("${c.title.slice(0, 80)}") below this one in its stack is ${c.status}: it will not land; rebase this change onto ${c.land_target_line} and push it again`;
    return { kind: BLOCKED_BY_CHANGE_BELOW, rule: 'stack', satisfied: false, message, who };
  }

  /**
   * The stack of `change`: the open changes below its selected patchset (bottom first; a change
   * below that will not land — abandoned — is listed too, and ends the walk), the change itself,
   * and the open changes above it whose selected patchset is based on one of its patchsets (and
   * theirs, breadth first). Empty when the change stands alone. At most MAX_STACK each way.
   */
  stackOf(change: ChangeRecord): StackEntry[] {
    const entry = (c: ChangeRecord, below: Below | null, self: boolean): StackEntry => ({
      change_id: c.change_id,
      change_ref: c.change_ref,
      title: c.title,
      status: c.status,
      selected_patchset_id: c.selected_patchset_id,
      below: below?.change.change_id ?? null,
      based_on_patchset_id: below?.patchset.patchset_id ?? null,
      outdated: below !== null && below.change.current_patchset_id !== below.patchset.patchset_id,
      this: self,
    });
    const selected = change.selected_patchset_id ? this.store.entity<PatchsetRecord>(PATCHSET, change.selected_patchset_id) : undefined;
    const seen = new Set([change.change_id]);
    const down: StackEntry[] = [];
    let belowOfSelf: Below | null = null;
    let at: Below | null = selected ? this.belowOf(selected) : null;
    if (at && at.change.status !== 'landed') belowOfSelf = at;
    while (at && at.change.status !== 'landed' && !seen.has(at.change.change_id) && down.length < MAX_STACK) {
      seen.add(at.change.change_id);
      const next = isOpenChange(at.change.status) ? this.belowOf(at.patchset) : null;
      const listedNext = next && next.change.status !== 'landed' ? next : null;
      down.push(entry(at.change, listedNext, false));
      at = listedNext;
    }
    const up: StackEntry[] = [];
    const queue = [change];
    while (queue.length && up.length < MAX_STACK) {
      const c = queue.shift()!;
      const above: ChangeRecord[] = [];
      for (let n = 1; n <= c.patchset_count; n++) {
        const p = this.store.entity<PatchsetRecord>(PATCHSET, patchsetId(c.change_id, n));
        if (!p) continue;
        for (const id of this.built().byBase.get(p.revision_snapshot_id)) {
          const q = this.store.entity<PatchsetRecord>(PATCHSET, id);
          if (!q || q.base_snapshot_id !== p.revision_snapshot_id || seen.has(q.change_id)) continue;
          const d = this.store.entity<ChangeRecord>(CHANGE, q.change_id);
          // Only a change whose selected patchset (what lands) is based here is above it.
          if (!d || !isOpenChange(d.status) || d.selected_patchset_id !== q.patchset_id) continue;
          if (this.belowOf(q)?.change.change_id !== c.change_id) continue;
          seen.add(d.change_id);
          above.push(d);
        }
      }
      above.sort((a, b) => a.sequence - b.sequence);
      for (const d of above) {
        if (up.length >= MAX_STACK) break;
        up.push(entry(d, this.belowOf(this.store.entity<PatchsetRecord>(PATCHSET, d.selected_patchset_id!)!), false));
        queue.push(d);
      }
    }
    if (down.length === 0 && up.length === 0) return [];
    return [...down.reverse(), entry(change, belowOfSelf, true), ...up];
  }
}
