// Transfer progress on stderr, drawn by cli-progress: `label [bar] pct  done / total  rate  ETA`
// in binary units, redrawn at most ten times a second on one line (trimmed to the terminal's
// width), cleared when done. Only on a TTY (and not with --quiet): when stderr is a file or a
// pipe nothing is written. cli-progress does the terminal work and the ETA (a moving window over
// the last samples); this module only chooses the format and renders bytes and times.
import { createRequire } from 'node:module';
// Loaded when a bar is drawn, not at start-up: most runs (not a TTY, --quiet) draw none.
const require = createRequire(import.meta.url);
const cliProgress = () => require('cli-progress');
export const NO_PROGRESS = { start() { }, setTotal() { }, increment() { }, stop() { } };
export function formatBytes(n) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let u = 0;
    let v = n;
    while (v >= 1024 && u < units.length - 1) {
        v /= 1024;
        u++;
    }
    return `${u === 0 ? v.toFixed(0) : v.toFixed(1)} ${units[u]}`;
}
/** cli-progress's ETA is a number of seconds, or 'NULL'/'INF' when it cannot be estimated. */
function formatSeconds(s) {
    if (typeof s !== 'number' || !Number.isFinite(s))
        return '--';
    if (s < 60)
        return `${Math.ceil(s)}s`;
    const m = Math.floor(s / 60);
    return m < 60 ? `${m}m${String(Math.ceil(s % 60)).padStart(2, '0')}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
// Tokens are cli-progress's own ({bar} {percentage} {value} {total} {eta_formatted}) plus the
// payload's {label}; {rate} is added at render time. While the total is unknown (a push still
// scanning) there is no bar, percentage or ETA.
const WITH_TOTAL = '{label}  [{bar}] {percentage}%  {value} / {total}  {rate}  ETA {eta_formatted}';
const WITHOUT_TOTAL = '{label}  {value}  {rate}';
const format = (options, params, payload) => {
    const elapsedS = ((params.stopTime ?? Date.now()) - params.startTime) / 1000;
    const rate = elapsedS > 0 ? params.value / elapsedS : 0;
    return cliProgress().Format.Formatter({ ...options, format: params.total > 0 ? WITH_TOTAL : WITHOUT_TOTAL }, params, { ...payload, rate: `${formatBytes(rate)}/s` });
};
function countFormat(unit) {
    return (options, params, payload) => {
        const elapsedS = ((params.stopTime ?? Date.now()) - params.startTime) / 1000;
        const rate = elapsedS > 0 ? params.value / elapsedS : 0;
        return cliProgress().Format.Formatter({ ...options, format: params.total > 0 ? WITH_TOTAL : WITHOUT_TOTAL }, params, { ...payload, rate: `${rate.toFixed(rate < 10 ? 1 : 0)} ${unit}/s` });
    };
}
/** The cli-progress options of the transfer bar (exported for tests). */
export function barOptions(stream, unit = 'bytes') {
    const value = unit === 'bytes' ? formatBytes : (n) => `${Math.round(n)} ${unit}`;
    return {
        stream,
        format: unit === 'bytes' ? format : countFormat(unit),
        formatValue: (v, _options, type) => {
            if (type === 'value' || type === 'total')
                return value(Number(v));
            if (type === 'percentage')
                return String(v).padStart(3);
            return String(v);
        },
        formatTime: (t) => formatSeconds(t),
        barsize: 20,
        barCompleteChar: '#',
        barIncompleteChar: '-',
        fps: 10,
        clearOnComplete: true,
        // Trim to the terminal's width instead of switching its line wrapping off: a process that
        // dies mid-transfer then leaves the terminal as it found it. Same reason for the cursor, and
        // no SIGINT/SIGTERM handler: Ctrl-C keeps ending the command.
        linewrap: true,
        hideCursor: false,
        gracefulExit: false,
        // Samples are taken at most every SAMPLE_MS (below) and on each redraw, so the ETA follows
        // the last few seconds and grows when a transfer stalls.
        etaBuffer: 50,
        etaAsynchronousUpdate: true,
    };
}
/** Increments arrive per file or per worker message; the bar gets a sample at most this often. */
const SAMPLE_MS = 100;
export function progressFor(stream, enabled, unit = 'bytes') {
    if (!enabled || stream.isTTY !== true)
        return NO_PROGRESS;
    const bar = new (cliProgress().SingleBar)(barOptions(stream, unit));
    let active = false;
    let done = 0;
    let sampled = 0;
    return {
        start(label, total) {
            if (active)
                bar.stop();
            done = 0;
            sampled = Date.now();
            bar.start(total, 0, { label });
            active = true;
        },
        setTotal(total) {
            bar.setTotal(total);
            bar.update(done);
        },
        increment(n) {
            done += n;
            const now = Date.now();
            if (now - sampled < SAMPLE_MS)
                return;
            sampled = now;
            bar.update(done);
        },
        stop() {
            if (!active)
                return;
            active = false;
            bar.update(done);
            bar.stop();
        },
    };
}
//# sourceMappingURL=progress.js.map