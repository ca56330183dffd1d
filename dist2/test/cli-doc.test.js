// docs/cli.md is generated from the --help texts (npm run docs:cli, lib/cli/cli-doc.ts): this
// test fails when the file differs from what the generator produces now, so the reference
// never drifts from what `cairn <command> --help` prints.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { CLI_DOC_PATH, collectHelp, renderCliDoc } from '../lib/cli/cli-doc.js';
import { COMMAND_NAMES } from '../lib/cli/main.js';
describe('docs/cli.md', () => {
    let helps;
    before(async () => { helps = await collectHelp(); });
    it('is exactly what npm run docs:cli generates from the --help texts', () => {
        const expected = renderCliDoc(helps);
        const actual = readFileSync(CLI_DOC_PATH, 'utf8');
        if (actual !== expected) {
            const a = actual.split('\n');
            const e = expected.split('\n');
            const line = a.findIndex((text, i) => text !== e[i]);
            const at = line < 0 ? Math.min(a.length, e.length) : line;
            expect.fail(`docs/cli.md is stale: run "npm run docs:cli" (first difference at line ${at + 1}:\n  file:      ${JSON.stringify(a[at])}\n  generated: ${JSON.stringify(e[at])})`);
        }
    });
    it('documents every command main.ts dispatches, and the sub-command helps', () => {
        const page = renderCliDoc(helps);
        for (const name of COMMAND_NAMES) {
            expect(page.includes(`### cairn ${name}\n`) || page.includes(`Also spelled \`cairn ${name}\``), name).to.equal(true);
        }
        expect(page).to.include('#### cairn task start\n');
    });
    it('refuses a top-level help that lists a command main.ts does not have', () => {
        const top = helps.find((h) => h.argv.length === 0);
        const bogus = { argv: [], text: top.text.replace('Everyday:\n', 'Everyday:\n  frobnicate  not a command\n') };
        expect(() => renderCliDoc([bogus, ...helps.filter((h) => h.argv.length > 0)])).to.throw(/frobnicate/);
    });
});
//# sourceMappingURL=cli-doc.test.js.map