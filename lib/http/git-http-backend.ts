// git's smart HTTP protocol (v0 and v2) over one bare repository, read-only (docs/git.md
// "Clone and fetch"). Fetches run Debian's `git http-backend` as a CGI: the environment is built
// here from nothing (never the server's own), PATH_INFO is built from the repository directory
// the authority names (never from the request path), the request body streams into the child and
// its output back to the client with backpressure, and the child's whole process group is killed
// when the client goes away. A fetch's request is read on its way in (UploadRequestGuard) and
// refused unless every object it names is one the line serves. A push is never given to `git http-backend`: `receiveForReview` hands
// its body to the authority's receiver (lib/authority/git-push.ts, which runs `git receive-pack`
// on a quarantine) and answers with a report it builds itself.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform, type Readable, type TransformCallback, type Writable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Context } from 'koa';
import { Invalid, RequestTimeout, TooLarge } from '../domain/errors.js';
import type { GitShadow } from '../authority/git-shadow.js';
import { firstUnserved, MAX_NAMED_OBJECTS } from '../authority/git-served.js';
import type { Log } from '../authority/logger.js';
import type { Reply } from './route-types.js';
import { bodyGuard, type GitPlaces } from './git-places.js';

export const MEDIA_UPLOAD_PACK_REQUEST = 'application/x-git-upload-pack-request';
export const MEDIA_RECEIVE_PACK_REQUEST = 'application/x-git-receive-pack-request';
export const MEDIA_UPLOAD_PACK_ADVERTISEMENT = 'application/x-git-upload-pack-advertisement';
export const MEDIA_RECEIVE_PACK_ADVERTISEMENT = 'application/x-git-receive-pack-advertisement';
export const MEDIA_UPLOAD_PACK_RESULT = 'application/x-git-upload-pack-result';
export const MEDIA_RECEIVE_PACK_RESULT = 'application/x-git-receive-pack-result';

export type GitService = 'git-upload-pack' | 'git-receive-pack';

export interface ServeGitOptions {
  shadow: GitShadow;
  /** `advertise`: GET info/refs?service=…; `rpc`: POST …/<service>. */
  request: 'advertise' | 'rpc';
  service: GitService;
  /** Bytes of request body accepted (as sent, before any gzip is undone). */
  limit: number;
  log: Log;
  /** Where the request's place comes from (./git-places.ts), and whose place it is. */
  serving: GitServing;
}

/** The places of git serving and the request's claim on them: its client (identity or address) and repository. */
export interface GitServing {
  places: GitPlaces;
  client: string;
  repository: string;
}

/** The largest CGI header block read from `git http-backend` before its body. */
const MAX_CGI_HEADER = 16 * 1024;
/** Decompressed request bytes `git http-backend` buffers (its GIT_HTTP_MAX_REQUEST_BUFFER). */
const MAX_REQUEST_BUFFER = 10 * 1024 * 1024;
/** Response headers of the CGI passed on; anything else it says is dropped. */
const CGI_HEADERS_KEPT = new Set(['cache-control', 'expires', 'pragma']);

const gitBinary = (): string => process.env.CAIRN_GIT || 'git';

/**
 * The `service` query parameter of GET info/refs. Smart HTTP only: without it a client asks for
 * the dumb protocol (files of the repository), which is not served.
 */
export function serviceOf(value: unknown): GitService {
  if (value === 'git-upload-pack' || value === 'git-receive-pack') return value;
  if (value === undefined) throw new Invalid('info/refs takes ?service=git-upload-pack: only git\'s smart HTTP protocol is served');
  throw new Invalid('service must be git-upload-pack (or git-receive-pack, which is refused)');
}

/**
 * Answer one git request. Upload-pack (clone, fetch, ls-remote) runs `git http-backend`; a
 * receive-pack advertisement does too (so the client sends only what it would push); the push
 * itself is `receiveForReview`'s.
 */
export async function serveGit(ctx: Context, options: ServeGitOptions): Promise<Reply> {
  if (options.service === 'git-receive-pack' && options.request === 'rpc') throw new Error('a push is received by receiveForReview, never by git http-backend');
  // An empty request is no git client's: refused before git runs (git would fail after the 200 was sent).
  if (options.request === 'rpc' && ctx.get('content-length') === '0') throw new Invalid('a git-upload-pack request carries the client\'s wants: an empty body is not one (fetch with git)');
  return runHttpBackend(ctx, options);
}

