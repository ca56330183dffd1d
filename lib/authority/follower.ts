// `cairn serve --follow URL`: a read-only replica kept current from the archive's manifests
// (docs/operations.md "Standby and failover"). Every interval it lists each repository's
// manifests and, for one newer than what it applied, closes that authority, applies the manifest
// incrementally (lib/archive/restore.ts: only what the directory lacks is fetched; commit.bin
// last) and reopens it — under the repository's lifecycle mutex, so no open or purge races it.
// The HTTP layer refuses every mutating request while `service.readOnly` is set. Promotion
// applies the newest manifests once more, claims the next archive generation (reason
// "promote"), writes DATA/archive.json and hands over to the caller, which makes the server
// writable and starts shipping.
import { setTimeout as sleep } from 'node:timers/promises';
import { claimGeneration, ensureArchiveId, readArchiveId } from '../archive/generations.js';
import type { ObjectStore } from '../archive/object-store.js';
import type { Manifest } from '../domain/archive-manifest.js';
import { applyManifest, listArchivedRepositories, listManifestKeys, readManifest, readOneManifest } from '../archive/restore.js';
import { findAccessManifest, writeAccessLog } from '../archive/access-archive.js';
import { fencedRefusal, writeArchiveFile, type TakeoverExpectation } from '../archive/archive-file.js';
import { canonicalArchiveUrl } from '../archive/archive-url.js';
import { Busy, Conflict } from '../domain/errors.js';
import { mkdirDurable } from '../store/durable.js';
import type { CairnService } from './service.js';

export interface FollowOptions {
  url: string;
  store: ObjectStore & { close?: () => void };
  /** Poll the archive this often (default 1000 ms). */
  intervalMs?: number;
}

interface Applied {
  manifest: string;
  commit: number;
  capturedAtUs: bigint;
}

/** The writer's newest manifest of a repository, as last seen in the store. */
interface Newest {
  key: string;
  commit: number;
  capturedAtUs: bigint;
  /** The manifest keys after the applied one at that look (trimmed as manifests are applied). */
  newer: string[];
}

export interface FollowStatus {
  url: string;
  state: 'following' | 'error' | 'promoting' | 'promoted';
  generation: string | null;
  /** The greatest lag of any repository, and the commits behind over all of them. */
  lag_seconds: number;
  behind_commits: number;
  repositories: { repository: number; applied_commit: string; manifest: string; newest_commit: string; behind_commits: number; behind_manifests: number; lag_seconds: number }[];
  last_error: string | null;
  last_applied_at: string | null;
  /** When the writer's newest manifests were last read from the store (the lag is as of then). */
  checked_at: string | null;
}

export interface Promotion {
  url: string;
  generation: string;
  repositories: { repository: number; applied_commit: string; manifest: string }[];
}

/** Manifests the follower keeps read (a chain is at most 33 of one repository). */
const MANIFEST_CACHE = 256;
const MANIFEST_CACHE_ENTRIES = 200_000;
/** Objects one apply downloads at once (as cairn restore's default): small objects cost the store's round trip each. */
const APPLY_DOWNLOADS = 8;
/** Repositories applied at once. */
const APPLY_CONCURRENCY = 4;
/** How long a switchover's promotion waits for the archive to show what the old writer handed over. */
const REACH_MS = 30_000;

/** The length of access.log an access manifest key names (`…-<length>.json`), 0 for none. */
function accessLengthOf(key: string | null): number {
  const m = key === null ? null : /-([0-9]{20})\.json$/.exec(key);
  return m ? Number(m[1]) : 0;
}

export class Follower {
  private readonly applied = new Map<number, Applied>();
  private readonly newest = new Map<number, Newest>();
  private checkedAt: string | null = null;
  /** The look at the writer's newest manifests under way, if any (one at a time). */
  private looking: Promise<void> | null = null;
  private state: FollowStatus['state'] = 'following';
  private lastError: string | null = null;
  private lastAppliedAt: string | null = null;
  private generation: bigint | null = null;
  /** The server is stopping: no loop starts again. */
  private stopped = false;
  /** The polling loop, while one runs; `halt` ends it (its sleep at once, its round at the next repository). */
  private loop: { halt: AbortController; done: Promise<void> } | null = null;

