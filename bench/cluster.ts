// Several nodes for `npm run bench` (BENCH_ONLY=cluster; docs/operations.md "Several nodes"),
// one etcd (test/etcd.ts) for every phase; BENCH_CLUSTER_PHASES (comma-separated: hop, moves,
// failover; default all) picks them:
// - hop: the cost of the hop when a request reaches a node that does not own the repository.
//   Two nodes; a repository registered on n1; the same GET of one task sent to n1 (the owner)
//   and to n2 (which passes it to n1), in alternating blocks in the same run: sequential latency
//   (p50, p99) and throughput with 16 requests in flight.
// - moves: two nodes each shipping to its own prefix of a real Swift s3api on loopback
//   (test/swift.ts; `--archive-interval-ms 200`, `--cluster-ttl 3`); a repository moved between
//   them BENCH_CLUSTER_MOVES times (POST /v1/native/cluster/moves, sent to either node) while one
//   client creates tasks on its current owner: the server's pause (pause_ms: handoff to flip),
//   the client's longest gap between two acknowledged writes around each move, and every
//   acknowledged write looked up on the final owner (the lost count).
// - failover: a third node with a repository whose archive covers every commit, killed (-9);
//   the time until POST /v1/native/cluster/failovers to n1 answers 200 (retried every 250 ms:
//   409 while n3's membership lives out its TTL), and until a GET through n2 answers 200.
// Without Swift the moves and failover phases are skipped, saying why.
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { startEtcd, type EtcdServer } from '../test/etcd.js';
import { startSwift, swiftMissing, type SwiftServer } from '../test/swift.js';
import { registerRepository, startCairn, type ChildServer } from './proc.js';

type Fig = Record<string, unknown>;
type Opts = { root: string; cli: string; log: (s: string) => void };
const N = Number(process.env.BENCH_CLUSTER_REQUESTS || 2000);
const MOVES = Number(process.env.BENCH_CLUSTER_MOVES || 20);
const PHASES = new Set((process.env.BENCH_CLUSTER_PHASES ?? 'hop,moves,failover').split(',').map((p) => p.trim()));
const TTL_S = 3;
const BUCKET = 'cairn-bench-cluster';
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

const r1 = (x: number) => Math.round(x * 10) / 10;

async function get(url: string): Promise<void> {
  const res = await fetch(url);
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status}`);
}

async function post(url: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

/** Wait for `test` to hold (polled every `everyMs`), or fail after `ms` naming `what`. */
async function until(what: string, test: () => Promise<boolean> | boolean, ms = 60_000, everyMs = 20): Promise<void> {
  const end = performance.now() + ms;
  while (!(await test())) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

export async function stepCluster(o: Opts): Promise<Fig> {
  const fig: Fig = {};
  const etcd = await startEtcd();
  try {
    if (PHASES.has('hop')) Object.assign(fig, await hop(o, etcd));
    if (PHASES.has('moves') || PHASES.has('failover')) {
      const missing = swiftMissing();
      if (missing) fig.moves_skipped = missing;
      else await withArchives(o, etcd, fig);
    }
  } finally {
    await etcd.stop();
  }
  return fig;
}

async function hop(o: Opts, etcd: EtcdServer): Promise<Fig> {
  const prefix = etcd.leaseUrl('bench-cluster');
  const n1 = await startCairn(o.cli, path.join(o.root, 'cluster-n1'), { serveArgs: ['--cluster', prefix, '--node', 'n1'] });
  const n2 = await startCairn(o.cli, path.join(o.root, 'cluster-n2'), { serveArgs: ['--cluster', prefix, '--node', 'n2'] }).catch(async (err) => { await n1.stop(); throw err; });
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
      const until_ = performance.now() + 3000;
      await Promise.all(Array.from({ length: 16 }, async () => {
        while (performance.now() < until_) { await get(`${base}${path_}`); done++; }
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
  }
}

/** The moves and failover phases: Swift, the bucket, nodes shipping to it; every process stopped on the way out. */
async function withArchives(o: Opts, etcd: EtcdServer, fig: Fig): Promise<void> {
  const swift: SwiftServer = await startSwift();
  const nodes: ChildServer[] = [];
  try {
    const s3 = new S3Client({ region: swift.region, endpoint: swift.endpoint, forcePathStyle: true, credentials: { accessKeyId: swift.accessKeyId, secretAccessKey: swift.secretAccessKey } });
    try { await s3.send(new CreateBucketCommand({ Bucket: BUCKET })); } finally { s3.destroy(); }
    const env = { ...process.env, AWS_ACCESS_KEY_ID: swift.accessKeyId, AWS_SECRET_ACCESS_KEY: swift.secretAccessKey, AWS_REGION: swift.region, AWS_ENDPOINT_URL_S3: swift.endpoint };
    const prefix = etcd.leaseUrl('bench-cluster-moves');
    const start = async (name: string): Promise<ChildServer> => {
      const s = await startCairn(o.cli, path.join(o.root, `cluster-archive-${name}`), {
        env,
        serveArgs: ['--cluster', prefix, '--node', name, '--cluster-ttl', String(TTL_S), '--archive', `s3://${BUCKET}/${name}/`, '--archive-interval-ms', '200'],
      });
      nodes.push(s);
      return s;
    };
    const n1 = await start('n1');
    const n2 = await start('n2');
    if (PHASES.has('moves')) fig.moves = await moves(o, n1, n2);
    if (PHASES.has('failover')) fig.failover = await failover(o, n1, n2, await start('n3'));
  } finally {
    for (const s of nodes.reverse()) await s.stop();
    await swift.stop();
  }
}

