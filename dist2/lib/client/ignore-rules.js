// Which paths of a directory a push or a status leaves out: the working-copy metadata directory
// (`.cairn/` at the top) and every `.git/` directory always; then the gitignore-syntax rules of
// the top-level `.cairnignore`, matched by the `ignore` package (the same semantics as git's
// own matcher: negation, anchoring, trailing-slash directory rules, `**`).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { WORKING_COPY_METADATA_DIR } from '../domain/content.js';
// Loaded only for a directory that has a .cairnignore.
const require = createRequire(import.meta.url);
/** The working-copy metadata directory inside a tracked directory. */
export const METADATA_DIR = WORKING_COPY_METADATA_DIR;
export const IGNORE_FILE = '.cairnignore';
/** Entries the walk neither lists nor enters: `.git` anywhere, `.cairn` at the top. */
export function alwaysPruned(name, top) {
    return name === '.git' || (top && name === METADATA_DIR);
}
function alwaysIgnored(rel) {
    if (rel === METADATA_DIR || rel.startsWith(`${METADATA_DIR}/`))
        return true;
    return rel === '.git' || rel.startsWith('.git/') || rel.endsWith('/.git') || rel.includes('/.git/');
}
/** The ignore test for `dir` (posix relative paths, no leading slash). */
export function loadIgnoreRules(dir) {
    let text = null;
    try {
        text = readFileSync(path.join(dir, IGNORE_FILE), 'utf8');
    }
    catch (err) {
        if (err.code !== 'ENOENT')
            throw err;
    }
    if (text === null)
        return alwaysIgnored;
    const ignore = require('ignore');
    const rules = ignore().add(text);
    return (rel, isDirectory) => alwaysIgnored(rel) || rules.ignores(isDirectory ? `${rel}/` : rel);
}
//# sourceMappingURL=ignore-rules.js.map