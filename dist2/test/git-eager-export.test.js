// The eager export of an imported line (docs/git.md "Clone and fetch"): once an import moves a
// line, the server exports it into the shadow repository in the background, with no git request;
// a clone that arrives meanwhile waits for that export instead of starting another; a failed
// background export is logged and done by the next request; and a server killed with SIGKILL in
// the middle of one leaves the shadow consistent, the next request finishing it.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { importGit } from '../lib/client/git-import.js';
import { NO_PROGRESS } from '../lib/client/progress.js';
import { startServer } from '../lib/cli/serve.js';
import { cli, cliJson, register, spawnServer, tempDir, until } from './helpers.js';
import { commit, git, hasGit, makeHistory } from './git-fixture.js';
/** git as a client of the server (asynchronous: the server may run in this process). */
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
const exists = (p) => fsp.stat(p).then(() => true, () => false);
const shadowOf = (data, repo) => path.join(data, 'git-shadow', `${repo}.git`);
const gitDir = (dir, args) => git(dir, args).trim();
(hasGit ? describe : describe.skip)('git: the eager export of an imported line', function () {
    this.timeout(120_000);
    let s;
    let lines;
    let src;
    let all;
    before(async () => {
        lines = [];
        const sink = new Writable({ write(chunk, _e, done) { lines.push(String(chunk)); done(); } });
        const dataDir = path.join(tempDir(), 'data');
        s = { ...(await startServer({ host: '127.0.0.1', port: 0, dataDir, log: pino({ level: 'info' }, sink), ui: false })), dataDir };
        await s.ready;
        src = await makeHistory();
        all = gitDir(src, ['rev-list', '--first-parent', '--reverse', 'main']).split('\n');
    });
    after(() => s.stop());
    const exporterOf = async (repo) => {
        const service = await s.ready;
        return service.gitExporter(await service.opened(repo));
    };
    it('exports an imported line into the shadow repository with no git request, under the source\'s commit ids', async () => {
        const repo = await register(s.url, 'eager');
        const events = [];
        (await exporterOf(repo)).syncHook = (e) => { events.push(e); };
        await importGit({ server: s.url, repo, source: src, line: 'trunk', progress: NO_PROGRESS });
        const ref = path.join(shadowOf(s.dataDir, repo), 'refs', 'heads', 'trunk');
        const head = await until('the shadow branch of the imported line', async () => (await fsp.readFile(ref, 'utf8').catch(() => '')).trim());
        expect(head).to.equal(all[all.length - 1]);
        expect(gitDir(shadowOf(s.dataDir, repo), ['rev-list', '--first-parent', '--reverse', 'refs/heads/trunk']).split('\n')).to.deep.equal(all);
        // Only background syncs ran: nothing asked for one.
        expect(events.filter((e) => !e.background)).to.deep.equal([]);
    });
    it('exports the governed main imported through its staging line; a clone finds it ready', async () => {
        const repo = await register(s.url, 'eager-main');
        const events = [];
        (await exporterOf(repo)).syncHook = (e) => { events.push(e); };
        await importGit({ server: s.url, repo, source: src, line: 'main', progress: NO_PROGRESS });
        const ref = path.join(shadowOf(s.dataDir, repo), 'refs', 'heads', 'main');
        expect(await until('the shadow branch of main', async () => (await fsp.readFile(ref, 'utf8').catch(() => '')).trim())).to.equal(all[all.length - 1]);
        const dest = path.join(tempDir('cairn-eager-'), 'clone.git');
        const cloned = await client(['clone', '-q', '--bare', `${s.url}/v1/native/repository-authorities/${repo}/git/main.git`, dest]);
        expect(cloned.code, cloned.stderr).to.equal(0);
        expect(gitDir(dest, ['rev-list', '--first-parent', '--reverse', 'main']).split('\n')).to.deep.equal(all);
        // The clone's syncs wrote nothing: the background had exported everything.
        const asked = events.filter((e) => !e.background && e.stage === 'finished');
        expect(asked.length).to.be.greaterThan(0);
        expect(asked.map((e) => e.written)).to.deep.equal(asked.map(() => 0));
    });
    it('a clone issued while the background export runs waits for it, starts no second export and gets the whole history', async () => {
        const repo = await register(s.url, 'eager-wait');
        const exporter = await exporterOf(repo);
        const events = [];
        let release = () => { };
        const gate = new Promise((resolve) => { release = resolve; });
        exporter.syncHook = async (e) => {
            events.push(e);
            if (e.stage === 'started' && e.background)
                await gate;
        };
        await importGit({ server: s.url, repo, source: src, line: 'trunk', progress: NO_PROGRESS });
        await until('the background export to start', () => events.some((e) => e.stage === 'started' && e.background));
        const dest = path.join(tempDir('cairn-eager-'), 'clone.git');
        const cloning = client(['clone', '-q', '--bare', '--branch', 'trunk', `${s.url}/v1/native/repository-authorities/${repo}/git/trunk.git`, dest]);
        // The clone's first request asks for a sync, which waits behind the held background export.
        await until('the clone to ask for the line', () => events.some((e) => e.stage === 'requested' && !e.background));
        expect(events.filter((e) => e.stage === 'started' && !e.background), 'a sync started while the background export holds the exporter').to.deep.equal([]);
        release();
        const cloned = await cloning;
        expect(cloned.code, cloned.stderr).to.equal(0);
        expect(gitDir(dest, ['rev-list', '--first-parent', '--reverse', 'trunk']).split('\n')).to.deep.equal(all);
        const finished = events.filter((e) => e.stage === 'finished');
        // One export wrote the history, the background one; every sync the clone asked for wrote nothing.
        expect(finished.filter((e) => e.background).map((e) => e.written > 0)).to.deep.equal([true]);
        expect(finished.filter((e) => !e.background).map((e) => e.written)).to.deep.equal(finished.filter((e) => !e.background).map(() => 0));
    });
    it('a failed background export is logged, the server keeps serving, and the next request exports the line', async () => {
        const repo = await register(s.url, 'eager-fail');
        const exporter = await exporterOf(repo);
        let failures = 0;
        exporter.syncHook = (e) => {
            if (e.stage === 'started' && e.background && failures++ === 0)
                throw new Error('injected export failure');
        };
        await importGit({ server: s.url, repo, source: src, line: 'trunk', progress: NO_PROGRESS });
        await until('the failure to be logged', () => lines.some((l) => l.includes('injected export failure')));
        const logged = JSON.parse(lines.find((l) => l.includes('injected export failure')));
        expect(logged).to.include({ line: 'trunk', level: 40 });
        expect(await exists(path.join(shadowOf(s.dataDir, repo), 'refs', 'heads', 'trunk'))).to.equal(false);
        const dest = path.join(tempDir('cairn-eager-'), 'clone.git');
        const cloned = await client(['clone', '-q', '--bare', '--branch', 'trunk', `${s.url}/v1/native/repository-authorities/${repo}/git/trunk.git`, dest]);
        expect(cloned.code, cloned.stderr).to.equal(0);
        expect(gitDir(dest, ['rev-list', '--first-parent', '--reverse', 'trunk']).split('\n')).to.deep.equal(all);
    });
});
(hasGit ? describe : describe.skip)('git: a server killed with SIGKILL in the middle of a background export', function () {
    this.timeout(180_000);
    it('leaves the shadow consistent (no half pack, the branch at its last finished pack); the next clone finishes the export with the source\'s ids', async () => {
        const dir = path.join(tempDir('cairn-eager-kill-'), 'src');
        await fsp.mkdir(dir, { recursive: true });
        git(dir, ['init', '-q', '-b', 'main']);
        for (let i = 0; i < 23; i++) {
            await fsp.writeFile(path.join(dir, `f${i % 5}.txt`), `${i}\n`);
            git(dir, ['add', '-A']);
            commit(dir, `commit ${i}\n`, i % 2 ? '+0200' : '-0330');
        }
        const source = gitDir(dir, ['rev-list', '--reverse', 'main']).split('\n');
        const data = path.join(tempDir('cairn-eager-kill-'), 'data');
        // Batches of 5 commits, a pack finished after each batch of at least 10 objects: die
        // finishing the second pack of the background export (no git request, no export call).
        let child = await spawnServer(data, [], true, { CAIRN_TEST_CRASH_AT: 'git-export:recorded>git-export:pack>git-export:pack', CAIRN_GIT_EXPORT_BATCH: '5', CAIRN_GIT_EXPORT_PACK_OBJECTS: '10' });
        try {
            const repo = await register(child.url, 'kill');
            await cliJson(['import-git', '--server', child.url, '--repo', String(repo), '--line', 'trunk', dir]);
            expect(await child.exited, 'the server died by itself').to.equal(null);
            const shadow = shadowOf(data, repo);
            expect((await fsp.readdir(path.join(shadow, 'cairn-tmp'))).map((f) => path.extname(f)).sort()).to.deep.equal(['.idx', '.pack']);
            const partial = gitDir(shadow, ['rev-list', '--reverse', 'refs/heads/trunk']).split('\n');
            expect(partial.length).to.be.within(1, source.length - 1);
            expect(partial).to.deep.equal(source.slice(0, partial.length));
            git(shadow, ['fsck', '--strict', '--no-dangling']);
            child = await spawnServer(data);
            const dest = path.join(tempDir('cairn-eager-kill-'), 'clone.git');
            const cloned = await client(['clone', '-q', '--bare', '--branch', 'trunk', `${child.url}/v1/native/repository-authorities/${repo}/git/trunk.git`, dest]);
            expect(cloned.code, cloned.stderr).to.equal(0);
            expect(gitDir(dest, ['rev-list', '--reverse', 'trunk']).split('\n')).to.deep.equal(source);
            expect(gitDir(shadow, ['rev-list', '--reverse', 'refs/heads/trunk']).split('\n')).to.deep.equal(source);
            git(shadow, ['fsck', '--strict', '--no-dangling']);
            expect(await fsp.readdir(path.join(shadow, 'cairn-tmp'))).to.deep.equal([]);
            child.proc.kill('SIGTERM');
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
//# sourceMappingURL=git-eager-export.test.js.map