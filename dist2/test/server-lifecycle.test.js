import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeRegistry } from '../lib/store/registry-file.js';
import { CLI, api, register, spawnServer, startTestServer, tempDir } from './helpers.js';
describe('startup phase', () => {
    it('answers 503 starting until activation, then swaps in the ready app', async () => {
        const server = await startTestServer(undefined, { activationDelayMs: 700 });
        try {
            const health = await api(server.url, 'GET', '/healthz');
            expect(health.status).to.equal(503);
            expect(health.json).to.deep.equal({ ready: false, status: 'starting' });
            expect(health.headers.get('retry-after')).to.equal('1');
            for (const [method, p] of [['GET', '/v1/handshake'], ['POST', '/v1/native/repository-authorities'], ['GET', '/no/such/route']]) {
                // Before activation every path answers 503, also one of no route (outside the documented interface).
                const other = await api(server.url, method, p, { ...(method === 'POST' ? { json: {} } : {}), ...(p === '/no/such/route' ? { contract: false } : {}) });
                expect(other.status).to.equal(503);
                expect(other.json).to.include({ ready: false, status: 'starting' });
                expect(other.json.error).to.match(/starting/);
                expect(other.headers.get('retry-after')).to.equal('1');
            }
            await server.ready;
            const ready = await api(server.url, 'GET', '/healthz');
            expect(ready.status).to.equal(200);
            expect(ready.json).to.deep.include({ ready: true, authority_backend: 'binary_v0', repository_identity: 'repository_index' });
            expect(ready.json.operational_capabilities).to.deep.equal({
                contract: 'svc.server.operational-capabilities.v1',
                repository_identity: 'binary-repository-index.v0',
                worker_job_identity: 'binary-worker-job-key.v0',
                runner_contracts: ['svc.runner.native-job.v3'],
            });
        }
        finally {
            await server.stop();
        }
    });
});
describe('discovery', () => {
    it('serves the handshake and the capabilities', async () => {
        const server = await startTestServer();
        try {
            const hs = await api(server.url, 'GET', '/v1/handshake');
            expect(hs.status).to.equal(200);
            const pkg = JSON.parse(await fsp.readFile(path.join(CLI, '../../package.json'), 'utf8'));
            expect(hs.json).to.include({ ready: true, contract_version: '1.0.0', package_version: pkg.version, authority_backend: 'binary_v0', repository_identity: 'repository_index' });
            expect(hs.json.supported_async_job_types).to.have.length(10);
            expect(hs.json.supported_async_job_types).to.include.members(['patchset.ci', 'repo.ci']);
            expect(hs.json.async_job_kinds.filter((k) => k.external_claim).map((k) => k.kind)).to.deep.equal([7, 11]);
            expect(hs.json.endpoints.length).to.be.greaterThan(3).and.lessThan(78);
            expect(hs.json.endpoints[0]).to.have.keys(['operation', 'method', 'path']);
            expect(hs.json.ci_capabilities.runner_job_kinds).to.deep.equal([7, 11]);
            const caps = await api(server.url, 'GET', '/v1/native/capabilities');
            expect(caps.json).to.deep.equal(hs.json.operational_capabilities);
        }
        finally {
            await server.stop();
        }
    });
});
describe('cairn serve process', () => {
    it('refuses a second server on the same data directory with a clear message', async () => {
        const data = path.join(tempDir(), 'data');
        const first = await spawnServer(data);
        try {
            const second = spawnSync(process.execPath, [CLI, 'serve', '--bind', '127.0.0.1:0', '--data', data], { encoding: 'utf8', timeout: 20000 });
            expect(second.status).to.not.equal(0);
            expect(second.stderr).to.match(/in use by another cairn process/);
            expect((await api(first.url, 'GET', '/healthz')).status).to.equal(200);
        }
        finally {
            first.proc.kill('SIGTERM');
            await first.exited;
        }
    });
    it('drains and exits 0 on SIGTERM, releasing the lock', async () => {
        const data = path.join(tempDir(), 'data');
        const first = await spawnServer(data);
        await register(first.url, 'kept');
        first.proc.kill('SIGTERM');
        expect(await first.exited).to.equal(0);
        expect(first.output()).to.match(/"msg":"stopped"/);
        const second = await spawnServer(data);
        try {
            expect((await api(second.url, 'GET', '/v1/native/repository-authorities')).json.count).to.equal(1);
        }
        finally {
            second.proc.kill('SIGINT');
            expect(await second.exited).to.equal(0);
        }
    });
    it('logs one JSON line per request without bodies or URLs', async () => {
        const data = path.join(tempDir(), 'data');
        const server = await spawnServer(data);
        await api(server.url, 'POST', '/v1/native/repository-authorities', { json: { repository_name: 'secret-name-xyz', namespace: '', policy_flags: 0 } });
        // A query parameter the route does not take (it must not reach the log): outside the documented interface.
        await api(server.url, 'GET', '/v1/native/repository-authorities/0?token=abcdef0123', { contract: false });
        server.proc.kill('SIGTERM');
        await server.exited;
        const lines = server.output().trim().split('\n').map((l) => JSON.parse(l));
        const requests = lines.filter((l) => l.msg === 'request');
        expect(requests.map((l) => [l.method, l.route, l.status])).to.deep.include.members([
            ['POST', '/v1/native/repository-authorities', 201],
            ['GET', '/v1/native/repository-authorities/{repository_index}', 200],
        ]);
        for (const l of requests)
            expect(l.ms).to.be.a('number');
        expect(server.output()).to.not.include('secret-name-xyz');
        expect(server.output()).to.not.include('abcdef0123');
        expect(lines.some((l) => l.msg === 'listening')).to.equal(true);
        expect(lines.some((l) => l.msg === 'ready')).to.equal(true);
    });
    it('keeps every acknowledged registration across kill -9 in the middle of a burst', async () => {
        const data = path.join(tempDir(), 'data');
        const server = await spawnServer(data);
        const acknowledged = [];
        let stop = false;
        const workers = Array.from({ length: 8 }, async (_, w) => {
            for (let i = 0; !stop; i++) {
                const name = `w${w}-${i}`;
                try {
                    const res = await api(server.url, 'POST', '/v1/native/repository-authorities', { json: { repository_name: name, namespace: '', policy_flags: w } });
                    if (res.status === 201)
                        acknowledged.push({ index: res.json.repository.repository_index, name });
                }
                catch {
                    return; // the server died mid-request: not acknowledged
                }
            }
        });
        // Kill in the middle of the burst, once several registrations are acknowledged.
        for (let waited = 0; acknowledged.length <= 5 && waited < 20_000; waited += 20)
            await sleep(20);
        await sleep(50);
        server.proc.kill('SIGKILL');
        stop = true;
        await Promise.all(workers);
        await server.exited;
        expect(acknowledged.length).to.be.greaterThan(5);
        const records = decodeRegistry(await fsp.readFile(path.join(data, 'registry.bin')));
        const restarted = await spawnServer(data);
        try {
            const list = (await api(restarted.url, 'GET', '/v1/native/repository-authorities')).json;
            for (const ack of acknowledged) {
                const found = list.repositories.find((r) => r.repository_index === ack.index);
                expect(found, `registration ${ack.index}`).to.exist;
                expect(found.repository_name).to.equal(ack.name);
            }
            expect(list.count).to.equal(records.length);
            expect(restarted.output()).to.not.match(/failed its checks/);
            const dirs = (await fsp.readdir(path.join(data, 'repositories'))).map(Number).sort((a, b) => a - b);
            expect(dirs).to.deep.equal(records.map((r) => r.repository_index));
        }
        finally {
            restarted.proc.kill('SIGTERM');
            await restarted.exited;
        }
    });
    it('stops with exit 3 when the data-directory lock is compromised (lock removed under it)', async function () {
        this.timeout(30_000);
        const data = path.join(tempDir(), 'data');
        const server = await spawnServer(data, ['--lock-stale-ms', '2000']);
        await fsp.rm(path.join(data, 'cairn.lock'), { recursive: true, force: true });
        const code = await Promise.race([server.exited, sleep(15_000).then(() => 'timeout')]);
        if (code === 'timeout')
            server.proc.kill('SIGKILL');
        expect(code).to.equal(3);
        expect(server.output()).to.match(/lock compromised/);
    });
});
//# sourceMappingURL=server-lifecycle.test.js.map