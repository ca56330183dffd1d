import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { blobId } from '../lib/domain/content.js';
import { ChunkWriter } from '../lib/store/durable.js';
import { buildPack, PACK_KIND_OBJECT } from '../lib/store/pack.js';
import { api, register, startTestServer } from './helpers.js';
describe('uncommitted (staged) packs', () => {
    it('are served and count as present for the plan, stay invisible until committed, and expire after the staging TTL, never while fresh', async () => {
        const server = await startTestServer();
        try {
            const repo = await register(server.url, 'staging');
            const old = buildPack(PACK_KIND_OBJECT, [{ id: blobId(Buffer.from('old')), raw: Buffer.from('old') }]);
            const fresh = buildPack(PACK_KIND_OBJECT, [{ id: blobId(Buffer.from('fresh')), raw: Buffer.from('fresh') }]);
            for (const p of [old, fresh]) {
                const res = await api(server.url, 'PUT', `/v1/native/repository-authorities/${repo}/remote-sync/zstd-bulk/object-packs/${p.packId}`, {
                    body: p.bytes, headers: { 'content-type': 'application/vnd.svc.remote-sync.object-pack+zstd' },
                });
                expect(res.status).to.equal(200);
                expect(res.json.state).to.equal('new');
            }
            // A staged pack is served (a resumed push or a mirror may read it back) and counts as
            // present for the plan, but its objects stay invisible: no locator names them yet.
            const get = await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}/remote-sync/zstd-bulk/object-packs/${old.packId}`);
            expect(get.status).to.equal(200);
            const plan = await api(server.url, 'POST', `/v1/native/repository-authorities/${repo}/remote-sync/zstd-bulk/plan`, { json: { object_packs: [old.packId] } });
            expect(plan.json.present_object_pack_ids).to.deep.equal([old.packId]);
            const tree = await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}/lines`);
            expect(tree.json.lines).to.deep.equal([]);
            const staging = path.join(server.dataDir, `repositories/${repo}/staging/objects`);
            const fifteenDaysAgo = new Date(Date.now() - 15 * 24 * 3600 * 1000);
            await fsp.utimes(path.join(staging, `${old.packId}.pack`), fifteenDaysAgo, fifteenDaysAgo);
            const service = await server.ready;
            await service.expireStagedPacks();
            expect((await fsp.readdir(staging)).sort()).to.deep.equal([`${fresh.packId}.pack`]);
            // Expired: missing again.
            const after = await api(server.url, 'POST', `/v1/native/repository-authorities/${repo}/remote-sync/zstd-bulk/plan`, { json: { object_packs: [old.packId] } });
            expect(after.json.missing_object_pack_ids).to.deep.equal([old.packId]);
            expect((await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}/remote-sync/zstd-bulk/object-packs/${old.packId}`)).status).to.equal(404);
        }
        finally {
            await server.stop();
        }
    });
});
describe('upload writer (ChunkWriter, lib/store/durable.ts)', () => {
    it('writes every chunk in order with writev, resuming short writes mid-chunk', async () => {
        // A handle whose writev takes at most 7 bytes per call, as a kernel may under pressure.
        const written = [];
        let calls = 0;
        const handle = {
            async writev(buffers) {
                calls++;
                let room = 7;
                for (const b of buffers) {
                    const n = Math.min(room, b.length);
                    written.push(Buffer.from(b.subarray(0, n)));
                    room -= n;
                    if (room === 0)
                        break;
                }
                return { bytesWritten: 7 - room, buffers };
            },
        };
        const writer = new ChunkWriter(handle, 16, 64);
        const chunks = Array.from({ length: 40 }, (_, i) => Buffer.from(`chunk-${i};`.repeat((i % 3) + 1)));
        for (const c of chunks)
            await writer.write(c);
        await writer.end();
        expect(Buffer.concat(written).toString()).to.equal(Buffer.concat(chunks).toString());
        expect(calls).to.be.greaterThan(chunks.length / 2); // short writes were resumed, not dropped
    });
});
//# sourceMappingURL=staging.test.js.map