/** The CGI environment: nothing of the server's own environment but what git needs to run. */
export function cgiEnvironment(ctx: Context, options: ServeGitOptions, headTarget: string | null): Record<string, string> {
  const { repoDir, ref } = options.shadow;
  const name = path.basename(repoDir);
  // The directory comes from the authority, never from the request; still, it must be one plain name under its parent.
  if (!path.isAbsolute(repoDir) || !/^[A-Za-z0-9._+-]+$/.test(name) || name === '.' || name === '..') {
    throw new Error('git shadow directory must be an absolute path ending in a plain name');
  }
  const config: [string, string][] = [
    // Only the smart protocol, and only what the advertised refs reach.
    ['http.getanyfile', 'false'],
    ['http.uploadpack', 'true'],
    // The advertisement of a push (answered so the client sends only its new objects; the push itself never reaches git).
    ['http.receivepack', options.service === 'git-receive-pack' ? 'true' : 'false'],
    // A push may say `-o noselect` (docs/git.md "Push for review"): git sends push options only when this is advertised.
    ['receive.advertisePushOptions', options.service === 'git-receive-pack' ? 'true' : 'false'],
    ['uploadpack.allowTipSHA1InWant', 'false'],
    ['uploadpack.allowReachableSHA1InWant', 'false'],
    ['uploadpack.allowAnySHA1InWant', 'false'],
    ['uploadpack.allowRefInWant', 'false'],
    ['uploadpack.allowFilter', 'false'],
    // v2's object-info answers the size of any object by id (off by default in git; off here whatever its default).
    ['transfer.advertiseObjectInfo', 'false'],
  ];
  if (ref !== undefined) {
    if (!/^refs\/heads\/[^\0-\x20\x7f~^:?*[\\]+$/.test(ref)) throw new Error('git shadow ref must be a refs/heads/ name');
    // Every ref but this line's is hidden from the advertisement (later entries win), and so is
    // HEAD when it names another line: a client would follow it to a ref it cannot see.
    config.push(['transfer.hideRefs', 'refs/'], ['transfer.hideRefs', `!${ref}`]);
    // Fetched too (patchsets' refs); not in a push's advertisement, whose objects a push must
    // send unless the line reaches them (lib/authority/git-push.ts checks that).
    for (const prefix of options.service === 'git-upload-pack' ? options.shadow.alsoServed ?? [] : []) {
      if (!/^refs\/[a-z]+\/$/.test(prefix)) throw new Error('a served ref prefix must be refs/<word>/');
      config.push(['transfer.hideRefs', `!${prefix}`]);
    }
    if (headTarget !== ref) config.push(['transfer.hideRefs', 'HEAD']);
  }
  // The repository's URL: a push's advertisement names the branches alone, the objects a push
  // may leave out (lib/authority/git-push.ts checks against those).
  if (ref === undefined && options.service === 'git-receive-pack') config.push(['transfer.hideRefs', 'refs/changes/'], ['transfer.hideRefs', 'refs/tags/']);
  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: path.dirname(repoDir),
    LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_PROJECT_ROOT: path.dirname(repoDir),
    GIT_HTTP_EXPORT_ALL: '1',
    GIT_HTTP_MAX_REQUEST_BUFFER: String(MAX_REQUEST_BUFFER),
    PATH_INFO: `/${name}/${options.request === 'advertise' ? 'info/refs' : options.service}`,
    REQUEST_METHOD: options.request === 'advertise' ? 'GET' : 'POST',
    QUERY_STRING: options.request === 'advertise' ? `service=${options.service}` : '',
    GIT_CONFIG_COUNT: String(config.length),
  };
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  const remote = ctx.req.socket.remoteAddress;
  if (remote) env.REMOTE_ADDR = remote;
  // `version=2` (and `:`-separated further keys): how a client asks for protocol v2.
  const protocol = ctx.get('git-protocol');
  if (protocol !== '' && protocol.length <= 256 && /^[\x21-\x7e]+$/.test(protocol)) {
    env.GIT_PROTOCOL = protocol;
    env.HTTP_GIT_PROTOCOL = protocol;
  }
  if (options.request === 'rpc') {
    env.CONTENT_TYPE = (ctx.get('content-type') || '').split(';')[0].trim();
    // A gzip body is inflated here (the request is read on its way to git), and git reads it to its end.
    if (!gzipped(ctx)) {
      const length = ctx.get('content-length');
      if (/^\d+$/.test(length)) env.CONTENT_LENGTH = length;
    }
  }
  return env;
}

