// A client of cairn's event feeds (docs/api.md "Events"): one Server-Sent Events stream over
// node:http, followed until the caller stops it. It resumes after a disconnect with
// Last-Event-ID (the id of the last event it delivered) after a backoff, treats comments (the
// server's `: keepalive` heartbeats) as proof of life only, and reconnects when neither an
// event nor a heartbeat arrived for `livenessMs`. A 503 waits Retry-After and tries again; a
// 410 (the resume point is no longer kept) ends the stream with FeedGoneError, because only
// the caller knows whether to restart from the oldest kept event or to stop.
//
// The SSE text itself is parsed by eventsource-parser (the WHATWG rules for CR/LF/CRLF line
// ends, multi-line data, `retry:`, comments and a bounded buffer); the transport is node:http as
// in ./http.ts, which keeps undici out of a short command's start-up.
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { FeedEvent } from '../domain/events.js';
import { normalizeServerUrl, standingHeaders, unreachable } from './http.js';

const require = createRequire(import.meta.url);
const httpsRequest = (url: URL, options: import('node:https').RequestOptions, callback: (res: IncomingMessage) => void) =>
  (require('node:https') as typeof import('node:https')).request(url, options, callback);

/** One event as both feeds send it (the `data:` line of an SSE event, parsed). */
export type { FeedEvent };

/** The global feed (every repository and the registry). */
export const GLOBAL_FEED = '/v1/native/events';
/** One repository's feed. */
export const repositoryFeed = (repo: number): string => `/v1/native/repository-authorities/${repo}/events`;

/** 410: the events after the resume point are no longer all kept. `body` is the server's answer (`oldest_seq`, ...). */
export class FeedGoneError extends Error {
  constructor(readonly resumeId: string | undefined, readonly body: Record<string, unknown>) {
    super(typeof body.error === 'string' ? body.error : 'the resume point is no longer kept');
  }
}

/** The server has no such feed: 404 (no route, or no such repository), 405 or 501. */
export class FeedUnavailableError extends Error {
  constructor(readonly status: number, readonly body: Record<string, unknown> | null) {
    super(`no event feed here: HTTP ${status}${typeof body?.error === 'string' ? `: ${body.error}` : ''}`);
  }
}

/** Any other 4xx: the request itself is wrong (a bad `types` or `since`). */
export class FeedRefusedError extends Error {
  constructor(readonly status: number, readonly body: Record<string, unknown> | null) {
    super(typeof body?.error === 'string' ? body.error : `HTTP ${status}`);
  }
}

/** The first connection failed and the caller asked not to retry it (`failBeforeOpen`). */
export class FeedConnectError extends Error {}

export type FeedStatus =
  | { state: 'live' }
  | { state: 'down'; reason: string; retryInMs: number };

export interface FeedOptions {
  server: string;
  /** GLOBAL_FEED or repositoryFeed(n). */
  path: string;
  /** Exact types or `prefix.*`; all when absent. */
  types?: string[];
  /** Start after this id (only for the first connection; later ones send Last-Event-ID). Absent: live only. */
  since?: string;
  /**
   * Called for each event, in order. The stream is not read while a returned promise is
   * pending (backpressure: a slow consumer slows the server's sending, it does not buffer here).
   */
  onEvent(event: FeedEvent): void | Promise<void>;
  /** 'live' when a stream is open; 'down' with the reason and the wait before the next try. */
  onStatus?(status: FeedStatus): void;
  /** Aborting ends the stream; followFeed then resolves. */
  signal?: AbortSignal;
  /** No event and no heartbeat for this long: the connection is taken as dead (default 45 s). */
  livenessMs?: number;
  /** Backoff after a failure: the server's `retry:` (default 2 s) doubling up to this (default 30 s). */
  maxRetryMs?: number;
  /** Reject with FeedConnectError when the very first connection fails, instead of retrying. */
  failBeforeOpen?: boolean;
}

/** An SSE stream must not make this process's memory grow: the longest unfinished event the parser keeps. */
const MAX_EVENT_CHARS = 1 << 20;
/** Error bodies are small JSON; read at most this much of one. */
const MAX_ERROR_BODY = 64 * 1024;

async function readBody(res: IncomingMessage): Promise<Record<string, unknown> | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res) {
    size += (chunk as Buffer).length;
    if (size > MAX_ERROR_BODY) { res.destroy(); break; }
    chunks.push(chunk as Buffer);
  }
  try {
    const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed as Record<string, unknown> : null;
  } catch {
    return null;
  }
}

/** Retry-After as delta-seconds or an HTTP date; `fallback` ms when absent or unreadable. */
export function retryAfterMs(value: string | undefined, fallback: number, now = Date.now()): number {
  if (value === undefined) return fallback;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isFinite(at) ? Math.max(0, at - now) : fallback;
}

function toEvent(message: EventSourceMessage): FeedEvent | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message.data);
  } catch {
    return null;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
  const e = parsed as Partial<FeedEvent>;
  if (typeof e.type !== 'string') return null;
  const id = typeof e.id === 'string' ? e.id : message.id;
  if (typeof id !== 'string' || id === '') return null;
  return { ...e, id, data: e.data && typeof e.data === 'object' ? e.data : {} } as FeedEvent;
}

const sleep = (ms: number, signal?: AbortSignal) => new Promise<void>((resolve) => {
  if (signal?.aborted) return resolve();
  const done = () => { clearTimeout(t); signal?.removeEventListener('abort', done); resolve(); };
  const t = setTimeout(done, ms);
  signal?.addEventListener('abort', done, { once: true });
});

type Attempt =
  | { kind: 'ended'; reason: string; opened: boolean }
  | { kind: 'unavailable'; reason: string; waitMs: number };

