// One repository authority: its directory, its store and the operations over it. Every mutation
// is a transaction of the store's one group-commit queue (lib/store/commit-queue.ts), which
// runs transactions one at a time and makes each batch durable with one commit point.
//
// Lock order (storage-layout.md §9): the store's queue is the only lock of an authority.
// Transactions never wait for another transaction, and nothing waits for the queue while
// running inside it; retirement's purge runs as a barrier (after every earlier transaction is
// durable, before any later one starts).
import type { SealKey } from '../domain/sealing.js';
import { promises as fsp } from 'node:fs';
import { Corrupt } from '../domain/errors.js';
import { decodeAuthorityFile, encodeAuthorityFile } from '../store/authority-file.js';
import { mkdirDurable, removeTempFiles, writeFileDurable } from '../store/durable.js';
import { ContentStore } from '../store/content-store.js';
import { AuthorityLayout } from '../store/layout.js';
import { ContentOperations } from './content.js';
import { JobQueue } from './jobs.js';
import { PlanBook } from './plans.js';
import { WorkflowBook } from './workflow/book.js';
import { HistoryPromotions } from './workflow/promotion.js';
import { landGates } from './workflow/gates.js';
import { LandDesk } from './workflow/lands.js';
import { RulesBook } from './workflow/rules-book.js';
import { CHANGE, type ChangeRecord } from '../domain/workflow/rules.js';
import { authorsOf, listed, ownedPaths, touchedPaths } from '../domain/workflow/repo-rules.js';
import { LandQueue } from './workflow/land-queue.js';
import { WebhookBook } from './webhooks.js';
import { GitMirrorBook } from './git-mirrors.js';
import { DEFAULT_JOB_POLICY, type JobPolicy } from '../domain/jobs.js';
import type { Log } from './logger.js';
import { gitRepositoryShadowOf, gitShadowOf, NO_GIT_REPOSITORY_SHADOWS, NO_GIT_SHADOWS, type GitRepositoryShadowSource, type GitShadow, type GitShadowSource } from './git-shadow.js';

export class Authority {
  readonly content: ContentOperations;
  /** Tasks, changes and patchsets (workflow.log entities) and their read models. */
  readonly workflow: WorkflowBook;
  /** History promotion receipts and their idempotency keys (workflow.log entities). */
  readonly promotions: HistoryPromotions;
  /** Lands (workflow.log land and idempotency entities). */
  readonly lands: LandDesk;
  /** The land queue (workflow.log land_queue_entry records; driven by the service when serving). */
  readonly queue: LandQueue;
  /** Webhook registrations and deliveries (workflow.log entities); sent by the service's dispatcher. */
  readonly webhooks: WebhookBook;
  /** Git mirror registrations and their state (workflow.log entities); pushed by the service's mirror runner. */
  readonly mirrors: GitMirrorBook;
  /** The repository's rules (one workflow.log entity), which the land gates judge by. */
  readonly rules: RulesBook;

