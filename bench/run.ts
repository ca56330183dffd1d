// `npm run bench`: cairn push/pull against git add+commit+push/clone on a generated source-like
// tree, on-disk size of both stores, and the cairn server's memory and throughput while it
// receives one ~1 GiB object pack (against a bare node:http baseline and sha256sum).
//
// It prints figures only: a slow number never fails it. It exits 1 only when a step breaks
// (a command fails, a server crashes, a pulled/cloned tree differs), after printing what happened.
//
// Environment:
//   BENCH_SCALE  (default 1)   scales the tree (5,000 files / ~100 MB) and the pack (1 GiB);
//                              e.g. BENCH_SCALE=0.05 for a quick smoke run
//   BENCH_SEED   (default "cairn-bench-1")  PRNG seed; same seed and scale → same bytes
//   BENCH_KEEP=1 keep the temp directory (its path is printed)
//   BENCH_TMPDIR directory for the temp directory (default os.tmpdir())
//   BENCH_ONLY=storage  run only the storage-core figures (bench/storage.ts)
//   BENCH_ONLY=requests  only the GET-overhead (with the access gate's cost) and hostile-body steps
//   BENCH_ONLY=auth      only the access gate's cost: GET on cairn without auth, with a token, and node:http
//   BENCH_ONLY=transfer  only push/pull against git, the one-file dedup and the resumed push
//   BENCH_ONLY=diffs     only the patchset diff route against git diff, and a change page's API calls
//   BENCH_ONLY=git       only the git import: a generated history (BENCH_GIT_COMMITS, default 10,000,
//                        over BENCH_GIT_FILES files, default 5,000) against git fast-export | fast-import
//   BENCH_ONLY=push      only push for review: one commit of a 100 MiB and of a 200 MiB file of random
//                        bytes (BENCH_PUSH_MIB, default "100,200") against git push to a bare repository
//   BENCH_ONLY=events    only the event feed: commit → subscriber latency, runner claim latency
//   BENCH_ONLY=queue     only the land queue: changes landed per minute with a fixed CI time,
//                        one by one versus the queue at depth 1 and 4 (bench/land-queue.ts)
//   BENCH_ONLY=cluster   only several nodes: a GET through a node that does not own the repository
//                        against the owner; a repository moved between two nodes under writes
//                        (BENCH_CLUSTER_MOVES, default 20: the pause, the client's gap, nothing
//                        lost) and a killed node's repository failed over (kill -9 to served);
//                        those two against a Swift s3api on loopback. BENCH_CLUSTER_PHASES
//                        (hop, moves, failover; default all) picks phases (bench/cluster.ts)
//   BENCH_ONLY=stack     only stacks: a 10-commit series pushed with git and landed through the
//                        queue from its top, against 10 separate changes (bench/stack.ts)
//   BENCH_ONLY=diff-fidelity  only the diff route with word spans and rename detection on the
//                        threads bench's 2,000-file patchset (bench/diff-fidelity.ts)
//   BENCH_ONLY=threads   only comment threads: the change page's reads with 200 threads on a
//                        2,000-file patchset, a change of 10,000 comments (bench/threads.ts)
//   BENCH_ONLY=search    only change search: GET changes?q= at 100k and 1M changes (bench/search.ts;
//                        BENCH_SEARCH_SIZES, BENCH_SEARCH_REQUESTS there)
//   BENCH_ONLY=archive   only the archive: shipping to a Swift s3api on loopback against a plain
//                        upload, commit latency with and without it, restore against cp -a,
//                        follower lag (bench/archive.ts; BENCH_ARCHIVE_* there)
//   BENCH_ONLY=archive-rpo  only the archive's RPO: under a steady load, after a kill -9 and a
//                        restart, --archive-sync latency and throughput against async, and a
//                        kill -9 loop with --archive-sync (bench/archive-rpo.ts; BENCH_RPO_* there)
//   BENCH_ONLY=scale     only workflow at scale: 10k/100k/1M task+change pairs in one repository,
//                        1,000 repositories (bench/workflow-scale.ts; BENCH_SCALE_PAIRS etc. there)
//   BENCH_GET_SECONDS (default 4), BENCH_GET_ROUNDS (default 3)  GET-overhead rounds
//   BENCH_ROUNDS (default 5)   rounds of cairn push/pull and git add+commit+push/clone, run side
//                              by side (order alternating) so a busy machine hits both alike;
//                              the report gives every round and the medians
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBigPack } from './pack-file.js';
import {
  CommandFailed, cpuSeconds, dirBytes, killAllChildren, procMemory, registerRepository, runOk, runTimed, sampleRss,
  startBaseline, startCairn, uploadFile, type ChildServer, type UploadResult,
} from './proc.js';
import { generateTree } from './tree.js';
import { stepGroupCommit, stepSmallCommit, storageRows } from './storage.js';
import { landRows, stepLands } from './lands.js';
import { diffRows, stepDiffs } from './diffs.js';
import { gitImportRows, stepGitImport } from './git-import.js';
import { gitPushRows, stepGitPush } from './git-push.js';
import { eventRows, stepEvents } from './events.js';
import { landQueueRows, stepLandQueue } from './land-queue.js';
import { stackRows, stepStack } from './stack.js';
import { clusterMoveRows, stepCluster } from './cluster.js';
import { scaleRows, stepWorkflowScale } from './workflow-scale.js';
import { stepThreads, threadRows } from './threads.js';
import { diffFidelityRows, stepDiffFidelity } from './diff-fidelity.js';
import { searchRows, stepSearch } from './search.js';
import { archiveRows, stepArchive } from './archive.js';
import { archiveRpoRows, stepArchiveRpo } from './archive-rpo.js';
import { gzipSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { AccessBook } from '../lib/authority/access.js';
import { Layout } from '../lib/store/layout.js';

const HERE = path.dirname(fileURLToPath(import.meta.url)); // dist/bench
const PROJECT_ROOT = path.resolve(HERE, '../..');
const CLI = path.join(PROJECT_ROOT, 'bin/cairn.js');
const BASELINE_SCRIPT = path.join(HERE, 'baseline-server.js');
const LOAD_SCRIPT = path.join(HERE, 'load.js');
const OBJECT_PACK_MEDIA = 'application/vnd.svc.remote-sync.object-pack+zstd';
const SYNC = '/remote-sync/zstd-bulk';

const MiB = 1024 * 1024;
const SCALE = parseScale(process.env.BENCH_SCALE);
const SEED = process.env.BENCH_SEED || 'cairn-bench-1';
const KEEP = process.env.BENCH_KEEP === '1';
const COMMAND_TIMEOUT_MS = 15 * 60 * 1000;
const ROUNDS = Math.max(1, Math.min(20, Number(process.env.BENCH_ROUNDS || 5) || 5));

function parseScale(value: string | undefined): number {
  if (value === undefined || value === '') return 1;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 10) {
    process.stderr.write(`bench: BENCH_SCALE must be a number in (0, 10], got ${JSON.stringify(value)}\n`);
    process.exit(2);
  }
  return n;
}

// ---------------------------------------------------------------- cleanup on every exit path

const ROOT = mkdtempSync(path.join(process.env.BENCH_TMPDIR || os.tmpdir(), 'cairn-bench-'));
let cleaned = false;
function cleanup(): void {
  if (cleaned) return;
  cleaned = true;
  killAllChildren();
  if (KEEP) process.stderr.write(`bench: kept ${ROOT}\n`);
  else rmSync(ROOT, { recursive: true, force: true });
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(sig, () => {
    process.stderr.write(`\nbench: ${sig}, cleaning up\n`);
    cleanup();
    process.exit(128 + (os.constants.signals[sig] ?? 1));
  });
}

// ---------------------------------------------------------------- figures

type Fig = Record<string, unknown>;
const bench: Record<string, Fig | unknown> = {};
const errors: { step: string; message: string }[] = [];

const round = (n: number, d = 2) => (Number.isFinite(n) ? Math.round(n * 10 ** d) / 10 ** d : null);
const mibps = (bytes: number, ms: number) => round(bytes / MiB / (ms / 1000), 1);
const mib = (bytes: number) => round(bytes / MiB, 1);
const secs = (ms: number | null | undefined) => (ms == null ? '—' : `${(ms / 1000).toFixed(2)} s`);
const ratio = (a: number | null | undefined, b: number | null | undefined) => (a == null || b == null || !b ? null : round(a / b, 2));

function log(msg: string): void {
  process.stderr.write(`» ${msg}\n`);
}

