// The client as users meet it. Working copies (checkout/status/update/push with a
// base guard), deduplicated and resumable uploads, ignore rules, server URLs and user-term
// errors, a closed stdout, offline tools on a missing --data, the everyday commands.
import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, promises as fsp } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { api, CLI, cli, onTty, register, startTestServer, tempDir, type TestServer } from './helpers.js';

const AUTH = '/v1/native/repository-authorities';

async function write(root: string, rel: string, content: string | Buffer): Promise<void> {
  await fsp.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
  await fsp.writeFile(path.join(root, rel), content);
}

async function headOf(server: TestServer, repo: number, line: string): Promise<string | null> {
  return (await api(server.url, 'GET', `${AUTH}/${repo}/lines/${line}`)).json?.head_snapshot_id ?? null;
}

async function filesAt(server: TestServer, repo: number, snapshot: string): Promise<Record<string, string>> {
  const exp = await api(server.url, 'GET', `${AUTH}/${repo}/snapshots/${snapshot}`);
  return Object.fromEntries(exp.json.files.map((f: any) => [f.path, Buffer.from(f.content, 'base64').toString('utf8')]));
}

describe('working copies', () => {
  let server: TestServer;
  let repo: number;
  before(async () => {
    server = await startTestServer();
    repo = await register(server.url, 'collab');
    const seed = path.join(tempDir(), 'seed');
    await write(seed, 'README', 'shared\n');
    await write(seed, 'src/a.txt', 'a1\n');
    await write(seed, 'src/b.txt', 'b1\n');
    const r = await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'collab', seed]);
    expect(r.code, r.stderr).to.equal(0);
  });
  after(() => server.stop());

  const checkout = async (line = 'collab', ...extra: string[]) => {
    const dir = path.join(tempDir(), 'wc');
    const r = await cli(['checkout', '--server', server.url, '--repo', String(repo), '--line', line, ...extra, dir]);
    expect(r.code, r.stderr).to.equal(0);
    return dir;
  };

  it('two users both change and push: the second push is refused, nothing is lost; after update and a re-push both changes are on the line', async () => {
    const alice = await checkout();
    const bob = await checkout();
    const config = JSON.parse(await fsp.readFile(path.join(alice, '.cairn/config.json'), 'utf8'));
    expect(config).to.include({ repo, line: 'collab', base: await headOf(server, repo, 'collab') });
    await write(alice, 'alice.txt', 'from alice\n');
    await write(bob, 'bob.txt', 'from bob\n');
    const a = await cli(['push', alice]);
    expect(a.code, a.stderr).to.equal(0);
    const aliceHead = JSON.parse(a.stdout).snapshot_id;
    expect(await headOf(server, repo, 'collab')).to.equal(aliceHead);

    const b = await cli(['push', bob]);
    expect(b.code).to.equal(6);
    expect(b.stderr).to.match(/line collab moved since your base [0-9a-f]{12}.*update first/);
    expect(await headOf(server, repo, 'collab')).to.equal(aliceHead); // Alice's change is not lost
    // Re-running push changes nothing either.
    expect((await cli(['push', bob])).code).to.equal(6);
    expect(await headOf(server, repo, 'collab')).to.equal(aliceHead);

    const st = JSON.parse((await cli(['status', bob])).stdout);
    expect(st).to.include({ behind: true, line_head: aliceHead, clean: false });
    expect(st.added).to.deep.equal(['bob.txt']);

    const u = await cli(['update', bob]);
    expect(u.code, u.stderr).to.equal(0);
    expect(JSON.parse(u.stdout)).to.include({ base: aliceHead });
    expect(await fsp.readFile(path.join(bob, 'alice.txt'), 'utf8')).to.equal('from alice\n');
    expect(await fsp.readFile(path.join(bob, 'bob.txt'), 'utf8')).to.equal('from bob\n');
    const again = await cli(['push', '--message', 'bob after update', bob]);
    expect(again.code, again.stderr).to.equal(0);
    const final = JSON.parse(again.stdout);
    expect(final.parent_snapshot_ids).to.deep.equal([aliceHead]);
    const files = await filesAt(server, repo, final.snapshot_id);
    expect(files).to.include({ 'alice.txt': 'from alice\n', 'bob.txt': 'from bob\n', README: 'shared\n' });
    expect(Object.keys(files).some((p) => p.startsWith('.cairn'))).to.equal(false); // metadata never pushed
    expect(JSON.parse(await fsp.readFile(path.join(bob, '.cairn/config.json'), 'utf8')).base).to.equal(final.snapshot_id);
  });

  it('status lists added, modified and deleted paths against the base', async () => {
    const wc = await checkout();
    await write(wc, 'new.txt', 'n');
    await write(wc, 'src/a.txt', 'changed');
    await fsp.rm(path.join(wc, 'src/b.txt'));
    const r = await cli(['status', '--json', wc]);
    expect(r.code, r.stderr).to.equal(0);
    const st = JSON.parse(r.stdout);
    expect(st).to.include({ behind: false, clean: false });
    expect([st.added, st.modified, st.deleted]).to.deep.equal([['new.txt'], ['src/a.txt'], ['src/b.txt']]);
  });

  it('update refuses when the same path changed on both sides, names it, and changes nothing', async () => {
    const mine = await checkout();
    const theirs = await checkout();
    await write(theirs, 'src/a.txt', 'theirs\n');
    await write(theirs, 'src/b.txt', 'theirs b\n');
    expect((await cli(['push', theirs])).code).to.equal(0);
    await write(mine, 'src/a.txt', 'mine\n');
    await write(mine, 'local-only.txt', 'keep\n');
    const configBefore = await fsp.readFile(path.join(mine, '.cairn/config.json'), 'utf8');
    const r = await cli(['update', mine]);
    expect(r.code).to.equal(6);
    expect(r.stderr).to.include('src/a.txt');
    expect(r.stderr).to.not.include('src/b.txt');
    expect(await fsp.readFile(path.join(mine, 'src/a.txt'), 'utf8')).to.equal('mine\n');
    expect(await fsp.readFile(path.join(mine, 'src/b.txt'), 'utf8')).to.equal('b1\n'); // not updated either
    expect(await fsp.readFile(path.join(mine, '.cairn/config.json'), 'utf8')).to.equal(configBefore);
    expect((await fsp.readdir(path.join(mine, '.cairn'))).sort()).to.deep.equal(['config.json']);
  });

  it('update never overwrites an ignored local file with the line\'s version', async () => {
    const mine = await checkout();
    const theirs = await checkout();
    await write(theirs, 'notes.log', 'theirs\n');
    expect((await cli(['push', theirs])).code).to.equal(0);
    await write(mine, '.cairnignore', '*.log\n');
    await write(mine, 'notes.log', 'my ignored notes\n');
    const r = await cli(['update', mine]);
    expect(r.code).to.equal(6);
    expect(r.stderr).to.include('notes.log');
    expect(await fsp.readFile(path.join(mine, 'notes.log'), 'utf8')).to.equal('my ignored notes\n');
  });

  it('pull stays an exact export (no metadata); a plain-directory push keeps its contract', async () => {
    const out = path.join(tempDir(), 'out');
    const r = await cli(['pull', '--server', server.url, '--repo', String(repo), '--line', 'collab', out]);
    expect(r.code, r.stderr).to.equal(0);
    expect(existsSync(path.join(out, '.cairn'))).to.equal(false);
    const plain = await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'plain', out]);
    expect(plain.code, plain.stderr).to.equal(0);
    expect(plain.stdout.trim().split('\n')).to.have.length(1);
    expect(JSON.parse(plain.stdout).snapshot_id).to.match(/^[0-9a-f]{64}$/);
  });

  it('checkout --create of a line with no snapshot gives an empty working copy whose first push creates the line', async () => {
    const wc = await checkout('fresh-line', '--create');
    expect(JSON.parse(await fsp.readFile(path.join(wc, '.cairn/config.json'), 'utf8')).base).to.equal(null);
    await write(wc, 'first.txt', 'first');
    const r = await cli(['push', wc]);
    expect(r.code, r.stderr).to.equal(0);
    expect(await headOf(server, repo, 'fresh-line')).to.equal(JSON.parse(r.stdout).snapshot_id);
  });
});

