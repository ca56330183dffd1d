// `cairn serve --archive URL`: the server side of the archive (docs/operations.md "Archive").
// At start it settles its generation (DATA/archive.json; a new claim under `generations/` when
// the file is absent, names another archive or holds generation 0 after a restore or a
// reclaim), takes the lease where the store honours conditional writes, and runs the shipper
// (lib/archive) over every registered, not purged repository. An archive is known by the id
// stored in it (`archive-id`), so another spelling of its URL is the same archive; a directory
// once fenced stays fenced (archive.json says so) until `cairn archive reclaim`. All of it runs
// beside the commits: an unreachable store delays shipping and shows in /healthz, it never
// fails a commit or the start.
import { LIFECYCLE_PURGED } from '../domain/repository.js';
import type { RetentionPolicy } from '../domain/archive-retention.js';
import { pruneArchive } from '../archive/prune.js';
import { verifyArchive } from './archive-verify.js';
import { handedOverRefusal, readArchiveFile, writeArchiveFile, type ArchiveFile, type HandoverRequest, type HandoverResult } from '../archive/archive-file.js';
import { canonicalArchiveUrl, sameArchiveUrl } from '../archive/archive-url.js';
import { encodeRegistryRecord } from '../store/registry-file.js';
import { crashPoint } from '../store/crash-point.js';
import type { ObjectStore } from '../archive/object-store.js';
import { EncryptedStore } from '../archive/encryption.js';
import { claimGeneration, ensureArchiveId, Lease, newerClaim, readArchiveId, type ClaimReason } from '../archive/generations.js';
import { retryDelayMs, Shipper, type ArchiveStatus, type ShipSource } from '../archive/shipper.js';
import type { CairnService } from './service.js';
import { Busy, Conflict } from '../domain/errors.js';
import type { ContentStore } from '../store/content-store.js';

const LEASE_LOST = (gen: bigint): string => `fenced: another writer took the lease of generation ${gen}`;

/**
 * The fields of a 503 for a commit made here but not acknowledged: the write happened, so the
 * answer says so (`committed: true`) and asks for no retry (no Retry-After, lib/http/errors.ts).
 */
const COMMITTED = { committed: true };

export interface ArchivingOptions {
  url: string;
  store: ObjectStore & { close?: () => void };
  intervalMs?: number;
  lagWarnSeconds?: number;
  checkpointRanges?: number;
  leaseSeconds?: number;
  /** Tests: packs shipped per round of one repository. */
  packsPerRound?: number;
  /** Objects uploaded at once (serve --archive-concurrency). */
  concurrency?: number;
  /** Incremental manifests between two full ones (serve --archive-manifest-chain). */
  manifestChain?: number;
  /**
   * serve --archive-sync: a commit is answered only once a manifest covering it is stored; one
   * still not covered after `syncTimeoutMs` (default 30 s) is answered 503 (it is durable here,
   * and the archive gets it when the store answers again).
   */
  sync?: boolean;
  syncTimeoutMs?: number;
  /**
   * What else a commit waits for before it is answered, after --archive-sync's coverage (serve
   * --lease: the writer lease still held, lib/authority/writer-lease.ts); rejected: the callers get its error.
   */
  gate?: (index: number, generation: number) => Promise<void>;
  /** Prune the archive by a retention policy now and then (serve --archive-keep); never without it. */
  prune?: { policy: RetentionPolicy; graceMs: number; everyMs: number };
  /**
   * Verify the archive now and then (serve --archive-verify-every): each run restores one
   * repository chosen at random, at its newest manifest, into a temporary directory and checks it
   * (lib/authority/archive-verify.ts); a failure is an archive.verify_failed event.
   */
  verify?: { everyMs: number };
  /**
   * Release the writer's lease in a consensus store (serve --lease), if it holds one: called once
   * by a handover, after everything is shipped and the handover recorded, before it answers.
   */
  releaseLease?: () => Promise<void>;
}

