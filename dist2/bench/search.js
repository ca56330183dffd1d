// Change search figures for `npm run bench` (BENCH_ONLY=search): `GET changes?q=` against a
// `cairn serve` child on one repository of 100k and 1M changes (bench/search-populate.ts:
// generated titles and patchset paths). Measured: the first search after the first open (it
// builds the posting lists: the populated store's checkpoint has no search section), RSS before
// and after it; then the server is stopped (its clean close writes a checkpoint that holds the
// lists) and started again: the first search after that open (the lists come from the
// checkpoint), RSS before and after it, and on that server p50/p99 of sequential keep-alive
// searches per kind of query (a rare title word, a common one, two words intersected, a path
// prefix, a file, a status with a word, a status alone).
//
// Environment:
//   BENCH_SEARCH_SIZES     (default 100000,1000000)  repository sizes, comma separated
//   BENCH_SEARCH_REQUESTS  (default 200)  requests per kind of query
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { children, freePort, procMemory, runOk, stopChild } from './proc.js';
const HERE = path.dirname(fileURLToPath(import.meta.url));
const POPULATE = path.join(HERE, 'search-populate.js');
const list = (v, fallback) => (v ? v.split(',').map((s) => Number(s.trim())).filter((n) => Number.isInteger(n) && n > 0) : fallback);
const SIZES = list(process.env.BENCH_SEARCH_SIZES, [100_000, 1_000_000]);
const REQUESTS = Number(process.env.BENCH_SEARCH_REQUESTS || 200);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const R = '/v1/native/repository-authorities/0';
function get(url) {
    return new Promise((resolve, reject) => {
        http.get(url, { agent }, (res) => {
            let out = '';
            res.setEncoding('utf8');
            res.on('data', (d) => (out += d));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text: out }));
            res.on('error', reject);
        }).on('error', reject);
    });
}
async function serve(cli, dataDir) {
    const port = await freePort();
    const proc = spawn(process.execPath, [cli, 'serve', '--bind', `127.0.0.1:${port}`, '--data', dataDir, '--log-level', 'silent', '--no-ui'], { stdio: ['ignore', 'ignore', 'pipe'] });
    children.add(proc);
    proc.once('exit', () => children.delete(proc));
    let out = '';
    proc.stderr.on('data', (d) => { if (out.length < 65536)
        out += d; });
    const url = `http://127.0.0.1:${port}`;
    const deadline = performance.now() + 30 * 60_000;
    while (performance.now() < deadline) {
        if (proc.exitCode !== null)
            throw new Error(`cairn serve exited early (code ${proc.exitCode}): ${out.trim()}`);
        try {
            if ((await get(`${url}/healthz`)).status === 200)
                return { url, pid: proc.pid, proc, output: () => out, stop: () => stopChild(proc) };
        }
        catch { /* not listening yet */ }
        await sleep(10);
    }
    proc.kill('SIGKILL');
    throw new Error('cairn serve never became ready');
}
const r2 = (n) => (Number.isFinite(n) ? Math.round(n * 100) / 100 : null);
const rssMiB = (pid) => (procMemory(pid)?.rssKiB ?? NaN) / 1024;
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
async function search(url, q) {
    const t = performance.now();
    const res = await get(`${url}${R}/changes?limit=25&q=${encodeURIComponent(q)}`);
    const ms = performance.now() - t;
    if (res.status !== 200)
        throw new Error(`search ${q}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
    return { ms, count: JSON.parse(res.text).count };
}
const QUERIES = [
    ['rare_word', (r) => `rare${r() % 20_000}`],
    ['common_word', (r) => `noun${r() % 400}`],
    ['two_words', (r) => `noun${r() % 400} area${r() % 40}`],
    ['path_prefix', (r) => `file:dir${r() % 40}/sub${r() % 10}`],
    ['file', (r) => `file:dir${r() % 40}/sub${r() % 10}/file${r() % 1000}.ts`],
    ['file_and_word', (r) => `file:dir${r() % 40} noun${r() % 400}`],
    ['status_and_word', (r) => `status:active noun${r() % 400}`],
    ['status_only', () => 'status:active'],
    ['no_match', (r) => `rare${r() % 20_000} noun${r() % 400} area${r() % 40}`],
];
async function oneSize(root, cli, changes, log) {
    const dataDir = path.join(root, `search-${changes}`);
    log(`search: populating ${changes} changes`);
    const run = await runOk(process.execPath, ['--max-old-space-size=16384', POPULATE, dataDir, String(changes)], { timeoutMs: 3 * 3600_000 });
    const fig = { changes, populate_ms: JSON.parse(run.stdout).ms };
    log(`search: ${changes} changes populated in ${(fig.populate_ms / 1000).toFixed(1)} s; serving`);
    const first = await serve(cli, dataDir);
    try {
        await get(`${first.url}${R}/changes?limit=1`);
        await sleep(1000);
        fig.rss_before_mib = r2(rssMiB(first.pid));
        const x = await search(first.url, 'noun1');
        fig.first_search_ms = Math.round(x.ms);
        await sleep(1000);
        fig.rss_after_mib = r2(rssMiB(first.pid));
    }
    finally {
        await first.stop();
    }
    log(`search: ${changes} changes: built in ${fig.first_search_ms} ms; reopening`);
    const t0 = performance.now();
    const server = await serve(cli, dataDir);
    try {
        await get(`${server.url}${R}/changes?limit=1`);
        fig.reopen_ms = Math.round(performance.now() - t0);
        await sleep(1000);
        fig.reopen_rss_before_mib = r2(rssMiB(server.pid));
        const again = await search(server.url, 'noun1');
        fig.reopen_first_search_ms = Math.round(again.ms);
        await sleep(1000);
        fig.reopen_rss_after_mib = r2(rssMiB(server.pid));
        let seed = 4242;
        const r = () => {
            seed = (seed + 0x6d2b79f5) | 0;
            let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
            t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
            return (t ^ (t >>> 14)) >>> 0;
        };
        const lat = {};
        for (const [name, q] of QUERIES) {
            const ms = [];
            let rows = 0;
            for (let i = 0; i < REQUESTS; i++) {
                const x = await search(server.url, q(r));
                ms.push(x.ms);
                rows += x.count;
            }
            ms.sort((a, b) => a - b);
            lat[name] = { p50_ms: r2(pct(ms, 50)), p99_ms: r2(pct(ms, 99)), mean_rows: r2(rows / REQUESTS) };
        }
        fig.latency = lat;
    }
    finally {
        await server.stop();
    }
    return fig;
}
export async function stepSearch(o) {
    const fig = { requests_per_query: REQUESTS, page: 25 };
    for (const n of SIZES) {
        fig[`changes_${n}`] = await oneSize(o.root, o.cli, n, o.log);
        o.log(`search: ${JSON.stringify(fig[`changes_${n}`])}`);
    }
    return fig;
}
export function searchRows(fig) {
    if (!fig)
        return [];
    const rows = [];
    for (const key of Object.keys(fig).filter((k) => k.startsWith('changes_'))) {
        const f = fig[key];
        const n = f.changes.toLocaleString('en-US');
        rows.push([`${n} changes: first search (builds the lists)`, `${(f.first_search_ms / 1000).toFixed(2)} s; RSS ${f.rss_before_mib} → ${f.rss_after_mib} MiB`]);
        rows.push([`${n} changes: reopen, first search`, `open ${(f.reopen_ms / 1000).toFixed(2)} s, first search ${f.reopen_first_search_ms} ms; RSS ${f.reopen_rss_before_mib} → ${f.reopen_rss_after_mib} MiB`]);
        for (const [name, l] of Object.entries(f.latency))
            rows.push([`${n} changes: search ${name}`, `p50 ${l.p50_ms} ms, p99 ${l.p99_ms} ms (${l.mean_rows} rows)`]);
    }
    return rows;
}
//# sourceMappingURL=search.js.map