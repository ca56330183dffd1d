// Patchset diffs and land readiness over real HTTP (docs/api.md "Diffs", "Land readiness"): the
// JSON form, the unified form checked and applied by git itself, the inter-patchset diff, path
// narrowing, the bounds (a 50 MB file, 10,000 changed files, streamed), bad input, and the
// readiness answer agreeing with what a land then does.
import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { pull, push } from '../lib/client/transfer.js';
import { createHash } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import type { TreeEntry } from '../lib/domain/content.js';
import { diffFiles, emptyTotals, gitPath, unifiedFile, type DiffTotals, type FileDiff } from '../lib/domain/workflow/content-diff.js';
import { watched } from '../lib/http/handlers/diffs.js';
import { api, ok, register, startTestServer, tempDir, until, type TestServer } from './helpers.js';
import { bigEdit, lockfileEdit, numstat } from './diff-inputs.js';
import type { Authority } from '../lib/authority/authority.js';
import type { LandGates } from '../lib/authority/workflow/gates.js';
import { LandDesk, READINESS_MERGE_BUDGET } from '../lib/authority/workflow/lands.js';

type Json = Record<string, any>;
type Files = Record<string, string | Buffer | { exec: string } | { link: string }>;
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;

async function writeTree(dir: string, files: Files): Promise<void> {
  await fsp.rm(dir, { recursive: true, force: true });
  await fsp.mkdir(dir, { recursive: true });
  for (const [p, v] of Object.entries(files)) {
    const full = path.join(dir, p);
    await fsp.mkdir(path.dirname(full), { recursive: true });
    if (typeof v === 'string' || Buffer.isBuffer(v)) await fsp.writeFile(full, v);
    else if ('link' in v) await fsp.symlink(v.link, full);
    else await fsp.writeFile(full, v.exec, { mode: 0o755 });
  }
}

const BASE: Files = {
  'README.md': 'hello\nworld\n',
  'src/app.ts': Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join('\n') + '\n',
  'src/gone.txt': 'to be deleted\n',
  'tool.sh': 'echo hi\n',
  'link': { link: 'README.md' },
  'no-newline.txt': 'a\nb',
  'dir with space/f.txt': 'x\n',
  'ünï.txt': 'u\n',
};
const REVISION: Files = {
  'README.md': 'hello\nthere\nworld\n',
  'src/app.ts': Array.from({ length: 40 }, (_, i) => (i === 4 ? 'line five' : i === 30 ? 'line thirty-one' : `line ${i + 1}`)).join('\n') + '\n',
  'src/new.ts': 'export const x = 1;\n',
  'tool.sh': { exec: 'echo hi\n' },
  'link': { link: 'src/app.ts' },
  'no-newline.txt': 'a\nc',
  'dir with space/f.txt': 'y\n',
  'ünï.txt': 'v\n',
  'empty.txt': '',
};

