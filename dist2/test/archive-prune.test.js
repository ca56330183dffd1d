// Pruning an archive (lib/archive/prune.ts, lib/domain/archive-retention.ts; docs/operations.md
// "Archive retention"): the retention policy as properties, mark and sweep on the in-memory
// store with the time injected (grace, damaged manifests, a failure at every delete, dry run, a
// purged authority, a manifest written during the prune), and `cairn archive prune` end to end
// against a real S3-compatible store (Swift s3api).
import { expect } from 'chai';
import fc from 'fast-check';
import { buffer } from 'node:stream/consumers';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { sha256Hex } from '../lib/archive/object-store.js';
import { pruneArchive } from '../lib/archive/prune.js';
import { S3ObjectStore, s3Settings } from '../lib/archive/s3-store.js';
import { decodeManifest, encodeManifest, fileKey, manifestKey, packKey, parseManifestKey, } from '../lib/domain/archive-manifest.js';
import { chooseManifests, formatRetention, parseDuration, parseRetention } from '../lib/domain/archive-retention.js';
import { Corrupt, Invalid } from '../lib/domain/errors.js';
import { cli, onTty, until } from './helpers.js';
import { MemoryObjectStore } from './memory-store.js';
import { useSwift } from './swift.js';
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
// A fixed "now" (2026-03-15T12:00:00Z): the clock the prune is given.
const NOW = Date.UTC(2026, 2, 15, 12, 0, 0);
function commitRecord(generation) {
    const r = Buffer.alloc(512);
    r.write('CAIRNCMT', 0, 'latin1');
    r.writeUInt8(2, 8);
    r.writeBigUInt64LE(generation, 12);
    return r;
}
async function putObject(store, key, bytes) {
    await store.put(key, bytes, { sha256: sha256Hex(bytes), size: bytes.length });
}
/** Store a pack of `content` under repository `repo` and return its manifest entry. */
async function pack(store, repo, content) {
    const bytes = Buffer.from(`pack ${content}`);
    const id = sha256Hex(bytes);
    const key = packKey(repo, 'objects', id);
    await putObject(store, key, bytes);
    return { kind: 'pack', key, path: `packs/objects/${id}.pack`, offset: 0n, size: BigInt(bytes.length), sha256: id };
}
/** Store a file of generation `gen`, commit `commit` and return its manifest entry. */
async function file(store, repo, gen, commit, path, bytes = Buffer.from(`${path} at ${commit}`)) {
    const key = fileKey(repo, gen, commit, path);
    await putObject(store, key, bytes);
    return { kind: 'file', key, path, offset: 0n, size: BigInt(bytes.length), sha256: sha256Hex(bytes) };
}
/** Write a manifest naming `entries` (put in key order), captured at `capturedMs`. */
async function manifest(store, repo, gen, commit, capturedMs, entries) {
    const key = manifestKey(repo, gen, commit);
    const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)));
    const bytes = encodeManifest({ archiveGeneration: gen, repository: repo, commitGeneration: commit, capturedAtUs: BigInt(capturedMs) * 1000n, commitPoint: commitRecord(commit), entries: sorted });
    await putObject(store, key, bytes);
    return key;
}
function age(store, key, modifiedMs) {
    store.objects.get(key).lastModified = new Date(modifiedMs);
}
/**
 * Repository 0 with three manifests (10 days old, 10 days old + 1 h, 1 h old), repository 1
 * with one manifest 40 days old, archive-wide generation and lease keys, and one young pack no
 * manifest names yet (an upload in flight). Every object is 3 days old except the young pack.
 */
