// Stopping `cairn serve` (docs/operations.md "Stopping"): on SIGTERM the listener stops, a request
// in flight is answered with `Connection: close`, idle keep-alive connections are closed, event
// streams end (their clients resume with Last-Event-ID), the commit queues drain, and the
// process exits within --shutdown-seconds, closing whatever is still open then; a second signal
// exits at once. Every test drives a child server (spawnServer) and waits for conditions with a
// bound, never for a fixed time.
import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { api, register, spawnServer, tempDir } from './helpers.js';
const AUTH = '/v1/native/repository-authorities';
/** Wait (bounded) until `cond` holds; false when it never did. */
async function until(cond, ms = 20_000) {
    for (let waited = 0; !cond(); waited += 25) {
        if (waited >= ms)
            return false;
        await sleep(25);
    }
    return true;
}
/** The child's exit code, or 'still running' when it has not exited within `ms` (then it is killed). */
async function exitWithin(server, ms) {
    const code = await Promise.race([server.exited, sleep(ms).then(() => 'still running')]);
    if (code === 'still running') {
        server.proc.kill('SIGKILL');
        await server.exited;
    }
    return code;
}
/**
 * A request over a plain socket whose headers ask `Expect: 100-continue`: `started` resolves once
 * the server has answered 100 Continue (its handler is running: the request is in flight), and
 * the body is sent only when `send` is called. `response` resolves with the final answer once
 * the server closes the connection.
 */
