// A diff that shows what changed, over real HTTP (docs/api.md "Diffs and land readiness"): word
// spans on paired lines, git's whitespace modes, renames and copies (checked against git's own
// detection and applied by git apply), the file content route with its media types and hostile
// paths, and image dimensions in the diff.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push, pull } from '../lib/client/transfer.js';
import { detectRenames, MAX_RENAME_PAIRS, signature, similarity } from '../lib/domain/workflow/renames.js';
import { api, download, ok, register, startTestServer, tempDir } from './helpers.js';
import { git, hasGit } from './git-fixture.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
async function writeTree(dir, files) {
    await fsp.rm(dir, { recursive: true, force: true });
    await fsp.mkdir(dir, { recursive: true });
    for (const [p, v] of Object.entries(files)) {
        const full = path.join(dir, p);
        await fsp.mkdir(path.dirname(full), { recursive: true });
        if (typeof v === 'string' || Buffer.isBuffer(v))
            await fsp.writeFile(full, v);
        else
            await fsp.symlink(v.link, full);
    }
}
const lines = (n, f) => Array.from({ length: n }, (_, i) => f(i)).join('\n') + '\n';
const MOVED = lines(160, (i) => `export const value${i} = compute(${i}, 'moved file line ${i}');`);
const COPIED = lines(60, (i) => `copy source line ${i} with enough text to be distinct`);
export const BASE = {
    'const.ts': 'export const A = 1;\nexport const B = 2;\nexport const C = 3;\n',
    'reindent.py': lines(20, (i) => `    x${i} = ${i}`),
    'spacing.txt': 'a  b\nkeep\nab\ntrail\n',
    'src/old/moved.ts': MOVED,
    'exact-old.txt': 'the same content, moved as is\n',
    'copy-src.txt': COPIED,
    'gone.txt': 'nothing like anything else\n',
    'long.txt': `${'x'.repeat(2500)}\n`,
    'whole.txt': 'alpha beta gamma\n',
};
export const REVISION = {
    'const.ts': 'export const A = 1;\nexport const B = 42;\nexport const C = 3;\nexport const D = 4;\n',
    'reindent.py': lines(20, (i) => `        x${i} = ${i}`),
    'spacing.txt': 'a b\nkeep\na b\ntrail   \n',
    'src/new/moved.ts': MOVED.replace("compute(80, 'moved file line 80')", "compute(80, 'edited line')"),
    'exact-new.txt': 'the same content, moved as is\n',
    'copy-src.txt': COPIED.replace('copy source line 0 ', 'copy source line zero '),
    'copy-dst.txt': COPIED.replace('line 59 ', 'line fifty-nine '),
    'long.txt': `${'y'.repeat(2500)}\n`,
    'whole.txt': 'totally different words here\n',
};
describe('diff fidelity: word spans, whitespace modes, renames and copies', function () {
    this.timeout(120_000);
    let s;
    let repo;
    let base;
    let rev;
    const dir = path.join(tempDir(), 'tree');
    const get = (p, headers = {}) => api(s.url, 'GET', R(repo, p), { headers });
    const diff = async (q = '') => ok(get(`/read/patchsets/change-1.ps-1/diff${q}`));
    const file = (d, p) => d.files.find((f) => f.path === p);
    before(async () => {
        s = await startTestServer();
        repo = await register(s.url, 'fidelity');
        await writeTree(dir, BASE);
        base = (await push({ server: s.url, repo, line: 'main', dir, moveLine: true, progress: false })).snapshot_id;
        await writeTree(dir, REVISION);
        rev = (await push({ server: s.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
        const t = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } }))).task;
        await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: t.task_id, title: 'C', base_line: 'main' } }));
        await ok(api(s.url, 'POST', R(repo, '/changes/change-1/patchsets'), { json: { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' } }));
    });
    after(() => s.stop());
    it('spans: the changed words of a paired line, parallel to the lines; null on context, unpaired, over-long and wholly changed lines', async () => {
        const d = await diff();
        const h = file(d, 'const.ts').hunks[0];
        expect(h.lines).to.deep.equal([' export const A = 1;', '-export const B = 2;', '+export const B = 42;', ' export const C = 3;', '+export const D = 4;']);
        expect(h.spans).to.have.length(h.lines.length);
        expect(h.spans).to.deep.equal([null, [[17, 18]], [[17, 19]], null, null]);
        expect(h.lines[1].slice(1).slice(17, 18)).to.equal('2');
        expect(h.lines[2].slice(1).slice(17, 19)).to.equal('42');
        expect(file(d, 'long.txt').hunks[0].spans).to.deep.equal([null, null]); // over 2,000 characters
        expect(file(d, 'whole.txt').hunks[0].spans).to.deep.equal([null, null]); // nothing kept: no highlight
        // The unified text is unchanged by spans.
        expect((await get('/read/patchsets/change-1.ps-1/diff?format=unified&path=const.ts')).text).to.equal([
            'diff --git a/const.ts b/const.ts', '--- a/const.ts', '+++ b/const.ts', '@@ -1,3 +1,4 @@',
            ' export const A = 1;', '-export const B = 2;', '+export const B = 42;', ' export const C = 3;', '+export const D = 4;', '',
        ].join('\n'));
    });
    it('whitespace: ignore-all / ignore-change / ignore-eol as git -w / -b / --ignore-space-at-eol, on JSON and unified; shown lines keep the revision\'s text', async () => {
        const none = await diff('?path=reindent.py&path=spacing.txt');
        expect(file(none, 'reindent.py')).to.include({ additions: 20, deletions: 20 });
        const all = await diff('?path=reindent.py&path=spacing.txt&whitespace=ignore-all');
        expect(all.whitespace).to.equal('ignore-all');
        expect(file(all, 'reindent.py')).to.deep.include({ change: 'modified', additions: 0, deletions: 0, hunks: [] });
        expect(file(all, 'spacing.txt')).to.deep.include({ additions: 0, deletions: 0, hunks: [] });
        const change = await diff('?path=spacing.txt&whitespace=ignore-change');
        // "a  b" → "a b" and trailing spaces are no change under -b; "ab" → "a b" is one.
        expect(file(change, 'spacing.txt').hunks[0].lines).to.deep.equal([' a b', ' keep', '-ab', '+a b', ' trail   ']);
        const eol = await diff('?path=spacing.txt&whitespace=ignore-eol');
        expect(file(eol, 'spacing.txt').hunks[0].lines).to.deep.equal(['-a  b', '+a b', ' keep', '-ab', '+a b', ' trail   ']);
        const unified = (await get('/read/patchsets/change-1.ps-1/diff?format=unified&path=reindent.py&path=spacing.txt&whitespace=ignore-change')).text;
        expect(unified).to.equal('diff --git a/reindent.py b/reindent.py\ndiff --git a/spacing.txt b/spacing.txt\n--- a/spacing.txt\n+++ b/spacing.txt\n@@ -1,4 +1,4 @@\n a b\n keep\n-ab\n+a b\n trail   \n');
        for (const q of ['whitespace=all', 'whitespace=', 'whitespace=IGNORE-ALL', 'whitespace=ignore-all&whitespace=ignore-eol', 'renames=no']) {
            const res = await get(`/read/patchsets/change-1.ps-1/diff?${q}`);
            expect(res.status, q).to.equal(400);
            expect(Object.keys(res.json), q).to.deep.equal(['error']);
            expect((await get(`/read/changes/change-1/diff?${q}&format=unified`)).status, q).to.equal(400);
        }
    });
    it('renames and copies: exact identity, then similarity; JSON old_path/similarity, totals, and ?renames=false', async () => {
        const d = await diff();
        const moved = file(d, 'src/new/moved.ts');
        expect(moved).to.deep.include({ change: 'renamed', old_path: 'src/old/moved.ts', additions: 1, deletions: 1 });
        expect(moved.similarity).to.be.within(90, 99);
        expect(moved.hunks).to.have.length(1);
        expect(moved.hunks[0].lines.filter((l) => l[0] !== ' ')).to.have.length(2);
        expect(file(d, 'exact-new.txt')).to.deep.include({ change: 'renamed', old_path: 'exact-old.txt', similarity: 100, hunks: [], additions: 0, deletions: 0 });
        expect(file(d, 'copy-dst.txt')).to.deep.include({ change: 'copied', old_path: 'copy-src.txt', additions: 1, deletions: 1 });
        expect(file(d, 'copy-src.txt')).to.deep.include({ change: 'modified', similarity: null });
        expect(file(d, 'gone.txt')).to.deep.include({ change: 'deleted', similarity: null });
        // The renamed sources are not listed again; files are in path order of their new paths.
        const paths = d.files.map((f) => f.path);
        expect(paths).to.not.include('src/old/moved.ts');
        expect(paths).to.not.include('exact-old.txt');
        expect(paths).to.deep.equal([...paths].sort());
        expect(d.stats).to.include({ renames: 2, copies: 1, rename_limit: null });
        expect(d.renames).to.equal(true);
        const off = await diff('?renames=false');
        expect(off.renames).to.equal(false);
        expect(file(off, 'src/new/moved.ts')).to.deep.include({ change: 'added', old_path: null, similarity: null });
        expect(file(off, 'src/old/moved.ts')).to.deep.include({ change: 'deleted' });
        expect(off.stats).to.include({ renames: 0, copies: 0 });
    });
    it('renames: the same pairs as git diff -M -C finds on the same trees', async function () {
        if (!hasGit)
            this.skip();
        const work = path.join(tempDir(), 'gitwork');
        await writeTree(work, BASE);
        git(work, ['init', '-q']);
        git(work, ['add', '-A']);
        git(work, ['-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-qm', 'base']);
        for (const e of await fsp.readdir(work))
            if (e !== '.git')
                await fsp.rm(path.join(work, e), { recursive: true });
        for (const [p, v] of Object.entries(REVISION)) {
            await fsp.mkdir(path.dirname(path.join(work, p)), { recursive: true });
            await fsp.writeFile(path.join(work, p), v);
        }
        git(work, ['add', '-A']);
        const theirs = git(work, ['diff', '--cached', '-M', '-C', '--name-status']).trim().split('\n')
            .filter((l) => /^[RC]/.test(l)).map((l) => { const [k, from, to] = l.split('\t'); return `${k[0]} ${from} ${to}`; }).sort();
        const d = await diff();
        const ours = d.files.filter((f) => f.change === 'renamed' || f.change === 'copied').map((f) => `${f.change === 'renamed' ? 'R' : 'C'} ${f.old_path} ${f.path}`).sort();
        expect(ours).to.deep.equal(theirs);
    });
    it('renames: the unified form has similarity index and rename from/to, and git apply turns the base into the revision', async function () {
        if (!hasGit)
            this.skip();
        const text = (await get('/read/patchsets/change-1.ps-1/diff?format=unified')).text;
        expect(text).to.include('diff --git a/src/old/moved.ts b/src/new/moved.ts\nsimilarity index ');
        expect(text).to.match(/similarity index 9\d%\nrename from src\/old\/moved.ts\nrename to src\/new\/moved.ts\n--- a\/src\/old\/moved.ts\n\+\+\+ b\/src\/new\/moved.ts\n@@ -78,7 \+78,7 @@\n/);
        expect(text).to.include('diff --git a/exact-old.txt b/exact-new.txt\nsimilarity index 100%\nrename from exact-old.txt\nrename to exact-new.txt\n');
        expect(text).to.match(/diff --git a\/copy-src.txt b\/copy-dst.txt\nsimilarity index \d+%\ncopy from copy-src.txt\ncopy to copy-dst.txt\n/);
        const work = path.join(tempDir(), 'apply');
        await pull({ server: s.url, repo, snapshot: base, out: work, progress: false });
        const patch = path.join(tempDir(), 'p.diff');
        await fsp.writeFile(patch, text);
        execFileSync('git', ['apply', '--check', patch], { cwd: work });
        execFileSync('git', ['apply', patch], { cwd: work });
        const expected = path.join(tempDir(), 'expected');
        await pull({ server: s.url, repo, snapshot: rev, out: expected, progress: false });
        const listing = async (root) => {
            const out = {};
            const walk = async (d) => {
                for (const e of await fsp.readdir(d, { withFileTypes: true })) {
                    const full = path.join(d, e.name);
                    if (e.isDirectory())
                        await walk(full);
                    else
                        out[path.relative(root, full)] = await fsp.readFile(full, 'utf8');
                }
            };
            await walk(root);
            return out;
        };
        const got = await listing(work);
        expect(got).to.deep.equal(await listing(expected));
        expect(got).to.not.have.property('src/old/moved.ts');
    });
});
describe('rename detection: bounds and measure', () => {
    const entry = (id) => ({ name: id, kind: 'file', id });
    it('past MAX_RENAME_PAIRS candidate pairs the inexact pass is skipped (exact renames still found) and the limit is said', async () => {
        const n = Math.floor(Math.sqrt(MAX_RENAME_PAIRS)) + 1;
        const changed = [
            ...Array.from({ length: n }, (_, i) => ({ path: `old/${i}`, old: entry(`o${i}`), new: null })),
            ...Array.from({ length: n }, (_, i) => ({ path: `new/${i}`, old: null, new: entry(i === 0 ? 'o0' : `n${i}`) })),
        ];
        let reads = 0;
        const r = await detectRenames({ blobSize: () => 100, readBlob: async () => { reads++; return Buffer.alloc(100); } }, changed);
        expect(r.limit).to.equal('pairs');
        expect(reads).to.equal(0);
        expect([...r.matches.entries()].map(([p, m]) => [p, m.from, m.kind, m.similarity])).to.deep.equal([['new/0', 'old/0', 'renamed', 100]]);
    });
    it('similarity is the share of the larger side found in both (git\'s measure)', () => {
        const a = signature(Buffer.from('one\ntwo\nthree\nfour\n'));
        expect(similarity(a, a)).to.equal(100);
        expect(similarity(a, signature(Buffer.from('one\ntwo\n')))).to.equal(42); // 8 of 19 bytes
        expect(similarity(a, signature(Buffer.from('x\n')))).to.equal(0);
    });
});
// Minimal image headers: what image-size reads (the rest of an image is not needed to size it).
const png = (w, h) => { const b = Buffer.alloc(33); Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0); b.writeUInt32BE(13, 8); b.write('IHDR', 12, 'latin1'); b.writeUInt32BE(w, 16); b.writeUInt32BE(h, 20); b[24] = 8; b[25] = 6; return b; };
const gif = (w, h) => { const b = Buffer.alloc(13); b.write('GIF89a', 0, 'latin1'); b.writeUInt16LE(w, 6); b.writeUInt16LE(h, 8); return b; };
const jpeg = (w, h) => Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0\x01\x01\0\0\x01\0\x01\0\0', 'latin1'), Buffer.from([0xff, 0xc0, 0x00, 0x11, 0x08, h >> 8, h & 255, w >> 8, w & 255, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]), Buffer.from([0xff, 0xd9])]);
const webp = (w, h) => { const b = Buffer.alloc(30); b.write('RIFF', 0, 'latin1'); b.writeUInt32LE(22, 4); b.write('WEBP', 8, 'latin1'); b.write('VP8X', 12, 'latin1'); b.writeUInt32LE(10, 16); b.writeUIntLE(w - 1, 24, 3); b.writeUIntLE(h - 1, 27, 3); return b; };
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>\n';
describe('the file content route and images in the diff', function () {
    this.timeout(120_000);
    let s;
    let repo;
    let base;
    let rev;
    const TEXT = lines(25_000, (i) => `line ${i + 1}`);
    const raw = (rawPath) => new Promise((resolve, reject) => {
        // node:http, not fetch: fetch would resolve the dot segments before sending them.
        const u = new URL(s.url);
        const req = http.request({ host: u.hostname, port: u.port, path: R(repo, `/read/snapshots/${rev}/files/${rawPath}`), method: 'GET' }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (c) => { body += c; });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
    });
    const F = (snap, p) => R(repo, `/read/snapshots/${snap}/files/${p}`);
    before(async () => {
        s = await startTestServer();
        repo = await register(s.url, 'files');
        const dir = path.join(tempDir(), 'tree');
        await writeTree(dir, { 'img/logo.png': png(640, 480), 'img/old.gif': gif(16, 16), 'img/icon.svg': SVG, 'notes.txt': 'a\n', 'img/moved.png': png(48, 32) });
        base = (await push({ server: s.url, repo, line: 'main', dir, moveLine: true, progress: false })).snapshot_id;
        await writeTree(dir, {
            'img/logo.png': png(800, 600), 'img/photo.jpg': jpeg(1024, 768), 'img/anim.webp': webp(320, 200), 'img/icon.svg': SVG.replace('10', '12'),
            'notes.txt': 'a\nb\n', 'text.txt': TEXT, 'big.txt': 'x'.repeat(1100 * 1024), 'bin.dat': Buffer.from([0, 1, 2, 0xff]), 'latin1.txt': Buffer.from('caf\xe9\n', 'latin1'),
            'dir/inner.txt': 'inner\n', 'escape': { link: '../../../etc/passwd' }, 'named.png': 'not really a png\n', 'img/renamed.png': png(48, 32),
        });
        rev = (await push({ server: s.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
        const t = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } }))).task;
        await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: t.task_id, title: 'C', base_line: 'main' } }));
        await ok(api(s.url, 'POST', R(repo, '/changes/change-1/patchsets'), { json: { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' } }));
    });
    after(() => s.stop());
    it('images in the diff: old_image/new_image with media type, bytes and dimensions; SVG without dimensions; null for other files', async () => {
        const d = await ok(api(s.url, 'GET', R(repo, '/read/patchsets/change-1.ps-1/diff')));
        const by = Object.fromEntries(d.files.map((f) => [f.path, f]));
        expect(by['img/logo.png']).to.deep.include({ binary: true, old_image: { media_type: 'image/png', bytes: 33, width: 640, height: 480 }, new_image: { media_type: 'image/png', bytes: 33, width: 800, height: 600 } });
        expect(by['img/photo.jpg'].old_image).to.equal(null);
        expect(by['img/photo.jpg'].new_image).to.deep.include({ media_type: 'image/jpeg', width: 1024, height: 768 });
        expect(by['img/anim.webp'].new_image).to.deep.include({ media_type: 'image/webp', width: 320, height: 200 });
        expect(by['img/old.gif']).to.deep.include({ change: 'deleted', old_image: { media_type: 'image/gif', bytes: 13, width: 16, height: 16 }, new_image: null });
        expect(by['img/icon.svg'].new_image).to.deep.equal({ media_type: 'image/svg+xml', bytes: Buffer.byteLength(SVG.replace('10', '12')), width: null, height: null });
        expect(by['img/icon.svg'].hunks).to.have.length(1); // SVG is text: its diff is shown too
        expect(by['named.png'].new_image).to.equal(null); // named .png, but not PNG bytes
        expect(by['notes.txt']).to.include({ old_image: null, new_image: null });
        // An exact rename: the diff reads no content for its lines, but the image facts still come from its bytes.
        expect(by['img/renamed.png']).to.deep.include({ change: 'renamed', old_path: 'img/moved.png', similarity: 100, old_image: { media_type: 'image/png', bytes: 33, width: 48, height: 32 } });
        expect(by['img/renamed.png'].new_image).to.deep.equal(by['img/renamed.png'].old_image);
    });
    it('raw bytes with their media type from the content, nosniff and a sandboxing CSP; a symlink is its target text, never followed', async () => {
        const cases = [
            ['img/logo.png', 'image/png', png(800, 600)], ['img/photo.jpg', 'image/jpeg', jpeg(1024, 768)], ['img/anim.webp', 'image/webp', webp(320, 200)],
            ['img/icon.svg', 'image/svg+xml', Buffer.from(SVG.replace('10', '12'))], ['notes.txt', 'text/plain; charset=utf-8', Buffer.from('a\nb\n')],
            ['bin.dat', 'application/octet-stream', Buffer.from([0, 1, 2, 0xff])], ['named.png', 'text/plain; charset=utf-8', Buffer.from('not really a png\n')],
            ['escape', 'text/plain; charset=utf-8', Buffer.from('../../../etc/passwd')], ['dir%2Finner.txt', 'text/plain; charset=utf-8', Buffer.from('inner\n')],
        ];
        for (const [p, type, bytes] of cases) {
            const res = await download(s.url, F(rev, p));
            expect(res.status, p).to.equal(200);
            expect(res.headers.get('content-type'), p).to.equal(type);
            expect(res.headers.get('x-content-type-options'), p).to.equal('nosniff');
            expect(res.headers.get('content-security-policy'), p).to.equal("default-src 'none'; style-src 'unsafe-inline'; sandbox");
            expect(res.bytes.equals(bytes), p).to.equal(true);
        }
        expect((await download(s.url, F(rev, 'escape'))).headers.get('x-cairn-entry-kind')).to.equal('symlink');
        expect((await download(s.url, F(base, 'img/logo.png'))).bytes.equals(png(640, 480))).to.equal(true); // each snapshot its own
    });
    it('?lines=a-b: those lines as JSON, END clamped, at most 10,000 per read; refusals for bad ranges, binary text and files over 1 MiB', async () => {
        const r = await ok(api(s.url, 'GET', `${F(rev, 'text.txt')}?lines=9998-10002`));
        expect(r).to.deep.equal({ path: 'text.txt', snapshot_id: rev, kind: 'file', start: 9998, end: 10002, total_lines: 25_000, lines: ['line 9998', 'line 9999', 'line 10000', 'line 10001', 'line 10002'] });
        expect((await ok(api(s.url, 'GET', `${F(rev, 'text.txt')}?lines=24999-30000`))).lines).to.deep.equal(['line 24999', 'line 25000']);
        expect(await ok(api(s.url, 'GET', `${F(rev, 'notes.txt')}?lines=5-9`))).to.deep.include({ start: 5, end: 2, total_lines: 2, lines: [] });
        expect((await ok(api(s.url, 'GET', `${F(rev, 'text.txt')}?lines=1-10000`))).lines).to.have.length(10_000);
        for (const q of ['0-5', '5-1', '1-10001', '1-999999999', 'a-b', '1', '-5', '1-2&lines=3-4', '99999999999-99999999999']) {
            const res = await api(s.url, 'GET', `${F(rev, 'text.txt')}?lines=${q}`);
            expect(res.status, q).to.equal(400);
            expect(Object.keys(res.json), q).to.deep.equal(['error']);
        }
        expect((await api(s.url, 'GET', `${F(rev, 'bin.dat')}?lines=1-2`)).status).to.equal(400);
        expect((await api(s.url, 'GET', `${F(rev, 'latin1.txt')}?lines=1-2`)).status).to.equal(400);
        const big = await api(s.url, 'GET', `${F(rev, 'big.txt')}?lines=1-2`);
        expect(big.status).to.equal(413);
        expect(big.json.error).to.match(/over the 1048576 bytes/);
        expect((await download(s.url, F(rev, 'big.txt'))).bytes.length).to.equal(1100 * 1024); // the raw read serves it
    });
    it('hostile paths: dot segments (plain and percent-encoded), encoded slashes, NUL, directories, unknown snapshots and paths', async () => {
        for (const p of ['..', '../notes.txt', 'dir/../notes.txt', '%2e%2e/notes.txt', '%2E%2E%2Fnotes.txt', 'dir%2F..%2Fnotes.txt', './notes.txt', 'dir//inner.txt', 'notes.txt%00', '%00', 'dir', 'dir/', 'img', 'dir%2F']) {
            const res = await raw(p);
            expect(res.status, p).to.equal(400);
            expect(Object.keys(JSON.parse(res.body)), p).to.deep.equal(['error']);
        }
        for (const p of ['nope.txt', 'dir/nope.txt', 'notes.txt/x', 'escape/passwd', 'NOTES.TXT']) {
            const res = await raw(p);
            expect(res.status, p).to.equal(404);
            expect(Object.keys(JSON.parse(res.body)), p).to.deep.equal(['error']);
        }
        expect((await api(s.url, 'GET', F('f'.repeat(64), 'notes.txt'))).status).to.equal(404);
        expect((await api(s.url, 'GET', F('not-a-snapshot', 'notes.txt'))).status).to.equal(400);
    });
});
//# sourceMappingURL=diff-fidelity.test.js.map