// The `cairn` command: dispatch to a subcommand; errors become exit codes in one place.
import { isCairnError } from '../domain/errors.js';
import { CliUsageError } from './args.js';

export const HELP = `Usage: cairn <command> [options]

Commands:
  serve    serve the HTTP interface
  push     snapshot a directory and send it to a repository line
  pull     materialize a snapshot (or a line's head) into a directory
  sync     copy a snapshot and its history between repositories or servers
  fsck     verify a data directory offline (packs, locators, trees, snapshots, lines)
  runner   claim and run CI jobs (ci/run.sh) from a server
  export   write a repository's authority files and manifest to a directory (offline)
  import   restore such a directory as a new repository (offline)
  task     create, list, show and close tasks
  change   create, list, show and close changes
  patchset push a directory as a new patchset of a change

Run "cairn <command> --help" for the options of a command.
`;

type Command = (argv: string[]) => Promise<number>;

// Each command's module is loaded only when it runs: a client command need not load Koa or pino.
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.js')).serve,
  push: async () => (await import('./content-commands.js')).pushCommand,
  pull: async () => (await import('./content-commands.js')).pullCommand,
  sync: async () => (await import('./content-commands.js')).syncCommand,
  fsck: async () => (await import('./fsck.js')).fsckCommand,
  runner: async () => (await import('./runner.js')).runnerCommand,
  export: async () => (await import('./export-import.js')).exportCommand,
  import: async () => (await import('./export-import.js')).importCommand,
  task: async () => (await import('./workflow-commands.js')).taskCommand,
  change: async () => (await import('./workflow-commands.js')).changeCommand,
  patchset: async () => (await import('./workflow-commands.js')).patchsetCommand,
};

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(HELP);
    return name ? 0 : 2;
  }
  const load = COMMANDS[name];
  if (!load) {
    process.stderr.write(`cairn: unknown command "${name}"\n\n${HELP}`);
    return 2;
  }
  try {
    return await (await load())(rest);
  } catch (err) {
    return reportError(err);
  }
}

/** Exit codes: 2 usage, 4 busy (data directory locked), 5 corrupt, 1 anything else. */
function reportError(err: unknown): number {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`cairn: ${message}\n`);
  if (err instanceof CliUsageError) return 2;
  if (isCairnError(err)) {
    if (err.code === 'Busy') return 4;
    if (err.code === 'Corrupt') return 5;
  }
  return 1;
}

