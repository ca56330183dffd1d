// Export listing of an authority (storage-layout.md §15): everything the authority owns lives
// under its directory, so the listing is the whole authority. Uncommitted uploads (staging/)
// and temp files are not part of it. Files are hashed as streams.
import { createHash } from 'node:crypto';
import { createReadStream, promises as fsp } from 'node:fs';
import path from 'node:path';
import fg from 'fast-glob';
import { isTempName } from './durable.js';
import { cleanRelativePath } from '../domain/paths.js';
/** Relative paths (forward slashes) of every exported file, sorted bytewise. */
export async function listAuthorityFiles(root) {
    const paths = await fg('**', { cwd: root, dot: true, onlyFiles: true, followSymbolicLinks: false, ignore: ['staging/**'] });
    return paths.filter((p) => !p.split('/').some(isTempName)).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}
/** Files up to this size are read in one call; larger ones stream in 1 MiB chunks. */
const WHOLE_READ_LIMIT = 4 * 1024 * 1024;
/**
 * Whether `relPath` names a file of the export listing, without listing the directory: a clean
 * relative path (no "..", no leading "/", no "\\", no NUL), outside staging/, not a temp file,
 * and a regular file (symlinks are not followed, as in the listing).
 */
export async function isListedFile(root, relPath) {
    let clean;
    try {
        clean = cleanRelativePath(relPath, 'path');
    }
    catch {
        return false;
    }
    if (clean !== relPath)
        return false;
    const parts = clean.split('/');
    if (parts[0] === 'staging' || parts.some(isTempName))
        return false;
    try {
        return (await fsp.lstat(path.join(root, ...parts))).isFile();
    }
    catch {
        return false;
    }
}
export async function hashFile(file) {
    const { size: statSize } = await fsp.stat(file);
    if (statSize <= WHOLE_READ_LIMIT) {
        const bytes = await fsp.readFile(file);
        return { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
    }
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) {
        hash.update(chunk);
        size += chunk.length;
    }
    return { size, sha256: hash.digest('hex') };
}
/** Every exported file with its size and sha256 (four files in flight at a time). */
export async function exportFiles(root, cache) {
    const paths = await listAuthorityFiles(root);
    const out = new Array(paths.length);
    let next = 0;
    await Promise.all([0, 1, 2, 3].map(async () => {
        while (next < paths.length) {
            const i = next++;
            const file = path.join(root, paths[i]);
            const st = cache ? await fsp.stat(file, { bigint: true }) : null;
            const hit = st ? cache.get(paths[i]) : undefined;
            if (st && hit && hit.ino === st.ino && hit.size === st.size && hit.mtimeNs === st.mtimeNs) {
                out[i] = { path: paths[i], size: Number(st.size), sha256: hit.sha256 };
                continue;
            }
            out[i] = { path: paths[i], ...(await hashFile(file)) };
            if (st)
                cache.set(paths[i], { ino: st.ino, size: st.size, mtimeNs: st.mtimeNs, sha256: out[i].sha256 });
        }
    }));
    if (cache)
        for (const key of [...cache.keys()])
            if (!paths.includes(key))
                cache.delete(key);
    return out;
}
/** Stream `from` to `to` (creating parents), durably; returns size and sha256 of what was copied. */
export async function copyFileHashed(from, to) {
    await fsp.mkdir(path.dirname(to), { recursive: true });
    const hash = createHash('sha256');
    let size = 0;
    const out = await fsp.open(to, 'w', 0o644);
    try {
        for await (const chunk of createReadStream(from, { highWaterMark: 1024 * 1024 })) {
            hash.update(chunk);
            size += chunk.length;
            await out.write(chunk);
        }
        await out.sync();
    }
    finally {
        await out.close();
    }
    return { size, sha256: hash.digest('hex') };
}
//# sourceMappingURL=export.js.map