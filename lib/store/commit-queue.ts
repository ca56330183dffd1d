// The commit pipeline of one authority, and the only writer of commit.bin. Mutations are
// transactions run by one group-commit queue: transactions run one at a time against the
// published state plus what earlier transactions of the same batch staged; the batch is then
// written with one sync per touched file and one commit-point write (storage-layout.md §9,
// write order), and only then is each caller answered. A transaction that throws stages
// nothing; a batch whose write fails fails exactly its callers, and nothing of it becomes
// visible. Barriers run alone between batches (expiry, compaction, segment swaps).
import { holdsClear, SEALING_TYPES, sealingTestHooks, sealRecord } from '../domain/sealing.js';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { Conflict, Corrupt } from '../domain/errors.js';
import { crc32 } from './binary.js';
import { MAX_SEGMENTS, type CommitPointFile, type CommitState } from './commit-point.js';
import { crashPoint, writeFault } from './crash-point.js';
import { beginEventTime, endEventTime } from './event-clock.js';
import { encodeEvent, type EventRecord } from './event-log.js';
import { fsyncDir, tempPathFor, writingIn } from './durable.js';
import { FRAME_OVERHEAD, LOG_HEADER_SIZE, type LogFile } from './framed-log.js';
import { writeSegment, type SegmentEntry } from './index-file.js';
import { INDEX_NAMES, type IndexName, type LogName } from './layout.js';
import type { PackKind } from './pack.js';
import { INDEX_KIND, type PublishedStore } from './published.js';
import { Staging, type Locator } from './staging.js';
import { Txn } from './txn.js';

/** At most this many transactions share one commit. */
const MAX_BATCH = 256;

interface QueuedOp {
  fn: (tx: Txn) => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  /** Runs alone, after every earlier transaction is durable (purge, expiry, segment swaps). */
  barrier: boolean;
}

/**
 * What a commit's callers wait for beyond its durability (cairn serve --archive-sync: a manifest
 * covering it stored in the archive), and who hears of each durable commit point (the archive's
 * lag). Set by the owner of the store; the queue knows nothing of archives.
 */
export interface CommitHooks {
  /** A commit point of this generation is durable and published (any writer: batches, merges, compactions). */
  committed?(generation: number): void;
  /** Callers of the batch that wrote `generation` are answered when this settles (rejected: they get its error; the commit stays). */
  acknowledge?(generation: number): Promise<void>;
  /** Before each transaction (not a barrier) runs: throws to refuse it, nothing written (a writer handing the archive over). */
  admit?(): void;
}

export class CommitQueue {
  private readonly queue: QueuedOp[] = [];
  hooks: CommitHooks = {};
  private isDraining = false;
  private isClosed = false;
  private failure: Error | null = null;

  /** `onDrained` runs each time the queue empties (the store closes files or starts a merge). */
  constructor(private readonly published: PublishedStore, private readonly point: CommitPointFile, private readonly onDrained: () => void) {}

  /** A batch or barrier is running. */
  get draining(): boolean { return this.isDraining; }
  get closed(): boolean { return this.isClosed; }
  /** The commit-point write that failed; set, the store refuses writes until a restart. */
  get failed(): Error | null { return this.failure; }

  /** Refuse every transaction from now on, queued ones included. */
  close(): void {
    this.isClosed = true;
  }

  /**
   * Run `fn` as one transaction of this authority and resolve with its result once the commit
   * holding it is durable. `fn` reads through `tx` (published state plus what earlier
   * transactions of its batch staged) and stages its changes on `tx`; if it throws, nothing it
   * staged is kept. `fn` must not call `transact` itself (it would wait for itself).
   */
  transact<T>(fn: (tx: Txn) => Promise<T> | T): Promise<T> {
    return this.enqueue(fn, false);
  }

  /** Run `fn` alone: after every earlier transaction is durable and before any later one starts. */
  barrier<T>(fn: () => Promise<T> | T): Promise<T> {
    return this.enqueue(() => fn(), true);
  }

  assertWritable(): void {
    if (this.isClosed) throw new Conflict('the repository is closed');
    if (this.failure) throw new Corrupt(`a commit failed in a way that leaves its outcome unknown (${this.failure.message}); restart to recover`);
  }

  /** The state a commit starts from: the published one, one generation on. */
  nextState(): CommitState {
    const next: CommitState = structuredClone(this.published.state);
    next.generation += 1;
    return next;
  }

  /**
   * Write the commit point: the only writer of commit.bin. A failed write leaves its outcome
   * unknown (the slot may or may not be durable), so writes stop until a restart reads back
   * which state is current; callers must then not remove anything the new state names.
   */
  async writePoint(next: CommitState): Promise<void> {
    try {
      await this.point.write(next);
    } catch (err) {
      this.failure = err as Error;
      throw err;
    }
    this.hooks.committed?.(next.generation);
  }