function fail(step: string, err: unknown): void {
  const message = err instanceof CommandFailed ? err.message : err instanceof Error ? err.message : String(err);
  errors.push({ step, message });
  process.stderr.write(`!! ${step} FAILED: ${message}\n`);
}

/** Stop a server and record it if it had crashed or exits non-zero. */
async function stopServer(step: string, server: ChildServer | null): Promise<void> {
  if (!server) return;
  const crashed = server.proc.exitCode !== null || server.proc.signalCode !== null;
  const code = await server.stop();
  if (crashed || (code !== 0 && code !== null)) fail(step, new Error(`server exited with ${code ?? server.proc.signalCode} ${crashed ? 'before it was stopped' : 'on SIGTERM'}; output: ${server.output().trim() || '(none)'}`));
}

// ---------------------------------------------------------------- steps

const treeDir = path.join(ROOT, 'tree');

async function stepTree(): Promise<{ files: number; bytes: number } | null> {
  const files = Math.max(20, Math.round(5000 * SCALE));
  const bytes = Math.round(100e6 * SCALE);
  log(`generating tree: ~${files} files, ~${mib(bytes)} MiB (seed ${SEED})`);
  const t0 = performance.now();
  const stats = generateTree(treeDir, { seed: SEED, files, bytes });
  const ms = performance.now() - t0;
  bench.tree = { ...stats, mib: mib(stats.bytes), generate_ms: Math.round(ms) };
  return stats;
}

/** One round of cairn: a fresh server and repository, push the tree, pull it back. */
async function stepCairn(tree: { bytes: number }, round: number): Promise<Fig> {
  const data = path.join(ROOT, `cairn-data-${round}`);
  const out = path.join(ROOT, `cairn-out-${round}`);
  const fig: Fig = { round };
  let server: ChildServer | null = null;
  try {
    server = await startCairn(CLI, data);
    const repo = await registerRepository(server.url, 'bench');
    fig.repo = repo;
    fig.server_url = server.url;
    fig.server_rss_idle_mib = mib((procMemory(server.pid)?.rssKiB ?? NaN) * 1024);
    const sampler = sampleRss(server.pid);

    log(`round ${round + 1}: cairn push`);
    const cpu0 = { client: cpuSeconds('self', true), server: cpuSeconds(server.pid) };
    const push = await runOk(process.execPath, [CLI, 'push', '--server', server.url, '--repo', String(repo), '--line', 'dev', treeDir], { timeoutMs: COMMAND_TIMEOUT_MS });
    const pushed = JSON.parse(push.stdout.trim().split('\n').at(-1)!);
    Object.assign(fig, {
      push_ms: Math.round(push.ms), push_mib_s: mibps(tree.bytes, push.ms),
      snapshot_id: pushed.snapshot_id, files: pushed.files, bytes: pushed.bytes,
      uploaded_packs: pushed.uploaded_packs, uploaded_bytes: pushed.uploaded_bytes,
    });

    const cpu1 = { client: cpuSeconds('self', true), server: cpuSeconds(server.pid) };
    log(`round ${round + 1}: cairn pull`);
    const pull = await runOk(process.execPath, [CLI, 'pull', '--server', server.url, '--repo', String(repo), '--line', 'dev', out], { timeoutMs: COMMAND_TIMEOUT_MS });
    const cpu2 = { client: cpuSeconds('self', true), server: cpuSeconds(server.pid) };
    Object.assign(fig, {
      pull_ms: Math.round(pull.ms), pull_mib_s: mibps(tree.bytes, pull.ms),
      push_cpu_s: cpuRound(cpu1.client - cpu0.client + cpu1.server - cpu0.server), push_server_cpu_s: cpuRound(cpu1.server - cpu0.server),
      pull_cpu_s: cpuRound(cpu2.client - cpu1.client + cpu2.server - cpu1.server), pull_server_cpu_s: cpuRound(cpu2.server - cpu1.server),
    });
    fig.server_rss_peak_sampled_mib = mib(sampler.stop().peakKiB * 1024);
    fig.server_vm_hwm_mib = mib((procMemory(server.pid)?.hwmKiB ?? NaN) * 1024);

    if (round === 0) {
      // Snapshot export with content (streamed): the server's peak above its RSS before the request.
      log('snapshot export with content');
      resetPeak(server.pid);
      const idle = procMemory(server.pid)?.rssKiB ?? NaN;
      const t0 = performance.now();
      const exp = await fetch(`${server.url}/v1/native/repository-authorities/${repo}/snapshots/${pushed.snapshot_id}`);
      let exportBytes = 0;
      for await (const chunk of exp.body as unknown as AsyncIterable<Uint8Array>) exportBytes += chunk.length;
      Object.assign(fig, {
        export_status: exp.status, export_mib: mib(exportBytes), export_ms: Math.round(performance.now() - t0),
        export_hwm_above_idle_mib: mib(((procMemory(server.pid)?.hwmKiB ?? NaN) - idle) * 1024),
      });

      const diff = await runTimed('diff', ['-r', '-q', treeDir, out]);
      fig.pull_matches = diff.code === 0;
      if (diff.code !== 0) fail('cairn pull: pulled tree differs from the source', new Error(`diff -r exit ${diff.code}\n${(diff.stdout + diff.stderr).split('\n').slice(0, 20).join('\n')}`));
      fig.store_bytes = await dirBytes(path.join(data, 'repositories', String(repo)));
      fig.store_mib = mib(fig.store_bytes as number);
    }
  } catch (err) {
    fail(`cairn push/pull (round ${round + 1})`, err);
  } finally {
    await stopServer('cairn server (push/pull)', server);
    // Outputs are removed after all rounds (see stepRounds), not here.
  }
  return fig;
}

/**
 * Deduplicated upload: change one file of the tree and push it to a new line (no parent) of
 * round 1's repository. The client learns the blobs the server holds from the other line
 * heads, so only the changed blob and the trees on its path should travel.
 */
async function stepDedup(tree: { bytes: number }): Promise<void> {
  const fig: Fig = {};
  bench.dedup = fig;
  const data = path.join(ROOT, 'cairn-data-0');
  const repo = ((bench.rounds as Fig[] | undefined)?.[0]?.repo as number | undefined) ?? 0;
  let server: ChildServer | null = null;
  const file = path.join(treeDir, 'bench-one-change.txt');
  try {
    server = await startCairn(CLI, data);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, `one changed file ${Date.now()}\n`);
    log('cairn push of a one-file change to a new line');
    const push = await runOk(process.execPath, [CLI, 'push', '--server', server.url, '--repo', String(repo), '--line', 'one-change', treeDir], { timeoutMs: COMMAND_TIMEOUT_MS });
    const pushed = JSON.parse(push.stdout.trim().split('\n').at(-1)!);
    Object.assign(fig, {
      push_ms: Math.round(push.ms), uploaded_packs: pushed.uploaded_packs, uploaded_bytes: pushed.uploaded_bytes,
      tree_bytes: tree.bytes, percent_of_tree: round((100 * pushed.uploaded_bytes) / tree.bytes, 4),
    });
  } catch (err) {
    fail('dedup push', err);
  } finally {
    rmSync(file, { force: true });
    await stopServer('cairn server (dedup)', server);
  }
}

/**
 * Resumed upload: push the tree to a fresh repository and kill the client (SIGKILL) once about
 * half of its packs have arrived (staged); push again and count what the second push sent.
 */
