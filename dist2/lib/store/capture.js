// A consistent capture of one authority's commit point, for a copier that runs beside commits
// (the archive's shipper): the 512-byte commit-point record, the state it encodes, and an open
// read handle on every file that state names. Taken inside one commit-queue barrier, so no
// commit, merge or compaction runs while the handles are opened; after it, a merge or a
// compaction may unlink a file, and the open handle still reads its bytes (an unlinked file
// lives while a descriptor is open). The capture never reads file contents itself: the barrier
// stays as short as a few opens.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { encodeCommitRecord } from './commit-point.js';
import { INDEX_NAMES, LOG_NAMES } from './layout.js';
import { PACK_KIND_OBJECT, PACK_KIND_TREE } from './pack.js';
const PACK_DIRS = [[PACK_KIND_OBJECT, 'objects'], [PACK_KIND_TREE, 'trees']];
/**
 * Open the files of `state` (called inside a barrier by ContentStore.capture). On a failure,
 * every handle opened so far is closed and the error thrown.
 */
export async function openCapture(layout, state, committedPacks, wants) {
    const files = [];
    const rel = (abs) => path.relative(layout.root, abs).split(path.sep).join('/');
    const close = async () => {
        const all = files.splice(0);
        await Promise.all(all.map((f) => f.handle.close().catch(() => { })));
    };
    const add = async (kind, abs, extra = {}, size, optional = false) => {
        let handle;
        try {
            handle = await fsp.open(abs, 'r');
        }
        catch (err) {
            if (optional && err.code === 'ENOENT')
                return;
            throw err;
        }
        try {
            const length = size ?? (await handle.stat()).size;
            files.push({ kind, path: rel(abs), size: length, handle, ...extra });
        }
        catch (err) {
            await handle.close().catch(() => { });
            throw err;
        }
    };
    try {
        const wantFile = wants.file ?? (() => true);
        await add('identity', layout.identityFile);
        for (const name of LOG_NAMES) {
            const length = state.logs[name];
            if (length === 0)
                continue; // no header yet: the file may not exist
            await add('log', layout.logFile(name, state.log_files[name]), { log: name }, length);
        }
        for (const name of INDEX_NAMES) {
            for (const seg of state.segments[name]) {
                const abs = layout.indexSegment(name, seg);
                if (wantFile(rel(abs)))
                    await add('index', abs);
            }
        }
        if (state.lines_gen) {
            const abs = layout.linesFile(state.lines_gen);
            if (wantFile(rel(abs)))
                await add('lines', abs);
        }
        if (wants.checkpoint)
            await add('checkpoint', layout.workflowCheckpoint, {}, undefined, true);
        if (wants.pack) {
            for (const [kind, dir] of PACK_DIRS) {
                for (const id of committedPacks(kind).sort()) {
                    if (wants.pack(dir, id))
                        await add('pack', layout.packFile(dir, id), { packDir: dir, packId: id });
                }
            }
        }
    }
    catch (err) {
        await close();
        throw err;
    }
    const packs = PACK_DIRS.flatMap(([kind, dir]) => committedPacks(kind).sort().map((id) => ({ dir, id })));
    return { record: encodeCommitRecord(state), state: structuredClone(state), capturedAtUs: BigInt(Date.now()) * 1000n, files, packs, close };
}
//# sourceMappingURL=capture.js.map