// The RPO drill of a store outage, on real Swift s3api (test/swift.ts): a writer under a steady
// write load loses its store for a few seconds — once refused (nothing listens at its address:
// the store is down) and once hung (every Swift process stopped: connections accepted, nothing
// answered) — and gets it back. The commits go on being acknowledged meanwhile; once the store
// answers again, a stored manifest covers every commit acknowledged during the outage (found by
// listing the store, not by trusting /healthz), and a restore holds every acknowledged write.
// The time that takes is measured by the bench (bench/archive-rpo.ts, docs/benchmarks.md), not
// asserted here: the test asserts the coverage.
import { expect } from 'chai';
import net from 'node:net';
import path from 'node:path';
import { promises as fsp } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { api, cli, register, spawnServer, tempDir, until, type ChildServer } from './helpers.js';
import { Forwarder, useSwift, type SwiftServer } from './swift.js';
import { parseManifestKey } from '../lib/domain/archive-manifest.js';

const BUCKET = 'cairn-outage-rpo';
const URL_ = `s3://${BUCKET}/drill/`;
/** How long the store is gone in each drill. */
const OUTAGE_MS = 4000;

function swiftEnv(swift: SwiftServer, endpoint = swift.endpoint): Record<string, string> {
  return { AWS_ACCESS_KEY_ID: swift.accessKeyId, AWS_SECRET_ACCESS_KEY: swift.secretAccessKey, AWS_REGION: swift.region, AWS_ENDPOINT_URL_S3: endpoint };
}

async function unusedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/** Tasks created back to back (one commit each) until stop(); every acknowledged one with the time of its answer. */
function steadyLoad(url: string, repo: number): { acked: { id: string; at: number }[]; failed: number; stop: () => Promise<void> } {
  const acked: { id: string; at: number }[] = [];
  let stopped = false;
  const state = { acked, failed: 0, stop: async () => { stopped = true; await loop; } };
  const loop = (async () => {
    for (let n = 0; !stopped; n++) {
      const res = await api(url, 'POST', `/v1/native/repository-authorities/${repo}/tasks`, { json: { title: `drill ${n}`, intent: 'outage drill' }, contract: false }).catch(() => null);
      if (res && (res.status === 200 || res.status === 201)) acked.push({ id: res.json.task.task_id as string, at: Date.now() });
      else state.failed++;
      await sleep(20);
    }
  })();
  return state;
}

