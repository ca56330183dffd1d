// The git bridge end to end, with the server as it serves by default (no test source): an
// imported history cloned back with git itself, fetched again after the line moves, and
// exported with `cairn export-git` into a bare repository, twice, with the same ids.
import { expect } from 'chai';
import { execFileSync, spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { importGit } from '../lib/client/git-import.js';
import { NO_PROGRESS } from '../lib/client/progress.js';
import { cli, cliJson, register, startTestServer, tempDir, until } from './helpers.js';
import { commit, git, hasGit, makeHistory } from './git-fixture.js';
/**
 * git as a client of the server: no config of the machine, no credential prompts. Asynchronous:
 * the server runs in this process, so a synchronous spawn would never get its answers.
 */
function client(args) {
    return new Promise((resolve, reject) => {
        const child = spawn('git', args, { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' } });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => { stdout += d; });
        child.stderr.on('data', (d) => { stderr += d; });
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
}
(hasGit ? describe : describe.skip)('git bridge end to end: import, clone, fetch, export-git', function () {
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
    it('clones an imported line with git: every commit keeps its id, the merge too, every tree is the source\'s', async () => {
        const repo = await register(s.url, 'clone');
        await importGit({ server: s.url, repo, source: src, line: 'main', progress: NO_PROGRESS });
        const url = `${s.url}/v1/native/repository-authorities/${repo}/git/main.git`;
        const dest = path.join(tempDir('cairn-clone-'), 'work');
        const cloned = await client(['clone', '-q', url, dest]);
        expect(cloned.code, cloned.stderr).to.equal(0);
        const ids = (await client(['-C', dest, 'rev-list', '--first-parent', '--reverse', 'HEAD'])).stdout.trim().split('\n');
        expect(ids).to.have.length(first.length);
        // Every commit keeps its id, the merge too: its side history was imported (docs/git.md).
        expect(ids).to.deep.equal(first);
        for (let i = 0; i < first.length; i++) {
            expect((await client(['-C', dest, 'rev-parse', `${ids[i]}^{tree}`])).stdout.trim(), `tree of commit ${i}`).to.equal(git(src, ['rev-parse', `${first[i]}^{tree}`]).trim());
        }
        expect((await client(['-C', dest, 'fsck', '--strict'])).code).to.equal(0);
        expect((await client(['-C', dest, 'symbolic-ref', 'HEAD'])).stdout.trim()).to.equal('refs/heads/main');
    });
    it('fetches what a line gained since the clone, on a line whose name holds a slash', async () => {
        const repo = await register(s.url, 'fetch');
        const grown = path.join(tempDir('cairn-grow-'), 'src');
        execFileSync('git', ['clone', '-q', src, grown]);
        await importGit({ server: s.url, repo, source: grown, line: 'team/dev', progress: NO_PROGRESS });
        const url = `${s.url}/v1/native/repository-authorities/${repo}/git/team%2Fdev.git`;
        const dest = path.join(tempDir('cairn-clone-'), 'work');
        const cloned = await client(['clone', '-q', '--branch', 'team/dev', url, dest]);
        expect(cloned.code, cloned.stderr).to.equal(0);
        const before = (await client(['-C', dest, 'rev-parse', 'HEAD'])).stdout.trim();
        await fsp.writeFile(path.join(grown, 'later.txt'), 'later\n');
        git(grown, ['add', '-A']);
        commit(grown, 'later\n');
        await importGit({ server: s.url, repo, source: grown, line: 'team/dev', progress: NO_PROGRESS });
        const fetched = await client(['-C', dest, 'fetch', '-q', 'origin']);
        expect(fetched.code, fetched.stderr).to.equal(0);
        const tip = (await client(['-C', dest, 'rev-parse', 'origin/team/dev'])).stdout.trim();
        expect(tip).to.not.equal(before);
        expect((await client(['-C', dest, 'rev-parse', `${tip}^`])).stdout.trim()).to.equal(before);
        expect((await client(['-C', dest, 'rev-parse', `${tip}^{tree}`])).stdout.trim()).to.equal(git(grown, ['rev-parse', 'HEAD^{tree}']).trim());
    });
    it('serves each line of a repository only what it reaches: another line\'s commit, or its file, asked by id through this line\'s URL is refused (v2 and v0)', async () => {
        const repo = await register(s.url, 'two-lines');
        await importGit({ server: s.url, repo, source: src, line: 'main', progress: NO_PROGRESS });
        const grown = path.join(tempDir('cairn-grow-'), 'src');
        execFileSync('git', ['clone', '-q', src, grown]);
        await fsp.writeFile(path.join(grown, 'only-other.txt'), 'only on the other line\n');
        git(grown, ['add', '-A']);
        const otherHead = commit(grown, 'only on other\n');
        const otherBlob = git(grown, ['rev-parse', 'HEAD:only-other.txt']).trim();
        await importGit({ server: s.url, repo, source: grown, line: 'other', progress: NO_PROGRESS });
        const base = `${s.url}/v1/native/repository-authorities/${repo}/git`;
        // Both lines are exported into the repository's one shadow repository.
        const listed = await client(['ls-remote', `${base}/other.git`]);
        expect(listed.stdout).to.include(`${otherHead}\trefs/heads/other`);
        for (const version of ['2', '0']) {
            const dest = path.join(tempDir('cairn-clone-'), 'work');
            const cloned = await client(['-c', `protocol.version=${version}`, 'clone', '-q', `${base}/main.git`, dest]);
            expect(cloned.code, cloned.stderr).to.equal(0);
            const fetched = await client(['-C', dest, '-c', `protocol.version=${version}`, 'fetch', 'origin', otherHead]);
            expect(fetched.code, fetched.stderr).to.not.equal(0);
            // v2: the server's refusal; v0: git asks for no object the server did not advertise.
            expect(fetched.stderr).to.match(version === '2' ? /remote error: upload-pack: not our ref [0-9a-f]{40} \(this URL serves only the commits line main reaches\)/ : /not our ref|unadvertised object/);
            expect((await client(['-C', dest, 'cat-file', '-e', otherHead])).code).to.not.equal(0);
            // A client that names the other line's file by id, as git's own would not.
            const pkt = (line) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;
            const body = version === '2'
                ? `${pkt('command=fetch\n')}0001${pkt(`want ${otherBlob}\n`)}${pkt('done\n')}0000`
                : `${pkt(`want ${otherBlob} ofs-delta\n`)}0000${pkt('done\n')}`;
            const res = await fetch(`${base}/main.git/git-upload-pack`, { method: 'POST', headers: { 'content-type': 'application/x-git-upload-pack-request', ...(version === '2' ? { 'git-protocol': 'version=2' } : {}) }, body });
            const answer = Buffer.from(await res.arrayBuffer()).toString('latin1');
            expect(answer).to.include(`ERR upload-pack: not our ref ${otherBlob}`);
            expect(answer).to.not.include('PACK');
        }
        // The other line's own URL serves it.
        const dest = path.join(tempDir('cairn-clone-'), 'work');
        expect((await client(['clone', '-q', '--branch', 'other', `${base}/other.git`, dest])).code).to.equal(0);
        expect(await fsp.readFile(path.join(dest, 'only-other.txt'), 'utf8')).to.equal('only on the other line\n');
    });
    it('an export writes one pack and no loose object, and the next export writes only what is new', async () => {
        const repo = await register(s.url, 'packed');
        const grown = path.join(tempDir('cairn-grow-'), 'src');
        execFileSync('git', ['clone', '-q', src, grown]);
        // The server exports an imported line by itself too (in the background): what every export
        // wrote is counted, whichever wrote it.
        const exporter = (await s.ready).gitExporter(await (await s.ready).opened(repo));
        let written = 0;
        exporter.syncHook = (e) => { if (e.stage === 'finished')
            written += e.written; };
        await importGit({ server: s.url, repo, source: grown, line: 'trunk', progress: NO_PROGRESS });
        const exportLine = async () => {
            const res = await fetch(`${s.url}/v1/native/repository-authorities/${repo}/git/exports`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ line: 'trunk' }) });
            expect(res.status).to.equal(200);
            const body = await res.json();
            await exporter.refreshIdle();
            return body;
        };
        await exportLine();
        // Every commit main reaches: the first-parent ones and the merge's side commit.
        expect(written).to.equal(git(src, ['rev-list', 'main']).trim().split('\n').length);
        const shadow = path.join(s.dataDir, 'git-shadow', `${repo}.git`);
        expect((await fsp.readdir(path.join(shadow, 'objects', 'pack'))).filter((f) => f.endsWith('.pack'))).to.have.length(1);
        // No loose object: the export writes a pack of its own (docs/git.md "The shadow repository").
        expect((await fsp.readdir(path.join(shadow, 'objects'))).filter((d) => /^[0-9a-f]{2}$/.test(d))).to.deep.equal([]);
        // One more commit: the packed history is found in the pack, not written again.
        await fsp.writeFile(path.join(grown, 'one-more.txt'), 'x\n');
        git(grown, ['add', '-A']);
        commit(grown, 'one more\n');
        await importGit({ server: s.url, repo, source: grown, line: 'trunk', progress: NO_PROGRESS });
        written = 0;
        const next = await exportLine();
        expect(written).to.equal(1);
        const dest = path.join(tempDir('cairn-clone-'), 'work');
        const cloned = await client(['clone', '-q', '--branch', 'trunk', `${s.url}/v1/native/repository-authorities/${repo}/git/trunk.git`, dest]);
        expect(cloned.code, cloned.stderr).to.equal(0);
        expect((await client(['-C', dest, 'rev-parse', 'HEAD'])).stdout.trim()).to.equal(next.head_commit_id);
        expect((await client(['-C', dest, 'fsck', '--strict'])).code).to.equal(0);
    });
    it('brings a served line\'s branch up to date in the background after the line moves', async () => {
        const repo = await register(s.url, 'background');
        const grown = path.join(tempDir('cairn-grow-'), 'src');
        execFileSync('git', ['clone', '-q', src, grown]);
        await importGit({ server: s.url, repo, source: grown, line: 'live', progress: NO_PROGRESS });
        const dest = path.join(tempDir('cairn-clone-'), 'work');
        expect((await client(['clone', '-q', '--branch', 'live', `${s.url}/v1/native/repository-authorities/${repo}/git/live.git`, dest])).code).to.equal(0);
        const ref = path.join(s.dataDir, 'git-shadow', `${repo}.git`, 'refs', 'heads', 'live');
        const before = (await fsp.readFile(ref, 'utf8')).trim();
        await fsp.writeFile(path.join(grown, 'moved.txt'), 'moved\n');
        git(grown, ['add', '-A']);
        commit(grown, 'moved\n');
        await importGit({ server: s.url, repo, source: grown, line: 'live', progress: NO_PROGRESS });
        // No git request and no export call: the branch follows the move by itself.
        const after = await until('the shadow branch to follow the line', async () => {
            const now = (await fsp.readFile(ref, 'utf8')).trim();
            return now !== before ? now : null;
        });
        expect(git(dest, ['cat-file', '-t', before]).trim()).to.equal('commit');
        const res = await fetch(`${s.url}/v1/native/repository-authorities/${repo}/git/exports`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ line: 'live' }) });
        expect(await res.json()).to.include({ head_commit_id: after, written: 0 });
    });
    it('cairn export-git writes the line into a bare repository, and again with the same ids', async () => {
        const repo = await register(s.url, 'export-cli');
        await importGit({ server: s.url, repo, source: src, line: 'main', progress: NO_PROGRESS });
        const out = path.join(tempDir('cairn-export-'), 'out.git');
        const a = await cliJson(['export-git', '--server', s.url, '--repo', String(repo), '--line', 'main', out]);
        expect(a.head_commit_id).to.match(/^[0-9a-f]{40}$/);
        expect((await client(['-C', out, 'rev-parse', 'refs/heads/main'])).stdout.trim()).to.equal(a.head_commit_id);
        expect((await client(['-C', out, 'symbolic-ref', 'HEAD'])).stdout.trim()).to.equal('refs/heads/main');
        expect((await client(['-C', out, 'fsck', '--strict'])).code).to.equal(0);
        const again = await cliJson(['export-git', '--server', s.url, '--repo', String(repo), '--line', 'main', out]);
        expect(again).to.include({ head_commit_id: a.head_commit_id, written: 0 });
        // Another repository holding the same import exports the same commits.
        const twin = await register(s.url, 'export-twin');
        await importGit({ server: s.url, repo: twin, source: src, line: 'main', progress: NO_PROGRESS });
        const other = path.join(tempDir('cairn-export-'), 'twin.git');
        expect((await cliJson(['export-git', '--server', s.url, '--repo', String(twin), '--line', 'main', other])).head_commit_id).to.equal(a.head_commit_id);
        const missing = await cli(['export-git', '--server', s.url, '--repo', String(repo), '--line', 'nope', out]);
        expect(missing.code).to.equal(1);
        expect(missing.stderr).to.match(/line nope does not exist/);
        const usage = await cli(['export-git', '--server', s.url, '--repo', String(repo), out]);
        expect(usage.code).to.equal(2);
    });
});
//# sourceMappingURL=git-clone.test.js.map