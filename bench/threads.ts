// Comment-thread figures for `npm run bench` (BENCH_ONLY=threads): the reads a change page makes
// on a 2,000-file patchset whose second patchset edits 200 files, with 200 threads written on
// the first (ported to the second, outdated, resolved, with replies): every page of
// `threads?patchset=`, the diff route and readiness, min/median/max over rounds; the same
// reads and one comment's write on a change holding 10,000 comments; and, when a Chromium is
// installed, the browser time from navigation to every thread rendered (`[data-thread-id]`) on
// the change page at 1400×900, cold once and then warm ("n/a" when the page renders no such
// element within the bound).
//
//   BENCH_THREADS_ROUNDS   (default 7)       rounds of each read
//   BENCH_THREADS_COMMENTS (default 10000)   comments of the second change (the last rounds of them
//                                            written over HTTP, timed)
import { existsSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { push } from '../lib/client/transfer.js';
import { registerRepository, startCairn, type ChildServer } from './proc.js';

type Fig = Record<string, unknown>;
const FILES = 2000;
const EDITED = 200;
const THREADS = 200;
const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = [process.env.CAIRN_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p): p is string => !!p && existsSync(p));

export async function writeTree(dir: string, version: 0 | 1 | 2): Promise<void> {
  await fsp.rm(dir, { recursive: true, force: true });
  for (let i = 0; i < FILES; i++) {
    const d = path.join(dir, `pkg${i % 40}`);
    await fsp.mkdir(d, { recursive: true });
    let lines = Array.from({ length: 120 }, (_, l) => `export const v${i}_${l} = ${l};`);
    if (version >= 1) {
      lines[10] = `export const v${i}_10 = 'changed';`;
      lines[90] = `export const v${i}_90 = 'changed too';`;
    }
    if (version === 2 && i < EDITED) {
      // 140 files gain lines above line 50 (their threads move), 60 change line 50 (outdated).
      if (i < 140) lines = [`// header ${i}`, '// a', '// b', ...lines];
      else lines[49] = `export const v${i}_49 = 'rewritten';`;
    }
    await fsp.writeFile(path.join(d, `m${i}.ts`), `${lines.join('\n')}\n`);
  }
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const stats = (xs: number[]) => { const s = sorted(xs); return { min: Math.round(s[0]), median: Math.round(s[Math.floor(s.length / 2)]), max: Math.round(s[s.length - 1]) }; };

export async function stepThreads(o: { root: string; cli: string; log: (s: string) => void }): Promise<Fig> {
  const rounds = Math.max(1, Number(process.env.BENCH_THREADS_ROUNDS || 7) || 7);
  const manyComments = Math.max(1, Number(process.env.BENCH_THREADS_COMMENTS || 10000) || 10000);
  const dir = path.join(o.root, 'threads-tree');
  const dataDir = path.join(o.root, 'threads-data');
  let server: ChildServer | null = await startCairn(o.cli, dataDir);
  try {
    o.log(`threads: ${FILES}-file patchset, ${EDITED} files edited by patchset 2, ${THREADS} threads`);
    const repo = await registerRepository(server.url, 'threads');
    const R = (rest: string) => `${server!.url}/v1/native/repository-authorities/${repo}${rest}`;
    const post = async (p: string, body: unknown) => {
      const res = await fetch(R(p), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${p}: HTTP ${res.status} ${await res.text()}`);
      return res.json() as Promise<Record<string, any>>;
    };
    const getJson = async (p: string) => {
      const res = await fetch(R(p), { headers: { accept: 'application/json' } });
      if (!res.ok) throw new Error(`${p}: HTTP ${res.status} ${await res.text()}`);
      return res.json() as Promise<Record<string, any>>;
    };
    await writeTree(dir, 0);
    const base = (await push({ server: server.url, repo, line: 'main', dir, moveLine: true, progress: false })).snapshot_id;
    await writeTree(dir, 1);
    const rev1 = (await push({ server: server.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
    await writeTree(dir, 2);
    const rev2 = (await push({ server: server.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: rev1 })).snapshot_id;
    const t = (await post('/tasks', { title: 'bench', intent: 'threads' })).task;
    const c = (await post('/changes', { task_id: t.task_id, title: 'bench threads', base_line: 'main' })).change;
    const ps1 = (await post(`/changes/${c.change_id}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev1, summary: 'ps1', author_mode: 'human_only' })).patchset.patchset_id;

    // 200 threads on patchset 1, line 50 of the 200 files patchset 2 edits; every second one
    // gets a reply, every fourth is resolved. Eight requests in flight.
    const tasks: (() => Promise<unknown>)[] = [];
    for (let i = 0; i < THREADS; i++) {
      tasks.push(async () => {
        const r = await post(`/changes/${c.change_id}/comments`, { patchset_id: ps1, author: `rev${i % 5}`, body: `Thread ${i}: why this constant?`, anchor: { path: `pkg${i % 40}/m${i}.ts`, line: 50 } });
        if (i % 2 === 0) await post(`/changes/${c.change_id}/comments`, { author: 'author', body: `Because ${i}.`, in_reply_to: r.comment.comment_id });
        if (i % 4 === 0) await post(`/changes/${c.change_id}/threads/${r.thread_id}:resolve`, { author: `rev${i % 5}` });
      });
    }
    await inFlight(tasks, 8);
    const ps2 = (await post(`/changes/${c.change_id}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev2, summary: 'ps2', author_mode: 'human_only' })).patchset.patchset_id;

    const timeReads = async (change: string, ps: string, withDiff: boolean) => {
      const threadsMs: number[] = [];
      const diffMs: number[] = [];
      const readinessMs: number[] = [];
      const pageMs: number[] = [];
      let pages = 0;
      let shown = 0;
      let outdated = 0;
      const allThreads = async () => {
        let cursor: string | null = null;
        let n = 0;
        let o2 = 0;
        let p = 0;
        do {
          const page: Record<string, any> = await getJson(`/changes/${change}/threads?patchset=${ps}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
          n += page.count;
          o2 += page.threads.filter((x: any) => x.outdated).length;
          p++;
          cursor = page.next_cursor;
        } while (cursor);
        pages = p; shown = n; outdated = o2;
      };
      const diff = async () => { const res = await fetch(R(`/read/patchsets/${ps}/diff?context=3`)); await res.arrayBuffer(); if (!res.ok) throw new Error(`diff: HTTP ${res.status}`); };
      const readiness = () => getJson(`/read/changes/${change}/readiness`);
      const time = async (fn: () => Promise<unknown>) => { const t0 = performance.now(); await fn(); return performance.now() - t0; };
      for (let r = 0; r < rounds; r++) {
        threadsMs.push(await time(allThreads));
        if (withDiff) diffMs.push(await time(diff));
        readinessMs.push(await time(readiness));
        pageMs.push(await time(() => Promise.all([allThreads(), readiness(), ...(withDiff ? [diff()] : [])])));
      }
      return { pages, threads: shown, outdated, threads_ms: stats(threadsMs), ...(withDiff ? { diff_ms: stats(diffMs) } : {}), readiness_ms: stats(readinessMs), together_ms: stats(pageMs) };
    };
    const big = await timeReads(c.change_id, ps2, true);
    o.log(`threads: 2,000 files / 200 threads: ${JSON.stringify(big)}`);

    // The browser: navigation to every thread element on the change page (needs the UI to mark threads).
    let browserMs: Fig | null = null;
    let browserCold: number | null = null;
    let browserShown = 0;
    if (CHROMIUM) {
      const r = await browserTime(`${server.url}/ui/repos/${repo}/changes/${c.change_ref ?? c.change_id}`, THREADS, rounds);
      browserMs = r.ms; browserCold = r.cold_ms; browserShown = r.shown;
    }

    // A change with `manyComments` comments: records written in one child process through the
    // store (as many HTTP requests would take minutes), then a restart so the server opens them.
    const small = path.join(o.root, 'threads-small');
    await fsp.mkdir(small, { recursive: true });
    await fsp.writeFile(path.join(small, 'notes.md'), Array.from({ length: 400 }, (_, l) => `line ${l + 1}`).join('\n') + '\n');
    const sBase = (await push({ server: server.url, repo, line: 'side', dir: small, moveLine: true, progress: false })).snapshot_id;
    await fsp.appendFile(path.join(small, 'notes.md'), 'one more\n');
    const sRev = (await push({ server: server.url, repo, line: 'side', dir: small, moveLine: false, progress: false, parent: sBase })).snapshot_id;
    const c2 = (await post('/changes', { task_id: t.task_id, title: 'many comments', base_line: 'side' })).change;
    const sPs = (await post(`/changes/${c2.change_id}/patchsets`, { base_snapshot_id: sBase, revision_snapshot_id: sRev, summary: 'ps', author_mode: 'human_only' })).patchset.patchset_id;
    await server.stop();
    server = null;
    // Leave room for the timed writes below: a change holds at most 10,000 comments.
    const populateMs = await runPopulate(dataDir, repo, c2.change_id, sPs, Math.max(1, manyComments - rounds));
    const t0 = performance.now();
    server = await startCairn(o.cli, dataDir);
    // The first read opens the repository (lazily): time it apart from the steady reads.
    await getJson(`/read/changes/${c2.change_id}/readiness`);
    const openMs = performance.now() - t0;
    const many = await timeReads(c2.change_id, sPs, false);
    const writeMs: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const t1 = performance.now();
      await post(`/changes/${c2.change_id}/comments`, { patchset_id: sPs, author: 'late', body: `one more ${r}`, anchor: { path: 'notes.md', line: 1 } });
      writeMs.push(performance.now() - t1);
    }
    const fig: Fig = {
      files: FILES,
      edited_files: EDITED,
      threads: THREADS,
      big,
      browser_ms: browserMs,
      browser_cold_ms: browserCold,
      browser_threads_shown: browserShown,
      chromium: CHROMIUM ?? null,
      comments: manyComments,
      populate_ms: Math.round(populateMs),
      restart_first_read_ms: Math.round(openMs),
      many,
      comment_write_ms: stats(writeMs),
    };
    o.log(`threads: ${JSON.stringify(fig)}`);
    return fig;
  } finally {
    await server?.stop();
  }
}

