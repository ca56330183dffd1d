// serve --lease etcd://…: the writer acknowledges only while it holds its etcd lease. Real etcd
// (test/etcd.ts), real Swift s3api for the archive (test/swift.ts), real server processes. The
// interleavings are forced: etcd or the writer is stopped (SIGSTOP) and the test waits for the
// state it needs (/healthz says the deadline passed; the standby says it promoted), never for a
// length of time.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { Etcd3 } from 'etcd3';
import { spawn as spawnChild } from 'node:child_process';
import { api, cli, PROJECT_ROOT, register, spawnServer, tempDir, until, type ChildServer } from './helpers.js';
import { push } from '../lib/client/transfer.js';
import { EtcdWriterLease, parseLeaseUrl } from '../lib/lease/etcd-lease.js';
import { useEtcd } from './etcd.js';
import { useSwift, type SwiftServer } from './swift.js';

const BUCKET = 'cairn-lease';
const AUTH = '/v1/native/repository-authorities';

function swiftEnv(swift: SwiftServer): Record<string, string> {
  return { AWS_ACCESS_KEY_ID: swift.accessKeyId, AWS_SECRET_ACCESS_KEY: swift.secretAccessKey, AWS_REGION: swift.region, AWS_ENDPOINT_URL_S3: swift.endpoint };
}

const health = async (s: ChildServer): Promise<any> => (await api(s.url, 'GET', '/healthz')).json;
const newTask = (s: ChildServer, repo: number, title: string) => api(s.url, 'POST', `${AUTH}/${repo}/tasks`, { json: { title, intent: title } });

