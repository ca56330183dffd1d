// Comment threads over real HTTP (docs/api.md "Comment threads"): a thread on lines, a file and
// the patchset; replies; resolve / reopen; the paged list with its filters and a cursor bound to
// them; threads ported to a later patchset (outdated when their lines changed); the refusals
// (anchors checked against the patchset's trees); events in the comment's commit; the records
// surviving a restart and an export → restore.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { api, cli, expectError, exportRepo, ok, register, restoreRepo, startTestServer, tempDir } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const lines = (n, edit = {}) => Array.from({ length: n }, (_, i) => edit[i + 1] ?? `line ${i + 1}`).join('\n') + '\n';
describe('comments: threads on diff lines', function () {
    this.timeout(120_000);
    const dataDir = path.join(tempDir(), 'data');
    let s;
    let repo;
    let ps1;
    let ps2;
    let change;
    const dir = path.join(tempDir(), 'tree');
    const snap = async (files, parent) => {
        await fsp.rm(dir, { recursive: true, force: true });
        for (const [p, v] of Object.entries(files)) {
            await fsp.mkdir(path.dirname(path.join(dir, p)), { recursive: true });
            await fsp.writeFile(path.join(dir, p), v);
        }
        return (await push({ server: s.url, repo, line: 'main', dir, moveLine: parent === undefined, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
    };
    const post = (p, json) => api(s.url, 'POST', R(repo, p), { json });
    const comment = async (json) => ok(post(`/changes/${change}/comments`, json));
    const threads = async (query = '') => ok(api(s.url, 'GET', R(repo, `/changes/${change}/threads${query}`)));
    before(async () => {
        s = await startTestServer(dataDir);
        repo = await register(s.url, 'comments');
        const base = await snap({ 'src/app.ts': lines(40), 'README.md': 'hello\n', 'gone.txt': 'bye\n', 'big.txt': lines(120_000) });
        // Patchset 1 edits line 5; patchset 2 also inserts two lines at the top, edits line 20 and deletes gone.txt.
        const rev1 = await snap({ 'src/app.ts': lines(40, { 5: 'five' }), 'README.md': 'hello\n', 'gone.txt': 'bye\n', 'big.txt': lines(120_000) }, base);
        const rev2 = await snap({ 'src/app.ts': 'new a\nnew b\n' + lines(40, { 5: 'five', 20: 'twenty' }), 'README.md': 'hello\n', 'big.txt': lines(120_000) }, base);
        const t = (await ok(post('/tasks', { title: 'T', intent: 'i' }))).task;
        change = (await ok(post('/changes', { task_id: t.task_id, title: 'C', base_line: 'main' }))).change.change_id;
        ps1 = (await ok(post(`/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev1, summary: 's1', author_mode: 'human_only' }))).patchset.patchset_id;
        ps2 = (await ok(post(`/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev2, summary: 's2', author_mode: 'human_only' }))).patchset.patchset_id;
    });
    let stopped = false;
    after(async () => { if (!stopped)
        await s.stop(); });
    it('opens threads on lines, a file and the patchset; replies join them; resolve and reopen move them, each with its events', async () => {
        const before = (await ok(api(s.url, 'GET', R(repo, '/events')))).events.length;
        const t1 = await comment({ patchset_id: ps1, author: 'ann', body: 'why **five**?', anchor: { path: 'src/app.ts', line: 5 } });
        expect(t1.thread_id).to.equal(`${change}.comment-1`);
        expect(t1.resolution).to.equal('unresolved');
        expect(t1.comment).to.include({ comment_id: `${change}.comment-1`, sequence: 1, patchset_id: ps1, author: 'ann', in_reply_to: null, published: true, resolution: null });
        expect(t1.comment.anchor).to.deep.equal({ kind: 'lines', path: 'src/app.ts', side: 'revision', line: 5, end_line: null });
        const t2 = await comment({ patchset_id: ps1, author: 'ann', body: 'range', anchor: { path: 'src/app.ts', side: 'base', line: 19, end_line: 21 } });
        const t3 = await comment({ patchset_id: ps1, author: 'bob', body: 'this file', anchor: { path: 'gone.txt' } });
        const t4 = await comment({ patchset_id: ps1, author: 'bob', body: 'overall fine', resolution: 'resolved' });
        expect(t4.comment.anchor).to.deep.equal({ kind: 'patchset' });
        expect(t4.resolution).to.equal('resolved');
        const reply = await comment({ author: 'bob', body: 'because', in_reply_to: t1.thread_id });
        expect(reply.thread_id).to.equal(t1.thread_id);
        expect(reply.comment.anchor).to.deep.equal(t1.comment.anchor);
        expect(reply.comment.patchset_id).to.equal(ps1);
        const done = await ok(post(`/changes/${change}/threads/${t1.thread_id}:resolve`, { author: 'ann' }));
        expect(done).to.include({ thread_id: t1.thread_id, resolution: 'resolved' });
        expect(done.comment).to.include({ body: '', resolution: 'resolved', in_reply_to: reply.comment.comment_id });
        const again = await ok(post(`/changes/${change}/threads/${t1.thread_id}:reopen`, { author: 'bob', body: 'not quite' }));
        expect(again.resolution).to.equal('unresolved');
        const ev = (await ok(api(s.url, 'GET', R(repo, '/events')))).events.slice(before);
        expect(ev.map((e) => e.type)).to.deep.equal([
            'comment.created', 'comment.created', 'comment.created', 'comment.created', 'thread.resolved', 'comment.created',
            'comment.created', 'thread.resolved', 'comment.created', 'thread.reopened',
        ]);
        expect(ev[4].data).to.deep.equal({ thread_id: t4.thread_id, change_id: change, comment_id: t4.comment.comment_id, author: 'bob' });
        expect(ev[0].data).to.deep.equal({ comment_id: t1.comment.comment_id, change_id: change, patchset_id: ps1, thread_id: t1.thread_id, author: 'ann' });
        const all = await threads();
        expect(all.unresolved).to.equal(3);
        expect(all.threads.map((t) => [t.thread_id, t.resolution, t.comments.length])).to.deep.equal([
            [t1.thread_id, 'unresolved', 4], [t2.thread_id, 'unresolved', 1], [t3.thread_id, 'unresolved', 1], [t4.thread_id, 'resolved', 1],
        ]);
        expect(all.threads[0]).to.include({ outdated: false, outdated_reason: null, patchset_id: ps1 });
        expect((await threads('?resolved=true')).threads.map((t) => t.thread_id)).to.deep.equal([t4.thread_id]);
        expect((await threads('?resolved=false&path=src/app.ts')).threads.map((t) => t.thread_id)).to.deep.equal([t1.thread_id, t2.thread_id]);
        expect((await threads('?path=README.md')).threads).to.deep.equal([]);
    });
    it('pages threads with a cursor bound to its filter', async () => {
        const p1 = await threads('?limit=2&resolved=false');
        expect(p1.count).to.equal(2);
        expect(p1.next_cursor).to.be.a('string');
        const p2 = await threads(`?limit=2&resolved=false&cursor=${encodeURIComponent(p1.next_cursor)}`);
        expect(p2.threads.map((t) => t.thread_id)).to.deep.equal([`${change}.comment-3`]);
        expect(p2.next_cursor).to.equal(null);
        const other = await api(s.url, 'GET', R(repo, `/changes/${change}/threads?limit=2&resolved=true&cursor=${encodeURIComponent(p1.next_cursor)}`));
        expect(other.status, other.text).to.equal(400);
    });
    it('shows threads written on patchset 1 where their anchors land on patchset 2, outdated where lines changed', async () => {
        const on2 = await threads(`?patchset=${ps2}`);
        expect(on2.patchset_id).to.equal(ps2);
        const [t1, t2, t3, t4] = on2.threads;
        // Line 5 is unchanged between the patchsets' revisions and moved down by the two inserted lines.
        expect(t1).to.include({ outdated: false, outdated_reason: null });
        expect(t1.anchor).to.deep.equal({ kind: 'lines', path: 'src/app.ts', side: 'revision', line: 7, end_line: null });
        expect(t1.original_anchor.line).to.equal(5);
        // The base side is the same snapshot on both patchsets: the range stays.
        expect(t2).to.include({ outdated: false });
        expect(t2.anchor).to.deep.include({ line: 19, end_line: 21, side: 'base' });
        // gone.txt is deleted by patchset 2 but is still a file of its base: the file thread stays.
        expect(t3).to.include({ outdated: false });
        expect(t3.anchor).to.deep.equal({ kind: 'file', path: 'gone.txt' });
        expect(t4).to.include({ outdated: false });
        // A thread on patchset 2's line 22 (line 20 of patchset 1, changed) is outdated when shown on patchset 1.
        const t5 = await comment({ patchset_id: ps2, author: 'ann', body: 'twenty?', anchor: { path: 'src/app.ts', line: 22 } });
        const on1 = await threads(`?patchset=${ps1}&path=src/app.ts`);
        const shown = on1.threads.find((t) => t.thread_id === t5.thread_id);
        expect(shown).to.include({ outdated: true, outdated_reason: 'lines_changed' });
        expect(shown.anchor).to.deep.equal(t5.comment.anchor);
    });
    it('refuses bad anchors, replies and resolutions with 400/404/409, changing nothing', async () => {
        const count = async () => (await threads()).threads.reduce((n, t) => n + t.comments.length, 0);
        const n = await count();
        const refuse = async (p, json, status, match) => {
            const res = await post(p, json);
            expect(res.status, `${p} ${JSON.stringify(json)}: ${res.text}`).to.equal(status);
            expect(res.json.error).to.be.a('string');
            if (match)
                expect(res.json.error).to.match(match);
        };
        const c = `/changes/${change}/comments`;
        await refuse(c, { patchset_id: ps1, author: 'a', body: 'x', anchor: { path: 'src/app.ts', line: 41 } }, 400, /beyond the end/);
        await refuse(c, { patchset_id: ps1, author: 'a', body: 'x', anchor: { path: 'src/app.ts', line: 3, end_line: 2 } }, 400);
        await refuse(c, { patchset_id: ps1, author: 'a', body: 'x', anchor: { path: 'nope.ts', line: 1 } }, 400, /not a file/);
        await refuse(c, { patchset_id: ps1, author: 'a', body: 'x', anchor: { path: 'nope.ts' } }, 400);
        await refuse(c, { patchset_id: ps1, author: 'a', body: 'x', anchor: { path: '../x', line: 1 } }, 400);
        await refuse(c, { patchset_id: ps1, author: 'a', body: 'x', anchor: { path: 'src', line: 1 } }, 400);
        await refuse(c, { patchset_id: ps1, author: 'a', body: 'x', anchor: { line: 1 } }, 400);
        await refuse(c, { patchset_id: ps1, author: 'a', body: '   ' }, 400, /body/);
        await refuse(c, { patchset_id: ps1, author: 'a', body: 'x'.repeat(16 * 1024 + 1) }, 400);
        await refuse(c, { patchset_id: ps1, author: 'a', body: 'x', resolution: 'done' }, 400);
        await refuse(c, { author: 'a', body: 'x' }, 400, /patchset_id/);
        await refuse(c, { patchset_id: 'change-1.patchset-99', author: 'a', body: 'x' }, 404);
        await refuse(c, { author: 'a', body: 'x', in_reply_to: `${change}.comment-1`, anchor: { path: 'README.md' } }, 400);
        await refuse(c, { author: 'a', body: 'x', in_reply_to: 'change-77.comment-1' }, 404);
        await refuse(c, { author: 'a', body: 'x', in_reply_to: 'garbage' }, 404);
        await refuse(`/changes/change-99/comments`, { patchset_id: ps1, author: 'a', body: 'x' }, 404);
        const th = `/changes/${change}/threads`;
        await refuse(`${th}/${change}.comment-4:resolve`, { author: 'a' }, 409, /already resolved/);
        await refuse(`${th}/${change}.comment-2:reopen`, { author: 'a' }, 409);
        await refuse(`${th}/${change}.comment-5:resolve`, { author: 'a' }, 400, /is a reply/);
        await refuse(`${th}/${change}.comment-99:resolve`, { author: 'a' }, 404);
        await refuse(`${th}/bogus:resolve`, { author: 'a' }, 404);
        // Over 1 MiB: not commented by line (the diff does not show it by line), but the file may be.
        await refuse(c, { patchset_id: ps1, author: 'a', body: 'x', anchor: { path: 'big.txt', line: 1 } }, 400, /larger than/);
        expect(await count()).to.equal(n);
        const big = await comment({ patchset_id: ps1, author: 'a', body: 'split this file', anchor: { path: 'big.txt' } });
        expect(big.comment.anchor).to.deep.equal({ kind: 'file', path: 'big.txt' });
        for (const q of ['?resolved=yes', '?patchset=change-1.patchset-99', '?path=../x', '?limit=0']) {
            const res = await api(s.url, 'GET', R(repo, `/changes/${change}/threads${q}`));
            expect(res.status, `${q}: ${res.text}`).to.be.oneOf([400, 404]);
        }
    });
    it('keeps the threads across a restart and carries them through export and restore', async () => {
        const want = await threads();
        await s.stop();
        s = await startTestServer(dataDir);
        expect(await threads()).to.deep.equal(want);
        const { manifest, files } = await exportRepo(s.url, repo);
        const restored = await restoreRepo(s.url, manifest, files);
        const got = await ok(api(s.url, 'GET', R(restored, `/changes/${change}/threads`)));
        expect(got.threads).to.deep.equal(want.threads);
        // The restored authority takes new comments after the restored ones.
        const next = await ok(api(s.url, 'POST', R(restored, `/changes/${change}/comments`), { json: { author: 'c', body: 'after restore', in_reply_to: `${change}.comment-2` } }));
        expect(next.comment.sequence).to.equal(want.threads.reduce((n, t) => n + t.comments.length, 0) + 1);
    });
    it('leaves a store fsck reports clean (the comment records are workflow.log upserts)', async () => {
        await s.stop();
        stopped = true;
        const check = await cli(['fsck', '--data', dataDir]);
        expect(check.code, check.stdout + check.stderr).to.equal(0);
        expect(JSON.parse(check.stdout.trim().split('\n').at(-1)).ok).to.equal(true);
    });
});
describe('comments: drafts and publishing them with a vote', function () {
    this.timeout(120_000);
    let s;
    let repo;
    let ps1;
    let ps2;
    let change;
    const dir = path.join(tempDir(), 'tree');
    const post = (p, json) => api(s.url, 'POST', R(repo, p), { json });
    const threads = async (query = '') => ok(api(s.url, 'GET', R(repo, `/changes/${change}/threads${query}`)));
    const events = async () => (await ok(api(s.url, 'GET', R(repo, '/events?limit=1000')))).events;
    before(async () => {
        s = await startTestServer();
        repo = await register(s.url, 'drafts');
        const snap = async (text, parent) => {
            await fsp.rm(dir, { recursive: true, force: true });
            await fsp.mkdir(dir, { recursive: true });
            await fsp.writeFile(path.join(dir, 'a.txt'), text);
            return (await push({ server: s.url, repo, line: 'main', dir, moveLine: parent === undefined, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
        };
        const base = await snap(lines(10));
        const rev1 = await snap(lines(10, { 3: 'three' }), base);
        const rev2 = await snap(lines(10, { 4: 'four' }), base);
        const t = (await ok(post('/tasks', { title: 'T', intent: 'i' }))).task;
        change = (await ok(post('/changes', { task_id: t.task_id, title: 'C', base_line: 'main' }))).change.change_id;
        ps1 = (await ok(post(`/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev1, summary: 's1', author_mode: 'human_only' }))).patchset.patchset_id;
        ps2 = (await ok(post(`/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev2, summary: 's2', author_mode: 'human_only' }))).patchset.patchset_id;
    });
    after(() => s.stop());
    it("keeps drafts to their author's list, without events, until one publish sends them and the vote in one commit", async () => {
        const open = await ok(post(`/changes/${change}/comments`, { patchset_id: ps2, author: 'bob', body: 'a question', anchor: { path: 'a.txt', line: 4 } }));
        const n0 = (await events()).length;
        const d1 = await ok(post(`/changes/${change}/comments`, { patchset_id: ps2, author: 'ann', body: 'draft thread', anchor: { path: 'a.txt', line: 2 }, draft: true }));
        expect(d1.comment).to.include({ published: false });
        const d2 = await ok(post(`/changes/${change}/comments`, { author: 'ann', body: 'answered', in_reply_to: open.thread_id, resolution: 'resolved', draft: true }));
        expect(d2.resolution).to.equal('unresolved');
        expect((await events()).length, 'a draft emits nothing').to.equal(n0);
        // Others see neither draft; the author sees both, and what publishing would do.
        const seen = await threads();
        expect(seen.threads.map((t) => [t.thread_id, t.resolution, t.comments.length])).to.deep.equal([[open.thread_id, 'unresolved', 1]]);
        expect((await threads('?author=bob')).threads).to.have.length(1);
        const mine = await threads('?author=ann');
        expect(mine.threads.map((t) => [t.thread_id, t.draft, t.resolution, t.resolution_with_drafts, t.comments.length])).to.deep.equal([
            [open.thread_id, false, 'unresolved', 'resolved', 2],
            [d1.thread_id, true, 'unresolved', 'unresolved', 1],
        ]);
        expect(mine.unresolved).to.equal(1);
        // Someone else's draft is not there to reply to or resolve; your own draft is edited, not answered.
        expect((await post(`/changes/${change}/comments`, { author: 'bob', body: 'x', in_reply_to: d1.thread_id })).status).to.equal(404);
        expect((await post(`/changes/${change}/comments`, { author: 'ann', body: 'x', in_reply_to: d1.thread_id })).status).to.equal(400);
        expect((await post(`/changes/${change}/threads/${d1.thread_id}:resolve`, { author: 'bob' })).status).to.equal(404);
        // Refusals of a publish change nothing.
        const pub = `/changes/${change}/reviews:publish`;
        for (const [json, status] of [
            [{ author: 'bob', patchset_id: ps2 }, 400], // no drafts, no vote
            [{ author: 'ann', patchset_id: ps2, action: 'lgtm' }, 400],
            [{ author: 'ann', patchset_id: ps2, comment: 'no vote' }, 400],
            [{ author: 'ann', patchset_id: ps2, action: 'approve' }, 400], // a vote is on the selected patchset (ps1)
            [{ author: 'ann', patchset_id: `${change}.ps-9` }, 404],
            [{ author: 'ann', patchset_id: ps2, published: true }, 422],
            [{ author: 'ann' }, 422],
        ]) {
            const res = await post(pub, json);
            expect(res.status, `${JSON.stringify(json)}: ${res.text}`).to.equal(status);
        }
        expect((await events()).length).to.equal(n0);
        expect((await threads('?author=ann')).threads[1].draft).to.equal(true);
        const done = await ok(post(pub, { author: 'ann', patchset_id: ps1, action: 'approve', comment: 'LGTM with one note' }));
        expect(done.published.map((c) => [c.comment_id, c.published])).to.deep.equal([[d1.comment.comment_id, true], [d2.comment.comment_id, true]]);
        expect(done.review).to.include({ reviewer: 'ann', action: 'approve', patchset_id: ps1, comment: 'LGTM with one note' });
        const ev = (await events()).slice(n0);
        expect(ev.map((e) => e.type)).to.deep.equal(['comment.created', 'comment.created', 'thread.resolved', 'review.recorded']);
        expect(new Set(ev.map((e) => e.at_us)).size, 'one commit').to.equal(1);
        expect(ev[1].data).to.include({ thread_id: open.thread_id, comment_id: d2.comment.comment_id });
        const all = await threads();
        expect(all.threads.map((t) => [t.thread_id, t.resolution, t.comments.length, t.draft])).to.deep.equal([
            [open.thread_id, 'resolved', 2, false],
            [d1.thread_id, 'unresolved', 1, false],
        ]);
        expect((await ok(api(s.url, 'GET', R(repo, `/changes/${change}/reviews`)))).approvals).to.equal(1);
        // Nothing left: a second publish without a vote is refused.
        expect((await post(pub, { author: 'ann', patchset_id: ps2 })).status).to.equal(400);
    });
});
describe('comments: editing and discarding one\'s own draft', function () {
    this.timeout(120_000);
    const dataDir = path.join(tempDir(), 'data');
    let s;
    let repo;
    let ps;
    let change;
    let closed;
    let closedDraft;
    const dir = path.join(tempDir(), 'tree');
    const C = (rest = '') => R(repo, `/changes/${change}${rest}`);
    const post = (p, json) => api(s.url, 'POST', R(repo, p), { json });
    const patch = (id, json, on = change) => api(s.url, 'PATCH', R(repo, `/changes/${on}/comments/${id}`), { json });
    const del = (id, query, on = change) => api(s.url, 'DELETE', R(repo, `/changes/${on}/comments/${id}${query}`));
    const events = async () => (await ok(api(s.url, 'GET', R(repo, '/events?limit=1000')))).events;
    /** What a refused request must leave alone: every author's view of the threads and the event feed. */
    const state = async () => ({
        ann: (await ok(api(s.url, 'GET', C('/threads?author=ann')))).threads,
        bob: (await ok(api(s.url, 'GET', C('/threads?author=bob')))).threads,
        events: (await events()).length,
    });
    before(async () => {
        s = await startTestServer(dataDir);
        repo = await register(s.url, 'draft-edits');
        const snap = async (text, parent) => {
            await fsp.rm(dir, { recursive: true, force: true });
            await fsp.mkdir(dir, { recursive: true });
            await fsp.writeFile(path.join(dir, 'a.txt'), text);
            return (await push({ server: s.url, repo, line: 'main', dir, moveLine: parent === undefined, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
        };
        const base = await snap(lines(10));
        const rev = await snap(lines(10, { 3: 'three' }), base);
        const t = (await ok(post('/tasks', { title: 'T', intent: 'i' }))).task;
        change = (await ok(post('/changes', { task_id: t.task_id, title: 'C', base_line: 'main' }))).change.change_id;
        ps = (await ok(post(`/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' }))).patchset.patchset_id;
        closed = (await ok(post('/changes', { task_id: t.task_id, title: 'closed', base_line: 'main' }))).change.change_id;
        const cps = (await ok(post(`/changes/${closed}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' }))).patchset.patchset_id;
        closedDraft = (await ok(post(`/changes/${closed}/comments`, { patchset_id: cps, author: 'ann', body: 'left behind', draft: true }))).comment.comment_id;
        await ok(post(`/changes/${closed}:close`, { status: 'abandoned' }));
    });
    let stopped = false;
    after(async () => { if (!stopped)
        await s.stop(); });
    it('PATCH edits the author\'s draft in place (same id and sequence), with no event; the list shows the new text', async () => {
        const open = await ok(post(`/changes/${change}/comments`, { patchset_id: ps, author: 'bob', body: 'published', anchor: { path: 'a.txt', line: 3 } }));
        const d = await ok(post(`/changes/${change}/comments`, { patchset_id: ps, author: 'ann', body: 'first try', anchor: { path: 'a.txt', line: 2, end_line: 4 }, draft: true }));
        const r = await ok(post(`/changes/${change}/comments`, { author: 'ann', body: 'a reply', in_reply_to: open.thread_id, draft: true }));
        const n0 = (await events()).length;
        const edited = await ok(patch(d.comment.comment_id, { author: 'ann', body: 'second try', suggestion: 'line 2\nline 3\n' }));
        expect(edited).to.deep.equal({ comment: { ...d.comment, body: 'second try', suggestion: 'line 2\nline 3\n', updated_at_s: edited.comment.updated_at_s }, thread_id: d.thread_id, resolution: 'unresolved' });
        const reply = await ok(patch(r.comment.comment_id, { author: 'ann', body: '', resolution: 'resolved' }));
        expect(reply).to.include({ thread_id: open.thread_id, resolution: 'unresolved' });
        expect(reply.comment).to.include({ comment_id: r.comment.comment_id, sequence: r.comment.sequence, body: '', resolution: 'resolved', published: false });
        expect((await events()).length, 'a draft edit emits nothing').to.equal(n0);
        const mine = (await ok(api(s.url, 'GET', C('/threads?author=ann')))).threads;
        expect(mine.map((t) => [t.thread_id, t.resolution, t.resolution_with_drafts, t.comments.map((c) => c.body)])).to.deep.equal([
            [open.thread_id, 'unresolved', 'resolved', ['published', '']],
            [d.thread_id, 'unresolved', 'unresolved', ['second try']],
        ]);
        // Clearing the suggestion and the resolution (null).
        expect((await ok(patch(d.comment.comment_id, { author: 'ann', suggestion: null }))).comment.suggestion).to.equal(null);
        expect((await ok(patch(r.comment.comment_id, { author: 'ann', resolution: null, body: 'on second thought' }))).comment.resolution).to.equal(null);
    });
    it('refuses: a published comment 409, someone else\'s or an unknown draft 404, a closed change 400, bad fields 400/422 — changing nothing', async () => {
        const pub = `${change}.comment-1`;
        const draft = `${change}.comment-2`;
        const before = await state();
        const cases = [
            ['edit a published comment (own)', () => patch(pub, { author: 'bob', body: 'x' }), 409],
            ['edit a published comment (another\'s)', () => patch(pub, { author: 'ann', body: 'x' }), 409],
            ['edit someone else\'s draft', () => patch(draft, { author: 'bob', body: 'x' }), 404],
            ['edit an unknown comment', () => patch(`${change}.comment-99`, { author: 'ann', body: 'x' }), 404],
            ['edit a malformed id', () => patch('bogus', { author: 'ann', body: 'x' }), 404],
            ['edit another change\'s comment through this change', () => patch(closedDraft, { author: 'ann', body: 'x' }), 404],
            ['edit on an unknown change', () => patch(draft, { author: 'ann', body: 'x' }, 'change-99'), 404],
            ['edit a draft of a closed change', () => patch(closedDraft, { author: 'ann', body: 'x' }, closed), 400],
            ['edit with no field besides author', () => patch(draft, { author: 'ann' }), 400],
            ['edit to a blank body', () => patch(draft, { author: 'ann', body: '  ' }), 400],
            ['edit to an unknown resolution', () => patch(draft, { author: 'ann', resolution: 'done' }), 400],
            ['edit to a body over 16 KiB', () => patch(draft, { author: 'ann', body: 'x'.repeat(16 * 1024 + 1) }), 400],
            ['a suggestion on a reply', () => patch(`${change}.comment-3`, { author: 'ann', suggestion: 'x' }), 400],
            ['an unknown field', () => patch(draft, { author: 'ann', body: 'x', published: true }), 422],
            ['a field of the wrong type', () => patch(draft, { author: 'ann', body: 7 }), 422],
            ['no author', () => patch(draft, { body: 'x' }), 422],
            ['delete a published comment', () => del(pub, '?author=bob'), 409],
            ['delete someone else\'s draft', () => del(draft, '?author=bob'), 404],
            ['delete an unknown comment', () => del(`${change}.comment-99`, '?author=ann'), 404],
            ['delete a draft of a closed change', () => del(closedDraft, '?author=ann', closed), 400],
            ['delete without author', () => del(draft, ''), 400],
            ['delete with a blank author', () => del(draft, '?author=%20'), 400],
            ['delete with author twice', () => del(draft, '?author=ann&author=ann'), 400],
        ];
        for (const [what, send, status] of cases) {
            const res = await send();
            expectError(res, status, what);
        }
        expect(await state(), 'a refusal changed something').to.deep.equal(before);
    });
    it('DELETE discards the draft: gone from lists and publish, 404 afterwards, ids stay dense', async () => {
        const d = await ok(post(`/changes/${change}/comments`, { patchset_id: ps, author: 'ann', body: 'never mind', draft: true }));
        const n0 = (await events()).length;
        expect(await ok(del(d.comment.comment_id, '?author=ann'))).to.deep.equal({ deleted: d.comment.comment_id });
        expect((await events()).length, 'a discard emits nothing').to.equal(n0);
        const mine = (await ok(api(s.url, 'GET', C('/threads?author=ann')))).threads;
        expect(mine.map((t) => t.thread_id)).to.not.include(d.thread_id);
        expectError(await del(d.comment.comment_id, '?author=ann'), 404, 'delete again');
        expectError(await patch(d.comment.comment_id, { author: 'ann', body: 'back' }), 404, 'edit a discarded draft');
        expectError(await post(`/changes/${change}/comments`, { author: 'bob', body: 'x', in_reply_to: d.comment.comment_id }), 404, 'reply to a discarded draft');
        // The next comment takes the next sequence: the tombstone keeps its id.
        const next = await ok(post(`/changes/${change}/comments`, { patchset_id: ps, author: 'ann', body: 'after', draft: true }));
        expect(next.comment.sequence).to.equal(d.comment.sequence + 1);
        // Publishing sends the live drafts, never the discarded one.
        const done = await ok(post(`/changes/${change}/reviews:publish`, { author: 'ann', patchset_id: ps }));
        expect(done.published.map((c) => c.comment_id)).to.deep.equal([`${change}.comment-2`, `${change}.comment-3`, next.comment.comment_id]);
        const all = (await ok(api(s.url, 'GET', C('/threads')))).threads;
        expect(all.flatMap((t) => t.comments.map((c) => c.comment_id))).to.not.include(d.comment.comment_id);
        expect(all.find((t) => t.thread_id === `${change}.comment-2`).comments[0]).to.include({ body: 'second try', published: true, suggestion: null });
    });
    it('keeps the edits and the discard across a restart, and leaves a store fsck reports clean', async () => {
        const want = await state();
        await s.stop();
        s = await startTestServer(dataDir);
        expect(await state()).to.deep.equal(want);
        await s.stop();
        stopped = true;
        const check = await cli(['fsck', '--data', dataDir]);
        expect(check.code, check.stdout + check.stderr).to.equal(0);
        expect(JSON.parse(check.stdout.trim().split('\n').at(-1)).ok).to.equal(true);
    });
});
//# sourceMappingURL=comments.test.js.map