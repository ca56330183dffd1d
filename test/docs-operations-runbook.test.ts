// docs/operations.md's runbook, run as written: every block of it marked runnable (```sh
// runnable, ```console runnable: the archive drill, and any runbook section marked so later),
// in order, in one bash on a terminal (test/docs-steps.ts), in a scratch directory with `cairn`
// on PATH, against a fresh OpenStack Swift s3api (test/swift.ts; the bucket the document names
// is created first, its connection in the AWS_* environment as the document says); a block that
// names an etcd (--lease etcd://127.0.0.1:PORT/…) gets one (test/etcd.ts) at that address. Every
// other loopback listener the blocks name (127.0.0.1:PORT) is moved to a free port of its own.
// Where a block shows output it must match (test/docs-steps.ts matches()); a command without
// shown output must exit 0. Servers the blocks start in the background are stopped afterwards
// by their pid files if the blocks left them running. DOCS_RECORD=1 prints what each command
// printed, to write a block's output from.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync, promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { PROJECT_ROOT, freePort } from './helpers.js';
import { useSwift } from './swift.js';
import { etcdMissing, startEtcd, type EtcdServer } from './etcd.js';
import { matches, normalize, runnableSteps, runSteps, scratchShell } from './docs-steps.js';

const FILE = 'docs/operations.md';


/** Every cairn.lock.pid below `dir` (the servers the blocks started and did not stop). */
async function pidFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await fsp.readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && existsSync(path.join(dir, entry.name, 'cairn.lock.pid'))) out.push(path.join(dir, entry.name, 'cairn.lock.pid'));
  }
  return out;
}

describe(`${FILE}: the runbook, run as written`, function () {
  this.timeout(300_000);
  const swift = useSwift();

  before(function () {
    if (spawnSync('script', ['--version']).status !== 0 || spawnSync('curl', ['--version']).status !== 0) {
      if (process.env.CI) throw new Error('script(1) and curl are needed by the runbook test');
      this.skip();
    }
  });

  let etcd: EtcdServer | undefined;
  after(async () => { await etcd?.stop(); });

  it('every runnable block runs in order and prints what it shows', async function () {
    const steps = runnableSteps(readFileSync(path.join(PROJECT_ROOT, FILE), 'utf8'), FILE);
    expect(steps.length, `${FILE} has no runnable blocks`).to.be.above(0);
    // The buckets the blocks name exist, as the document assumes.
    const buckets = new Set([...steps.map((s) => s.command).join('\n').matchAll(/s3:\/\/([a-z0-9.-]+)\//g)].map((m) => m[1]!));
    const admin = new S3Client({ region: swift().region, endpoint: swift().endpoint, forcePathStyle: true, credentials: { accessKeyId: swift().accessKeyId, secretAccessKey: swift().secretAccessKey } });
    for (const bucket of buckets) await admin.send(new CreateBucketCommand({ Bucket: bucket }));
    admin.destroy();
    // Each documented loopback listener on a free port of its own; an etcd the blocks name
    // (--lease etcd://127.0.0.1:PORT/...) is started, and its address stands for it.
    const documented = [...new Set(steps.flatMap((s) => [...s.command.matchAll(/127\.0\.0\.1:(\d+)/g)].map((m) => m[0])))];
    const etcdAt = new Set(steps.flatMap((s) => [...s.command.matchAll(/etcd:\/\/(127\.0\.0\.1:\d+)/g)].map((m) => m[1]!)));
    if (etcdAt.size > 0) {
      const missing = etcdMissing();
      if (missing && !process.env.CI) { console.log(`      note: skipped: ${missing}`); this.skip(); }
      if (missing) throw new Error(`${missing}; CI is set, so the runbook must run`);
      etcd = await startEtcd();
    }
    const moved = new Map<string, string>();
    for (const address of documented) moved.set(address, etcdAt.has(address) ? etcd!.endpoint : `127.0.0.1:${await freePort()}`);
    const there = (text: string): string => { for (const [a, b] of moved) text = text.split(a).join(b); return text; };
    const back = (text: string): string => { for (const [a, b] of moved) text = text.split(b).join(a); return text; };

    const { dir, env } = await scratchShell('cairn-runbook-', {
      AWS_ACCESS_KEY_ID: swift().accessKeyId,
      AWS_SECRET_ACCESS_KEY: swift().secretAccessKey,
      AWS_REGION: swift().region,
      AWS_ENDPOINT_URL_S3: swift().endpoint,
    });
    try {
      // Bounded below the test's timeout: a step that waits forever (a server that never
      // answers) fails with what the steps printed so far.
      const results = await runSteps(steps.map((s) => ({ ...s, command: there(s.command) })), dir, env, 200_000);
      const problems: string[] = [];
      results.forEach((r, i) => {
        const output = r.output.map(back);
        if (process.env.DOCS_RECORD) process.stdout.write(`--- ${steps[i]!.where} (exit ${r.code})\n$ ${steps[i]!.command}\n${output.join('\n')}\n`);
        if (!steps[i]!.expected.length) {
          if (r.code !== 0) problems.push(`${steps[i]!.where}: \`${steps[i]!.command}\` exited ${r.code}:\n${output.join('\n')}`);
          return;
        }
        const m = matches(steps[i]!.expected, output);
        if (!m.ok) problems.push(`${steps[i]!.where}: \`${steps[i]!.command}\` did not print\n  ${m.missing}\nit printed (normalized):\n${output.map(normalize).filter((l) => l).map((l) => `  ${l}`).join('\n')}`);
      });
      expect(problems, problems.join('\n\n')).to.deep.equal([]);
    } finally {
      // A block that failed may have left a server running: stop it by its pid file.
      for (const file of await pidFiles(dir)) {
        const pid = Number(readFileSync(file, 'utf8').trim());
        try { process.kill(pid, 'SIGTERM'); } catch { continue; }
        for (let i = 0; i < 100 && existsSync(file); i++) await sleep(100);
      }
    }
  });
});