describe('serve --lease: bad lease URLs and flags are usage errors', function () {
  this.timeout(120_000);
  const cases: [string[], RegExp][] = [
    [['--archive', 's3://b/p/', '--lease', 'http://127.0.0.1:2379/cairn'], /--lease: the scheme must be etcd:\/\//],
    [['--archive', 's3://b/p/', '--lease', 'etcd://127.0.0.1/cairn'], /--lease: no port/],
    [['--archive', 's3://b/p/', '--lease', 'etcd://127.0.0.1:2379'], /--lease: no key prefix/],
    [['--archive', 's3://b/p/', '--lease', 'etcd://127.0.0.1:99999/cairn'], /--lease: (port 99999 is not from 1 to 65535|not a URL)/],
    [['--archive', 's3://b/p/', '--lease', 'etcd://u:secret@127.0.0.1:2379/cairn'], /--lease: user names and passwords in the URL are not supported/],
    [['--archive', 's3://b/p/', '--lease', 'etcd://127.0.0.1:2379/a%00b'], /--lease: the key prefix must not hold/],
    [['--lease', 'etcd://127.0.0.1:2379/cairn'], /--lease needs --archive .* or --follow/],
    [['--archive', 's3://b/p/', '--lease', 'etcd://127.0.0.1:2379/cairn', '--lease-ttl', '1'], /--lease-ttl must be an integer from 2 to 3600/],
    [['--archive', 's3://b/p/', '--lease', 'etcd://127.0.0.1:2379/cairn', '--failover', 'auto'], /--failover auto needs --follow/],
    [['--follow', 's3://b/p/', '--failover', 'auto'], /--failover auto needs --lease/],
    [['--follow', 's3://b/p/', '--lease', 'archive', '--failover', 'auto'], /--failover auto needs --lease etcd:\/\/…: with --lease archive the writer writes no heartbeat/],
    [['--archive', 's3://b/p/', '--lease', 'archives'], /--lease: .*or the word archive/],
  ];
  for (const [args, message] of cases) {
    it(`refuses ${args.join(' ')}`, async () => {
      const data = path.join(tempDir(), 'data');
      const r = await cli(['serve', '--data', data, '--bind', '127.0.0.1:0', ...args]);
      expect(r.code, r.stdout + r.stderr).to.equal(2);
      expect(r.stderr).to.match(message);
      expect(r.stderr).to.not.include('secret@');
      await fsp.access(data).then(() => { throw new Error('the data directory was created'); }, () => {});
    });
  }
});

describe('the writer lease in etcd (lib/lease/etcd-lease.ts)', function () {
  this.timeout(120_000);
  const etcd = useEtcd();

  it('a holder cut off past its lease takes it back only when nobody took it meanwhile: a takeover and release in between leave it superseded', async () => {
    const url = etcd().leaseUrl('regain');
    const child = spawnChild(process.execPath, [path.join(PROJECT_ROOT, 'dist/test/lease-holder-child.js'), url, '2'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
    const last = () => out.trim().split('\n').at(-1) ?? '';
    try {
      await until('the child holds the lease', () => last() === 'state held', 30_000);
      // First: stopped past its lease and resumed with nobody in between, it holds the lease again.
      child.kill('SIGSTOP');
      const other = new EtcdWriterLease(parseLeaseUrl(url), { ttlSeconds: 2 });
      try {
        await until('the child\'s lease expired in etcd', async () => (await other.holder()) === null, 30_000);
        out = '';
        child.kill('SIGCONT');
        await until('the child holds the lease again', () => last() === 'state held', 30_000);
        // Then: stopped again; another process takes the lease and releases it before the child resumes.
        child.kill('SIGSTOP');
        await until('another process took the lease', async () => (await other.tryTakeover().catch(() => null)) !== null, 30_000);
        await other.release();
        expect(await other.holder()).to.equal(null);
        out = '';
        child.kill('SIGCONT');
        await until('the child knows it was superseded', () => last() === 'state superseded', 30_000);
        expect(out).to.not.include('state held');
      } finally {
        await other.close();
      }
    } finally {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
  });
});

describe('serve --lease: a stale writer stops (etcd and Swift)', function () {
  this.timeout(600_000);
  const etcd = useEtcd();
  const swift = useSwift();
  const children: ChildServer[] = [];
  const spawn = async (dir: string, args: string[]): Promise<ChildServer> => {
    const c = await spawnServer(dir, ['--no-ui', ...args], true, swiftEnv(swift()));
    children.push(c);
    return c;
  };
  before(async () => {
    const admin = new S3Client({ region: swift().region, endpoint: swift().endpoint, forcePathStyle: true, credentials: { accessKeyId: swift().accessKeyId, secretAccessKey: swift().secretAccessKey } });
    await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
    admin.destroy();
  });
  afterEach(async () => {
    for (const c of children.splice(0)) {
      try { c.proc.kill('SIGCONT'); } catch { /* gone */ }
      if (c.proc.exitCode === null && c.proc.signalCode === null) { c.proc.kill('SIGKILL'); await c.exited; }
    }
  });

  it('writes while the lease is held; refuses them (nothing written) once etcd stops answering past the deadline; writes again when etcd is back', async () => {
    const writer = await spawn(path.join(tempDir(), 'w'), ['--archive', `s3://${BUCKET}/held/`, '--archive-interval-ms', '200', '--lease', etcd().leaseUrl('held'), '--lease-ttl', '5']);
    await until('the lease is held', async () => (await health(writer)).lease?.state === 'held', 30_000);
    const repo = await register(writer.url, 'alpha');
    const first = await newTask(writer, repo, 'first');
    expect(first.status, first.text).to.equal(200);
    // The writer's record in etcd names it; the lease id (a token) is not in it.
    const c = new Etcd3({ hosts: etcd().endpoint });
    const record = JSON.parse((await c.get('/held/writer').string())!);
    c.close();
    expect(record.node).to.equal((await health(writer)).lease.node);
    expect(record.url).to.equal(writer.url);

    etcd().pause();
    try {
      await until('the writer says its deadline passed', async () => (await health(writer)).lease?.state === 'uncertain', 60_000);
      const before = await api(writer.url, 'GET', `${AUTH}/${repo}/tasks`);
      const refused = await newTask(writer, repo, 'refused');
      expect(refused.status, refused.text).to.equal(503);
      expect(refused.headers.get('retry-after')).to.equal('1');
      expect(refused.json.error).to.match(/cannot be sure it still holds the writer lease/);
      expect(refused.json.error).to.match(/nothing was written/);
      const after = await api(writer.url, 'GET', `${AUTH}/${repo}/tasks`);
      expect(after.json).to.deep.equal(before.json);
    } finally {
      await etcd().resume();
    }
    // Nobody took over meanwhile: the writer takes the lease again and writes.
    await until('the lease is held again', async () => (await health(writer)).lease?.state === 'held', 60_000);
    const again = await newTask(writer, repo, 'again');
    expect(again.status, again.text).to.equal(200);
    const titles = (await api(writer.url, 'GET', `${AUTH}/${repo}/tasks`)).json.tasks.map((t: any) => t.title);
    expect(titles).to.include.members(['first', 'again']);
    expect(titles).to.not.include('refused');
  });

  it('a commit under way when the deadline passes is durable here but answered 503 at its acknowledge point (--archive-sync composed with --lease)', async () => {
    const writer = await spawn(path.join(tempDir(), 'w'), ['--archive', `s3://${BUCKET}/underway/`, '--archive-sync', '--archive-sync-timeout-seconds', '600', '--archive-interval-ms', '200', '--lease', etcd().leaseUrl('underway'), '--lease-ttl', '5']);
    await until('the lease is held', async () => (await health(writer)).lease?.state === 'held', 30_000);
    const repo = await register(writer.url, 'alpha');
    expect((await newTask(writer, repo, 'first')).status).to.equal(200);
    // The commit waits for the archive (Swift stopped) while the lease's deadline passes (etcd stopped).
    await swift().pause();
    let answer: Promise<Awaited<ReturnType<typeof newTask>>>;
    try {
      answer = newTask(writer, repo, 'under way');
      await until('the commit is durable and waits for the archive', async () => (await health(writer)).archive?.uncovered_commits >= 1, 60_000);
      etcd().pause();
      await until('the deadline passed', async () => (await health(writer)).lease?.state === 'uncertain', 60_000);
    } finally {
      await swift().resume();
    }
    try {
      const res = await answer;
      expect(res.status, res.text).to.equal(503);
      expect(res.json.error).to.match(/^committed on this server \(commit [0-9]+ of repository [0-9]+\), but not acknowledged: this server cannot be sure it still holds the writer lease/);
    } finally {
      await etcd().resume();
    }
    await until('the lease is held again', async () => (await health(writer)).lease?.state === 'held', 60_000);
    const titles = (await api(writer.url, 'GET', `${AUTH}/${repo}/tasks`)).json.tasks.map((t: any) => t.title);
    expect(titles).to.include('under way');
  });

  it('failover: the old writer stopped, the standby takes the lease after it expires; the old one, resumed, refuses writes and says it was superseded; no write it acknowledged is lost', async () => {
    const url = `s3://${BUCKET}/failover/`;
    const lease = etcd().leaseUrl('failover');
    const writerDir = path.join(tempDir(), 'w');
    const writer = await spawn(writerDir, ['--archive', url, '--archive-sync', '--archive-interval-ms', '200', '--lease', lease, '--lease-ttl', '5']);
    await until('the writer holds the lease', async () => (await health(writer)).lease?.state === 'held', 30_000);
    const repo = await register(writer.url, 'alpha');
    expect((await newTask(writer, repo, 'seed')).status).to.equal(200);
    const standby = await spawn(path.join(tempDir(), 's'), ['--follow', url, '--follow-interval-ms', '200', '--lease', lease, '--lease-ttl', '5', '--failover', 'auto']);
    await until('the standby follows the repository', async () => (await health(standby)).follow?.repositories?.length === 1, 60_000);

    // Clients write to the old writer all along; every write it answers 2xx is recorded.
    const acknowledged: { title: string; id: string }[] = [];
    let writing = true;
    let n = 0;
    const client = (async () => {
      while (writing) {
        const title = `w${++n}`;
        try {
          const res = await api(writer.url, 'POST', `${AUTH}/${repo}/tasks`, { json: { title, intent: title }, contract: false });
          if (res.status === 200) acknowledged.push({ title, id: res.json.task.task_id });
          else await new Promise((r) => setTimeout(r, 20));
        } catch {
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    })();
    await until('a few writes acknowledged', async () => acknowledged.length >= 5, 60_000);
    writer.proc.kill('SIGSTOP');
    await until('the standby promoted itself', async () => (await health(standby)).follow?.state === 'promoted', 120_000);
    const h = await health(standby);
    expect(h.lease.state).to.equal('held');
    const onStandby = await newTask(standby, repo, 'on the new writer');
    expect(onStandby.status, onStandby.text).to.equal(200);
    const newId: string = onStandby.json.task.task_id;

    writer.proc.kill('SIGCONT');
    await until('the old writer knows it was superseded', async () => (await health(writer)).lease?.state === 'superseded', 60_000);
    writing = false;
    await client;
    const late = await newTask(writer, repo, 'late');
    expect(late.status).to.equal(503);
    expect(late.json.error).to.match(/superseded: another writer took the writer lease/);
    expect(late.json.error).to.include(standby.url);
    const old = await health(writer);
    expect(old.lease.holder.url).to.equal(standby.url);
    expect(old.archive.state).to.equal('fenced');
    expect(old.archive.last_error).to.match(/superseded/);
    const archiveFile = JSON.parse(await fsp.readFile(path.join(writerDir, 'archive.json'), 'utf8'));
    expect(archiveFile.fenced.why).to.match(/superseded/);
    expect(archiveFile.fenced.why).to.include(standby.url);
    const status = await cli(['archive', 'status', '--server', writer.url]);
    expect(status.code).to.equal(1);
    expect(status.stdout + status.stderr).to.match(/superseded/);

    // Every write the old writer acknowledged is on the new one (--archive-sync: none unshipped),
    // and the ids do not collide: the new writer's ids continue past them.
    const tasks = (await api(standby.url, 'GET', `${AUTH}/${repo}/tasks?limit=500`)).json.tasks as { title: string; task_id: string }[];
    const byId = new Map(tasks.map((t) => [t.task_id, t.title]));
    const missing = acknowledged.filter((a) => byId.get(a.id) !== a.title);
    expect(missing, `acknowledged by the old writer, not on the new one (of ${acknowledged.length})`).to.deep.equal([]);
    expect(acknowledged.map((a) => a.id)).to.not.include(newId);
  });

  it('cairn promote of a --lease standby waits for the writer\'s lease: refused while the writer holds it (nothing claimed), done once it expired', async () => {
    const url = `s3://${BUCKET}/manual/`;
    const lease = etcd().leaseUrl('manual');
    const writer = await spawn(path.join(tempDir(), 'w'), ['--archive', url, '--archive-interval-ms', '200', '--lease', lease, '--lease-ttl', '5']);
    await until('the writer holds the lease', async () => (await health(writer)).lease?.state === 'held', 30_000);
    const repo = await register(writer.url, 'alpha');
    expect((await newTask(writer, repo, 'seed')).status).to.equal(200);
    const standby = await spawn(path.join(tempDir(), 's'), ['--follow', url, '--follow-interval-ms', '200', '--lease', lease, '--lease-ttl', '5']);
    await until('the standby follows the repository', async () => (await health(standby)).follow?.repositories?.length === 1, 60_000);
    // The writer is alive and holds the lease: the promotion gives up before any claim.
    const early = await cli(['promote', '--server', standby.url, '--timeout', '4']);
    expect(early.code, early.stdout + early.stderr).to.not.equal(0);
    expect((await health(standby)).follow.state).to.not.equal('promoted');
    expect((await health(writer)).archive.state).to.not.equal('fenced');
    expect((await newTask(writer, repo, 'still the writer')).status).to.equal(200);
    // The writer dies; its lease expires; the promotion then takes it.
    writer.proc.kill('SIGKILL');
    await writer.exited;
    const promoted = await cli(['promote', '--server', standby.url, '--timeout', '120']);
    expect(promoted.code, promoted.stdout + promoted.stderr).to.equal(0);
    const h = await health(standby);
    expect(h.follow.state).to.equal('promoted');
    expect(h.lease.state).to.equal('held');
    expect((await newTask(standby, repo, 'on the standby')).status).to.equal(200);
  });

  it('one id never names two things: after a kill -9 and a failover, ids continue past those the old writer acknowledged but never shipped', async () => {
    const url = `s3://${BUCKET}/ids/`;
    const lease = etcd().leaseUrl('ids');
    const writer = await spawn(path.join(tempDir(), 'w'), ['--archive', url, '--archive-interval-ms', '200', '--lease', lease, '--lease-ttl', '5']);
    await until('the writer holds the lease', async () => (await health(writer)).lease?.state === 'held', 30_000);
    const repo = await register(writer.url, 'alpha');
    const sprint = (s: ChildServer, n: string) => api(s.url, 'POST', `${AUTH}/${repo}/sprints`, { json: { title: n, artifact_path: 'docs/plan.md', artifact_heading: 'Sprint', artifact_body: `# Sprint\n- [ ] item ${n} {#i${n}}\n` } });
    expect((await newTask(writer, repo, 'shipped')).status).to.equal(200);
    expect((await sprint(writer, 'shipped')).status).to.equal(200);
    // A snapshot on main, for repo.ci worker jobs (the id space `job`).
    const tree = path.join(tempDir(), 'tree');
    await fsp.mkdir(path.join(tree, 'ci'), { recursive: true });
    await fsp.writeFile(path.join(tree, 'ci/run.sh'), 'true\n');
    await push({ server: writer.url, repo, line: 'main', dir: tree, moveLine: true, progress: false });
    const runCi = (s: ChildServer) => api(s.url, 'POST', `${AUTH}/${repo}:runCi`, { json: {} });
    expect((await runCi(writer)).status).to.equal(200);
    const standbyDir = path.join(tempDir(), 's');
    const standby = await spawn(standbyDir, ['--follow', url, '--follow-interval-ms', '200', '--lease', lease, '--lease-ttl', '5', '--failover', 'auto']);
    await until('everything shipped and applied', async () => {
      const w = await health(writer);
      const f = await health(standby);
      return w.archive?.uncovered_commits === 0 && f.follow?.repositories?.[0]?.applied_commit === w.archive.repositories[0].committed;
    }, 60_000);

    // The archive stops answering: what the writer acknowledges now is never shipped.
    await swift().pause();
    const unshippedTasks: string[] = [];
    const unshippedPlans: string[] = [];
    const unshippedJobs: number[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const t = await newTask(writer, repo, `unshipped ${i}`);
        expect(t.status, t.text).to.equal(200);
        unshippedTasks.push(t.json.task.task_id);
        const p = await sprint(writer, `unshipped${i}`);
        expect(p.status, p.text).to.equal(200);
        unshippedPlans.push(p.json.plan.plan_id);
        const j = await runCi(writer);
        expect(j.status, j.text).to.equal(200);
        unshippedJobs.push(j.json.job.worker_job_index);
      }
      writer.proc.kill('SIGKILL');
      await writer.exited;
    } finally {
      await swift().resume();
    }
    await until('the standby promoted itself', async () => (await health(standby)).follow?.state === 'promoted', 120_000);
    const onStandby = await newTask(standby, repo, 'after failover');
    expect(onStandby.status, onStandby.text).to.equal(200);
    const plan = await sprint(standby, 'afterfailover');
    expect(plan.status, plan.text).to.equal(200);
    const seq = (id: string) => Number(/-([0-9]+)$/.exec(id)![1]);
    expect(unshippedTasks).to.not.include(onStandby.json.task.task_id);
    expect(seq(onStandby.json.task.task_id)).to.be.greaterThan(Math.max(...unshippedTasks.map(seq)));
    expect(unshippedPlans).to.not.include(plan.json.plan.plan_id);
    expect(seq(plan.json.plan.plan_id)).to.be.greaterThan(Math.max(...unshippedPlans.map(seq)));
    const job = await runCi(standby);
    expect(job.status, job.text).to.equal(200);
    expect(job.json.job.worker_job_index).to.be.greaterThan(Math.max(...unshippedJobs));
    const jobs = (await api(standby.url, 'GET', `${AUTH}/${repo}/worker-jobs`)).json.jobs.map((j: any) => j.worker_job_index);
    expect(jobs).to.deep.equal([job.json.job.worker_job_index, 0]);
    // The listing shows each task once, the gap left out; the floors are kept on disk for a restart.
    const tasks = (await api(standby.url, 'GET', `${AUTH}/${repo}/tasks`)).json.tasks.map((t: any) => t.task_id);
    expect(tasks).to.have.members(['task-1', onStandby.json.task.task_id]);
    const floors = JSON.parse(await fsp.readFile(path.join(standbyDir, 'id-floors.json'), 'utf8'));
    expect(floors.floors[String(repo)].task).to.be.at.least(Math.max(...unshippedTasks.map(seq)));
    expect(floors.floors[String(repo)].job).to.be.at.least(Math.max(...unshippedJobs) + 1);

    // The gap holds across a clean stop (a checkpoint), fsck and a restart as the writer.
    standby.proc.kill('SIGTERM');
    expect(await standby.exited).to.equal(0);
    const fsck = await cli(['fsck', '--data', standbyDir]);
    expect(fsck.code, fsck.stdout + fsck.stderr).to.equal(0);
    const again = await spawn(standbyDir, ['--archive', url, '--archive-interval-ms', '200', '--lease', lease, '--lease-ttl', '5']);
    await until('the restarted writer holds the lease', async () => (await health(again)).lease?.state === 'held', 60_000);
    const listed = (await api(again.url, 'GET', `${AUTH}/${repo}/tasks`)).json.tasks.map((t: any) => t.task_id);
    expect(listed).to.have.members(tasks);
    const next = await newTask(again, repo, 'after restart');
    expect(next.status, next.text).to.equal(200);
    expect(seq(next.json.task.task_id)).to.be.greaterThan(seq(onStandby.json.task.task_id));
  });

  it('a planned switchover releases the lease: the standby takes it at once (not after the TTL), the old writer refuses writes and names the new one', async () => {
    const url = `s3://${BUCKET}/switchover/`;
    const lease = etcd().leaseUrl('switchover');
    // A TTL far longer than the promotion's timeout: only a released lease lets the standby take it in time.
    const writer = await spawn(path.join(tempDir(), 'w'), ['--archive', url, '--archive-interval-ms', '200', '--lease', lease, '--lease-ttl', '300']);
    await until('the writer holds the lease', async () => (await health(writer)).lease?.state === 'held', 30_000);
    const repo = await register(writer.url, 'alpha');
    const before = await newTask(writer, repo, 'before the switchover');
    expect(before.status, before.text).to.equal(200);
    const standby = await spawn(path.join(tempDir(), 's'), ['--follow', url, '--follow-interval-ms', '200', '--lease', lease, '--lease-ttl', '300']);
    await until('the standby follows the repository', async () => (await health(standby)).follow?.repositories?.length === 1, 60_000);
    const r = await cli(['promote', '--server', standby.url, '--switchover', '--from', writer.url, '--timeout', '60', '--json']);
    expect(r.code, r.stdout + r.stderr).to.equal(0);
    const h = await health(standby);
    expect(h.follow.state).to.equal('promoted');
    expect(h.lease.state).to.equal('held');
    const tasks = (await api(standby.url, 'GET', `${AUTH}/${repo}/tasks`)).json.tasks.map((t: any) => t.title);
    expect(tasks).to.include('before the switchover');
    const after = await newTask(standby, repo, 'on the new writer');
    expect(after.status, after.text).to.equal(200);
    // The old writer refuses, naming where writes go now.
    const refused = await newTask(writer, repo, 'to the old writer');
    expect(refused.status).to.equal(503);
    expect(refused.json.error).to.include(standby.url);
  });
});

describe('serve --lease etcds://: etcd over TLS with its own auth (a user and a password)', function () {
  this.timeout(300_000);
  const etcd = useEtcd(true);
  const swift = useSwift();
  const children: ChildServer[] = [];
  const BUCKET_TLS = 'cairn-lease-tls';
  before(async () => {
    const admin = new S3Client({ region: swift().region, endpoint: swift().endpoint, forcePathStyle: true, credentials: { accessKeyId: swift().accessKeyId, secretAccessKey: swift().secretAccessKey } });
    await admin.send(new CreateBucketCommand({ Bucket: BUCKET_TLS }));
    admin.destroy();
  });
  after(async () => {
    for (const c of children.splice(0)) if (c.proc.exitCode === null && c.proc.signalCode === null) { c.proc.kill('SIGKILL'); await c.exited; }
  });
  const spawn = async (args: string[]): Promise<ChildServer> => {
    const c = await spawnServer(path.join(tempDir(), 'w'), ['--no-ui', ...args], true, swiftEnv(swift()));
    children.push(c);
    return c;
  };

  it('holds the lease with the CA, the user and the password (and writes); with a wrong password it never holds it and refuses writes; no secret is in its output', async () => {
    const sec = etcd().secrets!;
    const password = (await fsp.readFile(sec.passwordFile, 'utf8')).trim();
    const url = etcd().leaseUrl('tls');
    expect(url).to.match(/^etcds:\/\//);
    const writer = await spawn(['--archive', `s3://${BUCKET_TLS}/ok/`, '--archive-interval-ms', '200', '--lease', url, '--lease-ttl', '3',
      '--lease-ca-file', sec.ca, '--lease-cert-file', sec.clientCert, '--lease-key-file', sec.clientKey, '--lease-user', sec.user, '--lease-password-file', sec.passwordFile]);
    await until('the lease is held over TLS', async () => (await health(writer)).lease?.state === 'held', 60_000);
    const repo = await register(writer.url, 'alpha');
    expect((await newTask(writer, repo, 'over TLS')).status).to.equal(200);

    const wrong = path.join(tempDir(), 'wrong-password');
    await fsp.writeFile(wrong, 'not the password\n', { mode: 0o600 });
    const refused = await spawn(['--archive', `s3://${BUCKET_TLS}/wrong/`, '--archive-interval-ms', '200', '--lease', etcd().leaseUrl('wrong'), '--lease-ttl', '3',
      '--lease-ca-file', sec.ca, '--lease-cert-file', sec.clientCert, '--lease-key-file', sec.clientKey, '--lease-user', sec.user, '--lease-password-file', wrong]);
    await until('the server says the lease store does not answer', async () => /lease store does not answer yet/.test(refused.output()), 60_000);
    const h = await health(refused);
    expect(h.lease.state).to.equal('idle');
    const repo2 = await register(refused.url, 'beta').catch((err: Error) => err);
    expect(String(repo2)).to.match(/503/);
    for (const c of [writer, refused]) {
      expect(c.output()).to.not.include(password);
      expect(c.output()).to.not.include('not the password');
      expect(c.output()).to.not.include('PRIVATE KEY');
    }
  });

  it('refuses TLS files with etcd://, a password in clear to another machine, a password file others may read, a certificate without its key, a user without a password file, and etcd flags with --lease archive (usage errors, exit 2)', async () => {
    const sec = etcd().secrets!;
    const openPassword = path.join(tempDir(), 'open-password');
    await fsp.writeFile(openPassword, 'secret\n');
    await fsp.chmod(openPassword, 0o644);
    const cases: [string[], RegExp][] = [
      [['--archive', 's3://b/p/', '--lease', 'etcd://127.0.0.1:2379/p', '--lease-ca-file', sec.ca], /--lease-ca-file needs an etcds:\/\/ URL \(TLS\) for --lease or --cluster/],
      [['--archive', 's3://b/p/', '--lease', 'etcd://10.9.8.7:2379/p', '--lease-user', 'root', '--lease-password-file', sec.passwordFile], /--lease-user over etcd:\/\/10\.9\.8\.7:2379\/p would send the password in clear/],
      [['--archive', 's3://b/p/', '--lease', 'etcds://127.0.0.1:2379/p', '--lease-user', 'root', '--lease-password-file', openPassword], /--lease-password-file: .* is readable or writable by group or others \(mode 644\): chmod 600/],
      [['--archive', 's3://b/p/', '--lease', 'etcds://127.0.0.1:2379/p', '--lease-cert-file', sec.clientCert], /--lease-cert-file and --lease-key-file go together/],
      [['--archive', 's3://b/p/', '--lease', 'etcds://127.0.0.1:2379/p', '--lease-user', 'root'], /--lease-user and --lease-password-file go together/],
      [['--archive', 's3://b/p/', '--lease', 'archive', '--lease-user', 'root', '--lease-password-file', sec.passwordFile], /--lease-user is for etcd/],
      [['--archive', 's3://b/p/', '--lease', 'etcds://127.0.0.1:2379/p', '--lease-ca-file', '/nonexistent/ca.pem'], /--lease-ca-file: ENOENT/],
    ];
    for (const [args, message] of cases) {
      const data = path.join(tempDir(), 'data');
      const r = await cli(['serve', '--data', data, '--bind', '127.0.0.1:0', ...args]);
      expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).to.equal(2);
      expect(r.stderr).to.match(message);
    }
  });
});
