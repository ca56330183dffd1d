// The whole service state of one data directory: the registry and every open authority.
// `CairnService.open` is what the startup phase waits for; HTTP handlers call into it.
//
// Repositories open lazily (docs/operations.md "Serving", what a start does): `open` reads the
// registry and recovers the data directory but opens no repository authority, so a data
// directory with many repositories is ready at once. A repository opens on its first request
// (`ensureOpen`, which the router awaits before the handler), and `openAllInBackground` (started
// by `cairn serve` once it answers) opens the others one at a time, so the work that needs every
// repository (lease expiry, webhook dispatchers, staged-pack expiry, claim-next across
// repositories) covers them all soon after startup. A first request jumps that queue; concurrent
// first requests share one open. Opening runs under the repository's lifecycle mutex, so it
// never races a purge.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { Corrupt, NotFound } from '../domain/errors.js';
import {
  LIFECYCLE_PURGED,
  nowSeconds,
  type RepositoryRecord,
} from '../domain/repository.js';
import { exists, fsyncDir, mkdirDurable, removeDurable, removeTempFiles } from '../store/durable.js';
import { readIdFloors, writeIdFloors, type IdFloors } from '../store/id-floors.js';
import { OwnedElsewhere, type ClusterGate, type ClusterMovesApi, type ClusterPlacement, type ReadReplicasApi } from './cluster.js';
import type { WriterLease } from './writer-lease.js';
import { Layout } from '../store/layout.js';
import type { CommitHooks } from '../store/commit-queue.js';
import type { HandoverRequest, TakeoverExpectation } from '../archive/archive-file.js';
import { Authority } from './authority.js';
import { GitExporter } from './git-export.js';
import { DEFAULT_JOB_POLICY, type JobPolicy } from '../domain/jobs.js';
import { LIFECYCLE_ACTIVE, LIFECYCLE_RETIRING, RESERVED_NAME } from '../domain/repository.js';
import type { ClaimResult } from './jobs.js';
import { Retirement } from './retirement.js';
import { RestoreSessions } from './restore.js';
import { Mutex } from 'async-mutex';
import type { Log } from './logger.js';
import type { AuthorityHost } from './host.js';
import { Registry, type RegistrationResult } from './registry.js';
import { EventFeeds, registryEventStream, type EventFeedOptions, type FeedHost } from './event-feed.js';
import { DEFAULT_WEBHOOK_NETWORK, WebhookDispatcher, type WebhookNetwork, type WebhookPolicy } from './webhook-dispatcher.js';
import type { WebhookTargets } from '../domain/webhook-targets.js';
import type { QueueOptions } from '../domain/workflow/land-queue.js';
import { DEFAULT_MAX_SNAPSHOT_PATHS } from '../domain/tree-size.js';
import { NO_GIT_REPOSITORY_SHADOWS, NO_GIT_SHADOWS, type GitRepositoryShadowSource, type GitShadowSource } from './git-shadow.js';
import { GitMirrorRunner, type MirrorPolicy } from './git-mirror-runner.js';
import { MirrorSlots } from './mirror-slots.js';
import { openSealKey } from '../store/seal-key.js';
import type { SealKey } from '../domain/sealing.js';
import { NO_GROUPS, type GroupMembers, type RepositoryRules } from '../domain/workflow/repo-rules.js';
import { NO_GRANTS, STRICT_MIRROR_TARGETS, type CredentialGrants, type MirrorTargets } from '../domain/git-mirrors.js';

