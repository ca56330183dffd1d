// One archive is one archive however its URL is spelled, and a writer a newer one fenced stays
// fenced (lib/authority/archiving.ts, DATA/archive.json, `cairn archive reclaim`), through a
// real server on the in-memory store of test/memory-store.ts. The old writer of a failover,
// restarted with another spelling of the archive's URL (or another URL that reaches the same
// stored archive), must not claim a generation: that would fence the promoted writer and make
// the old writer's history the newest in the archive.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { api, cli, register, startTestServer, tempDir, until } from './helpers.js';
import { MemoryObjectStore } from './memory-store.js';
import { allKeys, commitContent, commitWorkflow } from './archive-fixture.js';
import { claimGeneration } from '../lib/archive/generations.js';
import { readArchiveFile, writeArchiveFile } from '../lib/archive/archive-file.js';
import { startServer } from '../lib/cli/serve.js';
import { pino } from 'pino';
const archiveOf = async (s) => (await api(s.url, 'GET', '/healthz')).json.archive;
const archiveFile = async (dir) => JSON.parse(await fsp.readFile(path.join(dir, 'archive.json'), 'utf8'));
const claims = (store) => allKeys(store, 'generations/');
const claimReason = async (store, gen) => JSON.parse(store.objects.get(`generations/${String(gen).padStart(20, '0')}`).bytes.toString('utf8')).reason;
describe('archive identity: one archive whatever its spelling; a fenced writer stays fenced', function () {
    this.timeout(120_000);
    const running = [];
    const start = async (dataDir, url, store) => {
        const s = await startTestServer(dataDir, { archive: { url, store, intervalMs: 50 } });
        running.push(s);
        return s;
    };
    const stop = async (s) => {
        running.splice(running.indexOf(s), 1);
        await s.stop();
    };
    afterEach(async () => { for (const s of running.splice(0))
        await s.stop(); });
    /** A writer that shipped one commit under generation 1 to `url`, stopped. */
    const shippedWriter = async (store, url) => {
        const dataDir = path.join(tempDir(), 'old-writer');
        const s = await start(dataDir, url, store);
        const repo = await register(s.url, 'alpha');
        await commitContent(s.url, repo, 'acknowledged before the failover');
        await until('shipped', async () => {
            const row = (await archiveOf(s))?.repositories.find((r) => r.repository === repo);
            return row && row.shipped_commit !== '0' && row.shipped_commit === row.committed;
        });
        expect((await archiveOf(s)).generation).to.equal('1');
        await stop(s);
        return { dataDir, repo };
    };
    it('after a promotion, the old writer restarted with another spelling of the URL is fenced and claims nothing, until cairn archive reclaim', async () => {
        const store = new MemoryObjectStore(false); // like Swift: no conditional writes
        const { dataDir, repo } = await shippedWriter(store, 's3://cairn-test/site/');
        // The standby's promotion: it claims the next generation of the same archive.
        expect((await claimGeneration(store, 'promote', false)).generation).to.equal(2n);
        for (const spelling of ['s3://cairn-test/site', 'S3://cairn-test//site', 's3://cairn-test/site//']) {
            const old = await start(dataDir, spelling, store);
            const a = await until(`the old writer (${spelling}) reports fenced`, async () => { const x = await archiveOf(old); return x?.state === 'fenced' ? x : null; });
            expect(a.generation, spelling).to.equal('1');
            expect(a.url, 'one spelling').to.equal('s3://cairn-test/site/');
            expect(a.last_error).to.match(/fenced/);
            await commitWorkflow(old.url, repo, 1); // commits go on locally, not to the archive
            await stop(old);
            expect(await claims(store), `no claim after a start with ${spelling}`).to.deep.equal(['generations/00000000000000000001', 'generations/00000000000000000002']);
            const file = await archiveFile(dataDir);
            expect(file.fenced?.by, 'the fence is recorded in archive.json').to.equal('2');
        }
        // Even another URL altogether does not claim: the fence is the directory's, until an operator says otherwise.
        const elsewhere = await start(dataDir, 's3://another-bucket/x/', new MemoryObjectStore(false));
        await until('fenced whatever the URL', async () => (await archiveOf(elsewhere))?.state === 'fenced');
        await stop(elsewhere);
        // The explicit operator command takes the archive back: the next start claims generation 3 ("reclaim").
        const r = await cli(['archive', 'reclaim', '--data', dataDir, '--json']);
        expect(r.code, r.stderr).to.equal(0);
        expect(JSON.parse(r.stdout).was.fenced.by).to.equal('2');
        const back = await start(dataDir, 's3://cairn-test/site', store);
        await until('the reclaimed writer ships under generation 3', async () => {
            const x = await archiveOf(back);
            return x?.generation === '3' && x.repositories.some((row) => row.repository === repo && row.shipped_commit === row.committed && row.shipped_commit !== '0');
        });
        expect(await claimReason(store, 3)).to.equal('reclaim');
        expect((await archiveFile(dataDir)).fenced).to.equal(undefined);
    });
    it('another URL that reaches the same stored archive is the same archive (its id): the writer keeps its generation', async () => {
        const store = new MemoryObjectStore(false);
        const { dataDir, repo } = await shippedWriter(store, 's3://cairn-test/site/');
        const id = (await archiveFile(dataDir)).archive_id;
        expect(id, 'archive.json records the id stored in the archive').to.match(/^[0-9a-f]{32}$/);
        expect(JSON.parse(store.objects.get('archive-id').bytes.toString('utf8')).archive_id).to.equal(id);
        // The same store reached under another name (an alias bucket, another endpoint): no new claim.
        const s = await start(dataDir, 's3://cairn-alias/other/', store);
        await commitWorkflow(s.url, repo, 1);
        await until('ships on under generation 1', async () => {
            const x = await archiveOf(s);
            return x?.generation === '1' && x.repositories.some((row) => row.repository === repo && row.shipped_commit === row.committed);
        });
        expect(await claims(store)).to.deep.equal(['generations/00000000000000000001']);
    });
    it('a writer fenced while it runs records the fence; a restart with the same URL stays fenced and claims nothing', async () => {
        const store = new MemoryObjectStore(false);
        const dataDir = path.join(tempDir(), 'writer');
        const s = await start(dataDir, 's3://cairn-test/site/', store);
        const repo = await register(s.url, 'alpha');
        await commitWorkflow(s.url, repo, 1);
        await until('shipped', async () => (await archiveOf(s))?.repositories.some((row) => row.shipped_commit !== '0'));
        await claimGeneration(store, 'promote', false);
        await commitWorkflow(s.url, repo, 2);
        await until('fenced', async () => (await archiveOf(s))?.state === 'fenced');
        await until('the fence recorded', async () => (await archiveFile(dataDir)).fenced?.by === '2');
        await stop(s);
        const again = await start(dataDir, 's3://cairn-test/site/', store);
        const a = await until('fenced at start, from archive.json', async () => { const x = await archiveOf(again); return x?.state === 'fenced' ? x : null; });
        expect(a.last_error).to.match(/cairn archive reclaim/);
        expect(await claims(store)).to.have.length(2);
    });
    it('cairn archive reclaim refuses a directory without archive.json and one a server runs on, changing nothing', async () => {
        const empty = tempDir();
        const none = await cli(['archive', 'reclaim', '--data', empty]);
        expect(none.code).to.equal(2);
        expect(none.stderr).to.match(/no archive\.json/);
        const store = new MemoryObjectStore(false);
        const dataDir = path.join(tempDir(), 'busy');
        await start(dataDir, 's3://cairn-test/site/', store);
        await until('claimed and recorded', async () => (await archiveFile(dataDir).catch(() => null))?.generation === '1');
        const before = await fsp.readFile(path.join(dataDir, 'archive.json'), 'utf8');
        const busy = await cli(['archive', 'reclaim', '--data', dataDir]);
        expect(busy.code).to.equal(4);
        expect(busy.stderr).to.match(/in use by another cairn process/);
        expect(await fsp.readFile(path.join(dataDir, 'archive.json'), 'utf8')).to.equal(before);
    });
    /** A data directory whose archive.json records a fence (generation 2 fenced generation 1). */
    const fencedDir = async (store) => {
        const { dataDir } = await shippedWriter(store, 's3://cairn-test/site/');
        await claimGeneration(store, 'promote', false);
        const s = await start(dataDir, 's3://cairn-test/site/', store);
        await until('fenced at start', async () => (await archiveOf(s))?.state === 'fenced');
        await stop(s);
        expect((await archiveFile(dataDir)).fenced?.by).to.equal('2');
        return dataDir;
    };
    it('a fenced data directory cannot follow (and so be promoted) until cairn archive reclaim: serve --follow refuses it, claiming nothing', async () => {
        const store = new MemoryObjectStore(false);
        const dataDir = await fencedDir(store);
        const before = await fsp.readFile(path.join(dataDir, 'archive.json'), 'utf8');
        let follower = null;
        try {
            follower = await startServer({ host: '127.0.0.1', port: 0, dataDir, log: pino({ level: 'silent' }), ui: false, follow: { url: 's3://cairn-test/site/', store, intervalMs: 50 } });
            const err = await follower.ready.then(() => null, (e) => e);
            expect(err?.message, 'the start is refused').to.match(/fenced.*cairn archive reclaim/);
        }
        finally {
            await follower?.stop();
        }
        expect(await claims(store)).to.deep.equal(['generations/00000000000000000001', 'generations/00000000000000000002']);
        expect(await fsp.readFile(path.join(dataDir, 'archive.json'), 'utf8')).to.equal(before);
        // The command line says so as a usage error, before it reaches the archive.
        const r = await cli(['serve', '--data', dataDir, '--bind', '127.0.0.1:0', '--follow', 's3://cairn-test/site/']);
        expect(r.code, r.stderr).to.equal(2);
        expect(r.stderr).to.match(/fenced.*cairn archive reclaim/);
        expect(await fsp.readFile(path.join(dataDir, 'archive.json'), 'utf8')).to.equal(before);
    });
    it('a follower whose directory is fenced under it is not promoted, and no rewrite of archive.json drops a fence (only reclaim clears it)', async () => {
        const store = new MemoryObjectStore(false);
        const dataDir = path.join(tempDir(), 'standby');
        const follower = await startServer({ host: '127.0.0.1', port: 0, dataDir, log: pino({ level: 'silent' }), ui: false, follow: { url: 's3://cairn-test/site/', store, intervalMs: 50 } });
        try {
            await follower.ready;
            // Forced interleaving: the directory records a fence while the server follows.
            const fence = { by: '7', at: new Date().toISOString(), why: 'fenced: generation 7 was claimed after 6' };
            await writeArchiveFile(path.join(dataDir, 'archive.json'), { url: 's3://cairn-test/site/', generation: '6', fenced: fence });
            const res = await api(follower.url, 'POST', '/archive/promote', { contract: false });
            expect(res.status, res.text).to.not.equal(200);
            expect(res.json.error).to.match(/fenced.*cairn archive reclaim/);
            expect(await claims(store), 'nothing claimed').to.deep.equal([]);
            expect((await archiveFile(dataDir)).fenced).to.deep.equal(fence);
        }
        finally {
            await follower.stop();
        }
        // Any rewrite keeps the fence; only the explicit clear (cairn archive reclaim) drops it.
        const file = path.join(tempDir(), 'archive.json');
        const fence = { by: '3', at: '2026-01-01T00:00:00.000Z', why: 'fenced' };
        await writeArchiveFile(file, { url: 's3://a/b/', generation: '2', fenced: fence });
        await writeArchiveFile(file, { url: 's3://a/b/', generation: '9' });
        expect(await readArchiveFile(file)).to.deep.equal({ url: 's3://a/b/', generation: '9', fenced: fence });
        await writeArchiveFile(file, { url: 's3://a/b/', generation: '0' }, { clearFence: true });
        expect(await readArchiveFile(file)).to.deep.equal({ url: 's3://a/b/', generation: '0' });
    });
});
//# sourceMappingURL=archive-identity.test.js.map