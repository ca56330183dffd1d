// The archive's keys and manifest codec (lib/domain/archive-manifest.ts, storage-layout.md §20):
// the golden fixture byte for byte, each named check of a damaged manifest, and round trips of
// random manifests.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { crc32 } from 'node:zlib';
import {
  applyDelta,
  decodeManifest,
  encodeManifest,
  fileKey,
  logRangeKey,
  manifestKey,
  packKey,
  parseManifestKey,
  registryRecordKey,
  type Manifest,
  type ManifestEntry,
} from '../lib/domain/archive-manifest.js';
import { Corrupt } from '../lib/domain/errors.js';

function commitRecord(generation: bigint): Buffer {
  const r = Buffer.alloc(512);
  r.write('CAIRNCMT', 0, 'latin1');
  r.writeUInt8(2, 8);
  r.writeBigUInt64LE(generation, 12);
  return r;
}

/** The manifest of fixtures/archive-manifest-v1.bin (storage-layout.md §20.2). */
export function goldenManifest(): Manifest {
  const entries: ManifestEntry[] = [
    { kind: 'log-range', key: logRangeKey(7, 2n, 'workflow.log', 4096n, 4200n), path: 'workflow.log', offset: 4096n, size: 104n, sha256: 'a'.repeat(64) },
    { kind: 'file', key: fileKey(7, 2n, 41n, 'authority.bin'), path: 'authority.bin', offset: 0n, size: 64n, sha256: 'b'.repeat(64) },
    { kind: 'pack', key: packKey(7, 'objects', 'c'.repeat(64)), path: `packs/objects/${'c'.repeat(64)}.pack`, offset: 0n, size: 123456n, sha256: 'c'.repeat(64) },
  ].sort((x, y) => Buffer.compare(Buffer.from(x.key), Buffer.from(y.key))) as ManifestEntry[];
  return { archiveGeneration: 2n, repository: 7, commitGeneration: 41n, capturedAtUs: 1_700_000_000_000_000n, commitPoint: commitRecord(41n), entries };
}

/** The incremental manifest of fixtures/archive-manifest-v2.bin (storage-layout.md §20.2.1): commit 43 over the golden v1 manifest (commit 41). */
export function goldenDelta(): Manifest {
  return {
    archiveGeneration: 2n, repository: 7, commitGeneration: 43n, capturedAtUs: 1_700_000_001_000_000n, commitPoint: commitRecord(43n),
    entries: [{ kind: 'log-range', key: logRangeKey(7, 2n, 'workflow.log', 4200n, 4300n), path: 'workflow.log', offset: 4200n, size: 100n, sha256: 'd'.repeat(64) }],
    delta: { baseCommit: 41n, chainLength: 1, removed: [packKey(7, 'objects', 'c'.repeat(64))] },
  };
}

// Not through test/helpers.ts: this codec test needs no server.
const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/archive-manifest-v1.bin');
const FIXTURE_V2 = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/archive-manifest-v2.bin');

function withCrc(bytes: Buffer): Buffer {
  const out = Buffer.from(bytes);
  out.writeUInt32LE(crc32(out.subarray(0, out.length - 4)), out.length - 4);
  return out;
}

function corruptWith(check: RegExp, bytes: Buffer): void {
  let err: unknown;
  try { decodeManifest(bytes, 'm1'); } catch (e) { err = e; }
  expect(err, String(check)).to.be.instanceOf(Corrupt);
  expect((err as Error).message).to.match(/^archive manifest m1: /);
  expect((err as Error).message).to.match(check);
}

