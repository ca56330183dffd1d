import { expect } from 'chai';
import path from 'node:path';
import { api, fileBytes, startTestServer } from './helpers.js';
const REGISTER = '/v1/native/repository-authorities';
describe('repository registry', () => {
    let server;
    beforeEach(async () => { server = await startTestServer(); });
    afterEach(() => server.stop());
    const registryFile = () => path.join(server.dataDir, 'registry.bin');
    it('registers from index 0 upward with 201 and the registration contract', async () => {
        const a = await api(server.url, 'POST', REGISTER, { json: { repository_name: 'alpha', namespace: 'al', policy_flags: 5 } });
        expect(a.status).to.equal(201);
        expect(a.json.contract).to.equal('svc.server.repository-registration.v1');
        expect(a.json.created).to.equal(true);
        expect(a.json.repository).to.include({ repository_index: 0, repository_name: 'alpha', namespace: 'al', policy_flags: 5, lifecycle_kind: 1, tombstoned: false });
        expect(a.json.repository.created_at_s).to.be.a('number');
        const b = await api(server.url, 'POST', REGISTER, { json: { repository_name: 'beta', namespace: '', policy_flags: 0 } });
        expect(b.json.repository.repository_index).to.equal(1);
    });
    it('replays a live namespace with the same name and flags (200, created:false)', async () => {
        await api(server.url, 'POST', REGISTER, { json: { repository_name: 'alpha', namespace: 'ns', policy_flags: 1 } });
        const before = await fileBytes(registryFile());
        const replay = await api(server.url, 'POST', REGISTER, { json: { repository_name: 'alpha', namespace: 'ns', policy_flags: 1 } });
        expect(replay.status).to.equal(200);
        expect(replay.json.created).to.equal(false);
        expect(replay.json.repository.repository_index).to.equal(0);
        expect(await fileBytes(registryFile())).to.deep.equal(before);
    });
    it('rejects a live namespace with another name or flags (409) and changes nothing', async () => {
        await api(server.url, 'POST', REGISTER, { json: { repository_name: 'alpha', namespace: 'ns', policy_flags: 1 } });
        const before = await fileBytes(registryFile());
        for (const body of [{ repository_name: 'other', namespace: 'ns', policy_flags: 1 }, { repository_name: 'alpha', namespace: 'ns', policy_flags: 2 }]) {
            const res = await api(server.url, 'POST', REGISTER, { json: body });
            expect(res.status).to.equal(409);
            expect(res.json.error).to.be.a('string');
        }
        expect(await fileBytes(registryFile())).to.deep.equal(before);
    });
    it('lets empty namespaces repeat: each registration creates a new authority', async () => {
        const a = await api(server.url, 'POST', REGISTER, { json: { repository_name: 'same', namespace: '', policy_flags: 0 } });
        const b = await api(server.url, 'POST', REGISTER, { json: { repository_name: 'same', namespace: '', policy_flags: 0 } });
        expect([a.status, b.status]).to.deep.equal([201, 201]);
        expect(b.json.repository.repository_index).to.equal(1);
    });
    const badInputs = [
        ['missing content type', 415, { raw: '{"repository_name":"x","namespace":"","policy_flags":0}', contentType: '' }],
        ['text/plain content type', 415, { raw: '{"repository_name":"x","namespace":"","policy_flags":0}', contentType: 'text/plain' }],
        ['malformed JSON', 400, { raw: '{"repository_name":', contentType: 'application/json' }],
        ['empty JSON body', 400, { raw: '', contentType: 'application/json' }],
        ['a JSON array', 422, { raw: '[]', contentType: 'application/json' }],
        ['a JSON string', 422, { raw: '"x"', contentType: 'application/json' }],
        ['missing repository_name', 422, { raw: '{"namespace":"","policy_flags":0}', contentType: 'application/json' }],
        ['repository_name of the wrong type', 422, { raw: '{"repository_name":5,"namespace":"","policy_flags":0}', contentType: 'application/json' }],
        ['policy_flags as a string', 422, { raw: '{"repository_name":"x","namespace":"","policy_flags":"1"}', contentType: 'application/json' }],
        ['policy_flags fractional', 422, { raw: '{"repository_name":"x","namespace":"","policy_flags":1.5}', contentType: 'application/json' }],
        ['an unknown field', 422, { raw: '{"repository_name":"x","namespace":"","policy_flags":0,"extra":1}', contentType: 'application/json' }],
        ['empty repository_name', 400, { raw: '{"repository_name":"","namespace":"","policy_flags":0}', contentType: 'application/json' }],
        ['namespace too long', 400, { raw: '{"repository_name":"x","namespace":"abc","policy_flags":0}', contentType: 'application/json' }],
        ['namespace with a space', 400, { raw: '{"repository_name":"x","namespace":"a ","policy_flags":0}', contentType: 'application/json' }],
        ['namespace non-ASCII', 400, { raw: '{"repository_name":"x","namespace":"é","policy_flags":0}', contentType: 'application/json' }],
        ['policy_flags 256', 400, { raw: '{"repository_name":"x","namespace":"","policy_flags":256}', contentType: 'application/json' }],
        ['policy_flags negative', 400, { raw: '{"repository_name":"x","namespace":"","policy_flags":-1}', contentType: 'application/json' }],
        ['a __proto__ key', 400, { raw: '{"repository_name":"x","namespace":"","policy_flags":0,"__proto__":{}}', contentType: 'application/json' }],
    ];
    for (const [what, status, input] of badInputs) {
        it(`rejects ${what} with ${status} and an unchanged store`, async () => {
            await api(server.url, 'POST', REGISTER, { json: { repository_name: 'seed', namespace: 's', policy_flags: 0 } });
            const before = await fileBytes(registryFile());
            const headers = {};
            if (input.contentType)
                headers['content-type'] = input.contentType;
            const res = await fetch(server.url + REGISTER, { method: 'POST', headers, body: input.raw });
            expect(res.status).to.equal(status);
            const body = await res.json();
            expect(body.error).to.be.a('string').and.not.match(/at .*\.js/);
            expect(Object.keys(body)).to.deep.equal(['error']);
            expect(await fileBytes(registryFile())).to.deep.equal(before);
            const list = await api(server.url, 'GET', REGISTER);
            expect(list.json.count).to.equal(1);
        });
    }
    it('answers 413 for a body over the 2 MiB limit and registers nothing', async () => {
        const big = JSON.stringify({ repository_name: 'x'.repeat(2 * 1024 * 1024 + 10), namespace: '', policy_flags: 0 });
        const res = await api(server.url, 'POST', REGISTER, { body: big, headers: { 'content-type': 'application/json' } });
        expect(res.status).to.equal(413);
        expect((await api(server.url, 'GET', REGISTER)).json.count).to.equal(0);
    });
    it('lists with contract, count and discovery, filtered by repository_name', async () => {
        await api(server.url, 'POST', REGISTER, { json: { repository_name: 'alpha', namespace: '', policy_flags: 0 } });
        await api(server.url, 'POST', REGISTER, { json: { repository_name: 'beta', namespace: '', policy_flags: 0 } });
        await api(server.url, 'POST', REGISTER, { json: { repository_name: 'alpha', namespace: '', policy_flags: 0 } });
        const all = await api(server.url, 'GET', REGISTER);
        expect(all.json.count).to.equal(3);
        expect(all.json.discovery).to.deep.equal({ routing_authority: false });
        expect(all.json.contract).to.be.a('string');
        const alpha = await api(server.url, 'GET', `${REGISTER}?repository_name=alpha`);
        expect(alpha.json.repositories.map((r) => r.repository_index)).to.deep.equal([0, 2]);
        expect(alpha.json.count).to.equal(2);
    });
    it('reads one repository with the authority contract and 404s an unknown index', async () => {
        await api(server.url, 'POST', REGISTER, { json: { repository_name: 'ünïcode name', namespace: 'u', policy_flags: 255 } });
        const one = await api(server.url, 'GET', `${REGISTER}/0`);
        expect(one.status).to.equal(200);
        expect(one.json.contract).to.equal('svc.server.repository-authority.v1');
        expect(one.json.repository).to.include({ repository_name: 'ünïcode name', namespace: 'u', policy_flags: 255 });
        const missing = await api(server.url, 'GET', `${REGISTER}/1`);
        expect(missing.status).to.equal(404);
    });
    it('keeps every registration across a restart', async () => {
        for (let i = 0; i < 5; i++) {
            await api(server.url, 'POST', REGISTER, { json: { repository_name: `r${i}`, namespace: i % 2 ? `n${i}` : '', policy_flags: i } });
        }
        const before = (await api(server.url, 'GET', REGISTER)).json;
        await server.stop();
        server = await startTestServer(server.dataDir);
        const after = (await api(server.url, 'GET', REGISTER)).json;
        expect(after).to.deep.equal(before);
    });
});
//# sourceMappingURL=registry.test.js.map