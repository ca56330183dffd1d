// serve --cluster with archives: three nodes on 127.0.0.1, .2 and .3, one etcd, one Swift, each
// node shipping to its own prefix. A repository moves between nodes under write load (nothing
// acknowledged lost, the pause measured), a killed node's repository is failed over from its
// archive, and an owner cut off from etcd refuses writes, then sets its copy aside when it is back.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { api, cli, spawnServer, tempDir, until, type ChildServer } from './helpers.js';
import { useEtcd } from './etcd.js';
import { Forwarder, useSwift, type SwiftServer } from './swift.js';

const AUTH = '/v1/native/repository-authorities';
const BUCKET = 'cairn-cluster';
const HOSTS: Record<string, string> = { n1: '127.0.0.1', n2: '127.0.0.2', n3: '127.0.0.3', n4: '127.0.0.4', n5: '127.0.0.5', n6: '127.0.0.6' };

function swiftEnv(swift: SwiftServer): Record<string, string> {
  return { AWS_ACCESS_KEY_ID: swift.accessKeyId, AWS_SECRET_ACCESS_KEY: swift.secretAccessKey, AWS_REGION: swift.region, AWS_ENDPOINT_URL_S3: swift.endpoint };
}

describe('serve --cluster with archives: moves, failover, a partitioned owner (etcd, Swift)', function () {
  this.timeout(600_000);
  const etcd = useEtcd();
  const swift = useSwift();
  const dirs = new Map<string, string>();
  const nodes = new Map<string, ChildServer>();
  // n1 reaches etcd through a link the test can cut: a partition of n1 alone.
  let link: Forwarder;
  const start = async (name: string, extra: string[] = []): Promise<ChildServer> => {
    if (!dirs.has(name)) dirs.set(name, path.join(tempDir(), name));
    const etcdUrl = name === 'n1' ? `etcd://127.0.0.1:${link.port}/cluster` : etcd().leaseUrl('cluster');
    const s = await spawnServer(dirs.get(name)!, ['--no-ui', '--cluster', etcdUrl, '--node', name, '--cluster-ttl', '3', '--archive', `s3://${BUCKET}/${name}/`, '--archive-interval-ms', '200', ...extra], true, swiftEnv(swift()), HOSTS[name]);
    nodes.set(name, s);
    return s;
  };
  const node = (name: string): ChildServer => nodes.get(name)!;
  const newTask = (base: string, repo: number, title: string) => api(base, 'POST', `${AUTH}/${repo}/tasks`, { json: { title, intent: title }, contract: false });
  const titles = async (base: string, repo: number): Promise<Set<string>> => {
    const r = await api(base, 'GET', `${AUTH}/${repo}/tasks?limit=1000`);
    expect(r.status, r.text).to.equal(200);
    return new Set((r.json.tasks as { title: string }[]).map((t) => t.title));
  };
  const ownerOf = async (base: string, repo: number): Promise<string | null> => (await api(base, 'GET', `/v1/native/cluster?repository=${repo}`)).json.repository.node;
  const register = async (base: string, name: string): Promise<number> => {
    const r = await api(base, 'POST', AUTH, { json: { repository_name: name, namespace: '', policy_flags: 0 } });
    expect(r.status, r.text).to.equal(201);
    return r.json.repository.repository_index;
  };
  /** Writes through `base` until stopped: the titles acknowledged, and the longest time between two acknowledgements. */
  const writer = (base: string, repo: number, prefix: string) => {
    const acknowledged: string[] = [];
    let last = performance.now();
    let longestGap = 0;
    let going = true;
    let n = 0;
    const done = (async () => {
      while (going) {
        const title = `${prefix}${++n}`;
        const res = await newTask(base, repo, title).catch(() => null);
        if (res?.status === 200) {
          acknowledged.push(title);
          const now = performance.now();
          longestGap = Math.max(longestGap, now - last);
          last = now;
        } else await new Promise((r) => setTimeout(r, 20));
      }
    })();
    return { acknowledged, gap: () => longestGap, stop: async () => { going = false; await done; } };
  };

  before(async () => {
    const admin = new S3Client({ region: swift().region, endpoint: swift().endpoint, forcePathStyle: true, credentials: { accessKeyId: swift().accessKeyId, secretAccessKey: swift().secretAccessKey } });
    await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
    admin.destroy();
    link = new Forwarder(20_000 + Math.floor(Math.random() * 10_000), Number(etcd().endpoint.split(':')[1]));
    await link.open();
    for (const name of ['n1', 'n2', 'n3']) await start(name);
  });
  after(async () => {
    for (const s of nodes.values()) if (s.proc.exitCode === null && s.proc.signalCode === null) { s.proc.kill('SIGKILL'); await s.exited; }
    await link?.cut();
  });

  it('cairn repo move under write load: every acknowledged write is on the new owner, writes paused a bounded time, the old owner set its copy aside and passes requests on', async () => {
    const repo = await register(node('n1').url, 'alpha');
    expect(await ownerOf(node('n3').url, repo)).to.equal('n1');
    // One client writes to the owner itself, one through a third node.
    const direct = writer(node('n1').url, repo, 'd');
    const passed = writer(node('n3').url, repo, 'p');
    await until('writes acknowledged before the move', async () => direct.acknowledged.length >= 10 && passed.acknowledged.length >= 10, 60_000);
    const moved = await cli(['repo', 'move', String(repo), '--to', 'n2', '--server', node('n3').url, '--json']);
    expect(moved.code, moved.stdout + moved.stderr).to.equal(0);
    const result = JSON.parse(moved.stdout);
    expect(result).to.include({ repository_index: repo, kind: 'move', from: 'n1', to: 'n2' });
    expect(result.pause_ms).to.be.a('number').and.below(30_000);
    await until('writes acknowledged after the move', async () => direct.acknowledged.length >= 15 + 10 && passed.acknowledged.length >= 15, 60_000).catch(() => null);
    const before = direct.acknowledged.length + passed.acknowledged.length;
    await until('more writes after the move', async () => direct.acknowledged.length + passed.acknowledged.length >= before + 10, 60_000);
    await direct.stop();
    await passed.stop();
    console.log(`      move: pause ${result.pause_ms} ms (server), longest gap between acknowledged writes ${Math.round(Math.max(direct.gap(), passed.gap()))} ms`);

    expect(await ownerOf(node('n1').url, repo)).to.equal('n2');
    const held = await titles(node('n2').url, repo);
    const lost = [...direct.acknowledged, ...passed.acknowledged].filter((t) => !held.has(t));
    expect(lost, `acknowledged, not on the new owner (of ${direct.acknowledged.length + passed.acknowledged.length})`).to.deep.equal([]);
    // Through the old owner: passed to the new one.
    expect((await newTask(node('n1').url, repo, 'via the old owner')).status).to.equal(200);
    expect(await titles(node('n3').url, repo)).to.include('via the old owner');
    // n1 set its copy aside (never served), n2 holds it.
    expect(await fsp.readdir(path.join(dirs.get('n1')!, 'repositories'))).to.not.include(String(repo));
    expect((await fsp.readdir(path.join(dirs.get('n1')!, 'cluster', 'displaced'))).some((d) => d.startsWith(`${repo}-`))).to.equal(true);
    expect(await fsp.readdir(path.join(dirs.get('n2')!, 'repositories'))).to.include(String(repo));
    // The list, through any node: once, on its new node.
    const list = (await api(node('n1').url, 'GET', AUTH)).json.repositories.map((r: { repository_name: string }) => r.repository_name);
    expect(list.filter((n: string) => n === 'alpha')).to.have.length(1);
    // Moving it again, to where it is: refused, nothing changes; to an unknown node: refused.
    const again = await api(node('n1').url, 'POST', '/v1/native/cluster/moves', { json: { repository_index: repo, to: 'n2' } });
    expect(again.status, again.text).to.equal(409);
    expect(again.json.error).to.match(/is on node n2 already/);
    const nowhere = await api(node('n1').url, 'POST', '/v1/native/cluster/moves', { json: { repository_index: repo, to: 'n9' } });
    expect(nowhere.status).to.equal(409);
    expect(nowhere.json.error).to.match(/node n9 is not a live node/);
    // And back: a move in the other direction works the same.
    const back = await cli(['repo', 'move', String(repo), '--to', 'n1', '--server', node('n2').url, '--json']);
    expect(back.code, back.stdout + back.stderr).to.equal(0);
    expect(await ownerOf(node('n2').url, repo)).to.equal('n1');
    expect(await titles(node('n1').url, repo)).to.include('via the old owner');
  });

  it('hostile input: a handoff without the move\'s token, bad bodies, a failover of a live node\'s repository — refused, nothing held', async () => {
    const repo = await register(node('n3').url, 'hostile');
    const forged = await api(node('n3').url, 'POST', '/v1/native/cluster/handoffs', { json: { repository_index: repo, token: '0'.repeat(32) } });
    expect(forged.status).to.equal(409);
    expect(forged.json.error).to.match(/no move of repository/);
    expect(forged.text).to.not.include('0'.repeat(32));
    for (const [body, status] of [[{ repository_index: -1, to: 'n1' }, 400], [{ repository_index: 2 ** 40, to: 'n1' }, 400], [{ repository_index: 'x', to: 'n1' }, 422], [{ repository_index: repo }, 422]] as [object, number][]) {
      const r = await api(node('n1').url, 'POST', '/v1/native/cluster/moves', { json: body });
      expect(r.status, JSON.stringify(body)).to.equal(status);
    }
    const badToken = await api(node('n3').url, 'POST', '/v1/native/cluster/handoffs', { json: { repository_index: repo, token: '../../x' } });
    expect(badToken.status).to.equal(400);
    const live = await cli(['repo', 'failover', String(repo), '--server', node('n1').url]);
    expect(live.code).to.equal(1);
    expect(live.stderr).to.match(/is live/);
    // Writes go on: nothing was held.
    expect((await newTask(node('n3').url, repo, 'after')).status).to.equal(200);
    const usage = await cli(['repo', 'move', String(repo), '--server', node('n1').url]);
    expect(usage.code).to.equal(2);
    expect(usage.stderr).to.match(/needs --to NODE/);
  });

  it('kill -9 of a node: cairn repo failover takes its repository from its archive on another node (what was shipped is there); the node back sets its copy aside', async () => {
    const repo = await register(node('n2').url, 'beta');
    for (let i = 0; i < 5; i++) expect((await newTask(node('n2').url, repo, `b${i}`)).status).to.equal(200);
    await until('n2\'s archive covers its commits', async () => {
      const h = (await api(node('n2').url, 'GET', '/healthz')).json.archive;
      return h && h.uncovered_commits === 0 && h.lag_seconds === 0 ? h : null;
    }, 60_000).catch(() => null);
    await new Promise((r) => setTimeout(r, 1000));
    const killedAt = performance.now();
    node('n2').proc.kill('SIGKILL');
    await node('n2').exited;
    // Still a member until its TTL passes: a failover is refused meanwhile.
    const early = await api(node('n3').url, 'POST', '/v1/native/cluster/failovers', { json: { repository_index: repo } });
    expect([409, 503]).to.include(early.status);
    const done = await until('the failover goes through once n2\'s membership expired', async () => {
      const r = await cli(['repo', 'failover', String(repo), '--server', node('n3').url, '--json']);
      return r.code === 0 ? JSON.parse(r.stdout) : null;
    }, 60_000);
    console.log(`      failover: served again ${Math.round(performance.now() - killedAt)} ms after the kill (TTL 3 s)`);
    expect(done).to.include({ kind: 'failover', from: 'n2', to: 'n3', pause_ms: null });
    expect(await ownerOf(node('n1').url, repo)).to.equal('n3');
    const held = await titles(node('n1').url, repo);
    for (let i = 0; i < 5; i++) expect(held, `b${i}`).to.include(`b${i}`);
    expect((await newTask(node('n1').url, repo, 'on n3')).status).to.equal(200);

    // n2 back on its directory: its copy set aside, the repository served from n3 through it.
    await start('n2');
    await until('n2 set its copy aside', async () => !(await fsp.readdir(path.join(dirs.get('n2')!, 'repositories'))).includes(String(repo)), 30_000);
    expect(await titles(node('n2').url, repo)).to.include('on n3');
  });

  it('a node stopped (SIGTERM) ships every acknowledged commit before it leaves: a failover of its repository then lacks none', async () => {
    // Shipping every hour: only the stop's own shipping can put these writes in the archive.
    const lazy = await start('n6', ['--archive-interval-ms', '3600000']);
    const repo = await register(lazy.url, 'stopping');
    for (let i = 0; i < 3; i++) expect((await newTask(lazy.url, repo, `s${i}`)).status).to.equal(200);
    lazy.proc.kill('SIGTERM');
    await lazy.exited;
    let last = '';
    const taken = await until('the failover once n6 left', async () => {
      const r = await api(node('n1').url, 'POST', '/v1/native/cluster/failovers', { json: { repository_index: repo } });
      last = r.text;
      return r.status === 200 ? r.json : null;
    }, 60_000).catch((err: Error) => { throw new Error(`${err.message}; last answer: ${last}; n6's log: ${lazy.output().slice(-3000)}`); });
    expect(taken.from).to.equal('n6');
    expect(await titles(node('n2').url, repo)).to.include.members(['s0', 's1', 's2']);
  });

  it('serve --failover auto: a node that fails over by itself takes a killed node\'s repository with no command', async () => {
    const auto = await start('n4', ['--failover', 'auto', '--failover-after', '1']);
    const repo = await register(node('n3').url, 'delta');
    expect((await newTask(node('n3').url, repo, 'd0')).status).to.equal(200);
    await until('n3\'s archive covers it', async () => (await api(node('n3').url, 'GET', '/healthz')).json.archive?.uncovered_commits === 0, 60_000).catch(() => null);
    await new Promise((r) => setTimeout(r, 1000));
    node('n3').proc.kill('SIGKILL');
    await node('n3').exited;
    // n1 and n2 fail over by command only: n4 is the one that takes it.
    await until('n4 took it', async () => (await ownerOf(node('n1').url, repo)) === 'n4', 60_000);
    expect(await titles(auto.url, repo)).to.include('d0');
    await start('n3');
    // Stopped, so that it takes nothing of the next test's.
    auto.proc.kill('SIGTERM');
    await auto.exited;
  });

  it('read replicas: a node with --read-replicas serves another node\'s reads from its copy, passes writes on, honours Cairn-Min-Commit, never ships or lists the copy; a move to it replaces the copy', async () => {
    const replica = await start('n5', ['--read-replicas', 'all']);
    const repo = await register(node('n2').url, 'epsilon');
    const first = await newTask(node('n2').url, repo, 'e1');
    expect(first.status).to.equal(200);
    const firstCommit = Number(first.headers.get('cairn-commit'));
    expect(firstCommit).to.be.greaterThan(0);
    const status = async () => (await api(replica.url, 'GET', '/v1/native/cluster')).json.replicas as { repository_index: number; owner: string; commit: string }[];
    await until('n5 holds a replica at that commit', async () => (await status()).find((r) => r.repository_index === repo && Number(r.commit) >= firstCommit), 60_000);
    // Served by n5 itself.
    const local = await api(replica.url, 'GET', `${AUTH}/${repo}/tasks`, { headers: { 'cairn-min-commit': String(firstCommit) } });
    expect(local.status, local.text).to.equal(200);
    expect(local.headers.get('cairn-replica-of')).to.equal('n2');
    expect(local.json.tasks.map((t: { title: string }) => t.title)).to.include('e1');
    // An event feed of it, served by the replica: a write at the owner reaches it once the replica applies it.
    const stream = await fetch(`${replica.url}${AUTH}/${repo}/events`, { headers: { accept: 'text/event-stream' } });
    expect(stream.status).to.equal(200);
    expect(stream.headers.get('cairn-replica-of')).to.equal('n2');
    const reader = stream.body!.getReader();
    const seen = await newTask(node('n2').url, repo, 'e-feed');
    expect(seen.status).to.equal(200);
    let text = '';
    const decoder = new TextDecoder();
    await until('the replica\'s feed carries the task', async () => {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the feed ended: ${text}`);
      text += decoder.decode(value);
      return text.includes(seen.json.task.task_id) ? true : null;
    }, 60_000);
    await reader.cancel();
    // A write through n5 goes to the owner; a read asking for its commit sees it, wherever it is served.
    const written = await newTask(replica.url, repo, 'e2');
    expect(written.status, written.text).to.equal(200);
    const commit = written.headers.get('cairn-commit')!;
    const mine = await api(replica.url, 'GET', `${AUTH}/${repo}/tasks`, { headers: { 'cairn-min-commit': commit } });
    expect(mine.json.tasks.map((t: { title: string }) => t.title)).to.include('e2');
    // Far ahead of any commit: the owner answers.
    const ahead = await api(replica.url, 'GET', `${AUTH}/${repo}/tasks`, { headers: { 'cairn-min-commit': '999999999' } });
    expect(ahead.status).to.equal(200);
    expect(ahead.headers.get('cairn-replica-of')).to.equal(null);
    const bad = await api(replica.url, 'GET', `${AUTH}/${repo}/tasks`, { headers: { 'cairn-min-commit': 'soon' } });
    expect(bad.status).to.equal(400);
    // Not in n5's own part of the list (the owner lists it), not shipped by n5, not in n5's registry feed.
    const own = await api(replica.url, 'GET', AUTH, { headers: { 'x-cairn-proxied-by': 'n1' } });
    expect(own.status, own.text).to.equal(200);
    expect(own.json.repositories.map((r: { repository_name: string }) => r.repository_name)).to.not.include('epsilon');
    const shipped = (await api(replica.url, 'GET', '/healthz')).json.archive?.repositories ?? [];
    expect(shipped.map((r: { repository: number }) => r.repository)).to.not.include(repo);
    const feed = await api(replica.url, 'GET', '/v1/native/events?limit=1000');
    expect(JSON.stringify(feed.json)).to.not.include('epsilon');
    expect(await fsp.readdir(path.join(dirs.get('n5')!, 'cluster', 'replicas'))).to.include(String(repo));

    // Moved to the replica's node: the copy goes, the repository comes whole from the owner's archive.
    const moved = await cli(['repo', 'move', String(repo), '--to', 'n5', '--server', node('n1').url, '--json']);
    expect(moved.code, moved.stdout + moved.stderr).to.equal(0);
    console.log(`      move onto a replica: fetched ${JSON.parse(moved.stdout).fetched_objects} objects, ${JSON.parse(moved.stdout).fetched_bytes} bytes`);
    expect(await fsp.readdir(path.join(dirs.get('n5')!, 'cluster', 'replicas'))).to.not.include(String(repo));
    expect((await newTask(replica.url, repo, 'e3')).status).to.equal(200);
    expect(await titles(node('n2').url, repo)).to.include.members(['e1', 'e2', 'e3']);
    expect((await status()).map((r) => r.repository_index)).to.not.include(repo);
    // Now n5's own: announced by its registry feed, once.
    const announced = JSON.stringify((await api(replica.url, 'GET', '/v1/native/events?limit=1000')).json);
    expect(announced.split('"epsilon"').length - 1).to.equal(1);
  });

  it('an owner cut off from etcd refuses writes within its TTL; another node takes its repository; back, it sets its copy aside and passes writes on', async () => {
    const repo = await register(node('n1').url, 'gamma');
    expect((await newTask(node('n1').url, repo, 'g0')).status).to.equal(200);
    await until('n1\'s archive covers it', async () => (await api(node('n1').url, 'GET', '/healthz')).json.archive?.uncovered_commits === 0, 60_000).catch(() => null);
    await new Promise((r) => setTimeout(r, 1000));
    await link.cut();
    // Writes go on until the membership's deadline (acknowledged: the archive takes them), then
    // are refused before anything is written. One under way at the deadline may be done but not
    // acknowledged (503 with committed: true): it may be there or not.
    const acknowledged: string[] = [];
    let n = 0;
    const refused = await until('n1 refuses writes before writing them', async () => {
      const title = `c${++n}`;
      const r = await newTask(node('n1').url, repo, title);
      if (r.status === 200) acknowledged.push(title);
      return r.status === 503 && r.json.committed !== true ? { r, title } : null;
    }, 10_000);
    expect(refused.r.json.error).to.match(/has not confirmed its membership/);
    const taken = await until('another node fails it over', async () => {
      const r = await api(node('n2').url, 'POST', '/v1/native/cluster/failovers', { json: { repository_index: repo } });
      return r.status === 200 ? r.json : null;
    }, 60_000);
    expect(taken.from).to.equal('n1');
    expect((await newTask(node('n2').url, repo, 'on n2')).status).to.equal(200);
    // Still cut off: still refusing.
    expect((await newTask(node('n1').url, repo, 'still cut off')).status).to.equal(503);
    await link.open();
    await until('n1 passes the write to the new owner', async () => (await newTask(node('n1').url, repo, 'back')).status === 200, 60_000);
    const held = await titles(node('n2').url, repo);
    expect(held).to.include('g0');
    expect(held).to.include('back');
    expect(held).to.not.include(refused.title);
    expect(held).to.not.include('still cut off');
    expect(refused.r.json.error).to.not.match(/done on this server/);
    expect(acknowledged.filter((t) => !held.has(t)), 'acknowledged by n1 before its deadline, not on n2').to.deep.equal([]);
    await until('n1 set its copy aside', async () => !(await fsp.readdir(path.join(dirs.get('n1')!, 'repositories'))).includes(String(repo)), 30_000);
  });
});
