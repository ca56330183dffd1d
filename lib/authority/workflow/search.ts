// Change search (docs/api.md "Searching changes"): `GET changes?q=` answered from posting lists
// (sorted change sequences) instead of a scan of the change records. Kept per repository in
// memory only, never on disk: built from the records on the first search after open (one pass
// over the change, patchset, review and comment records, in slices that yield to the event
// loop), then kept current from every committed upsert of those types. Lists:
//   - title words (lib/domain/workflow/search-query.ts `titleWords`) → changes;
//   - base line → changes; owner → changes; reviewer (requested person or group, or who wrote a
//     review) → changes;
//   - path prefixes of one and two segments (`lib`, `lib/http`) of the files any patchset of a
//     change touched (the ≤ 1,000 paths each patchset records), at most 64 per patchset; a
//     patchset with more goes on an "every prefix" list instead;
//   - changes with comments (is:unresolved's candidates).
// A query intersects its lists, smallest first, walks the result newest first from the cursor
// and checks what a list can only approximate against the records (a file among the current
// patchset's paths; unresolved threads in the change's thread summary; the status byte of the
// workflow indexes). A query without a list term (status:, is:open alone) walks the status
// bytes of every change, as `?status=` does. Each page reads at most MAX_CHECKS records; past
// that it ends early with a cursor (a page may hold fewer rows than the limit while more follow).
import { encodeCursor, type Page, type PageRequest } from '../../domain/paging.js';
import { COMMENT } from '../../domain/workflow/comment-rules.js';
import { OPEN_CHANGE_CODES, changeCode, grow } from '../../domain/workflow/indexes.js';
import { REVIEW, type ReviewRecord } from '../../domain/workflow/review-rules.js';
import { CHANGE, changeId, PATCHSET, type ChangeRecord, type PatchsetRecord } from '../../domain/workflow/rules.js';
import { titleWords, type SearchQuery } from '../../domain/workflow/search-query.js';
import type { ContentStore } from '../../store/content-store.js';
import type { WorkflowIndexes } from '../../domain/workflow/indexes.js';

/** Records a page reads to check candidates before it ends early. */
export const MAX_CHECKS = 5_000;
/** Pacing of the lists' build: work per slice between yields; tests pause it between slices. */
export const searchBuild: { sliceMs: number; pause: (() => Promise<void>) | null } = { sliceMs: 20, pause: null };
/** Path prefixes indexed per patchset; past it the change goes on the "every prefix" list. */
const MAX_PREFIXES = 64;

/** What search needs of the workflow book (./book.ts). */
export interface SearchView {
  readonly index: WorkflowIndexes;
  /** Published threads of the change still unresolved. */
  unresolvedCount(changeIdValue: string): number;
}

const seqOf = (id: string): number => {
  const m = /^change-([1-9][0-9]{0,9})(?:\.|$)/.exec(id);
  return m ? Number(m[1]) : 0;
};

/** Add `seq` to an ascending list, once. */
function addSorted(list: number[], seq: number): void {
  const n = list.length;
  if (n === 0 || list[n - 1] < seq) { list.push(seq); return; }
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid] < seq) lo = mid + 1;
    else hi = mid;
  }
  if (list[lo] !== seq) list.splice(lo, 0, seq);
}

/** The ascending intersection of ascending lists (smallest first, each step a merge or binary-search walk). */
function intersect(lists: readonly (readonly number[])[]): readonly number[] {
  const sorted = [...lists].sort((a, b) => a.length - b.length);
  let acc: readonly number[] = sorted[0];
  for (let i = 1; i < sorted.length && acc.length > 0; i++) {
    const other = sorted[i];
    const out: number[] = [];
    let j = 0;
    for (const x of acc) {
      // Gallop: the other list is at least as long.
      let step = 1;
      while (j + step < other.length && other[j + step] < x) step *= 2;
      let lo = j;
      let hi = Math.min(j + step, other.length);
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (other[mid] < x) lo = mid + 1;
        else hi = mid;
      }
      j = lo;
      if (j < other.length && other[j] === x) out.push(x);
    }
    acc = out;
  }
  return acc;
}

