// `cairn login`, `cairn logout`, `cairn whoami` (docs/operations.md "Team setup"). login checks
// a token against the server (GET /v1/native/session), stores it for cairn commands
// (lib/client/credentials.ts, mode 0600) and hands it to git through git's own credential
// protocol (`git credential approve`), so `git clone http://HOST:PORT/...` signs in through
// whatever credential helper git is configured with. The token is never printed or logged.
import { spawn } from 'node:child_process';
import { TOKEN_RE } from '../domain/access.js';
import { CairnClient, ServerError, normalizeServerUrl } from '../client/http.js';
import { credentialsMode, credentialsPath, saveCredential, serverKey, storedCredential } from '../client/credentials.js';
import { CliUsageError, parseCommandArgs } from './args.js';
import { emit, useJson } from './output.js';
import { scopesText, serverOf, storedServers } from './access-backend.js';

export const LOGIN_HELP = `Usage: cairn login --server URL [--token-stdin] [--no-git]

Sign in to a cairn server with a personal access token (your admin gives you one made with
cairn admin user add, or make one with cairn token create). On a terminal the token is read
without echo; --token-stdin reads one line from stdin instead (scripts: cairn login --server
URL --token-stdin < FILE). The token is checked with the server first: one it does not accept
(unknown, revoked, expired, or its account disabled) is refused and nothing is stored.

Then it is
  - stored for cairn commands to that server in $XDG_CONFIG_HOME/cairn/credentials.json
    (default ~/.config/cairn/credentials.json, mode 0600); $CAIRN_TOKEN, when set, wins over it;
  - handed to git with "git credential approve" (protocol, host:port, your account name as the
    username, the token as the password), so git clone, fetch and push over
    http://HOST:PORT/... sign in through your git credential helper with no password in the
    URL. git without a helper keeps nothing: configure one first, for example
    git config --global credential.helper store (a plaintext file, ~/.git-credentials, mode
    0600) or cache (memory, 15 minutes), or your system's keychain helper.

Options:
  --server URL     the server (default $CAIRN_SERVER, then the working copy's)
  --token-stdin    read the token from the first line of stdin
  --no-git         do not hand the token to git
  --json           print JSON (the default when stdout is not a terminal)
`;

export const LOGOUT_HELP = `Usage: cairn logout [--server URL] [--no-git]

Forget the token stored for a server (the one server you are signed in to, when --server is
not given) and tell git's credential helper to forget it ("git credential reject"). The token
itself stays valid until it expires or is revoked: cairn token revoke TOKEN_ID.

Options:
  --server URL     the server (default: the only one you are signed in to, $CAIRN_SERVER)
  --no-git         leave git's credential helper alone
  --json           print JSON (the default when stdout is not a terminal)
`;

export const WHOAMI_HELP = `Usage: cairn whoami [--server URL] [--repo N]

Who the server takes you for: your account, whether you are a server admin, your token's id
and scopes, and where the token came from ($CAIRN_TOKEN or cairn login). With --repo N also
your role in repository N and how many of its operations that role allows. Exit 1 when you are
not signed in (the message says how to sign in).

Options:
  --server URL     the server (default $CAIRN_SERVER, the working copy's or git remote's, or the one server
                   you are signed in to)
  --repo N         show your role in repository N
  --json           print JSON (the default when stdout is not a terminal)
`;

interface Session {
  auth_mode: string;
  account: string | null;
  server_admin: boolean;
  scopes: string[] | null;
  token_id: string | null;
  repository_index: number | null;
  role: string | null;
  may: string[] | null;
}

/** Read the token: one line of stdin (--token-stdin), or typed on a terminal without echo. */
async function readToken(fromStdin: boolean, server: string): Promise<string> {
  if (fromStdin) {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of process.stdin) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if ((chunk as Buffer).includes(0x0a) || size > 4096) break;
    }
    return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0].trim();
  }
  if (process.stdin.isTTY !== true) throw new CliUsageError('stdin is not a terminal: give --token-stdin to read the token from it (cairn login --server URL --token-stdin < FILE)');
  return promptHidden(`Token for ${server} (input is hidden): `);
}

function promptHidden(prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    // Echo off before the prompt shows: what is typed after it is never on the screen.
    stdin.setRawMode(true);
    process.stderr.write(prompt);
    stdin.resume();
    let text = '';
    const done = (err: Error | null) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.removeListener('data', onData);
      stdin.removeListener('end', onEnd);
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(text.trim());
    };
    const onData = (data: Buffer) => {
      for (const ch of data.toString('utf8')) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return done(null);
        if (ch === '\u0003') return done(new Error('cancelled'));
        if (ch === '\u007f' || ch === '\b') text = text.slice(0, -1);
        else if (ch >= ' ') text += ch;
      }
    };
    const onEnd = () => done(null);
    stdin.on('data', onData);
    stdin.once('end', onEnd);
  });
}

