// The changed-file statistics of a patchset: a tree diff of base → revision over a reader (the
// store in production, maps in tests). Only subtrees whose ids differ are walked; an added or
// deleted directory is walked on its one side. Line counts come from the diff routes' own line
// diff (`lineDiff` in ./content-diff.ts), so a patchset's counts equal its diff's without rename
// detection (`?renames=false`: the record is per path, a rename its delete and add). They are
// bounded work (docs/api.md "Tasks, changes, patchsets"): a blob over MAX_LINE_COUNT_BYTES (the
// size the diff routes do not count), binary or non-UTF-8 content and symlinks get no line
// counts, and once LINE_BUDGET_BYTES of blob
// content have been read, or DIFF_TIME_BUDGET_MS spent in line diffs, for one diff, later files
// get none either (`lines_complete` false).
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { changedEntries, DIFF_TIME_BUDGET_MS, MAX_COUNT_FILE_BYTES, lineDiff } from './content-diff.js';
import { Invalid } from '../errors.js';
import { WalkBudget } from '../tree-size.js';
/** As the diff routes: a side over this is not counted there, and counted here as unknown. */
export const MAX_LINE_COUNT_BYTES = MAX_COUNT_FILE_BYTES;
export const LINE_BUDGET_BYTES = 64 * 1024 * 1024;
export const MAX_LISTED_FILES = 1000;
/**
 * `paths` counts the entries the diff visits (it throws past its limit) and paces the walk:
 * trees read from memory resolve at once, so without its pauses a long walk would hold the
 * event loop. Memory holds the first MAX_LISTED_FILES changed files and running totals.
 */
export async function diffTrees(reader, baseTree, revisionTree, paths = new WalkBudget(Infinity, () => new Invalid('unreachable'))) {
    const listed = [];
    const stats = {
        files_changed: 0,
        files_added: 0,
        files_modified: 0,
        files_deleted: 0,
        mode_only: 0,
        symlinks_changed: 0,
        bytes_before: 0,
        bytes_after: 0,
        lines_added: 0,
        lines_removed: 0,
        lines_complete: true,
    };
    const fingerprint = createHash('sha256');
    let budget = LINE_BUDGET_BYTES;
    let ms = DIFF_TIME_BUDGET_MS;
    let complete = true;
    /** The side's content, or null when it is over the size or the diff's budget (not counted). */
    async function content(e) {
        if (!e)
            return Buffer.alloc(0);
        const size = reader.blobSize(e.id);
        if (size > MAX_LINE_COUNT_BYTES || size > budget)
            return null;
        budget -= size;
        return reader.readBlob(e.id);
    }
    async function file(p, oldE, newE) {
        const change = oldE && newE ? 'modified' : newE ? 'added' : 'deleted';
        fingerprint.update(`${p}\u0000${newE?.kind ?? '-'}\u0000${newE?.id ?? '-'}\n`);
        const contentChanged = !oldE || !newE || oldE.id !== newE.id;
        const entry = {
            path: p,
            change,
            old_kind: oldE?.kind ?? null,
            new_kind: newE?.kind ?? null,
            mode_changed: !!oldE && !!newE && oldE.kind !== newE.kind,
            content_changed: contentChanged,
            old_bytes: oldE ? reader.blobSize(oldE.id) : null,
            new_bytes: newE ? reader.blobSize(newE.id) : null,
            lines_added: null,
            lines_removed: null,
            binary: false,
        };
        const textual = (e) => !e || e.kind !== 'symlink';
        if (textual(oldE) && textual(newE)) {
            if (!contentChanged) {
                entry.lines_added = 0;
                entry.lines_removed = 0;
            }
            else {
                const before = ms > 0 ? await content(oldE) : null;
                const after = before === null ? null : await content(newE);
                let d = null;
                if (before !== null && after !== null) {
                    const t0 = performance.now();
                    d = lineDiff(before, after, 0);
                    ms -= performance.now() - t0;
                }
                if (d?.kind === 'binary' || d?.kind === 'not_utf8')
                    entry.binary = true;
                else if (d?.kind === 'text') {
                    entry.lines_added = d.additions;
                    entry.lines_removed = d.deletions;
                }
                else
                    complete = false;
            }
        }
        count(entry);
        if (listed.length < MAX_LISTED_FILES)
            listed.push(entry);
    }
    function count(f) {
        stats.files_changed++;
        if (f.change === 'added')
            stats.files_added++;
        else if (f.change === 'deleted')
            stats.files_deleted++;
        else
            stats.files_modified++;
        if (f.change === 'modified' && !f.content_changed)
            stats.mode_only++;
        if (f.old_kind === 'symlink' || f.new_kind === 'symlink')
            stats.symlinks_changed++;
        stats.bytes_before += f.old_bytes ?? 0;
        stats.bytes_after += f.new_bytes ?? 0;
        stats.lines_added += f.lines_added ?? 0;
        stats.lines_removed += f.lines_removed ?? 0;
    }
    // The walk of the diff routes (iterative: a tree of any depth diffs), so the records and the
    // diffs list the same paths in the same order.
    for await (const e of changedEntries(reader, baseTree, revisionTree, [], paths))
        await file(e.path, e.old, e.new);
    stats.lines_complete = complete;
    return { stats, files: listed, files_truncated: stats.files_changed > MAX_LISTED_FILES, fingerprint: fingerprint.digest('hex') };
}
//# sourceMappingURL=tree-diff.js.map