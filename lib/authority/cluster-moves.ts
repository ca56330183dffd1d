// Repositories that change nodes (serve --cluster; docs/operations.md "Several nodes"), through
// the archive each node ships to:
//
//   move      `cairn repo move N --to NODE`, run by the target: it copies N from the owner's
//             archive while the owner still writes, records the move in etcd (PREFIX/moves/N),
//             asks the owner to hand N over (the owner holds N's writes, lets those under way
//             end, ships until a manifest covers its last commit and answers that manifest),
//             applies that manifest, puts N in place and flips the placement in one etcd
//             transaction, valid only while the move's record is the one it wrote. The owner
//             sees N leave (PREFIX/left/OWNER/N), sets its copy aside, and the writes it held go
//             to the new owner. Writes pause from the handoff to the flip; nothing acknowledged
//             is lost, since every acknowledged commit is in the manifest the target applies.
//   failover  `cairn repo failover N` (or serve --failover auto): the owner is down (its
//             membership expired in etcd, so it stopped acknowledging before that), and a live
//             node takes N from the owner's archive: its newest manifest, so what was committed
//             after it (at most the RPO) is not there. The flip holds only while the old owner
//             is still down; when it comes back it sets its copy aside, kept for the operator.
//
// A handoff that the target does not finish within HOLD_MS (2 min) is called off by the owner itself
// (it deletes the move's record, which makes the flip impossible) and its writes resume.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import type { ObjectStore } from '../archive/object-store.js';
import { applyManifest, listManifestKeys, readManifest, type ApplyResult } from '../archive/restore.js';
import { manifestPrefix } from '../domain/archive-manifest.js';
import { Busy, Conflict, NotFound } from '../domain/errors.js';
import { LIFECYCLE_PURGED } from '../domain/repository.js';
import { isEtcdFailure, type EtcdCluster, type FlipResult, type LeftRecord } from '../lease/etcd-cluster.js';
import { fsyncDir, mkdirDurable, writeFileDurable } from '../store/durable.js';
import type { ClusterGate, ClusterMovesApi, MoveResult } from './cluster.js';
import type { CairnService } from './service.js';

/** What a move needs of this node's own archive (serve --archive; ./archiving.ts). */
export interface NodeArchive {
  url: string;
  /** Ship until a stored manifest covers repository `index`'s newest commit: that commit and manifest. */
  flush(index: number, timeoutMs: number): Promise<{ commit: number; manifest: string }>;
  /** Drop what the shipper knows of `index` (it left this node). */
  forget(index: number): void;
  /** `index` arrived on this node: the shipper reads it again, and a purge marker of an earlier departure goes. */
  arrived(index: number): void;
}

export interface ClusterMovesOptions {
  cluster: EtcdCluster;
  archive: NodeArchive | null;
  /** Another node's archive, by its URL, opened with this node's store configuration and key. */
  openArchive(url: string): Promise<ObjectStore & { close?: () => void }>;
  /** auto: a live node takes the repositories of a node that is down, as a failover would. */
  failover: 'manual' | 'auto';
  /** How long a handoff holds a repository's writes before calling the move off (default 60 s). */
  holdMs?: number;
  /** auto: how long a node must be seen down before its repositories are taken (default 30 s). */
  failoverAfterMs?: number;
  /** How often holds, repositories left behind and (auto) down nodes are looked at (default 1 s). */
  everyMs?: number;
}


interface Hold {
  token: string;
  raw: string;
  to: string;
  since: number;
  reason: string;
  released: Promise<void>;
  release: () => void;
}

/** Longer than a handoff's own worst case (DRAIN_MS + SHIP_MS), so a handoff under way is never called off under it. */
const HOLD_MS = 120_000;
/** How long a handoff waits for the repository's writes under way, and for the archive to take its last commit. */
const DRAIN_MS = 30_000;
const SHIP_MS = 60_000;

export class ClusterMoves implements ClusterGate, ClusterMovesApi {
  private readonly holds = new Map<number, Hold>();
  /** Repositories arriving here now (one move or failover of each at a time). */
  private readonly arriving = new Set<number>();
  private timer: NodeJS.Timeout | null = null;
  private sweeping = false;
  /** serve --failover auto: since when each node has been seen down (performance.now()). */
  private readonly downSince = new Map<string, number>();
  private stopped = false;

