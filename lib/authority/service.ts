// The whole service state of one data directory: the registry and every open authority.
// `CairnService.open` is what the startup phase waits for; HTTP handlers call into it.
import { promises as fsp } from 'node:fs';
import { Corrupt, NotFound } from '../domain/errors.js';
import {
  LIFECYCLE_PURGED,
  nowSeconds,
  type RepositoryRecord,
} from '../domain/repository.js';
import { removeDurable, removeTempFiles } from '../store/durable.js';
import { Layout } from '../store/layout.js';
import { Authority } from './authority.js';
import { DEFAULT_JOB_POLICY, type JobPolicy } from '../domain/jobs.js';
import { LIFECYCLE_ACTIVE, LIFECYCLE_RETIRING } from '../domain/repository.js';
import type { ClaimResult } from './jobs.js';
import { Retirement } from './retirement.js';
import { RestoreSessions } from './restore.js';
import { Mutex } from 'async-mutex';
import type { Log } from './logger.js';
import type { AuthorityHost } from './host.js';
import { Registry, type RegistrationResult } from './registry.js';
import { EventFeeds, registryEventStream, type EventFeedOptions, type FeedHost } from './event-feed.js';
import { WebhookDispatcher, type WebhookPolicy } from './webhook-dispatcher.js';

export interface ServiceOptions {
  dataDir: string;
  log: Log;
  jobPolicy?: JobPolicy;
  /** The event feeds' limits, heartbeat and retention (./event-feed.ts). */
  events?: EventFeedOptions;
}

/** A repository that failed its checks at open stays registered but unusable until repaired. */
interface Unavailable {
  reason: string;
}

export class CairnService implements AuthorityHost, FeedHost {
  private readonly authorities = new Map<number, Authority | Unavailable>();
  private readonly lifecycleMutexes = new Map<number, Mutex>();
  private readonly authorityListeners = new Set<() => void>();
  private retirementOps: Retirement | null = null;
  /** Set by startWebhooks (serving only: offline tools open the service without sending anything). */
  private webhookPolicy: WebhookPolicy | null = null;
  private readonly dispatchers = new Map<number, WebhookDispatcher>();
  private restoreSessions: RestoreSessions | null = null;
  /** The event feeds of every repository (docs/api.md "Events"). */
  readonly feeds: EventFeeds;

  private constructor(
    readonly layout: Layout,
    readonly registry: Registry,
    readonly log: Log,
    readonly jobPolicy: JobPolicy,
    events: EventFeedOptions = {},
  ) {
    this.feeds = new EventFeeds(this, events);
  }

  static async open(options: ServiceOptions): Promise<CairnService> {
    const layout = new Layout(options.dataDir);
    await fsp.mkdir(layout.repositoriesDir, { recursive: true });
    for (const file of await removeTempFiles(options.dataDir)) {
      if (!file.startsWith(layout.repositoriesDir)) options.log.warn({ file }, 'recovery removed an unfinished temp file');
    }
    const registry = await Registry.open(layout);
    for (const note of await registry.openEvents()) options.log.warn({ note }, 'recovery');
    const service = new CairnService(layout, registry, options.log, options.jobPolicy ?? DEFAULT_JOB_POLICY, options.events);
    if (registry.events) service.feeds.attachRegistry(registryEventStream(registry.events));
    await service.removeUnregisteredDirectories();
    for (const record of registry.all()) {
      if (record.lifecycle_kind === LIFECYCLE_PURGED) continue;
      await service.openAuthority(record.repository_index);
    }
    await service.feeds.applyRetention();
    service.restoreSessions = await RestoreSessions.open(service);
    return service;
  }

  /** Retirement operations, made on first use (never handed a half-built service). */
  get retirement(): Retirement {
    return (this.retirementOps ??= new Retirement(this));
  }

  get restores(): RestoreSessions {
    return this.restoreSessions!;
  }

  /** Serialize lifecycle changes (retirement start, abort, purge) of one repository. */
  lifecycleExclusive<T>(index: number, fn: () => Promise<T>): Promise<T> {
    let mutex = this.lifecycleMutexes.get(index);
    if (!mutex) {
      mutex = new Mutex();
      this.lifecycleMutexes.set(index, mutex);
    }
    return mutex.runExclusive(fn);
  }

