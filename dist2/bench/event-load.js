// Paced event load for the events bench: POST a task every 1/RATE seconds (open loop: the
// schedule does not wait for answers, up to MAX_IN_FLIGHT outstanding) for SECONDS, so the
// server commits RATE events per second whatever its latency. Run in its own process.
// Usage: node dist/bench/event-load.js URL REPO RATE SECONDS
//   → prints {"sent", "ok", "errors", "seconds", "rate"} on stdout.
import http from 'node:http';
const MAX_IN_FLIGHT = 256;
export async function eventLoad(url, repo, rate, seconds) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    const u = new URL(`${url}/v1/native/repository-authorities/${repo}/tasks`);
    let sent = 0;
    let ok = 0;
    let errors = 0;
    let inFlight = 0;
    const body = (i) => JSON.stringify({ title: `event load ${i}`, intent: 'bench' });
    const post = (i) => new Promise((resolve) => {
        inFlight++;
        const payload = body(i);
        const req = http.request(u, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
            res.resume();
            res.on('end', () => {
                if (res.statusCode === 200 || res.statusCode === 201)
                    ok++;
                else
                    errors++;
                inFlight--;
                resolve();
            });
        });
        req.on('error', () => { errors++; inFlight--; resolve(); });
        req.end(payload);
    });
    const started = performance.now();
    const pending = [];
    const total = Math.round(rate * seconds);
    while (sent < total) {
        const due = started + (sent / rate) * 1000;
        const wait = due - performance.now();
        if (wait > 1)
            await new Promise((r) => setTimeout(r, wait));
        if (inFlight >= MAX_IN_FLIGHT) {
            await new Promise((r) => setTimeout(r, 1));
            continue;
        }
        pending.push(post(sent++));
        if (pending.length > 4096)
            await Promise.all(pending.splice(0, 2048));
    }
    await Promise.all(pending);
    const elapsed = (performance.now() - started) / 1000;
    agent.destroy();
    return { sent, ok, errors, seconds: Math.round(elapsed * 100) / 100, rate: Math.round(ok / elapsed) };
}
if (import.meta.url === `file://${process.argv[1]}`) {
    const [url, repo, rate, seconds] = process.argv.slice(2);
    eventLoad(url, Number(repo), Number(rate), Number(seconds)).then((r) => process.stdout.write(`${JSON.stringify(r)}\n`), (err) => {
        process.stderr.write(`${err.stack}\n`);
        process.exit(1);
    });
}
//# sourceMappingURL=event-load.js.map