// The three-way tree merge of a land (lib/domain/workflow/merge.ts) over in-memory fixture trees:
// clean, one-sided and conflicting histories with text, binary, executable, symlink,
// delete/modify, add/add and file/directory cases, in `merge` and `direct` strategies.
import { expect } from 'chai';
import { blobId, decodeTree, encodeTree, sha256Hex } from '../lib/domain/content.js';
import { isBinary, mergeText, mergeTrees } from '../lib/domain/workflow/merge.js';
class MemReader {
    trees = new Map();
    blobs = new Map();
    treeReads = 0;
    put(f) {
        const entries = [];
        for (const [name, v] of Object.entries(f)) {
            if (typeof v === 'string' || Buffer.isBuffer(v))
                entries.push({ name, kind: 'file', id: this.blob(v) });
            else if ('kind' in v && typeof v.kind === 'string' && 'content' in v)
                entries.push({ name, kind: v.kind, id: this.blob(v.content) });
            else
                entries.push({ name, kind: 'directory', id: this.put(v) });
        }
        const bytes = encodeTree(entries);
        const id = sha256Hex(bytes);
        this.trees.set(id, entries);
        return id;
    }
    blob(v) {
        const b = Buffer.isBuffer(v) ? v : Buffer.from(v);
        const id = blobId(b);
        this.blobs.set(id, b);
        return id;
    }
    async readTree(id) {
        this.treeReads++;
        const t = this.trees.get(id);
        if (!t)
            throw new Error(`no tree ${id}`);
        return t;
    }
    async readBlob(id) {
        const b = this.blobs.get(id);
        if (!b)
            throw new Error(`no blob ${id}`);
        return b;
    }
    /** Read back a merged tree as a fixture-like map path → "kind:content". */
    flatten(out, id, prefix = '') {
        const entries = this.trees.get(id) ?? (() => {
            const bytes = out.trees.get(id);
            if (!bytes)
                throw new Error(`merged tree ${id} missing`);
            return decode(bytes);
        })();
        const res = {};
        for (const e of entries) {
            if (e.kind === 'directory')
                Object.assign(res, this.flatten(out, e.id, `${prefix}${e.name}/`));
            else
                res[prefix + e.name] = `${e.kind}:${(this.blobs.get(e.id) ?? out.blobs.get(e.id)).toString('latin1')}`;
        }
        return res;
    }
}
function decode(bytes) {
    return decodeTree(bytes);
}
async function merge(b, o, t, strategy = 'merge') {
    const r = new MemReader();
    const ids = { b: b === null ? null : r.put(b), o: r.put(o), t: r.put(t) };
    const out = await mergeTrees(r, ids.b, ids.o, ids.t, strategy);
    return { out, r, ids, tree: out.root_tree_id ? r.flatten(out, out.root_tree_id) : null };
}
const bin = (s) => Buffer.concat([Buffer.from([0]), Buffer.from(s)]);
const exe = (content) => ({ kind: 'executable', content });
const link = (content) => ({ kind: 'symlink', content });
const text = (...lines) => lines.join('\n') + '\n';
describe('land merge: clean and one-sided histories', () => {
    it('one side changed only: the result is that side\'s tree, with no new objects', async () => {
        const base = { 'a.txt': 'a', d: { 'x.txt': 'x' } };
        const theirs = { 'a.txt': 'A', d: { 'x.txt': 'x' } };
        const { out, ids } = await merge(base, base, theirs);
        expect(out.conflicts).to.deep.equal([]);
        expect(out.root_tree_id).to.equal(ids.t);
        expect(out.trees.size).to.equal(0);
        const back = await merge(base, theirs, base);
        expect(back.out.root_tree_id).to.equal(back.ids.o);
    });
    it('different files on the two sides merge; identical changes are not conflicts', async () => {
        const base = { 'a.txt': 'a', 'b.txt': 'b', d: { 'x.txt': 'x', 'y.txt': 'y' }, 'same.txt': 's' };
        const ours = { 'a.txt': 'A', 'b.txt': 'b', d: { 'x.txt': 'X', 'y.txt': 'y' }, 'same.txt': 'S', 'new-o.txt': 'no' };
        const theirs = { 'a.txt': 'a', 'b.txt': 'B', d: { 'x.txt': 'x', 'y.txt': 'Y', 'z.txt': 'z' }, 'same.txt': 'S' };
        const { out, tree } = await merge(base, ours, theirs);
        expect(out.conflicts).to.deep.equal([]);
        expect(tree).to.deep.equal({
            'a.txt': 'file:A', 'b.txt': 'file:B', 'd/x.txt': 'file:X', 'd/y.txt': 'file:Y', 'd/z.txt': 'file:z', 'new-o.txt': 'file:no', 'same.txt': 'file:S',
        });
    });
    it('deletes on one side, identical deletes and identical adds merge', async () => {
        const base = { 'a.txt': 'a', 'b.txt': 'b', 'c.txt': 'c' };
        const ours = { 'b.txt': 'b', 'add.txt': 'same' };
        const theirs = { 'a.txt': 'a', 'add.txt': 'same' };
        const { out, tree } = await merge(base, ours, theirs);
        expect(out.conflicts).to.deep.equal([]);
        expect(tree).to.deep.equal({ 'add.txt': 'file:same' });
    });
    it('text changed on both sides in different regions merges line by line', async () => {
        const base = { 'f.txt': text('1', '2', '3', '4', '5', '6', '7') };
        const ours = { 'f.txt': text('one', '2', '3', '4', '5', '6', '7') };
        const theirs = { 'f.txt': text('1', '2', '3', '4', '5', '6', 'seven', 'eight') };
        const { out, tree } = await merge(base, ours, theirs);
        expect(out.conflicts).to.deep.equal([]);
        expect(tree).to.deep.equal({ 'f.txt': 'file:' + text('one', '2', '3', '4', '5', '6', 'seven', 'eight') });
        expect(out.blobs.size).to.equal(1);
    });
    it('a mode change on one side and a content change on the other both apply', async () => {
        const base = { 'run.sh': text('a', 'b', 'c', 'd') };
        const ours = { 'run.sh': exe(text('a', 'b', 'c', 'd')) };
        const theirs = { 'run.sh': text('a', 'b', 'c', 'D') };
        const { out, tree } = await merge(base, ours, theirs);
        expect(out.conflicts).to.deep.equal([]);
        expect(tree).to.deep.equal({ 'run.sh': 'executable:' + text('a', 'b', 'c', 'D') });
    });
    it('bytes that are not UTF-8 round-trip exactly through a line merge', async () => {
        const raw = (x) => Buffer.from([0xff, 0xfe, 0x0a, x, 0x0a, 0x80, 0x0a, 0x41, 0x0a, 0x42, 0x0a]);
        const base = raw(0x31);
        const ours = Buffer.from(base);
        ours[3] = 0x32;
        const theirs = Buffer.from(base);
        theirs[9] = 0x43;
        const merged = mergeText(base, ours, theirs);
        const want = Buffer.from(base);
        want[3] = 0x32;
        want[9] = 0x43;
        expect(merged && merged.equals(want)).to.equal(true);
    });
    it('walks only differing subtrees', async () => {
        const big = {};
        for (let i = 0; i < 50; i++)
            big[`d${i}`] = { 'f.txt': `${i}` };
        const ours = { ...big, d1: { 'f.txt': 'changed' } };
        const theirs = { ...big, d2: { 'f.txt': 'changed' } };
        const r = new MemReader();
        const ids = [r.put(big), r.put(ours), r.put(theirs)];
        r.treeReads = 0;
        const out = await mergeTrees(r, ids[0], ids[1], ids[2], 'merge');
        expect(out.conflicts).to.deep.equal([]);
        expect(r.treeReads).to.equal(3);
    });
});
describe('land merge: conflicts', () => {
    const kinds = async (b, o, t, s = 'merge') => {
        const { out } = await merge(b, o, t, s);
        expect(out.root_tree_id).to.equal(null);
        return out.conflicts;
    };
    it('overlapping text edits: content', async () => {
        expect(await kinds({ 'f.txt': text('a', 'b', 'c') }, { 'f.txt': text('a', 'X', 'c') }, { 'f.txt': text('a', 'Y', 'c') })).to.deep.equal([{ path: 'f.txt', kind: 'content' }]);
    });
    it('binary changed on both sides: content, unless identical', async () => {
        expect(isBinary(bin('x'))).to.equal(true);
        expect(isBinary(Buffer.from('plain'))).to.equal(false);
        expect(await kinds({ 'b.bin': bin('1\n2\n3\n4\n') }, { 'b.bin': bin('X\n2\n3\n4\n') }, { 'b.bin': bin('1\n2\n3\nY\n') })).to.deep.equal([{ path: 'b.bin', kind: 'content' }]);
        const same = await merge({ 'b.bin': bin('1') }, { 'b.bin': bin('2') }, { 'b.bin': bin('2') });
        expect(same.out.conflicts).to.deep.equal([]);
        expect(same.tree).to.deep.equal({ 'b.bin': 'file:' + bin('2').toString('latin1') });
    });
    it('a NUL after the first 8,000 bytes still merges as text', async () => {
        const pad = ('p'.repeat(99) + '\n').repeat(90);
        const tail = '\u0000\n';
        const b = { 'f.txt': 'a\n' + pad + 'b\n' + tail };
        const o = { 'f.txt': 'A\n' + pad + 'b\n' + tail };
        const t = { 'f.txt': 'a\n' + pad + 'B\n' + tail };
        const { out, tree } = await merge(b, o, t);
        expect(out.conflicts).to.deep.equal([]);
        expect(tree['f.txt']).to.equal('file:A\n' + pad + 'B\n' + tail);
    });
    it('delete on one side, modify on the other: delete/modify (both directions, also for a directory)', async () => {
        expect(await kinds({ 'f.txt': 'a' }, {}, { 'f.txt': 'b' })).to.deep.equal([{ path: 'f.txt', kind: 'delete/modify' }]);
        expect(await kinds({ 'f.txt': 'a' }, { 'f.txt': 'b' }, {})).to.deep.equal([{ path: 'f.txt', kind: 'delete/modify' }]);
        expect(await kinds({ d: { 'x': 'a' } }, {}, { d: { 'x': 'b' } })).to.deep.equal([{ path: 'd', kind: 'delete/modify' }]);
    });
    it('added on both sides with different content or kind: add/add', async () => {
        expect(await kinds({}, { 'n.txt': 'one' }, { 'n.txt': 'two' })).to.deep.equal([{ path: 'n.txt', kind: 'add/add' }]);
        expect(await kinds(null, { 'n.txt': 'one' }, { 'n.txt': exe('two') })).to.deep.equal([{ path: 'n.txt', kind: 'add/add' }]);
    });
    it('the same bytes added as a file on one side and an executable on the other: mode', async () => {
        expect(await kinds({}, { 'r.sh': 'x' }, { 'r.sh': exe('x') })).to.deep.equal([{ path: 'r.sh', kind: 'mode' }]);
        expect(await kinds({}, { 'r': 'x' }, { 'r': link('x') })).to.deep.equal([{ path: 'r', kind: 'symlink' }]);
        // the same kind move on both sides is not a conflict
        const ok = await merge({ 'r.sh': 'x' }, { 'r.sh': exe('x') }, { 'r.sh': exe('x') });
        expect(ok.tree).to.deep.equal({ 'r.sh': 'executable:x' });
    });
    it('symlink retargeted differently, or a file turned symlink while edited: symlink', async () => {
        expect(await kinds({ l: link('a') }, { l: link('b') }, { l: link('c') })).to.deep.equal([{ path: 'l', kind: 'symlink' }]);
        expect(await kinds({ l: 'a\n' }, { l: link('target') }, { l: 'b\n' })).to.deep.equal([{ path: 'l', kind: 'symlink' }]);
        const ok = await merge({ l: link('a') }, { l: link('b') }, { l: link('a') });
        expect(ok.tree).to.deep.equal({ l: 'symlink:b' });
    });
    it('a file on one side where the other has a directory: file/directory', async () => {
        expect(await kinds({ p: 'a' }, { p: { 'x.txt': 'x' } }, { p: 'b' })).to.deep.equal([{ path: 'p', kind: 'file/directory' }]);
        expect(await kinds({}, { p: 'file' }, { p: { 'x.txt': 'x' } })).to.deep.equal([{ path: 'p', kind: 'file/directory' }]);
    });
    it('conflicts deep in a tree carry their full path, sorted, alongside clean paths', async () => {
        const b = { src: { lib: { 'a.ts': text('1', '2', '3'), 'b.ts': 'b' } }, 'z.txt': 'z' };
        const o = { src: { lib: { 'a.ts': text('1', 'O', '3'), 'b.ts': 'b2' } }, 'z.txt': 'zo' };
        const t = { src: { lib: { 'a.ts': text('1', 'T', '3') } }, 'z.txt': 'zt' };
        expect(await kinds(b, o, t)).to.deep.equal([
            { path: 'src/lib/a.ts', kind: 'content' },
            { path: 'src/lib/b.ts', kind: 'delete/modify' },
            { path: 'z.txt', kind: 'content' },
        ]);
    });
});
describe('land merge: direct (pushrebase) strategy', () => {
    it('applies the patch onto a head that moved elsewhere', async () => {
        const base = { 'a.txt': 'a', 'b.txt': 'b' };
        const { out, tree } = await merge(base, { 'a.txt': 'A', 'b.txt': 'b' }, { 'a.txt': 'a', 'b.txt': 'B', 'c.txt': 'c' }, 'direct');
        expect(out.conflicts).to.deep.equal([]);
        expect(tree).to.deep.equal({ 'a.txt': 'file:A', 'b.txt': 'file:B', 'c.txt': 'file:c' });
    });
    it('fails when the same file changed on both sides, even where a line merge would succeed', async () => {
        const base = { 'f.txt': text('1', '2', '3', '4', '5', '6') };
        const o = { 'f.txt': text('one', '2', '3', '4', '5', '6') };
        const t = { 'f.txt': text('1', '2', '3', '4', '5', 'six') };
        expect((await merge(base, o, t, 'merge')).out.conflicts).to.deep.equal([]);
        expect((await merge(base, o, t, 'direct')).out.conflicts).to.deep.equal([{ path: 'f.txt', kind: 'content' }]);
    });
    it('identical changes on both sides are still not conflicts', async () => {
        const { out } = await merge({ 'f.txt': 'a' }, { 'f.txt': 'b' }, { 'f.txt': 'b' }, 'direct');
        expect(out.conflicts).to.deep.equal([]);
    });
});
//# sourceMappingURL=merge.test.js.map