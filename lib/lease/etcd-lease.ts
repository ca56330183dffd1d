// The writer lease in etcd (`cairn serve --lease etcd://HOST:PORT/PREFIX`; docs/operations.md
// "Writer lease (etcd)", storage-layout.md §21). One key, PREFIX/writer, names the writer and
// is attached to an etcd TTL lease the writer keeps alive: etcd deletes it when the lease
// expires, so only then can another process create it (a transaction `if version == 0`). The
// writer counts its own deadline on the monotonic clock — the moment it sent the last keep-alive
// that etcd answered, plus the TTL, less a safety margin — and holds the lease only before it.
// PREFIX/epoch counts the takeovers, so a writer that lost its key gets it back only when nobody
// took it in between; PREFIX/ids/REPO/SPACE hold the id blocks reserved by the writers
// (hi-lo), each reservation a transaction guarded by the writer's key.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Etcd3, EtcdLeaseInvalidError, type Lease } from 'etcd3';
import { DeadlineLease, type LeaseBackend, type LeaseOptions, type Takeover, type WriterRecord } from './lease-backend.js';

/** `etcd://HOST:PORT/PREFIX` (or `etcds://`, over TLS) read into its parts. */
export interface LeaseLocation {
  host: string;
  port: number;
  /** `etcds://`: gRPC over TLS. */
  tls: boolean;
  /** The key prefix, with one leading slash and none trailing: `/cairn/prod`. */
  prefix: string;
  /** The URL in its one spelling. */
  url: string;
}

export class LeaseUrlError extends Error {}

/** Read `etcd://HOST:PORT/PREFIX`; a URL that cannot be used throws LeaseUrlError saying why. */
export function parseLeaseUrl(text: string): LeaseLocation {
  const usage = 'the form is etcd://HOST:PORT/PREFIX (etcds:// over TLS), e.g. etcd://127.0.0.1:2379/cairn';
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new LeaseUrlError(`not a URL: ${usage}`);
  }
  if (u.protocol !== 'etcd:' && u.protocol !== 'etcds:') throw new LeaseUrlError(`the scheme must be etcd:// or etcds:// (got ${u.protocol.replace(/:$/, '')}://): ${usage}`);
  if (u.username || u.password) throw new LeaseUrlError(`user names and passwords in the URL are not supported (--lease-user and --lease-password-file are): ${usage}`);
  if (!u.hostname) throw new LeaseUrlError(`no host: ${usage}`);
  if (!u.port) throw new LeaseUrlError(`no port (etcd's client port, usually 2379): ${usage}`);
  const port = Number(u.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new LeaseUrlError(`port ${u.port} is not from 1 to 65535`);
  if (u.search || u.hash) throw new LeaseUrlError(`no query or fragment: ${usage}`);
  const parts = decodeURIComponent(u.pathname).split('/').filter((p) => p !== '');
  if (parts.length === 0) throw new LeaseUrlError(`no key prefix: ${usage}`);
  if (parts.some((p) => p === '.' || p === '..' || /[\u0000-\u001f\u007f]/.test(p))) throw new LeaseUrlError('the key prefix must not hold "." or ".." segments or control characters');
  const prefix = `/${parts.join('/')}`;
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const tls = u.protocol === 'etcds:';
  return { host, port, tls, prefix, url: `${tls ? 'etcds' : 'etcd'}://${u.hostname}:${port}${prefix}` };
}

export type { WriterRecord, LeaseState, LeaseOptions, Takeover } from './lease-backend.js';

/** How this server reaches etcd beyond its URL: TLS material and a user (etcd's own auth). Never logged. */
export interface EtcdAccess {
  tls?: { ca: Buffer | null; cert: Buffer | null; key: Buffer | null };
  auth?: { username: string; password: string };
}

/**
 * A client for `location`: every call bounded by `callMs` and tried once (the caller's own loop
 * decides when to try again); TLS and etcd's auth as `access` says.
 */
export function etcdClient(location: LeaseLocation, access: EtcdAccess, callMs: number): Etcd3 {
  const t = access.tls;
  return new Etcd3({
    hosts: `${location.tls ? 'https://' : ''}${location.host.includes(':') ? `[${location.host}]` : location.host}:${location.port}`,
    // etcds://: the CA to trust (null: the system's), and a client certificate when etcd asks for one.
    ...(location.tls ? { credentials: { rootCertificate: (t?.ca ?? null) as Buffer, ...(t?.cert && t.key ? { certChain: t.cert, privateKey: t.key } : {}) } } : {}),
    ...(access.auth ? { auth: { username: access.auth.username, password: access.auth.password, callOptions: () => ({ deadline: Date.now() + callMs }) } } : {}),
    dialTimeout: callMs,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + callMs }),
    faultHandling: { host: () => ONCE as never, global: ONCE as never },
  });
}