describe('diffs: a patchset as JSON and as a patch git applies', function () {
  this.timeout(120_000);
  let s: TestServer;
  let repo: number;
  let base: string;
  let rev: string;
  let rev2: string;
  const dir = path.join(tempDir(), 'tree');
  const snap = async (files: Files, parent?: string) => {
    await writeTree(dir, files);
    return (await push({ server: s.url, repo, line: 'main', dir, moveLine: parent === undefined, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
  };
  const get = (p: string, headers: Record<string, string> = {}) => api(s.url, 'GET', R(repo, p), { headers });
  before(async () => {
    s = await startTestServer();
    repo = await register(s.url, 'diffs');
    base = await snap(BASE);
    rev = await snap(REVISION, base);
    rev2 = await snap({ ...REVISION, 'src/new.ts': 'export const x = 2;\n' }, base);
    const t = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } }))).task;
    await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: t.task_id, title: 'C', base_line: 'main' } }));
    await ok(api(s.url, 'POST', R(repo, '/changes/change-1/patchsets'), { json: { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' } }));
    await ok(api(s.url, 'POST', R(repo, '/changes/change-1/patchsets'), { json: { base_snapshot_id: base, revision_snapshot_id: rev2, summary: 's2', author_mode: 'human_only' } }));
  });
  after(() => s.stop());

  it('JSON: every changed file in path order with its change, modes, hunks and totals', async () => {
    const d = await ok(get('/read/patchsets/change-1.ps-1/diff'));
    expect(d).to.include({ patchset_id: 'change-1.ps-1', change_id: 'change-1', base_snapshot_id: base, revision_snapshot_id: rev, against: null, context: 3 });
    const by = Object.fromEntries(d.files.map((f: Json) => [f.path, f]));
    expect(d.files.map((f: Json) => f.path)).to.deep.equal(['README.md', 'dir with space/f.txt', 'empty.txt', 'link', 'no-newline.txt', 'src/app.ts', 'src/gone.txt', 'src/new.ts', 'tool.sh', 'ünï.txt']);
    expect(by['README.md']).to.deep.include({ change: 'modified', old_mode: '100644', new_mode: '100644', binary: false, truncated: false, additions: 1, deletions: 0 });
    expect(by['README.md'].hunks).to.deep.equal([{ old_start: 1, old_lines: 2, new_start: 1, new_lines: 3, lines: [' hello', '+there', ' world'], spans: [null, null, null], moved_to: null, moved_from: null }]);
    expect(by['src/app.ts'].hunks).to.have.length(2); // two edits 26 lines apart: two hunks with 3 lines of context
    expect(by['src/app.ts'].hunks[0]).to.deep.include({ old_start: 2, old_lines: 7, new_start: 2, new_lines: 7 });
    expect(by['src/gone.txt']).to.deep.include({ change: 'deleted', old_mode: '100644', new_mode: null, deletions: 1 });
    expect(by['src/gone.txt'].hunks[0]).to.deep.include({ old_start: 1, old_lines: 1, new_start: 0, new_lines: 0 });
    expect(by['src/new.ts']).to.deep.include({ change: 'added', old_mode: null, new_mode: '100644', additions: 1 });
    expect(by['tool.sh']).to.deep.include({ change: 'modified', old_mode: '100644', new_mode: '100755', hunks: [] });
    expect(by.link).to.deep.include({ old_mode: '120000', new_mode: '120000' });
    expect(by['no-newline.txt'].hunks[0].lines).to.deep.equal([' a', '-b', '\\ No newline at end of file', '+c', '\\ No newline at end of file']);
    expect(by['empty.txt']).to.deep.include({ change: 'added', hunks: [] });
    expect(d.stats).to.deep.include({ files_changed: 10, binary_files: 0, truncated_files: 0 });
    expect(d.stats.additions).to.equal(d.files.reduce((n: number, f: Json) => n + f.additions, 0));
    // -U0 and path narrowing (a file, and a directory with everything under it)
    const narrow = await ok(get('/read/patchsets/change-1.ps-1/diff?context=0&path=src&path=README.md'));
    expect(narrow.files.map((f: Json) => f.path)).to.deep.equal(['README.md', 'src/app.ts', 'src/gone.txt', 'src/new.ts']);
    expect(narrow.files[0].hunks[0].lines).to.deep.equal(['+there']);
  });

  it('moved lines: a block removed in one place and added in another of the same file is marked moved on both sides (moved_to / moved_from line numbers), not an unrelated delete and add', async () => {
    const fn = (name: string) => [`export function ${name}(input: string): string {`, `  const ${name}Trimmed = input.trim();`, `  return ${name}Trimmed.toUpperCase() + '${name}';`, `} // ${name}`];
    const filler = (n: number) => Array.from({ length: n }, (_, i) => `const filler${i} = ${i};`);
    const before = [...fn('alpha'), ...filler(10), ...fn('beta'), ''].join('\n');
    const after = [...fn('beta'), ...filler(10), ...fn('alpha'), ''].join('\n');
    const mb = await snap({ 'moved.ts': before }, base);
    const mr = await snap({ 'moved.ts': after }, mb);
    const t = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'Moves', intent: 'i' } }))).task;
    const c = (await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: t.task_id, title: 'Swap two functions', base_line: 'main' } }))).change;
    const ps = (await ok(api(s.url, 'POST', R(repo, `/changes/${c.change_id}/patchsets`), { json: { base_snapshot_id: mb, revision_snapshot_id: mr, summary: 'swap', author_mode: 'human_only' } }))).patchset.patchset_id;
    const d = await ok(get(`/read/patchsets/${ps}/diff?context=0`));
    const f = d.files.find((x: Json) => x.path === 'moved.ts');
    // every changed line is part of a moved block: alpha went from lines 1-4 to 15-18, beta from 15-18 to 1-4
    const marks: string[] = [];
    for (const h of f.hunks) {
      let o = h.old_start;
      let n = h.new_start;
      h.lines.forEach((l: string, i: number) => {
        if (l[0] === '-') marks.push(`-${o++}>${h.moved_to?.[i]}`);
        else if (l[0] === '+') marks.push(`+${n++}<${h.moved_from?.[i]}`);
      });
    }
    expect(marks.sort()).to.deep.equal(['+1<15', '+2<16', '+3<17', '+4<18', '+15<1', '+16<2', '+17<3', '+18<4', '-1>15', '-2>16', '-3>17', '-4>18', '-15>1', '-16>2', '-17>3', '-18>4'].sort());
    // the unified text is git's, unmarked
    const text = (await get(`/read/patchsets/${ps}/diff?format=unified&context=0`)).text;
    expect(text).to.include('-export function alpha').and.include('+export function alpha');
    expect(text).to.not.include('moved_');
  });

  it('moved lines across files: a block removed from one file and added to another is listed in moved_blocks (both paths and first lines), after the files; the hunks keep their within-file marks', async () => {
    const helper = ['export function formatPrice(cents: number): string {', '  const euros = Math.floor(cents / 100);', '  return `${euros}.${String(cents % 100).padStart(2, "0")} EUR`;', '}'];
    const pad = (name: string, n: number) => Array.from({ length: n }, (_, i) => `export const ${name}${i} = ${i};`);
    const text = (ls: string[]) => `${ls.join('\n')}\n`;
    const mb = await snap({ 'src/cart.ts': text([...pad('cart', 5), ...helper, ...pad('tail', 5)]), 'src/util/money.ts': text(pad('money', 6)) }, base);
    const mr = await snap({ 'src/cart.ts': text([...pad('cart', 5), ...pad('tail', 5)]), 'src/util/money.ts': text([...pad('money', 2), ...helper, ...pad('money', 6).slice(2)]) }, mb);
    const t = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'Move across', intent: 'i' } }))).task;
    const c = (await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: t.task_id, title: 'Move the price helper', base_line: 'main' } }))).change;
    const ps = (await ok(api(s.url, 'POST', R(repo, `/changes/${c.change_id}/patchsets`), { json: { base_snapshot_id: mb, revision_snapshot_id: mr, summary: 'move', author_mode: 'human_only' } }))).patchset.patchset_id;
    const d = await ok(get(`/read/patchsets/${ps}/diff`));
    expect(d.moved_blocks).to.deep.equal([{ from: { path: 'src/cart.ts', line: 6 }, to: { path: 'src/util/money.ts', line: 3 }, lines: 4 }]);
    for (const f of d.files) for (const h of f.hunks) expect(h.moved_to ?? null, f.path).to.equal(null);
    // a diff with no such block lists none; the unified text carries none
    expect((await ok(get('/read/patchsets/change-1.ps-1/diff'))).moved_blocks).to.deep.equal([]);
    expect((await get(`/read/patchsets/${ps}/diff?format=unified`)).text).to.not.include('moved');
    // narrowed to one of the two files, the other side is not in the diff: no block
    expect((await ok(get(`/read/patchsets/${ps}/diff?path=src/cart.ts`))).moved_blocks).to.deep.equal([]);
  });

  it('unified: git apply --check accepts it against the base tree, and applying it yields the revision', async () => {
    const res = await get('/read/patchsets/change-1.ps-1/diff', { accept: 'text/x-diff' });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/x-diff/);
    expect(res.text).to.match(/^diff --git a\/README.md b\/README.md\n/);
    expect(res.text).to.include('old mode 100644\nnew mode 100755\n');
    expect(res.text).to.include('new file mode 100644\n');
    expect(res.text).to.include('deleted file mode 100644\n');
    expect((await get('/read/patchsets/change-1.ps-1/diff?format=unified')).text).to.equal(res.text);
    const work = path.join(tempDir(), 'apply');
    await pull({ server: s.url, repo, snapshot: base, out: work, progress: false });
    const patch = path.join(tempDir(), 'p.diff');
    await fsp.writeFile(patch, res.text);
    execFileSync('git', ['apply', '--check', patch], { cwd: work });
    execFileSync('git', ['apply', patch], { cwd: work });
    const expected = path.join(tempDir(), 'expected');
    await pull({ server: s.url, repo, snapshot: rev, out: expected, progress: false });
    const listing = async (root: string) => {
      const out: Record<string, string> = {};
      const walk = async (d: string) => {
        for (const e of await fsp.readdir(d, { withFileTypes: true })) {
          const full = path.join(d, e.name);
          const rel = path.relative(root, full);
          if (e.isDirectory()) await walk(full);
          else if (e.isSymbolicLink()) out[rel] = `link:${await fsp.readlink(full)}`;
          else out[rel] = `${(await fsp.stat(full)).mode & 0o111 ? 'x' : '-'}:${await fsp.readFile(full, 'utf8')}`;
        }
      };
      await walk(root);
      return out;
    };
    expect(await listing(work)).to.deep.equal(await listing(expected));
  });

  it('inter-patchset: ?against= compares two revisions of one change; the change shortcut diffs the selected patchset', async () => {
    const d = await ok(get('/read/patchsets/change-1.ps-2/diff?against=change-1.ps-1'));
    expect(d).to.include({ against: 'change-1.ps-1', base_snapshot_id: rev, revision_snapshot_id: rev2 });
    expect(d.files.map((f: Json) => f.path)).to.deep.equal(['src/new.ts']);
    expect(d.files[0].hunks[0].lines).to.deep.equal(['-export const x = 1;', '+export const x = 2;']);
    const viaChange = await ok(get('/read/changes/change-1/diff'));
    expect(viaChange.patchset_id).to.equal('change-1.ps-1'); // the first patchset stays selected
    expect(viaChange.files).to.deep.equal((await ok(get('/read/patchsets/change-1.ps-1/diff'))).files);
  });

  it('revalidation: a whole answer carries an ETag; If-None-Match naming it answers 304 without a body; another query, an unknown tag or a tag of another patchset gets the diff', async () => {
    const first = await get('/read/patchsets/change-1.ps-1/diff');
    expect(first.status).to.equal(200);
    const tag = first.headers.get('etag')!;
    expect(tag).to.match(/^"[0-9a-f]{16}-[0-9a-f]{16}"$/);
    expect(first.headers.get('cache-control')).to.equal('private, no-cache');
    const again = await get('/read/patchsets/change-1.ps-1/diff', { 'if-none-match': tag });
    expect(again.status).to.equal(304);
    expect(again.text).to.equal('');
    expect(again.headers.get('etag')).to.equal(tag);
    // weak form and a list of tags, as browsers and proxies send them
    expect((await get('/read/patchsets/change-1.ps-1/diff', { 'if-none-match': `"other", W/${tag}` })).status).to.equal(304);
    // the same tag for another request of the same patchset (context, whitespace, format, against) or another patchset: the diff itself
    for (const q of ['?context=0', '?whitespace=ignore-all', '?format=unified', '?renames=false']) {
      const res = await get(`/read/patchsets/change-1.ps-1/diff${q}`, { 'if-none-match': tag });
      expect(res.status, q).to.equal(200);
      expect(res.text, q).to.not.equal('');
    }
    expect((await get('/read/patchsets/change-1.ps-2/diff', { 'if-none-match': tag })).status).to.equal(200);
    expect((await get('/read/patchsets/change-1.ps-1/diff', { 'if-none-match': '"0123456789abcdef-0123456789abcdef"' })).status).to.equal(200);
    // the change shortcut is its selected patchset's diff: the same rule
    const viaChange = await get('/read/changes/change-1/diff');
    expect((await get('/read/changes/change-1/diff', { 'if-none-match': viaChange.headers.get('etag')! })).status).to.equal(304);
    // bad input still says so, and an unknown patchset is 404, whatever the tag
    expect((await get('/read/patchsets/change-1.ps-1/diff?context=x', { 'if-none-match': tag })).status).to.equal(400);
    expect((await get('/read/patchsets/change-1.ps-9/diff', { 'if-none-match': tag })).status).to.equal(404);
  });

  it('revalidation: an answer a budget cut (time or bytes) is never confirmed; one cut by a fixed rule (large_diff, file_size) is', async () => {
    const file = (path: string, reason: FileDiff['truncated_reason']): FileDiff => ({ path, old_path: path, change: 'modified', similarity: null, old_mode: '100644', new_mode: '100644', old_blob_id: 'a', new_blob_id: 'b', binary: false, truncated: reason !== null, truncated_reason: reason, note: null, additions: null, deletions: null, diff_lines: null, diff_bytes: null, hunks: [], old_image: null, new_image: null });
    const run = async (reasons: Array<FileDiff['truncated_reason']>, renameLimit: DiffTotals['rename_limit'] = null) => {
      async function* files() { for (const [i, r] of reasons.entries()) yield file(`f${i}`, r); }
      let cut: boolean | null = null;
      const seen: string[] = [];
      for await (const f of watched({ files: files(), totals: { ...emptyTotals(), rename_limit: renameLimit } }, (c) => { cut = c; })) seen.push(f.path);
      expect(seen).to.have.length(reasons.length);
      return cut;
    };
    expect(await run([null, null])).to.equal(false);
    expect(await run([null, 'large_diff', 'file_size'])).to.equal(false);
    expect(await run([null, 'time_budget', null])).to.equal(true);
    expect(await run(['byte_budget'])).to.equal(true);
    expect(await run([null], 'time_budget')).to.equal(true);
    expect(await run([null], 'pairs')).to.equal(false);
  });

  it('bad input: 400 for context, path, format and a patchset of another change; 404 for unknown ones; nothing else answered', async () => {
    for (const q of ['context=1001', 'context=-1', 'context=x', 'path=../x', 'path=/abs', 'path=a//b', 'format=xml', 'context=1&context=2']) {
      const res = await get(`/read/patchsets/change-1.ps-1/diff?${q}`);
      expect(res.status, q).to.equal(400);
      expect(Object.keys(res.json)).to.deep.equal(['error']);
    }
    const t = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T2', intent: 'i' } }))).task;
    await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: t.task_id, title: 'C2', base_line: 'main' } }));
    await ok(api(s.url, 'POST', R(repo, '/changes/change-2/patchsets'), { json: { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' } }));
    expect((await get('/read/patchsets/change-1.ps-1/diff?against=change-2.ps-1')).status).to.equal(400);
    expect((await get('/read/patchsets/change-1.ps-9/diff')).status).to.equal(404);
    expect((await get('/read/patchsets/change-1.ps-1/diff?against=change-1.ps-9')).status).to.equal(404);
    expect((await get('/read/changes/change-99/diff')).status).to.equal(404);
  });

  it('git-style quoting of unusual paths', () => {
    expect(gitPath('a/', 'plain name.txt')).to.equal('a/plain name.txt');
    expect(gitPath('a/', 'ünï.txt')).to.equal('"a/\\303\\274n\\303\\257.txt"');
    expect(gitPath('a/', 'tab\there')).to.equal('"a/tab\\there"');
    const f = { path: 'big file', old_path: 'big file', change: 'modified' as const, similarity: null, old_image: null, new_image: null, old_mode: '100644', new_mode: '100644', old_blob_id: 'a'.repeat(64), new_blob_id: 'b'.repeat(64), binary: false, truncated: true, truncated_reason: 'file_size' as const, note: 'too big', additions: null, deletions: null, diff_lines: null, diff_bytes: null, hunks: [] };
    expect(unifiedFile(f)).to.equal([
      '# cairn: big file: content left out (file_size): too big; git apply refuses this entry',
      'diff --git a/big file b/big file',
      `index ${'a'.repeat(12)}..${'b'.repeat(12)} 100644`,
      'Binary files a/big file and b/big file differ',
      '',
    ].join('\n'));
  });
});

