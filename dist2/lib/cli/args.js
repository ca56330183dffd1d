// Argument parsing shared by the commands (node:util parseArgs, strict: unknown options fail).
import { statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseStallSeconds } from '../client/stall.js';
import { MAX_SNAPSHOT_PATHS_BOUND } from '../domain/tree-size.js';
export class CliUsageError extends Error {
}
export function parseCommandArgs(argv, options, allowPositionals = false) {
    try {
        return parseArgs({ args: argv, options, strict: true, allowPositionals });
    }
    catch (err) {
        throw new CliUsageError(err.message);
    }
}
export function parseBind(bind) {
    const m = /^(.*):(\d{1,5})$/.exec(bind);
    if (!m)
        throw new CliUsageError(`--bind must be HOST:PORT, got "${bind}"`);
    const port = Number(m[2]);
    if (port > 65535)
        throw new CliUsageError(`--bind port out of range: ${port}`);
    const host = m[1].replace(/^\[(.*)\]$/, '$1');
    if (host === '')
        throw new CliUsageError('--bind needs a host');
    return { host, port };
}
/** An offline tool's --data must name an existing directory: a typo is an error, never a new empty store. */
export function requireDataDir(dir) {
    let st;
    try {
        st = statSync(dir);
    }
    catch {
        throw new CliUsageError(`data directory ${dir} does not exist (check --data)`);
    }
    if (!st.isDirectory())
        throw new CliUsageError(`data directory ${dir} is not a directory (check --data)`);
}
/** `--max-snapshot-paths N` (serve, fsck, import): paths a snapshot may hold (lib/domain/tree-size.ts). */
export function parseMaxSnapshotPaths(value) {
    const n = Number(value);
    if (typeof value !== 'string' || !/^[1-9][0-9]*$/.test(value) || n > MAX_SNAPSHOT_PATHS_BOUND)
        throw new CliUsageError(`--max-snapshot-paths must be an integer from 1 to ${MAX_SNAPSHOT_PATHS_BOUND}`);
    return n;
}
/** --stall-seconds, checked (undefined: CAIRN_STALL_SECONDS or the default). */
export function stallSeconds(raw) {
    if (raw === undefined)
        return undefined;
    try {
        return parseStallSeconds(String(raw), '--stall-seconds');
    }
    catch (err) {
        throw new CliUsageError(err.message);
    }
}
//# sourceMappingURL=args.js.map