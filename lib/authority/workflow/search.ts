// Change search (docs/api.md "Searching changes"): `GET changes?q=` answered from posting lists
// (ascending change sequences, lib/domain/workflow/search-index.ts) instead of a scan of the
// change records. Lists:
//   - title words (lib/domain/workflow/search-query.ts `titleWords`) → changes;
//   - base line → changes; owner → changes; reviewer (requested person or group, or who wrote a
//     review) → changes;
//   - path prefixes of one and two segments (`lib`, `lib/http`) of the files any patchset of a
//     change touched (the ≤ 1,000 paths each patchset records), at most 64 per patchset; a
//     patchset with more goes on an "every prefix" list instead; and the three-segment prefixes
//     (`lib/http/routes.ts`) hashed into 65,536 buckets, at most 64 per patchset too (past it, a
//     "deep" list), so a `file:` of three segments or more reads few candidates;
//   - changes with comments (is:unresolved's candidates).
// They are a section of the workflow checkpoint (storage-layout.md §17.1 `change-search`): an
// open takes them from it and applies the records of the log's tail after it, so a search after
// a restart reads no other record. Without a usable section (none yet, another version, or one
// that does not decode or fit) they are built from the records on the first search after open
// (one pass over the change, patchset, review and comment records, in slices that yield to the
// event loop), and the next checkpoint holds them. Either way they then follow every committed
// upsert of those types.
// A query intersects its lists, smallest first, walks the result newest first from the cursor
// and checks what a list can only approximate against the records (a file among the current
// patchset's paths; unresolved threads in the change's thread summary; the status byte of the
// workflow indexes). A query without a list term (status:, is:open alone) walks the status
// bytes of every change, as `?status=` does. Each page reads at most MAX_CHECKS records; past
// that it ends early with a cursor (a page may hold fewer rows than the limit while more follow).
// The walk yields to the event loop between slices of work (`searchPaging`), as the build does.
import { encodeCursor, type Page, type PageRequest } from '../../domain/paging.js';
import { COMMENT } from '../../domain/workflow/comment-rules.js';
import { OPEN_CHANGE_CODES, changeCode } from '../../domain/workflow/indexes.js';
import { REVIEW, type ReviewRecord } from '../../domain/workflow/review-rules.js';
import { CHANGE, changeId, PATCHSET, patchsetId, type ChangeRecord, type PatchsetRecord } from '../../domain/workflow/rules.js';
import { type SearchQuery } from '../../domain/workflow/search-query.js';
import { fileBucket, lowerBound, prefixesOf, SEARCH_SECTION, SearchIndex, thirdPrefixOf } from '../../domain/workflow/search-index.js';
import type { ContentStore } from '../../store/content-store.js';
import type { WorkflowIndexes } from '../../domain/workflow/indexes.js';

/** Records a page reads to check candidates before it ends early. */
export const MAX_CHECKS = 5_000;
/** Pacing of the lists' build: work per slice between yields; tests pause it between slices. */
export const searchBuild: { sliceMs: number; pause: (() => Promise<void>) | null } = { sliceMs: 20, pause: null };
/** Pacing of a page's walk over its candidates: work per slice between yields; tests pause it between slices. */
export const searchPaging: { sliceMs: number; pause: (() => Promise<void>) | null } = { sliceMs: 20, pause: null };
/**
 * How the lists of this process came to be (tests assert on them instead of on timing):
 * `builds` started from the records, `loaded` from a checkpoint section, `refused` sections
 * (another version, or one that does not decode or fit: the lists are built instead).
 */
export const searchStats = { builds: 0, loaded: 0, refused: 0 };

/** What search needs of the workflow book (./book.ts). */
export interface SearchView {
  readonly index: WorkflowIndexes;
  /** Published threads of the change still unresolved. */
  unresolvedCount(changeIdValue: string): number;
  /** The per-person, per-topic and work-in-progress lists (lib/domain/workflow/people-index.ts): `cc:`, `topic:`, `is:wip`. */
  readonly people: { ccOf(name: string): number[]; withTopic(topic: string): number[]; wipChanges(): number[] };
}