// The unified form against git itself, over in-memory trees through the route's own functions.
type Spec = Record<string, Buffer | string | { link: string }>;
const isLink = (v: unknown): v is { link: string } => typeof v === 'object' && v !== null && !Buffer.isBuffer(v);
async function unifiedOf(oldSpec: Spec, newSpec: Spec): Promise<{ text: string; files: FileDiff[] }> {
  const blobs = new Map<string, Buffer>();
  const trees = new Map<string, TreeEntry[]>();
  const build = (spec: Spec) => {
    const entries = Object.entries(spec).map(([name, v]) => {
      const data = Buffer.from(isLink(v) ? v.link : v);
      const id = createHash('sha256').update(data).digest('hex');
      blobs.set(id, data);
      return { name, kind: (isLink(v) ? 'symlink' : 'file') as TreeEntry['kind'], id };
    }).sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
    const id = createHash('sha256').update(JSON.stringify(entries)).digest('hex');
    trees.set(id, entries);
    return id;
  };
  const o = build(oldSpec);
  const n = build(newSpec);
  const reader = { readTree: async (id: string) => trees.get(id)!, blobSize: (id: string) => blobs.get(id)!.length, readBlob: async (id: string) => blobs.get(id)! };
  const files: FileDiff[] = [];
  for await (const f of diffFiles(reader, o, n, { context: 3, paths: [], inlineCap: false }, emptyTotals())) files.push(f);
  return { text: files.map(unifiedFile).join(''), files };
}

