// Restore from the archive (storage-layout.md §20): find the manifest of a commit point and
// rebuild an authority directory from the objects it names. A restore trusts only manifests:
// listings serve to find them, and every object is checked against its entry's size and sha256
// while it streams to disk (memory stays bounded by the stream's chunks, whatever the object's
// size). Bytes that failed their check are never used: a file is renamed into place only after
// its check passed, log bytes land past the authority's committed length (a tail that recovery
// cuts unless a commit point names it), and commit.bin — the one thing that makes them part of
// the authority — is written last.
//
// The same function keeps a follower current (`incremental`): what the directory already holds
// (a pack or index segment of the named size, log bytes up to the local committed length) is
// not fetched again.
import { promises as fsp, constants as fsc } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FileHandle } from 'node:fs/promises';
import { Conflict, Corrupt, NotFound } from '../domain/errors.js';
import {
  REGISTRY_RECORD_PATH,
  decodeManifest,
  manifestPrefix,
  parseManifestKey,
  parseTimeMarkerKey,
  timeIndexOriginKey,
  timeMarkerPrefix,
  timeMarkerStart,
  type Manifest,
  type ManifestEntry,
} from '../domain/archive-manifest.js';
import { LIFECYCLE_PURGED, RESERVED_NAME, type RepositoryRecord } from '../domain/repository.js';
import { COMMIT_FILE_SIZE, SLOT_SIZE, decodeCommitFile, decodeCommitSlot, type CommitState } from '../store/commit-point.js';
import { crashPoint } from '../store/crash-point.js';
import { fsyncDir, mkdirDurable, tempPathFor, writeFileDurable, writeFileDurableWith } from '../store/durable.js';
import { AuthorityLayout, INDEX_NAMES, LOG_NAMES, Layout } from '../store/layout.js';
import { decodeRegistryRecord, encodeRegistry } from '../store/registry-file.js';
import { ObjectStoreError, sha256Hex, verified, type ObjectStore } from './object-store.js';
import { writeArchiveFile, type ArchiveFile } from './archive-file.js';
import { canonicalArchiveUrl } from './archive-url.js';
import { readArchiveId } from './generations.js';
import { resolveChain } from './manifest-chain.js';
import { findAccessManifest, writeAccessLog } from './access-archive.js';

export interface ManifestTarget {
  /** The newest manifest captured at or before this time (µs since the epoch). */
  atUs?: bigint;
  /** The newest manifest whose commit generation is at most this. */
  seq?: bigint;
}

export interface FoundManifest {
  key: string;
  manifest: Manifest;
  /** Newer manifests an `atUs` search passed over because they could not be read (damaged or missing), newest first. */
  skipped: SkippedManifest[];
}

export interface SkippedManifest {
  key: string;
  problem: string;
}