/** The ascending intersection of ascending lists (smallest first, each step a galloping walk). */
function intersect(lists: readonly ArrayLike<number>[]): ArrayLike<number> {
  const sorted = [...lists].sort((a, b) => a.length - b.length);
  let acc: ArrayLike<number> = sorted[0];
  for (let i = 1; i < sorted.length && acc.length > 0; i++) {
    const other = sorted[i];
    const out: number[] = [];
    let j = 0;
    for (let k = 0; k < acc.length; k++) {
      const x = acc[k];
      let step = 1;
      while (j + step < other.length && other[j + step] < x) step *= 2;
      j = lowerBound(other, x, j, Math.min(j + step, other.length));
      if (j < other.length && other[j] === x) out.push(x);
    }
    acc = out;
  }
  return acc;
}

/** The ascending union of two ascending lists. */
function union(a: ArrayLike<number>, b: ArrayLike<number>): ArrayLike<number> {
  if (b.length === 0) return a;
  if (a.length === 0) return b;
  const out = new Uint32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length || j < b.length) {
    const x = j >= b.length || (i < a.length && a[i] <= b[j]) ? a[i++] : b[j++];
    if (k === 0 || out[k - 1] !== x) out[k++] = x;
  }
  return out.subarray(0, k);
}

/** The indexed prefix a `file:` value looks up: its first two segments at most. */
const lookupPrefix = (file: string): string => prefixesOf(file).at(-1)!;

export class ChangeSearch {
  private built = false;
  /** The build under way (the hooks apply from its start). */
  private building: Promise<void> | null = null;
  private lists = new SearchIndex();
  /** Where the lists came from: the checkpoint's section, a build from the records, or not yet. */
  origin: 'checkpoint' | 'build' | null = null;

  /**
   * Take the lists from the checkpoint's `section` when it is usable, and apply the records of
   * the log's tail after it (the store names them until the owners have opened). Otherwise
   * (`notes` says why when there was one) the first search builds them.
   */
  constructor(private readonly store: ContentStore, private readonly book: SearchView, section?: Buffer, notes: string[] = []) {
    if (section) {
      try {
        const { index } = SearchIndex.decode(section, book.index.changeCount);
        for (const id of store.tailEntities(CHANGE)) { const c = store.entity<ChangeRecord>(CHANGE, id); if (c) index.applyChange(c); }
        for (const id of store.tailEntities(PATCHSET)) { const p = store.entity<PatchsetRecord>(PATCHSET, id); if (p) index.applyPatchset(p); }
        for (const id of store.tailEntities(REVIEW)) { const r = store.entity<ReviewRecord>(REVIEW, id); if (r) index.applyReview(r); }
        for (const id of store.tailEntities(COMMENT)) index.applyComment(id);
        index.compact();
        this.lists = index;
        this.built = true;
        this.origin = 'checkpoint';
        searchStats.loaded++;
      } catch (err) {
        searchStats.refused++;
        notes.push(`workflow.ckpt: ${(err as Error).message}; the search lists are built from workflow.log on the first search`);
      }
    }
    store.onUpsert(CHANGE, (_id, body) => { if (this.live) this.lists.applyChange(body as ChangeRecord); });
    store.onUpsert(PATCHSET, (_id, body) => { if (this.live) this.lists.applyPatchset(body as PatchsetRecord); });
    store.onUpsert(REVIEW, (_id, body) => { if (this.live) this.lists.applyReview(body as ReviewRecord); });
    store.onUpsert(COMMENT, (id) => { if (this.live) this.lists.applyComment(id); });
    // Lists still being built are not a whole section: the checkpoint goes without one.
    store.registerCheckpointSection(SEARCH_SECTION, () => (this.built ? this.lists.encode(book.index.changeCount) : null));
  }

