// Writing one snapshot entry to disk with its exact bytes and mode (used by pull's workers).
import { chmodSync, closeSync, openSync, symlinkSync, writeSync } from 'node:fs';
// Modes are exact: chmod only when the umask would have changed what open() created.
const umask = process.umask();
/** Write one file, executable or symlink with its exact bytes and mode. */
export function writeEntry(target, kind, content) {
    if (kind === 'symlink') {
        symlinkSync(content, target);
        return;
    }
    const mode = kind === 'executable' ? 0o755 : 0o644;
    const fd = openSync(target, 'wx', mode);
    try {
        let done = 0;
        while (done < content.length)
            done += writeSync(fd, content, done, content.length - done);
    }
    finally {
        closeSync(fd);
    }
    if ((mode & ~umask) !== mode)
        chmodSync(target, mode);
}
//# sourceMappingURL=write-entry.js.map