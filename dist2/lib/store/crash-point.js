/**
 * Test-only crash injection: when CAIRN_TEST_CRASH_AT names a point of a multi-step write, the
 * process kills itself with SIGKILL there, so tests can check recovery at every step. A value
 * `A>B` arms point B when point A is passed (`queue:land>commit:after-log`: the first commit
 * after the land queue starts a land dies after its log append).
 */
export function crashPoint(name) {
    const at = process.env.CAIRN_TEST_CRASH_AT;
    if (at === name)
        process.kill(process.pid, 'SIGKILL');
    else if (at?.startsWith(`${name}>`))
        process.env.CAIRN_TEST_CRASH_AT = at.slice(name.length + 1);
}
/**
 * Test-only fault injection: when `failAppend` returns true for a log's file name, that append
 * writes half its bytes and then fails with EIO, as a full disk or a failing device would.
 */
export const faults = { failAppend: null, failCommitPoint: null, failReseal: null };
//# sourceMappingURL=crash-point.js.map