// Events as records (storage-layout.md §18): written in the commit that holds what they
// describe, gap-free per repository, in a process-wide time order, readable after a restart and
// after kill -9 exactly when the records they describe are; the registry's own stream.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { changeEvents, EVENT_TYPES, jobEvents, missingRegistryEvents, REGISTRY_EVENT_TYPES, registryEvents } from '../lib/domain/events.js';
import { ERROR_LEASE_EXPIRED, STATE_FAILED, STATE_QUEUED, STATE_RUNNING, STATE_SUCCEEDED } from '../lib/domain/jobs.js';
import { ContentStore } from '../lib/store/content-store.js';
import { decodeEvent } from '../lib/store/event-log.js';
import { eventLowWater } from '../lib/store/event-clock.js';
import { RegistryEventLog } from '../lib/store/registry-events.js';
import { api, cli, exportRepo, ok, PROJECT_ROOT, register, restoreRepo, spawnServer, startTestServer, tempDir } from './helpers.js';
import { BASE_TREE, LANDED_TREE, R, Seeder } from './ui-seed.js';
/** Every event of one repository, read from its events.log with the server stopped. */
async function eventsOf(data, repo) {
    const { store } = await ContentStore.open(path.join(data, 'repositories', String(repo)));
    try {
        return store.events.read(0, 1_000_000);
    }
    finally {
        store.close();
    }
}
function registryEventsOf(data) {
    const log = RegistryEventLog.open(path.join(data, 'registry-events.log'), []);
    try {
        return [...log.all];
    }
    finally {
        log.close();
    }
}
function expectGapFree(events) {
    events.forEach((e, i) => expect(e.seq, `event ${i}`).to.equal(i + 1));
    for (let i = 1; i < events.length; i++)
        expect(events[i].at_us).to.be.at.least(events[i - 1].at_us);
}
describe('events: written with their records', function () {
    this.timeout(120_000);
    it('a review story yields its events in commit order, gap-free, with the ids a consumer needs', async () => {
        const data = path.join(tempDir(), 'data');
        const s = await startTestServer(data);
        let repo;
        try {
            const seed = await Seeder.register(s.url, 'story');
            repo = seed.repo;
            const base = await seed.snap(BASE_TREE, { moveLine: true });
            const c = await seed.change('Docs: order numbers');
            const rev = await seed.snap(LANDED_TREE, { line: 'main', parent: base });
            const ps = await seed.patchset(c.change, base, rev, 'order numbers');
            await seed.requestReview(c.change, ps, 'docs', 'please', 'carol');
            await seed.review(c.change, ps, 'dave', 'approve', 'fine');
            await seed.ci(ps, 'pass');
            await seed.attest(ps);
            await seed.evaluate(ps);
            await seed.post(`/changes/${c.ref}:submit`, { mode: 'ff-only', patchset_id: ps });
            await seed.post('/sprints', { title: 'Plan', artifact_path: 'plans/p.md', artifact_heading: 'P', artifact_body: '# P\n\n- [ ] one {#a}\n' });
        }
        finally {
            await s.stop();
        }
        const events = await eventsOf(data, repo);
        expectGapFree(events);
        const types = events.map((e) => e.type);
        for (const t of ['line.created', 'task.created', 'change.created', 'patchset.created', 'patchset.selected', 'review.requested', 'change.status_changed', 'review.recorded',
            'job.queued', 'job.claimed', 'job.completed', 'attestation.recorded', 'policy.decided', 'land.landed', 'line.moved', 'change.landed', 'plan.created']) {
            expect(types, t).to.include(t);
        }
        // Commit order: what a land does comes after the evidence it judged.
        expect(types.indexOf('land.landed')).to.be.greaterThan(types.indexOf('job.completed'));
        const landed = events.find((e) => e.type === 'land.landed');
        expect(landed.data).to.include({ change_ref: 'task-1.change-1', target_line: 'main' });
        const moved = events.filter((e) => e.type === 'line.moved').at(-1);
        // The land's own commit holds both the line move and the land record.
        expect(moved.at_us).to.equal(landed.at_us);
        expect(moved.data.head_snapshot_id).to.equal(landed.data.landed_snapshot_id);
        // Ids only: no titles, intents or bodies.
        expect(JSON.stringify(events)).to.not.include('Deliver: Docs');
    });
    for (const point of ['commit:after-log', 'commit:before-state', 'commit:after-state']) {
        it(`a task create killed at ${point}: its event is there exactly when the task is`, async () => {
            const data = path.join(tempDir(), 'data');
            const first = await spawnServer(data);
            const repo = await register(first.url, 'crash');
            await ok(api(first.url, 'POST', R(repo, '/tasks'), { json: { title: 'before', intent: 'x' } }));
            first.proc.kill('SIGTERM');
            await first.exited;
            const doomed = await spawnServer(data, [], true, { CAIRN_TEST_CRASH_AT: point });
            expect(await api(doomed.url, 'POST', R(repo, '/tasks'), { json: { title: 'doomed', intent: 'y' } }).catch(() => null)).to.equal(null);
            expect(await doomed.exited).to.equal(null);
            const events = await eventsOf(data, repo);
            expectGapFree(events);
            const created = events.filter((e) => e.type === 'task.created').map((e) => e.data.task_id);
            const restarted = await spawnServer(data);
            try {
                const tasks = (await ok(api(restarted.url, 'GET', R(repo, '/tasks')))).tasks.map((t) => t.task_id);
                expect(created).to.deep.equal(point === 'commit:after-state' ? ['task-1', 'task-2'] : ['task-1']);
                expect(tasks.sort()).to.deep.equal(created.slice().sort());
                // Sequences continue after the crash without a gap or a reuse.
                await ok(api(restarted.url, 'POST', R(repo, '/tasks'), { json: { title: 'after', intent: 'z' } }));
            }
            finally {
                restarted.proc.kill('SIGTERM');
                await restarted.exited;
            }
            const after = await eventsOf(data, repo);
            expectGapFree(after);
            expect(after.at(-1).type).to.equal('task.created');
            const check = await cli(['fsck', '--data', data]);
            expect(check.code, check.stdout + check.stderr).to.equal(0);
        });
    }
    it('a listener hears of an event only once what it describes is readable; times order commits of all repositories', async () => {
        const a = tempDir();
        const b = tempDir();
        const { store: sa } = await ContentStore.open(a);
        const { store: sb } = await ContentStore.open(b);
        try {
            const seen = [];
            sa.onEvents((events) => { for (const e of events)
                seen.push({ event: e, visible: sa.entity('task', String(e.data.task_id)), lowWater: eventLowWater() }); });
            const commit = (store, id) => store.transact((tx) => {
                tx.upsert('task', id, { task_id: id });
                tx.emit('task.created', { task_id: id });
            });
            await Promise.all([commit(sa, 't1'), commit(sb, 'u1'), commit(sa, 't2'), commit(sb, 'u2')]);
            expect(seen.map((s) => s.event.data.task_id)).to.deep.equal(['t1', 't2']);
            for (const s of seen)
                expect(s.visible).to.deep.equal({ task_id: s.event.data.task_id });
            const all = [...sa.events.read(0, 10), ...sb.events.read(0, 10)];
            expect(new Set(all.map((e) => e.at_us)).size, 'one time per batch, never shared across repositories').to.equal(new Set(all.map((e) => `${e.at_us}`)).size);
            const times = [sa.events.read(0, 10), sb.events.read(0, 10)].map((list) => list.map((e) => e.at_us));
            expect(times[0].some((t) => times[1].includes(t))).to.equal(false);
            expect(eventLowWater()).to.be.greaterThan(Math.max(...times.flat()));
            expect(sa.commitState.event_count).to.equal(2);
        }
        finally {
            sa.close();
            sb.close();
        }
    });
    it('a publish hook that throws leaves the index of events.log whole: later reads have no gap', async () => {
        const { store } = await ContentStore.open(tempDir());
        try {
            await store.transact((tx) => tx.emit('task.created', { task_id: 'task-1' }));
            const failed = await store.transact((tx) => {
                tx.emit('task.created', { task_id: 'task-2' });
                tx.onPublish(() => { throw new Error('a hook failed'); });
            }).then(() => null, (err) => err);
            expect(failed?.message).to.equal('a hook failed');
            expect(store.commitState.event_count, 'the commit is durable').to.equal(2);
            await store.transact((tx) => tx.emit('task.created', { task_id: 'task-3' }));
            expect(store.events.read(0, 10).map((e) => e.seq)).to.deep.equal([1, 2, 3]);
            expect(store.events.read(1, 10).map((e) => e.data.task_id)).to.deep.equal(['task-2', 'task-3']);
        }
        finally {
            store.close();
        }
    });
    it('retention drops the oldest events; sequence numbers are never reused and reads start at the oldest kept', async () => {
        const root = tempDir();
        let { store } = await ContentStore.open(root);
        try {
            for (let i = 1; i <= 200; i++)
                await store.transact((tx) => tx.emit('task.created', { task_id: `task-${i}` }));
            expect(await store.trimEvents(50)).to.equal(150);
            expect(store.events.oldestSeq).to.equal(151);
            expect(store.events.read(0, 3).map((e) => e.seq)).to.deep.equal([151, 152, 153]);
            await store.transact((tx) => tx.emit('task.created', { task_id: 'task-201' }));
        }
        finally {
            store.close();
        }
        ({ store } = await ContentStore.open(root));
        try {
            expect(store.events.oldestSeq).to.equal(151);
            expect(store.events.lastSeq).to.equal(201);
            // Reads past the in-memory tail go through the sparse index of the file.
            expect(store.events.read(180, 2).map((e) => e.data.task_id)).to.deep.equal(['task-181', 'task-182']);
            expect(store.events.read(200, 10).map((e) => e.seq)).to.deep.equal([201]);
        }
        finally {
            store.close();
        }
    });
});
describe('events: the registry stream', function () {
    this.timeout(120_000);
    it('register, retire, abort, purge and restore are announced in order; export carries the repository events', async () => {
        const data = path.join(tempDir(), 'data');
        const s = await startTestServer(data);
        let restored = -1;
        try {
            const repo = await register(s.url, 'life');
            await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 't', intent: 'i' } }));
            await ok(api(s.url, 'POST', R(repo, '/retirement')));
            await ok(api(s.url, 'POST', R(repo, '/retirement/abort')));
            const { manifest, files } = await exportRepo(s.url, repo);
            expect([...files.keys()]).to.include('events.log');
            restored = await restoreRepo(s.url, manifest, files);
            await ok(api(s.url, 'POST', R(repo, '/retirement/purge'), { json: manifest }));
            const tasks = await ok(api(s.url, 'GET', R(restored, '/tasks')));
            expect(tasks.tasks).to.have.length(1);
        }
        finally {
            await s.stop();
        }
        const events = registryEventsOf(data);
        expectGapFree(events);
        expect(events.map((e) => `${e.type} ${e.data.repository_index}`)).to.deep.equal([
            'repository.registered 0', 'repository.retiring 0', 'repository.retirement_aborted 0', 'repository.retiring 0',
            `repository.restored ${restored}`, 'repository.purged 0',
        ]);
        expect(events[4].data.restored_from_index).to.equal(0);
        // The restored repository keeps the events it was exported with (its own sequence numbers).
        const repoEvents = await eventsOf(data, restored);
        expect(repoEvents.map((e) => e.type)).to.deep.equal(['task.created']);
    });
    it('a registry listener hears of a registered or restored repository once it is open: its feed and records are readable', async () => {
        const s = await startTestServer();
        try {
            const service = await s.ready;
            const heard = [];
            service.registry.events.onEvents((events) => {
                for (const e of events) {
                    const index = Number(e.data.repository_index);
                    try {
                        service.feeds.repositoryPage(index, null, 1, null);
                        heard.push(`${e.type} ${index}: readable`);
                    }
                    catch (err) {
                        heard.push(`${e.type} ${index}: ${err.message}`);
                    }
                }
            });
            const repo = await register(s.url, 'heard');
            await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 't', intent: 'i' } }));
            const { manifest, files } = await exportRepo(s.url, repo);
            const restored = await restoreRepo(s.url, manifest, files);
            expect(heard).to.deep.equal([`repository.registered ${repo}: readable`, `repository.retiring ${repo}: readable`, `repository.restored ${restored}: readable`]);
        }
        finally {
            await s.stop();
        }
    });
    it('killed between the registry write and its event: the event is appended at the next open, marked recovered', async () => {
        const data = path.join(tempDir(), 'data');
        const first = await spawnServer(data);
        const repo = await register(first.url, 'crash');
        first.proc.kill('SIGTERM');
        await first.exited;
        const doomed = await spawnServer(data, [], true, { CAIRN_TEST_CRASH_AT: 'registry:after-write' });
        expect(await api(doomed.url, 'POST', R(repo, '/retirement')).catch(() => null)).to.equal(null);
        expect(await doomed.exited).to.equal(null);
        expect(registryEventsOf(data).map((e) => e.type)).to.deep.equal(['repository.registered']);
        const restarted = await spawnServer(data);
        try {
            expect((await ok(api(restarted.url, 'GET', R(repo, '/retirement')))).repository.lifecycle_kind).to.equal(2);
        }
        finally {
            restarted.proc.kill('SIGTERM');
            await restarted.exited;
        }
        const events = registryEventsOf(data);
        expectGapFree(events);
        expect(events.map((e) => e.type)).to.deep.equal(['repository.registered', 'repository.retiring']);
        expect(events[1].data).to.deep.equal({ repository_index: repo, recovered: true });
    });
    it('a data directory from before the registry stream gets one event per repository state at its first open', async () => {
        const data = path.join(tempDir(), 'data');
        const s = await startTestServer(data);
        try {
            await register(s.url, 'one');
            const two = await register(s.url, 'two');
            await ok(api(s.url, 'POST', R(two, '/retirement')));
        }
        finally {
            await s.stop();
        }
        await fsp.rm(path.join(data, 'registry-events.log'));
        const again = await startTestServer(data);
        await again.stop();
        expect(registryEventsOf(data).map((e) => `${e.type} ${e.data.repository_index} ${e.data.recovered}`)).to.deep.equal([
            'repository.registered 0 true', 'repository.registered 1 true', 'repository.retiring 1 true',
        ]);
    });
    it('cairn fsck reports a damaged registry-events.log', async () => {
        const data = path.join(tempDir(), 'data');
        const s = await startTestServer(data);
        try {
            await register(s.url, 'one');
            await register(s.url, 'two');
        }
        finally {
            await s.stop();
        }
        expect((await cli(['fsck', '--data', data])).code).to.equal(0);
        const file = path.join(data, 'registry-events.log');
        const bytes = await fsp.readFile(file);
        bytes[30] ^= 0x20;
        await fsp.writeFile(file, bytes);
        const check = await cli(['fsck', '--data', data]);
        expect(check.code).to.equal(1);
        expect(check.stdout).to.match(/registry-events\.log/);
    });
    it('a torn last record of registry-events.log is cut at open; damage before it is corruption', async () => {
        const file = path.join(tempDir(), 'registry-events.log');
        const log = RegistryEventLog.open(file, []);
        await log.append([{ type: 'repository.registered', data: { repository_index: 0, name: 'a', namespace: '' } }]);
        await log.append([{ type: 'repository.retiring', data: { repository_index: 0 } }]);
        log.close();
        const bytes = await fsp.readFile(file);
        await fsp.writeFile(file, bytes.subarray(0, bytes.length - 5));
        const notes = [];
        const reopened = RegistryEventLog.open(file, notes);
        expect(reopened.all.map((e) => e.type)).to.deep.equal(['repository.registered']);
        reopened.close();
        expect(notes.join()).to.match(/cut/);
        const damaged = Buffer.from(bytes);
        damaged[20] ^= 0xff;
        await fsp.writeFile(file, damaged);
        expect(() => RegistryEventLog.open(file, [])).to.throw();
    });
});
describe('events: the catalogue (domain)', () => {
    const job = (over) => ({
        repository_index: 0, worker_job_index: 4, kind: 7, state: STATE_QUEUED, retry_status: 0, error_kind: 0, attempt_count: 0, max_attempts: 3, tombstoned: false,
        created_at_s: 1, updated_at_s: 1, available_at_s: 1, locked_at_s: 0, lease_expires_at_s: 0, completed_at_s: 0, lease_token_hash: '',
        detail: { snapshot_id: null, snapshot_index: null, patchset_id: 'change-1.ps-1', trigger: null, timeout_s: 60, outcome: null, error: null, result: null }, ...over,
    });
    it('job transitions: queued, claimed, completed, failed, requeued, lease expired; a heartbeat is no event', () => {
        const types = (b, a) => jobEvents(b, a).map((e) => e.type);
        const queued = job({});
        const running = job({ state: STATE_RUNNING, attempt_count: 1 });
        expect(types(undefined, queued)).to.deep.equal(['job.queued']);
        expect(types(queued, running)).to.deep.equal(['job.claimed']);
        expect(types(running, { ...running, lease_expires_at_s: 99 })).to.deep.equal([]);
        expect(types(running, job({ state: STATE_SUCCEEDED, attempt_count: 1 }))).to.deep.equal(['job.completed']);
        expect(types(running, job({ state: STATE_FAILED, attempt_count: 1, error_kind: 1 }))).to.deep.equal(['job.failed']);
        expect(types(running, job({ state: STATE_QUEUED, attempt_count: 1, error_kind: 1 }))).to.deep.equal(['job.requeued']);
        expect(jobEvents(running, job({ state: STATE_QUEUED, attempt_count: 1, error_kind: ERROR_LEASE_EXPIRED }))).to.deep.equal([{ type: 'job.lease_expired', data: { worker_job_index: 4, kind: 7, requeued: true } }]);
        expect(types(queued, job({ state: STATE_FAILED, error_kind: 4 }))).to.deep.equal(['job.failed']);
        // The last attempt's lease expires: the expiry and the job's failure.
        expect(types(running, job({ state: STATE_FAILED, attempt_count: 3, error_kind: ERROR_LEASE_EXPIRED }))).to.deep.equal(['job.lease_expired', 'job.failed']);
    });
    it('change transitions: created, status changes, closed, landed, and a newly selected patchset', () => {
        const c = { change_id: 'change-1', change_ref: 'task-1.change-1', task_id: 'task-1', status: 'draft', selected_patchset_id: null };
        const types = (b, a) => changeEvents(b, a).map((e) => e.type);
        expect(types(undefined, c)).to.deep.equal(['change.created']);
        expect(types(c, { ...c, status: 'active', selected_patchset_id: 'change-1.ps-1' })).to.deep.equal(['change.status_changed', 'patchset.selected']);
        expect(types(c, { ...c, status: 'landed' })).to.deep.equal(['change.landed']);
        expect(types(c, { ...c, status: 'abandoned' })).to.deep.equal(['change.closed']);
        expect(types(c, { ...c })).to.deep.equal([]);
    });
    it('registry: each lifecycle move has one event; reconciliation fills exactly what the log lacks', () => {
        const rec = { repository_index: 3, repository_name: 'r', namespace: '', lifecycle_kind: 2 };
        expect(registryEvents({ lifecycle_kind: 1 }, rec).map((e) => e.type)).to.deep.equal(['repository.retiring']);
        expect(registryEvents(undefined, { ...rec, lifecycle_kind: 1 }, 7)).to.deep.equal([{ type: 'repository.restored', data: { repository_index: 3, restored_from_index: 7 } }]);
        expect(missingRegistryEvents('retiring', rec)).to.deep.equal([]);
        expect(missingRegistryEvents('active', rec).map((e) => e.type)).to.deep.equal(['repository.retiring']);
        expect(missingRegistryEvents(null, { ...rec, lifecycle_kind: 3 }).map((e) => e.type)).to.deep.equal(['repository.registered', 'repository.purged']);
        expect(missingRegistryEvents('retiring', { ...rec, lifecycle_kind: 1 }).map((e) => e.type)).to.deep.equal(['repository.retirement_aborted']);
    });
    it('an event record that is not JSON or lacks its fields is corruption', () => {
        expect(() => decodeEvent(Buffer.from('{"seq":1}'), 'x')).to.throw(/not an event record/);
        expect(() => decodeEvent(Buffer.from('nope'), 'x')).to.throw(/not JSON/);
    });
});
describe('events: the documented catalogue', () => {
    it('docs/events.md lists every event type with exactly its data keys', async () => {
        const doc = await fsp.readFile(path.join(PROJECT_ROOT, 'docs/events.md'), 'utf8');
        const rows = new Map();
        for (const m of doc.matchAll(/^\| `([a-z_]+\.[a-z_]+)` \| ([^|]*) \|/gm))
            rows.set(m[1], [...m[2].matchAll(/`([a-z_]+)`/g)].map((k) => k[1]));
        const all = { ...EVENT_TYPES, ...REGISTRY_EVENT_TYPES };
        expect([...rows.keys()].sort()).to.deep.equal(Object.keys(all).sort());
        for (const [type, keys] of Object.entries(all))
            expect(rows.get(type), type).to.deep.equal(keys);
    });
});
//# sourceMappingURL=events-store.test.js.map