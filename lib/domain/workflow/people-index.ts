// Per person, the changes they own, were asked to review and are copied on (cc); per topic its
// changes; and the changes marked work in progress (change sequences), kept in memory so a
// person's dashboard (docs/api.md "People"), the reviewer inbox and `topic:`/`cc:` searches
// read only those changes, never every change. Derived from the change records' `owner`,
// `reviewers`, `cc`, `topic` and `wip` fields; saved as a checkpoint section (storage-layout.md
// §17.1) and rebuilt from the change records when the section is missing. It changes when a
// per-person list is added.

/** The section of workflow.ckpt (storage-layout.md §17.1). */
export const PEOPLE_SECTION = 'workflow-people';

export interface PeopleFields {
  sequence: number;
  owner?: string;
  reviewers?: readonly { name: string; kind: 'person' | 'group' }[];
  cc?: readonly string[];
  topic?: string;
  wip?: boolean;
}

export class PeopleIndex {
  private readonly owned = new Map<string, Set<number>>();
  private readonly reviewing = new Map<string, Set<number>>();
  private readonly copied = new Map<string, Set<number>>();
  private readonly topics = new Map<string, Set<number>>();
  /** Each change's topic (a topic is replaced or cleared, unlike the per-person lists). */
  private readonly topicOf = new Map<number, string>();
  private readonly wip = new Set<number>();

  /** A change record committed (idempotent: a person is never taken off a list; topic and wip follow the latest record). */
  apply(c: PeopleFields): void {
    if (c.owner) add(this.owned, c.owner, c.sequence);
    for (const r of c.reviewers ?? []) if (r.kind === 'person') add(this.reviewing, r.name, c.sequence);
    for (const name of c.cc ?? []) add(this.copied, name, c.sequence);
    const was = this.topicOf.get(c.sequence);
    if (was !== c.topic) {
      if (was !== undefined) {
        const set = this.topics.get(was)!;
        set.delete(c.sequence);
        if (set.size === 0) this.topics.delete(was);
        this.topicOf.delete(c.sequence);
      }
      if (c.topic) {
        add(this.topics, c.topic, c.sequence);
        this.topicOf.set(c.sequence, c.topic);
      }
    }
    if (c.wip) this.wip.add(c.sequence);
    else this.wip.delete(c.sequence);
  }

  /** Change sequences `name` is copied on (cc), ascending. */
  ccOf(name: string): number[] {
    return [...(this.copied.get(name) ?? [])].sort((a, b) => a - b);
  }

  /** Change sequences with topic `topic`, ascending. */
  withTopic(topic: string): number[] {
    return [...(this.topics.get(topic) ?? [])].sort((a, b) => a - b);
  }

  /** Change sequences marked work in progress, ascending. */
  wipChanges(): number[] {
    return [...this.wip].sort((a, b) => a - b);
  }

  /** The change is marked work in progress. */
  isWip(seq: number): boolean {
    return this.wip.has(seq);
  }

  /** Change sequences `name` owns, newest first. */
  ownedBy(name: string): number[] {
    return [...(this.owned.get(name) ?? [])].sort((a, b) => b - a);
  }

  /** Change sequences `name` was asked to review, newest first. */
  reviewedBy(name: string): number[] {
    return [...(this.reviewing.get(name) ?? [])].sort((a, b) => b - a);
  }

  /**
   * The section: JSON `{"owned": {name: [seq...]}, "reviewing": {name: [seq...]}}` (UTF-8),
   * then `"cc": {name: [seq...]}`, `"topics": {topic: [seq...]}` and `"wip": [seq...]` only when
   * not empty (a section of changes without them reads as before); names in code-unit order and
   * sequences ascending, so equal indexes encode to equal bytes (fsck compares the section with
   * one rebuilt from the records).
   */
  encode(): Buffer {
    const obj = (m: Map<string, Set<number>>) => Object.fromEntries([...m.keys()].sort().map((k) => [k, [...m.get(k)!].sort((a, b) => a - b)]));
    const out: Record<string, unknown> = { owned: obj(this.owned), reviewing: obj(this.reviewing) };
    if (this.copied.size > 0) out.cc = obj(this.copied);
    if (this.topics.size > 0) out.topics = obj(this.topics);
    if (this.wip.size > 0) out.wip = this.wipChanges();
    return Buffer.from(JSON.stringify(out), 'utf8');
  }

  /** The index of a section; throws when it does not decode or names a change beyond `changeCount`. */
  static decode(buf: Buffer, changeCount: number): PeopleIndex {
    const x = new PeopleIndex();
    const parsed = JSON.parse(buf.toString('utf8')) as { owned?: unknown; reviewing?: unknown; cc?: unknown; topics?: unknown; wip?: unknown };
    const seqOk = (s: unknown) => Number.isInteger(s) && (s as number) >= 1 && (s as number) <= changeCount;
    for (const [field, map] of [['owned', x.owned], ['reviewing', x.reviewing], ['cc', x.copied], ['topics', x.topics]] as const) {
      const o = parsed[field];
      if (o === undefined && (field === 'cc' || field === 'topics')) continue;
      if (!o || typeof o !== 'object' || Array.isArray(o)) throw new Error(`people section: ${field} is not an object`);
      for (const [name, seqs] of Object.entries(o)) {
        if (!Array.isArray(seqs) || !seqs.every((s) => Number.isInteger(s) && s >= 1 && s <= changeCount)) throw new Error(`people section: ${field} of a person names a change that does not exist`);
        map.set(name, new Set(seqs as number[]));
        if (field === 'topics') for (const seq of seqs as number[]) x.topicOf.set(seq, name);
      }
    }
    if (parsed.wip !== undefined) {
      if (!Array.isArray(parsed.wip) || !parsed.wip.every(seqOk)) throw new Error('people section: wip names a change that does not exist');
      for (const seq of parsed.wip as number[]) x.wip.add(seq);
    }
    return x;
  }
}

/** The index of every change record (fsck's rebuild). */
export function rebuildPeople(changes: Iterable<PeopleFields>): PeopleIndex {
  const x = new PeopleIndex();
  for (const c of changes) x.apply(c);
  return x;
}

function add(m: Map<string, Set<number>>, name: string, seq: number): void {
  let s = m.get(name);
  if (!s) m.set(name, (s = new Set()));
  s.add(seq);
}