describe('archive RPO drill on Swift s3api: a store outage under a steady write load', function () {
  this.timeout(300_000);
  const swift = useSwift();
  let forwarder: Forwarder;
  let writer: ChildServer;
  let repo: number;
  let env: Record<string, string>;
  const R = () => `/v1/native/repository-authorities/${repo}`;

  before(async () => {
    const admin = new S3Client({ region: swift().region, endpoint: swift().endpoint, forcePathStyle: true, credentials: { accessKeyId: swift().accessKeyId, secretAccessKey: swift().secretAccessKey } });
    await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
    admin.destroy();
    // Short bounds, so the hung store fails requests within seconds (defaults: 5 s, 20 s, 3 tries).
    const config = path.join(tempDir(), 'archive-config.json');
    await fsp.writeFile(config, JSON.stringify({ connect_timeout_ms: 1000, timeout_ms: 1500, max_attempts: 2 }));
    forwarder = new Forwarder(await unusedPort(), Number(new URL(swift().endpoint).port));
    await forwarder.open();
    env = swiftEnv(swift(), `http://127.0.0.1:${forwarder.port}`);
    writer = await spawnServer(path.join(tempDir(), 'writer'), ['--no-ui', '--archive', URL_, '--archive-config', config], true, env);
    repo = await register(writer.url, 'drill');
    await until('the writer ships the repository', async () => (await row()) ?? null, 60_000);
  });
  after(async () => {
    if (writer && writer.proc.exitCode === null) { writer.proc.kill('SIGTERM'); await writer.exited; }
    await forwarder?.cut();
  });

  /** The writer's /healthz row of the repository. */
  const row = async (): Promise<any> => ((await api(writer.url, 'GET', '/healthz')).json.archive?.repositories ?? []).find((r: any) => r.repository === repo);

  /** The newest commit generation a stored manifest of the repository names (listed from Swift itself). */
  const newestStored = async (): Promise<bigint> => {
    const { S3ObjectStore, s3Settings } = await import('../lib/archive/s3-store.js');
    const store = new S3ObjectStore({ bucket: BUCKET, prefix: 'drill/' }, s3Settings(swiftEnv(swift())));
    try {
      let newest = 0n;
      let after: string | undefined;
      for (;;) {
        const page = await store.list(`repositories/${repo}/manifests/`, after ? { after } : {});
        for (const o of page.objects) { const k = parseManifestKey(o.key); if (k && k.commitGeneration > newest) newest = k.commitGeneration; }
        if (!page.next) return newest;
        after = page.next;
      }
    } finally {
      store.close();
    }
  };

  /** Load, an outage made by `down`/`up`, then: a stored manifest covers every commit acknowledged until the store returned. */
  const drill = async (down: () => Promise<void>, up: () => Promise<void>): Promise<{ id: string; at: number }[]> => {
    const load = steadyLoad(writer.url, repo);
    try {
      await until('commits acknowledged before the outage', () => load.acked.length >= 5, 60_000);
      await down();
      const from = Date.now();
      const inOutage = load.acked.length;
      await sleep(OUTAGE_MS);
      // Commits go on being acknowledged while the store is gone: async shipping is not in their path.
      await until('commits acknowledged during the outage', () => load.acked.length >= inOutage + 5, 60_000);
      const during = load.acked.filter((a) => a.at >= from);
      const uncovered = await row();
      expect(uncovered.uncovered_commits, 'commits the outage left uncovered').to.be.greaterThan(0);
      expect(uncovered.lag_seconds, 'the lag counts the outage').to.be.greaterThan(0);
      // Every commit acknowledged until now is at or below this commit generation.
      const committed = BigInt((await row()).committed);
      await up();
      const covered = await until('a stored manifest covering every commit acknowledged during the outage', async () => {
        const n = await newestStored();
        return n >= committed ? n : null;
      }, 120_000);
      expect(covered >= committed).to.equal(true);
      expect(during.length, 'writes acknowledged during the outage').to.be.greaterThan(0);
      return during;
    } finally {
      await load.stop();
    }
  };

  const acknowledged: { id: string; at: number }[] = [];

  it('the store refuses connections for a while (down), then answers: every commit acknowledged meanwhile gets covered', async () => {
    acknowledged.push(...(await drill(() => forwarder.cut(), () => forwarder.open())));
  });

  it('the store hangs for a while (every Swift process stopped), then answers: every commit acknowledged meanwhile gets covered', async () => {
    acknowledged.push(...(await drill(() => swift().pause(), () => swift().resume())));
  });

  it('a restore of the archive holds every write acknowledged during both outages', async () => {
    expect(acknowledged.length).to.be.greaterThan(0);
    await until('the writer caught up', async () => {
      const r = await row();
      return r && r.uncovered_commits === 0 && r.shipped_commit === r.committed;
    }, 120_000);
    const dir = path.join(tempDir(), 'restored');
    const r = await cli(['restore', '--from', URL_, '--data', dir, '--json'], swiftEnv(swift()));
    expect(r.code, r.stderr).to.equal(0);
    const reader = await spawnServer(dir, ['--no-ui']);
    try {
      const missing: string[] = [];
      for (const { id } of acknowledged) {
        const got = await api(reader.url, 'GET', `${R()}/tasks/${id}`, { contract: false });
        if (got.status !== 200) missing.push(id);
      }
      expect(missing, 'acknowledged writes missing from the restore').to.deep.equal([]);
    } finally {
      reader.proc.kill('SIGTERM');
      await reader.exited;
    }
  });
});
