// serve --cluster: three nodes on 127.0.0.1, 127.0.0.2 and 127.0.0.3 sharing one etcd (test/etcd.ts),
// real server processes. Repositories get cluster-wide indexes and live on the node that
// registered them; any node answers for any repository (reads, writes, a push, a clone, an event
// feed), and a node that is down is named by the others.
import { expect } from 'chai';
import { spawn as spawnChild } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { api, cli, exportRepo, restoreRepo, spawnServer, tempDir, until, type ChildServer } from './helpers.js';
import { useEtcd } from './etcd.js';

const AUTH = '/v1/native/repository-authorities';

function git(args: string[], cwd?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawnChild('git', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('serve --cluster: three nodes, one etcd', function () {
  this.timeout(300_000);
  const etcd = useEtcd();
  const dirs = new Map<string, string>();
  const nodes = new Map<string, ChildServer>();
  const HOSTS: Record<string, string> = { n1: '127.0.0.1', n2: '127.0.0.2', n3: '127.0.0.3' };
  const start = async (name: string): Promise<ChildServer> => {
    if (!dirs.has(name)) dirs.set(name, path.join(tempDir(), name));
    const s = await spawnServer(dirs.get(name)!, ['--cluster', etcd().leaseUrl('cluster'), '--node', name, '--cluster-ttl', '3', '--event-subscribers', '3'], true, {}, HOSTS[name]);
    nodes.set(name, s);
    return s;
  };
  const node = (name: string): ChildServer => nodes.get(name)!;
  const registerOn = async (name: string, repo: string, namespace = ''): Promise<{ status: number; index: number; created: boolean }> => {
    const r = await api(node(name).url, 'POST', AUTH, { json: { repository_name: repo, namespace, policy_flags: 0 } });
    expect([200, 201], r.text).to.include(r.status);
    return { status: r.status, index: r.json.repository.repository_index, created: r.json.created };
  };

  before(async () => {
    for (const name of ['n1', 'n2', 'n3']) await start(name);
  });
  after(async () => {
    for (const s of nodes.values()) if (s.proc.exitCode === null && s.proc.signalCode === null) { s.proc.kill('SIGKILL'); await s.exited; }
  });

  it('usage errors (exit 2): a bad node name, --node without --cluster, a wildcard bind without --public-url, --auth tokens', async () => {
    const url = etcd().leaseUrl('usage');
    for (const [args, message] of [
      [['--cluster', url, '--node', 'Bad Name'], /--node: a node name is 1 to 63/],
      [['--node', 'n9'], /--node needs --cluster/],
      [['--cluster', url, '--node', 'n9', '--bind', '0.0.0.0:0', '--insecure-open'], /--cluster on a wildcard --bind needs --public-url/],
      [['--cluster', url, '--node', 'n9', '--auth', 'tokens'], /--cluster with --auth tokens is not supported/],
      [['--cluster', 'http://127.0.0.1:2379/x'], /--cluster: the scheme must be etcd:\/\/ or etcds:\/\//],
    ] as [string[], RegExp][]) {
      const r = await cli(['serve', '--data', path.join(tempDir(), 'data'), ...(args.includes('--bind') ? [] : ['--bind', '127.0.0.1:0']), ...args]);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(2);
      expect(r.stderr).to.match(message);
    }
  });

  it('indexes are cluster-wide and each repository answers through every node: reads, writes, a namespace\'s replay on another node, a 404 for none', async () => {
    expect(await registerOn('n1', 'alpha')).to.deep.include({ status: 201, index: 0 });
    expect(await registerOn('n2', 'beta')).to.deep.include({ status: 201, index: 1 });
    expect(await registerOn('n3', 'gamma')).to.deep.include({ status: 201, index: 2 });
    expect(await registerOn('n1', 'delta')).to.deep.include({ status: 201, index: 3 });
    // A namespace belongs to one repository cluster-wide: its registration repeated on another node replays there.
    expect(await registerOn('n2', 'eps', 'ep')).to.deep.include({ status: 201, index: 4, created: true });
    expect(await registerOn('n3', 'eps', 'ep')).to.deep.include({ status: 200, index: 4, created: false });
    const clash = await api(node('n1').url, 'POST', AUTH, { json: { repository_name: 'other', namespace: 'ep', policy_flags: 0 } });
    expect(clash.status, clash.text).to.equal(409);

    // The list, through any node: every node's repositories, in index order, once each.
    for (const name of ['n1', 'n2', 'n3']) {
      const list = (await api(node(name).url, 'GET', AUTH)).json.repositories.map((r: { repository_index: number; repository_name: string }) => `${r.repository_index}:${r.repository_name}`);
      expect(list, name).to.deep.equal(['0:alpha', '1:beta', '2:gamma', '3:delta', '4:eps']);
    }
    // Writes and reads through nodes that do not own the repository.
    const made = await api(node('n3').url, 'POST', `${AUTH}/1/tasks`, { json: { title: 'through n3', intent: 'a task of beta, written through n3' } });
    expect(made.status, made.text).to.equal(200);
    const read = await api(node('n1').url, 'GET', `${AUTH}/1/tasks/${made.json.task.task_id}`);
    expect(read.status, read.text).to.equal(200);
    expect(read.json.task.title).to.equal('through n3');
    expect((await api(node('n2').url, 'GET', `${AUTH}/1/tasks`)).json.tasks.map((t: { title: string }) => t.title)).to.deep.equal(['through n3']);
    // The record is the owner's: beta is not on n1's disk.
    expect(await fsp.readdir(path.join(dirs.get('n1')!, 'repositories')).catch(() => [])).to.not.include('1');
    // No placement: 404, from any node.
    expect((await api(node('n2').url, 'GET', `${AUTH}/99`)).status).to.equal(404);
    // The UI's pages of a repository are served by any node (their reads go to the owner); one of no repository is 404.
    const page = await fetch(`${node('n1').url}/ui/repos/1/tasks/${made.json.task.task_id}`);
    expect(page.status).to.equal(200);
    expect(await page.text()).to.match(/<html/i);
    expect((await fetch(`${node('n1').url}/ui/repos/99`)).status).to.equal(404);

    const status = await api(node('n2').url, 'GET', '/v1/native/cluster?repository=1');
    expect(status.status, status.text).to.equal(200);
    expect(status.json.node).to.equal('n2');
    expect(status.json.repository).to.deep.equal({ repository_index: 1, node: 'n2' });
    expect(status.json.nodes.map((n: { node: string; live: boolean; repositories: number; url: string }) => [n.node, n.live, n.repositories, n.url])).to.deep.equal([
      ['n1', true, 2, node('n1').url], ['n2', true, 2, node('n2').url], ['n3', true, 1, node('n3').url],
    ]);
  });

  it('Cairn-Route: redirect: a request for another node\'s repository is answered 307 to its owner (method and body kept), not passed on', async () => {
    const get = await fetch(`${node('n2').url}${AUTH}/0/tasks?limit=5`, { headers: { 'cairn-route': 'redirect' }, redirect: 'manual' });
    expect(get.status).to.equal(307);
    expect(get.headers.get('location')).to.equal(`${node('n1').url}${AUTH}/0/tasks?limit=5`);
    expect(get.headers.get('cairn-owner')).to.equal('n1');
    expect(((await get.json()) as { node: string }).node).to.equal('n1');
    // fetch follows a 307 with the same method and body: the write lands on the owner.
    const post = await fetch(`${node('n3').url}${AUTH}/0/tasks`, { method: 'POST', headers: { 'cairn-route': 'redirect', 'content-type': 'application/json' }, body: JSON.stringify({ title: 'redirected', intent: 'sent to n3, written by n1' }) });
    expect(post.status).to.equal(200);
    expect(post.url).to.equal(`${node('n1').url}${AUTH}/0/tasks`);
    // Without the header: passed on as before.
    expect((await fetch(`${node('n2').url}${AUTH}/0/tasks`, { redirect: 'manual' })).status).to.equal(200);
    // The owner answers for itself whatever the header says.
    expect((await fetch(`${node('n1').url}${AUTH}/0/tasks`, { headers: { 'cairn-route': 'redirect' }, redirect: 'manual' })).status).to.equal(200);
  });

  it('streams through a non-owner: a push of a snapshot and a git clone, and an event feed sees a write made through a third node', async () => {
    const work = tempDir();
    await fsp.writeFile(path.join(work, 'README.md'), '# alpha\n');
    await push({ server: node('n3').url, repo: 0, line: 'main', dir: work, moveLine: true, progress: false });
    const clone = path.join(tempDir(), 'clone');
    const cloned = await git(['clone', '-q', `${node('n2').url}${AUTH}/0/git/main.git`, clone]);
    expect(cloned.code, cloned.stderr).to.equal(0);
    expect(await fsp.readFile(path.join(clone, 'README.md'), 'utf8')).to.equal('# alpha\n');

    // An event feed of alpha (on n1) opened through n2; a task made through n3 reaches it.
    const feed = await fetch(`${node('n2').url}${AUTH}/0/events`, { headers: { accept: 'text/event-stream' } });
    expect(feed.status).to.equal(200);
    expect(feed.headers.get('content-type')).to.match(/^text\/event-stream/);
    const reader = feed.body!.getReader();
    const made = await api(node('n3').url, 'POST', `${AUTH}/0/tasks`, { json: { title: 'seen on the feed', intent: 'an event through two proxies' } });
    expect(made.status).to.equal(200);
    let text = '';
    const decoder = new TextDecoder();
    await until('the feed carries the task', async () => {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the feed ended: ${text}`);
      text += decoder.decode(value);
      return text.includes(made.json.task.task_id) ? true : null;
    }, 30_000);
    await reader.cancel();

    // Feeds whose clients leave (before the owner answered, and while it streams) are let go on
    // both nodes: the owner (3 subscribers at most) still takes a feed after more than 3 left.
    for (let i = 0; i < 8; i++) {
      const ac = new AbortController();
      const pending = fetch(`${node('n2').url}${AUTH}/0/events`, { headers: { accept: 'text/event-stream' }, signal: ac.signal });
      if (i % 2 === 0) ac.abort();
      else {
        const res = await pending;
        expect(res.status).to.equal(200);
        await res.body!.getReader().read();
        ac.abort();
      }
      await pending.catch(() => undefined);
    }
    await until('a feed through n2 opens again (none held)', async () => {
      const res = await fetch(`${node('n2').url}${AUTH}/0/events`, { headers: { accept: 'text/event-stream' } });
      const ok = res.status === 200;
      await res.body?.cancel();
      return ok ? true : null;
    }, 15_000);
    // The owner frees a slot when the passed request ends, a moment after the client left: retried until it has.
    await until('three feeds through n3 at once', async () => {
      const held = await Promise.all([0, 1, 2].map(() => fetch(`${node('n3').url}${AUTH}/0/events`, { headers: { accept: 'text/event-stream' } })));
      for (const r of held) await r.body?.cancel();
      return held.every((r) => r.status === 200) ? true : null;
    }, 15_000);
  });

  it('a restore on a node takes a cluster-wide index placed on it (never the exported one); a namespace a live repository owns anywhere is refused', async () => {
    const made = await registerOn('n1', 'leaving', 'lv');
    expect((await api(node('n1').url, 'POST', `${AUTH}/${made.index}/tasks`, { json: { title: 'kept', intent: 'travels with the export' } })).status).to.equal(200);
    const { manifest, files } = await exportRepo(node('n1').url, made.index);
    // Its namespace is still owned (retiring, not purged): a restore of it is refused at the commit.
    const clash = await api(node('n2').url, 'POST', '/v1/native/repository-restores', { json: { manifest, policy_flags: 0 } });
    expect(clash.status, clash.text).to.equal(201);
    for (const [p, bytes] of files) await api(node('n2').url, 'PUT', `/v1/native/repository-restores/${clash.json.restore_token}/files/${encodeURIComponent(p)}`, { body: bytes, headers: { 'content-type': 'application/vnd.svc.remote-authority-file.v1' } });
    const refused = await api(node('n2').url, 'POST', `/v1/native/repository-restores/${clash.json.restore_token}/commit`);
    expect(refused.status, refused.text).to.equal(409);
    expect(refused.json.error).to.match(/namespace "lv" is owned by live repository/);
    // Under another namespace: restored on n2 at a new cluster index, served through every node.
    const index = await restoreRepo(node('n2').url, { ...manifest, namespace: '' }, files);
    expect(index).to.not.equal(made.index);
    expect((await api(node('n1').url, 'GET', `/v1/native/cluster?repository=${index}`)).json.repository.node).to.equal('n2');
    const tasks = await api(node('n3').url, 'GET', `${AUTH}/${index}/tasks`);
    expect(tasks.json.tasks.map((t: { title: string }) => t.title)).to.deep.equal(['kept']);
    // The next registration anywhere gets the index after it.
    expect((await registerOn('n1', 'after-restore')).index).to.equal(index + 1);
  });

  it('a CI runner may talk to any node: a claim is taken at the owner (named repositories grouped by node; none named: this node first, then the others); the job\'s calls reach its owner', async () => {
    const run = await api(node('n3').url, 'POST', `${AUTH}/0:runCi`, { json: {} });
    expect(run.status, run.text).to.equal(200);
    const job = run.json.job.worker_job_index;
    const claimBody = (repos?: number[]) => ({ json: { accepted_job_kinds: [7, 11], accepted_runtime_contracts: ['svc.runner.native-job.v3'], ...(repos ? { repository_indexes: repos } : {}) } });
    // Naming a repository another node owns: claimed there, not 404.
    const none = await api(node('n2').url, 'POST', '/v1/native/worker-jobs:claim', claimBody([4]));
    expect(none.status, none.text).to.equal(200);
    expect(none.json.claimed_job).to.equal(null);
    // Naming none, through n2 (which has no job): n1's job.
    const claimed = await api(node('n2').url, 'POST', '/v1/native/worker-jobs:claim', claimBody());
    expect(claimed.status, claimed.text).to.equal(200);
    expect(claimed.json.claimed_job).to.include({ repository_index: 0, worker_job_index: job });
    // Its heartbeat through a third node reaches the owner.
    const beat = await api(node('n3').url, 'POST', `${AUTH}/0/worker-jobs/${job}:heartbeat`, { json: { attempt_count: claimed.json.attempt_count, lease_token: claimed.json.lease_token } });
    expect(beat.status, beat.text).to.equal(200);
    // Claimed once: nothing left anywhere.
    expect((await api(node('n3').url, 'POST', '/v1/native/worker-jobs:claim', claimBody([0]))).json.claimed_job).to.equal(null);
  });

  it('a data directory holding a repository the cluster does not place on it does not join (a former single server\'s)', async () => {
    const dir = path.join(tempDir(), 'single');
    const single = await spawnServer(dir, ['--no-ui']);
    const r = await api(single.url, 'POST', AUTH, { json: { repository_name: 'solo', namespace: '', policy_flags: 0 } });
    expect(r.status).to.equal(201);
    single.proc.kill('SIGTERM');
    await single.exited;
    const err = await spawnServer(dir, ['--no-ui', '--cluster', etcd().leaseUrl('cluster'), '--node', 'n4']).then(() => null, (e: Error) => e);
    expect(String(err)).to.match(/holds repository 0 \(solo\), which the cluster places on node n1/);
  });

  it('a node down: the others name it for its repositories (503) and for the list; cairn cluster status says DOWN (exit 1); back up, its repositories answer again', async () => {
    const n3 = node('n3');
    n3.proc.kill('SIGKILL');
    await n3.exited;
    const r = await api(node('n1').url, 'GET', `${AUTH}/2`);
    expect(r.status, r.text).to.equal(503);
    expect(r.json.error).to.match(/node n3/);
    await until('n3\'s membership expired', async () => (await api(node('n1').url, 'GET', '/v1/native/cluster')).json.nodes.find((n: { node: string }) => n.node === 'n3')?.live === false, 30_000);
    const down = await api(node('n1').url, 'GET', `${AUTH}/2/tasks`);
    expect(down.status).to.equal(503);
    expect(down.json.error).to.match(/owned by node n3, which is down/);
    // The list would be short: it is refused, naming the node, rather than missing gamma silently.
    const list = await api(node('n2').url, 'GET', AUTH);
    expect(list.status).to.equal(503);
    expect(list.json.error).to.match(/node n3 is down .*the list would be short/);
    const st = await cli(['cluster', 'status', '--server', node('n1').url]);
    expect(st.code, st.stdout + st.stderr).to.equal(1);
    expect(JSON.parse(st.stdout).nodes.find((n: { node: string }) => n.node === 'n3')).to.include({ live: false, url: null, repositories: 1 });
    // Back on its data directory: it joins again once its old membership is gone, and serves gamma.
    await start('n3');
    const back = await api(node('n1').url, 'GET', `${AUTH}/2`);
    expect(back.status, back.text).to.equal(200);
    expect(back.json.repository.repository_name).to.equal('gamma');
    const where = await cli(['cluster', 'status', '--server', node('n2').url, '--repo', '2']);
    expect(where.code, where.stderr).to.equal(0);
    expect(JSON.parse(where.stdout).repository).to.deep.equal({ repository_index: 2, node: 'n3' });
  });
});

describe('lib/http/cluster-proxy.ts: a passed request ends with its client', function () {
  this.timeout(30_000);
  it('a client gone before the owner answered ends the owner\'s request, and the proxy\'s own handling returns', async () => {
    const http = await import('node:http');
    const Koa = (await import('koa')).default;
    const { proxyTo } = await import('../lib/http/cluster-proxy.js');
    // The owner takes the request and answers nothing yet; it notes when the request goes.
    let ownerGot = 0;
    let ownerLost = 0;
    const owner = http.createServer((req) => { ownerGot++; req.socket.once('close', () => { ownerLost++; }); });
    await new Promise<void>((r) => owner.listen(0, '127.0.0.1', () => r()));
    const ownerUrl = `http://127.0.0.1:${(owner.address() as { port: number }).port}`;
    let handled = 0;
    const app = new Koa();
    app.use(async (ctx) => {
      await proxyTo(ctx, { node: 'n1', url: ownerUrl }, 'n2').catch(() => undefined);
      handled++;
    });
    const front = http.createServer(app.callback());
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
    const frontPort = (front.address() as { port: number }).port;
    try {
      for (let i = 0; i < 3; i++) {
        const req = http.request({ host: '127.0.0.1', port: frontPort, path: '/v1/native/repository-authorities/0/events', headers: { accept: 'text/event-stream' } });
        req.on('error', () => undefined);
        req.end();
        await until('the owner has the passed request', () => (ownerGot > i ? true : null));
        req.destroy();
        await until('the owner\'s request is ended and the proxy returned', () => (ownerLost > i && handled > i ? true : null));
      }
    } finally {
      front.close();
      owner.close();
      owner.closeAllConnections();
    }
  });
});
