// Restore sessions (spec: "Restore session", restore manifest rules): start with a manifest,
// upload every listed file (size and sha256 checked while streaming), then commit: verify, adopt
// under a new index, check like fsck, move into place and append the registry record.
// Sessions live under DATA/restores/ and survive restarts (storage-layout.md §16).
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { Mutex } from 'async-mutex';
import { Conflict, Invalid, NotFound, TooLarge } from '../domain/errors.js';
import { validateManifest, type ExportManifest } from '../domain/export-manifest.js';
import { LIFECYCLE_PURGED, RESERVED_NAME, nowSeconds, validatePolicyFlags, type RepositoryRecord } from '../domain/repository.js';
import { ChunkWriter, exists, fsyncDir, mkdirDurable, removeDurable, renameDurable, tempPathFor, writeFileDurable } from '../store/durable.js';
import { copyFileHashed, hashFile } from '../store/export.js';
import { fsckAuthority } from '../store/fsck.js';
import { rewriteRepositoryIndex } from '../store/rewrite.js';
import { decodeAuthorityFile } from '../store/authority-file.js';
import { crashPoint } from '../store/crash-point.js';
import type { AuthorityHost } from './host.js';

export const RESTORE_CONTRACT = 'svc.server.repository-restore.v1';
export const MAX_OPEN_SESSIONS = 64;
/** An uploading session idle this long is abandoned and removed. */
export const ABANDONED_SESSION_S = 24 * 3600;
/** A committed session's record (for replays) is kept this long. */
export const COMMITTED_SESSION_S = 7 * 24 * 3600;

type SessionState = 'uploading' | 'committing' | 'committed';

interface SessionRecord {
  state: SessionState;
  manifest: ExportManifest;
  policy_flags: number;
  created_at_s: number;
  updated_at_s: number;
  repository_index?: number;
  /** sha256 of the rewritten authority.bin: proves a registered index holds this adoption. */
  adopted_authority_sha256?: string;
  response?: Record<string, unknown>;
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

export class RestoreSessions {
  private readonly sessions = new Map<string, SessionRecord>();
  private readonly mutex = new Mutex();

  private constructor(private readonly service: AuthorityHost) {}

  get root(): string {
    return this.service.layout.restoresDir;
  }

  /** Sessions are named by a hash of their token: the token itself is never written down. */
  private key(token: string): string {
    return createHash('sha256').update(token).digest('hex').slice(0, 32);
  }

  private dir(key: string): string { return path.join(this.root, key); }
  private sessionFile(key: string): string { return path.join(this.dir(key), 'session.json'); }
  private filesDir(key: string): string { return path.join(this.dir(key), 'files'); }

  static async open(service: AuthorityHost): Promise<RestoreSessions> {
    const sessions = new RestoreSessions(service);
    await fsp.mkdir(sessions.root, { recursive: true });
    for (const key of await fsp.readdir(sessions.root)) {
      try {
        sessions.sessions.set(key, JSON.parse(await fsp.readFile(sessions.sessionFile(key), 'utf8')) as SessionRecord);
      } catch {
        // A session directory without a readable record was never acknowledged: remove it.
        await removeDurable(sessions.dir(key));
      }
    }
    await sessions.expire();
    return sessions;
  }

  /** Remove abandoned uploading sessions and old committed records. */
  async expire(now = nowSeconds()): Promise<number> {
    return this.mutex.runExclusive(async () => {
      let removed = 0;
      for (const [key, s] of [...this.sessions]) {
        const idle = now - s.updated_at_s;
        if ((s.state === 'committed' && idle > COMMITTED_SESSION_S) || (s.state === 'uploading' && idle > ABANDONED_SESSION_S)) {
          await removeDurable(this.dir(key));
          this.sessions.delete(key);
          removed++;
        }
      }
      return removed;
    });
  }

  private async save(key: string, s: SessionRecord): Promise<void> {
    await writeFileDurable(this.sessionFile(key), JSON.stringify(s));
    this.sessions.set(key, s);
  }

  private session(token: string): { key: string; s: SessionRecord } {
    const key = this.key(token);
    const s = /^[0-9a-f]{32}$/.test(token) ? this.sessions.get(key) : undefined;
    if (!s) throw new NotFound('unknown restore session');
    return { key, s };
  }

  private checkNamespace(namespace: string): void {
    const owner = this.service.registry.namespaceOwner(namespace);
    if (owner) throw new Conflict(`namespace "${namespace}" is owned by live repository ${owner.repository_index}`);
  }

  start(manifest: ExportManifest, policyFlags: number): Promise<string> {
    validateManifest(manifest);
    validatePolicyFlags(policyFlags);
    return this.mutex.runExclusive(async () => {
      this.checkNamespace(manifest.namespace);
      const open = [...this.sessions.values()].filter((s) => s.state !== 'committed').length;
      if (open >= MAX_OPEN_SESSIONS) throw new Conflict(`there are already ${MAX_OPEN_SESSIONS} uncommitted restore sessions`);
      const token = randomBytes(16).toString('hex');
      const key = this.key(token);
      await mkdirDurable(this.filesDir(key));
      const now = nowSeconds();
      await this.save(key, { state: 'uploading', manifest, policy_flags: policyFlags, created_at_s: now, updated_at_s: now });
      return token;
    });
  }

