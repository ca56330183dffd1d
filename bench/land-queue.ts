// Land-queue figures for `npm run bench` (BENCH_ONLY=queue): how many changes per minute land
// when every land is tested on the tree it creates, with a fixed CI duration. The same N
// changes (each edits its own file, gates passing) are landed three ways against a real server:
//   - serially, one by one: land a change (merge), then run CI on the new head and wait for it
//     before the next land — what a careful team does without a queue;
//   - through the land queue at depth 1 (one speculation at a time);
//   - through the land queue at depth 4 (four speculations tested at once).
// CI is played by this process: it claims repo.ci / patchset.ci jobs as soon as they are queued,
// runs them concurrently (a CI farm), and completes each after exactly CI_MS with a pass.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { registerRepository, startCairn, type ChildServer } from './proc.js';
import { push } from '../lib/client/transfer.js';

type Fig = Record<string, unknown>;
const CHANGES = Number(process.env.BENCH_QUEUE_CHANGES || 12);
const CI_MS = Number(process.env.BENCH_QUEUE_CI_MS || 2000);
const RUNTIME = 'svc.runner.native-job.v3';
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const RESULT = { contract: 'svc.runner.native-result.v1', status: 'succeeded', tests_status: 'pass', suite_result_count: 1, suite_results: [{ suite_id: 'unit', status: 'pass', blocking: true }] };

