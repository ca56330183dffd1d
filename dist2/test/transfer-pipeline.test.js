// The push and pull pipelines with many small packs: push copies objects into reused slabs
// that move to the pack worker and back; pull hands out runs of objects while their pack is
// still arriving, fetches packs on speculation before the trees are read, and verifies every
// object it writes.
import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { pull, push } from '../lib/client/transfer.js';
import { cli, register, spawnServer, startTestServer, tempDir } from './helpers.js';
/** Every path below `root` with its kind and content hash. */
async function digestTree(root) {
    const out = {};
    const walk = async (dir, rel) => {
        for (const name of (await fsp.readdir(dir)).sort()) {
            const abs = path.join(dir, name);
            const r = rel ? `${rel}/${name}` : name;
            const st = await fsp.lstat(abs);
            if (st.isSymbolicLink())
                out[r] = `link:${await fsp.readlink(abs)}`;
            else if (st.isDirectory()) {
                out[r] = 'dir';
                await walk(abs, r);
            }
            else
                out[r] = `${st.mode & 0o111 ? 'exec' : 'file'}:${createHash('sha256').update(await fsp.readFile(abs)).digest('hex')}`;
        }
    };
    await walk(root, '');
    return out;
}
/**
 * ~260 files over a few directories: empty files, duplicates under other names, objects larger
 * than a pull job (2 MiB) and than a push slab's slack, an executable and a symlink.
 */
