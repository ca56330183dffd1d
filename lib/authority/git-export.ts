// The export of lines as git commits into the authority's shadow bare repository (docs/git.md,
// "Export"; storage-layout.md §19). Every commit is built from stored data only — the snapshot's
// tree, the git map, the land, change and patchset records — never from the clock, git config or
// a signature, so exporting twice, or rebuilding a deleted shadow, writes the same commit ids.
// Node only: objects are written as git packs (lib/authority/git-pack-writer.ts), refs as files.
// git runs only for the background maintenance that keeps the number of packs bounded.
import { execFile, type ChildProcess } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import path from 'node:path';
import { Mutex, Semaphore } from 'async-mutex';
import { Conflict, Corrupt, Invalid, NotFound } from '../domain/errors.js';
import {
  authorIdent,
  CAIRN_IDENT,
  encodeCommit,
  exportedCommitId,
  GIT_COMMIT,
  GIT_COMMIT_ID,
  GIT_TAG,
  gitRefProblem,
  patchsetRefName,
  parseCommit,
  rawHeader,
  withTrailers,
  type GitCommitIdRecord,
  type GitCommitRecord,
  type GitTagRecord,
} from '../domain/git.js';
import { gitId, type GitObjectType } from '../domain/git-objects.js';
import { validateLineName } from '../domain/lines.js';
import { CHANGE, PATCHSET, patchsetId, type ChangeRecord, type PatchsetRecord } from '../domain/workflow/rules.js';
import { liveVotes } from '../domain/workflow/review-rules.js';
import { crashPoint } from '../store/crash-point.js';
import { writeFileDurable } from '../store/durable.js';
import { GitShadowLayout } from '../store/layout.js';
import type { Authority } from './authority.js';
import type { Log } from './logger.js';
import { GitPackWriter } from './git-pack-writer.js';
import { GitTreeBuilder } from './git-trees.js';

/** Commits recorded in the git map per transaction (a pack past its bound is finished after one); CAIRN_GIT_EXPORT_BATCH changes it. */
export const EXPORT_BATCH = 200;
const batchSize = () => Math.max(1, Number(process.env.CAIRN_GIT_EXPORT_BATCH) || EXPORT_BATCH);
/** Entries in each of the tree builder's caches (cairn → git blob and tree ids). */
const BUILDER_CACHE = 100_000;

/**
 * What a sync reports to `GitExporter.syncHook` (tests): asked for, started (it holds the
 * exporter: one sync at a time), finished with what it wrote. `background`: the server's own
 * export of a moved line, not a request's.
 */
export type SyncEvent =
  | { stage: 'requested' | 'started'; line: string; background: boolean }
  | { stage: 'finished'; line: string; background: boolean; written: number };

export interface LineExport {
  line: string;
  head_commit_id: string | null;
  /** Commits written to the shadow by this sync (0: it already held the line's history). */
  written: number;
}

/** A moved line is exported this long after its move (moves close together: one export). */
const REFRESH_DELAY_MS = 200;

const positive = (value: string | undefined, fallback: number): number => (Number(value) >= 1 ? Math.floor(Number(value)) : fallback);
/**
 * A pack being written is finished (and the branch moved to the last commit in it) once it holds
 * this many objects (CAIRN_GIT_EXPORT_PACK_OBJECTS) or bytes: the bound on an export's memory
 * (the pack's index entries) and on the work a crash loses.
 */
const packObjects = (): number => positive(process.env.CAIRN_GIT_EXPORT_PACK_OBJECTS, 100_000);
const PACK_BYTES = 1024 ** 3;
/**
 * Past either bound, the shadow is repacked in the background after an export (docs/git.md "The
 * shadow repository"): more packs than CAIRN_GIT_SHADOW_MAX_PACKS, more loose objects than
 * CAIRN_GIT_SHADOW_MAX_LOOSE (left by an older cairn; exports write none).
 */
const maxPacks = (): number => positive(process.env.CAIRN_GIT_SHADOW_MAX_PACKS, 8);
const maxLoose = (): number => positive(process.env.CAIRN_GIT_SHADOW_MAX_LOOSE, 64);
/** One repack at a time in the whole server, whatever the number of repositories: each is a git pack-objects. */
const REPACKS = new Semaphore(1);
/** One background export at a time in the whole server (GitExporter.watch). */
const BACKGROUND_EXPORTS = new Semaphore(1);
/** An export gives the event loop a turn after this much work, so requests are answered meanwhile. */
const TURN_MS = 20;

/** The version-2 .idx files of a pack directory (git's Documentation/gitformat-pack.txt). */
async function readPackIndexes(dir: string): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (const f of await fsp.readdir(dir).catch(() => [] as string[])) {
    if (!f.endsWith('.idx')) continue;
    // A repack may remove it meanwhile: its objects are then in the pack that replaced it.
    const idx = await fsp.readFile(path.join(dir, f)).catch(() => null);
    if (idx && idx.length >= 8 + 256 * 4 && idx.readUInt32BE(0) === 0xff744f63 && idx.readUInt32BE(4) === 2) out.push(idx);
  }
  return out;
}

