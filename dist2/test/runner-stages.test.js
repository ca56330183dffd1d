// `cairn runner` stopped or stalled at each stage of a job. A proxy between the runner and the
// server goes silent on the request that stage is waiting for (the claim, an object pack, the
// report), so the runner is caught there on purpose; the command stage uses a ci/run.sh that
// ignores SIGTERM. Each time the runner must honour SIGTERM/SIGINT (fail the job as retryable,
// say so on stderr, exit), and a fetch without progress must fail the attempt after
// --stall-seconds. Every wait for the runner has a deadline, so a hang fails the test.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { runRunner, stopSignal } from '../lib/client/runner.js';
import { push } from '../lib/client/transfer.js';
import { CLI, api, register, spawnServer, tempDir, until } from './helpers.js';
import { stallProxy } from './stall-proxy.js';
const R = (repo) => `/v1/native/repository-authorities/${repo}`;
function startRunner(server, args = []) {
    const p = spawn(process.execPath, [CLI, 'runner', '--server', server, '--workdir', path.join(tempDir(), 'work'), '--poll-ms', '100', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    return {
        exited: new Promise((resolve) => p.on('exit', (code) => resolve(code))),
        stdout: () => out,
        stderr: () => err,
        kill: (sig) => p.kill(sig),
    };
}
/** The runner's exit code, or a failure when it has not exited within `ms` (then it is killed). */
async function exitWithin(r, ms) {
    let timer;
    const hung = new Promise((resolve) => { timer = setTimeout(() => resolve('hung'), ms); });
    const code = await Promise.race([r.exited, hung]);
    clearTimeout(timer);
    if (code === 'hung') {
        r.kill('SIGKILL');
        expect.fail(`the runner did not exit within ${ms} ms; stderr:\n${r.stderr()}`);
    }
    return code;
}
describe('cairn runner stopped or stalled at each stage', function () {
    this.timeout(90_000);
    let server;
    before(async () => {
        server = await spawnServer(path.join(tempDir(), 'data'), ['--lease-seconds', '30', '--ci-timeout-seconds', '60']);
    });
    after(async () => {
        server.proc.kill('SIGTERM');
        await server.exited;
    });
    /** A repository whose main line holds `files` (ci/run.sh among them) and a queued CI job. */
    async function queued(name, files) {
        const repo = await register(server.url, name);
        const tree = path.join(tempDir(), 'tree');
        for (const [rel, text] of Object.entries(files)) {
            await fsp.mkdir(path.dirname(path.join(tree, rel)), { recursive: true });
            await fsp.writeFile(path.join(tree, rel), text);
        }
        await push({ server: server.url, repo, line: 'main', dir: tree, moveLine: true, progress: false });
        const job = (await api(server.url, 'POST', `${R(repo)}:runCi`, { json: {} })).json.job.worker_job_index;
        return { repo, job };
    }
    const projection = async (repo, job) => (await api(server.url, 'GET', `${R(repo)}/worker-jobs/${job}`)).json.job;
    let stops = 0;
    /** Start a runner through a proxy following `rule`, wait until `held` was held (or `ready`), send `sig`. */
    async function stoppedAt(rule, held, sig, files = { 'ci/run.sh': 'exit 0\n' }, ready) {
        const { repo, job } = await queued(`stop-${++stops}`, files);
        const proxy = await stallProxy(server.url, rule);
        try {
            const runner = startRunner(proxy.url, ['--repo', String(repo)]);
            if (held)
                await proxy.held(held);
            await ready?.();
            runner.kill(sig);
            const code = await exitWithin(runner, 20_000);
            return { repo, job, code, runner, stored: await projection(repo, job) };
        }
        finally {
            await proxy.close();
        }
    }
    it('SIGTERM while the snapshot fetch waits on a silent object pack: the job is failed as retryable, saying so, and the runner exits', async () => {
        const { job, code, runner, stored } = await stoppedAt((_m, url) => (url.includes('/object-packs/') ? 'silent' : false), /object-packs/, 'SIGTERM');
        expect(code, runner.stderr()).to.equal(0);
        expect(stored).to.include({ state: 'queued', attempt_count: 1, retry_status: 'retry_scheduled', error_kind: 'runner_failure' });
        expect(stored.error).to.equal('runner stopped (SIGTERM) during the snapshot fetch');
        expect(runner.stderr()).to.match(/SIGTERM: stopping job \d+\/\d+ \(attempt 1\) during the snapshot fetch/);
        expect(runner.stderr()).to.include(`/${job} (attempt 1) failed as retryable: runner stopped (SIGTERM) during the snapshot fetch`);
        expect(JSON.parse(runner.stdout().trim().split('\n').at(-1))).to.include({ worker_job_index: job, outcome: 'infrastructure_error', retryable: true });
    });
    it('SIGINT while the result is being reported to a silent server: after a short grace the job is failed as retryable and the runner exits', async () => {
        const { code, runner, stored } = await stoppedAt((_m, url) => (url.endsWith(':complete') ? 'silent' : false), /:complete/, 'SIGINT');
        expect(code, runner.stderr()).to.equal(0);
        expect(stored).to.include({ state: 'queued', attempt_count: 1, error_kind: 'runner_failure' });
        expect(stored.error).to.equal('runner stopped (SIGINT) during the report of the result: the result (succeeded) was not recorded');
        expect(runner.stderr()).to.match(/SIGINT: stopping job .* during the report of the result/);
    });
    it('SIGTERM while a claim is unanswered: the runner exits after a short grace, saying so', async () => {
        const { code, runner, stored } = await stoppedAt((_m, url) => (url.endsWith(':claim') ? 'silent' : false), /:claim/, 'SIGTERM');
        expect(code, runner.stderr()).to.equal(0);
        expect(stored).to.include({ state: 'queued', attempt_count: 0 });
        expect(runner.stderr()).to.match(/runner stopped \(SIGTERM\) while claiming; exiting/);
    });
    it('SIGTERM during a command that ignores SIGTERM: its group is killed, the job is failed as retryable, the runner exits', async () => {
        const marker = path.join(tempDir(), 'started');
        const { code, runner, stored } = await stoppedAt(() => false, null, 'SIGTERM', { 'ci/run.sh': `trap '' TERM\ntouch ${marker}\nsleep 50\n` }, () => until('the command started', () => fsp.stat(marker).then(() => true, () => false)));
        expect(code, runner.stderr()).to.equal(0);
        expect(stored).to.include({ state: 'queued', attempt_count: 1, error_kind: 'runner_failure' });
        expect(stored.error).to.equal('runner stopped (SIGTERM) during the command');
    });
    it('an object pack whose bytes stop: --stall-seconds fails the attempt with the reason and the runner goes on (--once exits 1)', async () => {
        const { repo, job } = await queued('stall-fetch', { 'ci/run.sh': 'exit 0\n' });
        const proxy = await stallProxy(server.url, (_m, url) => (url.includes('/object-packs/') ? 100 : false));
        try {
            const runner = startRunner(proxy.url, ['--repo', String(repo), '--once', '--stall-seconds', '1']);
            expect(await exitWithin(runner, 30_000), runner.stderr()).to.equal(1);
            const stored = await projection(repo, job);
            expect(stored).to.include({ state: 'queued', attempt_count: 1, error_kind: 'runner_failure' });
            expect(stored.error).to.match(/^snapshot fetch stalled: pull made no progress for 1 s \(waiting for object pack [0-9a-f]{12}…: 100 of \d+ bytes/);
            expect(runner.stderr()).to.include('failed as retryable: snapshot fetch stalled: pull made no progress for 1 s');
        }
        finally {
            await proxy.close();
        }
    });
    it('work that stalls without failing (a fetch that never settles and ignores its stop): heartbeats stop, the attempt is failed', async () => {
        const { repo, job } = await queued('stall-silent', { 'ci/run.sh': 'exit 0\n' });
        const events = [];
        const proxy = await stallProxy(server.url, (_m, url) => {
            if (url.endsWith(':heartbeat'))
                events.push('heartbeat');
            return false;
        });
        try {
            const notices = [];
            const code = await runRunner({
                server: proxy.url, repos: [repo], kinds: [7, 11], once: true, workdir: path.join(tempDir(), 'work'), pollMs: 100, feed: false,
                log: () => undefined,
                notice: (text) => {
                    notices.push(text);
                    if (/heartbeats stopped/.test(text))
                        events.push('stalled');
                },
                stopSignal: stopSignal(),
                stallSeconds: 1,
                fetch: () => new Promise(() => undefined),
            });
            expect(code).to.equal(1);
            expect(events).to.include('stalled');
            expect(events.slice(events.indexOf('stalled'))).to.deep.equal(['stalled']); // no heartbeat after the stall
            expect(notices.join('\n')).to.match(/no progress in the snapshot fetch for 2 s: heartbeats stopped, failing the attempt/);
            const stored = await until('the attempt failed', async () => {
                const j = await projection(repo, job);
                return j.state !== 'running' && j;
            });
            expect(stored).to.include({ state: 'queued', attempt_count: 1 });
            expect(stored.error).to.equal('snapshot fetch stalled: no progress in the snapshot fetch for 2 s');
        }
        finally {
            await proxy.close();
        }
    });
});
//# sourceMappingURL=runner-stages.test.js.map