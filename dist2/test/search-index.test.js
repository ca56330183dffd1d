// The change search's posting lists (lib/domain/workflow/search-index.ts) and their checkpoint
// section (storage-layout.md §17.1 `change-search`): golden bytes, what a section that must not
// be used fails with, and (property tests) that the flat lists hold what was added and that the
// section is a function of the records, whatever the order they were applied in.
import { expect } from 'chai';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileBucket, Postings, SearchIndex } from '../lib/domain/workflow/search-index.js';
import { FIXTURES } from './helpers.js';
const fixture = (name) => readFileSync(path.join(FIXTURES, name));
/** Two changes: words, lines, an owner, reviewers, prefixes, a truncated path list, a comment. */
function small() {
    const x = new SearchIndex();
    x.applyChange({ sequence: 1, title: 'Fix router', base_line: 'main', owner: 'ann', reviewers: [{ name: 'core', kind: 'group' }] });
    x.applyChange({ sequence: 2, title: 'router docs', base_line: 'dev' });
    x.applyPatchset({ change_id: 'change-1', diff: { files: [{ path: 'lib/http/a.ts' }, { path: 'README' }] } });
    x.applyPatchset({ change_id: 'change-2', diff: { files: [{ path: 'docs/api.md' }], files_truncated: true } });
    x.applyReview({ change_id: 'change-2', action: 'approve', reviewer: 'bob', reviewer_group: null });
    x.applyComment('change-2.ps-1.c-1');
    return x;
}
describe('search index: the change-search checkpoint section', () => {
    it('golden bytes, and the fixture decodes to the same lists', () => {
        const bytes = small().encode(2);
        expect(bytes.equals(fixture('workflow-search-v1.bin'))).to.equal(true);
        expect(bytes.length).to.equal(221);
        const { index, changes } = SearchIndex.decode(fixture('workflow-search-v1.bin'), 2);
        expect(changes).to.equal(2);
        expect([...index.lists.words.get('router')]).to.deep.equal([1, 2]);
        expect([...index.lists.prefixes.get('lib/http')]).to.deep.equal([1]);
        expect([...index.lists.files.get(fileBucket('lib/http/a.ts'))]).to.deep.equal([1]);
        // FNV-1a 32-bit of 'lib/http/a.ts' is 0xb55b0c20 (computed apart from the code); modulo 65,536: c20.
        expect(fileBucket('lib/http/a.ts')).to.equal('c20');
        expect([...index.lists.deep.get('')]).to.deep.equal([]);
        expect([...index.lists.wide.get('')]).to.deep.equal([2]);
        expect([...index.lists.reviewers.get('core')]).to.deep.equal([1]);
        expect([...index.lists.reviewers.get('bob')]).to.deep.equal([2]);
        expect([...index.lists.commented.get('')]).to.deep.equal([2]);
        expect(index.encode(2).equals(bytes)).to.equal(true);
        // A change the section covers is indexed: its title is not added again (no duplicate).
        index.applyChange({ sequence: 2, title: 'router docs', base_line: 'dev', owner: 'cy' });
        expect([...index.lists.words.get('router')]).to.deep.equal([1, 2]);
        expect([...index.lists.owners.get('cy')]).to.deep.equal([2]);
    });
    it('a patchset of more than 64 three-segment prefixes goes on the deep list, of more than 64 shorter ones on the wide list', () => {
        const x = new SearchIndex();
        x.applyPatchset({ change_id: 'change-1', diff: { files: Array.from({ length: 65 }, (_, i) => ({ path: `a/b/f${i}` })) } });
        x.applyPatchset({ change_id: 'change-2', diff: { files: Array.from({ length: 65 }, (_, i) => ({ path: `d${i}` })) } });
        expect([...x.lists.deep.get('')]).to.deep.equal([1]);
        expect([...x.lists.prefixes.get('a/b')]).to.deep.equal([1]);
        expect(x.lists.files.keyCount).to.equal(0);
        expect([...x.lists.wide.get('')]).to.deep.equal([2]);
        expect([...x.lists.prefixes.get('d0')]).to.deep.equal([]);
    });
    it('a section that must not be used fails to decode, naming why', () => {
        const good = fixture('workflow-search-v1.bin');
        const edit = (f) => f(Buffer.from(good));
        const cases = [
            [edit((b) => { b.writeUInt32LE(2, 0); return b; }), 2, /version 2 is not 1/],
            [good, 1, /counts 2 changes, the workflow indexes 1/],
            [good.subarray(0, good.length - 1), 2, /ends early/],
            [Buffer.concat([good, Buffer.from([0])]), 2, /1 bytes left over/],
            [edit((b) => { b.writeUInt32LE(1, 4); return b; }), 5, /names a change beyond 1/],
        ];
        for (const [bytes, count, why] of cases)
            expect(() => SearchIndex.decode(bytes, count)).to.throw(why);
        // A list that is not ascending (a zero difference) and keys out of order.
        const x = new SearchIndex();
        x.applyComment('change-1');
        const one = x.encode(1);
        // The commented list (u32 length 1, then 1) is followed by the empty files and deep kinds.
        expect([...one.subarray(one.length - 13)]).to.deep.equal([1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
        const dup = Buffer.concat([one.subarray(0, one.length - 13), Buffer.from([2, 0, 0, 0, 1, 0]), Buffer.alloc(8)]);
        expect(() => SearchIndex.decode(dup, 1)).to.throw(/not ascending/);
    });
    it('flat lists hold exactly what was added, ascending, across compactions (property)', () => {
        fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 1, max: 3000 })), { maxLength: 12_000 }), (adds) => {
            const p = new Postings();
            const ref = new Map();
            for (const [k, seq] of adds) {
                p.add(`k${k}`, seq);
                if (!ref.has(`k${k}`))
                    ref.set(`k${k}`, new Set());
                ref.get(`k${k}`).add(seq);
            }
            for (const [k, set] of ref)
                expect([...p.get(k)]).to.deep.equal([...set].sort((a, b) => a - b));
            expect(p.entryCount).to.equal([...ref.values()].reduce((n, s) => n + s.size, 0));
            p.compact();
            for (const [k, set] of ref)
                expect([...p.get(k)]).to.deep.equal([...set].sort((a, b) => a - b));
        }), { numRuns: 30 });
    });
    it('the section is a function of the records: any order, older versions first, equal bytes (property)', () => {
        const word = fc.constantFrom('fix', 'router', 'log', 'docs', 'speed', 'écrit');
        const arb = fc.record({
            changes: fc.array(fc.record({ title: fc.array(word, { minLength: 1, maxLength: 4 }), line: fc.constantFrom('main', 'dev'), owner: fc.option(fc.constantFrom('ann', 'bob')), reviewers: fc.array(fc.constantFrom('cy', 'core', 'dee'), { maxLength: 3 }) }), { minLength: 1, maxLength: 30 }),
            patchsets: fc.array(fc.record({ change: fc.nat(), paths: fc.array(fc.constantFrom('lib/a.ts', 'lib/http/b.ts', 'docs/x.md', 'README', 'a/b/c/d', 'a/b/e'), { maxLength: 4 }), truncated: fc.boolean() }), { maxLength: 40 }),
            reviews: fc.array(fc.record({ change: fc.nat(), action: fc.constantFrom('request', 'approve', 'block'), reviewer: fc.constantFrom('bob', 'cy'), group: fc.option(fc.constantFrom('core', 'ops')) }), { maxLength: 30 }),
            comments: fc.array(fc.nat(), { maxLength: 20 }),
            seed: fc.integer(),
        });
        fc.assert(fc.property(arb, (r) => {
            const n = r.changes.length;
            const changes = r.changes.map((c, i) => ({ sequence: i + 1, title: c.title.join(' '), base_line: c.line, ...(c.owner ? { owner: c.owner } : {}), reviewers: c.reviewers.map((name) => ({ name, kind: 'person' })) }));
            const patchsets = r.patchsets.map((p) => ({ change_id: `change-${(p.change % n) + 1}`, diff: { files: p.paths.map((path) => ({ path })), files_truncated: p.truncated } }));
            const reviews = r.reviews.map((v) => ({ change_id: `change-${(v.change % n) + 1}`, action: v.action, reviewer: v.reviewer, reviewer_group: v.group }));
            const comments = r.comments.map((c) => `change-${(c % n) + 1}.ps-1.c-${c}`);
            const expected = SearchIndex.rebuild({ changes, patchsets, reviews, commentIds: comments }).encode(n);
            // Shuffled, one by one, each change also applied as an older version (fewer reviewers),
            // before or after its latest: what an older version adds is a subset, so order is free.
            let s = r.seed;
            const rnd = (k) => { s = (Math.imul(s, 1103515245) + 12345) | 0; return ((s >>> 0) % k); };
            const x = new SearchIndex();
            const ops = [];
            for (const c of changes)
                ops.push(() => x.applyChange({ ...c, reviewers: c.reviewers.slice(0, 1) }), () => x.applyChange(c));
            for (const p of patchsets)
                ops.push(() => x.applyPatchset(p));
            for (const v of reviews)
                ops.push(() => x.applyReview(v));
            for (const id of comments)
                ops.push(() => x.applyComment(id));
            for (let i = ops.length - 1; i > 0; i--) {
                const j = rnd(i + 1);
                [ops[i], ops[j]] = [ops[j], ops[i]];
            }
            for (const op of ops) {
                op();
                if (rnd(7) === 0)
                    x.compact();
            }
            expect(x.encode(n).equals(expected)).to.equal(true);
            expect(SearchIndex.decode(expected, n).index.encode(n).equals(expected)).to.equal(true);
        }), { numRuns: 200 });
    });
});
//# sourceMappingURL=search-index.test.js.map