// The access book: accounts, personal access tokens, groups, repository grants and the audit
// feed of one server (docs/api.md "Accounts, tokens and roles"; storage-layout.md §21). The
// state is the fold of DATA/access.log (lib/store/access-log.ts); every change is one record
// appended durably under one mutex before it returns. Tokens are kept only as sha256 digests
// and looked up by digest (a Map: O(1)); when a token was last used is kept in memory and
// written to DATA/access-last-used.json at most once a minute (it is approximate, as GitHub's).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Mutex } from 'async-mutex';
import { Conflict, Invalid, NotFound } from '../domain/errors.js';
import {
  ANONYMOUS,
  DEFAULT_SCOPES,
  DEFAULT_TOKEN_DAYS,
  MAX_TOKEN_DAYS,
  TOKEN_PREFIX,
  TOKEN_RE,
  atLeast,
  requireAccountName,
  roleRank,
  subjectText,
  tokenDigest,
  type Principal,
  type Role,
  type Scope,
  type Subject,
} from '../domain/access.js';
import { AccessLog, type AccessRecord } from '../store/access-log.js';
import { writeFileDurable } from '../store/durable.js';
import type { Layout } from '../store/layout.js';

export interface Account {
  name: string;
  server_admin: boolean;
  disabled: boolean;
  /** `admin`: made by an admin (or the offline command); `ingress`: first seen through the front door. */
  source: 'admin' | 'ingress';
  created_at_s: number;
}

export interface TokenInfo {
  token_id: string;
  account: string;
  name: string;
  scopes: Scope[];
  created_at_s: number;
  expires_at_s: number;
  revoked_at_s: number | null;
  last_used_s: number | null;
}

interface TokenRow extends Omit<TokenInfo, 'last_used_s'> { digest: string }

export interface RepositoryAccess {
  repository_index: number;
  anonymous_read: boolean;
  grants: { subject: string; role: Role }[];
}

/** Changes of one repository's access, applied as one record (`PATCH {repo}/access`). */
export interface AccessChange {
  anonymous_read?: boolean;
  grant?: { subject: Subject; role: Role }[];
  revoke?: Subject[];
}

/** Audit record types that change no access state: what an admin did elsewhere (a purge, a promotion, a bypass). */
export const AUDIT_ONLY = 'audit';

const LAST_USED_FLUSH_MS = 60_000;
/** Tokens the authentication cache holds at most (emptied whole when full). */
const SEEN_TOKENS = 10_000;
const MAX_TOKENS_PER_ACCOUNT = 100;
const MAX_GROUP_MEMBERS = 1000;
const MAX_GRANTS = 1000;

export class AccessBook {
  private readonly accounts = new Map<string, Account>();
  private readonly tokens = new Map<string, TokenRow>();
  private readonly byDigest = new Map<string, string>();
  private readonly groups = new Map<string, Set<string>>();
  /** account → its groups (the inverse of `groups`, for role lookups). */
  private readonly memberOf = new Map<string, Set<string>>();
  private readonly repos = new Map<number, { anonymous_read: boolean; grants: Map<string, Role> }>();
  private readonly lastUsed = new Map<string, number>();
  /** Tokens that authenticated since the book last changed (a cache; emptied by every record). */
  private readonly seen = new Map<string, { who: Principal; tokenId: string; expires: number }>();
  private readonly revokeListeners = new Map<string, Set<() => void>>();
  private readonly mutex = new Mutex();
  private log!: AccessLog;
  private usedDirty = false;
  private flushTimer: NodeJS.Timeout | null = null;
  private tokenCounter = 0;

  private constructor(private readonly layout: Layout) {}

  /** Open DATA/access.log (created at the first change). The caller holds the data directory's lock. */
  static open(layout: Layout, notes: string[] = []): AccessBook {
    const book = new AccessBook(layout);
    book.log = AccessLog.open(layout.accessLogFile, notes, (r) => book.apply(r));
    try {
      const used = JSON.parse(readFileSync(layout.tokenUseFile, 'utf8')) as Record<string, number>;
      for (const [id, at] of Object.entries(used)) if (book.tokens.has(id) && Number.isSafeInteger(at)) book.lastUsed.set(id, at);
    } catch {
      // absent or unreadable: last-used times are approximate and start again
    }
    return book;
  }

