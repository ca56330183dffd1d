// Cursor pagination of every list (docs/api.md "Lists and pagination"): pages walk the whole
// list in its order, rows inserted while a client pages are never repeated and never push a row
// out, a bad limit or cursor is 400, and the CLI list commands follow the pages.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { compareKeys, decodeCursor, encodeCursor, firstAfter, takePage, walkFrom } from '../lib/domain/paging.js';
import { api, cli, ok, register, startTestServer, tempDir, type TestServer } from './helpers.js';

type Json = Record<string, any>;
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;

/** Every row of a list, page by page (`limit` per page), with each page's size. */
async function walk(url: string, p: string, field: string, limit: number): Promise<{ rows: Json[]; sizes: number[] }> {
  const rows: Json[] = [];
  const sizes: number[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const page: Json = await ok(api(url, 'GET', `${p}${p.includes('?') ? '&' : '?'}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`), p);
    expect(page.count, p).to.equal(page[field].length);
    rows.push(...page[field]);
    sizes.push(page[field].length);
    cursor = page.next_cursor;
    if (cursor === null) return { rows, sizes };
    expect(cursor).to.be.a('string');
  }
  throw new Error('too many pages');
}

describe('pagination: the cursor rules (domain)', () => {
  it('pages an ascending and a descending walk after a cursor; keys compare by type and element', () => {
    const keys = [1, 2, 3, 5, 8, 13];
    const asc = (after: number | null) => takePage('t', { limit: 2, after }, walkFrom(keys.length, (i) => keys[i], (k) => k, after, 'asc'), 'asc');
    const desc = (after: number | null) => takePage('t', { limit: 2, after }, walkFrom(keys.length, (i) => keys[i], (k) => k, after, 'desc'), 'desc');
    expect(asc(null).rows).to.deep.equal([1, 2]);
    expect(decodeCursor('t', asc(null).next_cursor!, 'int')).to.equal(2);
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
    const c = encodeCursor('tasks', 7);
    expect(decodeCursor('tasks', c, 'int')).to.equal(7);
    for (const [list, cursor, kind] of [['changes', c, 'int'], ['tasks', c, 'string'], ['tasks', 'not!base64', 'int'], ['tasks', Buffer.from('{"l":"tasks"}').toString('base64url'), 'int'], ['tasks', 'e30', 'int'], ['tasks', '', 'int']] as const) {
      expect(() => decodeCursor(list, cursor, kind), `${list} ${cursor} ${kind}`).to.throw(/cursor is not a cursor of this list/);
    }
  });
});

describe('pagination over HTTP', function () {
  this.timeout(120_000);
  let s: TestServer;
  let repo: number;
  let base: string;
  const revs: string[] = [];
  before(async () => {
    s = await startTestServer();
    repo = await register(s.url, 'paging');
    const dir = path.join(tempDir(), 'tree');
    const snap = async (text: string, line: string, move: boolean, parent?: string) => {
      await fsp.rm(dir, { recursive: true, force: true });
      await fsp.mkdir(dir, { recursive: true });
      await fsp.writeFile(path.join(dir, 'a.txt'), text);
      return (await push({ server: s.url, repo, line, dir, moveLine: move, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
    };
    base = await snap('base\n', 'main', true);
    for (let i = 0; i < 5; i++) revs.push(await snap(`rev ${i}\n`, 'main', false, base));
    for (let i = 0; i < 7; i++) await snap(`line ${i}\n`, `line-${String.fromCharCode(103 - i)}`, true);
    // names whose UTF-16 and UTF-8 orders differ, and upper case before lower (byte order)
    for (const name of ['Zed', 'émile', '\u{1F600}smile', '\uFF5Ewide']) await snap(`${name}\n`, name, true);
  });
  after(() => s.stop());

  it('tasks, changes, patchsets, reviews, lines, plans, revisions, task queue, reviewer inbox and worker jobs each page through the whole list in its order', async () => {
    const post = (p: string, json: Json) => ok(api(s.url, 'POST', R(repo, p), { json }), p);
    for (let i = 0; i < 7; i++) {
      const t = (await post('/tasks', { title: `T${i}`, intent: 'i' })).task;
      const c = (await post('/changes', { task_id: t.task_id, title: `C${i}`, base_line: 'main' })).change;
      if (i < 3) {
        for (const rev of revs) await post(`/changes/${c.change_id}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' });
        await post(`/changes/${c.change_id}:requestReview`, { patchset_id: `${c.change_id}.ps-1`, reviewer_groups: [['\uFF5E', 'Alpha', '\u{1F600}'][i]], note: '' });
        for (let r = 0; r < 4; r++) await post(`/changes/${c.change_id}/reviews`, { patchset_id: `${c.change_id}.ps-1`, reviewer: `r${r}`, action: 'comment', comment: 'x' });
      }
    }
    const plan = (await post('/sprints', { title: 'P', artifact_path: 'p.md', artifact_heading: 'P', artifact_body: '# P\n- [ ] a {#a}\n' })).plan;
    let head = plan.head_revision_id;
    for (let i = 0; i < 4; i++) head = (await post(`/sprints/${plan.plan_id}/revisions`, { artifact_path: 'p.md', artifact_heading: 'P', artifact_body: `# P\n- [ ] a {#a}\n- [ ] r${i} {#r${i}}\n`, expected_head_revision_id: head })).revision.plan_revision_id;
    for (let i = 0; i < 4; i++) await post('/sprints', { title: `P${i}`, artifact_path: `p${i}.md`, artifact_heading: 'P' });
    for (let i = 0; i < 5; i++) await post(':runCi', {});

    const lists: [string, string, (r: Json) => unknown][] = [
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
    const ids = async (p: string, field: string, id: (r: Json) => unknown) => (await ok(api(s.url, 'GET', R(repo, p))))[field].map(id);
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
    const before = (await ok(api(s.url, 'GET', R(repo, '/tasks?limit=1000')))).tasks.map((t: Json) => t.task_id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Json = await ok(api(s.url, 'GET', R(repo, `/tasks?limit=2${cursor ? `&cursor=${cursor}` : ''}`)));
      seen.push(...page.tasks.map((t: Json) => t.task_id));
      cursor = page.next_cursor;
      // two new tasks between every two pages
      for (let i = 0; i < 2; i++) await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: `new ${pages}.${i}`, intent: 'i' } }));
      pages++;
    } while (cursor !== null);
    expect(seen).to.deep.equal(before);
  });

  it('a bad limit or cursor is 400 and names the fix; the default page is 100 rows', async () => {
    for (const q of ['limit=0', 'limit=1001', 'limit=abc', 'limit=-1', 'limit=1&limit=2', 'cursor=zzz', `cursor=${encodeCursor('changes', 1)}`, `cursor=${encodeCursor('tasks', 'x')}`, 'cursor=']) {
      const res = await api(s.url, 'GET', R(repo, `/tasks?${q}`));
      expect(res.status, q).to.equal(400);
      expect(res.json.error, q).to.be.a('string');
    }
    expect((await api(s.url, 'GET', R(repo, `/worker-jobs?cursor=${encodeCursor('tasks', 1)}`))).status).to.equal(400);
    const made = (await ok(api(s.url, 'GET', R(repo, '/tasks?limit=1000')))).tasks.length;
    for (let i = made; i < 105; i++) await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: `bulk ${i}`, intent: 'i' } }));
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
