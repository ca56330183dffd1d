// The ready Koa application: one error mapper, one request log line, then route dispatch
// (match → path parameters → lifecycle admission → body rules → handler → reply).
import Koa, { type Context } from 'koa';
import { finished, Readable } from 'node:stream';
import type { CairnService } from '../authority/service.js';
import type { Log } from '../authority/logger.js';
import { Busy, Conflict, Invalid, NotFound, NotImplemented, TooLarge, UnsupportedMediaType } from '../domain/errors.js';
import { LIFECYCLE_ACTIVE, LIFECYCLE_PURGED, LIFECYCLE_RETIRING, parseU32, type RepositoryRecord } from '../domain/repository.js';
import { errorReply, loggableError, sendError } from './errors.js';
import { PROXIED_HEADER, proxyTo } from './cluster-proxy.js';
import { ForNode, OwnedElsewhere, type ClusterPlacement } from '../authority/cluster.js';
import { readJsonBody, RAISED_JSON } from './json-body.js';
import type { RequestGuard } from './request-guard.js';
import { Router } from './router.js';
import { ROUTES } from './routes.js';
import type { AssetSource, Reply, RouteContext, RouteSpec } from './route-types.js';
import { uiMiddleware, type UiLookup, type UiOptions } from './ui/routes.js';
import { callerIdentity, type IdentityOptions } from './identity.js';
import { NO_PROMOTION, type PromoteAccess } from './promote-access.js';
import { DEFAULT_GIT_LIMITS, GitPlaces } from './git-places.js';
import type { AccessGate } from './access-gate.js';
import { ANONYMOUS, type Permission, type Principal } from '../domain/access.js';

export interface AppOptions {
  service: CairnService;
  log: Log;
  /** Where the one line per request goes; by default `log.info(entry, 'request')`. */
  requestLog?: RequestLog;
  /** The API reference renderer's files (GET /docs/api/assets/...); without it they answer 404. */
  assets?: AssetSource;
  /** The reviewer UI at /ui/ (./ui/routes.ts), or absent/null for none (`cairn serve --no-ui`). */
  ui?: UiOptions | null;
  /** Host and origin rules every request passes first (./request-guard.ts); absent: none (in-process tools). */
  guard?: RequestGuard | null;
  /** Where the caller's name comes from (./identity.ts); absent/null: no request names its caller. */
  identity?: IdentityOptions | null;
  /** Who may promote a follower (./promote-access.ts); absent/null: nobody. */
  promotion?: PromoteAccess | null;
  /** The places git serving shares out (./git-places.ts); absent: the defaults. */
  gitPlaces?: GitPlaces;
  /** Accounts, tokens and roles (./access-gate.ts); absent/null: no auth mode, every route open as the spec has it. */
  access?: AccessGate | null;
  /** The front door's address for links the server prints (`cairn serve --public-url`); absent/null: the request's own. */
  publicUrl?: string | null;
}

/** The request log line's fields: never the URL (it may carry a restore token), never a body. */
export interface RequestLogEntry {
  method: string;
  /** The route template (spec path with `{param}`s), or null when no route matched. */
  route: string | null;
  operation: string | null;
  status: number;
  ms: number;
}

export type RequestLog = (entry: RequestLogEntry) => void;

const INDEX_PARAMS = ['repository_index', 'worker_job_index'];
/** The archive's own operations: answered by a read-only server (a follower's promotion, a writer's handover). */
const ARCHIVE_OPERATIONS = new Set(['archive.promote', 'archive.takeover', 'archive.handover']);
/** The largest JSON body parsed (raised routes, decoded bytes); see ./json-body.ts. */
export const MAX_PARSED_JSON = RAISED_JSON.maxBytes;

