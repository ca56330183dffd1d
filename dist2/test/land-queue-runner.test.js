// `cairn runner` drives the land queue end to end (docs/land-queue.md): a child `cairn serve`, a
// repository whose snapshots carry a ci/run.sh that fails when b.txt says "broken", three changes
// queued (the middle one breaks b.txt), and `cairn runner --kinds 11` as a child process running
// the queue's repo.ci jobs on the speculative snapshots. The passing changes land in order, each
// onto the snapshot its CI tested; the failing one is ejected with ci_failed and its suite.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { push } from '../lib/client/transfer.js';
import { CLI, api, cli, ok, register, spawnServer, tempDir } from './helpers.js';
import { R } from './land-queue-fixture.js';
// The CI script: the unit suite fails when b.txt says "broken" (exit 1), else every suite passes.
const RUN_SH = `if grep -q broken b.txt; then
  printf '%s' '{"suites": [{"suite_id": "unit", "status": "fail", "blocking": true}, {"suite_id": "lint", "status": "pass", "blocking": false}]}' > ci/results.json
  echo "unit: b.txt is broken"
  exit 1
fi
printf '%s' '{"suites": [{"suite_id": "unit", "status": "pass", "blocking": true}, {"suite_id": "lint", "status": "pass", "blocking": false}]}' > ci/results.json
`;
const BASE = { 'ci/run.sh': RUN_SH, 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' };
describe('cairn runner drives the land queue', function () {
    this.timeout(60_000);
    let server;
    before(async () => {
        server = await spawnServer(path.join(tempDir(), 'data'), ['--queue-depth', '3', '--queue-retries', '0', '--queue-stall-seconds', '3600']);
    });
    after(async () => {
        server.proc.kill('SIGTERM');
        await server.exited;
    });
    it('three queued changes, the middle one breaks CI: the runner tests each speculation; the others land in order onto the tested snapshots, the middle one is ejected with its failing suite', async () => {
        const repo = await register(server.url, 'queue-runner');
        const post = (rest, json) => api(server.url, 'POST', R(repo, rest), { json });
        const get = (rest) => api(server.url, 'GET', R(repo, rest));
        const snap = async (files, moveLine, parent) => {
            const dir = tempDir();
            for (const [p, v] of Object.entries(files)) {
                await fsp.mkdir(path.dirname(path.join(dir, p)), { recursive: true });
                await fsp.writeFile(path.join(dir, p), v);
            }
            return (await push({ server: server.url, repo, line: 'main', dir, moveLine, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
        };
        const base = await snap(BASE, true);
        const changes = [];
        for (const edit of [{ 'a.txt': 'A\n' }, { 'b.txt': 'broken\n' }, { 'c.txt': 'C\n' }]) {
            const revision = await snap({ ...BASE, ...edit }, false, base);
            const t = (await ok(post('/tasks', { title: 'T', intent: 'I' }), 'task')).task;
            const c = (await ok(post('/changes', { task_id: t.task_id, title: 'C', base_line: 'main' }), 'change')).change;
            const p = (await ok(post(`/changes/${c.change_id}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: revision, summary: 's', author_mode: 'human_with_ai_assist', author: 'carol' }), 'patchset')).patchset;
            await ok(api(server.url, 'PUT', R(repo, `/patchsets/${p.patchset_id}/attestation`), { json: { verification_state: 'pass' } }), 'attest');
            await ok(post(`/changes/${c.change_id}/reviews`, { patchset_id: p.patchset_id, reviewer: 'alice', action: 'approve' }), 'approve');
            changes.push({ change: c.change_id, ref: c.change_ref });
        }
        const ids = [];
        for (const c of changes) {
            const res = await post('/land-queue', { change_ref: c.ref, mode: 'merge' });
            expect(res.status, res.text).to.equal(201);
            ids.push(res.json.entry.entry_id);
        }
        // The runner, serving this repository's repo.ci jobs until stopped.
        const workdir = path.join(tempDir(), 'work');
        const runner = spawn(process.execPath, [CLI, 'runner', '--server', server.url, '--repo', String(repo), '--kinds', '11', '--workdir', workdir, '--poll-ms', '200'], { stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        runner.stdout.on('data', (d) => { stdout += d; });
        runner.stderr.on('data', (d) => { stderr += d; });
        const exited = new Promise((resolve) => runner.on('close', (code) => resolve(code)));
        let q;
        try {
            for (const deadline = Date.now() + 40_000;;) {
                q = await ok(get('/land-queue?target_line=main'), 'land-queue');
                if (q.entries.length === 0)
                    break;
                if (Date.now() > deadline)
                    expect.fail(`the queue did not finish: ${JSON.stringify(q.entries)}\nrunner: ${stdout}\n${stderr}`);
                await sleep(100);
            }
        }
        finally {
            runner.kill('SIGTERM');
        }
        expect(await exited, stderr).to.not.equal(null);
        const [e1, e2, e3] = await Promise.all(ids.map(async (id) => (await ok(get(`/land-queue/${id}`), id)).entry));
        // The middle change is ejected with the evidence of its failed run.
        expect(e2.state, JSON.stringify(e2)).to.equal('ejected');
        expect(e2.ejection.reason).to.equal('ci_failed');
        expect(e2.ejection.failing_suites).to.deep.equal(['unit']);
        expect(e2.ejection.worker_job_indexes).to.have.length(1);
        const failedJob = (await ok(get(`/worker-jobs/${e2.ejection.worker_job_indexes[0]}`))).job;
        expect(failedJob).to.include({ job_kind: 11, trigger: 'land_queue', snapshot_id: e2.speculation.snapshot_id, outcome: 'command_failed', state: 'succeeded' });
        expect(failedJob.land_queue_entry_ids).to.deep.equal([e2.entry_id]);
        expect((await ok(get(`/read/changes/${changes[1].ref}/lands`))).lands.filter((l) => l.status === 'landed')).to.deep.equal([]);
        // The others land in order, each onto the head its speculation was built on and tested.
        expect(e1).to.include({ state: 'landed', landed_snapshot_id: e1.speculation.snapshot_id });
        expect(e1.speculation.base_snapshot_id).to.equal(base);
        expect(e3).to.include({ state: 'landed', landed_snapshot_id: e3.speculation.snapshot_id });
        expect(e3.speculation.base_snapshot_id, 'rebuilt without the ejected change').to.equal(e1.landed_snapshot_id);
        let head = base;
        for (const [i, e] of [[0, e1], [2, e3]]) {
            const landed = (await ok(get(`/read/changes/${changes[i].ref}/lands`))).lands.filter((l) => l.status === 'landed');
            expect(landed, `${changes[i].ref} landed once`).to.have.length(1);
            expect(landed[0]).to.include({ land_queue_entry_id: e.entry_id, target_head_before: head, landed_snapshot_id: e.speculation.snapshot_id });
            // The runner ran the job that let it land, on the snapshot that landed.
            const passed = (await ok(get(`/worker-jobs/${e.speculation.worker_job_indexes.at(-1)}`))).job;
            expect(passed).to.include({ snapshot_id: e.speculation.snapshot_id, state: 'succeeded', outcome: 'succeeded' });
            head = e.landed_snapshot_id;
        }
        expect((await ok(get('/lines/main'))).head_snapshot_id).to.equal(head);
        // Every job the runner reported is one of the queue's; the passing runs and the failing one are among them.
        const lines = stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
        for (const l of lines)
            expect(l).to.include({ repository_index: repo, job_kind: 11 });
        const ran = new Map(lines.map((l) => [l.worker_job_index, l]));
        expect(ran.get(e1.speculation.worker_job_indexes.at(-1))).to.include({ outcome: 'succeeded', tests_status: 'pass' });
        expect(ran.get(e3.speculation.worker_job_indexes.at(-1))).to.include({ outcome: 'succeeded', tests_status: 'pass' });
        expect(ran.get(e2.ejection.worker_job_indexes[0])).to.include({ outcome: 'command_failed', tests_status: 'fail', suites: 2 });
        // main holds c1 and c3, not c2's breakage.
        const out = path.join(tempDir(), 'out');
        const pulled = await cli(['pull', '--server', server.url, '--repo', String(repo), '--line', 'main', out]);
        expect(pulled.code, pulled.stderr).to.equal(0);
        const read = (f) => fsp.readFile(path.join(out, f), 'utf8');
        expect([await read('a.txt'), await read('b.txt'), await read('c.txt')]).to.deep.equal(['A\n', 'b\n', 'C\n']);
    });
});
//# sourceMappingURL=land-queue-runner.test.js.map