  private enqueue<T>(fn: (tx: Txn) => Promise<T> | T, barrier: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject, barrier });
      if (!this.isDraining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.isDraining = true;
    try {
      while (this.queue.length) {
        if (this.queue[0].barrier) {
          const op = this.queue.shift()!;
          try {
            this.assertWritable();
            op.resolve(await op.fn(new Txn(this.published, new Staging())));
          } catch (err) {
            op.reject(err);
          }
          continue;
        }
        const batch = new Staging();
        const done: { op: QueuedOp; value: unknown }[] = [];
        const atS = Math.floor(Date.now() / 1000);
        while (this.queue.length && !this.queue[0].barrier && done.length < MAX_BATCH) {
          const op = this.queue.shift()!;
          const own = new Staging();
          try {
            this.assertWritable();
            // Transactions only: a barrier (a capture for the archive, maintenance) is not new content.
            this.hooks.admit?.();
            const value = await op.fn(new Txn(this.published, batch, own));
            batch.absorb(own, atS);
            done.push({ op, value });
          } catch (err) {
            op.reject(err);
          }
        }
        if (!batch.empty) {
          try {
            await this.writeBatch(batch);
          } catch (err) {
            for (const d of done) d.op.reject(err);
            continue;
          }
          const gate = this.hooks.acknowledge?.(this.published.state.generation);
          if (gate) {
            // The next batch does not wait: commits keep flowing while this one is archived, and
            // one manifest then covers many of them (group shipping).
            gate.then(() => { for (const d of done) d.op.resolve(d.value); }, (err) => { for (const d of done) d.op.reject(err); });
            continue;
          }
        }
        for (const d of done) d.op.resolve(d.value);
      }
    } finally {
      this.isDraining = false;
      this.onDrained();
    }
  }

  /**
   * Write a batch and publish it (storage-layout.md §9, write order): adopt packs, write new
   * index segments, append to the logs, then the commit point. A failure before the commit
   * point undoes what it can and publishes nothing.
   */
  private async writeBatch(batch: Staging): Promise<void> {
    const published = this.published;
    const state = published.state;
    const next = this.nextState();
    const gen = next.generation;
    const adopted: { kind: PackKind; packId: string; written?: boolean }[] = [];
    const newSegments: string[] = [];
    const appended: { log: LogFile; from: number }[] = [];
    let pointWritten = false;
    let workflowBytes: number[] = [];
    let workflowInClear = 0;
    // Events get their sequence numbers and one commit time here, in commit order.
    const atUs = batch.events.length ? beginEventTime() : 0;
    let seq = state.event_count;
    const events: EventRecord[] = batch.events.map((e) => ({ seq: ++seq, at_us: atUs, type: e.type, data: e.data }));
    if (events.length) {
      next.event_count = seq;
      next.last_event_at_us = atUs;
    }
    try {
      // Independent renames, and below independent fsyncs and segment files, run concurrently;
      // every one has settled before a phase ends (so an undo never races a write).
      const toAdopt = [...batch.adopt.values()].filter(({ kind, packId }) => !published.isCommittedPack(kind, packId));
      const renames = await Promise.allSettled(toAdopt.map(({ kind, packId }) => fsp.rename(published.stagedPackFile(kind, packId), published.packFile(kind, packId))));
      renames.forEach((r, i) => { if (r.status === 'fulfilled') adopted.push(toAdopt[i]); });
      throwFirstRejection(renames);
      for (const { kind, packId, bytes } of batch.newPacks.values()) {
        if (published.isCommittedPack(kind, packId) || adopted.some((a) => a.kind === kind && a.packId === packId)) continue;
        const target = published.packFile(kind, packId);
        const temp = tempPathFor(target);
        await writingIn(path.dirname(target), async () => {
          try {
            writeFault(temp);
            await fsp.writeFile(temp, bytes, { flag: 'wx', mode: 0o644 });
            const h = await fsp.open(temp, 'r+');
            try {
              await h.sync();
            } finally {
              await h.close();
            }
          } catch (err) {
            await fsp.rm(temp, { force: true });
            throw err;
          }
          await fsp.rename(temp, target);
        });
        adopted.push({ kind, packId, written: true });
      }
      if (adopted.length) {
        const kinds = [...new Set(adopted.map((a) => a.kind))];
        throwFirstRejection(await Promise.allSettled(kinds.flatMap((kind) => [fsyncDir(published.packDir(kind)), fsyncDir(published.stagingDir(kind))])));
      }
      crashPoint('commit:after-adopt');

      // Snapshot records go to snapshots.log at known offsets; the index segment points there.
      const snapRows: SegmentEntry[] = [];
      const snapFrames: Buffer[] = [];
      if (batch.snapshots.size) {
        let offset = Math.max(state.logs.snapshots, LOG_HEADER_SIZE);
        let ordinal = state.snapshot_count;
        for (const { canonical, record } of batch.snapshots.values()) {
          snapRows.push({ id: record.snapshot_id, pack_id: '', a: ordinal++, b: crc32(canonical), c: offset + 4, d: canonical.length, e: record.created_at_s });
          snapFrames.push(canonical);
          offset += canonical.length + FRAME_OVERHEAD;
        }
        next.snapshot_count = ordinal;
      }
      const rows: Record<IndexName, SegmentEntry[]> = {
        blobs: [...batch.blobs.values()].map(fromLocator),
        trees: [...batch.trees.values()].map(fromLocator),
        snapshots: snapRows,
      };
      const names = INDEX_NAMES.filter((name) => rows[name].length);
      for (const name of names) {
        if (next.segments[name].length >= MAX_SEGMENTS) throw new Conflict(`index ${name} is waiting for a segment merge; retry`);
      }
      const files = names.map((name) => published.layout.indexSegment(name, gen));
      newSegments.push(...files); // removed on failure (rm of one never written is harmless)
      throwFirstRejection(await Promise.allSettled(names.map((name, i) => writeSegment(files[i], INDEX_KIND[name], rows[name]))));
      for (const name of names) next.segments[name] = [...next.segments[name], gen];
      crashPoint('commit:after-index');

      const writes: Promise<void>[] = [];
      const appendLog = (name: LogName, bodies: Buffer[]) => {
        if (!bodies.length) return;
        const log = published.log(name);
        const from = state.logs[name];
        appended.push({ log, from });
        writes.push(log.appendAt(from, log.frame(bodies, from)).then((end) => { next.logs[name] = end; }));
      };
      appendLog('snapshots', snapFrames);
      appendLog('jobs', batch.appends.jobs);
      appendLog('plans', batch.appends.plans);
      // Sealed fields are encrypted here, at the one place workflow records become bytes.
      const key = published.sealKey;
      const workflowBodies = batch.workflow.map((t) => {
        if (!t.upserts.some((u) => SEALING_TYPES.has(u.type))) return Buffer.from(JSON.stringify(t), 'utf8');
        if (sealingTestHooks.writeInClear) {
          workflowInClear += t.upserts.filter((u) => holdsClear(u.type, u.body, key?.id ?? null)).length;
          return Buffer.from(JSON.stringify(t), 'utf8');
        }
        return Buffer.from(JSON.stringify({ ...t, upserts: t.upserts.map((u) => ({ ...u, body: sealRecord(key, u.type, u.id, u.body) })) }), 'utf8');
      });
      workflowBytes = workflowBodies.map((b) => b.length);
      appendLog('workflow', workflowBodies);
      appendLog('events', events.map(encodeEvent));
      throwFirstRejection(await Promise.allSettled(writes));
      crashPoint('commit:after-log');
      crashPoint('commit:before-state');
      pointWritten = true;
      await this.writePoint(next);
      crashPoint('commit:after-state');
    } catch (err) {
      if (atUs) endEventTime(atUs);
      // After a failed commit-point write nothing it may name is removed (writePoint stopped writes).
      if (pointWritten) throw err;
      for (const { log, from } of appended) await log.truncate(from).catch(() => {});
      for (const file of newSegments) await fsp.rm(file, { force: true }).catch(() => {});
      for (const { kind, packId, written } of adopted) {
        if (written) await fsp.rm(published.packFile(kind, packId), { force: true }).catch(() => {});
        else await fsp.rename(published.packFile(kind, packId), published.stagedPackFile(kind, packId)).catch(() => {});
      }
      throw err;
    }
    // The commit is durable: make it visible, run the transactions' publish hooks, then tell
    // event listeners (what an event describes is readable before anyone hears of it).
    const eventsFrom = state.logs.events;
    try {
      published.publish(next, batch, adopted, workflowBytes, workflowInClear);
      // The index follows the log at once: a hook that throws must not leave it short of events
      // the commit point counts (later appends would then leave a hole in its recent tail).
      if (events.length) published.indexEvents(events, eventsFrom);
      for (const hook of batch.hooks) hook();
      if (events.length) published.notifyEvents(events);
    } finally {
      if (atUs) endEventTime(atUs);
    }
  }
}

function fromLocator(l: Locator): SegmentEntry {
  return { id: l.id, pack_id: l.pack_id, a: 0, b: l.crc32, c: l.offset, d: l.length, e: l.raw_length, f: l.expanded ?? 0 };
}

/** After concurrent steps have all settled: throw the first failure, if any. */
function throwFirstRejection(results: PromiseSettledResult<unknown>[]): void {
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
}
