import { closeSync, openSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { Corrupt } from '../domain/errors.js';
import { CommitPointFile, COMMIT_FILE_SIZE, emptyCommitState, encodeCommitRecord, SLOT_SIZE } from './commit-point.js';
import { decodeState } from './content-files.js';
import { exists, fsyncDir, isTempName, mkdirDurable, removeDurable, renameDurable, writeFileDurable } from './durable.js';
import { legacyValidLength } from './framed-log.js';
import { AuthorityLayout, INDEX_NAMES, INDEX_SEGMENT_NAME, LINES_FILE_NAME, LOG_FILE_NAME, LOG_MAGIC } from './layout.js';
import { PACK_DIR, PACK_KINDS, PublishedStore } from './published.js';
/**
 * Recover the authority at `root` and open its published state and its commit point. Returns
 * notes about what was repaired or upgraded.
 */
export async function recoverStore(root, options) {
    const L = new AuthorityLayout(root);
    const notes = [];
    for (const kind of PACK_KINDS) {
        await mkdirDurable(L.packDir(PACK_DIR[kind]));
        await mkdirDurable(L.stagingDir(PACK_DIR[kind]));
    }
    await mkdirDurable(L.indexDir);
    if (!(await exists(L.commitFile)))
        await upgradeFromV0(L, notes);
    else if (await exists(L.legacyStateFile)) {
        // An upgrade that stopped after writing commit.bin: state.bin is no longer read.
        await removeDurable(L.legacyStateFile);
        notes.push('removed state.bin left by an interrupted format upgrade');
    }
    const { point, state } = CommitPointFile.open(L.commitFile, false);
    const published = new PublishedStore(L, state ?? emptyCommitState());
    // Before the replay: it counts the values of format 1 this key sealed (storage-layout.md §17.2).
    published.setSealKey(options.sealKey ?? null);
    try {
        await published.load(options.rebuildingLocators === true, notes, options.checkpoint !== false);
        await removeUnnamedFiles(L, published.state, notes);
        await returnUncommittedPacks(published, options, notes);
    }
    catch (err) {
        published.close();
        point.close();
        throw err;
    }
    return { published, point, notes };
}
/**
 * Format v0 kept `state.bin` (rewritten per commit) and no committed length for jobs.log and
 * plans.log. Build commit.bin from it once: the same generations and snapshot length, the
 * other logs' intact length under v0's rule; then remove state.bin.
 */
async function upgradeFromV0(L, notes) {
    const s = emptyCommitState();
    let legacy = false;
    try {
        const v0 = decodeState(await fsp.readFile(L.legacyStateFile));
        legacy = true;
        s.generation = v0.generation;
        s.logs.snapshots = v0.snapshot_log_length;
        s.snapshot_count = v0.snapshot_count;
        s.lines_gen = v0.lines_gen;
        if (v0.blobs_idx_gen)
            s.segments.blobs = [v0.blobs_idx_gen];
        if (v0.trees_idx_gen)
            s.segments.trees = [v0.trees_idx_gen];
        if (v0.snapshots_idx_gen)
            s.segments.snapshots = [v0.snapshots_idx_gen];
    }
    catch (err) {
        if (err.code !== 'ENOENT')
            throw err;
    }
    for (const name of ['jobs', 'plans']) {
        const file = L.logFile(name);
        if (!(await exists(file)))
            continue;
        legacy = true;
        const fd = openSync(file, 'r');
        try {
            const { length, note } = legacyValidLength(fd, LOG_MAGIC[name], `${name}.log`);
            s.logs[name] = length;
            if (note)
                notes.push(note);
        }
        finally {
            closeSync(fd);
        }
    }
    const file = Buffer.alloc(COMMIT_FILE_SIZE);
    if (legacy) {
        s.generation += 1;
        encodeCommitRecord(s).copy(file, (s.generation % 2) * SLOT_SIZE);
    }
    await writeFileDurable(L.commitFile, file);
    if (legacy) {
        await removeDurable(L.legacyStateFile);
        notes.push(`upgraded storage format v0 to v1 (commit.bin generation ${s.generation}, ${s.logs.jobs} bytes of jobs.log and ${s.logs.plans} of plans.log committed)`);
    }
}
async function removeUnnamedFiles(L, state, notes) {
    const keep = new Set();
    for (const name of INDEX_NAMES)
        for (const seg of state.segments[name])
            keep.add(`${name}.${seg}.idx`);
    let removed = false;
    for (const name of await fsp.readdir(L.indexDir)) {
        // Temp files are the start's sweep's (Authority.open; fsck, which opens without it, notes them).
        if (keep.has(name) || isTempName(name))
            continue;
        await fsp.rm(path.join(L.indexDir, name), { force: true });
        removed = true;
        if (!INDEX_SEGMENT_NAME.test(name))
            notes.push(`removed unexpected file index/${name}`);
    }
    if (removed)
        await fsyncDir(L.indexDir);
    for (const name of await fsp.readdir(L.root)) {
        const m = LINES_FILE_NAME.exec(name);
        const log = LOG_FILE_NAME.exec(name);
        // A lines checkpoint, or a log file a compaction replaced or never committed.
        const stale = (m && Number(m[1]) !== state.lines_gen) || (log && Number(log[2] ?? 0) !== state.log_files[log[1]]);
        if (stale) {
            await fsp.rm(path.join(L.root, name), { force: true });
            await fsyncDir(L.root);
        }
    }
}
/**
 * A pack in packs/ that no segment references was adopted by a commit that never reached its
 * commit point: move it back to staging (a retry adopts it again). While locators are being
 * rebuilt, every pack in packs/ counts as committed.
 */
async function returnUncommittedPacks(published, options, notes) {
    for (const kind of PACK_KINDS) {
        const referenced = options.rebuildingLocators ? new Set(await published.packFiles(kind)) : published.referencedPacks(kind);
        for (const name of await fsp.readdir(published.packDir(kind))) {
            const id = name.replace(/\.pack$/, '');
            if (referenced.has(id) || isTempName(name))
                continue;
            notes.push(`pack ${PACK_DIR[kind]}/${name} was not committed; moved back to staging`);
            await renameDurable(path.join(published.packDir(kind), name), path.join(published.stagingDir(kind), name));
        }
        for (const id of referenced) {
            if (!(await exists(published.packFile(kind, id))))
                throw new Corrupt(`committed pack ${PACK_DIR[kind]}/${id}.pack is missing`);
            published.addCommittedPack(kind, id);
        }
    }
}
//# sourceMappingURL=recovery.js.map