// Exclusive ownership of a data directory (storage-layout.md §1). `cairn serve` and the offline
// tools (fsck, export, import) all take this lock, so they never race one another.
import { promises as fsp } from 'node:fs';
import lockfile from 'proper-lockfile';
import { Busy } from '../domain/errors.js';
import { Layout } from './layout.js';
import { writeFileDurable } from './durable.js';
function processAlive(pid) {
    try {
        process.kill(pid, 0);
        return true;
    }
    catch (err) {
        return err.code === 'EPERM';
    }
}
/**
 * Take the data-directory lock or throw Busy naming the holder. A lock whose recorded owner
 * PID is no longer running (the server was killed with -9) is stale at once: a restart need not
 * wait for proper-lockfile's mtime-based staleness.
 */
export async function lockDataDir(root, options = {}) {
    const layout = new Layout(root);
    await fsp.mkdir(root, { recursive: true });
    const lockOptions = {
        lockfilePath: layout.lockDir,
        stale: options.staleMs ?? 10_000,
        realpath: false,
        retries: 0,
        onCompromised: options.onCompromised ?? ((err) => { throw err; }),
    };
    let release;
    try {
        release = await lockfile.lock(root, lockOptions);
    }
    catch (err) {
        if (err.code !== 'ELOCKED')
            throw err;
        const owner = await readOwner(layout.lockOwnerFile);
        if (owner !== null && owner !== process.pid && !processAlive(owner)) {
            await fsp.rm(layout.lockDir, { recursive: true, force: true });
            release = await lockfile.lock(root, lockOptions).catch((again) => {
                throw new Busy(`data directory ${root} is locked by another cairn process (${again.message})`);
            });
        }
        else {
            throw new Busy(`data directory ${root} is in use by another cairn process${owner !== null ? ` (pid ${owner})` : ''}`);
        }
    }
    await writeFileDurable(layout.lockOwnerFile, `${process.pid}\n`);
    return {
        async release() {
            await fsp.rm(layout.lockOwnerFile, { force: true });
            await release().catch(() => { });
        },
    };
}
async function readOwner(file) {
    try {
        const text = await fsp.readFile(file, 'utf8');
        const pid = Number.parseInt(text.trim(), 10);
        return Number.isInteger(pid) && pid > 0 ? pid : null;
    }
    catch {
        return null;
    }
}
//# sourceMappingURL=datadir-lock.js.map