  /** Whether commits reach the lists: once a build has started. */
  private get live(): boolean { return this.built || this.building !== null; }

  /**
   * Build every list from the records (the first search after open, without a usable section)
   * in slices of about `searchBuild.sliceMs` of work, yielding to the event loop between them so
   * other requests are answered meanwhile. Every list only ever gains entries, so the order of
   * the build's reads and the upsert hooks does not matter: a record committed during the build
   * reaches the lists through its hook (they apply from the build's start), whether or not the
   * build also reads it. Nothing is held across a yield but ids: each record is looked up by its
   * location at the time of reading (a compaction may move records meanwhile).
   */
  private async build(): Promise<void> {
    searchStats.builds++;
    let start = performance.now();
    const due = () => performance.now() - start >= searchBuild.sliceMs;
    const yieldNow = async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (searchBuild.pause) await searchBuild.pause();
      start = performance.now();
    };
    // Every patchset of each change (usually in the same record as its change): the lists are a
    // function of the records, whichever patchset is current (a checkpoint section and fsck's
    // rebuild say the same). Changes created after `top` come by the hooks.
    const top = this.book.index.changeCount;
    const lists = this.lists;
    lists.bulk = true;
    for (let seq = 1; seq <= top; seq++) {
      const c = this.store.scanEntity<ChangeRecord>(CHANGE, changeId(seq));
      if (c) {
        lists.applyChange(c);
        for (let n = 1; n <= c.patchset_count; n++) {
          const p = this.store.scanEntity<PatchsetRecord>(PATCHSET, patchsetId(c.change_id, n));
          if (p) lists.applyPatchset(p);
        }
      }
      if (due()) await yieldNow();
    }
    // Ids only are held across yields (the location map iterates live).
    for (const id of this.store.entityIds(REVIEW)) {
      const r = this.store.scanEntity<ReviewRecord>(REVIEW, id);
      if (r) lists.applyReview(r);
      if (due()) await yieldNow();
    }
    let last = '';
    for (const id of this.store.entityIds(COMMENT)) {
      const change = id.slice(0, id.indexOf('.') >>> 0);
      if (change !== last) lists.applyComment((last = change));
      if (due()) await yieldNow();
    }
    lists.bulk = false;
    lists.compact();
  }

  /** The lists, built when they are not; concurrent callers await the same build. */
  ready(): Promise<void> {
    if (this.built) return Promise.resolve();
    this.building ??= this.build().then(
      () => {
        this.built = true;
        this.building = null;
        this.origin = 'build';
        // The next checkpoint holds the lists, so the next open need not build them.
        this.store.checkpointIncomplete();
      },
      (err: unknown) => { this.building = null; throw err; },
    );
    return this.building;
  }

  /** Keys, entries and bytes held by the lists (memory figures in the bench). */
  size(): { keys: number; entries: number; bytes: number } {
    return this.lists.size();
  }

  /** One page of the changes matching `q`, newest first (cursor key: the change sequence). */
  async search(q: SearchQuery, req: PageRequest): Promise<Page<ChangeRecord>> {
    await this.ready();
    const L = this.lists.lists;
    const lists: ArrayLike<number>[] = [];
    for (const w of q.words) lists.push(L.words.get(w));
    if (q.line !== null) lists.push(L.lines.get(q.line));
    if (q.owner !== null) lists.push(L.owners.get(q.owner));
    if (q.reviewer !== null) lists.push(L.reviewers.get(q.reviewer));
    if (q.file !== null) {
      // Three segments or more: the three-segment list, with the changes it cannot name.
      const third = thirdPrefixOf(q.file);
      lists.push(third === null
        ? union(L.prefixes.get(lookupPrefix(q.file)), L.wide.get(''))
        : union(union(L.files.get(fileBucket(third)), L.deep.get('')), L.wide.get('')));
    }
    if (q.unresolved) lists.push(L.commented.get(''));
    const people = this.book.people;
    if (q.cc !== null) lists.push(people.ccOf(q.cc));
    if (q.topic !== null) lists.push(people.withTopic(q.topic));
    if (q.wip) lists.push(people.wipChanges());
    const index = this.book.index;
    const statusOk = (seq: number) => index.changeHasStatus(seq, q.status ?? undefined) && (!q.open || OPEN_CHANGE_CODES.includes(changeCode(index.changeStatusOf(seq))));
    const after = req.after === null ? null : (req.after as number);
    // Candidates newest first, after the cursor.
    let candidates: Iterable<number>;
    if (lists.length > 0) {
      const hits = intersect(lists);
      candidates = (function* () {
        let i = hits.length - 1;
        if (after !== null) {
          i = lowerBound(hits, after, 0, hits.length) - 1;
        }
        for (; i >= 0; i--) yield hits[i];
      })();
    } else {
      const top = after === null ? index.changeCount : Math.min(after - 1, index.changeCount);
      candidates = (function* () { for (let s = top; s > 0; s--) yield s; })();
    }
    const rows: ChangeRecord[] = [];
    let checks = 0;
    let lastKey = 0;
    // The walk yields to the event loop every `searchPaging.sliceMs` of work: a page over wide
    // patchsets reads up to MAX_CHECKS records of up to 1,000 paths each (seconds of work), and
    // the server answers other requests meanwhile. Nothing is held across a yield but the
    // candidates (sequences, a copy or a view of a flat array no compaction writes to); each
    // record and status byte is read when its candidate is reached, as without the yields.
    let sliceStart = performance.now();
    for (const seq of candidates) {
      if (performance.now() - sliceStart >= searchPaging.sliceMs) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (searchPaging.pause) await searchPaging.pause();
        sliceStart = performance.now();
      }
      if (!index.hasChange(seq) || !statusOk(seq)) { lastKey = seq; continue; }
      if (rows.length === req.limit) return { rows, next_cursor: encodeCursor(req.scope, lastKey) };
      if (checks >= MAX_CHECKS) return { rows, next_cursor: encodeCursor(req.scope, lastKey) };
      const change = this.store.entity<ChangeRecord>(CHANGE, changeId(seq));
      checks++;
      lastKey = seq;
      if (!change || !this.matches(change, q, () => checks++)) continue;
      rows.push(change);
    }
    return { rows, next_cursor: null };
  }

  /**
   * The people a query names that no change names in that role (owner:, reviewer:, cc:): said
   * in the answer's `notes`, so an empty result is not taken for "none of theirs matched".
   */
  async unknownPeople(q: SearchQuery): Promise<string[]> {
    await this.ready();
    const L = this.lists.lists;
    const notes: string[] = [];
    if (q.owner !== null && L.owners.get(q.owner).length === 0) notes.push(`no one named ${JSON.stringify(q.owner)} owns a change in this repository`);
    if (q.reviewer !== null && L.reviewers.get(q.reviewer).length === 0) notes.push(`no one named ${JSON.stringify(q.reviewer)} was asked to review or reviewed a change in this repository`);
    if (q.cc !== null && this.book.people.ccOf(q.cc).length === 0) notes.push(`no one named ${JSON.stringify(q.cc)} is copied on a change in this repository`);
    return notes;
  }

  /** What the lists only approximate, checked against the records. */
  private matches(c: ChangeRecord, q: SearchQuery, read: () => void): boolean {
    if (q.file !== null) {
      if (c.current_patchset_id === null) return false;
      read();
      const ps = this.store.entity<PatchsetRecord>(PATCHSET, c.current_patchset_id);
      const want = q.file;
      if (!ps || !ps.diff.files.some((f) => f.path === want || f.path.startsWith(`${want}/`))) return false;
    }
    if (q.unresolved) {
      read();
      if (this.book.unresolvedCount(c.change_id) === 0) return false;
    }
    return true;
  }
}
