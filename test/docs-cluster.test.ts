// docs/operations.md "A cluster drill", run as written: its three blocks with bash, `cairn` on
// PATH. Only the values a reader sets are changed: the nodes' addresses become 127.0.0.1, .2 and
// .3 on a free port, etcd's URL the test's etcd, the archive bucket the test's Swift bucket,
// /srv/cairn a scratch directory per node and the membership's TTL 3 s. The serve block runs once
// per node (its first line names the node), in the background; the drill's steps then in order,
// n2 killed with SIGKILL between them, the failover retried until n2's membership expired (as the
// text says), and n2 started again from its block.
import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CLI, PROJECT_ROOT, api, freePort, tempDir, until } from './helpers.js';
import { useEtcd } from './etcd.js';
import { useSwift } from './swift.js';

const OPERATIONS = readFileSync(path.join(PROJECT_ROOT, 'docs/operations.md'), 'utf8');
const BUCKET = 'cairn-cluster-drill';

function drillBlocks(markdown: string): string[] {
  const start = markdown.indexOf('\n### A cluster drill\n');
  if (start < 0) throw new Error('docs/operations.md has no "### A cluster drill" section');
  const rest = markdown.slice(start + 1);
  const next = rest.search(/\n#{2,3} /);
  const section = next < 0 ? rest : rest.slice(0, next);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

describe('docs/operations.md "A cluster drill", run as written (etcd, Swift)', function () {
  this.timeout(300_000);
  const etcd = useEtcd();
  const swift = useSwift();
  let root: string;
  let env: NodeJS.ProcessEnv;
  let port: number;
  const running = new Map<string, { proc: ChildProcess; out: () => string }>();

  before(async () => {
    root = tempDir('cairn-cluster-drill-');
    const bin = path.join(root, 'bin');
    mkdirSync(bin);
    writeFileSync(path.join(bin, 'cairn'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    chmodSync(path.join(bin, 'cairn'), 0o755);
    const s = swift();
    env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, AWS_ACCESS_KEY_ID: s.accessKeyId, AWS_SECRET_ACCESS_KEY: s.secretAccessKey, AWS_REGION: s.region, AWS_ENDPOINT_URL_S3: s.endpoint };
    const admin = new S3Client({ region: s.region, endpoint: s.endpoint, forcePathStyle: true, credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey } });
    await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
    admin.destroy();
    port = await freePort();
  });
  after(async () => {
    for (const { proc } of running.values()) {
      if (proc.exitCode !== null || proc.signalCode !== null) continue;
      const gone = new Promise((r) => proc.once('exit', r));
      try { process.kill(-proc.pid!, 'SIGKILL'); } catch { continue; }
      await gone;
    }
  });

  it('serves three nodes from the serve block, moves a repository, fails it over after a kill -9, and the node back sets its copy aside', async () => {
    const blocks = drillBlocks(OPERATIONS);
    expect(blocks, 'the drill\'s blocks: serve, move, failover').to.have.length(3);
    const [serve, move, failover] = blocks;
    const localize = (text: string) => text
      .replaceAll('etcd://10.0.0.5:2379/cairn/nodes', etcd().leaseUrl('drill/nodes'))
      .replaceAll('10.0.0.', '127.0.0.')
      .replaceAll(':8088', `:${port}`)
      .replaceAll('s3://backups/', `s3://${BUCKET}/`)
      .replaceAll('/srv/cairn', `${root}/$NODE`)
      .replaceAll('--cluster-ttl 10', '--cluster-ttl 3');
    const first = serve.split('\n')[0];
    expect(first).to.match(/^NODE=n1 ADDR=10\.0\.0\.1 /);
    const url = (n: number) => `http://127.0.0.${n}:${port}`;
    const startNode = async (n: number) => {
      const text = localize(serve.replace(first, `NODE=n${n} ADDR=10.0.0.${n}`));
      let out = '';
      const proc = spawn('bash', ['-e', '-o', 'pipefail', '-c', text], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      proc.stdout!.on('data', (d) => { out += d; });
      proc.stderr!.on('data', (d) => { out += d; });
      running.set(`n${n}`, { proc, out: () => out });
      await until(`n${n} serving`, async () => {
        if (proc.exitCode !== null) throw new Error(`n${n} exited:\n${out}`);
        try { return (await fetch(`${url(n)}/healthz`)).ok; } catch { return false; }
      }, 60_000);
    };
    for (const n of [1, 2, 3]) await startNode(n);

    const steps = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', localize(move)], { cwd: root, env, encoding: 'utf8' });
    expect(steps.status, `the move steps:\n${steps.stdout}${steps.stderr}`).to.equal(0);
    const owner = async () => (await api(url(1), 'GET', '/v1/native/cluster?repository=0')).json.repository.node;
    expect(await owner()).to.equal('n2');

    const n2 = running.get('n2')!;
    const gone = new Promise((r) => n2.proc.once('exit', r));
    process.kill(-n2.proc.pid!, 'SIGKILL');
    await gone;
    const [failoverLine, listLine] = localize(failover).split('\n');
    await until('the failover, once n2\'s membership expired', () => spawnSync('bash', ['-e', '-c', failoverLine], { cwd: root, env, encoding: 'utf8' }).status === 0, 60_000);
    expect(await owner()).to.equal('n3');
    const listed = spawnSync('bash', ['-e', '-c', listLine], { cwd: root, env, encoding: 'utf8' });
    expect(listed.status, listed.stderr).to.equal(0);
    expect(listed.stdout).to.include('before');
    expect(listed.stdout).to.include('after');

    await startNode(2);
    await until('n2 set its copy aside', () => !readdirSync(path.join(root, 'n2', 'repositories')).includes('0'), 30_000);
    expect(readdirSync(path.join(root, 'n2', 'cluster', 'displaced')).some((d) => d.startsWith('0-'))).to.equal(true);
    expect((await api(url(2), 'GET', '/v1/native/repository-authorities/0/tasks')).json.tasks.map((t: { title: string }) => t.title).sort()).to.deep.equal(['after', 'before']);
  });
});
