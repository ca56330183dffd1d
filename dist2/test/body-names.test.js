// Names and titles hold no control character (docs/api.md "Names and titles"): one rule
// (lib/domain/text.ts) for every body field that names a person or group (`author`, `owner`,
// `reviewer`, `reviewers`, `reviewer_groups`, `requested_by`, `user`), the `?author=` query and
// the identity header, and for every title (tasks, changes, plans, task-start, history
// promotion). Over real HTTP, table-driven: each route and field refuses each kind of control
// character with a 400 naming the field, and the refusal changes no file and no read model;
// longer texts (intents, comment bodies) keep their newlines and tabs.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { api, expectError, ok, register, repoFiles, startTestServer, tempDir } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
/** One character of each kind the rule refuses: C0 (NUL, BEL, ESC, tab, newline, CR), DEL, C1 (U+0085 NEL, U+009F). */
const CONTROLS = [
    ['NUL', '\u0000'], ['BEL', '\u0007'], ['ESC', '\u001b'], ['tab', '\t'], ['newline', '\n'], ['CR', '\r'],
    ['DEL', '\u007f'], ['NEL (C1)', '\u0085'], ['APC (C1)', '\u009f'],
];
describe('names and titles: one rule against control characters', function () {
    this.timeout(180_000);
    let s;
    let repo;
    let fx;
    async function storeState() {
        return {
            files: await repoFiles(path.join(s.dataDir, 'repositories', String(repo))),
            tasks: (await api(s.url, 'GET', R(repo, '/tasks'))).json,
            changes: (await api(s.url, 'GET', R(repo, '/changes'))).json,
            plans: (await api(s.url, 'GET', R(repo, '/sprints'))).json,
            threads: (await api(s.url, 'GET', R(repo, `/changes/${fx.change}/threads`))).json,
        };
    }
    const post = (rest, json) => ok(api(s.url, 'POST', R(repo, rest), { json }), rest);
    before(async () => {
        s = await startTestServer();
        repo = await register(s.url, 'names');
        const dir = path.join(tempDir(), 'tree');
        const snap = async (body, moveLine, parent) => {
            await fsp.rm(dir, { recursive: true, force: true });
            await fsp.mkdir(dir, { recursive: true });
            await fsp.writeFile(path.join(dir, 'a.txt'), body);
            return (await push({ server: s.url, repo, line: 'main', dir, moveLine, progress: false, parent })).snapshot_id;
        };
        const base = await snap('base\n', true);
        const rev1 = await snap('one\n', false, base);
        const plan = await post('/sprints', { title: 'Sprint', artifact_path: 'docs/s.md', artifact_heading: 'Sprint', artifact_body: '# Sprint\n- [ ] a {#a}\n' });
        const task = (await post('/tasks', { title: 'T', intent: 'i' })).task.task_id;
        const change = (await post('/changes', { task_id: task, title: 'C', base_line: 'main' })).change.change_id;
        const ps = (await post(`/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev1, summary: 's', author_mode: 'human_only' })).patchset.patchset_id;
        const open = (await post(`/changes/${change}/comments`, { patchset_id: ps, author: 'bob', body: 'why?' })).thread_id;
        const resolved = (await post(`/changes/${change}/comments`, { patchset_id: ps, author: 'bob', body: 'ok', resolution: 'resolved' })).thread_id;
        const draft = (await post(`/changes/${change}/comments`, { patchset_id: ps, author: 'bob', body: 'draft', draft: true })).comment.comment_id;
        fx = { base, rev1, task, change, ps, open, resolved, draft, plan: plan.plan.plan_id, revision: plan.revision.plan_revision_id };
    });
    after(() => s.stop());
    const body = (method, rest, make) => (bad) => api(s.url, method, R(repo, rest()), { json: make(bad) });
    const planPayload = { artifact_path: 'docs/t.md', artifact_heading: 'T', artifact_body: '# T\n- [ ] x {#x}\n' };
    const startBody = (taskTitle, changeTitle) => ({
        contract: 'task-start-atomic/v1', idempotency_key: 'names', plan_item_ref: 'a', plan: { action: 'existing', plan_id: fx.plan, plan_revision_id: fx.revision },
        task: { title: taskTitle, intent: 'i' }, change: { title: changeTitle, base_line: 'main' },
    });
    const promotionBody = (taskTitle, changeTitle) => ({
        contract: 'history-promotion-prepare/v1', idempotency_key: 'names', target_line: 'main', base_snapshot_id: fx.base, revision_snapshot_id: fx.rev1, author_mode: 'human_only', summary: 's',
        entries: [{
                local_task_id: 'task-1', local_change_id: 'change-1', local_change_ref: 'task-1.change-1',
                task: { title: taskTitle, intent: 'i' }, change: { title: changeTitle, base_line: 'main', fork_snapshot_id: fx.base },
                pre_land_target_snapshot_id: fx.base, landed_snapshot_id: fx.rev1, landed_at_s: 1, snapshots: [{ snapshot_id: fx.rev1, created_at_s: 1 }],
            }],
    });
    const rows = [
        { route: 'tasks.create', field: 'title', kind: 'title', send: body('POST', () => '/tasks', (v) => ({ title: v, intent: 'i' })) },
        { route: 'tasks.start', field: 'task.title', kind: 'title', send: body('POST', () => '/task-start', (v) => startBody(v, 'c')) },
        { route: 'tasks.start', field: 'change.title', kind: 'title', send: body('POST', () => '/task-start', (v) => startBody('t', v)) },
        { route: 'changes.create', field: 'title', kind: 'title', send: body('POST', () => '/changes', (v) => ({ task_id: fx.task, title: v, base_line: 'main' })) },
        { route: 'changes.create', field: 'owner', kind: 'name', send: body('POST', () => '/changes', (v) => ({ task_id: fx.task, title: 'c', base_line: 'main', owner: v })) },
        { route: 'changes.requestReview', field: 'reviewer_groups[0]', kind: 'name', send: body('POST', () => `/changes/${fx.change}:requestReview`, (v) => ({ patchset_id: fx.ps, reviewer_groups: [v] })) },
        { route: 'changes.requestReview', field: 'reviewers[1]', kind: 'name', send: body('POST', () => `/changes/${fx.change}:requestReview`, (v) => ({ patchset_id: fx.ps, reviewers: ['ann', v] })) },
        { route: 'changes.requestReview', field: 'requested_by', kind: 'name', send: body('POST', () => `/changes/${fx.change}:requestReview`, (v) => ({ patchset_id: fx.ps, reviewers: ['ann'], requested_by: v })) },
        { route: 'patchsets.create', field: 'author', kind: 'name', send: body('POST', () => `/changes/${fx.change}/patchsets`, (v) => ({ base_snapshot_id: fx.base, revision_snapshot_id: fx.rev1, summary: 's', author_mode: 'human_only', author: v })) },
        { route: 'reviews.create', field: 'reviewer', kind: 'name', send: body('POST', () => `/changes/${fx.change}/reviews`, (v) => ({ patchset_id: fx.ps, reviewer: v, action: 'approve' })) },
        { route: 'historyPromotion.prepare', field: 'entries[0].task.title', kind: 'title', send: body('POST', () => '/history-promotion:prepare', (v) => promotionBody(v, 'c')) },
        { route: 'historyPromotion.prepare', field: 'entries[0].change.title', kind: 'title', send: body('POST', () => '/history-promotion:prepare', (v) => promotionBody('t', v)) },
        { route: 'plans.create', field: 'title', kind: 'title', send: body('POST', () => '/sprints', (v) => ({ ...planPayload, title: v })) },
        { route: 'plans.revisions.create', field: 'title', kind: 'title', send: body('POST', () => `/sprints/${fx.plan}/revisions`, (v) => ({ ...planPayload, title: v })) },
        { route: 'comments.create', field: 'author', kind: 'name', send: body('POST', () => `/changes/${fx.change}/comments`, (v) => ({ patchset_id: fx.ps, author: v, body: 'b' })) },
        { route: 'comments.edit', field: 'author', kind: 'name', send: body('PATCH', () => `/changes/${fx.change}/comments/${fx.draft}`, (v) => ({ author: v, body: 'x' })) },
        { route: 'comments.delete', field: 'author (query)', kind: 'name', send: (v) => api(s.url, 'DELETE', R(repo, `/changes/${fx.change}/comments/${fx.draft}?author=${encodeURIComponent(v)}`)) },
        { route: 'comments.resolve', field: 'author', kind: 'name', send: body('POST', () => `/changes/${fx.change}/threads/${fx.open}:resolve`, (v) => ({ author: v })) },
        { route: 'comments.reopen', field: 'author', kind: 'name', send: body('POST', () => `/changes/${fx.change}/threads/${fx.resolved}:reopen`, (v) => ({ author: v })) },
        { route: 'comments.applySuggestions', field: 'author', kind: 'name', send: body('POST', () => `/changes/${fx.change}/patchsets:applySuggestions`, (v) => ({ author: v, comment_ids: [fx.open] })) },
        { route: 'comments.publish', field: 'author', kind: 'name', send: body('POST', () => `/changes/${fx.change}/reviews:publish`, (v) => ({ author: v, patchset_id: fx.ps })) },
        { route: 'viewed.put', field: 'user', kind: 'name', send: body('PUT', () => `/changes/${fx.change}/viewed`, (v) => ({ user: v, patchset_id: fx.ps, path: 'a.txt', viewed: true })) },
    ];
    for (const row of rows) {
        it(`${row.route}: ${row.field} with a control character is 400 naming it, and nothing changes`, async () => {
            for (const [what, c] of CONTROLS) {
                const before = await storeState();
                const res = await row.send(`ann${c}bob`);
                expectError(res, 400, `${row.route} ${row.field} with ${what}`);
                expect(res.json.error, `${row.route} ${row.field} with ${what}`).to.include(row.field.replace(' (query)', '')).and.to.match(/control characters/);
                expect(await storeState(), `${row.route} ${row.field} with ${what}: the repository changed`).to.deep.equal(before);
            }
        });
    }
    it('names and titles of other characters pass; multi-line texts keep their newlines and tabs', async () => {
        const t = (await post('/tasks', { title: 'Zoë’s “task” — ünïcödé 日本', intent: 'line one\n\tline two' })).task;
        expect(t.title).to.equal('Zoë’s “task” — ünïcödé 日本');
        expect(t.intent).to.equal('line one\n\tline two');
        const c = (await post('/changes', { task_id: t.task_id, title: 'C', base_line: 'main', owner: 'Łukasz Żółw' })).change;
        expect(c.owner).to.equal('Łukasz Żółw');
        const cm = await post(`/changes/${fx.change}/comments`, { patchset_id: fx.ps, author: 'José', body: 'a\n\tb' });
        expect(cm.comment.body).to.equal('a\n\tb');
    });
});
describe('names: the identity header follows the same rule', function () {
    this.timeout(60_000);
    const H = 'X-Cairn-User';
    let s;
    let repo;
    let task;
    before(async () => {
        s = await startTestServer(undefined, { identity: { header: H } });
        repo = await register(s.url, 'header');
        const dir = path.join(tempDir(), 'tree');
        await fsp.mkdir(dir, { recursive: true });
        await fsp.writeFile(path.join(dir, 'a.txt'), 'a\n');
        await push({ server: s.url, repo, line: 'main', dir, moveLine: true, progress: false });
        task = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } }))).task.task_id;
    });
    after(() => s.stop());
    const create = (headerValue) => api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: task, title: 'c', base_line: 'main' }, headers: { [H]: headerValue } });
    it('a header value with a C0, DEL or C1 control character is 400 (naming the header, not the value), and nothing is written', async () => {
        // A tab, and a C1 character (its Latin-1 byte 0x80–0x9F): cairn refuses them, as in a body.
        for (const [what, c] of [['tab', '\t'], ['NEL (C1)', '\u0085'], ['APC (C1)', '\u009f']]) {
            const res = await create(`ann${c}bob`);
            expectError(res, 400, `header with ${what}`);
            expect(res.json.error, what).to.include(H).and.to.match(/control characters/).and.not.to.include('ann');
        }
        // C0 and DEL bytes (fetch will not send them): Node's parser refuses the request with 400
        // before cairn sees it, so the header's rule and the body's agree there too.
        for (const [what, c] of [['BEL', '\u0007'], ['ESC', '\u001b'], ['DEL', '\u007f'], ['NUL', '\u0000']]) {
            const json = JSON.stringify({ task_id: task, title: 'c', base_line: 'main' });
            const head = `POST ${R(repo, '/changes')} HTTP/1.1\r\nHost: ${new URL(s.url).host}\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\n${H}: ann${c}bob\r\nConnection: close\r\n\r\n`;
            const answer = await new Promise((resolve, reject) => {
                const sock = net.connect(Number(new URL(s.url).port), '127.0.0.1');
                let got = '';
                sock.on('data', (d) => { got += d.toString('latin1'); });
                sock.on('end', () => resolve(got));
                sock.on('error', reject);
                sock.end(Buffer.from(head + json, 'latin1'));
            });
            expect(answer.split('\r\n')[0], what).to.equal('HTTP/1.1 400 Bad Request');
        }
        expect((await ok(api(s.url, 'GET', R(repo, '/changes')))).changes).to.have.length(0);
    });
    it('a header of UTF-8 bytes (what an ingress sends) names the person by the same name a body would', async () => {
        const name = 'Łukasz Дмитрий';
        const asBytes = Buffer.from(name, 'utf8').toString('latin1');
        const made = await ok(create(asBytes));
        expect(made.change.owner).to.equal(name);
        // Latin-1 that is not UTF-8 (Node's own client sending "José") is read as Latin-1.
        expect((await ok(create('José'))).change.owner).to.equal('José');
    });
});
//# sourceMappingURL=body-names.test.js.map