function gitApplyCheck(oldSpec: Spec, patch: string, extra: string[] = []): string {
  const dir = path.join(tempDir(), 'apply');
  mkdirSync(dir, { recursive: true });
  for (const [p, v] of Object.entries(oldSpec)) {
    if (isLink(v)) symlinkSync(v.link, path.join(dir, p));
    else writeFileSync(path.join(dir, p), v);
  }
  const file = path.join(tempDir(), 'p.diff');
  writeFileSync(file, patch);
  try {
    execFileSync('git', ['apply', '--check', ...extra, file], { cwd: dir, stdio: 'pipe' });
    return 'ok';
  } catch (e) {
    return String((e as { stderr: Buffer }).stderr).trim();
  }
}

describe('diffs: the unified form as git reads it', () => {
  it('a symlink replaced by a file (and back) is a delete and an add, as git shows a type change; git apply takes both', async () => {
    for (const [oldSpec, newSpec] of [[{ x: { link: 'target' } }, { x: 'hello\n' }], [{ x: 'hello\n' }, { x: { link: 'target' } }]] as [Spec, Spec][]) {
      const { text, files } = await unifiedOf(oldSpec, newSpec);
      expect(files.map((f) => f.change)).to.deep.equal(['deleted', 'added']);
      expect(gitApplyCheck(oldSpec, text), text).to.equal('ok');
    }
  });

  it('binary entries are written as git diff writes them (index and "differ" lines): git refuses them as it refuses its own, and applies the text files around them', async () => {
    const oldSpec: Spec = { bin: Buffer.from([0, 1, 2]), 't.txt': 'a\n' };
    const { text } = await unifiedOf(oldSpec, { bin: Buffer.from([0, 1, 3]), 't.txt': 'b\n', 'z.bin': Buffer.from([0, 9]) });
    expect(text).to.include('Binary files a/bin and b/bin differ');
    expect(text).to.include('Binary files /dev/null and b/z.bin differ');
    expect(gitApplyCheck(oldSpec, text)).to.match(/cannot apply binary patch/);
    expect(gitApplyCheck(oldSpec, text, ['--exclude=bin', '--exclude=z.bin']), text).to.equal('ok');
  });

  it('a file left out of the diff (over 1 MiB) is an entry git apply refuses: the patch never applies as another tree; the other files apply without it', async () => {
    const big = 'x\n'.repeat(600 * 1024);
    const oldSpec: Spec = { 'big.txt': big, 'gone.txt': big, 't.txt': 'a\n' };
    const { text, files } = await unifiedOf(oldSpec, { 'big.txt': `${big}more\n`, 'new.txt': big, 't.txt': 'b\n' });
    expect(files.map((f) => [f.path, f.change, f.truncated, f.truncated_reason])).to.deep.equal([
      ['big.txt', 'modified', true, 'file_size'], ['gone.txt', 'deleted', true, 'file_size'], ['new.txt', 'added', true, 'file_size'], ['t.txt', 'modified', false, null],
    ]);
    expect(text).to.match(/# cairn: big.txt: content left out \(file_size\): a side is 1228805 bytes, over the 1048576 whose hunks are shown/);
    expect(gitApplyCheck(oldSpec, text)).to.match(/cannot apply binary patch to 'big.txt' without full index line/);
    for (const p of ['big.txt', 'gone.txt', 'new.txt']) {
      const others = ['big.txt', 'gone.txt', 'new.txt'].filter((q) => q !== p).map((q) => `--exclude=${q}`);
      expect(gitApplyCheck(oldSpec, text, others), p).to.match(new RegExp(`cannot apply binary patch to '${p}'`));
    }
    expect(gitApplyCheck(oldSpec, text, ['--exclude=big.txt', '--exclude=gone.txt', '--exclude=new.txt']), text).to.equal('ok');
  });

  it('text that is not UTF-8 is shown as binary, never re-encoded', async () => {
    const { files } = await unifiedOf({ 'l.txt': Buffer.from('caf\xe9\nx\n', 'latin1') }, { 'l.txt': Buffer.from('caf\xe9\ny\n', 'latin1') });
    expect(files[0]).to.deep.include({ binary: true, note: 'not UTF-8 text', hunks: [] });
  });

  it('a large file with scattered edits diffs fully (no edit cap): 60,000 lines, one in a hundred changed, counted as git counts', async () => {
    const lines = Array.from({ length: 60_000 }, (_, i) => `line ${i}`);
    const changed = lines.map((l, i) => (i % 100 === 0 ? `${l} changed` : l));
    const before = `${lines.join('\n')}\n`;
    const after = `${changed.join('\n')}\n`;
    const { files, text } = await unifiedOf({ 'big.txt': before }, { 'big.txt': after });
    expect(files[0]).to.deep.include({ truncated: false, truncated_reason: null, additions: 600, deletions: 600 });
    expect([files[0].additions, files[0].deletions]).to.deep.equal(await numstat(before, after));
    expect(gitApplyCheck({ 'big.txt': before }, text)).to.equal('ok');
  });
});

describe('diffs: bounded work', function () {
  this.timeout(300_000);
  let s: TestServer;
  let repo: number;
  const dir = path.join(tempDir(), 'bounds');
  before(async () => {
    s = await startTestServer();
    repo = await register(s.url, 'diff-bounds');
  });
  after(() => s.stop());

  let lines = 0;
  async function patchset(baseFiles: Files, revFiles: Files): Promise<string> {
    const line = `l${++lines}`;
    await writeTree(dir, baseFiles);
    const base = (await push({ server: s.url, repo, line, dir, moveLine: true, progress: false })).snapshot_id;
    await writeTree(dir, revFiles);
    const revision = (await push({ server: s.url, repo, line, dir, moveLine: false, progress: false, parent: base })).snapshot_id;
    const t = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } }))).task;
    const c = (await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: t.task_id, title: 'C', base_line: line } }))).change;
    return (await ok(api(s.url, 'POST', R(repo, `/changes/${c.change_id}/patchsets`), { json: { base_snapshot_id: base, revision_snapshot_id: revision, summary: 's', author_mode: 'human_only' } }))).patchset.patchset_id;
  }

  it('a 50 MB file is listed without hunks and never read; a binary file is marked binary', async () => {
    const big = Buffer.alloc(50 * 1024 * 1024, 'a\n');
    const ps = await patchset({ 'big.txt': big, 'bin.dat': Buffer.from([1, 0, 2]) }, { 'big.txt': Buffer.concat([big, Buffer.from('more\n')]), 'bin.dat': Buffer.from([1, 0, 3]) });
    const heap = process.memoryUsage().heapUsed;
    const d = await ok(api(s.url, 'GET', R(repo, `/read/patchsets/${ps}/diff`)));
    expect(d.files[0]).to.deep.include({ path: 'big.txt', truncated: true, truncated_reason: 'file_size', additions: null, deletions: null, hunks: [] });
    expect(d.files[0].note).to.equal('a side is 52428805 bytes, over the 8388608 whose lines are counted; compare the two versions');
    expect(d.files[1]).to.deep.include({ path: 'bin.dat', binary: true, additions: null, deletions: null, hunks: [] });
    expect(d.stats).to.include({ uncounted_files: 1, additions: 0, deletions: 0 });
    expect(d.stats.bytes_read).to.equal(6); // only the two 3-byte binary blobs
    expect(process.memoryUsage().heapUsed - heap).to.be.lessThan(40 * 1024 * 1024);
    const unified = await api(s.url, 'GET', R(repo, `/read/patchsets/${ps}/diff?format=unified`));
    expect(unified.text).to.include('# cairn: big.txt: content left out (file_size)');
    expect(unified.text).to.include('Binary files a/big.txt and b/big.txt differ');
    expect(unified.text).to.include('Binary files a/bin.dat and b/bin.dat differ');
  });

  it('a file over 1 MiB: the JSON says truncated with its reason, and git apply refuses the unified text (exit 1, naming the file) instead of building another tree', async () => {
    const big = Buffer.alloc(1024 * 1024 + 10, 'b\n');
    const baseFiles: Files = { 'big.txt': big, 'small.txt': 'one\n' };
    const ps = await patchset(baseFiles, { 'big.txt': Buffer.concat([big, Buffer.from('end\n')]), 'small.txt': 'two\n' });
    const d = await ok(api(s.url, 'GET', R(repo, `/read/patchsets/${ps}/diff`)));
    // Over 1 MiB: no hunks, but counted (up to 8 MiB), and the totals hold its count.
    expect(d.files[0]).to.deep.include({ path: 'big.txt', truncated: true, truncated_reason: 'file_size', additions: 1, deletions: 0, hunks: [] });
    expect(d.files[0].note).to.equal('a side is 1048590 bytes, over the 1048576 whose hunks are shown; compare the two versions');
    expect(d.files[0].links.diff).to.equal(null);
    expect(d.files[1]).to.deep.include({ path: 'small.txt', truncated: false, truncated_reason: null, links: null });
    expect(d.stats).to.include({ truncated_files: 1, uncounted_files: 0, additions: 2, deletions: 1 });
    const text = (await api(s.url, 'GET', R(repo, `/read/patchsets/${ps}/diff`), { headers: { accept: 'text/x-diff' } })).text;
    const work = path.join(tempDir(), 'apply-big');
    await writeTree(work, baseFiles);
    const patchFile = path.join(tempDir(), 'big.diff');
    await fsp.writeFile(patchFile, text);
    const git = (args: string[]) => spawnSync('git', ['apply', ...args, patchFile], { cwd: work, encoding: 'utf8' });
    for (const args of [['--check'], []]) {
      const r = git(args);
      expect(r.status, `git apply ${args.join(' ')}: ${text}`).to.equal(1);
      expect(r.stderr).to.match(/cannot apply binary patch to 'big.txt' without full index line/);
    }
    expect(await fsp.readFile(path.join(work, 'small.txt'), 'utf8'), 'nothing applied').to.equal('one\n');
    expect(git(['--exclude=big.txt']).status).to.equal(0);
    expect(await fsp.readFile(path.join(work, 'small.txt'), 'utf8')).to.equal('two\n');
  });

  it('revalidation of a cut answer: a diff whose hunks passed the response\'s 16 MiB byte budget carries an ETag that is never confirmed (If-None-Match gets the diff again, not 304); narrowed to fit, it is', async () => {
    // 70 added files of 1,900 lines (about 240 KiB of hunks each: under the per-file inline caps), 16.4 MiB in all
    const rev: Files = {};
    for (let i = 0; i < 70; i++) rev[`gen/f${String(i).padStart(2, '0')}.txt`] = Array.from({ length: 1900 }, (_, k) => `${String(i).padStart(2, '0')}:${String(k).padStart(4, '0')} ${'x'.repeat(118)}`).join('\n') + '\n';
    const ps = await patchset({ 'keep.txt': 'k\n' }, { 'keep.txt': 'k\n', ...rev });
    const first = await api(s.url, 'GET', R(repo, `/read/patchsets/${ps}/diff`));
    expect(first.status).to.equal(200);
    expect(first.json.files.some((f: Json) => f.truncated_reason === 'byte_budget')).to.equal(true);
    const tag = first.headers.get('etag')!;
    expect(tag).to.be.a('string');
    const again = await api(s.url, 'GET', R(repo, `/read/patchsets/${ps}/diff`), { headers: { 'if-none-match': tag } });
    expect(again.status).to.equal(200);
    expect(again.json.files.length).to.equal(first.json.files.length);
    // one file alone fits the budget: its answer is whole, so its tag confirms
    const one = await api(s.url, 'GET', R(repo, `/read/patchsets/${ps}/diff?path=gen/f69.txt`));
    expect(one.json.files[0].truncated).to.equal(false);
    expect((await api(s.url, 'GET', R(repo, `/read/patchsets/${ps}/diff?path=gen/f69.txt`), { headers: { 'if-none-match': one.headers.get('etag')! } })).status).to.equal(304);
  });

  it('10,000 changed files stream out with bounded content reads; every file is listed', async () => {
    const n = 10_000;
    const baseFiles: Files = {};
    const revFiles: Files = {};
    for (let i = 0; i < n; i++) {
      baseFiles[`d${i % 100}/f${i}.txt`] = `file ${i}\n`.repeat(200);
      revFiles[`d${i % 100}/f${i}.txt`] = `file ${i}\n`.repeat(199) + 'changed\n';
    }
    const ps = await patchset(baseFiles, revFiles);
    const res = await api(s.url, 'GET', R(repo, `/read/patchsets/${ps}/diff`));
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-length')).to.equal(null); // streamed, not built whole
    const d = res.json;
    expect(d.files).to.have.length(n);
    expect(d.stats.files_changed).to.equal(n);
    expect(d.stats.bytes_read).to.be.at.most(64 * 1024 * 1024);
    const withHunks = d.files.filter((f: Json) => f.hunks.length > 0).length;
    expect(withHunks).to.be.greaterThan(0);
    expect(d.stats.truncated_files).to.equal(n - withHunks);
    // A file left out here can only be past the line-diff time (the 24 MB read fits the budget):
    // it is uncounted, says so, and links to itself alone; every other file is counted.
    const out = d.files.filter((x: Json) => x.truncated);
    for (const f of out) {
      expect(f).to.deep.include({ truncated_reason: 'time_budget', additions: null, deletions: null });
      expect(f.note).to.match(/ask for this file with \?path=/);
      expect(f.links.diff).to.equal(`${R(repo, `/read/patchsets/${ps}/diff`)}?path=${encodeURIComponent(f.path)}`);
    }
    expect(d.stats.uncounted_files).to.equal(out.length);
    expect(d.stats.additions).to.equal(n - out.length);
    expect(d.stats.deletions).to.equal(n - out.length);
    // a narrowed request reads only what it names
    const one = await ok(api(s.url, 'GET', R(repo, `/read/patchsets/${ps}/diff?path=d99/f9999.txt`)));
    expect(one.files.map((f: Json) => f.path)).to.deep.equal(['d99/f9999.txt']);
    expect(one.files[0].hunks[0].lines.at(-1)).to.equal('+changed');
  });
});

