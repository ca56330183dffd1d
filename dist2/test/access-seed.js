// Accounts for tests of a server with an auth mode (`--auth tokens`, or a front door: the
// identity header believed from an address or with the ingress secret). Roles apply there, so a
// test that acts as named people gives them accounts before the server starts (the access book
// is opened on the data directory while no server holds it, as `cairn admin` does offline),
// and grants repository roles over the API as a seeded server admin.
import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import { AccessBook } from '../lib/authority/access.js';
import { Layout } from '../lib/store/layout.js';
import { api } from './helpers.js';
/**
 * Add `accounts` to the access book of `dataDir` (made if absent) before a server opens it;
 * returns the text of each token made, by account name.
 */
export async function seedAccounts(dataDir, accounts) {
    mkdirSync(dataDir, { recursive: true });
    const book = AccessBook.open(new Layout(dataDir));
    const tokens = {};
    try {
        for (const a of accounts) {
            await book.addAccount(null, a.name, a.serverAdmin === true);
            if (a.token)
                tokens[a.name] = (await book.createToken(null, a.name, 'test', a.token)).token;
        }
    }
    finally {
        await book.close();
    }
    return tokens;
}
/** A server admin `setup` with a token of every scope: the headers of its requests. */
export async function seedAdmin(dataDir, name = 'setup') {
    const token = (await seedAccounts(dataDir, [{ name, serverAdmin: true, token: ['read', 'write', 'admin', 'runner'] }]))[name];
    return { token, headers: { authorization: `Bearer ${token}` } };
}
/** Grant `roles` (account name → role) in repository `repo`, as the caller of `headers` (a repository or server admin). */
export async function grantRoles(url, headers, repo, roles) {
    const grant = Object.entries(roles).map(([name, role]) => ({ subject: `user:${name}`, role }));
    const res = await api(url, 'PATCH', `/v1/native/repository-authorities/${repo}/access`, { json: { grant }, headers });
    expect(res.status, `grant ${JSON.stringify(roles)}: ${res.text}`).to.equal(200);
}
/** A server address with `token` as the password of HTTP basic auth (what the client's push sends). */
export function withToken(url, token) {
    const u = new URL(url);
    u.username = 'x';
    u.password = token;
    return u.toString().replace(/\/$/, '');
}
//# sourceMappingURL=access-seed.js.map