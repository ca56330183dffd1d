// The event-feed client (lib/client/events.ts) and `cairn watch` against a small SSE server
// written here, which plays the wire format of docs/api.md "Events" and can misbehave on
// purpose: drop the connection, fall silent, answer 410, 503, 404 or 400. The same client
// against a real `cairn serve` is in test/events-consumers.test.ts.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { FeedConnectError, FeedGoneError, FeedRefusedError, FeedUnavailableError, followFeed, retryAfterMs, type FeedEvent, type FeedStatus } from '../lib/client/events.js';
import { eventSummary, readableEvent } from '../lib/cli/watch.js';
import { CLI } from './helpers.js';

interface Seen {
  url: string;
  lastEventId: string | undefined;
  accept: string | undefined;
}

interface Stub {
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, n: number) => void;

async function stub(handler: Handler): Promise<Stub> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url ?? '', lastEventId: req.headers['last-event-id'] as string | undefined, accept: req.headers.accept });
    handler(req, res, seen.length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

const ev = (seq: number, type = 'change.created', data: FeedEvent['data'] = { change_id: `change-${seq}`, change_ref: `task-1.change-${seq}`, task_id: 'task-1' }) =>
  ({ id: String(seq), repository_index: 3, seq, at_us: 1764074000123456 + seq, type, data });

const sse = (e: ReturnType<typeof ev>) => `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;

function open(res: http.ServerResponse, retryMs = 50): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
  res.write(`retry: ${retryMs}\n\n`);
}

/** followFeed until `until(events)` holds; returns what it delivered and the statuses it reported. */
async function follow(url: string, until: (events: FeedEvent[]) => boolean, extra: Partial<Parameters<typeof followFeed>[0]> = {}) {
  const events: FeedEvent[] = [];
  const statuses: FeedStatus[] = [];
  const stop = new AbortController();
  const done = followFeed({
    server: url, path: '/v1/native/repository-authorities/3/events', signal: stop.signal,
    onEvent: (e) => { events.push(e); if (until(events)) stop.abort(); },
    onStatus: (s) => statuses.push(s),
    ...extra,
  });
  await done;
  return { events, statuses };
}

describe('event feed client against an SSE stub', function () {
  this.timeout(30_000);
  const stubs: Stub[] = [];
  const make = async (h: Handler) => { const s = await stub(h); stubs.push(s); return s; };
  afterEach(async () => { for (const s of stubs.splice(0)) await s.close(); });

  it('parses id, event and data in order, skips comments, and asks with Accept, types and since', async () => {
    const s = await make((_req, res) => {
      open(res);
      // one chunk split inside an event, CRLF line ends, a heartbeat between events
      const text = `: keepalive\n\n${sse(ev(5))}: keepalive\n\n${sse(ev(6, 'review.recorded', { review_id: 'review-1', change_id: 'change-6', patchset_id: 'task-1.change-6.ps-1', reviewer: 'bob', action: 'approve' }))}`.replace(/\n/g, '\r\n');
      res.write(text.slice(0, 40));
      setTimeout(() => res.write(text.slice(40)), 20);
    });
    const { events, statuses } = await follow(s.url, (e) => e.length === 2, { types: ['change.created', 'review.*'], since: '4' });
    expect(events.map((e) => [e.id, e.type, e.seq])).to.deep.equal([['5', 'change.created', 5], ['6', 'review.recorded', 6]]);
    expect(events[1].data).to.deep.equal({ review_id: 'review-1', change_id: 'change-6', patchset_id: 'task-1.change-6.ps-1', reviewer: 'bob', action: 'approve' });
    expect(statuses[0]).to.deep.equal({ state: 'live' });
    expect(s.seen[0].accept).to.equal('text/event-stream');
    const q = new URL(s.seen[0].url, s.url).searchParams;
    expect(q.get('types')).to.equal('change.created,review.*');
    expect(q.get('since')).to.equal('4');
    expect(s.seen[0].lastEventId).to.equal(undefined);
  });

  it('after the server drops the stream it reconnects with Last-Event-ID (and without since): nothing lost, nothing repeated', async () => {
    const s = await make((req, res) => {
      open(res);
      const after = Number(req.headers['last-event-id'] ?? new URL(req.url!, 'http://x').searchParams.get('since') ?? 0);
      // each connection sends the next two events, then ends
      res.write(sse(ev(after + 1)));
      res.end(sse(ev(after + 2)));
    });
    const { events, statuses } = await follow(s.url, (e) => e.length === 6, { since: '10' });
    expect(events.map((e) => e.seq)).to.deep.equal([11, 12, 13, 14, 15, 16]);
    expect(s.seen.map((x) => x.lastEventId)).to.deep.equal([undefined, '12', '14']);
    expect(new URL(s.seen[1].url, s.url).searchParams.get('since')).to.equal(null);
    const down = statuses.find((x) => x.state === 'down') as Extract<FeedStatus, { state: 'down' }>;
    expect(down.reason).to.equal('the server closed the stream');
    expect(down.retryInMs).to.equal(50); // the server's retry: after a stream that was open
  });

  it('heartbeats keep a quiet stream alive; a silent one is dropped and resumed after livenessMs', async () => {
    const timers: NodeJS.Timeout[] = [];
    const s = await make((_req, res, n) => {
      open(res);
      res.write(sse(ev(n)));
      if (n === 1) {
        // the first connection: heartbeats only, every 50 ms, for 1.5 s (liveness is 600 ms)
        let beats = 0;
        const t = setInterval(() => {
          res.write(': keepalive\n\n');
          if (++beats === 30) { clearInterval(t); res.write(sse(ev(100))); }
        }, 50);
        timers.push(t);
      }
      // the second connection: the event, then silence
    });
    try {
      const { events, statuses } = await follow(s.url, (e) => e.length === 3, { livenessMs: 600 });
      expect(events.map((e) => e.seq)).to.deep.equal([1, 100, 2]);
      const downs = statuses.filter((x) => x.state === 'down') as Extract<FeedStatus, { state: 'down' }>[];
      expect(downs.map((d) => d.reason)).to.deep.equal(['no event or heartbeat for 1 s']);
      expect(s.seen.map((x) => x.lastEventId)).to.deep.equal([undefined, '100']);
    } finally {
      timers.forEach(clearInterval);
    }
  });

  it('410 ends the stream with FeedGoneError carrying the body; the resume point is the one asked for', async () => {
    const s = await make((_req, res) => {
      res.writeHead(410, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'events before seq 40 are no longer kept', oldest_seq: 40 }));
    });
    const err = await follow(s.url, () => false, { since: '7' }).then(() => null, (e) => e);
    expect(err).to.be.instanceOf(FeedGoneError);
    expect(err.resumeId).to.equal('7');
    expect(err.body).to.deep.equal({ error: 'events before seq 40 are no longer kept', oldest_seq: 40 });
  });

  it('503 waits Retry-After, then connects; 404/405/501 and 400 are reported at once', async () => {
    const s = await make((_req, res, n) => {
      if (n === 1) {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end(JSON.stringify({ error: 'too many subscribers' }));
        return;
      }
      open(res);
      res.write(sse(ev(1)));
    });
    const { events, statuses } = await follow(s.url, (e) => e.length === 1);
    expect(events.map((e) => e.seq)).to.deep.equal([1]);
    expect(statuses[0]).to.deep.equal({ state: 'down', reason: 'the server is busy (HTTP 503: too many subscribers)', retryInMs: 1000 });
    expect(s.seen).to.have.length(2);

    for (const status of [404, 405, 501]) {
      const u = await make((_req, res) => { res.writeHead(status, { 'content-type': 'application/json' }); res.end('{"error":"no such route"}'); });
      const err = await follow(u.url, () => false).then(() => null, (e) => e);
      expect(err, String(status)).to.be.instanceOf(FeedUnavailableError);
      expect(err.status).to.equal(status);
    }
    const bad = await make((_req, res) => { res.writeHead(400, { 'content-type': 'application/json' }); res.end('{"error":"types: unknown event type nope"}'); });
    const err = await follow(bad.url, () => false, { types: ['nope'] }).then(() => null, (e) => e);
    expect(err).to.be.instanceOf(FeedRefusedError);
    expect(err.message).to.equal('types: unknown event type nope');
    // a JSON page where a stream was asked for: a server that does not stream
    const json = await make((_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"events":[]}'); });
    expect(await follow(json.url, () => false).then(() => null, (e) => e)).to.be.instanceOf(FeedUnavailableError);
  });

  it('an unreachable server: FeedConnectError with failBeforeOpen, otherwise retried with backoff until stopped', async () => {
    const err = await follow('http://127.0.0.1:1', () => false, { failBeforeOpen: true }).then(() => null, (e) => e);
    expect(err).to.be.instanceOf(FeedConnectError);
    expect(err.message).to.match(/cannot reach http:\/\/127\.0\.0\.1:1: ECONNREFUSED/);
    const stop = new AbortController();
    const statuses: FeedStatus[] = [];
    const done = followFeed({
      server: 'http://127.0.0.1:1', path: '/v1/native/events', signal: stop.signal, maxRetryMs: 200, onEvent: () => undefined,
      onStatus: (st) => { statuses.push(st); if (statuses.length === 4) stop.abort(); },
    });
    await done;
    const waits = statuses.map((st) => (st.state === 'down' ? st.retryInMs : -1));
    expect(waits.every((w) => w > 0 && w <= 240)).to.equal(true); // capped by maxRetryMs (±20 % jitter)
  });

  it('Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('3', 5000)).to.equal(3000);
    expect(retryAfterMs(undefined, 5000)).to.equal(5000);
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:10 GMT', 5000, Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).to.equal(10_000);
    expect(retryAfterMs('soon', 5000)).to.equal(5000);
  });
});

// ---------------------------------------------------------------- cairn watch against the stub

function watch(args: string[], stopWhen: (stdout: string) => boolean = () => false): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, 'watch', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let signalled = false;
    p.stdout.on('data', (d) => {
      stdout += d;
      if (!signalled && stopWhen(stdout)) { signalled = true; p.kill('SIGINT'); }
    });
    p.stderr.on('data', (d) => { stderr += d; });
    p.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('cairn watch against an SSE stub', function () {
  this.timeout(30_000);
  let s: Stub;
  afterEach(() => s?.close());

  it('piped: the events as JSON lines, resumed across a dropped connection; Ctrl-C exits 0', async () => {
    s = await stub((req, res, n) => {
      open(res);
      const after = Number(req.headers['last-event-id'] ?? 0);
      res.write(sse(ev(after + 1)));
      if (n === 1) res.end(); // dropped after one event
    });
    const r = await watch(['--server', s.url, '--repo', '3', '--types', 'change.*'], (out) => out.split('\n').length > 2);
    expect(r.code, r.stderr).to.equal(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).to.deep.equal([ev(1), ev(2)]);
    expect(s.seen[0].url).to.equal('/v1/native/repository-authorities/3/events?types=change.*');
    expect(s.seen[1].lastEventId).to.equal('1');
    expect(r.stderr).to.match(/the server closed the stream; trying again in 1 s/);
    expect(r.stderr).to.include('connected again');
  });

  it('410: says which events are gone and the --since that resumes from the oldest kept one; exit 7', async () => {
    s = await stub((_req, res) => {
      res.writeHead(410, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'gone', oldest_seq: 40 }));
    });
    const r = await watch(['--server', s.url, '--repo', '3', '--since', '7']);
    expect(r.code).to.equal(7);
    expect(r.stdout).to.equal('');
    expect(r.stderr).to.equal('cairn: events before seq 40 of repository 3 are no longer kept (asked for those after 7); resume with --since 39 (from the oldest kept), or leave out --since to follow new events only\n');
  });

  it('usage errors exit 2; a server without the feed exits 1', async () => {
    s = await stub((_req, res) => { res.writeHead(404, { 'content-type': 'application/json' }); res.end('{"error":"no route"}'); });
    expect((await watch(['--server', s.url, '--repo', '99999999999'])).code).to.equal(2);
    expect((await watch(['--server', s.url, '--repo', '3', '--since', 'abc'])).code).to.equal(2);
    expect((await watch(['--server', s.url, '--since', '12-x-3'])).code).to.equal(2);
    expect((await watch(['--server', s.url, '--types', 'a b'])).code).to.equal(2);
    const none = await watch(['--server', s.url]);
    expect(none.code).to.equal(1);
    expect(none.stderr).to.match(/has no event feed \(no event feed here: HTTP 404: no route\)/);
    expect(s.seen.map((x) => x.url)).to.deep.equal(['/v1/native/events']);
  });

  it('the readable line: time, type, repository and the ids the event names', () => {
    const at = new Date(2025, 10, 25, 12, 3, 4).getTime() * 1000 + 123;
    expect(readableEvent({ ...ev(2), at_us: at })).to.equal('12:03:04  change.created         repo 3  task-1.change-2');
    expect(eventSummary({ repository_index: 0, data: { worker_job_index: 4, kind: 7, patchset_id: 'task-1.change-2.ps-1', snapshot_id: 'abcdef0123456789abcdef' } }))
      .to.equal('job 4  kind 7  task-1.change-2.ps-1  abcdef012345');
    expect(eventSummary({ repository_index: 0, data: { line: 'main', head_snapshot_id: '1111111111111111', previous_head_snapshot_id: '2222222222222222' } }))
      .to.equal('line main  111111111111  (was 222222222222)');
    expect(eventSummary({ repository_index: 1, data: { change_id: 'change-2', change_ref: 'task-1.change-2', task_id: 'task-1', status: 'review', previous_status: 'active' } }))
      .to.equal('task-1.change-2  status=review  (was active)');
    expect(eventSummary({ repository_index: 5, data: { repository_index: 5, name: 'web', namespace: '' } })).to.equal('name=web');
    expect(eventSummary({ repository_index: 0, data: { review_id: 'change-1.review-3', change_id: 'change-1', patchset_id: 'change-1.ps-1', reviewer: 'bob', action: 'approve' } }))
      .to.equal('change-1.review-3  change-1.ps-1  reviewer=bob  action=approve');
  });
});
