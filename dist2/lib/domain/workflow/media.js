// What a file of a snapshot is when served or shown (docs/api.md "Diffs and land readiness"): its
// media type from its first bytes (PNG, JPEG, GIF, WebP; never from the name, except SVG, which
// is text and is named so), UTF-8 text, or bytes; and an image's dimensions from its header
// (image-size reads them without decoding the image). SVG gets no dimensions: it is never parsed.
import { isUtf8 } from 'node:buffer';
import { imageSize } from 'image-size';
const RASTER = [
    ['image/png', (b) => b.length >= 8 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a],
    ['image/jpeg', (b) => b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
    ['image/gif', (b) => b.length >= 6 && (b.toString('latin1', 0, 6) === 'GIF87a' || b.toString('latin1', 0, 6) === 'GIF89a')],
    ['image/webp', (b) => b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP'],
];
const isSvgName = (path) => /\.svg$/i.test(path);
/** The raster image type of these bytes, or null. */
export function rasterType(data) {
    for (const [type, test] of RASTER)
        if (test(data))
            return type;
    return null;
}
/** The media type the content route serves a regular file with. */
export function fileMediaType(path, data) {
    const raster = rasterType(data);
    if (raster)
        return raster;
    const text = !data.subarray(0, 8000).includes(0) && isUtf8(data);
    if (isSvgName(path) && text)
        return 'image/svg+xml';
    return text ? 'text/plain; charset=utf-8' : 'application/octet-stream';
}
/** The image facts of a file in a diff, or null when it is not an image. `data` null: content not read (too large). */
export function imageInfo(path, size, data) {
    if (data === null) {
        // Not read: named as an image, its type from the name and no dimensions.
        const m = /\.(png|jpe?g|gif|webp|svg)$/i.exec(path);
        if (!m)
            return null;
        const ext = m[1].toLowerCase();
        const type = ext === 'svg' ? 'image/svg+xml' : ext === 'jpg' || ext === 'jpeg' ? 'image/jpeg' : `image/${ext}`;
        return { media_type: type, bytes: size, width: null, height: null };
    }
    const raster = rasterType(data);
    if (raster) {
        let width = null;
        let height = null;
        try {
            const d = imageSize(data);
            width = d.width ?? null;
            height = d.height ?? null;
        }
        catch {
            // A header image-size cannot read: the type stands, the dimensions are unknown.
        }
        return { media_type: raster, bytes: data.length, width, height };
    }
    if (isSvgName(path) && !data.subarray(0, 8000).includes(0) && isUtf8(data))
        return { media_type: 'image/svg+xml', bytes: data.length, width: null, height: null };
    return null;
}
/** At most this many lines in one `?lines=` read. */
export const MAX_LINES_READ = 10_000;
/** Lines start..end (1-based, inclusive; end clamped to the file) of UTF-8 text, and its line count. */
export function sliceLines(text, start, end) {
    const all = text === '' ? [] : text.split('\n');
    if (all.length > 0 && all[all.length - 1] === '')
        all.pop(); // a final newline ends the last line
    const last = Math.min(end, all.length);
    return { total: all.length, end: last, lines: start > last ? [] : all.slice(start - 1, last) };
}
//# sourceMappingURL=media.js.map