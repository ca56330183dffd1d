// The closed error vocabulary of cairn. Storage, domain rules and HTTP handlers throw these;
// lib/http/errors.ts maps each code to a status in one table and lib/cli/main.ts maps them to
// exit codes. Messages of 4xx errors are meant for callers; Corrupt/Internal details stay in logs.
export class CairnError extends Error {
    code;
    /** Extra documented response fields (e.g. `code: GOVERNED_TARGET_LINE_REQUIRES_LAND`). */
    fields;
    constructor(code, message, fields = {}) {
        super(message);
        this.code = code;
        this.fields = fields;
        this.name = code;
    }
}
export class Invalid extends CairnError {
    constructor(message, fields) { super('Invalid', message, fields); }
}
export class Unprocessable extends CairnError {
    constructor(message) { super('Unprocessable', message); }
}
export class NotFound extends CairnError {
    constructor(message) { super('NotFound', message); }
}
export class MethodNotAllowed extends CairnError {
    allow;
    constructor(message, allow) { super('MethodNotAllowed', message); this.allow = allow; }
}
/** The request lacks a credential the route needs, or it is wrong; `challenge` is the WWW-Authenticate value. */
export class Unauthorized extends CairnError {
    challenge;
    constructor(message, challenge) {
        super('Unauthorized', message);
        this.challenge = challenge;
    }
}
export class Forbidden extends CairnError {
    constructor(message) { super('Forbidden', message); }
}
export class Misdirected extends CairnError {
    constructor(message) { super('Misdirected', message); }
}
export class Conflict extends CairnError {
    constructor(message, fields) { super('Conflict', message, fields); }
}
export class Gone extends CairnError {
    constructor(message, fields) { super('Gone', message, fields); }
}
/** A request body that stopped, or came slower than the server's minimum rate (git smart HTTP). */
export class RequestTimeout extends CairnError {
    constructor(message) { super('RequestTimeout', message); }
}
export class TooLarge extends CairnError {
    constructor(message) { super('TooLarge', message); }
}
export class UnsupportedMediaType extends CairnError {
    constructor(message) { super('UnsupportedMediaType', message); }
}
/** One client holds as much of a bounded resource as it may (event streams per address); retry after `retryAfterS`. */
export class TooManyRequests extends CairnError {
    retryAfterS;
    constructor(message, retryAfterS) { super('TooManyRequests', message); this.retryAfterS = retryAfterS; }
}
export class NotImplemented extends CairnError {
    constructor(operation) { super('NotImplemented', `not implemented: ${operation}`); }
}
export class Busy extends CairnError {
    constructor(message, fields) { super('Busy', message, fields); }
}
export class Corrupt extends CairnError {
    constructor(message) { super('Corrupt', message); }
}
export function isCairnError(err) {
    return err instanceof CairnError;
}
//# sourceMappingURL=errors.js.map