// Verification of an archive (`cairn archive verify`, `serve --archive-verify-every`;
// docs/operations.md "Verifying the archive"): each chosen repository's newest manifest is
// restored with the restore code into a temporary directory — every object it names streamed and
// checked against its size and sha256 — then opened as cairn serve opens it (recovery) and
// checked as cairn fsck checks it (every record of every log decoded, every index segment, pack
// and tree). Problems are collected per repository, never repaired; the temporary directory is
// removed whatever happens.
import { randomInt } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { Corrupt } from '../domain/errors.js';
import { parseManifestKey } from '../domain/archive-manifest.js';
import type { ObjectStore } from '../archive/object-store.js';
import { listArchivedRepositories, listManifestKeys, readOneManifest, restoreArchive } from '../archive/restore.js';
import { fsckAuthority } from '../store/fsck.js';
import { Layout } from '../store/layout.js';
import { checkRegistryEvents } from '../store/registry-events.js';

/** Open a restored data directory the way cairn serve does, then check it as cairn fsck does; throws Corrupt naming the first problems. */
export async function proveRestored(dir: string, restored: number[]): Promise<void> {
  const { CairnService } = await import('./service.js');
  const service = await CairnService.open({ dataDir: dir, log: pino({ level: 'silent' }) });
  try {
    for (const index of restored) {
      await service.ensureOpen(index);
      service.authority(index);
    }
  } finally {
    await service.shutdown();
  }
  const layout = new Layout(dir);
  const problems: string[] = [...checkRegistryEvents(layout.registryEventsFile).problems];
  for (const index of restored) {
    const result = await fsckAuthority(layout.repositoryDir(index), index);
    problems.push(...result.problems.map((p) => `repository ${index}: ${p}`));
  }
  if (problems.length) throw new Corrupt(`the restored directory does not check clean: ${problems.slice(0, 5).join('; ')}`);
}

export type VerifySelection = { kind: 'newest' } | { kind: 'sample'; count: number } | { kind: 'all' };

export interface VerifyOptions {
  /** The archive's URL (for messages and the restored archive.json). */
  url: string;
  selection: VerifySelection;
  /** Objects fetched at once per repository (default 8). */
  concurrency?: number;
  /** Where the temporary directories go (default the system's temp directory). */
  tempRoot?: string;
}

export interface VerifiedRepository {
  repository: number;
  /** The manifest verified (the newest when verification started), or null when none could be found. */
  manifest: string | null;
  commit: number | null;
  captured_at: string | null;
  objects: number;
  bytes: number;
  ok: boolean;
  problem: string | null;
}

export interface VerifyReport {
  ok: boolean;
  archive: string;
  selection: string;
  /** Repositories the archive holds manifests of. */
  archived: number;
  repositories: VerifiedRepository[];
}

/** The newest manifest key of each repository (null when it has none). */
async function newestKeys(store: ObjectStore, indexes: number[]): Promise<Map<number, string | null>> {
  const out = new Map<number, string | null>();
  for (const index of indexes) out.set(index, (await listManifestKeys(store, index)).at(-1) ?? null);
  return out;
}

/** Restore `index` at `key`'s commit into a fresh temporary directory and prove it; the directory is removed after. */
async function verifyOne(store: ObjectStore, index: number, key: string, o: VerifyOptions): Promise<VerifiedRepository> {
  const parsed = parseManifestKey(key)!;
  const result: VerifiedRepository = { repository: index, manifest: key, commit: Number(parsed.commitGeneration), captured_at: null, objects: 0, bytes: 0, ok: false, problem: null };
  const root = await fsp.mkdtemp(path.join(o.tempRoot ?? os.tmpdir(), 'cairn-verify-'));
  try {
    const restored = await restoreArchive(store, {
      url: o.url,
      repositories: [index],
      // The commit of the key listed: a manifest shipped meanwhile does not change what is checked.
      target: { seq: parsed.commitGeneration },
      dataDir: path.join(root, 'data'),
      concurrency: o.concurrency ?? 8,
      verify: (dir) => proveRestored(dir, [index]),
    });
    const r = restored[0]!;
    Object.assign(result, { manifest: r.manifest, commit: r.commit, captured_at: r.captured_at, objects: r.objects, bytes: r.bytes, ok: true });
  } catch (err) {
    result.problem = err instanceof Error ? err.message : String(err);
    try {
      result.captured_at = new Date(Number((await readOneManifest(store, key)).capturedAtUs / 1000n)).toISOString();
    } catch { /* the manifest itself is what failed: its problem says so */ }
  } finally {
    await fsp.rm(root, { recursive: true, force: true }).catch(() => undefined);
  }
  return result;
}

/**
 * Verify the archive: `newest` checks the repository whose newest manifest was captured last,
 * `sample` that many repositories chosen at random, `all` every repository with a manifest.
 * The report names each repository's manifest and, for a failure, the problem (the damaged or
 * missing object's key and its manifest's key, or what fsck found).
 */
export async function verifyArchive(store: ObjectStore, o: VerifyOptions): Promise<VerifyReport> {
  const archived = await listArchivedRepositories(store);
  const keys = await newestKeys(store, archived);
  const withManifest = archived.filter((i) => keys.get(i));
  let chosen: number[];
  if (o.selection.kind === 'all') chosen = withManifest;
  else if (o.selection.kind === 'sample') {
    const pool = [...withManifest];
    chosen = [];
    while (chosen.length < o.selection.count && pool.length) chosen.push(pool.splice(randomInt(pool.length), 1)[0]!);
    chosen.sort((a, b) => a - b);
  } else {
    // The newest manifest of the archive: one read of each repository's newest manifest.
    let best: { index: number; at: bigint } | null = null;
    const unreadable: VerifiedRepository[] = [];
    for (const index of withManifest) {
      try {
        const at = (await readOneManifest(store, keys.get(index)!)).capturedAtUs;
        if (!best || at > best.at) best = { index, at };
      } catch (err) {
        const key = keys.get(index)!;
        unreadable.push({ repository: index, manifest: key, commit: Number(parseManifestKey(key)!.commitGeneration), captured_at: null, objects: 0, bytes: 0, ok: false, problem: (err as Error).message });
      }
    }
    if (unreadable.length) return { ok: false, archive: o.url, selection: 'newest', archived: withManifest.length, repositories: unreadable };
    chosen = best ? [best.index] : [];
  }
  const repositories: VerifiedRepository[] = [];
  for (const index of chosen) repositories.push(await verifyOne(store, index, keys.get(index)!, o));
  const selection = o.selection.kind === 'sample' ? `sample of ${o.selection.count}` : o.selection.kind;
  return { ok: repositories.length > 0 && repositories.every((r) => r.ok), archive: o.url, selection, archived: withManifest.length, repositories };
}
