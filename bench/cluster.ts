// Several nodes for `npm run bench` (BENCH_ONLY=cluster; docs/operations.md "Several nodes"): the
// cost of the hop when a request reaches a node that does not own the repository. One etcd
// (test/etcd.ts) and two nodes; a repository registered on n1; the same GET of one task sent
// to n1 (the owner) and to n2 (which passes it to n1), in alternating blocks in the same run:
// sequential latency (p50, p99) and throughput with 16 requests in flight.
import path from 'node:path';
import { startEtcd } from '../test/etcd.js';
import { registerRepository, startCairn } from './proc.js';

type Fig = Record<string, unknown>;
const N = Number(process.env.BENCH_CLUSTER_REQUESTS || 2000);
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

async function get(url: string): Promise<void> {
  const res = await fetch(url);
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status}`);
}

export async function stepCluster(o: { root: string; cli: string; log: (s: string) => void }): Promise<Fig> {
  const etcd = await startEtcd();
  const prefix = etcd.leaseUrl('bench-cluster');
  const n1 = await startCairn(o.cli, path.join(o.root, 'cluster-n1'), { serveArgs: ['--cluster', prefix, '--node', 'n1'] });
  const n2 = await startCairn(o.cli, path.join(o.root, 'cluster-n2'), { serveArgs: ['--cluster', prefix, '--node', 'n2'] });
  try {
    const repo = await registerRepository(n1.url, 'bench-cluster');
    const made = await fetch(`${n1.url}${R(repo, '/tasks')}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: 't', intent: 'one task' }) });
    const task = ((await made.json()) as { task: { task_id: string } }).task.task_id;
    const path_ = R(repo, `/tasks/${task}`);
    const lat: Record<'owner' | 'proxied', number[]> = { owner: [], proxied: [] };
    // Warm both (connections, the JIT), then alternate blocks of 100.
    for (let i = 0; i < 200; i++) { await get(`${n1.url}${path_}`); await get(`${n2.url}${path_}`); }
    for (let b = 0; b < N / 100; b++) {
      for (const [who, base] of [['owner', n1.url], ['proxied', n2.url]] as const) {
        for (let i = 0; i < 100; i++) {
          const t = performance.now();
          await get(`${base}${path_}`);
          lat[who].push(performance.now() - t);
        }
      }
    }
    const rps = async (base: string): Promise<number> => {
      let done = 0;
      const until = performance.now() + 3000;
      await Promise.all(Array.from({ length: 16 }, async () => {
        while (performance.now() < until) { await get(`${base}${path_}`); done++; }
      }));
      return done / 3;
    };
    const ownerRps = await rps(n1.url);
    const proxiedRps = await rps(n2.url);
    const fig = {
      requests_each: N,
      owner_p50_ms: +pct(lat.owner, 50).toFixed(3),
      owner_p99_ms: +pct(lat.owner, 99).toFixed(3),
      proxied_p50_ms: +pct(lat.proxied, 50).toFixed(3),
      proxied_p99_ms: +pct(lat.proxied, 99).toFixed(3),
      ratio_p50: +(pct(lat.proxied, 50) / pct(lat.owner, 50)).toFixed(2),
      owner_rps_16: Math.round(ownerRps),
      proxied_rps_16: Math.round(proxiedRps),
      ratio_rps: +(proxiedRps / ownerRps).toFixed(2),
    };
    o.log(`cluster: GET of a task: owner p50 ${fig.owner_p50_ms} ms, through another node ${fig.proxied_p50_ms} ms (×${fig.ratio_p50}); 16 in flight: ${fig.owner_rps_16} vs ${fig.proxied_rps_16} req/s (×${fig.ratio_rps})`);
    return fig;
  } finally {
    await n2.stop();
    await n1.stop();
    await etcd.stop();
  }
}
