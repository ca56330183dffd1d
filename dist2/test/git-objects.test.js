// Git's object encodings (lib/domain/git-objects.ts) against Debian's git: tree bytes and ids as
// `git mktree` makes them (every mode, git's directory-sorts-as-if-slashed order, names that are
// prefixes of each other), blob ids as `git hash-object`, and loose-object files git reads back.
import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { encodeGitTree, gitId, looseObject } from '../lib/domain/git-objects.js';
import { tempDir } from './helpers.js';
const hasGit = spawnSync('git', ['--version']).status === 0;
(hasGit ? describe : describe.skip)('git objects: the same bytes and ids as git', function () {
    this.timeout(60_000);
    let repo;
    before(() => {
        repo = path.join(tempDir('cairn-gitobj-'), 'r.git');
        execFileSync('git', ['init', '-q', '--bare', repo]);
    });
    const git = (args, input) => execFileSync('git', ['-C', repo, ...args], { input }).toString('latin1');
    const mktree = (entries) => git(['mktree', '--missing'], entries.map((e) => `${{ file: '100644', executable: '100755', symlink: '120000', directory: '040000', gitlink: '160000' }[e.kind]} ${e.kind === 'directory' ? 'tree' : e.kind === 'gitlink' ? 'commit' : 'blob'} ${e.id}\t${e.name}\n`).join('')).trim();
    it('encodes a tree as git mktree does: every mode, and a directory sorted as if its name ended in /', () => {
        const id = (c) => c.repeat(40);
        const entries = [
            { kind: 'directory', name: 'a', id: id('1') },
            { kind: 'file', name: 'a.b', id: id('2') },
            { kind: 'file', name: 'a0', id: id('3') },
            { kind: 'executable', name: 'run', id: id('4') },
            { kind: 'symlink', name: 'link', id: id('5') },
            { kind: 'gitlink', name: 'vendor', id: id('6') },
            { kind: 'file', name: 'é.txt', id: id('7') },
        ];
        const body = encodeGitTree(entries);
        expect(gitId('tree', body)).to.equal(mktree(entries));
        // git's order: a.b < a/ < a0.
        expect(body.toString('latin1').split('\0').slice(0, 3).map((s) => s.replace(/^.*? /, ''))).to.deep.equal(['a.b', 'a', 'a0']);
        expect(gitId('tree', encodeGitTree([]))).to.equal('4b825dc642cb6eb9a060e54bf8d69288fbee4904');
    });
    it('property: any set of entries encodes to git mktree\'s tree id', () => {
        const name = fc.stringMatching(/^[a-c.\-_0-9]{1,4}$/).filter((n) => n !== '.' && n !== '..');
        const entry = fc.record({
            kind: fc.constantFrom('file', 'executable', 'symlink', 'directory', 'gitlink'),
            name,
            id: fc.stringMatching(/^[0-9a-f]{40}$/),
        });
        fc.assert(fc.property(fc.uniqueArray(entry, { selector: (e) => e.name, maxLength: 12 }), (entries) => {
            expect(gitId('tree', encodeGitTree(entries))).to.equal(mktree(entries));
        }), { numRuns: 40 });
    });
    it('names blobs as git hash-object does, and writes loose objects git reads back', async () => {
        const bytes = Buffer.from('hello\n\0binary\xff', 'latin1');
        const id = gitId('blob', bytes);
        expect(id).to.equal(git(['hash-object', '--stdin'], bytes).trim());
        const file = path.join(repo, 'objects', id.slice(0, 2), id.slice(2));
        await fsp.mkdir(path.dirname(file), { recursive: true });
        await fsp.writeFile(file, looseObject('blob', bytes));
        expect(execFileSync('git', ['-C', repo, 'cat-file', 'blob', id]).equals(bytes)).to.equal(true);
        expect(git(['cat-file', '-t', id]).trim()).to.equal('blob');
    });
    it('refuses entries git could not hold', () => {
        expect(() => encodeGitTree([{ kind: 'file', name: 'a/b', id: '1'.repeat(40) }])).to.throw(/single path component/);
        expect(() => encodeGitTree([{ kind: 'file', name: 'a', id: '1'.repeat(40) }, { kind: 'file', name: 'a', id: '2'.repeat(40) }])).to.throw(/twice/);
        expect(() => encodeGitTree([{ kind: 'file', name: 'a', id: 'xyz' }])).to.throw(/object id/);
    });
});
//# sourceMappingURL=git-objects.test.js.map