// `cairn task`, `cairn change`, `cairn patchset push` against a real server: the story from the
// command line (plan → task linked to an item → change → two patchsets → select → audit), JSON
// output when stdout is not a terminal, usage errors (exit 2) and server refusals (exit 1).
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { api, cli, register, startTestServer, tempDir, cliJson } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
describe('workflow commands', function () {
    this.timeout(60_000);
    let s;
    let repo;
    let common;
    before(async () => {
        s = await startTestServer();
        repo = await register(s.url, 'cli');
        common = ['--server', s.url, '--repo', String(repo)];
    });
    after(() => s.stop());
    const run = cliJson;
    it('patchset push reports the line counts of the diff route (one line diff): a reindent with moved lines, a last line without a newline', async () => {
        const r = await register(s.url, 'counts');
        const c = ['--server', s.url, '--repo', String(r)];
        const dir = path.join(tempDir(), 'tree');
        await fsp.mkdir(dir, { recursive: true });
        const body = ['if (ready) {', 'start();', '}', 'for (const x of xs) {', 'run(x);', '}', 'done();'];
        await fsp.writeFile(path.join(dir, 'reindent.ts'), `function main() {\n${body.join('\n')}\n}\n`);
        await fsp.writeFile(path.join(dir, 'swap.txt'), 'A\nB\nC\nD\nE\n');
        await fsp.writeFile(path.join(dir, 'tail.txt'), 'one\ntwo');
        await fsp.writeFile(path.join(dir, 'tail2.txt'), 'one\ntwo\n');
        const base = await run(['push', ...c, '--line', 'main', dir]);
        await run(['task', 'create', ...c, '--title', 'Counts', '--intent', 'Count']);
        await run(['change', 'create', ...c, '--task', 'task-1', '--title', 'Reindent', '--base-line', 'main']);
        // reindented one level, the two blocks swapped; a block moved; a newline added at the end; one removed
        const moved = [...body.slice(3, 6), ...body.slice(0, 3), body[6]].map((l) => (l === '}' ? '  }' : l.startsWith('start') || l.startsWith('run') ? `    ${l}` : `  ${l}`));
        await fsp.writeFile(path.join(dir, 'reindent.ts'), `export function main(): void {\n${moved.join('\n')}\n}\n`);
        await fsp.writeFile(path.join(dir, 'swap.txt'), 'D\nE\nC\nA\nB\n');
        await fsp.writeFile(path.join(dir, 'tail.txt'), 'one\ntwo\n');
        await fsp.writeFile(path.join(dir, 'tail2.txt'), 'one\ntwo');
        const pushed = await run(['patchset', 'push', ...c, '--change', 'change-1', '--summary', 'reindent', dir]);
        expect(pushed.patchset.base_snapshot_id).to.equal(base.snapshot_id);
        const diff = (await api(s.url, 'GET', R(r, `/read/patchsets/${pushed.patchset.patchset_id}/diff`))).json;
        const fromDiff = Object.fromEntries(diff.files.map((f) => [f.path, [f.additions, f.deletions]]));
        const fromPush = Object.fromEntries(pushed.patchset.changed_files.map((f) => [f.path, [f.lines_added, f.lines_removed]]));
        expect(fromPush).to.deep.equal(fromDiff);
        expect(fromDiff['tail.txt']).to.deep.equal([1, 1]); // "two" without a newline, then with one
        expect(fromDiff['tail2.txt']).to.deep.equal([1, 1]);
        expect(pushed.patchset.changed_file_stats).to.include({ lines_added: diff.stats.additions, lines_removed: diff.stats.deletions, lines_complete: true });
        // the record the server keeps says the same
        const stored = (await api(s.url, 'GET', R(r, `/patchsets/${pushed.patchset.patchset_id}`))).json.patchset;
        expect(stored.changed_file_stats).to.include({ lines_added: diff.stats.additions, lines_removed: diff.stats.deletions });
    });
    it('runs the story: task linked to a plan item, change, two patchsets pushed from directories, select, audit', async () => {
        const dir = path.join(tempDir(), 'tree');
        await fsp.mkdir(dir, { recursive: true });
        await fsp.writeFile(path.join(dir, 'a.txt'), 'one\n');
        const base = await run(['push', ...common, '--line', 'main', dir]);
        const plan = await api(s.url, 'POST', R(repo, '/sprints'), { json: { title: 'S', artifact_path: 's.md', artifact_heading: 'S', artifact_body: '# S\n- [ ] do it {#do}\n' } });
        expect(plan.status).to.equal(200);
        // Not a TTY: JSON without --json too.
        const task = await run(['task', 'create', ...common, '--title', 'Do it', '--intent', 'Because', '--plan-id', plan.json.plan.plan_id, '--item', 'do']);
        expect(task.task).to.include({ task_id: 'task-1', plan_item_ref: 'do', origin_plan_revision_id: plan.json.revision.plan_revision_id });
        expect((await run(['task', 'show', ...common, '1', '--json'])).task.task_id).to.equal('task-1');
        expect((await run(['task', 'list', ...common, '--status', 'active'])).tasks.map((t) => t.task_id)).to.deep.equal(['task-1']);
        const change = await run(['change', 'create', ...common, '--task', 'task-1', '--title', 'Impl', '--base-line', 'main']);
        expect(change.change).to.include({ change_id: 'change-1', fork_snapshot_id: base.snapshot_id, status: 'draft' });
        await fsp.writeFile(path.join(dir, 'a.txt'), 'one\ntwo\n');
        const p1 = await run(['patchset', 'push', ...common, '--change', 'change-1', '--summary', 'first', dir]);
        expect(p1.patchset).to.include({ patchset_id: 'change-1.ps-1', base_snapshot_id: base.snapshot_id, revision_snapshot_id: p1.snapshot_id, summary: 'first', author_mode: 'human_only' });
        expect(p1.patchset.changed_file_stats).to.include({ files_modified: 1, lines_added: 1, lines_removed: 0 });
        await fsp.writeFile(path.join(dir, 'b.txt'), 'new\n');
        const p2 = await run(['patchset', 'push', ...common, '--change', 'task-1.change-1', '--author-mode', 'human_with_ai_assist', dir]);
        expect(p2.patchset).to.include({ patchset_id: 'change-1.ps-2', author_mode: 'human_with_ai_assist' });
        expect(p2.patchset.changed_file_stats).to.include({ files_added: 1, files_modified: 1 });
        // The base line did not move.
        expect((await api(s.url, 'GET', R(repo, '/lines/main'))).json.head_snapshot_id).to.equal(base.snapshot_id);
        expect((await api(s.url, 'POST', R(repo, '/changes/change-1:selectPatchset'), { json: { patchset_id: 'change-1.ps-2' } })).status).to.equal(200);
        const shown = await run(['change', 'show', ...common, 'change-1']);
        expect(shown.change).to.include({ status: 'active', selected_patchset_id: 'change-1.ps-2', patchset_count: 2 });
        expect(shown.patchsets.map((p) => p.patchset_id)).to.deep.equal(['change-1.ps-1', 'change-1.ps-2']);
        expect((await run(['change', 'list', ...common, '--task', 'task-1'])).count).to.equal(1);
        const audit = await api(s.url, 'GET', R(repo, '/read/tasks/task-1/audit?target_line=main'));
        expect(audit.json).to.include({ verdict: 'in_progress', open_changes: 1 });
        expect(audit.json.changes[0].selected_patchset_id).to.equal('change-1.ps-2');
        expect((await run(['change', 'close', ...common, 'change-1', '--status', 'superseded'])).change.status).to.equal('superseded');
        expect((await run(['task', 'close', ...common, 'task-1', '--status', 'completed'])).task.status).to.equal('completed');
        expect((await api(s.url, 'GET', R(repo, '/read/tasks/task-1/audit'))).json.verdict).to.equal('task_completed');
    });
    it('exits 2 on usage errors and 1 with the server\'s reason on refusals', async () => {
        expect((await cli(['task', 'create', ...common, '--title', 'x'])).code).to.equal(2);
        expect((await cli(['task', 'bogus', ...common])).code).to.equal(2);
        expect((await cli(['change', 'show', ...common])).code).to.equal(2);
        expect((await cli(['patchset', 'push', ...common, '--change', 'change-1'])).code).to.equal(2);
        const missing = await cli(['task', 'show', ...common, 'task-404']);
        expect(missing.code).to.equal(1);
        expect(missing.stderr).to.match(/HTTP 404/);
        // task-1 is completed: closing it again as completed is an idempotent retry (exit 0), as abandoned an invalid transition.
        expect((await cli(['task', 'close', ...common, 'task-1', '--status', 'completed'])).code).to.equal(0);
        const closed = await cli(['task', 'close', ...common, 'task-1', '--status', 'abandoned']);
        expect(closed.code).to.equal(1);
        expect(closed.stderr).to.match(/HTTP 400/);
        const help = await cli(['task', '--help']);
        expect(help.code).to.equal(0);
        expect(help.stdout).to.match(/cairn task create/);
    });
});
//# sourceMappingURL=workflow-cli.test.js.map