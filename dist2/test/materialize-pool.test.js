// The pull's materialize lanes: N-1 worker threads and the main thread. Each lane decodes,
// verifies and writes runs of objects; a damaged object fails its run naming the object, on
// either lane; a worker that dies (even without an error event) fails its runs and what is
// still to come instead of leaving the pull waiting forever.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { blobId } from '../lib/domain/content.js';
import { MaterializePool } from '../lib/client/materialize-worker.js';
import { buildPack, PACK_KIND_OBJECT } from '../lib/store/pack.js';
import { tempDir } from './helpers.js';
/** A pack of `n` objects in shared memory, and one run per object writing `f<i>.txt`. */
function packed(n) {
    const raws = Array.from({ length: n }, (_, i) => Buffer.from(`object ${i}\n`.repeat(i + 1)));
    const pack = buildPack(PACK_KIND_OBJECT, raws.map((raw) => ({ id: blobId(raw), raw })));
    const shared = new SharedArrayBuffer(pack.bytes.length);
    pack.bytes.copy(Buffer.from(shared));
    const runs = pack.entries.map((e, i) => [{ ...e, targets: [{ path: `f${i}.txt`, kind: 'file' }] }]);
    return { raws, shared, runs };
}
describe('pull materialize lanes', () => {
    for (const lanes of [1, 2]) {
        it(`with ${lanes} lane(s) (${lanes - 1} worker): writes every run, and a damaged object fails naming it`, async () => {
            const pool = new MaterializePool(lanes);
            try {
                const out = tempDir();
                const { raws, shared, runs } = packed(6);
                const results = await Promise.all(runs.map((run) => pool.run(out, run, { shared })));
                expect(results.reduce((n, r) => n + r.files, 0)).to.equal(6);
                raws.forEach((raw, i) => expect(readFileSync(path.join(out, `f${i}.txt`)).equals(raw)).to.equal(true));
                // Six runs at once reach both lanes (the worker holds two); every damaged one is refused.
                const bad = runs.map((run) => [{ ...run[0], crc32: (run[0].crc32 + 1) >>> 0, targets: [{ path: `bad-${run[0].id}.txt`, kind: 'file' }] }]);
                const outcomes = await Promise.allSettled(bad.map((run) => pool.run(out, run, { shared })));
                outcomes.forEach((o, i) => {
                    expect(o.status).to.equal('rejected');
                    expect(String(o.reason.message)).to.include(bad[i][0].id);
                });
            }
            finally {
                await pool.close();
            }
        });
    }
    it('a worker killed from outside fails its runs and later ones instead of hanging', async () => {
        const pool = new MaterializePool(2);
        const { shared, runs } = packed(2);
        const out = tempDir();
        await pool.run(out, runs[0], { shared }); // the worker is up
        await pool.workers[0].thread.terminate();
        await new Promise((r) => setTimeout(r, 50));
        const later = await Promise.allSettled([pool.run(out, runs[1], { shared })]);
        expect(later[0].status).to.equal('rejected');
        expect(String(later[0].reason.message)).to.match(/worker exited/);
        await pool.close();
    });
    it('close() refuses the runs still waiting for a lane instead of running them after it', async () => {
        const pool = new MaterializePool(1); // the main thread only: one run at a time, the rest wait
        const { shared, runs } = packed(4);
        const out = tempDir();
        const outcomes = Promise.allSettled(runs.map((run) => pool.run(out, run, { shared })));
        await pool.close();
        const settled = await outcomes;
        expect(settled.filter((o) => o.status === 'rejected').length).to.be.greaterThan(0);
        for (const o of settled)
            if (o.status === 'rejected')
                expect(String(o.reason.message)).to.match(/stopped/);
        expect((await pool.run(out, runs[0], { shared }).then(() => null, (e) => e))?.message).to.match(/stopped/);
    });
});
//# sourceMappingURL=materialize-pool.test.js.map