describe('uploads deduplicated by blob and resumable', () => {
  let server: TestServer;
  let repo: number;
  let tree: string;
  let treeBytes = 0;
  before(async () => {
    server = await startTestServer();
    repo = await register(server.url, 'dedup');
    tree = path.join(tempDir(), 'tree');
    for (let i = 0; i < 40; i++) {
      const b = randomBytes(4000 + i);
      treeBytes += b.length;
      await write(tree, `d${i % 4}/f${i}.bin`, b);
    }
  });
  after(() => server.stop());

  it('a one-file change pushed to a new line sends only the new blob and changed trees', async () => {
    const first = await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'main', tree]);
    expect(first.code, first.stderr).to.equal(0);
    const copy = path.join(tempDir(), 'copy');
    await fsp.cp(tree, copy, { recursive: true });
    await write(copy, 'd1/f1.bin', 'one changed file');
    const r = await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'feature', copy]);
    expect(r.code, r.stderr).to.equal(0);
    const result = JSON.parse(r.stdout);
    expect(result.parent_snapshot_ids).to.deep.equal([]); // a new line: no parent to diff against
    expect(result.uploaded_bytes).to.be.lessThan(treeBytes / 100);
  });

  it('a push that died half-way resumes: packs that arrived (staged) are not sent again', async () => {
    const repo = await register(server.url, 'resume');
    const big = path.join(tempDir(), 'big');
    for (let i = 0; i < 30; i++) await write(big, `p${i}.bin`, randomBytes(30_000));
    const base = { server: server.url, repo, line: 'resume', dir: big, moveLine: true, progress: false, packTargetBytes: 64 * 1024 };
    let failed = false;
    try {
      await push({ ...base, stopAfterUploads: 3 });
    } catch {
      failed = true;
    }
    expect(failed).to.equal(true);
    expect(await headOf(server, repo, 'resume')).to.equal(null);
    const staged = (await fsp.readdir(path.join(server.dataDir, `repositories/${repo}/staging/objects`))).filter((f) => f.endsWith('.pack'));
    expect(staged.length).to.be.at.least(3);
    const done = await push(base);
    // 30 files of 30,000 bytes, packs closed at 64 KiB raw: 3 files a pack, 10 object packs.
    expect(done.uploaded_packs).to.be.at.least(1);
    expect(done.uploaded_packs + staged.length).to.equal(10 + 1); // + the tree pack
    const committed = (await fsp.readdir(path.join(server.dataDir, `repositories/${repo}/packs/objects`))).length;
    expect(done.uploaded_packs).to.equal(committed - staged.length + 1);
    const out = path.join(tempDir(), 'resume-out');
    expect((await cli(['pull', '--server', server.url, '--repo', String(repo), '--line', 'resume', out])).code).to.equal(0);
    for (let i = 0; i < 30; i++) expect((await fsp.readFile(path.join(out, `p${i}.bin`))).equals(await fsp.readFile(path.join(big, `p${i}.bin`)))).to.equal(true);
  });
});

