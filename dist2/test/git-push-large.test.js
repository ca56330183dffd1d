// A large push for review (docs/git.md "How it is received"): a commit holding one 64 MiB file of
// random bytes, pushed with the real git client to a child `cairn serve`, is received with the
// server's memory bounded (its peak resident set, VmHWM reset just before the push, grows by far
// less than the file) while /healthz keeps answering; the file is stored whole.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { promises as fsp, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { importGit } from '../lib/client/git-import.js';
import { NO_PROGRESS } from '../lib/client/progress.js';
import { ContentStore } from '../lib/store/content-store.js';
import { api, cli, ok, register, spawnServer, tempDir, until } from './helpers.js';
import { commit, git, hasGit } from './git-fixture.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const FILE_BYTES = 64 * 1024 * 1024;
/**
 * Generous: the file's size plus half of it. The receiver streams, so what it holds does not
 * grow with the file; what remains is garbage V8 collects once external memory has grown by
 * tens of MiB. (A receiver that gathered the file in memory grew by 336 MiB here.)
 */
const GROWTH_BOUND_KIB = (FILE_BYTES + FILE_BYTES / 2) / 1024;
function client(args) {
    return new Promise((resolve, reject) => {
        const child = spawn('git', args, { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.org', GIT_COMMITTER_NAME: 'Ada', GIT_COMMITTER_EMAIL: 'ada@example.org' }, stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (d) => { stderr += d; });
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stderr }));
    });
}
const statusField = (pid, name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
(hasGit && process.platform === 'linux' ? describe : describe.skip)('git push for review of a large file', function () {
    this.timeout(600_000);
    let s = null;
    after(async () => {
        if (s && s.proc.exitCode === null && s.proc.signalCode === null) {
            s.proc.kill('SIGKILL');
            await s.exited;
        }
    });
    it('keeps the server answering, its memory bounded, and stores the file whole', async () => {
        const src = path.join(tempDir('cairn-git-'), 'src');
        await fsp.mkdir(src, { recursive: true });
        git(src, ['init', '-q', '-b', 'main']);
        await fsp.writeFile(path.join(src, 'README.md'), '# large\n');
        git(src, ['add', '-A']);
        commit(src, 'first\n');
        const data = path.join(tempDir(), 'data');
        s = await spawnServer(data);
        const repo = await register(s.url, 'large');
        await importGit({ server: s.url, repo, source: src, line: 'main', progress: NO_PROGRESS });
        const url = `${s.url}${R(repo, '/git/main.git')}`;
        const dir = path.join(tempDir('cairn-push-'), 'work');
        expect((await client(['clone', '-q', url, dir])).code).to.equal(0);
        const bytes = randomBytes(FILE_BYTES);
        const digest = createHash('sha256').update(bytes).digest('hex');
        await fsp.writeFile(path.join(dir, 'big.bin'), bytes);
        expect((await client(['-C', dir, 'add', '-A'])).code).to.equal(0);
        expect((await client(['-C', dir, 'commit', '-q', '-m', 'A large file'])).code).to.equal(0);
        const pid = s.proc.pid;
        // The peak from here on: VmHWM reset to the current resident set (Linux's clear_refs 5).
        writeFileSync(`/proc/${pid}/clear_refs`, '5');
        const idleKiB = statusField(pid, 'VmRSS');
        let pushing = true;
        const pushed = client(['-C', dir, 'push', url, 'HEAD:refs/for/main']).finally(() => { pushing = false; });
        // Once the server is receiving the push, /healthz is asked again and again until it ends.
        const quarantine = path.join(data, 'git-shadow', 'quarantine');
        await until('the push is being received', async () => !pushing || (await fsp.readdir(quarantine).catch(() => [])).length > 0, 120_000);
        let answered = 0;
        const failures = [];
        while (pushing) {
            try {
                const res = await fetch(`${s.url}/healthz`);
                await res.arrayBuffer();
                if (res.status === 200)
                    answered++;
                else
                    failures.push(`status ${res.status}`);
            }
            catch (err) {
                failures.push(err.message);
            }
        }
        const result = await pushed;
        const peakKiB = statusField(pid, 'VmHWM');
        expect(result.code, result.stderr).to.equal(0);
        expect(failures, 'every /healthz asked during the push answered').to.deep.equal([]);
        expect(answered, '/healthz answered while the push was received').to.be.greaterThan(0);
        expect(peakKiB - idleKiB, `resident set grew from ${idleKiB} KiB to ${peakKiB} KiB`).to.be.below(GROWTH_BOUND_KIB);
        const ps = (await ok(api(s.url, 'GET', R(repo, '/changes/change-1/patchsets')))).patchsets[0];
        const file = ps.changed_files.find((f) => f.path === 'big.bin');
        expect(file?.new_bytes).to.equal(FILE_BYTES);
        s.proc.kill('SIGTERM');
        await s.exited;
        const check = await cli(['fsck', '--data', data]);
        expect(check.code, check.stdout + check.stderr).to.equal(0);
        const { store } = await ContentStore.open(path.join(data, 'repositories', String(repo)));
        try {
            const stored = await store.readObject('blob', digest);
            expect(stored.length).to.equal(FILE_BYTES);
            expect(stored.equals(bytes)).to.equal(true);
        }
        finally {
            store.close();
        }
    });
});
//# sourceMappingURL=git-push-large.test.js.map