// Several nodes, one etcd (`cairn serve --cluster etcd://HOST:PORT/PREFIX --node NAME`;
// docs/operations.md "Several nodes", storage-layout.md §20.11). What the nodes must agree on
// lives in etcd, each fact under one key written by a transaction:
//
//   PREFIX/nodes/NAME            the node: {"node", "url", "since"}, attached to its TTL lease
//                                (gone when the node stops renewing: it is down)
//   PREFIX/registry/next         decimal: the next repository index (indexes are unique cluster-wide)
//   PREFIX/placement/INDEX       the name of the node that owns repository INDEX
//   PREFIX/namespaces/NAMESPACE  decimal: the index of the live repository owning a non-empty namespace
//   PREFIX/archives/NAME         the archive URL the node ships to (serve --archive), kept after it stops:
//                                a move or a failover reads the node's repositories from it
//   PREFIX/moves/INDEX           a move under way: {"from", "to", "token", "since"} (the placement flips
//                                only while it is there; deleting it calls the move off)
//   PREFIX/left/NAME/INDEX       a repository that left node NAME (moved or failed over): {"to", "kind",
//                                "at"}; NAME sets its old copy aside and deletes the key
//
// A node writes only while its membership holds: past the deadline counted from the last
// keep-alive it sent (its TTL less a margin, on this process's monotonic clock) it refuses
// writes, so a node cut off from etcd stops before the others may take its repositories.
// A node keeps every placement in memory, loaded at start and kept current by a watch, so a
// request's routing costs no etcd round trip; a placement it has not seen yet is read from etcd.
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ClientRuntimeError, EtcdError, GRPCGenericError, type Etcd3, type Lease, type Watcher } from 'etcd3';
import { etcdClient, type EtcdAccess, type LeaseLocation } from './etcd-lease.js';

export interface ClusterNode {
  node: string;
  /** Where the other nodes and clients reach it (serve --public-url). */
  url: string;
  since: string;
  /** auto: it takes repositories of nodes that are down by itself (serve --failover auto). */
  failover?: 'auto' | 'manual';
}

export interface ClusterOptions extends EtcdAccess {
  node: string;
  url: string;
  /** The membership lease's TTL in seconds: a node that stops renewing is down after it. */
  ttlSeconds: number;
  failover?: 'auto' | 'manual';
}

/** A registration as etcd decided it: the index, and whether it is new (false: the namespace's live repository). */
export interface Allocation {
  index: number;
  created: boolean;
  /** The node that owns it. */
  owner: string;
}

/** A move under way (PREFIX/moves/INDEX), as stored: the placement flips only while this exact value is there. */
export interface MoveRecord {
  from: string;
  to: string;
  token: string;
  since: string;
}

/** A repository that left a node (PREFIX/left/NAME/INDEX). */
export interface LeftRecord {
  index: number;
  to: string;
  kind: 'move' | 'failover';
  at: string;
}

/** What a flip of the placement found: done, or why not. */
export type FlipResult = { flipped: true } | { flipped: false; owner: string | null; why: string };

/** Whether `err` is etcd not answering or refusing (the client's errors), not a fault of the caller's. */
export function isEtcdFailure(err: unknown): boolean {
  return err instanceof GRPCGenericError || err instanceof EtcdError || err instanceof ClientRuntimeError;
}

export const NODE_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

export class NodeNameError extends Error {}

/** The default node name: the host's, lower-cased, reduced to the allowed characters. */
export function defaultNodeName(): string {
  const name = hostname().toLowerCase().replace(/[^a-z0-9._-]/g, '-').replace(/^[^a-z0-9]+/, '').slice(0, 63);
  return NODE_NAME.test(name) ? name : 'node';
}

export class EtcdCluster {
  private readonly client: Etcd3;
  private readonly prefix: string;
  private lease: Lease | null = null;
  private rejoining: Promise<void> | null = null;
  private watcher: Watcher | null = null;
  private nodeWatcher: Watcher | null = null;
  /** Repository index → owning node. */
  private readonly placement = new Map<number, string>();
  /** Live nodes (their membership keys), kept current by a watch like the placements. */
  private readonly members = new Map<string, ClusterNode>();
  private closed = false;
  /** performance.now() before which this node may acknowledge writes (its membership confirmed). */
  private deadline = 0;
  private readonly marginMs: number;
  /** Told of each repository that left this node (PREFIX/left/NAME/INDEX put). */
  onLeft: ((left: LeftRecord) => void) | null = null;
  private leftWatcher: Watcher | null = null;

