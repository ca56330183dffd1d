// The S3 object store (lib/archive/s3-store.ts) against a real S3-compatible server: OpenStack
// Swift's s3api on loopback (test/swift.ts), plus its configuration rules, which need no server.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { Readable } from 'node:stream';
import v8 from 'node:v8';
import vm from 'node:vm';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { ObjectStoreError, type ObjectStore } from '../lib/archive/object-store.js';
import { S3ObjectStore, canonicalArchiveUrl, describeSettings, parseArchiveUrl, s3Settings } from '../lib/archive/s3-store.js';
import { rejection, storeContract } from './archive-store-contract.js';
import { useSwift, type SwiftServer } from './swift.js';

function swiftEnv(swift: SwiftServer, secret = swift.secretAccessKey): NodeJS.ProcessEnv {
  return {
    AWS_ACCESS_KEY_ID: swift.accessKeyId,
    AWS_SECRET_ACCESS_KEY: secret,
    AWS_REGION: swift.region,
    AWS_ENDPOINT_URL_S3: swift.endpoint,
  };
}

/** `size` bytes of a deterministic pseudo-random stream, produced a block at a time. */
function generated(size: number, block = 1024 * 1024): () => Readable {
  return () => Readable.from((function* () {
    for (let i = 0, n = 0; i < size; i += block, n++) {
      const out = Buffer.alloc(Math.min(block, size - i));
      let seed = createHash('sha256').update(`block ${n}`).digest();
      for (let j = 0; j < out.length; j += 32) {
        seed.copy(out, j);
        seed = createHash('sha256').update(seed).digest();
      }
      yield out;
    }
  })());
}

async function sha256Of(stream: Readable): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

// A collection before each sample, so the samples measure what is held, not garbage not yet
// collected (which varies with the machine and would make the bound flaky).
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Runs `work` while sampling live heap + buffer memory; returns the highest rise above the start. */
async function peakRise<T>(work: () => Promise<T>): Promise<{ result: T; rise: number }> {
  const used = (): number => { gc(); const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers; };
  const start = used();
  let peak = start;
  const timer = setInterval(() => { peak = Math.max(peak, used()); }, 50);
  try {
    const result = await work();
    return { result, rise: peak - start };
  } finally {
    clearInterval(timer);
  }
}