async function inFlight(tasks: (() => Promise<unknown>)[], n: number): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < tasks.length) await tasks[next++]();
  }));
}

function runPopulate(dataDir: string, repo: number, change: string, ps: string, count: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [path.join(HERE, 'threads-populate.js'), dataDir, String(repo), change, ps, String(count)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out).ms) : reject(new Error(`threads-populate exited ${code}: ${out}`))));
  });
}

/**
 * Navigation → `want` elements `[data-thread-id]` (bounded at 60 s a round), at 1400×900 in one
 * browser context: the first load cold (an empty HTTP cache), then warm loads of the same page (its
 * cache revalidates the diff: 304). ms null when none ever shows.
 */
async function browserTime(url: string, want: number, rounds: number): Promise<{ ms: Fig | null; cold_ms: number | null; shown: number }> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...(process.getuid?.() === 0 ? ['--no-sandbox'] : []), '--disable-gpu', '--no-first-run'] });
  try {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const times: number[] = [];
    let cold: number | null = null;
    let shown = 0;
    for (let r = 0; r <= Math.max(3, Math.min(rounds, 7)); r++) {
      const t0 = performance.now();
      await page.goto(url);
      let ok = false;
      try {
        await page.waitForFunction((n) => document.querySelectorAll('[data-thread-id]').length >= n, want, { timeout: 60_000, polling: 50 });
        ok = true;
      } catch {
        // The page did not render that many thread elements within the bound.
      }
      const t = performance.now() - t0;
      shown = await page.evaluate(() => document.querySelectorAll('[data-thread-id]').length);
      if (!ok) return { ms: null, cold_ms: null, shown };
      if (r === 0) cold = Math.round(t);
      else times.push(t);
    }
    return { ms: stats(times), cold_ms: cold, shown };
  } finally {
    await browser.close();
  }
}

