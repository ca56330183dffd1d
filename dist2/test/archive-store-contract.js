// The behaviour every ObjectStore (lib/archive/object-store.ts) must show, run against the S3
// implementation on a real Swift (test/archive-store.test.ts) and against the in-memory store
// the unit tests use (test/archive-memory-store.test.ts), so the two cannot drift apart.
import { expect } from 'chai';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { ObjectStoreError, sha256Hex } from '../lib/archive/object-store.js';
export function chunked(bytes, size = 1000) {
    return () => Readable.from((function* () {
        for (let i = 0; i < bytes.length; i += size)
            yield bytes.subarray(i, i + size);
    })());
}
export async function rejection(p) {
    try {
        await p;
    }
    catch (err) {
        expect(err).to.be.instanceOf(ObjectStoreError);
        return err;
    }
    throw new Error('expected a rejection');
}
export function storeContract(store) {
    it('puts (bytes and streams), heads, gets, lists by prefix in pages, and deletes', async () => {
        const s = store();
        const a = Buffer.from('alpha\n');
        const b = Buffer.alloc(5000, 7);
        const c = Buffer.from('gamma');
        await s.put('packs/aa', a, { sha256: sha256Hex(a), size: a.length });
        await s.put('packs/bb', chunked(b), { sha256: sha256Hex(b), size: b.length });
        await s.put('packs/cc', c, { sha256: sha256Hex(c), size: c.length });
        await s.put('other/zz', c, { sha256: sha256Hex(c), size: c.length });
        const head = await s.head('packs/bb');
        expect(head).to.include({ key: 'packs/bb', size: 5000, sha256: sha256Hex(b) });
        expect(await s.head('packs/none')).to.equal(null);
        const got = await s.get('packs/bb');
        expect(got.size).to.equal(5000);
        expect(got.sha256).to.equal(sha256Hex(b));
        expect((await buffer(got.body)).equals(b)).to.equal(true);
        const first = await s.list('packs/', { limit: 2 });
        expect(first.objects.map((o) => o.key)).to.deep.equal(['packs/aa', 'packs/bb']);
        expect(first.objects.map((o) => o.size)).to.deep.equal([6, 5000]);
        expect(first.next).to.equal('packs/bb');
        const second = await s.list('packs/', { limit: 2, after: first.next });
        expect(second.objects.map((o) => o.key)).to.deep.equal(['packs/cc']);
        expect(second.next).to.equal(undefined);
        await s.put('packs/aa', c, { sha256: sha256Hex(c), size: c.length }); // replaces
        expect((await buffer((await s.get('packs/aa')).body)).toString()).to.equal('gamma');
        await s.delete('packs/aa');
        await s.delete('packs/aa'); // absent: not an error
        expect(await s.head('packs/aa')).to.equal(null);
        const missing = await rejection(s.get('packs/aa'));
        expect(missing.kind).to.equal('not-found');
        expect((await s.list('packs/')).objects.map((o) => o.key)).to.deep.equal(['packs/bb', 'packs/cc']);
        for (const k of ['packs/bb', 'packs/cc', 'other/zz'])
            await s.delete(k);
    });
    it('refuses a body whose size or sha256 is not what was named, and leaves no object', async () => {
        const s = store();
        const body = Buffer.alloc(3000, 1);
        const right = sha256Hex(body);
        const wrong = sha256Hex(Buffer.from('something else'));
        const e1 = await rejection(s.put('bad/buffer', body, { sha256: wrong, size: body.length }));
        expect(e1.kind).to.equal('integrity');
        const e2 = await rejection(s.put('bad/stream', chunked(body), { sha256: wrong, size: body.length }));
        expect(e2.kind).to.equal('integrity');
        expect(e2.message).to.match(/sha256/);
        const e3 = await rejection(s.put('bad/short', chunked(body), { sha256: right, size: body.length + 10 }));
        expect(e3.kind).to.equal('integrity');
        const e4 = await rejection(s.put('bad/long', chunked(body), { sha256: right, size: body.length - 10 }));
        expect(e4.kind).to.equal('integrity');
        const e5 = await rejection(s.put('bad/hash', body, { sha256: 'XYZ', size: body.length }));
        expect(e5.kind).to.equal('integrity');
        for (const k of ['bad/buffer', 'bad/stream', 'bad/short', 'bad/long', 'bad/hash'])
            expect(await s.head(k), k).to.equal(null);
        expect((await s.list('bad/')).objects).to.deep.equal([]);
    });
}
//# sourceMappingURL=archive-store-contract.js.map