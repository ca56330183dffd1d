// Text received from callers is stored as UTF-8; a lone UTF-16 surrogate has no UTF-8 form and
// would be silently replaced, so it is refused instead (400).
import { Invalid } from './errors.js';
/** String.prototype.isWellFormed (Node 20; not yet in TypeScript's ES2022 lib). */
export function isWellFormed(s) {
    return s.isWellFormed();
}
export function requireWellFormed(value, what) {
    if (!isWellFormed(value))
        throw new Invalid(`${what} contains a lone surrogate (not valid Unicode)`);
}
// ---------------------------------------------------------------- names and titles
// One rule for the names of people and groups, wherever they come from (a body field such as
// `author`, `owner`, `reviewer` or `requested_by`, a query parameter such as `?author=`, or the
// identity header, lib/http/identity.ts), and one for titles: neither holds a control
// character. Titles are one line, so tab and newline are refused in them too; longer texts
// (intents, summaries, comment bodies) keep theirs.
/** The longest name of a person or group. */
export const MAX_NAME_CHARS = 256;
/** C0 controls (U+0000–U+001F, tab and newline among them), DEL (U+007F) and C1 controls (U+0080–U+009F). */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]+/g;
const CONTROL_RULE = 'control characters (U+0000–U+001F such as tab and newline, U+007F–U+009F)';
export const hasControlCharacter = (value) => CONTROL.test(value);
/** Why `value` is not a name (not blank, at most MAX_NAME_CHARS characters, no control character), or null. */
export function nameProblem(value) {
    if (value.trim() === '')
        return 'must be non-empty';
    if (value.length > MAX_NAME_CHARS)
        return `is longer than ${MAX_NAME_CHARS} characters`;
    if (CONTROL.test(value))
        return `must not contain ${CONTROL_RULE}`;
    return null;
}
/** A one-line text (a title; a patchset's author): no control character, 400 naming `field`. */
export function requireOneLine(value, field) {
    if (CONTROL.test(value))
        throw new Invalid(`${field} must be one line without ${CONTROL_RULE}`);
    return value;
}
/** `value` with each run of control characters a space (titles taken from git commits, which may hold tabs). */
export const withoutControlCharacters = (value) => value.replace(CONTROLS, ' ');
//# sourceMappingURL=text.js.map