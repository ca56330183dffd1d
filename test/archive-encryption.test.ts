// Client-side encryption of the archive (--archive-key-file; lib/archive/encryption.ts,
// storage-layout.md §20.9): the key file's rules, the golden sealed object, a server shipping
// through the sealing store (in memory) whose objects all open with the key and none without,
// key rotation, a missing or wrong key refused by name, a flipped byte found and nothing applied;
// and against a real store (Swift s3api): no object in the bucket holds a known file's text or
// any piece of its packs, while `cairn restore --archive-key-file` gives the file back exactly,
// `cairn archive verify` and a standby (`serve --follow`) read it with the key, and `serve`
// without the key stops at start naming the key id.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { existsSync, promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { EncryptedStore, loadArchiveKeys, parseArchiveKeys, sealBuffer, SEALED_MAGIC, SEALED_OVERHEAD } from '../lib/archive/encryption.js';
import { ObjectStoreError, sha256Hex } from '../lib/archive/object-store.js';
import { S3ObjectStore, s3Settings } from '../lib/archive/s3-store.js';
import { findManifest, restoreArchive } from '../lib/archive/restore.js';
import { pruneArchive } from '../lib/archive/prune.js';
import { parseRetention } from '../lib/domain/archive-retention.js';
import { push } from '../lib/client/transfer.js';
import { api, cli, register, spawnServer, startTestServer, tempDir, until, type ChildServer, type TestServer } from './helpers.js';
import { MemoryObjectStore } from './memory-store.js';
import { allKeys, commitContent, commitWorkflow } from './archive-fixture.js';
import { useSwift, type SwiftServer } from './swift.js';

const URL_ = 's3://cairn-test/sealed/';
const FIXTURES = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../fixtures');
const line = (id: string, key = randomBytes(32)): string => `${id}:${key.toString('base64')}\n`;

async function keyFile(text: string, mode = 0o600): Promise<string> {
  const file = path.join(tempDir(), 'archive.keys');
  await fsp.writeFile(file, text, { mode });
  await fsp.chmod(file, mode);
  return file;
}

async function caughtUp(url: string, repo: number): Promise<void> {
  await until('shipping caught up', async () => {
    const a = (await api(url, 'GET', '/healthz')).json.archive;
    const row = a?.repositories.find((x: any) => x.repository === repo);
    return row && row.shipped_commit !== '0' && row.shipped_commit === row.committed ? a : null;
  }, 60_000);
}

