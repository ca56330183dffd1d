// The people on the change page in a browser (docs/ui.md "The change page": the reviewer table and
// whose move it is): each reviewer's vote, the patchset it was cast on and whether it is live (a
// vote on ps-1 greyed once ps-2 changes the content), the attention line in the head with
// "Your turn" for the page's person, requesting review from a person through the Actions card,
// and the page following review events without a reload.
import { expect } from 'chai';
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { api, startTestServer } from './helpers.js';
import { CHROMIUM, SHOT_DIR } from './ui-browser.js';
import { R, Seeder } from './ui-seed.js';
describe('UI: the people on the change page', function () {
    this.timeout(180_000);
    let browser;
    let s;
    let seed;
    let change;
    let base;
    let ps1;
    const contexts = [];
    before(async function () {
        if (!CHROMIUM) {
            console.log('      SKIPPED: the browser tests of the reviewer UI need a chromium binary (apt-get install chromium; .ci/run installs it)');
            this.skip();
        }
        const { chromium } = await import('playwright-core');
        browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
        s = await startTestServer();
        seed = await Seeder.register(s.url, 'people-page-ui');
        mkdirSync(SHOT_DIR, { recursive: true });
        base = await seed.snap({ 'a.txt': 'a\n' }, { moveLine: true });
        const rev = await seed.snap({ 'a.txt': 'b\n' }, { parent: base });
        const t = (await seed.post('/tasks', { title: 'T', intent: 'I' })).task;
        change = (await seed.post('/changes', { task_id: t.task_id, title: 'Rate-limit the checkout', base_line: 'main', owner: 'alice' })).change.change_id;
        ps1 = await seed.patchset(change, base, rev, 'one');
        await seed.post(`/changes/${change}:requestReview`, { patchset_id: ps1, reviewers: ['bob', 'dan'], reviewer_groups: ['core'], requested_by: 'alice' });
    });
    after(async () => {
        for (const c of contexts)
            await c.close().catch(() => undefined);
        await browser?.close();
        await s?.stop();
    });
    async function open(me, options = {}) {
        const context = await browser.newContext({ viewport: { width: options.width ?? 1400, height: 900 }, colorScheme: options.colorScheme ?? 'light' });
        contexts.push(context);
        await context.addInitScript((n) => localStorage.setItem('cairn.reviewer', n), me);
        const page = await context.newPage();
        const errors = [];
        page.on('pageerror', (e) => errors.push(String(e)));
        page.on('console', (m) => { if (m.type() === 'error')
            errors.push(m.text()); });
        page.on('dialog', (d) => { errors.push(`dialog: ${d.message()}`); void d.dismiss(); });
        await page.goto(`${s.url}/ui/repos/${seed.repo}/changes/${change}?tab=${options.tab ?? 'conversation'}`);
        return { page, errors };
    }
    async function shot(page, name) {
        const file = path.join(SHOT_DIR, `${name}.png`);
        await page.screenshot({ path: file });
        if (process.env.UI_SCREENSHOTS_DIR) {
            mkdirSync(process.env.UI_SCREENSHOTS_DIR, { recursive: true });
            copyFileSync(file, path.join(process.env.UI_SCREENSHOTS_DIR, `${name}.png`));
        }
    }
    const row = (page, name) => page.locator(`.reviewer-table tr[data-reviewer="${name}"]`);
    it('shows the reviewer table, whose move it is and "Your turn"; a vote on ps-1 goes stale when ps-2 changes the content', async () => {
        const bob = await open('bob');
        await row(bob.page, 'bob').waitFor();
        expect(await row(bob.page, 'core').getAttribute('data-kind')).to.equal('group');
        expect(await row(bob.page, 'bob').getAttribute('data-kind')).to.equal('person');
        // bob and dan are asked: the head names both, with why, and it is bob's turn on bob's page
        const attention = bob.page.locator('.change-head .attention');
        await attention.waitFor();
        expect(await attention.innerText()).to.include('Waiting on: bob (review requested), dan (review requested)');
        expect(await attention.locator('.your-turn').innerText()).to.equal('Your turn');
        // bob approves ps-1: the page follows the event, his row shows a live approval on ps-1
        await seed.review(change, ps1, 'bob', 'approve');
        await bob.page.waitForFunction(() => document.querySelector('.reviewer-table tr[data-reviewer="bob"]')?.getAttribute('data-vote') === 'approve', null, { timeout: 20_000 });
        expect(await row(bob.page, 'bob').getAttribute('data-live')).to.equal('true');
        expect(await row(bob.page, 'bob').innerText()).to.include('approves');
        await bob.page.waitForFunction(() => !document.querySelector('.change-head .attention .your-turn'), null, { timeout: 20_000 });
        expect(await attention.innerText()).to.not.include('bob');
        // ps-2 with other content: bob's approval stays on ps-1, greyed, not live; it is his move again
        const rev2 = await seed.snap({ 'a.txt': 'c\n' }, { parent: base });
        const ps2 = await seed.patchset(change, base, rev2, 'two');
        const sel = await api(s.url, 'POST', R(seed.repo, `/changes/${change}:selectPatchset`), { json: { patchset_id: ps2 } });
        expect(sel.status).to.equal(200);
        await bob.page.waitForFunction(() => document.querySelector('.reviewer-table tr[data-reviewer="bob"]')?.getAttribute('data-live') === 'false', null, { timeout: 20_000 });
        const stale = row(bob.page, 'bob');
        expect(await stale.getAttribute('class')).to.include('stale');
        expect(await stale.innerText()).to.match(new RegExp(`on ${ps1.replace(/^.*\./, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}|on ${ps1.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
        expect(await stale.innerText()).to.include('not live');
        await bob.page.waitForFunction(() => /bob \(new patchset\)/.test(document.querySelector('.change-head .attention')?.textContent ?? ''), null, { timeout: 20_000 });
        await attention.locator('.your-turn').waitFor();
        await shot(bob.page, 'change-people');
        // alice, the owner, sees the same table without "Your turn"
        const alice = await open('alice');
        await row(alice.page, 'bob').waitFor();
        expect(await alice.page.locator('.change-head .attention .your-turn').count()).to.equal(0);
        expect(bob.errors).to.deep.equal([]);
        expect(alice.errors).to.deep.equal([]);
    });
    it('keeps the first diff row within 400 px of the top at 1400×900 with the attention line shown', async () => {
        const bob = await open('bob', { tab: 'files' });
        await bob.page.locator('.change-head .attention .your-turn').waitFor();
        const first = bob.page.locator('.diff-file .file-body tr:not(.hunk)').first();
        await first.waitFor();
        await bob.page.locator('.readiness h2').waitFor();
        const top = await first.evaluate((e) => e.getBoundingClientRect().top);
        expect(top, `first diff row at ${top}px`).to.be.at.most(400);
        await shot(bob.page, 'change-attention');
        expect(bob.errors).to.deep.equal([]);
    });
    it('requests review from a person through the Actions card', async () => {
        const alice = await open('alice');
        await row(alice.page, 'bob').waitFor();
        expect(await row(alice.page, 'erin').count()).to.equal(0);
        await alice.page.getByLabel('Reviewers (people)').fill('erin');
        await alice.page.getByRole('button', { name: 'Request review' }).click();
        await alice.page.locator('.flash.ok', { hasText: 'Review requested from erin.' }).waitFor({ timeout: 20_000 });
        await row(alice.page, 'erin').waitFor({ timeout: 20_000 });
        expect(await row(alice.page, 'erin').getAttribute('data-kind')).to.equal('person');
        await alice.page.locator('.change-head .attention .attn[data-name="erin"]').waitFor({ timeout: 20_000 });
        // the timeline names the person asked (not a group)
        await alice.page.locator('#reviews .event', { hasText: 'requested review from erin' }).waitFor({ timeout: 20_000 });
        // the server kept it: erin is on the change's reviewer list
        const r = await seed.get(`/read/changes/${change}/reviewers`);
        expect(r.reviewers.map((x) => x.name)).to.include('erin');
        // nothing named: the card says what is missing and sends nothing
        await alice.page.getByRole('button', { name: 'Request review' }).click();
        await alice.page.locator('.flash.bad', { hasText: 'name the people or the group to ask' }).waitFor();
        expect(alice.errors).to.deep.equal([]);
    });
    it('fits at 390 px in the dark theme', async () => {
        const bob = await open('bob', { width: 390, colorScheme: 'dark' });
        await row(bob.page, 'bob').waitFor();
        await bob.page.locator('.change-head .attention').waitFor();
        const overflow = await bob.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(overflow).to.be.at.most(0);
        await shot(bob.page, 'change-people-390-dark-head');
        await row(bob.page, 'bob').scrollIntoViewIfNeeded();
        await shot(bob.page, 'change-people-390-dark');
        expect(bob.errors).to.deep.equal([]);
    });
});
//# sourceMappingURL=ui-people-page.test.js.map