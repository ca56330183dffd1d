// The CLI's stored tokens (docs/cli.md "cairn login"): one per server, in
// $XDG_CONFIG_HOME/cairn/credentials.json (default ~/.config/cairn/credentials.json), mode 0600,
// written by `cairn login` and removed by `cairn logout`. CAIRN_TOKEN, when set, wins over the
// file. A token is sent as `Authorization: Bearer …` and never printed.
import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { configPath } from './identity.js';
export function credentialsPath(env = process.env) {
    return path.join(path.dirname(configPath(env)), 'credentials.json');
}
/** The server key of an address: scheme, host and port, no path, no credentials. */
export function serverKey(server) {
    const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(server.trim()) ? server.trim() : `http://${server.trim()}`;
    try {
        const url = new URL(text);
        return `${url.protocol}//${url.host}`;
    }
    catch {
        return text;
    }
}
function readFile(file) {
    try {
        const parsed = JSON.parse(readFileSync(file, 'utf8'));
        return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {};
    }
    catch {
        return {};
    }
}
/** The token to send to `server`: CAIRN_TOKEN, else the stored one, else null. */
export function tokenFor(server, env = process.env) {
    const fromEnv = env.CAIRN_TOKEN?.trim();
    if (fromEnv)
        return fromEnv;
    const c = readFile(credentialsPath(env)).servers?.[serverKey(server)];
    return c && typeof c.token === 'string' ? c.token : null;
}
export function storedCredential(server, env = process.env) {
    return readFile(credentialsPath(env)).servers?.[serverKey(server)] ?? null;
}
/** Store (or with null remove) the token of `server`; the file is written whole, mode 0600, then renamed into place. */
export function saveCredential(server, credential, env = process.env) {
    const file = credentialsPath(env);
    const data = readFile(file);
    const servers = { ...(data.servers ?? {}) };
    if (credential)
        servers[serverKey(server)] = credential;
    else
        delete servers[serverKey(server)];
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.tmp-${process.pid}`;
    writeFileSync(tmp, `${JSON.stringify({ servers }, null, 2)}\n`, { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, file);
}
/** The mode bits of the credentials file (null when absent): `cairn login` checks it is 0600. */
export function credentialsMode(env = process.env) {
    try {
        return statSync(credentialsPath(env)).mode & 0o777;
    }
    catch {
        return null;
    }
}
//# sourceMappingURL=credentials.js.map