  constructor(private readonly service: CairnService, private readonly o: ClusterMovesOptions) {}

  private get cluster(): EtcdCluster {
    return this.o.cluster;
  }

  private get node(): string {
    return this.o.cluster.node;
  }

  // --- the gate every commit passes -------------------------------------------------------

  admit(index: number): void {
    if (this.service.isReplica(index)) throw new Busy(`repository ${index} is a read replica on node ${this.node}: its owner writes it`);
    const hold = this.holds.get(index);
    if (hold) throw new Busy(hold.reason);
    const lapsed = this.cluster.refusal();
    if (lapsed !== null) throw new Busy(lapsed);
    const owner = this.cluster.ownerKnown(index);
    if (owner !== this.node) throw new Busy(`repository ${index} is placed on ${owner === null ? 'no node' : `node ${owner}`}, not on node ${this.node}: retry (it is answered there)`);
  }

  acknowledge(index: number, generation: number): void {
    const lapsed = this.cluster.refusal();
    if (lapsed !== null) throw new Busy(`committed on this node (commit ${generation} of repository ${index}), but not acknowledged: ${lapsed}`, { committed: true });
    const owner = this.cluster.ownerKnown(index);
    if (owner !== this.node) throw new Busy(`committed on this node (commit ${generation} of repository ${index}), but not acknowledged: the repository is placed on ${owner === null ? 'no node' : `node ${owner}`} now`, { committed: true });
  }

  /** While repository `index` is being handed to another node: resolves when the handoff ends (moved or called off). */
  held(index: number): Promise<void> | null {
    return this.holds.get(index)?.released ?? null;
  }

  // --- start: handoffs a restart interrupted, repositories that left while this node was away ---

  /** At the join: set aside what left this node, pick up interrupted handoffs, then look every `everyMs`. */
  async start(): Promise<void> {
    const c = this.cluster;
    c.onLeft = (left) => { void this.leave(left).catch((err: Error) => this.service.log.error({ repository_index: left.index, problem: err.message }, 'cluster: setting a repository that left this node aside failed; retried')); };
    for (const left of await c.leftBehind()) await this.leave(left);
    await this.settleArrivals();
    // A repository of this directory that the cluster places elsewhere without a record of its
    // leaving: a move here that did not finish (the target's copy) is given up; anything else
    // is a directory that is not this node's.
    for (const r of this.service.registry.all()) {
      if (r.lifecycle_kind === LIFECYCLE_PURGED || this.service.isReplica(r.repository_index)) continue;
      const owner = await c.owner(r.repository_index);
      if (owner === this.node) continue;
      const move = await c.moveOf(r.repository_index);
      if (owner !== null && move?.move.to === this.node) {
        await this.leave({ index: r.repository_index, to: owner, kind: 'move', at: new Date().toISOString() }, false);
        continue;
      }
      throw new Error(`this data directory holds repository ${r.repository_index} (${r.repository_name}), which the cluster places ${owner === null ? 'on no node' : `on node ${owner}`}: a node's data directory holds only the repositories placed on it (start on an empty data directory, or without --cluster)`);
    }
    await fsp.mkdir(this.service.layout.clusterHandoffsDir, { recursive: true });
    for (const name of await fsp.readdir(this.service.layout.clusterHandoffsDir)) {
      const m = /^(0|[1-9][0-9]{0,9})\.json$/.exec(name);
      if (!m) continue;
      const saved = JSON.parse(await fsp.readFile(path.join(this.service.layout.clusterHandoffsDir, name), 'utf8')) as { to: string; token: string; raw: string };
      this.newHold(Number(m[1]), saved);
    }
    this.timer = setInterval(() => { void this.sweep(); void this.settleHolds(); }, this.o.everyMs ?? 1000);
    this.timer.unref();
  }

  private settling = false;

