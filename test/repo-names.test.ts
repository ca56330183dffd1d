// Repositories by name wherever the command line takes an index (lib/cli/target.ts): one
// registry listing resolves --repo NAME (and --from-repo/--to-repo); names repeat, so several
// active repositories of one name are a usage error listing them; a retiring repository is found
// when no active one has the name; an unknown name is an error naming the close ones.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { api, cli, register, startTestServer, tempDir, type TestServer } from './helpers.js';

const AUTH = '/v1/native/repository-authorities';

describe('repositories by name on the command line', () => {
  let server: TestServer;
  const at: Record<string, number> = {};
  before(async () => {
    server = await startTestServer();
    at.two = await register(server.url, '2'); // index 0, named "2": digits stay an index
    at.hello = await register(server.url, 'hello');
    at.twin1 = await register(server.url, 'twin');
    at.twin2 = await register(server.url, 'twin');
    at.old = await register(server.url, 'old');
    at.goneRetiring = await register(server.url, 'gone');
    at.goneActive = await register(server.url, 'gone');
    at.ns = await register(server.url, 'twin', 'tw');
    for (const r of [at.old, at.goneRetiring]) expect((await api(server.url, 'POST', `${AUTH}/${r}/retirement`)).status).to.equal(200);
  });
  after(() => server.stop());

  const show = async (repo: string) => cli(['repo', 'show', '--server', server.url, '--repo', repo]);

  it('takes a name where an index is taken (--repo NAME and --repo=NAME), and digits stay an index', async () => {
    const byName = await show('hello');
    expect(byName.code, byName.stderr).to.equal(0);
    expect(JSON.parse(byName.stdout).repository).to.include({ repository_index: at.hello, repository_name: 'hello' });
    const inline = await cli(['lines', '--server', server.url, '--repo=hello']);
    expect(inline.code, inline.stderr).to.equal(0);

    const dir = path.join(tempDir(), 'seed');
    await fsp.mkdir(dir);
    await fsp.writeFile(path.join(dir, 'a.txt'), 'a\n');
    const pushed = await cli(['push', '--server', server.url, '--repo', 'hello', '--line', 'main', dir]);
    expect(pushed.code, pushed.stderr).to.equal(0);
    const log = await cli(['log', '--server', server.url, '--repo', String(at.hello), '--line', 'main']);
    expect(JSON.parse(log.stdout).snapshots).to.have.length(1);

    const digits = await show('2');
    expect(digits.code, digits.stderr).to.equal(0);
    expect(JSON.parse(digits.stdout).repository.repository_index).to.equal(2);

    const sync = await cli(['sync', '--from', server.url, '--from-repo', 'hello', '--to', server.url, '--to-repo', 'tw/twin', '--snapshot', JSON.parse(log.stdout).snapshots[0].snapshot_id, '--line', 'main']);
    expect(sync.code, sync.stderr).to.equal(0);
    const copied = await cli(['log', '--server', server.url, '--repo', String(at.ns), '--line', 'main']);
    expect(JSON.parse(copied.stdout).snapshots).to.have.length(1);
  });

  it('an unknown name is an error (exit 1) naming the close one', async () => {
    const r = await show('helo');
    expect(r.code).to.equal(1);
    expect(r.stderr).to.equal(`cairn: ${server.url} has no repository named "helo" (did you mean "hello"?) (cairn repo list --server ${server.url} lists them)\n`);
  });

  it('a name several active repositories share is a usage error (exit 2) listing them; NS/NAME picks one', async () => {
    const r = await show('twin');
    expect(r.code).to.equal(2);
    expect(r.stderr).to.include(`--repo "twin" names 3 repositories of ${server.url}: ${at.twin1} (twin), ${at.twin2} (twin), ${at.ns} (tw/twin)`);
    const picked = await show('tw/twin');
    expect(picked.code, picked.stderr).to.equal(0);
    expect(JSON.parse(picked.stdout).repository.repository_index).to.equal(at.ns);
  });

  it('a retiring repository is found by name when no active one has it; an active one comes first', async () => {
    const old = await show('old');
    expect(old.code, old.stderr).to.equal(0);
    expect(JSON.parse(old.stdout).repository).to.include({ repository_index: at.old, lifecycle_kind: 2 });
    const gone = await show('gone');
    expect(gone.code, gone.stderr).to.equal(0);
    expect(JSON.parse(gone.stdout).repository.repository_index).to.equal(at.goneActive);
  });

  it('looks the names up once per run, and not at all for digits or --help', async () => {
    const seen: string[] = [];
    const stub = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(req.url === AUTH ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(req.url === AUTH ? { repositories: [{ repository_index: 4, repository_name: 'a', namespace: '', lifecycle_kind: 1 }, { repository_index: 5, repository_name: 'b', namespace: '', lifecycle_kind: 1 }] } : { error: 'no route' }));
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
    try {
      await cli(['sync', '--from', url, '--from-repo', 'a', '--to', url, '--to-repo', 'b', '--snapshot', 'f'.repeat(64), '--line', 'main']);
      expect(seen.filter((s) => s === `GET ${AUTH}`)).to.have.length(1);
      expect(seen.some((s) => s.includes(`${AUTH}/4/`))).to.equal(true);
      seen.length = 0;
      await cli(['lines', '--server', url, '--repo', '4']);
      expect(await cli(['lines', '--server', url, '--repo', 'a', '--help'])).to.include({ code: 0 });
      expect(seen.filter((s) => s === `GET ${AUTH}`)).to.deep.equal([]);
    } finally {
      await new Promise((resolve) => stub.close(resolve));
    }
  });
});

