// The writer lease kept in the archive itself (`cairn serve --lease archive`; docs/operations.md
// "Writer lease (archive)", storage-layout.md §20.10): for an operator who runs no etcd. It is a
// time-based fence that needs nothing from the store but reads of new keys, so it holds on
// Swift (no conditional writes, listings that lag) as on S3:
//
// - The writer of generation G renews every third of the TTL by reading `writer-fence/<G>`:
//   absent, its deadline becomes the moment it sent that read plus the TTL, less a margin.
//   Present, a successor has fenced it: superseded, for good.
// - A successor (a standby being promoted) writes `writer-fence/<G>` naming itself, then waits one
//   TTL on its own monotonic clock before it counts as holding: every read the old writer sent
//   before the fence was stored gave a deadline that has passed by then, and every read sent
//   after finds the fence. No wall clock is compared, so clock skew does not matter.
// - A writer that hands over (a switchover) writes the fence itself, marked `released`, once it
//   acknowledges nothing more: the successor holds at once.
// - Id blocks (hi-lo) are reserved by writing `writer-ids/<G>/<seq>`, a new key each time
//   holding every ceiling so far, before the ids are acknowledged; the successor reads the
//   newest of each generation after its wait.
//
// What etcd gives and this does not: a standby cannot tell by itself that the writer died (the
// writer writes no heartbeat), so `--failover auto` needs etcd; and two standbys promoted at
// once are kept apart only by the generation claim (exclusive where the store honours
// conditional writes). The docs say so.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { buffer } from 'node:stream/consumers';
import { ObjectStoreError, sha256Hex, type ObjectStore } from '../archive/object-store.js';
import { DeadlineLease, type LeaseBackend, type LeaseOptions, type WriterRecord, type Takeover } from './lease-backend.js';

export const WRITER_FENCE_PREFIX = 'writer-fence/';
export const WRITER_IDS_PREFIX = 'writer-ids/';
const GENERATIONS_PREFIX = 'generations/';
const pad20 = (n: bigint): string => n.toString().padStart(20, '0');
const fenceKey = (gen: bigint): string => `${WRITER_FENCE_PREFIX}${pad20(gen)}`;
const idsKey = (gen: bigint, seq: bigint): string => `${WRITER_IDS_PREFIX}${pad20(gen)}/${pad20(seq)}`;

/** `writer-fence/<G>` (JSON): who fenced the writer of generation G, and whether G's writer released it itself. */
export interface FenceRecord extends WriterRecord {
  /** The generation whose writer must stop. */
  fenced_generation: number;
  /** Written by G's own writer at a handover: the successor holds at once. */
  released: boolean;
}

/** `writer-ids/<G>/<seq>` (JSON): every id ceiling G's writer had reserved. */
export interface IdBlocksRecord {
  generation: number;
  seq: number;
  /** `REPO/SPACE` → the highest id reserved. */
  ids: Record<string, number>;
}

export interface ArchiveLeaseOptions extends LeaseOptions {
  /** The archive's URL, for messages (`s3://bucket/prefix/`). */
  archiveUrl: string;
  /** The generation this server writes under now (null or "0": none claimed yet: nothing can have fenced it). */
  generation: () => string | null;
  /** A standby: taking the lease fences the current writer and waits one TTL (`fence`). */
  standby: boolean;
}

