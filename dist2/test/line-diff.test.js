// The line diff counts what git counts (lib/domain/workflow/line-diff.ts, content-diff.ts
// lineDiff): a 10,000-line file with about 2,900 changed lines, a package-lock-like file of about
// 257 KB, and random texts of few distinct lines (where the choice among equal-cost diffs, and
// git's heuristics, decide the counts), each compared with `git diff --no-index --numstat`; the
// hunks always rebuild the new side from the old.
import { expect } from 'chai';
import { lineDiff } from '../lib/domain/workflow/content-diff.js';
import { bigEdit, lockfileEdit, numstat, rng } from './diff-inputs.js';
import { hasGit } from './git-fixture.js';
/** The old text with the hunks applied: it must be the new text. */
function apply(before, hunks) {
    const old = before === '' ? [] : before.split(/(?<=\n)/);
    const out = [];
    let at = 0;
    for (const h of hunks) {
        const start = h.old_lines === 0 ? h.old_start : h.old_start - 1;
        while (at < start)
            out.push(old[at++]);
        for (let k = 0; k < h.lines.length; k++) {
            const l = h.lines[k];
            const noEol = h.lines[k + 1]?.startsWith('\\');
            if (l[0] === ' ' || l[0] === '-') {
                expect(old[at].replace(/\n$/, ''), `old line ${at + 1}`).to.equal(l.slice(1));
                at++;
            }
            if (l[0] === ' ' || l[0] === '+')
                out.push(l.slice(1) + (noEol ? '' : '\n'));
        }
    }
    while (at < old.length)
        out.push(old[at++]);
    return out.join('');
}
function check(before, after) {
    const d = lineDiff(Buffer.from(before), Buffer.from(after), 3);
    if (d.kind !== 'text')
        throw new Error(`not a text diff: ${d.kind}`);
    expect(apply(before, d.hunks)).to.equal(after);
    return d;
}
describe('line diff: the counts of git diff --numstat', function () {
    this.timeout(120_000);
    before(function () { if (!hasGit)
        this.skip(); });
    it('a 10,000-line file with about 2,900 changed lines diffs fully, and its counts are git\'s', async () => {
        const [before, after] = bigEdit(42);
        const d = check(before, after);
        if (d.kind !== 'text')
            return;
        expect(d.complete).to.equal(true);
        expect(d.additions + d.deletions).to.be.within(4000, 8000);
        expect([d.additions, d.deletions]).to.deep.equal(await numstat(before, after));
    });
    it('a package-lock-like file of about 257 KB (+3,000 / −400 or so): git\'s counts', async () => {
        const [before, after] = lockfileEdit();
        expect(before.length).to.be.within(200_000, 320_000);
        const d = check(before, after);
        if (d.kind !== 'text')
            return;
        expect([d.additions, d.deletions]).to.deep.equal(await numstat(before, after));
        expect(d.additions).to.be.greaterThan(2000);
    });
    it('random texts of few distinct lines: git\'s counts, and hunks that rebuild the new side', async () => {
        for (let seed = 1; seed <= 40; seed++) {
            const r = rng(seed);
            const alphabet = 2 + Math.floor(r() * (seed % 3 === 0 ? 400 : 12));
            const n = seed % 5 === 0 ? 6000 : 50 + Math.floor(r() * 1500);
            const word = () => (r() < 0.1 ? '' : `line ${Math.floor(r() * alphabet)}`);
            const base = Array.from({ length: n }, word);
            const out = [];
            const rate = 0.05 + r() * 0.6;
            for (const l of base) {
                const x = r();
                if (x < rate / 3)
                    continue;
                if (x < (2 * rate) / 3)
                    out.push(word());
                else
                    out.push(l);
                if (r() < rate / 3)
                    out.push(word());
            }
            const tailless = seed % 4 === 0;
            const before = `${base.join('\n')}${tailless ? '' : '\n'}`;
            const after = `${out.join('\n')}\n`;
            const d = check(before, after);
            if (d.kind !== 'text')
                return;
            expect([d.additions, d.deletions], `seed ${seed}`).to.deep.equal(await numstat(before, after));
        }
    });
    it('edge cases: empty sides, no final newline, CRLF, whitespace modes', () => {
        for (const [a, b] of [['', 'x\n'], ['x\n', ''], ['a\nb', 'a\nb\n'], ['a\r\nb\r\n', 'a\r\nc\r\n'], ['same\n', 'same\n'], ['a', 'b']])
            check(a, b);
        const d = lineDiff(Buffer.from('a  b\nkeep\n'), Buffer.from('a b\nkeep\n'), 3, 'ignore-change');
        expect(d).to.deep.include({ kind: 'text', additions: 0, deletions: 0, hunks: [] });
    });
});
//# sourceMappingURL=line-diff.test.js.map