describe('ignore rules (.cairnignore, .cairn/, .git/, FIFOs)', () => {
  it('leaves out ignored paths, the metadata dir and .git/, and warns about FIFOs', async () => {
    const server = await startTestServer();
    try {
      const repo = await register(server.url, 'ignore');
      const dir = path.join(tempDir(), 'ign');
      await write(dir, '.cairnignore', '*.log\nbuild/\n!keep.log\n');
      await write(dir, 'app.log', 'x');
      await write(dir, 'keep.log', 'kept');
      await write(dir, 'build/out.o', 'x');
      await write(dir, 'src/build.txt', 'not a dir rule match');
      await write(dir, '.git/HEAD', 'ref: refs/heads/main\n');
      await write(dir, '.cairn/config.json', '{}'); // not a valid working copy: never pushed anyway
      await fsp.rm(path.join(dir, '.cairn'), { recursive: true });
      await write(dir, 'main.c', 'int main;');
      spawnSync('mkfifo', [path.join(dir, 'pipe')]);
      const r = await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'dev', dir]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stderr).to.match(/warning: skipped pipe/);
      const files = await filesAt(server, repo, JSON.parse(r.stdout).snapshot_id);
      expect(Object.keys(files).sort()).to.deep.equal(['.cairnignore', 'keep.log', 'main.c', 'src/build.txt']);
    } finally {
      await server.stop();
    }
  });
});