/** The service's repositories as the shipper sees them. */
export function serviceSource(service: CairnService): ShipSource {
  return {
    // A read replica is its owner's to ship.
    repositories: () => service.registry.all().filter((r) => r.lifecycle_kind !== LIFECYCLE_PURGED && !service.isReplica(r.repository_index)).map((r) => r.repository_index),
    purged: () => service.registry.all().filter((r) => r.lifecycle_kind === LIFECYCLE_PURGED).map((r) => r.repository_index),
    committed: (index) => service.commitOf(index) ?? 0,
    registryRecord: (index) => encodeRegistryRecord(service.record(index)),
    accessLogFile: service.layout.accessLogFile,
    capture: async (index, wants) => {
      const { store } = await service.opened(index);
      await sealedBeforeShipping(index, store);
      return store.capture(wants);
    },
  };
}

/**
 * What a server from before sealing wrote in clear (webhook secrets, drafts) is never shipped
 * (storage-layout.md §17.2): a reseal that failed at the open is tried again here, and while it
 * fails the repository is not shipped; the round's error (/healthz archive.last_error) says why.
 */
async function sealedBeforeShipping(index: number, store: ContentStore): Promise<void> {
  if (store.fieldsInClear === 0) return;
  let why = '';
  try {
    await store.sealInClear();
  } catch (err) {
    why = `: ${(err as Error).message}`;
  }
  if (store.fieldsInClear > 0) throw new Error(`repository ${index} is not shipped: its workflow.log holds ${store.fieldsInClear} webhook or draft records in clear and sealing them failed${why}`);
}

export class Archiving {
  private shipper: Shipper | null = null;
  private generation = 0n;
  private startError: string | null = null;
  private fencedBy: string | null = null;
  private fencedWhy: string | null = null;
  /** The archive's URL in its one spelling. */
  private readonly url: string;
  private stopped = false;
  private leaseTimer: NodeJS.Timeout | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;
  private pruning: Promise<void> | null = null;
  /** The last prune's report (or failure), for /healthz. */
  private verifyTimer: NodeJS.Timeout | null = null;
  private verifying: Promise<void> | null = null;
  private lastVerify: { at: string; ok: boolean; repositories: { repository: number; manifest: string | null; ok: boolean; problem: string | null }[] } | { at: string; error: string } | null = null;
  private lastPrune: { at: string; deleted_manifests: number; deleted_objects: number; deleted_bytes: number } | { at: string; error: string } | null = null;

  /** archive.json as this writer holds it (set once its generation is settled). */
  private local: ArchiveFile | null = null;
  /** Set while a handover stops commits (and after it): the reason every transaction is refused with, before it runs. */
  private frozen: string | null = null;
  /** The handover under way, and the one done (then this server writes nothing more). */
  private handing: Promise<HandoverResult> | null = null;
  private handedOver: HandoverResult | null = null;
  private leaseReleased = false;
  private releasing: Promise<void> | null = null;

  constructor(private readonly service: CairnService, private readonly o: ArchivingOptions) {
    this.url = canonicalArchiveUrl(o.url);
    // From the first commit on: the lag counts from each commit's time, and with --archive-sync
    // no commit is answered before a manifest covers it (even before shipping could start).
    service.setCommitHooks((index) => ({
      committed: (generation) => this.shipper?.noteCommit(index, generation) ?? this.early.push([index, generation, Date.now()]),
      ...(o.sync || o.gate ? { acknowledge: (generation: number) => this.acknowledgeAll(index, generation) } : {}),
      admit: () => { if (this.frozen !== null) throw new Busy(this.frozen); },
    }));
    void this.start();
  }

  /**
   * POST /archive/handover (docs/operations.md "Planned switchover"): stop accepting writes at
   * once (503 naming the successor), let the writes under way finish, refuse every later
   * transaction before it runs (background work too), ship until a stored manifest covers the
   * last commit of every repository and access.log is shipped, record the handover in
   * archive.json (a restart stays read-only), release the lease, and answer what was shipped.
   * Called again it answers the same. When it cannot finish (the store down, writes that do
   * not end, the bound passed) nothing is recorded, the server accepts writes again, and the
   * call fails 503 naming the cause: the standby must not be promoted then.
   */
  handover(request: HandoverRequest): Promise<HandoverResult> {
    if (this.handedOver) return this.finishHandover(this.handedOver);
    return (this.handing ??= this.handOver(request).finally(() => { this.handing = null; })).then((r) => this.finishHandover(r));
  }