  /** Each hold on its own: one that fails (etcd down) neither stops the others nor waits for a failover's copy. */
  private async settleHolds(): Promise<void> {
    if (this.settling || this.stopped) return;
    this.settling = true;
    try {
      for (const index of [...this.holds.keys()]) {
        await this.settleHold(index).catch((err: Error) => this.service.log.warn({ repository_index: index, problem: err.message }, 'cluster: a held repository\'s move could not be looked at; retried'));
      }
    } finally {
      this.settling = false;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    for (const hold of this.holds.values()) hold.release();
    this.holds.clear();
  }

  /** Every `everyMs`: holds to settle, repositories left behind (a missed watch), down nodes (auto). */
  private async sweep(): Promise<void> {
    if (this.sweeping || this.stopped) return;
    this.sweeping = true;
    try {
      await this.settleArrivals();
      for (const left of await this.cluster.leftBehind()) {
        await this.leave(left).catch((err: Error) => this.service.log.warn({ repository_index: left.index, problem: err.message }, 'cluster: setting a repository that left this node aside failed; retried'));
      }
      if (this.o.failover === 'auto') await this.takeOrphans();
    } catch (err) {
      this.service.log.warn({ problem: (err as Error).message }, 'cluster: a look at moves and down nodes failed; retried');
    } finally {
      this.sweeping = false;
    }
  }

  // --- the owner's side: the handoff ---------------------------------------------------------

  private newHold(index: number, saved: { to: string; token: string; raw: string }): Hold {
    let release = (): void => {};
    const released = new Promise<void>((resolve) => { release = resolve; });
    const hold: Hold = {
      ...saved,
      since: performance.now(),
      reason: `repository ${index} is moving to node ${saved.to}: its writes wait for the move (or go on here if it is called off); retry`,
      released,
      release,
    };
    this.holds.set(index, hold);
    return hold;
  }

  private async endHold(index: number): Promise<void> {
    const hold = this.holds.get(index);
    if (!hold) return;
    await fsp.rm(this.service.layout.clusterHandoff(index), { force: true });
    this.holds.delete(index);
    hold.release();
  }

  /**
   * POST /v1/native/cluster/handoffs from the target of a move: hold the repository's writes,
   * let those under way end, ship until a manifest covers its last commit, and answer it. The
   * hold lasts until the placement flips (the writes then go to the new owner) or the move is
   * called off (they go on here).
   */
  private async handOff(index: number, token: string): Promise<{ commit: string; manifest: string }> {
    const c = this.cluster;
    const archive = this.o.archive;
    if (!archive) throw new Conflict(`node ${this.node} ships no archive (serve --archive): a repository moves through its owner's archive`);
    const found = await c.moveOf(index);
    if (!found || found.move.token !== token || found.move.from !== this.node) throw new Conflict(`no move of repository ${index} from node ${this.node} with this token is under way`);
    if ((await c.ownerNow(index)) !== this.node) throw new Conflict(`repository ${index} is not placed on node ${this.node}`);
    let hold = this.holds.get(index);
    if (hold && hold.token !== token) throw new Conflict(`another move of repository ${index} is under way`);
    if (!hold) {
      // Recorded before anything waits: a restart of this node keeps the writes held.
      await mkdirDurable(this.service.layout.clusterHandoffsDir);
      const saved = { to: found.move.to, token, raw: found.raw };
      await writeFileDurable(this.service.layout.clusterHandoff(index), `${JSON.stringify(saved)}\n`);
      hold = this.newHold(index, saved);
      this.service.log.info({ repository_index: index, to: found.move.to }, 'cluster: handing a repository over; its writes are held');
    }
    try {
      if (!(await this.service.repositoryWritesDrained(index, DRAIN_MS))) throw new Busy(`writes to repository ${index} were still under way after ${DRAIN_MS / 1000} s`);
      // Background transactions (the land queue, job-lease expiry) admitted before the hold
      // finish first; any later one is refused when it runs (admit).
      await (await this.service.opened(index)).store.barrier(() => undefined);
      const shipped = await archive.flush(index, SHIP_MS);
      return { commit: String(shipped.commit), manifest: shipped.manifest };
    } catch (err) {
      // Not handed over: called off here, so the target cannot flip; the writes go on here.
      if (await c.cancelMove(index, found.raw).catch(() => false)) await this.endHold(index);
      throw err;
    }
  }

  /** A hold ends when the placement flipped (set aside here), the move was called off, or HOLD_MS passed (called off here). */
  private async settleHold(index: number): Promise<void> {
    const hold = this.holds.get(index);
    if (!hold) return;
    const c = this.cluster;
    const owner = await c.ownerNow(index);
    if (owner !== null && owner !== this.node) {
      await this.leave({ index, to: owner, kind: 'move', at: new Date().toISOString() });
      return;
    }
    const move = await c.moveOf(index);
    if (move?.raw !== hold.raw) {
      this.service.log.info({ repository_index: index, to: hold.to }, 'cluster: the move was called off; writes go on here');
      await this.endHold(index);
      return;
    }
    if (performance.now() - hold.since > (this.o.holdMs ?? HOLD_MS) && (await c.cancelMove(index, hold.raw))) {
      this.service.log.warn({ repository_index: index, to: hold.to, held_ms: Math.round(performance.now() - hold.since) }, 'cluster: the move did not finish in time; called off, writes go on here');
      await this.endHold(index);
    }
  }

  /**
   * Repository `left.index` is placed on another node now: close it, set its directory aside
   * (DATA/cluster/displaced/, never served, kept for the operator), leave a placeholder in the
   * registry, and let the held writes go to the new owner.
   */
  private async leave(left: LeftRecord, recorded = true): Promise<void> {
    const index = left.index;
    const service = this.service;
    await service.lifecycleExclusive(index, async () => {
      const record = service.registry.get(index);
      if (!record || record.lifecycle_kind === LIFECYCLE_PURGED) return;
      const aside = service.layout.clusterDisplaced(index, new Date().toISOString().replace(/[-:.]/g, '').slice(0, 15) + randomBytes(2).toString('hex'));
      await service.giveUpRepository(index, aside, false);
      this.o.archive?.forget(index);
      service.log.info({ repository_index: index, to: left.to, kind: left.kind, set_aside: aside }, left.kind === 'move' ? 'cluster: a repository moved to another node; this copy is set aside' : 'cluster: a repository was failed over to another node while this one was down; this copy is set aside (it may hold commits the archive did not)');
    });
    if (recorded) await this.cluster.clearLeft(index);
    await this.endHold(index);
  }

  // --- the target's side: move and failover --------------------------------------------------

  /** `cairn repo move N --to THIS_NODE`: see the top of this file. `peer`: the headers the handoff call carries (the caller's credentials). */
  move(index: number, peer: Record<string, string>): Promise<MoveResult> {
    return etcdAnswers(this.moveHere(index, peer));
  }

  failover(index: number): Promise<MoveResult> {
    return etcdAnswers(this.failoverHere(index));
  }

  handoff(index: number, token: string): Promise<{ commit: string; manifest: string }> {
    return etcdAnswers(this.handOff(index, token));
  }

  private async moveHere(index: number, peer: Record<string, string>): Promise<MoveResult> {
    return this.arrival(index, async () => {
      const c = this.cluster;
      const from = await this.ownerElsewhere(index);
      if (!(await c.isLive(from))) throw new Conflict(`node ${from}, which owns repository ${index}, is down: cairn repo failover ${index} takes it from its archive`);
      const fromNode = (await c.nodes()).get(from);
      if (!fromNode) throw new Conflict(`node ${from} is down`);
      return this.fromArchiveOf(from, index, async (store, incoming) => {
        let fetched = { objects: 0, bytes: 0 };
        const add = (r: ApplyResult): void => { fetched = { objects: fetched.objects + r.objects, bytes: fetched.bytes + r.bytes }; };
        // 1. What the archive holds now, while the owner still writes (the handoff then ships only the rest).
        const newest = (await listManifestKeys(store, index)).at(-1);
        if (newest !== undefined) add((await this.apply(store, newest, incoming)).result);
        // 2. The move recorded; the owner holds the writes and ships its last commit.
        const begun = await c.beginMove(index, from);
        if (!begun) throw new Conflict(`another move of repository ${index} is under way, or it left node ${from} meanwhile`);
        const t0 = performance.now();
        let handed: { commit: string; manifest: string };
        try {
          handed = await this.callHandoff(fromNode.url, from, index, begun.move.token, peer);
        } catch (err) {
          await c.cancelMove(index, begun.raw).catch(() => false);
          throw err;
        }
        try {
          if (!handed.manifest.startsWith(manifestPrefix(index))) throw new Error(`node ${from} answered the manifest "${handed.manifest}", which is not one of repository ${index}`);
          // 3. Its last manifest, then in place, then the flip.
          const last = await this.apply(store, handed.manifest, incoming);
          add(last.result);
          if (String(last.result.commit.generation) !== handed.commit) throw new Error(`the manifest ${handed.manifest} holds commit ${last.result.commit.generation}, not commit ${handed.commit} that node ${from} handed over`);
          await this.install(index, incoming, last.result, from, 'move');
          await this.flipInstalled(index, from, 'move', begun.raw);
          const pause = performance.now() - t0;
          await this.arrived(index);
          this.service.log.info({ repository_index: index, from, commit: handed.commit, pause_ms: Math.round(pause) }, 'cluster: a repository moved here');
          return this.result(index, 'move', from, last, Math.round(pause * 10) / 10, fetched);
        } catch (err) {
          await c.cancelMove(index, begun.raw).catch(() => false);
          if (err instanceof Conflict) throw err;
          throw new Busy(`not moved: ${(err as Error).message}; node ${from} writes repository ${index} on`);
        }
      });
    });
  }

  /** `cairn repo failover N`: the owner is down; take N from its archive's newest manifest. */
  private async failoverHere(index: number): Promise<MoveResult> {
    return this.arrival(index, async () => {
      const c = this.cluster;
      const from = await this.ownerElsewhere(index);
      if (await c.isLive(from)) throw new Conflict(`node ${from}, which owns repository ${index}, is live: a failover takes the repositories of a node that is down (cairn repo move ${index} --to ${this.node} moves it without loss)`);
      return this.fromArchiveOf(from, index, async (store, incoming) => {
        const newest = (await listManifestKeys(store, index)).at(-1);
        if (newest === undefined) throw new Conflict(`node ${from}'s archive holds no manifest of repository ${index}: there is nothing to take it from (bring node ${from} back)`);
        const got = await this.apply(store, newest, incoming);
        await this.install(index, incoming, got.result, from, 'failover');
        const stale = await c.moveOf(index);
        await this.flipInstalled(index, from, 'failover', stale && stale.move.from === from ? stale.raw : null);
        await this.arrived(index);
        this.service.log.warn({ repository_index: index, from, commit: got.result.commit.generation, manifest: newest }, 'cluster: a repository of a node that is down was failed over here from its archive');
        return this.result(index, 'failover', from, got, null, { objects: got.result.objects, bytes: got.result.bytes });
      });
    });
  }

  /** serve --failover auto: the repositories of nodes that are down, spread over the live nodes that fail over by themselves and ship an archive, each taken by one. */
  private async takeOrphans(): Promise<void> {
    const c = this.cluster;
    if (!this.o.archive) return;
    const now = performance.now();
    const down = [...c.placements()].filter(([, owner]) => owner !== this.node && c.nodeKnown(owner) === null);
    // Down for long enough (a restart is not a failure); a node seen live again starts over.
    const downNodes = new Set(down.map(([, owner]) => owner));
    for (const name of [...this.downSince.keys()]) if (!downNodes.has(name)) this.downSince.delete(name);
    for (const name of downNodes) if (!this.downSince.has(name)) this.downSince.set(name, now);
    const due = down.filter(([, owner]) => now - this.downSince.get(owner)! >= (this.o.failoverAfterMs ?? 30_000));
    if (due.length === 0) return;
    // The nodes that fail over by themselves and ship an archive, in name order: each down repository is one's.
    const live = [...(await c.nodes()).values()].filter((n) => n.failover === 'auto').map((n) => n.node).sort();
    const candidates: string[] = [];
    for (const name of live) if ((await c.archiveOf(name)) !== null) candidates.push(name);
    if (!candidates.includes(this.node)) return;
    for (const [index, owner] of due) {
      if (this.stopped) return;
      if (candidates[index % candidates.length] !== this.node || (await c.isLive(owner))) continue;
      try {
        await this.failoverHere(index);
      } catch (err) {
        this.service.log.warn({ repository_index: index, from: owner, problem: (err as Error).message }, 'cluster: failover of a repository of a node that is down failed; retried');
      }
    }
  }

  private async ownerElsewhere(index: number): Promise<string> {
    const from = await this.cluster.ownerNow(index);
    if (from === null) throw new NotFound(`repository ${index} is placed on no node`);
    if (from === this.node) throw new Conflict(`repository ${index} is on node ${this.node} already`);
    return from;
  }

  private async arrival<T>(index: number, fn: () => Promise<T>): Promise<T> {
    if (this.arriving.has(index)) throw new Conflict(`a move of repository ${index} to node ${this.node} is under way`);
    this.arriving.add(index);
    try {
      return await fn();
    } finally {
      this.service.replicas?.resume(index);
      this.arriving.delete(index);
    }
  }

  /** Run `fn` with the archive of node `from` and this node's incoming directory for `index` (removed after). */
  private async fromArchiveOf<T>(from: string, index: number, fn: (store: ObjectStore, incoming: string) => Promise<T>): Promise<T> {
    if (!this.o.archive) throw new Conflict(`node ${this.node} ships no archive (serve --archive): a repository comes here only where this node's archive keeps it too`);
    const url = await this.cluster.archiveOf(from);
    if (url === null) throw new Conflict(`node ${from} ships no archive (serve --archive): its repositories move through it, and none is recorded`);
    const store = await this.o.openArchive(url);
    const incoming = this.service.layout.clusterIncoming(index);
    await fsp.rm(incoming, { recursive: true, force: true });
    // A read replica of it here is where the copy starts: only what it lacks is fetched.
    await this.service.replicas?.suspend(index, incoming, from);
    await fsp.mkdir(incoming, { recursive: true });
    try {
      return await fn(store, incoming);
    } finally {
      store.close?.();
      await fsp.rm(incoming, { recursive: true, force: true }).catch(() => {});
    }
  }

  private async apply(store: ObjectStore, key: string, dir: string): Promise<{ result: ApplyResult; key: string; capturedAtUs: bigint }> {
    const manifest = await readManifest(store, key);
    const result = await applyManifest(store, manifest, dir, { manifestKey: key, incremental: true, concurrency: 8 });
    return { result, key, capturedAtUs: manifest.capturedAtUs };
  }

  private async callHandoff(url: string, from: string, index: number, token: string, peer: Record<string, string>): Promise<{ commit: string; manifest: string }> {
    let res: Response;
    try {
      res = await fetch(`${url.replace(/\/$/, '')}/v1/native/cluster/handoffs`, {
        method: 'POST',
        headers: { ...peer, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ repository_index: index, token }),
        signal: AbortSignal.timeout(DRAIN_MS + SHIP_MS + 10_000),
      });
    } catch (err) {
      throw new Busy(`not moved: node ${from} (${url}) did not answer the handoff (${(err as Error).message}); it writes repository ${index} on`);
    }
    const body = (await res.json().catch(() => ({}))) as { commit?: unknown; manifest?: unknown; error?: unknown };
    if (!res.ok || typeof body.commit !== 'string' || typeof body.manifest !== 'string' || body.manifest === '') {
      const why = typeof body.error === 'string' ? body.error : `answered ${res.status}`;
      throw (res.status === 409 ? new Conflict(`not moved: node ${from} refused the handoff: ${why}`) : new Busy(`not moved: node ${from} did not hand repository ${index} over: ${why}`));
    }
    return { commit: body.commit, manifest: body.manifest };
  }

