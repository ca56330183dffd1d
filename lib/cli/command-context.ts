// What every workflow command shares: the common options, the client context built from
// them, argument helpers and the output rule (one JSON object with --json or when stdout is not
// a terminal; a short readable form on a terminal).
import { CairnClient } from '../client/http.js';
import { actingAs } from '../client/identity.js';
import { CliUsageError } from './args.js';
import { placeOf } from './target.js';

export const COMMON = `Common options:
  --server URL    cairn server, e.g. http://127.0.0.1:8088 (default: $CAIRN_SERVER, the working
                  copy's, the git remote's, or the one server you signed in to)
  --repo N        repository index or name (default: the working copy's or git remote's)
  --json          print JSON (the default when stdout is not a terminal)
`;

export const common = {
  server: { type: 'string' },
  repo: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export interface Ctx {
  client: CairnClient;
  /** The server address as given or found (credentials kept): what transfers are handed. */
  server: string;
  repo: number;
  json: boolean;
}

/** The client for --server/--repo, or their defaults (./target.ts). */
export function context(values: Record<string, unknown>): Ctx {
  const place = placeOf(values.server, values.repo);
  return { client: new CairnClient(place.server), server: place.server, repo: place.repo!, json: values.json === true || process.stdout.isTTY !== true };
}

export function need(value: unknown, flag: string): string {
  if (typeof value !== 'string' || value === '') throw new CliUsageError(`${flag} is required`);
  return value;
}

export function one(positionals: string[], what: string): string {
  if (positionals.length !== 1) throw new CliUsageError(`give exactly one ${what}`);
  return positionals[0];
}

export const seg = (s: string) => encodeURIComponent(s);

/** A person option (--author, --reviewer): its value, else who this run acts as (cairn config set user.name, --as). */
export function person(value: unknown, flag: string): string {
  if (typeof value === 'string' && value !== '') return value;
  const who = actingAs();
  if (who === null) throw new CliUsageError(`${flag} is required (or set who you are: cairn config set user.name NAME, or cairn --as NAME ...)`);
  return who;
}

/** Options of every list command: how many rows to fetch (pages are followed as needed). */
export const LIST_OPTIONS = {
  limit: { type: 'string' },
  all: { type: 'boolean', default: false },
} as const;

export const LIST_HELP = `  --limit N       at most N rows (default 100; pages are followed as needed)
  --all           every row (follows next_cursor to the end)
`;

/** The number of rows a list command asks for: --all → every row, --limit N, else `fallback`. */
export function rowsWanted(values: Record<string, unknown>, fallback = 100): number {
  if (values.all === true) {
    if (values.limit !== undefined) throw new CliUsageError('give --limit or --all, not both');
    return Infinity;
  }
  if (values.limit === undefined) return fallback;
  const n = Number(values.limit);
  if (!Number.isInteger(n) || n < 1) throw new CliUsageError('--limit must be a positive integer');
  return n;
}

export function print(ctx: Ctx, value: unknown, readable: () => string): number {
  process.stdout.write(ctx.json ? `${JSON.stringify(value)}\n` : `${readable()}\n`);
  return 0;
}

