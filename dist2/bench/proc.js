// Process plumbing for the benchmark: timed child commands, a cairn server child, RSS sampling
// from /proc, directory sizes, streamed uploads. Every child is tracked so it can be killed on
// any exit path.
import { spawn } from 'node:child_process';
import { createReadStream, readFileSync, promises as fsp, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
export const children = new Set();
export function killAllChildren() {
    for (const child of children) {
        if (child.exitCode === null && child.signalCode === null) {
            try {
                child.kill('SIGKILL');
            }
            catch { /* already gone */ }
        }
    }
    children.clear();
}
function track(child) {
    children.add(child);
    child.once('exit', () => children.delete(child));
    return child;
}
const KEEP_OUTPUT = 256 * 1024;
/** Run a command to completion; wall time in ms. Never rejects for a non-zero exit. */
export function runTimed(cmd, args, opts = {}) {
    return new Promise((resolve, reject) => {
        const t0 = performance.now();
        const child = track(spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] }));
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => { if (stdout.length < KEEP_OUTPUT)
            stdout += d; });
        child.stderr.on('data', (d) => { if (stderr.length < KEEP_OUTPUT)
            stderr += d; });
        const timer = opts.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs) : null;
        child.once('error', (err) => { if (timer)
            clearTimeout(timer); reject(err); });
        child.once('close', (code, signal) => {
            if (timer)
                clearTimeout(timer);
            resolve({ command: [cmd, ...args].join(' '), code, signal, ms: performance.now() - t0, stdout, stderr });
        });
    });
}
/** Like runTimed, but a non-zero exit becomes an error that carries the command and its stderr. */
export async function runOk(cmd, args, opts = {}) {
    const r = await runTimed(cmd, args, opts);
    if (r.code !== 0)
        throw new CommandFailed(r);
    return r;
}
export class CommandFailed extends Error {
    result;
    constructor(result) {
        super(`command failed (exit ${result.code ?? result.signal}): ${result.command}\n${result.stderr.trim() || result.stdout.trim()}`);
        this.result = result;
    }
}
export async function freePort() {
    return new Promise((resolve, reject) => {
        const srv = net.createServer();
        srv.once('error', reject);
        srv.listen(0, '127.0.0.1', () => {
            const port = srv.address().port;
            srv.close(() => resolve(port));
        });
    });
}
/** SIGTERM a child and wait for it (SIGKILL after 15 s); its exit code. */
export async function stopChild(proc) {
    if (proc.exitCode !== null || proc.signalCode !== null)
        return proc.exitCode;
    const exited = new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
    proc.kill('SIGTERM');
    const t = setTimeout(() => proc.kill('SIGKILL'), 15_000);
    const code = await exited;
    clearTimeout(t);
    return code;
}
/** `node bin/cairn.js serve` on a free loopback port; resolves once GET /healthz answers 200. */
/** `node ARGS`, or `taskset -c CPUS node ARGS` (taskset execs: the pid is node's). */
function nodeCommand(args, cpus) {
    return cpus ? ['taskset', ['-c', cpus, process.execPath, ...args]] : [process.execPath, args];
}
export async function startCairn(cli, dataDir, o = {}) {
    const port = await freePort();
    // With a log level, the request log goes to /dev/null (its cost is measured, not its reading).
    const stdout = o.logLevel ? 'ignore' : 'pipe';
    const [cmd, args] = nodeCommand([...(o.nodeArgs ?? []), cli, 'serve', '--bind', `127.0.0.1:${port}`, '--data', dataDir, '--log-level', o.logLevel ?? 'silent', ...(o.serveArgs ?? [])], o.cpus);
    const proc = track(spawn(cmd, args, { stdio: ['ignore', stdout, 'pipe'], env: o.env ?? process.env }));
    let out = '';
    proc.stdout?.on('data', (d) => { if (out.length < KEEP_OUTPUT)
        out += d; });
    proc.stderr.on('data', (d) => { if (out.length < KEEP_OUTPUT)
        out += d; });
    const url = `http://127.0.0.1:${port}`;
    const server = { url, pid: proc.pid, proc, output: () => out, stop: () => stopChild(proc) };
    for (let i = 0; i < 600; i++) {
        if (proc.exitCode !== null)
            throw new Error(`cairn serve exited early (code ${proc.exitCode}): ${out.trim()}`);
        try {
            const res = await fetch(`${url}/healthz`);
            await res.arrayBuffer();
            if (res.status === 200)
                return server;
        }
        catch { /* not listening yet */ }
        await sleep(50);
    }
    proc.kill('SIGKILL');
    throw new Error(`cairn serve never became ready: ${out.trim()}`);
}
/** The baseline upload server (dist/bench/baseline-server.js) in a child process. */
export async function startBaseline(script, dir, env = {}, cpus) {
    const [cmd, args] = nodeCommand([script, dir], cpus);
    const proc = track(spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } }));
    let out = '';
    proc.stderr.on('data', (d) => { if (out.length < KEEP_OUTPUT)
        out += d; });
    const port = await new Promise((resolve, reject) => {
        let buf = '';
        proc.stdout.on('data', (d) => {
            buf += d;
            const nl = buf.indexOf('\n');
            if (nl >= 0) {
                try {
                    resolve(JSON.parse(buf.slice(0, nl)).port);
                }
                catch (err) {
                    reject(err);
                }
            }
        });
        proc.once('exit', (code) => reject(new Error(`baseline server exited (code ${code}): ${out.trim()}`)));
    });
    return { url: `http://127.0.0.1:${port}`, pid: proc.pid, proc, output: () => out, stop: () => stopChild(proc) };
}
export async function registerRepository(url, name) {
    const res = await fetch(`${url}/v1/native/repository-authorities`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ repository_name: name, namespace: '', policy_flags: 0 }),
    });
    const text = await res.text();
    if (res.status !== 201 && res.status !== 200)
        throw new Error(`registration failed: HTTP ${res.status} ${text}`);
    return JSON.parse(text).repository.repository_index;
}
export function procMemory(pid) {
    try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
        return { rssKiB: field('VmRSS'), hwmKiB: field('VmHWM') };
    }
    catch {
        return null;
    }
}
/**
 * CPU seconds (user + system) of a process (`/proc/PID/stat` utime + stime), or, with
 * `children`, of this process's waited-for children (cutime + cstime: every command the bench
 * ran and reaped, with the subprocesses each of them reaped, such as git's receive-pack). The
 * difference across a step is that step's CPU, steadier than wall time on a shared machine.
 */
