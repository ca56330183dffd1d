// Accounts, tokens, groups, repository grants, the session and the audit feed (extension routes;
// docs/api.md "Accounts, tokens and roles"). The access book (lib/authority/access.ts) keeps
// them; the gate (../access-gate.ts) has already let the caller through by the route's
// permission, and these handlers add the rules a permission cannot say (a token is its owner's
// or a server admin's to see and revoke). A server without an auth mode has no accounts: these
// routes answer 404 there, and the session says so.
import { array, boolean, integer, object, optional, string } from 'superstruct';
import { Forbidden, Invalid, NotFound, Unauthorized } from '../../domain/errors.js';
import { decide, DEFAULT_SCOPES, parseSubject, requireAccountName, requireRole, requireScopes, ROLES, SCOPES } from '../../domain/access.js';
import { arr, bool, enumOf, nullable as orNull, obj, ref, str, uint } from '../json-schema.js';
import { validate } from '../validate.js';
import { queryValue } from './workflow-common.js';
const NO_ACCOUNTS = 'this server has no accounts: it runs without an auth mode (start it with cairn serve --auth tokens, or behind a front door that names its callers)';
function bookOf(ctx) {
    if (!ctx.access)
        throw new NotFound(NO_ACCOUNTS);
    return ctx.access.book;
}
function principalOf(ctx) {
    return ctx.koa.state.principal ?? { kind: 'anonymous' };
}
/** The signed-in caller's name (401 for an anonymous one). */
function signedIn(ctx) {
    const who = principalOf(ctx);
    if (who.kind !== 'account')
        throw new Unauthorized('this needs a signed-in caller: send a token (Authorization: Bearer TOKEN); cairn login stores one', 'Bearer realm="cairn"');
    return { name: who.name, serverAdmin: who.serverAdmin };
}
const actorOf = (ctx) => {
    const who = principalOf(ctx);
    return who.kind === 'account' ? who.name : null;
};
// ------------------------------------------------------------ the session
/**
 * Who the caller is, and with `?repository_index=N` their role there and the operations of that
 * repository it allows (the UI shows only those actions). The route table is given lazily.
 */
