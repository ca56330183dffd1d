// Git import figures for `npm run bench` (BENCH_ONLY=git): a generated history (a 5,000-file
// tree, then commits that each edit a few files; 10,000 commits by default), imported with
// `cairn import-git` into a fresh server, against copying the same history into another git
// repository with `git fast-export | git fast-import` (the baseline, run in the same process
// tree). Reported: commits/s of both, the server's peak RSS, the time of a re-run that finds
// nothing new. Then the git side of the same server: the first `git clone` of the imported line,
// issued as soon as the import answered (it waits for what is left of the export the server ran
// in the background while the import went on, or does it), against `git clone --bare
// --no-local` of the source; the export alone (the shadow removed first); a clone
// of the exported line; and, after 100 small exports (a commit imported and exported each time,
// as a land is), a clone against `git clone --no-local` of the source holding the same commits.
import path from 'node:path';
import { promises as fsp } from 'node:fs';
import { once } from 'node:events';
import { spawn } from 'node:child_process';
import { procMemory, registerRepository, runOk, runTimed, sampleRss, startCairn } from './proc.js';
/** A deterministic PRNG (mulberry32): the same history on every run. */
function prng(seed) {
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
export async function generateHistory(dir, commits, files) {
    await runOk('git', ['init', '-q', '-b', 'main', dir]);
    await fastImport(dir, commits, files, 0);
}
/** `commits` more commits on main (after `done` of them), each editing 3 files of `files` (all of them first). */
async function fastImport(dir, commits, files, done) {
    const proc = spawn('git', ['-C', dir, 'fast-import', '--quiet'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (d) => { stderr += d; });
    const rand = prng(42 + done);
    const version = new Array(files).fill(done);
    const fileText = (i) => {
        const lines = Array.from({ length: 30 }, (_, l) => `export const v${i}_${l} = ${l === version[i] % 30 ? `'v${version[i]}'` : l};`);
        return `${lines.join('\n')}\n`;
    };
    const pathOf = (i) => `pkg${i % 50}/sub${i % 7}/m${i}.ts`;
    const out = proc.stdin;
    const write = async (s) => { if (!out.write(s))
        await once(out, 'drain'); };
    let time = 1_600_000_000 + done * 600;
    for (let c = done; c < done + commits; c++) {
        const touched = c === 0 ? Array.from({ length: files }, (_, i) => i) : Array.from({ length: 3 }, () => Math.floor(rand() * files));
        const msg = c === 0 ? 'initial import' : `change ${c}: edit ${touched.map(pathOf).join(', ')}`;
        time += 600;
        await write(`commit refs/heads/main\nauthor Ada <ada@example.org> ${time} +0100\ncommitter Bob <bob@example.org> ${time + 30} -0500\ndata ${Buffer.byteLength(msg)}\n${msg}\n`);
        if (c === done && done > 0)
            await write('from refs/heads/main^0\n');
        for (const i of new Set(touched)) {
            if (c > 0)
                version[i]++;
            const text = fileText(i);
            await write(`M 100644 inline ${pathOf(i)}\ndata ${Buffer.byteLength(text)}\n${text}\n`);
        }
        await write('\n');
    }
    out.end();
    const [code] = await once(proc, 'close');
    if (code !== 0)
        throw new Error(`git fast-import failed: ${stderr}`);
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** Loose objects and packs of a bare repository. */
async function objectFiles(repo) {
    let loose = 0;
    for (const d of await fsp.readdir(path.join(repo, 'objects'))) {
        if (/^[0-9a-f]{2}$/.test(d))
            loose += (await fsp.readdir(path.join(repo, 'objects', d))).length;
    }
    const packs = (await fsp.readdir(path.join(repo, 'objects', 'pack'))).filter((f) => f.endsWith('.idx')).length;
    return { loose, packs };
}
/** `git clone --bare` of `url` into a fresh directory under `root`: its wall time. */
let clones = 0;
async function cloneMs(root, url, args = []) {
    const dest = path.join(root, `git-clone-${clones++}`);
    const r = await runTimed('git', ['clone', '-q', '--bare', ...args, url, dest]);
    if (r.code !== 0)
        throw new Error(`git clone ${url} failed: ${r.stderr}`);
    await fsp.rm(dest, { recursive: true, force: true });
    return r.ms;
}
export async function stepGitImport(o) {
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
    if (baseline.code !== 0)
        throw new Error(`baseline failed: ${baseline.stderr}`);
    const server = await startCairn(o.cli, path.join(o.root, 'git-import-data'));
    try {
        const repo = await registerRepository(server.url, 'git-import');
        const idle = procMemory(server.pid)?.rssKiB ?? NaN;
        const rss = sampleRss(server.pid);
        const args = [o.cli, 'import-git', '--server', server.url, '--repo', String(repo), '--line', 'main', '--json', src];
        const run = await runTimed(process.execPath, args);
        const peak = rss.stop().peakKiB;
        if (run.code !== 0)
            throw new Error(`cairn import-git failed: ${run.stderr}`);
        // The first clone, issued as soon as the import answered: the server exported the line in
        // the background while the import ran (each batch moves the line); the clone waits for what
        // is left of that export (or does it) before git answers.
        const url = `${server.url}/v1/native/repository-authorities/${repo}/git/main.git`;
        const firstCloneMs = await cloneMs(o.root, url);
        const plainFirstMs = await cloneMs(o.root, src, ['--no-local']);
        const result = JSON.parse(run.stdout);
        if (result.imported !== commits)
            throw new Error(`imported ${result.imported} of ${commits} commits`);
        const again = await runTimed(process.execPath, args);
        if (again.code !== 0)
            throw new Error(`cairn import-git (again) failed: ${again.stderr}`);
        const hwm = procMemory(server.pid)?.hwmKiB ?? NaN;
        // The export alone: the shadow removed (derived data), then written again in one request.
        const shadow = path.join(o.root, 'git-import-data', 'git-shadow', `${repo}.git`);
        await fsp.rm(shadow, { recursive: true, force: true });
        const e0 = performance.now();
        const exportRes = await fetch(`${server.url}/v1/native/repository-authorities/${repo}/git/exports`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ line: 'main' }) });
        const exported = await exportRes.json();
        if (!exportRes.ok)
            throw new Error(`export failed: HTTP ${exportRes.status} ${exported.error ?? ''}`);
        const exportMs = performance.now() - e0;
        const afterExport = await objectFiles(shadow);
        // Clones of the exported line against git's own, alternating.
        const warm = [];
        const plain = [];
        for (let r = 0; r < 3; r++) {
            warm.push(await cloneMs(o.root, url));
            plain.push(await cloneMs(o.root, src, ['--no-local']));
        }
        // 100 small exports: one commit imported and exported each time (by this request, or by the
        // server's own export of a moved line when it comes first). Onto line trunk, holding the same
        // history: an imported main is governed (it moves only through lands from then on).
        const lands = Number(process.env.BENCH_GIT_LANDS) || 100;
        o.log(`git import: ${lands} small exports`);
        const trunkArgs = [o.cli, 'import-git', '--server', server.url, '--repo', String(repo), '--line', 'trunk', '--json', src];
        const trunkUrl = `${server.url}/v1/native/repository-authorities/${repo}/git/trunk.git`;
        const exportTrunk = async (what) => {
            const res = await fetch(`${server.url}/v1/native/repository-authorities/${repo}/git/exports`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ line: 'trunk' }) });
            const body = await res.json();
            if (!res.ok || Number(body.written) > 1)
                throw new Error(`${what}: HTTP ${res.status} ${JSON.stringify(body)}`);
        };
        await runOk(process.execPath, trunkArgs);
        await exportTrunk('export of trunk');
        const l0 = performance.now();
        for (let i = 0; i < lands; i++) {
            await fastImport(src, 1, files, commits + i);
            const r = await runTimed(process.execPath, trunkArgs);
            if (r.code !== 0)
                throw new Error(`cairn import-git (land ${i}) failed: ${r.stderr}`);
            await exportTrunk(`small export ${i}`);
        }
        const landsMs = performance.now() - l0;
        // The background repack keeps at most 8 packs (CAIRN_GIT_SHADOW_MAX_PACKS): wait for it.
        let afterLands = await objectFiles(shadow);
        for (let i = 0; i < 1200 && (afterLands.packs > 8 || afterLands.loose > 0); i++) {
            await new Promise((resolve) => setTimeout(resolve, 100));
            afterLands = await objectFiles(shadow);
        }
        const landed = [];
        const landedPlain = [];
        for (let r = 0; r < 3; r++) {
            landed.push(await cloneMs(o.root, trunkUrl, ['--branch', 'trunk']));
            landedPlain.push(await cloneMs(o.root, src, ['--no-local']));
        }
        const mib = (kib) => Math.round(kib / 1024);
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
            first_clone_ms: Math.round(firstCloneMs),
            plain_first_clone_ms: Math.round(plainFirstMs),
            first_clone_over_plain: Math.round((firstCloneMs / plainFirstMs) * 100) / 100,
            export_ms: Math.round(exportMs),
            export_commits_s: Math.round(Number(exported.written) / (exportMs / 1000)),
            export_packs: afterExport.packs,
            export_loose: afterExport.loose,
            clone_ms: Math.round(median(warm)),
            plain_clone_ms: Math.round(median(plain)),
            clone_over_plain: Math.round((median(warm) / median(plain)) * 100) / 100,
            lands,
            lands_ms: Math.round(landsMs),
            lands_packs: afterLands.packs,
            lands_loose: afterLands.loose,
            lands_clone_ms: Math.round(median(landed)),
            lands_plain_clone_ms: Math.round(median(landedPlain)),
            lands_clone_over_plain: Math.round((median(landed) / median(landedPlain)) * 100) / 100,
        };
    }
    finally {
        await server.stop();
    }
}
export function gitImportRows(f) {
    if (!f)
        return [];
    return [
        [`import of ${f.commits} commits over a ${f.files}-file tree`, `${(Number(f.import_ms) / 1000).toFixed(1)} s = ${f.import_commits_s} commits/s (${f.batches} batches, ${f.uploaded_mib} MiB uploaded)`],
        ['git fast-export | git fast-import of the same history', `${(Number(f.baseline_ms) / 1000).toFixed(1)} s = ${f.baseline_commits_s} commits/s; cairn takes ${f.import_over_baseline}× its time`],
        ['a re-run that finds nothing new', `${f.rerun_ms} ms`],
        ['server RSS during the import: peak (idle)', `${f.server_rss_peak_mib} MiB (${f.server_rss_idle_mib} MiB)`],
        ['first git clone --bare of the line, issued as the import answers / git clone --bare --no-local of the source', `${(Number(f.first_clone_ms) / 1000).toFixed(1)} s / ${(Number(f.plain_first_clone_ms) / 1000).toFixed(1)} s = ${f.first_clone_over_plain}×`],
        ['export of the line into the shadow repository, alone', `${(Number(f.export_ms) / 1000).toFixed(1)} s = ${f.export_commits_s} commits/s (${f.export_packs} pack, ${f.export_loose} loose objects)`],
        ['git clone --bare from cairn / git clone --bare --no-local of the source (median of 3)', `${(Number(f.clone_ms) / 1000).toFixed(1)} s / ${(Number(f.plain_clone_ms) / 1000).toFixed(1)} s = ${f.clone_over_plain}×`],
        [`after ${f.lands} small exports (${(Number(f.lands_ms) / 1000).toFixed(0)} s): packs, loose objects`, `${f.lands_packs}, ${f.lands_loose}`],
        [`git clone after ${f.lands} small exports / git clone --no-local of the source (median of 3)`, `${(Number(f.lands_clone_ms) / 1000).toFixed(1)} s / ${(Number(f.lands_plain_clone_ms) / 1000).toFixed(1)} s = ${f.lands_clone_over_plain}×`],
    ];
}
//# sourceMappingURL=git-import.js.map