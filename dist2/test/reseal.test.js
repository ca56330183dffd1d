// A store written by a server from before sealing (storage-layout.md §17.2) holds webhook
// secrets and drafts in clear in workflow.log. Opened by this server, the log is rewritten with
// them sealed before anything reads the files — every record kept, only those fields change form
// — so no file under repositories/<index>/ holds them any more, the webhooks still sign with
// their secrets and the drafts are still their authors'. `cairn export` seals first too; `cairn
// fsck` says what is in clear without printing it. And a kill -9 at each step of the rewrite
// opens to the old log or the new one, never less.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { push } from '../lib/client/transfer.js';
import { sealingTestHooks } from '../lib/domain/sealing.js';
import { crc32 } from '../lib/store/binary.js';
import { api, cli, exportRepo, ok, register, spawnServer, startTestServer, tempDir, until } from './helpers.js';
import { receiver, signedWith } from './webhook-receiver.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const OLD_SECRET = 'hook-old-Secret-4e1f07c2a9';
const SECRET = 'hook-Secret-b7d05a9e31c6';
const FIRST_DRAFT = 'first words of a private draft';
const DRAFT = 'my private draft says this looks wrong';
const SUGGESTION = 'a private suggested line';
const DISCARDED = 'a draft its author threw away';
const PUBLIC = 'a published remark everyone reads';
/** What must not be in any file of the repository once this server has opened it. */
const PRIVATE = [OLD_SECRET, SECRET, FIRST_DRAFT, DRAFT, SUGGESTION, DISCARDED];
/** "file: text" for each file below `dir` holding one of `needles`' bytes. */
async function filesHolding(dir, needles) {
    const found = [];
    for (const e of await fsp.readdir(dir, { recursive: true, withFileTypes: true })) {
        if (!e.isFile())
            continue;
        const file = path.join(e.parentPath, e.name);
        // A running server's temp file (a checkpoint being written) may be gone by now.
        const bytes = await fsp.readFile(file).catch((err) => { if (err.code === 'ENOENT')
            return null; throw err; });
        if (!bytes)
            continue;
        for (const n of needles)
            if (bytes.includes(Buffer.from(n)))
                found.push(`${path.relative(dir, file)}: ${n}`);
    }
    return found;
}
/** Rewrite workflow.ckpt as a server from before sealing wrote it: version 1, no count of fields in clear. */
async function asVersion1Checkpoint(file) {
    const b = await fsp.readFile(file);
    b.writeUInt16LE(1, 8);
    b.writeUInt32LE(0, 36);
    b.writeUInt32LE(crc32(b.subarray(0, b.length - 4)), b.length - 4);
    await fsp.writeFile(file, b);
}
describe('sealing what a server from before sealing wrote in clear', function () {
    this.timeout(300_000);
    const template = path.join(tempDir(), 'data');
    const spawned = [];
    let rx;
    let repo;
    let change;
    /** What a reader saw of the repository when the older server stopped. */
    let seen;
    /** Threads as alice and bob see them, the webhooks, the tasks: what a reseal must keep. */
    async function observe(url) {
        const get = (p) => ok(api(url, 'GET', R(repo, p)));
        const threads = async (author) => (await get(`/changes/${change}/threads?author=${author}&limit=100`)).threads.map((t) => ({
            thread_id: t.thread_id,
            resolution: t.resolution,
            comments: t.comments.map((c) => ({ id: c.comment_id, author: c.author, body: c.body, suggestion: c.suggestion, published: c.published })),
        }));
        const hooks = (await get('/webhooks')).webhooks.map((w) => ({ id: w.webhook_id, url: w.url, types: w.types, active: w.active }));
        return { alice: await threads('alice'), bob: await threads('bob'), hooks, tasks: (await get('/tasks')).tasks.map((t) => t.task_id) };
    }
    before(async () => {
        rx = await receiver();
        // The older server: the same code with sealing switched off (commits write the fields in clear).
        sealingTestHooks.writeInClear = true;
        try {
            const s = await startTestServer(template, { webhookAllow: ['127.0.0.1'] });
            try {
                repo = await register(s.url, 'older');
                const post = (p, json) => ok(api(s.url, 'POST', R(repo, p), { json }));
                const dir = path.join(tempDir(), 'tree');
                await fsp.mkdir(dir, { recursive: true });
                await fsp.writeFile(path.join(dir, 'a.txt'), 'one\ntwo\nthree\n');
                const base = (await push({ server: s.url, repo, line: 'main', dir, moveLine: true, progress: false })).snapshot_id;
                await fsp.writeFile(path.join(dir, 'a.txt'), 'one\nTWO\nthree\n');
                const rev = (await push({ server: s.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
                // A webhook whose secret was rotated: both records hold a secret.
                for (const secret of [OLD_SECRET, SECRET]) {
                    const res = await api(s.url, 'POST', R(repo, '/webhooks'), { json: { url: rx.url, secret, types: ['task.*'] } });
                    expect(res.status, res.text).to.be.oneOf([200, 201]);
                }
                const t = (await post('/tasks', { title: 'T', intent: 'i' })).task;
                change = (await post('/changes', { task_id: t.task_id, title: 'C', base_line: 'main' })).change.change_id;
                const ps = (await post(`/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' })).patchset.patchset_id;
                await post(`/changes/${change}/comments`, { patchset_id: ps, author: 'bob', body: PUBLIC });
                // alice's draft, edited once (the first text is in an older record), and a draft she discarded.
                const draft = (await post(`/changes/${change}/comments`, { patchset_id: ps, author: 'alice', body: FIRST_DRAFT, anchor: { path: 'a.txt', line: 2 }, suggestion: SUGGESTION, draft: true })).comment.comment_id;
                await ok(api(s.url, 'PATCH', R(repo, `/changes/${change}/comments/${draft}`), { json: { author: 'alice', body: DRAFT } }));
                const gone = (await post(`/changes/${change}/comments`, { patchset_id: ps, author: 'alice', body: DISCARDED, draft: true })).comment.comment_id;
                await ok(api(s.url, 'DELETE', R(repo, `/changes/${change}/comments/${gone}?author=alice`)));
                await until('the task.created delivery', () => rx.received.length >= 1);
                seen = await observe(s.url);
            }
            finally {
                await s.stop();
            }
        }
        finally {
            sealingTestHooks.writeInClear = false;
        }
        await asVersion1Checkpoint(path.join(template, 'repositories', String(repo), 'workflow.ckpt'));
        // What the test must see go: the older server's files hold every private text in clear.
        const clear = await filesHolding(path.join(template, 'repositories', String(repo)), PRIVATE);
        for (const n of PRIVATE)
            expect(clear.some((f) => f.endsWith(`: ${n}`)), `the older store holds ${n}`).to.equal(true);
        expect(seen.alice.flatMap((t) => t.comments).filter((c) => !c.published).map((c) => `${c.body}|${c.suggestion}`)).to.deep.equal([`${DRAFT}|${SUGGESTION}`]);
    });
    after(async () => {
        for (const s of spawned)
            if (s.proc.exitCode === null && s.proc.signalCode === null) {
                s.proc.kill('SIGKILL');
                await s.exited;
            }
        await rx.close();
    });
    async function copy() {
        const data = path.join(tempDir(), 'data');
        await fsp.cp(template, data, { recursive: true });
        return data;
    }
    /** A task created now is delivered signed with SECRET (the secret read back through the seal). */
    async function signsWithSecret(url, title) {
        const from = rx.received.length;
        const taskId = (await ok(api(url, 'POST', R(repo, '/tasks'), { json: { title, intent: 'i' } }))).task.task_id;
        const got = await until(`the delivery of task ${title}`, () => rx.received.slice(from).find((r) => r.body.includes(`"${taskId}"`)));
        expect(signedWith(got, SECRET), 'signed with the secret').to.equal(true);
    }
    it('opened by this server, no file of the repository holds a secret or a draft in clear; the webhook signs with its secret, the drafts stay their author\'s, nothing else changes', async () => {
        const data = await copy();
        const dir = path.join(data, 'repositories', String(repo));
        const s = await startTestServer(data, { webhookAllow: ['127.0.0.1'] });
        try {
            expect(await observe(s.url)).to.deep.equal(seen);
            expect(await filesHolding(data, PRIVATE)).to.deep.equal([]);
            // The published comment is everyone's: it stays as it was.
            expect((await filesHolding(dir, [PUBLIC])).length).to.be.greaterThan(0);
            await signsWithSecret(s.url, 'after-reseal');
            // A retirement's listing holds none of them either.
            const { files } = await exportRepo(s.url, repo);
            for (const [p, bytes] of files)
                for (const n of PRIVATE)
                    expect(bytes.includes(Buffer.from(n)), `${p} holds ${n}`).to.equal(false);
            expect((await api(s.url, 'POST', R(repo, '/retirement/abort'))).status).to.equal(200);
        }
        finally {
            await s.stop();
        }
        expect(await filesHolding(data, PRIVATE)).to.deep.equal([]);
        // fsck reads the sealed drafts with the key: nothing in clear, nothing unopened, no problem, nothing private printed.
        const fsck = await cli(['fsck', '--data', data]);
        expect(fsck.code, fsck.stdout + fsck.stderr).to.equal(0);
        expect(fsck.stderr).to.not.match(/in clear|does not open|no DATA\/seal\.key/);
        for (const n of PRIVATE)
            expect(fsck.stdout + fsck.stderr).to.not.include(n);
    });
    it('cairn fsck of the older store says how much is in clear without printing it; without seal.key it says the sealed values do not open', async () => {
        const data = await copy();
        const fsck = await cli(['fsck', '--data', data]);
        expect(fsck.code, fsck.stdout + fsck.stderr).to.equal(0);
        expect(fsck.stderr).to.match(/workflow\.log holds \d+ webhook or draft records in clear/);
        expect(fsck.stderr).to.match(/workflow\.ckpt is of version 1, an older format/);
        for (const n of PRIVATE)
            expect(fsck.stdout + fsck.stderr).to.not.include(n);
        // Sealed now (an open), then checked without the key: the sealed values are named, never shown.
        const s = await startTestServer(data);
        await ok(api(s.url, 'GET', R(repo, '/changes')));
        await s.stop();
        await fsp.rename(path.join(data, 'seal.key'), path.join(tempDir(), 'seal.key'));
        const without = await cli(['fsck', '--data', data]);
        expect(without.code, without.stdout + without.stderr).to.equal(0);
        expect(without.stderr).to.match(/holds \d+ sealed values and the data directory has no DATA\/seal\.key/);
    });
    it('cairn export of the older store seals first: the exported files and the store hold nothing private in clear', async () => {
        const data = await copy();
        const out = path.join(tempDir(), 'out');
        const r = await cli(['export', '--data', data, '--repo', String(repo), out]);
        expect(r.code, r.stderr).to.equal(0);
        expect(r.stderr).to.match(/note: workflow\.log rewritten to seal \d+ webhook and draft records/);
        expect(await filesHolding(out, PRIVATE)).to.deep.equal([]);
        expect(await filesHolding(data, PRIVATE)).to.deep.equal([]);
        const fsck = await cli(['fsck', '--data', data]);
        expect(fsck.code, fsck.stdout + fsck.stderr).to.equal(0);
        expect(fsck.stderr).to.not.match(/in clear/);
    });
    it('a retirement seals what is in clear before it lists the files (records written in clear after the open)', async () => {
        const s = await startTestServer(undefined, { webhookAllow: ['127.0.0.1'] });
        try {
            const r = await register(s.url, 'late');
            sealingTestHooks.writeInClear = true;
            try {
                const res = await api(s.url, 'POST', R(r, '/webhooks'), { json: { url: rx.url, secret: SECRET, types: ['plan.*'] } });
                expect(res.status, res.text).to.equal(201);
            }
            finally {
                sealingTestHooks.writeInClear = false;
            }
            expect(await filesHolding(path.join(s.dataDir, 'repositories', String(r)), [SECRET])).to.have.length(1);
            const { files } = await exportRepo(s.url, r);
            for (const [p, bytes] of files)
                expect(bytes.includes(Buffer.from(SECRET)), `${p} holds the secret`).to.equal(false);
            expect(await filesHolding(s.dataDir, [SECRET])).to.deep.equal([]);
        }
        finally {
            await s.stop();
        }
    });
    for (const point of ['reseal:written', 'reseal:before-state', 'reseal:after-state']) {
        it(`killed at ${point}: the store opens to the log in clear or the sealed one, nothing lost, and is sealed after the restart`, async () => {
            const data = await copy();
            const doomed = await spawnServer(data, ['--webhook-allow', '127.0.0.1'], false, { CAIRN_TEST_CRASH_AT: point });
            spawned.push(doomed);
            // The repository opens in the background after the start (or for this request): the reseal runs then.
            void (async () => {
                for (let i = 0; i < 200 && doomed.proc.exitCode === null && doomed.proc.signalCode === null; i++) {
                    await fetch(`${doomed.url}${R(repo, '/changes')}`).catch(() => null);
                    await sleep(50);
                }
            })();
            const code = await Promise.race([doomed.exited, sleep(30_000).then(() => 'alive')]);
            if (code === 'alive')
                expect.fail(`the server was not killed at ${point}: ${doomed.output().slice(-2000)}`);
            expect(doomed.proc.signalCode, 'killed by SIGKILL').to.equal('SIGKILL');
            // Old or new, whole: fsck (which opens the store without rewriting it) finds no problem, and
            // the log in clear is still current exactly when the kill came before the commit point.
            const fsck = await cli(['fsck', '--data', data]);
            expect(fsck.code, fsck.stdout + fsck.stderr).to.equal(0);
            expect(/webhook or draft records in clear/.test(fsck.stderr), fsck.stderr).to.equal(point !== 'reseal:after-state');
            for (const n of PRIVATE)
                expect(fsck.stdout + fsck.stderr).to.not.include(n);
            const again = await spawnServer(data, ['--webhook-allow', '127.0.0.1']);
            spawned.push(again);
            try {
                expect(await observe(again.url)).to.deep.equal(seen);
                expect(await filesHolding(path.join(data, 'repositories'), PRIVATE)).to.deep.equal([]);
                await signsWithSecret(again.url, `after-${point.replace(':', '-')}`);
            }
            finally {
                again.proc.kill('SIGTERM');
                await again.exited;
            }
        });
    }
});
//# sourceMappingURL=reseal.test.js.map