// A warm standby (cairn serve --follow) of a writer that ships (cairn serve --archive), both on a
// real S3-compatible store (Swift s3api, test/swift.ts): the follower tracks the writer under a
// small write load and answers the same reads byte for byte; it refuses writes with 503; a
// restore of the writer's archive answers the same reads too; `cairn promote` makes the follower
// the writer (a write succeeds, it ships under a new generation) and the old writer is fenced.
import { expect } from 'chai';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { useSwift } from './swift.js';
import { api, cli, register, spawnServer, tempDir, until } from './helpers.js';
import { reads, write } from './archive-reads.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const URL_ = 's3://cairn-follow/team/';
function swiftEnv(swift) {
    return { AWS_ACCESS_KEY_ID: swift.accessKeyId, AWS_SECRET_ACCESS_KEY: swift.secretAccessKey, AWS_REGION: swift.region, AWS_ENDPOINT_URL_S3: swift.endpoint };
}
const health = async (url) => (await api(url, 'GET', '/healthz')).json;
describe('cairn serve --follow and cairn promote: a warm standby on Swift s3api', function () {
    this.timeout(600_000);
    const swift = useSwift();
    let env;
    let writer;
    let follower;
    const repos = [];
    const children = [];
    /** The writer shipped everything it committed, and the follower applied exactly that. */
    const caughtUp = async () => {
        const shipped = await until('the writer to ship every commit', async () => {
            const h = await health(writer.url);
            const rs = h.archive?.repositories ?? [];
            return rs.length === repos.length && rs.every((r) => r.shipped_commit === r.committed && r.committed !== '0') ? rs : null;
        }, 120_000);
        await until('the follower to apply the shipped commits', async () => {
            const h = await health(follower.url);
            const applied = new Map((h.follow?.repositories ?? []).map((r) => [r.repository, r.applied_commit]));
            return shipped.every((r) => applied.get(r.repository) === r.shipped_commit);
        }, 120_000);
    };
    before(async () => {
        env = swiftEnv(swift());
        const admin = new S3Client({ region: swift().region, endpoint: swift().endpoint, forcePathStyle: true, credentials: { accessKeyId: swift().accessKeyId, secretAccessKey: swift().secretAccessKey } });
        await admin.send(new CreateBucketCommand({ Bucket: 'cairn-follow' }));
        admin.destroy();
        writer = await spawnServer(path.join(tempDir(), 'writer'), ['--no-ui', '--archive', URL_, '--archive-interval-ms', '200'], true, env);
        children.push(writer);
        repos.push(await register(writer.url, 'alpha', 'al'));
        repos.push(await register(writer.url, 'beta'));
        for (const r of repos)
            await write(writer.url, r, 1);
        follower = await spawnServer(path.join(tempDir(), 'follower'), ['--no-ui', '--follow', URL_, '--follow-interval-ms', '200'], true, env);
        children.push(follower);
    });
    after(() => {
        for (const c of children)
            if (c.proc.exitCode === null)
                c.proc.kill('SIGKILL');
    });
    it('tracks the writer under a write load and answers the same reads, byte for byte', async () => {
        // Writes go on while the follower follows.
        for (let round = 2; round <= 4; round++)
            for (const r of repos)
                await write(writer.url, r, round);
        await caughtUp();
        for (const r of repos)
            expect(await reads(follower.url, r), `repository ${r}`).to.deep.equal(await reads(writer.url, r));
        const h = await health(follower.url);
        expect(h.follow.state).to.equal('following');
        expect(h.follow.last_error).to.equal(null);
    });
    it('refuses every write with 503 naming the archive, and changes nothing', async () => {
        await caughtUp();
        const before = await reads(follower.url, repos[0]);
        const res = await api(follower.url, 'POST', R(repos[0], '/tasks'), { json: { title: 'no', intent: 'i' }, contract: false });
        expect(res.status, res.text).to.equal(503);
        expect(res.json.error).to.match(/^read-only follower of s3:\/\/cairn-follow\/team\//);
        const reg = await api(follower.url, 'POST', '/v1/native/repository-authorities', { json: { repository_name: 'gamma', namespace: '', policy_flags: 0 }, contract: false });
        expect(reg.status, reg.text).to.equal(503);
        expect(await reads(follower.url, repos[0])).to.deep.equal(before);
    });
    it('a restore of what the writer shipped answers the same reads', async () => {
        await caughtUp();
        const dir = path.join(tempDir(), 'restored');
        const r = await cli(['restore', '--from', URL_, '--data', dir, '--json'], env);
        expect(r.code, r.stderr).to.equal(0);
        const restored = await spawnServer(dir, ['--no-ui']);
        children.push(restored);
        for (const repo of repos)
            expect(await reads(restored.url, repo)).to.deep.equal(await reads(writer.url, repo));
        restored.proc.kill('SIGTERM');
        await restored.exited;
    });
    it('cairn promote makes the follower the writer; the old writer is fenced', async () => {
        await caughtUp();
        const oldGeneration = (await health(writer.url)).archive.generation;
        const promoted = await cli(['promote', '--server', follower.url, '--json']);
        expect(promoted.code, promoted.stderr).to.equal(0);
        const p = JSON.parse(promoted.stdout);
        expect(BigInt(p.generation) > BigInt(oldGeneration)).to.equal(true);
        expect(p.url).to.equal(URL_);
        // Writable now: a write succeeds, and it ships under the new generation.
        const res = await api(follower.url, 'POST', R(repos[0], '/tasks'), { json: { title: 'after promotion', intent: 'i' } });
        expect(res.status, res.text).to.equal(200);
        await until('the promoted server to ship its write', async () => {
            const h = await health(follower.url);
            const rs = h.archive?.repositories ?? [];
            return h.archive?.generation === p.generation && rs.length === repos.length && rs.every((r) => r.shipped_commit === r.committed) ? h : null;
        }, 120_000);
        // The old writer commits (shipping never fails a commit) but stops shipping.
        const late = await api(writer.url, 'POST', R(repos[0], '/tasks'), { json: { title: 'too late', intent: 'i' } });
        expect(late.status, late.text).to.equal(200);
        await until('the old writer to be fenced', async () => (await health(writer.url)).archive?.state === 'fenced', 120_000);
        // A second promotion is refused.
        const again = await api(follower.url, 'POST', '/archive/promote', { contract: false });
        expect(again.status, again.text).to.equal(409);
    });
});
//# sourceMappingURL=archive-follow.test.js.map