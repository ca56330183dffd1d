// Read replicas (serve --cluster --read-replicas all|I,J,…; docs/operations.md "Read replicas"):
// a node keeps a copy of other nodes' repositories, each kept current from its owner's archive
// (the newest manifest, applied incrementally as a follower does: lib/authority/follower.ts), and
// serves their reads itself instead of passing them to the owner. A replica is a repository of
// this node's registry (its record as the owner's manifest carries it, never announced by this
// node's registry feed) opened with its files frozen; it is never shipped, listed, written to,
// or worked on in the background (webhooks, mirrors, the land queue are its owner's), and its
// git routes and writes go to the owner. DATA/cluster/replicas/<index> marks one (written before
// the record, removed after it), so a restart knows its replicas before anything opens.
//
// Consistency: a replica is behind its owner by the owner's shipping interval plus this node's
// poll. A move of the repository to this node starts from the replica's files. Every answer of a repository route carries `Cairn-Commit: G`, the repository's commit
// when it answered; a read sent with `Cairn-Min-Commit: G` is served by a replica only once it
// holds commit G, and passed to the owner otherwise: a client reads its own writes by sending
// the Cairn-Commit its write's answer carried.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { ObjectStore } from '../archive/object-store.js';
import { applyManifest, listManifestKeys, readManifest } from '../archive/restore.js';
import { LIFECYCLE_PURGED } from '../domain/repository.js';
import type { EtcdCluster } from '../lease/etcd-cluster.js';
import { mkdirDurable, writeFileDurable, fsyncDir } from '../store/durable.js';
import type { CairnService } from './service.js';
import type { ReadReplicasApi, ReplicaStatus } from './cluster.js';

export interface ReplicaOptions {
  cluster: EtcdCluster;
  openArchive(url: string): Promise<ObjectStore & { close?: () => void }>;
  /** Which repositories: every one another node owns, or these indexes. */
  select: 'all' | Set<number>;
  /** Look at the owners' archives this often (default 1000 ms). */
  intervalMs?: number;
}


interface Applied {
  owner: string;
  manifest: string;
  commit: number;
  capturedAtUs: bigint;
  appliedAt: string;
}

export class ReadReplicas implements ReadReplicasApi {
  /** Replica → the owner whose archive its files came from (the mark file holds the name). */
  private readonly marks = new Map<number, string>();
  private readonly applied = new Map<number, Applied>();
  /** Repositories arriving here as their owner's (a move, a failover): no replica work on them meanwhile. */
  private readonly suspended = new Set<number>();
  private readonly stores = new Map<string, ObjectStore & { close?: () => void }>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  lastError: string | null = null;

  constructor(private readonly service: CairnService, private readonly o: ReplicaOptions) {}

  isReplica(index: number): boolean {
    return this.marks.has(index);
  }

  /** Whether a read of `index` needing commit `min` (0: any) is served here. */
  serves(index: number, min: number): boolean {
    const a = this.applied.get(index);
    return a !== undefined && this.marks.has(index) && !this.suspended.has(index) && a.commit >= min;
  }

  status(): ReplicaStatus[] {
    return [...this.applied.entries()].sort((a, b) => a[0] - b[0]).map(([index, a]) => ({
      repository_index: index,
      owner: a.owner,
      commit: String(a.commit),
      manifest: a.manifest,
      captured_at: new Date(Number(a.capturedAtUs / 1000n)).toISOString(),
      applied_at: a.appliedAt,
    }));
  }

  /** The marks on disk (replicas of an earlier run), then a look every interval. */
  async start(): Promise<void> {
    for (const name of await fsp.readdir(this.service.layout.clusterReplicasDir).catch(() => [] as string[])) {
      if (/^(0|[1-9][0-9]{0,9})$/.test(name)) this.marks.set(Number(name), (await fsp.readFile(path.join(this.service.layout.clusterReplicasDir, name), 'utf8').catch(() => '')).trim());
    }
    this.service.replicas = this;
    this.service.registry.unannounced = (index) => this.marks.has(index);
    // A mark without its record (a crash between the two): nothing to keep.
    for (const index of [...this.marks.keys()]) {
      const r = this.service.registry.get(index);
      if (!r || r.lifecycle_kind === LIFECYCLE_PURGED) await this.unmark(index);
    }
    this.timer = setInterval(() => { this.running ??= this.round().finally(() => { this.running = null; }); }, this.o.intervalMs ?? 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => {});
    for (const store of this.stores.values()) store.close?.();
    this.stores.clear();
  }

  private selected(index: number): boolean {
    return this.o.select === 'all' || this.o.select.has(index);
  }