async function stepResume(): Promise<void> {
  const fig: Fig = {};
  bench.resume = fig;
  const data = path.join(ROOT, 'cairn-data-resume');
  let server: ChildServer | null = null;
  try {
    server = await startCairn(CLI, data);
    const repo = await registerRepository(server.url, 'bench-resume');
    const staging = path.join(data, 'repositories', String(repo), 'staging', 'objects');
    const { readdirSync } = await import('node:fs');
    const { spawn } = await import('node:child_process');
    const packsIn = (dir: string) => { try { return readdirSync(dir).filter((f) => f.endsWith('.pack')).length; } catch { return 0; } };
    const count = () => packsIn(staging);
    const repoDir = path.join(data, 'repositories', String(repo));
    // Round 1 committed the same tree: its object-pack count is what a whole push sends.
    const expected = Math.max(2, ((bench.rounds as Fig[] | undefined)?.[0]?.uploaded_packs as number | undefined ?? 3) - 1);
    const want = Math.max(1, Math.floor(expected / 2));
    log(`cairn push, killed after ${want} of ~${expected} object packs arrived`);
    const child = spawn(process.execPath, [CLI, 'push', '--server', server.url, '--repo', String(repo), '--line', 'dev', treeDir], { stdio: 'ignore' });
    const exited = new Promise((r) => child.once('exit', r));
    const deadline = Date.now() + COMMAND_TIMEOUT_MS;
    while (count() < want && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    child.kill('SIGKILL');
    await exited;
    await new Promise((r) => setTimeout(r, 300)); // let the server finish or drop the upload in flight
    const staged = count();
    const stagedTotal = staged + packsIn(path.join(repoDir, 'staging', 'trees'));
    log('cairn push again (resume)');
    const again = await runOk(process.execPath, [CLI, 'push', '--server', server.url, '--repo', String(repo), '--line', 'dev', treeDir], { timeoutMs: COMMAND_TIMEOUT_MS });
    const pushed = JSON.parse(again.stdout.trim().split('\n').at(-1)!);
    const committed = packsIn(path.join(repoDir, 'packs', 'objects'));
    const committedTotal = committed + packsIn(path.join(repoDir, 'packs', 'trees'));
    Object.assign(fig, {
      killed_after_staged_packs: stagedTotal, committed_object_packs: committed, committed_packs: committedTotal,
      resumed_uploaded_packs: pushed.uploaded_packs, resumed_uploaded_bytes: pushed.uploaded_bytes,
      // The second push sends exactly the packs that had not arrived (object and tree packs).
      only_missing_sent: pushed.uploaded_packs === committedTotal - stagedTotal,
    });
  } catch (err) {
    fail('resume push', err);
  } finally {
    await stopServer('cairn server (resume)', server);
    rmSync(data, { recursive: true, force: true });
  }
}

const GIT_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'cairn bench', GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'cairn bench', GIT_COMMITTER_EMAIL: 'bench@example.invalid',
  GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z', GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z',
  GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0',
  GIT_DIR: undefined, GIT_WORK_TREE: undefined, GIT_INDEX_FILE: undefined, GIT_OBJECT_DIRECTORY: undefined,
};
// Passed on every command; `git -c` settings reach the spawned receive-pack/upload-pack too.
const GIT_CFG = ['-c', 'gc.auto=0', '-c', 'receive.autogc=false', '-c', 'maintenance.auto=false', '-c', 'init.defaultBranch=main', '-c', 'core.autocrlf=false'];

/** One round of git: fresh git dir and bare repository, add+commit+push, then clone. */
async function stepGit(tree: { bytes: number }, round: number): Promise<Fig> {
  const fig: Fig = { round };
  const gitDir = path.join(ROOT, `git-work-${round}.git`); // the tree itself is the work tree; nothing is written into it
  const bare = path.join(ROOT, `git-bare-${round}.git`);
  const out = path.join(ROOT, `git-out-${round}`);
  const git = (args: string[], withWork = true) =>
    runOk('git', [...GIT_CFG, ...(withWork ? [`--git-dir=${gitDir}`, `--work-tree=${treeDir}`] : []), ...args], { env: GIT_ENV, cwd: ROOT, timeoutMs: COMMAND_TIMEOUT_MS });
  try {
    rmSync(gitDir, { recursive: true, force: true });
    rmSync(bare, { recursive: true, force: true });
    fig.version = (await runOk('git', ['--version'], { env: GIT_ENV })).stdout.trim();
    await git(['init', '-q']);
    await git(['init', '-q', '--bare', bare], false);
    log(`round ${round + 1}: git add+commit+push`);
    const cpu0 = cpuSeconds('self', true);
    const add = await git(['add', '-A']);
    const commit = await git(['commit', '-q', '-m', 'x']);
    const push = await git(['push', '-q', `file://${bare}`, 'HEAD:refs/heads/main']);
    const cpu1 = cpuSeconds('self', true);
    const total = add.ms + commit.ms + push.ms;
    Object.assign(fig, {
      add_ms: Math.round(add.ms), commit_ms: Math.round(commit.ms), push_ms: Math.round(push.ms),
      add_commit_push_ms: Math.round(total), add_commit_push_mib_s: mibps(tree.bytes, total),
    });
    log(`round ${round + 1}: git clone`);
    const clone = await git(['clone', '-q', `file://${bare}`, out], false);
    Object.assign(fig, {
      clone_ms: Math.round(clone.ms), clone_mib_s: mibps(tree.bytes, clone.ms),
      add_commit_push_cpu_s: cpuRound(cpu1 - cpu0), clone_cpu_s: cpuRound(cpuSeconds('self', true) - cpu1),
    });
    if (round === 0) {
      const diff = await runTimed('diff', ['-r', '-q', '-x', '.git', treeDir, out]);
      fig.clone_matches = diff.code === 0;
      if (diff.code !== 0) fail('git clone: cloned tree differs from the source', new Error(`diff -r exit ${diff.code}\n${(diff.stdout + diff.stderr).split('\n').slice(0, 20).join('\n')}`));
      fig.bare_repo_bytes = await dirBytes(bare);
      fig.bare_objects_bytes = await dirBytes(path.join(bare, 'objects'));
      fig.bare_repo_mib = mib(fig.bare_repo_bytes as number);
      fig.work_git_dir_bytes = await dirBytes(gitDir); // loose objects written by `git add`
    }
  } catch (err) {
    fail(`git (round ${round + 1})`, err);
  }
  return fig;
}

/** CPU seconds to two decimals (a name apart from `round`, which round-numbered steps shadow). */
const cpuRound = (x: number) => round(x, 2);

const median = (xs: (number | null | undefined)[]): number | null => {
  const v = xs.filter((x): x is number => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};

/** Rounds side by side; round 1's figures stand as `bench.cairn` / `bench.git`, medians beside. */
async function stepRounds(tree: { bytes: number }): Promise<void> {
  const rounds: Fig[] = [];
  const gitRounds: Fig[] = [];
  bench.rounds = rounds;
  bench.git_rounds = gitRounds;
  // Nothing is deleted while the rounds run. ext4 skips inodes freed in the last 5 s (305 s while
  // their inode-table block is dirty) when it allocates new ones, scanning past each of them on
  // every create (recently_deleted() in fs/ext4/ialloc.c, seen with perf): a checkout started
  // within minutes of removing the previous round's 5,000 files cost 3-4 s of kernel time
  // instead of ~0.15 s, whichever tool ran it. So each round writes into fresh directories, and
  // all of them are removed once the rounds are over.
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate the order so a burst of load on the shared machine does not favour one side.
    if (r % 2 === 0) {
      rounds.push(await stepCairn(tree, r));
      gitRounds.push(await stepGit(tree, r));
    } else {
      gitRounds.push(await stepGit(tree, r));
      rounds.push(await stepCairn(tree, r));
    }
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const name of [`cairn-out-${r}`, `git-work-${r}.git`, `git-bare-${r}.git`, `git-out-${r}`]) rmSync(path.join(ROOT, name), { recursive: true, force: true });
    if (r !== 0) rmSync(path.join(ROOT, `cairn-data-${r}`), { recursive: true, force: true });
  }
  bench.cairn = { ...rounds[0], push_ms: median(rounds.map((x) => x.push_ms as number)), pull_ms: median(rounds.map((x) => x.pull_ms as number)), server_vm_hwm_mib: Math.max(...rounds.map((x) => (x.server_vm_hwm_mib as number) ?? 0)) };
  const c = bench.cairn as Fig;
  c.push_mib_s = mibps(tree.bytes, c.push_ms as number);
  c.pull_mib_s = mibps(tree.bytes, c.pull_ms as number);
  bench.git = {
    ...gitRounds[0],
    add_ms: median(gitRounds.map((x) => x.add_ms as number)), commit_ms: median(gitRounds.map((x) => x.commit_ms as number)), push_ms: median(gitRounds.map((x) => x.push_ms as number)),
    add_commit_push_ms: median(gitRounds.map((x) => x.add_commit_push_ms as number)), clone_ms: median(gitRounds.map((x) => x.clone_ms as number)),
  };
  const g = bench.git as Fig;
  g.add_commit_push_mib_s = mibps(tree.bytes, g.add_commit_push_ms as number);
  g.clone_mib_s = mibps(tree.bytes, g.clone_ms as number);
}

interface UploadFig {
  status?: number;
  ms?: number;
  mib_s?: number | null;
  rss_idle_mib?: number | null;
  rss_peak_sampled_mib?: number | null;
  rss_samples?: number;
  vm_hwm_mib?: number | null;
  response?: unknown;
}

