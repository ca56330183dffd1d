// Shared test helpers: temp data directories, in-process and child-process servers on
// 127.0.0.1, and a small fetch wrapper that returns status, headers and parsed JSON.
// First: the suite's own HOME, XDG directories and a clean CAIRN_*/GIT_* environment, also
// when one file runs without .mocharc.cjs (mocha --no-config).
import './hermetic-env.js';
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { startServer, type RunningServer, type ServerOptions } from '../lib/cli/serve.js';
import { pull, type PullOptions } from '../lib/client/transfer.js';
import { checkAnswer } from './contract.js';
export { freePort } from './free-port.js';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = path.join(PROJECT_ROOT, 'bin/cairn.js');
export const FIXTURES = path.join(PROJECT_ROOT, 'fixtures');

const made: string[] = [];
export function tempDir(prefix = 'cairn-test-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}
after(async () => {
  for (const dir of made.splice(0)) await fsp.rm(dir, { recursive: true, force: true });
});

export interface TestServer extends RunningServer {
  dataDir: string;
}

/** An in-process server on an ephemeral loopback port, ready when this resolves. */
/** `webhookAllow`: internal webhook targets opened (e.g. ['127.0.0.1'] for receivers on loopback; the server's own port stays refused). */
export async function startTestServer(dataDir = path.join(tempDir(), 'data'), extra: Pick<ServerOptions, 'activationDelayMs' | 'webhooks' | 'events' | 'queue' | 'webhookAllow' | 'requestLog' | 'allowedHosts' | 'allowedOrigins' | 'publicUrl' | 'shutdownSeconds' | 'maxSnapshotPaths' | 'gitShadows' | 'git' | 'gitRefresh' | 'identity' | 'gitMirrors' | 'archive' | 'follow' | 'auth'> = {}): Promise<TestServer> {
  const running = await startServer({ host: '127.0.0.1', port: 0, dataDir, log: pino({ level: 'silent' }), ...extra });
  if (!extra.activationDelayMs) await running.ready;
  return { ...running, dataDir };
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  json: T;
  text: string;
}

export interface RequestOptions {
  json?: unknown;
  body?: string | Buffer | Uint8Array;
  headers?: Record<string, string>;
  /**
   * false: this request is deliberately outside the documented interface (a nonsense path or
   * action), so its answer is not checked against the OpenAPI document (./contract.ts).
   */
  contract?: false;
}

export async function api<T = any>(base: string, method: string, urlPath: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  let body: BodyInit | undefined;
  if (options.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.body !== undefined) {
    body = options.body as BodyInit;
  }
  const res = await fetch(base + urlPath, { method, headers, body });
  const text = await res.text();
  // Every answer is checked against the OpenAPI document: the suite is the contract test.
  if (options.contract !== false) checkAnswer({ method, urlPath, status: res.status, headers: res.headers, text });
  let json: any = undefined;
  try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
  return { status: res.status, headers: res.headers, json, text };
}

/** GET of raw bytes (a pack, an authority file), checked against the OpenAPI document as `api()` answers are. */
export async function download(base: string, urlPath: string): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(base + urlPath);
  const bytes = Buffer.from(await res.arrayBuffer());
  const isJson = (res.headers.get('content-type') ?? '').startsWith('application/json');
  checkAnswer({ method: 'GET', urlPath, status: res.status, headers: res.headers, text: isJson ? bytes.toString('utf8') : '' });
  return { status: res.status, headers: res.headers, bytes };
}

export async function register(base: string, name = 'repo', namespace = '', policyFlags = 0): Promise<number> {
  const res = await api(base, 'POST', '/v1/native/repository-authorities', { json: { repository_name: name, namespace, policy_flags: policyFlags } });
  if (res.status !== 201 && res.status !== 200) throw new Error(`registration failed: ${res.status} ${res.text}`);
  return res.json.repository.repository_index;
}