/** Whether the request body is gzip-encoded; any encoding but gzip and none is 400. */
function gzipped(ctx: Context): boolean {
  const encoding = ctx.get('content-encoding').trim().toLowerCase();
  if (encoding === 'gzip' || encoding === 'x-gzip') return true;
  if (encoding !== '' && encoding !== 'identity') throw new Invalid('Content-Encoding must be gzip or none');
  return false;
}

/** A fetch refused before upload-pack saw it; its message goes to the client as git's `ERR` packet. */
class Refusal extends Error {}

/** The answer git's client prints as `fatal: remote error: <message>`. */
function errPacket(message: string): Buffer {
  return pkt(`ERR ${message}\n`);
}

/**
 * An upload-pack request (inflated) on its way to `git http-backend`, read as it passes, in
 * either protocol version: the object ids it names in `want`, and in `shallow` when it deepens
 * (an unshallow sends a shallow commit's parents), must all be commits the line serves
 * (lib/authority/git-served.ts), and nothing it may not ask here (`want-ref`, `deepen-not` on a
 * line's URL, a v2 command but ls-refs and fetch) is passed on. Its last chunk is held back
 * until that is known: `git http-backend` reads a request to its end before upload-pack sees
 * any of it, so upload-pack never acts on a request refused. A refused request fails the
 * stream with a Refusal.
 */
class UploadRequestGuard extends Transform {
  private pending: Buffer = Buffer.alloc(0);
  private held: Buffer | null = null;
  private inflated = 0;
  private readonly wants = new Set<string>();
  private readonly shallows = new Set<string>();
  private deepens = false;
  private problem: string | null = null;

  constructor(private readonly shadow: GitShadow) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.inflated += chunk.length;
    // git's own bound on what it reads of a request (its GIT_HTTP_MAX_REQUEST_BUFFER).
    if (this.inflated > MAX_REQUEST_BUFFER) return callback(new TooLarge(`the upload-pack request exceeds ${MAX_REQUEST_BUFFER} bytes once inflated`));
    if (chunk.length === 0) return callback();
    if (this.problem === null) this.parse(chunk);
    if (this.held !== null) this.push(this.held);
    this.held = chunk;
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.problem === null && this.pending.length > 0) this.problem = 'malformed request: it ends inside a pkt-line';
    this.verdict().then((refusal) => {
      if (refusal !== null) return callback(new Refusal(refusal));
      if (this.held !== null) this.push(this.held);
      callback();
    }, (err: Error) => callback(err));
  }

  private async verdict(): Promise<string | null> {
    if (this.problem !== null) return `upload-pack: ${this.problem}`;
    const ids = [...new Set([...this.wants, ...(this.deepens ? this.shallows : [])])];
    const unserved = await firstUnserved(this.shadow, ids);
    if (unserved === null) return null;
    const what = this.shadow.ref === undefined ? 'the refs it advertises' : `line ${this.shadow.ref.slice('refs/heads/'.length)}`;
    return `upload-pack: not our ref ${unserved} (this URL serves only the commits ${what} reaches)`;
  }

  /** pkt-lines: 4 hex digits of length (itself included), 0000 flush, 0001 delim, 0002 response end. */
  private parse(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let at = 0;
    while (this.problem === null && at + 4 <= this.pending.length) {
      const head = this.pending.toString('latin1', at, at + 4);
      if (!/^[0-9a-fA-F]{4}$/.test(head)) { this.problem = 'malformed request: not a pkt-line'; break; }
      const size = Number.parseInt(head, 16);
      if (size < 4) {
        if (size === 3) this.problem = 'malformed request: a pkt-line of length 3';
        at += 4;
        continue;
      }
      if (at + size > this.pending.length) break;
      this.line(this.pending.toString('latin1', at + 4, at + size).replace(/\n$/, ''));
      at += size;
    }
    this.pending = this.problem === null ? this.pending.subarray(at) : Buffer.alloc(0);
  }

  private line(text: string): void {
    // git reads an id as the first 40 (or 64) hex digits, of either case: a longer run is refused.
    const idOf = (rest: string): string | null => {
      const hex = /^[0-9a-fA-F]+/.exec(rest)?.[0];
      return hex !== undefined && (hex.length === 40 || hex.length === 64) ? hex.toLowerCase() : null;
    };
    if (text.startsWith('want ') || text.startsWith('shallow ')) {
      const shallow = text.startsWith('shallow ');
      const id = idOf(text.slice(shallow ? 8 : 5));
      if (id === null) this.problem = `malformed request: a ${shallow ? 'shallow' : 'want'} that is not an object id`;
      else (shallow ? this.shallows : this.wants).add(id);
      if (this.wants.size + this.shallows.size > MAX_NAMED_OBJECTS) this.problem = `the request names more than ${MAX_NAMED_OBJECTS} objects`;
    } else if (text.startsWith('want-ref ')) {
      this.problem = 'want-ref is not served: ask for the commit';
    } else if (text.startsWith('deepen-not ')) {
      // It names a ref, which git resolves among all of the repository's; a line's URL
      // advertises one, and excluding that one leaves nothing to send.
      this.deepens = true;
      if (this.shadow.ref !== undefined) this.problem = 'deepen-not (--shallow-exclude) is not served: this URL advertises one ref';
    } else if (text.startsWith('deepen')) {
      this.deepens = true;
    } else if (text.startsWith('command=') && text !== 'command=ls-refs' && text !== 'command=fetch') {
      this.problem = 'only the commands ls-refs and fetch are served';
    }
  }
}