export function createApp(options: AppOptions): Koa {
  const app = new Koa();
  app.proxy = false;
  const router = new Router(ROUTES);
  const gitPlaces = options.gitPlaces ?? new GitPlaces(DEFAULT_GIT_LIMITS);
  const requestLog = options.requestLog ?? ((entry: RequestLogEntry) => options.log.info(entry, 'request'));

  app.use(async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      // Before the UI, the router and any repository open: a refused request touches nothing.
      const refusal = options.guard?.check(ctx.req);
      if (refusal) throw refusal;
      // Every request has `ctx.state.identity` (a name or null); a header the server may not believe is refused here.
      ctx.state.identity = callerIdentity(ctx.req, options.identity);
      // With an identity header configured, actions kept for operators need a named caller (./handlers/workflow-common.ts requireIdentified).
      ctx.state.identityConfigured = !!options.identity;
      await next();
    } catch (err) {
      const reply = errorReply(err);
      // A body refused before it was read whole is discarded for a little while (so the client
      // can read this answer before the connection goes), then the connection is closed.
      // (A request without a body has none to wait for, even while its parse is finishing.)
      if (!ctx.req.complete && hasBody(ctx)) lingerThenClose(ctx, reply.headers);
      if (reply.internal) options.log.error({ err: loggableError(err), method: ctx.method, route: ctx.state.routeTemplate ?? null }, 'request failed');
      sendError(ctx, reply);
    } finally {
      requestLog({
        method: ctx.method,
        route: ctx.state.routeTemplate ?? null,
        operation: ctx.state.operation ?? null,
        status: ctx.status,
        ms: Number(process.hrtime.bigint() - started) / 1e6,
      });
    }
  });

  // The UI is a page server beside the interface, not a row of the route table: see ./ui/routes.ts.
  if (options.ui) app.use(uiMiddleware({ lookup: uiLookup(options.service), ...options.ui, identityHeader: options.identity?.header ?? options.ui.identityHeader ?? null }));

  app.use(async (ctx) => {
    if (ctx.method === 'OPTIONS') {
      const { allow, params } = router.allowed(ctx.path);
      for (const name of INDEX_PARAMS) if (name in params) parseU32(params[name], name);
      if (params.repository_index !== undefined) options.service.record(Number(params.repository_index));
      ctx.set('Allow', allow.join(', '));
      ctx.status = 204;
      return;
    }
    const { route, params } = router.match(ctx.method, ctx.path);
    ctx.state.routeTemplate = route.logName;
    ctx.state.operation = route.operation;
    // serve --cluster: a repository another node owns is that node's to answer (its rules, its
    // lease); the request goes there whole, before anything here reads it. Once only: a request
    // another node passed here for a repository placed elsewhere is told to retry.
    // A write to a repository this node is handing to another (a move) waits for the handoff's
    // end, then goes where the repository is: the new owner, or here when the move was called off.
    const cluster = options.service.cluster;
    if (cluster && params.repository_index !== undefined) {
      const index = parseU32(params.repository_index, 'repository_index');
      const writes = ctx.method !== 'GET' && ctx.method !== 'HEAD';
      for (let round = 0; ; round++) {
        const owner = cluster.ownerKnown(index) ?? (await clusterRead(() => cluster.owner(index)));
        // A read replica here serves a read (not git's: its shadow is the owner's work) at the commit the client asks for.
        if (owner !== null && owner !== cluster.node && !writes && !route.operation.startsWith('git.') && options.service.replicas?.serves(index, minCommit(ctx))) {
          ctx.set('Cairn-Replica-Of', owner);
          break;
        }
        if (owner !== null && owner !== cluster.node) {
          // Passed here by another node already: never passed on twice; it asks again and reaches the owner.
          if (ctx.get(PROXIED_HEADER)) {
            if (hasBody(ctx)) await drain(ctx);
            throw new Busy(`repository ${index} is placed on node ${owner}, not on node ${cluster.node} that it was passed to (it moved just now); retry`);
          }
          ctx.state.proxiedTo = owner;
          const to = await liveNode(cluster, owner, index);
          // A client that asks for it (`Cairn-Route: redirect`) is sent to the owner instead: 307 keeps the method and body.
          if (ctx.get('cairn-route').trim().toLowerCase() === 'redirect') {
            const location = `${to.url.replace(/\/$/, '')}${ctx.originalUrl}`;
            ctx.status = 307;
            ctx.set('Location', location);
            ctx.set('Cairn-Owner', owner);
            // The body is the owner's to read: this connection ends after the answer rather than read it.
            if (hasBody(ctx)) ctx.set('Connection', 'close');
            ctx.body = { redirect: location, node: owner };
            return;
          }
          await proxyTo(ctx, to, cluster.node);
          return;
        }
        const held = writes ? options.service.moves?.held(index) ?? null : null;
        if (held === null) break;
        // Bounded: the hold ends within its own bound (the move done or called off); past that, or
        // after a few rounds, the client is told to retry.
        if (round >= 3 || !(await settlesWithin(held, HELD_WRITE_WAIT_MS))) {
          if (hasBody(ctx)) await drain(ctx);
          throw new Busy(`repository ${index} is moving to another node and its move has not ended yet; retry`);
        }
      }
    }
    // A follower of an archive, and a writer handing it over, serve reads only; their one write
    // is the promotion or the handover itself. A writer that does not hold its writer lease now
    // (serve --lease) refuses too, before anything is written. A mutating request admitted here
    // counts as under way until it ends: a handover waits for it (its commit is acknowledged, so it must ship).
    // A POST that only reads (a reader's route: snapshots.exists, a pull manifest, git-upload-pack)
    // is a read: a lost lease neither refuses it nor calls it committed, and a follower serves it.
    // Git serving is not a follower's: its git shadow is built and refreshed by a writer's work,
    // so a follower refuses git's routes, reads included, rather than serve or build a stale one.
    const posted = ctx.method !== 'GET' && ctx.method !== 'HEAD' && !ARCHIVE_OPERATIONS.has(route.operation);
    const mutating = posted && route.permission !== 'reader';
    if (route.operation.startsWith('git.') && options.service.readOnly !== null) {
      if (hasBody(ctx)) await drain(ctx);
      throw new Busy(options.service.readOnly);
    }
    if (mutating) {
      const refusal = options.service.readOnly ?? options.service.writeRefusal?.() ?? options.service.cluster?.refusal() ?? null;
      if (refusal !== null) {
        if (hasBody(ctx)) await drain(ctx);
        throw new Busy(refusal);
      }
    }
    const endWrite = mutating ? options.service.beginWrite(params.repository_index === undefined ? undefined : Number(params.repository_index)) : null;
    try {
      await dispatch(ctx, route, params, mutating);
    } finally {
      endWrite?.();
    }
  });

  /** Access check, admission, body rules, handler and reply of a matched route. */
  async function dispatch(ctx: Context, route: RouteSpec, params: Record<string, string>, mutating: boolean): Promise<void> {
    for (const name of INDEX_PARAMS) if (name in params) parseU32(params[name], name);
    // Who is calling and whether the route's permission lets them through: before the repository
    // is looked up or the body read, so a refused request changes nothing and learns nothing.
    const gate = options.access;
    if (gate) {
      const permission = permissionOf(route, ctx.query.service);
      let who = permission === 'public' || permission === 'promotion' ? ANONYMOUS : gate.principal(ctx.req, ctx.state.identity ?? null, route);
      // Only a caller named by the front door for the first time waits (its account is written).
      if (who instanceof Promise) who = await who;
      ctx.state.principal = who;
      ctx.state.identity = who.kind === 'account' ? who.name : null;
      gate.check(route.operation, permission, who, params.repository_index === undefined ? null : Number(params.repository_index));
    }

    let repository: RepositoryRecord | undefined;
    let leave: (() => void) | null = null;
    try {
      if (params.repository_index !== undefined) {
        repository = options.service.record(Number(params.repository_index));
        admit(route, ctx.method, repository);
        if (route.operation !== 'repositories.get') {
          // A repository opens on its first request (lib/authority/service.ts); a failed open answers as at startup.
          // The request counts as under way until it ends, so a reopen (a follower applying a
          // manifest) waits for it rather than closing files it reads.
          leave = await options.service.enter(repository.repository_index);
          options.service.assertServable(repository.repository_index);
        }
      }
      if (!route.handler) {
        if (hasBody(ctx)) await drain(ctx);
        throw new NotImplemented(route.operation);
      }

      let body: unknown = undefined;
      if (route.body.kind === 'json') {
        if (!ctx.request.is('application/json')) {
          throw new UnsupportedMediaType('this route takes Content-Type: application/json');
        }
        // JSON is parsed in memory under the route's caps (bytes once decoded, values, nesting),
        // checked while the body arrives (docs/api.md "JSON bodies"); packs are what stream to disk.
        const read = await readJsonBody(ctx.req, route.jsonCaps);
        if (read.value === undefined) throw new Invalid('empty JSON body: send a JSON object');
        body = read.value;
      } else if (route.body.kind === 'raw') {
        const type = (ctx.get('content-type') || '').split(';')[0].trim().toLowerCase();
        if (type !== route.body.mediaType) throw new UnsupportedMediaType(`this route takes Content-Type: ${route.body.mediaType}`);
        const declared = ctx.get('content-length');
        if (declared !== '' && Number(declared) > route.limit) throw new TooLarge(`request body exceeds the route limit of ${route.limit} bytes`);
      } else {
        // Body-less routes ignore any body sent (docs/api.md "Paths and actions").
        if (hasBody(ctx)) await drain(ctx);
      }

      const routeCtx: RouteContext = { koa: ctx, service: options.service, params, repository, body, limit: route.limit, assets: options.assets, promotion: options.promotion ?? NO_PROMOTION, gitPlaces, access: options.access ?? null, publicUrl: options.publicUrl ?? null };
      let reply: Reply;
      try {
        reply = await route.handler(routeCtx);
      } catch (err) {
        // A registration whose namespace another node's repository owns, a move or failover to
        // another node: that node answers it.
        const cluster = options.service.cluster;
        if (err instanceof ForNode && cluster) {
          if (ctx.get(PROXIED_HEADER)) throw new Busy(`node ${cluster.node} was asked, by another node, to pass this request to node ${err.node}: the nodes disagree for a moment; retry`);
          ctx.state.proxiedTo = err.node;
          await proxyTo(ctx, await liveNode(cluster, err.node, null), cluster.node, Buffer.from(JSON.stringify(body)));
          return;
        }
        if (!(err instanceof OwnedElsewhere) || !cluster) throw err;
        // Passed here by another node already: the two disagree on the placement; never passed on twice.
        if (ctx.get(PROXIED_HEADER)) throw new Busy(`repository ${err.index} is placed on node ${err.node}, which passed this registration here; the nodes disagree for a moment: retry`);
        ctx.state.proxiedTo = err.node;
        await proxyTo(ctx, await liveNode(cluster, err.node, err.index), cluster.node, Buffer.from(JSON.stringify(body)));
        return;
      }
      // serve --cluster: the repository's commit as this answer saw it (a read sent with
      // Cairn-Min-Commit at least this one sees this write: lib/authority/replicas.ts).
      if (repository && options.service.cluster) {
        const commit = options.service.commitOf(repository.repository_index);
        if (commit !== null) ctx.set('Cairn-Commit', String(commit));
      }
      // The acknowledge point of every write, those outside a repository's commit queue too (a
      // registration, an account, a grant): a writer that lost its lease while it wrote answers
      // 503 — done and durable here, not acknowledged (a commit's own hook has said so already).
      if (mutating && !('stream' in reply) && !('write' in reply)) {
        const late = options.service.writerLease?.refusal() ?? options.service.cluster?.refusal() ?? null;
        if (late !== null) throw new Busy(`done on this server, but not acknowledged: ${late}`, { committed: true });
      }
      // A body that streams (an event feed, a pack, an export) ends when its token is revoked or its account disabled.
      if (gate && ('write' in reply || 'stream' in reply || ('bytes' in reply && reply.bytes instanceof Readable))) endOnRevoke(ctx, gate);
      if ('write' in reply) await sendWritten(ctx, reply);
      else if ('stream' in reply) {
        // An event stream lives long and re-reads a reopened authority itself: it holds no reopen back.
        leave?.();
        await sendStream(ctx, reply);
      } else {
        send(ctx, reply);
        // A streamed body reads the authority's files after this returns: it stays under way until it ends.
        if ('bytes' in reply && reply.bytes instanceof Readable && leave) {
          const left = leave;
          leave = null;
          finished(reply.bytes, () => left());
        }
      }
    } finally {
      leave?.();
    }
  }

  app.on('error', (err) => options.log.warn({ err: loggableError(err) }, 'response stream failed'));
  return app;
}

