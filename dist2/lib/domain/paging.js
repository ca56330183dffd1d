// Cursor pagination of lists (docs/api.md "Lists and pagination"). A page is at most `limit`
// rows in the list's fixed order; `next_cursor` names the position after the last row, null
// on the last page. A cursor is opaque to clients: base64url of `{l, r, f, k}`: the list it
// belongs to, its repository, a hash of the filter it was taken under, and the sort key of the
// last row returned. A cursor is bound to all three, so one taken in another repository or
// under other filters is refused (400) instead of silently positioning a different walk. It
// is not a secret or a capability (a client can forge one; the key is checked like any
// input), so a plain hash does; no server key is needed. Positions are keys, not offsets, so
// rows inserted while a client pages never shift a later page: newest-first lists key on a
// sequence that only grows (new rows appear before the first page, never inside the walk),
// oldest-first and name-ordered lists on a key that the walk passes once.
import { createHash } from 'node:crypto';
import { Invalid } from './errors.js';
export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 1000;
/** `?limit=` (1..max, default `fallback`) as a page size; anything else is 400. */
export function parseLimit(value, fallback = DEFAULT_PAGE_LIMIT, max = MAX_PAGE_LIMIT) {
    if (value === undefined)
        return fallback;
    if (!/^[1-9][0-9]{0,6}$/.test(value) || Number(value) > max)
        throw new Invalid(`limit must be an integer from 1 to ${max}`);
    return Number(value);
}
/**
 * The filter's fingerprint: a hash of its set values, by name (order-free; unset values left
 * out, so `?status=` absent and a default of none agree). 96 bits: a collision needs a client
 * that forges cursors anyway.
 */
export function filterHash(filter) {
    const set = Object.keys(filter).filter((k) => filter[k] !== undefined && filter[k] !== null).sort().map((k) => [k, filter[k]]);
    return createHash('sha256').update(JSON.stringify(set)).digest('base64url').slice(0, 16);
}
export function encodeCursor(scope, key) {
    return Buffer.from(JSON.stringify({ l: scope.list, r: scope.repository, f: filterHash(scope.filter), k: key }), 'utf8').toString('base64url');
}
const isKeyPart = (v) => (typeof v === 'number' && Number.isSafeInteger(v)) || (typeof v === 'string' && v.length <= 1024);
/**
 * The key inside a cursor of `scope`. 400 for a cursor that is malformed, of another list or of
 * another key kind, taken in another repository, or taken under another filter.
 */
export function decodeCursor(scope, cursor, kind) {
    if (cursor === undefined)
        return null;
    const list = scope.list;
    const bad = () => new Invalid(`cursor is not a cursor of this list (pass the next_cursor of a previous page of ${list}, unchanged)`);
    if (cursor.length === 0 || cursor.length > 4096 || !/^[A-Za-z0-9_-]+$/.test(cursor))
        throw bad();
    let parsed;
    try {
        parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    }
    catch {
        throw bad();
    }
    if (!parsed || typeof parsed !== 'object')
        throw bad();
    const { l, r, f, k } = parsed;
    if (l !== list || typeof f !== 'string' || (r !== null && !(typeof r === 'number' && Number.isSafeInteger(r))))
        throw bad();
    if (r !== scope.repository) {
        throw new Invalid(`cursor was taken in ${r === null ? 'no repository' : `repository ${r}`}, not in ${scope.repository === null ? 'this list' : `repository ${scope.repository}`}: start the walk again without a cursor`);
    }
    if (f !== filterHash(scope.filter)) {
        const names = Object.keys(scope.filter);
        throw new Invalid(`cursor was taken under other filters than this request's${names.length ? ` (${names.join(', ')})` : ''}: send the same filters with every page, or start again without a cursor`);
    }
    if (kind === 'int' && typeof k === 'number' && Number.isSafeInteger(k))
        return k;
    if (kind === 'string' && typeof k === 'string' && isKeyPart(k))
        return k;
    if (kind === 'tuple' && Array.isArray(k) && k.length > 0 && k.length <= 4 && k.every(isKeyPart))
        return k;
    throw bad();
}
/** Compare two keys of one list (numbers numerically, strings by UTF-8 bytes, arrays element-wise). */
export function compareKeys(a, b) {
    const x = Array.isArray(a) ? a : [a];
    const y = Array.isArray(b) ? b : [b];
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const p = x[i];
        const q = y[i];
        if (p === q)
            continue;
        if (typeof p === 'number' && typeof q === 'number')
            return p - q;
        // Strings by UTF-8 bytes (code point order), the order the store sorts names in.
        return Buffer.compare(Buffer.from(String(p), 'utf8'), Buffer.from(String(q), 'utf8'));
    }
    return x.length - y.length;
}
/**
 * One page from rows yielded in list order, starting after the request's cursor: at most
 * `limit` rows, and a next cursor when one more row follows. `rows` yields [key, row] pairs;
 * the caller positions the walk (by index or binary search) so it starts at or near the
 * cursor; rows at or before the cursor in list order are skipped here.
 */
export function takePage(req, rows, order) {
    const out = [];
    let lastKey = null;
    for (const [key, row] of rows) {
        if (req.after !== null) {
            const c = compareKeys(key, req.after);
            if (order === 'asc' ? c <= 0 : c >= 0)
                continue;
        }
        if (out.length === req.limit)
            return { rows: out, next_cursor: encodeCursor(req.scope, lastKey) };
        out.push(row);
        lastKey = key;
    }
    return { rows: out, next_cursor: null };
}
/**
 * The first index of an ascending-sorted array whose key is greater than `key` (binary
 * search): where an ascending walk after `key` starts; minus one, where a descending walk
 * after `key` starts.
 */
export function firstAfter(length, keyAt, key) {
    let lo = 0;
    let hi = length;
    while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (compareKeys(keyAt(mid), key) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
/**
 * Rows of an ascending-keyed sequence walked in `order`, positioned at the cursor by binary
 * search (O(log n) to start, then one step per row): the input of takePage.
 */
export function* walkFrom(length, rowAt, keyOf, after, order) {
    const keyAt = (i) => keyOf(rowAt(i));
    if (order === 'asc') {
        for (let i = after === null ? 0 : firstAfter(length, keyAt, after); i < length; i++) {
            const row = rowAt(i);
            yield [keyOf(row), row];
        }
    }
    else {
        for (let i = after === null ? length - 1 : firstAfter(length, keyAt, after) - 1; i >= 0; i--) {
            const row = rowAt(i);
            yield [keyOf(row), row];
        }
    }
}
/** Only the rows `keep` accepts (a list filter applied while walking). */
export function* keepRows(rows, keep) {
    for (const r of rows)
        if (keep(r[1]))
            yield r;
}
//# sourceMappingURL=paging.js.map