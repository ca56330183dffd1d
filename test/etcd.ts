// A real etcd for the writer-lease tests: a one-node etcd (Debian's etcd-server 3.4, which
// .ci/run installs) on two free loopback ports in a temporary directory, started for one test
// file and stopped after it. Where etcd is not installed the tests that need it skip themselves,
// saying so — except under CI (the CI variable set), where a missing etcd fails them.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, promises as fsp, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './free-port.js';

const ETCD = '/usr/bin/etcd';
const ETCDCTL = '/usr/bin/etcdctl';

export interface EtcdServer {
  /** 127.0.0.1:PORT, the client endpoint. */
  endpoint: string;
  /** `etcd://127.0.0.1:PORT/PREFIX` (etcds:// when secured), for serve --lease. */
  leaseUrl(prefix: string): string;
  /** A secured etcd's files (startEtcd(…, true)), else null. */
  secrets: EtcdSecrets | null;
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

/** A secured etcd's files: the CA to trust, a client certificate and key it accepts, and the root user's password. */
export interface EtcdSecrets {
  ca: string;
  clientCert: string;
  clientKey: string;
  user: string;
  passwordFile: string;
}

/** A CA, a server certificate for 127.0.0.1 and a client certificate, made with openssl in `dir`. */
function makeCertificates(dir: string): void {
  const ssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=cairn test CA', '-keyout', 'ca.key', '-out', 'ca.pem']);
  for (const [name, ext] of [['server', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth'], ['client', 'extendedKeyUsage=clientAuth']] as const) {
    writeFileSync(path.join(dir, `${name}.ext`), `${ext}\n`);
    ssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name === 'client' ? 'cairn-test-client' : '127.0.0.1'}`, '-keyout', `${name}.key`, '-out', `${name}.csr`]);
    ssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', `${name}.ext`, '-out', `${name}.pem`]);
  }
}

/**
 * Start etcd on two free loopback ports; resolves once it answers its health check. `secure`:
 * clients reach it over TLS only (etcds://) with a client certificate (etcd asks for one once it
 * has a trusted CA), and etcd's auth is enabled with a root user.
 */
export async function startEtcd(readyMs = 60_000, secure = false): Promise<EtcdServer> {
  const missing = etcdMissing();
  if (missing) throw new Error(missing);
  const root = mkdtempSync(path.join(os.tmpdir(), 'cairn-etcd-'));
  const client = await freePort();
  const peer = await freePort();
  const metrics = await freePort();
  let log = '';
  if (secure) makeCertificates(root);
  const scheme = secure ? 'https' : 'http';
  const child: ChildProcess = spawn(ETCD, [
    '--name', 'n1', '--data-dir', path.join(root, 'data'),
    '--listen-client-urls', `${scheme}://127.0.0.1:${client}`, '--advertise-client-urls', `${scheme}://127.0.0.1:${client}`,
    '--listen-peer-urls', `http://127.0.0.1:${peer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peer}`,
    '--initial-cluster', `n1=http://127.0.0.1:${peer}`, '--log-level', 'warn', '--logger', 'zap',
    // The health check goes to a plain metrics listener when the clients' is TLS.
    ...(secure ? ['--cert-file', path.join(root, 'server.pem'), '--key-file', path.join(root, 'server.key'), '--trusted-ca-file', path.join(root, 'ca.pem'), '--listen-metrics-urls', `http://127.0.0.1:${metrics}`] : []),
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  const healthPort = secure ? metrics : client;
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
  while (!(await healthy(healthPort))) {
    if (exited) { await stop(); throw new Error(`etcd exited before it was ready:\n${log}`); }
    if (Date.now() > deadline) { await stop(); throw new Error(`etcd was not ready within ${readyMs} ms:\n${log}`); }
    await sleep(100);
  }
  let secrets: EtcdSecrets | null = null;
  if (secure) {
    // etcd's auth: a root user with a password, then auth enabled (etcdctl over TLS with the client certificate).
    const password = 'a root password for the test etcd';
    const passwordFile = path.join(root, 'password');
    writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
    const ctl = (args: string[]) => execFileSync(ETCDCTL, ['--endpoints', `https://127.0.0.1:${client}`, '--cacert', path.join(root, 'ca.pem'), '--cert', path.join(root, 'client.pem'), '--key', path.join(root, 'client.key'), ...args], { env: { ...process.env, ETCDCTL_API: '3' }, stdio: ['ignore', 'pipe', 'pipe'] });
    ctl(['user', 'add', `root:${password}`]);
    ctl(['auth', 'enable']);
    secrets = { ca: path.join(root, 'ca.pem'), clientCert: path.join(root, 'client.pem'), clientKey: path.join(root, 'client.key'), user: 'root', passwordFile };
  }
  return {
    endpoint: `127.0.0.1:${client}`,
    secrets,
    leaseUrl: (prefix) => `${secure ? 'etcds' : 'etcd'}://127.0.0.1:${client}/${prefix.replace(/^\/+/, '')}`,
    output: () => log,
    pause: () => {
      child.kill('SIGSTOP');
      paused = true;
    },
    resume: async () => {
      child.kill('SIGCONT');
      paused = false;
      const until = Date.now() + 60_000;
      while (!(await healthy(healthPort))) {
        if (Date.now() > until) throw new Error('etcd does not answer after it was resumed');
        await sleep(100);
      }
    },
    answers: (ms = 2000) => healthy(healthPort, ms),
    stop,
  };
}

/**
 * For a mocha `describe`: start etcd before its tests and stop it after. Without etcd the tests
 * skip with the reason, unless CI is set: there a missing etcd is a failure, not a skip.
 */
export function useEtcd(secure = false): () => EtcdServer {
  let etcd: EtcdServer | undefined;
  before(async function () {
    const missing = etcdMissing();
    if (missing) {
      if (process.env.CI) throw new Error(`${missing}; CI is set, so the writer-lease tests must run`);
      console.log(`      note: skipped: ${missing}`);
      this.skip();
    }
    this.timeout(120_000);
    etcd = await startEtcd(60_000, secure);
  });
  after(async () => { await etcd?.stop(); });
  return () => {
    if (!etcd) throw new Error('etcd is not running');
    return etcd;
  };
}