/** Every task title in `repo` on `base`, page by page. */
async function taskTitles(base: string, repo: number): Promise<Set<string>> {
  const titles = new Set<string>();
  let cursor: string | null = null;
  do {
    const res = await fetch(`${base}${R(repo, `/tasks?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)}`);
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET tasks: HTTP ${res.status} ${text}`);
    const page = JSON.parse(text) as { tasks: { title: string }[]; next_cursor: string | null };
    for (const t of page.tasks) titles.add(t.title);
    cursor = page.next_cursor;
  } while (cursor);
  return titles;
}

async function moves(o: Opts, n1: ChildServer, n2: ChildServer): Promise<Fig> {
  const repo = await registerRepository(n1.url, 'bench-cluster-moves');
  const byName: Record<string, ChildServer> = { n1, n2 };
  let owner = n1;
  // One client writing to the current owner as fast as it is answered; a refusal (the owner holds
  // the repository's writes) is retried after 10 ms.
  const acked: { title: string; at: number }[] = [];
  let refused = 0;
  let going = true;
  let n = 0;
  const writer = (async () => {
    while (going) {
      const title = `m${++n}`;
      const r = await post(`${owner.url}${R(repo, '/tasks')}`, { title, intent: title }).catch(() => null);
      if (r?.status === 200) acked.push({ title, at: performance.now() });
      else { refused++; await sleep(10); }
    }
  })();
  const pauses: number[] = [];
  const gaps: number[] = [];
  const requests: number[] = [];
  const fetched: number[] = [];
  try {
    for (let i = 0; i < MOVES; i++) {
      const before = acked.length;
      await until('writes acknowledged between moves', () => acked.length >= before + 20);
      const to = owner === n1 ? 'n2' : 'n1';
      // The request goes to the owner for two moves, then to the target for two: any node forwards it.
      const via = i % 4 < 2 ? n1 : n2;
      const from = acked.length - 1;
      const t0 = performance.now();
      const r = await post(`${via.url}/v1/native/cluster/moves`, { repository_index: repo, to });
      const t1 = performance.now();
      if (r.status !== 200) throw new Error(`move ${i + 1} to ${to}: HTTP ${r.status} ${r.text}`);
      const result = JSON.parse(r.text) as { pause_ms: number; from: string; to: string; fetched_bytes: number };
      pauses.push(result.pause_ms);
      requests.push(t1 - t0);
      fetched.push(result.fetched_bytes);
      owner = byName[to]!;
      const after = acked.length;
      await until('writes acknowledged after a move', () => acked.length > after && acked.at(-1)!.at > t1);
      // The longest gap between two acknowledged writes from the last before the request to the first after its answer.
      let gap = 0;
      for (let k = Math.max(0, from); k + 1 < acked.length && acked[k]!.at <= t1; k++) gap = Math.max(gap, acked[k + 1]!.at - acked[k]!.at);
      gaps.push(gap);
      o.log(`cluster: move ${i + 1}/${MOVES} ${result.from} → ${result.to} (sent to ${via === n1 ? 'n1' : 'n2'}): pause ${r1(result.pause_ms)} ms, request ${Math.round(t1 - t0)} ms (${result.fetched_bytes} bytes fetched from the archive), longest gap between acknowledged writes ${Math.round(gap)} ms`);
    }
  } finally {
    going = false;
    await writer;
  }
  const held = await taskTitles(owner.url, repo);
  const lost = acked.filter((a) => !held.has(a.title)).length;
  const fig: Fig = {
    moves: MOVES,
    pause_p50_ms: r1(pct(pauses, 50)),
    pause_p99_ms: r1(pct(pauses, 99)),
    pause_max_ms: r1(Math.max(...pauses)),
    gap_p50_ms: Math.round(pct(gaps, 50)),
    gap_p99_ms: Math.round(pct(gaps, 99)),
    request_p50_ms: Math.round(pct(requests, 50)),
    request_max_ms: Math.round(Math.max(...requests)),
    fetched_bytes_max: Math.max(...fetched),
    acknowledged: acked.length,
    refused_or_failed: refused,
    lost,
  };
  o.log(`cluster: ${MOVES} moves under writes: pause p50 ${fig.pause_p50_ms} / p99 ${fig.pause_p99_ms} / max ${fig.pause_max_ms} ms; longest gap between acknowledged writes p50 ${fig.gap_p50_ms} / p99 ${fig.gap_p99_ms} ms; ${lost} of ${acked.length} acknowledged writes lost`);
  return fig;
}

