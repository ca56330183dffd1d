// What one commit publishes, gathered before anything is written: the changes of one operation
// (a transaction) or of a group of them (a batch). Pure data; lib/store/commit-queue.ts writes
// it and lib/store/txn.ts reads through it (a transaction sees the published state plus its
// batch plus itself).
import type { SnapshotRecord } from '../domain/content.js';
import type { LineRecord } from './content-files.js';
import type { PackKind } from './pack.js';

export type ObjectKind = 'blob' | 'tree';

export interface Locator {
  kind: ObjectKind;
  id: string;
  pack_id: string;
  offset: number;
  length: number;
  raw_length: number;
  crc32: number;
  /**
   * A tree's expanded size (lib/domain/tree-size.ts), recorded in its index entry; absent when
   * not recorded (a tree indexed before sizes were, or a locator rebuilt from pack headers).
   */
  expanded?: number;
}

export interface StagedSnapshot {
  canonical: Buffer;
  record: SnapshotRecord;
}

/** One upsert of a workflow.log transaction record (storage-layout.md §17). */
export interface Upsert {
  type: string;
  id: string;
  body: unknown;
}

/** An event a transaction emits (storage-layout.md §18); the commit gives it its sequence and time. */
export interface PendingEvent {
  type: string;
  data: Record<string, string | number | boolean | null>;
}

/** Logs whose records the store does not interpret (their owners replay them at open). */
export type OpaqueLog = 'jobs' | 'plans';

export class Staging {
  readonly adopt = new Map<string, { kind: PackKind; packId: string }>();
  /** Packs built by the server (plan artifacts, merges), written by the commit itself. */
  readonly newPacks = new Map<string, { kind: PackKind; packId: string; bytes: Buffer }>();
  readonly blobs = new Map<string, Locator>();
  readonly trees = new Map<string, Locator>();
  /** In commit order: parents before children. */
  readonly snapshots = new Map<string, StagedSnapshot>();
  readonly lines = new Map<string, LineRecord>();
  readonly appends: Record<OpaqueLog, Buffer[]> = { jobs: [], plans: [] };
  /** workflow.log records of a batch (one per transaction that upserted anything). */
  readonly workflow: { at_s: number; upserts: Upsert[] }[] = [];
  /** A transaction's own upserts, written as one record when it joins its batch. */
  readonly upserts: Upsert[] = [];
  /** Events, in the order their transactions emitted them. */
  readonly events: PendingEvent[] = [];
  /** Module state staged by transactions (job records, plan records, ...), by namespace. */
  readonly overlay = new Map<string, Map<string, unknown>>();
  readonly hooks: (() => void)[] = [];

  get empty(): boolean {
    return this.adopt.size === 0 && this.newPacks.size === 0 && this.blobs.size === 0 && this.trees.size === 0 && this.snapshots.size === 0 && this.lines.size === 0
      && this.appends.jobs.length === 0 && this.appends.plans.length === 0 && this.workflow.length === 0 && this.upserts.length === 0 && this.events.length === 0;
  }

  staged<T>(ns: string, key: string): T | undefined {
    return this.overlay.get(ns)?.get(key) as T | undefined;
  }

  stage(ns: string, key: string, value: unknown): void {
    let m = this.overlay.get(ns);
    if (!m) this.overlay.set(ns, (m = new Map()));
    m.set(key, value);
  }

  /** Move a finished transaction's changes into this batch. */
  absorb(tx: Staging, atS: number): void {
    for (const [k, v] of tx.adopt) this.adopt.set(k, v);
    for (const [k, v] of tx.newPacks) this.newPacks.set(k, v);
    for (const [k, v] of tx.blobs) this.blobs.set(k, v);
    for (const [k, v] of tx.trees) this.trees.set(k, v);
    for (const [k, v] of tx.snapshots) this.snapshots.set(k, v);
    for (const [k, v] of tx.lines) this.lines.set(k, v);
    this.appends.jobs.push(...tx.appends.jobs);
    this.appends.plans.push(...tx.appends.plans);
    this.events.push(...tx.events);
    if (tx.upserts.length) this.workflow.push({ at_s: atS, upserts: [...tx.upserts] });
    for (const [ns, m] of tx.overlay) for (const [k, v] of m) this.stage(ns, k, v);
    this.hooks.push(...tx.hooks);
  }
}
