// The pull's intake under forced interleavings: the hooks hold a pack's download open until
// its materialize jobs have finished, or hold the jobs until every download has ended and then
// let them finish in reverse order, or fail one while another is held. Every pull runs under a
// deadline, so a lost wake-up fails the test instead of hanging it.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { StalledError } from '../lib/client/stall.js';
import { cli, pullWithin, register, startTestServer, tempDir } from './helpers.js';
import { stallProxy } from './stall-proxy.js';
async function files(dir) {
    let n = 0;
    for (const e of await fsp.readdir(dir, { withFileTypes: true, recursive: true }))
        if (e.isFile())
            n++;
    return n;
}
describe('pull intake interleavings', () => {
    let server;
    let repo;
    let head;
    const DEADLINE = 20_000;
    before(async () => {
        server = await startTestServer();
        repo = await register(server.url, 'intake');
        // A history of two snapshots in ~256 KiB packs: the manifest lists several object packs,
        // the first fetched on speculation, and the head leaves some of the old objects unused.
        const tree = path.join(tempDir(), 'tree');
        await fsp.mkdir(path.join(tree, 'sub'), { recursive: true });
        for (let i = 0; i < 24; i++)
            await fsp.writeFile(path.join(tree, i % 3 ? `f-${i}.bin` : `sub/f-${i}.bin`), randomBytes(40_000 + i * 1000));
        await push({ server: server.url, repo, line: 'dev', dir: tree, moveLine: true, progress: false, packTargetBytes: 256 * 1024 });
        for (let i = 0; i < 24; i += 2)
            await fsp.writeFile(path.join(tree, i % 3 ? `f-${i}.bin` : `sub/f-${i}.bin`), randomBytes(50_000));
        for (let i = 0; i < 6; i++)
            await fsp.writeFile(path.join(tree, `new-${i}.txt`), `new ${i}\n`.repeat(1000));
        head = await push({ server: server.url, repo, line: 'dev', dir: tree, moveLine: true, progress: false, packTargetBytes: 256 * 1024 });
    });
    after(() => server.stop());
    for (const workers of ['1', '2', '4']) {
        it(`every pack's last job finishes before its download ends (${workers} lane(s)): the pull completes`, async () => {
            process.env.CAIRN_PULL_WORKERS = workers;
            try {
                let held = 0;
                const hooks = {
                    packArrived: async (_id, jobsSettled) => {
                        held++;
                        await jobsSettled();
                    },
                };
                const out = path.join(tempDir(), 'out');
                const pulled = await pullWithin(DEADLINE, { server: server.url, repo, line: 'dev', out, hooks });
                expect(held).to.be.greaterThan(1);
                expect(pulled.snapshot_id).to.equal(head.snapshot_id);
                expect(pulled.files).to.equal(head.files);
                expect(await files(out)).to.equal(head.files);
            }
            finally {
                delete process.env.CAIRN_PULL_WORKERS;
            }
        });
    }
    it('job completions held until their pack has arrived, then let go in reverse order: the pull completes', async () => {
        const held = new Map();
        const arrived = new Set();
        let reversed = 0;
        const letGo = (id) => {
            const waiting = held.get(id) ?? [];
            if (waiting.length > 1)
                reversed++;
            for (const go of waiting.splice(0).reverse())
                go();
        };
        const hooks = {
            packArrived: async (id) => {
                arrived.add(id);
                letGo(id);
            },
            jobSettled: (id) => new Promise((resolve) => {
                held.set(id, [...(held.get(id) ?? []), resolve]);
                if (arrived.has(id))
                    letGo(id);
            }),
        };
        const out = path.join(tempDir(), 'out');
        const pulled = await pullWithin(DEADLINE, { server: server.url, repo, line: 'dev', out, hooks });
        expect(arrived.size).to.be.greaterThan(1);
        expect(pulled.files).to.equal(head.files);
        expect(await files(out)).to.equal(head.files);
        void reversed;
    });
    it('a job that fails while the other packs are held at their end fails the pull with its error', async () => {
        let failedNow;
        const failed = new Promise((resolve) => { failedNow = resolve; });
        let first = true;
        const hooks = {
            jobSettled: async () => {
                if (!first)
                    return;
                first = false;
                failedNow();
                throw new Error('disk full (test)');
            },
            packArrived: () => failed,
        };
        const out = path.join(tempDir(), 'out');
        const err = await pullWithin(DEADLINE, { server: server.url, repo, line: 'dev', out, hooks }).then(() => null, (e) => e);
        expect(err?.message).to.equal('disk full (test)');
    });
    it('a download that fails after every job of its pack has finished fails the pull (no hang)', async () => {
        let failed = false;
        const hooks = {
            packArrived: async (id, jobsSettled) => {
                await jobsSettled();
                if (!failed) {
                    failed = true;
                    throw new Error(`connection reset while reading pack ${id} (test)`);
                }
            },
        };
        const out = path.join(tempDir(), 'out');
        const err = await pullWithin(DEADLINE, { server: server.url, repo, line: 'dev', out, hooks }).then(() => null, (e) => e);
        expect(err?.message).to.match(/connection reset while reading pack [0-9a-f]+ \(test\)/);
    });
    it('a lost wake-up inside the intake (a pack that never counts as arrived) ends as a stall, not a hang', async () => {
        const out = path.join(tempDir(), 'out');
        const err = await pullWithin(DEADLINE, { server: server.url, repo, line: 'dev', out, stallSeconds: 1, hooks: { packArrived: () => new Promise(() => undefined) } })
            .then(() => null, (e) => e);
        expect(err).to.be.instanceOf(StalledError);
        expect(err.message).to.match(/^pull made no progress for 1 s \(waiting for .*materialize|object pack/);
    });
    it('an object pack whose bytes stop coming fails after --stall-seconds, naming the pack and how much came', async () => {
        const proxy = await stallProxy(server.url, (_method, url) => (url.includes('/object-packs/') ? 1000 : false));
        try {
            const out = path.join(tempDir(), 'out');
            const err = await pullWithin(DEADLINE, { server: proxy.url, repo, line: 'dev', out, stallSeconds: 1 }).then(() => null, (e) => e);
            expect(err).to.be.instanceOf(StalledError);
            expect(err.message).to.match(/^pull made no progress for 1 s \(waiting for object pack [0-9a-f]{12}…: 1000 of \d+ bytes/);
            expect(err.message).to.include('--stall-seconds or CAIRN_STALL_SECONDS');
        }
        finally {
            await proxy.close();
        }
    });
    it('a server that never answers the manifest: the same bound, saying what it waited for', async () => {
        const proxy = await stallProxy(server.url, (_method, url) => (url.includes('/import-manifests/') ? 'silent' : false));
        try {
            const err = await pullWithin(DEADLINE, { server: proxy.url, repo, line: 'dev', out: path.join(tempDir(), 'out'), stallSeconds: 1 }).then(() => null, (e) => e);
            expect(err).to.be.instanceOf(StalledError);
            expect(err.message).to.match(/no progress for 1 s \(waiting for the snapshot and its manifest\)/);
        }
        finally {
            await proxy.close();
        }
    });
    it('a signal stops a pull that is waiting on a silent pack, with the signal\'s reason', async () => {
        const proxy = await stallProxy(server.url, (_method, url) => (url.includes('/object-packs/') ? 'silent' : false));
        try {
            const stop = new AbortController();
            const pulling = pullWithin(DEADLINE, { server: proxy.url, repo, line: 'dev', out: path.join(tempDir(), 'out'), signal: stop.signal }).then(() => null, (e) => e);
            await proxy.held(/object-packs/);
            stop.abort(new Error('stopped by the test'));
            expect((await pulling)?.message).to.equal('stopped by the test');
        }
        finally {
            await proxy.close();
        }
    });
    it('cairn pull and checkout: --stall-seconds (or CAIRN_STALL_SECONDS) ends a stalled transfer with exit 1 and the reason', async () => {
        const proxy = await stallProxy(server.url, (_method, url) => (url.includes('/object-packs/') ? 1000 : false));
        try {
            const pulled = await cli(['pull', '--server', proxy.url, '--repo', String(repo), '--line', 'dev', '--stall-seconds', '1', path.join(tempDir(), 'out')]);
            expect(pulled.code, pulled.stderr).to.equal(1);
            expect(pulled.stderr).to.match(/^cairn: pull made no progress for 1 s \(waiting for object pack [0-9a-f]{12}…: 1000 of \d+ bytes/);
            expect(pulled.stderr).to.not.match(/\n\s+at /);
            const checkedOut = await cli(['checkout', '--server', proxy.url, '--repo', String(repo), '--line', 'dev', path.join(tempDir(), 'wc')], { CAIRN_STALL_SECONDS: '1' });
            expect(checkedOut.code, checkedOut.stderr).to.equal(1);
            expect(checkedOut.stderr).to.match(/pull made no progress for 1 s/);
            const bad = await cli(['pull', '--server', proxy.url, '--repo', String(repo), '--line', 'dev', '--stall-seconds', '0', path.join(tempDir(), 'out2')]);
            expect(bad.code).to.equal(2);
            expect(bad.stderr).to.match(/--stall-seconds must be a whole number of seconds/);
        }
        finally {
            await proxy.close();
        }
    });
});
//# sourceMappingURL=pull-intake.test.js.map