/** Every manifest key of one repository, in key order (oldest first). */
export async function listManifestKeys(store: ObjectStore, index: number): Promise<string[]> {
  const keys: string[] = [];
  const prefix = manifestPrefix(index);
  let after: string | undefined;
  for (;;) {
    const page = await store.list(prefix, after === undefined ? {} : { after });
    for (const o of page.objects) if (parseManifestKey(o.key)?.repository === index) keys.push(o.key);
    if (page.next === undefined) break;
    after = page.next;
  }
  // Listings are in key order already; sorting again costs little and keeps a store that is
  // lax about it from choosing the wrong manifest.
  return keys.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

/**
 * Fetch one manifest and, for an incremental one, the chain of its bases down to a full one
 * (storage-layout.md §20.2.1): the manifest with the whole entry list it stands for. A damaged
 * link, a missing base or a chain that does not add up is refused naming the key (Corrupt).
 */
export async function readManifest(store: ObjectStore, key: string, read: (store: ObjectStore, key: string) => Promise<Manifest> = readOneManifest): Promise<Manifest> {
  const { manifest, entries } = await resolveChain(store, key, read);
  const { delta: _delta, ...whole } = manifest;
  return { ...whole, entries };
}

/** Fetch and decode one manifest as stored (an incremental one unresolved); a damaged one is refused naming its key (Corrupt). */
export async function readOneManifest(store: ObjectStore, key: string): Promise<Manifest> {
  const parsed = parseManifestKey(key);
  if (!parsed) throw new Corrupt(`archive manifest ${key}: not a manifest key`);
  let bytes: Buffer;
  try {
    const got = await store.get(key);
    bytes = await collect(got.body, 64 * 1024 * 1024, key);
  } catch (err) {
    if (err instanceof ObjectStoreError && err.kind === 'not-found') throw new NotFound(`archive manifest ${key} is listed but missing`);
    // An encrypted manifest whose ciphertext does not authenticate is a damaged manifest.
    if (err instanceof ObjectStoreError && err.kind === 'integrity') throw new Corrupt(`archive manifest ${key} is damaged: ${err.message}`);
    throw err;
  }
  const m = decodeManifest(bytes, key);
  if (m.repository !== parsed.repository || m.archiveGeneration !== parsed.archiveGeneration || m.commitGeneration !== parsed.commitGeneration) {
    throw new Corrupt(`archive manifest ${key}: its contents name repository ${m.repository}, generation ${m.archiveGeneration}, commit ${m.commitGeneration}, not what its key says`);
  }
  return m;
}

/**
 * The manifest a restore of repository `index` uses: the greatest key at or before the target
 * (`seq` compares the commit generation; `atUs` the captured time: found through the time index,
 * storage-layout.md §20.1.1, in a few requests whatever the number of manifests; where the
 * archive has no index, or for its manifests older than the index, read from the manifests
 * newest first). Without `atUs`, a damaged manifest on the way is an error naming its key — an
 * older one is never taken silently in its place, since the damaged one may be the commit asked
 * for; the operator can ask for an older commit with `seq` explicitly. With `atUs`, a newer
 * manifest that cannot be read (so its capture time is unknown) is passed over and reported in
 * `skipped`, and the search goes on to older ones: a point-in-time restore still lands on a
 * commit point at or before the time asked. The manifest finally chosen must resolve (its chain
 * included) or it is an error. Null when the archive holds no manifest of the repository at or
 * before the target.
 */
export async function findManifest(store: ObjectStore, index: number, target: ManifestTarget = {}): Promise<FoundManifest | null> {
  if (target.atUs !== undefined) {
    const indexed = await findManifestIndexed(store, index, target.atUs, target.seq);
    if (indexed.found) return indexed.found;
    return scanManifests(store, index, target, indexed.skipped, indexed.before);
  }
  return scanManifests(store, index, target, [], undefined);
}

/** The keys of a repository's manifests, newest first, read one by one (an archive without a time index, or its part older than the index). */
async function scanManifests(store: ObjectStore, index: number, target: ManifestTarget, skipped: SkippedManifest[], before: string | undefined): Promise<FoundManifest | null> {
  if (before !== undefined) {
    // Nothing older than the index's origin (the usual case): one short listing says so.
    const first = await store.list(manifestPrefix(index), { limit: 1 });
    if (!first.objects.length || !(first.objects[0]!.key < before)) return null;
  }
  let keys = await listManifestKeys(store, index);
  if (before !== undefined) keys = keys.filter((k) => k < before);
  if (target.seq !== undefined) keys = keys.filter((k) => parseManifestKey(k)!.commitGeneration <= target.seq!);
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i]!;
    // The time check reads the one manifest; only the chosen one's chain is read.
    if (target.atUs !== undefined) {
      let one: Manifest;
      try {
        one = await readOneManifest(store, key);
      } catch (err) {
        if (!(err instanceof Corrupt) && !(err instanceof NotFound)) throw err;
        skipped.push({ key, problem: err.message });
        continue;
      }
      if (one.capturedAtUs > target.atUs) continue;
      return { key, manifest: await readTop(store, key, one), skipped };
    }
    return { key, manifest: await readManifest(store, key), skipped };
  }
  return null;
}

/** The whole manifest `key`, its top already read. */
async function readTop(store: ObjectStore, key: string, top: Manifest): Promise<Manifest> {
  const { manifest, entries } = await resolveChain(store, key, (s, k) => (k === key ? Promise.resolve(top) : readOneManifest(s, k)));
  const { delta: _delta, ...whole } = manifest;
  return { ...whole, entries };
}

