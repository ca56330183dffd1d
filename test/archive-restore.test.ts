// `cairn restore --from s3://…` against a real S3-compatible store (Swift s3api, test/swift.ts):
// an archive of a server's data directory (test/archive-fixture.ts writes it per
// storage-layout.md §20), restored into a new directory, answers the same reads byte for byte as
// the original did at that commit point; --seq and --at pick the right manifest; a damaged or
// missing object fails naming its key and the manifest's, and leaves no directory; so does a
// kill -9 before the commit point; cairn archive verify passes the archive and names a damaged
// object. The restore logic's own rules (a damaged manifest, an incomplete one, a follower's
// incremental apply, --at past a damaged manifest, --concurrency) run on the in-memory store.
import { expect } from 'chai';
import { existsSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { sha256Hex } from '../lib/archive/object-store.js';
import { S3ObjectStore, s3Settings } from '../lib/archive/s3-store.js';
import { applyManifest, findManifest, readManifest, restoreArchive } from '../lib/archive/restore.js';
import { fsckAuthority } from '../lib/store/fsck.js';
import { shipDataDir, type ShippedManifest } from './archive-dir-ship.js';
import { MemoryObjectStore } from './memory-store.js';
import { useSwift, type SwiftServer } from './swift.js';
import { api, cli, onTty, register, spawnServer, tempDir, type ChildServer } from './helpers.js';
import { reads, write } from './archive-reads.js';

const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;

function swiftEnv(swift: SwiftServer): Record<string, string> {
  return { AWS_ACCESS_KEY_ID: swift.accessKeyId, AWS_SECRET_ACCESS_KEY: swift.secretAccessKey, AWS_REGION: swift.region, AWS_ENDPOINT_URL_S3: swift.endpoint };
}

describe('cairn restore --from: a real object store (Swift s3api)', function () {
  this.timeout(600_000);
  const swift = useSwift();
  let env: Record<string, string>;
  let store: S3ObjectStore;
  const source = path.join(tempDir(), 'data');
  const repos: number[] = [];
  let first: ShippedManifest[];
  let second: ShippedManifest[];
  let atFirst: Record<number, Record<string, string>>;
  let atSecond: Record<number, Record<string, string>>;
  const children: ChildServer[] = [];

  const serve = async (dir: string): Promise<ChildServer> => {
    const s = await spawnServer(dir, ['--no-ui']);
    children.push(s);
    return s;
  };
  const stop = async (s: ChildServer): Promise<void> => {
    s.proc.kill('SIGTERM');
    await s.exited;
  };
  const restore = (args: string[], extra: Record<string, string> = {}) => cli(['restore', '--from', 's3://cairn-restore/site/', ...args], { ...env, ...extra });

  before(async () => {
    env = swiftEnv(swift());
    const admin = new S3Client({ region: swift().region, endpoint: swift().endpoint, forcePathStyle: true, credentials: { accessKeyId: swift().accessKeyId, secretAccessKey: swift().secretAccessKey } });
    await admin.send(new CreateBucketCommand({ Bucket: 'cairn-restore' }));
    admin.destroy();
    store = new S3ObjectStore({ bucket: 'cairn-restore', prefix: 'site/' }, s3Settings(env));

    let s = await serve(source);
    repos.push(await register(s.url, 'alpha', 'al'));
    repos.push(await register(s.url, 'beta'));
    for (const r of repos) await write(s.url, r, 1);
    atFirst = {};
    for (const r of repos) atFirst[r] = await reads(s.url, r);
    await stop(s);
    first = await shipDataDir(store, source, { gen: 1n });

    s = await serve(source);
    for (const r of repos) await write(s.url, r, 2);
    atSecond = {};
    for (const r of repos) atSecond[r] = await reads(s.url, r);
    await stop(s);
    // A later capture time than the first round's, whatever the clock did meanwhile.
    second = await shipDataDir(store, source, { gen: 1n, capturedAtUs: first[0]!.capturedAtUs + 60_000_000n });
  });
  after(async () => {
    for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
    store?.close();
  });

  it('restores every repository at its newest manifest: the same reads, byte for byte', async () => {
    const dir = path.join(tempDir(), 'restored');
    const r = await restore(['--data', dir, '--json']);
    expect(r.code, r.stderr).to.equal(0);
    const result = JSON.parse(r.stdout);
    expect(result.repositories.map((x: { repository: number; manifest: string }) => [x.repository, x.manifest])).to.deep.equal(second.map((m) => [m.repository, m.key]));
    expect(JSON.parse(await fsp.readFile(path.join(dir, 'archive.json'), 'utf8'))).to.deep.equal({ url: 's3://cairn-restore/site/', generation: '0' });
    const s = await serve(dir);
    for (const repo of repos) expect(await reads(s.url, repo)).to.deep.equal(atSecond[repo]);
    await stop(s);
    const fsck = await cli(['fsck', '--data', dir]);
    expect(fsck.code, fsck.stdout).to.equal(0);
  });

  it('--seq picks the newest manifest at or before that commit; other indexes become placeholders', async () => {
    const beta = repos[1]!;
    const m = first.find((x) => x.repository === beta)!;
    const dir = path.join(tempDir(), 'restored');
    const r = await restore(['--data', dir, '--repo', String(beta), '--seq', String(m.commit), '--json']);
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout).repositories).to.have.length(1);
    expect(JSON.parse(r.stdout).repositories[0].manifest).to.equal(m.key);
    const s = await serve(dir);
    expect(await reads(s.url, beta)).to.deep.equal(atFirst[beta]);
    // The index below it is a purged placeholder: indexes stay positions.
    const placeholder = await api(s.url, 'GET', R(repos[0]!));
    expect(placeholder.json.repository).to.include({ repository_name: '(reserved: index skipped by a restore)', lifecycle_kind: 3, tombstoned: true });
    await stop(s);
  });

  it('--repo NAME restores the repository of that name in the archive; an unknown name exits 1 with did-you-mean and writes nothing', async () => {
    const beta = repos[1]!;
    const dir = path.join(tempDir(), 'restored');
    const r = await restore(['--data', dir, '--repo', 'beta', '--json']);
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout).repositories.map((x: { repository: number }) => x.repository)).to.deep.equal([beta]);
    const s = await serve(dir);
    expect(await reads(s.url, beta)).to.deep.equal(atSecond[beta]);
    await stop(s);
    const wrong = path.join(tempDir(), 'wrong');
    const bad = await restore(['--data', wrong, '--repo', 'betta']);
    expect(bad.code, bad.stderr).to.equal(1);
    expect(bad.stderr).to.include('has no repository named "betta"').and.include('beta');
    expect(await fsp.stat(wrong).then(() => true, () => false)).to.equal(false);
  });

  it('--at picks by capture time; a time before every manifest is refused and leaves no directory', async () => {
    const dir = path.join(tempDir(), 'restored');
    const at = new Date(Number(first[0]!.capturedAtUs / 1000n) + 30_000).toISOString();
    const r = await restore(['--data', dir, '--at', at, '--json']);
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout).repositories.map((x: { manifest: string }) => x.manifest)).to.deep.equal(first.map((m) => m.key));
    const s = await serve(dir);
    for (const repo of repos) expect(await reads(s.url, repo)).to.deep.equal(atFirst[repo]);
    await stop(s);

    const none = path.join(tempDir(), 'restored');
    const early = await restore(['--data', none, '--at', String(Number(first[0]!.capturedAtUs / 1_000_000n) - 3600)]);
    expect(early.code).to.equal(1);
    expect(early.stderr).to.match(/has no manifest captured at or before/);
    expect(existsSync(none)).to.equal(false);
  });

  it('on a terminal draws progress in bytes per repository and prints a readable summary', async () => {
    const dir = path.join(tempDir(), 'restored');
    const r = await onTty(['restore', '--from', 's3://cairn-restore/site/', '--data', dir], env);
    expect(r.status, r.stdout).to.equal(0);
    expect(r.stdout).to.match(/repository 0 .*\d+(\.\d)? (B|KiB|MiB)/);
    expect(r.stdout).to.match(/restored 2 repositories into .*restored:/);
    expect(r.stdout).to.match(/repository 1: commit \d+ captured \d{4}-\d\d-\d\dT.*, \d+ objects, /);
  });

  it('a damaged object fails naming it and its manifest (exit 5); nothing is left behind', async () => {
    const dir = path.join(tempDir(), 'restored');
    const m = await readManifest(store, second[1]!.key);
    const pack = m.entries.find((e) => e.kind === 'pack')!;
    const original = await fsp.readFile(path.join(source, 'repositories', String(m.repository), pack.path));
    const bad = Buffer.from(original);
    bad[bad.length - 1] ^= 0xff;
    await store.put(pack.key, bad, { sha256: sha256Hex(bad), size: bad.length });
    try {
      const r = await restore(['--data', dir]);
      expect(r.code, r.stderr).to.equal(5);
      expect(r.stderr).to.include(pack.key).and.include(second[1]!.key).and.match(/damaged: sha256/);
      expect(existsSync(dir)).to.equal(false);
      expect((await fsp.readdir(path.dirname(dir))).filter((n) => n.includes('.tmp-'))).to.deep.equal([]);
    } finally {
      await store.put(pack.key, original, { sha256: sha256Hex(original), size: original.length });
    }
  });

  it('a missing object fails naming it and its manifest (exit 1); nothing is left behind', async () => {
    const dir = path.join(tempDir(), 'restored');
    const m = await readManifest(store, second[0]!.key);
    const range = m.entries.find((e) => e.kind === 'log-range')!;
    const got = await store.get(range.key);
    const chunks: Buffer[] = [];
    for await (const c of got.body) chunks.push(c as Buffer);
    const bytes = Buffer.concat(chunks);
    await store.delete(range.key);
    try {
      const r = await restore(['--data', dir]);
      expect(r.code, r.stderr).to.equal(1);
      expect(r.stderr).to.include(range.key).and.include(second[0]!.key).and.match(/missing from the archive/);
      expect(existsSync(dir)).to.equal(false);
    } finally {
      await store.put(range.key, bytes, { sha256: sha256Hex(bytes), size: bytes.length });
    }
  });

  it('cairn archive verify: a good archive exits 0 (JSON, and readable on a terminal); a damaged object exits 5 naming it', async () => {
    const good = await cli(['archive', 'verify', '--from', 's3://cairn-restore/site/', '--all', '--json'], env);
    expect(good.code, good.stderr).to.equal(0);
    const report = JSON.parse(good.stdout);
    expect(report.ok).to.equal(true);
    expect(report.repositories.map((r: { manifest: string }) => r.manifest)).to.deep.equal(second.map((m) => m.key));
    const tty = await onTty(['archive', 'verify', '--from', 's3://cairn-restore/site/'], env);
    expect(tty.status, tty.stdout).to.equal(0);
    expect(tty.stdout).to.match(/verified: s3:\/\/cairn-restore\/site\/ \(newest; 2 repositories archived\)/).and.match(/ok +repository \d: manifest /);

    const m = await readManifest(store, second[0]!.key);
    const pack = m.entries.find((e) => e.kind === 'pack')!;
    const original = await fsp.readFile(path.join(source, 'repositories', String(m.repository), pack.path));
    const bad = Buffer.from(original);
    bad[0] ^= 0xff;
    await store.put(pack.key, bad, { sha256: sha256Hex(bad), size: bad.length });
    try {
      const r = await cli(['archive', 'verify', '--from', 's3://cairn-restore/site/', '--all', '--json'], env);
      expect(r.code, r.stderr).to.equal(5);
      const failed = JSON.parse(r.stdout);
      expect(failed.ok).to.equal(false);
      expect(failed.repositories[0].problem).to.include(pack.key).and.include(second[0]!.key);
      expect(failed.repositories[1].ok).to.equal(true);
    } finally {
      await store.put(pack.key, original, { sha256: sha256Hex(original), size: original.length });
    }
  });

  it('kill -9 before the commit point leaves no directory; an existing non-empty one is refused', async () => {
    const dir = path.join(tempDir(), 'restored');
    const r = await restore(['--data', dir], { CAIRN_TEST_CRASH_AT: 'restore:before-commit' });
    expect(r.code).to.equal(null); // killed
    expect(existsSync(dir)).to.equal(false);

    await fsp.mkdir(dir);
    await fsp.writeFile(path.join(dir, 'x'), 'keep');
    const busy = await restore(['--data', dir]);
    expect(busy.code).to.not.equal(0);
    expect(busy.stderr).to.match(/is not empty/);
    expect(await fsp.readFile(path.join(dir, 'x'), 'utf8')).to.equal('keep');
  });
});

