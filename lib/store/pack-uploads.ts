// Uploads of packs into staging/, outside any commit, and the expiry of staged packs no commit
// adopted. A staged pack is invisible until a transaction adopts it (the commit pipeline moves
// it into packs/); this module only streams, verifies and later prunes files in staging/, so it
// changes when the upload protocol or the pruning policy changes.
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { Invalid, TooLarge } from '../domain/errors.js';
import type { CommitQueue } from './commit-queue.js';
import { writeFault } from './crash-point.js';
import { ChunkWriter, diskFullIn, fsyncDir, renameDurable, tempPathFor } from './durable.js';
import { PackVerifier, type PackKind } from './pack.js';
import { PACK_DIR, PACK_KINDS, type PublishedStore } from './published.js';

/** Staged packs not committed within this many seconds are removed (git's default prune age). */
export const STAGED_PACK_TTL_S = 14 * 24 * 3600;

export interface PackInfo {
  pack_id: string;
  kind: PackKind;
  byte_length: number;
  object_count: number;
}

export class PackUploads {
  /**
   * Staged packs written by this process and not let go yet, by `kind:id`: two writers of the
   * same bytes share one file, so it goes only when the last lets go, and never when it was
   * staged by someone else (an upload) before the first writer came.
   */
  private readonly holds = new Map<string, { count: number; ours: boolean }>();
  /** Per staged pack, so placing and dropping one never interleave. */
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(private readonly published: PublishedStore, private readonly commits: CommitQueue) {}

  private withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(key) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => {});
    this.locks.set(key, tail);
    void tail.then(() => { if (this.locks.get(key) === tail) this.locks.delete(key); });
    return run;
  }

  /**
   * Move a finished pack (`temp`) into staging/ as `packId` and hold it until dropStagedPack;
   * when the same bytes are staged already, `temp` goes and the staged file is shared.
   */
  stageHeld(kind: PackKind, packId: string, temp: string): Promise<void> {
    const key = `${kind}:${packId}`;
    return this.withLock(key, async () => {
      const target = this.published.stagedPackFile(kind, packId);
      const hold = this.holds.get(key);
      const present = await fsp.stat(target).then(() => true, () => false);
      if (present) await fsp.rm(temp, { force: true });
      else await renameDurable(temp, target);
      if (hold) hold.count += 1;
      else this.holds.set(key, { count: 1, ours: !present });
    });
  }

  /**
   * Stream an uploaded pack to a temp file in staging/, hashing and verifying every byte on the
   * way (never held in memory), then rename it into staging/. Idempotent: the same bytes under
   * an id already committed or staged are accepted without a second copy; other bytes under an
   * id never pass the hash check. Not a transaction: staged packs are invisible until a commit.
   */
  async stagePack(kind: PackKind, packId: string, body: AsyncIterable<Buffer> | Iterable<Buffer>, limit: number): Promise<{ info: PackInfo; state: 'committed' | 'staged' | 'new' }> {
    const already = this.published.isCommittedPack(kind, packId) ? 'committed' : (await this.published.isStagedPack(kind, packId)) ? 'staged' : null;
    const verifier = already ? null : new PackVerifier(kind, { refuseNames: true });
    const hash = already ? createHash('sha256') : null;
    const target = this.published.stagedPackFile(kind, packId);
    const temp = already ? null : tempPathFor(target);
    const handle = temp ? await fsp.open(temp, 'wx', 0o644).catch((err) => { throw diskFullIn(err, path.dirname(target)); }) : null;
    const writer = handle ? new ChunkWriter(handle) : null;
    let received = 0;
    try {
      if (temp) writeFault(temp);
      for await (const chunk of body) {
        received += chunk.length;
        if (received > limit) throw new TooLarge(`request body exceeds the route limit of ${limit} bytes`);
        if (verifier) {
          verifier.update(chunk);
          await writer!.write(chunk);
        } else {
          hash!.update(chunk);
        }
      }
      if (received === 0) throw new Invalid('empty pack upload');
      if (already) {
        const actual = hash!.digest('hex');
        if (actual !== packId) throw new Invalid(`uploaded bytes hash to ${actual}, not to the pack id in the path`);
        // A commit may have adopted the staged pack while these bytes streamed: look again.
        let state: 'committed' | 'staged' = this.published.isCommittedPack(kind, packId) ? 'committed' : 'staged';
        if (state === 'staged') {
          try {
            await fsp.utimes(target, new Date(), new Date());
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !this.published.isCommittedPack(kind, packId)) throw err;
            state = 'committed';
          }
        }
        const header = await this.published.packHeader(kind, packId);
        return { info: { pack_id: packId, kind, byte_length: header.byteLength, object_count: header.header.entries.length }, state };
      }
      const verified = verifier!.finish();
      if (verified.packId !== packId) throw new Invalid(`uploaded bytes hash to ${verified.packId}, not to the pack id in the path`);
      await writer!.end();
      await handle!.sync();
      await handle!.close();
      await renameDurable(temp!, target);
      return { info: { pack_id: packId, kind, byte_length: verified.byteLength, object_count: verified.header.entries.length }, state: 'new' };
    } catch (err) {
      await writer?.end().catch(() => {});
      if (handle) await handle.close().catch(() => {});
      if (temp) await fsp.rm(temp, { force: true });
      throw diskFullIn(err, path.dirname(target));
    }
  }

  /**
   * Let go of a pack stageHeld put in staging/: the last holder removes it unless a commit
   * adopted it (or it was staged by an upload first); the removal runs alone in the commit queue.
   */
  dropStagedPack(kind: PackKind, packId: string): Promise<void> {
    const key = `${kind}:${packId}`;
    return this.withLock(key, async () => {
      const hold = this.holds.get(key);
      if (hold && --hold.count > 0) return;
      this.holds.delete(key);
      if ((hold && !hold.ours) || this.published.isCommittedPack(kind, packId)) return;
      await this.commits.barrier(async () => {
        if (this.published.isCommittedPack(kind, packId)) return;
        await fsp.rm(this.published.stagedPackFile(kind, packId), { force: true });
        await fsyncDir(this.published.stagingDir(kind));
      });
    });
  }

  /** Remove staged packs older than `ttlSeconds`; runs alone in the commit queue, so never races a commit. */
  expireStagedPacks(ttlSeconds = STAGED_PACK_TTL_S, now = Date.now()): Promise<string[]> {
    return this.commits.barrier(async () => {
      const removed: string[] = [];
      for (const kind of PACK_KINDS) {
        const dir = this.published.stagingDir(kind);
        let any = false;
        for (const name of await fsp.readdir(dir)) {
          const file = path.join(dir, name);
          const { mtimeMs } = await fsp.stat(file);
          if (now - mtimeMs > ttlSeconds * 1000) {
            await fsp.rm(file, { force: true });
            removed.push(`${PACK_DIR[kind]}/${name}`);
            any = true;
          }
        }
        if (any) await fsyncDir(dir);
      }
      return removed;
    });
  }
}