async function makeTree(root) {
    for (let d = 0; d < 6; d++) {
        const dir = path.join(root, `dir-${d}`, d % 2 ? 'sub' : '');
        await fsp.mkdir(dir, { recursive: true });
        for (let f = 0; f < 40; f++)
            await fsp.writeFile(path.join(dir, `f-${f}.txt`), `${d}/${f}\n`.repeat(1 + ((d * 40 + f) * 37) % 900));
    }
    await fsp.writeFile(path.join(root, 'empty'), '');
    await fsp.writeFile(path.join(root, 'dir-0/empty-too'), '');
    const big = randomBytes(3 * 1024 * 1024);
    await fsp.writeFile(path.join(root, 'big.bin'), big);
    await fsp.writeFile(path.join(root, 'dir-3/same-as-big.bin'), big);
    await fsp.writeFile(path.join(root, 'huge.bin'), randomBytes(6 * 1024 * 1024));
    await fsp.writeFile(path.join(root, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    await fsp.symlink('big.bin', path.join(root, 'link'));
    for (let i = 0; i < 12; i++)
        await fsp.writeFile(path.join(root, `rand-${i}.bin`), randomBytes(100_000 + i * 50_000));
}
describe('push and pull pipelines with many packs', () => {
    let server;
    let repo;
    let tree;
    before(async () => {
        server = await startTestServer();
        repo = await register(server.url, 'pipeline');
        tree = path.join(tempDir(), 'tree');
        await makeTree(tree);
    });
    after(() => server.stop());
    it('round-trips through 1 MiB packs: every file, mode and link, with one worker, two and three', async () => {
        const pushed = await push({ server: server.url, repo, line: 'dev', dir: tree, moveLine: true, progress: false, packTargetBytes: 1024 * 1024 });
        expect(pushed.uploaded_packs).to.be.greaterThan(5); // trees + many object packs
        expect(pushed.files).to.equal(6 * 40 + 2 + 3 + 1 + 1 + 12);
        const want = await digestTree(tree);
        for (const workers of ['1', '2', '3']) {
            process.env.CAIRN_PULL_WORKERS = workers;
            try {
                const out = path.join(tempDir(), `out-${workers}`);
                const pulled = await pull({ server: server.url, repo, line: 'dev', out });
                expect(pulled.snapshot_id).to.equal(pushed.snapshot_id);
                expect(pulled.files).to.equal(pushed.files);
                expect(pulled.bytes).to.equal(pushed.bytes);
                expect(await digestTree(out)).to.deep.equal(want);
            }
            finally {
                delete process.env.CAIRN_PULL_WORKERS;
            }
        }
    });
    it('pulls the head of a history exactly; a pack fetched on speculation that the head does not need is dropped', async () => {
        // A first snapshot whose content the second replaces entirely: the manifest lists both
        // snapshots' packs, the head's first; the old ones must not end up in the output.
        const old = path.join(tempDir(), 'old');
        await fsp.mkdir(old);
        for (let i = 0; i < 30; i++)
            await fsp.writeFile(path.join(old, `old-${i}.bin`), randomBytes(200_000));
        await push({ server: server.url, repo, line: 'history', dir: old, moveLine: true, progress: false, packTargetBytes: 512 * 1024 });
        const second = await push({ server: server.url, repo, line: 'history', dir: tree, moveLine: true, progress: false, packTargetBytes: 1024 * 1024 });
        expect(second.parent_snapshot_ids).to.have.length(1);
        const out = path.join(tempDir(), 'head');
        const pulled = await pull({ server: server.url, repo, line: 'history', out });
        expect(pulled.snapshot_id).to.equal(second.snapshot_id);
        expect(await digestTree(out)).to.deep.equal(await digestTree(tree));
        // An emptied head: the manifest's first pack (fetched on speculation) holds only old objects.
        const empty = path.join(tempDir(), 'empty');
        await fsp.mkdir(empty);
        const third = await push({ server: server.url, repo, line: 'history', dir: empty, moveLine: true, progress: false });
        const none = path.join(tempDir(), 'none');
        const pulledEmpty = await pull({ server: server.url, repo, line: 'history', out: none });
        expect(pulledEmpty).to.deep.equal({ snapshot_id: third.snapshot_id, files: 0, bytes: 0 });
        expect(await fsp.readdir(none)).to.deep.equal([]);
    });
    it('a pushed tree is the same snapshot whatever the pack size (slabs reused across packs keep no stale bytes)', async () => {
        const a = await push({ server: server.url, repo, line: 'small-packs', dir: tree, moveLine: false, progress: false, packTargetBytes: 64 * 1024 });
        const b = await push({ server: server.url, repo, line: 'big-packs', dir: tree, moveLine: false, progress: false, packTargetBytes: 64 * 1024 * 1024 });
        expect(a.root_tree_id).to.equal(b.root_tree_id);
    });
});
describe('pull verifies what it writes', () => {
    it('refuses an object whose pack bytes were damaged on the server, naming the object', async () => {
        const data = path.join(tempDir(), 'data');
        let server = await spawnServer(data);
        const repo = await register(server.url, 'damaged');
        const tree = path.join(tempDir(), 'tree');
        await fsp.mkdir(tree);
        for (let i = 0; i < 20; i++)
            await fsp.writeFile(path.join(tree, `f-${i}.bin`), randomBytes(300_000));
        const pushed = await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'dev', tree]);
        expect(pushed.code, pushed.stderr).to.equal(0);
        server.proc.kill('SIGTERM');
        await server.exited;
        const packs = path.join(data, `repositories/${repo}/packs/objects`);
        const [pack] = await fsp.readdir(packs);
        const file = path.join(packs, pack);
        const bytes = await fsp.readFile(file);
        bytes[bytes.length - 1000] ^= 0x5a; // inside the last object's frame
        await fsp.writeFile(file, bytes);
        server = await spawnServer(data);
        try {
            const out = path.join(tempDir(), 'out');
            const pulled = await cli(['pull', '--server', server.url, '--repo', String(repo), '--line', 'dev', out]);
            expect(pulled.code).to.equal(1);
            expect(pulled.stderr).to.match(/object [0-9a-f]{64}: (frame CRC-32 mismatch|zstd frame does not decode|content does not hash)/);
            expect(pulled.stderr).to.not.match(/\n\s+at /); // no stack trace
        }
        finally {
            server.proc.kill('SIGTERM');
            await server.exited;
        }
    });
});
//# sourceMappingURL=transfer-pipeline.test.js.map