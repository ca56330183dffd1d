// `cairn serve --archive URL`: the server side of the archive (docs/operations.md "Archive").
// At start it settles its generation (DATA/archive.json; a new claim under `generations/` when
// the file is absent, names another archive or holds generation 0 after a restore), takes the
// lease where the store honours conditional writes, and runs the shipper (lib/archive) over
// every registered, not purged repository. All of it runs beside the commits: an unreachable
// store delays shipping and shows in /healthz, it never fails a commit or the start.
import { LIFECYCLE_PURGED } from '../domain/repository.js';
import type { RetentionPolicy } from '../domain/archive-retention.js';
import { pruneArchive } from '../archive/prune.js';
import { readArchiveFile, writeArchiveFile } from '../archive/archive-file.js';
import { encodeRegistryRecord } from '../store/registry-file.js';
import { crashPoint } from '../store/crash-point.js';
import type { ObjectStore } from '../archive/object-store.js';
import { claimGeneration, Lease, newerClaim, type ClaimReason } from '../archive/generations.js';
import { Shipper, type ArchiveStatus, type ShipSource } from '../archive/shipper.js';
import type { CairnService } from './service.js';

const LEASE_LOST = (gen: bigint): string => `fenced: another writer took the lease of generation ${gen}`;

export interface ArchivingOptions {
  url: string;
  store: ObjectStore & { close?: () => void };
  intervalMs?: number;
  lagWarnSeconds?: number;
  checkpointRanges?: number;
  leaseSeconds?: number;
  /** Tests: packs shipped per round of one repository. */
  packsPerRound?: number;
  /** Prune the archive by a retention policy now and then (serve --archive-keep); never without it. */
  prune?: { policy: RetentionPolicy; graceMs: number; everyMs: number };
}

/** The service's repositories as the shipper sees them. */
export function serviceSource(service: CairnService): ShipSource {
  return {
    repositories: () => service.registry.all().filter((r) => r.lifecycle_kind !== LIFECYCLE_PURGED).map((r) => r.repository_index),
    purged: () => service.registry.all().filter((r) => r.lifecycle_kind === LIFECYCLE_PURGED).map((r) => r.repository_index),
    committed: (index) => {
      if (!service.isOpen(index)) return 0;
      try {
        return service.authority(index).store.generation;
      } catch {
        return 0;
      }
    },
    registryRecord: (index) => encodeRegistryRecord(service.record(index)),
    capture: async (index, wants) => (await service.opened(index)).store.capture(wants),
  };
}

export class Archiving {
  private shipper: Shipper | null = null;
  private generation = 0n;
  private startError: string | null = null;
  private fencedBy: string | null = null;
  private stopped = false;
  private leaseTimer: NodeJS.Timeout | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;
  private pruning: Promise<void> | null = null;
  /** The last prune's report (or failure), for /healthz. */
  private lastPrune: { at: string; deleted_manifests: number; deleted_objects: number; deleted_bytes: number } | { at: string; error: string } | null = null;

  constructor(private readonly service: CairnService, private readonly o: ArchivingOptions) {
    void this.start();
  }

  /** /healthz and `cairn archive status`. */
  status(): ArchiveStatus {
    if (this.shipper) return this.o.prune ? { ...this.shipper.status(), last_prune: this.lastPrune } : this.shipper.status();
    return {
      url: this.o.url,
      generation: this.generation.toString(),
      state: this.fencedBy ? 'fenced' : this.startError ? 'error' : 'idle',
      repositories: [],
      last_error: this.fencedBy ? `fenced: generation ${this.fencedBy} was claimed after ${this.generation}` : this.startError,
      last_shipped_at: null,
    };
  }

  private note(type: string, data: Record<string, unknown>): void {
    void this.service.registry.noteEvents([{ type, data: { archive: this.o.url, ...data } }]);
  }

  /** archive.fenced: one per repository the writer shipped (the registry feed's events each name a repository). */
  private noteFenced(newer: string): void {
    const events = serviceSource(this.service).repositories().map((index) => ({ type: 'archive.fenced', data: { repository_index: index, archive: this.o.url, generation: this.generation.toString(), newer } }));
    void this.service.registry.noteEvents(events);
  }

  private async start(): Promise<void> {
    const log = this.service.log;
    let delay = 500;
    for (;;) {
      if (this.stopped) return;
      try {
        await this.settle();
        this.startError = null;
        return;
      } catch (err) {
        this.startError = (err as Error).message;
        log.warn({ archive: this.o.url, problem: this.startError }, 'archive: cannot start shipping yet; retrying');
        await new Promise((r) => setTimeout(r, delay).unref());
        delay = Math.min(delay * 2, 30_000);
      }
    }
  }