  /** One look: each selected repository another node owns, brought to its owner's newest manifest; replicas no longer wanted dropped. */
  private async round(): Promise<void> {
    const c = this.o.cluster;
    const errors: string[] = [];
    const placements = c.placements();
    for (const index of [...this.marks.keys()]) {
      const owner = placements.get(index);
      if ((owner === c.node || owner === undefined || !this.selected(index)) && !this.suspended.has(index)) await this.drop(index).catch((err: Error) => errors.push(`repository ${index}: ${err.message}`));
    }
    const archives = new Map<string, string | null>();
    for (const [index, owner] of placements) {
      if (this.stopped) return;
      if (owner === c.node || !this.selected(index) || this.suspended.has(index)) continue;
      try {
        if (!archives.has(owner)) archives.set(owner, await c.archiveOf(owner));
        const url = archives.get(owner);
        if (!url) continue;
        await this.follow(index, owner, url);
      } catch (err) {
        errors.push(`repository ${index}: ${(err as Error).message}`);
      }
    }
    this.lastError = errors.length ? errors.join('; ') : null;
    if (errors.length) this.service.log.warn({ problem: this.lastError }, 'read replicas: could not apply every owner\'s manifest; retried');
  }

  private async storeOf(url: string): Promise<ObjectStore> {
    let store = this.stores.get(url);
    if (!store) {
      store = await this.o.openArchive(url);
      this.stores.set(url, store);
    }
    return store;
  }

  /** Bring replica `index` to the newest manifest in `owner`'s archive (installing it the first time). */
  private async follow(index: number, owner: string, url: string): Promise<void> {
    const store = await this.storeOf(url);
    const key = (await listManifestKeys(store, index)).at(-1);
    const known = this.applied.get(index);
    if (key === undefined || (known && known.manifest === key && this.marks.has(index))) return;
    const manifest = await readManifest(store, key);
    // Files from another owner's history (the repository moved or failed over since), or ahead of
    // this archive's newest (a failover from an older manifest forked it): fetched again whole,
    // never mixed with the new owner's.
    const from = this.marks.get(index);
    if (from !== undefined && (from !== owner || (known !== undefined && known.commit > Number(manifest.commitGeneration)))) await this.drop(index);
    const service = this.service;
    const dir = service.layout.repositoryDir(index);
    const result = await service.lifecycleExclusive(index, async () => {
      if (this.suspended.has(index)) return null;
      const record = service.registry.get(index);
      const mine = record && record.lifecycle_kind !== LIFECYCLE_PURGED && !this.marks.has(index);
      if (mine) return null; // this node's own (it arrived here meanwhile)
      if (!this.marks.has(index)) {
        // Marked before the record: a restart knows the record is a replica's.
        await mkdirDurable(service.layout.clusterReplicasDir);
        await writeFileDurable(service.layout.clusterReplicaMark(index), `${owner}\n`);
        this.marks.set(index, owner);
        await fsp.rm(dir, { recursive: true, force: true });
      }
      // Reads under way finish on the files they opened; new ones wait for the reopen.
      await service.quiesce(index);
      service.closeAuthority(index);
      await fsp.mkdir(dir, { recursive: true });
      const r = await applyManifest(store, manifest, dir, { manifestKey: key, incremental: true, concurrency: 8 });
      if (r.registry) await service.registry.adopt(r.registry, true);
      return r;
    });
    if (!result) return;
    await service.ensureOpen(index);
    this.applied.set(index, { owner, manifest: key, commit: result.commit.generation, capturedAtUs: manifest.capturedAtUs, appliedAt: new Date().toISOString() });
  }

  /** No longer a replica here: closed, its record a placeholder, its files and mark removed. */
  async drop(index: number): Promise<void> {
    const service = this.service;
    await service.lifecycleExclusive(index, async () => {
      if (!this.marks.has(index)) return;
      await service.giveUpRepository(index, null, true);
      await this.unmark(index);
    });
  }

  private async unmark(index: number): Promise<void> {
    this.applied.delete(index);
    this.marks.delete(index);
    await fsp.rm(this.service.layout.clusterReplicaMark(index), { force: true });
    await fsyncDir(path.dirname(this.service.layout.clusterReplicaMark(index))).catch(() => {});
  }

  /**
   * A move or failover of `index` to this node is starting: no replica work on it meanwhile, and
   * the replica's files, if any, go to `incoming` (the arrival then fetches only what they lack).
   */
  async suspend(index: number, incoming: string, from: string): Promise<void> {
    this.suspended.add(index);
    await this.running?.catch(() => {});
    // Only files of `from`'s own history are a start (a prefix of what its archive holds).
    if (this.marks.has(index) && this.marks.get(index) !== from) await this.drop(index);
    const service = this.service;
    await service.lifecycleExclusive(index, async () => {
      if (!this.marks.has(index)) return;
      await service.giveUpRepository(index, incoming, true);
      await this.unmark(index);
    });
  }

  resume(index: number): void {
    this.suspended.delete(index);
  }
}