describe('archive encryption: keys, the sealed object, a shipping server (memory store)', function () {
  this.timeout(120_000);
  let server: TestServer | undefined;
  afterEach(async () => { await server?.stop(); server = undefined; });

  it('reads a key file of KEYID:BASE64 lines (the first writes), and refuses one open to others or malformed without echoing a key', async () => {
    const k1 = randomBytes(32);
    const keys = await loadArchiveKeys(await keyFile(`# archive keys\n${line('k2')}\n${line('k1', k1)}`));
    expect(keys.writing.id).to.equal('k2');
    expect([...keys.byId.keys()]).to.deep.equal(['k2', 'k1']);
    expect(keys.byId.get('k1')!.key.equals(k1)).to.equal(true);
    const refused = async (text: string, mode: number, says: RegExp): Promise<void> => {
      const err = await loadArchiveKeys(await keyFile(text, mode)).then(() => null, (e: Error) => e);
      expect(err, text).to.be.instanceOf(ObjectStoreError);
      expect(err!.message).to.match(says);
      for (const part of text.split(/[:\n]/)) if (part.length > 20) expect(err!.message).to.not.include(part);
    };
    await refused(line('k1'), 0o640, /accessible by group or others.*chmod 600/);
    await refused(line('k1'), 0o604, /accessible by group or others/);
    await refused('k1 AAAA\n', 0o600, /line 1: no ":"/);
    await refused(`${line('k1')}k2:${randomBytes(16).toString('base64')}\n`, 0o600, /line 2: the key must be 32 bytes/);
    await refused(`${line('k1')}${line('k1')}`, 0o600, /line 2: key id k1 appears twice/);
    await refused(`bad id:${randomBytes(32).toString('base64')}\n`, 0o600, /line 1: the key id/);
    await refused('# nothing\n', 0o600, /holds no key/);
    const missing = await loadArchiveKeys(path.join(tempDir(), 'none')).then(() => null, (e: Error) => e);
    expect(missing!.message).to.match(/cannot read the archive key file .*ENOENT/);
  });

  it('opens the golden sealed object (fixtures/archive-sealed-v1.bin) and seals it again byte for byte', async () => {
    const golden = readFileSync(path.join(FIXTURES, 'archive-sealed-v1.bin'));
    const key = Buffer.from(Array.from({ length: 32 }, (_, i) => i + 1));
    const keys = parseArchiveKeys(`golden:${key.toString('base64')}\n`, 'golden');
    const objectKey = 'repositories/7/g00000000000000000002/files/00000000000000000041/authority.bin';
    const plain = Buffer.from('cairn sealed golden\n');
    expect(golden.length).to.equal(plain.length + SEALED_OVERHEAD);
    expect(golden.subarray(0, 8).equals(SEALED_MAGIC)).to.equal(true);
    expect(golden.readUInt8(8)).to.equal(1);
    expect(golden.subarray(10, 10 + golden.readUInt8(9)).toString('latin1')).to.equal('golden');
    expect(sealBuffer(keys, objectKey, plain, Buffer.from(Array.from({ length: 12 }, (_, i) => 0xa0 + i))).equals(golden)).to.equal(true);
    const memory = new MemoryObjectStore();
    await memory.put(objectKey, golden, { sha256: sha256Hex(golden), size: golden.length });
    const sealed = new EncryptedStore(memory, keys);
    const got = await sealed.get(objectKey);
    expect(got.size).to.equal(plain.length);
    expect((await buffer(got.body)).equals(plain)).to.equal(true);
    // The object's key is part of what authenticates: the same bytes under another key do not open.
    await memory.put('repositories/7/elsewhere', golden, { sha256: sha256Hex(golden), size: golden.length });
    const moved = await buffer((await sealed.get('repositories/7/elsewhere')).body).then(() => null, (e: Error) => e);
    expect(moved!.message).to.match(/does not authenticate/);
  });

  it('streams a large object both ways in bounded pieces (a body read twice under one nonce), and refuses a body that is not what its put names', async () => {
    const memory = new MemoryObjectStore();
    const keys = parseArchiveKeys(line('k1'), 'keys');
    const sealed = new EncryptedStore(memory, keys);
    const big = randomBytes(20 * 1024 * 1024 + 123);
    const pieces = (b: Buffer): Readable => Readable.from((function* () { for (let at = 0; at < b.length; at += 65_536) yield b.subarray(at, at + 65_536); })());
    let opened = 0;
    await sealed.put('repositories/1/packs/objects/big.pack', () => { opened++; return pieces(big); }, { sha256: sha256Hex(big), size: big.length });
    expect(opened, 'read once to hash the sealed bytes, once to upload').to.equal(2);
    const stored = memory.objects.get('repositories/1/packs/objects/big.pack')!;
    expect(stored.bytes.length).to.equal(big.length + SEALED_OVERHEAD);
    expect(stored.sha256).to.equal(sha256Hex(stored.bytes));
    // Read back in 64 KiB pieces, as a network body arrives.
    const inner = memory.get.bind(memory);
    memory.get = async (key: string) => { const got = await inner(key); return { ...got, body: pieces(await buffer(got.body)) }; };
    const got = await sealed.get('repositories/1/packs/objects/big.pack');
    expect(got.size).to.equal(big.length);
    expect((await buffer(got.body)).equals(big)).to.equal(true);
    const head = await sealed.head('repositories/1/packs/objects/big.pack');
    expect(head!.size).to.equal(big.length);
    expect(head!.sha256).to.equal(undefined);
    const listed = await sealed.list('repositories/1/packs/');
    expect(listed.objects[0]!.size).to.equal(big.length);
    const wrong = await sealed.put('repositories/1/packs/objects/wrong.pack', () => pieces(big), { sha256: 'ab'.repeat(32), size: big.length }).then(() => null, (e: Error) => e);
    expect(wrong).to.be.instanceOf(ObjectStoreError);
    expect((wrong as ObjectStoreError).kind).to.equal('integrity');
    expect(memory.objects.has('repositories/1/packs/objects/wrong.pack')).to.equal(false);
  });

  it('seals every object a server ships, restores with the key, refuses without it or with another, and rotates keys', async () => {
    const memory = new MemoryObjectStore(false); // no lease: the restart need not wait one out
    const old = line('k1');
    const keys1 = parseArchiveKeys(old, 'keys');
    const dataDir = path.join(tempDir(), 'data');
    server = await startTestServer(dataDir, { archive: { url: URL_, store: new EncryptedStore(memory, keys1), intervalMs: 50 } });
    const repo = await register(server.url, 'alpha');
    const secret = `distinctive ${randomBytes(16).toString('hex')}`;
    await commitContent(server.url, repo, secret);
    await commitWorkflow(server.url, repo, 1);
    await caughtUp(server.url, repo);
    await server.stop();
    server = undefined;
    for (const key of await allKeys(memory)) {
      const bytes = memory.objects.get(key)!.bytes;
      expect(bytes.subarray(0, 8).equals(SEALED_MAGIC), `${key} is sealed`).to.equal(true);
      expect(bytes.includes(Buffer.from(secret)), `${key} holds the plaintext`).to.equal(false);
    }
    // Without the key: refused by name; with it: the restore works.
    const plain = new EncryptedStore(memory, null);
    const bare = await restoreArchive(plain, { url: URL_, repositories: 'all', target: {}, dataDir: path.join(tempDir(), 'bare') }).then(() => null, (e: Error) => e);
    expect(bare!.message).to.match(/the archive is encrypted with key id k1 .*--archive-key-file/);
    const other = await restoreArchive(new EncryptedStore(memory, parseArchiveKeys(line('k9'), 'other.keys')), { url: URL_, repositories: 'all', target: {}, dataDir: path.join(tempDir(), 'other') }).then(() => null, (e: Error) => e);
    expect(other!.message).to.match(/encrypted with key id k1 .*which other\.keys does not hold \(it holds k9\)/);
    const wrong = await restoreArchive(new EncryptedStore(memory, parseArchiveKeys(line('k1'), 'wrong.keys')), { url: URL_, repositories: 'all', target: {}, dataDir: path.join(tempDir(), 'wrong') }).then(() => null, (e: Error) => e);
    expect(wrong!.message).to.match(/encrypted with another key of id k1 than the one wrong\.keys holds/);
    for (const d of ['bare', 'other', 'wrong']) expect(existsSync(path.join(path.dirname(path.dirname(dataDir)), d))).to.equal(false);
    const restored = await restoreArchive(new EncryptedStore(memory, keys1), { url: URL_, repositories: 'all', target: {}, dataDir: path.join(tempDir(), 'restored') });
    expect(restored).to.have.length(1);

    // Rotation: the new key first, the old one after it; restart; old objects still read.
    const rotated = parseArchiveKeys(`${line('k2')}${old}`, 'rotated');
    const before = new Set(await allKeys(memory));
    server = await startTestServer(dataDir, { archive: { url: URL_, store: new EncryptedStore(memory, rotated), intervalMs: 50 } });
    await commitWorkflow(server.url, repo, 2);
    await caughtUp(server.url, repo);
    await server.stop();
    server = undefined;
    const added = (await allKeys(memory)).filter((k) => !before.has(k));
    expect(added.some((k) => k.includes('/manifests/'))).to.equal(true);
    for (const key of added) {
      const b = memory.objects.get(key)!.bytes;
      expect(b.subarray(10, 10 + b.readUInt8(9)).toString('latin1'), `${key} sealed with the writing key`).to.equal('k2');
    }
    const again = await restoreArchive(new EncryptedStore(memory, rotated), { url: URL_, repositories: 'all', target: {}, dataDir: path.join(tempDir(), 'again') });
    expect(again[0]!.commit).to.be.greaterThan(restored[0]!.commit);
    // A prune works through the keys too (it reads manifests), and the archive restores after it.
    await pruneArchive(new EncryptedStore(memory, rotated), { policy: parseRetention('all:1s', 'test'), graceMs: 0, now: () => Date.now() + 3_600_000 });
    const pruned = await restoreArchive(new EncryptedStore(memory, rotated), { url: URL_, repositories: 'all', target: {}, dataDir: path.join(tempDir(), 'pruned') });
    expect(pruned[0]!.commit).to.equal(again[0]!.commit);
    // Only the new key: the objects still sealed with k1 are named.
    const onlyNew = await restoreArchive(new EncryptedStore(memory, parseArchiveKeys(`${line('k2')}`, 'new-only')), { url: URL_, repositories: 'all', target: {}, dataDir: path.join(tempDir(), 'new-only') }).then(() => null, (e: Error) => e);
    expect(onlyNew!.message).to.match(/key id k1|another key of id k2/);
  });

  it('finds a flipped byte in a sealed object: the restore names it and writes nothing; a damaged newest manifest is skipped by --at with a warning', async () => {
    const memory = new MemoryObjectStore(false);
    const keys = parseArchiveKeys(line('k1'), 'keys');
    const sealed = new EncryptedStore(memory, keys);
    server = await startTestServer(path.join(tempDir(), 'data'), { archive: { url: URL_, store: sealed, intervalMs: 50 } });
    const repo = await register(server.url, 'alpha');
    await commitContent(server.url, repo, 'first');
    await caughtUp(server.url, repo);
    await commitContent(server.url, repo, 'second');
    await caughtUp(server.url, repo);
    await server.stop();
    server = undefined;
    const flip = (key: string, at: number): void => { const b = memory.objects.get(key)!.bytes; b[at] = b[at]! ^ 0x01; };
    const newest = (await findManifest(sealed, repo))!;
    const pack = newest.manifest.entries.find((e) => e.kind === 'pack')!;
    const packBytes = Buffer.from(memory.objects.get(pack.key)!.bytes);
    flip(pack.key, SEALED_OVERHEAD); // a byte of ciphertext
    const dir = path.join(tempDir(), 'flipped');
    const err = await restoreArchive(sealed, { url: URL_, repositories: [repo], target: {}, dataDir: dir }).then(() => null, (e: Error) => e);
    expect(err!.message).to.include(pack.key).and.to.match(/damaged.*does not authenticate/);
    expect(existsSync(dir)).to.equal(false);
    expect((await fsp.readdir(path.dirname(dir))).filter((n) => n.includes('tmp'))).to.deep.equal([]);
    memory.objects.get(pack.key)!.bytes = packBytes;
    // The newest manifest damaged: --at passes over it with a warning, plain restore refuses it.
    flip(newest.key, 70);
    const plainErr = await restoreArchive(sealed, { url: URL_, repositories: [repo], target: {}, dataDir: path.join(tempDir(), 'm') }).then(() => null, (e: Error) => e);
    expect(plainErr!.message).to.include(newest.key).and.to.match(/damaged/);
    const warnings: string[] = [];
    const at = await restoreArchive(sealed, { url: URL_, repositories: [repo], target: { atUs: BigInt(Date.now()) * 1000n }, dataDir: path.join(tempDir(), 'at'), onWarning: (m) => warnings.push(m) });
    expect(at[0]!.manifest).to.not.equal(newest.key);
    expect(at[0]!.skipped_manifests).to.deep.equal([newest.key]);
    expect(warnings.join('\n')).to.include(newest.key);
  });

  it('the archive\'s id read without the key from an encrypted archive, or with one from a plain archive, is refused by name (serve reads it at start)', async () => {
    const memory = new MemoryObjectStore(false);
    const keys = parseArchiveKeys(line('k1'), 'keys');
    server = await startTestServer(path.join(tempDir(), 'data'), { archive: { url: URL_, store: new EncryptedStore(memory, keys), intervalMs: 50 } });
    const repo = await register(server.url, 'alpha');
    await commitWorkflow(server.url, repo, 1);
    await caughtUp(server.url, repo);
    await server.stop();
    server = undefined;
    const bare = new EncryptedStore(memory, null);
    const e1 = await bare.get('archive-id').then((g) => buffer(g.body)).then(() => null, (e: Error) => e);
    expect(e1!.message).to.match(/encrypted with key id k1/);
    const plainStore = new MemoryObjectStore();
    const body = Buffer.from('{"archive_id":"00000000000000000000000000000000"}\n');
    await plainStore.put('archive-id', body, { sha256: sha256Hex(body), size: body.length });
    const e2 = await new EncryptedStore(plainStore, keys).get('archive-id').then((g) => buffer(g.body)).then(() => null, (e: Error) => e);
    expect(e2!.message).to.match(/is not encrypted, but --archive-key-file was given/);
  });
});

