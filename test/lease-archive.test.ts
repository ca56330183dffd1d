// serve --lease archive: the writer lease kept in the archive itself (lib/lease/object-store-lease.ts),
// a time-based fence. Unit tests drive two leases on one in-memory store; the drill runs real
// server processes on a real Swift s3api (no conditional writes), the old writer alive all along.
// The tests wait for states (/healthz, a lease's state), never for a length of time.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { api, cli, register, spawnServer, startTestServer, tempDir, until, type ChildServer } from './helpers.js';
import type { WriterLease } from '../lib/authority/writer-lease.js';
import { ArchiveWriterLease, type FenceRecord } from '../lib/lease/object-store-lease.js';
import { ObjectStoreError, sha256Hex } from '../lib/archive/object-store.js';
import { MemoryObjectStore } from './memory-store.js';
import { useSwift, type SwiftServer } from './swift.js';

const AUTH = '/v1/native/repository-authorities';

async function claim(store: MemoryObjectStore, g: number): Promise<void> {
  const body = Buffer.from(JSON.stringify({ generation: g }));
  await store.put(`generations/${String(g).padStart(20, '0')}`, body, { sha256: sha256Hex(body), size: body.length });
}

describe('the writer lease in the archive (lib/lease/object-store-lease.ts)', function () {
  this.timeout(60_000);
  const leases: ArchiveWriterLease[] = [];
  const lease = (store: MemoryObjectStore, o: { standby: boolean; generation?: () => string | null; onSuperseded?: () => void }): ArchiveWriterLease => {
    const l = new ArchiveWriterLease(store, { archiveUrl: 's3://b/p/', ttlSeconds: 2, standby: o.standby, generation: o.generation ?? (() => null), ...(o.onSuperseded ? { onSuperseded: o.onSuperseded } : {}) });
    leases.push(l);
    return l;
  };
  afterEach(async () => { for (const l of leases.splice(0)) await l.close(); });

  it('a standby\'s fence stops a live writer before the standby holds: the writer is superseded at its next check, the standby holds one TTL after its fence, with the writer\'s id blocks', async () => {
    const store = new MemoryObjectStore(false);
    await claim(store, 1);
    const writer = lease(store, { standby: false, generation: () => '1' });
    expect(await writer.tryTakeover()).to.not.equal(null);
    expect(writer.state).to.equal('held');
    expect(await writer.reserve('0/task', 100)).to.equal(true);
    expect(await writer.reserve('0/change', 200)).to.equal(true);
    const standby = lease(store, { standby: true });
    expect(await standby.tryTakeover()).to.equal(null);
    const fence = JSON.parse((await buffer((await store.get('writer-fence/00000000000000000001')).body)).toString()) as FenceRecord;
    expect(fence).to.include({ node: standby.node, fenced_generation: 1, released: false });
    // Each time the standby looks before its TTL has passed, it does not hold; once it does, the writer does not.
    let taken = null;
    while (!(taken = await standby.tryTakeover())) {
      expect(standby.state).to.equal('idle');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(writer.holds(), 'the writer still held when the standby took over').to.equal(false);
    expect(writer.state).to.equal('superseded');
    expect(writer.successor?.node).to.equal(standby.node);
    expect(Object.fromEntries(taken.ceilings)).to.deep.equal({ '0/task': 100, '0/change': 200 });
    expect(standby.state).to.equal('held');
    // A superseded writer reserves nothing more.
    expect(await writer.reserve('0/task', 300)).to.equal(false);
  });

  it('a writer cut off from the store stops holding at its deadline, and a standby that fenced it holds only after', async () => {
    const store = new MemoryObjectStore();
    await claim(store, 4);
    // The writer reaches the store through a link the test can cut: every call then fails.
    let cut = false;
    const link = new Proxy(store, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => (cut && prop !== 'conditionalPut' ? Promise.reject(new ObjectStoreError('unavailable', 'cut off')) : v.apply(target, args));
      },
    });
    const writer = new ArchiveWriterLease(link, { archiveUrl: 's3://b/p/', ttlSeconds: 2, standby: false, generation: () => '4' });
    leases.push(writer);
    await writer.tryTakeover();
    expect(writer.holds()).to.equal(true);
    cut = true;
    const standby = lease(store, { standby: true });
    while (!(await standby.tryTakeover())) await new Promise((r) => setTimeout(r, 50));
    // The writer never saw the fence (it could not read it), yet its deadline passed first.
    expect(writer.holds(), 'the cut-off writer still held when the standby took over').to.equal(false);
    expect(writer.state).to.equal('uncertain');
    expect(await writer.reserve('0/task', 100)).to.equal(false);
  });

  it('a restarted writer carries on the ids its generation reserved; a fresh writer on an archive another writer ships to fences it first; a listing that lags loses no generation\'s ids; a release leaves a successor\'s fence as it is', async () => {
    const store = new MemoryObjectStore(false);
    await claim(store, 1);
    const first = lease(store, { standby: false, generation: () => '1' });
    await first.tryTakeover();
    expect(await first.reserve('0/task', 100)).to.equal(true);
    await first.close();
    // Restarted (kill -9 or a stop): the next reservation names both spaces, so a successor reads both.
    const again = lease(store, { standby: false, generation: () => '1' });
    const taken = await again.tryTakeover();
    expect(Object.fromEntries(taken!.ceilings)).to.deep.equal({ '0/task': 100 });
    expect(await again.reserve('0/change', 50)).to.equal(true);
    const newest = JSON.parse((await buffer((await store.get('writer-ids/00000000000000000001/00000000000000000002')).body)).toString());
    expect(newest.ids).to.deep.equal({ '0/task': 100, '0/change': 50 });
    // A writer that has claimed nothing yet (a fresh directory) on this archive: it fences generation 1 and waits.
    const fresh = lease(store, { standby: false, generation: () => null });
    expect(await fresh.tryTakeover()).to.equal(null);
    expect((await buffer((await store.get('writer-fence/00000000000000000001')).body)).toString()).to.include(fresh.node);
    // The old writer, asked to release now, leaves the fence as the successor wrote it.
    await again.release();
    expect(JSON.parse((await buffer((await store.get('writer-fence/00000000000000000001')).body)).toString())).to.include({ node: fresh.node, released: false });
    // Its ids are found even when the listing lags behind the objects (Swift's).
    store.staleListing();
    await claim(store, 2);
    const g2 = lease(store, { standby: false, generation: () => '2' });
    await g2.tryTakeover();
    expect(await g2.reserve('0/plan', 7)).to.equal(true);
    while (!(await fresh.tryTakeover())) await new Promise((r) => setTimeout(r, 50));
    expect(Object.fromEntries(await fresh.readCeilings())).to.deep.equal({ '0/task': 100, '0/change': 50, '0/plan': 7 });
    store.freshListing();
  });

  it('a writer that released (a handover) lets the standby hold at once; a writer whose generation was fenced while it was down is superseded at start', async () => {
    const store = new MemoryObjectStore();
    await claim(store, 2);
    const writer = lease(store, { standby: false, generation: () => '2' });
    await writer.tryTakeover();
    await writer.release();
    expect(writer.state).to.equal('released');
    const standby = lease(store, { standby: true });
    const taken = await standby.tryTakeover();
    expect(taken, 'a released lease is taken at once').to.not.equal(null);
    // Fenced while down: generation 3 is claimed and fenced; its writer restarts.
    await claim(store, 3);
    const next = lease(store, { standby: true });
    expect(await next.tryTakeover()).to.equal(null);
    let told = false;
    const restarted = lease(store, { standby: false, generation: () => '3', onSuperseded: () => { told = true; } });
    let failure: Error | null = null;
    await restarted.tryTakeover().catch((err: Error) => { failure = err; });
    expect(String(failure)).to.match(/generation 3 of the archive was fenced/);
    expect(restarted.state).to.equal('superseded');
    expect(told).to.equal(true);
  });
});

