// What `cairn admin`, `cairn token` and `cairn repo access` share: where the access book is
// (a server over HTTP with the caller's token, or offline a stopped server's data directory
// under its lock), the options that name it, and how a new token is shown (once: on stdout, or
// into a file of mode 0600). A token's text is never logged and never put in an error message.
import { closeSync, existsSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { AccessBook, type Account, type TokenInfo } from '../authority/access.js';
import { MAX_TOKEN_DAYS, SCOPES, requireScopes, type Scope } from '../domain/access.js';
import { Busy, isCairnError } from '../domain/errors.js';
import { CairnClient } from '../client/http.js';
import { lockDataDir, type DataDirLock } from '../store/datadir-lock.js';
import { Layout } from '../store/layout.js';
import { CliUsageError, requireDataDir } from './args.js';
import { table, when } from './output.js';

export type AccountJson = Pick<Account, 'name' | 'server_admin' | 'disabled' | 'source' | 'created_at_s'>;
export type NewToken = TokenInfo & { token: string };

export interface TokenRequest {
  name: string;
  scopes?: Scope[];
  expires_in_days?: number;
}

/** The access book, wherever it is. Every method answers what the matching HTTP route answers. */
export interface AccessBackend {
  /** "http://127.0.0.1:8088" or "data directory /srv/cairn/data": what messages name. */
  readonly where: string;
  listAccounts(): Promise<AccountJson[]>;
  addAccount(name: string, serverAdmin: boolean, token: TokenRequest | null): Promise<{ account: AccountJson; token: NewToken | null }>;
  changeAccount(name: string, change: { disabled?: boolean; server_admin?: boolean }): Promise<AccountJson>;
  listGroups(): Promise<{ name: string; members: string[] }[]>;
  setGroup(name: string, members: string[]): Promise<{ name: string; members: string[] }>;
  audit(after: number, limit: number): Promise<{ records: Record<string, unknown>[]; count: number; last_seq: number; next_after: number | null }>;
  listTokens(account: string | null): Promise<TokenInfo[]>;
  createToken(account: string | null, req: TokenRequest): Promise<NewToken>;
  revokeToken(tokenId: string): Promise<TokenInfo>;
  close(): Promise<void>;
}

export const WHERE_OPTIONS = {
  server: { type: 'string' },
  data: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export const WHERE_HELP = `  --server URL    the cairn server (default: $CAIRN_SERVER, the working copy's or git remote's, or the one
                  server you are signed in to); the call uses your token (cairn login, or
                  $CAIRN_TOKEN) and the server checks you may make it
  --data DIR      work offline on the data directory DIR of a stopped server instead (its
                  lock is taken: refused while the server runs)
  --json          print JSON (the default when stdout is not a terminal)
`;

// The server a client command talks to, as for every command (./target.ts).
import { serverOf } from './target.js';
export { serverOf, storedServers } from './target.js';

/** `--scopes read,write,...` (undefined when not given). */
export function parseScopes(value: unknown): Scope[] | undefined {
  if (value === undefined) return undefined;
  const list = String(value).split(',').map((s) => s.trim()).filter((s) => s !== '');
  try {
    return requireScopes(list, '--scopes');
  } catch {
    throw new CliUsageError(`--scopes must be a comma-separated list of ${SCOPES.join(', ')} (for example --scopes read,write)`);
  }
}

/** `--expires-days N` (undefined: the server's default, 90 days). */
export function parseDays(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^[1-9][0-9]*$/.test(String(value)) || n > MAX_TOKEN_DAYS) throw new CliUsageError(`--expires-days must be a whole number of days from 1 to ${MAX_TOKEN_DAYS}`);
  return n;
}

/** The access book named by --data (offline) or --server (online). */
export async function openBackend(values: Record<string, unknown>, what: string, options: { createDataDir?: boolean } = {}): Promise<AccessBackend> {
  if (typeof values.data === 'string' && values.data !== '') {
    if (typeof values.server === 'string') throw new CliUsageError('give --server URL or --data DIR, not both');
    return OfflineBackend.open(values.data, options.createDataDir === true);
  }
  return new OnlineBackend(new CairnClient(serverOf(values.server, what)));
}

const seg = encodeURIComponent;

class OnlineBackend implements AccessBackend {
  readonly where: string;
  constructor(private readonly client: CairnClient) {
    this.where = client.base;
  }

  async listAccounts() { return (await this.client.json('GET', '/v1/native/accounts')).accounts; }
  async addAccount(name: string, serverAdmin: boolean, token: TokenRequest | null) {
    return this.client.json('POST', '/v1/native/accounts', { name, server_admin: serverAdmin, ...(token ? { token } : {}) });
  }
  async changeAccount(name: string, change: { disabled?: boolean; server_admin?: boolean }) {
    return (await this.client.json('PATCH', `/v1/native/accounts/${seg(name)}`, change)).account;
  }
  async listGroups() { return (await this.client.json('GET', '/v1/native/groups')).groups; }
  async setGroup(name: string, members: string[]) { return (await this.client.json('PUT', `/v1/native/groups/${seg(name)}`, { members })).group; }
  async audit(after: number, limit: number) { return this.client.json('GET', `/v1/native/audit?after=${after}&limit=${limit}`); }
  async listTokens(account: string | null) {
    return (await this.client.json('GET', `/v1/native/tokens${account === null ? '' : `?account=${seg(account)}`}`)).tokens;
  }
  async createToken(account: string | null, req: TokenRequest) {
    return (await this.client.json('POST', '/v1/native/tokens', { ...req, ...(account === null ? {} : { account }) })).token;
  }
  async revokeToken(tokenId: string) { return (await this.client.json('DELETE', `/v1/native/tokens/${seg(tokenId)}`)).token; }
  async close() {}
}

/** The access book of a stopped server's data directory; changes are recorded with no actor (the operator at the machine). */
class OfflineBackend implements AccessBackend {
  readonly where: string;
  private constructor(private readonly book: AccessBook, private readonly lock: DataDirLock, dataDir: string) {
    this.where = `data directory ${dataDir}`;
  }

  static async open(dir: string, create: boolean): Promise<OfflineBackend> {
    const dataDir = path.resolve(dir);
    if (create && !existsSync(dataDir)) {
      if (!existsSync(path.dirname(dataDir))) throw new CliUsageError(`cannot make data directory ${dataDir}: ${path.dirname(dataDir)} does not exist (check --data)`);
      process.stderr.write(`note: made the data directory ${dataDir} (start the server on it with cairn serve --data ${dir} --auth tokens)\n`);
    } else requireDataDir(dataDir);
    let lock: DataDirLock;
    try {
      lock = await lockDataDir(dataDir);
    } catch (err) {
      if (isCairnError(err) && err.code === 'Busy') {
        throw new Busy(`${err.message}: a running server holds it; stop the server, or run this against it with --server URL as a server admin`);
      }
      throw err;
    }
    try {
      return new OfflineBackend(AccessBook.open(new Layout(dataDir)), lock, dataDir);
    } catch (err) {
      await lock.release();
      throw err;
    }
  }

  async listAccounts() { return this.book.listAccounts(); }
  async addAccount(name: string, serverAdmin: boolean, token: TokenRequest | null) {
    const account = await this.book.addAccount(null, name, serverAdmin);
    return { account, token: token ? await this.createToken(name, token) : null };
  }
  async changeAccount(name: string, change: { disabled?: boolean; server_admin?: boolean }) { return this.book.changeAccount(null, name, change); }
  async listGroups() { return this.book.listGroups(); }
  async setGroup(name: string, members: string[]) { return this.book.setGroup(null, name, members); }
  async audit(after: number, limit: number) {
    const page = this.book.auditPage(after, limit);
    const last = page.records.at(-1) as { seq: number } | undefined;
    return { ...page, count: page.records.length, next_after: last && last.seq < page.last_seq ? last.seq : null };
  }
  async listTokens(account: string | null) {
    if (account === null) throw new CliUsageError('--user ACCOUNT is required with --data (offline there is no signed-in account)');
    return this.book.tokensOf(account);
  }
  async createToken(account: string | null, req: TokenRequest) {
    if (account === null) throw new CliUsageError('--user ACCOUNT is required with --data (offline there is no signed-in account)');
    const made = await this.book.createToken(null, account, req.name, req.scopes, req.expires_in_days);
    return { ...made.info, token: made.token };
  }
  async revokeToken(tokenId: string) { return this.book.revokeToken(null, tokenId); }
  async close() {
    try {
      await this.book.close();
    } finally {
      await this.lock.release();
    }
  }
}

/** Run `fn` with the backend, closing it (and releasing an offline lock) after. */
export async function withBackend<T>(backend: AccessBackend, fn: (b: AccessBackend) => Promise<T>): Promise<T> {
  try {
    return await fn(backend);
  } finally {
    await backend.close();
  }
}

/** Refuse a --token-file that exists before any token is made (so a refusal makes nothing). */
export function checkTokenFile(file: unknown): void {
  if (typeof file === 'string' && file !== '' && existsSync(path.resolve(file))) throw new CliUsageError(`--token-file ${file} exists: remove it, or name a new file (a token is never written over a file)`);
  if (file === '') throw new CliUsageError('--token-file needs a file name');
}

/**
 * Where a new token goes: `--token-file FILE` writes it there (mode 0600, never over an existing
 * file) and leaves it out of the output; otherwise it is printed once.
 */
export function placeToken(token: NewToken, file: unknown): { shown: NewToken | Omit<NewToken, 'token'>; file: string | null } {
  if (typeof file !== 'string' || file === '') return { shown: token, file: null };
  const target = path.resolve(file);
  let fd: number;
  try {
    fd = openSync(target, 'wx', 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(`cannot write the token to ${target}: ${code === 'EEXIST' ? 'the file exists (remove it, or name another)' : code ?? (err as Error).message}. The token ${token.token_id} was made; revoke it with cairn token revoke ${token.token_id} and make another`);
  }
  try {
    writeSync(fd, `${token.token}\n`);
  } finally {
    closeSync(fd);
  }
  const { token: _secret, ...rest } = token;
  return { shown: { ...rest, token_file: target } as Omit<NewToken, 'token'>, file: target };
}

export const scopesText = (scopes: readonly string[] | null | undefined): string => (scopes && scopes.length ? scopes.join(', ') : 'every scope');

/** The lines that show a new token to a person: once, with what to do with it. */
export function newTokenText(token: NewToken | Omit<NewToken, 'token'>, file: string | null): string {
  const head = `token ${token.token_id} "${token.name}" for ${token.account}: scopes ${scopesText(token.scopes)}; expires ${when(token.expires_at_s)}`;
  if (file) return `${head}\nwritten to ${file} (mode 0600); it is not shown again. Sign in with it: cairn login --server URL --token-stdin < ${file}`;
  return `${head}\ncopy it now, it is not shown again:\n\n    ${(token as NewToken).token}\n`;
}

export function tokenTable(tokens: TokenInfo[]): string {
  const now = Math.floor(Date.now() / 1000);
  const state = (t: TokenInfo) => (t.revoked_at_s !== null ? `revoked ${when(t.revoked_at_s)}` : t.expires_at_s <= now ? 'expired' : 'active');
  return table([['ID', 'NAME', 'ACCOUNT', 'SCOPES', 'EXPIRES', 'LAST USED', 'STATE'],
    ...tokens.map((t) => [t.token_id, t.name, t.account, t.scopes.join(','), when(t.expires_at_s), when(t.last_used_s), state(t)])]);
}
