// A loopback proxy in front of a test server that can go silent on purpose: for the requests a
// rule picks it answers nothing at all, or sends the headers and the first N body bytes and
// then holds the connection open. Tests use it to make a transfer stall for as long as they like.
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * false: pass through; 'silent': never answer; a number: that many body bytes, then hold;
 * `{ lastChunkDelayMs }`: everything, but the body's last chunk only after that delay.
 */
export type StallRule = (method: string, url: string) => false | 'silent' | number | { lastChunkDelayMs: number };

export interface StallProxy {
  url: string;
  /** "METHOD URL" of every request seen, in order. */
  seen: string[];
  /** Resolves once a request matching `pattern` has been held. */
  held(pattern: RegExp): Promise<string>;
  close(): Promise<void>;
}

export async function stallProxy(target: string, rule: StallRule): Promise<StallProxy> {
  const seen: string[] = [];
  const heldList: string[] = [];
  const waiters: { pattern: RegExp; resolve: (s: string) => void }[] = [];
  const sockets = new Set<Socket>();
  const hold = (what: string) => {
    heldList.push(what);
    for (const w of waiters.splice(0)) {
      if (w.pattern.test(what)) w.resolve(what);
      else waiters.push(w);
    }
  };
  const base = new URL(target);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const what = `${req.method} ${req.url}`;
    seen.push(what);
    const decision = rule(req.method ?? 'GET', req.url ?? '/');
    if (decision === 'silent') {
      req.resume();
      hold(what);
      return;
    }
    const upstream = request({ host: base.hostname, port: base.port, method: req.method, path: req.url, headers: { ...req.headers, host: base.host } }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      if (decision === false) {
        up.pipe(res);
        return;
      }
      if (typeof decision === 'object') {
        let last: Buffer | null = null;
        up.on('data', (chunk: Buffer) => {
          if (last) res.write(last);
          last = chunk;
        });
        up.on('end', () => setTimeout(() => res.end(last ?? undefined), decision.lastChunkDelayMs));
        return;
      }
      let left = decision;
      up.on('data', (chunk: Buffer) => {
        if (left <= 0) return;
        res.write(chunk.subarray(0, left));
        left -= chunk.length;
        if (left <= 0) hold(what);
      });
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    held: (pattern) => {
      const already = heldList.find((w) => pattern.test(w));
      return already ? Promise.resolve(already) : new Promise((resolve) => waiters.push({ pattern, resolve }));
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
