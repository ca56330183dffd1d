// `cairn admin`: accounts, groups and the audit feed of a server (docs/operations.md "Team
// setup"). Against a running server (--server, a server admin's token) or offline on a stopped
// server's data directory (--data): that is how the first server admin is made.
import { DEFAULT_SCOPES } from '../domain/access.js';
import { CliUsageError, parseCommandArgs } from './args.js';
import { emit, table, useJson, when } from './output.js';
import { WHERE_HELP, WHERE_OPTIONS, checkTokenFile, newTokenText, openBackend, parseDays, parseScopes, placeToken, withBackend } from './access-backend.js';
export const ADMIN_HELP = `Usage: cairn admin user add NAME [--admin] [--token-name NAME] [--scopes LIST] [--expires-days N]
                            [--token-file FILE] (--server URL | --data DIR)
       cairn admin user list (--server URL | --data DIR)
       cairn admin user disable NAME (--server URL | --data DIR)
       cairn admin user enable NAME (--server URL | --data DIR)
       cairn admin group set NAME --members A,B,... (--server URL | --data DIR)
       cairn admin group list (--server URL | --data DIR)
       cairn admin audit [--after SEQ] [--limit N] (--server URL | --data DIR)

Accounts, groups and the audit feed of a server that runs with accounts (cairn serve --auth
tokens; docs/operations.md "Team setup"). Over --server the caller must be a server admin
with a token holding the admin scope. With --data the command works offline on the data
directory of a stopped server (refused while the server runs: exit 4): that is how the first
server admin is made, before the first start:

  cairn admin user add alice --admin --data ./data

user add      make an account and its first token. The token is shown once, on stdout (in
              --json as token.token), or written to --token-file; copy it now, it is not
              shown again. --admin makes a server admin (admin in every repository; may add
              accounts and repositories). Roles in repositories are granted with
              cairn repo access grant (see cairn repo access --help).
user list     every account: server admin, disabled, how it was made
user disable  the account's tokens stop working at once (its streams end); enable undoes it
group set     set a group's members (an empty --members removes the group); grant a group a
              role with cairn repo access grant group:NAME ROLE
audit         who changed accounts, tokens, groups and grants, and other admin actions, oldest
              first (--after SEQ for the next page)

Options:
  --admin             the new account is a server admin
  --token-name NAME   name of the first token (default "first")
  --scopes LIST       its scopes, comma-separated: read, write, admin, runner (default
                      read,write; with --admin read,write,admin). A runner-scope token may
                      claim and run CI jobs and read what they need, nothing else
  --expires-days N    its lifetime in days (default 90, at most 366)
  --token-file FILE   write the token to FILE (mode 0600, a new file) instead of printing it
  --members A,B,...   the group's members (account names)
  --after SEQ         audit records after this sequence number (default 0)
  --limit N           at most N audit records (default 100, at most 1000)
${WHERE_HELP}`;
function accountLine(a) {
    return [a.name, a.server_admin ? 'yes' : 'no', a.disabled ? 'disabled' : 'active', a.source, when(a.created_at_s)];
}
function oneName(rest, usage) {
    if (rest.length !== 1 || rest[0] === '')
        throw new CliUsageError(`usage: ${usage}`);
    return rest[0];
}
export async function adminCommand(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
        ...WHERE_OPTIONS,
        admin: { type: 'boolean', default: false },
        'token-name': { type: 'string' },
        scopes: { type: 'string' },
        'expires-days': { type: 'string' },
        'token-file': { type: 'string' },
        members: { type: 'string' },
        after: { type: 'string' },
        limit: { type: 'string' },
    }, true);
    if (values.help) {
        process.stdout.write(ADMIN_HELP);
        return 0;
    }
    const json = useJson(values.json);
    const [family, sub, ...rest] = positionals;
    const key = family === 'audit' ? 'audit' : `${family ?? ''} ${sub ?? ''}`;
    const auditRest = family === 'audit' ? positionals.slice(1) : [];
    switch (key) {
        case 'user add': {
            const name = oneName(rest, 'cairn admin user add NAME [--admin] (--server URL | --data DIR)');
            const scopes = parseScopes(values.scopes) ?? (values.admin ? ['read', 'write', 'admin'] : [...DEFAULT_SCOPES]);
            const days = parseDays(values['expires-days']);
            const tokenName = typeof values['token-name'] === 'string' ? values['token-name'] : 'first';
            checkTokenFile(values['token-file']);
            const res = await withBackend(await openBackend(values, 'cairn admin user add', { createDataDir: true }), (b) => b.addAccount(name, values.admin === true, { name: tokenName, scopes, ...(days === undefined ? {} : { expires_in_days: days }) }));
            const placed = res.token ? placeToken(res.token, values['token-file']) : null;
            emit({ account: res.account, token: placed?.shown ?? null }, json, () => [
                `account ${res.account.name} added${res.account.server_admin ? ' (server admin)' : ''}`,
                ...(placed ? [newTokenText(placed.shown, placed.file)] : []),
            ].join('\n'));
            return 0;
        }
        case 'user list': {
            if (rest.length)
                throw new CliUsageError('usage: cairn admin user list (--server URL | --data DIR)');
            const accounts = await withBackend(await openBackend(values, 'cairn admin user list'), (b) => b.listAccounts());
            emit({ accounts, count: accounts.length }, json, () => (accounts.length
                ? table([['ACCOUNT', 'SERVER ADMIN', 'STATE', 'MADE BY', 'CREATED'], ...accounts.map(accountLine)])
                : 'no accounts (make the first server admin: cairn admin user add NAME --admin --data DIR)'));
            return 0;
        }
        case 'user disable':
        case 'user enable': {
            const name = oneName(rest, `cairn admin user ${sub} NAME (--server URL | --data DIR)`);
            const account = await withBackend(await openBackend(values, `cairn admin user ${sub}`), (b) => b.changeAccount(name, { disabled: sub === 'disable' }));
            emit({ account }, json, () => (sub === 'disable'
                ? `account ${account.name} disabled: its tokens no longer sign in (cairn admin user enable ${account.name} undoes it)`
                : `account ${account.name} enabled: its tokens that are neither revoked nor expired sign in again`));
            return 0;
        }
        case 'group set': {
            const name = oneName(rest, 'cairn admin group set NAME --members A,B (--server URL | --data DIR)');
            if (typeof values.members !== 'string')
                throw new CliUsageError('--members A,B,... is required (an empty --members "" removes the group)');
            const members = values.members.split(',').map((m) => m.trim()).filter((m) => m !== '');
            const group = await withBackend(await openBackend(values, 'cairn admin group set'), (b) => b.setGroup(name, members));
            emit({ group }, json, () => (group.members.length ? `group ${group.name}: ${group.members.join(', ')}` : `group ${group.name} removed (no members)`));
            return 0;
        }
        case 'group list': {
            if (rest.length)
                throw new CliUsageError('usage: cairn admin group list (--server URL | --data DIR)');
            const groups = await withBackend(await openBackend(values, 'cairn admin group list'), (b) => b.listGroups());
            emit({ groups, count: groups.length }, json, () => (groups.length ? table([['GROUP', 'MEMBERS'], ...groups.map((g) => [g.name, g.members.join(', ')])]) : 'no groups'));
            return 0;
        }
        case 'audit': {
            if (auditRest.length)
                throw new CliUsageError('usage: cairn admin audit [--after SEQ] [--limit N]');
            const after = count(values.after, '--after', 0, 0);
            const limit = count(values.limit, '--limit', 100, 1, 1000);
            const page = await withBackend(await openBackend(values, 'cairn admin audit'), (b) => b.audit(after, limit));
            emit(page, json, () => {
                if (!page.records.length)
                    return after ? `no audit records after ${after}` : 'no audit records';
                const lines = page.records.map((r) => {
                    const { seq, at_s, type, actor, ...rest } = r;
                    return [String(seq), when(at_s), actor ?? '-', type === 'audit' ? String(rest.action) : type, JSON.stringify(rest)];
                });
                return table([['SEQ', 'AT', 'ACTOR', 'WHAT', 'DETAILS'], ...lines]) + (page.next_after !== null ? `\nmore: cairn admin audit --after ${page.next_after}` : '');
            });
            return 0;
        }
        default:
            throw new CliUsageError('usage: cairn admin user add|list|disable|enable, cairn admin group set|list, cairn admin audit (see cairn admin --help)');
    }
}
function count(value, flag, fallback, min, max = Number.MAX_SAFE_INTEGER) {
    if (value === undefined)
        return fallback;
    const n = Number(value);
    if (!/^[0-9]+$/.test(String(value)) || n < min || n > max)
        throw new CliUsageError(`${flag} must be a whole number from ${min} to ${max === Number.MAX_SAFE_INTEGER ? 'any' : max}`);
    return n;
}
//# sourceMappingURL=admin-commands.js.map