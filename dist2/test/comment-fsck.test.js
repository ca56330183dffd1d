// fsck over comment records (lib/store/comment-check.ts; storage-layout.md §17 "Comments"): a
// store with real threads, replies and drafts checks clean; comment records damaged on purpose
// (written through the store's own transaction and log codec) are each named — a reply to a
// missing comment, to another change's comment, to a draft; a comment of a missing change or
// patchset; an anchor of a wrong shape; a published resolution on a draft thread; a gap in the
// numbering — and fsck changes no byte.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { push } from '../lib/client/transfer.js';
import { CairnService } from '../lib/authority/service.js';
import { COMMENT, commentId } from '../lib/domain/workflow/comment-rules.js';
import { anchorProblem } from '../lib/store/comment-check.js';
import { api, cli, ok, register, startTestServer, tempDir } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
describe('fsck: comment records', function () {
    this.timeout(120_000);
    const dataDir = path.join(tempDir(), 'data');
    const dir = path.join(tempDir(), 'tree');
    let s;
    let repo;
    let c1;
    let c2;
    let ps1;
    let draft;
    before(async () => {
        s = await startTestServer(dataDir);
        repo = await register(s.url, 'fsck-comments');
        const post = (p, json) => ok(api(s.url, 'POST', R(repo, p), { json }));
        await fsp.mkdir(dir, { recursive: true });
        await fsp.writeFile(path.join(dir, 'a.txt'), 'one\ntwo\nthree\n');
        const base = (await push({ server: s.url, repo, line: 'main', dir, moveLine: true, progress: false })).snapshot_id;
        await fsp.writeFile(path.join(dir, 'a.txt'), 'one\n2\nthree\n');
        const rev = (await push({ server: s.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
        const t = (await post('/tasks', { title: 'T', intent: 'i' })).task;
        c1 = (await post('/changes', { task_id: t.task_id, title: 'C1', base_line: 'main' })).change.change_id;
        c2 = (await post('/changes', { task_id: t.task_id, title: 'C2', base_line: 'main' })).change.change_id;
        ps1 = (await post(`/changes/${c1}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' })).patchset.patchset_id;
        const ps2 = (await post(`/changes/${c2}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' })).patchset.patchset_id;
        const root = await post(`/changes/${c1}/comments`, { patchset_id: ps1, author: 'rev', body: 'why?', anchor: { path: 'a.txt', line: 2, end_line: 3 } });
        await post(`/changes/${c1}/comments`, { author: 'dev', body: 'because', in_reply_to: root.thread_id, resolution: 'resolved' });
        await post(`/changes/${c1}/comments`, { patchset_id: ps1, author: 'rev', body: 'on the file', anchor: { path: 'a.txt' } });
        draft = (await post(`/changes/${c1}/comments`, { patchset_id: ps1, author: 'ann', body: 'draft', draft: true })).comment.comment_id;
        await post(`/changes/${c2}/comments`, { patchset_id: ps2, author: 'rev', body: 'other change' });
        await s.stop();
    });
    it('reports nothing on a store of real threads, replies and drafts', async () => {
        const check = await cli(['fsck', '--data', dataDir]);
        expect(check.code, check.stdout + check.stderr).to.equal(0);
    });
    it('names each damaged comment record and changes no byte of the store', async () => {
        const service = await CairnService.open({ dataDir, log: pino({ level: 'silent' }) });
        const now = 1_800_000_000;
        const rec = (change, n, over) => ({
            comment_id: commentId(change, n), change_id: change, sequence: n, patchset_id: ps1, author: 'x',
            anchor: { kind: 'patchset' }, in_reply_to: null, body: 'b', resolution: null, suggestion: null,
            published: true, created_at_s: now, updated_at_s: now, ...over,
        });
        try {
            const a = await service.opened(repo);
            await a.store.transact((tx) => {
                const damaged = [
                    rec(c1, 5, { in_reply_to: commentId(c1, 999) }),
                    rec(c1, 6, { in_reply_to: commentId(c2, 1) }),
                    rec(c1, 7, { in_reply_to: draft }),
                    rec(c1, 8, { in_reply_to: draft, resolution: 'resolved' }),
                    rec(c1, 9, { patchset_id: `${c1}.ps-9` }),
                    rec(c1, 10, { anchor: { kind: 'lines', path: '../x', side: 'left', line: 0 } }),
                    rec(c1, 12, {}),
                    rec('change-99', 1, { patchset_id: 'change-99.ps-1' }),
                ];
                for (const d of damaged)
                    tx.upsert(COMMENT, d.comment_id, d);
            });
        }
        finally {
            service.close();
        }
        const log = path.join(dataDir, 'repositories', String(repo), 'workflow.log');
        const before = await fsp.readFile(log);
        const check = await cli(['fsck', '--data', dataDir]);
        const out = check.stdout + check.stderr;
        expect(check.code, out).to.not.equal(0);
        for (const want of [
            `comment ${c1}.comment-5: in_reply_to ${c1}.comment-999 does not exist`,
            `comment ${c1}.comment-6: in_reply_to ${c2}.comment-1 is a comment of ${c2}; a reply stays in its change`,
            `comment ${c1}.comment-7: in_reply_to ${draft} is an unpublished draft`,
            `comment ${c1}.comment-8: sets thread ${draft} resolved, but that thread's first comment is an unpublished draft`,
            `comment ${c1}.comment-9: patchset ${c1}.ps-9 does not exist`,
            `comment ${c1}.comment-10: anchor`,
            `comments of ${c1}: comment 11 is missing`,
            'comments of change-99: change change-99 does not exist',
            'comment change-99.comment-1: patchset change-99.ps-1 does not exist',
        ])
            expect(out, want).to.include(want);
        // Nothing about the sound records.
        for (const fine of [`${c1}.comment-1:`, `${c1}.comment-2:`, `${c1}.comment-3:`, `${c2}.comment-1:`])
            expect(out).to.not.include(`comment ${fine}`);
        expect((await fsp.readFile(log)).equals(before)).to.equal(true);
    });
    it('knows the anchor shapes the create rules write, and names what else it finds', () => {
        expect(anchorProblem({ kind: 'patchset' })).to.equal(null);
        expect(anchorProblem({ kind: 'file', path: 'src/a.ts' })).to.equal(null);
        expect(anchorProblem({ kind: 'lines', path: 'a', side: 'base', line: 3, end_line: null })).to.equal(null);
        expect(anchorProblem({ kind: 'lines', path: 'a', side: 'revision', line: 3, end_line: 5 })).to.equal(null);
        expect(anchorProblem(null)).to.include('not an object');
        expect(anchorProblem({ kind: 'range' })).to.include('kind');
        expect(anchorProblem({ kind: 'patchset', path: 'a' })).to.include('fields');
        expect(anchorProblem({ kind: 'file', path: '/abs' })).to.be.a('string');
        expect(anchorProblem({ kind: 'lines', path: 'a', side: 'left', line: 1, end_line: null })).to.include('side');
        expect(anchorProblem({ kind: 'lines', path: 'a', side: 'base', line: 0, end_line: null })).to.include('line');
        expect(anchorProblem({ kind: 'lines', path: 'a', side: 'base', line: 3, end_line: 3 })).to.include('end_line');
        expect(anchorProblem({ kind: 'lines', path: 'a', side: 'base', line: 1.5, end_line: null })).to.include('line');
    });
});
//# sourceMappingURL=comment-fsck.test.js.map