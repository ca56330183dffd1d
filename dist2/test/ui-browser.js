// What every browser test file of the reviewer UI starts with: Debian's chromium driven by
// playwright-core, a test server seeded with the demo repository (./ui-seed.ts), and the
// directory the screenshots go to before they are copied into docs/screenshots.
import { existsSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer } from './helpers.js';
import { seedDemo } from './ui-seed.js';
export const CHROMIUM = [process.env.CAIRN_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => !!p && existsSync(p));
export const SHOT_DIR = path.join(os.tmpdir(), 'cairn-ui-screenshots');
/**
 * In a suite's `before`: the browser, a server and the demo seeded on it; skips the suite,
 * saying why, when there is no chromium binary.
 */
export async function startUiSuite(context) {
    if (!CHROMIUM) {
        console.log('      SKIPPED: the browser tests of the reviewer UI need a chromium binary (apt-get install chromium; .ci/run installs it)');
        context.skip();
    }
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
    const s = await startTestServer();
    const demo = await seedDemo(s.url);
    mkdirSync(SHOT_DIR, { recursive: true });
    return { browser, s, demo };
}
//# sourceMappingURL=ui-browser.js.map