/** How long a write to a repository being handed to another node waits (longer than a hold's own bound). */
const HELD_WRITE_WAIT_MS = 130_000;

/** Whether `p` settles within `ms`. */
async function settlesWithin(p: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p.then(() => true), new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), ms); })]);
  } finally {
    clearTimeout(timer);
  }
}

/** The commit a read must see (`Cairn-Min-Commit: G`, from the Cairn-Commit of the client's write); 0 when none is asked. */
function minCommit(ctx: Context): number {
  const v = ctx.get('cairn-min-commit');
  if (v === '') return 0;
  if (!/^(0|[1-9][0-9]{0,15})$/.test(v)) throw new Invalid('Cairn-Min-Commit must be a commit generation (a decimal number), as a Cairn-Commit header carried it');
  return Number(v);
}

/** A read of the cluster's etcd; etcd not answering is a 503 saying so (never a 500 with its message). */
async function clusterRead<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch {
    throw new Busy('the cluster\'s etcd did not answer, so where this repository lives is not known now; retry');
  }
}

/** The owner's membership record: where to reach it; a node without one is down (503, naming it). */
async function liveNode(cluster: ClusterPlacement, node: string, index: number | null): Promise<{ node: string; url: string }> {
  // From memory (an etcd watch keeps it); a node not seen live is looked up in etcd before it is called down.
  const n = cluster.nodeKnown(node) ?? (await clusterRead(() => cluster.nodes())).get(node);
  if (!n) throw new Busy(index === null ? `node ${node} is down (it holds no membership in the cluster now)` : `repository ${index} is owned by node ${node}, which is down (it holds no membership in the cluster now); its repositories answer again when it is back (or after cairn repo failover ${index})`);
  return { node, url: n.url };
}

