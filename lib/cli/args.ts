// Argument parsing shared by the commands (node:util parseArgs, strict: unknown options fail).
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class CliUsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

export function parseCommandArgs(argv: string[], options: Options, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals });
  } catch (err) {
    throw new CliUsageError((err as Error).message);
  }
}

export function parseBind(bind: string): { host: string; port: number } {
  const m = /^(.*):(\d{1,5})$/.exec(bind);
  if (!m) throw new CliUsageError(`--bind must be HOST:PORT, got "${bind}"`);
  const port = Number(m[2]);
  if (port > 65535) throw new CliUsageError(`--bind port out of range: ${port}`);
  const host = m[1].replace(/^\[(.*)\]$/, '$1');
  if (host === '') throw new CliUsageError('--bind needs a host');
  return { host, port };
}
