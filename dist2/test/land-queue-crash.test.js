// kill -9 during a move of the land queue (docs/land-queue.md, "Durability"): a child server is
// killed inside the transaction of a speculation build, of a land from the queue and of an
// ejection, once before its commit point (commit:after-log: the move is lost) and once after it
// (commit:after-state: the move holds). CAIRN_TEST_CRASH_AT=`queue:<move>>commit:<step>` arms the
// commit step when the queue starts that move (lib/store/crash-point.ts), so the commit that dies
// is the move's own (`queue:land>queue:build>…`: the build that follows the first land). After a
// restart the queue resumes from its records; CI is played by the
// test over HTTP. Nothing is lost, nothing lands twice, the main line is the chain of tested
// speculative snapshots, and fsck finds nothing.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { push } from '../lib/client/transfer.js';
import { QUEUE_ENTRY } from '../lib/domain/workflow/land-queue.js';
import { CHANGE } from '../lib/domain/workflow/rules.js';
import { ContentStore } from '../lib/store/content-store.js';
import { api, cli, ok, register, spawnServer, tempDir } from './helpers.js';
import { R, result, RUNTIME } from './land-queue-fixture.js';
const BASE = { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' };
const EDITS = [{ 'a.txt': 'A\n' }, { 'b.txt': 'B\n' }, { 'c.txt': 'C\n' }];
class Repo {
    url;
    repo;
    constructor(url, repo) {
        this.url = url;
        this.repo = repo;
    }
    post(rest, json) {
        return api(this.url, 'POST', R(this.repo, rest), { json });
    }
    get(rest) {
        return api(this.url, 'GET', R(this.repo, rest));
    }
    async snap(files, moveLine, parent) {
        const dir = tempDir();
        for (const [p, v] of Object.entries(files))
            await fsp.writeFile(path.join(dir, p), v);
        return (await push({ server: this.url, repo: this.repo, line: 'main', dir, moveLine, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
    }
    /** A change on main from `base`, attested and approved: its gates pass but for CI. */
    async change(base, files) {
        const revision = await this.snap(files, false, base);
        const t = (await ok(this.post('/tasks', { title: 'T', intent: 'I' }), 'task')).task;
        const c = (await ok(this.post('/changes', { task_id: t.task_id, title: 'C', base_line: 'main' }), 'change')).change;
        const p = (await ok(this.post(`/changes/${c.change_id}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: revision, summary: 's', author_mode: 'human_with_ai_assist', author: 'carol' }), 'patchset')).patchset;
        await ok(api(this.url, 'PUT', R(this.repo, `/patchsets/${p.patchset_id}/attestation`), { json: { verification_state: 'pass' } }), 'attest');
        await ok(this.post(`/changes/${c.change_id}/reviews`, { patchset_id: p.patchset_id, reviewer: 'alice', action: 'approve' }), 'approve');
        return { change: c.change_id, ref: c.change_ref };
    }
    async queue() {
        return ok(this.get('/land-queue?target_line=main'), 'land-queue');
    }
    async entry(id) {
        return (await ok(this.get(`/land-queue/${id}`), id)).entry;
    }
    async head() {
        return (await ok(this.get('/lines/main'), 'line')).head_snapshot_id;
    }
    /** Claim a job and report a passing or failing result; false when the job was no longer claimable (ended by a reset). */
    async play(index, outcome) {
        const claim = await this.post(`/worker-jobs/${index}:claim`, { accepted_runtime_contracts: [RUNTIME] });
        if (claim.status !== 200)
            return false;
        const done = await this.post(`/worker-jobs/${index}:complete`, { attempt_count: claim.json.attempt_count, lease_token: claim.json.lease_token, detail: { job_kind: 11, result: result(outcome) } });
        expect(done.status, done.text).to.equal(200);
        return true;
    }
    /** Poll until the queue's entries all carry a speculation (bounded). */
    async untilTesting(count) {
        for (const deadline = Date.now() + 10_000;;) {
            const q = await this.queue();
            if (q.entries.filter((e) => e.state === 'testing').length === count)
                return q.entries;
            if (Date.now() > deadline)
                expect.fail(`expected ${count} testing entries: ${JSON.stringify(q.entries)}`);
            await sleep(30);
        }
    }
    /** Play every queue job as it appears until no entry is active (bounded). */
    async drain(outcome) {
        for (const deadline = Date.now() + 15_000;;) {
            const q = await this.queue();
            if (q.entries.length === 0)
                return;
            let played = false;
            for (const e of q.entries) {
                if (e.state === 'testing' && e.speculation.tested_by === e.entry_id && e.ci?.job_state === 'queued')
                    played = (await this.play(e.ci.worker_job_index, outcome(e))) || played;
            }
            if (Date.now() > deadline)
                expect.fail(`the queue did not finish: ${JSON.stringify(q.entries)}`);
            if (!played)
                await sleep(30);
        }
    }
}
async function stop(s) {
    s.proc.kill('SIGTERM');
    await s.exited;
}
/** The queue entries, the main head and some changes as the data directory holds them (server down). */
async function onDisk(data, repo, ids, changeIds = []) {
    const { store } = await ContentStore.open(path.join(data, 'repositories', String(repo)));
    try {
        return { head: store.line('main')?.head_snapshot_id ?? null, entries: ids.map((id) => store.entity(QUEUE_ENTRY, id)), changes: changeIds.map((id) => store.entity(CHANGE, id)) };
    }
    finally {
        store.close();
    }
}
const job = (e) => e.speculation.worker_job_indexes.at(-1);
/** The :complete whose commit triggers the move may lose its answer to the kill. */
const tolerant = (p) => p.then(() => undefined, () => undefined);
const CASES = [
    {
        move: 'build',
        depth: 1,
        armedBy: 'queue:land',
        // e1 passes and lands; the queue then builds e2's speculation on the new head: the kill.
        trigger: (r, [e1]) => tolerant(r.play(job(e1), 'pass')),
        crashed: (d, held, _base, [e1]) => {
            expect(d.entries[0].state).to.equal('landed');
            expect(d.head).to.equal(e1.speculation.snapshot_id);
            if (held) {
                expect(d.entries[1].state).to.equal('testing');
                expect(d.entries[1].speculation.base_snapshot_id).to.equal(e1.speculation.snapshot_id);
                expect(d.entries[1].speculation.worker_job_indexes).to.have.length(1);
            }
            else {
                expect(d.entries[1]).to.include({ state: 'queued', speculation: null });
            }
            expect(d.entries[2]).to.include({ state: 'queued', speculation: null });
        },
        outcome: () => 'pass',
        ejected: [],
    },
    {
        move: 'land',
        depth: 3,
        // e2 passes first (it waits behind e1), then e1 passes: the queue lands e1: the kill.
        trigger: async (r, [e1, e2]) => {
            expect(await r.play(job(e2), 'pass')).to.equal(true);
            expect((await r.entry(e2.entry_id)).state, 'e2 never lands before e1').to.equal('testing');
            await tolerant(r.play(job(e1), 'pass'));
        },
        crashed: (d, held, base, [e1]) => {
            if (held) {
                expect(d.entries[0]).to.include({ state: 'landed', landed_snapshot_id: e1.speculation.snapshot_id });
                expect(d.head).to.equal(e1.speculation.snapshot_id);
            }
            else {
                expect(d.entries[0]).to.include({ state: 'testing', land_id: null });
                expect(d.head).to.equal(base);
            }
            for (const e of d.entries.slice(1))
                expect(e.state).to.equal('testing');
        },
        outcome: () => 'pass',
        ejected: [],
    },
    {
        move: 'eject_failed',
        depth: 3,
        // e1's CI fails (no retries): the queue ejects it: the kill.
        trigger: (r, [e1]) => tolerant(r.play(job(e1), 'fail')),
        crashed: (d, held, base) => {
            expect(d.head).to.equal(base);
            if (held) {
                expect(d.entries[0].state).to.equal('ejected');
                expect(d.entries[0].ejection.reason).to.equal('ci_failed');
            }
            else {
                expect(d.entries[0]).to.include({ state: 'testing', ejection: null });
            }
            for (const e of d.entries.slice(1))
                expect(e.state).to.equal('testing');
        },
        // e1's job already failed; no new job of e1 is expected, but fail it should one appear.
        outcome: (e, ids) => (e.entry_id === ids[0] ? 'fail' : 'pass'),
        ejected: [0],
    },
];
describe('land queue: kill -9 during a move', function () {
    this.timeout(60_000);
    // A server left running by a failed case is killed (a passing case stops its own).
    const spawned = [];
    afterEach(async () => {
        for (const s of spawned.splice(0)) {
            if (s.proc.exitCode === null && s.proc.signalCode === null) {
                s.proc.kill('SIGKILL');
                await s.exited;
            }
        }
    });
    for (const c of CASES) {
        for (const step of ['commit:after-log', 'commit:after-state']) {
            it(`killed at ${step} of ${c.move === 'eject_failed' ? 'an ejection' : c.move === 'build' ? 'a speculation build' : 'a land'}: nothing is lost, nothing lands twice`, async () => {
                const data = path.join(tempDir(), 'data');
                const args = ['--queue-depth', String(c.depth), '--queue-retries', '0', '--queue-stall-seconds', '3600'];
                // The doomed server: three changes queued, the first `depth` of them speculated, then CI
                // played until the move, whose own commit dies at `step`.
                const doomed = await spawnServer(data, args, true, { CAIRN_TEST_CRASH_AT: `${c.armedBy ? `${c.armedBy}>` : ''}queue:${c.move}>${step}` });
                spawned.push(doomed);
                const r = new Repo(doomed.url, await register(doomed.url, 'crash'));
                const base = await r.snap(BASE, true);
                const changes = [];
                const ids = [];
                for (const edit of EDITS)
                    changes.push(await r.change(base, { ...BASE, ...edit }));
                for (const ch of changes) {
                    const res = await r.post('/land-queue', { change_ref: ch.ref, mode: 'merge' });
                    expect(res.status, res.text).to.equal(201);
                    ids.push(res.json.entry.entry_id);
                }
                await r.untilTesting(c.depth);
                const before = await Promise.all(ids.map((id) => r.entry(id)));
                await c.trigger(r, before);
                const code = await Promise.race([doomed.exited, sleep(10_000).then(() => 'alive')]);
                if (code === 'alive')
                    expect.fail(`the server was not killed during the ${c.move}: ${doomed.output().slice(-2000)}`);
                expect(code, 'killed by SIGKILL').to.equal(null);
                c.crashed(await onDisk(data, r.repo, ids), step === 'commit:after-state', base, before);
                // Restarted without the crash point: the queue resumes from its records.
                const restarted = await spawnServer(data, args);
                spawned.push(restarted);
                r.url = restarted.url;
                try {
                    await r.drain((e) => c.outcome(e, ids));
                    const entries = await Promise.all(ids.map((id) => r.entry(id)));
                    let head = base;
                    for (const [i, e] of entries.entries()) {
                        const lands = (await ok(r.get(`/read/changes/${changes[i].ref}/lands`), 'lands')).lands;
                        const landed = lands.filter((l) => l.status === 'landed');
                        if (c.ejected.includes(i)) {
                            expect(e.state, JSON.stringify(e)).to.equal('ejected');
                            expect(e.ejection.reason).to.equal('ci_failed');
                            expect(e.ejection.worker_job_indexes).to.deep.equal([job(before[i])]);
                            expect(e.ejection.failing_suites).to.deep.equal(['unit']);
                            expect(landed, 'an ejected change never lands').to.deep.equal([]);
                            expect((await ok(r.get(`/changes/${changes[i].change}`))).change.status, 'an ejected change stays open').to.equal('active');
                            continue;
                        }
                        expect(e.state, JSON.stringify(e)).to.equal('landed');
                        expect(landed, `${changes[i].ref} landed exactly once`).to.have.length(1);
                        const land = landed[0];
                        expect(land).to.include({ land_id: e.land_id, land_queue_entry_id: e.entry_id, target_head_before: head, landed_snapshot_id: e.speculation.snapshot_id });
                        expect(e.landed_snapshot_id).to.equal(e.speculation.snapshot_id);
                        expect(e.speculation.base_snapshot_id, 'it landed onto the head its CI tested').to.equal(head);
                        head = e.landed_snapshot_id;
                    }
                    expect(await r.head(), 'main is the chain of the landed speculations').to.equal(head);
                    const q = await r.queue();
                    expect(q.entries).to.deep.equal([]);
                    expect(q.recent.map((e) => e.entry_id).sort()).to.deep.equal([...ids].sort());
                }
                finally {
                    await stop(restarted);
                }
                const check = await cli(['fsck', '--data', data]);
                expect(check.code, check.stdout + check.stderr).to.equal(0);
            });
        }
    }
});
describe('land queue: kill -9 in the commit of a new patchset of a queued change', function () {
    this.timeout(60_000);
    const spawned = [];
    afterEach(async () => {
        for (const s of spawned.splice(0)) {
            if (s.proc.exitCode === null && s.proc.signalCode === null) {
                s.proc.kill('SIGKILL');
                await s.exited;
            }
        }
    });
    for (const step of ['commit:after-log', 'commit:after-state']) {
        it(`killed at ${step}: the patchset and the ejection hold or are lost together; the queued patchset never lands, the new one does`, async () => {
            const data = path.join(tempDir(), 'data');
            const args = ['--queue-depth', '1', '--queue-retries', '0', '--queue-stall-seconds', '3600'];
            const doomed = await spawnServer(data, args, true, { CAIRN_TEST_CRASH_AT: `queue:patchset_changed>${step}` });
            spawned.push(doomed);
            const r = new Repo(doomed.url, await register(doomed.url, 'crash'));
            const base = await r.snap(BASE, true);
            const c = await r.change(base, { ...BASE, 'a.txt': 'first try\n' });
            const res = await r.post('/land-queue', { change_ref: c.ref, mode: 'merge' });
            expect(res.status, res.text).to.equal(201);
            const id = res.json.entry.entry_id;
            const [queued] = await r.untilTesting(1);
            const fixed = await r.snap({ ...BASE, 'a.txt': 'the fix\n' }, false, base);
            const body = { base_snapshot_id: base, revision_snapshot_id: fixed, summary: 'fix', author_mode: 'human_with_ai_assist', author: 'carol' };
            await tolerant(r.post(`/changes/${c.change}/patchsets`, body));
            const code = await Promise.race([doomed.exited, sleep(10_000).then(() => 'alive')]);
            if (code === 'alive')
                expect.fail(`the server was not killed in the push's commit: ${doomed.output().slice(-2000)}`);
            expect(code, 'killed by SIGKILL').to.equal(null);
            const held = step === 'commit:after-state';
            const d = await onDisk(data, r.repo, [id], [c.change]);
            expect(d.head).to.equal(base);
            if (held) {
                expect(d.changes[0].patchset_count).to.equal(2);
                expect(d.entries[0].state).to.equal('ejected');
                expect(d.entries[0].ejection.reason).to.equal('patchset_changed');
            }
            else {
                expect(d.changes[0].patchset_count).to.equal(1);
                expect(d.entries[0].state).to.equal('testing');
            }
            const restarted = await spawnServer(data, args);
            spawned.push(restarted);
            r.url = restarted.url;
            try {
                // Lost with its push: pushed again, the entry leaves in that commit.
                if (!held)
                    await ok(r.post(`/changes/${c.change}/patchsets`, body), 'push again');
                const x = await r.entry(id);
                expect(x.state, JSON.stringify(x)).to.equal('ejected');
                expect(x.ejection.reason).to.equal('patchset_changed');
                expect(await r.play(job(queued), 'pass'), 'the queued patchset\'s job ended').to.equal(false);
                const ps2 = `${c.change}.ps-2`;
                await ok(r.post(`/changes/${c.change}:selectPatchset`, { patchset_id: ps2 }), 'select');
                await ok(api(r.url, 'PUT', R(r.repo, `/patchsets/${ps2}/attestation`), { json: { verification_state: 'pass' } }), 'attest');
                await ok(r.post(`/changes/${c.change}/reviews`, { patchset_id: ps2, reviewer: 'alice', action: 'approve' }), 'approve');
                const again = await r.post('/land-queue', { change_ref: c.ref, mode: 'merge' });
                expect(again.status, again.text).to.equal(201);
                await r.drain(() => 'pass');
                const lands = (await ok(r.get(`/read/changes/${c.ref}/lands`), 'lands')).lands.filter((l) => l.status === 'landed');
                expect(lands.map((l) => l.patchset_id)).to.deep.equal([ps2]);
            }
            finally {
                await stop(restarted);
            }
            const check = await cli(['fsck', '--data', data]);
            expect(check.code, check.stdout + check.stderr).to.equal(0);
        });
    }
});
//# sourceMappingURL=land-queue-crash.test.js.map