type Child = ChildProcessByStdio<Writable, Readable, Readable>;

async function runHttpBackend(ctx: Context, options: ServeGitOptions): Promise<Reply> {
  const env = cgiEnvironment(ctx, options, options.shadow.ref === undefined ? null : options.shadow.head ?? null);
  // Each `git http-backend` (with its upload-pack and pack-objects, whose memory grows with the
  // repository) holds a place until it exits; the request waits for one first (./git-places.ts).
  const waiting = new AbortController();
  const onGone = () => waiting.abort();
  ctx.res.once('close', onGone);
  let release: () => void;
  try {
    release = await options.serving.places.take(options.serving.client, options.serving.repository, waiting.signal);
  } finally {
    ctx.res.off('close', onGone);
  }
  // Its own process group: upload-pack and pack-objects under it go with it when it is killed.
  const child: Child = spawn(gitBinary(), ['http-backend'], { env, cwd: env.GIT_PROJECT_ROOT, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 4096) stderr += chunk.toString('utf8');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  let done = false;
  void exited.then(() => {
    done = true;
    release();
  });
  const kill = () => {
    if (done || child.pid === undefined) return;
    try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
  };
  // The client went away before its answer was whole: nothing more is read or written for it.
  let clientGone = false;
  ctx.res.once('close', () => {
    if (ctx.res.writableFinished) return;
    clientGone = true;
    kill();
  });
  child.stdin.on('error', () => { /* the child stopped reading: its exit says why */ });

  let bodyFailure = null as Error | null;
  if (options.request === 'rpc') {
    const { limits } = options.serving.places;
    const inflate = gzipped(ctx) ? [createGunzip()] : [];
    pipeline([ctx.req, bodyGuard(ctx.req, options.limit, limits), ...inflate, new UploadRequestGuard(options.shadow), child.stdin]).catch((err: Error) => {
      bodyFailure = err;
      kill();
    });
  } else {
    child.stdin.end();
  }

  const head = await readCgiHead(child.stdout, exited);
  if (head === null) {
    kill();
    child.stdout.destroy();
    const exit = await exited;
    // Not git's failure: the client left before the answer began (nothing to answer, nothing to log).
    if (clientGone) throw new Invalid('the client went away');
    if (bodyFailure instanceof Refusal) {
      const bytes = errPacket(bodyFailure.message);
      return { status: 200, mediaType: MEDIA_UPLOAD_PACK_RESULT, bytes, length: bytes.length };
    }
    if (bodyFailure instanceof TooLarge || bodyFailure instanceof RequestTimeout) throw bodyFailure;
    if ((bodyFailure as NodeJS.ErrnoException | null)?.code?.startsWith?.('Z_')) throw new Invalid('malformed upload-pack request: its gzip encoding is broken');
    if (bodyFailure !== null) throw new Invalid('request body was aborted');
    if (exit.error) throw new Error(`git http-backend could not be run (${gitBinary()}): ${exit.error.message}`);
    throw new Error(`git http-backend gave no answer (exit ${exit.code ?? exit.signal}): ${stderr.trim().slice(0, 300)}`);
  }
  if (head.status !== 200) {
    // Every input of the CGI is ours: a refusal from it (no such repository, a service off) is
    // this server's fault, and what it says stays in the log.
    kill();
    child.stdout.destroy();
    await exited;
    throw new Error(`git http-backend answered ${head.status}: ${stderr.trim().slice(0, 300)} ${head.rest.toString('utf8', 0, 200).trim()}`);
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of head.headers) if (CGI_HEADERS_KEPT.has(name)) headers[name] = value;
  const log = options.log;
  return {
    status: head.status,
    mediaType: head.headers.get('content-type') ?? 'application/octet-stream',
    headers,
    stream: async (res: ServerResponse) => {
      // A client that stops reading would hold its place for as long as git waits on the full
      // socket: an answer that drains nothing for the body timeout is cut, git killed.
      const stalled = responseWatchdog(res, options.serving.places.limits.bodyTimeoutMs, () => {
        log.warn({ service: options.service, client: options.serving.client, timeout_s: options.serving.places.limits.bodyTimeoutMs / 1000 }, 'a git client stopped reading its answer: cut off');
        kill();
        res.destroy();
      });
      try {
        if (head.rest.length > 0 && !res.write(head.rest)) await drained(res);
        await pipeline(child.stdout, res, { end: false });
      } catch {
        kill(); // the client went away (or our side failed): the response cannot be finished
      } finally {
        stalled.stop();
      }
      const exit = await exited;
      // Refused before upload-pack read it: git wrote nothing but its header; the refusal is the answer.
      if (bodyFailure instanceof Refusal && !res.destroyed && res.writable) {
        res.end(errPacket(bodyFailure.message));
        return;
      }
      if (exit.code !== 0 && !res.destroyed && res.writable) {
        // Most often the client's doing (a request git calls a protocol error, a body over the
        // limit), so a warning; stderr is cut short, as it may quote the request.
        log.warn({ service: options.service, request: options.request, exit: exit.code ?? exit.signal, stderr: stderr.trim().slice(0, 300) }, 'git http-backend failed mid-answer');
        // A cut answer, never a complete-looking one: the client reports the failure.
        res.destroy();
        return;
      }
      if (exit.code !== 0 && exit.code !== null) log.warn({ service: options.service, exit: exit.code, stderr: stderr.trim().slice(0, 300) }, 'git http-backend failed');
      if (!res.destroyed) res.end();
    },
  };
}

/**
 * Calls `onStall` once when `res` stays backed up (its writes wait on a socket the client does
 * not read) for `timeoutMs` without draining; git being slow to produce is never a stall.
 */
function responseWatchdog(res: ServerResponse, timeoutMs: number, onStall: () => void): { stop: () => void } {
  let progress = Date.now();
  const onDrain = () => { progress = Date.now(); };
  res.on('drain', onDrain);
  // Looked at four times a window: a stall is seen at most a quarter window late.
  const timer = setInterval(() => {
    const now = Date.now();
    if (!res.writableNeedDrain) progress = now;
    else if (now - progress >= timeoutMs) {
      stop();
      onStall();
    }
  }, Math.max(10, Math.floor(timeoutMs / 4)));
  timer.unref();
  const stop = () => {
    clearInterval(timer);
    res.off('drain', onDrain);
  };
  return { stop };
}

interface CgiHead {
  status: number;
  headers: Map<string, string>;
  /** Body bytes read with the header block. */
  rest: Buffer;
}

/** The CGI header block (`Status:`, `Content-Type:`, ... then an empty line), or null when the child gave none. */
async function readCgiHead(stdout: Readable, exited: Promise<unknown>): Promise<CgiHead | null> {
  let buffered = Buffer.alloc(0);
  for await (const chunk of stdout.iterator({ destroyOnReturn: false })) {
    buffered = Buffer.concat([buffered, chunk as Buffer]);
    const end = headerEnd(buffered);
    if (end !== null) {
      stdout.pause();
      return parseCgiHead(buffered.subarray(0, end.at).toString('latin1'), buffered.subarray(end.at + end.length));
    }
    if (buffered.length > MAX_CGI_HEADER) return null;
  }
  await exited;
  return null;
}

function headerEnd(bytes: Buffer): { at: number; length: number } | null {
  const crlf = bytes.indexOf('\r\n\r\n');
  const lf = bytes.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { at: crlf, length: 4 };
  if (lf >= 0) return { at: lf, length: 2 };
  return null;
}

function parseCgiHead(text: string, rest: Buffer): CgiHead | null {
  const headers = new Map<string, string>();
  let status = 200;
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) return null;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'status') {
      const code = Number(/^(\d{3})/.exec(value)?.[1]);
      if (!(code >= 200 && code <= 599)) return null;
      status = code;
    } else {
      headers.set(name, value);
    }
  }
  return { status, headers, rest };
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve, reject) => {
    const onDrain = () => { res.off('close', onClose); resolve(); };
    const onClose = () => { res.off('drain', onDrain); reject(new Error('client went away')); };
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}