export interface ChildServer {
  url: string;
  proc: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/**
 * `node bin/cairn.js serve` as a child process; resolves once /healthz answers 200 (unless
 * waitReady is false). It binds `bindHost` (default 127.0.0.1); `url` always names 127.0.0.1.
 */
export async function spawnServer(dataDir: string, args: string[] = [], waitReady = true, env: Record<string, string> = {}, bindHost = '127.0.0.1'): Promise<ChildServer> {
  // Ports are picked at random; another test process may hold one, so retry on EADDRINUSE.
  for (let attempt = 0; ; attempt++) {
    try {
      return await spawnServerOnce(dataDir, args, waitReady, env, bindHost);
    } catch (err) {
      if (attempt >= 5 || !String((err as Error).message).includes('EADDRINUSE')) throw err;
    }
  }
}

/**
 * How spawnServer picks a port: at random below Linux's ephemeral range (32768-60999), where
 * in-process servers (port 0) and outgoing connections take theirs. Replaceable by a test.
 */
export const ports = { pick: (): number => 20000 + Math.floor(Math.random() * 12000) };

async function spawnServerOnce(dataDir: string, args: string[], waitReady: boolean, env: Record<string, string>, bindHost: string): Promise<ChildServer> {
  const port = ports.pick();
  const proc = spawn(process.execPath, [CLI, 'serve', '--bind', `${bindHost.includes(':') ? `[${bindHost}]` : bindHost}:${port}`, '--data', dataDir, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  proc.stdout!.on('data', (d) => { out += d; });
  proc.stderr!.on('data', (d) => { out += d; });
  // 'close', not 'exit': output written just before exiting (the log batch is flushed on exit)
  // may still be in the pipe when 'exit' fires.
  const exited = new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)));
  // A wildcard listener is reached on loopback; another address (127.0.0.2: a second node) on itself.
  const reach = bindHost === '0.0.0.0' || bindHost === '::' ? '127.0.0.1' : bindHost;
  const url = `http://${reach.includes(':') ? `[${reach}]` : reach}:${port}`;
  const server = { url, proc, output: () => out, exited };
  if (!waitReady) return server;
  for (let i = 0; i < 200; i++) {
    if (proc.exitCode !== null) throw new Error(`server exited early: ${out}`);
    try {
      const res = await fetch(`${url}/healthz`);
      // Another process's server may hold the port (its /healthz answers while this child fails
      // with EADDRINUSE, and the test would talk to it): ready is our child's listener answering.
      if (res.status === 200 && (await listensOn(proc.pid!, port)) !== false) return server;
    } catch { /* not listening yet */ }
    await sleep(50);
  }
  proc.kill('SIGKILL');
  throw new Error(`server never became ready: ${out}`);
}

/**
 * Whether process `pid` holds the listening TCP socket of `port`: its inode in /proc/net/tcp{,6}
 * is one of the process's descriptors. null where /proc does not tell (not Linux).
 */
async function listensOn(pid: number, port: number): Promise<boolean | null> {
  const inodes = new Set<string>();
  let known = false;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await fsp.readFile(table, 'utf8').catch(() => null);
    if (text === null) continue;
    known = true;
    for (const row of text.split('\n').slice(1)) {
      // sl local_address rem_address st ... inode: the local port in hex, state 0A is LISTEN
      const f = row.trim().split(/\s+/);
      if (f.length > 9 && f[3] === '0A' && parseInt(f[1].split(':')[1], 16) === port) inodes.add(f[9]);
    }
  }
  if (!known) return null;
  if (!inodes.size) return false;
  const fds = await fsp.readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  for (const fd of fds) {
    const m = /^socket:\[(\d+)\]$/.exec(await fsp.readlink(`/proc/${pid}/fd/${fd}`).catch(() => ''));
    if (m && inodes.has(m[1])) return true;
  }
  return false;
}

/**
 * Wait until `probe` gives a truthy value (checked every 25 ms) and return it; fail after `ms`
 * naming `what`. For anything that happens after the action a test takes (a log line a child
 * writes in its next batch, a place freed when a socket closes): never a fixed sleep, never a
 * single look.
 */
export async function until<T>(what: string, probe: () => T | null | undefined | false | Promise<T | null | undefined | false>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(25);
  }
}

/**
 * Wait until a child server's output matches `pattern` (bounded). The server writes its JSON log
 * lines in batches (lib/cli/log-batch.ts, up to 200 ms late), so a line logged while a request
 * was answered may reach the pipe after the answer.
 */
export async function untilOutput(server: Pick<ChildServer, 'output'>, pattern: RegExp, ms = 15_000): Promise<string> {
  return until(`server output matching ${pattern}`, () => (pattern.test(server.output()) ? server.output() : null), ms);
}

export async function fileBytes(p: string): Promise<Buffer | null> {
  try { return await fsp.readFile(p); } catch { return null; }
}

/** Run `node bin/cairn.js ARGS` to completion, collecting its output. */
export function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    p.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Run the CLI, expect exit 0 and exactly one line of output, and return it parsed as JSON. */
/**
 * Run the CLI on a pseudo-terminal (script(1)), stdout and stderr together; this process serves
 * its requests, so the child is spawned asynchronously. Tests using it skip without script(1).
 */
