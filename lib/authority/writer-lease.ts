// `cairn serve --lease etcd://HOST:PORT/PREFIX` or `--lease archive`: the writer acknowledges a
// commit only while it holds the writer lease, in etcd (lib/lease/etcd-lease.ts) or in the
// archive (lib/lease/object-store-lease.ts); docs/operations.md "Writer lease". Two checks: a mutating request is refused (503) before anything is written when the
// lease is not held now (`refusal`, asked by the HTTP layer), and a commit already under way is
// checked again at its acknowledge point (`acknowledge`, the commit queue's hook, after
// --archive-sync's): one whose deadline passed meanwhile is durable here but answered 503. The
// same hook reserves id blocks in the lease's store before an id from a new block is acknowledged (hi-lo),
// so a writer that takes over starts every id space past what the old one may have handed out.
import { setTimeout as sleep } from 'node:timers/promises';
import { Busy } from '../domain/errors.js';
import type { LeaseBackend, WriterRecord } from '../lease/lease-backend.js';
import type { Log } from './logger.js';

/** Ids reserved per block: one write to the lease's store per this many new ids of one id space. */
export const ID_BLOCK = 100;

export interface WriterLeaseOptions {
  lease: LeaseBackend;
  log: Log;
  /** The highest sequence used now per id space of a repository (`task`, `change`, …), or null when it is not open. */
  idHighs?: (index: number) => Record<string, number> | null;
  /** Told the id floors read at a takeover: repository → id space → highest sequence reserved by earlier writers. */
  applyFloors?: (floors: Map<number, Record<string, number>>) => Promise<void> | void;
  /** Told once another writer took the lease over (its record, when it is still there). */
  onSuperseded?: (by: WriterRecord | null, why: string) => void;
  block?: number;
}

export interface LeaseStatus {
  url: string;
  node: string;
  state: string;
  /** Milliseconds before this writer's deadline (0: not held). */
  remaining_ms: number;
  holder: { node: string; url: string | null; generation: string | null } | null;
  /** Why writes are refused now, or null. */
  refusal: string | null;
}

const describe = (w: WriterRecord | null): string => (w ? `${w.node}${w.url ? ` at ${w.url}` : ''}${w.generation ? ` (archive generation ${w.generation})` : ''}` : 'a writer that has since let it go');

export class WriterLease {
  private stopped: { reason: string; successor: string | null } | null = null;
  /** The holder seen while waiting for the lease (for the refusal). */
  private waitingOn: WriterRecord | null = null;
  /** Our reserved ceiling per `REPO/SPACE`. */
  private readonly reserved = new Map<string, number>();
  private readonly reserving = new Map<string, Promise<void>>();
  private closed = false;

  constructor(readonly o: WriterLeaseOptions) {}

  get url(): string {
    return this.o.lease.location.url;
  }

  /** Why a mutating request must be refused now (503), or null when this writer holds the lease. */
  refusal(): string | null {
    const lease = this.o.lease;
    if (this.stopped) return `${this.stopped.reason}${this.stopped.successor ? `; the writer is ${this.stopped.successor}` : ''}`;
    switch (lease.state) {
      case 'held':
        return null;
      case 'idle':
        return `this server does not hold the writer lease (${this.url}) yet${this.waitingOn ? `: ${describe(this.waitingOn)} holds it` : ''}; it takes it once the holder's lease expires`;
      case 'uncertain':
      case 'lost':
        return `this server cannot be sure it still holds the writer lease (${this.url} did not confirm it before its deadline)`;
      case 'superseded':
        return `superseded: another writer took the writer lease (${this.url}): ${describe(lease.successor)}; this server acknowledges no more writes`;
      case 'released':
        return `this server released the writer lease (${this.url}); writes go to the new writer`;
    }
  }

  /** The answer to a mutating request refused before it wrote anything (503), or null. */
  requestRefusal(): string | null {
    const why = this.refusal();
    return why === null ? null : `${why}; nothing was written: retry later, or write to the new writer if one took over`;
  }

  /**
   * The commit hook (after --archive-sync's): the commit is durable; answer its callers only
   * while the lease is held, after reserving the id blocks its new ids need.
   */
  async acknowledge(index: number, generation: number): Promise<void> {
    this.check(index, generation);
    const highs = this.o.idHighs?.(index) ?? null;
    if (highs) {
      for (const [space, high] of Object.entries(highs)) {
        const key = `${index}/${space}`;
        if (high <= (this.reserved.get(key) ?? 0)) continue;
        await this.reserveThrough(index, key, high, generation);
      }
    }
    this.check(index, generation);
  }

  private check(index: number, generation: number): void {
    const why = this.refusal();
    if (why !== null) throw new Busy(`committed on this server (commit ${generation} of repository ${index}), but not acknowledged: ${why}`, { committed: true });
  }

