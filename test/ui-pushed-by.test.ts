// Who pushed, on the change page (docs/ui.md "The change page"; docs/git.md "Who pushed"), in a
// real browser: a patchset received by a push that named its pusher says "pushed by NAME", and
// when the commit's author is someone else ("Linus Torvalds", forged by mallory) both are shown,
// in the Patchsets table and the Description's header, so the forged author is seen; the Lands
// card says who asked for each land. A server started here behind an "ingress" (the identity
// header with its secret), pushes by the real git client. Screenshots at 1400×900 and 390×844 in
// both themes, axe-core on each. Skipped, saying so, without chromium or git.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, promises as fsp } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { importGit } from '../lib/client/git-import.js';
import { NO_PROGRESS } from '../lib/client/progress.js';
import { LandDesk } from '../lib/authority/workflow/lands.js';
import type { LandGates } from '../lib/authority/workflow/gates.js';
import { api, ok, startTestServer, tempDir, type TestServer } from './helpers.js';
import { commit, git as gitSync, hasGit } from './git-fixture.js';
import { CHROMIUM, SHOT_DIR } from './ui-browser.js';
import { grantRoles, seedAccounts, seedAdmin, withToken } from './access-seed.js';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];
const R = (repo: number, p = '') => `/v1/native/repository-authorities/${repo}${p}`;
const H = 'X-Remote-User';
const SECRET = 'a-long-enough-shared-secret';
const PASS: LandGates = () => ({ refusal: null, policy_decision_id: null });

/** git as a client, asynchronously (the server it talks to runs in this process); `as`: the commit's author and committer. */
function git(args: string[], as: { name: string; email: string } = { name: 'Ada', email: 'ada@example.org' }): Promise<string> {
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', GIT_AUTHOR_NAME: as.name, GIT_AUTHOR_EMAIL: as.email, GIT_COMMITTER_NAME: as.name, GIT_COMMITTER_EMAIL: as.email };
  return new Promise((resolve, reject) => {
    execFile('git', args, { env }, (err, stdout, stderr) => (err ? reject(new Error(`git ${args.join(' ')}: ${stderr}`)) : resolve(stdout)));
  });
}
/** A push for review through the ingress as `who`. */
const pushAs = (dir: string, url: string, who: string, ref = 'HEAD:refs/for/main', options: string[] = []) => git(['-C', dir, '-c', `http.extraHeader=${H}: ${who}`, '-c', `http.extraHeader=X-Cairn-Ingress-Secret: ${SECRET}`, 'push', '-q', ...options, url, ref]);