describe('diffs: a large file is counted as git counts it, and its hunks come on demand', function () {
  this.timeout(300_000);
  let s: TestServer;
  let repo: number;
  let ps: string;
  const dir = path.join(tempDir(), 'large');
  const [lockBefore, lockAfter] = lockfileEdit();
  const [bigBefore, bigAfter] = bigEdit(42);
  const baseFiles: Files = { 'package-lock.json': lockBefore, 'src/big.ts': bigBefore, 'small.txt': 'one\n' };
  const revFiles: Files = { 'package-lock.json': lockAfter, 'src/big.ts': bigAfter, 'small.txt': 'two\n' };
  before(async () => {
    s = await startTestServer();
    repo = await register(s.url, 'diff-large');
    await writeTree(dir, baseFiles);
    const base = (await push({ server: s.url, repo, line: 'main', dir, moveLine: true, progress: false })).snapshot_id;
    await writeTree(dir, revFiles);
    const revision = (await push({ server: s.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
    const t = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } }))).task;
    await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: t.task_id, title: 'C', base_line: 'main' } }));
    ps = (await ok(api(s.url, 'POST', R(repo, '/changes/change-1/patchsets'), { json: { base_snapshot_id: base, revision_snapshot_id: revision, summary: 's', author_mode: 'human_only' } }))).patchset.patchset_id;
  });
  after(() => s.stop());

  it('the 10,000-line file with ~2,900 changed lines and the 257 KB lockfile: counts equal git diff --numstat, in the files and the totals', async () => {
    expect(lockBefore.length).to.be.within(250_000, 265_000);
    const d = await ok(api(s.url, 'GET', R(repo, `/read/patchsets/${ps}/diff`)));
    const by = Object.fromEntries(d.files.map((f: Json) => [f.path, f]));
    const lock = await numstat(lockBefore, lockAfter);
    const big = await numstat(bigBefore, bigAfter);
    expect([by['package-lock.json'].additions, by['package-lock.json'].deletions]).to.deep.equal(lock);
    expect([by['src/big.ts'].additions, by['src/big.ts'].deletions]).to.deep.equal(big);
    expect(lock[0]).to.be.greaterThan(2500);
    expect(big[0] + big[1]).to.be.greaterThan(4000);
    expect(d.stats).to.include({ files_changed: 3, additions: lock[0] + big[0] + 1, deletions: lock[1] + big[1] + 1, uncounted_files: 0, truncated_files: 2 });
    // The patchset record counts the same (one line diff for both).
    const rec = (await ok(api(s.url, 'GET', R(repo, `/patchsets/${ps}`)))).patchset;
    expect(rec.changed_file_stats).to.include({ lines_added: d.stats.additions, lines_removed: d.stats.deletions, lines_complete: true });
  });

  it('a large diff is listed without hunks (large_diff), saying its size, with links to itself alone and to both versions', async () => {
    const d = await ok(api(s.url, 'GET', R(repo, `/read/patchsets/${ps}/diff`)));
    const f = d.files.find((x: Json) => x.path === 'package-lock.json');
    expect(f).to.deep.include({ truncated: true, truncated_reason: 'large_diff', hunks: [] });
    expect(f.diff_lines).to.be.greaterThan(3000);
    expect(f.diff_bytes).to.be.greaterThan(100_000);
    expect(f.note).to.match(/^the diff is \d+ lines \(\d+ KiB\), more than is sent with other files; ask for this file with \?path=$/);
    expect(f.links).to.deep.equal({
      diff: `${R(repo, `/read/patchsets/${ps}/diff`)}?path=package-lock.json`,
      old_file: `${R(repo, `/read/snapshots/${d.base_snapshot_id}/files/package-lock.json`)}`,
      new_file: `${R(repo, `/read/snapshots/${d.revision_snapshot_id}/files/package-lock.json`)}`,
    });
    // Both links answer: the old side's bytes, and the file's diff with all its hunks.
    expect((await api(s.url, 'GET', f.links.old_file)).text).to.equal(lockBefore);
    const one = await ok(api(s.url, 'GET', f.links.diff));
    expect(one.files).to.have.length(1);
    const full = one.files[0];
    expect(full).to.deep.include({ truncated: false, truncated_reason: null, links: null, additions: f.additions, deletions: f.deletions, diff_lines: f.diff_lines, diff_bytes: f.diff_bytes });
    expect(full.hunks.reduce((n: number, h: Json) => n + h.lines.length, 0)).to.equal(f.diff_lines);
    expect(full.hunks.flatMap((h: Json) => h.lines).filter((l: string) => l[0] === '+').length).to.equal(f.additions);
    expect(d.files.find((x: Json) => x.path === 'small.txt')).to.deep.include({ truncated: false, additions: 1, deletions: 1 });
  });

  it('the unified text has every hunk (no inline cap) and git apply builds the revision from it', async () => {
    const text = (await api(s.url, 'GET', R(repo, `/read/patchsets/${ps}/diff?format=unified`))).text;
    expect(text).not.to.include('# cairn:');
    const work = path.join(tempDir(), 'apply-large');
    await writeTree(work, baseFiles);
    const patchFile = path.join(tempDir(), 'large.diff');
    await fsp.writeFile(patchFile, text);
    expect(spawnSync('git', ['apply', patchFile], { cwd: work, encoding: 'utf8' }).status).to.equal(0);
    expect(await fsp.readFile(path.join(work, 'package-lock.json'), 'utf8')).to.equal(lockAfter);
    expect(await fsp.readFile(path.join(work, 'src/big.ts'), 'utf8')).to.equal(bigAfter);
  });
});

