// The reviewer UI on a server with accounts (`cairn serve --auth tokens`; docs/ui.md "Signing
// in", "What each role sees", "Settings", "Attest"): signing in with a personal access token
// (kept in sessionStorage, never in a URL, the page's text or the console), a refused token,
// signing out; the change page offering a reader no review or land controls and a maintainer
// all of them; the settings page granting and revoking roles (checked through the API) and
// shown to nobody but a repository admin; and recording an attestation from the change page.
import { expect } from 'chai';
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { api, startTestServer, tempDir, type TestServer } from './helpers.js';
import { CHROMIUM, SHOT_DIR } from './ui-browser.js';
import { R, Seeder } from './ui-seed.js';
import { AccessBook } from '../lib/authority/access.js';
import { Layout } from '../lib/store/layout.js';
import { ROUTES } from '../lib/http/routes.js';
import { UI_STATIC_DIR } from '../lib/cli/ui-files.js';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];
interface AxeViolation { id: string; impact: string | null; nodes: { target: string[] }[] }

describe('UI: signing in, roles, settings and attest (--auth tokens)', function () {
  this.timeout(240_000);
  let browser: Browser;
  let s: TestServer;
  let repo: number;
  let change: string;
  let ps1: string;
  /** A change whose selected patchset (ps-1) is not its newest (ps-2): added through the API, which does not select it. */
  let older: string;
  const tokens: Record<string, string> = {};
  const contexts: BrowserContext[] = [];

  before(async function () {
    if (!CHROMIUM) {
      console.log('      SKIPPED: the browser tests of the reviewer UI need a chromium binary (apt-get install chromium; .ci/run installs it)');
      this.skip();
    }
    // The repository's content is seeded on the same data directory without an auth mode first
    // (the seeding helpers send no token), then the server starts again with accounts.
    const dataDir = path.join(tempDir(), 'data');
    mkdirSync(dataDir, { recursive: true });
    const open = await startTestServer(dataDir);
    const seed = await Seeder.register(open.url, 'team-ui');
    repo = seed.repo;
    const base = await seed.snap({ 'a.txt': 'one\ntwo\n' }, { moveLine: true });
    const rev = await seed.snap({ 'a.txt': 'one\nthree\n' }, { parent: base });
    const c = await seed.change('Explain the checkout');
    change = c.change;
    ps1 = await seed.patchset(change, base, rev, 'Explain it', 'carol', 'human_only');
    older = (await seed.change('Two patchsets')).change;
    await seed.patchset(older, base, rev, 'first', 'carol', 'human_only');
    await seed.patchset(older, base, await seed.snap({ 'a.txt': 'one\nfour\n' }, { parent: base }), 'second', 'carol', 'human_only');
    await open.stop();

    const book = AccessBook.open(new Layout(dataDir));
    try {
      await book.addAccount(null, 'root', true);
      tokens.root = (await book.createToken(null, 'root', 'setup', ['read', 'write', 'admin'])).token;
    } finally {
      await book.close();
    }
    s = await startTestServer(dataDir, { auth: 'tokens' });
    for (const [name, role] of [['rita', 'reader'], ['max', 'maintainer'], ['ada', 'admin'], ['cora', null]] as const) {
      // a repository admin's token needs the admin scope to change the access
      const scopes = role === 'admin' ? ['read', 'write', 'admin'] : undefined;
      const a = await api(s.url, 'POST', '/v1/native/accounts', { json: { name, token: { name: 'ui', ...(scopes ? { scopes } : {}) } }, headers: bearer(tokens.root) });
      expect(a.status, a.text).to.equal(201);
      tokens[name] = a.json.token.token;
      if (role) {
        const g = await api(s.url, 'PATCH', R(repo, '/access'), { json: { grant: [{ subject: `user:${name}`, role }] }, headers: bearer(tokens.root) });
        expect(g.status, g.text).to.equal(200);
      }
    }
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
    mkdirSync(SHOT_DIR, { recursive: true });
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await s?.stop();
  });

  /** A browser tab, signed in as `who` (its token put in sessionStorage before the page runs) or not. `bypassCSP`: for axe-core, injected as an inline script. */
  async function open(who: string | null, width = 1400, options: { bypassCSP?: boolean; colorScheme?: 'light' | 'dark' } = {}): Promise<{ page: Page; errors: string[]; console: string[] }> {
    const context = await browser.newContext({ viewport: { width, height: 900 }, bypassCSP: options.bypassCSP ?? false, colorScheme: options.colorScheme ?? 'light' });
    contexts.push(context);
    if (who) await context.addInitScript((t) => sessionStorage.setItem('cairn.token', t), tokens[who]);
    const page = await context.newPage();
    const errors: string[] = [];
    const console: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m: ConsoleMessage) => {
      console.push(m.text());
      // a 401 or 403 the page asked for on purpose shows as a failed resource load: not an error of the page
      if (m.type() === 'error' && !/status of 40[134]/.test(m.text())) errors.push(m.text());
    });
    page.on('dialog', (d) => { errors.push(`dialog: ${d.message()}`); void d.dismiss(); });
    return { page, errors, console };
  }

  /** `fullPage`: the whole page (the sticky top bar would land mid-page on a scrolled one: not then). */
  async function shot(page: Page, name: string, fullPage = true): Promise<void> {
    const file = path.join(SHOT_DIR, `${name}.png`);
    await page.screenshot({ path: file, fullPage });
    if (process.env.UI_SCREENSHOTS_DIR) {
      mkdirSync(process.env.UI_SCREENSHOTS_DIR, { recursive: true });
      copyFileSync(file, path.join(process.env.UI_SCREENSHOTS_DIR, `${name}.png`));
    }
  }

  const changeUrl = (tab = 'conversation') => `${s.url}/ui/repos/${repo}/changes/${change}?tab=${tab}`;
  /** Everything the page shows and holds as text, attributes and input values included. */
  const pageText = (page: Page) => page.evaluate(() => document.documentElement.outerHTML + [...document.querySelectorAll('input, textarea')].map((e) => (e as HTMLInputElement).value).join(' '));

  /** axe-core's serious and critical findings on the page as it stands. */
  async function axe(p: Page): Promise<string[]> {
    await p.addScriptTag({ path: AXE });
    const found = await p.evaluate(async (tags) => {
      const w = window as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: AxeViolation[] }> } };
      return (await w.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] })).violations;
    }, AXE_TAGS);
    return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
  }

  it('passes axe-core (no serious or critical finding) on the sign-in form, a reader\'s change page, the attestation form and the settings, in both themes', async () => {
    const pages: [string | null, string, string][] = [
      [null, `${s.url}/ui/repos/${repo}`, 'form.signin'],
      ['rita', changeUrl(), '#actions .role-note'],
      ['max', changeUrl('checks'), 'form.attest-form'],
      ['ada', `${s.url}/ui/repos/${repo}/settings`, '#access table.grants'],
    ];
    const found: string[] = [];
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const [who, url, ready] of pages) {
        const w = await open(who, 1400, { bypassCSP: true, colorScheme });
        await w.page.goto(url);
        await w.page.locator(ready).first().waitFor();
        await w.page.waitForFunction(() => document.querySelectorAll('.loading').length === 0);
        for (const v of await axe(w.page)) found.push(`${colorScheme} ${who ?? 'anonymous'} ${url}: ${v}`);
      }
    }
    expect(found).to.deep.equal([]);
  });

  it('names the least role of every operation it offers as the route table does', async () => {
    const { OP_ROLE } = (await import(pathToFileURL(path.join(UI_STATIC_DIR, 'roles.js')).href)) as { OP_ROLE: Record<string, string> };
    for (const [op, role] of Object.entries(OP_ROLE)) {
      const row = ROUTES.find((r) => r.operation === op);
      expect(row, op).to.not.equal(undefined);
      expect(row!.permission, op).to.equal(role);
    }
  });

  it('asks for a token when a page answers 401, refuses a bad one, signs in with a good one and out again', async () => {
    for (const width of [1400, 390]) {
      const w = await open(null, width);
      await w.page.goto(`${s.url}/ui/repos/${repo}`);
      const form = w.page.locator('form.signin');
      await form.waitFor();
      expect(await form.innerText()).to.include('cairn token create').and.include('cairn admin user add');
      expect(await w.page.locator('.topbar .identity').innerText()).to.include('not signed in');
      await shot(w.page, `signin-form-${width}`);

      // a token the server does not know: the form says so, keeps nothing, shows nothing of it
      const bad = `cairn_${'B'.repeat(43)}`;
      await form.locator('input[name="token"]').fill(bad);
      await form.getByRole('button', { name: 'Sign in' }).click();
      await form.locator('.signin-error').waitFor();
      expect(await form.locator('.signin-error').innerText()).to.include('did not accept');
      expect(await w.page.evaluate(() => sessionStorage.getItem('cairn.token'))).to.equal(null);
      if (width === 390) await shot(w.page, 'signin-refused-390');

      // rita's token: the dashboard shows, the header names her; the token is in sessionStorage only
      await form.locator('input[name="token"]').fill(tokens.rita);
      await form.getByRole('button', { name: 'Sign in' }).click();
      await w.page.locator('.dashboard h1').waitFor();
      expect(await w.page.locator('.topbar .identity').innerText()).to.include('signed in as').and.include('rita');
      expect(await w.page.evaluate(() => sessionStorage.getItem('cairn.token'))).to.equal(tokens.rita);
      expect(await w.page.evaluate(() => JSON.stringify({ ...localStorage }) + document.cookie)).to.not.include('cairn_');
      expect(w.page.url()).to.not.include(tokens.rita);
      expect(await pageText(w.page)).to.not.include(tokens.rita).and.not.include(bad);
      // a page reload keeps her signed in (the same tab)
      await w.page.goto(changeUrl());
      await w.page.locator('#actions').waitFor();
      expect(await w.page.locator('.topbar .account-name').innerText()).to.equal('rita');

      // sign out: the token is forgotten, the next read asks again
      await w.page.getByRole('button', { name: 'Sign out' }).click();
      await w.page.locator('form.signin').waitFor();
      expect(await w.page.evaluate(() => sessionStorage.getItem('cairn.token'))).to.equal(null);
      // the repositories list answers an anonymous caller (none open to one): it says why, with a Sign in
      await w.page.goto(`${s.url}/ui/`);
      await w.page.locator('.anonymous-note').waitFor();
      await w.page.locator('.anonymous-note').getByRole('button', { name: 'Sign in' }).click();
      await w.page.locator('form.signin').waitFor();
      expect(w.console.join('\n')).to.not.include(tokens.rita).and.not.include(bad);
      expect(w.errors).to.deep.equal([]);
    }
  });

  it('forgets a token revoked while the page is open, and says so', async () => {
    const made = await api(s.url, 'POST', '/v1/native/tokens', { json: { name: 'short-lived', account: 'rita' }, headers: bearer(tokens.root) });
    expect(made.status, made.text).to.equal(201);
    tokens.ritaSpare = made.json.token.token;
    const w = await open('ritaSpare');
    await w.page.goto(changeUrl());
    await w.page.locator('#actions .role-note').waitFor();
    const revoke = await api(s.url, 'DELETE', `/v1/native/tokens/${made.json.token.token_id}`, { headers: bearer(tokens.root) });
    expect(revoke.status, revoke.text).to.equal(200);
    // the server ends the page's event stream; its reconnection is refused: the page drops the
    // token at once (so no further request sends it) and asks again, saying why
    await w.page.locator('form.signin .signin-reason').waitFor();
    expect(await w.page.locator('form.signin .signin-reason').innerText()).to.include('not accepted any more');
    expect(await w.page.evaluate(() => sessionStorage.getItem('cairn.token'))).to.equal(null);
    // (the stream the server cut off is a console line of the browser's own)
    expect(w.errors.filter((e) => !e.includes('ERR_INCOMPLETE_CHUNKED_ENCODING'))).to.deep.equal([]);
  });

  it('shows a reader no review, land or attest controls, and a maintainer all of them', async () => {
    const reader = await open('rita');
    await reader.page.goto(changeUrl());
    const actions = reader.page.locator('#actions');
    await actions.locator('.role-note').waitFor();
    expect(await actions.locator('.role-note').innerText()).to.include('Reviewing needs the contributor role').and.include('Landing needs the maintainer role').and.include('You have the reader role here');
    for (const name of ['Approve', 'Request changes', 'Land…', 'Run CI', 'Request review']) expect(await actions.getByRole('button', { name }).count(), name).to.equal(0);
    expect(await reader.page.locator('.reply-btn').count()).to.equal(0);
    expect(await reader.page.locator('#queue').getByRole('button').count()).to.equal(0);
    expect(await reader.page.getByRole('button', { name: 'Comment on the change…' }).count()).to.equal(0);
    await shot(reader.page, 'change-reader-1400');

    // One approval from someone other than the author, as an auth mode gives a new repository
    // (this one was seeded before accounts were on).
    const put = await api(s.url, 'PUT', R(repo, '/rules'), { json: { rules: { required_approvals: 1 } }, headers: bearer(tokens.root) });
    expect(put.status, put.text).to.equal(200);
    const maint = await open('max');
    await maint.page.goto(changeUrl());
    const mine = maint.page.locator('#actions');
    await mine.getByRole('button', { name: 'Land…' }).waitFor();
    for (const name of ['Approve', 'Request changes', 'Run CI', 'Request review']) expect(await mine.getByRole('button', { name }).count(), name).to.equal(1);
    expect(await mine.locator('.attest-link').count()).to.equal(1);
    expect(await mine.locator('.role-note').count()).to.equal(0);
    await maint.page.locator('#queue').getByRole('button', { name: 'Add to land queue' }).waitFor();
    expect(await maint.page.locator('.reply-btn').count()).to.equal(1);
    // the event feed follows with the token in a header (never in the URL): the live mark shows
    await maint.page.locator('.topbar .live').waitFor();
    await shot(maint.page, 'change-maintainer-1400');
    // "Can this land?" lists what a land needs, the approval rule among it with who can give it.
    const summary = maint.page.locator('section.readiness details.requirements summary');
    await summary.waitFor();
    expect(await summary.innerText()).to.match(/^3 of 4 needed/);
    await summary.click();
    const needs = maint.page.locator('.requirement-list li[data-kind="approvals_required"]');
    await needs.waitFor();
    expect(await needs.getAttribute('class')).to.equal('unmet');
    expect(await needs.innerText()).to.match(/needs 1 approval from someone other than carol/);
    await maint.page.locator('section.readiness').screenshot({ path: path.join(SHOT_DIR, 'readiness-requirements-1400.png') });

    // the same two at a phone's width
    for (const [who, w] of [['rita', reader], ['max', maint]] as const) {
      await w.page.setViewportSize({ width: 390, height: 900 });
      await shot(w.page, `change-${who === 'rita' ? 'reader' : 'maintainer'}-390`);
    }
    expect(reader.errors).to.deep.equal([]);
    expect(maint.errors).to.deep.equal([]);
  });

  it('says to everyone when the selected patchset is not the newest; only a maintainer gets the Select button', async () => {
    const olderUrl = `${s.url}/ui/repos/${repo}/changes/${older}`;
    const reader = await open('rita');
    await reader.page.goto(olderUrl);
    const note = reader.page.getByTestId('selected-note');
    await note.waitFor();
    expect(await note.innerText()).to.include('ps-1 is selected — what lands; ps-2 is the newest');
    await note.getByRole('link', { name: "View ps-2's diff" }).waitFor();
    // once the page knows the reader's role (the Actions card, on another tab, says it)
    await reader.page.locator('#actions .role-note').waitFor({ state: 'attached' });
    expect(await note.getByRole('button').count()).to.equal(0);
    const maint = await open('max');
    await maint.page.goto(olderUrl);
    await maint.page.getByTestId('selected-note').getByRole('button', { name: 'Select ps-2' }).click();
    await maint.page.getByTestId('selected-note').waitFor({ state: 'detached' });
    const after = await api(s.url, 'GET', R(repo, `/changes/${older}`), { headers: bearer(tokens.max) });
    expect(after.json.change.selected_patchset_id).to.equal(`${older}.ps-2`);
    expect(reader.errors).to.deep.equal([]);
    expect(maint.errors).to.deep.equal([]);
  });

  it('lets a repository admin grant and revoke roles and switch anonymous read; nobody else sees the settings', async () => {
    const reader = await open('rita');
    await reader.page.goto(`${s.url}/ui/repos/${repo}`);
    await reader.page.locator('.dashboard .subnav').waitFor();
    await reader.page.locator('.topbar .account-name').waitFor();
    expect(await reader.page.locator('.settings-link').count()).to.equal(0);
    await reader.page.goto(`${s.url}/ui/repos/${repo}/settings`);
    await reader.page.locator('.not-admin').waitFor();
    expect(await reader.page.locator('#access').count()).to.equal(0);

    const admin = await open('ada');
    await admin.page.goto(`${s.url}/ui/repos/${repo}`);
    await admin.page.locator('.settings-link').click();
    const card = admin.page.locator('#access');
    await card.locator('table.grants').waitFor();
    expect(await card.locator('tr[data-subject]').evaluateAll((rows) => rows.map((r) => `${r.getAttribute('data-subject')}=${r.getAttribute('data-role')}`))).to.have.members(['user:rita=reader', 'user:max=maintainer', 'user:ada=admin']);
    // The Rules card shows exactly when the server has the rules route (GET rules → 404: hidden).
    if (!ROUTES.some((r) => r.operation === 'rules.get')) expect(await admin.page.locator('#rules').count()).to.equal(0);
    else {
      const rules = admin.page.locator('#rules form.rules-form');
      await rules.waitFor();
      await rules.locator('input[name="required_approvals"]').fill('2');
      await rules.locator('input[name="require_resolved_threads"]').check();
      await rules.locator('input[name="land_allowed"]').fill('max, ada');
      await rules.getByRole('button', { name: 'Save rules' }).click();
      await admin.page.locator('#rules .flash').waitFor();
      expect(await admin.page.locator('#rules .flash').innerText()).to.match(/^Saved/);
      const got = await api(s.url, 'GET', R(repo, '/rules'), { headers: bearer(tokens.root) });
      expect(got.status, got.text).to.equal(200);
      expect(got.json.rules).to.include({ required_approvals: 2, require_resolved_threads: true });
      expect(got.json.rules.land_allowed).to.deep.equal(['max', 'ada']);
      expect(got.json.updated_by).to.equal('ada');
      await shot(admin.page, 'settings-rules-1400');
    }

    const access = async () => (await api(s.url, 'GET', R(repo, '/access'), { headers: bearer(tokens.root) })).json;
    await card.locator('select[name="kind"]').selectOption('user');
    await card.locator('input[name="subject"]').fill('cora');
    await card.locator('select[name="role"]').selectOption('contributor');
    await card.getByRole('button', { name: 'Grant' }).click();
    await card.locator('tr[data-subject="user:cora"]').waitFor();
    expect((await access()).grants).to.deep.include({ subject: 'user:cora', role: 'contributor' });
    await shot(admin.page, 'settings-1400');

    await card.getByRole('button', { name: 'Revoke user:cora' }).click();
    await admin.page.locator('dialog.dialog').getByRole('button', { name: 'Revoke' }).click();
    await card.locator('tr[data-subject="user:cora"]').waitFor({ state: 'detached' });
    expect((await access()).grants.map((g: { subject: string }) => g.subject)).to.not.include('user:cora');

    const anon = card.locator('input[name="anonymous_read"]');
    expect(await anon.isChecked()).to.equal(false);
    // the box shows what the server holds: it turns once the change is recorded
    await anon.click();
    await admin.page.waitForFunction(() => document.querySelector('#access .flash.ok')?.textContent?.includes('Anyone may now read'));
    expect((await access()).anonymous_read).to.equal(true);
    // the box turns once the page has read the access again
    await admin.page.waitForFunction(() => (document.querySelector('#access input[name="anonymous_read"]') as HTMLInputElement | null)?.checked === true);
    await anon.click();
    await admin.page.waitForFunction(() => document.querySelector('#access .flash.ok')?.textContent?.includes('Reading now needs a role'));
    expect((await access()).anonymous_read).to.equal(false);
    await admin.page.waitForFunction(() => (document.querySelector('#access input[name="anonymous_read"]') as HTMLInputElement | null)?.checked === false);

    await admin.page.setViewportSize({ width: 390, height: 900 });
    await shot(admin.page, 'settings-390');
    expect(reader.errors).to.deep.equal([]);
    expect(admin.errors).to.deep.equal([]);
  });

  it('records an attestation from the change page (contributors and up); a reader has no form', async () => {
    const reader = await open('rita');
    await reader.page.goto(changeUrl('checks'));
    await reader.page.locator('#attestation').waitFor();
    await reader.page.locator('#actions .role-note').waitFor();
    expect(await reader.page.locator('form.attest-form').count()).to.equal(0);

    const maint = await open('max');
    // the Actions card's "Attest…" opens the Checks tab at the form
    await maint.page.goto(changeUrl('conversation'));
    await maint.page.locator('#actions .attest-link').click();
    const form = maint.page.locator('form.attest-form');
    await form.waitFor();
    expect(await maint.page.getByRole('tab', { name: /Checks/ }).getAttribute('aria-selected')).to.equal('true');
    expect(await form.innerText()).to.include('human only');
    await form.locator('select[name="verification_state"]').selectOption('pass');
    await form.locator('input[name="require_lint_pass"]').check();
    await form.getByRole('button', { name: 'Record attestation' }).click();
    await maint.page.locator('#attestation .flash.ok').waitFor();
    const a = await api(s.url, 'GET', R(repo, `/patchsets/${ps1}/attestation`), { headers: bearer(tokens.root) });
    expect(a.status, a.text).to.equal(200);
    expect(a.json.attestation).to.include({ verification_state: 'pass', require_lint_pass: true, require_tests_pass: true, require_human_review: false, revoked: false });
    await maint.page.locator('#attestation .card-head .badge').filter({ hasText: 'pass' }).waitFor();
    await maint.page.locator('#attestation').scrollIntoViewIfNeeded();
    await shot(maint.page, 'change-attest-1400', false);
    expect(reader.errors).to.deep.equal([]);
    expect(maint.errors).to.deep.equal([]);
  });
});

