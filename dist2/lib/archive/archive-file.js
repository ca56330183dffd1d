// DATA/archive.json (storage-layout.md §20.3): the archive a data directory ships to (its
// canonical URL and the archive id stored in it), the generation it claimed there, and whether
// a newer writer fenced it. Written by the writer's claim and its fence, a restore ("0": not
// claimed yet), a promotion and `cairn archive reclaim`; read by `serve --archive` at start.
import { promises as fsp } from 'node:fs';
import { writeFileDurable } from '../store/durable.js';
const GENERATION = /^(0|[1-9][0-9]{0,19})$/;
export const ARCHIVE_ID = /^[0-9a-f]{32}$/;
export async function readArchiveFile(file) {
    let text;
    try {
        text = await fsp.readFile(file, 'utf8');
    }
    catch (err) {
        if (err.code === 'ENOENT')
            return null;
        throw err;
    }
    const bad = () => new Error(`${file} is not an archive file ({"url": "s3://…", "generation": "N", …}, storage-layout.md §20.3)`);
    let parsed;
    try {
        parsed = JSON.parse(text);
    }
    catch {
        throw bad();
    }
    if (typeof parsed !== 'object' || parsed === null || typeof parsed.url !== 'string' || typeof parsed.generation !== 'string' || !GENERATION.test(parsed.generation))
        throw bad();
    const out = { url: parsed.url, generation: parsed.generation };
    if (parsed.archive_id !== undefined) {
        if (typeof parsed.archive_id !== 'string' || !ARCHIVE_ID.test(parsed.archive_id))
            throw bad();
        out.archive_id = parsed.archive_id;
    }
    if (parsed.fenced !== undefined) {
        const f = parsed.fenced;
        if (typeof f !== 'object' || f === null || typeof f.by !== 'string' || !GENERATION.test(f.by) || typeof f.at !== 'string' || typeof f.why !== 'string')
            throw bad();
        out.fenced = { by: f.by, at: f.at, why: f.why };
    }
    if (parsed.reclaimed_at !== undefined) {
        if (typeof parsed.reclaimed_at !== 'string')
            throw bad();
        out.reclaimed_at = parsed.reclaimed_at;
    }
    return out;
}
/**
 * Write archive.json. A fence already recorded there is kept whatever `value` says (a claim, a
 * promotion): only `clearFence` (`cairn archive reclaim`) drops it, so no rewrite un-fences a
 * directory by leaving the field out. An unreadable file is an error, never a silent un-fence.
 */
export async function writeArchiveFile(file, value, opts = {}) {
    let out = value;
    if (!opts.clearFence && value.fenced === undefined) {
        const before = await readArchiveFile(file);
        if (before?.fenced)
            out = { ...value, fenced: before.fenced };
    }
    await writeFileDurable(file, `${JSON.stringify(out)}\n`);
}
/** Why a data directory may not follow (and so be promoted): a newer writer fenced it; else null. */
export async function fencedRefusal(file, dataDir) {
    const local = await readArchiveFile(file);
    if (!local?.fenced)
        return null;
    return `${dataDir} was fenced by generation ${local.fenced.by} of ${local.url} (recorded in archive.json at ${local.fenced.at}): it may neither follow nor be promoted until cairn archive reclaim --data ${dataDir}`;
}
//# sourceMappingURL=archive-file.js.map