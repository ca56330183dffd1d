// The in-memory, fault-injecting object store the archive's unit tests use (test/memory-store.ts):
// it keeps the ObjectStore contract the S3 store keeps on Swift, and its faults behave as named.
import { expect } from 'chai';
import { buffer } from 'node:stream/consumers';
import { sha256Hex } from '../lib/archive/object-store.js';
import { chunked, rejection, storeContract } from './archive-store-contract.js';
import { MemoryObjectStore } from './memory-store.js';
const bytes = (s) => Buffer.from(s);
const opts = (b) => ({ sha256: sha256Hex(b), size: b.length });
describe('archive object store: the in-memory test store', () => {
    let store = new MemoryObjectStore();
    beforeEach(() => { store = new MemoryObjectStore(); });
    storeContract(() => store);
    it('fails the named operations with 5xx, throttling or no answer, then works again', async () => {
        const b = bytes('pack');
        store.inject({ op: 'put', kind: 'throttled', times: 2 }).inject({ op: 'get', kind: 'unavailable', keyPrefix: 'manifests/' });
        const e1 = await rejection(store.put('packs/1', b, opts(b)));
        expect([e1.kind, e1.status, e1.retryable]).to.deep.equal(['throttled', 503, true]);
        await rejection(store.put('packs/1', b, opts(b)));
        await store.put('packs/1', b, opts(b));
        await store.put('manifests/1', b, opts(b));
        expect((await buffer((await store.get('packs/1')).body)).toString()).to.equal('pack');
        const e2 = await rejection(store.get('manifests/1'));
        expect([e2.kind, e2.status]).to.deep.equal(['unavailable', 500]);
        expect((await buffer((await store.get('manifests/1')).body)).toString()).to.equal('pack');
    });
    it('crashes at a chosen put: the pack is stored, the manifest after it is not', async () => {
        const pack = bytes('pack bytes');
        const manifest = bytes('manifest');
        store.crashAtPutNumber(2);
        await store.put('packs/p1', pack, opts(pack));
        const e = await rejection(store.put('manifests/m1', manifest, opts(manifest)));
        expect(e.kind).to.equal('unavailable');
        await rejection(store.head('packs/p1')); // a crashed store answers nothing
        store.recover();
        expect(await store.head('packs/p1')).to.include({ size: pack.length });
        expect(await store.head('manifests/m1')).to.equal(null);
        expect(store.calls).to.deep.equal(['put packs/p1', 'put manifests/m1', 'head packs/p1', 'head packs/p1', 'head manifests/m1']);
    });
    it('leaves a partial upload behind: short, without a recorded sha256', async () => {
        const pack = Buffer.alloc(10_000, 9);
        store.partialUpload('packs/', 4096);
        await rejection(store.put('packs/p', chunked(pack), opts(pack)));
        const head = await store.head('packs/p');
        expect(head?.size).to.equal(4096);
        expect(head?.sha256).to.equal(undefined);
        await store.put('packs/p', chunked(pack), opts(pack)); // the retry replaces it
        expect(await store.head('packs/p')).to.include({ size: 10_000, sha256: sha256Hex(pack) });
    });
    it('serves a stale listing until it is fresh again, while reads see the truth', async () => {
        const a = bytes('a');
        await store.put('manifests/1', a, opts(a));
        store.staleListing();
        await store.put('manifests/2', a, opts(a));
        await store.delete('manifests/1');
        expect((await store.list('manifests/')).objects.map((o) => o.key)).to.deep.equal(['manifests/1']);
        expect(await store.head('manifests/2')).to.include({ size: 1 });
        store.freshListing();
        expect((await store.list('manifests/')).objects.map((o) => o.key)).to.deep.equal(['manifests/2']);
    });
    it('answers conditional puts as S3 does, or 501 as Swift 2.30 does', async () => {
        const a = bytes('lease');
        expect(await store.conditionalPut()).to.equal(true);
        expect(await store.putIfAbsent('lease', a, opts(a))).to.equal('created');
        expect(await store.putIfAbsent('lease', a, opts(a))).to.equal('exists');
        const swiftLike = new MemoryObjectStore(false);
        expect(await swiftLike.conditionalPut()).to.equal(false);
        const e = await rejection(swiftLike.putIfAbsent('lease', a, opts(a)));
        expect([e.kind, e.status]).to.deep.equal(['not-implemented', 501]);
    });
});
//# sourceMappingURL=archive-memory-store.test.js.map