// Build a large object pack straight to a file, one object at a time (never the whole pack in
// memory): reserve the header, write each object's zstd frame (same parameters as buildPack in
// lib/store/pack.ts), then write the header at offset 0 and hash the finished file (pack id).
import { createHash } from 'node:crypto';
import { createReadStream, promises as fsp } from 'node:fs';
import { crc32 } from 'node:zlib';
import zstd from 'zstd-napi/binding.js';
import { encodePackHeader, headerSizeFor, PACK_KIND_OBJECT } from '../lib/store/pack.js';
import { randomBytesFrom, Rng } from './tree.js';
export async function sha256File(file) {
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 }))
        hash.update(chunk);
    return hash.digest('hex');
}
/**
 * `objects` objects of `objectSize` pseudo-random bytes (AES-CTR keystream from `seed`, so they
 * barely compress and the pack is about objects × objectSize bytes).
 */
export async function buildBigPack(file, o) {
    const t0 = performance.now();
    const rng = new Rng(`${o.seed}/pack`);
    const cctx = new zstd.CCtx();
    cctx.setParameter(zstd.CParameter.compressionLevel, o.level ?? 3);
    cctx.setParameter(zstd.CParameter.contentSizeFlag, 1);
    cctx.setParameter(zstd.CParameter.checksumFlag, 0);
    const out = Buffer.allocUnsafe(zstd.compressBound(o.objectSize));
    const entries = [];
    const handle = await fsp.open(file, 'w', 0o644);
    let offset = headerSizeFor(o.objects);
    try {
        for (let i = 0; i < o.objects; i++) {
            const raw = randomBytesFrom(rng, o.objectSize);
            const id = createHash('sha256').update(raw).digest('hex');
            const n = cctx.compress2(out, raw);
            const frame = out.subarray(0, n);
            entries.push({ id, offset, length: n, raw_length: raw.length, crc32: crc32(frame) });
            let written = 0;
            while (written < n)
                written += (await handle.write(frame, written, n - written, offset + written)).bytesWritten;
            offset += n;
        }
        const header = encodePackHeader(PACK_KIND_OBJECT, entries);
        if (header.length !== headerSizeFor(o.objects))
            throw new Error(`header is ${header.length} bytes, expected ${headerSizeFor(o.objects)}`);
        await handle.write(header, 0, header.length, 0);
    }
    finally {
        await handle.close();
    }
    const buildMs = performance.now() - t0;
    const t1 = performance.now();
    const packId = await sha256File(file);
    return { file, packId, byteLength: offset, rawBytes: o.objects * o.objectSize, objects: o.objects, buildMs, hashMs: performance.now() - t1 };
}
//# sourceMappingURL=pack-file.js.map