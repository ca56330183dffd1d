// What the service needs of the cluster (serve --cluster; lib/lease/etcd-cluster.ts keeps it in
// etcd): this node's name, who owns each repository, the live nodes, and the allocation of a
// new repository's index. The HTTP layer routes by it (lib/http/cluster-proxy.ts).
import type { Allocation, ClusterNode } from '../lease/etcd-cluster.js';

export interface ClusterPlacement {
  readonly node: string;
  ownerKnown(index: number): string | null;
  owner(index: number): Promise<string | null>;
  nodes(): Promise<Map<string, ClusterNode>>;
  nodeKnown(name: string): ClusterNode | null;
  placements(): Map<number, string>;
  allocate(namespace: string, replacing?: number): Promise<Allocation>;
  /** Why this node refuses writes now (its membership lapsed), or null. */
  refusal(): string | null;
}

/** What each commit of a cluster node's repository passes (CairnService.setClusterGate). */
export interface ClusterGate {
  /** Before a transaction runs: throws to refuse it (the repository handed over, the membership lapsed). */
  admit(index: number): void;
  /** Before its callers are answered: throws when the membership lapsed meanwhile (the commit stays). */
  acknowledge(index: number, generation: number): void;
}

/** A registration whose namespace a repository of another node owns: the HTTP layer passes it there. */
export class OwnedElsewhere extends Error {
  constructor(readonly node: string, readonly index: number) {
    super(`repository ${index} is owned by node ${node}`);
  }
}

/** A request another node must answer (a move or failover to it): the HTTP layer passes it there. */
export class ForNode extends Error {
  constructor(readonly node: string) {
    super(`this is node ${node}'s to answer`);
  }
}

export interface MoveResult {
  contract: 'svc.server.cluster-move.v1';
  repository_index: number;
  kind: 'move' | 'failover';
  from: string;
  to: string;
  /** The commit the repository is at on its new node. */
  commit: string;
  /** The archive manifest it was taken from. */
  manifest: string;
  /** When that manifest was captured (a failover loses what the old owner committed after it). */
  manifest_captured_at: string;
  /** A move: how long the repository's writes were held (handoff to flip). Null for a failover. */
  pause_ms: number | null;
  /** Objects and bytes fetched from the archive, the copy before the handoff included. */
  fetched_objects: number;
  fetched_bytes: number;
}

export interface ReplicaStatus {
  repository_index: number;
  owner: string;
  commit: string;
  manifest: string;
  /** When the manifest applied last was captured by the owner. */
  captured_at: string;
  applied_at: string;
}

/** What the HTTP layer asks of a node's moves (./cluster-moves.ts). */
export interface ClusterMovesApi {
  /** While repository `index` is being handed to another node: resolves when the handoff ends. */
  held(index: number): Promise<void> | null;
  move(index: number, peer: Record<string, string>): Promise<MoveResult>;
  failover(index: number): Promise<MoveResult>;
  handoff(index: number, token: string): Promise<{ commit: string; manifest: string }>;
}

/** What the service and the HTTP layer ask of a node's read replicas (./replicas.ts). */
export interface ReadReplicasApi {
  isReplica(index: number): boolean;
  /** Whether a read of `index` needing commit `min` (0: any) is served here. */
  serves(index: number, min: number): boolean;
  status(): ReplicaStatus[];
  /** A move or failover of `index` to this node is starting: the replica's files go to `incoming`. */
  suspend(index: number, incoming: string, from: string): Promise<void>;
  resume(index: number): void;
}