export interface ServiceOptions {
  dataDir: string;
  log: Log;
  jobPolicy?: JobPolicy;
  /** The event feeds' limits, heartbeat and retention (./event-feed.ts). */
  events?: EventFeedOptions;
  /** Paths a snapshot may hold (--max-snapshot-paths; lib/domain/tree-size.ts). */
  maxSnapshotPaths?: number;
  /** Where lines are served over git (./git-shadow.ts); none by default. */
  gitShadows?: GitShadowSource;
  /**
   * The rules a newly registered repository starts with (docs/api.md "Repository rules"; e.g.
   * TEAM_DEFAULT_RULES when the server names its callers). Absent: none are written, and the
   * repository keeps the gates of a repository without rules.
   */
  defaultRules?: Partial<RepositoryRules>;
  /** Who belongs to a group, for the rules' group names (code owners, land_allowed, bypass_allowed); default: nobody. */
  groupMembers?: GroupMembers;
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
  /** Set by startLandQueues (serving only). */
  private queueOptions: QueueOptions | null = null;
  /** Set by startWebhooks (serving only: offline tools open the service without sending anything). */
  private webhookPolicy: WebhookPolicy | null = null;
  private webhookNetwork: WebhookNetwork = DEFAULT_WEBHOOK_NETWORK;
  private readonly dispatchers = new Map<number, WebhookDispatcher>();
  /** Set by startGitRefresh (serving only): exporters follow their lines' moves in the background. */
  private gitRefresh = false;
  /** Each open authority's git exporter (its shadow repository, docs/git.md "Export"), made on first use. */
  private readonly gitExporters = new Map<number, GitExporter>();
  /** Set by startGitMirrors (serving only): mirrors push in the background. */
  private mirrorPolicy: MirrorPolicy | null = null;
  private mirrorSlots: MirrorSlots | null = null;
  private readonly mirrorRunners = new Map<number, GitMirrorRunner>();
  private restoreSessions: RestoreSessions | null = null;
  /** Opens under way, by repository index: concurrent first uses share one. */
  private readonly opening = new Map<number, Promise<void>>();
  /** Requests under way per repository (`enter`), which `quiesce` waits for. */
  private readonly inFlight = new Map<number, number>();
  /** Repositories quiesced for a reopen: requests wait for the gate, lifted when the lifecycle section ends. */
  private readonly gates = new Map<number, { wait: Promise<void>; lift: () => void }>();
  private readonly drainWaiters = new Map<number, () => void>();
  /** Set by openAllInBackground: resolves once every repository has been opened (or failed to). */
  private allOpened: Promise<void> | null = null;
  private closed = false;
  /** The event feeds of every repository (docs/api.md "Events"). */
  readonly feeds: EventFeeds;
  /** The archive's status (/healthz `archive`), set while `serve --archive` ships (./archiving.ts). */
  archiveStatus: (() => object) | null = null;
  /** Per repository, what its commits tell the archive and wait for (./archiving.ts); null: nothing. */
  private commitHooks: ((index: number) => CommitHooks) | null = null;
  /**
   * Set while the server is a read-only follower of an archive (serve --follow, ./follower.ts):
   * the reason every mutating request is refused with (503). Null: writable.
   */
  readOnly: string | null = null;

  /** serve --lease: why a mutating request is refused now (the writer lease not held; ./writer-lease.ts), or null. */
  writeRefusal: (() => string | null) | null = null;
  /** The writer lease's state (/healthz `lease`), with --lease. */
  leaseStatus: (() => object) | null = null;
  /**
   * The writer lease this server holds or tries for (serve --lease; ./writer-lease.ts), for a
   * planned handover: `stopAcknowledging(reason, successor)`, then `release()`. Null without --lease.
   */
  writerLease: WriterLease | null = null;
  /** serve --cluster: who owns which repository (./cluster.ts); null: a single server. */
  cluster: ClusterPlacement | null = null;
  /** serve --cluster: moves and failovers of repositories between nodes (./cluster-moves.ts). */
  moves: ClusterMovesApi | null = null;
  private clusterRegistrations: Promise<unknown> = Promise.resolve();
  /**
   * Per repository, per id space, the highest sequence an earlier writer may have handed out
   * (serve --lease: read from etcd at a takeover; DATA/id-floors.json keeps them across a restart).
   */
  private idFloors: IdFloors = new Map();

  /** The highest sequence used per id space of an open repository, or null when it is not open. */
  idHighs(index: number): Record<string, number> | null {
    const a = this.authorities.get(index);
    return a instanceof Authority ? a.idHighs() : null;
  }

  /** Raise the id floors (never lower them), write them durably, and give them to the open authorities. */
  async setIdFloors(floors: Map<number, Record<string, number>>): Promise<void> {
    for (const [index, spaces] of floors) {
      const mine = { ...(this.idFloors.get(index) ?? {}) };
      for (const [space, n] of Object.entries(spaces)) mine[space] = Math.max(mine[space] ?? 0, n);
      this.idFloors.set(index, mine);
    }
    await writeIdFloors(this.layout.idFloorsFile, this.idFloors);
    for (const [index, a] of this.authorities) if (a instanceof Authority) a.store.idFloors = this.idFloors.get(index) ?? {};
  }

  /** DATA/id-floors.json, when a takeover wrote one. */
  private async loadIdFloors(): Promise<void> {
    this.idFloors = await readIdFloors(this.layout.idFloorsFile);
  }

  /** Give every authority, open now or later, the commit hooks of `make` (null: none). */
  setCommitHooks(make: ((index: number) => CommitHooks) | null): void {
    this.commitHooks = make;
    for (const [index, a] of this.authorities) if (a instanceof Authority) a.store.setCommitHooks(this.hooksOf(index));
  }

