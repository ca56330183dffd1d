// kill -9 while `reviews:publish` publishes several drafts and a vote (docs/api.md "Comment
// threads"): a child server is killed inside the publish (before it stages anything) and at each
// step of the publish's own commit (CAIRN_TEST_CRASH_AT=`comments:publish>commit:<step>`,
// lib/store/crash-point.ts). After a restart either every draft is published, the vote recorded
// and all their events are there, or nothing is — never half — and fsck finds nothing. And an
// export → restore of an authority with threads, drafts and resolutions carries them byte for byte.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { push } from '../lib/client/transfer.js';
import { api, cli, exportRepo, ok, register, restoreRepo, spawnServer, tempDir } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
describe('comments: kill -9 between drafts and their publish', function () {
    this.timeout(180_000);
    const template = path.join(tempDir(), 'data');
    const spawned = [];
    let repo;
    let change;
    let ps;
    let bobThread;
    let drafts;
    before(async () => {
        // One store with a published thread and three drafts of ann (two threads and a reply that
        // resolves bob's thread), copied for each crash.
        const s = await spawnServer(template);
        spawned.push(s);
        repo = await register(s.url, 'publish-crash');
        const post = (p, json) => ok(api(s.url, 'POST', R(repo, p), { json }));
        const dir = tempDir();
        await fsp.writeFile(path.join(dir, 'a.txt'), 'one\ntwo\nthree\nfour\n');
        const base = (await push({ server: s.url, repo, line: 'main', dir, moveLine: true, progress: false })).snapshot_id;
        await fsp.writeFile(path.join(dir, 'a.txt'), 'one\n2\nthree\nfour\n');
        const rev = (await push({ server: s.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
        const t = (await post('/tasks', { title: 'T', intent: 'i' })).task;
        change = (await post('/changes', { task_id: t.task_id, title: 'C', base_line: 'main' })).change.change_id;
        ps = (await post(`/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' })).patchset.patchset_id;
        bobThread = (await post(`/changes/${change}/comments`, { patchset_id: ps, author: 'bob', body: 'why 2?', anchor: { path: 'a.txt', line: 2 } })).thread_id;
        drafts = [
            (await post(`/changes/${change}/comments`, { patchset_id: ps, author: 'ann', body: 'and line 3?', anchor: { path: 'a.txt', line: 3 }, draft: true })).comment.comment_id,
            (await post(`/changes/${change}/comments`, { author: 'ann', body: 'fixed', in_reply_to: bobThread, resolution: 'resolved', draft: true })).comment.comment_id,
            (await post(`/changes/${change}/comments`, { patchset_id: ps, author: 'ann', body: 'overall fine', draft: true })).comment.comment_id,
        ];
        s.proc.kill('SIGTERM');
        await s.exited;
    });
    after(async () => {
        for (const s of spawned)
            if (s.proc.exitCode === null && s.proc.signalCode === null) {
                s.proc.kill('SIGKILL');
                await s.exited;
            }
    });
    /** What a reader sees of the publish: ann's comments, the threads, the reviews, the events. */
    async function observe(url) {
        const get = (p) => ok(api(url, 'GET', R(repo, p)));
        const all = await get(`/changes/${change}/threads?author=ann&limit=100`);
        const comments = all.threads.flatMap((t) => t.comments);
        const published = drafts.map((id) => comments.find((c) => c.comment_id === id).published);
        const reviews = (await get(`/changes/${change}/reviews`)).reviews.filter((r) => r.reviewer === 'ann').length;
        const events = {};
        for (const e of (await get('/events?limit=1000')).events)
            events[e.type] = (events[e.type] ?? 0) + 1;
        const readiness = (await get(`/read/changes/${change}/readiness`)).unresolved_threads;
        const resolution = all.threads.find((t) => t.thread_id === bobThread).resolution;
        return { published, unresolved: all.unresolved, resolution, reviews, events, readiness };
    }
    for (const point of ['comments:publish', 'comments:publish>commit:after-log', 'comments:publish>commit:before-state', 'comments:publish>commit:after-state']) {
        it(`killed at ${point}: after a restart all of the publish is there, or none of it`, async () => {
            const data = path.join(tempDir(), 'data');
            await fsp.cp(template, data, { recursive: true });
            const doomed = await spawnServer(data, [], true, { CAIRN_TEST_CRASH_AT: point });
            spawned.push(doomed);
            const before = await observe(doomed.url);
            expect(before.published).to.deep.equal([false, false, false]);
            const publish = api(doomed.url, 'POST', R(repo, `/changes/${change}/reviews:publish`), { json: { author: 'ann', patchset_id: ps, action: 'approve', comment: 'with these notes' } }).then((r) => r, (err) => err);
            const code = await Promise.race([doomed.exited, sleep(15_000).then(() => 'alive')]);
            if (code === 'alive')
                expect.fail(`the server was not killed at ${point}: ${doomed.output().slice(-2000)}`);
            expect(code, 'killed by SIGKILL').to.equal(null);
            const answer = await publish;
            expect(answer instanceof Error || answer.status === undefined, 'no answer from a killed server').to.equal(true);
            const restarted = await spawnServer(data);
            spawned.push(restarted);
            const after = await observe(restarted.url);
            const all = after.published.every(Boolean);
            const none = after.published.every((p) => !p);
            expect(all || none, `published ${JSON.stringify(after.published)}`).to.equal(true);
            // Only a kill after the commit point keeps the publish.
            expect(all).to.equal(point.endsWith('after-state'));
            const created = (before.events['comment.created'] ?? 0);
            if (all) {
                expect(after.reviews).to.equal(1);
                expect(after.events['comment.created']).to.equal(created + 3);
                expect(after.events['thread.resolved'] ?? 0).to.equal((before.events['thread.resolved'] ?? 0) + 1);
                expect(after.events['review.recorded']).to.equal((before.events['review.recorded'] ?? 0) + 1);
                expect(after.resolution).to.equal('resolved');
                // bob's thread resolved (−1), ann's two threads opened (+2).
                expect(after.unresolved).to.equal(before.unresolved + 1);
            }
            else {
                expect(after.reviews).to.equal(0);
                expect(after.events).to.deep.equal(before.events);
                expect(after.resolution).to.equal('unresolved');
                expect(after.unresolved).to.equal(before.unresolved);
                // The drafts are intact: publishing them now works, once.
                const again = await ok(api(restarted.url, 'POST', R(repo, `/changes/${change}/reviews:publish`), { json: { author: 'ann', patchset_id: ps, action: 'approve' } }));
                expect(again.published.map((c) => c.comment_id)).to.deep.equal(drafts);
            }
            expect(after.readiness).to.equal(after.unresolved);
            restarted.proc.kill('SIGTERM');
            await restarted.exited;
            const check = await cli(['fsck', '--data', data]);
            expect(check.code, check.stdout + check.stderr).to.equal(0);
        });
    }
    it('export → restore carries threads, drafts and resolutions byte for byte', async () => {
        const data = path.join(tempDir(), 'data');
        await fsp.cp(template, data, { recursive: true });
        const s = await spawnServer(data);
        spawned.push(s);
        const post = (p, json) => ok(api(s.url, 'POST', R(repo, p), { json }));
        const t = (await post(`/changes/${change}/comments`, { patchset_id: ps, author: 'bob', body: 'and four?', anchor: { path: 'a.txt', line: 4 } })).thread_id;
        await post(`/changes/${change}/threads/${t}:resolve`, { author: 'ann', body: 'yes' });
        await post(`/changes/${change}/threads/${t}:reopen`, { author: 'bob' });
        await post(`/changes/${change}/threads/${t}:resolve`, { author: 'bob' });
        const views = async (url, r) => {
            const get = (q) => ok(api(url, 'GET', R(r, `/changes/${change}/threads${q}`)));
            return { all: await get('?limit=100'), ann: await get('?author=ann&limit=100'), resolved: await get('?resolved=true&limit=100'), readiness: (await ok(api(url, 'GET', R(r, `/read/changes/${change}/readiness`)))).unresolved_threads };
        };
        const want = await views(s.url, repo);
        expect(want.ann.threads.some((x) => x.draft)).to.equal(true);
        expect(want.resolved.threads.map((x) => x.thread_id)).to.deep.equal([t]);
        const { manifest, files } = await exportRepo(s.url, repo);
        const restored = await restoreRepo(s.url, manifest, files);
        expect(await views(s.url, restored)).to.deep.equal(want);
        const log = await fsp.readFile(path.join(data, 'repositories', String(restored), 'workflow.log'));
        expect(log.equals(files.get('workflow.log')), 'the restored workflow.log is the exported one').to.equal(true);
        // The restored drafts are still ann's to publish.
        const pub = await ok(api(s.url, 'POST', R(restored, `/changes/${change}/reviews:publish`), { json: { author: 'ann', patchset_id: ps } }));
        expect(pub.published.map((c) => c.comment_id)).to.deep.equal(drafts);
    });
});
//# sourceMappingURL=comment-crash.test.js.map