// The `cairn` command: dispatch to a subcommand; errors become exit codes in one place.
import { readFileSync } from 'node:fs';
import { isCairnError } from '../domain/errors.js';
import { CliUsageError } from './args.js';
import { didYouMean } from './suggest.js';

export const HELP = `Usage: cairn [--as NAME] <command> [options]

--as NAME acts as NAME for this run (the --author, --reviewer and owner a command sends when
they are left out; see cairn config --help).

Working copies:
  checkout  make a directory a tracked working copy of a line
  status    list added, modified and deleted paths against the working copy's base
  update    bring the working copy to the line's head (refuses on both-sides changes)
  push      snapshot a directory (or working copy) and send it to a repository line

Transfers:
  pull      materialize a snapshot (or a line's head) into a directory (exact export)
  sync      copy a snapshot and its history between repositories or servers
  import-git  write a git repository's first-parent history onto a line
  export-git  write a line's history as git commits into a bare git repository
  mirror    push a line to a git remote after each move (add, list, status, remove, resume)

Workflow:
  task      create, list, show and close tasks
  change    create, list, show and close changes
  patchset  push a directory as a new patchset of a change
  review    request, approve, comment, block, dismiss and list reviews; publish drafts
  comment   comment on a change's lines, file or patchset; reply to a comment
  comments  list a change's comment threads (--unresolved, --path, --patchset)
  thread    resolve or reopen a comment thread
  attest    record an attestation for a patchset
  policy    evaluate or show a patchset's policy decision
  ci        run CI for a patchset or show its CI status
  land      land a task's or change's selected patchset (ff-only, merge, direct)
  queue     add a change to the land queue, list the queue, show or remove an entry
  stack     the stack a change stands in (the changes below and above it, from a pushed series)
  diff      show what a change or patchset changes (unified diff, --stat, --against)

Everyday:
  repo      create, list or show repositories; who may use one (repo access)
  lines     list a repository's lines
  log       snapshot history of a line
  jobs      list or show worker jobs (CI runs)
  watch     print events as they happen (one repository's, or every repository's)

Accounts and access:
  login     sign in to a server with a token (stored for cairn, handed to git's credential helper)
  logout    forget the stored token (and tell git's credential helper)
  whoami    who the server takes you for: account, token scopes, your role in a repository
  token     create, list and revoke personal access tokens
  admin     accounts, groups and the audit feed (offline with --data: the first admin)

Server and operations:
  serve     serve the HTTP interface
  runner    claim and run CI jobs (ci/run.sh) from a server
  config    set who you are (user.name) and the identity header your server's ingress takes
  fsck      verify a data directory offline (every file of every repository)
  export    write a repository's authority files and manifest to a directory (offline)
  import    restore such a directory as a new repository (offline)
  restore   rebuild a data directory from an archive in S3-compatible object storage
  archive   the server's S3 archive: how shipping stands (status), prune it by a retention policy
  cluster   the nodes of a cluster (serve --cluster): which are live, where each repository lives

Shell:
  completion  print a bash or zsh completion script (source <(cairn completion bash))

Run "cairn help <command>" (or "cairn <command> --help") for the options of a command;
"cairn --version" for the version.
Exit codes: 0 ok, 1 error, 2 usage, 3 data-directory lock lost (serve), 4 busy (data
directory locked), 5 corrupt data, 6 refused: the line moved or update found both-sides
changes (nothing changed), 7 the events to resume after are no longer kept (watch).
`;

type Command = (argv: string[]) => Promise<number>;

// Each command's module is loaded only when it runs: a client command need not load Koa or pino.
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.js')).serve,
  push: async () => (await import('./content-commands.js')).pushCommand,
  pull: async () => (await import('./content-commands.js')).pullCommand,
  sync: async () => (await import('./content-commands.js')).syncCommand,
  checkout: async () => (await import('./content-commands.js')).checkoutCommand,
  clone: async () => (await import('./content-commands.js')).checkoutCommand,
  status: async () => (await import('./content-commands.js')).statusCommand,
  update: async () => (await import('./content-commands.js')).updateCommand,
  // `repo access` has a module of its own (./repo-access-command.ts).
  repo: async () => {
    const repo = (await import('./everyday.js')).repoCommand;
    return async (argv) => {
      if (argv[0] === 'access') return (await import('./repo-access-command.js')).repoAccessCommand(argv.slice(1));
      if (argv[0] === 'move' || argv[0] === 'failover') return (await import('./cluster-command.js')).repoMoveCommand(argv[0], argv.slice(1));
      return repo(argv);
    };
  },
  lines: async () => (await import('./everyday.js')).linesCommand,
  log: async () => (await import('./everyday.js')).logCommand,
  jobs: async () => (await import('./everyday.js')).jobsCommand,
  watch: async () => (await import('./watch.js')).watchCommand,
  fsck: async () => (await import('./fsck.js')).fsckCommand,
  runner: async () => (await import('./runner.js')).runnerCommand,
  export: async () => (await import('./export-import.js')).exportCommand,
  import: async () => (await import('./export-import.js')).importCommand,
  restore: async () => (await import('./restore-command.js')).restoreCommand,
  task: async () => (await import('./workflow-commands.js')).taskCommand,
  change: async () => (await import('./workflow-commands.js')).changeCommand,
  patchset: async () => (await import('./workflow-commands.js')).patchsetCommand,
  review: async () => (await import('./review-commands.js')).reviewCommand,
  comment: async () => (await import('./comment-commands.js')).commentCommand,
  comments: async () => (await import('./comment-commands.js')).commentsCommand,
  thread: async () => (await import('./comment-commands.js')).threadCommand,
  attest: async () => (await import('./review-commands.js')).attestCommand,
  policy: async () => (await import('./review-commands.js')).policyCommand,
  ci: async () => (await import('./review-commands.js')).ciCommand,
  promote: async () => (await import('./promote-command.js')).promoteCommand,
  land: async () => (await import('./land-commands.js')).landCommand,
  queue: async () => (await import('./queue-commands.js')).queueCommand,
  stack: async () => (await import('./stack-command.js')).stackCommand,
  diff: async () => (await import('./diff-command.js')).diffCommand,
  'import-git': async () => (await import('./git-commands.js')).importGitCommand,
  'export-git': async () => (await import('./git-export-command.js')).exportGitCommand,
  config: async () => (await import('./config-command.js')).configCommand,
  mirror: async () => (await import('./mirror-commands.js')).mirrorCommand,
  archive: async () => (await import('./archive-command.js')).archiveCommand,
  cluster: async () => (await import('./cluster-command.js')).clusterCommand,
  login: async () => (await import('./login-commands.js')).loginCommand,
  logout: async () => (await import('./login-commands.js')).logoutCommand,
  whoami: async () => (await import('./login-commands.js')).whoamiCommand,
  token: async () => (await import('./token-commands.js')).tokenCommand,
  admin: async () => (await import('./admin-commands.js')).adminCommand,
  completion: async () => {
    const { completionCommand } = await import('./completion.js');
    return (argv) => completionCommand(argv, COMMAND_NAMES);
  },
};

