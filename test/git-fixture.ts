// A git history for the git import and export tests (Debian's git binary): executables, symlinks,
// a rename, a merge on the first-parent path, a file turned into a directory, a submodule, an
// empty commit, a non-UTF-8 message and time zones east and west of UTC.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { importGit } from '../lib/client/git-import.js';
import { NO_PROGRESS } from '../lib/client/progress.js';
import { register, tempDir } from './helpers.js';

export const hasGit = spawnSync('git', ['--version']).status === 0;
if (!hasGit) console.log('note: git is not installed; the git import and export tests are skipped (.ci/run installs it)');

export function git(dir: string, args: string[], env: Record<string, string> = {}, input?: Buffer | string): string {
  return execFileSync('git', ['-C', dir, ...args], {
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dir, GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.org', GIT_COMMITTER_NAME: 'Bob', GIT_COMMITTER_EMAIL: 'bob@example.org', ...env },
    input,
    maxBuffer: 64 * 1024 * 1024,
  }).toString('latin1');
}

let clock = 1_700_000_000;
/** Advance the commit clock (seconds) and return it. */
export function tick(seconds = 3600): number {
  clock += seconds;
  return clock;
}
export function commit(dir: string, message: string | Buffer, tz = '+0000', extra: string[] = []): string {
  clock += 3600;
  const env = { GIT_AUTHOR_DATE: `${clock} ${tz}`, GIT_COMMITTER_DATE: `${clock + 60} ${tz === '+0000' ? '-0800' : tz}` };
  git(dir, ['commit', '-q', '--allow-empty', ...extra, '-F', '-'], env, message);
  return git(dir, ['rev-parse', 'HEAD']).trim();
}

/** A history exercising what an import must keep; returns the directory. */
export async function makeHistory(): Promise<string> {
  const dir = path.join(tempDir('cairn-git-'), 'src');
  await fsp.mkdir(dir, { recursive: true });
  git(dir, ['init', '-q', '-b', 'main']);
  const w = (rel: string, text: string) => fsp.mkdir(path.dirname(path.join(dir, rel)), { recursive: true }).then(() => fsp.writeFile(path.join(dir, rel), text));
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


/** A program run as a client (asynchronous: the server runs in this process; no git config of the machine, a fixed author). */
export function runClient(cmd: string, args: string[], cwd?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.org', GIT_COMMITTER_NAME: 'Ada', GIT_COMMITTER_EMAIL: 'ada@example.org' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** git as a client (./runClient). */
export const gitClient = (args: string[]): ReturnType<typeof runClient> => runClient('git', args);

/**
 * A repository named `name` on the server at `url` whose line main holds one commit
 * (README.md), imported from git, and a clone of that line by git over smart HTTP.
 */
export async function servedClone(url: string, name: string): Promise<{ repo: number; lineUrl: string; dir: string }> {
  const src = path.join(tempDir('cairn-git-'), 'src');
  await fsp.mkdir(src, { recursive: true });
  git(src, ['init', '-q', '-b', 'main']);
  await fsp.writeFile(path.join(src, 'README.md'), '# demo\n');
  git(src, ['add', '-A']);
  commit(src, 'first\n');
  const repo = await register(url, name);
  await importGit({ server: url, repo, source: src, line: 'main', progress: NO_PROGRESS });
  const lineUrl = `${url}/v1/native/repository-authorities/${repo}/git/main.git`;
  const dir = path.join(tempDir('cairn-push-'), 'work');
  const cloned = await gitClient(['clone', '-q', lineUrl, dir]);
  if (cloned.code !== 0) throw new Error(`git clone ${lineUrl} failed: ${cloned.stderr}`);
  return { repo, lineUrl, dir };
}