(hasGit ? describe : describe.skip)('reviewer UI: who pushed a patchset, who landed a change (Chromium)', function () {
  this.timeout(180_000);
  let browser: Browser;
  let s: TestServer;
  let repo: number;
  const contexts: BrowserContext[] = [];

  before(async function () {
    if (!CHROMIUM) {
      console.log('      SKIPPED: the browser tests of the reviewer UI need a chromium binary (apt-get install chromium; .ci/run installs it)');
      this.skip();
    }
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
    // The front door makes roles apply: a setup admin, the pushers (contributors), carol (lands) and the viewer of the pages.
    const dataDir = path.join(tempDir(), 'data');
    const admin = await seedAdmin(dataDir);
    await seedAccounts(dataDir, ['mallory', 'ann', 'carol', 'viewer'].map((name) => ({ name })));
    s = await startTestServer(dataDir, { identity: { header: H, secret: SECRET }, gitRefresh: false });
    const src = path.join(tempDir('cairn-git-'), 'src');
    await fsp.mkdir(src, { recursive: true });
    gitSync(src, ['init', '-q', '-b', 'main']);
    await fsp.writeFile(path.join(src, 'README.md'), '# shop\n\nA small web shop.\n');
    gitSync(src, ['add', '-A']);
    commit(src, 'first\n');
    const reg = await api(s.url, 'POST', '/v1/native/repository-authorities', { json: { repository_name: 'shop', namespace: '', policy_flags: 0 }, headers: admin.headers });
    expect(reg.status, reg.text).to.be.oneOf([200, 201]);
    repo = reg.json.repository.repository_index;
    await grantRoles(s.url, admin.headers, repo, { mallory: 'contributor', ann: 'contributor', carol: 'maintainer', viewer: 'reader' });
    await importGit({ server: withToken(s.url, admin.token), repo, source: src, line: 'main', progress: NO_PROGRESS });
    const url = `${s.url}${R(repo, '/git/main.git')}`;
    const dir = path.join(tempDir('cairn-ui-push-'), 'work');
    await git(['-c', `http.extraHeader=${H}: viewer`, '-c', `http.extraHeader=X-Cairn-Ingress-Secret: ${SECRET}`, 'clone', '-q', url, dir]);
    const edit = async (file: string, text: string, message: string, as: { name: string; email: string }, amend = false) => {
      await fsp.writeFile(path.join(dir, file), text);
      await git(['-C', dir, 'add', '-A']);
      await git(['-C', dir, 'commit', '-q', ...(amend ? ['--amend', '--reset-author'] : []), '-m', message], as);
    };
    // Mallory pushes a commit that says Linus Torvalds wrote it: change-1, patchset 1.
    await edit('README.md', '# shop\n\nA small web shop. Fast.\n', 'Speed up the shop\n\nThe readme says so.', { name: 'Linus Torvalds', email: 'torvalds@linux-foundation.org' });
    await pushAs(dir, url, 'mallory');
    // Then one written as herself: patchset 2 of the same change, pushed with -o noselect so
    // patchset 1 (Linus's) stays the selected one the Description shows.
    await edit('README.md', '# shop\n\nA small web shop. Faster.\n', 'Speed up the shop more\n\nThe readme says so.', { name: 'mallory', email: 'mallory@example.org' }, true);
    await pushAs(dir, url, 'mallory', 'HEAD:refs/for/main%change=change-1', ['-o', 'noselect']);
    // Ann pushes a change of her own, and carol lands it (gates passed by the test).
    await git(['-C', dir, 'reset', '-q', '--hard', 'origin/main']);
    await edit('NOTES.md', 'notes\n', 'Add notes', { name: 'Ann Example', email: 'ann@example.org' });
    await pushAs(dir, url, 'ann');
    const a = await (await s.ready).opened(repo);
    (a as unknown as { lands: LandDesk }).lands = new LandDesk(a.store, a.workflow, PASS);
    const landed = await ok(api(s.url, 'POST', R(repo, '/changes/change-2:submit'), { json: { mode: 'merge' }, headers: { [H]: 'carol', 'X-Cairn-Ingress-Secret': SECRET } }), 'land');
    expect(landed.land.landed_by).to.equal('carol');
    mkdirSync(SHOT_DIR, { recursive: true });
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await s?.stop();
  });

  async function open(options: { colorScheme?: 'light' | 'dark'; width?: number; height?: number } = {}): Promise<{ page: Page; errors: string[] }> {
    // The pages are seen as the front door would send them: as the viewer (a reader).
    const context = await browser.newContext({ extraHTTPHeaders: { [H]: 'viewer', 'X-Cairn-Ingress-Secret': SECRET }, viewport: { width: options.width ?? 1400, height: options.height ?? 900 }, colorScheme: options.colorScheme ?? 'light', bypassCSP: true });
    contexts.push(context);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m: ConsoleMessage) => { if (m.type() === 'error') errors.push(`${m.text()} ${m.location().url ?? ''}`); });
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('dialog', (d) => { errors.push(`dialog: ${d.message()}`); void d.dismiss(); });
    return { page, errors };
  }

  /** A screenshot in $TMPDIR/cairn-ui-screenshots, copied to $UI_SCREENSHOTS_DIR (docs/screenshots) when set. */
  async function shot(page: Page, name: string): Promise<void> {
    const file = path.join(SHOT_DIR, `${name}.png`);
    await page.screenshot({ path: file });
    if (process.env.UI_SCREENSHOTS_DIR) {
      mkdirSync(process.env.UI_SCREENSHOTS_DIR, { recursive: true });
      copyFileSync(file, path.join(process.env.UI_SCREENSHOTS_DIR, `${name}.png`));
    }
  }

  /** axe-core's serious and critical violations on the page as it stands. */
  async function axe(p: Page): Promise<string[]> {
    if (!(await p.evaluate(() => 'axe' in window))) await p.addScriptTag({ path: AXE });
    return p.evaluate(async (tags) => {
      const w = window as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: Array<{ id: string; impact: string | null; nodes: Array<{ target: string[] }> }> }> } };
      const r = await w.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
      return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((x) => x.target.join(' ')).join(' | ')}`);
    }, AXE_TAGS);
  }

  const changeUrl = (ref: string, rest = '') => `${s.url}/ui/repos/${repo}/changes/${ref}${rest}`;

  it('a pushed patchset says who pushed it, and beside it the commit\'s author when that is someone else ("authored by Linus Torvalds · pushed by mallory")', async () => {
    const { page: p, errors } = await open();
    await p.goto(changeUrl('change-1', '?tab=conversation#patchsets'));
    const rows = p.locator('#patchsets tbody tr');
    await p.locator('#patchsets .pushed-by').nth(1).waitFor();
    await p.locator('#patchsets .authored-by').first().waitFor();
    const [ps1, ps2] = [await rows.nth(0).innerText(), await rows.nth(1).innerText()];
    expect(ps1).to.match(/authored by Linus Torvalds\s*·\s*pushed by mallory/);
    // Patchset 2's commit is mallory's own: only who pushed it.
    expect(ps2).to.include('pushed by mallory').and.not.include('authored by');
    expect(await rows.nth(0).locator('.authored-by').getAttribute('title')).to.include('torvalds@linux-foundation.org').and.include('mallory');
    // The Description's header, for the shown (selected) patchset 1: the same.
    expect(await p.locator('#description .card-head').innerText()).to.match(/authored by Linus Torvalds\s*·\s*pushed by mallory/);
    // Gerrit's Download box, for the shown patchset (docs/git.md "Fetch a patchset").
    const fetchBox = p.locator('#patchsets .fetch-command code');
    expect(await fetchBox.innerText()).to.equal(`git fetch ${s.url}/v1/native/repository-authorities/${repo}/git.git refs/changes/01/1/1 && git checkout FETCH_HEAD`);
    await p.locator('#patchsets').scrollIntoViewIfNeeded();
    await shot(p, 'change-download');
    expect(await axe(p)).to.deep.equal([]);
    expect(errors).to.deep.equal([]);
  });

  it('a patchset whose commit is its pusher\'s own says only who pushed it; the Lands card says who landed the change', async () => {
    const { page: p, errors } = await open();
    await p.goto(changeUrl('change-2', '?tab=conversation#patchsets'));
    await p.locator('#lands .row').first().waitFor();
    expect(await p.locator('#lands .row').first().innerText()).to.include('by carol');
    await p.locator('#patchsets tbody tr').first().waitFor();
    expect(await p.locator('#patchsets tbody tr').first().innerText()).to.include('pushed by ann').and.not.include('authored by');
    // (the change has no attestation: the page reads one, and the browser logs its 404)
    expect(errors.filter((e) => !/status of 404 .*\/patchsets\/change-2\.ps-1\/attestation$/.test(e))).to.deep.equal([]);
  });

  it('screenshots at 1400×900 and 390×844 in both themes; axe-core finds nothing serious, nothing is wider than the screen', async () => {
    const problems: string[] = [];
    for (const view of [
      { colorScheme: 'light' as const, name: 'change-pushed-by-light' },
      { colorScheme: 'dark' as const, name: 'change-pushed-by-dark' },
      { colorScheme: 'light' as const, width: 390, height: 844, name: 'change-pushed-by-390-light' },
      { colorScheme: 'dark' as const, width: 390, height: 844, name: 'change-pushed-by-390-dark' },
    ]) {
      const o = await open(view);
      await o.page.goto(changeUrl('change-1', '?tab=conversation#patchsets'));
      await o.page.locator('#patchsets .authored-by').first().waitFor();
      await o.page.locator('#patchsets').scrollIntoViewIfNeeded();
      await shot(o.page, view.name);
      problems.push(...(await axe(o.page)).map((v) => `${view.name}: ${v}`));
      const wide = await o.page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: innerWidth }));
      expect(wide.scroll, `${view.name} is wider than the screen`).to.be.at.most(wide.inner);
      expect(o.errors).to.deep.equal([]);
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});
