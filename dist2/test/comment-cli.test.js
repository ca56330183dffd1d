// `cairn comment`, `cairn comment reply`, `cairn comments`, `cairn thread resolve|reopen` and
// `cairn review publish` through the real CLI against a real server: JSON off a terminal, the
// readable form on one (script(1)), usage errors (exit 2) and refusals restated in the user's
// words (exit 1).
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { pull } from '../lib/client/transfer.js';
import { cli, cliJson as run, onTty, register, startTestServer, tempDir } from './helpers.js';
describe('comment, comments, thread and review publish commands', function () {
    this.timeout(60_000);
    let s;
    let common;
    let dir;
    let repo;
    before(async () => {
        s = await startTestServer();
        repo = await register(s.url, 'comment-cli');
        common = ['--server', s.url, '--repo', String(repo)];
        dir = path.join(tempDir(), 'tree');
        await fsp.mkdir(dir, { recursive: true });
        await fsp.writeFile(path.join(dir, 'a.txt'), 'one\ntwo\nthree\nfour\n');
        await run(['push', ...common, '--line', 'main', dir]);
        await run(['task', 'create', ...common, '--title', 'T', '--intent', 'I']);
        await run(['change', 'create', ...common, '--task', 'task-1', '--title', 'C', '--base-line', 'main']);
        await fsp.writeFile(path.join(dir, 'a.txt'), 'one\ntwo\nthree\nfour\nfive\n');
        await run(['patchset', 'push', ...common, '--change', 'change-1', dir]);
    });
    after(() => s.stop());
    it('opens a thread on lines, replies, resolves, reopens and lists threads as JSON', async () => {
        const opened = await run(['comment', 'change-1', ...common, '--author', 'alice', '--path', 'a.txt', '--line', '2', '--end-line', '3', '-m', 'why **two**?']);
        expect(opened).to.include({ thread_id: 'change-1.comment-1', resolution: 'unresolved' });
        expect(opened.comment).to.include({ author: 'alice', body: 'why **two**?', patchset_id: 'change-1.ps-1', published: true });
        expect(opened.comment.anchor).to.deep.equal({ kind: 'lines', path: 'a.txt', side: 'revision', line: 2, end_line: 3 });
        const base = await run(['comment', 'change-1', ...common, '--author', 'carol', '--path', 'a.txt', '--line', '1', '--side', 'base', '-m', 'old line']);
        expect(base.comment.anchor).to.include({ side: 'base', line: 1, end_line: null });
        const whole = await run(['comment', 'change-1', ...common, '--author', 'carol', '-m', 'overall fine']);
        expect(whole.comment.anchor).to.deep.equal({ kind: 'patchset' });
        const replied = await run(['comment', 'reply', 'change-1.comment-1', ...common, '--author', 'bob', '-m', 'because', '--resolve']);
        expect(replied).to.include({ thread_id: 'change-1.comment-1', resolution: 'resolved' });
        expect(replied.comment).to.include({ in_reply_to: 'change-1.comment-1', resolution: 'resolved' });
        const all = await run(['comments', 'change-1', ...common]);
        expect(all).to.include({ change_id: 'change-1', unresolved: 2, count: 3, next_cursor: null });
        expect(all.threads.map((t) => t.thread_id)).to.deep.equal(['change-1.comment-1', 'change-1.comment-2', 'change-1.comment-3']);
        expect(all.threads[0].comments.map((c) => c.author)).to.deep.equal(['alice', 'bob']);
        const open = await run(['comments', 'change-1', ...common, '--unresolved']);
        expect(open.threads.map((t) => t.thread_id)).to.deep.equal(['change-1.comment-2', 'change-1.comment-3']);
        const onFile = await run(['comments', 'change-1', ...common, '--path', 'a.txt']);
        expect(onFile.count).to.equal(2);
        const reopened = await run(['thread', 'reopen', 'change-1.comment-1', ...common, '--author', 'alice', '-m', 'not quite']);
        expect(reopened).to.include({ thread_id: 'change-1.comment-1', resolution: 'unresolved' });
        expect(reopened.comment).to.include({ body: 'not quite', in_reply_to: 'change-1.comment-4' });
        const resolved = await run(['thread', 'resolve', 'change-1.comment-1', ...common, '--author', 'alice']);
        expect(resolved).to.include({ resolution: 'resolved' });
        expect(resolved.comment.body).to.equal('');
    });
    it('keeps drafts to their author until review publish sends them with a vote', async () => {
        const draft = await run(['comment', 'change-1', ...common, '--author', 'dave', '--path', 'a.txt', '-m', 'a draft', '--draft']);
        expect(draft.comment).to.include({ published: false, author: 'dave' });
        expect(draft.comment.anchor).to.deep.equal({ kind: 'file', path: 'a.txt' });
        const id = draft.comment.comment_id;
        expect((await run(['comments', 'change-1', ...common])).threads.map((t) => t.thread_id)).to.not.include(id);
        const mine = await run(['comments', 'change-1', ...common, '--author', 'dave']);
        expect(mine.threads.find((t) => t.thread_id === id)).to.include({ draft: true });
        const published = await run(['review', 'publish', 'change-1', ...common, '--author', 'dave', '--approve', '-m', 'lgtm']);
        expect(published.published.map((c) => c.comment_id)).to.deep.equal([id]);
        expect(published.published[0].published).to.equal(true);
        expect(published.review).to.include({ action: 'approve', reviewer: 'dave', comment: 'lgtm', patchset_id: 'change-1.ps-1' });
        expect((await run(['comments', 'change-1', ...common])).threads.map((t) => t.thread_id)).to.include(id);
    });
    it('edits and deletes the author\'s own draft; a published comment or someone else\'s draft is refused in the user\'s words', async () => {
        const draft = await run(['comment', 'change-1', ...common, '--author', 'fay', '--path', 'a.txt', '--line', '1', '-m', 'frist', '--draft']);
        const id = draft.comment.comment_id;
        const edited = await run(['comment', 'edit', id, ...common, '--author', 'fay', '-m', 'first']);
        expect(edited).to.include({ thread_id: id, resolution: 'unresolved' });
        expect(edited.comment).to.include({ comment_id: id, body: 'first', published: false });
        const mine = await run(['comments', 'change-1', ...common, '--author', 'fay']);
        expect(mine.threads.find((t) => t.thread_id === id).comments[0].body).to.equal('first');
        const notHers = await cli(['comment', 'edit', id, ...common, '--author', 'gus', '-m', 'mine now']);
        expect(notHers.code).to.equal(1);
        expect(notHers.stderr).to.include(`gus has no draft ${id} in change change-1`);
        const published = await cli(['comment', 'delete', 'change-1.comment-1', ...common, '--author', 'alice']);
        expect(published.code).to.equal(1);
        expect(published.stderr).to.include('comment change-1.comment-1 is published: published comments are not edited or deleted; answer it with: cairn comment reply change-1.comment-1');
        expect(await run(['comment', 'delete', id, ...common, '--author', 'fay'])).to.deep.equal({ deleted: id });
        expect((await run(['comments', 'change-1', ...common, '--author', 'fay'])).threads.map((t) => t.thread_id)).to.not.include(id);
        const again = await cli(['comment', 'delete', id, ...common, '--author', 'fay']);
        expect(again.code).to.equal(1);
        expect(again.stderr).to.include(`fay has no draft ${id}`);
    });
    it('on a terminal, prints each thread as PATH:LINES, state, outdated mark, authors and text', async function () {
        if (spawnSync('script', ['--version']).status !== 0)
            this.skip();
        await fsp.writeFile(path.join(dir, 'a.txt'), 'one\nTWO\nthree\nfour\nfive\n');
        await run(['patchset', 'push', ...common, '--change', 'change-1', dir]);
        const r = await onTty(['comments', 'change-1', ...common, '--patchset', 'change-1.ps-2']);
        expect(r.status, r.stdout).to.equal(0);
        expect(r.stdout, r.stdout).to.not.include('{');
        expect(r.stdout, r.stdout).to.include('task-1.change-1: 3 unresolved thread(s), shown on change-1.ps-2');
        expect(r.stdout).to.match(/a\.txt:2-3  resolved \[outdated: lines changed\]  change-1\.comment-1/);
        expect(r.stdout).to.match(/alice  change-1\.comment-1\r?\n {4}why \*\*two\*\*\?/);
        expect(r.stdout).to.match(/bob \(resolves\)  change-1\.comment-4/);
        expect(r.stdout).to.match(/a\.txt:1 \(base\)  unresolved  change-1\.comment-2/);
        expect(r.stdout).to.include('(patchset)  unresolved  change-1.comment-3');
        const wrote = await onTty(['comment', 'change-1', ...common, '--author', 'erin', '--path', 'a.txt', '--line', '5', '-m', 'new line']);
        expect(wrote.stdout).to.match(/wrote change-1\.comment-\d+ on a\.txt:5; thread change-1\.comment-\d+ is unresolved/);
    });
    it('exits 2 on usage errors and 1 with the refusal in the user\'s words', async () => {
        for (const args of [
            ['comment'], ['comment', 'change-1', ...common, '--author', 'a'], ['comment', 'change-1', ...common, '-m', 'x'],
            ['comment', 'change-1', ...common, '--author', 'a', '-m', 'x', '--line', '2'],
            ['comment', 'change-1', ...common, '--author', 'a', '-m', 'x', '--path', 'a.txt', '--line', 'two'],
            ['comment', 'change-1', ...common, '--author', 'a', '-m', 'x', '--path', 'a.txt', '--line', '3', '--end-line', '2'],
            ['comment', 'change-1', ...common, '--author', 'a', '-m', 'x', '--path', 'a.txt', '--line', '3', '--side', 'left'],
            ['comment', 'reply', 'thread-7', ...common, '--author', 'a', '-m', 'x'],
            ['comment', 'reply', 'change-1.comment-1', ...common, '--author', 'a', '-m', 'x', '--resolve', '--reopen'],
            ['comment', 'edit', 'change-1.comment-1', ...common, '--author', 'a'], ['comment', 'edit', 'change-1.comment-1', ...common, '-m', 'x'],
            ['comment', 'edit', 'comment-1', ...common, '--author', 'a', '-m', 'x'], ['comment', 'delete', 'change-1.comment-1', ...common],
            ['comment', 'delete', 'change-1.comment-1', ...common, '--author', 'a', '-m', 'x'],
            ['comments'], ['thread'], ['thread', 'close', 'change-1.comment-1', ...common, '--author', 'a'],
            ['thread', 'resolve', 'change-1.comment-1', ...common],
            ['review', 'publish', 'change-1', ...common, '--author', 'a', '--approve', '--comment'],
            ['review', 'publish', 'change-1', ...common, '--author', 'a', '-m', 'no vote'],
        ]) {
            const r = await cli(args);
            expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(2);
        }
        const noThread = await cli(['thread', 'resolve', 'change-1.comment-99', ...common, '--author', 'a']);
        expect(noThread.code).to.equal(1);
        expect(noThread.stderr).to.include('no thread change-1.comment-99 in change change-1 (list its threads with: cairn comments change-1)');
        const already = await cli(['thread', 'resolve', 'change-1.comment-1', ...common, '--author', 'a']);
        expect(already.code).to.equal(1);
        expect(already.stderr).to.include('thread change-1.comment-1 is already resolved');
        const noComment = await cli(['comment', 'reply', 'change-1.comment-99', ...common, '--author', 'a', '-m', 'x']);
        expect(noComment.code).to.equal(1);
        expect(noComment.stderr).to.include('no comment change-1.comment-99 in change change-1');
        const noChange = await cli(['comments', 'change-9', ...common]);
        expect(noChange.code).to.equal(1);
        expect(noChange.stderr).to.include('no change change-9 in this repository');
        const beyond = await cli(['comment', 'change-1', ...common, '--author', 'a', '-m', 'x', '--path', 'a.txt', '--line', '99']);
        expect(beyond.code).to.equal(1);
        expect(beyond.stderr).to.match(/HTTP 400: .*line/);
        const nothing = await cli(['review', 'publish', 'change-1', ...common, '--author', 'nobody']);
        expect(nothing.code).to.equal(1);
        expect(nothing.stderr).to.include('HTTP 400');
    });
    it('suggests edits (--suggest, --suggest-file), edits a draft\'s suggestion, and applies them with change apply-suggestions', async () => {
        const current = (await run(['change', 'show', 'change-1', ...common])).change.current_patchset_id;
        const a = await run(['comment', 'change-1', ...common, '--author', 'gus', '--patchset', current, '--path', 'a.txt', '--line', '1', '-m', 'caps', '--suggest', 'ONE\n']);
        expect(a.comment.suggestion).to.equal('ONE\n');
        const file = path.join(tempDir(), 'suggestion.txt');
        await fsp.writeFile(file, 'FOUR\nFOUR AND A HALF\n');
        const b = await run(['comment', 'change-1', ...common, '--author', 'hal', '--patchset', current, '--path', 'a.txt', '--line', '4', '-m', 'more', '--suggest', 'draft text', '--draft']);
        expect((await run(['comment', 'edit', b.comment.comment_id, ...common, '--author', 'hal', '--suggest-file', file])).comment.suggestion).to.equal('FOUR\nFOUR AND A HALF\n');
        await run(['review', 'publish', 'change-1', ...common, '--author', 'hal']);
        const overlap = await run(['comment', 'change-1', ...common, '--author', 'ivy', '--patchset', current, '--path', 'a.txt', '--line', '1', '--end-line', '2', '-m', 'both', '--suggest', '']);
        const clash = await cli(['change', 'apply-suggestions', 'change-1', a.comment.comment_id, overlap.comment.comment_id, ...common, '--author', 'ann']);
        expect(clash.code).to.equal(1);
        expect(clash.stderr).to.include('these suggestions overlap (or the change moved on): apply them one at a time');
        const applied = await run(['change', 'apply-suggestions', 'change-1', a.comment.comment_id, b.comment.comment_id, ...common, '--author', 'ann']);
        expect(applied.patchset.applied_suggestions).to.deep.equal([{ comment_id: a.comment.comment_id, author: 'gus' }, { comment_id: b.comment.comment_id, author: 'hal' }]);
        expect(applied.applied.map((x) => x.comment_id)).to.deep.equal([a.comment.comment_id, b.comment.comment_id]);
        const out = path.join(tempDir(), 'pulled');
        await pull({ server: s.url, repo, snapshot: applied.patchset.revision_snapshot_id, out, progress: false });
        expect(await fsp.readFile(path.join(out, 'a.txt'), 'utf8')).to.equal('ONE\nTWO\nthree\nFOUR\nFOUR AND A HALF\nfive\n');
        const stale = await cli(['change', 'apply-suggestions', 'change-1', overlap.comment.comment_id, ...common, '--author', 'ann']);
        expect(stale.code).to.equal(1);
        expect(stale.stderr).to.match(/HTTP 400: .*not of the current patchset/);
        for (const args of [
            ['change', 'apply-suggestions', 'change-1', ...common, '--author', 'ann'],
            ['change', 'apply-suggestions', 'change-1', 'change-1.comment-1', ...common],
            ['change', 'apply-suggestions', 'change-1', 'change-2.comment-1', ...common, '--author', 'ann'],
            ['comment', 'change-1', ...common, '--author', 'a', '-m', 'x', '--suggest', 'y'],
            ['comment', 'change-1', ...common, '--author', 'a', '-m', 'x', '--path', 'a.txt', '--line', '1', '--side', 'base', '--suggest', 'y'],
            ['comment', 'change-1', ...common, '--author', 'a', '-m', 'x', '--path', 'a.txt', '--line', '1', '--suggest', 'y', '--suggest-file', file],
            ['comment', 'change-1', ...common, '--author', 'a', '-m', 'x', '--path', 'a.txt', '--line', '1', '--suggest-file', path.join(tempDir(), 'missing')],
            ['comment', 'reply', 'change-1.comment-1', ...common, '--author', 'a', '-m', 'x', '--suggest', 'y'],
            ['comment', 'edit', b.comment.comment_id, ...common, '--author', 'hal', '--suggest', 'y', '--no-suggest'],
        ]) {
            const r = await cli(args);
            expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(2);
        }
    });
    it('on a terminal, shows the diff lines around each line thread, coloured as cairn diff colours them (plain with NO_COLOR)', async function () {
        if (spawnSync('script', ['--version']).status !== 0)
            this.skip();
        const tty = async (args, env = {}) => (await onTty(args, env)).stdout.replace(/\r\n/g, '\n');
        const block = (out, id) => out.split('\n\n').find((b) => b.includes(`  ${id}\n`)) ?? '';
        // Thread 1 is on lines 2-3 of patchset 1, whose diff adds line 5 ("five") after "four".
        const plain = block(await tty(['comments', 'change-1', ...common], { NO_COLOR: '1' }), 'change-1.comment-1');
        expect(plain).to.include([
            '         2 two',
            '         3 three',
            '         4 four',
            '    +    5 five',
            '  alice  change-1.comment-1',
        ].join('\n'));
        expect(plain).to.not.include('\u001b[');
        const coloured = block(await tty(['comments', 'change-1', ...common]), 'change-1.comment-1');
        expect(coloured).to.include('    \u001b[32m+    5 five\u001b[0m');
        // Outdated on patchset 2 (its line 2 changed): the lines it was written on, from patchset 1's diff.
        const outdated = block(await tty(['comments', 'change-1', ...common, '--patchset', 'change-1.ps-2'], { NO_COLOR: '1' }), 'change-1.comment-1');
        expect(outdated).to.include('[outdated: lines changed]');
        expect(outdated).to.include('         2 two');
        // A base-side thread on line 1: the diff's lines near it, numbered on the base side (line 1 itself is outside the hunk).
        expect(block(await tty(['comments', 'change-1', ...common], { NO_COLOR: '1' }), 'change-1.comment-2')).to.match(/\n {9}2 two\n {9}3 three\n  carol/);
        // A patchset thread has no lines: no diff lines, no note.
        expect(block(await tty(['comments', 'change-1', ...common], { NO_COLOR: '1' }), 'change-1.comment-3')).to.match(/^\(patchset\)  unresolved  change-1\.comment-3\n  carol/);
        // Off a terminal the JSON is as before: no diff lines in it.
        const json = await run(['comments', 'change-1', ...common]);
        expect(JSON.stringify(json)).to.not.include('five');
    });
    it('on a terminal, shows a suggested edit as the lines it puts in (+), or says it deletes them', async function () {
        if (spawnSync('script', ['--version']).status !== 0)
            this.skip();
        const tty = async (args) => (await onTty(args, { NO_COLOR: '1' })).stdout.replace(/\r\n/g, '\n');
        const current = (await run(['change', 'show', 'change-1', ...common])).change.current_patchset_id;
        const two = await run(['comment', 'change-1', ...common, '--author', 'kim', '--patchset', current, '--path', 'a.txt', '--line', '2', '--end-line', '3', '-m', 'shorter', '--suggest', 'TWO-THREE\nand more\n']);
        const gone = await run(['comment', 'change-1', ...common, '--author', 'kim', '--patchset', current, '--path', 'a.txt', '--line', '1', '-m', 'drop it', '--suggest', '']);
        const out = await tty(['comments', 'change-1', ...common, '--patchset', current]);
        const block = (id) => out.split('\n\n').find((b) => b.includes(`  ${id}\n`)) ?? '';
        expect(block(two.comment.comment_id)).to.include(['    suggested replacement for a.txt:2-3:', '      +TWO-THREE', '      +and more'].join('\n'));
        expect(block(gone.comment.comment_id)).to.include('    suggested replacement for a.txt:1: delete the lines');
    });
});
//# sourceMappingURL=comment-cli.test.js.map