// Event figures for `npm run bench`: the latency from an event's commit to its subscribers, at
// a paced 1,000 events per second (task creates from a separate load process), with 1 and with
// 100 Server-Sent-Events subscribers; each event is timed from its commit time (`at_us`, taken
// when its batch starts writing, so the latency includes the commit's own fsync) to the moment
// a subscriber has parsed it. Subscribers run in this process, on raw sockets.
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdirSync, writeFileSync } from 'node:fs';
import { percentile, procMemory, registerRepository, runOk, startCairn } from './proc.js';
const HERE = path.dirname(fileURLToPath(import.meta.url));
const LOAD = path.join(HERE, 'event-load.js');
const RATE = Number(process.env.BENCH_EVENT_RATE || 1000);
const SECONDS = Number(process.env.BENCH_EVENT_SECONDS || 6);
const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;
/** One SSE subscription on a raw keep-alive connection; resolves once the stream is open. */
function subscribe(url, repo) {
    return new Promise((resolve, reject) => {
        const sub = { latenciesUs: [], received: 0, close: () => req.destroy() };
        const req = http.get(`${url}/v1/native/repository-authorities/${repo}/events?types=task.created`, { headers: { accept: 'text/event-stream' } }, (res) => {
            if (res.statusCode !== 200) {
                reject(new Error(`events: HTTP ${res.statusCode}`));
                res.resume();
                return;
            }
            res.setEncoding('utf8');
            let buf = '';
            res.on('data', (chunk) => {
                const t = nowUs();
                buf += chunk;
                let end;
                while ((end = buf.indexOf('\n\n')) >= 0) {
                    const message = buf.slice(0, end);
                    buf = buf.slice(end + 2);
                    const m = /"at_us":(\d+)/.exec(message);
                    if (!m)
                        continue;
                    sub.received++;
                    sub.latenciesUs.push(t - Number(m[1]));
                }
            });
            res.on('error', () => { });
            resolve(sub);
        });
        req.on('error', reject);
    });
}
function runLoad(url, repo, rate, seconds) {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [LOAD, url, String(repo), String(rate), String(seconds)], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (err += d));
        child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`event load exited ${code}: ${err}`))));
    });
}
const JOBS = Number(process.env.BENCH_RUNNER_JOBS || 10);
const REPO = (url, repo) => `${url}/v1/native/repository-authorities/${repo}`;
async function json(res) {
    const r = await res;
    const text = await r.text();
    if (!r.ok)
        throw new Error(`HTTP ${r.status}: ${text}`);
    return JSON.parse(text);
}
/**
 * The runner's claim latency: `cairn runner` idle on a repository, a repo.ci job queued every
 * 0.5–1.5 s (random, so a poll interval's phase is random too); the latency of a job is
 * job.claimed's commit time minus job.queued's, both read from the repository's event page.
 * `polling`: the server allows one event subscriber and this process holds it, so the runner's
 * feed is refused (503) and it falls back to polling every --poll-ms (default 1,000 ms).
 */