/** End this response when the token that opened it stops authenticating (at once if it already has). */
function endOnRevoke(ctx: Context, gate: AccessGate): void {
  const who = ctx.state.principal as Principal | undefined;
  if (!who || who.kind !== 'account' || who.tokenId === null) return;
  if (!gate.book.tokenValid(who.tokenId)) {
    ctx.res.destroy();
    return;
  }
  const off = gate.book.onRevoke(who.tokenId, () => ctx.res.destroy());
  ctx.res.once('close', off);
}

/**
 * The permission a request needs: the route's, except git's ref advertisement for a push
 * (`info/refs?service=git-receive-pack`), which needs what the push itself needs.
 */
function permissionOf(route: RouteSpec, service: unknown): Permission {
  if ((route.operation === 'git.infoRefs' || route.operation === 'git.repositoryInfoRefs') && service === 'git-receive-pack') return 'contributor';
  return route.permission;
}

/** Spec "Repository lifecycle admission". GET/HEAD/OPTIONS always pass. */
/**
 * The UI's answer to "does this page name something?" (./ui/routes.ts): a registered repository
 * that is not purged, and in it a change, task or land record. Only a definite NotFound (or a
 * malformed ref) says no; a repository that failed its checks at open is left to the page's
 * own reads (500).
 */