/** The time index's origin (storage-layout.md §20.1.1), or null when the repository has none (or it does not read). */
export async function readTimeIndexOrigin(store: ObjectStore, index: number): Promise<string | null> {
  let bytes: Buffer;
  try {
    bytes = await collect((await store.get(timeIndexOriginKey(index))).body, 64 * 1024, timeIndexOriginKey(index));
  } catch (err) {
    if (err instanceof ObjectStoreError && err.kind === 'not-found') return null;
    if (err instanceof Corrupt || (err instanceof ObjectStoreError && err.kind === 'integrity')) return null;
    throw err;
  }
  try {
    const from = (JSON.parse(bytes.toString('utf8')) as { from?: unknown }).from;
    if (typeof from === 'string' && parseManifestKey(from)?.repository === index) return from;
  } catch { /* no usable origin: read the manifests */ }
  return null;
}

/**
 * `--at` through the time index: one read of the origin, one listing of the markers from the
 * time asked (newest capture at or before it first), and the manifest chosen. A marker whose
 * manifest cannot be read is passed over (reported in `skipped`), as is one older than the
 * origin: `before` then says where the scan of the older, unindexed manifests starts. No origin:
 * `before` undefined, nothing found (the caller scans everything).
 */
async function findManifestIndexed(store: ObjectStore, index: number, atUs: bigint, seq: bigint | undefined): Promise<{ found: FoundManifest | null; skipped: SkippedManifest[]; before: string | undefined }> {
  const skipped: SkippedManifest[] = [];
  const origin = await readTimeIndexOrigin(store, index);
  if (origin === null) return { found: null, skipped, before: undefined };
  const prefix = timeMarkerPrefix(index);
  let after: string | undefined = timeMarkerStart(index, atUs);
  const seen = new Set<string>();
  while (after !== undefined) {
    const page = await store.list(prefix, { after, limit: 16 });
    for (const o of page.objects) {
      const marker = parseTimeMarkerKey(o.key);
      if (!marker || marker.repository !== index || marker.capturedAtUs > atUs || seen.has(marker.manifest)) continue;
      seen.add(marker.manifest);
      // Older than the origin: an unindexed manifest may lie between; the scan decides.
      if (marker.manifest < origin) return { found: null, skipped, before: origin };
      if (seq !== undefined && parseManifestKey(marker.manifest)!.commitGeneration > seq) continue;
      let one: Manifest;
      try {
        one = await readOneManifest(store, marker.manifest);
      } catch (err) {
        if (!(err instanceof Corrupt) && !(err instanceof NotFound)) throw err;
        skipped.push({ key: marker.manifest, problem: err instanceof NotFound ? `indexed at ${new Date(Number(marker.capturedAtUs / 1000n)).toISOString()} but missing` : err.message });
        continue;
      }
      if (one.capturedAtUs > atUs) continue; // the marker does not say the manifest's time: not trusted
      return { found: { key: marker.manifest, manifest: await readTop(store, marker.manifest, one), skipped }, skipped, before: origin };
    }
    after = page.next;
  }
  return { found: null, skipped, before: origin };
}

/**
 * The repository indexes that have anything in the archive, ascending. One listing call per
 * repository: after a key of repository N it lists after `repositories/N/~`, which sorts after
 * every key of N (their next segment starts with g, m, p or t) and before repository N+1's.
 */
/**
 * Each archived repository's registry record as its newest manifest names it (`cairn restore
 * --repo NAME`): one listing, then a manifest and a record read per repository. A repository
 * whose newest manifest names no record is left out.
 */
export async function archivedRepositoryRecords(store: ObjectStore): Promise<RepositoryRecord[]> {
  const out: RepositoryRecord[] = [];
  for (const index of await listArchivedRepositories(store)) {
    const found = await findManifest(store, index);
    const entry = found?.manifest.entries.find((e) => e.kind === 'registry');
    if (found && entry) out.push(await fetchRegistry(store, entry, index, found.key));
  }
  return out;
}

export async function listArchivedRepositories(store: ObjectStore): Promise<number[]> {
  const found: number[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await store.list('repositories/', { limit: 1, ...(after !== undefined ? { after } : {}) });
    const first = page.objects[0];
    if (!first) break;
    const m = /^repositories\/(0|[1-9][0-9]{0,9})\//.exec(first.key);
    if (!m) {
      after = first.key;
      continue;
    }
    const index = Number(m[1]);
    if (index <= 0xffff_ffff && !found.includes(index)) found.push(index);
    after = `repositories/${m[1]}/~`;
  }
  return found.sort((a, b) => a - b);
}

export interface ApplyProgress {
  objects: number;
  bytes: number;
  totalObjects: number;
  totalBytes: number;
}

