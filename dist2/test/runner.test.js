// `cairn runner` end to end: a child `cairn serve` (short lease and CI timeout), repositories
// whose ci/run.sh passes, fails, or sleeps past its timeout, and the runner as a child process
// (`--once`). A small recording proxy sits between the runner and the server so the test learns
// the lease tokens the runner was given and can check that they never reach any output.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, promises as fsp, readFileSync, realpathSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { push } from '../lib/client/transfer.js';
import { CLI, api, register, spawnServer, tempDir, until, untilOutput } from './helpers.js';
const R = (repo) => `/v1/native/repository-authorities/${repo}`;
const CI_TIMEOUT_S = 2;
const LEASE_S = 2;
/** Forwards every request to `target` unchanged and records the lease tokens of claim responses. */
async function startProxy(target) {
    const to = new URL(target);
    const tokens = [];
    const server = http.createServer((req, res) => {
        // As an ingress does by default (nginx proxy_pass), Host names the upstream: cairn answers only its own names.
        const upstream = http.request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } }, (up) => {
            const chunks = [];
            up.on('data', (c) => chunks.push(c));
            up.on('end', () => {
                const body = Buffer.concat(chunks);
                if (req.url?.endsWith(':claim')) {
                    try {
                        const token = JSON.parse(body.toString('utf8')).claimed_job?.lease_token;
                        if (token)
                            tokens.push(token);
                    }
                    catch { /* not JSON */ }
                }
                const headers = { ...up.headers };
                delete headers['transfer-encoding'];
                headers['content-length'] = String(body.length);
                res.writeHead(up.statusCode ?? 502, headers);
                res.end(body);
            });
        });
        upstream.on('error', () => { res.writeHead(502); res.end(); });
        req.pipe(upstream);
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address();
    return {
        url: `http://127.0.0.1:${port}`,
        tokens,
        close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
    };
}
function runRunner(args) {
    const started = Date.now();
    return new Promise((resolve) => {
        const p = spawn(process.execPath, [CLI, 'runner', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        p.stdout.on('data', (d) => { stdout += d; });
        p.stderr.on('data', (d) => { stderr += d; });
        p.on('exit', (code) => {
            const lines = stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
            resolve({ code, stdout, stderr, lines, ms: Date.now() - started });
        });
    });
}
/** On Linux a zombie still answers kill(pid, 0); read its state instead. */
function alive(pid) {
    try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
    }
    catch {
        if (existsSync('/proc/self/stat'))
            return false;
        try {
            process.kill(pid, 0);
            return true;
        }
        catch {
            return false;
        }
    }
}
describe('cairn runner end to end', function () {
    let server;
    let proxy;
    const outputs = [];
    before(async () => {
        server = await spawnServer(path.join(tempDir(), 'data'), ['--lease-seconds', String(LEASE_S), '--ci-timeout-seconds', String(CI_TIMEOUT_S)]);
        proxy = await startProxy(server.url);
    });
    after(async () => {
        await proxy.close();
        server.proc.kill('SIGTERM');
        await server.exited;
    });
    /** A new repository whose main holds `files`, with one queued repo.ci job. */
    async function fixture(name, files) {
        const repo = await register(server.url, name);
        const dir = path.join(tempDir(), 'fixture');
        await fsp.mkdir(dir, { recursive: true });
        for (const [file, content] of Object.entries(files)) {
            await fsp.mkdir(path.dirname(path.join(dir, file)), { recursive: true });
            await fsp.writeFile(path.join(dir, file), content);
        }
        const pushed = await push({ server: server.url, repo, line: 'main', dir, moveLine: true, progress: false });
        const run = await api(server.url, 'POST', `${R(repo)}:runCi`, { json: {} });
        expect(run.status, run.text).to.equal(200);
        return { repo, job: run.json.job.worker_job_index, snapshot: pushed.snapshot_id };
    }
    async function runOnce(repo) {
        const workdir = path.join(tempDir(), 'work');
        const run = await runRunner(['--server', proxy.url, '--once', '--repo', String(repo), '--workdir', workdir]);
        outputs.push(run.stdout, run.stderr);
        return { ...run, workdir };
    }
    async function job(repo, index) {
        const res = await api(server.url, 'GET', `${R(repo)}/worker-jobs/${index}`);
        expect(res.status, res.text).to.equal(200);
        return res.json.job;
    }
    it('passing ci/run.sh: runs in a fresh workspace under --workdir, reports succeeded with its suites, cleans up', async () => {
        const results = JSON.stringify({ suites: [{ suite_id: 'unit', status: 'pass', blocking: true }, { suite_id: 'lint', status: 'pass', blocking: false }] });
        const { repo, job: index } = await fixture('pass', {
            'ci/run.sh': `echo "ci-pass-marker"\necho "cwd=$(pwd)"\nprintf '%s' '${results}' > ci/results.json\nexit 0\n`,
            'src/main.txt': 'hello\n',
        });
        const run = await runOnce(repo);
        expect(run.code, run.stderr).to.equal(0);
        expect(run.lines).to.have.length(1);
        const logFile = path.join(run.workdir, 'logs', `repo${repo}-job${index}-attempt1.log`);
        expect(run.lines[0]).to.deep.equal({
            repository_index: repo, worker_job_index: index, job_kind: 11, attempt: 1,
            outcome: 'succeeded', tests_status: 'pass', suites: 2, note: 'exit 0', log: logFile,
        });
        // The command's output is kept per job under --workdir/logs/.
        expect(await fsp.readFile(logFile, 'utf8')).to.include('ci-pass-marker');
        // The script's own output goes to stderr, never into the JSON lines on stdout.
        expect(run.stderr).to.include('ci-pass-marker');
        expect(run.stdout).to.not.include('ci-pass-marker');
        const cwd = /cwd=(.*)/.exec(run.stderr)[1].trim();
        const roots = [run.workdir, realpathSync(run.workdir)];
        expect(roots.some((r) => cwd.startsWith(`${r}/job-`) && cwd.endsWith('/tree')), cwd).to.equal(true);
        expect(await fsp.readdir(run.workdir)).to.deep.equal(['logs']); // the workspace was removed, the log kept
        expect(await job(repo, index)).to.include({ state: 'succeeded', outcome: 'succeeded', attempt_count: 1, error_kind: null });
    });
    it('a patchset CI job: the runner runs the revision snapshot, the evidence appears on the patchset, and the policy passes', async () => {
        const results = JSON.stringify({ suites: [{ suite_id: 'unit', status: 'pass', blocking: true }, { suite_id: 'lint', status: 'pass', blocking: false }] });
        const { repo, snapshot: base } = await fixture('patchset', { 'README.md': 'base\n' });
        // Drain the repo.ci job fixture() queued, so --once takes the patchset job.
        await runOnce(repo);
        const dir = path.join(tempDir(), 'rev');
        await fsp.mkdir(path.join(dir, 'ci'), { recursive: true });
        await fsp.writeFile(path.join(dir, 'README.md'), 'base\n');
        await fsp.writeFile(path.join(dir, 'ci/run.sh'), `printf '%s' '${results}' > ci/results.json\n`);
        const rev = (await push({ server: server.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
        const call = async (method, rest, json) => {
            const res = await api(server.url, method, `${R(repo)}${rest}`, { json });
            expect(res.status, res.text).to.equal(200);
            return res.json;
        };
        await call('POST', '/tasks', { title: 'T', intent: 'I' });
        await call('POST', '/changes', { task_id: 'task-1', title: 'C', base_line: 'main' });
        const ps = (await call('POST', '/changes/change-1/patchsets', { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_with_ai_assist', author: 'alice' })).patchset;
        const queued = await call('POST', `/patchsets/${ps.patchset_id}:runCi`, {});
        expect(queued.job).to.include({ job_kind: 7, snapshot_id: rev, run_sequence: 1 });
        const run = await runOnce(repo);
        expect(run.code, run.stderr).to.equal(0);
        expect(run.lines[0]).to.include({ worker_job_index: queued.job.worker_job_index, job_kind: 7, outcome: 'succeeded', tests_status: 'pass', suites: 2 });
        const after = (await call('GET', `/patchsets/${ps.patchset_id}`, undefined)).patchset;
        expect(after.ci).to.include({ ci_run_sequence: 1, overall: 'pass', tests: 'pass', lint: 'pass', evidence_worker_job_index: queued.job.worker_job_index });
        await call('POST', '/changes/change-1:requestReview', { patchset_id: ps.patchset_id, reviewer_groups: ['core'] });
        await call('POST', '/changes/change-1/reviews', { patchset_id: ps.patchset_id, reviewer: 'bob', action: 'approve' });
        await call('PUT', `/patchsets/${ps.patchset_id}/attestation`, { verification_state: 'pass', require_lint_pass: true });
        const decision = (await call('POST', `/patchsets/${ps.patchset_id}:evaluatePolicy`, {})).policy;
        expect(decision.decision, JSON.stringify(decision.checks)).to.equal('pass');
    });
    it('failing ci/run.sh: reports command_failed with tests failing; the job itself completes', async () => {
        const { repo, job: index } = await fixture('fail', { 'ci/run.sh': 'echo "ci-fail-marker"\nexit 3\n' });
        const run = await runOnce(repo);
        expect(run.code, run.stderr).to.equal(1); // --once exits non-zero when the job it ran failed
        expect(run.lines).to.have.length(1);
        expect(run.lines[0]).to.include({ worker_job_index: index, outcome: 'command_failed', tests_status: 'fail', suites: 0, note: 'exit 3' });
        expect(run.stderr).to.include('ci-fail-marker');
        const stored = await job(repo, index);
        expect(stored).to.include({ state: 'succeeded', outcome: 'command_failed', attempt_count: 1 });
        // The output's tail is the job's detail.error.
        expect(stored.error).to.match(/^sh ci\/run\.sh: exit 3; output tail:\nci-fail-marker\n$/);
    });
    it('a zero exit with a failing suite in ci/results.json reports succeeded with tests failing', async () => {
        const results = JSON.stringify({ suites: [{ suite_id: 'unit', status: 'pass', blocking: true }, { suite_id: 'flaky', status: 'fail', blocking: false }] });
        const { repo, job: index } = await fixture('suite-fail', { 'ci/run.sh': `printf '%s' '${results}' > ci/results.json\n` });
        const run = await runOnce(repo);
        expect(run.code, run.stderr).to.equal(1);
        expect(run.lines[0]).to.include({ worker_job_index: index, outcome: 'succeeded', tests_status: 'fail', suites: 2 });
        expect(await job(repo, index)).to.include({ state: 'succeeded', outcome: 'succeeded' });
    });
    it('ci/run.sh sleeping past its timeout: the command group is killed, heartbeats hold the lease, timed_out is reported', async () => {
        const pidFile = path.join(tempDir(), 'sleep.pid');
        const { repo, job: index } = await fixture('sleep', {
            'ci/run.sh': `echo "ci-sleep-marker"\nsh -c 'echo $$ > ${pidFile}; exec sleep 30'\necho "after-sleep"\n`,
        });
        const heartbeats = () => server.output().split('\n').filter((l) => l.includes('"operation":"workerJobs.heartbeat"') && l.includes('"status":200')).length;
        const beatsBefore = heartbeats();
        const run = await runOnce(repo);
        expect(run.code, run.stderr).to.equal(1);
        expect(run.lines).to.have.length(1);
        // The server writes its log in batches (every 200 ms): wait for the lines, bounded.
        await until('two heartbeats of this run in the server log', () => heartbeats() - beatsBefore >= 2);
        // Completed, not 'complete_rejected': the 2 s lease survived the 2 s command through heartbeats.
        expect(run.lines[0]).to.deep.equal({
            repository_index: repo, worker_job_index: index, job_kind: 11, attempt: 1,
            outcome: 'timed_out', tests_status: 'fail', suites: 0, note: `timed out after ${CI_TIMEOUT_S}s`,
            log: path.join(run.workdir, 'logs', `repo${repo}-job${index}-attempt1.log`),
        });
        expect(run.ms).to.be.at.least(CI_TIMEOUT_S * 1000).and.below(15000);
        expect(run.stderr).to.include('ci-sleep-marker');
        expect(run.stderr).to.not.include('after-sleep');
        const pid = Number((await fsp.readFile(pidFile, 'utf8')).trim());
        const deadline = Date.now() + 3000;
        while (alive(pid) && Date.now() < deadline)
            await sleep(50);
        expect(alive(pid), `sleep (pid ${pid}) outlived the timeout`).to.equal(false);
        expect(await job(repo, index)).to.include({ state: 'succeeded', outcome: 'timed_out', attempt_count: 1, error_kind: null });
        expect(await fsp.readdir(run.workdir)).to.deep.equal(['logs']);
    });
    it('a snapshot without ci/run.sh reports command_failed', async () => {
        const { repo, job: index } = await fixture('no-entrypoint', { 'README.md': 'no ci here\n' });
        const run = await runOnce(repo);
        expect(run.code, run.stderr).to.equal(1);
        expect(run.lines[0]).to.include({ worker_job_index: index, outcome: 'command_failed', tests_status: 'fail', note: 'ci/run.sh is missing' });
        expect(await job(repo, index)).to.include({ state: 'succeeded', outcome: 'command_failed' });
    });
    it('--once with nothing to claim exits 0 and says "no job available" on stderr; an unreachable server exits 1 (errors on stderr)', async () => {
        const repo = await register(server.url, 'idle');
        const idle = await runOnce(repo);
        expect(idle.code, idle.stderr).to.equal(0);
        expect(idle.stdout).to.equal('');
        expect(idle.stderr).to.include('no job available');
        const down = await runRunner(['--server', 'http://127.0.0.1:1', '--once', '--workdir', path.join(tempDir(), 'w')]);
        outputs.push(down.stdout, down.stderr);
        expect(down.code).to.equal(1);
        expect(down.stdout).to.equal('');
        expect(JSON.parse(down.stderr.trim()).error).to.match(/^claim failed/);
    });
    it('never prints a lease token: not in the runner output, not in the server log', async () => {
        expect(proxy.tokens.length).to.equal(7); // one claim per runner run; the patchset test runs two
        const runnerOutput = outputs.join('\n');
        const serverLog = await untilOutput(server, /workerJobs\.complete/);
        for (const token of proxy.tokens) {
            expect(token).to.match(/^[0-9a-f]{32}$/);
            expect(runnerOutput).to.not.include(token);
            expect(serverLog).to.not.include(token);
        }
        expect(runnerOutput).to.not.include('lease_token');
    });
});
//# sourceMappingURL=runner.test.js.map