  /** One reservation at a time per id space; the block covers `high` and the ids after it. */
  private async reserveThrough(index: number, key: string, high: number, generation: number): Promise<void> {
    for (;;) {
      const under = this.reserving.get(key);
      if (!under) break;
      await under.catch(() => {});
      if (high <= (this.reserved.get(key) ?? 0)) return;
    }
    const block = this.o.block ?? ID_BLOCK;
    const ceiling = high + block;
    const run = (async () => {
      let ok: boolean;
      try {
        ok = await this.o.lease.reserve(key, ceiling);
      } catch (err) {
        throw new Busy(`committed on this server (commit ${generation} of repository ${index}), but not acknowledged: its new ids could not be reserved in ${this.url} (${(err as Error).message})`, { committed: true });
      }
      if (!ok) throw new Busy(`committed on this server (commit ${generation} of repository ${index}), but not acknowledged: ${this.refusal() ?? `the writer lease (${this.url}) is no longer this server's`}`, { committed: true });
      this.reserved.set(key, Math.max(this.reserved.get(key) ?? 0, ceiling));
    })();
    this.reserving.set(key, run);
    try {
      await run;
    } finally {
      if (this.reserving.get(key) === run) this.reserving.delete(key);
    }
  }

  /**
   * Take the lease: try until no other writer holds it (its lease expired or was released),
   * then read the id reservations and apply them as floors. `signal` stops the wait.
   */
  async acquire(signal?: AbortSignal): Promise<void> {
    const lease = this.o.lease;
    const every = Math.max(200, (lease.ttlSeconds * 1000) / 3);
    let said = false;
    for (;;) {
      if (lease.state === 'held') return;
      if (lease.state === 'superseded') throw new Error(this.refusal() ?? 'superseded');
      if (signal?.aborted) throw new Error('stopped before the writer lease was taken');
      if (this.closed) throw new Error('the server is stopping');
      let taken = null;
      try {
        taken = await lease.tryTakeover();
        if (!taken) this.waitingOn = await lease.holder();
      } catch (err) {
        if (!said) this.o.log.warn({ lease: this.url, problem: (err as Error).message }, 'lease: the lease store does not answer yet; retrying');
        said = true;
      }
      if (taken) {
        this.waitingOn = null;
        const floors = new Map<number, Record<string, number>>();
        for (const [key, ceiling] of taken.ceilings) {
          // What earlier writers reserved counts as reserved: new ids start past it anyway, and
          // a reservation of ours never writes a lower ceiling over it.
          this.reserved.set(key, Math.max(this.reserved.get(key) ?? 0, ceiling));
          const m = /^([0-9]+)\/([a-z_]+)$/.exec(key);
          if (!m) continue;
          const f = floors.get(Number(m[1])) ?? {};
          f[m[2]!] = ceiling;
          floors.set(Number(m[1]), f);
        }
        await this.o.applyFloors?.(floors);
        this.o.log.info({ lease: this.url, node: lease.node, epoch: taken.epoch, id_floors: Object.fromEntries(floors) }, 'lease: this server holds the writer lease');
        return;
      }
      if (this.waitingOn && !said) {
        this.o.log.info({ lease: this.url, holder: this.waitingOn.node, holder_url: this.waitingOn.url }, 'lease: another writer holds the lease; waiting for it to expire');
        said = true;
      }
      await sleep(every, undefined, { signal, ref: false }).catch(() => {});
    }
  }

  /** Called by the lease when another writer took over: refuse from now on, and say so. */
  superseded(by: WriterRecord | null): void {
    const why = `superseded: another writer took the writer lease (${this.url}): ${describe(by)}`;
    this.o.log.error({ lease: this.url, writer: by?.node ?? null, writer_url: by?.url ?? null }, 'lease: another writer took the lease over; this server acknowledges no more writes');
    this.o.onSuperseded?.(by, why);
  }

  /**
   * Stop acknowledging at once (a switchover, a stop): every mutating request and every commit
   * waiting for its answer is refused with `reason` (naming `successor` when given). The lease
   * stays held until `release`.
   */
  stopAcknowledging(reason: string, successor?: string | null): void {
    this.stopped = { reason, successor: successor ?? null };
    this.o.lease.stopAcknowledging();
  }

  /** Give the lease up (etcd: revoked; the archive: a released fence): a successor may take it at once. Only after stopAcknowledging. */
  async release(): Promise<void> {
    if (!this.stopped) this.stopAcknowledging('this server released the writer lease');
    await this.o.lease.release();
    this.o.log.info({ lease: this.url }, 'lease: released');
  }

  status(): LeaseStatus {
    const lease = this.o.lease;
    const succ = lease.successor;
    const holder = lease.state === 'held' ? null : (succ ?? this.waitingOn);
    return {
      url: this.url,
      node: lease.node,
      state: this.stopped && lease.state === 'held' ? 'stopped' : lease.state,
      remaining_ms: Math.max(0, Math.round(lease.remainingMs())),
      holder: holder ? { node: holder.node, url: holder.url, generation: holder.generation } : null,
      refusal: this.refusal(),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.o.lease.close();
  }
}
