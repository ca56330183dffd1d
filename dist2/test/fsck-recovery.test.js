// cairn fsck after a crash: what the next start's recovery removes (temp files of writes cut
// short: a pack upload, a new pack, an index segment, a log rewrite, a registry write) is a note
// saying so, not a problem; fsck exits 0 when there is nothing else. A real kill -9 in the
// middle of a pack upload, and each kind of leftover placed on purpose.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { blobId } from '../lib/domain/content.js';
import { buildPack, PACK_KIND_OBJECT } from '../lib/store/pack.js';
import { cli, register, spawnServer, tempDir, until } from './helpers.js';
const AUTH = '/v1/native/repository-authorities';
const NEXT_START = /removed at the next start/;
/** Temp files (`.<name>.tmp-<hex>`) below `dir`, relative to it. */
async function tempsBelow(dir) {
    const out = [];
    for (const e of await fsp.readdir(dir, { withFileTypes: true, recursive: true })) {
        if (e.name.startsWith('.') && e.name.includes('.tmp-'))
            out.push(path.relative(dir, path.join(e.parentPath, e.name)));
    }
    return out.sort();
}
describe('cairn fsck: what the next start removes is a note', function () {
    this.timeout(120_000);
    it('after kill -9 in the middle of a pack upload: the half-written upload is a note, exit 0; the next start removes it', async () => {
        const data = path.join(tempDir(), 'data');
        const server = await spawnServer(data);
        const repo = await register(server.url, 'upload-crash');
        // Incompressible objects: the pack is about 3 MiB, more than the 1 MiB the upload writer holds before writing.
        const objects = [0, 1, 2].map(() => {
            const raw = randomBytes(1024 * 1024);
            return { id: blobId(raw), raw };
        });
        const pack = buildPack(PACK_KIND_OBJECT, objects);
        const staging = path.join(data, 'repositories', String(repo), 'staging', 'objects');
        const { port } = new URL(server.url);
        const req = http.request({ host: '127.0.0.1', port, method: 'PUT', path: `${AUTH}/${repo}/remote-sync/zstd-bulk/object-packs/${pack.packId}`, headers: { 'content-type': 'application/vnd.svc.remote-sync.object-pack+zstd', 'content-length': String(pack.bytes.length) } });
        req.on('error', () => undefined); // the server dies under it
        req.write(pack.bytes.subarray(0, 2 * 1024 * 1024));
        // Killed once the upload's temp file holds bytes and before the rest is sent: it stays half written.
        const half = await until('a half-written upload in staging/', async () => {
            for (const name of await fsp.readdir(staging)) {
                if (name.includes('.tmp-') && (await fsp.stat(path.join(staging, name))).size > 0)
                    return name;
            }
            return null;
        });
        server.proc.kill('SIGKILL');
        await server.exited;
        req.destroy();
        expect(await tempsBelow(data)).to.deep.equal([`repositories/${repo}/staging/objects/${half}`]);
        const check = await cli(['fsck', '--data', data]);
        expect(check.code, check.stdout + check.stderr).to.equal(0);
        expect(JSON.parse(check.stdout.trim().split('\n').at(-1))).to.include({ ok: true, problems: 0 });
        expect(check.stderr).to.include(`repository ${repo}: note: staging/objects/${half}`).and.match(NEXT_START);
        // fsck leaves it (it repairs nothing); the next start removes it, and fsck has nothing to say.
        expect(await tempsBelow(data)).to.deep.equal([`repositories/${repo}/staging/objects/${half}`]);
        const restarted = await spawnServer(data);
        restarted.proc.kill('SIGTERM');
        await restarted.exited;
        expect(await tempsBelow(data)).to.deep.equal([]);
        const again = await cli(['fsck', '--data', data]);
        expect(again.code, again.stdout + again.stderr).to.equal(0);
        expect(again.stderr).to.not.match(NEXT_START);
    });
    it('every kind of leftover temp file a start removes, placed on purpose: notes naming each, exit 0, nothing changed; a real problem beside them still fails', async () => {
        const data = path.join(tempDir(), 'data');
        const server = await spawnServer(data);
        const repo = await register(server.url, 'leftovers');
        server.proc.kill('SIGTERM');
        await server.exited;
        const root = path.join(data, 'repositories', String(repo));
        const id = 'ab'.repeat(32);
        const placed = [
            `repositories/${repo}/staging/objects/.${id}.pack.tmp-0123456789abcdef`, // an upload cut short
            `repositories/${repo}/staging/trees/.${id}.pack.tmp-00112233445566aa`,
            `repositories/${repo}/packs/objects/.${id}.pack.tmp-fedcba9876543210`, // a commit writing a new pack
            `repositories/${repo}/index/.blobs.7.idx.tmp-0123456789abcdef`, // a commit writing a segment
            `repositories/${repo}/.workflow.log.tmp-0123456789abcdef`, // a compaction's rewrite
            `repositories/${repo}/.commit.bin.tmp-0123456789abcdef`,
            '.registry.bin.tmp-0123456789abcdef', // a registration
        ];
        for (const rel of placed) {
            await fsp.mkdir(path.dirname(path.join(data, rel)), { recursive: true });
            await fsp.writeFile(path.join(data, rel), randomBytes(100));
        }
        const before = await tempsBelow(data);
        expect(before).to.deep.equal([...placed].sort());
        const check = await cli(['fsck', '--data', data]);
        expect(check.code, check.stdout + check.stderr).to.equal(0);
        for (const rel of placed) {
            const inRepo = rel.startsWith(`repositories/${repo}/`);
            const note = inRepo ? `repository ${repo}: note: ${path.relative(root, path.join(data, rel))}` : `note: ${rel}`;
            expect(check.stderr, rel).to.include(note);
        }
        expect(check.stderr.split('\n').filter((l) => NEXT_START.test(l))).to.have.length(placed.length);
        expect(await tempsBelow(data)).to.deep.equal(before);
        // A damaged staged pack (not a temp file) is still a problem.
        await fsp.writeFile(path.join(root, 'staging', 'objects', `${'cd'.repeat(32)}.pack`), randomBytes(100));
        const bad = await cli(['fsck', '--data', data]);
        expect(bad.code, bad.stdout).to.equal(1);
        expect(bad.stdout).to.include(`staged object pack ${'cd'.repeat(32)}.pack`);
    });
});
//# sourceMappingURL=fsck-recovery.test.js.map