export const sessionHandler = (routes) => async (ctx) => {
    const repoRoutes = routes().filter((r) => r.template.includes('{repository_index}'));
    const raw = queryValue(ctx, 'repository_index');
    let index = null;
    if (raw !== undefined) {
        if (!/^(0|[1-9][0-9]{0,9})$/.test(raw) || Number(raw) > 0xffffffff)
            throw new Invalid('repository_index must be an unsigned 32-bit integer');
        index = Number(raw);
    }
    if (!ctx.access) {
        const identity = ctx.koa.state.identity ?? null;
        return { json: { auth_mode: 'none', account: identity, server_admin: false, scopes: null, token_id: null, repository_index: index, role: index === null ? null : 'admin', may: index === null ? null : repoRoutes.map((r) => r.operation) } };
    }
    const who = principalOf(ctx);
    const role = index === null ? null : ctx.access.book.roleIn(who, index);
    const may = index === null ? null : repoRoutes.filter((r) => decide(r.permission, who, role, r.operation).allow).map((r) => r.operation);
    return {
        json: {
            auth_mode: ctx.access.mode,
            account: who.kind === 'account' ? who.name : null,
            server_admin: who.kind === 'account' && who.serverAdmin,
            scopes: who.kind === 'account' && who.scopes ? [...who.scopes] : null,
            token_id: who.kind === 'account' ? who.tokenId : null,
            repository_index: index,
            role,
            may,
        },
    };
};
// ------------------------------------------------------------ accounts
const accountJson = (a) => ({ name: a.name, server_admin: a.server_admin, disabled: a.disabled, source: a.source, created_at_s: a.created_at_s });
const tokenJson = (t) => ({ ...t });
const TokenRequest = object({ name: string(), scopes: optional(array(string())), expires_in_days: optional(integer()) });
export const AddAccount = object({ name: string(), server_admin: optional(boolean()), token: optional(TokenRequest) });
export const listAccounts = async (ctx) => {
    const all = bookOf(ctx).listAccounts();
    return { json: { accounts: all.map(accountJson), count: all.length } };
};
/** A new account, and with `token` its first token (shown once): what an admin hands the new user. */
export const addAccount = async (ctx) => {
    const book = bookOf(ctx);
    const req = validate(ctx.body, AddAccount);
    const name = requireAccountName(req.name);
    const scopes = req.token?.scopes === undefined ? DEFAULT_SCOPES : requireScopes(req.token.scopes);
    if (req.token)
        requireTokenRequest(req.token.name);
    const account = await book.addAccount(actorOf(ctx), name, req.server_admin === true);
    let token = null;
    if (req.token)
        token = await book.createToken(actorOf(ctx), name, req.token.name, scopes, req.token.expires_in_days);
    return { status: 201, json: { account: accountJson(account), token: token ? { ...tokenJson(token.info), token: token.token } : null } };
};
export const ChangeAccount = object({ disabled: optional(boolean()), server_admin: optional(boolean()) });
export const changeAccount = async (ctx) => {
    const book = bookOf(ctx);
    const req = validate(ctx.body, ChangeAccount);
    const me = signedIn(ctx);
    if (ctx.params.account_name === me.name && (req.disabled === true || req.server_admin === false))
        throw new Invalid('a server admin may not disable or demote their own account (another admin can)');
    const a = await book.changeAccount(me.name, ctx.params.account_name, req);
    return { json: { account: accountJson(a) } };
};
// ------------------------------------------------------------ tokens
export const CreateToken = object({ name: string(), scopes: optional(array(string())), expires_in_days: optional(integer()), account: optional(string()) });
function requireTokenRequest(name) {
    if (name.trim() === '')
        throw new Invalid('token.name must be non-empty');
}
/** Whose tokens a request may see or make: the caller's own, or with `account` (a server admin) anyone's. */
function tokenOwner(ctx, account) {
    const me = signedIn(ctx);
    if (account === undefined || account === me.name)
        return me.name;
    if (!me.serverAdmin)
        throw new Forbidden('only a server admin may see or make tokens of another account');
    return account;
}
export const listTokens = async (ctx) => {
    const book = bookOf(ctx);
    const owner = tokenOwner(ctx, queryValue(ctx, 'account'));
    const all = book.tokensOf(owner);
    return { json: { tokens: all.map(tokenJson), count: all.length } };
};
export const createToken = async (ctx) => {
    const book = bookOf(ctx);
    const req = validate(ctx.body, CreateToken);
    const owner = tokenOwner(ctx, req.account);
    const scopes = req.scopes === undefined ? DEFAULT_SCOPES : requireScopes(req.scopes);
    // A token never holds more than the one it was made with: a token without `admin` cannot mint
    // one that has it. A server admin's admin-scoped token may make any scopes (a runner's token).
    const who = principalOf(ctx);
    if (who.kind === 'account' && who.scopes !== null && !(who.serverAdmin && who.scopes.has('admin'))) {
        const wider = scopes.filter((s) => !who.scopes.has(s) && !(s === 'read' && who.scopes.has('write')));
        if (wider.length)
            throw new Forbidden(`this token may not make a token with scopes it lacks (${wider.join(', ')})`);
    }
    const made = await book.createToken(actorOf(ctx), owner, req.name, scopes, req.expires_in_days);
    return { status: 201, json: { token: { ...tokenJson(made.info), token: made.token } } };
};
export const revokeToken = async (ctx) => {
    const book = bookOf(ctx);
    const me = signedIn(ctx);
    const t = book.token(ctx.params.token_id);
    // Another account's token is "not found" to a non-admin: its existence is not theirs to learn.
    if (!t || (t.account !== me.name && !me.serverAdmin))
        throw new NotFound(`no token ${ctx.params.token_id}`);
    return { json: { token: tokenJson(await book.revokeToken(me.name, t.token_id)) } };
};
// ------------------------------------------------------------ groups
export const SetGroup = object({ members: array(string()) });
export const listGroups = async (ctx) => {
    signedIn(ctx);
    const all = bookOf(ctx).listGroups();
    return { json: { groups: all, count: all.length } };
};
export const setGroup = async (ctx) => {
    const book = bookOf(ctx);
    const req = validate(ctx.body, SetGroup);
    return { json: { group: await book.setGroup(actorOf(ctx), ctx.params.group_name, req.members) } };
};
// ------------------------------------------------------------ repository access
export const ChangeAccess = object({
    anonymous_read: optional(boolean()),
    grant: optional(array(object({ subject: string(), role: string() }))),
    revoke: optional(array(string())),
});
export const getAccess = async (ctx) => {
    const book = bookOf(ctx);
    const index = Number(ctx.params.repository_index);
    return { json: { ...book.repositoryAccess(index), your_role: book.roleIn(principalOf(ctx), index) } };
};
export const changeAccess = async (ctx) => {
    const book = bookOf(ctx);
    const req = validate(ctx.body, ChangeAccess);
    const grant = (req.grant ?? []).map((g, i) => ({ subject: parseSubject(g.subject, `grant[${i}].subject`), role: requireRole(g.role, `grant[${i}].role`) }));
    const revoke = (req.revoke ?? []).map((s, i) => parseSubject(s, `revoke[${i}]`));
    if (!grant.length && !revoke.length && req.anonymous_read === undefined)
        throw new Invalid('nothing to change: send grant, revoke or anonymous_read');
    const index = Number(ctx.params.repository_index);
    const access = await book.changeAccess(actorOf(ctx), index, { anonymous_read: req.anonymous_read, grant, revoke });
    return { json: { ...access, your_role: book.roleIn(principalOf(ctx), index) } };
};
// ------------------------------------------------------------ the audit feed
export const audit = async (ctx) => {
    const book = bookOf(ctx);
    const after = parseSeq(queryValue(ctx, 'after'), 'after', 0);
    const limit = parseSeq(queryValue(ctx, 'limit'), 'limit', 100);
    if (limit < 1 || limit > 1000)
        throw new Invalid('limit must be from 1 to 1000');
    const page = book.auditPage(after, limit);
    const last = page.records.at(-1);
    return { json: { records: page.records, count: page.records.length, last_seq: page.last_seq, next_after: last && last.seq < page.last_seq ? last.seq : null } };
};
function parseSeq(value, name, fallback) {
    if (value === undefined)
        return fallback;
    if (!/^(0|[1-9][0-9]{0,15})$/.test(value))
        throw new Invalid(`${name} must be a non-negative integer`);
    return Number(value);
}
// ------------------------------------------------------------ schemas
const role = enumOf(ROLES);
const scopes = arr(enumOf(SCOPES));
const Account_ = obj({ name: str, server_admin: bool, disabled: bool, source: { ...enumOf(['admin', 'ingress']), description: 'admin: made by an admin; ingress: first seen through the front door (made without any role)' }, created_at_s: uint });
const TOKEN_FIELDS = {
    token_id: str,
    account: str,
    name: str,
    scopes,
    created_at_s: uint,
    expires_at_s: uint,
    revoked_at_s: orNull(uint),
    last_used_s: { ...orNull(uint), description: 'approximate (kept in memory, written at most once a minute)' },
};
const Token_ = obj(TOKEN_FIELDS);
const NewToken = obj({ ...TOKEN_FIELDS, token: { ...str, description: 'the token itself: shown this once, never stored (only its sha256)' } });
export const SCHEMAS = {
    Session: obj({
        auth_mode: enumOf(['none', 'tokens', 'ingress', 'tokens+ingress']),
        account: orNull(str),
        server_admin: bool,
        scopes: orNull(scopes),
        token_id: orNull(str),
        repository_index: orNull(uint),
        role: { ...orNull(role), description: 'the caller\'s role in repository_index (null: none, or no repository asked)' },
        may: { ...orNull(arr(str)), description: 'operations of the route table the caller may call in repository_index' },
    }),
    Account: Account_,
    AccountList: obj({ accounts: arr(ref('Account')), count: uint }),
    AccountAdded: obj({ account: ref('Account'), token: orNull(NewToken) }),
    AccountResult: obj({ account: ref('Account') }),
    Token: Token_,
    TokenList: obj({ tokens: arr(ref('Token')), count: uint }),
    TokenCreated: obj({ token: NewToken }),
    TokenResult: obj({ token: ref('Token') }),
    Group: obj({ name: str, members: arr(str) }),
    GroupList: obj({ groups: arr(ref('Group')), count: uint }),
    GroupResult: obj({ group: ref('Group') }),
    RepositoryAccess: obj({
        repository_index: uint,
        anonymous_read: { ...bool, description: 'anyone, signed in or not, has the reader role' },
        grants: arr(obj({ subject: { ...str, description: 'user:NAME or group:NAME' }, role })),
        your_role: orNull(role),
    }),
    AuditPage: obj({
        records: arr({ type: 'object', description: 'an access.log record (storage-layout.md §21): seq, at_s, type, actor and its fields; token digests are never shown' }),
        count: uint,
        last_seq: uint,
        next_after: { ...orNull(uint), description: 'send as ?after= for the next page; null on the last' },
    }),
};
//# sourceMappingURL=access.js.map