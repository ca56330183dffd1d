// Transfer progress on stderr: bytes done/total with units, rate and ETA, redrawn at most ten
// times a second on one line, cleared when done. Only on a TTY (and not with --quiet): when
// stderr is a file or a pipe nothing is written.

export interface Progress {
  /** (Re)start with a label and a total in bytes (0 = unknown). */
  start(label: string, total: number): void;
  /** Raise the total (a push learns its size while scanning). */
  setTotal(total: number): void;
  increment(bytes: number): void;
  stop(): void;
}

export const NO_PROGRESS: Progress = { start() {}, setTotal() {}, increment() {}, stop() {} };

export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let u = 0;
  let v = n;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return `${u === 0 ? v.toFixed(0) : v.toFixed(1)} ${units[u]}`;
}

function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return '--';
  if (s < 60) return `${Math.ceil(s)}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m${String(Math.ceil(s % 60)).padStart(2, '0')}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** One progress line of the given state (exported for tests). */
export function renderProgress(label: string, done: number, total: number, elapsedS: number): string {
  const rate = elapsedS > 0 ? done / elapsedS : 0;
  const parts = [label];
  if (total > 0) {
    const frac = Math.min(1, done / total);
    const width = 20;
    const filled = Math.round(frac * width);
    parts.push(`[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(frac * 100).toFixed(0).padStart(3)}%`);
    parts.push(`${formatBytes(done)} / ${formatBytes(total)}`);
  } else {
    parts.push(formatBytes(done));
  }
  parts.push(`${formatBytes(rate)}/s`);
  if (total > 0) parts.push(`ETA ${rate > 0 ? formatSeconds(Math.max(0, total - done) / rate) : '--'}`);
  return parts.join('  ');
}

export function progressFor(stream: NodeJS.WriteStream, enabled: boolean): Progress {
  if (!enabled || stream.isTTY !== true) return NO_PROGRESS;
  let label = '';
  let total = 0;
  let done = 0;
  let started = 0;
  let lastDraw = 0;
  let drawn = false;
  const draw = (force = false) => {
    const now = performance.now();
    if (!force && now - lastDraw < 100) return;
    lastDraw = now;
    const line = renderProgress(label, done, total, (now - started) / 1000);
    const cols = stream.columns || 100;
    stream.write(`\r${line.slice(0, cols - 1).padEnd(Math.min(cols - 1, line.length))}\x1b[K`);
    drawn = true;
  };
  return {
    start(l, t) {
      label = l;
      total = t;
      done = 0;
      started = performance.now();
      draw(true);
    },
    setTotal(t) { total = t; draw(true); },
    increment(n) { done += n; draw(); },
    stop() {
      if (drawn) stream.write('\r\x1b[K');
      drawn = false;
    },
  };
}
