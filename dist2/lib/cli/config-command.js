// `cairn config`: the per-user settings of lib/client/identity.ts (who you are, and the
// header a server's ingress takes the name in), in $XDG_CONFIG_HOME/cairn/config.json.
import { CONFIG_KEYS, configPath, configValue, writeConfigValue } from '../client/identity.js';
import { CliUsageError } from './args.js';
export const CONFIG_HELP = `Usage:
  cairn config set KEY VALUE
  cairn config get KEY
  cairn config unset KEY
  cairn config path

Keys:
  user.name        who you are: the --author, --reviewer and change owner commands send when
                   those options are left out (CAIRN_USER and cairn --as NAME override it)
  identity.header  also send the name in this request header (e.g. X-Cairn-User) on every
                   request; a server believes it only from its trusted ingress (cairn serve
                   --trust-identity-from), which sets it itself (CAIRN_IDENTITY_HEADER overrides)

The file is $XDG_CONFIG_HOME/cairn/config.json (default ~/.config/cairn/config.json).
A server behind an ingress that asks for a password takes it in the address:
--server https://NAME:PASSWORD@cairn.example.com.
`;
function key(k) {
    if (!k || !CONFIG_KEYS.includes(k))
        throw new CliUsageError(`KEY must be one of ${CONFIG_KEYS.join(', ')}`);
    return k;
}
export async function configCommand(argv) {
    const [sub, ...rest] = argv;
    if (!sub || sub === '--help' || sub === '-h') {
        process.stdout.write(CONFIG_HELP);
        return sub ? 0 : 2;
    }
    switch (sub) {
        case 'set': {
            if (rest.length !== 2)
                throw new CliUsageError('cairn config set KEY VALUE');
            const k = key(rest[0]);
            const value = rest[1].trim();
            if (value === '')
                throw new CliUsageError(`${k} must be non-empty (cairn config unset ${k} removes it)`);
            writeConfigValue(k, value);
            return 0;
        }
        case 'get': {
            if (rest.length !== 1)
                throw new CliUsageError('cairn config get KEY');
            const v = configValue(key(rest[0]));
            if (v === undefined)
                return 1;
            process.stdout.write(`${v}\n`);
            return 0;
        }
        case 'unset': {
            if (rest.length !== 1)
                throw new CliUsageError('cairn config unset KEY');
            writeConfigValue(key(rest[0]), undefined);
            return 0;
        }
        case 'path':
            process.stdout.write(`${configPath()}\n`);
            return 0;
        default:
            throw new CliUsageError(`unknown config subcommand "${sub}" (set, get, unset, path)`);
    }
}
//# sourceMappingURL=config-command.js.map