  private async handOver(request: HandoverRequest): Promise<HandoverResult> {
    if (this.fencedBy || this.shipper?.status().state === 'fenced') {
      throw new Conflict(`this writer was fenced (${this.status().last_error ?? 'a newer generation was claimed'}): the archive is no longer its to hand over`);
    }
    const shipper = this.shipper;
    if (!shipper || !this.local) throw new Busy(`the archive shipping has not started yet (${this.startError ?? 'starting'}): nothing was handed over; this server still writes; retry`);
    const deadline = Date.now() + request.timeoutMs;
    const left = (): number => Math.max(0, deadline - Date.now());
    const to = request.successor;
    const refusal = `handing the archive over${to ? ` to ${to}` : ''}: this server accepts no more writes${to ? `; send them to ${to}` : ''}`;
    const log = this.service.log;
    log.info({ archive: this.url, successor: to }, 'archive: handing over; writes are refused from now on');
    // 1. No new mutating request from here on (the HTTP layer answers 503 before reading it).
    this.service.readOnly = refusal;
    try {
      // 2. Those under way end: their commits were (or are being) acknowledged, so they ship.
      if (!(await this.service.writesDrained(left()))) {
        throw new Busy(`${this.service.writesUnderWay} writes were still under way after ${request.timeoutMs / 1000} s`);
      }
      // 3. No transaction at all from here on, background work (land queue, maintenance) included.
      this.frozen = refusal;
      // 4. Ship until every repository's newest commit is covered, access.log too; a transaction
      // admitted just before the freeze may commit meanwhile: then ship that one as well.
      const source = serviceSource(this.service);
      let targets: Map<number, number>;
      for (;;) {
        for (const index of source.repositories()) await this.service.ensureOpen(index).catch(() => {});
        targets = new Map(source.repositories().map((index) => [index, source.committed(index)]));
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the archive did not take every commit within ${request.timeoutMs / 1000} s (${shipper.status().last_error ?? 'still shipping'})`)), left());
        });
        try {
          await Promise.race([late, shipper.flush(targets)]);
        } finally {
          clearTimeout(timer);
        }
        if (source.repositories().every((index) => source.committed(index) === targets.get(index))) break;
      }
      const result: HandoverResult = {
        url: this.url,
        archive_id: this.local.archive_id ?? '',
        generation: this.generation.toString(),
        successor: to,
        handed_over_at: new Date().toISOString(),
        repositories: [...targets].map(([repository, commit]) => {
          const m = shipper.manifestOf(repository);
          return { repository, commit: String(commit), manifest: m && m.commit === BigInt(commit) ? m.manifest : '' };
        }),
        access_log_length: shipper.accessLength(),
      };
      // 5. Recorded before it is answered: a restart of this directory stays read-only.
      await writeArchiveFile(this.service.layout.archiveFile, { ...this.local, handed_over: result });
      this.local = { ...this.local, handed_over: result };
      this.handedOver = result;
      if (this.leaseTimer) clearInterval(this.leaseTimer);
      this.service.readOnly = handedOverRefusal(result);
      log.info({ archive: this.url, successor: to, repositories: result.repositories.length }, 'archive: handed over; this server writes nothing more');
      return result;
    } catch (err) {
      // Not handed over: the standby must not take over; this server goes on writing.
      this.frozen = null;
      if (this.service.readOnly === refusal) this.service.readOnly = null;
      const why = (err as Error).message;
      log.warn({ archive: this.url, problem: why }, 'archive: handover failed; accepting writes again');
      if (err instanceof Conflict) throw err;
      throw new Busy(`not handed over: ${why}; nothing was recorded and this server accepts writes again (do not promote the standby; retry the handover)`);
    }
  }

  /**
   * serve --cluster, a move's handoff: ship until a stored manifest covers repository `index`'s
   * newest commit (its writes are held by then; a transaction admitted just before may commit
   * meanwhile: then that one too), and answer that commit and manifest.
   */
  async flushRepository(index: number, timeoutMs: number): Promise<{ commit: number; manifest: string }> {
    if (this.fencedBy || this.shipper?.status().state === 'fenced') throw new Conflict(`this node's archive writer was fenced (${this.status().last_error ?? 'a newer generation was claimed'})`);
    const shipper = this.shipper;
    if (!shipper) throw new Busy(`the archive shipping has not started yet (${this.startError ?? 'starting'}); retry`);
    const source = serviceSource(this.service);
    await this.service.ensureOpen(index);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const commit = source.committed(index);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the archive did not take commit ${commit} of repository ${index} within ${timeoutMs / 1000} s (${shipper.status().last_error ?? 'still shipping'})`)), Math.max(0, deadline - Date.now()));
      });
      try {
        await Promise.race([late, shipper.flush(new Map([[index, commit]]))]);
      } finally {
        clearTimeout(timer);
      }
      if (source.committed(index) !== commit) continue;
      const m = shipper.manifestOf(index);
      if (!m || m.commit !== BigInt(commit)) throw new Error(`the archive holds no manifest of commit ${commit} of repository ${index}`);
      return { commit, manifest: m.manifest };
    }
  }

  /**
   * serve --cluster, a stop: ship until a manifest covers every repository's newest commit (the
   * requests have ended), within `timeoutMs`, before the node leaves the cluster: another node
   * failing its repositories over then finds every acknowledged commit. Why not, when it did not finish.
   */
  async flushAll(timeoutMs: number): Promise<string | null> {
    if (this.fencedBy || this.handedOver) return 'this writer no longer ships (fenced, or handed over)';
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((resolve) => { timer = setTimeout(() => resolve(`not done within ${timeoutMs / 1000} s (${this.shipper ? this.shipper.status().last_error ?? 'still shipping' : this.startError ?? 'the shipping had not started'})`), timeoutMs); });
    try {
      return await Promise.race([late, (async () => {
        // Started moments ago (its lease, its generation): it ships once it has.
        const shipper = this.shipper ?? (await (this.shipperReady ??= new Promise<Shipper>((r) => { this.markShipperReady = r; })));
        const source = serviceSource(this.service);
        const targets = new Map(source.repositories().filter((index) => this.service.isOpen(index)).map((index) => [index, source.committed(index)]));
        return shipper.flush(targets).then(() => null, (err: Error) => err.message);
      })()]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** serve --cluster: repository `index` left this node or arrived; the shipper reads its state again. */
  forgetRepository(index: number): void {
    this.shipper?.forget(index);
  }

  /** serve --cluster: repository `index` arrived on this node (its purge marker, if any, goes). */
  arrivedRepository(index: number): void {
    this.shipper?.arrived(index);
  }

  /** The lease goes once the handover is recorded (the next writer may take it then); a failed release is retried by calling again. */
  private async finishHandover(result: HandoverResult): Promise<HandoverResult> {
    if (this.leaseReleased || !this.o.releaseLease) return result;
    const release = this.o.releaseLease;
    try {
      await (this.releasing ??= release().finally(() => { this.releasing = null; }));
    } catch (err) {
      throw new Busy(`handed over (this server writes nothing more), but its lease could not be released: ${(err as Error).message}; call the handover again to retry the release`);
    }
    this.leaseReleased = true;
    return result;
  }

  /** Commits seen before the shipper started: [repository, generation, ms]. */
  private early: [number, number, number][] = [];
  private shipperReady: Promise<Shipper> | null = null;
  private markShipperReady: ((s: Shipper) => void) | null = null;

  /** The commit hook: the archive's coverage (--archive-sync), then the caller's gate (--lease) at the very end. */
  private async acknowledgeAll(index: number, generation: number): Promise<void> {
    if (this.o.sync) await this.acknowledge(index, generation);
    await this.o.gate?.(index, generation);
  }

  /**
   * Another writer took the writer lease (serve --lease): stop shipping and record the fence in
   * archive.json as a generation fence is (`by`: the new writer's generation when known, else
   * this one's), so no restart of this directory writes to the archive again.
   */
  async fenceByLease(by: string | null, why: string): Promise<void> {
    const newer = by ?? this.generation.toString();
    this.leaseWhy = why;
    const local = await readArchiveFile(this.service.layout.archiveFile);
    // Already fenced by the new writer's generation claim: the record says by whom too.
    if (local) await this.recordFence(local, local.fenced?.by ?? newer, local.fenced && !local.fenced.why.startsWith(why) ? `${why}; ${local.fenced.why}` : why);
    if (this.shipper) this.shipper.fence(newer, why);
    else this.noteFenced(newer);
  }

  /** Why the writer lease was lost to another writer (serve --lease), once it was. */
  private leaseWhy: string | null = null;

  /** serve --archive-sync: resolve once a stored manifest covers the commit, or fail with 503 (the commit stays durable here). */
  private async acknowledge(index: number, generation: number): Promise<void> {
    const timeout = this.o.syncTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Busy(`committed on this server (commit ${generation} of repository ${index}), but no archive manifest covers it after ${timeout / 1000} s (--archive-sync): the archive gets it once the store answers; see cairn archive status`, COMMITTED)), timeout);
      timer.unref();
    });
    try {
      await Promise.race([late, (async () => {
        const shipper = this.shipper ?? (await (this.shipperReady ??= new Promise<Shipper>((r) => { this.markShipperReady = r; })));
        try {
          await shipper.covered(index, generation);
        } catch (err) {
          throw new Busy(`committed on this server (commit ${generation} of repository ${index}), but not acknowledged: ${(err as Error).message}`, COMMITTED);
        }
      })()]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** /healthz and `cairn archive status`. */
  status(): ArchiveStatus {
    // The key new objects are sealed with (--archive-key-file), never the key itself.
    const store = this.o.store;
    const sealed_with = store instanceof EncryptedStore && store.keys ? store.keys.writing.id : null;
    if (this.shipper) {
      const shipping = this.shipper.status();
      return {
        ...shipping,
        sealed_with,
        ...(this.leaseWhy && shipping.state === 'fenced' ? { last_error: this.leaseWhy } : {}),
        ...(this.handedOver && shipping.state !== 'fenced' ? { state: 'handed_over' as const, last_error: null } : {}),
        ...(this.o.prune ? { last_prune: this.lastPrune } : {}),
        ...(this.o.verify ? { last_verify: this.lastVerify } : {}),
      };
    }
    return {
      url: this.url,
      generation: this.generation.toString(),
      state: this.fencedBy ? 'fenced' : this.handedOver ? 'handed_over' : this.startError ? 'error' : 'idle',
      sync: this.o.sync === true,
      sealed_with,
      lag_seconds: 0,
      uncovered_commits: 0,
      repositories: [],
      last_error: this.fencedBy ? this.fencedWhy : this.startError,
      last_shipped_at: null,
    };
  }

  private note(type: string, data: Record<string, unknown>): void {
    void this.service.registry.noteEvents([{ type, data: { archive: this.url, ...data } }]);
  }

  /** archive.fenced: one per repository the writer shipped (the registry feed's events each name a repository). */
  private noteFenced(newer: string): void {
    const events = serviceSource(this.service).repositories().map((index) => ({ type: 'archive.fenced', data: { repository_index: index, archive: this.url, generation: this.generation.toString(), newer } }));
    void this.service.registry.noteEvents(events);
  }

  /**
   * Record the fence in archive.json, so that no later start of this directory claims the
   * archive back (whatever URL it is given) until an operator runs `cairn archive reclaim`.
   */
  private async recordFence(local: ArchiveFile, by: string, why: string): Promise<void> {
    // Recorded before it shows: what /healthz calls fenced is already fenced on disk.
    await writeArchiveFile(this.service.layout.archiveFile, { ...local, fenced: { by, at: new Date().toISOString(), why } });
    this.fencedBy = by;
    this.fencedWhy = why;
  }

  private async start(): Promise<void> {
    const log = this.service.log;
    let failures = 0;
    for (;;) {
      if (this.stopped) return;
      try {
        await this.settle();
        this.startError = null;
        return;
      } catch (err) {
        this.startError = (err as Error).message;
        log.warn({ archive: this.url, problem: this.startError }, 'archive: cannot start shipping yet; retrying');
        await new Promise((r) => setTimeout(r, retryDelayMs(++failures, 250)).unref());
      }
    }
  }

  private async settle(): Promise<void> {
    const { store } = this.o;
    const url = this.url;
    const log = this.service.log;
    const file = this.service.layout.archiveFile;
    let local = await readArchiveFile(file);
    if (local?.fenced) {
      // Fenced before: this directory's history is no longer the archive's. Only an operator
      // takes the archive back (cairn archive reclaim), never a restart, whatever the URL.
      this.generation = BigInt(local.generation);
      this.fencedBy = local.fenced.by;
      this.fencedWhy = `${local.fenced.why} (recorded in archive.json at ${local.fenced.at}; cairn archive reclaim --data DIR claims the archive again)`;
      log.error({ archive: url, generation: local.generation, newer: local.fenced.by, recorded_at: local.fenced.at }, 'archive: this data directory was fenced by a newer writer; it ships nothing until cairn archive reclaim');
      return;
    }
    if (local?.handed_over) {
      // Handed over before: the next writer holds the archive; this directory writes nothing (serve.ts keeps it read-only).
      this.generation = BigInt(local.generation);
      this.local = local;
      this.handedOver = local.handed_over;
      this.leaseReleased = true;
      this.frozen = handedOverRefusal(local.handed_over);
      log.warn({ archive: url, generation: local.generation, successor: local.handed_over.successor, at: local.handed_over.handed_over_at }, 'archive: this data directory handed the archive over; it ships and writes nothing until cairn archive reclaim');
      return;
    }
    const conditional = await store.conditionalPut();
    const storedId = await readArchiveId(store);
    // The same archive: the same id, or (a file from before ids) the same location however spelled.
    const same = local !== null && (local.archive_id !== undefined ? local.archive_id === storedId : sameArchiveUrl(local.url, url));
    if (local && same && local.generation !== '0') {
      this.generation = BigInt(local.generation);
      const id = storedId ?? (await ensureArchiveId(store, conditional));
      if (local.archive_id !== id || local.url !== url) {
        local = { ...local, url, archive_id: id };
        await writeArchiveFile(file, local);
      }
    } else {
      const reason: ClaimReason = local?.reclaimed_at && same ? 'reclaim' : local ? 'restore' : 'first';
      const id = storedId ?? (await ensureArchiveId(store, conditional));
      const claim = await claimGeneration(store, reason, conditional);
      this.generation = claim.generation;
      local = { url, archive_id: id, generation: claim.generation.toString() };
      await writeArchiveFile(file, local);
      log.info({ archive: url, generation: claim.generation.toString(), reason: claim.reason }, 'archive: claimed a generation');
    }
    const newer = await newerClaim(store, this.generation, true);
    if (newer !== null) {
      await this.recordFence(local, newer.toString(), `fenced: generation ${newer} was claimed after ${this.generation}`);
      log.error({ archive: url, generation: this.generation.toString(), newer: this.fencedBy }, 'archive: a newer writer holds the archive; shipping stopped');
      this.noteFenced(newer.toString());
      return;
    }
    const recorded = local;
    this.local = local;
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
      concurrency: this.o.concurrency,
      manifestChain: this.o.manifestChain,
      sync: this.o.sync,
      log,
      conditional,
      crashPoint,
      onFenced: (info) => {
        this.noteFenced(info.newer);
        if (this.leaseWhy) return; // fenceByLease recorded it, saying by whom
        const why = (info.newer === this.generation.toString() ? LEASE_LOST(this.generation) : `fenced: generation ${info.newer} was claimed after ${this.generation}`);
        this.recordFence(recorded, info.newer, why).catch((err: Error) => log.error({ archive: url, problem: err.message }, 'archive: could not record the fence in archive.json'));
      },
      onLagging: (info) => this.note('archive.lagging', { repository_index: info.repository, lag_seconds: info.lag_seconds, uncovered_commits: info.uncovered_commits }),
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
    for (const [index, generation, at] of this.early.splice(0)) shipper.noteCommit(index, generation, at);
    this.markShipperReady?.(shipper);
    if (lease) {
      const l = lease;
      this.leaseTimer = setInterval(() => {
        void l.renew().then((ok) => { if (!ok) shipper.fence(this.generation.toString(), LEASE_LOST(this.generation)); }, () => {});
      }, l.renewEveryMs);
      this.leaseTimer.unref();
    }
    shipper.start();
    if (this.o.prune) this.schedulePrune(Math.min(this.o.prune.everyMs, 10 * 60_000));
    if (this.o.verify) this.scheduleVerify(this.o.verify.everyMs);
  }

  /** One verification at a time, beside the shipping; it reads the archive and writes only a temporary directory. */
  private scheduleVerify(delayMs: number): void {
    const every = this.o.verify!.everyMs;
    this.verifyTimer = setTimeout(() => {
      if (this.stopped) return;
      this.verifying = verifyArchive(this.o.store, { url: this.url, selection: { kind: 'sample', count: 1 }, concurrency: this.o.concurrency ?? 8 }).then((report) => {
        const at = new Date().toISOString();
        this.lastVerify = { at, ok: report.ok, repositories: report.repositories.map((r) => ({ repository: r.repository, manifest: r.manifest, ok: r.ok, problem: r.problem })) };
        for (const r of report.repositories) {
          if (r.ok) {
            this.service.log.info({ archive: this.url, repository: r.repository, manifest: r.manifest }, 'archive: verified');
            continue;
          }
          this.service.log.error({ archive: this.url, repository: r.repository, manifest: r.manifest, problem: r.problem }, 'archive: verification failed');
          this.note('archive.verify_failed', { repository_index: r.repository, manifest: r.manifest ?? '', problem: r.problem ?? '' });
        }
      }, (err) => {
        // The store did not answer: not a verdict on the archive; the next run tries again.
        this.lastVerify = { at: new Date().toISOString(), error: (err as Error).message };
        this.service.log.warn({ archive: this.url, problem: (err as Error).message }, 'archive: verification could not run; retrying at the next one');
      }).finally(() => {
        this.verifying = null;
        if (!this.stopped) this.scheduleVerify(every);
      });
    }, delayMs);
    this.verifyTimer.unref();
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
        this.service.log.info({ archive: this.url, ...this.lastPrune }, 'archive: pruned by the retention policy');
      }, (err) => {
        this.lastPrune = { at: new Date().toISOString(), error: (err as Error).message };
        this.service.log.warn({ archive: this.url, problem: (err as Error).message }, 'archive: prune failed; retrying at the next one');
      }).finally(() => {
        this.pruning = null;
        if (!this.stopped) this.schedulePrune(prune.everyMs);
      });
    }, delayMs);
    this.pruneTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.service.setCommitHooks(null);
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    if (this.pruneTimer) clearTimeout(this.pruneTimer);
    if (this.verifyTimer) clearTimeout(this.verifyTimer);
    await Promise.race([this.verifying, new Promise((r) => setTimeout(r, 2000).unref())]);
    await Promise.race([this.pruning, new Promise((r) => setTimeout(r, 2000).unref())]);
    // An upload in flight is not waited for long: what it had not finished ships after the next start.
    await Promise.race([this.shipper?.stop(), new Promise((r) => setTimeout(r, 2000).unref())]);
    this.o.store.close?.();
  }
}
