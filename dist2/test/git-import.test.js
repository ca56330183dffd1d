// `cairn import-git` and the git import routes through a real server and Debian's git binary: a
// history with executables, symlinks, a rename, a file turned into a directory, a submodule, a
// merge on the first-parent path, an empty commit, a non-UTF-8 message and time zones east and
// west of UTC; every snapshot's files against `git archive` of its commit, every recorded commit
// against `git cat-file`; re-runs, incremental runs, an interrupted import, a server killed with
// SIGKILL mid-import, and the refusals of POST {repo}/git/imports and GET …/git/snapshots/{id}.
import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { importGit } from '../lib/client/git-import.js';
import { NO_PROGRESS } from '../lib/client/progress.js';
import { GIT_COMMIT, parseCommit } from '../lib/domain/git.js';
import { GitTreeBuilder } from '../lib/authority/git-trees.js';
import { ContentStore } from '../lib/store/content-store.js';
import { api, cli, cliJson, onTty, expectError, exportRepo, register, repoFiles, restoreRepo, spawnServer, startTestServer, tempDir, until } from './helpers.js';
import { commit, git, hasGit, makeHistory } from './git-fixture.js';
/** The files of `commit` as repoFiles reads a pulled directory (symlinks as `-> target`). */
async function gitFiles(src, commitId) {
    const out = path.join(tempDir('cairn-git-archive-'), 'tree');
    await fsp.mkdir(out, { recursive: true });
    const tar = execFileSync('git', ['-C', src, 'archive', '--format=tar', commitId], { maxBuffer: 64 * 1024 * 1024 });
    execFileSync('tar', ['-x', '-C', out], { input: tar });
    // git archive writes a submodule as an empty directory: a snapshot holds none.
    await fsp.rm(path.join(out, 'vendor'), { recursive: true, force: true });
    return repoFiles(out);
}
async function lineHead(url, repo, line) {
    const res = await api(url, 'GET', `/v1/native/repository-authorities/${repo}/lines/${encodeURIComponent(line)}`);
    return res.status === 404 ? null : res.json.line?.head_snapshot_id ?? res.json.head_snapshot_id ?? null;
}
/** The line's snapshots, newest first. */
async function history(url, repo, line) {
    if ((await lineHead(url, repo, line)) === null)
        return [];
    return (await cliJson(['log', '--server', url, '--repo', String(repo), '--line', line, '--limit', '1000'])).snapshots;
}
(hasGit ? describe : describe.skip)('git import (cairn import-git, POST {repo}/git/imports)', function () {
    this.timeout(120_000);
    let s;
    let src;
    let first;
    before(async () => {
        s = await startTestServer();
        src = await makeHistory();
        first = git(src, ['rev-list', '--first-parent', '--reverse', 'main']).trim().split('\n');
    });
    after(() => s.stop());
    const common = (repo) => ['--server', s.url, '--repo', String(repo)];
    it('writes one snapshot per first-parent commit with its tree, and keeps every commit byte for byte', async () => {
        const repo = await register(s.url, 'git-import');
        const r = await cliJson(['import-git', ...common(repo), '--line', 'main', src]);
        expect(r).to.include({ line: 'main', commits: first.length, imported: first.length, already: 0 });
        expect(r.commits).to.equal(8);
        expect(r.head_commit_id).to.equal(first[first.length - 1]);
        expect(r.submodules).to.deep.equal([{ path: 'vendor/lib', commit_id: 'ab'.repeat(20) }]);
        const snaps = (await history(s.url, repo, 'main')).reverse();
        expect(snaps).to.have.length(first.length);
        expect(snaps[0].parent_snapshot_ids).to.deep.equal([]);
        for (let i = 0; i < snaps.length; i++) {
            const rec = (await api(s.url, 'GET', `/v1/native/repository-authorities/${repo}/git/snapshots/${snaps[i].snapshot_id}`)).json.git_commit;
            expect(rec.commit_id, `snapshot ${i}`).to.equal(first[i]);
            // The commit-id index finds the same record.
            expect((await api(s.url, 'GET', `/v1/native/repository-authorities/${repo}/git/commits/${first[i]}`)).json.git_commit).to.deep.equal(rec);
            expect(rec.origin).to.equal('imported');
            const raw = execFileSync('git', ['-C', src, 'cat-file', 'commit', first[i]]);
            expect(Buffer.from(rec.raw, 'base64').equals(raw), `raw commit ${i}`).to.equal(true);
            expect(rec.tree_id).to.equal(git(src, ['rev-parse', `${first[i]}^{tree}`]).trim());
            expect(rec.parent_ids).to.deep.equal(git(src, ['rev-list', '--parents', '-n', '1', first[i]]).trim().split(' ').slice(1));
            if (i > 0)
                expect(snaps[i].parent_snapshot_ids).to.deep.equal([snaps[i - 1].snapshot_id]);
            expect(snaps[i].created_at_s).to.equal(rec.committer.time);
            // The snapshot's files are the commit's tree (modes and symlinks included).
            const pulled = path.join(tempDir('cairn-git-pull-'), 'out');
            await cliJson(['pull', ...common(repo), '--snapshot', snaps[i].snapshot_id, pulled]);
            expect(await repoFiles(pulled), `files of commit ${i}`).to.deep.equal(await gitFiles(src, first[i]));
        }
        // Idents with their time zones; the merge keeps both parents; Latin-1 decoded by its header.
        const byCommit = async (i) => (await api(s.url, 'GET', `/v1/native/repository-authorities/${repo}/git/snapshots/${snaps[i].snapshot_id}`)).json.git_commit;
        const c0 = await byCommit(0);
        expect(c0.author).to.deep.equal({ name: 'Ada', email: 'ada@example.org', time: c0.author.time, tz: '+0530' });
        expect(c0.committer).to.include({ name: 'Bob', email: 'bob@example.org', tz: '+0530' });
        expect((await byCommit(1)).author.tz).to.equal('-0700');
        expect((await byCommit(2)).committer.tz).to.equal('-0800');
        const merge = await byCommit(4);
        expect(merge.message).to.equal('merge side\n');
        expect(merge.parent_ids).to.have.length(2);
        const sub = await byCommit(5);
        expect(sub.gitlinks).to.deep.equal([{ path: 'vendor/lib', commit_id: 'ab'.repeat(20) }]);
        const latin = await byCommit(7);
        expect(latin).to.include({ encoding: 'ISO-8859-1', message: 'café crème\n' });
        expect(latin.author.tz).to.equal('+1400');
        expect(snaps[7].message).to.equal('café crème\n');
        // An executable and a symlink are kept as such.
        const listing = (await api(s.url, 'GET', `/v1/native/repository-authorities/${repo}/snapshots/${snaps[7].snapshot_id}?include_content=false`)).json;
        const kinds = Object.fromEntries(listing.files.map((f) => [f.path, f.kind]));
        expect(kinds).to.include({ 'run.sh': 'executable', 'app-link': 'symlink', 'README.md': 'file', 'side.txt/inner.txt': 'file' });
        expect(kinds).to.not.have.property('vendor/lib');
    });
    it('prints a readable summary on a terminal, naming the submodules it met', async function () {
        if (spawnSync('script', ['--version']).status !== 0)
            this.skip();
        const repo = await register(s.url, 'git-tty');
        const r = await onTty(['import-git', ...common(repo), '--line', 'main', src]);
        expect(r.status, r.stdout).to.equal(0);
        expect(r.stdout).to.not.include('{');
        expect(r.stdout).to.match(/imported 8 commits of HEAD onto main: head [0-9a-f]{12} = git [0-9a-f]{12}/);
        expect(r.stdout).to.match(/submodule vendor\/lib at abababababab \(kept with the commits, not in the snapshots\)/);
        const again = await onTty(['import-git', ...common(repo), '--line', 'main', src]);
        expect(again.stdout).to.match(/nothing to import: main holds all 8 commits of HEAD/);
    });
    it('is a no-op when run again, and imports only newer commits after the history grew', async () => {
        const repo = await register(s.url, 'git-incremental');
        await cliJson(['import-git', ...common(repo), '--line', 'trunk', src]);
        const before = await lineHead(s.url, repo, 'trunk');
        const again = await cliJson(['import-git', ...common(repo), '--line', 'trunk', src]);
        expect(again).to.include({ imported: 0, already: first.length, batches: 0 });
        expect(await lineHead(s.url, repo, 'trunk')).to.equal(before);
        const grown = path.join(tempDir('cairn-git-grown-'), 'src');
        execFileSync('git', ['clone', '-q', src, grown]);
        await fsp.writeFile(path.join(grown, 'new.txt'), 'new\n');
        git(grown, ['add', '-A']);
        const c1 = commit(grown, 'newer one\n');
        const c2 = commit(grown, 'newer two\n');
        const more = await cliJson(['import-git', ...common(repo), '--line', 'trunk', '--incremental', grown]);
        expect(more).to.include({ imported: 2, already: first.length, head_commit_id: c2 });
        const snaps = await history(s.url, repo, 'trunk');
        expect(snaps).to.have.length(first.length + 2);
        expect(snaps[2].snapshot_id).to.equal(before);
        expect(snaps[1].parent_snapshot_ids).to.deep.equal([before]);
        const rec = (await api(s.url, 'GET', `/v1/native/repository-authorities/${repo}/git/snapshots/${snaps[1].snapshot_id}`)).json.git_commit;
        expect(rec.commit_id).to.equal(c1);
        // The governed main takes a whole history once, from empty; newer commits go through lands.
        await cliJson(['import-git', ...common(repo), '--line', 'main', src]);
        const mainHead = await lineHead(s.url, repo, 'main');
        expect(mainHead).to.equal(before);
        const refused = await cli(['import-git', ...common(repo), '--line', 'main', grown]);
        expect(refused.code).to.equal(6);
        expect(refused.stderr).to.match(/main is governed: it holds 8 commits .* moves only through lands now\. Import the newer commits onto another line/);
        expect(await lineHead(s.url, repo, 'main')).to.equal(mainHead);
        expect(await cliJson(['import-git', ...common(repo), '--line', 'main', src])).to.include({ imported: 0, already: first.length });
    });
    it('resumes an interrupted import where its last batch committed, with the same snapshot ids', async () => {
        const whole = await register(s.url, 'git-whole');
        await importGit({ server: s.url, repo: whole, source: src, line: 'main', progress: NO_PROGRESS, batchCommits: 2 });
        const expected = await lineHead(s.url, whole, 'main');
        const repo = await register(s.url, 'git-resume');
        let stopped = null;
        try {
            await importGit({ server: s.url, repo, source: src, line: 'main', progress: NO_PROGRESS, batchCommits: 2, stopAfterBatches: 2 });
        }
        catch (err) {
            stopped = err;
        }
        expect(stopped?.message).to.match(/test hook/);
        const partial = await history(s.url, repo, 'main');
        // The governed main is set once at the end: the batches so far are on the staging line.
        expect(partial).to.have.length(0);
        expect(await history(s.url, repo, 'git-import/main')).to.have.length(4); // two batches of two
        const rest = await importGit({ server: s.url, repo, source: src, line: 'main', progress: NO_PROGRESS, batchCommits: 3 });
        expect(rest).to.include({ already: 4, imported: first.length - 4 });
        expect(await lineHead(s.url, repo, 'main')).to.equal(expected);
        const stagingLine = (await api(s.url, 'GET', `/v1/native/repository-authorities/${repo}/lines/git-import%2Fmain`)).json;
        expect(stagingLine.line?.status ?? stagingLine.status).to.equal('archived');
    });
    it('refuses a line that holds other history, and --incremental on an empty line (exit 6, nothing written)', async () => {
        const repo = await register(s.url, 'git-refuse');
        const other = path.join(tempDir(), 'plain');
        await fsp.mkdir(other, { recursive: true });
        await fsp.writeFile(path.join(other, 'x'), 'x');
        await cliJson(['push', ...common(repo), '--line', 'main', other]);
        const head = await lineHead(s.url, repo, 'main');
        const r = await cli(['import-git', ...common(repo), '--line', 'main', src]);
        expect(r.code).to.equal(6);
        expect(r.stderr).to.match(/not imported from git: nothing imported/);
        expect(await lineHead(s.url, repo, 'main')).to.equal(head);
        const inc = await cli(['import-git', ...common(repo), '--line', 'fresh', '--incremental', src]);
        expect(inc.code).to.equal(6);
        expect(inc.stderr).to.match(/holds no import yet/);
        expect(await lineHead(s.url, repo, 'fresh')).to.equal(null);
    });
    it('says what is wrong with the source: not a repository, an unknown ref, a path cairn cannot store (exit 1)', async () => {
        const repo = await register(s.url, 'git-errors');
        const notRepo = await cli(['import-git', ...common(repo), '--line', 'main', tempDir()]);
        expect(notRepo.code).to.equal(1);
        expect(notRepo.stderr).to.match(/is not a git repository/);
        const badRef = await cli(['import-git', ...common(repo), '--line', 'main', '--ref', 'refs/heads/nope', src]);
        expect(badRef.code).to.equal(1);
        expect(badRef.stderr).to.match(/refs\/heads\/nope names no commit/);
        const usage = await cli(['import-git', ...common(repo), src]);
        expect(usage.code).to.equal(2);
        expect(usage.stderr).to.match(/--line is required/);
        // A path that is not UTF-8 in the third commit: the two before it are imported, then it stops.
        const bad = path.join(tempDir('cairn-git-bad-'), 'src');
        await fsp.mkdir(bad, { recursive: true });
        git(bad, ['init', '-q', '-b', 'main']);
        await fsp.writeFile(path.join(bad, 'ok.txt'), 'ok\n');
        git(bad, ['add', '-A']);
        commit(bad, 'one\n');
        commit(bad, 'two\n');
        const blob = git(bad, ['hash-object', '-w', '--stdin'], {}, 'x\n').trim();
        git(bad, ['update-index', '--index-info'], {}, Buffer.from(`100644 ${blob}\tcaf\xe9.txt\n`, 'latin1'));
        commit(bad, 'three\n');
        const r = await cli(['import-git', ...common(repo), '--line', 'trunk', bad]);
        expect(r.code).to.equal(1);
        expect(r.stderr).to.match(/not UTF-8.*trunk holds the 2 commits before it/);
        expect(await history(s.url, repo, 'trunk')).to.have.length(2);
    });
    it('refuses bad import requests with the right status and writes nothing', async () => {
        const repo = await register(s.url, 'git-http');
        const P = `/v1/native/repository-authorities/${repo}`;
        const raw = execFileSync('git', ['-C', src, 'cat-file', 'commit', first[0]]);
        const emptyCommit = { contract: 'svc.remote_sync.zstd_bulk.commit.v1', snapshots: [] };
        const row = { snapshot_id: 'a'.repeat(64), commit_id: first[0], raw: raw.toString('base64') };
        // A commit id that is not the hash of the bytes.
        expectError(await api(s.url, 'POST', `${P}/git/imports`, { json: { commit: emptyCommit, git_commits: [{ ...row, commit_id: 'b'.repeat(40) }] } }), 400, 'hash');
        // Bytes that are not a commit.
        const junk = Buffer.from('not a commit');
        const junkId = createHash('sha1').update(`commit ${junk.length}\0`).update(junk).digest('hex');
        expectError(await api(s.url, 'POST', `${P}/git/imports`, { json: { commit: emptyCommit, git_commits: [{ ...row, commit_id: junkId, raw: junk.toString('base64') }] } }), 400, 'not a commit');
        // Not base64; a submodule path escaping the tree.
        expectError(await api(s.url, 'POST', `${P}/git/imports`, { json: { commit: emptyCommit, git_commits: [{ ...row, raw: '%%%' }] } }), 400);
        expectError(await api(s.url, 'POST', `${P}/git/imports`, { json: { commit: emptyCommit, git_commits: [{ ...row, gitlinks: [{ path: '../x', commit_id: first[0] }] }] } }), 400);
        // A snapshot that is neither stored nor in the commit.
        expectError(await api(s.url, 'POST', `${P}/git/imports`, { json: { commit: emptyCommit, git_commits: [row] } }), 404);
        // Unknown fields; a commit body of the wrong contract.
        expectError(await api(s.url, 'POST', `${P}/git/imports`, { json: { commit: emptyCommit, git_commits: [], extra: 1 } }), 422);
        expectError(await api(s.url, 'POST', `${P}/git/imports`, { json: { commit: { ...emptyCommit, contract: 'nope' }, git_commits: [] } }), 400);
        expect(await lineHead(s.url, repo, 'main')).to.equal(null);
        // A snapshot recorded with one commit cannot be given another (409), the same one is skipped.
        await importGit({ server: s.url, repo, source: src, line: 'main', progress: NO_PROGRESS });
        const head = (await lineHead(s.url, repo, 'main'));
        const headRaw = execFileSync('git', ['-C', src, 'cat-file', 'commit', first[first.length - 1]]);
        const same = await api(s.url, 'POST', `${P}/git/imports`, { json: { commit: emptyCommit, git_commits: [{ snapshot_id: head, commit_id: first[first.length - 1], raw: headRaw.toString('base64') }] } });
        expect(same.status).to.equal(200);
        expect(same.json.git_commits).to.deep.equal({ recorded: 0, skipped: 1 });
        expectError(await api(s.url, 'POST', `${P}/git/imports`, { json: { commit: emptyCommit, git_commits: [{ snapshot_id: head, commit_id: first[0], raw: raw.toString('base64') }] } }), 409);
        expect((await api(s.url, 'GET', `${P}/git/snapshots/${head}`)).json.git_commit.commit_id).to.equal(first[first.length - 1]);
        // Reads: a snapshot without a git commit, an unknown snapshot, a malformed id → 404.
        const plain = path.join(tempDir(), 'plain');
        await fsp.mkdir(plain, { recursive: true });
        await fsp.writeFile(path.join(plain, 'x'), 'x');
        const pushed = await cliJson(['push', ...common(repo), '--line', 'other', plain]);
        expectError(await api(s.url, 'GET', `${P}/git/snapshots/${pushed.snapshot_id}`), 404, 'no git commit');
        expectError(await api(s.url, 'GET', `${P}/git/snapshots/${'c'.repeat(64)}`), 404);
        expectError(await api(s.url, 'GET', `${P}/git/snapshots/..%2F..%2Fetc`), 404);
        expectError(await api(s.url, 'GET', `${P}/git/commits/${'d'.repeat(40)}`), 404, 'no snapshot has git commit');
        expectError(await api(s.url, 'GET', `${P}/git/commits/${first[0].toUpperCase()}`), 404);
        expectError(await api(s.url, 'GET', `${P}/git/commits/..%2F..%2Fetc`), 404);
        // One commit, one snapshot: the head's commit given for the other line's snapshot → 409.
        expectError(await api(s.url, 'POST', `${P}/git/imports`, { json: { commit: emptyCommit, git_commits: [{ snapshot_id: pushed.snapshot_id, commit_id: first[first.length - 1], raw: headRaw.toString('base64') }] } }), 409, 'already the commit of snapshot');
    });
    it('survives the server being killed mid-import: a re-run finishes with the same head', async () => {
        const reference = await register(s.url, 'git-kill-reference');
        await importGit({ server: s.url, repo: reference, source: src, line: 'main', progress: NO_PROGRESS });
        const expected = await lineHead(s.url, reference, 'main');
        const data = path.join(tempDir('cairn-git-kill-'), 'data');
        let child = await spawnServer(data);
        const repo = await register(child.url, 'git-kill');
        const run = cli(['import-git', '--server', child.url, '--repo', String(repo), '--line', 'main', src], { CAIRN_IMPORT_BATCH_COMMITS: '1' });
        // Kill as soon as some, not all, of the history is committed.
        // (main itself is set once, at the end: the batches move the staging line.)
        await until('a first batch committed', async () => ((await lineHead(child.url, repo, 'git-import/main')) ? true : null), 30_000);
        child.proc.kill('SIGKILL');
        await child.exited;
        const interrupted = await run;
        child = await spawnServer(data);
        try {
            const done = await cliJson(['import-git', '--server', child.url, '--repo', String(repo), '--line', 'main', src]);
            expect(done.already + done.imported).to.equal(first.length);
            expect(interrupted.code, 'the import saw its server die').to.not.equal(0);
            expect(await lineHead(child.url, repo, 'main')).to.equal(expected);
        }
        finally {
            child.proc.kill('SIGTERM');
            await child.exited;
        }
        const fsck = await cli(['fsck', '--data', data]);
        expect(fsck.code, fsck.stdout + fsck.stderr).to.equal(0);
        // fsck reports a git commit whose bytes do not hash to its id, and one naming no snapshot.
        const { store } = await ContentStore.open(path.join(data, 'repositories', String(repo)));
        try {
            const head = (await store.transact(async (tx) => tx.line('main').head_snapshot_id));
            const good = store.entity(GIT_COMMIT, head);
            await store.transact(async (tx) => {
                tx.upsert(GIT_COMMIT, head, { ...good, commit_id: 'f'.repeat(40) });
                tx.upsert(GIT_COMMIT, 'e'.repeat(64), { ...good, snapshot_id: 'e'.repeat(64) });
            });
        }
        finally {
            store.close();
        }
        const damaged = await cli(['fsck', '--data', data]);
        expect(damaged.code, damaged.stdout + damaged.stderr).to.equal(1);
        expect(damaged.stdout + damaged.stderr).to.match(/git commit of snapshot [0-9a-f]{64}.*hash to/).and.to.match(/names a snapshot that is not stored/);
    });
    it('keeps every tree exactly: each imported snapshot converts back to its commit\'s git tree, id for id', async () => {
        const data = path.join(tempDir('cairn-git-trees-'), 'data');
        const child = await spawnServer(data);
        let repo;
        try {
            repo = await register(child.url, 'git-trees');
            await importGit({ server: child.url, repo, source: src, line: 'main', progress: NO_PROGRESS });
        }
        finally {
            child.proc.kill('SIGTERM');
            await child.exited;
        }
        const { store } = await ContentStore.open(path.join(data, 'repositories', String(repo)));
        try {
            const builder = new GitTreeBuilder({ readTree: (id) => store.readTree(id), readBlob: (id) => store.readLocated(store.locator('blob', id)) });
            let snapshot = (await store.transact(async (tx) => tx.line('main').head_snapshot_id));
            let checked = 0;
            while (snapshot) {
                const record = store.entity(GIT_COMMIT, snapshot);
                const stored = store.snapshot(snapshot);
                const expected = parseCommit(Buffer.from(record.raw, 'base64')).tree_id;
                expect(await builder.treeOf(stored.root_tree_id, record.gitlinks), `tree of ${record.commit_id}`).to.equal(expected);
                checked++;
                snapshot = stored.parent_snapshot_ids[0] ?? null;
            }
            expect(checked).to.equal(first.length);
        }
        finally {
            store.close();
        }
    });
    it('exports and restores the git commits with the authority', async () => {
        const repo = await register(s.url, 'git-export');
        await importGit({ server: s.url, repo, source: src, line: 'main', progress: NO_PROGRESS });
        const head = (await lineHead(s.url, repo, 'main'));
        const before = (await api(s.url, 'GET', `/v1/native/repository-authorities/${repo}/git/snapshots/${head}`)).json;
        const { manifest, files } = await exportRepo(s.url, repo);
        const restored = await restoreRepo(s.url, manifest, files);
        expect((await api(s.url, 'GET', `/v1/native/repository-authorities/${restored}/git/snapshots/${head}`)).json).to.deep.equal(before);
        // The restored line continues: a re-run onto it is a no-op.
        expect(await cliJson(['import-git', ...common(restored), '--line', 'main', src])).to.include({ imported: 0, already: first.length });
    });
});
//# sourceMappingURL=git-import.test.js.map