// The reviewer UI (docs/ui.md). First what the server answers for /ui (headers, hashed assets,
// the shell, the identity header, --no-ui), then the pages in a real browser: Debian's
// chromium driven by playwright-core, against real test servers holding real data (pushed
// snapshots, tasks, changes, patchsets, reviews, CI completed as a runner would). The browser
// part is skipped, saying so, only when no chromium binary exists.
import { expect } from 'chai';
import { mkdirSync, copyFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { ROUTES } from '../lib/http/routes.js';
import { UI_CSP } from '../lib/http/ui/routes.js';
import { READINESS_BLOCKERS } from '../lib/http/handlers/diffs.js';
import { readFile } from 'node:fs/promises';
import { PROJECT_ROOT, api, spawnServer, startTestServer, tempDir, type RequestOptions, type TestServer } from './helpers.js';
import { startUiSuite, SHOT_DIR } from './ui-browser.js';
import { Seeder, type Demo, type Files } from './ui-seed.js';
import { REFUSED_LINKS } from './markdown-payloads.js';

/** Screenshots go here during the tests; `UI_SCREENSHOTS_DIR=docs/screenshots` also copies them there. */

// ---------------------------------------------------------------- the server side

describe('reviewer UI: what the server answers', function () {
  this.timeout(60_000);
  let s: TestServer;
  /** A repository with a change (change-1 of task-1) and a land refused by its gates (land-1). */
  let sx: Seeder;
  before(async () => {
    s = await startTestServer();
    sx = await Seeder.register(s.url, 'pages');
    const base = await sx.snap({ 'a.txt': 'a\n' }, { moveLine: true });
    const rev = await sx.snap({ 'a.txt': 'b\n' }, { parent: base });
    const c = await sx.change('A change');
    await sx.patchset(c.change, base, rev, 'one');
    const refused = await api(s.url, 'POST', `/v1/native/repository-authorities/${sx.repo}/task-land`, { json: { contract: 'task-land-atomic/v1', idempotency_key: 'ui-pages-1', task_or_change_ref: c.ref, mode: 'merge' } });
    expect(refused.status).to.equal(409);
  });
  after(() => s.stop());

  /** A request to the UI: pages and assets are not operations of the interface, so no contract check. */
  const ui = (base: string, method: string, p: string, options: RequestOptions = {}) => api(base, method, p, { ...options, contract: false });
  const assetUrls = (html: string) => [...html.matchAll(/(?:href|src)="(\/ui\/assets\/[^"]+)"/g)].map((m) => m[1]);

  it('serves the app shell for every /ui/ path, with the CSP, no-cache and no inline script or style', async () => {
    for (const p of ['/ui/', '/ui/repos/0', '/ui/repos/0/changes/change-1?against=change-1.ps-1', '/ui/no/such/page']) {
      const res = await ui(s.url, 'GET', p);
      expect(res.status, p).to.equal(p === '/ui/no/such/page' ? 404 : 200);
      expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).to.equal(UI_CSP);
      expect(res.headers.get('cache-control')).to.equal('no-cache');
      expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(res.text).to.include('<div id="app">');
      // every <script> has a src and no body; no style attribute or element
      expect([...res.text.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)].every((m) => /\bsrc="/.test(m[0]) && m[1] === '')).to.equal(true);
      expect(res.text).to.not.match(/<style\b|\sstyle=/);
    }
    expect(UI_CSP).to.include("default-src 'none'").and.include("script-src 'self'").and.include("frame-ancestors 'none'");
    expect(UI_CSP).to.not.include('unsafe');
  });

  it('answers 404, with the shell (the page says what is missing), for a /ui/ path that names nothing: an unknown shape, repository, change, task or land', async () => {
    const r = sx.repo;
    const found = ['/ui/', `/ui/repos/${r}`, `/ui/repos/${r}/changes`, `/ui/repos/${r}/changes/change-1`, `/ui/repos/${r}/changes/task-1.change-1`,
      `/ui/repos/${r}/tasks/task-1`, `/ui/repos/${r}/lands/land-1`, `/ui/repos/${r}/lines`, `/ui/repos/${r}/lines/main`, `/ui/repos/${r}/jobs`, `/ui/repos/${r}/jobs/0`,
      `/ui/repos/${r}/plans`, `/ui/repos/${r}/plans/plan-1`, `/ui/repos/${r}/plans/plan-1/revisions/x`, `/ui/repos/${r}/snapshots/abc`, `/ui/repos/${r}/settings`];
    const missing = ['/ui/no/such/page', '/ui/repos', '/ui/repos/x', `/ui/repos/${r}/nope`, `/ui/repos/${r}/changes/change-1/extra`, `/ui/repos/${r}/plans/plan-1/revisions`,
      `/ui/repos/${r}/tasks`, `/ui/repos/${r}/lands`, '/ui/repos/99', '/ui/repos/99/changes/change-1', `/ui/repos/${r}/changes/change-99`, `/ui/repos/${r}/changes/no%20such`,
      `/ui/repos/${r}/tasks/task-99`, `/ui/repos/${r}/lands/land-99`, '/ui/repos/%E0%A4%A', `/ui/repos/${r}/settings/x`, '/ui/repos/99/settings'];
    for (const p of found) expect((await ui(s.url, 'GET', p)).status, p).to.equal(200);
    for (const p of missing) {
      const res = await ui(s.url, 'GET', p);
      expect(res.status, p).to.equal(404);
      expect(res.headers.get('content-type'), p).to.equal('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy'), p).to.equal(UI_CSP);
      expect(res.text, p).to.include('<div id="app">');
      expect((await fetch(`${s.url}${p}`, { method: 'HEAD' })).status, `HEAD ${p}`).to.equal(404);
    }
  });

  it('serves hashed assets as immutable, with their imports rewritten to hashed URLs that exist', async () => {
    const shell = (await ui(s.url, 'GET', '/ui/')).text;
    const urls = assetUrls(shell);
    expect(urls.some((u) => /^\/ui\/assets\/app\.[0-9a-f]{16}\.js$/.test(u))).to.equal(true);
    expect(urls.some((u) => /^\/ui\/assets\/app\.[0-9a-f]{16}\.css$/.test(u))).to.equal(true);
    const seen = new Set<string>();
    const queue = [...urls];
    while (queue.length) {
      const u = queue.shift()!;
      if (seen.has(u)) continue;
      seen.add(u);
      const res = await ui(s.url, 'GET', u);
      expect(res.status, u).to.equal(200);
      expect(res.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      expect(res.headers.get('content-security-policy')).to.equal(UI_CSP);
      if (u.endsWith('.js')) {
        expect(res.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
        if (!u.startsWith('/ui/assets/vendor/')) {
          expect(res.text, u).to.not.match(/from\s*['"]\.\.?\//); // no relative import left
          for (const m of res.text.matchAll(/(?:from\s*|import\s*\(\s*)['"](\/ui\/assets\/[^'"]+)['"]/g)) queue.push(m[1]);
        }
      }
    }
    // the lazily imported highlighter and the vendor modules were reached through the rewrites
    expect([...seen].some((u) => u.startsWith('/ui/assets/vendor/highlight.'))).to.equal(true);
    expect([...seen].some((u) => u.startsWith('/ui/assets/vendor/preact.'))).to.equal(true);
    expect([...seen].some((u) => u.startsWith('/ui/assets/vendor/marked.'))).to.equal(true);
    const missing = await ui(s.url, 'GET', '/ui/assets/app.0000000000000000.js');
    expect(missing.status).to.equal(404);
    expect(missing.headers.get('cache-control')).to.equal('no-store');
  });

  it('answers HEAD, 405 for other methods, redirects /ui and /, and leaves the API and its route table alone', async () => {
    const head = await fetch(`${s.url}/ui/repos/0`, { method: 'HEAD' });
    expect(head.status).to.equal(200);
    const post = await ui(s.url, 'POST', '/ui/repos/0', { json: {} });
    expect(post.status).to.equal(405);
    expect(post.headers.get('allow')).to.equal('GET, HEAD');
    const bare = await fetch(`${s.url}/ui?x=1`, { redirect: 'manual' });
    expect(bare.status).to.equal(308);
    expect(bare.headers.get('location')).to.equal('/ui/?x=1');
    const root = await fetch(`${s.url}/`, { redirect: 'manual' });
    expect(root.status).to.equal(302);
    expect(root.headers.get('location')).to.equal('/ui/');
    // not rows of the route table: the spec's 78 operations and the 3 extensions stay as they are
    expect(ROUTES.some((r) => r.template.startsWith('/ui'))).to.equal(false);
    const apiRes = await api(s.url, 'GET', '/v1/native/repository-authorities');
    expect(apiRes.status).to.equal(200);
    expect(apiRes.headers.get('content-security-policy')).to.equal(null);
    expect((await ui(s.url, 'GET', '/uix')).status).to.equal(404);
  });

  it('hands the identity header to the page escaped (--ui-identity-header), and --no-ui serves no UI', async () => {
    const dir = tempDir();
    const withHeader = await spawnServer(path.join(dir, 'a'), ['--ui-identity-header', 'X-Remote-User']);
    try {
      const res = await ui(withHeader.url, 'GET', '/ui/', { headers: { 'x-remote-user': 'd"><script>alert(1)</script>&' } });
      expect(res.text).to.include('<meta name="cairn-identity-header" content="X-Remote-User">');
      expect(res.text).to.include('<meta name="cairn-identity" content="d&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;">');
      expect(res.headers.get('vary')).to.match(/x-remote-user/i);
      expect(res.headers.get('cache-control')).to.equal('private, no-cache');
      const none = await ui(withHeader.url, 'GET', '/ui/');
      expect(none.text).to.include('<meta name="cairn-identity" content="">');
    } finally {
      withHeader.proc.kill('SIGTERM');
      await withHeader.exited;
    }
    const off = await spawnServer(path.join(dir, 'b'), ['--no-ui']);
    try {
      expect((await ui(off.url, 'GET', '/ui/')).status).to.equal(404);
      expect((await api(off.url, 'GET', '/healthz')).status).to.equal(200);
    } finally {
      off.proc.kill('SIGTERM');
      await off.exited;
    }
  });

  it('the browser keeps every event type of the repository feed (live.js against lib/domain/events.ts)', async () => {
    const { EVENT_TYPES } = await import('../lib/domain/events.js');
    const text = await readFile(path.join(PROJECT_ROOT, 'lib/http/ui/static/live.js'), 'utf8');
    const list = /export const EVENT_TYPE_NAMES = \[([^\]]*)\]/.exec(text)![1];
    expect([...list.matchAll(/'([a-z_.]+)'/g)].map((m) => m[1])).to.deep.equal(Object.keys(EVENT_TYPES));
  });
});

// ---------------------------------------------------------------- in a browser

interface Watched {
  page: Page;
  errors: string[];
  dialogs: string[];
}

describe('reviewer UI in Chromium', function () {
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

  /** A page whose console errors, page errors and dialogs are recorded (dialogs dismissed). */
  async function open(options: { colorScheme?: 'light' | 'dark'; headers?: Record<string, string> } = {}): Promise<Watched> {
    const context = await browser.newContext({ viewport: { width: 1440, height: 1000 }, colorScheme: options.colorScheme ?? 'light', extraHTTPHeaders: options.headers });
    contexts.push(context);
    const page = await context.newPage();
    const w: Watched = { page, errors: [], dialogs: [] };
    page.on('console', (m: ConsoleMessage) => {
      if (m.type() === 'error') w.errors.push(`${m.text()} ${m.location().url ?? ''}`);
    });
    page.on('pageerror', (e) => w.errors.push(`pageerror: ${e.message}`));
    page.on('dialog', (d) => {
      w.dialogs.push(`${d.type()}: ${d.message()}`);
      void d.dismiss();
    });
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

  const changeUrl = (rest = '') => `${s.url}/ui/repos/${demo.s.repo}/changes/${demo.main.change}${rest}`;

  it('the dashboard shows open changes by status, the reviewer inbox, recently landed changes and the CI queue (screenshots in both themes)', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const w = await open({ colorScheme: scheme });
      const res = await w.page.goto(`${s.url}/ui/repos/${demo.s.repo}`);
      expect(res!.headers()['content-security-policy']).to.equal(UI_CSP);
      await w.page.getByRole('heading', { name: 'Needs review' }).waitFor();
      await w.page.locator('.topbar .live').waitFor(); // the page follows the repository's event feed
      const text = await w.page.locator('main').innerText();
      expect(text).to.include('backend').and.include('payments').and.include('Rate-limit checkouts per customer');
      expect(text).to.include('Document the checkout flow'); // recently landed
      expect(text).to.include('Gift cards at checkout'); // a draft
      expect(await w.page.locator('.jobs tbody tr').count()).to.be.greaterThan(3);
      expect(await w.page.locator('.jobs .badge', { hasText: 'queued' }).count()).to.equal(1);
      // the land queue: the entry being tested, in order, with its CI job; the ejected one with its reason
      const q = demo.queue;
      const row = w.page.locator(`#land-queue tr[data-entry="${q.testing.entry}"]`);
      expect(await row.locator('td').first().innerText()).to.equal('1');
      expect(await row.locator('.badge').first().innerText()).to.equal('testing');
      expect(await row.locator(`a[href$="/jobs/${q.testing.job}"]`).count()).to.equal(1);
      expect(await row.innerText()).to.include('running');
      const gone = w.page.locator(`#land-queue .queue-recent li[data-entry="${q.ejected.entry}"]`);
      expect(await gone.innerText()).to.include('ejected').and.include('CI failed on the merged result');
      await shot(w.page, `dashboard-${scheme}`);
      expect(w.errors).to.deep.equal([]);
      expect(w.dialogs).to.deep.equal([]);
    }
  });

  it('the change page shows the changed lines of a real patchset, side by side too, and the inter-patchset diff', async () => {
    const w = await open();
    await w.page.goto(changeUrl());
    // bodies are built as they come near the viewport: scroll to the file first
    await w.page.locator('.diff-file[data-path="src/checkout/rate-limit.ts"]').scrollIntoViewIfNeeded();
    await w.page.locator('.diff tr.add', { hasText: 'export class RateLimiter {' }).first().waitFor();
    expect(await w.page.locator('.diff tr.del', { hasText: 'print(len(orders), "orders")' }).count()).to.equal(1);
    expect(await w.page.locator('.file-list .path-cell').allTextContents()).to.deep.equal(['docs/checkout.md', 'scripts/report.py', 'src/checkout/handler.ts', 'src/checkout/rate-limit.ts']);
    // highlight.js coloured the TypeScript (its spans, inside an escaped line)
    await w.page.locator('.diff tr.add .hljs-keyword').first().waitFor();
    // the CI card names the suites of the evidence run
    expect(await w.page.locator('#ci .suite-list code').allTextContents()).to.deep.equal(['unit', 'integration', 'lint']);
    // side by side
    await w.page.getByRole('button', { name: 'Side by side' }).click();
    await w.page.locator('.diff.split').first().waitFor();
    expect(new URL(w.page.url()).searchParams.get('view')).to.equal('split');
    await w.page.getByRole('button', { name: 'Unified' }).click();
    await w.page.locator('.diff.unified').first().waitFor();
    // the inter-patchset diff: what changed from ps-1 to ps-2 only
    await w.page.goto(changeUrl(`?against=${demo.main.ps1}`));
    await w.page.locator('.diff-file[data-path="src/checkout/rate-limit.ts"]').scrollIntoViewIfNeeded();
    await w.page.locator('.diff tr.add', { hasText: 'sweep(now = Date.now()): void {' }).waitFor();
    const files = await w.page.locator('.file-list .path-cell').allTextContents();
    expect(files).to.deep.equal(['scripts/report.py', 'src/checkout/rate-limit.ts']);
    expect(await w.page.locator('.diff tr.add', { hasText: 'export class RateLimiter {' }).count()).to.equal(0);
    expect(await w.page.locator('select[aria-label="Compare with"]').inputValue()).to.equal(demo.main.ps1);
    // #file= opens the page at that file; j and k move between files and keep the URL in step
    await w.page.goto(changeUrl('#file=src%2Fcheckout%2Fhandler.ts'));
    await w.page.locator('.diff tr.add', { hasText: 'RateLimiter' }).first().waitFor();
    await w.page.locator('.diff-file.current[data-path="src/checkout/handler.ts"]').waitFor();
    await w.page.keyboard.press('j');
    await w.page.locator('.diff-file.current[data-path="src/checkout/rate-limit.ts"]').waitFor();
    expect(new URL(w.page.url()).hash).to.equal('#file=src%2Fcheckout%2Frate-limit.ts');
    await w.page.keyboard.press('k');
    await w.page.locator('.diff-file.current[data-path="src/checkout/handler.ts"]').waitFor();
    expect(await w.page.evaluate(() => document.activeElement?.closest('.diff-file')?.getAttribute('data-path'))).to.equal('src/checkout/handler.ts');
    await w.page.keyboard.press('o');
    expect(await w.page.locator('.diff-file[data-path="src/checkout/handler.ts"] .file-body').count()).to.equal(0);
    expect(w.errors).to.deep.equal([]);
  });

  it('change page screenshots in both themes', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const w = await open({ colorScheme: scheme });
      await w.page.goto(changeUrl());
      // the page opens on the diff (the Files tab): its bodies are built as they come near the screen
      await w.page.locator('#files .diff-file').first().waitFor();
      await w.page.evaluate(() => document.getElementById('files')!.scrollIntoView());
      await w.page.locator('.diff tr.add .hljs-keyword').first().waitFor();
      await w.page.evaluate(() => scrollTo(0, 0));
      await w.page.locator('.topbar .live').waitFor();
      await shot(w.page, `change-${scheme}`);
      await w.page.evaluate(() => document.getElementById('files')!.scrollIntoView());
      await w.page.waitForTimeout(200);
      await shot(w.page, `change-diff-${scheme}`);
      await w.page.goto(changeUrl('?view=split#file=src%2Fcheckout%2Fhandler.ts'));
      await w.page.locator('.diff.split .hljs-keyword').first().waitFor();
      await w.page.locator('.topbar .live').waitFor();
      await w.page.waitForTimeout(200);
      await shot(w.page, `change-split-${scheme}`);
      expect(w.errors).to.deep.equal([]);
    }
  });

  it('the land queue on the change page: the entry being tested, an ejection with its evidence, and Add / Remove through the API', async () => {
    const q = demo.queue;
    const w = await open();
    const page = (change: string) => w.page.goto(`${s.url}/ui/repos/${demo.s.repo}/changes/${change}?tab=checks`);
    // the entry being tested: state, position, the speculative snapshot and its base, the running job
    await page(q.testing.change);
    const card = w.page.locator('#queue');
    await card.locator('dd', { hasText: 'position 1 of 1' }).waitFor();
    const testing = (await demo.s.get(`/land-queue/${q.testing.entry}`)).entry;
    expect(await card.locator(`a[href$="/snapshots/${testing.speculation.snapshot_id}"]`).count()).to.equal(1);
    expect(await card.locator(`a[href$="/snapshots/${demo.base}"]`).count()).to.equal(1);
    expect(await card.locator(`a[href$="/jobs/${q.testing.job}"]`).count()).to.equal(1);
    expect(await card.getByRole('button', { name: 'Remove from queue' }).count()).to.equal(1);
    // queued: the land queue lands it, so a land by hand is off, and the page says why
    const landButton = w.page.getByRole('button', { name: 'Land…' });
    expect(await landButton.isDisabled()).to.equal(true);
    expect(await w.page.locator('#land-queued-reason').innerText()).to.include(`In the land queue as ${q.testing.entry}`);
    await card.scrollIntoViewIfNeeded();
    await shot(w.page, 'change-queue-testing');
    // the ejected entry: why, the failing jobs and suites; the change may join again
    await page(q.ejected.change);
    await card.getByText('CI failed on the merged result').waitFor();
    const ejected = (await demo.s.get(`/land-queue/${q.ejected.entry}`)).entry;
    expect(await card.locator('code.suite').allInnerTexts()).to.deep.equal(['unit']);
    for (const j of ejected.ejection.worker_job_indexes) expect(await card.locator(`a[href$="/jobs/${j}"]`).count()).to.be.at.least(1);
    expect(await card.getByRole('button', { name: 'Add to land queue' }).count()).to.equal(1);
    await card.scrollIntoViewIfNeeded();
    await shot(w.page, 'change-queue-ejected');
    // a change that is not queued: Add enqueues it (POST land-queue), the card follows; Remove takes it out
    await page(q.candidate.change);
    await card.getByText('Not in the land queue.').waitFor();
    await card.getByRole('button', { name: 'Add to land queue' }).click();
    await card.getByText(/^Queued as lq-\d+, position 2 on main\.$/).waitFor();
    const listed = (await demo.s.get('/land-queue')).entries as Array<Record<string, any>>;
    const mine = listed.find((e) => e.change_id === q.candidate.change)!;
    expect(mine).to.include({ mode: 'merge', position: 2, target_line: 'main' });
    await card.locator('dd', { hasText: 'position 2 of 2' }).waitFor();
    // the dashboard lists it behind the entry being tested
    const dash = await open();
    await dash.page.goto(`${s.url}/ui/repos/${demo.s.repo}`);
    await dash.page.locator(`#land-queue tr[data-entry="${mine.entry_id}"]`).waitFor();
    expect(await dash.page.locator('#land-queue tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-entry')))).to.deep.equal([q.testing.entry, mine.entry_id]);
    // removing asks first: cancelled, nothing changes
    await card.getByRole('button', { name: 'Remove from queue' }).click();
    const confirm = w.page.getByRole('dialog');
    await confirm.getByRole('heading', { name: `Remove ${mine.entry_id} from the land queue?` }).waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    expect((await demo.s.get(`/land-queue/${mine.entry_id}`)).entry.state).to.be.oneOf(['queued', 'testing']);
    await card.getByRole('button', { name: 'Remove from queue' }).click();
    await confirm.getByRole('button', { name: 'Remove from queue' }).click();
    await card.getByText(`Removed ${mine.entry_id} from the queue.`).waitFor();
    expect((await demo.s.get(`/land-queue/${mine.entry_id}`)).entry.state).to.equal('removed');
    // the open dashboard follows the queue's events: the entry leaves its table
    await dash.page.locator(`#land-queue tr[data-entry="${mine.entry_id}"]`).waitFor({ state: 'detached' });
    await card.getByRole('button', { name: 'Add to land queue' }).waitFor();
    expect(w.errors).to.deep.equal([]);
    expect(dash.errors).to.deep.equal([]);
  });

  it('live updates: a review recorded through the API appears on the open change page without a reload', async () => {
    const w = await open();
    await w.page.goto(changeUrl('?tab=conversation'));
    await w.page.getByRole('heading', { name: 'Reviews and comments' }).waitFor();
    await w.page.locator('.topbar .live', { hasText: 'live' }).waitFor();
    // a mark on the document: a reload would lose it
    await w.page.evaluate(() => { (window as unknown as { sameDocument: boolean }).sameDocument = true; });
    const before = await w.page.locator('#reviews .timeline > li').count();
    await demo.s.review(demo.main.change, demo.main.ps2, 'carol', 'comment', 'Seen live: the hourly job calls sweep().');
    await w.page.locator('#reviews .comment', { hasText: 'Seen live: the hourly job calls sweep().' }).waitFor();
    expect(await w.page.locator('#reviews .timeline > li').count()).to.equal(before + 1);
    expect(await w.page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).to.equal(true);
    await w.page.evaluate(() => document.getElementById('reviews')!.scrollIntoView());
    await shot(w.page, 'change-live-review');
    expect(w.errors).to.deep.equal([]);

    // the CI queue: a job queued through the API appears as a new row
    const jobsRepo = await Seeder.register(s.url, 'live-jobs');
    await jobsRepo.snap({ 'ci/run.sh': 'echo ok\n' }, { moveLine: true });
    const q = await open();
    await q.page.goto(`${s.url}/ui/repos/${jobsRepo.repo}/jobs`);
    await q.page.getByText('No CI job yet.').waitFor();
    await q.page.locator('.topbar .live').waitFor();
    await jobsRepo.post(':runCi', {});
    await q.page.locator('.jobs tbody tr', { hasText: 'queued' }).waitFor();
    expect(q.errors).to.deep.equal([]);
  });

  it('live updates fall back silently: a page that cannot have the feed (subscriber limit reached) works as before, without the mark', async () => {
    const { startServer } = await import('../lib/cli/serve.js');
    const { pino } = await import('pino');
    const srv = await startServer({ host: '127.0.0.1', port: 0, dataDir: path.join(tempDir(), 'data'), log: pino({ level: 'silent' }), events: { maxSubscribers: 1 } });
    await srv.ready;
    try {
      const sx = await Seeder.register(srv.url, 'busy');
      const base = await sx.snap({ 'a.txt': 'a\n' }, { moveLine: true });
      const rev = await sx.snap({ 'a.txt': 'b\n' }, { parent: base });
      const c = await sx.change('Busy server');
      const ps = await sx.patchset(c.change, base, rev, 'one');
      const first = await open();
      await first.page.goto(`${srv.url}/ui/repos/${sx.repo}/changes/${c.change}?tab=conversation`);
      await first.page.locator('.topbar .live').waitFor(); // the one subscriber the server allows
      const second = await open();
      await second.page.goto(`${srv.url}/ui/repos/${sx.repo}/changes/${c.change}?tab=conversation`);
      await second.page.getByRole('heading', { name: 'Reviews and comments' }).waitFor();
      // its stream was answered 503; the page shows what it read and no mark
      await second.page.waitForFunction(() => performance.getEntriesByType('resource').some((e) => e.name.includes('/events?types=')));
      expect(await second.page.locator('.topbar .live').count()).to.equal(0);
      await sx.review(c.change, ps, 'erin', 'comment', 'Only the live page shows this at once.');
      await first.page.locator('#reviews .comment', { hasText: 'Only the live page shows this at once.' }).waitFor();
      // a reload of the second page reads it (and the action buttons work as ever)
      await second.page.reload();
      await second.page.locator('#reviews .comment', { hasText: 'Only the live page shows this at once.' }).waitFor();
      // the browser itself logs the refused stream request; the page adds no error of its own
      expect(second.errors.length).to.be.at.least(1);
      for (const e of second.errors) expect(e).to.match(/^Failed to load resource: the server responded with a status of 503 .*\/events\?types=/);
      expect(first.errors).to.deep.equal([]);
      expect(second.dialogs).to.deep.equal([]);
    } finally {
      await srv.stop();
    }
  });

  it('approving from the page is recorded under the name asked once, and flips the policy after evaluation', async () => {
    const w = await open();
    await w.page.goto(changeUrl('?tab=conversation'));
    await w.page.getByRole('heading', { name: /Can't land/ }).waitFor();
    expect((await demo.s.get(`/patchsets/${demo.main.ps2}/policy`)).policy.decision).to.equal('fail');
    await w.page.getByRole('textbox', { name: 'Comment' }).fill('Looks good; sweep() is called by the hourly job.');
    await w.page.getByRole('button', { name: 'Approve' }).click();
    // the name is asked once, in the page (never window.prompt)
    await w.page.getByRole('dialog').getByLabel('Your name').fill('alice');
    await w.page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await w.page.getByText('Approved.').waitFor();
    const reviews = (await demo.s.get(`/changes/${demo.main.change}/reviews`)).reviews as Array<Record<string, any>>;
    const mine = reviews.at(-1)!;
    expect(mine).to.include({ reviewer: 'alice', action: 'approve', patchset_id: demo.main.ps2, comment: 'Looks good; sweep() is called by the hourly job.', blocking: false, live: true });
    expect(await w.page.evaluate(() => localStorage.getItem('cairn.reviewer'))).to.equal('alice');
    await w.page.getByRole('button', { name: 'Evaluate policy' }).click();
    await w.page.getByText('Policy evaluated: pass.').waitFor();
    expect((await demo.s.get(`/patchsets/${demo.main.ps2}/policy`)).policy.decision).to.equal('pass');
    await w.page.getByRole('heading', { name: 'Ready to land' }).waitFor();
    // a comment now goes out without asking again
    await w.page.getByRole('textbox', { name: 'Comment' }).fill('One more note.');
    await w.page.getByRole('button', { name: 'Comment', exact: true }).click();
    await w.page.getByText('Comment posted.').waitFor();
    expect(((await demo.s.get(`/changes/${demo.main.change}/reviews`)).reviews as Array<Record<string, any>>).at(-1)).to.include({ reviewer: 'alice', action: 'comment' });
    expect(w.errors).to.deep.equal([]);
    expect(w.dialogs).to.deep.equal([]);
  });

  it('landing from the page, after choosing the mode and confirming, moves the line', async () => {
    const before = (await demo.s.get('/lines/main')).head_snapshot_id;
    const revision = (await demo.s.get(`/patchsets/${demo.main.ps2}`)).patchset.revision_snapshot_id;
    const w = await open();
    await w.page.goto(changeUrl('?tab=conversation'));
    await w.page.getByRole('heading', { name: 'Ready to land' }).waitFor();
    await w.page.getByLabel('Land as').selectOption('ff-only');
    await w.page.getByRole('button', { name: 'Land…' }).click();
    const dialog = w.page.getByRole('dialog');
    await dialog.getByText('as a ff-only').waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await demo.s.get('/lines/main')).head_snapshot_id).to.equal(before); // cancelled: nothing moved
    await w.page.getByRole('button', { name: 'Land…' }).click();
    await dialog.getByRole('button', { name: 'Land (ff-only)' }).click();
    await w.page.getByText(/^Landed change-2\.ps-2 on main: fast forward/).waitFor();
    expect((await demo.s.get('/lines/main')).head_snapshot_id).to.equal(revision);
    expect((await demo.s.get(`/changes/${demo.main.change}`)).change.status).to.equal('landed');
    await w.page.locator('h1 .badge', { hasText: 'landed' }).waitFor();
    // the change's lands (read/changes/{ref}/lands) list the land the page made, newest first
    await w.page.locator('#lands .row-title', { hasText: 'land-2' }).waitFor();
    const listed = (await demo.s.get(`/read/changes/${demo.main.change}/lands`)).lands.map((l: { land_id: string }) => l.land_id);
    expect(await w.page.locator('#lands .row-title').allInnerTexts()).to.deep.equal(listed);
    expect(w.errors).to.deep.equal([]);
    // the line's history shows the landed snapshot on top
    const line = await open();
    await line.page.goto(`${s.url}/ui/repos/${demo.s.repo}/lines/main`);
    await line.page.locator('.history .commit').first().waitFor();
    expect(await line.page.locator('.history .commit').first().innerText()).to.include('sweep idle windows');
    expect(line.errors).to.deep.equal([]);
  });

  it('a title, a file name, file contents, a comment, a plan and an identity carrying script payloads render as text', async () => {
    const xss = await startTestServer(undefined, {});
    try {
      const script = '<script>alert(1)</script>';
      const img = '<img src=x onerror=alert(1)>';
      const sx = await Seeder.register(xss.url, `repo ${script}`);
      const base = await sx.snap({ 'a.txt': 'a\n' }, { moveLine: true });
      const files: Files = {
        'a.txt': `a\n${script}\n${img}\n`,
        [`${img}.txt`]: `${img}\n`,
        'page.html': `<p>${script}</p>\n${img}\n<a href="javascript:alert(1)">x</a>\n`,
        'notes.md': `# ${script}\n\n${img}\n`,
      };
      const rev = await sx.snap(files, { parent: base });
      const c = await sx.change(`${script} ${img}`, { task: `task ${img}` });
      const ps = await sx.patchset(c.change, base, rev, `summary ${script}`, `author ${img}`);
      await sx.review(c.change, ps, `eve ${img}`, 'comment', `comment ${script} ${img}`);
      await sx.post('/sprints', { title: `plan ${script}`, artifact_path: 'p.md', artifact_heading: 'Plan', artifact_body: `# Plan\n\n${script}\n\n${img}\n\n[click](javascript:alert(1)) <b onmouseover=alert(1)>bold</b>\n\n- [ ] item ${img} {#one}\n` });

      const w = await open({ headers: { 'x-remote-user': `mallory ${script}` } });
      const check = async (url: string, expectText: string[]) => {
        await w.page.goto(url);
        await w.page.locator('main .page').first().waitFor();
        for (const t of expectText) await w.page.getByText(t, { exact: false }).first().waitFor();
        // no element came out of a payload: the shell's one module script (plus modulepreload links), no <img>, no <b>
        const counts = await w.page.evaluate(() => ({
          scripts: document.querySelectorAll('script').length,
          imgs: document.querySelectorAll('img').length,
          bolds: document.querySelectorAll('main b').length,
          javascriptLinks: [...document.querySelectorAll('a')].filter((a) => a.getAttribute('href')?.toLowerCase().startsWith('javascript')).length,
        }));
        expect(counts, url).to.deep.equal({ scripts: 1, imgs: 0, bolds: 0, javascriptLinks: 0 });
      };
      await check(`${xss.url}/ui/`, [`repo ${script}`]);
      await check(`${xss.url}/ui/repos/${sx.repo}/changes/${c.change}?tab=conversation`, [`${script} ${img}`, `comment ${script} ${img}`]);
      await w.page.getByRole('tab', { name: /^Files/ }).click();
      await w.page.getByText(`${img}.txt`).first().waitFor();
      // file bodies are built as they come near the viewport
      await w.page.locator('.diff-file[data-path="a.txt"]').scrollIntoViewIfNeeded();
      await w.page.locator('.diff-file[data-path="a.txt"] tr.add').first().waitFor();
      expect(await w.page.locator('.diff tr.add', { hasText: script }).count()).to.be.greaterThan(1);
      expect(await w.page.locator('.diff tr.add', { hasText: img }).count()).to.be.greaterThan(2);
      // the HTML file was highlighted: its markup shows as coloured text
      await w.page.locator('.diff-file[data-path="page.html"] .hljs-tag').first().waitFor();
      await check(`${xss.url}/ui/repos/${sx.repo}/plans/plan-1`, [script, img, '<b onmouseover=alert(1)>']);
      expect(await w.page.locator('.markdown .md-link-blocked', { hasText: 'click' }).count()).to.equal(1);
      await check(`${xss.url}/ui/repos/${sx.repo}/tasks/${c.task}`, [`task ${img}`]);
      // the UI was served without --ui-identity-header here: the header is not read
      expect(await w.page.locator('.identity').innerText()).to.include('anonymous');
      expect(w.dialogs).to.deep.equal([]);
      expect(w.errors).to.deep.equal([]);
    } finally {
      await xss.stop();
    }
  });

  it('a plan whose Markdown holds javascript: links in every spelling a browser folds (java<TAB>script:, controls, entities, case, data:, vbscript:) has no live link but http(s), mailto and relative ones', async () => {
    const sx = await Seeder.register(s.url, 'markdown-links');
    // Each refused case labelled (and its reference made unique) so that each is found on the page.
    const refused = REFUSED_LINKS.map((md, i) => md.replace('[x]', `[case ${i}]`).replace('![i]', `![case ${i}]`).replaceAll('[r]', `[r${i}]`));
    const allowed = ['[runbook](https://example.com/runbook)', '[mail](mailto:ops@example.com)', '[retry](#retry)', '[sibling](plan-2)'];
    const body = `# Links\n\n${[...refused, ...allowed].join('\n\n')}\n`;
    await sx.post('/sprints', { title: 'Links', artifact_path: 'links.md', artifact_heading: 'Links', artifact_body: body });
    const w = await open();
    await w.page.goto(`${s.url}/ui/repos/${sx.repo}/plans/plan-1`);
    await w.page.locator('.markdown a', { hasText: 'runbook' }).waitFor();
    // What the browser would follow: each anchor's href as the DOM resolved it.
    const links = await w.page.evaluate(() => [...document.querySelectorAll('.markdown a')].map((a) => ({ text: a.textContent, protocol: (a as HTMLAnchorElement).protocol, href: (a as HTMLAnchorElement).href })));
    for (const l of links) expect(['http:', 'https:', 'mailto:'], JSON.stringify(l)).to.include(l.protocol);
    expect(links.map((l) => l.text)).to.deep.equal(['runbook', 'mail', 'retry', 'sibling']);
    expect(links.map((l) => l.href)).to.deep.equal(['https://example.com/runbook', 'mailto:ops@example.com', `${s.url}/ui/repos/${sx.repo}/plans/plan-1#retry`, `${s.url}/ui/repos/${sx.repo}/plans/plan-2`]);
    // Every refused link is shown as its text, not followed.
    const blocked = await w.page.evaluate(() => [...document.querySelectorAll('.markdown .md-link-blocked, .markdown span.md-image')].map((e) => e.textContent));
    expect(blocked).to.have.length(refused.length);
    expect(w.errors).to.deep.equal([]);
    expect(w.dialogs).to.deep.equal([]);
  });

  it('a file left out of a diff (over 1 MiB) says why, with its true counts, links to both versions and no load button; the other files render', async () => {
    const sx = await Seeder.register(s.url, 'big-file');
    const big = 'x\n'.repeat(600 * 1024);
    const base = await sx.snap({ 'big.txt': big, 'small.txt': 'one\n' }, { moveLine: true });
    const rev = await sx.snap({ 'big.txt': `${big}more\n`, 'small.txt': 'two\n' }, { parent: base });
    const c = await sx.change('A big file');
    await sx.patchset(c.change, base, rev, 'grow it');
    const w = await open();
    await w.page.goto(`${s.url}/ui/repos/${sx.repo}/changes/${c.change}`);
    const file = w.page.locator('.diff-file[data-path="big.txt"]');
    await file.locator('.left-out', { hasText: 'This file is too large to show as a diff; compare the two versions. a side is 1228805 bytes, over the 1048576 whose hunks are shown' }).waitFor();
    // The head's badges and counts are built once the file comes near the view (an observer): wait for them.
    await file.locator('.badge', { hasText: 'too large' }).waitFor();
    expect(await file.locator('.badge', { hasText: 'too large' }).count()).to.equal(1);
    // Counted all the same: one line added.
    expect(await file.locator('.file-head .stat').innerText()).to.equal('+1 −0');
    // Asked for alone it would be left out again: no button to load it, but both versions.
    expect(await file.getByRole('button', { name: /Load diff/ }).count()).to.equal(0);
    expect(await file.getByRole('link', { name: 'Old version' }).getAttribute('href')).to.equal(`/v1/native/repository-authorities/${sx.repo}/read/snapshots/${base}/files/big.txt`);
    expect(await file.getByRole('link', { name: 'New version' }).getAttribute('href')).to.equal(`/v1/native/repository-authorities/${sx.repo}/read/snapshots/${rev}/files/big.txt`);
    expect(await file.locator('.diff tr').count()).to.equal(0);
    await w.page.locator('.diff-file[data-path="small.txt"] tr.add', { hasText: 'two' }).waitFor();
    const bar = await w.page.locator('.diff-summary').innerText();
    expect(bar).to.include('1 diff not loaded').and.include('+2').and.include('−1');
    expect(w.errors).to.deep.equal([]);
  });

  it('an identity header value is shown as text and recorded as the reviewer', async () => {
    const { startServer } = await import('../lib/cli/serve.js');
    const { pino } = await import('pino');
    const srv = await startServer({ host: '127.0.0.1', port: 0, dataDir: path.join(tempDir(), 'data'), log: pino({ level: 'silent' }), ui: { identityHeader: 'X-Remote-User' } });
    await srv.ready;
    try {
      const sx = await Seeder.register(srv.url, 'ident');
      const base = await sx.snap({ 'a.txt': 'a\n' }, { moveLine: true });
      const rev = await sx.snap({ 'a.txt': 'b\n' }, { parent: base });
      const c = await sx.change('Identity');
      await sx.patchset(c.change, base, rev, 'one');
      const name = 'dana <script>alert(1)</script>';
      const w = await open({ headers: { 'x-remote-user': name } });
      await w.page.goto(`${srv.url}/ui/repos/${sx.repo}/changes/${c.change}?tab=conversation`);
      await w.page.locator('.identity', { hasText: name }).waitFor();
      await w.page.getByRole('button', { name: 'Approve' }).click();
      await w.page.getByText('Approved.').waitFor();
      expect(((await sx.get(`/changes/${c.change}/reviews`)).reviews as Array<Record<string, any>>).at(-1)).to.include({ reviewer: name, action: 'approve' });
      expect(await w.page.evaluate(() => document.querySelectorAll('script').length)).to.equal(1);
      expect(w.dialogs).to.deep.equal([]);
      expect(w.errors).to.deep.equal([]);
    } finally {
      await srv.stop();
    }
  });

  it('a 2,000-file patchset: the change page loads and builds file bodies only as they come into view', async () => {
    const big = await Seeder.register(s.url, 'monorepo');
    const N = 2000;
    const baseFiles: Files = {};
    const revFiles: Files = {};
    for (let i = 0; i < N; i++) {
      const p = `pkg${String(Math.floor(i / 100)).padStart(2, '0')}/mod${String(i).padStart(4, '0')}.ts`;
      baseFiles[p] = `export const id = ${i};\nexport function f${i}(x: number): number {\n  return x + ${i};\n}\n`;
      revFiles[p] = `export const id = ${i};\nexport function f${i}(x: number): number {\n  return x * ${i};\n}\n`;
    }
    const base = await big.snap(baseFiles, { moveLine: true });
    const rev = await big.snap(revFiles, { parent: base });
    const c = await big.change('Multiply instead of add, everywhere');
    await big.patchset(c.change, base, rev, 'mechanical change');
    const w = await open();
    const started = Date.now();
    await w.page.goto(`${s.url}/ui/repos/${big.repo}/changes/${c.change}`);
    await w.page.locator('.diff-file').nth(N - 1).waitFor({ state: 'attached' });
    await w.page.locator('.file-body').first().waitFor();
    const loadMs = Date.now() - started;
    const first = await w.page.evaluate(() => ({ headers: document.querySelectorAll('.diff-file').length, bodies: document.querySelectorAll('.file-body').length, rows: document.querySelectorAll('.diff tr').length }));
    expect(first.headers).to.equal(N);
    expect(first.bodies).to.be.greaterThan(0).and.lessThan(100); // not 2,000 tables
    expect(await w.page.locator('.diff-summary').innerText()).to.include('2,000 files');
    // jump to the last file: its body is built once it is in view
    await w.page.locator('.file-list a', { hasText: 'pkg19/mod1999.ts' }).click();
    await w.page.locator('.diff-file[data-path="pkg19/mod1999.ts"] .file-body tr.add', { hasText: 'return x * 1999;' }).waitFor();
    const after = await w.page.evaluate(() => document.querySelectorAll('.file-body').length);
    expect(after).to.be.lessThan(200);
    console.log(`      2,000-file change page: ${loadMs} ms to first file body; ${first.bodies} bodies built at first, ${after} after jumping to the last file`);
    expect(w.errors).to.deep.equal([]);
  });

  // ------------------------------------------------------------ every status on the page is true

  const repoUrl = (repo: number, rest = '') => `${s.url}/ui/repos/${repo}${rest}`;

  it('a landed change shows a settled "Landed: land-N into LINE at TIME" panel with its landed snapshot, and its attestation (screenshots in both themes)', async () => {
    const land = ((await demo.s.get(`/read/changes/${demo.landed.change}/lands`)).lands as Array<Record<string, any>>).find((l) => l.status === 'landed')!;
    const attestation = (await demo.s.get(`/patchsets/${land.patchset_id}/attestation`)).attestation;
    for (const scheme of ['light', 'dark'] as const) {
      const w = await open({ colorScheme: scheme });
      await w.page.goto(repoUrl(demo.s.repo, `/changes/${demo.landed.change}?tab=checks`));
      const panel = w.page.locator('section.readiness');
      await panel.locator('h2', { hasText: 'Landed' }).waitFor();
      expect(await panel.getAttribute('class')).to.equal('readiness landed');
      expect(await panel.locator('h2').innerText()).to.match(new RegExp(`^Landed: ${land.land_id} into main at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d$`));
      expect(await panel.locator(`a[href$="/lands/${land.land_id}"]`).count()).to.equal(1);
      expect(await panel.locator(`a[href$="/snapshots/${land.landed_snapshot_id}"]`).count()).to.equal(1);
      expect(await panel.innerText()).to.not.include('✗');
      // the Attestation card shows the attestation the Policy card cites
      const card = w.page.locator('#attestation');
      await card.getByText(attestation.attestation_id).waitFor();
      expect(await card.innerText()).to.not.include('No attestation');
      expect(await w.page.locator('#policy').innerText()).to.include(attestation.attestation_id);
      await shot(w.page, `change-landed-${scheme}`);
      expect(w.errors).to.deep.equal([]);
    }
  });

  it('a refused land appears in the Lands card as the feed reports it (land.rejected), without a reload', async () => {
    const sx = await Seeder.register(s.url, 'refused-land');
    const base = await sx.snap({ 'a.txt': 'a\n' }, { moveLine: true });
    const rev = await sx.snap({ 'a.txt': 'b\n' }, { parent: base });
    const c = await sx.change('Not ready yet');
    await sx.patchset(c.change, base, rev, 'one');
    const w = await open();
    await w.page.goto(repoUrl(sx.repo, `/changes/${c.change}?tab=checks`));
    await w.page.locator('#lands').getByText('No land of this change yet.').waitFor();
    await w.page.locator('.topbar .live').waitFor();
    await w.page.evaluate(() => { (window as unknown as { sameDocument: boolean }).sameDocument = true; });
    const refused = await api(s.url, 'POST', `/v1/native/repository-authorities/${sx.repo}/task-land`, { json: { contract: 'task-land-atomic/v1', idempotency_key: 'ui-refused-1', task_or_change_ref: c.ref, mode: 'merge' } });
    expect(refused.status).to.equal(409);
    const row = w.page.locator('#lands .row', { hasText: refused.json.land.land_id });
    await row.waitFor();
    expect(await row.locator('.badge').allInnerTexts()).to.deep.equal(['rejected', 'blocked by policy']);
    expect(await w.page.locator('#lands').innerText()).to.not.include('No land of this change yet.');
    expect(await w.page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).to.equal(true);
    expect(w.errors).to.deep.equal([]);
  });

  it('a CI job whose tests failed shows the outcome "fail" first, its state "succeeded" beside it: dashboard, jobs page (with an outcome filter), job page, change page', async () => {
    const { job, change } = demo.failing;
    const row = (w: Watched) => w.page.locator(`.jobs tr:has(a[href$="/jobs/${job}"])`);
    const check = async (w: Watched) => {
      await row(w).waitFor();
      expect(await row(w).locator('.badge').allInnerTexts()).to.deep.equal(['fail']);
      expect(await row(w).innerText()).to.include('succeeded');
    };
    const w = await open();
    await w.page.goto(repoUrl(demo.s.repo));
    await check(w);
    // a passing job says pass
    const passing = ((await demo.s.get('/worker-jobs?limit=100')).jobs as Array<Record<string, any>>).find((j) => j.ci?.tests_status === 'pass' && j.job_type === 'patchset.ci')!;
    expect(await w.page.locator(`.jobs tr:has(a[href$="/jobs/${passing.worker_job_index}"]) .badge`).allInnerTexts()).to.deep.equal(['pass']);
    await w.page.goto(repoUrl(demo.s.repo, '/jobs'));
    await check(w);
    // the outcome filter: only failing runs
    await w.page.getByRole('navigation', { name: 'Filter by CI outcome' }).getByRole('link', { name: 'fail' }).click();
    // The link changes the URL first and the rows when the filtered page arrives: wait for both,
    // not for a row the unfiltered page already shows (a filter that does not filter times out).
    await w.page.waitForURL(/[?&]outcome=fail\b/);
    await w.page.waitForFunction(() => {
      const badges = [...document.querySelectorAll('.jobs tbody tr .job-outcome .badge')];
      return badges.length > 0 && badges.every((b) => b.textContent?.trim() === 'fail');
    });
    await check(w);
    expect(new URL(w.page.url()).searchParams.get('outcome')).to.equal('fail');
    const outcomes = await w.page.locator('.jobs tbody tr .job-outcome .badge').allInnerTexts();
    expect(outcomes.length).to.be.greaterThan(0);
    expect(new Set(outcomes)).to.deep.equal(new Set(['fail']));
    await w.page.goto(repoUrl(demo.s.repo, `/jobs/${job}`));
    await w.page.getByRole('heading', { name: new RegExp(`Job #${job}`) }).waitFor();
    expect(await w.page.locator('h1 .badge').allInnerTexts()).to.deep.equal(['fail']);
    expect(await w.page.locator('h1').innerText()).to.include('succeeded');
    await w.page.goto(repoUrl(demo.s.repo, `/changes/${change}?tab=checks`));
    await check(w);
    expect(w.errors).to.deep.equal([]);
  });

  it('the jobs page filters by CI outcome on the server (?outcome=): a failed-tests job is under "fail", not "pass", and the pages follow the server\'s cursor', async () => {
    const sx = await Seeder.register(s.url, 'many-jobs');
    const base = await sx.snap({ 'a.txt': 'a\n' }, { moveLine: true });
    const rev = await sx.snap({ 'a.txt': 'b\n' }, { parent: base });
    const c = await sx.change('Flaky');
    const ps = await sx.patchset(c.change, base, rev, 'one');
    const failed: number[] = [];
    for (let i = 0; i < 52; i++) failed.push((await sx.ci(ps, 'fail')).job.worker_job_index as number);
    const passed = (await sx.ci(ps, 'pass')).job.worker_job_index as number;
    // what the server says, which the page shows
    const apiFail = await sx.get('/worker-jobs?outcome=fail&limit=50');
    expect(apiFail.jobs.map((j: Record<string, any>) => j.worker_job_index)).to.deep.equal(failed.slice(2).reverse());
    const jobsIn = async (w: Watched) => (await w.page.locator('.jobs tbody tr td:first-child a').allInnerTexts()).map((t) => Number(t.replace('#', '')));
    const w = await open();
    const requests: string[] = [];
    w.page.on('request', (r) => { if (r.url().includes('/worker-jobs?')) requests.push(new URL(r.url()).search); });
    await w.page.goto(repoUrl(sx.repo, '/jobs?outcome=fail'));
    await w.page.locator('.jobs tbody tr').first().waitFor();
    expect(await jobsIn(w)).to.deep.equal(failed.slice(2).reverse()); // the newest 50, newest first
    expect(new Set(await w.page.locator('.jobs tbody tr .job-outcome .badge').allInnerTexts())).to.deep.equal(new Set(['fail']));
    expect(await w.page.locator('.filter-note').count()).to.equal(0);
    expect(requests.some((q) => new URLSearchParams(q).get('outcome') === 'fail')).to.equal(true);
    // the next page: the two oldest failures, then no further page
    await w.page.getByRole('link', { name: 'Older jobs →' }).click();
    await w.page.waitForFunction(() => new URL(location.href).searchParams.has('cursor'));
    await w.page.waitForFunction(() => document.querySelectorAll('.jobs tbody tr').length === 2);
    expect(await jobsIn(w)).to.deep.equal([failed[1], failed[0]]);
    expect(await w.page.getByRole('link', { name: 'Older jobs →' }).count()).to.equal(0);
    await w.page.getByRole('link', { name: '← Newest' }).waitFor();
    // "pass" lists the passing run and none of the failures
    await w.page.getByRole('navigation', { name: 'Filter by CI outcome' }).getByRole('link', { name: 'pass' }).click();
    await w.page.waitForFunction(() => new URL(location.href).searchParams.get('outcome') === 'pass');
    await w.page.locator(`.jobs tr:has(a[href$="/jobs/${passed}"])`).waitFor();
    expect(await jobsIn(w)).to.deep.equal([passed]);
    expect(await w.page.locator('.jobs tbody tr .job-outcome .badge').allInnerTexts()).to.deep.equal(['pass']);
    await shot(w.page, 'jobs-outcome-pass');
    expect(w.errors).to.deep.equal([]);
  });

  it('every blocked_by value the API can send has a label on the change page, and an unchecked merge says so without blocking (readiness answers replaced in the browser)', async () => {
    const w = await open();
    let patch: (r: Record<string, any>) => Record<string, any> = (r) => r;
    await w.page.route('**/read/changes/*/readiness', async (route) => {
      const response = await route.fetch();
      await route.fulfill({ response, json: patch(await response.json()) });
    });
    const panel = w.page.locator('section.readiness');
    // An open change that no earlier test lands or queues (the page shows a closed or queued change otherwise).
    const url = repoUrl(demo.s.repo, `/changes/${demo.failing.change}?tab=conversation`);
    for (const value of READINESS_BLOCKERS) {
      patch = (r) => ({ ...r, can_land: false, blocked_by: value, reason: `because ${value}` });
      await w.page.goto(url);
      await panel.locator('.blocked-by', { hasText: value }).waitFor();
      const heading = await panel.locator('h2').innerText();
      expect(heading, value).to.match(new RegExp(`^Can.t land: [A-Z].+ ${value}$`));
      expect(heading, value).to.not.include('it is refused'); // the fallback for a value without a label
    }
    // unchecked: a green mark stays green, the note says the merge was not checked
    patch = (r) => ({ ...r, can_land: true, blocked_by: null, reason: null, base_stale: true, merge: { ...r.merge, status: 'unchecked', conflicts: [], conflicts_count: 0, note: 'the merge reads more than a readiness check does' } });
    await w.page.goto(url);
    await panel.getByRole('heading', { name: 'Ready to land' }).waitFor();
    expect(await panel.getAttribute('class')).to.equal('readiness ok');
    expect(await panel.locator('.merge-fact').innerText()).to.equal('not checked');
    expect(await panel.locator('.merge-note').innerText()).to.include("main moved since this patchset's base; whether it merges onto main's head was not checked");
    expect(await panel.locator('.warn-text').count()).to.equal(0);
    expect(await w.page.locator('#actions').getByRole('button', { name: 'Land…' }).isDisabled()).to.equal(false);
    expect(w.errors).to.deep.equal([]);
  });

  it('the readiness panel says the policy is judged now; the Policy card says what was last recorded (none)', async () => {
    const w = await open();
    await w.page.goto(repoUrl(demo.s.repo, `/changes/${demo.failing.change}`));
    await w.page.getByRole('heading', { name: /Can't land/ }).waitFor();
    expect(await w.page.locator('section.readiness .policy-now').innerText()).to.equal('judged now: fail');
    expect(await w.page.locator('#policy .card-head').innerText()).to.match(/last recorded decision:\s*none/);
    expect(await w.page.locator('#policy').innerText()).to.include('No decision recorded for this patchset yet.');
    expect(w.errors).to.deep.equal([]);
  });

  it('a change that conflicts with the line after another land shows blocked_by conflict with its paths (an open page follows the line), no green mark, Land off with the reason; a disjoint stale change shows a neutral note and ✓ (screenshots)', async () => {
    const sx = await Seeder.register(s.url, 'conflicts');
    const base = await sx.snap({ 'src/app.txt': 'one\ntwo\nthree\n', 'notes.txt': 'notes\n' }, { moveLine: true });
    /** A change whose gates pass (CI, attestation, an approval): only the line can stop it. */
    const ready = async (title: string, files: Files) => {
      const c = await sx.change(title);
      const rev = await sx.snap(files, { parent: base, message: title });
      const ps = await sx.patchset(c.change, base, rev, title);
      await sx.ci(ps);
      await sx.attest(ps);
      await sx.review(c.change, ps, 'erin', 'approve', 'Fine.');
      return c;
    };
    const first = await ready('Say ONE', { 'src/app.txt': 'ONE\ntwo\nthree\n', 'notes.txt': 'notes\n' });
    const second = await ready('Say uno', { 'src/app.txt': 'uno\ntwo\nthree\n', 'notes.txt': 'notes\n' });
    const disjoint = await ready('More notes', { 'src/app.txt': 'one\ntwo\nthree\n', 'notes.txt': 'notes\nmore notes\n' });
    // the page is open while the other change lands: it follows the line's move (line.moved)
    const w = await open();
    await w.page.goto(repoUrl(sx.repo, `/changes/${second.change}?tab=conversation`));
    const panel = w.page.locator('section.readiness');
    await panel.getByRole('heading', { name: 'Ready to land' }).waitFor();
    await w.page.locator('.topbar .live').waitFor();
    await w.page.evaluate(() => { (window as unknown as { sameDocument: boolean }).sameDocument = true; });
    const landed = await sx.post('/task-land', { contract: 'task-land-atomic/v1', idempotency_key: 'ui-conflict-1', task_or_change_ref: first.ref, mode: 'merge' });
    expect(landed.land.status).to.equal('landed');
    const r = await sx.get(`/read/changes/${second.change}/readiness`);
    expect(r).to.include({ can_land: false, blocked_by: 'conflict' });
    expect(r.merge.conflicts).to.deep.equal([{ path: 'src/app.txt', kind: 'content' }]);
    await panel.locator('.conflict-list').waitFor();
    expect(await w.page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).to.equal(true);
    expect(await panel.getAttribute('class')).to.equal('readiness no');
    expect(await panel.locator('h2').innerText()).to.equal("Can't land: It conflicts with the target line conflict");
    expect(await panel.innerText()).to.not.include('✓').and.not.include('Ready to land');
    expect(await panel.locator('.merge-fact').innerText()).to.equal('conflict');
    // the path, with its kind, linked to the file in the diff; following the link goes there
    const item = panel.locator('.conflict-list li[data-conflict="src/app.txt"]');
    expect(await item.innerText()).to.include('src/app.txt').and.include('content');
    const link = item.locator('a.path-link');
    expect(await link.getAttribute('href')).to.equal('#file=src%2Fapp.txt');
    // Land is off, with the reason beside it
    const landButton = w.page.locator('#actions').getByRole('button', { name: 'Land…' });
    expect(await landButton.isDisabled()).to.equal(true);
    expect(await landButton.getAttribute('aria-describedby')).to.equal('land-conflict-reason');
    expect(await w.page.locator('#land-conflict-reason').innerText()).to.include('conflicts with the head of main in 1 path');
    await shot(w.page, 'change-conflict');
    await link.click();
    await w.page.waitForFunction(() => location.hash === '#file=src%2Fapp.txt');
    await w.page.locator('.diff-file[data-path="src/app.txt"] tr.add', { hasText: 'uno' }).waitFor();

    // a disjoint change whose base the land moved: it merges cleanly, which the page says
    // neutrally beside the green mark (no amber "stale" warning)
    const rd = await sx.get(`/read/changes/${disjoint.change}/readiness`);
    expect(rd).to.include({ can_land: true, base_stale: true });
    expect(rd.merge.status).to.equal('clean');
    await w.page.goto(repoUrl(sx.repo, `/changes/${disjoint.change}?tab=conversation`));
    await panel.getByRole('heading', { name: 'Ready to land' }).waitFor();
    expect(await panel.getAttribute('class')).to.equal('readiness ok');
    expect(await panel.locator('.merge-note').innerText()).to.equal("main moved since this patchset's base; it merges cleanly.");
    expect(await panel.locator('.warn-text').count()).to.equal(0);
    expect(await panel.innerText()).to.not.match(/stale/i);
    expect(await w.page.locator('#actions').getByRole('button', { name: 'Land…' }).isDisabled()).to.equal(false);
    await shot(w.page, 'change-stale-clean');
    // a change into another line, which a push moves (no land, so no patchset.base_stale
    // event) into a conflict: the open page follows the line (line.moved) and turns red
    const devBase = await sx.snap({ 'notes.txt': 'notes\n' }, { line: 'dev', moveLine: true });
    const dc = await sx.change('Dev notes', { line: 'dev' });
    const devRev = await sx.snap({ 'notes.txt': 'dev notes\n' }, { line: 'dev', parent: devBase });
    await sx.patchset(dc.change, devBase, devRev, 'dev notes');
    await w.page.goto(repoUrl(sx.repo, `/changes/${dc.change}`));
    await panel.locator('.merge-fact', { hasText: 'clean' }).waitFor();
    await w.page.locator('.topbar .live').waitFor();
    await w.page.evaluate(() => { (window as unknown as { sameDocument: boolean }).sameDocument = true; });
    await sx.snap({ 'notes.txt': 'other notes\n' }, { line: 'dev', parent: devBase, moveLine: true });
    await panel.locator('.conflict-list li[data-conflict="notes.txt"]').waitFor();
    expect(await panel.locator('.merge-fact').innerText()).to.equal('conflict');
    expect(await w.page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).to.equal(true);
    expect(w.errors).to.deep.equal([]);
  });

  it('a block replaced by the same reviewer\'s later vote shows as superseded, not blocking; a review request has no "stale" badge', async () => {
    const sx = await Seeder.register(s.url, 'votes');
    const base = await sx.snap({ 'a.txt': 'a\n' }, { moveLine: true });
    const rev1 = await sx.snap({ 'a.txt': 'b\n' }, { parent: base });
    const rev2 = await sx.snap({ 'a.txt': 'c\n' }, { parent: base });
    const c = await sx.change('Votes');
    const ps1 = await sx.patchset(c.change, base, rev1, 'one');
    await sx.requestReview(c.change, ps1, 'backend', 'please look', 'carol');
    await sx.review(c.change, ps1, 'bob', 'request_changes', 'Not like this.', true);
    const ps2 = await sx.patchset(c.change, base, rev2, 'two');
    await sx.post(`/changes/${c.change}:selectPatchset`, { patchset_id: ps2 });
    await sx.review(c.change, ps2, 'bob', 'approve', 'Better now.');
    const reviews = (await sx.get(`/changes/${c.change}/reviews`)).reviews as Array<Record<string, any>>;
    const block = reviews.find((r) => r.action === 'request_changes')!;
    const request = reviews.find((r) => r.action === 'request')!;
    expect(block).to.include({ blocking: true, live: false });
    expect(request).to.include({ stale: true });
    const w = await open();
    await w.page.goto(repoUrl(sx.repo, `/changes/${c.change}?tab=conversation`));
    const item = (id: string) => w.page.locator(`#reviews li[data-review="${id}"]`);
    await item(block.review_id).waitFor();
    expect(await item(block.review_id).locator('.badge').allInnerTexts()).to.deep.equal(['superseded']);
    expect(await item(block.review_id).getAttribute('class')).to.not.include('ev-bad');
    expect(await item(request.review_id).locator('.badge').count()).to.equal(0);
    expect(await w.page.locator('#reviews .card-head').innerText()).to.include('0 blocking');
    // a live block keeps its badge
    await sx.review(c.change, ps2, 'dana', 'request_changes', 'Wait.', true);
    const live = ((await sx.get(`/changes/${c.change}/reviews`)).reviews as Array<Record<string, any>>).at(-1)!;
    await item(live.review_id).waitFor();
    expect(await item(live.review_id).locator('.badge').allInnerTexts()).to.deep.equal(['blocking']);
    expect(w.errors).to.deep.equal([]);
  });

  it('ids are links: the timeline, the queue card, the dashboard queue, job pages, land pages and the lines page', async () => {
    const q = demo.queue;
    const r = demo.s.repo;
    const w = await open();
    const psHref = (ps: string) => `a[href="/ui/repos/${r}/changes/${ps.replace(/\.ps-\d+$/, '')}?ps=${encodeURIComponent(ps)}"]`;
    // the timeline: the patchset each review was given on
    await w.page.goto(repoUrl(r, `/changes/${demo.failing.change}?tab=conversation`));
    await w.page.locator(`#reviews ${psHref(demo.failing.ps)}`).waitFor();
    // the queue card: the entry's patchset and line, the speculation's snapshots
    await w.page.goto(repoUrl(r, `/changes/${q.testing.change}?tab=checks`));
    const card = w.page.locator('#queue');
    const testing = (await demo.s.get(`/land-queue/${q.testing.entry}`)).entry;
    await card.locator(psHref(testing.patchset_id)).waitFor();
    expect(await card.locator(`a[href="/ui/repos/${r}/lines/main"]`).count()).to.equal(1);
    expect(await card.locator(`a[href$="/snapshots/${testing.speculation.snapshot_id}"]`).count()).to.equal(1);
    // the dashboard's queue: entry ids lead to their change's queue card
    await w.page.goto(repoUrl(r));
    const entry = w.page.locator(`#land-queue a[href="/ui/repos/${r}/changes/${q.testing.change}#queue"]`, { hasText: q.testing.entry });
    await entry.first().click();
    await w.page.locator('#queue').getByText(q.testing.entry).first().waitFor();
    expect(new URL(w.page.url()).pathname + new URL(w.page.url()).hash).to.equal(`/ui/repos/${r}/changes/${q.testing.change}#queue`);
    // a job page: its patchset and snapshot; a land-queue job: its entry
    const job = (await demo.s.get(`/worker-jobs/${demo.failing.job}`)).job;
    await w.page.goto(repoUrl(r, `/jobs/${demo.failing.job}`));
    await w.page.locator(`.page-head ${psHref(job.patchset_id)}`).waitFor();
    expect(await w.page.locator(`.page-head a[href$="/snapshots/${job.snapshot_id}"]`).count()).to.equal(1);
    await w.page.goto(repoUrl(r, `/jobs/${q.testing.job}`));
    await w.page.locator(`.page-head a[href="/ui/repos/${r}/changes/${q.testing.change}#queue"]`).waitFor();
    // a land page: its patchset, heads and policy decision
    const land = ((await demo.s.get(`/read/changes/${demo.landed.change}/lands`)).lands as Array<Record<string, any>>)[0];
    await w.page.goto(repoUrl(r, `/lands/${land.land_id}`));
    await w.page.locator(`.page-head ${psHref(land.patchset_id)}`).waitFor();
    expect(await w.page.locator(`a[href$="/snapshots/${land.target_head_before}"]`).count()).to.equal(1);
    expect(await w.page.locator(`a[href$="/snapshots/${land.landed_snapshot_id}"]`).count()).to.equal(1);
    expect(await w.page.locator(`a[href$="#policy"]`, { hasText: land.policy_decision_id }).count()).to.equal(1);
    // the lines page: each head snapshot
    const lines = (await demo.s.get('/lines')).lines as Array<Record<string, any>>;
    await w.page.goto(repoUrl(r, '/lines'));
    for (const l of lines) await w.page.locator(`td a[href$="/snapshots/${l.head_snapshot_id}"]`).waitFor();
    await w.page.goto(repoUrl(r, '/lines/main'));
    await w.page.locator('.history .commit').first().waitFor();
    const head = lines.find((l) => l.name === 'main')!.head_snapshot_id;
    expect(await w.page.locator(`.page-head a[href$="/snapshots/${head}"]`).count()).to.equal(1);
    expect(await w.page.locator(`.history .row-meta a[href$="/snapshots/${head}"]`).count()).to.equal(1);
    expect(w.errors).to.deep.equal([]);
  });

  it('one failed read shows in its own card with a Retry; the other cards render (change page and dashboard)', async () => {
    const r = demo.s.repo;
    const w = await open();
    // the reviews of the change answer 500 until the route is released
    const reviews = `**/v1/native/repository-authorities/${r}/changes/${demo.failing.change}/reviews?*`;
    await w.page.route(reviews, (route) => route.fulfill({ status: 500, contentType: 'application/json', body: JSON.stringify({ error: 'injected failure' }) }));
    await w.page.goto(repoUrl(r, `/changes/${demo.failing.change}?tab=conversation`));
    const failed = w.page.locator('#reviews');
    await failed.getByText('injected failure').waitFor();
    expect(await failed.getByRole('alert').innerText()).to.include('HTTP 500');
    for (const id of ['patchsets', 'queue', 'actions', 'lands']) await w.page.locator(`#${id}`).waitFor();
    await w.page.getByRole('heading', { name: /Can't land/ }).waitFor();
    await w.page.getByRole('tab', { name: /^Checks/ }).click();
    for (const id of ['policy', 'ci', 'attestation']) await w.page.locator(`#${id}`).waitFor();
    expect(await w.page.locator('#ci .jobs tbody tr').count()).to.be.greaterThan(0);
    await w.page.getByRole('tab', { name: /^Files/ }).click();
    await w.page.locator('.diff-file').first().waitFor();
    await w.page.getByRole('tab', { name: /^Conversation/ }).click();
    await w.page.unroute(reviews);
    await failed.getByRole('button', { name: 'Retry' }).click();
    await failed.locator('.timeline li').first().waitFor();
    expect(await failed.getByRole('alert').count()).to.equal(0);
    // the browser logs each refused request itself; the page adds nothing else
    for (const e of w.errors) expect(e).to.match(/^Failed to load resource: the server responded with a status of 500 .*\/reviews\?/);
    w.errors.length = 0;

    // the dashboard: the CI queue fails alone
    const jobs = `**/v1/native/repository-authorities/${r}/worker-jobs?*`;
    await w.page.route(jobs, (route) => route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: 'jobs unavailable' }) }));
    await w.page.goto(repoUrl(r));
    await w.page.locator('section.card', { hasText: 'jobs unavailable' }).getByRole('heading', { name: 'CI queue' }).waitFor();
    await w.page.getByRole('heading', { name: 'Needs review' }).waitFor();
    await w.page.locator('#land-queue tbody tr').first().waitFor();
    await w.page.unroute(jobs);
    await w.page.locator('section.card', { hasText: 'jobs unavailable' }).getByRole('button', { name: 'Retry' }).click();
    await w.page.locator('.jobs tbody tr').first().waitFor();
    for (const e of w.errors) expect(e).to.match(/^Failed to load resource: the server responded with a status of 503 .*\/worker-jobs\?/);
  });

  it('a page that names nothing answers 404 and says so; ?ps= and ?against= naming no patchset of the change say so', async () => {
    const r = demo.s.repo;
    const w = await open();
    let res = await w.page.goto(repoUrl(r, '/changes/change-999'));
    expect(res!.status()).to.equal(404);
    await w.page.getByText('does not exist').first().waitFor();
    res = await w.page.goto(`${s.url}/ui/nowhere/at/all`);
    expect(res!.status()).to.equal(404);
    await w.page.getByRole('heading', { name: 'No such page' }).waitFor();
    w.errors.length = 0; // the browser's own log lines of the 404s

    const missing = `${demo.failing.change}.ps-9`;
    await w.page.goto(repoUrl(r, `/changes/${demo.failing.change}?ps=${missing}`));
    const note = w.page.locator('.missing-note');
    await note.waitFor();
    expect(await note.innerText()).to.include(missing).and.include(demo.failing.ps);
    await w.page.locator('.diff-file').first().waitFor(); // the selected patchset's diff
    await w.page.goto(repoUrl(r, `/changes/${demo.failing.change}?against=${missing}`));
    await note.waitFor();
    expect(await note.innerText()).to.include(`no patchset ${missing} to compare with`);
    await w.page.locator('.diff-file').first().waitFor(); // against its base
    expect(w.errors).to.deep.equal([]);
  });

  it('plans render their Markdown, and the job and snapshot pages read from the interface', async () => {
    const w = await open();
    await w.page.goto(`${s.url}/ui/repos/${demo.s.repo}/plans/plan-1`);
    await w.page.locator('.markdown h1', { hasText: 'Checkout hardening' }).waitFor();
    expect(await w.page.locator('.markdown li.task').count()).to.equal(3);
    expect(await w.page.locator('.markdown table td', { hasText: '60 s' }).count()).to.equal(1);
    expect(await w.page.locator('.markdown a[href="https://example.com/runbook"]').count()).to.equal(1);
    expect(await w.page.locator('.markdown .item-ref', { hasText: '#retry' }).count()).to.equal(1);
    await w.page.goto(`${s.url}/ui/repos/${demo.s.repo}/jobs/2`);
    await w.page.getByRole('heading', { name: /Job #2/ }).waitFor();
    expect(await w.page.locator('main').innerText()).to.include('3 run, 0 failed');
    await w.page.goto(`${s.url}/ui/repos/${demo.s.repo}/lines/main`);
    await w.page.locator('.history .commit a').first().click();
    await w.page.getByRole('heading', { name: 'Files' }).waitFor();
    expect(await w.page.locator('main').innerText()).to.include('src/checkout/handler.ts');
    expect(w.errors).to.deep.equal([]);
  });
});