// ---- Pushes -------------------------------------------------------------------------------

/** One ref update of a push: `<old> <new> <ref>`. */
export interface PushCommand {
  oldId: string;
  newId: string;
  ref: string;
}

/**
 * The commands of a receive-pack request body (pkt-lines up to the first flush; the pack that
 * follows is not read here) and the capabilities the client asked for.
 */
export function parsePushCommands(bytes: Buffer): { commands: PushCommand[]; capabilities: string[]; options: string[]; complete: boolean } {
  const commands: PushCommand[] = [];
  let capabilities: string[] = [];
  // After the commands' flush, a client that asked for `push-options` sends its `-o` values, one
  // pkt-line each, and a second flush (git's pack-protocol); the pack follows.
  let options: string[] | null = null;
  let at = 0;
  while (at + 4 <= bytes.length) {
    const size = Number.parseInt(bytes.subarray(at, at + 4).toString('latin1'), 16);
    if (!/^[0-9a-f]{4}$/i.test(bytes.subarray(at, at + 4).toString('latin1'))) throw new Invalid('malformed push request: not a pkt-line');
    if (size === 0) {
      if (options !== null || !capabilities.includes('push-options') || commands.length === 0) return { commands, capabilities, options: options ?? [], complete: true };
      options = [];
      at += 4;
      continue;
    }
    if (size < 4) throw new Invalid('malformed push request: unexpected special pkt-line');
    if (at + size > bytes.length) break;
    let line = bytes.subarray(at + 4, at + size).toString('utf8');
    at += size;
    if (options !== null) {
      options.push(line.replace(/\n$/, ''));
      continue;
    }
    const nul = line.indexOf('\0');
    if (nul >= 0) {
      capabilities = line.slice(nul + 1).trim().split(' ').filter(Boolean);
      line = line.slice(0, nul);
    }
    line = line.replace(/\n$/, '');
    if (line.startsWith('shallow ') || line.startsWith('push-cert')) continue;
    const m = /^([0-9a-f]{40}|[0-9a-f]{64}) ([0-9a-f]{40}|[0-9a-f]{64}) (\S+)$/.exec(line);
    if (!m) throw new Invalid('malformed push request: a command is not "<old> <new> <ref>"');
    commands.push({ oldId: m[1], newId: m[2], ref: m[3] });
  }
  return { commands, capabilities, options: options ?? [], complete: false };
}