async function archive(store) {
    const a = await pack(store, 0, 'A');
    const b = await pack(store, 0, 'B');
    const c = await pack(store, 0, 'C');
    const f1 = await file(store, 0, 1n, 1n, 'authority.bin');
    const f2 = await file(store, 0, 1n, 2n, 'authority.bin');
    const f3 = await file(store, 0, 2n, 3n, 'authority.bin');
    const m1 = await manifest(store, 0, 1n, 1n, NOW - 10 * DAY, [a, f1]);
    const m2 = await manifest(store, 0, 1n, 2n, NOW - 10 * DAY + HOUR, [a, b, f2]);
    const m3 = await manifest(store, 0, 2n, 3n, NOW - HOUR, [a, b, c, f3]);
    const old1 = await pack(store, 1, 'old');
    const r1 = await manifest(store, 1, 1n, 5n, NOW - 40 * DAY, [old1]);
    await putObject(store, 'generations/00000000000000000001', Buffer.from('{"generation":1}'));
    await putObject(store, 'generations/00000000000000000002', Buffer.from('{"generation":2}'));
    await putObject(store, 'lease/00000000000000000002', Buffer.from('lease'));
    for (const key of store.objects.keys())
        age(store, key, NOW - 3 * DAY);
    const young = await pack(store, 0, 'in flight');
    age(store, young.key, NOW - 5 * MIN);
    return { a, b, c, f1, f2, f3, m1, m2, m3, old1, r1, young };
}
async function getBytes(store, key) {
    const { body } = await store.get(key);
    return buffer(body);
}
const options = (extra = {}) => ({ policy: parseRetention('all:48h,daily:30d'), graceMs: DAY, now: () => NOW, ...extra });
/** Every manifest left decodes and every key it names is stored. */
function everyManifestWhole(store) {
    for (const [key, o] of store.objects) {
        if (!parseManifestKey(key))
            continue;
        const m = decodeManifest(o.bytes, key);
        for (const e of m.entries)
            expect(store.objects.has(e.key), `${key} names ${e.key}`).to.equal(true);
    }
}
describe('archive retention policy', () => {
    it('parses KIND:DURATION rules and refuses bad ones, saying why', () => {
        expect(parseRetention('all:48h,daily:30d')).to.deep.equal([{ kind: 'all', windowMs: 48 * HOUR }, { kind: 'daily', windowMs: 30 * DAY }]);
        expect(formatRetention(parseRetention(' hourly:90m , weekly:8w '))).to.equal('hourly:90m,weekly:8w');
        expect(parseDuration('24h', '--grace')).to.equal(DAY);
        expect(parseDuration('0s', '--grace')).to.equal(0);
        const refused = (text, message) => {
            expect(() => parseRetention(text), text).to.throw(Invalid, message);
        };
        refused('', /at least one rule/);
        refused('all', /is not KIND:DURATION/);
        refused('monthly:12w', /unknown rule "monthly"/);
        refused('all:48h,all:2d', /the rule all is given twice/);
        refused('daily:30', /--keep daily must be a number and a unit/);
        refused('daily:-3d', /must be a number and a unit/);
        refused('daily:99999999w', /at most 100 years/);
    });
    // Random manifests of three repositories over two months, and random policies.
    const manifestsArb = fc.uniqueArray(fc.record({
        repository: fc.integer({ min: 0, max: 2 }),
        gen: fc.integer({ min: 1, max: 3 }),
        commit: fc.integer({ min: 1, max: 200 }),
        ageMs: fc.integer({ min: -HOUR, max: 60 * DAY }),
    }), { selector: (m) => `${m.repository}/${m.gen}/${m.commit}`, maxLength: 80 }).map((list) => list.map((m) => ({ key: manifestKey(m.repository, BigInt(m.gen), BigInt(m.commit)), capturedAtUs: BigInt(NOW - m.ageMs) * 1000n })));
    const policyArb = fc.record({
        all: fc.option(fc.integer({ min: 0, max: 5 * DAY }), { nil: undefined }),
        hourly: fc.option(fc.integer({ min: 0, max: 3 * DAY }), { nil: undefined }),
        daily: fc.option(fc.integer({ min: 0, max: 45 * DAY }), { nil: undefined }),
        weekly: fc.option(fc.integer({ min: 0, max: 70 * DAY }), { nil: undefined }),
    }).map((p) => ['all', 'hourly', 'daily', 'weekly'].flatMap((kind) => (p[kind] === undefined ? [] : [{ kind, windowMs: p[kind] }])))
        .filter((p) => p.length > 0);
    const repoOf = (key) => parseManifestKey(key).repository;
    const ms = (m) => Number(m.capturedAtUs / 1000n);
    it('keeps the newest manifest of every repository, whatever the policy', () => {
        fc.assert(fc.property(manifestsArb, policyArb, (manifests, policy) => {
            const { keep, drop } = chooseManifests(manifests, policy, NOW);
            expect([...keep, ...drop].sort()).to.deep.equal(manifests.map((m) => m.key).sort());
            expect(keep.filter((k) => drop.includes(k))).to.deep.equal([]);
            for (const repository of new Set(manifests.map((m) => repoOf(m.key)))) {
                const newest = manifests.filter((m) => repoOf(m.key) === repository).map((m) => m.key).sort().pop();
                expect(keep).to.include(newest);
            }
        }));
    });
    it('keeps every manifest inside the all window', () => {
        fc.assert(fc.property(manifestsArb, policyArb, (manifests, policy) => {
            const keep = new Set(chooseManifests(manifests, policy, NOW).keep);
            const all = policy.find((r) => r.kind === 'all');
            for (const m of manifests)
                if (all && ms(m) >= NOW - all.windowMs)
                    expect(keep.has(m.key), m.key).to.equal(true);
        }));
    });
    it('keeps at most one manifest per repository and UTC day inside the daily window, and nothing else outside the all window', () => {
        fc.assert(fc.property(manifestsArb, fc.integer({ min: 0, max: 3 * DAY }), fc.integer({ min: 0, max: 45 * DAY }), (manifests, allMs, dailyMs) => {
            const keep = new Set(chooseManifests(manifests, [{ kind: 'all', windowMs: allMs }, { kind: 'daily', windowMs: dailyMs }], NOW).keep);
            const newest = new Set([...new Set(manifests.map((m) => repoOf(m.key)))].map((r) => manifests.filter((m) => repoOf(m.key) === r).map((m) => m.key).sort().pop()));
            const perDay = new Map();
            for (const m of manifests) {
                if (!keep.has(m.key) || newest.has(m.key) || ms(m) >= NOW - allMs)
                    continue;
                expect(ms(m), `${m.key} kept outside every window`).to.be.at.least(NOW - dailyMs);
                const day = `${repoOf(m.key)}/${Math.floor(ms(m) / DAY)}`;
                perDay.set(day, (perDay.get(day) ?? 0) + 1);
            }
            for (const [day, n] of perDay)
                expect(n, day).to.equal(1);
        }));
    });
    it('is idempotent: choosing again among the kept keeps them all', () => {
        fc.assert(fc.property(manifestsArb, policyArb, fc.subarray([0, 1, 2]), (manifests, policy, purged) => {
            const first = chooseManifests(manifests, policy, NOW, new Set(purged));
            const kept = manifests.filter((m) => first.keep.includes(m.key));
            const second = chooseManifests(kept, policy, NOW, new Set(purged));
            expect(second.keep).to.deep.equal(first.keep);
            expect(second.drop).to.deep.equal([]);
        }));
    });
    it('lets the newest manifest of a purged repository go once it is outside every window', () => {
        const manifests = [
            { key: manifestKey(4, 1n, 1n), capturedAtUs: BigInt(NOW - 50 * DAY) * 1000n },
            { key: manifestKey(4, 1n, 2n), capturedAtUs: BigInt(NOW - 40 * DAY) * 1000n },
            { key: manifestKey(5, 1n, 9n), capturedAtUs: BigInt(NOW - 40 * DAY) * 1000n },
        ];
        const policy = parseRetention('all:48h,daily:30d');
        expect(chooseManifests(manifests, policy, NOW).keep).to.deep.equal([manifestKey(4, 1n, 2n), manifestKey(5, 1n, 9n)]);
        expect(chooseManifests(manifests, policy, NOW, new Set([4])).keep).to.deep.equal([manifestKey(5, 1n, 9n)]);
        // Inside a window it stays, purged or not.
        expect(chooseManifests(manifests, policy, NOW - 15 * DAY, new Set([4])).keep).to.deep.equal([manifestKey(4, 1n, 2n), manifestKey(5, 1n, 9n)]);
    });
});
describe('archive prune (mark and sweep)', () => {
    it('deletes dropped manifests and the unreferenced objects older than the grace period, and nothing else', async () => {
        const store = new MemoryObjectStore();
        const x = await archive(store);
        const before = new Set(store.objects.keys());
        const sizes = new Map([...store.objects].map(([k, o]) => [k, o.bytes.length]));
        const probeSize = async (key) => sizes.get(key);
        const report = await pruneArchive(store, options());
        const gone = [...before].filter((k) => !store.objects.has(k)).sort();
        // m1 and m2 are older than 48 h and share a UTC day: the daily rule keeps m2 (the newer).
        expect(gone).to.deep.equal([x.f1.key, x.m1].sort());
        const m1Bytes = await probeSize(x.m1);
        expect(report.manifests).to.deep.equal({ total: 4, kept: 3, deleted: 1, deleted_bytes: m1Bytes });
        expect(report.objects).to.deep.equal({ total: 8, referenced: 6, unreferenced: 2, within_grace: 1, deleted: 1, deleted_bytes: Number(x.f1.size) });
        expect(report.deleted_bytes).to.equal(m1Bytes + Number(x.f1.size));
        expect(report.missing.count).to.equal(0);
        everyManifestWhole(store);
        // A policy of 48 h alone drops m2 too; repository 1's only manifest stays (the newest).
        const second = await pruneArchive(store, options({ policy: parseRetention('all:48h') }));
        expect(second.manifests.deleted).to.equal(1);
        for (const key of [x.m2, x.f2.key])
            expect(store.objects.has(key), key).to.equal(false);
        for (const key of [x.m3, x.a.key, x.b.key, x.c.key, x.f3.key, x.r1, x.old1.key, x.young.key, 'generations/00000000000000000001', 'generations/00000000000000000002', 'lease/00000000000000000002']) {
            expect(store.objects.has(key), key).to.equal(true);
        }
        everyManifestWhole(store);
        // Again: nothing more to delete. Then the upload in flight ages past the grace period.
        const third = await pruneArchive(store, options({ policy: parseRetention('all:48h') }));
        expect(third.deleted_bytes).to.equal(0);
        expect(store.calls.filter((c) => c.startsWith('delete'))).to.have.length(gone.length + 2);
        const later = await pruneArchive(store, options({ policy: parseRetention('all:48h'), now: () => NOW + DAY }));
        expect(later.objects.deleted).to.equal(1);
        expect(store.objects.has(x.young.key)).to.equal(false);
    });
    it('never deletes an unreferenced object whose listing has no modification time', async () => {
        const store = new MemoryObjectStore();
        await archive(store);
        const orphan = await pack(store, 0, 'orphan');
        const list = store.list.bind(store);
        store.list = async (prefix, opts) => {
            const page = await list(prefix, opts);
            return { ...page, objects: page.objects.map((o) => (o.key === orphan.key ? { key: o.key, size: o.size } : o)) };
        };
        await pruneArchive(store, options({ graceMs: 0 }));
        expect(store.objects.has(orphan.key)).to.equal(true);
    });
    it('stops at a damaged kept manifest, naming it, and deletes nothing', async () => {
        const store = new MemoryObjectStore();
        const x = await archive(store);
        const bytes = store.objects.get(x.m3).bytes;
        bytes[bytes.length - 10] ^= 0xff; // an entry's sha256: the CRC catches it
        const before = [...store.objects.keys()].sort();
        let caught;
        try {
            await pruneArchive(store, options());
        }
        catch (err) {
            caught = err;
        }
        expect(caught).to.be.instanceOf(Corrupt);
        expect(caught.message).to.equal(`archive manifest ${x.m3}: checksum mismatch (the prune stopped and deleted nothing)`);
        expect([...store.objects.keys()].sort()).to.deep.equal(before);
        expect(store.calls.filter((c) => c.startsWith('delete'))).to.deep.equal([]);
        // A manifest whose header does not match its key stops it the same way.
        const fresh = new MemoryObjectStore();
        const y = await archive(fresh);
        fresh.objects.get(y.m1).bytes.writeUInt32LE(9, 20);
        const keys = [...fresh.objects.keys()].sort();
        let refused;
        try {
            await pruneArchive(fresh, options());
        }
        catch (err) {
            refused = err;
        }
        expect(refused.message).to.equal(`archive manifest ${y.m1}: its generations or repository are not those of its key (the prune stopped and deleted nothing)`);
        expect([...fresh.objects.keys()].sort()).to.deep.equal(keys);
    });
    it('leaves every remaining manifest whole when a delete fails at any point', async () => {
        const prune = options({ policy: parseRetention('all:48h'), graceMs: HOUR });
        // Count the deletes of a whole prune: m1, m2, then f1 and f2 (the young pack is in its grace).
        const probe = new MemoryObjectStore();
        const x = await archive(probe);
        await pruneArchive(probe, prune);
        const deletes = probe.calls.filter((c) => c.startsWith('delete '));
        expect(deletes.slice(0, 2).sort()).to.deep.equal([`delete ${x.m1}`, `delete ${x.m2}`].sort());
        expect(deletes.slice(2).sort()).to.deep.equal([`delete ${x.f1.key}`, `delete ${x.f2.key}`].sort());
        // Then fail each delete in turn (the store stops answering there) on a fresh archive.
        for (let n = 1; n <= deletes.length; n++) {
            const store = new MemoryObjectStore();
            await archive(store);
            let count = 0;
            const remove = store.delete.bind(store);
            store.delete = async (key) => {
                if (++count >= n)
                    throw new Error(`delete ${key}: no answer (fault at delete ${n})`);
                return remove(key);
            };
            let caught;
            try {
                await pruneArchive(store, { ...prune, concurrency: 1 });
            }
            catch (err) {
                caught = err;
            }
            expect(caught?.message, `fault at delete ${n}`).to.match(/no answer/);
            everyManifestWhole(store);
        }
    });
    it('marks what a manifest written during the prune names before it sweeps', async () => {
        const store = new MemoryObjectStore();
        const x = await archive(store);
        // A writer (say, restored at an older point) finds pack A and file f1 stored and names them
        // in its next manifest while the prune deletes m1.
        const remove = store.delete.bind(store);
        let written = false;
        store.delete = async (key) => {
            if (!written) {
                written = true;
                await manifest(store, 0, 3n, 4n, NOW, [x.a, x.f1]);
            }
            return remove(key);
        };
        await pruneArchive(store, options({ policy: parseRetention('all:48h') }));
        expect(store.objects.has(x.m1)).to.equal(false);
        expect(store.objects.has(x.f1.key)).to.equal(true);
        expect(store.objects.has(x.f2.key)).to.equal(false);
        everyManifestWhole(store);
    });
    it('lets a purged authority\'s archive go when its newest manifest leaves every window', async () => {
        const store = new MemoryObjectStore();
        const x = await archive(store);
        // Repository 2: its newest manifest's registry record says purged (lifecycle 3, tombstoned).
        const record = Buffer.alloc(40 + 4);
        record.writeUInt32LE(2, 0);
        record.writeUInt8(3, 4);
        record.writeUInt8(1, 24);
        record.writeUInt32LE(4, 32);
        record.write('gone', 40);
        const p = await pack(store, 2, 'purged');
        const reg = await file(store, 2, 1n, 7n, 'registry.rec', record);
        const last = await manifest(store, 2, 1n, 7n, NOW - 31 * DAY, [p, reg]);
        for (const key of [p.key, reg.key, last])
            age(store, key, NOW - 31 * DAY);
        const report = await pruneArchive(store, options());
        expect(report.purged).to.deep.equal([2]);
        for (const key of [last, p.key, reg.key])
            expect(store.objects.has(key), key).to.equal(false);
        // Repository 1's manifest is as old, but not purged: its newest stays.
        expect(store.objects.has(x.r1)).to.equal(true);
        expect(store.objects.has(x.old1.key)).to.equal(true);
    });
    it('lets a purged authority\'s archive go when the writer left its purge marker (the registry record in the manifest still active); the marker stays', async () => {
        const store = new MemoryObjectStore();
        const x = await archive(store);
        const p = await pack(store, 2, 'marked');
        const last = await manifest(store, 2, 1n, 7n, NOW - 31 * DAY, [p]);
        for (const key of [p.key, last])
            age(store, key, NOW - 31 * DAY);
        const unmarked = await pruneArchive(store, options({ dryRun: true }));
        expect(unmarked.purged).to.deep.equal([]);
        const marker = Buffer.from('{"repository_index":2}\n');
        await store.put('repositories/2/purged', marker, { sha256: sha256Hex(marker), size: marker.length });
        age(store, 'repositories/2/purged', NOW - 31 * DAY);
        const report = await pruneArchive(store, options());
        expect(report.purged).to.deep.equal([2]);
        for (const key of [last, p.key])
            expect(store.objects.has(key), key).to.equal(false);
        expect(store.objects.has('repositories/2/purged')).to.equal(true);
        expect(store.objects.has(x.r1)).to.equal(true);
    });
    it('passes over a manifest a stale listing still shows after it was deleted', async () => {
        const store = new MemoryObjectStore();
        const x = await archive(store);
        store.staleListing();
        await pruneArchive(store, options({ policy: parseRetention('all:48h') }));
        expect(store.objects.has(x.m1)).to.equal(false);
        // The listing still shows m1, m2, f1 and f2: the next prune finds nothing left to do.
        const again = await pruneArchive(store, options({ policy: parseRetention('all:48h') }));
        expect(again.manifests).to.include({ total: 2, kept: 2, deleted: 0 });
        everyManifestWhole(store);
    });
    it('reports the objects kept manifests name that the listing does not show, and goes on', async () => {
        const store = new MemoryObjectStore();
        const x = await archive(store);
        store.objects.delete(x.c.key);
        const report = await pruneArchive(store, options());
        expect(report.missing).to.deep.equal({ count: 1, first: [x.c.key] });
        expect(store.objects.has(x.m1)).to.equal(false);
    });
    it('reports in a dry run what a prune deletes, and deletes nothing', async () => {
        const store = new MemoryObjectStore();
        await archive(store);
        const before = [...store.objects.keys()].sort();
        const dry = await pruneArchive(store, options({ dryRun: true }));
        expect(dry.dry_run).to.equal(true);
        expect([...store.objects.keys()].sort()).to.deep.equal(before);
        expect(store.calls.filter((c) => c.startsWith('delete'))).to.deep.equal([]);
        const real = await pruneArchive(store, options());
        expect({ ...real, dry_run: true }).to.deep.equal(dry);
    });
});
describe('cairn archive prune against a real S3-compatible store (Swift s3api)', function () {
    this.timeout(120_000);
    const swift = useSwift();
    const env = () => ({
        AWS_ACCESS_KEY_ID: swift().accessKeyId,
        AWS_SECRET_ACCESS_KEY: swift().secretAccessKey,
        AWS_REGION: swift().region,
        AWS_ENDPOINT_URL_S3: swift().endpoint,
    });
    it('prunes an archive end to end: dry run, then the real run, then nothing more', async () => {
        const settings = s3Settings(env());
        const admin = new S3Client({ region: settings.region, endpoint: settings.endpoint, forcePathStyle: true, credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } });
        await admin.send(new CreateBucketCommand({ Bucket: 'cairn-prune' }));
        admin.destroy();
        const store = new S3ObjectStore({ bucket: 'cairn-prune', prefix: 'team/' }, settings);
        try {
            const now = Date.now();
            const a = await pack(store, 0, 'A');
            const b = await pack(store, 0, 'B');
            const f1 = await file(store, 0, 1n, 1n, 'authority.bin');
            const f2 = await file(store, 0, 1n, 2n, 'authority.bin');
            const m1 = await manifest(store, 0, 1n, 1n, now - 10 * DAY, [a, f1]);
            const m2 = await manifest(store, 0, 1n, 2n, now - 5 * MIN, [a, b, f2]);
            await putObject(store, 'generations/00000000000000000001', Buffer.from('{"generation":1}'));
            const keys = async () => (await store.list('')).objects.map((o) => o.key).sort();
            const before = await keys();
            // Swift's listing rounds a modification time up to the second: with --grace 0s below, wait
            // until every object is listed as older than now.
            await until('objects listed as older than now', async () => (await store.list('')).objects.every((o) => o.lastModified.getTime() < Date.now() - 1000));
            const url = 's3://cairn-prune/team';
            const bad = await cli(['archive', 'prune', '--from', url, '--keep', 'yearly:3w'], env());
            expect(bad.code).to.equal(2);
            expect(bad.stderr).to.include('unknown rule "yearly"');
            const dry = await cli(['archive', 'prune', '--from', url, '--keep', 'all:48h', '--grace', '0s', '--dry-run', '--json'], env());
            expect(dry.code, dry.stderr).to.equal(0);
            const dryReport = JSON.parse(dry.stdout);
            expect(dryReport).to.deep.include({ dry_run: true, policy: 'all:2d', grace: '0s', repositories: 1 });
            expect(dryReport.manifests).to.include({ total: 2, kept: 1, deleted: 1 });
            expect(dryReport.objects).to.include({ total: 4, referenced: 3, deleted: 1 });
            expect(await keys()).to.deep.equal(before);
            // With the default grace of 24 h the just-uploaded f1 stays; only the manifest goes.
            const graced = await cli(['archive', 'prune', '--from', url, '--keep', 'all:48h', '--json'], env());
            expect(graced.code, graced.stderr).to.equal(0);
            expect(JSON.parse(graced.stdout).objects).to.include({ within_grace: 1, deleted: 0 });
            expect(await keys()).to.deep.equal(before.filter((k) => k !== m1));
            const run = await cli(['archive', 'prune', '--from', url, '--keep', 'all:48h', '--grace', '0s', '--json'], env());
            expect(run.code, run.stderr).to.equal(0);
            expect(JSON.parse(run.stdout).objects).to.include({ deleted: 1, deleted_bytes: Number(f1.size) });
            expect(await keys()).to.deep.equal(before.filter((k) => k !== m1 && k !== f1.key));
            expect(await keys()).to.include.members([m2, a.key, b.key, f2.key, 'generations/00000000000000000001']);
            const again = await cli(['archive', 'prune', '--from', url, '--keep', 'all:48h', '--grace', '0s', '--json'], env());
            expect(JSON.parse(again.stdout).deleted_bytes).to.equal(0);
            const tty = await onTty(['archive', 'prune', '--from', url, '--keep', 'all:48h', '--dry-run'], env());
            expect(tty.status, tty.stdout).to.equal(0);
            expect(tty.stdout).to.include('dry run: pruned s3://cairn-prune/team (keep all:2d, grace 1d; 1 repository)');
            expect(tty.stdout).to.include('manifests: 1 kept, would delete 0 (0 B)');
            // A damaged kept manifest: exit 5, named, nothing deleted.
            const bytes = encodeManifest(decodeManifest(await getBytes(store, m2), m2));
            bytes[bytes.length - 10] ^= 0xff;
            await putObject(store, m2, bytes);
            const orphan = await pack(store, 0, 'orphan');
            await until('the orphan listed as older than now', async () => (await store.list('repositories/0/packs/')).objects.every((o) => o.lastModified.getTime() < Date.now() - 1000));
            const held = await keys();
            const damaged = await cli(['archive', 'prune', '--from', url, '--keep', 'all:48h', '--grace', '0s'], env());
            expect(damaged.code).to.equal(5);
            expect(damaged.stderr).to.include(`archive manifest ${m2}: checksum mismatch (the prune stopped and deleted nothing)`);
            expect(damaged.stderr).to.not.include(swift().secretAccessKey);
            // the SDK's Node-version warning is not the user's concern on the supported Node (docs/architecture.md)
            expect(damaged.stderr).to.not.include('NodeVersionSupportWarning');
            expect(await keys()).to.deep.equal(held);
            expect(held).to.include(orphan.key);
        }
        finally {
            store.close();
        }
    });
});
//# sourceMappingURL=archive-prune.test.js.map