// Every relative link in the project's Markdown (README.md, CONTRIBUTING.md, storage-layout.md,
// docs/*.md) must name a file that exists and, with a #fragment, a heading of that file, by
// GitHub's anchor rules: lower case, punctuation dropped, each space a hyphen, repeats -1, -2.
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './helpers.js';
const FILES = ['README.md', 'CONTRIBUTING.md', 'storage-layout.md',
    ...readdirSync(path.join(PROJECT_ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
/** The lines outside fenced code blocks (``` or ~~~). */
function prose(text) {
    const out = [];
    let fence = null;
    for (const line of text.split('\n')) {
        const m = /^\s*(`{3,}|~{3,})/.exec(line);
        if (m) {
            if (fence === null)
                fence = m[1][0];
            else if (m[1][0] === fence)
                fence = null;
            continue;
        }
        if (fence === null)
            out.push(line);
    }
    return out;
}
/** GitHub's heading anchor (github-slugger): markup and punctuation dropped, spaces to hyphens. */
function slug(heading) {
    const text = heading
        .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text stays, its target goes
        .replace(/<[^>]+>/g, '') // inline HTML
        .trim()
        .toLowerCase();
    return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}
const anchorCache = new Map();
function anchors(file) {
    let set = anchorCache.get(file);
    if (set)
        return set;
    set = new Set();
    const counts = new Map();
    for (const line of prose(readFileSync(file, 'utf8'))) {
        const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
        if (!m)
            continue;
        const base = slug(m[1]);
        const n = counts.get(base) ?? 0;
        counts.set(base, n + 1);
        set.add(n === 0 ? base : `${base}-${n}`);
    }
    anchorCache.set(file, set);
    return set;
}
/** Relative link targets of a Markdown file (inline code spans and code blocks left out). */
function links(text) {
    const out = [];
    for (const line of prose(text)) {
        const plain = line.replace(/(`+)[^`]*?\1/g, '');
        for (const m of plain.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
            const target = m[1];
            if (/^[a-z][a-z0-9+.-]*:/i.test(target))
                continue; // http:, https:, mailto:
            out.push(target);
        }
    }
    return out;
}
describe('Markdown links', () => {
    it('the slug rule matches GitHub on the headings used here', () => {
        expect(slug('400 or 409 for workflow refusals')).to.equal('400-or-409-for-workflow-refusals');
        expect(slug('Reviews, attestation, policy, patchset CI')).to.equal('reviews-attestation-policy-patchset-ci');
        expect(slug('9. `commit.bin` — the one commit point of an authority')).to.equal('9-commitbin--the-one-commit-point-of-an-authority');
        expect(slug('`cairn runner`')).to.equal('cairn-runner');
        expect(slug('Lists and pagination (`next_cursor`)')).to.equal('lists-and-pagination-next_cursor');
    });
    for (const file of FILES) {
        it(`${file}: every relative link resolves`, () => {
            const abs = path.join(PROJECT_ROOT, file);
            const broken = [];
            for (const target of links(readFileSync(abs, 'utf8'))) {
                const [ref, fragment] = target.split('#', 2);
                const dest = ref === '' ? abs : path.resolve(path.dirname(abs), decodeURIComponent(ref));
                if (!dest.startsWith(PROJECT_ROOT + path.sep) && dest !== PROJECT_ROOT) {
                    broken.push(`${target} (outside the repository)`);
                    continue;
                }
                if (!existsSync(dest)) {
                    broken.push(`${target} (no such file)`);
                    continue;
                }
                if (fragment !== undefined) {
                    if (statSync(dest).isDirectory() || !dest.endsWith('.md')) {
                        broken.push(`${target} (an anchor into a file that is not Markdown)`);
                        continue;
                    }
                    if (!anchors(dest).has(decodeURIComponent(fragment)))
                        broken.push(`${target} (no such heading)`);
                }
            }
            expect(broken, `broken links in ${file}`).to.deep.equal([]);
        });
    }
});
//# sourceMappingURL=docs-links.test.js.map