  /** Stream one listed file into the session, checking size and sha256 on the way. */
  async upload(token: string, filePath: string, body: AsyncIterable<Buffer>, limit: number): Promise<{ path: string; size: number; sha256: string; remaining: number }> {
    const { key, s } = this.session(token);
    if (s.state !== 'uploading') throw new Conflict(`restore session is ${s.state}`);
    const entry = s.manifest.files.find((f) => f.path === filePath);
    if (!entry) throw new NotFound('file is not in the restore manifest');
    const target = path.join(this.filesDir(key), ...entry.path.split('/'));
    await fsp.mkdir(path.dirname(target), { recursive: true });
    const temp = tempPathFor(target);
    const handle = await fsp.open(temp, 'wx', 0o644);
    const writer = new ChunkWriter(handle);
    const hash = createHash('sha256');
    let size = 0;
    try {
      for await (const chunk of body) {
        size += chunk.length;
        if (size > limit) throw new TooLarge(`request body exceeds the route limit of ${limit} bytes`);
        if (size > entry.size) throw new Invalid(`${entry.path} is larger than the ${entry.size} bytes the manifest lists`);
        hash.update(chunk);
        await writer.write(chunk);
      }
      const digest = hash.digest('hex');
      if (size !== entry.size) throw new Invalid(`${entry.path} is ${size} bytes; the manifest lists ${entry.size}`);
      if (digest !== entry.sha256) throw new Invalid(`${entry.path} hashes to ${digest}; the manifest lists ${entry.sha256}`);
      await writer.end();
      await handle.sync();
      await handle.close();
      // Placed under the session mutex, after checking again that no commit has taken the files.
      await this.mutex.runExclusive(async () => {
        const current = this.sessions.get(key);
        if (current?.state !== 'uploading') throw new Conflict(`restore session is ${current?.state ?? 'gone'}`);
        await renameDurable(temp, target);
        this.stagedPaths(key).add(entry.path);
        // Activity keeps a session from expiring; recording it once a minute is enough.
        const now = nowSeconds();
        if (now - current.updated_at_s >= 60) await this.save(key, { ...current, updated_at_s: now });
      });
    } catch (err) {
      await writer.end().catch(() => {});
      await handle.close().catch(() => {});
      await fsp.rm(temp, { force: true });
      throw err;
    }
    return { path: entry.path, size, sha256: entry.sha256, remaining: s.manifest.files.length - this.stagedPaths(key).size };
  }

  /** Paths staged so far, per session (filled from the disk once per session after a restart). */
  private readonly staged = new Map<string, Set<string>>();

  private stagedPaths(key: string): Set<string> {
    let set = this.staged.get(key);
    if (!set) {
      set = new Set();
      const s = this.sessions.get(key);
      for (const f of s?.manifest.files ?? []) {
        if (existsSync(path.join(this.filesDir(key), ...f.path.split('/')))) set.add(f.path);
      }
      this.staged.set(key, set);
    }
    return set;
  }

  private async missing(key: string, s: SessionRecord): Promise<string[]> {
    this.staged.delete(key); // commit re-reads the disk rather than trusting the cache
    const staged = this.stagedPaths(key);
    return s.manifest.files.map((f) => f.path).filter((p) => !staged.has(p));
  }

  /** Commit a session; a replay returns the recorded response. All-or-nothing across kill -9. */
  commit(token: string): Promise<Record<string, unknown>> {
    const { key } = this.session(token);
    return this.mutex.runExclusive(() => this.commitLocked(key));
  }