export function onTty(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn('script', ['-qefc', [process.execPath, CLI, ...args].map((a) => `'${a}'`).join(' '), '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    child.stdout!.on('data', (d) => { stdout += d; });
    child.stderr!.on('data', (d) => { stdout += d; });
    child.on('exit', (status) => resolve({ status, stdout }));
  });
}

export async function cliJson(args: string[]): Promise<any> {
  const r = await cli(args);
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(0);
  const lines = r.stdout.trim().split('\n');
  expect(lines, r.stdout).to.have.length(1);
  return JSON.parse(lines[0]);
}

// ---------------------------------------------------------------- workflow test helpers

/** A refusal: exactly this status and a body that is exactly `{"error": "<non-empty text>"}`. */
export function expectError(res: ApiResponse, status: number, what = ''): void {
  expect(res.status, `${what}: ${res.text}`).to.equal(status);
  expect(Object.keys(res.json ?? {}), `${what}: body ${res.text}`).to.deep.equal(['error']);
  expect(res.json.error, what).to.be.a('string').and.not.equal('');
}

/** A 200 answer's JSON (fails the test on any other status). */
export async function ok(res: Promise<ApiResponse> | ApiResponse, what = ''): Promise<Record<string, any>> {
  const r = await res;
  expect(r.status, `${what}: ${r.text}`).to.equal(200);
  return r.json;
}

/** sha256 of every file below `dir`, by relative path: a store compared before and after a refusal. */
export async function repoFiles(dir: string, rel = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await fsp.readdir(path.join(dir, rel), { withFileTypes: true })) {
    const r = path.join(rel, e.name);
    // workflow.ckpt is a cache of workflow.log (storage-layout.md §17.1), rewritten at a clean
    // close and in the background: not part of what a request changes or a restart keeps.
    if (r === 'workflow.ckpt') continue;
    if (e.isDirectory()) Object.assign(out, await repoFiles(dir, r));
    else out[r] = createHash('sha256').update(await fsp.readFile(path.join(dir, r))).digest('hex');
  }
  return out;
}

/** Retire `repo` and download its export files. */
export async function exportRepo(url: string, repo: number): Promise<{ manifest: Record<string, any>; files: Map<string, Buffer> }> {
  expect((await api(url, 'POST', `/v1/native/repository-authorities/${repo}/retirement`)).status).to.equal(200);
  const manifest = (await ok(api(url, 'GET', `/v1/native/repository-authorities/${repo}/retirement`))).manifest;
  const files = new Map<string, Buffer>();
  for (const f of manifest.files) {
    const res = await fetch(`${url}${`/v1/native/repository-authorities/${repo}/retirement/files/${encodeURIComponent(f.path)}`}`);
    expect(res.status, f.path).to.equal(200);
    files.set(f.path, Buffer.from(await res.arrayBuffer()));
  }
  return { manifest, files };
}

/** Restore an export (exportRepo) on the server at `url`; returns the new repository index. */
export async function restoreRepo(url: string, manifest: Record<string, any>, files: Map<string, Buffer>): Promise<number> {
  const start = await api(url, 'POST', '/v1/native/repository-restores', { json: { manifest, policy_flags: 0 } });
  expect(start.status, start.text).to.equal(201);
  for (const [p, bytes] of files) {
    const up = await api(url, 'PUT', `/v1/native/repository-restores/${start.json.restore_token}/files/${encodeURIComponent(p)}`, { body: bytes, headers: { 'content-type': 'application/vnd.svc.remote-authority-file.v1' } });
    expect(up.status, up.text).to.equal(200);
  }
  return (await ok(api(url, 'POST', `/v1/native/repository-restores/${start.json.restore_token}/commit`))).repository_index;
}

/**
 * A pull that must settle within `ms`: past it the pull is stopped and this rejects with
 * "pull hung", so a lost wake-up fails a test instead of hanging it.
 */
export async function pullWithin(ms: number, o: PullOptions): Promise<Awaited<ReturnType<typeof pull>>> {
  const stop = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new Error(`pull hung: not settled within ${ms} ms`);
      stop.abort(err);
      reject(err);
    }, ms);
  });
  try {
    const signal = o.signal ? AbortSignal.any([o.signal, stop.signal]) : stop.signal;
    return await Promise.race([pull({ ...o, signal }), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
