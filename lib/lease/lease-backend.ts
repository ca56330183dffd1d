// What the writer lease (lib/authority/writer-lease.ts) needs from the store that keeps it:
// etcd (./etcd-lease.ts, `serve --lease etcd://HOST:PORT/PREFIX`) or the archive's own object
// store (./object-store-lease.ts, `serve --lease archive`). Each counts the holder's deadline on
// its monotonic clock so that it always passes before another process can take the lease.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/** The writer's record: etcd's PREFIX/writer, or the newest object of the archive's writer-lease/ chain (JSON). */
export interface WriterRecord {
  /** The holder's node id (host, pid and a random part: two processes never share one). */
  node: string;
  /** Where clients reach it (serve --public-url, or its listener), or null. */
  url: string | null;
  /** The archive generation it writes under, once known. */
  generation: string | null;
  /** The takeover that made it the writer (etcd: PREFIX/epoch). */
  epoch: number;
  since: string;
}

export type LeaseState = 'idle' | 'held' | 'uncertain' | 'lost' | 'superseded' | 'released';

export interface LeaseOptions {
  ttlSeconds: number;
  /** Subtracted from every deadline (default: a fifth of the TTL, at least 250 ms). */
  marginMs?: number;
  /** Where clients reach this server, for the record. */
  publicUrl?: string | null;
  /** Told when another writer took over (its record, or null when it is gone again). */
  onSuperseded?: (by: WriterRecord | null) => void;
  /** Told of keep-alive trouble and recoveries. */
  onEvent?: (what: 'uncertain' | 'regained' | 'lost', detail: string) => void;
}

export interface Takeover {
  /** The highest id reserved so far, per `REPO/SPACE`. */
  ceilings: Map<string, number>;
  epoch: number;
}

export interface LeaseBackend {
  /** Where the lease is kept, in one spelling (for messages and /healthz; never a secret). */
  readonly location: { url: string };
  /** This process's node id. */
  readonly node: string;
  readonly ttlSeconds: number;
  readonly state: LeaseState;
  /** Milliseconds left before the deadline (≤ 0: passed or not held). */
  remainingMs(): number;
  /** The writer that took over from this one, once superseded. */
  readonly successor: WriterRecord | null;
  /** The archive generation to name in the record. */
  setGeneration(generation: string | null): Promise<void>;
  /** The writer holding the lease now, or null when it is free (expired or released). */
  holder(): Promise<WriterRecord | null>;
  /** Try once to become the writer: null while another writer holds the lease. */
  tryTakeover(): Promise<Takeover | null>;
  /** Reserve ids up to `ceiling` for `REPO/SPACE` while this writer holds the lease; false when it no longer does. */
  reserve(space: string, ceiling: number): Promise<boolean>;
  /** Drop the deadline at once (the caller answers no more writes); the lease stays held until `release`. */
  stopAcknowledging(): void;
  /** Give the lease up so a successor may take it at once. */
  release(): Promise<void>;
  /** Stop renewing; the lease is left to expire. */
  close(): Promise<void>;
}

/**
 * The rule both stores share: the lease is held only before a deadline counted on this
 * process's monotonic clock (from the moment the last confirming request was *sent*, plus the
 * TTL, less a margin), and past it the state reads `uncertain` until a renewal goes through.
 */
export abstract class DeadlineLease {
  /** performance.now() before which the lease is held (0: not held). */
  protected deadline = 0;
  protected _state: LeaseState = 'idle';
  protected _successor: WriterRecord | null = null;
  protected readonly marginMs: number;

  constructor(protected readonly timing: Pick<LeaseOptions, 'ttlSeconds' | 'marginMs'>) {
    this.marginMs = timing.marginMs ?? Math.max(250, (timing.ttlSeconds * 1000) / 5);
  }

  get ttlSeconds(): number {
    return this.timing.ttlSeconds;
  }

  get state(): LeaseState {
    if (this._state === 'held' && performance.now() >= this.deadline) return 'uncertain';
    return this._state;
  }

  /** Whether this writer may acknowledge now: the lease held and its deadline not passed. */
  holds(): boolean {
    return this._state === 'held' && performance.now() < this.deadline;
  }

  /** Milliseconds left before the deadline (≤ 0: passed or not held). */
  remainingMs(): number {
    return this._state === 'held' ? this.deadline - performance.now() : 0;
  }

  get successor(): WriterRecord | null {
    return this._successor;
  }

  /** The renewal loop (one at a time), its stop flag and what cuts its wait short. */
  protected loop: Promise<void> | null = null;
  protected stopLoop = false;
  protected halt = new AbortController();

  /**
   * Renew every third of the TTL while `held()` says so, else every half second at most (to
   * regain sooner), until `stopLoop`. `renew` handles its own failures.
   */
  protected startRenewals(held: () => boolean, renew: () => Promise<void>): void {
    this.stopLoop = false;
    if (this.halt.signal.aborted) this.halt = new AbortController();
    const every = (this.timing.ttlSeconds * 1000) / 3;
    this.loop ??= (async () => {
      while (!this.stopLoop) {
        await sleep(held() ? every : Math.min(every, 500), undefined, { ref: false, signal: this.halt.signal }).catch(() => {});
        if (this.stopLoop) break;
        await renew();
      }
      this.loop = null;
    })();
  }

  /** The deadline a confirmation sent at `sent` (performance.now()) gives. */
  protected deadlineFrom(sent: number): number {
    return sent + this.timing.ttlSeconds * 1000 - this.marginMs;
  }
}