  // ------------------------------------------------------------ the fold

  private apply(r: AccessRecord): void {
    this.seen.clear();
    switch (r.type) {
      case 'account.added':
        this.accounts.set(String(r.name), { name: String(r.name), server_admin: r.server_admin === true, disabled: false, source: r.source === 'ingress' ? 'ingress' : 'admin', created_at_s: r.at_s });
        break;
      case 'account.changed': {
        const a = this.accounts.get(String(r.name));
        if (a) {
          if (typeof r.disabled === 'boolean') a.disabled = r.disabled;
          if (typeof r.server_admin === 'boolean') a.server_admin = r.server_admin;
        }
        break;
      }
      case 'token.created': {
        const row: TokenRow = { token_id: String(r.token_id), account: String(r.account), name: String(r.name), scopes: r.scopes as Scope[], created_at_s: r.at_s, expires_at_s: Number(r.expires_at_s), revoked_at_s: null, digest: String(r.digest) };
        this.tokens.set(row.token_id, row);
        this.byDigest.set(row.digest, row.token_id);
        this.tokenCounter = Math.max(this.tokenCounter, Number(row.token_id.replace(/^token-/, '')) || 0);
        break;
      }
      case 'token.revoked': {
        const t = this.tokens.get(String(r.token_id));
        if (t && t.revoked_at_s === null) t.revoked_at_s = r.at_s;
        break;
      }
      case 'group.set': {
        const name = String(r.name);
        for (const m of this.groups.get(name) ?? []) this.memberOf.get(m)?.delete(name);
        const members = new Set((r.members as string[]) ?? []);
        if (members.size === 0) this.groups.delete(name);
        else this.groups.set(name, members);
        for (const m of members) {
          let set = this.memberOf.get(m);
          if (!set) this.memberOf.set(m, (set = new Set()));
          set.add(name);
        }
        break;
      }
      case 'access.changed': {
        const index = Number(r.repository_index);
        let repo = this.repos.get(index);
        if (!repo) this.repos.set(index, (repo = { anonymous_read: false, grants: new Map() }));
        if (typeof r.anonymous_read === 'boolean') repo.anonymous_read = r.anonymous_read;
        for (const s of (r.revoke as string[]) ?? []) repo.grants.delete(s);
        for (const g of (r.grant as { subject: string; role: Role }[]) ?? []) repo.grants.set(g.subject, g.role);
        break;
      }
      case 'access.cleared':
        this.repos.delete(Number(r.repository_index));
        break;
      default:
        // audit-only records change no state
        break;
    }
  }

  private async append(type: string, actor: string | null, fields: Record<string, unknown>): Promise<AccessRecord> {
    const r = await this.log.append(type, actor, fields);
    this.apply(r);
    return r;
  }

  // ------------------------------------------------------------ who is calling

  /**
   * The principal a token names, or null when it does not authenticate (unknown, revoked,
   * expired, or its account disabled: one answer for all, so a caller learns nothing about
   * which). Marks the token used.
   */
  authenticate(token: string, nowS = Math.floor(Date.now() / 1000)): Principal | null {
    // A token seen since the last change of the book answers from memory (no digest to compute):
    // every record appended empties the cache, so a revocation counts from the next request.
    const hit = this.seen.get(token);
    if (hit !== undefined && hit.expires > nowS) {
      this.markUsed(hit.tokenId, nowS);
      return hit.who;
    }
    if (!TOKEN_RE.test(token)) return null;
    const id = this.byDigest.get(tokenDigest(token));
    const row = id === undefined ? undefined : this.tokens.get(id);
    if (!row || row.revoked_at_s !== null || row.expires_at_s <= nowS) return null;
    const account = this.accounts.get(row.account);
    if (!account || account.disabled) return null;
    this.markUsed(row.token_id, nowS);
    const who: Principal = { kind: 'account', name: account.name, serverAdmin: account.server_admin, scopes: new Set(row.scopes), tokenId: row.token_id };
    if (this.seen.size >= SEEN_TOKENS) this.seen.clear();
    this.seen.set(token, { who, tokenId: row.token_id, expires: row.expires_at_s });
    return who;
  }

