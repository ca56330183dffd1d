// Git import figures for `npm run bench` (BENCH_ONLY=git): a generated history (a 5,000-file
// tree, then commits that each edit a few files; 10,000 commits by default), imported with
// `cairn import-git` into a fresh server, against copying the same history into another git
// repository with `git fast-export | git fast-import` (the baseline, run in the same process
// tree). Reported: commits/s of both, the server's peak RSS, the time of a re-run that finds
// nothing new; then the export of the line into the server's shadow repository, and `git clone`
// from the server against `git clone --no-local` of the source (git's own transport).
import path from 'node:path';
import { once } from 'node:events';
import { spawn } from 'node:child_process';
import { procMemory, registerRepository, runOk, runTimed, sampleRss, startCairn } from './proc.js';

type Fig = Record<string, unknown>;

/** A deterministic PRNG (mulberry32): the same history on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Write a fast-import stream of `commits` commits over `files` files into `git` (a new repository). */
async function generateHistory(dir: string, commits: number, files: number): Promise<void> {
  await runOk('git', ['init', '-q', '-b', 'main', dir]);
  const proc = spawn('git', ['-C', dir, 'fast-import', '--quiet'], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const rand = prng(42);
  const version = new Array<number>(files).fill(0);
  const fileText = (i: number) => {
    const lines = Array.from({ length: 30 }, (_, l) => `export const v${i}_${l} = ${l === version[i] % 30 ? `'v${version[i]}'` : l};`);
    return `${lines.join('\n')}\n`;
  };
  const pathOf = (i: number) => `pkg${i % 50}/sub${i % 7}/m${i}.ts`;
  const out = proc.stdin;
  const write = async (s: string) => { if (!out.write(s)) await once(out, 'drain'); };
  let time = 1_600_000_000;
  for (let c = 0; c < commits; c++) {
    const touched = c === 0 ? Array.from({ length: files }, (_, i) => i) : Array.from({ length: 3 }, () => Math.floor(rand() * files));
    const msg = c === 0 ? 'initial import' : `change ${c}: edit ${touched.map(pathOf).join(', ')}`;
    time += 600;
    await write(`commit refs/heads/main\nauthor Ada <ada@example.org> ${time} +0100\ncommitter Bob <bob@example.org> ${time + 30} -0500\ndata ${Buffer.byteLength(msg)}\n${msg}\n`);
    for (const i of new Set(touched)) {
      if (c > 0) version[i]++;
      const text = fileText(i);
      await write(`M 100644 inline ${pathOf(i)}\ndata ${Buffer.byteLength(text)}\n${text}\n`);
    }
    await write('\n');
  }
  out.end();
  const [code] = await once(proc, 'close');
  if (code !== 0) throw new Error(`git fast-import failed: ${stderr}`);
}

export async function stepGitImport(o: { root: string; cli: string; log: (s: string) => void }): Promise<Fig> {
  const commits = Number(process.env.BENCH_GIT_COMMITS) || 10_000;
  const files = Number(process.env.BENCH_GIT_FILES) || 5_000;
  const src = path.join(o.root, 'git-history');
  const t0 = performance.now();
  o.log(`git import: generating a ${commits}-commit history over a ${files}-file tree`);
  await generateHistory(src, commits, files);
  const generateMs = performance.now() - t0;

  // Baseline: the same history copied into another git repository, in git's own format.
  const copy = path.join(o.root, 'git-copy');
  await runOk('git', ['init', '-q', '--bare', copy]);
  const baseline = await runTimed('bash', ['-c', `git -C "${src}" fast-export --reencode=no main | git -C "${copy}" fast-import --quiet`]);
  if (baseline.code !== 0) throw new Error(`baseline failed: ${baseline.stderr}`);

  const server = await startCairn(o.cli, path.join(o.root, 'git-import-data'));
  try {
    const repo = await registerRepository(server.url, 'git-import');
    const idle = procMemory(server.pid)?.rssKiB ?? NaN;
    const rss = sampleRss(server.pid);
    const args = [o.cli, 'import-git', '--server', server.url, '--repo', String(repo), '--line', 'main', '--json', src];
    const run = await runTimed(process.execPath, args);
    const peak = rss.stop().peakKiB;
    if (run.code !== 0) throw new Error(`cairn import-git failed: ${run.stderr}`);
    const result = JSON.parse(run.stdout) as Record<string, number>;
    if (result.imported !== commits) throw new Error(`imported ${result.imported} of ${commits} commits`);
    const again = await runTimed(process.execPath, args);
    if (again.code !== 0) throw new Error(`cairn import-git (again) failed: ${again.stderr}`);
    const hwm = procMemory(server.pid)?.hwmKiB ?? NaN;

    // Export: the line's commits into the server's shadow repository (the first export writes them all).
    const e0 = performance.now();
    const exportRes = await fetch(`${server.url}/v1/native/repository-authorities/${repo}/git/exports`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ line: 'main' }) });
    const exported = await exportRes.json() as { written?: number; error?: string };
    if (!exportRes.ok) throw new Error(`export failed: HTTP ${exportRes.status} ${exported.error ?? ''}`);
    const exportMs = performance.now() - e0;
    // Clone from the server (git's smart HTTP) against git clone of the source over its own transport.
    const clone = await runTimed('git', ['clone', '-q', '--bare', `${server.url}/v1/native/repository-authorities/${repo}/git/main.git`, path.join(o.root, 'git-clone-cairn')]);
    if (clone.code !== 0) throw new Error(`git clone from cairn failed: ${clone.stderr}`);
    const plain = await runTimed('git', ['clone', '-q', '--bare', '--no-local', src, path.join(o.root, 'git-clone-plain')]);
    if (plain.code !== 0) throw new Error(`git clone --no-local failed: ${plain.stderr}`);
    const mib = (kib: number) => Math.round(kib / 1024);
    return {
      commits,
      files,
      generate_ms: Math.round(generateMs),
      import_ms: Math.round(run.ms),
      import_commits_s: Math.round(commits / (run.ms / 1000)),
      baseline_ms: Math.round(baseline.ms),
      baseline_commits_s: Math.round(commits / (baseline.ms / 1000)),
      import_over_baseline: Math.round((run.ms / baseline.ms) * 100) / 100,
      rerun_ms: Math.round(again.ms),
      batches: result.batches,
      uploaded_mib: Math.round((result.uploaded_bytes / 1048576) * 10) / 10,
      server_rss_idle_mib: mib(idle),
      server_rss_peak_mib: mib(peak),
      server_vm_hwm_mib: mib(hwm),
      export_ms: Math.round(exportMs),
      export_commits_s: Math.round(Number(exported.written) / (exportMs / 1000)),
      clone_ms: Math.round(clone.ms),
      plain_clone_ms: Math.round(plain.ms),
      clone_over_plain: Math.round((clone.ms / plain.ms) * 100) / 100,
    };
  } finally {
    await server.stop();
  }
}

export function gitImportRows(f: Fig | undefined): [string, string | null][] {
  if (!f) return [];
  return [
    [`import of ${f.commits} commits over a ${f.files}-file tree`, `${(Number(f.import_ms) / 1000).toFixed(1)} s = ${f.import_commits_s} commits/s (${f.batches} batches, ${f.uploaded_mib} MiB uploaded)`],
    ['git fast-export | git fast-import of the same history', `${(Number(f.baseline_ms) / 1000).toFixed(1)} s = ${f.baseline_commits_s} commits/s; cairn takes ${f.import_over_baseline}× its time`],
    ['a re-run that finds nothing new', `${f.rerun_ms} ms`],
    ['server RSS during the import: peak (idle)', `${f.server_rss_peak_mib} MiB (${f.server_rss_idle_mib} MiB)`],
    ['export of the line into the shadow repository (first time)', `${(Number(f.export_ms) / 1000).toFixed(1)} s = ${f.export_commits_s} commits/s`],
    ['git clone from cairn / git clone --no-local of the source', `${(Number(f.clone_ms) / 1000).toFixed(1)} s / ${(Number(f.plain_clone_ms) / 1000).toFixed(1)} s = ${f.clone_over_plain}×`],
  ];
}