  /** The archive's URL in its one spelling. */
  readonly url: string;
  /** The access.log manifest written to DATA/access.log last. */
  private accessApplied: string | null = null;
  /**
   * Manifests read lately, by key, as stored (a key names one manifest for good): the next
   * manifest's chain of incremental ones below it is mostly these, so an apply reads only the
   * new ones. At most MANIFEST_CACHE manifests of MANIFEST_CACHE_ENTRIES entries in all (about
   * 200 bytes each), the least recently used dropped first.
   */
  private readonly manifests = new Map<string, Manifest>();
  private cachedEntries = 0;
  private readonly readCached = async (store: ObjectStore, key: string): Promise<Manifest> => {
    const hit = this.manifests.get(key);
    if (hit) {
      this.manifests.delete(key);
      this.manifests.set(key, hit);
      return hit;
    }
    const m = await readOneManifest(store, key);
    this.manifests.set(key, m);
    this.cachedEntries += m.entries.length + 1;
    while (this.manifests.size > MANIFEST_CACHE || this.cachedEntries > MANIFEST_CACHE_ENTRIES) {
      const [oldest, dropped] = this.manifests.entries().next().value!;
      this.manifests.delete(oldest);
      this.cachedEntries -= dropped.entries.length + 1;
    }
    return m;
  };

  constructor(private readonly service: CairnService, readonly o: FollowOptions) {
    this.url = canonicalArchiveUrl(o.url);
  }

  start(): void {
    if (this.loop || this.stopped) return;
    const halt = new AbortController();
    const done = (async () => {
      while (!halt.signal.aborted) {
        await this.poll(halt.signal);
        if (!halt.signal.aborted) await sleep(this.o.intervalMs ?? 1000, undefined, { signal: halt.signal }).catch(() => {});
      }
    })();
    this.loop = { halt, done };
  }

  /**
   * End the polling loop and wait until it has: a loop merely told to stop could wake from its
   * sleep after a failed promotion started the next one, and two would poll at once.
   */
  private async halt(): Promise<void> {
    const loop = this.loop;
    if (!loop) return;
    loop.halt.abort();
    await loop.done;
    if (this.loop === loop) this.loop = null;
  }

  /** Stop polling after the round under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.halt();
  }

  status(): FollowStatus {
    // Against the writer's newest manifest as last seen, never reset by an apply of an older one.
    const repositories = [...this.applied.entries()].sort((a, b) => a[0] - b[0]).map(([repository, a]) => {
      const n = this.newest.get(repository);
      const ahead = n !== undefined && n.commit > a.commit;
      return {
        repository,
        applied_commit: String(a.commit),
        manifest: a.manifest,
        newest_commit: String(ahead ? n.commit : a.commit),
        behind_commits: ahead ? n.commit - a.commit : 0,
        behind_manifests: ahead ? n.newer.filter((k) => k > a.manifest).length : 0,
        lag_seconds: ahead && n.capturedAtUs > a.capturedAtUs ? Number(n.capturedAtUs - a.capturedAtUs) / 1e6 : 0,
      };
    });
    return {
      url: this.url,
      state: this.state,
      generation: this.generation?.toString() ?? null,
      lag_seconds: Math.max(0, ...repositories.map((r) => r.lag_seconds)),
      behind_commits: repositories.reduce((n, r) => n + r.behind_commits, 0),
      repositories,
      last_error: this.lastError,
      last_applied_at: this.lastAppliedAt,
      checked_at: this.checkedAt,
    };
  }

  /** One pass over the archive; failures are kept for /healthz and retried at the next pass. */
  private async poll(halted: AbortSignal): Promise<void> {
    try {
      await this.catchUp(halted);
      if (this.state === 'error') this.state = 'following';
      this.lastError = null;
    } catch (err) {
      this.state = 'error';
      this.lastError = (err as Error).message;
      this.service.log.warn({ follow: this.url, problem: this.lastError }, 'follow: cannot apply the archive yet; retrying');
    }
  }