describe('restore: manifests and incremental apply (in-memory store)', function () {
  this.timeout(120_000);
  const source = path.join(tempDir(), 'data');
  let memory: MemoryObjectStore;
  let shipped: ShippedManifest[];
  let later: ShippedManifest[];

  before(async () => {
    const s = await spawnServer(source, ['--no-ui']);
    const repo = await register(s.url, 'gamma');
    await write(s.url, repo, 1);
    s.proc.kill('SIGTERM');
    await s.exited;
    memory = new MemoryObjectStore();
    shipped = await shipDataDir(memory, source);
    const again = await spawnServer(source, ['--no-ui']);
    await write(again.url, repo, 2);
    again.proc.kill('SIGTERM');
    await again.exited;
    later = await shipDataDir(memory, source, { capturedAtUs: shipped[0]!.capturedAtUs + 1_000_000n });
  });

  it('refuses a damaged newest manifest by its key instead of taking an older one', async () => {
    // The older manifest (the first round's) is intact.
    const key = later[0]!.key;
    const good = memory.objects.get(key)!;
    const bad = Buffer.from(good.bytes);
    bad[100] ^= 1;
    memory.objects.set(key, { ...good, bytes: bad });
    try {
      let err: Error | null = null;
      await findManifest(memory, 0).catch((e: Error) => { err = e; });
      expect(String(err)).to.include(key).and.include('checksum mismatch');
      // Asked for explicitly, the older one is used.
      expect((await findManifest(memory, 0, { seq: BigInt(shipped[0]!.commit) }))!.key).to.equal(shipped[0]!.key);
    } finally {
      memory.objects.set(key, good);
    }
  });

  it('--at skips a damaged newer manifest with a warning and restores the one at the time', async () => {
    const key = later[0]!.key;
    const good = memory.objects.get(key)!;
    const bad = Buffer.from(good.bytes);
    bad[100] ^= 1;
    memory.objects.set(key, { ...good, bytes: bad });
    try {
      const at = shipped[0]!.capturedAtUs + 500_000n; // before the later manifest's capture
      const found = (await findManifest(memory, 0, { atUs: at }))!;
      expect(found.key).to.equal(shipped[0]!.key);
      expect(found.skipped.map((x) => x.key)).to.deep.equal([key]);
      expect(found.skipped[0]!.problem).to.include('checksum mismatch');
      const warnings: string[] = [];
      const dir = path.join(tempDir(), 'restored');
      const done = await restoreArchive(memory, { url: 's3://bucket/site/', repositories: [0], target: { atUs: at }, dataDir: dir, onWarning: (w) => warnings.push(w) });
      expect(done[0]!.manifest).to.equal(shipped[0]!.key);
      expect(done[0]!.skipped_manifests).to.deep.equal([key]);
      expect(warnings.join('\n')).to.include(key).and.include('skipped');
      expect((await fsckAuthority(path.join(dir, 'repositories', '0'), 0)).problems).to.deep.equal([]);
      // Without --at (or with --seq at its commit), a damaged newest manifest is still refused by its key.
      let err: Error | null = null;
      await findManifest(memory, 0, { seq: BigInt(later[0]!.commit) }).catch((e: Error) => { err = e; });
      expect(String(err)).to.include(key);
    } finally {
      memory.objects.set(key, good);
    }
  });

  it('--concurrency N downloads N objects at once (forced: the downloads wait until N are in flight), never more, with the same bytes', async function () {
    this.timeout(20_000); // a restore that fetched fewer at once would wait here forever
    for (const concurrency of [1, 4, 16]) {
      let inFlight = 0;
      let max = 0;
      let open!: () => void;
      const gate = new Promise<void>((r) => { open = r; });
      const gated = Object.create(memory) as MemoryObjectStore;
      gated.get = async (key: string) => {
        // Manifests are read before the downloads start; only the objects they name are held.
        if (!key.includes('/manifests/')) {
          inFlight++;
          max = Math.max(max, inFlight);
          if (inFlight >= concurrency) open();
          await gate;
          inFlight--;
        }
        return memory.get(key);
      };
      const dir = path.join(tempDir(), 'restored');
      const done = await restoreArchive(gated, { url: 's3://bucket/site/', repositories: [0], target: {}, dataDir: dir, concurrency });
      expect(done[0]!.objects, 'enough objects to fill the pool').to.be.greaterThan(16);
      expect(max, `objects in flight at --concurrency ${concurrency}`).to.equal(concurrency);
      expect(done[0]!.manifest).to.equal(later[0]!.key);
      expect((await fsckAuthority(path.join(dir, 'repositories', '0'), 0)).problems, `concurrency ${concurrency}`).to.deep.equal([]);
    }
  });

  it('refuses an incomplete manifest before fetching anything', async () => {
    const found = (await findManifest(memory, 0))!;
    const m = found.manifest;
    const withoutSegment = { ...m, entries: m.entries.filter((e) => !/^index\/blobs\./.test(e.path)) };
    const dir = tempDir();
    memory.calls.length = 0;
    let err: Error | null = null;
    await applyManifest(memory, withoutSegment, dir, { manifestKey: found.key }).catch((e: Error) => { err = e; });
    expect(String(err)).to.match(/is incomplete: no object for index\/blobs\.\d+\.idx/);
    expect(memory.calls.filter((c) => c.startsWith('get '))).to.deep.equal([]);
  });

  it('an incremental apply of a later manifest fetches only what the directory lacks, and checks clean', async () => {
    const dir = tempDir();
    const older = await readManifest(memory, shipped[0]!.key);
    await applyManifest(memory, older, dir, { manifestKey: shipped[0]!.key });
    const newer = await readManifest(memory, later[0]!.key);
    memory.calls.length = 0;
    const result = await applyManifest(memory, newer, dir, { manifestKey: later[0]!.key, incremental: true });
    const fetched = memory.calls.filter((c) => c.startsWith('get ')).map((c) => c.slice(4));
    // Packs the directory holds are not fetched again; new ones are.
    const heldPacks = older.entries.filter((e) => e.kind === 'pack').map((e) => e.key);
    const newPacks = newer.entries.filter((e) => e.kind === 'pack' && !heldPacks.includes(e.key)).map((e) => e.key);
    expect(newPacks).to.not.deep.equal([]);
    expect(fetched.filter((k) => heldPacks.includes(k))).to.deep.equal([]);
    for (const k of newPacks) expect(fetched).to.include(k);
    expect(result.objects).to.be.below(newer.entries.length - 1);
    expect(result.commit.generation).to.equal(later[0]!.commit);
    // The committed bytes of every log are the source's.
    for (const name of ['workflow.log', 'events.log', 'snapshots.log']) {
      const length = result.commit.logs[name.replace('.log', '') as 'workflow'];
      const mine = (await fsp.readFile(path.join(dir, name))).subarray(0, length);
      const theirs = (await fsp.readFile(path.join(source, 'repositories', '0', name))).subarray(0, length);
      expect(mine.equals(theirs), name).to.equal(true);
    }
    const check = await fsckAuthority(dir, 0);
    expect(check.problems).to.deep.equal([]);
  });

  it('an incremental apply of the manifest already applied changes nothing', async () => {
    const found = (await findManifest(memory, 0))!;
    const dir = tempDir();
    const full = await applyManifest(memory, found.manifest, dir, { manifestKey: found.key });
    expect(full.objects).to.equal(found.manifest.entries.filter((e) => e.kind !== 'registry').length);
    const again = await applyManifest(memory, found.manifest, dir, { manifestKey: found.key, incremental: true });
    expect(again.unchanged).to.equal(true);
    expect(again.objects).to.equal(0);
    // The same bytes as the source authority's committed files.
    for (const e of found.manifest.entries.filter((x) => x.kind === 'pack' || x.kind === 'file')) {
      expect(sha256Hex(await fsp.readFile(path.join(dir, e.path))), e.path).to.equal(e.sha256);
    }
    expect(await fsp.readFile(path.join(dir, 'commit.bin'))).to.have.length(8192);
  });
});
