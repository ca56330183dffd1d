// "Workflow at scale" figures for `npm run bench` (BENCH_ONLY=scale): one repository holding
// 10k, 100k and 1M task+change pairs, and a data directory of 1,000 repositories of 100 pairs.
//
// Populating goes through the store in a child process (./workflow-populate.ts: the
// WorkflowBook's own staging code, a few hundred pairs per transaction). Everything measured
// runs against a real `cairn serve` child on that data directory:
//   - open: process start → /healthz 200, and → the first answered repository request;
//   - memory: RSS after the repository answered, minus the RSS of a server whose one repository
//     is empty (same steps), divided by the pairs;
//   - create rate: task+change pairs over HTTP from 16 concurrent keep-alive clients (this is
//     also the HTTP sample: the same records, written by the handlers);
//   - latency: p50/p99 over BENCH_SCALE_REQUESTS sequential keep-alive requests per route.
// Many repositories: open time, the first answer from one repository, and the time until every
// repository has answered one request (sequentially, after ready).
//
// Environment:
//   BENCH_SCALE_PAIRS     (default 10000,100000,1000000)  repository sizes, comma separated
//   BENCH_SCALE_REPOS     (default 1000)  repositories of 100 pairs for the open figure; 0 skips
//   BENCH_SCALE_REQUESTS  (default 200)   requests per route for the latency figures
//   BENCH_SCALE_HTTP_PAIRS (default 1600) pairs created over HTTP by 16 clients
//   BENCH_SCALE_CLI       the cairn entry to serve with (default: this checkout's bin/cairn.js),
//                         e.g. an older build's, to compare open figures before/after a change
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { encodeCursor } from '../lib/domain/paging.js';
import { children, freePort, percentile, procMemory, runOk, stopChild } from './proc.js';
const HERE = path.dirname(fileURLToPath(import.meta.url));
const POPULATE = path.join(HERE, 'workflow-populate.js');
const list = (v, fallback) => (v ? v.split(',').map((s) => Number(s.trim())).filter((n) => Number.isInteger(n) && n > 0) : fallback);
const SIZES = list(process.env.BENCH_SCALE_PAIRS, [10_000, 100_000, 1_000_000]);
const REPOS = Number(process.env.BENCH_SCALE_REPOS ?? 1000);
const REQUESTS = Number(process.env.BENCH_SCALE_REQUESTS || 200);
const HTTP_PAIRS = Number(process.env.BENCH_SCALE_HTTP_PAIRS || 1600);
const CLIENTS = 16;
const R = (repo) => `/v1/native/repository-authorities/${repo}`;
const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
function request(url, method, body) {
    return new Promise((resolve, reject) => {
        const text = body === undefined ? undefined : JSON.stringify(body);
        const headers = text === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) };
        const req = http.request(url, { method, agent, headers }, (res) => {
            let out = '';
            res.setEncoding('utf8');
            res.on('data', (d) => (out += d));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text: out }));
            res.on('error', reject);
        });
        req.on('error', reject);
        req.end(text);
    });
}
async function ok(url, method, body) {
    const res = await request(url, method, body);
    if (res.status !== 200 && res.status !== 201)
        throw new Error(`${method} ${url}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
    return JSON.parse(res.text);
}
/** A `cairn serve` child, timed from spawn to /healthz 200 (polled every 5 ms). */
async function serveTimed(cli, dataDir) {
    const port = await freePort();
    const t0 = performance.now();
    const proc = spawn(process.execPath, [cli, 'serve', '--bind', `127.0.0.1:${port}`, '--data', dataDir, '--log-level', 'silent', '--no-ui'], { stdio: ['ignore', 'ignore', 'pipe'] });
    children.add(proc);
    proc.once('exit', () => children.delete(proc));
    let out = '';
    proc.stderr.on('data', (d) => { if (out.length < 65536)
        out += d; });
    const url = `http://127.0.0.1:${port}`;
    const stop = () => stopChild(proc);
    const server = { url, pid: proc.pid, proc, output: () => out, stop };
    const deadline = t0 + 30 * 60_000;
    while (performance.now() < deadline) {
        if (proc.exitCode !== null)
            throw new Error(`cairn serve exited early (code ${proc.exitCode}): ${out.trim()}`);
        try {
            const res = await request(`${url}/healthz`, 'GET');
            if (res.status === 200)
                return { server, healthzMs: performance.now() - t0, t0 };
        }
        catch { /* not listening yet */ }
        await sleep(5);
    }
    proc.kill('SIGKILL');
    throw new Error('cairn serve never became ready');
}
const rssMiB = (pid) => (procMemory(pid)?.rssKiB ?? NaN) / 1024;
const r1 = (n) => (Number.isFinite(n) ? Math.round(n * 10) / 10 : null);
const r2 = (n) => (Number.isFinite(n) ? Math.round(n * 100) / 100 : null);
/** p50/p99 (ms) of `n` sequential GETs of `pathOf(i)`. */
async function latency(url, n, pathOf) {
    const ms = [];
    for (let i = 0; i < n; i++) {
        const t = performance.now();
        const res = await request(url + pathOf(i), 'GET');
        ms.push(performance.now() - t);
        if (res.status !== 200)
            throw new Error(`GET ${pathOf(i)}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
    }
    ms.sort((a, b) => a - b);
    return { p50_ms: r2(percentile(ms, 50)), p99_ms: r2(percentile(ms, 99)), max_ms: r2(ms.at(-1) ?? NaN) };
}
async function populate(dataDir, repositories, pairs, log) {
    log(`scale: populating ${repositories} × ${pairs} pairs`);
    const run = await runOk(process.execPath, ['--max-old-space-size=16384', POPULATE, dataDir, String(repositories), String(pairs)], { timeoutMs: 3 * 3600_000 });
    return JSON.parse(run.stdout).ms;
}
/** Pairs created by CLIENTS keep-alive clients, each a task then its change; pairs/s. */
async function createRate(url, repo, total) {
    let next = 0;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
        while (next < total) {
            const k = next++;
            const task = (await ok(`${url}${R(repo)}/tasks`, 'POST', { title: `HTTP task ${k}`, intent: 'Created over HTTP by the scale bench.' })).task;
            await ok(`${url}${R(repo)}/changes`, 'POST', { task_id: task.task_id, title: `HTTP change ${k}`, base_line: 'main' });
        }
    }));
    const s = (performance.now() - t0) / 1000;
    return { pairs: total, clients: CLIENTS, seconds: r2(s), pairs_per_s: r1(total / s) };
}
/** The RSS of a server whose one repository is empty, after the same first request. */
async function emptyBaseline(root, cli, log) {
    const dataDir = path.join(root, 'scale-empty');
    await populate(dataDir, 1, 0, log);
    const { server } = await serveTimed(cli, dataDir);
    try {
        await ok(`${server.url}${R(0)}/tasks?limit=1`, 'GET');
        await sleep(1000);
        return rssMiB(server.pid);
    }
    finally {
        await server.stop();
    }
}
async function oneSize(root, cli, pairs, emptyMiB, log) {
    const dataDir = path.join(root, `scale-${pairs}`);
    const fig = { pairs };
    fig.populate_ms = await populate(dataDir, 1, pairs, log);
    log(`scale: ${pairs} pairs populated in ${(fig.populate_ms / 1000).toFixed(1)} s; serving`);
    const { server, healthzMs, t0 } = await serveTimed(cli, dataDir);
    try {
        const url = server.url;
        await ok(`${url}${R(0)}/tasks/task-1`, 'GET');
        fig.open_to_healthz_ms = Math.round(healthzMs);
        fig.open_to_first_answer_ms = Math.round(performance.now() - t0);
        await sleep(1000);
        const rss = rssMiB(server.pid);
        fig.rss_mib = r1(rss);
        fig.rss_empty_repository_mib = r1(emptyMiB);
        fig.rss_bytes_per_pair = Math.round(((rss - emptyMiB) * 1024 * 1024) / pairs);
        // Pairs k = 1..pairs are task-k and its change task-k.change-k (populated in lockstep).
        let seed = 12345;
        const pick = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % pairs) + 1;
        const lat = {};
        lat.task_get = await latency(url, REQUESTS, () => `${R(0)}/tasks/task-${pick()}`);
        lat.change_get = await latency(url, REQUESTS, () => { const k = pick(); return `${R(0)}/changes/task-${k}.change-${k}`; });
        lat.tasks_first_page = await latency(url, REQUESTS, () => `${R(0)}/tasks?limit=100`);
        // The page that the walk would reach halfway down (newest first, keyed by task sequence).
        const deep = encodeCursor({ list: 'tasks', repository: 0, filter: {} }, Math.ceil(pairs / 2));
        lat.tasks_deep_page = await latency(url, REQUESTS, () => `${R(0)}/tasks?limit=100&cursor=${deep}`);
        lat.queue_summary = await latency(url, REQUESTS, () => `${R(0)}/read/queue-summary`);
        lat.task_queue_page = await latency(url, REQUESTS, () => `${R(0)}/read/task-queue?limit=100`);
        lat.reviewer_inbox_page = await latency(url, REQUESTS, () => `${R(0)}/read/reviewer-inbox?limit=100`);
        lat.task_audit = await latency(url, REQUESTS, () => `${R(0)}/read/tasks/task-${pick()}/audit`);
        fig.latency = lat;
        log(`scale: ${pairs} pairs: creating ${HTTP_PAIRS} pairs over HTTP`);
        fig.http_create = await createRate(url, 0, HTTP_PAIRS);
        fig.rss_after_mib = r1(rssMiB(server.pid));
        fig.vm_hwm_mib = r1((procMemory(server.pid)?.hwmKiB ?? NaN) / 1024);
    }
    finally {
        const code = await server.stop();
        if (code !== 0 && code !== null)
            throw new Error(`cairn serve exited ${code}: ${server.output().trim()}`);
    }
    return fig;
}
async function manyRepositories(root, cli, log) {
    const dataDir = path.join(root, `scale-repos-${REPOS}`);
    const fig = { repositories: REPOS, pairs_per_repository: 100 };
    fig.populate_ms = await populate(dataDir, REPOS, 100, log);
    log(`scale: ${REPOS} repositories populated in ${(fig.populate_ms / 1000).toFixed(1)} s; serving`);
    const { server, healthzMs, t0 } = await serveTimed(cli, dataDir);
    try {
        fig.open_to_healthz_ms = Math.round(healthzMs);
        fig.rss_at_healthz_mib = r1(rssMiB(server.pid));
        await ok(`${server.url}${R(REPOS - 1)}/tasks/task-1`, 'GET');
        fig.open_to_first_answer_ms = Math.round(performance.now() - t0);
        for (let i = 0; i < REPOS; i++)
            await ok(`${server.url}${R(i)}/tasks?limit=1`, 'GET');
        fig.open_to_every_repository_answered_ms = Math.round(performance.now() - t0);
        await sleep(1000);
        fig.rss_all_open_mib = r1(rssMiB(server.pid));
    }
    finally {
        await server.stop();
    }
    return fig;
}
export async function stepWorkflowScale(o) {
    const cli = process.env.BENCH_SCALE_CLI || o.cli;
    const fig = { cli: process.env.BENCH_SCALE_CLI ? cli : 'this checkout', requests_per_route: REQUESTS };
    const emptyMiB = await emptyBaseline(o.root, cli, o.log);
    for (const pairs of SIZES) {
        fig[`pairs_${pairs}`] = await oneSize(o.root, cli, pairs, emptyMiB, o.log);
        o.log(`scale: ${JSON.stringify(fig[`pairs_${pairs}`])}`);
    }
    if (REPOS > 0) {
        fig.many_repositories = await manyRepositories(o.root, cli, o.log);
        o.log(`scale: ${JSON.stringify(fig.many_repositories)}`);
    }
    return fig;
}
const LAT_ROWS = [
    ['task_get', 'GET a task'],
    ['change_get', 'GET a change by ref'],
    ['tasks_first_page', 'tasks?limit=100, first page'],
    ['tasks_deep_page', 'tasks?limit=100, page halfway down'],
    ['queue_summary', 'read/queue-summary'],
    ['task_queue_page', 'read/task-queue?limit=100'],
    ['reviewer_inbox_page', 'read/reviewer-inbox?limit=100'],
    ['task_audit', 'read/tasks/{task}/audit'],
];
export function scaleRows(fig) {
    if (!fig)
        return [];
    const rows = [];
    const sec = (ms) => (typeof ms === 'number' ? `${(ms / 1000).toFixed(2)} s` : '—');
    for (const key of Object.keys(fig).filter((k) => k.startsWith('pairs_'))) {
        const f = fig[key];
        const n = f.pairs.toLocaleString('en-US');
        const c = f.http_create;
        rows.push([`${n} pairs: populate (in process, child)`, sec(f.populate_ms)]);
        rows.push([`${n} pairs: open → /healthz 200, → first answer`, `${sec(f.open_to_healthz_ms)}, ${sec(f.open_to_first_answer_ms)}`]);
        rows.push([`${n} pairs: RSS, per pair above an empty repository`, `${f.rss_mib} MiB (empty ${f.rss_empty_repository_mib} MiB), ${f.rss_bytes_per_pair} B/pair; after the HTTP creates ${f.rss_after_mib} MiB, VmHWM ${f.vm_hwm_mib} MiB`]);
        if (c)
            rows.push([`${n} pairs: create over HTTP, ${c.clients} clients`, `${c.pairs_per_s} pairs/s (${c.pairs} pairs in ${c.seconds} s)`]);
        const lat = f.latency;
        for (const [k, label] of LAT_ROWS) {
            const l = lat?.[k];
            if (l)
                rows.push([`${n} pairs: ${label}`, `p50 ${l.p50_ms} ms, p99 ${l.p99_ms} ms`]);
        }
    }
    const m = fig.many_repositories;
    if (m) {
        rows.push([`${m.repositories} repositories × ${m.pairs_per_repository} pairs: open → /healthz 200`, `${sec(m.open_to_healthz_ms)} (RSS ${m.rss_at_healthz_mib} MiB)`]);
        rows.push([`${m.repositories} repositories: → first answer from the last one`, sec(m.open_to_first_answer_ms)]);
        rows.push([`${m.repositories} repositories: → every repository answered once`, `${sec(m.open_to_every_repository_answered_ms)} (RSS then ${m.rss_all_open_mib} MiB)`]);
    }
    return rows;
}
//# sourceMappingURL=workflow-scale.js.map