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
import { claimGeneration, ensureArchiveId } from '../archive/generations.js';
import type { ObjectStore } from '../archive/object-store.js';
import { applyManifest, listArchivedRepositories, listManifestKeys, readManifest, readOneManifest } from '../archive/restore.js';
import { findAccessManifest, writeAccessLog } from '../archive/access-archive.js';
import { fencedRefusal, writeArchiveFile } from '../archive/archive-file.js';
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
        const m = await readOneManifest(this.o.store, key);
        this.newest.set(index, { key, commit: Number(m.commitGeneration), capturedAtUs: m.capturedAtUs, newer });
      }
      if (!halted?.aborted) this.checkedAt = new Date().toISOString();
    })();
    this.looking = run;
    const clear = (): void => { if (this.looking === run) this.looking = null; };
    run.then(clear, clear);
    return run;
  }

  /** Apply the newest manifest known of each repository in `due`; a halted loop stops at the next one. */
  private async applyDue(due: number[], halted?: AbortSignal): Promise<void> {
    for (const index of due) {
      if (halted?.aborted) return;
      const key = this.newest.get(index)!.key;
      if (this.applied.get(index)?.manifest === key) continue;
      const found = { key, manifest: await readManifest(this.o.store, key) };
      const dir = this.service.layout.repositoryDir(index);
      const result = await this.service.lifecycleExclusive(index, async () => {
        // Reads under way finish on the files they opened; new ones wait for the reopen.
        await this.service.quiesce(index);
        this.service.closeAuthority(index);
        await mkdirDurable(dir);
        const r = await applyManifest(this.o.store, found.manifest, dir, { manifestKey: found.key, incremental: true });
        if (r.registry) await this.service.registry.adopt(r.registry);
        return r;
      });
      await this.service.ensureOpen(index);
      this.applied.set(index, { manifest: found.key, commit: result.commit.generation, capturedAtUs: found.manifest.capturedAtUs });
      this.lastAppliedAt = new Date().toISOString();
      if (!result.unchanged) this.service.log.info({ follow: this.url, repository_index: index, commit: result.commit.generation, objects: result.objects, bytes: result.bytes }, 'follow: applied a manifest');
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
  async promote(signal?: AbortSignal): Promise<Promotion> {
    if (this.state === 'promoting' || this.state === 'promoted') throw new Conflict(`this server is already ${this.state === 'promoted' ? 'promoted' : 'being promoted'}`);
    this.state = 'promoting';
    let claiming = false;
    const given = (): void => { if (signal?.aborted) throw new Error('the caller went away before the claim'); };
    try {
      await this.halt();
      given();
      await this.catchUp();
      given();
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
