// Live updates (docs/ui.md "Live updates"): a page subscribes to its repository's event feed
// with the browser's EventSource and reloads its data, debounced, when a relevant event
// arrives. The feed is a hint: the page always reloads from the /v1 interface, never patches
// itself from an event. When the feed cannot be had (an older server, a proxy that does not
// stream, too many subscribers) the page simply stays as it is, as it did before live updates,
// and tries again a minute later. The "live" mark in the top bar shows while a stream is open.
import { html, useEffect, useRef, useState } from './vendor/preact.js';
import { authHeaders, get, query, repoPath, token, tokenRefused } from './api.js';

/** Every event type of a repository's feed (lib/domain/events.ts EVENT_TYPES; the UI test compares them). */
export const EVENT_TYPE_NAMES = [
  'line.created', 'line.moved', 'line.archived',
  'task.created', 'task.closed',
  'change.created', 'change.status_changed', 'change.closed', 'change.landed', 'change.updated',
  'patchset.created', 'patchset.selected', 'patchset.base_stale',
  'review.recorded', 'review.requested', 'review.updated',
  'comment.created', 'thread.resolved', 'thread.reopened',
  'attestation.recorded', 'attestation.revoked',
  'policy.decided',
  'job.queued', 'job.claimed', 'job.completed', 'job.failed', 'job.requeued', 'job.lease_expired',
  'land.landed', 'land.rejected', 'land.failed', 'land.bypassed',
  'rules.changed',
  'plan.created', 'plan.revised', 'plan.status_changed',
  'promotion.prepared',
  'queue.entry_added', 'queue.entry_testing', 'queue.entry_retried', 'queue.entry_requeued', 'queue.entry_stalled',
  'queue.entry_landed', 'queue.entry_ejected', 'queue.entry_removed',
  'webhook.disabled',
  'git_mirror.diverged',
];

/** `job.*` → every job type; an exact name stays as it is. */
export function expandTypes(patterns) {
  const out = new Set();
  for (const p of patterns) {
    if (p.endsWith('.*')) for (const t of EVENT_TYPE_NAMES) { if (t.startsWith(p.slice(0, -1))) out.add(t); }
    else out.add(p);
  }
  return [...out];
}

/** Wait this long after an event for more before reloading, and reload at most once per MIN_INTERVAL. */
const DEBOUNCE_MS = 250;
const MIN_INTERVAL_MS = 1000;
/** After the feed failed for good (an HTTP error, not a dropped connection): try again this much later. */
const RETRY_MS = 60_000;

// ---------------------------------------------------------------- the indicator

let openStreams = 0;
const LIVE_CHANGED = 'cairn:live';

function countStream(delta) {
  openStreams += delta;
  dispatchEvent(new Event(LIVE_CHANGED));
}

/** "● live" in the top bar while this page follows an event feed; nothing otherwise. */
export function LiveIndicator() {
  const [live, setLive] = useState(openStreams > 0);
  useEffect(() => {
    const f = () => setLive(openStreams > 0);
    addEventListener(LIVE_CHANGED, f);
    return () => removeEventListener(LIVE_CHANGED, f);
  }, []);
  if (!live) return null;
  return html`<span class="live" role="status" title="This page updates itself as events arrive">live</span>`;
}

// ---------------------------------------------------------------- a feed with a token

const RECONNECT_MS = 3000;

/**
 * What the hook needs of an EventSource, read with fetch so the request can carry the token in
 * its Authorization header (an EventSource sends no header of ours, and the token never goes in
 * a URL). Reconnects after a dropped connection with Last-Event-ID, as the browser's own does;
 * an HTTP error closes it for good (readyState CLOSED), as the browser's does.
 */
class TokenEventSource {
  constructor(url) {
    this.readyState = 0;
    this.onopen = null;
    this.onerror = null;
    this.listeners = new Map();
    this.lastId = null;
    this.abort = new AbortController();
    this.run(url);
  }

  addEventListener(name, fn) {
    if (!this.listeners.has(name)) this.listeners.set(name, []);
    this.listeners.get(name).push(fn);
  }

  close() {
    this.readyState = 2;
    this.abort.abort();
  }

