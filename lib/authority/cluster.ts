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
