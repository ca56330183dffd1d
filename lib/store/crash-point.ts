/**
 * Test-only crash injection: when CAIRN_TEST_CRASH_AT names a point of a multi-step write, the
 * process kills itself with SIGKILL there, so tests can check recovery at every step. A value
 * `A>B` arms point B when point A is passed (`queue:land>commit:after-log`: the first commit
 * after the land queue starts a land dies after its log append).
 */
export function crashPoint(name: string): void {
  const at = process.env.CAIRN_TEST_CRASH_AT;
  if (at === name) process.kill(process.pid, 'SIGKILL');
  else if (at?.startsWith(`${name}>`)) process.env.CAIRN_TEST_CRASH_AT = at.slice(name.length + 1);
}

/**
 * Test-only fault injection: when `failAppend` returns true for a log's file name, that append
 * writes half its bytes and then fails with EIO, as a failing device would (ENOSPC when it
 * returns 'ENOSPC': a full disk).
 */
export const faults: {
  failAppend: ((logName: string) => boolean | 'ENOSPC') | null;
  /** When it returns true, the commit-point write lands and then reports EIO (outcome unknown). */
  failCommitPoint: (() => boolean) | null;
  /** When it returns true, a reseal of workflow.log (StoreMaintenance.resealWorkflow) fails before writing anything. */
  failReseal: (() => boolean) | null;
  /** When it returns 'ENOSPC' for a file being written (a pack, a temp file, a record), that write fails as on a full disk. */
  failWrite: ((file: string) => 'ENOSPC' | false) | null;
} = { failAppend: null, failCommitPoint: null, failReseal: null, failWrite: null };

/** Test-only: the full disk `faults.failWrite` asks for, at a write of `file` (nothing of it written). */
export function writeFault(file: string): void {
  if (faults.failWrite?.(file) === 'ENOSPC') throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
}
