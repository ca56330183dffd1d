// Continuous shipping of every authority to the archive (storage-layout.md §20): beside the
// commits, never in their path. Per repository, after commits (a batch per interval), in this
// order: the packs the archive lacks (content-addressed: skipped when present), the new byte
// ranges of every log, the other files the commit point names (index segments, lines,
// authority.bin, the registry record, workflow.ckpt at a base), and last ONE manifest naming
// everything a restore of that commit point needs. A failing or slow store delays shipping
// only: errors are retried with backoff and the shipper catches up. After a restart the
// newest own manifest says what the archive holds.
//
// The shipper knows nothing of the data directory: a ShipSource (lib/authority/archiving.ts)
// captures commit points with open read handles (the store's capture API).
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import {
  decodeManifest,
  encodeManifest,
  fileKey,
  logRangeKey,
  manifestKey,
  manifestPrefix,
  packKey,
  parseManifestKey,
  purgedMarkerKey,
  registryRecordKey,
  REGISTRY_RECORD_PATH,
  type ManifestEntry,
} from '../domain/archive-manifest.js';
import { sha256Hex, type Body, type ObjectStore } from './object-store.js';

/** One file of a capture (structurally the store's CapturedFile). */
export interface ShipFile {
  kind: 'pack' | 'log' | 'index' | 'identity' | 'lines' | 'checkpoint';
  path: string;
  size: number;
  log?: string;
  packDir?: 'objects' | 'trees';
  packId?: string;
  handle: FileHandle;
}

export interface ShipCapture {
  record: Buffer;
  state: { generation: number; logs: Record<string, number>; log_files: Record<string, number>; segments: Record<string, number[]>; lines_gen: number };
  capturedAtUs: bigint;
  files: ShipFile[];
  /** Every committed pack, opened or not. */
  packs: { dir: 'objects' | 'trees'; id: string }[];
  close(): Promise<void>;
}

export interface ShipWants {
  pack: (dir: 'objects' | 'trees', id: string) => boolean;
  checkpoint: boolean;
  file: (relPath: string) => boolean;
}

export interface ShipSource {
  /** Repositories to ship (registered, not purged), in index order. */
  repositories(): number[];
  /** Purged repositories (their archive gets the purge marker once). */
  purged?(): number[];
  /** The committed commit generation now (cheap; 0 when the repository is not open yet). */
  committed(index: number): number;
  /** The repository's registry record as §20.1 ships it (40 bytes, name_offset 0, then the name). */
  registryRecord(index: number): Buffer;
  capture(index: number, wants: ShipWants): Promise<ShipCapture>;
}

export interface ShipperOptions {
  store: ObjectStore;
  source: ShipSource;
  generation: bigint;
  /** The archive's URL, for status (never a secret). */
  url: string;
  intervalMs?: number;
  /** A log's whole committed prefix is shipped again (a base) after this many ranges. */
  checkpointRanges?: number;
  lagWarnSeconds?: number;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void; error(o: object, m: string): void };
  /** Test crash points (`archive:after-packs`, ...). */
  crashPoint?: (name: string) => void;
  /** Called once when fenced, and when lag passes the bound (the owner emits the events). */
  onFenced?: (info: { generation: string; newer: string }) => void;
  onLagging?: (info: { repository: number; lag_seconds: number }) => void;
  /** Before each manifest put: false stops shipping (the lease is lost). */
  beforeManifest?: () => Promise<void>;
  /** Use putIfAbsent for manifests (the store honours conditional writes). */
  conditional?: boolean;
  /** Packs opened per round of one repository (default PACKS_PER_ROUND; tests lower it). */
  packsPerRound?: number;
}

interface LogShipped {
  file: string;
  /** End of the bytes shipped (the committed length as of the last manifest). */
  end: bigint;
  entries: ManifestEntry[];
  rangesSinceBase: number;
}

