// Tests only: write an archive of a data directory that no server is writing (or whose writes
// have stopped for the moment), per storage-layout.md §20 — the packs, every index segment the
// commit point names, authority.bin, workflow.ckpt, each log's committed bytes as a base and one
// range after it, the registry record, then the manifest last. Restore tests use it to make
// archives without depending on the server's shipper.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { encodeManifest, fileKey, logRangeKey, manifestKey, packKey, registryRecordKey, } from '../lib/domain/archive-manifest.js';
import { sha256Hex } from '../lib/archive/object-store.js';
import { COMMIT_FILE_SIZE, SLOT_SIZE, RECORD_SIZE, decodeCommitFile } from '../lib/store/commit-point.js';
import { Layout, LOG_NAMES, INDEX_NAMES } from '../lib/store/layout.js';
import { decodeRegistry } from '../lib/store/registry-file.js';
/** One 40-byte registry record with name_offset 0, then the name (§20.1's registry.rec). */
function registryObject(r) {
    const name = Buffer.from(r.repository_name, 'utf8');
    const rec = Buffer.alloc(40);
    rec.writeUInt32LE(r.repository_index, 0);
    rec.writeUInt8(r.lifecycle_kind, 4);
    rec.write(r.namespace.padEnd(2, '\0'), 5, 2, 'latin1');
    rec.writeUInt8(r.policy_flags, 7);
    rec.writeBigUInt64LE(BigInt(r.created_at_s), 8);
    rec.writeBigUInt64LE(BigInt(r.updated_at_s), 16);
    rec.writeUInt8(r.tombstoned ? 1 : 0, 24);
    rec.writeUInt32LE(0, 28);
    rec.writeUInt32LE(name.length, 32);
    rec.writeUInt32LE(crc32(rec.subarray(0, 36)), 36);
    return Buffer.concat([rec, name]);
}
async function exists(p) {
    return fsp.access(p).then(() => true, () => false);
}
/**
 * Ship the current commit point of every (or the named) repository of `dataDir`: objects
 * first, the manifest last. `gen` is the archive generation in the keys.
 */
export async function shipDataDir(store, dataDir, options = {}) {
    const gen = options.gen ?? 1n;
    const layout = new Layout(dataDir);
    const records = decodeRegistry(await fsp.readFile(layout.registryFile));
    const shipped = [];
    for (const r of records) {
        if (options.repositories && !options.repositories.includes(r.repository_index))
            continue;
        if (r.lifecycle_kind === 3)
            continue;
        const index = r.repository_index;
        const dir = layout.repositoryDir(index);
        const commitBytes = await fsp.readFile(path.join(dir, 'commit.bin'));
        if (commitBytes.length !== COMMIT_FILE_SIZE)
            continue;
        const state = decodeCommitFile(commitBytes);
        if (!state)
            continue;
        const G = BigInt(state.generation);
        const record = Buffer.from(commitBytes.subarray((state.generation % 2) * SLOT_SIZE, (state.generation % 2) * SLOT_SIZE + RECORD_SIZE));
        const entries = [];
        const put = async (entry, bytes) => {
            const sha256 = sha256Hex(bytes);
            await store.put(entry.key, bytes, { sha256, size: bytes.length });
            entries.push({ ...entry, sha256, size: BigInt(bytes.length) });
        };
        for (const kind of ['objects', 'trees']) {
            const packDir = path.join(dir, 'packs', kind);
            const names = (await exists(packDir)) ? await fsp.readdir(packDir) : [];
            for (const name of names.filter((n) => /^[0-9a-f]{64}\.pack$/.test(n))) {
                await put({ kind: 'pack', key: packKey(index, kind, name.slice(0, 64)), path: `packs/${kind}/${name}`, offset: 0n }, await fsp.readFile(path.join(packDir, name)));
            }
        }
        for (const name of INDEX_NAMES) {
            for (const seg of state.segments[name]) {
                const p = `index/${name}.${seg}.idx`;
                await put({ kind: 'file', key: fileKey(index, gen, G, p), path: p, offset: 0n }, await fsp.readFile(path.join(dir, p)));
            }
        }
        await put({ kind: 'file', key: fileKey(index, gen, G, 'authority.bin'), path: 'authority.bin', offset: 0n }, await fsp.readFile(path.join(dir, 'authority.bin')));
        if (await exists(path.join(dir, 'workflow.ckpt'))) {
            await put({ kind: 'file', key: fileKey(index, gen, G, 'workflow.ckpt'), path: 'workflow.ckpt', offset: 0n }, await fsp.readFile(path.join(dir, 'workflow.ckpt')));
        }
        for (const name of LOG_NAMES) {
            const length = state.logs[name];
            if (length === 0)
                continue;
            const file = state.log_files[name] ? `${name}.${state.log_files[name]}.log` : `${name}.log`;
            const bytes = (await fsp.readFile(path.join(dir, file))).subarray(0, length);
            // A base and a range after it, so a restore assembles a log from pieces by position.
            const cut = Math.max(1, Math.floor(length / 2));
            await put({ kind: 'log-range', key: logRangeKey(index, gen, file, 0n, BigInt(cut)), path: file, offset: 0n }, bytes.subarray(0, cut));
            if (cut < length)
                await put({ kind: 'log-range', key: logRangeKey(index, gen, file, BigInt(cut), BigInt(length)), path: file, offset: BigInt(cut) }, bytes.subarray(cut));
        }
        await put({ kind: 'registry', key: registryRecordKey(index, gen, G), path: 'registry.rec', offset: 0n }, registryObject(r));
        entries.sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)));
        const capturedAtUs = options.capturedAtUs ?? BigInt(Date.now()) * 1000n;
        const manifest = encodeManifest({ archiveGeneration: gen, repository: index, commitGeneration: G, capturedAtUs, commitPoint: record, entries });
        const key = manifestKey(index, gen, G);
        await store.put(key, manifest, { sha256: sha256Hex(manifest), size: manifest.length });
        shipped.push({ repository: index, key, commit: state.generation, capturedAtUs });
    }
    return shipped;
}
//# sourceMappingURL=archive-dir-ship.js.map