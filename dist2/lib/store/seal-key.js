// The server's seal key (storage-layout.md §17.2): DATA/seal.key, created on first use, never
// inside a repository directory (so no export, archive or copy of one carries it).
import { randomBytes } from 'node:crypto';
import { createReadStream, promises as fsp } from 'node:fs';
import path from 'node:path';
import { SEAL_KEY_BYTES, sealKeyOf } from '../domain/sealing.js';
import { writeFileDurableWith } from './durable.js';
const HEADER = 'cairn-seal-key-v1 ';
/** The key in `file`; created (0600, durably) when absent and `create`; null when absent and not. Throws on a damaged file. */
export async function openSealKey(file, create) {
    let text;
    try {
        text = await fsp.readFile(file, 'utf8');
    }
    catch (err) {
        if (err.code !== 'ENOENT')
            throw err;
        if (!create)
            return null;
        const bytes = randomBytes(SEAL_KEY_BYTES);
        await writeFileDurableWith(file, async (handle) => {
            await handle.chmod(0o600);
            await handle.writeFile(`${HEADER}${bytes.toString('hex')}\n`);
        });
        return sealKeyOf(bytes);
    }
    const m = /^cairn-seal-key-v1 ([0-9a-f]{64})\n?$/.exec(text);
    if (!m)
        throw new Error(`${file} is not a seal key (expected "${HEADER}" and 64 hex digits)`);
    return sealKeyOf(Buffer.from(m[1], 'hex'));
}
/** How a sealed value starts in a workflow.log record (storage-layout.md §17.2). */
const SEALED_MARK = Buffer.from('{"sealed":');
/**
 * The repository directories under `repositoriesDir` whose workflow logs hold a sealed value
 * (the first few): a start without seal.key must not make a new key over them. Read only when
 * the key is missing; streamed, so memory stays bounded whatever the logs' size.
 */
export async function repositoriesHoldingSealed(repositoriesDir, max = 3) {
    const found = [];
    const dirs = await fsp.readdir(repositoriesDir, { withFileTypes: true }).catch((err) => { if (err.code === 'ENOENT')
        return []; throw err; });
    for (const d of dirs) {
        if (!d.isDirectory() || !/^\d+$/.test(d.name))
            continue;
        const dir = path.join(repositoriesDir, d.name);
        for (const f of await fsp.readdir(dir)) {
            if (!/^workflow(\.\d+)?\.log$/.test(f) || !(await holds(path.join(dir, f), SEALED_MARK)))
                continue;
            found.push(d.name);
            break;
        }
        if (found.length >= max)
            break;
    }
    return found;
}
async function holds(file, needle) {
    let tail = Buffer.alloc(0);
    for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
        const window = Buffer.concat([tail, chunk]);
        if (window.includes(needle))
            return true;
        tail = window.subarray(Math.max(0, window.length - needle.length + 1));
    }
    return false;
}
//# sourceMappingURL=seal-key.js.map