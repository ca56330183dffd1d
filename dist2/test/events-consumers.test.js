// The consumers of the event feeds against a real `cairn serve`: `cairn watch` (per repository
// and global, --since, a resume point that is no longer kept, Ctrl-C) and `cairn runner`, which
// waits on the feed while idle and claims a job as soon as it is queued, and falls back to
// polling when the feed is unavailable. No timing is measured: a runner polling every 60 s that
// claims a job within a bound far below 60 s can only have been woken by the feed.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { push } from '../lib/client/transfer.js';
import { CLI, api, register, spawnServer, startTestServer, tempDir } from './helpers.js';
const R = (repo) => `/v1/native/repository-authorities/${repo}`;
function start(args) {
    const proc = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d) => { out += d; });
    proc.stderr.on('data', (d) => { err += d; });
    const exited = new Promise((resolve) => proc.on('close', (code) => resolve(code)));
    return { proc, stdout: () => out, stderr: () => err, exited };
}
/** Wait until `cond()` holds, checking every 50 ms, failing after `ms` with `what`. */
async function until(cond, what, ms = 20_000) {
    const deadline = Date.now() + ms;
    while (!(await cond())) {
        if (Date.now() > deadline)
            throw new Error(`timed out waiting for ${what}`);
        await sleep(50);
    }
}
const jsonLines = (text) => text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
async function call(base, method, p, json) {
    const res = await api(base, method, p, json === undefined ? {} : { json });
    expect(res.status, `${method} ${p}: ${res.text}`).to.be.oneOf([200, 201]);
    return res.json;
}
describe('cairn watch against a real server', function () {
    this.timeout(60_000);
    let s;
    const procs = [];
    before(async () => { s = await startTestServer(); });
    after(async () => {
        for (const p of procs)
            p.proc.kill('SIGKILL');
        await s.stop();
    });
    const watch = (args) => { const p = start(['watch', '--server', s.url, ...args]); procs.push(p); return p; };
    it('a repository: the kept events after --since, then new ones as they happen, as JSON lines; Ctrl-C exits 0', async () => {
        const repo = await register(s.url, 'watched');
        await call(s.url, 'POST', `${R(repo)}/tasks`, { title: 'T', intent: 'I' });
        const w = watch(['--repo', String(repo), '--since', '0', '--types', 'task.*,change.*']);
        await until(() => w.stdout().includes('task.created'), 'the kept task.created');
        await call(s.url, 'POST', `${R(repo)}/tasks/task-1:close`, { status: 'abandoned' });
        await call(s.url, 'POST', `${R(repo)}/tasks`, { title: 'T2', intent: 'I' });
        await until(() => jsonLines(w.stdout()).length === 3, 'the new events');
        w.proc.kill('SIGINT');
        expect(await w.exited, w.stderr()).to.equal(0);
        const lines = jsonLines(w.stdout());
        expect(lines.map((e) => e.type)).to.deep.equal(['task.created', 'task.closed', 'task.created']);
        expect(lines[2]).to.include({ repository_index: repo, id: String(lines[2].seq) });
        expect(lines[2].data).to.include({ task_id: 'task-2' });
        // the ids are the feed's own: what a JSON page of the same feed answers
        const page = await call(s.url, 'GET', `${R(repo)}/events?types=task.*,change.*`);
        expect(page.events.map((e) => e.id)).to.deep.equal(lines.map((e) => e.id));
    });
    it('every repository: the registry events and those of every repository on one stream (one registered meanwhile too), resumable by global id', async () => {
        const a = await register(s.url, 'global-a');
        const w = watch(['--types', 'repository.registered,task.created']);
        await until(() => w.stderr().includes('watching every repository'), 'the stream to open');
        await call(s.url, 'POST', `${R(a)}/tasks`, { title: 'T', intent: 'I' });
        const b = await register(s.url, 'global-b');
        await call(s.url, 'POST', `${R(b)}/tasks`, { title: 'T', intent: 'I' });
        await until(() => jsonLines(w.stdout()).length >= 3, 'three events');
        w.proc.kill('SIGINT');
        expect(await w.exited).to.equal(0);
        const [first, registered, second] = jsonLines(w.stdout());
        expect(first).to.include({ type: 'task.created', repository_index: a });
        expect(registered).to.include({ type: 'repository.registered', repository_index: b });
        expect(registered.id).to.match(/^\d+-registry-\d+$/);
        expect(second).to.include({ type: 'task.created', repository_index: b });
        expect(first.id).to.match(new RegExp(`^\\d+-${a}-${first.seq}$`));
        // resuming after the first id gives the two after it, and nothing before
        const again = watch(['--types', 'repository.registered,task.created', '--since', first.id]);
        await until(() => jsonLines(again.stdout()).length >= 2, 'the resumed events');
        await sleep(200);
        again.proc.kill('SIGINT');
        expect(await again.exited).to.equal(0);
        expect(jsonLines(again.stdout()).map((e) => e.id)).to.deep.equal([registered.id, second.id]);
    });
    it('--since older than the oldest kept event: exit 7 with the --since that starts at the oldest kept one', async () => {
        const repo = await register(s.url, 'trimmed');
        for (let i = 0; i < 5; i++)
            await call(s.url, 'POST', `${R(repo)}/tasks`, { title: `T${i}`, intent: 'I' });
        const service = await s.ready;
        await service.authority(repo).store.trimEvents(2);
        const page = await call(s.url, 'GET', `${R(repo)}/events`);
        const oldest = page.oldest_seq;
        expect(oldest).to.be.greaterThan(2);
        const w = watch(['--repo', String(repo), '--since', '1']);
        expect(await w.exited).to.equal(7);
        expect(w.stdout()).to.equal('');
        expect(w.stderr()).to.include(`events before seq ${oldest} of repository ${repo} are no longer kept (asked for those after 1); resume with --since ${oldest - 1}`);
        // and that --since works
        const ok = watch(['--repo', String(repo), '--since', String(oldest - 1)]);
        await until(() => jsonLines(ok.stdout()).length === page.events.length, 'the kept events');
        ok.proc.kill('SIGINT');
        expect(await ok.exited).to.equal(0);
        expect(jsonLines(ok.stdout()).map((e) => e.seq)).to.deep.equal(page.events.map((e) => e.seq));
        // the global feed says the same with its own ids: the message names the oldest global id
        const all = watch(['--since', '0-0-0']);
        expect(await all.exited).to.equal(7);
        const oldestId = (await call(s.url, 'GET', '/v1/native/events?limit=1')).oldest_id;
        expect(all.stderr()).to.include(`resume with --since ${oldestId} (from the oldest kept)`);
    });
    it('an unknown repository exits 1 naming it', async () => {
        const w = watch(['--repo', '4000']);
        expect(await w.exited).to.equal(1);
        expect(w.stderr()).to.match(/no event feed for repository 4000/);
    });
});
/**
 * Forwards everything to `target`, streaming (so an event stream passes as it comes), and
 * counts the runner's claims. With `feedStatus` the event feeds answer that status instead (the
 * feed unavailable, as on a server without it, or busy).
 */