/** Every command name `cairn` accepts (aliases included), in table order: what docs/cli.md documents. */
export const COMMAND_NAMES: readonly string[] = Object.keys(COMMANDS);

export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** A reader that went away (`cairn ... | head`) is not an error: stop writing, exit quietly. */
function quietOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') return;
    throw err;
  });
}

export async function main(argv: string[]): Promise<number> {
  quietOnClosedPipe(process.stdout);
  quietOnClosedPipe(process.stderr);
  // `--as NAME` before the command: the person this run acts as (lib/client/identity.ts).
  while (argv[0] === '--as' || argv[0]?.startsWith('--as=')) {
    const value = argv[0] === '--as' ? argv[1] : argv[0].slice('--as='.length);
    if (value === undefined || value.trim() === '') {
      process.stderr.write('cairn: --as needs a name (cairn --as NAME <command> ...)\n');
      return 2;
    }
    (await import('../client/identity.js')).setActingAs(value);
    argv = argv.slice(argv[0] === '--as' ? 2 : 1);
  }
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    const v = version();
    process.stdout.write(rest.includes('--json') || process.stdout.isTTY !== true ? `${JSON.stringify({ name: 'cairn', version: v, node: process.version })}\n` : `cairn ${v} (node ${process.version})\n`);
    return 0;
  }
  // `cairn help X [SUB]` is `cairn X [SUB] --help`.
  if (name === 'help' && rest.length) return main([...rest, '--help']);
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(HELP);
    return name ? 0 : 2;
  }
  const load = COMMANDS[name];
  if (!load) {
    process.stderr.write(`cairn: "${name}" is not a cairn command${didYouMean(name, [...COMMAND_NAMES, 'help'])}; see cairn --help\n`);
    return 2;
  }
  try {
    const run = await load();
    return await run(await (await import('./target.js')).resolveRepoNames(name, rest));
  } catch (err) {
    return reportError(err);
  }
}

/** Exit codes: 2 usage, 4 busy (data directory locked), 5 corrupt, 6 refused (line moved, update conflict), 7 events gone (watch), 1 anything else. */
function reportError(err: unknown): number {
  let message = (signInHint(err) ?? (err instanceof Error ? err.message : String(err)));
  // `unknown X subcommand "Y" (a, b, c)`, as every command with sub-commands says it: add the one meant.
  const sub = err instanceof CliUsageError ? /^unknown [a-z-]+ subcommand "([^"]*)" \(([a-z, -]+)\)/.exec(message) : null;
  if (sub) message += didYouMean(sub[1], sub[2].split(', '));
  process.stderr.write(`cairn: ${message}\n`);
  if (err instanceof CliUsageError) return 2;
  const name = err instanceof Error ? err.constructor.name : '';
  if (name === 'LineMovedError' || name === 'UpdateConflictError') return 6;
  if (name === 'EventsGoneError') return 7;
  if (isCairnError(err)) {
    if (err.code === 'Busy') return 4;
    if (err.code === 'Corrupt') return 5;
  }
  return 1;
}

/**
 * A 401 of the access gate says how to sign in: with which server, and whether the token sent
 * (from CAIRN_TOKEN or cairn login) was refused or there was none. Other 401s (a promotion
 * secret) keep their own message. Never names the token.
 */
function signInHint(err: unknown): string | null {
  const e = err as { status?: unknown; server?: unknown; body?: { error?: unknown } | null; message?: string };
  if (e?.status !== 401 || typeof e.server !== 'string') return null;
  const text = typeof e.body?.error === 'string' ? e.body.error : '';
  if (!/signed-in caller|authentication failed|Authorization header/.test(text)) return null;
  const login = `cairn login --server ${e.server}`;
  if (/^authentication failed/.test(text)) {
    const from = process.env.CAIRN_TOKEN?.trim() ? 'the token in CAIRN_TOKEN' : 'the token stored by cairn login';
    return `${e.message}\n${e.server} did not accept ${from} (unknown, revoked or expired, or its account disabled): sign in again with ${login}, or set CAIRN_TOKEN to a valid token`;
  }
  return `${e.message}\nnot signed in to ${e.server}: sign in with ${login} (a token from your admin, or cairn token create), or set CAIRN_TOKEN`;
}
