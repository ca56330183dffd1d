// The repository registry: which indexes exist, their lifecycle and identity. Mutations run
// under one mutex and are durable (registry.bin rewritten atomically) before they return.
import { promises as fsp } from 'node:fs';
import { Mutex } from 'async-mutex';
import { Conflict } from '../domain/errors.js';
import {
  LIFECYCLE_ACTIVE,
  LIFECYCLE_PURGED,
  RESERVED_NAME,
  U32_MAX,
  nowSeconds,
  ownsNamespace,
  type RepositoryRecord,
} from '../domain/repository.js';
import { missingRegistryEvents, registryEvents, registryStateAfter, type DomainEvent, type RegistryEventState } from '../domain/events.js';
import { crashPoint } from '../store/crash-point.js';
import { writeFileDurable } from '../store/durable.js';
import { RegistryEventLog } from '../store/registry-events.js';
import { Layout } from '../store/layout.js';
import { decodeRegistry, encodeRegistry } from '../store/registry-file.js';

/** Name of the placeholder record that keeps a restore from reusing its exported index. */
export { RESERVED_NAME } from '../domain/repository.js';

export interface RegistrationResult {
  record: RepositoryRecord;
  created: boolean;
}

export class Registry {
  private records: RepositoryRecord[];
  /** Live owners of non-empty namespaces: lookups without scanning every record. */
  private owners = new Map<string, number>();
  private readonly mutex = new Mutex();
  /** registry-events.log, once the server opened it (offline tools read the registry without it). */
  private eventLog: RegistryEventLog | null = null;
  /** An event append failed after its registry.bin write: reconcile before the next one. */
  private eventsBehind = false;
  /** Records this registry's events never announce (serve --cluster: a read replica of another node's repository). */
  unannounced: (index: number) => boolean = () => false;

  private constructor(private readonly layout: Layout, records: RepositoryRecord[]) {
    this.records = records;
    this.indexOwners();
  }

  private indexOwners(): void {
    this.owners = new Map();
    for (const r of this.records) if (ownsNamespace(r, r.namespace)) this.owners.set(r.namespace, r.repository_index);
  }

