// serve --archive-sync against real Swift s3api (test/swift.ts): a kill -9 loop of the writer
// under a steady write load; every write the writer acknowledged is in a restore of the archive
// afterwards (RPO 0). The kill comes at a point of the load chosen by a counter, not by timing.
import { expect } from 'chai';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { api, cli, register, spawnServer, tempDir, until, type ChildServer } from './helpers.js';
import { useSwift, type SwiftServer } from './swift.js';

const BUCKET = 'cairn-sync';
const URL_ = `s3://${BUCKET}/kill9/`;
const KILLS = Number(process.env.CAIRN_SYNC_KILLS ?? 20);

function swiftEnv(swift: SwiftServer): Record<string, string> {
  return { AWS_ACCESS_KEY_ID: swift.accessKeyId, AWS_SECRET_ACCESS_KEY: swift.secretAccessKey, AWS_REGION: swift.region, AWS_ENDPOINT_URL_S3: swift.endpoint };
}

describe('archive --archive-sync on Swift s3api: kill -9 loop', function () {
  this.timeout(900_000);
  const swift = useSwift();
  const children: ChildServer[] = [];
  before(async () => {
    const admin = new S3Client({ region: swift().region, endpoint: swift().endpoint, forcePathStyle: true, credentials: { accessKeyId: swift().accessKeyId, secretAccessKey: swift().secretAccessKey } });
    await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
    admin.destroy();
  });
  after(async () => {
    for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) { c.proc.kill('SIGKILL'); await c.exited; }
  });

  it(`loses no acknowledged write over ${KILLS} kill -9 of the writer`, async () => {
    const data = path.join(tempDir(), 'writer');
    const acknowledged: string[] = [];
    let repo = -1;
    let seq = 0;
    for (let round = 0; round < KILLS; round++) {
      const writer = await spawnServer(data, ['--archive', URL_, '--archive-sync', '--archive-interval-ms', '200'], true, swiftEnv(swift()));
      children.push(writer);
      if (repo < 0) repo = await register(writer.url, 'alpha');
      // Four writers; the kill comes once 3 + round % 7 more writes were acknowledged in this round.
      const target = acknowledged.length + 3 + (round % 7);
      let killed = false;
      const worker = async (): Promise<void> => {
        while (!killed) {
          const n = ++seq;
          try {
            const res = await api(writer.url, 'POST', `/v1/native/repository-authorities/${repo}/sprints`, { contract: false, json: { title: `w${n}`, artifact_path: 'docs/plan.md', artifact_heading: 'Sprint', artifact_body: `# Sprint\n- [ ] item ${n} {#i${n}}\n` } });
            if (res.status === 200) acknowledged.push(res.json.plan.plan_id as string);
          } catch {
            return; // the connection died with the writer: not acknowledged
          }
        }
      };
      const workers = Array.from({ length: 4 }, worker);
      await until('enough acknowledged writes this round', async () => acknowledged.length >= target, 120_000);
      writer.proc.kill('SIGKILL');
      killed = true;
      await writer.exited;
      await Promise.all(workers);
    }
    expect(acknowledged.length).to.be.greaterThan(KILLS * 3);
    // The archive as the last kill left it: every acknowledged write is there.
    const restored = path.join(tempDir(), 'restored');
    const r = await cli(['restore', '--from', URL_, '--all', '--data', restored, '--json'], swiftEnv(swift()));
    expect(r.code, r.stdout + r.stderr).to.equal(0);
    const reader = await spawnServer(restored, []);
    children.push(reader);
    const missing: string[] = [];
    for (const id of acknowledged) {
      const res = await api(reader.url, 'GET', `/v1/native/repository-authorities/${repo}/sprints/${id}`, { contract: false });
      if (res.status !== 200) missing.push(id);
    }
    expect(missing, `acknowledged writes missing from the restore (of ${acknowledged.length})`).to.deep.equal([]);
  });
});
