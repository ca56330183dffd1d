// Stack figures for `npm run bench` (BENCH_ONLY=stack; docs/git.md "Stacks"): N commits
// (BENCH_STACK_COMMITS, default 10), each adding its own file, pushed for review with the real git
// client and landed through the land queue, two ways against a real server (queue depth 4, no
// retries):
//   - a stack: the N commits in one series, one `git push` (N chained changes), then one
//     `POST land-queue` of the top, which queues the changes below with it;
//   - separate changes: each commit on main's head on its own, N `git push`es, then N enqueues.
// CI is played by this process (bench/land-queue.ts's farm): every job claimed as soon as it is
// queued and passed after BENCH_STACK_CI_MS (default 1000). The figures: the time of the pushes,
// the time from the first enqueue until every change landed, and the number of CI runs.
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { importGit } from '../lib/client/git-import.js';
import { NO_PROGRESS } from '../lib/client/progress.js';
import { call, ciFarm } from './land-queue.js';
import { registerRepository, startCairn } from './proc.js';

type Fig = Record<string, unknown>;
const COMMITS = Number(process.env.BENCH_STACK_COMMITS || 10);
const CI_MS = Number(process.env.BENCH_STACK_CI_MS || 1000);
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'bench@example.org', GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.org' };
const git = (dir: string, args: string[]) => execFileSync('git', ['-C', dir, ...args], { env: GIT_ENV, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
// A push runs while this process keeps its event loop (a blocked loop would reuse a keep-alive
// socket the server closed meanwhile).
const gitPush = (dir: string, url: string) => promisify(execFile)('git', ['-C', dir, 'push', '-q', url, 'HEAD:refs/for/main'], { env: GIT_ENV });

async function run(o: { root: string; cli: string; log: (s: string) => void }, stacked: boolean): Promise<Fig> {
  const name = stacked ? 'stack' : 'separate';
  const server = await startCairn(o.cli, path.join(o.root, `stack-data-${name}`), { serveArgs: ['--queue-depth', '4', '--queue-retries', '0'] });
  try {
    const url = server.url;
    const repo = await registerRepository(url, `stack-${name}`);
    const src = path.join(o.root, `stack-src-${name}`);
    mkdirSync(src, { recursive: true });
    git(src, ['init', '-q', '-b', 'main']);
    writeFileSync(path.join(src, 'README.md'), '# bench\n');
    git(src, ['add', '-A']);
    git(src, ['commit', '-q', '-m', 'first']);
    await importGit({ server: url, repo, source: src, line: 'main', progress: NO_PROGRESS });
    const lineUrl = `${url}${R(repo, '/git/main.git')}`;
    const dir = path.join(o.root, `stack-work-${name}`);
    execFileSync('git', ['clone', '-q', lineUrl, dir], { env: GIT_ENV });
    const base = git(dir, ['rev-parse', 'HEAD']).trim();
    let pushMs = 0;
    for (let i = 0; i < COMMITS; i++) {
      if (!stacked) git(dir, ['checkout', '-q', '--detach', base]);
      writeFileSync(path.join(dir, `f${i}.txt`), `${i}\n`);
      git(dir, ['add', '-A']);
      git(dir, ['commit', '-q', '-m', `Step ${i}\n\nChange-Id: I${(i + 1).toString(16).padStart(40, '0')}`]);
      if (!stacked) {
        const t = performance.now();
        await gitPush(dir, lineUrl);
        pushMs += performance.now() - t;
      }
    }
    if (stacked) {
      const t = performance.now();
      await gitPush(dir, lineUrl);
      pushMs += performance.now() - t;
    }
    const changes = (await call(url, 'GET', R(repo, '/changes?limit=1000'))).changes as { change_id: string; selected_patchset_id: string; sequence: number }[];
    if (changes.length !== COMMITS) throw new Error(`${changes.length} changes, not ${COMMITS}`);
    changes.sort((a, b) => a.sequence - b.sequence);
    for (const c of changes) {
      await call(url, 'PUT', R(repo, `/patchsets/${c.selected_patchset_id}/attestation`), { verification_state: 'pass' });
      await call(url, 'POST', R(repo, `/changes/${c.change_id}/reviews`), { patchset_id: c.selected_patchset_id, reviewer: 'alice', action: 'approve' });
    }
    const farm = ciFarm(url, repo, CI_MS);
    const t0 = performance.now();
    if (stacked) await call(url, 'POST', R(repo, '/land-queue'), { change_ref: changes.at(-1)!.change_id, mode: 'merge' });
    else for (const c of changes) await call(url, 'POST', R(repo, '/land-queue'), { change_ref: c.change_id, mode: 'merge' });
    for (;;) {
      const q = await call(url, 'GET', R(repo, '/land-queue'));
      if (q.count === 0) break;
      await new Promise((res) => setTimeout(res, 20));
    }
    const landMs = performance.now() - t0;
    await farm.stop();
    const recent = (await call(url, 'GET', R(repo, '/land-queue'))).recent as { state: string }[];
    const landed = recent.filter((e) => e.state === 'landed').length;
    o.log(`${name}: ${COMMITS} commits pushed in ${Math.round(pushMs)} ms; ${landed} landed in ${Math.round(landMs)} ms with ${farm.jobs()} CI runs`);
    return { commits: COMMITS, pushes: stacked ? 1 : COMMITS, push_ms: Math.round(pushMs), enqueues: stacked ? 1 : COMMITS, landed, land_ms: Math.round(landMs), total_ms: Math.round(pushMs + landMs), ci_runs: farm.jobs() };
  } catch (err) {
    throw new Error(`${name}: ${(err as Error).message}; the server said: ${server.output().slice(-1500)}`);
  } finally {
    await server.stop();
  }
}

export async function stepStack(o: { root: string; cli: string; log: (s: string) => void }): Promise<Fig> {
  return { commits: COMMITS, ci_ms: CI_MS, stack: await run(o, true), separate: await run(o, false) };
}

export function stackRows(fig: Fig | undefined): [string, string | null][] {
  if (!fig) return [];
  const row = (f: Fig) => `${f.pushes} push(es) ${f.push_ms} ms; ${f.enqueues} enqueue(s), ${f.landed}/${f.commits} landed in ${f.land_ms} ms; ${f.ci_runs} CI runs; total ${f.total_ms} ms`;
  return [
    [`a stack of ${fig.commits} commits, one push, the top queued (CI ${fig.ci_ms} ms)`, row(fig.stack as Fig)],
    [`${fig.commits} separate changes, one push and one enqueue each`, row(fig.separate as Fig)],
  ];
}
