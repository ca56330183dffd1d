// The archive's RPO for `npm run bench` (BENCH_ONLY=archive-rpo), against a real Swift s3api on
// loopback (test/swift.ts), under a steady workload of small commits (BENCH_RPO_RATE a second,
// from BENCH_RPO_CLIENTS clients) for BENCH_RPO_SECONDS:
// - async shipping (`serve --archive`, the default 1 s interval): the RPO sampled every 100 ms as
//   /healthz archive.lag_seconds (the age of the oldest acknowledged commit no stored manifest
//   covers) — p50, p99, max — and the commits uncovered (the writes at risk);
// - after a restart: kill -9 of the writer under the same load, a restart, and the RPO from the
//   restart on (the uncovered commits are caught up first) until BENCH_RPO_SECONDS later;
// - `--archive-sync`: commit latency (p50/p99) and throughput with BENCH_RPO_CLIENTS clients
//   committing as fast as they are answered, against async shipping with the same clients, and a
//   kill -9 loop (BENCH_RPO_KILLS) after which every acknowledged write is in a restore;
// - a store outage under the same steady load (BENCH_RPO_OUTAGES outages of
//   BENCH_RPO_OUTAGE_SECONDS each, the store hung — every Swift process stopped — and down —
//   nothing listening at its address): from the store's return, how long until a stored manifest
//   covers every commit acknowledged until then (the RPO after an outage is the outage plus
//   this), p50/p99 over the outages, and the lag sampled over the BENCH_RPO_SECONDS after each.
// BENCH_RPO_OUTAGE_MODES (hung, down; default both) picks the outages.
// BENCH_RPO_PHASES (comma-separated: async, restart, closed, kill, outage; default all) picks phases.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { Forwarder, startSwift, swiftMissing, type SwiftServer } from '../test/swift.js';
import { percentile, registerRepository, runTimed, startCairn, type ChildServer } from './proc.js';

type Fig = Record<string, unknown>;

const RATE = Number(process.env.BENCH_RPO_RATE ?? 20);
const SECONDS = Number(process.env.BENCH_RPO_SECONDS ?? 30);
const CLIENTS = Number(process.env.BENCH_RPO_CLIENTS ?? 8);
const KILLS = Number(process.env.BENCH_RPO_KILLS ?? 50);
const OUTAGES = Number(process.env.BENCH_RPO_OUTAGES ?? 4);
const OUTAGE_SECONDS = Number(process.env.BENCH_RPO_OUTAGE_SECONDS ?? 10);
const PHASES = new Set((process.env.BENCH_RPO_PHASES ?? 'async,restart,closed,kill,outage').split(',').map((p) => p.trim()));
const BUCKET = 'cairn-bench-rpo';

const r1 = (x: number) => Math.round(x * 10) / 10;

async function post(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function task(server: ChildServer, repo: number, n: number): Promise<string | null> {
  try {
    const r = await post(`${server.url}/v1/native/repository-authorities/${repo}/tasks`, { title: `rpo task ${n}`, intent: 'archive rpo bench' });
    return r.status === 200 || r.status === 201 ? (r.body.task.task_id as string) : null;
  } catch {
    return null;
  }
}

async function archiveStatus(server: ChildServer): Promise<any> {
  try {
    const res = await fetch(`${server.url}/healthz`);
    return ((await res.json()) as any).archive ?? null;
  } catch {
    return null;
  }
}

/** Commit at RATE a second until `until`; sample the lag every 100 ms meanwhile. */
async function steady(server: ChildServer, repo: number, ms: number): Promise<{ lags: number[]; uncovered: number[]; commits: number; timed: [number, number, number][] }> {
  const end = performance.now() + ms;
  let n = 0;
  const lags: number[] = [];
  const uncovered: number[] = [];
  /** [when (performance.now()), lag, uncovered] of each sample. */
  const timed: [number, number, number][] = [];
  const sampler = (async () => {
    while (performance.now() < end) {
      const a = await archiveStatus(server);
      if (a) { lags.push(a.lag_seconds); uncovered.push(a.uncovered_commits); timed.push([performance.now(), a.lag_seconds, a.uncovered_commits]); }
      await sleep(100);
    }
  })();
  const interval = 1000 / RATE;
  const start = performance.now();
  const inflight: Promise<unknown>[] = [];
  while (performance.now() < end) {
    inflight.push(task(server, repo, n++));
    const due = start + n * interval;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
  }
  await Promise.all(inflight);
  await sampler;
  return { lags: lags.sort((a, b) => a - b), uncovered: uncovered.sort((a, b) => a - b), commits: n, timed };
}

function lagFig(s: { lags: number[]; uncovered: number[]; commits: number }): Fig {
  return {
    commits: s.commits,
    samples: s.lags.length,
    rpo_p50_s: r1(percentile(s.lags, 50)),
    rpo_p99_s: r1(percentile(s.lags, 99)),
    rpo_max_s: r1(s.lags.at(-1) ?? 0),
    uncovered_p99: percentile(s.uncovered, 99),
    uncovered_max: s.uncovered.at(-1) ?? 0,
  };
}

/** CLIENTS clients committing back to back for `ms`: latency p50/p99 and commits a second. */
async function closedLoop(server: ChildServer, repo: number, ms: number): Promise<Fig> {
  const end = performance.now() + ms;
  const times: number[] = [];
  let n = 0;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      if (await task(server, repo, n++)) times.push(performance.now() - t0);
    }
  }));
  times.sort((a, b) => a - b);
  return { clients: CLIENTS, commits: times.length, commits_per_s: r1(times.length / (ms / 1000)), p50_ms: r1(percentile(times, 50)), p99_ms: r1(percentile(times, 99)) };
}