  /** Load registry.bin; a missing file is an empty registry, a corrupt one is an error. */
  static async open(layout: Layout): Promise<Registry> {
    let records: RepositoryRecord[] = [];
    try {
      records = decodeRegistry(await fsp.readFile(layout.registryFile));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return new Registry(layout, records);
  }

  /**
   * Open registry-events.log and append what it lacks against registry.bin (a crash between a
   * registry write and its event's append; or a data directory from before the log existed).
   * Returns notes for the recovery log.
   */
  async openEvents(): Promise<string[]> {
    const notes: string[] = [];
    this.eventLog = RegistryEventLog.open(this.layout.registryEventsFile, notes);
    const appended = await this.mutex.runExclusive(() => this.reconcileLocked());
    if (appended) notes.push(`registry-events.log: appended ${appended} event(s) that registry.bin records but the log lacked`);
    return notes;
  }

  /** The registry's event stream (null before openEvents). */
  get events(): RegistryEventLog | null {
    return this.eventLog;
  }

  closeEvents(): void {
    this.eventLog?.close();
    this.eventLog = null;
  }

  /** closeEvents once the registry change under way (if any) is durable. */
  closeEventsWhenIdle(): Promise<void> {
    return this.mutex.runExclusive(() => this.closeEvents());
  }

  private async reconcileLocked(): Promise<number> {
    const log = this.eventLog;
    if (!log) return 0;
    const known = new Map<number, RegistryEventState>();
    for (const e of log.all) {
      const state = registryStateAfter(e.type);
      if (state && typeof e.data.repository_index === 'number') known.set(e.data.repository_index, state);
    }
    const missing: DomainEvent[] = [];
    for (const r of this.records) {
      if (r.repository_name === RESERVED_NAME && r.lifecycle_kind === LIFECYCLE_PURGED && r.namespace === '') continue;
      if (this.unannounced(r.repository_index)) continue;
      for (const e of missingRegistryEvents(known.get(r.repository_index) ?? null, r)) missing.push({ type: e.type, data: { ...e.data, recovered: true } });
    }
    await log.append(missing);
    this.eventsBehind = false;
    return missing.length;
  }

  all(): readonly RepositoryRecord[] {
    return this.records;
  }

  get(index: number): RepositoryRecord | undefined {
    return this.records[index];
  }

  /** The live (not purged) repository owning a non-empty namespace, if any. */
  namespaceOwner(namespace: string): RepositoryRecord | undefined {
    if (namespace === '') return undefined;
    const index = this.owners.get(namespace);
    return index === undefined ? undefined : this.records[index];
  }

  /**
   * Register per the spec's rules: a namespace owned by a live repository replays when name and
   * flags match, else conflicts; an empty namespace never replays (empty namespaces repeat).
   */
  register(
    name: string,
    namespace: string,
    policyFlags: number,
    beforeCommit: (index: number) => Promise<void>,
    afterCommit: (index: number) => Promise<void> = async () => {},
  ): Promise<RegistrationResult> {
    return this.mutex.runExclusive(async () => {
      const owner = this.namespaceOwner(namespace);
      if (owner) {
        if (owner.repository_name === name && owner.policy_flags === policyFlags) return { record: owner, created: false };
        throw new Conflict(`namespace "${namespace}" is owned by repository ${owner.repository_index} with a different name or policy_flags`);
      }
      const record = await this.appendLocked(name, namespace, policyFlags, beforeCommit, afterCommit, undefined, null);
      return { record, created: true };
    });
  }

  /**
   * Register at an index the cluster allocated (serve --cluster): the indexes below it that this
   * registry lacks get purged placeholders (other nodes own them; indexes are positions). A
   * record already at `index` with this name and flags replays (a registration repeated after a
   * crash between the allocation and this write creates it then).
   */
  registerAt(
    index: number,
    name: string,
    namespace: string,
    policyFlags: number,
    beforeCommit: (index: number) => Promise<void>,
    afterCommit: (index: number) => Promise<void> = async () => {},
    restoredFrom: number | null = null,
  ): Promise<RegistrationResult> {
    return this.mutex.runExclusive(async () => {
      const current = this.records[index];
      if (current && current.repository_name !== RESERVED_NAME) {
        if (current.repository_name === name && current.namespace === namespace && current.policy_flags === policyFlags) return { record: current, created: false };
        throw new Conflict(`namespace "${namespace}" is owned by repository ${index} with a different name or policy_flags`);
      }
      const now = nowSeconds();
      const records = this.records.slice();
      for (let i = records.length; i < index; i++) {
        records.push({ repository_index: i, repository_name: RESERVED_NAME, lifecycle_kind: LIFECYCLE_PURGED, namespace: '', policy_flags: 0, created_at_s: 0, updated_at_s: 0, tombstoned: true });
      }
      const record: RepositoryRecord = {
        repository_index: index, repository_name: name, lifecycle_kind: LIFECYCLE_ACTIVE, namespace,
        policy_flags: policyFlags, created_at_s: now, updated_at_s: now, tombstoned: false,
      };
      records[index] = record;
      await beforeCommit(index);
      await this.commit(records, registryEvents(current, record, restoredFrom), () => afterCommit(index));
      return { record, created: true };
    });
  }

  /**
   * Append a new active record under the registry mutex. `beforeCommit` runs after the new
   * index is known and before registry.bin is rewritten (restore uses it to move the staged
   * authority into place); if it throws, nothing is appended. `afterCommit` runs once
   * registry.bin is written and before the record's event is appended (the service opens the
   * authority there, so whoever hears of the event can read the repository).
   */
  appendWith(
    name: string,
    namespace: string,
    policyFlags: number,
    beforeCommit: (index: number) => Promise<void>,
    avoidIndex?: number,
    afterCommit: (index: number) => Promise<void> = async () => {},
  ): Promise<RepositoryRecord> {
    return this.mutex.runExclusive(async () => {
      if (this.namespaceOwner(namespace)) throw new Conflict(`namespace "${namespace}" is owned by a live repository`);
      return this.appendLocked(name, namespace, policyFlags, beforeCommit, afterCommit, avoidIndex, avoidIndex ?? null);
    });
  }

  private async appendLocked(
    name: string,
    namespace: string,
    policyFlags: number,
    beforeCommit: (index: number) => Promise<void>,
    afterCommit: (index: number) => Promise<void>,
    avoidIndex: number | undefined,
    restoredFrom: number | null,
  ): Promise<RepositoryRecord> {
    const now = nowSeconds();
    // Restore never reuses the exported index: when it is next in line, a reserved, purged
    // placeholder record takes it (indexes are positions, so they cannot be skipped otherwise).
    const placeholders: RepositoryRecord[] = [];
    if (avoidIndex === this.records.length) {
      placeholders.push({
        repository_index: avoidIndex, repository_name: RESERVED_NAME, lifecycle_kind: LIFECYCLE_PURGED, namespace: '',
        policy_flags: 0, created_at_s: now, updated_at_s: now, tombstoned: true,
      });
    }
    const index = this.records.length + placeholders.length;
    if (index > U32_MAX) throw new Conflict('the registry has used every u32 repository index');
    const record: RepositoryRecord = {
      repository_index: index,
      repository_name: name,
      lifecycle_kind: LIFECYCLE_ACTIVE,
      namespace,
      policy_flags: policyFlags,
      created_at_s: now,
      updated_at_s: now,
      tombstoned: false,
    };
    await beforeCommit(index);
    await this.commit([...this.records, ...placeholders, record], registryEvents(undefined, record, restoredFrom), () => afterCommit(index));
    return record;
  }

  /** Apply `change` to one record and persist; `change` may throw to abort without writing. */
  update(index: number, change: (current: RepositoryRecord) => RepositoryRecord | null): Promise<RepositoryRecord> {
    return this.mutex.runExclusive(async () => {
      const current = this.records[index];
      if (!current) throw new Error(`registry has no record ${index}`);
      const next = change(current);
      if (next === null) return current;
      const records = this.records.slice();
      records[index] = { ...next, repository_index: index, updated_at_s: nowSeconds() };
      await this.commit(records, registryEvents(current, records[index]));
      return records[index];
    });
  }

  /**
   * Append events that change no record (the archive's `archive.lagging`, `archive.fenced`) to
   * the registry stream, under the registry mutex. Best effort: false when there is no stream
   * or the append failed.
   */
  async noteEvents(events: DomainEvent[]): Promise<boolean> {
    return this.mutex.runExclusive(async () => {
      if (!this.eventLog) return false;
      try {
        await this.eventLog.append(events);
        return true;
      } catch {
        return false;
      }
    });
  }

  /**
   * A follower (./follower.ts) takes a repository's record as the archive ships it: the record
   * at its index replaces the local one, and indexes below it that the registry lacks get purged
   * placeholders (indexes are positions). No write when the record is unchanged.
   */
  adopt(record: RepositoryRecord, quiet = false): Promise<void> {
    return this.mutex.runExclusive(async () => {
      const index = record.repository_index;
      const current = this.records[index];
      if (current && JSON.stringify(current) === JSON.stringify(record)) return;
      const records = this.records.slice();
      for (let i = records.length; i < index; i++) {
        records.push({ repository_index: i, repository_name: RESERVED_NAME, lifecycle_kind: LIFECYCLE_PURGED, namespace: '', policy_flags: 0, created_at_s: 0, updated_at_s: 0, tombstoned: true });
      }
      records[index] = record;
      // quiet: a read replica's record (serve --cluster), no event of this node's registry.
      await this.commit(records, quiet ? [] : registryEvents(current, record));
    });
  }

  /**
   * serve --cluster: the repository at `index` left this node (moved or failed over to another):
   * its record becomes a purged placeholder, as for an index another node owns.
   */
  giveUp(index: number, quiet = false): Promise<void> {
    return this.mutex.runExclusive(async () => {
      const current = this.records[index];
      if (!current || (current.repository_name === RESERVED_NAME && current.lifecycle_kind === LIFECYCLE_PURGED)) return;
      const records = this.records.slice();
      records[index] = { repository_index: index, repository_name: RESERVED_NAME, lifecycle_kind: LIFECYCLE_PURGED, namespace: '', policy_flags: 0, created_at_s: 0, updated_at_s: 0, tombstoned: true };
      await this.commit(records, quiet ? [] : registryEvents(current, records[index]));
    });
  }

  /** serve --cluster: a record adopted quietly (a repository arriving) is announced once it is this node's (best effort, as noteEvents). */
  announce(index: number): Promise<boolean> {
    const record = this.records[index];
    return record ? this.noteEvents(registryEvents(undefined, record)) : Promise.resolve(false);
  }

  /** registry.bin is the commit; the events follow it (storage-layout.md §18.1). */
  private async commit(records: RepositoryRecord[], events: DomainEvent[], afterWrite?: () => Promise<void>): Promise<void> {
    await writeFileDurable(this.layout.registryFile, encodeRegistry(records));
    crashPoint('registry:after-write');
    this.records = records;
    this.indexOwners();
    await afterWrite?.();
    if (!this.eventLog) return;
    try {
      if (this.eventsBehind) await this.reconcileLocked();
      else await this.eventLog.append(events);
    } catch {
      // The registry change is durable and answered; its event is appended by the next
      // reconciliation (the next registry write, or the next open).
      this.eventsBehind = true;
    }
  }

  isPurged(index: number): boolean {
    return this.records[index]?.lifecycle_kind === LIFECYCLE_PURGED;
  }
}
