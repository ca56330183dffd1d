// A change's topic, work-in-progress mark and cc list (docs/api.md "Topic, work in progress,
// cc"): Gerrit's `-o topic=`, `-o wip`/`-o ready` and `-o cc=`, set by a push for review or by
// `:setFlags`. Pure: what a request asks, checked, and the change record it makes. A topic is
// replaced or cleared; the wip mark set or cleared; cc names only added (each once, in the order
// first named), as the reviewer list is.
import { Invalid } from '../errors.js';
import { nameProblem } from '../text.js';
import type { ChangeRecord } from './rules.js';

/** People one change may copy (cc). */
export const MAX_CC = 50;

export interface ChangeFlags {
  /** A new topic; null clears it; absent leaves it. */
  topic?: string | null;
  /** true marks the change work in progress, false ready; absent leaves it. */
  wip?: boolean;
  /** Names to copy (added to the change's cc list). */
  cc?: readonly string[];
}

/** Why `value` is not a topic (a name: not blank, at most 256 characters, no control character), or null. */
export const topicProblem = (value: string): string | null => nameProblem(value);

/** `cc` names checked: each a name, at most MAX_CC; repeats are kept once. */
export function requireCc(names: readonly string[], field: string): string[] {
  const out: string[] = [];
  for (const n of names) {
    const problem = nameProblem(n);
    if (problem !== null) throw new Invalid(`${field}: a name ${problem}`);
    if (!out.includes(n)) out.push(n);
  }
  if (out.length > MAX_CC) throw new Invalid(`${field} names more than ${MAX_CC} people`);
  return out;
}

/**
 * The change record with `flags` applied, or the same object when nothing changes. Fields are
 * written only when they have a value (storage-layout.md §17: absent = no topic, ready, no cc).
 */
export function withFlags(change: ChangeRecord, flags: ChangeFlags, now: number): ChangeRecord {
  const next: ChangeRecord = { ...change };
  if (flags.topic !== undefined) {
    if (flags.topic === null) delete next.topic;
    else {
      const problem = topicProblem(flags.topic);
      if (problem !== null) throw new Invalid(`topic ${problem}`);
      next.topic = flags.topic;
    }
  }
  if (flags.wip !== undefined) {
    if (flags.wip) next.wip = true;
    else delete next.wip;
  }
  if (flags.cc && flags.cc.length > 0) {
    const cc = [...(change.cc ?? [])];
    for (const n of requireCc(flags.cc, 'cc')) if (!cc.includes(n)) cc.push(n);
    if (cc.length > MAX_CC) throw new Invalid(`a change may copy at most ${MAX_CC} people; ${change.change_id} copies ${change.cc?.length ?? 0}`);
    next.cc = cc;
  }
  const changed = changedFlags(change, next);
  if (changed.length === 0) return change;
  next.updated_at_s = now;
  return next;
}

/** Which of topic, wip, cc differ between two records of a change (the `change.updated` event's `fields`). */
export function changedFlags(before: ChangeRecord, after: ChangeRecord): string[] {
  const out: string[] = [];
  if ((before.topic ?? null) !== (after.topic ?? null)) out.push('topic');
  if ((before.wip === true) !== (after.wip === true)) out.push('wip');
  if ((before.cc ?? []).length !== (after.cc ?? []).length) out.push('cc');
  return out;
}