  /** Whether token `tokenId` still authenticates (not revoked, not expired, its account enabled). */
  tokenValid(tokenId: string, nowS = Math.floor(Date.now() / 1000)): boolean {
    const row = this.tokens.get(tokenId);
    const account = row ? this.accounts.get(row.account) : undefined;
    return !!row && !!account && row.revoked_at_s === null && row.expires_at_s > nowS && !account.disabled;
  }

  /**
   * The principal of a front-door name whose account exists (null: disabled), or undefined when
   * the account is still to be made (`ingressPrincipal` makes it): the common case never waits.
   */
  knownIngressPrincipal(name: string): Principal | null | undefined {
    const account = this.accounts.get(name);
    if (!account) return undefined;
    if (account.disabled) return null;
    return { kind: 'account', name, serverAdmin: account.server_admin, scopes: null, tokenId: null };
  }

  /**
   * The principal of a caller the front door names: its account, made at first sight without
   * any role (one durable record). A disabled account is refused (null).
   */
  async ingressPrincipal(name: string): Promise<Principal | null> {
    // The rule of account names: a name with ':' or a leading '@' could never be granted a role (user:NAME, @group).
    requireAccountName(name, 'the name the front door gives');
    let account = this.accounts.get(name);
    if (!account) {
      await this.mutex.runExclusive(async () => {
        if (!this.accounts.has(name)) await this.append('account.added', null, { name, server_admin: false, source: 'ingress' });
      });
      account = this.accounts.get(name)!;
    }
    if (account.disabled) return null;
    return { kind: 'account', name, serverAdmin: account.server_admin, scopes: null, tokenId: null };
  }

  /** The caller's role in repository `index` (null: none). Server admins are admins everywhere. */
  roleIn(who: Principal, index: number): Role | null {
    const repo = this.repos.get(index);
    let best: Role | null = repo?.anonymous_read ? 'reader' : null;
    if (who.kind === 'anonymous') return best;
    if (who.serverAdmin) return 'admin';
    if (!repo) return best;
    const consider = (role: Role | undefined) => {
      if (role && roleRank(role) > roleRank(best)) best = role;
    };
    consider(repo.grants.get(`user:${who.name}`));
    for (const g of this.memberOf.get(who.name) ?? []) consider(repo.grants.get(`group:${g}`));
    return best;
  }

  /** Whether `who` may read repository `index` (lists show only those). */
  canRead(who: Principal, index: number): boolean {
    return atLeast(this.roleIn(who, index), 'reader');
  }

  /** Members of a group, or null when no such group (CODEOWNERS `@group`, reviewer groups). */
  groupMembers(name: string): readonly string[] | null {
    const g = this.groups.get(name);
    return g ? [...g] : null;
  }

  /** Call `fn` once when token `tokenId` stops authenticating (revoked, or its account disabled); returns the unsubscribe. */
  onRevoke(tokenId: string, fn: () => void): () => void {
    let set = this.revokeListeners.get(tokenId);
    if (!set) this.revokeListeners.set(tokenId, (set = new Set()));
    set.add(fn);
    return () => {
      set!.delete(fn);
      if (set!.size === 0) this.revokeListeners.delete(tokenId);
    };
  }

  private fireRevoked(tokenIds: Iterable<string>): void {
    for (const id of tokenIds) {
      const set = this.revokeListeners.get(id);
      if (!set) continue;
      this.revokeListeners.delete(id);
      for (const fn of set) {
        try {
          fn();
        } catch {
          // a listener's failure is its own
        }
      }
    }
  }

  // ------------------------------------------------------------ accounts

  account(name: string): Account | null {
    return this.accounts.get(name) ?? null;
  }