  constructor(readonly location: LeaseLocation, private readonly o: ClusterOptions) {
    if (!NODE_NAME.test(o.node)) throw new NodeNameError('a node name is 1 to 63 of a-z, 0-9, ".", "_" and "-", starting with a letter or digit');
    this.client = etcdClient(location, o, 5000);
    this.prefix = location.prefix;
    this.marginMs = Math.max(250, (o.ttlSeconds * 1000) / 5);
  }

  /** Whether this node may acknowledge writes now: its membership confirmed within the TTL (less a margin). */
  holds(): boolean {
    return this.lease !== null && !this.placementsStale && performance.now() < this.deadline;
  }

  /** Set while rejoining after the membership was lost: no write until every placement was read again. */
  private placementsStale = false;

  /** Why this node refuses writes now (its membership lapsed), or null. */
  refusal(): string | null {
    if (this.holds()) return null;
    return `this node (${this.o.node}) has not confirmed its membership in the cluster's etcd (${this.location.url}) within its TTL of ${this.o.ttlSeconds} s, so another node may take its repositories: it refuses writes until etcd answers again`;
  }

  get node(): string {
    return this.o.node;
  }

  private key(rest: string): string {
    return `${this.prefix}/${rest}`;
  }

  /**
   * Join: create PREFIX/nodes/NAME under a TTL lease kept alive. Another live process holding the
   * name (or this node's previous process, until its lease expires) makes it wait, up to `waitMs`.
   * Then load every placement and watch for more.
   */
  async join(waitMs: number): Promise<void> {
    const deadline = Date.now() + waitMs;
    const record = JSON.stringify({ node: this.o.node, url: this.o.url, since: new Date().toISOString(), failover: this.o.failover ?? 'manual' } satisfies ClusterNode);
    for (;;) {
      if (await this.tryMembership(record)) break;
      if (Date.now() > deadline) throw new Error(`node name ${this.o.node} is held in ${this.location.url} by another live process (or this node's previous one, whose lease has not expired yet)`);
      await sleep(500);
    }
    const watcher = await this.client.watch().prefix(this.key('placement/')).create();
    watcher.on('put', (kv) => {
      const index = this.indexOf(kv.key.toString());
      if (index !== null) this.placement.set(index, kv.value.toString());
    });
    watcher.on('delete', (kv) => {
      const index = this.indexOf(kv.key.toString());
      if (index !== null) this.placement.delete(index);
    });
    watcher.on('error', () => {});
    this.watcher = watcher;
    const nodes = await this.client.watch().prefix(this.key('nodes/')).create();
    nodes.on('put', (kv) => { const n = this.memberOf(kv.key.toString(), kv.value.toString()); if (n) this.members.set(n.node, n); });
    nodes.on('delete', (kv) => { this.members.delete(kv.key.toString().slice(this.key('nodes/').length)); });
    nodes.on('error', () => {});
    this.nodeWatcher = nodes;
    const left = await this.client.watch().prefix(this.key(`left/${this.o.node}/`)).create();
    left.on('put', (kv) => { const l = this.leftOf(kv.key.toString(), kv.value.toString()); if (l) { this.placement.set(l.index, l.to); this.onLeft?.(l); } });
    left.on('error', () => {});
    this.leftWatcher = left;
    await this.reloadPlacements();
    await this.nodes();
  }

  /** Every placement, read from etcd into memory. */
  private async reloadPlacements(): Promise<void> {
    for (const [k, v] of Object.entries(await this.client.getAll().prefix(this.key('placement/')).strings())) {
      const index = this.indexOf(k);
      if (index !== null) this.placement.set(index, v);
    }
  }

  private memberOf(key: string, value: string): ClusterNode | null {
    try {
      const n = JSON.parse(value) as ClusterNode;
      return typeof n.url === 'string' ? { ...n, node: key.slice(this.key('nodes/').length) } : null;
    } catch {
      return null;
    }
  }

