// Pruning an archive (storage-layout.md §20, docs/operations.md "Archive retention"): mark and
// sweep, as restic's prune. The retention policy (lib/domain/archive-retention.ts) picks the
// manifests to keep; every key a kept manifest names is marked; then the dropped manifests are
// deleted FIRST and the unmarked objects after them, so a prune that stops midway leaves only
// garbage, never a manifest naming a deleted object.
//
// Safety rules:
// - A kept manifest that does not decode stops the prune before anything is deleted, naming it.
// - An unmarked object is deleted only when the listing says it is older than the grace
//   period: a writer uploads packs and log ranges before the manifest naming them, so a young
//   unmarked object may belong to a manifest not written yet. An object without a
//   modification time is never deleted.
// - Only `repositories/<index>/` is swept; `generations/`, `lease/` and anything else in the
//   archive are never touched, nor keys under `manifests/` that are not manifest keys.
// - Before the sweep the manifests are listed again and any manifest written since the first
//   listing is marked too.
//
// Idempotent: running it again with the same policy and clock deletes nothing more.
import { buffer } from 'node:stream/consumers';
import { Corrupt } from '../domain/errors.js';
import { LIFECYCLE_PURGED } from '../domain/repository.js';
import { resolveChain } from './manifest-chain.js';
import { decodeManifest, manifestKey, manifestPrefix, MANIFEST_MAGIC, MANIFEST_VERSION, MANIFEST_VERSION_DELTA, parseManifestKey, parseTimeMarkerKey, purgedMarkerKey, timeIndexOriginKey, type Manifest } from '../domain/archive-manifest.js';
import { chooseManifests, formatDuration, formatRetention, type ManifestTime, type RetentionPolicy } from '../domain/archive-retention.js';
import { ObjectStoreError, verified, type ObjectInfo, type ObjectStore } from './object-store.js';

export interface PruneOptions {
  policy: RetentionPolicy;
  /** Unmarked objects younger than this (by their listing's modification time) stay. */
  graceMs: number;
  /** Report what would be deleted; delete nothing. */
  dryRun?: boolean;
  /** The time now in ms since the epoch (injected by tests). */
  now?: () => number;
  /** Store requests at a time (default 8). */
  concurrency?: number;
  /** One line per stage, for a terminal's progress or a server's log. */
  log?: (message: string) => void;
}

export interface PruneReport {
  dry_run: boolean;
  policy: string;
  grace: string;
  /** ISO time the policy and the grace were measured from. */
  now: string;
  repositories: number;
  /** Repositories whose newest manifest records a purged authority (not kept for being newest). */
  purged: number[];
  manifests: { total: number; kept: number; deleted: number; deleted_bytes: number };
  objects: {
    total: number;
    referenced: number;
    unreferenced: number;
    /** Unreferenced but younger than the grace period (or without a modification time): kept. */
    within_grace: number;
    deleted: number;
    deleted_bytes: number;
  };
  /** Keys that kept manifests name but the listing did not show (a stale listing, or damage). */
  missing: { count: number; first: string[] };
  /** Manifests and objects deleted (or, in a dry run, that would be). */
  deleted_bytes: number;
}

const REPOSITORIES = 'repositories/';
const HEADER_BYTES = 40; // magic, version, reserved, generations, repository, captured_at_us
const MISSING_SHOWN = 20;

async function listAll(store: ObjectStore, prefix: string): Promise<ObjectInfo[]> {
  const out: ObjectInfo[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await store.list(prefix, after === undefined ? {} : { after });
    out.push(...page.objects);
    if (page.next === undefined || page.objects.length === 0) return out;
    after = page.next;
  }
}

/** Run `fn` over `items`, `limit` at a time; the first failure stops new work and is thrown. */
async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (!failure && next < items.length) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure) throw failure.err;
}

/** The repository index of a key under `repositories/<index>/`, or null. */
function repositoryOf(key: string): number | null {
  const m = /^repositories\/(0|[1-9][0-9]{0,9})\//.exec(key);
  if (!m) return null;
  const n = Number(m[1]);
  return n <= 0xffff_ffff ? n : null;
}

