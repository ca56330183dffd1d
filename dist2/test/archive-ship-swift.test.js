// `cairn serve --archive` as a child process against real Swift s3api (test/swift.ts): kill -9
// at each step of a shipping round, then a restore of what was shipped holds the newest
// manifest's commit, and a restart catches up and no manifest names a missing object; two writers (a second data directory claims the next generation and fences the
// first); `cairn archive status`; secrets never in the log or /healthz.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { S3ObjectStore, s3Settings } from '../lib/archive/s3-store.js';
import { api, cli, register, spawnServer, tempDir, until } from './helpers.js';
import { useSwift } from './swift.js';
import { commitContent, commitWorkflow, expectNewestMatches, manifests, verifyManifest } from './archive-fixture.js';
const BUCKET = 'cairn-ship';
function swiftEnv(swift) {
    return { AWS_ACCESS_KEY_ID: swift.accessKeyId, AWS_SECRET_ACCESS_KEY: swift.secretAccessKey, AWS_REGION: swift.region, AWS_ENDPOINT_URL_S3: swift.endpoint };
}
async function archiveOf(server) {
    const res = await api(server.url, 'GET', '/healthz');
    return res.status === 200 ? res.json.archive : null;
}
async function caughtUp(server, repo) {
    return until(`repository ${repo} shipped`, async () => {
        const a = await archiveOf(server);
        const row = a?.repositories.find((r) => r.repository === repo);
        return row && row.shipped_commit !== '0' && row.shipped_commit === row.committed ? a : null;
    }, 60_000);
}
describe('archive shipping: serve --archive on Swift s3api', function () {
    this.timeout(300_000);
    const swift = useSwift();
    const stores = [];
    const storeAt = (prefix) => {
        const s = new S3ObjectStore({ bucket: BUCKET, prefix }, s3Settings(swiftEnv(swift())));
        stores.push(s);
        return s;
    };
    const children = [];
    const serve = async (data, prefix, env = {}) => {
        const child = await spawnServer(data, ['--archive', `s3://${BUCKET}/${prefix}`, '--archive-interval-ms', '100', '--log-level', 'debug'], true, { ...swiftEnv(swift()), ...env });
        children.push(child);
        return child;
    };
    before(async () => {
        const admin = new S3Client({ region: swift().region, endpoint: swift().endpoint, forcePathStyle: true, credentials: { accessKeyId: swift().accessKeyId, secretAccessKey: swift().secretAccessKey } });
        await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
        admin.destroy();
    });
    afterEach(async () => {
        for (const c of children.splice(0)) {
            if (c.proc.exitCode === null && c.proc.signalCode === null) {
                c.proc.kill('SIGTERM');
                await c.exited;
            }
        }
    });
    after(() => { for (const s of stores)
        s.close(); });
    for (const point of ['archive:after-packs', 'archive:after-logs', 'archive:before-manifest']) {
        it(`kill -9 at ${point}: nothing half-shipped is named, and a restart catches up`, async () => {
            const prefix = `crash-${point.split(':')[1]}/`;
            const store = storeAt(prefix);
            const data = path.join(tempDir(), 'data');
            // Dies at the second shipping round that passes the point (the first ships the registration).
            const doomed = await serve(data, prefix, { CAIRN_TEST_CRASH_AT: `${point}>${point}` });
            const repo = await register(doomed.url, 'alpha');
            let died = false;
            void doomed.exited.then(() => { died = true; });
            try {
                await commitContent(doomed.url, repo, 'before the crash');
                await commitWorkflow(doomed.url, repo, 1);
                // One shipping round may have taken all of it: the next commit's round passes the point again.
                await until('a round shipped, or the child died', async () => {
                    if (died)
                        return true;
                    const row = (await archiveOf(doomed))?.repositories.find((r) => r.repository === repo);
                    return row && row.shipped_commit !== '0';
                }, 60_000);
                if (!died)
                    await commitWorkflow(doomed.url, repo, 2);
            }
            catch { /* the child may die under these requests: what it acknowledged is durable */ }
            expect(await doomed.exited, doomed.output()).to.equal(null); // killed by SIGKILL, no exit code
            expect(doomed.proc.signalCode).to.equal('SIGKILL');
            const shipped = await manifests(store, repo);
            for (const { key, manifest } of shipped)
                await verifyManifest(store, manifest, key);
            // A restore of what the dead writer shipped: the newest manifest's commit, and every log a
            // byte-identical prefix of the writer's (what it acknowledged up to that manifest).
            const newest = shipped.at(-1);
            if (newest) {
                const restored = path.join(tempDir(), 'restored');
                const r = await cli(['restore', '--from', `s3://${BUCKET}/${prefix}`, '--all', '--data', restored, '--json'], swiftEnv(swift()));
                expect(r.code, r.stderr).to.equal(0);
                const dir = path.join(restored, 'repositories', String(repo));
                const point = await fsp.readFile(path.join(dir, 'commit.bin'));
                const slot = point.subarray(Number(newest.manifest.commitGeneration % 2n) * 4096, Number(newest.manifest.commitGeneration % 2n) * 4096 + 512);
                expect(slot.readBigUInt64LE(12)).to.equal(newest.manifest.commitGeneration);
                for (const log of (await fsp.readdir(dir)).filter((f) => f.endsWith('.log'))) {
                    const mine = await fsp.readFile(path.join(dir, log));
                    const theirs = await fsp.readFile(path.join(data, 'repositories', String(repo), log));
                    expect(mine.equals(theirs.subarray(0, mine.length)), log).to.equal(true);
                }
            }
            const again = await serve(data, prefix);
            await commitWorkflow(again.url, repo, 3);
            await caughtUp(again, repo);
            for (const { key, manifest } of await manifests(store, repo))
                await verifyManifest(store, manifest, key);
            await expectNewestMatches(store, data, repo);
        });
    }
    it('the store hangs (every Swift process stopped) while commits go on: each commit is answered, the lag shows, and shipping catches up after', async () => {
        const prefix = 'outage/';
        const store = storeAt(prefix);
        const data = path.join(tempDir(), 'data');
        const s = await serve(data, prefix);
        const repo = await register(s.url, 'alpha');
        await commitWorkflow(s.url, repo, 1);
        await caughtUp(s, repo);
        await swift().pause();
        try {
            // The store must really hang before anything about cairn is asserted.
            expect(await swift().answers(), 'the paused store answers nothing').to.equal(false);
            for (let i = 2; i <= 6; i++)
                await commitWorkflow(s.url, repo, i);
            await until('the lag shows while the store hangs', async () => {
                const row = (await archiveOf(s))?.repositories.find((r) => r.repository === repo);
                return row && BigInt(row.committed) > BigInt(row.shipped_commit) && row.lag_seconds > 0 && row.lag_bytes > 0 ? row : null;
            }, 30_000);
        }
        finally {
            await swift().resume();
        }
        await caughtUp(s, repo);
        for (const { key, manifest } of await manifests(store, repo))
            await verifyManifest(store, manifest, key);
        await expectNewestMatches(store, data, repo);
    });
    it('a refused secret from --archive-config shows as an error, never as the secret (log, /healthz, status)', async () => {
        const secret = 'S3CR3T-cairn-do-not-log-1234567890';
        const dir = tempDir();
        const config = path.join(dir, 'archive.json');
        await fsp.writeFile(config, JSON.stringify({ region: swift().region, endpoint: swift().endpoint, access_key_id: swift().accessKeyId, secret_access_key: secret }));
        const child = await spawnServer(path.join(dir, 'data'), ['--archive', `s3://${BUCKET}/secret/`, '--archive-config', config, '--archive-interval-ms', '100', '--log-level', 'debug'], true, {});
        children.push(child);
        const a = await until('the refusal shows in /healthz', async () => { const x = await archiveOf(child); return x?.last_error ? x : null; }, 60_000);
        expect(a.state).to.equal('error');
        const status = await cli(['archive', 'status', '--server', child.url, '--json']);
        await until('the refusal is logged', async () => /cannot start shipping yet/.test(child.output()));
        for (const text of [JSON.stringify(a), status.stdout, status.stderr, child.output()])
            expect(text).to.not.include(secret);
    });
    it('two writers: a second data directory claims the next generation and fences the first; status says so; no secret shows', async () => {
        const prefix = 'two-writers/';
        const store = storeAt(prefix);
        const first = await serve(path.join(tempDir(), 'data'), prefix);
        const repo = await register(first.url, 'alpha');
        await commitContent(first.url, repo, 'one');
        const shipped = await caughtUp(first, repo);
        expect(shipped.generation).to.equal('1');
        const status = await cli(['archive', 'status', '--server', first.url, '--json']);
        expect(status.code, status.stderr).to.equal(0);
        expect(JSON.parse(status.stdout).generation).to.equal('1');
        const second = await serve(path.join(tempDir(), 'data2'), prefix);
        await until('the second claimed generation 2', async () => (await archiveOf(second))?.generation === '2');
        await commitWorkflow(first.url, repo, 1); // the first tries to ship it, and finds generation 2
        const fenced = await until('the first is fenced', async () => { const a = await archiveOf(first); return a?.state === 'fenced' ? a : null; });
        expect(fenced.last_error).to.match(/fenced/);
        await commitWorkflow(first.url, repo, 2); // commits go on
        const after = await cli(['archive', 'status', '--server', first.url, '--json']);
        expect(after.code).to.equal(1);
        expect(JSON.parse(after.stdout).state).to.equal('fenced');
        for (const m of await manifests(store, repo))
            expect(m.key).to.include('/g00000000000000000001-');
        await until('the fence is logged', async () => /newer writer holds the archive/.test(first.output()));
        const secret = swift().secretAccessKey;
        for (const c of [first, second]) {
            expect(c.output()).to.not.include(secret);
            expect(JSON.stringify((await api(c.url, 'GET', '/healthz')).json)).to.not.include(secret);
        }
    });
});
//# sourceMappingURL=archive-ship-swift.test.js.map