  /**
   * Flip the placement to this node, the copy installed. Refused: the copy goes. The answer lost
   * (etcd timed out): the placement read again decides; etcd silent then too, the copy stays
   * unserved (its writes refused: it is not placed here) until a later look settles it.
   */
  private async flipInstalled(index: number, from: string, kind: 'move' | 'failover', move: string | null): Promise<void> {
    const c = this.cluster;
    const verb = kind === 'move' ? 'moved' : 'failed over';
    let flip: FlipResult;
    try {
      flip = await c.flip(index, from, kind, move);
    } catch (err) {
      const owner = await c.ownerNow(index).catch(() => undefined);
      if (owner === this.node) return;
      if (owner === undefined) throw new Busy(`etcd did not answer the flip of repository ${index} (${(err as Error).message}), and does not answer now: whether it was ${verb} is not known (cairn cluster status --repo ${index}); this node settles it once etcd answers`);
      await this.uninstall(index);
      throw new Busy(`not ${verb}: etcd did not confirm the flip (${(err as Error).message}); repository ${index} stays on node ${owner}`);
    }
    if (!flip.flipped) {
      await this.uninstall(index);
      throw new Conflict(`not ${verb}: ${flip.why}${kind === 'move' ? `; node ${from} writes it on` : ''}`);
    }
  }