  async run(url) {
    while (this.readyState !== 2) {
      let res;
      const sent = token();
      try {
        res = await fetch(url, {
          headers: { accept: 'text/event-stream', ...authHeaders(sent), ...(this.lastId !== null ? { 'last-event-id': this.lastId } : {}) },
          credentials: 'same-origin',
          signal: this.abort.signal,
        });
      } catch {
        if (this.readyState === 2) return;
        this.readyState = 0;
        this.onerror?.();
        await new Promise((r) => setTimeout(r, RECONNECT_MS));
        continue;
      }
      if (!res.ok || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream') || !res.body) {
        res.body?.cancel().catch(() => undefined);
        // the server ends a stream whose token is revoked: the reconnection's 401 says so
        if (res.status === 401) tokenRefused(sent);
        this.readyState = 2;
        this.onerror?.();
        return;
      }
      this.readyState = 1;
      this.onopen?.();
      try {
        await this.read(res.body);
      } catch {
        /* dropped: reconnect below */
      }
      if (this.readyState === 2) return;
      this.readyState = 0;
      this.onerror?.();
      await new Promise((r) => setTimeout(r, RECONNECT_MS));
    }
  }

  /** The text/event-stream format: fields up to a blank line make one event. */
  async read(body) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let event = { type: 'message', data: [], id: null };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = lines.pop();
      for (const line of lines) {
        if (line === '') {
          if (event.id !== null) this.lastId = event.id;
          if (event.data.length) for (const fn of this.listeners.get(event.type) ?? []) fn({ data: event.data.join('\n'), lastEventId: this.lastId });
          event = { type: 'message', data: [], id: null };
          continue;
        }
        if (line.startsWith(':')) continue;
        const i = line.indexOf(':');
        const field = i < 0 ? line : line.slice(0, i);
        const v = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
        if (field === 'event') event.type = v;
        else if (field === 'data') event.data.push(v);
        else if (field === 'id') event.id = v;
      }
    }
  }
}

// ---------------------------------------------------------------- the hook

/**
 * Follow repository `repo`'s feed for `types` (exact names or `prefix.*`) while mounted; call
 * `refresh()` (debounced) after events for which `relevant(event)` holds. `relevant` and
 * `refresh` may change on every render; the subscription changes only with repo and types.
 */
export function useLiveRefresh(repo, types, relevant, refresh) {
  const latest = useRef({ relevant, refresh });
  latest.current = { relevant, refresh };
  const typeKey = types.join(',');
  useEffect(() => {
    if (typeof EventSource !== 'function') return undefined;
    let closed = false;
    let source = null;
    let counted = false;
    let timer = null;
    let retry = null;
    let lastRun = 0;
    const names = expandTypes(types);

    const setCounted = (on) => {
      if (on !== counted) {
        counted = on;
        countStream(on ? 1 : -1);
      }
    };
    const schedule = () => {
      if (timer !== null || closed) return;
      const wait = Math.max(DEBOUNCE_MS, lastRun + MIN_INTERVAL_MS - Date.now());
      timer = setTimeout(() => {
        timer = null;
        lastRun = Date.now();
        if (!closed) latest.current.refresh();
      }, wait);
    };
    const onEvent = (message) => {
      let event;
      try {
        event = JSON.parse(message.data);
      } catch {
        return;
      }
      if (latest.current.relevant(event)) schedule();
    };
    const stop = () => {
      if (source) {
        source.close();
        source = null;
      }
      setCounted(false);
    };
    const later = () => {
      stop();
      if (!closed) retry = setTimeout(() => start(true), RETRY_MS);
    };
    const start = async (again) => {
      retry = null;
      // Where the feed stands now: the stream starts there (`since`), so an event committed
      // while the page's data was being read is not missed, and the EventSource's own
      // reconnections resume from it (Last-Event-ID wins once an event has arrived).
      let since;
      try {
        since = (await get(repoPath(repo, `/events${query({ limit: 1 })}`))).last_seq;
      } catch {
        later();
        return;
      }
      if (closed) return;
      // After a failure, events may have been missed meanwhile: reload once.
      if (again) schedule();
      const url = repoPath(repo, `/events${query({ types: types.join(','), since })}`);
      source = token() ? new TokenEventSource(url) : new EventSource(url);
      source.onopen = () => setCounted(true);
      source.onerror = () => {
        // CLOSED: an HTTP error or a wrong content type, given up by the browser. Otherwise
        // the browser is reconnecting by itself; the mark goes until it is back.
        if (!source || source.readyState === 2) later(); // EventSource.CLOSED
        else setCounted(false);
      };
      for (const name of names) source.addEventListener(name, onEvent);
    };

    start(false);
    return () => {
      closed = true;
      clearTimeout(timer);
      clearTimeout(retry);
      stop();
    };
  }, [repo, typeKey]);
}
