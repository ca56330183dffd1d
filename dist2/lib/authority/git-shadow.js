// Where a line is served over git's smart HTTP (docs/git.md "Clone and fetch"): the bare git
// repository that holds the line's exported commits. The HTTP layer (lib/http/git-http-backend.ts)
// only runs `git http-backend` over the directory this names; what fills that repository (the
// exporter's shadow repository, brought up to date before a fetch answers) is the source's job.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { NotFound } from '../domain/errors.js';
import { validateLineName } from '../domain/lines.js';
/** No line is served until a source is configured. */
export const NO_GIT_SHADOWS = async () => null;
/** The served repository of a line; NotFound when none. */
export async function gitShadowOf(source, repositoryIndex, line) {
    validateLineName(line);
    const shadow = await source(repositoryIndex, line);
    if (shadow === null)
        throw new NotFound(source === NO_GIT_SHADOWS ? 'git serving is not set up' : `line ${JSON.stringify(line)} is not served over git`);
    return { ...shadow, head: shadow.head === undefined ? await headTargetOf(shadow.repoDir) : shadow.head };
}
/** The ref a bare repository's HEAD names (`ref: refs/heads/main`), or null when it names none. */
async function headTargetOf(repoDir) {
    try {
        return /^ref: (\S+)\n?$/.exec(await fsp.readFile(path.join(repoDir, 'HEAD'), 'utf8'))?.[1] ?? null;
    }
    catch {
        return null;
    }
}
//# sourceMappingURL=git-shadow.js.map