export async function stepArchiveRpo(o: { root: string; cli: string; log: (s: string) => void }): Promise<Fig> {
  const missing = swiftMissing();
  if (missing) return { skipped: missing };
  const fig: Fig = { rate_per_s: RATE, seconds: SECONDS, clients: CLIENTS };
  const swift: SwiftServer = await startSwift();
  const env = { ...process.env, AWS_ACCESS_KEY_ID: swift.accessKeyId, AWS_SECRET_ACCESS_KEY: swift.secretAccessKey, AWS_REGION: swift.region, AWS_ENDPOINT_URL_S3: swift.endpoint };
  const s3 = new S3Client({ region: swift.region, endpoint: swift.endpoint, forcePathStyle: true, credentials: { accessKeyId: swift.accessKeyId, secretAccessKey: swift.secretAccessKey } });
  const servers: ChildServer[] = [];
  const serve = async (data: string, prefix: string, extra: string[] = [], withEnv: NodeJS.ProcessEnv = env): Promise<ChildServer> => {
    const s = await startCairn(o.cli, data, { env: withEnv, serveArgs: ['--archive', `s3://${BUCKET}/${prefix}/`, ...extra] });
    servers.push(s);
    return s;
  };
  try {
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    if (PHASES.has('async') || PHASES.has('restart')) await asyncAndRestart(fig);
    if (PHASES.has('closed')) await closed(fig);
    if (PHASES.has('kill')) await killLoop(fig);
    if (PHASES.has('outage')) fig.outage = await outages(o, swift, serve, env);
    return fig;
  } finally {
    for (const s of servers) await s.stop().catch(() => {});
    s3.destroy();
    await swift.stop();
  }

  async function asyncAndRestart(fig: Fig): Promise<void> {
    // 1. Async shipping under a steady load.
    const data = path.join(o.root, 'rpo-async');
    await fsp.rm(data, { recursive: true, force: true });
    let writer = await serve(data, 'async');
    const repo = await registerRepository(writer.url, 'rpo');
    await steady(writer, repo, 3000); // warm up
    fig.async = lagFig(await steady(writer, repo, SECONDS * 1000));
    o.log(`archive-rpo: async ${JSON.stringify(fig.async)}`);
    // 2. kill -9 under load, a restart, and the RPO from the restart on.
    const load = steady(writer, repo, 2000);
    await sleep(1500);
    writer.proc.kill('SIGKILL');
    await load;
    writer = await serve(data, 'async');
    // From the restart: how long until a manifest covers every commit made before it (the backlog).
    const t0 = performance.now();
    let caughtUpMs = -1;
    let atRestart = -1;
    const watch = (async () => {
      for (;;) {
        const a = await archiveStatus(writer);
        const row = a?.repositories.find((x: any) => x.repository === repo);
        if (row && atRestart < 0) atRestart = Number(row.committed);
        if (row && atRestart >= 0 && Number(row.shipped_commit) >= atRestart) { caughtUpMs = performance.now() - t0; return; }
        if (performance.now() - t0 > 120_000) return;
        await sleep(50);
      }
    })();
    const after = await steady(writer, repo, SECONDS * 1000);
    await watch;
    // The first samples after a restart count from the newest manifest before the kill (the downtime included).
    fig.after_restart = { ...lagFig(after), caught_up_after_restart_ms: Math.round(caughtUpMs) };
    o.log(`archive-rpo: after restart ${JSON.stringify(fig.after_restart)}`);
    await writer.stop();
  }

  async function closed(fig: Fig): Promise<void> {
    // 3. Sync against async: closed-loop latency and throughput.
    const asyncData = path.join(o.root, 'rpo-closed-async');
    const syncData = path.join(o.root, 'rpo-closed-sync');
    for (const d of [asyncData, syncData]) await fsp.rm(d, { recursive: true, force: true });
    let s = await serve(asyncData, 'closed-async');
    let r = await registerRepository(s.url, 'closed');
    fig.closed_async = await closedLoop(s, r, Math.min(SECONDS, 15) * 1000);
    await s.stop();
    s = await serve(syncData, 'closed-sync', ['--archive-sync']);
    r = await registerRepository(s.url, 'closed');
    fig.closed_sync = await closedLoop(s, r, Math.min(SECONDS, 15) * 1000);
    o.log(`archive-rpo: closed loop async ${JSON.stringify(fig.closed_async)} sync ${JSON.stringify(fig.closed_sync)}`);
    await s.stop();
  }

  async function killLoop(fig: Fig): Promise<void> {
    // 4. Sync: kill -9 loop, then every acknowledged write in a restore.
    const killData = path.join(o.root, 'rpo-kill');
    await fsp.rm(killData, { recursive: true, force: true });
    const acked: string[] = [];
    let kr = -1;
    let n = 0;
    for (let round = 0; round < KILLS; round++) {
      const k = await serve(killData, 'kill', ['--archive-sync', '--archive-interval-ms', '200']);
      if (kr < 0) kr = await registerRepository(k.url, 'kill');
      const target = acked.length + 3 + (round % 7);
      let dead = false;
      const workers = Array.from({ length: 4 }, async () => {
        while (!dead) {
          const id = await task(k, kr, n++);
          if (id) acked.push(id);
          else if (dead) return;
        }
      });
      while (acked.length < target) await sleep(5);
      k.proc.kill('SIGKILL');
      dead = true;
      await Promise.all(workers);
    }
    const restored = path.join(o.root, 'rpo-restored');
    await fsp.rm(restored, { recursive: true, force: true });
    const res = await runTimed(process.execPath, [o.cli, 'restore', '--from', `s3://${BUCKET}/kill/`, '--all', '--data', restored, '--json'], { env, timeoutMs: 600_000 });
    if (res.code !== 0) throw new Error(`restore failed: ${res.stderr}`);
    const reader = await startCairn(o.cli, restored);
    servers.push(reader);
    let lost = 0;
    for (const id of acked) {
      const got = await fetch(`${reader.url}/v1/native/repository-authorities/${kr}/tasks/${id}`);
      await got.arrayBuffer();
      if (got.status !== 200) lost++;
    }
    fig.sync_kill_loop = { kills: KILLS, acknowledged: acked.length, lost };
    o.log(`archive-rpo: kill loop ${JSON.stringify(fig.sync_kill_loop)}`);
  }
}