function pkt(payload: string | Buffer): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0'), 'latin1'), body]);
}
const FLUSH = Buffer.from('0000', 'latin1');

/** What a push for review reports per ref (lib/authority/git-push.ts decides it). */
export type ReviewOutcome =
  | { ref: string; ok: true; lines: string[] }
  | { ref: string; ok: false; reason: string };

/**
 * The receive-pack result of a push for review: git's report-status (`unpack`, then `ok`/`ng`
 * per ref) on side band 1, and what a person should read (the change's URL, each refusal's
 * reason) on side band 2, which git prints as `remote:` lines.
 */
export function reviewReport(unpack: string, outcomes: ReviewOutcome[], capabilities: string[]): Buffer {
  const clean = (text: string) => text.replace(/[\0-\x1f\x7f]+/g, ' ');
  const report: Buffer[] = [];
  if (capabilities.includes('report-status') || capabilities.includes('report-status-v2')) {
    report.push(pkt(`unpack ${clean(unpack)}\n`));
    for (const o of outcomes) report.push(pkt(o.ok ? `ok ${clean(o.ref)}\n` : `ng ${clean(o.ref)} ${clean(o.reason)}\n`));
    report.push(FLUSH);
  }
  const sideband = capabilities.includes('side-band-64k') || capabilities.includes('side-band');
  if (!sideband) return Buffer.concat(report);
  const said: string[] = [];
  if (unpack !== 'ok') said.push(`the push was not received: ${clean(unpack)}`);
  for (const o of outcomes) {
    if (o.ok) said.push(...o.lines.map(clean));
    else if (unpack === 'ok' && !said.includes(clean(o.reason))) said.push(clean(o.reason));
  }
  const out: Buffer[] = said.map((r) => pkt(Buffer.concat([Buffer.from([2]), Buffer.from(`${r}\n`, 'utf8')])));
  const inner = Buffer.concat(report);
  // Side band 1 carries the report; 1000 bytes a packet fits even the small `side-band`.
  for (let i = 0; i < inner.length; i += 995) out.push(pkt(Buffer.concat([Buffer.from([1]), inner.subarray(i, i + 995)])));
  out.push(FLUSH);
  return Buffer.concat(out);
}