  /** Arrivals whose flip's outcome was not known (an etcd timeout, a crash): settled by the placement. */
  private async settleArrivals(): Promise<void> {
    const dir = path.dirname(this.service.layout.clusterArrival(0));
    for (const name of await fsp.readdir(dir).catch(() => [] as string[])) {
      const m = /^(0|[1-9][0-9]{0,9})\.json$/.exec(name);
      if (!m || this.arriving.has(Number(m[1]))) continue;
      const index = Number(m[1]);
      const owner = await this.cluster.ownerNow(index);
      if (owner !== this.node) {
        // Not placed here: the copy is set aside, and a move record naming this node is called off.
        const move = await this.cluster.moveOf(index);
        if (move?.move.to === this.node) await this.cluster.cancelMove(index, move.raw);
        const record = this.service.registry.get(index);
        if (record && record.lifecycle_kind !== LIFECYCLE_PURGED) await this.leave({ index, to: owner ?? '(none)', kind: 'move', at: new Date().toISOString() }, false);
      } else {
        await this.service.registry.announce(index);
        await this.service.ensureOpen(index);
      }
      await fsp.rm(path.join(dir, name), { force: true });
    }
  }

  /** Put the copy in place and the manifest's record in the registry (the placement not flipped yet: it is not served). */
  private async install(index: number, incoming: string, applied: ApplyResult, from: string, kind: 'move' | 'failover'): Promise<void> {
    const service = this.service;
    if (!applied.registry) throw new Error(`the archive's manifest of repository ${index} names no registry record`);
    const record = applied.registry;
    // Recorded first: a restart before the flip's outcome is known settles the copy by the placement.
    await writeFileDurable(service.layout.clusterArrival(index), `${JSON.stringify({ from, kind })}\n`);
    await service.lifecycleExclusive(index, async () => {
      const current = service.registry.get(index);
      if (current && current.lifecycle_kind !== LIFECYCLE_PURGED) throw new Conflict(`node ${this.node} holds a live repository ${index} already`);
      const dir = service.layout.repositoryDir(index);
      await fsp.rm(dir, { recursive: true, force: true });
      await fsp.mkdir(path.dirname(dir), { recursive: true });
      await fsp.rename(incoming, dir);
      await fsyncDir(path.dirname(dir));
      await fsp.mkdir(incoming, { recursive: true });
      // Announced by this node's registry feed only once the flip made it this node's.
      await service.registry.adopt(record, true);
      this.o.archive?.arrived(index);
    });
  }