/**
 * 5. Store outages under a steady load: the store hung (Swift's processes stopped) and down (the
 * writer's address to it refuses connections), OUTAGES times each. Per outage, from the store's
 * return: how long until the writer's /healthz says a stored manifest covers every commit made
 * until the return (its shipped_commit is set once the manifest's put succeeded).
 */
async function outages(o: { root: string; log: (s: string) => void }, swift: SwiftServer, serve: (data: string, prefix: string, extra?: string[], env?: NodeJS.ProcessEnv) => Promise<ChildServer>, env: NodeJS.ProcessEnv): Promise<Fig> {
  const out: Fig = { outages: OUTAGES, outage_seconds: OUTAGE_SECONDS };
  for (const mode of (process.env.BENCH_RPO_OUTAGE_MODES ?? 'hung,down').split(',').map((m) => m.trim()) as ('hung' | 'down')[]) {
    const forwarder = new Forwarder(await freeLoopbackPort(), Number(new URL(swift.endpoint).port));
    await forwarder.open();
    const data = path.join(o.root, `rpo-outage-${mode}`);
    await fsp.rm(data, { recursive: true, force: true });
    const writer = await serve(data, `outage-${mode}`, [], { ...env, AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${forwarder.port}` });
    const repo = await registerRepository(writer.url, 'outage');
    const row = async (): Promise<any> => (await archiveStatus(writer))?.repositories.find((x: any) => x.repository === repo);
    await steady(writer, repo, 3000); // warm up
    const catchUps: number[] = [];
    const after: { lags: number[]; uncovered: number[]; commits: number } = { lags: [], uncovered: [], commits: 0 };
    for (let i = 0; i < OUTAGES; i++) {
      const window = OUTAGE_SECONDS * 1000 + SECONDS * 1000;
      const load = steady(writer, repo, window + 1000);
      await sleep(500);
      if (mode === 'hung') await swift.pause(); else await forwarder.cut();
      await sleep(OUTAGE_SECONDS * 1000);
      const committed = Number((await row())?.committed ?? 0);
      if (mode === 'hung') await swift.resume(); else await forwarder.open();
      const back = performance.now();
      let covered = -1;
      while (performance.now() - back < 120_000) {
        const r = await row();
        if (r && Number(r.shipped_commit) >= committed) { covered = performance.now() - back; break; }
        await sleep(50);
      }
      catchUps.push(covered < 0 ? Infinity : covered);
      const s = await load;
      // The samples from the store's return on (the first ones still count the outage).
      const since = s.timed.filter(([at]) => at >= back);
      after.lags.push(...since.map(([, lag]) => lag));
      after.uncovered.push(...since.map(([, , u]) => u));
      after.commits += s.commits;
      o.log(`archive-rpo: outage ${mode} ${i + 1}: covered ${Math.round(covered)} ms after the store's return`);
    }
    await writer.stop();
    await forwarder.cut();
    catchUps.sort((a, b) => a - b);
    after.lags.sort((a, b) => a - b);
    after.uncovered.sort((a, b) => a - b);
    out[mode] = { covered_after_return_p50_ms: Math.round(percentile(catchUps, 50)), covered_after_return_p99_ms: Math.round(percentile(catchUps, 99)), covered_after_return_max_ms: Math.round(catchUps.at(-1)!), after_return: lagFig(after) };
    o.log(`archive-rpo: outage ${mode} ${JSON.stringify(out[mode])}`);
  }
  return out;
}

async function freeLoopbackPort(): Promise<number> {
  const net = await import('node:net');
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/** The report's rows. */
export function archiveRpoRows(fig: Fig | undefined): [string, string | null][] {
  if (!fig) return [];
  if (fig.skipped) return [['archive RPO', `skipped: ${fig.skipped}`]];
  const a = fig.async as any;
  const b = fig.after_restart as any;
  const ca = fig.closed_async as any;
  const cs = fig.closed_sync as any;
  const k = fig.sync_kill_loop as any;
  const o = fig.outage as any;
  const rows: [string, string | null][] = [];
  if (a) rows.push([`async RPO, ${fig.rate_per_s} commits/s for ${fig.seconds} s: p50 / p99 / max`, `${a.rpo_p50_s} / ${a.rpo_p99_s} / ${a.rpo_max_s} s (uncovered commits p99 ${a.uncovered_p99})`]);
  if (b) rows.push(['async RPO after kill -9 and a restart: p50 / p99 / max', `${b.rpo_p50_s} / ${b.rpo_p99_s} / ${b.rpo_max_s} s (the backlog covered ${b.caught_up_after_restart_ms} ms after the restart; the first samples count the downtime)`]);
  if (ca) rows.push([`commit latency, async shipping, ${ca.clients} clients: p50 / p99`, `${ca.p50_ms} / ${ca.p99_ms} ms, ${ca.commits_per_s} commits/s`]);
  if (cs) rows.push([`commit latency, --archive-sync, ${cs.clients} clients: p50 / p99`, `${cs.p50_ms} / ${cs.p99_ms} ms, ${cs.commits_per_s} commits/s`]);
  if (k) rows.push([`--archive-sync: kill -9 ×${k.kills}`, `${k.lost} of ${k.acknowledged} acknowledged writes lost`]);
  for (const mode of ['hung', 'down'] as const) {
    const m = o?.[mode];
    if (!m) continue;
    rows.push([`store ${mode} for ${o.outage_seconds} s under load (×${o.outages}): every commit covered after the store's return, p50 / p99 / max`, `${m.covered_after_return_p50_ms} / ${m.covered_after_return_p99_ms} / ${m.covered_after_return_max_ms} ms (RPO: the outage plus this)`]);
    rows.push([`store ${mode}: lag from the store's return on, p50 / p99 / max`, `${m.after_return.rpo_p50_s} / ${m.after_return.rpo_p99_s} / ${m.after_return.rpo_max_s} s`]);
  }
  return rows;
}
