// The event feeds over real HTTP (docs/api.md "Events"): JSON pages of one repository and of
// all of them, server-sent events live and resumed (after a restart and after kill -9), the
// projection an event names readable as soon as the event arrives, the global order across
// repositories, 410 after retention, the subscriber cap, heartbeats, and a subscriber that
// stops reading being dropped without the server growing.
import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { beginEventTime, endEventTime } from '../lib/store/event-clock.js';
import { checkAnswer } from './contract.js';
import { api, ok, register, spawnServer, startTestServer, tempDir, until, untilOutput, type ChildServer, type TestServer } from './helpers.js';

const R = (repo: number, p = '') => `/v1/native/repository-authorities/${repo}${p}`;
const FEED = (repo: number, query = '') => R(repo, `/events${query}`);
const GLOBAL = (query = '') => `/v1/native/events${query}`;

interface Frame {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comment?: string;
}

/** A server-sent-events reader over fetch: frames as they arrive. */
class SseClient {
  private buffer = '';
  private readonly frames: Frame[] = [];
  private ended = false;
  private waiter: (() => void) | null = null;
  private readonly controller = new AbortController();
  status = 0;
  headers!: Headers;
  text = '';
  /** Called with each event the moment its frame is parsed. */
  onEvent: ((event: any) => void) | null = null;

  static async open(base: string, urlPath: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const client = new SseClient();
    const res = await fetch(base + urlPath, { headers: { accept: 'text/event-stream', ...headers }, signal: client.controller.signal });
    client.status = res.status;
    client.headers = res.headers;
    if (res.status !== 200) {
      client.text = await res.text();
      checkAnswer({ method: 'GET', urlPath, status: res.status, headers: res.headers, text: client.text });
      return client;
    }
    checkAnswer({ method: 'GET', urlPath, status: res.status, headers: res.headers, text: '' });
    void client.consume(res.body!);
    return client;
  }

  private async consume(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of body) {
        this.buffer += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = this.buffer.indexOf('\n\n')) >= 0) {
          const block = this.buffer.slice(0, end);
          this.buffer = this.buffer.slice(end + 2);
          const frame: Frame = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) frame.comment = line.slice(1).trim();
            else {
              const colon = line.indexOf(':');
              (frame as Record<string, string>)[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
            }
          }
          this.frames.push(frame);
          if (frame.event && this.onEvent) this.onEvent(JSON.parse(frame.data!));
        }
        this.wakeUp();
      }
    } catch {
      // aborted, or the server went away
    }
    this.ended = true;
    this.wakeUp();
  }

  private wakeUp(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  /** Every frame so far. */
  get all(): Frame[] {
    return this.frames;
  }

  /** Event frames so far, parsed. */
  get events(): any[] {
    return this.frames.filter((f) => f.event).map((f) => ({ ...JSON.parse(f.data!), frameId: f.id, frameEvent: f.event }));
  }

  /** Wait until `done(frames)` holds; false when the stream ended first. */
  async until(done: (frames: Frame[]) => boolean, what: string, ms = 20_000): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!done(this.frames)) {
      if (this.ended) return false;
      if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms: ${JSON.stringify(this.frames.slice(-3))}`);
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
        setTimeout(resolve, 200);
      });
    }
    return true;
  }

  async untilEvents(n: number, what = `${n} events`): Promise<any[]> {
    const reached = await this.until((frames) => frames.filter((f) => f.event).length >= n, what);
    expect(reached, `the stream ended before ${what}`).to.equal(true);
    return this.events;
  }

  /** Resolves once the server ended the stream. */
  async untilEnded(ms = 20_000): Promise<void> {
    expect(await this.until(() => false, 'end', ms)).to.equal(false);
  }

  get isEnded(): boolean {
    return this.ended;
  }

  close(): void {
    this.controller.abort();
  }
}

/**
 * Create `n` lines (one line.created event each), `parallel` requests at a time. Plain
 * node:http with keep-alive: a lot cheaper per request than fetch when thousands are made.
 */
async function makeLines(base: string, repo: number, n: number, prefix: string, parallel = 1, nameLength = 0): Promise<void> {
  const { hostname, port } = new URL(base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: parallel });
  const put = (name: string) => new Promise<void>((resolve, reject) => {
    const req = http.request({ host: hostname, port, method: 'PUT', path: R(repo, `/lines/${encodeURIComponent(name)}`), agent, headers: { 'content-type': 'application/json', 'content-length': '2' } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`PUT line ${name}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end('{}');
  });
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      await put(`${prefix}-${i}`.padEnd(nameLength, 'x'));
    }
  };
  try {
    await Promise.all(Array.from({ length: parallel }, worker));
  } finally {
    agent.destroy();
  }
}

