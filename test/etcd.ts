// A real etcd for the writer-lease tests: a one-node etcd (Debian's etcd-server 3.4, which
// .ci/run installs) on two free loopback ports in a temporary directory, started for one test
// file and stopped after it. Where etcd is not installed the tests that need it skip themselves,
// saying so — except under CI (the CI variable set), where a missing etcd fails them.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './free-port.js';

const ETCD = '/usr/bin/etcd';

export interface EtcdServer {
  /** 127.0.0.1:PORT, the client endpoint. */
  endpoint: string;
  /** `etcd://127.0.0.1:PORT/PREFIX`, for serve --lease. */
  leaseUrl(prefix: string): string;
  /** The etcd process's output so far (for a failing test's message). */
  output(): string;
  /** Stop the etcd process (SIGSTOP): connections hang and nothing answers, a cut-off etcd. */
  pause(): void;
  /** Let it run again (SIGCONT) and resolve once it answers. */
  resume(): Promise<void>;
  /** Whether etcd answers its health endpoint within `ms`. */
  answers(ms?: number): Promise<boolean>;
  stop(): Promise<void>;
}

/** Why etcd cannot run here, or null when it can. */
export function etcdMissing(): string | null {
  return existsSync(ETCD) ? null : `etcd is not installed (no ${ETCD}; .ci/run installs Debian's etcd-server)`;
}


async function healthy(port: number, ms = 2000): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(ms) });
    const body = await res.text();
    return res.ok && /"health"\s*:\s*"true"/.test(body);
  } catch {
    return false;
  }
}

/** Start etcd on two free loopback ports; resolves once it answers its health check. */
export async function startEtcd(readyMs = 60_000): Promise<EtcdServer> {
  const missing = etcdMissing();
  if (missing) throw new Error(missing);
  const root = mkdtempSync(path.join(os.tmpdir(), 'cairn-etcd-'));
  const client = await freePort();
  const peer = await freePort();
  let log = '';
  const child: ChildProcess = spawn(ETCD, [
    '--name', 'n1', '--data-dir', path.join(root, 'data'),
    '--listen-client-urls', `http://127.0.0.1:${client}`, '--advertise-client-urls', `http://127.0.0.1:${client}`,
    '--listen-peer-urls', `http://127.0.0.1:${peer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peer}`,
    '--initial-cluster', `n1=http://127.0.0.1:${peer}`, '--log-level', 'warn', '--logger', 'zap',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => { log += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { log += d.toString(); });
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => { exited = true; resolve(); }));
  let paused = false;
  const stop = async (): Promise<void> => {
    if (!exited) {
      if (paused) { try { child.kill('SIGCONT'); } catch { /* gone */ } }
      child.kill('SIGTERM');
      const ended = await Promise.race([exit.then(() => true), sleep(10_000).then(() => false)]);
      if (!ended) { child.kill('SIGKILL'); await exit; }
    }
    await fsp.rm(root, { recursive: true, force: true });
  };
  const deadline = Date.now() + readyMs;
  while (!(await healthy(client))) {
    if (exited) { await stop(); throw new Error(`etcd exited before it was ready:\n${log}`); }
    if (Date.now() > deadline) { await stop(); throw new Error(`etcd was not ready within ${readyMs} ms:\n${log}`); }
    await sleep(100);
  }
  return {
    endpoint: `127.0.0.1:${client}`,
    leaseUrl: (prefix) => `etcd://127.0.0.1:${client}/${prefix.replace(/^\/+/, '')}`,
    output: () => log,
    pause: () => {
      child.kill('SIGSTOP');
      paused = true;
    },
    resume: async () => {
      child.kill('SIGCONT');
      paused = false;
      const until = Date.now() + 60_000;
      while (!(await healthy(client))) {
        if (Date.now() > until) throw new Error('etcd does not answer after it was resumed');
        await sleep(100);
      }
    },
    answers: (ms = 2000) => healthy(client, ms),
    stop,
  };
}

/**
 * For a mocha `describe`: start etcd before its tests and stop it after. Without etcd the tests
 * skip with the reason, unless CI is set: there a missing etcd is a failure, not a skip.
 */
export function useEtcd(): () => EtcdServer {
  let etcd: EtcdServer | undefined;
  before(async function () {
    const missing = etcdMissing();
    if (missing) {
      if (process.env.CI) throw new Error(`${missing}; CI is set, so the writer-lease tests must run`);
      console.log(`      note: skipped: ${missing}`);
      this.skip();
    }
    this.timeout(120_000);
    etcd = await startEtcd();
  });
  after(async () => { await etcd?.stop(); });
  return () => {
    if (!etcd) throw new Error('etcd is not running');
    return etcd;
  };
}
