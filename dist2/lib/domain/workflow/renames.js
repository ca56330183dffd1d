// Rename and copy detection for the diff routes (docs/api.md "Diffs and land readiness"), as git's
// `-M50% -C`: an added file is a rename of a deleted file, or a copy of a file the diff deletes
// or modifies (its old content), when its content is the same blob (100%) or, failing that, when
// at least SIMILARITY_THRESHOLD percent of the larger side's bytes are found in the other (git's
// measure: content cut into lines of at most 64 bytes, hashed, and the bytes of the lines both
// sides share counted). Each deleted file is renamed at most once; an added file matching a file
// already renamed, or a modified file, is a copy. Files unchanged by the diff are never copy
// sources (git's --find-copies-harder), so the work depends on the changed files only. Unlike
// git, which ranks renames and copies together, renames are looked for before copies.
// Bounded: each inexact pass runs only when (added × its sources) ≤ MAX_RENAME_PAIRS, skips pairs
// whose sizes alone rule out the threshold, reads at most RENAME_BUDGET_BYTES of content (no side
// over MAX_RENAME_FILE_BYTES) and stops after RENAME_TIME_BUDGET_MS; past a bound, the files not
// yet matched stay a delete and an add, and `limit` says which bound was hit.
import { performance } from 'node:perf_hooks';
export const SIMILARITY_THRESHOLD = 50;
/** git's default diff.renameLimit is 1000 (sources × destinations ≤ 1000²). */
export const MAX_RENAME_PAIRS = 1000 * 1000;
export const MAX_RENAME_FILE_BYTES = 1024 * 1024;
export const RENAME_BUDGET_BYTES = 32 * 1024 * 1024;
export const RENAME_TIME_BUDGET_MS = 1000;
export function signature(data) {
    const counts = new Map();
    let h = 0x811c9dc5;
    let len = 0;
    for (let i = 0; i < data.length; i++) {
        const c = data[i];
        h = Math.imul(h ^ c, 0x01000193) >>> 0;
        len++;
        if (c === 10 || len === 64 || i === data.length - 1) {
            counts.set(h, (counts.get(h) ?? 0) + len);
            h = 0x811c9dc5;
            len = 0;
        }
    }
    const hashes = Uint32Array.from(counts.keys()).sort();
    const bytes = new Uint32Array(hashes.length);
    for (let i = 0; i < hashes.length; i++)
        bytes[i] = counts.get(hashes[i]);
    return { size: data.length, hashes, bytes };
}
/** Percent of the larger side's bytes found in both (floored), git's similarity index. */
export function similarity(a, b) {
    const max = Math.max(a.size, b.size);
    if (max === 0)
        return 100;
    let i = 0;
    let j = 0;
    let common = 0;
    while (i < a.hashes.length && j < b.hashes.length) {
        if (a.hashes[i] < b.hashes[j])
            i++;
        else if (a.hashes[i] > b.hashes[j])
            j++;
        else {
            common += Math.min(a.bytes[i], b.bytes[j]);
            i++;
            j++;
        }
    }
    return Math.floor((common * 100) / max);
}
/** Whether sizes alone rule the pair out (git's check before reading either side). */
export function sizesAllow(a, b) {
    const max = Math.max(a, b);
    return (max - Math.min(a, b)) * 100 <= max * (100 - SIMILARITY_THRESHOLD);
}
const isLink = (e) => e.kind === 'symlink';
/**
 * The renames and copies among `changed` (the diff's changed files, in path order): a match per
 * added path, the deleted paths that became renames, and the bound hit, if any.
 */
export async function detectRenames(reader, changed) {
    const matches = new Map();
    const renamedFrom = new Set();
    const deleted = changed.filter((c) => c.old && !c.new);
    const modified = changed.filter((c) => c.old && c.new);
    const added = changed.filter((c) => !c.old && c.new);
    if (added.length === 0 || deleted.length + modified.length === 0)
        return { matches, renamedFrom, limit: null };
    const take = (dst, src, similarityPct) => {
        const rename = !src.new && !renamedFrom.has(src.path);
        if (rename)
            renamedFrom.add(src.path);
        matches.set(dst.path, { from: src.path, source: src.old, kind: rename ? 'renamed' : 'copied', similarity: similarityPct });
    };
    // Exact: the same blob (and both symlinks or both files); deleted sources first, in path order.
    const byId = new Map();
    for (const c of [...deleted, ...modified]) {
        const key = `${isLink(c.old) ? 'l' : 'f'}:${c.old.id}`;
        const list = byId.get(key) ?? [];
        list.push(c);
        byId.set(key, list);
    }
    for (const dst of added) {
        const srcs = byId.get(`${isLink(dst.new) ? 'l' : 'f'}:${dst.new.id}`);
        if (!srcs)
            continue;
        take(dst, srcs.find((s) => !s.new && !renamedFrom.has(s.path)) ?? srcs[0], 100);
    }
    // Inexact: regular files only, not empty, within the size cap. Renames (deleted sources) are
    // looked for first, then copies (modified sources) among the files still unmatched, each pass
    // bounded by its own pair count and by the shared byte and time budgets.
    const eligible = (e) => !isLink(e) && reader.blobSize(e.id) > 0 && reader.blobSize(e.id) <= MAX_RENAME_FILE_BYTES;
    let bytes = RENAME_BUDGET_BYTES;
    const started = performance.now();
    let limit = null;
    const sigs = new Map();
    const sig = async (e) => {
        const known = sigs.get(e.id);
        if (known !== undefined)
            return known;
        const size = reader.blobSize(e.id);
        if (size > bytes) {
            limit = 'byte_budget';
            return null;
        }
        bytes -= size;
        // Binary content is compared as git does, by the same chunks.
        const s = signature(await reader.readBlob(e.id));
        sigs.set(e.id, s);
        return s;
    };
    for (const pass of [deleted, modified]) {
        const dsts = added.filter((c) => !matches.has(c.path) && eligible(c.new));
        const sources = pass.filter((c) => eligible(c.old));
        if (dsts.length === 0 || sources.length === 0)
            continue;
        if (dsts.length * sources.length > MAX_RENAME_PAIRS) {
            limit ??= 'pairs';
            continue;
        }
        // Signatures first (reads, within the byte budget), then the pairs without awaiting.
        const srcSigs = [];
        for (const src of sources) {
            const sg = await sig(src.old);
            if (!sg)
                break;
            srcSigs.push([src, sg]);
        }
        const scored = [];
        let order = 0;
        outer: for (const dst of dsts) {
            const b = await sig(dst.new);
            if (!b)
                break;
            for (const [src, a] of srcSigs) {
                order++;
                if (!sizesAllow(b.size, a.size))
                    continue;
                if ((order & 255) === 0 && performance.now() - started > RENAME_TIME_BUDGET_MS) {
                    limit = 'time_budget';
                    break outer;
                }
                const score = similarity(a, b);
                if (score >= SIMILARITY_THRESHOLD)
                    scored.push({ dst, src, score, order });
            }
            // Let other requests run between destinations.
            await new Promise((resolve) => setImmediate(resolve));
        }
        // Best scores first, then path order; what was scored before a bound still counts.
        scored.sort((x, y) => y.score - x.score || x.order - y.order);
        for (const m of scored)
            if (!matches.has(m.dst.path))
                take(m.dst, m.src, Math.min(m.score, 99));
        const stopped = limit; // set inside sig() and the loop above
        if (stopped === 'time_budget' || stopped === 'byte_budget')
            break;
    }
    return { matches, renamedFrom, limit };
}
//# sourceMappingURL=renames.js.map