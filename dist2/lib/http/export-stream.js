import { Busy, Invalid } from '../domain/errors.js';
/** Snapshot exports larger than this (raw file bytes, with include_content) are refused. */
export const MAX_EXPORT_CONTENT = 256 * 1024 * 1024;
/** Exports with content in flight at once; more answer 503 with Retry-After: 1. */
export const MAX_CONTENT_EXPORTS = 4;
/** Raw bytes read and encoded per step (a multiple of 3, so base64 pieces concatenate). */
const PIECE = 3 * 16 * 1024;
let contentExports = 0;
function fileHead(item, size, includeContent) {
    const file = { path: item.path, kind: item.entry.kind, blob_id: item.entry.id, size };
    if (!includeContent)
        return JSON.stringify(file);
    file.encoding = 'base64';
    // `{...,"encoding":"base64"` then `,"content":"` + base64 + `"}`.
    return `${JSON.stringify(file).slice(0, -1)},"content":"`;
}
const base64Length = (n) => 4 * Math.ceil(n / 3);
export async function exportSnapshot(req) {
    const { content, snapshot, narrowed, includeContent } = req;
    const target = await content.resolvePath(snapshot.root_tree_id, narrowed);
    let directories;
    let files;
    if (target && target.kind !== 'directory') {
        directories = async function* () { };
        files = async function* () { yield { path: narrowed, entry: target }; };
    }
    else {
        const treeId = target ? target.id : snapshot.root_tree_id;
        const what = narrowed === '' ? `snapshot ${snapshot.snapshot_id}` : `path ${narrowed} of snapshot ${snapshot.snapshot_id}`;
        // A tree over the limit a snapshot may hold (kept from before the limit) is not expanded: its
        // size is a lookup (or a walk of its distinct trees), and each walk below is bounded too.
        await content.requireExpandable(treeId, what);
        const root = { path: narrowed, entry: { name: '', kind: 'directory', id: treeId } };
        // The walks below (count, directories, files) read the same trees: each is read once.
        const readTree = content.treeMemo();
        directories = async function* () {
            yield root;
            for await (const { path, entry } of content.walk(treeId, narrowed, readTree, content.walkBudget(`the export of ${what}`)))
                if (entry.kind === 'directory')
                    yield { path, entry };
        };
        files = async function* () {
            for await (const { path, entry } of content.walk(treeId, narrowed, readTree, content.walkBudget(`the export of ${what}`)))
                if (entry.kind !== 'directory')
                    yield { path, entry };
        };
    }
    const dirJson = (d) => JSON.stringify({ path: d.path, tree_id: d.entry.id });
    // Pass 1: counts, the content cap, the exact body length.
    let fileCount = 0;
    let totalBytes = 0;
    let listBytes = 0;
    for await (const f of files()) {
        const size = content.rawSize('blob', f.entry.id);
        totalBytes += size;
        if (includeContent && totalBytes > MAX_EXPORT_CONTENT) {
            throw new Invalid(`snapshot export with content exceeds ${MAX_EXPORT_CONTENT} bytes; use include_content=false, narrow it with path, or fetch packs`);
        }
        listBytes += (fileCount > 0 ? 1 : 0) + Buffer.byteLength(fileHead(f, size, includeContent)) + (includeContent ? base64Length(size) + 2 : 0);
        fileCount++;
    }
    let dirCount = 0;
    for await (const d of directories())
        listBytes += (dirCount++ > 0 ? 1 : 0) + Buffer.byteLength(dirJson(d));
    const head = `${JSON.stringify({
        snapshot: { ...snapshot },
        path: narrowed === '' ? null : narrowed,
        include_content: includeContent,
        file_count: fileCount,
        total_bytes: totalBytes,
    }).slice(0, -1)},"directories":[`;
    const length = Buffer.byteLength(head) + listBytes + '],"files":['.length + ']}'.length;
    if (req.headOnly)
        return { length, write: null };
    if (includeContent) {
        if (contentExports >= MAX_CONTENT_EXPORTS)
            throw new Busy(`${MAX_CONTENT_EXPORTS} snapshot exports with content are already running; retry`);
        contentExports++;
    }
    // Strings are written straight to the socket (no Buffer per piece: garbage buffers are
    // external memory, which V8 lets grow by ~64 MB before it collects); one staging buffer.
    const write = async (res) => {
        const stage = Buffer.allocUnsafe(PIECE);
        let pending = head;
        const out = async (text, encoding) => {
            if (res.destroyed)
                throw new Invalid('request was aborted: the client went away during the export');
            if (!res.write(text, encoding)) {
                await new Promise((resolve) => {
                    const done = () => { res.off('drain', done); res.off('close', done); resolve(); };
                    res.once('drain', done);
                    res.once('close', done);
                });
            }
        };
        const flush = async (force = false) => {
            if (pending.length >= 64 * 1024 || (force && pending.length > 0)) {
                const text = pending;
                pending = '';
                await out(text, 'utf8');
            }
        };
        try {
            let first = true;
            for await (const d of directories()) {
                pending += (first ? '' : ',') + dirJson(d);
                first = false;
                await flush();
            }
            pending += '],"files":[';
            first = true;
            for await (const f of files()) {
                const size = content.rawSize('blob', f.entry.id);
                pending += (first ? '' : ',') + fileHead(f, size, includeContent);
                first = false;
                if (includeContent) {
                    let staged = 0;
                    for await (const piece of content.blobPieces(f.entry.id, PIECE)) {
                        let at = 0;
                        while (at < piece.length) {
                            const n = Math.min(piece.length - at, PIECE - staged);
                            piece.copy(stage, staged, at, at + n);
                            staged += n;
                            at += n;
                            if (staged === PIECE) {
                                // PIECE is a multiple of 3: its base64 joins the next piece's with no padding.
                                await flush(true);
                                await out(stage.toString('base64', 0, PIECE), 'latin1');
                                staged = 0;
                            }
                        }
                    }
                    pending += stage.toString('base64', 0, staged) + '"}';
                }
                await flush();
            }
            pending += ']}';
            await flush(true);
            res.end();
        }
        catch (err) {
            // Headers are gone: the only honest signal left is a truncated body.
            res.destroy();
            throw err;
        }
        finally {
            if (includeContent)
                contentExports--;
        }
    };
    return { length, write };
}
//# sourceMappingURL=export-stream.js.map