/** The git binary ($CAIRN_GIT or git on PATH). */
const gitBin = () => process.env.CAIRN_GIT || 'git';

/** Run git with `input` on stdin; null when git is not installed. Never echoes `input`. */
function runGit(args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string } | null> {
  return new Promise((resolve) => {
    // GIT_TERMINAL_PROMPT=0: a helper must never stop to ask on the terminal.
    const child = spawn(gitBin(), args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ENOENT' ? null : { code: 1, stdout, stderr: err.message }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

/** What git is told about a server: `protocol=` and `host=` (host:port) of its address. */
function gitCredentialFields(server: string): string {
  const url = new URL(serverKey(server));
  return `protocol=${url.protocol.replace(/:$/, '')}\nhost=${url.host}\n`;
}

interface GitOutcome {
  /** approved | rejected | no-git | failed | skipped */
  done: string;
  helper: string | null;
  note: string;
}

async function gitHelpers(): Promise<string[] | null> {
  const res = await runGit(['config', '--get-all', 'credential.helper'], '');
  if (res === null) return null;
  return res.stdout.split('\n').map((l) => l.trim()).filter((l) => l !== '');
}

async function gitApprove(server: string, account: string, token: string): Promise<GitOutcome> {
  const helpers = await gitHelpers();
  if (helpers === null) return { done: 'no-git', helper: null, note: 'git is not installed: only cairn commands use the token' };
  const clone = `git clone ${serverKey(server)}/v1/native/repository-authorities/N/git/main.git`;
  if (!helpers.length) {
    return { done: 'skipped', helper: null, note: `git has no credential helper configured, so it keeps nothing and will ask for a password. Configure one, then run cairn login again: git config --global credential.helper store (a plaintext file, ~/.git-credentials, mode 0600) or git config --global credential.helper cache (memory, 15 minutes)` };
  }
  const res = await runGit(['credential', 'approve'], `${gitCredentialFields(server)}username=${account}\npassword=${token}\n\n`);
  const helper = helpers.join(', ');
  if (res === null) return { done: 'no-git', helper: null, note: 'git is not installed: only cairn commands use the token' };
  if (res.code !== 0) return { done: 'failed', helper, note: `git credential approve failed (exit ${res.code}): ${res.stderr.trim().slice(0, 300)}; cairn commands still use the token` };
  return { done: 'approved', helper, note: `handed to git's credential helper (${helper}): ${clone} signs in with it` };
}

async function gitReject(server: string, account: string | null): Promise<GitOutcome> {
  const res = await runGit(['credential', 'reject'], `${gitCredentialFields(server)}${account ? `username=${account}\n` : ''}\n`);
  if (res === null) return { done: 'no-git', helper: null, note: 'git is not installed' };
  if (res.code !== 0) return { done: 'failed', helper: null, note: `git credential reject failed (exit ${res.code}): ${res.stderr.trim().slice(0, 300)}` };
  return { done: 'rejected', helper: null, note: 'git\'s credential helper was told to forget it' };
}

export async function loginCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    server: { type: 'string' }, 'token-stdin': { type: 'boolean', default: false }, 'no-git': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) { process.stdout.write(LOGIN_HELP); return 0; }
  if (positionals.length) throw new CliUsageError('cairn login takes no arguments (the token is read from the terminal or with --token-stdin, never from the command line)');
  const server = normalizeServerUrl(serverOf(values.server, 'cairn login'));
  const token = await readToken(values['token-stdin'] === true, server);
  if (token === '') throw new CliUsageError('no token was given (paste the token your admin gave you, or make one with cairn token create)');
  if (!TOKEN_RE.test(token)) throw new Error('that is not a cairn token: a token is "cairn_" and 43 more letters, digits, "-" or "_" (make one with cairn token create, or ask your admin); nothing was stored');
  const client = new CairnClient(server);
  // This token, not whatever CAIRN_TOKEN or the credentials file hold.
  client.standing.authorization = `Bearer ${token}`;
  let session: Session;
  try {
    session = await client.json<Session>('GET', '/v1/native/session');
  } catch (err) {
    if (err instanceof ServerError && err.status === 401) {
      throw new Error(`${server} did not accept the token: it is unknown there, revoked or expired, or its account is disabled (make a new one with cairn token create, or ask your admin); nothing was stored`);
    }
    throw err;
  }
  if (session.auth_mode === 'none') throw new Error(`${server} runs without accounts (cairn serve without --auth tokens): there is nothing to sign in to; nothing was stored`);
  if (session.account === null) throw new Error(`${server} did not take the token for an account; nothing was stored`);
  saveCredential(server, { token, account: session.account, saved_at_s: Math.floor(Date.now() / 1000) });
  const mode = credentialsMode();
  if (mode !== 0o600) throw new Error(`${credentialsPath()} has mode ${mode === null ? 'unknown' : mode.toString(8)}, not 600: other users may read the token. Fix it (chmod 600 ${credentialsPath()}) and run cairn login again`);
  const git: GitOutcome = values['no-git'] ? { done: 'skipped', helper: null, note: 'not handed to git (--no-git)' } : await gitApprove(server, session.account, token);
  const envWins = Boolean(process.env.CAIRN_TOKEN?.trim());
  const result = {
    server, account: session.account, server_admin: session.server_admin, scopes: session.scopes, token_id: session.token_id,
    credentials_file: credentialsPath(), git,
    ...(envWins ? { warning: 'CAIRN_TOKEN is set: cairn commands send it instead of the stored token' } : {}),
  };
  emit(result, useJson(values.json), () => [
    `signed in to ${server} as ${session.account}${session.server_admin ? ' (server admin)' : ''}: token ${session.token_id}, scopes ${scopesText(session.scopes)}`,
    `stored in ${credentialsPath()} (mode 0600): cairn commands to ${server} use it`,
    `git: ${git.note}`,
    ...(envWins ? ['warning: CAIRN_TOKEN is set: cairn commands send it instead of the stored token'] : []),
  ].join('\n'));
  return 0;
}

export async function logoutCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    server: { type: 'string' }, 'no-git': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) { process.stdout.write(LOGOUT_HELP); return 0; }
  if (positionals.length) throw new CliUsageError('cairn logout takes no arguments');
  let server: string;
  if (typeof values.server === 'string' && values.server !== '') server = values.server;
  else {
    const stored = storedServers();
    if (stored.length === 1) server = stored[0];
    else if (process.env.CAIRN_SERVER) server = process.env.CAIRN_SERVER;
    else throw new CliUsageError(stored.length ? `--server URL is required: you are signed in to ${stored.join(', ')}` : '--server URL is required (you are signed in to no server)');
  }
  server = normalizeServerUrl(server);
  const stored = storedCredential(server);
  if (stored) saveCredential(server, null);
  const git: GitOutcome = values['no-git'] ? { done: 'skipped', helper: null, note: 'git\'s credential helper left alone (--no-git)' } : await gitReject(server, stored?.account ?? null);
  emit({ server, signed_out: stored !== null, account: stored?.account ?? null, git }, useJson(values.json), () => [
    stored ? `signed out of ${server}${stored.account ? ` (${stored.account})` : ''}: the stored token is forgotten; it stays valid until revoked (cairn token revoke)` : `no token was stored for ${server}`,
    `git: ${git.note}`,
  ].join('\n'));
  return 0;
}

