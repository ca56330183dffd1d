// Continuous shipping of every authority to the archive (storage-layout.md §20): beside the
// commits, never in their path (unless serve --archive-sync holds their answers). Each interval
// (or at once, when a sync commit waits) every repository with new commits is captured, and the
// capture's new objects — packs the archive lacks, the new byte ranges of every log, the other
// files the commit point names — start uploading at once, up to `concurrency` objects at a
// time over all repositories: captures are pipelined, a later one's uploads run while an
// earlier one's big pack is still on its way. A manifest is written, in commit order, for the
// newest capture whose objects and those of every capture before it are stored (a manifest
// covers every commit up to its own; docs/operations.md "The RPO"). Manifests are incremental
// (what changed since the previous one; a full one every `manifestChain`), each with its marker
// in the time index (storage-layout.md §20.1.1) put beside it. A failing or slow
// store delays shipping only: errors are retried with backoff from the newest stored manifest.
// After a restart the newest own manifest and one listing of the stored packs say what the
// archive holds; no object is HEADed.
//
// The shipper knows nothing of the data directory: a ShipSource (lib/authority/archiving.ts)
// captures commit points with open read handles (the store's capture API).
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import {
  diffEntries,
  encodeManifest,
  fileKey,
  logRangeKey,
  manifestKey,
  manifestPrefix,
  packKey,
  parseManifestKey,
  purgedMarkerKey,
  registryRecordKey,
  REGISTRY_RECORD_PATH,
  timeIndexOriginKey,
  timeMarkerKey,
  type ManifestEntry,
} from '../domain/archive-manifest.js';
import { sha256Hex, type Body, type ObjectStore } from './object-store.js';
import { resolveChain } from './manifest-chain.js';
import { loadAccessShipped, shipAccessLog, type AccessShipped } from './access-archive.js';

/** One file of a capture (structurally the store's CapturedFile). */
export interface ShipFile {
  kind: 'pack' | 'log' | 'index' | 'identity' | 'lines' | 'checkpoint';
  path: string;
  size: number;
  log?: string;
  packDir?: 'objects' | 'trees';
  packId?: string;
  handle: FileHandle;
}

export interface ShipCapture {
  record: Buffer;
  state: { generation: number; logs: Record<string, number>; log_files: Record<string, number>; segments: Record<string, number[]>; lines_gen: number };
  capturedAtUs: bigint;
  files: ShipFile[];
  /** Every committed pack, opened or not. */
  packs: { dir: 'objects' | 'trees'; id: string }[];
  close(): Promise<void>;
}

export interface ShipWants {
  pack: (dir: 'objects' | 'trees', id: string) => boolean;
  checkpoint: boolean;
  file: (relPath: string) => boolean;
}

export interface ShipSource {
  /** Repositories to ship (registered, not purged), in index order. */
  repositories(): number[];
  /** Purged repositories (their archive gets the purge marker once). */
  purged?(): number[];
  /** The committed commit generation now (cheap; 0 when the repository is not open yet). */
  committed(index: number): number;
  /** The repository's registry record as §20.1 ships it (40 bytes, name_offset 0, then the name). */
  registryRecord(index: number): Buffer;
  capture(index: number, wants: ShipWants): Promise<ShipCapture>;
  /** DATA/access.log (accounts, tokens, grants), shipped beside the repositories (lib/archive/access-archive.ts). */
  accessLogFile?: string;
}

export interface ShipperOptions {
  store: ObjectStore;
  source: ShipSource;
  generation: bigint;
  /** The archive's URL, for status (never a secret). */
  url: string;
  intervalMs?: number;
  /** A log's whole committed prefix is shipped again (a base) after this many ranges. */
  checkpointRanges?: number;
  lagWarnSeconds?: number;
  /** Objects uploaded at once, over every repository (default DEFAULT_CONCURRENCY). */
  concurrency?: number;
  /** A full manifest after this many incremental ones (default DEFAULT_MANIFEST_CHAIN; 0: every manifest full). */
  manifestChain?: number;
  /** Commits are acknowledged only once a manifest covers them (status says so; the owner holds the answers). */
  sync?: boolean;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void; error(o: object, m: string): void };
  /** Test crash points (`archive:after-packs`, ...). */
  crashPoint?: (name: string) => void;
  /** Called once when fenced, and when lag passes the bound (the owner emits the events). */
  onFenced?: (info: { generation: string; newer: string }) => void;
  onLagging?: (info: { repository: number; lag_seconds: number; uncovered_commits: number }) => void;
  /** Before each manifest put: false stops shipping (the lease is lost). */
  beforeManifest?: () => Promise<void>;
  /** Use putIfAbsent for manifests (the store honours conditional writes). */
  conditional?: boolean;
  /** Packs opened per capture of one repository (default PACKS_PER_ROUND; tests lower it). */
  packsPerRound?: number;
}

/** Objects uploaded at once by default. */
export const DEFAULT_CONCURRENCY = 8;
/** Incremental manifests between two full ones by default. */
export const DEFAULT_MANIFEST_CHAIN = 32;
/**
 * The longest wait between two tries while the store fails, unless the interval is longer: a
 * store back from an outage is used within 2 s (the RPO goal is the outage + 5 s), and one try
 * every 2 s is a few requests, no burden on a store that is down.
 */
export const RETRY_MAX_MS = 2000;

/**
 * The wait before the next try after `failures` failures in a row (0: the interval): doubling
 * from twice `baseMs`, at most RETRY_MAX_MS (or `baseMs`, when longer).
 */
export function retryDelayMs(failures: number, baseMs: number): number {
  if (failures <= 0) return baseMs;
  return Math.min(baseMs * 2 ** Math.min(failures, 6), Math.max(RETRY_MAX_MS, baseMs));
}

