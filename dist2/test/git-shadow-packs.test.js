// The shadow repository's objects on disk (docs/git.md "The shadow repository"): an export writes
// git packs (never loose objects), with the same commit ids byte for byte; and after many small
// exports a background geometric repack keeps the number of packs bounded, off the request path
// (exports and clones answer while it runs), with nothing lost.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { importGit } from '../lib/client/git-import.js';
import { NO_PROGRESS } from '../lib/client/progress.js';
import { push } from '../lib/client/transfer.js';
import { api, cliJson, register, startTestServer, tempDir, until } from './helpers.js';
import { git, hasGit, makeHistory } from './git-fixture.js';
const R = (repo, p) => `/v1/native/repository-authorities/${repo}${p}`;
const shadowOf = (data, repo) => path.join(data, 'git-shadow', `${repo}.git`);
const gitEnv = (dir) => ({ ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: dir, GIT_TERMINAL_PROMPT: '0' });
const inShadow = (shadow, args) => execFileSync('git', ['--git-dir', shadow, ...args], { env: gitEnv(shadow), maxBuffer: 64 * 1024 * 1024, stdio: 'pipe' }).toString('latin1');
const shadowLog = (shadow, ref) => inShadow(shadow, ['log', '--first-parent', '--format=%H', ref]).trim().split('\n').reverse();
/** Loose objects (`objects/xx/…`) and packs (`objects/pack/*.pack` with their .idx) of a bare repository. */
async function objectFiles(shadow) {
    let loose = 0;
    for (const d of await fsp.readdir(path.join(shadow, 'objects'))) {
        if (/^[0-9a-f]{2}$/.test(d))
            loose += (await fsp.readdir(path.join(shadow, 'objects', d))).length;
    }
    const files = await fsp.readdir(path.join(shadow, 'objects', 'pack'));
    const packs = files.filter((f) => f.endsWith('.pack') && files.includes(f.replace(/\.pack$/, '.idx'))).length;
    return { loose, packs };
}
/** git as a client of the in-process server: asynchronous, or the server could not answer it. */
function client(args) {
    const child = spawn('git', args, { env: gitEnv(tempDir('cairn-gpk-home-')), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    return once(child, 'close').then(([code]) => ({ code: code, stderr }));
}
async function exported(url, repo, line) {
    const res = await api(url, 'POST', R(repo, '/git/exports'), { json: { line } });
    expect(res.status, res.text).to.equal(200);
    return res.json;
}
/** `count` more commits on `main` of `dir`, a few files edited in each (git fast-import: quick). */
function grow(dir, count) {
    let stream = '';
    for (let c = 0; c < count; c++) {
        const t = 1_800_000_000 + c * 600;
        const msg = `change ${c}\n`;
        stream += `commit refs/heads/main\nauthor Ada <ada@example.org> ${t} +0200\ncommitter Bob <bob@example.org> ${t + 5} -0730\ndata ${Buffer.byteLength(msg)}\n${msg}`;
        if (c === 0)
            stream += 'from refs/heads/main^0\n';
        for (const f of [c % 7, (c * 3) % 11]) {
            const text = Array.from({ length: 40 }, (_, l) => `line ${l} of file ${f}${l === c % 40 ? ` edited at ${c}` : ''}`).join('\n') + '\n';
            stream += `M 100644 inline pkg${f % 3}/file${f}.txt\ndata ${Buffer.byteLength(text)}\n${text}\n`;
        }
        stream += '\n';
    }
    git(dir, ['fast-import', '--quiet'], {}, stream);
}
(hasGit ? describe : describe.skip)('git shadow: packs, not loose objects', function () {
    this.timeout(180_000);
    let s;
    after(() => s?.stop());
    it('the first export of a many-commit history writes packs with deltas and no loose object; every commit keeps its id and its bytes', async () => {
        s = await startTestServer(undefined, { gitRefresh: false });
        const src = await makeHistory();
        grow(src, 150);
        const all = git(src, ['rev-list', 'main']).trim().split('\n');
        const first = git(src, ['rev-list', '--first-parent', '--reverse', 'main']).trim().split('\n');
        const repo = await register(s.url, 'packed-first');
        await importGit({ server: s.url, repo, source: src, line: 'main', progress: NO_PROGRESS });
        const shadow = shadowOf(s.dataDir, repo);
        const r = await exported(s.url, repo, 'main');
        expect(r.written).to.equal(all.length);
        expect(r.head_commit_id).to.equal(first[first.length - 1]);
        const files = await objectFiles(shadow);
        expect(files.loose, 'loose objects after the first export').to.equal(0);
        expect(files.packs).to.be.at.least(1);
        inShadow(shadow, ['fsck', '--strict', '--no-dangling']);
        expect(shadowLog(shadow, 'refs/heads/main')).to.deep.equal(first);
        for (const id of all)
            expect(inShadow(shadow, ['cat-file', 'commit', id]), id).to.equal(git(src, ['cat-file', 'commit', id]));
        expect(inShadow(shadow, ['rev-parse', 'main^{tree}']).trim()).to.equal(git(src, ['rev-parse', 'main^{tree}']).trim());
        // Each edited file and changed directory is stored as a delta against its previous version.
        const packs = (await fsp.readdir(path.join(shadow, 'objects', 'pack'))).filter((f) => f.endsWith('.idx'));
        const verbose = packs.map((p) => inShadow(shadow, ['verify-pack', '-v', path.join(shadow, 'objects', 'pack', p)])).join('');
        const deltas = verbose.split('\n').filter((l) => /^[0-9a-f]{40} (blob|tree) +\d+ \d+ \d+ \d+ [0-9a-f]{40}$/.test(l)).length;
        expect(deltas, 'objects stored as deltas').to.be.greaterThan(150);
        // Exporting again writes nothing; a clone has every commit.
        expect(await exported(s.url, repo, 'main')).to.deep.include({ head_commit_id: r.head_commit_id, written: 0 });
        const dest = path.join(tempDir('cairn-gpk-'), 'clone');
        const cloned = await client(['clone', '-q', '--bare', `${s.url}${R(repo, '/git/main.git')}`, dest]);
        expect(cloned.code, cloned.stderr).to.equal(0);
        expect(execFileSync('git', ['--git-dir', dest, 'rev-list', 'main'], { env: gitEnv(dest) }).toString().trim().split('\n').sort()).to.deep.equal([...all].sort());
    });
});
(hasGit ? describe : describe.skip)('git shadow: maintenance after many small exports', function () {
    this.timeout(240_000);
    let s;
    let gate;
    const saved = { git: process.env.CAIRN_GIT, packs: process.env.CAIRN_GIT_SHADOW_MAX_PACKS };
    before(async () => {
        // git as the server runs it, except that a repack waits for the test to let it go: the
        // test sees the maintenance start, works while it runs, then releases it.
        gate = tempDir('cairn-gpk-gate-');
        const real = execFileSync('sh', ['-c', 'command -v git']).toString().trim();
        const wrapper = path.join(gate, 'git');
        await fsp.writeFile(wrapper, `#!/bin/sh\ncase " $* " in *" repack "*) touch '${gate}/started'; while [ ! -e '${gate}/release' ]; do sleep 0.02; done;; esac\nexec '${real}' "$@"\n`, { mode: 0o755 });
        process.env.CAIRN_GIT = wrapper;
        process.env.CAIRN_GIT_SHADOW_MAX_PACKS = '4';
        s = await startTestServer(undefined, { gitRefresh: false });
    });
    after(async () => {
        await fsp.writeFile(path.join(gate, 'release'), '').catch(() => { });
        await s?.stop();
        for (const [k, v] of [['CAIRN_GIT', saved.git], ['CAIRN_GIT_SHADOW_MAX_PACKS', saved.packs]]) {
            if (v === undefined)
                delete process.env[k];
            else
                process.env[k] = v;
        }
    });
    it('packs stay bounded: a geometric repack runs in the background, exports and clones answer while it runs, and every commit stays', async () => {
        const src = await makeHistory();
        const repo = await register(s.url, 'small-exports');
        await importGit({ server: s.url, repo, source: src, line: 'trunk', progress: NO_PROGRESS });
        const shadow = shadowOf(s.dataDir, repo);
        await exported(s.url, repo, 'trunk');
        // The shadow as an older cairn left it, every object loose: read as it is, packed by the maintenance.
        await s.stop();
        const packDir = path.join(shadow, 'objects', 'pack');
        for (const f of (await fsp.readdir(packDir)).filter((n) => n.endsWith('.pack'))) {
            const bytes = await fsp.readFile(path.join(packDir, f));
            await fsp.rm(path.join(packDir, f));
            await fsp.rm(path.join(packDir, f.replace(/\.pack$/, '.idx')));
            execFileSync('git', ['--git-dir', shadow, 'unpack-objects', '-q'], { input: bytes, env: gitEnv(shadow), stdio: 'pipe' });
        }
        expect(await objectFiles(shadow)).to.deep.include({ packs: 0 });
        expect((await objectFiles(shadow)).loose).to.be.greaterThan(0);
        s = await startTestServer(s.dataDir, { gitRefresh: false });
        const dir = path.join(tempDir('cairn-gpk-'), 'tree');
        const line = (await api(s.url, 'GET', R(repo, '/lines/trunk'))).json;
        const head = (line.line?.head_snapshot_id ?? line.head_snapshot_id);
        await cliJson(['pull', '--server', s.url, '--repo', String(repo), '--snapshot', head, dir]);
        const land = async (i) => {
            await fsp.writeFile(path.join(dir, 'README.md'), `# small export ${i}\n`);
            await push({ server: s.url, repo, line: 'trunk', dir, moveLine: true, progress: false, message: `small ${i}` });
            const r = await exported(s.url, repo, 'trunk');
            expect(r.written, `export ${i}`).to.equal(1);
            return r.head_commit_id;
        };
        // Each small export adds one pack; past the bound of 4 the maintenance starts (and waits at the gate).
        let tip = '';
        for (let i = 0; i < 6; i++)
            tip = await land(i);
        await until('the background repack to start', () => fsp.stat(path.join(gate, 'started')).then(() => true, () => false));
        // While it runs: more exports answer, and a clone reads the shadow as it is.
        for (let i = 6; i < 12; i++)
            tip = await land(i);
        expect((await objectFiles(shadow)).packs, 'packs while the repack is held').to.be.greaterThan(4);
        const during = path.join(tempDir('cairn-gpk-'), 'during');
        const c1 = await client(['clone', '-q', '--bare', '--branch', 'trunk', `${s.url}${R(repo, '/git/trunk.git')}`, during]);
        expect(c1.code, c1.stderr).to.equal(0);
        expect(execFileSync('git', ['--git-dir', during, 'rev-parse', 'trunk'], { env: gitEnv(during) }).toString().trim()).to.equal(tip);
        const before = shadowLog(shadow, 'refs/heads/trunk');
        await fsp.writeFile(path.join(gate, 'release'), '');
        const exporter = (await s.ready).gitExporter(await (await s.ready).opened(repo));
        await exporter.maintenanceIdle();
        const files = await objectFiles(shadow);
        expect(files.loose).to.equal(0);
        expect(files.packs, 'packs after the maintenance').to.be.at.most(4);
        inShadow(shadow, ['fsck', '--strict', '--no-dangling']);
        expect(shadowLog(shadow, 'refs/heads/trunk')).to.deep.equal(before);
        // The exporter finds the repacked objects: nothing to write again, and a clone is whole.
        expect(await exported(s.url, repo, 'trunk')).to.deep.include({ head_commit_id: tip, written: 0 });
        tip = await land(12);
        const after = path.join(tempDir('cairn-gpk-'), 'after');
        const c2 = await client(['clone', '-q', '--bare', '--branch', 'trunk', `${s.url}${R(repo, '/git/trunk.git')}`, after]);
        expect(c2.code, c2.stderr).to.equal(0);
        expect(execFileSync('git', ['--git-dir', after, 'rev-parse', 'trunk'], { env: gitEnv(after) }).toString().trim()).to.equal(tip);
        execFileSync('git', ['--git-dir', after, 'fsck', '--strict'], { env: gitEnv(after), stdio: 'pipe' });
    });
});
//# sourceMappingURL=git-shadow-packs.test.js.map