  /** Close a repository's files and forget it (purge). */
  closeAuthority(index: number): void {
    this.stopDispatcher(index);
    const entry = this.authorities.get(index);
    if (entry instanceof Authority) entry.close();
    this.authorities.delete(index);
    this.authoritiesChanged();
  }

  /** Call `fn` after an authority is opened (registration, restore) or closed (purge); returns the unsubscribe function. */
  onAuthoritiesChanged(fn: () => void): () => void {
    this.authorityListeners.add(fn);
    return () => this.authorityListeners.delete(fn);
  }

  private authoritiesChanged(): void {
    for (const fn of [...this.authorityListeners]) {
      try {
        fn();
      } catch (err) {
        this.log.error({ problem: (err as Error).message }, 'an authority listener failed');
      }
    }
  }

  /** Open a repository that restore has just moved into place. */
  async openRestored(index: number): Promise<void> {
    await this.openAuthority(index);
  }

  private async openAuthority(index: number): Promise<void> {
    try {
      const compactJobs = this.registry.get(index)?.lifecycle_kind === 1; // a retiring authority's files stay as exported
      this.authorities.set(index, await Authority.open(this.layout.repositoryDir(index), index, this.log, this.jobPolicy, compactJobs));
      this.startDispatcher(index);
      this.authoritiesChanged();
    } catch (err) {
      const reason = (err as Error).message;
      this.log.error({ repository_index: index, problem: reason }, 'repository failed its checks at open; it answers 500 until repaired (see cairn fsck)');
      this.authorities.set(index, { reason });
    }
  }

  /**
   * A directory under repositories/ whose index has no registry record was created by a
   * registration that crashed before registry.bin was rewritten: it was never acknowledged.
   */
  private async removeUnregisteredDirectories(): Promise<void> {
    const names = await fsp.readdir(this.layout.repositoriesDir);
    for (const name of names) {
      const index = /^(0|[1-9][0-9]*)$/.test(name) ? Number(name) : -1;
      // A purged repository's directory is left only by a purge interrupted after its commit point.
      if (index >= 0 && this.registry.get(index) && !this.registry.isPurged(index)) continue;
      this.log.warn({ directory: `repositories/${name}` }, 'recovery removed a repository directory with no registry record');
      await removeDurable(`${this.layout.repositoriesDir}/${name}`);
    }
  }

  /** The registry record of `index`; NotFound when it was never registered. */
  record(index: number): RepositoryRecord {
    const record = this.registry.get(index);
    if (!record) throw new NotFound(`repository ${index} is not registered`);
    return record;
  }

  /** The open authority of a registered, not purged repository. */
  authority(index: number): Authority {
    const entry = this.authorities.get(index);
    if (!entry) {
      this.record(index);
      throw new NotFound(`repository ${index} has been purged`);
    }
    if (!(entry instanceof Authority)) throw new Corrupt(`repository ${index} failed its checks at open: ${entry.reason}`);
    return entry;
  }

  /** Throw Corrupt when the repository failed its checks at open (purged ones pass: handlers decide). */
  assertServable(index: number): void {
    const entry = this.authorities.get(index);
    if (entry && !(entry instanceof Authority)) throw new Corrupt(`repository ${index} failed its checks at open: ${entry.reason}`);
  }

  async register(name: string, namespace: string, policyFlags: number): Promise<RegistrationResult> {
    const result = await this.registry.register(name, namespace, policyFlags, async (index) => {
      await Authority.create(this.layout.repositoryDir(index), index, nowSeconds());
    });
    if (result.created) await this.openAuthority(result.record.repository_index);
    return result;
  }

  private maintenance: NodeJS.Timeout | null = null;
  private leaseTimer: NodeJS.Timeout | null = null;

