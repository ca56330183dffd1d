// `cairn repo access`: who has which role in a repository, and anonymous read
// (GET / PATCH {repo}/access; docs/operations.md "Team setup"). Granting needs the admin role
// in the repository (a server admin has it everywhere).
import { ROLES } from '../domain/access.js';
import { CairnClient } from '../client/http.js';
import { CliUsageError, parseCommandArgs } from './args.js';
import { emit, table, useJson } from './output.js';
import { placeOf } from './target.js';

export const REPO_ACCESS_HELP = `Usage: cairn repo access [--server URL] [--repo N]
       cairn repo access grant SUBJECT ROLE [--server URL] [--repo N]
       cairn repo access revoke SUBJECT [--server URL] [--repo N]
       cairn repo access anonymous-read on|off [--server URL] [--repo N]

Who may do what in a repository, on a server with accounts (cairn serve --auth tokens).
Without a sub-command: the grants, whether anyone may read without signing in, and your role.

Roles, each holding every right of the ones before it:
  reader        read everything: lines, snapshots, tasks, changes, reviews; git clone and fetch
  contributor   push (cairn push, git push for review), tasks, changes, comments, reviews, CI
  maintainer    land, the land queue, make and close lines, git import, export and mirrors,
                webhooks
  admin         grant roles, the repository's rules, retire and purge the repository

SUBJECT is user:NAME (an account), group:NAME (a group: cairn admin group set), or a bare NAME
meaning user:NAME. A grant replaces the subject's earlier role; revoke removes it. A caller's
role is the highest of their own grant and their groups' grants; server admins are admins
everywhere. grant, revoke and anonymous-read need the admin role in the repository.

Options:
  --server URL   the server (default $CAIRN_SERVER, the working copy's or git remote's, or the one server you
                 are signed in to)
  --repo N       repository index or name (default: the working copy's or git remote's)
  --json         print JSON (the default when stdout is not a terminal)
`;

interface AccessView {
  repository_index: number;
  anonymous_read: boolean;
  grants: { subject: string; role: string }[];
  your_role: string | null;
}

function subjectOf(text: string): string {
  if (text.startsWith('user:') || text.startsWith('group:')) return text;
  if (text.includes(':')) throw new CliUsageError(`SUBJECT must be user:NAME, group:NAME or a bare NAME (an account), not "${text}"`);
  return `user:${text}`;
}

export async function repoAccessCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    server: { type: 'string' }, repo: { type: 'string' }, json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) { process.stdout.write(REPO_ACCESS_HELP); return 0; }
  const [sub, ...rest] = positionals;
  let change: Record<string, unknown> | null = null;
  let done = '';
  if (sub === 'grant') {
    if (rest.length !== 2) throw new CliUsageError('usage: cairn repo access grant SUBJECT ROLE (e.g. cairn repo access grant bob contributor)');
    const role = rest[1];
    if (!(ROLES as readonly string[]).includes(role)) throw new CliUsageError(`ROLE must be one of ${ROLES.join(', ')}`);
    const subject = subjectOf(rest[0]);
    change = { grant: [{ subject, role }] };
    done = `granted ${subject} the ${role} role`;
  } else if (sub === 'revoke') {
    if (rest.length !== 1) throw new CliUsageError('usage: cairn repo access revoke SUBJECT');
    const subject = subjectOf(rest[0]);
    change = { revoke: [subject] };
    done = `revoked the role of ${subject}`;
  } else if (sub === 'anonymous-read') {
    if (rest.length !== 1 || (rest[0] !== 'on' && rest[0] !== 'off')) throw new CliUsageError('usage: cairn repo access anonymous-read on|off');
    change = { anonymous_read: rest[0] === 'on' };
    done = rest[0] === 'on' ? 'anyone may now read it without signing in' : 'reading it now needs a role';
  } else if (sub !== undefined) {
    throw new CliUsageError('usage: cairn repo access [grant|revoke|anonymous-read] (see cairn repo access --help)');
  }
  const { server, repo: index } = placeOf(values.server, values.repo, 'cairn repo access');
  const repo = index!;
  const client = new CairnClient(server);
  const path = client.repoPath(repo, '/access');
  const view = await client.json<AccessView>(change ? 'PATCH' : 'GET', path, change ?? undefined);
  emit(view, useJson(values.json), () => [
    ...(change ? [`repository ${repo}: ${done}`] : []),
    `repository ${view.repository_index}: anonymous read ${view.anonymous_read ? 'on (anyone may read)' : 'off'}; your role: ${view.your_role ?? 'none'}`,
    view.grants.length ? table([['SUBJECT', 'ROLE'], ...view.grants.map((g) => [g.subject, g.role])]) : 'no grants',
  ].join('\n'));
  return 0;
}