/** A policy that runs each call once: the lease's own loop decides when to try again. */
const ONCE = { execute: <T>(fn: (c: { signal: AbortSignal }) => PromiseLike<T> | T) => Promise.resolve().then(() => fn({ signal: new AbortController().signal })) };

export class EtcdWriterLease extends DeadlineLease implements LeaseBackend {
  readonly node = `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
  private readonly client: Etcd3;
  private readonly writerKey: string;
  private readonly epochKey: string;
  private readonly idsPrefix: string;
  private lease: Lease | null = null;
  /** The exact bytes of our PREFIX/writer value: the guard of every transaction of ours. */
  private record: string | null = null;
  private epoch = 0;
  private generation: string | null = null;

  constructor(readonly location: LeaseLocation, private readonly o: LeaseOptions & EtcdAccess) {
    super(o);
    this.client = etcdClient(location, o, Math.max(500, Math.floor((o.ttlSeconds * 1000) / 3)));
    this.writerKey = `${location.prefix}/writer`;
    this.epochKey = `${location.prefix}/epoch`;
    this.idsPrefix = `${location.prefix}/ids/`;
  }

  /** The archive generation to name in the record (set before a takeover, or updated after). */
  async setGeneration(generation: string | null): Promise<void> {
    this.generation = generation;
    if (this.record === null || !this.holds()) return;
    const next = this.makeRecord();
    const r = await this.client.if(this.writerKey, 'Value', '==', this.record).then(this.lease!.put(this.writerKey).value(next)).commit();
    if (r.succeeded) this.record = next;
  }

  private makeRecord(): string {
    const rec: WriterRecord = { node: this.node, url: this.o.publicUrl ?? null, generation: this.generation, epoch: this.epoch, since: new Date().toISOString() };
    return JSON.stringify(rec);
  }

  /** The writer's record in etcd, or null when no writer holds the lease. */
  async holder(): Promise<WriterRecord | null> {
    const text = await this.client.get(this.writerKey).string();
    if (text === null) return null;
    try {
      return JSON.parse(text) as WriterRecord;
    } catch {
      return { node: '(unreadable record)', url: null, generation: null, epoch: 0, since: '' };
    }
  }

  /** The takeover count (PREFIX/epoch). */
  private async readEpoch(): Promise<{ value: number; exists: boolean }> {
    const text = await this.client.get(this.epochKey).string();
    return { value: text === null ? 0 : Number(text), exists: text !== null };
  }

  /**
   * Try once to become the writer: only when no writer key exists (the holder's lease expired
   * or was released). On success the keep-alive loop runs and the id reservations are read.
   */
  async tryTakeover(): Promise<Takeover | null> {
    if (this._state === 'held' || this._state === 'superseded' || this._state === 'released') throw new Error(`the writer lease is ${this._state}`);
    const { value: epoch, exists } = await this.readEpoch();
    const lease = this.client.lease(this.o.ttlSeconds, { autoKeepAlive: false });
    lease.on('lost', () => {});
    const sent = performance.now();
    try {
      await lease.grant();
    } catch (err) {
      lease.release();
      throw err;
    }
    this.epoch = epoch + 1;
    const record = this.makeRecord();
    const r = await this.client
      .if(this.writerKey, 'Version', '==', 0)
      .and(this.epochKey, exists ? 'Value' : 'Version', '==', exists ? String(epoch) : 0)
      .then(lease.put(this.writerKey).value(record), this.client.put(this.epochKey).value(String(epoch + 1)))
      .commit();
    if (!r.succeeded) {
      await lease.revoke().catch(() => {});
      return null;
    }
    this.lease = lease;
    this.record = record;
    this.deadline = this.deadlineFrom(sent);
    this._state = 'held';
    const ceilings = await this.readCeilings();
    this.startLoop();
    return { ceilings, epoch: this.epoch };
  }

  /** Every reserved id ceiling: `REPO/SPACE` → the highest id reserved. */
  async readCeilings(): Promise<Map<string, number>> {
    const all = await this.client.getAll().prefix(this.idsPrefix).strings();
    const out = new Map<string, number>();
    for (const [key, value] of Object.entries(all)) {
      const n = Number(value);
      if (Number.isSafeInteger(n) && n >= 0) out.set(key.slice(this.idsPrefix.length), n);
    }
    return out;
  }

  /**
   * Reserve ids up to `ceiling` for `REPO/SPACE`, only while this writer's key stands (a
   * writer that lost the lease reserves nothing). Resolves false when the guard failed.
   */
  async reserve(space: string, ceiling: number): Promise<boolean> {
    if (this.record === null || this._state !== 'held') return false;
    const r = await this.client.if(this.writerKey, 'Value', '==', this.record).then(this.client.put(`${this.idsPrefix}${space}`).value(String(ceiling))).commit();
    if (!r.succeeded) void this.check();
    return r.succeeded;
  }

  private startLoop(): void {
    this.startRenewals(() => this._state === 'held', () => this.renew().catch(() => {}));
  }


  /** One keep-alive; a lease etcd no longer has is taken back when nobody took over meanwhile. */
  private async renew(): Promise<void> {
    if (this._state === 'superseded' || this._state === 'released') return;
    if (this._state === 'held' || this._state === 'uncertain') {
      const sent = performance.now();
      try {
        const res = await this.lease!.keepaliveOnce({ deadline: Date.now() + Math.max(500, (this.o.ttlSeconds * 1000) / 3) });
        if (Number(res.TTL) > 0) {
          const was = this.state;
          this.deadline = Math.max(this.deadline, this.deadlineFrom(sent));
          this._state = 'held';
          if (was === 'uncertain') this.o.onEvent?.('regained', 'the keep-alive went through again');
          return;
        }
      } catch (err) {
        if (!(err instanceof EtcdLeaseInvalidError)) {
          if (this.state === 'uncertain' && this._state === 'held') this.o.onEvent?.('uncertain', (err as Error).message);
          return; // etcd did not answer: the deadline decides, and the next round tries again
        }
      }
      // etcd answered that the lease is gone: its key is gone with it.
      this._state = 'lost';
      this.lease?.release();
      this.lease = null;
      this.o.onEvent?.('lost', 'etcd expired the lease');
    }
    if (this._state === 'lost') await this.regain();
  }

  /** After the lease expired: create the key again if nobody took over, else superseded. */
  private async regain(): Promise<void> {
    const { value: epoch } = await this.readEpoch();
    if (epoch !== this.epoch) return this.supersede(await this.holder());
    const lease = this.client.lease(this.o.ttlSeconds, { autoKeepAlive: false });
    lease.on('lost', () => {});
    const sent = performance.now();
    await lease.grant();
    const record = this.makeRecord();
    const r = await this.client
      .if(this.writerKey, 'Version', '==', 0)
      .and(this.epochKey, 'Value', '==', String(this.epoch))
      .then(lease.put(this.writerKey).value(record))
      .commit();
    if (!r.succeeded) {
      await lease.revoke().catch(() => {});
      return this.supersede(await this.holder());
    }
    this.lease = lease;
    this.record = record;
    this.deadline = this.deadlineFrom(sent);
    this._state = 'held';
    this.o.onEvent?.('regained', 'the lease was taken again (nobody took over meanwhile)');
  }

  /** Whether our key still stands (after a failed reservation). */
  private async check(): Promise<void> {
    const holder = await this.holder().catch(() => undefined);
    if (holder === undefined) return;
    if (holder === null || holder.node !== this.node) {
      const { value: epoch } = await this.readEpoch();
      if (epoch !== this.epoch || (holder !== null && holder.node !== this.node)) this.supersede(holder);
    }
  }

  private supersede(by: WriterRecord | null): void {
    if (this._state === 'superseded' || this._state === 'released') return;
    this._state = 'superseded';
    this._successor = by;
    this.stopLoop = true;
    this.lease?.release();
    this.lease = null;
    this.o.onSuperseded?.(by);
  }

  /**
   * Stop acknowledging (the caller has already stopped answering writes): the lease's deadline
   * is dropped at once, and the keep-alive goes on until `release`.
   */
  stopAcknowledging(): void {
    this.deadline = 0;
  }

  /**
   * Give the lease up: revoke it in etcd (its key goes with it, so a standby takes over at
   * once rather than after the TTL). Call it only once this writer answers no more writes.
   */
  async release(): Promise<void> {
    this.stopLoop = true;
    this.deadline = 0;
    const lease = this.lease;
    this.lease = null;
    if (this._state !== 'superseded') this._state = 'released';
    if (lease) await lease.revoke();
  }

  /** Stop the loop and the client; the lease is left to expire (a stop is not a release). */
  async close(): Promise<void> {
    this.stopLoop = true;
    this.halt.abort();
    this.lease?.release();
    await this.loop?.catch(() => {});
    this.client.close();
  }
}
