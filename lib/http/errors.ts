// The one place domain errors become HTTP: a total table from error code to status. A 5xx
// body never carries a stack or a path; the details go to the log only.
import type { Context } from 'koa';
import { CairnError, MethodNotAllowed, TooManyRequests, Unauthorized, isCairnError, type ErrorCode } from '../domain/errors.js';
import { GOVERNED_CODE } from '../domain/lines.js';
import { constant, enumOf, obj, str, strArr, uint, type Schemas } from './json-schema.js';

export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  Invalid: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  Conflict: 409,
  RequestTimeout: 408,
  Gone: 410,
  TooLarge: 413,
  UnsupportedMediaType: 415,
  Misdirected: 421,
  Unprocessable: 422,
  TooManyRequests: 429,
  Corrupt: 500,
  Internal: 500,
  NotImplemented: 501,
  Busy: 503,
  InsufficientStorage: 507,
};

/** What a full disk answers: the caller's words; the directory goes to the operator's log only. */
export const DISK_FULL = "insufficient storage: the server's disk is full, nothing was written; try again once its operator frees space";

/**
 * What an internal error may put in the log: message, code and stack only. Library errors can
 * carry request bytes (Node's HTTP parser attaches `rawPacket`), which may hold tokens.
 */
export function loggableError(err: unknown): Record<string, unknown> {
  const e = err as { message?: unknown; code?: unknown; stack?: unknown; name?: unknown };
  return { name: e?.name, message: String(e?.message ?? err), code: e?.code, stack: e?.stack };
}

/** Errors raised by libraries (co-body, zlib, raw streams) that callers cause, as domain errors. */
function fromLibraryError(err: unknown): CairnError | null {
  const e = err as { status?: number; statusCode?: number; type?: string; expose?: boolean; code?: unknown; message?: unknown };
  if (typeof e?.code === 'string') {
    // A full disk or quota on any write (log append, pack, file): the store truncates what it began.
    if (e.code === 'ENOSPC' || e.code === 'EDQUOT') return new CairnError('InsufficientStorage', DISK_FULL);
    // A body that does not decode under its Content-Encoding (gzip, deflate, br).
    if (/^Z_/.test(e.code) || /^ERR__ERROR_/.test(e.code) || e.code === 'ERR_BROTLI_DECOMPRESSION_FAILED') {
      return new CairnError('Invalid', 'request body does not decode under its Content-Encoding');
    }
    // The client went away mid-body: its request, not a server fault.
    if (e.code === 'ECONNRESET' || e.code === 'ECONNABORTED' || e.code === 'ERR_STREAM_PREMATURE_CLOSE') {
      return new CairnError('Invalid', 'request body was aborted');
    }
  }
  if (e?.message === 'aborted') return new CairnError('Invalid', 'request body was aborted');
  const status = e?.status ?? e?.statusCode;
  if (typeof status !== 'number') return null;
  if (status === 413) return new CairnError('TooLarge', 'request body exceeds the route limit');
  if (status === 415) return new CairnError('UnsupportedMediaType', 'unsupported request body encoding');
  if (status === 400) return new CairnError('Invalid', e.type === 'request.aborted' ? 'request body was aborted' : 'malformed JSON body');
  return null;
}

export interface ErrorReply {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
  internal: boolean;
}

export function errorReply(err: unknown): ErrorReply {
  const known = isCairnError(err) ? err : fromLibraryError(err);
  if (!known) {
    return { status: 500, body: { error: 'internal error' }, headers: {}, internal: true };
  }
  const status = STATUS_BY_CODE[known.code];
  const headers: Record<string, string> = {};
  if (known instanceof MethodNotAllowed) headers.Allow = known.allow.join(', ');
  // A 503 of a write committed here but not acknowledged (--archive-sync) asks for no retry.
  if (status === 503 && known.fields?.committed !== true) headers['Retry-After'] = '1';
  if (known instanceof TooManyRequests) headers['Retry-After'] = String(known.retryAfterS);
  if (known instanceof Unauthorized) headers['WWW-Authenticate'] = known.challenge;
  // 500s from Corrupt keep a generic text: the message may name files of the data directory.
  // A 507 says what happened in fixed words and is logged (with the path) for the operator.
  const message = status >= 500 && status !== 501 && status !== 503 && status !== 507 ? 'internal error: the authority operation failed (see server log)' : known.message;
  return { status, body: { ...known.fields, error: message }, headers, internal: status >= 500 && status !== 501 && status !== 503 };
}

export function sendError(ctx: Context, reply: ErrorReply): void {
  ctx.status = reply.status;
  for (const [k, v] of Object.entries(reply.headers)) ctx.set(k, v);
  ctx.type = 'application/json';
  ctx.body = reply.body;
}

/** The error bodies (components/schemas of the OpenAPI document). */
export const SCHEMAS: Schemas = {
  Error: obj({
    error: { ...str, description: 'diagnostic text: branch on the status and the documented fields, never on the text' },
    code: { ...enumOf([GOVERNED_CODE]), description: 'a named error code (409)' },
    landable_change_refs: { ...strArr, description: 'task-land naming a task that has not exactly one landable change (400)' },
    oldest_seq: { ...uint, description: 'a repository event feed: the oldest event still kept; resume from since = oldest_seq - 1 (410)' },
    oldest_id: { ...str, description: 'the global event feed: the oldest position a resume can start from without a gap (410)' },
    committed: { ...constant(true), description: 'serve --archive-sync: the write was committed on this server but no archive manifest covers it; do not send it again (503, without Retry-After)' },
  }, { optional: ['code', 'landable_change_refs', 'oldest_seq', 'oldest_id', 'committed'] }),
  Starting: obj({ error: str, ready: constant(false), status: constant('starting') }, { description: 'every path but /healthz before activation (503)' }),
};
