import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { push } from '../lib/client/transfer.js';
import { CLI, api, register, spawnServer, tempDir } from './helpers.js';
describe('cairn runner on SIGTERM', () => {
    it('fails the running job as retryable (requeued, attempt counted), kills the command, and exits', async function () {
        this.timeout(60_000);
        const server = await spawnServer(path.join(tempDir(), 'data'), ['--lease-seconds', '30', '--ci-timeout-seconds', '60']);
        try {
            const repo = await register(server.url, 'sigterm');
            const tree = path.join(tempDir(), 'tree');
            await fsp.mkdir(path.join(tree, 'ci'), { recursive: true });
            const marker = path.join(tempDir(), 'started');
            await fsp.writeFile(path.join(tree, 'ci/run.sh'), `#!/bin/sh\ntouch ${marker}\nsleep 50\n`);
            await push({ server: server.url, repo, line: 'main', dir: tree, moveLine: true, progress: false });
            const job = (await api(server.url, 'POST', `/v1/native/repository-authorities/${repo}:runCi`, { json: {} })).json.job.worker_job_index;
            const runner = spawn(process.execPath, [CLI, 'runner', '--server', server.url, '--workdir', path.join(tempDir(), 'work'), '--poll-ms', '100'], { stdio: ['ignore', 'pipe', 'pipe'] });
            let stdout = '';
            runner.stdout.on('data', (d) => { stdout += d; });
            const exited = new Promise((resolve) => runner.on('exit', (code) => resolve(code)));
            for (let i = 0; i < 100; i++) {
                if (await fsp.stat(marker).then(() => true, () => false))
                    break;
                await sleep(100);
            }
            const started = Date.now();
            runner.kill('SIGTERM');
            expect(await exited).to.equal(0);
            expect(Date.now() - started).to.be.lessThan(10_000); // did not wait for `sleep 50`
            const projection = (await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}/worker-jobs/${job}`)).json.job;
            expect(projection).to.include({ state: 'queued', attempt_count: 1, retry_status: 'retry_scheduled', error_kind: 'runner_failure' });
            expect(projection.error).to.match(/SIGTERM/);
            const line = JSON.parse(stdout.trim().split('\n').at(-1));
            expect(line).to.include({ worker_job_index: job, outcome: 'infrastructure_error', retryable: true });
        }
        finally {
            server.proc.kill('SIGTERM');
            await server.exited;
        }
    });
});
//# sourceMappingURL=runner-sigterm.test.js.map