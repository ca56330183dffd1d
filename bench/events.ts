// Event figures for `npm run bench`: the latency from an event's commit to its subscribers, at
// a paced 1,000 events per second (task creates from a separate load process), with 1 and with
// 100 Server-Sent-Events subscribers; each event is timed from its commit time (`at_us`, taken
// when its batch starts writing, so the latency includes the commit's own fsync) to the moment
// a subscriber has parsed it. Subscribers run in this process, on raw sockets.
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { procMemory, registerRepository, startCairn } from './proc.js';

type Fig = Record<string, unknown>;
const HERE = path.dirname(fileURLToPath(import.meta.url));
const LOAD = path.join(HERE, 'event-load.js');
const RATE = Number(process.env.BENCH_EVENT_RATE || 1000);
const SECONDS = Number(process.env.BENCH_EVENT_SECONDS || 6);

const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;

interface Subscriber {
  latenciesUs: number[];
  received: number;
  close(): void;
}

/** One SSE subscription on a raw keep-alive connection; resolves once the stream is open. */
function subscribe(url: string, repo: number): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    const sub: Subscriber = { latenciesUs: [], received: 0, close: () => req.destroy() };
    const req = http.get(`${url}/v1/native/repository-authorities/${repo}/events?types=task.created`, { headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`events: HTTP ${res.statusCode}`));
        res.resume();
        return;
      }
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk: string) => {
        const t = nowUs();
        buf += chunk;
        let end: number;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const message = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const m = /"at_us":(\d+)/.exec(message);
          if (!m) continue;
          sub.received++;
          sub.latenciesUs.push(t - Number(m[1]));
        }
      });
      res.on('error', () => {});
      resolve(sub);
    });
    req.on('error', reject);
  });
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function runLoad(url: string, repo: number, rate: number, seconds: number): Promise<Fig> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LOAD, url, String(repo), String(rate), String(seconds)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`event load exited ${code}: ${err}`))));
  });
}

export async function stepEvents(o: { root: string; cli: string; log: (s: string) => void }): Promise<Fig> {
  const fig: Fig = { rate_target: RATE, seconds: SECONDS };
  for (const subscribers of [1, 100]) {
    const server = await startCairn(o.cli, path.join(o.root, `events-data-${subscribers}`));
    try {
      const repo = await registerRepository(server.url, `events-${subscribers}`);
      o.log(`events: ${subscribers} subscriber(s), ${RATE} events/s for ${SECONDS} s`);
      const subs = await Promise.all(Array.from({ length: subscribers }, () => subscribe(server.url, repo)));
      const idleKiB = procMemory(server.pid)?.rssKiB ?? NaN;
      const load = await runLoad(server.url, repo, RATE, SECONDS);
      await new Promise((r) => setTimeout(r, 500)); // the last events in flight
      const all = subs.flatMap((s) => s.latenciesUs).sort((a, b) => a - b);
      const ms = (us: number) => Math.round(us / 10) / 100;
      fig[`subscribers_${subscribers}`] = {
        load,
        events_per_subscriber_min: Math.min(...subs.map((s) => s.received)),
        events_per_subscriber_max: Math.max(...subs.map((s) => s.received)),
        latency_p50_ms: ms(percentile(all, 50)),
        latency_p99_ms: ms(percentile(all, 99)),
        latency_max_ms: ms(all.at(-1) ?? NaN),
        server_rss_above_idle_mib: Math.round((((procMemory(server.pid)?.rssKiB ?? NaN) - idleKiB) / 1024) * 10) / 10,
      };
      for (const s of subs) s.close();
    } finally {
      await server.stop();
    }
  }
  return fig;
}

export function eventRows(fig: Fig | undefined): [string, string | null][] {
  if (!fig) return [];
  const rows: [string, string | null][] = [];
  for (const n of [1, 100]) {
    const f = fig[`subscribers_${n}`] as Fig | undefined;
    if (!f) continue;
    const load = f.load as Fig;
    rows.push([`commit → subscriber, ${n} subscriber(s), ${load.rate} events/s`, `p50 ${f.latency_p50_ms} ms, p99 ${f.latency_p99_ms} ms, max ${f.latency_max_ms} ms (each got ${f.events_per_subscriber_min}–${f.events_per_subscriber_max} of ${load.ok}; server RSS +${f.server_rss_above_idle_mib} MiB)`]);
  }
  return rows;
}