  /** A live node from memory (the watch keeps it current); null: not seen live. */
  nodeKnown(name: string): ClusterNode | null {
    return this.members.get(name) ?? null;
  }

  /**
   * Create the membership key under a new lease, only if absent. The lease's loss (etcd
   * unreachable past the TTL) starts one rejoin; a lease that did not get the key is revoked
   * and watched by nobody.
   */
  private async tryMembership(record: string): Promise<boolean> {
    const lease = this.client.lease(this.o.ttlSeconds);
    let holding = false;
    lease.on('lost', () => { if (holding && this.lease === lease && !this.closed) { this.deadline = 0; void this.rejoin(); } });
    // The deadline counts from when each keep-alive was sent: etcd's TTL runs from no later than
    // that. Keep-alives are sent every TTL/3 whether or not the last was answered, so each answer
    // is paired with the oldest keep-alive not answered yet (first in, first out), never a newer one.
    const sent: number[] = [];
    lease.on('keepaliveFired', () => { sent.push(performance.now()); if (sent.length > 16) sent.shift(); });
    // A new keep-alive stream: the old one's unanswered keep-alives get no answer (an ordered stream loses none otherwise).
    lease.on('keepaliveEstablished', () => { sent.length = 0; });
    lease.on('keepaliveSucceeded', (res) => {
      const at = sent.shift();
      if (holding && this.lease === lease && Number(res.TTL) > 0 && at !== undefined) this.deadline = Math.max(this.deadline, at + this.o.ttlSeconds * 1000 - this.marginMs);
    });
    const begun = performance.now();
    try {
      const r = await this.client.if(this.key(`nodes/${this.o.node}`), 'Version', '==', 0).then(lease.put(this.key(`nodes/${this.o.node}`)).value(record)).commit();
      if (r.succeeded) {
        holding = true;
        this.lease = lease;
        this.deadline = begun + this.o.ttlSeconds * 1000 - this.marginMs;
        return true;
      }
    } catch (err) {
      await lease.revoke().catch(() => {});
      throw err;
    }
    await lease.revoke().catch(() => {});
    return false;
  }

  /** After the membership lease was lost: join again once etcd answers and the old key is gone (one loop at a time). */
  private rejoin(): Promise<void> {
    this.rejoining ??= (async () => {
      this.lease = null;
      // Cut off meanwhile, repositories may have left this node: no write before the placements
      // are read again (the watch may lag behind the membership).
      this.placementsStale = true;
      while (!this.closed) {
        try {
          if (await this.tryMembership(JSON.stringify({ node: this.o.node, url: this.o.url, since: new Date().toISOString(), failover: this.o.failover ?? 'manual' } satisfies ClusterNode))) break;
        } catch { /* etcd does not answer yet */ }
        await sleep(1000);
      }
      while (!this.closed) {
        try {
          await this.reloadPlacements();
          this.placementsStale = false;
          break;
        } catch { /* etcd does not answer yet */ }
        await sleep(1000);
      }
      this.rejoining = null;
    })();
    return this.rejoining;
  }

  private indexOf(key: string): number | null {
    const m = /\/placement\/(0|[1-9][0-9]{0,9})$/.exec(key);
    return m && Number(m[1]) <= 0xffff_ffff ? Number(m[1]) : null;
  }

  /** The node owning repository `index`, from memory (null: no placement seen). */
  ownerKnown(index: number): string | null {
    return this.placement.get(index) ?? null;
  }

  /** The owner, read from etcd when this node has not seen the placement yet (a repository just registered elsewhere). */
  async owner(index: number): Promise<string | null> {
    const known = this.placement.get(index);
    if (known !== undefined) return known;
    const v = await this.client.get(this.key(`placement/${index}`)).string();
    if (v !== null) this.placement.set(index, v);
    return v;
  }

