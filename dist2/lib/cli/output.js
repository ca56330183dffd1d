// How a command prints its result: JSON when asked (--json) or when stdout is not a terminal
// (scripts and the existing contract), a short human-readable form on a terminal (gh's rule).
export function useJson(flag) {
    return flag === true || process.stdout.isTTY !== true;
}
export function emit(value, json, human) {
    if (json)
        process.stdout.write(`${JSON.stringify(value)}\n`);
    else {
        const text = human();
        process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    }
}
export const short = (id) => (id ? id.slice(0, 12) : '-');
export function when(seconds) {
    if (!seconds)
        return '-';
    return new Date(seconds * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}
/** Left-aligned columns. */
export function table(rows) {
    if (!rows.length)
        return '';
    const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
    return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n');
}
//# sourceMappingURL=output.js.map