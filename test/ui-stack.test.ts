// The change page's Stack card (docs/ui.md "The change page", docs/git.md "Stacks"), in Chromium:
// three changes each based on the patchset of the one before (as a pushed series makes them);
// the middle one's page says "2 of 3 in a stack" in its head (the diff keeps its place), and the
// Stack card lists the chain top first with this change marked and the others linked; an
// outdated change above is marked. Skipped, saying so, when no chromium binary exists.
import { expect } from 'chai';
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import type { TestServer } from './helpers.js';
import { startUiSuite, SHOT_DIR } from './ui-browser.js';
import { BASE_TREE, type Demo } from './ui-seed.js';

describe('reviewer UI: the Stack card of the change page (Chromium)', function () {
  this.timeout(180_000);
  let browser: Browser;
  let s: TestServer;
  let demo: Demo;
  const contexts: BrowserContext[] = [];

  before(async function () {
    ({ browser, s, demo } = await startUiSuite(this));
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await s?.stop();
  });

  async function open(): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, colorScheme: 'light' });
    contexts.push(context);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m: ConsoleMessage) => { if (m.type() === 'error') errors.push(`${m.text()} ${m.location().url ?? ''}`); });
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
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

  it('the middle of a stack of 3: "2 of 3 in a stack" in the head, the diff first; the Stack card lists the chain top first, this change marked, the others linked, an outdated one said', async () => {
    const main = (await demo.s.get('/lines/main')).head_snapshot_id as string;
    const r1 = await demo.s.snap({ ...BASE_TREE, 'src/stack/one.ts': 'export const one = 1;\n' }, { parent: main, message: 'one' });
    const r2 = await demo.s.snap({ ...BASE_TREE, 'src/stack/one.ts': 'export const one = 1;\n', 'src/stack/two.ts': 'export const two = 2;\n' }, { parent: r1, message: 'two' });
    const r3 = await demo.s.snap({ ...BASE_TREE, 'src/stack/one.ts': 'export const one = 1;\n', 'src/stack/two.ts': 'export const two = 2;\n', 'src/stack/three.ts': 'export const three = 3;\n' }, { parent: r2, message: 'three' });
    const a = await demo.s.change('Add the first step');
    const b = await demo.s.change('Add the second step');
    const c = await demo.s.change('Add the third step');
    await demo.s.patchset(a.change, main, r1, 'one');
    await demo.s.patchset(b.change, r1, r2, 'two');
    await demo.s.patchset(c.change, r2, r3, 'three');
    const url = (ref: string, rest = '') => `${s.url}/ui/repos/${demo.s.repo}/changes/${ref}${rest}`;

    const w = await open();
    await w.page.goto(url(b.change));
    const first = w.page.locator('.diff-file .file-body tr:not(.hunk)').first();
    await first.waitFor();
    await w.page.locator('.readiness h2').waitFor();
    expect(await first.evaluate((e) => e.getBoundingClientRect().top), 'the first diff row within 400 px').to.be.at.most(400);
    const link = w.page.locator('.stack-link');
    expect(await link.innerText()).to.equal('2 of 3 in a stack');
    // the readiness line names the change below that blocks this one
    expect(await w.page.locator('.readiness').innerText()).to.include(a.change);
    await link.click();
    const card = w.page.locator('#stack');
    await card.waitFor();
    expect(await w.page.getByRole('tab', { name: /Conversation/ }).getAttribute('aria-selected')).to.equal('true');
    const items = card.locator('.stack-list li');
    expect(await items.allInnerTexts()).to.deep.equal([
      `Add the third step ${c.change} active`,
      `Add the second step (this change) ${b.change} active`,
      `Add the first step ${a.change} active`,
    ]);
    expect(await items.nth(1).getAttribute('aria-current')).to.equal('page');
    expect(await items.nth(1).locator('a').count(), 'this change is not a link').to.equal(0);
    expect(await items.nth(0).locator('a').getAttribute('href')).to.equal(`/ui/repos/${demo.s.repo}/changes/${c.ref}`);
    expect(await card.locator('.card-right').innerText()).to.equal('2 of 3 from the bottom');
    await w.page.evaluate(() => scrollTo(0, 0));
    await shot(w.page, 'change-stack-card');
    expect(w.errors).to.deep.equal([]);

    // A new patchset of the middle change: the top, still on ps-1, is outdated.
    const r2b = await demo.s.snap({ ...BASE_TREE, 'src/stack/one.ts': 'export const one = 1;\n', 'src/stack/two.ts': 'export const two = 22;\n' }, { parent: r1, message: 'two again' });
    await demo.s.patchset(b.change, r1, r2b, 'two again');
    await w.page.goto(url(a.change, '?tab=conversation'));
    await card.waitFor();
    expect(await card.locator('.stack-list li').first().innerText()).to.include('outdated');
    expect(await card.locator('.stack-list li').last().getAttribute('aria-current')).to.equal('page');
    // a change that stands alone has no card and no head link
    await w.page.goto(url(demo.main.change, '?tab=conversation'));
    await w.page.locator('#description').waitFor();
    expect(await w.page.locator('#stack').count()).to.equal(0);
    expect(await w.page.locator('.stack-link').count()).to.equal(0);
    expect(w.errors).to.deep.equal([]);
  });
});
