// Push for review with the real git client (docs/git.md "Push for review"): `git push URL
// HEAD:refs/for/main` against a child `cairn serve` creates a task, a change and its first
// patchset; the same Change-Id adds a patchset, as do %change= and %task=; refusals (an unrelated
// history, refs/heads, an unknown option, a malformed pack, a push over the limit, a ref with odd
// bytes) write nothing; and a push killed with SIGKILL at each step of its commit leaves all of
// it or none of it.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { promises as fsp } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { importGit } from '../lib/client/git-import.js';
import { GIT_COMMIT } from '../lib/domain/git.js';
import { GIT_CHANGE_KEY } from '../lib/domain/git-push.js';
import { ContentStore } from '../lib/store/content-store.js';
import { NO_PROGRESS } from '../lib/client/progress.js';
import { LandDesk } from '../lib/authority/workflow/lands.js';
import type { LandGates } from '../lib/authority/workflow/gates.js';
import { api, cli, ok, register, spawnServer, startTestServer, tempDir, until, type ChildServer } from './helpers.js';
import { commit, git, hasGit } from './git-fixture.js';

type Json = Record<string, any>;
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;

/** git as a client (asynchronous, no config of the machine). */
function client(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.org', GIT_COMMITTER_NAME: 'Ada', GIT_COMMITTER_EMAIL: 'ada@example.org', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const changeIdOf = (seed: string) => `I${createHash('sha1').update(seed).digest('hex')}`;

function pkt(text: string | Buffer): Buffer {
  const body = typeof text === 'string' ? Buffer.from(text, 'latin1') : text;
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body]);
}
/** A pack of no objects (git's own trailer: the sha1 of what precedes it). */
function emptyPack(): Buffer {
  const head = Buffer.from('PACK\0\0\0\x02\0\0\0\0', 'latin1');
  return Buffer.concat([head, createHash('sha1').update(head).digest()]);
}