async function proxy(target, feedStatus) {
    const to = new URL(target);
    let asks = 0;
    let claims = 0;
    const server = http.createServer((req, res) => {
        const isFeed = /\/events(\?|$)/.test(req.url ?? '');
        if (isFeed)
            asks++;
        if (isFeed && feedStatus !== undefined) {
            res.writeHead(feedStatus, { 'content-type': 'application/json', ...(feedStatus === 503 ? { 'retry-after': '1' } : {}) });
            res.end(JSON.stringify({ error: feedStatus === 503 ? 'too many subscribers' : 'no such route' }));
            return;
        }
        // As an ingress does by default (nginx proxy_pass), Host names the upstream: cairn answers only its own names.
        const upstream = http.request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } }, (up) => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
            if (req.url === '/v1/native/worker-jobs:claim')
                res.on('finish', () => { claims++; });
        });
        upstream.on('error', () => { res.writeHead(502); res.end(); });
        req.pipe(upstream);
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        url: `http://127.0.0.1:${server.address().port}`,
        feedAsks: () => asks,
        claimsAnswered: () => claims,
        close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
    };
}
describe('cairn runner and the event feed', function () {
    this.timeout(90_000);
    let server;
    const runners = [];
    before(async () => { server = await spawnServer(path.join(tempDir(), 'data')); });
    after(async () => {
        for (const r of runners)
            r.proc.kill('SIGKILL');
        server.proc.kill('SIGTERM');
        await server.exited;
    });
    /** A repository whose main holds a passing ci/run.sh (no job queued yet). */
    async function repository(name) {
        const repo = await register(server.url, name);
        const dir = path.join(tempDir(), name);
        await fsp.mkdir(path.join(dir, 'ci'), { recursive: true });
        await fsp.writeFile(path.join(dir, 'ci/run.sh'), 'echo ok\n');
        await push({ server: server.url, repo, line: 'main', dir, moveLine: true, progress: false });
        return repo;
    }
    const queue = async (repo) => (await call(server.url, 'POST', `${R(repo)}:runCi`, {})).job.worker_job_index;
    const jobState = async (repo, index) => (await call(server.url, 'GET', `${R(repo)}/worker-jobs/${index}`)).job;
    function runner(serverUrl, args) {
        const r = start(['runner', '--server', serverUrl, '--workdir', path.join(tempDir(), 'work'), ...args]);
        runners.push(r);
        return r;
    }
    for (const scope of ['repository', 'global']) {
        it(`idle with a 60 s poll interval, it claims a job queued after it went idle well within that interval: the ${scope} feed woke it`, async () => {
            const p = await proxy(server.url);
            try {
                const repo = await repository(`fed-${scope}`);
                const r = runner(p.url, [...(scope === 'repository' ? ['--repo', String(repo)] : []), '--poll-ms', '60000']);
                await until(() => r.stderr().includes('waiting on the event feed for queued jobs'), 'the runner to follow the feed');
                // Idle: its claim at start and its claim when the stream opened found nothing, and its
                // next poll is 60 s away. Only a job.queued event can make it claim within 20 s now.
                await until(() => p.claimsAnswered() >= 2, 'the two claims of the start');
                const index = await queue(repo);
                await until(async () => (await jobState(repo, index)).state === 'succeeded', `job ${index} to be claimed and run`, 20_000);
                expect(await jobState(repo, index)).to.include({ state: 'succeeded', outcome: 'succeeded', attempt_count: 1 });
                await until(() => r.stdout().includes('"outcome":"succeeded"'), 'the runner to report the job');
                expect(jsonLines(r.stdout())[0]).to.include({ repository_index: repo, worker_job_index: index, outcome: 'succeeded' });
                expect(p.feedAsks()).to.equal(1);
                r.proc.kill('SIGTERM');
                expect(await r.exited, r.stderr()).to.equal(0);
            }
            finally {
                await p.close();
            }
        });
    }
    it('idle on the feed, it claims at once a job another runner gave back (requeued), not at its next poll', async () => {
        const repo = await repository('fed-requeued');
        const index = await queue(repo);
        // Another runner holds the job...
        const claimed = (await call(server.url, 'POST', '/v1/native/worker-jobs:claim', { accepted_job_kinds: [7, 11], repository_indexes: [repo], accepted_runtime_contracts: ['svc.runner.native-job.v3'] })).claimed_job;
        expect(claimed).to.include({ repository_index: repo, worker_job_index: index });
        const r = runner(server.url, ['--repo', String(repo), '--poll-ms', '60000']);
        await until(() => r.stderr().includes('waiting on the event feed for queued jobs'), 'the runner to follow the feed');
        // ...and gives it back (retryable, as a runner stopped with SIGTERM does): it is queued again.
        // The idle runner's next poll is 60 s away; only the event of the requeue makes it claim now.
        await call(server.url, 'POST', `${R(repo)}/worker-jobs/${index}:fail`, { attempt_count: claimed.attempt_count, lease_token: claimed.lease_token, detail: { retryable: true, error: 'stopped' } });
        await until(async () => (await jobState(repo, index)).state === 'succeeded', `job ${index} to be claimed again and run`, 20_000);
        expect(await jobState(repo, index)).to.include({ attempt_count: 2 });
        r.proc.kill('SIGTERM');
        expect(await r.exited, r.stderr()).to.equal(0);
    });
    for (const status of [404, 503]) {
        it(`when the feed answers ${status}, it says so and still claims by polling every --poll-ms`, async () => {
            const p = await proxy(server.url, status);
            try {
                const repo = await repository(`polled-${status}`);
                const r = runner(p.url, ['--repo', String(repo), '--poll-ms', '200']);
                await until(() => r.stderr().includes('event feed unavailable'), 'the fallback notice');
                expect(r.stderr()).to.include(status === 404 ? 'HTTP 404' : 'HTTP 503');
                const index = await queue(repo);
                await until(async () => (await jobState(repo, index)).state === 'succeeded', `job ${index} to be claimed by polling`, 20_000);
                expect(p.feedAsks()).to.be.at.least(1);
                r.proc.kill('SIGTERM');
                expect(await r.exited, r.stderr()).to.equal(0);
                expect(r.stderr()).to.not.include('waiting on the event feed');
            }
            finally {
                await p.close();
            }
        });
    }
});
//# sourceMappingURL=events-consumers.test.js.map