interface RepoState {
  /** Commit generation of the newest manifest shipped (0n: none). */
  shipped: bigint;
  loaded: boolean;
  packs: Map<string, ManifestEntry>;
  logs: Map<string, LogShipped>;
  /** Index segments and lines files (immutable under their names): path → entry. */
  files: Map<string, ManifestEntry>;
  identity?: ManifestEntry;
  registry?: ManifestEntry;
  checkpoint?: ManifestEntry;
  behindSince: number | null;
  lagBytes: number;
  lagWarned: boolean;
  lastError: string | null;
}

export type ShipperState = 'shipping' | 'idle' | 'fenced' | 'error';

export interface ArchiveStatus {
  url: string;
  generation: string;
  state: ShipperState;
  repositories: { repository: number; shipped_commit: string; committed: string; lag_seconds: number; lag_bytes: number }[];
  last_error: string | null;
  last_shipped_at: string | null;
  /** With a retention policy (serve --archive-keep): the last prune's counts or failure, null before the first. */
  last_prune?: { at: string; deleted_manifests: number; deleted_objects: number; deleted_bytes: number } | { at: string; error: string } | null;
}

/** Objects up to this size are read whole; larger ones stream twice (hash, then upload). */
const WHOLE = 8 * 1024 * 1024;
/** Packs opened and shipped per round of one repository, at most. */
export const PACKS_PER_ROUND = 256;

export class FencedError extends Error {}

export class Shipper {
  private readonly repos = new Map<number, RepoState>();
  private readonly intervalMs: number;
  private readonly checkpointRanges: number;
  private readonly lagWarnSeconds: number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private fenced: string | null = null;
  /** Purged repositories whose marker is known to be stored (or that have no archive). */
  private purgeNoted = new Set<number>();
  private fencedWhy = '';
  private busy = false;
  private failures = 0;
  private lastError: string | null = null;
  private lastShippedAt: Date | null = null;
  private wake: (() => void) | null = null;

  constructor(private readonly o: ShipperOptions) {
    this.intervalMs = o.intervalMs ?? 1000;
    this.checkpointRanges = o.checkpointRanges ?? 256;
    this.lagWarnSeconds = o.lagWarnSeconds ?? 60;
  }

  start(): void {
    if (this.running) return;
    this.running = this.loop();
  }

  /** Stop after the repository being shipped (never in the middle of an object). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running;
  }

  /** Stop for good: generation `newer` was claimed, or (`why` given) the lease was lost. */
  fence(newer: string, why?: string): void {
    if (this.fenced) return;
    this.fenced = newer;
    this.fencedWhy = why ?? `fenced: generation ${newer} was claimed after ${this.o.generation}`;
    this.o.log.error({ archive: this.o.url, generation: this.o.generation.toString(), newer }, 'archive: a newer writer holds the archive; shipping stopped');
    this.o.onFenced?.({ generation: this.o.generation.toString(), newer });
    this.wake?.();
  }

  status(): ArchiveStatus {
    const now = Date.now();
    const repositories = [...this.repos.entries()].sort((a, b) => a[0] - b[0]).map(([index, r]) => {
      const committed = this.o.source.committed(index);
      return {
        repository: index,
        shipped_commit: r.shipped.toString(),
        committed: String(Math.max(committed, Number(r.shipped))),
        lag_seconds: r.behindSince === null || BigInt(committed) <= r.shipped ? 0 : Math.round((now - r.behindSince) / 100) / 10,
        lag_bytes: BigInt(committed) <= r.shipped ? 0 : r.lagBytes,
      };
    });
    let state: ShipperState = this.fenced ? 'fenced' : this.failures > 0 ? 'error' : this.busy ? 'shipping' : 'idle';
    if (state === 'idle' && repositories.some((r) => r.lag_seconds > 0)) state = 'shipping';
    return {
      url: this.o.url,
      generation: this.o.generation.toString(),
      state,
      repositories,
      last_error: this.fenced ? this.fencedWhy : this.lastError,
      last_shipped_at: this.lastShippedAt ? this.lastShippedAt.toISOString() : null,
    };
  }