/**
 * A push for review: the body (gzip undone, at most `limit` bytes as sent) goes to `receive`,
 * which takes the pack into a quarantine and writes each ref's patchset; the answer is the
 * report built here from what it decided, never git's own.
 */
export async function receiveForReview(
  ctx: Context,
  limit: number,
  serving: GitServing,
  receive: (body: Readable, signal: AbortSignal) => Promise<{ unpack: string; outcomes: ReviewOutcome[]; capabilities: string[] }>,
): Promise<Reply> {
  const encoding = ctx.get('content-encoding').trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity' && encoding !== 'gzip' && encoding !== 'x-gzip') throw new Invalid('Content-Encoding must be gzip or none');
  const declared = ctx.get('content-length');
  if (/^\d+$/.test(declared) && Number(declared) > limit) throw new TooLarge(`request body exceeds the push limit of ${limit} bytes`);
  const abort = new AbortController();
  const onClose = () => { if (!ctx.res.writableFinished) abort.abort(); };
  ctx.res.once('close', onClose);
  // A client gone before this handler ran has had its close events already: none would come.
  if (ctx.res.destroyed || ctx.req.socket?.destroyed) abort.abort();
  // A push runs git too (receive-pack, cat-file): it waits for one of the places git serving has
  // before its body is read (./git-places.ts).
  let release: () => void;
  try {
    release = await serving.places.take(serving.client, serving.repository, abort.signal);
  } catch (err) {
    ctx.res.off('close', onClose);
    throw err;
  }
  try {
    const limited = bodyGuard(ctx.req, limit, serving.places.limits);
    let body: Readable = ctx.req.pipe(limited);
    // A client that goes away mid-body: the receiver stops, removes its quarantine, writes nothing.
    // Watched three ways: the body's error, its close before the end, and the response's close
    // (which of them Node reports for a reset connection depends on timing).
    const aborted = () => { if (!limited.destroyed) limited.destroy(new Invalid('request body was aborted')); };
    ctx.req.on('error', aborted);
    ctx.req.once('close', () => { if (!ctx.req.complete) aborted(); });
    abort.signal.addEventListener('abort', aborted, { once: true });
    if (abort.signal.aborted || (ctx.req.destroyed && !ctx.req.complete)) aborted();
    if (encoding === 'gzip' || encoding === 'x-gzip') {
      const gunzip = createGunzip();
      limited.on('error', (err) => gunzip.destroy(err));
      gunzip.on('error', (err) => { if (!(err instanceof TooLarge) && !(err instanceof RequestTimeout)) gunzip.destroy(new Invalid('malformed push request: its gzip encoding is broken')); });
      body = limited.pipe(gunzip);
    }
    const receipt = await receive(body, abort.signal);
    const report = reviewReport(receipt.unpack, receipt.outcomes, receipt.capabilities);
    return { status: 200, mediaType: MEDIA_RECEIVE_PACK_RESULT, bytes: report, length: report.length };
  } catch (err) {
    // A zlib failure is the client's broken body.
    if ((err as NodeJS.ErrnoException).code?.startsWith?.('Z_')) throw new Invalid('malformed push request: its gzip encoding is broken');
    throw err;
  } finally {
    release();
    ctx.res.off('close', onClose);
  }
}
