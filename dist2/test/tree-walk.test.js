// ContentOperations.walk (an explicit stack) and treeMemo (the export's per-request tree reader).
import { expect } from 'chai';
import { ContentOperations } from '../lib/authority/content.js';
import { WalkBudget, walkOverLimit } from '../lib/domain/tree-size.js';
describe('tree walk', () => {
    // root: a/ (x, y/ (z)), b, c/ (empty)
    const trees = new Map([
        ['root', [{ name: 'a', kind: 'directory', id: 'A' }, { name: 'b', kind: 'file', id: 'fb' }, { name: 'c', kind: 'directory', id: 'C' }]],
        ['A', [{ name: 'x', kind: 'file', id: 'fx' }, { name: 'y', kind: 'directory', id: 'Y' }]],
        ['Y', [{ name: 'z', kind: 'symlink', id: 'fz' }]],
        ['C', []],
    ]);
    let reads = 0;
    const store = {
        readTree: async (id) => { reads++; return trees.get(id); },
        walkBudget: (what) => new WalkBudget(100, walkOverLimit(what)),
    };
    const ops = new ContentOperations(store);
    const paths = async (it) => { const out = []; for await (const { path } of it)
        out.push(path); return out; };
    const expected = ['a', 'a/x', 'a/y', 'a/y/z', 'b', 'c'];
    it('yields every entry depth-first in name order, a directory before its contents', async () => {
        expect(await paths(ops.walk('root'))).to.deep.equal(expected);
        expect(await paths(ops.walk('A', 'a'))).to.deep.equal(['a/x', 'a/y', 'a/y/z']);
    });
    it('stops past its budget of paths with a 400 (a store whose recorded sizes lie)', async () => {
        let err = null;
        try {
            await paths(ops.walk('root', '', undefined, new WalkBudget(3, walkOverLimit('the walk'))));
        }
        catch (e) {
            err = e;
        }
        expect(err).to.have.property('code', 'Invalid');
        expect(String(err.message)).to.match(/^the walk walks more than 3 paths/);
        expect(await paths(ops.walk('root', '', undefined, new WalkBudget(6, walkOverLimit('the walk'))))).to.deep.equal(expected);
    });
    it('a tree memo reads each tree once while it has room, and changes nothing it yields', async () => {
        for (const [room, readsOfTwoWalks] of [[100, 4], [3, 6], [0, 7]]) {
            const read = ops.treeMemo(room);
            reads = 0;
            expect(await paths(ops.walk('root', '', read))).to.deep.equal(expected);
            expect(await paths(ops.walk('root', '', read))).to.deep.equal(expected);
            expect(reads, `room ${room}`).to.equal(readsOfTwoWalks);
        }
    });
});
//# sourceMappingURL=tree-walk.test.js.map