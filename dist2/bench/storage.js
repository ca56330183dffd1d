// Storage-core figures for `npm run bench` (issue: one commit point, index segments, group
// commit):
//  - small commit on a large store: a one-file `cairn push` (plan, upload, commit) into stores
//    whose blob index holds 10k, 100k and 1M entries (scaled by BENCH_SCALE), and the time to
//    open the largest store (in-process ContentStore.open, and a server start until /healthz);
//  - group commit: durable line updates (PUT lines/{name}, each a real commit) from 1 and 16
//    concurrent keep-alive clients, against a single-writer write+fsync+rename loop run in this
//    process on the same disk; and durable task creates (POST tasks, one workflow.log record
//    each) from 1 and 16 clients against the same loop.
import { mkdirSync, promises as fsp, writeFileSync, openSync, writeSync, fsyncSync, closeSync, renameSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { blobId } from '../lib/domain/content.js';
import { ContentStore } from '../lib/store/content-store.js';
import { buildPack, PACK_KIND_OBJECT } from '../lib/store/pack.js';
import { registerRepository, runOk, startCairn } from './proc.js';
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const r1 = (n) => Math.round(n * 10) / 10;
/** Add `count` blob locators to an authority offline (ids are random; all point at one real blob). */
async function fillBlobs(root, count) {
    const { store } = await ContentStore.open(root);
    try {
        const raw = Buffer.from('filler\n');
        const pack = buildPack(PACK_KIND_OBJECT, [{ id: blobId(raw), raw }]);
        const e = pack.entries[0];
        const chunk = 250_000;
        for (let done = 0; done < count; done += chunk) {
            const n = Math.min(chunk, count - done);
            await store.transact((tx) => {
                tx.writePack(PACK_KIND_OBJECT, pack.packId, pack.bytes);
                for (let i = 0; i < n; i++) {
                    tx.addLocator({ kind: 'blob', id: randomBytes(32).toString('hex'), pack_id: pack.packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32 });
                }
            });
        }
        // One base segment, as a long-lived store would have after its merges.
        await store.mergeSegments('blobs');
        await store.settle();
    }
    finally {
        store.close();
    }
}
export async function stepSmallCommit(ctx) {
    const sizes = [10_000, 100_000, 1_000_000].map((n) => Math.max(1000, Math.round(n * Math.min(ctx.scale, 1))));
    const stores = [];
    try {
        for (const size of sizes) {
            const data = path.join(ctx.root, `small-commit-${size}`);
            const server = await startCairn(ctx.cli, data);
            const repo = await registerRepository(server.url, `small-${size}`);
            await server.stop();
            ctx.log(`small commit: filling a store with ${size} blobs`);
            const root = path.join(data, 'repositories', String(repo));
            await fillBlobs(root, size);
            const t0 = performance.now();
            const { store } = await ContentStore.open(root);
            const openMs = performance.now() - t0;
            store.close();
            const dir = path.join(ctx.root, `small-tree-${size}`);
            mkdirSync(dir, { recursive: true });
            stores.push({ size, data, repo, server: null, dir, pushes: [], openMs, readyMs: 0 });
        }
        for (const s of stores) {
            const t1 = performance.now();
            s.server = await startCairn(ctx.cli, s.data);
            s.readyMs = performance.now() - t1;
        }
        // Rounds interleave the stores, so a busy minute on this machine hits every size alike.
        for (let i = 0; i < 7; i++) {
            for (const s of stores) {
                writeFileSync(path.join(s.dir, 'file.txt'), `round ${i} of ${s.size}\n`);
                const push = await runOk(process.execPath, [ctx.cli, 'push', '--server', s.server.url, '--repo', String(s.repo), '--line', 'dev', s.dir]);
                s.pushes.push(push.ms);
            }
        }
    }
    finally {
        for (const s of stores) {
            if (s.server)
                await s.server.stop();
            await fsp.rm(s.data, { recursive: true, force: true });
        }
    }
    const rounds = stores.map((s) => ({ blobs: s.size, push_median_ms: r1(median(s.pushes)), push_min_ms: r1(Math.min(...s.pushes)), push_max_ms: r1(Math.max(...s.pushes)), open_ms: r1(s.openMs), server_ready_ms: r1(s.readyMs) }));
    return { rounds, largest_over_smallest: Math.round((rounds.at(-1).push_median_ms / rounds[0].push_median_ms) * 100) / 100 };
}
/** The single-writer durable-write loop: write a small file, fsync, rename over the target. */
function fsyncLoop(dir, ms) {
    mkdirSync(dir, { recursive: true });
    const target = path.join(dir, 'target');
    const temp = path.join(dir, 'target.tmp');
    const bytes = Buffer.alloc(128, 7);
    let n = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < ms) {
        const fd = openSync(temp, 'w');
        writeSync(fd, bytes);
        fsyncSync(fd);
        closeSync(fd);
        renameSync(temp, target);
        n++;
    }
    return n / ((performance.now() - t0) / 1000);
}
function put(agent, url, body, method = 'PUT') {
    return new Promise((resolve, reject) => {
        const req = http.request({ agent, host: url.hostname, port: url.port, method, path: url.pathname, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end(body);
    });
}
/** `clients` keep-alive clients, each moving its own line back and forth for `ms`. */
async function lineUpdates(server, repo, snapshot, clients, ms, round) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
    let done = 0;
    const deadline = performance.now() + ms;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: clients }, async (_, c) => {
        const url = new URL(`${server.url}/v1/native/repository-authorities/${repo}/lines/gc-${round}-${clients}-${c}`);
        let head = null;
        while (performance.now() < deadline) {
            const next = head ? null : snapshot;
            const status = await put(agent, url, JSON.stringify({ head_snapshot_id: next, expected_head_snapshot_id: head }));
            if (status !== 200)
                throw new Error(`line update answered ${status}`);
            head = next;
            done++;
        }
    }));
    agent.destroy();
    return done / ((performance.now() - t0) / 1000);
}
/** `clients` keep-alive clients, each creating tasks (POST tasks, one durable workflow.log record each) for `ms`. */
async function taskCreates(server, repo, clients, ms) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
    let done = 0;
    const deadline = performance.now() + ms;
    const t0 = performance.now();
    const url = new URL(`${server.url}/v1/native/repository-authorities/${repo}/tasks`);
    await Promise.all(Array.from({ length: clients }, async (_, c) => {
        while (performance.now() < deadline) {
            const status = await put(agent, url, JSON.stringify({ title: `bench task ${c}`, intent: 'measure durable task creates' }), 'POST');
            if (status !== 200)
                throw new Error(`task create answered ${status}`);
            done++;
        }
    }));
    agent.destroy();
    return done / ((performance.now() - t0) / 1000);
}
export async function stepGroupCommit(ctx) {
    const data = path.join(ctx.root, 'group-commit');
    let server = null;
    try {
        server = await startCairn(ctx.cli, data);
        const repo = await registerRepository(server.url, 'group');
        const dir = path.join(ctx.root, 'group-tree');
        mkdirSync(dir, { recursive: true });
        writeFileSync(path.join(dir, 'a.txt'), 'a\n');
        const pushed = JSON.parse((await runOk(process.execPath, [ctx.cli, 'push', '--server', server.url, '--repo', String(repo), '--line', 'seed', dir])).stdout.trim().split('\n').at(-1));
        ctx.log('group commit: fsync loop, then 1 and 16 clients');
        const figures = {};
        const loops = [];
        const one = [];
        const sixteen = [];
        const tasksOne = [];
        const tasksSixteen = [];
        for (let round = 0; round < 3; round++) {
            loops.push(fsyncLoop(path.join(data, 'fsync-loop'), 1500));
            one.push(await lineUpdates(server, repo, pushed.snapshot_id, 1, 2000, round));
            sixteen.push(await lineUpdates(server, repo, pushed.snapshot_id, 16, 2000, round));
            tasksOne.push(await taskCreates(server, repo, 1, 2000));
            tasksSixteen.push(await taskCreates(server, repo, 16, 2000));
        }
        const loop = median(loops);
        Object.assign(figures, {
            fsync_loop_ops_s: Math.round(loop),
            one_client_ops_s: Math.round(median(one)),
            sixteen_clients_ops_s: Math.round(median(sixteen)),
            one_client_over_loop: Math.round((median(one) / loop) * 100) / 100,
            sixteen_clients_over_loop: Math.round((median(sixteen) / loop) * 100) / 100,
            tasks_one_client_ops_s: Math.round(median(tasksOne)),
            tasks_sixteen_clients_ops_s: Math.round(median(tasksSixteen)),
            tasks_one_client_over_loop: Math.round((median(tasksOne) / loop) * 100) / 100,
            tasks_sixteen_clients_over_loop: Math.round((median(tasksSixteen) / loop) * 100) / 100,
            rounds: loops.map((l, i) => ({ loop: Math.round(l), one: Math.round(one[i]), sixteen: Math.round(sixteen[i]), tasks_one: Math.round(tasksOne[i]), tasks_sixteen: Math.round(tasksSixteen[i]) })),
        });
        return figures;
    }
    finally {
        if (server)
            await server.stop();
        await fsp.rm(data, { recursive: true, force: true });
    }
}
export function storageRows(small, group) {
    const rows = [];
    for (const r of (small?.rounds ?? [])) {
        rows.push([`one-file push into a store of ${r.blobs} blobs`, `median ${r.push_median_ms} ms (min ${r.push_min_ms}, max ${r.push_max_ms}); store open ${r.open_ms} ms, server ready ${r.server_ready_ms} ms`]);
    }
    if (small?.largest_over_smallest != null)
        rows.push(['push time, largest store / smallest', `${small.largest_over_smallest}× (target within 0.8–1.2×)`]);
    if (group) {
        rows.push(['single-writer write+fsync+rename loop', `${group.fsync_loop_ops_s} ops/s`]);
        rows.push(['durable line updates, 1 client', `${group.one_client_ops_s} ops/s = ${group.one_client_over_loop}× the loop (target ≥ 0.7×)`]);
        rows.push(['durable line updates, 16 clients', `${group.sixteen_clients_ops_s} ops/s = ${group.sixteen_clients_over_loop}× the loop (target ≥ 2×)`]);
        if (group.tasks_one_client_ops_s != null) {
            rows.push(['POST tasks, 1 client', `${group.tasks_one_client_ops_s} ops/s = ${group.tasks_one_client_over_loop}× the loop`]);
            rows.push(['POST tasks, 16 clients', `${group.tasks_sixteen_clients_ops_s} ops/s = ${group.tasks_sixteen_clients_over_loop}× the loop`]);
        }
    }
    return rows;
}
//# sourceMappingURL=storage.js.map