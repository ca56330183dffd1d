// Accounts, tokens and roles over real HTTP (docs/api.md "Accounts, tokens and roles"): the
// first admin made offline, tokens by the API, grants, revocation, the failed-sign-in limit.
import { expect } from 'chai';
import path from 'node:path';
import { api, startTestServer, tempDir } from './helpers.js';
import { AccessBook } from '../lib/authority/access.js';
import { Layout } from '../lib/store/layout.js';
const AUTH = '/v1/native/repository-authorities';
const bearer = (token) => ({ authorization: `Bearer ${token}` });
async function firstAdmin(dataDir) {
    const book = AccessBook.open(new Layout(dataDir));
    try {
        await book.addAccount(null, 'root', true);
        return (await book.createToken(null, 'root', 'setup', ['read', 'write', 'admin'])).token;
    }
    finally {
        await book.close();
    }
}
describe('accounts, tokens and roles (--auth tokens)', function () {
    this.timeout(60_000);
    let server;
    let root;
    let repo;
    let bobToken;
    let bobTokenId;
    before(async () => {
        const dataDir = path.join(tempDir(), 'data');
        const { mkdirSync } = await import('node:fs');
        mkdirSync(dataDir, { recursive: true });
        root = await firstAdmin(dataDir);
        server = await startTestServer(dataDir, { auth: 'tokens' });
        const reg = await api(server.url, 'POST', AUTH, { json: { repository_name: 'team', namespace: 't1', policy_flags: 0 }, headers: bearer(root) });
        expect(reg.status, reg.text).to.be.oneOf([200, 201]);
        repo = reg.json.repository.repository_index;
        const bob = await api(server.url, 'POST', '/v1/native/accounts', { json: { name: 'bob', token: { name: 'laptop' } }, headers: bearer(root) });
        expect(bob.status, bob.text).to.equal(201);
        bobToken = bob.json.token.token;
        bobTokenId = bob.json.token.token_id;
        expect(bob.json.token.scopes).to.deep.equal(['read', 'write']);
    });
    after(async () => {
        await server?.stop();
    });
    it('keeps public routes open and asks everything else for a token (401 with a challenge)', async () => {
        expect((await api(server.url, 'GET', '/healthz')).status).to.equal(200);
        const res = await api(server.url, 'GET', `${AUTH}/${repo}`);
        expect(res.status).to.equal(401);
        expect(res.headers.get('www-authenticate')).to.match(/^Bearer/);
        expect(res.json.error).to.match(/token/);
    });
    it('refuses an account without a role (403), then lets a reader read but not write', async () => {
        const before = await api(server.url, 'GET', `${AUTH}/${repo}`, { headers: bearer(bobToken) });
        expect(before.status).to.equal(403);
        expect(before.json.error).to.match(/reader role/);
        const grant = await api(server.url, 'PATCH', `${AUTH}/${repo}/access`, { json: { grant: [{ subject: 'user:bob', role: 'reader' }] }, headers: bearer(root) });
        expect(grant.status, grant.text).to.equal(200);
        expect(grant.json.grants).to.deep.equal([{ subject: 'user:bob', role: 'reader' }]);
        expect((await api(server.url, 'GET', `${AUTH}/${repo}`, { headers: bearer(bobToken) })).status).to.equal(200);
        const write = await api(server.url, 'POST', `${AUTH}/${repo}/tasks`, { json: { title: 'x' }, headers: bearer(bobToken) });
        expect(write.status).to.equal(403);
        expect(write.json.error).to.match(/contributor role/);
        const session = await api(server.url, 'GET', `/v1/native/session?repository_index=${repo}`, { headers: bearer(bobToken) });
        expect(session.json).to.include({ account: 'bob', role: 'reader', auth_mode: 'tokens' });
        expect(session.json.may).to.include('changes.list').and.not.include('tasks.create');
    });
    it('gives a new repository the team rules (one approval from a non-author, CI required), and audits a rule change', async () => {
        const rules = await api(server.url, 'GET', `${AUTH}/${repo}/rules`, { headers: bearer(root) });
        expect(rules.status, rules.text).to.equal(200);
        expect(rules.json.rules).to.include({ required_approvals: 1, require_ci: true });
        const put = await api(server.url, 'PUT', `${AUTH}/${repo}/rules`, { json: { rules: { required_approvals: 2 } }, headers: bearer(root) });
        expect(put.status, put.text).to.equal(200);
        const audit = await api(server.url, 'GET', '/v1/native/audit', { headers: bearer(root) });
        expect(audit.json.records.at(-1)).to.include({ type: 'audit', action: 'rules.changed', actor: 'root', repository_index: repo });
    });
    it('lists only the repositories the caller may read', async () => {
        const other = await api(server.url, 'POST', AUTH, { json: { repository_name: 'secret', namespace: 's1', policy_flags: 0 }, headers: bearer(root) });
        expect(other.status).to.be.oneOf([200, 201]);
        const list = await api(server.url, 'GET', AUTH, { headers: bearer(bobToken) });
        expect(list.status).to.equal(200);
        const names = list.json.repositories.map((r) => r.repository_name);
        expect(names).to.include('team').and.not.include('secret');
    });
    it('never stores or shows a token, and a revoked token stops authenticating', async () => {
        const mine = await api(server.url, 'GET', '/v1/native/tokens', { headers: bearer(bobToken) });
        expect(mine.status).to.equal(200);
        expect(mine.text).to.not.include(bobToken);
        expect(mine.json.tokens[0].last_used_s).to.be.a('number');
        const audit = await api(server.url, 'GET', '/v1/native/audit', { headers: bearer(root) });
        expect(audit.status).to.equal(200);
        expect(audit.text).to.not.include(bobToken).and.not.include('digest');
        expect(audit.json.records.map((r) => r.type)).to.include.members(['account.added', 'token.created', 'access.changed']);
        const revoke = await api(server.url, 'DELETE', `/v1/native/tokens/${bobTokenId}`, { headers: bearer(bobToken) });
        expect(revoke.status, revoke.text).to.equal(200);
        const after = await api(server.url, 'GET', `${AUTH}/${repo}`, { headers: bearer(bobToken) });
        expect(after.status).to.equal(401);
    });
    it('limits failed sign-ins per address (429), whatever the token', async () => {
        let last = 0;
        for (let i = 0; i < 12; i++) {
            last = (await api(server.url, 'GET', `${AUTH}/${repo}`, { headers: bearer(`cairn_${'A'.repeat(43)}`) })).status;
        }
        expect(last).to.equal(429);
        // A valid token from the same address is refused too until the window passes: the limit is per source.
        expect((await api(server.url, 'GET', `${AUTH}/${repo}`, { headers: bearer(root) })).status).to.equal(429);
    });
});
//# sourceMappingURL=access.test.js.map