const mmm = (s: any) => (s ? `${s.min} / ${s.median} / ${s.max} ms` : 'n/a');

export function threadRows(f: Fig | undefined): [string, string | null][] {
  if (!f) return [];
  const b = f.big as any;
  const m = f.many as any;
  return [
    [`threads?patchset= on ps-2 (${b.threads} threads, ${b.outdated} outdated, ${b.pages} pages), ${f.files} files — min / median / max`, mmm(b.threads_ms)],
    ['  the diff route of ps-2 (context 3)', mmm(b.diff_ms)],
    ['  readiness', mmm(b.readiness_ms)],
    ['  all three in parallel (the change page)', mmm(b.together_ms)],
    [`  browser, 1400×900, warm (the same page loaded again): navigation → every [data-thread-id] rendered`, f.browser_ms == null ? `n/a (${f.chromium ? `${f.browser_threads_shown} thread elements rendered` : 'no chromium'})` : mmm(f.browser_ms)],
    ['  browser, the first (cold) load', f.browser_cold_ms == null ? 'n/a' : `${f.browser_cold_ms} ms`],
    [`a change with ${f.comments} comments: first read after a restart`, `${f.restart_first_read_ms} ms`],
    ['  threads (all pages)', mmm(m.threads_ms)],
    ['  readiness', mmm(m.readiness_ms)],
    ['  one more comment (POST)', mmm(f.comment_write_ms)],
  ];
}
