// Which server and repository a client command talks to when --server or --repo is left out,
// the same for every command: --server, else $CAIRN_SERVER, else the cairn working copy
// containing the current directory, else a git remote of the current git repository that points
// at a cairn server (…/v1/native/repository-authorities/N/git/LINE.git), else the one server
// `cairn login` stored a token for. --repo, else the repository of the working copy or git
// remote — only when that is the server chosen (an index means nothing on another server).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { credentialsPath } from '../client/credentials.js';
import { normalizeServerUrl } from '../client/http.js';
import { findWorkingCopy } from '../client/working-copy.js';
import { parseU32 } from '../domain/repository.js';
import { CliUsageError } from './args.js';

export interface Place {
  server: string;
  repo: number | null;
  line: string | null;
  /** Where the server came from, for messages: "--server", "CAIRN_SERVER", "the working copy", ... */
  from: string;
}

/** Servers `cairn login` stored a token for. */
export function storedServers(): string[] {
  try {
    const parsed = JSON.parse(readFileSync(credentialsPath(), 'utf8')) as { servers?: Record<string, unknown> };
    return Object.keys(parsed.servers ?? {});
  } catch {
    return [];
  }
}

const GIT_URL = /^(https?:\/\/.+?)\/v1\/native\/repository-authorities\/(\d+)\/git\/(.+?)\.git\/?$/;

/** A git remote of the repository containing the current directory that names a cairn server (origin first). */
export function gitRemotePlace(cwd = process.cwd()): Place | null {
  const res = spawnSync('git', ['config', '--get-regexp', '^remote\\..*\\.url$'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  if (res.status !== 0 || typeof res.stdout !== 'string') return null;
  const remotes = res.stdout.split('\n').map((l) => /^remote\.(.+)\.url (.*)$/.exec(l)).filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ name: m[1], url: GIT_URL.exec(m[2].trim()) })).filter((r) => r.url !== null);
  const pick = remotes.find((r) => r.name === 'origin') ?? (remotes.length === 1 ? remotes[0] : null);
  if (!pick?.url) return null;
  return { server: pick.url[1], repo: Number(pick.url[2]), line: decodeURIComponent(pick.url[3]), from: `git remote ${pick.name}` };
}

function sameServer(a: string, b: string): boolean {
  try {
    return normalizeServerUrl(a) === normalizeServerUrl(b);
  } catch {
    return false;
  }
}

/** The working copy or git remote here, whichever comes first (the working copy). */
function localPlace(): Place | null {
  const wc = findWorkingCopy(process.cwd());
  if (wc) return { server: wc.config.server, repo: wc.config.repo, line: wc.config.line, from: 'the working copy' };
  return gitRemotePlace();
}

/** The server to talk to (see the top of this file); a usage error (exit 2) when none is known. */
export function serverOf(value: unknown, what = 'this command'): string {
  return placeOf(value, undefined, what, false).server;
}

/**
 * Server and repository: `repoValue` (--repo) when given, else the local place's repository when
 * its server is the one chosen. With `needRepo` a missing repository is a usage error.
 */
export function placeOf(serverValue: unknown, repoValue: unknown, what = 'this command', needRepo = true): Place {
  let found: Place | null | undefined;
  const local = (): Place | null => (found === undefined ? (found = localPlace()) : found);
  const place = chosenServer(serverValue, local, what);
  let repo: number | null = null;
  if (typeof repoValue === 'string') {
    try {
      repo = parseU32(repoValue, '--repo');
    } catch {
      throw new CliUsageError(`--repo must be a repository index (unsigned integer), not "${repoValue}"`);
    }
  } else {
    const here = local();
    if (here && here.repo !== null && sameServer(here.server, place.server)) repo = here.repo;
  }
  if (needRepo && repo === null) throw new CliUsageError(`--repo N is required for ${what} (or run it inside a working copy or a git clone of a repository of ${place.server})`);
  return { ...place, repo };
}

function chosenServer(serverValue: unknown, local: () => Place | null, what: string): Place {
  if (typeof serverValue === 'string' && serverValue !== '') return { server: serverValue, repo: null, line: null, from: '--server' };
  if (process.env.CAIRN_SERVER) return { server: process.env.CAIRN_SERVER, repo: null, line: null, from: 'CAIRN_SERVER' };
  const here = local();
  if (here !== null) return here;
  const stored = storedServers();
  if (stored.length === 1) return { server: stored[0], repo: null, line: null, from: 'cairn login' };
  throw new CliUsageError(`--server URL is required for ${what} (or set CAIRN_SERVER, or run it inside a working copy or a git clone of a cairn repository${stored.length > 1 ? `; you are signed in to ${stored.join(', ')}` : ', or sign in first: cairn login --server URL'})`);
}