  private async settle(): Promise<void> {
    const { store, url } = this.o;
    const log = this.service.log;
    const file = this.service.layout.archiveFile;
    const conditional = await store.conditionalPut();
    const local = await readArchiveFile(file);
    if (local && local.url === url && local.generation !== '0') {
      this.generation = BigInt(local.generation);
    } else {
      const reason: ClaimReason = local ? 'restore' : 'first';
      const claim = await claimGeneration(store, reason, conditional);
      this.generation = claim.generation;
      await writeArchiveFile(file, { url, generation: claim.generation.toString() });
      log.info({ archive: url, generation: claim.generation.toString(), reason: claim.reason }, 'archive: claimed a generation');
    }
    const newer = await newerClaim(store, this.generation, true);
    if (newer !== null) {
      this.fencedBy = newer.toString();
      log.error({ archive: url, generation: this.generation.toString(), newer: this.fencedBy }, 'archive: a newer writer holds the archive; shipping stopped');
      this.noteFenced(this.fencedBy);
      return;
    }
    let lease: Lease | null = null;
    if (conditional) {
      lease = new Lease(store, this.generation, this.o.leaseSeconds ?? 30);
      for (;;) {
        if (this.stopped) return;
        const got = await lease.tryAcquire();
        if (got.held) break;
        this.startError = `waiting for the archive lease of generation ${this.generation} (held by another writer${got.until ? ` until ${got.until}` : ''})`;
        await new Promise((r) => setTimeout(r, Math.max(250, lease!.renewEveryMs / 2)).unref());
      }
    }
    const shipper = new Shipper({
      store,
      source: serviceSource(this.service),
      generation: this.generation,
      url,
      intervalMs: this.o.intervalMs,
      lagWarnSeconds: this.o.lagWarnSeconds,
      checkpointRanges: this.o.checkpointRanges,
      packsPerRound: this.o.packsPerRound,
      log,
      conditional,
      crashPoint,
      onFenced: (info) => this.noteFenced(info.newer),
      onLagging: (info) => this.note('archive.lagging', { repository_index: info.repository, lag_seconds: info.lag_seconds }),
      beforeManifest: async () => {
        const above = await newerClaim(store, this.generation);
        if (above !== null) shipper.fence(above.toString());
        else if (lease) {
          try {
            await lease.ensure();
          } catch (err) {
            if (lease.lost) shipper.fence(this.generation.toString(), LEASE_LOST(this.generation));
            throw err;
          }
        }
      },
    });
    if (this.stopped) return;
    this.shipper = shipper;
    if (lease) {
      const l = lease;
      this.leaseTimer = setInterval(() => {
        void l.renew().then((ok) => { if (!ok) shipper.fence(this.generation.toString(), LEASE_LOST(this.generation)); }, () => {});
      }, l.renewEveryMs);
      this.leaseTimer.unref();
    }
    shipper.start();
    if (this.o.prune) this.schedulePrune(Math.min(this.o.prune.everyMs, 10 * 60_000));
  }

  /**
   * One prune at a time, beside the shipping (never inside a commit); a fenced or stopped writer
   * does not prune: the archive is the newer writer's to keep.
   */
  private schedulePrune(delayMs: number): void {
    const prune = this.o.prune!;
    this.pruneTimer = setTimeout(() => {
      if (this.stopped || this.fencedBy || this.shipper?.status().state === 'fenced') return;
      this.pruning = pruneArchive(this.o.store, { policy: prune.policy, graceMs: prune.graceMs }).then((report) => {
        this.lastPrune = { at: new Date().toISOString(), deleted_manifests: report.manifests.deleted, deleted_objects: report.objects.deleted, deleted_bytes: report.objects.deleted_bytes };
        this.service.log.info({ archive: this.o.url, ...this.lastPrune }, 'archive: pruned by the retention policy');
      }, (err) => {
        this.lastPrune = { at: new Date().toISOString(), error: (err as Error).message };
        this.service.log.warn({ archive: this.o.url, problem: (err as Error).message }, 'archive: prune failed; retrying at the next one');
      }).finally(() => {
        this.pruning = null;
        if (!this.stopped) this.schedulePrune(prune.everyMs);
      });
    }, delayMs);
    this.pruneTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    if (this.pruneTimer) clearTimeout(this.pruneTimer);
    await Promise.race([this.pruning, new Promise((r) => setTimeout(r, 2000).unref())]);
    // An upload in flight is not waited for long: what it had not finished ships after the next start.
    await Promise.race([this.shipper?.stop(), new Promise((r) => setTimeout(r, 2000).unref())]);
    this.o.store.close?.();
  }
}
