// The listener and its two phases (spec: "Startup behavior"). The socket accepts at once and a
// plain startup responder answers 503 until `activate` swaps in the ready Koa app: a single
// assignment, so every request is answered wholly by one phase or the other.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

const STARTING_ERROR = 'service is starting: repository authorities are being opened';

export function startupResponder(req: IncomingMessage, res: ServerResponse): void {
  const isHealth = (req.url ?? '').split('?')[0] === '/healthz';
  const body = isHealth ? { ready: false, status: 'starting' } : { error: STARTING_ERROR, ready: false, status: 'starting' };
  const text = JSON.stringify(body);
  res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'retry-after': '1' });
  res.end(text);
  req.resume();
}

export class PhasedServer {
  readonly http: http.Server;
  private listener: RequestListener = startupResponder;
  private ready = false;

  constructor() {
    this.http = http.createServer((req, res) => this.listener(req, res));
    // A 2 GiB upload at 1 MB/s takes ~35 min: allow an hour per request. Finer request limits
    // belong to the trusted ingress in front (spec: "Authentication").
    this.http.requestTimeout = 3600_000;
    this.http.headersTimeout = 60_000;
  }

  listen(host: string, port: number): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(port, host, () => {
        this.http.off('error', reject);
        resolve(this.http.address() as AddressInfo);
      });
    });
  }

  /** Replace the startup responder with the ready application in one step. */
  activate(listener: RequestListener): void {
    this.listener = listener;
    this.ready = true;
  }

  get isReady(): boolean {
    return this.ready;
  }

  /** Stop accepting, let in-flight requests finish, then resolve. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.http.close(() => resolve());
      this.http.closeIdleConnections();
    });
  }
}
