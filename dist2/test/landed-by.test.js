// Who asked for a land (docs/git.md "Who pushed", docs/api.md "Lands"): the identified caller of
// `:submit` and task-land, or the identified enqueuer of a land-queue entry, is the land's
// `landed_by` (null when the request named no one), and a commit the export writes for a land
// names them in a `Landed-by:` trailer. Over real HTTP, with the identity header believed only
// with the ingress secret, as behind a front door. A front door makes roles apply: alice (a
// server admin with a token) sets each repository up and grants the people who land the
// maintainer role. Every request through it names someone, so an unidentified land is seen
// on a server without an auth mode (`plain`).
import { expect } from 'chai';
import { LandDesk, replayedResult } from '../lib/authority/workflow/lands.js';
import path from 'node:path';
import { api, ok, startTestServer, tempDir } from './helpers.js';
import { grantRoles, seedAccounts, seedAdmin, withToken } from './access-seed.js';
import { Fixture, R } from './land-queue-fixture.js';
const H = 'X-Remote-User';
const SECRET = 'a-long-enough-shared-secret';
const BASE = { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' };
const PASS = () => ({ refusal: null, policy_decision_id: null });
describe('landed_by: who asked for a land, and the Landed-by trailer', function () {
    this.timeout(120_000);
    let s;
    let plain;
    let alice;
    const PEOPLE = ['carol', 'dave', 'erin', 'frank', 'grace'];
    before(async () => {
        const dataDir = path.join(tempDir(), 'data');
        alice = await seedAdmin(dataDir, 'alice');
        await seedAccounts(dataDir, PEOPLE.map((name) => ({ name })));
        const queue = { depth: 4, retries: 0, batch: 1, stall_s: 3600 };
        s = await startTestServer(dataDir, { identity: { header: H, secret: SECRET }, gitRefresh: false, queue });
        plain = await startTestServer(undefined, { gitRefresh: false, queue });
    });
    after(async () => {
        await s?.stop();
        await plain?.stop();
    });
    /** Headers of a request the ingress sends for `who` (none: an unidentified request). */
    const as = (who) => (who ? { [H]: who, 'X-Cairn-Ingress-Secret': SECRET } : {});
    const post = (f, rest, json, who) => api(f.s.url, 'POST', R(f.repo, rest), { json, headers: as(who) });
    /** A repository on `on` set up by alice (on the front-door server, the people may land there). */
    async function fresh(name, gates, on = s) {
        const headers = on === s ? alice.headers : {};
        const reg = await api(on.url, 'POST', '/v1/native/repository-authorities', { json: { repository_name: name, namespace: '', policy_flags: 0 }, headers });
        expect(reg.status, reg.text).to.be.oneOf([200, 201]);
        const repo = reg.json.repository.repository_index;
        if (on === s)
            await grantRoles(s.url, alice.headers, repo, Object.fromEntries(PEOPLE.map((p) => [p, 'maintainer'])));
        const f = new Fixture(on, repo, headers, on === s ? withToken(s.url, alice.token) : on.url);
        if (gates === 'pass') {
            const a = await f.authority();
            a.lands = new LandDesk(a.store, a.workflow, PASS);
        }
        return { f, base: await f.snap(BASE, 'main', true) };
    }
    /** The message of the commit the export gives the land's landed snapshot. */
    async function exportedMessage(f, land) {
        await ok(f.post('/git/exports', { line: land.target_line }), 'export');
        const c = (await ok(f.get(`/git/snapshots/${land.landed_snapshot_id}`), 'git commit')).git_commit;
        expect(c.origin).to.equal('exported');
        return c.message;
    }
    it('a merge land by carol records landed_by carol and its exported commit says Landed-by: carol; a direct land by dave, Landed-by: dave', async () => {
        const { f, base } = await fresh('landed-by-submit', 'pass');
        const c1 = await f.change(base, { ...BASE, 'a.txt': 'A\n' });
        const c2 = await f.change(base, { ...BASE, 'b.txt': 'B\n' });
        const landed = await ok(post(f, `/changes/${c1.ref}:submit`, { mode: 'merge' }, 'carol'), 'land c1');
        expect(landed.land).to.include({ status: 'landed', line_action: 'merge', landed_by: 'carol' });
        expect((await ok(f.get(`/lands/${landed.land.land_id}`))).land.landed_by).to.equal('carol');
        expect((await f.landsOf(c1.change))[0].landed_by).to.equal('carol');
        const merge = await exportedMessage(f, landed.land);
        expect(merge).to.match(new RegExp(`\\nCairn-Land: ${landed.land.land_id}\\nCairn-Merge-Revision: [0-9a-f]{64}\\nReviewed-by: alice <alice@cairn\\.invalid>\\nLanded-by: carol <carol@cairn\\.invalid>\\n$`));
        // A direct land onto the moved line: one parent (a rebase of the change onto the head).
        const direct = await ok(post(f, `/changes/${c2.ref}:submit`, { mode: 'direct' }, 'dave'), 'land c2');
        expect(direct.land).to.include({ status: 'landed', line_action: 'direct', landed_by: 'dave' });
        expect(await exportedMessage(f, direct.land)).to.match(new RegExp(`\\nCairn-Land: ${direct.land.land_id}\\nReviewed-by: alice <alice@cairn\\.invalid>\\nLanded-by: dave <dave@cairn\\.invalid>\\n$`));
    });
    it('task-land records its caller (and a replay answers as recorded); a refused land records who asked too', async () => {
        const { f, base } = await fresh('landed-by-task-land', 'pass');
        const c = await f.change(base, { ...BASE, 'c.txt': 'C\n' });
        const wrong = await post(f, `/changes/${c.ref}:submit`, { mode: 'ff-only', expected_head_snapshot_id: c.revision }, 'erin');
        expect(wrong.status, wrong.text).to.equal(409);
        expect(wrong.json.land).to.include({ status: 'rejected', failure_kind: 'stale_base', landed_by: 'erin' });
        const body = { contract: 'task-land-atomic/v1', idempotency_key: 'tl-1', task_or_change_ref: c.ref, mode: 'merge' };
        const first = await ok(post(f, '/task-land', body, 'frank'), 'task-land');
        expect(first.land).to.include({ status: 'landed', landed_by: 'frank' });
        const again = await ok(post(f, '/task-land', body, 'frank'), 'replay');
        expect(again).to.include({ replay: true });
        expect(again.land.landed_by).to.equal('frank');
        expect(await exportedMessage(f, first.land)).to.include('\nLanded-by: frank <frank@cairn.invalid>\n');
    });
    it('a task-land result recorded before lands kept who asked replays with landed_by null', () => {
        const stored = { contract: 'task-land-atomic/v1', replay: false, land: { land_id: 'land-1', status: 'landed', attempts: 2 }, task: {}, change: {}, patchset: {} };
        expect(replayedResult(stored, 3).land).to.deep.equal({ land_id: 'land-1', status: 'landed', attempts: 2, landed_by: null, bypassed_by: null, bypassed: [], repository_index: 3 });
    });
    it('an unidentified land has landed_by null (a body cannot name one) and its exported commit no Landed-by trailer', async () => {
        const { f, base } = await fresh('landed-by-nobody', 'pass', plain);
        const c = await f.change(base, { ...BASE, 'a.txt': 'A\n' });
        const landed = await ok(post(f, `/changes/${c.ref}:submit`, { mode: 'merge', landed_by: 'mallory' }), 'land');
        expect(landed.land).to.include({ status: 'landed', landed_by: null });
        expect((await ok(f.get(`/lands/${landed.land.land_id}`))).land.landed_by).to.equal(null);
        const message = await exportedMessage(f, landed.land);
        expect(message).to.match(/\nCairn-Merge-Revision: [0-9a-f]{64}\nReviewed-by: alice <alice@cairn\.invalid>\n$/);
        expect(message).to.not.include('Landed-by');
    });
    it('the land queue: the enqueuer is the entry\'s enqueued_by and the landed_by of the land it makes, named in the exported commit; an unidentified enqueue, null and no trailer', async () => {
        const { f, base } = await fresh('landed-by-queue', 'real');
        const c1 = await f.change(base, { ...BASE, 'a.txt': 'A\n' });
        const queued = await post(f, '/land-queue', { change_ref: c1.ref, mode: 'merge' }, 'grace');
        expect(queued.status, queued.text).to.equal(201);
        expect(queued.json.entry.enqueued_by).to.equal('grace');
        const e1 = await f.entry(queued.json.entry.entry_id);
        await f.runJob(e1.speculation.worker_job_indexes[0], 'pass');
        const done1 = await f.entry(e1.entry_id);
        expect(done1).to.include({ state: 'landed', enqueued_by: 'grace' });
        const land1 = (await ok(f.get(`/lands/${done1.land_id}`))).land;
        expect(land1).to.include({ status: 'landed', landed_by: 'grace', land_queue_entry_id: e1.entry_id });
        expect(await exportedMessage(f, land1)).to.match(/\nReviewed-by: alice <alice@cairn\.invalid>\nLanded-by: grace <grace@cairn\.invalid>\n$/);
        // Unidentified: on the server without an auth mode.
        const { f: g, base: base2 } = await fresh('landed-by-queue-nobody', 'real', plain);
        const c2 = await g.change(base2, { ...BASE, 'b.txt': 'B\n' });
        const anon = await post(g, '/land-queue', { change_ref: c2.ref, mode: 'merge' });
        expect(anon.status, anon.text).to.equal(201);
        expect(anon.json.entry.enqueued_by).to.equal(null);
        const e2 = await g.entry(anon.json.entry.entry_id);
        await g.runJob(e2.speculation.worker_job_indexes[0], 'pass');
        const done2 = await g.entry(e2.entry_id);
        expect(done2.state).to.equal('landed');
        const land2 = (await ok(g.get(`/lands/${done2.land_id}`))).land;
        expect(land2.landed_by).to.equal(null);
        expect(await exportedMessage(g, land2)).to.not.include('Landed-by');
    });
});
//# sourceMappingURL=landed-by.test.js.map