// The change page as a reviewer reads it (docs/ui.md "The change page"), in a real browser: the
// diff first (the first diff row within 400 px of the top at 1400×900), the tabs, the sticky and
// filterable file tree grouped by directory, viewed marks (kept on the server, carried to a later
// patchset while the file's content is the same), "changes since your last review", the keys,
// line anchors (#file=P&line=R12), the description, and print showing every file. Same browser
// and seed as test/ui.test.ts; skipped, saying so, when no chromium binary exists.
import { expect } from 'chai';
import { mkdirSync, copyFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import type { TestServer } from './helpers.js';
import { startUiSuite, SHOT_DIR } from './ui-browser.js';
import type { Demo } from './ui-seed.js';

describe('reviewer UI: the change page, diff first (Chromium)', function () {
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

  interface Watched { page: Page; errors: string[] }

  /** A page as reviewer `me` (the name kept in localStorage, as the name dialog keeps it). */
  async function open(options: { me?: string; colorScheme?: 'light' | 'dark'; width?: number; height?: number } = {}): Promise<Watched> {
    const context = await browser.newContext({ viewport: { width: options.width ?? 1400, height: options.height ?? 900 }, colorScheme: options.colorScheme ?? 'light' });
    contexts.push(context);
    if (options.me) await context.addInitScript((name) => { if (!localStorage.getItem('cairn.reviewer')) localStorage.setItem('cairn.reviewer', name); }, options.me);
    const page = await context.newPage();
    const w: Watched = { page, errors: [] };
    page.on('console', (m: ConsoleMessage) => { if (m.type() === 'error') w.errors.push(`${m.text()} ${m.location().url ?? ''}`); });
    page.on('pageerror', (e) => w.errors.push(`pageerror: ${e.message}`));
    page.on('dialog', (d) => { w.errors.push(`dialog: ${d.message()}`); void d.dismiss(); });
    return w;
  }

  async function shot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
    const file = path.join(SHOT_DIR, `${name}.png`);
    await page.screenshot({ path: file, fullPage: options.fullPage ?? false });
    if (process.env.UI_SCREENSHOTS_DIR) {
      mkdirSync(process.env.UI_SCREENSHOTS_DIR, { recursive: true });
      copyFileSync(file, path.join(process.env.UI_SCREENSHOTS_DIR, `${name}.png`));
    }
    return file;
  }

  const url = (change: string, rest = '') => `${s.url}/ui/repos/${demo.s.repo}/changes/${change}${rest}`;

  it('opens on the code: a compact head, the Files tab, and the first diff row within 400 px of the top at 1400×900 (screenshots in both themes)', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const w = await open({ colorScheme: scheme });
      await w.page.goto(url(demo.main.change));
      const first = w.page.locator('.diff-file .file-body tr:not(.hunk)').first();
      await first.waitFor();
      await w.page.locator('.readiness h2').waitFor();
      const top = await first.evaluate((e) => e.getBoundingClientRect().top);
      expect(top, `first diff row at ${top}px`).to.be.at.most(400);
      // the head carries the readiness line with its facts: CI, votes, the unresolved threads
      expect(await w.page.locator('.readiness .facts').innerText()).to.include('CI').and.include('Reviews');
      await w.page.locator('.unresolved-count').waitFor();
      expect(await w.page.getByRole('tab', { name: /Files/ }).getAttribute('aria-selected')).to.equal('true');
      // the reviews and the evidence are a tab away, not above the diff
      expect(await w.page.locator('#reviews').isVisible()).to.equal(false);
      await shot(w.page, `change-${scheme}`);
      expect(w.errors).to.deep.equal([]);
    }
  });
});
