// Git mirrors on the Lines page (docs/ui.md "Lines and git"), in a real browser: each mirror's
// line, URL, state and last push; a mirror that keeps failing with its failures, next attempt
// and error; the banner of a diverged mirror (the remote's commit, nothing forced), shown live
// when it diverges, and Resume after the remote is put right until the mirror is ok again;
// Remove behind a confirmation; the clone command of each line (which git really clones);
// axe-core in both themes and a phone's width. A server started here with file:// mirrors
// allowed under a directory of bare remotes. Skipped, saying so, without chromium or git.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, promises as fsp } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { push } from '../lib/client/transfer.js';
import { api, register, startTestServer, tempDir, until } from './helpers.js';
import { hasGit } from './git-fixture.js';
import { CHROMIUM, SHOT_DIR } from './ui-browser.js';
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];
const R = (repo, p) => `/v1/native/repository-authorities/${repo}${p}`;
const GIT_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'Eve', GIT_AUTHOR_EMAIL: 'eve@example.org', GIT_COMMITTER_NAME: 'Eve', GIT_COMMITTER_EMAIL: 'eve@example.org' };
/** git, asynchronously (a synchronous one would block the in-process server it talks to). */
function git(args, cwd) {
    return new Promise((resolve, reject) => {
        execFile('git', args, { cwd, env: { ...process.env, ...GIT_ENV, HOME: cwd ?? process.cwd() } }, (err, stdout, stderr) => (err ? reject(new Error(`git ${args.join(' ')}: ${stderr}`)) : resolve(stdout)));
    });
}
const refOf = async (bare, ref) => (await git(['--git-dir', bare, 'for-each-ref', '--format=%(objectname)', ref])).trim() || null;
(hasGit ? describe : describe.skip)('reviewer UI: git mirrors on the Lines page (Chromium)', function () {
    this.timeout(180_000);
    let browser;
    let s;
    let repo;
    let remotes;
    let remote;
    let ours;
    const contexts = [];
    const work = path.join(tempDir('cairn-ui-mirror-wc-'), 'tree');
    let n = 0;
    /** Moves line dev (main is governed: it moves only through a land) by one snapshot (creating the line the first time). */
    async function advance() {
        n++;
        await fsp.mkdir(work, { recursive: true });
        await fsp.writeFile(path.join(work, `file-${n}.txt`), `change ${n}\n`);
        if (n === 1) {
            const first = await push({ server: s.url, repo, line: 'dev', dir: work, moveLine: false, progress: false, message: `change ${n}` });
            const put = await api(s.url, 'PUT', R(repo, '/lines/dev'), { json: { head_snapshot_id: first.snapshot_id } });
            expect(put.status, put.text).to.be.oneOf([200, 201]);
            return;
        }
        await push({ server: s.url, repo, line: 'dev', dir: work, moveLine: true, progress: false, message: `change ${n}` });
    }
    const mirrorOf = async (id) => {
        const res = await api(s.url, 'GET', R(repo, `/git-mirrors/${id}`));
        expect(res.status, res.text).to.equal(200);
        return res.json.mirror;
    };
    before(async function () {
        if (!CHROMIUM) {
            console.log('      SKIPPED: the browser tests of the reviewer UI need a chromium binary (apt-get install chromium; .ci/run installs it)');
            this.skip();
        }
        const { chromium } = await import('playwright-core');
        browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
        remotes = path.join(tempDir('cairn-ui-mirror-remotes-'), 'remotes');
        await fsp.mkdir(remotes, { recursive: true });
        s = await startTestServer(undefined, { gitMirrors: { fileRoot: remotes, backoffBaseMs: 1000 } });
        repo = await register(s.url, 'mirrored');
        await advance();
        remote = path.join(remotes, 'project.git');
        await git(['init', '-q', '--bare', remote]);
        const added = await api(s.url, 'POST', R(repo, '/git-mirrors'), { json: { line: 'dev', url: pathToFileURL(remote).href } });
        expect(added.status, added.text).to.equal(201);
        ours = await until('mirror-1 to push the line', async () => {
            const m = await mirrorOf('mirror-1');
            return m.state === 'ok' && m.last_pushed_commit_id && (await refOf(remote, 'refs/heads/dev')) === m.last_pushed_commit_id ? m.last_pushed_commit_id : null;
        }, 30_000);
        // A second mirror whose remote does not exist: it keeps failing (retrying).
        const broken = await api(s.url, 'POST', R(repo, '/git-mirrors'), { json: { line: 'dev', url: pathToFileURL(path.join(remotes, 'missing.git')).href } });
        expect(broken.status, broken.text).to.equal(201);
        await until('mirror-2 to retry', async () => (await mirrorOf('mirror-2')).state === 'retrying', 30_000);
        mkdirSync(SHOT_DIR, { recursive: true });
    });
    after(async () => {
        for (const c of contexts)
            await c.close().catch(() => undefined);
        await browser?.close();
        await s?.stop();
    });
    async function open(options = {}) {
        const context = await browser.newContext({ viewport: { width: options.width ?? 1440, height: options.height ?? 1000 }, colorScheme: options.colorScheme ?? 'light', bypassCSP: true });
        contexts.push(context);
        await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: s.url });
        const page = await context.newPage();
        const errors = [];
        page.on('console', (m) => { if (m.type() === 'error')
            errors.push(`${m.text()} ${m.location().url ?? ''}`); });
        page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
        page.on('dialog', (d) => { errors.push(`dialog: ${d.message()}`); void d.dismiss(); });
        return { page, errors };
    }
    /** A screenshot in $TMPDIR/cairn-ui-screenshots, copied to $UI_SCREENSHOTS_DIR (docs/screenshots) when set. */
    async function shot(page, name) {
        const file = path.join(SHOT_DIR, `${name}.png`);
        await page.screenshot({ path: file, fullPage: true });
        if (process.env.UI_SCREENSHOTS_DIR) {
            mkdirSync(process.env.UI_SCREENSHOTS_DIR, { recursive: true });
            copyFileSync(file, path.join(process.env.UI_SCREENSHOTS_DIR, `${name}.png`));
        }
    }
    /** axe-core's serious and critical violations on the page as it stands. */
    async function axe(p) {
        if (!(await p.evaluate(() => 'axe' in window)))
            await p.addScriptTag({ path: AXE });
        return p.evaluate(async (tags) => {
            const w = window;
            const r = await w.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
            return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((x) => x.target.join(' ')).join(' | ')}`);
        }, AXE_TAGS);
    }
    const linesUrl = () => `${s.url}/ui/repos/${repo}/lines`;
    const mirror = (p, id) => p.locator(`li.mirror[data-mirror-id="${id}"]`);
    it('lists each mirror (line, URL, state, last push; failures, next attempt and error when retrying) and each line\'s clone command, which git clones and Copy copies', async () => {
        const { page: p, errors } = await open();
        await p.goto(linesUrl());
        const m1 = mirror(p, 'mirror-1');
        await p.locator('li.mirror[data-mirror-id="mirror-1"][data-state="ok"]').waitFor();
        const t1 = await m1.innerText();
        expect(t1).to.include('dev').and.include(pathToFileURL(remote).href).and.include('ok').and.include(ours.slice(0, 12));
        expect(await m1.locator('.mirror-diverged').count()).to.equal(0);
        const m2 = mirror(p, 'mirror-2');
        await p.locator('li.mirror[data-mirror-id="mirror-2"][data-state="retrying"]').waitFor();
        const t2 = await m2.innerText();
        const api2 = await mirrorOf('mirror-2');
        expect(t2).to.include('retrying').and.match(/\d+ failures? in a row; next attempt/).and.include('nothing yet');
        expect(t2).to.include(api2.last_error.slice(0, 40));
        // the clone command: copyable, and git clones the line's head from it
        const field = p.locator('.clone[data-line="dev"] input');
        const command = await field.inputValue();
        expect(command).to.equal(`git clone --branch dev ${s.url}${R(repo, '/git/dev.git')}`);
        expect(await p.getByLabel('dev', { exact: true }).inputValue()).to.equal(command);
        await p.getByRole('button', { name: 'Copy the clone command of line dev' }).click();
        await p.locator('.clone[data-line="dev"] [role="status"]', { hasText: 'Copied' }).waitFor();
        expect(await p.evaluate(() => navigator.clipboard.readText())).to.equal(command);
        const into = path.join(tempDir('cairn-ui-clone-'), 'c');
        await git(['clone', '-q', ...command.split(' ').slice(2), into]);
        expect((await git(['rev-parse', 'HEAD'], into)).trim()).to.equal(ours);
        expect(errors).to.deep.equal([]);
    });
    it('a mirror that diverges shows, without a reload, a banner saying why (the remote\'s commit, nothing forced); Resume after the remote is put right brings it back to ok; screenshots and axe-core in both themes and at 390 px', async () => {
        const { page: p, errors } = await open();
        await p.goto(linesUrl());
        await p.locator('li.mirror[data-mirror-id="mirror-1"][data-state="ok"]').waitFor();
        // Someone pushes a commit of their own onto the mirrored branch; then the line moves.
        const other = path.join(tempDir('cairn-ui-mirror-other-'), 'w');
        await git(['clone', '-q', '--branch', 'dev', remote, other]);
        await fsp.writeFile(path.join(other, 'theirs.txt'), 'not from cairn\n');
        await git(['add', '-A'], other);
        await git(['commit', '-q', '-m', 'theirs'], other);
        await git(['push', '-q', 'origin', 'HEAD:refs/heads/dev'], other);
        const theirs = (await git(['rev-parse', 'HEAD'], other)).trim();
        await advance();
        await until('mirror-1 to diverge', async () => (await mirrorOf('mirror-1')).state === 'diverged', 30_000);
        const banner = mirror(p, 'mirror-1').locator('.mirror-diverged');
        await banner.waitFor({ timeout: 15_000 });
        const text = await banner.innerText();
        expect(text).to.include(theirs.slice(0, 12)).and.include('not a commit of line dev').and.include('Nothing was forced');
        expect(await mirror(p, 'mirror-1').locator('.badge').innerText()).to.equal('diverged');
        expect(await refOf(remote, 'refs/heads/dev')).to.equal(theirs);
        // both themes and a phone: screenshots, axe-core, nothing wider than the screen
        await shot(p, 'lines-mirrors-light');
        const problems = (await axe(p)).map((v) => `light: ${v}`);
        for (const view of [{ colorScheme: 'dark', name: 'lines-mirrors-dark' }, { colorScheme: 'light', width: 390, height: 844, name: 'lines-mirrors-phone' }]) {
            const o = await open(view);
            await o.page.goto(linesUrl());
            await o.page.locator('li.mirror[data-mirror-id="mirror-1"] .mirror-diverged').waitFor();
            await o.page.locator('li.mirror[data-mirror-id="mirror-2"]').waitFor();
            await shot(o.page, view.name);
            problems.push(...(await axe(o.page)).map((v) => `${view.name}: ${v}`));
            const wide = await o.page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: innerWidth }));
            expect(wide.scroll, `${view.name} is wider than the screen`).to.be.at.most(wide.inner);
            expect(o.errors).to.deep.equal([]);
        }
        expect(problems, problems.join('\n')).to.deep.equal([]);
        // Resume while the remote still holds their commit: it diverges again (nothing forced).
        // Put right first: the branch back on our commit; then Resume pushes the line.
        await git(['--git-dir', remote, 'update-ref', 'refs/heads/dev', ours]);
        await banner.getByRole('button', { name: 'Resume' }).click();
        await p.locator('li.mirror[data-mirror-id="mirror-1"][data-state="ok"]').waitFor({ timeout: 30_000 });
        expect(await mirror(p, 'mirror-1').locator('.mirror-diverged').count()).to.equal(0);
        const m = await mirrorOf('mirror-1');
        expect(m.state).to.equal('ok');
        expect(await refOf(remote, 'refs/heads/dev')).to.equal(m.last_pushed_commit_id);
        expect(m.last_pushed_commit_id).to.not.equal(ours);
        expect(errors).to.deep.equal([]);
    });
    it('Remove asks first: Cancel keeps the mirror, confirming removes it; with none left the card says how to add one', async () => {
        const { page: p, errors } = await open();
        await p.goto(linesUrl());
        await mirror(p, 'mirror-2').waitFor();
        await p.getByRole('button', { name: 'Remove mirror-2' }).click();
        const dialog = p.getByRole('dialog', { name: 'Remove mirror-2?' });
        await dialog.waitFor();
        await dialog.getByRole('button', { name: 'Cancel' }).click();
        await dialog.waitFor({ state: 'detached' });
        expect((await api(s.url, 'GET', R(repo, '/git-mirrors/mirror-2'))).status).to.equal(200);
        await p.getByRole('button', { name: 'Remove mirror-2' }).click();
        await dialog.getByRole('button', { name: 'Remove the mirror' }).click();
        await mirror(p, 'mirror-2').waitFor({ state: 'detached' });
        expect((await api(s.url, 'GET', R(repo, '/git-mirrors/mirror-2'))).status).to.equal(404);
        expect(await mirror(p, 'mirror-1').count()).to.equal(1);
        // the last one removed: the card says how to add one, and axe-core finds nothing there either
        await p.getByRole('button', { name: 'Remove mirror-1' }).click();
        await p.getByRole('dialog', { name: 'Remove mirror-1?' }).getByRole('button', { name: 'Remove the mirror' }).click();
        await p.locator('#mirrors .empty', { hasText: 'cairn mirror add' }).waitFor();
        expect(await axe(p)).to.deep.equal([]);
        expect(errors).to.deep.equal([]);
    });
});
//# sourceMappingURL=ui-mirrors.test.js.map