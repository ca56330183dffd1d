// The reviewer's commands: `cairn diff` (plain when piped, coloured through a pager on a
// terminal, --stat, --name-only, --json, --against, -U, paths), `cairn change show` with the
// land readiness of the change, and `cairn review inbox`.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { api, cli, ok, onTty, register, startTestServer, tempDir } from './helpers.js';
import { LandDesk } from '../lib/authority/workflow/lands.js';
import { statusLines } from '../lib/cli/workflow-commands.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
describe('reviewer commands: cairn diff, change show, review inbox', function () {
    this.timeout(120_000);
    let s;
    let repo;
    let common;
    before(async () => {
        s = await startTestServer();
        repo = await register(s.url, 'diff-cli');
        common = ['--server', s.url, '--repo', String(repo)];
        const dir = path.join(tempDir(), 't');
        const write = async (files) => {
            await fsp.rm(dir, { recursive: true, force: true });
            await fsp.mkdir(path.join(dir, 'src'), { recursive: true });
            for (const [p, v] of Object.entries(files))
                await fsp.writeFile(path.join(dir, p), v);
        };
        await write({ 'a.txt': 'one\ntwo\nthree\n', 'src/b.txt': 'b\n' });
        const base = (await push({ server: s.url, repo, line: 'main', dir, moveLine: true, progress: false })).snapshot_id;
        await write({ 'a.txt': 'one\nTWO\nthree\n', 'src/b.txt': 'b\nb2\n', 'src/c.txt': 'new\n' });
        const rev1 = (await push({ server: s.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
        await write({ 'a.txt': 'one\nTWO\nthree\n', 'src/b.txt': 'b\nb3\n', 'src/c.txt': 'new\n' });
        const rev2 = (await push({ server: s.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
        const t = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } }))).task;
        await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: t.task_id, title: 'Make two loud', base_line: 'main' } }));
        for (const rev of [rev1, rev2])
            await ok(api(s.url, 'POST', R(repo, '/changes/change-1/patchsets'), { json: { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' } }));
        await ok(api(s.url, 'POST', R(repo, '/changes/change-1:requestReview'), { json: { patchset_id: 'change-1.ps-1', reviewer_groups: ['core'], note: 'please', requested_by: 'carol' } }));
    });
    after(() => s.stop());
    it('piped: the unified text the server gives, narrowed by paths, with -U; --name-only, --stat, --json', async () => {
        const piped = await cli(['diff', ...common, 'change-1']);
        expect(piped.code, piped.stderr).to.equal(0);
        const server = await api(s.url, 'GET', R(repo, '/read/changes/change-1/diff?format=unified'));
        expect(piped.stdout).to.equal(server.text);
        expect(piped.stdout).to.not.include('\u001b['); // no colour when piped
        expect((await cli(['diff', ...common, 'change-1', 'src/'])).stdout).to.match(/^diff --git a\/src\/b.txt b\/src\/b.txt/);
        expect((await cli(['diff', ...common, '-U', '0', 'change-1', 'a.txt'])).stdout).to.include('@@ -2 +2 @@\n-two\n+TWO\n');
        expect((await cli(['diff', ...common, '--name-only', 'change-1'])).stdout).to.equal('a.txt\nsrc/b.txt\nsrc/c.txt\n');
        const stat = (await cli(['diff', ...common, '--stat', 'change-1'])).stdout;
        expect(stat).to.match(/ a\.txt\s+\| 2 \+-/);
        expect(stat).to.include('3 files changed, 3 insertions(+), 1 deletion(-)');
        const json = JSON.parse((await cli(['diff', ...common, '--json', 'change-1.ps-2', '--against', 'change-1.ps-1'])).stdout);
        expect(json.files.map((f) => f.path)).to.deep.equal(['src/b.txt']);
        const usage = await cli(['diff', ...common, '--against', 'change-1.ps-1', 'change-1']);
        expect(usage.code).to.equal(2);
        expect(usage.stderr).to.match(/name the newer PATCHSET/);
        expect((await cli(['diff', ...common, 'change-9'])).code).to.equal(1);
    });
    it('on a terminal: coloured, through $PAGER; change show ends with whether it can land and why; review inbox', async function () {
        if (spawnSync('script', ['--version']).status !== 0)
            this.skip();
        const paged = await onTty(['diff', ...common, 'change-1'], { PAGER: 'sed s/^/PAGED:/' });
        expect(paged.status, paged.stdout).to.equal(0);
        expect(paged.stdout).to.include('PAGED:\u001b[32m+TWO\u001b[0m');
        expect(paged.stdout).to.include('PAGED:\u001b[31m-two\u001b[0m');
        const show = await onTty(['change', 'show', ...common, 'change-1']);
        expect(show.status, show.stdout).to.equal(0);
        expect(show.stdout).to.match(/\* change-1\.ps-1/);
        expect(show.stdout).to.match(/change-1\.ps-2 .*\[current\]/);
        expect(show.stdout).to.include('CI: none');
        expect(show.stdout).to.include('attestation: none');
        expect(show.stdout).to.match(/✗ attestation: no attestation has been recorded/);
        expect(show.stdout).to.match(/can land: no, because the policy decision at the land is fail, not pass \(failing checks: attestation, verification_state\) \(blocked_by_policy\)/);
        const json = JSON.parse((await cli(['change', 'show', ...common, 'change-1'])).stdout);
        expect(json.readiness).to.include({ can_land: false, blocked_by: 'blocked_by_policy' });
        const inbox = await onTty(['review', 'inbox', ...common, '--group', 'core']);
        expect(inbox.stdout).to.match(/core\s+task-1\.change-1\s+Make two loud\s+\(change-1\.ps-1; CI none, policy pending, 0 approval\(s\), 0 blocking; asked .* by carol\)/);
        expect((await onTty(['review', 'inbox', ...common, '--group', 'docs'])).stdout).to.include('nothing waits for review by docs');
        const rows = JSON.parse((await cli(['review', 'inbox', ...common])).stdout).rows;
        expect(rows).to.have.length(1);
    });
});
describe('cairn diff: --word-diff, -w/-b/--ignore-space-at-eol, renames (-M, --no-renames) and --stat of a rename', function () {
    this.timeout(120_000);
    let s;
    let common;
    const moved = Array.from({ length: 30 }, (_, i) => `export const v${i} = ${i}; // line ${i}`).join('\n') + '\n';
    before(async () => {
        s = await startTestServer();
        const repo = await register(s.url, 'diff-cli-fidelity');
        common = ['--server', s.url, '--repo', String(repo)];
        const dir = path.join(tempDir(), 't');
        const write = async (files) => {
            await fsp.rm(dir, { recursive: true, force: true });
            for (const [p, v] of Object.entries(files)) {
                await fsp.mkdir(path.dirname(path.join(dir, p)), { recursive: true });
                await fsp.writeFile(path.join(dir, p), v);
            }
        };
        await write({ 'const.ts': 'export const B = 2;\n', 'ws.txt': 'a\n  b\nc d\nef\n', 'lib/util.js': moved });
        const base = (await push({ server: s.url, repo, line: 'main', dir, moveLine: true, progress: false })).snapshot_id;
        await write({ 'const.ts': 'export const B = 42;\n', 'ws.txt': 'a\n    b\nc  d  \ne f\n', 'lib/helpers/util.js': moved.replace('v7 = 7', 'v7 = 700') });
        const rev = (await push({ server: s.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
        const t = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } }))).task;
        await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: t.task_id, title: 'C', base_line: 'main' } }));
        await ok(api(s.url, 'POST', R(repo, '/changes/change-1/patchsets'), { json: { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' } }));
    });
    after(() => s.stop());
    it('--word-diff prints git\'s [-old-]{+new+} form inside the unified headers', async () => {
        const out = await cli(['diff', ...common, '--word-diff', 'change-1', 'const.ts']);
        expect(out.code, out.stderr).to.equal(0);
        expect(out.stdout).to.equal('diff --git a/const.ts b/const.ts\n--- a/const.ts\n+++ b/const.ts\n@@ -1 +1 @@\nexport const B = [-2-]{+42+};\n');
        const moved = (await cli(['diff', ...common, '--word-diff', 'change-1'])).stdout;
        expect(moved).to.include('export const v7 = [-7-]{+700+}; // line 7\n');
        expect((await cli(['diff', ...common, '--word-diff', '--stat', 'change-1'])).code).to.equal(2);
    });
    it('-w, -b and --ignore-space-at-eol ask for git\'s whitespace modes', async () => {
        expect((await cli(['diff', ...common, 'change-1', 'ws.txt'])).stdout).to.include('-  b\n-c d\n-ef\n+    b\n+c  d  \n+e f\n');
        expect((await cli(['diff', ...common, '-w', 'change-1', 'ws.txt'])).stdout).to.equal('diff --git a/ws.txt b/ws.txt\n');
        // -b: "  b" → "    b" and "c d" → "c  d  " change only the amount of whitespace; "ef" → "e f" adds some.
        expect((await cli(['diff', ...common, '-b', 'change-1', 'ws.txt'])).stdout).to.include('@@ -1,4 +1,4 @@\n a\n     b\n c  d  \n-ef\n+e f\n');
        expect((await cli(['diff', ...common, '--ignore-space-at-eol', 'change-1', 'ws.txt'])).stdout).to.include('-  b\n-c d\n-ef\n+    b\n+c  d  \n+e f\n');
        const both = await cli(['diff', ...common, '-w', '-b', 'change-1']);
        expect(both.code).to.equal(2);
    });
    it('renames by default (rename from/to, only the edited line), --no-renames as a delete and an add, --stat as git writes a rename', async () => {
        const text = (await cli(['diff', ...common, 'change-1', 'lib'])).stdout;
        expect(text).to.match(/^diff --git a\/lib\/util.js b\/lib\/helpers\/util.js\nsimilarity index 9\d%\nrename from lib\/util.js\nrename to lib\/helpers\/util.js\n/);
        expect(text.split('\n').filter((l) => /^[-+][^-+]/.test(l))).to.deep.equal(['-export const v7 = 7; // line 7', '+export const v7 = 700; // line 7']);
        expect((await cli(['diff', ...common, '-M', 'change-1', 'lib'])).stdout).to.equal(text);
        const off = (await cli(['diff', ...common, '--no-renames', 'change-1', 'lib'])).stdout;
        expect(off).to.include('deleted file mode 100644');
        expect(off).to.include('new file mode 100644');
        const stat = (await cli(['diff', ...common, '--stat', 'change-1'])).stdout;
        expect(stat).to.match(/ lib\/\{ => helpers\}\/util\.js \| 2 \+-/);
        const json = JSON.parse((await cli(['diff', ...common, '--stat', '--json', 'change-1'])).stdout);
        expect(json.files.find((f) => f.path === 'lib/helpers/util.js')).to.include({ change: 'renamed', old_path: 'lib/util.js' });
    });
});
describe('cairn change show: a revision that no longer merges onto the target head (gates injected to pass)', function () {
    this.timeout(120_000);
    let s;
    let repo;
    let common;
    before(async () => {
        s = await startTestServer();
        repo = await register(s.url, 'show-conflict');
        common = ['--server', s.url, '--repo', String(repo)];
        const a = (await (await s.ready).opened(repo));
        a.lands = new LandDesk(a.store, a.workflow, () => ({ refusal: null, policy_decision_id: null }));
        const dir = path.join(tempDir(), 't');
        const snap = async (files, moveLine, parent) => {
            await fsp.rm(dir, { recursive: true, force: true });
            await fsp.mkdir(path.join(dir, 'src'), { recursive: true });
            for (const [p, v] of Object.entries(files))
                await fsp.writeFile(path.join(dir, p), v);
            return (await push({ server: s.url, repo, line: 'main', dir, moveLine, progress: false, parent })).snapshot_id;
        };
        const files = { 'a.txt': 'one\ntwo\n', 'src/b.txt': 'b\n', 'c.txt': 'c\n' };
        const base = await snap(files, true);
        const t = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } }))).task;
        for (const [i, rev] of [await snap({ ...files, 'a.txt': 'ONE\ntwo\n', 'src/b.txt': 'B\n' }, false, base), await snap({ ...files, 'a.txt': 'uno\ntwo\n', 'src/b.txt': 'bee\n' }, false, base)].entries()) {
            await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: t.task_id, title: `C${i}`, base_line: 'main' } }));
            await ok(api(s.url, 'POST', R(repo, `/changes/change-${i + 1}/patchsets`), { json: { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' } }));
        }
        await ok(api(s.url, 'POST', R(repo, '/changes/change-1:submit'), { json: { mode: 'merge' } }));
    });
    after(() => s.stop());
    it('--json carries the merge dry run; the terminal form lists each conflicting path and says why it cannot land', async function () {
        const json = JSON.parse((await cli(['change', 'show', ...common, 'change-2'])).stdout);
        expect(json.readiness).to.include({ can_land: false, blocked_by: 'conflict', base_stale: true });
        expect(json.readiness.merge).to.include({ status: 'conflict', conflicts_count: 2 });
        expect(json.readiness.merge.conflicts).to.deep.equal([{ path: 'a.txt', kind: 'content' }, { path: 'src/b.txt', kind: 'content' }]);
        if (spawnSync('script', ['--version']).status !== 0)
            this.skip();
        const show = await onTty(['change', 'show', ...common, 'change-2']);
        expect(show.status, show.stdout).to.equal(0);
        expect(show.stdout).to.match(/merge onto main \(head [0-9a-f]{12}\): 2 conflicting path\(s\)/);
        expect(show.stdout).to.include('✗ a.txt (content)');
        expect(show.stdout).to.include('✗ src/b.txt (content)');
        expect(show.stdout).to.match(/can land: no, because the revision no longer merges onto the head of line main: 2 conflicting path\(s\): a\.txt, src\/b\.txt \(conflict\)/);
    });
    it('the readable status lines: a clean merge onto a moved head, an unchecked one, a long conflict list', () => {
        const m = { mode: 'merge', target_line: 'main', head_snapshot_id: 'ab'.repeat(32), conflicts: [], conflicts_count: 0, note: null };
        expect(statusLines({ can_land: true, base_stale: true, merge: { ...m, status: 'clean' } })).to.deep.equal([
            'merge onto main (head abababababab): clean (the line moved past the base; the land merges onto the new head)',
            'can land: yes',
        ]);
        expect(statusLines({ can_land: true, base_stale: false, merge: { ...m, status: 'unchecked', note: 'too big' } })[0]).to.equal('merge onto main (head abababababab): not checked (too big)');
        const lines = statusLines({ can_land: false, blocked_by: 'conflict', reason: 'r', merge: { ...m, status: 'conflict', conflicts: [{ path: 'x', kind: 'add/add' }], conflicts_count: 101 } });
        expect(lines).to.deep.equal(['merge onto main (head abababababab): 101 conflicting path(s)', '  ✗ x (add/add)', '  … 100 more', 'can land: no, because r (conflict)']);
    });
});
describe('cairn diff of a large file: --stat counts it as git does, --word-diff loads its hunks', function () {
    this.timeout(120_000);
    let s;
    let common;
    const oldText = Array.from({ length: 3000 }, (_, i) => `line ${i}`).join('\n') + '\n';
    const newText = Array.from({ length: 3000 }, (_, i) => (i % 2 === 0 ? `line ${i} edited` : `line ${i}`)).join('\n') + '\n';
    before(async () => {
        s = await startTestServer();
        const repo = await register(s.url, 'diff-cli-large');
        common = ['--server', s.url, '--repo', String(repo)];
        const dir = path.join(tempDir(), 't');
        await fsp.mkdir(dir, { recursive: true });
        await fsp.writeFile(path.join(dir, 'big.txt'), oldText);
        await fsp.writeFile(path.join(dir, 'small.txt'), 'a\n');
        const base = (await push({ server: s.url, repo, line: 'main', dir, moveLine: true, progress: false })).snapshot_id;
        await fsp.writeFile(path.join(dir, 'big.txt'), newText);
        await fsp.writeFile(path.join(dir, 'small.txt'), 'b\n');
        const rev = (await push({ server: s.url, repo, line: 'main', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
        const t = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'T', intent: 'i' } }))).task;
        await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: t.task_id, title: 'C', base_line: 'main' } }));
        await ok(api(s.url, 'POST', R(repo, '/changes/change-1/patchsets'), { json: { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' } }));
    });
    after(() => s.stop());
    it('the JSON leaves the large diff out (large_diff) but --stat counts it; --word-diff and the unified text show every hunk', async () => {
        const json = JSON.parse((await cli(['diff', ...common, '--json', 'change-1'])).stdout);
        expect(json.files[0]).to.deep.include({ path: 'big.txt', truncated_reason: 'large_diff', additions: 1500, deletions: 1500 });
        const stat = (await cli(['diff', ...common, '--stat', 'change-1'])).stdout;
        expect(stat).to.match(/ big\.txt\s+\| 3000 \+{20}-{20}\n/);
        expect(stat).to.include('2 files changed, 1501 insertions(+), 1501 deletions(-)');
        const words = (await cli(['diff', ...common, '--word-diff', 'change-1'])).stdout;
        expect(words).to.include('line 2998{+ edited+}\n');
        expect(words).to.include('[-a-]{+b+}\n');
        const text = (await cli(['diff', ...common, 'change-1'])).stdout;
        expect(text.split('\n').filter((l) => l.startsWith('+line')).length).to.equal(1500);
    });
});
//# sourceMappingURL=diff-cli.test.js.map