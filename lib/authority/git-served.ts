// What a served line gives out over git (docs/git.md "Clone and fetch"): the commits its ref
// reaches, with their trees and blobs, and nothing else its repository holds. git's upload-pack
// does not hold a fetch to that by itself when the repository holds other lines too: protocol
// v2 takes any object id in `want`, v0 any tree or blob, and an unshallow follows a client's
// `shallow` commit to its parents. So lib/http/git-http-backend.ts asks here, before upload-pack
// reads a request, whether every id it names is served.
import { spawn } from 'node:child_process';
import type { GitShadow } from './git-shadow.js';

/** Object ids (wants and shallows) one request may name; git's client names a few. */
export const MAX_NAMED_OBJECTS = 10_000;

const gitBinary = (): string => process.env.CAIRN_GIT || 'git';

/**
 * The first of `ids` (lowercase hex object ids) that is not a commit `shadow` serves — not in
 * the repository, not a commit, or not reachable from the served ref or prefixes (from any ref when the
 * repository serves them all) — or null when it serves every one. A line with no branch serves
 * nothing. Costs one `git cat-file --batch-check`, and one `git rev-list` unless every id is the
 * served ref's own commit (a clone or fetch of the line's head).
 */
export async function firstUnserved(shadow: GitShadow, ids: string[]): Promise<string | null> {
  if (ids.length === 0) return null;
  const names = shadow.ref === undefined ? ids : [shadow.ref, ...ids];
  const answers = (await runGit(shadow.repoDir, ['cat-file', '--batch-check=%(objectname) %(objecttype)'], names)).split('\n');
  let tip: string | null = null;
  if (shadow.ref !== undefined) {
    const m = /^([0-9a-f]{40}|[0-9a-f]{64}) commit$/.exec(answers.shift() ?? '');
    if (m === null) return ids[0];
    tip = m[1];
  }
  // An annotated tag's object is wanted by its id where a URL serves tags (the repository's):
  // served when it is what a served tag ref names, and then nothing more is asked of it.
  const tagIds = shadow.ref === undefined && answers.some((a, i) => a === `${ids[i]} tag`)
    ? new Set((await runGit(shadow.repoDir, ['for-each-ref', '--format=%(objectname)', 'refs/tags/'], [])).split('\n'))
    : new Set<string>();
  for (let i = 0; i < ids.length; i++) {
    if (answers[i] !== `${ids[i]} commit` && !(answers[i] === `${ids[i]} tag` && tagIds.has(ids[i]))) return ids[i];
  }
  ids = ids.filter((id) => !tagIds.has(id));
  if (ids.length === 0) return null;
  if (tip !== null && ids.every((id) => id === tip)) return null;
  // The first commit listed is one of `ids` (children come before their parents): a commit any
  // id reaches that the served refs do not reach is reached from an id that is itself unserved.
  const args = ['rev-list', '--topo-order', '--max-count=1', '--stdin'];
  const also = (shadow.alsoServed ?? []).map((prefix) => `--glob=${prefix}*`);
  const served = tip === null ? ['--not', '--all'] : also.length > 0 ? ['--not', ...also] : [];
  const unreached = (await runGit(shadow.repoDir, [...args, ...served], tip === null ? ids : [...ids, `^${tip}`])).trim();
  if (unreached === '') return null;
  return ids.includes(unreached) ? unreached : ids[0];
}

/** Run git in `gitDir` with `lines` on its stdin; its stdout (a few bytes a line), or a failure. */
function runGit(gitDir: string, args: string[], lines: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    // An environment built from nothing, as for serving (docs/operations.md "Git serving").
    const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: gitDir, LANG: 'C', GIT_DIR: gitDir, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
    const child = spawn(gitBinary(), args, { env, cwd: gitDir, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => { if (stderr.length < 1024) stderr += chunk.toString('utf8'); });
    child.stdin.on('error', () => { /* it stopped reading: its exit says why */ });
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString('latin1'));
      else reject(new Error(`git ${args[0]} failed in ${gitDir} (exit ${code}): ${stderr.trim().slice(0, 300)}`));
    });
    child.stdin.end(lines.map((line) => `${line}\n`).join(''));
  });
}