describe('server URLs, user-term errors, closed stdout (defects 6, 7)', () => {
  let server: TestServer;
  let repo: number;
  let dir: string;
  before(async () => {
    server = await startTestServer();
    repo = await register(server.url, 'urls');
    dir = path.join(tempDir(), 'd');
    await write(dir, 'x.txt', 'x');
  });
  after(() => server.stop());

  it('accepts HOST:PORT without a scheme and explains a bad one', async () => {
    const hostPort = server.url.replace('http://', '');
    const ok = await cli(['push', '--server', hostPort, '--repo', String(repo), '--line', 'dev', dir]);
    expect(ok.code, ok.stderr).to.equal(0);
    const local = await cli(['push', '--server', hostPort.replace('127.0.0.1', 'localhost'), '--repo', String(repo), '--line', 'dev', dir]);
    expect(local.code, local.stderr).to.equal(0);
    const bad = await cli(['push', '--server', `ftp://${hostPort}`, '--repo', String(repo), '--line', 'dev', dir]);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.include('http://HOST:PORT');
    expect(bad.stderr).to.not.match(/ERR_INVALID_URL|unknown scheme/);
  });

  it('reports an unknown repository before scanning, and an unknown line for pull, in the user\'s terms', async () => {
    const missingDir = path.join(tempDir(), 'does-not-exist');
    const r = await cli(['push', '--server', server.url, '--repo', '99', '--line', 'dev', missingDir]);
    expect(r.code).to.equal(1);
    expect(r.stderr.trim()).to.equal(`cairn: repository 99 is not registered on ${server.url}`);
    const p = await cli(['pull', '--server', server.url, '--repo', String(repo), '--line', 'nope', path.join(tempDir(), 'o')]);
    expect(p.code).to.equal(1);
    expect(p.stderr).to.include(`line nope does not exist in repository ${repo}`);
    expect(p.stderr).to.not.include('/v1/native');
  });

  it('exits quietly when stdout is closed early (push | head -c 0)', async () => {
    const res = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn('sh', ['-c', `"${process.execPath}" "${CLI}" push --server ${server.url} --repo ${repo} --line pipe "${dir}" | head -c 0; echo "status=\${PIPESTATUS:-$?}" >&2`], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d) => { stderr += d; });
      child.on('exit', (code) => resolve({ code, stderr }));
    });
    expect(res.stderr).to.not.match(/EPIPE|Error|at /);
  });
});

describe('offline tools and serve never create a mistyped data directory', () => {
  it('fsck, export and import on a missing --data fail and create nothing', async () => {
    const missing = path.join(tempDir(), 'typo-data');
    for (const args of [['fsck', '--data', missing], ['export', '--data', missing, '--repo', '0', path.join(tempDir(), 'exp')], ['import', '--data', missing, tempDir()]]) {
      const r = await cli(args);
      expect(r.code, args[0]).to.equal(2);
      expect(r.stderr, args[0]).to.include(`data directory ${missing} does not exist`);
      expect(existsSync(missing), args[0]).to.equal(false);
    }
  });

  it('serve on a port already in use leaves no new data directory behind', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const data = path.join(tempDir(), 'never-created');
      const r = await cli(['serve', '--bind', `127.0.0.1:${port}`, '--data', data, '--log-level', 'silent']);
      expect(r.code).to.not.equal(0);
      expect(existsSync(data)).to.equal(false);
    } finally {
      blocker.close();
    }
  });
});

