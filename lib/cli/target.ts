// Which server and repository a client command talks to when --server or --repo is left out,
// the same for every command: --server, else $CAIRN_SERVER, else the cairn working copy
// containing the current directory, else a git remote of the current git repository that points
// at a cairn server (…/v1/native/repository-authorities/N/git/LINE.git), else the one server
// `cairn login` stored a token for. --repo, else the repository of the working copy or git
// remote — only when that is the server chosen (an index means nothing on another server).
// A repository name given where an index is taken is looked up here too, once per run
// (resolveRepoNames, called by ./main.ts before any command runs).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { credentialsPath } from '../client/credentials.js';
import { CairnClient, normalizeServerUrl } from '../client/http.js';
import { findWorkingCopy } from '../client/working-copy.js';
import { LIFECYCLE_PURGED, parseU32 } from '../domain/repository.js';
import { CliUsageError } from './args.js';
import { didYouMean } from './suggest.js';

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

// ---------------------------------------------------------------- repositories by name

/**
 * Commands whose --repo names a repository of a local data directory or archive, never looked up
 * on a server: fsck and export look a name up in the data directory themselves (repositoryInDataDir).
 */
const OFFLINE = new Set(['serve', 'fsck', 'export', 'import', 'restore', 'admin', 'config', 'completion']);

/** The option naming a repository, and the option naming the server it is looked up on. */
const REPO_OPTIONS: Record<string, string> = { repo: 'server', 'from-repo': 'from', 'to-repo': 'to' };

interface Listed { repository_index: number; repository_name: string; namespace: string; lifecycle_kind: number }

/** One registry listing per server per run: a command naming several repositories asks once. */
const listings = new Map<string, Promise<Listed[]>>();

async function listing(server: string): Promise<Listed[]> {
  const key = normalizeServerUrl(server);
  let found = listings.get(key);
  if (!found) {
    found = new CairnClient(server).json('GET', '/v1/native/repository-authorities').then((r: { repositories: Listed[] }) => r.repositories);
    listings.set(key, found);
  }
  return found;
}

const label = (r: Listed) => (r.namespace ? `${r.namespace}/${r.repository_name}` : r.repository_name);

/**
 * The index of the repository called `name` on `server` (NAME, or NS/NAME to pick by namespace).
 * Names repeat (only a non-empty namespace is unique), so: one active repository of that name is
 * it; several are a usage error listing them; with no active one, a single retiring one is it
 * (its retirement can be followed by name). No such name: an error naming close ones (exit 1).
 */
export async function repositoryByName(server: string, name: string, flag = '--repo'): Promise<number> {
  const repos = await listing(server);
  return pickByName(repos, name, flag, server, (dym) => `${server} has no repository named "${name}"${dym} (cairn repo list --server ${server} lists them)`);
}

/**
 * The repository `value` names in a data directory's registry, for the offline commands (fsck,
 * export): digits are an index (the command says whether it is registered); a name is looked up
 * as on a server (above), purged repositories aside. With no server to list them, an unknown name's
 * message lists the directory's repositories.
 */
export function repositoryInDataDir(records: readonly Listed[], value: string, dataDir: string, flag = '--repo'): number {
  return repositoryInRecords(records, value, `data directory ${dataDir}`, flag, (r) => (r.lifecycle_kind === 1 ? '' : ', retiring'));
}

/**
 * The repository `value` names in an archive (`cairn restore --repo`): as in a data directory,
 * the records being those of the repositories' newest manifests.
 */
export function repositoryInArchive(records: readonly Listed[], value: string, url: string, flag = '--repo'): number {
  return repositoryInRecords(records, value, `the archive ${url}`, flag, () => '');
}

function repositoryInRecords(records: readonly Listed[], value: string, where: string, flag: string, state: (r: Listed) => string): number {
  if (/^\d+$/.test(value)) {
    try {
      return parseU32(value, flag);
    } catch (err) {
      throw new CliUsageError((err as Error).message);
    }
  }
  const live = records.filter((r) => r.lifecycle_kind !== LIFECYCLE_PURGED);
  return pickByName(live, value, flag, where, (dym) => {
    const held = live.map((r) => `${r.repository_index} (${label(r)}${state(r)})`);
    const list = held.length === 0 ? 'it holds no repository' : `it holds ${held.slice(0, 20).join(', ')}${held.length > 20 ? `, and ${held.length - 20} more` : ''}`;
    return `${where} has no repository named "${value}" (${dym ? `${dym.slice(2, -1)}; ` : ''}${list})`;
  });
}

function pickByName(repos: readonly Listed[], name: string, flag: string, where: string, notFound: (didYouMean: string) => string): number {
  const matches = repos.filter((r) => r.repository_name === name || (r.namespace !== '' && label(r) === name));
  const active = matches.filter((r) => r.lifecycle_kind === 1);
  const pick = active.length ? active : matches;
  if (pick.length === 1) return pick[0].repository_index;
  if (pick.length > 1) {
    const listed = pick.map((r) => `${r.repository_index} (${label(r)}${r.lifecycle_kind === 1 ? '' : ', retiring'})`).join(', ');
    throw new CliUsageError(`${flag} "${name}" names ${pick.length} repositories of ${where}: ${listed}; give the index (${flag} ${pick[0].repository_index})`);
  }
  throw new Error(notFound(didYouMean(name, [...new Set(repos.map(label))])));
}

/**
 * `argv` with every repository name given to --repo (--from-repo, --to-repo) replaced by its
 * index, so each command, which takes an index, takes a name too. A value of digits only stays
 * an index. Nothing is looked up for --help, for offline commands, or when no name is given.
 */
export async function resolveRepoNames(command: string, argv: string[]): Promise<string[]> {
  if (OFFLINE.has(command)) return argv;
  const end = argv.indexOf('--') === -1 ? argv.length : argv.indexOf('--');
  const head = argv.slice(0, end);
  if (head.includes('--help') || head.includes('-h')) return argv;
  const valueOf = (opt: string): string | undefined => {
    let v: string | undefined;
    for (let i = 0; i < end; i++) {
      if (argv[i] === `--${opt}`) v = argv[i + 1];
      else if (argv[i].startsWith(`--${opt}=`)) v = argv[i].slice(opt.length + 3);
    }
    return v;
  };
  const out = [...argv];
  for (let i = 0; i < end; i++) {
    const m = /^--(repo|from-repo|to-repo)(=(.*))?$/s.exec(argv[i]);
    if (!m) continue;
    const inline = m[2] !== undefined;
    const value = inline ? m[3] : argv[i + 1];
    if (value === undefined || value === '' || /^\d+$/.test(value) || (!inline && value.startsWith('-'))) continue;
    const serverOpt = REPO_OPTIONS[m[1]];
    const server = serverOpt === 'server' ? serverOf(valueOf('server'), `cairn ${command}`) : valueOf(serverOpt);
    if (server === undefined) continue; // the command says what is missing
    const index = String(await repositoryByName(server, value, `--${m[1]}`));
    if (inline) out[i] = `--${m[1]}=${index}`;
    else out[i + 1] = index;
    if (!inline) i++;
  }
  return out;
}