describe('archive encryption against a real object store (Swift s3api)', function () {
  this.timeout(600_000);
  const swift = useSwift();
  const BUCKET = 'cairn-sealed';
  const children: ChildServer[] = [];
  const env = (s: SwiftServer): Record<string, string> => ({ AWS_ACCESS_KEY_ID: s.accessKeyId, AWS_SECRET_ACCESS_KEY: s.secretAccessKey, AWS_REGION: s.region, AWS_ENDPOINT_URL_S3: s.endpoint });
  after(async () => {
    for (const c of children.splice(0)) if (c.proc.exitCode === null && c.proc.signalCode === null) { c.proc.kill('SIGTERM'); await c.exited; }
  });

  it('no object in the bucket holds a known file\'s text or a piece of its packs; restore with the key gives the file back exactly, without it or with another key it fails and writes nothing', async () => {
    const admin = new S3Client({ region: swift().region, endpoint: swift().endpoint, forcePathStyle: true, credentials: { accessKeyId: swift().accessKeyId, secretAccessKey: swift().secretAccessKey } });
    await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
    admin.destroy();
    const keys = await keyFile(line('site-2026'));
    const url = `s3://${BUCKET}/site/`;
    const source = path.join(tempDir(), 'data');
    const child = await spawnServer(source, ['--no-ui', '--archive', url, '--archive-key-file', keys, '--archive-interval-ms', '100'], true, env(swift()));
    children.push(child);
    const repo = await register(child.url, 'alpha');
    const secret = `The distinctive content of a file that must never reach the bucket: ${randomBytes(24).toString('hex')}\n`.repeat(40);
    const work = tempDir();
    await fsp.writeFile(path.join(work, 'secret.txt'), secret);
    const snap = (await push({ server: child.url, repo, line: 'dev', dir: work, moveLine: true, progress: false })).snapshot_id;
    await caughtUp(child.url, repo);
    // The key's id (never the key) is shown: /healthz and cairn archive status.
    const keyId = (await fsp.readFile(keys, 'utf8')).split(':')[0];
    expect((await api(child.url, 'GET', '/healthz')).json.archive.sealed_with).to.equal(keyId);
    const shown = await cli(['archive', 'status', '--server', child.url]);
    expect(JSON.parse(shown.stdout).sealed_with).to.equal(keyId);
    expect(shown.stdout).to.not.include((await fsp.readFile(keys, 'utf8')).split(':')[1]!.trim());
    child.proc.kill('SIGTERM');
    await child.exited;

    // Every piece of every pack of the source (the zstd-compressed file among them), 48 bytes every 256.
    const pieces: Buffer[] = [];
    const walk = async (dir: string): Promise<void> => {
      for (const e of await fsp.readdir(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) await walk(p);
        else if (e.name.endsWith('.pack')) {
          const b = await fsp.readFile(p);
          for (let at = 0; at + 48 <= b.length; at += 256) pieces.push(b.subarray(at, at + 48));
        }
      }
    };
    await walk(source);
    expect(pieces.length).to.be.greaterThan(0);
    const raw = new S3ObjectStore({ bucket: BUCKET, prefix: '' }, s3Settings(env(swift())));
    try {
      const everything = await allKeys(raw);
      expect(everything.some((k) => k.includes('/packs/'))).to.equal(true);
      const needle = Buffer.from(secret.slice(0, 64));
      for (const key of everything) {
        const bytes = await buffer((await raw.get(key)).body);
        expect(bytes.subarray(0, 8).equals(SEALED_MAGIC), `${key} is sealed`).to.equal(true);
        expect(bytes.includes(needle), `${key} holds the file's text`).to.equal(false);
        for (const piece of pieces) expect(bytes.includes(piece), `${key} holds a piece of a pack`).to.equal(false);
      }
    } finally {
      raw.close();
    }

    // A writer started on it without the key is refused at once, naming the key id.
    const keyless = await cli(['serve', '--bind', '127.0.0.1:0', '--data', path.join(tempDir(), 'keyless'), '--archive', url], env(swift()));
    expect(keyless.code).to.equal(2);
    expect(keyless.stderr).to.match(/--archive: the archive is encrypted with key id site-2026/);
    const restore = (args: string[]) => cli(['restore', '--from', url, '--json', ...args], env(swift()));
    const none = path.join(tempDir(), 'none');
    const r1 = await restore(['--data', none]);
    expect(r1.code).to.equal(2);
    expect(r1.stderr).to.match(/the archive is encrypted with key id site-2026 .*give --archive-key-file/);
    expect(existsSync(none)).to.equal(false);
    const wrong = path.join(tempDir(), 'wrong');
    const r2 = await restore(['--data', wrong, '--archive-key-file', await keyFile(line('site-2026'))]);
    expect(r2.code).to.equal(2);
    expect(r2.stderr).to.match(/another key of id site-2026/);
    expect(existsSync(wrong)).to.equal(false);
    const open = await keyFile(line('site-2026'), 0o644);
    const r3 = await restore(['--data', path.join(tempDir(), 'open'), '--archive-key-file', open]);
    expect(r3.code).to.equal(2);
    expect(r3.stderr).to.match(/accessible by group or others/);
    const good = path.join(tempDir(), 'good');
    const r4 = await restore(['--data', good, '--archive-key-file', keys]);
    expect(r4.code, r4.stderr).to.equal(0);
    const verify = await cli(['archive', 'verify', '--from', url, '--archive-key-file', keys, '--json'], env(swift()));
    expect(verify.code, verify.stderr).to.equal(0);
    const restored = await spawnServer(good, ['--no-ui']);
    children.push(restored);
    const res = await api(restored.url, 'GET', `/v1/native/repository-authorities/${repo}/read/snapshots/${snap}/files/secret.txt`, { headers: { accept: 'application/octet-stream' } });
    expect(res.status, res.text).to.equal(200);
    expect(res.text === secret, 'the file restored exactly').to.equal(true);

    // A standby follows the encrypted archive with the key, and refuses to start without it.
    const bareFollow = await cli(['serve', '--bind', '127.0.0.1:0', '--data', path.join(tempDir(), 'bare-follow'), '--follow', url], env(swift()));
    expect(bareFollow.code).to.equal(2);
    expect(bareFollow.stderr).to.match(/--follow: the archive is encrypted with key id site-2026/);
    const follower = await spawnServer(path.join(tempDir(), 'follower'), ['--no-ui', '--follow', url, '--archive-key-file', keys, '--follow-interval-ms', '200'], true, env(swift()));
    children.push(follower);
    await until('the follower to apply the archive', async () => {
      const f = (await api(follower.url, 'GET', '/healthz')).json.follow;
      return f?.repositories.some((r: any) => r.repository === repo && r.applied_commit !== '0') ? f : null;
    }, 120_000);
    const followed = await api(follower.url, 'GET', `/v1/native/repository-authorities/${repo}/read/snapshots/${snap}/files/secret.txt`, { headers: { accept: 'application/octet-stream' } });
    expect(followed.status, followed.text).to.equal(200);
    expect(followed.text === secret, 'the follower holds the file exactly').to.equal(true);
  });
});