/** The first bytes of a manifest, checked against its key: its capture time. */
async function readCapturedAt(store: ObjectStore, key: string): Promise<bigint> {
  const parsed = parseManifestKey(key)!;
  const { body } = await store.get(key);
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    length += chunk.length;
    if (length >= HEADER_BYTES) break; // leaving the loop destroys the stream: the rest is not needed
  }
  const head = Buffer.concat(chunks);
  const fail = (check: string): Corrupt => new Corrupt(`archive manifest ${key}: ${check}`);
  if (head.length < HEADER_BYTES) throw fail('truncated header');
  if (!head.subarray(0, 8).equals(MANIFEST_MAGIC)) throw fail('bad magic');
  if (head.readUInt8(8) !== MANIFEST_VERSION && head.readUInt8(8) !== MANIFEST_VERSION_DELTA) throw fail(`unknown version ${head.readUInt8(8)}`);
  if (head.readBigUInt64LE(12) !== parsed.archiveGeneration || head.readUInt32LE(20) !== parsed.repository || head.readBigUInt64LE(24) !== parsed.commitGeneration) {
    throw fail('its generations or repository are not those of its key');
  }
  return head.readBigUInt64LE(32);
}

/** The whole manifest (an incremental one with its chain resolved), checked against its key (Corrupt names the key). */
async function readManifest(store: ObjectStore, key: string): Promise<Manifest> {
  const { manifest, entries } = await resolveChain(store, key, readOneManifest);
  return { ...manifest, entries };
}

/** The bases an incremental manifest stands on, down to a full one (their keys, newest first). */
async function chainBases(store: ObjectStore, key: string): Promise<string[]> {
  const bases: string[] = [];
  let m = await readOneManifest(store, key);
  while (m.delta) {
    const base = manifestKey(m.repository, m.archiveGeneration, m.delta.baseCommit);
    bases.push(base);
    m = await readOneManifest(store, base);
  }
  return bases;
}

/** One manifest as stored, decoded and checked against its key (Corrupt names the key). */
async function readOneManifest(store: ObjectStore, key: string): Promise<Manifest> {
  const parsed = parseManifestKey(key)!;
  const { body } = await store.get(key);
  const manifest = decodeManifest(await buffer(body), key);
  if (manifest.archiveGeneration !== parsed.archiveGeneration || manifest.repository !== parsed.repository || manifest.commitGeneration !== parsed.commitGeneration) {
    throw new Corrupt(`archive manifest ${key}: its generations or repository are not those of its key`);
  }
  return manifest;
}

/**
 * Whether a manifest's registry record (its entry of path `registry.rec`) says the authority is
 * purged (lifecycle 3, or tombstoned). A manifest without one, or whose record cannot be read,
 * is taken as not purged: the safe side keeps the newest manifest.
 */
async function recordsPurge(store: ObjectStore, manifest: Manifest): Promise<boolean> {
  const entry = manifest.entries.find((e) => e.path === 'registry.rec');
  if (!entry || entry.size < 40n || entry.size > 64n * 1024n) return false;
  try {
    const { body } = await store.get(entry.key);
    const record = await buffer(body.pipe(verified(`registry record ${entry.key}`, { sha256: entry.sha256, size: Number(entry.size) })));
    return record.readUInt8(4) === LIFECYCLE_PURGED || record.readUInt8(24) === 1;
  } catch (err) {
    if (err instanceof ObjectStoreError && (err.kind === 'not-found' || err.kind === 'integrity')) return false;
    throw err;
  }
}

/**
 * Prune the archive in `store` by `options.policy`. Resolves with what was deleted (or, with
 * `dryRun`, what would be). Throws Corrupt, naming the manifest, when a manifest it must keep
 * or read does not decode — before deleting anything; a store failure midway leaves every
 * remaining manifest whole (manifests go first) and is thrown as it came.
 *
 * A server may call it periodically on its shipping store: one prune at a time, outside any
 * commit, with its own clock; the shipper's writes need no pause (the grace period and the
 * always-kept newest manifest cover them).
 */