export class ArchiveWriterLease extends DeadlineLease implements LeaseBackend {
  readonly node = `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
  readonly location: { url: string };
  /** A successor's fence: the generation it fences and when (monotonic) the fence was stored. */
  private fencing: { generation: bigint; storedAt: number; released: boolean } | null = null;
  /** Per generation, the newest id-blocks object written (its number). */
  private readonly idSeq = new Map<bigint, bigint>();
  /** stopAcknowledging: renewals no longer move the deadline. */
  private stopped = false;
  private ids: Record<string, number> = {};
  private reserving: Promise<unknown> = Promise.resolve();
  private saidUncertain = false;
  private ownGeneration: string | null = null;

  constructor(private readonly store: ObjectStore, private readonly o: ArchiveLeaseOptions) {
    super(o);
    this.location = { url: `${o.archiveUrl}${WRITER_FENCE_PREFIX}` };
  }

  async setGeneration(generation: string | null): Promise<void> {
    this.ownGeneration = generation;
  }

  /** The generation this server writes under, or null when none is claimed yet. */
  private generation(): bigint | null {
    for (const g of [this.o.generation(), this.ownGeneration]) if (g && /^[0-9]+$/.test(g) && BigInt(g) > 0n) return BigInt(g);
    return null;
  }

  private record(): WriterRecord {
    return { node: this.node, url: this.o.publicUrl ?? null, generation: this.generation()?.toString() ?? null, epoch: 0, since: new Date().toISOString() };
  }

  /** An object's JSON, or undefined when absent (null when it is not JSON). */
  private async readJson<T>(key: string): Promise<T | null | undefined> {
    let bytes: Buffer;
    try {
      bytes = await buffer((await this.store.get(key)).body);
    } catch (err) {
      if (err instanceof ObjectStoreError && err.kind === 'not-found') return undefined;
      throw err;
    }
    try {
      return JSON.parse(bytes.toString('utf8')) as T;
    } catch {
      return null;
    }
  }

  private async putJson(key: string, value: unknown): Promise<void> {
    const body = Buffer.from(`${JSON.stringify(value)}\n`);
    await this.store.put(key, body, { sha256: sha256Hex(body), size: body.length });
  }

  /**
   * The greatest number under `prefix` whose keys are `prefix<20 digits><suffix>`: the listing's,
   * then read forward key by key (a listing may lag a new key; a read of a new key does not).
   */
  private async newestUnder(prefix: string, suffix: string, exists: (n: bigint) => Promise<boolean>): Promise<bigint> {
    let top = 0n;
    let after: string | undefined;
    const pattern = new RegExp(`^${prefix.replace(/[/]/g, '\\/')}([0-9]{20})${suffix ? suffix.replace(/[/]/g, '\\/') : ''}$`);
    for (;;) {
      const page = await this.store.list(prefix, after ? { after } : {});
      for (const o of page.objects) {
        const m = pattern.exec(o.key);
        if (m && BigInt(m[1]!) > top) top = BigInt(m[1]!);
      }
      if (!page.next) break;
      after = page.next;
    }
    while (await exists(top + 1n)) top += 1n;
    return top;
  }

  /** The archive's current writer generation: the greatest claim. */
  private newestClaim(): Promise<bigint> {
    return this.newestUnder(GENERATIONS_PREFIX, '', async (n) => (await this.store.head(`${GENERATIONS_PREFIX}${pad20(n)}`)) !== null);
  }

  /** Who fenced generation `g`, or null. */
  private fenceOf(g: bigint): Promise<FenceRecord | null | undefined> {
    return this.readJson<FenceRecord>(fenceKey(g));
  }

  /**
   * The writer holding the lease: null when the current generation's writer was fenced (or
   * released it), else a record naming that generation (its node is not known here: the writer
   * writes no heartbeat).
   */
  async holder(): Promise<WriterRecord | null> {
    const g = await this.newestClaim();
    if (g === 0n) return null;
    const fence = await this.fenceOf(g);
    if (fence !== undefined) return null;
    return { node: `the writer of archive generation ${g}`, url: null, generation: g.toString(), epoch: Number(g), since: '' };
  }

  /**
   * A writer (no successor's fence to write): holds once its own generation is found unfenced.
   * A standby being promoted: fences the current generation's writer, then holds one TTL after
   * the fence was stored (at once when that writer released it). Null while waiting.
   */
  async tryTakeover(): Promise<Takeover | null> {
    if (this._state === 'held' || this._state === 'superseded' || this._state === 'released') throw new Error(`the writer lease is ${this._state}`);
    const sent = performance.now();
    const own = this.generation();
    // A standby being promoted, or a writer that has claimed nothing yet on an archive another
    // writer ships to (a fresh or restored directory): a successor, fencing that writer first.
    if (this.o.standby || (own === null && (this.fencing !== null || (await this.newestClaim()) > 0n))) {
      await this.fence();
      return this.takeOverAfterFence();
    }
    if (own !== null) {
      // A writer at start: its generation must not have been fenced meanwhile.
      const fence = await this.fenceOf(own);
      if (fence !== undefined) {
        this.supersede(fence ? recordOf(fence) : null);
        throw new Error(`generation ${own} of the archive was fenced by ${fence?.node ?? 'another writer'}`);
      }
    }
    // The ids its generation reserved before (a restart): a later reservation carries them on.
    const ceilings = await this.readCeilings();
    this.ids = Object.fromEntries(ceilings);
    return this.held(sent, ceilings);
  }

  /** The generation a successor's fence stopped (null: none written by this process). */
  fencedGeneration(): bigint | null {
    return this.fencing && !this.fencing.released ? this.fencing.generation : null;
  }

  /**
   * For a standby's promotion: write the fence on the current generation's writer (or find its
   * release) and start the wait. Resolves the generation fenced.
   */
  async fence(): Promise<bigint> {
    if (this.fencing) return this.fencing.generation;
    const g = await this.newestClaim();
    const existing = g === 0n ? undefined : await this.fenceOf(g);
    if (existing && existing.released) {
      this.fencing = { generation: g, storedAt: performance.now() - this.o.ttlSeconds * 1000, released: true };
      return g;
    }
    if (g !== 0n && existing === undefined) {
      const record: FenceRecord = { ...this.record(), generation: null, fenced_generation: Number(g), released: false };
      await this.putJson(fenceKey(g), record);
    }
    this.fencing = { generation: g, storedAt: performance.now(), released: false };
    return g;
  }

  /** After `fence`: the takeover once a TTL has passed since the fence was stored (null before). */
  async takeOverAfterFence(): Promise<Takeover | null> {
    const f = this.fencing;
    if (!f) throw new Error('no fence was written');
    if (performance.now() - f.storedAt < this.o.ttlSeconds * 1000) return null;
    const ceilings = await this.readCeilings();
    this.ids = Object.fromEntries(ceilings);
    return this.held(performance.now(), ceilings);
  }

  /** Milliseconds left of a successor's wait (0: over, or not waiting). */
  fenceWaitMs(): number {
    return this.fencing ? Math.max(0, this.fencing.storedAt + this.o.ttlSeconds * 1000 - performance.now()) : 0;
  }

  private held(sent: number, ceilings: Map<string, number>): Takeover {
    this.deadline = this.deadlineFrom(sent);
    this._state = 'held';
    this.startLoop();
    return { ceilings, epoch: Number(this.generation() ?? 0n) };
  }

  /**
   * Every generation's newest id blocks, merged: `REPO/SPACE` → the highest id reserved. The
   * generations are those listed, 0 (a writer that had claimed none) and every one claimed so
   * far, read forward, so a listing that lags (Swift) misses none.
   */
  async readCeilings(): Promise<Map<string, number>> {
    const generations = new Set<bigint>([0n]);
    const claimed = await this.newestClaim();
    for (let g = 1n; g <= claimed; g++) generations.add(g);
    if (this.fencing) generations.add(this.fencing.generation);
    let after: string | undefined;
    for (;;) {
      const page = await this.store.list(WRITER_IDS_PREFIX, after ? { after } : {});
      for (const o of page.objects) {
        const m = /^writer-ids\/([0-9]{20})\//.exec(o.key);
        if (m) generations.add(BigInt(m[1]!));
      }
      if (!page.next) break;
      after = page.next;
    }
    const own = this.generation();
    if (own !== null) generations.add(own);
    const out = new Map<string, number>();
    for (const g of generations) {
      const prefix = `${WRITER_IDS_PREFIX}${pad20(g)}/`;
      const seq = await this.newestUnder(prefix, '', async (n) => (await this.store.head(idsKey(g, n))) !== null);
      if (seq === 0n) continue;
      const rec = await this.readJson<IdBlocksRecord>(idsKey(g, seq));
      if (!rec || typeof rec.ids !== 'object' || rec.ids === null) throw new ObjectStoreError('other', `the writer lease's id blocks ${idsKey(g, seq)} are damaged`);
      for (const [k, v] of Object.entries(rec.ids)) if (Number.isSafeInteger(v) && v >= 0) out.set(k, Math.max(out.get(k) ?? 0, v));
    }
    return out;
  }

  /** Write the next id-blocks object of this generation (every ceiling so far), while held. */
  async reserve(space: string, ceiling: number): Promise<boolean> {
    const run = this.reserving.catch(() => undefined).then(async () => {
      if (!this.holds()) return false;
      const g = this.generation() ?? 0n;
      // Each generation's objects are numbered from 1 without a gap (a reader reads forward).
      let last = this.idSeq.get(g);
      if (last === undefined) last = await this.newestUnder(`${WRITER_IDS_PREFIX}${pad20(g)}/`, '', async (n) => (await this.store.head(idsKey(g, n))) !== null);
      const ids = { ...this.ids, [space]: Math.max(this.ids[space] ?? 0, ceiling) };
      const seq = last + 1n;
      await this.putJson(idsKey(g, seq), { generation: Number(g), seq: Number(seq), ids } satisfies IdBlocksRecord);
      this.idSeq.set(g, seq);
      this.ids = ids;
      return this.holds();
    });
    this.reserving = run;
    return run;
  }

  /** One renewal: the own generation's fence read; absent → the deadline moves on. */
  private async renew(): Promise<void> {
    if (this._state !== 'held') return;
    const g = this.generation();
    const sent = performance.now();
    if (g !== null) {
      const fence = await this.fenceOf(g);
      if (fence !== undefined) {
        this.supersede(fence ? recordOf(fence) : null);
        return;
      }
    }
    if (this.stopped) return;
    this.deadline = Math.max(this.deadline, this.deadlineFrom(sent));
    if (this.saidUncertain) {
      this.saidUncertain = false;
      this.o.onEvent?.('regained', 'the archive answered again');
    }
  }

  private supersede(by: WriterRecord | null): void {
    if (this._state === 'superseded' || this._state === 'released') return;
    this._state = 'superseded';
    this._successor = by;
    this.deadline = 0;
    this.stopLoop = true;
    this.halt.abort();
    this.o.onSuperseded?.(by);
  }

  private startLoop(): void {
    this.startRenewals(() => this.state === 'held', async () => {
      try {
        await this.renew();
      } catch (err) {
        if (this.state === 'uncertain' && !this.saidUncertain) {
          this.saidUncertain = true;
          this.o.onEvent?.('uncertain', (err as Error).message);
        }
      }
    });
  }


  stopAcknowledging(): void {
    this.stopped = true;
    this.deadline = 0;
  }

  /** A handover: write the own generation's fence as released, so the successor holds at once. */
  async release(): Promise<void> {
    this.stopLoop = true;
    this.halt.abort();
    this.deadline = 0;
    const wasHeld = this._state === 'held';
    if (this._state !== 'superseded') this._state = 'released';
    const g = this.generation();
    if (!wasHeld || g === null) return;
    await this.reserving.catch(() => undefined);
    // A successor's fence already there stays (the fence is written once): nothing to release.
    if ((await this.fenceOf(g)) !== undefined) return;
    const record: FenceRecord = { ...this.record(), fenced_generation: Number(g), released: true };
    await this.putJson(fenceKey(g), record);
  }

  async close(): Promise<void> {
    this.stopLoop = true;
    this.halt.abort();
    await this.loop?.catch(() => {});
    await this.reserving.catch(() => {});
  }
}

const recordOf = (l: WriterRecord): WriterRecord => ({ node: l.node, url: l.url ?? null, generation: l.generation ?? null, epoch: l.epoch ?? 0, since: l.since ?? '' });
