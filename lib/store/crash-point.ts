/**
 * Test-only crash injection: when CAIRN_TEST_CRASH_AT names a point of a multi-step write, the
 * process kills itself with SIGKILL there, so tests can check recovery at every step.
 */
export function crashPoint(name: string): void {
  if (process.env.CAIRN_TEST_CRASH_AT === name) process.kill(process.pid, 'SIGKILL');
}

/**
 * Test-only fault injection: when `failAppend` returns true for a log's file name, that append
 * writes half its bytes and then fails with EIO, as a full disk or a failing device would.
 */
export const faults: {
  failAppend: ((logName: string) => boolean) | null;
  /** When it returns true, the commit-point write lands and then reports EIO (outcome unknown). */
  failCommitPoint: (() => boolean) | null;
} = { failAppend: null, failCommitPoint: null };
