// `cairn token create|list|revoke`: personal access tokens (docs/operations.md "Team setup").
// Your own over --server (the token you signed in with says who you are); another account's
// with --user as a server admin, or offline with --data on a stopped server's data directory.
// A new token's text is shown once and never logged.
import { CliUsageError, parseCommandArgs } from './args.js';
import { emit, useJson, when } from './output.js';
import { WHERE_HELP, WHERE_OPTIONS, checkTokenFile, newTokenText, openBackend, parseDays, parseScopes, placeToken, tokenTable, withBackend } from './access-backend.js';

export const TOKEN_HELP = `Usage: cairn token create NAME [--scopes LIST] [--expires-days N] [--user ACCOUNT] [--token-file FILE]
       cairn token list [--user ACCOUNT]
       cairn token revoke TOKEN_ID

Personal access tokens: what cairn commands (cairn login, or $CAIRN_TOKEN), git (as the
password of HTTP basic auth, handed to git by cairn login) and scripts sign in with.

create   make a token for you (or, as a server admin, for --user ACCOUNT). It is shown once,
         on stdout (in --json as token.token), or written to --token-file: copy it now, it is
         not shown again. A token never holds a scope the token that makes it lacks.
list     your tokens (or --user ACCOUNT's, as a server admin): id, name, scopes, expiry, when
         last used (approximate), revoked or not. The token text is never shown again.
revoke   stop a token at once (streams it opened end); yours, or any as a server admin.

Options:
  --scopes LIST       comma-separated: read, write, admin, runner (default read,write).
                      admin: server and repository administration; runner: claim and run CI
                      jobs and the reads they need, nothing else
  --expires-days N    lifetime in days (default 90, at most 366)
  --user ACCOUNT      another account's tokens (server admins; required with --data)
  --token-file FILE   write the new token to FILE (mode 0600, a new file) instead of printing it
${WHERE_HELP}`;

export async function tokenCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    ...WHERE_OPTIONS,
    scopes: { type: 'string' },
    'expires-days': { type: 'string' },
    user: { type: 'string' },
    'token-file': { type: 'string' },
  }, true);
  if (values.help) { process.stdout.write(TOKEN_HELP); return 0; }
  const json = useJson(values.json);
  const [sub, ...rest] = positionals;
  const user = typeof values.user === 'string' && values.user !== '' ? values.user : null;
  if (sub === 'create') {
    if (rest.length !== 1 || rest[0].trim() === '') throw new CliUsageError('usage: cairn token create NAME [--scopes LIST] [--expires-days N] [--user ACCOUNT]');
    const scopes = parseScopes(values.scopes);
    const days = parseDays(values['expires-days']);
    checkTokenFile(values['token-file']);
    const made = await withBackend(await openBackend(values, 'cairn token create'), (b) =>
      b.createToken(user, { name: rest[0], ...(scopes ? { scopes } : {}), ...(days === undefined ? {} : { expires_in_days: days }) }));
    const placed = placeToken(made, values['token-file']);
    emit({ token: placed.shown }, json, () => newTokenText(placed.shown, placed.file));
    return 0;
  }
  if (sub === 'list') {
    if (rest.length) throw new CliUsageError('usage: cairn token list [--user ACCOUNT]');
    const tokens = await withBackend(await openBackend(values, 'cairn token list'), (b) => b.listTokens(user));
    emit({ tokens, count: tokens.length }, json, () => (tokens.length ? tokenTable(tokens) : 'no tokens'));
    return 0;
  }
  if (sub === 'revoke') {
    if (rest.length !== 1 || !/^token-[0-9]+$/.test(rest[0])) throw new CliUsageError('usage: cairn token revoke TOKEN_ID (an id such as token-3, from cairn token list; never the token itself)');
    if (user !== null) throw new CliUsageError('cairn token revoke takes no --user: a token id names its account');
    const token = await withBackend(await openBackend(values, 'cairn token revoke'), (b) => b.revokeToken(rest[0]));
    emit({ token }, json, () => `revoked ${token.token_id} ("${token.name}" of ${token.account}) at ${when(token.revoked_at_s)}: it no longer signs in`);
    return 0;
  }
  throw new CliUsageError(sub === undefined ? 'usage: cairn token create|list|revoke (see cairn token --help)' : `unknown token subcommand "${sub}" (create, list, revoke)`);
}
