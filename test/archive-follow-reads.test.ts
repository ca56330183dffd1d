// Reads and event feeds of a warm standby (cairn serve --follow) while it applies manifests: a
// writer (cairn serve --archive) commits steadily, the follower applies each newer manifest
// (closing and reopening the repository's authority), and meanwhile concurrent readers hammer
// the follower. No request, however it falls against an apply, may fail with a 5xx, and an
// event-stream subscriber sees every event the writer produced, in order, with no gap and no
// duplicate (a reconnect with Last-Event-ID is allowed; none should be needed).
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { pull, push } from '../lib/client/transfer.js';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { useSwift } from './swift.js';
import { api, register, spawnServer, tempDir, until, type ChildServer } from './helpers.js';
import { write } from './archive-reads.js';

const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const URL_ = 's3://cairn-follow-reads/team/';

type Health = { archive?: { repositories: { repository: number; shipped_commit: string; committed: string }[] }; follow?: { repositories: { repository: number; applied_commit: string }[] } };
const health = async (url: string): Promise<Health> => (await api(url, 'GET', '/healthz')).json as Health;

/** An SSE reader of one repository's feed that reconnects with Last-Event-ID when the stream ends. */
class FeedReader {
  readonly ids: string[] = [];
  connections = 0;
  private stopped = false;
  private req: http.ClientRequest | null = null;
  readonly errors: string[] = [];
  constructor(private readonly base: string, private readonly path: string, private readonly from: string) {}

  start(): void {
    if (this.stopped) return;
    this.connections++;
    const last = this.ids.at(-1);
    const headers: Record<string, string> = { Accept: 'text/event-stream' };
    const target = last === undefined ? `${this.path}?since=${this.from}` : this.path;
    if (last !== undefined) headers['Last-Event-ID'] = last;
    const req = http.get(`${this.base}${target}`, { headers }, (res) => {
      if (res.statusCode !== 200) this.errors.push(`stream answered ${res.statusCode}`);
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let cut: number;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const id = /^id: (\S+)$/m.exec(frame);
          if (id) this.ids.push(id[1]!);
        }
      });
      res.on('end', () => setTimeout(() => this.start(), 50));
      res.on('error', () => {});
    });
    req.on('error', (err) => {
      if (!this.stopped) {
        this.errors.push(err.message);
        setTimeout(() => this.start(), 50);
      }
    });
    this.req = req;
  }

  stop(): void {
    this.stopped = true;
    this.req?.destroy();
  }
}

