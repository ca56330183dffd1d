// What a retirement hands out (docs/api.md "Retirement", storage-layout.md §17.2): the files its
// listing offers hold no webhook secret and no draft in clear (both sealed with the server's key,
// DATA/seal.key, which no export and no archive carries); a retired repository restored on the
// same server still delivers its webhooks, signed with the same secret, and its authors still
// have their drafts; on a server with another key, the webhook's deliveries fail saying why
// and the drafts are gone. And retirement's actions need an identified caller when the server
// names its callers, and are refused from another site's page.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { api, exportRepo, ok, register, restoreRepo, startTestServer, tempDir, until } from './helpers.js';
import { receiver, signedWith } from './webhook-receiver.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const SECRET = 'hook-Secret-9c1e5b2d8f407f3a';
const DRAFT = 'my private draft: this looks wrong to me';
const SUGGESTION = 'suggested private line';
/** A repository with a webhook (SECRET) and alice's draft (DRAFT, with a suggestion) on a change. */
async function seeded(url, name, hookUrl) {
    const repo = await register(url, name);
    const dir = path.join(tempDir(), 'tree');
    await fsp.mkdir(dir, { recursive: true });
    await fsp.writeFile(path.join(dir, 'a.txt'), 'one\ntwo\n');
    const base = (await push({ server: url, repo, line: 'main', dir, moveLine: true, progress: false })).snapshot_id;
    await fsp.writeFile(path.join(dir, 'a.txt'), 'one\nTWO\n');
    const rev = (await push({ server: url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
    expect((await api(url, 'POST', R(repo, '/webhooks'), { json: { url: hookUrl, secret: SECRET, types: ['task.*'] } })).status).to.equal(201);
    const t = (await ok(api(url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } }))).task;
    const change = (await ok(api(url, 'POST', R(repo, '/changes'), { json: { task_id: t.task_id, title: 'C', base_line: 'main' } }))).change.change_id;
    const ps = (await ok(api(url, 'POST', R(repo, `/changes/${change}/patchsets`), { json: { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' } }))).patchset.patchset_id;
    const draft = await api(url, 'POST', R(repo, `/changes/${change}/comments`), { json: { patchset_id: ps, author: 'alice', body: DRAFT, anchor: { path: 'a.txt', line: 2 }, suggestion: SUGGESTION, draft: true } });
    expect(draft.status, draft.text).to.equal(200);
    return { repo, change };
}
const draftsOf = async (url, repo, change, author) => {
    const res = await ok(api(url, 'GET', R(repo, `/changes/${change}/threads?author=${author}`)));
    return res.threads.flatMap((t) => t.comments).filter((c) => !c.published).map((c) => `${c.body}|${c.suggestion}`);
};
describe('retirement: secrets and drafts', function () {
    this.timeout(120_000);
    let s;
    let rx;
    before(async () => {
        rx = await receiver();
        s = await startTestServer(undefined, { webhookAllow: ['127.0.0.1'] });
    });
    after(async () => {
        await s.stop();
        await rx.close();
    });
    it('no file of a retirement\'s listing holds a webhook secret or a draft in clear', async () => {
        const { repo } = await seeded(s.url, 'sealed', rx.url);
        const { manifest, files } = await exportRepo(s.url, repo);
        expect(manifest.files.length).to.be.greaterThan(3);
        for (const [p, bytes] of files) {
            for (const needle of [SECRET, DRAFT, SUGGESTION])
                expect(bytes.includes(Buffer.from(needle)), `${p} holds ${needle}`).to.equal(false);
        }
        // Nothing outside the listing is served either.
        for (const p of ['../../seal.key', 'seal.key', '%2e%2e/%2e%2e/seal.key'])
            expect((await fetch(`${s.url}${R(repo, `/retirement/files/${p}`)}`)).status, p).to.equal(404);
        expect((await api(s.url, 'POST', R(repo, '/retirement/abort'))).status).to.equal(200);
        // The repository itself still reads its draft and signs with its secret.
        expect(await draftsOf(s.url, repo, (await ok(api(s.url, 'GET', R(repo, '/changes')))).changes[0].change_id, 'alice')).to.deep.equal([`${DRAFT}|${SUGGESTION}`]);
    });
    it('restored on the same server, the webhook signs with the same secret and the author keeps her drafts (private to her)', async () => {
        const { repo, change } = await seeded(s.url, 'moved', rx.url);
        const { manifest, files } = await exportRepo(s.url, repo);
        const restored = await restoreRepo(s.url, manifest, files);
        const before = rx.received.length;
        await ok(api(s.url, 'POST', R(restored, '/tasks'), { json: { title: 'after', intent: 'i' } }));
        const got = await until('a delivery from the restored repository', () => rx.received.slice(before).find((r) => JSON.parse(r.body).repository_index === restored));
        expect(signedWith(got, SECRET)).to.equal(true);
        expect(await draftsOf(s.url, restored, change, 'alice')).to.deep.equal([`${DRAFT}|${SUGGESTION}`]);
        expect(await draftsOf(s.url, restored, change, 'bob')).to.deep.equal([]);
    });
    it('restored on a server with another key: the webhook\'s deliveries fail saying why (nothing sent), the drafts are gone', async () => {
        const { repo, change } = await seeded(s.url, 'elsewhere', rx.url);
        const { manifest, files } = await exportRepo(s.url, repo);
        const other = await startTestServer(undefined, { webhookAllow: ['127.0.0.1'], webhooks: { maxAttempts: 1, backoffBaseMs: 10 } });
        try {
            const restored = await restoreRepo(other.url, manifest, files);
            const sent = rx.received.length;
            await ok(api(other.url, 'POST', R(restored, '/tasks'), { json: { title: 'after', intent: 'i' } }));
            const d = await until('the delivery to fail', async () => {
                const list = await ok(api(other.url, 'GET', R(restored, '/webhooks/webhook-1/deliveries')));
                return list.deliveries.find((x) => x.state === 'failed');
            });
            expect(d.attempts[0].error).to.match(/secret .*sealed with another server's key/);
            expect(rx.received.length).to.equal(sent);
            expect(await draftsOf(other.url, restored, change, 'alice')).to.deep.equal([]);
        }
        finally {
            await other.stop();
        }
    });
});
describe('retirement: who may', function () {
    this.timeout(60_000);
    let s;
    before(async () => { s = await startTestServer(undefined, { identity: { header: 'X-Cairn-User' } }); });
    after(async () => { await s.stop(); });
    it('with an identity header configured, starting, aborting and purging a retirement need an identified caller (403 otherwise, nothing changes)', async () => {
        const repo = await register(s.url, 'guarded');
        for (const p of ['/retirement', '/retirement/abort']) {
            const res = await api(s.url, 'POST', R(repo, p));
            expect(res.status, `${p}: ${res.text}`).to.equal(403);
            expect(res.json.error).to.match(/identified caller/);
        }
        const purge = await api(s.url, 'POST', R(repo, '/retirement/purge'), { json: { schema: 'x', state: 'complete', repo_name: 'guarded', namespace: '', exported_at_s: 0, files: [] } });
        expect(purge.status, purge.text).to.equal(403);
        expect((await ok(api(s.url, 'GET', R(repo, '/retirement')))).repository.lifecycle_kind).to.equal(1);
        const as = { headers: { 'X-Cairn-User': 'ops' } };
        expect((await api(s.url, 'POST', R(repo, '/retirement'), as)).status).to.equal(200);
        expect((await api(s.url, 'POST', R(repo, '/retirement/abort'), as)).status).to.equal(200);
    });
    it('a retirement started from another site\'s page is refused (403)', async () => {
        const repo = await register(s.url, 'cross-site');
        const res = await api(s.url, 'POST', R(repo, '/retirement'), { headers: { 'X-Cairn-User': 'ops', 'Sec-Fetch-Site': 'cross-site', Origin: 'https://evil.example' } });
        expect(res.status, res.text).to.equal(403);
    });
});
//# sourceMappingURL=retirement-secrets.test.js.map