import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { Corrupt } from '../lib/domain/errors.js';
import { decodeAuthorityFile, encodeAuthorityFile } from '../lib/store/authority-file.js';
import { decodeEnvelope, encodeEnvelope } from '../lib/store/binary.js';
import { decodeRegistry, encodeRegistry } from '../lib/store/registry-file.js';
import { FIXTURES } from './helpers.js';
const fixture = (name) => readFileSync(path.join(FIXTURES, name));
const GOLDEN_RECORDS = [
    { repository_index: 0, repository_name: 'alpha', lifecycle_kind: 1, namespace: 'ab', policy_flags: 5, created_at_s: 1700000000, updated_at_s: 1700000100, tombstoned: false },
    { repository_index: 1, repository_name: 'bêta', lifecycle_kind: 3, namespace: '', policy_flags: 0, created_at_s: 1700000200, updated_at_s: 1700000300, tombstoned: true },
];
describe('binary-v0 codecs against golden fixtures', () => {
    it('registry.bin encodes byte for byte as fixtures/registry-v0.bin and decodes back', () => {
        expect(encodeRegistry(GOLDEN_RECORDS).equals(fixture('registry-v0.bin'))).to.equal(true);
        expect(decodeRegistry(fixture('registry-v0.bin'))).to.deep.equal(GOLDEN_RECORDS);
    });
    it('registry.bin fields sit at the offsets storage-layout.md documents', () => {
        const bytes = fixture('registry-v0.bin');
        expect(bytes.toString('ascii', 0, 8)).to.equal('CAIRNREG');
        expect(bytes.readUInt32LE(12)).to.equal(2); // record_count
        expect(bytes.readUInt32LE(16)).to.equal(10); // name store: "alpha" + "bêta"
        const rec0 = 20;
        expect(bytes.toString('latin1', rec0 + 5, rec0 + 7)).to.equal('ab');
        expect(bytes.readUInt8(rec0 + 7)).to.equal(5);
        const rec1 = rec0 + 40;
        expect(bytes.readUInt8(rec1 + 4)).to.equal(3);
        expect(bytes.readUInt16LE(rec1 + 5)).to.equal(0); // empty namespace: two zero bytes
        expect(bytes.readUInt8(rec1 + 24)).to.equal(1);
        expect(bytes.toString('utf8', rec1 + 40, rec1 + 40 + 10)).to.equal('alphabêta');
    });
    it('authority.bin encodes byte for byte as fixtures/authority-v0.bin and decodes back', () => {
        const identity = { repository_index: 7, created_at_s: 1700000000 };
        expect(encodeAuthorityFile(identity).equals(fixture('authority-v0.bin'))).to.equal(true);
        expect(decodeAuthorityFile(fixture('authority-v0.bin'))).to.deep.equal(identity);
    });
    it('names the broken check of a corrupt record and of a torn file', () => {
        expect(() => decodeRegistry(fixture('registry-v0-corrupt-record.bin'))).to.throw(Corrupt, /record 0 checksum mismatch/);
        expect(() => decodeRegistry(fixture('registry-v0-torn.bin'))).to.throw(Corrupt, /checksum mismatch/);
    });
    it('rejects bad magic, version and reserved bytes', () => {
        const good = encodeEnvelope('CAIRNTST', Buffer.from('body'));
        expect(decodeEnvelope('CAIRNTST', good, 't').toString()).to.equal('body');
        expect(() => decodeEnvelope('CAIRNXXX', good, 't')).to.throw(Corrupt, /bad magic/);
        const version = Buffer.from(good);
        version[8] = 1;
        expect(() => decodeEnvelope('CAIRNTST', version, 't')).to.throw(Corrupt, /version 1/);
        const reserved = Buffer.from(good);
        reserved[10] = 1;
        expect(() => decodeEnvelope('CAIRNTST', reserved, 't')).to.throw(Corrupt, /reserved/);
        expect(() => decodeEnvelope('CAIRNTST', good.subarray(0, 10), 't')).to.throw(Corrupt, /shorter/);
    });
    it('round-trips arbitrary registries and detects any single flipped bit', () => {
        const record = fc.record({
            repository_name: fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !s.includes('\u0000')),
            lifecycle_kind: fc.constantFrom(1, 2, 3),
            namespace: fc.stringMatching(/^[A-Za-z0-9_-]{0,2}$/),
            policy_flags: fc.integer({ min: 0, max: 255 }),
            created_at_s: fc.integer({ min: 0, max: 2 ** 40 }),
            updated_at_s: fc.integer({ min: 0, max: 2 ** 40 }),
            tombstoned: fc.boolean(),
        });
        fc.assert(fc.property(fc.array(record, { maxLength: 8 }), fc.nat(), (recs, flip) => {
            const records = recs.map((r, i) => ({ ...r, repository_index: i }));
            const bytes = encodeRegistry(records);
            expect(decodeRegistry(bytes)).to.deep.equal(records);
            const bit = flip % (bytes.length * 8);
            const damaged = Buffer.from(bytes);
            damaged[bit >> 3] ^= 1 << (bit & 7);
            expect(() => decodeRegistry(damaged)).to.throw(Corrupt);
        }), { numRuns: 200 });
    });
});
//# sourceMappingURL=codec.test.js.map