describe('cairn serve --follow: reads and event feeds across applies', function () {
  this.timeout(600_000);
  const swift = useSwift();
  const children: ChildServer[] = [];
  after(() => {
    for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
  });

  it('answers concurrent reads without a 5xx, and an event stream sees every event once, in order', async () => {
    const s = swift();
    const env = { AWS_ACCESS_KEY_ID: s.accessKeyId, AWS_SECRET_ACCESS_KEY: s.secretAccessKey, AWS_REGION: s.region, AWS_ENDPOINT_URL_S3: s.endpoint };
    const admin = new S3Client({ region: s.region, endpoint: s.endpoint, forcePathStyle: true, credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey } });
    await admin.send(new CreateBucketCommand({ Bucket: 'cairn-follow-reads' }));
    admin.destroy();
    const writer = await spawnServer(path.join(tempDir(), 'writer'), ['--no-ui', '--archive', URL_, '--archive-interval-ms', '100'], true, env);
    children.push(writer);
    const repo = await register(writer.url, 'alpha');
    await write(writer.url, repo, 1);
    // A snapshot whose export takes a while to read (a slow client reads it across applies).
    const bigDir = tempDir();
    await fsp.writeFile(path.join(bigDir, 'big.bin'), randomBytes(6 * 1024 * 1024));
    const big = (await push({ server: writer.url, repo, line: 'big', dir: bigDir, moveLine: true, progress: false })).snapshot_id;
    const follower = await spawnServer(path.join(tempDir(), 'follower'), ['--no-ui', '--follow', URL_, '--follow-interval-ms', '100'], true, env);
    children.push(follower);

    const applied = async (): Promise<string | null> => (await health(follower.url)).follow?.repositories.find((r) => r.repository === repo)?.applied_commit ?? null;
    const seen = new Set<string>();
    /** The writer shipped all it committed and the follower applied exactly that. */
    const caughtUp = (): Promise<unknown> => until('the follower to apply the writer\'s last commit', async () => {
      const shipped = (await health(writer.url)).archive?.repositories.find((r) => r.repository === repo);
      const a = await applied();
      if (a) seen.add(a);
      return shipped && shipped.shipped_commit === shipped.committed && a === shipped.committed;
    }, 120_000);
    await caughtUp();
    // A pull from the follower: its manifest is a POST that only reads.
    const out = path.join(tempDir(), 'pulled');
    const pulled = await pull({ server: follower.url, repo, line: 'big', out, progress: false });
    expect(pulled.snapshot_id).to.equal(big);
    expect((await fsp.stat(path.join(out, 'big.bin'))).size).to.equal(6 * 1024 * 1024);
    // A git clone is refused (git-upload-pack: a follower's git shadow is not kept up to date), never served stale.
    const clone = path.join(tempDir(), 'clone');
    const cloned = spawnSync('git', ['clone', '-q', `${follower.url}${R(repo, '/git/big.git')}`, clone], { encoding: 'utf8', env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
    expect(cloned.status).to.not.equal(0);
    expect(cloned.stderr).to.match(/503|read-only follower/);
    // Paths that stay valid as the history grows (round 1's objects).
    const lines = (await api(follower.url, 'GET', R(repo, '/lines/dev'))).json;
    const head = lines.head_snapshot_id ?? lines.line?.head_snapshot_id;
    const changes = (await api(follower.url, 'GET', R(repo, '/changes'))).json;
    const change = (changes.changes ?? changes.items)[0].change_id;
    const paths = [R(repo, '/tasks'), R(repo, '/lines'), R(repo, `/changes/${change}`), R(repo, `/read/snapshots/${head}/files/a.txt`), R(repo, `/snapshots/${head}?include_content=false`), R(repo, '/events?limit=50'), R(repo, `/read/changes/${change}/diff`), R(repo, `/read/snapshots/${head}/files/sub/b.bin`)];

    const feed = new FeedReader(follower.url, R(repo, '/events'), '0');
    const global = new FeedReader(follower.url, '/v1/native/events', '0-0-0');
    feed.start();
    global.start();
    /** The seqs of this repository's events a reader has seen, in the order seen. */
    const seqs = (reader: FeedReader): number[] => reader.ids.map((id) => id.split('-')).filter((p) => p.length === 1 || p[1] === String(repo)).map((p) => Number(p.at(-1)));
    const failures: string[] = [];
    let requests = 0;
    let reading = true;
    const reader = async (k: number): Promise<void> => {
      for (let i = k; reading; i++) {
        const p = paths[i % paths.length]!;
        try {
          const res = await api(follower.url, 'GET', p, { contract: false });
          requests++;
          if (res.status < 200 || res.status > 299) failures.push(`${res.status} GET ${p}: ${res.text.slice(0, 300)}`);
        } catch (err) {
          failures.push(`GET ${p} failed: ${(err as Error).message}`);
        }
      }
    };
    /** Exports of the big snapshot read slowly, so that applies fall in the middle of them. */
    const slowReader = async (): Promise<void> => {
      while (reading) {
        const outcome = await new Promise<string | null>((resolve) => {
          http.get(`${follower.url}${R(repo, `/snapshots/${big}`)}`, async (res) => {
            let bytes = 0;
            try {
              for await (const chunk of res) {
                bytes += (chunk as Buffer).length;
                await sleep(10);
              }
              resolve(res.statusCode === 200 && bytes === Number(res.headers['content-length']) ? null : `${res.statusCode} GET export: ${bytes} of ${res.headers['content-length']} bytes`);
            } catch (err) {
              resolve(`${res.statusCode} GET export failed after ${bytes} bytes: ${(err as Error).message}`);
            }
          }).on('error', (err) => resolve(`GET export failed: ${err.message}`));
        });
        requests++;
        if (outcome) failures.push(outcome);
      }
    };
    const readers = [...[0, 1, 2, 3, 4, 5].map(reader), slowReader()];

    // The writer commits steadily; the follower applies what it ships, several times over.
    for (let round = 2; round <= 9; round++) {
      await write(writer.url, repo, round);
      const a = await applied();
      if (a) seen.add(a);
    }
    await caughtUp();
    reading = false;
    await Promise.all(readers);

    const all = (await api(writer.url, 'GET', R(repo, '/events?since=0&limit=1000'))).json;
    const expected = (all.events as { seq: number }[]).map((e) => e.seq);
    await until('the event streams to reach the writer\'s last event', () => seqs(feed).at(-1) === expected.at(-1) && seqs(global).at(-1) === expected.at(-1), 60_000).catch(() => null);
    feed.stop();
    global.stop();

    expect(seen.size, 'applies observed').to.be.greaterThan(2);
    expect(requests).to.be.greaterThan(0);
    expect(failures, `non-2xx answers of the follower: ${failures.slice(0, 3).join(' | ')}`).to.deep.equal([]);
    expect(feed.errors, 'event stream errors').to.deep.equal([]);
    expect(global.errors, 'global event stream errors').to.deep.equal([]);
    expect(seqs(feed), 'events seen on the follower\'s repository stream').to.deep.equal(expected);
    expect(seqs(global), 'the repository\'s events seen on the follower\'s global stream').to.deep.equal(expected);
    // A reopen is transparent to a subscriber: the one stream went on across every apply.
    expect(feed.connections, 'repository event stream connections').to.equal(1);
    expect(global.connections, 'global event stream connections').to.equal(1);
  });
});