  private constructor(readonly index: number, readonly layout: AuthorityLayout, readonly store: ContentStore, readonly jobs: JobQueue, readonly plans: PlanBook, notes: string[]) {
    this.content = new ContentOperations(store);
    this.workflow = WorkflowBook.open(store, plans, jobs, notes);
    this.promotions = new HistoryPromotions(store, plans, this.workflow);
    this.rules = new RulesBook(store);
    // The rules read the repository's policy_flags through the land desk (the service sets them).
    this.rules.policyFlags = () => this.lands.policyFlags();
    this.workflow.reviews.carryAllApprovals = () => !this.rules.effective().dismiss_stale_approvals;
    const rules = this.rules;
    const source = {
      effective: (tx?: Parameters<RulesBook['effective']>[0]) => rules.effective(tx),
      get groupMembers() { return rules.groupMembers; },
      codeOwnersFor: (ps: { change_id: string }, tx: Parameters<RulesBook['effective']>[0], target: string | undefined) => {
        const change = tx ? tx.entity<ChangeRecord>(CHANGE, ps.change_id) : store.entity<ChangeRecord>(CHANGE, ps.change_id);
        const line = target ?? change?.land_target_line;
        const head = line === undefined ? null : ((tx ? tx.line(line) : store.line(line))?.head_snapshot_id ?? null);
        return head === null ? null : rules.codeOwnersRead(head);
      },
      touchedOf: (ps: Parameters<RulesBook['touchedOf']>[0]) => rules.touchedOf(ps),
    };
    const gates = landGates(() => this.workflow.reviews, (ps, tx) => (this.rules.effective(tx).require_resolved_threads ? this.workflow.comments.unresolvedCount(ps.change_id, tx) : null), () => source, (ps, tx) => this.workflow.stacks.requirement(ps, tx));
    this.lands = new LandDesk(store, this.workflow, gates);
    this.lands.mayBypass = (caller) => listed(this.rules.effective().bypass_allowed, caller, this.rules.groupMembers);
    this.lands.prepare = async (head, ps) => {
      if (!this.rules.effective().require_code_owners) return;
      if (head !== null) await this.rules.codeOwners(head);
      if (ps) await this.rules.readTouched(ps);
    };
    // Code owners are asked to review each new patchset, in its own commit (require_code_owners).
    this.workflow.preparePatchset = (line) => this.lands.prepare(store.line(line)?.head_snapshot_id ?? null, null);
    this.workflow.afterPatchset = (tx, change, ps) => {
      if (!this.rules.effective(tx).require_code_owners) return change;
      const co = source.codeOwnersFor(ps, tx, change.land_target_line);
      if (!co || co.problem_count > 0) return change;
      const authors = authorsOf(ps);
      const asked: { name: string; kind: 'person' | 'group' }[] = [];
      for (const { owners } of ownedPaths(co, touchedPaths(ps) ?? ps.diff.files.map((f) => f.path))) {
        for (const name of owners) {
          if (authors.includes(name) || asked.some((a) => a.name === name)) continue;
          asked.push({ name, kind: this.rules.groupMembers(name) === null ? 'person' : 'group' });
        }
      }
      if (asked.length === 0) return change;
      return this.workflow.reviews.stageRequests(tx, change, ps, asked, null, `code owner of ${ps.patchset_id}`).change;
    };
    this.queue = new LandQueue(store, this.workflow, this.lands, jobs, gates);
    this.webhooks = new WebhookBook(store);
    this.mirrors = new GitMirrorBook(store);
  }

  /** Create the directory and identity file of a new authority (durable on return). */
  static async create(root: string, index: number, createdAtS: number): Promise<void> {
    await mkdirDurable(root);
    await writeFileDurable(new AuthorityLayout(root).identityFile, encodeAuthorityFile({ repository_index: index, created_at_s: createdAtS }));
  }