export async function whoamiCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    server: { type: 'string' }, repo: { type: 'string' },
    json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) { process.stdout.write(WHOAMI_HELP); return 0; }
  if (positionals.length) throw new CliUsageError('cairn whoami takes no arguments');
  const server = normalizeServerUrl(serverOf(values.server, 'cairn whoami'));
  let repo: number | null = null;
  if (values.repo !== undefined) {
    if (!/^(0|[1-9][0-9]{0,9})$/.test(String(values.repo)) || Number(values.repo) > 0xffffffff) throw new CliUsageError('--repo must be a repository index (unsigned integer)');
    repo = Number(values.repo);
  }
  const client = new CairnClient(server);
  const session = await client.json<Session>('GET', `/v1/native/session${repo === null ? '' : `?repository_index=${repo}`}`);
  const source = process.env.CAIRN_TOKEN?.trim() ? 'CAIRN_TOKEN' : storedCredential(server) ? 'cairn login' : null;
  const result = { server, ...session, token_source: client.standing.authorization?.startsWith('Bearer ') ? source : client.standing.authorization ? 'server address' : null };
  const json = useJson(values.json);
  if (session.auth_mode !== 'none' && session.account === null) {
    emit(result, json, () => `not signed in to ${server}: sign in with cairn login --server ${server}, or set CAIRN_TOKEN`);
    return 1;
  }
  emit(result, json, () => [
    session.auth_mode === 'none'
      ? `${server} runs without accounts: every route is open to whoever reaches it${session.account ? ` (you are named ${session.account})` : ''}`
      : `${session.account} on ${server}${session.server_admin ? ' (server admin)' : ''}${session.token_id ? `: token ${session.token_id}, scopes ${scopesText(session.scopes)}${result.token_source ? `, from ${result.token_source}` : ''}` : ' (named by the front door)'}`,
    ...(repo === null ? [] : [`repository ${repo}: ${session.role ? `role ${session.role}` : 'no role'} (${session.may?.length ?? 0} operations allowed)`]),
  ].join('\n'));
  return 0;
}
