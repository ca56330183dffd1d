// Viewed marks over real HTTP (docs/api.md "Viewed marks"): marking and unmarking files per user
// and patchset; a mark carried to a later patchset while the file's blob is unchanged; the
// patchset the user last reviewed; the refusals (traversal paths, unknown change, another
// change's patchset, huge bodies, the per-user cap); the records surviving a restart, an
// export → restore, and fsck.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { push } from '../lib/client/transfer.js';
import { CairnService } from '../lib/authority/service.js';
import { VIEWED, viewedId } from '../lib/domain/workflow/viewed-rules.js';
import { api, cli, expectError, exportRepo, ok, register, restoreRepo, startTestServer, tempDir } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
describe('viewed marks', function () {
    this.timeout(120_000);
    const dataDir = path.join(tempDir(), 'data');
    let s;
    let repo;
    let change;
    let other;
    let ps1;
    let ps2;
    let otherPs;
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
    const mark = (json, c = change) => api(s.url, 'PUT', R(repo, `/changes/${c}/viewed`), { json });
    const viewed = async (query, r = repo) => ok(api(s.url, 'GET', R(r, `/changes/${change}/viewed${query}`)));
    before(async () => {
        s = await startTestServer(dataDir);
        repo = await register(s.url, 'viewed');
        const base = await snap({ 'src/a.ts': 'a\n', 'src/b.ts': 'b\n', 'gone.txt': 'bye\n' });
        // ps-1 edits a and b; ps-2 edits b again (a keeps its ps-1 blob) and deletes gone.txt.
        const rev1 = await snap({ 'src/a.ts': 'a1\n', 'src/b.ts': 'b1\n', 'gone.txt': 'bye\n' }, base);
        const rev2 = await snap({ 'src/a.ts': 'a1\n', 'src/b.ts': 'b2\n' }, base);
        const t = (await ok(post('/tasks', { title: 'T', intent: 'i' }))).task;
        change = (await ok(post('/changes', { task_id: t.task_id, title: 'C', base_line: 'main' }))).change.change_id;
        ps1 = (await ok(post(`/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev1, summary: 's1', author_mode: 'human_only' }))).patchset.patchset_id;
        ps2 = (await ok(post(`/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev2, summary: 's2', author_mode: 'human_only' }))).patchset.patchset_id;
        other = (await ok(post('/changes', { task_id: t.task_id, title: 'D', base_line: 'main' }))).change.change_id;
        otherPs = (await ok(post(`/changes/${other}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev1, summary: 'o', author_mode: 'human_only' }))).patchset.patchset_id;
    });
    let stopped = false;
    after(async () => { if (!stopped)
        await s.stop(); });
    it('marks files per user and patchset, and answers the marked paths', async () => {
        expect(await viewed(`?user=ann&patchset=${ps1}`)).to.deep.equal({ change_id: change, patchset_id: ps1, user: 'ann', paths: [], last_reviewed_patchset_id: null });
        const a = await ok(mark({ user: 'ann', patchset_id: ps1, path: 'src/b.ts', viewed: true }));
        expect(a).to.deep.equal({ change_id: change, patchset_id: ps1, user: 'ann', paths: ['src/b.ts'], last_reviewed_patchset_id: null });
        await ok(mark({ user: 'ann', patchset_id: ps1, path: 'src/a.ts', viewed: true }));
        // A file the patchset deletes is a file of the patchset too.
        await ok(mark({ user: 'ann', patchset_id: ps2, path: 'gone.txt', viewed: true }));
        expect((await viewed(`?user=ann&patchset=${ps1}`)).paths).to.deep.equal(['src/a.ts', 'src/b.ts']);
        // Another user's marks are theirs.
        expect((await viewed(`?user=bob&patchset=${ps1}`)).paths).to.deep.equal([]);
        // Marking again changes nothing.
        expect((await ok(mark({ user: 'ann', patchset_id: ps1, path: 'src/a.ts', viewed: true }))).paths).to.deep.equal(['src/a.ts', 'src/b.ts']);
    });
    it('carries a mark to a later patchset while the file is unchanged there, and not once it changed', async () => {
        // a.ts has the same blob on ps-2 as on ps-1: still viewed; b.ts changed: not viewed.
        expect((await viewed(`?user=ann&patchset=${ps2}`)).paths).to.deep.equal(['gone.txt', 'src/a.ts']);
        // The change's current patchset is the default.
        expect((await viewed('?user=ann')).patchset_id).to.equal(ps2);
        // Unmarking on ps-2 wins over the mark carried from ps-1, and leaves ps-1's mark alone.
        expect((await ok(mark({ user: 'ann', patchset_id: ps2, path: 'src/a.ts', viewed: false }))).paths).to.deep.equal(['gone.txt']);
        expect((await viewed(`?user=ann&patchset=${ps1}`)).paths).to.deep.equal(['src/a.ts', 'src/b.ts']);
        // A later patchset's marks never count on an earlier one.
        expect((await viewed(`?user=ann&patchset=${ps1}`)).paths).to.not.include('gone.txt');
    });
    it('names the patchset the user last reviewed (a review request is not a review)', async () => {
        await ok(post(`/changes/${change}:requestReview`, { patchset_id: ps1, reviewer_groups: ['core'], requested_by: 'ann' }));
        expect((await viewed(`?user=ann`)).last_reviewed_patchset_id).to.equal(null);
        await ok(post(`/changes/${change}/reviews`, { patchset_id: ps1, reviewer: 'ann', action: 'comment', comment: 'looks fine' }));
        expect((await viewed(`?user=ann`)).last_reviewed_patchset_id).to.equal(ps1);
        expect((await viewed(`?user=bob`)).last_reviewed_patchset_id).to.equal(null);
    });
    it('refuses bad input with a clear error and changes nothing', async () => {
        const before = await viewed(`?user=ann&patchset=${ps1}`);
        for (const p of ['../etc/passwd', 'src/../a.ts', '/abs', 'src//a.ts', './a', 'src/', 'a\\b', '']) {
            const res = await mark({ user: 'ann', patchset_id: ps1, path: p, viewed: true });
            expectError(res, 400, `path ${p}`);
            expect(res.json.error).to.match(/relative path/);
        }
        expectError(await mark({ user: 'ann', patchset_id: ps1, path: 'x'.repeat(5000), viewed: true }), 400, 'long path');
        expectError(await mark({ user: 'ann', patchset_id: ps1, path: 'no/such/file.ts', viewed: true }), 400, 'not in the patchset');
        expectError(await mark({ user: 'ann', patchset_id: otherPs, path: 'src/a.ts', viewed: true }), 400, "another change's patchset");
        expectError(await mark({ user: 'ann', patchset_id: `${change}.ps-9`, path: 'src/a.ts', viewed: true }), 404, 'unknown patchset');
        expectError(await mark({ user: 'ann', patchset_id: ps1, path: 'src/a.ts', viewed: true }, 'change-999'), 404, 'unknown change');
        expectError(await mark({ user: '', patchset_id: ps1, path: 'src/a.ts', viewed: true }), 400, 'empty user');
        expectError(await mark({ user: 'u'.repeat(300), patchset_id: ps1, path: 'src/a.ts', viewed: true }), 400, 'long user');
        expectError(await mark({ patchset_id: ps1, path: 'src/a.ts', viewed: true }), 400, 'no user');
        expectError(await mark({ user: 'ann', patchset_id: ps1, path: 'src/a.ts', viewed: 'yes' }), 422, 'viewed not boolean');
        expectError(await mark({ user: 'ann', patchset_id: ps1, path: 'src/a.ts', viewed: true, extra: 1 }), 422, 'unknown field');
        expectError(await mark({ user: 'ann', patchset_id: ps1, path: 'p'.repeat(3 * 1024 * 1024), viewed: true }), 413, 'huge body');
        expectError(await api(s.url, 'GET', R(repo, `/changes/${change}/viewed`)), 400, 'GET without user');
        expectError(await api(s.url, 'GET', R(repo, `/changes/${change}/viewed?user=ann&patchset=${otherPs}`)), 400, "GET another change's patchset");
        expectError(await api(s.url, 'GET', R(repo, '/changes/change-999/viewed?user=ann')), 404, 'GET unknown change');
        expectError(await api(s.url, 'GET', R(repo, `/changes/${change}/viewed?user=ann&user=bob`)), 400, 'user twice');
        expect(await viewed(`?user=ann&patchset=${ps1}`)).to.deep.equal(before);
    });
    it('refuses a mark beyond the most one user may hold on a change (409), while toggling a held one still works', async () => {
        const book = (await s.ready).authority(repo).workflow.viewed;
        book.maxPerUser = 2;
        try {
            await ok(mark({ user: 'cap', patchset_id: ps1, path: 'src/a.ts', viewed: true }));
            await ok(mark({ user: 'cap', patchset_id: ps1, path: 'src/b.ts', viewed: true }));
            const res = await mark({ user: 'cap', patchset_id: ps2, path: 'src/a.ts', viewed: true });
            expectError(res, 409, 'third mark');
            expect(res.json.error).to.match(/holds 2 viewed marks/);
            expect((await ok(mark({ user: 'cap', patchset_id: ps1, path: 'src/b.ts', viewed: false }))).paths).to.deep.equal(['src/a.ts']);
            // Others are not limited by cap's marks.
            await ok(mark({ user: 'dan', patchset_id: ps2, path: 'src/a.ts', viewed: true }));
        }
        finally {
            book.maxPerUser = 10_000;
        }
    });
    it('cairn change viewed lists, marks and unmarks files', async () => {
        const common = ['--server', s.url, '--repo', String(repo)];
        const marked = await cli(['change', 'viewed', change, ...common, '--user', 'fay', '--mark', 'src/a.ts', 'src/b.ts', '--json']);
        expect(marked.code, marked.stderr).to.equal(0);
        expect(JSON.parse(marked.stdout)).to.deep.include({ patchset_id: ps2, user: 'fay', paths: ['src/a.ts', 'src/b.ts'] });
        const unmarked = await cli(['change', 'viewed', change, ...common, '--user', 'fay', '--unmark', 'src/b.ts', '--json']);
        expect(JSON.parse(unmarked.stdout).paths).to.deep.equal(['src/a.ts']);
        const listed = await cli(['change', 'viewed', change, ...common, '--user', 'fay', '--patchset', ps1, '--json']);
        expect(JSON.parse(listed.stdout)).to.deep.include({ patchset_id: ps1, paths: [] });
        const bad = await cli(['change', 'viewed', change, ...common, '--user', 'fay', '--mark', '../x']);
        expect(bad.code).to.not.equal(0);
        expect(bad.stderr).to.match(/relative path/);
        const usage = await cli(['change', 'viewed', change, ...common, '--user', 'fay', 'src/a.ts']);
        expect(usage.code).to.equal(2);
        expect(usage.stderr).to.match(/--mark or --unmark/);
    });
    it('keeps the marks across a restart and carries them through export and restore', async () => {
        const want = await viewed(`?user=ann&patchset=${ps2}`);
        await s.stop();
        s = await startTestServer(dataDir);
        expect(await viewed(`?user=ann&patchset=${ps2}`)).to.deep.equal(want);
        const { manifest, files } = await exportRepo(s.url, repo);
        const restored = await restoreRepo(s.url, manifest, files);
        expect(await viewed(`?user=ann&patchset=${ps2}`, restored)).to.deep.equal(want);
        expect((await viewed(`?user=ann&patchset=${ps1}`, restored)).paths).to.deep.equal(['src/a.ts', 'src/b.ts']);
        // The restored authority toggles a restored mark in place.
        const again = await ok(api(s.url, 'PUT', R(restored, `/changes/${change}/viewed`), { json: { user: 'ann', patchset_id: ps2, path: 'src/a.ts', viewed: true } }));
        expect(again.paths).to.deep.equal(['gone.txt', 'src/a.ts']);
    });
    it('leaves a store fsck reports clean (the marks are workflow.log upserts)', async () => {
        await s.stop();
        stopped = true;
        const check = await cli(['fsck', '--data', dataDir]);
        expect(check.code, check.stdout + check.stderr).to.equal(0);
        expect(JSON.parse(check.stdout.trim().split('\n').at(-1)).ok).to.equal(true);
    });
    it('has fsck name each damaged mark record, changing no byte', async () => {
        const service = await CairnService.open({ dataDir, log: pino({ level: 'silent' }) });
        const rec = (n, over) => ({
            viewed_id: viewedId(change, 'eve', n), change_id: change, user: 'eve', sequence: n, patchset_id: ps1, path: 'src/a.ts', blob_id: null, viewed: true, updated_at_s: 1_800_000_000, ...over,
        });
        try {
            const a = await service.opened(repo);
            await a.store.transact((tx) => {
                for (const d of [rec(1, { patchset_id: otherPs }), rec(2, { path: '../x' }), rec(3, { blob_id: 'nope' }), rec(5, {})])
                    tx.upsert(VIEWED, d.viewed_id, d);
                tx.upsert(VIEWED, `${change}.viewed-x`, rec(6, {}));
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
            `viewed mark ${viewedId(change, 'eve', 1)}: patchset ${otherPs} belongs to ${other}, not ${change}`,
            `viewed mark ${viewedId(change, 'eve', 2)}: path must be a relative path`,
            `viewed mark ${viewedId(change, 'eve', 3)}: blob_id "nope" is not a blob id or null`,
            `viewed marks of ${change}: mark 4 of a user is missing`,
            `viewed mark ${change}.viewed-x: the id is not`,
        ])
            expect(out, want).to.include(want);
        expect(out).to.not.include(viewedId(change, 'ann', 1));
        expect((await fsp.readFile(log)).equals(before)).to.equal(true);
    });
});
describe('viewed marks behind an identity header', function () {
    this.timeout(120_000);
    const H = 'X-Cairn-User';
    let s;
    after(async () => { await s.stop(); });
    it('keeps the caller\'s marks: user defaults to the caller, and naming anyone else is 403', async () => {
        s = await startTestServer(undefined, { identity: { header: H } });
        const repo = await register(s.url, 'viewed-id');
        const dir = path.join(tempDir(), 'tree');
        await fsp.mkdir(dir, { recursive: true });
        await fsp.writeFile(path.join(dir, 'a.txt'), 'a\n');
        const base = (await push({ server: s.url, repo, line: 'main', dir, moveLine: true, progress: false })).snapshot_id;
        await fsp.writeFile(path.join(dir, 'a.txt'), 'b\n');
        const rev = (await push({ server: s.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
        const post = (p, json) => ok(api(s.url, 'POST', R(repo, p), { json }));
        const t = (await post('/tasks', { title: 'T', intent: 'i' })).task;
        const c = (await post('/changes', { task_id: t.task_id, title: 'C', base_line: 'main' })).change.change_id;
        const ps = (await post(`/changes/${c}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' })).patchset.patchset_id;
        const as = (who) => ({ headers: { [H]: who } });
        const marked = await ok(api(s.url, 'PUT', R(repo, `/changes/${c}/viewed`), { json: { patchset_id: ps, path: 'a.txt', viewed: true }, ...as('ann') }));
        expect(marked).to.include({ user: 'ann' });
        expect(marked.paths).to.deep.equal(['a.txt']);
        expectError(await api(s.url, 'PUT', R(repo, `/changes/${c}/viewed`), { json: { user: 'bob', patchset_id: ps, path: 'a.txt', viewed: true }, ...as('ann') }), 403, 'marking for another');
        expect((await ok(api(s.url, 'GET', R(repo, `/changes/${c}/viewed`), as('ann')))).paths).to.deep.equal(['a.txt']);
        expect((await ok(api(s.url, 'GET', R(repo, `/changes/${c}/viewed`), as('bob')))).paths).to.deep.equal([]);
        expectError(await api(s.url, 'GET', R(repo, `/changes/${c}/viewed?user=ann`), as('bob')), 403, "reading another's marks");
    });
});
//# sourceMappingURL=viewed.test.js.map