  /**
   * Open an authority after a restart: remove temp files left by an interrupted write
   * (reported through `log`), check the identity, recover the store to its commit point, then
   * replay the job and plan logs. The object is handed out only when all of it is open. A
   * retiring repository opens with its files frozen (`frozen`): they stay as exported.
   */
  static async open(root: string, index: number, log: Log, policy: JobPolicy = DEFAULT_JOB_POLICY, frozen = false, maxSnapshotPaths?: number, sealKey: SealKey | null = null): Promise<Authority> {
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
    const { store, notes } = await ContentStore.open(root, { frozen, maxSnapshotPaths, sealKey });
    try {
      for (const note of notes) log.warn({ repository_index: index, note }, 'recovery');
      store.onBackgroundError = (problem) => log.error({ repository_index: index, problem }, 'index maintenance');
      store.onCompacted = (note) => log.info({ repository_index: index, note }, 'maintenance');
      // Webhook secrets and drafts a server from before sealing wrote in clear are sealed before
      // anything reads the files (storage-layout.md §17.2). A failure leaves the old log, and
      // the store refuses to list its files for a retirement until a later attempt succeeds.
      try {
        const sealed = await store.sealInClear();
        if (sealed) log.warn({ repository_index: index, note: sealed }, 'recovery');
      } catch (err) {
        log.error({ repository_index: index, problem: (err as Error).message }, 'sealing what workflow.log holds in clear failed; retried at the next start or retirement');
      }
      const expired = await store.expireStagedPacks();
      for (const pack of expired) log.info({ repository_index: index, pack }, 'removed an expired uncommitted pack');
      const jobs = await JobQueue.open(store, index, policy, !frozen);
      for (const note of jobs.notes) log.info({ repository_index: index, note }, 'recovery');
      const plans = PlanBook.open(store);
      const bookNotes: string[] = [];
      const authority = new Authority(index, layout, store, jobs.queue, plans, bookNotes);
      for (const note of bookNotes) log.warn({ repository_index: index, note }, 'recovery');
      // Every owner has its indexes: drop what the open's checkpoint left, and write a fresh
      // checkpoint in the background when the one read was missing, stale or far behind.
      store.ownersOpened();
      store.maybeCheckpoint();
      // workflow.log is compacted in the background (now when due, later after commits):
      // neither this open nor any commit waits for the rewrite. Never while frozen.
      store.compactWhenDue();
      return authority;
    } catch (err) {
      store.close();
      throw err;
    }
  }

  /** Remove expired staged packs; runs alone in the commit queue so it never races a commit. */
  expireStagedPacks(): Promise<string[]> {
    return this.store.expireStagedPacks();
  }

  /** Where lines are served over git (./git-shadow.ts): asked at each request, so the service may set it after this opened. */
  gitShadowSource: () => GitShadowSource = () => NO_GIT_SHADOWS;

  /** The bare repository serving `line` over git, up to date; NotFound when the line is not served. */
  gitShadow(line: string): Promise<GitShadow> {
    return gitShadowOf(this.gitShadowSource(), this.index, line);
  }

  /** Where the repository is served over git as a whole (every line a branch): set by the service as gitShadowSource is. */
  gitRepositoryShadowSource: () => GitRepositoryShadowSource = () => NO_GIT_REPOSITORY_SHADOWS;

  /** The bare repository serving every line over git, up to date; NotFound when not served. */
  gitRepositoryShadow(): Promise<GitShadow> {
    return gitRepositoryShadowOf(this.gitRepositoryShadowSource(), this.index);
  }

  /** Close the authority's files (idempotent). */
  /**
   * The highest sequence used per id space whose ids continue past an id floor (serve --lease,
   * ./writer-lease.ts): every repository-wide id space (a job's sequence is its index plus one).
   * The numbers scoped to one change (patchsets, reviews, comments) are not reserved.
   */
  idHighs(): Record<string, number> {
    return {
      task: this.workflow.index.taskCount,
      change: this.workflow.index.changeCount,
      plan: this.plans.highestPlan,
      job: this.jobs.highestSequence,
      land: this.lands.highestLand,
      land_queue_entry: this.queue.highestEntry,
      promotion: this.promotions.highestPromotion,
    };
  }

  close(): void {
    this.queue.stop();
    this.store.close();
  }

  /**
   * Close after every transaction queued so far is durable (shutdown): later ones are refused.
   * Resolves once the files are closed. A store that can no longer commit is closed as it is.
   */
  async drainAndClose(): Promise<void> {
    try {
      await this.store.barrier(() => this.close());
    } catch {
      this.close();
    }
    await this.store.whenClosed();
  }

  /**
   * Run `fn` with every mutation of this repository finished and none starting (purge). With
   * `close`, the authority's files are closed before later mutations run (they then get 409).
   */
  quiesce<T>(fn: () => Promise<T>, close = false): Promise<T> {
    return this.store.barrier(async () => {
      const result = await fn();
      if (close) this.close();
      return result;
    });
  }
}
