// What retirement and restore need from the service that holds the registry and the open
// authorities. CairnService implements it; the two modules depend on this interface, not on
// the service module, so imports stay one-way.
import type { RepositoryRecord } from '../domain/repository.js';
import type { SealKey } from '../domain/sealing.js';
import type { Layout } from '../store/layout.js';
import type { Authority } from './authority.js';
import type { Log } from './logger.js';
import type { Registry } from './registry.js';
import type { ClusterPlacement } from './cluster.js';

export interface AuthorityHost {
  readonly layout: Layout;
  readonly registry: Registry;
  readonly log: Log;
  /** Paths a snapshot may hold (lib/domain/tree-size.ts); restore refuses a repository holding a larger one. */
  readonly maxSnapshotPaths: number;
  /** The server's seal key (DATA/seal.key): restore checks a staged authority's sealed drafts with it. */
  readonly sealKey: SealKey | null;
  /** serve --cluster: the placements (./cluster.ts); null on a single server. */
  readonly cluster: ClusterPlacement | null;
  record(index: number): RepositoryRecord;
  authority(index: number): Authority;
  lifecycleExclusive<T>(index: number, fn: () => Promise<T>): Promise<T>;
  closeAuthority(index: number): void;
  openRestored(index: number): Promise<void>;
}
