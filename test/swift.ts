// A real S3-compatible object store for the tests: a one-node OpenStack Swift with its s3api
// middleware on loopback (.ci/swift/start.sh; Debian's packages, which .ci/run installs),
// started for one test file on free ports and stopped after it. Where Swift is not installed
// the tests that need it skip themselves, saying so — or fail, when CI is set.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, promises as fsp, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './free-port.js';

// No import of ./helpers.js: the bench starts Swift too, outside mocha.
const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const LAUNCHER = path.join(PROJECT_ROOT, '.ci/swift/start.sh');
const NEEDED = ['/usr/bin/python3', '/usr/bin/swift-proxy-server', '/usr/bin/swift-object-server', '/usr/bin/swift-container-server', '/usr/bin/swift-account-server', '/usr/bin/swift-ring-builder'];

export interface SwiftServer {
  /** http://127.0.0.1:PORT — the S3 endpoint (path-style). */
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The server's logs so far (for a failing test's message). */
  output(): string;
  /**
   * Stop every Swift process (SIGSTOP, each by its pid: Swift's servers call setsid(), so a
   * signal to the launcher's process group misses them): connections are accepted by the
   * kernel and then hang, nothing answers — a hung store. Resolves once the proxy has been
   * seen not to answer.
   */
  pause(): Promise<void>;
  /** Let them run again (SIGCONT), and resolve once the proxy answers again. */
  resume(): Promise<void>;
  /** Whether the proxy answers its health check within `ms`. */
  answers(ms?: number): Promise<boolean>;
  stop(): Promise<void>;
}

/** Why Swift cannot run here, or null when it can. */
export function swiftMissing(): string | null {
  const missing = NEEDED.filter((p) => !existsSync(p));
  return missing.length === 0 ? null : `OpenStack Swift is not installed (missing ${missing.join(', ')}; .ci/run installs Debian's swift packages)`;
}


function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

/** Every process below `root` (its descendants, whatever their session or process group), from /proc. */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    let stat: string;
    try { stat = readFileSync(`/proc/${entry}/stat`, 'utf8'); } catch { continue; }
    // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(entry));
    children.set(ppid, list);
  }
  const out: number[] = [];
  const walk = (pid: number): void => { for (const c of children.get(pid) ?? []) { out.push(c); walk(c); } };
  walk(root);
  return out;
}

