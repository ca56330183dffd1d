// Archive figures for `npm run bench` (BENCH_ONLY=archive), against a real Swift s3api on
// loopback (test/swift.ts; Debian's swift packages, which .ci/run installs):
// - shipping: a fresh `serve --archive` over the bench repository until every repository's
//   newest manifest names its current commit (MiB/s, commits/s), against a plain upload of the
//   same files with one PutObject each, four at a time (what `aws s3 cp --recursive` does);
// - commit latency (p50/p99) of small commits with and without shipping;
// - restore: `cairn restore --from … --all` against `cp -a` of the data directory;
// - follower lag: `serve --follow` while the writer commits at a steady rate; the lag of one
//   commit is the time from the writer's answer to the follower answering the same read.
import { promises as fsp, createReadStream } from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startSwift, swiftMissing } from '../test/swift.js';
import { generateTree } from './tree.js';
import { percentile, registerRepository, runOk, runTimed, startCairn } from './proc.js';
const FILES = Number(process.env.BENCH_ARCHIVE_FILES ?? 2000);
const BYTES = Number(process.env.BENCH_ARCHIVE_BYTES ?? 40 * 1024 * 1024);
const COMMITS = Number(process.env.BENCH_ARCHIVE_COMMITS ?? 300);
const FOLLOW_SECONDS = Number(process.env.BENCH_ARCHIVE_FOLLOW_SECONDS ?? 20);
const BUCKET = 'cairn-bench';
const ms = (x) => Math.round(x * 10) / 10;
async function walk(dir) {
    const out = [];
    for (const e of await fsp.readdir(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory())
            out.push(...(await walk(p)));
        else if (e.isFile())
            out.push(p);
    }
    return out;
}
async function sha256File(file) {
    const h = createHash('sha256');
    for await (const chunk of createReadStream(file))
        h.update(chunk);
    return h.digest('hex');
}
async function json(url, init) {
    const res = await fetch(url, init);
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
}
async function post(url, body) {
    return json(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}
/** One small commit: a new task. Its latency in ms and its id. */
async function oneCommit(server, repo, n) {
    const t0 = performance.now();
    const r = await post(`${server.url}/v1/native/repository-authorities/${repo}/tasks`, { title: `bench task ${n}`, intent: 'archive bench' });
    const dt = performance.now() - t0;
    if (r.status !== 201 && r.status !== 200)
        throw new Error(`task create: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    return { ms: dt, id: r.body.task.task_id };
}
async function commitLatency(server, repo, count) {
    const times = [];
    for (let i = 0; i < count; i++)
        times.push((await oneCommit(server, repo, i)).ms);
    times.sort((a, b) => a - b);
    return { commits: count, p50_ms: ms(percentile(times, 50)), p99_ms: ms(percentile(times, 99)) };
}
/** Wait until every repository's newest manifest names its current commit; ms waited. */
async function waitShipped(server, limitMs) {
    const t0 = performance.now();
    for (;;) {
        const h = await json(`${server.url}/healthz`);
        const a = h.body?.archive;
        if (a && a.repositories.length > 0 && a.repositories.every((r) => r.shipped_commit === r.committed))
            return { ms: performance.now() - t0, status: a };
        if (a?.state === 'fenced' || a?.state === 'error')
            throw new Error(`archive ${a.state}: ${a.last_error}`);
        if (performance.now() - t0 > limitMs)
            throw new Error(`shipping did not catch up within ${limitMs} ms: ${JSON.stringify(a)}`);
        await sleep(50);
    }
}
export async function stepArchive(o) {
    const missing = swiftMissing();
    if (missing)
        return { skipped: missing };
    const fig = { files: FILES, bytes: BYTES, commits: COMMITS };
    const swift = await startSwift();
    const env = {
        ...process.env,
        AWS_ACCESS_KEY_ID: swift.accessKeyId,
        AWS_SECRET_ACCESS_KEY: swift.secretAccessKey,
        AWS_REGION: swift.region,
        AWS_ENDPOINT_URL_S3: swift.endpoint,
    };
    const s3 = new S3Client({ region: swift.region, endpoint: swift.endpoint, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED', credentials: { accessKeyId: swift.accessKeyId, secretAccessKey: swift.secretAccessKey } });
    const servers = [];
    try {
        await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
        const data = path.join(o.root, 'archive-data');
        const treeDir = path.join(o.root, 'archive-tree');
        await fsp.rm(data, { recursive: true, force: true });
        await fsp.rm(treeDir, { recursive: true, force: true });
        generateTree(treeDir, { seed: 'archive-bench', files: FILES, bytes: BYTES });
        // The bench repository, and commit latency without an archive.
        let writer = await startCairn(o.cli, data);
        servers.push(writer);
        const repo = await registerRepository(writer.url, 'archive-bench');
        await runOk(process.execPath, [o.cli, 'push', '--server', writer.url, '--repo', String(repo), '--line', 'main', treeDir], { timeoutMs: 600_000 });
        fig.latency_without_archive = await commitLatency(writer, repo, COMMITS);
        o.log(`archive: latency without: ${JSON.stringify(fig.latency_without_archive)}`);
        await writer.stop();
        // The baseline: every file of the data directory's repositories, one PutObject each, four at a time.
        const files = await walk(path.join(data, 'repositories'));
        const sizes = await Promise.all(files.map(async (f) => (await fsp.stat(f)).size));
        const total = sizes.reduce((a, b) => a + b, 0);
        const t0 = performance.now();
        let next = 0;
        await Promise.all(Array.from({ length: 4 }, async () => {
            while (next < files.length) {
                const i = next++;
                const f = files[i];
                const sha = await sha256File(f);
                await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `baseline/${path.relative(data, f)}`, Body: createReadStream(f), ContentLength: sizes[i], Metadata: { sha256: sha } }));
            }
        }));
        const baseMs = performance.now() - t0;
        fig.baseline_upload = { files: files.length, mib: ms(total / 1048576), ms: Math.round(baseMs), mib_per_s: ms(total / 1048576 / (baseMs / 1000)) };
        o.log(`archive: baseline upload: ${JSON.stringify(fig.baseline_upload)}`);
        // Shipping the whole repository from scratch.
        const archiveUrl = `s3://${BUCKET}/ship`;
        const shipArgs = ['--archive', archiveUrl, '--archive-interval-ms', '1000'];
        writer = await startCairnEnv(o.cli, data, shipArgs, env);
        servers.push(writer);
        const first = await waitShipped(writer, 600_000);
        const committed = Number(first.status.repositories.find((r) => r.repository === repo)?.committed ?? 0);
        fig.first_ship = { mib: ms(total / 1048576), ms: Math.round(first.ms), mib_per_s: ms(total / 1048576 / (first.ms / 1000)), ratio_to_baseline: ms(baseMs / first.ms) };
        o.log(`archive: first ship: ${JSON.stringify(fig.first_ship)} (commit ${committed})`);
        // Commit latency while shipping, then how fast shipping covers those commits.
        const loadStart = performance.now();
        fig.latency_with_archive = await commitLatency(writer, repo, COMMITS);
        const caught = await waitShipped(writer, 600_000);
        const loadMs = performance.now() - loadStart;
        fig.shipping_under_load = { commits: COMMITS, ms: Math.round(loadMs), commits_per_s: ms(COMMITS / (loadMs / 1000)), catch_up_after_load_ms: Math.round(caught.ms) };
        o.log(`archive: latency with: ${JSON.stringify(fig.latency_with_archive)}; ${JSON.stringify(fig.shipping_under_load)}`);
        // Follower lag under a steady write load (5 commits/s).
        const followData = path.join(o.root, 'archive-follow');
        await fsp.rm(followData, { recursive: true, force: true });
        const follower = await startCairnEnv(o.cli, followData, ['--follow', archiveUrl, '--follow-interval-ms', '500'], env);
        servers.push(follower);
        const lags = [];
        const until = performance.now() + FOLLOW_SECONDS * 1000;
        let n = 0;
        while (performance.now() < until) {
            const { id } = await oneCommit(writer, repo, 100_000 + n++);
            const t = performance.now();
            for (;;) {
                const r = await fetch(`${follower.url}/v1/native/repository-authorities/${repo}/tasks/${id}`);
                await r.arrayBuffer();
                if (r.status === 200)
                    break;
                if (performance.now() - t > 120_000)
                    throw new Error('the follower did not catch up within 120 s');
                await sleep(20);
            }
            lags.push(performance.now() - t);
            await sleep(200);
        }
        lags.sort((a, b) => a - b);
        fig.follower_lag = { samples: lags.length, p50_ms: Math.round(percentile(lags, 50)), p99_ms: Math.round(percentile(lags, 99)), max_ms: Math.round(lags[lags.length - 1] ?? NaN) };
        o.log(`archive: follower lag: ${JSON.stringify(fig.follower_lag)}`);
        await follower.stop();
        await waitShipped(writer, 600_000);
        await writer.stop();
        // Restore against a copy of the data directory.
        const restored = path.join(o.root, 'archive-restored');
        const copied = path.join(o.root, 'archive-copied');
        await fsp.rm(restored, { recursive: true, force: true });
        await fsp.rm(copied, { recursive: true, force: true });
        const r = await runTimed(process.execPath, [o.cli, 'restore', '--from', archiveUrl, '--all', '--data', restored, '--json'], { env, timeoutMs: 600_000 });
        if (r.code !== 0)
            throw new Error(`restore failed: ${r.stderr || r.stdout}`);
        const cp = await runOk('cp', ['-a', data, copied]);
        fig.restore = { ms: Math.round(r.ms), cp_ms: Math.round(cp.ms), ratio_to_cp: ms(r.ms / cp.ms) };
        o.log(`archive: restore: ${JSON.stringify(fig.restore)}`);
        for (const d of [restored, copied, followData, treeDir])
            await fsp.rm(d, { recursive: true, force: true });
        return fig;
    }
    finally {
        for (const s of servers)
            await s.stop().catch(() => null);
        s3.destroy();
        await swift.stop();
    }
}
/** startCairn with extra serve arguments and the archive's credentials in its environment. */
function startCairnEnv(cli, data, serveArgs, env) {
    return startCairn(cli, data, { serveArgs, env });
}
export function archiveRows(fig) {
    if (!fig)
        return [];
    if (fig.skipped)
        return [['archive', `skipped: ${fig.skipped}`]];
    const rows = [];
    const f = (k) => fig[k];
    const b = f('baseline_upload');
    const s = f('first_ship');
    if (b && s) {
        rows.push([`plain upload of the repository's ${b.files} files (${b.mib} MiB, PutObject ×4)`, `${b.ms} ms, ${b.mib_per_s} MiB/s`]);
        rows.push(['serve --archive: first full ship of the same repository', `${s.ms} ms, ${s.mib_per_s} MiB/s (${s.ratio_to_baseline}× the plain upload's speed)`]);
    }
    const l = f('shipping_under_load');
    if (l)
        rows.push([`${l.commits} sequential small commits, made and shipped`, `${l.commits_per_s} commits/s from the first commit to the last one shipped (shipped ${l.catch_up_after_load_ms} ms after its answer)`]);
    const w0 = f('latency_without_archive');
    const w1 = f('latency_with_archive');
    if (w0 && w1)
        rows.push(['small commit latency without / with archiving', `p50 ${w0.p50_ms} / ${w1.p50_ms} ms, p99 ${w0.p99_ms} / ${w1.p99_ms} ms`]);
    const r = f('restore');
    if (r)
        rows.push(['cairn restore --all against cp -a of the data directory', `${r.ms} ms vs ${r.cp_ms} ms (${r.ratio_to_cp}×)`]);
    const fl = f('follower_lag');
    if (fl)
        rows.push([`follower lag, writer at ~4 commits/s (${fl.samples} samples)`, `p50 ${fl.p50_ms} ms, p99 ${fl.p99_ms} ms, max ${fl.max_ms} ms`]);
    return rows;
}
//# sourceMappingURL=archive.js.map