import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { blobId, decodeSnapshot, decodeTree, encodeSnapshot, encodeTree, sha256Hex } from '../lib/domain/content.js';
import { Corrupt, Invalid } from '../lib/domain/errors.js';
import { decodeLines, decodeState, encodeLines, encodeState, frameSnapshotRecord, snapshotLogHeader } from '../lib/store/content-files.js';
import { IndexReader, INDEX_KIND_BLOB, INDEX_KIND_TREE, SegmentedIndex, setCachedIndexBlocks, writeMergedIndex, writeSegment } from '../lib/store/index-file.js';
import zstd from 'zstd-napi/binding.js';
import { buildPack, decodePackHeader, encodePackHeader, frameBound, headerSizeFor, PackVerifier, PACK_KIND_OBJECT, PACK_KIND_TREE } from '../lib/store/pack.js';
import { FIXTURES, tempDir } from './helpers.js';
const fixture = (name) => readFileSync(path.join(FIXTURES, name));
const hello = Buffer.from('hello\n');
const empty = Buffer.alloc(0);
const TREE = [
    { name: 'a.txt', kind: 'file', id: blobId(hello) },
    { name: 'link', kind: 'symlink', id: blobId(Buffer.from('a.txt')) },
    { name: 'run.sh', kind: 'executable', id: blobId(empty) },
    { name: 'sub', kind: 'directory', id: sha256Hex(encodeTree([])) },
];
const TREE_ID = '39bf2a3ce423f0780db132bf1e47ca90a223d6a508f8fc716485c869d998ecf8';
const SNAPSHOT_ID = 'b535a4ec9b0f8dc23df418ef1d3ac3da73880b2fcfa7abd5b6f80b5f19da3d13';
const PACK_ID = '38ced5a4b478244ecd965889a53e790e840cd23cdd5a427be01d2b0c69120146';
const TREE_PACK_ID = 'dd'.repeat(32);
describe('content formats against golden fixtures', () => {
    it('tree encoding: canonical bytes, sorted by name bytes, id = sha256', () => {
        const bytes = fixture('tree-v0.bin');
        expect(encodeTree([...TREE].reverse()).equals(bytes)).to.equal(true);
        expect(decodeTree(bytes)).to.deep.equal(TREE);
        expect(sha256Hex(bytes)).to.equal(TREE_ID);
    });
    it('tree decoding rejects anything but the canonical form', () => {
        const bytes = fixture('tree-v0.bin');
        expect(() => decodeTree(Buffer.concat([bytes, Buffer.from([0])]))).to.throw(Invalid, /trailing/);
        const kind = Buffer.from(bytes);
        kind[12] = 9;
        expect(() => decodeTree(kind)).to.throw(Invalid, /unknown kind/);
        const unsorted = encodeTree([{ name: 'b', kind: 'file', id: TREE[0].id }, { name: 'a', kind: 'file', id: TREE[0].id }]);
        const swapped = Buffer.concat([unsorted.subarray(0, 12), unsorted.subarray(12 + 36), unsorted.subarray(12, 12 + 36)]);
        expect(() => decodeTree(swapped)).to.throw(Invalid, /sorted/);
        for (const name of ['', '.', '..', 'a/b', 'nul\u0000'])
            expect(() => encodeTree([{ name, kind: 'file', id: TREE[0].id }])).to.throw(Invalid);
        expect(() => encodeTree([TREE[0], TREE[0]])).to.throw(Invalid, /duplicate/);
    });
    it('tree decoding agrees with a plain reference decoder on valid and damaged trees', () => {
        // The reference: the straightforward decoder the fast one replaced (same checks, same order).
        const reference = (bytes) => {
            const bad = (why) => new Invalid(`not a canonical tree: ${why}`);
            if (bytes.length < 12 || bytes.toString('ascii', 0, 4) !== 'CTRE')
                throw bad('bad magic');
            if (bytes.readUInt8(4) !== 0)
                throw bad(`version ${bytes.readUInt8(4)}`);
            if (bytes.readUIntLE(5, 3) !== 0)
                throw bad('reserved bytes are not zero');
            const kinds = { 1: 'file', 2: 'executable', 3: 'symlink', 4: 'directory' };
            const out = [];
            let at = 12;
            let previous = null;
            for (let i = 0; i < bytes.readUInt32LE(8); i++) {
                if (at + 3 > bytes.length)
                    throw bad('truncated entry');
                const kind = kinds[bytes.readUInt8(at)];
                if (!kind)
                    throw bad(`entry ${i} has unknown kind ${bytes.readUInt8(at)}`);
                const nameLength = bytes.readUInt16LE(at + 1);
                if (at + 3 + nameLength + 32 > bytes.length)
                    throw bad('truncated entry');
                const nameBytes = bytes.subarray(at + 3, at + 3 + nameLength);
                const name = nameBytes.toString('utf8');
                if (!Buffer.from(name, 'utf8').equals(nameBytes))
                    throw bad(`entry ${i} name is not valid UTF-8`);
                if (name === '' || name === '.' || name === '..')
                    throw new Invalid(`tree entry name "${name}" is not allowed`);
                if (name.includes('/') || name.includes('\u0000'))
                    throw new Invalid('tree entry names must not contain "/" or NUL');
                if (nameLength > 1024)
                    throw new Invalid('tree entry name longer than 1024 bytes');
                if (previous && Buffer.compare(previous, nameBytes) >= 0)
                    throw bad('entries are not sorted and unique');
                previous = nameBytes;
                at += 3 + nameLength;
                out.push({ name, kind, id: bytes.toString('hex', at, at + 32) });
                at += 32;
            }
            if (at !== bytes.length)
                throw bad('trailing bytes');
            return out;
        };
        const outcome = (f) => { try {
            return { entries: f() };
        }
        catch (err) {
            return { error: err.message };
        } };
        const name = fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }), fc.constantFrom('a', 'b', 'ab', 'é', '\u{1F600}', 'x/y'));
        const tree = fc.uniqueArray(fc.record({ name, kind: fc.constantFrom('file', 'executable', 'symlink', 'directory'), seed: fc.nat() }), { selector: (e) => e.name, maxLength: 8 })
            .map((es) => es.filter((e) => e.name !== '.' && e.name !== '..' && !e.name.includes('/') && !e.name.includes('\u0000')).map((e) => ({ name: e.name, kind: e.kind, id: sha256Hex(Buffer.from(String(e.seed))) })));
        const damage = fc.array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }), { maxLength: 3 });
        fc.assert(fc.property(tree, damage, fc.nat({ max: 4 }), (entries, edits, cut) => {
            const bytes = Buffer.from(encodeTree(entries));
            for (const e of edits)
                if (bytes.length > 12)
                    bytes[12 + (e.at % (bytes.length - 12))] = e.byte;
            const input = cut ? bytes.subarray(0, Math.max(0, bytes.length - cut)) : bytes;
            const fast = outcome(() => decodeTree(input));
            expect(fast).to.deep.equal(outcome(() => reference(input)));
            if (!edits.length && !cut)
                expect(fast.entries).to.deep.equal([...entries].sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name))));
        }), { numRuns: 3000 });
        // Names the encoder refuses, written by hand: the same verdicts.
        for (const raw of [Buffer.from([0x80]), Buffer.from([0x61, 0xff]), Buffer.from([0x2e]), Buffer.from([0x2e, 0x2e]), Buffer.from('a/b'), Buffer.from([0x61, 0x00]), Buffer.from([0xc0, 0xaf]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.alloc(1025, 0x61)]) {
            const bytes = Buffer.concat([Buffer.from('CTRE\0\0\0\0'), Buffer.from([1, 0, 0, 0, 1, raw.length & 0xff, raw.length >> 8]), raw, Buffer.alloc(32, 7)]);
            expect(outcome(() => decodeTree(bytes))).to.deep.equal(outcome(() => reference(bytes)));
            expect(outcome(() => decodeTree(bytes))).to.have.property('error');
        }
    });
    it('snapshot record: canonical bytes and id', () => {
        const bytes = fixture('snapshot-v0.bin');
        const record = { root_tree_id: TREE_ID, parent_snapshot_ids: [], created_at_s: 1700000000, message: 'first' };
        expect(encodeSnapshot(record).equals(bytes)).to.equal(true);
        expect(decodeSnapshot(bytes)).to.deep.equal({ snapshot_id: SNAPSHOT_ID, ...record });
        // A null message and an empty message are different records.
        expect(sha256Hex(encodeSnapshot({ ...record, message: null }))).to.not.equal(sha256Hex(encodeSnapshot({ ...record, message: '' })));
    });
    it('object pack: header decodes, frames verify, and zstd -d decodes the stream', () => {
        const bytes = fixture('object-pack-v0.pack');
        expect(sha256Hex(bytes)).to.equal(PACK_ID);
        const header = decodePackHeader(bytes.subarray(0, headerSizeFor(2)), PACK_KIND_OBJECT);
        expect(header.entries.map((e) => [e.id, e.offset, e.length, e.raw_length, e.crc32])).to.deep.equal([
            [blobId(hello), 156, 15, 6, 1199964029],
            [blobId(empty), 171, 9, 0, 298642007],
        ]);
        expect(encodePackHeader(PACK_KIND_OBJECT, header.entries).equals(bytes.subarray(0, 156))).to.equal(true);
        const verifier = new PackVerifier(PACK_KIND_OBJECT);
        for (let i = 0; i < bytes.length; i += 7)
            verifier.update(bytes.subarray(i, i + 7));
        expect(verifier.finish().packId).to.equal(PACK_ID);
        const zstd = spawnSync('zstd', ['-d', '-c'], { input: bytes });
        if (zstd.error)
            return; // the zstd CLI is not installed here
        expect(zstd.status).to.equal(0);
        expect(zstd.stdout.equals(hello)).to.equal(true);
    });
    it('frameBound is zstd\'s own compressBound, for every size a pack may hold', () => {
        for (const n of [0, 1, 255, 256, 2047, 2048, 128 * 1024 - 1, 128 * 1024, 128 * 1024 + 1, 16 * 1024 * 1024, 2 ** 32 + 5]) {
            expect(frameBound(n), `size ${n}`).to.equal(zstd.compressBound(n));
        }
        fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 40 }), (n) => frameBound(n) === zstd.compressBound(n)), { numRuns: 2000 });
    });
    it('buildPack gives the same bytes whatever was compressed before (compression contexts are reused)', () => {
        const objects = [hello, empty, Buffer.alloc(300_000, 'abc')].map((raw) => ({ id: blobId(raw), raw }));
        const first = buildPack(PACK_KIND_OBJECT, objects, 3);
        const firstBytes = Buffer.from(first.bytes);
        const other = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7919) % 251));
        buildPack(PACK_KIND_OBJECT, [{ id: blobId(other), raw: other }], 3);
        buildPack(PACK_KIND_OBJECT, objects, 1);
        const again = buildPack(PACK_KIND_OBJECT, objects, 3);
        expect(again.packId).to.equal(first.packId);
        expect(again.bytes.equals(firstBytes)).to.equal(true);
        expect(buildPack(PACK_KIND_OBJECT, objects.slice(0, 2), 3).bytes.equals(fixture('object-pack-v0.pack'))).to.equal(true);
    });
    it('pack verification names what is wrong with a damaged pack', () => {
        const good = buildPack(PACK_KIND_OBJECT, [{ id: blobId(hello), raw: hello }]).bytes;
        const cases = [
            ['truncated', good.subarray(0, good.length - 3), /truncated/],
            ['trailing bytes', Buffer.concat([good, Buffer.from('x')]), /after its last object/],
            ['no header', good.subarray(8), /header frame/],
            ['wrong kind', buildPack(PACK_KIND_TREE, [{ id: sha256Hex(encodeTree([])), raw: encodeTree([]) }]).bytes, /expected a object pack/],
        ];
        const flipped = Buffer.from(good);
        flipped[flipped.length - 2] ^= 0xff;
        cases.push(['flipped frame byte', flipped, /CRC-32|decode|hashes/]);
        const lie = buildPack(PACK_KIND_OBJECT, [{ id: blobId(empty), raw: hello }]).bytes;
        cases.push(['wrong object id', lie, /hashes to/]);
        for (const [what, bytes, message] of cases) {
            const v = new PackVerifier(PACK_KIND_OBJECT);
            expect(() => { v.update(bytes); v.finish(); }, what).to.throw(Invalid, message);
        }
    });
    it('pack verification gives the same verdict whole (one-call path) and in pieces (streaming path)', () => {
        // The verifier checks a frame that arrives whole in one call and streams the others; both
        // must accept and refuse the same bytes, whatever the damage.
        const verdict = (bytes, piece) => {
            const v = new PackVerifier(PACK_KIND_OBJECT);
            try {
                for (let i = 0; i < bytes.length; i += piece)
                    v.update(bytes.subarray(i, i + piece));
                return `ok ${v.finish().packId}`;
            }
            catch (err) {
                expect(err).to.be.instanceOf(Invalid);
                return err.message;
            }
        };
        fc.assert(fc.property(fc.array(fc.uint8Array({ minLength: 0, maxLength: 3000 }), { minLength: 1, maxLength: 6 }), fc.nat(), fc.nat(255), fc.integer({ min: 1, max: 40 }), (raws, at, xor, piece) => {
            const objects = [...new Map(raws.map((r) => { const raw = Buffer.from(r); return [blobId(raw), raw]; }))].map(([id, raw]) => ({ id, raw }));
            const bytes = Buffer.from(buildPack(PACK_KIND_OBJECT, objects).bytes);
            const header = headerSizeFor(objects.length);
            if (xor !== 0)
                bytes[header + (at % (bytes.length - header))] ^= xor; // damage a frame byte (or none)
            // Accepted with the same pack id, or refused naming the same object (the streaming
            // path may notice a damaged frame by a different check, depending on where chunks end).
            const whole = verdict(bytes, bytes.length);
            expect(verdict(bytes, piece).split(':')[0]).to.equal(whole.split(':')[0]);
            if (xor === 0)
                expect(whole).to.match(/^ok /);
        }), { numRuns: 300 });
        // One entry holding two zstd frames that together decode to its bytes: refused either way.
        const raw = Buffer.from('abcdefgh'.repeat(100));
        const a = buildPack(PACK_KIND_OBJECT, [{ id: blobId(raw.subarray(0, 400)), raw: raw.subarray(0, 400) }]);
        const b = buildPack(PACK_KIND_OBJECT, [{ id: blobId(raw.subarray(400)), raw: raw.subarray(400) }]);
        const frames = Buffer.concat([a.bytes.subarray(a.entries[0].offset), b.bytes.subarray(b.entries[0].offset)]);
        const entry = { id: blobId(raw), offset: headerSizeFor(1), length: frames.length, raw_length: raw.length, crc32: crc32(frames) };
        const twoFrames = Buffer.concat([encodePackHeader(PACK_KIND_OBJECT, [entry]), frames]);
        expect(verdict(twoFrames, twoFrames.length)).to.match(/frame ends before/);
        expect(verdict(twoFrames, 5)).to.match(/frame ends before/);
    });
    it('index lookups through the block cache stay exact: many blocks, evictions, segments, a file rewritten under the same name', async () => {
        const dir = tempDir();
        const ids = Array.from({ length: 3000 }, (_, i) => sha256Hex(Buffer.from(`id ${i}`)));
        const absent = Array.from({ length: 200 }, (_, i) => sha256Hex(Buffer.from(`absent ${i}`)));
        const packs = ['aa'.repeat(32), 'bb'.repeat(32), 'cc'.repeat(32)];
        // A tree index (version 1) carries each tree's expanded size in f.
        const row = (id, i, salt) => ({ id, pack_id: packs[i % 3], a: i % 3, b: (i * 2654435761 + salt) >>> 0, c: 2 ** 40 + i, d: i + salt, e: i * 7, f: (i * 40503 + salt) % 2 ** 32 });
        const file = (name) => path.join(dir, name);
        // Two segments (older one first), as a store keeps them: an id lives in exactly one.
        await writeSegment(file('t.1.idx'), INDEX_KIND_TREE, ids.slice(0, 1800).map((id, i) => row(id, i, 1)));
        await writeSegment(file('t.2.idx'), INDEX_KIND_TREE, ids.slice(1800).map((id, i) => row(id, i + 1800, 1)));
        const previous = setCachedIndexBlocks(3);
        try {
            for (const round of [1, 2]) {
                const readers = [IndexReader.open(file('t.1.idx'), INDEX_KIND_TREE), IndexReader.open(file('t.2.idx'), INDEX_KIND_TREE)];
                const index = new SegmentedIndex(INDEX_KIND_TREE, readers.map((reader, i) => ({ segment: i + 1, reader })));
                try {
                    // A shuffled order and a repeat: blocks are evicted and read again.
                    const order = [...ids.keys()].sort((x, y) => ((x * 7919) % 3001) - ((y * 7919) % 3001));
                    for (const i of [...order, ...order.slice(0, 500)]) {
                        expect(index.lookup(ids[i])).to.deep.equal(row(ids[i], i, round));
                        expect(index.has(ids[i])).to.equal(true);
                    }
                    for (const id of absent) {
                        expect(index.lookup(id)).to.equal(null);
                        expect(index.has(id)).to.equal(false);
                    }
                    for (const junk of ['', 'zz', ids[0].slice(0, 63), `${ids[0]}0`, `${ids[0].slice(0, 62)}zz`])
                        expect(index.lookup(junk)).to.equal(null);
                }
                finally {
                    for (const r of readers)
                        r.close();
                }
                // Same names, other contents: new readers never see the old files' cached blocks.
                await writeSegment(file('t.1.idx'), INDEX_KIND_TREE, ids.slice(0, 1800).map((id, i) => row(id, i, 2)));
                await writeSegment(file('t.2.idx'), INDEX_KIND_TREE, ids.slice(1800).map((id, i) => row(id, i + 1800, 2)));
            }
        }
        finally {
            setCachedIndexBlocks(previous);
        }
    });
    it('tree packs reject bytes that are not a canonical tree', () => {
        const junk = Buffer.from('not a tree');
        const v = new PackVerifier(PACK_KIND_TREE);
        expect(() => v.update(buildPack(PACK_KIND_TREE, [{ id: sha256Hex(junk), raw: junk }]).bytes)).to.throw(Invalid, /canonical tree/);
    });
    it('tree locator index, version 1: golden bytes with each tree\'s expanded size; version 0 reads as no size recorded', async () => {
        const golden = fixture('trees-index-v1.idx');
        const emptyTree = sha256Hex(encodeTree([]));
        const rows = [
            { id: TREE_ID, pack_id: TREE_PACK_ID, a: 0, b: 0x01020304, c: 156, d: 40, e: encodeTree(TREE).length, f: 1 + TREE.length },
            { id: emptyTree, pack_id: TREE_PACK_ID, a: 0, b: 0x0a0b0c0d, c: 196, d: 21, e: 12, f: 1 },
        ];
        const dir = tempDir();
        await writeSegment(path.join(dir, 'trees.idx'), INDEX_KIND_TREE, rows);
        expect(readFileSync(path.join(dir, 'trees.idx')).equals(golden)).to.equal(true);
        // By hand, against storage-layout.md §8: version byte 1; an entry's bytes 56..59 raw length, 60..63 the size.
        expect(golden[8]).to.equal(1);
        const at = 12 + 12 + 1024 + 32; // header, fixed fields, fanout, one pack id: the first entry (ids sorted)
        const first = [...rows].sort((x, y) => (x.id < y.id ? -1 : 1))[0];
        expect(golden.toString('hex', at, at + 32)).to.equal(first.id);
        expect(golden.readUInt32LE(at + 56)).to.equal(first.e);
        expect(golden.readUInt32LE(at + 60)).to.equal(first.f);
        const reader = IndexReader.open(path.join(FIXTURES, 'trees-index-v1.idx'), INDEX_KIND_TREE);
        for (const r of rows)
            expect(reader.lookup(r.id)).to.deep.equal({ id: r.id, a: r.a, b: r.b, c: r.c, d: r.d, e: r.e, f: r.f });
        reader.verify();
        reader.close();
        // The same entries in a version-0 file (the blob index fixture's layout as a tree index): no size.
        const v0 = Buffer.from(fixture('blobs-index-v0.idx'));
        v0[12] = INDEX_KIND_TREE;
        v0.writeUInt32LE(crc32(v0.subarray(0, v0.length - 4)), v0.length - 4);
        (await import('node:fs')).writeFileSync(path.join(dir, 'v0.idx'), v0);
        const old = IndexReader.open(path.join(dir, 'v0.idx'), INDEX_KIND_TREE);
        expect(old.lookup(blobId(hello))).to.deep.equal({ id: blobId(hello), a: 0, b: 1199964029, c: 156, d: 15, e: 6 });
        old.close();
        // Version 1 exists for tree indexes only.
        const wrong = Buffer.from(fixture('blobs-index-v0.idx'));
        wrong[8] = 1;
        wrong.writeUInt32LE(crc32(wrong.subarray(0, wrong.length - 4)), wrong.length - 4);
        (await import('node:fs')).writeFileSync(path.join(dir, 'wrong.idx'), wrong);
        expect(() => IndexReader.open(path.join(dir, 'wrong.idx'), INDEX_KIND_BLOB)).to.throw(Corrupt, /bad version/);
    });
    it('locator index: golden bytes, O(log n) lookups, streaming merge', async () => {
        const golden = fixture('blobs-index-v0.idx');
        const dir = tempDir();
        const rewritten = path.join(dir, 'again.idx');
        const reader = IndexReader.open(path.join(FIXTURES, 'blobs-index-v0.idx'), INDEX_KIND_BLOB);
        expect(reader.packs).to.deep.equal([PACK_ID]);
        expect(reader.lookup(blobId(hello))).to.deep.equal({ id: blobId(hello), a: 0, b: 1199964029, c: 156, d: 15, e: 6 });
        expect(reader.lookup(blobId(Buffer.from('absent')))).to.equal(null);
        await writeMergedIndex(rewritten, IndexReader.empty(INDEX_KIND_BLOB), [...reader.entries()], reader.packs);
        expect(readFileSync(rewritten).equals(golden)).to.equal(true);
        reader.verify();
        reader.close();
        // Merge 3,000 random ids into 2,000 others; every id is found, absent ones are not.
        await fc.assert(fc.asyncProperty(fc.uniqueArray(fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex')), { minLength: 50, maxLength: 5000 }), async (ids) => {
            const half = Math.floor(ids.length / 2);
            const entry = (id, i) => ({ id, a: i % 2, b: i, c: i * 10, d: i + 1, e: i * 3 });
            const first = ids.slice(0, half).map(entry).sort((x, y) => (x.id < y.id ? -1 : 1));
            const second = ids.slice(half).map((id, i) => entry(id, i + half)).sort((x, y) => (x.id < y.id ? -1 : 1));
            const a = path.join(dir, 'a.idx');
            const b = path.join(dir, 'b.idx');
            await writeMergedIndex(a, IndexReader.empty(INDEX_KIND_BLOB), first, ['00'.repeat(32), '11'.repeat(32)]);
            const ra = IndexReader.open(a, INDEX_KIND_BLOB);
            await writeMergedIndex(b, ra, second, ra.packs);
            ra.close();
            const rb = IndexReader.open(b, INDEX_KIND_BLOB);
            try {
                rb.verify();
                expect(rb.count).to.equal(ids.length);
                ids.forEach((id, i) => expect(rb.lookup(id)).to.deep.equal(entry(id, i)));
                const all = [...rb.entries()].map((e) => e.id);
                expect(all).to.deep.equal([...ids].sort());
            }
            finally {
                rb.close();
            }
        }), { numRuns: 5 });
        const damaged = Buffer.from(golden);
        damaged[damaged.length - 20] ^= 1;
        const bad = path.join(dir, 'bad.idx');
        (await import('node:fs')).writeFileSync(bad, damaged);
        const rbad = IndexReader.open(bad, INDEX_KIND_BLOB);
        expect(() => rbad.verify()).to.throw(Corrupt, /checksum/);
        rbad.close();
    });
    it('state.bin, lines and snapshots.log: golden bytes', () => {
        const state = { generation: 3, blobs_idx_gen: 2, trees_idx_gen: 2, snapshots_idx_gen: 3, lines_gen: 3, snapshot_log_length: 77, snapshot_count: 1 };
        expect(encodeState(state).equals(fixture('state-v0.bin'))).to.equal(true);
        expect(decodeState(fixture('state-v0.bin'))).to.deep.equal(state);
        const lines = [
            { name: 'main', status: 'active', head_snapshot_id: SNAPSHOT_ID, updated_at_s: 1700000000 },
            { name: 'old', status: 'archived', head_snapshot_id: null, updated_at_s: 1700000100 },
        ];
        expect(encodeLines(lines).equals(fixture('lines-v0.bin'))).to.equal(true);
        expect(decodeLines(fixture('lines-v0.bin'))).to.deep.equal(lines);
        const log = fixture('snapshots-v0.log');
        expect(Buffer.concat([snapshotLogHeader(), frameSnapshotRecord(fixture('snapshot-v0.bin'))]).equals(log)).to.equal(true);
        expect(log.length).to.equal(77);
    });
});
//# sourceMappingURL=content-codec.test.js.map