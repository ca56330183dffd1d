// Who the CLI acts as, and how it says so (docs/cli.md "cairn config"; docs/api.md "People"):
// `--as NAME` (before the command), else CAIRN_USER, else `user.name` of the config file
// ($XDG_CONFIG_HOME/cairn/config.json, default ~/.config/cairn/config.json). Commands put the
// name in the body fields that name a person (--author, --reviewer, a change's owner) when the
// option is left out; with `identity.header` set (or CAIRN_IDENTITY_HEADER), every request also
// carries it in that header (a server behind a trusted ingress believes only the ingress's).
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
/** Keys `cairn config` reads and writes. */
export const CONFIG_KEYS = ['user.name', 'identity.header'];
export function configPath(env = process.env) {
    const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(os.homedir(), '.config');
    return path.join(base, 'cairn', 'config.json');
}
export function readConfig(file = configPath()) {
    let text;
    try {
        text = readFileSync(file, 'utf8');
    }
    catch (err) {
        if (err.code === 'ENOENT')
            return {};
        throw new Error(`cannot read ${file}: ${err.code ?? err.message}`);
    }
    try {
        const parsed = JSON.parse(text);
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
            throw new Error('not a JSON object');
        return parsed;
    }
    catch (err) {
        throw new Error(`${file} is not a cairn config file (${err.message}); fix or remove it`);
    }
}
export function configValue(key, config = readConfig()) {
    const [section, name] = key.split('.');
    const v = config[section]?.[name];
    return typeof v === 'string' ? v : undefined;
}
/** Set (or with `value` undefined, remove) `key`; the file is replaced whole (written beside it, then renamed). */
export function writeConfigValue(key, value, file = configPath()) {
    const config = readConfig(file);
    const [section, name] = key.split('.');
    const s = { ...(config[section] ?? {}) };
    if (value === undefined)
        delete s[name];
    else
        s[name] = value;
    config[section] = s;
    mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, file);
}
let actingAsFlag = null;
/** `--as NAME` given before the command (lib/cli/main.ts). */
export function setActingAs(name) {
    actingAsFlag = name;
}
/** The person this process acts as, or null when none is configured. */
export function actingAs() {
    if (actingAsFlag !== null)
        return actingAsFlag;
    if (process.env.CAIRN_USER)
        return process.env.CAIRN_USER;
    return configValue('user.name') ?? null;
}
/** The header every request names the person in (CAIRN_IDENTITY_HEADER, else identity.header), or null. */
export function identityHeaderName() {
    return process.env.CAIRN_IDENTITY_HEADER || configValue('identity.header') || null;
}
//# sourceMappingURL=identity.js.map