describe('land readiness: the land gate, asked without landing', function () {
  this.timeout(60_000);
  let s: TestServer;
  let repo: number;
  before(async () => {
    s = await startTestServer();
    repo = await register(s.url, 'readiness');
  });
  after(() => s.stop());

  it('says why not (the same gate a land runs) and then yes once the evidence passes; the land agrees', async () => {
    const dir = path.join(tempDir(), 'r');
    await writeTree(dir, { 'a.txt': 'a\n' });
    const base = (await push({ server: s.url, repo, line: 'main', dir, moveLine: true, progress: false })).snapshot_id;
    await writeTree(dir, { 'a.txt': 'b\n' });
    const rev = (await push({ server: s.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
    const t = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } }))).task;
    const c = (await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: t.task_id, title: 'C', base_line: 'main' } }))).change;
    const none = await ok(api(s.url, 'GET', R(repo, `/read/changes/${c.change_id}/readiness`)));
    expect(none).to.include({ can_land: false, blocked_by: 'no_patchset', selected_patchset_id: null });
    const ps = (await ok(api(s.url, 'POST', R(repo, `/changes/${c.change_id}/patchsets`), { json: { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_with_ai_assist', author: 'carol' } }))).patchset.patchset_id;
    let r = await ok(api(s.url, 'GET', R(repo, `/read/changes/${c.change_id}/readiness`)));
    expect(r).to.include({ can_land: false, blocked_by: 'blocked_by_policy' });
    expect(r.reason).to.match(/attestation/);
    expect(r.policy.checks.map((x: Json) => x.name)).to.include('independent_approval');
    const land = await api(s.url, 'POST', R(repo, `/changes/${c.change_id}:submit`), { json: { mode: 'ff-only' } });
    expect(land.json.failure_kind).to.equal(r.blocked_by);
    // the evidence: CI, attestation, an approval
    const run = await ok(api(s.url, 'POST', R(repo, `/patchsets/${ps}:runCi`), { json: {} }));
    const claim = await ok(api(s.url, 'POST', R(repo, `/worker-jobs/${run.job.worker_job_index}:claim`), { json: { accepted_runtime_contracts: ['svc.runner.native-job.v3'] } }));
    await ok(api(s.url, 'POST', R(repo, `/worker-jobs/${claim.worker_job_index}:complete`), { json: { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { job_kind: 7, result: { contract: 'svc.runner.native-result.v1', status: 'succeeded', tests_status: 'pass', suite_result_count: 0, suite_results: [] } } } }));
    await ok(api(s.url, 'PUT', R(repo, `/patchsets/${ps}/attestation`), { json: { verification_state: 'pass' } }));
    await ok(api(s.url, 'POST', R(repo, `/changes/${c.change_id}/reviews`), { json: { patchset_id: ps, reviewer: 'alice', action: 'approve' } }));
    r = await ok(api(s.url, 'GET', R(repo, `/read/changes/${c.change_id}/readiness`)));
    expect(r).to.include({ can_land: true, blocked_by: null, reason: null });
    expect(r.ci).to.include({ overall: 'pass' });
    expect(r.review).to.include({ approvals: 1, blocking: 0 });
    expect(r.attestation).to.include({ verification_state: 'pass' });
    // readiness wrote nothing: asking twice records no decision (the latest is still the refused land's)
    const latest = (await ok(api(s.url, 'GET', R(repo, `/patchsets/${ps}/policy`)))).policy.decision_id;
    await ok(api(s.url, 'GET', R(repo, `/read/changes/${c.change_id}/readiness`)));
    expect((await ok(api(s.url, 'GET', R(repo, `/patchsets/${ps}/policy`)))).policy.decision_id).to.equal(latest);
    expect(latest).to.equal(land.json.land.policy_decision_id);
    expect((await ok(api(s.url, 'POST', R(repo, `/changes/${c.change_id}:submit`), { json: { mode: 'ff-only' } }))).land.status).to.equal('landed');
    expect(await ok(api(s.url, 'GET', R(repo, `/read/changes/${c.change_id}/readiness`)))).to.include({ can_land: false, blocked_by: 'change_not_open' });
  });
});

describe('land readiness: whether the revision still merges onto the target head (gates injected to pass)', function () {
  this.timeout(60_000);
  let s: TestServer;
  let repo: number;
  let desk: LandDesk;
  type Opened = { store: Authority['store']; workflow: Authority['workflow']; lands: LandDesk };
  let auth: Opened;
  const PASS: LandGates = () => ({ refusal: null, policy_decision_id: null });
  const dir = path.join(tempDir(), 'm');
  const BASE_FILES: Files = { 'a.txt': '1\n2\n3\n4\n5\n6\n', 'b.txt': 'b\n' };
  const snap = async (files: Files, line: string, moveLine: boolean, parent?: string) => {
    await writeTree(dir, files);
    return (await push({ server: s.url, repo, line, dir, moveLine, progress: false, parent })).snapshot_id;
  };
  const change = async (line: string, base: string, revision: string): Promise<string> => {
    const t = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } }))).task;
    const c = (await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: t.task_id, title: 'C', base_line: line } }))).change;
    await ok(api(s.url, 'POST', R(repo, `/changes/${c.change_id}/patchsets`), { json: { base_snapshot_id: base, revision_snapshot_id: revision, summary: 's', author_mode: 'human_only' } }));
    return c.change_id;
  };
  const readiness = (c: string) => ok(api(s.url, 'GET', R(repo, `/read/changes/${c}/readiness`)));
  /** Count the merges the desk computes (readiness and lands share mergeOnto). */
  const counting = () => {
    const real = desk.mergeOnto;
    const count = { n: 0, restore: () => { desk.mergeOnto = real; } };
    desk.mergeOnto = function (this: LandDesk, ...args: Parameters<LandDesk['mergeOnto']>) {
      count.n++;
      return real.apply(this, args);
    };
    return count;
  };
  before(async () => {
    s = await startTestServer();
    repo = await register(s.url, 'readiness-merge');
    auth = (await (await s.ready).opened(repo)) as unknown as Opened;
    desk = auth.lands = new LandDesk(auth.store, auth.workflow, PASS);
  });
  after(() => s.stop());

  it('another land touching the same lines: blocked_by conflict with the paths, the land agrees (409 conflict); a disjoint change is stale but lands', async () => {
    const base = await snap(BASE_FILES, 'main', true);
    const first = await change('main', base, await snap({ ...BASE_FILES, 'a.txt': 'one\n2\n3\n4\n5\n6\n' }, 'main', false, base));
    const second = await change('main', base, await snap({ ...BASE_FILES, 'a.txt': 'ONE\n2\n3\n4\n5\n6\n', 'b.txt': 'B\n' }, 'main', false, base));
    const disjoint = await change('main', base, await snap({ ...BASE_FILES, 'c.txt': 'c\n' }, 'main', false, base));
    for (const c of [first, second, disjoint]) {
      const r = await readiness(c);
      expect(r, c).to.include({ can_land: true, blocked_by: null, reason: null, base_stale: false });
      expect(r.merge, c).to.deep.equal({ mode: 'merge', target_line: 'main', head_snapshot_id: base, status: 'clean', conflicts: [], conflicts_count: 0, note: null });
    }
    expect((await ok(api(s.url, 'POST', R(repo, `/changes/${first}:submit`), { json: { mode: 'merge' } }))).land.status).to.equal('landed');
    const head = (await ok(api(s.url, 'GET', R(repo, '/lines/main')))).head_snapshot_id;
    const r = await readiness(second);
    expect(r).to.include({ can_land: false, blocked_by: 'conflict', base_stale: true });
    expect(r.reason).to.match(/no longer merges onto the head of line main: 1 conflicting path\(s\): a\.txt/);
    expect(r.merge).to.deep.equal({ mode: 'merge', target_line: 'main', head_snapshot_id: head, status: 'conflict', conflicts: [{ path: 'a.txt', kind: 'content' }], conflicts_count: 1, note: null });
    const land = await api(s.url, 'POST', R(repo, `/changes/${second}:submit`), { json: { mode: 'merge' } });
    expect(land.status).to.equal(409);
    expect(land.json.failure_kind).to.equal(r.blocked_by);
    expect(land.json.land.conflicts).to.deep.equal(r.merge.conflicts);
    // stale (the head moved past its base) and merging cleanly: it can land, and does
    const d = await readiness(disjoint);
    expect(d).to.include({ can_land: true, blocked_by: null, base_stale: true });
    expect(d.merge).to.include({ status: 'clean', head_snapshot_id: head });
    expect((await ok(api(s.url, 'POST', R(repo, `/changes/${disjoint}:submit`), { json: { mode: 'merge' } }))).land.status).to.equal('landed');
  });

  it('never says "can land" with a conflict, nor a stale base without the merge that decides it', async () => {
    // Every combination the line can be in for one change: at the base, moved and clean, moved and conflicting.
    const base = await snap(BASE_FILES, 'combo', true);
    const c = await change('combo', base, await snap({ ...BASE_FILES, 'a.txt': '1\n2\n3\n4\n5\nsix\n' }, 'combo', false, base));
    const states: Json[] = [await readiness(c)];
    const clean = await snap({ ...BASE_FILES, 'b.txt': 'moved\n' }, 'combo', true, base);
    states.push(await readiness(c));
    await snap({ ...BASE_FILES, 'b.txt': 'moved\n', 'a.txt': '1\n2\n3\n4\n5\nSIX\n' }, 'combo', true, clean);
    states.push(await readiness(c));
    expect(states.map((x) => [x.can_land, x.base_stale, x.merge.status, x.blocked_by])).to.deep.equal([
      [true, false, 'clean', null],
      [true, true, 'clean', null],
      [false, true, 'conflict', 'conflict'],
    ]);
    for (const x of states) expect(x.can_land, JSON.stringify(x)).to.equal(x.merge.status === 'clean' && x.blocked_by === null);
  });

  it('is cached by (head, base, revision): repeated and concurrent asks merge once; a moved head merges again', async () => {
    const files = { ...BASE_FILES, 'cache.txt': 'cache\n' };
    const base = await snap(files, 'cache', true);
    const c = await change('cache', base, await snap({ ...files, 'a.txt': '1\n2\n3\n4\n5\nsix\n' }, 'cache', false, base));
    await snap({ ...files, 'a.txt': 'one\n2\n3\n4\n5\n6\n' }, 'cache', true, base);
    const count = counting();
    try {
      const answers = await Promise.all(Array.from({ length: 8 }, () => readiness(c)));
      for (const x of answers) expect(x.merge.status).to.equal('clean');
      await readiness(c);
      expect(count.n).to.equal(1);
      await snap({ ...files, 'a.txt': 'one\n2\n3\n4\n5\n6\n', 'b.txt': 'x\n' }, 'cache', true, (await ok(api(s.url, 'GET', R(repo, '/lines/cache')))).head_snapshot_id);
      await readiness(c);
      await readiness(c);
      expect(count.n).to.equal(2);
    } finally {
      count.restore();
    }
  });

  it('a merge bigger than the readiness budget is "unchecked" (not a block); the land still decides', async () => {
    // Content of its own: snapshots of the same trees and parents made in the same second are
    // the same snapshots, whose answer an earlier test may have cached.
    const files = { ...BASE_FILES, 'big.txt': 'big\n' };
    const base = await snap(files, 'big', true);
    const c = await change('big', base, await snap({ ...files, 'a.txt': '1\n2\n3\n4\n5\nsix\n' }, 'big', false, base));
    await snap({ ...files, 'a.txt': 'one\n2\n3\n4\n5\n6\n' }, 'big', true, base);
    const saved = { ...READINESS_MERGE_BUDGET };
    READINESS_MERGE_BUDGET.bytes = 8; // the three sides of a.txt are 12 bytes each
    try {
      const r = await readiness(c);
      expect(r).to.include({ can_land: true, base_stale: true });
      expect(r.merge).to.include({ status: 'unchecked', conflicts_count: 0 });
      expect(r.merge.note).to.match(/more than a readiness check/);
    } finally {
      Object.assign(READINESS_MERGE_BUDGET, saved);
    }
    expect((await ok(api(s.url, 'POST', R(repo, `/changes/${c}:submit`), { json: { mode: 'merge' } }))).land.status).to.equal('landed');
  });

  it('a line merge that would pair up millions of equal lines is a content conflict, not seconds of blocked server (readiness and the land agree)', async () => {
    // 1,990 equal lines: the change inserts one at the top, the line appends one at the end.
    // diff3's LCS walks every pair of equal lines (about 8 million here, seconds of CPU in one turn).
    const same = 'a\n'.repeat(1990);
    const files = { ...BASE_FILES, 'same.txt': same };
    const base = await snap(files, 'pairs', true);
    const c = await change('pairs', base, await snap({ ...files, 'same.txt': `X\n${same}` }, 'pairs', false, base));
    await snap({ ...files, 'same.txt': `${same}Y\n` }, 'pairs', true, base);
    const r = await readiness(c);
    expect(r).to.include({ can_land: false, blocked_by: 'conflict' });
    expect(r.merge).to.include({ status: 'conflict', conflicts_count: 1 });
    expect(r.merge.conflicts).to.deep.equal([{ path: 'same.txt', kind: 'content' }]);
    const land = await api(s.url, 'POST', R(repo, `/changes/${c}:submit`), { json: { mode: 'merge' } });
    expect(land.status).to.equal(409);
    expect(land.json.failure_kind).to.equal('conflict');
  });

  it('a readiness merge that takes seconds of CPU lets other requests in: /healthz answers before it', async () => {
    // 12 files of 600 equal lines, each changed on both sides (a line on top, a line at the
    // end): each file's line merge is a fraction of a second of CPU (under the pairs bound), all
    // of them together seconds. The store's reads are synchronous, so only a merge that gives
    // the event loop a turn now and then lets /healthz through meanwhile.
    const same = 'a\n'.repeat(600);
    const names = Array.from({ length: 12 }, (_, i) => `slow-${i}.txt`);
    const files = { ...BASE_FILES, ...Object.fromEntries(names.map((n) => [n, same])) };
    const base = await snap(files, 'slow', true);
    const c = await change('slow', base, await snap({ ...files, ...Object.fromEntries(names.map((n) => [n, `X\n${same}`])) }, 'slow', false, base));
    await snap({ ...files, ...Object.fromEntries(names.map((n) => [n, `${same}Y\n`])) }, 'slow', true, base);
    const real = desk.mergeOnto;
    let started = false;
    desk.mergeOnto = function (this: LandDesk, ...args: Parameters<LandDesk['mergeOnto']>) {
      started = true;
      return real.apply(this, args);
    };
    try {
      const order: string[] = [];
      const asked = readiness(c).then((r) => { order.push('readiness'); return r; });
      await until('the readiness merge started', () => started);
      const health = fetch(`${s.url}/healthz`).then((res) => { order.push('healthz'); return res.status; });
      expect(await health).to.equal(200);
      const r = await asked;
      expect(r.merge).to.include({ status: 'clean' });
      expect(order).to.deep.equal(['healthz', 'readiness']);
    } finally {
      desk.mergeOnto = real;
    }
  });

  it('an empty target line is stale_base, an archived one target_line_unavailable; the gates come first', async () => {
    const base = await snap(BASE_FILES, 'gone', true);
    const c = await change('gone', base, await snap({ ...BASE_FILES, 'a.txt': 'x\n' }, 'gone', false, base));
    await ok(api(s.url, 'PUT', R(repo, '/lines/gone'), { json: { head_snapshot_id: null } }));
    expect(await readiness(c)).to.include({ can_land: false, blocked_by: 'stale_base', merge: null, base_stale: false });
    await ok(api(s.url, 'PUT', R(repo, '/lines/gone'), { json: { head_snapshot_id: base } }));
    await ok(api(s.url, 'POST', R(repo, '/lines/gone:close'), { json: {} }));
    expect(await readiness(c)).to.include({ can_land: false, blocked_by: 'target_line_unavailable', merge: null });
    // a gate refusal is named first (the land judges the gates first); the merge is still reported
    const base2 = await snap(BASE_FILES, 'gated', true);
    const g = await change('gated', base2, await snap({ ...BASE_FILES, 'a.txt': 'mine\n' }, 'gated', false, base2));
    await snap({ ...BASE_FILES, 'a.txt': 'theirs\n' }, 'gated', true, base2);
    auth.lands = new LandDesk(auth.store, auth.workflow, () => ({ refusal: { kind: 'blocked_by_ci', message: 'CI of the current run is none, not pass' }, policy_decision_id: null }));
    try {
      const r = await readiness(g);
      expect(r).to.include({ can_land: false, blocked_by: 'blocked_by_ci' });
      expect(r.merge).to.include({ status: 'conflict', conflicts_count: 1 });
    } finally {
      auth.lands = desk;
    }
  });
});
