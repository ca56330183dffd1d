// POST {repo}/git/exports through a real server, checked with Debian's git binary: a history
// imported without its side history keeps its commit ids up to its merge (rewritten, with a trailer, and everything after
// it); a land exports as a commit built from the land, change and patchset records; a pushed
// snapshot with the cairn identity; the same ids when exported twice, after the shadow repository
// is deleted and after a restart; `git fsck --strict` clean; a server killed with SIGKILL in the
// middle of an export finishes it on the next sync; and the refusals.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { importGit } from '../lib/client/git-import.js';
import { NO_PROGRESS } from '../lib/client/progress.js';
import { push } from '../lib/client/transfer.js';
import { LandDesk } from '../lib/authority/workflow/lands.js';
import { gitObjectId } from '../lib/domain/git.js';
import { api, cli, cliJson, exportRepo, register, restoreRepo, spawnServer, startTestServer, tempDir, until } from './helpers.js';
import { commit, git, hasGit, makeHistory } from './git-fixture.js';
const R = (repo, p) => `/v1/native/repository-authorities/${repo}${p}`;
const PASS = () => ({ refusal: null, policy_decision_id: null });
function exportLine(url, repo, line) {
    return api(url, 'POST', R(repo, '/git/exports'), { json: { line } });
}
async function exported(url, repo, line) {
    const res = await exportLine(url, repo, line);
    expect(res.status, res.text).to.equal(200);
    return res.json;
}
const shadowOf = (data, repo) => path.join(data, 'git-shadow', `${repo}.git`);
const inShadow = (shadow, args) => execFileSync('git', ['--git-dir', shadow, ...args], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: shadow } }).toString('latin1');
/** The first-parent history of a branch of the shadow, oldest first. */
const shadowLog = (shadow, ref) => inShadow(shadow, ['log', '--first-parent', '--format=%H', ref]).trim().split('\n').reverse();
const fsckClean = (shadow) => inShadow(shadow, ['fsck', '--strict', '--no-dangling']);
async function lineHead(url, repo, line) {
    const res = await api(url, 'GET', R(repo, `/lines/${line}`));
    return res.json.line?.head_snapshot_id ?? res.json.head_snapshot_id ?? null;
}
(hasGit ? describe : describe.skip)('git export (POST {repo}/git/exports)', function () {
    this.timeout(180_000);
    let s;
    let src;
    let first;
    let repo;
    let shadow;
    /** The commit ids of main and feature as the first export wrote them. */
    const ids = {};
    before(async () => {
        s = await startTestServer(undefined, { gitRefresh: false });
        src = await makeHistory();
        first = git(src, ['rev-list', '--first-parent', '--reverse', 'main']).trim().split('\n');
        repo = await register(s.url, 'git-export');
        shadow = shadowOf(s.dataDir, repo);
        // Imported as imports before side histories were: the merge's side commit is not in the git
        // map, so the merge is rewritten (test/git-merges.test.ts: a merge with its side history).
        await importGit({ server: s.url, repo, source: src, line: 'main', progress: NO_PROGRESS, firstParentOnly: true });
    });
    after(() => s.stop());
    it('exports an imported history: its linear part keeps its commit ids; the merge and what follows are rewritten with a Cairn-Git-Commit trailer', async () => {
        const r = await exported(s.url, repo, 'main');
        expect(r).to.deep.include({ line: 'main', written: first.length, shadow_ref: 'refs/heads/main' });
        fsckClean(shadow);
        expect(inShadow(shadow, ['symbolic-ref', 'HEAD']).trim()).to.equal('refs/heads/main');
        const log = shadowLog(shadow, 'refs/heads/main');
        expect(log).to.have.length(first.length);
        expect(r.head_commit_id).to.equal(log[log.length - 1]);
        // Up to the merge, the commits are the source's, byte for byte.
        expect(log.slice(0, 4)).to.deep.equal(first.slice(0, 4));
        for (let i = 0; i < 4; i++)
            expect(inShadow(shadow, ['cat-file', 'commit', log[i]])).to.equal(git(src, ['cat-file', 'commit', first[i]]));
        // Every commit has its source commit's tree (gitlinks put back), the merge too.
        for (let i = 0; i < first.length; i++)
            expect(inShadow(shadow, ['rev-parse', `${log[i]}^{tree}`]).trim(), `tree ${i}`).to.equal(git(src, ['rev-parse', `${first[i]}^{tree}`]).trim());
        // The merge: its side commit is not a snapshot, so it is a one-parent commit naming the original.
        for (let i = 4; i < first.length; i++) {
            expect(log[i]).to.not.equal(first[i]);
            const body = inShadow(shadow, ['cat-file', 'commit', log[i]]);
            const orig = git(src, ['cat-file', 'commit', first[i]]);
            expect(body).to.include(`\nparent ${log[i - 1]}\n`);
            expect(body.match(/^parent /gm)).to.have.length(1);
            // Author, committer, encoding and message kept; the trailer added as the last paragraph.
            const headers = (t) => t.split('\n').filter((l) => /^(author|committer|encoding) /.test(l));
            expect(headers(body)).to.deep.equal(headers(orig));
            const message = orig.slice(orig.indexOf('\n\n') + 2);
            expect(body.slice(body.indexOf('\n\n') + 2)).to.equal(`${message}\nCairn-Git-Commit: ${first[i]}\n`);
        }
        // The git map: the merge's snapshot keeps its imported record, with the commit the export wrote.
        const snaps = (await cliJson(['log', '--server', s.url, '--repo', String(repo), '--line', 'main', '--limit', '100'])).snapshots.reverse();
        const merge = (await api(s.url, 'GET', R(repo, `/git/snapshots/${snaps[4].snapshot_id}`))).json.git_commit;
        expect(merge).to.include({ origin: 'imported', commit_id: first[4], export_commit_id: log[4] });
        expect((await api(s.url, 'GET', R(repo, `/git/commits/${log[4]}`))).json.git_commit.snapshot_id).to.equal(snaps[4].snapshot_id);
        expect((await api(s.url, 'GET', R(repo, `/git/snapshots/${snaps[0].snapshot_id}`))).json.git_commit.export_commit_id).to.equal(null);
        // Again: nothing to write, the same head.
        expect(await exported(s.url, repo, 'main')).to.deep.include({ head_commit_id: r.head_commit_id, written: 0 });
        // Another repository holding the same history exports the same commits, rewritten ones included.
        const twin = await register(s.url, 'git-export-twin');
        await importGit({ server: s.url, repo: twin, source: src, line: 'main', progress: NO_PROGRESS, firstParentOnly: true });
        // Two exports at once: one at a time, the second finds the commits written.
        const both = await Promise.all([exported(s.url, twin, 'main'), exported(s.url, twin, 'main')]);
        expect(both.map((x) => x.head_commit_id)).to.deep.equal([r.head_commit_id, r.head_commit_id]);
        expect(both.map((x) => x.written).sort()).to.deep.equal([0, first.length]);
        expect(shadowLog(shadowOf(s.dataDir, twin), 'refs/heads/main')).to.deep.equal(log);
    });
    it('a land exports as a commit built from the land, change and patchset records, with Cairn-Change and Cairn-Land trailers', async () => {
        const a = await (await s.ready).opened(repo);
        a.lands = new LandDesk(a.store, a.workflow, PASS);
        const base = (await lineHead(s.url, repo, 'main'));
        const dir = path.join(tempDir('cairn-gexp-'), 'tree');
        await cliJson(['pull', '--server', s.url, '--repo', String(repo), '--snapshot', base, dir]);
        await fsp.writeFile(path.join(dir, 'README.md'), '# landed\n');
        const rev = (await push({ server: s.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base, message: 'wip' })).snapshot_id;
        const ok = async (p) => {
            const res = await p;
            expect(res.status, res.text).to.be.oneOf([200, 201]);
            return res.json;
        };
        const t = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } }))).task;
        const c = (await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: t.task_id, title: 'Land the readme', base_line: 'main' } }))).change;
        const ps = (await ok(api(s.url, 'POST', R(repo, `/changes/${c.change_id}/patchsets`), { json: { base_snapshot_id: base, revision_snapshot_id: rev, summary: 'A new heading.\n\nSecond paragraph.', author_mode: 'human_only', author: 'Grace Hopper' } }))).patchset;
        const land = (await ok(api(s.url, 'POST', R(repo, `/changes/${c.change_id}:submit`), { json: { mode: 'ff-only' } }))).land;
        expect(land).to.include({ status: 'landed', landed_snapshot_id: rev });
        const before = shadowLog(shadow, 'refs/heads/main');
        const r = await exported(s.url, repo, 'main');
        expect(r.written).to.equal(1);
        fsckClean(shadow);
        const tree = inShadow(shadow, ['rev-parse', `${r.head_commit_id}^{tree}`]).trim();
        const t0 = land.finished_at_s;
        const expectedBody = `tree ${tree}\nparent ${before[before.length - 1]}\n`
            + `author Grace Hopper <Grace-Hopper@cairn.invalid> ${t0} +0000\ncommitter cairn <cairn@cairn.invalid> ${t0} +0000\n\n`
            + `Land the readme\n\nA new heading.\n\nSecond paragraph.\n\nCairn-Change: ${c.change_ref}\nCairn-Land: ${land.land_id}\n`;
        expect(inShadow(shadow, ['cat-file', 'commit', r.head_commit_id])).to.equal(expectedBody);
        // Its id is the hash of those bytes alone: nothing else (clock, config) went in.
        expect(r.head_commit_id).to.equal(gitObjectId('commit', Buffer.from(expectedBody), 'sha1'));
        expect(inShadow(shadow, ['show', `${r.head_commit_id}:README.md`])).to.equal('# landed\n');
        expect(ps.author).to.equal('Grace Hopper');
        const rec = (await api(s.url, 'GET', R(repo, `/git/snapshots/${rev}`))).json.git_commit;
        expect(rec).to.include({ origin: 'exported', commit_id: r.head_commit_id, export_commit_id: null });
        ids.main = shadowLog(shadow, 'refs/heads/main');
    });
    it('a merge land exports as a one-parent commit with a Cairn-Merge-Revision trailer naming the revision', async () => {
        const base = (await lineHead(s.url, repo, 'main'));
        const revOf = async (file) => {
            const dir = path.join(tempDir('cairn-gexp-'), 'tree');
            await cliJson(['pull', '--server', s.url, '--repo', String(repo), '--snapshot', base, dir]);
            await fsp.writeFile(path.join(dir, file), `${file}\n`);
            return (await push({ server: s.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base, message: file })).snapshot_id;
        };
        const landed = async (rev, mode, title) => {
            const t = (await api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } })).json.task;
            const c = (await api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: t.task_id, title, base_line: 'main' } })).json.change;
            const ps = await api(s.url, 'POST', R(repo, `/changes/${c.change_id}/patchsets`), { json: { base_snapshot_id: base, revision_snapshot_id: rev, summary: `${title}.`, author_mode: 'human_only' } });
            expect(ps.status, ps.text).to.be.oneOf([200, 201]);
            const res = await api(s.url, 'POST', R(repo, `/changes/${c.change_id}:submit`), { json: { mode } });
            expect(res.status, res.text).to.equal(200);
            return { land: res.json.land, change: c };
        };
        const revA = await revOf('a.txt');
        const revB = await revOf('b.txt');
        const a = await landed(revA, 'ff-only', 'Add a');
        const b = await landed(revB, 'merge', 'Add b');
        expect(b.land).to.include({ status: 'landed', line_action: 'merge' });
        const r = await exported(s.url, repo, 'main');
        expect(r.written).to.equal(2);
        fsckClean(shadow);
        const log = shadowLog(shadow, 'refs/heads/main');
        expect(log.slice(0, -2)).to.deep.equal(ids.main);
        const body = inShadow(shadow, ['cat-file', 'commit', r.head_commit_id]);
        expect(body.match(/^parent /gm)).to.have.length(1);
        expect(body).to.include(`\nparent ${log[log.length - 2]}\n`);
        // No author on the patchset: the cairn identity.
        expect(body).to.include(`\nauthor cairn <cairn@cairn.invalid> ${b.land.finished_at_s} +0000\n`);
        expect(body.slice(body.indexOf('\n\n') + 2)).to.equal(`Add b\n\nAdd b.\n\nCairn-Change: ${b.change.change_ref}\nCairn-Land: ${b.land.land_id}\nCairn-Merge-Revision: ${revB}\n`);
        expect(inShadow(shadow, ['cat-file', 'commit', log[log.length - 2]])).to.include(`Cairn-Land: ${a.land.land_id}\n`);
        // The merge's tree holds both sides.
        expect(inShadow(shadow, ['show', `${r.head_commit_id}:a.txt`])).to.equal('a.txt\n');
        expect(inShadow(shadow, ['show', `${r.head_commit_id}:b.txt`])).to.equal('b.txt\n');
        ids.main = log;
    });
    it('a pushed snapshot on another line exports with the cairn identity at its time and a Cairn-Snapshot trailer; HEAD stays main', async () => {
        const base = (await lineHead(s.url, repo, 'main'));
        const dir = path.join(tempDir('cairn-gexp-'), 'tree');
        await cliJson(['pull', '--server', s.url, '--repo', String(repo), '--snapshot', base, dir]);
        await fsp.writeFile(path.join(dir, 'feature.txt'), 'feature\n');
        await api(s.url, 'PUT', R(repo, `/lines/${encodeURIComponent('feature/x')}`), { json: { head_snapshot_id: base } });
        const pushed = await push({ server: s.url, repo, line: 'feature/x', dir, moveLine: true, progress: false, message: 'feature work' });
        const snap = (await api(s.url, 'GET', R(repo, `/snapshots/${pushed.snapshot_id}?include_content=false`))).json;
        const created = snap.snapshot?.created_at_s ?? snap.created_at_s;
        expect(created).to.be.a('number');
        const r = await exported(s.url, repo, 'feature/x');
        expect(r).to.deep.include({ line: 'feature/x', written: 1, shadow_ref: 'refs/heads/feature/x' });
        fsckClean(shadow);
        const body = inShadow(shadow, ['cat-file', 'commit', r.head_commit_id]);
        expect(body).to.equal(`tree ${inShadow(shadow, ['rev-parse', `${r.head_commit_id}^{tree}`]).trim()}\nparent ${ids.main[ids.main.length - 1]}\n`
            + `author cairn <cairn@cairn.invalid> ${created} +0000\ncommitter cairn <cairn@cairn.invalid> ${created} +0000\n\nfeature work\n\nCairn-Snapshot: ${pushed.snapshot_id}\n`);
        expect(inShadow(shadow, ['symbolic-ref', 'HEAD']).trim()).to.equal('refs/heads/main');
        ids.feature = shadowLog(shadow, 'refs/heads/feature/x');
    });
    it('gives the same commit ids after the shadow repository is deleted, and after a restart; cairn fsck checks the map', async () => {
        await fsp.rm(shadow, { recursive: true, force: true });
        const main = await exported(s.url, repo, 'main');
        expect(main.written).to.equal(ids.main.length);
        expect(shadowLog(shadow, 'refs/heads/main')).to.deep.equal(ids.main);
        expect(inShadow(shadow, ['for-each-ref', '--format=%(refname)']).trim(), 'feature is not exported yet').to.equal('refs/heads/main');
        fsckClean(shadow);
        await s.stop();
        const check = await cli(['fsck', '--data', s.dataDir]);
        expect(check.code, check.stdout + check.stderr).to.equal(0);
        await fsp.rm(shadow, { recursive: true, force: true });
        s = await startTestServer(s.dataDir, { gitRefresh: false });
        expect((await exported(s.url, repo, 'feature/x')).head_commit_id).to.equal(ids.feature[ids.feature.length - 1]);
        expect(shadowLog(shadow, 'refs/heads/feature/x')).to.deep.equal(ids.feature);
        expect(await exported(s.url, repo, 'main')).to.deep.include({ head_commit_id: ids.main[ids.main.length - 1], written: 0 });
        fsckClean(shadow);
    });
    it('is not part of a retirement export; a restored repository exports the same ids into its own shadow; purge removes the shadow, and a leftover one goes at the next start', async () => {
        const old = await register(s.url, 'git-export-moving');
        await importGit({ server: s.url, repo: old, source: src, line: 'main', progress: NO_PROGRESS, firstParentOnly: true });
        const before = await exported(s.url, old, 'main');
        const { manifest, files } = await exportRepo(s.url, old);
        expect([...files.keys()].filter((f) => /git-shadow|\.git\//.test(f))).to.deep.equal([]);
        const restored = await restoreRepo(s.url, manifest, files);
        expect(restored).to.not.equal(old);
        const again = await exported(s.url, restored, 'main');
        expect(again).to.deep.include({ head_commit_id: before.head_commit_id, written: first.length });
        // The rewritten commits were recorded by the first export: the restored map names them.
        expect(shadowLog(shadowOf(s.dataDir, restored), 'refs/heads/main')).to.deep.equal(shadowLog(shadowOf(s.dataDir, old), 'refs/heads/main'));
        const purge = await api(s.url, 'POST', `/v1/native/repository-authorities/${old}/retirement/purge`, { json: manifest });
        expect(purge.status, purge.text).to.equal(200);
        expect(await fsp.stat(shadowOf(s.dataDir, old)).then(() => true, () => false), 'shadow after purge').to.equal(false);
        // A shadow left for a purged index (a purge interrupted after its commit point) and one for an index never registered.
        await fsp.mkdir(path.join(shadowOf(s.dataDir, old), 'objects'), { recursive: true });
        await fsp.mkdir(path.join(shadowOf(s.dataDir, 77), 'objects'), { recursive: true });
        await s.stop();
        s = await startTestServer(s.dataDir, { gitRefresh: false });
        const left = await fsp.readdir(path.join(s.dataDir, 'git-shadow'));
        expect(left).to.include.members([`${repo}.git`, `${restored}.git`]);
        expect(left).to.not.include.members([`${old}.git`]);
        expect(left).to.not.include.members(['77.git']);
    });
    it('refuses an unknown line (404), a bad body (400/422), an archived line (409) and a line name git cannot hold (400); an empty line has no commit', async () => {
        expect((await exportLine(s.url, repo, 'nope')).status).to.equal(404);
        expect((await api(s.url, 'POST', R(repo, '/git/exports'), { json: {} })).status).to.equal(422);
        expect((await api(s.url, 'POST', R(repo, '/git/exports'), { json: { line: 5 } })).status).to.equal(422);
        expect((await api(s.url, 'POST', R(repo, '/git/exports'), { json: { line: 'main', extra: 1 } })).status).to.equal(422);
        expect((await api(s.url, 'POST', R(repo, '/git/exports'), { body: '{', headers: { 'content-type': 'application/json' } })).status).to.equal(400);
        expect((await api(s.url, 'POST', R(999, '/git/exports'), { json: { line: 'main' } })).status).to.equal(404);
        const head = (await lineHead(s.url, repo, 'main'));
        expect((await api(s.url, 'PUT', R(repo, `/lines/${encodeURIComponent('bad..name')}`), { json: { head_snapshot_id: head } })).status).to.be.oneOf([200, 201]);
        const bad = await exportLine(s.url, repo, 'bad..name');
        expect(bad.status, bad.text).to.equal(400);
        expect(bad.json.error).to.match(/git branch name/);
        expect((await api(s.url, 'PUT', R(repo, '/lines/old'), { json: { head_snapshot_id: head } })).status).to.be.oneOf([200, 201]);
        expect((await api(s.url, 'POST', R(repo, '/lines/old:close'), { json: { status: 'archived' } })).status).to.equal(200);
        const archived = await exportLine(s.url, repo, 'old');
        expect(archived.status, archived.text).to.equal(409);
        expect(archived.json.error).to.match(/archived/);
        expect((await api(s.url, 'PUT', R(repo, '/lines/empty'), { json: { head_snapshot_id: null } })).status).to.be.oneOf([200, 201]);
        expect(await exported(s.url, repo, 'empty')).to.deep.equal({ line: 'empty', head_commit_id: null, written: 0, shadow_ref: 'refs/heads/empty' });
        expect(inShadow(shadow, ['for-each-ref', '--format=%(refname)']).trim().split('\n').sort()).to.deep.equal(['refs/heads/feature/x', 'refs/heads/main']);
    });
});
(hasGit ? describe : describe.skip)('git export: a server killed with SIGKILL in the middle of an export', function () {
    this.timeout(180_000);
    it('leaves no pack half-written and the branch at its last finished pack; after a restart the next export completes with the source\'s ids and git fsck is clean', async () => {
        const dir = path.join(tempDir('cairn-gexp-linear-'), 'src');
        await fsp.mkdir(dir, { recursive: true });
        git(dir, ['init', '-q', '-b', 'main']);
        for (let i = 0; i < 23; i++) {
            await fsp.writeFile(path.join(dir, `f${i % 5}.txt`), `${i}\n`);
            git(dir, ['add', '-A']);
            commit(dir, `commit ${i}\n`, i % 2 ? '+0200' : '-0330');
        }
        const source = git(dir, ['rev-list', '--reverse', 'main']).trim().split('\n');
        const data = path.join(tempDir('cairn-gexp-kill-'), 'data');
        // Batches of 5 commits, a pack finished after each batch of at least 10 objects: die
        // finishing the second pack, once its file and index are written and before they are
        // renamed into objects/pack/.
        let child = await spawnServer(data, [], true, { CAIRN_TEST_CRASH_AT: 'git-export:recorded>git-export:pack>git-export:pack', CAIRN_GIT_EXPORT_BATCH: '5', CAIRN_GIT_EXPORT_PACK_OBJECTS: '10' });
        try {
            const repo = await register(child.url, 'kill');
            await cliJson(['import-git', '--server', child.url, '--repo', String(repo), '--line', 'main', dir]);
            const shadow = shadowOf(data, repo);
            const dying = await api(child.url, 'POST', R(repo, '/git/exports'), { json: { line: 'main' } }).catch((err) => err);
            expect(dying, 'the export answered: the server did not die').to.be.instanceOf(Error);
            await child.exited;
            // It died with a pack and its index written in cairn-tmp/ and not renamed into place; the
            // branch names the last commit of the first pack, whose history the shadow holds whole.
            expect((await fsp.readdir(path.join(shadow, 'cairn-tmp'))).map((f) => path.extname(f)).sort()).to.deep.equal(['.idx', '.pack']);
            expect((await fsp.readdir(path.join(shadow, 'objects', 'pack'))).filter((f) => f.endsWith('.pack'))).to.have.length(1);
            const partial = shadowLog(shadow, 'refs/heads/main');
            expect(partial.length).to.be.within(1, source.length - 1);
            expect(partial).to.deep.equal(source.slice(0, partial.length));
            fsckClean(shadow);
            child = await spawnServer(data);
            const r = (await api(child.url, 'POST', R(repo, '/git/exports'), { json: { line: 'main' } }));
            expect(r.status, r.text).to.equal(200);
            expect(r.json.head_commit_id).to.equal(source[source.length - 1]);
            expect(shadowLog(shadow, 'refs/heads/main')).to.deep.equal(source);
            fsckClean(shadow);
            expect(await fsp.readdir(path.join(shadow, 'cairn-tmp'))).to.deep.equal([]);
            child.proc.kill('SIGTERM');
            await until('the server stopped', () => child.proc.exitCode !== null || child.proc.signalCode !== null);
            await child.exited;
            const check = await cli(['fsck', '--data', data]);
            expect(check.code, check.stdout + check.stderr).to.equal(0);
        }
        finally {
            if (child.proc.exitCode === null && child.proc.signalCode === null)
                child.proc.kill('SIGKILL');
        }
    });
});
//# sourceMappingURL=git-export.test.js.map