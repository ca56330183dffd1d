// Rebase on the change page (docs/ui.md "The change page"), in a real browser: the Actions card
// offers "Rebase" when the line moved past the selected patchset's base; it builds the new
// patchset on the server (selected), or lists the conflicting paths and writes nothing. Then a
// reviewer's "Changes since your last review" across that rebase greys what the line brought:
// files changed only by the rebase start folded ("N files changed only by the rebase — show"),
// hunks from it are greyed and tagged, the author's own are not. Screenshots at 1400×900 in both
// themes. Skipped, saying so, without chromium.
import { expect } from 'chai';
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { startTestServer, type TestServer } from './helpers.js';
import { CHROMIUM, SHOT_DIR } from './ui-browser.js';
import { Seeder, type Files } from './ui-seed.js';

const LINE = 'release';
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const code = (n: number, edit: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => edit[i + 1] ?? `export const step${i + 1} = ${i + 1};`).join('\n') + '\n';

describe('reviewer UI: Rebase, and the interdiff across a rebase (Chromium)', function () {
  this.timeout(180_000);
  let browser: Browser;
  let s: TestServer;
  let seed: Seeder;
  const contexts: BrowserContext[] = [];
  let change: string;
  let conflicting: string;

  const BASE: Files = { 'src/cart.ts': code(40), 'src/prices.ts': code(30), 'README.md': '# Shop\n\nA small shop.\n', 'docs/notes.md': 'notes\n' };

  before(async function () {
    if (!CHROMIUM) {
      console.log('      SKIPPED: the browser tests of the reviewer UI need a chromium binary (apt-get install chromium; .ci/run installs it)');
      this.skip();
    }
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
    mkdirSync(SHOT_DIR, { recursive: true });
    s = await startTestServer();
    seed = await Seeder.register(s.url, 'rebase-ui');
    const base = await seed.snap(BASE, { line: LINE, moveLine: true, message: 'base' });
    // The change: line 5 of cart.ts; bob approves ps-1 (his last review).
    const c = await seed.change('Round cart totals', { line: LINE });
    change = c.change;
    const rev1 = await seed.snap({ ...BASE, 'src/cart.ts': code(40, { 5: 'export const step5 = Math.round(5);' }) }, { line: LINE, parent: base, message: 'Round cart totals' });
    await seed.patchset(change, base, rev1, 'Round cart totals', 'ann');
    await seed.review(change, `${change}.ps-1`, 'bob', 'approve', 'Fine.');
    // A change that will conflict: README's line 3.
    const k = await seed.change('Describe the shop', { line: LINE });
    conflicting = k.change;
    await seed.patchset(conflicting, base, await seed.snap({ ...BASE, 'README.md': '# Shop\n\nA small shop that sells tea.\n' }, { line: LINE, parent: base, message: 'Describe the shop' }), 'Describe the shop', 'ann');
    // The line moves on: README, prices.ts line 20, cart.ts line 33 (far from the change's line 5).
    await seed.snap({ ...BASE, 'README.md': '# Shop\n\nA small shop, open on Sundays.\n', 'src/prices.ts': code(30, { 20: 'export const step20 = 2000;' }), 'src/cart.ts': code(40, { 33: 'export const step33 = 3300;' }) }, { line: LINE, moveLine: true, parent: base, message: 'Sunday opening' });
  });
  after(async () => {
    for (const x of contexts) await x.close().catch(() => undefined);
    await browser?.close();
    await s?.stop();
  });

  interface Watched { page: Page; errors: string[] }
  /** `bypassCSP`: for axe-core, injected as an inline script (the UI's CSP forbids those). */
  async function open(options: { me?: string; colorScheme?: 'light' | 'dark'; bypassCSP?: boolean } = {}): Promise<Watched> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, colorScheme: options.colorScheme ?? 'light', bypassCSP: options.bypassCSP ?? false });
    contexts.push(context);
    if (options.me) await context.addInitScript((name) => { if (!localStorage.getItem('cairn.reviewer')) localStorage.setItem('cairn.reviewer', name); }, options.me);
    const page = await context.newPage();
    const w: Watched = { page, errors: [] };
    page.on('console', (m: ConsoleMessage) => { if (m.type() === 'error' && !/status of 409/.test(m.text())) w.errors.push(`${m.text()} ${m.location().url ?? ''}`); });
    page.on('pageerror', (e) => w.errors.push(`pageerror: ${e.message}`));
    return w;
  }
  async function shot(page: Page, name: string): Promise<void> {
    const file = path.join(SHOT_DIR, `${name}.png`);
    await page.screenshot({ path: file });
    if (process.env.UI_SCREENSHOTS_DIR) {
      mkdirSync(process.env.UI_SCREENSHOTS_DIR, { recursive: true });
      copyFileSync(file, path.join(process.env.UI_SCREENSHOTS_DIR, `${name}.png`));
    }
  }
  /** axe-core's serious and critical findings (WCAG 2.0/2.1 A and AA): the greyed rows keep their contrast. */
  async function axeSerious(p: Page): Promise<string[]> {
    await p.addScriptTag({ path: AXE });
    return p.evaluate(async () => {
      const w = window as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[] }> } };
      const r = await w.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] });
      return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
    });
  }
  const url = (c: string, rest = '') => `${s.url}/ui/repos/${seed.repo}/changes/${c}${rest}`;

  it('Rebase builds the new patchset on the line\'s head and selects it; a conflict lists its paths and writes nothing (screenshots)', async () => {
    const w = await open({ me: 'ann' });
    await w.page.goto(url(change, '#actions'));
    const button = w.page.locator('.actions-card .rebase-btn');
    await button.waitFor();
    expect(await w.page.locator('.rebase-row').innerText()).to.include(`${LINE} moved since ps-1's base`);
    await button.click();
    const flash = w.page.locator('.actions-card .flash.ok');
    await flash.waitFor();
    expect(await flash.innerText()).to.equal(`Rebased ps-1 onto the head of ${LINE} as ps-2, now selected.`);
    const c = (await seed.get(`/changes/${change}`)).change;
    expect(c).to.include({ selected_patchset_id: `${change}.ps-2`, patchset_count: 2 });
    // Based on the head now: no Rebase offered.
    await w.page.locator('.actions-card .rebase-btn').waitFor({ state: 'detached' });
    // The Patchsets table says where ps-2 came from.
    await w.page.locator('#patchsets .rebased-from').waitFor();
    expect(await w.page.locator('#patchsets .rebased-from').innerText()).to.equal('· rebased from ps-1');
    await shot(w.page, 'change-rebased');

    const k = await open({ me: 'ann', bypassCSP: true });
    await k.page.goto(url(conflicting, '#actions'));
    await k.page.locator('.actions-card .rebase-btn').click();
    const refused = k.page.locator('.actions-card .flash.bad');
    await refused.waitFor();
    const text = await refused.innerText();
    expect(text).to.include(`Not rebased: 1 path conflicts with the head of ${LINE}.`).and.include('README.md').and.include('Nothing was written');
    expect(await refused.locator('[data-conflict="README.md"]').count()).to.equal(1);
    expect((await seed.get(`/changes/${conflicting}`)).change.patchset_count).to.equal(1);
    await refused.scrollIntoViewIfNeeded();
    await shot(k.page, 'change-rebase-conflict');
    expect(await axeSerious(k.page)).to.deep.equal([]);
    expect([...w.errors, ...k.errors]).to.deep.equal([]);
  });

  it('"Changes since your last review" across the rebase: the line\'s files folded and greyed ("N files changed only by the rebase — show"), its hunks greyed, the author\'s not (screenshots in both themes)', async () => {
    // The author amends the rebased patchset: line 5 again and line 9 of cart.ts (ps-3, on the same base as ps-2).
    const ps2 = (await seed.get(`/patchsets/${change}.ps-2`)).patchset;
    const rev3 = await seed.snap({ ...BASE, 'README.md': '# Shop\n\nA small shop, open on Sundays.\n', 'src/prices.ts': code(30, { 20: 'export const step20 = 2000;' }), 'src/cart.ts': code(40, { 5: 'export const step5 = Math.round(5 * 100) / 100;', 9: 'export const step9 = Math.round(9);', 33: 'export const step33 = 3300;' }) }, { line: LINE, parent: ps2.base_snapshot_id, message: 'Round cart totals, to cents' });
    await seed.post(`/changes/${change}/patchsets`, { base_snapshot_id: ps2.base_snapshot_id, revision_snapshot_id: rev3, summary: 'Round cart totals, to cents', author_mode: 'human_only', author: 'ann' });
    await seed.post(`/changes/${change}:selectPatchset`, { patchset_id: `${change}.ps-3` });
    for (const scheme of ['light', 'dark'] as const) {
      const w = await open({ me: 'bob', colorScheme: scheme, bypassCSP: true });
      await w.page.goto(url(change));
      await w.page.locator('.since-review').click();
      await w.page.locator('.rebase-note').waitFor();
      expect(w.page.url()).to.include(`against=${encodeURIComponent(`${change}.ps-1`)}`);
      expect(await w.page.locator('.rebase-note').innerText()).to.equal('2 files changed only by the rebase show');
      for (const p of ['README.md', 'src/prices.ts']) {
        const f = w.page.locator(`.diff-file[data-path="${p}"]`);
        expect(await f.getAttribute('class'), p).to.include('from-rebase');
        expect(await f.locator('.file-toggle').getAttribute('aria-expanded'), p).to.equal('false');
        expect(await f.locator('.file-meta').innerText(), p).to.include('only the rebase');
      }
      const cart = w.page.locator('.diff-file[data-path="src/cart.ts"]');
      expect(await cart.getAttribute('class')).to.not.include('from-rebase');
      const heads = cart.locator('tr.hunk:not(.trailing)');
      await heads.first().waitFor();
      expect(await heads.evaluateAll((rows) => rows.map((r) => r.classList.contains('from-rebase')))).to.deep.equal([false, true]);
      expect(await heads.nth(1).innerText()).to.include('from the rebase');
      // The author's lines are coloured as changes, the line's greyed.
      const bg = (sel: string) => cart.locator(sel).first().evaluate((e) => getComputedStyle(e.querySelector('td.code')!).backgroundColor);
      expect(await bg('tr.add:not(.from-rebase)')).to.not.equal(await bg('tr.add.from-rebase'));
      await shot(w.page, `change-interdiff-rebase-${scheme}`);
      // The diff starts within 400 px; its first code row comes after the folded file the rebase alone changed.
      expect(await w.page.locator('.diff-file').first().evaluate((e) => e.getBoundingClientRect().top), 'the first file').to.be.at.most(400);
      const first = w.page.locator('.diff-file .file-body tr:not(.hunk)').first();
      expect(await first.evaluate((e) => e.getBoundingClientRect().top), 'the first diff row').to.be.at.most(460);
      // show: the files the rebase alone changed open.
      await w.page.locator('.rebase-note .show-rebase').click();
      expect(await w.page.locator('.diff-file[data-path="README.md"] .file-toggle').getAttribute('aria-expanded')).to.equal('true');
      await w.page.locator('.diff-file[data-path="README.md"] tr.from-rebase').first().waitFor();
      expect(await axeSerious(w.page), scheme).to.deep.equal([]);
      expect(w.errors).to.deep.equal([]);
    }
  });
});