async function measureUpload(server: ChildServer, url: string, file: string): Promise<{ fig: UploadFig; result: UploadResult }> {
  const fig: UploadFig = { rss_idle_mib: mib((procMemory(server.pid)?.rssKiB ?? NaN) * 1024) };
  const sampler = sampleRss(server.pid, 50);
  let result: UploadResult;
  try {
    result = await uploadFile(url, file, OBJECT_PACK_MEDIA);
  } finally {
    const s = sampler.stop();
    fig.rss_peak_sampled_mib = mib(s.peakKiB * 1024);
    fig.rss_samples = s.samples;
    fig.vm_hwm_mib = mib((procMemory(server.pid)?.hwmKiB ?? NaN) * 1024);
  }
  fig.status = result.status;
  fig.ms = Math.round(result.ms);
  fig.mib_s = mibps(result.bytes, result.ms);
  try { fig.response = JSON.parse(result.body); } catch { fig.response = result.body.slice(0, 500); }
  return { fig, result };
}

async function stepBigPack(): Promise<void> {
  const fig: Fig = {};
  bench.big_pack = fig;
  const file = path.join(ROOT, 'big.pack');
  const total = Math.round(1024 * MiB * SCALE);
  const objectSize = Math.max(64 * 1024, Math.min(16 * MiB, Math.floor(total / 4)));
  const objects = Math.max(1, Math.round(total / objectSize));
  let packId: string;
  let byteLength: number;
  try {
    log(`building a ${mib(objects * objectSize)} MiB object pack (${objects} × ${mib(objectSize)} MiB objects) on disk`);
    const pack = await buildBigPack(file, { objects, objectSize, seed: SEED });
    packId = pack.packId;
    byteLength = pack.byteLength;
    Object.assign(fig, {
      pack_id: pack.packId, byte_length: pack.byteLength, mib: mib(pack.byteLength), objects: pack.objects, object_mib: mib(objectSize),
      raw_bytes: pack.rawBytes, build_ms: Math.round(pack.buildMs), node_sha256_ms: Math.round(pack.hashMs), node_sha256_mib_s: mibps(pack.byteLength, pack.hashMs),
    });
  } catch (err) {
    fail('build pack', err);
    return;
  }

  try {
    log('sha256sum');
    const sum = await runOk('sha256sum', [file]);
    const digest = sum.stdout.split(/\s/)[0];
    Object.assign(fig, { sha256sum_ms: Math.round(sum.ms), sha256sum_mib_s: mibps(byteLength, sum.ms), sha256sum_matches: digest === packId });
    if (digest !== packId) fail('sha256sum', new Error(`sha256sum says ${digest}, node computed ${packId}`));
  } catch (err) {
    fail('sha256sum', err);
  }

  // cairn: a fresh server, one repository, one PUT of the pack.
  let server: ChildServer | null = null;
  const data = path.join(ROOT, 'cairn-big-data');
  try {
    server = await startCairn(CLI, data);
    const repo = await registerRepository(server.url, 'bench-big');
    log('upload to cairn');
    const { fig: up } = await measureUpload(server, `${server.url}/v1/native/repository-authorities/${repo}${SYNC}/object-packs/${packId}`, file);
    fig.cairn = up;
    const res = up.response as { pack_id?: string; byte_length?: number } | undefined;
    if (up.status !== 200 && up.status !== 201) fail('cairn pack upload', new Error(`HTTP ${up.status}: ${JSON.stringify(up.response)}`));
    else if (res?.pack_id !== packId || res?.byte_length !== byteLength) fail('cairn pack upload', new Error(`unexpected response ${JSON.stringify(res)}`));
  } catch (err) {
    fail('cairn pack upload', err);
  } finally {
    await stopServer('cairn server (pack upload)', server);
    rmSync(data, { recursive: true, force: true });
  }

  // Baseline: bare node:http, sha256 + write + fsync.
  let baseline: ChildServer | null = null;
  const dir = path.join(ROOT, 'baseline-data');
  try {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    baseline = await startBaseline(BASELINE_SCRIPT, dir);
    log('upload to the node:http baseline');
    const { fig: up } = await measureUpload(baseline, `${baseline.url}/upload`, file);
    fig.baseline = up;
    const res = up.response as { sha256?: string } | undefined;
    if (up.status !== 201 || res?.sha256 !== packId) fail('baseline upload', new Error(`HTTP ${up.status}: ${JSON.stringify(up.response)}`));
  } catch (err) {
    fail('baseline upload', err);
  } finally {
    await stopServer('baseline server', baseline);
    rmSync(dir, { recursive: true, force: true });
    rmSync(file, { force: true });
  }
}

/** Reset VmHWM (Linux ≥ 4.0) so the next reading covers what follows only. */
function resetPeak(pid: number): void {
  try { writeFileSync(`/proc/${pid}/clear_refs`, '5'); } catch { /* not Linux: figures include earlier peaks */ }
}

const GET_CONNECTIONS = 32;
const GET_SECONDS = Number(process.env.BENCH_GET_SECONDS || 2);
const GET_ROUNDS = Number(process.env.BENCH_GET_ROUNDS || 7);

/** With 2+ CPUs and taskset, the server under test runs on CPU 0 and the load generator on CPU 1. */
const PIN = os.cpus().length >= 2 && (() => { try { execFileSync('taskset', ['-c', '0', 'true']); return true; } catch { return false; } })();

/** CPU time (user + system) a process has used, in ms (from /proc/PID/stat, clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

/** One measured run against `server`: req/s, and the server's CPU time per request (µs). */
async function loadRun(url: string, server: ChildServer, seconds = GET_SECONDS, authorization?: string): Promise<{ rps: number; cpuUs: number; non2xx: number; errors: number }> {
  const args = [LOAD_SCRIPT, url, String(GET_CONNECTIONS), String(seconds), '0.5'];
  const cpu0 = cpuMs(server.pid);
  const opts = authorization ? { env: { ...process.env, LOAD_AUTHORIZATION: authorization } } : {};
  const r = PIN ? await runOk('taskset', ['-c', '1', process.execPath, ...args], opts) : await runOk(process.execPath, args, opts);
  const result = JSON.parse(r.stdout.trim());
  // The CPU window also covers the 0.5 s warm-up: count its requests at the measured rate.
  const cpuUs = ((cpuMs(server.pid) - cpu0) * 1000) / (result.rps * (seconds + 0.5));
  return { ...result, cpuUs };
}

/**
 * Per-request overhead: `GET {repo}/lines` on cairn (request log on, at info, to /dev/null)
 * against a bare node:http server answering the same bytes, 32 keep-alive connections on
 * 127.0.0.1, alternating rounds (cairn, baseline, cairn, ...) so both see the same machine.
 */