function inFlightRequest(url, method, urlPath, body, declaredLength = Buffer.byteLength(body)) {
    const u = new URL(url);
    const socket = net.connect(Number(u.port), u.hostname);
    let text = '';
    let continued;
    const started = new Promise((resolve) => { continued = resolve; });
    socket.on('data', (d) => {
        text += d;
        if (text.startsWith('HTTP/1.1 100'))
            continued();
    });
    const response = new Promise((resolve) => {
        socket.on('close', () => {
            const final = text.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
            const m = /^HTTP\/1\.1 (\d{3})[^\r]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(final);
            if (!m)
                return resolve(null);
            const headers = {};
            for (const line of m[2].split('\r\n')) {
                const i = line.indexOf(':');
                headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
            }
            resolve({ status: Number(m[1]), headers, body: m[3] });
        });
        socket.on('error', () => undefined);
    });
    socket.write(`${method} ${urlPath} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nContent-Length: ${declaredLength}\r\nExpect: 100-continue\r\n\r\n`);
    return { started, response, send: (bytes) => socket.write(bytes), socket };
}
describe('cairn serve shutdown', function () {
    this.timeout(120_000);
    it('a client hammering writes over keep-alive: the server exits within the bound and every acknowledged write is there after a restart', async () => {
        const data = path.join(tempDir(), 'data');
        const server = await spawnServer(data, ['--shutdown-seconds', '5']);
        const repo = await register(server.url, 'hammered');
        const acknowledged = [];
        let stopWorkers = false;
        const u = new URL(server.url);
        const post = (agent, title) => new Promise((resolve, reject) => {
            const body = JSON.stringify({ title, intent: 'keep me' });
            const req = http.request({ host: u.hostname, port: u.port, method: 'POST', path: `${AUTH}/${repo}/tasks`, agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
                let text = '';
                res.on('data', (d) => { text += d; });
                res.on('end', () => {
                    try {
                        resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) });
                    }
                    catch (err) {
                        reject(err);
                    }
                });
                res.on('error', reject);
            });
            req.on('error', reject);
            req.end(body);
        });
        // Each worker keeps one keep-alive connection busy, one write after another, until the server goes.
        const workers = Array.from({ length: 4 }, async (_, w) => {
            const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
            try {
                for (let i = 0; !stopWorkers; i++) {
                    const title = `w${w}-${i}`;
                    try {
                        const res = await post(agent, title);
                        if (res.status === 200)
                            acknowledged.push({ task_id: res.json.task.task_id, title });
                    }
                    catch {
                        return; // the server went away (refused or reset): this write was not acknowledged
                    }
                }
            }
            finally {
                agent.destroy();
            }
        });
        try {
            expect(await until(() => acknowledged.length >= 40), 'writes acknowledged before the stop').to.equal(true);
            server.proc.kill('SIGTERM');
            // Bound 5 s; the margin covers a slow, shared machine.
            expect(await exitWithin(server, 20_000), server.output()).to.equal(0);
        }
        finally {
            stopWorkers = true;
            await Promise.all(workers);
        }
        expect(server.output()).to.match(/"msg":"stopped"/);
        const restarted = await spawnServer(data);
        try {
            const found = new Map();
            let cursor = null;
            do {
                const page = (await api(restarted.url, 'GET', `${AUTH}/${repo}/tasks?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).json;
                for (const t of page.tasks)
                    found.set(t.task_id, t.title);
                cursor = page.next_cursor;
            } while (cursor);
            for (const ack of acknowledged)
                expect(found.get(ack.task_id), ack.task_id).to.equal(ack.title);
            expect(restarted.output()).to.not.match(/failed its checks/);
        }
        finally {
            restarted.proc.kill('SIGTERM');
            await restarted.exited;
        }
    });
    it('answers a request in flight at SIGTERM with Connection: close, keeps its write, and exits 0', async () => {
        const data = path.join(tempDir(), 'data');
        const server = await spawnServer(data);
        const repo = await register(server.url, 'in-flight');
        const body = JSON.stringify({ title: 'sent across the stop', intent: 'answered, then closed' });
        const req = inFlightRequest(server.url, 'POST', `${AUTH}/${repo}/tasks`, body);
        await req.started;
        server.proc.kill('SIGTERM');
        expect(await until(() => /"msg":"stopping/.test(server.output())), server.output()).to.equal(true);
        req.send(body);
        const res = await req.response;
        expect(res?.status, res?.body).to.equal(200);
        expect(res?.headers.connection).to.equal('close');
        const taskId = JSON.parse(res.body).task.task_id;
        expect(await exitWithin(server, 20_000), server.output()).to.equal(0);
        const restarted = await spawnServer(data);
        try {
            const task = await api(restarted.url, 'GET', `${AUTH}/${repo}/tasks/${taskId}`);
            expect(task.status).to.equal(200);
            expect(task.json.task.title).to.equal('sent across the stop');
        }
        finally {
            restarted.proc.kill('SIGTERM');
            await restarted.exited;
        }
    });
    it('ends an open event stream at SIGTERM; the client resumes with Last-Event-ID after the restart', async () => {
        const data = path.join(tempDir(), 'data');
        const server = await spawnServer(data);
        const repo = await register(server.url, 'streamed');
        await api(server.url, 'POST', `${AUTH}/${repo}/tasks`, { json: { title: 'before', intent: 'seen live' } });
        const u = new URL(server.url);
        let text = '';
        let ended = false;
        const stream = http.get({ host: u.hostname, port: u.port, path: `${AUTH}/${repo}/events?since=0`, headers: { accept: 'text/event-stream' } }, (res) => {
            res.setEncoding('utf8');
            res.on('data', (d) => { text += d; });
            res.on('end', () => { ended = true; });
            res.on('error', () => { ended = true; });
        });
        stream.on('error', () => { ended = true; });
        expect(await until(() => /event: task\.created/.test(text)), text).to.equal(true);
        const lastId = [...text.matchAll(/^id: (\S+)$/gm)].at(-1)[1];
        server.proc.kill('SIGTERM');
        expect(await until(() => ended), 'the stream ended').to.equal(true);
        expect(await exitWithin(server, 20_000), server.output()).to.equal(0);
        const restarted = await spawnServer(data);
        try {
            await api(restarted.url, 'POST', `${AUTH}/${repo}/tasks`, { json: { title: 'after', intent: 'seen on resume' } });
            // As an EventSource reconnects: the stream again, with the last id it saw.
            const r = new URL(restarted.url);
            let again = '';
            const resumed = http.get({ host: r.hostname, port: r.port, path: `${AUTH}/${repo}/events`, headers: { accept: 'text/event-stream', 'last-event-id': lastId } }, (res) => {
                res.setEncoding('utf8');
                res.on('data', (d) => { again += d; });
            });
            resumed.on('error', () => undefined);
            try {
                expect(await until(() => /event: task\.created/.test(again)), again).to.equal(true);
                const ids = [...again.matchAll(/^id: (\S+)$/gm)].map((m) => Number(m[1]));
                expect(ids[0], 'resumes right after the last event seen').to.equal(Number(lastId) + 1);
            }
            finally {
                resumed.destroy();
            }
        }
        finally {
            restarted.proc.kill('SIGTERM');
            await restarted.exited;
        }
    });
    it('closes what is still open when the bound is reached (a stalled upload does not hold the stop)', async () => {
        const server = await spawnServer(path.join(tempDir(), 'data'), ['--shutdown-seconds', '4']);
        const repo = await register(server.url, 'stalled');
        const req = inFlightRequest(server.url, 'POST', `${AUTH}/${repo}/tasks`, '', 1000);
        await req.started;
        req.send('{"title":'); // and never the rest
        server.proc.kill('SIGTERM');
        expect(await exitWithin(server, 20_000), server.output()).to.equal(0);
        expect(server.output()).to.match(/closed the connections still open/);
        expect(await req.response, 'the stalled request got no answer: it was never acknowledged').to.equal(null);
    });
    it('exits at once on a second SIGTERM', async () => {
        const server = await spawnServer(path.join(tempDir(), 'data'), ['--shutdown-seconds', '600']);
        const repo = await register(server.url, 'impatient');
        const req = inFlightRequest(server.url, 'POST', `${AUTH}/${repo}/tasks`, '', 1000);
        await req.started;
        server.proc.kill('SIGTERM');
        expect(await until(() => /"msg":"stopping/.test(server.output())), server.output()).to.equal(true);
        expect(server.proc.exitCode, 'still waiting for the stalled request').to.equal(null);
        server.proc.kill('SIGTERM');
        expect(await exitWithin(server, 20_000), server.output()).to.equal(1);
        expect(server.output()).to.match(/second signal: exiting at once/);
        req.socket.destroy();
    });
});
//# sourceMappingURL=shutdown.test.js.map