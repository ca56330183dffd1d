// The API reference (/docs/api) in a real browser: Debian's chromium driven by playwright-core
// loads the page from a test server, waits until the operations of the OpenAPI document are
// rendered, checks a few, and saves a full-page screenshot under the OS temp dir. Skipped, with a
// message, where no chromium binary exists (.ci/run installs it).
import { expect } from 'chai';
import { ROUTES } from '../lib/http/routes.js';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { register, startTestServer } from './helpers.js';
const CHROMIUM = process.env.CAIRN_CHROMIUM ?? '/usr/bin/chromium';
export const SCREENSHOT = path.join(os.tmpdir(), 'cairn-docs-api.png');
describe('API reference page in a browser', function () {
    this.timeout(120_000);
    let server;
    let browser;
    before(async function () {
        if (!existsSync(CHROMIUM)) {
            console.log(`      skipped: no chromium binary at ${CHROMIUM} (apt-get install -y chromium, or set CAIRN_CHROMIUM)`);
            this.skip();
        }
        server = await startTestServer();
        await register(server.url, 'docs');
        browser = await chromium.launch({
            executablePath: CHROMIUM,
            // As root in a sandboxless container, with no network beyond loopback.
            args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
        });
    });
    after(async () => {
        await browser?.close();
        await server?.stop();
    });
    it('renders the operations of the document from the server alone, and saves a screenshot', async () => {
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        const page = await context.newPage();
        const outside = [];
        const failed = [];
        page.on('request', (req) => {
            if (!req.url().startsWith(server.url) && !req.url().startsWith('data:'))
                outside.push(req.url());
        });
        page.on('requestfailed', (req) => failed.push(req.url()));
        page.on('pageerror', (err) => failed.push(`page error: ${err.message}`));
        const res = await page.goto(`${server.url}/docs/api`, { waitUntil: 'load' });
        expect(res?.status()).to.equal(200);
        // Rendered: one block per operation of the document. Past 150 rows (tags and operations)
        // Swagger UI renders only the rows near the viewport, so the page is scrolled through and
        // every operation id seen is collected.
        await page.locator('.opblock').first().waitFor({ state: 'visible', timeout: 60_000 });
        const seen = new Set();
        for (let lastY = -1;;) {
            for (const id of await page.locator('.opblock-summary-operation-id').allInnerTexts())
                seen.add(id.trim());
            const y = await page.evaluate(() => { window.scrollBy(0, 500); return window.scrollY; });
            await page.waitForTimeout(30);
            if (y === lastY)
                break;
            lastY = y;
        }
        for (const id of await page.locator('.opblock-summary-operation-id').allInnerTexts())
            seen.add(id.trim());
        expect([...seen].sort()).to.deep.equal(ROUTES.map((r) => r.operation).sort()); // every row of the route table, extensions included
        await page.evaluate(() => window.scrollTo(0, 0));
        const reach = async (text) => {
            for (let i = 0; i < 400 && (await page.getByText(text, { exact: true }).count()) === 0; i++) {
                await page.evaluate(() => window.scrollBy(0, 400));
                await page.waitForTimeout(20);
            }
            await page.getByText(text, { exact: true }).first().scrollIntoViewIfNeeded();
        };
        expect(await page.locator('.title', { hasText: 'cairn' }).first().isVisible()).to.equal(true);
        await reach('workerJobs.claim');
        expect(await page.locator('.opblock-tag', { hasText: 'workerJobs' }).first().isVisible()).to.equal(true);
        await reach('changes.close');
        expect(await page.getByText('/v1/native/repository-authorities/{repository_index}/changes/{change_ref}:close').first().isVisible()).to.equal(true);
        await reach('historyPromotion.prepare');
        expect(await page.getByText('historyPromotion.prepare', { exact: true }).isVisible()).to.equal(true);
        await page.evaluate(() => window.scrollTo(0, 0));
        await reach('tasks.create');
        // Open one operation: its parameters and responses are rendered from the document.
        await page.locator('.opblock', { hasText: 'tasks.create' }).first().locator('.opblock-summary').click();
        await page.locator('.opblock.is-open .responses-table').first().waitFor({ state: 'visible' });
        const open = await page.locator('.opblock.is-open').first().innerText();
        expect(open).to.include('repository_index').and.include('Request body').and.include('422').and.include('intent');
        await page.screenshot({ path: SCREENSHOT, fullPage: true });
        console.log(`      screenshot: ${SCREENSHOT}`);
        expect(outside, 'requests outside the test server').to.deep.equal([]);
        expect(failed).to.deep.equal([]);
        await context.close();
    });
});
//# sourceMappingURL=docs-browser.test.js.map