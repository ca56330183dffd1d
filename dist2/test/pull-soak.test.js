// Soak: 200 pulls of a git history imported with importGit (the code behind `cairn import-git`)
// in small batches, so the head's blobs lie in many object packs that end in older objects the
// head does not need: a pack's last needed run is often written before its download ends.
// The pulls run in-process through pull() (the code path of `cairn pull` and `checkout`; 200
// CLI processes would cost minutes of start-up on a small machine) with 1, 2 and 4 lanes
// (CAIRN_PULL_WORKERS), each under a deadline so a hang fails the test instead of hanging it.
// A proxy holds back the last chunk of every other object pack for 10-30 ms, to vary the
// interleavings. (The lost wake-up this guards against is forced on purpose in
// pull-intake.test.ts: on loopback the old code did not hang in these pulls.)
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { importGit } from '../lib/client/git-import.js';
import { NO_PROGRESS } from '../lib/client/progress.js';
import { api, pullWithin, register, spawnServer, tempDir } from './helpers.js';
import { commit, git, hasGit } from './git-fixture.js';
import { stallProxy } from './stall-proxy.js';
const PULLS = 200;
const LANES = [1, 2, 4];
/** Per pull; a pull of this history takes well under a second. */
const DEADLINE_MS = 30_000;
/** Deterministic text of about `n` bytes (a source file's worth). */
function text(seed, n) {
    let out = '';
    let h = createHash('sha256').update(seed).digest('hex');
    while (out.length < n) {
        h = createHash('sha256').update(h).digest('hex');
        out += `export const v${h.slice(0, 8)} = '${h}';\n`;
    }
    return out;
}
/** ~110 files, ~620 KB at the head, over 25 commits that each touch a few files. */
async function makeRepo() {
    const dir = path.join(tempDir('cairn-soak-'), 'src');
    await fsp.mkdir(dir, { recursive: true });
    git(dir, ['init', '-q', '-b', 'main']);
    const write = async (rel, body) => {
        await fsp.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
        await fsp.writeFile(path.join(dir, rel), body);
    };
    for (let i = 0; i < 100; i++)
        await write(`${['lib', 'test', 'docs', 'lib/context'][i % 4]}/file-${i}.js`, text(`f${i}`, 2000 + (i * 97) % 9000));
    git(dir, ['add', '-A']);
    commit(dir, 'initial\n');
    for (let c = 1; c <= 24; c++) {
        for (let k = 0; k < 5; k++) {
            const i = (c * 7 + k * 13) % 100;
            await write(`${['lib', 'test', 'docs', 'lib/context'][i % 4]}/file-${i}.js`, text(`f${i}-c${c}`, 2000 + (i * 97) % 9000));
        }
        await write(`history/added-${c}.js`, text(`a${c}`, 1500));
        // A large file that lives for one commit: the packs end in objects the head does not need,
        // so a pack's last needed run is written while the rest of it is still arriving.
        await fsp.rm(path.join(dir, `zz-generated-${c - 1}.js`), { force: true });
        if (c < 24)
            await write(`zz-generated-${c}.js`, text(`g${c}`, 120_000));
        git(dir, ['add', '-A']);
        commit(dir, `change ${c}\n`);
    }
    return dir;
}
(hasGit ? describe : describe.skip)('pull soak: an imported multi-pack history', function () {
    this.timeout(600_000);
    let server;
    let proxy;
    let repo;
    let head;
    let want;
    before(async () => {
        // The server in its own process, as for `cairn pull`: its bytes arrive paced by a socket,
        // not in the same event loop as the client's (where a pack's end always beat its jobs).
        server = await spawnServer(path.join(tempDir(), 'data'));
        let n = 0;
        proxy = await stallProxy(server.url, (_m, url) => (url.includes('/object-packs/') && ++n % 2 === 0 ? { lastChunkDelayMs: 10 + (n % 5) * 5 } : false));
        repo = await register(server.url, 'soak');
        const src = await makeRepo();
        await importGit({ server: server.url, repo, source: src, line: 'main', progress: NO_PROGRESS, batchCommits: 3 });
        head = (await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}/lines/main`)).json.head_snapshot_id;
        const manifest = (await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}/remote-sync/zstd-bulk/import-manifests/${head}`)).json;
        expect(manifest.object_packs.length, 'object packs in the manifest').to.be.at.least(6);
        const first = await pullWithin(DEADLINE_MS, { server: server.url, repo, snapshot: head, out: path.join(tempDir(), 'first') });
        want = { files: first.files, bytes: first.bytes };
        expect(want.files).to.equal(124);
    });
    after(async () => {
        await proxy.close();
        server.proc.kill('SIGTERM');
        await server.exited;
    });
    it(`${PULLS} pulls across ${LANES.join(', ')} lanes: every one completes with the whole head, none hangs`, async () => {
        const started = performance.now();
        const root = tempDir('cairn-soak-out-');
        const hangs = [];
        const perLanes = {};
        for (let i = 0; i < PULLS; i++) {
            const lanes = LANES[i % LANES.length];
            process.env.CAIRN_PULL_WORKERS = String(lanes);
            const out = path.join(root, `pull-${i}`);
            try {
                const pulled = await pullWithin(DEADLINE_MS, { server: proxy.url, repo, snapshot: head, out });
                expect(pulled, `pull ${i} (${lanes} lanes)`).to.deep.equal({ snapshot_id: head, ...want });
                perLanes[lanes] = (perLanes[lanes] ?? 0) + 1;
            }
            catch (err) {
                if (!/pull hung/.test(err.message))
                    throw err;
                hangs.push(`pull ${i} (${lanes} lanes)`);
            }
            finally {
                delete process.env.CAIRN_PULL_WORKERS;
                await fsp.rm(out, { recursive: true, force: true });
            }
        }
        const seconds = (performance.now() - started) / 1000;
        if (process.env.CAIRN_TEST_VERBOSE === '1')
            console.log(`      soak: ${PULLS} pulls (${JSON.stringify(perLanes)} by lanes), ${hangs.length} hangs, ${seconds.toFixed(1)} s`);
        expect(hangs, `hung pulls: ${hangs.join(', ')}`).to.deep.equal([]);
    });
});
//# sourceMappingURL=pull-soak.test.js.map