async function stepGetRatio(): Promise<void> {
  const fig: Fig = {};
  bench.get_lines = fig;
  const data = path.join(ROOT, 'cairn-get-data');
  const dir = path.join(ROOT, 'baseline-get');
  let cairn: ChildServer | null = null;
  let baseline: ChildServer | null = null;
  try {
    cairn = await startCairn(CLI, data, { logLevel: 'info', cpus: PIN ? '0' : undefined });
    const repo = await registerRepository(cairn.url, 'bench-get');
    for (const name of ['dev', 'main', 'release']) {
      const res = await fetch(`${cairn.url}/v1/native/repository-authorities/${repo}/lines/${name}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' });
      await res.arrayBuffer();
    }
    const url = `${cairn.url}/v1/native/repository-authorities/${repo}/lines`;
    const body = Buffer.from(await (await fetch(url)).arrayBuffer());
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'body.json'), body);
    baseline = await startBaseline(BASELINE_SCRIPT, dir, { GET_BODY_FILE: path.join(dir, 'body.json') }, PIN ? '0' : undefined);
    const rounds: { cairn: number; baseline: number; ratio: number; cpu_ratio: number }[] = [];
    const baseUrl = `${baseline.url}/v1/native/repository-authorities/${repo}/lines`;
    log(`GET {repo}/lines: warm-up, then ${GET_ROUNDS} rounds of ${GET_SECONDS} s each, cairn and node:http alternating`);
    await loadRun(url, cairn, 2);
    await loadRun(baseUrl, baseline, 2);
    let bad = 0;
    for (let i = 0; i < GET_ROUNDS; i++) {
      const c = await loadRun(url, cairn);
      const b = await loadRun(baseUrl, baseline);
      bad += c.non2xx + c.errors + b.non2xx + b.errors;
      rounds.push({ cairn: Math.round(c.rps), baseline: Math.round(b.rps), ratio: round(c.rps / b.rps)!, cpu_ratio: round(b.cpuUs / c.cpuUs)! });
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const ratios = rounds.map((r) => r.ratio);
    const cpuRatios = rounds.map((r) => r.cpu_ratio);
    Object.assign(fig, {
      body_bytes: body.length, connections: GET_CONNECTIONS, seconds: GET_SECONDS, pinned: PIN, rounds,
      ratio_median: median(ratios), ratio_min: Math.min(...ratios), ratio_max: Math.max(...ratios),
      cpu_ratio_median: median(cpuRatios), cpu_ratio_min: Math.min(...cpuRatios), cpu_ratio_max: Math.max(...cpuRatios),
      failed_requests: bad, cairn_vm_hwm_mib: mib((procMemory(cairn.pid)?.hwmKiB ?? NaN) * 1024),
    });
    if (bad) fail('GET ratio', new Error(`${bad} requests failed or were not 2xx`));
  } catch (err) {
    fail('GET ratio', err);
  } finally {
    await stopServer('cairn server (GET ratio)', cairn);
    await stopServer('baseline server (GET ratio)', baseline);
    rmSync(data, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The access gate's per-request cost: the same `GET {repo}/lines` on cairn without an auth mode,
 * on cairn with `--auth tokens` and a Bearer token (a reader's, scopes read), and on a bare
 * node:http server answering the same bytes, rounds alternating in one run.
 */
async function stepAuthCost(): Promise<void> {
  const fig: Fig = {};
  bench.auth_cost = fig;
  const open = path.join(ROOT, 'cairn-auth-open');
  const gated = path.join(ROOT, 'cairn-auth-tokens');
  const dir = path.join(ROOT, 'baseline-auth');
  const servers: Record<'open' | 'tokens' | 'baseline', ChildServer | null> = { open: null, tokens: null, baseline: null };
  try {
    // The token's account is made offline, as `cairn admin` does before the server starts.
    mkdirSync(gated, { recursive: true });
    const book = AccessBook.open(new Layout(gated));
    let token: string;
    try {
      await book.addAccount(null, 'bench', true);
      token = (await book.createToken(null, 'bench', 'bench', ['read', 'write', 'admin'])).token;
    } finally {
      await book.close();
    }
    const bearer = `Bearer ${token}`;
    servers.open = await startCairn(CLI, open, { logLevel: 'info', cpus: PIN ? '0' : undefined });
    servers.tokens = await startCairn(CLI, gated, { logLevel: 'info', cpus: PIN ? '0' : undefined, serveArgs: ['--auth', 'tokens'] });
    const urls: Record<string, string> = {};
    let body = Buffer.alloc(0);
    for (const [name, server] of [['open', servers.open], ['tokens', servers.tokens]] as const) {
      const headers = { 'content-type': 'application/json', ...(name === 'tokens' ? { authorization: bearer } : {}) };
      const reg = await fetch(`${server.url}/v1/native/repository-authorities`, { method: 'POST', headers, body: JSON.stringify({ repository_name: 'bench-auth', namespace: '', policy_flags: 0 }) });
      if (reg.status !== 201 && reg.status !== 200) throw new Error(`register on ${name}: HTTP ${reg.status} ${await reg.text()}`);
      const repo = ((await reg.json()) as { repository: { repository_index: number } }).repository.repository_index;
      for (const line of ['dev', 'main', 'release']) {
        const res = await fetch(`${server.url}/v1/native/repository-authorities/${repo}/lines/${line}`, { method: 'PUT', headers, body: '{}' });
        await res.arrayBuffer();
      }
      urls[name] = `${server.url}/v1/native/repository-authorities/${repo}/lines`;
      const got = await fetch(urls[name], { headers });
      if (got.status !== 200) throw new Error(`GET lines on ${name}: HTTP ${got.status}`);
      const bytes = Buffer.from(await got.arrayBuffer());
      if (name === 'open') body = bytes;
    }
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'body.json'), body);
    servers.baseline = await startBaseline(BASELINE_SCRIPT, dir, { GET_BODY_FILE: path.join(dir, 'body.json') }, PIN ? '0' : undefined);
    urls.baseline = `${servers.baseline.url}/v1/native/repository-authorities/0/lines`;
    log(`access gate cost: GET {repo}/lines, ${GET_ROUNDS} rounds of ${GET_SECONDS} s, cairn without auth, cairn with a token, node:http alternating`);
    await loadRun(urls.open, servers.open, 1);
    await loadRun(urls.tokens, servers.tokens, 1, bearer);
    await loadRun(urls.baseline, servers.baseline, 1);
    let bad = 0;
    const rounds: { open: number; tokens: number; baseline: number; cpu_us_open: number; cpu_us_tokens: number }[] = [];
    for (let i = 0; i < GET_ROUNDS; i++) {
      const o = await loadRun(urls.open, servers.open);
      const t = await loadRun(urls.tokens, servers.tokens, GET_SECONDS, bearer);
      const b = await loadRun(urls.baseline, servers.baseline);
      bad += o.non2xx + o.errors + t.non2xx + t.errors + b.non2xx + b.errors;
      rounds.push({ open: Math.round(o.rps), tokens: Math.round(t.rps), baseline: Math.round(b.rps), cpu_us_open: round(o.cpuUs, 1)!, cpu_us_tokens: round(t.cpuUs, 1)! });
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    Object.assign(fig, {
      body_bytes: body.length, rounds,
      ratio_open_median: round(median(rounds.map((r) => r.open / r.baseline))),
      ratio_tokens_median: round(median(rounds.map((r) => r.tokens / r.baseline))),
      tokens_over_open_median: round(median(rounds.map((r) => r.tokens / r.open))),
      cpu_us_open_median: median(rounds.map((r) => r.cpu_us_open)),
      cpu_us_tokens_median: median(rounds.map((r) => r.cpu_us_tokens)),
      failed_requests: bad,
    });
    if (bad) fail('access gate cost', new Error(`${bad} requests failed or were not 2xx`));
  } catch (err) {
    fail('access gate cost', err);
  } finally {
    await stopServer('cairn server (auth cost, open)', servers.open);
    await stopServer('cairn server (auth cost, tokens)', servers.tokens);
    await stopServer('baseline server (auth cost)', servers.baseline);
    for (const d of [open, gated, dir]) rmSync(d, { recursive: true, force: true });
  }
}

/** Server memory while it refuses hostile bodies, each after a VmHWM reset. */
async function stepHostile(): Promise<void> {
  const fig: Fig = {};
  bench.hostile = fig;
  const data = path.join(ROOT, 'cairn-hostile-data');
  let server: ChildServer | null = null;
  try {
    server = await startCairn(CLI, data);
    const repo = await registerRepository(server.url, 'bench-hostile');
    const sync = `${server.url}/v1/native/repository-authorities/${repo}${SYNC}`;
    const pid = server.pid;
    const measure = async (name: string, send: () => Promise<number[]>) => {
      resetPeak(pid);
      const idle = procMemory(pid)?.rssKiB ?? NaN;
      const statuses = await send();
      fig[name] = { statuses: [...new Set(statuses)], hwm_above_idle_mib: mib(((procMemory(pid)?.hwmKiB ?? NaN) - idle) * 1024) };
    };
    log('hostile bodies: gzip of 200 million zeros, 8 parallel bad packs');
    const zeros = gzipSync(Buffer.concat([Buffer.from('{"snapshot_ids":['), Buffer.from('0,'.repeat(200_000_000 / 8)), Buffer.from('0]}')]), { level: 9 });
    await measure('gzip_25m_zeros_to_plan', async () => {
      const r = await fetch(`${sync}/plan`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: zeros });
      await r.arrayBuffer();
      return [r.status];
    });
    const bad = Buffer.alloc(4 * MiB, 7);
    bad.writeUInt32LE(0x184d2a5c, 0);
    bad.writeUInt32LE(16 + 4 + 64 * 4_000_000, 4);
    bad.write('NOTAPACK', 8, 'ascii');
    await measure('eight_bad_packs', () => Promise.all(Array.from({ length: 8 }, async () => {
      const r = await fetch(`${sync}/object-packs/${randomBytes(32).toString('hex')}`, { method: 'PUT', headers: { 'content-type': OBJECT_PACK_MEDIA }, body: bad });
      await r.arrayBuffer();
      return r.status;
    })));
    if (server.proc.exitCode !== null) fail('hostile bodies', new Error('the server exited'));
  } catch (err) {
    fail('hostile bodies', err);
  } finally {
    await stopServer('cairn server (hostile bodies)', server);
    rmSync(data, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- report

/** Rows of label/value; `columns` (optional) is printed above the values, aligned with them. */
function table(title: string, rows: [string, unknown][], columns?: string): string {
  const shown = rows.map(([k, v]) => [k, v === undefined || v === null ? '—' : String(v)] as const);
  const w = Math.max(...shown.map(([k]) => k.length));
  const head = columns ? `${title.padEnd(w + 4)}${columns}` : title;
  return [`\n${head}`, `${'─'.repeat(head.length)}`, ...shown.map(([k, v]) => `  ${k.padEnd(w)}  ${v}`)].join('\n');
}

/** Median over the rounds of a CPU figure (cairn rounds, or git rounds with `git`). */
function cpuMedian(key: string, git = false): number | null {
  return median((((git ? bench.git_rounds : bench.rounds) ?? []) as Fig[]).map((x) => x[key] as number));
}
const secsOf = (s: number | null) => (s == null ? '—' : `${s.toFixed(2)} s`);
const cpuPair = (total: number | null, server: number | null) => `${secsOf(total)} (${secsOf(server)})`;

function times(x: number | null): string {
  if (x == null) return '—';
  return x >= 1 ? `${x.toFixed(2)}× (cairn faster)` : `${x.toFixed(2)}× (cairn ${(1 / x).toFixed(2)}× slower)`;
}

function report(): void {
  const t = (bench.tree ?? {}) as Fig;
  const c = (bench.cairn ?? {}) as Fig;
  const g = (bench.git ?? {}) as Fig;
  const p = (bench.big_pack ?? {}) as Fig;
  const pc = (p.cairn ?? {}) as UploadFig;
  const pb = (p.baseline ?? {}) as UploadFig;
  const d = (bench.dedup ?? {}) as Fig;
  const rs = (bench.resume ?? {}) as Fig;
  const n = (v: unknown) => (typeof v === 'number' ? v : null);

  const ratios = {
    push_git_over_cairn: ratio(n(g.add_commit_push_ms), n(c.push_ms)),
    pull_git_clone_over_cairn: ratio(n(g.clone_ms), n(c.pull_ms)),
    store_cairn_over_git_bare: ratio(n(c.store_bytes), n(g.bare_repo_bytes)),
    store_cairn_over_git_objects: ratio(n(c.store_bytes), n(g.bare_objects_bytes)),
    upload_mib_s_cairn_over_baseline: ratio(n(pc.mib_s), n(pb.mib_s)),
    upload_hwm_cairn_over_baseline: ratio(n(pc.vm_hwm_mib), n(pb.vm_hwm_mib)),
  };
  bench.ratios = ratios;
  const mbs = (v: unknown) => (v == null ? '—' : `${v} MiB/s`);
  const mb = (v: unknown) => (v == null ? '—' : `${v} MiB`);

  const out = [
    `cairn bench — scale ${SCALE}, seed ${SEED}, node ${process.version}, ${os.cpus().length} CPUs, ${g.version ?? 'git ?'}`,
    '(MiB = 2^20 bytes; times are wall-clock of the whole child process, including its start-up)',
    table('Tree', [
      ['files', t.files], ['bytes', t.bytes != null ? `${t.bytes} (${t.mib} MiB)` : null], ['directories (max depth)', t.directories != null ? `${t.directories} (${t.maxDepth})` : null],
      ['binary files (bytes)', t.binaryFiles != null ? `${t.binaryFiles} (${mib(n(t.binaryBytes) ?? 0)} MiB)` : null], ['identical copies', t.duplicateFiles], ['generated in', secs(n(t.generate_ms))],
    ]),
    table(`Rounds (side by side, order alternating; ${ROUNDS} rounds)`, ((bench.rounds ?? []) as Fig[]).map((c, i) => {
      const g = ((bench.git_rounds ?? []) as Fig[])[i] ?? {};
      return [`round ${i + 1}`,
        `push ${secs(n(c.push_ms))} vs git ${secs(n(g.add_commit_push_ms))} = ${times(ratio(n(g.add_commit_push_ms), n(c.push_ms)))};  `
        + `pull ${secs(n(c.pull_ms))} vs clone ${secs(n(g.clone_ms))} = ${times(ratio(n(g.clone_ms), n(c.pull_ms)))};  server peak RSS ${mb(c.server_vm_hwm_mib)}`] as [string, unknown];
    })),
    table('Transfer (medians of the rounds)', [
      ['cairn push', `${secs(n(c.push_ms)).padEnd(10)}  ${mbs(c.push_mib_s)}`],
      ['cairn pull', `${secs(n(c.pull_ms)).padEnd(10)}  ${mbs(c.pull_mib_s)}   tree matches: ${c.pull_matches ?? '—'}`],
      ['git add', secs(n(g.add_ms))],
      ['git commit', secs(n(g.commit_ms))],
      ['git push (file://)', secs(n(g.push_ms))],
      ['git add+commit+push', `${secs(n(g.add_commit_push_ms)).padEnd(10)}  ${mbs(g.add_commit_push_mib_s)}`],
      ['git clone (file://)', `${secs(n(g.clone_ms)).padEnd(10)}  ${mbs(g.clone_mib_s)}   tree matches: ${g.clone_matches ?? '—'}`],
      ['push: git add+commit+push / cairn push', times(ratios.push_git_over_cairn)],
      ['pull: git clone / cairn pull', times(ratios.pull_git_clone_over_cairn)],
      ['cairn push uploaded', c.uploaded_bytes != null ? `${mib(n(c.uploaded_bytes)!)} MiB in ${c.uploaded_packs} pack(s)` : null],
      ['cairn server peak RSS (push+pull, max of rounds)', mb(c.server_vm_hwm_mib)],
      ['push: median of per-round ratios', times(median(((bench.rounds ?? []) as Fig[]).map((x, i) => ratio(n(((bench.git_rounds ?? []) as Fig[])[i]?.add_commit_push_ms), n(x.push_ms)))))],
      ['pull: median of per-round ratios', times(median(((bench.rounds ?? []) as Fig[]).map((x, i) => ratio(n(((bench.git_rounds ?? []) as Fig[])[i]?.clone_ms), n(x.pull_ms)))))],
    ], 'time        throughput'),
    // CPU seconds (client + server for cairn; git with the subprocesses it ran): steadier than
    // wall time when other work shares the machine, and what two cores have to split.
    table('CPU time (user + system, medians of the rounds)', [
      ['cairn push (of which server)', cpuPair(cpuMedian('push_cpu_s'), cpuMedian('push_server_cpu_s'))],
      ['git add+commit+push', secsOf(cpuMedian('add_commit_push_cpu_s', true))],
      ['cairn pull (of which server)', cpuPair(cpuMedian('pull_cpu_s'), cpuMedian('pull_server_cpu_s'))],
      ['git clone', secsOf(cpuMedian('clone_cpu_s', true))],
      ['push CPU: git / cairn', times(ratio(cpuMedian('add_commit_push_cpu_s', true), cpuMedian('push_cpu_s')))],
      ['pull CPU: git clone / cairn', times(ratio(cpuMedian('clone_cpu_s', true), cpuMedian('pull_cpu_s')))],
    ]),
    table('Deduplicated and resumed uploads', [
      ['one-file change pushed to a new line', d.uploaded_bytes != null ? `${d.uploaded_bytes} bytes in ${d.uploaded_packs} pack(s) = ${d.percent_of_tree}% of the tree (target < 1%)` : null],
      ['push killed half-way: packs staged before the kill', rs.killed_after_staged_packs],
      ['resumed push sent', rs.resumed_uploaded_packs != null ? `${rs.resumed_uploaded_packs} pack(s), ${mib(n(rs.resumed_uploaded_bytes) ?? 0)} MiB, of ${rs.committed_packs} packs committed` : null],
      ['only the packs that had not arrived were sent', rs.only_missing_sent],
    ]),
    table('On disk (sum of file sizes)', [
      ['cairn repositories/N', c.store_bytes != null ? `${c.store_bytes} (${c.store_mib} MiB)` : null],
      ['git bare repo (du -sb)', g.bare_repo_bytes != null ? `${g.bare_repo_bytes} (${g.bare_repo_mib} MiB)` : null],
      ['git bare objects/', g.bare_objects_bytes ?? null],
      ['cairn / git bare repo', ratios.store_cairn_over_git_bare != null ? `${ratios.store_cairn_over_git_bare}×` : null],
      ['cairn / git objects', ratios.store_cairn_over_git_objects != null ? `${ratios.store_cairn_over_git_objects}×` : null],
    ]),
    table('Export manifest hashing (exportFiles vs sha256sum, same files)', (['repository', 'tree'] as const).flatMap((k) => {
      const m = ((bench.manifest ?? {}) as Fig)[k] as Fig | undefined;
      if (!m) return [];
      return [
        [`${k}: ${m.files} files, ${m.mib} MiB`, `cairn ${mbs(m.cairn_mib_s)}  sha256sum ${mbs(m.sha256sum_mib_s)}  ratio ${m.cairn_over_sha256sum}×  digests agree: ${m.digests_agree}`],
      ] as [string, unknown][];
    })),
    table(`Single object pack upload (${p.mib ?? '?'} MiB, ${p.objects ?? '?'} × ${p.object_mib ?? '?'} MiB objects)`, [
      ['pack built on disk in', secs(n(p.build_ms))],
      ['sha256sum', `${secs(n(p.sha256sum_ms)).padEnd(10)}  ${mbs(p.sha256sum_mib_s)}`],
      ['node sha256 (stream)', `${secs(n(p.node_sha256_ms)).padEnd(10)}  ${mbs(p.node_sha256_mib_s)}`],
      ['cairn PUT object-pack', `${secs(n(pc.ms)).padEnd(10)}  ${mbs(pc.mib_s)}   HTTP ${pc.status ?? '—'}`],
      ['  server RSS idle / peak sampled / VmHWM', `${mb(pc.rss_idle_mib)} / ${mb(pc.rss_peak_sampled_mib)} / ${mb(pc.vm_hwm_mib)}`],
      ['baseline node:http (sha256+write+fsync)', `${secs(n(pb.ms)).padEnd(10)}  ${mbs(pb.mib_s)}   HTTP ${pb.status ?? '—'}`],
      ['  server RSS idle / peak sampled / VmHWM', `${mb(pb.rss_idle_mib)} / ${mb(pb.rss_peak_sampled_mib)} / ${mb(pb.vm_hwm_mib)}`],
      ['cairn / baseline throughput', ratios.upload_mib_s_cairn_over_baseline != null ? `${ratios.upload_mib_s_cairn_over_baseline}×` : null],
      ['cairn / baseline peak RSS (VmHWM)', ratios.upload_hwm_cairn_over_baseline != null ? `${ratios.upload_hwm_cairn_over_baseline}×` : null],
    ]),
  ];
  const gl = (bench.get_lines ?? {}) as Fig;
  const hb = (bench.hostile ?? {}) as Record<string, Fig>;
  const roundsText = ((gl.rounds ?? []) as { cairn: number; baseline: number; ratio: number }[]).map((r) => `${r.cairn}/${r.baseline}=${r.ratio}×`).join(' ');
  out.push(table(`Per-request overhead: GET {repo}/lines (${gl.body_bytes ?? '?'} bytes), ${GET_CONNECTIONS} connections, 127.0.0.1${gl.pinned ? ', server on CPU 0, load on CPU 1' : ''}`, [
    ['rounds, req/s cairn / node:http', roundsText || null],
    ['GET ratio: cairn / bare node:http req/s (median, min–max)', gl.ratio_median != null ? `${gl.ratio_median}×  (${gl.ratio_min}–${gl.ratio_max})` : null],
    ['server CPU per request, node:http / cairn (median, min–max)', gl.cpu_ratio_median != null ? `${gl.cpu_ratio_median}×  (${gl.cpu_ratio_min}–${gl.cpu_ratio_max})` : null],
    ['cairn server VmHWM after the GET rounds', mb(gl.cairn_vm_hwm_mib)],
  ]));
  const ac = (bench.auth_cost ?? {}) as Fig;
  const acRounds = ((ac.rounds ?? []) as { open: number; tokens: number; baseline: number }[]).map((r) => `${r.open}/${r.tokens}/${r.baseline}`).join(' ');
  if (ac.rounds) out.push(table(`The access gate's cost: GET {repo}/lines (${ac.body_bytes ?? '?'} bytes), ${GET_CONNECTIONS} connections`, [
    ['rounds, req/s cairn without auth / with a token / node:http', acRounds || null],
    ['GET ratio without auth: cairn / node:http (median)', ac.ratio_open_median != null ? `${ac.ratio_open_median}×` : null],
    ['GET ratio with a token (--auth tokens): cairn / node:http (median)', ac.ratio_tokens_median != null ? `${ac.ratio_tokens_median}×` : null],
    ['with a token / without auth, req/s (median)', ac.tokens_over_open_median != null ? `${ac.tokens_over_open_median}×` : null],
    ['server CPU per request without auth / with a token (median)', ac.cpu_us_open_median != null ? `${ac.cpu_us_open_median} µs / ${ac.cpu_us_tokens_median} µs` : null],
  ]));
  out.push(table('Server memory (VmHWM above the RSS before the request)', [
    ['snapshot export with content', c.export_hwm_above_idle_mib != null ? `${mb(c.export_hwm_above_idle_mib)} for a ${mb(c.export_mib)} answer (HTTP ${c.export_status}, ${secs(n(c.export_ms))})` : null],
    ['gzip of 25 million zeros to plan', hb.gzip_25m_zeros_to_plan ? `${mb(hb.gzip_25m_zeros_to_plan.hwm_above_idle_mib)} (HTTP ${(hb.gzip_25m_zeros_to_plan.statuses as number[]).join(',')})` : null],
    ['8 parallel 4 MiB packs with a bad magic', hb.eight_bad_packs ? `${mb(hb.eight_bad_packs.hwm_above_idle_mib)} (HTTP ${(hb.eight_bad_packs.statuses as number[]).join(',')})` : null],
    ['1 GiB pack upload (VmHWM, absolute; idle above)', pc.vm_hwm_mib != null ? `${mb(pc.vm_hwm_mib)} (idle ${mb(pc.rss_idle_mib)})` : null],
  ]));
  const storage = [...storageRows(bench.small_commit as Fig | undefined, bench.group_commit as Fig | undefined), ...landRows(bench.lands as Fig | undefined)];
  if (storage.length) out.push(table('Storage core: small commits on large stores, group commit', storage));
  const diffs = diffRows(bench.diffs as Fig | undefined);
  if (diffs.length) out.push(table('Review: diffs and the change page', diffs));
  const gitImport = gitImportRows(bench.git_import as Fig | undefined);
  if (gitImport.length) out.push(table('Git: importing a history (cairn import-git)', gitImport));
  const gitPush = gitPushRows(bench.git_push as Fig | undefined);
  if (gitPush.length) out.push(table('Git: push for review of a large file', gitPush));
  const threads = threadRows(bench.threads as Fig | undefined);
  if (threads.length) out.push(table('Review: comment threads on the change page', threads));
  const fidelity = diffFidelityRows(bench.diff_fidelity as Fig | undefined);
  if (fidelity.length) out.push(table('Review: word spans and rename detection', fidelity));
  const events = eventRows(bench.events as Fig | undefined);
  if (events.length) out.push(table('Events: the feed', events));
  const scale = scaleRows(bench.workflow_scale as Fig | undefined);
  if (scale.length) out.push(table('Workflow at scale', scale));
  const search = searchRows(bench.search as Fig | undefined);
  if (search.length) out.push(table('Search: GET changes?q=', search));
  const archive = archiveRows(bench.archive as Fig | undefined);
  if (archive.length) out.push(table('Archive: shipping, restore, follower (Swift s3api on loopback)', archive));
  const rpo = archiveRpoRows(bench.archive_rpo as Fig | undefined);
  if (rpo.length) out.push(table('Archive: RPO under load, after a restart, --archive-sync (Swift s3api on loopback)', rpo));
  const queue = landQueueRows(bench.land_queue as Fig | undefined);
  if (queue.length) out.push(table('Land queue: changes landed per minute, each tested on the tree it lands', queue));
  const stack = stackRows(bench.stack as Fig | undefined);
  if (stack.length) out.push(table('Stacks: a series pushed with git and landed through the queue', stack));
  const nodes = bench.cluster as Fig | undefined;
  if (nodes && typeof nodes.owner_p50_ms === 'number') {
    out.push(table('Several nodes: GET of a task, at the owner vs through another node (same run)', [
      ['sequential p50 / p99, owner', `${nodes.owner_p50_ms} / ${nodes.owner_p99_ms} ms`],
      ['sequential p50 / p99, through another node', `${nodes.proxied_p50_ms} / ${nodes.proxied_p99_ms} ms (×${nodes.ratio_p50} at p50)`],
      ['16 in flight, owner / through another node', `${nodes.owner_rps_16} / ${nodes.proxied_rps_16} req/s (×${nodes.ratio_rps})`],
    ]));
  }
  const moves = clusterMoveRows(nodes);
  if (moves.length) out.push(table('Several nodes: moves and failover (Swift s3api on loopback)', moves));
  if (errors.length) out.push(table('ERRORS', errors.map((e) => [e.step, e.message.replace(/\n/g, '\n      ')])));
  process.stdout.write(`${out.join('\n')}\n\n`);
  bench.errors = errors;
  process.stdout.write(`${JSON.stringify({ bench })}\n`);
}

