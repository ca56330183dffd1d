// The request log line in JSON format, written straight into the log batch: exactly the bytes
// pino writes for `log.info(entry, 'request')` (test/request-log.test.ts compares the two), with
// the constant parts built once. Why not log.info itself: pino's generic serializer (a walk over
// the keys, escaping each value) was ~3 µs of the ~26 µs a GET {repo}/lines costs here (issue
// 10). Every other log line still goes through pino.
import { pino } from 'pino';
const INFO = pino.levels.values.info;
/** A RequestLog writing pino's JSON line, or one writing nothing when the level hides `info`. */
export function jsonRequestLog(options) {
    const threshold = options.level === 'silent' ? Infinity : pino.levels.values[options.level];
    if (threshold === undefined)
        throw new Error(`unknown log level ${options.level}`);
    if (INFO < threshold)
        return () => { };
    const now = options.now ?? Date.now;
    const { sink } = options;
    const base = Object.entries(options.base).map(([k, v]) => `,${JSON.stringify(k)}:${JSON.stringify(v)}`).join('');
    const head = `{"level":${INFO},"time":`;
    // Route templates and operation names come from the route table: a small, fixed set.
    const quoted = new Map();
    const quote = (value) => {
        if (value === null)
            return 'null';
        let q = quoted.get(value);
        if (q === undefined) {
            q = JSON.stringify(value);
            if (quoted.size < 1024)
                quoted.set(value, q);
        }
        return q;
    };
    return (e) => {
        sink.write(`${head}${now()}${base},"method":${quote(e.method)},"route":${quote(e.route)},"operation":${quote(e.operation)},"status":${e.status},"ms":${JSON.stringify(e.ms)},"msg":"request"}\n`);
    };
}
//# sourceMappingURL=request-log.js.map