describe('the acknowledge point of a write outside a commit queue (--lease)', function () {
  it('a registration done while the lease was lost is durable but answered 503 committed (no Retry-After); reads, POST reads too, are answered', async () => {
    const s = await startTestServer();
    try {
      const service = await s.ready;
      // The lease was held when the request came in (no refusal before it), and lost by the time it was done.
      let lost = false;
      service.writerLease = { refusal: () => (lost ? 'this server cannot be sure it still holds the writer lease (test)' : null) } as unknown as WriterLease;
      const before = await api(s.url, 'POST', AUTH, { json: { repository_name: 'held', namespace: '', policy_flags: 0 } });
      expect(before.status, before.text).to.equal(201);
      lost = true;
      const res = await api(s.url, 'POST', AUTH, { json: { repository_name: 'late', namespace: '', policy_flags: 0 } });
      expect(res.status, res.text).to.equal(503);
      expect(res.json).to.include({ committed: true });
      expect(res.json.error).to.match(/^done on this server, but not acknowledged: this server cannot be sure it still holds the writer lease/);
      expect(res.headers.get('retry-after')).to.equal(null);
      const names = ((await api(s.url, 'GET', AUTH)).json.repositories as { repository_name: string }[]).map((r) => r.repository_name);
      expect(names).to.include.members(['held', 'late']);
      // A POST that only reads (a reader's route) is answered, neither refused before nor called committed after.
      service.writeRefusal = () => 'this server does not hold the writer lease (test)';
      const index = before.json.repository.repository_index;
      const read = await api(s.url, 'POST', `${AUTH}/${index}/snapshots:exists`, { json: { snapshot_ids: [] } });
      expect(read.status, read.text).to.equal(200);
      const write = await api(s.url, 'POST', `${AUTH}/${index}/tasks`, { json: { title: 't', intent: 'refused before it is written' } });
      expect(write.status).to.equal(503);
    } finally {
      await s.stop();
    }
  });
});