  /** Ship every repository that is behind, once (tests call it; the loop calls it each interval). */
  async shipOnce(): Promise<void> {
    let failed: Error | undefined;
    for (const index of this.o.source.repositories()) {
      if (this.stopped || this.fenced) return;
      const r = this.repoState(index);
      const committed = BigInt(this.o.source.committed(index));
      try {
        if (!r.loaded) await this.loadNewest(index, r);
        if (committed <= r.shipped) { r.behindSince = null; r.lagWarned = false; continue; }
        r.behindSince ??= Date.now();
        this.checkLag(index, r);
        this.busy = true;
        await this.shipRepository(index, r);
      } catch (err) {
        // One repository's failure does not hold the others back; the round reports it.
        if (err instanceof FencedError) throw err;
        failed ??= err as Error;
      } finally {
        this.busy = false;
      }
    }
    for (const index of [...this.repos.keys()]) if (!this.o.source.repositories().includes(index)) this.repos.delete(index);
    for (const index of this.o.source.purged?.() ?? []) {
      if (this.stopped || this.fenced || this.purgeNoted.has(index)) continue;
      try {
        await this.notePurge(index);
      } catch (err) {
        failed ??= err as Error;
      }
    }
    if (failed) throw failed;
  }

  /**
   * Leave the purge marker of a purged repository that has an archive (once; HEAD first, so a
   * restart costs one request per purged repository). Its manifests then follow the retention
   * windows like any other: the newest is no longer kept for being newest.
   */
  private async notePurge(index: number): Promise<void> {
    const key = purgedMarkerKey(index);
    if (!(await this.o.store.head(key))) {
      const shipped = await this.o.store.list(manifestPrefix(index), { limit: 1 });
      if (shipped.objects.length > 0) {
        const body = Buffer.from(`${JSON.stringify({ repository_index: index, purged_seen_at: new Date().toISOString(), generation: this.o.generation.toString() })}\n`);
        await this.o.store.put(key, body, { sha256: sha256Hex(body), size: body.length });
        this.o.log.info({ archive: this.o.url, repository_index: index }, 'archive: marked a purged repository; its manifests now follow the retention windows');
      }
    }
    this.purgeNoted.add(index);
  }

  private repoState(index: number): RepoState {
    let r = this.repos.get(index);
    if (!r) {
      r = { shipped: 0n, loaded: false, packs: new Map(), logs: new Map(), files: new Map(), behindSince: null, lagBytes: 0, lagWarned: false, lastError: null };
      this.repos.set(index, r);
    }
    return r;
  }

  private checkLag(index: number, r: RepoState): void {
    if (r.behindSince === null || r.lagWarned) return;
    const lag = (Date.now() - r.behindSince) / 1000;
    if (lag < this.lagWarnSeconds) return;
    r.lagWarned = true;
    this.o.log.warn({ archive: this.o.url, repository_index: index, lag_seconds: Math.round(lag) }, 'archive: shipping lags behind the commits');
    this.o.onLagging?.({ repository: index, lag_seconds: Math.round(lag) });
  }