/** Binary search of a 20-byte object name in a version-2 .idx (fan-out table, then sorted names). */
function packIndexHas(idx: Buffer, name: Buffer): boolean {
  const fanout = (i: number) => (i < 0 ? 0 : idx.readUInt32BE(8 + i * 4));
  let lo = fanout(name[0] - 1);
  let hi = fanout(name[0]);
  const names = 8 + 256 * 4;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = idx.compare(name, 0, 20, names + mid * 20, names + mid * 20 + 20);
    if (c === 0) return true;
    // c < 0: the name at mid sorts before the one sought.
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

/** What one sync learned of side commits (keepSides). */
interface SideWalk {
  /** Snapshots given a new commit by this sync and not recorded yet. */
  fresh: Set<string>;
  /** commit id → written as it was (true) or not (false), in this sync. */
  decided: Map<string, boolean>;
  /** Side commits this sync wrote. */
  written: number;
}

const exists = (file: string) => fsp.stat(file).then(() => true, () => false);

/** Whether a git objects directory has any loose object (a two-hex-digit directory). */
async function hasLooseObjects(objectsDir: string): Promise<boolean> {
  return (await fsp.readdir(objectsDir).catch(() => [] as string[])).some((d) => /^[0-9a-f]{2}$/.test(d));
}

export class GitExporter {
  private readonly layout: GitShadowLayout;
  /** One sync at a time: syncs of different lines share objects and the map's records. */
  private readonly mutex = new Mutex();
  private builder: GitTreeBuilder | null = null;
  /** The object names of the shadow's packs (their .idx files), read when first needed after a change. */
  private packs: Buffer[] | null = null;
  /** Whether objects/ holds loose objects (an older cairn wrote them); null: not looked yet. */
  private loose: boolean | null = null;
  /** The pack this sync is writing; its objects are not in the repository until it is finished. */
  private pack: GitPackWriter | null = null;
  /** The background repack (runMaintenance), while one is scheduled or running. */
  private maintaining: Promise<void> | null = null;
  private maintainAgain = false;
  private repacking: ChildProcess | null = null;
  private stopped = false;
  /** Test-only: told of every sync; a rejection of 'started' fails the sync, its wait holds the exporter. */
  syncHook: ((event: SyncEvent) => void | Promise<void>) | null = null;

  constructor(root: string, readonly authority: Authority, private readonly log?: Log) {
    this.layout = new GitShadowLayout(root);
  }

  get root(): string {
    return this.layout.root;
  }

  private unwatch: (() => void) | null = null;
  private readonly due = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  /** The background export under way (refresh), while one runs: lines that move meanwhile wait for the next. */
  private refreshing: Promise<void> | null = null;

  /**
   * Follow the repository's lines: when a line moves (or is made) that has a branch in the
   * shadow (exported or served before), or whose new head came from git (an import, a push: the
   * eager export, unless CAIRN_GIT_EAGER_EXPORT=0), export it in the background shortly after
   * (moves close together are one export; one background export at a time in the server), so a
   * clone or fetch finds it ready, or waits for the export under way instead of starting its
   * own. Failures are logged; the next git request exports anyway.
   */
  watch(active: () => boolean): void {
    this.stopped = false;
    if (this.unwatch) return;
    this.unwatch = this.authority.store.onEvents((events) => {
      for (const e of events) {
        if ((e.type === 'line.moved' || e.type === 'line.created') && typeof e.data.line === 'string') this.due.add(e.data.line);
      }
      if (this.due.size) this.kick(active);
    });
  }

  /** Start a background export REFRESH_DELAY_MS from now, unless one is due or running (it looks again when it ends). */
  private kick(active: () => boolean): void {
    if (this.timer || this.refreshing || !this.unwatch) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.refreshing = this.refresh(active).finally(() => {
        this.refreshing = null;
        if (this.due.size) this.kick(active);
      });
    }, REFRESH_DELAY_MS);
  }

  /** Stop following the lines, and stop a running repack (git leaves the repository as it was) and a background export (at its next commit). */
  stop(): void {
    this.stopped = true;
    this.repacking?.kill('SIGTERM');
    this.unwatch?.();
    this.unwatch = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.due.clear();
  }

  /** Resolves once no background export is due or running (tests, benchmarks). */
  async refreshIdle(): Promise<void> {
    while (this.refreshing || this.timer) await (this.refreshing ?? new Promise((resolve) => setTimeout(resolve, REFRESH_DELAY_MS)));
  }

  private async refresh(active: () => boolean): Promise<void> {
    // One background export at a time in the whole server (as repacks): each is a pass over a
    // line's new history. A request's export does not wait for this, only for its own repository's.
    await BACKGROUND_EXPORTS.runExclusive(async () => {
      const lines = [...this.due];
      this.due.clear();
      for (const line of lines) {
        if (!this.unwatch || !active()) return;
        if (!(await this.follows(line))) continue;
        try {
          await this.syncLine(line, true);
        } catch (err) {
          if (!this.stopped) this.log?.warn({ shadow: this.root, line, error: (err as Error).message }, 'background export of a line failed; the next git request exports it');
        }
      }
    });
  }

  /** Whether a moved line is exported in the background: it has a branch in the shadow, or its head came from git. */
  private async follows(name: string): Promise<boolean> {
    const store = this.authority.store;
    const line = store.line(name);
    if (!line || line.status === 'archived' || gitRefProblem(name)) return false;
    if (await exists(this.layout.branchRef(name))) return true;
    if (process.env.CAIRN_GIT_EAGER_EXPORT === '0' || line.head_snapshot_id === null) return false;
    return store.entity<GitCommitRecord>(GIT_COMMIT, line.head_snapshot_id) !== undefined;
  }

  /** Bring `refs/heads/<line>` of the shadow up to the line's head. `background`: the server's own export of a moved line. */
  syncLine(name: string, background = false): Promise<LineExport> {
    validateLineName(name);
    const problem = gitRefProblem(name);
    if (problem) throw new Invalid(`line ${name} cannot be a git branch name: ${problem}`);
    const line = this.authority.store.line(name);
    if (!line) throw new NotFound(`line ${name} does not exist`);
    if (line.status === 'archived') throw new Conflict(`line ${name} is archived; an archived line is not exported`);
    void this.syncHook?.({ stage: 'requested', line: name, background });
    return this.mutex.runExclusive(async () => {
      await this.syncHook?.({ stage: 'started', line: name, background });
      const done = await this.sync(name);
      void this.syncHook?.({ stage: 'finished', line: name, background, written: done.written });
      return done;
    });
  }

  /**
   * Every live line's branch up to date, and no branch left for a line gone or archived: the
   * repository's URL serves refs/heads/ as its lines (docs/git.md "Clone and fetch"). A line git
   * cannot name as a branch, or whose branch clashes with another's ("a" and "a/b"), is left
   * out, with a warning in the log.
   */
  async syncAllLines(): Promise<void> {
    const live = new Set<string>();
    for (const line of this.authority.store.lines()) {
      if (line.status === 'archived' || gitRefProblem(line.name)) continue;
      try {
        await this.syncLine(line.name);
        live.add(line.name);
      } catch (err) {
        if (!(err instanceof Conflict) && !(err instanceof NotFound)) throw err;
        this.log?.warn({ shadow: this.root, line: line.name, error: (err as Error).message }, 'a line is left out of the repository served over git');
      }
    }
    await this.mutex.runExclusive(async () => {
      const walk = async (dir: string, prefix: string): Promise<void> => {
        for (const entry of await fsp.readdir(dir, { withFileTypes: true }).catch(() => [])) {
          const name = `${prefix}${entry.name}`;
          if (entry.isDirectory()) await walk(path.join(dir, entry.name), `${name}/`);
          else if (!live.has(name)) await fsp.rm(path.join(dir, entry.name), { force: true });
        }
      };
      await walk(this.layout.headsDir, '');
    });
  }

  /** Patchsets whose ref the shadow holds (a patchset never changes: its ref never moves). */
  private readonly patchsetRefs = new Set<string>();

  /**
   * Give every patchset of the repository its fetchable ref, `refs/changes/<nn>/<change>/<ps>`
   * (docs/git.md "Fetch a patchset"), derived from the patchset records when a git request
   * comes, whoever made the patchset: a push, applied suggestions, a rebase. A pushed patchset's
   * ref names the pushed commit as it was (rewritten only as an export would: a tree git would
   * read otherwise, a parent the shadow lacks); one made by the server gets a commit built from
   * stored data alone (patchsetCommit). Resolves to the number of refs written.
   */
  syncPatchsets(): Promise<number> {
    return this.mutex.runExclusive(async () => {
      const store = this.authority.store;
      await this.ensureRepository();
      const todo: { id: string; file: string; commit: string }[] = [];
      try {
        for (const id of store.entityIds(PATCHSET)) {
          if (this.patchsetRefs.has(id)) continue;
          const ps = store.entity<PatchsetRecord>(PATCHSET, id);
          const change = ps ? store.entity<ChangeRecord>(CHANGE, ps.change_id) : undefined;
          if (!ps || !change) continue;
          const file = this.layout.changesRef(patchsetRefName(change.sequence, ps.patchset_number));
          if (await exists(file)) {
            this.patchsetRefs.add(id);
            continue;
          }
          todo.push({ id, file, commit: await this.patchsetCommit(ps, change) });
        }
        await this.finishPack();
      } catch (err) {
        await this.dropPack();
        throw err;
      }
      // Each ref only once its commit is in a finished pack.
      for (const t of todo) {
        await fsp.mkdir(path.dirname(t.file), { recursive: true });
        await writeFileDurable(t.file, `${t.commit}\n`);
        this.patchsetRefs.add(t.id);
      }
      return todo.length;
    });
  }

  /** Tags whose ref the shadow holds (a tag is read-only: its ref never moves). */
  private readonly tagRefs = new Set<string>();

  /**
   * Give every imported tag its ref, `refs/tags/<name>` (docs/git.md "Import every branch and
   * tag"): a lightweight tag names its commit as exported; an annotated one its tag object, as
   * imported when the export kept the commit's id, else the same object naming the exported
   * commit (a signature over the old id no longer verifies). Resolves to the refs written.
   */
  syncTags(): Promise<number> {
    return this.mutex.runExclusive(async () => {
      const store = this.authority.store;
      await this.ensureRepository();
      const todo: { name: string; file: string; target: string }[] = [];
      try {
        for (const name of store.entityIds(GIT_TAG)) {
          if (this.tagRefs.has(name)) continue;
          const tag = store.entity<GitTagRecord>(GIT_TAG, name);
          if (!tag) continue;
          const file = this.layout.tagRef(name);
          if (await exists(file)) {
            this.tagRefs.add(name);
            continue;
          }
          const commit = (await this.heldCommitOf(tag.snapshot_id)) ?? (await this.exportHistory(tag.snapshot_id, `tag ${name}`, async () => undefined)).commit;
          let target = commit;
          if (tag.raw !== null) {
            let raw = Buffer.from(tag.raw, 'base64');
            if (commit !== tag.commit_id) raw = Buffer.concat([Buffer.from(`object ${commit}`, 'latin1'), raw.subarray(`object ${tag.commit_id}`.length)]);
            target = gitId('tag', raw);
            await this.writeObject('tag', target, raw);
          }
          todo.push({ name, file, target });
        }
        await this.finishPack();
      } catch (err) {
        await this.dropPack();
        throw err;
      }
      for (const t of todo) {
        try {
          await fsp.mkdir(path.dirname(t.file), { recursive: true });
          await writeFileDurable(t.file, `${t.target}\n`);
          this.tagRefs.add(t.name);
        } catch (err) {
          // "v1" and "v1/rc" cannot both be refs: the one recorded later is left out.
          const code = (err as NodeJS.ErrnoException).code;
          if (code !== 'EISDIR' && code !== 'ENOTDIR' && code !== 'EEXIST') throw err;
          this.log?.warn({ shadow: this.root, tag: t.name }, 'a tag clashes with another tag\'s name and is not served');
        }
      }
      return todo.length;
    });
  }

  /** The commit of a snapshot the shadow holds already (its map record's), else null. */
  private async heldCommitOf(snapshotId: string): Promise<string | null> {
    const rec = this.authority.store.entity<GitCommitRecord>(GIT_COMMIT, snapshotId);
    return rec && (await this.holds(exportedCommitId(rec))) ? exportedCommitId(rec) : null;
  }

  /** The commit of patchset `ps`, its objects written (in the pack being written). */
  private async patchsetCommit(ps: PatchsetRecord, change: ChangeRecord): Promise<string> {
    const store = this.authority.store;
    const held = await this.heldCommitOf(ps.revision_snapshot_id);
    if (held !== null) return held;
    // Its parent: the base's commit (the base is on the target line, exported with it).
    const base = (await this.heldCommitOf(ps.base_snapshot_id)) ?? (await this.exportHistory(ps.base_snapshot_id, `${ps.patchset_id}'s base`, async () => undefined)).commit;
    const builder = this.treeBuilder();
    const snap = store.snapshot(ps.revision_snapshot_id);
    if (!snap) throw new Corrupt(`snapshot ${ps.revision_snapshot_id} of ${ps.patchset_id} is not stored`);
    const rec = store.entity<GitCommitRecord>(GIT_COMMIT, ps.revision_snapshot_id);
    const tree = await builder.treeOf(snap.root_tree_id, rec?.gitlinks ?? []);
    let raw: Buffer;
    if (rec && rec.origin !== 'exported') {
      // Pushed (or imported): as it was when git reads the same tree and the shadow holds its parents.
      const original = Buffer.from(rec.raw, 'base64');
      const c = parseCommit(original);
      let kept = c.tree_id === tree;
      for (const p of c.parent_ids) kept = kept && (await this.holds(p));
      if (!kept && c.tree_id === tree && c.parent_ids[0] === base && c.parent_ids.length > 1) {
        kept = await this.keepSides(c.parent_ids.slice(1), builder, { fresh: new Set(), decided: new Map(), written: 0 });
      }
      raw = kept ? original : encodeCommit({
        tree_id: tree,
        parent_ids: [base],
        author: rawHeader(original, 'author')!,
        committer: rawHeader(original, 'committer')!,
        encoding: c.encoding,
        message: withTrailers(c.message, [`Cairn-Git-Commit: ${rec.commit_id}`, ...(rec.pushed_by ? [`Pushed-by: ${identTrailer(rec.pushed_by)}`] : [])]),
      });
    } else {
      raw = this.serverMadeCommit(ps, change, base, tree);
    }
    const id = gitId('commit', raw);
    await this.writeObject('commit', id, raw);
    return id;
  }

  /**
   * A commit for a patchset the server made (applied suggestions, a rebase): on the base's
   * commit, with the message and author of the newest earlier pushed patchset of the change
   * (its Change-Id with it, so an amend of the fetched commit pushed again updates this change),
   * else the change's title and the patchset's summary. Committed by cairn at the patchset's time.
   */
  private serverMadeCommit(ps: PatchsetRecord, change: ChangeRecord, base: string, tree: string): Buffer {
    const store = this.authority.store;
    const committer = { ...CAIRN_IDENT, time: ps.created_at_s };
    for (let n = ps.patchset_number - 1; n >= 1; n--) {
      const earlier = store.entity<PatchsetRecord>(PATCHSET, patchsetId(change.change_id, n));
      const rec = earlier ? store.entity<GitCommitRecord>(GIT_COMMIT, earlier.revision_snapshot_id) : undefined;
      if (rec?.origin !== 'pushed') continue;
      const original = Buffer.from(rec.raw, 'base64');
      const c = parseCommit(original);
      return encodeCommit({ tree_id: tree, parent_ids: [base], author: rawHeader(original, 'author')!, committer, encoding: c.encoding, message: c.message });
    }
    const title = change.title.trim() || change.change_ref;
    const summary = ps.summary.trim();
    const text = summary === '' || summary === title ? `${title}\n` : `${title}\n\n${summary}\n`;
    return encodeCommit({
      tree_id: tree,
      parent_ids: [base],
      author: { ...authorIdent(ps.author), time: ps.created_at_s },
      committer,
      message: withTrailers(Buffer.from(text, 'utf8'), [`Cairn-Change: ${change.change_ref}`, `Cairn-Patchset: ${ps.patchset_id}`]),
    });
  }

  private async sync(name: string): Promise<LineExport> {
    const store = this.authority.store;
    const head = store.line(name)?.head_snapshot_id ?? null;
    await this.ensureRepository();
    if (head === null) {
      await fsp.rm(this.layout.branchRef(name), { force: true });
      return { line: name, head_commit_id: null, written: 0 };
    }
    const done = await this.exportHistory(head, `line ${name}`, (commit) => this.writeRef(name, commit));
    return { line: name, head_commit_id: done.commit, written: done.written };
  }

  /** The tree builder, kept between exports (see exportHistory). */
  private treeBuilder(): GitTreeBuilder {
    const store = this.authority.store;
    return (this.builder ??= new GitTreeBuilder(
      { readTree: (id) => store.readTree(id), readBlob: (id) => this.readBlob(id) },
      'sha1',
      (type, id, body, where) => this.writeObject(type, id, body, where).then(() => undefined),
      BUILDER_CACHE,
    ));
  }

  /**
   * Write the commits of `head`'s first-parent history the shadow lacks, recording each new one
   * in the git map; `moveRef` (a line's branch) is moved to the last commit of each finished
   * pack. Resolves to `head`'s commit, with every object it reaches in a finished pack.
   */
  private async exportHistory(head: string, what: string, moveRef: (commit: string) => Promise<void>): Promise<{ commit: string; written: number }> {
    const store = this.authority.store;
    // Back along the first parents to the newest snapshot whose commit the shadow holds.
    const chain: string[] = [];
    let parent: string | null = null;
    for (let s: string | null = head; s !== null; ) {
      const rec = store.entity<GitCommitRecord>(GIT_COMMIT, s);
      if (rec && (await this.holds(exportedCommitId(rec)))) {
        parent = exportedCommitId(rec);
        break;
      }
      chain.push(s);
      const snap = store.snapshot(s);
      if (!snap) throw new Corrupt(`snapshot ${s} of ${what} is not stored`);
      s = snap.parent_snapshot_ids[0] ?? null;
    }
    // Kept between exports, so an export of one new commit reads only what it changed: an id
    // it caches is in the shadow or in the pack being written (a failed sync forgets the builder).
    const builder = this.treeBuilder();
    let written = 0;
    const batch = batchSize();
    let sinceFlush = 0;
    let pending: { snapshot_id: string; commit_id: string; raw: string }[] = [];
    /** Snapshots given a new commit by this sync, not recorded yet (the map does not say it yet). */
    const fresh = new Set<string>();
    const side: SideWalk = { fresh, decided: new Map(), written: 0 };
    let packed = false;
    // The map's records first (a record whose commit is not written yet is only the id an export
    // would give it anyway); the branch moves only to a commit whose pack is finished.
    const flush = async (last: boolean) => {
      if (pending.length > 0) await this.authority.content.recordGitExports(pending);
      pending = [];
      fresh.clear();
      sinceFlush = 0;
      crashPoint('git-export:recorded');
      if (this.pack && (last || this.pack.count >= packObjects() || this.pack.bytes >= PACK_BYTES)) packed = (await this.finishPack()) || packed;
      if (parent !== null && this.pack === null) await moveRef(parent);
    };
    try {
      let turn = performance.now();
      for (let i = chain.length - 1; i >= 0; i--) {
        if (performance.now() - turn >= TURN_MS) {
          await nextTurn();
          turn = performance.now();
          if (this.stopped) throw new Error('the export stopped: the repository is closing');
        }
        const id = chain[i];
        const { raw, record } = await this.commitFor(id, parent, builder, side);
        const commitId = gitId('commit', raw);
        if (await this.writeObject('commit', commitId, raw)) written++;
        if (record) {
          pending.push({ snapshot_id: id, commit_id: commitId, raw: raw.toString('base64') });
          fresh.add(id);
        }
        parent = commitId;
        if (++sinceFlush >= batch) await flush(false);
      }
      await flush(true);
    } catch (err) {
      await this.dropPack();
      throw err;
    }
    written += side.written;
    if (packed || this.loose !== false) this.scheduleMaintenance();
    return { commit: parent!, written };
  }

  /** Finish the pack being written into the shadow; true when it held anything. */
  private async finishPack(): Promise<boolean> {
    const pack = this.pack;
    if (!pack) return false;
    this.pack = null;
    let done: { idx: Buffer } | null;
    try {
      done = await pack.finish(this.layout);
    } catch (err) {
      this.builder = null;
      throw err;
    }
    if (done && this.packs) this.packs.push(done.idx);
    return done !== null;
  }

  /** A failed sync: the pack it was writing goes, and so does what the builder learnt from it. */
  private async dropPack(): Promise<void> {
    const pack = this.pack;
    this.pack = null;
    this.builder = null;
    await pack?.abort();
  }

  /** The shadow holds object `id`: in the pack being written, in one of its packs, or as a loose object. */
  private async holds(id: string): Promise<boolean> {
    if (this.pack?.has(id)) return true;
    this.packs ??= await readPackIndexes(this.layout.packDir);
    const name = Buffer.from(id, 'hex');
    if (this.packs.some((idx) => packIndexHas(idx, name))) return true;
    this.loose ??= await hasLooseObjects(this.layout.objectsDir);
    return this.loose && (await exists(this.layout.objectFile(id)));
  }

  /** Objects the repack looks at: loose ones, and packs (with their index). */
  private async objectCounts(): Promise<{ loose: number; packs: number }> {
    let loose = 0;
    for (const d of await fsp.readdir(this.layout.objectsDir).catch(() => [] as string[])) {
      if (/^[0-9a-f]{2}$/.test(d)) loose += (await fsp.readdir(path.join(this.layout.objectsDir, d)).catch(() => [])).length;
    }
    const files = new Set(await fsp.readdir(this.layout.packDir).catch(() => [] as string[]));
    const packs = [...files].filter((f) => f.endsWith('.idx') && files.has(`${f.slice(0, -4)}.pack`)).length;
    return { loose, packs };
  }

  /**
   * Keep the shadow packed as git's own maintenance would, in the background after an export
   * (never while a request waits): when it holds more packs or loose objects than the bounds, a
   * geometric repack (`git repack -d --geometric=2`) rolls the small packs (and any loose
   * objects) into one, leaving packs whose sizes at least double, so their number grows with the
   * logarithm of the history; should more than the bound remain, `git repack -a -d -k` makes one.
   * Neither drops an object (a geometric repack keeps every object of the packs it rolls up; -k
   * keeps unreachable ones), so an export running meanwhile, which writes a pack of its own that
   * the repack does not touch, finds every object it was told the shadow holds; git clients
   * reading the shadow meanwhile are safe, as with any git repack. One repack at a time, in the
   * whole server.
   */
  private scheduleMaintenance(): void {
    if (this.stopped) return;
    if (this.maintaining) {
      this.maintainAgain = true;
      return;
    }
    this.maintaining = (async () => {
      // After the answer of the export that asked for it.
      await new Promise((resolve) => setImmediate(resolve));
      do {
        this.maintainAgain = false;
        try {
          await REPACKS.runExclusive(() => (this.stopped ? undefined : this.maintainOnce()));
        } catch (err) {
          if (!this.stopped) this.log?.warn({ shadow: this.root, error: (err as Error).message.slice(0, 300) }, 'repacking the shadow repository failed; it stays as it was (correct, more packs)');
        }
      } while (this.maintainAgain && !this.stopped);
    })().finally(() => { this.maintaining = null; });
  }

  /** Resolves once no maintenance is scheduled or running (tests, benchmarks). */
  async maintenanceIdle(): Promise<void> {
    while (this.maintaining) await this.maintaining;
  }

  private async maintainOnce(): Promise<void> {
    const before = await this.objectCounts();
    this.loose = before.loose > 0;
    if (before.loose <= maxLoose() && before.packs <= maxPacks()) return;
    await this.git(['repack', '-d', '-q', '-n', '--geometric=2']);
    let after = await this.objectCounts();
    if (after.packs > maxPacks() && !this.stopped) {
      await this.git(['repack', '-a', '-d', '-k', '-q', '-n']);
      after = await this.objectCounts();
    }
    this.log?.info({ shadow: this.root, before, after }, 'repacked the shadow repository');
  }

  /** git on the shadow, with no configuration of the machine's (as for serving); rejects with its stderr. */
  private git(args: string[]): Promise<void> {
    const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: this.root, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
    return new Promise<void>((resolve, reject) => {
      if (this.stopped) return resolve();
      const child = execFile(process.env.CAIRN_GIT || 'git', ['-C', this.root, '-c', 'repack.writeBitmaps=false', ...args], { env, maxBuffer: 1024 * 1024 }, (err, _stdout, stderr) => {
        this.repacking = null;
        // Packs went and came, loose objects went: what was known of them is re-read when needed.
        this.packs = null;
        this.loose = null;
        if (err) reject(new Error(`git ${args[0]}: ${String(stderr || err.message).trim()}`));
        else resolve();
      });
      this.repacking = child;
    });
  }

  /**
   * The commit of snapshot `id` whose first parent's commit is `parent`, its objects written.
   * `record`: the git map does not hold it yet.
   */
  private async commitFor(id: string, parent: string | null, builder: GitTreeBuilder, side: SideWalk): Promise<{ raw: Buffer; record: boolean }> {
    const store = this.authority.store;
    const snap = store.snapshot(id)!;
    const rec = store.entity<GitCommitRecord>(GIT_COMMIT, id);
    if (rec && rec.commit_id.length !== 40) throw new Conflict(`snapshot ${id} was imported from a sha256 repository; exporting sha256 histories is not supported`);
    const tree = await builder.treeOf(snap.root_tree_id, rec?.gitlinks ?? []);
    const parents = parent === null ? [] : [parent];
    const exported = rec?.origin === 'exported' ? rec.raw : rec?.export?.raw;
    if (exported !== undefined) {
      // Written before: the map's bytes are the commit (a rebuild must not change an id).
      const raw = Buffer.from(exported, 'base64');
      const c = parseCommit(raw);
      if (c.tree_id !== tree || (c.parent_ids[0] ?? null) !== parent) throw new Corrupt(`snapshot ${id}: its exported git commit ${exportedCommitId(rec!)} does not have the snapshot's tree and first parent (tree ${tree}, parent ${parent ?? 'none'})`);
      return { raw, record: false };
    }
    if (rec) {
      const original = Buffer.from(rec.raw, 'base64');
      const c = parseCommit(original);
      // Kept as it was when git would find the same tree and the same (only) parent.
      if (c.tree_id === tree && c.parent_ids.length === parents.length && (parent === null || c.parent_ids[0] === parent)) return { raw: original, record: false };
      // An imported merge whose side histories were imported too: kept as it was once every
      // other parent is written as it was (docs/git.md, "Merges").
      if (rec.origin !== 'exported' && c.tree_id === tree && parent !== null && c.parent_ids.length > 1 && c.parent_ids[0] === parent
        && (await this.keepSides(c.parent_ids.slice(1), builder, side))) return { raw: original, record: false };
      const raw = encodeCommit({
        tree_id: tree,
        parent_ids: parents,
        author: rawHeader(original, 'author')!,
        committer: rawHeader(original, 'committer')!,
        encoding: c.encoding,
        message: withTrailers(c.message, [`Cairn-Git-Commit: ${rec.commit_id}`, ...(rec.pushed_by ? [`Pushed-by: ${identTrailer(rec.pushed_by)}`] : []), ...landedByTrailer(rec.origin === 'pushed' ? this.authority.lands.landOfSnapshot(id) : null)]),
      });
      return { raw, record: true };
    }
    const land = this.authority.lands.landOfSnapshot(id);
    if (land) {
      const ps = land.patchset_id ? store.entity<PatchsetRecord>(PATCHSET, land.patchset_id) : undefined;
      const change = store.entity<ChangeRecord>(CHANGE, land.change_id);
      const title = (change?.title ?? land.change_ref).trim();
      const summary = (ps?.summary ?? '').trim();
      const trailers = [`Cairn-Change: ${land.change_ref}`, `Cairn-Land: ${land.land_id}`];
      if (snap.parent_snapshot_ids.length > 1) trailers.push(`Cairn-Merge-Revision: ${snap.parent_snapshot_ids[1]}`);
      // Who vouched for it, as Gerrit writes them: the approvals live when the land finished, and who pushed it (docs/git.md "Who pushed").
      // Always by the fingerprint carry-over, whatever dismiss_stale_approvals says now: an exported
      // commit's bytes never depend on rules set after its land.
      if (ps) {
        const reviews = this.authority.workflow.reviews.reviewsOf(land.change_id).filter((r) => r.created_at_s <= land.finished_at_s);
        const approvers = liveVotes(reviews, { patchset_id: ps.patchset_id, fingerprint: ps.diff.fingerprint ?? null }).filter((v) => v.vote === 'approve').map((v) => v.reviewer).sort();
        for (const name of approvers) trailers.push(`Reviewed-by: ${identTrailer(name)}`);
        if (ps.pushed_by) trailers.push(`Pushed-by: ${identTrailer(ps.pushed_by)}`);
      }
      trailers.push(...landedByTrailer(land));
      const text = summary === '' ? `${title}\n` : `${title}\n\n${summary}\n`;
      const raw = encodeCommit({
        tree_id: tree,
        parent_ids: parents,
        author: { ...authorIdent(ps?.author), time: land.finished_at_s },
        committer: { ...CAIRN_IDENT, time: land.finished_at_s },
        message: withTrailers(Buffer.from(text, 'utf8'), trailers),
      });
      return { raw, record: true };
    }
    const raw = encodeCommit({
      tree_id: tree,
      parent_ids: parents,
      author: { ...CAIRN_IDENT, time: snap.created_at_s },
      committer: { ...CAIRN_IDENT, time: snap.created_at_s },
      message: withTrailers(Buffer.from(snap.message ?? '', 'utf8'), [`Cairn-Snapshot: ${id}`]),
    });
    return { raw, record: true };
  }

  /**
   * Write the side histories of a merge, each commit as it was recorded, parents first, and say
   * whether every one of `roots` is then in the shadow under its own id. A commit is written
   * only when it is the commit the map says an export writes for its snapshot (an imported or
   * pushed one never rewritten, or one an export wrote), its
   * snapshot's tree converts back to its tree, and every parent is such a commit (or the
   * shadow holds it already, which it does only for commits kept as they were). Whether a
   * commit is kept is a function of the stored records alone, so the ids do not depend on the
   * order lines are exported in. Iterative: a side branch may be thousands of commits long.
   */
  private async keepSides(roots: string[], builder: GitTreeBuilder, side: SideWalk): Promise<boolean> {
    const store = this.authority.store;
    const stack: { commit: string; raw: Buffer | null; parents: string[] }[] = roots.map((commit) => ({ commit, raw: null, parents: [] }));
    while (stack.length) {
      const top = stack[stack.length - 1];
      if (side.decided.has(top.commit)) {
        stack.pop();
        continue;
      }
      if (top.raw === null) {
        const index = store.entity<GitCommitIdRecord>(GIT_COMMIT_ID, top.commit);
        const rec = index ? store.entity<GitCommitRecord>(GIT_COMMIT, index.snapshot_id) : undefined;
        // The commit the map says an export writes for its snapshot (an imported or pushed one
        // kept as it was, or one an export wrote), never one the export rewrote.
        if (!rec || exportedCommitId(rec) !== top.commit || side.fresh.has(rec.snapshot_id)) {
          side.decided.set(top.commit, false);
          stack.pop();
          continue;
        }
        if (await this.holds(top.commit)) {
          side.decided.set(top.commit, true);
          stack.pop();
          continue;
        }
        const raw = Buffer.from(rec.export?.raw ?? rec.raw, 'base64');
        const c = parseCommit(raw);
        const snap = store.snapshot(rec.snapshot_id);
        if (!snap || (await builder.treeOf(snap.root_tree_id, rec.gitlinks)) !== c.tree_id) {
          side.decided.set(top.commit, false);
          stack.pop();
          continue;
        }
        top.raw = raw;
        top.parents = c.parent_ids;
        for (const p of c.parent_ids) if (!side.decided.has(p)) stack.push({ commit: p, raw: null, parents: [] });
        continue;
      }
      stack.pop();
      const keep = top.parents.every((p) => side.decided.get(p) === true);
      if (keep && (await this.writeObject('commit', top.commit, top.raw))) side.written++;
      side.decided.set(top.commit, keep);
    }
    return roots.every((r) => side.decided.get(r) === true);
  }

  private readBlob(id: string): Promise<Buffer> {
    const loc = this.authority.store.locator('blob', id);
    if (!loc) throw new Corrupt(`blob ${id} is not stored`);
    return this.authority.store.readLocated(loc);
  }

  /**
   * A bare repository git reads: HEAD → refs/heads/main, a config, objects/ and refs/. A
   * directory missing any of these is not one: it is removed and made again (derived data).
   */
  private async ensureRepository(): Promise<void> {
    const L = this.layout;
    const whole = (await exists(L.headFile)) && (await exists(L.configFile)) && (await exists(L.objectsDir)) && (await exists(L.headsDir));
    if (!whole) {
      await fsp.rm(L.root, { recursive: true, force: true });
      this.packs = null;
      this.loose = null;
      this.builder = null;
      this.patchsetRefs.clear();
      this.tagRefs.clear();
    }
    for (const dir of [path.join(L.objectsDir, 'pack'), path.join(L.objectsDir, 'info'), L.headsDir, path.join(L.refsDir, 'tags')]) await fsp.mkdir(dir, { recursive: true });
    if (!whole) await writeFileDurable(L.configFile, '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n');
    const wantHead = 'ref: refs/heads/main\n';
    if ((await fsp.readFile(L.headFile, 'utf8').catch(() => '')) !== wantHead) await writeFileDurable(L.headFile, wantHead);
    // Temp files of a sync that did not finish (kill -9): never objects, so they go.
    await fsp.rm(L.tempDir, { recursive: true, force: true });
    await fsp.mkdir(L.tempDir, { recursive: true });
    // A pack whose index never came (killed between the two renames) is not part of the
    // repository. Not while git repacks: its own new pack is briefly in that state too.
    if (!this.maintaining) {
      const files = new Set(await fsp.readdir(L.packDir));
      for (const f of files) {
        if (f.endsWith('.pack') && !files.has(`${f.slice(0, -5)}.idx`)) await fsp.rm(path.join(L.packDir, f), { force: true });
      }
    }
  }

  /** Add an object to the pack being written, unless the shadow holds it. `where`: its path, for a blob or tree. */
  private async writeObject(type: GitObjectType, id: string, body: Buffer, where?: string): Promise<boolean> {
    if (await this.holds(id)) return false;
    this.pack ??= await GitPackWriter.open(this.layout.tempDir);
    await this.pack.add(type, id, body, where);
    return true;
  }

  private async writeRef(line: string, commitId: string): Promise<void> {
    const file = this.layout.branchRef(line);
    try {
      await fsp.mkdir(path.dirname(file), { recursive: true });
      await writeFileDurable(file, `${commitId}\n`);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EISDIR' || code === 'ENOTDIR' || code === 'EEXIST') throw new Conflict(`line ${line} cannot be exported: refs/heads/${line} clashes with the branch of another line (git cannot hold both "a" and "a/b")`);
      throw err;
    }
  }
}

/** `Landed-by:` of a land's commit the export writes, when the land names who asked for it. */
function landedByTrailer(land: { landed_by?: string } | null): string[] {
  return land?.landed_by ? [`Landed-by: ${identTrailer(land.landed_by)}`] : [];
}

/** A cairn name as a trailer's `Name <email>` (authorIdent's cleaning: nothing git would misread). */
function identTrailer(name: string): string {
  const { name: n, email } = authorIdent(name);
  return `${n} <${email}>`;
}
