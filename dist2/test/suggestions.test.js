// Suggested edits over real HTTP (docs/api.md "Comment threads", `:applySuggestions`): a thread's
// first comment carries replacement text for its revision-side lines; the change's author
// applies one or several as a new patchset built by the server (read back by pulling its
// revision), which records whose suggestion each was and resolves the applied threads, in one
// commit; every refusal changes nothing; the store stays clean for fsck.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { pull, push } from '../lib/client/transfer.js';
import { api, cli, expectError, exportRepo, ok, register, restoreRepo, spawnServer, startTestServer, tempDir } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const lines = (n, edit = {}) => Array.from({ length: n }, (_, i) => edit[i + 1] ?? `line ${i + 1}`).join('\n') + '\n';
const NEAR = 1024 * 1024 - 1000;
describe('suggested edits: applied by the change\'s author as a new patchset', function () {
    this.timeout(120_000);
    const dataDir = path.join(tempDir(), 'data');
    let s;
    let repo;
    let change;
    let closed;
    let ps1;
    const files = {
        'src/app.ts': lines(20),
        'docs/readme.md': 'intro\nsecond\nthird',
        'near.txt': 'short\n' + 'x'.repeat(NEAR - 7) + '\n',
        'same/deep/er/keep.txt': 'untouched\n',
        'bin/tool.sh': '#!/bin/sh\necho old\n',
    };
    const dir = path.join(tempDir(), 'tree');
    const post = (p, json) => api(s.url, 'POST', R(repo, p), { json });
    const comment = async (json) => ok(post(`/changes/${change}/comments`, json));
    const apply = (json, on = change) => post(`/changes/${on}/patchsets:applySuggestions`, json);
    const events = async () => (await ok(api(s.url, 'GET', R(repo, '/events?limit=1000')))).events;
    const patchsets = async () => (await ok(api(s.url, 'GET', R(repo, `/changes/${change}/patchsets`)))).patchsets;
    const state = async () => ({ events: (await events()).length, patchsets: await patchsets(), threads: (await ok(api(s.url, 'GET', R(repo, `/changes/${change}/threads`)))).threads });
    /** The files of a snapshot, pulled into a fresh directory. */
    let lastPulled = '';
    const read = async (snapshot) => {
        const out = path.join(tempDir(), 'pulled');
        await pull({ server: s.url, repo, snapshot, out, progress: false });
        lastPulled = out;
        const got = {};
        for (const p of Object.keys(files))
            got[p] = await fsp.readFile(path.join(out, p), 'utf8');
        return got;
    };
    before(async () => {
        s = await startTestServer(dataDir);
        repo = await register(s.url, 'suggestions');
        const snap = async (tree, parent) => {
            await fsp.rm(dir, { recursive: true, force: true });
            for (const [p, v] of Object.entries(tree)) {
                await fsp.mkdir(path.dirname(path.join(dir, p)), { recursive: true });
                await fsp.writeFile(path.join(dir, p), v);
            }
            await fsp.chmod(path.join(dir, 'bin/tool.sh'), 0o755);
            // Not UTF-8: a binary file, whose lines take no comment (nor suggestion).
            await fsp.writeFile(path.join(dir, 'img.bin'), Buffer.from([0xff, 0xfe, 0x00, 0x0a]));
            return (await push({ server: s.url, repo, line: 'main', dir, moveLine: parent === undefined, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
        };
        const base = await snap({ ...files, 'src/app.ts': lines(19) });
        const rev = await snap(files, base);
        const t = (await ok(post('/tasks', { title: 'T', intent: 'i' }))).task;
        change = (await ok(post('/changes', { task_id: t.task_id, title: 'C', base_line: 'main' }))).change.change_id;
        // A caller cannot write the attribution itself through POST …/patchsets.
        const p1 = (await ok(post(`/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only', author: 'ann', applied_suggestions: [{ comment_id: 'x', author: 'y' }] }))).patchset;
        expect(p1).to.not.have.property('applied_suggestions');
        ps1 = p1.patchset_id;
        closed = (await ok(post('/changes', { task_id: t.task_id, title: 'closed', base_line: 'main' }))).change.change_id;
        await ok(post(`/changes/${closed}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only', author: 'ann' }));
        await ok(post(`/changes/${closed}:close`, { status: 'abandoned' }));
    });
    let stopped = false;
    after(async () => { if (!stopped)
        await s.stop(); });
    it('a suggestion rides on a thread\'s first comment on revision-side lines, bounded, and is listed', async () => {
        const c = await comment({ patchset_id: ps1, author: 'bob', body: 'shout it', anchor: { path: 'src/app.ts', line: 3 }, suggestion: 'LINE THREE\n' });
        expect(c.comment).to.include({ suggestion: 'LINE THREE\n' });
        const listed = (await ok(api(s.url, 'GET', R(repo, `/changes/${change}/threads`)))).threads;
        expect(listed[0].comments[0].suggestion).to.equal('LINE THREE\n');
        const before = await state();
        for (const [what, json] of [
            ['base side', { patchset_id: ps1, author: 'bob', body: 'b', anchor: { path: 'src/app.ts', side: 'base', line: 3 }, suggestion: 'x' }],
            ['a file anchor', { patchset_id: ps1, author: 'bob', body: 'b', anchor: { path: 'src/app.ts' }, suggestion: 'x' }],
            ['the patchset', { patchset_id: ps1, author: 'bob', body: 'b', suggestion: 'x' }],
            ['a reply', { author: 'bob', body: 'b', in_reply_to: c.thread_id, suggestion: 'x' }],
            ['over 64 Ki characters', { patchset_id: ps1, author: 'bob', body: 'b', anchor: { path: 'src/app.ts', line: 4 }, suggestion: 'x'.repeat(64 * 1024 + 1) }],
            ['a NUL', { patchset_id: ps1, author: 'bob', body: 'b', anchor: { path: 'src/app.ts', line: 4 }, suggestion: 'a\u0000b' }],
            ['lines of a binary file', { patchset_id: ps1, author: 'bob', body: 'b', anchor: { path: 'img.bin', line: 1 }, suggestion: 'x' }],
        ])
            expectError(await post(`/changes/${change}/comments`, json), 400, what);
        expectError(await post(`/changes/${change}/comments`, { patchset_id: ps1, author: 'bob', body: 'b', anchor: { path: 'src/app.ts', line: 4 }, suggestion: 5 }), 422, 'a suggestion that is not a string');
        expect(await state()).to.deep.equal(before);
    });
    it('refuses: not the author 403, not a published suggestion 400, overlap 409, closed 400, bad shapes 422 — changing nothing', async () => {
        const bob3 = `${change}.comment-1`;
        const plain = (await comment({ patchset_id: ps1, author: 'carol', body: 'no suggestion here', anchor: { path: 'src/app.ts', line: 8 } })).comment.comment_id;
        const draft = (await comment({ patchset_id: ps1, author: 'carol', body: 'draft', anchor: { path: 'src/app.ts', line: 9 }, suggestion: 'nine\n', draft: true })).comment.comment_id;
        const overlap = (await comment({ patchset_id: ps1, author: 'dave', body: 'both', anchor: { path: 'src/app.ts', line: 2, end_line: 3 }, suggestion: 'two and three\n' })).comment.comment_id;
        const before = await state();
        const cases = [
            ['someone who is not the change\'s author', { author: 'bob', comment_ids: [bob3] }, 403, /only the change's author \(ann/],
            ['a comment without a suggestion', { author: 'ann', comment_ids: [plain] }, 400, new RegExp(`comment ${plain} carries no suggestion`)],
            ['a draft suggestion', { author: 'ann', comment_ids: [draft] }, 400, new RegExp(`comment ${draft} is not a published comment`)],
            ['an unknown comment', { author: 'ann', comment_ids: [`${change}.comment-99`] }, 400, /comment-99 is not a published comment/],
            ['another change\'s comment', { author: 'ann', comment_ids: ['change-77.comment-1'] }, 400],
            ['a malformed id', { author: 'ann', comment_ids: ['bogus'] }, 400],
            ['no comment', { author: 'ann', comment_ids: [] }, 400],
            ['a comment twice', { author: 'ann', comment_ids: [bob3, bob3] }, 400, /twice/],
            ['overlapping ranges in one file', { author: 'ann', comment_ids: [bob3, overlap] }, 409, new RegExp(`${overlap}.* overlap in src/app.ts`)],
            ['a blank author', { author: ' ', comment_ids: [bob3] }, 400],
            ['a change that is closed', { author: 'ann', comment_ids: [bob3] }, 400, undefined, closed],
            ['an unknown change', { author: 'ann', comment_ids: [bob3] }, 404, undefined, 'change-99'],
            ['an unknown field', { author: 'ann', comment_ids: [bob3], patchset_id: ps1 }, 422],
            ['comment_ids not a list', { author: 'ann', comment_ids: bob3 }, 422],
            ['comment_ids not strings', { author: 'ann', comment_ids: [1] }, 422],
            ['no author', { comment_ids: [bob3] }, 422],
        ];
        for (const [what, json, status, match, on] of cases) {
            const res = await apply(json, on);
            expectError(res, status, what);
            if (match)
                expect(res.json.error, what).to.match(match);
        }
        expect(await state(), 'a refusal changed something').to.deep.equal(before);
    });
    it('applies one suggestion: a new patchset whose revision is the replaced text, attributed, its thread resolved, in one commit', async () => {
        const bob3 = `${change}.comment-1`;
        const n0 = (await events()).length;
        const res = await ok(apply({ author: 'ann', comment_ids: [bob3], summary: 'take bob\'s line 3' }));
        const ps2 = res.patchset;
        expect(ps2).to.include({ patchset_number: 2, author: 'ann', summary: 'take bob\'s line 3', author_mode: 'human_only' });
        expect(ps2.applied_suggestions).to.deep.equal([{ comment_id: bob3, author: 'bob' }]);
        expect(res.applied).to.deep.equal([{ comment_id: bob3, author: 'bob', thread_id: bob3, path: 'src/app.ts', line: 3, end_line: null, resolved_by: `${change}.comment-5` }]);
        // Read back: exactly line 3 replaced; every other file the same bytes.
        const got = await read(ps2.revision_snapshot_id);
        expect(got).to.deep.equal({ ...files, 'src/app.ts': lines(20, { 3: 'LINE THREE' }) });
        expect(ps2.changed_file_stats).to.include({ files_changed: 1 });
        // The record as stored (GET) carries the attribution too.
        expect((await ok(api(s.url, 'GET', R(repo, `/patchsets/${ps2.patchset_id}`)))).patchset.applied_suggestions).to.deep.equal([{ comment_id: bob3, author: 'bob' }]);
        const change2 = (await ok(api(s.url, 'GET', R(repo, `/changes/${change}`)))).change;
        expect(change2).to.include({ current_patchset_id: ps2.patchset_id, patchset_count: 2, selected_patchset_id: ps1 });
        const thread = (await ok(api(s.url, 'GET', R(repo, `/changes/${change}/threads`)))).threads.find((t) => t.thread_id === bob3);
        expect(thread.resolution).to.equal('resolved');
        expect(thread.comments[thread.comments.length - 1]).to.include({ author: 'ann', body: `Applied in ${ps2.patchset_id}.`, resolution: 'resolved', patchset_id: ps2.patchset_id });
        const ev = (await events()).slice(n0);
        expect(ev.map((e) => e.type)).to.include.members(['patchset.created', 'comment.created', 'thread.resolved']);
        expect(ev.find((e) => e.type === 'patchset.created').data).to.include({ patchset_id: ps2.patchset_id, change_id: change });
        expect(new Set(ev.map((e) => e.at_us)).size, 'one commit').to.equal(1);
        // The other suggestions were written on patchset 1: stale now.
        const dave = `${change}.comment-4`;
        const stale = await apply({ author: 'ann', comment_ids: [dave] });
        expectError(stale, 400, 'a suggestion on an older patchset');
        expect(stale.json.error).to.match(new RegExp(`comment ${dave} suggests an edit of ${ps1}, not of the current patchset ${ps2.patchset_id}`));
    });
    it('applies several across files at once (one file without a final newline keeps it so; an executable stays one)', async () => {
        const ps2 = (await ok(api(s.url, 'GET', R(repo, `/changes/${change}`)))).change.current_patchset_id;
        const a = (await comment({ patchset_id: ps2, author: 'carol', body: 'fold these', anchor: { path: 'src/app.ts', line: 10, end_line: 12 }, suggestion: 'ten to twelve\n' })).comment.comment_id;
        const b = (await comment({ patchset_id: ps2, author: 'dave', body: 'drop', anchor: { path: 'src/app.ts', line: 20 }, suggestion: '' })).comment.comment_id;
        const c = (await comment({ patchset_id: ps2, author: 'bob', body: 'wording', anchor: { path: 'docs/readme.md', line: 3 }, suggestion: 'THIRD\nFOURTH' })).comment.comment_id;
        const d = (await comment({ patchset_id: ps2, author: 'erin', body: 'louder', anchor: { path: 'bin/tool.sh', line: 2 }, suggestion: 'echo new\n' })).comment.comment_id;
        // Already resolved before it is applied: no second resolving reply.
        await ok(post(`/changes/${change}/threads/${c}:resolve`, { author: 'bob' }));
        const res = await ok(apply({ author: 'ann', comment_ids: [c, a, b, d] }));
        expect(res.patchset.applied_suggestions).to.deep.equal([{ comment_id: c, author: 'bob' }, { comment_id: a, author: 'carol' }, { comment_id: b, author: 'dave' }, { comment_id: d, author: 'erin' }]);
        expect(res.patchset.summary).to.equal(`Apply suggestions ${c}, ${a}, ${b}, ${d}`);
        expect(res.applied.map((x) => [x.comment_id, x.resolved_by === null])).to.deep.equal([[c, true], [a, false], [b, false], [d, false]]);
        const got = await read(res.patchset.revision_snapshot_id);
        const app = lines(20, { 3: 'LINE THREE' }).split('\n').slice(0, 19);
        app.splice(9, 3, 'ten to twelve');
        expect(got['src/app.ts']).to.equal(app.join('\n') + '\n');
        expect(got['docs/readme.md']).to.equal('intro\nsecond\nTHIRD\nFOURTH');
        expect(got['same/deep/er/keep.txt']).to.equal('untouched\n');
        expect(got['bin/tool.sh']).to.equal('#!/bin/sh\necho new\n');
        expect((await fsp.stat(path.join(lastPulled, 'bin/tool.sh'))).mode & 0o111, 'still executable').to.not.equal(0);
        const threads = (await ok(api(s.url, 'GET', R(repo, `/changes/${change}/threads?resolved=false`)))).threads.map((t) => t.thread_id);
        for (const id of [a, b, c, d])
            expect(threads).to.not.include(id);
    });
    it('refuses a result larger than the diff shows by line, and suggestions that change nothing', async () => {
        const ps3 = (await ok(api(s.url, 'GET', R(repo, `/changes/${change}`)))).change.current_patchset_id;
        const big = (await comment({ patchset_id: ps3, author: 'bob', body: 'longer', anchor: { path: 'near.txt', line: 1 }, suggestion: 'y'.repeat(2000) })).comment.comment_id;
        const same = (await comment({ patchset_id: ps3, author: 'bob', body: 'same', anchor: { path: 'src/app.ts', line: 1 }, suggestion: 'line 1\n' })).comment.comment_id;
        const before = await state();
        const large = await apply({ author: 'ann', comment_ids: [big] });
        expectError(large, 400, 'a file over 1 MiB');
        expect(large.json.error).to.match(/near\.txt would be \d+ bytes/);
        const noop = await apply({ author: 'ann', comment_ids: [same] });
        expectError(noop, 400, 'no change');
        expect(noop.json.error).to.match(/change nothing/);
        expect(await state()).to.deep.equal(before);
    });
    it('keeps the new patchsets and their snapshots across a restart and an export → restore; fsck reports the store clean', async () => {
        const want = await state();
        await s.stop();
        s = await startTestServer(dataDir);
        expect(await state()).to.deep.equal(want);
        const last = want.patchsets[want.patchsets.length - 1];
        expect((await read(last.revision_snapshot_id))['docs/readme.md']).to.equal('intro\nsecond\nTHIRD\nFOURTH');
        // Export → restore carries the server-built packs and snapshot with the records.
        const { manifest, files: exported } = await exportRepo(s.url, repo);
        const restored = await restoreRepo(s.url, manifest, exported);
        const again = (await ok(api(s.url, 'GET', R(restored, `/patchsets/${last.patchset_id}`)))).patchset;
        expect(again.applied_suggestions).to.deep.equal(last.applied_suggestions);
        const out = path.join(tempDir(), 'restored');
        await pull({ server: s.url, repo: restored, snapshot: again.revision_snapshot_id, out, progress: false });
        expect(await fsp.readFile(path.join(out, 'bin/tool.sh'), 'utf8')).to.equal('#!/bin/sh\necho new\n');
        await s.stop();
        stopped = true;
        const check = await cli(['fsck', '--data', dataDir]);
        expect(check.code, check.stdout + check.stderr).to.equal(0);
        expect(JSON.parse(check.stdout.trim().split('\n').at(-1)).ok).to.equal(true);
    });
});
describe('suggested edits: kill -9 inside the commit of :applySuggestions', function () {
    this.timeout(120_000);
    for (const point of ['commit:after-adopt', 'commit:after-log', 'commit:after-state']) {
        it(`killed at ${point}: the store reopens with nothing of it or all of it (patchset, attribution, resolved thread, snapshot)`, async () => {
            const data = path.join(tempDir(), 'data');
            const first = await spawnServer(data);
            const post = (url, p, json) => api(url, 'POST', R(repo, p), { json });
            const repo = await register(first.url, 'crash');
            const dir = path.join(tempDir(), 'tree');
            const snap = async (text, parent) => {
                await fsp.rm(dir, { recursive: true, force: true });
                await fsp.mkdir(dir, { recursive: true });
                await fsp.writeFile(path.join(dir, 'a.txt'), text);
                return (await push({ server: first.url, repo, line: 'main', dir, moveLine: parent === undefined, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
            };
            const base = await snap(lines(5));
            const rev = await snap(lines(5, { 2: 'two' }), base);
            const t = (await ok(post(first.url, '/tasks', { title: 'T', intent: 'i' }))).task;
            const change = (await ok(post(first.url, '/changes', { task_id: t.task_id, title: 'C', base_line: 'main' }))).change.change_id;
            const ps = (await ok(post(first.url, `/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only', author: 'ann' }))).patchset.patchset_id;
            const c = (await ok(post(first.url, `/changes/${change}/comments`, { patchset_id: ps, author: 'bob', body: 'b', anchor: { path: 'a.txt', line: 2 }, suggestion: 'TWO\n' }))).comment.comment_id;
            first.proc.kill('SIGTERM');
            await first.exited;
            const doomed = await spawnServer(data, [], true, { CAIRN_TEST_CRASH_AT: point });
            const res = await api(doomed.url, 'POST', R(repo, `/changes/${change}/patchsets:applySuggestions`), { json: { author: 'ann', comment_ids: [c] } }).catch(() => null);
            expect(res).to.equal(null);
            expect(await doomed.exited).to.equal(null);
            const restarted = await spawnServer(data);
            try {
                const pss = (await ok(api(restarted.url, 'GET', R(repo, `/changes/${change}/patchsets`)))).patchsets;
                const thread = (await ok(api(restarted.url, 'GET', R(repo, `/changes/${change}/threads`)))).threads[0];
                const current = (await ok(api(restarted.url, 'GET', R(repo, `/changes/${change}`)))).change.current_patchset_id;
                if (point === 'commit:after-state') {
                    expect(pss).to.have.length(2);
                    expect(pss[1].applied_suggestions).to.deep.equal([{ comment_id: c, author: 'bob' }]);
                    expect(current).to.equal(pss[1].patchset_id);
                    expect(thread.resolution).to.equal('resolved');
                    const out = path.join(tempDir(), 'pulled');
                    await pull({ server: restarted.url, repo, snapshot: pss[1].revision_snapshot_id, out, progress: false });
                    expect(await fsp.readFile(path.join(out, 'a.txt'), 'utf8')).to.equal(lines(5, { 2: 'TWO' }));
                }
                else {
                    expect(pss).to.have.length(1);
                    expect(current).to.equal(ps);
                    expect(thread).to.include({ resolution: 'unresolved' });
                    expect(thread.comments).to.have.length(1);
                    // And it applies cleanly after the restart.
                    expect((await ok(api(restarted.url, 'POST', R(repo, `/changes/${change}/patchsets:applySuggestions`), { json: { author: 'ann', comment_ids: [c] } }))).patchset.patchset_number).to.equal(2);
                }
            }
            finally {
                restarted.proc.kill('SIGTERM');
                await restarted.exited;
            }
            const check = await cli(['fsck', '--data', data]);
            expect(check.code, check.stdout + check.stderr).to.equal(0);
        });
    }
});
//# sourceMappingURL=suggestions.test.js.map