async function failover(o: Opts, n1: ChildServer, n2: ChildServer, n3: ChildServer): Promise<Fig> {
  const repo = await registerRepository(n3.url, 'bench-cluster-failover');
  const titles = Array.from({ length: 5 }, (_, i) => `f${i}`);
  for (const title of titles) {
    const r = await post(`${n3.url}${R(repo, '/tasks')}`, { title, intent: title });
    if (r.status !== 200) throw new Error(`task on n3: HTTP ${r.status} ${r.text}`);
  }
  // Covered: no commit uncovered, and a stored manifest of this repository at its last commit
  // (uncovered_commits alone reads 0 before the shipper has seen a new repository).
  await until('n3\'s archive covers its commits', async () => {
    const res = await fetch(`${n3.url}/healthz`);
    const body = (await res.json()) as { archive?: { uncovered_commits: number; repositories: { repository: number; shipped_commit: string; committed: string }[] } };
    const row = body.archive?.repositories.find((x) => x.repository === repo);
    if (process.env.BENCH_CLUSTER_DEBUG) o.log(`healthz archive: ${JSON.stringify(body.archive)}`);
    return body.archive?.uncovered_commits === 0 && !!row && row.shipped_commit !== '0' && row.shipped_commit === row.committed;
  }, 60_000, 100);
  const exited = new Promise((resolve) => n3.proc.once('exit', resolve));
  const killed = performance.now();
  n3.proc.kill('SIGKILL');
  await exited;
  let early = 0;
  let last = '';
  await until('the failover to answer 200', async () => {
    const r = await post(`${n1.url}/v1/native/cluster/failovers`, { repository_index: repo }).catch((err) => ({ status: 0, text: String(err) }));
    if (r.status === 200) return true;
    early++;
    last = `HTTP ${r.status} ${r.text}`;
    return false;
  }, 60_000, 250).catch((err) => { throw new Error(`${(err as Error).message}; last answer ${last}`); });
  const answered = performance.now();
  await until('a GET through n2 to answer 200', async () => {
    const res = await fetch(`${n2.url}${R(repo)}`).catch(() => null);
    await res?.arrayBuffer();
    return res?.status === 200;
  }, 60_000, 20);
  const served = performance.now();
  const held = await taskTitles(n2.url, repo);
  const fig: Fig = {
    ttl_s: TTL_S,
    kill_to_failover_ms: Math.round(answered - killed),
    kill_to_served_ms: Math.round(served - killed),
    refused_before: early,
    tasks_kept: `${titles.filter((t) => held.has(t)).length}/${titles.length}`,
  };
  o.log(`cluster: failover after kill -9 (TTL ${TTL_S} s): answered ${fig.kill_to_failover_ms} ms, a GET through another node served ${fig.kill_to_served_ms} ms after the kill (${early} refusals before; tasks kept ${fig.tasks_kept})`);
  return fig;
}

/** The report's rows for the moves and failover phases. */
export function clusterMoveRows(fig: Fig | undefined): [string, string | null][] {
  if (!fig) return [];
  if (fig.moves_skipped) return [['moves and failover', `skipped: ${fig.moves_skipped}`]];
  const m = fig.moves as Fig | undefined;
  const f = fig.failover as Fig | undefined;
  const rows: [string, string | null][] = [];
  if (m) {
    rows.push([`move under writes ×${m.moves}: pause (server, handoff to flip) p50 / p99 / max`, `${m.pause_p50_ms} / ${m.pause_p99_ms} / ${m.pause_max_ms} ms`]);
    rows.push(['move: longest gap between acknowledged writes (client) p50 / p99', `${m.gap_p50_ms} / ${m.gap_p99_ms} ms`]);
    rows.push(['move: the whole request (copy from the archive, handoff, flip) p50 / max', `${m.request_p50_ms} / ${m.request_max_ms} ms`]);
    rows.push(['move: acknowledged writes lost', `${m.lost} of ${m.acknowledged}`]);
  }
  if (f) rows.push([`failover after kill -9 (TTL ${f.ttl_s} s): kill → failover answered / → served through another node`, `${f.kill_to_failover_ms} / ${f.kill_to_served_ms} ms (tasks kept ${f.tasks_kept})`]);
  return rows;
}
