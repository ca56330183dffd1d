// The details of the change page a reviewer trips over (docs/ui.md "The change page"), in a real
// browser: Escape with typed text asks before discarding it, a diff that cannot be read says the
// status and offers Retry with the threads still listed, shift-click makes one range editor,
// nested directories in the file tree, one file count everywhere, "viewed" counted among the
// listed files, the shown patchset's own base, commit subjects in the selectors, hunk buttons
// clear of the hunk header, and code on the first screen of a phone. Same browser and seed as
// test/ui.test.ts; skipped, saying so, when no chromium binary exists.
import { expect } from 'chai';
import { mkdirSync, copyFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import type { TestServer } from './helpers.js';
import { startUiSuite, SHOT_DIR } from './ui-browser.js';
import { BASE_TREE, type Demo, type Files } from './ui-seed.js';

type Json = Record<string, any>;

describe('reviewer UI: the change page\'s details (Chromium)', function () {
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

  async function open(options: { me?: string; colorScheme?: 'light' | 'dark'; width?: number; height?: number } = {}): Promise<Watched> {
    const context = await browser.newContext({ viewport: { width: options.width ?? 1400, height: options.height ?? 900 }, colorScheme: options.colorScheme ?? 'light' });
    contexts.push(context);
    if (options.me) await context.addInitScript((name) => { if (!localStorage.getItem('cairn.reviewer')) localStorage.setItem('cairn.reviewer', name); }, options.me);
    const page = await context.newPage();
    const w: Watched = { page, errors: [] };
    page.on('console', (m: ConsoleMessage) => { if (m.type() === 'error' && !/502|Bad Gateway/.test(m.text()) && !/404 .*\/attestation$/.test(`${m.text()} ${m.location().url ?? ''}`)) w.errors.push(`${m.text()} ${m.location().url ?? ''}`); });
    page.on('pageerror', (e) => w.errors.push(`pageerror: ${e.message}`));
    page.on('dialog', (d) => { w.errors.push(`dialog: ${d.message()}`); void d.dismiss(); });
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

  const url = (change: string, rest = '') => `${s.url}/ui/repos/${demo.s.repo}/changes/${change}${rest}`;
  const file = (p: Page, filePath: string) => p.locator(`.diff-file[data-path="${filePath}"]`);
  const lineNo = (p: Page, filePath: string, n: number) => file(p, filePath).locator(`td.ln[data-side="revision"][data-n="${n}"]`);
  const short = (id: string) => id.replace(/^.*\./, '');

  /** A change on main's head whose one patchset edits `files` (BASE_TREE plus them). */
  async function changeWith(title: string, files: Files, summary = title): Promise<{ change: string; ps: string; base: string }> {
    const head = (await demo.s.get('/lines/main')).head_snapshot_id as string;
    const b0 = await demo.s.snap(BASE_TREE, { parent: head, message: `${title}: base` });
    const r0 = await demo.s.snap({ ...BASE_TREE, ...files }, { parent: b0, message: title });
    const c = await demo.s.change(title);
    const ps = await demo.s.patchset(c.change, b0, r0, summary);
    return { change: c.change, ps, base: b0 };
  }

  const RL = 'src/checkout/rate-limit.ts';

  it('Escape in an editor with typed text asks before discarding it (Cancel keeps the text); an empty editor closes at once', async () => {
    const w = await open({ me: 'rev' });
    await w.page.goto(url(demo.main.change));
    await lineNo(w.page, RL, 6).click();
    const editor = file(w.page, RL).locator('.comment-editor');
    await editor.locator('textarea').waitFor();
    await editor.locator('textarea').fill('Half a thought');
    await w.page.keyboard.press('Escape');
    const ask = w.page.locator('dialog[open]');
    await ask.waitFor();
    expect(await ask.innerText()).to.include('Discard what you typed?');
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'detached' }).catch(() => ask.waitFor({ state: 'hidden' }));
    expect(await editor.locator('textarea').inputValue()).to.equal('Half a thought');
    await editor.locator('textarea').focus();
    await w.page.keyboard.press('Escape');
    await w.page.locator('dialog[open]').getByRole('button', { name: 'Discard' }).click();
    await editor.waitFor({ state: 'detached' });
    // nothing typed: Escape closes without asking
    await lineNo(w.page, RL, 7).click();
    await editor.locator('textarea').waitFor();
    await w.page.waitForFunction(() => document.activeElement?.matches('.comment-editor textarea') ?? false);
    await w.page.keyboard.press('Escape');
    await editor.waitFor({ state: 'detached' });
    expect(await w.page.locator('dialog[open]').count()).to.equal(0);
    expect(w.errors).to.deep.equal([]);
  });

  it('shift-click after a click makes one range editor, not a line editor and a range editor', async () => {
    const w = await open({ me: 'rev' });
    await w.page.goto(url(demo.main.change));
    await lineNo(w.page, RL, 10).click();
    const editors = file(w.page, RL).locator('.comment-editor');
    await editors.first().waitFor();
    await lineNo(w.page, RL, 12).click({ modifiers: ['Shift'] });
    await w.page.waitForFunction(() => [...document.querySelectorAll('.comment-editor .editor-what')].some((e) => e.textContent!.includes('lines 10–12')));
    expect(await editors.count()).to.equal(1);
    expect(await editors.locator('.editor-what').innerText()).to.include('lines 10–12');
    expect(w.errors).to.deep.equal([]);
  });

  it('a diff that cannot be read: the status and its reason phrase, a Retry that reads it again, and the threads still listed', async () => {
    const w = await open({ me: 'dana' });
    let fail = true;
    await w.page.route(/\/read\/patchsets\/[^/]+\/diff/, (route) => (fail ? route.fulfill({ status: 502, contentType: 'text/html', body: '<html>upstream down</html>' }) : route.continue()));
    await w.page.goto(url(demo.main.change));
    const box = w.page.locator('.diff-error');
    await box.waitFor();
    expect(await box.locator('.diff-error-text').innerText()).to.equal('HTTP 502 Bad Gateway');
    const threads = await demo.s.get(`/changes/${demo.main.change}/threads?patchset=${demo.main.ps2}&author=dana`);
    await box.locator('[data-thread-id]').first().waitFor();
    expect(await box.locator('.thread[data-thread-id]').count()).to.equal(threads.threads.length);
    await shot(w.page, 'change-diff-error');
    fail = false;
    await box.getByRole('button', { name: 'Retry' }).click();
    await file(w.page, RL).waitFor();
    expect(await w.page.locator('.diff-error').count()).to.equal(0);
    expect(w.errors).to.deep.equal([]);
  });

  it('the file tree nests directories: each level once, indented under its parent', async () => {
    const x = await changeWith('Nested directories', {
      'src/api/v1/orders.ts': 'export const v = 1;\n',
      'src/api/v1/carts.ts': 'export const v = 1;\n',
      'src/api/v2/orders.ts': 'export const v = 2;\n',
      'src/web/app.ts': 'export const app = 1;\n',
    });
    const w = await open();
    await w.page.goto(url(x.change));
    const tree = w.page.locator('nav.file-tree');
    await tree.locator('.file-row').first().waitFor();
    const rows = await tree.locator('li').evaluateAll((els) => els.map((e) => `${e.classList.contains('dir-row') ? 'D' : 'F'}${getComputedStyle(e).getPropertyValue('--depth').trim()}:${e.classList.contains('dir-row') ? e.textContent!.replace('▾', '') : e.getAttribute('data-path')}`));
    expect(rows).to.deep.equal(['D0:src/', 'D1:api/', 'D2:v1/', 'F3:src/api/v1/carts.ts', 'F3:src/api/v1/orders.ts', 'D2:v2/', 'F3:src/api/v2/orders.ts', 'D1:web/', 'F2:src/web/app.ts']);
    // deeper rows sit further right
    const lefts = await tree.locator('.dir-row').evaluateAll((els) => els.map((e) => Math.round(e.querySelector('.dir-icon')!.getBoundingClientRect().left)));
    expect(lefts[1]).to.be.greaterThan(lefts[0]);
    expect(lefts[2]).to.be.greaterThan(lefts[1]);
    expect(w.errors).to.deep.equal([]);
  });

  it('one file count everywhere: comparing with another patchset, the Files tab, the diff\'s summary and the tree count the files of the diff shown; "viewed" counts only the files listed', async () => {
    const w = await open({ me: 'vic' });
    // vic marks two files of ps-2 viewed: one the comparison with ps-1 lists, one it does not
    const p2 = (await demo.s.get(`/changes/${demo.main.change}/patchsets`)).patchsets.find((p: Json) => p.patchset_id === demo.main.ps2);
    const inter = (await demo.s.get(`/read/patchsets/${demo.main.ps2}/diff?against=${demo.main.ps1}`)).files.map((f: Json) => f.path) as string[];
    const own = (await demo.s.get(`/read/patchsets/${demo.main.ps2}/diff`)).files.map((f: Json) => f.path) as string[];
    const outside = own.find((p) => !inter.includes(p))!;
    expect(outside, 'a file of ps-2 the comparison does not list').to.be.a('string');
    expect(p2.changed_file_stats.files_changed).to.not.equal(inter.length);
    for (const p of [inter[0], outside]) await demo.s.put(`/changes/${demo.main.change}/viewed`, { user: 'vic', patchset_id: demo.main.ps2, path: p, viewed: true });
    await w.page.goto(url(demo.main.change, `?against=${demo.main.ps1}`));
    await w.page.locator('nav.file-tree .file-row').first().waitFor();
    await w.page.locator('nav.file-tree .tree-count', { hasText: 'viewed' }).waitFor();
    const n = inter.length;
    expect(await w.page.locator('#tabbtn-files .count-pill').innerText()).to.equal(String(n));
    expect(await w.page.locator('.diff-summary').innerText()).to.include(`${n} file${n === 1 ? '' : 's'} changed`);
    expect(await w.page.locator('nav.file-tree .tree-count').innerText()).to.equal(`${n} file${n === 1 ? '' : 's'} · 1 viewed`);
    // filtered: the count follows the rows listed
    await w.page.locator('nav.file-tree input[type="search"]').fill('zzz-no-such-file');
    await w.page.locator('nav.file-tree .tree-count', { hasText: `0 of ${n}` }).waitFor();
    expect(await w.page.locator('nav.file-tree .tree-count').innerText()).to.equal(`0 of ${n}`);
    expect(w.errors).to.deep.equal([]);
  });

  it('the description says the shown patchset\'s own base ("forked from"), and the patchset selectors show commit subjects, not whole messages', async () => {
    const head = (await demo.s.get('/lines/main')).head_snapshot_id as string;
    const b1 = await demo.s.snap({ ...BASE_TREE, 'NOTES.md': 'the line moved on\n' }, { parent: head, message: 'the line moves' });
    const r0 = await demo.s.snap({ ...BASE_TREE, 'src/x.ts': 'export const x = 1;\n' }, { parent: head, message: 'x' });
    const r1 = await demo.s.snap({ ...BASE_TREE, 'NOTES.md': 'the line moved on\n', 'src/x.ts': 'export const x = 1;\n' }, { parent: b1, message: 'x rebased' });
    const c = await demo.s.change('Add x');
    const ps1 = await demo.s.patchset(c.change, head, r0, 'Add x\n\nThe body of the commit message, which the selector leaves out.');
    const ps2 = await demo.s.patchset(c.change, b1, r1, 'Add x, rebased\n\nChange-Id: I0123456789abcdef0123456789abcdef01234567');
    await demo.s.post(`/changes/${c.change}:selectPatchset`, { patchset_id: ps2 });
    const w = await open();
    for (const [ps, base] of [[ps2, b1], [ps1, head]]) {
      await w.page.goto(url(c.change, `?ps=${ps}&tab=conversation`));
      const meta = w.page.locator('#description .meta');
      await meta.waitFor();
      const shown = await meta.locator('a, code').first().innerText();
      expect(base.startsWith(shown.trim()), `${shown} is the base of ${ps}`).to.equal(true);
    }
    await w.page.goto(url(c.change));
    await w.page.locator('.diff-summary').waitFor();
    const options = await w.page.locator('.files-toolbar select').first().locator('option').allInnerTexts();
    expect(options).to.deep.equal([`${short(ps1)} — Add x`, `${short(ps2)} (selected, latest) — Add x, rebased`]);
    const against = await w.page.getByLabel('Compare with').locator('option').allInnerTexts();
    expect(against).to.deep.equal(['its base', `${short(ps1)} — Add x`]);
    expect(w.errors).to.deep.equal([]);
  });

  it('the buttons that widen the context do not overlap the hunk header, in both layouts', async () => {
    const lines = Array.from({ length: 80 }, (_, i) => `export const value${i} = ${i};`);
    const edited = lines.map((l, i) => (i === 40 ? `export const value${i} = ${i * 2}; // doubled` : l));
    const x = await changeWith('Widen me', { 'src/wide.ts': `${edited.join('\n')}\n` }, 'widen');
    // the base needs the file too: a change on a base that has it
    const head = x.base;
    const b0 = await demo.s.snap({ ...BASE_TREE, 'src/wide.ts': `${lines.join('\n')}\n` }, { parent: head, message: 'wide base' });
    const r0 = await demo.s.snap({ ...BASE_TREE, 'src/wide.ts': `${edited.join('\n')}\n` }, { parent: b0, message: 'wide' });
    const c = await demo.s.change('Widen the context');
    await demo.s.patchset(c.change, b0, r0, 'widen');
    for (const view of ['unified', 'split']) {
      const w = await open();
      await w.page.goto(url(c.change, `?view=${view}`));
      const hunk = file(w.page, 'src/wide.ts').locator('tr.hunk').first();
      await hunk.locator('.expand-btn').first().waitFor();
      const overlap = await hunk.evaluate((tr) => {
        const text = tr.querySelector('.hunk-text')!.getBoundingClientRect();
        return [...tr.querySelectorAll('.expand-btn')].map((b) => b.getBoundingClientRect()).filter((r) => r.right > text.left && r.left < text.right && r.bottom > text.top && r.top < text.bottom).length;
      });
      expect(overlap, view).to.equal(0);
      expect(await hunk.locator('.expand-btn').count()).to.be.at.least(2);
      if (view === 'unified') await shot(w.page, 'change-hunk-buttons');
      expect(w.errors).to.deep.equal([]);
    }
  });

  it('at 390 px the first screen shows code: the first diff row is above the fold (screenshots in both themes)', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const w = await open({ width: 390, height: 844, colorScheme: scheme });
      await w.page.goto(url(demo.main.change));
      const row = w.page.locator('.diff-file .file-body tr:not(.hunk)').first();
      await row.waitFor();
      await shot(w.page, `change-phone-first-screen-${scheme}`);
      // the whole row is on the first screen
      const y = await row.evaluate((e) => e.getBoundingClientRect().bottom);
      expect(y, `first diff row ends at ${y}`).to.be.at.most(844);
      expect(await w.page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(390);
      expect(w.errors).to.deep.equal([]);
    }
  });
});