  /**
   * serve --cluster: what every commit of a repository passes besides the archive's hooks: a
   * transaction is refused before it runs while the repository is handed to another node or
   * this node's membership lapsed, and a commit is acknowledged only while the membership holds.
   */
  setClusterGate(gate: ClusterGate | null): void {
    this.clusterGate = gate;
    for (const [index, a] of this.authorities) if (a instanceof Authority) a.store.setCommitHooks(this.hooksOf(index));
  }

  private clusterGate: ClusterGate | null = null;

  /** The commit hooks of repository `index`: the archive's, then the cluster's gate. */
  private hooksOf(index: number): CommitHooks {
    const base = this.commitHooks?.(index) ?? {};
    const gate = this.clusterGate;
    if (!gate) return base;
    return {
      ...base,
      admit: () => { base.admit?.(); gate.admit(index); },
      acknowledge: async (generation) => { await base.acknowledge?.(generation); gate.acknowledge(index, generation); },
    };
  }
  /** The follower's state (/healthz `follow`), while following or after a promotion. */
  followStatus: (() => object) | null = null;
  /** POST /archive/promote: turn this follower into the writer; null when the server does not follow. `expect`: a switchover's commits (./follower.ts). */
  promote: ((signal?: AbortSignal, expect?: TakeoverExpectation) => Promise<object>) | null = null;
  /** POST /archive/handover: stop writing and hand the archive to the next writer (./archiving.ts); null when the server does not ship. */
  handover: ((request: HandoverRequest) => Promise<object>) | null = null;
  /** Mutating requests under way (`beginWrite`), which a handover waits for. */
  private writes = 0;
  private writesIdle: (() => void)[] = [];

  /** Mutating requests under way per repository, which a cluster handoff waits for. */
  private readonly repoWrites = new Map<number, { n: number; idle: (() => void)[] }>();

  /** Count a mutating request (of repository `index`, if any) until the returned function is called (idempotent). */
  beginWrite(index?: number): () => void {
    this.writes++;
    let w: { n: number; idle: (() => void)[] } | undefined;
    if (index !== undefined) {
      w = this.repoWrites.get(index);
      if (!w) this.repoWrites.set(index, (w = { n: 0, idle: [] }));
      w.n++;
    }
    let left = false;
    return () => {
      if (left) return;
      left = true;
      if (w && --w.n === 0) {
        if (this.repoWrites.get(index!) === w) this.repoWrites.delete(index!);
        for (const wake of w.idle.splice(0)) wake();
      }
      if (--this.writes > 0) return;
      for (const wake of this.writesIdle.splice(0)) wake();
    };
  }

  /** Whether every mutating request of repository `index` under way has ended within `timeoutMs`. */
  async repositoryWritesDrained(index: number, timeoutMs: number): Promise<boolean> {
    const w = this.repoWrites.get(index);
    return !w || idleWithin(w.idle, timeoutMs);
  }

  /** Whether every mutating request under way has ended within `timeoutMs` (a handover waits for them). */
  async writesDrained(timeoutMs: number): Promise<boolean> {
    return this.writes === 0 || idleWithin(this.writesIdle, timeoutMs);
  }

  /** Mutating requests under way now. */
  get writesUnderWay(): number {
    return this.writes;
  }
  /** The server's seal key (DATA/seal.key): every authority writes and reads its sealed fields with it. */
  sealKey: SealKey | null = null;
  /** Where lines are served over git (./git-shadow.ts); every authority asks it at each git request. */
  gitShadows: GitShadowSource = NO_GIT_SHADOWS;
  /** The repository's URL (every line): served from the exporter's shadow whenever lines are (no test source names one). */
  gitRepositoryShadows: GitRepositoryShadowSource = NO_GIT_REPOSITORY_SHADOWS;
  /** The rules a newly registered repository starts with (null: none written). */
  defaultRules: Partial<RepositoryRules> | null = null;
  /** Who belongs to a group (the rules' group names); asked at each judgement. */
  groupMembers: GroupMembers = NO_GROUPS;

  private constructor(
    readonly layout: Layout,
    readonly registry: Registry,
    readonly log: Log,
    readonly jobPolicy: JobPolicy,
    events: EventFeedOptions = {},
    readonly maxSnapshotPaths = DEFAULT_MAX_SNAPSHOT_PATHS,
  ) {
    this.feeds = new EventFeeds(this, events);
  }