describe('UI: behind a front door (the ingress names the caller)', function () {
  this.timeout(120_000);
  const H = 'X-Remote-User';
  const SECRET = 'front-door-secret-for-the-ui-test';
  let browser: Browser;
  let s: TestServer;
  let repo: number;
  const contexts: BrowserContext[] = [];

  before(async function () {
    if (!CHROMIUM) {
      console.log('      SKIPPED: the browser tests of the reviewer UI need a chromium binary (apt-get install chromium; .ci/run installs it)');
      this.skip();
    }
    const dataDir = path.join(tempDir(), 'data');
    mkdirSync(dataDir, { recursive: true });
    const book = AccessBook.open(new Layout(dataDir));
    try {
      await book.addAccount(null, 'olga', true); // a server admin, named by the front door
    } finally {
      await book.close();
    }
    s = await startTestServer(dataDir, { identity: { header: H, secret: SECRET } });
    const reg = await api(s.url, 'POST', '/v1/native/repository-authorities', { json: { repository_name: 'door', namespace: '', policy_flags: 0 }, headers: { [H]: 'olga', 'x-cairn-ingress-secret': SECRET } });
    expect(reg.status, reg.text).to.be.oneOf([200, 201]);
    repo = reg.json.repository.repository_index;
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await s?.stop();
  });

  async function open(who: string): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, extraHTTPHeaders: { [H]: who, 'x-cairn-ingress-secret': SECRET } });
    contexts.push(context);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    return { page, errors };
  }

  it('asks nobody to sign in: the header names the caller, with no Sign out; a caller without a role is refused, not asked for a token', async () => {
    const admin = await open('olga');
    await admin.page.goto(`${s.url}/ui/repos/${repo}`);
    await admin.page.locator('.dashboard .settings-link').waitFor();
    expect(await admin.page.locator('.topbar .identity').innerText()).to.include('signed in as').and.include('olga');
    expect(await admin.page.getByRole('button', { name: 'Sign out' }).count()).to.equal(0);
    expect(await admin.page.locator('form.signin').count()).to.equal(0);

    const stranger = await open('sam');
    await stranger.page.goto(`${s.url}/ui/repos/${repo}`);
    await stranger.page.locator('.error-note').waitFor();
    expect(await stranger.page.locator('.error-note').innerText()).to.include('403').and.include('reader role');
    expect(await stranger.page.locator('form.signin').count()).to.equal(0);
    expect(await stranger.page.locator('.topbar .identity').innerText()).to.include('sam');
    expect(admin.errors).to.deep.equal([]);
    expect(stranger.errors).to.deep.equal([]);
  });
});

describe('UI: without an auth mode', function () {
  this.timeout(120_000);
  let browser: Browser;
  let s: TestServer;

  before(async function () {
    if (!CHROMIUM) {
      console.log('      SKIPPED: the browser tests of the reviewer UI need a chromium binary (apt-get install chromium; .ci/run installs it)');
      this.skip();
    }
    s = await startTestServer();
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  it('signs nobody in and offers everything; the settings say there are no accounts to grant roles to', async () => {
    const seed = await Seeder.register(s.url, 'open');
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${s.url}/ui/repos/${seed.repo}`);
    await page.locator('.dashboard .settings-link').click();
    await page.locator('#access .no-accounts').waitFor();
    expect(await page.locator('#access .no-accounts').innerText()).to.include('no accounts');
    expect(await page.locator('.topbar .identity').innerText()).to.not.include('Sign in').and.not.include('signed in');
    expect(await page.locator('form.signin').count()).to.equal(0);
    await context.close();
    expect(errors).to.deep.equal([]);
  });
});
