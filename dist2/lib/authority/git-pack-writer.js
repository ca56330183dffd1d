// A git pack written by the exporter straight from the object bytes it builds (docs/git.md "The
// shadow repository"): entries appended to a temp file under cairn-tmp/, each blob or tree stored
// as a delta against the previous version of the same path when that is at most half its size,
// then the header, the checksum and the version-2 .idx, fsynced, and renamed into objects/pack/
// (the .pack first, then the .idx: git reads a pack only once its index is there). Objects keep
// their bytes, so their ids are the ids of the loose objects git would write.
import { createHash, randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { encodePackIndex, ofsDeltaDistance, packEntryHeader, packHeader, prefixSuffixDelta, storedZlib, PACK_OBJECT_TYPE, PACK_OFS_DELTA } from '../domain/git-pack.js';
import { crashPoint } from '../store/crash-point.js';
import { fsyncDir } from '../store/durable.js';
/** Bytes gathered before one write to the temp file. */
const WRITE_CHUNK = 1024 * 1024;
/** Longest delta chain (git's pack.depth default): a reader applies at most this many deltas. */
const MAX_DEPTH = 50;
/** Bytes of previous versions kept as delta bases (the oldest paths are forgotten first). */
const BASE_CACHE_BYTES = 32 * 1024 * 1024;
/** A version larger than this is not kept as a base. */
const MAX_BASE_BYTES = 1024 * 1024;
/**
 * Entries smaller than this are stored in zlib's stored blocks instead of deflated: deflate
 * gains little on them (a delta is mostly ids and offsets), and a call into zlib costs more than
 * the rest of writing such an object.
 */
const DEFLATE_FROM = 256;
const compress = (data) => (data.length < DEFLATE_FROM ? storedZlib(data) : deflateSync(data));
export class GitPackWriter {
    file;
    handle;
    ids = new Set();
    entries = [];
    /** Where the next entry starts (after the 12-byte header). */
    end = 12;
    pending = [];
    pendingBytes = 0;
    /** Where `pending` goes in the file. */
    flushedTo = 12;
    bases = new Map();
    baseBytes = 0;
    constructor(file, handle) {
        this.file = file;
        this.handle = handle;
    }
    /** A new, empty pack in `tempDir`. */
    static async open(tempDir) {
        const file = path.join(tempDir, `pack-${randomBytes(8).toString('hex')}.pack`);
        return new GitPackWriter(file, await fsp.open(file, 'wx+', 0o444));
    }
    /** Objects added so far. */
    get count() {
        return this.entries.length;
    }
    /** Bytes of the pack so far. */
    get bytes() {
        return this.end;
    }
    has(id) {
        return this.ids.has(id);
    }
    /**
     * Append object `id` (its body, without git's `<type> <size>` header). `where` names the path
     * of a blob or tree: the previous version of that path in this pack is its delta base.
     */
    async add(type, id, body, where) {
        if (this.ids.has(id))
            return;
        const offset = this.end;
        const key = where !== undefined && (type === 'blob' || type === 'tree') ? `${type} ${where}` : undefined;
        const base = key === undefined ? undefined : this.bases.get(key);
        const delta = base && base.depth < MAX_DEPTH ? prefixSuffixDelta(base.body, body) : null;
        const parts = delta
            ? [packEntryHeader(PACK_OFS_DELTA, delta.length), ofsDeltaDistance(offset - base.offset), compress(delta)]
            : [packEntryHeader(PACK_OBJECT_TYPE[type], body.length), compress(body)];
        let crc = 0;
        for (const p of parts) {
            crc = crc32(p, crc);
            this.end += p.length;
            this.pending.push(p);
            this.pendingBytes += p.length;
        }
        this.entries.push({ id, offset, crc32: crc });
        this.ids.add(id);
        if (key !== undefined)
            this.remember(key, { offset, body, depth: delta ? base.depth + 1 : 0 });
        if (this.pendingBytes >= WRITE_CHUNK)
            await this.flush();
    }
    remember(key, base) {
        const old = this.bases.get(key);
        if (old) {
            this.bases.delete(key);
            this.baseBytes -= old.body.length;
        }
        if (base.body.length > MAX_BASE_BYTES)
            return;
        this.bases.set(key, base);
        this.baseBytes += base.body.length;
        for (const [k, b] of this.bases) {
            if (this.baseBytes <= BASE_CACHE_BYTES)
                break;
            this.bases.delete(k);
            this.baseBytes -= b.body.length;
        }
    }
    async flush() {
        if (this.pendingBytes === 0)
            return;
        const data = Buffer.concat(this.pending, this.pendingBytes);
        this.pending = [];
        this.pendingBytes = 0;
        await this.handle.write(data, 0, data.length, this.flushedTo);
        this.flushedTo += data.length;
    }
    /**
     * Make the pack whole (header, checksum, index), durable, and part of the repository. Returns
     * its checksum (the pack's name) and its .idx, or null when nothing was added (then nothing is
     * written). On a failure the temp files are removed.
     */
    async finish(layout) {
        try {
            return await this.finishing(layout);
        }
        catch (err) {
            await this.abort();
            throw err;
        }
    }
    async finishing(layout) {
        if (this.entries.length === 0) {
            await this.abort();
            return null;
        }
        await this.flush();
        await this.handle.write(packHeader(this.entries.length), 0, 12, 0);
        // The checksum covers the header, known only now: the entries are read back (from the page cache).
        const hash = createHash('sha1');
        const buf = Buffer.allocUnsafe(WRITE_CHUNK);
        for (let at = 0; at < this.end;) {
            const { bytesRead } = await this.handle.read(buf, 0, Math.min(buf.length, this.end - at), at);
            if (bytesRead === 0)
                throw new Error(`pack ${this.file} is shorter than written`);
            hash.update(buf.subarray(0, bytesRead));
            at += bytesRead;
        }
        const checksum = hash.digest();
        await this.handle.write(checksum, 0, 20, this.end);
        await this.handle.sync();
        await this.handle.close();
        const idxTemp = this.file.replace(/\.pack$/, '.idx');
        const idx = encodePackIndex(this.entries, checksum);
        const handle = await fsp.open(idxTemp, 'wx', 0o444);
        try {
            await handle.writeFile(idx);
            await handle.sync();
        }
        finally {
            await handle.close();
        }
        const name = checksum.toString('hex');
        crashPoint('git-export:pack');
        await fsp.rename(this.file, layout.packFile(name, 'pack'));
        await fsp.rename(idxTemp, layout.packFile(name, 'idx'));
        await fsyncDir(layout.packDir);
        return { name, idx };
    }
    /** Drop the pack: nothing of it reaches the repository. */
    async abort() {
        await this.handle.close().catch(() => { });
        await fsp.rm(this.file, { force: true });
        await fsp.rm(this.file.replace(/\.pack$/, '.idx'), { force: true });
    }
}
//# sourceMappingURL=git-pack-writer.js.map