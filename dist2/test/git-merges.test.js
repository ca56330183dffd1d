// Merges imported with their side histories (docs/git.md, "Import" and "Merges"): a source
// repository whose main merged branches — a merge of a merge, an octopus merge, a side branch
// with its own renames and executables — is imported, exported with `cairn export-git` and
// cloned from the server, and every commit reachable from main keeps its id; a re-run is a
// no-op, an incremental run after new merges imports only them, and a merge imported the old way
// (first parents only, so its side commits are not in the git map) still exports rewritten.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { importGit } from '../lib/client/git-import.js';
import { NO_PROGRESS } from '../lib/client/progress.js';
import { api, cli, cliJson, register, spawnServer, tempDir } from './helpers.js';
import { commit, git, hasGit, tick } from './git-fixture.js';
const R = (repo, p) => `/v1/native/repository-authorities/${repo}${p}`;
const bare = (dir, args) => execFileSync('git', ['--git-dir', dir, ...args], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dir } }).toString('latin1');
const revList = (ids) => ids.trim().split('\n').sort();
async function write(dir, rel, text) {
    await fsp.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await fsp.writeFile(path.join(dir, rel), text);
}
function merge(dir, message, branches) {
    const t = tick();
    git(dir, ['merge', '-q', '--no-ff', '-m', message, ...branches], { GIT_AUTHOR_DATE: `${t} +0200`, GIT_COMMITTER_DATE: `${t} -0300` });
    return git(dir, ['rev-parse', 'HEAD']).trim();
}
/** main with: a feature branch (renames, an executable) that merged a sub-branch first, an octopus merge, a plain merge. */
async function mergeHistory() {
    const dir = path.join(tempDir('cairn-merges-'), 'src');
    await fsp.mkdir(dir, { recursive: true });
    git(dir, ['init', '-q', '-b', 'main']);
    await write(dir, 'README.md', '# merges\n');
    await write(dir, 'src/a.js', 'a\n');
    git(dir, ['add', '-A']);
    commit(dir, 'root\n');
    // feature: a rename, an executable, and a sub-branch merged into it (a merge of a merge, later).
    git(dir, ['checkout', '-q', '-b', 'feature']);
    git(dir, ['mv', 'src/a.js', 'src/renamed.js']);
    git(dir, ['add', '-A']);
    commit(dir, 'feature: rename\n', '+0900');
    git(dir, ['checkout', '-q', '-b', 'sub']);
    await write(dir, 'tool.sh', '#!/bin/sh\necho sub\n');
    await fsp.chmod(path.join(dir, 'tool.sh'), 0o755);
    git(dir, ['add', '-A']);
    commit(dir, 'sub: an executable\n', '-0500');
    await write(dir, 'sub/notes.txt', 'notes\n');
    git(dir, ['add', '-A']);
    commit(dir, 'sub: notes\n');
    git(dir, ['checkout', '-q', 'feature']);
    await write(dir, 'src/feature.js', 'f\n');
    git(dir, ['add', '-A']);
    commit(dir, 'feature: more\n');
    merge(dir, 'merge sub into feature\n', ['sub']);
    // main moves meanwhile, then merges feature (a merge whose side history holds a merge).
    git(dir, ['checkout', '-q', 'main']);
    await write(dir, 'README.md', '# merges\n\nmain moved\n');
    git(dir, ['add', '-A']);
    commit(dir, 'main: readme\n');
    merge(dir, 'merge feature\n', ['feature']);
    // An octopus merge of two small branches.
    for (const b of ['o1', 'o2']) {
        git(dir, ['checkout', '-q', '-b', b, 'main']);
        await write(dir, `${b}.txt`, `${b}\n`);
        git(dir, ['add', '-A']);
        commit(dir, `${b}\n`);
    }
    git(dir, ['checkout', '-q', 'main']);
    merge(dir, 'octopus\n', ['o1', 'o2']);
    commit(dir, 'after the merges\n');
    return dir;
}
(hasGit ? describe : describe.skip)('git merges: side histories imported, merges exported with their ids', function () {
    this.timeout(180_000);
    it('imports the side history of every merge, exports and serves every commit of main with its source id, and runs again as a no-op and incrementally', async () => {
        const src = await mergeHistory();
        const data = path.join(tempDir('cairn-merges-data-'), 'data');
        const child = await spawnServer(data);
        try {
            const repo = await register(child.url, 'merges');
            const mainCommits = revList(git(src, ['rev-list', 'main']));
            const firstParents = git(src, ['rev-list', '--first-parent', 'main']).trim().split('\n');
            const r = await cliJson(['import-git', '--server', child.url, '--repo', String(repo), '--line', 'trunk', src]);
            expect(r).to.include({ commits: firstParents.length, imported: firstParents.length, side_imported: mainCommits.length - firstParents.length });
            // Side commits have their snapshots and git commits; their snapshots are on no line.
            const sub = git(src, ['rev-parse', 'sub']).trim();
            const rec = (await api(child.url, 'GET', R(repo, `/git/commits/${sub}`))).json.git_commit;
            expect(rec).to.include({ origin: 'imported', commit_id: sub });
            const subParent = (await api(child.url, 'GET', R(repo, `/git/commits/${git(src, ['rev-parse', 'sub^']).trim()}`))).json.git_commit;
            const snap = (await api(child.url, 'GET', R(repo, `/snapshots/${rec.snapshot_id}?include_content=false`))).json;
            expect(snap.snapshot?.parent_snapshot_ids ?? snap.parent_snapshot_ids).to.deep.equal([subParent.snapshot_id]);
            const kinds = Object.fromEntries(snap.files.map((f) => [f.path, f.kind]));
            expect(kinds).to.include({ 'tool.sh': 'executable', 'src/renamed.js': 'file', 'sub/notes.txt': 'file' });
            // export-git: every commit reachable from main, with the source's ids.
            const out = path.join(tempDir('cairn-merges-out-'), 'out.git');
            await cliJson(['export-git', '--server', child.url, '--repo', String(repo), '--line', 'trunk', out]);
            expect(revList(bare(out, ['rev-list', 'trunk']))).to.deep.equal(mainCommits);
            expect(bare(out, ['rev-parse', 'trunk']).trim()).to.equal(firstParents[0]);
            bare(out, ['fsck', '--strict']);
            const shadow = path.join(data, 'git-shadow', `${repo}.git`);
            bare(shadow, ['fsck', '--strict', '--no-dangling']);
            // git clone from the server: the same ids.
            const clone = path.join(tempDir('cairn-merges-clone-'), 'work');
            execFileSync('git', ['clone', '-q', '--branch', 'trunk', `${child.url}${R(repo, '/git/trunk.git')}`, clone], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: clone.replace(/work$/, '') } });
            expect(revList(git(clone, ['rev-list', 'HEAD']))).to.deep.equal(mainCommits);
            git(clone, ['fsck', '--strict']);
            // Again: nothing to import.
            const again = await cliJson(['import-git', '--server', child.url, '--repo', String(repo), '--line', 'trunk', src]);
            expect(again).to.include({ imported: 0, side_imported: 0, batches: 0 });
            // New merges: only they (and their side commits) are imported; the export keeps every id.
            git(src, ['checkout', '-q', '-b', 'late', 'main~1']);
            await write(src, 'late.txt', 'late\n');
            git(src, ['add', '-A']);
            commit(src, 'late one\n');
            await fsp.mkdir(path.join(src, 'late'));
            git(src, ['mv', 'late.txt', 'late/renamed.txt']);
            commit(src, 'late two\n');
            git(src, ['checkout', '-q', 'main']);
            merge(src, 'merge late\n', ['late']);
            const more = await cliJson(['import-git', '--server', child.url, '--repo', String(repo), '--line', 'trunk', '--incremental', src]);
            expect(more).to.include({ imported: 1, side_imported: 2 });
            await cliJson(['export-git', '--server', child.url, '--repo', String(repo), '--line', 'trunk', out]);
            expect(revList(bare(out, ['rev-list', 'trunk']))).to.deep.equal(revList(git(src, ['rev-list', 'main'])));
            bare(out, ['fsck', '--strict']);
        }
        finally {
            child.proc.kill('SIGTERM');
            await child.exited;
        }
        const fsck = await cli(['fsck', '--data', data]);
        expect(fsck.code, fsck.stdout + fsck.stderr).to.equal(0);
    });
    it('resumes an import stopped in the middle of a side history, with the same snapshots and ids', async () => {
        const src = await mergeHistory();
        const data = path.join(tempDir('cairn-merges-resume-'), 'data');
        const child = await spawnServer(data);
        try {
            const whole = await register(child.url, 'whole');
            await importGit({ server: child.url, repo: whole, source: src, line: 'trunk', progress: NO_PROGRESS });
            const repo = await register(child.url, 'resume');
            // Batches of one commit: the third batch holds a side commit of the first merge.
            let stopped = null;
            try {
                await importGit({ server: child.url, repo, source: src, line: 'trunk', progress: NO_PROGRESS, batchCommits: 1, stopAfterBatches: 3 });
            }
            catch (err) {
                stopped = err;
            }
            expect(stopped?.message).to.match(/test hook/);
            const rest = await importGit({ server: child.url, repo, source: src, line: 'trunk', progress: NO_PROGRESS, batchCommits: 2 });
            const head = async (n) => (await api(child.url, 'GET', R(n, '/lines/trunk'))).json;
            expect((await head(repo)).line?.head_snapshot_id ?? (await head(repo)).head_snapshot_id).to.equal((await head(whole)).line?.head_snapshot_id ?? (await head(whole)).head_snapshot_id);
            expect(rest.side_imported).to.be.lessThan(revList(git(src, ['rev-list', 'main'])).length - git(src, ['rev-list', '--first-parent', 'main']).trim().split('\n').length);
            const exp = (await api(child.url, 'POST', R(repo, '/git/exports'), { json: { line: 'trunk' } })).json;
            expect(exp.head_commit_id).to.equal(git(src, ['rev-parse', 'main']).trim());
        }
        finally {
            child.proc.kill('SIGTERM');
            await child.exited;
        }
    });
    it('a merge imported without its side history (first parents only, as older imports did) still exports rewritten, with a Cairn-Git-Commit trailer', async () => {
        const src = await mergeHistory();
        const data = path.join(tempDir('cairn-merges-old-'), 'data');
        const child = await spawnServer(data);
        try {
            const repo = await register(child.url, 'old');
            const r = await importGit({ server: child.url, repo, source: src, line: 'trunk', progress: NO_PROGRESS, firstParentOnly: true });
            expect(r.side_imported).to.equal(0);
            const first = git(src, ['rev-list', '--first-parent', '--reverse', 'main']).trim().split('\n');
            const exp = (await api(child.url, 'POST', R(repo, '/git/exports'), { json: { line: 'trunk' } })).json;
            const shadow = path.join(data, 'git-shadow', `${repo}.git`);
            const log = bare(shadow, ['log', '--first-parent', '--format=%H', 'trunk']).trim().split('\n').reverse();
            expect(log).to.have.length(first.length);
            expect(exp.head_commit_id).to.equal(log[log.length - 1]);
            // Up to the first merge (commit 2: root, main: readme, merge feature) the ids are the source's.
            expect(log.slice(0, 2)).to.deep.equal(first.slice(0, 2));
            for (let i = 2; i < first.length; i++) {
                expect(log[i]).to.not.equal(first[i]);
                const body = bare(shadow, ['cat-file', 'commit', log[i]]);
                expect(body.match(/^parent /gm)).to.have.length(1);
                expect(body).to.include(`Cairn-Git-Commit: ${first[i]}\n`);
            }
            bare(shadow, ['fsck', '--strict', '--no-dangling']);
            // A re-run with side histories imports nothing: the line holds every first-parent commit.
            const again = await importGit({ server: child.url, repo, source: src, line: 'trunk', progress: NO_PROGRESS });
            expect(again).to.include({ imported: 0, side_imported: 0 });
        }
        finally {
            child.proc.kill('SIGTERM');
            await child.exited;
        }
    });
});
//# sourceMappingURL=git-merges.test.js.map