// Where a line is served over git's smart HTTP (docs/git.md "Clone and fetch"): the bare git
// repository that holds the line's exported commits. The HTTP layer (lib/http/git-http-backend.ts)
// only runs `git http-backend` over the directory this names; what fills that repository (the
// exporter's shadow repository, brought up to date before a fetch answers) is the source's job.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { NotFound } from '../domain/errors.js';
import { validateLineName } from '../domain/lines.js';

/** A served line: the bare repository directory, and the refs the client may see in it. */
export interface GitShadow {
  /** Absolute path of a bare git repository. */
  repoDir: string;
  /**
   * The one ref this URL serves (`refs/heads/<line>`), when the repository holds other lines
   * too: every other ref is hidden from the advertisement (`transfer.hideRefs`). Absent: all refs.
   */
  ref?: string;
  /**
   * With `ref`: ref prefixes served too (`refs/changes/`: every patchset's ref, docs/git.md
   * "Fetch a patchset"), each ending in `/`.
   */
  alsoServed?: string[];
  /** The ref the repository's HEAD names (`refs/heads/main`), or null; filled in by gitShadowOf. */
  head?: string | null;
}

/**
 * The served repository of `line` in repository `repositoryIndex`, up to date when it resolves,
 * or null when the line is not served. Called once per git request.
 */
export type GitShadowSource = (repositoryIndex: number, line: string) => Promise<GitShadow | null>;

/**
 * The served repository of every line of repository `repositoryIndex` (docs/git.md "Clone and
 * fetch": the repository's URL), up to date when it resolves: each live line a branch, the
 * tags, the patchsets' refs, HEAD on main; null when not served.
 */
export type GitRepositoryShadowSource = (repositoryIndex: number) => Promise<GitShadow | null>;

export const NO_GIT_REPOSITORY_SHADOWS: GitRepositoryShadowSource = async () => null;

/** The served repository of every line; NotFound when none. */
export async function gitRepositoryShadowOf(source: GitRepositoryShadowSource, repositoryIndex: number): Promise<GitShadow> {
  const shadow = await source(repositoryIndex);
  if (shadow === null) throw new NotFound('git serving is not set up');
  return { ...shadow, head: shadow.head === undefined ? await headTargetOf(shadow.repoDir) : shadow.head };
}

/** No line is served until a source is configured. */
export const NO_GIT_SHADOWS: GitShadowSource = async () => null;

/** The served repository of a line; NotFound when none. */
export async function gitShadowOf(source: GitShadowSource, repositoryIndex: number, line: string): Promise<GitShadow> {
  validateLineName(line);
  const shadow = await source(repositoryIndex, line);
  if (shadow === null) throw new NotFound(source === NO_GIT_SHADOWS ? 'git serving is not set up' : `line ${JSON.stringify(line)} is not served over git`);
  return { ...shadow, head: shadow.head === undefined ? await headTargetOf(shadow.repoDir) : shadow.head };
}

/** The ref a bare repository's HEAD names (`ref: refs/heads/main`), or null when it names none. */
async function headTargetOf(repoDir: string): Promise<string | null> {
  try {
    return /^ref: (\S+)\n?$/.exec(await fsp.readFile(path.join(repoDir, 'HEAD'), 'utf8'))?.[1] ?? null;
  } catch {
    return null;
  }
}