/**
 * Export-manifest hashing (retirement): lib/store/export.ts exportFiles() over a directory,
 * against `sha256sum` over the same files, in the same process tree. Measured on the pushed
 * repository's authority directory and on the ~100 MB source tree (many small files).
 */
async function stepManifest(): Promise<void> {
  const fig: Fig = {};
  bench.manifest = fig;
  const { exportFiles, listAuthorityFiles } = await import('../lib/store/export.js');
  const repo = (bench.cairn as Fig | undefined)?.repo;
  const targets: [string, string][] = [['tree', treeDir]];
  if (typeof repo === 'number') targets.unshift(['repository', path.join(ROOT, 'cairn-data-0', 'repositories', String(repo))]);
  try {
    for (const [name, dir] of targets) {
      const files = await listAuthorityFiles(dir);
      const t0 = performance.now();
      const listed = await exportFiles(dir);
      const ms = performance.now() - t0;
      const bytes = listed.reduce((n, f) => n + f.size, 0);
      // -z: NUL-terminated lines, file names not escaped. Output is kept whole (runOk truncates).
      const t1 = performance.now();
      const stdout = execFileSync('sha256sum', ['-z', ...files], { cwd: dir, maxBuffer: 256 * 1024 * 1024 }).toString('utf8');
      const sum = { ms: performance.now() - t1 };
      const sums = new Map(stdout.split('\0').filter(Boolean).map((l) => { const [h, ...rest] = l.split('  '); return [rest.join('  '), h] as [string, string]; }));
      const agree = listed.every((f) => sums.get(f.path) === f.sha256);
      fig[name] = {
        files: listed.length, bytes, mib: mib(bytes),
        cairn_ms: Math.round(ms), cairn_mib_s: mibps(bytes, ms),
        sha256sum_ms: Math.round(sum.ms), sha256sum_mib_s: mibps(bytes, sum.ms),
        cairn_over_sha256sum: ratio(mibps(bytes, ms), mibps(bytes, sum.ms)),
        digests_agree: agree,
      };
    }
  } catch (err) {
    fail('manifest hashing', err);
  }
}

