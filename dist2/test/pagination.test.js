// Cursor pagination of every list (docs/api.md "Lists and pagination"): pages walk the whole
// list in its order, rows inserted while a client pages are never repeated and never push a row
// out, a bad limit or cursor is 400, and the CLI list commands follow the pages.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { compareKeys, decodeCursor, encodeCursor, firstAfter, takePage, walkFrom } from '../lib/domain/paging.js';
import { ROUTES } from '../lib/http/routes.js';
import { api, cli, ok, register, startTestServer, tempDir } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
/** Every row of a list, page by page (`limit` per page), with each page's size. */
async function walk(url, p, field, limit) {
    const rows = [];
    const sizes = [];
    let cursor = null;
    for (let i = 0; i < 1000; i++) {
        const page = await ok(api(url, 'GET', `${p}${p.includes('?') ? '&' : '?'}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`), p);
        expect(page.count, p).to.equal(page[field].length);
        rows.push(...page[field]);
        sizes.push(page[field].length);
        cursor = page.next_cursor;
        if (cursor === null)
            return { rows, sizes };
        expect(cursor).to.be.a('string');
    }
    throw new Error('too many pages');
}
describe('pagination: the cursor rules (domain)', () => {
    it('pages an ascending and a descending walk after a cursor; keys compare by type and element', () => {
        const keys = [1, 2, 3, 5, 8, 13];
        const scope = { list: 't', repository: 0, filter: {} };
        const asc = (after) => takePage({ limit: 2, after, scope }, walkFrom(keys.length, (i) => keys[i], (k) => k, after, 'asc'), 'asc');
        const desc = (after) => takePage({ limit: 2, after, scope }, walkFrom(keys.length, (i) => keys[i], (k) => k, after, 'desc'), 'desc');
        expect(asc(null).rows).to.deep.equal([1, 2]);
        expect(decodeCursor(scope, asc(null).next_cursor, 'int')).to.equal(2);
        expect(asc(4).rows).to.deep.equal([5, 8]);
        expect(asc(8).rows).to.deep.equal([13]);
        expect(asc(8).next_cursor).to.equal(null);
        expect(desc(null).rows).to.deep.equal([13, 8]);
        expect(desc(5).rows).to.deep.equal([3, 2]);
        expect(desc(2).rows).to.deep.equal([1]);
        expect(desc(1).rows).to.deep.equal([]);
        expect(firstAfter(keys.length, (i) => keys[i], 5)).to.equal(4);
        expect(compareKeys(['a', 2, 'x'], ['a', 10, 'a'])).to.be.lessThan(0);
        expect(compareKeys('b', 'a')).to.be.greaterThan(0);
    });
    it('refuses a cursor of another list, of another key kind, or not a cursor at all', () => {
        const tasks = { list: 'tasks', repository: 3, filter: {} };
        const c = encodeCursor(tasks, 7);
        expect(decodeCursor(tasks, c, 'int')).to.equal(7);
        const old = Buffer.from('{"l":"tasks","k":7}').toString('base64url'); // without repository and filter
        for (const [list, cursor, kind] of [['changes', c, 'int'], ['tasks', c, 'string'], ['tasks', 'not!base64', 'int'], ['tasks', Buffer.from('{"l":"tasks"}').toString('base64url'), 'int'], ['tasks', 'e30', 'int'], ['tasks', '', 'int'], ['tasks', old, 'int']]) {
            expect(() => decodeCursor({ ...tasks, list }, cursor, kind), `${list} ${cursor} ${kind}`).to.throw(/cursor is not a cursor of this list/);
        }
    });
    it('binds a cursor to its repository and filter: another repository or another filter is refused; unset values and order do not count', () => {
        const scope = { list: 'tasks', repository: 3, filter: { status: 'active', plan_id: 'plan-1' } };
        const c = encodeCursor(scope, 7);
        expect(decodeCursor({ list: 'tasks', repository: 3, filter: { plan_id: 'plan-1', status: 'active', task_id: undefined, x: null } }, c, 'int')).to.equal(7);
        expect(() => decodeCursor({ ...scope, repository: 4 }, c, 'int')).to.throw(/cursor was taken in repository 3, not in repository 4/);
        for (const filter of [{}, { status: 'active' }, { status: 'closed', plan_id: 'plan-1' }, { status: 'active', plan_id: 'plan-2' }, { status: 'active', plan_id: 'plan-1', extra: 1 }]) {
            expect(() => decodeCursor({ ...scope, filter }, c, 'int'), JSON.stringify(filter)).to.throw(/cursor was taken under other filters than this request's/);
        }
    });
});
describe('pagination over HTTP', function () {
    this.timeout(120_000);
    let s;
    let repo;
    let base;
    const revs = [];
    before(async () => {
        s = await startTestServer();
        repo = await register(s.url, 'paging');
        const dir = path.join(tempDir(), 'tree');
        const snap = async (text, line, move, parent) => {
            await fsp.rm(dir, { recursive: true, force: true });
            await fsp.mkdir(dir, { recursive: true });
            await fsp.writeFile(path.join(dir, 'a.txt'), text);
            return (await push({ server: s.url, repo, line, dir, moveLine: move, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
        };
        base = await snap('base\n', 'main', true);
        for (let i = 0; i < 5; i++)
            revs.push(await snap(`rev ${i}\n`, 'main', false, base));
        for (let i = 0; i < 7; i++)
            await snap(`line ${i}\n`, `line-${String.fromCharCode(103 - i)}`, true);
        // names whose UTF-16 and UTF-8 orders differ, and upper case before lower (byte order)
        for (const name of ['Zed', 'émile', '\u{1F600}smile', '\uFF5Ewide'])
            await snap(`${name}\n`, name, true);
    });
    after(() => s.stop());
    it('tasks, changes, patchsets, reviews, lines, plans, revisions, task queue, reviewer inbox and worker jobs each page through the whole list in its order', async () => {
        const post = (p, json) => ok(api(s.url, 'POST', R(repo, p), { json }), p);
        for (let i = 0; i < 7; i++) {
            const t = (await post('/tasks', { title: `T${i}`, intent: 'i' })).task;
            const c = (await post('/changes', { task_id: t.task_id, title: `C${i}`, base_line: 'main' })).change;
            if (i < 3) {
                for (const rev of revs)
                    await post(`/changes/${c.change_id}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' });
                await post(`/changes/${c.change_id}:requestReview`, { patchset_id: `${c.change_id}.ps-1`, reviewer_groups: [['\uFF5E', 'Alpha', '\u{1F600}'][i]], note: '' });
                for (let r = 0; r < 4; r++)
                    await post(`/changes/${c.change_id}/reviews`, { patchset_id: `${c.change_id}.ps-1`, reviewer: `r${r}`, action: 'comment', comment: 'x' });
            }
        }
        const plan = (await post('/sprints', { title: 'P', artifact_path: 'p.md', artifact_heading: 'P', artifact_body: '# P\n- [ ] a {#a}\n' })).plan;
        let head = plan.head_revision_id;
        for (let i = 0; i < 4; i++)
            head = (await post(`/sprints/${plan.plan_id}/revisions`, { artifact_path: 'p.md', artifact_heading: 'P', artifact_body: `# P\n- [ ] a {#a}\n- [ ] r${i} {#r${i}}\n`, expected_head_revision_id: head })).revision.plan_revision_id;
        for (let i = 0; i < 4; i++)
            await post('/sprints', { title: `P${i}`, artifact_path: `p${i}.md`, artifact_heading: 'P' });
        for (let i = 0; i < 5; i++)
            await post(':runCi', {});
        const lists = [
            ['/tasks', 'tasks', (r) => r.task_id],
            ['/changes', 'changes', (r) => r.change_id],
            ['/changes/change-1/patchsets', 'patchsets', (r) => r.patchset_id],
            ['/changes/change-1/reviews', 'reviews', (r) => r.review_id],
            ['/lines', 'lines', (r) => r.name],
            ['/sprints', 'plans', (r) => r.plan_id],
            [`/sprints/${plan.plan_id}/revisions`, 'revisions', (r) => r.plan_revision_id],
            ['/read/task-queue', 'tasks', (r) => r.task_id],
            ['/read/reviewer-inbox', 'rows', (r) => r.change_id],
            ['/worker-jobs', 'jobs', (r) => r.worker_job_index],
        ];
        for (const [p, field, id] of lists) {
            const whole = await ok(api(s.url, 'GET', R(repo, `${p}?limit=1000`)), p);
            expect(whole.next_cursor, p).to.equal(null);
            expect(whole[field].length, p).to.be.at.least(3);
            for (const limit of [1, 2]) {
                const paged = await walk(s.url, R(repo, p), field, limit);
                expect(paged.rows.map(id), `${p} limit ${limit}`).to.deep.equal(whole[field].map(id));
                expect(paged.sizes.slice(0, -1).every((n) => n === limit), p).to.equal(true);
            }
        }
        // the orders: newest first, number order, oldest first, by name
        const ids = async (p, field, id) => (await ok(api(s.url, 'GET', R(repo, p))))[field].map(id);
        expect(await ids('/tasks', 'tasks', (r) => r.task_id)).to.deep.equal(['task-7', 'task-6', 'task-5', 'task-4', 'task-3', 'task-2', 'task-1']);
        expect(await ids('/changes/change-1/patchsets', 'patchsets', (r) => r.patchset_number)).to.deep.equal([1, 2, 3, 4, 5]);
        expect(await ids('/lines', 'lines', (r) => r.name)).to.deep.equal(['Zed', 'line-a', 'line-b', 'line-c', 'line-d', 'line-e', 'line-f', 'line-g', 'main', 'émile', '\uFF5Ewide', '\u{1F600}smile']);
        expect(await ids('/read/reviewer-inbox', 'rows', (r) => r.reviewer_group)).to.deep.equal(['Alpha', '\uFF5E', '\u{1F600}']);
        expect(await ids(`/sprints/${plan.plan_id}/revisions`, 'revisions', (r) => r.revision_number)).to.deep.equal([5, 4, 3, 2, 1]);
        // review counts cover the whole change, whatever the page
        const reviews = await ok(api(s.url, 'GET', R(repo, '/changes/change-1/reviews?limit=1')));
        expect(reviews).to.include({ count: 1, total: 5, comments: 4 });
        // filters combine with paging
        const active = await walk(s.url, R(repo, '/tasks?status=active'), 'tasks', 2);
        expect(active.rows).to.have.length(7);
        const queued = await walk(s.url, R(repo, '/worker-jobs?state_kind=1'), 'jobs', 2);
        expect(queued.rows.map((j) => j.worker_job_index)).to.deep.equal([4, 3, 2, 1, 0]);
    });
    it('rows inserted while a client pages newest first are neither repeated nor pushed past the cursor', async () => {
        const before = (await ok(api(s.url, 'GET', R(repo, '/tasks?limit=1000')))).tasks.map((t) => t.task_id);
        const seen = [];
        let cursor = null;
        let pages = 0;
        do {
            const page = await ok(api(s.url, 'GET', R(repo, `/tasks?limit=2${cursor ? `&cursor=${cursor}` : ''}`)));
            seen.push(...page.tasks.map((t) => t.task_id));
            cursor = page.next_cursor;
            // two new tasks between every two pages
            for (let i = 0; i < 2; i++)
                await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: `new ${pages}.${i}`, intent: 'i' } }));
            pages++;
        } while (cursor !== null);
        expect(seen).to.deep.equal(before);
    });
    it('binds the cursor of every list to its repository, list and filter: one taken in another repository or under another filter is 400', async () => {
        // Another repository with the same names: a task and change-1, plan-1.
        const other = await register(s.url, 'paging-other');
        await ok(api(s.url, 'PUT', R(other, '/lines/main'), { json: {} }));
        const t = (await ok(api(s.url, 'POST', R(other, '/tasks'), { json: { title: 'T', intent: 'i' } }))).task;
        await ok(api(s.url, 'POST', R(other, '/changes'), { json: { task_id: t.task_id, title: 'C', base_line: 'main' } }));
        await ok(api(s.url, 'POST', R(other, '/sprints'), { json: { title: 'P', artifact_path: 'p.md', artifact_heading: 'P' } }));
        const page1 = async (p) => {
            const page = await ok(api(s.url, 'GET', R(repo, `${p}${p.includes('?') ? '&' : '?'}limit=1`)), p);
            expect(page.next_cursor, p).to.be.a('string');
            return page.next_cursor;
        };
        const crafted = (list, filter) => async () => encodeCursor({ list, repository: repo, filter }, 1);
        const withCursor = (p, c) => `${p}${p.includes('?') ? '&' : '?'}cursor=${c}`;
        // [route, where the cursor comes from, the same list and filter again (accepted), other filters of the same list]
        const cases = [
            ['/tasks', '/tasks?status=active', () => page1('/tasks?status=active'), ['/tasks?status=active'], ['/tasks', '/tasks?status=active&plan_id=plan-1', '/tasks?status=completed']],
            ['/changes', '/changes', () => page1('/changes'), ['/changes'], ['/changes?status=draft', '/changes?task_id=task-1']],
            ['/changes', '/changes?task_id=task-1', crafted('changes', { task_id: 'task-1' }), ['/changes?task_id=1'], ['/changes?task_id=task-2', '/changes']],
            ['/changes/{change_ref}/patchsets', '/changes/change-1/patchsets', () => page1('/changes/change-1/patchsets'), ['/changes/task-1.change-1/patchsets'], ['/changes/change-2/patchsets']],
            ['/changes/{change_ref}/reviews', '/changes/change-1/reviews', () => page1('/changes/change-1/reviews'), ['/changes/task-1.change-1/reviews'], ['/changes/change-2/reviews']],
            ['/lines', '/lines', () => page1('/lines'), ['/lines'], []],
            ['/sprints', '/sprints', () => page1('/sprints'), ['/sprints'], ['/sprints?artifact_path=p.md']],
            ['/sprints/{plan_id}/revisions', '/sprints/plan-1/revisions', () => page1('/sprints/plan-1/revisions'), ['/sprints/plan-1/revisions'], ['/sprints/plan-2/revisions']],
            ['/read/task-queue', '/read/task-queue', () => page1('/read/task-queue'), ['/read/task-queue'], ['/read/task-queue?status=active']],
            ['/read/reviewer-inbox', '/read/reviewer-inbox', () => page1('/read/reviewer-inbox'), ['/read/reviewer-inbox'], ['/read/reviewer-inbox?reviewer_group=Alpha']],
            ['/worker-jobs', '/worker-jobs', () => page1('/worker-jobs'), ['/worker-jobs'], ['/worker-jobs?state_kind=1']],
            ['/read/changes/{change_ref}/lands', '/read/changes/change-1/lands', crafted('change-lands', { change_id: 'change-1' }), ['/read/changes/task-1.change-1/lands'], ['/read/changes/change-2/lands']],
            ['/changes/{change_ref}/threads', '/changes/change-1/threads', crafted('comment-threads', { change_id: 'change-1' }), ['/changes/task-1.change-1/threads'], ['/changes/change-2/threads', '/changes/change-1/threads?resolved=false']],
            ['/webhooks', '/webhooks', crafted('webhooks', {}), ['/webhooks'], []],
            // No such webhook: the cursor is checked first (400), the same list and filter then answer 404.
            ['/webhooks/{webhook_id}/deliveries', '/webhooks/hook-1/deliveries?state=failed', crafted('webhook-deliveries', { webhook_id: 'hook-1', state: 'failed' }), [], ['/webhooks/hook-1/deliveries', '/webhooks/hook-2/deliveries?state=failed']],
        ];
        const paged = ROUTES.filter((r) => r.paged).map((r) => r.template.replace('/v1/native/repository-authorities/{repository_index}', ''));
        expect([...new Set(cases.map((c) => c[0]))].sort()).to.deep.equal([...paged].sort());
        for (const [, from, take, same, others] of cases) {
            const cursor = await take();
            for (const p of same)
                expect((await api(s.url, 'GET', R(repo, withCursor(p, cursor)))).status, `${from} → ${p}`).to.equal(200);
            const elsewhere = await api(s.url, 'GET', R(other, withCursor(from, cursor)));
            expect(elsewhere.status, `${from} in another repository: ${elsewhere.text}`).to.equal(400);
            expect(elsewhere.json.error).to.match(new RegExp(`cursor was taken in repository ${repo}, not in repository ${other}`));
            for (const p of others) {
                const res = await api(s.url, 'GET', R(repo, withCursor(p, cursor)));
                expect(res.status, `${from} → ${p}: ${res.text}`).to.equal(400);
                expect(res.json.error, `${from} → ${p}`).to.match(/cursor was taken under other filters than this request's/);
            }
        }
        expect((await api(s.url, 'GET', R(repo, withCursor('/webhooks/hook-1/deliveries?state=failed', await crafted('webhook-deliveries', { webhook_id: 'hook-1', state: 'failed' })())))).status).to.equal(404);
    });
    it('a bad limit or cursor is 400 and names the fix; the default page is 100 rows', async () => {
        const scope = (list) => ({ list, repository: repo, filter: {} });
        for (const q of ['limit=0', 'limit=1001', 'limit=abc', 'limit=-1', 'limit=1&limit=2', 'cursor=zzz', `cursor=${encodeCursor(scope('changes'), 1)}`, `cursor=${encodeCursor(scope('tasks'), 'x')}`, 'cursor=']) {
            const res = await api(s.url, 'GET', R(repo, `/tasks?${q}`));
            expect(res.status, q).to.equal(400);
            expect(res.json.error, q).to.be.a('string');
        }
        expect((await api(s.url, 'GET', R(repo, `/worker-jobs?cursor=${encodeCursor(scope('tasks'), 1)}`))).status).to.equal(400);
        const made = (await ok(api(s.url, 'GET', R(repo, '/tasks?limit=1000')))).tasks.length;
        for (let i = made; i < 105; i++)
            await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: `bulk ${i}`, intent: 'i' } }));
        const first = await ok(api(s.url, 'GET', R(repo, '/tasks')));
        expect(first.count).to.equal(100);
        expect(first.next_cursor).to.be.a('string');
        const rest = await ok(api(s.url, 'GET', R(repo, `/tasks?cursor=${first.next_cursor}`)));
        expect(rest.count).to.equal(5);
        expect(rest.next_cursor).to.equal(null);
        // worker jobs keep their specified default of 50
        expect((await ok(api(s.url, 'GET', R(repo, '/worker-jobs')))).limit).to.equal(50);
    });
    it('cairn task list follows pages: --limit N rows, --all every row, with next_cursor in JSON', async () => {
        const total = (await ok(api(s.url, 'GET', R(repo, '/tasks?limit=1000')))).tasks.length;
        const args = ['task', 'list', '--server', s.url, '--repo', String(repo), '--json'];
        const three = JSON.parse((await cli([...args, '--limit', '3'])).stdout);
        expect(three.tasks).to.have.length(3);
        expect(three.next_cursor).to.be.a('string');
        const all = JSON.parse((await cli([...args, '--all'])).stdout);
        expect(all.tasks).to.have.length(total);
        expect(all.count).to.equal(total);
        expect(all.next_cursor).to.equal(null);
        const usage = await cli([...args, '--all', '--limit', '2']);
        expect(usage.code).to.equal(2);
    });
});
//# sourceMappingURL=pagination.test.js.map