// Pure workflow rules (lib/domain/workflow): identities and their spellings, status moves, the
// audit verdict, and the tree diff over an in-memory reader (only differing subtrees are read,
// directory ↔ file swaps, bounded line counting).
import { expect } from 'chai';
import { blobId, encodeTree, sha256Hex } from '../lib/domain/content.js';
import { auditVerdict, changeCloseMove, changeCloseStatus, checkChangeOpen, checkSuppliedChangeId, checkSuppliedPatchset, checkSuppliedTaskId, parseChangeRef, parseTaskRef, statusAfterPatchset, taskCloseMove, taskCloseStatus, } from '../lib/domain/workflow/rules.js';
import { diffTrees, LINE_BUDGET_BYTES, MAX_LINE_COUNT_BYTES } from '../lib/domain/workflow/tree-diff.js';
import { diffFiles, emptyTotals, lineDiff } from '../lib/domain/workflow/content-diff.js';
const code = (fn) => {
    try {
        fn();
        return 'ok';
    }
    catch (err) {
        return err.code;
    }
};
describe('workflow rules: identities', () => {
    it('parses task and change refs in their full and short spellings only', () => {
        expect(parseTaskRef('task-12')).to.equal('task-12');
        expect(parseTaskRef('12')).to.equal('task-12');
        for (const bad of ['task-0', 'task-012', '012', '0', 'task-', 'Task-1', ' 1', 'task-1 ', 'change-1'])
            expect(parseTaskRef(bad), bad).to.equal(null);
        expect(parseChangeRef('change-3')).to.deep.equal({ change_id: 'change-3', task_id: null });
        expect(parseChangeRef('task-2.change-3')).to.deep.equal({ change_id: 'change-3', task_id: 'task-2' });
        for (const bad of ['3', 'change-03', 'task-2.change-0', 'task-2:change-3', 'task-2.change-3.ps-1'])
            expect(parseChangeRef(bad), bad).to.equal(null);
    });
    it('accepts a supplied identity only when it equals the derived one (malformed or another one: 400)', () => {
        expect(code(() => checkSuppliedTaskId(undefined, 'task-4'))).to.equal('ok');
        expect(code(() => checkSuppliedTaskId('task-4', 'task-4'))).to.equal('ok');
        expect(code(() => checkSuppliedTaskId('task-3', 'task-4'))).to.equal('Invalid');
        expect(code(() => checkSuppliedTaskId('4', 'task-4'))).to.equal('Invalid');
        const derived = { change_id: 'change-5', change_ref: 'task-4.change-5' };
        expect(code(() => checkSuppliedChangeId('change-5', derived))).to.equal('ok');
        expect(code(() => checkSuppliedChangeId('task-4.change-5', derived))).to.equal('ok');
        expect(code(() => checkSuppliedChangeId('task-3.change-5', derived))).to.equal('Invalid');
        expect(code(() => checkSuppliedChangeId('c5', derived))).to.equal('Invalid');
        const ps = { patchset_id: 'change-5.ps-2', patchset_number: 2 };
        expect(code(() => checkSuppliedPatchset({ patchset_id: 'change-5.ps-2', patchset_number: 2 }, ps))).to.equal('ok');
        expect(code(() => checkSuppliedPatchset({ patchset_number: 3 }, ps))).to.equal('Invalid');
        expect(code(() => checkSuppliedPatchset({ patchset_number: 1.5 }, ps))).to.equal('Invalid');
        expect(code(() => checkSuppliedPatchset({ patchset_id: 'change-5.ps-1' }, ps))).to.equal('Invalid');
    });
});
describe('workflow rules: transitions and verdict', () => {
    it('maps close statuses and rejects the rest', () => {
        expect(taskCloseStatus('completed')).to.equal('completed');
        for (const s of ['abandoned', 'canceled', 'cancelled'])
            expect(taskCloseStatus(s)).to.equal('abandoned');
        for (const s of ['active', 'done', 'Completed', ''])
            expect(code(() => taskCloseStatus(s)), s).to.equal('Invalid');
        for (const s of ['archived', 'superseded', 'abandoned'])
            expect(changeCloseStatus(s)).to.equal(s);
        expect(changeCloseStatus('canceled')).to.equal('abandoned');
        expect(changeCloseStatus('cancelled')).to.equal('abandoned');
        for (const s of ['landed', 'draft', 'active', 'review', 'x'])
            expect(code(() => changeCloseStatus(s)), s).to.equal('Invalid');
    });
    it('closes a task only out of active; the same closed status again is an idempotent retry; completed ↔ abandoned is 400', () => {
        const task = (status) => ({ task_id: 'task-1', status });
        expect(taskCloseMove(task('active'), 'completed')).to.equal('move');
        expect(taskCloseMove(task('active'), 'abandoned')).to.equal('move');
        expect(taskCloseMove(task('completed'), 'completed')).to.equal('same');
        expect(taskCloseMove(task('abandoned'), 'abandoned')).to.equal('same');
        expect(code(() => taskCloseMove(task('completed'), 'abandoned'))).to.equal('Invalid');
        expect(code(() => taskCloseMove(task('abandoned'), 'completed'))).to.equal('Invalid');
    });
    it('closes a change from any status but landed: the same closed status is a retry, another one a move; closed changes take nothing else (400)', () => {
        const change = (status) => ({ change_id: 'change-1', status });
        for (const from of ['draft', 'active', 'review']) {
            for (const to of ['archived', 'superseded', 'abandoned'])
                expect(changeCloseMove(change(from), to), `${from} → ${to}`).to.equal('move');
            expect(code(() => checkChangeOpen(change(from), 'x'))).to.equal('ok');
        }
        for (const from of ['archived', 'superseded', 'abandoned']) {
            for (const to of ['archived', 'superseded', 'abandoned'])
                expect(changeCloseMove(change(from), to), `${from} → ${to}`).to.equal(from === to ? 'same' : 'move');
            expect(code(() => checkChangeOpen(change(from), 'x'))).to.equal('Invalid');
        }
        for (const to of ['archived', 'superseded', 'abandoned'])
            expect(code(() => changeCloseMove(change('landed'), to))).to.equal('Invalid');
        expect(code(() => checkChangeOpen(change('landed'), 'x'))).to.equal('Invalid');
    });
    it('moves draft to active on the first patchset and keeps later statuses', () => {
        expect(statusAfterPatchset('draft')).to.equal('active');
        expect(statusAfterPatchset('active')).to.equal('active');
        expect(statusAfterPatchset('review')).to.equal('review');
    });
    it('derives the audit verdict by the documented first-match rule', () => {
        expect(auditVerdict('completed', 3, 1)).to.equal('task_completed');
        expect(auditVerdict('abandoned', 0, 0)).to.equal('task_abandoned');
        expect(auditVerdict('active', 1, 1)).to.equal('in_progress');
        expect(auditVerdict('active', 0, 1)).to.equal('ready_to_close');
        expect(auditVerdict('active', 0, 0)).to.equal('no_changes');
    });
});
/** An in-memory content store that counts tree reads. */
class MapReader {
    trees = new Map();
    blobs = new Map();
    treeReads = [];
    blobReads = 0;
    blob(content) {
        const b = Buffer.isBuffer(content) ? content : Buffer.from(content);
        const id = blobId(b);
        this.blobs.set(id, b);
        return id;
    }
    tree(entries) {
        const id = sha256Hex(encodeTree(entries));
        this.trees.set(id, entries);
        return id;
    }
    async readTree(id) { this.treeReads.push(id); return this.trees.get(id); }
    blobSize(id) { return this.blobs.get(id).length; }
    async readBlob(id) { this.blobReads++; return this.blobs.get(id); }
}
describe('workflow: tree diff', () => {
    it('walks only subtrees whose ids differ', async () => {
        const r = new MapReader();
        const same = r.tree([{ name: 'x.txt', kind: 'file', id: r.blob('x\n') }]);
        const subA = r.tree([{ name: 'f.txt', kind: 'file', id: r.blob('a\n') }]);
        const subB = r.tree([{ name: 'f.txt', kind: 'file', id: r.blob('b\n') }]);
        const base = r.tree([{ name: 'big', kind: 'directory', id: same }, { name: 'sub', kind: 'directory', id: subA }]);
        const rev = r.tree([{ name: 'big', kind: 'directory', id: same }, { name: 'sub', kind: 'directory', id: subB }]);
        const d = await diffTrees(r, base, rev);
        expect(d.files.map((f) => [f.path, f.change, f.lines_added, f.lines_removed])).to.deep.equal([['sub/f.txt', 'modified', 1, 1]]);
        expect(r.treeReads).to.not.include(same);
        expect(await diffTrees(r, base, base)).to.deep.include({ files: [] });
    });
    it('reports a directory replaced by a file (and back) as deletes and adds', async () => {
        const r = new MapReader();
        const dir = r.tree([{ name: 'a.txt', kind: 'file', id: r.blob('1\n2\n') }, { name: 'b.txt', kind: 'file', id: r.blob('3\n') }]);
        const base = r.tree([{ name: 'p', kind: 'directory', id: dir }]);
        const rev = r.tree([{ name: 'p', kind: 'file', id: r.blob('now a file\n') }]);
        const d = await diffTrees(r, base, rev);
        expect(d.files.map((f) => [f.path, f.change])).to.deep.equal([['p/a.txt', 'deleted'], ['p/b.txt', 'deleted'], ['p', 'added']]);
        expect(d.stats).to.include({ files_changed: 3, files_deleted: 2, files_added: 1, lines_added: 1, lines_removed: 3 });
        const back = await diffTrees(r, rev, base);
        expect(back.stats).to.include({ files_added: 2, files_deleted: 1 });
    });
    it('bounds line counting: large blobs and binary content get none; symlink target changes are not lines', async () => {
        const r = new MapReader();
        const big = Buffer.alloc(MAX_LINE_COUNT_BYTES + 1, 0x61);
        const base = r.tree([{ name: 'big', kind: 'file', id: r.blob('small\n') }, { name: 'l', kind: 'symlink', id: r.blob('a') }]);
        const rev = r.tree([{ name: 'big', kind: 'file', id: r.blob(big) }, { name: 'l', kind: 'symlink', id: r.blob('b') }]);
        r.blobReads = 0;
        const d = await diffTrees(r, base, rev);
        expect(d.files.map((f) => [f.path, f.lines_added, f.content_changed])).to.deep.equal([['big', null, true], ['l', null, true]]);
        expect(d.stats).to.include({ lines_complete: false, symlinks_changed: 1, bytes_after: big.length + 1 });
        expect(r.blobReads).to.be.at.most(1);
        expect(LINE_BUDGET_BYTES).to.be.greaterThan(MAX_LINE_COUNT_BYTES);
    });
    it('counts lines with the diff routes\' line diff: moved lines, reindents and a last line without a newline count as the diff shows them', async () => {
        const r = new MapReader();
        const pairs = [
            ['swap.txt', 'A\nB\nC\nD\n', 'C\nD\nA\nB\n'],
            ['indent.ts', 'f() {\nx();\n}\ng() {\ny();\n}\n', 'class K {\n  g() {\n    y();\n  }\n  f() {\n    x();\n  }\n}\n'],
            ['tail.txt', 'a\nb', 'a\nb\n'],
            ['edit.txt', 'a\nb\nc\n', 'a\nB\nc\nd\n'],
            ['new.txt', '', 'x\nx\n'],
        ];
        const base = r.tree(pairs.map(([name, b]) => ({ name, kind: 'file', id: r.blob(b) })));
        const rev = r.tree(pairs.map(([name, , a]) => ({ name, kind: 'file', id: r.blob(a) })));
        const d = await diffTrees(r, base, rev);
        const totals = emptyTotals();
        const shown = {};
        for await (const f of diffFiles(r, base, rev, { context: 3, paths: [] }, totals))
            shown[f.path] = [f.additions ?? -1, f.deletions ?? -1];
        expect(Object.fromEntries(d.files.map((f) => [f.path, [f.lines_added, f.lines_removed]]))).to.deep.equal(shown);
        expect(shown['swap.txt']).to.deep.equal([2, 2]);
        expect(shown['tail.txt']).to.deep.equal([1, 1]);
        expect(shown['edit.txt']).to.deep.equal([2, 1]);
        expect(d.stats).to.include({ lines_added: totals.additions, lines_removed: totals.deletions, lines_complete: true });
        // the one function both call
        expect(lineDiff(Buffer.from('a\nb'), Buffer.from('a\nb\n'), 0)).to.deep.include({ kind: 'text', additions: 1, deletions: 1 });
        expect(lineDiff(Buffer.from('a\0'), Buffer.from('b'), 0)).to.deep.equal({ kind: 'binary' });
        expect(lineDiff(Buffer.from([0xff, 0xfe, 0x41]), Buffer.from('b'), 0)).to.deep.equal({ kind: 'not_utf8' });
    });
});
//# sourceMappingURL=workflow-domain.test.js.map