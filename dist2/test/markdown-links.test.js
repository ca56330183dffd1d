// Where links in rendered plan Markdown may point (docs/operations.md, "Rendered Markdown"): the
// UI's own link-target.js, run under Node (whose URL class is the WHATWG parser the browser
// uses) on link targets as marked lexes them from Markdown. Every target that would run script
// or load content (javascript:, vbscript:, data:, and the spellings a browser folds into them)
// is refused; http, https, mailto and relative targets pass as the URL the browser would follow.
// test/ui.test.ts checks the same in Chromium.
import { expect } from 'chai';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Lexer } from 'marked';
import { PROJECT_ROOT } from './helpers.js';
import { REFUSED_LINKS } from './markdown-payloads.js';
const BASE = 'http://127.0.0.1:8080/ui/repos/0/plans/plan-1';
/** The targets of the links and images marked finds in `md`. */
function targets(md) {
    const out = [];
    const walk = (tokens) => {
        for (const t of tokens ?? []) {
            if (t.type === 'link' || t.type === 'image')
                out.push(t.href);
            walk(t.tokens);
            if (t.type === 'list')
                for (const item of t.items)
                    walk(item.tokens);
        }
    };
    walk(Lexer.lex(md, { gfm: true }));
    return out;
}
describe('rendered Markdown: link targets (link-target.js)', () => {
    let linkTarget;
    before(async () => {
        ({ linkTarget } = (await import(pathToFileURL(path.join(PROJECT_ROOT, 'lib/http/ui/static/link-target.js')).href)));
    });
    it('refuses javascript:, vbscript:, data: and every spelling a browser folds into them (tabs, newlines, leading controls and spaces, case, character references)', () => {
        for (const md of REFUSED_LINKS) {
            const ts = targets(md);
            expect(ts, JSON.stringify(md)).to.have.length(1);
            expect(linkTarget(ts[0], BASE), `${JSON.stringify(md)} → ${JSON.stringify(ts[0])}`).to.equal(null);
        }
    });
    it('passes http, https, mailto and relative targets as the absolute URL the browser follows', () => {
        const cases = [
            ['[x](https://example.com/runbook)', 'https://example.com/runbook'],
            ['[x](HTTP://Example.COM/A)', 'http://example.com/A'],
            ['[x](<https://example.com/a b>)', 'https://example.com/a%20b'],
            ['[x](mailto:ops@example.com)', 'mailto:ops@example.com'],
            ['[x](#retry)', `${BASE}#retry`],
            ['[x](plan-2)', 'http://127.0.0.1:8080/ui/repos/0/plans/plan-2'],
            ['[x](/ui/repos/1)', 'http://127.0.0.1:8080/ui/repos/1'],
            ['[x](?against=x)', `${BASE}?against=x`],
            ['[x](//example.com/x)', 'http://example.com/x'],
            // Percent-encoding is not decoded in a scheme: this is a path on the page's own server.
            ['[x](%6Aavascript:alert(1))', 'http://127.0.0.1:8080/ui/repos/0/plans/%6Aavascript:alert(1)'],
            ['[x](\\javascript:alert(1))', 'http://127.0.0.1:8080/javascript:alert(1)'],
            ['www.example.com', 'http://www.example.com/'],
            ['![diagram](docs/flow.png)', 'http://127.0.0.1:8080/ui/repos/0/plans/docs/flow.png'],
        ];
        for (const [md, want] of cases) {
            const [t] = targets(md);
            expect(linkTarget(t, BASE)?.href, md).to.equal(want);
        }
        expect(linkTarget('https://example.com/', 'https://cairn.example/ui/')?.protocol).to.equal('https:');
    });
    it('whatever the target, a link that is kept has an allowed scheme', () => {
        const odd = ['', ' ', '\u0000', 'javascript:', ':', '::', 'http:', 'https:', 'a:b', 'JAVASCRIPT:x', '\t\n', '%00javascript:x', 'java\u0000script:x', 'http://[::1', 'http://a b/'];
        for (const s of [...odd, ...REFUSED_LINKS.flatMap(targets)]) {
            const url = linkTarget(s, BASE);
            if (url !== null)
                expect(['http:', 'https:', 'mailto:'], JSON.stringify(s)).to.include(url.protocol);
        }
    });
});
//# sourceMappingURL=markdown-links.test.js.map