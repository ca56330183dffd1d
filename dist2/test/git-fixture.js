// A git history for the git import and export tests (Debian's git binary): executables, symlinks,
// a rename, a merge on the first-parent path, a file turned into a directory, a submodule, an
// empty commit, a non-UTF-8 message and time zones east and west of UTC.
import { execFileSync, spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { tempDir } from './helpers.js';
export const hasGit = spawnSync('git', ['--version']).status === 0;
if (!hasGit)
    console.log('note: git is not installed; the git import and export tests are skipped (.ci/run installs it)');
export function git(dir, args, env = {}, input) {
    return execFileSync('git', ['-C', dir, ...args], {
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dir, GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.org', GIT_COMMITTER_NAME: 'Bob', GIT_COMMITTER_EMAIL: 'bob@example.org', ...env },
        input,
        maxBuffer: 64 * 1024 * 1024,
    }).toString('latin1');
}
let clock = 1_700_000_000;
/** Advance the commit clock (seconds) and return it. */
export function tick(seconds = 3600) {
    clock += seconds;
    return clock;
}
export function commit(dir, message, tz = '+0000', extra = []) {
    clock += 3600;
    const env = { GIT_AUTHOR_DATE: `${clock} ${tz}`, GIT_COMMITTER_DATE: `${clock + 60} ${tz === '+0000' ? '-0800' : tz}` };
    git(dir, ['commit', '-q', '--allow-empty', ...extra, '-F', '-'], env, message);
    return git(dir, ['rev-parse', 'HEAD']).trim();
}
/** A history exercising what an import must keep; returns the directory. */
export async function makeHistory() {
    const dir = path.join(tempDir('cairn-git-'), 'src');
    await fsp.mkdir(dir, { recursive: true });
    git(dir, ['init', '-q', '-b', 'main']);
    const w = (rel, text) => fsp.mkdir(path.dirname(path.join(dir, rel)), { recursive: true }).then(() => fsp.writeFile(path.join(dir, rel), text));
    await w('README.md', '# demo\n');
    await w('src/app.js', 'console.log(1);\n');
    await w('src/lib/util.js', 'export const a = 1;\n');
    git(dir, ['add', '-A']);
    commit(dir, 'first commit\n', '+0530');
    await w('run.sh', '#!/bin/sh\necho hi\n');
    await fsp.chmod(path.join(dir, 'run.sh'), 0o755);
    await fsp.symlink('src/app.js', path.join(dir, 'app-link'));
    git(dir, ['add', '-A']);
    commit(dir, 'executable and symlink\n', '-0700');
    git(dir, ['mv', 'src/lib/util.js', 'src/lib/helpers.js']);
    await w('src/lib/helpers.js', 'export const a = 2;\n');
    git(dir, ['add', '-A']);
    commit(dir, 'rename with an edit\n');
    // A side branch merged into main: the merge is on the first-parent path, the side commit is not.
    git(dir, ['checkout', '-q', '-b', 'side']);
    await w('side.txt', 'from the side\n');
    git(dir, ['add', '-A']);
    commit(dir, 'side work\n');
    git(dir, ['checkout', '-q', 'main']);
    await w('README.md', '# demo\n\nmore\n');
    git(dir, ['add', '-A']);
    commit(dir, 'main work\n');
    clock += 3600;
    git(dir, ['merge', '-q', '--no-ff', '-m', 'merge side', 'side'], { GIT_AUTHOR_DATE: `${clock} +0100`, GIT_COMMITTER_DATE: `${clock} +0100` });
    // A file turned into a directory of the same name, and a submodule entry (a gitlink).
    await fsp.rm(path.join(dir, 'side.txt'));
    await w('side.txt/inner.txt', 'now a directory\n');
    git(dir, ['add', '-A']);
    git(dir, ['update-index', '--add', '--cacheinfo', `160000,${'ab'.repeat(20)},vendor/lib`]);
    commit(dir, 'file to directory, and a submodule\n', '+0000');
    commit(dir, 'an empty commit\n');
    // A message in Latin-1, said by its encoding header.
    git(dir, ['config', 'i18n.commitEncoding', 'ISO-8859-1']);
    await w('README.md', '# démo\n');
    git(dir, ['add', '-A']);
    commit(dir, Buffer.from('caf\xe9 cr\xe8me\n', 'latin1'), '+1400');
    git(dir, ['config', '--unset', 'i18n.commitEncoding']);
    return dir;
}
//# sourceMappingURL=git-fixture.js.map