/** Captures of one repository whose manifest is not written yet, at most (each holds open files). */
const MAX_PIPELINE = 16;
/** Commit times remembered per repository for the lag (older ones are dropped; the lag then counts from the oldest kept). */
const MAX_COMMIT_TIMES = 100_000;

interface LogView {
  file: string;
  /** End of the bytes shipped or being shipped. */
  end: bigint;
  entries: Promise<ManifestEntry>[];
  rangesSinceBase: number;
}

/** What one commit point needs from the archive, each object as the promise of its entry (settled: stored). */
interface View {
  logs: Map<string, LogView>;
  /** Index segments and lines files (immutable under their names): path → entry. */
  files: Map<string, Promise<ManifestEntry>>;
  identity?: { sha256: string; entry: Promise<ManifestEntry> };
  registry?: { sha256: string; entry: Promise<ManifestEntry> };
  checkpoint?: Promise<ManifestEntry>;
}

/** One capture on its way: its uploads run; its manifest is written once it and every earlier one are stored. */
interface Job {
  commit: bigint;
  capture: ShipCapture;
  view: View;
  packKeys: string[];
  /** Some pack of the commit point was not opened (too many new): a later capture's manifest covers it. */
  partial: boolean;
  uploads: Promise<unknown>[];
  settled: boolean;
  failed: Error | null;
}

interface RepoState {
  /** Commit generation of the newest manifest stored (0n: none). */
  shipped: bigint;
  /** The commit generation committed when the archive was read at start: manifests above it are new keys. */
  loadedCommitted: bigint;
  /** Its capture time (µs), or null when the archive has none of this generation. */
  shippedAtUs: bigint | null;
  loaded: boolean;
  /** The view and whole entry list of the newest manifest stored (the base of the next delta). */
  shippedView: View;
  shippedEntries: ManifestEntry[] | null;
  /** Incremental manifests since the last full one. */
  chain: number;
  /** The view of the newest capture (what the next capture ships the difference to). */
  tail: View;
  captured: bigint;
  jobs: Job[];
  /** Packs stored or on their way: key → entry. */
  packs: Map<string, Promise<ManifestEntry>>;
  /** Packs known stored (from the manifests, the listing at start, and the uploads that succeeded). */
  stored: Map<string, ManifestEntry>;
  /** Packs listed at start (stored by an earlier run, maybe without a manifest): key → size. */
  listed: Map<string, number>;
  /** When each commit this process saw became durable: [generation, ms]; only those above `shipped`. */
  commitTimes: [number, number][];
  /** The oldest moment an uncovered commit may date from when its own time is not known (after a restart). */
  floorMs: number;
  pumping: Promise<void>;
  waiters: { gen: bigint; resolve: () => void; reject: (err: Error) => void }[];
  lagWarned: boolean;
  lagBytes: number;
  /** The time index's origin is known to be stored and the newest manifest's marker put (once per load). */
  timeIndexed: boolean;
}

export type ShipperState = 'shipping' | 'idle' | 'fenced' | 'error';

export interface ArchiveStatus {
  url: string;
  generation: string;
  /** `handed_over`: the writer handed the archive over (POST /archive/handover) and writes nothing more. */
  state: ShipperState | 'handed_over';
  /** serve --archive-sync: a commit is answered once a manifest covering it is stored. */
  sync: boolean;
  /** Age in seconds of the oldest acknowledged commit no stored manifest covers (0: none), over every repository. */
  lag_seconds: number;
  /** Commits no stored manifest covers, over every repository. */
  uncovered_commits: number;
  repositories: { repository: number; shipped_commit: string; committed: string; lag_seconds: number; lag_bytes: number; uncovered_commits: number; oldest_uncovered_at: string | null }[];
  last_error: string | null;
  last_shipped_at: string | null;
  /** serve --archive-key-file: the id of the key new objects are sealed with; null: not encrypted (set by lib/authority/archiving.ts). */
  sealed_with?: string | null;
  /** With a retention policy (serve --archive-keep): the last prune's counts or failure, null before the first. */
  last_prune?: { at: string; deleted_manifests: number; deleted_objects: number; deleted_bytes: number } | { at: string; error: string } | null;
  /** serve --archive-verify-every: the last verification (lib/authority/archive-verify.ts). */
  last_verify?: { at: string; ok: boolean; repositories: { repository: number; manifest: string | null; ok: boolean; problem: string | null }[] } | { at: string; error: string } | null;
}

const EMPTY_SHA256 = sha256Hex(Buffer.alloc(0));

/** Objects up to this size upload in the small lane (their own `concurrency` slots). */
const SMALL = 1024 * 1024;
/** Objects up to this size are read whole; larger ones stream twice (hash, then upload). */
const WHOLE = 8 * 1024 * 1024;
/** Packs opened and shipped per capture of one repository, at most. */
export const PACKS_PER_ROUND = 256;

export class FencedError extends Error {}

/** At most `n` tasks at once, started in the order asked. */
class Limiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly n: number) {}
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.n) await new Promise<void>((r) => this.waiting.push(r));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

const emptyView = (): View => ({ logs: new Map(), files: new Map() });
const cloneView = (v: View): View => ({
  logs: new Map([...v.logs].map(([k, l]) => [k, { ...l, entries: [...l.entries] }])),
  files: new Map(v.files),
  ...(v.identity ? { identity: v.identity } : {}),
  ...(v.registry ? { registry: v.registry } : {}),
  ...(v.checkpoint ? { checkpoint: v.checkpoint } : {}),
});
const byKey = (a: ManifestEntry, b: ManifestEntry): number => Buffer.compare(Buffer.from(a.key, 'utf8'), Buffer.from(b.key, 'utf8'));

