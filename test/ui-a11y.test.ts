// The reviewer UI measured by tools and sizes nobody here chose: axe-core (WCAG 2.0/2.1 A and
// AA plus best practices) over every page in both themes, every page at a phone's width
// (390×844), and Back to a long diff at the place the reader left it. Same browser and seed as
// test/ui.test.ts (Debian's chromium through playwright-core); skipped, saying so, when no
// chromium binary exists.
import { expect } from 'chai';
import { mkdirSync, copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { TestServer } from './helpers.js';
import { startUiSuite, SHOT_DIR } from './ui-browser.js';
import { BASE_TREE, type Demo } from './ui-seed.js';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

interface AxeNode { target: string[]; failureSummary?: string }
interface AxeViolation { id: string; impact: string | null; help: string; nodes: AxeNode[] }

/** A long file for the scroll test: 400 lines, every fifth one changed, with a comment long enough to wrap (so a built body is taller than its placeholder). */
function longFile(rev: boolean): string {
  const out: string[] = [];
  for (let i = 0; i < 400; i++) out.push(rev && i % 5 === 0 ? `export const value${i} = ${i * 2}; // doubled, ${'as the tables of the next release expect them to be '.repeat(4)}` : `export const value${i} = ${i};`);
  return out.join('\n') + '\n';
}

describe('reviewer UI: accessibility, small screens and Back (Chromium)', function () {
  this.timeout(240_000);
  let browser: Browser;
  let s: TestServer;
  let demo: Demo;
  let long: { change: string };
  let pages: Array<{ name: string; url: string; ready: (p: Page) => Promise<void> }>;
  const contexts: BrowserContext[] = [];

  before(async function () {
    ({ browser, s, demo } = await startUiSuite(this));
    // a change with a long diff: twelve 400-line files
    const head = (await demo.s.get('/lines/main')).head_snapshot_id as string;
    const baseFiles: Record<string, string> = { ...BASE_TREE };
    const revFiles: Record<string, string> = { ...BASE_TREE };
    for (let i = 0; i < 12; i++) {
      baseFiles[`src/generated/very/deeply/nested/directory/table-${i}.ts`] = longFile(false);
      revFiles[`src/generated/very/deeply/nested/directory/table-${i}.ts`] = longFile(true);
    }
    const b = await demo.s.snap(baseFiles, { parent: head, message: 'Tables' });
    const r = await demo.s.snap(revFiles, { parent: b, message: 'Double every fifth value' });
    const c = await demo.s.change('Double every fifth value in the generated tables');
    await demo.s.patchset(c.change, b, r, 'Double them');
    long = { change: c.change };

    const repo = demo.s.repo;
    const at = (rest: string) => `${s.url}/ui/repos/${repo}${rest}`;
    const plan = 'plan-1';
    const land = 'land-1'; // the seed's first land: the landed change's
    const task = (await demo.s.get(`/changes/${demo.main.change}`)).change.task_id as string;
    const heading = (p: Page) => p.locator('main h1').first().waitFor();
    pages = [
      { name: 'repositories', url: `${s.url}/ui/`, ready: async (p) => { await p.locator('main a[href^="/ui/repos/"]').first().waitFor(); } },
      { name: 'dashboard', url: at(''), ready: async (p) => { await p.getByRole('heading', { name: 'Needs review' }).waitFor(); } },
      { name: 'changes', url: at('/changes'), ready: heading },
      {
        name: 'change', url: at(`/changes/${demo.main.change}`),
        ready: async (p) => {
          await p.locator('.diff-file[data-path="src/checkout/rate-limit.ts"]').scrollIntoViewIfNeeded();
          await p.locator('.diff tr.add .hljs-keyword').first().waitFor();
          await p.locator('.diff tr.add .hljs-comment, .diff tr.add .hljs-string').first().waitFor();
          // the seeded comment threads, inline (the ported one on rate-limit.ts); the Conversation card is in its tab
          await p.locator(`[data-thread-id="${demo.main.threads.ported}"]`).waitFor();
          await p.locator(`[data-thread-id="${demo.main.threads.general}"]`).waitFor({ state: 'attached' });
        },
      },
      {
        name: 'change-conversation', url: at(`/changes/${demo.main.change}?tab=conversation`),
        ready: async (p) => {
          await p.locator('#description').waitFor();
          await p.locator(`[data-thread-id="${demo.main.threads.general}"]`).waitFor();
          await p.locator('#reviews .timeline').waitFor();
        },
      },
      { name: 'change-checks', url: at(`/changes/${demo.main.change}?tab=checks`), ready: async (p) => { await p.locator('#ci').waitFor(); await p.locator('#attestation').waitFor(); } },
      { name: 'change-landed', url: at(`/changes/${demo.landed.change}`), ready: async (p) => { await p.locator('.readiness.landed').waitFor(); } },
      { name: 'task', url: at(`/tasks/${task}`), ready: heading },
      { name: 'jobs', url: at('/jobs'), ready: async (p) => { await p.locator('.jobs tbody tr').first().waitFor(); } },
      { name: 'job', url: at(`/jobs/${demo.failing.job}`), ready: heading },
      { name: 'lines', url: at('/lines'), ready: async (p) => { await p.locator('main a[href$="/lines/main"]').first().waitFor(); } },
      { name: 'line', url: at('/lines/main'), ready: async (p) => { await p.locator('.history li').first().waitFor(); } },
      { name: 'snapshot', url: at(`/snapshots/${demo.base}`), ready: heading },
      { name: 'plans', url: at('/plans'), ready: heading },
      { name: 'plan', url: at(`/plans/${plan}`), ready: async (p) => { await p.locator('.markdown').first().waitFor(); } },
      { name: 'land', url: at(`/lands/${land}`), ready: heading },
      { name: 'search', url: at('/search?q=status%3Areview'), ready: async (p) => { await p.locator('main p[aria-live]').waitFor(); } },
    ];
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await s?.stop();
  });

  /** `bypassCSP`: for axe-core, which playwright injects as an inline script (the UI's CSP forbids those). */
  async function open(options: { colorScheme?: 'light' | 'dark'; width?: number; height?: number; bypassCSP?: boolean } = {}): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ viewport: { width: options.width ?? 1440, height: options.height ?? 1000 }, colorScheme: options.colorScheme ?? 'light', bypassCSP: options.bypassCSP ?? false });
    contexts.push(context);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    return { page, errors };
  }

  /** Waits until the page has read what it shows: its own ready mark, then no "Loading…" left. */
  async function settle(p: Page, ready: (p: Page) => Promise<void>): Promise<void> {
    await ready(p);
    await p.waitForFunction(() => document.querySelectorAll('.loading').length === 0, undefined, { timeout: 15_000 });
    await p.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  }

  /** A screenshot in $TMPDIR/cairn-ui-screenshots; `docs` ones are also copied to $UI_SCREENSHOTS_DIR (docs/screenshots). */
  async function shot(page: Page, name: string, docs = false): Promise<void> {
    const file = path.join(SHOT_DIR, `${name}.png`);
    await page.screenshot({ path: file });
    if (docs && process.env.UI_SCREENSHOTS_DIR) {
      mkdirSync(process.env.UI_SCREENSHOTS_DIR, { recursive: true });
      copyFileSync(file, path.join(process.env.UI_SCREENSHOTS_DIR, `${name}.png`));
    }
  }

  async function axe(p: Page): Promise<AxeViolation[]> {
    if (!(await p.evaluate(() => 'axe' in window))) await p.addScriptTag({ path: AXE });
    return p.evaluate(async (tags) => {
      const w = window as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: AxeViolation[] }> } };
      const r = await w.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
      return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) }));
    }, AXE_TAGS);
  }

  it('axe-core finds no serious or critical violation on any page, in either theme (the rest is printed)', async function () {
    // The CSP forbids inline scripts; playwright's addScriptTag inserts one, so bypass it for this check.
    const serious: string[] = [];
    const other: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      const context = await browser.newContext({ viewport: { width: 1440, height: 1000 }, colorScheme: scheme, bypassCSP: true });
      contexts.push(context);
      // as dana, whose draft thread the seed wrote: drafts are checked too
      await context.addInitScript(() => localStorage.setItem('cairn.reviewer', 'dana'));
      const p = await context.newPage();
      for (const pg of [...pages, { name: 'change-split', url: `${pages[3].url}?view=split#file=src%2Fcheckout%2Frate-limit.ts`, ready: async (q: Page) => { await q.locator('.diff.split .hljs-keyword').first().waitFor(); } }]) {
        await p.goto(pg.url);
        await settle(p, pg.ready);
        if (pg.name.startsWith('change')) {
          // build every diff body, so the highlighted lines are checked too
          await p.evaluate(() => document.getElementById('files')?.scrollIntoView());
          await p.waitForTimeout(300);
        }
        if (pg.name === 'change') {
          // an open comment editor (its textarea and buttons) and a thread's reply editor are checked too
          await p.locator('.diff-file[data-path="src/checkout/rate-limit.ts"] td.ln[data-side="revision"][data-n="10"]').click();
          await p.locator('.comment-editor textarea').first().waitFor();
          await p.locator(`[data-thread-id="${demo.main.threads.replied}"]`).getByRole('button', { name: 'Reply', exact: true }).click();
          await p.locator(`[data-thread-id="${demo.main.threads.replied}"] .comment-editor`).waitFor();
        }
        if (['dashboard', 'change', 'change-landed', 'plan', 'jobs'].includes(pg.name)) await shot(p, `a11y-${scheme}-${pg.name}`);
        for (const v of await axe(p)) {
          const line = `${scheme} ${pg.name}: ${v.id} (${v.impact}, ${v.nodes.length}) ${v.help}: ${v.nodes.slice(0, 4).map((n) => n.target.join(' ')).join(' | ')}`;
          (v.impact === 'serious' || v.impact === 'critical' ? serious : other).push(line);
        }
      }
    }
    if (other.length) console.log(`      axe-core, minor and moderate:\n${other.map((l) => `        ${l}`).join('\n')}`);
    expect(serious, serious.join('\n')).to.deep.equal([]);
  });

  it('at 390×844 no page is wider than the screen (nor fails axe-core), the breadcrumb is readable, file paths keep their file name, and the diff is unified', async () => {
    const wide: string[] = [];
    const { page: p, errors } = await open({ width: 390, height: 844, bypassCSP: true });
    for (const pg of pages) {
      await p.goto(pg.url);
      await settle(p, pg.ready);
      // the phone layout is checked by axe-core too (a table that scrolls in its own box, ...)
      for (const v of await axe(p)) if (v.impact === 'serious' || v.impact === 'critical') wide.push(`${pg.name}: axe-core ${v.id} (${v.impact}) ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
      const m = await p.evaluate(() => {
        const offenders = [...document.querySelectorAll('main *')]
          .filter((e) => e.getBoundingClientRect().right > innerWidth + 1 && !e.closest('.table-scroll, .file-body, .md-table, pre, .file-list'))
          .slice(0, 3)
          .map((e) => `${e.tagName.toLowerCase()}.${[...e.classList].join('.')}`);
        return { scroll: document.documentElement.scrollWidth, inner: innerWidth, offenders };
      });
      if (m.scroll > m.inner) wide.push(`${pg.name}: ${m.scroll} > ${m.inner} (${m.offenders.join(', ')})`);
      // every breadcrumb shows its whole text
      const crumbs = await p.locator('.crumbs a, .crumbs span:not(.sep):not(.brand-mark)').evaluateAll((els) => els.map((e) => ({ text: e.textContent, cut: e.scrollWidth > e.clientWidth + 1 })));
      for (const c of crumbs) if (c.cut) wide.push(`${pg.name}: the breadcrumb "${c.text}" is cut`);
      await shot(p, `phone-${pg.name}`);
      if (pg.name === 'change') {
        await p.evaluate(() => scrollTo(0, 0));
        await shot(p, 'phone-change-top');
      }
    }
    expect(wide, wide.join('\n')).to.deep.equal([]);

    // the long paths of the long change: the directory is cut, the file name is whole, the title is the path
    await p.goto(`${s.url}/ui/repos/${demo.s.repo}/changes/${long.change}?view=split`);
    // on a phone the tree starts folded to its count (code on the first screen): open it
    await p.getByRole('button', { name: 'Show the files' }).click();
    await p.locator('.file-list .path-cell').first().waitFor();
    const cells = await p.locator('.file-list .path-cell').evaluateAll((els) => els.map((e) => {
      const name = e.querySelector('.path-name') as HTMLElement | null;
      const dir = e.querySelector('.path-dir') as HTMLElement | null;
      return { text: e.textContent, title: e.querySelector('[title]')?.getAttribute('title') ?? e.getAttribute('title'), nameWhole: !!name && name.scrollWidth <= name.clientWidth + 1, dirCut: !!dir && dir.scrollWidth > dir.clientWidth };
    }));
    expect(cells.length).to.equal(12);
    for (const c of cells) {
      expect(c.title).to.equal(c.text);
      expect(c.nameWhole, `${c.text}: file name whole`).to.equal(true);
      expect(c.dirCut, `${c.text}: directory cut`).to.equal(true);
    }
    await p.locator('.files-toolbar').scrollIntoViewIfNeeded();
    await p.evaluate(() => document.querySelector('.files-toolbar')!.scrollIntoView());
    await p.waitForTimeout(300);
    await shot(p, 'change-phone', true);
    // side by side asked for (?view=split), but the screen is too narrow: unified, and the page says so
    await p.locator('.diff-file').first().scrollIntoViewIfNeeded();
    await p.locator('.diff.unified').first().waitFor();
    expect(await p.locator('.diff.split').count()).to.equal(0);
    expect(await p.getByRole('button', { name: 'Side by side' }).isDisabled()).to.equal(true);
    expect(await p.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).to.equal(true);
    await shot(p, 'phone-change-long');
    // the patchset selectors fit
    for (const sel of await p.locator('.files-toolbar select').all()) {
      const box = (await sel.boundingBox())!;
      expect(box.x + box.width).to.be.at.most(390);
    }
    // the dark theme at that width too
    const dark = await open({ width: 390, height: 844, colorScheme: 'dark' });
    await dark.page.goto(pages[3].url);
    await settle(dark.page, pages[3].ready);
    expect(await dark.page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).to.equal(true);
    await shot(dark.page, 'phone-change-dark');
    expect(errors).to.deep.equal([]);
    expect(dark.errors).to.deep.equal([]);
  });

  it('Back returns to a long diff at the place the reader left it', async () => {
    const { page: p, errors } = await open({ width: 1280, height: 800 });
    await p.goto(`${s.url}/ui/repos/${demo.s.repo}/changes/${long.change}`);
    await p.locator('.diff-file').nth(11).waitFor({ state: 'attached' });
    await p.locator('.diff tr.add').first().waitFor();
    // scroll well into the diff, past bodies built on the way
    for (const y of [3000, 6000, 9000]) {
      await p.evaluate((to) => scrollTo(0, to), y);
      await p.waitForTimeout(150);
    }
    const before = await p.evaluate(() => scrollY);
    // the diff row at the top of the screen, and where it is
    const rowAt = () => p.evaluate(() => {
      const tr = document.elementFromPoint(innerWidth / 2, 120)?.closest('tr');
      const file = tr?.closest('.diff-file');
      if (!tr || !file) return null;
      return { file: file.id, row: [...file.querySelectorAll('tr')].indexOf(tr), top: Math.round(tr.getBoundingClientRect().top) };
    });
    const topRow = await rowAt();
    expect(topRow).to.not.equal(null);
    expect(before).to.be.greaterThan(8000);
    // to another page through a link, then Back
    await p.evaluate(() => (document.querySelector('.crumbs a[href$="/changes"]') as HTMLAnchorElement).click());
    await p.locator('main h1', { hasText: /changes/i }).first().waitFor();
    expect(await p.evaluate(() => scrollY)).to.be.lessThan(100);
    await p.goBack();
    await p.locator('.diff-file').nth(11).waitFor({ state: 'attached' });
    await p.waitForFunction((y) => Math.abs(scrollY - y) <= 40, before, { timeout: 10_000 }).catch(() => undefined);
    await p.waitForTimeout(500); // and it stays there while the bodies around it are built
    const after = await p.evaluate(() => scrollY);
    expect(Math.abs(after - before), `scrollY ${after}, was ${before}`).to.be.at.most(40);
    // the same lines are on the screen: the same row, at the same place
    const backRow = await rowAt();
    expect(backRow?.file).to.equal(topRow!.file);
    expect(Math.abs(backRow!.row - topRow!.row), `row ${backRow!.row}, was ${topRow!.row}`).to.be.at.most(2);
    // also after a full load of another document and Back
    await p.goto(`${s.url}/ui/repos/${demo.s.repo}/lines`);
    await p.goBack();
    await p.locator('.diff-file').nth(11).waitFor({ state: 'attached' });
    await p.waitForFunction((y) => Math.abs(scrollY - y) <= 40, before, { timeout: 10_000 }).catch(() => undefined);
    await p.waitForTimeout(500);
    const again = await p.evaluate(() => scrollY);
    expect(Math.abs(again - before), `scrollY ${again}, was ${before}`).to.be.at.most(40);
    const againRow = await rowAt();
    expect(againRow?.file).to.equal(topRow!.file);
    expect(Math.abs(againRow!.row - topRow!.row), `row ${againRow!.row}, was ${topRow!.row}`).to.be.at.most(2);
    expect(errors).to.deep.equal([]);
  });
});
