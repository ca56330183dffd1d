// What every workflow command shares: the common options, the client context built from
// them, argument helpers and the output rule (one JSON object with --json or when stdout is not
// a terminal; a short readable form on a terminal).
import { CairnClient } from '../client/http.js';
import { actingAs } from '../client/identity.js';
import { parseU32 } from '../domain/repository.js';
import { CliUsageError } from './args.js';
export const COMMON = `Common options:
  --server URL    cairn server, e.g. http://127.0.0.1:8088
  --repo N        repository index
  --json          print JSON (the default when stdout is not a terminal)
`;
export const common = {
    server: { type: 'string' },
    repo: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
};
export function context(values) {
    if (typeof values.server !== 'string' || values.server === '')
        throw new CliUsageError('--server is required');
    if (typeof values.repo !== 'string')
        throw new CliUsageError('--repo is required');
    let repo;
    try {
        repo = parseU32(values.repo, '--repo');
    }
    catch {
        throw new CliUsageError('--repo must be a repository index (unsigned integer)');
    }
    return { client: new CairnClient(values.server), repo, json: values.json === true || process.stdout.isTTY !== true };
}
export function need(value, flag) {
    if (typeof value !== 'string' || value === '')
        throw new CliUsageError(`${flag} is required`);
    return value;
}
export function one(positionals, what) {
    if (positionals.length !== 1)
        throw new CliUsageError(`give exactly one ${what}`);
    return positionals[0];
}
export const seg = (s) => encodeURIComponent(s);
/** A person option (--author, --reviewer): its value, else who this run acts as (cairn config set user.name, --as). */
export function person(value, flag) {
    if (typeof value === 'string' && value !== '')
        return value;
    const who = actingAs();
    if (who === null)
        throw new CliUsageError(`${flag} is required (or set who you are: cairn config set user.name NAME, or cairn --as NAME ...)`);
    return who;
}
/** Options of every list command: how many rows to fetch (pages are followed as needed). */
export const LIST_OPTIONS = {
    limit: { type: 'string' },
    all: { type: 'boolean', default: false },
};
export const LIST_HELP = `  --limit N       at most N rows (default 100; pages are followed as needed)
  --all           every row (follows next_cursor to the end)
`;
/** The number of rows a list command asks for: --all → every row, --limit N, else `fallback`. */
export function rowsWanted(values, fallback = 100) {
    if (values.all === true) {
        if (values.limit !== undefined)
            throw new CliUsageError('give --limit or --all, not both');
        return Infinity;
    }
    if (values.limit === undefined)
        return fallback;
    const n = Number(values.limit);
    if (!Number.isInteger(n) || n < 1)
        throw new CliUsageError('--limit must be a positive integer');
    return n;
}
export function print(ctx, value, readable) {
    process.stdout.write(ctx.json ? `${JSON.stringify(value)}\n` : `${readable()}\n`);
    return 0;
}
//# sourceMappingURL=command-context.js.map