/** Storage core: small commits on large stores, and group commit (bench/storage.ts). */
async function stepStorage(): Promise<void> {
  try {
    bench.group_commit = await stepGroupCommit({ root: ROOT, cli: CLI, log });
  } catch (err) {
    fail('group commit', err);
  }
  try {
    if (process.env.BENCH_SKIP_SMALL !== "1") bench.small_commit = await stepSmallCommit({ root: ROOT, cli: CLI, scale: SCALE, log });
  } catch (err) {
    fail('small commit on a large store', err);
  }
  try {
    bench.lands = await stepLands({ root: ROOT, scale: SCALE, log });
  } catch (err) {
    fail('lands', err);
  }
}

async function stepDiffStep(): Promise<void> {
  try {
    bench.diffs = await stepDiffs({ root: ROOT, cli: CLI, log });
  } catch (err) {
    fail('diffs', err);
  }
}

async function stepGitStep(): Promise<void> {
  try {
    bench.git_import = await stepGitImport({ root: ROOT, cli: CLI, log });
  } catch (err) {
    fail('git import', err);
  }
}

async function stepEventStep(): Promise<void> {
  try {
    bench.events = await stepEvents({ root: ROOT, cli: CLI, log });
  } catch (err) {
    fail('events', err);
  }
}

async function stepScaleStep(): Promise<void> {
  try {
    bench.workflow_scale = await stepWorkflowScale({ root: ROOT, cli: CLI, log });
  } catch (err) {
    fail('workflow at scale', err);
  }
}

