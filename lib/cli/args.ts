// Argument parsing shared by the commands (node:util parseArgs, strict: unknown options fail).
import { statSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { parseStallSeconds } from '../client/stall.js';
import { MAX_SNAPSHOT_PATHS_BOUND } from '../domain/tree-size.js';
import { didYouMean } from './suggest.js';

export class CliUsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

export function parseCommandArgs(argv: string[], options: Options, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals });
  } catch (err) {
    throw new CliUsageError(parseErrorText(err as Error & { code?: string }, options));
  }
}

/** node:util's parse errors in our words: which option, what is wrong, and the option probably meant. */
function parseErrorText(err: Error & { code?: string }, options: Options): string {
  const quoted = /'([^']*)'/.exec(err.message)?.[1] ?? '';
  const flags = Object.keys(options).map((name) => `--${name}`);
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${quoted}${didYouMean(quoted.replace(/^-+/, '--'), flags, (s) => s)} (see --help)`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const name = /--[a-z0-9-]+/i.exec(quoted)?.[0] ?? quoted;
      return / argument missing$/.test(err.message) ? `${name} needs a value` : `${name} takes no value`;
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument "${quoted}": this command takes options only (see --help)`;
    default:
      return err.message;
  }
}

/** An option's value out of a fixed set, checked before anything is sent (undefined stays undefined). */
export function choice<T extends string>(value: unknown, flag: string, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new CliUsageError(`${flag} must be one of ${allowed.join(', ')}, not "${String(value)}"${didYouMean(String(value), allowed)}`);
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

/** An offline tool's --data must name an existing directory: a typo is an error, never a new empty store. */
export function requireDataDir(dir: string): void {
  let st;
  try {
    st = statSync(dir);
  } catch {
    throw new CliUsageError(`data directory ${dir} does not exist (check --data)`);
  }
  if (!st.isDirectory()) throw new CliUsageError(`data directory ${dir} is not a directory (check --data)`);
}

/** `--max-snapshot-paths N` (serve, fsck, import): paths a snapshot may hold (lib/domain/tree-size.ts). */
export function parseMaxSnapshotPaths(value: unknown): number {
  const n = Number(value);
  if (typeof value !== 'string' || !/^[1-9][0-9]*$/.test(value) || n > MAX_SNAPSHOT_PATHS_BOUND) throw new CliUsageError(`--max-snapshot-paths must be an integer from 1 to ${MAX_SNAPSHOT_PATHS_BOUND}`);
  return n;
}

/** --stall-seconds, checked (undefined: CAIRN_STALL_SECONDS or the default). */
export function stallSeconds(raw: unknown): number | undefined {
  if (raw === undefined) return undefined;
  try {
    return parseStallSeconds(String(raw), '--stall-seconds');
  } catch (err) {
    throw new CliUsageError((err as Error).message);
  }
}