  /** Apply every newer manifest; a halted loop's round ends at the next repository (a promotion's never does). */
  private async catchUp(halted?: AbortSignal): Promise<void> {
    // Accounts, tokens and grants (DATA/access.log): the newest access manifest, when it changed.
    const access = await findAccessManifest(this.o.store);
    if (access && access.key !== this.accessApplied) {
      await writeAccessLog(this.o.store, access.manifest, access.key, this.service.layout.accessLogFile);
      this.accessApplied = access.key;
    }
    // The writer's newest manifest of every repository first: the lag of each shows while the
    // others apply (against the writer's manifest times, never against this server's clock).
    await this.look(halted);
    if (halted?.aborted) return;
    const due = [...this.newest.entries()].filter(([index, n]) => this.applied.get(index)?.manifest !== n.key).map(([index]) => index).sort((a, b) => a - b);
    // While manifests apply (a big one may take long), the writer goes on shipping: look again
    // every interval, so the lag shown is against its newest manifest, not the one this round
    // started from.
    const watch = setInterval(() => { void this.look(halted).catch(() => {}); }, this.o.intervalMs ?? 1000);
    try {
      await this.applyDue(due, halted);
    } finally {
      clearInterval(watch);
      await this.looking?.catch(() => {});
    }
  }

  /**
   * Read the writer's newest manifest of every repository: a listing each, and a read of the
   * newest manifest only when its key changed (an incremental manifest's chain is read only
   * for a manifest to apply). One look at a time; a caller during one waits for it.
   */
  private look(halted?: AbortSignal): Promise<void> {
    if (this.looking) return this.looking;
    const run = (async () => {
      for (const index of await listArchivedRepositories(this.o.store)) {
        if (halted?.aborted) return;
        const keys = await listManifestKeys(this.o.store, index);
        const key = keys.at(-1);
        if (key === undefined) continue;
        const applied = this.applied.get(index)?.manifest ?? '';
        const known = this.newest.get(index);
        const newer = keys.filter((k) => k > applied);
        if (known && known.key === key) { known.newer = newer; continue; }
        const m = await this.readCached(this.o.store, key);
        this.newest.set(index, { key, commit: Number(m.commitGeneration), capturedAtUs: m.capturedAtUs, newer });
      }
      if (!halted?.aborted) this.checkedAt = new Date().toISOString();
    })();
    this.looking = run;
    const clear = (): void => { if (this.looking === run) this.looking = null; };
    run.then(clear, clear);
    return run;
  }

