// The closed error vocabulary of cairn. Storage, domain rules and HTTP handlers throw these;
// lib/http/errors.ts maps each code to a status in one table and lib/cli/main.ts maps them to
// exit codes. Messages of 4xx errors are meant for callers; Corrupt/Internal details stay in logs.

export type ErrorCode =
  | 'Invalid' // a value parses but breaks a rule (400)
  | 'Unprocessable' // JSON does not fit the typed request (422)
  | 'NotFound' // unknown route, repository, entity, pack or file (404)
  | 'MethodNotAllowed' // route exists, method not bound (405)
  | 'Unauthorized' // a secret the route needs is missing or wrong (401 + WWW-Authenticate)
  | 'Forbidden' // a state-changing request from another origin (Origin, Sec-Fetch-Site) (403)
  | 'Misdirected' // a Host this server does not answer for (DNS rebinding) (421)
  | 'Conflict' // authority/lifecycle conflict, stale head, governed line (409)
  | 'Gone' // a position older than what is still kept (event retention) (410)
  | 'RequestTimeout' // a request body that stalled or came slower than the server takes (408)
  | 'TooLarge' // body above the route limit (413)
  | 'UnsupportedMediaType' // wrong or missing Content-Type (415)
  | 'TooManyRequests' // one client holds as much as it may (429 + Retry-After)
  | 'NotImplemented' // operation declared in the route table but not built yet (501)
  | 'Busy' // retryably busy or starting (503 + Retry-After: 1)
  | 'Corrupt' // a stored record fails its checks (500)
  | 'InsufficientStorage' // the server's disk (or quota) is full: nothing was written (507)
  | 'Internal'; // anything else (500)

export class CairnError extends Error {
  readonly code: ErrorCode;
  /** Extra documented response fields (e.g. `code: GOVERNED_TARGET_LINE_REQUIRES_LAND`). */
  readonly fields: Record<string, unknown>;
  constructor(code: ErrorCode, message: string, fields: Record<string, unknown> = {}) {
    super(message);
    this.code = code;
    this.fields = fields;
    this.name = code;
  }
}

export class Invalid extends CairnError {
  constructor(message: string, fields?: Record<string, unknown>) { super('Invalid', message, fields); }
}
export class Unprocessable extends CairnError {
  constructor(message: string) { super('Unprocessable', message); }
}
export class NotFound extends CairnError {
  constructor(message: string) { super('NotFound', message); }
}
export class MethodNotAllowed extends CairnError {
  readonly allow: string[];
  constructor(message: string, allow: string[]) { super('MethodNotAllowed', message); this.allow = allow; }
}
/** The request lacks a credential the route needs, or it is wrong; `challenge` is the WWW-Authenticate value. */
export class Unauthorized extends CairnError {
  constructor(message: string, readonly challenge: string) { super('Unauthorized', message); }
}
export class Forbidden extends CairnError {
  constructor(message: string) { super('Forbidden', message); }
}
export class Misdirected extends CairnError {
  constructor(message: string) { super('Misdirected', message); }
}
export class Conflict extends CairnError {
  constructor(message: string, fields?: Record<string, unknown>) { super('Conflict', message, fields); }
}
export class Gone extends CairnError {
  constructor(message: string, fields?: Record<string, unknown>) { super('Gone', message, fields); }
}
/** A request body that stopped, or came slower than the server's minimum rate (git smart HTTP). */
export class RequestTimeout extends CairnError {
  constructor(message: string) { super('RequestTimeout', message); }
}
export class TooLarge extends CairnError {
  constructor(message: string) { super('TooLarge', message); }
}
export class UnsupportedMediaType extends CairnError {
  constructor(message: string) { super('UnsupportedMediaType', message); }
}
/** One client holds as much of a bounded resource as it may (event streams per address); retry after `retryAfterS`. */
export class TooManyRequests extends CairnError {
  readonly retryAfterS: number;
  constructor(message: string, retryAfterS: number) { super('TooManyRequests', message); this.retryAfterS = retryAfterS; }
}
export class NotImplemented extends CairnError {
  constructor(operation: string) { super('NotImplemented', `not implemented: ${operation}`); }
}
export class Busy extends CairnError {
  constructor(message: string, fields?: Record<string, unknown>) { super('Busy', message, fields); }
}
export class Corrupt extends CairnError {
  constructor(message: string) { super('Corrupt', message); }
}

export function isCairnError(err: unknown): err is CairnError {
  return err instanceof CairnError;
}
