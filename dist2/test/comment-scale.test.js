// The thread list, readiness and the resolution gate read a derived per-change summary
// (lib/domain/workflow/thread-summary.ts) kept current from each committed comment: its counts
// stay right through replies, resolve, reopen, drafts and their publish, and a real restart of
// a child `cairn serve` (which rebuilds the summary from workflow.log); a change holds at most
// MAX_COMMENTS_PER_CHANGE comments (one more → 409, nothing written).
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { push } from '../lib/client/transfer.js';
import { CairnService } from '../lib/authority/service.js';
import { COMMENT, commentId } from '../lib/domain/workflow/comment-rules.js';
import { MAX_COMMENTS_PER_CHANGE } from '../lib/domain/workflow/thread-summary.js';
import { api, expectError, ok, register, spawnServer, tempDir } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const lines = (n) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
async function stop(s) {
    s.proc.kill('SIGTERM');
    await s.exited;
}
describe('comment threads at scale: the derived summary and the per-change cap', function () {
    this.timeout(180_000);
    const dataDir = path.join(tempDir(), 'data');
    const dir = path.join(tempDir(), 'tree');
    let s;
    let repo;
    let change;
    let ps1;
    let ps2;
    const post = (p, json) => api(s.url, 'POST', R(repo, p), { json });
    const counts = async (author) => {
        const q = author ? `?author=${author}&limit=1000` : '?limit=1000';
        const list = await ok(api(s.url, 'GET', R(repo, `/changes/${change}/threads${q}`)));
        const readiness = await ok(api(s.url, 'GET', R(repo, `/read/changes/${change}/readiness`)));
        const unresolvedListed = list.threads.filter((t) => !t.draft && t.resolution === 'unresolved').length;
        return { unresolved: list.unresolved, readiness: readiness.unresolved_threads, threads: list.threads.length, unresolvedListed, list };
    };
    before(async () => {
        s = await spawnServer(dataDir);
        repo = await register(s.url, 'scale');
        const snap = async (text, parent) => {
            await fsp.rm(dir, { recursive: true, force: true });
            await fsp.mkdir(dir, { recursive: true });
            await fsp.writeFile(path.join(dir, 'a.txt'), text);
            return (await push({ server: s.url, repo, line: 'main', dir, moveLine: parent === undefined, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
        };
        const base = await snap(lines(50));
        const rev1 = await snap(lines(50).replace('line 3\n', 'three\n'), base);
        const rev2 = await snap('top\n' + lines(50).replace('line 3\n', 'three\n'), base);
        const t = (await ok(post('/tasks', { title: 'T', intent: 'i' }))).task;
        change = (await ok(post('/changes', { task_id: t.task_id, title: 'C', base_line: 'main' }))).change.change_id;
        ps1 = (await ok(post(`/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev1, summary: 's1', author_mode: 'human_only' }))).patchset.patchset_id;
        ps2 = (await ok(post(`/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev2, summary: 's2', author_mode: 'human_only' }))).patchset.patchset_id;
    });
    after(async () => { if (s.proc.exitCode === null)
        await stop(s); });
    it('keeps the unresolved count of the list and of readiness right through replies, resolve, reopen, drafts, publish and a restart', async () => {
        const open = async (line) => (await ok(post(`/changes/${change}/comments`, { patchset_id: ps1, author: 'rev', body: `on ${line}`, anchor: { path: 'a.txt', line } }))).thread_id;
        // Read first, so the summary is held before the writes it must follow.
        expect(await counts()).to.include({ unresolved: 0, readiness: 0, threads: 0 });
        const a = await open(5);
        const b = await open(10);
        const c = await open(20);
        expect(await counts()).to.include({ unresolved: 3, readiness: 3, threads: 3 });
        await ok(post(`/changes/${change}/comments`, { author: 'dev', body: 'done', in_reply_to: a, resolution: 'resolved' }));
        await ok(post(`/changes/${change}/threads/${b}:resolve`, { author: 'rev' }));
        expect(await counts()).to.include({ unresolved: 1, readiness: 1 });
        await ok(post(`/changes/${change}/threads/${b}:reopen`, { author: 'rev', body: 'not quite' }));
        expect(await counts()).to.include({ unresolved: 2, readiness: 2 });
        // Drafts count for nobody until published; a draft that resolves moves its thread only then.
        await ok(post(`/changes/${change}/comments`, { patchset_id: ps2, author: 'ann', body: 'draft thread', anchor: { path: 'a.txt', line: 30 }, draft: true }));
        await ok(post(`/changes/${change}/comments`, { author: 'ann', body: 'fixed', in_reply_to: c, resolution: 'resolved', draft: true }));
        const drafted = await counts();
        expect(drafted).to.include({ unresolved: 2, readiness: 2, threads: 3 });
        const annView = await counts('ann');
        expect(annView).to.include({ unresolved: 2, threads: 4 });
        expect(annView.list.threads.find((t) => t.thread_id === c).resolution_with_drafts).to.equal('resolved');
        await ok(post(`/changes/${change}/reviews:publish`, { author: 'ann', patchset_id: ps1, action: 'comment', comment: 'see threads' }));
        // The draft thread opened (+1), its resolving reply closed c (−1).
        const published = await counts();
        expect(published).to.include({ unresolved: 2, readiness: 2, threads: 4, unresolvedListed: 2 });
        // Threads of ps-1 shown on ps-2: one line inserted at the top moves them down by one.
        const onPs2 = await ok(api(s.url, 'GET', R(repo, `/changes/${change}/threads?patchset=${ps2}&limit=1000`)));
        expect(onPs2.threads.find((t) => t.thread_id === a).anchor).to.include({ line: 6 });
        const before = { all: published.list, ps2: onPs2, ann: (await counts('ann')).list };
        // A real restart: the summary is rebuilt from workflow.log and agrees with what was served.
        await stop(s);
        s = await spawnServer(dataDir);
        const again = await counts();
        expect(again).to.include({ unresolved: 2, readiness: 2, threads: 4 });
        expect(again.list).to.deep.equal(before.all);
        expect(await ok(api(s.url, 'GET', R(repo, `/changes/${change}/threads?patchset=${ps2}&limit=1000`)))).to.deep.equal(before.ps2);
        expect((await counts('ann')).list).to.deep.equal(before.ann);
        // Paging a filtered list walks the same threads as one page.
        const paged = [];
        let cursor = null;
        do {
            const page = await ok(api(s.url, 'GET', R(repo, `/changes/${change}/threads?resolved=false&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)));
            paged.push(...page.threads.map((t) => t.thread_id));
            cursor = page.next_cursor;
        } while (cursor);
        expect(paged).to.deep.equal(before.all.threads.filter((t) => t.resolution === 'unresolved').map((t) => t.thread_id));
        // And after the restart, writes still move the counts.
        await ok(post(`/changes/${change}/threads/${b}:resolve`, { author: 'rev' }));
        expect(await counts()).to.include({ unresolved: 1, readiness: 1 });
    });
    it(`refuses comment ${MAX_COMMENTS_PER_CHANGE + 1} of a change with 409 and writes nothing`, async () => {
        // Fill the change to one short of the cap through the store (HTTP would take minutes), then restart.
        const have = (await counts()).list.threads.reduce((n, t) => n + t.comments.length, 0);
        await stop(s);
        const service = await CairnService.open({ dataDir, log: pino({ level: 'silent' }) });
        try {
            const a = await service.opened(repo);
            const now = Math.floor(Date.now() / 1000);
            for (let start = have + 1; start < MAX_COMMENTS_PER_CHANGE; start += 1000) {
                await a.store.transact((tx) => {
                    for (let k = start; k < start + 1000 && k < MAX_COMMENTS_PER_CHANGE; k++) {
                        const root = k % 2 === 1;
                        const rec = {
                            comment_id: commentId(change, k), change_id: change, sequence: k, patchset_id: ps1, author: 'bulk',
                            anchor: { kind: 'lines', path: 'a.txt', side: 'revision', line: 1, end_line: null },
                            in_reply_to: root ? null : commentId(change, k - 1), body: `bulk ${k}`, resolution: root ? null : 'resolved',
                            suggestion: null, published: true, created_at_s: now, updated_at_s: now,
                        };
                        tx.upsert(COMMENT, rec.comment_id, rec);
                    }
                });
            }
        }
        finally {
            service.close();
        }
        s = await spawnServer(dataDir);
        const before = await counts();
        const last = await ok(post(`/changes/${change}/comments`, { patchset_id: ps1, author: 'rev', body: 'the last one', anchor: { path: 'a.txt', line: 2 } }));
        expect(last.comment.sequence).to.equal(MAX_COMMENTS_PER_CHANGE);
        const events = async () => (await ok(api(s.url, 'GET', R(repo, '/events?limit=1000')))).events.length;
        const lastEvent = await events();
        const over = await post(`/changes/${change}/comments`, { patchset_id: ps1, author: 'rev', body: 'one too many', anchor: { path: 'a.txt', line: 2 } });
        expectError(over, 409);
        expect(over.json.error).to.include(`${MAX_COMMENTS_PER_CHANGE} comments`);
        const resolve = await post(`/changes/${change}/threads/${last.thread_id}:resolve`, { author: 'rev' });
        expectError(resolve, 409);
        expect(await events()).to.equal(lastEvent);
        const after = await counts();
        expect(after.unresolved).to.equal(before.unresolved + 1);
        expect(after.readiness).to.equal(after.unresolved);
    });
});
//# sourceMappingURL=comment-scale.test.js.map