describe('committed packs are always referenced', () => {
  it('a commit listing a staged pack whose objects are all stored leaves it in staging; fsck prints no notes', async () => {
    const { buildPack, PACK_KIND_OBJECT } = await import('../lib/store/pack.js');
    const { blobId } = await import('../lib/domain/content.js');
    const data = path.join(tempDir(), 'data');
    const server = await startTestServer(data);
    const repo = await register(server.url, 'adopt');
    const dir = path.join(tempDir(), 't');
    const raw = Buffer.from('same content, compressible. '.repeat(3000) + randomBytes(64).toString('hex'));
    await write(dir, 'same.txt', raw);
    const first = await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'dev', dir]);
    expect(first.code, first.stderr).to.equal(0);
    // A second client uploads its own pack of the same blob (say, after a rejected push) ...
    const committedPacks = await fsp.readdir(path.join(data, `repositories/${repo}/packs/objects`));
    const dup = [1, 19, 7].map((level) => buildPack(PACK_KIND_OBJECT, [{ id: blobId(raw), raw }], level)).find((p) => !committedPacks.includes(`${p.packId}.pack`))!;
    expect(dup, 'a differently compressed pack of the same blob').to.not.equal(undefined);
    const put = await api(server.url, 'PUT', `${AUTH}/${repo}/remote-sync/zstd-bulk/object-packs/${dup.packId}`, { body: dup.bytes, headers: { 'content-type': 'application/vnd.svc.remote-sync.object-pack+zstd' } });
    expect(put.status, put.text).to.equal(200);
    // ... and commits listing it, with a locator row for the blob the store already holds.
    const e = dup.entries[0];
    const res = await api(server.url, 'POST', `${AUTH}/${repo}/remote-sync/zstd-bulk/commit`, {
      json: {
        contract: 'svc.remote_sync.zstd_bulk.commit.v1',
        object_packs: [dup.packId], tree_packs: [],
        blob_locators: [{ blob_id: e.id, pack_id: dup.packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32.toString(16).padStart(8, '0') }],
        tree_locators: [], snapshots: [], line_update: null,
      },
    });
    expect(res.status, res.text).to.equal(200);
    expect(res.json.upserted.object_packs).to.equal(0);
    expect(await fsp.readdir(path.join(data, `repositories/${repo}/packs/objects`))).to.not.include(`${dup.packId}.pack`);
    await server.stop();
    const check = await cli(['fsck', '--data', data]);
    expect(check.code, check.stdout).to.equal(0);
    expect(check.stderr).to.equal('');
  });
});

describe('plan items: every field optional', () => {
  it('accepts an item with only a plan_item_ref; a missing text projects as ""', async () => {
    const server = await startTestServer();
    try {
      const repo = await register(server.url, 'plans');
      const res = await api(server.url, 'POST', `${AUTH}/${repo}/sprints`, {
        json: { title: 'S', artifact_path: 'docs/s.md', artifact_heading: 'S', items: [{ plan_item_ref: 'only-ref' }, {}, { text: 'full', checkbox_state: 'checked', heading_path: ['S'] }] },
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.json.revision.items).to.deep.equal([
        { plan_item_ref: 'only-ref', text: '', checkbox_state: 'unchecked', heading_path: ['S'] },
        { plan_item_ref: null, text: '', checkbox_state: 'unchecked', heading_path: ['S'] },
        { plan_item_ref: null, text: 'full', checkbox_state: 'checked', heading_path: ['S'] },
      ]);
    } finally {
      await server.stop();
    }
  });
});

describe('progress', () => {
  // The bar's format, units, ETA and clearing are unit-tested in progress.test.ts.
  it('on a terminal, push and pull show bytes done/total with units, rate and ETA; --quiet silences them', async function () {
    if (spawnSync('script', ['--version']).status !== 0) this.skip();
    const server = await startTestServer();
    try {
      const repo = await register(server.url, 'tty');
      const dir = path.join(tempDir(), 'tty');
      await write(dir, 'a.bin', randomBytes(300_000));
      // script(1) runs the command on a pseudo-terminal: stdout and stderr are both TTYs. Spawned
      // asynchronously: this process serves the requests of the command.
      const pushed = await onTty(['push', '--server', server.url, '--repo', String(repo), '--line', 'dev', dir]);
      expect(pushed.status, pushed.stdout).to.equal(0);
      expect(pushed.stdout).to.match(/push .* \/ 293\.0 KiB .*B\/s .*ETA/);
      expect(pushed.stdout).to.match(/pushed [0-9a-f]{12} to dev/); // the human-readable summary on a TTY
      const pulled = await onTty(['pull', '--server', server.url, '--repo', String(repo), '--line', 'dev', path.join(tempDir(), 'tty-out')]);
      expect(pulled.status, pulled.stdout).to.equal(0);
      expect(pulled.stdout).to.match(/pull .* \/ 293\.0 KiB .*B\/s .*ETA/);
      const quiet = await onTty(['pull', '--quiet', '--server', server.url, '--repo', String(repo), '--line', 'dev', path.join(tempDir(), 'tty-quiet')]);
      expect(quiet.status).to.equal(0);
      expect(quiet.stdout).to.not.include('ETA');
    } finally {
      await server.stop();
    }
  });

  it('prints nothing on stderr when it is not a terminal, for push and pull', async () => {
    const server = await startTestServer();
    try {
      const repo = await register(server.url, 'quiet');
      const dir = path.join(tempDir(), 'q');
      await write(dir, 'a.bin', randomBytes(100_000));
      const p = await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'dev', dir]);
      expect(p.code).to.equal(0);
      expect(p.stderr).to.equal('');
      const q = await cli(['pull', '--server', server.url, '--repo', String(repo), '--line', 'dev', path.join(tempDir(), 'qo')]);
      expect(q.code).to.equal(0);
      expect(q.stderr).to.equal('');
    } finally {
      await server.stop();
    }
  });
});