function uiLookup(service: CairnService): UiLookup {
  return {
    async exists(page) {
      if (page.kind === 'home') return true;
      // serve --cluster: a repository of another node is there; the page's reads go to it.
      const cluster = service.cluster;
      if (cluster) {
        const owner = cluster.ownerKnown(page.repo) ?? (await cluster.owner(page.repo).catch(() => null));
        if (owner !== null && owner !== cluster.node) return true;
      }
      try {
        if (service.record(page.repo).lifecycle_kind === LIFECYCLE_PURGED) return false;
        if (page.kind === 'repository') return true;
        const a = await service.opened(page.repo);
        if (page.kind === 'change') a.workflow.change(page.ref);
        else if (page.kind === 'task') a.workflow.task(page.id);
        else a.lands.land(page.id);
        return true;
      } catch (err) {
        // A ref of the wrong form names nothing either.
        return !(err instanceof NotFound || err instanceof Invalid);
      }
    },
  };
}

export function admit(route: RouteSpec, method: string, repository: RepositoryRecord): void {
  if (method === 'GET' || method === 'HEAD') return;
  const lifecycle = repository.lifecycle_kind;
  if (lifecycle === LIFECYCLE_ACTIVE) return;
  if (route.admission === 'retirement') return;
  if (route.admission === 'worker' && lifecycle === LIFECYCLE_RETIRING) return;
  const state = lifecycle === LIFECYCLE_RETIRING ? 'retiring' : 'purged';
  throw new Conflict(`repository ${repository.repository_index} is ${state}; this mutation is not admitted`);
}