// The offline commands (fsck, export) read the data directory's registry themselves: a name is
// looked up there, under the same rules, with the close names when none matches (there is no
// server to list them, so the message lists the directory's repositories).
describe('repositories by name in the offline commands (fsck, export --data DIR)', () => {
  let data: string;
  const at: Record<string, number> = {};
  before(async () => {
    data = path.join(tempDir(), 'data');
    const server = await startTestServer(data);
    try {
      at.two = await register(server.url, '2');
      at.hello = await register(server.url, 'hello');
      at.twin1 = await register(server.url, 'twin');
      at.twin2 = await register(server.url, 'twin');
      at.ns = await register(server.url, 'twin', 'tw');
      at.goneRetiring = await register(server.url, 'gone');
      at.goneActive = await register(server.url, 'gone');
      expect((await api(server.url, 'POST', `${AUTH}/${at.goneRetiring}/retirement`)).status).to.equal(200);
    } finally {
      await server.stop();
    }
  });

  it('fsck --repo NAME checks that repository only; digits stay an index', async () => {
    for (const [value, index] of [['hello', at.hello], ['--repo=tw/twin', at.ns], ['gone', at.goneActive], ['2', 2]] as const) {
      const args = value.startsWith('--') ? ['fsck', '--data', data, value, '--json'] : ['fsck', '--data', data, '--repo', value, '--json'];
      const r = await cli(args);
      expect(r.code, `${value}: ${r.stderr}`).to.equal(0);
      expect(JSON.parse(r.stdout).repositories.map((x: { repository_index: number }) => x.repository_index), value).to.deep.equal([index]);
    }
  });

  it('export --repo NAME exports that repository', async () => {
    const out = path.join(tempDir(), 'out');
    const r = await cli(['export', '--data', data, '--repo', 'hello', out]);
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout).repository_index).to.equal(at.hello);
    expect(JSON.parse(await fsp.readFile(path.join(out, 'manifest.json'), 'utf8')).repo_name).to.equal('hello');
  });

  it('an unknown name is an error (exit 1) naming the close one and the directory\'s repositories; nothing is written', async () => {
    const dir = path.resolve(data);
    const r = await cli(['fsck', '--data', data, '--repo', 'helo']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.equal(`cairn: data directory ${dir} has no repository named "helo" (did you mean "hello"?; it holds 0 (2), 1 (hello), 2 (twin), 3 (twin), 4 (tw/twin), 5 (gone, retiring), 6 (gone))\n`);
    const out = path.join(tempDir(), 'out');
    const e = await cli(['export', '--data', data, '--repo', 'hellooo', out]);
    expect(e.code).to.equal(1);
    expect(e.stderr).to.include(`data directory ${dir} has no repository named "hellooo" (did you mean "hello"?; it holds `);
    expect(await fsp.readdir(out).catch(() => [])).to.deep.equal([]);
  });

  it('a name several active repositories share is a usage error (exit 2) listing them', async () => {
    const dir = path.resolve(data);
    for (const command of [['fsck', '--data', data, '--repo', 'twin'], ['export', '--data', data, '--repo', 'twin', path.join(tempDir(), 'out')]]) {
      const r = await cli(command);
      expect(r.code, command[0]).to.equal(2);
      expect(r.stderr, command[0]).to.include(`--repo "twin" names 3 repositories of data directory ${dir}: ${at.twin1} (twin), ${at.twin2} (twin), ${at.ns} (tw/twin); give the index (--repo ${at.twin1})`);
    }
  });
});
