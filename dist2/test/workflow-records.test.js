// Workflow records on disk (lib/store/workflow-records.ts), the compact indexes of the workflow
// book (lib/domain/workflow/indexes.ts) and the workflow checkpoint (workflow.ckpt,
// storage-layout.md §17.1): reads through the locations after a restart and a compaction, the
// checkpoint's round trip, a damaged or stale checkpoint, kill -9 while one is written, the
// memory one task+change pair holds, and the compaction of workflow.log in the background
// (commits during it, kill -9 at each step, retiring repositories left as exported).
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { copyFileSync, promises as fsp, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Authority } from '../lib/authority/authority.js';
import { queueSummary, taskAudit, taskQueue } from '../lib/authority/workflow/read-models.js';
import { ContentStore } from '../lib/store/content-store.js';
import { fsckAuthority } from '../lib/store/fsck.js';
import { decodeCheckpoint, encodeCheckpoint } from '../lib/store/workflow-checkpoint.js';
import { api, register, startTestServer, tempDir } from './helpers.js';
const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'workflow-records-child.js');
function capture() {
    const notes = [];
    const put = (o) => {
        const note = o?.note;
        if (note)
            notes.push(note);
    };
    return { notes, info: put, warn: put, error: put };
}
async function newAuthority() {
    const root = path.join(tempDir(), 'auth');
    await Authority.create(root, 0, 1_700_000_000);
    return root;
}
/** Tasks and changes through the book (the real records), some closed, some in review. */
async function populate(a, tasks, from = 1) {
    await a.store.transact((tx) => {
        if (!tx.line('main'))
            tx.setLine({ name: 'main', status: 'active', head_snapshot_id: null, updated_at_s: 1 });
    });
    for (let i = from; i < from + tasks; i++) {
        const t = await a.workflow.createTask({ title: `Task ${i}`, intent: `Intent ${i} `.repeat(20) });
        const c = await a.workflow.createChange({ task_id: t.task_id, title: `Change ${i}`, base_line: 'main' });
        if (i % 3 === 0)
            await a.workflow.closeChange(c.change_id, 'abandoned');
        if (i % 5 === 0)
            await a.workflow.closeTask(t.task_id, 'completed');
    }
}
/** Everything the read models answer, for comparing two opens. */
function answers(a) {
    const scope = { list: 'any', repository: 0, filter: {} };
    const all = { limit: 1000, after: null, scope };
    return {
        summary: queueSummary(a.workflow),
        active: queueSummary(a.workflow, 'active'),
        tasks: a.workflow.pageTasks({}, all),
        completed: a.workflow.pageTasks({ status: 'completed' }, { limit: 3, after: null, scope }),
        changes: a.workflow.pageChanges({}, all),
        abandoned: a.workflow.pageChanges({ status: 'abandoned' }, all),
        queue: taskQueue(a.workflow, undefined, { limit: 7, after: null, scope }, 0),
        audit: taskAudit(a.workflow, 'task-2', 'main', 0),
        inbox: a.workflow.reviews.inbox(undefined, 0),
    };
}
async function withAuthority(root, fn) {
    const log = capture();
    const a = await Authority.open(root, 0, log);
    try {
        return await fn(a, log);
    }
    finally {
        await a.store.settle();
        a.close();
    }
}
function runChild(args, env = {}) {
    return new Promise((resolve) => {
        const proc = spawn(process.execPath, ['--expose-gc', CHILD, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
        let out = '';
        proc.stdout.on('data', (d) => { out += d; });
        proc.stderr.on('data', (d) => { out += d; });
        proc.on('close', (code, signal) => resolve({ code, signal, out }));
    });
}
describe('workflow records: bodies on disk, read through their locations', () => {
    it('every entity reads back after a restart and after a compaction (one upsert per record), from disk', async function () {
        this.timeout(60_000);
        const root = path.join(tempDir(), 'auth');
        const body = (i, v) => ({ task_id: `task-${i}`, sequence: i, v, text: 'é'.repeat(i % 7) });
        let { store } = await ContentStore.open(root);
        // 200 tasks written 4 times each, four per record; entities of another id shape.
        for (let v = 0; v < 4; v++) {
            await Promise.all(Array.from({ length: 50 }, (_, k) => store.transact((tx) => {
                for (let j = 1; j <= 4; j++)
                    tx.upsert('task', `task-${k * 4 + j}`, body(k * 4 + j, v));
                tx.upsert('idempotency', `task-land/v1:key-${k}`, { v });
            })));
        }
        await Promise.all(Array.from({ length: 900 }, (_, k) => store.transact((tx) => tx.upsert('idempotency', 'task-land/v1:key-0', { v: 10 + k }))));
        const check = (s) => {
            for (let i = 1; i <= 200; i++)
                expect(s.entity('task', `task-${i}`)).to.deep.equal(body(i, 3));
            expect(s.entity('idempotency', 'task-land/v1:key-1')).to.deep.equal({ v: 3 });
            expect(s.entity('idempotency', 'task-land/v1:key-0')).to.deep.equal({ v: 909 });
            expect(s.entity('task', 'task-201')).to.equal(undefined);
            expect(s.entity('task', 'task-0')).to.equal(undefined);
            expect([...s.entitiesOf('task')].map(([id]) => id)).to.deep.equal(Array.from({ length: 200 }, (_, i) => `task-${i + 1}`));
            expect(s.entityCount('idempotency')).to.equal(50);
        };
        check(store);
        store.close();
        ({ store } = await ContentStore.open(root));
        try {
            check(store); // read from disk: nothing is cached after an open
            expect(await store.compactWorkflow()).to.equal('workflow.log compacted from 1100 to 250 records');
            check(store);
            const first = [...store.logRecords('workflow')][0];
            expect(JSON.parse(first.body.toString()).upserts).to.have.length(1);
        }
        finally {
            store.close();
        }
        ({ store } = await ContentStore.open(root));
        try {
            check(store);
        }
        finally {
            store.close();
        }
        expect((await fsckAuthority(root, 0)).problems.filter((p) => !p.includes('authority.bin'))).to.deep.equal([]);
    });
});
describe('workflow checkpoint (workflow.ckpt)', () => {
    it('round trip: a clean close writes it, the next open reads it (no note) and answers the same', async function () {
        this.timeout(60_000);
        const root = await newAuthority();
        const before = await withAuthority(root, async (a) => {
            await populate(a, 30);
            return answers(a);
        });
        const ck = decodeCheckpoint(readFileSync(path.join(root, 'workflow.ckpt')));
        expect([...ck.sections.keys()]).to.deep.equal(['records', 'workflow-indexes', 'workflow-people', 'review-indexes', 'land-indexes', 'land-queue']);
        expect(ck.cover.length).to.equal((await fsp.stat(path.join(root, 'workflow.log'))).size);
        await withAuthority(root, (a, log) => {
            expect(log.notes).to.deep.equal([]);
            expect(answers(a)).to.deep.equal(before);
        });
        const fsck = await fsckAuthority(root, 0);
        expect(fsck.problems).to.deep.equal([]);
    });
    it('a damaged or foreign checkpoint is rebuilt from workflow.log with a log line, never refused', async function () {
        this.timeout(60_000);
        const root = await newAuthority();
        const before = await withAuthority(root, async (a) => {
            await populate(a, 12);
            return answers(a);
        });
        const file = path.join(root, 'workflow.ckpt');
        const good = readFileSync(file);
        const flipped = Buffer.from(good);
        flipped[Math.floor(good.length / 2)] ^= 0x10;
        // Whole and well formed, but naming another generation of workflow.log.
        const ck = decodeCheckpoint(good);
        const foreign = encodeCheckpoint({ cover: { ...ck.cover, log_file: 7 }, sections: ck.sections });
        // Whole, of this log, but whose index section does not fit the records (a change too many).
        const idx = Buffer.from(ck.sections.get('workflow-indexes'));
        idx.writeUInt32LE(idx.readUInt32LE(4) - 1, 4);
        const misfit = encodeCheckpoint({ cover: ck.cover, sections: new Map([['records', ck.sections.get('records')], ['workflow-indexes', idx]]) });
        for (const [bytes, note] of [[flipped, /workflow\.ckpt is unusable \(checksum mismatch\)/], [good.subarray(0, 30), /workflow\.ckpt is unusable/], [foreign, /covers workflow\.log generation 7/], [misfit, /workflow\.ckpt: .*rebuilt from workflow\.log|do not fit/]]) {
            writeFileSync(file, bytes);
            if (bytes !== misfit)
                expect((await fsckAuthority(root, 0)).problems.concat((await fsckAuthority(root, 0)).notes).join('\n')).to.match(/workflow\.ckpt/);
            await withAuthority(root, (a, log) => {
                expect(log.notes.join('\n')).to.match(note);
                expect(answers(a)).to.deep.equal(before);
            });
            // The open wrote a whole checkpoint again: the next open reads it without a note.
            await withAuthority(root, (a, log) => {
                expect(log.notes).to.deep.equal([]);
                expect(answers(a)).to.deep.equal(before);
            });
        }
        await fsp.rm(file);
        await withAuthority(root, (a, log) => {
            expect(log.notes.join('\n')).to.match(/workflow\.ckpt is missing/);
            expect(answers(a)).to.deep.equal(before);
        });
    });
    it('a checkpoint older than the log: the tail is replayed on top of it (new tasks, moved statuses)', async function () {
        this.timeout(60_000);
        const root = await newAuthority();
        await withAuthority(root, (a) => populate(a, 10));
        const old = path.join(tempDir(), 'old.ckpt');
        copyFileSync(path.join(root, 'workflow.ckpt'), old);
        const before = await withAuthority(root, async (a) => {
            await populate(a, 10, 11);
            await a.workflow.closeTask('task-1', 'abandoned'); // a task of the checkpoint changes status
            await a.workflow.closeChange('change-2', 'archived');
            return answers(a);
        });
        copyFileSync(old, path.join(root, 'workflow.ckpt'));
        await withAuthority(root, (a, log) => {
            expect(log.notes).to.deep.equal([]);
            expect(answers(a)).to.deep.equal(before);
        });
        expect((await fsckAuthority(root, 0)).problems).to.deep.equal([]);
    });
    it('a compaction at open (a new workflow.log generation) keeps the checkpoint\'s indexes and writes a new checkpoint of the new log', async function () {
        this.timeout(60_000);
        const root = await newAuthority();
        const before = await withAuthority(root, async (a) => {
            await populate(a, 6);
            await a.store.freezeFiles(); // no compaction after these commits: the next open compacts
            await Promise.all(Array.from({ length: 1100 }, (_, i) => a.store.transact((tx) => tx.setLine({ name: 'main', status: 'active', head_snapshot_id: null, updated_at_s: 10 + i }))));
            return answers(a);
        });
        expect(decodeCheckpoint(readFileSync(path.join(root, 'workflow.ckpt'))).cover.log_file).to.equal(0);
        await withAuthority(root, async (a, log) => {
            await a.store.settle(); // the compaction runs in the background
            expect(log.notes.join('\n')).to.match(/workflow\.log compacted from \d+ to \d+ records/);
            expect(log.notes.join('\n')).to.not.match(/workflow\.ckpt/);
            expect(answers(a)).to.deep.equal(before);
        });
        const ck = decodeCheckpoint(readFileSync(path.join(root, 'workflow.ckpt')));
        expect(ck.cover.log_file).to.be.above(0);
        await withAuthority(root, (a, log) => {
            expect(log.notes).to.deep.equal([]);
            expect(answers(a)).to.deep.equal(before);
        });
        expect((await fsckAuthority(root, 0)).problems).to.deep.equal([]);
    });
    for (const point of ['checkpoint:before-write', 'checkpoint:mid-write', 'checkpoint:after-write']) {
        it(`kill -9 at ${point}: the old checkpoint or the new one, never a torn one; the next open answers the same`, async function () {
            this.timeout(60_000);
            const root = await newAuthority();
            await withAuthority(root, (a) => populate(a, 8));
            const before = await withAuthority(root, async (a) => {
                await populate(a, 4, 9);
                return answers(a);
            });
            // An old checkpoint in place, then a process that writes a new one and is killed on the way.
            const ck = decodeCheckpoint(readFileSync(path.join(root, 'workflow.ckpt')));
            await fsp.rm(path.join(root, 'workflow.ckpt'));
            const child = await runChild(['checkpoint', root], { CAIRN_TEST_CRASH_AT: point });
            expect(child.signal, child.out).to.equal('SIGKILL');
            const left = await fsp.readFile(path.join(root, 'workflow.ckpt')).catch(() => null);
            if (point === 'checkpoint:after-write')
                expect(decodeCheckpoint(left).cover).to.deep.equal(ck.cover);
            else
                expect(left).to.equal(null);
            expect((await fsckAuthority(root, 0)).problems).to.deep.equal([]);
            await withAuthority(root, (a) => {
                expect(answers(a)).to.deep.equal(before);
            });
            expect((await fsp.readdir(root)).filter((n) => n.includes('.tmp-'))).to.deep.equal([]);
        });
    }
    it('memory: the indexes of 50,000 task+change pairs hold well under 300 bytes per pair, whatever the texts', async function () {
        this.timeout(120_000);
        const root = await newAuthority();
        const pairs = 50_000;
        const { store } = await ContentStore.open(root);
        try {
            await store.transact((tx) => tx.setLine({ name: 'main', status: 'active', head_snapshot_id: null, updated_at_s: 1 }));
            const long = 'x'.repeat(2000);
            for (let base = 0; base < pairs; base += 1000) {
                await Promise.all(Array.from({ length: 1000 }, (_, k) => store.transact((tx) => {
                    const i = base + k + 1;
                    tx.upsert('task', `task-${i}`, { task_id: `task-${i}`, sequence: i, title: `Task ${i}`, intent: long, plan_id: null, origin_plan_revision_id: null, plan_item_ref: null, status: 'active', created_at_s: i, updated_at_s: i, closed_at_s: null });
                    tx.upsert('change', `change-${i}`, { change_id: `change-${i}`, change_ref: `task-${i}.change-${i}`, sequence: i, task_id: `task-${i}`, title: long, base_line: 'main', fork_snapshot_id: null, status: 'draft', patchset_count: 0, current_patchset_id: null, selected_patchset_id: null, land_target_line: 'main', created_at_s: i, updated_at_s: i, closed_at_s: null, landed_at_s: null });
                })));
            }
        }
        finally {
            store.close();
        }
        const child = await runChild(['memory', root, String(pairs)]);
        expect(child.code, child.out).to.equal(0);
        const m = JSON.parse(child.out.trim().split('\n').at(-1));
        expect(m.tasks).to.equal(pairs);
        expect(m.changes).to.equal(pairs);
        expect(m.bytes_per_pair, child.out).to.be.below(300);
    });
});
describe('workflow.log compaction in the background', () => {
    const body = (i, v) => ({ task_id: `task-${i}`, sequence: i, v });
    /** 200 tasks written six times (four per record), 50 ids of another shape, one of them 900 times more: 1,200 records, 250 live. */
    async function supersededStore(root) {
        const { store } = await ContentStore.open(root);
        for (let v = 0; v < 6; v++) {
            await Promise.all(Array.from({ length: 50 }, (_, k) => store.transact((tx) => {
                for (let j = 1; j <= 4; j++)
                    tx.upsert('task', `task-${k * 4 + j}`, body(k * 4 + j, v));
                tx.upsert('idempotency', `key-${k}`, { v });
            })));
        }
        await Promise.all(Array.from({ length: 900 }, (_, k) => store.transact((tx) => tx.upsert('idempotency', 'key-0', { v: 10 + k }))));
        return store;
    }
    /** A pause hook whose pauses the test ends one by one: `reached(step)` resolves when the compaction waits there. */
    function pauses() {
        const waiting = new Map();
        const step = (name) => {
            let s = waiting.get(name);
            if (!s) {
                let reached;
                let release;
                const at = new Promise((r) => { reached = r; });
                const go = new Promise((r) => { release = r; });
                waiting.set(name, (s = { reached, release, at, go }));
            }
            return s;
        };
        return {
            hook: async (name) => {
                step(name).reached();
                await step(name).go;
            },
            reached: (name) => step(name).at,
            release: (name) => step(name).release(),
        };
    }
    it('commits made while it runs complete first, and all of them are there after the switch and after a reopen', async function () {
        this.timeout(60_000);
        const root = path.join(tempDir(), 'auth');
        let store = await supersededStore(root);
        const p = pauses();
        store.compactionPause = p.hook;
        let finished = false;
        const compaction = store.compactWorkflow().then((note) => { finished = true; return note; });
        // Before the snapshot (after the length was noted): these entities move past it and the
        // snapshot skips them; task-201 and key-new are created after it.
        await p.reached('snapshot');
        await store.transact((tx) => tx.upsert('task', 'task-5', body(5, 50)));
        await store.transact((tx) => { tx.upsert('task', 'task-201', body(201, 0)); tx.upsert('idempotency', 'key-new', { v: 1 }); });
        await store.transact((tx) => tx.upsert('idempotency', 'key-3', { v: 42 }));
        expect(finished).to.equal(false);
        p.release('snapshot');
        // After the snapshot, before the tail copy: entities the snapshot holds are updated.
        await p.reached('tail');
        await store.transact((tx) => { tx.upsert('task', 'task-5', body(5, 51)); tx.upsert('task', 'task-6', body(6, 60)); });
        await store.transact((tx) => tx.setLine({ name: 'main', status: 'active', head_snapshot_id: null, updated_at_s: 77 }));
        await store.transact((tx) => tx.upsert('idempotency', 'key-4', { v: 44 }));
        expect(finished).to.equal(false);
        expect(store.commitState.log_files.workflow).to.equal(0);
        p.release('tail');
        // 248 snapshot records (task-5 and key-3 had moved past it), then the 6 of the tail.
        expect(await compaction).to.equal('workflow.log compacted from 1206 to 254 records');
        const check = (s) => {
            for (let i = 1; i <= 200; i++)
                expect(s.entity('task', `task-${i}`)).to.deep.equal(i === 5 ? body(5, 51) : i === 6 ? body(6, 60) : i === 7 ? body(7, 70) : body(i, 5));
            expect(s.entity('task', 'task-201')).to.deep.equal(body(201, 0));
            expect([...s.entitiesOf('task')].map(([id]) => id)).to.deep.equal(Array.from({ length: 201 }, (_, i) => `task-${i + 1}`));
            expect(s.entity('idempotency', 'key-0')).to.deep.equal({ v: 909 });
            expect(s.entity('idempotency', 'key-1')).to.deep.equal({ v: 5 });
            expect(s.entity('idempotency', 'key-3')).to.deep.equal({ v: 42 });
            expect(s.entity('idempotency', 'key-4')).to.deep.equal({ v: 44 });
            expect(s.entity('idempotency', 'key-new')).to.deep.equal({ v: 1 });
            expect(s.entityCount('idempotency')).to.equal(51);
            expect(s.line('main')?.updated_at_s).to.equal(77);
        };
        expect(store.commitState.log_files.workflow).to.be.above(0);
        store.compactionPause = null;
        // Commits after the switch append to the new file.
        await store.transact((tx) => tx.upsert('task', 'task-7', body(7, 70)));
        check(store);
        store.close();
        ({ store } = await ContentStore.open(root));
        try {
            check(store);
            expect(await store.compactWorkflow()).to.equal(null);
        }
        finally {
            store.close();
        }
        expect((await fsp.readdir(root)).filter((n) => n.startsWith('workflow') || n.includes('.tmp-'))).to.deep.equal([`workflow.${(await readCommitGen(root))}.log`]);
        expect((await fsckAuthority(root, 0)).problems.filter((p) => !p.includes('authority.bin'))).to.deep.equal([]);
    });
    it('commits interleaved with the snapshot wherever they fall (new ids, a grown table, a new type) all survive', async function () {
        this.timeout(60_000);
        const root = path.join(tempDir(), 'auth');
        let { store } = await ContentStore.open(root);
        const expected = new Map();
        for (let v = 0; v < 5; v++) {
            await Promise.all(Array.from({ length: 2000 }, (_, k) => store.transact((tx) => tx.upsert('task', `task-${k + 1}`, body(k + 1, v)))));
        }
        for (let i = 1; i <= 2000; i++)
            expected.set(`task-${i}`, body(i, 4));
        const compaction = store.compactWorkflow();
        const writes = (async () => {
            for (let k = 0; k < 60; k++) {
                const old = 1 + ((k * 337) % 2000);
                await store.transact((tx) => {
                    tx.upsert('task', `task-${old}`, body(old, 100 + k));
                    tx.upsert('task', `task-${4500 + k}`, body(4500 + k, 0)); // beyond the table's 4,096 slots
                    tx.upsert('other', `o-${k}`, { k });
                });
                expected.set(`task-${old}`, body(old, 100 + k));
                expected.set(`task-${4500 + k}`, body(4500 + k, 0));
            }
        })();
        const [note] = await Promise.all([compaction, writes]);
        expect(note).to.match(/^workflow\.log compacted from \d+ to \d+ records$/);
        const check = (s) => {
            expect(new Map([...s.entitiesOf('task')])).to.deep.equal(new Map([...expected].sort(([a], [b]) => Number(a.slice(5)) - Number(b.slice(5)))));
            for (let k = 0; k < 60; k++)
                expect(s.entity('other', `o-${k}`)).to.deep.equal({ k });
        };
        check(store);
        store.close();
        ({ store } = await ContentStore.open(root));
        try {
            check(store);
        }
        finally {
            store.close();
        }
        expect((await fsckAuthority(root, 0)).problems.filter((p) => !p.includes('authority.bin'))).to.deep.equal([]);
    });
    it('starts by itself after commits once the log is due (Authority.open), and a close stops it safely', async function () {
        this.timeout(60_000);
        const root = await newAuthority();
        await withAuthority(root, async (a, log) => {
            await populate(a, 3);
            await Promise.all(Array.from({ length: 1100 }, (_, i) => a.store.transact((tx) => tx.setLine({ name: 'main', status: 'active', head_snapshot_id: null, updated_at_s: 10 + i }))));
            await a.store.settle();
            expect(log.notes.join('\n')).to.match(/workflow\.log compacted from 1\d{3} to \d+ records/);
            expect(a.store.commitState.log_files.workflow).to.be.above(0);
        });
        // A close while the compaction waits before its snapshot: it stops, its temp file is removed.
        const notes = await withAuthority(root, async (a, log) => {
            const gen = a.store.commitState.log_files.workflow;
            const p = pauses();
            a.store.compactionPause = p.hook;
            await Promise.all(Array.from({ length: 1100 }, (_, i) => a.store.transact((tx) => tx.setLine({ name: 'main', status: 'active', head_snapshot_id: null, updated_at_s: 2000 + i }))));
            await p.reached('snapshot');
            a.close();
            p.release('snapshot');
            await a.store.settle();
            expect(a.store.commitState.log_files.workflow).to.equal(gen);
            return log.notes;
        });
        expect(notes.join('\n')).to.not.match(/failed/);
        expect((await fsp.readdir(root)).filter((n) => n.includes('.tmp-'))).to.deep.equal([]);
        await withAuthority(root, (a) => {
            expect(a.store.line('main')?.updated_at_s).to.equal(3099);
        });
        expect((await fsckAuthority(root, 0)).problems).to.deep.equal([]);
    });
    for (const point of ['compact:workflow-snapshot', 'compact:workflow-written', 'compact:before-state', 'compact:after-state']) {
        it(`kill -9 at ${point}: the store opens with every acknowledged commit`, async function () {
            this.timeout(60_000);
            const root = await newAuthority();
            const before = await withAuthority(root, async (a) => {
                await populate(a, 6);
                await a.store.freezeFiles(); // due, but compacted only by the child
                await a.store.transact((tx) => tx.upsert('probe', 'p-0', { v: 0 }));
                await Promise.all(Array.from({ length: 1100 }, (_, i) => a.store.transact((tx) => tx.setLine({ name: 'main', status: 'active', head_snapshot_id: null, updated_at_s: 10 + i }))));
                return answers(a);
            });
            const child = await runChild(['compact', root], { CAIRN_TEST_CRASH_AT: point });
            expect(child.signal, child.out).to.equal('SIGKILL');
            const acked = Math.max(0, ...child.out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l).acked ?? 0));
            expect(acked).to.equal(point === 'compact:workflow-snapshot' ? 2 : 4);
            await withAuthority(root, async (a) => {
                // The new file is current only once its commit point was written.
                expect(a.store.commitState.log_files.workflow > 0).to.equal(point === 'compact:after-state');
                await a.store.settle(); // still due (or due again): compacted now
                expect(answers(a)).to.deep.equal(before);
                expect(a.store.line('main')?.updated_at_s).to.equal(5000 + acked);
                expect(a.store.entity('probe', 'p-0')).to.deep.equal({ v: acked });
                for (let n = 1; n <= acked; n++)
                    expect(a.store.entity('probe', `p-${n}`)).to.deep.equal({ v: n });
            });
            const names = await fsp.readdir(root);
            expect(names.filter((n) => n.includes('.tmp-'))).to.deep.equal([]);
            expect(names.filter((n) => /^workflow.*\.log$/.test(n))).to.have.length(1);
            expect((await fsckAuthority(root, 0)).problems).to.deep.equal([]);
        });
    }
});
describe('workflow.log compaction: a retiring repository keeps its files as exported', () => {
    it('a compaction running when retirement starts stops; none runs while retiring, at open either; one runs after an abort', async function () {
        this.timeout(60_000);
        const AUTH = '/v1/native/repository-authorities';
        const data = path.join(tempDir(), 'data');
        let server = await startTestServer(data);
        const repo = await register(server.url, 'retiring');
        expect((await api(server.url, 'PUT', `${AUTH}/${repo}/lines/main`, { json: {} })).status).to.equal(200);
        const root = path.join(data, 'repositories', String(repo));
        const workflowFiles = async () => (await fsp.readdir(root)).filter((n) => n.startsWith('workflow') && n.endsWith('.log') || n.includes('.tmp-'));
        const superseded = (a, from) => Promise.all(Array.from({ length: 1100 }, (_, i) => a.store.transact((tx) => tx.setLine({ name: 'main', status: 'active', head_snapshot_id: null, updated_at_s: from + i }))));
        try {
            const a = (await server.ready).authority(repo);
            let paused;
            const atSnapshot = new Promise((r) => { paused = r; });
            let release;
            const go = new Promise((r) => { release = r; });
            a.store.compactionPause = async () => {
                paused();
                await go;
            };
            await superseded(a, 10); // due: a compaction starts after these commits and waits
            await atSnapshot;
            const started = api(server.url, 'POST', `${AUTH}/${repo}/retirement`);
            while (!a.store.filesFrozen)
                await new Promise((r) => setTimeout(r, 5));
            release();
            const status = await started;
            expect(status.status).to.equal(200);
            expect(status.json.manifest.files.map((f) => f.path).filter((p) => /^workflow.*\.log$|\.tmp-/.test(p))).to.deep.equal(['workflow.log']);
            expect(a.store.commitState.log_files.workflow).to.equal(0);
            expect(await workflowFiles()).to.deep.equal(['workflow.log']);
            await superseded(a, 2000); // worker-admitted commits still land; nothing compacts
            await a.store.settle();
            expect(a.store.commitState.log_files.workflow).to.equal(0);
            expect(await a.store.compactWorkflow()).to.equal(null);
        }
        finally {
            await server.stop();
        }
        // Reopened while retiring: the files are frozen at open.
        server = await startTestServer(data);
        try {
            const service = await server.ready;
            const a = await service.opened(repo);
            expect(a.store.filesFrozen).to.equal(true);
            await a.store.settle();
            expect(a.store.commitState.log_files.workflow).to.equal(0);
            expect(await workflowFiles()).to.deep.equal(['workflow.log']);
            // An abort makes it active again: the due compaction runs.
            expect((await api(server.url, 'POST', `${AUTH}/${repo}/retirement/abort`)).status).to.equal(200);
            await a.store.settle();
            expect(a.store.commitState.log_files.workflow).to.be.above(0);
            expect(a.store.line('main')?.updated_at_s).to.equal(3099);
        }
        finally {
            await server.stop();
        }
    });
});
/** The workflow.log generation commit.bin names (read through a store opened without a checkpoint). */
async function readCommitGen(root) {
    const { store } = await ContentStore.open(root, { checkpoint: false });
    try {
        return store.commitState.log_files.workflow;
    }
    finally {
        store.close();
    }
}
//# sourceMappingURL=workflow-records.test.js.map