// The per-person dashboard in a browser (docs/ui.md "Your dashboard"): the repository page
// shows the named person's turn, their changes, what waits for their review and what landed,
// each row with CI, votes and unresolved threads, and follows the records as they change.
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { api, startTestServer, type TestServer } from './helpers.js';
import { CHROMIUM } from './ui-browser.js';
import { R, Seeder } from './ui-seed.js';

describe('UI: the per-person dashboard', function () {
  this.timeout(180_000);
  let browser: Browser;
  let s: TestServer;
  let seed: Seeder;
  let change: string;
  let ps: string;

  before(async function () {
    if (!CHROMIUM) {
      console.log('      SKIPPED: the browser tests of the reviewer UI need a chromium binary (apt-get install chromium; .ci/run installs it)');
      this.skip();
    }
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
    s = await startTestServer();
    seed = await Seeder.register(s.url, 'people-ui');
    const base = await seed.snap({ 'a.txt': 'a\n' }, { moveLine: true });
    const rev = await seed.snap({ 'a.txt': 'b\n' }, { parent: base });
    const t = (await seed.post('/tasks', { title: 'T', intent: 'I' })).task;
    change = (await seed.post('/changes', { task_id: t.task_id, title: 'Rate-limit the checkout', base_line: 'main', owner: 'alice' })).change.change_id;
    ps = await seed.patchset(change, base, rev, 'one');
    await seed.ci(ps, 'pass');
    // The owner's own note: an open thread that asks nobody (a reviewer's would be the owner's move).
    await seed.comment(change, { patchset_id: ps, author: 'alice', anchor: { path: 'a.txt' }, body: 'Why b? Answered in the next patchset.' });
    await seed.post(`/changes/${change}:requestReview`, { patchset_id: ps, reviewers: ['bob'], requested_by: 'alice' });
    const other = (await seed.post('/changes', { task_id: t.task_id, title: 'Someone else\'s change', base_line: 'main', owner: 'dan' })).change.change_id;
    void other;
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  async function open(name: string): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    // The name the UI asks for once (kept in the browser).
    await context.addInitScript((n) => localStorage.setItem('cairn.reviewer', n), name);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    await page.goto(`${s.url}/ui/repos/${seed.repo}`);
    return { page, errors };
  }

  const card = (page: Page, title: string) => page.locator('.card', { has: page.getByRole('heading', { name: title, exact: true }) }).first();

  it("shows the reviewer's turn with CI, votes and unresolved threads, and the owner's changes", async () => {
    const bob = await open('bob');
    const turn = card(bob.page, 'Your turn');
    const row = turn.locator(`li.row[data-change="${change}"]`);
    await row.waitFor();
    expect(await row.innerText()).to.include('Rate-limit the checkout');
    expect(await row.locator('.turn-reason').innerText()).to.equal('review requested');
    expect(await row.locator('.row-side').innerText()).to.match(/CI\s*pass/);
    expect(await row.locator('.votes').innerText()).to.match(/✓0\s*✗0/);
    expect(await row.locator('.threads').innerText()).to.equal('1 open thread');
    await card(bob.page, 'Waiting for your review').locator(`li.row[data-change="${change}"]`).waitFor();
    expect(await card(bob.page, 'Your changes').innerText()).to.include('You own no open change.');
    // every card of the page is a landmark named once (screen readers list them by name)
    expect(await card(bob.page, 'Landed: yours and reviewed').innerText()).to.include('Nothing of yours has landed yet.');
    await card(bob.page, 'Recently landed').waitFor();
    const names = await bob.page.locator('section.card[aria-label]').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
    expect(names.filter((n, i) => names.indexOf(n) !== i), names.join(' | ')).to.deep.equal([]);
    expect(bob.errors).to.deep.equal([]);

    const alice = await open('alice');
    await card(alice.page, 'Your changes').locator(`li.row[data-change="${change}"]`).waitFor();
    expect(await card(alice.page, 'Your changes').innerText()).to.include('waiting for bob');
    expect(await card(alice.page, 'Your turn').innerText()).to.include('Nothing waits for you.');
    // bob blocks: the page follows the event feed; it is alice's move now.
    const r = await api(s.url, 'POST', R(seed.repo, `/changes/${change}/reviews`), { json: { patchset_id: ps, reviewer: 'bob', action: 'request_changes', comment: 'not yet' } });
    expect(r.status).to.equal(200);
    const mine = card(alice.page, 'Your turn').locator(`li.row[data-change="${change}"]`);
    await mine.waitFor({ timeout: 20_000 });
    expect(await mine.locator('.turn-reason').innerText()).to.equal('a reviewer blocks it');
    expect(await mine.locator('.votes').innerText()).to.match(/✓0\s*✗1/);
    expect(alice.errors).to.deep.equal([]);
  });

  it('without a name, the dashboard asks for one instead of guessing', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${s.url}/ui/repos/${seed.repo}`);
    await card(page, 'Your turn').getByRole('button', { name: 'Set your name' }).waitFor();
    await context.close();
  });
});
