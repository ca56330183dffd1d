// The one place domain errors become HTTP: a total table from error code to status. A 5xx
// body never carries a stack or a path; the details go to the log only.
import type { Context } from 'koa';
import { CairnError, MethodNotAllowed, isCairnError, type ErrorCode } from '../domain/errors.js';

export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  Invalid: 400,
  NotFound: 404,
  MethodNotAllowed: 405,
  Conflict: 409,
  TooLarge: 413,
  UnsupportedMediaType: 415,
  Unprocessable: 422,
  Corrupt: 500,
  Internal: 500,
  NotImplemented: 501,
  Busy: 503,
};

/** Errors raised by libraries (co-body, raw streams) carry an HTTP status; translate the ones callers cause. */
function fromLibraryError(err: unknown): CairnError | null {
  const e = err as { status?: number; statusCode?: number; type?: string; expose?: boolean };
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
  if (status === 503) headers['Retry-After'] = '1';
  // 500s from Corrupt keep a generic text: the message may name files of the data directory.
  const message = status >= 500 && status !== 501 && status !== 503 ? 'internal error: the authority operation failed (see server log)' : known.message;
  return { status, body: { ...known.fields, error: message }, headers, internal: status >= 500 && status !== 501 && status !== 503 };
}

export function sendError(ctx: Context, reply: ErrorReply): void {
  ctx.status = reply.status;
  for (const [k, v] of Object.entries(reply.headers)) ctx.set(k, v);
  ctx.type = 'application/json';
  ctx.body = reply.body;
}
