// The push scan: the stat pass that totals the tree for a progress bar runs only when asked
// for, and the scan's result must not depend on it.
import { expect } from 'chai';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { listTree, scanDirectory } from '../lib/client/worktree.js';
import { tempDir } from './helpers.js';
describe('push scan', () => {
    it('scans the same tree with and without the up-front stat pass', async () => {
        const dir = tempDir();
        mkdirSync(path.join(dir, 'src/deep'), { recursive: true });
        writeFileSync(path.join(dir, 'src/a.c'), 'int a;');
        writeFileSync(path.join(dir, 'src/deep/b.sh'), '#!/bin/sh\n', { mode: 0o755 });
        writeFileSync(path.join(dir, 'empty'), '');
        symlinkSync('src/a.c', path.join(dir, 'link'));
        mkdirSync(path.join(dir, 'void'));
        const plain = await scanDirectory(dir);
        let total = -1;
        const counted = await scanDirectory(dir, () => { }, { onTotal: (n) => { total = n; } });
        expect(total).to.equal(6 + 10);
        expect(counted.rootTreeId).to.equal(plain.rootTreeId);
        expect([...plain.entries]).to.deep.equal([...counted.entries]);
        expect(plain.entries.get('src/deep/b.sh').kind).to.equal('executable');
        expect(plain.entries.get('link').kind).to.equal('symlink');
        expect(plain.directories.sort()).to.deep.equal(['src', 'src/deep', 'void']);
    });
    it('lists a tree sorted, without .git/ and .cairn/; a missing or non-directory path is refused', async () => {
        const dir = tempDir();
        mkdirSync(path.join(dir, 'b/.git'), { recursive: true });
        mkdirSync(path.join(dir, '.cairn'));
        writeFileSync(path.join(dir, 'b/x'), 'x');
        writeFileSync(path.join(dir, 'a-b'), 'y');
        writeFileSync(path.join(dir, 'b/.git/HEAD'), 'h');
        const listed = await listTree(dir);
        expect(listed).to.deep.equal({ paths: ['a-b', 'b', 'b/x'], notUtf8: [] });
        // The scan walks what it is given, in that order.
        const scanned = await scanDirectory(dir, () => { }, { listed });
        expect([...scanned.entries.keys()]).to.deep.equal(['a-b', 'b/x']);
        let missing = null;
        await listTree(path.join(dir, 'nope')).catch((e) => { missing = e; });
        expect(String(missing)).to.match(/nope does not exist/);
        let notDir = null;
        await listTree(path.join(dir, 'a-b')).catch((e) => { notDir = e; });
        expect(String(notDir)).to.match(/a-b is not a directory/);
    });
});
//# sourceMappingURL=worktree.test.js.map