// The archive when its store is down or hung, on real Swift s3api (test/swift.ts): a hung
// store really stops answering (every Swift process stopped by pid: Swift's servers leave the
// launcher's process group); a writer started while the store is down ships once it answers; a
// restore and a promotion against a hung store end within their bounds and say what state they
// left, and a promotion given up on never completes by itself afterwards.
import { expect } from 'chai';
import { existsSync, promises as fsp } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { api, cli, register, spawnServer, tempDir, until } from './helpers.js';
import { useSwift } from './swift.js';
import { commitWorkflow } from './archive-fixture.js';
const BUCKET = 'cairn-outage';
const URL_ = `s3://${BUCKET}/site/`;
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
function swiftEnv(swift, endpoint = swift.endpoint) {
    return { AWS_ACCESS_KEY_ID: swift.accessKeyId, AWS_SECRET_ACCESS_KEY: swift.secretAccessKey, AWS_REGION: swift.region, AWS_ENDPOINT_URL_S3: endpoint };
}
/** Whether the S3 endpoint answers any HTTP request within `ms`. */
async function answers(endpoint, ms = 3000) {
    try {
        const res = await fetch(`${endpoint}/healthcheck`, { signal: AbortSignal.timeout(ms) });
        await res.arrayBuffer();
        return true;
    }
    catch {
        return false;
    }
}
/** A TCP forwarder on a fixed loopback port to `target`, started later: the store "comes back". */
function forwarder(port, target) {
    const server = net.createServer((inbound) => {
        const outbound = net.connect(target, '127.0.0.1');
        inbound.pipe(outbound).pipe(inbound);
        inbound.on('error', () => outbound.destroy());
        outbound.on('error', () => inbound.destroy());
    });
    return new Promise((resolve, reject) => { server.once('error', reject); server.listen(port, '127.0.0.1', () => resolve(server)); });
}
async function unusedPort() {
    const s = net.createServer();
    await new Promise((resolve) => s.listen(0, '127.0.0.1', resolve));
    const port = s.address().port;
    await new Promise((resolve) => s.close(resolve));
    return port;
}
describe('archive outages on Swift s3api: a hung store, a store down at start', function () {
    this.timeout(600_000);
    const swift = useSwift();
    const children = [];
    let writer;
    let repo;
    let config;
    before(async () => {
        const admin = new S3Client({ region: swift().region, endpoint: swift().endpoint, forcePathStyle: true, credentials: { accessKeyId: swift().accessKeyId, secretAccessKey: swift().secretAccessKey } });
        await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
        admin.destroy();
        // Short bounds, so a hung store shows within seconds (the defaults are 5 s, 20 s, 3 tries).
        config = path.join(tempDir(), 'archive-config.json');
        await fsp.writeFile(config, JSON.stringify({ connect_timeout_ms: 1000, timeout_ms: 1500, max_attempts: 2 }));
    });
    afterEach(async () => {
        if (!(await answers(swift().endpoint)))
            await swift().resume();
    });
    after(async () => {
        for (const c of children)
            if (c.proc.exitCode === null && c.proc.signalCode === null) {
                c.proc.kill('SIGTERM');
                await c.exited;
            }
    });
    it('pause() stops every Swift process: the store stops answering; resume() brings it back', async () => {
        expect(await answers(swift().endpoint)).to.equal(true);
        await swift().pause();
        expect(await answers(swift().endpoint), 'a paused store answers nothing').to.equal(false);
        await swift().resume();
        expect(await answers(swift().endpoint)).to.equal(true);
    });
    it('serve --archive started while the store is down ships once the store answers', async () => {
        const port = await unusedPort();
        const down = `http://127.0.0.1:${port}`;
        expect(await answers(down, 1000), 'nothing answers at the store\'s address yet').to.equal(false);
        writer = await spawnServer(path.join(tempDir(), 'writer'), ['--archive', URL_, '--archive-interval-ms', '100', '--archive-config', config], true, swiftEnv(swift(), down));
        children.push(writer);
        const failing = await until('the writer reports the store unreachable', async () => {
            const a = (await api(writer.url, 'GET', '/healthz')).json.archive;
            return a?.state === 'error' && a.last_error ? a : null;
        }, 60_000);
        expect(failing.generation).to.equal('0');
        repo = await register(writer.url, 'alpha');
        await commitWorkflow(writer.url, repo, 1);
        // The store comes back at the same address.
        const proxy = await forwarder(port, Number(new URL(swift().endpoint).port));
        try {
            await until('the writer claims generation 1 and ships what it committed', async () => {
                const a = (await api(writer.url, 'GET', '/healthz')).json.archive;
                const row = a?.repositories.find((r) => r.repository === repo);
                return a?.generation === '1' && row && row.shipped_commit !== '0' && row.shipped_commit === row.committed ? a : null;
            }, 120_000);
        }
        finally {
            writer.proc.kill('SIGTERM');
            await writer.exited;
            await new Promise((resolve) => proxy.close(resolve));
        }
    });
    it('a restore against a hung store fails within its bounds, saying that the target was not written', async () => {
        const dir = path.join(tempDir(), 'restored');
        await swift().pause();
        expect(await answers(swift().endpoint), 'the store is hung').to.equal(false);
        const r = await cli(['restore', '--from', URL_, '--data', dir, '--archive-config', config, '--json'], swiftEnv(swift()));
        await swift().resume();
        expect(r.code, r.stderr).to.not.equal(0);
        expect(r.stderr).to.match(/no answer from the object store/);
        expect(r.stderr).to.match(/was not written/);
        expect(existsSync(dir)).to.equal(false);
        expect((await fsp.readdir(path.dirname(dir))).filter((f) => f.includes('.tmp-'))).to.deep.equal([]);
    });
    it('cairn promote against a hung store gives up, says the standby still follows, and the promotion never completes by itself', async () => {
        const follower = await spawnServer(path.join(tempDir(), 'standby'), ['--follow', URL_, '--follow-interval-ms', '100', '--archive-config', config], true, swiftEnv(swift()));
        children.push(follower);
        await until('the standby applied the archive', async () => (await api(follower.url, 'GET', '/healthz')).json.follow?.repositories.some((r) => r.repository === repo), 120_000);
        const claimsBefore = await listClaims(swift());
        await swift().pause();
        expect(await answers(swift().endpoint), 'the store is hung').to.equal(false);
        const p = await cli(['promote', '--server', follower.url, '--timeout', '1']);
        expect(p.code, p.stderr).to.equal(1);
        expect(p.stderr).to.match(/gave up after 1 s/);
        expect(p.stderr).to.match(/not promoted: it still follows/);
        await swift().resume();
        // The standby follows again (a poll succeeded after the store came back), still read-only, and claimed nothing.
        await until('the standby follows again', async () => {
            const f = (await api(follower.url, 'GET', '/healthz')).json.follow;
            return f?.state === 'following' && f.last_error === null;
        }, 120_000);
        const write = await api(follower.url, 'POST', R(repo, '/tasks'), { json: { title: 'no', intent: 'i' }, contract: false });
        expect(write.status, write.text).to.equal(503);
        expect(await listClaims(swift())).to.deep.equal(claimsBefore);
        expect((await api(follower.url, 'GET', '/healthz')).json.follow.state).to.equal('following');
    });
});
async function listClaims(swift) {
    const { S3ObjectStore, s3Settings } = await import('../lib/archive/s3-store.js');
    const store = new S3ObjectStore({ bucket: BUCKET, prefix: 'site/' }, s3Settings(swiftEnv(swift)));
    try {
        return (await store.list('generations/')).objects.map((o) => o.key);
    }
    finally {
        store.close();
    }
}
//# sourceMappingURL=archive-outage-swift.test.js.map