export async function pruneArchive(store: ObjectStore, options: PruneOptions): Promise<PruneReport> {
  const nowMs = (options.now ?? Date.now)();
  const limit = options.concurrency ?? 8;
  const log = options.log ?? ((): void => undefined);
  const dryRun = options.dryRun === true;
  try {
    return await prune(store, options, nowMs, limit, log, dryRun);
  } catch (err) {
    if (err instanceof Corrupt && !err.message.includes('(the prune stopped')) throw new Corrupt(`${err.message} (the prune stopped and deleted nothing)`);
    throw err;
  }
}

async function prune(store: ObjectStore, options: PruneOptions, nowMs: number, limit: number, log: (message: string) => void, dryRun: boolean): Promise<PruneReport> {
  log(`listing ${store.description}`);
  const listed = await listAll(store, REPOSITORIES);
  const manifestInfos = new Map<string, ObjectInfo>();
  const objects: ObjectInfo[] = [];
  const repositories = new Set<number>();
  const purgedMarkers = new Set<number>();
  // The time index (§20.1.1): a manifest's marker goes with it; the origin is never swept.
  const timeMarkers: { info: ObjectInfo; manifest: string }[] = [];
  for (const info of listed) {
    const repository = repositoryOf(info.key);
    if (repository === null) continue; // not an authority's key: never pruned
    repositories.add(repository);
    const marker = parseTimeMarkerKey(info.key);
    if (parseManifestKey(info.key)) manifestInfos.set(info.key, info);
    else if (marker) timeMarkers.push({ info, manifest: marker.manifest });
    else if (info.key === timeIndexOriginKey(repository)) continue;
    else if (info.key === purgedMarkerKey(repository)) purgedMarkers.add(repository); // never swept
    else if (!info.key.startsWith(manifestPrefix(repository))) objects.push(info);
  }

  const listedManifests = new Set(manifestInfos.keys());
  log(`reading ${manifestInfos.size} manifest headers`);
  const times: ManifestTime[] = [];
  await eachLimited([...manifestInfos.keys()], limit, async (key) => {
    try {
      times.push({ key, capturedAtUs: await readCapturedAt(store, key) });
    } catch (err) {
      // Listed but gone: deleted since (an earlier prune, seen through an eventually
      // consistent listing). Nothing to keep or delete.
      if (err instanceof ObjectStoreError && err.kind === 'not-found') { manifestInfos.delete(key); return; }
      throw err;
    }
  });

  // The newest manifest of each repository: always read (it is kept unless it records a purge).
  const decoded = new Map<string, Manifest>();
  const newest = new Map<number, string>();
  for (const key of manifestInfos.keys()) {
    const repository = parseManifestKey(key)!.repository;
    const held = newest.get(repository);
    if (held === undefined || key > held) newest.set(repository, key);
  }
  const purged = new Set<number>();
  await eachLimited([...newest], limit, async ([repository, key]) => {
    const manifest = await readManifest(store, key);
    decoded.set(key, manifest);
    if (purgedMarkers.has(repository) || (await recordsPurge(store, manifest))) purged.add(repository);
  });

  const choice = chooseManifests(times, options.policy, nowMs, purged);
  // A kept incremental manifest keeps its bases (down to a full one): it means nothing without them.
  const keep = new Set(choice.keep);
  const needed = new Set<string>();
  await eachLimited(choice.keep, limit, async (key) => { for (const b of await chainBases(store, key)) needed.add(b); });
  for (const b of needed) if (!keep.has(b) && manifestInfos.has(b)) { keep.add(b); choice.keep.push(b); }
  choice.drop = choice.drop.filter((k) => !keep.has(k));
  log(`keeping ${choice.keep.length} manifests, dropping ${choice.drop.length}; reading the kept ones`);

  // Mark: every key a kept manifest names.
  const marked = new Set<string>();
  const mark = (manifest: Manifest): void => { for (const e of manifest.entries) marked.add(e.key); };
  await eachLimited(choice.keep, limit, async (key) => {
    const manifest = decoded.get(key) ?? (await readManifest(store, key));
    mark(manifest);
  });
  decoded.clear();

  const present = new Set(objects.map((o) => o.key));
  const missing = [...marked].filter((k) => !present.has(k)).sort();
  const graceEdge = nowMs - options.graceMs;
  const unreferenced = objects.filter((o) => !marked.has(o.key));
  const old = (o: ObjectInfo): boolean => o.lastModified !== undefined && o.lastModified.getTime() <= graceEdge;
  let sweep = unreferenced.filter(old);

  const report: PruneReport = {
    dry_run: dryRun,
    policy: formatRetention(options.policy),
    grace: formatDuration(options.graceMs),
    now: new Date(nowMs).toISOString(),
    repositories: repositories.size,
    purged: [...purged].sort((a, b) => a - b),
    manifests: {
      total: manifestInfos.size,
      kept: choice.keep.length,
      deleted: choice.drop.length,
      deleted_bytes: choice.drop.reduce((n, k) => n + manifestInfos.get(k)!.size, 0),
    },
    objects: {
      total: objects.length,
      referenced: objects.length - unreferenced.length,
      unreferenced: unreferenced.length,
      within_grace: unreferenced.length - sweep.length,
      deleted: sweep.length,
      deleted_bytes: sweep.reduce((n, o) => n + o.size, 0),
    },
    missing: { count: missing.length, first: missing.slice(0, MISSING_SHOWN) },
    deleted_bytes: 0,
  };
  report.deleted_bytes = report.manifests.deleted_bytes + report.objects.deleted_bytes;
  if (dryRun) return report;

  // Manifests first: from here on, whatever stops the prune leaves only unreferenced objects.
  log(`deleting ${choice.drop.length} manifests`);
  await eachLimited(choice.drop, limit, (key) => store.delete(key));

  // A manifest written since the first listing may name an old unmarked object (a pack the
  // writer found already stored): mark what it names before the sweep.
  const fresh: string[] = [];
  for (const repository of repositories) {
    for (const info of await listAll(store, manifestPrefix(repository))) {
      if (parseManifestKey(info.key) && !listedManifests.has(info.key)) fresh.push(info.key);
    }
  }
  await eachLimited(fresh, limit, async (key) => {
    try {
      mark(await readManifest(store, key));
    } catch (err) {
      if (err instanceof ObjectStoreError && err.kind === 'not-found') return; // written and deleted since
      if (err instanceof Corrupt) throw new Corrupt(`${err.message} (the prune stopped after deleting ${choice.drop.length} manifests and no other object)`);
      throw err;
    }
  });
  if (fresh.length > 0) {
    sweep = sweep.filter((o) => !marked.has(o.key));
    report.objects.deleted = sweep.length;
    report.objects.deleted_bytes = sweep.reduce((n, o) => n + o.size, 0);
    report.objects.referenced = objects.filter((o) => marked.has(o.key)).length;
    report.objects.unreferenced = objects.length - report.objects.referenced;
    report.objects.within_grace = report.objects.unreferenced - sweep.length;
    report.deleted_bytes = report.manifests.deleted_bytes + report.objects.deleted_bytes;
  }

  log(`deleting ${sweep.length} unreferenced objects`);
  await eachLimited(sweep, limit, (o) => store.delete(o.key));
  // Then the markers of the manifests deleted, and old ones whose manifest was never stored (a
  // writer stopped between the two puts); a young one may index a manifest on its way.
  const dropped = new Set(choice.drop);
  const staleMarkers = timeMarkers.filter((m) => dropped.has(m.manifest) || (!listedManifests.has(m.manifest) && !fresh.includes(m.manifest) && old(m.info)));
  await eachLimited(staleMarkers, limit, (m) => store.delete(m.info.key));
  return report;
}