export interface ApplyOptions {
  /** The manifest's key, for messages. */
  manifestKey: string;
  /** Skip what the directory already holds (a follower); a fresh restore fetches everything. */
  incremental?: boolean;
  onProgress?: (p: ApplyProgress) => void;
  /** Objects fetched at once (default 4). */
  concurrency?: number;
}

export interface ApplyResult {
  commit: CommitState;
  /** The repository's registry record the manifest names (kind 4), or null when it names none. */
  registry: RepositoryRecord | null;
  objects: number;
  bytes: number;
  /** True when the directory already was at this commit point (nothing written). */
  unchanged: boolean;
}

function commitStateOf(m: Manifest, key: string): CommitState {
  const slot = Buffer.alloc(SLOT_SIZE);
  m.commitPoint.copy(slot, 0);
  let state: CommitState | null;
  try {
    state = decodeCommitSlot(slot, `archive manifest ${key}: commit point`);
  } catch (err) {
    throw new Corrupt((err as Error).message);
  }
  if (!state) throw new Corrupt(`archive manifest ${key}: the commit point is empty`);
  return state;
}

async function readLocalCommit(layout: AuthorityLayout): Promise<CommitState | null> {
  try {
    const data = await fsp.readFile(layout.commitFile);
    if (data.length === 0) return null;
    return decodeCommitFile(data);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

async function sizeOf(file: string): Promise<number | null> {
  try {
    return (await fsp.stat(file)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function logFileName(name: string, gen: number): string {
  return gen ? `${name}.${gen}.log` : `${name}.log`;
}

async function collect(body: NodeJS.ReadableStream, max: number, what: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  let n = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    n += chunk.length;
    if (n > max) throw new Corrupt(`${what}: larger than ${max} bytes`);
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}

/** A writable that puts its bytes at `start` onwards of an open file, skipping those before `from`. */
function positionalWriter(handle: FileHandle, start: number, from: number): Writable {
  let pos = start;
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      const at = pos;
      pos += chunk.length;
      const skip = Math.max(0, from - at);
      if (skip >= chunk.length) { done(); return; }
      const part = chunk.subarray(skip);
      handle.write(part, 0, part.length, at + skip).then(() => done(), done);
    },
  });
}

interface Task {
  entry: ManifestEntry;
  /** Log ranges: bytes before this offset are already held and not written again. */
  from?: number;
}

/**
 * Bring `repoDir` to the commit point `manifest` ships (repository `manifest.repository`):
 * fetch every object it names (each checked against its size and sha256 before its bytes are
 * used), write packs, index segments and files, assemble each log from its base and ranges by
 * position, and write commit.bin last (8192 bytes: the record in slot G mod 2, the other slot
 * zeros; storage-layout.md §9), durably. The authority must not be open meanwhile. A failure
 * leaves the directory as its old commit point describes it (plus files recovery removes).
 */
export async function applyManifest(store: ObjectStore, manifest: Manifest, repoDir: string, options: ApplyOptions): Promise<ApplyResult> {
  const mkey = options.manifestKey;
  const layout = new AuthorityLayout(repoDir);
  const commit = commitStateOf(manifest, mkey);
  const local = options.incremental ? await readLocalCommit(layout) : null;
  const byPath = new Map<string, ManifestEntry[]>();
  for (const e of manifest.entries) {
    const list = byPath.get(e.path) ?? [];
    list.push(e);
    byPath.set(e.path, list);
  }
  const registryEntry = manifest.entries.find((e) => e.kind === 'registry');
  if (local && local.generation > commit.generation) {
    throw new Conflict(`${repoDir} is at commit ${local.generation}, past the archive's commit ${commit.generation} (manifest ${mkey})`);
  }
  if (local && local.generation === commit.generation) {
    return { commit, registry: registryEntry ? await fetchRegistry(store, registryEntry, manifest.repository, mkey) : null, objects: 0, bytes: 0, unchanged: true };
  }

  // Completeness first, from the manifest alone: nothing is fetched for one that cannot work.
  const incomplete = (what: string): Corrupt => new Corrupt(`archive manifest ${mkey} is incomplete: ${what}`);
  for (const e of manifest.entries) {
    if (e.kind !== 'log-range' && (byPath.get(e.path)?.length ?? 0) > 1) throw incomplete(`two objects for ${e.path}`);
    if (e.size > BigInt(Number.MAX_SAFE_INTEGER) || e.offset > BigInt(Number.MAX_SAFE_INTEGER)) throw incomplete(`${e.key} is too large`);
  }
  if (!byPath.has('authority.bin') && !(local && (await sizeOf(layout.identityFile)) !== null)) throw incomplete('no authority.bin');
  for (const name of INDEX_NAMES) {
    for (const seg of commit.segments[name]) {
      const p = `index/${name}.${seg}.idx`;
      if (!byPath.has(p) && !(local && (await sizeOf(path.join(repoDir, p))) !== null)) throw incomplete(`no object for ${p}, which the commit point names`);
    }
  }
  const logs = new Map<string, { committed: number; held: number }>();
  for (const name of LOG_NAMES) {
    const committed = commit.logs[name];
    const file = logFileName(name, commit.log_files[name]);
    const held = local && local.log_files[name] === commit.log_files[name] ? Math.min(local.logs[name], committed) : 0;
    if (local && local.log_files[name] === commit.log_files[name] && local.logs[name] > committed) {
      throw new Conflict(`${repoDir}: ${logFileName(name, commit.log_files[name])} is committed past the archive's commit ${commit.generation} (manifest ${mkey})`);
    }
    if (committed === 0) continue;
    const ranges = (byPath.get(file) ?? []).filter((e) => e.kind === 'log-range').sort((a, b) => (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0));
    let covered = 0;
    for (const r of ranges) {
      if (Number(r.offset) > covered) break;
      covered = Math.max(covered, Number(r.offset + r.size));
    }
    if (covered < committed) throw incomplete(`${file} is covered up to byte ${covered}, its committed length is ${committed}`);
    logs.set(file, { committed, held });
  }

  // What to fetch.
  const tasks: Task[] = [];
  for (const e of manifest.entries) {
    if (e.kind === 'registry') continue;
    if (e.kind === 'log-range') {
      const log = logs.get(e.path);
      if (!log) continue; // a log the commit point does not name (an older file generation)
      const end = Number(e.offset + e.size);
      if (Number(e.offset) >= log.committed) continue;
      if (end <= log.held) continue;
      tasks.push({ entry: e, from: log.held });
      continue;
    }
    const target = path.join(repoDir, e.path);
    // Packs and index segments are immutable (content-addressed or numbered once): one of the
    // named size is the same file. Other files (authority.bin, workflow.ckpt) are fetched anew.
    const immutable = e.kind === 'pack' || /^index\/[a-z]+\.\d+\.idx$/.test(e.path);
    if (options.incremental && immutable && (await sizeOf(target)) === Number(e.size)) continue;
    tasks.push({ entry: e });
  }
  const progress: ApplyProgress = { objects: 0, bytes: 0, totalObjects: tasks.length, totalBytes: tasks.reduce((n, t) => n + Number(t.entry.size), 0) };
  options.onProgress?.({ ...progress });

  // Log files: truncated to what is held, then filled in place by position.
  const handles = new Map<string, FileHandle>();
  const dirs = new Set<string>();
  try {
    for (const [file, log] of logs) {
      if (!tasks.some((t) => t.entry.kind === 'log-range' && t.entry.path === file)) continue;
      const full = path.join(repoDir, file);
      const existed = (await sizeOf(full)) !== null;
      const handle = await fsp.open(full, fsc.O_RDWR | fsc.O_CREAT, 0o644);
      handles.set(file, handle);
      await handle.truncate(log.held);
      if (!existed) dirs.add(path.dirname(full));
    }
    const run = async (task: Task): Promise<void> => {
      const e = task.entry;
      const what = `object ${e.key} (named by manifest ${mkey})`;
      let got;
      try {
        got = await store.get(e.key);
      } catch (err) {
        if (err instanceof ObjectStoreError && err.kind === 'not-found') throw new NotFound(`${what} is missing from the archive`);
        if (err instanceof ObjectStoreError) throw new ObjectStoreError(err.kind, `${what}: ${err.message}`, err.status);
        throw err;
      }
      const check = verified(what, { sha256: e.sha256, size: Number(e.size) });
      try {
        if (e.kind === 'log-range') {
          await pipeline(got.body, check, positionalWriter(handles.get(e.path)!, Number(e.offset), task.from ?? 0));
        } else {
          const target = path.join(repoDir, e.path);
          await mkdirDurable(path.dirname(target));
          await writeFileDurableWith(target, (handle) => pipeline(got.body, check, positionalWriter(handle, 0, 0)));
        }
      } catch (err) {
        got.body.destroy();
        if (err instanceof ObjectStoreError && err.kind === 'integrity') throw new Corrupt(`${what} is damaged: ${err.message.startsWith(what) ? err.message.slice(what.length + 2) : err.message}`);
        if (err instanceof ObjectStoreError) throw new ObjectStoreError(err.kind, `${what}: ${err.message}`, err.status);
        throw err;
      }
      progress.objects++;
      progress.bytes += Number(e.size);
      options.onProgress?.({ ...progress });
    };
    await pool(tasks, options.concurrency ?? 4, run);
    for (const handle of handles.values()) await handle.sync();
    for (const dir of dirs) await fsyncDir(dir);
  } finally {
    for (const handle of handles.values()) await handle.close().catch(() => undefined);
  }
  const registry = registryEntry ? await fetchRegistry(store, registryEntry, manifest.repository, mkey) : null;

  crashPoint('restore:before-commit');
  const file = Buffer.alloc(COMMIT_FILE_SIZE);
  manifest.commitPoint.copy(file, (commit.generation % 2) * SLOT_SIZE);
  await writeFileDurable(layout.commitFile, file);
  return { commit, registry, objects: progress.objects, bytes: progress.bytes, unchanged: false };
}

async function fetchRegistry(store: ObjectStore, e: ManifestEntry, index: number, mkey: string): Promise<RepositoryRecord> {
  const what = `object ${e.key} (named by manifest ${mkey})`;
  if (e.path !== REGISTRY_RECORD_PATH || e.size > 40n + 4096n * 4n) throw new Corrupt(`${what}: not a registry record`);
  let bytes: Buffer;
  try {
    const got = await store.get(e.key);
    bytes = await collect(got.body, 40 + 4096 * 4, what);
  } catch (err) {
    if (err instanceof ObjectStoreError && err.kind === 'not-found') throw new NotFound(`${what} is missing from the archive`);
    if (err instanceof ObjectStoreError) throw new ObjectStoreError(err.kind, `${what}: ${err.message}`, err.status);
    throw err;
  }
  if (bytes.length !== Number(e.size)) throw new Corrupt(`${what} is damaged: ${bytes.length} bytes, ${e.size} named`);
  const digest = sha256Hex(bytes);
  if (digest !== e.sha256) throw new Corrupt(`${what} is damaged: sha256 ${digest}, ${e.sha256} named`);
  return decodeRegistryRecord(bytes, index, what);
}

/** Run `work` over `items`, at most `limit` at once; the first failure stops new starts and is thrown. */
async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: unknown = null;
  const worker = async (): Promise<void> => {
    while (failed === null && next < items.length) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (err) {
        failed ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed !== null) throw failed;
}

export interface RestoreRequest {
  /** The archive's URL, recorded in archive.json. */
  url: string;
  /** Repositories to restore, or 'all' (every repository with a manifest). */
  repositories: number[] | 'all';
  target: ManifestTarget;
  /** Must not exist, or be an empty directory. */
  dataDir: string;
  onProgress?: (p: ApplyProgress & { repository: number; manifest: string }) => void;
  /** Proves the built directory (opens it, checks it) before it is moved into place. */
  verify?: (dir: string) => Promise<void>;
  /** Objects fetched at once (default 8). */
  concurrency?: number;
  /** Told of each manifest an `--at` search passed over (damaged or missing). */
  onWarning?: (message: string) => void;
}

export interface RestoredRepository {
  repository: number;
  manifest: string;
  commit: number;
  captured_at: string;
  objects: number;
  bytes: number;
  /** Newer manifests passed over because they could not be read (`--at` only); absent when none. */
  skipped_manifests?: string[];
}

/**
 * Restore repositories from the archive into a new data directory. Everything is built in a
 * temp directory beside `dataDir` (`.<name>.tmp-<hex>`) and renamed into place only after every
 * authority's commit point is written and `verify` passed, so a failure or a crash never leaves
 * a half-restored `dataDir` (the temp directory is removed on failure; one left by a crash is
 * recognisably a temp file). registry.bin holds a record for every index from 0 to the highest
 * one restored: restored repositories get their archived record, the others purged, tombstoned
 * placeholders (indexes are positions and must stay dense). archive.json names the archive
 * with generation "0": the directory has claimed nothing yet.
 */
export async function restoreArchive(store: ObjectStore, request: RestoreRequest): Promise<RestoredRepository[]> {
  const dataDir = path.resolve(request.dataDir);
  try {
    const entries = await fsp.readdir(dataDir);
    if (entries.length > 0) throw new Conflict(`${dataDir} is not empty: restore writes a new data directory`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') throw new Conflict(`${dataDir} is not a directory`);
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  let indexes = request.repositories === 'all' ? await listArchivedRepositories(store) : [...new Set(request.repositories)].sort((a, b) => a - b);
  const found: { index: number; found: FoundManifest }[] = [];
  for (const index of indexes) {
    const f = await findManifest(store, index, request.target);
    if (!f) {
      if (request.repositories === 'all') continue; // a repository with objects but no manifest at or before the target
      throw new NotFound(`the archive ${store.description} has no manifest of repository ${index}${describeTarget(request.target)}`);
    }
    for (const s of f.skipped) request.onWarning?.(`repository ${index}: manifest ${s.key} skipped (its capture time cannot be read: ${s.problem}); restoring ${f.key}, the newest readable manifest at or before the time`);
    found.push({ index, found: f });
  }
  if (found.length === 0) throw new NotFound(`the archive ${store.description} has no manifest${describeTarget(request.target)}`);
  indexes = found.map((f) => f.index);

  const temp = tempPathFor(dataDir);
  await mkdirDurable(path.dirname(dataDir));
  await fsp.mkdir(temp);
  try {
    const layout = new Layout(temp);
    const done: RestoredRepository[] = [];
    const records = new Map<number, RepositoryRecord>();
    for (const { index, found: f } of found) {
      const dir = layout.repositoryDir(index);
      await mkdirDurable(dir);
      const result = await applyManifest(store, f.manifest, dir, {
        manifestKey: f.key,
        concurrency: request.concurrency ?? 8,
        onProgress: (p) => request.onProgress?.({ ...p, repository: index, manifest: f.key }),
      });
      if (!result.registry) throw new Corrupt(`archive manifest ${f.key} is incomplete: it names no registry record`);
      records.set(index, result.registry);
      done.push({
        repository: index,
        manifest: f.key,
        commit: result.commit.generation,
        captured_at: new Date(Number(f.manifest.capturedAtUs / 1000n)).toISOString(),
        objects: result.objects,
        bytes: result.bytes,
        ...(f.skipped.length ? { skipped_manifests: f.skipped.map((x) => x.key) } : {}),
      });
    }
    const highest = Math.max(...indexes);
    const all: RepositoryRecord[] = [];
    for (let i = 0; i <= highest; i++) {
      all.push(records.get(i) ?? {
        repository_index: i, repository_name: RESERVED_NAME, lifecycle_kind: LIFECYCLE_PURGED, namespace: '',
        policy_flags: 0, created_at_s: 0, updated_at_s: 0, tombstoned: true,
      });
    }
    await writeFileDurable(layout.registryFile, encodeRegistry(all));
    // Accounts, tokens and grants: the newest access.log manifest (at or before the time asked).
    const access = await findAccessManifest(store, request.target.atUs);
    if (access) await writeAccessLog(store, access.manifest, access.key, layout.accessLogFile);
    // The archive's id (when it has one) makes a later --archive of any spelling the same archive.
    const archiveId = await readArchiveId(store);
    const file: ArchiveFile = { url: canonicalArchiveUrl(request.url), generation: '0' };
    if (archiveId) file.archive_id = archiveId;
    await writeArchiveFile(layout.archiveFile, file);
    await request.verify?.(temp);
    // rename(2) replaces an empty directory, so an empty DATA the operator made is fine.
    await fsp.rename(temp, dataDir);
    await fsyncDir(path.dirname(dataDir));
    return done;
  } catch (err) {
    await fsp.rm(temp, { recursive: true, force: true }).catch(() => undefined);
    throw err;
  }
}

function describeTarget(t: ManifestTarget): string {
  const parts: string[] = [];
  if (t.seq !== undefined) parts.push(`at or before commit ${t.seq}`);
  if (t.atUs !== undefined) parts.push(`captured at or before ${new Date(Number(t.atUs / 1000n)).toISOString()}`);
  return parts.length ? ` ${parts.join(' and ')}` : '';
}
