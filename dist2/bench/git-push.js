// Push for review figures for `npm run bench` (BENCH_ONLY=push): one commit adding one file of
// random (incompressible) bytes — 100 MiB, then 200 MiB (BENCH_PUSH_MIB: "100,200") — pushed with
// `git push URL HEAD:refs/for/main` to a cairn server, against `git push` of the same commit to
// a bare repository on the same disk, in the same run, alternating which goes first. Reported per
// size: both times and their ratio, the server's resident set above idle (its VmHWM, reset just
// before the push) and /healthz asked back to back during the push (answers, errors, slowest).
import { randomBytes } from 'node:crypto';
import { createWriteStream, promises as fsp, writeFileSync } from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { procMemory, registerRepository, runOk, runTimed, startCairn } from './proc.js';
const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.org', GIT_COMMITTER_NAME: 'Ada', GIT_COMMITTER_EMAIL: 'ada@example.org' };
/** `mib` MiB of random bytes written to `file` a MiB at a time. */
async function randomFile(file, mib) {
    const out = createWriteStream(file);
    for (let i = 0; i < mib; i++)
        if (!out.write(randomBytes(1024 * 1024)))
            await once(out, 'drain');
    out.end();
    await once(out, 'finish');
}
function resetPeak(pid) {
    try {
        writeFileSync(`/proc/${pid}/clear_refs`, '5');
    }
    catch { /* not Linux: the peak includes earlier ones */ }
}
export async function stepGitPush(o) {
    const sizes = (process.env.BENCH_PUSH_MIB || '100,200').split(',').map(Number).filter((n) => n > 0);
    const src = path.join(o.root, 'push-src');
    await runOk('git', ['init', '-q', '-b', 'main', src], { env: GIT_ENV });
    await fsp.writeFile(path.join(src, 'README.md'), '# push bench\n');
    await runOk('git', ['-C', src, 'add', '-A'], { env: GIT_ENV });
    await runOk('git', ['-C', src, 'commit', '-q', '-m', 'first'], { env: GIT_ENV });
    const server = await startCairn(o.cli, path.join(o.root, 'push-data'));
    const rows = [];
    try {
        const repo = await registerRepository(server.url, 'push');
        await runOk(process.execPath, [o.cli, 'import-git', '--server', server.url, '--repo', String(repo), '--line', 'main', '--json', src]);
        const url = `${server.url}/v1/native/repository-authorities/${repo}/git/main.git`;
        const work = path.join(o.root, 'push-work');
        await runOk('git', ['clone', '-q', url, work], { env: GIT_ENV });
        const base = (await runOk('git', ['-C', work, 'rev-parse', 'HEAD'], { env: GIT_ENV })).stdout.trim();
        for (const [i, mib] of sizes.entries()) {
            await runOk('git', ['-C', work, 'reset', '-q', '--hard', base], { env: GIT_ENV });
            o.log(`push: a commit of one ${mib} MiB file of random bytes`);
            await randomFile(path.join(work, `random-${mib}.bin`), mib);
            await runOk('git', ['-C', work, 'add', '-A'], { env: GIT_ENV });
            await runOk('git', ['-C', work, 'commit', '-q', '-m', `Add ${mib} MiB of random bytes`], { env: GIT_ENV });
            // The baseline: a bare repository holding the base commit, pushed the same commit.
            const bare = path.join(o.root, `push-bare-${mib}.git`);
            await runOk('git', ['init', '-q', '--bare', bare], { env: GIT_ENV });
            await runOk('git', ['-C', work, 'push', '-q', bare, `${base}:refs/heads/main`], { env: GIT_ENV });
            const gitPush = () => runTimed('git', ['-C', work, 'push', '-q', bare, 'HEAD:refs/heads/main'], { env: GIT_ENV });
            const cairnPush = async () => {
                const idle = procMemory(server.pid)?.rssKiB ?? NaN;
                resetPeak(server.pid);
                let pushing = true;
                const health = { answered: 0, errors: 0, slowest_ms: 0 };
                const probe = (async () => {
                    while (pushing) {
                        const t0 = performance.now();
                        try {
                            const res = await fetch(`${server.url}/healthz`);
                            await res.arrayBuffer();
                            if (res.status === 200)
                                health.answered++;
                            else
                                health.errors++;
                        }
                        catch {
                            health.errors++;
                        }
                        health.slowest_ms = Math.max(health.slowest_ms, Math.round(performance.now() - t0));
                    }
                })();
                const run = await runTimed('git', ['-C', work, 'push', '-q', url, 'HEAD:refs/for/main'], { env: GIT_ENV });
                pushing = false;
                await probe;
                const hwm = procMemory(server.pid)?.hwmKiB ?? NaN;
                return { run, idle, hwm, health };
            };
            // Alternating which goes first, so a busy machine (or a warm page cache) favours neither.
            let g;
            let c;
            if (i % 2 === 0) {
                g = await gitPush();
                c = await cairnPush();
            }
            else {
                c = await cairnPush();
                g = await gitPush();
            }
            if (g.code !== 0)
                throw new Error(`git push to the bare repository failed: ${g.stderr}`);
            if (c.run.code !== 0)
                throw new Error(`git push for review failed: ${c.run.stderr}`);
            const mibOf = (kib) => Math.round(kib / 1024);
            rows.push({
                mib,
                cairn_ms: Math.round(c.run.ms),
                git_ms: Math.round(g.ms),
                ratio: Math.round((c.run.ms / g.ms) * 100) / 100,
                server_rss_idle_mib: mibOf(c.idle),
                server_rss_peak_mib: mibOf(c.hwm),
                server_rss_above_idle_mib: mibOf(c.hwm - c.idle),
                healthz_answered: c.health.answered,
                healthz_errors: c.health.errors,
                healthz_slowest_ms: c.health.slowest_ms,
            });
            await fsp.rm(bare, { recursive: true, force: true });
        }
    }
    finally {
        await server.stop();
        await fsp.rm(path.join(o.root, 'push-data'), { recursive: true, force: true });
        await fsp.rm(path.join(o.root, 'push-work'), { recursive: true, force: true });
    }
    return { sizes: rows };
}
export function gitPushRows(f) {
    if (!f)
        return [];
    const out = [];
    for (const r of f.sizes) {
        out.push([`${r.mib} MiB file: git push for review / git push to a bare repository`, `${(Number(r.cairn_ms) / 1000).toFixed(1)} s / ${(Number(r.git_ms) / 1000).toFixed(1)} s = ${r.ratio}×`]);
        out.push([`${r.mib} MiB file: server RSS above idle at its peak (idle)`, `${r.server_rss_above_idle_mib} MiB (${r.server_rss_idle_mib} MiB)`]);
        out.push([`${r.mib} MiB file: /healthz during the push`, `${r.healthz_answered} answered, ${r.healthz_errors} errors, slowest ${r.healthz_slowest_ms} ms`]);
    }
    return out;
}
//# sourceMappingURL=git-push.js.map