function swiftEnv(swift: SwiftServer): Record<string, string> {
  return { AWS_ACCESS_KEY_ID: swift.accessKeyId, AWS_SECRET_ACCESS_KEY: swift.secretAccessKey, AWS_REGION: swift.region, AWS_ENDPOINT_URL_S3: swift.endpoint };
}

describe('serve --lease archive: a promotion fences a live writer (Swift)', function () {
  this.timeout(600_000);
  const swift = useSwift();
  const BUCKET = 'cairn-archive-lease';
  const children: ChildServer[] = [];
  const spawn = async (dir: string, args: string[]): Promise<ChildServer> => {
    const c = await spawnServer(dir, ['--no-ui', ...args], true, swiftEnv(swift()));
    children.push(c);
    return c;
  };
  const health = async (s: ChildServer): Promise<any> => (await api(s.url, 'GET', '/healthz')).json;
  const newTask = (s: ChildServer, repo: number, title: string) => api(s.url, 'POST', `${AUTH}/${repo}/tasks`, { json: { title, intent: title }, contract: false });
  before(async () => {
    const admin = new S3Client({ region: swift().region, endpoint: swift().endpoint, forcePathStyle: true, credentials: { accessKeyId: swift().accessKeyId, secretAccessKey: swift().secretAccessKey } });
    await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
    admin.destroy();
  });
  after(async () => {
    for (const c of children.splice(0)) {
      if (c.proc.exitCode === null && c.proc.signalCode === null) { c.proc.kill('SIGKILL'); await c.exited; }
    }
  });

  it('cairn promote with the old writer alive and written to: it stops acknowledging before the standby writes; every write it acknowledged is on the new writer; its later writes are 503 superseded', async () => {
    const url = `s3://${BUCKET}/alive/`;
    const writerDir = path.join(tempDir(), 'w');
    const writer = await spawn(writerDir, ['--archive', url, '--archive-sync', '--archive-interval-ms', '200', '--lease', 'archive', '--lease-ttl', '3']);
    await until('the writer holds the lease', async () => (await health(writer)).lease?.state === 'held', 30_000);
    const repo = await register(writer.url, 'alpha');
    expect((await newTask(writer, repo, 'seed')).status).to.equal(200);
    const standby = await spawn(path.join(tempDir(), 's'), ['--follow', url, '--follow-interval-ms', '200', '--lease', 'archive', '--lease-ttl', '3']);
    await until('the standby follows the repository', async () => (await health(standby)).follow?.repositories?.length === 1, 60_000);
    expect((await health(writer)).lease.url).to.equal(`${url}writer-fence/`);

    const acknowledged: { title: string; id: string }[] = [];
    let writing = true;
    let n = 0;
    const client = (async () => {
      while (writing) {
        const title = `w${++n}`;
        try {
          const res = await newTask(writer, repo, title);
          if (res.status === 200) acknowledged.push({ title, id: res.json.task.task_id });
          else await new Promise((r) => setTimeout(r, 20));
        } catch {
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    })();
    await until('a few writes acknowledged', async () => acknowledged.length >= 5, 60_000);
    const promoted = await cli(['promote', '--server', standby.url, '--timeout', '120']);
    expect(promoted.code, promoted.stdout + promoted.stderr).to.equal(0);
    await until('the old writer knows it was superseded', async () => (await health(writer)).lease?.state === 'superseded', 30_000);
    writing = false;
    await client;
    const onStandby = await newTask(standby, repo, 'on the new writer');
    expect(onStandby.status, onStandby.text).to.equal(200);
    const late = await newTask(writer, repo, 'late');
    expect(late.status).to.equal(503);
    expect(late.json.error).to.match(/superseded: another writer took the writer lease/);
    expect(late.json.error).to.include(standby.url);
    const old = await health(writer);
    expect(old.archive.state).to.equal('fenced');
    const archiveFile = JSON.parse(await fsp.readFile(path.join(writerDir, 'archive.json'), 'utf8'));
    expect(archiveFile.fenced.why).to.match(/superseded/);

    // Every write the old writer acknowledged is on the new one, under the same id; the new ids continue past them.
    const tasks = (await api(standby.url, 'GET', `${AUTH}/${repo}/tasks?limit=1000`)).json.tasks as { title: string; task_id: string }[];
    const byId = new Map(tasks.map((t) => [t.task_id, t.title]));
    const missing = acknowledged.filter((a) => byId.get(a.id) !== a.title);
    expect(missing, `acknowledged by the old writer, not on the new one (of ${acknowledged.length})`).to.deep.equal([]);
    expect(acknowledged.map((a) => a.id)).to.not.include(onStandby.json.task.task_id);
  });
  it('a planned switchover releases the fence itself: the standby writes at once (a TTL far longer than the promotion\'s timeout), the old writer refuses and names the new one', async () => {
    const url = `s3://${BUCKET}/switchover/`;
    const writer = await spawn(path.join(tempDir(), 'w'), ['--archive', url, '--archive-interval-ms', '200', '--lease', 'archive', '--lease-ttl', '300']);
    await until('the writer holds the lease', async () => (await health(writer)).lease?.state === 'held', 30_000);
    const repo = await register(writer.url, 'alpha');
    expect((await newTask(writer, repo, 'before the switchover')).status).to.equal(200);
    const standby = await spawn(path.join(tempDir(), 's'), ['--follow', url, '--follow-interval-ms', '200', '--lease', 'archive', '--lease-ttl', '300']);
    await until('the standby follows the repository', async () => (await health(standby)).follow?.repositories?.length === 1, 60_000);
    const r = await cli(['promote', '--server', standby.url, '--switchover', '--from', writer.url, '--timeout', '60', '--json']);
    expect(r.code, r.stdout + r.stderr).to.equal(0);
    const h = await health(standby);
    expect(h.follow.state).to.equal('promoted');
    expect(h.lease.state).to.equal('held');
    expect((await api(standby.url, 'GET', `${AUTH}/${repo}/tasks`)).json.tasks.map((t: any) => t.title)).to.include('before the switchover');
    expect((await newTask(standby, repo, 'on the new writer')).status).to.equal(200);
    const refused = await newTask(writer, repo, 'to the old writer');
    expect(refused.status).to.equal(503);
    expect(refused.json.error).to.include(standby.url);
  });
});
