// Staged packs written by streaming pack writers (a push's blobs) are held per process: two
// writers of the same bytes share one staged file, and one letting go never removes the other's.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import { blobId } from '../lib/domain/content.js';
import { ContentStore } from '../lib/store/content-store.js';
import { PACK_KIND_OBJECT } from '../lib/store/pack.js';
import { tempDir } from './helpers.js';
async function* once(b) { yield b; }
describe('staged packs of streaming writers', () => {
    it('a second writer of the same pack dropping it before the first commits leaves the first able to commit', async () => {
        const { store } = await ContentStore.open(tempDir());
        try {
            const raw = Buffer.from('the same new blob, pushed twice at once');
            const a = await store.streamingPack(PACK_KIND_OBJECT);
            const b = await store.streamingPack(PACK_KIND_OBJECT);
            for (const w of [a, b])
                expect(await w.add(raw.length, once(raw), () => true)).to.equal(blobId(raw));
            const first = (await a.finish());
            const second = (await b.finish());
            expect(second.packId).to.equal(first.packId);
            // The second push is refused: it lets go of its pack before the first commits.
            await store.dropStagedPack(PACK_KIND_OBJECT, second.packId);
            await fsp.access(store.stagedPackFile(PACK_KIND_OBJECT, first.packId));
            await store.transact((tx) => {
                tx.adoptPack(PACK_KIND_OBJECT, first.packId);
                for (const e of first.entries)
                    tx.addLocator({ id: e.id, kind: 'blob', pack_id: first.packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32 });
            });
            expect(store.isCommittedPack(PACK_KIND_OBJECT, first.packId)).to.equal(true);
            await store.dropStagedPack(PACK_KIND_OBJECT, first.packId);
            expect(store.isCommittedPack(PACK_KIND_OBJECT, first.packId)).to.equal(true);
        }
        finally {
            store.close();
        }
    });
    it('the last holder of a refused pack removes it; a transaction adopting a vanished staged pack fails alone, not its batch', async () => {
        const { store } = await ContentStore.open(tempDir());
        try {
            const raw = Buffer.from('a blob of a refused push');
            const w = await store.streamingPack(PACK_KIND_OBJECT);
            await w.add(raw.length, once(raw), () => true);
            const done = (await w.finish());
            await store.dropStagedPack(PACK_KIND_OBJECT, done.packId);
            expect(await fsp.access(store.stagedPackFile(PACK_KIND_OBJECT, done.packId)).then(() => true, () => false)).to.equal(false);
            // Two transactions grouped in one batch: the one adopting the vanished pack fails alone.
            const gone = store.transact((tx) => { tx.adoptPack(PACK_KIND_OBJECT, done.packId); });
            const other = store.transact((tx) => { tx.emit('line.created', { line: 'unrelated', head_snapshot_id: null }); return 'ok'; });
            const [g, o] = await Promise.allSettled([gone, other]);
            expect(g.status).to.equal('rejected');
            expect(o).to.deep.equal({ status: 'fulfilled', value: 'ok' });
        }
        finally {
            store.close();
        }
    });
});
//# sourceMappingURL=staged-pack-holds.test.js.map