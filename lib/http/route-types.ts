// Types of the route table (lib/http/routes.ts) and of the handlers it points at.
import type { Context } from 'koa';
import type { Struct } from 'superstruct';
import type { Permission } from '../domain/access.js';
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { CairnService } from '../authority/service.js';
import type { Authority } from '../authority/authority.js';
import type { RepositoryRecord } from '../domain/repository.js';
import type { JsonCaps } from './json-body.js';
import type { JsonSchema } from './json-schema.js';
import type { PromoteAccess } from './promote-access.js';
import type { GitPlaces } from './git-places.js';
import type { AccessGate } from './access-gate.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export const MEDIA_OBJECT_PACK = 'application/vnd.svc.remote-sync.object-pack+zstd';
export const MEDIA_TREE_PACK = 'application/vnd.svc.remote-sync.tree-pack+zstd';
export const MEDIA_AUTHORITY_FILE = 'application/vnd.svc.remote-authority-file.v1';

export type BodyKind =
  | { kind: 'none' }
  | { kind: 'json' }
  /** Raw bytes of exactly this media type; the handler streams `ctx.req` itself. */
  | { kind: 'raw'; mediaType: string };

/** 2 MiB for standard routes, 2 GiB for the routes the spec's Limits table raises. */
export const STANDARD_LIMIT = 2 * 1024 * 1024;
export const RAISED_LIMIT = 2 * 1024 * 1024 * 1024;

/**
 * Lifecycle admission class (spec: "Repository lifecycle admission"). GET/HEAD/OPTIONS always pass.
 *  - global:     not under {repo}; no repository check
 *  - active:     a mutation that needs an active repository
 *  - worker:     a worker-job action kept while retiring (claim, heartbeat, complete, fail)
 *  - retirement: retirement status/start, purge, abort: the handler applies the lifecycle rules
 */
export type Admission = 'global' | 'active' | 'worker' | 'retirement';

export interface RouteContext {
  koa: Context;
  service: CairnService;
  /** Path parameters, percent-decoded exactly once; index parameters as canonical strings. */
  params: Record<string, string>;
  /** Present on routes under {repo}: the registry record at the time of the request. */
  repository?: RepositoryRecord;
  /** Parsed JSON body (JSON routes only); validate it with `validate()` from ./validate.ts. */
  body: unknown;
  /** The route's byte limit, for raw routes that stream the body themselves. */
  limit: number;
  /** Files the server may serve as they are (the API reference's renderer); absent when none. */
  assets?: AssetSource;
  /** Who may promote a follower (./promote-access.ts). */
  promotion?: PromoteAccess;
  /** The places git serving shares out (./git-places.ts). */
  gitPlaces: GitPlaces;
  /** Accounts, tokens and roles (./access-gate.ts); null when the server runs without an auth mode. */
  access: AccessGate | null;
  /** The front door's address for links the server prints (`cairn serve --public-url`); null/absent: the request's own. */
  publicUrl?: string | null;
}

/** Static files by name (given by the composition root, lib/cli: the HTTP layer reads no files). */
export interface AssetSource {
  /** The bytes of `file`, or null when the source has no such file. */
  read(file: string): Promise<Buffer | null>;
}

/** A success answer of a route: a component schema name (a JSON body), or raw bytes of one of these media types. */
/** A components/schemas name (JSON), raw media types, or both (JSON by default, other media types on request). */
export type Answer = string | { raw: readonly string[]; json?: string };

/** A query parameter a handler reads (values arrive as strings; the schema says what they must spell). */
export interface QueryParam {
  schema: JsonSchema;
  description?: string;
}

export type Reply =
  | { status?: number; json: unknown; headers?: Record<string, string> }
  | { status?: number; mediaType: string; bytes: Buffer | Readable; length?: number; headers?: Record<string, string> }
  /** A body the handler writes to the response itself (with backpressure), of exactly `length` bytes. */
  | { status?: number; mediaType: string; length: number; write: (res: ServerResponse) => Promise<void> }
  /**
   * An open-ended body (text/event-stream): headers are sent at once, then `stream` writes until
   * it ends the response; it must end when the client goes away and must not outlive shutdown.
   */
  | { status?: number; mediaType: string; headers?: Record<string, string>; stream: (res: ServerResponse) => Promise<void> };

export type Handler = (ctx: RouteContext) => Promise<Reply>;

export interface RouteSpec {
  /** Stable operation name, used in logs and in the 501 message. */
  operation: string;
  /** What the request log names: the template, with `:action` when the route has one. */
  logName: string;
  method: Method;
  /** Path template with `{param}` segments, e.g. `/v1/native/repository-authorities/{repository_index}/lines`. */
  template: string;
  /** Action suffix on the last path segment (`close` for `...:close`), if any. */
  action?: string;
  /** Who may call it (lib/domain/access.ts): the access gate's, the OpenAPI `security`'s and docs/api.md's one source. */
  permission: Permission;
  body: BodyKind;
  limit: number;
  /** JSON routes: the caps the body is read and parsed under (./json-body.ts). */
  jsonCaps: JsonCaps;
  admission: Admission;
  /** Listed in the handshake's compact `endpoints` hint. */
  discover?: boolean;
  /** Absent: the route answers 501 (no row lacks one; the route test checks it). */
  handler?: Handler;
  /** JSON routes: the superstruct schema the handler validates its body with (the OpenAPI request body). */
  request?: Struct<any, any>;
  /** Success answers by status (the OpenAPI responses; components/schemas names are the handlers' `SCHEMAS`). */
  answers: Readonly<Record<number, Answer>>;
  /** Refusals this operation answers beyond those its shape implies (lib/http/openapi.ts `refusalsOf`). */
  refusals: readonly number[];
  /** Query parameters the handler reads, beside the handler (`limit` and `cursor` of paged routes are added). */
  query: Readonly<Record<string, QueryParam>>;
  /** A list: takes `limit` and `cursor`, answers `count` and `next_cursor` (docs/api.md "Lists and pagination"). */
  paged: boolean;
  /** Not an operation of the spec (the OpenAPI document, the API reference): outside the spec's counts. */
  extension: boolean;
  /** Answers carry an ETag; a GET naming a confirmed one in If-None-Match gets 304 (no body). */
  conditional?: boolean;
}

export function requireAuthority(ctx: RouteContext): Authority {
  if (!ctx.repository) throw new Error(`route has no repository context`);
  return ctx.service.authority(ctx.repository.repository_index);
}