async function page(base: string, urlPath: string): Promise<any> {
  return ok(api(base, 'GET', urlPath), urlPath);
}

describe('event feeds', function () {
  this.timeout(60_000);

  describe('one server', () => {
    let s: TestServer;
    let repo: number;
    let other: number;
    before(async () => {
      s = await startTestServer(undefined, { events: { heartbeatMs: 150 } });
      repo = await register(s.url, 'events-a');
      other = await register(s.url, 'events-b');
    });
    after(() => s.stop());

    it('pages a repository feed with since, limit and types', async () => {
      const empty = await page(s.url, FEED(repo));
      expect(empty).to.deep.equal({ events: [], next_since: 0, oldest_seq: 1, last_seq: 0 });
      await makeLines(s.url, repo, 5, 'page');
      await ok(api(s.url, 'POST', R(repo, '/lines/page-0:close'), { json: {} }));
      const all = await page(s.url, FEED(repo));
      expect(all.events.map((e: any) => [e.id, e.seq, e.type])).to.deep.equal([
        ['1', 1, 'line.created'], ['2', 2, 'line.created'], ['3', 3, 'line.created'], ['4', 4, 'line.created'], ['5', 5, 'line.created'], ['6', 6, 'line.archived'],
      ]);
      expect(all).to.include({ next_since: 6, oldest_seq: 1, last_seq: 6 });
      const first = all.events[0];
      expect(first).to.deep.equal({ id: '1', repository_index: repo, seq: 1, at_us: first.at_us, type: 'line.created', data: { line: 'page-0', head_snapshot_id: null } });
      // Times never decrease along a feed.
      for (let i = 1; i < all.events.length; i++) expect(all.events[i].at_us).to.be.at.least(all.events[i - 1].at_us);

      const two = await page(s.url, FEED(repo, '?since=2&limit=2'));
      expect(two.events.map((e: any) => e.seq)).to.deep.equal([3, 4]);
      expect(two.next_since).to.equal(4);
      const rest = await page(s.url, FEED(repo, `?since=${two.next_since}&limit=2`));
      expect(rest.events.map((e: any) => e.seq)).to.deep.equal([5, 6]);
      const none = await page(s.url, FEED(repo, '?since=6'));
      expect(none).to.deep.equal({ events: [], next_since: 6, oldest_seq: 1, last_seq: 6 });

      expect((await page(s.url, FEED(repo, '?types=line.archived'))).events.map((e: any) => e.seq)).to.deep.equal([6]);
      expect((await page(s.url, FEED(repo, '?types=line.*'))).events).to.have.length(6);
      expect((await page(s.url, FEED(repo, '?types=job.*,line.archived&since=1'))).events.map((e: any) => e.seq)).to.deep.equal([6]);
      // A types filter reads on past events it skips: next_since says how far it read.
      const skipped = await page(s.url, FEED(repo, '?types=job.queued'));
      expect(skipped).to.deep.equal({ events: [], next_since: 6, oldest_seq: 1, last_seq: 6 });
    });

    it('refuses a malformed since, limit or types list, and a since ahead of the newest event (400)', async () => {
      const bad = [
        FEED(repo, '?since=-1'), FEED(repo, '?since=01'), FEED(repo, '?since=abc'), FEED(repo, '?since=99999999'),
        FEED(repo, '?limit=0'), FEED(repo, '?limit=1001'), FEED(repo, '?limit=x'),
        FEED(repo, '?types='), FEED(repo, '?types=line.created,'), FEED(repo, '?types=line.nope'), FEED(repo, '?types=nope.*'), FEED(repo, '?types=*'),
        FEED(repo, '?since=1&since=2'),
        GLOBAL('?since=5'), GLOBAL('?since=1-2'), GLOBAL('?since=1-x-2'), GLOBAL('?types=job'),
        GLOBAL(`?since=1-${repo}-99999`),
      ];
      for (const url of bad) {
        const res = await api(s.url, 'GET', url);
        expect(res.status, `${url}: ${res.text}`).to.equal(400);
        expect(res.json.error).to.be.a('string');
      }
      const types = await api(s.url, 'GET', FEED(repo, '?types=line.nope'));
      expect(types.json.error).to.match(/"line\.nope" is not an event type/);
      // The stream refuses the same way, before it starts; Last-Event-ID is checked like since.
      const sse = await SseClient.open(s.url, FEED(repo), { 'last-event-id': 'x' });
      expect(sse.status).to.equal(400);
      expect(JSON.parse(sse.text).error).to.match(/Last-Event-ID/);
      expect((await api(s.url, 'GET', FEED(9999))).status).to.equal(404);
    });

    it('streams events live, in order, with their ids; an event names what is already readable', async () => {
      const sse = await SseClient.open(s.url, FEED(repo));
      expect(sse.status).to.equal(200);
      expect(sse.headers.get('content-type')).to.match(/^text\/event-stream/);
      await sse.until((f) => f.length > 0, 'retry line');
      expect(sse.all[0]).to.deep.equal({ retry: '2000' });
      const start = (await page(s.url, FEED(repo))).last_seq;
      // A reader that reads the projection an event names the moment the event arrives: the
      // line exists, the task exists, the change exists.
      const checked: Promise<void>[] = [];
      const expectFound = (urlPath: string) => checked.push(api(s.url, 'GET', urlPath).then((r) => { expect(r.status, urlPath).to.equal(200); }));
      sse.onEvent = (e) => {
        if (e.type === 'line.created') expectFound(R(repo, `/lines/${encodeURIComponent(e.data.line)}`));
        if (e.type === 'task.created') expectFound(R(repo, `/tasks/${e.data.task_id}`));
        if (e.type === 'change.created') expectFound(R(repo, `/changes/${e.data.change_ref}`));
      };
      await makeLines(s.url, repo, 3, 'live');
      const task = (await ok(api(s.url, 'POST', R(repo, '/tasks'), { json: { title: 'Feed', intent: 'watch it' } }))).task;
      const change = (await ok(api(s.url, 'POST', R(repo, '/changes'), { json: { task_id: task.task_id, title: 'c', base_line: 'live-0' } }))).change;
      const events = await sse.untilEvents(5);
      await Promise.all(checked);
      expect(checked).to.have.length(5);
      expect(events.map((e) => e.type)).to.deep.equal(['line.created', 'line.created', 'line.created', 'task.created', 'change.created']);
      expect(events.map((e) => e.seq)).to.deep.equal([start + 1, start + 2, start + 3, start + 4, start + 5]);
      for (const e of events) {
        expect(e.frameId).to.equal(String(e.seq));
        expect(e.frameEvent).to.equal(e.type);
        expect(e.id).to.equal(e.frameId);
        expect(e.repository_index).to.equal(repo);
      }
      expect(events[4].data).to.deep.equal({ change_id: change.change_id, change_ref: change.change_ref, task_id: task.task_id });
      sse.close();
    });

    it('resumes a stream from since or Last-Event-ID (which wins), filtered by types', async () => {
      await makeLines(s.url, repo, 2, 'resume');
      const last = (await page(s.url, FEED(repo))).last_seq;
      const fromSince = await SseClient.open(s.url, FEED(repo, `?since=${last - 2}`));
      expect((await fromSince.untilEvents(2)).map((e) => e.seq)).to.deep.equal([last - 1, last]);
      fromSince.close();
      const fromHeader = await SseClient.open(s.url, FEED(repo, '?since=0'), { 'last-event-id': String(last - 1) });
      expect((await fromHeader.untilEvents(1)).map((e) => e.seq)).to.deep.equal([last]);
      await ok(api(s.url, 'POST', R(repo, '/lines/resume-0:close'), { json: {} }));
      await makeLines(s.url, repo, 1, 'resume-more');
      expect((await fromHeader.untilEvents(3)).map((e) => e.type)).to.deep.equal(['line.created', 'line.archived', 'line.created']);
      fromHeader.close();
      const filtered = await SseClient.open(s.url, FEED(repo, '?since=0&types=line.archived'));
      const archived = await filtered.untilEvents(2);
      expect(archived.map((e) => e.type)).to.deep.equal(['line.archived', 'line.archived']);
      filtered.close();
    });

    it('sends a keepalive comment on an idle stream', async () => {
      const sse = await SseClient.open(s.url, FEED(other));
      await sse.until((frames) => frames.filter((f) => f.comment === 'keepalive').length >= 2, 'two keepalives');
      expect(sse.events).to.deep.equal([]);
      sse.close();
    });

    it('merges every repository in time order with global ids, and resumes from a global id', async () => {
      const live = await SseClient.open(s.url, GLOBAL());
      await live.until((f) => f.length > 0, 'retry line');
      // Interleave: a, b, a, b, ...
      for (let i = 0; i < 4; i++) {
        await makeLines(s.url, repo, 1, `g-a${i}`);
        await makeLines(s.url, other, 1, `g-b${i}`);
      }
      const streamed = await live.untilEvents(8);
      expect(streamed.map((e) => [e.repository_index, e.data.line])).to.deep.equal([0, 1, 2, 3].flatMap((i) => [[repo, `g-a${i}-0`], [other, `g-b${i}-0`]]));
      for (const e of streamed) {
        expect(e.frameId).to.equal(`${e.at_us}-${e.repository_index}-${e.seq}`);
        expect(e.id).to.equal(e.frameId);
      }
      live.close();

      // The JSON page from the beginning holds both repositories' events, in (at_us, seq) order.
      const everything: any[] = [];
      let since: string | null = null;
      for (;;) {
        const p: any = await page(s.url, GLOBAL(since ? `?since=${since}&limit=7` : '?limit=7'));
        everything.push(...p.events);
        expect(p.oldest_id).to.equal('0-0-0');
        if (p.events.length === 0) break;
        since = p.next_since;
      }
      const a = (await page(s.url, FEED(repo, '?limit=1000'))).events;
      const b = (await page(s.url, FEED(other, '?limit=1000'))).events;
      // ...and the registry's: the two registrations, in their place.
      const registry = everything.filter((e) => e.id.includes('-registry-'));
      expect(registry.map((e) => [e.type, e.repository_index])).to.deep.equal([['repository.registered', repo], ['repository.registered', other]]);
      expect(everything.indexOf(registry[1])).to.be.below(everything.findIndex((e) => e.repository_index === other && !e.id.includes('-registry-')));
      expect(everything).to.have.length(a.length + b.length + registry.length);
      for (let i = 1; i < everything.length; i++) {
        const [p, q] = [everything[i - 1], everything[i]];
        expect(p.at_us < q.at_us || (p.at_us === q.at_us && p.seq < q.seq), `${p.id} before ${q.id}`).to.equal(true);
      }
      expect(everything.filter((e) => e.id.endsWith(`-${repo}-${e.seq}`)).map((e) => e.seq)).to.deep.equal(a.map((e: any) => e.seq));

      // Resume after the fourth streamed event: the other four, in order, as a page and as a stream.
      const after = streamed[3].id;
      const resumed = await page(s.url, GLOBAL(`?since=${after}`));
      expect(resumed.events.map((e: any) => e.id)).to.deep.equal(streamed.slice(4).map((e) => e.id));
      const stream = await SseClient.open(s.url, GLOBAL(), { 'last-event-id': after });
      expect((await stream.untilEvents(4)).map((e) => e.id)).to.deep.equal(streamed.slice(4).map((e) => e.id));
      stream.close();
      const typed = await page(s.url, GLOBAL(`?since=${after}&types=line.created`));
      expect(typed.events).to.have.length(4);
      expect((await page(s.url, GLOBAL(`?since=${after}&types=job.*`))).events).to.deep.equal([]);
      // A global id that names no event of its stream is refused.
      const [at, , seq] = streamed[0].id.split('-');
      expect((await api(s.url, 'GET', GLOBAL(`?since=${Number(at) + 1}-${streamed[0].repository_index}-${seq}`))).status).to.equal(400);
    });

    it('refuses a global position that names no event (400) and takes every position it hands out', async () => {
      const empty = await register(s.url, 'events-empty');
      await makeLines(s.url, repo, 2, 'pos');
      const all = (await page(s.url, GLOBAL('?limit=1000'))).events;
      const newest = all.at(-1);
      const mine = all.filter((e: any) => e.repository_index === repo && !e.id.includes('-registry-'));
      const at = mine[0].at_us;
      const future = (Date.now() + 3_600_000) * 1000;
      const refused: [string, RegExp][] = [
        [`${at}-4000-1`, /no stream 4000 exists/], // a repository never registered
        [`${at}-${repo}-0`, /event numbers start at 1/],
        ['5-registry-0', /event numbers start at 1/],
        [`0-${other}-0`, /event numbers start at 1/], // only 0-0-0 is the beginning
        [`${future}-${repo}-${mine[0].seq}`, /ahead of the newest event/],
        [`${at}-${empty}-1`, new RegExp(`stream ${empty} has 0 events`)], // an empty repository
        [`${at + 1}-${repo}-${mine[0].seq}`, /has another time/],
      ];
      for (const [since, why] of refused) {
        const res = await api(s.url, 'GET', GLOBAL(`?since=${since}`));
        expect(res.status, `${since}: ${res.text}`).to.equal(400);
        expect(res.json.error, since).to.match(why).and.match(/names no event/);
        // The stream refuses it the same way, before it starts.
        const sse = await SseClient.open(s.url, GLOBAL(), { 'last-event-id': since });
        expect(sse.status, since).to.equal(400);
      }
      // Accepted: the beginning, any event's id (the newest one too: nothing new yet), a page's
      // next_since. A stream resumed after the newest event sees the next one.
      expect((await page(s.url, GLOBAL('?since=0-0-0&limit=1'))).events[0].id).to.equal(all[0].id);
      expect(await page(s.url, GLOBAL(`?since=${newest.id}`))).to.include({ next_since: newest.id }).and.have.property('events').that.deep.equals([]);
      const middle = await page(s.url, GLOBAL(`?since=${mine[0].id}&types=job.*`));
      expect(middle.events).to.deep.equal([]);
      expect((await page(s.url, GLOBAL(`?since=${middle.next_since}`))).events).to.deep.equal([]);
      const resumed = await SseClient.open(s.url, GLOBAL(), { 'last-event-id': newest.id });
      expect(resumed.status).to.equal(200);
      await makeLines(s.url, repo, 1, 'pos-after');
      expect((await resumed.untilEvents(1)).map((e) => e.data.line)).to.deep.equal(['pos-after-0']);
      resumed.close();
    });

    it('refuses a types filter that can never match on the feed (400): registry events on a repository feed', async () => {
      for (const types of ['repository.*', 'repository.registered', 'line.*,repository.purged']) {
        const res = await api(s.url, 'GET', FEED(repo, `?types=${types}`));
        expect(res.status, types).to.equal(400);
        expect(res.json.error, types).to.match(/never appears on a repository feed/).and.match(/global feed/);
        const sse = await SseClient.open(s.url, FEED(repo, `?types=${types}`));
        expect(sse.status, types).to.equal(400);
      }
      // The global feed carries them.
      const registered = await page(s.url, GLOBAL('?types=repository.*&limit=1000'));
      expect(registered.events.map((e: any) => e.type)).to.include('repository.registered');
      expect((await page(s.url, FEED(repo, '?types=line.*,job.*'))).events.length).to.be.above(0);
    });

    it('holds a global event back while a commit timed before it is still being written', async () => {
      const live = await SseClient.open(s.url, GLOBAL());
      await live.until((f) => f.length > 0, 'retry line');
      // A commit of some repository that took its time and is still being written.
      const earlier = beginEventTime();
      let released = false;
      try {
        await makeLines(s.url, repo, 2, 'held');
        const own = (await page(s.url, FEED(repo))).events.map((e: any) => e.data.line);
        expect(own.slice(-2)).to.deep.equal(['held-0', 'held-1']);
        // The global feed does not hand them out yet: the earlier commit may still add events
        // that sort before them.
        const global = await page(s.url, GLOBAL('?limit=1000'));
        expect(global.events.map((e: any) => e.data.line)).to.not.include('held-0');
        expect(live.events).to.deep.equal([]);
        const resumed = await page(s.url, GLOBAL(`?since=${global.next_since}`));
        expect(resumed.events).to.deep.equal([]);
        endEventTime(earlier);
        released = true;
        expect((await live.untilEvents(2)).map((e) => e.data.line)).to.deep.equal(['held-0', 'held-1']);
        expect((await page(s.url, GLOBAL(`?since=${global.next_since}`))).events.map((e: any) => e.data.line)).to.deep.equal(['held-0', 'held-1']);
      } finally {
        if (!released) endEventTime(earlier);
        live.close();
      }
    });

    it('follows repositories as they come and go: a new one joins the global stream, a purged one leaves it', async () => {
      const live = await SseClient.open(s.url, GLOBAL());
      await live.until((f) => f.length > 0, 'retry line');
      const gone = await register(s.url, 'events-gone');
      const own = await SseClient.open(s.url, FEED(gone));
      await makeLines(s.url, gone, 2, 'come');
      const stream = (e: any) => e.id.split('-')[1];
      expect((await live.untilEvents(3)).map((e) => [stream(e), e.repository_index, e.type])).to.deep.equal([
        ['registry', gone, 'repository.registered'], [String(gone), gone, 'line.created'], [String(gone), gone, 'line.created'],
      ]);
      expect(await own.untilEvents(2)).to.have.length(2);

      await ok(api(s.url, 'POST', R(gone, '/retirement')));
      const manifest = (await ok(api(s.url, 'GET', R(gone, '/retirement')))).manifest;
      await ok(api(s.url, 'POST', R(gone, '/retirement/purge'), { json: manifest }));
      // The purged repository's own stream ends; the global one goes on without it.
      await own.untilEnded();
      await makeLines(s.url, repo, 1, 'go');
      const after = (await live.untilEvents(6)).slice(3);
      expect(after.map((e) => [stream(e), e.repository_index, e.type])).to.deep.equal([
        ['registry', gone, 'repository.retiring'], ['registry', gone, 'repository.purged'], [String(repo), repo, 'line.created'],
      ]);
      live.close();
      expect((await api(s.url, 'GET', FEED(gone))).status).to.equal(404);
      // A reader whose last event was one of the purged repository's resumes after it: the
      // position can no longer be checked against its log, but it names a registered stream.
      const lastOfGone = (await live.untilEvents(3))[2];
      const resumed = await page(s.url, GLOBAL(`?since=${lastOfGone.id}`));
      expect(resumed.events.map((e: any) => e.type)).to.deep.equal(['repository.retiring', 'repository.purged', 'line.created']);
      const all = (await page(s.url, GLOBAL('?limit=1000'))).events;
      expect(all.filter((e: any) => e.repository_index === gone).map((e: any) => e.type)).to.deep.equal(['repository.registered', 'repository.retiring', 'repository.purged']);
      expect(all.at(-1).data.line).to.equal('go-0');
    });
  });

  it('answers 503 with Retry-After beyond the subscriber cap, and frees a place when a subscriber leaves', async () => {
    const s = await startTestServer(undefined, { events: { maxSubscribers: 2 } });
    try {
      const repo = await register(s.url, 'cap');
      const one = await SseClient.open(s.url, FEED(repo));
      const two = await SseClient.open(s.url, GLOBAL());
      expect([one.status, two.status]).to.deep.equal([200, 200]);
      const three = await SseClient.open(s.url, FEED(repo));
      expect(three.status).to.equal(503);
      expect(three.headers.get('retry-after')).to.equal('1');
      expect(JSON.parse(three.text).error).to.match(/2 event subscribers/);
      // JSON pages are not subscribers.
      await page(s.url, FEED(repo));
      one.close();
      // The place frees when the server notices the closed connection: wait for it (bounded).
      const again = await until('a place freed by the closed stream', async () => {
        const sse = await SseClient.open(s.url, FEED(repo));
        return sse.status === 200 ? sse : null;
      });
      again.close();
      two.close();
    } finally {
      await s.stop();
    }
  });

  it('answers 429 with Retry-After beyond the per-client cap (--event-subscribers-per-client); other clients still get places', async () => {
    const server = await spawnServer(path.join(tempDir(), 'data'), ['--event-subscribers-per-client', '2', '--event-subscribers', '10']);
    const opened: SseClient[] = [];
    try {
      const repo = await register(server.url, 'per-client');
      for (const p of [FEED(repo), GLOBAL()]) opened.push(await SseClient.open(server.url, p));
      expect(opened.map((c) => c.status)).to.deep.equal([200, 200]);
      // This address holds its two places: a third stream, of either feed, is refused.
      for (const p of [FEED(repo), GLOBAL()]) {
        const over = await SseClient.open(server.url, p);
        expect(over.status).to.equal(429);
        expect(over.headers.get('retry-after')).to.equal('5');
        expect(JSON.parse(over.text).error).to.match(/2 event streams are open from this client address/);
      }
      // JSON pages are not streams.
      await page(server.url, FEED(repo));
      // Another address (127.0.0.2 reaches a loopback listener on Linux) is another client.
      const { port } = new URL(server.url);
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: FEED(repo), localAddress: '127.0.0.2', headers: { accept: 'text/event-stream' } }, (res) => {
          resolve(res.statusCode!);
          req.destroy();
        });
        req.on('error', reject);
      });
      expect(status).to.equal(200);
      // A closed stream gives its place back.
      opened.shift()!.close();
      opened.push(await until('a place of this client freed', async () => {
        const sse = await SseClient.open(server.url, FEED(repo));
        return sse.status === 200 ? sse : null;
      }));
    } finally {
      for (const c of opened) c.close();
      server.proc.kill('SIGTERM');
      await server.exited;
    }
  });

  it('gives back the place of a stream whose client left before the stream began', async () => {
    const s = await startTestServer(undefined, { events: { maxSubscribers: 3 } });
    const service = await s.ready;
    // The global feed waits for every repository to be open before it subscribes: hold that
    // wait, so each client below is gone (and the server has seen its socket close) before its
    // subscription is made.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const openAll = service.openAllInBackground;
    service.openAllInBackground = () => gate;
    const seen: net.Socket[] = [];
    const emit = http.Server.prototype.emit;
    http.Server.prototype.emit = function (this: http.Server, event: string, ...args: any[]) {
      if (event === 'request' && (args[0] as http.IncomingMessage).url === GLOBAL()) seen.push((args[0] as http.IncomingMessage).socket);
      return (emit as (...a: unknown[]) => boolean).call(this, event, ...args);
    } as typeof emit;
    try {
      const { port } = new URL(s.url);
      for (let i = 1; i <= 3; i++) {
        const sock = net.connect(Number(port), '127.0.0.1');
        sock.on('error', () => {});
        sock.write(`GET ${GLOBAL()} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`);
        await until('the server has the request', () => seen.length === i);
        sock.destroy();
        await until('the server saw the client go', () => seen[i - 1].destroyed);
      }
      release();
      // Their places are free: a stream of a client still here is served, and it is the only one.
      const sse = await until('a place for a client still here', async () => {
        const c = await SseClient.open(s.url, GLOBAL());
        if (c.status !== 200) c.close();
        return c.status === 200 ? c : null;
      });
      expect(service.feeds.subscribers).to.equal(1);
      sse.close();
    } finally {
      http.Server.prototype.emit = emit;
      service.openAllInBackground = openAll;
      release();
      await s.stop();
    }
  });

  it('answers 410 with the oldest kept position once retention dropped what a reader asks for', async () => {
    const dataDir = path.join(tempDir(), 'data');
    let s = await startTestServer(dataDir);
    const repo = await register(s.url, 'kept');
    const other = await register(s.url, 'kept-other');
    await makeLines(s.url, repo, 10, 'r');
    await makeLines(s.url, other, 2, 'o');
    const before = (await page(s.url, GLOBAL())).events;
    await s.stop();
    // Retention trims at open: the newest 4 of repository `repo` stay, `other` keeps its 2.
    s = await startTestServer(dataDir, { events: { retention: 4 } });
    try {
      const kept = await page(s.url, FEED(repo));
      expect(kept).to.include({ oldest_seq: 7, last_seq: 10, next_since: 10 });
      expect(kept.events.map((e: any) => e.seq)).to.deep.equal([7, 8, 9, 10]);
      expect((await page(s.url, FEED(repo, '?since=6'))).events).to.have.length(4);
      for (const since of ['0', '5']) {
        const gone = await api(s.url, 'GET', FEED(repo, `?since=${since}`));
        expect(gone.status).to.equal(410);
        expect(gone.json).to.deep.equal({ error: gone.json.error, oldest_seq: 7 });
        expect(gone.json.error).to.match(/no longer kept/);
      }
      const sse = await SseClient.open(s.url, FEED(repo), { 'last-event-id': '3' });
      expect(sse.status).to.equal(410);
      expect(JSON.parse(sse.text).oldest_seq).to.equal(7);

      // Global: a position before what repository `repo` dropped is 410, naming where to resume.
      const gone = await api(s.url, 'GET', GLOBAL(`?since=${before[0].id}`));
      expect(gone.status).to.equal(410);
      const seventh = before.find((e: any) => e.repository_index === repo && e.seq === 7);
      expect(gone.json).to.deep.equal({ error: gone.json.error, oldest_id: `${seventh.at_us}-${repo}-6` });
      const resumed = await page(s.url, GLOBAL(`?since=${gone.json.oldest_id}`));
      expect(resumed.events.map((e: any) => e.id)).to.deep.equal(before.slice(before.indexOf(seventh)).map((e: any) => e.id));
      // Without since the global page starts there too; from after the dropped events, all is well.
      expect((await page(s.url, GLOBAL())).events.map((e: any) => e.id)).to.deep.equal(resumed.events.map((e: any) => e.id));
      expect((await page(s.url, GLOBAL())).oldest_id).to.equal(gone.json.oldest_id);
      expect((await page(s.url, GLOBAL(`?since=${seventh.id}`))).events).to.have.length(resumed.events.length - 1);
      const stream = await SseClient.open(s.url, GLOBAL(), { 'last-event-id': before[1].id });
      expect(stream.status).to.equal(410);
      // A dropped event's id is 410; a position in the dropped range timed after the oldest kept
      // event names no event that ever was: 400.
      const third = before.find((e: any) => e.repository_index === repo && e.seq === 3 && !e.id.includes('-registry-'));
      expect((await api(s.url, 'GET', GLOBAL(`?since=${third.id}`))).status).to.equal(410);
      const never = await api(s.url, 'GET', GLOBAL(`?since=${seventh.at_us + 1}-${repo}-3`));
      expect(never.status, never.text).to.equal(400);
      expect(never.json.error).to.match(/names no event/);
    } finally {
      await s.stop();
    }
  });

  describe('a server in a child process', () => {
    it('resumes with Last-Event-ID after a restart and after kill -9: every event exactly once, in order', async function () {
      this.timeout(120_000);
      const dataDir = path.join(tempDir(), 'data');
      let server: ChildServer = await spawnServer(dataDir);
      const repo = await register(server.url, 'resume');
      const received: number[] = [];
      const take = (sse: SseClient, from: number) => {
        const seqs = sse.events.slice(from).map((e) => e.seq);
        received.push(...seqs);
        return seqs.length;
      };

      // 1. Stream while lines are made; kill -9 in the middle of it.
      let sse = await SseClient.open(server.url, FEED(repo, '?since=0'));
      const making = makeLines(server.url, repo, 400, 'k', 4).catch(() => {});
      await sse.untilEvents(20);
      server.proc.kill('SIGKILL');
      await server.exited;
      await making;
      await sse.untilEnded();
      take(sse, 0);

      // 2. Restart, resume from the last id received, make more, then stop the server gracefully
      // with the stream open: the stop does not wait for the stream, which ends.
      server = await spawnServer(dataDir);
      sse = await SseClient.open(server.url, FEED(repo), { 'last-event-id': String(received.at(-1)) });
      expect(sse.status).to.equal(200);
      await makeLines(server.url, repo, 30, 'after-kill', 4);
      const last = (await page(server.url, FEED(repo))).last_seq;
      await sse.untilEvents(last - received.length);
      server.proc.kill('SIGTERM');
      expect(await server.exited).to.equal(0);
      await sse.untilEnded();
      take(sse, 0);

      // 3. Restart again; resume; the stream continues with what is made now.
      server = await spawnServer(dataDir);
      try {
        sse = await SseClient.open(server.url, FEED(repo), { 'last-event-id': String(received.at(-1)) });
        await makeLines(server.url, repo, 5, 'after-stop');
        const final = (await page(server.url, FEED(repo))).last_seq;
        await sse.untilEvents(final - received.length);
        take(sse, 0);
        sse.close();
        expect(received).to.deep.equal(Array.from({ length: final }, (_, i) => i + 1));
      } finally {
        server.proc.kill('SIGTERM');
        await server.exited;
      }
    });

    it('drops a subscriber that stops reading, without the server growing', async function () {
      this.timeout(120_000);
      const dataDir = path.join(tempDir(), 'data');
      // V8's young generation sizes itself to the machine (on Node 24, up to 3 × 32 MiB of
      // semi-spaces on this 24 GiB machine): pinned to 16 MiB, the peak below measures what the
      // server keeps, not how much garbage V8 lets pile up between scavenges.
      const server = await spawnServer(dataDir, ['--event-subscribers', '1', '--log-level', 'warn'], true, { NODE_OPTIONS: '--max-semi-space-size=16' });
      try {
        const repo = await register(server.url, 'stall');
        const pid = server.proc.pid!;
        await makeLines(server.url, repo, 300, 'warm', 16, 250);
        writeFileSync(`/proc/${pid}/clear_refs`, '5');
        const idle = memoryKiB(pid).rss;
        // A raw connection that asks for the stream and never reads a byte of it.
        const stalled = net.connect(Number(new URL(server.url).port), '127.0.0.1');
        await new Promise<void>((resolve) => stalled.once('connect', () => resolve()));
        stalled.write(`GET ${FEED(repo)} HTTP/1.1\r\nHost: ${new URL(server.url).host}\r\nAccept: text/event-stream\r\n\r\n`);
        // It reads the answer's head (so it is subscribed), then nothing more.
        const head = await new Promise<string>((resolve) => stalled.once('data', (d) => resolve(String(d))));
        stalled.pause();
        expect(head).to.match(/^HTTP\/1\.1 200/);
        const place = async () => {
          const sse = await SseClient.open(server.url, FEED(repo));
          sse.close();
          return sse.status;
        };
        // Its subscription holds the one place.
        let status = await place();
        expect(status).to.equal(503);
        // Events until the server gives up on it: the socket buffers fill first (a few MiB on
        // loopback), then its unsent queue, whose bound (1 MiB) drops it and frees the place.
        let made = 0;
        while (status === 503 && made < 40_000) {
          await makeLines(server.url, repo, 1000, `stall-${made}`, 48, 250);
          made += 1000;
          status = await place();
        }
        expect(status, `still subscribed after ${made} events`).to.equal(200);
        const peak = memoryKiB(pid).hwm;
        if (process.env.CAIRN_TEST_VERBOSE) console.log(`      stalled subscriber dropped after ${made} events; VmHWM ${((peak - idle) / 1024).toFixed(0)} MiB above idle`);
        // The warning is logged as the place frees, but the server writes its log in batches
        // (up to 200 ms later): wait for the line rather than look once.
        await untilOutput(server, /event subscriber disconnected/);
        // Reading what had reached its socket ends before the newest event: it was cut off.
        const last = (await page(server.url, FEED(repo))).last_seq;
        let text = '';
        stalled.setEncoding('utf8');
        stalled.on('data', (d) => { text += d; });
        stalled.resume();
        await new Promise<void>((resolve) => stalled.once('close', () => resolve()));
        const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
        expect(ids.length).to.be.above(0);
        expect(ids.at(-1)).to.be.below(last);
        // What it was not sent stayed in the log, not in the server's memory.
        expect((peak - idle) / 1024).to.be.below(64);
      } finally {
        server.proc.kill('SIGTERM');
        await server.exited;
      }
    });
  });
});

function memoryKiB(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)![1]);
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}