export async function call(url: string, method: string, p: string, body?: unknown): Promise<any> {
  const res = await fetch(url + p, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${p}: HTTP ${res.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

/** A CI farm: claims every job of the repository as soon as it is queued and passes it after `ciMs` (bench/stack.ts uses it too). */
export function ciFarm(url: string, repo: number, ciMs = CI_MS): { stop(): Promise<void>; jobs(): number } {
  let stopped = false;
  let ran = 0;
  const inFlight = new Set<Promise<void>>();
  const loop = (async () => {
    while (!stopped) {
      const claim = await call(url, 'POST', '/v1/native/worker-jobs:claim', { accepted_job_kinds: [7, 11], repository_indexes: [repo], accepted_runtime_contracts: [RUNTIME] });
      const c = claim.claimed_job === null ? null : (claim.claimed_job ?? claim);
      if (!c || c.worker_job_index === undefined) {
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      const run = (async () => {
        await new Promise((r) => setTimeout(r, ciMs));
        await call(url, 'POST', R(repo, `/worker-jobs/${c.worker_job_index}:complete`), { attempt_count: c.attempt_count, lease_token: c.lease_token, detail: { job_kind: c.job_kind, result: RESULT } });
        ran++;
      })();
      inFlight.add(run);
      void run.finally(() => inFlight.delete(run));
    }
  })();
  return {
    jobs: () => ran,
    async stop() {
      stopped = true;
      await loop;
      await Promise.all(inFlight);
    },
  };
}

interface Repo { url: string; repo: number; refs: string[]; patchsets: string[] }

/** A repository with a base on main and CHANGES changes, each editing its own file, attested and approved. */
async function setup(server: ChildServer, dir: string, name: string): Promise<Repo> {
  const url = server.url;
  const repo = await registerRepository(url, name);
  const files: Record<string, string> = {};
  for (let i = 0; i < CHANGES; i++) files[`f${i}.txt`] = `${i}\n`;
  const write = (over: Record<string, string>) => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    for (const [f, v] of Object.entries({ ...files, ...over })) writeFileSync(path.join(dir, f), v);
  };
  write({});
  const base = (await push({ server: url, repo, line: 'main', dir, moveLine: true, progress: false })).snapshot_id;
  const refs: string[] = [];
  const patchsets: string[] = [];
  for (let i = 0; i < CHANGES; i++) {
    write({ [`f${i}.txt`]: `changed ${i}\n` });
    const revision = (await push({ server: url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
    const t = (await call(url, 'POST', R(repo, '/tasks'), { title: `T${i}`, intent: 'bench' })).task;
    const c = (await call(url, 'POST', R(repo, '/changes'), { task_id: t.task_id, title: `C${i}`, base_line: 'main' })).change;
    const p = (await call(url, 'POST', R(repo, `/changes/${c.change_id}/patchsets`), { base_snapshot_id: base, revision_snapshot_id: revision, summary: 's', author_mode: 'human_with_ai_assist', author: 'carol' })).patchset;
    await call(url, 'PUT', R(repo, `/patchsets/${p.patchset_id}/attestation`), { verification_state: 'pass' });
    await call(url, 'POST', R(repo, `/changes/${c.change_id}/reviews`), { patchset_id: p.patchset_id, reviewer: 'alice', action: 'approve' });
    refs.push(c.change_ref);
    patchsets.push(p.patchset_id);
  }
  return { url, repo, refs, patchsets };
}

const perMinute = (n: number, ms: number) => Math.round((n / (ms / 60_000)) * 10) / 10;

async function viaQueue(o: { root: string; cli: string; log: (s: string) => void }, depth: number): Promise<Fig> {
  const server = await startCairn(o.cli, path.join(o.root, `queue-data-${depth}`), { serveArgs: ['--queue-depth', String(depth), '--queue-retries', '0'] });
  try {
    const r = await setup(server, path.join(o.root, `queue-tree-${depth}`), `queue-${depth}`);
    const farm = ciFarm(r.url, r.repo);
    const t0 = performance.now();
    for (const ref of r.refs) await call(r.url, 'POST', R(r.repo, '/land-queue'), { change_ref: ref, mode: 'merge' });
    for (;;) {
      const q = await call(r.url, 'GET', R(r.repo, '/land-queue'));
      if (q.count === 0) break;
      await new Promise((res) => setTimeout(res, 20));
    }
    const ms = performance.now() - t0;
    await farm.stop();
    const recent = (await call(r.url, 'GET', R(r.repo, '/land-queue'))).recent as { state: string }[];
    const landed = recent.filter((e) => e.state === 'landed').length;
    o.log(`queue depth ${depth}: ${landed} landed in ${Math.round(ms)} ms`);
    return { depth, changes: CHANGES, landed, ms: Math.round(ms), landed_per_minute: perMinute(landed, ms), ci_runs: farm.jobs() };
  } finally {
    await server.stop();
  }
}

async function serial(o: { root: string; cli: string; log: (s: string) => void }): Promise<Fig> {
  const server = await startCairn(o.cli, path.join(o.root, 'queue-data-serial'));
  try {
    const r = await setup(server, path.join(o.root, 'queue-tree-serial'), 'queue-serial');
    const farm = ciFarm(r.url, r.repo);
    // Each patchset's own CI first, all at once (not timed: the queue needs none).
    const jobs = await Promise.all(r.patchsets.map((ps) => call(r.url, 'POST', R(r.repo, `/patchsets/${ps}:runCi`), {})));
    for (const j of jobs) {
      for (;;) {
        const job = await call(r.url, 'GET', R(r.repo, `/worker-jobs/${j.job.worker_job_index}`));
        if ((job.job ?? job).state === 'succeeded') break;
        await new Promise((res) => setTimeout(res, 20));
      }
    }
    const t0 = performance.now();
    let landed = 0;
    for (const ref of r.refs) {
      const land = await call(r.url, 'POST', R(r.repo, `/changes/${ref}:submit`), { mode: 'merge' });
      landed++;
      // CI on the new head, and wait for it before the next land.
      const snap = (land.landed_snapshot_id ?? land.land?.landed_snapshot_id) as string;
      const run = await call(r.url, 'POST', `${R(r.repo)}:runCi`, { snapshot_id: snap });
      const index = (run.job ?? run).worker_job_index;
      for (;;) {
        const job = await call(r.url, 'GET', R(r.repo, `/worker-jobs/${index}`));
        if ((job.job ?? job).state === 'succeeded') break;
        await new Promise((res) => setTimeout(res, 20));
      }
    }
    const ms = performance.now() - t0;
    await farm.stop();
    o.log(`serial: ${landed} landed in ${Math.round(ms)} ms`);
    return { changes: CHANGES, landed, ms: Math.round(ms), landed_per_minute: perMinute(landed, ms) };
  } finally {
    await server.stop();
  }
}

export async function stepLandQueue(o: { root: string; cli: string; log: (s: string) => void }): Promise<Fig> {
  const fig: Fig = { changes: CHANGES, ci_ms: CI_MS };
  fig.serial = await serial(o);
  fig.depth_1 = await viaQueue(o, 1);
  fig.depth_4 = await viaQueue(o, 4);
  const s = (fig.serial as Fig).landed_per_minute as number;
  fig.depth_1_vs_serial = Math.round((((fig.depth_1 as Fig).landed_per_minute as number) / s) * 100) / 100;
  fig.depth_4_vs_serial = Math.round((((fig.depth_4 as Fig).landed_per_minute as number) / s) * 100) / 100;
  return fig;
}

export function landQueueRows(fig: Fig | undefined): [string, string | null][] {
  if (!fig) return [];
  const row = (f: Fig | undefined) => (f ? `${f.landed_per_minute} changes/min (${f.landed}/${f.changes} in ${f.ms} ms${f.ci_runs !== undefined ? `, ${f.ci_runs} CI runs` : ''})` : null);
  return [
    [`land one by one, CI ${fig.ci_ms} ms on each new head`, row(fig.serial as Fig)],
    ['land queue, depth 1', `${row(fig.depth_1 as Fig)}; ×${fig.depth_1_vs_serial} serial`],
    ['land queue, depth 4', `${row(fig.depth_4 as Fig)}; ×${fig.depth_4_vs_serial} serial`],
  ];
}
