// Change search in a browser (docs/ui.md "Searching changes"): the top bar's box on every page of
// a repository, `/` focusing it (but filtering the files on a change page), the query language
// of the API (`status:review owner:alice words`) listing exactly the matching changes, newest
// first, and paging past the first 50.
import { expect } from 'chai';
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestServer, type TestServer } from './helpers.js';
import { CHROMIUM, SHOT_DIR } from './ui-browser.js';
import { Seeder } from './ui-seed.js';

const MATCHING = 53; // more than one page of 50

describe('UI: searching changes', function () {
  this.timeout(240_000);
  let browser: Browser;
  let s: TestServer;
  let seed: Seeder;
  let firstChange: string;
  const contexts: BrowserContext[] = [];

  before(async function () {
    if (!CHROMIUM) {
      console.log('      SKIPPED: the browser tests of the reviewer UI need a chromium binary (apt-get install chromium; .ci/run installs it)');
      this.skip();
    }
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
    s = await startTestServer();
    seed = await Seeder.register(s.url, 'search-ui');
    mkdirSync(SHOT_DIR, { recursive: true });
    const base = await seed.snap({ 'lib/a.txt': 'a\n' }, { moveLine: true });
    const rev = await seed.snap({ 'lib/a.txt': 'b\n' }, { parent: base });
    const t = (await seed.post('/tasks', { title: 'T', intent: 'I' })).task;
    const make = async (title: string, owner: string, review: boolean): Promise<string> => {
      const c = (await seed.post('/changes', { task_id: t.task_id, title, base_line: 'main', owner })).change.change_id as string;
      const ps = await seed.patchset(c, base, rev, title);
      if (review) await seed.post(`/changes/${c}:requestReview`, { patchset_id: ps, reviewers: ['bob'], requested_by: owner });
      return c;
    };
    // what must not match: another owner, not in review, without the words
    await make('Checkout rate limit by bob', 'bob', true);
    await make('Checkout rate limit not asked', 'alice', false);
    await make('Unrelated paging fix', 'alice', true);
    for (let i = 1; i <= MATCHING; i++) {
      const c = await make(`Checkout rate limit ${i}`, 'alice', true);
      if (i === 1) firstChange = c;
    }
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await s?.stop();
  });

  async function open(url: string, options: { width?: number; colorScheme?: 'light' | 'dark' } = {}): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ viewport: { width: options.width ?? 1400, height: 900 }, colorScheme: options.colorScheme ?? 'light' });
    contexts.push(context);
    await context.addInitScript(() => localStorage.setItem('cairn.reviewer', 'alice'));
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    await page.goto(`${s.url}${url}`);
    return { page, errors };
  }

  async function shot(page: Page, name: string): Promise<void> {
    const file = path.join(SHOT_DIR, `${name}.png`);
    await page.screenshot({ path: file });
    if (process.env.UI_SCREENSHOTS_DIR) {
      mkdirSync(process.env.UI_SCREENSHOTS_DIR, { recursive: true });
      copyFileSync(file, path.join(process.env.UI_SCREENSHOTS_DIR, `${name}.png`));
    }
  }

  const titles = (page: Page) => page.locator('main .rows .row-title').allInnerTexts();

  it('searches from the top bar: `/` focuses the box, the query lists exactly the matching changes, and pages', async () => {
    const { page, errors } = await open(`/ui/repos/${seed.repo}`);
    await page.getByRole('heading', { name: 'Your turn' }).waitFor();
    const box = page.locator('header #top-search');
    await box.waitFor();
    await page.keyboard.press('/');
    await page.waitForFunction(() => document.activeElement?.id === 'top-search');
    await page.keyboard.type('status:review owner:alice checkout limit');
    await shot(page, 'search-box');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/search\?q=/);
    expect(new URL(page.url()).searchParams.get('q')).to.equal('status:review owner:alice checkout limit');
    // the first page: the 50 newest matches, and a way on
    await page.locator('main p[aria-live]', { hasText: '50 changes on this page.' }).waitFor();
    const first = await titles(page);
    expect(first).to.have.length(50);
    expect(first[0]).to.equal(`Checkout rate limit ${MATCHING}`);
    expect(first.every((x) => /^Checkout rate limit \d+$/.test(x))).to.equal(true);
    // the top bar carries no second box on the search page (the page's own box holds the query)
    expect(await page.locator('header .search-box').count()).to.equal(0);
    expect(await page.locator('main #change-search').inputValue()).to.equal('status:review owner:alice checkout limit');
    await shot(page, 'search');
    await page.getByRole('link', { name: 'More results →' }).click();
    await page.locator('main p[aria-live]', { hasText: `${MATCHING - 50} changes.` }).waitFor();
    const rest = await titles(page);
    expect(rest).to.deep.equal([3, 2, 1].map((i) => `Checkout rate limit ${i}`));
    expect(await page.getByRole('link', { name: 'More results →' }).count()).to.equal(0);
    // every match once, none of the decoys
    const all = [...first, ...rest];
    expect(new Set(all).size).to.equal(MATCHING);
    // the page's own box searches again
    await page.locator('main #change-search').fill('owner:bob checkout');
    await page.locator('main #change-search').press('Enter');
    await page.locator('main p[aria-live]', { hasText: '1 change.' }).waitFor();
    expect(await titles(page)).to.deep.equal(['Checkout rate limit by bob']);
    // a refused query shows the server's reason
    await page.locator('main #change-search').fill('status:nope');
    await page.locator('main #change-search').press('Enter');
    await page.locator('main', { hasText: /status/ }).locator('.error, [role="alert"]').first().waitFor();
    expect(errors.filter((e) => !/400/.test(e))).to.deep.equal([]);
  });

  it('shows each result\'s owner, CI, votes, unresolved threads, topic and WIP mark, and says when no one has the name searched for', async () => {
    await seed.post(`/changes/${firstChange}:setFlags`, { topic: 'limits', wip: true });
    await seed.review(firstChange, `${firstChange}.ps-1`, 'carol', 'approve');
    await seed.comment(firstChange, { patchset_id: `${firstChange}.ps-1`, author: 'carol', anchor: { path: 'lib/a.txt', line: 1 }, body: 'Why b?' });
    const { page, errors } = await open(`/ui/repos/${seed.repo}/search?q=${encodeURIComponent('topic:limits')}`);
    await page.locator('main p[aria-live]', { hasText: '1 change.' }).waitFor();
    const row = page.locator(`main .rows .row[data-change="${firstChange}"]`);
    expect(await row.locator('.owner').innerText()).to.equal('alice');
    expect(await row.locator('.wip-badge').innerText()).to.equal('WIP');
    expect(await row.locator('.row-meta').innerText()).to.include('topic limits');
    expect(await row.locator('.votes').innerText()).to.match(/✓1\s*✗0/);
    expect(await row.locator('.threads').innerText()).to.equal('1 open thread');
    expect(await row.locator('.row-side').innerText()).to.match(/CI\s*none/);
    await shot(page, 'search-rows');
    await page.locator('main #change-search').fill('owner:nobody checkout');
    await page.locator('main #change-search').press('Enter');
    await page.locator('main .search-note').waitFor();
    expect(await page.locator('main .search-note').innerText()).to.equal('No one named "nobody" owns a change in this repository.');
    expect(errors).to.deep.equal([]);
    // The change page's header: the WIP mark, the topic (a link searching it) and the people copied.
    await seed.post(`/changes/${firstChange}:setFlags`, { cc: ['dan', 'erin'] });
    const change = await open(`/ui/repos/${seed.repo}/changes/${firstChange}`);
    await change.page.locator('[data-testid="wip"]').waitFor();
    expect(await change.page.locator('[data-testid="topic"]').innerText()).to.equal('topic limits');
    expect(await change.page.locator('[data-testid="topic"] a').getAttribute('href')).to.equal(`/ui/repos/${seed.repo}/search?q=${encodeURIComponent('topic:"limits"')}`);
    expect(await change.page.locator('[data-testid="cc"]').innerText()).to.equal('cc dan, erin');
    await shot(change.page, 'change-flags');
    expect(change.errors).to.deep.equal([]);
  });

  it('keeps `/` for the file filter on a change page', async () => {
    const { page, errors } = await open(`/ui/repos/${seed.repo}/changes/${firstChange}`);
    await page.locator('.diff-file').first().waitFor();
    await page.locator('header #top-search').waitFor();
    await page.locator('main h1').click();
    await page.keyboard.press('/');
    await page.waitForFunction(() => document.activeElement?.tagName === 'INPUT' && document.activeElement.id !== 'top-search' && !!document.activeElement.closest('main'));
    expect(errors).to.deep.equal([]);
  });

  it('fits the box in the top bar at 390 px, dark', async () => {
    const { page, errors } = await open(`/ui/repos/${seed.repo}/changes`, { width: 390, colorScheme: 'dark' });
    await page.locator('header #top-search').waitFor();
    await page.locator('main .rows').waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).to.be.at.most(0);
    await shot(page, 'search-box-390-dark');
    expect(errors).to.deep.equal([]);
  });
});