/**
 * Follow a feed until `signal` aborts (resolves) or the server answers 410, 404/405/501 or
 * another 4xx (rejects with FeedGoneError, FeedUnavailableError, FeedRefusedError). Connection
 * failures, 5xx answers, dropped streams and silent connections are retried for ever.
 */
export async function followFeed(o: FeedOptions): Promise<void> {
  const base = normalizeServerUrl(o.server);
  const livenessMs = o.livenessMs ?? 45_000;
  const maxRetryMs = o.maxRetryMs ?? 30_000;
  let serverRetryMs = 2000;
  let lastEventId: string | undefined;
  let failures = 0;
  let everOpened = false;

  const url = () => {
    const q = new URLSearchParams();
    if (o.types?.length) q.set('types', o.types.join(','));
    if (lastEventId === undefined && o.since !== undefined) q.set('since', o.since);
    const qs = q.toString();
    return new URL(`${base}${o.path}${qs ? `?${qs}` : ''}`);
  };

  const attempt = () => new Promise<Attempt>((resolve, reject) => {
    const target = url();
    const headers: Record<string, string> = { ...standingHeaders(o.server), accept: 'text/event-stream', 'cache-control': 'no-cache' };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    let req: ClientRequest;
    let settled = false;
    let opened = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (result: Attempt | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    // Armed while waiting for the server, disarmed while the consumer holds an event.
    let silentReason = 'no answer';
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        req.destroy();
        finish({ kind: 'ended', reason: `${silentReason} for ${Math.round(livenessMs / 1000)} s`, opened });
      }, livenessMs);
    };
    const onAbort = () => {
      req.destroy();
      finish({ kind: 'ended', reason: 'stopped', opened });
    };
    req = (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, { method: 'GET', headers }, (res) => {
      void (async () => {
        const status = res.statusCode ?? 0;
        const type = String(res.headers['content-type'] ?? '');
        if (status === 200 && type.startsWith('text/event-stream')) {
          opened = true;
          everOpened = true;
          failures = 0;
          o.onStatus?.({ state: 'live' });
          silentReason = 'no event or heartbeat';
          const pending: EventSourceMessage[] = [];
          let broken: string | null = null;
          const parser = createParser({
            onEvent: (m) => pending.push(m),
            onRetry: (ms) => { if (ms > 0) serverRetryMs = ms; },
            onError: (err) => { if (err.type === 'max-buffer-size-exceeded') broken = 'an event larger than the client accepts'; },
            maxBufferSize: MAX_EVENT_CHARS,
          });
          res.setEncoding('utf8');
          arm();
          try {
            for await (const chunk of res) {
              parser.feed(chunk as string);
              if (broken) { res.destroy(); finish({ kind: 'ended', reason: broken, opened }); return; }
              if (pending.length) {
                clearTimeout(timer);
                for (const m of pending.splice(0)) {
                  if (settled) return;
                  if (m.id !== undefined && m.id !== '') lastEventId = m.id;
                  const event = toEvent(m);
                  if (event) await o.onEvent(event);
                }
              }
              if (settled) return;
              arm();
            }
            finish({ kind: 'ended', reason: 'the server closed the stream', opened });
          } catch (err) {
            finish({ kind: 'ended', reason: `the connection broke (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, opened });
          }
          return;
        }
        const body = await readBody(res).catch(() => null);
        if (status === 410) return finish(new FeedGoneError(lastEventId ?? o.since, body ?? {}));
        if (status === 404 || status === 405 || status === 501) return finish(new FeedUnavailableError(status, body));
        if (status === 200) return finish(new FeedUnavailableError(status, { error: `the server answered ${type || 'no content type'}, not an event stream` }));
        if (status === 503) {
          const waitMs = Math.min(retryAfterMs(res.headers['retry-after'] as string | undefined, 5000), 300_000);
          return finish({ kind: 'unavailable', reason: `the server is busy (HTTP 503${typeof body?.error === 'string' ? `: ${body.error}` : ''})`, waitMs });
        }
        if (status >= 400 && status < 500 && status !== 408 && status !== 429) return finish(new FeedRefusedError(status, body));
        if (status === 429) {
          return finish({ kind: 'unavailable', reason: 'too many requests (HTTP 429)', waitMs: Math.min(retryAfterMs(res.headers['retry-after'] as string | undefined, 5000), 300_000) });
        }
        finish({ kind: 'ended', reason: `HTTP ${status}${typeof body?.error === 'string' ? `: ${body.error}` : ''}`, opened: false });
      })();
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      finish({ kind: 'ended', reason: unreachable(base, err).message, opened });
    });
    o.signal?.addEventListener('abort', onAbort, { once: true });
    req.end();
    arm();
  });

  while (!o.signal?.aborted) {
    const result = await attempt();
    if (o.signal?.aborted) return;
    if (result.kind === 'unavailable') {
      o.onStatus?.({ state: 'down', reason: result.reason, retryInMs: result.waitMs });
      await sleep(result.waitMs, o.signal);
      continue;
    }
    if (!everOpened && o.failBeforeOpen) throw new FeedConnectError(result.reason);
    // A stream that opened and then ended is retried after the server's interval; failures in a row back off.
    if (!result.opened) failures++;
    const backoff = Math.min(maxRetryMs, serverRetryMs * 2 ** Math.min(Math.max(failures - 1, 0), 16));
    const waitMs = result.opened ? serverRetryMs : Math.round(backoff * (0.8 + Math.random() * 0.4));
    o.onStatus?.({ state: 'down', reason: result.reason, retryInMs: waitMs });
    await sleep(waitMs, o.signal);
  }
}
