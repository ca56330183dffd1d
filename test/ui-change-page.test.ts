// The change page as a reviewer reads it (docs/ui.md "The change page"), in a real browser: the
// diff first (the first diff row within 400 px of the top at 1400×900), the tabs, the sticky and
// filterable file tree grouped by directory, viewed marks (kept on the server, carried to a later
// patchset while the file's content is the same), "changes since your last review", the keys,
// line anchors (#file=P&line=R12), the description, and print showing every file. Same browser
// and seed as test/ui.test.ts; skipped, saying so, when no chromium binary exists.
import { expect } from 'chai';
import { mkdirSync, copyFileSync } from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import type { TestServer } from './helpers.js';
import { startUiSuite, SHOT_DIR } from './ui-browser.js';
import { BASE_TREE, type Demo, type Files } from './ui-seed.js';
import { lockfileEdit, numstat } from './diff-inputs.js';

/** A PNG of `w`×`h` pixels of one colour (written by hand: the seed pushes files as they are). */
function png(w: number, h: number, rgb: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body) >>> 0);
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour
  const rows: number[] = [];
  for (let y = 0; y < h; y++) {
    rows.push(0);
    for (let x = 0; x < w; x++) rows.push(...rgb);
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(Buffer.from(rows))), chunk('IEND', Buffer.alloc(0))]);
}

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
    // a full-page capture is checked here, not shown in the docs (it is many screens tall)
    if (process.env.UI_SCREENSHOTS_DIR && !options.fullPage) {
      mkdirSync(process.env.UI_SCREENSHOTS_DIR, { recursive: true });
      copyFileSync(file, path.join(process.env.UI_SCREENSHOTS_DIR, `${name}.png`));
    }
    return file;
  }

  const url = (change: string, rest = '') => `${s.url}/ui/repos/${demo.s.repo}/changes/${change}${rest}`;
  const file = (p: Page, filePath: string) => p.locator(`.diff-file[data-path="${filePath}"]`);
  /** The y of an element's top on the screen. */
  const top = (l: ReturnType<Page['locator']>) => l.evaluate((e) => e.getBoundingClientRect().top);

  /** `n` files of `lines` lines each under a few directories, every third line changed, as a new change on main's head. */
  async function wide(title: string, n: number, lines: number): Promise<{ change: string; ps: string; paths: string[] }> {
    const head = (await demo.s.get('/lines/main')).head_snapshot_id as string;
    const base: Files = { ...BASE_TREE };
    const rev: Files = { ...BASE_TREE };
    const paths: string[] = [];
    for (let i = 0; i < n; i++) {
      const p = `pkg/${['alpha', 'beta', 'gamma'][i % 3]}/file-${String(i).padStart(2, '0')}.ts`;
      paths.push(p);
      const a: string[] = [];
      const b: string[] = [];
      for (let j = 0; j < lines; j++) {
        a.push(`export const v${j} = ${j};`);
        b.push(j % 3 === 0 ? `export const v${j} = ${j * 10}; // changed` : `export const v${j} = ${j};`);
      }
      base[p] = `${a.join('\n')}\n`;
      rev[p] = `${b.join('\n')}\n`;
    }
    const b0 = await demo.s.snap(base, { parent: head, message: `${title}: base` });
    const r0 = await demo.s.snap(rev, { parent: b0, message: title });
    const c = await demo.s.change(title);
    const ps = await demo.s.patchset(c.change, b0, r0, title);
    return { change: c.change, ps, paths: paths.sort() };
  }

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
      await shot(w.page, `change-first-screen-${scheme}`);
      expect(w.errors).to.deep.equal([]);
    }
  });

  it('tabs: Conversation holds the description (summary and intent as Markdown), the threads and the reviews; Checks the policy, CI and attestation; a card\'s #name opens its tab; ?tab= keeps it', async () => {
    const c = await demo.s.change('Describe the change', { intent: 'Make the **checkout** explain itself; see [the runbook](https://example.com/runbook).' });
    const head = (await demo.s.get('/lines/main')).head_snapshot_id as string;
    const rev = await demo.s.snap({ ...BASE_TREE, 'README.md': `${BASE_TREE['README.md']}\nMore.\n` }, { parent: head, message: 'More' });
    await demo.s.patchset(c.change, head, rev, 'Explain the checkout\n\n- a `README` line\n- <script>window.pwned = 1</script>');
    const w = await open();
    await w.page.goto(url(c.change));
    await w.page.locator('.diff-file .file-body tr').first().waitFor();
    await w.page.getByRole('tab', { name: /Conversation/ }).click();
    expect(new URL(w.page.url()).searchParams.get('tab')).to.equal('conversation');
    const desc = w.page.locator('#description');
    await desc.waitFor();
    expect(await desc.locator('.ps-summary li code').allInnerTexts()).to.deep.equal(['README', '<script>window.pwned = 1</script>']);
    expect(await desc.locator('.task-intent strong').innerText()).to.equal('checkout');
    expect(await desc.locator('.task-intent a').getAttribute('href')).to.equal('https://example.com/runbook');
    expect(await desc.locator('script').count()).to.equal(0);
    expect(await w.page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).to.equal(undefined);
    expect(await w.page.locator('#reviews').isVisible()).to.equal(true);
    expect(await w.page.locator('.diff-file').first().isVisible()).to.equal(false);
    // a reload keeps the tab
    await w.page.reload();
    await w.page.locator('#description').waitFor();
    // Checks: policy, CI, attestation; the actions beside them
    await w.page.getByRole('tab', { name: /Checks/ }).click();
    await w.page.locator('#ci').waitFor();
    expect(await w.page.locator('#policy').isVisible()).to.equal(true);
    expect(await w.page.locator('#attestation').isVisible()).to.equal(true);
    expect(await w.page.locator('#actions').isVisible()).to.equal(true);
    // arrow keys move between the tabs
    await w.page.getByRole('tab', { name: /Checks/ }).focus();
    await w.page.keyboard.press('ArrowRight');
    await w.page.locator('#tab-files:not([hidden])').waitFor({ state: 'attached' });
    // focus follows on the next frame, after the panel shows
    await w.page.waitForFunction(() => document.activeElement?.id === 'tabbtn-files', undefined, { timeout: 5000 }).catch(() => undefined);
    expect(await w.page.evaluate(() => document.activeElement?.id)).to.equal('tabbtn-files');
    // a card's #name opens its tab (a queue entry links to #queue, the header to #conversation)
    await w.page.goto(url(demo.main.change, '#reviews'));
    await w.page.locator('#reviews .timeline').waitFor();
    await w.page.goto(url(demo.main.change, '#queue'));
    await w.page.locator('#queue').waitFor();
    expect(await w.page.getByRole('tab', { name: /Checks/ }).getAttribute('aria-selected')).to.equal('true');
    await w.page.getByRole('tab', { name: /Files/ }).click();
    await w.page.locator('.unresolved-count').click();
    await w.page.locator('#conversation').waitFor();
    expect(await w.page.getByRole('tab', { name: /Conversation/ }).getAttribute('aria-selected')).to.equal('true');
    await shot(w.page, 'change-conversation-tab');
    expect(w.errors).to.deep.equal([]);
  });

  it('the file tree: grouped by directory, sticky beside the diff, filtered with /, a file picked goes there', async () => {
    const x = await wide('A wide change', 12, 40);
    const w = await open();
    await w.page.goto(url(x.change));
    const tree = w.page.locator('nav.file-tree');
    await tree.locator('.file-row').first().waitFor();
    // nested: pkg/ once, its three directories under it
    expect(await tree.locator('.dir-row').allInnerTexts()).to.deep.equal(['▾pkg/', '▾alpha/', '▾beta/', '▾gamma/']);
    // rows in tree order; the diff in the same order
    const rows = await tree.locator('.file-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-path')));
    expect(rows).to.deep.equal(x.paths);
    expect(await w.page.locator('.diff-file').evaluateAll((els) => els.map((e) => e.getAttribute('data-path')))).to.deep.equal(x.paths);
    expect(await tree.locator('.file-row').first().innerText()).to.include('+14').and.include('−14');
    // sticky: after scrolling far down the diff the tree is still at the top of the screen
    const before = await top(tree);
    await w.page.evaluate(() => scrollTo(0, 3000));
    await w.page.waitForFunction(() => scrollY >= 2900);
    const after = await top(tree);
    expect(after, `tree at ${before} then ${after}`).to.be.within(40, 80);
    // / focuses the filter; typing narrows the tree; a file picked goes to its diff
    await w.page.locator('body').click({ position: { x: 5, y: 300 } });
    await w.page.keyboard.press('/');
    await w.page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Filter the changed files');
    await w.page.keyboard.type('gamma/file-08');
    await w.page.waitForFunction(() => document.querySelectorAll('nav.file-tree .file-row').length === 1);
    expect(await tree.locator('.tree-count').innerText()).to.equal('1 of 12');
    await tree.locator('.file-row a').click();
    await w.page.locator('.diff-file.current[data-path="pkg/gamma/file-08.ts"]').waitFor();
    const at = await top(file(w.page, 'pkg/gamma/file-08.ts'));
    expect(at).to.be.within(0, 120);
    expect(new URL(w.page.url()).hash).to.equal('#file=pkg%2Fgamma%2Ffile-08.ts');
    await shot(w.page, 'change-file-tree');
    expect(w.errors).to.deep.equal([]);
  });

  it('line anchors: #file=P&line=R12 scrolls to the line and marks it; a click on a line number puts its anchor in the URL (base side: L); copy the URL and it opens there', async () => {
    const x = await wide('Anchored lines', 6, 120);
    const target = x.paths[4];
    const w = await open();
    await w.page.goto(url(x.change, `#file=${encodeURIComponent(target)}&line=R100`));
    const row = file(w.page, target).locator('tr.anchored');
    await row.waitFor();
    expect(await row.locator('td.ln[data-side="revision"]').getAttribute('data-n')).to.equal('100');
    await w.page.waitForFunction(() => { const r = document.querySelector('tr.anchored')!.getBoundingClientRect(); return r.top > 0 && r.bottom < innerHeight; });
    // a click on another number (the base side of a removed line): the URL names it, its row is marked
    const del = file(w.page, target).locator('tr.del').nth(3);
    const old = await del.locator('td.ln[data-side="base"]').getAttribute('data-n');
    await del.locator('td.ln[data-side="base"]').click();
    await w.page.waitForFunction((h) => location.hash === h, `#file=${encodeURIComponent(target)}&line=L${old}`);
    expect(await file(w.page, target).locator('tr.anchored td.ln[data-side="base"]').getAttribute('data-n')).to.equal(old);
    expect(await w.page.locator('tr.anchored').count()).to.equal(1);
    // the editor opened too (the change is open): clicking a number still starts a comment
    await file(w.page, target).locator('.comment-editor').waitFor();
    // the copied URL opens a fresh page at that line
    const copied = w.page.url();
    const other = await open();
    await other.page.goto(copied);
    await other.page.locator(`.diff-file[data-path="${target}"] tr.anchored td.ln[data-side="base"][data-n="${old}"]`).waitFor();
    await other.page.waitForFunction(() => { const r = document.querySelector('tr.anchored')!.getBoundingClientRect(); return r.top > 0 && r.bottom < innerHeight; });
    await shot(other.page, 'change-line-anchor');
    expect(w.errors).to.deep.equal([]);
    expect(other.errors).to.deep.equal([]);
  });

  it('keys: j / k files, N / P hunks, ? the help listing every key', async () => {
    const x = await wide('Keys', 4, 90);
    const w = await open();
    await w.page.goto(url(x.change));
    await w.page.locator('.diff-file .file-body tr').first().waitFor();
    await w.page.keyboard.press('j');
    await w.page.locator(`.diff-file.current[data-path="${x.paths[0]}"]`).waitFor();
    await w.page.keyboard.press('j');
    await w.page.locator(`.diff-file.current[data-path="${x.paths[1]}"]`).waitFor();
    await w.page.keyboard.press('k');
    await w.page.locator(`.diff-file.current[data-path="${x.paths[0]}"]`).waitFor();
    // N: the next hunk header comes to the top of the screen (under the bar and the sticky file header)
    const hunkTops = async () => w.page.evaluate(() => [...document.querySelectorAll('.diff-file tr.hunk')].map((h) => Math.round(h.getBoundingClientRect().top)));
    const y0 = await w.page.evaluate(() => scrollY);
    await w.page.keyboard.press('Shift+N');
    await w.page.waitForFunction((y) => scrollY > y, y0);
    const first = (await hunkTops()).filter((t) => t >= 60 && t <= 120);
    expect(first.length, `a hunk header just under the top: ${await hunkTops()}`).to.equal(1);
    const y1 = await w.page.evaluate(() => scrollY);
    await w.page.keyboard.press('Shift+N');
    await w.page.waitForFunction((y) => scrollY > y, y1);
    await w.page.keyboard.press('Shift+P');
    await w.page.waitForFunction((y) => Math.abs(scrollY - y) < 4, y1);
    // ? opens the help with every key, Esc closes it
    await w.page.keyboard.press('?');
    const help = w.page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await help.waitFor();
    const text = await help.innerText();
    for (const k of ['j', 'k', 'n', 'p', 'N', 'P', 'v', '/', 'c', 'r', 'o', 'u', 's', '?']) expect(text).to.include(k);
    expect(text).to.include('viewed').and.include('hunk').and.include('filter').and.include('&line=R12');
    await shot(w.page, 'change-help');
    await w.page.keyboard.press('Escape');
    await help.waitFor({ state: 'detached' });
    expect(w.errors).to.deep.equal([]);
  });

  it('print and full-page capture show every file: a small diff is built whole once the page is idle, a large one when printing (beforeprint)', async () => {
    // small (8 × 45 lines): every body built in the background, no placeholder left
    const small = await wide('Printable', 8, 45);
    const w = await open();
    await w.page.goto(url(small.change));
    await w.page.locator('.diff-file .file-body tr').first().waitFor();
    await w.page.waitForFunction(() => document.querySelectorAll('.diff-file').length === 8 && document.querySelectorAll('.file-placeholder').length === 0, undefined, { timeout: 30_000 });
    expect(await w.page.locator('.diff-file .file-body').count()).to.equal(8);
    await shot(w.page, 'change-full-page', { fullPage: true });
    // large (16 × 240 lines): lazy at first; printing builds every body
    const large = await wide('Large printable', 16, 240);
    await w.page.goto(url(large.change));
    await w.page.locator('.diff-file .file-body tr').first().waitFor();
    await w.page.waitForFunction(() => document.querySelectorAll('.diff-file').length === 16);
    expect(await w.page.locator('.file-placeholder').count()).to.be.greaterThan(5);
    await w.page.emulateMedia({ media: 'print' });
    await w.page.evaluate(() => dispatchEvent(new Event('beforeprint')));
    await w.page.waitForFunction(() => document.querySelectorAll('.file-placeholder').length === 0 && document.querySelectorAll('.diff-file .file-body').length === 16, undefined, { timeout: 30_000 });
    // printed: the tree, the tabs and the top bar are gone, the last file's rows are there
    expect(await w.page.locator('nav.file-tree').isVisible()).to.equal(false);
    expect(await w.page.locator('.topbar').isVisible()).to.equal(false);
    expect(await file(w.page, large.paths[15]).locator('tr.add').count()).to.equal(80);
    const pdf = await w.page.pdf({ format: 'A4' });
    expect(pdf.length).to.be.greaterThan(50_000);
    expect(w.errors).to.deep.equal([]);
  });

  it('the selected patchset is not the newest: the head says so ("ps-1 is selected — what lands; ps-2 is the newest"), links to ps-2\'s diff, and Select ps-2 selects it (the note goes); with the newest selected there is none (screenshots at 1400×900 and 390 px)', async () => {
    // the demo change has its newest patchset selected: no note, and the diff keeps its place
    const plain = await open();
    await plain.page.goto(url(demo.main.change));
    await plain.page.locator('.diff-file .file-body tr').first().waitFor();
    await plain.page.locator('.readiness h2').waitFor();
    expect(await plain.page.locator('.selected-note').count()).to.equal(0);
    // POST .../patchsets does not select the new patchset: ps-1 stays selected, ps-2 is the newest
    const main = (await demo.s.get('/lines/main')).head_snapshot_id as string;
    const r1 = await demo.s.snap({ ...BASE_TREE, 'src/old.ts': 'export const old = 1;\n' }, { parent: main, message: 'old' });
    const r2 = await demo.s.snap({ ...BASE_TREE, 'src/new.ts': 'export const fresh = 2;\n' }, { parent: main, message: 'new' });
    const c = await demo.s.change('Selected is not the newest');
    const ps1 = await demo.s.patchset(c.change, main, r1, 'first');
    const ps2 = await demo.s.patchset(c.change, main, r2, 'second');
    expect((await demo.s.get(`/changes/${c.change}`)).change.selected_patchset_id).to.equal(ps1);
    for (const [width, height] of [[390, 844], [1400, 900]] as const) {
      const w = await open({ width, height });
      await w.page.goto(url(c.change));
      // the page opens on the selected patchset (what lands), and says it is not the newest
      await file(w.page, 'src/old.ts').locator('.file-body tr').first().waitFor();
      const note = w.page.getByTestId('selected-note');
      await note.waitFor();
      expect(await note.innerText()).to.include('ps-1 is selected — what lands; ps-2 is the newest');
      expect((await note.boundingBox())!.height, 'one compact line at 1400 px').to.be.at.most(width === 1400 ? 32 : 90);
      await shot(w.page, `change-selected-not-newest-${width}`);
      expect(w.errors).to.deep.equal([]);
    }
    // from the Conversation tab, the link opens ps-2's diff on the Files tab
    const w = await open();
    await w.page.goto(url(c.change, '?tab=conversation'));
    const note = w.page.getByTestId('selected-note');
    await note.getByRole('link', { name: "View ps-2's diff" }).click();
    await w.page.waitForFunction((ps) => new URL(location.href).searchParams.get('ps') === ps, ps2);
    await file(w.page, 'src/new.ts').locator('.file-body tr').first().waitFor();
    expect(await w.page.getByRole('tab', { name: /Files/ }).getAttribute('aria-selected')).to.equal('true');
    expect(await file(w.page, 'src/old.ts').count()).to.equal(0);
    // viewing ps-2 the note stays (ps-1 still lands) and links back to the selected one
    await note.getByRole('link', { name: 'View the selected ps-1' }).waitFor();
    // Select ps-2 (no auth mode: every operation is open) selects it on the server; the note goes
    await note.getByRole('button', { name: 'Select ps-2' }).click();
    await note.waitFor({ state: 'detached' });
    expect((await demo.s.get(`/changes/${c.change}`)).change.selected_patchset_id).to.equal(ps2);
    await w.page.goto(url(c.change));
    await file(w.page, 'src/new.ts').locator('.file-body tr').first().waitFor();
    expect(await w.page.locator('.selected-note').count()).to.equal(0);
    // ps-2 viewed while not selected has no attestation: its route answers 404, which the browser logs
    expect(w.errors.filter((e) => !/status of 404 .*\/patchsets\/[^/]+\.ps-2\/attestation$/.test(e))).to.deep.equal([]);
  });

  it('viewed marks: the checkbox and v mark a file viewed on the server (it folds, the tree shows ✓); on ps-2 a file whose content did not change stays viewed, an edited one does not; "Changes since your last review" shows the inter-patchset diff', async () => {
    const main = (await demo.s.get('/lines/main')).head_snapshot_id as string;
    const head = await demo.s.snap(BASE_TREE, { parent: main, message: 'base' });
    const one: Files = { ...BASE_TREE, 'src/a.ts': 'export const a = 1;\n', 'src/b.ts': 'export const b = 1;\n', 'docs/c.md': '# C\n' };
    const two: Files = { ...one, 'src/a.ts': 'export const a = 2;\n' };
    const r1 = await demo.s.snap(one, { parent: head, message: 'one' });
    const r2 = await demo.s.snap(two, { parent: head, message: 'two' });
    const c = await demo.s.change('Viewed marks');
    const ps1 = await demo.s.patchset(c.change, head, r1, 'first');
    const ps2 = await demo.s.patchset(c.change, head, r2, 'second');
    await demo.s.post(`/changes/${c.change}:selectPatchset`, { patchset_id: ps2 });
    const marks = async (ps: string): Promise<string[]> => (await demo.s.get(`/changes/${c.change}/viewed?user=vera&patchset=${ps}`)).paths;
    const w = await open({ me: 'vera' });
    // on ps-1: the checkbox marks src/b.ts, v marks the current file (src/a.ts, reached with j)
    await w.page.goto(url(c.change, `?ps=${ps1}`));
    const b = file(w.page, 'src/b.ts');
    await b.locator('.file-body tr').first().waitFor();
    await b.getByRole('checkbox', { name: 'Viewed: src/b.ts' }).check();
    await b.locator('.file-body').waitFor({ state: 'detached' });
    await w.page.locator('nav.file-tree .file-row.viewed[data-path="src/b.ts"] .viewed-mark').waitFor();
    // the tree marks the file at once; the PUT that keeps it may still be on its way
    for (let i = 0; i < 100 && (await marks(ps1)).length < 1; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await marks(ps1)).to.deep.equal(['src/b.ts']);
    await w.page.keyboard.press('j');
    await w.page.keyboard.press('j');
    await w.page.locator('.diff-file.current[data-path="src/a.ts"]').waitFor();
    await w.page.keyboard.press('v');
    await file(w.page, 'src/a.ts').locator('.file-head input[type="checkbox"]:checked').waitFor();
    for (let i = 0; i < 100 && (await marks(ps1)).length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await marks(ps1)).to.deep.equal(['src/a.ts', 'src/b.ts']);
    expect(await w.page.locator('nav.file-tree .tree-count').innerText()).to.include('2 viewed');
    // ps-2 (the selected one): src/b.ts is the same blob, so still viewed (folded); src/a.ts changed, so not
    await w.page.goto(url(c.change));
    await file(w.page, 'docs/c.md').locator('.file-body tr').first().waitFor();
    await w.page.locator('nav.file-tree .file-row.viewed[data-path="src/b.ts"]').waitFor();
    expect(await file(w.page, 'src/b.ts').getByRole('checkbox').isChecked()).to.equal(true);
    expect(await file(w.page, 'src/b.ts').locator('.file-body').count()).to.equal(0);
    expect(await file(w.page, 'src/a.ts').getByRole('checkbox').isChecked()).to.equal(false);
    await file(w.page, 'src/a.ts').locator('.file-body tr').first().waitFor();
    expect(await marks(ps2)).to.deep.equal(['src/b.ts']);
    await shot(w.page, 'change-viewed');
    // unmark on ps-2: it opens again, and the server forgets it for ps-2 only
    await file(w.page, 'src/b.ts').getByRole('checkbox').uncheck();
    await file(w.page, 'src/b.ts').locator('.file-body tr').first().waitFor();
    for (let i = 0; i < 100 && (await marks(ps2)).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await marks(ps2)).to.deep.equal([]);
    expect(await marks(ps1)).to.deep.equal(['src/a.ts', 'src/b.ts']);
    // no vote yet: no "changes since" button; after vera's review on ps-1, one click shows ps-1 → ps-2
    expect(await w.page.locator('.since-review').count()).to.equal(0);
    await demo.s.post(`/changes/${c.change}:selectPatchset`, { patchset_id: ps1 });
    await demo.s.review(c.change, ps1, 'vera', 'comment', 'Looked at the first one.');
    await demo.s.post(`/changes/${c.change}:selectPatchset`, { patchset_id: ps2 });
    await w.page.reload();
    const since = w.page.getByRole('button', { name: /Changes since your last review/ });
    await since.waitFor();
    await since.click();
    await w.page.waitForFunction((ps) => new URL(location.href).searchParams.get('against') === ps, ps1);
    await w.page.locator('nav.file-tree .file-row').first().waitFor();
    expect(await w.page.locator('nav.file-tree .file-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-path')))).to.deep.equal(['src/a.ts']);
    expect(await w.page.locator('select[aria-label="Compare with"]').inputValue()).to.equal(ps1);
    // ps-1 has no attestation: its route answers 404, which the browser logs (docs/ui.md); nothing else
    expect(w.errors.filter((e) => !/status of 404 .*\/patchsets\/[^/]+\.ps-1\/attestation$/.test(e))).to.deep.equal([]);
  });

  it('a faithful diff: changed words marked, whitespace ignored on request (remembered), context widened with ?lines=, a rename with only its edited line, an image change side by side (screenshots)', async () => {
    const main = (await demo.s.get('/lines/main')).head_snapshot_id as string;
    const consts = Array.from({ length: 80 }, (_, i) => `export const C${i + 1} = ${i + 1};`);
    const moved = Array.from({ length: 30 }, (_, i) => `export function f${i}(): number { return ${i}; }`);
    const py = ['def main(orders):', '    total = 0', '    for o in orders:', '        total += o', '    return total'];
    const svg = (fill: string) => `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="${fill}"/><script>window.pwned = 1</script></svg>\n`;
    const baseFiles = { ...BASE_TREE, 'src/consts.ts': `${consts.join('\n')}\n`, 'old/name.ts': `${moved.join('\n')}\n`, 'tools/sum.py': `${py.join('\n')}\n`, 'img/logo.png': png(2, 3, [200, 30, 30]) as unknown as string, 'img/icon.svg': svg('red') };
    const revConsts = consts.map((l, i) => (i === 49 ? 'export const C50 = 5000;' : l));
    const revMoved = moved.map((l, i) => (i === 10 ? 'export function f10(): number { return 100; }' : l));
    const revPy = py.map((l) => l.replace(/^( +)/, (m) => ' '.repeat(m.length / 2))).map((l) => l.replace('return total', 'return int(total)'));
    const { 'old/name.ts': _gone, ...kept } = baseFiles;
    const revFiles = { ...kept, 'src/consts.ts': `${revConsts.join('\n')}\n`, 'lib/name.ts': `${revMoved.join('\n')}\n`, 'tools/sum.py': `${revPy.join('\n')}\n`, 'img/logo.png': png(4, 5, [30, 30, 200]) as unknown as string, 'img/icon.svg': svg('blue') };
    const base = await demo.s.snap(baseFiles, { parent: main, message: 'base' });
    const rev = await demo.s.snap(revFiles, { parent: base, message: 'faithful' });
    const c = await demo.s.change('A faithful diff');
    await demo.s.patchset(c.change, base, rev, 'words, whitespace, a rename, images');
    const w = await open();
    const asked: string[] = [];
    w.page.on('request', (r) => { if (r.url().includes('/v1/')) asked.push(decodeURIComponent(r.url())); });
    await w.page.goto(url(c.change));
    // words: the one changed constant is marked inside its lines, not the whole line
    const consts50 = file(w.page, 'src/consts.ts');
    await consts50.locator('.file-body tr.del').waitFor();
    expect(await consts50.locator('tr.del mark.wd').allInnerTexts()).to.deep.equal(['50']);
    expect(await consts50.locator('tr.add mark.wd').allInnerTexts()).to.deep.equal(['5000']);
    // a rename with a one-line edit: listed once, "renamed from … (NN%)", only the edited line
    const renamed = file(w.page, 'lib/name.ts');
    await renamed.locator('.file-body tr.add').waitFor();
    expect(await renamed.locator('.renamed-from').innerText()).to.match(/^renamed from old\/name\.ts \(9\d%\)$/);
    expect(await renamed.locator('tr.add').count()).to.equal(1);
    expect(await renamed.locator('tr.del').count()).to.equal(1);
    expect(await w.page.locator('.diff-file[data-path="old/name.ts"]').count()).to.equal(0);
    expect(await w.page.locator('nav.file-tree .file-row[data-path="lib/name.ts"] .chg').innerText()).to.equal('R');
    // images: both versions, from the file content route, with their dimensions and sizes; SVG through <img>
    const logo = file(w.page, 'img/logo.png');
    await logo.scrollIntoViewIfNeeded();
    const imgs = logo.locator('.image-pair img');
    await imgs.nth(1).waitFor();
    await w.page.waitForFunction(() => [...document.querySelectorAll('.diff-file[data-path="img/logo.png"] .image-pair img')].every((i) => (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth > 0));
    expect(await imgs.evaluateAll((els) => els.map((e) => (e as HTMLImageElement).naturalWidth))).to.deep.equal([2, 4]);
    expect(await imgs.first().getAttribute('src')).to.match(new RegExp(`/read/snapshots/${base}/files/img/logo\\.png$`));
    const captions = await logo.locator('figcaption').allInnerTexts();
    expect(captions[0]).to.include('2 × 3 px').and.include('png');
    expect(captions[1]).to.include('4 × 5 px');
    const icon = file(w.page, 'img/icon.svg');
    await icon.scrollIntoViewIfNeeded();
    await icon.locator('.image-pair img').nth(1).waitFor();
    expect(await w.page.locator('.diff-file[data-path="img/icon.svg"] svg').count()).to.equal(0);
    await w.page.waitForFunction(() => [...document.querySelectorAll('.diff-file[data-path="img/icon.svg"] .image-pair img')].every((i) => (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth === 40));
    expect(await w.page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).to.equal(undefined);
    await logo.scrollIntoViewIfNeeded();
    await shot(w.page, 'change-image-diff');
    // expand: ↑ shows the 20 lines above the hunk (47..53 shown: 27..46), numbered alike on both sides
    await consts50.scrollIntoViewIfNeeded();
    const hunkRow = consts50.locator('tr.hunk').first();
    await hunkRow.getByRole('button', { name: 'Show 20 more lines above' }).click();
    await consts50.locator('tr.expanded td.ln[data-side="revision"][data-n="27"]').waitFor();
    expect(await consts50.locator('tr.expanded').count()).to.equal(20);
    expect(await consts50.locator('tr.expanded td.ln[data-side="base"][data-n="27"]').count()).to.equal(1);
    expect(await consts50.locator('tr.expanded', { hasText: 'export const C27 = 27;' }).count()).to.equal(1);
    expect(asked.some((u) => u.includes(`/read/snapshots/${rev}/files/src/consts.ts?lines=27-46`))).to.equal(true);
    await shot(w.page, 'change-expanded');
    // the whole file: every line, no gap left to widen
    await consts50.getByRole('button', { name: 'whole file' }).first().click();
    await consts50.locator('tr.expanded td.ln[data-side="revision"][data-n="80"]').waitFor();
    expect(await consts50.locator('tr.expanded').count()).to.equal(73); // 80 lines, 7 of them in the hunk
    expect(await consts50.locator('.expand-btn').count()).to.equal(0);
    // whitespace: ignoring all of it leaves the reindented file with its one real change; the choice is remembered
    expect(await file(w.page, 'tools/sum.py').locator('tr.add').count()).to.equal(4);
    await w.page.getByRole('combobox', { name: 'Whitespace' }).selectOption('ignore-all');
    await w.page.waitForFunction(() => document.querySelectorAll('.diff-file[data-path="tools/sum.py"] tr.add').length === 1);
    expect(await file(w.page, 'tools/sum.py').locator('tr.add').innerText()).to.include('return int(total)');
    expect(asked.some((u) => /\/diff\?whitespace=ignore-all/.test(u))).to.equal(true);
    await w.page.reload();
    await file(w.page, 'tools/sum.py').locator('tr.add').first().waitFor();
    expect(await w.page.getByRole('combobox', { name: 'Whitespace' }).inputValue()).to.equal('ignore-all');
    expect(await file(w.page, 'tools/sum.py').locator('tr.add').count()).to.equal(1);
    await w.page.getByRole('combobox', { name: 'Whitespace' }).selectOption('');
    await w.page.waitForFunction(() => document.querySelectorAll('.diff-file[data-path="tools/sum.py"] tr.add').length === 4);
    await consts50.scrollIntoViewIfNeeded();
    await shot(w.page, 'change-word-diff');
    expect(w.errors).to.deep.equal([]);
  });

  it('a large diff not loaded with the others: its true counts, why, "Load diff (N lines, X KB)" and both versions; loaded, its line comments sit on their lines (screenshots at 1400×900 and 390×844, both themes)', async () => {
    const [before, after] = lockfileEdit();
    const head = (await demo.s.get('/lines/main')).head_snapshot_id as string;
    const b0 = await demo.s.snap({ ...BASE_TREE, 'package-lock.json': before }, { parent: head, message: 'lockfile: base' });
    const r0 = await demo.s.snap({ ...BASE_TREE, 'package-lock.json': after, 'README.md': `${BASE_TREE['README.md']}Dependencies updated.\n` }, { parent: b0, message: 'Update the dependencies' });
    const c = await demo.s.change('Update the dependencies');
    const ps = await demo.s.patchset(c.change, b0, r0, 'npm update');
    // Four line comments on lines the lockfile's diff adds.
    const rows = after.split('\n');
    const lines = ['new-10', 'new-120', 'new-200', 'new-310'].map((n) => rows.findIndex((l) => l.includes(`"node_modules/${n}"`)) + 1);
    for (const [i, line] of lines.entries()) await demo.s.comment(c.change, { patchset_id: ps, author: 'alice', anchor: { path: 'package-lock.json', line }, body: `Comment ${i + 1}: is this package needed?` });
    const [adds, dels] = await numstat(before, after);
    for (const [scheme, width, height] of [['light', 1400, 900], ['dark', 1400, 900], ['light', 390, 844], ['dark', 390, 844]] as const) {
      const w = await open({ colorScheme: scheme, width, height });
      await w.page.goto(url(c.change));
      const f = file(w.page, 'package-lock.json');
      const note = f.locator('.left-out');
      await note.waitFor();
      // The counts are git's, on the file and in the bar (the README's line added too).
      expect(await f.locator('.file-head .stat').innerText()).to.equal(`+${adds.toLocaleString('en-US')} −${dels.toLocaleString('en-US')}`);
      expect(await w.page.locator('.diff-summary > .add-text').innerText()).to.equal(`+${(adds + 1).toLocaleString('en-US')}`);
      expect(await w.page.locator('.diff-summary > .del-text').innerText()).to.equal(`−${dels.toLocaleString('en-US')}`);
      expect(await w.page.locator('.diff-summary').innerText()).to.include('2 files changed').and.include('1 diff not loaded');
      expect(await note.innerText()).to.include('This diff is large, so it is not loaded with the others.');
      const load = note.getByRole('button', { name: /^Load diff \([\d,]+ lines, \d+(\.\d)? KB\)$/ });
      expect(await load.count()).to.equal(1);
      const base = await note.getByRole('link', { name: 'Old version' }).getAttribute('href');
      const rev = await note.getByRole('link', { name: 'New version' }).getAttribute('href');
      expect(base).to.match(/\/read\/snapshots\/[0-9a-f]{64}\/files\/package-lock\.json$/);
      expect(await (await fetch(`${s.url}${rev}`)).text()).to.equal(after);
      // Before loading, the four threads wait at the top of the file, saying where they are.
      expect(await f.locator('.file-threads article.thread').count()).to.equal(4);
      await f.scrollIntoViewIfNeeded();
      await shot(w.page, `change-large-diff-${width}-${scheme}`);
      await load.click();
      // Loaded: the hunks, and each thread under its line.
      await f.locator('tr.thread-row').first().waitFor();
      expect(await f.locator('tr.thread-row article.thread').count()).to.equal(4);
      expect(await f.locator('.file-threads article.thread').count()).to.equal(0);
      for (const line of lines) expect(await f.locator(`td.ln[data-side="revision"][data-n="${line}"]`).count(), `line ${line}`).to.equal(1);
      expect(await w.page.locator('.diff-summary').innerText()).not.to.include('not loaded');
      await f.locator('tr.thread-row').first().scrollIntoViewIfNeeded();
      await shot(w.page, `change-large-diff-loaded-${width}-${scheme}`);
      expect(w.errors).to.deep.equal([]);
    }
  });
  it('a moved block: both places striped, the first line of each says where the block went or came from and links there (screenshots in both themes)', async () => {
    const head = (await demo.s.get('/lines/main')).head_snapshot_id as string;
    const fn = (name: string) => [`export function ${name}(order: Order): number {`, `  const ${name}Total = order.items.reduce((a, i) => a + i.price, 0);`, `  return Math.round(${name}Total * 100) / 100;`, `} // ${name}`];
    const filler = Array.from({ length: 12 }, (_, i) => `export const limit${i} = ${i * 10};`);
    const before = ['interface Order { items: { price: number }[] }', ...fn('subtotal'), ...filler, ...fn('shipping'), ''].join('\n');
    const after = ['interface Order { items: { price: number }[] }', ...fn('shipping'), ...filler, ...fn('subtotal'), ''].join('\n');
    const b0 = await demo.s.snap({ ...BASE_TREE, 'src/checkout/totals.ts': before }, { parent: head, message: 'totals' });
    const r0 = await demo.s.snap({ ...BASE_TREE, 'src/checkout/totals.ts': after }, { parent: b0, message: 'reorder' });
    const c = await demo.s.change('Put shipping before subtotal');
    await demo.s.patchset(c.change, b0, r0, 'reorder');
    for (const scheme of ['light', 'dark'] as const) {
      const w = await open({ colorScheme: scheme });
      await w.page.goto(url(c.change));
      const f = file(w.page, 'src/checkout/totals.ts');
      await f.locator('tr.moved').first().waitFor();
      // every changed line is part of a moved block: 4 lines each way, twice
      expect(await f.locator('tr.del.moved').count()).to.equal(8);
      expect(await f.locator('tr.add.moved').count()).to.equal(8);
      const labels = await f.locator('.moved-link').allInnerTexts();
      expect(labels.sort()).to.deep.equal(['moved from line 18 ↓', 'moved from line 2 ↑', 'moved to line 18 ↓', 'moved to line 2 ↑'].sort());
      // no changed words marked on a moved line (its pairing with the line beside it means nothing)
      expect(await f.locator('tr.moved mark.wd').count()).to.equal(0);
      await shot(w.page, `change-moved-${scheme}`);
      // the link goes to the other place: the URL names its line, and its row is marked
      await f.locator('.moved-link', { hasText: 'moved to line 18' }).click();
      await w.page.waitForFunction(() => location.hash.endsWith('&line=R18'));
      const marked = f.locator('tr.anchored');
      await marked.waitFor();
      expect(await marked.locator('td.ln[data-side="revision"]').getAttribute('data-n')).to.equal('18');
      expect(w.errors).to.deep.equal([]);
    }
  });
  it('a block moved to another file: the first line of each place says "moved to FILE:N" / "moved from FILE:N" and links to the other file\'s line (screenshot)', async () => {
    const head = (await demo.s.get('/lines/main')).head_snapshot_id as string;
    const helper = ['export function formatPrice(cents: number): string {', '  const euros = Math.floor(cents / 100);', '  return `${euros}.${String(cents % 100).padStart(2, "0")} EUR`;', '}'];
    const pad = (name: string, n: number) => Array.from({ length: n }, (_, i) => `export const ${name}${i} = ${i};`);
    const text = (ls: string[]) => `${ls.join('\n')}\n`;
    const b0 = await demo.s.snap({ ...BASE_TREE, 'src/cart/price.ts': text([...pad('cart', 5), ...helper, ...pad('tail', 5)]), 'src/util/money.ts': text(pad('money', 6)) }, { parent: head, message: 'price' });
    const r0 = await demo.s.snap({ ...BASE_TREE, 'src/cart/price.ts': text([...pad('cart', 5), ...pad('tail', 5)]), 'src/util/money.ts': text([...pad('money', 2), ...helper, ...pad('money', 6).slice(2)]) }, { parent: b0, message: 'move' });
    const c = await demo.s.change('Move the price helper to util');
    await demo.s.patchset(c.change, b0, r0, 'move');
    const w = await open();
    await w.page.goto(url(c.change));
    const from = file(w.page, 'src/cart/price.ts');
    const to = file(w.page, 'src/util/money.ts');
    await from.locator('tr.moved').first().waitFor();
    await to.locator('tr.moved').first().waitFor();
    expect(await from.locator('tr.del.moved').count()).to.equal(4);
    expect(await to.locator('tr.add.moved').count()).to.equal(4);
    expect(await from.locator('.moved-link').allInnerTexts()).to.deep.equal(['moved to src/util/money.ts:3']);
    expect(await to.locator('.moved-link').allInnerTexts()).to.deep.equal(['moved from src/cart/price.ts:6']);
    await to.locator('tr.moved').first().scrollIntoViewIfNeeded();
    await shot(w.page, 'change-moved-across-light');
    // the link goes to the other file's line: the URL names it, and that row is marked
    await to.locator('.moved-link').click();
    await w.page.waitForFunction(() => location.hash === `#file=${encodeURIComponent('src/cart/price.ts')}&line=L6`);
    const marked = from.locator('tr.anchored');
    await marked.waitFor();
    expect(await marked.locator('td.ln[data-side="base"]').getAttribute('data-n')).to.equal('6');
    expect(w.errors).to.deep.equal([]);
    // The same marks in the dark theme and at phone width (a link per place, nothing cut off).
    for (const [scheme, width, height, name] of [['dark', 1400, 900, 'change-moved-across-dark'], ['light', 390, 844, 'change-moved-across-phone-light'], ['dark', 390, 844, 'change-moved-across-phone-dark']] as const) {
      const v = await open({ colorScheme: scheme, width, height });
      await v.page.goto(url(c.change));
      const moved = file(v.page, 'src/util/money.ts').locator('tr.moved').first();
      await moved.waitFor();
      expect(await file(v.page, 'src/util/money.ts').locator('.moved-link').allInnerTexts()).to.deep.equal(['moved from src/cart/price.ts:6']);
      await moved.scrollIntoViewIfNeeded();
      await shot(v.page, name);
      expect(v.errors).to.deep.equal([]);
    }
  });
});