describe('archive manifest codec', () => {
  it('encodes the golden incremental manifest (version 2) byte for byte, decodes it, and resolves it over its base', () => {
    const golden = readFileSync(FIXTURE_V2);
    expect(encodeManifest(goldenDelta()).equals(golden), 'encoding equals fixtures/archive-manifest-v2.bin').to.equal(true);
    expect(decodeManifest(golden, 'golden')).to.deep.equal(goldenDelta());
    // Hand-checked fields of §20.2.1.
    expect(golden.readUInt8(8)).to.equal(2);
    expect(golden.readUInt32LE(552), 'entry_count').to.equal(1);
    expect(golden.readBigUInt64LE(556), 'base_commit').to.equal(41n);
    expect(golden.readUInt32LE(564), 'chain_length').to.equal(1);
    expect(golden.readUInt32LE(568), 'removed_count').to.equal(1);
    const removed = packKey(7, 'objects', 'c'.repeat(64));
    expect(golden.readUInt16LE(golden.length - 4 - 2 - removed.length)).to.equal(removed.length);
    expect(golden.subarray(golden.length - 4 - removed.length, golden.length - 4).toString('utf8')).to.equal(removed);
    const whole = applyDelta(goldenManifest().entries, goldenDelta(), 'golden');
    expect(whole.map((e) => e.key)).to.deep.equal([fileKey(7, 2n, 41n, 'authority.bin'), logRangeKey(7, 2n, 'workflow.log', 4096n, 4200n), logRangeKey(7, 2n, 'workflow.log', 4200n, 4300n)]);
    // A delta that removes what its base does not name is refused (the chain is not the one it was written on).
    expect(() => applyDelta(whole, goldenDelta(), 'golden')).to.throw(Corrupt, /removes .* which its base does not name/);
    // Damage: a removed key out of order, a base that is not earlier, a chain length of 0.
    const bad = Buffer.from(golden);
    bad.writeBigUInt64LE(43n, 556);
    corruptWith(/base commit 43 is not an earlier commit/, withCrc(bad));
    const zero = Buffer.from(golden);
    zero.writeUInt32LE(0, 564);
    corruptWith(/chain length 0/, withCrc(zero));
  });

  it('encodes the golden manifest byte for byte and decodes it back', () => {
    const golden = readFileSync(FIXTURE);
    const bytes = encodeManifest(goldenManifest());
    expect(bytes.equals(golden), 'encoding equals fixtures/archive-manifest-v1.bin').to.equal(true);
    expect(decodeManifest(golden, 'golden')).to.deep.equal(goldenManifest());
    // Hand-checked fields of §20.2.
    expect(golden.subarray(0, 8).toString('latin1')).to.equal('CAIRNAMF');
    expect(golden.readUInt8(8)).to.equal(1);
    expect(golden.readBigUInt64LE(12)).to.equal(2n);
    expect(golden.readUInt32LE(20)).to.equal(7);
    expect(golden.readBigUInt64LE(24)).to.equal(41n);
    expect(golden.subarray(40, 48).toString('latin1')).to.equal('CAIRNCMT');
    expect(golden.readUInt32LE(552)).to.equal(3);
    expect(golden.readUInt8(556)).to.equal(3); // first key in byte order: the file (`g…` < `packs/`)
  });

  it('refuses a damaged manifest as a whole, naming the check', () => {
    const golden = readFileSync(FIXTURE);
    const flip = (at: number): Buffer => { const b = Buffer.from(golden); b[at] = b[at]! ^ 0xff; return b; };
    corruptWith(/checksum mismatch/, flip(600));
    corruptWith(/bad magic/, withCrc(flip(0)));
    corruptWith(/unknown version/, withCrc(flip(8)));
    corruptWith(/reserved header bytes/, withCrc(flip(10)));
    corruptWith(/truncated header/, golden.subarray(0, 100));
    corruptWith(/generation is not the manifest's/, withCrc(flip(24)));
    corruptWith(/unknown kind/, withCrc(flip(556)));
    corruptWith(/runs past the end/, withCrc(Buffer.concat([golden.subarray(0, golden.length - 40), golden.subarray(golden.length - 4)])));
    corruptWith(/bytes after the last entry/, withCrc(Buffer.concat([golden.subarray(0, golden.length - 4), Buffer.alloc(5), golden.subarray(golden.length - 4)])));
    const count = Buffer.from(golden); count.writeUInt32LE(2_000_000, 552);
    corruptWith(/entry count/, withCrc(count));
    // Two entries in the wrong order, each well-formed.
    const m = goldenManifest();
    const entryBytes = (e: ManifestEntry): Buffer => { const one = encodeManifest({ ...m, entries: [e] }); return one.subarray(556, one.length - 4); };
    const head = Buffer.from(golden.subarray(0, 556));
    head.writeUInt32LE(2, 552);
    corruptWith(/entry 1: keys out of order/, withCrc(Buffer.concat([head, entryBytes(m.entries[1]!), entryBytes(m.entries[0]!), Buffer.alloc(4)])));
  });

  it('carries a registry record as kind 4 with path registry.rec at offset 0', () => {
    const m = goldenManifest();
    const reg: ManifestEntry = { kind: 'registry', key: registryRecordKey(7, 2n, 41n), path: 'registry.rec', offset: 0n, size: 45n, sha256: 'd'.repeat(64) };
    expect(reg.key).to.equal('repositories/7/g00000000000000000002/files/00000000000000000041/registry.rec');
    const entries = [...m.entries, reg].sort((x, y) => Buffer.compare(Buffer.from(x.key), Buffer.from(y.key)));
    const bytes = encodeManifest({ ...m, entries });
    expect(decodeManifest(bytes, 'r').entries.find((e) => e.kind === 'registry')).to.deep.equal(reg);
    // The kind byte of the registry entry is 4.
    const at = bytes.indexOf(Buffer.from(reg.key, 'utf8'));
    expect(bytes.readUInt8(at - 4)).to.equal(4);
    expect(() => encodeManifest({ ...m, entries: [{ ...reg, path: 'registry.bin' }] })).to.throw(RangeError, /registry\.rec/);
    expect(() => encodeManifest({ ...m, entries: [{ ...reg, offset: 1n }] })).to.throw(RangeError, /offset 0/);
    // A kind-4 entry whose path is another file is refused on reading, too.
    const other = encodeManifest({ ...m, entries: [{ ...reg, kind: 'file', path: 'registry.bin' }] });
    const k = other.indexOf(Buffer.from(reg.key, 'utf8')) - 4;
    other.writeUInt8(4, k);
    corruptWith(/entry 0: a registry entry with path "registry.bin"/, withCrc(other));
  });

  it('refuses to encode a manifest that breaks a rule', () => {
    const m = goldenManifest();
    expect(() => encodeManifest({ ...m, entries: [...m.entries].reverse() })).to.throw(RangeError, /increasing key order/);
    expect(() => encodeManifest({ ...m, commitGeneration: 42n })).to.throw(RangeError, /generation/);
    expect(() => encodeManifest({ ...m, entries: [{ ...m.entries[0]!, path: '../x' }] })).to.throw(RangeError, /clean relative path/);
    expect(() => encodeManifest({ ...m, entries: [{ ...m.entries[0]!, key: 'repositories/8/packs/x' }] })).to.throw(RangeError, /repository 7/);
    expect(() => encodeManifest({ ...m, archiveGeneration: 0n })).to.throw(RangeError);
  });

  it('names keys so that byte order is numeric order, and parses manifest keys back', () => {
    expect(manifestKey(7, 2n, 41n)).to.equal('repositories/7/manifests/g00000000000000000002-00000000000000000041.manifest');
    expect(parseManifestKey(manifestKey(7, 2n, 41n))).to.deep.equal({ repository: 7, archiveGeneration: 2n, commitGeneration: 41n });
    for (const bad of ['repositories/7/manifests/g2-41.manifest', 'repositories/07/manifests/g00000000000000000002-00000000000000000041.manifest', 'repositories/7/manifests/g99999999999999999999-00000000000000000041.manifest']) {
      expect(parseManifestKey(bad), bad).to.equal(null);
    }
    const keys = [[1n, 10n], [1n, 9n], [2n, 1n], [10n, 1n]].map(([g, c]) => manifestKey(3, g!, c!));
    expect([...keys].sort()).to.deep.equal([keys[1], keys[0], keys[2], keys[3]]);
    expect(logRangeKey(1, 3n, 'jobs.3.log', 0n, 100n)).to.equal('repositories/1/g00000000000000000003/logs/jobs.3.log/00000000000000000000-00000000000000000100');
    expect(() => logRangeKey(1, 3n, '../x', 0n, 1n)).to.throw(RangeError);
    expect(() => packKey(1, 'objects', 'XYZ')).to.throw(RangeError);
  });

  it('round-trips random manifests, and refuses every single-byte change', () => {
    const hex = fc.stringMatching(/^[0-9a-f]{64}$/);
    const entry = fc.record({
      kind: fc.constantFrom('pack', 'log-range', 'file', 'registry') as fc.Arbitrary<ManifestEntry['kind']>,
      key: fc.stringMatching(/^[a-z0-9./-]{1,40}$/).map((s) => `repositories/5/${s}`),
      path: fc.array(fc.stringMatching(/^[a-z0-9_-]{1,12}$/), { minLength: 1, maxLength: 4 }).map((p) => p.join('/')),
      offset: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
      size: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
      sha256: hex,
    }).map((e) => (e.kind === 'log-range' ? e : e.kind === 'registry' ? { ...e, path: 'registry.rec', offset: 0n } : { ...e, offset: 0n }));
    const manifest = fc.record({
      archiveGeneration: fc.bigInt({ min: 1n, max: (1n << 64n) - 1n }),
      commitGeneration: fc.bigInt({ min: 1n, max: (1n << 64n) - 1n }),
      capturedAtUs: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
      entries: fc.uniqueArray(entry, { selector: (e) => e.key, maxLength: 8 }),
    }).map((r): Manifest => ({
      archiveGeneration: r.archiveGeneration,
      repository: 5,
      commitGeneration: r.commitGeneration,
      capturedAtUs: r.capturedAtUs,
      commitPoint: commitRecord(r.commitGeneration),
      entries: [...r.entries].sort((x, y) => Buffer.compare(Buffer.from(x.key), Buffer.from(y.key))),
    }));
    fc.assert(fc.property(manifest, fc.nat(), fc.integer({ min: 1, max: 255 }), (m, at, xor) => {
      const bytes = encodeManifest(m);
      expect(decodeManifest(bytes, 'r')).to.deep.equal(m);
      const damaged = Buffer.from(bytes);
      const i = at % damaged.length;
      damaged[i] = damaged[i]! ^ xor;
      expect(() => decodeManifest(damaged, 'r')).to.throw(Corrupt);
    }), { numRuns: 200 });
  });
});