async function healthy(port: number, ms = 2000): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/healthcheck`, { signal: AbortSignal.timeout(ms) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * Whether Swift serves a write end to end through its S3 API: a bucket and an object PUT (the
 * account, container and object servers). A proxy that answers its health check may still
 * answer 503 to the first writes while its storage servers start.
 */
async function serves(port: number, ms = 10_000): Promise<boolean> {
  const { S3Client, CreateBucketCommand, PutObjectCommand } = await import('@aws-sdk/client-s3');
  const s3 = new S3Client({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: 'test:tester', secretAccessKey: 'testing' } });
  try {
    const signal = AbortSignal.timeout(ms);
    await s3.send(new CreateBucketCommand({ Bucket: 'cairn-warm-up' }), { abortSignal: signal }).catch((err: { name?: string }) => {
      if (err.name !== 'BucketAlreadyOwnedByYou' && err.name !== 'BucketAlreadyExists') throw err;
    });
    await s3.send(new PutObjectCommand({ Bucket: 'cairn-warm-up', Key: 'probe', Body: 'ok' }), { abortSignal: signal });
    return true;
  } catch {
    return false;
  } finally {
    s3.destroy();
  }
}

/**
 * Start Swift on four free loopback ports; resolves when the proxy answers its health check,
 * the three storage servers accept connections and a write goes through (bounded by `readyMs`).
 */
export async function startSwift(readyMs = 240_000): Promise<SwiftServer> {
  const missing = swiftMissing();
  if (missing) throw new Error(missing);
  const root = mkdtempSync(path.join(os.tmpdir(), 'cairn-swift-'));
  const ports = [await freePort(), await freePort(), await freePort(), await freePort()];
  let log = '';
  const child: ChildProcess = spawn('bash', [LAUNCHER, root, ...ports.map(String), String(process.pid)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, so stop() reaches every server it started
  });
  child.stdout!.on('data', (d: Buffer) => { log += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { log += d.toString(); });
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => { exited = true; resolve(); }));
  const stop = async (): Promise<void> => {
    if (exited) return;
    try { process.kill(-child.pid!, 'SIGTERM'); } catch { /* already gone */ }
    const killed = await Promise.race([exit.then(() => true), sleep(10_000).then(() => false)]);
    if (!killed) { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } await exit; }
    await fsp.rm(root, { recursive: true, force: true });
  };
  let paused: number[] = [];
  const deadline = Date.now() + readyMs;
  for (;;) {
    if (exited) throw new Error(`swift exited before it was ready:\n${log}`);
    if (await healthy(ports[0]!)) {
      const backends = await Promise.all(ports.slice(1).map(accepts));
      if (backends.every(Boolean) && await serves(ports[0]!)) break;
    }
    if (Date.now() > deadline) { await stop(); throw new Error(`swift was not ready within ${readyMs} ms:\n${log}`); }
    await sleep(100);
  }
  return {
    endpoint: `http://127.0.0.1:${ports[0]}`,
    region: 'us-east-1',
    accessKeyId: 'test:tester',
    secretAccessKey: 'testing',
    output: () => log,
    pause: async () => {
      // The servers first, then the launcher (which would notice nothing: it only waits).
      const pids = descendants(child.pid!);
      if (pids.length < 4) throw new Error(`expected the four swift servers below the launcher, found pids ${pids.join(', ')}`);
      for (const pid of pids) { try { process.kill(pid, 'SIGSTOP'); } catch { /* gone */ } }
      paused = pids;
      if (await healthy(ports[0]!, 3000)) throw new Error('swift still answers after every process of it was stopped');
    },
    resume: async () => {
      for (const pid of paused) { try { process.kill(pid, 'SIGCONT'); } catch { /* gone */ } }
      paused = [];
      const until = Date.now() + 60_000;
      while (!(await healthy(ports[0]!))) {
        if (Date.now() > until) throw new Error('swift does not answer after it was resumed');
        await sleep(100);
      }
    },
    answers: (ms = 3000) => healthy(ports[0]!, ms),
    stop: async () => {
      for (const pid of paused) { try { process.kill(pid, 'SIGCONT'); } catch { /* gone */ } }
      await stop();
    },
  };
}

/**
 * For a mocha `describe`: start Swift before its tests and stop it after; when Swift is not
 * installed, skip them with the reason. The returned getter is valid inside the tests.
 */
export function useSwift(): () => SwiftServer {
  let swift: SwiftServer | undefined;
  before(async function () {
    const missing = swiftMissing();
    // Under CI (.ci/run installs Swift) a missing Swift is a failure, never a silent skip:
    // the archive drills are what CI is for.
    if (missing && process.env.CI) throw new Error(`${missing}; CI is set, so the archive tests fail rather than skip`);
    if (missing) {
      console.log(`      note: skipped: ${missing}`);
      this.skip();
    }
    this.timeout(300_000);
    swift = await startSwift();
  });
  after(async () => { await swift?.stop(); });
  return () => {
    if (!swift) throw new Error('swift is not running');
    return swift;
  };
}

/**
 * A TCP forwarder on `port` to `target` (the store's port) that can be cut — every connection
 * closed, nothing listening: a store that is down — and opened again: the store is back.
 */
export class Forwarder {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  constructor(readonly port: number, private readonly target: number) {}
  async open(): Promise<void> {
    const server = net.createServer((inbound) => {
      const outbound = net.connect(this.target, '127.0.0.1');
      for (const s of [inbound, outbound]) { this.sockets.add(s); s.on('close', () => this.sockets.delete(s)); }
      inbound.pipe(outbound).pipe(inbound);
      inbound.on('error', () => outbound.destroy());
      outbound.on('error', () => inbound.destroy());
    });
    await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(this.port, '127.0.0.1', resolve); });
    this.server = server;
  }
  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}