  /** Every live node (its membership key present), read from etcd (and the memory refreshed with it). */
  async nodes(): Promise<Map<string, ClusterNode>> {
    const out = new Map<string, ClusterNode>();
    for (const [k, v] of Object.entries(await this.client.getAll().prefix(this.key('nodes/')).strings())) {
      const n = this.memberOf(k, v);
      if (n) out.set(n.node, n);
    }
    for (const name of this.members.keys()) if (!out.has(name)) this.members.delete(name);
    for (const [name, n] of out) this.members.set(name, n);
    return out;
  }

  /** Every placement: index → node. */
  placements(): Map<number, string> {
    return new Map(this.placement);
  }

  /**
   * Allocate a repository for a registration on this node: a non-empty namespace already owned
   * answers its repository (created false); otherwise the next index, placed here, in one
   * transaction (retried while other nodes allocate at the same time). `replacing`: the index of
   * the namespace's purged repository, whose namespace the new one takes.
   */
  async allocate(namespace: string, replacing?: number): Promise<Allocation> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const nsKey = namespace === '' ? null : this.key(`namespaces/${encodeURIComponent(namespace)}`);
      if (nsKey) {
        const existing = await this.client.get(nsKey).string();
        if (existing !== null && Number(existing) !== replacing) {
          const index = Number(existing);
          return { index, created: false, owner: (await this.owner(index)) ?? this.o.node };
        }
      }
      const nextText = await this.client.get(this.key('registry/next')).string();
      const next = nextText === null ? 0 : Number(nextText);
      let txn = this.client.if(this.key('registry/next'), nextText === null ? 'Version' : 'Value', '==', nextText === null ? 0 : nextText);
      // A namespace whose repository was purged (`replacing`) is taken from it: only while it still names that one.
      if (nsKey) txn = replacing === undefined ? txn.and(nsKey, 'Version', '==', 0) : txn.and(nsKey, 'Value', '==', String(replacing));
      const puts = [this.client.put(this.key('registry/next')).value(String(next + 1)), this.client.put(this.key(`placement/${next}`)).value(this.o.node)];
      if (nsKey) puts.push(this.client.put(nsKey).value(String(next)));
      const r = await txn.then(...puts).commit();
      if (r.succeeded) {
        this.placement.set(next, this.o.node);
        return { index: next, created: true, owner: this.o.node };
      }
    }
    throw new Error(`could not allocate a repository index in ${this.location.url}: other nodes kept allocating`);
  }

  /** The next index etcd will hand out (a node's registry fills the indexes below it that it does not own with placeholders). */
  async nextIndex(): Promise<number> {
    const v = await this.client.get(this.key('registry/next')).string();
    return v === null ? 0 : Number(v);
  }

  private leftOf(key: string, value: string): LeftRecord | null {
    const m = /\/([0-9]{1,10})$/.exec(key);
    if (!m) return null;
    try {
      const v = JSON.parse(value) as Omit<LeftRecord, 'index'>;
      return typeof v.to === 'string' ? { index: Number(m[1]), to: v.to, kind: v.kind === 'failover' ? 'failover' : 'move', at: String(v.at) } : null;
    } catch {
      return null;
    }
  }

  /** Record (or clear) the archive this node ships to, where a move or a failover reads its repositories. */
  async publishArchive(url: string | null): Promise<void> {
    if (url === null) await this.client.delete().key(this.key(`archives/${this.o.node}`));
    else await this.client.put(this.key(`archives/${this.o.node}`)).value(url);
  }

  /** The archive node `name` ships to, as it last said (null: none). */
  async archiveOf(name: string): Promise<string | null> {
    return this.client.get(this.key(`archives/${name}`)).string();
  }

  /** Whether node `name` holds its membership now, read from etcd (not from memory). */
  async isLive(name: string): Promise<boolean> {
    return (await this.client.get(this.key(`nodes/${name}`)).string()) !== null;
  }

  /** The placement read from etcd, never from memory (a move or a failover decides on it). */
  async ownerNow(index: number): Promise<string | null> {
    const v = await this.client.get(this.key(`placement/${index}`)).string();
    if (v !== null) this.placement.set(index, v);
    return v;
  }

  /** The move under way of repository `index`, as stored (null: none), with its raw value for a compare. */
  async moveOf(index: number): Promise<{ move: MoveRecord; raw: string } | null> {
    const raw = await this.client.get(this.key(`moves/${index}`)).string();
    if (raw === null) return null;
    try {
      return { move: JSON.parse(raw) as MoveRecord, raw };
    } catch {
      return { move: { from: '', to: '', token: '', since: '' }, raw };
    }
  }

  /** Start a move of `index` from `from` to this node: only while `from` owns it and no other move is under way. */
  async beginMove(index: number, from: string): Promise<{ move: MoveRecord; raw: string } | null> {
    const move: MoveRecord = { from, to: this.o.node, token: randomBytes(16).toString('hex'), since: new Date().toISOString() };
    const raw = JSON.stringify(move);
    const r = await this.client.if(this.key(`placement/${index}`), 'Value', '==', from).and(this.key(`moves/${index}`), 'Version', '==', 0)
      .then(this.client.put(this.key(`moves/${index}`)).value(raw)).commit();
    return r.succeeded ? { move, raw } : null;
  }

  /** Call a move off: deletes its record only while it is still this one (true: called off; false: it was gone already). */
  async cancelMove(index: number, raw: string): Promise<boolean> {
    const r = await this.client.if(this.key(`moves/${index}`), 'Value', '==', raw).then(this.client.delete().key(this.key(`moves/${index}`))).commit();
    return r.succeeded;
  }

  /**
   * Flip the placement of `index` from `from` to this node, in one transaction with the record of
   * its leaving (PREFIX/left/FROM/INDEX). A move flips only while its record is the one it
   * began (`move`); a failover only while `from` holds no membership (and calls off a move of
   * `from`'s that was under way, `staleMove`).
   */
  async flip(index: number, from: string, kind: 'move' | 'failover', move: string | null): Promise<FlipResult> {
    let txn = this.client.if(this.key(`placement/${index}`), 'Value', '==', from);
    if (kind === 'move') txn = txn.and(this.key(`moves/${index}`), 'Value', '==', move ?? '');
    else {
      txn = txn.and(this.key(`nodes/${from}`), 'Version', '==', 0);
      txn = move === null ? txn.and(this.key(`moves/${index}`), 'Version', '==', 0) : txn.and(this.key(`moves/${index}`), 'Value', '==', move);
    }
    const left = JSON.stringify({ to: this.o.node, kind, at: new Date().toISOString() });
    const r = await txn.then(
      this.client.put(this.key(`placement/${index}`)).value(this.o.node),
      this.client.put(this.key(`left/${from}/${index}`)).value(left),
      this.client.delete().key(this.key(`moves/${index}`)),
    ).commit();
    if (r.succeeded) {
      this.placement.set(index, this.o.node);
      return { flipped: true };
    }
    const owner = await this.ownerNow(index);
    if (owner !== from) return { flipped: false, owner, why: `repository ${index} is placed on ${owner === null ? 'no node' : `node ${owner}`} now, not on ${from}` };
    if (kind === 'failover' && (await this.isLive(from))) return { flipped: false, owner, why: `node ${from} is live again` };
    return { flipped: false, owner, why: kind === 'move' ? `the move was called off (node ${from} gave up waiting for it)` : 'a move of it began meanwhile' };
  }

  /** Repositories that left this node while it was away (PREFIX/left/NAME/…). */
  async leftBehind(): Promise<LeftRecord[]> {
    const out: LeftRecord[] = [];
    for (const [k, v] of Object.entries(await this.client.getAll().prefix(this.key(`left/${this.o.node}/`)).strings())) {
      const l = this.leftOf(k, v);
      if (l) out.push(l);
    }
    return out.sort((a, b) => a.index - b.index);
  }

  /** This node has set its old copy of `index` aside. */
  async clearLeft(index: number): Promise<void> {
    await this.client.delete().key(this.key(`left/${this.o.node}/${index}`));
  }

  /** Leave: the membership key is revoked (the node is down at once for the others). */
  async close(): Promise<void> {
    this.closed = true;
    await this.watcher?.cancel().catch(() => {});
    await this.leftWatcher?.cancel().catch(() => {});
    await this.nodeWatcher?.cancel().catch(() => {});
    await this.lease?.revoke().catch(() => {});
    this.client.close();
  }
}
