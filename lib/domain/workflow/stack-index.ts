// The relation chain of changes (docs/git.md "Stacks") is derived, never stored: a change's
// "change below" is the change one of whose patchsets has, as its revision, the base snapshot of
// this change's patchset. This index answers "which patchsets have snapshot S as their revision
// (or base)" without a scan: snapshot id → patchset ids, keyed by the id's first 52 bits (a number
// key keeps the map small; a collision is told apart by reading the patchset record).
export class SnapshotPatchsets {
  private readonly map = new Map<number, string | string[]>();

  private static key(snapshotId: string): number {
    return Number.parseInt(snapshotId.slice(0, 13), 16);
  }

  add(snapshotId: string, patchsetId: string): void {
    const key = SnapshotPatchsets.key(snapshotId);
    const had = this.map.get(key);
    if (had === undefined) this.map.set(key, patchsetId);
    else if (Array.isArray(had)) { if (!had.includes(patchsetId)) had.push(patchsetId); }
    else if (had !== patchsetId) this.map.set(key, [had, patchsetId]);
  }

  /** Candidate patchset ids (the caller checks each record's snapshot: keys may collide). */
  get(snapshotId: string): readonly string[] {
    const had = this.map.get(SnapshotPatchsets.key(snapshotId));
    return had === undefined ? [] : Array.isArray(had) ? had : [had];
  }
}

/** Changes a stack lists at most (each direction is walked at most this far). */
export const MAX_STACK = 200;
