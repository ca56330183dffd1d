// One repository authority: its directory, its mutation mutex and (as later issues land) its
// stores. Every mutation of a repository runs through `exclusive`, so two writers of one
// repository never interleave; reads use the last committed state.
import { promises as fsp } from 'node:fs';
import { Mutex } from 'async-mutex';
import { Conflict, Corrupt } from '../domain/errors.js';
import { decodeAuthorityFile, encodeAuthorityFile } from '../store/authority-file.js';
import { mkdirDurable, removeTempFiles, writeFileDurable } from '../store/durable.js';
import { ContentStore } from '../store/content-store.js';
import { AuthorityLayout } from '../store/layout.js';
import { ContentOperations } from './content.js';
import { JobQueue } from './jobs.js';
import { PlanBook } from './plans.js';
import { DEFAULT_JOB_POLICY, type JobPolicy } from '../domain/jobs.js';
import type { Log } from './logger.js';

export class Authority {
  private readonly mutex = new Mutex();

  readonly content: ContentOperations;

  private constructor(readonly index: number, readonly layout: AuthorityLayout, readonly store: ContentStore, readonly jobs: JobQueue, private planBook: PlanBook | null = null) {
    this.content = new ContentOperations(store, this);
  }

  /** Create the directory and identity file of a new authority (durable on return). */
  static async create(root: string, index: number, createdAtS: number): Promise<void> {
    await mkdirDurable(root);
    await writeFileDurable(new AuthorityLayout(root).identityFile, encodeAuthorityFile({ repository_index: index, created_at_s: createdAtS }));
  }

  /**
   * Open an authority after a restart: remove temp files left by an interrupted write
   * (reported through `log`), then check every record the authority holds.
   */
  static async open(root: string, index: number, log: Log, policy: JobPolicy = DEFAULT_JOB_POLICY, compactJobs = true): Promise<Authority> {
    const layout = new AuthorityLayout(root);
    const removed = await removeTempFiles(root);
    for (const file of removed) log.warn({ repository_index: index, file: file.slice(root.length + 1) }, 'recovery removed an unfinished temp file');
    let identity;
    try {
      identity = decodeAuthorityFile(await fsp.readFile(layout.identityFile));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Corrupt(`repository ${index}: authority.bin is missing`);
      throw err;
    }
    if (identity.repository_index !== index) {
      throw new Corrupt(`repository ${index}: authority.bin names repository ${identity.repository_index}`);
    }
    const { store, notes } = await ContentStore.open(root);
    for (const note of notes) log.warn({ repository_index: index, note }, 'recovery');
    const expired = await store.expireStagedPacks();
    for (const pack of expired) log.info({ repository_index: index, pack }, 'removed an expired uncommitted pack');
    const jobs = await JobQueue.open(root, index, policy, compactJobs);
    for (const note of jobs.notes) log.warn({ repository_index: index, note }, 'recovery');
    const authority = new Authority(index, layout, store, jobs.queue);
    const plans = await PlanBook.open(root, store, authority);
    for (const note of plans.notes) log.warn({ repository_index: index, note }, 'recovery');
    authority.planBook = plans.book;
    return authority;
  }

  /** Remove expired staged packs; runs under the mutex so it never races a commit. */
  expireStagedPacks(): Promise<string[]> {
    return this.exclusive(() => this.store.expireStagedPacks());
  }

  get plans(): PlanBook {
    return this.planBook!;
  }

  private filesClosed = false;

  /** Close the authority's files (idempotent). */
  close(): void {
    if (this.filesClosed) return;
    this.filesClosed = true;
    this.store.close();
    this.jobs.close();
    this.planBook?.close();
  }

  private closed = false;

  /** Run a mutation of this repository alone. A mutation that waited through a purge is refused. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.mutex.runExclusive(() => {
      if (this.closed) throw new Conflict(`repository ${this.index} has been purged`);
      return fn();
    });
  }

  /**
   * Run `fn` with every mutation of this repository finished and none starting (purge). Locks
   * are taken in the order plan mutations take them (plans, then content), then the job queue.
   * With `close`, the authority's files are closed before the locks are released.
   */
  quiesce<T>(fn: () => Promise<T>, close = false): Promise<T> {
    return this.plans.exclusive(() => this.exclusive(() => this.jobs.exclusive(async () => {
      const result = await fn();
      if (close) {
        this.closed = true;
        this.close();
      }
      return result;
    })));
  }
}