  private async commitLocked(key: string): Promise<Record<string, unknown>> {
    let s = this.sessions.get(key)!;
    if (s.state === 'committed') return s.response!;
    if (s.state === 'committing') {
      // A commit was interrupted: did it reach the registry?
      const record = s.repository_index === undefined ? undefined : this.service.registry.get(s.repository_index);
      const placed = record ? await fsp.readFile(path.join(this.service.layout.repositoryDir(record.repository_index), 'authority.bin')).catch(() => null) : null;
      if (record && placed && s.adopted_authority_sha256 === sha256(placed)) return this.finish(key, s, record);
      s = { ...s, state: 'uploading', repository_index: undefined };
      await this.save(key, s);
    }
    const missing = await this.missing(key, s);
    if (missing.length) throw new Invalid(`files not uploaded yet: ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ` and ${missing.length - 10} more` : ''}`);
    const staged = this.filesDir(key);
    for (const f of s.manifest.files) {
      const actual = await hashFile(path.join(staged, ...f.path.split('/')));
      if (actual.size !== f.size || actual.sha256 !== f.sha256) throw new Invalid(`staged ${f.path} no longer matches the manifest`);
    }
    this.checkNamespace(s.manifest.namespace);
    const session = s;
    let exported: number;
    try {
      exported = decodeAuthorityFile(await fsp.readFile(path.join(staged, 'authority.bin'))).repository_index;
    } catch (err) {
      throw new Invalid(`the staged authority fails its checks: authority.bin: ${(err as Error).message}`);
    }
    let record: RepositoryRecord;
    const adopt = async (index: number) => {
      await this.adopt(staged, index, async (authorityBin) => {
        // Recorded before the move: a replay after a crash recognises this adoption by it.
        await this.save(key, { ...session, state: 'committing', repository_index: index, adopted_authority_sha256: sha256(authorityBin), updated_at_s: nowSeconds() });
      });
    };
    const opened = async (index: number) => {
      crashPoint('restore:after-registry');
      // Opened before the restore's event is appended: whoever hears of it can use the repository.
      await this.service.openRestored(index);
    };
    try {
      const cluster = this.service.cluster;
      if (cluster) {
        // serve --cluster: the index is the cluster's (always a new one, never the exported
        // index), placed on this node; a namespace a live repository owns anywhere is refused.
        let a = await cluster.allocate(s.manifest.namespace);
        const held = a.created ? undefined : this.service.registry.get(a.index);
        // The namespace's repository here was purged: the namespace is free again.
        if (held && held.lifecycle_kind === LIFECYCLE_PURGED && held.repository_name !== RESERVED_NAME) a = await cluster.allocate(s.manifest.namespace, a.index);
        // An index allocated here for it by an earlier attempt that failed before its record was written: that one.
        else if (!a.created && a.owner === cluster.node && (!held || held.repository_name === RESERVED_NAME)) a = { ...a, created: true };
        if (!a.created) throw new Conflict(`namespace "${s.manifest.namespace}" is owned by live repository ${a.index} (on node ${a.owner})`);
        record = (await this.service.registry.registerAt(a.index, s.manifest.repo_name, s.manifest.namespace, s.policy_flags, adopt, opened, exported)).record;
      } else {
        record = await this.service.registry.appendWith(s.manifest.repo_name, s.manifest.namespace, s.policy_flags, adopt, exported, opened);
      }
    } catch (err) {
      const current = this.sessions.get(key)!;
      if (current.state === 'committing') await this.save(key, { ...current, state: 'uploading', repository_index: undefined, adopted_authority_sha256: undefined });
      throw err;
    }
    return this.finish(key, this.sessions.get(key)!, record);
  }

  /**
   * Rewrite the stored repository index, check the staged authority as fsck does, then move it
   * into place. On a failed check the two rewritten files get their uploaded bytes back.
   */
  private async adopt(staged: string, index: number, beforeMove: (authorityBin: Buffer) => Promise<void>): Promise<void> {
    const originals = new Map<string, Buffer>();
    for (const name of ['authority.bin', 'jobs.log']) {
      const file = path.join(staged, name);
      if (await exists(file)) originals.set(name, await fsp.readFile(file));
    }
    try {
      await rewriteRepositoryIndex(staged, index);
      const check = await fsckAuthority(staged, index, { maxSnapshotPaths: this.service.maxSnapshotPaths, sealKey: this.service.sealKey });
      if (check.problems.length) throw new Invalid(`the staged authority fails its checks: ${check.problems.slice(0, 5).join('; ')}`);
    } catch (err) {
      for (const [name, bytes] of originals) await writeFileDurable(path.join(staged, name), bytes);
      throw err instanceof Invalid ? err : new Invalid(`the staged authority does not open: ${(err as Error).message}`);
    }
    await beforeMove(await fsp.readFile(path.join(staged, 'authority.bin')));
    const target = this.service.layout.repositoryDir(index);
    if (await exists(target)) await removeDurable(target);
    await renameDurable(staged, target);
    crashPoint('restore:after-rename');
  }

  private async finish(key: string, s: SessionRecord, record: RepositoryRecord): Promise<Record<string, unknown>> {
    const response = {
      contract: RESTORE_CONTRACT,
      repository_index: record.repository_index,
      repository: { ...record },
      restored_from: { repo_name: s.manifest.repo_name, namespace: s.manifest.namespace, exported_at_s: s.manifest.exported_at_s },
      files: s.manifest.files.length,
    };
    await this.save(key, { ...s, state: 'committed', repository_index: record.repository_index, response, updated_at_s: nowSeconds() });
    return response;
  }

  /** Offline import (`cairn import`): a session filled from a plain directory, then committed. */
  async importDirectory(dir: string, manifest: ExportManifest, policyFlags: number): Promise<Record<string, unknown>> {
    const token = await this.start(manifest, policyFlags);
    const { key } = this.session(token);
    for (const f of manifest.files) {
      const copied = await copyFileHashed(path.join(dir, ...f.path.split('/')), path.join(this.filesDir(key), ...f.path.split('/')));
      if (copied.size !== f.size || copied.sha256 !== f.sha256) throw new Invalid(`${f.path} does not match manifest.json (size ${copied.size}, sha256 ${copied.sha256})`);
    }
    await fsyncDir(this.filesDir(key));
    return this.commit(token);
  }
}