  static async open(options: ServiceOptions): Promise<CairnService> {
    const layout = new Layout(options.dataDir);
    await fsp.mkdir(layout.repositoriesDir, { recursive: true });
    // Inside a repository, temp files are removed when it opens (Authority.open): only what lies
    // directly under repositories/ (an interrupted purge's directory) is removed here.
    for (const file of await removeTempFiles(options.dataDir, (dir) => layout.sweepsShallow(dir))) {
      if (!file.startsWith(layout.repositoriesDir)) options.log.warn({ file }, 'recovery removed an unfinished temp file');
    }
    // Quarantines of pushes a stop cut short (docs/git.md "Push for review"): never part of the store.
    await fsp.rm(layout.gitQuarantineDir, { recursive: true, force: true });
    const registry = await Registry.open(layout);
    // A read replica's record (serve --cluster --read-replicas) is never announced by this node's registry feed.
    const replicaMarks = new Set((await fsp.readdir(layout.clusterReplicasDir).catch(() => [] as string[])).filter((n) => /^(0|[1-9][0-9]{0,9})$/.test(n)).map(Number));
    registry.unannounced = (index) => replicaMarks.has(index);
    for (const note of await registry.openEvents()) options.log.warn({ note }, 'recovery');
    const service = new CairnService(layout, registry, options.log, options.jobPolicy ?? DEFAULT_JOB_POLICY, options.events, options.maxSnapshotPaths);
    // Webhook secrets and drafts are sealed with it (storage-layout.md §17.2); made on the first start.
    service.sealKey = await openSealKey(layout.sealKeyFile, true);
    service.gitShadows = options.gitShadows ?? service.exportedShadows;
    if (!options.gitShadows) service.gitRepositoryShadows = service.exportedRepository;
    service.defaultRules = options.defaultRules ?? null;
    if (options.groupMembers) service.groupMembers = options.groupMembers;
    if (registry.events) service.feeds.attachRegistry(registryEventStream(registry.events));
    await service.removeUnregisteredDirectories();
    await service.loadIdFloors();
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

  /** Serialize lifecycle changes (retirement start, abort, purge, a follower's apply) of one repository; a `quiesce` in the section lasts until it ends. */
  lifecycleExclusive<T>(index: number, fn: () => Promise<T>): Promise<T> {
    let mutex = this.lifecycleMutexes.get(index);
    if (!mutex) {
      mutex = new Mutex();
      this.lifecycleMutexes.set(index, mutex);
    }
    return mutex.runExclusive(async () => {
      try {
        return await fn();
      } finally {
        this.liftGate(index);
      }
    });
  }

  /**
   * Admit a request to repository `index`: open it if needed, wait while it is quiesced for a
   * reopen, and count it until the returned function is called (idempotent). A response that
   * streams for long (an event stream) leaves before streaming: it must not hold a reopen back.
   */
  async enter(index: number): Promise<() => void> {
    for (;;) {
      await this.ensureOpen(index);
      const gate = this.gates.get(index);
      if (!gate) break;
      await gate.wait;
    }
    this.inFlight.set(index, (this.inFlight.get(index) ?? 0) + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const n = (this.inFlight.get(index) ?? 1) - 1;
      if (n > 0) {
        this.inFlight.set(index, n);
        return;
      }
      this.inFlight.delete(index);
      this.drainWaiters.get(index)?.();
    };
  }

  /**
   * Called inside `lifecycleExclusive(index)` before the authority is closed and its files
   * replaced (a follower applying a manifest): new requests wait until the section ends (then
   * see the reopened authority), and those already under way finish first — a read in flight
   * would otherwise meet closed files. After `timeoutMs` it goes on anyway, and says so.
   */
  async quiesce(index: number, timeoutMs = 30_000): Promise<void> {
    if (!this.gates.has(index)) {
      let lift = () => {};
      const wait = new Promise<void>((resolve) => { lift = resolve; });
      this.gates.set(index, { wait, lift });
    }
    if (!this.inFlight.get(index)) return;
    let timer: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      new Promise<boolean>((resolve) => this.drainWaiters.set(index, () => resolve(true))),
      new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs); }),
    ]);
    clearTimeout(timer);
    this.drainWaiters.delete(index);
    if (!drained) this.log.warn({ repository_index: index, requests: this.inFlight.get(index) ?? 0, waited_ms: timeoutMs }, 'requests still under way when the repository closes for a reopen; they may fail');
  }

  /** Whether repository `index` is quiesced for a reopen (closed now, open again soon). */
  reopening(index: number): boolean {
    return this.gates.has(index);
  }

  private liftGate(index: number): void {
    const gate = this.gates.get(index);
    if (!gate) return;
    this.gates.delete(index);
    gate.lift();
  }

  /**
   * Lines served over git (docs/git.md "Clone and fetch"): the exporter's shadow repository,
   * brought up to the line's head before each answer (a sync of a line already exported is one
   * lookup), with only that line's branch and the patchsets' refs (refs/changes/) advertised.
   */
  private readonly exportedShadows: GitShadowSource = async (index, line) => {
    const exporter = this.gitExporter(await this.opened(index));
    const synced = await exporter.syncLine(line);
    // Every patchset's ref (docs/git.md "Fetch a patchset"), from the patchset records as they are now.
    await exporter.syncPatchsets();
    return { repoDir: exporter.root, ref: `refs/heads/${synced.line}`, alsoServed: ['refs/changes/'] };
  };

  /**
   * The repository served over git as a whole (docs/git.md "Clone and fetch"): every live line
   * exported as its branch (branches of lines gone or archived dropped), the imported tags, the
   * patchsets' refs, and HEAD on main; nothing hidden.
   */
  private readonly exportedRepository: GitRepositoryShadowSource = async (index) => {
    const exporter = this.gitExporter(await this.opened(index));
    await exporter.syncAllLines();
    await exporter.syncPatchsets();
    await exporter.syncTags();
    return { repoDir: exporter.root };
  };

  /** The git exporter of an open authority (its shadow repository under git-shadow/). */
  gitExporter(authority: Authority): GitExporter {
    let exporter = this.gitExporters.get(authority.index);
    if (!exporter || exporter.authority !== authority) {
      this.gitExporters.get(authority.index)?.stop();
      exporter = new GitExporter(this.layout.gitShadow(authority.index), authority, this.log);
      this.gitExporters.set(authority.index, exporter);
      // Only a serving, active repository refreshes its shadow in the background.
      if (this.gitRefresh) exporter.watch(() => this.registry.get(authority.index)?.lifecycle_kind === LIFECYCLE_ACTIVE);
    }
    return exporter;
  }

  /**
   * serve --cluster: repository `index` is no longer this node's to serve (it left, its arrival's
   * flip failed, a read replica went): closed once the requests under way end, its directory
   * moved to `keepAt` (set aside, or a move's start) or removed, its record a placeholder
   * (`quiet`: no registry event), its git shadow removed. Called inside lifecycleExclusive(index).
   */
  async giveUpRepository(index: number, keepAt: string | null, quiet: boolean): Promise<void> {
    await this.quiesce(index);
    this.closeAuthority(index);
    const dir = this.layout.repositoryDir(index);
    if (keepAt !== null) {
      // Moved before the registry says purged: a purged repository's directory is removed at open.
      await fsp.rm(keepAt, { recursive: true, force: true });
      await mkdirDurable(path.dirname(keepAt));
      if (await exists(dir)) {
        await fsp.rename(dir, keepAt);
        await fsyncDir(path.dirname(dir));
        await fsyncDir(path.dirname(keepAt));
      }
      await this.registry.giveUp(index, quiet);
    } else {
      // Purged first: a crash between the two leaves a directory the next open removes.
      await this.registry.giveUp(index, quiet);
      await fsp.rm(dir, { recursive: true, force: true });
    }
    await fsp.rm(this.layout.gitShadow(index), { recursive: true, force: true });
  }

  /** Close a repository's files and forget it (purge). */
  closeAuthority(index: number): void {
    this.stopMirrorRunner(index);
    this.gitExporters.get(index)?.stop();
    this.gitExporters.delete(index);
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
    await this.ensureOpen(index);
  }

  /**
   * Open repository `index` if it is registered, not purged and not open yet (a failure to open
   * is kept as its unavailable entry, like at startup). Concurrent calls share one open.
   */
  ensureOpen(index: number): Promise<void> {
    // An open under way (its retention included) is waited for even once its entry is set.
    let pending = this.opening.get(index);
    if (!pending && (this.authorities.has(index) || this.closed)) return Promise.resolve();
    if (!pending) {
      pending = this.lifecycleExclusive(index, async () => {
        const record = this.registry.get(index);
        if (!record || record.lifecycle_kind === LIFECYCLE_PURGED || this.authorities.has(index) || this.closed) return null;
        await this.openAuthority(index);
        return this.authorities.get(index) ?? null;
      })
        .then(async (entry) => {
          // Event retention trims once at open, before the first request reads the repository
          // (it takes the lifecycle lock itself, so after that is released; it never throws).
          if (entry instanceof Authority) await this.feeds.applyRetention([entry]);
        })
        .finally(() => this.opening.delete(index));
      this.opening.set(index, pending);
    }
    return pending;
  }

  /** Whether repository `index` has been opened (cleanly or not) since the service opened. */
  isOpen(index: number): boolean {
    return this.authorities.has(index);
  }

  /** The authority of `index`, opened first if needed (NotFound, or Corrupt when it failed to open). */
  async opened(index: number): Promise<Authority> {
    await this.ensureOpen(index);
    return this.authority(index);
  }

  /**
   * Open every repository not open yet, one at a time in index order, yielding between them;
   * requests open theirs first. Idempotent: returns the one promise of the whole pass.
   */
  openAllInBackground(): Promise<void> {
    this.allOpened ??= (async () => {
      const t0 = performance.now();
      let opened = 0;
      for (const record of this.registry.all()) {
        if (this.closed) return;
        if (record.lifecycle_kind === LIFECYCLE_PURGED || this.authorities.has(record.repository_index)) continue;
        await new Promise((resolve) => setImmediate(resolve));
        await this.ensureOpen(record.repository_index);
        opened++;
      }
      if (opened) this.log.info({ repositories: opened, ms: Math.round(performance.now() - t0) }, 'opened the repositories in the background');
    })();
    return this.allOpened;
  }

  private async openAuthority(index: number): Promise<void> {
    try {
      // A retiring authority's files stay as exported; a read replica's change only by the owner's manifests.
      const frozen = this.registry.get(index)?.lifecycle_kind !== LIFECYCLE_ACTIVE || this.isReplica(index);
      const authority = await Authority.open(this.layout.repositoryDir(index), index, this.log, this.jobPolicy, frozen, this.maxSnapshotPaths, this.sealKey);
      if (this.closed) {
        authority.close();
        return;
      }
      authority.store.setCommitHooks(this.hooksOf(index));
      authority.store.idFloors = this.idFloors.get(index) ?? {};
      authority.gitShadowSource = () => this.gitShadows;
      authority.gitRepositoryShadowSource = () => this.gitRepositoryShadows;
      authority.lands.policyFlags = () => this.registry.get(index)?.policy_flags ?? 0;
      authority.rules.groupMembers = (group) => this.groupMembers(group);
      this.authorities.set(index, authority);
      // A read replica sends nothing and moves nothing: its owner does (webhooks, mirrors, the land queue).
      if (!this.isReplica(index)) {
        this.startDispatcher(index);
        this.startMirrorRunner(index);
        this.startQueue(index);
      }
      // Its exporter follows the lines from the start: an import exports in the background (docs/git.md "Clone and fetch").
      if (this.gitRefresh) this.gitExporter(authority);
      this.authoritiesChanged();
    } catch (err) {
      const reason = (err as Error).message;
      this.log.error({ repository_index: index, problem: reason }, 'repository failed its checks at open; it answers 500 until repaired (see cairn fsck)');
      this.authorities.set(index, { reason });
      // Subscribers waiting for a reopen hear that it will not come.
      this.authoritiesChanged();
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
    // A shadow git repository of a repository that is not registered or purged: derived data of nothing.
    for (const name of await fsp.readdir(this.layout.gitShadowDir).catch(() => [] as string[])) {
      const m = /^(0|[1-9][0-9]*)\.git$/.exec(name);
      const index = m ? Number(m[1]) : -1;
      if (index >= 0 && this.registry.get(index) && !this.registry.isPurged(index)) continue;
      await fsp.rm(`${this.layout.gitShadowDir}/${name}`, { recursive: true, force: true });
    }
  }

  /** The registry record of `index`; NotFound when it was never registered. */
  record(index: number): RepositoryRecord {
    const record = this.registry.get(index);
    if (!record) throw new NotFound(`repository ${index} is not registered`);
    return record;
  }

  /** The open authority of a registered, not purged repository (see `opened` for one not open yet). */
  authority(index: number): Authority {
    const entry = this.authorities.get(index);
    if (!entry) {
      const record = this.record(index);
      if (record.lifecycle_kind !== LIFECYCLE_PURGED) throw new Error(`repository ${index} is not open yet (await opened(${index}) first)`);
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
    // Opened before the registration's event is appended, so whoever hears of it can use the
    // repository; through ensureOpen, since a request or the background pass may reach it first.
    const create = async (index: number) => { await Authority.create(this.layout.repositoryDir(index), index, nowSeconds()); };
    let result: RegistrationResult;
    if (this.cluster) {
      // serve --cluster: the index (and a namespace's owner) is the cluster's, in etcd; a
      // namespace another node's repository owns is that node's to answer. One registration of
      // this node at a time: a namespace's second registration finds the first one's record.
      const cluster = this.cluster;
      const run = this.clusterRegistrations.then(async () => {
        let a = await cluster.allocate(namespace);
        if (a.owner !== cluster.node) throw new OwnedElsewhere(a.owner, a.index);
        // The namespace's repository here was purged: as on a single server, the namespace is free again.
        const held = this.registry.get(a.index);
        if (!a.created && held && held.lifecycle_kind === LIFECYCLE_PURGED && held.repository_name !== RESERVED_NAME) a = await cluster.allocate(namespace, a.index);
        return this.registry.registerAt(a.index, name, namespace, policyFlags, create, (index) => this.ensureOpen(index));
      });
      this.clusterRegistrations = run.catch(() => undefined);
      result = await run;
    } else {
      result = await this.registry.register(name, namespace, policyFlags, create, (index) => this.ensureOpen(index));
    }
    // A new repository's first commit: the server's default rules (a crash before it leaves a
    // repository without rules, which has the gates of one).
    if (result.created && this.defaultRules) {
      await this.ensureOpen(result.record.repository_index);
      await this.authority(result.record.repository_index).rules.set(this.defaultRules, null);
    }
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
      if (!(entry instanceof Authority) || !entry.jobs.hasDueLeases() || this.isReplica(index)) continue;
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
      if (entry instanceof Authority && !this.isReplica(record.repository_index)) out.push(entry);
    }
    return out;
  }

  /** serve --cluster --read-replicas: which repositories this node holds as read replicas of another node's (./replicas.ts). */
  replicas: ReadReplicasApi | null = null;

  /** The commit generation of repository `index` as open here, or null when it is not open. */
  commitOf(index: number): number | null {
    const a = this.authorities.get(index);
    return a instanceof Authority ? a.store.generation : null;
  }

  /** Whether repository `index` is a read replica here (another node owns it; this copy follows its archive). */
  isReplica(index: number): boolean {
    return this.replicas?.isReplica(index) ?? false;
  }

  /** Claim-next across repositories: the first claimable job in repository order. */
  async claimNext(kinds: Set<number>, repositories: number[]): Promise<ClaimResult | null> {
    // Every candidate must be open: the named ones are opened now; across all, the background pass is awaited.
    if (repositories.length) for (const index of repositories) await this.ensureOpen(index);
    else await this.openAllInBackground();
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
      if (!(entry instanceof Authority) || this.isReplica(index)) continue;
      try {
        for (const pack of await entry.expireStagedPacks()) this.log.info({ repository_index: index, pack }, 'removed an expired uncommitted pack');
      } catch (err) {
        this.log.error({ repository_index: index, problem: (err as Error).message }, 'staged pack expiry failed');
      }
    }
  }

  /**
   * Drive the land queues (docs/land-queue.md): every open authority's now, and each one opened
   * later. A retiring repository's queue makes no moves (its files stay as exported).
   */
  startLandQueues(options: QueueOptions): void {
    this.queueOptions = options;
    for (const index of this.authorities.keys()) this.startQueue(index);
  }

  private startQueue(index: number): void {
    const entry = this.authorities.get(index);
    if (!this.queueOptions || !(entry instanceof Authority)) return;
    entry.queue.start(this.queueOptions, () => this.registry.get(index)?.lifecycle_kind === LIFECYCLE_ACTIVE, this.log);
  }

  /**
   * Start sending webhooks (docs/api.md "Webhooks"): a dispatcher for every open authority now,
   * and for each one opened later (registration, restore).
   */
  startWebhooks(policy: WebhookPolicy, network: WebhookNetwork = DEFAULT_WEBHOOK_NETWORK): void {
    this.webhookPolicy = policy;
    this.webhookNetwork = network;
    for (const index of this.authorities.keys()) this.startDispatcher(index);
  }

  private startDispatcher(index: number): void {
    const entry = this.authorities.get(index);
    if (!this.webhookPolicy || !(entry instanceof Authority) || this.dispatchers.has(index)) return;
    // Nothing is written for webhooks while the repository is retiring: its files stay as exported.
    const dispatcher = new WebhookDispatcher(entry, () => this.registry.get(index)?.lifecycle_kind === LIFECYCLE_ACTIVE, this.log, this.webhookPolicy, this.webhookNetwork);
    this.dispatchers.set(index, dispatcher);
    dispatcher.start();
  }

  /** Where webhooks may send (registrations are checked against it); nothing internal before startWebhooks. */
  get webhookTargets(): WebhookTargets {
    return this.webhookNetwork.targets;
  }

  private stopDispatcher(index: number): void {
    this.dispatchers.get(index)?.stop();
    this.dispatchers.delete(index);
  }

  close(): void {
    this.stopBackground();
    for (const entry of this.authorities.values()) if (entry instanceof Authority) entry.close();
    this.registry.closeEvents();
  }

  /**
   * Close for a shutdown (`cairn serve` stopping, docs/operations.md "Stopping"): background
   * work stops, then each repository's commit queue writes every transaction queued so far
   * and closes (later ones are refused), and its files close. Resolves when all of it is done.
   */
  async shutdown(): Promise<void> {
    this.stopBackground();
    for (const entry of this.authorities.values()) if (entry instanceof Authority) entry.queue.stop();
    // An open under way closes what it opened itself once it sees `closed`.
    await Promise.allSettled([...this.opening.values()]);
    const open = [...this.authorities.values()].filter((entry): entry is Authority => entry instanceof Authority);
    await Promise.all(open.map((authority) => authority.drainAndClose()));
    await this.registry.closeEventsWhenIdle();
  }

  /**
   * Push git mirrors (docs/git.md "Mirror"): a runner for every open authority now, and for each
   * one opened later; pushes of all repositories share `policy.concurrency` slots.
   */
  startGitMirrors(policy: MirrorPolicy): void {
    this.mirrorPolicy = policy;
    this.mirrorSlots = new MirrorSlots(policy.concurrency, Math.min(policy.perRepository, policy.concurrency));
    for (const index of this.authorities.keys()) this.startMirrorRunner(index);
  }

  /** The operator's credential grants for mirrors; none before startGitMirrors. */
  get mirrorGrants(): CredentialGrants {
    return this.mirrorPolicy?.credentials ?? NO_GRANTS;
  }

  /** Where mirrors may push (registrations are checked against it); nothing internal, no file:// before startGitMirrors. */
  get mirrorTargets(): MirrorTargets {
    return this.mirrorPolicy?.targets ?? STRICT_MIRROR_TARGETS;
  }

  private startMirrorRunner(index: number): void {
    const entry = this.authorities.get(index);
    if (!this.mirrorPolicy || !this.mirrorSlots || !(entry instanceof Authority) || this.mirrorRunners.has(index)) return;
    const runner = new GitMirrorRunner(entry, () => this.gitExporter(entry), () => this.registry.get(index)?.lifecycle_kind === LIFECYCLE_ACTIVE, this.log, this.mirrorPolicy, this.mirrorSlots);
    this.mirrorRunners.set(index, runner);
    runner.start();
  }

  private stopMirrorRunner(index: number): void {
    this.mirrorRunners.get(index)?.stop();
    this.mirrorRunners.delete(index);
  }

  /** Export served and imported lines' moves in the background (docs/git.md "Clone and fetch"): every open authority's exporter, and each one opened later. */
  startGitRefresh(): void {
    this.gitRefresh = true;
    for (const [index, exporter] of this.gitExporters) exporter.watch(() => this.registry.get(index)?.lifecycle_kind === LIFECYCLE_ACTIVE);
    for (const entry of this.authorities.values()) if (entry instanceof Authority) this.gitExporter(entry);
  }

  private stopBackground(): void {
    this.closed = true;
    this.gitRefresh = false;
    for (const exporter of this.gitExporters.values()) exporter.stop();
    this.feeds.close();
    if (this.maintenance) clearInterval(this.maintenance);
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    for (const index of [...this.dispatchers.keys()]) this.stopDispatcher(index);
    for (const index of [...this.mirrorRunners.keys()]) this.stopMirrorRunner(index);
  }

  /** Repositories that list discovery shows: every record except purged ones. */
  listed(nameFilter?: string): RepositoryRecord[] {
    return this.registry.all().filter(
      (r) => r.lifecycle_kind !== LIFECYCLE_PURGED && !this.isReplica(r.repository_index) && (nameFilter === undefined || r.repository_name === nameFilter),
    );
  }
}

/** Whether one of `waiters` is called (the writes went idle) within `timeoutMs`. */
async function idleWithin(waiters: (() => void)[], timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const drained = await Promise.race([
    new Promise<boolean>((resolve) => waiters.push(() => resolve(true))),
    new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs); }),
  ]);
  clearTimeout(timer);
  return drained;
}