/** A body the handler writes itself, with backpressure; headers are those set here. */
async function sendWritten(ctx: Context, reply: Extract<Reply, { write: unknown }>): Promise<void> {
  ctx.status = reply.status ?? 200;
  ctx.type = reply.mediaType;
  ctx.length = reply.length;
  ctx.respond = false;
  await reply.write(ctx.res);
}

/** An open-ended body (an event stream): the headers go out at once, without a length. */
async function sendStream(ctx: Context, reply: Extract<Reply, { stream: unknown }>): Promise<void> {
  ctx.status = reply.status ?? 200;
  ctx.respond = false;
  const res = ctx.res;
  res.writeHead(ctx.status, { ...reply.headers, 'Content-Type': reply.mediaType });
  res.flushHeaders();
  await reply.stream(res);
}

/**
 * JSON text of frozen reply bodies, by identity. A handler freezes a body only when every part of
 * it is frozen (e.g. the lines listing, rebuilt when a line changes), so its text cannot change.
 */
const frozenJson = new WeakMap<object, string>();

function jsonText(value: unknown): string {
  if (typeof value !== 'object' || value === null || !Object.isFrozen(value)) return JSON.stringify(value);
  let text = frozenJson.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    frozenJson.set(value, text);
  }
  return text;
}

function send(ctx: Context, reply: Exclude<Reply, { write: unknown } | { stream: unknown }>): void {
  ctx.status = reply.status ?? 200;
  if ('json' in reply) {
    // What Koa's respond() would send for a JSON body (same status, headers and bytes), written
    // here directly: it skips Koa's body/type machinery on the hot path.
    if (reply.headers) for (const k in reply.headers) ctx.set(k, reply.headers[k]);
    const text = jsonText(reply.json);
    const res = ctx.res;
    ctx.respond = false;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(text));
    if (ctx.method === 'HEAD') res.end();
    else res.end(text);
  } else {
    if (reply.headers) for (const k in reply.headers) ctx.set(k, reply.headers[k]);
    ctx.type = reply.mediaType;
    ctx.body = reply.bytes;
    if (reply.length !== undefined) ctx.length = reply.length;
  }
}

/** Bytes and time a refused body is still read (and dropped) after the answer, before the connection closes. */
export const LINGER_BYTES = 8 * 1024 * 1024;
export const LINGER_MS = 2000;

/**
 * The answer carries `Connection: close`. Node would close the socket as soon as the answer is
 * written, with the client's bytes still arriving: the kernel then resets the connection and
 * the client may never read the answer. So the close is a lingering one: our side is shut
 * (FIN after the answer) while the rest of the body is read and dropped, for at most
 * LINGER_BYTES or LINGER_MS, then the socket is destroyed.
 */
function lingerThenClose(ctx: Context, headers: Record<string, string>): void {
  headers.Connection = 'close';
  const req = ctx.req;
  const socket = req.socket as typeof req.socket & { destroySoon?: () => void };
  let extra = 0;
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.destroySoon = () => {
    socket.end();
  };
  req.on('data', (chunk: Buffer) => {
    extra += chunk.length;
    if (extra > LINGER_BYTES) socket.destroy();
  });
  // Never before the answer is out (a refusal made while the headers were still being parsed
  // can see the body end first); once it is, Node calls destroySoon itself.
  req.once('end', () => { if (ctx.res.writableFinished) socket.end(); });
  req.resume();
}

/** Whether a body may still arrive. HTTP/1.1: without Content-Length or Transfer-Encoding there is none (RFC 9112 §6.3). */
function hasBody(ctx: Context): boolean {
  if ((ctx.req as Readable).readableEnded) return false;
  const headers = ctx.req.headers;
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}

/** Read and discard a request body we do not use, so keep-alive connections stay usable. */
async function drain(ctx: Context): Promise<void> {
  const req = ctx.req as Readable;
  let seen = 0;
  for await (const chunk of req.iterator({ destroyOnReturn: false })) {
    seen += (chunk as Buffer).length;
    if (seen > 2 * 1024 * 1024) throw new TooLarge('request body exceeds the route limit (this route takes no body)');
  }
}