  private async loop(): Promise<void> {
    while (!this.stopped && !this.fenced) {
      try {
        await this.shipOnce();
        if (this.failures) this.o.log.info({ archive: this.o.url }, 'archive: shipping caught up after errors');
        this.failures = 0;
        this.lastError = null;
      } catch (err) {
        if (err instanceof FencedError) break;
        this.failures++;
        this.lastError = (err as Error).message;
        // Once per error streak at warn, then quietly (an outage would flood the log).
        if (this.failures === 1 || this.failures % 30 === 0) this.o.log.warn({ archive: this.o.url, problem: this.lastError, failures: this.failures }, 'archive: shipping failed; retrying');
      }
      for (const [index, r] of this.repos) this.checkLag(index, r);
      const delay = this.failures ? Math.min(this.intervalMs * 2 ** Math.min(this.failures, 6), 30_000) : this.intervalMs;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, delay);
        this.timer.unref();
      });
      this.wake = null;
    }
  }

  /** What the archive holds of this generation: the newest own manifest (listing finds it). */
  private async loadNewest(index: number, r: RepoState): Promise<void> {
    const prefix = manifestPrefix(index);
    const own = `${prefix}g${this.o.generation.toString().padStart(20, '0')}-`;
    let newest: string | null = null;
    let after: string | undefined = own;
    for (;;) {
      const page = await this.o.store.list(own, after ? { after } : {});
      for (const o of page.objects) if (parseManifestKey(o.key)?.archiveGeneration === this.o.generation) newest = o.key;
      if (!page.next) break;
      after = page.next;
    }
    if (newest) {
      const got = await this.o.store.get(newest);
      const m = decodeManifest(await buffer(got.body), newest);
      r.shipped = m.commitGeneration;
      for (const e of m.entries) this.remember(r, e);
    }
    r.loaded = true;
  }

  private remember(r: RepoState, e: ManifestEntry): void {
    if (e.kind === 'pack') r.packs.set(e.key, e);
    else if (e.kind === 'registry') r.registry = e;
    else if (e.kind === 'log-range') {
      const name = logNameOf(e.path);
      let l = r.logs.get(name);
      if (!l) r.logs.set(name, (l = { file: e.path, end: 0n, entries: [], rangesSinceBase: 0 }));
      l.entries.push(e);
      if (e.offset > 0n) l.rangesSinceBase++;
      if (e.offset + e.size > l.end) l.end = e.offset + e.size;
    } else if (e.path === 'authority.bin') r.identity = e;
    else if (e.path === 'workflow.ckpt') r.checkpoint = e;
    else r.files.set(e.path, e);
  }

  private async shipRepository(index: number, r: RepoState): Promise<void> {
    const gen = this.o.generation;
    const needsBase = (file: string, log: string): boolean => {
      const l = r.logs.get(log);
      return !l || l.file !== file || l.rangesSinceBase >= this.checkpointRanges;
    };
    // Decide what to open before the capture: packs not known, files not shipped.
    // At most PACKS_PER_ROUND packs are opened per round (file descriptors are finite): a
    // repository with more new packs ships them over several rounds, its manifest after the last.
    let wanted = 0;
    const capture = await this.o.source.capture(index, {
      pack: (dir, id) => !r.packs.has(packKey(index, dir, id)) && wanted++ < (this.o.packsPerRound ?? PACKS_PER_ROUND),
      checkpoint: true,
      file: (p) => !r.files.has(p),
    });
    try {
      const commit = BigInt(capture.state.generation);
      if (commit <= r.shipped) return;
      const pending: ManifestEntry[] = [];
      // The lag in bytes, known before any upload: new log bytes and packs the archive may lack.
      r.lagBytes = capture.files.reduce((n, f) => {
        if (f.kind === 'pack') return n + f.size;
        if (f.kind !== 'log') return n;
        const prev = r.logs.get(f.log!);
        return n + Math.max(0, f.size - (prev && prev.file === f.path ? Number(prev.end) : 0));
      }, 0);
      // 1. Packs the archive lacks.
      for (const f of capture.files.filter((x) => x.kind === 'pack')) {
        const key = packKey(index, f.packDir!, f.packId!);
        const { sha256, bytes } = await digest(f.handle, 0, f.size);
        const entry: ManifestEntry = { kind: 'pack', key, path: f.path, offset: 0n, size: BigInt(f.size), sha256 };
        const there = await this.o.store.head(key);
        if (!(there && there.size === f.size && there.sha256 === sha256)) await this.put(key, f.handle, 0, f.size, sha256, bytes);
        r.packs.set(key, entry);
      }
      if (capture.packs.some((p) => !r.packs.has(packKey(index, p.dir, p.id)))) return; // more packs next round
      this.o.crashPoint?.('archive:after-packs');
      // 2. Log ranges [shipped, committed) per log; a base [0, committed) when due.
      const logs = new Map<string, LogShipped>();
      let anyBase = false;
      for (const f of capture.files.filter((x) => x.kind === 'log')) {
        const name = f.log!;
        const prev = r.logs.get(name);
        const base = needsBase(f.path, name) || (prev !== undefined && BigInt(f.size) < prev.end);
        const start = base ? 0n : prev!.end;
        const end = BigInt(f.size);
        const l: LogShipped = base ? { file: f.path, end: 0n, entries: [], rangesSinceBase: 0 } : { ...prev!, entries: [...prev!.entries] };
        if (base) anyBase = true;
        if (end > start) {
          const key = logRangeKey(index, gen, f.path, start, end);
          const { sha256, bytes } = await digest(f.handle, Number(start), Number(end - start));
          await this.put(key, f.handle, Number(start), Number(end - start), sha256, bytes);
          l.entries.push({ kind: 'log-range', key, path: f.path, offset: start, size: end - start, sha256 });
          if (!base) l.rangesSinceBase++;
          l.end = end;
        }
        logs.set(name, l);
      }
      this.o.crashPoint?.('archive:after-logs');
      // 3. Files: index segments and lines (immutable names), authority.bin, the registry record, workflow.ckpt at a base.
      const files = new Map<string, ManifestEntry>();
      for (const f of capture.files.filter((x) => x.kind === 'index' || x.kind === 'lines')) {
        const entry = await this.shipFile(fileKey(index, gen, commit, f.path), f);
        files.set(f.path, entry);
      }
      const named = namedFiles(capture.state);
      for (const p of named) {
        const known = files.get(p) ?? r.files.get(p);
        if (!known) throw new Error(`repository ${index}: ${p} is named by commit ${commit} but was not captured`);
        files.set(p, known);
      }
      let identity = r.identity;
      const idFile = capture.files.find((x) => x.kind === 'identity')!;
      {
        const { sha256, bytes } = await digest(idFile.handle, 0, idFile.size);
        if (!identity || identity.sha256 !== sha256) {
          const key = fileKey(index, gen, commit, idFile.path);
          await this.put(key, idFile.handle, 0, idFile.size, sha256, bytes);
          identity = { kind: 'file', key, path: idFile.path, offset: 0n, size: BigInt(idFile.size), sha256 };
        }
      }
      let registry = r.registry;
      const record = this.o.source.registryRecord(index);
      const recordSha = sha256Hex(record);
      if (!registry || registry.sha256 !== recordSha) {
        const key = registryRecordKey(index, gen, commit);
        await this.o.store.put(key, record, { sha256: recordSha, size: record.length });
        registry = { kind: 'registry', key, path: REGISTRY_RECORD_PATH, offset: 0n, size: BigInt(record.length), sha256: recordSha };
      }
      let checkpoint = r.checkpoint;
      const ckpt = capture.files.find((x) => x.kind === 'checkpoint');
      if (!ckpt) checkpoint = undefined;
      else if (anyBase || !checkpoint) {
        const entry = await this.shipFile(fileKey(index, gen, commit, ckpt.path), ckpt);
        checkpoint = entry;
      }
      // 4. The manifest, last.
      const packs = new Map<string, ManifestEntry>();
      for (const p of capture.packs) {
        const key = packKey(index, p.dir, p.id);
        const e = r.packs.get(key);
        if (!e) throw new Error(`repository ${index}: pack ${p.id} is named by commit ${commit} but was not shipped`);
        packs.set(key, e);
      }
      for (const [, l] of logs) pending.push(...l.entries);
      pending.push(...packs.values(), ...files.values(), identity, registry);
      if (checkpoint) pending.push(checkpoint);
      pending.sort((a, b) => Buffer.compare(Buffer.from(a.key, 'utf8'), Buffer.from(b.key, 'utf8')));
      const bytes = encodeManifest({ archiveGeneration: gen, repository: index, commitGeneration: commit, capturedAtUs: capture.capturedAtUs, commitPoint: capture.record, entries: pending });
      this.o.crashPoint?.('archive:before-manifest');
      await this.o.beforeManifest?.();
      if (this.fenced) throw new FencedError('fenced');
      const key = manifestKey(index, gen, commit);
      const options = { sha256: sha256Hex(bytes), size: bytes.length };
      if (this.o.conditional) {
        const outcome = await this.o.store.putIfAbsent(key, bytes, options);
        // Already there: written before a restart whose listing did not show it yet (listings may
        // lag). That manifest is whole and names only stored objects; it stands.
        if (outcome === 'exists') this.o.log.info({ archive: this.o.url, manifest: key }, 'archive: the manifest of this commit point was already shipped');
      } else if (!(await this.o.store.head(key))) {
        await this.o.store.put(key, bytes, options);
      }
      // Shipped: remember what this manifest names.
      r.shipped = commit;
      r.logs = logs;
      r.files = new Map([...files.entries()]);
      r.identity = identity;
      r.registry = registry;
      r.checkpoint = checkpoint;
      for (const k of [...r.packs.keys()]) if (!packs.has(k)) r.packs.delete(k);
      this.lastShippedAt = new Date();
      if (BigInt(this.o.source.committed(index)) <= commit) { r.behindSince = null; r.lagWarned = false; r.lagBytes = 0; }
      else r.behindSince = Date.now();
    } finally {
      await capture.close();
    }
  }

  private async shipFile(key: string, f: ShipFile): Promise<ManifestEntry> {
    const { sha256, bytes } = await digest(f.handle, 0, f.size);
    await this.put(key, f.handle, 0, f.size, sha256, bytes);
    return { kind: 'file', key, path: f.path, offset: 0n, size: BigInt(f.size), sha256 };
  }

  private async put(key: string, handle: FileHandle, start: number, size: number, sha256: string, bytes: Buffer | null): Promise<void> {
    const body: Body = bytes ?? (() => handle.createReadStream({ start, end: start + size - 1, autoClose: false, highWaterMark: 1024 * 1024 }));
    await this.o.store.put(key, size === 0 ? Buffer.alloc(0) : body, { sha256, size });
  }
}