async function stepSearchStep(): Promise<void> {
  try {
    bench.search = await stepSearch({ root: ROOT, cli: CLI, log });
  } catch (err) {
    fail('search', err);
  }
}

async function stepGitPushStep(): Promise<void> {
  try {
    bench.git_push = await stepGitPush({ root: ROOT, cli: CLI, log });
  } catch (err) {
    fail('git push for review', err);
  }
}

async function stepThreadStep(): Promise<void> {
  try {
    bench.threads = await stepThreads({ root: ROOT, cli: CLI, log });
  } catch (err) {
    fail('comment threads', err);
  }
}

async function stepDiffFidelityStep(): Promise<void> {
  try {
    bench.diff_fidelity = await stepDiffFidelity({ root: ROOT, cli: CLI, log });
  } catch (err) {
    fail('diff fidelity', err);
  }
}

async function stepArchiveStep(): Promise<void> {
  try {
    bench.archive = await stepArchive({ root: ROOT, cli: CLI, log });
  } catch (err) {
    fail('archive', err);
  }
}

async function stepArchiveRpoStep(): Promise<void> {
  try {
    bench.archive_rpo = await stepArchiveRpo({ root: ROOT, cli: CLI, log });
  } catch (err) {
    fail('archive rpo', err);
  }
}

async function stepQueueStep(): Promise<void> {
  try {
    bench.land_queue = await stepLandQueue({ root: ROOT, cli: CLI, log });
  } catch (err) {
    fail('land queue', err);
  }
}

async function stepStackStep(): Promise<void> {
  try {
    bench.stack = await stepStack({ root: ROOT, cli: CLI, log });
  } catch (err) {
    fail('stack', err);
  }
}

async function stepClusterStep(): Promise<void> {
  try {
    bench.cluster = await stepCluster({ root: ROOT, cli: CLI, log });
  } catch (err) {
    fail('cluster', err);
  }
}

async function main(): Promise<void> {
  const t0 = performance.now();
  bench.scale = SCALE;
  bench.seed = SEED;
  bench.node = process.version;
  bench.cpus = os.cpus().length;
  try {
    if (process.env.BENCH_ONLY === 'requests') {
      // Quick: only the per-request overhead and the hostile-body memory steps.
      await stepGetRatio();
      await stepAuthCost();
      await stepHostile();
    } else if (process.env.BENCH_ONLY === 'auth') {
      await stepAuthCost();
    } else if (process.env.BENCH_ONLY === 'storage') {
      await stepStorage();
    } else if (process.env.BENCH_ONLY === 'diffs') {
      await stepDiffStep();
    } else if (process.env.BENCH_ONLY === 'events') {
      await stepEventStep();
    } else if (process.env.BENCH_ONLY === 'git') {
      await stepGitStep();
    } else if (process.env.BENCH_ONLY === 'push') {
      await stepGitPushStep();
    } else if (process.env.BENCH_ONLY === 'scale') {
      await stepScaleStep();
    } else if (process.env.BENCH_ONLY === 'search') {
      await stepSearchStep();
    } else if (process.env.BENCH_ONLY === 'threads') {
      await stepThreadStep();
    } else if (process.env.BENCH_ONLY === 'diff-fidelity') {
      await stepDiffFidelityStep();
    } else if (process.env.BENCH_ONLY === 'archive') {
      await stepArchiveStep();
    } else if (process.env.BENCH_ONLY === 'archive-rpo') {
      await stepArchiveRpoStep();
    } else if (process.env.BENCH_ONLY === 'queue') {
      await stepQueueStep();
    } else if (process.env.BENCH_ONLY === 'stack') {
      await stepStackStep();
    } else if (process.env.BENCH_ONLY === 'cluster') {
      await stepClusterStep();
    } else if (process.env.BENCH_ONLY === 'transfer') {
      // Only the push/pull rounds against git, the dedup and the resume figures.
      const tree = await stepTree();
      if (tree) {
        await stepRounds(tree);
        await stepDedup(tree);
        await stepResume();
      }
    } else {
      const tree = await stepTree();
      if (tree) {
        await stepRounds(tree);
        await stepManifest();
        await stepDedup(tree);
        await stepResume();
        rmSync(path.join(ROOT, 'cairn-data-0'), { recursive: true, force: true });
      }
      await stepBigPack();
      await stepGetRatio();
      await stepAuthCost();
      await stepHostile();
      await stepStorage();
      await stepDiffStep();
      await stepGitStep();
      await stepGitPushStep();
      await stepThreadStep();
      await stepDiffFidelityStep();
      await stepEventStep();
      await stepScaleStep();
      await stepSearchStep();
      await stepArchiveStep();
      await stepArchiveRpoStep();
      await stepQueueStep();
      await stepStackStep();
      await stepClusterStep();
    }
  } catch (err) {
    fail('bench', err);
  } finally {
    killAllChildren();
  }
  bench.total_ms = Math.round(performance.now() - t0);
  report();
  if (errors.length) process.exitCode = 1;
}

await main();