async function runnerLatency(o, mode) {
    const data = path.join(o.root, `runner-data-${mode}`);
    const server = await startCairn(o.cli, data, mode === 'polling' ? { serveArgs: ['--event-subscribers', '1'] } : {});
    let runner = null;
    let blocker = null;
    try {
        const repo = await registerRepository(server.url, `runner-${mode}`);
        const tree = path.join(o.root, `runner-tree-${mode}`);
        mkdirSync(path.join(tree, 'ci'), { recursive: true });
        writeFileSync(path.join(tree, 'ci', 'run.sh'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
        writeFileSync(path.join(tree, 'README.md'), 'runner bench\n');
        await runOk(process.execPath, [o.cli, 'push', '--server', server.url, '--repo', String(repo), '--line', 'main', tree]);
        const head = (await json(fetch(`${REPO(server.url, repo)}/lines/main`))).head_snapshot_id;
        if (mode === 'polling') {
            await new Promise((resolve, reject) => {
                blocker = http.get(`${REPO(server.url, repo)}/events`, { headers: { accept: 'text/event-stream' } }, (res) => {
                    if (res.statusCode !== 200)
                        reject(new Error(`blocker: HTTP ${res.statusCode}`));
                    else
                        resolve();
                    res.resume();
                });
                blocker.on('error', () => { });
            });
        }
        let stderr = '';
        runner = spawn(process.execPath, [o.cli, 'runner', '--server', server.url, '--repo', String(repo), '--workdir', path.join(o.root, `runner-work-${mode}`)], { stdio: ['ignore', 'ignore', 'pipe'] });
        runner.stderr.on('data', (d) => { if (stderr.length < 10_000)
            stderr += d; });
        await new Promise((r) => setTimeout(r, 1500));
        o.log(`events: runner claim latency (${mode}), ${JOBS} jobs`);
        for (let i = 0; i < JOBS; i++) {
            const run = await json(fetch(`${REPO(server.url, repo)}:runCi`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ snapshot_id: head }) }));
            const index = run.job?.worker_job_index ?? run.worker_job_index;
            for (let waited = 0;; waited += 20) {
                const job = await json(fetch(`${REPO(server.url, repo)}/worker-jobs/${index}`));
                const state = job.job?.state ?? job.state;
                if (state === 'succeeded' || state === 'failed')
                    break;
                if (waited > 60_000)
                    throw new Error(`job ${index} not finished after 60 s (${state}); runner: ${stderr.slice(-500)}`);
                await new Promise((r) => setTimeout(r, 20));
            }
            await new Promise((r) => setTimeout(r, 500 + Math.random() * 1000));
        }
        const page = await json(fetch(`${REPO(server.url, repo)}/events?types=job.queued,job.claimed&limit=1000`));
        const queued = new Map();
        const latencies = [];
        for (const e of page.events) {
            if (e.type === 'job.queued')
                queued.set(e.data.worker_job_index, e.at_us);
            else if (e.type === 'job.claimed' && queued.has(e.data.worker_job_index))
                latencies.push((e.at_us - queued.get(e.data.worker_job_index)) / 1000);
        }
        latencies.sort((a, b) => a - b);
        const r1 = (x) => Math.round(x * 10) / 10;
        return { jobs: latencies.length, claim_p50_ms: r1(percentile(latencies, 50)), claim_max_ms: r1(latencies.at(-1) ?? NaN), claim_mean_ms: r1(latencies.reduce((a, b) => a + b, 0) / (latencies.length || 1)) };
    }
    finally {
        runner?.kill('SIGTERM');
        blocker?.destroy();
        await server.stop();
    }
}
export async function stepEvents(o) {
    const fig = { rate_target: RATE, seconds: SECONDS };
    for (const subscribers of [1, 100]) {
        // Every subscriber connects from this process's one address: let it hold them all.
        const server = await startCairn(o.cli, path.join(o.root, `events-data-${subscribers}`), { serveArgs: ['--event-subscribers-per-client', String(subscribers)] });
        try {
            const repo = await registerRepository(server.url, `events-${subscribers}`);
            o.log(`events: ${subscribers} subscriber(s), ${RATE} events/s for ${SECONDS} s`);
            const subs = await Promise.all(Array.from({ length: subscribers }, () => subscribe(server.url, repo)));
            const idleKiB = procMemory(server.pid)?.rssKiB ?? NaN;
            const load = await runLoad(server.url, repo, RATE, SECONDS);
            await new Promise((r) => setTimeout(r, 500)); // the last events in flight
            const all = subs.flatMap((s) => s.latenciesUs).sort((a, b) => a - b);
            const ms = (us) => Math.round(us / 10) / 100;
            fig[`subscribers_${subscribers}`] = {
                load,
                events_per_subscriber_min: Math.min(...subs.map((s) => s.received)),
                events_per_subscriber_max: Math.max(...subs.map((s) => s.received)),
                latency_p50_ms: ms(percentile(all, 50)),
                latency_p99_ms: ms(percentile(all, 99)),
                latency_max_ms: ms(all.at(-1) ?? NaN),
                server_rss_above_idle_mib: Math.round((((procMemory(server.pid)?.rssKiB ?? NaN) - idleKiB) / 1024) * 10) / 10,
            };
            for (const s of subs)
                s.close();
        }
        finally {
            await server.stop();
        }
    }
    fig.runner_feed = await runnerLatency(o, 'feed');
    fig.runner_polling = await runnerLatency(o, 'polling');
    return fig;
}
export function eventRows(fig) {
    if (!fig)
        return [];
    const rows = [];
    for (const n of [1, 100]) {
        const f = fig[`subscribers_${n}`];
        if (!f)
            continue;
        const load = f.load;
        rows.push([`commit → subscriber, ${n} subscriber(s), ${load.rate} events/s`, `p50 ${f.latency_p50_ms} ms, p99 ${f.latency_p99_ms} ms, max ${f.latency_max_ms} ms (each got ${f.events_per_subscriber_min}–${f.events_per_subscriber_max} of ${load.ok}; server RSS +${f.server_rss_above_idle_mib} MiB)`]);
    }
    for (const mode of ['feed', 'polling']) {
        const f = fig[`runner_${mode}`];
        if (f)
            rows.push([`runner claim latency (queued → claimed), ${mode === 'feed' ? 'waiting on the feed' : 'polling every 1 s'}`, `p50 ${f.claim_p50_ms} ms, mean ${f.claim_mean_ms} ms, max ${f.claim_max_ms} ms over ${f.jobs} jobs`]);
    }
    return rows;
}
//# sourceMappingURL=events.js.map