  /** The flip did not happen: back to a placeholder (the old owner writes on). */
  private async uninstall(index: number): Promise<void> {
    const service = this.service;
    await service.lifecycleExclusive(index, () => service.giveUpRepository(index, null, true));
    await fsp.rm(service.layout.clusterArrival(index), { force: true });
  }

  /** Serve it here, and ship it to this node's archive now rather than at the next round. */
  private async arrived(index: number): Promise<void> {
    await this.service.registry.announce(index);
    await fsp.rm(this.service.layout.clusterArrival(index), { force: true });
    await this.service.ensureOpen(index);
    const archive = this.o.archive;
    if (archive) void archive.flush(index, SHIP_MS).catch((err: Error) => this.service.log.warn({ repository_index: index, problem: err.message }, 'cluster: shipping a repository that arrived here failed; the next round ships it'));
  }

  private result(index: number, kind: 'move' | 'failover', from: string, got: { key: string; capturedAtUs: bigint; result: ApplyResult }, pause: number | null, fetched: { objects: number; bytes: number }): MoveResult {
    return {
      contract: 'svc.server.cluster-move.v1',
      repository_index: index,
      kind,
      from,
      to: this.node,
      commit: String(got.result.commit.generation),
      manifest: got.key,
      manifest_captured_at: new Date(Number(got.capturedAtUs / 1000n)).toISOString(),
      pause_ms: pause,
      fetched_objects: fetched.objects,
      fetched_bytes: fetched.bytes,
    };
  }
}


/** etcd not answering is a 503 saying so, never a 500 with the client's message. */
async function etcdAnswers<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (isEtcdFailure(err)) throw new Busy(`the cluster's etcd did not answer (${(err as Error).message}); nothing was moved; retry`);
    throw err;
  }
}
