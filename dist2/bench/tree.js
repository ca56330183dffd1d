// Deterministic source-like tree for the benchmark: nested directories, mostly text files of
// varied pseudo-random "code" (TypeScript/C/Python/Go-ish lines, Markdown, JSON), a few
// executable scripts, a few identical copies (LICENSE-like), and a few binary files (some
// incompressible, some structured). Same seed and scale → same bytes.
import { createCipheriv, createHash } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
/** sfc32: small, fast, seedable 32-bit PRNG. */
export class Rng {
    a;
    b;
    c;
    d;
    constructor(seed) {
        const h = createHash('sha256').update(String(seed)).digest();
        this.a = h.readUInt32LE(0);
        this.b = h.readUInt32LE(4);
        this.c = h.readUInt32LE(8);
        this.d = h.readUInt32LE(12) | 1;
        for (let i = 0; i < 16; i++)
            this.u32();
    }
    u32() {
        const t = (((this.a + this.b) | 0) + this.d) | 0;
        this.d = (this.d + 1) | 0;
        this.a = this.b ^ (this.b >>> 9);
        this.b = (this.c + (this.c << 3)) | 0;
        this.c = (this.c << 21) | (this.c >>> 11);
        this.c = (this.c + t) | 0;
        return t >>> 0;
    }
    /** [0, 1) */
    float() {
        return this.u32() / 4294967296;
    }
    /** [0, n) */
    int(n) {
        return Math.floor(this.float() * n);
    }
    range(lo, hi) {
        return lo + this.int(hi - lo + 1);
    }
    chance(p) {
        return this.float() < p;
    }
    pick(items) {
        return items[this.int(items.length)];
    }
    /** Skewed pick: low indexes are much more likely (Zipf-ish), like identifier reuse in code. */
    skewed(items) {
        const r = this.float();
        return items[Math.floor(items.length * r * r * r)];
    }
    /** Standard normal (Box-Muller). */
    normal() {
        const u = 1 - this.float();
        const v = this.float();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    }
    /** A 32-byte key derived from the stream (for fast keystream bytes). */
    key() {
        const k = Buffer.alloc(32);
        for (let i = 0; i < 8; i++)
            k.writeUInt32LE(this.u32(), i * 4);
        return k;
    }
}
/** `n` pseudo-random bytes from an AES-256-CTR keystream keyed by `rng` (deterministic, fast). */
export function randomBytesFrom(rng, n) {
    const cipher = createCipheriv('aes-256-ctr', rng.key(), rng.key().subarray(0, 16));
    return cipher.update(Buffer.alloc(n));
}
const SYLLABLES = ['ab', 'ac', 'ad', 'al', 'an', 'ar', 'as', 'at', 'ba', 'be', 'bi', 'bo', 'ca', 'ce', 'ch', 'co', 'cu', 'da', 'de', 'di', 'do', 'el', 'en', 'er', 'es', 'ex', 'fa', 'fi', 'fo', 'ga', 'ge', 'go', 'ha', 'he', 'id', 'im', 'in', 'io', 'is', 'it', 'ka', 'la', 'le', 'li', 'lo', 'ma', 'me', 'mi', 'mo', 'na', 'ne', 'no', 'nu', 'ob', 'of', 'on', 'op', 'or', 'ou', 'pa', 'pe', 'pi', 'po', 'pr', 'qu', 'ra', 're', 'ri', 'ro', 'sa', 'se', 'si', 'so', 'st', 'ta', 'te', 'th', 'ti', 'to', 'tr', 'un', 'up', 'ur', 'us', 'va', 've', 'vi', 'wa', 'we', 'xe', 'ya', 'ze'];
const COMMON = ['value', 'result', 'index', 'count', 'buffer', 'config', 'options', 'state', 'entry', 'items', 'node', 'error', 'handle', 'request', 'response', 'data', 'key', 'name', 'path', 'offset', 'length', 'size', 'id', 'ctx', 'err', 'list', 'map', 'next', 'prev', 'parent', 'child', 'cache', 'store', 'reader', 'writer', 'stream', 'chunk', 'limit', 'flags', 'mode', 'type', 'kind', 'token', 'line', 'tree', 'blob', 'pack', 'hash', 'lock', 'queue', 'job', 'task', 'worker', 'client', 'server', 'router', 'logger'];
const WORDS = ['the', 'a', 'of', 'to', 'and', 'is', 'in', 'that', 'it', 'for', 'on', 'with', 'as', 'this', 'be', 'by', 'not', 'are', 'or', 'from', 'when', 'each', 'every', 'which', 'if', 'then', 'only', 'must', 'should', 'may', 'never', 'once', 'before', 'after', 'while', 'until', 'returns', 'reads', 'writes', 'checks', 'keeps', 'drops', 'opens', 'closes', 'sends', 'retries', 'request', 'response', 'file', 'directory', 'server', 'client', 'value', 'entry', 'index', 'lock', 'pack', 'object', 'tree', 'line', 'snapshot', 'error', 'buffer', 'stream', 'header', 'offset', 'length', 'bytes', 'process', 'thread', 'cache', 'limit', 'caller', 'handler', 'route', 'state'];
const LANGS = [
    { ext: 'ts', weight: 30, style: 'c' },
    { ext: 'js', weight: 10, style: 'c' },
    { ext: 'c', weight: 8, style: 'c' },
    { ext: 'h', weight: 5, style: 'c' },
    { ext: 'go', weight: 8, style: 'c' },
    { ext: 'rs', weight: 6, style: 'c' },
    { ext: 'py', weight: 10, style: 'py' },
    { ext: 'md', weight: 7, style: 'md' },
    { ext: 'json', weight: 5, style: 'json' },
    { ext: 'txt', weight: 3, style: 'md' },
    { ext: 'sh', weight: 3, style: 'sh' },
];
const TOP_DIRS = ['src', 'lib', 'test', 'docs', 'tools', 'packages', 'vendor', 'scripts', 'examples', 'internal'];
function makeIdentifiers(rng, n) {
    const out = new Set(COMMON);
    while (out.size < n) {
        let s = '';
        const parts = rng.range(2, 4);
        for (let i = 0; i < parts; i++)
            s += rng.pick(SYLLABLES);
        if (rng.chance(0.35))
            s += rng.pick(COMMON).replace(/^./, (c) => c.toUpperCase());
        out.add(s);
    }
    return [...out];
}
class Writer {
    rng;
    ids;
    types;
    constructor(rng) {
        this.rng = rng;
        this.ids = makeIdentifiers(rng, 3000);
        this.types = this.ids.slice(0, 400).map((s) => s.replace(/^./, (c) => c.toUpperCase()));
    }
    /** Names local to the file being written: real files reuse a few names heavily. */
    local = [];
    id() { return this.local.length && this.rng.chance(0.8) ? this.rng.skewed(this.local) : this.rng.skewed(this.ids); }
    /** An identifier for a file or directory name (less skewed than in code). */
    name() { return this.ids[this.rng.int(this.ids.length)]; }
    type() { return this.rng.skewed(this.types); }
    num() { return String(this.rng.chance(0.85) ? this.rng.int(16) : this.rng.int(4096)); }
    words(n) {
        const w = [];
        for (let i = 0; i < n; i++)
            w.push(this.rng.skewed(WORDS));
        return w.join(' ');
    }
    expr(depth = 0) {
        const r = this.rng.int(depth > 1 ? 4 : 8);
        switch (r) {
            case 0: return this.id();
            case 1: return this.num();
            case 2: return `'${this.words(this.rng.range(1, 4))}'`;
            case 3: return `${this.id()}.${this.id()}`;
            case 4: return `${this.id()}(${this.args(depth + 1)})`;
            case 5: return `${this.expr(depth + 1)} ${this.rng.pick(['+', '-', '*', '&&', '||', '===', '!==', '<', '>=', '??'])} ${this.expr(depth + 1)}`;
            case 6: return `${this.id()}[${this.expr(depth + 1)}]`;
            default: return `${this.id()}.${this.id()}(${this.args(depth + 1)})`;
        }
    }
    args(depth) {
        const n = this.rng.int(4);
        const a = [];
        for (let i = 0; i < n; i++)
            a.push(this.expr(depth));
        return a.join(', ');
    }
    /** Approximately `target` bytes of text in `style`. */
    text(style, target) {
        this.local = [];
        const n = this.rng.range(20, 60);
        for (let i = 0; i < n; i++)
            this.local.push(this.rng.skewed(this.ids));
        switch (style) {
            case 'c': return this.code(target);
            case 'py': return this.python(target);
            case 'md': return this.markdown(target);
            case 'json': return this.json(target);
            case 'sh': return this.shell(target);
        }
    }
    code(target) {
        const lines = [`// ${this.words(this.rng.range(4, 10))}`, `import { ${this.id()}, ${this.id()} } from './${this.id()}.js';`, ''];
        let size = 0;
        let indent = 0;
        while (size < target) {
            const pad = '  '.repeat(indent);
            let line;
            const r = this.rng.int(20);
            if (indent === 0 && r < 4) {
                line = this.rng.chance(0.5)
                    ? `export function ${this.id()}(${this.id()}: ${this.type()}, ${this.id()}: ${this.rng.pick(['number', 'string', 'boolean', this.type()])}): ${this.type()} {`
                    : `export class ${this.type()} {`;
                indent++;
            }
            else if (r < 3 && indent < 6) {
                line = `${pad}${this.rng.pick(['if', 'while', 'for'])} (${this.expr()}) {`;
                indent++;
            }
            else if (r < 6 && indent > 0) {
                indent--;
                line = `${'  '.repeat(indent)}}`;
                if (indent === 0)
                    line += '\n';
            }
            else if (r < 8) {
                line = `${pad}// ${this.words(this.rng.range(3, 12))}`;
            }
            else if (r < 9) {
                line = '';
            }
            else if (r < 11) {
                line = `${pad}return ${this.expr()};`;
            }
            else if (r < 15) {
                line = `${pad}${this.rng.pick(['const', 'let', 'const'])} ${this.id()} = ${this.expr()};`;
            }
            else {
                line = `${pad}${this.id()}.${this.id()}(${this.args(0)});`;
            }
            lines.push(line);
            size += line.length + 1;
        }
        while (indent-- > 0)
            lines.push(`${'  '.repeat(indent)}}`);
        return lines.join('\n') + '\n';
    }
    python(target) {
        const lines = [`"""${this.words(this.rng.range(4, 10))}."""`, `import ${this.id()}`, `from ${this.id()} import ${this.id()}, ${this.id()}`, ''];
        let size = 0;
        let indent = 0;
        while (size < target) {
            const pad = '    '.repeat(indent);
            let line;
            const r = this.rng.int(20);
            if (r < 2) {
                line = `${indent === 0 ? '' : pad}def ${this.id()}(${this.id()}, ${this.id()}=${this.num()}):`;
                indent = Math.min(indent + 1, 3);
            }
            else if (r < 4 && indent < 5) {
                line = `${pad}${this.rng.pick(['if', 'while', 'elif'])} ${this.expr().replace(/===/g, '==').replace(/&&/g, 'and')}:`;
                indent++;
            }
            else if (r < 7 && indent > 0) {
                indent--;
                line = '';
            }
            else if (r < 9)
                line = `${pad}# ${this.words(this.rng.range(3, 12))}`;
            else if (r < 11)
                line = `${pad}return ${this.expr()}`;
            else
                line = `${pad}${this.id()} = ${this.expr()}`;
            lines.push(line);
            size += line.length + 1;
        }
        return lines.join('\n') + '\n';
    }
    markdown(target) {
        const lines = [`# ${this.words(this.rng.range(2, 6))}`, ''];
        let size = 0;
        while (size < target) {
            const r = this.rng.int(10);
            let line;
            if (r === 0)
                line = `\n## ${this.words(this.rng.range(2, 6))}\n`;
            else if (r < 3)
                line = `- \`${this.id()}\`: ${this.words(this.rng.range(4, 14))}.`;
            else if (r < 4)
                line = `| ${this.id()} | ${this.num()} | ${this.words(this.rng.range(2, 8))} |`;
            else
                line = `${this.words(this.rng.range(8, 20))}.`.replace(/^./, (c) => c.toUpperCase());
            lines.push(line);
            size += line.length + 1;
        }
        return lines.join('\n') + '\n';
    }
    json(target) {
        const rows = [];
        let size = 0;
        while (size < target) {
            const row = `  {"${this.id()}": ${this.num()}, "${this.id()}": "${this.words(this.rng.range(1, 5))}", "${this.id()}": ${this.rng.chance(0.5)}, "${this.id()}": [${this.num()}, ${this.num()}]}`;
            rows.push(row);
            size += row.length + 2;
        }
        return `[\n${rows.join(',\n')}\n]\n`;
    }
    shell(target) {
        const lines = ['#!/bin/sh', 'set -eu', ''];
        let size = 0;
        while (size < target) {
            const line = this.rng.chance(0.2)
                ? `# ${this.words(this.rng.range(3, 10))}`
                : `${this.rng.pick(['echo', 'cp', 'mkdir -p', 'test -f', 'rm -f', 'node'])} "$${this.id().toUpperCase()}/${this.id()}" ${this.id()}.${this.rng.pick(['txt', 'json', 'log'])}`;
            lines.push(line);
            size += line.length + 1;
        }
        return lines.join('\n') + '\n';
    }
}
/** Write the tree under `root` (which must not exist or be empty). */
export function generateTree(root, o) {
    const rng = new Rng(o.seed);
    const writer = new Writer(rng);
    mkdirSync(root, { recursive: true });
    // Directories: top-level dirs, then children grown onto random existing dirs of depth < 4.
    const dirCount = Math.max(6, Math.round(o.files / 15));
    const dirs = [{ rel: '', depth: 0, names: new Set() }];
    const tops = TOP_DIRS.slice(0, Math.min(TOP_DIRS.length, Math.max(3, Math.round(dirCount / 8))));
    for (const t of tops) {
        dirs[0].names.add(t);
        dirs.push({ rel: t, depth: 1, names: new Set() });
    }
    while (dirs.length < dirCount) {
        const parent = dirs[1 + rng.int(dirs.length - 1)];
        if (parent.depth >= 4)
            continue;
        const name = writer.name();
        if (parent.names.has(name))
            continue;
        parent.names.add(name);
        dirs.push({ rel: `${parent.rel}/${name}`, depth: parent.depth + 1, names: new Set() });
    }
    for (const d of dirs)
        if (d.rel)
            mkdirSync(path.join(root, d.rel), { recursive: true });
    const stats = { files: 0, bytes: 0, directories: dirs.length - 1, binaryFiles: 0, binaryBytes: 0, duplicateFiles: 0, maxDepth: Math.max(...dirs.map((d) => d.depth)) };
    const place = (dir, base, ext) => {
        let name = `${base}.${ext}`;
        for (let i = 2; dir.names.has(name); i++)
            name = `${base}${i}.${ext}`;
        dir.names.add(name);
        return dir.rel ? `${dir.rel}/${name}` : name;
    };
    const write = (rel, data, mode) => {
        const abs = path.join(root, rel);
        writeFileSync(abs, data);
        if (mode !== undefined)
            chmodSync(abs, mode);
        stats.files++;
        stats.bytes += typeof data === 'string' ? Buffer.byteLength(data) : data.length;
    };
    // A few binary files (~8% of bytes): half incompressible (media-like), half structured records.
    const binaryCount = Math.max(2, Math.round(o.files / 170));
    const binaryBudget = o.bytes * 0.08;
    for (let i = 0; i < binaryCount; i++) {
        const size = Math.max(1024, Math.round((binaryBudget / binaryCount) * (0.3 + 1.4 * rng.float())));
        const dir = rng.pick(dirs.filter((d) => d.depth >= 1));
        let data;
        let ext;
        if (i % 2 === 0) {
            data = randomBytesFrom(rng, size);
            ext = rng.pick(['png', 'jpg', 'woff2', 'gz']);
        }
        else {
            data = Buffer.alloc(size);
            const rec = 32;
            for (let off = 0; off + rec <= size; off += rec) {
                data.writeUInt32LE(off / rec, off);
                data.writeUInt32LE(rng.int(1 << 16), off + 4);
                data.writeDoubleLE(rng.float() * 1000, off + 8);
                data.writeUInt32LE(rng.int(8), off + 16);
            }
            ext = rng.pick(['bin', 'dat', 'idx', 'wasm']);
        }
        write(place(dir, writer.name(), ext), data);
        stats.binaryFiles++;
        stats.binaryBytes += data.length;
    }
    // A few identical files (license-like) in each top-level directory.
    const license = writer.text('md', 11000);
    for (const t of tops) {
        write(place(dirs.find((d) => d.rel === t), 'LICENSE', 'txt'), license);
        stats.duplicateFiles++;
    }
    // Text files: log-normal sizes scaled to the remaining byte budget, capped at 1 MiB.
    const textCount = Math.max(1, o.files - stats.files);
    const textBudget = Math.max(textCount * 64, o.bytes - stats.bytes);
    const raw = [];
    for (let i = 0; i < textCount; i++)
        raw.push(Math.exp(1.1 * rng.normal()));
    const sum = raw.reduce((a, b) => a + b, 0);
    const weights = LANGS.reduce((n, l) => n + l.weight, 0);
    for (let i = 0; i < textCount; i++) {
        const target = Math.min(1 << 20, Math.max(40, Math.round((raw[i] / sum) * textBudget)));
        let w = rng.int(weights);
        const lang = LANGS.find((l) => (w -= l.weight) < 0);
        const dir = dirs[rng.int(dirs.length)];
        const rel = place(dir, writer.name(), lang.ext);
        write(rel, writer.text(lang.style, target), lang.style === 'sh' ? 0o755 : undefined);
    }
    return stats;
}
//# sourceMappingURL=tree.js.map