describe('archive object store: S3 on Swift s3api', function () {
  this.timeout(180_000);
  const swift = useSwift();
  const stores: S3ObjectStore[] = [];
  const open = (bucket: string, prefix: string, env: NodeJS.ProcessEnv): S3ObjectStore => {
    const s = new S3ObjectStore({ bucket, prefix }, s3Settings(env));
    stores.push(s);
    return s;
  };
  let store: S3ObjectStore;

  before(async () => {
    const admin = new S3Client({
      region: swift().region,
      endpoint: swift().endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: swift().accessKeyId, secretAccessKey: swift().secretAccessKey },
    });
    await admin.send(new CreateBucketCommand({ Bucket: 'cairn-archive' }));
    admin.destroy();
    store = open('cairn-archive', 'site-a/', swiftEnv(swift()));
  });
  after(() => { for (const s of stores) s.close(); });

  storeContract((): ObjectStore => store);

  it('keeps keys under its prefix: another prefix in the same bucket sees none of them', async () => {
    const other = open('cairn-archive', 'site-b/', swiftEnv(swift()));
    const body = Buffer.from('x');
    await store.put('k/1', body, { sha256: createHash('sha256').update(body).digest('hex'), size: 1 });
    expect((await other.list('k/')).objects).to.deep.equal([]);
    expect(await other.head('k/1')).to.equal(null);
    expect((await store.list('k/')).objects.map((o) => o.key)).to.deep.equal(['k/1']);
    await store.delete('k/1');
  });

  it('streams a 128 MiB object up (multipart) and down with bounded memory, byte-exact', async () => {
    const size = 128 * 1024 * 1024;
    const sha256 = await sha256Of(generated(size)());
    const up = await peakRise(() => store.put('packs/big', generated(size), { sha256, size }));
    expect(await store.head('packs/big')).to.include({ size, sha256 });
    const down = await peakRise(async () => {
      const got = await store.get('packs/big');
      expect(got.size).to.equal(size);
      return sha256Of(got.body);
    });
    expect(down.result).to.equal(sha256);
    if (process.env.CAIRN_TEST_VERBOSE) console.log(`      upload rise ${(up.rise / 2 ** 20).toFixed(1)} MiB, download rise ${(down.rise / 2 ** 20).toFixed(1)} MiB`);
    // Holding the whole object would rise by at least 128 MiB; the upload holds up to three
    // 8 MiB parts (two in flight, one filling) plus the SDK's and the socket's copies: 34 MiB
    // measured on an idle machine, up to 63 MiB with the store slowed by a loaded machine (parts
    // wait longer in flight), which no longer comes near the whole object's size.
    expect(up.rise, 'upload memory rise').to.be.below(80 * 1024 * 1024);
    expect(down.rise, 'download memory rise').to.be.below(80 * 1024 * 1024);
    await store.delete('packs/big');
  });

  it('detects that Swift does not honour If-None-Match: * (501), and keeps working after it', async () => {
    expect(await store.conditionalPut()).to.equal(false);
    expect((await store.list('probe/')).objects, 'the probe object is removed').to.deep.equal([]);
    const err = await rejection(store.putIfAbsent('lease', Buffer.from('a'), { sha256: createHash('sha256').update('a').digest('hex'), size: 1 }));
    expect(err.kind).to.equal('not-implemented');
    expect(err.status).to.equal(501);
    // The same client (and its kept-alive connections) still answers.
    const body = Buffer.from('after');
    await store.put('after-501', body, { sha256: createHash('sha256').update(body).digest('hex'), size: body.length });
    expect(await store.head('after-501')).to.include({ size: 5 });
    await store.delete('after-501');
  });

  it('maps failures to clear errors that carry no secret', async () => {
    const secret = 'not-the-right-secret-9f3a';
    const denied = open('cairn-archive', 'site-a/', swiftEnv(swift(), secret));
    const e1 = await rejection(denied.head('anything').then((v) => { if (v === null) throw new ObjectStoreError('other', 'head answered null'); }));
    const e2 = await rejection(denied.list(''));
    for (const e of [e1, e2]) {
      expect(e.kind).to.equal('denied');
      expect(e.status).to.equal(403);
      expect(e.message).to.match(/check the archive credentials/);
      expect(e.message).to.not.include(secret);
      expect(e.message).to.not.include(swift().secretAccessKey);
    }
    const noBucket = open('no-such-bucket', '', swiftEnv(swift()));
    const e3 = await rejection(noBucket.list(''));
    expect(e3.kind).to.equal('not-found');
    expect(e3.message).to.match(/^list no-such-bucket\/\*: 404 /);
    const e4 = await rejection(store.get('packs/absent'));
    expect(e4.kind).to.equal('not-found');
    expect(e4.message).to.equal('get cairn-archive/site-a/packs/absent: 404 NoSuchKey');
    // Nothing listens on port 9 of loopback: no answer, worth retrying.
    const down = open('cairn-archive', '', { ...swiftEnv(swift()), AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9' });
    const e5 = await rejection(down.head('x'));
    expect(e5.kind).to.equal('unavailable');
    expect(e5.retryable).to.equal(true);
    expect(e5.message).to.match(/no answer from the object store/);
  });
});

describe('archive object store: configuration', () => {
  it('reads the SDK environment; a custom endpoint means path-style', () => {
    const s = s3Settings({ AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SK', AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL: 'http://127.0.0.1:8080' });
    expect(s).to.include({ region: 'eu-west-1', endpoint: 'http://127.0.0.1:8080', accessKeyId: 'AK', secretAccessKey: 'SK', forcePathStyle: true });
    expect(s3Settings({ AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL: 'http://a', AWS_ENDPOINT_URL_S3: 'http://b' }).endpoint, 'the S3-specific variable wins').to.equal('http://b');
    const aws = s3Settings({ AWS_DEFAULT_REGION: 'us-east-2' });
    expect(aws).to.include({ region: 'us-east-2', forcePathStyle: false });
    expect(aws.accessKeyId, 'no keys: the SDK default chain').to.equal(undefined);
  });

  it('lets the configuration file win over the environment', () => {
    const s = s3Settings({ AWS_ACCESS_KEY_ID: 'ENVKEY', AWS_SECRET_ACCESS_KEY: 'ENVSECRET', AWS_SESSION_TOKEN: 'ENVTOKEN', AWS_REGION: 'us-east-1' },
      JSON.stringify({ region: 'eu-central-1', endpoint: 'https://s3.example.net', access_key_id: 'FILEKEY', secret_access_key: 'FILESECRET' }));
    expect(s).to.include({ region: 'eu-central-1', endpoint: 'https://s3.example.net', accessKeyId: 'FILEKEY', secretAccessKey: 'FILESECRET', forcePathStyle: true });
    expect(s.sessionToken, 'the environment token belongs to the environment keys').to.equal(undefined);
    expect(s3Settings({}, JSON.stringify({ region: 'r', endpoint: 'https://e', force_path_style: false })).forcePathStyle).to.equal(false);
  });

  it('refuses unusable settings with a message that names the setting and no secret', () => {
    const cases: Array<[NodeJS.ProcessEnv, string | undefined, RegExp]> = [
      [{}, undefined, /no region/],
      [{ AWS_REGION: 'r' }, '[1]', /must be a JSON object/],
      [{ AWS_REGION: 'r' }, '{', /is not JSON/],
      [{ AWS_REGION: 'r' }, '{"bucket": "x"}', /unknown field "bucket"/],
      [{ AWS_REGION: 'r' }, '{"region": 3}', /region must be a non-empty string/],
      [{ AWS_REGION: 'r' }, '{"access_key_id": "AK"}', /needs its secret access key/],
      [{ AWS_REGION: 'r', AWS_ENDPOINT_URL: 'ftp://x' }, undefined, /must be http/],
      [{ AWS_REGION: 'r', AWS_ENDPOINT_URL: 'http://AK:SUPERSECRET@host' }, undefined, /must not carry credentials/],
    ];
    for (const [env, text, message] of cases) {
      let err: unknown;
      try { s3Settings(env, text); } catch (e) { err = e; }
      expect(err, String(message)).to.be.instanceOf(ObjectStoreError);
      expect((err as ObjectStoreError).kind).to.equal('config');
      expect((err as Error).message).to.match(message);
      expect((err as Error).message).to.not.include('SUPERSECRET');
    }
  });

  it('describes the settings without the secret', () => {
    const d = JSON.stringify(describeSettings(s3Settings({ AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SUPERSECRET', AWS_REGION: 'r' })));
    expect(d).to.not.include('SUPERSECRET');
    expect(d).to.include('static keys');
  });

  it('writes the endpoint one way (scheme and host in lower case, no default port, no trailing slash)', () => {
    for (const e of ['HTTP://S3.Example.NET:80/', 'http://s3.example.net', 'http://s3.example.net//']) {
      expect(s3Settings({ AWS_REGION: 'r', AWS_ENDPOINT_URL_S3: e }).endpoint, e).to.equal('http://s3.example.net');
    }
    expect(s3Settings({ AWS_REGION: 'r', AWS_ENDPOINT_URL_S3: 'https://h:9000/base/' }).endpoint).to.equal('https://h:9000/base');
  });

  it('bounds every request: timeouts and tries from the configuration file, with defaults', () => {
    expect(s3Settings({ AWS_REGION: 'r' })).to.include({ connectTimeoutMs: 5000, timeoutMs: 20000, maxAttempts: 3 });
    expect(s3Settings({ AWS_REGION: 'r' }, JSON.stringify({ connect_timeout_ms: 1000, timeout_ms: 2000, max_attempts: 1 }))).to.include({ connectTimeoutMs: 1000, timeoutMs: 2000, maxAttempts: 1 });
    for (const bad of [{ timeout_ms: 0 }, { timeout_ms: '5' }, { max_attempts: 11 }, { connect_timeout_ms: 1.5 }]) {
      expect(() => s3Settings({ AWS_REGION: 'r' }, JSON.stringify(bad)), JSON.stringify(bad)).to.throw(/must be an integer from/);
    }
  });

  it('a request to a store that accepts the connection and never answers fails after the timeout, tried a bounded number of times', async () => {
    const connections: net.Socket[] = [];
    const hung = net.createServer((socket) => { connections.push(socket); socket.on('error', () => undefined); });
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    const port = (hung.address() as net.AddressInfo).port;
    const store = new S3ObjectStore({ bucket: 'cairn-hung', prefix: '' }, s3Settings({ AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b', AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}` }, JSON.stringify({ timeout_ms: 300, max_attempts: 2 })));
    try {
      for (const call of [() => store.head('k'), () => store.list(''), () => store.get('k'), () => store.put('k', Buffer.from('x'), { sha256: createHash('sha256').update('x').digest('hex'), size: 1 })]) {
        const before = connections.length;
        const err = await rejection(call());
        expect(err.kind).to.equal('unavailable');
        expect(err.message).to.match(/no answer from the object store/);
        expect(connections.length - before, 'two tries, no more').to.equal(2);
      }
    } finally {
      store.close();
      for (const c of connections) c.destroy();
      await new Promise((resolve) => hung.close(resolve));
    }
  });

  it('a conditional-write probe that failed (the store was down) is not remembered: once the store answers, the next call probes again', async () => {
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => {
        // As Swift 2.30: a conditional PUT is not implemented; a DELETE succeeds.
        if (req.method === 'PUT' && req.headers['if-none-match']) {
          res.writeHead(501, { 'content-type': 'application/xml' });
          res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>NotImplemented</Code><Message>not implemented</Message></Error>');
        } else {
          res.writeHead(204);
          res.end();
        }
      });
    });
    // A port nothing listens on yet: the store is down.
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const store = new S3ObjectStore({ bucket: 'cairn-probe', prefix: 'p/' }, s3Settings({ AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b', AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}` }, JSON.stringify({ max_attempts: 1 })));
    try {
      const down = await rejection(store.conditionalPut());
      expect(down.kind).to.equal('unavailable');
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      expect(await store.conditionalPut(), 'probed again once the store answers').to.equal(false);
      expect(seen.filter((x) => x.startsWith('PUT /cairn-probe/p/probe/')).length).to.equal(1);
      expect(await store.conditionalPut(), 'an answer is remembered').to.equal(false);
      expect(seen.filter((x) => x.startsWith('PUT ')).length).to.equal(1);
    } finally {
      store.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('parses s3://bucket/prefix', () => {
    expect(parseArchiveUrl('s3://my-bucket')).to.deep.equal({ bucket: 'my-bucket', prefix: '' });
    expect(parseArchiveUrl('s3://my-bucket/a/b')).to.deep.equal({ bucket: 'my-bucket', prefix: 'a/b/' });
    expect(parseArchiveUrl('s3://my-bucket/a/b/')).to.deep.equal({ bucket: 'my-bucket', prefix: 'a/b/' });
    // One archive, one spelling: the scheme's case, repeated and trailing slashes do not matter.
    for (const same of ['s3://my-bucket/a/b', 'S3://my-bucket/a/b/', 's3://my-bucket//a//b//', ' s3://my-bucket/a/b ']) {
      expect(canonicalArchiveUrl(same), same).to.equal('s3://my-bucket/a/b/');
    }
    expect(canonicalArchiveUrl('s3://my-bucket')).to.equal('s3://my-bucket/');
    expect(canonicalArchiveUrl('s3://my-bucket/')).to.equal('s3://my-bucket/');
    for (const bad of ['http://x/y', 's3://', 's3://UPPER', 's3://bb/../x', 's3://bb/a/./c', 's3:/bb']) {
      expect(() => parseArchiveUrl(bad), bad).to.throw(ObjectStoreError);
    }
  });
});