describe('everyday commands', () => {
  it('repo create|list|show, lines, log, jobs list, --version: JSON when stdout is not a terminal', async () => {
    const server = await startTestServer();
    try {
      const created = await cli(['repo', 'create', 'everyday', '--server', server.url]);
      expect(created.code, created.stderr).to.equal(0);
      const repo = JSON.parse(created.stdout).repository.repository_index;
      const list = JSON.parse((await cli(['repo', 'list', '--server', server.url])).stdout);
      expect(list.repositories.map((r: any) => r.repository_name)).to.include('everyday');
      const dir = path.join(tempDir(), 'e');
      await write(dir, 'a', '1');
      await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'dev', '--message', 'one', dir]);
      await write(dir, 'a', '2');
      await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'dev', '--message', 'two', dir]);
      const show = JSON.parse((await cli(['repo', 'show', '--server', server.url, '--repo', String(repo)])).stdout);
      expect(show.repository.repository_name).to.equal('everyday');
      const lines = JSON.parse((await cli(['lines', '--server', server.url, '--repo', String(repo)])).stdout);
      expect(lines.lines.map((l: any) => l.line_name)).to.deep.equal(['dev']);
      const log = JSON.parse((await cli(['log', '--server', server.url, '--repo', String(repo), '--line', 'dev'])).stdout);
      expect(log.snapshots.map((s: any) => s.message)).to.deep.equal(['two', 'one']);
      const jobs = await cli(['jobs', 'list', '--server', server.url, '--repo', String(repo), '--json']);
      expect(jobs.code, jobs.stderr).to.equal(0);
      expect(JSON.parse(jobs.stdout).jobs).to.be.an('array');
      const missing = await cli(['lines', '--server', server.url, '--repo', '77']);
      expect(missing.stderr).to.include(`repository 77 is not registered on ${server.url}`);
      const v = await cli(['--version']);
      expect(JSON.parse(v.stdout).version).to.match(/^\d+\.\d+\.\d+/);
      for (const cmd of ['repo', 'lines', 'log', 'jobs', 'checkout', 'status', 'update', 'push', 'pull']) {
        const h = spawnSync(process.execPath, [CLI, cmd, '--help'], { encoding: 'utf8' });
        expect(h.status, cmd).to.equal(0);
        expect(h.stdout, cmd).to.include('--json');
      }
    } finally {
      await server.stop();
    }
  });
});

describe('serve logs and help', () => {
  it('--log-format pretty prints readable lines; json stays one object per line', async () => {
    const { spawnServer } = await import('./helpers.js');
    for (const format of ['pretty', 'json']) {
      const s = await spawnServer(path.join(tempDir(), 'data'), ['--log-format', format]);
      s.proc.kill('SIGTERM');
      await s.exited;
      const first = s.output().split('\n')[0];
      // stdout is a pipe here: no colours. pino-pretty's line: [UTC time] LEVEL: message {fields}.
      if (format === 'pretty') {
        expect(first).to.match(/^\[\d\d:\d\d:\d\d\] INFO: listening \{"address":"127\.0\.0\.1:\d+","data":"[^"]+"\}$/);
        expect(s.output()).to.match(/^\[\d\d:\d\d:\d\d\] INFO: stopped$/m); // written before exit
      } else expect(JSON.parse(first)).to.include({ msg: 'listening', service: 'cairn' });
    }
  });

  it('serve --help names every option in its usage line', () => {
    const h = spawnSync(process.execPath, [CLI, 'serve', '--help'], { encoding: 'utf8' }).stdout;
    const usage = h.slice(0, h.indexOf('\n\n'));
    const options = [...h.slice(h.indexOf('\n\n')).matchAll(/^ {2}(--[a-z-]+|-h, --help)/gm)].map((m) => m[1].replace('-h, ', ''));
    expect(options.length).to.be.at.least(8);
    for (const o of options) expect(usage, o).to.include(o);
  });
});