(hasGit ? describe : describe.skip)('git push for review', function () {
  this.timeout(180_000);
  const template = path.join(tempDir(), 'data');
  const spawned: ChildServer[] = [];
  let repo: number;
  let src: string;

  /** A child server on a copy of the template (a repository with `main` imported from git). */
  async function server(args: string[] = [], env: Record<string, string> = {}): Promise<{ s: ChildServer; data: string }> {
    const data = path.join(tempDir(), 'data');
    await fsp.cp(template, data, { recursive: true });
    const s = await spawnServer(data, args, true, env);
    spawned.push(s);
    return { s, data };
  }

  async function cloneOf(s: ChildServer): Promise<{ url: string; dir: string }> {
    const url = `${s.url}${R(repo, '/git/main.git')}`;
    const dir = path.join(tempDir('cairn-push-'), 'work');
    const cloned = await client(['clone', '-q', url, dir]);
    expect(cloned.code, cloned.stderr).to.equal(0);
    return { url, dir };
  }

  async function change(dir: string, file: string, text: string, message: string): Promise<string> {
    await fsp.mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await fsp.writeFile(path.join(dir, file), text);
    expect((await client(['-C', dir, 'add', '-A'])).code).to.equal(0);
    const c = await client(['-C', dir, 'commit', '-q', '-m', message]);
    expect(c.code, c.stderr).to.equal(0);
    return (await client(['-C', dir, 'rev-parse', 'HEAD'])).stdout.trim();
  }

  const get = (s: ChildServer, p: string) => ok(api(s.url, 'GET', R(repo, p)));
  const changes = async (s: ChildServer) => (await get(s, '/changes?limit=100')).changes as Json[];

  before(async () => {
    src = path.join(tempDir('cairn-git-'), 'src');
    await fsp.mkdir(src, { recursive: true });
    git(src, ['init', '-q', '-b', 'main']);
    await fsp.writeFile(path.join(src, 'README.md'), '# demo\n');
    git(src, ['add', '-A']);
    commit(src, 'first\n');
    await fsp.writeFile(path.join(src, 'a.txt'), 'one\n');
    git(src, ['add', '-A']);
    commit(src, 'second\n');
    const s = await spawnServer(template);
    spawned.push(s);
    repo = await register(s.url, 'push');
    await importGit({ server: s.url, repo, source: src, line: 'main', progress: NO_PROGRESS });
    s.proc.kill('SIGTERM');
    await s.exited;
  });
  after(async () => {
    for (const s of spawned) if (s.proc.exitCode === null && s.proc.signalCode === null) { s.proc.kill('SIGKILL'); await s.exited; }
  });

  it('creates a task, a change and its first patchset, and the same Change-Id adds a patchset', async () => {
    const { s, data } = await server();
    const { url, dir } = await cloneOf(s);
    const mainHead = (await get(s, '/lines/main')).head_snapshot_id;
    const key = changeIdOf('one');
    const first = await change(dir, 'src/new.txt', 'hello\n', `Add the greeting\n\nPeople like to be greeted.\n\nChange-Id: ${key}\n`);
    const pushed = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
    expect(pushed.code, pushed.stderr).to.equal(0);
    expect(pushed.stderr).to.match(new RegExp(`remote:\\s+${s.url}/ui/repos/${repo}/changes/task-1\\.change-1 Add the greeting \\[NEW\\]`));
    expect(pushed.stderr).to.include('[new reference]');
    const [c] = await changes(s);
    expect(c).to.include({ change_ref: 'task-1.change-1', title: 'Add the greeting', base_line: 'main', patchset_count: 1 });
    const task = (await get(s, '/tasks/task-1')).task;
    expect(task).to.include({ title: 'Add the greeting', intent: `People like to be greeted.\n\nChange-Id: ${key}` });
    const ps = (await get(s, '/changes/change-1/patchsets')).patchsets[0];
    expect(ps).to.include({ base_snapshot_id: mainHead, author: 'ada@example.org' });
    expect(ps.changed_files.map((f: Json) => f.path)).to.deep.equal(['src/new.txt']);
    const record = (await get(s, `/git/commits/${first}`)).git_commit;
    expect(record).to.include({ origin: 'pushed', snapshot_id: ps.revision_snapshot_id, change_id: 'change-1', commit_id: first });

    // Amended with the same Change-Id: patchset 2 of the same change.
    await fsp.writeFile(path.join(dir, 'src/new.txt'), 'hello, world\n');
    expect((await client(['-C', dir, 'commit', '-q', '-a', '--amend', '--no-edit'])).code).to.equal(0);
    const again = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stderr).to.include('Updated change (change-1.ps-2)');
    expect(await changes(s)).to.have.length(1);
    const both = (await get(s, '/changes/change-1/patchsets')).patchsets as Json[];
    expect(both.map((p) => p.patchset_number)).to.deep.equal([1, 2]);
    expect(both[1].base_snapshot_id).to.equal(mainHead);

    // The same commit again: nothing new.
    const same = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
    expect(same.code).to.not.equal(0);
    expect(same.stderr).to.include('no new changes');
    s.proc.kill('SIGTERM');
    await s.exited;
    const check = await cli(['fsck', '--data', data]);
    expect(check.code, check.stdout + check.stderr).to.equal(0);

    // fsck reports a pushed commit that names no change, and a Change-Id key naming a change that is not stored.
    const { store } = await ContentStore.open(path.join(data, 'repositories', String(repo)));
    try {
      const rec = store.entity<Record<string, unknown>>(GIT_COMMIT, record.snapshot_id)!;
      await store.transact(async (tx) => {
        tx.upsert(GIT_COMMIT, record.snapshot_id, { ...rec, change_id: undefined });
        tx.upsert(GIT_CHANGE_KEY, `main ${key}`, { line: 'main', change_key: key, change_id: 'change-99' });
      });
    } finally {
      store.close();
    }
    const damaged = await cli(['fsck', '--data', data]);
    expect(damaged.code, damaged.stdout + damaged.stderr).to.equal(1);
    expect(damaged.stdout + damaged.stderr).to.include('a pushed commit names no stored change').and.to.include(`Change-Id key main ${key}`);
  });

  it('%change= adds a patchset to a named change, %task= opens a change under a named task', async () => {
    const { s } = await server();
    const { url, dir } = await cloneOf(s);
    await change(dir, 'x.txt', 'x\n', 'Start x');
    expect((await client(['-C', dir, 'push', url, 'HEAD:refs/for/main'])).code).to.equal(0);
    await change(dir, 'x.txt', 'x2\n', 'More x (no Change-Id)');
    const named = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main%change=change-1']);
    expect(named.code, named.stderr).to.equal(0);
    expect((await get(s, '/changes/change-1')).change.patchset_count).to.equal(2);
    // Its base is the first patchset's commit: a stacked patchset.
    const ps2 = (await get(s, '/changes/change-1/patchsets')).patchsets[1];
    expect(ps2.base_snapshot_id).to.equal((await get(s, '/changes/change-1/patchsets')).patchsets[0].revision_snapshot_id);

    expect((await client(['-C', dir, 'reset', '-q', '--hard', 'origin/main'])).code).to.equal(0);
    await change(dir, 'y.txt', 'y\n', 'Also y');
    const underTask = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main%task=task-1']);
    expect(underTask.code, underTask.stderr).to.equal(0);
    const all = await changes(s);
    expect(all.map((c) => c.change_ref).sort()).to.deep.equal(['task-1.change-1', 'task-1.change-2']);
    expect((await get(s, '/tasks?limit=10')).tasks).to.have.length(1);
  });

  it('a merge commit is based on its first parent; a submodule is kept with the git commit and named on the output', async () => {
    const { s } = await server();
    const { url, dir } = await cloneOf(s);
    const mainHead = (await get(s, '/lines/main')).head_snapshot_id;
    expect((await client(['-C', dir, 'checkout', '-q', '-b', 'side'])).code).to.equal(0);
    await change(dir, 'side.txt', 'side\n', 'Side work');
    expect((await client(['-C', dir, 'checkout', '-q', 'main'])).code).to.equal(0);
    expect((await client(['-C', dir, 'merge', '-q', '--no-ff', '-m', 'Merge side', 'side'])).code).to.equal(0);
    const merged = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
    expect(merged.code, merged.stderr).to.equal(0);
    const ps = (await get(s, '/changes/change-1/patchsets')).patchsets[0];
    expect(ps.base_snapshot_id).to.equal(mainHead);
    expect(ps.changed_files.map((f: Json) => f.path)).to.deep.equal(['side.txt']);

    expect((await client(['-C', dir, 'reset', '-q', '--hard', 'origin/main'])).code).to.equal(0);
    await fsp.writeFile(path.join(dir, 'uses-lib.txt'), 'x\n');
    expect((await client(['-C', dir, 'add', '-A'])).code).to.equal(0);
    expect((await client(['-C', dir, 'update-index', '--add', '--cacheinfo', `160000,${'ab'.repeat(20)},vendor/lib`])).code).to.equal(0);
    expect((await client(['-C', dir, 'commit', '-q', '-m', 'Vendor a library'])).code).to.equal(0);
    const sub = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
    expect(sub.code, sub.stderr).to.equal(0);
    expect(sub.stderr, sub.stderr).to.include('submodule vendor/lib (abababababab) is kept with the git commit, not in the snapshot');
    const head = (await client(['-C', dir, 'rev-parse', 'HEAD'])).stdout.trim();
    expect((await get(s, `/git/commits/${head}`)).git_commit.gitlinks).to.deep.equal([{ path: 'vendor/lib', commit_id: 'ab'.repeat(20) }]);
  });

  it('takes the author from --ui-identity-header when the server has one', async () => {
    const { s } = await server(['--ui-identity-header', 'X-Remote-User']);
    const { url, dir } = await cloneOf(s);
    await change(dir, 'z.txt', 'z\n', 'Zed');
    const pushed = await client(['-C', dir, '-c', 'http.extraHeader=X-Remote-User: ann', 'push', url, 'HEAD:refs/for/main']);
    expect(pushed.code, pushed.stderr).to.equal(0);
    expect((await get(s, '/changes/change-1/patchsets')).patchsets[0].author).to.equal('ann');
  });

  it('a Change-Id belongs to its change\'s owner: another identified pusher is refused (the Change-Id or %change=), and every patchset records who pushed it', async () => {
    const { s } = await server(['--ui-identity-header', 'X-Remote-User']);
    const { url, dir } = await cloneOf(s);
    const as = (who: string) => ['-C', dir, '-c', `http.extraHeader=X-Remote-User: ${who}`];
    const key = changeIdOf('owned');
    await change(dir, 'own.txt', 'ann\n', `Ann's work\n\nChange-Id: ${key}\n`);
    expect((await client([...as('ann'), 'push', url, 'HEAD:refs/for/main'])).code).to.equal(0);
    expect((await get(s, '/changes/change-1')).change.owner).to.equal('ann');
    const eventsBefore = (await get(s, '/events?limit=1000')).events.length;
    // Mallory pushes a commit that claims to be Linus's, under Ann's Change-Id.
    expect((await client(['-C', dir, 'reset', '-q', '--hard', 'origin/main'])).code).to.equal(0);
    await change(dir, 'own.txt', 'mallory\n', `Take over\n\nChange-Id: ${key}\n`);
    const forged = { GIT_AUTHOR_NAME: 'Linus Torvalds', GIT_AUTHOR_EMAIL: 'torvalds@linux-foundation.org', GIT_COMMITTER_NAME: 'Linus Torvalds', GIT_COMMITTER_EMAIL: 'torvalds@linux-foundation.org' };
    expect((await client(['-C', dir, 'commit', '-q', '--amend', '--reset-author', '-m', `Take over\n\nChange-Id: ${key}\n`], forged)).code).to.equal(0);
    const takeover = await client([...as('mallory'), 'push', url, 'HEAD:refs/for/main']);
    expect(takeover.code).to.not.equal(0);
    expect(takeover.stderr).to.include('change-1 belongs to ann: a push by mallory cannot add a patchset to it; push with a new Change-Id for a change of your own');
    const named = await client([...as('mallory'), 'push', url, 'HEAD:refs/for/main%change=change-1']);
    expect(named.code).to.not.equal(0);
    expect(named.stderr).to.include('change-1 belongs to ann: a push by mallory cannot add a patchset to it');
    expect((await get(s, '/changes/change-1')).change.patchset_count).to.equal(1);
    expect((await get(s, '/events?limit=1000')).events.length).to.equal(eventsBefore);
    // Ann's next ordinary push is a patchset of her own change.
    expect((await client(['-C', dir, 'reset', '-q', '--hard', 'origin/main'])).code).to.equal(0);
    await change(dir, 'own.txt', 'ann again\n', `Ann's work, again\n\nChange-Id: ${key}\n`);
    expect((await client([...as('ann'), 'push', url, 'HEAD:refs/for/main'])).code).to.equal(0);
    const patchsets = (await get(s, '/changes/change-1/patchsets')).patchsets as Json[];
    expect(patchsets.map((p) => p.pushed_by)).to.deep.equal(['ann', 'ann']);
    // With a Change-Id of its own, Mallory's forged commit is a change of Mallory's: pushed_by says who pushed it.
    expect((await client(['-C', dir, 'reset', '-q', '--hard', 'origin/main'])).code).to.equal(0);
    await change(dir, 'm.txt', 'm\n', 'placeholder');
    expect((await client(['-C', dir, 'commit', '-q', '--amend', '--reset-author', '-m', `Linus says hi\n\nChange-Id: ${changeIdOf('mallory')}\n`], forged)).code).to.equal(0);
    const own = await client([...as('mallory'), 'push', url, 'HEAD:refs/for/main']);
    expect(own.code, own.stderr).to.equal(0);
    const head = (await client(['-C', dir, 'rev-parse', 'HEAD'])).stdout.trim();
    const mine = (await get(s, '/changes/change-2')).change;
    expect(mine.owner).to.equal('mallory');
    expect((await get(s, '/changes/change-2/patchsets')).patchsets[0].pushed_by).to.equal('mallory');
    const recorded = (await get(s, `/git/commits/${head}`)).git_commit;
    expect(recorded.author.name).to.equal('Linus Torvalds');
    expect(recorded.pushed_by).to.equal('mallory');
  });

  it('an unidentified push (no identity header) adds to any change as before; pushed_by is null', async () => {
    const { s } = await server();
    const { url, dir } = await cloneOf(s);
    const key = changeIdOf('anyone');
    await change(dir, 'x.txt', 'x\n', `X\n\nChange-Id: ${key}\n`);
    expect((await client(['-C', dir, 'push', url, 'HEAD:refs/for/main'])).code).to.equal(0);
    await change(dir, 'x.txt', 'y\n', `X again\n\nChange-Id: ${key}\n`);
    expect((await client(['-C', dir, 'push', url, 'HEAD:refs/for/main'])).code).to.equal(0);
    const patchsets = (await get(s, '/changes/change-1/patchsets')).patchsets as Json[];
    expect(patchsets.map((p) => p.pushed_by)).to.deep.equal([null, null]);
    expect((await get(s, '/changes/change-1')).change.owner ?? null).to.equal(null);
  });

  it('refuses, writing nothing: an unknown history, refs/heads, an unknown option, a ref with odd bytes', async () => {
    const { s } = await server();
    const { url, dir } = await cloneOf(s);
    const eventsBefore = (await get(s, '/events?limit=1000')).events.length;
    // A history of its own (not based on main): its root has no parent cairn could base it on.
    expect((await client(['-C', dir, 'checkout', '-q', '--orphan', 'elsewhere'])).code).to.equal(0);
    const root = await change(dir, 'p.txt', 'p\n', 'Unrelated root');
    await change(dir, 'q.txt', 'q\n', 'Child');
    const unknown = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
    expect(unknown.code).to.not.equal(0);
    expect(unknown.stderr).to.include(`${root.slice(0, 12)} has no parent: a change is reviewed against main; fetch and rebase onto main`);
    expect((await client(['-C', dir, 'checkout', '-q', 'main'])).code).to.equal(0);
    await change(dir, 'p.txt', 'p\n', 'Unpushed parent');
    await change(dir, 'q.txt', 'q\n', 'Child');

    const heads = await client(['-C', dir, 'push', url, 'HEAD:refs/heads/main']);
    expect(heads.code).to.not.equal(0);
    expect(heads.stderr).to.include('pushes to refs/heads/* are refused: lines move only through lands; push for review to refs/for/main');

    expect((await client(['-C', dir, 'reset', '-q', '--hard', 'HEAD~1'])).code).to.equal(0);
    const option = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main%wip']);
    expect(option.code).to.not.equal(0);
    expect(option.stderr).to.include('unknown push option %wip: refs/for/main takes %task=task-N and %change=change-N');
    const odd = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main%task=tâche']);
    expect(odd.code).to.not.equal(0);
    expect(odd.stderr).to.include('does not name a task');
    const twice = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main%task=task-1,task=task-2']);
    expect(twice.code).to.not.equal(0);
    expect(twice.stderr).to.include('%task= may be given once');
    const noLine = await client(['-C', dir, 'push', url, 'HEAD:refs/for/nowhere']);
    expect(noLine.stderr).to.include('line nowhere does not exist');

    // Paths a cairn tree cannot hold: a backslash, a name that is not UTF-8.
    expect((await client(['-C', dir, 'reset', '-q', '--hard', 'origin/main'])).code).to.equal(0);
    await change(dir, 'dir/back\\slash.txt', 'b\n', 'A backslash');
    const backslash = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
    expect(backslash.code).to.not.equal(0);
    expect(backslash.stderr).to.include('cannot be stored: it holds a backslash');
    expect((await client(['-C', dir, 'reset', '-q', '--hard', 'HEAD~1'])).code).to.equal(0);
    await fsp.writeFile(Buffer.from(`${dir}/caf\xe9.txt`, 'latin1'), 'latin-1 name\n');
    expect((await client(['-C', dir, 'add', '-A'])).code).to.equal(0);
    expect((await client(['-C', dir, 'commit', '-q', '-m', 'Latin-1 name'])).code).to.equal(0);
    const latin = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
    expect(latin.code).to.not.equal(0);
    expect(latin.stderr).to.include('is not UTF-8: cairn names paths in UTF-8');

    // Control bytes in a ref (git itself would not send them): refused, and the report stays pkt-lines.
    const head = (await client(['-C', dir, 'rev-parse', 'origin/main'])).stdout.trim();
    const body = Buffer.concat([pkt(`${'0'.repeat(40)} ${head} refs/for/main%\x01\x7f\0report-status side-band-64k\n`), Buffer.from('0000'), emptyPack()]);
    const res = await fetch(`${url}/git-receive-pack`, { method: 'POST', headers: { 'content-type': 'application/x-git-receive-pack-request' }, body });
    expect(res.status).to.equal(200);
    const text = Buffer.from(await res.arrayBuffer()).toString('latin1');
    expect(text).to.include('ng refs/for/main% ');
    expect(text).to.not.include('\x7f');
    expect(text).to.not.include('main%\x01');
    expect(await changes(s)).to.deep.equal([]);
    expect((await get(s, '/events?limit=1000')).events.length).to.equal(eventsBefore);
  });

  it('a malformed pack is refused by git\'s checks and writes nothing; a push over the limit is refused', async () => {
    const { s, data } = await server([], { CAIRN_GIT_PUSH_MAX_BYTES: '200000' });
    const { url, dir } = await cloneOf(s);
    const head = (await client(['-C', dir, 'rev-parse', 'HEAD'])).stdout.trim();
    const body = Buffer.concat([pkt(`${'0'.repeat(40)} ${'ab'.repeat(20)} refs/for/main\0report-status side-band-64k\n`), Buffer.from('0000'), Buffer.from('PACK\0\0\0\x02\0\0\0\x01'), randomBytes(300)]);
    const res = await fetch(`${url}/git-receive-pack`, { method: 'POST', headers: { 'content-type': 'application/x-git-receive-pack-request' }, body });
    expect(res.status).to.equal(200);
    const text = Buffer.from(await res.arrayBuffer()).toString('latin1');
    expect(text).to.match(/unpack (?!ok)/);
    expect(text).to.include('ng refs/for/main unpacker error');
    expect(head).to.match(/^[0-9a-f]{40}$/);

    await fsp.writeFile(path.join(dir, 'big.bin'), randomBytes(400_000));
    expect((await client(['-C', dir, 'add', '-A'])).code).to.equal(0);
    expect((await client(['-C', dir, 'commit', '-q', '-m', 'Big'])).code).to.equal(0);
    const big = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
    expect(big.code).to.not.equal(0);
    expect(big.stderr).to.match(/413|larger than 200000 bytes/);
    expect(await changes(s)).to.deep.equal([]);

    // A client that goes away in the middle of its body: nothing is written, the quarantine goes.
    // (The refused pushes' quarantines are gone first, so the wait below sees this push's.)
    const quarantines = async () => (await fsp.readdir(path.join(data, 'git-shadow', 'quarantine')).catch(() => [])).length;
    await until('the refused pushes\' quarantines are removed', async () => ((await quarantines()) === 0 ? true : null));
    const u = new URL(`${url}/git-receive-pack`);
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/x-git-receive-pack-request', 'content-length': '100000' } });
    req.on('error', () => undefined);
    req.write(Buffer.concat([pkt(`${'0'.repeat(40)} ${'ab'.repeat(20)} refs/for/main\0report-status\n`), Buffer.from('0000PACK')]));
    await until('the push is being received', async () => ((await fsp.readdir(path.join(data, 'git-shadow', 'quarantine')).catch(() => [])).length > 0 ? true : null));
    req.destroy();
    await until('the quarantine is removed', async () => ((await fsp.readdir(path.join(data, 'git-shadow', 'quarantine')).catch(() => [])).length === 0 ? true : null));
    expect(await changes(s)).to.deep.equal([]);
    // No quarantine is left behind.
    expect(await fsp.readdir(path.join(data, 'git-shadow', 'quarantine')).catch(() => [])).to.deep.equal([]);

    // Clients that go away at once, some before the server has read their request: each is
    // let go (its git place and quarantine freed), none waits for a body that will never come.
    for (let i = 0; i < 20; i++) {
      const gone = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/x-git-receive-pack-request', 'content-length': '100000' } });
      gone.on('error', () => undefined);
      gone.write(Buffer.concat([pkt(`${'0'.repeat(40)} ${'ab'.repeat(20)} refs/for/main\0report-status\n`), Buffer.from('0000PACK')]));
      if (i % 2 === 0) gone.destroy();
      else setImmediate(() => gone.destroy());
    }
    await until('every quarantine is removed', async () => ((await quarantines()) === 0 ? true : null));
    // Their git places are free: this client's four (perClient) serve four reads at once, where a
    // request still waiting for its body would hold one until the body's 30 s timeout.
    const reads = await Promise.all([0, 1, 2, 3].map(() => client(['ls-remote', url])));
    for (const r of reads) expect(r.code, r.stderr).to.equal(0);
    expect(await changes(s)).to.deep.equal([]);
  });

  it('refuses a pushed tree naming a blob of another line it did not bring (nothing is borrowed from the shadow); an honest push still passes', async () => {
    // Line `secret` (exported, so its blob is in the shadow) holds what main's URL must not give out.
    const secretSrc = path.join(tempDir('cairn-git-'), 'secret');
    await fsp.mkdir(secretSrc, { recursive: true });
    git(secretSrc, ['init', '-q', '-b', 'main']);
    await fsp.writeFile(path.join(secretSrc, 'secret.txt'), 'the launch code is 0000\n');
    git(secretSrc, ['add', '-A']);
    commit(secretSrc, 'secret\n');
    const { s } = await server();
    await importGit({ server: s.url, repo, source: secretSrc, line: 'secret', progress: NO_PROGRESS });
    await ok(api(s.url, 'POST', R(repo, '/git/exports'), { json: { line: 'secret' } }));
    const { url, dir } = await cloneOf(s);
    // A commit on main whose tree names the secret blob by id: the client cannot send the blob
    // (it does not have it), so its pack holds the commit and the tree only.
    const blobId = git(secretSrc, ['rev-parse', 'HEAD:secret.txt']).trim();
    const listing = (await client(['-C', dir, 'ls-tree', 'HEAD'])).stdout;
    const mk = spawn('git', ['-C', dir, 'mktree', '--missing'], { stdio: ['pipe', 'pipe', 'inherit'] });
    let treeId = '';
    mk.stdout.on('data', (d) => { treeId += d; });
    mk.stdin.end(`${listing}100644 blob ${blobId}\tleak.txt\n`);
    await new Promise((resolve) => mk.on('close', resolve));
    treeId = treeId.trim();
    const head = (await client(['-C', dir, 'rev-parse', 'HEAD'])).stdout.trim();
    const commitId = (await client(['-C', dir, 'commit-tree', treeId, '-p', head, '-m', 'Leak'])).stdout.trim();
    const po = spawn('git', ['-C', dir, 'pack-objects', '--stdout'], { stdio: ['pipe', 'pipe', 'inherit'] });
    const packChunks: Buffer[] = [];
    po.stdout.on('data', (d: Buffer) => packChunks.push(d));
    po.stdin.end(`${commitId}\n${treeId}\n`);
    await new Promise((resolve) => po.on('close', resolve));
    const body = Buffer.concat([pkt(`${'0'.repeat(40)} ${commitId} refs/for/main\0report-status\n`), Buffer.from('0000'), ...packChunks]);
    const res = await fetch(`${url}/git-receive-pack`, { method: 'POST', headers: { 'content-type': 'application/x-git-receive-pack-request' }, body });
    expect(res.status).to.equal(200);
    const text = Buffer.from(await res.arrayBuffer()).toString('latin1');
    expect(text).to.include('unpack ok');
    expect(text).to.include(`ng refs/for/main object ${blobId} is neither in the push nor reachable from main`);
    expect(await changes(s)).to.deep.equal([]);

    // The same file pushed with its bytes (an honest client sends what main does not reach) passes.
    await change(dir, 'leak.txt', 'the launch code is 0000\n', 'Known text');
    const pushed = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
    expect(pushed.code, pushed.stderr).to.equal(0);
    expect(await changes(s)).to.have.length(1);
  });

  it('a fast-forward land of a pushed patchset keeps the pushed commit: a fetch after the land finds it as the line\'s head', async () => {
    // In process (git runs asynchronously), to land through gates that pass.
    const s = await startTestServer();
    try {
      const r = await register(s.url, 'land-pushed');
      await importGit({ server: s.url, repo: r, source: src, line: 'main', progress: NO_PROGRESS });
      const a = await (await s.ready).opened(r);
      const PASS: LandGates = () => ({ refusal: null, policy_decision_id: null });
      (a as unknown as { lands: LandDesk }).lands = new LandDesk(a.store, a.workflow, PASS);
      const url = `${s.url}${R(r, '/git/main.git')}`;
      const dir = path.join(tempDir('cairn-push-'), 'work');
      expect((await client(['clone', '-q', url, dir])).code).to.equal(0);
      const pushedCommit = await change(dir, 'landed.txt', 'landed\n', 'Land me');
      const pushed = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
      expect(pushed.code, pushed.stderr).to.equal(0);
      const land = await ok(api(s.url, 'POST', R(r, '/changes/change-1:submit'), { json: { mode: 'ff-only' } }));
      expect(land.land.status).to.equal('landed');
      const fetched = await client(['-C', dir, 'fetch', '-q', 'origin']);
      expect(fetched.code, fetched.stderr).to.equal(0);
      expect((await client(['-C', dir, 'rev-parse', 'origin/main'])).stdout.trim()).to.equal(pushedCommit);
    } finally {
      await s.stop();
    }
  });

  it('a land keeps a pushed commit\'s id on a fast-forward (the pusher stays in cairn\'s records); a commit the export writes names who pushed, who approved and who landed it', async () => {
    const s = await startTestServer(undefined, { identity: { header: 'X-Remote-User' } });
    try {
      const r = await register(s.url, 'land-trailers');
      await importGit({ server: s.url, repo: r, source: src, line: 'main', progress: NO_PROGRESS });
      const a = await (await s.ready).opened(r);
      const PASS: LandGates = () => ({ refusal: null, policy_decision_id: null });
      (a as unknown as { lands: LandDesk }).lands = new LandDesk(a.store, a.workflow, PASS);
      const url = `${s.url}${R(r, '/git/main.git')}`;
      const dir = path.join(tempDir('cairn-push-'), 'work');
      expect((await client(['clone', '-q', url, dir])).code).to.equal(0);
      const forged = { GIT_AUTHOR_NAME: 'Linus Torvalds', GIT_AUTHOR_EMAIL: 'torvalds@linux-foundation.org', GIT_COMMITTER_NAME: 'Linus Torvalds', GIT_COMMITTER_EMAIL: 'torvalds@linux-foundation.org' };
      await fsp.writeFile(path.join(dir, 'ann.txt'), 'ann\n');
      expect((await client(['-C', dir, 'add', '-A'])).code).to.equal(0);
      expect((await client(['-C', dir, 'commit', '-q', '-m', 'Ann, as Linus'], forged)).code).to.equal(0);
      const annCommit = (await client(['-C', dir, 'rev-parse', 'HEAD'])).stdout.trim();
      expect((await client(['-C', dir, '-c', 'http.extraHeader=X-Remote-User: ann', 'push', url, 'HEAD:refs/for/main'])).code).to.equal(0);
      expect((await client(['-C', dir, 'reset', '-q', '--hard', 'origin/main'])).code).to.equal(0);
      await fsp.writeFile(path.join(dir, 'bob.txt'), 'bob\n');
      expect((await client(['-C', dir, 'add', '-A'])).code).to.equal(0);
      expect((await client(['-C', dir, 'commit', '-q', '-m', 'Bob, as Linus'], forged)).code).to.equal(0);
      expect((await client(['-C', dir, '-c', 'http.extraHeader=X-Remote-User: bob', 'push', url, 'HEAD:refs/for/main'])).code).to.equal(0);
      const carol = { headers: { 'X-Remote-User': 'carol' } };
      await ok(api(s.url, 'POST', R(r, '/changes/change-2/reviews'), { ...carol, json: { patchset_id: 'change-2.ps-1', reviewer: 'carol', action: 'approve' } }));
      // Ann's commit lands as it was pushed: its id, its forged author; who pushed it is cairn's record.
      const ff = (await ok(api(s.url, 'POST', R(r, '/changes/change-1:submit'), { ...carol, json: { mode: 'ff-only' } }))).land;
      expect(ff).to.include({ status: 'landed', line_action: 'fast_forward', landed_by: 'carol' });
      expect((await client(['-C', dir, 'fetch', '-q', 'origin'])).code).to.equal(0);
      expect((await client(['-C', dir, 'rev-parse', 'origin/main'])).stdout.trim()).to.equal(annCommit);
      expect((await ok(api(s.url, 'GET', R(r, `/git/commits/${annCommit}`)))).git_commit.pushed_by).to.equal('ann');
      // Bob's lands as a merge the export writes: its message says who pushed it and who approved it.
      expect((await ok(api(s.url, 'POST', R(r, '/changes/change-2:submit'), { ...carol, json: { mode: 'merge' } }))).land.status).to.equal('landed');
      expect((await client(['-C', dir, 'fetch', '-q', 'origin'])).code).to.equal(0);
      const body = (await client(['-C', dir, 'cat-file', 'commit', 'origin/main'])).stdout;
      expect(body).to.match(/\nauthor bob <bob@cairn\.invalid> \d+ \+0000\n/);
      expect(body).to.match(/\nCairn-Land: land-\d+\nCairn-Merge-Revision: [0-9a-f]{64}\nReviewed-by: carol <carol@cairn\.invalid>\nPushed-by: bob <bob@cairn\.invalid>\nLanded-by: carol <carol@cairn\.invalid>\n$/);
      expect((await client(['-C', dir, 'cat-file', 'commit', annCommit])).stdout).to.not.match(/Pushed-by|Landed-by/);
    } finally {
      await s.stop();
    }
  });

  it('a pushed merge lands with its id and its parents: `git pull --ff-only` and a clone find the merge itself', async () => {
    const s = await startTestServer();
    try {
      const r = await register(s.url, 'land-merge');
      await importGit({ server: s.url, repo: r, source: src, line: 'main', progress: NO_PROGRESS });
      const a = await (await s.ready).opened(r);
      const PASS: LandGates = () => ({ refusal: null, policy_decision_id: null });
      (a as unknown as { lands: LandDesk }).lands = new LandDesk(a.store, a.workflow, PASS);
      const url = `${s.url}${R(r, '/git/main.git')}`;
      const dir = path.join(tempDir('cairn-push-'), 'work');
      expect((await client(['clone', '-q', url, dir])).code).to.equal(0);
      const base = (await client(['-C', dir, 'rev-parse', 'HEAD'])).stdout.trim();
      // A side branch of two commits, one of them merging a branch of its own; main merges it.
      expect((await client(['-C', dir, 'checkout', '-q', '-b', 'side'])).code).to.equal(0);
      await change(dir, 'side/one.txt', 'one\n', 'Side one');
      expect((await client(['-C', dir, 'checkout', '-q', '-b', 'subside'])).code).to.equal(0);
      await change(dir, 'side/deeper.txt', 'deeper\n', 'Deeper');
      expect((await client(['-C', dir, 'checkout', '-q', 'side'])).code).to.equal(0);
      await change(dir, 'side/two.txt', 'two\n', 'Side two');
      expect((await client(['-C', dir, 'merge', '-q', '--no-ff', '-m', 'Merge subside', 'subside'])).code).to.equal(0);
      const sideTip = (await client(['-C', dir, 'rev-parse', 'HEAD'])).stdout.trim();
      expect((await client(['-C', dir, 'checkout', '-q', 'main'])).code).to.equal(0);
      expect((await client(['-C', dir, 'merge', '-q', '--no-ff', '-m', 'Merge side', 'side'])).code).to.equal(0);
      const merge = (await client(['-C', dir, 'rev-parse', 'HEAD'])).stdout.trim();
      const history = (await client(['-C', dir, 'rev-list', '--parents', 'HEAD'])).stdout;
      const pushed = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
      expect(pushed.code, pushed.stderr).to.equal(0);
      const land = await ok(api(s.url, 'POST', R(r, '/changes/change-1:submit'), { json: { mode: 'ff-only' } }));
      expect(land.land.status).to.equal('landed');

      const pulled = await client(['-C', dir, 'pull', '-q', '--ff-only', 'origin', 'main']);
      expect(pulled.code, pulled.stderr).to.equal(0);
      expect((await client(['-C', dir, 'rev-parse', 'HEAD', 'origin/main'])).stdout.trim().split('\n')).to.deep.equal([merge, merge]);
      const fresh = path.join(tempDir('cairn-push-'), 'fresh');
      expect((await client(['clone', '-q', url, fresh])).code).to.equal(0);
      expect((await client(['-C', fresh, 'rev-list', '--parents', 'HEAD'])).stdout).to.equal(history);
      expect((await client(['-C', fresh, 'rev-parse', 'HEAD^1', 'HEAD^2'])).stdout.trim().split('\n')).to.deep.equal([base, sideTip]);
      expect((await client(['-C', fresh, 'fsck', '--no-progress'])).code).to.equal(0);
    } finally {
      await s.stop();
    }
  });

  for (const point of ['git-push:received', 'git-push:commit', 'git-push:commit>commit:after-log', 'git-push:commit>commit:before-state', 'git-push:commit>commit:after-state']) {
    it(`killed at ${point}: after a restart the push is all there or not at all`, async () => {
      const { s: plain, data } = await server();
      const { url, dir } = await cloneOf(plain);
      const key = changeIdOf(point);
      const pushedCommit = await change(dir, 'k.txt', 'k\n', `Crash ${point}\n\nChange-Id: ${key}\n`);
      const eventsBefore = ((await get(plain, '/events?limit=1000')).events as Json[]).length;
      plain.proc.kill('SIGTERM');
      await plain.exited;
      const doomed = await spawnServer(data, [], true, { CAIRN_TEST_CRASH_AT: point });
      spawned.push(doomed);
      const doomedUrl = `${doomed.url}${R(repo, '/git/main.git')}`;
      const pushing = client(['-C', dir, 'push', doomedUrl, 'HEAD:refs/for/main']);
      const code = await Promise.race([doomed.exited, sleep(30_000).then(() => 'alive' as const)]);
      if (code === 'alive') expect.fail(`the server was not killed at ${point}: ${doomed.output().slice(-2000)}`);
      expect(code, 'killed by SIGKILL').to.equal(null);
      expect((await pushing).code).to.not.equal(0);
      void url;

      const restarted = await spawnServer(data);
      spawned.push(restarted);
      const all = await changes(restarted);
      const events = (await get(restarted, '/events?limit=1000')).events as Json[];
      const record = await api(restarted.url, 'GET', R(repo, `/git/commits/${pushedCommit}`));
      if (point.endsWith('after-state')) {
        expect(all.map((c) => c.change_ref)).to.deep.equal(['task-1.change-1']);
        expect(record.status).to.equal(200);
        const types = events.slice(eventsBefore).map((e) => e.type);
        expect(types).to.include.members(['task.created', 'change.created', 'patchset.created']);
      } else {
        expect(all).to.deep.equal([]);
        expect(record.status).to.equal(404);
        expect(events.length).to.equal(eventsBefore);
        // Nothing half-written stands in the way: the same push now works, once.
        const again = await client(['-C', dir, 'push', `${restarted.url}${R(repo, '/git/main.git')}`, 'HEAD:refs/for/main']);
        expect(again.code, again.stderr).to.equal(0);
        expect((await changes(restarted)).map((c) => c.change_ref)).to.deep.equal(['task-1.change-1']);
      }
      expect(await fsp.readdir(path.join(data, 'git-shadow', 'quarantine')).catch(() => [])).to.deep.equal([]);
      restarted.proc.kill('SIGTERM');
      await restarted.exited;
      const check = await cli(['fsck', '--data', data]);
      expect(check.code, check.stdout + check.stderr).to.equal(0);
    });
  }
});
