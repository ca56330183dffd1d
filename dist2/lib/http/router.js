// Matches a request path against the route table. Rules (docs/api.md "Paths and actions"):
//  - An action suffix belongs to the last path segment and starts at its last raw ':'
//    (`/lines/main:close`). A ':' meant as data in a last segment must be sent as %3A.
//  - Literal segments win over parameters; `{file_path}` as the last template segment takes the
//    rest of the path (so both `a%2Fb.txt` and `a/b.txt` name the file a/b.txt).
//  - No matching template, or an action the template does not declare: 404.
//  - A template that matches with no binding for this method and action: 405 with `Allow`.
//  - A parameter segment may end in a literal suffix (`{line_name}.git`): the raw segment must
//    end in it and hold more than it; the parameter is what precedes it.
//  - Parameters are percent-decoded exactly once, after matching.
import { Invalid, MethodNotAllowed, NotFound } from '../domain/errors.js';
export class Router {
    templates;
    constructor(routes) {
        const byTemplate = new Map();
        for (const route of routes) {
            let compiled = byTemplate.get(route.template);
            if (!compiled) {
                const parts = route.template.split('/').slice(1);
                compiled = {
                    template: route.template,
                    segments: parts.map((part, i) => {
                        const m = /^\{(\w+)\}([\w.-]*)$/.exec(part);
                        if (!m)
                            return { literal: part };
                        if (m[2])
                            return { param: m[1], suffix: m[2] };
                        return { param: m[1], rest: m[1] === 'file_path' && i === parts.length - 1 };
                    }),
                    routes: [],
                };
                byTemplate.set(route.template, compiled);
            }
            compiled.routes.push(route);
        }
        // Literal segments before parameters, so `/retirement/purge` never reads as a parameter.
        this.templates = [...byTemplate.values()].sort((a, b) => specificity(b) - specificity(a));
    }
    /** The templates, each once, in table order of first appearance. */
    get templateCount() {
        return this.templates.length;
    }
    /**
     * Successful matches of recent (method, path) pairs: a busy server sees the same few paths
     * again and again. Bounded; emptied when full. Callers get their own copy of `params`.
     */
    recent = new Map();
    static RECENT_MATCHES = 1024;
    match(method, rawPath) {
        const key = `${method} ${rawPath}`;
        const hit = this.recent.get(key);
        if (hit)
            return { route: hit.route, params: { ...hit.params } };
        const result = this.matchUncached(method, rawPath);
        if (key.length > 512)
            return result; // long paths are not kept: the cache stays small
        if (this.recent.size >= Router.RECENT_MATCHES)
            this.recent.clear();
        this.recent.set(key, { route: result.route, params: { ...result.params } });
        return result;
    }
    matchUncached(method, rawPath) {
        const found = this.find(rawPath);
        // Never echo the path: it may carry a restore token (docs/api.md "Request errors").
        if (!found)
            throw new NotFound(`no route for ${method} ${redactPath(rawPath)}`);
        const { compiled, values, action } = found;
        const candidates = compiled.routes.filter((r) => (r.action ?? null) === action);
        if (candidates.length === 0) {
            if (action !== null)
                throw new NotFound(`unknown action ":${action.length > 64 ? `${action.slice(0, 64)}...` : action}" on ${compiled.template}`);
            throw new NotFound(`${compiled.template} needs an action suffix`);
        }
        const effective = (method === 'HEAD' ? 'GET' : method);
        const route = candidates.find((r) => r.method === effective);
        if (!route) {
            throw new MethodNotAllowed(`method ${method} is not allowed here`, allowFor(candidates));
        }
        return { route, params: this.decodeParams(compiled, values) };
    }
    /** Allowed methods and decoded parameters of a path (for OPTIONS); throws NotFound like `match`. */
    allowed(rawPath) {
        const found = this.find(rawPath);
        if (!found)
            throw new NotFound('no route for this path');
        const candidates = found.compiled.routes.filter((r) => (r.action ?? null) === found.action);
        if (candidates.length === 0)
            throw new NotFound('unknown action suffix');
        return { allow: allowFor(candidates), params: this.decodeParams(found.compiled, found.values) };
    }
    decodeParams(compiled, values) {
        const params = {};
        compiled.segments.forEach((seg, i) => {
            if (seg.param)
                params[seg.param] = decodeOnce(seg.suffix ? values[i].slice(0, -seg.suffix.length) : values[i], seg.param);
        });
        return params;
    }
    find(rawPath) {
        if (!rawPath.startsWith('/'))
            return null;
        const parts = rawPath.split('/').slice(1);
        for (const compiled of this.templates) {
            const segs = compiled.segments;
            const rest = segs[segs.length - 1].rest === true;
            if (rest ? parts.length < segs.length : parts.length !== segs.length)
                continue;
            const values = parts.slice(0, segs.length);
            if (rest)
                values[segs.length - 1] = parts.slice(segs.length - 1).join('/');
            let action = null;
            if (!rest) {
                const last = values[values.length - 1];
                const colon = last.lastIndexOf(':');
                if (colon >= 0) {
                    action = last.slice(colon + 1);
                    values[values.length - 1] = last.slice(0, colon);
                }
            }
            let ok = true;
            for (let i = 0; i < segs.length && ok; i++) {
                const seg = segs[i];
                if (seg.literal !== undefined)
                    ok = values[i] === seg.literal;
                else if (seg.suffix !== undefined)
                    ok = values[i].length > seg.suffix.length && values[i].endsWith(seg.suffix);
                else
                    ok = values[i].length > 0;
            }
            if (ok)
                return { compiled, values, action };
        }
        return null;
    }
}
/**
 * A path safe to show: its first three segments (`/v1/native/<area>`, fixed words of the
 * interface when they are known), the rest replaced by `...`. A restore token, a file path or
 * any other caller value after them never reaches an error body or a log line.
 */
export function redactPath(rawPath) {
    const parts = rawPath.split('/').slice(1);
    const known = parts.slice(0, 3).map((p) => (KNOWN_SEGMENTS.has(p) ? p : '{…}'));
    return `/${known.join('/')}${parts.length > 3 ? '/...' : ''}`;
}
const KNOWN_SEGMENTS = new Set(['v1', 'native', 'healthz', 'handshake', 'capabilities', 'repository-authorities', 'repository-restores', 'worker-jobs']);
function specificity(t) {
    // More literal segments first; a rest parameter last among equals.
    return t.segments.reduce((n, s) => n + (s.literal !== undefined ? 2 : s.rest ? 0 : 1), 0) * 100 - (t.segments.at(-1)?.rest ? 1 : 0);
}
function allowFor(routes) {
    const methods = new Set();
    for (const r of routes) {
        methods.add(r.method);
        if (r.method === 'GET')
            methods.add('HEAD');
    }
    methods.add('OPTIONS');
    return [...methods];
}
function decodeOnce(value, name) {
    try {
        return decodeURIComponent(value);
    }
    catch {
        throw new Invalid(`path parameter ${name} is not valid percent-encoding`);
    }
}
//# sourceMappingURL=router.js.map