export class Shipper {
  private readonly repos = new Map<number, RepoState>();
  private readonly intervalMs: number;
  private readonly checkpointRanges: number;
  private readonly lagWarnSeconds: number;
  private readonly chainMax: number;
  /** Uploads of big objects and of small ones queue apart: big packs never hold back the small objects of later commits. */
  private readonly limiter: Limiter;
  private readonly smallLimiter: Limiter;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private fenced: string | null = null;
  /** Purged repositories whose marker is known to be stored (or that have no archive). */
  private purgeNoted = new Set<number>();
  private fencedWhy = '';
  private failures = 0;
  private lastError: string | null = null;
  private lastShippedAt: Date | null = null;
  private wake: (() => void) | null = null;
  private woken = false;
  /** access.log as shipped (undefined: not read from the archive yet). */
  private access: AccessShipped | null | undefined = undefined;
  /** Told of every failure from now on (a flush under way fails with it). */
  private readonly failureWatchers = new Set<(err: Error) => void>();
  /** Waiting for the next whole round (started after they asked) to end. */
  private roundWaiters: { resolve: () => void; reject: (err: Error) => void }[] = [];

  constructor(private readonly o: ShipperOptions) {
    this.intervalMs = o.intervalMs ?? 1000;
    this.checkpointRanges = o.checkpointRanges ?? 256;
    this.lagWarnSeconds = o.lagWarnSeconds ?? 60;
    this.chainMax = o.manifestChain ?? DEFAULT_MANIFEST_CHAIN;
    this.limiter = new Limiter(Math.max(1, o.concurrency ?? DEFAULT_CONCURRENCY));
    this.smallLimiter = new Limiter(Math.max(1, o.concurrency ?? DEFAULT_CONCURRENCY));
  }

  start(): void {
    if (this.running) return;
    this.running = this.loop();
  }

  /** Stop capturing; uploads under way finish (or fail) and their captures are closed. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running;
    await this.drainAll();
    this.failWaiters(new FencedError('the archive shipping stopped (the server is stopping)'));
  }

  /** Stop for good: generation `newer` was claimed, or (`why` given) the lease was lost. */
  fence(newer: string, why?: string): void {
    if (this.fenced) return;
    this.fenced = newer;
    this.fencedWhy = why ?? `fenced: generation ${newer} was claimed after ${this.o.generation}`;
    this.o.log.error({ archive: this.o.url, generation: this.o.generation.toString(), newer }, 'archive: a newer writer holds the archive; shipping stopped');
    this.o.onFenced?.({ generation: this.o.generation.toString(), newer });
    this.failWaiters(new FencedError(this.fencedWhy));
    this.wake?.();
  }

  /** A commit point of repository `index` became durable now (the lag counts from here). */
  noteCommit(index: number, generation: number, atMs = Date.now()): void {
    const r = this.repoState(index);
    if (BigInt(generation) <= r.shipped && r.loaded) return;
    r.commitTimes.push([generation, atMs]);
    if (r.commitTimes.length > MAX_COMMIT_TIMES) r.commitTimes.splice(1, r.commitTimes.length - MAX_COMMIT_TIMES);
  }