  /**
   * Apply the newest manifest known of each repository in `due`: a repository new here first,
   * one at a time in index order (its record fills the registry's positions below it); then the
   * others side by side (each under its own lifecycle mutex), so a promotion's last catch-up
   * waits for the slowest one, not for their sum. A halted loop stops at the next one.
   */
  private async applyDue(due: number[], halted?: AbortSignal): Promise<void> {
    const queue: number[] = [];
    for (const index of due) {
      if (this.service.registry.get(index)) queue.push(index);
      else {
        if (halted?.aborted) return;
        await this.applyOne(index);
      }
    }
    const worker = async (): Promise<void> => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        if (halted?.aborted) return;
        await this.applyOne(next);
      }
    };
    // Every apply settles before this ends (a promotion halts the loop and waits for it).
    const outcomes = await Promise.allSettled(Array.from({ length: Math.min(APPLY_CONCURRENCY, queue.length) }, worker));
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Apply the newest manifest known of repository `index` (if not applied yet): close it, fetch what it lacks, reopen it. */
  private async applyOne(index: number): Promise<void> {
    const key = this.newest.get(index)?.key;
    if (key === undefined || this.applied.get(index)?.manifest === key) return;
    const found = { key, manifest: await readManifest(this.o.store, key, this.readCached) };
    const dir = this.service.layout.repositoryDir(index);
    const result = await this.service.lifecycleExclusive(index, async () => {
      // Reads under way finish on the files they opened; new ones wait for the reopen.
      await this.service.quiesce(index);
      this.service.closeAuthority(index);
      await mkdirDurable(dir);
      const r = await applyManifest(this.o.store, found.manifest, dir, { manifestKey: found.key, incremental: true, concurrency: APPLY_DOWNLOADS });
      if (r.registry) await this.service.registry.adopt(r.registry);
      return r;
    });
    await this.service.ensureOpen(index);
    this.applied.set(index, { manifest: found.key, commit: result.commit.generation, capturedAtUs: found.manifest.capturedAtUs });
    this.lastAppliedAt = new Date().toISOString();
    if (!result.unchanged) this.service.log.info({ follow: this.url, repository_index: index, commit: result.commit.generation, objects: result.objects, bytes: result.bytes }, 'follow: applied a manifest');
  }

  /**
   * A switchover (docs/operations.md "Planned switchover"): apply manifests until every
   * repository is at exactly the commit the old writer handed over, and access.log at the length
   * it shipped (a listing may lag: polled for up to REACH_MS), before anything is claimed. The
   * archive past one of them (another writer shipped since) or short of it after the wait: refused.
   */
  private async reach(expect: TakeoverExpectation, given: () => void): Promise<void> {
    const id = await readArchiveId(this.o.store);
    if (id !== expect.archive_id) throw new Error(`the old writer handed over the archive ${expect.archive_id}, but ${this.url} holds ${id === null ? 'no archive id' : `the archive ${id}`}: not the archive this server follows`);
    const deadline = Date.now() + REACH_MS;
    for (;;) {
      const short: string[] = [];
      for (const e of expect.repositories) {
        const applied = BigInt(this.applied.get(e.repository)?.commit ?? 0);
        const want = BigInt(e.commit);
        if (applied > want) throw new Error(`the archive holds commit ${applied} of repository ${e.repository}, past commit ${want} the old writer handed over: another writer shipped since the handover`);
        if (applied < want) short.push(`repository ${e.repository} at commit ${applied} of ${want}`);
      }
      if (expect.access_log_length !== null) {
        const length = accessLengthOf(this.accessApplied);
        if (length > expect.access_log_length) throw new Error(`the archive's access.log is ${length} bytes, past the ${expect.access_log_length} the old writer handed over: another writer shipped since the handover`);
        if (length < expect.access_log_length) short.push(`access.log at ${length} of ${expect.access_log_length} bytes`);
      }
      if (short.length === 0) return;
      if (Date.now() >= deadline) throw new Error(`the archive does not reach what the old writer handed over (${short.join(', ')}) after ${REACH_MS / 1000} s`);
      await sleep(250);
      given();
      await this.catchUp();
      given();
    }
  }

  /**
   * Stop following, apply the newest manifests, claim the next generation ("promote") and
   * record it in archive.json. The caller then makes the server writable and starts shipping.
   * Every store call is bounded (the store's timeouts), so this ends; `signal` (the caller
   * went away) stops it before the claim, never after: a promotion the caller gave up on does
   * not complete later by itself. A failure leaves the server following, and says whether the
   * claim may have been stored.
   */
  async promote(signal?: AbortSignal, expect?: TakeoverExpectation): Promise<Promotion> {
    if (this.state === 'promoting' || this.state === 'promoted') throw new Conflict(`this server is already ${this.state === 'promoted' ? 'promoted' : 'being promoted'}`);
    this.state = 'promoting';
    let claiming = false;
    const given = (): void => { if (signal?.aborted) throw new Error('the caller went away before the claim'); };
    try {
      await this.halt();
      given();
      await this.catchUp();
      given();
      if (expect) await this.reach(expect, given);
      const conditional = await this.o.store.conditionalPut();
      const archiveId = await ensureArchiveId(this.o.store, conditional);
      given();
      // A directory fenced since it started following (archive.json says so) claims nothing.
      const fenced = await fencedRefusal(this.service.layout.archiveFile, this.service.layout.root);
      if (fenced !== null) throw new Error(fenced);
      claiming = true;
      const claim = await claimGeneration(this.o.store, 'promote', conditional);
      claiming = false;
      await writeArchiveFile(this.service.layout.archiveFile, { url: this.url, archive_id: archiveId, generation: claim.generation.toString() });
      this.generation = claim.generation;
      this.state = 'promoted';
      this.service.log.info({ follow: this.url, generation: claim.generation.toString() }, 'follow: promoted; this server now writes');
      return { url: this.url, generation: claim.generation.toString(), repositories: this.status().repositories.map(({ repository, applied_commit, manifest }) => ({ repository, applied_commit, manifest })) };
    } catch (err) {
      // Not promoted: keep following (read-only). A claim whose answer never came may be stored
      // and fence the old writer: a promotion tried again claims the generation after it.
      const why = (err as Error).message;
      this.state = 'error';
      this.lastError = `promotion failed: ${why}`;
      this.start();
      this.service.log.warn({ follow: this.url, problem: why, claim_uncertain: claiming }, 'follow: promotion failed; still following');
      throw new Busy(`not promoted: ${why}; this server still follows ${this.url} read-only${claiming ? ' (the claim of the next generation got no answer: it may be stored and fence the old writer; cairn promote again claims the one after it)' : ' (nothing was claimed)'}`);
    }
  }
}