/** The log a log file belongs to: `workflow.3.log` → `workflow`. */
function logNameOf(file: string): string {
  return /^([a-z-]+)(?:\.\d+)?\.log$/.exec(file)?.[1] ?? file;
}

/** Index segment and lines paths a commit point names (below the authority directory). */
function namedFiles(state: ShipCapture['state']): string[] {
  const out: string[] = [];
  for (const [name, segs] of Object.entries(state.segments)) for (const seg of segs) out.push(`index/${name}.${seg}.idx`);
  if (state.lines_gen) out.push(`lines.${state.lines_gen}.bin`);
  return out;
}

/** sha256 of bytes [start, start+size) of a file; the bytes too when small (read once). */
async function digest(handle: FileHandle, start: number, size: number): Promise<{ sha256: string; bytes: Buffer | null }> {
  if (size <= WHOLE) {
    const bytes = Buffer.alloc(size);
    let at = 0;
    while (at < size) {
      const { bytesRead } = await handle.read(bytes, at, size - at, start + at);
      if (bytesRead === 0) throw new Error(`short read at ${start + at}`);
      at += bytesRead;
    }
    return { sha256: sha256Hex(bytes), bytes };
  }
  const hash = createHash('sha256');
  const chunk = Buffer.alloc(1024 * 1024);
  let at = 0;
  while (at < size) {
    const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, size - at), start + at);
    if (bytesRead === 0) throw new Error(`short read at ${start + at}`);
    hash.update(chunk.subarray(0, bytesRead));
    at += bytesRead;
  }
  return { sha256: hash.digest('hex'), bytes: null };
}