  /**
   * Resolves once a stored manifest covers commit `generation` of repository `index` (sync
   * mode); wakes the shipper at once, so commits waiting together share a manifest. Rejects
   * (FencedError) when the shipper is fenced or stops.
   */
  covered(index: number, generation: number): Promise<void> {
    if (this.fenced) return Promise.reject(new FencedError(this.fencedWhy));
    if (this.stopped) return Promise.reject(new FencedError('the archive shipping stopped (the server is stopping)'));
    const r = this.repoState(index);
    const gen = BigInt(generation);
    if (r.loaded && r.shipped >= gen) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      r.waiters.push({ gen, resolve, reject });
      this.poke();
    });
  }

  /**
   * Ship now until a stored manifest covers commit `generation` of every repository of
   * `targets`, then run one whole round more (access.log ships in it): a handover's last
   * shipping. Rejects with the first failure after the call (the store down), or when fenced.
   */
  async flush(targets: Map<number, number>): Promise<void> {
    let onFail: (err: Error) => void = () => {};
    const failed = new Promise<never>((_, reject) => { onFail = reject; });
    failed.catch(() => {});
    this.failureWatchers.add(onFail);
    try {
      await Promise.race([failed, Promise.all([...targets].map(([index, generation]) => this.covered(index, generation)))]);
      const round = new Promise<void>((resolve, reject) => {
        this.roundWaiters.push({ resolve, reject });
        this.poke();
      });
      await Promise.race([failed, round]);
    } finally {
      this.failureWatchers.delete(onFail);
    }
  }

  /** Forget what is known of repository `index` (serve --cluster: it left this node, or arrived): read again from the store when next shipped. */
  forget(index: number): void {
    this.repos.delete(index);
    this.purgeNoted.delete(index);
  }

  /**
   * serve --cluster: repository `index` came (back) to this node: forgotten as above, and the
   * purge marker a departure left is deleted at the next round, so retention keeps its newest
   * manifest again.
   */
  arrived(index: number): void {
    this.forget(index);
    this.unpurge.add(index);
    this.poke();
  }

  /** Purge markers to delete (repositories that came back). */
  private readonly unpurge = new Set<number>();

  /** The newest stored manifest of repository `index` (its commit and key), or null when none is known. */
  manifestOf(index: number): { commit: bigint; manifest: string } | null {
    const r = this.repos.get(index);
    if (!r || !r.loaded || r.shipped === 0n) return null;
    return { commit: r.shipped, manifest: manifestKey(index, this.o.generation, r.shipped) };
  }

  /** The length of access.log shipped (null: none, or not read yet). */
  accessLength(): number | null {
    return this.access?.length ?? null;
  }

  /** Run a round now rather than at the next interval. */
  private poke(): void {
    this.woken = true;
    this.wake?.();
  }

  status(): ArchiveStatus {
    const now = Date.now();
    let worst = 0;
    let uncoveredAll = 0;
    // Until the archive was read at start, what a repository lacks is not known yet: not shown.
    const repositories = [...this.repos.entries()].sort((a, b) => a[0] - b[0])
      .filter(([index, r]) => r.loaded && this.o.source.repositories().includes(index)).map(([index, r]) => {
      const committed = this.o.source.committed(index);
      const uncovered = Math.max(0, committed - Number(r.shipped));
      const oldest = uncovered > 0 ? this.oldestUncoveredMs(r) : null;
      const lag = oldest === null ? 0 : Math.max(0, Math.round((now - oldest) / 100) / 10);
      worst = Math.max(worst, lag);
      uncoveredAll += uncovered;
      return {
        repository: index,
        shipped_commit: r.shipped.toString(),
        committed: String(Math.max(committed, Number(r.shipped))),
        lag_seconds: lag,
        lag_bytes: uncovered ? r.lagBytes : 0,
        uncovered_commits: uncovered,
        oldest_uncovered_at: oldest === null ? null : new Date(oldest).toISOString(),
      };
    });
    // A repository not read from the archive yet (one registered since the last round): what it
    // shipped is not known, but the commits this process made in it are not covered yet.
    for (const [index, r] of this.repos) {
      if (r.loaded || r.commitTimes.length === 0 || !this.o.source.repositories().includes(index)) continue;
      const first = Math.min(...r.commitTimes.map(([g]) => g));
      uncoveredAll += Math.max(1, this.o.source.committed(index) - first + 1);
      worst = Math.max(worst, Math.max(0, Math.round((now - Math.min(...r.commitTimes.map(([, at]) => at))) / 100) / 10));
    }
    const busy = [...this.repos.values()].some((r) => r.jobs.length > 0);
    let state: ShipperState = this.fenced ? 'fenced' : this.failures > 0 ? 'error' : busy ? 'shipping' : 'idle';
    if (state === 'idle' && uncoveredAll > 0) state = 'shipping';
    return {
      url: this.o.url,
      generation: this.o.generation.toString(),
      state,
      sync: this.o.sync === true,
      lag_seconds: worst,
      uncovered_commits: uncoveredAll,
      repositories,
      last_error: this.fenced ? this.fencedWhy : this.lastError,
      last_shipped_at: this.lastShippedAt ? this.lastShippedAt.toISOString() : null,
    };
  }

  /**
   * When the oldest commit no stored manifest covers became durable: its own time when this
   * process saw it; otherwise (committed before a restart) the newest manifest's capture time,
   * or the repository's creation when it has none — never later than the truth, so the lag is
   * never understated.
   */
  private oldestUncoveredMs(r: RepoState): number {
    const next = Number(r.shipped) + 1;
    const first = r.commitTimes.find(([g]) => g >= next);
    if (first && first[0] === next) return first[1];
    const floor = r.shippedAtUs !== null ? Number(r.shippedAtUs / 1000n) : r.floorMs;
    return first ? Math.min(first[1], floor) : floor;
  }

  /** Capture every repository that is behind and wait until everything captured is shipped (tests). */
  async shipOnce(): Promise<void> {
    await this.round();
    await this.drainAll();
    if (this.lastError) throw new Error(this.lastError);
  }

  /** Wait until no capture is on its way (each either shipped or failed). */
  private async drainAll(): Promise<void> {
    for (;;) {
      const pending = [...this.repos.values()].filter((r) => r.jobs.length > 0);
      if (!pending.length) return;
      await Promise.all(pending.map((r) => Promise.allSettled(r.jobs.flatMap((j) => j.uploads)).then(() => r.pumping)));
      if (pending.every((r) => r.jobs.every((j) => j.settled))) {
        await Promise.all(pending.map((r) => r.pumping));
        if (pending.every((r) => r.jobs.length === 0 || r.jobs.every((j) => j.settled && j.partial))) return;
      }
    }
  }

  /** One round: load what the archive holds, capture every repository with new commits, start their uploads. */
  private async round(): Promise<void> {
    let failed: Error | undefined;
    for (const index of [...this.unpurge]) {
      try {
        await this.o.store.delete(purgedMarkerKey(index));
        this.unpurge.delete(index);
      } catch (err) {
        failed ??= err as Error;
      }
    }
    for (const index of this.o.source.repositories()) {
      if (this.stopped || this.fenced) return;
      const r = this.repoState(index);
      try {
        if (!r.loaded) await this.loadNewest(index, r);
        const committed = BigInt(this.o.source.committed(index));
        if (committed <= r.shipped) {
          r.lagWarned = false;
          this.resolveWaiters(r);
          continue;
        }
        this.checkLag(index, r);
        // A capture that could not open every new pack (packsPerRound) is followed by another of the same commit.
        if ((committed > r.captured || r.jobs.at(-1)?.partial) && r.jobs.length < MAX_PIPELINE) await this.captureOnce(index, r);
      } catch (err) {
        // One repository's failure does not hold the others back; the round reports it.
        if (err instanceof FencedError) throw err;
        failed ??= err as Error;
      }
    }
    for (const index of [...this.repos.keys()]) if (!this.o.source.repositories().includes(index) && !this.repos.get(index)!.jobs.length) this.repos.delete(index);
    if (this.o.source.accessLogFile && !this.stopped && !this.fenced) {
      try {
        if (this.access === undefined) this.access = await loadAccessShipped(this.o.store, this.o.generation);
        this.access = await shipAccessLog(this.o.store, this.o.generation, this.o.source.accessLogFile, this.access, this.checkpointRanges, async () => {
          await this.o.beforeManifest?.();
          if (this.fenced) throw new FencedError('fenced');
        });
      } catch (err) {
        if (err instanceof FencedError) throw err;
        failed ??= err as Error;
      }
    }
    for (const index of this.o.source.purged?.() ?? []) {
      if (this.stopped || this.fenced || this.purgeNoted.has(index)) continue;
      try {
        await this.notePurge(index);
      } catch (err) {
        failed ??= err as Error;
      }
    }
    if (failed) throw failed;
  }

  /**
   * Leave the purge marker of a purged repository that has an archive (once; HEAD first, so a
   * restart costs one request per purged repository). Its manifests then follow the retention
   * windows like any other: the newest is no longer kept for being newest.
   */
  private async notePurge(index: number): Promise<void> {
    const key = purgedMarkerKey(index);
    if (!(await this.o.store.head(key))) {
      const shipped = await this.o.store.list(manifestPrefix(index), { limit: 1 });
      if (shipped.objects.length > 0) {
        const body = Buffer.from(`${JSON.stringify({ repository_index: index, purged_seen_at: new Date().toISOString(), generation: this.o.generation.toString() })}\n`);
        await this.o.store.put(key, body, { sha256: sha256Hex(body), size: body.length });
        this.o.log.info({ archive: this.o.url, repository_index: index }, 'archive: marked a purged repository; its manifests now follow the retention windows');
      }
    }
    this.purgeNoted.add(index);
  }

  private repoState(index: number): RepoState {
    let r = this.repos.get(index);
    if (!r) {
      r = {
        shipped: 0n, loadedCommitted: 0n, shippedAtUs: null, loaded: false, shippedView: emptyView(), shippedEntries: null, chain: 0, tail: emptyView(), captured: 0n, jobs: [],
        packs: new Map(), stored: new Map(), listed: new Map(), commitTimes: [], floorMs: Date.now(), pumping: Promise.resolve(), waiters: [], lagWarned: false, lagBytes: 0, timeIndexed: false,
      };
      this.repos.set(index, r);
    }
    return r;
  }

  private checkLag(index: number, r: RepoState): void {
    const uncovered = this.o.source.committed(index) - Number(r.shipped);
    if (uncovered <= 0) { r.lagWarned = false; return; }
    if (r.lagWarned) return;
    const lag = (Date.now() - this.oldestUncoveredMs(r)) / 1000;
    if (lag < this.lagWarnSeconds) return;
    r.lagWarned = true;
    this.o.log.warn({ archive: this.o.url, repository_index: index, lag_seconds: Math.round(lag), uncovered_commits: uncovered }, 'archive: shipping lags behind the commits');
    this.o.onLagging?.({ repository: index, lag_seconds: Math.round(lag), uncovered_commits: uncovered });
  }

  private async loop(): Promise<void> {
    while (!this.stopped && !this.fenced) {
      this.woken = false;
      const waiting = this.roundWaiters.splice(0);
      try {
        await this.round();
        if (this.fenced || this.stopped) throw new FencedError(this.fenced ? this.fencedWhy : 'the archive shipping stopped (the server is stopping)');
        if (this.failures && this.caughtUp()) this.succeeded();
        for (const w of waiting) w.resolve();
      } catch (err) {
        for (const w of waiting) w.reject(err as Error);
        if (err instanceof FencedError) break;
        this.fail(err as Error);
      }
      for (const [index, r] of this.repos) this.checkLag(index, r);
      if (this.woken && !this.failures) continue;
      const delay = retryDelayMs(this.failures, this.intervalMs);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, delay);
        this.timer.unref();
      });
      this.wake = null;
    }
    for (const w of this.roundWaiters.splice(0)) w.reject(new FencedError(this.fenced ? this.fencedWhy : 'the archive shipping stopped (the server is stopping)'));
  }

  /** Every repository's newest commit is covered by a stored manifest. */
  private caughtUp(): boolean {
    return this.o.source.repositories().every((index) => {
      const r = this.repos.get(index);
      return r !== undefined && r.loaded && BigInt(this.o.source.committed(index)) <= r.shipped;
    });
  }

  private fail(err: Error): void {
    this.failures++;
    this.lastError = err.message;
    for (const watch of this.failureWatchers) watch(err);
    // Once per error streak at warn, then quietly (an outage would flood the log).
    if (this.failures === 1 || this.failures % 30 === 0) this.o.log.warn({ archive: this.o.url, problem: this.lastError, failures: this.failures }, 'archive: shipping failed; retrying');
  }

  private succeeded(): void {
    if (this.failures) this.o.log.info({ archive: this.o.url }, 'archive: shipping caught up after errors');
    this.failures = 0;
    this.lastError = null;
  }

  /**
   * What the archive holds of this generation: the newest own manifest (its chain resolved),
   * and one listing of the stored packs (an earlier run may have stored some without a
   * manifest); no object is HEADed afterwards.
   */
  private async loadNewest(index: number, r: RepoState): Promise<void> {
    const prefix = manifestPrefix(index);
    const own = `${prefix}g${this.o.generation.toString().padStart(20, '0')}-`;
    let newest: string | null = null;
    let after: string | undefined = own;
    for (;;) {
      const page = await this.o.store.list(own, after ? { after } : {});
      for (const o of page.objects) if (parseManifestKey(o.key)?.archiveGeneration === this.o.generation) newest = o.key;
      if (!page.next) break;
      after = page.next;
    }
    r.loadedCommitted = BigInt(this.o.source.committed(index));
    const listed = new Map<string, number>();
    const packs = `repositories/${index}/packs/`;
    after = undefined;
    for (;;) {
      const page = await this.o.store.list(packs, after ? { after } : {});
      for (const o of page.objects) listed.set(o.key, o.size);
      if (!page.next) break;
      after = page.next;
    }
    r.listed = listed;
    if (newest) {
      const { manifest: m, entries, chain } = await resolveChain(this.o.store, newest);
      r.shipped = m.commitGeneration;
      r.shippedAtUs = m.capturedAtUs;
      r.shippedEntries = entries;
      r.chain = chain;
      const view = emptyView();
      for (const e of entries) this.remember(r, view, e);
      r.shippedView = view;
      r.tail = cloneView(view);
      r.captured = r.shipped;
    } else {
      try {
        r.floorMs = Number(this.o.source.registryRecord(index).readBigUInt64LE(8)) * 1000;
      } catch { /* the start of this process stands */ }
    }
    r.timeIndexed = false;
    r.commitTimes = r.commitTimes.filter(([g]) => BigInt(g) > r.shipped);
    r.loaded = true;
  }

  private remember(r: RepoState, view: View, e: ManifestEntry): void {
    const p = Promise.resolve(e);
    if (e.kind === 'pack') {
      r.stored.set(e.key, e);
      r.packs.set(e.key, p);
    } else if (e.kind === 'registry') view.registry = { sha256: e.sha256, entry: p };
    else if (e.kind === 'log-range') {
      const name = logNameOf(e.path);
      let l = view.logs.get(name);
      if (!l) view.logs.set(name, (l = { file: e.path, end: 0n, entries: [], rangesSinceBase: 0 }));
      l.entries.push(p);
      if (e.offset > 0n) l.rangesSinceBase++;
      if (e.offset + e.size > l.end) l.end = e.offset + e.size;
    } else if (e.path === 'authority.bin') view.identity = { sha256: e.sha256, entry: p };
    else if (e.path === 'workflow.ckpt') view.checkpoint = p;
    else view.files.set(e.path, p);
  }

  /** Capture the commit point now and start uploading what it adds to the newest capture. */
  private async captureOnce(index: number, r: RepoState): Promise<void> {
    const gen = this.o.generation;
    const prev = r.tail;
    let wanted = 0;
    const capture = await this.o.source.capture(index, {
      pack: (dir, id) => !r.packs.has(packKey(index, dir, id)) && wanted++ < (this.o.packsPerRound ?? PACKS_PER_ROUND),
      checkpoint: true,
      file: (p) => !prev.files.has(p),
    });
    const commit = BigInt(capture.state.generation);
    if (commit < r.captured || (commit === r.captured && !r.jobs.at(-1)?.partial)) {
      await capture.close();
      return;
    }
    const uploads: Promise<unknown>[] = [];
    const upload = (size: number, fn: () => Promise<ManifestEntry>): Promise<ManifestEntry> => {
      const p = (size > SMALL ? this.limiter : this.smallLimiter).run(async () => {
        if (this.fenced) throw new FencedError('fenced');
        return fn();
      });
      p.catch(() => {}); // handled when the capture settles (a failure resets the pipeline)
      uploads.push(p);
      return p;
    };
    try {
      // The lag in bytes: new log bytes and packs the archive lacks, known before any upload.
      r.lagBytes = capture.files.reduce((n, f) => {
        if (f.kind === 'pack') return n + f.size;
        if (f.kind !== 'log') return n;
        const l = prev.logs.get(f.log!);
        return n + Math.max(0, f.size - (l && l.file === f.path ? Number(l.end) : 0));
      }, r.jobs.length ? r.lagBytes : 0);
      // 1. Packs no earlier capture ships and the archive does not hold (no HEAD: the listing at start and the manifests say).
      for (const f of capture.files.filter((x) => x.kind === 'pack')) {
        const key = packKey(index, f.packDir!, f.packId!);
        const p = upload(f.size, async () => {
          const { sha256, bytes } = await digest(f.handle, 0, f.size);
          const listedSize = r.listed.get(key);
          // A pack's key is its content's id and a put is whole or absent: a listed one of the size is that pack.
          if (listedSize !== f.size) await this.put(key, f.handle, 0, f.size, sha256, bytes);
          const e: ManifestEntry = { kind: 'pack', key, path: f.path, offset: 0n, size: BigInt(f.size), sha256 };
          r.stored.set(key, e);
          return e;
        });
        r.packs.set(key, p);
      }
      const packKeys = capture.packs.map((p) => packKey(index, p.dir, p.id));
      const partial = packKeys.some((k) => !r.packs.has(k));
      // 2. Log ranges [end of the previous capture, committed) per log; a base [0, committed) when due.
      const view: View = { logs: new Map(), files: new Map() };
      let anyBase = false;
      for (const f of capture.files.filter((x) => x.kind === 'log')) {
        const name = f.log!;
        const before = prev.logs.get(name);
        const base = !before || before.file !== f.path || before.rangesSinceBase >= this.checkpointRanges || BigInt(f.size) < before.end;
        const start = base ? 0n : before.end;
        const end = BigInt(f.size);
        const l: LogView = base ? { file: f.path, end: 0n, entries: [], rangesSinceBase: 0 } : { ...before, entries: [...before.entries] };
        if (base) anyBase = true;
        if (end > start) {
          const key = logRangeKey(index, gen, f.path, start, end);
          l.entries.push(upload(Number(end - start), async () => {
            const { sha256, bytes } = await digest(f.handle, Number(start), Number(end - start));
            await this.put(key, f.handle, Number(start), Number(end - start), sha256, bytes);
            return { kind: 'log-range', key, path: f.path, offset: start, size: end - start, sha256 };
          }));
          if (!base) l.rangesSinceBase++;
          l.end = end;
        }
        view.logs.set(name, l);
      }
      // 3. Files: index segments and lines (immutable names), authority.bin, the registry record, workflow.ckpt at a base.
      for (const f of capture.files.filter((x) => x.kind === 'index' || x.kind === 'lines')) {
        view.files.set(f.path, upload(f.size, () => this.shipFile(fileKey(index, gen, commit, f.path), f)));
      }
      for (const p of namedFiles(capture.state)) {
        if (view.files.has(p)) continue;
        const known = prev.files.get(p);
        if (!known) throw new Error(`repository ${index}: ${p} is named by commit ${commit} but was not captured`);
        view.files.set(p, known);
      }
      const idFile = capture.files.find((x) => x.kind === 'identity')!;
      const id = await digest(idFile.handle, 0, idFile.size);
      if (prev.identity && prev.identity.sha256 === id.sha256) view.identity = prev.identity;
      else {
        const key = fileKey(index, gen, commit, idFile.path);
        view.identity = { sha256: id.sha256, entry: upload(idFile.size, async () => {
          await this.put(key, idFile.handle, 0, idFile.size, id.sha256, id.bytes);
          return { kind: 'file', key, path: idFile.path, offset: 0n, size: BigInt(idFile.size), sha256: id.sha256 };
        }) };
      }
      const record = this.o.source.registryRecord(index);
      const recordSha = sha256Hex(record);
      if (prev.registry && prev.registry.sha256 === recordSha) view.registry = prev.registry;
      else {
        const key = registryRecordKey(index, gen, commit);
        view.registry = { sha256: recordSha, entry: upload(record.length, async () => {
          await this.o.store.put(key, record, { sha256: recordSha, size: record.length });
          return { kind: 'registry', key, path: REGISTRY_RECORD_PATH, offset: 0n, size: BigInt(record.length), sha256: recordSha };
        }) };
      }
      const ckpt = capture.files.find((x) => x.kind === 'checkpoint');
      if (ckpt && (anyBase || !prev.checkpoint)) view.checkpoint = upload(ckpt.size, () => this.shipFile(fileKey(index, gen, commit, ckpt.path), ckpt));
      else if (ckpt) view.checkpoint = prev.checkpoint;
      const job: Job = { commit, capture, view, packKeys, partial, uploads, settled: false, failed: null };
      r.jobs.push(job);
      r.tail = view;
      r.captured = commit;
      void Promise.allSettled(uploads).then((outcomes) => {
        const bad = outcomes.find((x): x is PromiseRejectedResult => x.status === 'rejected');
        job.failed = bad ? (bad.reason as Error) : null;
        job.settled = true;
        this.pump(index, r);
      });
    } catch (err) {
      // Nothing of this capture is queued: let its uploads settle before closing its files.
      await Promise.allSettled(uploads);
      await capture.close();
      throw err;
    }
  }

  /** Write the manifests that are due, one at a time per repository. */
  private pump(index: number, r: RepoState): void {
    r.pumping = r.pumping.then(() => this.writeDue(index, r)).catch((err: Error) => {
      if (!(err instanceof FencedError)) this.fail(err);
      return this.reset(r);
    });
  }

  /**
   * The manifest of the newest capture whose objects, and those of every capture before it,
   * are stored: commit order holds (a manifest covers every commit up to its own), and the
   * captures it passes over need no manifest of their own.
   */
  private async writeDue(index: number, r: RepoState): Promise<void> {
    for (;;) {
      if (this.fenced) throw new FencedError('fenced');
      let due = -1;
      for (let i = 0; i < r.jobs.length; i++) {
        const j = r.jobs[i]!;
        if (!j.settled) break;
        if (j.failed) throw j.failed;
        if (!j.partial) due = i;
      }
      if (due < 0) return;
      const job = r.jobs[due]!;
      await this.writeManifest(index, r, job);
      const done = r.jobs.splice(0, due + 1);
      await Promise.all(done.map((j) => j.capture.close()));
      this.succeeded();
    }
  }

  private async writeManifest(index: number, r: RepoState, job: Job): Promise<void> {
    const gen = this.o.generation;
    const v = job.view;
    const entries: ManifestEntry[] = [];
    for (const [, l] of v.logs) entries.push(...(await Promise.all(l.entries)));
    for (const k of job.packKeys) entries.push(await r.packs.get(k)!);
    entries.push(...(await Promise.all(v.files.values())));
    entries.push(await v.identity!.entry, await v.registry!.entry);
    if (v.checkpoint) entries.push(await v.checkpoint);
    entries.sort(byKey);
    this.o.crashPoint?.('archive:after-packs');
    this.o.crashPoint?.('archive:after-logs');
    // Incremental when a base of this generation is stored and the chain is not at its bound.
    let manifestEntries = entries;
    let delta: { baseCommit: bigint; chainLength: number; removed: string[] } | undefined;
    if (r.shippedEntries && r.shipped > 0n && this.chainMax > 0 && r.chain < this.chainMax) {
      const d = diffEntries(r.shippedEntries, entries);
      if (d.added.length + d.removed.length < entries.length) {
        manifestEntries = d.added;
        delta = { baseCommit: r.shipped, chainLength: r.chain + 1, removed: d.removed };
      }
    }
    const bytes = encodeManifest({ archiveGeneration: gen, repository: index, commitGeneration: job.commit, capturedAtUs: job.capture.capturedAtUs, commitPoint: job.capture.record, entries: manifestEntries, ...(delta ? { delta } : {}) });
    this.o.crashPoint?.('archive:before-manifest');
    await this.o.beforeManifest?.();
    if (this.fenced) throw new FencedError('fenced');
    const key = manifestKey(index, gen, job.commit);
    const options = { sha256: sha256Hex(bytes), size: bytes.length };
    // The time index's marker goes beside the manifest (storage-layout.md §20.1.1): `restore --at`
    // finds the manifest by one listing. A marker whose manifest failed is passed over by readers.
    if (!r.timeIndexed) {
      await this.ensureTimeIndex(index, r);
      r.timeIndexed = true;
    }
    const marker = this.putMarker(index, job.capture.capturedAtUs, job.commit);
    marker.catch(() => {});
    if (this.o.conditional) {
      const outcome = await this.o.store.putIfAbsent(key, bytes, options);
      // Already there: written before a restart whose listing did not show it yet (listings may
      // lag). That manifest is whole and names only stored objects; it stands.
      if (outcome === 'exists') this.o.log.info({ archive: this.o.url, manifest: key }, 'archive: the manifest of this commit point was already shipped');
    } else if (job.commit > r.loadedCommitted || !(await this.o.store.head(key))) {
      // Only a commit the store may hold a manifest of from before this start (a stale
      // listing) is asked about first; a later one's key is new.
      await this.o.store.put(key, bytes, options);
    }
    await marker;
    // Stored: this manifest is the base of the next.
    r.shipped = job.commit;
    r.shippedAtUs = job.capture.capturedAtUs;
    r.shippedEntries = entries;
    r.chain = delta ? delta.chainLength : 0;
    r.shippedView = v;
    const named = new Set(job.packKeys);
    for (const k of [...r.packs.keys()]) if (!named.has(k) && !r.jobs.some((j) => j !== job && j.packKeys.includes(k))) { r.packs.delete(k); r.stored.delete(k); }
    while (r.commitTimes.length && BigInt(r.commitTimes[0]![0]) <= r.shipped) r.commitTimes.shift();
    if (BigInt(this.o.source.committed(index)) <= r.shipped) { r.lagWarned = false; r.lagBytes = 0; }
    this.lastShippedAt = new Date();
    this.resolveWaiters(r);
  }

  private resolveWaiters(r: RepoState): void {
    if (!r.waiters.length) return;
    const keep: RepoState['waiters'] = [];
    for (const w of r.waiters) if (w.gen <= r.shipped) w.resolve(); else keep.push(w);
    r.waiters = keep;
  }

  private failWaiters(err: Error): void {
    for (const r of this.repos.values()) {
      for (const w of r.waiters) w.reject(err);
      r.waiters = [];
    }
  }

  /** After a failure: drop every capture on its way (closing its files once its uploads settled) and start again from the newest manifest stored. */
  private async reset(r: RepoState): Promise<void> {
    const jobs = r.jobs.splice(0);
    await Promise.allSettled(jobs.flatMap((j) => j.uploads));
    await Promise.all(jobs.map((j) => j.capture.close()));
    r.packs = new Map([...r.stored].map(([k, e]) => [k, Promise.resolve(e)]));
    r.tail = cloneView(r.shippedView);
    r.captured = r.shipped;
  }

  /** The empty object whose key indexes manifest (generation, `commit`) by its capture time. */
  private async putMarker(index: number, capturedAtUs: bigint, commit: bigint): Promise<void> {
    await this.o.store.put(timeMarkerKey(index, capturedAtUs, this.o.generation, commit), Buffer.alloc(0), { sha256: EMPTY_SHA256, size: 0 });
  }

  /**
   * Start the time index of a repository whose archive has none: its origin says that every
   * manifest from the next one on has a marker (older ones, shipped before the index, are read
   * by a restore). The newest manifest stored gets its marker again (a crash may have come
   * between the two puts).
   */
  private async ensureTimeIndex(index: number, r: RepoState): Promise<void> {
    const originKey = timeIndexOriginKey(index);
    // A listing, not a HEAD: one request per repository and process start either way.
    const found = await this.o.store.list(originKey, { limit: 1 });
    if (!found.objects.some((o) => o.key === originKey)) {
      const body = Buffer.from(`${JSON.stringify({ from: manifestKey(index, this.o.generation, r.shipped + 1n), written_at: new Date().toISOString() })}\n`);
      await this.o.store.put(originKey, body, { sha256: sha256Hex(body), size: body.length });
    }
    if (r.shipped > 0n && r.shippedAtUs !== null) await this.putMarker(index, r.shippedAtUs, r.shipped);
  }

  private async shipFile(key: string, f: ShipFile): Promise<ManifestEntry> {
    const { sha256, bytes } = await digest(f.handle, 0, f.size);
    await this.put(key, f.handle, 0, f.size, sha256, bytes);
    return { kind: 'file', key, path: f.path, offset: 0n, size: BigInt(f.size), sha256 };
  }

  private async put(key: string, handle: FileHandle, start: number, size: number, sha256: string, bytes: Buffer | null): Promise<void> {
    const body: Body = bytes ?? (() => handle.createReadStream({ start, end: start + size - 1, autoClose: false, highWaterMark: 1024 * 1024 }));
    await this.o.store.put(key, size === 0 ? Buffer.alloc(0) : body, { sha256, size });
  }
}