/** The ascending union of two ascending lists. */
function union(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = j >= b.length || (i < a.length && a[i] <= b[j]) ? a[i++] : b[j++];
    if (out.length === 0 || out[out.length - 1] !== x) out.push(x);
  }
  return out;
}

/** Path prefixes of one and two segments of `path` (a file at the top gives itself). */
function prefixesOf(path: string): string[] {
  const parts = path.split('/');
  return parts.length === 1 ? [parts[0]] : [parts[0], `${parts[0]}/${parts[1]}`];
}

/** The indexed prefix a `file:` value looks up: its first two segments at most. */
const lookupPrefix = (file: string): string => prefixesOf(file).at(-1)!;

export class ChangeSearch {
  private built = false;
  /** The build under way (the hooks apply from its start). */
  private building: Promise<void> | null = null;
  private readonly words = new Map<string, number[]>();
  private readonly lines = new Map<string, number[]>();
  private readonly owners = new Map<string, number[]>();
  private readonly reviewers = new Map<string, number[]>();
  private readonly prefixes = new Map<string, number[]>();
  /** Changes with a patchset of more paths or prefixes than the prefix lists keep. */
  private readonly wide: number[] = [];
  private readonly commented: number[] = [];
  /** Changes whose title and line are indexed (titles and lines never change after create). */
  private indexedChanges = new Uint8Array(1024);

  constructor(private readonly store: ContentStore, private readonly book: SearchView) {
    store.onUpsert(CHANGE, (_id, body) => { if (this.live) this.addChange(body as ChangeRecord); });
    store.onUpsert(PATCHSET, (_id, body) => { if (this.live) this.addPatchset(body as PatchsetRecord); });
    store.onUpsert(REVIEW, (_id, body) => { if (this.live) this.addReview(body as ReviewRecord); });
    store.onUpsert(COMMENT, (id) => { if (this.live) this.addCommented(seqOf(id)); });
  }

  /** Whether commits reach the lists: once a build has started. */
  private get live(): boolean { return this.built || this.building !== null; }

  private add(map: Map<string, number[]>, key: string, seq: number): void {
    let list = map.get(key);
    if (!list) map.set(key, (list = []));
    addSorted(list, seq);
  }

  private addChange(c: ChangeRecord): void {
    const seq = c.sequence;
    const owner = (c as { owner?: unknown }).owner;
    if (typeof owner === 'string') this.add(this.owners, owner, seq);
    const reviewers = (c as { reviewers?: unknown }).reviewers;
    if (Array.isArray(reviewers)) {
      for (const r of reviewers) {
        const name = typeof r === 'string' ? r : r && typeof r === 'object' && typeof (r as { name?: unknown }).name === 'string' ? (r as { name: string }).name : null;
        if (name !== null) this.add(this.reviewers, name, seq);
      }
    }
    if (seq < this.indexedChanges.length && this.indexedChanges[seq]) return;
    this.indexedChanges = grow(this.indexedChanges, seq, (n) => new Uint8Array(n));
    this.indexedChanges[seq] = 1;
    for (const w of titleWords(c.title)) this.add(this.words, w, seq);
    this.add(this.lines, c.base_line, seq);
  }

  private addPatchset(p: PatchsetRecord): void {
    const seq = seqOf(p.change_id);
    if (!seq) return;
    const set = new Set<string>();
    for (const f of p.diff?.files ?? []) for (const x of prefixesOf(f.path)) set.add(x);
    if (set.size > MAX_PREFIXES || p.diff?.files_truncated) { addSorted(this.wide, seq); return; }
    for (const x of set) this.add(this.prefixes, x, seq);
  }

