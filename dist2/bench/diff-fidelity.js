// Diff fidelity figures for `npm run bench` (BENCH_ONLY=diff-fidelity): the diff route on the
// 2,000-file patchset of bench/threads.ts (every file edits two lines: 4,000 paired lines with
// word spans), with 200 of its files also moved to another directory (200 renames found by
// similarity among 200 deleted × 200 added files); timed with rename detection (the default),
// without (`renames=false`) and with `whitespace=ignore-all`; then a worst case for rename
// detection: 1,000 files deleted and 1,000 unrelated files of the same sizes added (a million
// candidate pairs, none similar; the time budget stops it). Min / median / max over rounds, and
// the server's RSS (sampled every 50 ms during the rounds) and VmHWM.
//
//   BENCH_DIFF_ROUNDS (default 5)
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { push } from '../lib/client/transfer.js';
import { procMemory, registerRepository, sampleRss, startCairn } from './proc.js';
import { writeTree } from './threads.js';
const MOVED = 200;
const sorted = (xs) => [...xs].sort((a, b) => a - b);
const stats = (xs) => { const s = sorted(xs); return { min: Math.round(s[0]), median: Math.round(s[Math.floor(s.length / 2)]), max: Math.round(s[s.length - 1]) }; };
export async function stepDiffFidelity(o) {
    const rounds = Math.max(1, Number(process.env.BENCH_DIFF_ROUNDS || 5) || 5);
    const dir = path.join(o.root, 'fidelity-tree');
    let server = await startCairn(o.cli, path.join(o.root, 'fidelity-data'));
    try {
        const repo = await registerRepository(server.url, 'fidelity');
        const R = (rest) => `${server.url}/v1/native/repository-authorities/${repo}${rest}`;
        const post = async (p, body) => {
            const res = await fetch(R(p), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
            if (!res.ok)
                throw new Error(`${p}: HTTP ${res.status} ${await res.text()}`);
            return res.json();
        };
        const snap = async (parent, line = 'main') => (await push({ server: server.url, repo, line, dir, moveLine: parent === undefined, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
        await writeTree(dir, 0);
        const base = await snap();
        await writeTree(dir, 1);
        // 200 of the edited files also move: pkgN/mI.ts → moved/pkgN/mI.ts.
        for (let i = 0; i < MOVED; i++) {
            const from = path.join(dir, `pkg${i % 40}`, `m${i}.ts`);
            const to = path.join(dir, 'moved', `pkg${i % 40}`, `m${i}.ts`);
            await fsp.mkdir(path.dirname(to), { recursive: true });
            await fsp.rename(from, to);
        }
        const rev = await snap(base);
        // The worst case: 1,000 deleted, 1,000 unrelated added of similar sizes.
        await fsp.rm(dir, { recursive: true, force: true });
        await fsp.mkdir(path.join(dir, 'a'), { recursive: true });
        for (let i = 0; i < 1000; i++)
            await fsp.writeFile(path.join(dir, 'a', `f${i}.txt`), Array.from({ length: 100 }, (_, l) => `old ${i} ${l} ${'x'.repeat(20)}`).join('\n') + '\n');
        const wBase = await snap(undefined, 'worst');
        await fsp.rm(path.join(dir, 'a'), { recursive: true });
        await fsp.mkdir(path.join(dir, 'b'), { recursive: true });
        for (let i = 0; i < 1000; i++)
            await fsp.writeFile(path.join(dir, 'b', `g${i}.txt`), Array.from({ length: 100 }, (_, l) => `new ${i} ${l} ${'y'.repeat(20)}`).join('\n') + '\n');
        const wRev = await snap(wBase, 'worst');
        const t = (await post('/tasks', { title: 'bench', intent: 'diff fidelity' })).task;
        const change = async (b, r, line) => {
            const c = (await post('/changes', { task_id: t.task_id, title: 'bench diff', base_line: line })).change;
            return (await post(`/changes/${c.change_id}/patchsets`, { base_snapshot_id: b, revision_snapshot_id: r, summary: 'ps', author_mode: 'human_only' })).patchset.patchset_id;
        };
        const ps = await change(base, rev, 'main');
        const worst = await change(wBase, wRev, 'worst');
        const measure = async (p, query) => {
            const ms = [];
            let body = {};
            const rss = sampleRss(server.pid);
            for (let r = 0; r < rounds; r++) {
                const t0 = performance.now();
                const res = await fetch(R(`/read/patchsets/${p}/diff${query}`));
                const text = await res.text();
                ms.push(performance.now() - t0);
                if (!res.ok)
                    throw new Error(`diff ${query}: HTTP ${res.status} ${text.slice(0, 200)}`);
                body = JSON.parse(text);
            }
            const peak = rss.stop().peakKiB;
            const files = body.files;
            let spans = 0;
            for (const f of files)
                for (const h of f.hunks)
                    for (const s of h.spans ?? [])
                        if (s)
                            spans++;
            return { ms: stats(ms), files: files.length, renames: body.stats.renames, copies: body.stats.copies, rename_limit: body.stats.rename_limit, lines_with_spans: spans, rss_peak_mib: Math.round(peak / 1024) };
        };
        const fig = {
            files: 2000,
            moved: MOVED,
            rounds,
            default: await measure(ps, '?context=3'),
            no_renames: await measure(ps, '?context=3&renames=false'),
            ignore_all: await measure(ps, '?context=3&whitespace=ignore-all'),
            worst_case: await measure(worst, '?context=3'),
            vm_hwm_mib: Math.round((procMemory(server.pid)?.hwmKiB ?? NaN) / 1024),
        };
        o.log(`diff fidelity: ${JSON.stringify(fig)}`);
        return fig;
    }
    finally {
        await server?.stop();
        server = null;
    }
}
const mmm = (s) => (s ? `${s.min} / ${s.median} / ${s.max} ms` : 'n/a');
export function diffFidelityRows(f) {
    if (!f)
        return [];
    const d = f.default;
    const n = f.no_renames;
    const w = f.ignore_all;
    const x = f.worst_case;
    return [
        [`diff route, ${f.files} files (${f.moved} moved with edits), spans + renames — min / median / max`, `${mmm(d.ms)} (${d.renames} renames, ${d.lines_with_spans} lines with spans, server RSS peak ${d.rss_peak_mib} MiB)`],
        ['  the same with renames=false', `${mmm(n.ms)} (RSS peak ${n.rss_peak_mib} MiB)`],
        ['  the same with whitespace=ignore-all', `${mmm(w.ms)} (RSS peak ${w.rss_peak_mib} MiB)`],
        ['1,000 deleted × 1,000 unrelated added (no renames to find)', `${mmm(x.ms)} (rename_limit: ${x.rename_limit ?? 'none'}, RSS peak ${x.rss_peak_mib} MiB)`],
        ['server VmHWM after the rounds', `${f.vm_hwm_mib} MiB`],
    ];
}
//# sourceMappingURL=diff-fidelity.js.map