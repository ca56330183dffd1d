// The git packs an export writes (lib/domain/git-pack.ts, lib/authority/git-pack-writer.ts)
// against Debian's git: deltas that apply to give their target, zlib streams of stored blocks,
// and a pack of whole objects and offset deltas (copies past 64 KiB, chains, large and empty
// objects) that `git verify-pack` accepts, whose objects `git cat-file` reads back byte for byte,
// and whose .idx is the one `git index-pack` makes of it.
import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { inflateSync } from 'node:zlib';
import fc from 'fast-check';
import { GitPackWriter } from '../lib/authority/git-pack-writer.js';
import { gitId } from '../lib/domain/git-objects.js';
import { applyDelta, prefixSuffixDelta, storedZlib } from '../lib/domain/git-pack.js';
import { GitShadowLayout } from '../lib/store/layout.js';
import { tempDir } from './helpers.js';
const hasGit = spawnSync('git', ['--version']).status === 0;
describe('git pack encodings', () => {
    it('property: a delta applies to its base to give the target, and is at most half the target', () => {
        const bytes = fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a));
        fc.assert(fc.property(bytes, bytes, bytes, bytes, (prefix, cut, inserted, suffix) => {
            const base = Buffer.concat([prefix, cut, suffix]);
            const target = Buffer.concat([prefix, inserted, suffix]);
            const delta = prefixSuffixDelta(base, target);
            if (delta === null)
                return;
            expect(delta.length).to.be.lessThan(target.length / 2);
            expect(applyDelta(base, delta).equals(target)).to.equal(true);
        }), { numRuns: 500 });
    });
    it('copies more than 64 KiB in several instructions, and gives no delta when one would not pay', () => {
        const big = Buffer.alloc(200_000, 'x');
        const target = Buffer.concat([big.subarray(0, 150_000), Buffer.from('edit'), big.subarray(150_000)]);
        const delta = prefixSuffixDelta(big, target);
        expect(delta.length).to.be.lessThan(64);
        expect(applyDelta(big, delta).equals(target)).to.equal(true);
        expect(prefixSuffixDelta(Buffer.from('a'.repeat(100)), Buffer.from('b'.repeat(100)))).to.equal(null);
        expect(prefixSuffixDelta(Buffer.from('short'), Buffer.from('shorter'))).to.equal(null);
    });
    it('a stored-block zlib stream inflates to its data, across 64 KiB blocks', () => {
        for (const n of [0, 1, 255, 65535, 65536, 200_001]) {
            const data = Buffer.alloc(n);
            for (let i = 0; i < n; i++)
                data[i] = (i * 7919) & 0xff;
            expect(inflateSync(storedZlib(data)).equals(data), `${n} bytes`).to.equal(true);
        }
    });
});
(hasGit ? describe : describe.skip)('git pack writer: a pack git reads', function () {
    this.timeout(60_000);
    it('writes whole objects and offset deltas that git verifies and reads back, with the .idx git index-pack makes', async () => {
        const root = path.join(tempDir('cairn-gitpack-'), 'shadow.git');
        execFileSync('git', ['init', '-q', '--bare', root]);
        const layout = new GitShadowLayout(root);
        await fsp.mkdir(layout.tempDir, { recursive: true });
        const writer = await GitPackWriter.open(layout.tempDir);
        const objects = [];
        const add = async (type, body, where) => {
            const id = gitId(type, body);
            objects.push({ type, body, id });
            await writer.add(type, id, body, where);
        };
        // A file edited 60 times (a chain longer than the depth bound), a large file edited in the
        // middle, an empty blob, a binary one, a tree, and a commit.
        const text = (v) => Buffer.from(Array.from({ length: 40 }, (_, l) => `line ${l}${l === v % 40 ? ` v${v}` : ''}`).join('\n'));
        for (let v = 0; v < 60; v++)
            await add('blob', text(v), 'src/a.txt');
        const large = Buffer.alloc(300_000, 'abcdefgh');
        await add('blob', large, 'big.bin');
        await add('blob', Buffer.concat([large.subarray(0, 100_000), Buffer.from('changed'), large.subarray(100_000)]), 'big.bin');
        await add('blob', Buffer.alloc(0), 'empty');
        await add('blob', Buffer.from([0, 255, 1, 254, 0, 0, 10]), 'bin');
        const tree = Buffer.concat([Buffer.from('100644 a.txt\0'), Buffer.from(objects[59].id, 'hex')]);
        await add('tree', tree, '');
        await add('commit', Buffer.from(`tree ${gitId('tree', tree)}\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\nm\n`));
        // Added twice: written once.
        await writer.add('blob', objects[0].id, objects[0].body, 'src/a.txt');
        expect(writer.count).to.equal(objects.length);
        const done = (await writer.finish(layout));
        expect(await fsp.readdir(layout.tempDir)).to.deep.equal([]);
        const pack = layout.packFile(done.name, 'pack');
        const verbose = execFileSync('git', ['-C', root, 'verify-pack', '-v', layout.packFile(done.name, 'idx')]).toString();
        // Offset deltas, and no chain longer than git's default depth of 50.
        expect(verbose).to.match(/chain length = 1: /);
        const depths = [...verbose.matchAll(/^chain length = (\d+):/gm)].map((m) => Number(m[1]));
        expect(Math.max(...depths)).to.be.at.most(50);
        for (const o of objects) {
            expect(execFileSync('git', ['-C', root, 'cat-file', o.type, o.id], { maxBuffer: 1 << 24 }).equals(o.body), o.id).to.equal(true);
        }
        execFileSync('git', ['-C', root, 'fsck', '--strict', '--no-dangling'], { stdio: 'pipe' });
        // The index is the one git makes of the same pack.
        const copy = path.join(path.dirname(root), 'copy.pack');
        await fsp.copyFile(pack, copy);
        execFileSync('git', ['index-pack', '-o', `${copy.slice(0, -5)}.idx`, copy]);
        expect((await fsp.readFile(`${copy.slice(0, -5)}.idx`)).equals(await fsp.readFile(layout.packFile(done.name, 'idx')))).to.equal(true);
    });
    it('an empty pack writes nothing; an aborted one leaves nothing', async () => {
        const root = path.join(tempDir('cairn-gitpack-'), 'shadow.git');
        execFileSync('git', ['init', '-q', '--bare', root]);
        const layout = new GitShadowLayout(root);
        await fsp.mkdir(layout.tempDir, { recursive: true });
        expect(await (await GitPackWriter.open(layout.tempDir)).finish(layout)).to.equal(null);
        const w = await GitPackWriter.open(layout.tempDir);
        await w.add('blob', gitId('blob', Buffer.from('x')), Buffer.from('x'));
        await w.abort();
        expect(await fsp.readdir(layout.tempDir)).to.deep.equal([]);
        expect(await fsp.readdir(layout.packDir)).to.deep.equal([]);
    });
});
//# sourceMappingURL=git-pack.test.js.map