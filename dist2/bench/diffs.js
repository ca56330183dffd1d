// Diff figures for `npm run bench`: the patchset diff route on a 2,000-file patchset (every file
// modified in two places), JSON and unified, against `git diff` of the same two trees in a git
// repository (the baseline, run in the same process tree), with the server's peak RSS while it
// answers; and the server time of the API calls a reviewer's change page makes.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { push } from '../lib/client/transfer.js';
import { procMemory, registerRepository, runOk, sampleRss, startCairn } from './proc.js';
const FILES = 2000;
async function writeTree(dir, revision) {
    await fsp.rm(dir, { recursive: true, force: true });
    for (let i = 0; i < FILES; i++) {
        const d = path.join(dir, `pkg${i % 40}`);
        await fsp.mkdir(d, { recursive: true });
        const lines = Array.from({ length: 120 }, (_, l) => `export const v${i}_${l} = ${l};`);
        if (revision) {
            lines[10] = `export const v${i}_10 = 'changed';`;
            lines[90] = `export const v${i}_90 = 'changed too';`;
        }
        await fsp.writeFile(path.join(d, `m${i}.ts`), `${lines.join('\n')}\n`);
    }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
export async function stepDiffs(o) {
    const rounds = o.rounds ?? 5;
    const dir = path.join(o.root, 'diff-tree');
    const server = await startCairn(o.cli, path.join(o.root, 'diff-data'));
    try {
        o.log(`diffs: ${FILES}-file patchset, ${rounds} rounds of the diff route against git diff`);
        const repo = await registerRepository(server.url, 'diffs');
        const R = (rest) => `${server.url}/v1/native/repository-authorities/${repo}${rest}`;
        const post = async (p, body) => {
            const res = await fetch(R(p), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
            if (!res.ok)
                throw new Error(`${p}: HTTP ${res.status} ${await res.text()}`);
            return res.json();
        };
        // The same two trees as two git commits (the baseline) and as a cairn patchset.
        const git = path.join(o.root, 'diff-git');
        await fsp.mkdir(git, { recursive: true });
        await runOk('git', ['init', '-q', git]);
        const gitCommit = async (msg) => {
            await fsp.cp(dir, git, { recursive: true });
            await runOk('git', ['-C', git, 'add', '-A']);
            await runOk('git', ['-C', git, '-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-q', '-m', msg]);
        };
        await writeTree(dir, false);
        const base = (await push({ server: server.url, repo, line: 'main', dir, moveLine: true, progress: false })).snapshot_id;
        await gitCommit('base');
        await writeTree(dir, true);
        const rev = (await push({ server: server.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
        await gitCommit('revision');
        const t = (await post('/tasks', { title: 'bench', intent: 'diff' })).task;
        const c = (await post('/changes', { task_id: t.task_id, title: 'bench', base_line: 'main' })).change;
        const ps = (await post(`/changes/${c.change_id}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' })).patchset.patchset_id;
        const idleKiB = procMemory(server.pid)?.rssKiB ?? 0;
        const time = async (fn) => { const t0 = performance.now(); const bytes = await fn(); return { ms: performance.now() - t0, bytes }; };
        const get = (p, accept) => async () => { const res = await fetch(R(p), { headers: { accept } }); const b = await res.arrayBuffer(); if (!res.ok)
            throw new Error(`${p}: HTTP ${res.status}`); return b.byteLength; };
        const json = [];
        const unified = [];
        const gitMs = [];
        let jsonBytes = 0;
        let unifiedBytes = 0;
        const rss = sampleRss(server.pid, 10);
        for (let r = 0; r < rounds; r++) {
            const a = await time(get(`/read/patchsets/${ps}/diff`, 'application/json'));
            const b = await time(get(`/read/patchsets/${ps}/diff`, 'text/x-diff'));
            const g = await time(async () => (await runOk('git', ['-C', git, 'diff', 'HEAD~1', 'HEAD'], { timeoutMs: 120_000 })).stdout.length);
            json.push(a.ms);
            unified.push(b.ms);
            gitMs.push(g.ms);
            jsonBytes = a.bytes;
            unifiedBytes = b.bytes;
        }
        const peak = rss.stop().peakKiB;
        // What a change page asks the server for (the UI reads only these public routes).
        const pageCalls = [`/changes/${c.change_id}`, `/changes/${c.change_id}/patchsets`, `/changes/${c.change_id}/reviews`, `/read/changes/${c.change_id}/readiness`, `/read/patchsets/${ps}/ci-status`, `/read/patchsets/${ps}/diff?context=3`];
        const page = [];
        for (let r = 0; r < rounds; r++) {
            const t0 = performance.now();
            await Promise.all(pageCalls.map((p) => get(p, 'application/json')()));
            page.push(performance.now() - t0);
        }
        const fig = {
            files: FILES,
            json_ms: Math.round(median(json)),
            unified_ms: Math.round(median(unified)),
            git_diff_ms: Math.round(median(gitMs)),
            unified_over_git: Number((median(unified) / median(gitMs)).toFixed(2)),
            json_bytes: jsonBytes,
            unified_bytes: unifiedBytes,
            rss_idle_mib: Number((idleKiB / 1024).toFixed(1)),
            rss_peak_above_idle_mib: Number(((peak - idleKiB) / 1024).toFixed(1)),
            change_page_calls: pageCalls.length,
            change_page_ms: Math.round(median(page)),
        };
        o.log(`diffs: ${JSON.stringify(fig)}`);
        return fig;
    }
    finally {
        await server.stop();
    }
}
export function diffRows(f) {
    if (!f)
        return [];
    return [
        [`diff of a ${f.files}-file patchset, unified: cairn / git diff (median)`, `${f.unified_ms} ms / ${f.git_diff_ms} ms = ${f.unified_over_git}×  (${(Number(f.unified_bytes) / 1048576).toFixed(1)} MiB)`],
        ['the same diff as JSON (median)', `${f.json_ms} ms (${(Number(f.json_bytes) / 1048576).toFixed(1)} MiB)`],
        ['server RSS while answering diffs, peak above idle', `${f.rss_peak_above_idle_mib} MiB (idle ${f.rss_idle_mib} MiB)`],
        [`a change page's ${f.change_page_calls} API calls, in parallel (median)`, `${f.change_page_ms} ms`],
    ];
}
//# sourceMappingURL=diffs.js.map