/** The log a log file belongs to: `workflow.3.log` → `workflow`. */
function logNameOf(file: string): string {
  return /^([a-z-]+)(?:\.\d+)?\.log$/.exec(file)?.[1] ?? file;
}

/** Index segment and lines paths a commit point names (below the authority directory). */
function namedFiles(state: ShipCapture['state']): string[] {
  const out: string[] = [];
  for (const [name, segs] of Object.entries(state.segments)) for (const seg of segs) out.push(`index/${name}.${seg}.idx`);
  if (state.lines_gen) out.push(`lines.${state.lines_gen}.bin`);
  return out;
}

/** sha256 of bytes [start, start+size) of a file; the bytes too when small (read once). */
async function digest(handle: FileHandle, start: number, size: number): Promise<{ sha256: string; bytes: Buffer | null }> {
  if (size <= WHOLE) {
    const bytes = Buffer.alloc(size);
    let at = 0;
    while (at < size) {
      const { bytesRead } = await handle.read(bytes, at, size - at, start + at);
      if (bytesRead === 0) throw new Error(`short read at ${start + at}`);
      at += bytesRead;
    }
    return { sha256: sha256Hex(bytes), bytes };
  }
  const hash = createHash('sha256');
  const chunk = Buffer.alloc(1024 * 1024);
  let at = 0;
  while (at < size) {
    const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, size - at), start + at);
    if (bytesRead === 0) throw new Error(`short read at ${start + at}`);
    hash.update(chunk.subarray(0, bytesRead));
    at += bytesRead;
  }
  return { sha256: hash.digest('hex'), bytes: null };
}