  /**
   * Background upkeep: hourly, expire uncommitted packs older than the staging TTL; every
   * second (or a quarter lease, if shorter), apply worker-job lease expiry.
   */
  startMaintenance(intervalMs = 3600_000): void {
    this.maintenance = setInterval(() => void this.expireStagedPacks(), intervalMs);
    this.maintenance.unref();
    const leaseTick = Math.max(250, Math.min(1000, (this.jobPolicy.leaseSeconds * 1000) / 4));
    this.leaseTimer = setInterval(() => void this.expireLeases(), leaseTick);
    this.leaseTimer.unref();
    this.feeds.startRetention();
  }

  async expireLeases(): Promise<void> {
    for (const [index, entry] of this.authorities) {
      if (!(entry instanceof Authority) || !entry.jobs.hasDueLeases()) continue;
      try {
        const n = await entry.jobs.expireLeases();
        if (n) this.log.info({ repository_index: index, expired: n }, 'worker job leases expired');
      } catch (err) {
        this.log.error({ repository_index: index, problem: (err as Error).message }, 'lease expiry failed');
      }
    }
  }

  /** Serving repositories (active or retiring, opened cleanly), in index order. */
  serving(): Authority[] {
    const out: Authority[] = [];
    for (const record of this.registry.all()) {
      if (record.lifecycle_kind !== 1 && record.lifecycle_kind !== LIFECYCLE_RETIRING) continue;
      const entry = this.authorities.get(record.repository_index);
      if (entry instanceof Authority) out.push(entry);
    }
    return out;
  }

  /** Claim-next across repositories: the first claimable job in repository order. */
  async claimNext(kinds: Set<number>, repositories: number[]): Promise<ClaimResult | null> {
    const candidates = repositories.length ? repositories.map((i) => this.servingAuthority(i)) : this.serving();
    for (const authority of candidates) {
      const claimed = await authority.jobs.claimNext(kinds);
      if (claimed) return claimed;
    }
    return null;
  }

  private servingAuthority(index: number): Authority {
    const record = this.record(index);
    if (record.lifecycle_kind === LIFECYCLE_PURGED) throw new NotFound(`repository ${index} has been purged`);
    return this.authority(index);
  }

  async expireStagedPacks(): Promise<void> {
    const sessions = await this.restores.expire();
    if (sessions) this.log.info({ sessions }, 'removed expired restore sessions');
    for (const [index, entry] of this.authorities) {
      if (!(entry instanceof Authority)) continue;
      try {
        for (const pack of await entry.expireStagedPacks()) this.log.info({ repository_index: index, pack }, 'removed an expired uncommitted pack');
      } catch (err) {
        this.log.error({ repository_index: index, problem: (err as Error).message }, 'staged pack expiry failed');
      }
    }
  }

  /**
   * Start sending webhooks (docs/api.md "Webhooks"): a dispatcher for every open authority now,
   * and for each one opened later (registration, restore).
   */
  startWebhooks(policy: WebhookPolicy): void {
    this.webhookPolicy = policy;
    for (const index of this.authorities.keys()) this.startDispatcher(index);
  }

  private startDispatcher(index: number): void {
    const entry = this.authorities.get(index);
    if (!this.webhookPolicy || !(entry instanceof Authority) || this.dispatchers.has(index)) return;
    // Nothing is written for webhooks while the repository is retiring: its files stay as exported.
    const dispatcher = new WebhookDispatcher(entry, () => this.registry.get(index)?.lifecycle_kind === LIFECYCLE_ACTIVE, this.log, this.webhookPolicy);
    this.dispatchers.set(index, dispatcher);
    dispatcher.start();
  }

  private stopDispatcher(index: number): void {
    this.dispatchers.get(index)?.stop();
    this.dispatchers.delete(index);
  }

  close(): void {
    this.feeds.close();
    if (this.maintenance) clearInterval(this.maintenance);
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    for (const index of [...this.dispatchers.keys()]) this.stopDispatcher(index);
    for (const entry of this.authorities.values()) if (entry instanceof Authority) entry.close();
    this.registry.closeEvents();
  }

  /** Repositories that list discovery shows: every record except purged ones. */
  listed(nameFilter?: string): RepositoryRecord[] {
    return this.registry.all().filter(
      (r) => r.lifecycle_kind !== LIFECYCLE_PURGED && (nameFilter === undefined || r.repository_name === nameFilter),
    );
  }
}