export function cpuSeconds(pid, children = false) {
    try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
        const at = (n) => Number(fields[n - 3]);
        const ticks = children ? at(16) + at(17) : at(14) + at(15);
        return ticks / CLOCK_TICKS;
    }
    catch {
        return NaN;
    }
}
/** USER_HZ: the unit of /proc/PID/stat times (100 on Linux for every common architecture). */
const CLOCK_TICKS = 100;
/** Sample VmRSS of `pid` every `intervalMs`; stop() returns the peak seen (KiB) and the sample count. */
export function sampleRss(pid, intervalMs = 50) {
    let peak = 0;
    let samples = 0;
    const take = () => {
        const m = procMemory(pid);
        if (m && Number.isFinite(m.rssKiB)) {
            samples++;
            if (m.rssKiB > peak)
                peak = m.rssKiB;
        }
    };
    take();
    const timer = setInterval(take, intervalMs);
    return {
        stop() {
            clearInterval(timer);
            take();
            return { peakKiB: peak, samples };
        },
    };
}
/** Sum of the sizes of every file (and symlink) under `dir`, like `du -sb` minus directory entries. */
export async function dirBytes(dir) {
    let total = 0;
    for (const entry of await fsp.readdir(dir, { withFileTypes: true })) {
        const p = path.join(dir, entry.name);
        if (entry.isDirectory())
            total += await dirBytes(p);
        else
            total += (await fsp.lstat(p)).size;
    }
    return total;
}
/** PUT a file as a streamed raw body (node:http, Content-Length set). */
export function uploadFile(url, file, contentType) {
    const size = statSync(file).size;
    return new Promise((resolve, reject) => {
        const t0 = performance.now();
        let done = false;
        const finish = (fn) => { if (!done) {
            done = true;
            fn();
        } };
        const req = http.request(url, { method: 'PUT', agent: false, headers: { 'content-type': contentType, 'content-length': String(size), accept: 'application/json' } }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (d) => { body += d; });
            res.on('end', () => finish(() => resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - t0, bytes: size })));
            res.on('error', (err) => finish(() => reject(err)));
        });
        req.on('error', (err) => finish(() => reject(err)));
        const source = createReadStream(file, { highWaterMark: 1 << 20 });
        source.on('error', (err) => { req.destroy(err); finish(() => reject(err)); });
        source.pipe(req);
    });
}
/** The p-th percentile (0–100) of ascending `sorted` (nearest rank); NaN when empty. */
export function percentile(sorted, p) {
    if (!sorted.length)
        return NaN;
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
//# sourceMappingURL=proc.js.map