  listAccounts(): Account[] {
    return [...this.accounts.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((a) => ({ ...a }));
  }

  /** `cairn admin user add`: a new account (409 when the name is taken). */
  async addAccount(actor: string | null, nameValue: unknown, serverAdmin: boolean): Promise<Account> {
    const name = requireAccountName(nameValue);
    return this.mutex.runExclusive(async () => {
      if (this.accounts.has(name)) throw new Conflict(`an account named "${name}" exists`);
      await this.append('account.added', actor, { name, server_admin: serverAdmin, source: 'admin' });
      return { ...this.accounts.get(name)! };
    });
  }

  /** Disable or enable an account, or change its server-admin flag. Disabling ends its tokens' streams at once. */
  async changeAccount(actor: string | null, name: string, change: { disabled?: boolean; server_admin?: boolean }): Promise<Account> {
    return this.mutex.runExclusive(async () => {
      const a = this.accounts.get(name);
      if (!a) throw new NotFound(`no account named "${name}"`);
      if (change.disabled === undefined && change.server_admin === undefined) return { ...a };
      await this.append('account.changed', actor, { name, ...change });
      if (change.disabled) this.fireRevoked([...this.tokens.values()].filter((t) => t.account === name).map((t) => t.token_id));
      return { ...a };
    });
  }

  // ------------------------------------------------------------ tokens

  /** A new token for `account`: its text is returned here once and never stored (only its digest). */
  async createToken(actor: string | null, account: string, nameValue: unknown, scopes: readonly Scope[] = DEFAULT_SCOPES, days: number = DEFAULT_TOKEN_DAYS): Promise<{ token: string; info: TokenInfo }> {
    const name = requireTokenName(nameValue);
    if (!Number.isSafeInteger(days) || days < 1 || days > MAX_TOKEN_DAYS) throw new Invalid(`expires_in_days must be an integer from 1 to ${MAX_TOKEN_DAYS}`);
    return this.mutex.runExclusive(async () => {
      const a = this.accounts.get(account);
      if (!a) throw new NotFound(`no account named "${account}"`);
      if (a.disabled) throw new Conflict(`account "${account}" is disabled`);
      const live = [...this.tokens.values()].filter((t) => t.account === account && t.revoked_at_s === null);
      if (live.length >= MAX_TOKENS_PER_ACCOUNT) throw new Conflict(`account "${account}" has ${MAX_TOKENS_PER_ACCOUNT} live tokens; revoke one first`);
      if (live.some((t) => t.name === name)) throw new Conflict(`account "${account}" has a live token named "${name}"`);
      const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
      const tokenId = `token-${this.tokenCounter + 1}`;
      const expires = Math.floor(Date.now() / 1000) + days * 86_400;
      await this.append('token.created', actor, { token_id: tokenId, account, name, scopes: [...scopes], expires_at_s: expires, digest: tokenDigest(token) });
      return { token, info: this.tokenInfo(this.tokens.get(tokenId)!) };
    });
  }

  tokensOf(account: string): TokenInfo[] {
    return [...this.tokens.values()].filter((t) => t.account === account).map((t) => this.tokenInfo(t));
  }

  token(tokenId: string): TokenInfo | null {
    const t = this.tokens.get(tokenId);
    return t ? this.tokenInfo(t) : null;
  }

  /** Revoke a token (idempotent); streams it authenticated end at once. */
  async revokeToken(actor: string | null, tokenId: string): Promise<TokenInfo> {
    return this.mutex.runExclusive(async () => {
      const t = this.tokens.get(tokenId);
      if (!t) throw new NotFound(`no token ${tokenId}`);
      if (t.revoked_at_s === null) {
        await this.append('token.revoked', actor, { token_id: tokenId, account: t.account });
        this.fireRevoked([tokenId]);
      }
      return this.tokenInfo(t);
    });
  }

  private tokenInfo(t: TokenRow): TokenInfo {
    return { token_id: t.token_id, account: t.account, name: t.name, scopes: [...t.scopes], created_at_s: t.created_at_s, expires_at_s: t.expires_at_s, revoked_at_s: t.revoked_at_s, last_used_s: this.lastUsed.get(t.token_id) ?? null };
  }

  private markUsed(tokenId: string, nowS: number): void {
    if (this.lastUsed.get(tokenId) === nowS) return;
    this.lastUsed.set(tokenId, nowS);
    this.usedDirty = true;
    if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = null;
        void this.flushLastUsed().catch(() => {});
      }, LAST_USED_FLUSH_MS);
      this.flushTimer.unref();
    }
  }

  /** Write the last-used times (approximate; a crash loses at most a minute of them). */
  async flushLastUsed(): Promise<void> {
    if (!this.usedDirty) return;
    this.usedDirty = false;
    await writeFileDurable(this.layout.tokenUseFile, JSON.stringify(Object.fromEntries(this.lastUsed)));
  }

  // ------------------------------------------------------------ groups

  listGroups(): { name: string; members: string[] }[] {
    return [...this.groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, m]) => ({ name, members: [...m].sort() }));
  }

  /** Set a group's members (an empty list removes the group). */
  async setGroup(actor: string | null, nameValue: unknown, membersValue: unknown): Promise<{ name: string; members: string[] }> {
    const name = requireAccountName(nameValue, 'group');
    if (!Array.isArray(membersValue) || membersValue.length > MAX_GROUP_MEMBERS) throw new Invalid(`members must be an array of at most ${MAX_GROUP_MEMBERS} account names`);
    const members = [...new Set(membersValue.map((m, i) => requireAccountName(m, `members[${i}]`)))].sort();
    return this.mutex.runExclusive(async () => {
      await this.append('group.set', actor, { name, members });
      return { name, members };
    });
  }

  // ------------------------------------------------------------ repository grants

  repositoryAccess(index: number): RepositoryAccess {
    const repo = this.repos.get(index);
    const grants = [...(repo?.grants ?? new Map<string, Role>()).entries()].map(([subject, role]) => ({ subject, role })).sort((a, b) => (a.subject < b.subject ? -1 : 1));
    return { repository_index: index, anonymous_read: repo?.anonymous_read ?? false, grants };
  }

  /** Apply grants, revocations and the anonymous-read flag of one repository as one record. */
  async changeAccess(actor: string | null, index: number, change: AccessChange): Promise<RepositoryAccess> {
    const grant = (change.grant ?? []).map((g) => ({ subject: subjectText(g.subject), role: g.role }));
    const revoke = (change.revoke ?? []).map(subjectText);
    const both = grant.find((g) => revoke.includes(g.subject));
    if (both) throw new Invalid(`${both.subject} is both granted and revoked`);
    if (new Set(grant.map((g) => g.subject)).size !== grant.length) throw new Invalid('a subject is granted twice');
    return this.mutex.runExclusive(async () => {
      const current = this.repos.get(index)?.grants ?? new Map<string, Role>();
      const after = new Set([...current.keys(), ...grant.map((g) => g.subject)]);
      for (const s of revoke) after.delete(s);
      if (after.size > MAX_GRANTS) throw new Invalid(`a repository holds at most ${MAX_GRANTS} grants`);
      const fields: Record<string, unknown> = { repository_index: index, grant, revoke };
      if (change.anonymous_read !== undefined) fields.anonymous_read = change.anonymous_read;
      await this.append('access.changed', actor, fields);
      return this.repositoryAccess(index);
    });
  }

  /** Forget a purged repository's grants (its index is never used again). */
  async clearAccess(actor: string | null, index: number): Promise<void> {
    if (!this.repos.has(index)) return;
    await this.mutex.runExclusive(() => this.append('access.cleared', actor, { repository_index: index }));
  }

  // ------------------------------------------------------------ the audit feed

  /** Record an admin action that changes no access state (a purge, a promotion, a rule change, a bypass). */
  async audit(actor: string | null, action: string, fields: Record<string, unknown> = {}): Promise<void> {
    await this.mutex.runExclusive(() => this.append(AUDIT_ONLY, actor, { ...fields, action }));
  }

  /** The audit feed: records after `after`, oldest first; token digests are never shown. */
  auditPage(after: number, limit: number): { records: Record<string, unknown>[]; last_seq: number } {
    const records = this.log.page(after, limit).map(({ digest: _digest, ...rest }) => rest);
    return { records, last_seq: this.log.seq };
  }

  /**
   * Fold access.log again from the file (a promoted standby's, written from the archive while
   * it followed): the state is what the file says from now on. Notes as at open.
   */
  async reload(notes: string[] = []): Promise<void> {
    await this.mutex.runExclusive(() => {
      const log = AccessLog.open(this.layout.accessLogFile, notes, () => {});
      this.log.close();
      this.log = log;
      for (const m of [this.accounts, this.tokens, this.byDigest, this.groups, this.memberOf, this.repos, this.seen]) m.clear();
      this.tokenCounter = 0;
      for (const r of log.page(0, Number.MAX_SAFE_INTEGER)) this.apply(r);
    });
  }

  async close(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    await this.flushLastUsed().catch(() => {});
    this.log.close();
  }
}

function requireTokenName(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 100 || /[\u0000-\u001f\u007f-\u009f]/.test(value)) {
    throw new Invalid('the token name must be 1 to 100 characters without control characters');
  }
  return value;
}

export { ANONYMOUS };
