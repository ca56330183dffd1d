import { StringDecoder } from 'node:string_decoder';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { Invalid, TooLarge, UnsupportedMediaType } from '../domain/errors.js';
/** Standard JSON routes: the spec's 2 MiB. */
export const STANDARD_JSON = { maxBytes: 2 * 1024 * 1024, maxValues: 1_048_576 };
/**
 * Raised JSON routes (plan, commit): 256 MiB decoded, well below V8's longest string
 * (536,870,888 characters), and 16 Mi values + keys (a commit row is ~13 of them: ~1.2 million
 * locator rows fit). Parsing such a body peaks near 1.3 GB; two run at once.
 */
export const RAISED_JSON = { maxBytes: 256 * 1024 * 1024, maxValues: 16 * 1_048_576 };
/** pull-manifests: `have_snapshot_ids` holds at most 100,000 ids (~6.7 MB of JSON), so the whole body holds few more values. */
export const PULL_MANIFEST_JSON = { maxBytes: 16 * 1024 * 1024, maxValues: 100_100 };
export const MAX_JSON_DEPTH = 64;
/** Big raised bodies (over the standard cap, compressed, or of unknown length) read at once. */
export const BIG_BODY_SLOTS = 2;
const SUSPECT_PROTO = /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"/;
/**
 * Streaming structure counter. Outside strings, every value after the first of a container
 * follows a ',', every key precedes a ':', and every container opens with '[' or '{': their sum
 * (+1) bounds the values and keys JSON.parse would create. Strings are skipped (escapes honoured).
 */
export class JsonShapeCounter {
    caps;
    inString = false;
    escaped = false;
    depth = 0;
    count = 1;
    constructor(caps) {
        this.caps = caps;
    }
    feed(b) {
        const n = b.length;
        if (n === 0)
            return;
        let i = 0;
        let count = this.count;
        let depth = this.depth;
        let inString = this.inString;
        if (this.escaped) {
            this.escaped = false;
            i = 1;
        }
        let slash = b.indexOf(0x5c, i);
        while (i < n) {
            if (inString) {
                // Jump to the next quote; a backslash before it escapes the next byte.
                if (slash !== -1 && slash < i)
                    slash = b.indexOf(0x5c, i);
                const q = b.indexOf(0x22, i);
                if (slash !== -1 && (q === -1 || slash < q)) {
                    if (slash + 1 >= n)
                        this.escaped = true;
                    i = slash + 2;
                    continue;
                }
                if (q === -1)
                    break;
                inString = false;
                i = q + 1;
                continue;
            }
            const c = b[i++];
            if (c === 0x22)
                inString = true;
            else if (c === 0x2c || c === 0x3a)
                count++;
            else if (c === 0x5b || c === 0x7b) {
                count++;
                if (++depth > MAX_JSON_DEPTH)
                    throw new TooLarge(`JSON body nests deeper than ${MAX_JSON_DEPTH} levels (route limit)`);
            }
            else if (c === 0x5d || c === 0x7d)
                depth--;
        }
        this.inString = inString;
        this.depth = depth;
        this.count = count;
        if (count > this.caps.maxValues)
            throw new TooLarge(`request body holds more than ${this.caps.maxValues} JSON values and keys (route limit)`);
    }
}
/** A FIFO of `slots` permits. */
class Slots {
    slots;
    active = 0;
    waiting = [];
    constructor(slots) {
        this.slots = slots;
    }
    async acquire() {
        if (this.active >= this.slots)
            await new Promise((resolve) => this.waiting.push(resolve));
        else
            this.active++;
        let released = false;
        return () => {
            if (released)
                return;
            released = true;
            const next = this.waiting.shift();
            if (next)
                next();
            else
                this.active--;
        };
    }
}
const bigBodies = new Slots(BIG_BODY_SLOTS);
function decoderFor(req) {
    const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    switch (encoding) {
        case '':
        case 'identity':
            return null;
        case 'gzip':
        case 'x-gzip':
            return createGunzip();
        case 'deflate':
            return createInflate();
        case 'br':
            return createBrotliDecompress();
        default:
            throw new UnsupportedMediaType('unsupported request body encoding (use gzip, deflate, br or none)');
    }
}
/**
 * Read and parse the JSON body of `req` under `caps`. Returns `undefined` for an empty body.
 * Throws TooLarge (413) past a cap, Invalid (400) for malformed JSON, a `__proto__` key or a body
 * that does not decode, UnsupportedMediaType (415) for an unknown Content-Encoding.
 */
export async function readJsonBody(req, caps) {
    const declared = req.headers['content-length'];
    const encoded = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    const identity = encoded === '' || encoded === 'identity';
    if (declared !== undefined && identity && Number(declared) > caps.maxBytes) {
        throw new TooLarge(`request body exceeds the route limit of ${caps.maxBytes} bytes`);
    }
    const big = caps.maxBytes > STANDARD_JSON.maxBytes && (!identity || declared === undefined || Number(declared) > STANDARD_JSON.maxBytes);
    const release = big ? await bigBodies.acquire() : null;
    try {
        return await readUnder(req, caps);
    }
    finally {
        release?.();
    }
}
async function readUnder(req, caps) {
    const decoder = decoderFor(req);
    // Not destroyed when reading stops early: the app answers first, then closes (app.ts).
    let source = req.iterator({ destroyOnReturn: false });
    if (decoder) {
        req.on('error', (err) => decoder.destroy(err));
        req.pipe(decoder);
        source = decoder;
    }
    const counter = new JsonShapeCounter(caps);
    const text = new StringDecoder('utf8');
    const pieces = [];
    let bytes = 0;
    try {
        for await (const chunk of source) {
            bytes += chunk.length;
            if (bytes > caps.maxBytes)
                throw new TooLarge(`request body exceeds the route limit of ${caps.maxBytes} bytes${decoder ? ' once decompressed' : ''}`);
            counter.feed(chunk);
            pieces.push(text.write(chunk));
        }
    }
    catch (err) {
        if (decoder) {
            req.unpipe(decoder);
            decoder.destroy();
        }
        throw err;
    }
    pieces.push(text.end());
    const str = pieces.length === 1 ? pieces[0] : pieces.join('');
    pieces.length = 0;
    if (str === '')
        return { value: undefined, bytes };
    let value;
    try {
        value = JSON.parse(str);
    }
    catch {
        throw new Invalid('malformed JSON body');
    }
    // Like @hapi/bourne: a `__proto__` key is refused, so no handler ever meets one.
    if (SUSPECT_PROTO.test(str)) {
        JSON.parse(str, (key, v) => {
            if (key === '__proto__')
                throw new Invalid('malformed JSON body: a __proto__ key is not allowed');
            return v;
        });
    }
    return { value, bytes };
}
//# sourceMappingURL=json-body.js.map