  private addReview(r: ReviewRecord): void {
    const seq = seqOf(r.change_id);
    if (!seq) return;
    if (r.action !== 'request' && typeof r.reviewer === 'string') this.add(this.reviewers, r.reviewer, seq);
    if (typeof r.reviewer_group === 'string') this.add(this.reviewers, r.reviewer_group, seq);
    const persons = (r as { reviewers?: unknown }).reviewers;
    if (Array.isArray(persons)) for (const p of persons) if (typeof p === 'string') this.add(this.reviewers, p, seq);
  }

  private addCommented(seq: number): void {
    if (seq) addSorted(this.commented, seq);
  }

  /**
   * Build every list from the records (the first search after open) in slices of about
   * `searchBuild.sliceMs` of work, yielding to the event loop between them so other requests
   * are answered meanwhile. Every list only ever gains entries, so the order of the build's
   * reads and the upsert hooks does not matter: a record committed during the build reaches
   * the lists through its hook (they apply from the build's start), whether or not the build
   * also reads it. Nothing is held across a yield but ids: each record is looked up by its
   * location at the time of reading (a compaction may move records meanwhile).
   */
  private async build(): Promise<void> {
    let start = performance.now();
    const due = () => performance.now() - start >= searchBuild.sliceMs;
    const yieldNow = async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (searchBuild.pause) await searchBuild.pause();
      start = performance.now();
    };
    // Each change's current patchset only (usually in the same record as its change); earlier
    // patchsets' paths no longer decide a match. Changes created after `top` come by the hooks.
    const top = this.book.index.changeCount;
    for (let seq = 1; seq <= top; seq++) {
      const c = this.store.scanEntity<ChangeRecord>(CHANGE, changeId(seq));
      if (c) {
        this.addChange(c);
        if (c.current_patchset_id !== null) {
          const p = this.store.scanEntity<PatchsetRecord>(PATCHSET, c.current_patchset_id);
          if (p) this.addPatchset(p);
        }
      }
      if (due()) await yieldNow();
    }
    // Ids only are held across yields (the location map iterates live).
    for (const id of this.store.entityIds(REVIEW)) {
      const r = this.store.scanEntity<ReviewRecord>(REVIEW, id);
      if (r) this.addReview(r);
      if (due()) await yieldNow();
    }
    let last = 0;
    for (const id of this.store.entityIds(COMMENT)) {
      const seq = seqOf(id);
      if (seq !== last) this.addCommented((last = seq));
      if (due()) await yieldNow();
    }
  }

  /** The lists, built when they are not; concurrent callers await the same build. */
  ready(): Promise<void> {
    if (this.built) return Promise.resolve();
    this.building ??= this.build().then(
      () => { this.built = true; this.building = null; },
      (err: unknown) => { this.building = null; throw err; },
    );
    return this.building;
  }

  /** Entries held by the lists (memory figures in the bench). */
  size(): { keys: number; entries: number } {
    let keys = 0;
    let entries = this.wide.length + this.commented.length;
    for (const m of [this.words, this.lines, this.owners, this.reviewers, this.prefixes]) {
      keys += m.size;
      for (const l of m.values()) entries += l.length;
    }
    return { keys, entries };
  }

  /** One page of the changes matching `q`, newest first (cursor key: the change sequence). */
  async search(q: SearchQuery, req: PageRequest): Promise<Page<ChangeRecord>> {
    await this.ready();
    const lists: (readonly number[])[] = [];
    const none: readonly number[] = [];
    for (const w of q.words) lists.push(this.words.get(w) ?? none);
    if (q.line !== null) lists.push(this.lines.get(q.line) ?? none);
    if (q.owner !== null) lists.push(this.owners.get(q.owner) ?? none);
    if (q.reviewer !== null) lists.push(this.reviewers.get(q.reviewer) ?? none);
    if (q.file !== null) lists.push(union(this.prefixes.get(lookupPrefix(q.file)) ?? none, this.wide));
    if (q.unresolved) lists.push(this.commented);
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
          let lo = 0;
          let hi = hits.length;
          while (lo < hi) {
            const mid = (lo + hi) >>> 1;
            if (hits[mid] < after) lo = mid + 1;
            else hi = mid;
          }
          i = lo - 1;
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
    for (const seq of candidates) {
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
