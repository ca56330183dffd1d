// Typed HTTP access to a cairn server for the CLI and the runner: JSON calls, raw uploads and
// streamed downloads over fetch (keep-alive), with retries when the server answers 503.
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';

export class ServerError extends Error {
  constructor(readonly status: number, readonly body: { error?: string; code?: string } | null, what: string) {
    super(`${what}: HTTP ${status}${body?.error ? `: ${body.error}` : ''}`);
  }
}

export class CairnClient {
  readonly base: string;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 8 });

  constructor(server: string, readonly retries = 20) {
    this.base = server.replace(/\/+$/, '');
  }

  repoPath(repo: number, rest: string): string {
    return `/v1/native/repository-authorities/${repo}${rest}`;
  }

  private async fetchWithRetry(path: string, init: RequestInit): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(this.base + path, init);
      } catch (err) {
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        throw new Error(`cannot reach ${this.base}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
      }
      if (res.status !== 503 || attempt >= this.retries) return res;
      await res.arrayBuffer().catch(() => undefined);
      const wait = Number(res.headers.get('retry-after') ?? '1');
      await sleep(Math.min(Number.isFinite(wait) ? wait : 1, 5) * 1000);
    }
  }

  async json<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const init: RequestInit = { method, headers: { accept: 'application/json' } };
    if (body !== undefined) {
      init.headers = { ...init.headers, 'content-type': 'application/json' };
      init.body = JSON.stringify(body);
    }
    const res = await this.fetchWithRetry(path, init);
    const text = await res.text();
    let parsed: any = null;
    try { parsed = text ? JSON.parse(text) : null; } catch { parsed = null; }
    if (!res.ok) throw new ServerError(res.status, parsed, `${method} ${path}`);
    return parsed as T;
  }

  /** Like `json` but resolves to null on 404. */
  async jsonOrNull<T = any>(method: string, path: string, body?: unknown): Promise<T | null> {
    try {
      return await this.json<T>(method, path, body);
    } catch (err) {
      if (err instanceof ServerError && err.status === 404) return null;
      throw err;
    }
  }

  async putRaw<T = any>(path: string, mediaType: string, bytes: Buffer): Promise<T> {
    const res = await this.fetchWithRetry(path, { method: 'PUT', headers: { 'content-type': mediaType, accept: 'application/json' }, body: bytes as unknown as BodyInit });
    const text = await res.text();
    let parsed: any = null;
    try { parsed = text ? JSON.parse(text) : null; } catch { parsed = null; }
    if (!res.ok) throw new ServerError(res.status, parsed, `PUT ${path}`);
    return parsed as T;
  }

  /** Upload a file's bytes as a raw body, streamed (never read whole into memory). */
  async putFile<T = any>(path: string, mediaType: string, file: string): Promise<T> {
    const { size } = await stat(file);
    const body = Readable.toWeb(createReadStream(file)) as unknown as BodyInit;
    const res = await this.fetchWithRetry(path, { method: 'PUT', headers: { 'content-type': mediaType, 'content-length': String(size), accept: 'application/json' }, body, duplex: 'half' } as RequestInit);
    const text = await res.text();
    let parsed: any = null;
    try { parsed = text ? JSON.parse(text) : null; } catch { parsed = null; }
    if (!res.ok) throw new ServerError(res.status, parsed, `PUT ${path}`);
    return parsed as T;
  }

  /**
   * Stream a raw GET to `file`; returns the byte count. Uses node:http directly: for large
   * bodies it is several times faster than fetch's web-stream bridge.
   */
  async download(urlPath: string, file: string): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        const url = new URL(this.base + urlPath);
        const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method: 'GET', agent: url.protocol === 'https:' ? undefined : this.agent }, resolve);
        req.on('error', reject);
        req.end();
      });
      if (res.statusCode === 200) {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => { bytes += chunk.length; });
        await pipeline(res, createWriteStream(file));
        return bytes;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      if (res.statusCode === 503 && attempt < this.retries) {
        await sleep(1000);
        continue;
      }
      let parsed: any = null;
      try { parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { parsed = null; }
      throw new ServerError(res.statusCode ?? 0, parsed, `GET ${urlPath}`);
    }
  }

}
